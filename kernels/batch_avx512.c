/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chacha20_multi_blocks for the AVX-512 levels: n independent blocks, each
 * with its own input state (key, counter, nonce), for the batched AEAD
 * (core/aead_batch.c). Shapes, by what is left of n (public):
 *   5..16 blocks -> one 16-lane column batch: the sixteen input states are
 *                   loaded as rows and transposed into the column layout
 *                   (a 16 x 16 word transpose is its own inverse, so the
 *                   transpose that turns the column state back into blocks
 *                   serves both ways); absent lanes are zero states whose
 *                   blocks are never stored;
 *   1..4 blocks  -> one row set (one block per 128-bit lane): the states are
 *                   transposed 4 x 4 by 128-bit lanes into rows.
 * The feed-forward adds the input states re-read from memory after the
 * rounds, so they are not kept live across them. Masked loads and stores
 * (masks from n, which is public) never touch absent states or blocks.
 * The round state lives in the 32 zmm registers (no spill to scrub);
 * zmm16-31 are zeroed before returning.
 */
#include "chacha20_zmm.h"

/* State (or block) j of the batch if j < n, else zeros. */
#define ROW_LOAD(j) _mm512_maskz_loadu_epi32((j) < n ? 0xffff : 0, states + 16 * (j))
#define ROW_STORE(j, v)                                                         \
    do {                                                                        \
        if ((j) < n)                                                            \
            _mm512_storeu_si512(out + 64 * (j), ADD16(v, _mm512_loadu_si512(states + 16 * (j)))); \
    } while (0)

static void cols16(uint8_t *out, const uint32_t *states, size_t n)
{
    __m512i x0 = ROW_LOAD(0), x1 = ROW_LOAD(1), x2 = ROW_LOAD(2), x3 = ROW_LOAD(3);
    __m512i x4 = ROW_LOAD(4), x5 = ROW_LOAD(5), x6 = ROW_LOAD(6), x7 = ROW_LOAD(7);
    __m512i x8 = ROW_LOAD(8), x9 = ROW_LOAD(9), x10 = ROW_LOAD(10), x11 = ROW_LOAD(11);
    __m512i x12 = ROW_LOAD(12), x13 = ROW_LOAD(13), x14 = ROW_LOAD(14), x15 = ROW_LOAD(15);

    COLS_TRANSPOSE_ZMM(); /* rows -> columns: xi = word i of the sixteen states */
    for (int i = 0; i < 10; i++)
        DROUND_COLS_ZMM();
    COLS_TRANSPOSE_ZMM(); /* columns -> blocks: xj = block j */
    OPAQUE_PTR(states);   /* the feed-forward re-reads the states */
    ROW_STORE(0, x0);
    ROW_STORE(1, x1);
    ROW_STORE(2, x2);
    ROW_STORE(3, x3);
    ROW_STORE(4, x4);
    ROW_STORE(5, x5);
    ROW_STORE(6, x6);
    ROW_STORE(7, x7);
    ROW_STORE(8, x8);
    ROW_STORE(9, x9);
    ROW_STORE(10, x10);
    ROW_STORE(11, x11);
    ROW_STORE(12, x12);
    ROW_STORE(13, x13);
    ROW_STORE(14, x14);
    ROW_STORE(15, x15);
}

static void rows4(uint8_t *out, const uint32_t *states, size_t n)
{
    __m512i a = ROW_LOAD(0), b = ROW_LOAD(1), c = ROW_LOAD(2), d = ROW_LOAD(3);

    transpose_lanes_zmm(&a, &b, &c, &d); /* blocks -> rows: a = row 0 of blocks 0..3 */
    for (int i = 0; i < 10; i++)
        DROUND_ROWS_ZMM(a, b, c, d);
    transpose_lanes_zmm(&a, &b, &c, &d); /* rows -> blocks */
    OPAQUE_PTR(states);
    ROW_STORE(0, a);
    ROW_STORE(1, b);
    ROW_STORE(2, c);
    ROW_STORE(3, d);
}

void chacha20_multi_blocks_avx512(const chapoly_kernels *kt, uint8_t *out, const uint32_t *states, size_t n)
{
    (void)kt;
    while (n > 4) {
        size_t m = n < 16 ? n : 16;

        cols16(out, states, m);
        out += 64 * m;
        states += 16 * m;
        n -= m;
    }
    if (n > 0)
        rows4(out, states, n);
    zero_zmm16_31();
}
