/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the AVX-512 kernel files: register hygiene (zmm16-31).
 */
#ifndef CHAPOLY_SIMD_ZMM_H
#define CHAPOLY_SIMD_ZMM_H

#include <immintrin.h>
#include "kernels_impl.h"

/*
 * vzeroupper (added by the compiler at every exit) clears bits 511:128 of
 * zmm0-15 only. The AVX-512 kernels also use zmm16-31 for round state,
 * keystream, hash lanes and key powers; they zero them before returning so
 * the caller gets a clean, secret-free vector state (EVEX xor-zeroing
 * idioms: ~free).
 */
#define R16_23 "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23"
#define R24_31 "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31"
#define ZX(n) "vpxord %%xmm" #n ", %%xmm" #n ", %%xmm" #n "\n\t"
CHAPOLY_INLINE void zero_zmm16_31(void)
{
    __asm__ volatile(ZX(16) ZX(17) ZX(18) ZX(19) ZX(20) ZX(21) ZX(22) ZX(23)
                     ZX(24) ZX(25) ZX(26) ZX(27) ZX(28) ZX(29) ZX(30) ZX(31)
                     : : : R16_23, R24_31, "memory");
}

/*
 * The first n bytes of a vector to out with plain stores (n public):
 * whole 16-byte pieces, then 8/4/2/1 bytes through a general register. The
 * zmm batches' partial last block uses these, not a byte-masked store
 * (vmovdqu8 with a mask): on Zen 5 the MAC's loads of the ciphertext right
 * after waited far longer on a masked store's bytes than on plain stores
 * (bench/results/kernel-notes.md).
 */
CHAPOLY_INLINE void store_part_xmm(uint8_t *out, __m128i v, size_t n) /* 0 <= n < 16 */
{
    uint64_t w = (uint64_t)_mm_cvtsi128_si64(v);

    if (n >= 8) {
        memcpy(out, &w, 8);
        w = (uint64_t)_mm_extract_epi64(v, 1);
        out += 8;
        n -= 8;
    }
    if (n >= 4) {
        uint32_t x = (uint32_t)w;

        memcpy(out, &x, 4);
        w >>= 32;
        out += 4;
        n -= 4;
    }
    if (n >= 2) {
        uint16_t x = (uint16_t)w;

        memcpy(out, &x, 2);
        w >>= 16;
        out += 2;
        n -= 2;
    }
    if (n > 0)
        *out = (uint8_t)w;
}

CHAPOLY_INLINE void store_part_ymm(uint8_t *out, __m256i v, size_t n) /* 0 <= n < 32 */
{
    __m128i lo = _mm256_castsi256_si128(v);

    if (n >= 16) {
        _mm_storeu_si128((__m128i *)out, lo);
        lo = _mm256_extracti128_si256(v, 1);
        out += 16;
        n -= 16;
    }
    store_part_xmm(out, lo, n);
}

CHAPOLY_INLINE void store_part_zmm(uint8_t *out, __m512i v, size_t n) /* 0 <= n < 64 */
{
    if (n >= 32) {
        _mm256_storeu_si256((__m256i *)out, _mm512_castsi512_si256(v));
        v = _mm512_shuffle_i64x2(v, v, 0xee); /* the upper half down */
        out += 32;
        n -= 32;
    }
    store_part_ymm(out, _mm512_castsi512_si256(v), n);
}

#endif
