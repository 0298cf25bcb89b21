/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_secrets: the dead-stack scanner (clear, run the operation deep,
 * scan for the secret words), its lists of 64-bit and 32-bit secret words
 * and the words derived from a Poly1305 key. The program's header and main:
 * test_secrets.h, test_secrets.c.
 */
#include "test_secrets.h"

/* ---- dead stack ---- */

/*
 * Method: stack_clear() zeroes the region, call_deep() runs the operation
 * below a 1 KiB gap (so the scanner's own return address and saved
 * registers, written at the top of the region, land above the operation's
 * frames), then stack_scan() declares a large uninitialised array over the
 * same region and looks for the secret words at every byte offset. These
 * three are not ASan-instrumented (their arrays stay on the real stack even
 * with fake-stack modes) and the scanned bytes are declared defined for
 * valgrind; the asm barriers keep the compiler from dropping the arrays.
 * All of it starts with the callee-saved registers zeroed (run_scan), so
 * that only what the operation itself loads can be saved below.
 */
struct word words[NWORDS];
size_t nwords;

static struct word words32[NWORDS32];
size_t nwords32;

static void add_to(struct word *list, size_t *n, size_t max, uint64_t v, const char *what,
                   int idx, int swapped)
{
    if (*n < max) {
        list[*n].v = v;
        list[*n].what = what;
        list[*n].idx = idx;
        list[(*n)++].swapped = swapped;
    }
}

/* Both byte orders of each word on a big-endian CPU (test_secrets.h). */
void add_word32_idx(uint32_t w, const char *what, int idx)
{
    if (w == 0)
        return;
    add_to(words32, &nwords32, NWORDS32, w, what, idx, 0);
#ifdef T_BIG_ENDIAN
    if (__builtin_bswap32(w) != w)
        add_to(words32, &nwords32, NWORDS32, __builtin_bswap32(w), what, idx, 1);
#endif
}

void add_word_idx(uint64_t w, const char *what, int idx)
{
    add_to(words, &nwords, NWORDS, w, what, idx, 0);
#ifdef T_BIG_ENDIAN
    if (__builtin_bswap64(w) != w)
        add_to(words, &nwords, NWORDS, __builtin_bswap64(w), what, idx, 1);
#endif
}

void add_word(uint64_t w, const char *what)
{
    add_word_idx(w, what, -1);
}

/*
 * 32-byte vectors (four 64-bit lanes) the dead stack must not hold at any
 * 8-byte boundary: the vector lanes of a Poly1305 state, whose 26-bit limbs
 * are too small to look for one by one but four of them side by side are
 * as unique as a key word.
 */
static struct vec4 {
    uint64_t v[4];
    const char *what;
} vecs[NVECS];
size_t nvecs;

void add_vec4(const uint64_t v[4], const char *what)
{
    if ((v[0] | v[1] | v[2] | v[3]) != 0 && nvecs < NVECS) {
        memcpy(vecs[nvecs].v, v, sizeof(vecs[nvecs].v));
        vecs[nvecs++].what = what;
    }
}

static int word_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct word *)a)->v, y = ((const struct word *)b)->v;
    return (x > y) - (x < y);
}

/*
 * Every word of a kernel's Poly1305 state with at least 40 significant
 * bits: whatever the level keeps there (hash in radix 2^64 or lanes in
 * radix 2^44, key powers, pad). Small words (flags, counts, 26-bit limbs)
 * are left out: they would match unrelated stack values.
 */
void add_state_words(const poly1305_state *st, const char *what)
{
    for (int i = 0; i < POLY1305_PRIV_WORDS; i++)
        if ((st->priv[i] >> 40) != 0)
            add_word_idx(st->priv[i], what, i);
}

uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* a * b mod 2^130 - 5, five 26-bit limbs (fully carried, a value below 2^130 + 2^26). */
static void mul26(uint32_t h[5], const uint32_t a[5], const uint32_t b[5])
{
    uint64_t d[5];

    for (int i = 0; i < 5; i++) {
        d[i] = 0;
        for (int j = 0; j < 5; j++) {
            int k = i - j;
            d[i] += k >= 0 ? (uint64_t)a[j] * b[k] : (uint64_t)a[j] * b[k + 5] * 5;
        }
    }
    uint64_t c = 0;
    for (int i = 0; i < 5; i++) {
        d[i] += c;
        c = d[i] >> 26;
        h[i] = (uint32_t)(d[i] & 0x3ffffff);
    }
    c = h[0] + c * 5;
    h[0] = (uint32_t)(c & 0x3ffffff);
    h[1] += (uint32_t)(c >> 26);
}

/*
 * The key powers r^2..r^16 in the forms a SIMD level may hold them
 * (kernel registers spilled to the stack, whether or not the state keeps
 * a copy): radix 2^64 words and radix 2^44 limbs with their 20x multiples.
 * Radix 2^26 limbs are too small to tell from other stack values.
 */
static void add_power_words(uint64_t r0, uint64_t r1)
{
    uint32_t r[5] = { (uint32_t)(r0 & 0x3ffffff), (uint32_t)((r0 >> 26) & 0x3ffffff),
                      (uint32_t)(((r0 >> 52) | (r1 << 12)) & 0x3ffffff),
                      (uint32_t)((r1 >> 14) & 0x3ffffff), (uint32_t)(r1 >> 40) };
    uint32_t x[5];

    memcpy(x, r, sizeof(x));
    for (int e = 2; e <= 16; e++) {
        mul26(x, x, r);
        uint64_t w0 = x[0] | ((uint64_t)x[1] << 26) | ((uint64_t)x[2] << 52);
        uint64_t w1 = (x[2] >> 12) | ((uint64_t)x[3] << 14) | ((uint64_t)x[4] << 40);
        uint64_t l0 = w0 & 0xfffffffffffULL, l1 = ((w0 >> 44) | (w1 << 20)) & 0xfffffffffffULL;
        uint64_t l2 = (w1 >> 24) | ((uint64_t)(x[4] >> 24) << 40);

        add_word(w0, "key power word 0 (radix 2^64)");
        add_word(w1, "key power word 1 (radix 2^64)");
        add_word(l0, "key power limb 0 (radix 2^44)");
        add_word(l1, "key power limb 1 (radix 2^44)");
        add_word(20 * l1, "key power limb 1 x 20 (radix 2^44)");
        if ((l2 >> 40) != 0)
            add_word(l2, "key power limb 2 (radix 2^44)");
        add_word(20 * l2, "key power limb 2 x 20 (radix 2^44)");
    }
}

/*
 * The products a 4-lane radix-2^26 Poly1305 (poly1305_avx2.c, at the avx2,
 * avx512vl and avx512-noifma levels) forms of each message limb with each
 * limb of r^4 and its 5x multiples: a product gives a limb of r^4 away to
 * whoever knows the message, so none may stay on the dead stack (a compiler
 * that issues a step's 25 products before summing them parks most of them
 * there). Products below 2^40 are left out, as small state words are.
 */
void add_lane_product_words(const uint8_t key[32], const uint8_t *msg, size_t nblocks,
                            unsigned padbit)
{
    uint64_t r0 = le64(key) & 0x0ffffffc0fffffffULL, r1 = le64(key + 8) & 0x0ffffffc0ffffffcULL;
    uint32_t r[5] = { (uint32_t)(r0 & 0x3ffffff), (uint32_t)((r0 >> 26) & 0x3ffffff),
                      (uint32_t)(((r0 >> 52) | (r1 << 12)) & 0x3ffffff),
                      (uint32_t)((r1 >> 14) & 0x3ffffff), (uint32_t)(r1 >> 40) };
    uint32_t r4[5];
    uint64_t k[9];

    mul26(r4, r, r);
    mul26(r4, r4, r4);
    for (int b = 0; b < 5; b++)
        k[b] = r4[b];
    for (int b = 1; b < 5; b++)
        k[4 + b] = 5 * (uint64_t)r4[b];
    for (size_t i = 0; i < nblocks; i++) {
        uint64_t lo = le64(msg + 16 * i), hi = le64(msg + 16 * i + 8);
        uint64_t m[5] = { lo & 0x3ffffff, (lo >> 26) & 0x3ffffff,
                          ((lo >> 52) | (hi << 12)) & 0x3ffffff, (hi >> 14) & 0x3ffffff,
                          (hi >> 40) | ((uint64_t)padbit << 24) };

        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 9; b++)
                if (((m[a] * k[b]) >> 40) != 0)
                    add_word(m[a] * k[b], "message limb x r^4 limb (radix 2^26 lanes)");
    }
}

/* Words derived from a Poly1305 key; tag (may be NULL) gives tag - s. */
void add_poly_words(const uint8_t key[32], const uint8_t *tag)
{
    uint64_t r0 = le64(key) & 0x0ffffffc0fffffffULL;
    uint64_t r1 = le64(key + 8) & 0x0ffffffc0ffffffcULL;

    add_word(r0, "r0 (clamped)");
    add_word(r1, "r1 (clamped)");
    add_word(r1 + (r1 >> 2), "5 r1 / 4");
    add_word(le64(key), "key bytes 0..7");
    add_word(le64(key + 8), "key bytes 8..15");
    add_word(le64(key + 16), "s bytes 0..7");
    add_word(le64(key + 24), "s bytes 8..15");
    add_word(r0 & 0xfffffffffffULL, "r limb 0 (radix 2^44)");
    add_word(((r0 >> 44) | (r1 << 20)) & 0xfffffffffffULL, "r limb 1 (radix 2^44)");
    add_power_words(r0, r1);
    if (tag != NULL) {
        /* (h mod p) mod 2^128 = tag - s: the accumulator at final */
        uint64_t s0 = le64(key + 16), s1 = le64(key + 24);
        uint64_t t0 = le64(tag), t1 = le64(tag + 8);
        add_word(t0 - s0, "accumulator word 0");
        add_word(t1 - s1 - (t0 < s0), "accumulator word 1");
    }
}

/* stack_scan needs the lists sorted (check_op sorts them itself). */
void words_sort(void)
{
    qsort(words, nwords, sizeof(words[0]), word_cmp);
    qsort(words32, nwords32, sizeof(words32[0]), word_cmp);
}

T_NOASAN void stack_clear(void)
{
    uint8_t area[DEAD_STACK_BYTES + 4096];

    memset(area, 0, sizeof(area));
    __asm__ volatile("" : : "r"(area) : "memory");
}


T_NOASAN void call_deep(stack_op op, void *arg)
{
    volatile uint8_t gap[1024];

    /* the address escapes: clang 14 kept only the two bytes touched (an 8-byte frame) */
    __asm__ volatile("" : : "r"(gap) : "memory");
    gap[0] = 0;
    op(arg);
    gap[sizeof(gap) - 1] = 0;
}

/*
 * 1 if byte i of the area lies in an aligned slot holding an address of this
 * process: return addresses, saved frame and buffer pointers. Their bytes
 * are random per process (ASLR), and a 32-bit window of one matched one of
 * the few hundred random 32-bit secret words about once in a hundred runs
 * of the program (seen: "ChaCha20 state word before the feed-forward 168"
 * in a 3.5 tree, not again in 160 runs; "... 43 (as little-endian bytes)"
 * in the s390x tree under qemu, whose guest addresses the first rule below
 * does not know, not again in 3 runs). An address is
 *  - an aligned 8-byte value with bits 40-46 not all zero and 47-63 zero
 *    (x86-64 and AArch64 user space), or
 *  - a value within 2^32 of one of this process's own addresses (its stack,
 *    heap, code and C library data) and at least 2^32 (so never a 32-bit
 *    word beside zero), or on a 32-bit target an aligned 4-byte value
 *    within 2^24 of one of them.
 * A spilled secret word is not skipped unless its slot happens to hold
 * such a value (1 in 2^17 for a random 64-bit value by the first rule, 1
 * in 2^29 by the second; a random 32-bit secret of a 32-bit target 1 in
 * 2^5, which hides no leak: a leak repeats in every case, with new
 * secrets each time). The 64-bit scan skips nothing.
 */
/* A code address of this program. */
static void stack_scan_refs(void) {}

static T_NOASAN int near_own_address(uint64_t v, const void *stack, uint64_t window)
{
    static void *heap;
    const uintptr_t refs[] = { (uintptr_t)stack, (uintptr_t)&stack_scan_refs,
                               (uintptr_t)stdout, (uintptr_t)heap };

    if (heap == NULL)
        heap = malloc(64); /* kept: one heap address for the whole run */
    for (size_t r = 0; r < sizeof(refs) / sizeof(refs[0]); r++)
        if (refs[r] != 0 && v - (uint64_t)refs[r] + window < 2 * window)
            return 1;
    return 0;
}

static T_NOASAN int pointer_slot(const uint8_t *area, size_t i)
{
    uintptr_t a = (uintptr_t)(area + i) & ~(uintptr_t)7;
    uint64_t v;

    if (sizeof(void *) == 4) {
        uintptr_t a4 = (uintptr_t)(area + i) & ~(uintptr_t)3;
        uint32_t v4;

        if (a4 >= (uintptr_t)area && a4 + 4 <= (uintptr_t)area + DEAD_STACK_BYTES) {
            memcpy(&v4, (const void *)a4, 4);
            if (near_own_address(v4, area, (uint64_t)1 << 24))
                return 1;
        }
    }
    if (a < (uintptr_t)area || a + 8 > (uintptr_t)area + DEAD_STACK_BYTES)
        return 0;
    memcpy(&v, (const void *)a, 8);
    if ((v >> 47) == 0 && (v >> 40) != 0)
        return 1;
    return v >> 32 != 0 && near_own_address(v, area, (uint64_t)1 << 32);
}

/* The first secret word found in the dead stack, or NULL. */
T_NOASAN const struct word *stack_scan(void)
{
    uint8_t area[DEAD_STACK_BYTES];

    __asm__ volatile("" : : "r"(area) : "memory");
    T_MAKE_DEFINED(area, sizeof(area));
    for (size_t i = 0; i + 8 <= sizeof(area); i++) {
        struct word key;
        memcpy(&key.v, area + i, 8);
        const struct word *w = bsearch(&key, words, nwords, sizeof(words[0]), word_cmp);
        if (w != NULL)
            return w;
    }
    for (size_t i = (8 - ((uintptr_t)area & 7)) & 7; nvecs > 0 && i + 32 <= sizeof(area); i += 8)
        for (size_t j = 0; j < nvecs; j++)
            if (memcmp(area + i, vecs[j].v, 32) == 0) {
                static struct word hit;

                hit.v = vecs[j].v[0];
                hit.what = vecs[j].what;
                hit.idx = -1;
                return &hit;
            }
    for (size_t i = 0; nwords32 > 0 && i + 4 <= sizeof(area); i++) {
        struct word key;
        uint32_t v;
        if (pointer_slot(area, i) || pointer_slot(area, i + 3))
            continue;
        memcpy(&v, area + i, 4);
        key.v = v;
        const struct word *w = bsearch(&key, words32, nwords32, sizeof(words32[0]), word_cmp);
        if (w != NULL)
            return w;
    }
    return NULL;
}

unsigned long stack_scans;

/*
 * The test's own values must not reach the scanned region through the
 * callee-saved registers. The expected words are computed in the callers
 * of check_op (le32(ekey + 12) into r15, say, when the compiler picks it);
 * a callee-saved register keeps its value through check_op, call_deep and
 * the op's frames that leave it alone, and the first function below that
 * wants the register saves it in its prologue: the provider's
 * aead_get_ctx_params pushing r15 under EVP_CIPHER_CTX_ctrl left the
 * test's own "ChaCha20 key word 3" there (GCC 12, after an extra
 * kernel_chacha_stack length changed main's register allocation). qsort's
 * and stack_clear's saved registers land at the top of the region too.
 *
 * So the whole scan (sort, clear, op, scan) runs under t_secrets_call_regs,
 * which saves every callee-saved register in its own frame (above the
 * region), sets them all to one value (0 here), calls fn(arg) and restores
 * them: a clobber list would not do, the compiler may restore a clobbered
 * register right after the asm statement (GCC does on AArch64). x86-64:
 * rbx, rbp, r12-r15 (no xmm register is callee-saved); AArch64: x19-x28,
 * d8-d15. Elsewhere the scan runs as it is. Whatever the op's own chain
 * puts in those registers is still seen. keep_callee_saved (the
 * self-check) skips the call.
 */
typedef void (*regs_fn)(void *arg);
#if defined(__x86_64__) && defined(__ELF__)
#define T_CALL_REGS 1
__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl t_secrets_call_regs\n"
        ".hidden t_secrets_call_regs\n"
        ".type t_secrets_call_regs, @function\n"
        "t_secrets_call_regs:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n" /* 16-byte aligned at the call */
        "    movq %rdi, %rax\n"
        "    movq %rsi, %rdi\n"
        "    movq %rdx, %rbp\n"
        "    movq %rdx, %rbx\n"
        "    movq %rdx, %r12\n"
        "    movq %rdx, %r13\n"
        "    movq %rdx, %r14\n"
        "    movq %rdx, %r15\n"
        "    xorl %esi, %esi\n"
        "    xorl %edx, %edx\n"
        "    call *%rax\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size t_secrets_call_regs, .-t_secrets_call_regs\n"
        ".popsection\n");
#elif defined(__aarch64__) && defined(__ELF__)
#define T_CALL_REGS 1
__asm__(".pushsection .text\n"
        ".p2align 4\n"
        ".globl t_secrets_call_regs\n"
        ".hidden t_secrets_call_regs\n"
        ".type t_secrets_call_regs, %function\n"
        "t_secrets_call_regs:\n"
        "    stp x29, x30, [sp, #-160]!\n"
        "    mov x29, sp\n"
        "    stp x19, x20, [sp, #16]\n"
        "    stp x21, x22, [sp, #32]\n"
        "    stp x23, x24, [sp, #48]\n"
        "    stp x25, x26, [sp, #64]\n"
        "    stp x27, x28, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n"
        "    stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n"
        "    stp d14, d15, [sp, #144]\n"
        "    mov x16, x0\n"
        "    mov x0, x1\n"
        "    mov x19, x2\n"
        "    mov x20, x2\n"
        "    mov x21, x2\n"
        "    mov x22, x2\n"
        "    mov x23, x2\n"
        "    mov x24, x2\n"
        "    mov x25, x2\n"
        "    mov x26, x2\n"
        "    mov x27, x2\n"
        "    mov x28, x2\n"
        "    fmov d8, x2\n"
        "    fmov d9, x2\n"
        "    fmov d10, x2\n"
        "    fmov d11, x2\n"
        "    fmov d12, x2\n"
        "    fmov d13, x2\n"
        "    fmov d14, x2\n"
        "    fmov d15, x2\n"
        "    mov x1, xzr\n"
        "    mov x2, xzr\n"
        "    blr x16\n"
        "    ldp d8, d9, [sp, #96]\n"
        "    ldp d10, d11, [sp, #112]\n"
        "    ldp d12, d13, [sp, #128]\n"
        "    ldp d14, d15, [sp, #144]\n"
        "    ldp x19, x20, [sp, #16]\n"
        "    ldp x21, x22, [sp, #32]\n"
        "    ldp x23, x24, [sp, #48]\n"
        "    ldp x25, x26, [sp, #64]\n"
        "    ldp x27, x28, [sp, #80]\n"
        "    ldp x29, x30, [sp], #160\n"
        "    ret\n"
        ".size t_secrets_call_regs, .-t_secrets_call_regs\n"
        ".popsection\n");
#endif
#ifdef T_CALL_REGS
__attribute__((visibility("hidden"))) void t_secrets_call_regs(regs_fn fn, void *arg,
                                                               uint64_t value);
#endif

int keep_callee_saved;

struct scan_call {
    stack_op op;
    void *arg;
    const struct word *found;
};

static T_NOASAN void scan_call_run(void *p)
{
    struct scan_call *c = p;

    words_sort();
    stack_clear();
    call_deep(c->op, c->arg);
    c->found = stack_scan(); /* not a tail call: the region stays below this frame */
}

static __attribute__((noinline)) const struct word *run_scan(stack_op op, void *arg)
{
    struct scan_call c = { op, arg, NULL };

#ifdef T_CALL_REGS
    if (!keep_callee_saved)
        t_secrets_call_regs(scan_call_run, &c, 0);
    else
#endif
        scan_call_run(&c);
    return c.found;
}

/* Run op from a deep frame on a clean stack; check no word is left below. */
void check_op(stack_op op, void *arg, const char *what)
{
    char found[96] = "";

    T_OK(nwords < NWORDS, "%s: more secret words than the list holds", what);
    T_OK(nwords32 < NWORDS32, "%s: more secret 32-bit words than the list holds", what);
    const struct word *w = run_scan(op, arg);
    stack_scans++;
    if (w != NULL && w->idx >= 0)
        snprintf(found, sizeof(found), "%s %d%s", w->what, w->idx,
                 w->swapped ? " (as little-endian bytes)" : "");
    else if (w != NULL)
        snprintf(found, sizeof(found), "%s%s", w->what,
                 w->swapped ? " (as little-endian bytes)" : "");
    T_OK(w == NULL, "%s (%s): %s left on the dead stack", what, t_kernel(), found);
}

/* Self-check: a word written by a returned frame must be found. */
uint64_t planted;
T_NOASAN void plant_op(void *arg)
{
    volatile uint64_t w[4];

    (void)arg;
    w[1] = planted;
    __asm__ volatile("" : : "r"(w) : "memory");
}

/* The same for a 32-bit word at an odd offset, as little-endian bytes. */
uint32_t planted32;
T_NOASAN void plant32_op(void *arg)
{
    volatile uint8_t b[16];

    (void)arg;
    for (int i = 0; i < 4; i++)
        b[5 + i] = (uint8_t)(planted32 >> (8 * i));
    __asm__ volatile("" : : "r"(b) : "memory");
}

/*
 * And the other byte order of each (test_secrets.h): the 64-bit word as
 * little-endian bytes at an odd offset, the 32-bit word as the CPU stores
 * it. On a little-endian CPU these repeat the two above.
 */
T_NOASAN void plant_le_op(void *arg)
{
    volatile uint8_t b[24];

    (void)arg;
    for (int i = 0; i < 8; i++)
        b[3 + i] = (uint8_t)(planted >> (8 * i));
    __asm__ volatile("" : : "r"(b) : "memory");
}

T_NOASAN void plant32_native_op(void *arg)
{
    volatile uint32_t w[4];

    (void)arg;
    w[1] = planted32;
    __asm__ volatile("" : : "r"(w) : "memory");
}

/*
 * Self-check for the register clearing: a word the caller leaves in every
 * callee-saved register (as the test's own word lists may) must not be
 * found below, though an op that saves them all (push_op) puts whatever it
 * got in its frame; with the clearing skipped it must be found there (the
 * planted word reaches the op).
 */
#ifdef T_CALL_REGS
static T_NOASAN void push_op(void *arg)
{
    (void)arg;
#if defined(__x86_64__)
    __asm__ volatile("" : : : "rbx", "r12", "r13", "r14", "r15", "memory");
#else
    __asm__ volatile("" : : : "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27",
                     "x28", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15", "memory");
#endif
}

static void planted_scan(void *arg)
{
    *(const struct word **)arg = run_scan(push_op, NULL);
}

const struct word *scan_with_planted_regs(uint64_t w)
{
    const struct word *found = NULL;

    t_secrets_call_regs(planted_scan, &found, w);
    return found;
}
#endif

