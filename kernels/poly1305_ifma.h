/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Poly1305 with AVX-512 IFMA, radix 2^44: the state layout in
 * poly1305_state.priv and the vector arithmetic, shared by poly1305_avx512ifma.c
 * (the MAC kernel, which documents the algorithm) and aead_avx512ifma.c (the
 * stitched ChaCha20 + Poly1305 kernel).
 */
#ifndef CHAPOLY_POLY1305_IFMA_H
#define CHAPOLY_POLY1305_IFMA_H

#include "simd_zmm.h"
#include "poly1305_scalar.h"

/*
 * ---- priv layout (64-bit words) after the shared head (poly1305_scalar.h) ----
 * W_LANES: A, 3 limbs x 8 lanes, then B (C of 8-lane mode = B)
 */
#define W_POW 64    /* limb l of r^(16-i) at W_POW + 16 l + i, i = 0..15 */
#define W_POW20 112 /* 20 x limb l (l = 1, 2) at W_POW20 + 16 (l-1) + i */
#define W_END 144

#define ST_L8 1u     /* 8 lanes pending in B */
#define ST_L16 2u    /* 16 lanes pending in A, B */
#define ST_POW8 4u   /* r^1..r^8 in the table (i = 8..15) */
#define ST_POW16 8u  /* r^9..r^16 in the table (i = 0..7) */
#define ST_VEC 16u   /* a vector call ran (poly1305_avx512ifma.c: the next ones keep powers) */

#define M44 0xfffffffffffULL
#define M42 0x3ffffffffffULL

/* 8 lanes of radix-2^44 values. */
typedef struct {
    __m512i l0, l1, l2;
} v3;

/* A multiplier: limbs and their multiples by 20. */
typedef struct {
    __m512i r0, r1, r2, s1, s2;
} vkey;

/* Unreduced products: limb i is lo_i + 2^52 hi_i at weight 2^(44 i). */
typedef struct {
    __m512i lo0, lo1, lo2, hi0, hi1, hi2;
} vacc;

CHAPOLY_INLINE __m512i times20(__m512i x)
{
    return _mm512_add_epi64(_mm512_slli_epi64(x, 4), _mm512_slli_epi64(x, 2));
}

CHAPOLY_INLINE vkey key_of(v3 r)
{
    vkey k = { r.l0, r.l1, r.l2, times20(r.l1), times20(r.l2) };
    return k;
}

CHAPOLY_INLINE v3 v3_zero(void)
{
    v3 z = { _mm512_setzero_si512(), _mm512_setzero_si512(),
             _mm512_setzero_si512() };
    return z;
}

CHAPOLY_INLINE vacc acc_init(v3 m)
{
    __m512i z = _mm512_setzero_si512();
    vacc a = { m.l0, m.l1, m.l2, z, z, z };
    return a;
}

/*
 * a += h * k. Terms of h2 first, then h0, then h1: that is the order in
 * which ifma_carry produces the limbs of the previous step.
 */
CHAPOLY_INLINE vacc acc_mad(vacc a, v3 h, const vkey *k)
{
    a.lo0 = _mm512_madd52lo_epu64(a.lo0, h.l2, k->s1);
    a.hi0 = _mm512_madd52hi_epu64(a.hi0, h.l2, k->s1);
    a.lo1 = _mm512_madd52lo_epu64(a.lo1, h.l2, k->s2);
    a.hi1 = _mm512_madd52hi_epu64(a.hi1, h.l2, k->s2);
    a.lo2 = _mm512_madd52lo_epu64(a.lo2, h.l2, k->r0);
    a.hi2 = _mm512_madd52hi_epu64(a.hi2, h.l2, k->r0);

    a.lo0 = _mm512_madd52lo_epu64(a.lo0, h.l0, k->r0);
    a.hi0 = _mm512_madd52hi_epu64(a.hi0, h.l0, k->r0);
    a.lo1 = _mm512_madd52lo_epu64(a.lo1, h.l0, k->r1);
    a.hi1 = _mm512_madd52hi_epu64(a.hi1, h.l0, k->r1);
    a.lo2 = _mm512_madd52lo_epu64(a.lo2, h.l0, k->r2);
    a.hi2 = _mm512_madd52hi_epu64(a.hi2, h.l0, k->r2);

    a.lo0 = _mm512_madd52lo_epu64(a.lo0, h.l1, k->s2);
    a.hi0 = _mm512_madd52hi_epu64(a.hi0, h.l1, k->s2);
    a.lo1 = _mm512_madd52lo_epu64(a.lo1, h.l1, k->r0);
    a.hi1 = _mm512_madd52hi_epu64(a.hi1, h.l1, k->r0);
    a.lo2 = _mm512_madd52lo_epu64(a.lo2, h.l1, k->r1);
    a.hi2 = _mm512_madd52hi_epu64(a.hi2, h.l1, k->r1);
    return a;
}

/*
 * Carry one multiply (ifma_mul) into limbs. Bounds: the hash limbs are
 * h0, h1 < 2^45, h2 < 2^43.5 (a message plus a converted scalar hash at
 * worst), the key power r0, r1 < 2^44.01, r2 < 2^42.01, s < 2^48.4, plus a
 * message limb below 2^44: lo_i < 2^54, hi_0 < 2^42, hi_1 < 2^41,
 * hi_2 < 2^39, so c = bits >= 130 < 2^50 and 5c fits the 52-bit IFMA
 * input. Output: h0 < 2^44, h1 < 2^44 + 2^8, h2 < 2^42.
 */
CHAPOLY_INLINE v3 ifma_carry(vacc a)
{
    const __m512i m44 = _mm512_set1_epi64((long long)M44);
    const __m512i m42 = _mm512_set1_epi64((long long)M42);
    const __m512i five = _mm512_set1_epi64(5);
    v3 h;

    a.lo1 = _mm512_add_epi64(a.lo1, _mm512_srli_epi64(a.lo0, 44));
    a.lo1 = _mm512_add_epi64(a.lo1, _mm512_slli_epi64(a.hi0, 8));
    h.l0 = _mm512_and_si512(a.lo0, m44);
    a.lo2 = _mm512_add_epi64(a.lo2, _mm512_srli_epi64(a.lo1, 44));
    a.lo2 = _mm512_add_epi64(a.lo2, _mm512_slli_epi64(a.hi1, 8));
    h.l1 = _mm512_and_si512(a.lo1, m44);
    __m512i c = _mm512_add_epi64(_mm512_srli_epi64(a.lo2, 42),
                                 _mm512_slli_epi64(a.hi2, 10));
    h.l2 = _mm512_and_si512(a.lo2, m42);
    h.l0 = _mm512_madd52lo_epu64(h.l0, c, five);
    h.l1 = _mm512_add_epi64(h.l1, _mm512_srli_epi64(h.l0, 44));
    h.l0 = _mm512_and_si512(h.l0, m44);
    return h;
}

/* h * k + m, carried. */
CHAPOLY_INLINE v3 ifma_mul(v3 h, const vkey *k, v3 m)
{
    return ifma_carry(acc_mad(acc_init(m), h, k));
}

/*
 * The same products for latency-bound spots (key powers, final lanes): the
 * three terms of each sum are independent IFMAs added by a tree (IFMA
 * latency 4 plus two adds, instead of three dependent IFMAs).
 */
CHAPOLY_INLINE vacc acc_mad_tree(vacc a, v3 h, const vkey *k)
{
    const __m512i z = _mm512_setzero_si512();
#define T3(f, x0, y0, x1, y1, x2, y2)                                      \
    _mm512_add_epi64(_mm512_add_epi64(f(z, x0, y0), f(z, x1, y1)), f(z, x2, y2))
#define LO _mm512_madd52lo_epu64
#define HI _mm512_madd52hi_epu64
    a.lo0 = _mm512_add_epi64(a.lo0, T3(LO, h.l0, k->r0, h.l1, k->s2, h.l2, k->s1));
    a.hi0 = _mm512_add_epi64(a.hi0, T3(HI, h.l0, k->r0, h.l1, k->s2, h.l2, k->s1));
    a.lo1 = _mm512_add_epi64(a.lo1, T3(LO, h.l0, k->r1, h.l1, k->r0, h.l2, k->s2));
    a.hi1 = _mm512_add_epi64(a.hi1, T3(HI, h.l0, k->r1, h.l1, k->r0, h.l2, k->s2));
    a.lo2 = _mm512_add_epi64(a.lo2, T3(LO, h.l0, k->r2, h.l1, k->r1, h.l2, k->r0));
    a.hi2 = _mm512_add_epi64(a.hi2, T3(HI, h.l0, k->r2, h.l1, k->r1, h.l2, k->r0));
#undef LO
#undef HI
#undef T3
    return a;
}

/*
 * Carry for key powers: two rounds in which every limb passes its excess
 * up at the same time (a shorter dependency chain than the serial one of
 * ifma_carry). Valid for products of two key powers (limbs below
 * 2^44.01, 2^44.01, 2^42.01 and their 20x): after round one h0 < 2^49,
 * h1 < 2^47.6, h2 < 2^46; after round two h0 < 2^44 + 2^7, h1 < 2^44 + 2^5,
 * h2 < 2^42 + 2^4, the same form again.
 */
CHAPOLY_INLINE v3 ifma_carry_par(vacc a)
{
    const __m512i m44 = _mm512_set1_epi64((long long)M44);
    const __m512i m42 = _mm512_set1_epi64((long long)M42);
    __m512i c0 = _mm512_add_epi64(_mm512_srli_epi64(a.lo0, 44), _mm512_slli_epi64(a.hi0, 8));
    __m512i c1 = _mm512_add_epi64(_mm512_srli_epi64(a.lo1, 44), _mm512_slli_epi64(a.hi1, 8));
    __m512i c2 = _mm512_add_epi64(_mm512_srli_epi64(a.lo2, 42), _mm512_slli_epi64(a.hi2, 10));
    __m512i h0 = _mm512_add_epi64(_mm512_and_si512(a.lo0, m44),
                                  _mm512_add_epi64(c2, _mm512_slli_epi64(c2, 2)));
    __m512i h1 = _mm512_add_epi64(_mm512_and_si512(a.lo1, m44), c0);
    __m512i h2 = _mm512_add_epi64(_mm512_and_si512(a.lo2, m42), c1);
    v3 r;

    c0 = _mm512_srli_epi64(h0, 44);
    c1 = _mm512_srli_epi64(h1, 44);
    c2 = _mm512_srli_epi64(h2, 42);
    r.l0 = _mm512_add_epi64(_mm512_and_si512(h0, m44),
                            _mm512_add_epi64(c2, _mm512_slli_epi64(c2, 2)));
    r.l1 = _mm512_add_epi64(_mm512_and_si512(h1, m44), c0);
    r.l2 = _mm512_add_epi64(_mm512_and_si512(h2, m42), c1);
    return r;
}

/* Product of two key powers (vectors of them), latency-optimised. */
CHAPOLY_INLINE v3 pow_mul(v3 h, const vkey *k)
{
    return ifma_carry_par(acc_mad_tree(acc_init(v3_zero()), h, k));
}

/*
 * The same in 4 lanes (ymm, AVX-512VL), for the first levels of the key
 * powers, which need at most 4 distinct lanes: half the port pressure of
 * zmm on cores that split 512-bit ops or run 512-bit IFMA on one port.
 */
typedef struct {
    __m256i l0, l1, l2;
} v3y;

typedef struct {
    __m256i r0, r1, r2, s1, s2;
} vkeyy;

CHAPOLY_INLINE __m256i times20y(__m256i x)
{
    return _mm256_add_epi64(_mm256_slli_epi64(x, 4), _mm256_slli_epi64(x, 2));
}

CHAPOLY_INLINE vkeyy keyy_of(v3y r)
{
    vkeyy k = { r.l0, r.l1, r.l2, times20y(r.l1), times20y(r.l2) };
    return k;
}

/* pow_mul in 4 lanes: the tree product and the two-round carry. */
CHAPOLY_INLINE v3y pow_muly(v3y h, const vkeyy *k)
{
    const __m256i z = _mm256_setzero_si256();
    const __m256i m44 = _mm256_set1_epi64x((long long)M44);
    const __m256i m42 = _mm256_set1_epi64x((long long)M42);
#define T3(f, x0, y0, x1, y1, x2, y2)                                      \
    _mm256_add_epi64(_mm256_add_epi64(f(z, x0, y0), f(z, x1, y1)), f(z, x2, y2))
#define LO _mm256_madd52lo_epu64
#define HI _mm256_madd52hi_epu64
    __m256i lo0 = T3(LO, h.l0, k->r0, h.l1, k->s2, h.l2, k->s1);
    __m256i hi0 = T3(HI, h.l0, k->r0, h.l1, k->s2, h.l2, k->s1);
    __m256i lo1 = T3(LO, h.l0, k->r1, h.l1, k->r0, h.l2, k->s2);
    __m256i hi1 = T3(HI, h.l0, k->r1, h.l1, k->r0, h.l2, k->s2);
    __m256i lo2 = T3(LO, h.l0, k->r2, h.l1, k->r1, h.l2, k->r0);
    __m256i hi2 = T3(HI, h.l0, k->r2, h.l1, k->r1, h.l2, k->r0);
#undef LO
#undef HI
#undef T3
    /* as ifma_carry_par */
    __m256i c0 = _mm256_add_epi64(_mm256_srli_epi64(lo0, 44), _mm256_slli_epi64(hi0, 8));
    __m256i c1 = _mm256_add_epi64(_mm256_srli_epi64(lo1, 44), _mm256_slli_epi64(hi1, 8));
    __m256i c2 = _mm256_add_epi64(_mm256_srli_epi64(lo2, 42), _mm256_slli_epi64(hi2, 10));
    __m256i h0 = _mm256_add_epi64(_mm256_and_si256(lo0, m44),
                                  _mm256_add_epi64(c2, _mm256_slli_epi64(c2, 2)));
    __m256i h1 = _mm256_add_epi64(_mm256_and_si256(lo1, m44), c0);
    __m256i h2 = _mm256_add_epi64(_mm256_and_si256(lo2, m42), c1);
    v3y r;

    c0 = _mm256_srli_epi64(h0, 44);
    c1 = _mm256_srli_epi64(h1, 44);
    c2 = _mm256_srli_epi64(h2, 42);
    r.l0 = _mm256_add_epi64(_mm256_and_si256(h0, m44),
                            _mm256_add_epi64(c2, _mm256_slli_epi64(c2, 2)));
    r.l1 = _mm256_add_epi64(_mm256_and_si256(h1, m44), c0);
    r.l2 = _mm256_add_epi64(_mm256_and_si256(h2, m42), c1);
    return r;
}

/* Two 128-byte halves of 8 blocks -> lanes of low and high qwords. */
CHAPOLY_INLINE v3 msg_split(__m512i lo, __m512i hi, __m512i padv)
{
    const __m512i m44 = _mm512_set1_epi64((long long)M44);
    v3 m;

    m.l0 = _mm512_and_si512(lo, m44);
    /* (lo >> 44 | hi << 20) & m44 */
    m.l1 = _mm512_ternarylogic_epi64(_mm512_srli_epi64(lo, 44),
                                     _mm512_slli_epi64(hi, 20), m44, 0xa8);
    m.l2 = _mm512_or_si512(_mm512_srli_epi64(hi, 24), padv);
    return m;
}

/* 8 blocks at in -> lane j = block j. padv = pad bit at 2^40 of limb 2. */
CHAPOLY_INLINE v3 load8(const uint8_t *in, __m512i padv)
{
    const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    const __m512i odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    __m512i z0 = _mm512_loadu_si512((const void *)in);
    __m512i z1 = _mm512_loadu_si512((const void *)(in + 64));

    return msg_split(_mm512_permutex2var_epi64(z0, even, z1),
                     _mm512_permutex2var_epi64(z0, odd, z1), padv);
}

/*
 * n (1..8) blocks at in -> the last n lanes (block i in lane 8 - n + i),
 * other lanes zero, pad bit only in used lanes. Masked loads read no byte
 * past in + 16 n.
 */
CHAPOLY_INLINE v3 load_last(const uint8_t *in, unsigned n, uint64_t padbit)
{
    const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    unsigned q = 2 * n; /* qwords */
    __mmask8 k0 = (__mmask8)(q >= 8 ? 0xff : (1u << q) - 1);
    __mmask8 k1 = (__mmask8)(q > 8 ? (1u << (q - 8)) - 1 : 0);
    __mmask8 used = (__mmask8)(0xffu << (8 - n));
    __m512i z0 = _mm512_maskz_loadu_epi64(k0, (const void *)in);
    __m512i z1 = _mm512_maskz_loadu_epi64(k1, (const void *)(in + 64));
    /* lane j takes qwords 2 (j - 8 + n) and + 1; the index uses 4 bits */
    __m512i il = _mm512_add_epi64(even, _mm512_set1_epi64(2 * (long long)n - 16));
    __m512i ih = _mm512_add_epi64(il, _mm512_set1_epi64(1));
    __m512i lo = _mm512_maskz_permutex2var_epi64(used, z0, il, z1);
    __m512i hi = _mm512_maskz_permutex2var_epi64(used, z0, ih, z1);

    return msg_split(lo, hi,
                     _mm512_maskz_set1_epi64(used, (long long)(padbit << 40)));
}

CHAPOLY_INLINE v3 v3_load(const uint64_t *w)
{
    v3 h = { _mm512_load_si512((const void *)w),
             _mm512_load_si512((const void *)(w + 8)),
             _mm512_load_si512((const void *)(w + 16)) };
    return h;
}

CHAPOLY_INLINE void v3_store(uint64_t *w, v3 h)
{
    _mm512_store_si512((void *)w, h.l0);
    _mm512_store_si512((void *)(w + 8), h.l1);
    _mm512_store_si512((void *)(w + 16), h.l2);
}

/* Lane i..i+7 of the power table as a multiplier (i = 0: r^16..r^9). */
CHAPOLY_INLINE vkey pow_vec(const uint64_t *p, unsigned i)
{
    const uint64_t *t = p + W_POW + i, *s = p + W_POW20 + i;
    vkey k = { _mm512_load_si512((const void *)t),
               _mm512_load_si512((const void *)(t + 16)),
               _mm512_load_si512((const void *)(t + 32)),
               _mm512_load_si512((const void *)s),
               _mm512_load_si512((const void *)(s + 16)) };
    return k;
}

/*
 * r^e (1..16) in every lane. Whole-vector loads and a permute rather than
 * broadcast loads of single words: the table may have been written with
 * vector stores moments ago, and AMD Zen does not forward part of a vector
 * store to a narrower load.
 */
CHAPOLY_INLINE vkey pow_bcast(const uint64_t *p, unsigned e)
{
    unsigned i = 16 - e;
    const uint64_t *t = p + W_POW + (i & 8), *s = p + W_POW20 + (i & 8);
    const __m512i idx = _mm512_set1_epi64((long long)(i & 7));
#define PB(w) _mm512_permutexvar_epi64(idx, _mm512_load_si512((const void *)(w)))
    vkey k = { PB(t), PB(t + 16), PB(t + 32), PB(s), PB(s + 16) };
#undef PB
    return k;
}

/* The scalar hash in radix 2^44, in lane 0 only. */
CHAPOLY_INLINE v3 scalar_to_lane0(const uint64_t *p)
{
    uint64_t h0 = p[W_H], h1 = p[W_H + 1], h2 = p[W_H + 2];
    v3 h = { _mm512_maskz_set1_epi64(1, (long long)(h0 & M44)),
             _mm512_maskz_set1_epi64(1, (long long)(((h0 >> 44) | (h1 << 20)) & M44)),
             _mm512_maskz_set1_epi64(1, (long long)((h1 >> 24) | (h2 << 40))) };
    return h;
}

CHAPOLY_INLINE v3 v3_add(v3 a, v3 b)
{
    v3 s = { _mm512_add_epi64(a.l0, b.l0), _mm512_add_epi64(a.l1, b.l1),
             _mm512_add_epi64(a.l2, b.l2) };
    return s;
}

#endif
