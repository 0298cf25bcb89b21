/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp pipeline: the OpenSSL 3.5 cipher pipeline API (EVP_CipherPipeline*)
 * of chapoly's ChaCha20-Poly1305 against single-message seals through EVP, of
 * chapoly and of the default provider, in the same process and run.
 *
 * Per cell (message size, numpipes): every message has the 13-byte AAD,
 * its own nonce and its own input/output buffer; a pipeline batch is one
 * init (numpipes IVs; no cipher on re-init, so EVP keeps numpipes), one AAD
 * update, one text update, final and the "pipeline-tag" get; a single seal
 * is bench_evp's seal (IV-only init, AAD, text, final, tag). Before timing,
 * the pipeline's ciphertexts and tags are compared with chapoly's and the
 * default's single seals. Reported: ns per message (median of the
 * repetitions, which are interleaved: pipeline, chapoly, default, pipeline,
 * ...) and the ratios default/pipeline and chapoly/pipeline (higher: the
 * pipeline is faster).
 *
 * Usage: bench_evp pipeline [--reps N] [--ms MS] [--module PATH] [--sizes A,B,..]
 *                           [--pipes A,B,..] [--fixed pipeline|chapoly|default:BATCHES]
 *
 * --fixed runs only that operation, BATCHES batches per cell, with no check,
 * calibration or timing: for instruction counts (valgrind --tool=callgrind;
 * two runs with different BATCHES give the cost per message by difference).
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

typedef struct {
    EVP_CIPHER *ours, *dflt;
    EVP_CIPHER_CTX *pctx, *sctx_ours, *sctx_dflt;
    uint8_t key[KEY_LEN];
    uint8_t *in, *out;         /* PL_MAXP messages of size bytes each (+ tag room) */
    uint8_t iv[PL_MAXP][12];
    uint8_t tag[PL_MAXP][TAG_LEN];
    uint64_t seq;
    int pinit; /* pctx has the cipher */
} pl_state;

static void pl_nonces(pl_state *s, size_t np)
{
    for (size_t i = 0; i < np; i++)
        make_nonce(s->iv[i], 12, s->seq++);
}

/* One pipeline batch of np messages of n bytes. */
static int pl_batch(pl_state *s, size_t n, size_t np)
{
    const unsigned char *ivs[PL_MAXP], *in[PL_MAXP];
    unsigned char *out[PL_MAXP], *tags[PL_MAXP];
    size_t inl[PL_MAXP], outl[PL_MAXP], outsize[PL_MAXP];
    void *tp = tags;
    OSSL_PARAM p[2] = { OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, &tp, TAG_LEN),
                        OSSL_PARAM_END };

    pl_nonces(s, np);
    for (size_t i = 0; i < np; i++) {
        ivs[i] = s->iv[i];
        in[i] = g_aad;
        inl[i] = AAD_LEN;
        tags[i] = s->tag[i];
    }
    if (!EVP_CipherPipelineEncryptInit(s->pctx, s->pinit ? NULL : s->ours, s->key, KEY_LEN, np,
                                       ivs, 12))
        return 0;
    s->pinit = 1;
    if (!EVP_CipherPipelineUpdate(s->pctx, NULL, outl, NULL, in, inl))
        return 0;
    for (size_t i = 0; i < np; i++) {
        in[i] = s->in + i * (n + TAG_LEN);
        out[i] = s->out + i * (n + TAG_LEN);
        inl[i] = outsize[i] = n;
    }
    return EVP_CipherPipelineUpdate(s->pctx, out, outl, outsize, in, inl)
           && EVP_CipherPipelineFinal(s->pctx, out, outl, outsize)
           && EVP_CIPHER_CTX_get_params(s->pctx, p);
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

enum { PL_PIPE, PL_OURS, PL_DFLT, PL_N };
static const char *const pl_names[PL_N] = { "pipeline", "chapoly", "default" };

static int pl_run(pl_state *s, int which, size_t n, size_t np)
{
    if (which == PL_PIPE)
        return pl_batch(s, n, np);
    return pl_singles(s, which == PL_OURS ? s->sctx_ours : s->sctx_dflt, n, np);
}

/* Pipeline output equals both single seals for the same nonces. */
static int pl_check(pl_state *s, size_t n, size_t np)
{
    size_t stride = n + TAG_LEN, total = np * stride;
    uint8_t *ref = malloc(total);
    uint64_t seq0 = s->seq;
    int ok = ref != NULL;

    for (int w = PL_OURS; ok && w <= PL_DFLT; w++) {
        s->seq = seq0;
        ok = pl_singles(s, w == PL_OURS ? s->sctx_ours : s->sctx_dflt, n, np);
        memcpy(ref, s->out, total);
        s->seq = seq0;
        ok = ok && pl_batch(s, n, np);
        for (size_t i = 0; ok && i < np; i++)
            ok = memcmp(ref + i * stride, s->out + i * stride, n) == 0
                 && memcmp(ref + i * stride + n, s->tag[i], TAG_LEN) == 0;
    }
    free(ref);
    return ok;
}

/* ns per message of 'batches' calls of which. */
static double pl_time(pl_state *s, int which, size_t n, size_t np, uint64_t batches)
{
    double t0 = now_ns();

    for (uint64_t b = 0; b < batches; b++)
        if (!pl_run(s, which, n, np))
            die("pipeline bench: %s failed at %zu bytes, %zu pipes", pl_names[which], n, np);
    return (now_ns() - t0) / (double)(batches * np);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

int pipeline_main(int argc, char **argv)
{
    int reps = 5;
    double ms = 20;
    char desc[512];
    OSSL_PROVIDER *ours_p, *dflt_p;
    OSSL_LIB_CTX *lc;
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

            for (int w = 0; w < PL_N; w++)
                if (colon != NULL && strncmp(v, pl_names[w], (size_t)(colon - v)) == 0 &&
                    strlen(pl_names[w]) == (size_t)(colon - v))
                    fixed_op = w;
            if (fixed_op < 0)
                die("--fixed pipeline|chapoly|default:BATCHES");
            fixed_batches = strtoull(colon + 1, NULL, 10);
        } else if (strcmp(argv[i], "--module") == 0 && i + 1 < argc)
            cfg.module = argv[++i];
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
            die("usage: bench_evp pipeline [--reps N] [--ms MS] [--module PATH] "
                "[--sizes A,B,..] [--pipes A,B,..]");
    }
    if (reps < 1 || reps > MAX_REPS)
        reps = 5;
    memset(&s, 0, sizeof(s));
    lc = make_libctx(0, &ours_p, &dflt_p, desc, sizeof(desc));
    s.ours = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", "provider=chapoly");
    s.dflt = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", "provider=default");
    if (s.ours == NULL || s.dflt == NULL)
        die("pipeline bench: ChaCha20-Poly1305 not fetched");
    if (EVP_CIPHER_can_pipeline(s.ours, 1) != 1)
        die("pipeline bench: chapoly's ChaCha20-Poly1305 cannot pipeline (module %s)", desc);
    for (size_t i = 0; i < KEY_LEN; i++)
        s.key[i] = (uint8_t)(i * 7 + 1);
    s.pctx = EVP_CIPHER_CTX_new();
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
           "(median of %d interleaved repetitions of ~%.0f ms)\nmodule: %s\n", reps, ms, desc);
    printf("%6s %5s %10s %10s %10s %9s %9s\n", "bytes", "pipes", "pipeline", "chapoly1",
           "default1", "dflt/pipe", "ours/pipe");
    for (size_t si = 0; si < pl_nsizes; si++) {
        for (size_t pi = 0; pi < pl_npipes; pi++) {
            size_t n = pl_sizes[si], np = pl_pipes[pi];
            uint64_t batches[PL_N];
            double t[PL_N][MAX_REPS], med[PL_N], r_d[MAX_REPS], r_o[MAX_REPS];

            if (!pl_check(&s, n, np))
                die("pipeline bench: output differs at %zu bytes, %zu pipes", n, np);
            for (int w = 0; w < PL_N; w++) { /* calibrate to ~ms per sample */
                uint64_t b = 1;
                double ns;

                while ((ns = pl_time(&s, w, n, np, b) * (double)(b * np)) < ms * 1e5)
                    b *= 4;
                batches[w] = (uint64_t)((double)b * ms * 1e6 / ns) + 1;
            }
            for (int r = 0; r < reps; r++) {
                for (int w = 0; w < PL_N; w++)
                    t[w][r] = pl_time(&s, w, n, np, batches[w]);
                r_d[r] = t[PL_DFLT][r] / t[PL_PIPE][r];
                r_o[r] = t[PL_OURS][r] / t[PL_PIPE][r];
            }
            for (int w = 0; w < PL_N; w++) {
                qsort(t[w], (size_t)reps, sizeof(double), dbl_cmp);
                med[w] = t[w][reps / 2];
            }
            qsort(r_d, (size_t)reps, sizeof(double), dbl_cmp);
            qsort(r_o, (size_t)reps, sizeof(double), dbl_cmp);
            printf("%6zu %5zu %10.1f %10.1f %10.1f %8.2fx %8.2fx\n", n, np, med[PL_PIPE],
                   med[PL_OURS], med[PL_DFLT], r_d[reps / 2], r_o[reps / 2]);
            fflush(stdout);
        }
    }
done:
    EVP_CIPHER_CTX_free(s.pctx);
    EVP_CIPHER_CTX_free(s.sctx_ours);
    EVP_CIPHER_CTX_free(s.sctx_dflt);
    EVP_CIPHER_free(s.ours);
    EVP_CIPHER_free(s.dflt);
    free(s.in);
    free(s.out);
    OSSL_LIB_CTX_free(lc);
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
