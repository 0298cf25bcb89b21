/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel benchmark: ChaCha20, Poly1305 (one-shot MAC), the one-shot AEAD
 * seal and ChaCha20 + Poly1305 over whole kilobytes (xor-hash-enc/-dec: the
 * stitched kernel where the level has one), for every kernel level this
 * build has and this CPU runs. No OpenSSL.
 *
 * Times are wall-clock ns per call; cycles are *core* cycles, converted
 * with the core frequency measured in this process by a dependent imul
 * chain (the TSC ticks at a fixed rate that is not the core clock, see
 * shared/design/kernels.md "Units"). Each figure is the best and the median
 * of several repetitions; a repetition runs enough calls to last ~2 ms.
 *
 * usage: bench_kernels [-l level] [-o chacha20|poly1305|aead|xor-hash|short|
 *                      chacha20-1block] [-r reps] [-s size]...
 *
 * -o chacha20-1block (not per level, sizes 5 16 32 64 unless -s): every
 * one-block ChaCha20 form this CPU runs, repetitions interleaved (form A,
 * B, C, ... then again): the scalar portable kernel (what every level but
 * avx2 uses for len <= 64), the avx2 level's chacha20_xor (a ymm row set of
 * two blocks and its 512-byte scrub), and the xmm row forms
 * chacha20_xor_row1_avx2 / _avx512vl (kernels_impl.h, not table entries
 * yet). "tput": independent back-to-back calls (consecutive calls may
 * overlap in the out-of-order window); "lat": each call's nonce word 1 is
 * XORed with the previous call's first output byte, so the calls run one
 * after another (a block's full latency).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "aead_core.h" /* the kernels, the streaming Poly1305 and the one-shot AEAD */
#include "kernels_impl.h" /* the one-block row forms (not table entries yet) */

#define MAX_LEN 65536
#define AAD_LEN 13 /* a TLS record header, as in the design note's figures */

static const size_t default_sizes[] = { 16, 64, 256, 512, 1024, 1500, 4096,
                                        16384, 65536 };

static uint8_t *buf_in, *buf_out;
static double core_ghz;

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * Core clock from a chain of dependent 64-bit imul (3-cycle latency on every
 * recent x86 core): 8 per iteration -> 24 cycles per iteration.
 */
static double measure_core_ghz(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    double best = 0;

    /* many short probes: on a shared host most of them get interrupted */
    for (int rep = 0; rep < 41; rep++) {
        uint64_t x = 3, n = 500000;
        double t0 = now_ns();
        __asm__ volatile("1:\n\t"
                         "imul %0, %0\n\timul %0, %0\n\t"
                         "imul %0, %0\n\timul %0, %0\n\t"
                         "imul %0, %0\n\timul %0, %0\n\t"
                         "imul %0, %0\n\timul %0, %0\n\t"
                         "dec %1\n\t"
                         "jnz 1b"
                         : "+r"(x), "+r"(n));
        double ghz = 24.0 * 500000 / (now_ns() - t0);
        if (ghz > best)
            best = ghz; /* interruptions only ever make it look slower */
    }
    return best;
#else
    return 0; /* unknown: cycles are not printed */
#endif
}

typedef void (*xor_fn)(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                       const uint32_t ctr_nonce[4]);

typedef struct {
    const chapoly_kernels *k;
    xor_fn fn; /* chacha20-1block: the form under test */
    size_t len;
    uint32_t key[8];
    uint32_t ctr_nonce[4];
    uint8_t key_bytes[32];
    uint8_t nonce[12];
    uint8_t tag[16];
} job;

static void run_chacha20(job *j)
{
    j->k->chacha20_xor(j->k, buf_out, buf_in, j->len, j->key, j->ctr_nonce);
}

/* The same bytes as a loop of <= 256-byte calls: 4-block row passes. */
static void run_chacha20_4blk(job *j)
{
    uint32_t ctr_nonce[4] = { j->ctr_nonce[0], j->ctr_nonce[1], j->ctr_nonce[2], j->ctr_nonce[3] };

    for (size_t off = 0; off < j->len; off += 256) {
        size_t n = j->len - off < 256 ? j->len - off : 256;
        j->k->chacha20_xor(j->k, buf_out + off, buf_in + off, n, j->key, ctr_nonce);
        ctr_nonce[0] += 4;
    }
}

static void run_form_tput(job *j)
{
    j->fn(buf_out, buf_in, j->len, j->key, j->ctr_nonce);
}

/* The next call's input state depends on this call's output. */
static void run_form_lat(job *j)
{
    j->fn(buf_out, buf_in, j->len, j->key, j->ctr_nonce);
    j->ctr_nonce[1] ^= buf_out[0];
}

static void run_poly1305(job *j)
{
    poly1305_state st;

    chapoly_poly1305_init(j->k, &st, j->key_bytes);
    chapoly_poly1305_update(j->k, &st, buf_in, j->len);
    chapoly_poly1305_final(j->k, &st, j->tag);
}

static void run_aead(job *j)
{
    chapoly_aead_seal(j->k, buf_out, j->tag, buf_in, j->len, buf_in + 1,
                      AAD_LEN, j->key, j->nonce);
}

/* ChaCha20 + Poly1305 over whole kilobytes: the table's range entry (stitched or split). */
static void run_xor_hash(job *j, int enc)
{
    poly1305_state st;

    chapoly_poly1305_init(j->k, &st, j->key_bytes);
    j->k->aead_xor_hash_range(j->k, buf_out, buf_in, j->len & ~(size_t)1023, 0,
                              j->len & ~(size_t)1023, j->key, j->ctr_nonce, &st, enc);
    chapoly_poly1305_final(j->k, &st, j->tag);
}

static void run_xor_hash_enc(job *j)
{
    run_xor_hash(j, 1);
}

static void run_xor_hash_dec(job *j)
{
    run_xor_hash(j, 0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Best and median ns per call over 'reps' repetitions. */
static void measure(void (*fn)(job *), job *j, int reps, double *best,
                    double *median)
{
    double t[64];
    long iters = 1;

    if (reps > 64)
        reps = 64;
    /* Warm up and size a repetition to ~2 ms. */
    for (;;) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++)
            fn(j);
        double dt = now_ns() - t0;
        if (dt > 2e6 || iters > (1L << 28))
            break;
        iters = dt < 1e4 ? iters * 16 : (long)(iters * 2.2e6 / dt) + 1;
    }
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++)
            fn(j);
        t[r] = (now_ns() - t0) / (double)iters;
    }
    qsort(t, (size_t)reps, sizeof(t[0]), cmp_double);
    *best = t[0];
    *median = t[reps / 2];
}

/* Calls per repetition of fn so that one lasts ~2 ms (after a warm-up). */
static long size_reps(void (*fn)(job *), job *j)
{
    long iters = 1;

    for (;;) {
        double t0 = now_ns();
        for (long i = 0; i < iters; i++)
            fn(j);
        double dt = now_ns() - t0;
        if (dt > 2e6 || iters > (1L << 28))
            return iters;
        iters = dt < 1e4 ? iters * 16 : (long)(iters * 2.2e6 / dt) + 1;
    }
}

static void report(const char *level, const char *op, size_t len, double best,
                   double median);

/* The portable level's scalar block, as an xor_fn. */
static void portable_one_block(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                               const uint32_t ctr_nonce[4])
{
    const chapoly_kernels *p = chapoly_kernels_portable();

    p->chacha20_xor(p, out, in, len, key, ctr_nonce);
}

/*
 * chacha20-1block: the one-block forms this CPU runs, at each size, in
 * tput and lat mode, their repetitions interleaved (one repetition of each
 * form in turn, 'reps' rounds), best and median ns per call.
 */
static void one_block_forms(job *j, const size_t *sizes, size_t nsizes, int reps)
{
    struct {
        const char *name;
        xor_fn fn;
        double t[64];
        long iters;
    } f[4];
    size_t nf = 0;
    const chapoly_kernels *k;

    memset(f, 0, sizeof(f));
    f[nf].name = "portable";
    f[nf++].fn = portable_one_block;
#ifdef CHAPOLY_HAVE_AVX2
    if ((k = chapoly_kernels_by_name("avx2")) != NULL) {
        f[nf].name = "row1-avx2";
        f[nf++].fn = chacha20_xor_row1_avx2;
    }
#endif
#ifdef CHAPOLY_HAVE_AVX512
    if (chapoly_kernels_by_name("avx512vl") != NULL) {
        f[nf].name = "row1-avx512";
        f[nf++].fn = chacha20_xor_row1_avx512vl;
    }
#endif
    (void)k;
    if (reps > 64)
        reps = 64;
    printf("one-block forms, repetitions interleaved; tput: independent calls, lat: each "
           "call waits for the previous one's output\n");
    for (size_t s = 0; s < nsizes; s++) {
        if (sizes[s] > 64) {
            printf("chacha20-1block: size %zu skipped (one block is at most 64 bytes)\n", sizes[s]);
            continue;
        }
        j->len = sizes[s];
        for (int mode = 0; mode < 2; mode++) {
            void (*run)(job *) = mode ? run_form_lat : run_form_tput;

            for (size_t i = 0; i < nf; i++) {
                j->fn = f[i].fn;
                f[i].iters = size_reps(run, j);
            }
            for (int r = 0; r < reps; r++) {
                for (size_t i = 0; i < nf; i++) {
                    j->fn = f[i].fn;
                    double t0 = now_ns();
                    for (long n = 0; n < f[i].iters; n++)
                        run(j);
                    f[i].t[r] = (now_ns() - t0) / (double)f[i].iters;
                }
            }
            for (size_t i = 0; i < nf; i++) {
                char op[32];

                qsort(f[i].t, (size_t)reps, sizeof(f[i].t[0]), cmp_double);
                snprintf(op, sizeof(op), "1block-%s", mode ? "lat" : "tput");
                report(f[i].name, op, j->len, f[i].t[0], f[i].t[reps / 2]);
            }
        }
    }
}

static void report(const char *level, const char *op, size_t len, double best,
                   double median)
{
    if (core_ghz > 0)
        printf("%-13s %-13s %6zu  %10.1f %10.1f  %9.0f  %7.3f %7.3f\n", level,
               op, len, best, median, best * core_ghz,
               best * core_ghz / (double)len, median * core_ghz / (double)len);
    else
        printf("%-13s %-13s %6zu  %10.1f %10.1f\n", level, op, len, best,
               median);
}

int main(int argc, char **argv)
{
    const char *want_level = NULL, *want_op = NULL;
    size_t sizes[32], nsizes = 0;
    int reps = 7;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-l") == 0 && i + 1 < argc) {
            want_level = argv[++i];
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            want_op = argv[++i];
        } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc && nsizes < 32) {
            sizes[nsizes] = strtoul(argv[++i], NULL, 0);
            if (sizes[nsizes] > MAX_LEN) {
                fprintf(stderr, "size above %d\n", MAX_LEN);
                return 2;
            }
            nsizes++;
        } else {
            fprintf(stderr, "usage: %s [-l level] [-o chacha20|poly1305|aead|xor-hash|short|"
                            "chacha20-1block] [-r reps] [-s size]...\n", argv[0]);
            return 2;
        }
    }
    if (reps < 5)
        reps = 5;
    int one_block = want_op != NULL && strcmp(want_op, "chacha20-1block") == 0;
    if (nsizes == 0 && one_block) {
        static const size_t one_block_sizes[] = { 5, 16, 32, 64 };
        nsizes = sizeof(one_block_sizes) / sizeof(one_block_sizes[0]);
        memcpy(sizes, one_block_sizes, sizeof(one_block_sizes));
    }
    if (nsizes == 0) {
        nsizes = sizeof(default_sizes) / sizeof(default_sizes[0]);
        memcpy(sizes, default_sizes, sizeof(default_sizes));
    }

    /* +64 so the misaligned-by-one AAD pointer stays inside the buffer. */
    buf_in = aligned_alloc(64, MAX_LEN + 64);
    buf_out = aligned_alloc(64, MAX_LEN + 64);
    if (buf_in == NULL || buf_out == NULL)
        return 1;
    for (size_t i = 0; i < MAX_LEN + 64; i++)
        buf_in[i] = (uint8_t)(i * 131 + 7);
    memset(buf_out, 0, MAX_LEN + 64);

    core_ghz = measure_core_ghz();
    printf("core clock (imul chain): %.3f GHz; best of 41 probes; %d repetitions "
           "per figure\n", core_ghz, reps);
    printf("%-13s %-13s %6s  %10s %10s  %9s  %7s %7s\n", "level", "op", "bytes",
           "ns best", "ns median", "cyc best", "c/B best", "c/B med");

    job j;
    memset(&j, 0, sizeof(j));
    for (int i = 0; i < 32; i++)
        j.key_bytes[i] = (uint8_t)(0x80 + i);
    chapoly_load_key(j.key, j.key_bytes);
    j.ctr_nonce[0] = 1;
    j.ctr_nonce[1] = 0x09000000;
    j.ctr_nonce[2] = 0x4a000000;
    for (int i = 0; i < 12; i++)
        j.nonce[i] = (uint8_t)i;

    if (one_block) {
        one_block_forms(&j, sizes, nsizes, reps);
        free(buf_in);
        free(buf_out);
        return 0;
    }
    for (const char *const *name = chapoly_kernels_compiled(); *name; name++) {
        if (want_level != NULL && strcmp(want_level, *name) != 0)
            continue;
        j.k = chapoly_kernels_by_name(*name);
        if (j.k == NULL) {
            printf("%-13s (not available on this CPU)\n", *name);
            continue;
        }
        static const struct {
            const char *name;
            void (*fn)(job *);
        } ops[] = { { "chacha20", run_chacha20 },
                    { "poly1305", run_poly1305 },
                    { "aead-seal", run_aead },
                    { "xor-hash-enc", run_xor_hash_enc },
                    { "xor-hash-dec", run_xor_hash_dec } };
        for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
            if (want_op != NULL && strncmp(want_op, ops[o].name, strlen(want_op)) != 0)
                continue;
            for (size_t s = 0; s < nsizes; s++) {
                double best, median;
                j.len = sizes[s];
                measure(ops[o].fn, &j, reps, &best, &median);
                report(*name, ops[o].name, j.len, best, median);
            }
        }
        /*
         * The short-input check: 257..512 bytes in one call against the same
         * bytes as a loop of 4-block (256-byte) passes.
         */
        if (want_op == NULL || strcmp(want_op, "short") == 0) {
            static const size_t shorts[] = { 320, 384, 448, 512 };
            for (size_t s = 0; s < 4; s++) {
                double b1, m1, b4, m4;
                j.len = shorts[s];
                measure(run_chacha20, &j, reps, &b1, &m1);
                measure(run_chacha20_4blk, &j, reps, &b4, &m4);
                report(*name, "chacha20", j.len, b1, m1);
                report(*name, "chacha20-4blk", j.len, b4, m4);
                printf("%-13s speed-up of one call over 4-block passes at %zu B: "
                       "%.2fx (best), %.2fx (median)\n", *name, j.len, b4 / b1,
                       m4 / m1);
            }
        }
    }
    free(buf_in);
    free(buf_out);
    return 0;
}
