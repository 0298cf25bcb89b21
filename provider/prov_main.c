/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Entry point: OSSL_provider_init (the module's only exported symbol), the
 * algorithm tables, the provider parameters and teardown. The
 * configuration is read in prov_config.c, the statistics kept in
 * prov_stats.c.
 *
 * The module runs inside setuid programs: the environment is read only with
 * secure_getenv, and nothing is written or printed unless configured (the
 * statistics file) or unless the configuration itself is wrong (one stderr
 * line per kind of mistake per process).
 */
#include <stdio.h>
#include <string.h>
#include <openssl/opensslv.h>
#include "prov.h"

/* project(VERSION) in CMakeLists.txt, passed by provider/CMakeLists.txt. */
#ifndef CHAPOLY_VERSION
#error "CHAPOLY_VERSION must come from the build (project(VERSION) in CMakeLists.txt)"
#endif

#define XCHACHA20_POLY1305_ALGORITHM                                           \
    { "XChaCha20-Poly1305", CHAPOLY_PROPS, chapoly_xchacha20_poly1305_functions, \
      "XChaCha20-Poly1305 AEAD (draft-irtf-cfrg-xchacha-03)" }

static const OSSL_ALGORITHM chapoly_ciphers[] = {
    { "ChaCha20-Poly1305", CHAPOLY_PROPS, chapoly_chacha20_poly1305_functions,
      "ChaCha20-Poly1305 AEAD (RFC 8439)" },
    XCHACHA20_POLY1305_ALGORITHM,
    { "ChaCha20", CHAPOLY_PROPS, chapoly_chacha20_functions,
      "ChaCha20 stream cipher, OpenSSL 16-byte IV layout" },
    { NULL, NULL, NULL, NULL }
};

/* Without CHAPOLY_SERVE_CHACHA (prov_config.c, serve_setting): what no other provider has. */
static const OSSL_ALGORITHM chapoly_ciphers_xchacha_only[] = {
    XCHACHA20_POLY1305_ALGORITHM,
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM chapoly_macs[] = {
    { "POLY1305", CHAPOLY_PROPS, chapoly_poly1305_mac_functions,
      "Poly1305 one-time authenticator" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *chapoly_query(void *provctx, int operation_id,
                                           int *no_cache)
{
    const chapoly_provctx *pc = provctx;
    unsigned serve = pc != NULL ? pc->serve : CHAPOLY_SERVE_XCHACHA; /* fixed at init: cacheable */

    *no_cache = 0;
    switch (operation_id) {
    case OSSL_OP_CIPHER:
        return (serve & CHAPOLY_SERVE_CHACHA) ? chapoly_ciphers : chapoly_ciphers_xchacha_only;
    case OSSL_OP_MAC:
        return (serve & CHAPOLY_SERVE_MAC) ? chapoly_macs : NULL;
    }
    return NULL;
}

#define PARAM_KERNEL "chapoly-kernel"
#define PARAM_PATHS "chapoly-paths"

#define CHAPOLY_CTR_PARAM_(id, name) OSSL_PARAM_DEFN(name, OSSL_PARAM_UNSIGNED_INTEGER, NULL, 0),
static const OSSL_PARAM chapoly_param_types[] = {
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_KERNEL, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_PATHS, OSSL_PARAM_UTF8_PTR, NULL, 0),
    CHAPOLY_COUNTERS(CHAPOLY_CTR_PARAM_)
    OSSL_PARAM_END
};
#undef CHAPOLY_CTR_PARAM_

static const OSSL_PARAM *chapoly_gettable_params(void *provctx)
{
    (void)provctx;
    return chapoly_param_types;
}

static int chapoly_get_params(void *provctx, OSSL_PARAM params[])
{
    chapoly_provctx *pc = provctx;
    OSSL_PARAM *p;

    p = chapoly_param_locate(params, OSSL_PROV_PARAM_NAME);
    if (p != NULL && !chapoly_param_set_utf8_ptr(p, "chapoly: ChaCha20-Poly1305 provider"))
        return 0;
    p = chapoly_param_locate(params, OSSL_PROV_PARAM_VERSION);
    if (p != NULL && !chapoly_param_set_utf8_ptr(p, CHAPOLY_VERSION))
        return 0;
    p = chapoly_param_locate(params, OSSL_PROV_PARAM_BUILDINFO);
    if (p != NULL && !chapoly_param_set_utf8_ptr(p, pc->buildinfo))
        return 0;
    p = chapoly_param_locate(params, OSSL_PROV_PARAM_STATUS);
    if (p != NULL && !chapoly_param_set_int(p, 1))
        return 0;
    p = chapoly_param_locate(params, PARAM_KERNEL);
    if (p != NULL && !chapoly_param_set_utf8_ptr(p, pc->k->name))
        return 0;
    p = chapoly_param_locate(params, PARAM_PATHS);
    if (p != NULL && !chapoly_param_set_utf8_ptr(p, pc->paths))
        return 0;
    return chapoly_stats_get_params(pc, params);
}

static void chapoly_teardown(void *provctx)
{
    chapoly_provctx *pc = provctx;

    if (pc == NULL)
        return;
    if (pc->stats)
        chapoly_stats_detach(pc);
    chapoly_core_detach(pc);
    chapoly_free(pc->stats_file);
    chapoly_free(pc);
}

static const OSSL_DISPATCH chapoly_dispatch[] = {
    { OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))chapoly_teardown },
    { OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))chapoly_gettable_params },
    { OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))chapoly_get_params },
    { OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))chapoly_query },
    { OSSL_FUNC_PROVIDER_GET_REASON_STRINGS, (void (*)(void))chapoly_get_reason_strings },
    { 0, NULL }
};

__attribute__((visibility("default")))
int OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                       const OSSL_DISPATCH **out, void **provctx)
{
    chapoly_config cfg;
    chapoly_provctx *pc;

    /* everything from libcrypto comes through in (prov_core.c) */
    if (!chapoly_core_take(in))
        return 0;
    chapoly_config_read(handle, in, &cfg);
    pc = chapoly_zalloc(sizeof(*pc));
    if (pc == NULL)
        return 0;
    pc->handle = handle;
    pc->openssl = chapoly_config_openssl(cfg.openssl_version);
    chapoly_config_apply(pc, &cfg);
    chapoly_core_attach(pc);
    snprintf(pc->buildinfo, sizeof(pc->buildinfo),
             "chapoly " CHAPOLY_VERSION " (OpenSSL " OPENSSL_VERSION_STR " headers, running in "
             "libcrypto %s), kernel %s: %s; paths: %s%s",
             cfg.openssl_version != NULL ? cfg.openssl_version : "?", pc->k->name, pc->k->features != NULL ? pc->k->features : "?", pc->paths,
             !(pc->serve & CHAPOLY_SERVE_CHACHA)
                 ? "; serving XChaCha20-Poly1305 only: no SIMD kernel here, so "
                   "ChaCha20, ChaCha20-Poly1305 and POLY1305 are left to the default "
                   "provider (serve = all offers them)"
             : !(pc->serve & CHAPOLY_SERVE_MAC)
                 ? "; POLY1305 left to the default provider: its AVX-512 Poly1305 is faster "
                   "than this level's (serve = all offers it)"
                 : "");
    if (pc->stats)
        chapoly_stats_attach(pc);
    *provctx = pc;
    *out = chapoly_dispatch;
    return 1;
}
