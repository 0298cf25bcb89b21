/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one dispatch point: the only code that looks at the CPU (through
 * cpu_features.c, probed once per process). No kernel checks the CPU
 * itself: each table below is one combination of kernels, and it is handed
 * out only on a CPU that has every ISA flag the objects of its functions
 * are compiled with (kernels/CMakeLists.txt), since the compiler may use
 * any of them anywhere in those objects:
 *   portable       nothing
 *   avx2           AVX2 (+ OS YMM state), BMI2
 *   avx512vl       avx2 + AVX-512 F, VL, BW, DQ (ymm ChaCha20, AVX2 Poly1305)
 *   avx512-noifma  the same (zmm ChaCha20, AVX2 Poly1305)
 *   avx512         avx512vl + AVX-512 IFMA (zmm ChaCha20, IFMA Poly1305,
 *                  stitched aead_xor_hash; the only IFMA objects)
 *   neon           AArch64 Advanced SIMD (HWCAP_ASIMD)
 * test_cpu_masks compares each mask with the flags of the objects the
 * table's functions are defined in; kernels_cpu_probe checks that no other
 * kernel object probes the CPU. Tables are const and never written, so any
 * thread may read them at any time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv */
#endif
#include <stdlib.h>
#include "kernels_impl.h"

#if defined(__STDC_NO_THREADS__) || !defined(__GNUC__)
static unsigned features_once(void) { return chapoly_cpu_features(); }
#else
/* Racing first calls compute the same value; the store is atomic. */
static unsigned features_once(void)
{
    static unsigned cached; /* bit 31 marks "probed" */
    unsigned v = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);

    if (!(v & 0x80000000u)) {
        v = chapoly_cpu_features() | 0x80000000u;
        __atomic_store_n(&cached, v, __ATOMIC_RELEASE);
    }
    return v & 0x7fffffffu;
}
#endif

const chapoly_kernels *chapoly_kernels_portable(void)
{
    return &chapoly_kernels_portable_table;
}

static const char *const compiled[] = {
    "portable",
#ifdef CHAPOLY_HAVE_AVX2
    "avx2",
#endif
#ifdef CHAPOLY_HAVE_AVX512
    "avx512vl",
    "avx512-noifma",
    "avx512",
#endif
#ifdef CHAPOLY_HAVE_NEON
    "neon",
#endif
    NULL
};

const char *const *chapoly_kernels_compiled(void)
{
    return compiled;
}

/* The levels and their masks (CHAPOLY_CPU_* bits; see the top of this file). */
#define NEED_AVX2 (CHAPOLY_CPU_AVX2 | CHAPOLY_CPU_BMI2)
#define NEED_AVX512 (NEED_AVX2 | CHAPOLY_CPU_AVX512F | CHAPOLY_CPU_AVX512VL | \
                     CHAPOLY_CPU_AVX512BW | CHAPOLY_CPU_AVX512DQ)

static const struct level {
    const char *name;
    unsigned required;
    const chapoly_kernels *table;
} levels[] = {
    { "portable", 0, &chapoly_kernels_portable_table },
#ifdef CHAPOLY_HAVE_AVX2
    { "avx2", NEED_AVX2, &chapoly_kernels_avx2 },
#endif
#ifdef CHAPOLY_HAVE_AVX512
    { "avx512vl", NEED_AVX512, &chapoly_kernels_avx512vl },
    { "avx512-noifma", NEED_AVX512, &chapoly_kernels_avx512_noifma },
    { "avx512", NEED_AVX512 | CHAPOLY_CPU_AVX512IFMA, &chapoly_kernels_avx512 },
#endif
#ifdef CHAPOLY_HAVE_NEON
    { "neon", CHAPOLY_CPU_ASIMD, &chapoly_kernels_neon },
#endif
};

static const struct level *level_of(const char *name)
{
    for (size_t i = 0; name != NULL && i < sizeof(levels) / sizeof(levels[0]); i++)
        if (strcmp(name, levels[i].name) == 0)
            return &levels[i];
    return NULL;
}

int chapoly_kernels_required(const char *name, unsigned *required)
{
    const struct level *l = level_of(name);

    *required = l != NULL ? l->required : 0;
    return l != NULL;
}

/* The table of level 'name' if features f cover its mask, else NULL. */
static const chapoly_kernels *table_for(const char *name, unsigned f)
{
    const struct level *l = level_of(name);

    return l != NULL && (f & l->required) == l->required ? l->table : NULL;
}

const chapoly_kernels *chapoly_kernels_by_name(const char *name)
{
    return table_for(name, features_once());
}

const chapoly_kernels *chapoly_kernels_best_for(unsigned f)
{
    const chapoly_kernels *k;

    /* Skylake-X drops its clock under sustained zmm use: ymm there, as OpenSSL. */
    if (!(f & CHAPOLY_CPU_SKYLAKE_X) && ((k = table_for("avx512", f)) != NULL ||
                                         (k = table_for("avx512-noifma", f)) != NULL))
        return k;
    if ((k = table_for("avx512vl", f)) != NULL || (k = table_for("avx2", f)) != NULL ||
        (k = table_for("neon", f)) != NULL)
        return k;
    return &chapoly_kernels_portable_table;
}

const chapoly_kernels *chapoly_kernels_best(void)
{
    return chapoly_kernels_best_for(features_once());
}

int chapoly_kernels_known(const char *name)
{
    static const char *const known[] = { "best", "portable", "avx2", "avx512vl",
                                         "avx512-noifma", "avx512", "neon" };

    for (size_t i = 0; name != NULL && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(name, known[i]) == 0)
            return 1;
    return 0;
}

const chapoly_kernels *chapoly_kernels_select(const char *request,
                                              const char **warning)
{
    const chapoly_kernels *k;

    if (warning != NULL)
        *warning = NULL;
    if (request == NULL || *request == '\0')
        request = secure_getenv("CHAPOLY_KERNEL"); /* not in setuid processes */
    if (request == NULL || *request == '\0' || strcmp(request, "best") == 0)
        return chapoly_kernels_best();
    k = chapoly_kernels_by_name(request);
    if (k != NULL)
        return k;
    if (warning != NULL)
        *warning = chapoly_kernels_known(request)
                       ? "requested kernel level is not available on this CPU or "
                         "not compiled in; using the best available"
                       : "unknown kernel level; using the best available";
    return chapoly_kernels_best();
}

const chapoly_kernels chapoly_kernels_portable_table = {
    .name = "portable",
    .features = "portable C, no SIMD",
    .chacha20_xor = chacha20_xor_portable,
    .chacha20_keyblock_xor = NULL,
    .hchacha20 = hchacha20_portable,
    .poly1305_init = poly1305_init_portable,
    .poly1305_blocks = poly1305_blocks_portable,
    .poly1305_final = poly1305_final_portable,
    .aead_xor_hash = NULL,
    .chacha20_multi_blocks = chacha20_multi_blocks_portable,
};
