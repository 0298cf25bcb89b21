/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp pipeline: the OpenSSL 3.5 cipher pipeline API (EVP_CipherPipeline*)
 * of chapoly's ChaCha20-Poly1305 against single-message seals through EVP, of
 * chapoly and of the default provider, in the same process and run.
 *
 * Per cell (message size, numpipes): every message has the 13-byte AAD,
 * its own nonce and its own input/output buffer; a pipeline batch is one
 * init (numpipes IVs), one AAD update, one text update, final and the
 * "pipeline-tag" get. Three ways to start a batch, as applications do:
 *   kept    the same context, initialised again with no cipher (EVP keeps
 *           numpipes);
 *   reset   EVP_CIPHER_CTX_reset, then the init with the cipher (OpenSSL
 *           3.5.9 loses numpipes when the cipher is passed again without a
 *           reset, so this is what a plain user writes);
 *   newctx  EVP_CIPHER_CTX_new, the init with the cipher, ..., free.
 * A single seal is bench_evp's seal (IV-only init, AAD, text, final, tag).
 * Before timing, every pipeline's ciphertexts and tags are compared with
 * chapoly's and the default's single seals. Reported: ns per message (median
 * of the repetitions, which are interleaved: every implementation once per
 * repetition, in turn) and ratios, each the median of the per-repetition
 * ratios: reset/kept and newctx/kept (1.00: the pattern costs nothing
 * more), default/kept and chapoly/kept (higher: the pipeline is faster).
 * With --base PATH a second chapoly.so (the baseline build of an A/B) runs
 * the three patterns too, in a library context of its own, and the ratios
 * base/this for each pattern follow (higher: this build is faster).
 *
 * Usage: bench_evp pipeline [--reps N] [--ms MS] [--module PATH] [--base PATH]
 *                           [--sizes A,B,..] [--pipes A,B,..] [--fixed OP:BATCHES]
 *
 * --fixed runs only OP (kept, reset, newctx, chapoly, default, or base-kept,
 * base-reset, base-newctx with --base; "pipeline" is kept), BATCHES batches
 * per cell, with no check, calibration or timing: for instruction counts
 * (valgrind --tool=callgrind; two runs with different BATCHES give the cost
 * per message by difference).
 */
#include "bench_evp.h"

#include <stdlib.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>

#if OPENSSL_VERSION_NUMBER >= 0x30500000L

#define PL_MAXP 32
static size_t pl_sizes[16] = { 16, 64, 256, 576, 1350, 16384 };
static size_t pl_nsizes = 6;
static size_t pl_pipes[16] = { 1, 4, 16, 32 };
static size_t pl_npipes = 4;

/* A chapoly build's pipeline: its cipher, the kept context and the one reset per batch. */
typedef struct {
    EVP_CIPHER *c;
    EVP_CIPHER_CTX *kept, *reset;
    int kept_init; /* kept has the cipher */
} pl_impl;

typedef struct {
    pl_impl impl[2]; /* [0] this build, [1] the base (--base) */
    EVP_CIPHER *ours, *dflt;
    EVP_CIPHER_CTX *sctx_ours, *sctx_dflt;
    uint8_t key[KEY_LEN];
    uint8_t *in, *out; /* PL_MAXP messages of size bytes each (+ tag room) */
    uint8_t iv[PL_MAXP][12];
    uint8_t tag[PL_MAXP][TAG_LEN];
    uint64_t seq;
} pl_state;

enum { PL_KEPT, PL_RESET, PL_NEWCTX, PL_OURS, PL_DFLT, PL_BKEPT, PL_BRESET, PL_BNEWCTX, PL_N };
static const char *const pl_names[PL_N] = { "kept",    "reset",     "newctx",     "chapoly",
                                            "default", "base-kept", "base-reset", "base-newctx" };

static void pl_nonces(pl_state *s, size_t np)
{
    for (size_t i = 0; i < np; i++)
        make_nonce(s->iv[i], 12, s->seq++);
}

/* One pipeline batch of np messages of n bytes; how: PL_KEPT, PL_RESET or PL_NEWCTX. */
static int pl_batch(pl_state *s, pl_impl *im, int how, size_t n, size_t np)
{
    const unsigned char *ivs[PL_MAXP], *in[PL_MAXP];
    unsigned char *out[PL_MAXP], *tags[PL_MAXP];
    size_t inl[PL_MAXP], outl[PL_MAXP], outsize[PL_MAXP];
    void *tp = tags;
    OSSL_PARAM p[2] = { OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, &tp, TAG_LEN),
                        OSSL_PARAM_END };
    EVP_CIPHER_CTX *ctx = how == PL_KEPT ? im->kept : how == PL_RESET ? im->reset
                                                                      : EVP_CIPHER_CTX_new();
    const EVP_CIPHER *c = im->c;
    int ok;

    pl_nonces(s, np);
    for (size_t i = 0; i < np; i++) {
        ivs[i] = s->iv[i];
        in[i] = g_aad;
        inl[i] = AAD_LEN;
        tags[i] = s->tag[i];
    }
    if (how == PL_KEPT) {
        c = im->kept_init ? NULL : im->c;
        im->kept_init = 1;
    } else if (how == PL_RESET) {
        EVP_CIPHER_CTX_reset(ctx);
    }
    ok = ctx != NULL && EVP_CipherPipelineEncryptInit(ctx, c, s->key, KEY_LEN, np, ivs, 12)
         && EVP_CipherPipelineUpdate(ctx, NULL, outl, NULL, in, inl);
    for (size_t i = 0; i < np; i++) {
        in[i] = s->in + i * (n + TAG_LEN);
        out[i] = s->out + i * (n + TAG_LEN);
        inl[i] = outsize[i] = n;
    }
    ok = ok && EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl)
         && EVP_CipherPipelineFinal(ctx, out, outl, outsize)
         && EVP_CIPHER_CTX_get_params(ctx, p);
    if (how == PL_NEWCTX)
        EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* np single-message seals of n bytes (the same buffers as a batch). */
static int pl_singles(pl_state *s, EVP_CIPHER_CTX *c, size_t n, size_t np)
{
    int l, l2;

    pl_nonces(s, np);
    for (size_t i = 0; i < np; i++) {
        const uint8_t *in = s->in + i * (n + TAG_LEN);
        uint8_t *out = s->out + i * (n + TAG_LEN);

        if (!EVP_EncryptInit_ex(c, NULL, NULL, NULL, s->iv[i])
            || !EVP_EncryptUpdate(c, NULL, &l, g_aad, AAD_LEN)
            || !EVP_EncryptUpdate(c, out, &l, in, (int)n)
            || !EVP_EncryptFinal_ex(c, out + l, &l2)
            || !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, out + n))
            return 0;
    }
    return 1;
}

static int pl_run(pl_state *s, int which, size_t n, size_t np)
{
    if (which == PL_OURS || which == PL_DFLT)
        return pl_singles(s, which == PL_OURS ? s->sctx_ours : s->sctx_dflt, n, np);
    if (which >= PL_BKEPT)
        return pl_batch(s, &s->impl[1], which - PL_BKEPT, n, np);
    return pl_batch(s, &s->impl[0], which, n, np);
}

/* Every pipeline's output equals both single seals for the same nonces. */
static int pl_check(pl_state *s, const int *run, size_t n, size_t np)
{
    size_t stride = n + TAG_LEN, total = np * stride;
    uint8_t *ref = malloc(total);
    uint64_t seq0 = s->seq;
    int ok = ref != NULL;

    for (int w = PL_OURS; ok && w <= PL_DFLT; w++) {
        s->seq = seq0;
        ok = pl_singles(s, w == PL_OURS ? s->sctx_ours : s->sctx_dflt, n, np);
        memcpy(ref, s->out, total);
        for (int b = 0; ok && b < PL_N; b++) {
            if (!run[b] || b == PL_OURS || b == PL_DFLT)
                continue;
            s->seq = seq0;
            memset(s->out, 0, total);
            ok = pl_run(s, b, n, np);
            for (size_t i = 0; ok && i < np; i++)
                ok = memcmp(ref + i * stride, s->out + i * stride, n) == 0
                     && memcmp(ref + i * stride + n, s->tag[i], TAG_LEN) == 0;
        }
    }
    free(ref);
    return ok;
}

/*
 * A sample: ns per message over bursts of 'batches' batches (~2 ms each).
 * A burst during which this thread got less than PL_CLEAN of the CPU (the
 * machine is shared) is dropped and run again, up to four times as many
 * bursts as asked for; with none clean, the least disturbed one counts.
 */
#define PL_CLEAN 0.98
static uint64_t pl_bursts_run, pl_bursts_dropped;

static double pl_time(pl_state *s, int which, size_t n, size_t np, uint64_t batches, int bursts)
{
    double wall = 0, dirty_wall = 0, dirty_frac = -1;
    int clean = 0, tries = 0;

    while (clean < bursts && tries < 4 * bursts) {
        double w0 = now_ns(), c0 = cpu_ns(), w, frac;

        for (uint64_t b = 0; b < batches; b++)
            if (!pl_run(s, which, n, np))
                die("pipeline bench: %s failed at %zu bytes, %zu pipes", pl_names[which], n,
                    np);
        frac = (cpu_ns() - c0) / (w = now_ns() - w0);
        tries++;
        if (frac >= PL_CLEAN) {
            wall += w;
            clean++;
        } else if (frac > dirty_frac) {
            dirty_frac = frac;
            dirty_wall = w;
        }
    }
    pl_bursts_run += (uint64_t)tries;
    pl_bursts_dropped += (uint64_t)(tries - clean);
    if (clean == 0)
        return dirty_wall / (double)(batches * np);
    return wall / ((double)clean * (double)(batches * np));
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double pl_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), dbl_cmp);
    return v[n / 2];
}

/* The median over repetitions of t[a][r] / t[b][r]. */
static double ratio(double t[PL_N][MAX_REPS], int a, int b, int reps)
{
    double r[MAX_REPS];

    for (int i = 0; i < reps; i++)
        r[i] = t[a][i] / t[b][i];
    return pl_median(r, reps);
}

static void pl_impl_init(pl_impl *im, OSSL_LIB_CTX *lc, const char *what)
{
    im->c = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", "provider=chapoly");
    if (im->c == NULL)
        die("pipeline bench: %s's ChaCha20-Poly1305 not fetched", what);
    if (EVP_CIPHER_can_pipeline(im->c, 1) != 1)
        die("pipeline bench: %s's ChaCha20-Poly1305 cannot pipeline", what);
    im->kept = EVP_CIPHER_CTX_new();
    im->reset = EVP_CIPHER_CTX_new();
    im->kept_init = 0;
    if (im->kept == NULL || im->reset == NULL)
        die("out of memory");
}

static void pl_impl_free(pl_impl *im)
{
    EVP_CIPHER_CTX_free(im->kept);
    EVP_CIPHER_CTX_free(im->reset);
    EVP_CIPHER_free(im->c);
}

static void pl_cell(pl_state *s, const int *run, double ms, int reps, size_t n, size_t np)
{
    uint64_t batches[PL_N] = { 0 };
    double t[PL_N][MAX_REPS], med[PL_N], burst_ms = ms < 8 ? ms / 4 : 2;
    int bursts = (int)(ms / burst_ms + 0.5);

    if (!pl_check(s, run, n, np))
        die("pipeline bench: output differs at %zu bytes, %zu pipes", n, np);
    for (int w = 0; w < PL_N; w++) { /* calibrate to bursts of ~burst_ms */
        uint64_t b = 1;
        double ns;

        if (!run[w])
            continue;
        while ((ns = pl_time(s, w, n, np, b, 1) * (double)(b * np)) < burst_ms * 2.5e5)
            b *= 4;
        batches[w] = (uint64_t)((double)b * burst_ms * 1e6 / ns) + 1;
    }
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < PL_N; k++) { /* a rotating order: no implementation always first */
            int w = (k + r) % PL_N;

            if (run[w])
                t[w][r] = pl_time(s, w, n, np, batches[w], bursts);
        }
    for (int w = 0; w < PL_N; w++) {
        double v[MAX_REPS];

        memcpy(v, t[w], sizeof(v));
        med[w] = run[w] ? pl_median(v, reps) : 0;
    }
    printf("%6zu %5zu %9.1f %9.1f %9.1f %9.1f %9.1f %6.2f %6.2f %6.2fx %6.2fx", n, np,
           med[PL_KEPT], med[PL_RESET], med[PL_NEWCTX], med[PL_OURS], med[PL_DFLT],
           ratio(t, PL_RESET, PL_KEPT, reps), ratio(t, PL_NEWCTX, PL_KEPT, reps),
           ratio(t, PL_DFLT, PL_KEPT, reps), ratio(t, PL_OURS, PL_KEPT, reps));
    if (run[PL_BKEPT])
        printf(" %9.1f %9.1f %9.1f %6.3f %6.3f %6.3f", med[PL_BKEPT], med[PL_BRESET],
               med[PL_BNEWCTX], ratio(t, PL_BKEPT, PL_KEPT, reps),
               ratio(t, PL_BRESET, PL_RESET, reps), ratio(t, PL_BNEWCTX, PL_NEWCTX, reps));
    printf("\n");
    fflush(stdout);
}

int pipeline_main(int argc, char **argv)
{
    int reps = 5, run[PL_N] = { 1, 1, 1, 1, 1, 0, 0, 0 };
    double ms = 20;
    char desc[512], bdesc[512];
    OSSL_PROVIDER *ours_p, *dflt_p, *bours_p, *bdflt_p;
    OSSL_LIB_CTX *lc, *blc = NULL;
    pl_state s;
    int fixed_op = -1;
    uint64_t fixed_batches = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
            ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--fixed") == 0 && i + 1 < argc) {
            const char *v = argv[++i], *colon = strchr(v, ':');
            size_t len = colon == NULL ? 0 : (size_t)(colon - v);

            for (int w = 0; w < PL_N; w++)
                if (colon != NULL && strncmp(v, pl_names[w], len) == 0 &&
                    strlen(pl_names[w]) == len)
                    fixed_op = w;
            if (colon != NULL && len == 8 && strncmp(v, "pipeline", 8) == 0)
                fixed_op = PL_KEPT;
            if (fixed_op < 0)
                die("--fixed kept|reset|newctx|chapoly|default|base-kept|base-reset|"
                    "base-newctx:BATCHES");
            fixed_batches = strtoull(colon + 1, NULL, 10);
        } else if (strcmp(argv[i], "--module") == 0 && i + 1 < argc)
            cfg.module = argv[++i];
        else if (strcmp(argv[i], "--base") == 0 && i + 1 < argc)
            cfg.base = argv[++i];
        else if ((strcmp(argv[i], "--sizes") == 0 || strcmp(argv[i], "--pipes") == 0) &&
                 i + 1 < argc) {
            int sizes = argv[i][2] == 's';
            size_t *list = sizes ? pl_sizes : pl_pipes, k = 0, max = sizes ? 16384 : PL_MAXP;
            char *p = argv[++i], *end;

            while (*p != '\0' && k < 16) {
                unsigned long v = strtoul(p, &end, 10);

                if (end == p || v == 0 || v > max)
                    die("%s: values 1..%zu", sizes ? "--sizes" : "--pipes", max);
                list[k++] = v;
                p = *end == ',' ? end + 1 : end;
            }
            *(sizes ? &pl_nsizes : &pl_npipes) = k;
        } else
            die("usage: bench_evp pipeline [--reps N] [--ms MS] [--module PATH] [--base PATH] "
                "[--sizes A,B,..] [--pipes A,B,..] [--fixed OP:BATCHES]");
    }
    if (reps < 1 || reps > MAX_REPS)
        reps = 5;
    memset(&s, 0, sizeof(s));
    lc = make_libctx(0, &ours_p, &dflt_p, desc, sizeof(desc));
    pl_impl_init(&s.impl[0], lc, "chapoly");
    if (cfg.base != NULL) {
        blc = make_libctx(1, &bours_p, &bdflt_p, bdesc, sizeof(bdesc));
        pl_impl_init(&s.impl[1], blc, "the base chapoly");
        run[PL_BKEPT] = run[PL_BRESET] = run[PL_BNEWCTX] = 1;
    }
    if (fixed_op >= PL_BKEPT && cfg.base == NULL)
        die("--fixed %s needs --base", pl_names[fixed_op]);
    s.ours = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", "provider=chapoly");
    s.dflt = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", "provider=default");
    if (s.ours == NULL || s.dflt == NULL)
        die("pipeline bench: ChaCha20-Poly1305 not fetched");
    for (size_t i = 0; i < KEY_LEN; i++)
        s.key[i] = (uint8_t)(i * 7 + 1);
    s.sctx_ours = EVP_CIPHER_CTX_new();
    s.sctx_dflt = EVP_CIPHER_CTX_new();
    if (!EVP_EncryptInit_ex2(s.sctx_ours, s.ours, s.key, NULL, NULL)
        || !EVP_EncryptInit_ex2(s.sctx_dflt, s.dflt, s.key, NULL, NULL))
        die("pipeline bench: init failed");
    s.in = malloc(PL_MAXP * (16384 + TAG_LEN));
    s.out = malloc(PL_MAXP * (16384 + TAG_LEN));
    if (s.in == NULL || s.out == NULL)
        die("out of memory");
    for (size_t i = 0; i < PL_MAXP * (16384 + TAG_LEN); i++)
        s.in[i] = (uint8_t)(i * 131 + 7);

    if (fixed_op >= 0) {
        for (size_t si = 0; si < pl_nsizes; si++)
            for (size_t pi = 0; pi < pl_npipes; pi++)
                for (uint64_t b = 0; b < fixed_batches; b++)
                    if (!pl_run(&s, fixed_op, pl_sizes[si], pl_pipes[pi]))
                        die("pipeline bench: %s failed", pl_names[fixed_op]);
        printf("%s: %llu batches per cell done\n", pl_names[fixed_op],
               (unsigned long long)fixed_batches);
        goto done;
    }
    printf("bench_evp pipeline: ChaCha20-Poly1305 seal, 13-byte AAD, ns per message "
           "(median of %d interleaved repetitions of ~%.0f ms in bursts\nof <= 2 ms; a burst "
           "that did not have the CPU throughout is run again)\nmodule: %s\n", reps, ms, desc);
    if (cfg.base != NULL)
        printf("base:   %s\n", bdesc);
    printf("ratios: reset/kept, newctx/kept (1.00: no extra cost), default/kept and chapoly/kept "
           "(single seals; >1: the pipeline is faster)%s\n",
           cfg.base ? ", b/this = the base's ns over this build's, per pattern (>1: this build "
                      "is faster)" : "");
    printf("%6s %5s %9s %9s %9s %9s %9s %6s %6s %7s %7s", "bytes", "pipes", "kept", "reset",
           "newctx", "chapoly1", "default1", "rst/k", "new/k", "dflt/k", "ours/k");
    if (cfg.base != NULL)
        printf(" %9s %9s %9s %6s %6s %6s", "b-kept", "b-reset", "b-newctx", "b/this", "b/this",
               "b/this");
    printf("\n");
    for (size_t si = 0; si < pl_nsizes; si++)
        for (size_t pi = 0; pi < pl_npipes; pi++)
            pl_cell(&s, run, ms, reps, pl_sizes[si], pl_pipes[pi]);
    printf("bursts dropped as preempted: %llu of %llu\n", (unsigned long long)pl_bursts_dropped,
           (unsigned long long)pl_bursts_run);
done:
    pl_impl_free(&s.impl[0]);
    if (cfg.base != NULL)
        pl_impl_free(&s.impl[1]);
    EVP_CIPHER_CTX_free(s.sctx_ours);
    EVP_CIPHER_CTX_free(s.sctx_dflt);
    EVP_CIPHER_free(s.ours);
    EVP_CIPHER_free(s.dflt);
    free(s.in);
    free(s.out);
    OSSL_LIB_CTX_free(lc);
    OSSL_LIB_CTX_free(blc);
    return 0;
}

#else

int pipeline_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    die("bench_evp pipeline: built against OpenSSL headers without the pipeline API (3.5+)");
}

#endif
