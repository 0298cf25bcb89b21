/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "avx2" level table. Entries this level does not specialise are the
 * generic compositions (generic.c) or the portable functions. The ChaCha20
 * entries and the Poly1305 entries are owned by different kernel files;
 * keep each group's lines together.
 *
 * Shapes (the defaults for a CPU with no profile row, cpu_profiles.c):
 * a lone block in a ymm row set ("chacha-one=rows"), and the split AEAD
 * ("aead=split": ChaCha20, then Poly1305 over each chunk): the stitched
 * 8-lane ChaCha20 + scalar (mulx) Poly1305 of aead_avx2.c wins where the
 * scalar and vector pipes are separate (AMD) and loses where mulx shares
 * ports with the vector rounds (Intel), so only a profile row turns it on.
 *
 * Poly1305 (poly1305_avx2.c): the POLY1305 MAC takes the vector path from
 * "poly-mac" blocks, where the slowest vector latency crosses over in a
 * tight MAC loop; the AEADs later, from "poly-vector": inside a record
 * (libssl's and the core's work between the calls) the vector start costs
 * more. Cores with shorter vector latency may get earlier crossovers from
 * their profile row (the measurements: docs/performance.md).
 *
 * HChaCha20 is one serial block with nothing to interleave: the form the
 * path "chacha-one" picks for a lone ChaCha20 block (an xmm row set, or the
 * scalar portable function).
 */
#include "kernels_impl.h"

const chapoly_kernels chapoly_kernels_avx2 = {
    .name = CHAPOLY_LEVEL_AVX2,
    .features = "AVX2 BMI2",
    .shapes = { .one_block_rows = 1, .aead_stitched = 0, .chacha_pairs_min = 0, .short_rows = 320, .open_rows = 0,
                .aead_chunk = 0, CHAPOLY_AVX2_POLY_SHAPES, .first_max = 1984, .chacha_batch = 512,
                .stream_min = 512, .stream_fill = 1, .span_pre = 512 },
    .chacha20_xor = chacha20_xor_avx2,
    .chacha20_keyblock_xor = chacha20_keyblock_xor_avx2,
    .hchacha20 = hchacha20_avx2,
    .poly1305_init = poly1305_init_avx2,
    .poly1305_blocks = poly1305_blocks_avx2,
    .poly1305_final = poly1305_final_avx2,
    .poly1305_last = poly1305_last_avx2,
    .chacha20_multi_blocks = chacha20_multi_blocks_avx2,
    .poly1305_multi_blocks = poly1305_multi_blocks_avx2,
    .aead_xor_hash_range = aead_xor_hash_range_avx2,
    .chacha20_multi_blocks_hash = chacha20_multi_blocks_hash_avx2,
    .aead_first_xor_hash = aead_first_xor_hash_avx2,
};
