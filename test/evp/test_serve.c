/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The serving policy (provider/prov_config.c, serve_setting): chapoly offers
 * what the level picked for the CPU beats the default provider at
 * (chapoly_kernels_serves, whose table test_cpu_masks checks per CPU class):
 * where the best level is portable (no SIMD kernel for this CPU, or a
 * CHAPOLY_SIMD=OFF build), XChaCha20-Poly1305 only, so a `?provider=chapoly`
 * preference leaves ChaCha20, ChaCha20-Poly1305 and POLY1305 to the default
 * provider; at avx512-noifma all but POLY1305; buildinfo says which, once.
 * `serve = all`, or a level asked for by name (config `kernel`,
 * CHAPOLY_KERNEL), serves all four.
 *
 * Each case is a fresh OSSL_LIB_CTX with default and chapoly, loaded either
 * directly (the environment case) or from a generated config file; it fetches
 * the four algorithms with "?provider=chapoly" and checks which provider
 * answers, and what buildinfo says. The expectation for the default policy
 * comes from the kernels' own dispatch (chapoly_kernels_best); a build whose
 * only level is portable (CHAPOLY_TEST_ONLY_PORTABLE) must also find it so.
 *
 * Environment: OPENSSL_MODULES (CTest); CHAPOLY_KERNEL is set per case.
 * Prints "N passed, N failed".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include "kernels.h"
#include "test_common.h"

#define ONLY_NOTE "serving XChaCha20-Poly1305 only"
#define MAC_NOTE "POLY1305 left to the default provider"

static const char *const policed[] = { "ChaCha20-Poly1305", "ChaCha20", "POLY1305" };
static const unsigned policed_bit[] = { CHAPOLY_SERVE_CHACHA, CHAPOLY_SERVE_CHACHA,
                                        CHAPOLY_SERVE_MAC };

/* Name of the provider that answers a "?provider=chapoly" fetch of alg, or "(none)". */
static const char *served_by(OSSL_LIB_CTX *ctx, const char *alg, char *buf, size_t n)
{
    const OSSL_PROVIDER *p = NULL;
    EVP_CIPHER *c = NULL;
    EVP_MAC *m = NULL;

    if (strcmp(alg, "POLY1305") == 0) {
        if ((m = EVP_MAC_fetch(ctx, alg, "?provider=chapoly")) != NULL)
            p = EVP_MAC_get0_provider(m);
    } else if ((c = EVP_CIPHER_fetch(ctx, alg, "?provider=chapoly")) != NULL) {
        p = EVP_CIPHER_get0_provider(c);
    }
    snprintf(buf, n, "%s", p != NULL ? OSSL_PROVIDER_get0_name(p) : "(none)");
    EVP_MAC_free(m);
    EVP_CIPHER_free(c);
    ERR_clear_error();
    return buf;
}

static size_t count(const char *s, const char *sub)
{
    size_t k = 0;

    for (const char *p = s; (p = strstr(p, sub)) != NULL; p += strlen(sub))
        k++;
    return k;
}

/*
 * One case: CHAPOLY_KERNEL = env (NULL: unset); cnf_lines != NULL: load from
 * a config whose [chapoly_sect] holds these lines. want: the CHAPOLY_SERVE_*
 * bits chapoly must answer for; the rest must come from the default provider.
 */
static void check_case(const char *what, const char *env, const char *cnf_lines, unsigned want)
{
    OSSL_LIB_CTX *ctx = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *def = NULL, *cp = NULL;
    char path[] = "/tmp/chapoly-serve-XXXXXX", buf[64];
    char *info = NULL, *kernel = NULL;
    OSSL_PARAM gp[3] = { OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, &info, 0),
                         OSSL_PARAM_construct_utf8_ptr("chapoly-kernel", &kernel, 0),
                         OSSL_PARAM_construct_end() };
    int loaded = 0;

    if (env != NULL)
        setenv("CHAPOLY_KERNEL", env, 1);
    else
        unsetenv("CHAPOLY_KERNEL");
    if (ctx != NULL && cnf_lines != NULL) {
        int fd = mkstemp(path);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

        if (f != NULL) {
            fprintf(f, "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n"
                       "[provider_sect]\ndefault = default_sect\nchapoly = chapoly_sect\n"
                       "[default_sect]\nactivate = 1\n[chapoly_sect]\nactivate = 1\n%s\n",
                    cnf_lines);
            loaded = fclose(f) == 0 && OSSL_LIB_CTX_load_config(ctx, path) == 1;
        }
        if (fd >= 0)
            unlink(path);
        loaded = loaded && OSSL_PROVIDER_available(ctx, "chapoly") &&
                 OSSL_PROVIDER_available(ctx, "default");
        /* a handle for get_params; the config's activation stays the real one */
        cp = loaded ? OSSL_PROVIDER_load(ctx, "chapoly") : NULL;
    } else if (ctx != NULL) {
        def = OSSL_PROVIDER_load(ctx, "default");
        cp = OSSL_PROVIDER_load(ctx, "chapoly");
        loaded = def != NULL && cp != NULL;
    }
    T_OK(loaded && cp != NULL, "%s: default and chapoly load", what);
    if (!loaded || cp == NULL)
        goto end;

    T_OK(OSSL_PROVIDER_get_params(cp, gp) == 1 && info != NULL && kernel != NULL,
         "%s: buildinfo and chapoly-kernel readable", what);
    for (size_t i = 0; i < sizeof(policed) / sizeof(policed[0]); i++) {
        const char *by = (want & policed_bit[i]) ? "chapoly" : "default";

        served_by(ctx, policed[i], buf, sizeof(buf));
        T_OK(strcmp(buf, by) == 0, "%s: %s served by %s, want %s (kernel %s)", what,
             policed[i], buf, by, kernel != NULL ? kernel : "?");
    }
    served_by(ctx, "XChaCha20-Poly1305", buf, sizeof(buf));
    T_OK(strcmp(buf, "chapoly") == 0, "%s: XChaCha20-Poly1305 served by %s, want chapoly", what,
         buf);
    if (info != NULL) {
        int only = !(want & CHAPOLY_SERVE_CHACHA), no_mac = !only && !(want & CHAPOLY_SERVE_MAC);

        T_OK(count(info, ONLY_NOTE) == (only ? 1u : 0u), "%s: buildinfo %s \"" ONLY_NOTE
             "\" (once): %s", what, only ? "must say" : "must not say", info);
        T_OK(count(info, MAC_NOTE) == (no_mac ? 1u : 0u), "%s: buildinfo %s \"" MAC_NOTE
             "\" (once): %s", what, no_mac ? "must say" : "must not say", info);
    }
    printf("%-46s kernel %-13s %s\n", what, kernel != NULL ? kernel : "?",
           want == CHAPOLY_SERVE_ALL            ? "all four"
           : (want & CHAPOLY_SERVE_CHACHA) != 0 ? "all but POLY1305"
                                                : "XChaCha20-Poly1305 only");
end:
    OSSL_PROVIDER_unload(cp);
    OSSL_PROVIDER_unload(def);
    OSSL_LIB_CTX_free(ctx);
    ERR_clear_error();
}

int main(void)
{
    /* the default policy: what the best level here serves */
    int best_portable = chapoly_kernels_best() == chapoly_kernels_portable();
    unsigned dflt = chapoly_kernels_serves(chapoly_kernels_best()), all = CHAPOLY_SERVE_ALL;
    const char *absent = NULL;

    printf("best level here: %s\n", chapoly_kernels_best()->name);
    T_OK(!best_portable || dflt == CHAPOLY_SERVE_XCHACHA,
         "the portable level serves XChaCha20-Poly1305 only (%#x)", dflt);
#ifdef CHAPOLY_TEST_ONLY_PORTABLE
    T_OK(best_portable, "a build with the portable level only: best is %s",
         chapoly_kernels_best()->name);
#endif
    /* a known level this CPU or build lacks: falls back to the best one */
    for (const char *const *n = (const char *const[]){ "neon", "avx2", "avx512", NULL };
         *n != NULL && absent == NULL; n++)
        if (chapoly_kernels_by_name(*n) == NULL)
            absent = *n;

    check_case("no level, no config", NULL, NULL, dflt);
    check_case("CHAPOLY_KERNEL=best", "best", NULL, dflt);
    check_case("CHAPOLY_KERNEL=portable", "portable", NULL, all);
    /* every level asked for by name, and present: all four */
    for (const char *const *n = chapoly_kernels_compiled(); *n != NULL; n++) {
        char what[64];

        snprintf(what, sizeof(what), "CHAPOLY_KERNEL=%s", *n);
        if (strcmp(*n, "portable") != 0 && chapoly_kernels_by_name(*n) != NULL)
            check_case(what, *n, NULL, all);
    }
    if (absent != NULL) {
        char what[64];

        snprintf(what, sizeof(what), "CHAPOLY_KERNEL=%s (absent here)", absent);
        check_case(what, absent, NULL, dflt);
    }
    check_case("config serve = all", NULL, "serve = all", all);
    check_case("config serve = auto", NULL, "serve = auto", dflt);
    check_case("config kernel = portable", NULL, "kernel = portable", all);
    check_case("config kernel = best", NULL, "kernel = best", dflt);
    /* the config key wins over the environment, as for the level itself */
    check_case("config kernel = best, CHAPOLY_KERNEL=portable", "portable", "kernel = best", dflt);
    check_case("config kernel = best, serve = all", NULL, "kernel = best\nserve = all", all);
    unsetenv("CHAPOLY_KERNEL");
    return t_finish("test_serve");
}
