/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one dispatch point: the only code that looks at the CPU (through
 * cpu_features.c, probed once per process). No kernel checks the CPU
 * itself: each level below is one combination of kernels, and it is handed
 * out only on a CPU that has every ISA flag the objects of its functions
 * are compiled with (kernels/CMakeLists.txt), since the compiler may use
 * any of them anywhere in those objects:
 *   portable       nothing
 *   avx2           AVX2 (+ OS YMM state), BMI2
 *   avx512vl       avx2 + AVX-512 F, VL, BW, DQ (ymm ChaCha20, AVX2 Poly1305)
 *   avx512-noifma  the same + zmm allowed (CHAPOLY_CPU_ZMM: zmm ChaCha20, AVX2 Poly1305)
 *   avx512         avx512vl + AVX-512 IFMA (zmm ChaCha20, IFMA Poly1305,
 *                  the stitched IFMA range; the only IFMA objects)
 *   neon           AArch64 Advanced SIMD (HWCAP_ASIMD)
 * test_cpu_masks compares each mask with the flags of the objects the
 * table's functions are defined in; kernels_cpu_probe checks that no other
 * kernel object probes the CPU.
 *
 * A level's table is a template: chapoly_kernels_build copies it, applies
 * the CPU profile (cpu_profiles.c) and then the paths forced by name, and
 * puts the generic split entries in place where the stitched ones are not
 * wanted. The built tables of chapoly_kernels_by_name are made once per
 * process and never written after, so any thread may read them any time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv */
#endif
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include "kernels_impl.h"

/* The CPU's features, and the profile table's one level rule (which classes keep to ymm). */
static unsigned cpu_features_profiled(void)
{
    chapoly_cpu_id id;

    chapoly_cpu_identify(&id);
    return chapoly_cpu_features() | (chapoly_cpu_ymm_only(&id) ? CHAPOLY_CPU_YMM_ONLY : 0);
}

#if defined(__STDC_NO_THREADS__) || !defined(__GNUC__)
static unsigned features_once(void) { return cpu_features_profiled(); }
#else
/* Racing first calls compute the same value; the store is atomic. */
static unsigned features_once(void)
{
    static unsigned cached; /* bit 31 marks "probed" */
    unsigned v = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);

    if (!(v & 0x80000000u)) {
        v = cpu_features_profiled() | 0x80000000u;
        __atomic_store_n(&cached, v, __ATOMIC_RELEASE);
    }
    return v & 0x7fffffffu;
}
#endif

/* The levels and their masks (CHAPOLY_CPU_* bits; see the top of this file). */
#define NEED_AVX2 (CHAPOLY_CPU_AVX2 | CHAPOLY_CPU_BMI2)
#define NEED_AVX512 (NEED_AVX2 | CHAPOLY_CPU_AVX512F | CHAPOLY_CPU_AVX512VL | \
                     CHAPOLY_CPU_AVX512BW | CHAPOLY_CPU_AVX512DQ)

/* ---- the forceable path choices ---- */

/*
 * The choices a CPU profile sets and a user may force (config "paths",
 * CHAPOLY_PATHS): the ones a measurement showed to matter on some CPU
 * (docs/performance.md). Every other shape is a constant of its level.
 * Every value of a size is safe: each is a crossover (from this many
 * bytes or blocks), and the kernels take any crossover; apply_choices
 * raises the vector crossovers to the level's least whole step.
 */
enum { SHAPE_CHOICE, SHAPE_SIZE };
static const struct shape {
    const char *name;
    size_t offset;
    int kind;
    const char *values[2]; /* SHAPE_CHOICE: the names of 0 and 1 */
    size_t size;           /* field size in bytes */
} shapes[] = {
#define CHOICE(n, f, v0, v1) \
    { n, offsetof(chapoly_shapes, f), SHAPE_CHOICE, { v0, v1 }, sizeof(((chapoly_shapes *)0)->f) }
#define SIZE(n, f) \
    { n, offsetof(chapoly_shapes, f), SHAPE_SIZE, { NULL, NULL }, sizeof(((chapoly_shapes *)0)->f) }
    CHOICE("chacha-one", one_block_rows, "scalar", "rows"),
    CHOICE("aead", aead_stitched, "split", "stitched"),
    SIZE("chacha-pairs", chacha_pairs_min),
    SIZE("poly-vector", poly_vector_min),
    SIZE("poly-vector2", poly_vector2_min),
    SIZE("poly-prefix", poly_prefix),
    SIZE("poly-mac", poly_mac_min),
    SIZE("short-rows", short_rows),
    SIZE("open-rows", open_rows),
#undef CHOICE
#undef SIZE
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static unsigned shape_get(const chapoly_shapes *s, const struct shape *d)
{
    const unsigned char *p = (const unsigned char *)s + d->offset;

    if (d->size == 1)
        return *p;
    return *(const uint32_t *)(const void *)p;
}

static void shape_set(chapoly_shapes *s, const struct shape *d, unsigned v)
{
    unsigned char *p = (unsigned char *)s + d->offset;

    if (d->size == 1)
        *p = (unsigned char)v;
    else
        *(uint32_t *)(void *)p = v;
}

/* Bits of the choices a level uses (index in shapes[]). */
enum {
    U_ONE = 1u << 0, U_AEAD = 1u << 1, U_PAIRS = 1u << 2, U_PVEC = 1u << 3,
    U_PVEC2 = 1u << 4, U_PPREFIX = 1u << 5, U_PMAC = 1u << 6, U_SHORT = 1u << 7,
    U_OPEN = 1u << 8, U_LAST = U_OPEN,
    /* the lanes Poly1305 of AVX2 and IFMA (poly1305_avx2.c, poly1305_avx512ifma.c) */
    U_POLY = U_PVEC | U_PPREFIX | U_PMAC
};
_Static_assert(U_LAST == 1u << (NSHAPES - 1), "a U_* bit for each entry of shapes[], in order");

/*
 * The compiled levels, in the order "best" prefers them (the last one this
 * CPU runs; a class of cpu_profiles.c that keeps to ymm skips the zmm ones).
 * poly_batch: the blocks of one step of the level's vector Poly1305 (0:
 * none), the least a vector run from the scalar hash takes (apply_choices).
 */
static const struct level {
    const chapoly_kernels *table; /* its name is the level's */
    unsigned required;
    unsigned uses; /* U_* */
    unsigned poly_batch;
    unsigned serves; /* CHAPOLY_SERVE_* (kernels.h, chapoly_kernels_serves) */
    int zmm;         /* runs zmm registers */
} levels[] = {
    { &chapoly_kernels_portable_table, 0, 0, 0, CHAPOLY_SERVE_XCHACHA, 0 },
#ifdef CHAPOLY_HAVE_AVX2
    { &chapoly_kernels_avx2, NEED_AVX2, U_ONE | U_AEAD | U_PAIRS | U_POLY | U_SHORT | U_OPEN, 4,
      CHAPOLY_SERVE_ALL, 0 },
#endif
#ifdef CHAPOLY_HAVE_AVX512
    /* AVX-512 cores that keep to ymm; OpenSSL's Poly1305 there is AVX2 as well */
    { &chapoly_kernels_avx512vl, NEED_AVX512, U_ONE | U_POLY, 4, CHAPOLY_SERVE_ALL, 0 },
    /* AVX-512 without IFMA: OpenSSL's Poly1305 runs zmm, this level's AVX2 */
    { &chapoly_kernels_avx512_noifma, NEED_AVX512 | CHAPOLY_CPU_ZMM, U_ONE | U_PAIRS | U_POLY, 4,
      CHAPOLY_SERVE_XCHACHA | CHAPOLY_SERVE_CHACHA, 1 },
    { &chapoly_kernels_avx512, NEED_AVX512 | CHAPOLY_CPU_AVX512IFMA | CHAPOLY_CPU_ZMM,
      U_ONE | U_AEAD | U_PAIRS | U_POLY | U_PVEC2, 8, CHAPOLY_SERVE_ALL, 1 },
#endif
#ifdef CHAPOLY_HAVE_NEON
    { &chapoly_kernels_neon, CHAPOLY_CPU_ASIMD, U_PVEC | U_PMAC, 4, CHAPOLY_SERVE_ALL, 0 },
#endif
};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* Every level name a request may use, compiled here or not ("best" first). */
#define LEVEL_NAME_(name, build) name,
static const char *const known[] = { "best", CHAPOLY_LEVEL_LIST(LEVEL_NAME_) };

/* The levels of CHAPOLY_LEVEL_LIST whose build define this build has. */
#define IF_CHAPOLY_ALWAYS(...) __VA_ARGS__
#ifdef CHAPOLY_HAVE_AVX2
#define IF_CHAPOLY_HAVE_AVX2(...) __VA_ARGS__
#else
#define IF_CHAPOLY_HAVE_AVX2(...)
#endif
#ifdef CHAPOLY_HAVE_AVX512
#define IF_CHAPOLY_HAVE_AVX512(...) __VA_ARGS__
#else
#define IF_CHAPOLY_HAVE_AVX512(...)
#endif
#ifdef CHAPOLY_HAVE_NEON
#define IF_CHAPOLY_HAVE_NEON(...) __VA_ARGS__
#else
#define IF_CHAPOLY_HAVE_NEON(...)
#endif
#define COMPILED_(name, build) IF_##build(name, )
static const char *const compiled[] = { CHAPOLY_LEVEL_LIST(COMPILED_) NULL };
_Static_assert(sizeof(compiled) / sizeof(compiled[0]) == NLEVELS + 1,
               "levels[] has a table for each compiled level of CHAPOLY_LEVEL_LIST");

const char *const *chapoly_kernels_compiled(void)
{
    return compiled;
}

static const struct level *level_of(const char *name)
{
    for (size_t i = 0; name != NULL && i < NLEVELS; i++)
        if (strcmp(name, levels[i].table->name) == 0)
            return &levels[i];
    return NULL;
}

int chapoly_kernels_required(const char *name, unsigned *required)
{
    const struct level *l = level_of(name);

    *required = l != NULL ? l->required : 0;
    return l != NULL;
}

/* The level 'name' if features f cover its mask, else NULL. */
static const struct level *level_for(const char *name, unsigned f)
{
    const struct level *l = level_of(name);

    return l != NULL && (f & l->required) == l->required ? l : NULL;
}

static const struct level *best_level(unsigned f)
{
    for (size_t i = NLEVELS; i-- > 1;)
        if ((f & levels[i].required) == levels[i].required &&
            !(levels[i].zmm && (f & CHAPOLY_CPU_YMM_ONLY)))
            return &levels[i];
    return &levels[0];
}

const chapoly_kernels *chapoly_kernels_best_for(unsigned f)
{
    return best_level(f)->table;
}

unsigned chapoly_kernels_serves(const chapoly_kernels *t)
{
    const struct level *l = t != NULL ? level_of(t->name) : NULL;

    return l != NULL ? l->serves : CHAPOLY_SERVE_XCHACHA;
}

int chapoly_kernels_known(const char *name)
{
    for (size_t i = 0; name != NULL && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(name, known[i]) == 0)
            return 1;
    return 0;
}

/* ---- building a table ---- */

/*
 * Applies one "name=value" list to t (only the choices its level uses).
 * Returns 0 if some item was not valid (the rest still apply).
 */
static int apply_paths(chapoly_kernels *t, unsigned uses, const char *paths)
{
    int ok = 1;

    while (paths != NULL && *paths != '\0') {
        char item[64], *eq;
        size_t n = strcspn(paths, ", \t");
        const struct shape *d = NULL;

        if (n == 0) {
            paths++;
            continue;
        }
        if (n >= sizeof(item)) {
            ok = 0;
            paths += n;
            continue;
        }
        memcpy(item, paths, n);
        item[n] = '\0';
        paths += n;
        eq = strchr(item, '=');
        if (eq == NULL && strcmp(item, "flip") == 0) {
            /* every choice the level has, the other way: the test suite's second pass */
            for (size_t i = 0; i < NSHAPES; i++)
                if ((uses & (1u << i)) && shapes[i].kind == SHAPE_CHOICE)
                    shape_set(&t->shapes, &shapes[i], !shape_get(&t->shapes, &shapes[i]));
            continue;
        }
        if (eq == NULL) {
            ok = 0;
            continue;
        }
        *eq++ = '\0';
        for (size_t i = 0; i < NSHAPES; i++)
            if (strcmp(item, shapes[i].name) == 0 && (uses & (1u << i)))
                d = &shapes[i];
        if (d == NULL) {
            ok = 0;
            continue;
        }
        if (d->kind == SHAPE_CHOICE) {
            if (strcmp(eq, d->values[0]) == 0)
                shape_set(&t->shapes, d, 0);
            else if (strcmp(eq, d->values[1]) == 0)
                shape_set(&t->shapes, d, 1);
            else
                ok = 0;
        } else {
            char *end;
            unsigned long v = *eq >= '0' && *eq <= '9' ? strtoul(eq, &end, 10) : ULONG_MAX;

            if (v <= 0x7fffffffUL && *end == '\0')
                shape_set(&t->shapes, d, (unsigned)v);
            else
                ok = 0;
        }
    }
    return ok;
}

/*
 * The vector crossovers raised to whole steps; then the entries that
 * follow from the choices: the split form unless stitched is wanted.
 */
static void apply_choices(chapoly_kernels *t, const struct level *l)
{
    chapoly_shapes *s = &t->shapes;
    uint32_t pb = l->poly_batch;

    /*
     * A vector Poly1305 run from the scalar hash starts with whole steps:
     * at least one (two for the two-accumulator form; 0 there: never).
     */
    if ((l->uses & U_PVEC) && s->poly_vector_min < pb)
        s->poly_vector_min = pb;
    if ((l->uses & U_PMAC) && s->poly_mac_min != 0 && s->poly_mac_min < pb)
        s->poly_mac_min = pb;
    if ((l->uses & U_PVEC2) && s->poly_vector2_min != 0 && s->poly_vector2_min < 2 * pb)
        s->poly_vector2_min = 2 * pb;
    /*
     * The level's cuts as the compositions take them (its table's values
     * already are; test_cpu_masks checks): whole blocks, the first text
     * within one generic batch, a batch a power of two up to it.
     */
    s->aead_chunk &= ~(uint32_t)(CHACHA20_BLOCK_BYTES - 1);
    s->first_max &= ~(uint32_t)(CHACHA20_BLOCK_BYTES - 1);
    if (s->first_max < CHACHA20_BLOCK_BYTES || s->first_max > CHAPOLY_GENERIC_BATCH - CHACHA20_BLOCK_BYTES)
        s->first_max = CHAPOLY_GENERIC_BATCH - CHACHA20_BLOCK_BYTES;
    if (s->chacha_batch < CHACHA20_BLOCK_BYTES || (s->chacha_batch & (s->chacha_batch - 1)) != 0 ||
        s->chacha_batch > s->first_max)
        s->chacha_batch = CHACHA20_BLOCK_BYTES;
    if ((l->uses & U_AEAD) && !s->aead_stitched) {
        s->span_pre = 0;
        t->aead_xor_hash_range = chapoly_generic_xor_hash_range;
        t->aead_first_xor_hash = chapoly_generic_first_xor_hash;
    }
    /*
     * "open-rows" (opening a short first text with the key block in general
     * registers) where the first text is the level's own ("aead=stitched"),
     * in the row sets "short-rows" allows (the key block not among them: 64
     * bytes more of text; chapoly_open_rows caps it at three sets).
     */
    if (!(l->uses & U_OPEN) || !s->aead_stitched || s->short_rows == 0)
        s->open_rows = 0;
    else if (s->open_rows > s->short_rows + 64)
        s->open_rows = s->short_rows + 64;
    /*
     * The batched AEAD's rows beside its ChaCha20: a level's own form
     * hashes them in pairs of 8-lane batches, so with both "aead=stitched"
     * and "chacha-pairs" (16 blocks a call), else the composition.
     */
    s->multi_stitch = 0;
    if (t->chacha20_multi_blocks_hash != chapoly_generic_multi_blocks_hash &&
        (l->uses & U_AEAD) && s->aead_stitched && s->chacha_pairs_min != 0)
        s->multi_stitch = 16;
    else
        t->chacha20_multi_blocks_hash = chapoly_generic_multi_blocks_hash;
}

static void build_level(chapoly_kernels *t, const struct level *l, const char *forced,
                        const char **paths_warning)
{
    chapoly_cpu_id id;
    const char *profile_name, *basis;

    *t = *l->table;
    if (l->uses != 0) { /* the portable level, the oracle, has no choices */
        chapoly_cpu_identify(&id);
        apply_paths(t, l->uses, chapoly_cpu_profile(&id, t->name, &profile_name, &basis));
    }
    if (forced != NULL && *forced != '\0' && !apply_paths(t, l->uses, forced) &&
        paths_warning != NULL)
        *paths_warning = "a forced path is unknown, does not apply to this level or has a "
                         "bad value; ignored (the rest apply)";
    apply_choices(t, l);
}

static const struct level *select_level(const char *request, const char **warning)
{
    const struct level *l;
    unsigned f = features_once();

    if (warning != NULL)
        *warning = NULL;
    if (request == NULL || *request == '\0')
        request = secure_getenv("CHAPOLY_KERNEL"); /* not in setuid processes */
    if (request == NULL || *request == '\0' || strcmp(request, "best") == 0)
        return best_level(f);
    l = level_for(request, f);
    if (l != NULL)
        return l;
    if (warning != NULL)
        *warning = chapoly_kernels_known(request)
                       ? "requested kernel level is not available on this CPU or "
                         "not compiled in; using the best available"
                       : "unknown kernel level; using the best available";
    return best_level(f);
}

void chapoly_kernels_build(chapoly_kernels *t, const char *level, const char *paths,
                           const char **level_warning, const char **paths_warning)
{
    if (paths_warning != NULL)
        *paths_warning = NULL;
    if (paths == NULL || *paths == '\0')
        paths = secure_getenv("CHAPOLY_PATHS");
    build_level(t, select_level(level, level_warning), paths, paths_warning);
}

/*
 * The built table of every level this CPU runs, made on first use: a
 * first caller builds them all (atomically claimed), racing callers wait.
 */
static chapoly_kernels built[NLEVELS];

static void build_all_once(void)
{
    static int state; /* 0 not built, 1 building, 2 built */
    int expected = 0;

    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2)
        return;
    if (__atomic_compare_exchange_n(&state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        const char *paths = secure_getenv("CHAPOLY_PATHS");

        for (size_t i = 0; i < NLEVELS; i++)
            build_level(&built[i], &levels[i], i == 0 ? NULL : paths, NULL);
        __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
        ; /* another thread is building (microseconds, once per process) */
}

const chapoly_kernels *chapoly_kernels_portable(void)
{
    build_all_once();
    return &built[0];
}

const chapoly_kernels *chapoly_kernels_by_name(const char *name)
{
    const struct level *l = level_for(name, features_once());

    if (l == NULL)
        return NULL;
    build_all_once();
    return &built[l - levels];
}

const chapoly_kernels *chapoly_kernels_best(void)
{
    build_all_once();
    return &built[best_level(features_once()) - levels];
}

void chapoly_kernels_for_mac(chapoly_kernels *mac, const chapoly_kernels *t)
{
    *mac = *t;
    if (t->shapes.poly_mac_min != 0) /* raised to a whole step by apply_choices */
        mac->shapes.poly_vector_min = t->shapes.poly_mac_min;
}

void chapoly_kernels_describe(const chapoly_kernels *t, char *buf, size_t n)
{
    const struct level *l = level_of(t->name);
    const char *profile_name = "none", *basis = NULL;
    chapoly_cpu_id id;
    size_t used = 0;

    if (n == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; l != NULL && i < NSHAPES; i++) {
        const struct shape *d = &shapes[i];
        unsigned v = shape_get(&t->shapes, d);
        int w;

        if (!(l->uses & (1u << i)))
            continue;
        if (d->kind == SHAPE_CHOICE)
            w = snprintf(buf + used, n - used, "%s%s=%s", used ? " " : "", d->name,
                         d->values[v != 0]);
        else
            w = snprintf(buf + used, n - used, "%s%s=%u", used ? " " : "", d->name, v);
        if (w < 0 || (size_t)w >= n - used)
            return;
        used += (size_t)w;
    }
    if (l != NULL && l->uses != 0) {
        chapoly_cpu_identify(&id);
        chapoly_cpu_profile(&id, t->name, &profile_name, &basis);
    }
    snprintf(buf + used, n - used, "%s(profile %s%s%s)", used ? " " : "", profile_name,
             basis != NULL ? ", " : "", basis != NULL ? basis : "");
}

/* ---- the portable level: the oracle, and every entry generic but its own ---- */

const chapoly_kernels chapoly_kernels_portable_table = {
    .name = "portable",
    .features = "portable C, no SIMD",
    .shapes = { .aead_chunk = 0, .first_max = CHAPOLY_GENERIC_BATCH - CHACHA20_BLOCK_BYTES,
                .chacha_batch = 64, .stream_min = 256, .stream_fill = 1 },
    .chacha20_xor = chacha20_xor_portable,
    .chacha20_keyblock_xor = chapoly_generic_keyblock_xor,
    .hchacha20 = hchacha20_portable,
    .poly1305_init = poly1305_init_portable,
    .poly1305_blocks = poly1305_blocks_portable,
    .poly1305_final = poly1305_final_portable,
    .poly1305_last = chapoly_generic_poly1305_last,
    .chacha20_multi_blocks = chacha20_multi_blocks_portable,
    .poly1305_multi_blocks = chapoly_generic_poly1305_multi_blocks,
    .aead_xor_hash_range = chapoly_generic_xor_hash_range,
    .aead_first_xor_hash = chapoly_generic_first_xor_hash,
    .chacha20_multi_blocks_hash = chapoly_generic_multi_blocks_hash,
};
