/*
 * Secrets are wiped: every block freed through OpenSSL's allocator (the
 * provider allocates its contexts there) is scanned for the key, the
 * XChaCha subkey, the Poly1305 one-time key and the plaintext before it is
 * released. Contexts are freed after complete messages, in mid-message,
 * after re-keying and after dup, for every algorithm.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "test_common.h"

#define NSECRETS 8
static uint8_t secrets[NSECRETS][32];
static size_t nsecrets;
static unsigned long leaks, frees_scanned;

/* Any 12-byte window of a secret found in a freed block counts as a leak. */
static void scan(const uint8_t *p, size_t n)
{
    frees_scanned++;
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

/* Poly1305 one-time key of (key, nonce): ChaCha20 block 0 from the default provider. */
static void otk_of(const uint8_t key[32], const uint8_t nonce[12], uint8_t otk[32])
{
    EVP_CIPHER *c = t_cipher("ChaCha20", 0);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t iv[16] = { 0 }, zero[32] = { 0 };
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
        uint8_t otk[32];
        otk_of(key, iv, otk);
        add_secret(otk);
    }
    T_OK(EVP_EncryptInit_ex(x, c, NULL, key, iv), "%s init", name);
    T_OK(EVP_EncryptUpdate(x, NULL, &ol, pt, 13), "%s aad", name);
    T_OK(EVP_EncryptUpdate(x, ct, &ol, pt, 150), "%s update", name);
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
    printf("%lu freed blocks scanned\n", frees_scanned);
    nsecrets = 0;
    t_teardown();
    return t_finish("test_secrets");
}
