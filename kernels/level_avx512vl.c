/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "avx512vl" level table: ymm ChaCha20 (vprold, opmasks,
 * chacha20_avx512vl.c) + AVX2 Poly1305, handed out by chapoly_kernels_best()
 * (dispatch.c, which also holds its mask) to Skylake-X and Cascade Lake
 * servers (family 6 model 0x55), which lower their clock under zmm load
 * and have no IFMA. Poly1305 crossovers as at "avx2" (level_avx2.c: the
 * MAC from 22 blocks, the AEADs from 32). No function in the table looks at the CPU. The
 * ChaCha20 entries and the Poly1305 entries are owned by different kernel
 * files; keep each group's lines together.
 */
#include "kernels_impl.h"

const chapoly_kernels chapoly_kernels_avx512vl = {
    .name = CHAPOLY_LEVEL_AVX512VL,
    .features = "AVX2 BMI2 AVX-512F/VL/BW/DQ",
    .shapes = { .one_block_rows = 1, .aead_chunk = 0, CHAPOLY_AVX2_POLY_SHAPES,
                .first_max = 1984, .chacha_batch = 512, .stream_min = 512, .stream_fill = 1 },
    .chacha20_xor = chacha20_xor_avx512vl,
    .chacha20_keyblock_xor = chacha20_keyblock_xor_avx512vl,
    .hchacha20 = hchacha20_avx512vl,
    .poly1305_init = poly1305_init_avx2,
    .poly1305_blocks = poly1305_blocks_avx2,
    .poly1305_final = poly1305_final_avx2,
    .poly1305_last = poly1305_last_avx2,
    .chacha20_multi_blocks = chacha20_multi_blocks_avx2,
    .poly1305_multi_blocks = poly1305_multi_blocks_avx2,
    .aead_xor_hash_range = chapoly_generic_xor_hash_range,
    .chacha20_multi_blocks_hash = chacha20_multi_blocks_hash_avx2,
    .aead_first_xor_hash = chapoly_generic_first_xor_hash,
};
