/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Secrets are wiped: every block freed through OpenSSL's allocator (the
 * provider allocates its contexts there) is scanned for the key, the
 * XChaCha subkey, the Poly1305 one-time key and the plaintext before it is
 * released. Contexts are freed after complete messages, in mid-message,
 * after re-keying and after dup, for every algorithm.
 *
 * Dead stack too: after each Poly1305 kernel call (init, blocks at the
 * lengths that pick each path, final) of the level under test, and after
 * each EVP POLY1305 and AEAD call, the stack below the caller is scanned
 * for the key-derived 64-bit words (r0, r1 clamped and not, 5 r1 / 4, the
 * s half, the accumulator tag - s, the AEAD's one-time and ChaCha20 keys).
 * And after each ChaCha20 kernel call of the level (chacha20_xor at lengths
 * that pick each shape, chacha20_keyblock_xor, hchacha20, the level's
 * one-block row form of row1_forms.h) for 32-bit words: the
 * key words, every state word after the rounds and before the feed-forward
 * (that minus the keystream gives the key back) and the HChaCha20 subkey.
 * And after each call of the level's range kernel (aead_xor_hash_range, where
 * it has one: 1 to 16 KiB, seal with and without the earlier kilobyte,
 * open, from each form of Poly1305 state) for both: the key words, the key
 * powers, the hash lanes between its batches and the ChaCha20 round values.
 * EVP seal and open reach it from 3 KiB on (4 and 16 KiB here).
 * And after each call of aead_xor_hash_range (0..3136 bytes, 0 to 1024
 * bytes of ciphertext before, seal in place, open in place and not) and
 * aead_first_xor_hash (449..3136 bytes, AAD 0 and 70), the level's entry
 * or, where it has none, the composition in generic.c: the words
 * above, the hash after each block and the keystream past the text.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "kernels.h"
#include "row1_forms.h"
#include "test_common.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define T_MAKE_DEFINED(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#endif
#endif
#ifndef T_MAKE_DEFINED
#define T_MAKE_DEFINED(p, n) ((void)(p), (void)(n))
#endif

#define NSECRETS 8
static uint8_t secrets[NSECRETS][32];
static size_t nsecrets;
static unsigned long leaks, frees_scanned;

/* Any 12-byte window of a secret found in a freed block counts as a leak. */
static void scan(const uint8_t *p, size_t n)
{
    frees_scanned++;
    T_MAKE_DEFINED(p, n); /* padding never written: valgrind would object */
    for (size_t s = 0; s < nsecrets; s++)
        for (size_t off = 0; off + 12 <= 32; off += 4)
            for (size_t i = 0; i + 12 <= n; i++)
                if (p[i] == secrets[s][off] && memcmp(p + i, secrets[s] + off, 12) == 0) {
                    leaks++;
                    return;
                }
}

/* malloc with a size header so free can scan the block. */
static void *h_malloc(size_t n, const char *f, int l)
{
    (void)f;
    (void)l;
    size_t *p = malloc(n + 16);
    if (p == NULL)
        return NULL;
    p[0] = n;
    return (uint8_t *)p + 16;
}

static void h_free(void *q, const char *f, int l)
{
    (void)f;
    (void)l;
    if (q == NULL)
        return;
    size_t *p = (size_t *)((uint8_t *)q - 16);
    scan(q, p[0]);
    free(p);
}

static void *h_realloc(void *q, size_t n, const char *f, int l)
{
    if (q == NULL)
        return h_malloc(n, f, l);
    size_t *p = (size_t *)((uint8_t *)q - 16);
    void *r = h_malloc(n, f, l);
    if (r != NULL) {
        memcpy(r, q, p[0] < n ? p[0] : n);
        h_free(q, f, l);
    }
    return r;
}

static void add_secret(const uint8_t *s)
{
    if (nsecrets < NSECRETS)
        memcpy(secrets[nsecrets++], s, 32);
}

/* 32 bytes of ChaCha20 block ctr of (key, nonce) from the default provider. */
static void block_of(const uint8_t key[32], const uint8_t nonce[12], uint32_t ctr,
                     uint8_t otk[32])
{
    EVP_CIPHER *c = t_cipher("ChaCha20", 0);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t iv[16] = { (uint8_t)ctr, (uint8_t)(ctr >> 8), (uint8_t)(ctr >> 16),
                       (uint8_t)(ctr >> 24) }, zero[32] = { 0 };
    int ol;

    memcpy(iv + 4, nonce, 12);
    EVP_EncryptInit_ex(x, c, NULL, key, iv);
    EVP_EncryptUpdate(x, otk, &ol, zero, 32);
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_free(c);
}

static void aead_run(const char *name, size_t ivlen, int finish, int dup, int rekey)
{
    EVP_CIPHER *c = t_cipher(name, 1);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new(), *y = NULL;
    uint8_t key[32], key2[32], iv[24], pt[200], ct[200], tag[16];
    int ol;

    t_rand_bytes(key, 32);
    t_rand_bytes(key2, 32);
    t_rand_bytes(iv, 24);
    t_rand_bytes(pt, sizeof(pt));
    nsecrets = 0;
    add_secret(key);
    add_secret(pt);
    add_secret(pt + 100);
    if (ivlen == 12) {
        uint8_t otk[32], ks[32];
        block_of(key, iv, 0, otk); /* the Poly1305 one-time key */
        add_secret(otk);
        block_of(key, iv, 3, ks); /* keystream of text 128..159, used from ks[] */
        add_secret(ks);
        block_of(key, iv, 4, ks); /* keystream past the text, made ahead into ks[] */
        add_secret(ks);
    }
    T_OK(EVP_EncryptInit_ex(x, c, NULL, key, iv), "%s init", name);
    T_OK(EVP_EncryptUpdate(x, NULL, &ol, pt, 13), "%s aad", name);
    T_OK(EVP_EncryptUpdate(x, ct, &ol, pt, 150), "%s update", name);
    /* a second update: the core makes keystream ahead into its buffer */
    T_OK(EVP_EncryptUpdate(x, ct + 150, &ol, pt + 150, 40), "%s second update", name);
    if (dup) {
        y = EVP_CIPHER_CTX_new();
        T_OK(EVP_CIPHER_CTX_copy(y, x), "%s dup", name);
    }
    if (rekey) {
        T_OK(EVP_EncryptInit_ex(x, NULL, NULL, key2, iv), "%s rekey", name);
        T_OK(EVP_EncryptUpdate(x, ct, &ol, pt, 100), "%s update after rekey", name);
    }
    if (finish) {
        T_OK(EVP_EncryptFinal_ex(x, ct, &ol), "%s final", name);
        T_OK(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0, "%s tag", name);
    }
    unsigned long before = leaks;
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_CTX_free(y);
    T_OK(leaks == before, "%s: secret left in freed memory (finish %d dup %d rekey %d)",
         name, finish, dup, rekey);
    EVP_CIPHER_free(c);
}

static void chacha_run(int partial)
{
    EVP_CIPHER *c = t_cipher("ChaCha20", 1);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t key[32], iv[16] = { 0 }, pt[100], ct[100];
    int ol;

    t_rand_bytes(key, 32);
    t_rand_bytes(pt, sizeof(pt));
    nsecrets = 0;
    add_secret(key);
    /* the keystream of block 0 (ciphertext XOR plaintext) must not survive either */
    T_OK(EVP_EncryptInit_ex(x, c, NULL, key, iv), "chacha init");
    T_OK(EVP_EncryptUpdate(x, ct, &ol, pt, partial ? 40 : 64), "chacha update");
    uint8_t ks[32];
    for (int i = 0; i < 32; i++)
        ks[i] = ct[i] ^ pt[i];
    add_secret(ks);
    unsigned long before = leaks;
    EVP_CIPHER_CTX_free(x);
    T_OK(leaks == before, "ChaCha20: key or keystream left in freed memory");
    EVP_CIPHER_free(c);
}

static void mac_run(int finish)
{
    EVP_MAC *m = t_mac("POLY1305", 1);
    EVP_MAC_CTX *x = EVP_MAC_CTX_new(m);
    uint8_t key[32], msg[40], tag[16];
    size_t ol;

    t_rand_bytes(key, 32);
    t_rand_bytes(msg, sizeof(msg));
    nsecrets = 0;
    add_secret(key);
    T_OK(EVP_MAC_init(x, key, 32, NULL), "mac init");
    T_OK(EVP_MAC_update(x, msg, 37), "mac update");
    if (finish)
        T_OK(EVP_MAC_final(x, tag, &ol, 16), "mac final");
    unsigned long before = leaks;
    EVP_MAC_CTX_free(x);
    T_OK(leaks == before, "POLY1305: key left in freed memory (finish %d)", finish);
    EVP_MAC_free(m);
}

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
#define DEAD_STACK_BYTES (64 * 1024)
#define T_NOASAN __attribute__((noinline, no_sanitize_address))

/* Secret words, sorted by value before a scan (stack_scan bsearches). */
#define NWORDS 40000
struct word {
    uint64_t v;
    const char *what;
    int idx; /* state word index, or -1 */
};
static struct word words[NWORDS];
static size_t nwords;

/*
 * 32-bit secret words (ChaCha20 is a 32-bit cipher), looked for at every
 * byte offset too. A random 32-bit word matches about 64K / 2^32 of the
 * time per scan: rare enough, and the PRNG is deterministic. Zero is never
 * listed: the scanned region is zeroed before the call.
 */
#define NWORDS32 1024
static struct word words32[NWORDS32];
static size_t nwords32;

static void add_word32_idx(uint32_t w, const char *what, int idx)
{
    if (w != 0 && nwords32 < NWORDS32) {
        words32[nwords32].v = w;
        words32[nwords32].what = what;
        words32[nwords32++].idx = idx;
    }
}

static void add_word_idx(uint64_t w, const char *what, int idx)
{
    if (nwords < NWORDS) {
        words[nwords].v = w;
        words[nwords].what = what;
        words[nwords++].idx = idx;
    }
}

static void add_word(uint64_t w, const char *what)
{
    add_word_idx(w, what, -1);
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
static void add_state_words(const poly1305_state *st, const char *what)
{
    for (int i = 0; i < POLY1305_PRIV_WORDS; i++)
        if ((st->priv[i] >> 40) != 0)
            add_word_idx(st->priv[i], what, i);
}

static uint64_t le64(const uint8_t *p)
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

/* Words derived from a Poly1305 key; tag (may be NULL) gives tag - s. */
static void add_poly_words(const uint8_t key[32], const uint8_t *tag)
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

static T_NOASAN void stack_clear(void)
{
    uint8_t area[DEAD_STACK_BYTES + 4096];

    memset(area, 0, sizeof(area));
    __asm__ volatile("" : : "r"(area) : "memory");
}

typedef void (*stack_op)(void *arg);

static T_NOASAN void call_deep(stack_op op, void *arg)
{
    volatile uint8_t gap[1024];

    gap[0] = 0;
    op(arg);
    gap[sizeof(gap) - 1] = 0;
}

/* The first secret word found in the dead stack, or NULL. */
static T_NOASAN const struct word *stack_scan(void)
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
    for (size_t i = 0; nwords32 > 0 && i + 4 <= sizeof(area); i++) {
        struct word key;
        uint32_t v;
        memcpy(&v, area + i, 4);
        key.v = v;
        const struct word *w = bsearch(&key, words32, nwords32, sizeof(words32[0]), word_cmp);
        if (w != NULL)
            return w;
    }
    return NULL;
}

static unsigned long stack_scans;

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

static int keep_callee_saved;

struct scan_call {
    stack_op op;
    void *arg;
    const struct word *found;
};

static T_NOASAN void scan_call_run(void *p)
{
    struct scan_call *c = p;

    qsort(words, nwords, sizeof(words[0]), word_cmp);
    qsort(words32, nwords32, sizeof(words32[0]), word_cmp);
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
static void check_op(stack_op op, void *arg, const char *what)
{
    char found[96] = "";

    T_OK(nwords < NWORDS, "%s: more secret words than the list holds", what);
    T_OK(nwords32 < NWORDS32, "%s: more secret 32-bit words than the list holds", what);
    const struct word *w = run_scan(op, arg);
    stack_scans++;
    if (w != NULL && w->idx >= 0)
        snprintf(found, sizeof(found), "%s %d", w->what, w->idx);
    else if (w != NULL)
        snprintf(found, sizeof(found), "%s", w->what);
    T_OK(w == NULL, "%s (%s): %s left on the dead stack", what, t_kernel(), found);
}

/* Self-check: a word written by a returned frame must be found. */
static uint64_t planted;
static T_NOASAN void plant_op(void *arg)
{
    volatile uint64_t w[4];

    (void)arg;
    w[1] = planted;
    __asm__ volatile("" : : "r"(w) : "memory");
}

/* The same for a 32-bit word at an odd offset. */
static uint32_t planted32;
static T_NOASAN void plant32_op(void *arg)
{
    volatile uint8_t b[16];

    (void)arg;
    for (int i = 0; i < 4; i++)
        b[5 + i] = (uint8_t)(planted32 >> (8 * i));
    __asm__ volatile("" : : "r"(b) : "memory");
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

static const struct word *scan_with_planted_regs(uint64_t w)
{
    const struct word *found = NULL;

    t_secrets_call_regs(planted_scan, &found, w);
    return found;
}
#endif

/* ---- kernel table calls ---- */
static _Alignas(64) poly1305_state kst;
static uint8_t kkey[32], kmsg[4096], ktag[16];

struct kop {
    const chapoly_kernels *k;
    int which; /* 0 init, 1 blocks, 2 final */
    const uint8_t *in;
    size_t len;
    unsigned padbit;
};

static void kernel_op(void *arg)
{
    const struct kop *o = arg;

    if (o->which == 0)
        o->k->poly1305_init(o->k, &kst, kkey);
    else if (o->which == 1)
        o->k->poly1305_blocks(o->k, &kst, o->in, o->len, o->padbit);
    else
        o->k->poly1305_final(o->k, &kst, ktag);
}

static _Alignas(64) poly1305_state kref, ksnap[3];

/* The words known before and after one call: the key's and the states'. */
static void kernel_words(const uint8_t *tag, const poly1305_state *before,
                         const poly1305_state *after)
{
    nwords = 0;
    add_poly_words(kkey, tag);
    if (before != NULL)
        add_state_words(before, "state word (before the call)");
    if (after != NULL)
        add_state_words(after, "state word (after the call)");
}

/*
 * Two blocks() calls of n1 and n2 blocks, then final. n1: 1, 5 and 14
 * (scalar everywhere), 17, 20 and 24 (IFMA 8 lanes after a scalar prefix
 * of 1, 4 and 8 blocks run beside the key powers), 32, 43, 45 (16 lanes;
 * 43: an odd number of batches), 64 and 256 (whole batches: lanes pend
 * until the next call; AVX2 batches). n2 = 1 (a padded partial block:
 * pending lanes are folded, then a scalar block), 13 and 21 (lanes go on,
 * then a partial batch of 5 blocks), 17 (lanes go on, then one scalar
 * block after the fold), 16 (whole batches go on) or none (final folds
 * the lanes).
 */
static void kernel_poly_stack(const chapoly_kernels *k)
{
    static const size_t n[][2] = { { 1, 1 },   { 5, 1 },  { 14, 1 },  { 17, 1 },
                                   { 20, 1 },  { 24, 13 }, { 24, 17 }, { 32, 0 },
                                   { 32, 1 },  { 32, 21 }, { 43, 1 },  { 45, 1 },
                                   { 64, 16 }, { 256, 0 } };
    char what[96];

    for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
        size_t n1 = n[i][0], n2 = n[i][1];
        unsigned pad2 = n2 == 1 ? 0 : 1;
        struct kop o = { k, 0, kmsg, 0, 1 };
        uint8_t tag[16];

        t_rand_bytes(kkey, sizeof(kkey));
        t_rand_bytes(kmsg, sizeof(kmsg));
        /* the same calls off-scan first: the states after each, and the tag */
        k->poly1305_init(k, &kref, kkey);
        ksnap[0] = kref;
        k->poly1305_blocks(k, &kref, kmsg, 16 * n1, 1);
        ksnap[1] = kref;
        if (n2 > 0)
            k->poly1305_blocks(k, &kref, kmsg + 16 * n1, 16 * n2, pad2);
        ksnap[2] = kref;
        k->poly1305_final(k, &kref, tag);

        kernel_words(tag, NULL, &ksnap[0]);
        snprintf(what, sizeof(what), "kernel poly1305_init");
        check_op(kernel_op, &o, what);
        kernel_words(tag, &ksnap[0], &ksnap[1]);
        o.which = 1;
        o.len = 16 * n1;
        snprintf(what, sizeof(what), "kernel poly1305_blocks, %zu blocks", n1);
        check_op(kernel_op, &o, what);
        if (n2 > 0) {
            kernel_words(tag, &ksnap[1], &ksnap[2]);
            o.in = kmsg + 16 * n1;
            o.len = 16 * n2;
            o.padbit = pad2;
            snprintf(what, sizeof(what), "kernel poly1305_blocks, %zu blocks after %zu", n2, n1);
            check_op(kernel_op, &o, what);
        }
        kernel_words(tag, &ksnap[2], NULL);
        o.which = 2;
        snprintf(what, sizeof(what), "kernel poly1305_final after %zu + %zu blocks", n1, n2);
        check_op(kernel_op, &o, what);
        T_EQ_MEM(ktag, tag, 16, "kernel tag after %zu + %zu blocks", n1, n2);
        /* final wipes the state: hash, key, pad, lanes and key powers */
        size_t left = POLY1305_PRIV_WORDS;
        for (size_t w = 0; w < POLY1305_PRIV_WORDS; w++)
            if (kst.priv[w] == 0)
                left--;
        T_OK(left == 0, "kernel poly1305_final after %zu + %zu blocks (%s): %zu state words not wiped",
             n1, n2, t_kernel(), left);
    }
}

/*
 * poly1305_multi_blocks (the batched AEAD): eight states of 2, 3 or 16
 * blocks each, or of unequal lengths (lanes for the common blocks, scalar
 * chains for the rest). The words of all eight keys and the states after.
 */
static _Alignas(64) poly1305_state kst8[8], kref8[8];
static uint8_t kkeys[8][32];
static const size_t *kmulti_len;

static void multi_op(void *arg)
{
    const chapoly_kernels *k = arg;
    poly1305_state *st[8];
    const uint8_t *in[8];

    for (int i = 0; i < 8; i++) {
        st[i] = &kst8[i];
        in[i] = kmsg + 256 * i;
    }
    k->poly1305_multi_blocks(k, st, in, kmulti_len, 8);
}

static void kernel_poly_multi_stack(const chapoly_kernels *k)
{
    static const size_t lens[][8] = {
        { 32, 32, 32, 32, 32, 32, 32, 32 },
        { 48, 48, 48, 48, 48, 48, 48, 48 },
        { 256, 256, 256, 256, 256, 256, 256, 256 },
        { 256, 48, 128, 16, 240, 64, 32, 176 },
    };
    char what[96];

    for (size_t c = 0; c < sizeof(lens) / sizeof(lens[0]);
         c++) {
        poly1305_state *st[8];
        const uint8_t *in[8];

        t_rand_bytes(kmsg, sizeof(kmsg));
        nwords = 0;
        for (int i = 0; i < 8; i++) {
            t_rand_bytes(kkeys[i], 32);
            k->poly1305_init(k, &kst8[i], kkeys[i]);
            kref8[i] = kst8[i];
            st[i] = &kref8[i];
            in[i] = kmsg + 256 * i;
            add_poly_words(kkeys[i], NULL);
        }
        k->poly1305_multi_blocks(k, st, in, lens[c], 8); /* off-scan: the states after */
        for (int i = 0; i < 8; i++)
            add_state_words(&kref8[i], "state word (after the call)");
        kmulti_len = lens[c];
        snprintf(what, sizeof(what), "kernel poly1305_multi_blocks, case %zu", c);
        check_op(multi_op, (void *)k, what);
        for (int i = 0; i < 8; i++)
            T_OK(memcmp(kst8[i].priv, kref8[i].priv, 8 * 16) == 0, "%s: state %d", what, i);
    }
    nwords = 0;
}

/* ---- ChaCha20 kernel calls ---- */
static uint32_t ckey[8], ccn[4];
static uint8_t cin[2048], cout[2048], ckb[64], chkey[32], chnonce[16], csub[32];

struct cop {
    const chapoly_kernels *k;
    int which; /* 0 chacha20_xor, 1 chacha20_keyblock_xor, 2 hchacha20, 3 chacha20_multi_blocks,
                  4 the level's one-block row form (row1) */
    size_t len;
    row1_fn row1;
};

static uint32_t cstates[32 * 16];

static void chacha_op(void *arg)
{
    const struct cop *o = arg;

    if (o->which == 0)
        o->k->chacha20_xor(o->k, cout, cin, o->len, ckey, ccn);
    else if (o->which == 1)
        o->k->chacha20_keyblock_xor(o->k, ckb, cout, cin, o->len, ckey, ccn);
    else if (o->which == 3)
        o->k->chacha20_multi_blocks(o->k, cout, cstates, o->len); /* len: blocks */
    else if (o->which == 4)
        o->row1(cout, cin, o->len, ckey, ccn);
    else
        o->k->hchacha20(o->k, csub, chkey, chnonce);
}

/* Reference ChaCha20 rounds (RFC 8439 2.3), in the test: no kernel code. */
#define T_ROTL(v, c) (((v) << (c)) | ((v) >> (32 - (c))))
#define T_QR(a, b, c, d)                                    \
    do {                                                    \
        a += b; d ^= a; d = T_ROTL(d, 16);                  \
        c += d; b ^= c; b = T_ROTL(b, 12);                  \
        a += b; d ^= a; d = T_ROTL(d, 8);                   \
        c += d; b ^= c; b = T_ROTL(b, 7);                   \
    } while (0)

static void ref_rounds(uint32_t x[16])
{
    for (int i = 0; i < 10; i++) {
        T_QR(x[0], x[4], x[8], x[12]);
        T_QR(x[1], x[5], x[9], x[13]);
        T_QR(x[2], x[6], x[10], x[14]);
        T_QR(x[3], x[7], x[11], x[15]);
        T_QR(x[0], x[5], x[10], x[15]);
        T_QR(x[1], x[6], x[11], x[12]);
        T_QR(x[2], x[7], x[8], x[13]);
        T_QR(x[3], x[4], x[9], x[14]);
    }
}

static void ref_init(uint32_t s[16], const uint32_t key[8], uint32_t ctr, const uint32_t n[3])
{
    s[0] = 0x61707865;
    s[1] = 0x3320646e;
    s[2] = 0x79622d32;
    s[3] = 0x6b206574;
    for (int i = 0; i < 8; i++)
        s[4 + i] = key[i];
    s[12] = ctr;
    for (int i = 0; i < 3; i++)
        s[13 + i] = n[i];
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/*
 * Block 'ctr' of (ckey, ccn): its state words after the rounds go on the
 * 32-bit list (index b * 16 + word), its keystream to ks.
 */
static void ref_block_words(uint32_t ctr, int b, uint8_t ks[64])
{
    uint32_t s[16], x[16];

    ref_init(s, ckey, ctr, ccn + 1);
    memcpy(x, s, sizeof(x));
    ref_rounds(x);
    for (int i = 0; i < 16; i++) {
        add_word32_idx(x[i], "ChaCha20 state word before the feed-forward", b * 16 + i);
        uint32_t k = x[i] + s[i];
        for (int j = 0; j < 4; j++)
            ks[4 * i + j] = (uint8_t)(k >> (8 * j));
    }
}

static void chacha_key_words(void)
{
    nwords = 0;
    nwords32 = 0;
    for (int i = 0; i < 8; i++)
        add_word32_idx(ckey[i], "ChaCha20 key word", i);
}

/* Random key, nonce and counter (near the 2^32 wrap one time in four). */
static void chacha_fresh(void)
{
    t_rand_bytes(ckey, sizeof(ckey));
    t_rand_bytes(ccn, sizeof(ccn));
    if ((t_rand64() & 3) == 0)
        ccn[0] = 0xfffffff0u + (uint32_t)t_rand_below(16);
    t_rand_bytes(cin, sizeof(cin));
}

static uint8_t cks[2048 + 64];

/*
 * Blocks ctr0 .. ctr0 + nb - 1 of (ckey, ccn): keystream to cks, words to
 * the lists. Computed before the call: stack_clear zeroes what these frames
 * leave below the caller, so the scan sees only what the kernel leaves.
 */
static void ref_blocks(uint32_t ctr0, size_t nb)
{
    for (size_t b = 0; b < nb; b++)
        ref_block_words(ctr0 + (uint32_t)b, (int)b, cks + 64 * b);
}

static void kernel_chacha_stack(const chapoly_kernels *k)
{
    /*
     * one block (the SIMD levels' scalar fallback), rows, columns, tails;
     * 1024: whole batches only (the avx2 level wipes its own state there
     * instead of scrubbing the frame); 1000 and 2048: a partial and two
     * whole 16-block batches (with GCC 12 either one, added at 580765f,
     * made main leave the EVP cases' key word 3 in r15: see run_scan)
     */
    static const size_t lens[] = { 1, 63, 64, 65, 200, 600, 1000, 1024, 2000, 2048 };
    static const size_t kblens[] = { 0, 1, 63, 64, 65, 200, 600, 1984 };
    char what[96];

    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t len = lens[i];
        struct cop o = { k, 0, len, NULL };
        int ok = 1;

        chacha_fresh();
        chacha_key_words();
        ref_blocks(ccn[0], (len + 63) / 64);
        snprintf(what, sizeof(what), "kernel chacha20_xor, %zu bytes", len);
        check_op(chacha_op, &o, what);
        for (size_t j = 0; j < len; j++)
            ok &= cout[j] == (cin[j] ^ cks[j]);
        T_OK(ok, "%s: output differs from the reference", what);
    }
    /* the key block and 0.. blocks after it, as the AEAD calls it */
    for (size_t i = 0; i < sizeof(kblens) / sizeof(kblens[0]); i++) {
        size_t len = kblens[i];
        struct cop o = { k, 1, len, NULL };
        int ok = 1;

        chacha_fresh();
        chacha_key_words();
        ref_blocks(ccn[0], 1 + (len + 63) / 64);
        snprintf(what, sizeof(what), "kernel chacha20_keyblock_xor, %zu bytes", len);
        check_op(chacha_op, &o, what);
        ok &= memcmp(ckb, cks, 64) == 0;
        for (size_t j = 0; j < len; j++)
            ok &= cout[j] == (cin[j] ^ cks[64 + j]);
        T_OK(ok, "%s: output differs from the reference", what);
    }
    /* n blocks of (ckey, ccn) from their input states: every shape of the batch kernels */
    static const size_t mbns[] = { 1, 2, 3, 4, 5, 8, 16, 20, 32 };
    for (size_t i = 0; i < sizeof(mbns) / sizeof(mbns[0]); i++) {
        size_t nb = mbns[i];
        struct cop o = { k, 3, nb, NULL };

        chacha_fresh();
        chacha_key_words();
        ref_blocks(ccn[0], nb);
        for (size_t b = 0; b < nb; b++)
            ref_init(cstates + 16 * b, ckey, ccn[0] + (uint32_t)b, ccn + 1);
        snprintf(what, sizeof(what), "kernel chacha20_multi_blocks, %zu blocks", nb);
        check_op(chacha_op, &o, what);
        T_OK(memcmp(cout, cks, 64 * nb) == 0, "%s: output differs from the reference", what);
    }
    memset(cstates, 0, sizeof(cstates));
    /*
     * The level's one-block row form (row1_forms.h; not a table entry yet):
     * it keeps the state in xmm registers and scrubs nothing, so nothing of
     * it may be on the stack.
     */
    static const size_t row1lens[] = { 0, 1, 5, 16, 17, 31, 32, 33, 48, 63, 64 };
    const struct row1_form *f = row1_form_for(k->name);
    for (size_t i = 0; f != NULL && i < sizeof(row1lens) / sizeof(row1lens[0]); i++) {
        size_t len = row1lens[i];
        struct cop o = { k, 4, len, f->fn };
        int ok = 1;

        chacha_fresh();
        chacha_key_words();
        ref_blocks(ccn[0], 1);
        snprintf(what, sizeof(what), "kernel %s, %zu bytes", f->name, len);
        check_op(chacha_op, &o, what);
        for (size_t j = 0; j < len; j++)
            ok &= cout[j] == (cin[j] ^ cks[j]);
        T_OK(ok, "%s: output differs from the reference", what);
    }
    for (int rep = 0; rep < 4; rep++) {
        struct cop o = { k, 2, 0, NULL };
        uint32_t x[16], kw[8], n[4], sub[8];

        t_rand_bytes(chkey, sizeof(chkey));
        t_rand_bytes(chnonce, sizeof(chnonce));
        nwords = 0;
        nwords32 = 0;
        for (int i = 0; i < 8; i++) {
            kw[i] = le32(chkey + 4 * i);
            add_word32_idx(kw[i], "HChaCha20 key word", i);
        }
        for (int i = 0; i < 4; i++)
            n[i] = le32(chnonce + 4 * i);
        ref_init(x, kw, n[0], n + 1);
        ref_rounds(x);
        /* all 16 words: the rounds are invertible, any full state is the key */
        for (int i = 0; i < 16; i++)
            add_word32_idx(x[i], (i < 4 || i >= 12) ? "HChaCha20 subkey word"
                                                    : "HChaCha20 state word after the rounds", i);
        snprintf(what, sizeof(what), "kernel hchacha20 (%d)", rep);
        check_op(chacha_op, &o, what);
        for (int i = 0; i < 4; i++) {
            sub[i] = x[i];
            sub[4 + i] = x[12 + i];
        }
        for (int i = 0; i < 8; i++)
            T_OK(le32(csub + 4 * i) == sub[i], "hchacha20 subkey word %d", i);
    }
    nwords = 0;
    nwords32 = 0;
}

/* ---- aead_xor_hash_range over whole kilobytes, from every state form ---- */
#define XH_MAX (16 * 1024)
/* a kilobyte of room before each: sealing, the pre bytes are the ciphertext just before out */
static uint8_t xin_b[1024 + XH_MAX], xout_b[1024 + XH_MAX], xref_b[1024 + XH_MAX];
static uint8_t xpre[1024], xtag[16];
#define xin (xin_b + 1024)
#define xout (xout_b + 1024)
#define xref (xref_b + 1024)
static _Alignas(64) poly1305_state xst, xsnap[2];

struct xop {
    const chapoly_kernels *k;
    size_t len;
    const uint8_t *pre;
    int enc;
};

static void xor_hash_op(void *arg)
{
    const struct xop *o = arg;

    o->k->aead_xor_hash_range(o->k, xout, xin, o->len, o->pre != NULL ? sizeof(xpre) : 0, o->len,
                              ckey, ccn, &xst, o->enc);
}

/*
 * Every value one block's rounds produce, in order: per quarter round the
 * four sums and the four XORs before and after their rotations (12).
 */
#define ROUND_VALUES (10 * 8 * 12)
static uint32_t rvals[16][ROUND_VALUES];

static void ref_round_values(uint32_t ctr, uint32_t v[ROUND_VALUES])
{
    static const int q[8][4] = { { 0, 4, 8, 12 }, { 1, 5, 9, 13 }, { 2, 6, 10, 14 },
                                 { 3, 7, 11, 15 }, { 0, 5, 10, 15 }, { 1, 6, 11, 12 },
                                 { 2, 7, 8, 13 }, { 3, 4, 9, 14 } };
    static const int rot[4] = { 16, 12, 8, 7 };
    uint32_t x[16], y[16];
    size_t n = 0;

    ref_init(x, ckey, ctr, ccn + 1);
    memcpy(y, x, sizeof(y));
    for (int r = 0; r < 10; r++)
        for (int i = 0; i < 8; i++)
            for (int h = 0; h < 4; h++) {
                /* steps a += b, d ^= a; c += d, b ^= c (twice): s += t, z ^= s, z <<<= rot */
                uint32_t *s = &x[q[i][h & 1 ? 2 : 0]], *t = &x[q[i][h & 1 ? 3 : 1]];
                uint32_t *z = &x[q[i][h & 1 ? 1 : 3]];

                *s += *t;
                v[n++] = *s;
                *z ^= *s;
                v[n++] = *z;
                *z = T_ROTL(*z, rot[h]);
                v[n++] = *z;
            }
    ref_rounds(y);
    if (memcmp(x, y, sizeof(x)) != 0)
        T_OK(0, "ref_round_values: rounds differ from ref_rounds");
}

/*
 * The rounds of the batch of 16 blocks from counter ctr0, as the 16-lane
 * kernels hold them: a vector of one value for blocks ctr0 .. ctr0 + 15,
 * so any two neighbouring lanes make a 64-bit word of the list.
 */
static void chacha_round_pair_words(uint32_t ctr0)
{
    for (int b = 0; b < 16; b++)
        ref_round_values(ctr0 + (uint32_t)b, rvals[b]);
    for (int b = 0; b + 1 < 16; b++)
        for (int i = 0; i < ROUND_VALUES; i++)
            add_word_idx(rvals[b][i] | (uint64_t)rvals[b + 1][i] << 32,
                         "ChaCha20 round value (two lanes)", i);
}

/*
 * The hash inside the call, batch by batch: the level's blocks() stepped 16
 * blocks at a time over what the call hashes, from the state before it;
 * the words each step changes are listed. The stitched kernel steps its
 * lanes as the MAC kernel's 16-lane path does, so from pending lanes these
 * are the very values it holds between its steps (from a scalar hash the
 * lanes start in another representation and only some match).
 */
static void xor_hash_step_words(const chapoly_kernels *k, const uint8_t *pre,
                                const uint8_t *hashed, size_t len)
{
    _Alignas(64) poly1305_state r = xsnap[0], prev;

    for (size_t off = pre != NULL ? 0 : 1024; off < 1024 + len; off += 256) {
        prev = r;
        k->poly1305_blocks(k, &r, off < 1024 ? pre + off : hashed + off - 1024, 256, 1);
        for (int i = 0; i < POLY1305_PRIV_WORDS; i++)
            if (r.priv[i] != prev.priv[i] && (r.priv[i] >> 40) != 0)
                add_word_idx(r.priv[i], "hash lane word within the call", i);
    }
}

/*
 * The table's aead_xor_hash_range at 1, 2, 4 and 16 KiB,
 * sealing with and without the kilobyte of earlier ciphertext (pre; an
 * open takes none) and opening, from a Poly1305 state in each form: blocks
 * hashed before it, 1 (scalar, no key powers yet), 24 (8 pending lanes)
 * and 48 (16 pending lanes) at the IFMA level, whose thresholds are 18 and
 * 40 blocks. Listed: the ChaCha20 key words and the state words before the
 * feed-forward of the first and the last kilobyte (32-bit); the Poly1305
 * key words, the accumulator at the tag, every wide word of the state
 * before and after the call (lanes, key powers), the lanes after each
 * batch of 16 blocks, and every round value of the last two ChaCha20
 * batches, lane pairs (64-bit).
 *
 * With GCC 12 the stitched loop spills hash lanes to its frame; an open
 * leaves them there when its scrub is cut to 512 bytes or less (found: the
 * lanes' top limb). A seal does not: the MAC kernel call that follows at
 * the same depth zeroes 1 KiB below its stack pointer. No round value or
 * key word was found there even without the scrub.
 */
static void kernel_xor_hash_stack(const chapoly_kernels *k)
{
    static const size_t kibs[] = { 1, 2, 4, 16 };
    static const size_t pres[] = { 1, 24, 48 };
    const chapoly_kernels *P = chapoly_kernels_by_name("portable");
    char what[128];

    if (P == NULL)
        return;
    for (size_t ki = 0; ki < sizeof(kibs) / sizeof(kibs[0]); ki++)
        for (size_t pi = 0; pi < sizeof(pres) / sizeof(pres[0]); pi++)
            for (int mode = 0; mode < 3; mode++) { /* seal, seal after pre, open */
                size_t len = 1024 * kibs[ki], nb = len / 64;
                int enc = mode < 2;
                const uint8_t *pre = mode == 1 ? xpre : NULL;
                struct xop o = { k, len, pre, enc };
                _Alignas(64) poly1305_state r;
                uint8_t tag[16], rtag[16];

                t_rand_bytes(ckey, sizeof(ckey));
                t_rand_bytes(ccn, sizeof(ccn));
                ccn[0] = (uint32_t)t_rand64() & 0xffff; /* no 2^32 wrap: the AEAD never has one */
                t_rand_bytes(xin, len);
                t_rand_bytes(xpre, sizeof(xpre));
                t_rand_bytes(kkey, sizeof(kkey));
                t_rand_bytes(kmsg, sizeof(kmsg));

                /* off-scan: the states before and after, the tag, and the reference */
                k->poly1305_init(k, &xsnap[0], kkey);
                k->poly1305_blocks(k, &xsnap[0], kmsg, 16 * pres[pi], 1);
                xsnap[1] = xsnap[0];
                memcpy(xref - sizeof(xpre), xpre, sizeof(xpre));
                memcpy(xout - sizeof(xpre), xpre, sizeof(xpre));
                k->aead_xor_hash_range(k, xref, xin, len, pre != NULL ? sizeof(xpre) : 0, len, ckey,
                                       ccn, &xsnap[1], enc);
                r = xsnap[1];
                k->poly1305_final(k, &r, tag);
                P->chacha20_xor(P, xref, xin, len, ckey, ccn);
                P->poly1305_init(P, &r, kkey);
                P->poly1305_blocks(P, &r, kmsg, 16 * pres[pi], 1);
                if (pre != NULL)
                    P->poly1305_blocks(P, &r, xpre, sizeof(xpre), 1);
                P->poly1305_blocks(P, &r, enc ? xref : xin, len, 1);
                P->poly1305_final(P, &r, rtag);
                T_EQ_MEM(tag, rtag, 16, "aead_xor_hash_range tag, %zu KiB, mode %d, %zu blocks before",
                         kibs[ki], mode, pres[pi]);

                kernel_words(tag, &xsnap[0], &xsnap[1]);
                xor_hash_step_words(k, pre, enc ? xref : xin, len);
                /* the last two batches: the last to spill to each slot of either kind */
                for (size_t b = nb > 16 ? nb - 32 : 0; b < nb; b += 16)
                    chacha_round_pair_words(ccn[0] + (uint32_t)b);
                nwords32 = 0;
                for (int i = 0; i < 8; i++)
                    add_word32_idx(ckey[i], "ChaCha20 key word", i);
                for (size_t b = 0; b < 16; b++) {
                    uint8_t ks[64];
                    ref_block_words(ccn[0] + (uint32_t)b, (int)b, ks);
                    if (nb > 16)
                        ref_block_words(ccn[0] + (uint32_t)(nb - 16 + b), (int)(nb - 16 + b), ks);
                }
                xst = xsnap[0];
                snprintf(what, sizeof(what),
                         "kernel aead_xor_hash_range, %s%s, %zu KiB, %zu blocks before",
                         enc ? "seal" : "open", pre != NULL ? " after pre" : "", kibs[ki],
                         pres[pi]);
                check_op(xor_hash_op, &o, what);
                T_EQ_MEM(xout, xref, len, "%s: output", what);
                k->poly1305_final(k, &xst, xtag);
                T_EQ_MEM(xtag, tag, 16, "%s: tag", what);
            }
    nwords = 0;
    nwords32 = 0;
}

/* ---- aead_xor_hash_range and aead_first_xor_hash calls ---- */
#define RH_MAX 3136
static uint8_t rbuf[1024 + RH_MAX], rout[RH_MAX], rref[1024 + RH_MAX], raad[70];
static _Alignas(64) poly1305_state rsnap[2];

struct rop {
    const chapoly_kernels *k;
    int first;
    uint8_t *out;
    const uint8_t *in;
    size_t len, pre, hash_len, aadlen;
    int enc;
};

/* The table's entry: the level's kernel or the generic composition (generic.c). */
static void range_op(void *arg)
{
    const struct rop *o = arg;

    if (o->first)
        o->k->aead_first_xor_hash(o->k, o->out, o->in, o->len, o->hash_len, raad, o->aadlen, ckey,
                                  ccn, &xst, o->enc);
    else
        o->k->aead_xor_hash_range(o->k, o->out, o->in, o->len, o->pre, o->hash_len, ckey, ccn, &xst,
                                  o->enc);
}

/*
 * The words of one call over nblocks ChaCha20 blocks from ccn[0] with len
 * bytes of them used (first: block 0 is the key block): the key words, the
 * state before the feed-forward of the first and the last 16 blocks and
 * the keystream past len (32-bit); the round values of those blocks (lane
 * pairs), and the hash after each block of the hashed run stepped one
 * block at a time through the level's blocks() from the state before
 * (64-bit; from a scalar state these are the kernel's own chain values).
 */
static void range_words(const chapoly_kernels *k, const poly1305_state *before,
                        const uint8_t *hashed, size_t hash_blocks, size_t nblocks, size_t used)
{
    _Alignas(64) poly1305_state r, prev;

    if (before != NULL) {
        r = *before;
        for (size_t b = 0; b < hash_blocks; b++) {
            prev = r;
            k->poly1305_blocks(k, &r, hashed + 16 * b, 16, 1);
            for (int i = 0; i < POLY1305_PRIV_WORDS; i++)
                if (r.priv[i] != prev.priv[i] && (r.priv[i] >> 40) != 0)
                    add_word_idx(r.priv[i], "hash word within the call", i);
        }
    }
    chacha_round_pair_words(ccn[0]);
    if (nblocks > 16)
        chacha_round_pair_words(ccn[0] + (uint32_t)(nblocks - 16));
    nwords32 = 0;
    for (int i = 0; i < 8; i++)
        add_word32_idx(ckey[i], "ChaCha20 key word", i);
    /* the batches (8 blocks) the call runs: the last is whole even when the text is not */
    size_t nb8 = (nblocks + 7) & ~(size_t)7;
    for (size_t b = 0; b < nb8; b++) {
        uint8_t ks[64];

        if (b >= 16 && b + 16 < nb8)
            continue;
        ref_block_words(ccn[0] + (uint32_t)b, (int)b, ks);
        for (size_t w = 0; w < 16; w++)
            if (64 * b + 4 * w >= used)
                add_word32_idx(le32(ks + 4 * w), "keystream word past the text", (int)(16 * b + w));
    }
}

/*
 * aead_xor_hash_range over 0..3136 bytes around the 512-byte batches, pre
 * 0, 16, 512 and 1024 bytes of ciphertext before the text, sealing in
 * place and opening (in place with pre 0, else to another buffer), from a
 * Poly1305 state in each form (1, 24, 48 blocks hashed before: scalar, 8
 * and 16 pending lanes at the IFMA level); hash_len the text's whole
 * 64-byte blocks (as the AEAD core) or whole 16-byte blocks.
 */
static void kernel_range_stack(const chapoly_kernels *k)
{
    static const size_t lens[] = { 0, 16, 64, 447, 511, 512, 513, 1000, 1024, 1040,
                                   1535, 1536, 2048, 2100, 2560, 3072, 3136 };
    static const size_t pres[] = { 0, 16, 512, 1024 };
    static const size_t befores[] = { 1, 24, 48 };
    const chapoly_kernels *P = chapoly_kernels_by_name("portable");
    char what[160];
    size_t n = 0;

    if (P == NULL)
        return;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
        for (size_t pi = 0; pi < sizeof(pres) / sizeof(pres[0]); pi++)
            for (int enc = 1; enc >= 0; enc--, n++) {
                size_t len = lens[li], pre = pres[pi], bb = befores[n % 3];
                size_t hash_len = len & ~(size_t)((n & 1) ? 15 : 63);
                uint8_t *base = rbuf + 1024;
                uint8_t *out = (enc || pre == 0) ? base : rout;
                struct rop o = { k, 0, out, base, len, pre, hash_len, 0, enc };
                _Alignas(64) poly1305_state r;
                uint8_t tag[16], rtag[16];

                t_rand_bytes(ckey, sizeof(ckey));
                t_rand_bytes(ccn, sizeof(ccn));
                ccn[0] = (uint32_t)t_rand64() & 0xffff; /* the AEAD has no 2^32 wrap */
                t_rand_bytes(rbuf, sizeof(rbuf));
                t_rand_bytes(kkey, sizeof(kkey));
                t_rand_bytes(kmsg, sizeof(kmsg));

                /* the reference: portable ChaCha20 and Poly1305 in the order the entry describes */
                memcpy(rref, rbuf, sizeof(rref));
                P->chacha20_xor(P, rref + 1024, rref + 1024, len, ckey, ccn);
                P->poly1305_init(P, &r, kkey);
                P->poly1305_blocks(P, &r, kmsg, 16 * bb, 1);
                if (pre + hash_len > 0)
                    P->poly1305_blocks(P, &r, (enc ? rref : rbuf) + 1024 - pre, pre + hash_len, 1);
                P->poly1305_final(P, &r, rtag);
                /* off-scan: the level's states before and after, its tag */
                k->poly1305_init(k, &rsnap[0], kkey);
                k->poly1305_blocks(k, &rsnap[0], kmsg, 16 * bb, 1);
                r = rsnap[0];
                k->poly1305_blocks(k, &r, (enc ? rref : rbuf) + 1024 - pre, pre + hash_len, 1);
                rsnap[1] = r;
                k->poly1305_final(k, &r, tag);
                T_EQ_MEM(tag, rtag, 16, "aead_xor_hash_range reference tag, %zu bytes", len);

                kernel_words(tag, &rsnap[0], &rsnap[1]);
                range_words(k, &rsnap[0], (enc ? rref : rbuf) + 1024 - pre, (pre + hash_len) / 16,
                            (len + 63) / 64, len);
                xst = rsnap[0];
                snprintf(what, sizeof(what),
                         "kernel aead_xor_hash_range, %s%s, %zu bytes, pre %zu, hash %zu, "
                         "%zu blocks before",
                         enc ? "seal" : "open", out == base ? " in place" : "", len, pre,
                         hash_len, bb);
                check_op(range_op, &o, what);
                T_EQ_MEM(out, rref + 1024, len, "%s: output", what);
                k->poly1305_final(k, &xst, xtag);
                T_EQ_MEM(xtag, rtag, 16, "%s: tag", what);
            }
    nwords = 0;
    nwords32 = 0;
}

/*
 * aead_first_xor_hash over 449..3136 bytes with 0 and 70 bytes of AAD
 * (whole blocks and a padded partial one), sealing in place and opening
 * to another buffer, hash_len the whole 64-byte blocks (the AEAD core)
 * or 448. Listed besides: the Poly1305 key (block ctr_nonce[0]) words.
 */
static void kernel_first_stack(const chapoly_kernels *k)
{
    static const size_t lens[] = { 449, 464, 511, 512, 513, 960, 961, 1024, 1350,
                                   1536, 2048, 2500, 3072, 3136 };
    static const size_t aadlens[] = { 0, 70 };
    const chapoly_kernels *P = chapoly_kernels_by_name("portable");
    char what[160];
    size_t n = 0;

    if (P == NULL)
        return;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
        for (size_t ai = 0; ai < 2; ai++)
            for (int enc = 1; enc >= 0; enc--, n++) {
                size_t len = lens[li], aadlen = aadlens[ai];
                size_t hash_len = (n % 4 == 3) ? 448 : len & ~(size_t)63;
                uint8_t *base = rbuf + 1024;
                uint8_t *out = enc ? base : rout;
                struct rop o = { k, 1, out, base, len, 0, hash_len, aadlen, enc };
                _Alignas(64) poly1305_state r;
                uint8_t tag[16], otk[64], pad[16] = { 0 };

                t_rand_bytes(ckey, sizeof(ckey));
                t_rand_bytes(ccn, sizeof(ccn));
                ccn[0] = (uint32_t)t_rand64() & 0xffff;
                t_rand_bytes(rbuf, sizeof(rbuf));
                t_rand_bytes(raad, sizeof(raad));

                /* the reference: portable key block, AAD padded, text, hash */
                memset(otk, 0, sizeof(otk));
                P->chacha20_xor(P, otk, otk, 64, ckey, ccn);
                memcpy(rref, rbuf, sizeof(rref));
                ccn[0]++;
                P->chacha20_xor(P, rref + 1024, rref + 1024, len, ckey, ccn);
                ccn[0]--;
                P->poly1305_init(P, &r, otk);
                if (aadlen >= 16)
                    P->poly1305_blocks(P, &r, raad, aadlen & ~(size_t)15, 1);
                if (aadlen % 16 != 0) {
                    memcpy(pad, raad + (aadlen & ~(size_t)15), aadlen % 16);
                    P->poly1305_blocks(P, &r, pad, 16, 1);
                }
                P->poly1305_blocks(P, &r, (enc ? rref : rbuf) + 1024, hash_len, 1);
                P->poly1305_final(P, &r, tag);
                /* off-scan: the level's state after */
                k->poly1305_init(k, &rsnap[1], otk);
                if (aadlen >= 16)
                    k->poly1305_blocks(k, &rsnap[1], raad, aadlen & ~(size_t)15, 1);
                if (aadlen % 16 != 0)
                    k->poly1305_blocks(k, &rsnap[1], pad, 16, 1);
                rsnap[0] = rsnap[1];
                k->poly1305_blocks(k, &rsnap[1], (enc ? rref : rbuf) + 1024, hash_len, 1);

                memcpy(kkey, otk, 32);
                kernel_words(tag, NULL, &rsnap[1]);
                add_state_words(&rsnap[0], "state word (after the AAD)");
                range_words(k, &rsnap[0], (enc ? rref : rbuf) + 1024, hash_len / 16,
                            1 + (len + 63) / 64, 64 + len);
                for (int w = 8; w < 16; w++) /* the key block's unused half */
                    add_word32_idx(le32(otk + 4 * w), "key block word", w);
                memset(&xst, 0xa5, sizeof(xst)); /* needs no init */
                snprintf(what, sizeof(what),
                         "kernel aead_first_xor_hash, %s, %zu bytes, AAD %zu, hash %zu",
                         enc ? "seal in place" : "open", len, aadlen, hash_len);
                check_op(range_op, &o, what);
                T_EQ_MEM(out, rref + 1024, len, "%s: output", what);
                k->poly1305_final(k, &xst, xtag);
                T_EQ_MEM(xtag, tag, 16, "%s: tag", what);
                chapoly_wipe(otk, sizeof(otk));
            }
    nwords = 0;
    nwords32 = 0;
}

/* ---- EVP calls ---- */
static EVP_MAC_CTX *smac;
static EVP_CIPHER_CTX *saead;
static uint8_t ekey[32], eiv[12], emsg[16384 + 13], eout[16384 + 16], etag[16];
static size_t emsglen;

struct eop {
    int which;
    int ok;
};

static void evp_mac_op(void *arg)
{
    struct eop *o = arg;
    size_t ol;

    if (o->which == 0)
        o->ok = EVP_MAC_init(smac, ekey, 32, NULL);
    else if (o->which == 1)
        o->ok = EVP_MAC_update(smac, emsg, emsglen);
    else
        o->ok = EVP_MAC_final(smac, etag, &ol, 16);
}

static void evp_mac_stack(void)
{
    static const size_t lens[] = { 37, 64, 300, 1000, 2048 };
    EVP_MAC *m = t_mac("POLY1305", 1);
    uint8_t tag[16];
    char what[96];

    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t ol;

        t_rand_bytes(ekey, sizeof(ekey));
        t_rand_bytes(emsg, sizeof(emsg));
        emsglen = lens[i];
        smac = EVP_MAC_CTX_new(m);
        T_OK(EVP_MAC_init(smac, ekey, 32, NULL) && EVP_MAC_update(smac, emsg, emsglen) &&
             EVP_MAC_final(smac, tag, &ol, 16), "POLY1305 reference tag");
        nwords = 0;
        add_poly_words(ekey, tag);
        for (int which = 0; which < 3; which++) {
            struct eop o = { which, 0 };
            snprintf(what, sizeof(what), "EVP POLY1305 %s, %zu bytes",
                     which == 0 ? "init" : which == 1 ? "update" : "final", emsglen);
            check_op(evp_mac_op, &o, what);
            T_OK(o.ok, "%s failed", what);
        }
        T_EQ_MEM(etag, tag, 16, "POLY1305 tag, %zu bytes", emsglen);
        EVP_MAC_CTX_free(smac);
    }
    EVP_MAC_free(m);
}

static void evp_aead_op(void *arg)
{
    struct eop *o = arg;
    int ol;

    switch (o->which) {
    case 0: /* seal: init, AAD, text, final, tag */
        o->ok = EVP_EncryptInit_ex(saead, NULL, NULL, ekey, eiv) &&
                EVP_EncryptUpdate(saead, NULL, &ol, emsg, 13) &&
                EVP_EncryptUpdate(saead, eout, &ol, emsg + 13, (int)emsglen) &&
                EVP_EncryptFinal_ex(saead, eout + ol, &ol) &&
                EVP_CIPHER_CTX_ctrl(saead, EVP_CTRL_AEAD_GET_TAG, 16, etag) > 0;
        break;
    default: /* open */
        o->ok = EVP_DecryptInit_ex(saead, NULL, NULL, ekey, eiv) &&
                EVP_DecryptUpdate(saead, NULL, &ol, emsg, 13) &&
                EVP_DecryptUpdate(saead, eout, &ol, eout, (int)emsglen) &&
                EVP_CIPHER_CTX_ctrl(saead, EVP_CTRL_AEAD_SET_TAG, 16, etag) > 0 &&
                EVP_DecryptFinal_ex(saead, eout + ol, &ol);
        break;
    }
}

static void evp_aead_stack(void)
{
    /* from 3 KiB on, whole kilobytes after the first batch take the stitched kernel */
    static const size_t lens[] = { 0, 40, 150, 1000, 2000, 4096, 16384 };
    EVP_CIPHER *c = t_cipher("ChaCha20-Poly1305", 1);
    char what[96];

    /*
     * Warm-up, unscanned: the first call of a function through the PLT
     * goes through the dynamic linker's lazy binding, which saves every
     * register (stale values of this program included) on the stack.
     */
    {
        struct eop o = { 0, 0 };
        saead = EVP_CIPHER_CTX_new();
        T_OK(EVP_EncryptInit_ex(saead, c, NULL, NULL, NULL), "AEAD ctx");
        emsglen = 40;
        evp_aead_op(&o);
        o.which = 1;
        evp_aead_op(&o);
        T_OK(o.ok, "AEAD warm-up round trip");
        EVP_CIPHER_CTX_free(saead);
    }
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        uint8_t otk[32];

        t_rand_bytes(ekey, sizeof(ekey));
        t_rand_bytes(eiv, sizeof(eiv));
        t_rand_bytes(emsg, sizeof(emsg));
        emsglen = lens[i];
        block_of(ekey, eiv, 0, otk);
        saead = EVP_CIPHER_CTX_new();
        T_OK(EVP_EncryptInit_ex(saead, c, NULL, NULL, NULL), "AEAD ctx");
        nwords = 0;
        add_poly_words(otk, NULL);
        for (int w = 0; w < 32; w += 8)
            add_word(le64(ekey + w), "ChaCha20 key word pair");
        nwords32 = 0;
        for (int w = 0; w < 32; w += 4)
            add_word32_idx(le32(ekey + w), "ChaCha20 key word", w / 4);

        struct eop o = { 0, 0 };
        snprintf(what, sizeof(what), "EVP ChaCha20-Poly1305 seal, %zu bytes", emsglen);
        check_op(evp_aead_op, &o, what);
        T_OK(o.ok, "%s failed", what);
        /* the tag is known now: look for the accumulator too */
        add_poly_words(otk, etag);
        o.which = 1;
        snprintf(what, sizeof(what), "EVP ChaCha20-Poly1305 open, %zu bytes", emsglen);
        check_op(evp_aead_op, &o, what);
        T_OK(o.ok, "%s failed", what);
        T_EQ_MEM(eout, emsg + 13, emsglen, "AEAD round trip, %zu bytes", emsglen);
        EVP_CIPHER_CTX_free(saead);
    }
    EVP_CIPHER_free(c);
}

#if defined(__SANITIZE_ADDRESS__)
#define T_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN 1
#endif
#endif

static void stack_tests(void)
{
#ifdef T_ASAN
    /*
     * Instrumented frames are laid out differently (redzones around locals,
     * a frame pointer, more spills): the kernels size their scrubs for the
     * optimised, uninstrumented build, which is where this scan counts.
     */
    printf("dead-stack scans skipped: ASan build\n");
    return;
#endif
    /* The method must see a word a returned frame left behind. */
    planted = t_rand64() | 1;
    nwords = 0;
    add_word(planted, "planted word");
    stack_clear();
    call_deep(plant_op, NULL);
    T_OK(stack_scan() != NULL, "self-check: the stack scan missed a planted word");
    stack_clear();
    planted32 = (uint32_t)t_rand64() | 0x01010101u;
    nwords = 0;
    nwords32 = 0;
    add_word32_idx(planted32, "planted 32-bit word", -1);
    stack_clear();
    call_deep(plant32_op, NULL);
    T_OK(stack_scan() != NULL, "self-check: the stack scan missed a planted 32-bit word");
    nwords32 = 0;
    stack_clear(); /* the planted words must not be found again by a later scan */
#ifdef T_CALL_REGS
    /* The test's own words left in callee-saved registers do not count. */
    planted = t_rand64() | 1;
    nwords = 0;
    add_word(planted, "word planted in the callee-saved registers");
    keep_callee_saved = 1;
    T_OK(scan_with_planted_regs(planted) != NULL,
         "self-check: a word planted in the callee-saved registers did not reach the op");
    keep_callee_saved = 0;
    T_OK(scan_with_planted_regs(planted) == NULL,
         "self-check: a word the test leaves in a callee-saved register reaches the dead stack");
    nwords = 0;
#endif

    const chapoly_kernels *k = chapoly_kernels_by_name(t_kernel());
    T_OK(k != NULL, "kernel table %s", t_kernel());
    if (k != NULL) {
        kernel_poly_stack(k);
        kernel_poly_multi_stack(k);
        kernel_chacha_stack(k);
        kernel_xor_hash_stack(k);
        kernel_range_stack(k);
        kernel_first_stack(k);
    }
    evp_mac_stack();
    evp_aead_stack();
    nwords = 0;
    printf("%lu dead-stack scans\n", stack_scans);
}

int main(void)
{
    if (!CRYPTO_set_mem_functions(h_malloc, h_realloc, h_free)) {
        fprintf(stderr, "CRYPTO_set_mem_functions failed (allocation happened already?)\n");
        return 1;
    }
    t_setup();
    /* The scanner must see a leak when one exists. */
    {
        uint8_t k[32];
        t_rand_bytes(k, 32);
        nsecrets = 0;
        add_secret(k);
        uint8_t *p = OPENSSL_malloc(64);
        memcpy(p + 5, k, 32);
        unsigned long before = leaks;
        OPENSSL_free(p);
        T_OK(leaks == before + 1, "self-check: the scanner missed a planted key");
    }
    for (int finish = 0; finish < 2; finish++)
        for (int dup = 0; dup < 2; dup++)
            for (int rekey = 0; rekey < 2; rekey++) {
                aead_run("ChaCha20-Poly1305", 12, finish, dup, rekey);
                aead_run("XChaCha20-Poly1305", 24, finish, dup, rekey);
            }
    chacha_run(0);
    chacha_run(1);
    mac_run(0);
    mac_run(1);
    stack_tests();
    printf("%lu freed blocks scanned\n", frees_scanned);
    nsecrets = 0;
    t_teardown();
    return t_finish("test_secrets");
}
