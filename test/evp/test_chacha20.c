/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "ChaCha20" (the plain stream cipher, 16-byte IV = LE32 block counter ||
 * 96-bit nonce) through chapoly against the default provider: same inputs,
 * same bytes. Covers random lengths and update splits (partial blocks carried
 * across calls), in-place and separate buffers, dup mid-stream, the 32-bit
 * counter wrap (default carries into the next 32-bit word, i.e. the first
 * nonce word) and the call pattern of `openssl enc`.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include "test_common.h"

#define MAXLEN 70000
#define MAXSPLIT 161

static EVP_CIPHER *ours, *ref;
static uint8_t *in, *out, *expect;

/* Whole-buffer one-shot through the default provider. */
static int ref_crypt(const uint8_t key[32], const uint8_t iv[16], const uint8_t *src, size_t len,
                     uint8_t *dst)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int outl = -1, fl = -1;
    int ok = ctx && EVP_EncryptInit_ex(ctx, ref, NULL, key, iv)
             && EVP_EncryptUpdate(ctx, dst, &outl, src, (int)len) && outl == (int)len
             && EVP_EncryptFinal_ex(ctx, dst + len, &fl) && fl == 0;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/*
 * Feeds src[from..to) to ctx in random pieces of 0..MAXSPLIT bytes (zero-length
 * calls included). In place when inplace (dst already holds the input).
 * Returns 0 if any call fails or reports outl != inl.
 */
static int feed_random(EVP_CIPHER_CTX *ctx, const uint8_t *src, uint8_t *dst, size_t from,
                       size_t to, int inplace, size_t maxsplit)
{
    size_t off = from;

    while (off < to) {
        size_t n = t_rand_below(maxsplit + 1);
        if (n > to - off)
            n = to - off;
        int outl = -1;
        if (!EVP_CipherUpdate(ctx, dst + off, &outl, inplace ? dst + off : src + off, (int)n)
            || outl != (int)n)
            return 0;
        off += n;
    }
    return 1;
}

/* One random message through chapoly: random split, direction and aliasing. */
static void one_random(size_t len, size_t maxsplit)
{
    uint8_t key[32], iv[16];
    int enc = (int)t_rand_below(2), inplace = (int)t_rand_below(2), fl = -1;

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(in, len);
    if (!T_OK(ref_crypt(key, iv, in, len, expect), "default ChaCha20 len %zu", len))
        return;

    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (inplace)
        memcpy(out, in, len);
    int ok = ctx && EVP_CipherInit_ex(ctx, ours, NULL, key, iv, enc)
             && feed_random(ctx, in, out, 0, len, inplace, maxsplit);
    T_OK(ok, "ChaCha20 len %zu (%s, %s): an update failed or outl != inl", len,
         enc ? "enc" : "dec", inplace ? "in place" : "separate");
    if (ok) {
        T_OK(memcmp(out, expect, len) == 0, "ChaCha20 len %zu (%s, %s): bytes differ from default",
             len, enc ? "enc" : "dec", inplace ? "in place" : "separate");
        T_OK(EVP_CipherFinal_ex(ctx, out + len, &fl) && fl == 0,
             "ChaCha20 len %zu: final failed or produced output", len);
    }
    EVP_CIPHER_CTX_free(ctx);
    ERR_clear_error();
}

/* Copy the context at a random point; both copies must finish to default's bytes. */
static void one_dup(size_t len)
{
    uint8_t key[32], iv[16];
    size_t cut = t_rand_below(len + 1);
    uint8_t *out2 = malloc(len + 1);

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(in, len);
    T_OK(ref_crypt(key, iv, in, len, expect), "default ChaCha20 len %zu", len);

    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new(), *dup = EVP_CIPHER_CTX_new();
    int ok = ctx && dup && out2 && EVP_EncryptInit_ex(ctx, ours, NULL, key, iv)
             && feed_random(ctx, in, out, 0, cut, 0, MAXSPLIT) && EVP_CIPHER_CTX_copy(dup, ctx);
    T_OK(ok, "ChaCha20 dup setup (len %zu, cut %zu)", len, cut);
    if (ok) {
        memcpy(out2, out, cut);
        /* Different split patterns after the copy: the partial block must travel with it. */
        T_OK(feed_random(ctx, in, out, cut, len, 0, MAXSPLIT)
                 && memcmp(out, expect, len) == 0,
             "ChaCha20 len %zu: original after dup at %zu differs from default", len, cut);
        T_OK(feed_random(dup, in, out2, cut, len, 0, 7) && memcmp(out2, expect, len) == 0,
             "ChaCha20 len %zu: duplicate made at %zu differs from default", len, cut);
    }
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_CTX_free(dup);
    free(out2);
    ERR_clear_error();
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Counter wrap. Expected behaviour (OpenSSL's): the 32-bit block counter and
 * the first nonce word act as one 64-bit little-endian counter. Checked two
 * ways: against the default provider's stream, and block by block against
 * default-provider single blocks whose IV has that 64-bit counter spelled out.
 */
static void test_counter_wrap(void)
{
    static const uint32_t starts[] = { 0xffffffffu, 0xfffffffeu, 0xfffffff0u, 0xffffffe1u };
    const size_t len = 40 * 64 + 23; /* 41 blocks, the last one partial */
    uint8_t key[32], iv[16];

    for (size_t si = 0; si < sizeof(starts) / sizeof(starts[0]); si++) {
        for (int w1 = 0; w1 < 3; w1++) {
            t_rand_bytes(key, sizeof(key));
            t_rand_bytes(iv, sizeof(iv));
            put_le32(iv, starts[si]);
            if (w1 == 1)
                put_le32(iv + 4, 0xffffffffu); /* the carry wraps the nonce word too */
            else if (w1 == 2)
                put_le32(iv + 4, 0);
            t_rand_bytes(in, len);
            T_OK(ref_crypt(key, iv, in, len, expect), "default ChaCha20 at counter %#x",
                 starts[si]);

            /* The explicit 64-bit-counter model, one default block at a time. */
            int model_ok = 1;
            for (size_t b = 0; b * 64 < len; b++) {
                uint64_t ctr = ((uint64_t)le32(iv + 4) << 32 | le32(iv)) + b;
                uint8_t biv[16], blk[64];
                size_t n = len - b * 64 < 64 ? len - b * 64 : 64;
                memcpy(biv, iv, 16);
                put_le32(biv, (uint32_t)ctr);
                put_le32(biv + 4, (uint32_t)(ctr >> 32));
                model_ok &= ref_crypt(key, biv, in + b * 64, n, blk);
                model_ok &= memcmp(blk, expect + b * 64, n) == 0;
            }
            T_OK(model_ok, "default ChaCha20 at counter %#x (word1 case %d) is not a 64-bit "
                           "counter: this test's expectation is wrong",
                 starts[si], w1);

            /* Splits: one shot, whole blocks, single bytes, 1..161, odd 63/65. */
            static const size_t fixed[] = { 0, 64, 1, 63, 65, 128 };
            for (int mode = 0; mode < 10; mode++) {
                EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
                int ok = ctx && EVP_EncryptInit_ex(ctx, ours, NULL, key, iv);
                size_t step = mode < 6 ? fixed[mode] : 0;
                for (size_t off = 0; ok && off < len;) {
                    size_t n = step ? step : (mode < 6 ? len : 1 + t_rand_below(MAXSPLIT));
                    if (n > len - off)
                        n = len - off;
                    int outl = -1;
                    ok = EVP_EncryptUpdate(ctx, out + off, &outl, in + off, (int)n)
                         && outl == (int)n;
                    off += n;
                }
                T_OK(ok && memcmp(out, expect, len) == 0,
                     "ChaCha20 counter %#x word1 case %d split mode %d: differs from default",
                     starts[si], w1, mode);
                EVP_CIPHER_CTX_free(ctx);
            }
            ERR_clear_error();
        }
    }
}

/* `openssl enc -chacha20` call pattern (apps/enc.c), then BIO_f_cipher. */
static void test_enc_style(void)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t key[32] = { 0 }, iv[16] = { 0 }, o[16];
    const uint8_t hello[5] = { 'h', 'e', 'l', 'l', 'o' };
    uint8_t want[5];
    int outl = -1, fl = -1;

    T_OK(ref_crypt(key, iv, hello, 5, want), "default enc of hello");
    T_OK(EVP_CipherInit_ex(ctx, ours, NULL, NULL, NULL, 1), "enc: init with no key, no IV");
    T_OK(EVP_CIPHER_CTX_get_iv_length(ctx) == 16, "enc: ivlen %d, want 16",
         EVP_CIPHER_CTX_get_iv_length(ctx));
    T_OK(EVP_CIPHER_CTX_get_key_length(ctx) == 32, "enc: keylen %d, want 32",
         EVP_CIPHER_CTX_get_key_length(ctx));
    T_OK(EVP_CIPHER_CTX_set_padding(ctx, 0), "enc -nopad: set_padding");
    T_OK(EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, 1), "enc: init with key + IV");
    T_OK(EVP_CipherUpdate(ctx, o, &outl, hello, 5) && outl == 5, "enc: update 5 bytes");
    T_OK(EVP_CipherFinal_ex(ctx, o + 5, &fl) && fl == 0, "enc: final must output nothing");
    T_OK(memcmp(o, want, 5) == 0, "enc: hello differs from default");
    /* RFC 8439 A.1 test vector #1 keystream (76b8e0ada0...) XOR "hello". */
    static const uint8_t rfc[5] = { 0x1e, 0xdd, 0x8c, 0xc1, 0xcf };
    T_OK(memcmp(o, rfc, 5) == 0, "enc: hello with key 0 / IV 0 is not 1edd8cc1cf");
    EVP_CIPHER_CTX_free(ctx);

    /* Through BIO_f_cipher: write path in random chunks, read path in random chunks. */
    const size_t len = 20000;
    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(in, len);
    T_OK(ref_crypt(key, iv, in, len, expect), "default ChaCha20 20000");

    BIO *mem = BIO_new(BIO_s_mem()), *cb = BIO_new(BIO_f_cipher());
    int ok = mem && cb && BIO_set_cipher(cb, ours, key, iv, 1);
    BIO_push(cb, mem);
    for (size_t off = 0; ok && off < len;) {
        size_t n = 1 + t_rand_below(5000);
        if (n > len - off)
            n = len - off;
        ok = BIO_write(cb, in + off, (int)n) == (int)n;
        off += n;
    }
    ok = ok && BIO_flush(cb) == 1;
    uint8_t *mp = NULL;
    long ml = BIO_get_mem_data(mem, (char **)&mp);
    T_OK(ok && ml == (long)len && memcmp(mp, expect, len) == 0,
         "BIO_f_cipher write path (enc) differs from default");

    BIO *src = BIO_new_mem_buf(expect, (int)len), *db = BIO_new(BIO_f_cipher());
    ok = src && db && BIO_set_cipher(db, ours, key, iv, 0);
    BIO_push(db, src);
    size_t got = 0;
    while (ok && got < len) {
        int r = BIO_read(db, out + got, (int)(1 + t_rand_below(3000)));
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    T_OK(ok && got == len && memcmp(out, in, len) == 0 && BIO_get_cipher_status(db) == 1,
         "BIO_f_cipher read path (dec) did not give the plaintext back (%zu of %zu)", got, len);
    BIO_free_all(cb);
    BIO_free_all(db);
    ERR_clear_error();
}

int main(void)
{
    t_setup();
    ours = t_cipher("ChaCha20", 1);
    ref = t_cipher("ChaCha20", 0);
    in = malloc(MAXLEN + 64);
    out = malloc(MAXLEN + 64);
    expect = malloc(MAXLEN + 64);
    if (!T_OK(ours && ref && in && out && expect, "fetch ChaCha20 / allocate")) {
        t_teardown();
        return t_finish("test_chacha20");
    }

    for (size_t len = 0; len <= 5000; len++) {
        one_random(len, MAXSPLIT);
        if (t_fail > 200)
            break;
    }
    for (int i = 0; i < 40 && t_fail <= 200; i++)
        one_random(5001 + t_rand_below(MAXLEN - 5000), i & 1 ? MAXSPLIT : 4096);
    for (int i = 0; i < 300 && t_fail <= 200; i++)
        one_dup(t_rand_below(i < 250 ? 600 : 5000));
    test_counter_wrap();
    test_enc_style();

    free(in);
    free(out);
    free(expect);
    EVP_CIPHER_free(ours);
    EVP_CIPHER_free(ref);
    t_teardown();
    return t_finish("test_chacha20");
}
