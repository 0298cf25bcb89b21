/* SPDX-License-Identifier: Apache-2.0 */
/*
 * poly1305_multi_blocks in front of a SIMD level's poly1305_blocks, for the
 * levels with the AVX2 Poly1305 (included by batch_avx2.c, built with that
 * level's flags): the short messages' scalar Horner chains
 * (poly1305_scalar.h, the state head every SIMD level shares) in one call.
 * The "avx512" level has its own, eight messages in IFMA lanes
 * (batch_avx512ifma.c).
 */
#ifndef CHAPOLY_BATCH_POLY_H
#define CHAPOLY_BATCH_POLY_H

#include "poly1305_scalar.h"

typedef void blocks_fn(const chapoly_kernels *kt, poly1305_state *st, const uint8_t *in, size_t len, unsigned padbit);

/*
 * One call for all messages: a message shorter than the level's vector
 * path ("poly-vector" blocks) whose state is still scalar (no lanes, no
 * key powers: W_STATE 0), where the level's poly1305_blocks would run the
 * same scalar Horner chain, runs the asm Horner chain (sc_blocks_mem: key
 * and hash never leave the registers and the state, so nothing to scrub)
 * straight on its state, two such messages' chains stepped together in
 * one asm loop (sc_blocks_pair); any other goes to the level's own blocks
 * function. (Two chains stepped together in C with the sc_mul_r
 * intrinsics make the compiler spill the carries of both through the
 * stack, and ran slower: docs/performance.md.)
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CHAPOLY_BATCH_POLY_SANITIZED 1
#endif
#endif
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
    !defined(CHAPOLY_BATCH_POLY_SANITIZED)
/*
 * One Horner step of the chain X (hash X0 X1 X2, key at KX: r0 r1 s1,
 * block at IX, padbit 1), the arithmetic and bounds of SC_BLOCK_LOOP; the
 * temporaries a b c e and rdx are shared by both chains of the pair loop
 * (the core renames them, so the two chains still overlap).
 */
#define SC_PAIR_STEP(X0, X1, X2, KX, IX)                                \
    "addq 0(%[" IX "]), %[" X0 "]\n\t"                                  \
    "adcq 8(%[" IX "]), %[" X1 "]\n\t"                                  \
    "adcq $1, %[" X2 "]\n\t"                                            \
    "movq %[" X0 "], %%rdx\n\t"                                         \
    "mulxq 0(%[" KX "]), %[" X0 "], %[a]\n\t"                            \
    "mulxq 8(%[" KX "]), %[b], %[c]\n\t"                                 \
    "movq %[" X1 "], %%rdx\n\t"                                         \
    "mulxq 16(%[" KX "]), %[" X1 "], %[e]\n\t"                           \
    "addq %[" X1 "], %[" X0 "]\n\t"                                      \
    "adcq %[e], %[a]\n\t"                                               \
    "mulxq 0(%[" KX "]), %[" X1 "], %[e]\n\t"                            \
    "addq %[" X1 "], %[b]\n\t"                                          \
    "adcq %[e], %[c]\n\t"                                               \
    "movq %[" X2 "], %%rdx\n\t"                                         \
    "imulq 16(%[" KX "]), %%rdx\n\t"                                    \
    "imulq 0(%[" KX "]), %[" X2 "]\n\t"                                  \
    "addq %%rdx, %[b]\n\t"                                              \
    "adcq $0, %[c]\n\t"                                                 \
    "addq %[a], %[b]\n\t"                                               \
    "adcq %[c], %[" X2 "]\n\t"                                          \
    "movq %[" X2 "], %[a]\n\t"                                          \
    "andq $-4, %[a]\n\t"                                                \
    "movq %[" X2 "], %[c]\n\t"                                          \
    "shrq $2, %[c]\n\t"                                                 \
    "addq %[c], %[a]\n\t"                                               \
    "andq $3, %[" X2 "]\n\t"                                            \
    "addq %[a], %[" X0 "]\n\t"                                          \
    "adcq $0, %[b]\n\t"                                                 \
    "adcq $0, %[" X2 "]\n\t"                                            \
    "movq %[b], %[" X1 "]\n\t"                                          \
    "leaq 16(%[" IX "]), %[" IX "]\n\t"

/*
 * Two messages' chains stepped together, nb >= 1 blocks each (padbit 1):
 * one Horner chain is bound by its multiply latency, two fill the integer
 * units. Hash and key words in the states (priv W_H, W_KEY), nothing else
 * leaves the registers, and the loop's temporaries are zeroed at its end
 * (as sc_blocks_mem's).
 */
CHAPOLY_INLINE void sc_blocks_pair(uint64_t *pa, const uint8_t *ia, uint64_t *pb,
                                   const uint8_t *ib, size_t nb)
{
    uint64_t x0 = pa[W_H], x1 = pa[W_H + 1], x2 = pa[W_H + 2];
    uint64_t y0 = pb[W_H], y1 = pb[W_H + 1], y2 = pb[W_H + 2], a, b, c, e, dx;
    const uint64_t *ka = pa + W_KEY, *kb = pb + W_KEY;

    __asm__ volatile("1:\n\t"
                     SC_PAIR_STEP("x0", "x1", "x2", "ka", "ia")
                     SC_PAIR_STEP("y0", "y1", "y2", "kb", "ib")
                     "decq %[nb]\n\t"
                     "jnz 1b\n\t"
                     "xorl %k[a], %k[a]\n\t"
                     "xorl %k[b], %k[b]\n\t"
                     "xorl %k[c], %k[c]\n\t"
                     "xorl %k[e], %k[e]\n\t"
                     "xorl %%edx, %%edx\n\t"
                     : [x0] "+&r"(x0), [x1] "+&r"(x1), [x2] "+&r"(x2), [y0] "+&r"(y0),
                       [y1] "+&r"(y1), [y2] "+&r"(y2), [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c),
                       [e] "=&r"(e), "=&d"(dx), [ia] "+&r"(ia), [ib] "+&r"(ib), [nb] "+m"(nb)
                     : [ka] "r"(ka), [kb] "r"(kb)
                     : "cc", "memory");
    put64(pa + W_H, x0);
    put64(pa + W_H + 1, x1);
    put64(pa + W_H + 2, x2);
    put64(pb + W_H, y0);
    put64(pb + W_H + 1, y1);
    put64(pb + W_H + 2, y2);
}
#define CHAPOLY_BATCH_POLY_PAIRS 1
#endif

/* A message the scalar chain takes here: state still scalar, shorter than the vector path. */
CHAPOLY_INLINE int multi_scalar(const chapoly_kernels *kt, const uint64_t *p, size_t nb)
{
    return nb > 0 && p[W_STATE] == 0 && nb < kt->shapes.poly_vector_min;
}

CHAPOLY_INLINE void multi_poly(const chapoly_kernels *kt, poly1305_state *const st[], const uint8_t *const in[],
                               const size_t len[], size_t n, blocks_fn *blocks)
{
    size_t held = n; /* a scalar message waiting for a partner (n: none) */

    for (size_t i = 0; i < n; i++) {
        uint64_t *p = st[i]->priv;
        size_t nb = len[i] / POLY1305_BLOCK_BYTES;

        if (nb == 0)
            continue;
#ifdef CHAPOLY_BATCH_POLY_PAIRS
        if (held != n && st[held] == st[i]) { /* one state twice: its chains in order */
            uint64_t *q = st[held]->priv;
            size_t nq = len[held] / POLY1305_BLOCK_BYTES;

            sc_blocks_mem(q + W_H, q + W_KEY, in[held], nq, 1);
            put64(q + W_SCALAR, q[W_SCALAR] + nq);
            held = n;
        }
#endif
        if (!multi_scalar(kt, p, nb)) {
            blocks(kt, st[i], in[i], len[i], 1);
            continue;
        }
#ifdef CHAPOLY_BATCH_POLY_PAIRS
        if (held == n) {
            held = i;
            continue;
        }
        /* the pair: both chains over the shorter length, then the rest of the longer */
        uint64_t *q = st[held]->priv;
        size_t nq = len[held] / POLY1305_BLOCK_BYTES, both = nb < nq ? nb : nq;

        sc_blocks_pair(q, in[held], p, in[i], both);
        if (nq > both)
            sc_blocks_mem(q + W_H, q + W_KEY, in[held] + 16 * both, nq - both, 1);
        if (nb > both)
            sc_blocks_mem(p + W_H, p + W_KEY, in[i] + 16 * both, nb - both, 1);
        put64(q + W_SCALAR, q[W_SCALAR] + nq);
        put64(p + W_SCALAR, p[W_SCALAR] + nb);
        held = n;
#else
        sc_blocks_mem(p + W_H, p + W_KEY, in[i], nb, 1);
        put64(p + W_SCALAR, p[W_SCALAR] + nb);
#endif
    }
    if (held != n) { /* an odd one out */
        uint64_t *q = st[held]->priv;
        size_t nq = len[held] / POLY1305_BLOCK_BYTES;

        sc_blocks_mem(q + W_H, q + W_KEY, in[held], nq, 1);
        put64(q + W_SCALAR, q[W_SCALAR] + nq);
    }
}

#endif
