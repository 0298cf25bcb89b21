/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "neon" level table (AArch64 Advanced SIMD): the vertical/row-layout
 * ChaCha20 and the scalar radix-2^64 + NEON radix-2^26 Poly1305. Handed
 * out by dispatch.c when the kernel reports ASIMD (getauxval(AT_HWCAP),
 * read in cpu_features.c). The ChaCha20 entries and the Poly1305 entries
 * are owned by different kernel files; keep each group's lines together.
 * HChaCha20 is one serial block: the portable function.
 * Shapes: the five-block ChaCha20 steps from 512 bytes (chacha_wide_min), the
 * vector Poly1305 from 24 blocks ("poly-vector"), both set by instruction
 * counts under qemu (scripts/arm64-insn-count.sh): no AArch64 core has
 * timed them yet.
 */
#include "kernels_impl.h"

const chapoly_kernels chapoly_kernels_neon = {
    .name = CHAPOLY_LEVEL_NEON,
    .features = "AArch64 Advanced SIMD (ASIMD)",
    .shapes = { .chacha_wide_min = 512, .aead_chunk = 0, .poly_vector_min = 24,
                .first_max = 1984, .chacha_batch = 256, .stream_min = 256, .stream_fill = 1 },
    .chacha20_xor = chacha20_xor_neon,
    .chacha20_keyblock_xor = chacha20_keyblock_xor_neon,
    .hchacha20 = hchacha20_portable,
    .poly1305_init = poly1305_init_neon,
    .poly1305_blocks = poly1305_blocks_neon,
    .poly1305_final = poly1305_final_neon,
    .poly1305_last = chapoly_generic_poly1305_last,
    .chacha20_multi_blocks = chapoly_generic_chacha20_multi_blocks,
    .poly1305_multi_blocks = chapoly_generic_poly1305_multi_blocks,
    .aead_xor_hash_range = chapoly_generic_xor_hash_range,
    .aead_first_xor_hash = chapoly_generic_first_xor_hash,
    .chacha20_multi_blocks_hash = chapoly_generic_multi_blocks_hash,
};
