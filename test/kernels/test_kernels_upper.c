/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kernels: the upper vector state. Every kernel call of the program
 * goes through the k_* wrappers at the end of this file, which check it.
 *
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
 * defines memcpy/memmove/memset (and their _FORTIFY_SOURCE forms) with rep
 * movsb/stosb, which touch no vector register; the statically linked
 * kernels bind to these. Under
 * AddressSanitizer (which intercepts those functions) the zmm16-31 check is
 * skipped instead.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_kernels.h"

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

/* Unused where UP_X86 is 0 (the arm64 tree). */
__attribute__((unused)) static const char *dirt_name(unsigned d)
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
__attribute__((unused)) static _Alignas(64) uint8_t up_regs[32 * 64];

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

/*
 * _FORTIFY_SOURCE (the module's hardening flags, cmake/hardening.cmake)
 * turns a copy into a bounded object into glibc's __memcpy_chk & co., whose
 * EVEX forms use xmm16-31 too: the same replacements, with glibc's check
 * (abort when the object is smaller than the copy).
 */
void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memmove_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memset_chk(void *dst, int c, size_t n, size_t dstlen);

void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen)
{
    if (dstlen < n)
        abort();
    return memcpy(dst, src, n);
}

void *__memmove_chk(void *dst, const void *src, size_t n, size_t dstlen)
{
    if (dstlen < n)
        abort();
    return memmove(dst, src, n);
}

void *__memset_chk(void *dst, int c, size_t n, size_t dstlen)
{
    if (dstlen < n)
        abort();
    return memset(dst, c, n);
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
void up_init(void)
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
enum { F_CHACHA, F_HCHACHA, F_PINIT, F_PBLOCKS, F_PFINAL, F_PLAST, F_SINIT, F_SUPDATE,
       F_SFINAL, F_SEAL, F_OPEN, F_KEYBLOCK_XOR, F_MULTI, F_PMULTI, F_XORHASH_RANGE,
       F_FIRST_XORHASH, F_ROW1, F_MHASH, F_COUNT };
static const char *const fn_names[F_COUNT] = {
    "chacha20_xor", "hchacha20", "poly1305_init", "poly1305_blocks", "poly1305_final",
    "poly1305_last", "chapoly_poly1305_init", "chapoly_poly1305_update", "chapoly_poly1305_final",
    "chapoly_aead_seal", "chapoly_aead_open",
    "chacha20_keyblock_xor", "chacha20_multi_blocks", "poly1305_multi_blocks",
    "aead_xor_hash_range", "aead_first_xor_hash",
    "chacha20_xor_row1 (one-block row form)", "chacha20_multi_blocks_hash"
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

int up_active(void)
{
    return up.active;
}

void up_done(void)
{
    free(up.area);
    up.area = NULL;
}

void up_level_begin(int simd)
{
    memset(fstat, 0, sizeof(fstat));
    check_upper = up.active && simd;
}

/* One check per entry point the level's checks called. */
void up_level_end(void)
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
    check_upper = 0;
}

/* ------------------------------------------------------------------ */
/* kernel call wrappers (upper-state check around every call)          */

void k_chacha(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
              const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    k_before();
    k->chacha20_xor(k, out, in, len, key, ctr_nonce);
    k_after(F_CHACHA, len);
}

void k_hchacha(const chapoly_kernels *k, uint8_t sub[32], const uint8_t key[32],
               const uint8_t nonce[16])
{
    k_before();
    k->hchacha20(k, sub, key, nonce);
    k_after(F_HCHACHA, 32);
}

/*
 * Raw one-shot Poly1305 straight on the table: one blocks call over every
 * whole block, then the padded tail with padbit 0, then final; at odd
 * lengths the tail and the tag in one poly1305_last call.
 */
void k_poly_raw(const chapoly_kernels *k, uint8_t tag[16], const uint8_t key[32],
                const uint8_t *m, size_t len)
{
    poly1305_state st;
    size_t whole = len & ~(size_t)15;

    k_before();
    k->poly1305_init(k, &st, key);
    k_after(F_PINIT, len);
    if (whole) {
        k_before();
        k->poly1305_blocks(k, &st, m, whole, 1);
        k_after(F_PBLOCKS, whole);
    }
    if (len & 15) {
        uint8_t b[16] = { 0 };
        memcpy(b, m + whole, len & 15);
        b[len & 15] = 1;
        k_before();
        if (len & 1) {
            k->poly1305_last(k, &st, b, 16, 0, tag);
            k_after(F_PLAST, len);
            return;
        }
        k->poly1305_blocks(k, &st, b, 16, 0);
        k_after(F_PBLOCKS, 16);
    }
    k_before();
    k->poly1305_final(k, &st, tag);
    k_after(F_PFINAL, len);
}

/*
 * Raw Poly1305 as a sequence of blocks calls: calls[i] whole blocks each
 * (padbit 1), then tail (0..15) bytes padded (padbit 0), then final. With
 * 'last' the end is one poly1305_last call instead: over the padded tail
 * block when there is one, else over the last call's blocks (none if
 * ncalls is 0).
 */
void k_poly_calls(const chapoly_kernels *k, uint8_t tag[16], const uint8_t key[32],
                  const uint8_t *m, const size_t *calls, size_t ncalls, size_t tail, int last)
{
    poly1305_state st;
    size_t nb = ncalls - (last && tail == 0 && ncalls > 0); /* blocks calls before the end */
    uint8_t b[16] = { 0 };

    k_before();
    k->poly1305_init(k, &st, key);
    k_after(F_PINIT, 0);
    for (size_t i = 0; i < nb; i++) {
        k_before();
        k->poly1305_blocks(k, &st, m, 16 * calls[i], 1);
        k_after(F_PBLOCKS, 16 * calls[i]);
        m += 16 * calls[i];
    }
    if (tail > 0) {
        memcpy(b, m, tail);
        b[tail] = 1;
    }
    k_before();
    if (!last) {
        if (tail > 0)
            k->poly1305_blocks(k, &st, b, 16, 0);
        k->poly1305_final(k, &st, tag);
        k_after(F_PFINAL, 0);
    } else if (tail > 0) {
        k->poly1305_last(k, &st, b, 16, 0, tag);
        k_after(F_PLAST, 16);
    } else {
        size_t len = nb < ncalls ? 16 * calls[nb] : 0;
        k->poly1305_last(k, &st, len > 0 ? m : NULL, len, 1, tag);
        k_after(F_PLAST, len);
    }
}

void k_sinit(const chapoly_kernels *k, poly1305_state *st, const uint8_t key[32])
{
    k_before();
    chapoly_poly1305_init(k, st, key);
    k_after(F_SINIT, 0);
}

void k_supdate(const chapoly_kernels *k, poly1305_state *st, const uint8_t *m, size_t len)
{
    k_before();
    chapoly_poly1305_update(k, st, m, len);
    k_after(F_SUPDATE, len);
}

void k_sfinal(const chapoly_kernels *k, poly1305_state *st, uint8_t tag[16])
{
    k_before();
    chapoly_poly1305_final(k, st, tag);
    k_after(F_SFINAL, 0);
}

/* Streaming tag over pieces of the given sizes (sum == len). */
void k_poly_stream(const chapoly_kernels *k, uint8_t tag[16], const uint8_t key[32],
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

void k_seal(const chapoly_kernels *k, uint8_t *out, uint8_t tag[16], const uint8_t *in,
            size_t len, const uint8_t *aad, size_t aadlen, const uint32_t key[8],
            const uint8_t nonce[12])
{
    k_before();
    chapoly_aead_seal(k, out, tag, in, len, aad, aadlen, key, nonce);
    k_after(F_SEAL, len);
}

int k_open(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
           const uint8_t *aad, size_t aadlen, const uint8_t *tag, size_t taglen,
           const uint32_t key[8], const uint8_t nonce[12])
{
    k_before();
    int r = chapoly_aead_open(k, out, in, len, aad, aadlen, tag, taglen, key, nonce);
    k_after(F_OPEN, len);
    return r;
}


void k_xor_hash_range(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                      size_t pre, size_t hash_len, const uint32_t key[8],
                      const uint32_t ctr_nonce[4], poly1305_state *st, int enc)
{
    k_before();
    k->aead_xor_hash_range(k, out, in, len, pre, hash_len, key, ctr_nonce, st, enc);
    k_after(F_XORHASH_RANGE, len);
}

void k_first_xor_hash(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                      size_t hash_len, const uint8_t *aad, size_t aadlen, const uint32_t key[8],
                      const uint32_t ctr_nonce[4], poly1305_state *st, int enc)
{
    k_before();
    k->aead_first_xor_hash(k, out, in, len, hash_len, aad, aadlen, key, ctr_nonce, st, enc);
    k_after(F_FIRST_XORHASH, len);
}

void k_keyblock_xor(const chapoly_kernels *k, uint8_t key_block[64], uint8_t *out,
                    const uint8_t *in, size_t len, const uint32_t key[8],
                    const uint32_t ctr_nonce[4])
{
    k_before();
    k->chacha20_keyblock_xor(k, key_block, out, in, len, key, ctr_nonce);
    k_after(F_KEYBLOCK_XOR, len);
}

void k_multi_blocks(const chapoly_kernels *k, uint8_t *out, const uint32_t *states, size_t n)
{
    k_before();
    k->chacha20_multi_blocks(k, out, states, n);
    k_after(F_MULTI, 64 * n);
}

void k_poly_multi(const chapoly_kernels *k, poly1305_state *const st[], const uint8_t *const in[],
                  const size_t len[], size_t n)
{
    k_before();
    k->poly1305_multi_blocks(k, st, in, len, n);
    k_after(F_PMULTI, n);
}

void k_multi_hash(const chapoly_kernels *k, uint8_t *out, const uint32_t *states, size_t n,
                  poly1305_state *const st[], const uint8_t *in[], size_t len[], size_t nh)
{
    k_before();
    k->chacha20_multi_blocks_hash(k, out, states, n, st, in, len, nh);
    k_after(F_MHASH, 64 * n + nh);
}

void k_row1(void (*fn)(uint8_t *, const uint8_t *, size_t, const uint32_t *, const uint32_t *),
            uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
            const uint32_t ctr_nonce[4])
{
    k_before();
    fn(out, in, len, key, ctr_nonce);
    k_after(F_ROW1, len);
}

void chacha20_xor_portable_ref(uint8_t block[64], const uint32_t key[8],
                               const uint32_t ctr_nonce[4])
{
    P->chacha20_xor(P, block, block, 64, key, ctr_nonce);
}
