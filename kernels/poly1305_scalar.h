/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scalar radix-2^64 Poly1305 pieces and the head of the state layout, shared
 * by the SIMD levels (poly1305_avx2.c, poly1305_avx512ifma.c, aead_avx512ifma.c).
 * Each SIMD level runs these below its vector threshold and for the final
 * reduction, so they are header-only and get compiled with that level's
 * flags (mulx from -mbmi2).
 *
 * Hash h = h0 + 2^64 h1 + 2^128 h2 is kept partially reduced: h2 <= 4
 * between blocks (see sc_mul_r). Clamped key r = r0 + 2^64 r1 with
 * r0, r1 < 2^60 and 4 | r1, so s1 = r1 + r1/4 = 5 r1 / 4 is exact and
 * 2^128 r1 == s1 (mod 2^130 - 5).
 */
#ifndef CHAPOLY_POLY1305_SCALAR_H
#define CHAPOLY_POLY1305_SCALAR_H

#include <immintrin.h>
#include "kernels_impl.h"

typedef unsigned __int128 sc_u128;

/*
 * ---- poly1305_state.priv (64-bit words): the head every SIMD level shares ----
 * The scalar hash and the key sit in the same words at every SIMD level, so
 * one init (poly1305_init_avx2) serves them all; from W_LANES on, each level
 * lays out its own lanes and key powers (poly1305_avx2.c, poly1305_ifma.h).
 */
#define W_H 0       /* h0 h1 h2, radix 2^64: the hash when no lanes pend */
#define W_KEY 3     /* r0 r1 s1 (radix 2^64, clamped) */
#define W_PAD 6     /* s0 s1: the pad added at final */
#define W_STATE 8   /* the level's ST_* bits, 0 after init */
#define W_SCALAR 9  /* blocks hashed by the scalar path since init */
#define W_LANES 16  /* first word of the level's vector area (64-byte aligned) */

/*
 * Store one state word as a plain 64-bit store. The compiler (GCC at -O2)
 * merges neighbouring word stores into one xmm store; the next call reads
 * the words back with scalar loads, which AMD Zen does not forward from a
 * vector store: a stall in every call.
 */
CHAPOLY_INLINE void put64(uint64_t *p, uint64_t v)
{
    __asm__("movq %1, %0" : "=m"(*p) : "r"(v));
}

typedef struct {
    uint64_t h0, h1, h2;
} sc_hash;

typedef struct {
    uint64_t r0, r1, s1;
} sc_key;

CHAPOLY_INLINE sc_key sc_key_from_bytes(const uint8_t key[16])
{
    sc_key k;

    k.r0 = load64_le(key) & 0x0ffffffc0fffffffULL;
    k.r1 = load64_le(key + 8) & 0x0ffffffc0ffffffcULL;
    k.s1 = k.r1 + (k.r1 >> 2);
    return k;
}

/*
 * h * r mod p, partially reduced. Needs h2 <= 7 (every double-word sum
 * below then stays under 2^127); returns h2 <= 4. Also used with h = a
 * power of r to build key powers: any h below 2^131 qualifies.
 * Written with explicit carries: the compiler (GCC) spilled the unsigned
 * __int128 temporaries of the obvious version to the stack, which also
 * lengthened the chain per block.
 */
CHAPOLY_INLINE sc_hash sc_mul_r(sc_hash h, sc_key k)
{
    unsigned long long d0l, d0h, d1l, d1h, a, b, c0, t;
    unsigned char c;

    d0l = _mulx_u64(h.h0, k.r0, &d0h);
    a = _mulx_u64(h.h1, k.s1, &b);
    c = _addcarry_u64(0, d0l, a, &d0l);
    _addcarry_u64(c, d0h, b, &d0h);

    d1l = _mulx_u64(h.h0, k.r1, &d1h);
    a = _mulx_u64(h.h1, k.r0, &b);
    c = _addcarry_u64(0, d1l, a, &d1l);
    _addcarry_u64(c, d1h, b, &d1h);
    c = _addcarry_u64(0, d1l, h.h2 * k.s1, &d1l); /* h2 s1 < 2^64 */
    _addcarry_u64(c, d1h, 0, &d1h);

    c = _addcarry_u64(0, d1l, d0h, &d1l);
    uint64_t d2 = h.h2 * k.r0 + d1h + c;

    /* Bits >= 130 (d2 >> 2) come back times 5, unconditionally. */
    c0 = (d2 & ~(uint64_t)3) + (d2 >> 2);
    c = _addcarry_u64(0, d0l, c0, &t);
    h.h0 = t;
    c = _addcarry_u64(c, d1l, 0, &t);
    h.h1 = t;
    h.h2 = (d2 & 3) + c;
    return h;
}

/* h += one 16-byte block (+ 2^128 padbit). h2 <= 4 in, <= 6 out. */
CHAPOLY_INLINE sc_hash sc_add_block(sc_hash h, const uint8_t *in,
                                    uint64_t padbit)
{
    unsigned long long t;
    unsigned char c = _addcarry_u64(0, h.h0, load64_le(in), &t);

    h.h0 = t;
    c = _addcarry_u64(c, h.h1, load64_le(in + 8), &t);
    h.h1 = t;
    h.h2 += padbit + c;
    return h;
}

/* One Horner chain over nb whole blocks. */
CHAPOLY_INLINE sc_hash sc_blocks(sc_hash h, sc_key k, const uint8_t *in,
                                 size_t nb, uint64_t padbit)
{
    while (nb > 0) {
        h = sc_mul_r(sc_add_block(h, in, padbit), k);
        in += 16;
        nb--;
    }
    return h;
}

/*
 * The Horner loop of sc_blocks_mem and sc_blocks_reg: the hash in h0..h2,
 * nb >= 1 blocks at in, the key words only memory operands at k.
 */
#define SC_BLOCK_LOOP                                                   \
    "1:\n\t"                                                            \
    /* h += m + 2^128 padbit */                                         \
    "addq 0(%[in]), %[h0]\n\t"                                          \
    "adcq 8(%[in]), %[h1]\n\t"                                          \
    "adcq %[pad], %[h2]\n\t"                                            \
    /* d0 = h0 r0 + h1 s1 -> (h0, a); d1 = h0 r1 + h1 r0 -> (b, c) */   \
    "movq %[h0], %%rdx\n\t"                                             \
    "mulxq 0(%[k]), %[h0], %[a]\n\t"                                    \
    "mulxq 8(%[k]), %[b], %[c]\n\t"                                     \
    "movq %[h1], %%rdx\n\t"                                             \
    "mulxq 16(%[k]), %[h1], %[e]\n\t"                                   \
    "addq %[h1], %[h0]\n\t"                                             \
    "adcq %[e], %[a]\n\t"                                               \
    "mulxq 0(%[k]), %[h1], %[e]\n\t"                                    \
    "addq %[h1], %[b]\n\t"                                              \
    "adcq %[e], %[c]\n\t"                                               \
    /* d1 += h2 s1 (< 2^64) + (d0 >> 64); d2 = h2 r0 + (d1 >> 64) */    \
    "movq %[h2], %%rdx\n\t"                                             \
    "imulq 16(%[k]), %%rdx\n\t"                                         \
    "imulq 0(%[k]), %[h2]\n\t"                                          \
    "addq %%rdx, %[b]\n\t"                                              \
    "adcq $0, %[c]\n\t"                                                 \
    "addq %[a], %[b]\n\t"                                               \
    "adcq %[c], %[h2]\n\t"                                              \
    /* bits >= 130 times 5 back in: h0 += (d2 & ~3) + (d2 >> 2) */      \
    "movq %[h2], %[a]\n\t"                                              \
    "andq $-4, %[a]\n\t"                                                \
    "movq %[h2], %[c]\n\t"                                              \
    "shrq $2, %[c]\n\t"                                                 \
    "addq %[c], %[a]\n\t"                                               \
    "andq $3, %[h2]\n\t"                                                \
    "addq %[a], %[h0]\n\t"                                              \
    "adcq $0, %[b]\n\t"                                                 \
    "adcq $0, %[h2]\n\t"                                                \
    "movq %[b], %[h1]\n\t"                                              \
    "leaq 16(%[in]), %[in]\n\t"                                         \
    "decq %[nb]\n\t"                                                    \
    "jnz 1b\n\t"
/*
 * One Horner step in asm for the stitched kernels: the block at %[m]
 * (padbit 1), m += 16, h = (h + m) r mod p partially reduced (the
 * arithmetic and bounds of SC_BLOCK_LOOP) with the hash in %[h0..h2],
 * temporaries %[pa] %[pb] %[pc] %[pe] and rdx, the key words r0 r1 s1 at
 * the asm operands KR0 KR1 KS1 (strings). Clobbers rdx and the flags.
 */
#define SC_STEP_ASM(KR0, KR1, KS1)                                           \
    "addq 0(%[m]), %[h0]\n\t"                                                 \
    "adcq 8(%[m]), %[h1]\n\t"                                                 \
    "adcq $1, %[h2]\n\t"                                                      \
    "movq %[h0], %%rdx\n\t"                                                   \
    "mulxq " KR0 ", %[h0], %[pa]\n\t"                                         \
    "mulxq " KR1 ", %[pb], %[pc]\n\t"                                         \
    "movq %[h1], %%rdx\n\t"                                                   \
    "mulxq " KS1 ", %[h1], %[pe]\n\t"                                         \
    "addq %[h1], %[h0]\n\t"                                                   \
    "adcq %[pe], %[pa]\n\t"                                                   \
    "mulxq " KR0 ", %[h1], %[pe]\n\t"                                         \
    "addq %[h1], %[pb]\n\t"                                                   \
    "adcq %[pe], %[pc]\n\t"                                                   \
    "movq %[h2], %%rdx\n\t"                                                   \
    "imulq " KS1 ", %%rdx\n\t"                                                \
    "imulq " KR0 ", %[h2]\n\t"                                                \
    "addq %%rdx, %[pb]\n\t"                                                   \
    "adcq $0, %[pc]\n\t"                                                      \
    "addq %[pa], %[pb]\n\t"                                                   \
    "adcq %[pc], %[h2]\n\t"                                                   \
    "movq %[h2], %[pa]\n\t"                                                   \
    "andq $-4, %[pa]\n\t"                                                     \
    "movq %[h2], %[pc]\n\t"                                                   \
    "shrq $2, %[pc]\n\t"                                                      \
    "addq %[pc], %[pa]\n\t"                                                   \
    "andq $3, %[h2]\n\t"                                                      \
    "addq %[pa], %[h0]\n\t"                                                   \
    "adcq $0, %[pb]\n\t"                                                      \
    "adcq $0, %[h2]\n\t"                                                      \
    "movq %[pb], %[h1]\n\t"                                                   \
    "leaq 16(%[m]), %[m]\n\t"
/* the loop's temporaries zeroed (partial products of the hash) */
#define SC_BLOCK_ZERO_TMP                                               \
    "xorl %k[a], %k[a]\n\t"                                             \
    "xorl %k[b], %k[b]\n\t"                                             \
    "xorl %k[c], %k[c]\n\t"                                             \
    "xorl %k[e], %k[e]\n\t"                                             \
    "xorl %%edx, %%edx"

/*
 * sc_blocks on the state in memory, nb >= 1 blocks, in one asm loop: the
 * key words r0, r1, s1 at k[0..2] are only ever memory operands of mulx
 * and imul, and the hash at h[0..2] stays in registers until it is stored
 * back, so no compiler (GCC kept r1 and a hash word in spill slots of the
 * C loop) can leave a key or hash word on the stack: the caller needs
 * no dead-stack scrub. The loop's registers are zeroed at its end: the
 * compiler may have given it callee-saved ones, which a function the
 * caller calls next pushes onto the stack (poly1305_multi_blocks: a scalar
 * chain, then poly1305_blocks for a long message). Same arithmetic and
 * bounds as sc_add_block + sc_mul_r. Needs BMI2 (mulx).
 */
CHAPOLY_INLINE void sc_blocks_mem(uint64_t h[3], const uint64_t k[3],
                                  const uint8_t *in, size_t nb, uint64_t padbit)
{
    uint64_t h0, h1, h2, a, b, c, e, dx;

    __asm__ volatile(
        "movq 0(%[h]), %[h0]\n\t"
        "movq 8(%[h]), %[h1]\n\t"
        "movq 16(%[h]), %[h2]\n"
        SC_BLOCK_LOOP
        "movq %[h0], 0(%[h])\n\t"
        "movq %[h1], 8(%[h])\n\t"
        "movq %[h2], 16(%[h])\n\t"
        /* no hash word stays behind in a register (see above) */
        "xorl %k[h0], %k[h0]\n\t"
        "xorl %k[h1], %k[h1]\n\t"
        "xorl %k[h2], %k[h2]\n\t"
        SC_BLOCK_ZERO_TMP
        : [h0] "=&r"(h0), [h1] "=&r"(h1), [h2] "=&r"(h2), [a] "=&r"(a),
          [b] "=&r"(b), [c] "=&r"(c), [e] "=&r"(e), "=&d"(dx),
          [in] "+r"(in), [nb] "+r"(nb)
        : [h] "r"(h), [k] "r"(k), [pad] "r"(padbit)
        : "cc", "memory");
}

/*
 * The same loop on a hash in registers, for the tag right after it
 * (sc_final): no store and reload of the hash between the last blocks and
 * the final reduction. The caller's next step is sc_final, which consumes
 * the words.
 */
CHAPOLY_INLINE sc_hash sc_blocks_reg(sc_hash h, const uint64_t k[3], const uint8_t *in,
                                     size_t nb, uint64_t padbit)
{
    uint64_t h0 = h.h0, h1 = h.h1, h2 = h.h2, a, b, c, e, dx;

    __asm__ volatile(
        SC_BLOCK_LOOP
        SC_BLOCK_ZERO_TMP
        : [h0] "+&r"(h0), [h1] "+&r"(h1), [h2] "+&r"(h2), [a] "=&r"(a),
          [b] "=&r"(b), [c] "=&r"(c), [e] "=&r"(e), "=&d"(dx),
          [in] "+r"(in), [nb] "+r"(nb)
        : [k] "r"(k), [pad] "r"(padbit)
        : "cc", "memory");
    h.h0 = h0;
    h.h1 = h1;
    h.h2 = h2;
    return h;
}

/*
 * Zero n state words (a multiple of 8) with aligned vector stores, as wide
 * as the level's flags allow, four to a barrier (the barrier keeps the
 * stores: the state may never be read again; rep stos, what GCC makes of
 * memset or of a bare loop here, cost more than the rest of a short MAC;
 * one store per iteration cost a loop branch per store).
 */
static inline void wipe_words(uint64_t *p, size_t n)
{
#ifdef __AVX512F__
    const __m512i z = _mm512_setzero_si512();
    size_t i = 0;

    for (; i + 32 <= n; i += 32) {
        _mm512_store_si512((void *)(p + i), z);
        _mm512_store_si512((void *)(p + i + 8), z);
        _mm512_store_si512((void *)(p + i + 16), z);
        _mm512_store_si512((void *)(p + i + 24), z);
        __asm__ volatile("" : : "r"(p + i) : "memory");
    }
    for (; i < n; i += 8) {
        _mm512_store_si512((void *)(p + i), z);
        __asm__ volatile("" : : "r"(p + i) : "memory");
    }
#else
    const __m256i z = _mm256_setzero_si256();
    size_t i = 0;

    for (; i + 16 <= n; i += 16) {
        _mm256_store_si256((__m256i *)(p + i), z);
        _mm256_store_si256((__m256i *)(p + i + 4), z);
        _mm256_store_si256((__m256i *)(p + i + 8), z);
        _mm256_store_si256((__m256i *)(p + i + 12), z);
        __asm__ volatile("" : : "r"(p + i) : "memory");
    }
    for (; i < n; i += 4) {
        _mm256_store_si256((__m256i *)(p + i), z);
        __asm__ volatile("" : : "r"(p + i) : "memory");
    }
#endif
}

/*
 * Value v = v0 + 2^64 v1 + 2^128 v2 with v2 < 2^62 folded to v2 <= 4
 * (same residue mod p). Explicit carries, as in sc_mul_r: GCC made of the
 * unsigned __int128 sums about twice the instructions (zeroed high words,
 * adds of zero), and a final reduction is part of every tag.
 */
CHAPOLY_INLINE sc_hash sc_fold(uint64_t v0, uint64_t v1, uint64_t v2)
{
    unsigned long long t0, t1;
    unsigned char c = _addcarry_u64(0, v0, (v2 & ~(uint64_t)3) + (v2 >> 2), &t0);
    sc_hash h;

    c = _addcarry_u64(c, v1, 0, &t1);
    h.h0 = t0;
    h.h1 = t1;
    h.h2 = (v2 & 3) + c;
    return h;
}

/*
 * tag = (h mod p + s) mod 2^128, for h2 <= 7. Constant time: no branch,
 * the choice between h and h - p is a mask. One asm block: the C forms
 * (unsigned __int128 sums, or _addcarry_u64 with the tag stored from the
 * words) came out of GCC about twice as long, and the _addcarry_u64 one
 * kept h + 5 and the tag words in dead stack slots.
 */
CHAPOLY_INLINE void sc_final(sc_hash h, uint64_t s0, uint64_t s1,
                             uint8_t tag[16])
{
    uint64_t h0 = h.h0, h1 = h.h1, h2 = h.h2, t, g0, g1;

    __asm__ volatile(
        /* fold: h += (h2 >> 2) * 5, h2 &= 3; then h < 2^130 + 5 */
        "movq %[h2], %[t]\n\t"
        "andq $-4, %[t]\n\t"
        "movq %[h2], %[g0]\n\t"
        "shrq $2, %[g0]\n\t"
        "addq %[g0], %[t]\n\t"
        "andq $3, %[h2]\n\t"
        "addq %[t], %[h0]\n\t"
        "adcq $0, %[h1]\n\t"
        "adcq $0, %[h2]\n\t"
        /* g = h + 5; g2 >= 4 exactly when h >= p: mask = -(g2 >> 2) */
        "movq %[h0], %[g0]\n\t"
        "addq $5, %[g0]\n\t"
        "movq %[h1], %[g1]\n\t"
        "adcq $0, %[g1]\n\t"
        "adcq $0, %[h2]\n\t"
        "shrq $2, %[h2]\n\t"
        "negq %[h2]\n\t"
        /* f = h ^ ((h ^ g) & mask), then f + s mod 2^128 */
        "xorq %[h0], %[g0]\n\t"
        "andq %[h2], %[g0]\n\t"
        "xorq %[g0], %[h0]\n\t"
        "xorq %[h1], %[g1]\n\t"
        "andq %[h2], %[g1]\n\t"
        "xorq %[g1], %[h1]\n\t"
        "addq %[s0], %[h0]\n\t"
        "adcq %[s1], %[h1]\n\t"
        "movq %[h0], 0(%[tag])\n\t"
        "movq %[h1], 8(%[tag])"
        : [h0] "+&r"(h0), [h1] "+&r"(h1), [h2] "+&r"(h2), [t] "=&r"(t), [g0] "=&r"(g0),
          [g1] "=&r"(g1)
        : [s0] "rm"(s0), [s1] "rm"(s1), [tag] "r"(tag)
        : "cc", "memory");
}

/*
 * poly1305_last's short form: 1 if nb blocks on a state with no lanes
 * pending take the scalar path of poly1305_blocks whatever the state's
 * history (below every vector crossover), so the call can hash them on
 * the hash in registers and go on to the tag (sc_last).
 */
CHAPOLY_INLINE int sc_last_short(const chapoly_shapes *sh, size_t nb)
{
    return nb >= 1 && nb < sh->poly_vector_min && nb < sh->poly_warm_min &&
           (sh->poly_vector2_min == 0 || nb < sh->poly_vector2_min);
}

/*
 * h, then nb >= 1 blocks at in, then the tag: the hash never stored. The
 * pad words are read after the loop (its asm clobbers memory), so they go
 * into the final reduction as memory operands: read before it, GCC kept
 * one in a stack slot across the loop.
 */
CHAPOLY_INLINE void sc_last(const uint64_t *p, sc_hash h, const uint8_t *in, size_t nb,
                            uint64_t padbit, uint8_t tag[16])
{
    h = sc_blocks_reg(h, p + W_KEY, in, nb, padbit);
    sc_final(h, p[W_PAD], p[W_PAD + 1], tag);
}

#endif
