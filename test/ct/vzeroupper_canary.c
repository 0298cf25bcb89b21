/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Functions check_vzeroupper.sh must judge right (check_canary.sh):
 * bad_* return with the upper halves of ymm0-15 possibly dirty, good_* do not.
 * Never run: the object is only disassembled. The 256-bit instructions are
 * in asm; the bad_* asm names no vector clobber (GCC adds a vzeroupper
 * before the return of a function whose asm clobbers one).
 */
#include <immintrin.h>

void bad_plain(void);
void bad_one_path(int x);
void bad_after_clear(int n);
void good_cleared(void);
void good_both_paths(int x);
void good_zmm16(void);
__m128i good_xmm_only(__m128i a);
void good_intrinsics(long long *out, long long v);

/* a 256-bit instruction and a return */
void bad_plain(void)
{
    __asm__ volatile("vpxor %%ymm1, %%ymm1, %%ymm1" ::: "cc");
}

/* dirty on one path only */
void bad_one_path(int x)
{
    __asm__ volatile("testl %0, %0\n\t"
                     "jz 1f\n\t"
                     "vpaddd %%ymm2, %%ymm2, %%ymm2\n\t"
                     "jmp 2f\n"
                     "1:\n\t"
                     "vzeroupper\n"
                     "2:"
                     :
                     : "r"(x)
                     : "cc");
}

/* a loop that clears and then dirties again before it leaves */
void bad_after_clear(int n)
{
    __asm__ volatile("1:\n\t"
                     "vzeroupper\n\t"
                     "vpaddd %%ymm3, %%ymm3, %%ymm3\n\t"
                     "decl %0\n\t"
                     "jnz 1b"
                     : "+r"(n)
                     :
                     : "cc");
}

void good_cleared(void)
{
    __asm__ volatile("vpxor %%ymm1, %%ymm1, %%ymm1\n\t"
                     "vzeroupper" ::: "xmm1");
}

/* both paths clear (one with vzeroall) */
void good_both_paths(int x)
{
    __asm__ volatile("testl %0, %0\n\t"
                     "jz 1f\n\t"
                     "vpaddd %%ymm2, %%ymm2, %%ymm2\n\t"
                     "vzeroupper\n\t"
                     "jmp 2f\n"
                     "1:\n\t"
                     "vpaddd %%ymm4, %%ymm4, %%ymm4\n\t"
                     "vzeroall\n"
                     "2:"
                     :
                     : "r"(x)
                     : "xmm2", "xmm4", "cc");
}

/* registers SSE code cannot reach */
void good_zmm16(void)
{
    __asm__ volatile("vpxord %%zmm16, %%zmm16, %%zmm16" ::: "xmm16");
}

__m128i good_xmm_only(__m128i a)
{
    return _mm_add_epi32(a, a);
}

/* the compiler's own 256-bit code: it adds the vzeroupper */
void good_intrinsics(long long *out, long long v)
{
    __m256i x = _mm256_set1_epi64x(v);

    _mm256_storeu_si256((__m256i *)(void *)out, _mm256_add_epi64(x, x));
}
