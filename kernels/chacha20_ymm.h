/*
 * 8-lane (ymm) ChaCha20 building blocks, shared by chacha20_avx2.c (the
 * "avx2" level: 16 registers, AVX2 rotates) and chacha20_avx512.c (the
 * "avx512vl" level: 32 registers, vprold). Column layout: word i of eight
 * blocks in register xi; row layout: one block per 128-bit lane, so a row
 * set is two blocks.
 *
 * What differs between the two levels stays in their files: the quarter
 * round QR_YMM(a, b, c, d) (the rotates; the row-round macros below expand
 * the includer's QR_YMM), the column round loop (AVX2 parks state words in
 * memory), and the writer of one keystream block,
 *   part(out, in, lo, hi, idx, len)
 * which XORs block idx (lo = bytes 0..31, hi = 32..63) into out + 64 idx
 * and writes min(len - 64 idx, 64) bytes of it, none if len <= 64 idx
 * (AVX2 in scalar steps, AVX-512VL with byte masks).
 */
#ifndef CHAPOLY_CHACHA20_YMM_H
#define CHAPOLY_CHACHA20_YMM_H

#include <immintrin.h>
#include "kernels_impl.h"

#define ADD8(a, b) _mm256_add_epi32(a, b)
#define XOR8(a, b) _mm256_xor_si256(a, b)
#define BCAST8(w) _mm256_set1_epi32((int)(w))

/* Column counters: lane l = ctr_nonce[0] + l (32-bit adds: wraps mod 2^32). */
#define COLS_CTR_YMM _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)

/*
 * Column state: word i of eight blocks in xi. 'key' must be a pointer
 * passed through OPAQUE_PTR so the broadcasts are loads, not kept values.
 */
#define COLS_INIT_YMM(key, ctr, n1, n2, n3)                         \
    __m256i x0 = BCAST8(SIGMA0), x1 = BCAST8(SIGMA1);               \
    __m256i x2 = BCAST8(SIGMA2), x3 = BCAST8(SIGMA3);               \
    __m256i x4 = BCAST8(key[0]), x5 = BCAST8(key[1]);               \
    __m256i x6 = BCAST8(key[2]), x7 = BCAST8(key[3]);               \
    __m256i x8 = BCAST8(key[4]), x9 = BCAST8(key[5]);               \
    __m256i x10 = BCAST8(key[6]), x11 = BCAST8(key[7]);             \
    __m256i x12 = (ctr), x13 = BCAST8(n1);                          \
    __m256i x14 = BCAST8(n2), x15 = BCAST8(n3)

/* Feed-forward from broadcasts (memory operands) rather than saved registers. */
#define COLS_FEED_YMM(key, ctr, n1, n2, n3)                         \
    do {                                                            \
        x0 = ADD8(x0, BCAST8(SIGMA0));                              \
        x1 = ADD8(x1, BCAST8(SIGMA1));                              \
        x2 = ADD8(x2, BCAST8(SIGMA2));                              \
        x3 = ADD8(x3, BCAST8(SIGMA3));                              \
        x4 = ADD8(x4, BCAST8(key[0]));                              \
        x5 = ADD8(x5, BCAST8(key[1]));                              \
        x6 = ADD8(x6, BCAST8(key[2]));                              \
        x7 = ADD8(x7, BCAST8(key[3]));                              \
        x8 = ADD8(x8, BCAST8(key[4]));                              \
        x9 = ADD8(x9, BCAST8(key[5]));                              \
        x10 = ADD8(x10, BCAST8(key[6]));                            \
        x11 = ADD8(x11, BCAST8(key[7]));                            \
        x12 = ADD8(x12, (ctr));                                     \
        x13 = ADD8(x13, BCAST8(n1));                                \
        x14 = ADD8(x14, BCAST8(n2));                                \
        x15 = ADD8(x15, BCAST8(n3));                                \
    } while (0)

/*
 * Column state -> block order, in two stages. Here: lane l of x(4g+k)
 * becomes words 4g..4g+3 of block 4l+k. In COLS_STORE_YMM: block k is lane 0
 * of (x(k), x(4+k) | x(8+k), x(12+k)), block 4+k lane 1.
 */
#define UNPACK4_YMM(a, b, c, d)                                     \
    do {                                                            \
        __m256i t0 = _mm256_unpacklo_epi32(a, b);                   \
        __m256i t1 = _mm256_unpackhi_epi32(a, b);                   \
        __m256i t2 = _mm256_unpacklo_epi32(c, d);                   \
        __m256i t3 = _mm256_unpackhi_epi32(c, d);                   \
        a = _mm256_unpacklo_epi64(t0, t2);                          \
        b = _mm256_unpackhi_epi64(t0, t2);                          \
        c = _mm256_unpacklo_epi64(t1, t3);                          \
        d = _mm256_unpackhi_epi64(t1, t3);                          \
    } while (0)
#define COLS_TRANSPOSE_YMM()                                        \
    do {                                                            \
        UNPACK4_YMM(x0, x1, x2, x3);                                \
        UNPACK4_YMM(x4, x5, x6, x7);                                \
        UNPACK4_YMM(x8, x9, x10, x11);                              \
        UNPACK4_YMM(x12, x13, x14, x15);                            \
    } while (0)

/*
 * Two blocks held as one row set, or as lanes 0 and 1 of four transposed
 * column registers (a = bytes 0..15, b = 16..31, c = 32..47, d = 48..63 of
 * each block): block 'idx' from lane 0, block idx + step from lane 1.
 */
#define STORE2_YMM(part, a, b, c, d, idx, step, out, in, len)      \
    do {                                                            \
        __m256i lo0_ = _mm256_permute2x128_si256(a, b, 0x20);       \
        __m256i hi0_ = _mm256_permute2x128_si256(c, d, 0x20);       \
        __m256i lo1_ = _mm256_permute2x128_si256(a, b, 0x31);       \
        __m256i hi1_ = _mm256_permute2x128_si256(c, d, 0x31);       \
        part(out, in, lo0_, hi0_, (idx), (len));                    \
        part(out, in, lo1_, hi1_, (idx) + (step), (len));           \
    } while (0)

/* The transposed column state: writes min(len, 512) bytes. */
#define COLS_STORE_YMM(part, out, in, len)                          \
    do {                                                            \
        STORE2_YMM(part, x0, x4, x8, x12, 0, 4, out, in, len);      \
        STORE2_YMM(part, x1, x5, x9, x13, 1, 4, out, in, len);      \
        STORE2_YMM(part, x2, x6, x10, x14, 2, 4, out, in, len);     \
        STORE2_YMM(part, x3, x7, x11, x15, 3, 4, out, in, len);     \
    } while (0)

/* Row set (a, b, c, d) -> blocks idx and idx + 1. */
#define ROWS_STORE_YMM(part, a, b, c, d, idx, out, in, len)         \
    STORE2_YMM(part, a, b, c, d, idx, 1, out, in, len)

/* Row set rows: constants, key halves (from memory), counter + nonce. */
CHAPOLY_INLINE __m256i rows_sigma_ymm(void)
{
    return _mm256_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3,
                             (int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
}
#define ROW_BCAST_YMM(p) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p)))
/* Lane counters of a row set: block counter + off, + off + 1. */
#define ROWS_CTR_YMM(off) _mm256_setr_epi32((off), 0, 0, 0, (off) + 1, 0, 0, 0)

/*
 * Row layout double round: rows b, c, d are rotated so the diagonals line
 * up as columns for the second quarter round, then rotated back.
 */
#define DIAG_YMM(b, c, d)                                           \
    do {                                                            \
        b = _mm256_shuffle_epi32(b, _MM_SHUFFLE(0, 3, 2, 1));       \
        c = _mm256_shuffle_epi32(c, _MM_SHUFFLE(1, 0, 3, 2));       \
        d = _mm256_shuffle_epi32(d, _MM_SHUFFLE(2, 1, 0, 3));       \
    } while (0)
#define UNDIAG_YMM(b, c, d)                                         \
    do {                                                            \
        b = _mm256_shuffle_epi32(b, _MM_SHUFFLE(2, 1, 0, 3));       \
        c = _mm256_shuffle_epi32(c, _MM_SHUFFLE(1, 0, 3, 2));       \
        d = _mm256_shuffle_epi32(d, _MM_SHUFFLE(0, 3, 2, 1));       \
    } while (0)

/* The 20 rounds of one row set, with the includer's QR_YMM. */
#define ROUNDS_ROWS_YMM(a, b, c, d)                                 \
    do {                                                            \
        for (int i_ = 0; i_ < 10; i_++) {                           \
            QR_YMM(a, b, c, d);                                     \
            DIAG_YMM(b, c, d);                                      \
            QR_YMM(a, b, c, d);                                     \
            UNDIAG_YMM(b, c, d);                                    \
        }                                                           \
    } while (0)

/* The 20 rounds of two row sets, interleaved (two dependency chains). */
#define ROUNDS_ROWS2_YMM(a, b, c, d, p, q, r, s)                    \
    do {                                                            \
        for (int i_ = 0; i_ < 10; i_++) {                           \
            QR_YMM(a, b, c, d);                                     \
            QR_YMM(p, q, r, s);                                     \
            DIAG_YMM(b, c, d);                                      \
            DIAG_YMM(q, r, s);                                      \
            QR_YMM(a, b, c, d);                                     \
            QR_YMM(p, q, r, s);                                     \
            UNDIAG_YMM(b, c, d);                                    \
            UNDIAG_YMM(q, r, s);                                    \
        }                                                           \
    } while (0)

#endif
