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
 * straight on its state; any other goes to the level's own blocks
 * function. Consecutive short chains overlap only through out-of-order
 * execution. (Two chains stepped together in C with the sc_mul_r
 * intrinsics make the compiler spill the carries of both through the
 * stack, and ran slower: docs/performance.md.)
 */
CHAPOLY_INLINE void multi_poly(const chapoly_kernels *kt, poly1305_state *const st[], const uint8_t *const in[],
                               const size_t len[], size_t n, blocks_fn *blocks)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t *p = st[i]->priv;
        size_t nb = len[i] / POLY1305_BLOCK_BYTES;

        if (nb == 0)
            continue;
        if (p[W_STATE] != 0 || nb >= kt->shapes.poly_vector_min) {
            blocks(kt, st[i], in[i], len[i], 1);
            continue;
        }
        sc_blocks_mem(p + W_H, p + W_KEY, in[i], nb, 1);
        put64(p + W_SCALAR, p[W_SCALAR] + nb);
    }
}

#endif
