/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chacha20_multi_blocks for the "avx2" level: n independent blocks, each
 * with its own input state (key, counter, nonce), for the batched AEAD
 * (core/aead_batch.c). Up to four blocks (and what is left after the
 * column groups below): row layout, which takes per-block states as they
 * are: a ymm row set holds two blocks (one per 128-bit lane), and two row
 * sets run interleaved (four blocks, two dependency chains); an odd last
 * block gets a zero partner state whose block is never stored. The
 * feed-forward re-reads the input states from memory.
 *
 * Five or more blocks: groups of eight as one 8-lane column batch (lane l
 * = block l of the group; cols_batch_asm_ymm, chacha20_ymm.h): the states
 * are transposed to word-major order on the way in and back on the way
 * out. A last group of 5..7 blocks fills its empty lanes with a copy of
 * its first state and stores only its own blocks; 1..4 blocks left go to
 * the row sets.
 *
 * Rotates: by 16 and 8 with vpshufb, by 12 and 7 with shift + shift + or.
 * The compiler may spill row state (as secret as the key: the rounds are
 * invertible) and the column batches keep their state in stack arrays,
 * so both run out of line and the caller scrubs their frames afterwards.
 * The compiler ends every function that touches ymm with vzeroupper.
 */
#include "chacha20_ymm.h"

#define ROT16_BYTES 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
#define ROT8_BYTES 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14

#define ROLS8(a, n) _mm256_or_si256(_mm256_slli_epi32(a, n), _mm256_srli_epi32(a, 32 - (n)))

#define QR_YMM(a, b, c, d)                                                  \
    do {                                                                    \
        a = ADD8(a, b); d = XOR8(d, a); d = _mm256_shuffle_epi8(d, r16);    \
        c = ADD8(c, d); b = XOR8(b, c); b = ROLS8(b, 12);                   \
        a = ADD8(a, b); d = XOR8(d, a); d = _mm256_shuffle_epi8(d, r8);     \
        c = ADD8(c, d); b = XOR8(b, c); b = ROLS8(b, 7);                    \
    } while (0)

/* Row r (0..3) of states j (lane 0) and j + 1 (lane 1, zeros if absent). */
CHAPOLY_INLINE __m256i row_pair(const uint32_t *states, size_t j, size_t n, int r)
{
    __m128i lo = _mm_loadu_si128((const __m128i *)(states + 16 * j + 4 * r));
    __m128i hi = j + 1 < n ? _mm_loadu_si128((const __m128i *)(states + 16 * (j + 1) + 4 * r))
                           : _mm_setzero_si128();

    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* Blocks j (lane 0) and j + 1 (lane 1, if present) of a row set, fed forward. */
CHAPOLY_INLINE void store_pair(uint8_t *out, const uint32_t *states, size_t j, size_t n,
                               __m256i a, __m256i b, __m256i c, __m256i d)
{
    a = ADD8(a, row_pair(states, j, n, 0));
    b = ADD8(b, row_pair(states, j, n, 1));
    c = ADD8(c, row_pair(states, j, n, 2));
    d = ADD8(d, row_pair(states, j, n, 3));
    _mm256_storeu_si256((__m256i *)(out + 64 * j), _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256((__m256i *)(out + 64 * j + 32), _mm256_permute2x128_si256(c, d, 0x20));
    if (j + 1 < n) {
        _mm256_storeu_si256((__m256i *)(out + 64 * j + 64),
                            _mm256_permute2x128_si256(a, b, 0x31));
        _mm256_storeu_si256((__m256i *)(out + 64 * j + 96),
                            _mm256_permute2x128_si256(c, d, 0x31));
    }
}

static __attribute__((noinline)) void multi_rows(uint8_t *out, const uint32_t *states, size_t n)
{
    const __m256i r16 = _mm256_setr_epi8(ROT16_BYTES, ROT16_BYTES);
    const __m256i r8 = _mm256_setr_epi8(ROT8_BYTES, ROT8_BYTES);
    size_t j = 0;

    for (; j + 2 < n; j += 4) { /* three or four blocks: two row sets */
        __m256i a = row_pair(states, j, n, 0), b = row_pair(states, j, n, 1);
        __m256i c = row_pair(states, j, n, 2), d = row_pair(states, j, n, 3);
        __m256i p = row_pair(states, j + 2, n, 0), q = row_pair(states, j + 2, n, 1);
        __m256i r = row_pair(states, j + 2, n, 2), s = row_pair(states, j + 2, n, 3);

        ROUNDS_ROWS2_YMM(a, b, c, d, p, q, r, s);
        OPAQUE_PTR(states);
        store_pair(out, states, j, n, a, b, c, d);
        store_pair(out, states, j + 2, n, p, q, r, s);
    }
    if (j < n) { /* one or two blocks: one row set */
        __m256i a = row_pair(states, j, n, 0), b = row_pair(states, j, n, 1);
        __m256i c = row_pair(states, j, n, 2), d = row_pair(states, j, n, 3);

        ROUNDS_ROWS_YMM(a, b, c, d);
        OPAQUE_PTR(states);
        store_pair(out, states, j, n, a, b, c, d);
    }
}

/* vpshufb patterns rotating each 32-bit word left by 16 and by 8 bits. */
static const __m256i rot_tbl[2] = {
    { 0x0504070601000302LL, 0x0d0c0f0e09080b0aLL, 0x0504070601000302LL, 0x0d0c0f0e09080b0aLL },
    { 0x0605040702010003LL, 0x0e0d0c0f0a09080bLL, 0x0605040702010003LL, 0x0e0d0c0f0a09080bLL },
};

/*
 * Words 4q..4q+3 of the eight states p[0..7] as columns: lane l of init[4q + k]
 * = word 4q + k of p[l]. Blocks l and l + 4 share a register (one per
 * 128-bit lane) before the 4x4 transpose inside the lanes (cheaper than
 * scalar stores into init: docs/performance.md).
 */
CHAPOLY_INLINE void cols_in_quad(__m256i init[16], const uint32_t *const p[8], int q)
{
    __m256i r0 = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p[0] + 4 * q))),
        _mm_loadu_si128((const __m128i *)(p[4] + 4 * q)), 1);
    __m256i r1 = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p[1] + 4 * q))),
        _mm_loadu_si128((const __m128i *)(p[5] + 4 * q)), 1);
    __m256i r2 = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p[2] + 4 * q))),
        _mm_loadu_si128((const __m128i *)(p[6] + 4 * q)), 1);
    __m256i r3 = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p[3] + 4 * q))),
        _mm_loadu_si128((const __m128i *)(p[7] + 4 * q)), 1);

    UNPACK4_YMM(r0, r1, r2, r3);
    _mm256_store_si256(init + 4 * q, r0);
    _mm256_store_si256(init + 4 * q + 1, r1);
    _mm256_store_si256(init + 4 * q + 2, r2);
    _mm256_store_si256(init + 4 * q + 3, r3);
}

/* Raw block idx of a group of nb (5..8): stored only if the group owns it. */
#define RAW_BLOCK_PART(out, in, lo, hi, idx, nb)                            \
    do {                                                                    \
        (void)(in);                                                         \
        if ((idx) < (nb)) {                                                 \
            _mm256_storeu_si256((__m256i *)((out) + 64 * (idx)), lo);       \
            _mm256_storeu_si256((__m256i *)((out) + 64 * (idx) + 32), hi);  \
        }                                                                   \
    } while (0)

/*
 * Groups of eight blocks as 8-lane column batches while five or more are
 * left, the last of 5..7 blocks padded with copies of its first state.
 * Returns the number of blocks done (the rest, 0..4, for multi_rows). The
 * column states and the batch output are as secret as the key: they stay
 * in this frame, which the caller scrubs.
 */
static __attribute__((noinline)) size_t multi_cols(uint8_t *out, const uint32_t *states, size_t n,
                                                   int pairs)
{
    static const _Alignas(32) uint8_t zeros[1024];
    _Alignas(32) __m256i init[32];
    _Alignas(32) __m256i w[32];
    size_t j = 0;

    for (; pairs && n - j >= 16; j += 16) { /* two groups in flight: keystream = 0 ^ keystream */
        const uint32_t *p[8];

        for (size_t l = 0; l < 8; l++)
            p[l] = states + 16 * (j + l);
        for (int q = 0; q < 4; q++)
            cols_in_quad(init, p, q);
        for (size_t l = 0; l < 8; l++)
            p[l] = states + 16 * (j + 8 + l);
        for (int q = 0; q < 4; q++)
            cols_in_quad(init + 16, p, q);
        cols_pair_full_asm_ymm(init, w, rot_tbl, out + 64 * j, zeros);
    }
    while (n - j >= 5) {
        size_t nb = n - j >= 8 ? 8 : n - j;
        const uint32_t *p[8];

        for (size_t l = 0; l < 8; l++) /* public: n */
            p[l] = states + 16 * (j + (l < nb ? l : 0));
        for (int q = 0; q < 4; q++)
            cols_in_quad(init, p, q);
        cols_batch_asm_ymm(init, w, rot_tbl);

        __m256i x0 = w[0], x1 = w[1], x2 = w[2], x3 = w[3];
        __m256i x4 = w[4], x5 = w[5], x6 = w[6], x7 = w[7];
        __m256i x8 = w[8], x9 = w[9], x10 = w[10], x11 = w[11];
        __m256i x12 = w[12], x13 = w[13], x14 = w[14], x15 = w[15];
        uint8_t *o = out + 64 * j;

        COLS_TRANSPOSE_YMM();
        COLS_STORE_YMM(RAW_BLOCK_PART, o, NULL, nb);
        j += nb;
    }
    return j;
}

/*
 * The frames (objdump, optimised): multi_rows about 0x100 bytes;
 * multi_cols, with init and w (2 KiB: a pair of groups) and a few spills,
 * about 0x7f0 (GCC 12): 3 KiB after it, which covers multi_rows after it
 * too.
 */
CHAPOLY_DEFINE_SCRUB(scrub_stack_1k, 1024)
CHAPOLY_DEFINE_SCRUB(scrub_stack_3k, 3072)

void chacha20_multi_blocks_avx2(const chapoly_kernels *kt, uint8_t *out, const uint32_t *states, size_t n)
{
    size_t done = 0;

    if (n == 0)
        return;
    if (n >= 5)
        done = multi_cols(out, states, n, kt->shapes.chacha_pairs_min != 0);
    if (done < n)
        multi_rows(out + 64 * done, states + 16 * done, n - done);
    if (done != 0) /* public: n */
        scrub_stack_3k();
    else
        scrub_stack_1k();
}

/* ---- poly1305_multi_blocks in front of poly1305_blocks_avx2 ---- */

#include "batch_poly.h"

void poly1305_multi_blocks_avx2(const chapoly_kernels *kt, poly1305_state *const st[], const uint8_t *const in[],
                                const size_t len[], size_t n)
{
    multi_poly(kt, st, in, len, n, poly1305_blocks_avx2);
}
