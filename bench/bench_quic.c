/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_quic: one QUIC connection over 127.0.0.1 through libssl 3.5's own
 * server and client (test/clients/quic_pair.c: both ends in this process, the
 * server in a thread), TLS_CHACHA20_POLY1305_SHA256 only, N MiB up and N MiB
 * down on one stream; the same transfer with chapoly serving both ends and
 * with the default provider serving both ends, alternating within every
 * repetition (the order flips each time).
 *
 * libssl's QUIC record layers take ChaCha20-Poly1305 and ChaCha20 from the
 * library context with no property query of their own (SSL_CTX_new_ex's is
 * not passed down in 3.5), so each side is chosen by the library context's
 * default properties, as default_properties in openssl.cnf does; each
 * implementation has its own pair of library contexts, statistics off.
 * Before timing, one transfer in a separate pair of contexts with statistics
 * on proves the route (chapoly's AEAD counters move for chapoly and stay at 0
 * for the default provider). Every timed transfer's bytes are compared.
 *
 * Reported per implementation: MB/s = 10^6 bytes moved (both ways) per second
 * of wall time from "connected" to "the client read the last byte", and CPU
 * ns/B = this process's CPU time (both ends' threads) over the same window per
 * byte moved; medians over repetitions, and chapoly vs default as the median
 * of the per-repetition ratios (> 1: chapoly faster / cheaper). Handshakes and
 * shutdowns are not in the window. This measures the whole QUIC stack (packet
 * building, ACKs, flow control, UDP syscalls), of which the AEAD is one part.
 *
 * Usage: bench_quic [--mib N] [--reps R] [--module PATH] [--only chapoly|default]
 *   --only IMPL  time only that implementation (the route check still runs
 *                both): for instruction counts, run it under callgrind with
 *                two --mib values and divide the difference by the extra bytes.
 * Built against OpenSSL >= 3.5; run through its loader:
 *   scripts/openssl35.sh --run build35/bench/bench_quic
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include "quic_pair.h"

enum { CHAPOLY, DEFAULT, NIMPL };
static const char *const impl_name[NIMPL] = { "chapoly", "default" };
static const char *const impl_propq[NIMPL] = { "?provider=chapoly", "?provider=default" };

static const char *opt_module;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_quic: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    ERR_print_errors_fp(stderr);
    exit(1);
}

/* chapoly.so: --module, OPENSSL_MODULES, CHAPOLY_MODULE, the build tree, OpenSSL's directory. */
static OSSL_PROVIDER *load_chapoly(OSSL_LIB_CTX *lc, char *desc, size_t desclen)
{
    const char *src = NULL, *why = NULL;
    struct stat st;

    if (opt_module) {
        src = opt_module;
        why = "--module";
    } else if (getenv("OPENSSL_MODULES")) {
        src = getenv("OPENSSL_MODULES");
        why = "OPENSSL_MODULES";
    } else if (getenv("CHAPOLY_MODULE")) {
        src = getenv("CHAPOLY_MODULE");
        why = "CHAPOLY_MODULE";
    }
#ifdef BENCH_DEFAULT_MODULE
    else if (stat(BENCH_DEFAULT_MODULE, &st) == 0) {
        src = BENCH_DEFAULT_MODULE;
        why = "build tree";
    }
#endif
    if (src == NULL) {
        snprintf(desc, desclen, "chapoly from OpenSSL's module directory");
        return OSSL_PROVIDER_load(lc, "chapoly");
    }
    if (stat(src, &st) != 0)
        die("module path %s (%s): %s", src, why, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        snprintf(desc, desclen, "%s/chapoly.so (%s)", src, why);
        if (!OSSL_PROVIDER_set_default_search_path(lc, src))
            return NULL;
        return OSSL_PROVIDER_load(lc, "chapoly");
    }
    char abs[PATH_MAX];
    if (realpath(src, abs) == NULL)
        die("module path %s (%s): %s", src, why, strerror(errno));
    snprintf(desc, desclen, "%s (%s)", abs, why);
    return OSSL_PROVIDER_load(lc, abs); /* an absolute path: not joined to the module dir */
}

typedef struct {
    OSSL_LIB_CTX *ctx;
    OSSL_PROVIDER *chapoly, *dflt;
} side;

static void side_open(side *s, const char *propq, char *desc, size_t desclen)
{
    s->ctx = OSSL_LIB_CTX_new();
    if (s->ctx == NULL)
        die("OSSL_LIB_CTX_new");
    s->dflt = OSSL_PROVIDER_load(s->ctx, "default");
    s->chapoly = load_chapoly(s->ctx, desc, desclen);
    if (s->dflt == NULL || s->chapoly == NULL)
        die("cannot load the default provider and chapoly (%s)", desc);
    if (!EVP_set_default_properties(s->ctx, propq))
        die("EVP_set_default_properties(%s)", propq);
}

static void side_close(side *s)
{
    OSSL_PROVIDER_unload(s->chapoly);
    OSSL_PROVIDER_unload(s->dflt);
    OSSL_LIB_CTX_free(s->ctx);
}

static uint64_t aead_messages(OSSL_PROVIDER *p)
{
    uint64_t v = 0;
    OSSL_PARAM q[2] = { OSSL_PARAM_construct_uint64("chapoly-aead-messages", &v),
                        OSSL_PARAM_construct_end() };
    if (!OSSL_PROVIDER_get_params(p, q) || !OSSL_PARAM_modified(&q[0]))
        die("chapoly-aead-messages not readable");
    return v;
}

static void cpu_model(char *out, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512], name[160] = "?";
    int family = -1, model = -1;

    if (f != NULL) {
        while (fgets(line, sizeof(line), f)) {
            char *p = strchr(line, ':');
            if (p == NULL)
                continue;
            if (strncmp(line, "model name", 10) == 0) {
                p += 2;
                p[strcspn(p, "\n")] = '\0';
                snprintf(name, sizeof(name), "%s", p);
            } else if (strncmp(line, "cpu family", 10) == 0 && family < 0) {
                family = atoi(p + 1);
            } else if (strncmp(line, "model\t", 6) == 0 && model < 0) {
                model = atoi(p + 1);
            } else if (line[0] == '\n' && name[0] != '?') {
                break;
            }
        }
        fclose(f);
    }
    snprintf(out, len, "%s (family %d model %d), %ld online CPUs", name, family, model,
             sysconf(_SC_NPROCESSORS_ONLN));
}

static void kernel_name(OSSL_PROVIDER *p, char *out, size_t len)
{
    char *kp = NULL;
    OSSL_PARAM q[2] = { OSSL_PARAM_construct_utf8_ptr("chapoly-kernel", &kp, 0),
                        OSSL_PARAM_construct_end() };
    snprintf(out, len, "%s", OSSL_PROVIDER_get_params(p, q) && kp != NULL ? kp : "?");
    ERR_clear_error();
}

/* One transfer between the two sides; bytes compared; exits on any failure. */
static void transfer(side *srv, side *cli, const char *propq, EVP_PKEY *key, X509 *cert,
                     const uint8_t *up, const uint8_t *down, size_t n, qp_run *r)
{
    memset(r, 0, sizeof(*r));
    r->server_ctx = srv->ctx;
    r->client_ctx = cli->ctx;
    r->server_propq = r->client_propq = propq;
    r->key = key;
    r->cert = cert;
    r->up = up;
    r->up_len = n;
    r->down = down;
    r->down_len = n;
    r->limit_s = 120;
    if (!qp_transfer(r))
        die("%s: the QUIC connection failed: %s", propq, r->err);
    if (r->up_got_len != n || memcmp(r->up_got, up, n) != 0 || r->down_got_len != n ||
        memcmp(r->down_got, down, n) != 0)
        die("%s: the bytes that arrived differ from the bytes sent", propq);
    if (strcmp(r->server_suite, QP_SUITE) != 0 || strcmp(r->client_suite, QP_SUITE) != 0)
        die("%s: negotiated %s / %s", propq, r->server_suite, r->client_suite);
    qp_free(r);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int mib = 8, reps = 7, only = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            mib = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--module") && i + 1 < argc)
            opt_module = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            i++;
            only = !strcmp(argv[i], "chapoly") ? CHAPOLY : !strcmp(argv[i], "default") ? DEFAULT : -2;
        }
        else {
            fprintf(stderr, "usage: %s [--mib N (each way, default 8)] [--reps R (default 7)] "
                            "[--module PATH] [--only chapoly|default]\n", argv[0]);
            return 2;
        }
    }
    if (only == -2)
        die("--only chapoly or --only default");
    if (mib < 1 || mib > 1024 || reps < 1 || reps > 1000)
        die("--mib 1..1024, --reps 1..1000");
    size_t n = (size_t)mib << 20;
    char desc[PATH_MAX + 64], cpu[256], kernel[64];
    uint8_t *up = malloc(n), *down = malloc(n);
    if (up == NULL || down == NULL)
        die("out of memory");
    for (size_t i = 0; i < n; i++) {
        up[i] = (uint8_t)(i * 131 + (i >> 11));
        down[i] = (uint8_t)(i * 197 + (i >> 13) + 7);
    }

    /* The route, with statistics on in a separate pair of contexts. */
    setenv("CHAPOLY_STATS", "1", 1);
    side rs, rc;
    uint64_t moved[NIMPL];
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    side_open(&rs, impl_propq[CHAPOLY], desc, sizeof(desc));
    side_open(&rc, impl_propq[CHAPOLY], desc, sizeof(desc));
    if (!qp_identity(rs.ctx, &key, &cert))
        die("key and certificate");
    for (int i = 0; i < NIMPL; i++) {
        qp_run r;
        uint64_t before = aead_messages(rs.chapoly) + aead_messages(rc.chapoly);
        if (!EVP_set_default_properties(rs.ctx, impl_propq[i]) ||
            !EVP_set_default_properties(rc.ctx, impl_propq[i]))
            die("EVP_set_default_properties");
        transfer(&rs, &rc, impl_propq[i], key, cert, up, down, (size_t)1 << 20, &r);
        moved[i] = aead_messages(rs.chapoly) + aead_messages(rc.chapoly) - before;
    }
    kernel_name(rs.chapoly, kernel, sizeof(kernel));
    unsetenv("CHAPOLY_STATS"); /* rs stays open: the key lives in its context */
    if (moved[CHAPOLY] < 2 * ((1u << 20) / 1500) || moved[DEFAULT] != 0)
        die("route not proven: chapoly's AEAD counters moved by %llu with chapoly preferred "
            "and by %llu with the default provider preferred (1 MiB each way)",
            (unsigned long long)moved[CHAPOLY], (unsigned long long)moved[DEFAULT]);

    side srv[NIMPL], cli[NIMPL];
    for (int i = 0; i < NIMPL; i++) {
        side_open(&srv[i], impl_propq[i], desc, sizeof(desc));
        side_open(&cli[i], impl_propq[i], desc, sizeof(desc));
    }
    cpu_model(cpu, sizeof(cpu));
    double load[3] = { 0, 0, 0 };
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf != NULL) {
        if (fscanf(lf, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = load[1] = load[2] = -1;
        fclose(lf);
    }
    printf("bench_quic: QUIC through libssl, chapoly vs the default provider at both ends\n");
    printf("  cpu        %s\n", cpu);
    printf("  openssl    %s\n", OpenSSL_version(OPENSSL_VERSION));
    printf("  chapoly    %s, kernel %s\n", desc, kernel);
    printf("  suite      %s only (Initial packets: AES-128-GCM, default provider)\n",
           QP_SUITE);
    printf("  transfer   %d MiB up then %d MiB down on one stream, 127.0.0.1, client and "
           "server threads in this process\n", mib, mib);
    printf("  route      chapoly %llu AEAD messages with chapoly preferred, %llu with the "
           "default preferred (1 MiB each way, statistics on; timed contexts: off)\n",
           (unsigned long long)moved[CHAPOLY], (unsigned long long)moved[DEFAULT]);
    printf("  load avg   %.2f %.2f %.2f at start\n", load[0], load[1], load[2]);
    if (only >= 0)
        printf("  reps       %d, %s only\n\n", reps, impl_name[only]);
    else
        printf("  reps       %d, chapoly and default alternating (order flips each "
               "repetition)\n\n", reps);

    double *mbs[NIMPL], *nsb[NIMPL], *r_wall = calloc((size_t)reps, sizeof(double)),
           *r_cpu = calloc((size_t)reps, sizeof(double));
    for (int i = 0; i < NIMPL; i++) {
        mbs[i] = calloc((size_t)reps, sizeof(double));
        nsb[i] = calloc((size_t)reps, sizeof(double));
        if (mbs[i] == NULL || nsb[i] == NULL)
            die("out of memory");
    }
    if (r_wall == NULL || r_cpu == NULL)
        die("out of memory");
    printf("%4s  %-8s %9s %9s %9s\n", "rep", "impl", "MB/s", "CPU ns/B", "cpu/wall");
    for (int k = 0; k < reps; k++) {
        double wall[NIMPL], cpus[NIMPL];
        for (int j = 0; j < NIMPL; j++) {
            int i = (k % 2) ? NIMPL - 1 - j : j;
            qp_run r;
            if (only >= 0 && i != only) {
                wall[i] = cpus[i] = 1; /* not run: no figures */
                mbs[i][k] = nsb[i][k] = 0;
                continue;
            }
            transfer(&srv[i], &cli[i], impl_propq[i], key, cert, up, down, n, &r);
            wall[i] = r.transfer_s;
            cpus[i] = r.transfer_cpu_s;
            mbs[i][k] = 2.0 * (double)n / r.transfer_s / 1e6;
            nsb[i][k] = r.transfer_cpu_s * 1e9 / (2.0 * (double)n);
        }
        for (int i = 0; i < NIMPL; i++)
            if (only < 0 || i == only)
                printf("%4d  %-8s %9.1f %9.2f %8.0f%%\n", k + 1, impl_name[i], mbs[i][k],
                       nsb[i][k], 100.0 * cpus[i] / wall[i]);
        r_wall[k] = wall[DEFAULT] / wall[CHAPOLY];
        r_cpu[k] = cpus[DEFAULT] / cpus[CHAPOLY];
    }
    double m_mbs[NIMPL], m_nsb[NIMPL];
    for (int i = 0; i < NIMPL; i++) {
        m_mbs[i] = median(mbs[i], reps);
        m_nsb[i] = median(nsb[i], reps);
    }
    double rw_lo, rw_hi, rc_lo, rc_hi, rw, rcpu;
    rw = median(r_wall, reps); /* sorts: min and max follow */
    rw_lo = r_wall[0];
    rw_hi = r_wall[reps - 1];
    rcpu = median(r_cpu, reps);
    rc_lo = r_cpu[0];
    rc_hi = r_cpu[reps - 1];
    if (only >= 0)
        printf("\nmedians   %s %.1f MB/s %.2f CPU ns/B\n", impl_name[only], m_mbs[only],
               m_nsb[only]);
    else
        printf("\nmedians   chapoly %.1f MB/s %.2f CPU ns/B; default %.1f MB/s %.2f CPU ns/B\n",
               m_mbs[CHAPOLY], m_nsb[CHAPOLY], m_mbs[DEFAULT], m_nsb[DEFAULT]);
    if (only < 0)
        printf("chapoly vs default (median of per-repetition ratios, min-max): wall %.3f "
           "(%.3f-%.3f), CPU %.3f (%.3f-%.3f); > 1: chapoly faster / cheaper\n",
           rw, rw_lo, rw_hi, rcpu, rc_lo, rc_hi);

    for (int i = 0; i < NIMPL; i++) {
        side_close(&srv[i]);
        side_close(&cli[i]);
        free(mbs[i]);
        free(nsb[i]);
    }
    free(r_wall);
    free(r_cpu);
    EVP_PKEY_free(key);
    X509_free(cert);
    side_close(&rs);
    side_close(&rc);
    free(up);
    free(down);
    return 0;
}
