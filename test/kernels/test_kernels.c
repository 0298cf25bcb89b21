/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel tests, no OpenSSL: every kernel level this CPU runs is checked
 * against the shared vectors (rfc8439.txt, xchacha.txt, poly1305-edge.txt,
 * the Wycheproof AEAD files), against the portable level (all lengths up to
 * 2 KiB, random lengths up to 70000, counter wrap, unaligned and in-place
 * buffers, every streaming split) and with the two published procedural
 * Poly1305 stress checks. After every kernel call of a SIMD level the upper
 * vector state must be clean (see test_kernels_upper.c).
 *
 * One program, one file per concern (listed in test_kernels.h). This file
 * holds the results, the PRNG and buffers the checks share, and main(),
 * which walks the levels of chapoly_kernels_compiled() and runs every
 * concern's checks at each.
 *
 * Built twice: against chapoly_kernels and against chapoly_kernels_poly32
 * (radix 2^26 Poly1305 fallback), where only the portable level exists.
 *
 * Environment: CHAPOLY_VECTOR_DIR (default: CHAPOLY_VECTOR_DIR_DEFAULT, which
 * CMake sets to test/vectors in the source tree), CHAPOLY_TEST_SEED (PRNG seed,
 * default 1). The last output line is "N passed, N failed"; the exit status
 * is nonzero on any failure or if nothing was checked.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_kernels.h"

/* ------------------------------------------------------------------ */
/* results                                                             */

unsigned long n_pass, n_fail;
const char *cur_level = "-";

void fail_at(const char *file, int line, const char *fmt, ...)
{
    const char *base = strrchr(file, '/');
    va_list ap;

    if (++n_fail > 200) {
        if (n_fail == 201)
            printf("FAIL: (further failure messages suppressed)\n");
        return;
    }
    printf("FAIL [%s] %s:%d: ", cur_level, base != NULL ? base + 1 : file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* deterministic PRNG (xoshiro256**, seeded through splitmix64)        */

static uint64_t rs[4];

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rnd_seed(uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rs[i] = splitmix64(&seed);
}

uint64_t rnd64(void)
{
    uint64_t r = rs[1] * 5;
    r = ((r << 7) | (r >> 57)) * 9;
    uint64_t t = rs[1] << 17;
    rs[2] ^= rs[0];
    rs[3] ^= rs[1];
    rs[1] ^= rs[2];
    rs[0] ^= rs[3];
    rs[2] ^= t;
    rs[3] = (rs[3] << 45) | (rs[3] >> 19);
    return r;
}

size_t rnd_below(size_t n)
{
    return n ? (size_t)(rnd64() % n) : 0;
}

void rnd_bytes(uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint64_t v = rnd64();
        memcpy(p, &v, 8);
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t v = rnd64();
        memcpy(p, &v, n);
    }
}

uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void *xalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* ------------------------------------------------------------------ */
/* buffers shared by the checks                                        */

const chapoly_kernels *P;
uint8_t *abuf_a, *abuf_b;

/*
 * memcmp/memcpy that accept NULL with n == 0: empty vector fields are NULL
 * (and are passed to the kernels as such, as a caller may do).
 */
int meq(const void *a, const void *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

void mcpy(void *d, const void *s, size_t n)
{
    if (n)
        memcpy(d, s, n);
}

int all_byte(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

uint8_t *pool;
uint8_t *rbuf, *tin, *tout;

const uint8_t *pool_at(size_t len)
{
    return pool + rnd_below(POOL - len + 1);
}

uint32_t pick_counter(size_t i)
{
    switch (i % 6) {
    case 0: return 0xffffffffu;
    case 1: return 0xfffffff0u;
    case 2: return 0xffffffffu - (uint32_t)rnd_below(48);
    case 3: return 0;
    default: return (uint32_t)rnd64();
    }
}

/* ------------------------------------------------------------------ */
/* the level walk                                                      */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
    const char *seed_s = getenv("CHAPOLY_TEST_SEED");
    uint64_t seed = seed_s != NULL && *seed_s ? strtoull(seed_s, NULL, 0) : 1;

    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("test_kernels: seed %llu (CHAPOLY_TEST_SEED)\n", (unsigned long long)seed);
    rnd_seed(seed);

    vdir = getenv("CHAPOLY_VECTOR_DIR");
#ifdef CHAPOLY_VECTOR_DIR_DEFAULT
    if (vdir == NULL || *vdir == '\0')
        vdir = CHAPOLY_VECTOR_DIR_DEFAULT;
#endif
    if (vdir == NULL || *vdir == '\0') {
        cur_level = "setup";
        CHECK(0, "CHAPOLY_VECTOR_DIR is not set");
        vdir = ".";
    }

    abuf_a = xalloc(ABUF);
    abuf_b = xalloc(ABUF);
    pool = xalloc(POOL);
    rbuf = xalloc(TBUF);
    tin = xalloc(TBUF);
    tout = xalloc(TBUF);
    rnd_bytes(pool, POOL);

    P = chapoly_kernels_portable();
    cur_level = "dispatch";
    CHECK(P != NULL && P->name != NULL && strcmp(P->name, "portable") == 0,
          "chapoly_kernels_portable() is not the portable table");
    CHECK(chapoly_kernels_by_name("portable") == P, "by_name(\"portable\") differs");
    CHECK(chapoly_kernels_by_name("no-such-level") == NULL, "by_name of an unknown level is not NULL");
    CHECK(chapoly_kernels_by_name(NULL) == NULL, "by_name(NULL) is not NULL");
    if (P == NULL)
        return 1;

    up_init();

    const char *const *names = chapoly_kernels_compiled();
    int levels_run = 0;
    for (size_t li = 0; names != NULL && names[li] != NULL; li++) {
        const chapoly_kernels *k = chapoly_kernels_by_name(names[li]);
        if (k == NULL) {
            printf("level %s: compiled in but skipped: this CPU/OS lacks it\n", names[li]);
            continue;
        }
        cur_level = names[li];
        CHECK(k->name != NULL && strcmp(k->name, names[li]) == 0, "table name is '%s'",
              k->name ? k->name : "(null)");
        int complete = k->chacha20_xor && k->chacha20_keyblock_xor && k->hchacha20 &&
                       k->poly1305_init && k->poly1305_blocks && k->poly1305_final &&
                       k->poly1305_last && k->chacha20_multi_blocks &&
                       k->poly1305_multi_blocks && k->aead_xor_hash_range &&
                       k->aead_first_xor_hash;
        CHECK(complete, "incomplete table");
        if (!complete)
            continue;

        up_level_begin(k != P);
        unsigned long p0 = n_pass, f0 = n_fail;
        double t0 = now();

        run_vectors(k);
        poly_procedural(k);
        chacha_diff(k);
        row1_diff(k);
        hchacha_diff(k);
        poly_diff(k);
        poly_calls_diff(k);
        aead_diff(k);
        xor_hash_range_diff(k);
        first_xor_hash_diff(k);
        keyblock_xor_diff(k);
        multi_blocks_diff(k);
        batch_core_diff(k);
        poly_multi_diff(k);
        multi_hash_diff(k);
        if (k != P)
            shape_extremes(names[li]);
        up_level_end();
        levels_run++;
        printf("level %s: %lu passed, %lu failed (%.1f s)%s%s\n", names[li], n_pass - p0, n_fail - f0,
               now() - t0, k->shapes.aead_stitched ? ", stitched AEAD" : ", split AEAD",
               k == P ? "" : up_active() ? ", upper state checked" : ", upper state NOT checked");
    }
    cur_level = "summary";
    CHECK(levels_run > 0, "no kernel level ran");

    free(abuf_a);
    free(abuf_b);
    free(pool);
    free(rbuf);
    free(tin);
    free(tout);
    up_done();
    printf("%lu passed, %lu failed\n", n_pass, n_fail);
    return n_fail == 0 && n_pass > 0 ? 0 : 1;
}

