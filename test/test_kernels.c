/*
 * Kernel tests, no OpenSSL: every kernel level this CPU runs is checked
 * against the shared vectors (rfc8439.txt, xchacha.txt, poly1305-edge.txt,
 * the Wycheproof AEAD files), against the portable level (all lengths up to
 * 2 KiB, random lengths up to 70000, counter wrap, unaligned and in-place
 * buffers, every streaming split) and with the two published procedural
 * Poly1305 stress checks. After every kernel call of a SIMD level the upper
 * vector state must be clean (see "upper vector state" below).
 *
 * Built twice: against chapoly_kernels and against chapoly_kernels_poly32
 * (radix 2^26 Poly1305 fallback), where only the portable level exists.
 *
 * Environment: CHAPOLY_VECTOR_DIR (default: CHAPOLY_VECTOR_DIR_DEFAULT, which
 * CMake sets to test/vectors in the source tree), CHAPOLY_TEST_SEED (PRNG seed,
 * default 1). The last output line is "N passed, N failed"; the exit status
 * is nonzero on any failure or if nothing was checked.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"
#include "vectors.h"

/* ------------------------------------------------------------------ */
/* results                                                             */

static unsigned long n_pass, n_fail;
static const char *cur_level = "-"; /* level under test, for messages */

static void fail_at(int line, const char *fmt, ...)
{
    va_list ap;

    if (++n_fail > 200) {
        if (n_fail == 201)
            printf("FAIL: (further failure messages suppressed)\n");
        return;
    }
    printf("FAIL [%s] test_kernels.c:%d: ", cur_level, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* The message is formatted only on failure: the sweeps run ~10^6 checks. */
#define CHECK(cond, ...) ((cond) ? (void)n_pass++ : fail_at(__LINE__, __VA_ARGS__))

/* ------------------------------------------------------------------ */
/* deterministic PRNG (xoshiro256**, seeded through splitmix64)        */

static uint64_t rs[4];

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rnd_seed(uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rs[i] = splitmix64(&seed);
}

static uint64_t rnd64(void)
{
    uint64_t r = rs[1] * 5;
    r = ((r << 7) | (r >> 57)) * 9;
    uint64_t t = rs[1] << 17;
    rs[2] ^= rs[0];
    rs[3] ^= rs[1];
    rs[1] ^= rs[2];
    rs[0] ^= rs[3];
    rs[2] ^= t;
    rs[3] = (rs[3] << 45) | (rs[3] >> 19);
    return r;
}

static size_t rnd_below(size_t n)
{
    return n ? (size_t)(rnd64() % n) : 0;
}

static void rnd_bytes(uint8_t *p, size_t n)
{
    while (n >= 8) {
        uint64_t v = rnd64();
        memcpy(p, &v, 8);
        p += 8;
        n -= 8;
    }
    if (n) {
        uint64_t v = rnd64();
        memcpy(p, &v, n);
    }
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void *xalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* ------------------------------------------------------------------ */
/* upper vector state                                                  */
/*
 * Every AVX/AVX-512 kernel must return with a clean upper state. Two
 * detectors, each proven by a self-check before it is trusted:
 *
 *  - XINUSE (xgetbv ecx=1, if CPUID.(0DH,1):EAX[2]): bit 2 = upper halves
 *    of ymm0-15, bit 6 = bits 511:256 of zmm0-15, bit 7 = zmm16-31. The SDM
 *    lets a CPU track these loosely, so a bit is used only if the self-check
 *    sees it set after deliberate dirt.
 *  - Register inspection: after the call, store ymm0-15 / zmm0-31 and
 *    require the upper parts to be zero. vzeroupper zeroes bits 511:128 of
 *    ymm/zmm0-15, and this file is compiled without AVX, so nothing between
 *    the kernel's return and the inspection writes those bits (legacy SSE
 *    leaves them alone). zmm16-31 are not touched by vzeroupper: a kernel
 *    that uses them must zero them itself.
 *
 * Before each kernel call the three state components are put back in their
 * initial configuration with XRSTOR (header XSTATE_BV = 0), so dirt left by
 * earlier code (e.g. glibc's printf) is never blamed on the kernel.
 *
 * glibc's EVEX string functions use xmm16-31 on purpose (no vzeroupper
 * needed), so a kernel calling memcpy/memset (chapoly_wipe does) would look
 * dirty in zmm16-31 through no fault of its own. This program therefore
 * defines memcpy/memmove/memset with rep movsb/stosb, which touch no vector
 * register; the statically linked kernels bind to these. Under
 * AddressSanitizer (which intercepts those functions) the zmm16-31 check is
 * skipped instead.
 */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define UP_X86 1
#include <cpuid.h>
#else
#define UP_X86 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#define UP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UP_ASAN 1
#endif
#endif
#ifndef UP_ASAN
#define UP_ASAN 0
#endif

enum { D_YMM = 1, D_ZMM = 2, D_HI16 = 4 };

static const char *dirt_name(unsigned d)
{
    switch (d) {
    case D_YMM: return "upper halves of ymm0-15 (XINUSE bit 2)";
    case D_ZMM: return "bits 511:256 of zmm0-15 (XINUSE bit 6, ZMM_Hi256)";
    default: return "zmm16-31 (XINUSE bit 7, Hi16_ZMM)";
    }
}

static struct {
    int active;              /* checks run after SIMD kernel calls */
    int avx512;              /* OS saves ZMM state: inspect 32 zmm */
    int have_xinuse;
    unsigned check;          /* D_* kinds checked */
    unsigned xinuse_proven;  /* D_* kinds XINUSE was seen to report */
    uint64_t rfbm;           /* XSAVE components reset before each call */
    uint8_t *area;
} up;
static _Alignas(64) uint8_t up_regs[32 * 64];

#if UP_X86 && !UP_ASAN
/*
 * Vector-free replacements for the libc functions the kernels call; see
 * above. rep movsb/stosb are fast on every CPU with ERMS and correct on all.
 */
void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    void *d = dst;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

    if (d - s >= n) { /* no harmful overlap for a forward copy */
        void *dd = dst;
        __asm__ volatile("rep movsb" : "+D"(dd), "+S"(src), "+c"(n) : : "memory");
    } else {
        void *dd = (uint8_t *)dst + n - 1;
        const void *ss = (const uint8_t *)src + n - 1;
        __asm__ volatile("std\n\trep movsb\n\tcld" : "+D"(dd), "+S"(ss), "+c"(n) : : "memory");
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    void *d = dst;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return dst;
}
#define UP_INTERPOSED 1
#else
#define UP_INTERPOSED 0
#endif

#if UP_X86
static uint64_t up_xgetbv(uint32_t ecx)
{
    uint32_t lo, hi;
    /* "memory": keeps the read ordered after the (opaque) kernel call. */
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(ecx) : "memory");
    return (uint64_t)hi << 32 | lo;
}

static void up_reset(void)
{
    uint32_t lo = (uint32_t)up.rfbm, hi = (uint32_t)(up.rfbm >> 32);

    /*
     * The header (bytes 512..575) stays zero, so every component in RFBM is
     * initialised. XRSTOR also loads MXCSR when RFBM[2] is set: store the
     * current value so it is unchanged.
     */
    __asm__ volatile("stmxcsr 24(%0)\n\txrstor (%0)"
                     : : "r"(up.area), "a"(lo), "d"(hi) : "memory");
}

#define ZST(n) "vmovdqu64 %%zmm" #n ", " #n "*64(%0)\n\t"
#define YST(n) "vmovdqu %%ymm" #n ", " #n "*64(%0)\n\t"

static void up_dump(void)
{
    if (up.avx512) {
        __asm__ volatile(ZST(0) ZST(1) ZST(2) ZST(3) ZST(4) ZST(5) ZST(6) ZST(7)
                         ZST(8) ZST(9) ZST(10) ZST(11) ZST(12) ZST(13) ZST(14) ZST(15)
                         ZST(16) ZST(17) ZST(18) ZST(19) ZST(20) ZST(21) ZST(22) ZST(23)
                         ZST(24) ZST(25) ZST(26) ZST(27) ZST(28) ZST(29) ZST(30) ZST(31)
                         : : "r"(up_regs) : "memory");
    } else {
        __asm__ volatile(YST(0) YST(1) YST(2) YST(3) YST(4) YST(5) YST(6) YST(7)
                         YST(8) YST(9) YST(10) YST(11) YST(12) YST(13) YST(14) YST(15)
                         : : "r"(up_regs) : "memory");
    }
}

static int any_nonzero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc != 0;
}

/*
 * What the two detectors see right now: *by_regs from register inspection,
 * *xinuse the raw XINUSE value (0 if unsupported). XINUSE is read first.
 */
static void up_probe_raw(unsigned *by_regs, uint64_t *xinuse)
{
    *xinuse = up.have_xinuse ? up_xgetbv(1) : 0;
    up_dump();
    unsigned d = 0;
    for (int r = 0; r < 16; r++) {
        if (any_nonzero(up_regs + 64 * r + 16, 16))
            d |= D_YMM;
        if (up.avx512 && any_nonzero(up_regs + 64 * r + 32, 32))
            d |= D_ZMM;
    }
    if (up.avx512 && any_nonzero(up_regs + 16 * 64, 16 * 64))
        d |= D_HI16;
    *by_regs = d;
}

static unsigned xinuse_kinds(uint64_t x)
{
    return ((x >> 2) & 1 ? D_YMM : 0) | ((x >> 6) & 1 ? D_ZMM : 0) | ((x >> 7) & 1 ? D_HI16 : 0);
}

/* Dirt of the checked kinds, from every detector proven to work. */
static unsigned up_probe(void)
{
    unsigned regs;
    uint64_t x;

    up_probe_raw(&regs, &x);
    return (regs | (xinuse_kinds(x) & up.xinuse_proven)) & up.check;
}

/*
 * Deliberate dirt for the self-check. Deliberately NOT marked
 * target("avx2"/"avx512f"): GCC then appends vzeroupper to a function whose
 * asm clobbers a vector register, which would leave no dirt (the self-check
 * caught exactly that). In baseline functions the compiler emits no AVX
 * code, and the assembler accepts the instructions regardless. zmm17 is not
 * named as clobbered: baseline code never allocates it.
 */
__attribute__((noinline)) static void dirty_ymm(void)
{
    __asm__ volatile("vpcmpeqd %%ymm5, %%ymm5, %%ymm5" : : : "xmm5");
}

__attribute__((noinline)) static void dirty_zmm_hi256(void)
{
    /* All ones in bits 511:256 of zmm6 only (bits 255:0 stay zero). */
    __asm__ volatile("vpternlogd $0xff, %%zmm6, %%zmm6, %%zmm6\n\t"
                     "vpxor %%xmm7, %%xmm7, %%xmm7\n\t"
                     "vinserti64x4 $0, %%ymm7, %%zmm6, %%zmm6"
                     : : : "xmm6", "xmm7");
}

__attribute__((noinline)) static void dirty_hi16(void)
{
    __asm__ volatile("vpternlogd $0xff, %%zmm17, %%zmm17, %%zmm17" : : : "memory");
}

/* The clean-ups a kernel is expected to do before returning. */
__attribute__((noinline)) static void clean_vzeroupper(void)
{
    __asm__ volatile("vzeroupper" : : : "memory");
}

__attribute__((noinline)) static void clean_hi16(void)
{
    __asm__ volatile("vpxord %%xmm17, %%xmm17, %%xmm17" : : : "memory");
}

static void *(*volatile memcpy_ptr)(void *, const void *, size_t) = memcpy;
static void *(*volatile memset_ptr)(void *, int, size_t) = memset;
#endif /* UP_X86 */

/*
 * Sets up the detectors and proves each one on deliberate dirt; checks run
 * even if one kind is blind (that is a counted failure, never a silent pass).
 */
static void up_init(void)
{
    cur_level = "upper-state self-check";
#if UP_X86
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX)) {
        printf("upper-state check: no OS-enabled AVX; not applicable\n");
        return;
    }
    uint64_t xcr0 = up_xgetbv(0);
    if ((xcr0 & 6) != 6) {
        printf("upper-state check: OS does not save YMM state; not applicable\n");
        return;
    }
    up.avx512 = (xcr0 & 0xe0) == 0xe0;
    up.rfbm = 4 | (up.avx512 ? 0xc0 : 0);
    up.check = D_YMM | (up.avx512 ? D_ZMM | D_HI16 : 0);
    if (up.avx512 && UP_ASAN) {
        up.check &= ~(unsigned)D_HI16;
        printf("upper-state check: AddressSanitizer build, libc mem* cannot be replaced: "
               "zmm16-31 not checked\n");
    }
    __cpuid_count(0xd, 1, a, b, c, d);
    up.have_xinuse = (a >> 2) & 1;
    __cpuid_count(0xd, 0, a, b, c, d);
    up.area = xalloc(b + 64);
    memset(up.area, 0, b + 64);

    static const struct {
        unsigned kind;
        void (*fn)(void), (*clean)(void);
    } dirt[] = { { D_YMM, dirty_ymm, clean_vzeroupper },
                 { D_ZMM, dirty_zmm_hi256, clean_vzeroupper },
                 { D_HI16, dirty_hi16, clean_hi16 } };
    for (size_t i = 0; i < sizeof(dirt) / sizeof(dirt[0]); i++) {
        unsigned regs;
        uint64_t x;
        if (!(up.check & dirt[i].kind))
            continue;
        up_reset();
        up_probe_raw(&regs, &x);
        CHECK(regs == 0 && (xinuse_kinds(x) & up.check) == 0,
              "XRSTOR reset did not give a clean state (regs 0x%x, XINUSE 0x%llx)", regs,
              (unsigned long long)x);
        up_reset();
        dirt[i].fn();
        up_probe_raw(&regs, &x);
        int xin_sees = (xinuse_kinds(x) & dirt[i].kind) != 0;
        CHECK((regs | xinuse_kinds(x)) & dirt[i].kind,
              "deliberate dirt in %s is NOT detected by any method: the check would be blind",
              dirt_name(dirt[i].kind));
        CHECK(!(regs & ~dirt[i].kind), "dirtying %s also showed kinds 0x%x", dirt_name(dirt[i].kind),
              regs & ~dirt[i].kind);
        /*
         * XINUSE is trusted for a kind only if it also clears after the
         * clean-up kernels do (vzeroupper; zeroing zmm16-31): a CPU may keep
         * the bit set for zeroed registers, and kernels could not pass then.
         */
        unsigned regs2;
        uint64_t x2;
        dirt[i].clean();
        up_probe_raw(&regs2, &x2);
        int xin_clears = !(xinuse_kinds(x2) & dirt[i].kind);
        CHECK(!(regs2 & dirt[i].kind), "%s still nonzero after the clean-up instruction",
              dirt_name(dirt[i].kind));
        if (xin_sees && xin_clears)
            up.xinuse_proven |= dirt[i].kind;
        printf("upper-state self-check: dirt in %s seen by register inspection: %s, by XINUSE: %s\n",
               dirt_name(dirt[i].kind), (regs & dirt[i].kind) ? "yes" : "NO",
               !up.have_xinuse ? "n/a (no XGETBV ecx=1)"
               : !xin_sees   ? "no (not tracked by this CPU; not used)"
               : !xin_clears ? "yes, but stays set after clean-up (not used)"
                             : "yes (used)");
    }
    /* The replaced (or, under ASan, libc) mem* must not themselves dirty. */
    {
        uint8_t *p = xalloc(8192), *q = xalloc(8192);
        unsigned dd;
        memset_ptr(p, 0x5c, 8192);
        up_reset();
        memcpy_ptr(q, p, 8192);
        memset_ptr(p, 0xa3, 8192);
        memcpy_ptr(q + 1, p + 3, 100);
        dd = up_probe();
        CHECK(dd == 0, "memcpy/memset leave dirt 0x%x%s", dd,
              UP_INTERPOSED ? " (replacement not used?)" : "");
        free(p);
        free(q);
    }
    up_reset();
    up.active = 1;
    printf("upper-state check: on (%s%s%s%s)\n", (up.check & D_YMM) ? "ymm0-15" : "",
           (up.check & D_ZMM) ? ", zmm0-15 hi256" : "", (up.check & D_HI16) ? ", zmm16-31" : "",
           UP_INTERPOSED ? "; vector-free memcpy/memset in this binary" : "");
#else
    printf("upper-state check: not x86-64; not applicable\n");
#endif
}

/* Per level: calls per kernel entry point and the first dirty one. */
enum { F_CHACHA, F_HCHACHA, F_PINIT, F_PBLOCKS, F_PFINAL, F_SINIT, F_SUPDATE, F_SFINAL,
       F_SEAL, F_OPEN, F_XORHASH, F_XORKB, F_COUNT };
static const char *const fn_names[F_COUNT] = {
    "chacha20_xor", "hchacha20", "poly1305_init", "poly1305_blocks", "poly1305_final",
    "chapoly_poly1305_init", "chapoly_poly1305_update", "chapoly_poly1305_final",
    "chapoly_aead_seal", "chapoly_aead_open", "chapoly_aead_xor_hash",
    "chapoly_chacha20_xor_kb"
};
static struct {
    unsigned long calls, dirty;
    size_t first_len;
    unsigned first_kind;
} fstat[F_COUNT];
static int check_upper; /* the level under test is a SIMD level */

static inline void k_before(void)
{
#if UP_X86
    if (check_upper)
        up_reset();
#endif
}

static inline void k_after(int fn, size_t len)
{
    fstat[fn].calls++;
#if UP_X86
    if (check_upper) {
        unsigned d = up_probe();
        if (d && fstat[fn].dirty++ == 0) {
            fstat[fn].first_len = len;
            fstat[fn].first_kind = d;
        }
    }
#else
    (void)len;
#endif
}

static void fstat_report(void)
{
    if (!check_upper)
        return;
    for (int f = 0; f < F_COUNT; f++) {
        if (fstat[f].calls == 0)
            continue;
        unsigned d = fstat[f].first_kind;
        CHECK(fstat[f].dirty == 0,
              "%s returned with dirty upper state in %lu of %lu calls; first at len %zu: %s%s%s",
              fn_names[f], fstat[f].dirty, fstat[f].calls, fstat[f].first_len,
              (d & D_YMM) ? "[ymm0-15 upper] " : "", (d & D_ZMM) ? "[zmm0-15 bits 511:256] " : "",
              (d & D_HI16) ? "[zmm16-31 nonzero; vzeroupper does not clear them]" : "");
    }
}

/* ------------------------------------------------------------------ */
/* kernel call wrappers (upper-state check around every call)          */

static const chapoly_kernels *P; /* portable: the oracle */

static void k_chacha(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                     const uint32_t key[8], const uint32_t cn[4])
{
    k_before();
    k->chacha20_xor(out, in, len, key, cn);
    k_after(F_CHACHA, len);
}

static void k_hchacha(const chapoly_kernels *k, uint8_t sub[32], const uint8_t key[32],
                      const uint8_t nonce[16])
{
    k_before();
    k->hchacha20(sub, key, nonce);
    k_after(F_HCHACHA, 32);
}

/*
 * Raw one-shot Poly1305 straight on the table: one blocks call over every
 * whole block, then the padded tail with padbit 0.
 */
static void k_poly_raw(const chapoly_kernels *k, uint8_t tag[16], const uint8_t key[32],
                       const uint8_t *m, size_t len)
{
    poly1305_state st;
    size_t whole = len & ~(size_t)15;

    k_before();
    k->poly1305_init(&st, key);
    k_after(F_PINIT, len);
    if (whole) {
        k_before();
        k->poly1305_blocks(&st, m, whole, 1);
        k_after(F_PBLOCKS, whole);
    }
    if (len & 15) {
        uint8_t b[16] = { 0 };
        memcpy(b, m + whole, len & 15);
        b[len & 15] = 1;
        k_before();
        k->poly1305_blocks(&st, b, 16, 0);
        k_after(F_PBLOCKS, 16);
    }
    k_before();
    k->poly1305_final(&st, tag);
    k_after(F_PFINAL, len);
}

static void k_sinit(const chapoly_kernels *k, poly1305_state *st, const uint8_t key[32])
{
    k_before();
    chapoly_poly1305_init(k, st, key);
    k_after(F_SINIT, 0);
}

static void k_supdate(const chapoly_kernels *k, poly1305_state *st, const uint8_t *m, size_t len)
{
    k_before();
    chapoly_poly1305_update(k, st, m, len);
    k_after(F_SUPDATE, len);
}

static void k_sfinal(const chapoly_kernels *k, poly1305_state *st, uint8_t tag[16])
{
    k_before();
    chapoly_poly1305_final(k, st, tag);
    k_after(F_SFINAL, 0);
}

/* Streaming tag over pieces of the given sizes (sum == len). */
static void k_poly_stream(const chapoly_kernels *k, uint8_t tag[16], const uint8_t key[32],
                          const uint8_t *m, const size_t *pieces, size_t npieces)
{
    poly1305_state st;

    k_sinit(k, &st, key);
    for (size_t i = 0; i < npieces; i++) {
        k_supdate(k, &st, m, pieces[i]);
        if (pieces[i])
            m += pieces[i]; /* m may be NULL for an empty message */
    }
    k_sfinal(k, &st, tag);
}

static void k_seal(const chapoly_kernels *k, uint8_t *out, uint8_t tag[16], const uint8_t *in,
                   size_t len, const uint8_t *aad, size_t aadlen, const uint32_t key[8],
                   const uint8_t nonce[12])
{
    k_before();
    chapoly_aead_seal(k, out, tag, in, len, aad, aadlen, key, nonce);
    k_after(F_SEAL, len);
}

static int k_open(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                  const uint8_t *aad, size_t aadlen, const uint8_t *tag, size_t taglen,
                  const uint32_t key[8], const uint8_t nonce[12])
{
    k_before();
    int r = chapoly_aead_open(k, out, in, len, aad, aadlen, tag, taglen, key, nonce);
    k_after(F_OPEN, len);
    return r;
}

static void k_xor_hash(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                       const uint32_t key[8], const uint32_t cn[4], poly1305_state *st,
                       const uint8_t *pre, int enc)
{
    k_before();
    chapoly_aead_xor_hash(k, out, in, len, key, cn, st, pre, enc);
    k_after(F_XORHASH, len);
}

static void k_xor_kb(const chapoly_kernels *k, uint8_t kb[64], uint8_t *out, const uint8_t *in,
                     size_t len, const uint32_t key[8], const uint32_t cn[4])
{
    k_before();
    chapoly_chacha20_xor_kb(k, kb, out, in, len, key, cn);
    k_after(F_XORKB, len);
}

/* ------------------------------------------------------------------ */
/* shared AEAD checks                                                  */

static uint8_t *abuf_a, *abuf_b; /* scratch, ABUF bytes each */
#define ABUF (70000 + 4096)
#define GUARD 64
#define SENT 0xa5

/*
 * memcmp/memcpy that accept NULL with n == 0: empty vector fields are NULL
 * (and are passed to the kernels as such, as a caller may do).
 */
static int meq(const void *a, const void *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

static void mcpy(void *d, const void *s, size_t n)
{
    if (n)
        memcpy(d, s, n);
}

static int all_byte(const uint8_t *p, size_t n, uint8_t v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

/*
 * Full positive + negative check of one AEAD case with a known answer
 * (ct, tag): seal out of place and in place, open out of place and in
 * place, truncated tags, and rejections (tag, ciphertext, AAD flips; tag
 * length 0) that must leave the output untouched.
 */
static void aead_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                       const uint8_t nonce[12], const uint8_t *aad, size_t aadlen,
                       const uint8_t *pt, size_t len, const uint8_t *ct, const uint8_t tag[16])
{
    uint32_t kw[8];
    uint8_t t[16], badtag[16];
    uint8_t *o = abuf_a + GUARD, *w = abuf_b + GUARD;

    if (len + 2 * GUARD > ABUF) {
        CHECK(0, "%s: case too large for the scratch buffers (%zu)", what, len);
        return;
    }
    chapoly_load_key(kw, key);

    memset(abuf_a, SENT, len + 2 * GUARD);
    k_seal(k, o, t, pt, len, aad, aadlen, kw, nonce);
    CHECK(meq(o, ct, len), "%s: seal ciphertext differs (len %zu)", what, len);
    CHECK(meq(t, tag, 16), "%s: seal tag differs (len %zu)", what, len);
    CHECK(all_byte(abuf_a, GUARD, SENT) && all_byte(o + len, GUARD, SENT),
          "%s: seal wrote outside [out, out+len)", what);

    mcpy(w, pt, len);
    memset(t, 0, 16);
    k_seal(k, w, t, w, len, aad, aadlen, kw, nonce);
    CHECK(meq(w, ct, len) && meq(t, tag, 16), "%s: in-place seal differs", what);

    memset(abuf_a, SENT, len + 2 * GUARD);
    CHECK(k_open(k, o, ct, len, aad, aadlen, tag, 16, kw, nonce) == 1, "%s: open rejected", what);
    CHECK(meq(o, pt, len), "%s: open plaintext differs", what);
    CHECK(all_byte(abuf_a, GUARD, SENT) && all_byte(o + len, GUARD, SENT),
          "%s: open wrote outside [out, out+len)", what);

    mcpy(w, ct, len);
    CHECK(k_open(k, w, w, len, aad, aadlen, tag, 16, kw, nonce) == 1 && meq(w, pt, len),
          "%s: in-place open failed", what);

    /* A prefix of the right tag verifies (taglen 1..16 by contract). */
    CHECK(k_open(k, o, ct, len, aad, aadlen, tag, 1, kw, nonce) == 1,
          "%s: open with taglen 1 rejected", what);
    CHECK(k_open(k, o, ct, len, aad, aadlen, tag, 15, kw, nonce) == 1,
          "%s: open with taglen 15 rejected", what);

    /* Rejections: nothing may be written, in place or not. */
    for (int i = 0; i < 16; i++) {
        memcpy(badtag, tag, 16);
        badtag[i] ^= (uint8_t)(1u << (rnd64() & 7));
        memset(abuf_a, SENT, len + 2 * GUARD);
        CHECK(k_open(k, o, ct, len, aad, aadlen, badtag, 16, kw, nonce) == 0,
              "%s: open accepted a tag with byte %d flipped", what, i);
        CHECK(all_byte(abuf_a, len + 2 * GUARD, SENT), "%s: failed open (tag byte %d) wrote output",
              what, i);
    }
    memcpy(badtag, tag, 16);
    badtag[15] ^= 0x80;
    mcpy(w, ct, len);
    CHECK(k_open(k, w, w, len, aad, aadlen, badtag, 16, kw, nonce) == 0 && meq(w, ct, len),
          "%s: failed in-place open changed the buffer", what);
    memset(abuf_a, SENT, len + 2 * GUARD);
    CHECK(k_open(k, o, ct, len, aad, aadlen, badtag, 0, kw, nonce) == 0 &&
              all_byte(abuf_a, len + 2 * GUARD, SENT),
          "%s: open with taglen 0 must fail and write nothing", what);
    if (len > 0) {
        mcpy(w, ct, len);
        w[rnd_below(len)] ^= 0x01;
        memset(abuf_a, SENT, len + 2 * GUARD);
        CHECK(k_open(k, o, w, len, aad, aadlen, tag, 16, kw, nonce) == 0 &&
                  all_byte(abuf_a, len + 2 * GUARD, SENT),
              "%s: open accepted a modified ciphertext", what);
    }
    if (aadlen > 0) {
        uint8_t *a2 = xalloc(aadlen);
        mcpy(a2, aad, aadlen);
        a2[rnd_below(aadlen)] ^= 0x40;
        memset(abuf_a, SENT, len + 2 * GUARD);
        CHECK(k_open(k, o, ct, len, a2, aadlen, tag, 16, kw, nonce) == 0 &&
                  all_byte(abuf_a, len + 2 * GUARD, SENT),
              "%s: open accepted a modified AAD", what);
        free(a2);
    }
}

/* A case that must be rejected (Wycheproof 'invalid'). */
static void aead_reject(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                        const uint8_t nonce[12], const uint8_t *aad, size_t aadlen,
                        const uint8_t *ct, size_t len, const uint8_t *tag, size_t taglen)
{
    uint32_t kw[8];
    uint8_t *o = abuf_a + GUARD;

    if (len + 2 * GUARD > ABUF)
        return;
    chapoly_load_key(kw, key);
    memset(abuf_a, SENT, len + 2 * GUARD);
    CHECK(k_open(k, o, ct, len, aad, aadlen, tag, taglen, kw, nonce) == 0,
          "%s: invalid case accepted", what);
    CHECK(all_byte(abuf_a, len + 2 * GUARD, SENT), "%s: rejected open wrote output", what);
}

/* ------------------------------------------------------------------ */
/* vector files                                                        */

static const char *vdir;

static const char *vpath(const char *file)
{
    static char buf[4096];
    snprintf(buf, sizeof(buf), "%s/%s", vdir, file);
    return buf;
}

typedef struct {
    const chapoly_kernels *k;
    const char *file;
} vctx;

static char what_buf[256];

static const char *what_of(const vctx *v, const tv_case *c)
{
    const tv_field *s = tv_get(c, "source");
    snprintf(what_buf, sizeof(what_buf), "%s:%d [%s] %s", v->file, c->line, c->section,
             s != NULL ? s->text : "");
    return what_buf;
}

/* Field with an exact length (want == SIZE_MAX: any length). */
static const uint8_t *fld(const tv_case *c, const char *name, size_t want, size_t *len,
                          const char *what, int *ok)
{
    const tv_field *f = tv_get(c, name);
    if (f == NULL || (want != SIZE_MAX && f->len != want)) {
        CHECK(0, "%s: field '%s' missing or of wrong length", what, name);
        *ok = 0;
        return NULL;
    }
    if (len != NULL)
        *len = f->len;
    return f->bytes;
}

static uint32_t fld_counter(const tv_case *c, const char *what, int *ok)
{
    const tv_field *f = tv_get(c, "counter");
    char *end;
    unsigned long long v = 0;
    if (f == NULL || f->text == NULL || f->text[0] == '\0' ||
        (v = strtoull(f->text, &end, 10), *end != '\0') || v > 0xffffffffULL) {
        CHECK(0, "%s: bad counter", what);
        *ok = 0;
    }
    return (uint32_t)v;
}

/* Poly1305 on one (key, msg, tag) case, one-shot and in several streams. */
static void poly_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                       const uint8_t *m, size_t len, const uint8_t tag[16])
{
    uint8_t t[16];
    size_t pieces[4096];
    static const size_t two_splits[] = { 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257 };
    static const size_t cyc1[] = { 1, 3, 16, 48, 100 };
    static const size_t cyc2[] = { 7, 13, 32, 64, 129, 250, 512 };

    k_poly_raw(k, t, key, m, len);
    CHECK(meq(t, tag, 16), "%s: one-shot tag differs (len %zu)", what, len);

    pieces[0] = len;
    k_poly_stream(k, t, key, m, pieces, 1);
    CHECK(meq(t, tag, 16), "%s: single-update stream differs", what);

    for (size_t i = 0; i < sizeof(two_splits) / sizeof(two_splits[0]) + 1; i++) {
        size_t s = i < sizeof(two_splits) / sizeof(two_splits[0]) ? two_splits[i] : len / 2;
        if (s > len)
            continue;
        pieces[0] = s;
        pieces[1] = len - s;
        k_poly_stream(k, t, key, m, pieces, 2);
        CHECK(meq(t, tag, 16), "%s: stream split at %zu differs", what, s);
    }
    const size_t *cycs[2] = { cyc1, cyc2 };
    size_t ncyc[2] = { sizeof(cyc1) / sizeof(cyc1[0]), sizeof(cyc2) / sizeof(cyc2[0]) };
    for (int c = 0; c < 2; c++) {
        size_t n = 0, left = len;
        while (left > 0 && n < 4096) {
            size_t p = cycs[c][n % ncyc[c]];
            if (p > left)
                p = left;
            pieces[n++] = p;
            left -= p;
        }
        if (left == 0) {
            k_poly_stream(k, t, key, m, pieces, n);
            CHECK(meq(t, tag, 16), "%s: stream in cycled chunks (pattern %d) differs", what, c);
        }
    }
    if (len <= 4096) {
        for (size_t i = 0; i < len; i++)
            pieces[i] = 1;
        k_poly_stream(k, t, key, m, pieces, len);
        CHECK(meq(t, tag, 16), "%s: byte-at-a-time stream differs", what);
    }
}

static void chacha_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                         const uint32_t cn[4], const uint8_t *pt, const uint8_t *ct, size_t len)
{
    uint32_t kw[8];
    uint8_t *o = abuf_a + GUARD + 3, *w = abuf_b + GUARD + 1;

    if (len + 2 * GUARD + 8 > ABUF)
        return;
    chapoly_load_key(kw, key);
    memset(abuf_a, SENT, len + 2 * GUARD + 8);
    k_chacha(k, o, pt, len, kw, cn);
    CHECK(meq(o, ct, len), "%s: chacha20_xor encrypt differs", what);
    CHECK(all_byte(o + len, GUARD, SENT), "%s: chacha20_xor wrote past the end", what);
    k_chacha(k, o, ct, len, kw, cn);
    CHECK(meq(o, pt, len), "%s: chacha20_xor decrypt differs", what);
    mcpy(w, pt, len);
    k_chacha(k, w, w, len, kw, cn);
    CHECK(meq(w, ct, len), "%s: in-place chacha20_xor differs", what);
}

static int unknown_section(const vctx *v, const tv_case *c)
{
    CHECK(0, "%s:%d: unknown section [%s] (test does not know it)", v->file, c->line, c->section);
    return 0;
}

static int cb_txt(const tv_case *c, void *arg)
{
    const vctx *v = arg;
    const chapoly_kernels *k = v->k;
    const char *what = what_of(v, c);
    const char *sec = c->section;
    int ok = 1;
    size_t len = 0, len2 = 0, aadlen = 0;

    if (strcmp(sec, "chacha20-block") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 12, NULL, what, &ok);
        const uint8_t *blk = fld(c, "block", 64, NULL, what, &ok);
        uint32_t ctr = fld_counter(c, what, &ok);
        if (!ok)
            return 0;
        uint32_t kw[8], cn[4] = { ctr, le32(nonce), le32(nonce + 4), le32(nonce + 8) };
        uint8_t z[64] = { 0 }, o[64];
        chapoly_load_key(kw, key);
        k_chacha(k, o, z, 64, kw, cn);
        CHECK(meq(o, blk, 64), "%s: block differs", what);
    } else if (strcmp(sec, "chacha20") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 12, NULL, what, &ok);
        const uint8_t *pt = fld(c, "plaintext", SIZE_MAX, &len, what, &ok);
        const uint8_t *ct = fld(c, "ciphertext", SIZE_MAX, &len2, what, &ok);
        uint32_t ctr = fld_counter(c, what, &ok);
        if (!ok || len != len2) {
            CHECK(ok, "%s: plaintext/ciphertext lengths differ", what);
            return 0;
        }
        uint32_t cn[4] = { ctr, le32(nonce), le32(nonce + 4), le32(nonce + 8) };
        chacha_known(k, what, key, cn, pt, ct, len);
    } else if (strcmp(sec, "poly1305") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *msg = fld(c, "msg", SIZE_MAX, &len, what, &ok);
        const uint8_t *tag = fld(c, "tag", 16, NULL, what, &ok);
        if (ok)
            poly_known(k, what, key, msg, len, tag);
    } else if (strcmp(sec, "poly1305-keygen") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 12, NULL, what, &ok);
        const uint8_t *otk = fld(c, "otk", 32, NULL, what, &ok);
        if (!ok)
            return 0;
        uint32_t kw[8], cn[4] = { 0, le32(nonce), le32(nonce + 4), le32(nonce + 8) };
        uint8_t z[64] = { 0 }, o[64];
        chapoly_load_key(kw, key);
        k_chacha(k, o, z, 32, kw, cn);
        CHECK(meq(o, otk, 32), "%s: otk (32-byte call) differs", what);
        k_chacha(k, o, z, 64, kw, cn);
        CHECK(meq(o, otk, 32), "%s: otk (64-byte call) differs", what);
    } else if (strcmp(sec, "chacha20-poly1305") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 12, NULL, what, &ok);
        const uint8_t *aad = fld(c, "aad", SIZE_MAX, &aadlen, what, &ok);
        const uint8_t *pt = fld(c, "plaintext", SIZE_MAX, &len, what, &ok);
        const uint8_t *ct = fld(c, "ciphertext", SIZE_MAX, &len2, what, &ok);
        const uint8_t *tag = fld(c, "tag", 16, NULL, what, &ok);
        if (ok && len == len2)
            aead_known(k, what, key, nonce, aad, aadlen, pt, len, ct, tag);
        else
            CHECK(0, "%s: malformed case", what);
    } else if (strcmp(sec, "hchacha20") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 16, NULL, what, &ok);
        const uint8_t *sub = fld(c, "subkey", 32, NULL, what, &ok);
        if (!ok)
            return 0;
        uint8_t o[32];
        k_hchacha(k, o, key, nonce);
        CHECK(meq(o, sub, 32), "%s: subkey differs", what);
    } else if (strcmp(sec, "xchacha20") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 24, NULL, what, &ok);
        const uint8_t *pt = fld(c, "plaintext", SIZE_MAX, &len, what, &ok);
        const uint8_t *ct = fld(c, "ciphertext", SIZE_MAX, &len2, what, &ok);
        uint32_t ctr = fld_counter(c, what, &ok);
        if (!ok || len != len2) {
            CHECK(ok, "%s: plaintext/ciphertext lengths differ", what);
            return 0;
        }
        uint8_t sub[32];
        k_hchacha(k, sub, key, nonce);
        uint32_t cn[4] = { ctr, 0, le32(nonce + 16), le32(nonce + 20) };
        chacha_known(k, what, sub, cn, pt, ct, len);
    } else if (strcmp(sec, "xchacha20-poly1305") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 24, NULL, what, &ok);
        const uint8_t *aad = fld(c, "aad", SIZE_MAX, &aadlen, what, &ok);
        const uint8_t *pt = fld(c, "plaintext", SIZE_MAX, &len, what, &ok);
        const uint8_t *ct = fld(c, "ciphertext", SIZE_MAX, &len2, what, &ok);
        const uint8_t *tag = fld(c, "tag", 16, NULL, what, &ok);
        if (!ok || len != len2) {
            CHECK(0, "%s: malformed case", what);
            return 0;
        }
        uint8_t sub[32], n12[12] = { 0 };
        k_hchacha(k, sub, key, nonce);
        memcpy(n12 + 4, nonce + 16, 8);
        aead_known(k, what, sub, n12, aad, aadlen, pt, len, ct, tag);
    } else {
        return unknown_section(v, c);
    }
    return 0;
}

typedef struct {
    const chapoly_kernels *k;
    const char *file;
    int xchacha;
    int cases, skipped;
} wctx;

static int cb_wp(const wp_case *c, void *arg)
{
    wctx *w = arg;
    char what[200];
    size_t ivlen = w->xchacha ? 24 : 12;

    snprintf(what, sizeof(what), "%s tcId %d (%s)", w->file, c->tc_id, c->comment);
    w->cases++;
    if (c->key_len != 32 || c->iv_len != ivlen || c->tag_len != 16 || c->msg_len != c->ct_len) {
        /* Not expressible through the kernel API (e.g. other nonce sizes). */
        CHECK(c->valid == 0, "%s: valid case with unsupported sizes", what);
        w->skipped++;
        return 0;
    }
    uint8_t key[32], n12[12];
    if (w->xchacha) {
        k_hchacha(w->k, key, c->key, c->iv);
        memset(n12, 0, 4);
        memcpy(n12 + 4, c->iv + 16, 8);
    } else {
        memcpy(key, c->key, 32);
        memcpy(n12, c->iv, 12);
    }
    if (c->valid)
        aead_known(w->k, what, key, n12, c->aad, c->aad_len, c->msg, c->msg_len, c->ct, c->tag);
    else
        aead_reject(w->k, what, key, n12, c->aad, c->aad_len, c->ct, c->ct_len, c->tag, c->tag_len);
    return 0;
}

static void run_vectors(const chapoly_kernels *k)
{
    static const struct {
        const char *file;
        int expect;
    } txt[] = { { "rfc8439.txt", 28 }, { "xchacha.txt", 4 }, { "poly1305-edge.txt", 116 } };
    for (size_t i = 0; i < sizeof(txt) / sizeof(txt[0]); i++) {
        vctx v = { k, txt[i].file };
        int n = tv_foreach(vpath(txt[i].file), cb_txt, &v);
        /* Counts from the README: a reader that silently drops cases fails. */
        CHECK(n == txt[i].expect, "%s: read %d cases, README says %d", txt[i].file, n, txt[i].expect);
    }
    static const struct {
        const char *file;
        int xchacha, expect;
    } wp[] = { { "wycheproof/chacha20_poly1305_test.json", 0, 325 },
               { "wycheproof/xchacha20_poly1305_test.json", 1, 315 } };
    for (size_t i = 0; i < sizeof(wp) / sizeof(wp[0]); i++) {
        wctx w = { k, wp[i].file, wp[i].xchacha, 0, 0 };
        int n = wp_foreach(vpath(wp[i].file), cb_wp, &w);
        CHECK(n == wp[i].expect && w.cases == n, "%s: read %d tests, README says %d", wp[i].file, n,
              wp[i].expect);
    }
}

/* ------------------------------------------------------------------ */
/* differential tests against the portable level                        */

static uint8_t *pool;  /* random bytes, POOL long */
#define POOL (1u << 18)
static uint8_t *rbuf, *tin, *tout; /* reference out, test in, test out */
#define TBUF (70000 + 512)

static const uint8_t *pool_at(size_t len)
{
    return pool + rnd_below(POOL - len + 1);
}

static uint32_t pick_counter(size_t i)
{
    switch (i % 6) {
    case 0: return 0xffffffffu;
    case 1: return 0xfffffff0u;
    case 2: return 0xffffffffu - (uint32_t)rnd_below(48);
    case 3: return 0;
    default: return (uint32_t)rnd64();
    }
}

static void chacha_case(const chapoly_kernels *k, size_t len, uint32_t ctr)
{
    uint32_t key[8], cn[4];
    const uint8_t *in = pool_at(len);
    size_t ioff = 1 + rnd_below(63), ooff = 1 + rnd_below(63);

    if (rnd_below(8) == 0)
        ioff = ooff = 0; /* aligned now and then */
    for (int i = 0; i < 8; i++)
        key[i] = (uint32_t)rnd64();
    cn[0] = ctr;
    for (int i = 1; i < 4; i++)
        cn[i] = (uint32_t)rnd64();
    P->chacha20_xor(rbuf, in, len, key, cn);

    /* out of place, unaligned, guard bytes around the output */
    memcpy(tin + 64 + ioff, in, len);
    memset(tout, SENT, len + 192);
    k_chacha(k, tout + 64 + ooff, tin + 64 + ioff, len, key, cn);
    CHECK(memcmp(tout + 64 + ooff, rbuf, len) == 0,
          "%s chacha20_xor differs from portable: len %zu ctr 0x%08x in+%zu out+%zu", k->name, len, ctr,
          ioff, ooff);
    CHECK(all_byte(tout, 64 + ooff, SENT) && all_byte(tout + 64 + ooff + len, 64, SENT),
          "%s chacha20_xor wrote outside the output: len %zu ctr 0x%08x out+%zu", k->name, len, ctr, ooff);
    CHECK(memcmp(tin + 64 + ioff, in, len) == 0, "%s chacha20_xor modified its input: len %zu", k->name,
          len);

    /* in place */
    size_t off = rnd_below(64);
    memset(tout, SENT, len + 192);
    memcpy(tout + 64 + off, in, len);
    k_chacha(k, tout + 64 + off, tout + 64 + off, len, key, cn);
    CHECK(memcmp(tout + 64 + off, rbuf, len) == 0,
          "%s in-place chacha20_xor differs from portable: len %zu ctr 0x%08x at+%zu", k->name, len, ctr,
          off);
    CHECK(all_byte(tout, 64 + off, SENT) && all_byte(tout + 64 + off + len, 64, SENT),
          "%s in-place chacha20_xor wrote outside the buffer: len %zu", k->name, len);
}

static void chacha_diff(const chapoly_kernels *k)
{
    for (size_t len = 0; len <= 2048; len++)
        chacha_case(k, len, pick_counter(len));
    for (size_t i = 0; i < 200; i++)
        chacha_case(k, rnd_below(70001), pick_counter(i));
    /* Block-count boundaries 1..17 (and 2x for 32-block batches). */
    for (size_t n = 1; n <= 34; n++)
        for (int d = -1; d <= 1; d++)
            chacha_case(k, (size_t)((long)n * 64 + d), pick_counter(n));

    /*
     * Splitting a stream at a block boundary and advancing the counter
     * (mod 2^32) gives the same bytes: checks the level against itself,
     * including for the portable level.
     */
    for (int i = 0; i < 300; i++) {
        uint32_t key[8], cn[4], cn2[4];
        size_t len = rnd_below(i < 150 ? 3000 : 70001);
        size_t split = rnd_below(len / 64 + 1) * 64;
        const uint8_t *in = pool_at(len);
        for (int j = 0; j < 8; j++)
            key[j] = (uint32_t)rnd64();
        cn[0] = pick_counter((size_t)i);
        for (int j = 1; j < 4; j++)
            cn[j] = (uint32_t)rnd64();
        memcpy(cn2, cn, sizeof(cn));
        cn2[0] = cn[0] + (uint32_t)(split / 64);
        k_chacha(k, rbuf, in, len, key, cn);
        k_chacha(k, tout, in, split, key, cn);
        k_chacha(k, tout + split, in + split, len - split, key, cn2);
        CHECK(memcmp(rbuf, tout, len) == 0,
              "%s chacha20_xor split at %zu of %zu (ctr 0x%08x) differs from one call", k->name, split,
              len, cn[0]);
    }
}

static void hchacha_diff(const chapoly_kernels *k)
{
    uint8_t kb[32 + 64], nb[16 + 64], ref[32], sb[32 + 64];

    for (int i = 0; i < 2000; i++) {
        size_t ko = rnd_below(64), no = rnd_below(64), so = rnd_below(64);
        rnd_bytes(kb + ko, 32);
        rnd_bytes(nb + no, 16);
        if (i < 4) { /* all-zero and all-ones inputs */
            memset(kb + ko, i & 1 ? 0xff : 0, 32);
            memset(nb + no, i & 2 ? 0xff : 0, 16);
        }
        P->hchacha20(ref, kb + ko, nb + no);
        k_hchacha(k, sb + so, kb + ko, nb + no);
        CHECK(memcmp(ref, sb + so, 32) == 0, "%s hchacha20 differs from portable (case %d)", k->name, i);
    }
}

/* Keys and messages: random, or the all-0xff extremes that stress carries. */
static void poly_inputs(uint8_t key[32], const uint8_t **m, size_t len, size_t i)
{
    rnd_bytes(key, 32);
    switch (i % 5) {
    case 0: memset(key, 0xff, 32); break;
    case 1: memset(key, 0xff, 16); break; /* largest clamped r */
    default: break;
    }
    if (i % 7 == 3) {
        memset(tin, 0xff, len);
        *m = tin;
    } else {
        *m = pool_at(len);
    }
}

static void poly_case(const chapoly_kernels *k, size_t len, size_t i)
{
    uint8_t key[32], ref[16], t[16];
    const uint8_t *m;
    size_t off = rnd_below(64);

    poly_inputs(key, &m, len, i);
    k_poly_raw(P, ref, key, m, len);
    memcpy(tout + off, m, len);
    k_poly_raw(k, t, key, tout + off, len);
    CHECK(memcmp(ref, t, 16) == 0, "%s poly1305 one-shot differs from portable: len %zu msg+%zu", k->name,
          len, off);
}

static void poly_diff(const chapoly_kernels *k)
{
    size_t pieces[256];
    uint8_t key[32], ref[16], t[16];
    const uint8_t *m;

    for (size_t len = 0; len <= 2048; len++)
        poly_case(k, len, len);
    for (size_t i = 0; i < 200; i++)
        poly_case(k, rnd_below(70001), i);

    /* Every two-piece split of every length up to 300. */
    for (size_t len = 0; len <= 300; len++) {
        poly_inputs(key, &m, len, len);
        k_poly_raw(P, ref, key, m, len);
        for (size_t s = 0; s <= len; s++) {
            pieces[0] = s;
            pieces[1] = len - s;
            k_poly_stream(k, t, key, m, pieces, 2);
            CHECK(memcmp(ref, t, 16) == 0, "%s poly1305 stream differs from portable: len %zu split %zu",
                  k->name, len, s);
        }
    }
    /* Random multi-piece splits; piece sizes skewed towards small. */
    for (size_t i = 0; i < 1500; i++) {
        size_t len = i < 1400 ? rnd_below(5000) : rnd_below(70001);
        size_t n = 0, left = len;
        poly_inputs(key, &m, len, i);
        k_poly_raw(P, ref, key, m, len);
        while (left > 0 && n < 255) {
            size_t cap;
            switch (rnd_below(4)) {
            case 0: cap = 17; break;
            case 1: cap = 80; break;
            case 2: cap = 600; break;
            default: cap = 9000; break;
            }
            size_t p = rnd_below(cap + 1);
            if (p > left)
                p = left;
            pieces[n++] = p;
            left -= p;
        }
        pieces[n++] = left;
        k_poly_stream(k, t, key, m, pieces, n);
        CHECK(memcmp(ref, t, 16) == 0, "%s poly1305 stream (%zu pieces) differs from portable: len %zu",
              k->name, n, len);
    }
}

static void aead_case(const chapoly_kernels *k, size_t aadlen, size_t len)
{
    uint8_t key[32], nonce[12], rtag[16], tag[16], badtag[16];
    uint32_t kw[8];
    const uint8_t *aad = pool_at(aadlen), *pt = pool_at(len);
    size_t off = rnd_below(64);
    int inplace = rnd_below(3) == 0;

    rnd_bytes(key, 32);
    rnd_bytes(nonce, 12);
    chapoly_load_key(kw, key);
    chapoly_aead_seal(P, rbuf, rtag, pt, len, aad, aadlen, kw, nonce);

    uint8_t *o = tout + 64 + off;
    memset(tout, SENT, len + 192);
    if (inplace) {
        memcpy(o, pt, len);
        k_seal(k, o, tag, o, len, aad, aadlen, kw, nonce);
    } else {
        memcpy(tin + 64 + (off ^ 7), pt, len);
        k_seal(k, o, tag, tin + 64 + (off ^ 7), len, aad, aadlen, kw, nonce);
    }
    CHECK(memcmp(o, rbuf, len) == 0 && memcmp(tag, rtag, 16) == 0,
          "%s aead_seal differs from portable: aad %zu len %zu%s out+%zu", k->name, aadlen, len,
          inplace ? " in place" : "", off);
    CHECK(all_byte(tout, 64 + off, SENT) && all_byte(o + len, 64, SENT),
          "%s aead_seal wrote outside the output: aad %zu len %zu", k->name, aadlen, len);

    /* open the portable ciphertext, in place or not */
    memset(tout, SENT, len + 192);
    int r;
    if (inplace) {
        memcpy(o, rbuf, len);
        r = k_open(k, o, o, len, aad, aadlen, rtag, 16, kw, nonce);
    } else {
        r = k_open(k, o, rbuf, len, aad, aadlen, rtag, 16, kw, nonce);
    }
    CHECK(r == 1 && memcmp(o, pt, len) == 0, "%s aead_open failed on portable output: aad %zu len %zu%s",
          k->name, aadlen, len, inplace ? " in place" : "");
    CHECK(all_byte(tout, 64 + off, SENT) && all_byte(o + len, 64, SENT),
          "%s aead_open wrote outside the output: aad %zu len %zu", k->name, aadlen, len);

    /* a flipped tag bit: rejected, nothing written */
    memcpy(badtag, rtag, 16);
    badtag[rnd_below(16)] ^= (uint8_t)(1u << rnd_below(8));
    memset(tout, SENT, len + 192);
    if (inplace) {
        memcpy(o, rbuf, len);
        r = k_open(k, o, o, len, aad, aadlen, badtag, 16, kw, nonce);
        CHECK(r == 0 && memcmp(o, rbuf, len) == 0,
              "%s aead_open (in place) accepted a bad tag or changed the buffer: aad %zu len %zu",
              k->name, aadlen, len);
    } else {
        r = k_open(k, o, rbuf, len, aad, aadlen, badtag, 16, kw, nonce);
        CHECK(r == 0 && all_byte(tout, len + 192, SENT),
              "%s aead_open accepted a bad tag or wrote output: aad %zu len %zu", k->name, aadlen, len);
    }
}

/*
 * chapoly_chacha20_xor_kb (key block + text in one call's shapes) against
 * portable ChaCha20 over [64 zero bytes || text]: the key block, the text,
 * and nothing written around either.
 */
static void xor_kb_case(const chapoly_kernels *k, size_t len, size_t i)
{
    uint8_t kb[64 + 2 * GUARD];
    uint32_t kw[8], cn[4];
    size_t off = rnd_below(64);
    const uint8_t *src = pool_at(len);
    int inplace = (int)(i % 3 == 0);

    rnd_bytes((uint8_t *)kw, sizeof(kw));
    cn[0] = pick_counter(i);
    cn[1] = (uint32_t)rnd64();
    cn[2] = (uint32_t)rnd64();
    cn[3] = (uint32_t)rnd64();
    memset(rbuf, 0, 64);
    memcpy(rbuf + 64, src, len);
    P->chacha20_xor(rbuf, rbuf, 64 + len, kw, cn);

    uint8_t *o = tout + 64 + off;
    memset(tout, SENT, len + 192);
    memset(kb, SENT, sizeof(kb));
    if (inplace) {
        memcpy(o, src, len);
        k_xor_kb(k, kb + GUARD, o, o, len, kw, cn);
    } else {
        memcpy(tin + 64 + (off ^ 5), src, len);
        k_xor_kb(k, kb + GUARD, o, tin + 64 + (off ^ 5), len, kw, cn);
    }
    CHECK(memcmp(kb + GUARD, rbuf, 64) == 0, "%s chacha20_xor_kb key block differs: len %zu ctr %08x",
          k->name, len, cn[0]);
    CHECK(memcmp(o, rbuf + 64, len) == 0, "%s chacha20_xor_kb text differs: len %zu ctr %08x%s",
          k->name, len, cn[0], inplace ? " in place" : "");
    CHECK(all_byte(kb, GUARD, SENT) && all_byte(kb + GUARD + 64, GUARD, SENT) &&
              all_byte(tout, 64 + off, SENT) && all_byte(o + len, 64, SENT),
          "%s chacha20_xor_kb wrote outside its outputs: len %zu", k->name, len);
}

static void xor_kb_diff(const chapoly_kernels *k)
{
    size_t i = 0;

    for (size_t len = 0; len <= 2112; len++, i++)
        xor_kb_case(k, len, i);
    for (; i < 2112 + 200; i++)
        xor_kb_case(k, rnd_below(9000), i);
}

/*
 * chapoly_aead_xor_hash (the stitched kernel where a level has one) against
 * portable ChaCha20 then Poly1305: the hash enters in every form a state
 * can have (nothing hashed, a scalar prefix, 8 or 16 pending lanes, key
 * powers already built) and more blocks follow, so the lanes it leaves are
 * checked too. Output bytes, guard bytes and the final tag must match.
 */
static void xor_hash_case(const chapoly_kernels *k, size_t pre, size_t kib, size_t post,
                          int enc, int inplace, size_t i)
{
    /* sealing, every other case: a kilobyte of earlier ciphertext to hash first */
    const uint8_t *kpre = enc && ((i / 2) & 1) ? pool_at(1024) : NULL;
    uint8_t key[32], pkey[32], rtag[16], tag[16];
    uint32_t kw[8], cn[4];
    size_t len = 1024 * kib, off = rnd_below(64);
    const uint8_t *src = pool_at(len), *hpre = pool_at(pre), *hpost = pool_at(post);
    poly1305_state rs_, ks_;

    rnd_bytes(key, 32);
    rnd_bytes(pkey, 32);
    chapoly_load_key(kw, key);
    cn[0] = pick_counter(i);
    cn[1] = (uint32_t)rnd64();
    cn[2] = (uint32_t)rnd64();
    cn[3] = (uint32_t)rnd64();

    /* reference */
    P->poly1305_init(&rs_, pkey);
    if (pre)
        P->poly1305_blocks(&rs_, hpre, pre, 1);
    if (kpre)
        P->poly1305_blocks(&rs_, kpre, 1024, 1);
    P->chacha20_xor(rbuf, src, len, kw, cn);
    P->poly1305_blocks(&rs_, enc ? rbuf : src, len, 1);
    if (post)
        P->poly1305_blocks(&rs_, hpost, post, 1);
    P->poly1305_final(&rs_, rtag);

    uint8_t *o = tout + 64 + off;
    memset(tout, SENT, len + 192);
    k->poly1305_init(&ks_, pkey);
    if (pre)
        k->poly1305_blocks(&ks_, hpre, pre, 1);
    if (inplace) {
        memcpy(o, src, len);
        k_xor_hash(k, o, o, len, kw, cn, &ks_, kpre, enc);
    } else {
        memcpy(tin + 64 + (off ^ 9), src, len);
        k_xor_hash(k, o, tin + 64 + (off ^ 9), len, kw, cn, &ks_, kpre, enc);
    }
    if (post)
        k->poly1305_blocks(&ks_, hpost, post, 1);
    k->poly1305_final(&ks_, tag);
    CHECK(memcmp(o, rbuf, len) == 0,
          "%s aead_xor_hash output differs: %s pre %zu, %zu KiB, ctr %08x%s", k->name,
          enc ? "enc" : "dec", pre, kib, cn[0], inplace ? " in place" : "");
    CHECK(memcmp(tag, rtag, 16) == 0,
          "%s aead_xor_hash tag differs: %s pre %zu%s, %zu KiB, post %zu%s", k->name,
          enc ? "enc" : "dec", pre, kpre ? " + a kilobyte" : "", kib, post,
          inplace ? " in place" : "");
    CHECK(all_byte(tout, 64 + off, SENT) && all_byte(o + len, 64, SENT),
          "%s aead_xor_hash wrote outside the output: %zu KiB", k->name, kib);
}

static void xor_hash_diff(const chapoly_kernels *k)
{
    /* prefixes in blocks: none, scalar, 8-lane and 16-lane states, odd lanes */
    static const size_t pres[] = { 0, 1, 7, 8, 15, 16, 17, 18, 39, 40, 41, 64, 100 };
    static const size_t posts[] = { 0, 1, 8, 16, 17, 64 };
    size_t i = 0;

    for (size_t p = 0; p < sizeof(pres) / sizeof(pres[0]); p++)
        for (size_t kib = 1; kib <= 5; kib++)
            for (int enc = 0; enc <= 1; enc++, i++)
                xor_hash_case(k, 16 * pres[p], kib, 16 * posts[i % 6], enc, (int)(i % 3 == 0), i);
    for (size_t j = 0; j < 60; j++, i++)
        xor_hash_case(k, 16 * rnd_below(300), 1 + rnd_below(64), 16 * rnd_below(100),
                      (int)rnd_below(2), (int)rnd_below(2), i);
}

static void aead_diff(const chapoly_kernels *k)
{
    for (size_t aad = 0; aad <= 40; aad++)
        for (size_t len = 0; len <= 1100; len++)
            aead_case(k, aad, len);
    /* Block-count boundaries 1..17 with partial tails and longer AAD. */
    static const size_t aads[] = { 0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000 };
    static const int deltas[] = { -17, -16, -15, -1, 0, 1, 15, 16, 17 };
    for (size_t a = 0; a < sizeof(aads) / sizeof(aads[0]); a++)
        for (size_t n = 1; n <= 17; n++)
            for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++)
                aead_case(k, aads[a], (size_t)((long)n * 64 + deltas[d]));
    /* Long seals: the first batch's head, whole kilobytes and the rest around their limits. */
    static const long koffs[] = { -65, -64, -1, 0, 1, 63, 64, 65, 960, 961, 1023 };
    static const size_t kaads[] = { 0, 13, 100 };
    for (size_t kib = 1; kib <= 5; kib++)
        for (size_t o = 0; o < sizeof(koffs) / sizeof(koffs[0]); o++)
            for (size_t a = 0; a < sizeof(kaads) / sizeof(kaads[0]); a++)
                aead_case(k, kaads[a], (size_t)((long)(1024 * kib + 960) + koffs[o]));
    for (int i = 0; i < 120; i++)
        aead_case(k, rnd_below(i % 4 == 0 ? 3000 : 64), rnd_below(70001));
}

/* ------------------------------------------------------------------ */
/* procedural Poly1305 stress checks (test/vectors/README.md)          */

static int unhex16(uint8_t out[16], const char *s)
{
    for (int i = 0; i < 16; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

static void poly_procedural(const chapoly_kernels *k)
{
    uint8_t want[16], t[16], key[32], msg[4096];
    poly1305_state a, b, c;

    /* Linux poly1305_kunit "all ones". */
    memset(key, 0xff, 32);
    memset(msg, 0xff, sizeof(msg));
    k_sinit(k, &a, key);
    k_sinit(k, &b, key);
    for (int rep = 0; rep < 32; rep++) {
        for (size_t len = 0; len <= 4096; len += 16) {
            k_supdate(k, &a, msg, len);
            memcpy(&c, &a, sizeof(a));
            k_sfinal(k, &c, t);
            k_supdate(k, &b, t, 16);
        }
    }
    k_sfinal(k, &b, t);
    unhex16(want, "0c266b458706cfc43f707db350dd8125");
    CHECK(memcmp(t, want, 16) == 0, "%s poly1305 'all ones' procedural check: wrong final tag", k->name);

    /* poly1305-donna "total". */
    static const uint8_t tkey[32] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xff,
                                      0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00 };
    k_sinit(k, &a, tkey);
    for (int i = 0; i < 256; i++) {
        memset(key, i, 32);
        memset(msg, i, (size_t)i);
        k_poly_raw(k, t, key, msg, (size_t)i);
        k_supdate(k, &a, t, 16);
    }
    k_sfinal(k, &a, t);
    unhex16(want, "64afe2e8d6ad7bbdd287f97c44623d39");
    CHECK(memcmp(t, want, 16) == 0, "%s poly1305 'total' procedural check (one-shot inner): wrong final tag",
          k->name);

    /* Same with streamed inner tags (one update each). */
    k_sinit(k, &a, tkey);
    for (int i = 0; i < 256; i++) {
        size_t piece = (size_t)i;
        memset(key, i, 32);
        memset(msg, i, (size_t)i);
        k_poly_stream(k, t, key, msg, &piece, 1);
        k_supdate(k, &a, t, 16);
    }
    k_sfinal(k, &a, t);
    CHECK(memcmp(t, want, 16) == 0, "%s poly1305 'total' procedural check (streamed inner): wrong final tag",
          k->name);
}

/* ------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
    const char *seed_s = getenv("CHAPOLY_TEST_SEED");
    uint64_t seed = seed_s != NULL && *seed_s ? strtoull(seed_s, NULL, 0) : 1;

    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("test_kernels: seed %llu (CHAPOLY_TEST_SEED)\n", (unsigned long long)seed);
    rnd_seed(seed);

    vdir = getenv("CHAPOLY_VECTOR_DIR");
#ifdef CHAPOLY_VECTOR_DIR_DEFAULT
    if (vdir == NULL || *vdir == '\0')
        vdir = CHAPOLY_VECTOR_DIR_DEFAULT;
#endif
    if (vdir == NULL || *vdir == '\0') {
        cur_level = "setup";
        CHECK(0, "CHAPOLY_VECTOR_DIR is not set");
        vdir = ".";
    }

    abuf_a = xalloc(ABUF);
    abuf_b = xalloc(ABUF);
    pool = xalloc(POOL);
    rbuf = xalloc(TBUF);
    tin = xalloc(TBUF);
    tout = xalloc(TBUF);
    rnd_bytes(pool, POOL);

    P = chapoly_kernels_portable();
    cur_level = "dispatch";
    CHECK(P != NULL && P->name != NULL && strcmp(P->name, "portable") == 0,
          "chapoly_kernels_portable() is not the portable table");
    CHECK(chapoly_kernels_by_name("portable") == P, "by_name(\"portable\") differs");
    CHECK(chapoly_kernels_by_name("no-such-level") == NULL, "by_name of an unknown level is not NULL");
    CHECK(chapoly_kernels_by_name(NULL) == NULL, "by_name(NULL) is not NULL");
    if (P == NULL)
        return 1;

    up_init();

    const char *const *names = chapoly_kernels_compiled();
    int levels_run = 0;
    for (size_t li = 0; names != NULL && names[li] != NULL; li++) {
        const chapoly_kernels *k = chapoly_kernels_by_name(names[li]);
        if (k == NULL) {
            printf("level %s: compiled in but skipped: this CPU/OS lacks it\n", names[li]);
            continue;
        }
        cur_level = names[li];
        CHECK(k->name != NULL && strcmp(k->name, names[li]) == 0, "table name is '%s'",
              k->name ? k->name : "(null)");
        CHECK(k->chacha20_xor && k->hchacha20 && k->poly1305_init && k->poly1305_blocks &&
                  k->poly1305_final,
              "incomplete table");
        if (!(k->chacha20_xor && k->hchacha20 && k->poly1305_init && k->poly1305_blocks &&
              k->poly1305_final))
            continue;

        memset(fstat, 0, sizeof(fstat));
        check_upper = up.active && k != P;
        unsigned long p0 = n_pass, f0 = n_fail;
        double t0 = now();

        run_vectors(k);
        poly_procedural(k);
        chacha_diff(k);
        hchacha_diff(k);
        poly_diff(k);
        aead_diff(k);
        xor_hash_diff(k);
        xor_kb_diff(k);
        fstat_report();
        check_upper = 0;
        levels_run++;
        printf("level %s: %lu passed, %lu failed (%.1f s)%s%s\n", names[li], n_pass - p0, n_fail - f0,
               now() - t0, k->aead_xor_hash ? ", stitched AEAD" : ", composed AEAD",
               k == P ? "" : up.active ? ", upper state checked" : ", upper state NOT checked");
    }
    cur_level = "summary";
    CHECK(levels_run > 0, "no kernel level ran");

    free(abuf_a);
    free(abuf_b);
    free(pool);
    free(rbuf);
    free(tin);
    free(tout);
    free(up.area);
    printf("%lu passed, %lu failed\n", n_pass, n_fail);
    return n_fail == 0 && n_pass > 0 ? 0 : 1;
}
