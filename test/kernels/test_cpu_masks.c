/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every kernel table requires exactly the CPU features its objects are
 * compiled for, and the dispatch picks the tables it should.
 *
 * kernels/CMakeLists.txt writes each kernel object's ISA flags to
 * chapoly_level_flags.h; kernel_symbols.sh lists, from the built objects,
 * which object defines each function and which functions of other kernel
 * objects each one calls (kernel_symbols.h). For each compiled level the
 * test takes every function pointer of its table, the objects defining
 * them and (transitively) the objects those call, and checks that
 *  - every flag has a CHAPOLY_CPU_* bit (a new flag fails here until it
 *    gets one);
 *  - the level's required mask (chapoly_kernels_required) is exactly the
 *    bits of those objects' flags: nothing the CPU might lack, nothing
 *    more than the objects need (so an IFMA object in a table without
 *    IFMA in its mask fails);
 *  - chapoly_kernels_by_name gives the table exactly when the CPU has it;
 * then that chapoly_kernels_best_for picks the intended table for each CPU
 * class, and that the probe agrees with __builtin_cpu_supports (x86) or
 * getauxval(AT_HWCAP) (AArch64), less what OPENSSL_ia32cap masks: its
 * values read as libcrypto reads them (chapoly_cpu_ia32cap_keep), and on
 * x86 the probe and the level picked under :~0x20 and :~0xC0230000.
 * The last line is "N passed, N failed"; exit status 0 iff none failed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels_impl.h"
#include "chapoly_level_flags.h"
#include "kernel_symbols.h"

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

/*
 * __builtin_cpu_supports wants a literal: one function per feature. It only
 * exists on x86; elsewhere (the arm64 tree) the x86 rows are never compiled
 * flags, and the probe must report none of them.
 */
#if defined(__x86_64__) || defined(__i386__)
#define HAS(f) static int has_##f(void) { return __builtin_cpu_supports(#f); }
#else
#define HAS(f) static int has_##f(void) { return 0; }
#define __builtin_cpu_init() ((void)0)
#endif
HAS(avx2)
HAS(bmi2)
HAS(avx512f)
HAS(avx512vl)
HAS(avx512bw)
HAS(avx512dq)
HAS(avx512ifma)

/* AArch64: the kernel's HWCAP_ASIMD, read here independently of the probe. */
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
static int has_asimd(void) { return (getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0; }
#else
static int has_asimd(void) { return 0; }
#endif

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
    { "-march=armv8-a+simd", CHAPOLY_CPU_ASIMD, has_asimd, 0 },
};
#define NISA (sizeof(isa) / sizeof(isa[0]))

static const struct isa *isa_of(const char *flag)
{
    for (size_t i = 0; i < NISA; i++)
        if (strcmp(flag, isa[i].flag) == 0)
            return &isa[i];
    return NULL;
}

/* OR of the bits of the flags in 'flags' (space-separated); unknown flags fail. */
static unsigned bits_of(const char *source, const char *flags)
{
    char buf[512], *save = NULL;
    unsigned b = 0;

    snprintf(buf, sizeof(buf), "%s", flags);
    for (char *f = strtok_r(buf, " ", &save); f != NULL; f = strtok_r(NULL, " ", &save)) {
        const struct isa *m = isa_of(f);

        check(m != NULL, "%s: flag %s has no CHAPOLY_CPU_* bit (add one to kernels_impl.h, its "
              "probe to cpu_features.c, to the masks of the tables using the object in "
              "dispatch.c, and a row here)", source, f);
        if (m != NULL)
            b |= m->bit;
    }
    return b;
}

static const struct object {
    const char *source, *flags;
} objects[] = { CHAPOLY_OBJECT_FLAGS };
#define NOBJ (sizeof(objects) / sizeof(objects[0]))

static size_t object_index(const char *source)
{
    for (size_t i = 0; i < NOBJ; i++)
        if (strcmp(objects[i].source, source) == 0)
            return i;
    return NOBJ;
}

static const struct kernel_symbol *symbol_at(const void *addr)
{
    for (const struct kernel_symbol *s = kernel_symbols; s->addr != NULL; s++)
        if (s->addr == addr)
            return s;
    return NULL;
}

static const struct kernel_symbol *symbol_named(const char *name)
{
    for (const struct kernel_symbol *s = kernel_symbols; s->addr != NULL; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

/* Every level's table, CPU or not (by_name answers only for this CPU). */
static const struct table {
    const char *level;
    const chapoly_kernels *k;
} tables[] = {
    { "portable", &chapoly_kernels_portable_table },
#ifdef CHAPOLY_HAVE_AVX2
    { "avx2", &chapoly_kernels_avx2 },
#endif
#ifdef CHAPOLY_HAVE_AVX512
    { "avx512vl", &chapoly_kernels_avx512vl },
    { "avx512-noifma", &chapoly_kernels_avx512_noifma },
    { "avx512", &chapoly_kernels_avx512 },
#endif
#ifdef CHAPOLY_HAVE_NEON
    { "neon", &chapoly_kernels_neon },
#endif
};
#define NTABLES (sizeof(tables) / sizeof(tables[0]))

static const chapoly_kernels *table_of(const char *level)
{
    for (size_t i = 0; i < NTABLES; i++)
        if (strcmp(tables[i].level, level) == 0)
            return tables[i].k;
    return NULL;
}

/*
 * The objects level 'name' runs: those defining its table's functions
 * (every member after 'features' is a function pointer), and the kernel
 * objects these call, transitively. Returns the OR of their flags' bits.
 */
static unsigned table_bits(const char *name, const chapoly_kernels *k, char *used, size_t usedlen)
{
    unsigned char in[NOBJ + 1] = { 0 };
    unsigned bits = 0;
    const size_t first = offsetof(chapoly_kernels, chacha20_xor);

    for (size_t off = first; off + sizeof(void *) <= sizeof(*k); off += sizeof(void *)) {
        const void *fn;
        const struct kernel_symbol *s;

        memcpy(&fn, (const char *)k + off, sizeof(fn));
        if (fn == NULL)
            continue;
        s = symbol_at(fn);
        check(s != NULL, "%s: table entry at offset %zu is no function of a kernel object", name,
              off);
        if (s == NULL)
            continue;
        in[object_index(s->source)] = 1;
        check(object_index(s->source) < NOBJ, "%s: %s lives in %s, which has no flags entry",
              name, s->name, s->source);
    }
    for (int changed = 1; changed;) {
        changed = 0;
        for (const struct kernel_ref *r = kernel_refs; r->source != NULL; r++) {
            const struct kernel_symbol *s = symbol_named(r->name);
            size_t from = object_index(r->source), to;

            if (from == NOBJ || !in[from] || s == NULL)
                continue;
            to = object_index(s->source);
            if (to < NOBJ && !in[to]) {
                in[to] = 1;
                changed = 1;
            }
        }
    }
    used[0] = '\0';
    for (size_t i = 0; i < NOBJ; i++) {
        if (!in[i])
            continue;
        bits |= bits_of(objects[i].source, objects[i].flags);
        snprintf(used + strlen(used), usedlen - strlen(used), "%s%s", used[0] ? " " : "",
                 objects[i].source);
    }
    return bits;
}

static void check_level(const char *name)
{
    unsigned req = 0, f = chapoly_cpu_features(), bits;
    const chapoly_kernels *k = table_of(name), *byname = chapoly_kernels_by_name(name);
    char used[512];

    check(k != NULL, "%s: compiled level missing from this test's table list", name);
    check(chapoly_kernels_required(name, &req) == 1, "%s: no mask for a compiled level", name);
    if (k == NULL)
        return;
    check(strcmp(k->name, name) == 0, "%s: the table is called %s", name, k->name);
    bits = table_bits(name, k, used, sizeof(used));
    check((bits & ~req) == 0,
          "%s: objects built for bits %#x the required mask %#x lacks (objects: %s)", name,
          bits & ~req, req, used);
    check((req & ~bits & ~CHAPOLY_CPU_ZMM) == 0,
          "%s: the required mask %#x has bits %#x none of its objects is built for (objects: %s)",
          name, req, req & ~bits & ~CHAPOLY_CPU_ZMM, used);
    /* 512-bit registers: the zmm levels need them allowed, no other does */
    check(!(req & CHAPOLY_CPU_ZMM) == !(strcmp(name, "avx512") == 0 ||
                                        strcmp(name, "avx512-noifma") == 0),
          "%s: requires zmm %s", name, (req & CHAPOLY_CPU_ZMM) ? "yes" : "no");
    check(byname == NULL || strcmp(byname->name, k->name) == 0,
          "%s: by_name gives another level's table (%s)", name, byname != NULL ? byname->name : "");
    check((byname != NULL) == ((f & req) == req),
          "%s: by_name disagrees with the required mask %#x (CPU %#x)", name, req, f);
    printf("%-13s requires 0x%04x; objects: %s\n", name, req, used);

    /* the level's cuts are ones the compositions take as they are (dispatch.c would round them) */
    const chapoly_shapes *s = &k->shapes;

    check(s->aead_chunk % 64 == 0, "%s: aead_chunk %u is not whole blocks", name,
          (unsigned)s->aead_chunk);
    check(s->first_max % 64 == 0 && s->first_max >= 64 &&
              s->first_max <= CHAPOLY_GENERIC_BATCH - 64,
          "%s: first_max %u is not whole blocks within one generic batch", name,
          (unsigned)s->first_max);
    check(s->chacha_batch >= 64 && (s->chacha_batch & (s->chacha_batch - 1)) == 0 &&
              s->chacha_batch <= s->first_max,
          "%s: chacha_batch %u is not a power of two from a block to first_max", name,
          (unsigned)s->chacha_batch);
    if (byname != NULL)
        check(byname->shapes.aead_chunk == s->aead_chunk &&
                  byname->shapes.first_max == s->first_max &&
                  byname->shapes.chacha_batch == s->chacha_batch,
              "%s: the built table's cuts differ from the level's", name);

    /* buildinfo's paths text, whole: room for every value at 10 digits (forced values) */
    char desc[CHAPOLY_DESCRIBE_MAX];
    size_t n = 0, len;

    chapoly_kernels_describe(k, desc, sizeof(desc));
    len = strlen(desc);
    for (const char *q = desc; (q = strchr(q, '=')) != NULL; q++)
        n++;
    check(len > 0 && desc[len - 1] == ')' && strstr(desc, "(profile ") != NULL,
          "%s: the paths text is cut: \"%s\"", name, desc);
    check(len + 9 * n < sizeof(desc), "%s: the paths text (%zu bytes, %zu values) may not fit %zu",
          name, len, n, sizeof(desc));
}

/*
 * chapoly_kernels_best_for(features) is 'want', or portable if 'want' is not
 * compiled, and offers 'serves' (CHAPOLY_SERVE_*) where it is picked so.
 */
static void check_best(const char *what, unsigned features, const char *want, unsigned serves)
{
    const chapoly_kernels *k = chapoly_kernels_best_for(features), *w = table_of(want);

    if (w == NULL)
        return;
    check(strcmp(k->name, w->name) == 0, "best for %s (%#x) is %s, not %s", what, features,
          k->name, want);
    check(chapoly_kernels_serves(k) == serves, "best for %s: %s serves %#x, not %#x", what,
          k->name, chapoly_kernels_serves(k), serves);
}

/*
 * OPENSSL_ia32cap values and the CHAPOLY_CPU_* bits they leave, as libcrypto
 * reads them (LV0 = CPUID.1 EDX:ECX, LV1 = CPUID.7.0 EBX:ECX).
 */
#define X_AVX2 CHAPOLY_CPU_AVX2
#define X_BMI2 CHAPOLY_CPU_BMI2
#define X_512 (CHAPOLY_CPU_ZMM | CHAPOLY_CPU_AVX512VL | CHAPOLY_CPU_AVX512BW | \
               CHAPOLY_CPU_AVX512DQ | CHAPOLY_CPU_AVX512IFMA)
#define X_ALL (X_AVX2 | X_BMI2 | X_512)
static const struct ia32cap_case {
    const char *env;
    unsigned cleared; /* of X_ALL */
} ia32cap_cases[] = {
    { ":~0x20", X_AVX2 },                       /* AVX2 */
    { ":~0xC0230000", X_512 },                  /* every AVX-512 bit chapoly uses */
    { ":~0x10000", CHAPOLY_CPU_ZMM },           /* F: no zmm code, as libcrypto reads it */
    { ":~0x20000", CHAPOLY_CPU_AVX512DQ },      /* DQ */
    { ":~0x200000", CHAPOLY_CPU_AVX512IFMA },   /* IFMA */
    { ":~0x40000000", CHAPOLY_CPU_AVX512BW },   /* BW */
    { ":~0x80000000", CHAPOLY_CPU_AVX512VL },   /* VL */
    { ":~0x100", X_BMI2 },                      /* BMI2 */
    { ":~0x1", 0 },                             /* FSGSBASE: nothing chapoly uses */
    { ":~0", 0 },
    { ":", X_ALL },                             /* an empty LV1 clears it */
    { "~0", X_ALL },                            /* no LV1 at all: cleared too */
    { "~0:~0", 0 },
    { "~0::0", 0 },                             /* LV2 (3.5's vectors) alone */
    { "::0", 0 },
    { "", X_ALL },                              /* LV0 = 0 (no AVX), no LV1 */
    { "~0x1000000000000000:~0", X_AVX2 | CHAPOLY_CPU_ZMM }, /* AVX: no AVX level */
    { "~0x800000000000000:~0", X_AVX2 | CHAPOLY_CPU_ZMM },  /* OSXSAVE */
    { "~0x1000000:~0", X_AVX2 | CHAPOLY_CPU_ZMM },  /* FXSR: libcrypto clears AVX too */
    { "0x1800000000000000:~0", 0 },             /* plain LV0 with OSXSAVE and AVX */
    { "0x0800000000000000:~0", X_AVX2 | CHAPOLY_CPU_ZMM }, /* plain LV0 without AVX */
    { ":0xC0230120", 0 },                       /* plain LV1: every bit chapoly uses */
    { ":0xC0230100", X_AVX2 },
    { ":0x20", X_BMI2 | X_512 },
    { ":~0X20", X_AVX2 },                       /* 0X */
    { ":~040", X_AVX2 },                        /* octal */
    { ":~32", X_AVX2 },                         /* decimal */
    { ":~0x20zz", X_AVX2 },                     /* stops at the first non-digit */
    { ":~0x8", 0 },                             /* BMI1: nothing chapoly uses */
    { ":~08", 0 },                              /* octal stops at 8: the value is 0 */
    { ":~0x10000000000000020", X_AVX2 },        /* 64 bits, wrapping as libcrypto's */
    { ":~0x20:~0", X_AVX2 },                    /* later vectors change nothing */
};

static void check_ia32cap(void)
{
    check(chapoly_cpu_ia32cap_keep(NULL) == ~0u, "OPENSSL_ia32cap unset keeps every bit");
    for (size_t i = 0; i < sizeof(ia32cap_cases) / sizeof(ia32cap_cases[0]); i++) {
        const struct ia32cap_case *c = &ia32cap_cases[i];
        unsigned keep = chapoly_cpu_ia32cap_keep(c->env);

        check((~keep & X_ALL) == c->cleared, "OPENSSL_ia32cap=%s clears %#x, want %#x", c->env,
              ~keep & X_ALL, c->cleared);
        check((keep & (CHAPOLY_CPU_YMM_ONLY | CHAPOLY_CPU_ASIMD | CHAPOLY_CPU_AVX512F)) ==
                  (CHAPOLY_CPU_YMM_ONLY | CHAPOLY_CPU_ASIMD | CHAPOLY_CPU_AVX512F),
              "OPENSSL_ia32cap=%s clears a bit that is no x86 ISA flag", c->env);
    }
}

/*
 * The probe itself under OPENSSL_ia32cap (x86): AVX2 masked gives the
 * portable level on an AVX2 CPU, every AVX-512 bit masked gives avx2 on an
 * AVX-512 one. Runs last: the environment is restored after, but
 * chapoly_kernels_by_name keeps what it read first.
 */
static void check_probe_masked(void)
{
#if defined(__x86_64__) || defined(__i386__)
    const char *saved = getenv("OPENSSL_ia32cap");
    char keep[256] = "";
    unsigned avx2 = 0, f, m;

    if (saved != NULL)
        snprintf(keep, sizeof(keep), "%s", saved);
    unsetenv("OPENSSL_ia32cap");
    f = chapoly_cpu_features(); /* the CPU's own */
    chapoly_kernels_required("avx2", &avx2);
    setenv("OPENSSL_ia32cap", ":~0x20", 1);
    m = chapoly_cpu_features();
    check(m == (f & ~CHAPOLY_CPU_AVX2), "probe under :~0x20 is %#x, want %#x", m,
          f & ~CHAPOLY_CPU_AVX2);
    check(strcmp(chapoly_kernels_best_for(m)->name, "portable") == 0,
          "level under :~0x20 is %s, not portable", chapoly_kernels_best_for(m)->name);
    setenv("OPENSSL_ia32cap", ":~0xC0230000", 1);
    m = chapoly_cpu_features();
    check(m == (f & ~X_512), "probe under :~0xC0230000 is %#x, want %#x", m, f & ~X_512);
    if (avx2 != 0 && (f & avx2) == avx2)
        check(strcmp(chapoly_kernels_best_for(m)->name, "avx2") == 0,
              "level under :~0xC0230000 on an AVX2 CPU is %s, not avx2",
              chapoly_kernels_best_for(m)->name);
    printf("OPENSSL_ia32cap=:~0x20 -> %s, :~0xC0230000 -> %s\n",
           chapoly_kernels_best_for(f & ~CHAPOLY_CPU_AVX2)->name,
           chapoly_kernels_best_for(m)->name);
    if (saved != NULL)
        setenv("OPENSSL_ia32cap", keep, 1);
    else
        unsetenv("OPENSSL_ia32cap");
#endif
}

int main(void)
{
    unsigned f = chapoly_cpu_features(), req;
    unsigned keep = chapoly_cpu_ia32cap_keep(getenv("OPENSSL_ia32cap"));

    __builtin_cpu_init();
    printf("CPU features %#06x\n", f);
    if (getenv("OPENSSL_ia32cap") != NULL)
        printf("OPENSSL_ia32cap=%s: chapoly keeps %#x\n", getenv("OPENSSL_ia32cap"), keep);

    /*
     * The probe never reports a feature the compiler's check denies, and
     * reports each one the compiler's check finds once it looks at all
     * (AVX-512 extensions: once AVX-512F and its OS state are there), less
     * what OPENSSL_ia32cap masks (x86).
     */
    for (size_t i = 0; i < NISA; i++) {
        int probe = (f & isa[i].bit) != 0, cc = isa[i].has() != 0;

#if defined(__x86_64__) || defined(__i386__)
        cc = cc && (keep & isa[i].bit) != 0;
#endif
        int looked = isa[i].base == 0 ? f != 0 : (f & isa[i].base) != 0;

        check(!probe || cc, "probe reports %s, __builtin_cpu_supports does not", isa[i].flag + 2);
        if (looked)
            check(probe == cc, "probe %d, __builtin_cpu_supports %d for %s", probe, cc,
                  isa[i].flag + 2);
    }

    check(chapoly_kernels_required("portable", &req) == 1 && req == 0, "portable requires nothing");
    check(chapoly_kernels_by_name("portable") != NULL, "portable always runs");
    check(chapoly_kernels_required("avx3", &req) == 0 && req == 0, "an unknown level has no mask");
    check(chapoly_kernels_required(NULL, &req) == 0, "NULL is no level");
    for (const char *const *n = chapoly_kernels_compiled(); *n != NULL; n++)
        check_level(*n);

    /* Each table is what some CPU class gets (dispatch.c, level_avx512.c, level_avx512vl.c). */
    unsigned avx2 = 0, avx512 = 0, ifma = CHAPOLY_CPU_AVX512IFMA, skx = CHAPOLY_CPU_YMM_ONLY;
    unsigned zmm = CHAPOLY_CPU_ZMM;

    chapoly_kernels_required("avx2", &avx2);
    chapoly_kernels_required("avx512vl", &avx512);
    /* what each offers (serve = auto): all four but where the default provider is faster */
    unsigned all = CHAPOLY_SERVE_ALL, xchacha = CHAPOLY_SERVE_XCHACHA;
    unsigned no_mac = CHAPOLY_SERVE_XCHACHA | CHAPOLY_SERVE_CHACHA;

    check_best("no SIMD", 0, "portable", xchacha);
    check_best("AVX2 only", avx2, "avx2", all);
    check_best("AVX2 + IFMA bit alone", avx2 | ifma, "avx2", all);
    check_best("Skylake-X/Cascade Lake", avx512 | zmm | skx, "avx512vl", all);
    check_best("model 0x55 with IFMA", avx512 | ifma | zmm | skx, "avx512vl", all);
    check_best("AVX-512 without IFMA", avx512 | zmm, "avx512-noifma", no_mac);
    check_best("AVX-512 with IFMA", avx512 | ifma | zmm, "avx512", all);
    check_best("AVX-512 with IFMA, zmm masked (OPENSSL_ia32cap)", avx512 | ifma, "avx512vl", all);
    check_best("AArch64 with ASIMD", CHAPOLY_CPU_ASIMD, "neon", all);
    check(chapoly_kernels_serves(NULL) == xchacha, "no table serves XChaCha20-Poly1305 only");
    check(strcmp(chapoly_kernels_best()->name, chapoly_kernels_best_for(f)->name) == 0,
          "best() is not best_for(CPU)");
    printf("best here: %s\n", chapoly_kernels_best()->name);
    check_ia32cap();
    check_probe_masked();
    printf("%lu passed, %lu failed\n", n_pass, n_fail);
    return n_fail == 0 ? 0 : 1;
}
