/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The zmm AVX-512 level tables, one per combination a CPU gets from
 * chapoly_kernels_best() (dispatch.c, which also holds their masks; the
 * ymm level "avx512vl" is in level_avx512vl.c):
 *   avx512         zmm ChaCha20 + IFMA Poly1305 (+ the stitched IFMA
 *                  range, "aead=stitched"): AVX-512 CPUs with IFMA;
 *   avx512-noifma  zmm ChaCha20 + AVX2 Poly1305, no stitched kernel: any
 *                  other AVX-512 F/VL/BW/DQ CPU without IFMA (virtual
 *                  machines that hide IFMA or the model number, for one).
 * The IFMA Poly1305 crossovers of "avx512" are those for a CPU with no
 * profile row (cpu_profiles.c), not slower than the scalar code on any core
 * estimated; the rows set what each core prefers. A streaming refill is at
 * least one zmm column batch (stream_min): a longer one makes a short
 * message in two updates pay for keystream it never uses.
 * "avx512-noifma" takes its AVX2 Poly1305 crossovers from "avx2".
 * first_long (both): a one-shot whose text after the head is whole
 * batches, at least two, starts with two batches beside the key block,
 * which run in flight as a pair (chacha-pairs); the ymm levels have no
 * pair in that call and keep 0 (the measurements: docs/performance.md,
 * "Measurements behind the code").
 * No function in these tables looks at the CPU: a table is handed out only
 * on a CPU that runs every object its functions live in. Entries a level
 * does not accelerate point at the portable functions. The ChaCha20 entries
 * and the Poly1305 entries are owned by different kernel files; keep each
 * group's lines together.
 */
#include "kernels_impl.h"

const chapoly_kernels chapoly_kernels_avx512 = {
    .name = CHAPOLY_LEVEL_AVX512,
    .features = "AVX2 BMI2 AVX-512F/VL/BW/DQ IFMA",
    .shapes = { .one_block_rows = 1, .aead_stitched = 0, .chacha_pairs_min = 2048,
                .aead_chunk = 16384, .poly_vector_min = 20, .poly_vector2_min = 64,
                .poly_stream_min = 32, .poly_warm_min = 16, .poly_prefix = 3, .poly_tail = 3,
                .poly_keep = 64, .multi_lanes_min = 2, .first_max = 1984, .chacha_batch = 1024,
                .stream_min = 1024, .stream_fill = 1, .first_long = 1 },
    .chacha20_xor = chacha20_xor_avx512,
    .chacha20_keyblock_xor = chacha20_keyblock_xor_avx512,
    .hchacha20 = hchacha20_avx512vl,
    .poly1305_init = poly1305_init_avx2,
    .poly1305_blocks = poly1305_blocks_avx512ifma,
    .poly1305_final = poly1305_final_avx512ifma,
    .poly1305_last = poly1305_last_avx512ifma,
    .chacha20_multi_blocks = chacha20_multi_blocks_avx512,
    .poly1305_multi_blocks = poly1305_multi_blocks_avx512ifma,
    .aead_xor_hash_range = aead_xor_hash_range_avx512ifma,
    .aead_first_xor_hash = chapoly_generic_first_xor_hash,
    .chacha20_multi_blocks_hash = chapoly_generic_multi_blocks_hash,
};

const chapoly_kernels chapoly_kernels_avx512_noifma = {
    .name = CHAPOLY_LEVEL_AVX512_NOIFMA,
    .features = "AVX2 BMI2 AVX-512F/VL/BW/DQ",
    .shapes = { .one_block_rows = 1, .chacha_pairs_min = 2048, .aead_chunk = 0,
                CHAPOLY_AVX2_POLY_SHAPES, .first_max = 1984, .chacha_batch = 1024,
                .stream_min = 2048, .stream_fill = 1, .first_long = 1 },
    .chacha20_xor = chacha20_xor_avx512,
    .chacha20_keyblock_xor = chacha20_keyblock_xor_avx512,
    .hchacha20 = hchacha20_avx512vl,
    .poly1305_init = poly1305_init_avx2,
    .poly1305_blocks = poly1305_blocks_avx2,
    .poly1305_final = poly1305_final_avx2,
    .poly1305_last = poly1305_last_avx2,
    .chacha20_multi_blocks = chacha20_multi_blocks_avx512,
    .poly1305_multi_blocks = poly1305_multi_blocks_avx2,
    .aead_xor_hash_range = chapoly_generic_xor_hash_range,
    .aead_first_xor_hash = chapoly_generic_first_xor_hash,
    .chacha20_multi_blocks_hash = chapoly_generic_multi_blocks_hash,
};
