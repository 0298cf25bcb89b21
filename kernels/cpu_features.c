/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU feature probe: on x86, cpuid for what the core implements, xgetbv for
 * what the OS saves on context switch, less what OPENSSL_ia32cap masks for
 * libcrypto; on AArch64 Linux, getauxval(AT_HWCAP).
 * chapoly_cpu_identify: vendor, family and model, for the CPU profiles.
 * Functions of the machine and the environment; dispatch.c calls them once.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv */
#endif
#include <stdint.h>
#include <stdlib.h>
#include "kernels_impl.h"

/*
 * One field of OPENSSL_ia32cap as libcrypto reads it: an unsigned number,
 * hexadecimal after "0x", octal after "0", else decimal, up to the first
 * character that is not a digit of its base (none: 0), 64 bits wrapping.
 */
static uint64_t ia32cap_number(const char *s)
{
    uint64_t v = 0;
    unsigned base = 10, d;

    if (*s == '0') {
        base = 8;
        s++;
        if (*s == 'x' || *s == 'X') {
            base = 16;
            s++;
        }
    }
    for (;; s++) {
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (*s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a') + 10;
        else if (*s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A') + 10;
        else
            break;
        if (d >= base)
            break;
        v = v * base + d;
    }
    return v;
}

/* OPENSSL_ia32cap's bits (its logical vectors 0 and 1) that chapoly's levels depend on. */
#define LV0_FXSR (UINT64_C(1) << 24)            /* CPUID.1:EDX.24 */
#define LV0_OSXSAVE (UINT64_C(1) << (32 + 27)) /* CPUID.1:ECX.27 */
#define LV0_AVX (UINT64_C(1) << (32 + 28))     /* CPUID.1:ECX.28 */
/* what libcrypto clears with FXSR: PCLMULQDQ, XOP, AES-NI, AVX */
#define LV0_XMM_ONLY (UINT64_C(0x12000802) << 32)

static const struct {
    unsigned lv1_bit; /* in CPUID.7.0:EBX (bits 0-31 of the second field) */
    unsigned feature; /* CHAPOLY_CPU_* */
} ia32cap_lv1[] = {
    { 5, CHAPOLY_CPU_AVX2 },       { 8, CHAPOLY_CPU_BMI2 },
    { 16, CHAPOLY_CPU_ZMM },       /* masked: no zmm code; the ymm AVX-512VL code stays */   { 17, CHAPOLY_CPU_AVX512DQ },
    { 21, CHAPOLY_CPU_AVX512IFMA }, { 30, CHAPOLY_CPU_AVX512BW },
    { 31, CHAPOLY_CPU_AVX512VL },
};

/*
 * The CHAPOLY_CPU_* bits an OPENSSL_ia32cap value leaves in place, read as
 * libcrypto reads it ("[~]LV0[:[~]LV1[:...]]"): "~N" clears N's bits from
 * what the CPU reports, a plain N replaces them (so it can clear, never add:
 * the result is ANDed with the probe), an empty field keeps them. LV0 is
 * CPUID.1 EDX:ECX, LV1 CPUID.7.0 EBX:ECX; no LV1 at all (no ':', or nothing
 * after it) clears LV1, as libcrypto does. The vectors after LV1 (OpenSSL
 * 3.5 on) hold nothing chapoly uses. Without AVX or OSXSAVE in LV0 no AVX
 * level runs; in LV1, AVX2, BMI2 and AVX-512 F, DQ, IFMA, BW and VL each
 * remove the levels built for them (dispatch.c's masks). NULL: all bits.
 */
unsigned chapoly_cpu_ia32cap_keep(const char *env)
{
    uint64_t lv0 = UINT64_MAX, lv1 = 0;
    unsigned keep = ~0u;

    if (env == NULL)
        return keep;
    if (*env == '~') {
        uint64_t mask = ia32cap_number(env + 1);

        lv0 = ~mask;
        if (mask & LV0_FXSR)
            lv0 &= ~LV0_XMM_ONLY;
    } else if (*env != ':') {
        lv0 = ia32cap_number(env);
    }
    env = strchr(env, ':');
    if (env != NULL && env[1] != '\0') {
        env++;
        if (*env == ':')
            lv1 = UINT64_MAX; /* an empty field (OpenSSL 3.5's "::N"): LV1 as the CPU has it */
        else if (*env == '~')
            lv1 = ~ia32cap_number(env + 1);
        else
            lv1 = ia32cap_number(env);
    }
    if ((lv0 & (LV0_OSXSAVE | LV0_AVX)) != (LV0_OSXSAVE | LV0_AVX))
        lv1 &= ~(UINT64_C(1) << 5 | UINT64_C(1) << 16); /* no AVX: no AVX2, no AVX-512 */
    for (size_t i = 0; i < sizeof(ia32cap_lv1) / sizeof(ia32cap_lv1[0]); i++)
        if (!(lv1 & (UINT64_C(1) << ia32cap_lv1[i].lv1_bit)))
            keep &= ~ia32cap_lv1[i].feature;
    return keep;
}

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
        f |= CHAPOLY_CPU_AVX512F | CHAPOLY_CPU_ZMM;
        if (b & bit_AVX512VL)
            f |= CHAPOLY_CPU_AVX512VL;
        if (b & bit_AVX512BW)
            f |= CHAPOLY_CPU_AVX512BW;
        if (b & bit_AVX512DQ)
            f |= CHAPOLY_CPU_AVX512DQ;
        if (b & bit_AVX512IFMA)
            f |= CHAPOLY_CPU_AVX512IFMA;
    }
    /* an ISA masked for libcrypto is masked for chapoly (not in setuid processes) */
    return f & chapoly_cpu_ia32cap_keep(secure_getenv("OPENSSL_ia32cap"));
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
