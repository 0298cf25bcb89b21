/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Constant-time check of the EVP paths through chapoly (ctgrind, run under
 * valgrind memcheck): the key and the plaintext (for the MAC: key and
 * message) are marked secret before they are handed to EVP; everything the
 * provider derives from them (effective key, XChaCha subkey, Poly1305
 * one-time key, keystream, hash state) is then secret too. Outputs are
 * declassified and compared with the default provider run on public copies.
 *
 * Paths: ChaCha20-Poly1305 and XChaCha20-Poly1305 seal and open, one call
 * and in pieces; a forged tag; TLS 1.2 record seal and open (one-shot
 * kernels); ChaCha20 across the counter wrap; POLY1305 in pieces.
 *
 * The verdict of every open is public by design: the core's one tag
 * comparison (chapoly_tag_equal) makes it public with one branch, which
 * ct.supp names; every other branch of an open stays checked.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "ct_common.h"
#include "test_common.h"

static EVP_CIPHER *ours_aead, *ours_xaead, *ours_chacha, *dflt_aead, *dflt_chacha;
static EVP_MAC *ours_mac, *dflt_mac;

static const size_t lens[] = { 0, 1, 15, 16, 63, 64, 65, 255, 256, 257, 511, 512, 513, 1000,
                               4096 + 13, 8192 + 77 };

static uint8_t pt[9000], ct[9000 + 16], out[9000 + 16], want[9000 + 16];

/* ---- oracles (public inputs only) ---- */

static int oneshot(const EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
                   const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len,
                   uint8_t *o, uint8_t *tag)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int outl, ok;

    ok = x != NULL && EVP_CipherInit_ex2(x, c, key, iv, enc, NULL);
    if (ok && !enc && tag != NULL)
        ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag) > 0;
    if (ok && aadlen > 0)
        ok = EVP_CipherUpdate(x, NULL, &outl, aad, (int)aadlen);
    if (ok && len > 0)
        ok = EVP_CipherUpdate(x, o, &outl, in, (int)len);
    if (ok)
        ok = EVP_CipherFinal_ex(x, o + len, &outl);
    if (ok && enc && tag != NULL)
        ok = EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0;
    EVP_CIPHER_CTX_free(x);
    return ok;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* XChaCha20-Poly1305 oracle: HChaCha20 = rows 0 and 3 of (default ChaCha20 block - input). */
static int xchacha_oracle(const uint8_t key[32], const uint8_t n24[24], const uint8_t *aad,
                          size_t aadlen, const uint8_t *in, size_t len, uint8_t *o, uint8_t *tag)
{
    static const uint32_t sigma[4] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
    uint8_t ks[64] = { 0 }, sub[32], n12[12] = { 0 };

    if (!oneshot(dflt_chacha, 1, key, n24, NULL, 0, ks, 64, ks, NULL))
        return 0;
    for (int j = 0; j < 4; j++) {
        uint32_t a = le32(ks + 4 * j) - sigma[j], b = le32(ks + 48 + 4 * j) - le32(n24 + 4 * j);

        for (int i = 0; i < 4; i++) {
            sub[4 * j + i] = (uint8_t)(a >> (8 * i));
            sub[16 + 4 * j + i] = (uint8_t)(b >> (8 * i));
        }
    }
    memcpy(n12 + 4, n24 + 16, 8);
    return oneshot(dflt_aead, 1, sub, n12, aad, aadlen, in, len, o, tag);
}

/* ---- chapoly with secrets ---- */

/* Seal in pieces of 'step' bytes (0 = one call). */
static int seal_pieces(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv,
                       const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len,
                       size_t step, uint8_t *o, uint8_t tag[16])
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int outl, ok;

    ok = x != NULL && EVP_EncryptInit_ex2(x, c, key, iv, NULL);
    if (ok && aadlen > 0)
        ok = EVP_EncryptUpdate(x, NULL, &outl, aad, (int)aadlen);
    for (size_t off = 0; ok && off < len;) {
        size_t n = step == 0 || step > len - off ? len - off : step;

        ok = EVP_EncryptUpdate(x, o + off, &outl, in + off, (int)n);
        off += n;
    }
    ok = ok && EVP_EncryptFinal_ex(x, o + len, &outl) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0;
    EVP_CIPHER_CTX_free(x);
    return ok;
}

static int open_pieces(const EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv,
                       const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len,
                       size_t step, uint8_t *o, const uint8_t tag[16])
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int outl, ok;

    ok = x != NULL && EVP_DecryptInit_ex2(x, c, key, iv, NULL) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, (void *)tag) > 0;
    if (ok && aadlen > 0)
        ok = EVP_DecryptUpdate(x, NULL, &outl, aad, (int)aadlen);
    for (size_t off = 0; ok && off < len;) {
        size_t n = step == 0 || step > len - off ? len - off : step;

        ok = EVP_DecryptUpdate(x, o + off, &outl, in + off, (int)n);
        off += n;
    }
    /* The final's result is the public verdict (see the header comment). */
    ok = ok && EVP_DecryptFinal_ex(x, o + len, &outl);
    EVP_CIPHER_CTX_free(x);
    return ok;
}

static void aead_case(int xchacha, size_t len, size_t step)
{
    const EVP_CIPHER *c = xchacha ? ours_xaead : ours_aead;
    const char *name = xchacha ? "XChaCha20-Poly1305" : "ChaCha20-Poly1305";
    uint8_t key[32], iv[24], aad[29], tag[16], wtag[16];
    size_t aadlen = len % 30;

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(aad, sizeof(aad));
    t_rand_bytes(pt, len);
    if (!T_OK(xchacha ? xchacha_oracle(key, iv, aad, aadlen, pt, len, want, wtag)
                      : oneshot(dflt_aead, 1, key, iv, aad, aadlen, pt, len, want, wtag),
              "%s oracle failed", name))
        return;

    CT_SECRET(key, sizeof(key));
    CT_SECRET(pt, len);
    T_OK(seal_pieces(c, key, iv, aad, aadlen, pt, len, step, ct, tag), "%s seal len %zu", name, len);
    CT_PUBLIC(ct, len);
    CT_PUBLIC(tag, sizeof(tag));
    T_EQ_MEM(ct, want, len, "%s ciphertext len %zu step %zu", name, len, step);
    T_EQ_MEM(tag, wtag, 16, "%s tag len %zu step %zu", name, len, step);

    int ok = open_pieces(c, key, iv, aad, aadlen, ct, len, step, out, tag);
    T_OK(ok, "%s open rejected an authentic message, len %zu step %zu", name, len, step);
    CT_PUBLIC(out, len);
    CT_PUBLIC(pt, len);
    T_EQ_MEM(out, pt, len, "%s decrypted text len %zu step %zu", name, len, step);

    tag[len % 16] ^= 4;
    ok = open_pieces(c, key, iv, aad, aadlen, ct, len, step, out, tag);
    T_OK(!ok, "%s open accepted a forged tag, len %zu", name, len);
    T_OK(t_error_queued(), "%s forged tag refused without an error queued", name);
    CT_PUBLIC(key, sizeof(key));
}

/* TLS 1.2 record mode: "tlsaad", then one in-place EVP_Cipher over payload || tag. */
static int tls_record(const EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t iv[12],
                      uint64_t seq, uint8_t *buf, size_t payload)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t aad[13];
    size_t field = payload + (enc ? 0 : 16);
    int ok;

    for (int i = 0; i < 8; i++)
        aad[i] = (uint8_t)(seq >> (56 - 8 * i));
    aad[8] = 23;
    aad[9] = 3;
    aad[10] = 3;
    aad[11] = (uint8_t)(field >> 8);
    aad[12] = (uint8_t)field;
    ok = x != NULL && EVP_CipherInit_ex2(x, c, key, iv, enc, NULL) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16 &&
         EVP_Cipher(x, buf, buf, (unsigned int)(payload + 16)) == (int)(enc ? payload + 16 : payload);
    EVP_CIPHER_CTX_free(x);
    return ok;
}

static void tls_case(size_t payload)
{
    uint8_t key[32], iv[12];
    uint64_t seq = t_rand64();

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(pt, payload);
    memcpy(want, pt, payload);
    if (!T_OK(tls_record(dflt_aead, 1, key, iv, seq, want, payload), "TLS oracle seal failed"))
        return;

    CT_SECRET(key, sizeof(key));
    CT_SECRET(pt, payload);
    memcpy(out, pt, payload);
    T_OK(tls_record(ours_aead, 1, key, iv, seq, out, payload), "TLS seal payload %zu", payload);
    CT_PUBLIC(out, payload + 16);
    T_EQ_MEM(out, want, payload + 16, "TLS sealed record payload %zu", payload);

    T_OK(tls_record(ours_aead, 0, key, iv, seq, out, payload), "TLS open payload %zu", payload);
    CT_PUBLIC(out, payload);
    CT_PUBLIC(pt, payload);
    T_EQ_MEM(out, pt, payload, "TLS opened record payload %zu", payload);

    memcpy(out, want, payload + 16);
    out[payload] ^= 1;
    T_OK(!tls_record(ours_aead, 0, key, iv, seq, out, payload), "TLS forged record accepted");
    t_error_queued();
    CT_PUBLIC(key, sizeof(key));
}

static void chacha_case(size_t len)
{
    uint8_t key[32], iv[16];
    int outl;

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    /* The block counter starts so that the longer inputs cross its 32-bit wrap. */
    uint32_t ctr = 0xffffffffu - (uint32_t)(len / 64 / 2);
    for (int i = 0; i < 4; i++)
        iv[i] = (uint8_t)(ctr >> (8 * i));
    t_rand_bytes(pt, len);
    if (!T_OK(oneshot(dflt_chacha, 1, key, iv, NULL, 0, pt, len, want, NULL), "ChaCha20 oracle"))
        return;

    CT_SECRET(key, sizeof(key));
    CT_SECRET(pt, len);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int ok = x != NULL && EVP_EncryptInit_ex2(x, ours_chacha, key, iv, NULL);
    size_t half = len / 2 + 3 > len ? len : len / 2 + 3;
    ok = ok && (half == 0 || EVP_EncryptUpdate(x, out, &outl, pt, (int)half)) &&
         (len == half || EVP_EncryptUpdate(x, out + half, &outl, pt + half, (int)(len - half)));
    EVP_CIPHER_CTX_free(x);
    T_OK(ok, "ChaCha20 encrypt len %zu", len);
    CT_PUBLIC(out, len);
    T_EQ_MEM(out, want, len, "ChaCha20 output len %zu", len);
    CT_PUBLIC(key, sizeof(key));
    CT_PUBLIC(pt, len);
}

static void mac_case(size_t len, int ff)
{
    uint8_t key[32], tag[16], wtag[16];
    size_t outl = 0;

    t_rand_bytes(key, sizeof(key));
    if (ff) {
        memset(key, 0xff, sizeof(key));
        memset(pt, 0xff, len);
    } else {
        t_rand_bytes(pt, len);
    }
    EVP_MAC_CTX *m = EVP_MAC_CTX_new(dflt_mac);
    int ok = m != NULL && EVP_MAC_init(m, key, 32, NULL) && EVP_MAC_update(m, pt, len) &&
             EVP_MAC_final(m, wtag, &outl, 16);
    EVP_MAC_CTX_free(m);
    if (!T_OK(ok, "POLY1305 oracle"))
        return;

    CT_SECRET(key, sizeof(key));
    CT_SECRET(pt, len);
    m = EVP_MAC_CTX_new(ours_mac);
    ok = m != NULL && EVP_MAC_init(m, key, 32, NULL);
    for (size_t off = 0; ok && off < len;) {
        size_t n = off % 2 ? 37 : 300; /* odd offsets after the first piece */

        if (n > len - off)
            n = len - off;

        ok = EVP_MAC_update(m, pt + off, n);
        off += n;
    }
    ok = ok && EVP_MAC_final(m, tag, &outl, 16);
    EVP_MAC_CTX_free(m);
    T_OK(ok, "POLY1305 len %zu", len);
    CT_PUBLIC(tag, sizeof(tag));
    T_EQ_MEM(tag, wtag, 16, "POLY1305 tag len %zu", len);
    CT_PUBLIC(key, sizeof(key));
    CT_PUBLIC(pt, len);
}

int main(void)
{
    t_setup();
    if (!RUNNING_ON_VALGRIND)
        printf("note: not under valgrind, only correctness is checked\n");
    ours_aead = t_cipher("ChaCha20-Poly1305", 1);
    ours_xaead = t_cipher("XChaCha20-Poly1305", 1);
    ours_chacha = t_cipher("ChaCha20", 1);
    dflt_aead = t_cipher("ChaCha20-Poly1305", 0);
    dflt_chacha = t_cipher("ChaCha20", 0);
    ours_mac = t_mac("POLY1305", 1);
    dflt_mac = t_mac("POLY1305", 0);
    if (!ours_aead || !ours_xaead || !ours_chacha || !dflt_aead || !dflt_chacha || !ours_mac ||
        !dflt_mac)
        return 1;

    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t len = lens[i];

        aead_case(0, len, 0);
        aead_case(0, len, 1 + len / 3);
        aead_case(1, len, i & 1 ? 0 : 65);
        chacha_case(len);
        mac_case(len, 0);
        mac_case(len, 1);
        if (len <= 4096 + 13)
            tls_case(len);
    }
    t_teardown();
    return t_finish("ct_evp");
}
