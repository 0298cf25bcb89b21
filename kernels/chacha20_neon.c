/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 for AArch64 Advanced SIMD (NEON), the "neon" level.
 *
 * Two layouts, both plain intrinsics:
 *  - vertical, 4 blocks: q-register i holds state word i of four
 *    consecutive blocks (lane j = block j), so the column and diagonal
 *    rounds are the same quarter-rounds on other registers: no lane
 *    shuffles inside the rounds. A transpose of each 4x4 group of words
 *    after the feed-forward gives the keystream in byte order. From 193
 *    bytes on (4 blocks cost about as many instructions as three rows).
 *  - rows, 1 or 2 blocks: register r holds row r of one block (words
 *    4r..4r+3); the diagonal round rotates rows 1..3 with ext and back.
 *    Fewer instructions than a vertical batch for one to three blocks:
 *    short messages and the last blocks.
 *  - wide, 5 blocks, from the table's chacha_wide_min bytes (0: never): a
 *    vertical batch and a fifth block in general registers in one loop
 *    body, so the integer pipes work beside the two vector pipes of a big
 *    core. It executes more instructions per block for more blocks in
 *    flight (counts: docs/performance.md); which is faster depends on the
 *    core, and no AArch64 core has timed it yet (level_neon.c).
 * Rotations: by 16 with rev32 (16-bit lanes), by 8 with tbl, by 12 and 7
 * with shl + sri (shift and insert). The vertical rounds need no lane
 * shuffle; the row rounds need ext (three before and three after each
 * diagonal round), which is why rows serve only one or two blocks.
 *
 * The block counter wraps modulo 2^32 (lanes add with wraparound), as the
 * portable level. The rounds run in registers (32 q registers, the
 * vertical batch needs about 20); the key is re-read from the caller's
 * words for the feed-forward (OPAQUE_PTR), so no key word is kept across
 * the rounds. test_secrets scans the dead stack after every call.
 */
#include <arm_neon.h>
#include "kernels_impl.h"

static const uint8_t rot8_index[16] = { 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14 };
static const uint32_t lane_index[4] = { 0, 1, 2, 3 };
static const uint32_t sigma[4] = { SIGMA0, SIGMA1, SIGMA2, SIGMA3 };

#define ROT16(x) vreinterpretq_u32_u16(vrev32q_u16(vreinterpretq_u16_u32(x)))
#define ROT8(x) vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(x), r8))
#define ROTL(x, n) vsriq_n_u32(vshlq_n_u32((x), (n)), (x), 32 - (n))

/* Four quarter-rounds side by side, step by step (independent chains). */
#define QR4(a0, b0, c0, d0, a1, b1, c1, d1, a2, b2, c2, d2, a3, b3, c3, d3) \
    do {                                                                   \
        a0 = vaddq_u32(a0, b0); a1 = vaddq_u32(a1, b1);                    \
        a2 = vaddq_u32(a2, b2); a3 = vaddq_u32(a3, b3);                    \
        d0 = veorq_u32(d0, a0); d1 = veorq_u32(d1, a1);                    \
        d2 = veorq_u32(d2, a2); d3 = veorq_u32(d3, a3);                    \
        d0 = ROT16(d0); d1 = ROT16(d1); d2 = ROT16(d2); d3 = ROT16(d3);    \
        c0 = vaddq_u32(c0, d0); c1 = vaddq_u32(c1, d1);                    \
        c2 = vaddq_u32(c2, d2); c3 = vaddq_u32(c3, d3);                    \
        b0 = veorq_u32(b0, c0); b1 = veorq_u32(b1, c1);                    \
        b2 = veorq_u32(b2, c2); b3 = veorq_u32(b3, c3);                    \
        b0 = ROTL(b0, 12); b1 = ROTL(b1, 12);                              \
        b2 = ROTL(b2, 12); b3 = ROTL(b3, 12);                              \
        a0 = vaddq_u32(a0, b0); a1 = vaddq_u32(a1, b1);                    \
        a2 = vaddq_u32(a2, b2); a3 = vaddq_u32(a3, b3);                    \
        d0 = veorq_u32(d0, a0); d1 = veorq_u32(d1, a1);                    \
        d2 = veorq_u32(d2, a2); d3 = veorq_u32(d3, a3);                    \
        d0 = ROT8(d0); d1 = ROT8(d1); d2 = ROT8(d2); d3 = ROT8(d3);        \
        c0 = vaddq_u32(c0, d0); c1 = vaddq_u32(c1, d1);                    \
        c2 = vaddq_u32(c2, d2); c3 = vaddq_u32(c3, d3);                    \
        b0 = veorq_u32(b0, c0); b1 = veorq_u32(b1, c1);                    \
        b2 = veorq_u32(b2, c2); b3 = veorq_u32(b3, c3);                    \
        b0 = ROTL(b0, 7); b1 = ROTL(b1, 7);                                \
        b2 = ROTL(b2, 7); b3 = ROTL(b3, 7);                                \
    } while (0)

/* One row-layout quarter-round set (the four columns of one block). */
#define QR1(a, b, c, d)                                       \
    do {                                                      \
        a = vaddq_u32(a, b); d = veorq_u32(d, a); d = ROT16(d); \
        c = vaddq_u32(c, d); b = veorq_u32(b, c); b = ROTL(b, 12); \
        a = vaddq_u32(a, b); d = veorq_u32(d, a); d = ROT8(d);  \
        c = vaddq_u32(c, d); b = veorq_u32(b, c); b = ROTL(b, 7);  \
    } while (0)

/* 64 bytes: out = in ^ (k0 k1 k2 k3), 16 bytes each. */
CHAPOLY_INLINE void xor64(uint8_t *out, const uint8_t *in, uint32x4_t k0, uint32x4_t k1,
                          uint32x4_t k2, uint32x4_t k3)
{
    uint8x16_t m0 = vld1q_u8(in), m1 = vld1q_u8(in + 16), m2 = vld1q_u8(in + 32),
               m3 = vld1q_u8(in + 48);

    vst1q_u8(out, veorq_u8(m0, vreinterpretq_u8_u32(k0)));
    vst1q_u8(out + 16, veorq_u8(m1, vreinterpretq_u8_u32(k1)));
    vst1q_u8(out + 32, veorq_u8(m2, vreinterpretq_u8_u32(k2)));
    vst1q_u8(out + 48, veorq_u8(m3, vreinterpretq_u8_u32(k3)));
}

/* len (< 64) bytes: out = in ^ the keystream block (k0 k1 k2 k3). */
CHAPOLY_INLINE void xor_part(uint8_t *out, const uint8_t *in, size_t len, uint32x4_t k0,
                             uint32x4_t k1, uint32x4_t k2, uint32x4_t k3)
{
    _Alignas(16) uint8_t ks[64];

    vst1q_u8(ks, vreinterpretq_u8_u32(k0));
    vst1q_u8(ks + 16, vreinterpretq_u8_u32(k1));
    vst1q_u8(ks + 32, vreinterpretq_u8_u32(k2));
    vst1q_u8(ks + 48, vreinterpretq_u8_u32(k3));
    size_t i = 0;
    for (; i + 16 <= len; i += 16)
        vst1q_u8(out + i, veorq_u8(vld1q_u8(in + i), vld1q_u8(ks + i)));
    for (; i < len; i++)
        out[i] = in[i] ^ ks[i];
    /* the stores above may not be dropped: the frame is scrubbed too */
    vst1q_u8(ks, vdupq_n_u8(0));
    vst1q_u8(ks + 16, vdupq_n_u8(0));
    vst1q_u8(ks + 32, vdupq_n_u8(0));
    vst1q_u8(ks + 48, vdupq_n_u8(0));
    __asm__ volatile("" : : "r"(ks) : "memory");
}

/*
 * One or two blocks in the row layout, counters ctr and ctr + 1: len bytes
 * (1..128; the second block only if len > 64).
 */
static CHAPOLY_NOINLINE void rows_xor(uint8_t *out, const uint8_t *in, size_t len,
                                      const uint32_t key[8], const uint32_t ctr_nonce[4],
                                      uint32_t ctr)
{
    const uint8x16_t r8 = vld1q_u8(rot8_index);
    const uint32x4_t s = vld1q_u32(sigma), k1 = vld1q_u32(key), k2 = vld1q_u32(key + 4);
    const uint32x4_t n = vsetq_lane_u32(ctr, vld1q_u32(ctr_nonce), 0);
    uint32x4_t a0 = s, b0 = k1, c0 = k2, d0 = n;

    if (len > 64) { /* two blocks, interleaved */
        const uint32x4_t n1 = vsetq_lane_u32(ctr + 1, n, 0);
        uint32x4_t a1 = s, b1 = k1, c1 = k2, d1 = n1;

        for (int i = 0; i < 10; i++) {
            QR1(a0, b0, c0, d0);
            QR1(a1, b1, c1, d1);
            b0 = vextq_u32(b0, b0, 1); c0 = vextq_u32(c0, c0, 2); d0 = vextq_u32(d0, d0, 3);
            b1 = vextq_u32(b1, b1, 1); c1 = vextq_u32(c1, c1, 2); d1 = vextq_u32(d1, d1, 3);
            QR1(a0, b0, c0, d0);
            QR1(a1, b1, c1, d1);
            b0 = vextq_u32(b0, b0, 3); c0 = vextq_u32(c0, c0, 2); d0 = vextq_u32(d0, d0, 1);
            b1 = vextq_u32(b1, b1, 3); c1 = vextq_u32(c1, c1, 2); d1 = vextq_u32(d1, d1, 1);
        }
        xor64(out, in, vaddq_u32(a0, s), vaddq_u32(b0, k1), vaddq_u32(c0, k2),
              vaddq_u32(d0, n));
        a1 = vaddq_u32(a1, s);
        b1 = vaddq_u32(b1, k1);
        c1 = vaddq_u32(c1, k2);
        d1 = vaddq_u32(d1, n1);
        if (len == 128)
            xor64(out + 64, in + 64, a1, b1, c1, d1);
        else
            xor_part(out + 64, in + 64, len - 64, a1, b1, c1, d1);
        return;
    }
    for (int i = 0; i < 10; i++) {
        QR1(a0, b0, c0, d0);
        b0 = vextq_u32(b0, b0, 1); c0 = vextq_u32(c0, c0, 2); d0 = vextq_u32(d0, d0, 3);
        QR1(a0, b0, c0, d0);
        b0 = vextq_u32(b0, b0, 3); c0 = vextq_u32(c0, c0, 2); d0 = vextq_u32(d0, d0, 1);
    }
    a0 = vaddq_u32(a0, s);
    b0 = vaddq_u32(b0, k1);
    c0 = vaddq_u32(c0, k2);
    d0 = vaddq_u32(d0, n);
    if (len == 64)
        xor64(out, in, a0, b0, c0, d0);
    else
        xor_part(out, in, len, a0, b0, c0, d0);
}

/* The raw block at counter ctr_nonce[0] to key_block (row layout). */
static CHAPOLY_NOINLINE void row_block(uint8_t key_block[64], const uint32_t key[8],
                                       const uint32_t ctr_nonce[4])
{
    const uint8x16_t r8 = vld1q_u8(rot8_index);
    const uint32x4_t s = vld1q_u32(sigma);
    uint32x4_t a = s, b = vld1q_u32(key), c = vld1q_u32(key + 4), d = vld1q_u32(ctr_nonce);

    for (int i = 0; i < 10; i++) {
        QR1(a, b, c, d);
        b = vextq_u32(b, b, 1); c = vextq_u32(c, c, 2); d = vextq_u32(d, d, 3);
        QR1(a, b, c, d);
        b = vextq_u32(b, b, 3); c = vextq_u32(c, c, 2); d = vextq_u32(d, d, 1);
    }
    vst1q_u8(key_block, vreinterpretq_u8_u32(vaddq_u32(a, s)));
    vst1q_u8(key_block + 16, vreinterpretq_u8_u32(vaddq_u32(b, vld1q_u32(key))));
    vst1q_u8(key_block + 32, vreinterpretq_u8_u32(vaddq_u32(c, vld1q_u32(key + 4))));
    vst1q_u8(key_block + 48, vreinterpretq_u8_u32(vaddq_u32(d, vld1q_u32(ctr_nonce))));
}

/* Words 4g..4g+3 of four blocks (lane j = block j) -> 16 bytes of each block. */
#define TRANSPOSE(w0, w1, w2, w3, o0, o1, o2, o3)                                      \
    do {                                                                               \
        uint64x2_t t0_ = vreinterpretq_u64_u32(vtrn1q_u32(w0, w1));                    \
        uint64x2_t t1_ = vreinterpretq_u64_u32(vtrn2q_u32(w0, w1));                    \
        uint64x2_t t2_ = vreinterpretq_u64_u32(vtrn1q_u32(w2, w3));                    \
        uint64x2_t t3_ = vreinterpretq_u64_u32(vtrn2q_u32(w2, w3));                    \
        o0 = vreinterpretq_u32_u64(vtrn1q_u64(t0_, t2_));                              \
        o1 = vreinterpretq_u32_u64(vtrn1q_u64(t1_, t3_));                              \
        o2 = vreinterpretq_u32_u64(vtrn2q_u64(t0_, t2_));                              \
        o3 = vreinterpretq_u32_u64(vtrn2q_u64(t1_, t3_));                              \
    } while (0)

#define DUPK(i) vdupq_n_u32(key[i])

/*
 * The four blocks of a vertical batch (x0..x15, lane j = counter ctr + j):
 * the input state added back, then each block's 64 bytes gathered into
 * b<j>0..b<j>3 for xor64. Shared by vertical_xor and wide_xor.
 */
#define VERTICAL_FEED_FORWARD()                                                        \
    do {                                                                               \
        x0 = vaddq_u32(x0, vdupq_n_u32(SIGMA0));                                       \
        x1 = vaddq_u32(x1, vdupq_n_u32(SIGMA1));                                       \
        x2 = vaddq_u32(x2, vdupq_n_u32(SIGMA2));                                       \
        x3 = vaddq_u32(x3, vdupq_n_u32(SIGMA3));                                       \
        x4 = vaddq_u32(x4, DUPK(0));                                                   \
        x5 = vaddq_u32(x5, DUPK(1));                                                   \
        x6 = vaddq_u32(x6, DUPK(2));                                                   \
        x7 = vaddq_u32(x7, DUPK(3));                                                   \
        x8 = vaddq_u32(x8, DUPK(4));                                                   \
        x9 = vaddq_u32(x9, DUPK(5));                                                   \
        x10 = vaddq_u32(x10, DUPK(6));                                                 \
        x11 = vaddq_u32(x11, DUPK(7));                                                 \
        x12 = vaddq_u32(x12, vaddq_u32(vdupq_n_u32(ctr), lanes));                      \
        x13 = vaddq_u32(x13, vdupq_n_u32(ctr_nonce[1]));                               \
        x14 = vaddq_u32(x14, vdupq_n_u32(ctr_nonce[2]));                               \
        x15 = vaddq_u32(x15, vdupq_n_u32(ctr_nonce[3]));                               \
    } while (0)
#define VERTICAL_TRANSPOSE()                                                           \
    do {                                                                               \
        TRANSPOSE(x0, x1, x2, x3, b00, b10, b20, b30);                                 \
        TRANSPOSE(x4, x5, x6, x7, b01, b11, b21, b31);                                 \
        TRANSPOSE(x8, x9, x10, x11, b02, b12, b22, b32);                               \
        TRANSPOSE(x12, x13, x14, x15, b03, b13, b23, b33);                             \
    } while (0)

/*
 * Vertical batches of four blocks from counter ctr while len >= 256, then a
 * last batch of 193..255 bytes if len is in that range. Returns the bytes
 * left (0..192) for the row layout; *ctrp advances past the blocks done.
 */
static CHAPOLY_NOINLINE size_t vertical_xor(uint8_t *out, const uint8_t *in, size_t len,
                                            const uint32_t *key, const uint32_t ctr_nonce[4],
                                            uint32_t *ctrp)
{
    const uint8x16_t r8 = vld1q_u8(rot8_index);
    const uint32x4_t lanes = vld1q_u32(lane_index);
    uint32_t ctr = *ctrp;

    while (len > 192) {
        uint32x4_t x0 = vdupq_n_u32(SIGMA0), x1 = vdupq_n_u32(SIGMA1),
                   x2 = vdupq_n_u32(SIGMA2), x3 = vdupq_n_u32(SIGMA3);
        uint32x4_t x4 = DUPK(0), x5 = DUPK(1), x6 = DUPK(2), x7 = DUPK(3);
        uint32x4_t x8 = DUPK(4), x9 = DUPK(5), x10 = DUPK(6), x11 = DUPK(7);
        uint32x4_t x12 = vaddq_u32(vdupq_n_u32(ctr), lanes);
        uint32x4_t x13 = vdupq_n_u32(ctr_nonce[1]), x14 = vdupq_n_u32(ctr_nonce[2]),
                   x15 = vdupq_n_u32(ctr_nonce[3]);

        OPAQUE_PTR(key);
        for (int i = 0; i < 10; i++) {
            QR4(x0, x4, x8, x12, x1, x5, x9, x13, x2, x6, x10, x14, x3, x7, x11, x15);
            QR4(x0, x5, x10, x15, x1, x6, x11, x12, x2, x7, x8, x13, x3, x4, x9, x14);
        }
        OPAQUE_PTR(key);
        VERTICAL_FEED_FORWARD();
        uint32x4_t b00, b01, b02, b03, b10, b11, b12, b13;
        uint32x4_t b20, b21, b22, b23, b30, b31, b32, b33;
        VERTICAL_TRANSPOSE();
        xor64(out, in, b00, b01, b02, b03);
        xor64(out + 64, in + 64, b10, b11, b12, b13);
        xor64(out + 128, in + 128, b20, b21, b22, b23);
        if (len >= 256) {
            xor64(out + 192, in + 192, b30, b31, b32, b33);
        } else {
            xor_part(out + 192, in + 192, len - 192, b30, b31, b32, b33);
            *ctrp = ctr + 4;
            return 0;
        }
        ctr += 4;
        len -= 256;
        in += 256;
        out += 256;
    }
    *ctrp = ctr;
    return len;
}

/* One scalar quarter-round (the fifth block of wide_xor, general registers). */
#define SQR CHAPOLY_QR32

/*
 * Long messages: five blocks per step, 320 bytes, while len >= 320: four
 * in the vertical layout and the fifth in sixteen general registers, in
 * the same loop body, so the integer pipes work beside the vector ones.
 * Returns the bytes left; *ctrp advances past the blocks done.
 */
static CHAPOLY_NOINLINE size_t wide_xor(uint8_t *out, const uint8_t *in, size_t len,
                                        const uint32_t *key, const uint32_t ctr_nonce[4],
                                        uint32_t *ctrp)
{
    const uint8x16_t r8 = vld1q_u8(rot8_index);
    const uint32x4_t lanes = vld1q_u32(lane_index);
    uint32_t ctr = *ctrp;

    while (len >= 320) {
        uint32x4_t x0 = vdupq_n_u32(SIGMA0), x1 = vdupq_n_u32(SIGMA1),
                   x2 = vdupq_n_u32(SIGMA2), x3 = vdupq_n_u32(SIGMA3);
        uint32x4_t x4 = DUPK(0), x5 = DUPK(1), x6 = DUPK(2), x7 = DUPK(3);
        uint32x4_t x8 = DUPK(4), x9 = DUPK(5), x10 = DUPK(6), x11 = DUPK(7);
        uint32x4_t x12 = vaddq_u32(vdupq_n_u32(ctr), lanes);
        uint32x4_t x13 = vdupq_n_u32(ctr_nonce[1]), x14 = vdupq_n_u32(ctr_nonce[2]),
                   x15 = vdupq_n_u32(ctr_nonce[3]);
        uint32_t y0 = SIGMA0, y1 = SIGMA1, y2 = SIGMA2, y3 = SIGMA3;
        uint32_t y4 = key[0], y5 = key[1], y6 = key[2], y7 = key[3];
        uint32_t y8 = key[4], y9 = key[5], y10 = key[6], y11 = key[7];
        uint32_t y12 = ctr + 4, y13 = ctr_nonce[1], y14 = ctr_nonce[2], y15 = ctr_nonce[3];

        OPAQUE_PTR(key);
        for (int i = 0; i < 10; i++) {
            QR4(x0, x4, x8, x12, x1, x5, x9, x13, x2, x6, x10, x14, x3, x7, x11, x15);
            SQR(y0, y4, y8, y12);
            SQR(y1, y5, y9, y13);
            SQR(y2, y6, y10, y14);
            SQR(y3, y7, y11, y15);
            QR4(x0, x5, x10, x15, x1, x6, x11, x12, x2, x7, x8, x13, x3, x4, x9, x14);
            SQR(y0, y5, y10, y15);
            SQR(y1, y6, y11, y12);
            SQR(y2, y7, y8, y13);
            SQR(y3, y4, y9, y14);
        }
        OPAQUE_PTR(key);
        VERTICAL_FEED_FORWARD();
        uint32x4_t b00, b01, b02, b03, b10, b11, b12, b13;
        uint32x4_t b20, b21, b22, b23, b30, b31, b32, b33;
        VERTICAL_TRANSPOSE();
        xor64(out, in, b00, b01, b02, b03);
        xor64(out + 64, in + 64, b10, b11, b12, b13);
        xor64(out + 128, in + 128, b20, b21, b22, b23);
        xor64(out + 192, in + 192, b30, b31, b32, b33);

        /* the fifth block: words -> lanes of four vectors, one xor64 */
        y0 += SIGMA0; y1 += SIGMA1; y2 += SIGMA2; y3 += SIGMA3;
        y4 += key[0]; y5 += key[1]; y6 += key[2]; y7 += key[3];
        y8 += key[4]; y9 += key[5]; y10 += key[6]; y11 += key[7];
        y12 += ctr + 4; y13 += ctr_nonce[1]; y14 += ctr_nonce[2]; y15 += ctr_nonce[3];
        uint64x2_t q0 = vcombine_u64(vcreate_u64(y0 | (uint64_t)y1 << 32),
                                     vcreate_u64(y2 | (uint64_t)y3 << 32));
        uint64x2_t q1 = vcombine_u64(vcreate_u64(y4 | (uint64_t)y5 << 32),
                                     vcreate_u64(y6 | (uint64_t)y7 << 32));
        uint64x2_t q2 = vcombine_u64(vcreate_u64(y8 | (uint64_t)y9 << 32),
                                     vcreate_u64(y10 | (uint64_t)y11 << 32));
        uint64x2_t q3 = vcombine_u64(vcreate_u64(y12 | (uint64_t)y13 << 32),
                                     vcreate_u64(y14 | (uint64_t)y15 << 32));
        xor64(out + 256, in + 256, vreinterpretq_u32_u64(q0), vreinterpretq_u32_u64(q1),
              vreinterpretq_u32_u64(q2), vreinterpretq_u32_u64(q3));
        ctr += 5;
        len -= 320;
        in += 320;
        out += 320;
    }
    *ctrp = ctr;
    return len;
}

/*
 * Dead stack: optimised, the compiler keeps the rounds in registers but
 * may spill a key broadcast around the feed-forward of vertical_xor (GCC
 * at -O2: a 144-byte frame of d8-d15, the caller's values, one spill slot
 * and the partial-block keystream, which xor_part zeroes itself). Each
 * exported function scrubs once per call; test_secrets fails without it.
 */
#ifdef __OPTIMIZE__
#define SCRUB_BYTES 256
#else
#define SCRUB_BYTES 2048
#endif
CHAPOLY_DEFINE_SCRUB(scrub_stack, SCRUB_BYTES)

void chacha20_xor_neon(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                       const uint32_t ctr_nonce[4])
{
    uint32_t ctr = ctr_nonce[0];

    if (len == 0)
        return;
    if (kt->shapes.chacha_wide_min != 0 && len >= kt->shapes.chacha_wide_min) {
        size_t done = len;

        len = wide_xor(out, in, len, key, ctr_nonce, &ctr);
        done -= len;
        out += done;
        in += done;
    }
    if (len > 192) {
        size_t done = len;

        len = vertical_xor(out, in, len, key, ctr_nonce, &ctr);
        done -= len;
        out += done;
        in += done;
    }
    if (len > 0) {
        while (len > 128) {
            rows_xor(out, in, 128, key, ctr_nonce, ctr);
            out += 128;
            in += 128;
            len -= 128;
            ctr += 2;
        }
        rows_xor(out, in, len, key, ctr_nonce, ctr);
    }
    scrub_stack();
}

void chacha20_keyblock_xor_neon(const chapoly_kernels *kt, uint8_t key_block[64], uint8_t *out, const uint8_t *in,
                                size_t len, const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    uint32_t next[4] = { ctr_nonce[0] + 1, ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    row_block(key_block, key, ctr_nonce);
    chacha20_xor_neon(kt, out, in, len, key, next);
}
