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

#endif
