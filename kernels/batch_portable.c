/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chacha20_multi_blocks at the portable level: the oracle of the SIMD
 * batch kernels (batch_avx2.c, batch_avx512.c). One portable block per
 * input state; words 0..3 of every state are the constants (kernels.h), so
 * the block function of the state is the keystream block of its key,
 * counter and nonce.
 */
#include "kernels_impl.h"

void chacha20_multi_blocks_portable(const chapoly_kernels *kt, uint8_t *out, const uint32_t *states, size_t n)
{
    (void)kt;
    uint32_t x[16];

    for (size_t i = 0; i < n; i++) {
        chacha20_block_portable(x, states + 16 * i + 4, states + 16 * i + 12);
        for (int j = 0; j < 16; j++)
            store32_le(out + 64 * i + 4 * j, x[j]);
    }
    chapoly_wipe(x, sizeof(x));
}
