/*
 * The one dispatch point. The CPU is probed once per process; tables are
 * const and never written, so any thread may read them at any time.
 *
 * Level requirements: every ISA flag a level's objects are compiled with
 * (kernels/CMakeLists.txt), since the compiler may use it anywhere in them:
 *   avx2     : AVX2 (+ OS YMM state), BMI2
 *   avx512vl : avx2 + AVX-512 F, VL, BW, DQ (ymm kernels with vprold, masks)
 *   avx512   : avx512vl (zmm kernels)
 * One exception, checked inside the AVX-512 levels instead: AVX-512 IFMA.
 * Only poly1305_avx512.c and aead_avx512.c are built with -mavx512ifma;
 * they run IFMA code only when poly1305_have_ifma() finds it, and the AVX2
 * Poly1305 otherwise. test_cpu_masks compares these masks with the flags.
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
    "avx512",
#endif
    NULL
};

const char *const *chapoly_kernels_compiled(void)
{
    return compiled;
}

/*
 * The levels and their masks (CHAPOLY_CPU_* bits; kernels_impl.h maps each
 * compiler flag to its bit). 'inside': bits the level's kernels check
 * themselves (see the top of this file).
 */
#define NEED_AVX2 (CHAPOLY_CPU_AVX2 | CHAPOLY_CPU_BMI2)
#define NEED_AVX512 (NEED_AVX2 | CHAPOLY_CPU_AVX512F | CHAPOLY_CPU_AVX512VL | \
                     CHAPOLY_CPU_AVX512BW | CHAPOLY_CPU_AVX512DQ)

static const struct level {
    const char *name;
    unsigned required, inside;
    const chapoly_kernels *table;
} levels[] = {
    { "portable", 0, 0, &chapoly_kernels_portable_table },
#ifdef CHAPOLY_HAVE_AVX2
    { "avx2", NEED_AVX2, 0, &chapoly_kernels_avx2 },
#endif
#ifdef CHAPOLY_HAVE_AVX512
    { "avx512vl", NEED_AVX512, CHAPOLY_CPU_AVX512IFMA, &chapoly_kernels_avx512vl },
    { "avx512", NEED_AVX512, CHAPOLY_CPU_AVX512IFMA, &chapoly_kernels_avx512 },
#endif
};

static const struct level *level_of(const char *name)
{
    for (size_t i = 0; name != NULL && i < sizeof(levels) / sizeof(levels[0]); i++)
        if (strcmp(name, levels[i].name) == 0)
            return &levels[i];
    return NULL;
}

int chapoly_kernels_required(const char *name, unsigned *required,
                             unsigned *inside)
{
    const struct level *l = level_of(name);

    *required = l != NULL ? l->required : 0;
    *inside = l != NULL ? l->inside : 0;
    return l != NULL;
}

const chapoly_kernels *chapoly_kernels_by_name(const char *name)
{
    const struct level *l = level_of(name);

    if (l == NULL)
        return NULL;
    return (features_once() & l->required) == l->required ? l->table : NULL;
}

const chapoly_kernels *chapoly_kernels_best(void)
{
    const chapoly_kernels *k;
    unsigned f = features_once();

    /* Skylake-X drops its clock under sustained zmm use: ymm there, as OpenSSL. */
    if (!(f & CHAPOLY_CPU_SKYLAKE_X) && (k = chapoly_kernels_by_name("avx512")) != NULL)
        return k;
    if ((k = chapoly_kernels_by_name("avx512vl")) != NULL)
        return k;
    if ((k = chapoly_kernels_by_name("avx2")) != NULL)
        return k;
    return &chapoly_kernels_portable_table;
}

int chapoly_kernels_known(const char *name)
{
    static const char *const known[] = { "best", "portable", "avx2", "avx512vl", "avx512" };

    for (size_t i = 0; name != NULL && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(name, known[i]) == 0)
            return 1;
    return 0;
}

int chapoly_kernels_uses_ifma(const chapoly_kernels *k)
{
    /* IFMA is an 'inside' bit: the level's Poly1305 takes it when the CPU has it */
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
        if (levels[i].table == k)
            return (levels[i].inside & features_once() & CHAPOLY_CPU_AVX512IFMA) != 0;
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
    .chacha20_xor_kb = NULL,
    .hchacha20 = hchacha20_portable,
    .poly1305_init = poly1305_init_portable,
    .poly1305_blocks = poly1305_blocks_portable,
    .poly1305_final = poly1305_final_portable,
    .aead_seal = NULL,
    .aead_open = NULL,
    .aead_xor_hash = NULL,
};
