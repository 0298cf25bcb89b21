/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU feature probe: on x86, cpuid for what the core implements, xgetbv for
 * what the OS saves on context switch; on AArch64 Linux, getauxval(AT_HWCAP).
 * chapoly_cpu_identify: vendor, family and model, for the CPU profiles.
 * Pure functions of the machine; dispatch.c calls them once.
 */
#include "kernels_impl.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;

    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

void chapoly_cpu_identify(chapoly_cpu_id *id)
{
    unsigned a, b, c, d;

    memset(id, 0, sizeof(*id));
    if (__get_cpuid_max(0, NULL) < 1)
        return;
    __cpuid(0, a, b, c, d);
    if (b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e) /* GenuineIntel */
        id->vendor = CHAPOLY_VENDOR_INTEL;
    else if (b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163) /* AuthenticAMD */
        id->vendor = CHAPOLY_VENDOR_AMD;
    else if (b == 0x6f677948 && d == 0x6e65476e && c == 0x656e6975) /* HygonGenuine */
        id->vendor = CHAPOLY_VENDOR_HYGON;
    __cpuid(1, a, b, c, d);
    id->family = (a >> 8) & 0xf;
    id->model = (a >> 4) & 0xf;
    if (id->family == 15)
        id->family += (a >> 20) & 0xff;
    if (id->family == 6 || id->family >= 15)
        id->model |= ((a >> 16) & 0xf) << 4;
}

unsigned chapoly_cpu_features(void)
{
    unsigned a, b, c, d, f = 0;
    unsigned max = __get_cpuid_max(0, NULL);

    if (max < 7 || !__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    if (!(c & bit_OSXSAVE) || !(c & bit_AVX))
        return 0;
    uint64_t xcr0 = read_xcr0();
    int os_ymm = (xcr0 & 0x6) == 0x6;
    int os_zmm = (xcr0 & 0xe6) == 0xe6; /* SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */

    __cpuid_count(7, 0, a, b, c, d);
    if (os_ymm && (b & bit_AVX2))
        f |= CHAPOLY_CPU_AVX2;
    if (b & bit_BMI2)
        f |= CHAPOLY_CPU_BMI2;
    if (os_zmm && (b & bit_AVX512F)) {
        f |= CHAPOLY_CPU_AVX512F;
        if (b & bit_AVX512VL)
            f |= CHAPOLY_CPU_AVX512VL;
        if (b & bit_AVX512BW)
            f |= CHAPOLY_CPU_AVX512BW;
        if (b & bit_AVX512DQ)
            f |= CHAPOLY_CPU_AVX512DQ;
        if (b & bit_AVX512IFMA)
            f |= CHAPOLY_CPU_AVX512IFMA;
    }
    return f;
}

#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <asm/hwcap.h>

void chapoly_cpu_identify(chapoly_cpu_id *id)
{
    memset(id, 0, sizeof(*id)); /* no profile rows for AArch64 yet */
}

/* AArch64 Linux: the kernel's hardware capabilities (HWCAP_ASIMD). */
unsigned chapoly_cpu_features(void)
{
    return (getauxval(AT_HWCAP) & HWCAP_ASIMD) ? CHAPOLY_CPU_ASIMD : 0;
}

#else

void chapoly_cpu_identify(chapoly_cpu_id *id)
{
    memset(id, 0, sizeof(*id));
}

unsigned chapoly_cpu_features(void)
{
    return 0;
}

#endif
