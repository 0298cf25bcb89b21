/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OpenSSL 3.5 cipher pipeline API (EVP_CipherPipeline*) on chapoly's
 * AEADs, its memory, at the kernel level CHAPOLY_KERNEL names (libcrypto's
 * allocator replaced, so every block the pipeline allocates and frees is
 * seen): a pipeline init of 1, 16, 32 pipes is one allocation (32: at most
 * 64 KiB), batches on a kept context allocate nothing, and freed contexts
 * hold no key, subkey, one-time key, keystream or plaintext in any phase
 * (every freed block is scanned). The rest: test_pipeline.c.
 * Built only against OpenSSL 3.5 or later (test/evp/CMakeLists.txt).
 */

#include <stdlib.h>
#include <string.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include "pipeline_helpers.h"
#include "test_common.h"

#define NSEC 64
static uint8_t sec[NSEC][32];
static size_t nsec;
static int watching;                     /* record allocations, scan frees */
static size_t alloc_bytes, alloc_count;  /* while watching */
static unsigned long leaks;

static void add_sec(const uint8_t *v)
{
    if (nsec < NSEC)
        memcpy(sec[nsec++], v, 32);
}

/* Any 12-byte window of a secret in a freed block counts as a leak. */
static void scan_block(const uint8_t *p, size_t n)
{
    for (size_t s = 0; s < nsec; s++)
        for (size_t off = 0; off + 12 <= 32; off += 4)
            for (size_t i = 0; i + 12 <= n; i++)
                if (p[i] == sec[s][off] && memcmp(p + i, sec[s] + off, 12) == 0) {
                    leaks++;
                    return;
                }
}

static void *h_malloc(size_t n, const char *f, int l)
{
    size_t *p = malloc(n + 16);

    (void)f;
    (void)l;
    if (p == NULL)
        return NULL;
    p[0] = n;
    if (watching) {
        alloc_bytes += n;
        alloc_count++;
    }
    return (uint8_t *)p + 16;
}

static void h_free(void *q, const char *f, int l)
{
    size_t *p;

    (void)f;
    (void)l;
    if (q == NULL)
        return;
    p = (size_t *)((uint8_t *)q - 16);
    if (watching)
        scan_block(q, p[0]);
    free(p);
}

static void *h_realloc(void *q, size_t n, const char *f, int l)
{
    void *r;

    if (q == NULL)
        return h_malloc(n, f, l);
    if (n == 0) {
        h_free(q, f, l);
        return NULL;
    }
    r = h_malloc(n, f, l);
    if (r != NULL) {
        size_t old = ((size_t *)((uint8_t *)q - 16))[0];

        memcpy(r, q, old < n ? old : n);
        h_free(q, f, l);
    }
    return r;
}

/*
 * Bytes a pipeline init of n pipes allocates on a context that has its
 * provider context already (an ordinary init made it): one block of at
 * most 1 KiB + 2 KiB a pipe (32: 64 KiB); then a batch on it allocates
 * nothing, nor does a re-init with no more pipes.
 */
static void test_alloc(const aead *a)
{
    static const size_t ns[] = { 1, 16, 32 };
    uint8_t key[32] = { 9 }, iv[MAXP][24] = { { 0 } };

    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        size_t n = ns[k], bytes;
        batch b;
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        const unsigned char *ivs[MAXP];

        for (size_t i = 0; i < n; i++)
            ivs[i] = iv[i];
        T_OK(EVP_EncryptInit_ex2(ctx, a->ours, key, iv[0], NULL), "ordinary init");
        alloc_bytes = alloc_count = 0;
        watching = 1;
        T_OK(EVP_CipherPipelineEncryptInit(ctx, NULL, key, 32, n, ivs, a->ivlen),
             "%s: pipeline init of %zu", a->name, n);
        watching = 0;
        bytes = alloc_bytes;
        printf("%s: a pipeline of %2zu pipes allocates %zu bytes in %zu block(s)\n", a->name, n,
               bytes, alloc_count);
        T_OK(alloc_count == 1, "%s: %zu pipes: %zu allocations, not one", a->name, n,
             alloc_count);
        T_OK(n != 32 || bytes <= 65536, "%s: 32 pipes take %zu bytes, more than 64 KiB", a->name,
             bytes);
        T_OK(bytes <= 1024 + 2048 * n, "%s: %zu pipes take %zu bytes, more than 1 KiB + 2 KiB "
             "a pipe", a->name, n, bytes);
        batch_make(&b, n, a->ivlen, 0);
        alloc_bytes = alloc_count = 0;
        watching = 1;
        T_OK(pipeline_on(ctx, NULL, a->ivlen, &b, 1, 0, 0) &&
                 pipeline_on(ctx, NULL, a->ivlen, &b, 1, 1, 1),
             "%s: batches of %zu on the context", a->name, n);
        b.n = n > 1 ? n / 2 : 1;
        T_OK(pipeline_on(ctx, NULL, a->ivlen, &b, 1, 0, 0), "%s: a smaller batch", a->name);
        watching = 0;
        T_OK(alloc_count == 0, "%s: batches of %zu pipes on a kept context allocated %zu "
             "blocks", a->name, n, alloc_count);
        b.n = n;
        batch_free(&b);
        EVP_CIPHER_CTX_free(ctx);
    }
}

/* Reference HChaCha20 (draft-irtf-cfrg-xchacha-03 2.2): the XChaCha subkey. */
#define T_ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define T_QR(a, b, c, d)                                                                     \
    a += b, d ^= a, d = T_ROTL(d, 16), c += d, b ^= c, b = T_ROTL(b, 12), a += b, d ^= a,    \
    d = T_ROTL(d, 8), c += d, b ^= c, b = T_ROTL(b, 7)

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void hchacha20_ref(const uint8_t key[32], const uint8_t nonce[16], uint8_t sub[32])
{
    uint32_t x[16] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };

    for (int i = 0; i < 8; i++)
        x[4 + i] = le32(key + 4 * i);
    for (int i = 0; i < 4; i++)
        x[12 + i] = le32(nonce + 4 * i);
    for (int r = 0; r < 10; r++) {
        T_QR(x[0], x[4], x[8], x[12]);
        T_QR(x[1], x[5], x[9], x[13]);
        T_QR(x[2], x[6], x[10], x[14]);
        T_QR(x[3], x[7], x[11], x[15]);
        T_QR(x[0], x[5], x[10], x[15]);
        T_QR(x[1], x[6], x[11], x[12]);
        T_QR(x[2], x[7], x[8], x[13]);
        T_QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 8; i++) {
        uint32_t w = x[i < 4 ? i : 8 + i];

        for (int j = 0; j < 4; j++)
            sub[4 * i + j] = (uint8_t)(w >> (8 * j));
    }
}

/* 32 bytes of ChaCha20 block ctr of (key, nonce) from the default provider. */
static void block_of(const uint8_t key[32], const uint8_t nonce[12], uint32_t ctr,
                     uint8_t out[32])
{
    EVP_CIPHER *c = t_cipher("ChaCha20", 0);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t iv[16] = { (uint8_t)ctr, (uint8_t)(ctr >> 8), (uint8_t)(ctr >> 16),
                       (uint8_t)(ctr >> 24) }, zero[32] = { 0 };
    int ol;

    memcpy(iv + 4, nonce, 12);
    T_OK(EVP_EncryptInit_ex(x, c, NULL, key, iv) && EVP_EncryptUpdate(x, out, &ol, zero, 32),
         "ChaCha20 block");
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_free(c);
}

/*
 * The secrets of a batch: the key; per pipe the XChaCha subkey, the
 * Poly1305 one-time key, the keystream of the text's first block and of
 * the block the text's first update ends in (a mid-block update leaves its
 * rest in the core's buffer), and the plaintext's first 32 bytes.
 */
static void batch_secrets(const aead *a, const batch *b, const size_t *first)
{
    nsec = 0;
    add_sec(b->key);
    for (size_t i = 0; i < b->n; i++) {
        uint8_t k[32], n12[12] = { 0 }, v[32];

        if (a->ivlen == 24) {
            hchacha20_ref(b->key, b->iv[i], k);
            add_sec(k);
            memcpy(n12 + 4, b->iv[i] + 16, 8);
        } else {
            memcpy(k, b->key, 32);
            memcpy(n12, b->iv[i], 12);
        }
        block_of(k, n12, 0, v);
        add_sec(v);
        block_of(k, n12, 1, v);
        add_sec(v);
        block_of(k, n12, (uint32_t)(1 + first[i] / 64), v);
        add_sec(v);
        if (b->len[i] >= 32)
            add_sec(b->pt[i]);
    }
}

/*
 * Freed pipeline contexts hold no secret, in every phase: a batch sealed,
 * abandoned after AAD or after a first text (mid-block), opened with a
 * forged tag, copied mid-batch, or re-initialised with fewer pipes after an
 * abandoned larger one (the pipes beyond the new count were wiped then).
 * The self-check: the XChaCha subkey reference and the one-time key
 * derivation match a seal by the default provider under the subkey.
 */
static void test_freed_secrets(const aead *a)
{
    static const size_t lens[6] = { 100, 1500, 37, 64, 2048, 200 };
    size_t first[6];

    for (int how = 0; how < 6; how++) {
        batch b;
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new(), *dup = NULL;
        const unsigned char *ivs[MAXP], *in[MAXP];
        unsigned char *out[MAXP], *tags[MAXP];
        size_t inl[MAXP], outl[MAXP], outsize[MAXP];
        unsigned long before;
        int enc = how != 3;

        batch_make(&b, 6, a->ivlen, 0);
        for (size_t i = 0; i < b.n; i++) {
            free(b.pt[i]);
            free(b.ct[i]);
            free(b.out[i]);
            b.len[i] = lens[i];
            b.pt[i] = t_xmalloc(lens[i]);
            b.ct[i] = t_xmalloc(lens[i]);
            b.out[i] = t_xmalloc(lens[i]);
            t_rand_bytes(b.pt[i], lens[i]);
            first[i] = lens[i] / 3 + 1;
            ivs[i] = b.iv[i];
            tags[i] = b.tag[i];
        }
        if (how == 3) { /* the ciphertexts to open, a tag forged */
            T_OK(pipeline(a->ours, a->ivlen, &b, 1, 0, 0), "seal");
            for (size_t i = 0; i < b.n; i++)
                memcpy(b.ct[i], b.out[i], b.len[i]);
            b.tag[4][3] ^= 0x10;
        }
        batch_secrets(a, &b, first);
        leaks = 0;
        watching = 1;
        T_OK(enc ? EVP_CipherPipelineEncryptInit(ctx, a->ours, b.key, 32, b.n, ivs, a->ivlen)
                 : EVP_CipherPipelineDecryptInit(ctx, a->ours, b.key, 32, b.n, ivs, a->ivlen),
             "%s: init", a->name);
        for (size_t i = 0; i < b.n; i++) {
            in[i] = b.aad[i];
            inl[i] = b.aadl[i];
        }
        T_OK(EVP_CipherPipelineUpdate(ctx, NULL, outl, NULL, in, inl), "%s: AAD", a->name);
        if (how == 3)
            T_OK(set_tags(ctx, tags, TAGLEN), "%s: tags", a->name);
        for (int part = 0; how != 1 && part < (how == 2 || how == 4 || how == 5 ? 1 : 2);
             part++) {
            for (size_t i = 0; i < b.n; i++) {
                in[i] = (enc ? b.pt[i] : b.ct[i]) + (part ? first[i] : 0);
                out[i] = b.out[i] + (part ? first[i] : 0);
                inl[i] = outsize[i] = part ? b.len[i] - first[i] : first[i];
            }
            T_OK(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl), "%s: text",
                 a->name);
        }
        if (how == 4) {
            dup = EVP_CIPHER_CTX_new();
            T_OK(EVP_CIPHER_CTX_copy(dup, ctx), "%s: copy", a->name);
        }
        if (how == 5) { /* fewer pipes, another key, over the abandoned batch */
            b.n = 2;
            b.key[0] ^= 1;
            T_OK(pipeline_on(ctx, NULL, a->ivlen, &b, 1, 0, 0), "%s: re-init with 2", a->name);
            b.key[0] ^= 1;
            b.n = 6;
        }
        if (how == 0 || how == 3) {
            ERR_set_mark();
            T_OK(EVP_CipherPipelineFinal(ctx, out, outl, outsize) == (how == 0),
                 "%s: final (forged: refused)", a->name);
            ERR_pop_to_mark();
        }
        before = leaks;
        EVP_CIPHER_CTX_free(ctx);
        EVP_CIPHER_CTX_free(dup);
        watching = 0;
        T_OK(leaks == before && before == 0,
             "%s: a secret left in freed memory (case %d: %lu during the calls, %lu at free)",
             a->name, how, before, leaks - before);
        batch_free(&b);
    }
    { /* the references: subkey, one-time key (the first 16 bytes of a seal's tag input) */
        uint8_t key[32], iv[24], sub[32], n12[12] = { 0 }, pt[5] = "hello", c1[5], c2[5];
        uint8_t t1[TAGLEN], t2[TAGLEN];
        EVP_CIPHER *dflt = t_cipher("ChaCha20-Poly1305", 0);

        t_rand_bytes(key, 32);
        t_rand_bytes(iv, 24);
        hchacha20_ref(key, iv, sub);
        memcpy(n12 + 4, iv + 16, 8);
        if (a->ivlen == 24 && dflt != NULL)
            T_OK(single(a->ours, 1, key, iv, NULL, 0, pt, 5, c1, t1) &&
                     single(dflt, 1, sub, n12, NULL, 0, pt, 5, c2, t2) &&
                     memcmp(c1, c2, 5) == 0 && memcmp(t1, t2, TAGLEN) == 0,
                 "the HChaCha20 reference does not give XChaCha's subkey");
        EVP_CIPHER_free(dflt);
    }
}


int main(void)
{
    aead aeads[2] = { { "ChaCha20-Poly1305", 12, NULL, NULL },
                      { "XChaCha20-Poly1305", 24, NULL, NULL } };

    /* before any allocation: freed blocks are scanned for secrets (test_freed_secrets) */
    if (!CRYPTO_set_mem_functions(h_malloc, h_realloc, h_free)) {
        fprintf(stderr, "CRYPTO_set_mem_functions failed\n");
        return 1;
    }
    unsetenv("CHAPOLY_STATS"); /* t_prov counts nothing */
    t_setup();
    aeads[0].ours = t_cipher("ChaCha20-Poly1305", 1);
    aeads[0].dflt = t_cipher("ChaCha20-Poly1305", 0);
    aeads[1].ours = t_cipher("XChaCha20-Poly1305", 1);
    for (int i = 0; i < 2; i++) {
        const aead *a = &aeads[i];

        if (!T_OK(a->ours != NULL, "%s not fetched", a->name))
            continue;
        test_alloc(a);
        test_freed_secrets(a);
    }
    for (int i = 0; i < 2; i++) {
        EVP_CIPHER_free(aeads[i].ours);
        EVP_CIPHER_free(aeads[i].dflt);
    }
    t_teardown();
    return t_finish("test_pipeline_memory");
}
