/* SPDX-License-Identifier: Apache-2.0 */
/*
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03) through chapoly's EVP
 * cipher against libsodium's crypto_aead_xchacha20poly1305_ietf_*, which is
 * the oracle here (OpenSSL has no XChaCha). Random keys and 24-byte nonces,
 * AAD 0..300 and data 0..20000 bytes biased toward the 16/64-byte
 * boundaries, random update splits, in place and out of place.
 */
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include "test_common.h"

#define MAX_AAD 300
#define MAX_DATA 20000
#define TAGLEN crypto_aead_xchacha20poly1305_ietf_ABYTES

static EVP_CIPHER *xaead;

static size_t pick_len(size_t max)
{
    static const size_t scales[] = { 130, 1100, (size_t)-1 };

    return t_pick_len(max, scales, sizeof(scales) / sizeof(scales[0]));
}

/* Next piece: the whole remainder (mode 0), 0..161 bytes (1) or 0..3000 bytes (2). */
static size_t next_chunk(int mode, size_t left)
{
    size_t n = mode == 1 ? t_rand_below(162) : mode == 2 ? t_rand_below(3001) : left;

    return n < left ? n : left;
}

/*
 * chapoly XChaCha20-Poly1305, AAD and data each fed in random pieces.
 * enc: tag is written; !enc: tag is the expected tag. Returns 1 if every
 * call before the final succeeded with outl == inl; *fin = final's result.
 */
static int chapoly_run(int enc, const uint8_t key[32], const uint8_t nonce[24],
                       const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len,
                       uint8_t *out, uint8_t tag[TAGLEN], int *fin, char *why, size_t whyn)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int amode = (int)t_rand_below(3), dmode = (int)t_rand_below(3), inplace = (int)t_rand_below(2);
    int ok = 0, outl;
    size_t off;

    *fin = 0;
    snprintf(why, whyn, "init");
    if (ctx == NULL || !EVP_CipherInit_ex2(ctx, xaead, key, nonce, enc, NULL))
        goto done;
    snprintf(why, whyn, "set tag");
    if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAGLEN, tag) <= 0)
        goto done;
    off = 0;
    do {
        size_t n = next_chunk(amode, aadlen - off);

        outl = -1;
        if (!EVP_CipherUpdate(ctx, NULL, &outl, aad + off, (int)n)) {
            snprintf(why, whyn, "AAD update of %zu bytes at %zu (outl %d)", n, off, outl);
            goto done;
        }
        t_note_aad_outl(n, outl, "AAD update");
        off += n;
    } while (off < aadlen);
    if (inplace)
        memcpy(out, in, len);
    off = 0;
    do {
        size_t n = next_chunk(dmode, len - off);

        outl = -1;
        if (!EVP_CipherUpdate(ctx, out + off, &outl, (inplace ? out : in) + off, (int)n)
            || outl != (int)n) {
            snprintf(why, whyn, "data update of %zu bytes at %zu, %s (outl %d)", n, off,
                     inplace ? "in place" : "out of place", outl);
            goto done;
        }
        off += n;
    } while (off < len);
    outl = -1;
    *fin = EVP_CipherFinal_ex(ctx, out + len, &outl);
    if (*fin && outl != 0) {
        snprintf(why, whyn, "final wrote %d bytes", outl);
        goto done;
    }
    if (*fin && enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAGLEN, tag) <= 0) {
        snprintf(why, whyn, "get tag");
        goto done;
    }
    snprintf(why, whyn, "final %s", *fin ? "succeeded" : "failed");
    ok = 1;
done:
    EVP_CIPHER_CTX_free(ctx);
    ERR_clear_error();
    return ok;
}

int main(void)
{
    const int ncases = 1500;
    int matched = 0, opened_sodium = 0, sodium_opened = 0, rejected = 0;
    char why[160];

    t_setup();
    if (sodium_init() < 0) {
        T_OK(0, "sodium_init failed");
        t_teardown();
        return t_finish("test_xchacha_sodium");
    }
    xaead = t_cipher("XChaCha20-Poly1305", 1);
    if (!T_OK(xaead != NULL, "fetching XChaCha20-Poly1305 from chapoly failed")) {
        t_teardown();
        return t_finish("test_xchacha_sodium");
    }

    uint8_t *aad = t_xmalloc(MAX_AAD), *pt = t_xmalloc(MAX_DATA);
    uint8_t *sct = t_xmalloc(MAX_DATA + TAGLEN), *ct = t_xmalloc(MAX_DATA + TAGLEN);
    uint8_t *out = t_xmalloc(MAX_DATA + TAGLEN);

    for (int ci = 0; ci < ncases; ci++) {
        uint8_t key[32], nonce[24], tag[TAGLEN], bad[TAGLEN];
        size_t aadlen = pick_len(MAX_AAD), len = pick_len(MAX_DATA);
        unsigned long long sctlen = 0, mlen = 0;
        int fin;

        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(nonce, sizeof(nonce));
        t_rand_bytes(aad, aadlen);
        t_rand_bytes(pt, len);
        crypto_aead_xchacha20poly1305_ietf_encrypt(sct, &sctlen, pt, len, aad, aadlen, NULL, nonce, key);
        if (!T_OK(sctlen == len + TAGLEN, "case %d: libsodium produced %llu bytes", ci, sctlen))
            continue;

        /* seal: same bytes and tag as libsodium */
        int ok = chapoly_run(1, key, nonce, aad, aadlen, pt, len, ct, tag, &fin, why, sizeof(why));
        if (T_OK(ok && fin, "case %d seal (aad %zu, len %zu): %s", ci, aadlen, len, why)) {
            int same = T_OK(memcmp(ct, sct, len) == 0, "case %d seal (aad %zu, len %zu): ciphertext differs "
                            "from libsodium", ci, aadlen, len)
                       & T_OK(memcmp(tag, sct + len, TAGLEN) == 0, "case %d seal (aad %zu, len %zu): tag "
                              "differs from libsodium", ci, aadlen, len);
            matched += same;
            /* libsodium opens chapoly's output */
            memcpy(ct + len, tag, TAGLEN);
            int sr = crypto_aead_xchacha20poly1305_ietf_decrypt(out, &mlen, NULL, ct, len + TAGLEN, aad, aadlen,
                                                                nonce, key);
            sodium_opened += T_OK(sr == 0 && mlen == len && memcmp(out, pt, len) == 0,
                                  "case %d: libsodium cannot open chapoly's output (aad %zu, len %zu)", ci,
                                  aadlen, len);
        }

        /* open: chapoly opens libsodium's output */
        memcpy(tag, sct + len, TAGLEN);
        ok = chapoly_run(0, key, nonce, aad, aadlen, sct, len, out, tag, &fin, why, sizeof(why));
        if (T_OK(ok && fin, "case %d open (aad %zu, len %zu): %s", ci, aadlen, len, why))
            opened_sodium += T_OK(memcmp(out, pt, len) == 0, "case %d open (aad %zu, len %zu): plaintext "
                                  "differs", ci, aadlen, len);

        /* a corrupted tag (every case) and, every 4th case, a corrupted ciphertext byte */
        memcpy(bad, sct + len, TAGLEN);
        size_t bit = t_rand_below(8 * TAGLEN);
        bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        ok = chapoly_run(0, key, nonce, aad, aadlen, sct, len, out, bad, &fin, why, sizeof(why));
        int rej = T_OK(ok && !fin, "case %d (aad %zu, len %zu): tag bit %zu flipped not rejected at final: %s",
                       ci, aadlen, len, bit, why);
        if (ci % 4 == 0 && len > 0) {
            uint8_t *c2 = t_xmalloc(len);
            size_t cbit = t_rand_below(8 * len);

            memcpy(c2, sct, len);
            c2[cbit / 8] ^= (uint8_t)(1u << (cbit % 8));
            memcpy(tag, sct + len, TAGLEN);
            ok = chapoly_run(0, key, nonce, aad, aadlen, c2, len, out, tag, &fin, why, sizeof(why));
            rej &= T_OK(ok && !fin, "case %d (aad %zu, len %zu): ciphertext bit %zu flipped not rejected at "
                        "final: %s", ci, aadlen, len, cbit, why);
            free(c2);
        }
        rejected += rej;
    }
    t_check_aad_outl();
    printf("xchacha20-poly1305 vs libsodium: %d cases, %d sealed identically, %d of libsodium's opened by "
           "chapoly, %d of chapoly's opened by libsodium, %d corrupted rejected\n",
           ncases, matched, opened_sodium, sodium_opened, rejected);
    free(aad);
    free(pt);
    free(sct);
    free(ct);
    free(out);
    EVP_CIPHER_free(xaead);
    t_teardown();
    return t_finish("test_xchacha_sodium");
}
