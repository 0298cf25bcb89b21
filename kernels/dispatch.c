/*
 * The one dispatch point. The CPU is probed once per process; tables are
 * const and never written, so any thread may read them at any time.
 *
 * Level requirements (each level's kernels may rely on all of these; the
 * files are compiled with -mbmi2, so the compiler may use it anywhere):
 *   avx2     : AVX2 (+ OS YMM state), BMI2
 *   avx512vl : avx2 + AVX-512 F, VL, BW (ymm kernels with vprold, masks)
 *   avx512   : avx512vl (zmm kernels); IFMA Poly1305 is used only when the
 *              CPU has AVX-512 IFMA, checked inside the level's kernels.
 */
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

const chapoly_kernels *chapoly_kernels_by_name(const char *name)
{
    unsigned f = features_once();
    (void)f;

    if (name == NULL)
        return NULL;
    if (strcmp(name, "portable") == 0)
        return &chapoly_kernels_portable_table;
#ifdef CHAPOLY_HAVE_AVX2
    if (strcmp(name, "avx2") == 0) {
        const unsigned need = CHAPOLY_CPU_AVX2 | CHAPOLY_CPU_BMI2;
        return (f & need) == need ? &chapoly_kernels_avx2 : NULL;
    }
#endif
#ifdef CHAPOLY_HAVE_AVX512
    {
        const unsigned need = CHAPOLY_CPU_AVX2 | CHAPOLY_CPU_BMI2 | CHAPOLY_CPU_AVX512F |
                              CHAPOLY_CPU_AVX512VL | CHAPOLY_CPU_AVX512BW;
        if (strcmp(name, "avx512vl") == 0)
            return (f & need) == need ? &chapoly_kernels_avx512vl : NULL;
        if (strcmp(name, "avx512") == 0)
            return (f & need) == need ? &chapoly_kernels_avx512 : NULL;
    }
#endif
    return NULL;
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

const chapoly_kernels *chapoly_kernels_select(const char *request,
                                              const char **warning)
{
    const chapoly_kernels *k;

    if (warning != NULL)
        *warning = NULL;
    if (request == NULL || *request == '\0')
        request = getenv("CHAPOLY_KERNEL");
    if (request == NULL || *request == '\0' || strcmp(request, "best") == 0)
        return chapoly_kernels_best();
    k = chapoly_kernels_by_name(request);
    if (k != NULL)
        return k;
    if (warning != NULL)
        *warning = "requested kernel level is not available on this CPU or "
                   "not compiled in; using the best available";
    return chapoly_kernels_best();
}

const chapoly_kernels chapoly_kernels_portable_table = {
    .name = "portable",
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
