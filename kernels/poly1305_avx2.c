/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Poly1305 with AVX2, radix 2^26 in four 64-bit lanes (vpmuludq), for the
 * "avx2" level and for the AVX-512 levels on CPUs without IFMA.
 *
 * Short calls run the scalar radix-2^64 code (poly1305_scalar.h, the asm
 * block loop, faster than the C one). Longer
 * ones hash nb mod 4 blocks with the scalar code first (after the key
 * powers in program order: two scalar chains the core runs side by side),
 * then put block 4i + j in lane j: one step h <- h * r^4 + m when the
 * batches are odd in number (it needs no r^8, which is made beside it),
 * then two batches at a time,
 *   h <- h * r^8 + m1 * r^4 + m2,
 * where m1 * r^4 does not depend on h: one multiply and one carry on the
 * critical path per 128 bytes. The message limbs of m2 start the product
 * sums. The first vector call on a state (no key powers yet: a one-shot
 * MAC, an AEAD's text) folds its lanes at its end from registers, as in
 * poly1305_avx512ifma.c; later calls leave them pending when they end on a
 * whole batch, for the next one to continue; the hash is then
 * sum_j H_j r^(4-j). A call that
 * continues them and ends with k >= poly_tail extra blocks puts those in
 * the last k lanes and applies the final powers at once:
 *   hash = sum_j H_j (r^(4-j) r^k) + M_j r^(4-j);
 * fewer go through the scalar code after a plain fold (fold4), as does a
 * short call (the MAC's padded last block) that finds lanes pending.
 *
 * Limbs: h = sum h_i 2^(26 i), i = 0..4; 2^130 == 5, so the wrapped terms use
 * s_i = 5 r_i. Every limb that enters vpmuludq is below 2^32 (bounds at
 * avx2_carry).
 */
#include <immintrin.h>
#include "kernels_impl.h"
#include "poly1305_scalar.h"

/*
 * The crossovers are the table's shapes (kernels.h, chapoly_shapes; their
 * values per CPU in the level tables and cpu_profiles.c):
 *   poly-vector   the vector path from this many blocks: a core with
 *                 shorter vector latency crosses over earlier;
 *   poly_stream_min, poly_warm_min: once the powers exist or
 *                 poly_stream_min blocks went scalar, calls from
 *                 poly_warm_min blocks take the vector path (see
 *                 poly1305_avx512ifma.c for why not lower);
 *   poly-prefix   the scalar prefix of a call that computes the powers
 *                 (vec_prefix): 4 more blocks when nb mod 4 is below this;
 *                 the scalar powers leave the multiplier little room for
 *                 more scalar blocks here, so 0 in the tables;
 *   poly_tail     fewer blocks than this after pending lanes (a short
 *                 call, or the end of a call that continues them): fold,
 *                 then scalar blocks, instead of a partial batch.
 * Any value gives the same hash: a vector run from the scalar hash needs a
 * whole batch (poly-vector, poly_warm_min >= 4, clamped by
 * chapoly_kernels_build), the rest only picks a path.
 */

/*
 * ---- priv layout (64-bit words) after the shared head (poly1305_scalar.h) ----
 * W_LANES: 5 limbs x 4 lanes
 */
#define W_POW 36   /* limb l of r^(4-i) at W_POW + 4 l + i, l = 0..4 */
#define W_POW5 56  /* 5 x limb l (l = 1..4) at W_POW5 + 4 (l-1) + i */
#define W_R4 72    /* r^4 in every lane: 9 vectors r0..r4, s1..s4 */
#define W_R8 108   /* r^8 the same way */
#define W_END 144

#define ST_L4 1u  /* lanes pending */
#define ST_POW 2u /* V4 (W_POW, W_POW5) and r^4 (W_R4) are filled */
#define ST_R8 4u  /* r^8 (W_R8) is filled */

_Static_assert(W_END <= POLY1305_PRIV_WORDS, "AVX2 state must fit priv");
_Static_assert(W_END % 8 == 0, "wipe_words clears 8 words at a time");
_Static_assert(W_LANES % 4 == 0 && W_POW % 4 == 0 && W_POW5 % 4 == 0 &&
               W_R4 % 4 == 0 && W_R8 % 4 == 0 && W_END % 4 == 0,
               "vector tables must be 32-byte aligned");

#define M26 0x3ffffffULL

/*
 * Named fields, not arrays: the compiler moved array-of-vector structs
 * through general registers and the stack (GCC).
 */
typedef struct {
    __m256i l0, l1, l2, l3, l4;
} v5;

typedef struct {
    __m256i r0, r1, r2, r3, r4, s1, s2, s3, s4; /* s_i = 5 r_i */
} vkey5;

CHAPOLY_INLINE __m256i times5(__m256i x)
{
    return _mm256_add_epi64(x, _mm256_slli_epi64(x, 2));
}

CHAPOLY_INLINE vkey5 key5_of(v5 r)
{
    vkey5 k = { r.l0, r.l1, r.l2, r.l3, r.l4,
                times5(r.l1), times5(r.l2), times5(r.l3), times5(r.l4) };
    return k;
}

CHAPOLY_INLINE v5 v5_zero(void)
{
    __m256i z = _mm256_setzero_si256();
    v5 r = { z, z, z, z, z };
    return r;
}

#define MUL _mm256_mul_epu32
#define ADD _mm256_add_epi64

/*
 * d += h * k, products of the low 32 bits of each lane, one limb of d after
 * another; PIN(limb) after each (or nothing).
 */
#define MAD_LIMBS(d, x, k, PIN)                                                                 \
    do {                                                                                        \
        (d).l0 = ADD((d).l0, ADD(ADD(MUL((x).l0, (k)->r0), MUL((x).l1, (k)->s4)),               \
                                 ADD(ADD(MUL((x).l2, (k)->s3), MUL((x).l3, (k)->s2)),            \
                                     MUL((x).l4, (k)->s1))));                                   \
        PIN((d).l0);                                                                            \
        (d).l1 = ADD((d).l1, ADD(ADD(MUL((x).l0, (k)->r1), MUL((x).l1, (k)->r0)),               \
                                 ADD(ADD(MUL((x).l2, (k)->s4), MUL((x).l3, (k)->s3)),            \
                                     MUL((x).l4, (k)->s2))));                                   \
        PIN((d).l1);                                                                            \
        (d).l2 = ADD((d).l2, ADD(ADD(MUL((x).l0, (k)->r2), MUL((x).l1, (k)->r1)),               \
                                 ADD(ADD(MUL((x).l2, (k)->r0), MUL((x).l3, (k)->s4)),            \
                                     MUL((x).l4, (k)->s3))));                                   \
        PIN((d).l2);                                                                            \
        (d).l3 = ADD((d).l3, ADD(ADD(MUL((x).l0, (k)->r3), MUL((x).l1, (k)->r2)),               \
                                 ADD(ADD(MUL((x).l2, (k)->r1), MUL((x).l3, (k)->r0)),            \
                                     MUL((x).l4, (k)->s4))));                                   \
        PIN((d).l3);                                                                            \
        (d).l4 = ADD((d).l4, ADD(ADD(MUL((x).l0, (k)->r4), MUL((x).l1, (k)->r3)),               \
                                 ADD(ADD(MUL((x).l2, (k)->r2), MUL((x).l3, (k)->r1)),            \
                                     MUL((x).l4, (k)->r0))));                                   \
        PIN((d).l4);                                                                            \
    } while (0)
#define NO_PIN(v) ((void)0)
#define PIN_YMM(v) __asm__("" : "+x"(v))

CHAPOLY_INLINE v5 avx2_mad(v5 d, v5 x, const vkey5 *k)
{
    MAD_LIMBS(d, x, k, NO_PIN);
    return d;
}

/*
 * avx2_mad one product limb at a time, each pinned before the next starts:
 * GCC otherwise issues all 25 products first (for their latency) and, with
 * 16 ymm registers, parks most of them on the stack, where key-derived
 * values must not stay.
 */
CHAPOLY_INLINE v5 avx2_mad_seq(v5 d, v5 x, const vkey5 *k)
{
    MAD_LIMBS(d, x, k, PIN_YMM);
    return d;
}

/*
 * Carry: two rounds in which every limb passes its excess up at once (the
 * top one times 5 to limb 0). Shorter latency than one serial chain
 * through the limbs, which counts where dependent vector ops are slow.
 * Inputs to
 * avx2_mad have limbs below 2^27, multipliers r_i < 2^26.4, s_i < 2^28.8;
 * with at most two whole multiplies summed plus a message limb, d_i <
 * 2^60. Round one: c_i < 2^34, limb 0 < 2^26 + 5 * 2^34 < 2^36.4, the
 * others < 2^26 + 2^34; round two: limb 0 and 1 < 2^26 + 2^10.4, limbs
 * 2..4 < 2^26 + 2^8.1, all below 2^27 again.
 */
CHAPOLY_INLINE v5 avx2_carry(v5 d)
{
    const __m256i m = _mm256_set1_epi64x((long long)M26);

    for (int round = 0; round < 2; round++) {
        __m256i c0 = _mm256_srli_epi64(d.l0, 26), c1 = _mm256_srli_epi64(d.l1, 26),
                c2 = _mm256_srli_epi64(d.l2, 26), c3 = _mm256_srli_epi64(d.l3, 26),
                c4 = _mm256_srli_epi64(d.l4, 26);

        d.l0 = ADD(_mm256_and_si256(d.l0, m), times5(c4));
        d.l1 = ADD(_mm256_and_si256(d.l1, m), c0);
        d.l2 = ADD(_mm256_and_si256(d.l2, m), c1);
        d.l3 = ADD(_mm256_and_si256(d.l3, m), c2);
        d.l4 = ADD(_mm256_and_si256(d.l4, m), c3);
    }
    return d;
}

/* h * k + m, carried. */
CHAPOLY_INLINE v5 avx2_mul(v5 h, const vkey5 *k, v5 m)
{
    return avx2_carry(avx2_mad(m, h, k));
}

/* 4 blocks from two 32-byte loads -> lane j = block j. */
CHAPOLY_INLINE v5 msg_split(__m256i y0, __m256i y1, __m256i padv)
{
    const __m256i m = _mm256_set1_epi64x((long long)M26);
    __m256i lo = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(y0, y1), 0xd8);
    __m256i hi = _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(y0, y1), 0xd8);
    v5 r = { _mm256_and_si256(lo, m),
             _mm256_and_si256(_mm256_srli_epi64(lo, 26), m),
             _mm256_and_si256(_mm256_or_si256(_mm256_srli_epi64(lo, 52),
                                              _mm256_slli_epi64(hi, 12)), m),
             _mm256_and_si256(_mm256_srli_epi64(hi, 14), m),
             _mm256_or_si256(_mm256_srli_epi64(hi, 40), padv) };
    return r;
}

CHAPOLY_INLINE v5 load4(const uint8_t *in, __m256i padv)
{
    return msg_split(_mm256_loadu_si256((const __m256i *)in),
                     _mm256_loadu_si256((const __m256i *)(in + 32)), padv);
}

/*
 * k (1..3) blocks at in -> lanes 4-k..3. Read as the last k blocks of a
 * 4-block batch starting 16 (4 - k) bytes before in, with the bytes before
 * in masked off (vpmaskmovq does not touch masked-off elements, so nothing
 * outside [in, in + 16 k) is read).
 */
CHAPOLY_INLINE v5 load_last(const uint8_t *in, unsigned k, uint64_t padbit)
{
    const __m256i iota = _mm256_setr_epi64x(0, 1, 2, 3);
    /* qword q of the virtual batch is used when q >= 8 - 2k */
    __m256i lim = _mm256_set1_epi64x(7 - 2 * (long long)k);
    __m256i u0 = _mm256_cmpgt_epi64(iota, lim);
    __m256i u1 = _mm256_cmpgt_epi64(_mm256_add_epi64(iota, _mm256_set1_epi64x(4)), lim);
    uintptr_t base = (uintptr_t)in - 16 * (uintptr_t)(4 - k);
    __m256i y0 = _mm256_maskload_epi64((const long long *)base, u0);
    __m256i y1 = _mm256_maskload_epi64((const long long *)(base + 32), u1);
    /* lanes j >= 4 - k carry a block */
    __m256i used = _mm256_cmpgt_epi64(iota, _mm256_set1_epi64x(3 - (long long)k));

    return msg_split(y0, y1, _mm256_and_si256(used,
                                              _mm256_set1_epi64x((long long)(padbit << 24))));
}

#define LD(w) _mm256_load_si256((const __m256i *)(w))

/*
 * r^e (1..4) in every lane, by whole-vector loads and a permute: the table
 * may have been written by vector stores moments ago, and a narrower load
 * from a pending vector store is not forwarded on AMD Zen.
 */
CHAPOLY_INLINE vkey5 pow_bcast(const uint64_t *p, unsigned e)
{
    const uint64_t *t = p + W_POW, *s = p + W_POW5;
    long long j = 4 - (long long)e;
    const __m256i idx = _mm256_set1_epi64x((2 * j) | ((2 * j + 1) << 32));
#define B(w) _mm256_permutevar8x32_epi32(LD(w), idx)
    vkey5 k = { B(t), B(t + 4), B(t + 8), B(t + 12), B(t + 16),
                B(s), B(s + 4), B(s + 8), B(s + 12) };
#undef B
    return k;
}

/* Radix 2^64 (h2 <= 4) -> five 26-bit limbs (the top one up to 2^26.4). */
CHAPOLY_INLINE void to26(uint64_t l[5], uint64_t h0, uint64_t h1, uint64_t h2)
{
    l[0] = h0 & M26;
    l[1] = (h0 >> 26) & M26;
    l[2] = ((h0 >> 52) | (h1 << 12)) & M26;
    l[3] = (h1 >> 14) & M26;
    l[4] = (h1 >> 40) | (h2 << 24);
}

CHAPOLY_INLINE void key5_store(uint64_t *w, const vkey5 *k)
{
    _mm256_store_si256((__m256i *)w, k->r0);
    _mm256_store_si256((__m256i *)(w + 4), k->r1);
    _mm256_store_si256((__m256i *)(w + 8), k->r2);
    _mm256_store_si256((__m256i *)(w + 12), k->r3);
    _mm256_store_si256((__m256i *)(w + 16), k->r4);
    _mm256_store_si256((__m256i *)(w + 20), k->s1);
    _mm256_store_si256((__m256i *)(w + 24), k->s2);
    _mm256_store_si256((__m256i *)(w + 28), k->s3);
    _mm256_store_si256((__m256i *)(w + 32), k->s4);
}

/*
 * Key powers, once per key: r^1..r^4 with the scalar multiply (three
 * dependent ones), then in vector form V4 (lane j: r^(4-j)) at W_POW and
 * r^4 in every lane at W_R4. The vectors are built in registers (a vector
 * load of words just written by scalar stores is not forwarded: it waits
 * for the stores to reach the cache). r^8 (W_R8) comes later, from r^4 in
 * vector form, when a call has pairs of batches (r8_powers).
 */
/* (a, b, c, d) in lanes 0..3, built in registers (vmovq, vpinsrq, vinserti128). */
CHAPOLY_INLINE __m256i lanes4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    __m128i lo = _mm_insert_epi64(_mm_cvtsi64_si128((long long)a), (long long)b, 1);
    __m128i hi = _mm_insert_epi64(_mm_cvtsi64_si128((long long)c), (long long)d, 1);

    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* Radix 2^64 words (h2 <= 4) in each lane -> five 26-bit limbs (to26). */
CHAPOLY_INLINE v5 to26_vec(__m256i w0, __m256i w1, __m256i w2)
{
    const __m256i m = _mm256_set1_epi64x((long long)M26);
    v5 r = { _mm256_and_si256(w0, m),
             _mm256_and_si256(_mm256_srli_epi64(w0, 26), m),
             _mm256_and_si256(_mm256_or_si256(_mm256_srli_epi64(w0, 52),
                                              _mm256_slli_epi64(w1, 12)), m),
             _mm256_and_si256(_mm256_srli_epi64(w1, 14), m),
             _mm256_or_si256(_mm256_srli_epi64(w1, 40), _mm256_slli_epi64(w2, 24)) };
    return r;
}

static __attribute__((noinline)) void avx2_powers(uint64_t *p)
{
    sc_key k = { p[W_KEY], p[W_KEY + 1], p[W_KEY + 2] };
    sc_hash r1 = { k.r0, k.r1, 0 };
    sc_hash r2 = sc_mul_r(r1, k);
    sc_hash r3 = sc_mul_r(r2, k);
    sc_hash r4 = sc_mul_r(r3, k);
    v5 v = to26_vec(lanes4(r4.h0, r3.h0, r2.h0, r1.h0), lanes4(r4.h1, r3.h1, r2.h1, r1.h1),
                    lanes4(r4.h2, r3.h2, r2.h2, r1.h2));
    /* lane 0 (r^4) in every lane */
#define L0(x) _mm256_permute4x64_epi64((x), 0)
    v5 b4 = { L0(v.l0), L0(v.l1), L0(v.l2), L0(v.l3), L0(v.l4) };
#undef L0
    vkey5 kv = key5_of(v), k4 = key5_of(b4);

    key5_store(p + W_POW, &kv); /* W_POW, W_POW5: one vkey5 in memory order */
    key5_store(p + W_R4, &k4);
}

/* r^8 = r^4 r^4 in every lane (W_R8): no dependence on the hash. */
CHAPOLY_INLINE void r8_powers(uint64_t *p)
{
    const vkey5 *k4 = (const vkey5 *)(p + W_R4);
    v5 r4 = { k4->r0, k4->r1, k4->r2, k4->r3, k4->r4 };
    vkey5 k8 = key5_of(avx2_mul(r4, k4, v5_zero()));

    key5_store(p + W_R8, &k8);
}

CHAPOLY_INLINE uint64_t hsum(__m256i x)
{
    __m128i s = _mm_add_epi64(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    s = _mm_add_epi64(s, _mm_unpackhi_epi64(s, s));
    return (uint64_t)_mm_cvtsi128_si64(s);
}

/*
 * Sum the lanes of uncarried product sums (each below 2^60, so the sums of
 * four lanes fit 64 bits) into a radix-2^64 hash with h2 <= 4: the final
 * products need no vector carry.
 */
CHAPOLY_INLINE sc_hash acc_to_scalar(v5 d)
{
    uint64_t l0 = hsum(d.l0), l1 = hsum(d.l1), l2 = hsum(d.l2),
             l3 = hsum(d.l3), l4 = hsum(d.l4);
    sc_u128 t = (sc_u128)l0 + ((sc_u128)l1 << 26) + ((sc_u128)l2 << 52);
    uint64_t w0 = (uint64_t)t;

    /* limb 3 sits at 2^78 = 2^64 2^14, limb 4 at 2^104 = 2^64 2^40 */
    t = (t >> 64) + ((sc_u128)l3 << 14) + ((sc_u128)l4 << 40);
    return sc_fold(w0, (uint64_t)t, (uint64_t)(t >> 64));
}

CHAPOLY_INLINE v5 v5_load(const uint64_t *w)
{
    v5 h = { LD(w), LD(w + 4), LD(w + 8), LD(w + 12), LD(w + 16) };
    return h;
}

CHAPOLY_INLINE void v5_store(uint64_t *w, v5 h)
{
    _mm256_store_si256((__m256i *)w, h.l0);
    _mm256_store_si256((__m256i *)(w + 4), h.l1);
    _mm256_store_si256((__m256i *)(w + 8), h.l2);
    _mm256_store_si256((__m256i *)(w + 12), h.l3);
    _mm256_store_si256((__m256i *)(w + 16), h.l4);
}

CHAPOLY_INLINE void store_scalar(uint64_t *p, sc_hash r)
{
    put64(p + W_H, r.h0);
    put64(p + W_H + 1, r.h1);
    put64(p + W_H + 2, r.h2);
}

/*
 * Lanes h times their final powers V4, summed into a radix-2^64 hash: one
 * product limb at a time, the powers as memory operands (few live
 * registers: with all of V4 in registers GCC spilled them to the stack).
 */
CHAPOLY_INLINE sc_hash fold_lanes(const uint64_t *p, v5 h)
{
    const __m256i *v = (const __m256i *)(p + W_POW); /* r0..r4, s1..s4 */
    v5 d;

#define T(x, i) MUL(x, _mm256_load_si256(v + (i)))
    d.l0 = ADD(ADD(T(h.l0, 0), T(h.l1, 8)), ADD(ADD(T(h.l2, 7), T(h.l3, 6)), T(h.l4, 5)));
    d.l1 = ADD(ADD(T(h.l0, 1), T(h.l1, 0)), ADD(ADD(T(h.l2, 8), T(h.l3, 7)), T(h.l4, 6)));
    d.l2 = ADD(ADD(T(h.l0, 2), T(h.l1, 1)), ADD(ADD(T(h.l2, 0), T(h.l3, 8)), T(h.l4, 7)));
    d.l3 = ADD(ADD(T(h.l0, 3), T(h.l1, 2)), ADD(ADD(T(h.l2, 1), T(h.l3, 0)), T(h.l4, 8)));
    d.l4 = ADD(ADD(T(h.l0, 4), T(h.l1, 3)), ADD(ADD(T(h.l2, 2), T(h.l3, 1)), T(h.l4, 0)));
#undef T
    return acc_to_scalar(d);
}

/* The pending lanes at W_LANES folded into the hash at W_H. */
static __attribute__((noinline)) void fold4(uint64_t *p)
{
    store_scalar(p, fold_lanes(p, v5_load(p + W_LANES)));
}

/*
 * The same plus k (1..3) more blocks at in (lanes 4-k..3) with the powers
 * times r^k for the lanes.
 */
static __attribute__((noinline)) void finish4(uint64_t *p, const uint8_t *in, unsigned k,
                                              uint64_t padbit)
{
    const vkey5 *v = (const vkey5 *)(p + W_POW);
    vkey5 rk = pow_bcast(p, k);
    v5 t = { v->r0, v->r1, v->r2, v->r3, v->r4 };
    vkey5 q = key5_of(avx2_mul(t, &rk, v5_zero()));
    v5 d = avx2_mad(avx2_mad(v5_zero(), load_last(in, k, padbit), v), v5_load(p + W_LANES), &q);

    store_scalar(p, acc_to_scalar(d));
}

CHAPOLY_INLINE void scalar_run(uint64_t *p, const uint8_t *in, size_t nb, uint64_t padbit)
{
    sc_blocks_mem(p + W_H, p + W_KEY, in, nb, padbit);
    put64(p + W_SCALAR, p[W_SCALAR] + nb);
}

/*
 * A call from the scalar hash first hashes nb mod 4 blocks (4 more when
 * that is below poly-prefix and the powers are computed in the call) with
 * the scalar code, after the powers in program order: both are scalar
 * chains, which the core overlaps; the vector part is whole batches.
 */
CHAPOLY_INLINE size_t vec_prefix(size_t nb, int fresh_powers, size_t prefix)
{
    size_t pre = nb % 4;

    if (fresh_powers && pre + 1 <= prefix && nb - pre >= 8)
        pre += 4;
    return pre;
}

/*
 * Out of line, so short scalar calls do not pay its frame. Whole batches;
 * returns the blocks after the last one (0..3, for the caller's tail),
 * with the lanes stored and pending only if there are none. Nothing of
 * the table lives across the batch loop: a value more there changed the
 * compiler's register plan of the loop for the worse.
 */
static __attribute__((noinline)) size_t run4(uint64_t *p, const uint8_t *in, size_t nb,
                                             uint64_t padbit, size_t prefix)
{
    const __m256i padv = _mm256_set1_epi64x((long long)(padbit << 24));
    unsigned st = (unsigned)p[W_STATE];
    int once = !(st & (ST_POW | ST_L4));
    v5 h;

    if (st & ST_L4) {
        h = v5_load(p + W_LANES);
    } else { /* scalar hash: a prefix, then it joins block 0 in lane 0 */
        size_t pre = vec_prefix(nb, !(st & ST_POW), prefix);
        uint64_t l[5];

        if (!(st & ST_POW))
            avx2_powers(p);
        if (pre > 0) {
            scalar_run(p, in, pre, padbit);
            in += 16 * pre;
            nb -= pre;
        }
        to26(l, p[W_H], p[W_H + 1], p[W_H + 2]);
        h = load4(in, padv);
#define LANE0(x) _mm256_setr_epi64x((long long)(x), 0, 0, 0)
        h.l0 = ADD(h.l0, LANE0(l[0]));
        h.l1 = ADD(h.l1, LANE0(l[1]));
        h.l2 = ADD(h.l2, LANE0(l[2]));
        h.l3 = ADD(h.l3, LANE0(l[3]));
        h.l4 = ADD(h.l4, LANE0(l[4]));
#undef LANE0
        in += 64;
        nb -= 4;
    }
    st |= ST_POW;
    /* r^8 beside the first step, which needs only r^4 */
    if (nb >= 8 && !(st & ST_R8)) {
        r8_powers(p);
        st |= ST_R8;
    }

    /*
     * The multipliers are read from the state on every use (the barrier
     * stops GCC from hoisting them into registers it then spills): with
     * 16 ymm registers they would otherwise be copied to the stack, and
     * key material would stay there after return.
     */
    const vkey5 *r4 = (const vkey5 *)(p + W_R4), *r8 = (const vkey5 *)(p + W_R8);
    if (nb % 8 >= 4) {
        h = avx2_mul(h, r4, load4(in, padv));
        in += 64;
        nb -= 4;
    }
    while (nb >= 8) {
        __asm__ volatile("" : : : "memory");
        v5 d = avx2_mad_seq(load4(in + 64, padv), load4(in, padv), r4);
        h = avx2_carry(avx2_mad_seq(d, h, r8));
        in += 128;
        nb -= 8;
    }
    if (once) { /* whole batches (the prefix took nb mod 4): fold now, from registers */
        store_scalar(p, fold_lanes(p, h));
        p[W_STATE] = st;
        return 0;
    }
    v5_store(p + W_LANES, h);
    p[W_STATE] = nb == 0 ? st | ST_L4 : st & ~ST_L4;
    return nb;
}

void poly1305_init_avx2(const chapoly_kernels *kt, poly1305_state *st, const uint8_t key[32])
{
    (void)kt;
    uint64_t *p = st->priv;
    sc_key k = sc_key_from_bytes(key);

    put64(p + W_H, 0);
    put64(p + W_H + 1, 0);
    put64(p + W_H + 2, 0);
    put64(p + W_KEY, k.r0);
    put64(p + W_KEY + 1, k.r1);
    put64(p + W_KEY + 2, k.s1);
    put64(p + W_PAD, load64_le(key + 16));
    put64(p + W_PAD + 1, load64_le(key + 24));
    put64(p + W_STATE, 0);
    put64(p + W_SCALAR, 0);
}

/*
 * Spills: the vector path's frames (run4, finish4 and what they call) hold
 * limbs of the lanes (the hash, as secret as the key) and, in finish4,
 * products of the key powers; the scalar Horner loop's frame a hash word.
 * GCC 12 (-O3) parks run4's loop-carried lanes and message limbs between
 * the products (the products themselves no longer: avx2_mad_seq), and
 * finish4's products in a frame of ~0x3b0 bytes; clang 14 parks them too
 * (run4 ~0x230 bytes; one slot around the asm loop). All of it runs in
 * blocks_impl, and the caller overwrites the dead frames afterwards:
 *   GCC: 512 bytes after run4 alone (its frame with the pushes and
 *        blocks_impl's, under 0x1c0 bytes), 1 KiB when finish4 ran, with
 *        32-byte stores below the stack pointer in asm (no call); the
 *        scalar path leaves nothing (sc_blocks_mem keeps its words in
 *        registers);
 *   clang: 1 KiB after the vector path, 256 bytes after the scalar.
 * test_secrets checks every build for both compilers' spills: the key
 * words, the products of message and key-power limbs, and the state's lane
 * vectors; it fails at this level without the GCC scrub.
 */
#if defined(__clang__)
CHAPOLY_DEFINE_SCRUB(scrub_stack_1k, 1024)
CHAPOLY_DEFINE_SCRUB(scrub_stack_256, 256)
static inline void scrub_after_vector(int deep)
{
    (void)deep;
    scrub_stack_1k();
}
#else
static inline void scrub_stack_1k(void) {}
static inline void scrub_stack_256(void) {}

#define ZY(o) "vmovdqa %%ymm0, -" #o "(%[t])\n\t"
#define ZY_512 ZY(32) ZY(64) ZY(96) ZY(128) ZY(160) ZY(192) ZY(224) ZY(256) \
               ZY(288) ZY(320) ZY(352) ZY(384) ZY(416) ZY(448) ZY(480) ZY(512)
#define ZY_1K ZY_512 ZY(544) ZY(576) ZY(608) ZY(640) ZY(672) ZY(704) ZY(736) ZY(768) \
              ZY(800) ZY(832) ZY(864) ZY(896) ZY(928) ZY(960) ZY(992) ZY(1024)
/* the stores below a frame of 'frame' bytes (the area plus 32) */
#define SCRUB_YMM(frame, stores)                                         \
    __asm__ volatile("movq %%rsp, %[t]\n\t"                              \
                     "andq $-32, %[t]\n\t"                               \
                     "subq $" #frame ", %%rsp\n\t"                       \
                     "vpxor %%xmm0, %%xmm0, %%xmm0\n\t" stores            \
                     "addq $" #frame ", %%rsp\n\t"                       \
                     "vzeroupper"                                         \
                     : [t] "=&r"(t)                                       \
                     :                                                    \
                     : "xmm0", "memory")
/*
 * 512 bytes (deep: 1 KiB) below the stack pointer, from its 32-byte
 * boundary down; the stack pointer moves below the area first (valgrind),
 * and the upper halves are clean again after (the ymm stores dirtied them
 * after blocks_impl's own vzeroupper).
 */
static inline __attribute__((always_inline)) void scrub_after_vector(int deep)
{
    uintptr_t t;

    if (deep)
        SCRUB_YMM(1056, ZY_1K);
    else
        SCRUB_YMM(544, ZY_512);
}
#undef SCRUB_YMM
#undef ZY_1K
#undef ZY_512
#undef ZY
#endif

/* Returns 0 if only the scalar path ran, 1 after a vector path, 2 if finish4 ran. */
static __attribute__((noinline)) int blocks_impl(const chapoly_shapes *sh, uint64_t *p,
                                                 const uint8_t *in, size_t nb, uint64_t pad)
{
    unsigned s = (unsigned)p[W_STATE];

    if ((s & ST_L4) && nb < sh->poly_tail) {
        /* a short call after whole batches: fold them, then scalar blocks */
        fold4(p);
        p[W_STATE] = s & ~ST_L4;
        scalar_run(p, in, nb, pad);
        return 1;
    }
    if ((s & ST_L4) || nb >= sh->poly_vector_min ||
        (nb >= sh->poly_warm_min && ((s & ST_POW) || p[W_SCALAR] >= sh->poly_stream_min))) {
        size_t rest = run4(p, in, nb, pad, sh->poly_prefix);

        if (rest > 0) { /* lanes, then rest blocks: fold and scalar blocks, or a partial batch */
            in += 16 * (nb - rest);
            if (rest < sh->poly_tail) {
                fold4(p);
                scalar_run(p, in, rest, pad);
            } else {
                finish4(p, in, (unsigned)rest, pad);
                return 2;
            }
        }
        return 1;
    }
    scalar_run(p, in, nb, pad);
    return 0;
}

void poly1305_blocks_avx2(const chapoly_kernels *kt, poly1305_state *st, const uint8_t *in, size_t len,
                          unsigned padbit)
{
    size_t nb = len / POLY1305_BLOCK_BYTES;

    if (nb == 0)
        return;
    int v = blocks_impl(&kt->shapes, st->priv, in, nb, padbit ? 1 : 0);

    if (v)
        scrub_after_vector(v == 2);
    else
        scrub_stack_256();
}

void poly1305_scalar_avx2(uint64_t *p)
{
    unsigned s = (unsigned)p[W_STATE];

    if (s & ST_L4) {
        fold4(p);
        p[W_STATE] = s & ~ST_L4;
    }
}

/*
 * The state wiped after the tag (s: its state bits): what was written,
 * the lanes and V4, r^4 with the powers, r^8.
 */
CHAPOLY_INLINE void final_wipe(uint64_t *p, unsigned s)
{
    wipe_words(p, s & ST_R8 ? W_END : s & ST_POW ? W_R8 : W_LANES);
}

static __attribute__((noinline)) void final_impl(uint64_t *p, uint8_t tag[16])
{
    unsigned s = (unsigned)p[W_STATE];

    if (s & ST_L4)
        fold4(p);
    sc_hash h = { p[W_H], p[W_H + 1], p[W_H + 2] };
    sc_final(h, p[W_PAD], p[W_PAD + 1], tag);
    final_wipe(p, s);
}

void poly1305_final_avx2(const chapoly_kernels *kt, poly1305_state *st, uint8_t tag[16])
{
    (void)kt;
    final_impl(st->priv, tag);
    scrub_stack_1k(); /* the fold's and the final reduction's spills (clang; see above) */
}

/*
 * The last blocks and the tag (kernels.h). Few blocks (the MAC's padded
 * block, an AEAD's lengths block after its last ciphertext) on a scalar
 * hash, or fewer than poly_tail after pending lanes (folded first, from
 * memory into registers), run the scalar loop on the hash in registers
 * straight into the final reduction; anything else is poly1305_blocks,
 * then poly1305_final.
 */
static __attribute__((noinline)) void last_impl(uint64_t *p, const uint8_t *in, size_t nb,
                                                uint64_t pad, uint8_t tag[16])
{
    unsigned s = (unsigned)p[W_STATE];
    sc_hash h = (s & ST_L4) ? fold_lanes(p, v5_load(p + W_LANES))
                            : (sc_hash){ p[W_H], p[W_H + 1], p[W_H + 2] };

    sc_last(p, h, in, nb, pad, tag);
    final_wipe(p, s);
}

void poly1305_last_avx2(const chapoly_kernels *kt, poly1305_state *st, const uint8_t *in,
                        size_t len, unsigned padbit, uint8_t tag[16])
{
    size_t nb = len / POLY1305_BLOCK_BYTES;
    int lanes = (st->priv[W_STATE] & ST_L4) != 0;

    if (lanes ? nb == 0 || nb >= kt->shapes.poly_tail : !sc_last_short(&kt->shapes, nb)) {
        poly1305_blocks_avx2(kt, st, in, len, padbit);
        poly1305_final_avx2(kt, st, tag);
        return;
    }
    last_impl(st->priv, in, nb, padbit ? 1 : 0, tag);
    if (lanes)
        scrub_after_vector(0); /* the fold's spills (GCC; clang: 1 KiB) */
    else
        scrub_stack_256();
}
