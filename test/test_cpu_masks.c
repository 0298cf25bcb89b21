/*
 * Every kernel level checks the CPU features its objects are compiled for.
 *
 * kernels/CMakeLists.txt writes each level's ISA flags to
 * chapoly_level_flags.h: the flags of every object the level runs, and the
 * extra flags of the objects that run the code built for them only after a
 * probe of their own ("gated": -mavx512ifma on poly1305_avx512.c and
 * aead_avx512.c). Each flag maps to one CHAPOLY_CPU_* bit (the table below,
 * the same mapping as in kernels_impl.h); the test checks that
 *  - every flag has a bit (a new flag fails here until it gets one);
 *  - every flag of a level is in the mask chapoly_kernels_by_name requires
 *    (chapoly_kernels_required), a gated flag in that mask or in the
 *    level's 'inside' mask, and nothing else is 'inside';
 *  - each 'inside' bit is what the level's own probe answers, and that
 *    answer picks the path (IFMA: poly1305_have_ifma() and the state the
 *    AVX-512 levels' Poly1305 leaves);
 *  - chapoly_kernels_by_name gives a table exactly when the CPU has the mask;
 *  - the cpuid probe agrees with the compiler's __builtin_cpu_supports.
 * The last line is "N passed, N failed"; exit status 0 iff none failed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "kernels_impl.h"
#include "chapoly_level_flags.h"

static unsigned long n_pass, n_fail;

static void check(int ok, const char *fmt, ...)
{
    va_list ap;

    if (ok) {
        n_pass++;
        return;
    }
    n_fail++;
    printf("FAIL ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* __builtin_cpu_supports wants a literal: one function per feature. */
#define HAS(f) static int has_##f(void) { return __builtin_cpu_supports(#f); }
HAS(avx2)
HAS(bmi2)
HAS(avx512f)
HAS(avx512vl)
HAS(avx512bw)
HAS(avx512dq)
HAS(avx512ifma)

/*
 * Compiler flag -> CPU feature bit, the compiler's own test for it, and the
 * bit under which the probe looks for it at all (0: the probe found AVX and
 * OS support for it, i.e. reported anything).
 */
static const struct isa {
    const char *flag;
    unsigned bit;
    int (*has)(void);
    unsigned base;
} isa[] = {
    { "-mavx2", CHAPOLY_CPU_AVX2, has_avx2, 0 },
    { "-mbmi2", CHAPOLY_CPU_BMI2, has_bmi2, 0 },
    { "-mavx512f", CHAPOLY_CPU_AVX512F, has_avx512f, 0 },
    { "-mavx512vl", CHAPOLY_CPU_AVX512VL, has_avx512vl, CHAPOLY_CPU_AVX512F },
    { "-mavx512bw", CHAPOLY_CPU_AVX512BW, has_avx512bw, CHAPOLY_CPU_AVX512F },
    { "-mavx512dq", CHAPOLY_CPU_AVX512DQ, has_avx512dq, CHAPOLY_CPU_AVX512F },
    { "-mavx512ifma", CHAPOLY_CPU_AVX512IFMA, has_avx512ifma, CHAPOLY_CPU_AVX512F },
};
#define NISA (sizeof(isa) / sizeof(isa[0]))

static const struct isa *isa_of(const char *flag)
{
    for (size_t i = 0; i < NISA; i++)
        if (strcmp(flag, isa[i].flag) == 0)
            return &isa[i];
    return NULL;
}

/*
 * Check that each flag in 'flags' (space-separated) has a bit and that the
 * bit is in 'allowed'; 'kind' names the flag list in messages.
 */
static void check_flags(const char *level, const char *kind, const char *flags,
                        unsigned allowed)
{
    char buf[512], *save = NULL;

    snprintf(buf, sizeof(buf), "%s", flags);
    for (char *f = strtok_r(buf, " ", &save); f != NULL; f = strtok_r(NULL, " ", &save)) {
        const struct isa *m = isa_of(f);

        check(m != NULL, "%s: %s flag %s has no CHAPOLY_CPU_* bit (add one to kernels_impl.h, "
              "its probe to cpu_features.c, the level's mask to dispatch.c and a row here)",
              level, kind, f);
        if (m != NULL)
            check((m->bit & allowed) == m->bit,
                  "%s: objects built with %s (%s flags), but the level does not check it "
                  "(required mask %#x)", level, f, kind, allowed);
    }
}

/* OR of the bits of the known flags in 'flags'. */
static unsigned bits_of(const char *flags)
{
    char buf[512], *save = NULL;
    unsigned b = 0;

    snprintf(buf, sizeof(buf), "%s", flags);
    for (char *f = strtok_r(buf, " ", &save); f != NULL; f = strtok_r(NULL, " ", &save))
        if (isa_of(f) != NULL)
            b |= isa_of(f)->bit;
    return b;
}

static void check_level(const char *name, const char *flags, const char *gated)
{
    unsigned req = 0, in = 0, f = chapoly_cpu_features();

    check(chapoly_kernels_required(name, &req, &in) == 1, "%s: no masks for a compiled level", name);
    check_flags(name, "level", flags, req);
    check_flags(name, "gated", gated, req | in);
    check((in & ~bits_of(gated)) == 0,
          "%s: 'inside' mask %#x has bits no gated object is built for (%s)", name, in, gated);
    check((chapoly_kernels_by_name(name) != NULL) == ((f & req) == req),
          "%s: by_name disagrees with the required mask %#x (CPU %#x)", name, req, f);
    printf("%-9s requires 0x%04x, checks inside 0x%04x; flags \"%s\" + gated \"%s\"\n", name, req,
           in, flags, gated);
}

#ifdef CHAPOLY_HAVE_AVX512
/*
 * The one 'inside' bit: AVX-512 IFMA. Its probe must be the CPU bit, and it
 * must pick the path: after 64 blocks the IFMA Poly1305 has its 16-lane
 * powers (ST_POW16 = 8 in state word 8, poly1305_ifma.h), a bit the AVX2
 * Poly1305 it falls back to never sets (its bits are 1 and 2 in the same
 * word, poly1305_avx2.c).
 */
static void check_ifma_inside(const char *name)
{
    unsigned req, in;
    const chapoly_kernels *k = chapoly_kernels_by_name(name);
    int have = (chapoly_cpu_features() & CHAPOLY_CPU_AVX512IFMA) != 0;
    static poly1305_state st;
    static uint8_t msg[1024], key[32] = { 1, 2, 3 }, tag[16];

    chapoly_kernels_required(name, &req, &in);
    if (!(in & CHAPOLY_CPU_AVX512IFMA))
        return; /* required outright: by_name checks it */
    check(poly1305_have_ifma() == have, "%s: poly1305_have_ifma() %d, CPU IFMA bit %d", name,
          poly1305_have_ifma(), have);
    if (k == NULL)
        return; /* this CPU does not run the level */
    k->poly1305_init(&st, key);
    k->poly1305_blocks(&st, msg, sizeof(msg), 1);
    check(((st.priv[8] & 8) != 0) == have, "%s: Poly1305 %s the IFMA path with IFMA %s", name,
          (st.priv[8] & 8) ? "took" : "did not take", have ? "present" : "absent");
    k->poly1305_final(&st, tag);
}
#endif

int main(void)
{
    unsigned f = chapoly_cpu_features(), req, in;

    __builtin_cpu_init();
    printf("CPU features %#06x\n", f);

    /*
     * The probe never reports a feature the compiler's check denies, and
     * reports each one the compiler's check finds once it looks at all
     * (AVX-512 extensions: once AVX-512F and its OS state are there).
     */
    for (size_t i = 0; i < NISA; i++) {
        int probe = (f & isa[i].bit) != 0, cc = isa[i].has() != 0;
        int looked = isa[i].base == 0 ? f != 0 : (f & isa[i].base) != 0;

        check(!probe || cc, "probe reports %s, __builtin_cpu_supports does not", isa[i].flag + 2);
        if (looked)
            check(probe == cc, "probe %d, __builtin_cpu_supports %d for %s", probe, cc,
                  isa[i].flag + 2);
    }

    check(chapoly_kernels_required("portable", &req, &in) == 1 && req == 0 && in == 0,
          "portable requires nothing");
    check(chapoly_kernels_by_name("portable") != NULL, "portable always runs");
    check(chapoly_kernels_required("avx3", &req, &in) == 0 && req == 0 && in == 0,
          "an unknown level has no masks");
    check(chapoly_kernels_required(NULL, &req, &in) == 0, "NULL is no level");
#ifdef CHAPOLY_HAVE_AVX2
    check_level("avx2", CHAPOLY_LEVEL_FLAGS_AVX2, "");
#endif
#ifdef CHAPOLY_HAVE_AVX512
    check_level("avx512vl", CHAPOLY_LEVEL_FLAGS_AVX512, CHAPOLY_LEVEL_GATED_FLAGS_AVX512);
    check_level("avx512", CHAPOLY_LEVEL_FLAGS_AVX512, CHAPOLY_LEVEL_GATED_FLAGS_AVX512);
    check_ifma_inside("avx512vl");
    check_ifma_inside("avx512");
#endif
    printf("%lu passed, %lu failed\n", n_pass, n_fail);
    return n_fail == 0 ? 0 : 1;
}
