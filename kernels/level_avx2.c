/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "avx2" level table. Entries this level does not accelerate point at
 * the portable functions (valid for any state they initialise themselves).
 * The ChaCha20 entries and the Poly1305 entries are owned by different
 * kernel files; keep each group's lines together.
 *
 * aead_xor_hash is the stitched 8-lane ChaCha20 + scalar (mulx) Poly1305
 * of aead_avx2.c.
 *
 * HChaCha20 is one serial block with nothing to interleave: the scalar
 * portable function measured faster than an xmm row-set version on the
 * development machine (about 80 ns against 106 ns with vprold and 136 ns
 * with AVX2 rotates), so every level uses it.
 */
#include "kernels_impl.h"

const chapoly_kernels chapoly_kernels_avx2 = {
    .name = "avx2",
    .features = "AVX2 BMI2",
    .chacha20_xor = chacha20_xor_avx2,
    .chacha20_keyblock_xor = chacha20_keyblock_xor_avx2,
    .hchacha20 = hchacha20_portable,
    .poly1305_init = poly1305_init_avx2,
    .poly1305_blocks = poly1305_blocks_avx2,
    .poly1305_final = poly1305_final_avx2,
    .aead_xor_hash = aead_xor_hash_avx2,
    .chacha20_multi_blocks = chacha20_multi_blocks_avx2,
    .poly1305_multi_blocks = poly1305_multi_blocks_avx2,
    .aead_xor_hash_range = aead_xor_hash_range_avx2,
    .aead_first_xor_hash = aead_first_xor_hash_avx2,
};
