/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Poly1305 for the "neon" level (AArch64).
 *
 * Short inputs: scalar radix 2^64, h = h0 + 2^64 h1 + 2^128 h2, with the
 * 64x64 -> 128 products of unsigned __int128 (mul + umulh on AArch64).
 * Clamped r = r0 + 2^64 r1 with 4 | r1, so s1 = r1 + r1 / 4 is exact and
 * 2^128 r1 == s1 (mod 2^130 - 5); h2 <= 4 between blocks.
 *
 * Long inputs: radix 2^26 in two 64-bit lanes (umull/umlal by element).
 * Each step takes four blocks m0..m3 (one ld4 splits them into limbs, lane
 * j = block j of a 4 x 32-bit vector) and computes, per lane j = 0, 1,
 *   H_j <- H_j r^4 + m_j r^2 + m_(j+2),
 * one carry chain per 64 bytes. After the last step the hash is
 * H_0 r^2 + H_1 r (one vector multiply with per-lane powers, then the lanes
 * summed into radix 2^64). The lanes stay pending across calls that end on
 * a whole step; a call that ends with 1..3 more blocks (or a final) folds
 * them into the scalar hash first. A scalar hash enters the lanes added to
 * block 0.
 *
 * Limbs h = sum h_i 2^(26 i); 2^130 == 5, so wrapped terms use s_i = 5 r_i.
 * Bounds: message limbs < 2^26 (limb 4 < 2^25), carried hash limbs below
 * 2^26 + 2^11, the scalar hash entering at most 2^27 in limb 4, key limbs
 * r_i < 2^26.4 and s_i < 2^28.8: ten products plus a message limb stay
 * below 2^62 in each 64-bit lane.
 *
 * priv layout (64-bit words):
 *   W_H     h0 h1 h2 (radix 2^64): the hash when no lanes are pending
 *   W_KEY   r0 r1 s1
 *   W_PAD   s0 s1 (the pad added at final)
 *   W_STATE ST_* bits
 *   W_LANES 5 limbs x 2 lanes (64-bit), the pending lanes
 *   W_R4, W_R2  r^4, r^2 as 32-bit words r0 r1 r2 r3 | r4 s1 s2 s3 | s4 0 0 0
 *   W_RF    the final powers, 9 pairs of 32-bit words (r^2 lane 0, r lane 1)
 *           in the order r0 r1 r2 r3 r4 s1 s2 s3 s4
 */
#include <arm_neon.h>
#include "kernels_impl.h"

typedef unsigned __int128 u128;

#define W_H 0
#define W_KEY 3
#define W_PAD 6
#define W_STATE 8
#define W_HEAD 16  /* words wiped at final when no vector state exists */
#define W_LANES 16
#define W_R4 32
#define W_R2 38
#define W_RF 44
#define W_END 56

#define ST_LANES 1u /* lanes pending */
#define ST_POW 2u   /* W_R4.. filled */

_Static_assert(W_END <= POLY1305_PRIV_WORDS, "NEON state must fit priv");
_Static_assert(W_R4 % 2 == 0 && W_R2 % 2 == 0 && W_LANES % 2 == 0,
               "16-byte loads of the tables");

/*
 * The vector path from the table's "poly-vector" blocks on a state without
 * lanes (the powers, entry and exit must be won back by the blocks of the
 * scalar loop they replace; the level's value is set by dynamic instruction
 * counts, scripts/arm64-insn-count.sh), and from 4 blocks once lanes are
 * pending.
 * A vector step takes four blocks: chapoly_kernels_build clamps
 * poly-vector to at least 4, so any value gives the same hash.
 */

#define M26 0x3ffffffu

/*
 * Frames below the exported functions: neon_powers' 256 bytes (plus the
 * caller's 64); optimised, the scalar loop, the vector steps and the lane
 * fold keep everything in registers (GCC at -O2), so only the powers are
 * followed by a scrub. Unoptimised builds keep every local in the frame:
 * there every exported call scrubs.
 */
#ifdef __OPTIMIZE__
#define SCRUB_BYTES 384
#define SCRUB_UNOPTIMISED() ((void)0)
#else
#define SCRUB_BYTES 1024
#define SCRUB_UNOPTIMISED() scrub_stack()
#endif
CHAPOLY_DEFINE_SCRUB(scrub_stack, SCRUB_BYTES)

typedef struct {
    uint64_t h0, h1, h2;
} sc_hash;

/*
 * h * r mod p, partially reduced: h2 <= 6 in (h + one block), h2 <= 4 out.
 * Every 128-bit sum stays below 2^127 (r0, r1 < 2^60).
 */
CHAPOLY_INLINE sc_hash sc_mul_r(sc_hash h, uint64_t r0, uint64_t r1, uint64_t s1)
{
    u128 d0 = (u128)h.h0 * r0 + (u128)h.h1 * s1;
    u128 d1 = (u128)h.h0 * r1 + (u128)h.h1 * r0;
    uint64_t d2 = h.h2 * r0;

    d1 += h.h2 * s1;
    d1 += (uint64_t)(d0 >> 64);
    d2 += (uint64_t)(d1 >> 64);
    h.h0 = (uint64_t)d0;
    h.h1 = (uint64_t)d1;
    /* bits >= 130 times 5 back in, unconditionally */
    uint64_t c = (d2 & ~(uint64_t)3) + (d2 >> 2);
    h.h2 = d2 & 3;
    h.h0 += c;
    c = h.h0 < c;
    h.h1 += c;
    h.h2 += h.h1 < c;
    return h;
}

CHAPOLY_INLINE sc_hash sc_add_block(sc_hash h, const uint8_t *in, uint64_t padbit)
{
    uint64_t m0 = load64_le(in), m1 = load64_le(in + 8);

    h.h0 += m0;
    uint64_t c = h.h0 < m0;
    h.h1 += c;
    c = h.h1 < c;
    h.h1 += m1;
    c += h.h1 < m1; /* at most one of the two carries */
    h.h2 += c + padbit;
    return h;
}

/* nb >= 1 blocks on the radix-2^64 hash in p. */
static void scalar_blocks(uint64_t *p, const uint8_t *in, size_t nb, uint64_t padbit)
{
    sc_hash h = { p[W_H], p[W_H + 1], p[W_H + 2] };
    const uint64_t r0 = p[W_KEY], r1 = p[W_KEY + 1], s1 = p[W_KEY + 2];

    do {
        h = sc_mul_r(sc_add_block(h, in, padbit), r0, r1, s1);
        in += 16;
    } while (--nb);
    p[W_H] = h.h0;
    p[W_H + 1] = h.h1;
    p[W_H + 2] = h.h2;
}

void poly1305_init_neon(const chapoly_kernels *kt, poly1305_state *st, const uint8_t key[32])
{
    (void)kt;
    uint64_t *p = st->priv;
    uint64_t r0 = load64_le(key) & 0x0ffffffc0fffffffULL;
    uint64_t r1 = load64_le(key + 8) & 0x0ffffffc0ffffffcULL;

    p[W_H] = p[W_H + 1] = p[W_H + 2] = 0;
    p[W_KEY] = r0;
    p[W_KEY + 1] = r1;
    p[W_KEY + 2] = r1 + (r1 >> 2);
    p[W_PAD] = load64_le(key + 16);
    p[W_PAD + 1] = load64_le(key + 24);
    p[W_STATE] = 0;
}

/* Radix 2^64 (h2 <= 7) -> five 26-bit limbs (the top one below 2^27). */
CHAPOLY_INLINE void to26(uint32_t l[5], uint64_t h0, uint64_t h1, uint64_t h2)
{
    l[0] = (uint32_t)h0 & M26;
    l[1] = (uint32_t)(h0 >> 26) & M26;
    l[2] = (uint32_t)((h0 >> 52) | (h1 << 12)) & M26;
    l[3] = (uint32_t)(h1 >> 14) & M26;
    l[4] = (uint32_t)((h1 >> 40) | (h2 << 24));
}

typedef struct {
    uint32_t v[9]; /* r0 r1 r2 r3 r4 s1 s2 s3 s4 */
} key26;

CHAPOLY_INLINE key26 key26_of(sc_hash x)
{
    key26 k;
    uint32_t l[5];

    to26(l, x.h0, x.h1, x.h2);
    for (int i = 0; i < 5; i++)
        k.v[i] = l[i];
    for (int i = 1; i < 5; i++)
        k.v[4 + i] = 5 * l[i];
    return k;
}

/* r^e as 12 words r0 r1 r2 r3 | r4 s1 s2 s3 | s4 0 0 0 at w. */
CHAPOLY_INLINE void pow_store(uint32_t *w, const key26 *k)
{
    for (int i = 0; i < 9; i++)
        w[i] = k->v[i];
    w[9] = w[10] = w[11] = 0;
}

/*
 * Key powers, once per key: r^2, r^4 and the final pairs (r^2, r). GCC
 * assembles the 32-bit tables with vector shuffles through a 256-byte
 * frame, which leaves key limbs on the stack: the caller scrubs after it
 * (test_secrets fails without).
 */
static CHAPOLY_NOINLINE void neon_powers(uint64_t *p)
{
    const uint64_t r0 = p[W_KEY], r1 = p[W_KEY + 1], s1 = p[W_KEY + 2];
    sc_hash x = { r0, r1, 0 };
    uint32_t *w4 = (uint32_t *)(p + W_R4), *w2 = (uint32_t *)(p + W_R2);
    uint32_t *wf = (uint32_t *)(p + W_RF);
    key26 k1 = key26_of(x), k2;

    x = sc_mul_r(x, r0, r1, s1);
    k2 = key26_of(x);
    pow_store(w2, &k2);
    /* pairs: value v of r^2 in word 2v, of r in word 2v + 1 */
    for (int v = 0; v < 9; v++) {
        wf[2 * v] = k2.v[v];
        wf[2 * v + 1] = k1.v[v];
    }
    x = sc_mul_r(sc_mul_r(x, r0, r1, s1), r0, r1, s1);
    k2 = key26_of(x);
    pow_store(w4, &k2);
    p[W_STATE] |= ST_POW;
}

/* d = x * key (lane-indexed: a = r0..r3, b = r4 s1 s2 s3, c = s4). */
#define MUL5(d0, d1, d2, d3, d4, x0, x1, x2, x3, x4, a, b, c, OP)                  \
    do {                                                                           \
        d0 = OP##_laneq_u32(d0, x0, a, 0); d1 = OP##_laneq_u32(d1, x0, a, 1);      \
        d2 = OP##_laneq_u32(d2, x0, a, 2); d3 = OP##_laneq_u32(d3, x0, a, 3);      \
        d4 = OP##_laneq_u32(d4, x0, b, 0);                                         \
        d0 = vmlal_laneq_u32(d0, x1, c, 0); d1 = vmlal_laneq_u32(d1, x1, a, 0);    \
        d2 = vmlal_laneq_u32(d2, x1, a, 1); d3 = vmlal_laneq_u32(d3, x1, a, 2);    \
        d4 = vmlal_laneq_u32(d4, x1, a, 3);                                        \
        d0 = vmlal_laneq_u32(d0, x2, b, 3); d1 = vmlal_laneq_u32(d1, x2, c, 0);    \
        d2 = vmlal_laneq_u32(d2, x2, a, 0); d3 = vmlal_laneq_u32(d3, x2, a, 1);    \
        d4 = vmlal_laneq_u32(d4, x2, a, 2);                                        \
        d0 = vmlal_laneq_u32(d0, x3, b, 2); d1 = vmlal_laneq_u32(d1, x3, b, 3);    \
        d2 = vmlal_laneq_u32(d2, x3, c, 0); d3 = vmlal_laneq_u32(d3, x3, a, 0);    \
        d4 = vmlal_laneq_u32(d4, x3, a, 1);                                        \
        d0 = vmlal_laneq_u32(d0, x4, b, 1); d1 = vmlal_laneq_u32(d1, x4, b, 2);    \
        d2 = vmlal_laneq_u32(d2, x4, b, 3); d3 = vmlal_laneq_u32(d3, x4, c, 0);    \
        d4 = vmlal_laneq_u32(d4, x4, a, 0);                                        \
    } while (0)

/* vmull_laneq_u32 with an unused accumulator argument, for MUL5's first row. */
#define vmull0_laneq_u32(d, x, v, l) vmull_laneq_u32(x, v, l)

/*
 * Lazy carry of the product sums (< 2^62), two interleaved chains; the
 * limbs come out below 2^26 but h1 (2^26 + 2^11) and h4 (2^26 + 2^8).
 */
#define CARRY(d0, d1, d2, d3, d4)                                              \
    do {                                                                       \
        const uint64x2_t m_ = vdupq_n_u64(M26);                                \
        uint64x2_t c_;                                                         \
        d4 = vsraq_n_u64(d4, d3, 26); d3 = vandq_u64(d3, m_);                  \
        d1 = vsraq_n_u64(d1, d0, 26); d0 = vandq_u64(d0, m_);                  \
        c_ = vshrq_n_u64(d4, 26); d4 = vandq_u64(d4, m_);                      \
        d0 = vaddq_u64(d0, c_); d0 = vaddq_u64(d0, vshlq_n_u64(c_, 2));        \
        d2 = vsraq_n_u64(d2, d1, 26); d1 = vandq_u64(d1, m_);                  \
        d1 = vsraq_n_u64(d1, d0, 26); d0 = vandq_u64(d0, m_);                  \
        d3 = vsraq_n_u64(d3, d2, 26); d2 = vandq_u64(d2, m_);                  \
        d4 = vsraq_n_u64(d4, d3, 26); d3 = vandq_u64(d3, m_);                  \
    } while (0)

/*
 * The lanes (limbs x0..x4, carried) times the final powers, summed into a
 * radix-2^64 hash (h2 <= 4) in p[W_H..].
 */
static void lanes_to_scalar(uint64_t *p, uint32x2_t x0, uint32x2_t x1, uint32x2_t x2,
                            uint32x2_t x3, uint32x2_t x4)
{
    const uint32_t *wf = (const uint32_t *)(p + W_RF);
    const uint32x2_t r0 = vld1_u32(wf), r1 = vld1_u32(wf + 2), r2 = vld1_u32(wf + 4),
                     r3 = vld1_u32(wf + 6), r4 = vld1_u32(wf + 8), s1 = vld1_u32(wf + 10),
                     s2 = vld1_u32(wf + 12), s3 = vld1_u32(wf + 14), s4 = vld1_u32(wf + 16);
    uint64x2_t d0 = vmull_u32(x0, r0), d1 = vmull_u32(x0, r1), d2 = vmull_u32(x0, r2),
               d3 = vmull_u32(x0, r3), d4 = vmull_u32(x0, r4);

    d0 = vmlal_u32(d0, x1, s4); d1 = vmlal_u32(d1, x1, r0); d2 = vmlal_u32(d2, x1, r1);
    d3 = vmlal_u32(d3, x1, r2); d4 = vmlal_u32(d4, x1, r3);
    d0 = vmlal_u32(d0, x2, s3); d1 = vmlal_u32(d1, x2, s4); d2 = vmlal_u32(d2, x2, r0);
    d3 = vmlal_u32(d3, x2, r1); d4 = vmlal_u32(d4, x2, r2);
    d0 = vmlal_u32(d0, x3, s2); d1 = vmlal_u32(d1, x3, s3); d2 = vmlal_u32(d2, x3, s4);
    d3 = vmlal_u32(d3, x3, r0); d4 = vmlal_u32(d4, x3, r1);
    d0 = vmlal_u32(d0, x4, s1); d1 = vmlal_u32(d1, x4, s2); d2 = vmlal_u32(d2, x4, s3);
    d3 = vmlal_u32(d3, x4, s4); d4 = vmlal_u32(d4, x4, r0);

    /* each lane below 2^58 (carried limbs times s_i < 2^28.8): the sums fit */
    uint64_t l0 = vaddvq_u64(d0), l1 = vaddvq_u64(d1), l2 = vaddvq_u64(d2),
             l3 = vaddvq_u64(d3), l4 = vaddvq_u64(d4);
    u128 t = (u128)l0 + ((u128)l1 << 26) + ((u128)l2 << 52);
    uint64_t w0 = (uint64_t)t;

    /* limb 3 sits at 2^78 = 2^64 2^14, limb 4 at 2^104 = 2^64 2^40 */
    t = (t >> 64) + ((u128)l3 << 14) + ((u128)l4 << 40);
    uint64_t w1 = (uint64_t)t, w2 = (uint64_t)(t >> 64); /* w2 < 2^37 */
    uint64_t c = (w2 & ~(uint64_t)3) + (w2 >> 2);

    t = (u128)w0 + c;
    p[W_H] = (uint64_t)t;
    t = (u128)w1 + (uint64_t)(t >> 64);
    p[W_H + 1] = (uint64_t)t;
    p[W_H + 2] = (w2 & 3) + (uint64_t)(t >> 64);
}

/*
 * nq >= 1 vector steps of four blocks at in. Leaves the lanes pending
 * (ST_LANES) if fold is 0, else folds them into the scalar hash.
 */
static CHAPOLY_NOINLINE void neon_run(uint64_t *p, const uint8_t *in, size_t nq,
                                      uint32_t pad24, int fold)
{
    const uint32x4_t m26 = vdupq_n_u32(M26), padv = vdupq_n_u32(pad24);
    const uint32_t *w4 = (const uint32_t *)(p + W_R4), *w2 = (const uint32_t *)(p + W_R2);
    const uint32x4_t a4 = vld1q_u32(w4), b4 = vld1q_u32(w4 + 4), c4 = vld1q_u32(w4 + 8);
    const uint32x4_t a2 = vld1q_u32(w2), b2 = vld1q_u32(w2 + 4), c2 = vld1q_u32(w2 + 8);
    uint32x2_t h0, h1, h2, h3, h4;

/* One step: m (+ E, the entering scalar hash) from 64 bytes at in, then H. */
#define STEP(E0, E1, E2, E3, E4)                                                         \
    do {                                                                                 \
        uint32x4x4_t w = vld4q_u32((const uint32_t *)in);                                \
        uint32x4_t m0 = vandq_u32(w.val[0], m26);                                        \
        uint32x4_t m1 = vandq_u32(vsliq_n_u32(vshrq_n_u32(w.val[0], 26), w.val[1], 6), m26); \
        uint32x4_t m2 = vandq_u32(vsliq_n_u32(vshrq_n_u32(w.val[1], 20), w.val[2], 12), m26); \
        uint32x4_t m3 = vandq_u32(vsliq_n_u32(vshrq_n_u32(w.val[2], 14), w.val[3], 18), m26); \
        uint32x4_t m4 = vorrq_u32(vshrq_n_u32(w.val[3], 8), padv);                       \
        uint64x2_t d0, d1, d2, d3, d4;                                                   \
                                                                                         \
        m0 = E0(m0); m1 = E1(m1); m2 = E2(m2); m3 = E3(m3); m4 = E4(m4);                 \
        /* lanes: H_j r^4 + m_j r^2 + m_(j+2) */                                         \
        MUL5(d0, d1, d2, d3, d4, h0, h1, h2, h3, h4, a4, b4, c4, vmull0);                \
        MUL5(d0, d1, d2, d3, d4, vget_low_u32(m0), vget_low_u32(m1), vget_low_u32(m2),   \
             vget_low_u32(m3), vget_low_u32(m4), a2, b2, c2, vmlal);                     \
        d0 = vaddw_high_u32(d0, m0);                                                     \
        d1 = vaddw_high_u32(d1, m1);                                                     \
        d2 = vaddw_high_u32(d2, m2);                                                     \
        d3 = vaddw_high_u32(d3, m3);                                                     \
        d4 = vaddw_high_u32(d4, m4);                                                     \
        CARRY(d0, d1, d2, d3, d4);                                                       \
        h0 = vmovn_u64(d0);                                                              \
        h1 = vmovn_u64(d1);                                                              \
        h2 = vmovn_u64(d2);                                                              \
        h3 = vmovn_u64(d3);                                                              \
        h4 = vmovn_u64(d4);                                                              \
        in += 64;                                                                        \
    } while (0)
#define NOADD(m) (m)

    if (p[W_STATE] & ST_LANES) {
        h0 = vmovn_u64(vld1q_u64(p + W_LANES));
        h1 = vmovn_u64(vld1q_u64(p + W_LANES + 2));
        h2 = vmovn_u64(vld1q_u64(p + W_LANES + 4));
        h3 = vmovn_u64(vld1q_u64(p + W_LANES + 6));
        h4 = vmovn_u64(vld1q_u64(p + W_LANES + 8));
    } else { /* the scalar hash joins block 0 (lane 0 of the first m) */
        uint32_t l[5];

        to26(l, p[W_H], p[W_H + 1], p[W_H + 2]);
        const uint32x4_t z = vdupq_n_u32(0);
        const uint32x4_t e0 = vsetq_lane_u32(l[0], z, 0), e1 = vsetq_lane_u32(l[1], z, 0),
                         e2 = vsetq_lane_u32(l[2], z, 0), e3 = vsetq_lane_u32(l[3], z, 0),
                         e4 = vsetq_lane_u32(l[4], z, 0);
        h0 = h1 = h2 = h3 = h4 = vdup_n_u32(0);
#define ADD0(m) vaddq_u32(m, e0)
#define ADD1(m) vaddq_u32(m, e1)
#define ADD2(m) vaddq_u32(m, e2)
#define ADD3(m) vaddq_u32(m, e3)
#define ADD4(m) vaddq_u32(m, e4)
        STEP(ADD0, ADD1, ADD2, ADD3, ADD4);
        nq--;
    }
    while (nq > 0) {
        STEP(NOADD, NOADD, NOADD, NOADD, NOADD);
        nq--;
    }
    if (fold) {
        lanes_to_scalar(p, h0, h1, h2, h3, h4);
        p[W_STATE] &= ~(uint64_t)ST_LANES;
    } else {
        vst1q_u64(p + W_LANES, vmovl_u32(h0));
        vst1q_u64(p + W_LANES + 2, vmovl_u32(h1));
        vst1q_u64(p + W_LANES + 4, vmovl_u32(h2));
        vst1q_u64(p + W_LANES + 6, vmovl_u32(h3));
        vst1q_u64(p + W_LANES + 8, vmovl_u32(h4));
        p[W_STATE] |= ST_LANES;
    }
}

/* Pending lanes -> the scalar hash. */
static CHAPOLY_NOINLINE void fold_lanes(uint64_t *p)
{
    lanes_to_scalar(p, vmovn_u64(vld1q_u64(p + W_LANES)), vmovn_u64(vld1q_u64(p + W_LANES + 2)),
                    vmovn_u64(vld1q_u64(p + W_LANES + 4)),
                    vmovn_u64(vld1q_u64(p + W_LANES + 6)),
                    vmovn_u64(vld1q_u64(p + W_LANES + 8)));
    p[W_STATE] &= ~(uint64_t)ST_LANES;
}

void poly1305_blocks_neon(const chapoly_kernels *kt, poly1305_state *st, const uint8_t *in, size_t len, unsigned padbit)
{
    uint64_t *p = st->priv;
    size_t nb = len / POLY1305_BLOCK_BYTES;
    uint64_t pad = padbit ? 1 : 0;
    uint64_t s = p[W_STATE];

    if (nb == 0)
        return;
    if (nb >= kt->shapes.poly_vector_min || ((s & ST_LANES) && nb >= 4)) {
        size_t rest = nb & 3;

        if (!(s & ST_POW)) {
            neon_powers(p);
            scrub_stack();
        }
        neon_run(p, in, nb / 4, (uint32_t)pad << 24, rest != 0);
        if (rest == 0) {
            SCRUB_UNOPTIMISED();
            return;
        }
        in += 16 * (nb - rest);
        nb = rest;
    } else if (s & ST_LANES) {
        fold_lanes(p);
    }
    scalar_blocks(p, in, nb, pad);
    SCRUB_UNOPTIMISED();
}

static CHAPOLY_NOINLINE void final_impl(poly1305_state *st, uint8_t tag[16])
{
    uint64_t *p = st->priv;
    uint64_t s = p[W_STATE];

    if (s & ST_LANES)
        fold_lanes(p);
    uint64_t h0 = p[W_H], h1 = p[W_H + 1], h2 = p[W_H + 2];
    u128 t;

    /* fold: afterwards h < 2^130 + 5, so at most one subtraction of p */
    uint64_t c = (h2 & ~(uint64_t)3) + (h2 >> 2);
    h2 &= 3;
    t = (u128)h0 + c;
    h0 = (uint64_t)t;
    t = (u128)h1 + (uint64_t)(t >> 64);
    h1 = (uint64_t)t;
    h2 += (uint64_t)(t >> 64);

    /* g = h + 5 - 2^130; use g when it did not go negative */
    t = (u128)h0 + 5;
    uint64_t g0 = (uint64_t)t;
    t = (u128)h1 + (uint64_t)(t >> 64);
    uint64_t g1 = (uint64_t)t;
    uint64_t g2 = h2 + (uint64_t)(t >> 64);
    uint64_t mask = value_barrier_u64(0 - (g2 >> 2));
    h0 = (h0 & ~mask) | (g0 & mask);
    h1 = (h1 & ~mask) | (g1 & mask);

    t = (u128)h0 + p[W_PAD];
    h0 = (uint64_t)t;
    h1 = h1 + p[W_PAD + 1] + (uint64_t)(t >> 64);
    memcpy(tag, &h0, 8); /* AArch64 Linux is little-endian */
    memcpy(tag + 8, &h1, 8);
    chapoly_wipe(p, (s & ST_POW ? W_END : W_HEAD) * sizeof(uint64_t));
}

void poly1305_final_neon(const chapoly_kernels *kt, poly1305_state *st, uint8_t tag[16])
{
    (void)kt;
    final_impl(st, tag);
    SCRUB_UNOPTIMISED();
}
