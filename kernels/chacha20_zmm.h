/* SPDX-License-Identifier: Apache-2.0 */
/*
 * 16-lane (zmm) ChaCha20 building blocks, shared by chacha20_avx512.c and
 * the stitched AEAD kernel (aead_avx512ifma.c). Column layout: word i of
 * sixteen blocks in register xi; row layout: one block per 128-bit lane.
 */
#ifndef CHAPOLY_CHACHA20_ZMM_H
#define CHAPOLY_CHACHA20_ZMM_H

#include "simd_zmm.h"
#include "chacha20_ymm.h"

#define ADD16(a, b) _mm512_add_epi32(a, b)
#define XOR16(a, b) _mm512_xor_si512(a, b)
#define ROL16(a, n) _mm512_rol_epi32(a, n)
#define BCAST16(w) _mm512_set1_epi32((int)(w))

/* One quarter round on whole registers (column or row layout alike). */
#define QR_ZMM(a, b, c, d)                                          \
    do {                                                            \
        a = ADD16(a, b); d = XOR16(d, a); d = ROL16(d, 16);         \
        c = ADD16(c, d); b = XOR16(b, c); b = ROL16(b, 12);         \
        a = ADD16(a, b); d = XOR16(d, a); d = ROL16(d, 8);          \
        c = ADD16(c, d); b = XOR16(b, c); b = ROL16(b, 7);          \
    } while (0)

/*
 * Row layout double round: rows b, c, d are rotated so the diagonals line
 * up as columns for the second quarter round, then rotated back.
 */
#define DROUND_ROWS_ZMM(a, b, c, d)                                 \
    do {                                                            \
        QR_ZMM(a, b, c, d);                                         \
        b = _mm512_shuffle_epi32(b, _MM_PERM_ADCB);                 \
        c = _mm512_shuffle_epi32(c, _MM_PERM_BADC);                 \
        d = _mm512_shuffle_epi32(d, _MM_PERM_CBAD);                 \
        QR_ZMM(a, b, c, d);                                         \
        b = _mm512_shuffle_epi32(b, _MM_PERM_CBAD);                 \
        c = _mm512_shuffle_epi32(c, _MM_PERM_BADC);                 \
        d = _mm512_shuffle_epi32(d, _MM_PERM_ADCB);                 \
    } while (0)

/*
 * Column layout double round on the sixteen registers p0..p15 in scope
 * (p a name prefix: x for one batch, x and y for two batches in flight).
 */
#define DROUND_COLS_ZMM_P(p)                                        \
    do {                                                            \
        QR_ZMM(p##0, p##4, p##8, p##12);                            \
        QR_ZMM(p##1, p##5, p##9, p##13);                            \
        QR_ZMM(p##2, p##6, p##10, p##14);                           \
        QR_ZMM(p##3, p##7, p##11, p##15);                           \
        QR_ZMM(p##0, p##5, p##10, p##15);                           \
        QR_ZMM(p##1, p##6, p##11, p##12);                           \
        QR_ZMM(p##2, p##7, p##8, p##13);                            \
        QR_ZMM(p##3, p##4, p##9, p##14);                            \
    } while (0)
#define DROUND_COLS_ZMM() DROUND_COLS_ZMM_P(x)

/*
 * Two column batches p and q in flight, their quarter rounds alternating:
 * the 32 registers hold both states exactly (every step works in place),
 * and each batch's dependency chains fill the latency of the other's.
 */
#define DROUND_COLS2_ZMM(p, q)                                      \
    do {                                                            \
        QR_ZMM(p##0, p##4, p##8, p##12);                            \
        QR_ZMM(q##0, q##4, q##8, q##12);                            \
        QR_ZMM(p##1, p##5, p##9, p##13);                            \
        QR_ZMM(q##1, q##5, q##9, q##13);                            \
        QR_ZMM(p##2, p##6, p##10, p##14);                           \
        QR_ZMM(q##2, q##6, q##10, q##14);                           \
        QR_ZMM(p##3, p##7, p##11, p##15);                           \
        QR_ZMM(q##3, q##7, q##11, q##15);                           \
        QR_ZMM(p##0, p##5, p##10, p##15);                           \
        QR_ZMM(q##0, q##5, q##10, q##15);                           \
        QR_ZMM(p##1, p##6, p##11, p##12);                           \
        QR_ZMM(q##1, q##6, q##11, q##12);                           \
        QR_ZMM(p##2, p##7, p##8, p##13);                            \
        QR_ZMM(q##2, q##7, q##8, q##13);                            \
        QR_ZMM(p##3, p##4, p##9, p##14);                            \
        QR_ZMM(q##3, q##4, q##9, q##14);                            \
    } while (0)

/*
 * Column state: word i of sixteen blocks in xi. 'key' must be a pointer
 * passed through OPAQUE_PTR so the broadcasts are loads, not kept values.
 */
#define COLS_INIT_ZMM_P(p, key, ctr, n1, n2, n3)                    \
    __m512i p##0 = BCAST16(SIGMA0), p##1 = BCAST16(SIGMA1);         \
    __m512i p##2 = BCAST16(SIGMA2), p##3 = BCAST16(SIGMA3);         \
    __m512i p##4 = BCAST16(key[0]), p##5 = BCAST16(key[1]);         \
    __m512i p##6 = BCAST16(key[2]), p##7 = BCAST16(key[3]);         \
    __m512i p##8 = BCAST16(key[4]), p##9 = BCAST16(key[5]);         \
    __m512i p##10 = BCAST16(key[6]), p##11 = BCAST16(key[7]);       \
    __m512i p##12 = (ctr), p##13 = BCAST16(n1);                     \
    __m512i p##14 = BCAST16(n2), p##15 = BCAST16(n3)
#define COLS_INIT_ZMM(key, ctr, n1, n2, n3) COLS_INIT_ZMM_P(x, key, ctr, n1, n2, n3)

/* Feed-forward from broadcasts (memory operands) rather than saved registers. */
#define COLS_FEED_ZMM_P(p, key, ctr, n1, n2, n3)                    \
    do {                                                            \
        p##0 = ADD16(p##0, BCAST16(SIGMA0));                        \
        p##1 = ADD16(p##1, BCAST16(SIGMA1));                        \
        p##2 = ADD16(p##2, BCAST16(SIGMA2));                        \
        p##3 = ADD16(p##3, BCAST16(SIGMA3));                        \
        p##4 = ADD16(p##4, BCAST16(key[0]));                        \
        p##5 = ADD16(p##5, BCAST16(key[1]));                        \
        p##6 = ADD16(p##6, BCAST16(key[2]));                        \
        p##7 = ADD16(p##7, BCAST16(key[3]));                        \
        p##8 = ADD16(p##8, BCAST16(key[4]));                        \
        p##9 = ADD16(p##9, BCAST16(key[5]));                        \
        p##10 = ADD16(p##10, BCAST16(key[6]));                      \
        p##11 = ADD16(p##11, BCAST16(key[7]));                      \
        p##12 = ADD16(p##12, (ctr));                                \
        p##13 = ADD16(p##13, BCAST16(n1));                          \
        p##14 = ADD16(p##14, BCAST16(n2));                          \
        p##15 = ADD16(p##15, BCAST16(n3));                          \
    } while (0)
#define COLS_FEED_ZMM(key, ctr, n1, n2, n3) COLS_FEED_ZMM_P(x, key, ctr, n1, n2, n3)

/*
 * 4x4 transpose of 128-bit lanes: on entry lane l of a/b/c/d holds row
 * 0/1/2/3 of block l; on exit a/b/c/d hold blocks 0/1/2/3 in byte order.
 */
CHAPOLY_INLINE void transpose_lanes_zmm(__m512i *a, __m512i *b, __m512i *c,
                                        __m512i *d)
{
    __m512i t0 = _mm512_shuffle_i32x4(*a, *b, 0x44); /* a0 a1 b0 b1 */
    __m512i t1 = _mm512_shuffle_i32x4(*c, *d, 0x44); /* c0 c1 d0 d1 */
    __m512i t2 = _mm512_shuffle_i32x4(*a, *b, 0xee); /* a2 a3 b2 b3 */
    __m512i t3 = _mm512_shuffle_i32x4(*c, *d, 0xee); /* c2 c3 d2 d3 */

    *a = _mm512_shuffle_i32x4(t0, t1, 0x88);
    *b = _mm512_shuffle_i32x4(t0, t1, 0xdd);
    *c = _mm512_shuffle_i32x4(t2, t3, 0x88);
    *d = _mm512_shuffle_i32x4(t2, t3, 0xdd);
}

/*
 * Column state -> block order. Stage 1 (per group of four words): lane l of
 * x(4g+k) becomes words 4g..4g+3 of block 4l+k. Stage 2 (lane transpose
 * across groups): register j becomes block j.
 */
#define UNPACK4_ZMM(a, b, c, d)                                     \
    do {                                                            \
        __m512i t0 = _mm512_unpacklo_epi32(a, b);                   \
        __m512i t1 = _mm512_unpackhi_epi32(a, b);                   \
        __m512i t2 = _mm512_unpacklo_epi32(c, d);                   \
        __m512i t3 = _mm512_unpackhi_epi32(c, d);                   \
        a = _mm512_unpacklo_epi64(t0, t2);                          \
        b = _mm512_unpackhi_epi64(t0, t2);                          \
        c = _mm512_unpacklo_epi64(t1, t3);                          \
        d = _mm512_unpackhi_epi64(t1, t3);                          \
    } while (0)
#define COLS_TRANSPOSE_ZMM_P(p)                                     \
    do {                                                            \
        UNPACK4_ZMM(p##0, p##1, p##2, p##3);                        \
        UNPACK4_ZMM(p##4, p##5, p##6, p##7);                        \
        UNPACK4_ZMM(p##8, p##9, p##10, p##11);                      \
        UNPACK4_ZMM(p##12, p##13, p##14, p##15);                    \
        transpose_lanes_zmm(&p##0, &p##4, &p##8, &p##12);           \
        transpose_lanes_zmm(&p##1, &p##5, &p##9, &p##13);           \
        transpose_lanes_zmm(&p##2, &p##6, &p##10, &p##14);          \
        transpose_lanes_zmm(&p##3, &p##7, &p##11, &p##15);          \
    } while (0)
#define COLS_TRANSPOSE_ZMM() COLS_TRANSPOSE_ZMM_P(x)

CHAPOLY_INLINE void xor_block_zmm(uint8_t *out, const uint8_t *in, __m512i ks)
{
    _mm512_storeu_si512(out, XOR16(_mm512_loadu_si512(in), ks));
}

/*
 * Block 'idx' of a batch that covers 'len' bytes from out/in: whole, partial
 * (byte mask: masked-off bytes are neither read nor written and cannot
 * fault) or absent. len is public.
 */
CHAPOLY_INLINE void xor_block_zmm_part(uint8_t *out, const uint8_t *in,
                                       __m512i ks, size_t idx, size_t len)
{
    size_t off = 64 * idx;

    if (len >= off + 64) {
        xor_block_zmm(out + off, in + off, ks);
    } else if (len > off) {
        xor_tail(out + off, in + off, _mm512_castsi512_si256(ks),
                 _mm512_extracti64x4_epi64(ks, 1), len - off);
    }
}

/*
 * Block 0 of a batch: XORed like the others, or, if key_block is not NULL,
 * its raw keystream stored to key_block (the AEAD's Poly1305 key block: out
 * and in then point 64 bytes before the text and block 0 is never read or
 * written through them).
 */
CHAPOLY_INLINE void xor_block0_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in,
                                   __m512i ks, size_t len)
{
    if (key_block != NULL)
        _mm512_storeu_si512(key_block, ks);
    else
        xor_block_zmm_part(out, in, ks, 0, len);
}

#define COLS_STORE_FULL_ZMM_P(p, key_block, out, in)                \
    do {                                                            \
        xor_block0_zmm(key_block, out, in, p##0, 1024);             \
        xor_block_zmm((out) + 1 * 64, (in) + 1 * 64, p##1);         \
        xor_block_zmm((out) + 2 * 64, (in) + 2 * 64, p##2);         \
        xor_block_zmm((out) + 3 * 64, (in) + 3 * 64, p##3);         \
        xor_block_zmm((out) + 4 * 64, (in) + 4 * 64, p##4);         \
        xor_block_zmm((out) + 5 * 64, (in) + 5 * 64, p##5);         \
        xor_block_zmm((out) + 6 * 64, (in) + 6 * 64, p##6);         \
        xor_block_zmm((out) + 7 * 64, (in) + 7 * 64, p##7);         \
        xor_block_zmm((out) + 8 * 64, (in) + 8 * 64, p##8);         \
        xor_block_zmm((out) + 9 * 64, (in) + 9 * 64, p##9);         \
        xor_block_zmm((out) + 10 * 64, (in) + 10 * 64, p##10);      \
        xor_block_zmm((out) + 11 * 64, (in) + 11 * 64, p##11);      \
        xor_block_zmm((out) + 12 * 64, (in) + 12 * 64, p##12);      \
        xor_block_zmm((out) + 13 * 64, (in) + 13 * 64, p##13);      \
        xor_block_zmm((out) + 14 * 64, (in) + 14 * 64, p##14);      \
        xor_block_zmm((out) + 15 * 64, (in) + 15 * 64, p##15);      \
    } while (0)
#define COLS_STORE_FULL_ZMM(key_block, out, in) COLS_STORE_FULL_ZMM_P(x, key_block, out, in)

/*
 * Row set: four blocks, one per 128-bit lane, counters ctr_nonce[0] + off +
 * 0..3.
 */
#define ROWS_CTR_ZMM(off)                                                      \
    _mm512_setr_epi32((off), 0, 0, 0, (off) + 1, 0, 0, 0, (off) + 2, 0, 0, 0, \
                      (off) + 3, 0, 0, 0)
CHAPOLY_INLINE __m512i rows_sigma_zmm(void)
{
    return _mm512_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3,
                             (int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3,
                             (int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3,
                             (int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
}
#define ROW_BCAST_ZMM(p) _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(p)))
/* Column counters: lane l = ctr_nonce[0] + l (32-bit adds: wraps mod 2^32). */
#define COLS_CTR_ZMM                                                           \
    _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

/*
 * Feed-forward, transpose and store of one row set covering 'len' bytes
 * (any value; blocks past len are skipped). The key rows are re-read through
 * the opaque pointer so they were never live across the rounds.
 */
#define ROWS_FINISH_ZMM(a, b, c, d, d0, key, key_block, out, in, len) \
    do {                                                            \
        a = ADD16(a, rows_sigma_zmm());                             \
        b = ADD16(b, ROW_BCAST_ZMM(key));                           \
        c = ADD16(c, ROW_BCAST_ZMM((key) + 4));                     \
        d = ADD16(d, d0);                                           \
        transpose_lanes_zmm(&a, &b, &c, &d);                        \
        xor_block0_zmm(key_block, out, in, a, len);                 \
        xor_block_zmm_part(out, in, b, 1, len);                     \
        xor_block_zmm_part(out, in, c, 2, len);                     \
        xor_block_zmm_part(out, in, d, 3, len);                     \
    } while (0)

#endif
