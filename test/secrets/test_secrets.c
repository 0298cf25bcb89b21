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
 * aead_first_xor_hash (0..3136 bytes, AAD 0 and 70), the level's entry
 * or, where it has none, the composition in generic.c: the words
 * above, the hash after each block and the keystream past the text.
 */
#include "test_secrets.h"

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
#define T_ASAN "ASan"
#elif defined(__SANITIZE_THREAD__)
#define T_ASAN "ThreadSanitizer"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_ASAN "ASan"
#elif __has_feature(thread_sanitizer)
#define T_ASAN "ThreadSanitizer"
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
    printf("dead-stack scans skipped: %s build\n", T_ASAN);
    return;
#endif
    /* The method must see a word a returned frame left behind. */
    planted = t_rand64() | 1;
    nwords = 0;
    add_word(planted, "planted word");
    words_sort();
    stack_clear();
    call_deep(plant_op, NULL);
    T_OK(stack_scan() != NULL, "self-check: the stack scan missed a planted word");
    stack_clear();
    call_deep(plant_le_op, NULL);
    T_OK(stack_scan() != NULL,
         "self-check: the stack scan missed a planted word stored as little-endian bytes");
    stack_clear();
    planted32 = (uint32_t)t_rand64() | 0x01010101u;
    nwords = 0;
    nwords32 = 0;
    add_word32_idx(planted32, "planted 32-bit word", -1);
    words_sort();
    stack_clear();
    call_deep(plant32_op, NULL);
    T_OK(stack_scan() != NULL,
         "self-check: the stack scan missed a planted 32-bit word stored as little-endian bytes");
    stack_clear();
    call_deep(plant32_native_op, NULL);
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
        kernel_multi_hash_stack(k);
        kernel_chacha_stack(k);
        {
            /* the ChaCha20 batch pairs the other way from this CPU's profile */
            chapoly_kernels t;

            chapoly_kernels_build(&t, k->name,
                                  k->shapes.chacha_pairs_min != 0 ? "chacha-pairs=0"
                                                                  : "chacha-pairs=1024",
                                  NULL, NULL);
            kernel_chacha_stack(&t);
        }
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
