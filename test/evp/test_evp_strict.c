/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Strict behaviour and bad inputs. Every rejected call must return failure
 * with an OpenSSL error queued and must leave the context usable after a
 * fresh init; nothing may crash.
 *
 * Where chapoly is deliberately stricter than the default provider, the
 * comment "default:" records what OpenSSL 3.0.19's default provider does with
 * the same call sequence (checked on this machine).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include "test_common.h"

#define TAGLEN 16

/* A call that must fail (return <= 0) and queue an error. */
/* A call that must succeed; a queued error is reported and cleared. */
#define T_ACCEPT(call, ...)                                                                  \
    do {                                                                                     \
        ERR_clear_error();                                                                   \
        int r_ = (call);                                                                     \
        T_OK(r_ > 0, "rejected: " __VA_ARGS__);                                              \
        if (r_ <= 0)                                                                         \
            ERR_print_errors_fp(stderr);                                                     \
        ERR_clear_error();                                                                   \
    } while (0)

/* Does a queued error's reason or detail text contain needle? Clears the queue. */
static int err_says(const char *needle)
{
    const char *data = NULL, *reason;
    int flags = 0, found = 0;
    unsigned long e;

    while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
        if ((flags & ERR_TXT_STRING) && data != NULL && strstr(data, needle) != NULL)
            found = 1;
        reason = ERR_reason_error_string(e);
        if (reason != NULL && strstr(reason, needle) != NULL)
            found = 1;
    }
    return found;
}

/* Like T_REJECT, and the error must say `text` (a string literal). */
#define T_REJECT_SAYS(call, text, ...)                                                       \
    do {                                                                                     \
        ERR_clear_error();                                                                   \
        int r_ = (call);                                                                     \
        T_OK(r_ <= 0, "accepted: " __VA_ARGS__);                                             \
        T_OK(err_says(text), "no \"" text "\" error: " __VA_ARGS__);                         \
    } while (0)

typedef struct {
    const char *name;
    size_t ivlen;
    EVP_CIPHER *ours;
    EVP_CIPHER *ref; /* default provider's, NULL for XChaCha */
} alg;

static alg aeads[2];
static EVP_CIPHER *cc_ours, *cc_ref;

static uint8_t key[32], iv[24], iv2[24], aad[40], pt[300];

static int set_size(EVP_CIPHER_CTX *ctx, const char *name, size_t v)
{
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_size_t(name, &v), OSSL_PARAM_construct_end() };
    return EVP_CIPHER_CTX_set_params(ctx, p);
}

static int get_size(EVP_CIPHER_CTX *ctx, const char *name, size_t *v)
{
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_size_t(name, v), OSSL_PARAM_construct_end() };
    return EVP_CIPHER_CTX_get_params(ctx, p) && OSSL_PARAM_modified(p);
}

static int upd(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t n)
{
    int outl = -1;
    int ok = EVP_CipherUpdate(ctx, out, &outl, in, (int)n);
    return ok && outl == (int)n;
}

/* Raw results for calls that must be refused (an outl mismatch is not a refusal). */
static int updr(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t n)
{
    int outl = -1;
    return EVP_CipherUpdate(ctx, out, &outl, in, (int)n);
}

static int finr(EVP_CIPHER_CTX *ctx)
{
    uint8_t sink[32];
    int outl = -1;
    return EVP_CipherFinal_ex(ctx, sink, &outl);
}

static int fin(EVP_CIPHER_CTX *ctx)
{
    uint8_t sink[32];
    int outl = -1;
    int ok = EVP_CipherFinal_ex(ctx, sink, &outl);
    return ok && outl == 0;
}

/* One-shot seal with the given cipher; returns 1 on success. */
static int seal(EVP_CIPHER *c, const uint8_t *k, const uint8_t *n, const uint8_t *a, size_t alen,
                const uint8_t *in, size_t len, uint8_t *out, uint8_t tag[TAGLEN])
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok = ctx != NULL && EVP_EncryptInit_ex(ctx, c, NULL, k, n)
             && (alen == 0 || upd(ctx, NULL, a, alen)) && upd(ctx, out, in, len) && fin(ctx)
             && t_get_tag(ctx, tag, TAGLEN);
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* Reference seal: default provider, or a fresh chapoly context for XChaCha. */
static int ref_seal(const alg *a, const uint8_t *n, size_t alen, size_t len, uint8_t *out,
                    uint8_t tag[TAGLEN])
{
    return seal(a->ref ? a->ref : a->ours, key, n, aad, alen, pt, len, out, tag);
}

/* ---------------------------------------------------------------------- */

static void test_decrypt_final_without_tag(const alg *a)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t out[300];

    /* default: EVP_DecryptFinal_ex returns 1 (tag_len 0, nothing compared). */
    T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv), "%s decrypt init", a->name);
    T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, out, pt, 100), "%s decrypt update", a->name);
    T_REJECT(finr(ctx), "%s: decrypt final with no expected tag", a->name);

    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv2), "%s decrypt re-init", a->name);
    T_REJECT(finr(ctx), "%s: decrypt final of an empty message with no expected tag", a->name);

    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s decrypt re-init", a->name);
    T_ACCEPT(upd(ctx, NULL, aad, 13), "%s AAD", a->name);
    T_REJECT(finr(ctx), "%s: decrypt final after AAD only, no expected tag", a->name);

    /* EVP_Cipher-style finalisation must not verify against "nothing" either. */
    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s decrypt re-init", a->name);
    T_ACCEPT(EVP_Cipher(ctx, out, pt, 50) == 50, "%s EVP_Cipher data", a->name);
    T_REJECT(EVP_Cipher(ctx, NULL, NULL, 0) >= 0 ? 1 : 0,
             "%s: EVP_Cipher finalise on decrypt with no expected tag", a->name);

    /*
     * An expected tag belongs to one message: after a successful open, the
     * same message replayed after a re-init without a new tag must not verify
     * against the previous message's tag.
     */
    uint8_t rct[300], rtag[TAGLEN];
    T_OK(ref_seal(a, iv, 13, 100, rct, rtag), "%s reference seal", a->name);
    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s decrypt re-init", a->name);
    T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN) && upd(ctx, NULL, aad, 13) && upd(ctx, out, rct, 100)
                 && fin(ctx),
             "%s open", a->name);
    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s decrypt re-init", a->name);
    T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, out, rct, 100), "%s replay updates", a->name);
    T_REJECT(finr(ctx), "%s: decrypt final reusing the previous message's expected tag",
             a->name);
    EVP_CIPHER_CTX_free(ctx);
}

static void test_tag_read_before_final(const alg *a)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t out[300], tag[TAGLEN], rtag[TAGLEN], rct[300];

    /* default: get tag returns 1 with whatever stale bytes the context holds. */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv), "%s encrypt init", a->name);
    T_REJECT(t_get_tag(ctx, tag, TAGLEN), "%s: get tag right after init", a->name);
    T_ACCEPT(upd(ctx, NULL, aad, 13), "%s AAD", a->name);
    T_REJECT(t_get_tag(ctx, tag, TAGLEN), "%s: get tag after AAD", a->name);
    T_ACCEPT(upd(ctx, out, pt, 77), "%s update", a->name);
    T_REJECT(t_get_tag(ctx, tag, TAGLEN), "%s: get tag after data, before final", a->name);
    T_ACCEPT(fin(ctx), "%s encrypt final", a->name);
    T_ACCEPT(t_get_tag(ctx, tag, TAGLEN), "%s get tag after final", a->name);
    T_OK(ref_seal(a, iv, 13, 77, rct, rtag), "%s reference seal", a->name);
    T_OK(memcmp(out, rct, 77) == 0 && memcmp(tag, rtag, TAGLEN) == 0,
         "%s: sealed bytes/tag differ from reference", a->name);
    /* Truncated tag reads are allowed (as default): the first n bytes. */
    uint8_t t8[8];
    T_ACCEPT(t_get_tag(ctx, t8, 8), "%s get 8-byte tag after final", a->name);
    T_OK(memcmp(t8, rtag, 8) == 0, "%s: 8-byte tag read is not the tag prefix", a->name);
    T_REJECT(t_get_tag(ctx, tag, 0), "%s: get 0-byte tag", a->name);
    uint8_t t17[17];
    T_REJECT(t_get_tag(ctx, t17, 17), "%s: get 17-byte tag", a->name);

    /* A re-init with a new IV forgets the old tag. */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv2), "%s re-init", a->name);
    T_REJECT(t_get_tag(ctx, tag, TAGLEN), "%s: get tag after re-init, before final", a->name);

    /* The tag is never readable on a decrypt context (default: same). */
    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s decrypt init", a->name);
    T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN), "%s set tag", a->name);
    T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, out, rct, 77) && fin(ctx), "%s open", a->name);
    T_REJECT(t_get_tag(ctx, tag, TAGLEN), "%s: get tag on a decrypt context", a->name);
    EVP_CIPHER_CTX_free(ctx);
}

static void test_aad_after_data(const alg *a)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t out[300], tag[TAGLEN], rct[300], rtag[TAGLEN];

    /* default: accepted; the late AAD is hashed as if it were text (wrong tag). */
    for (int enc = 1; enc >= 0; enc--) {
        T_ACCEPT(EVP_CipherInit_ex(ctx, a->ours, NULL, key, iv, enc), "%s init", a->name);
        T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, out, pt, 20), "%s AAD + data", a->name);
        T_REJECT(updr(ctx, NULL, aad, 5), "%s: AAD after data (%s)", a->name,
                 enc ? "encrypt" : "decrypt");
        T_REJECT(updr(ctx, NULL, aad, 5), "%s: AAD after data, second attempt (%s)", a->name,
                 enc ? "encrypt" : "decrypt");
        /* Even one byte of data closes the AAD. */
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv2, enc), "%s re-init", a->name);
        T_ACCEPT(upd(ctx, out, pt, 1), "%s 1 byte of data", a->name);
        T_REJECT(updr(ctx, NULL, aad, 16), "%s: AAD after 1 data byte (%s)", a->name,
                 enc ? "encrypt" : "decrypt");
    }
    /* After a fresh init the context works and matches the reference. */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s re-init", a->name);
    T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, out, pt, 20) && fin(ctx)
                 && t_get_tag(ctx, tag, TAGLEN),
             "%s seal after rejected AAD", a->name);
    T_OK(ref_seal(a, iv, 13, 20, rct, rtag) && memcmp(out, rct, 20) == 0
             && memcmp(tag, rtag, TAGLEN) == 0,
         "%s: seal after a rejected late AAD differs from reference", a->name);
    EVP_CIPHER_CTX_free(ctx);
}

static void test_use_after_final(const alg *a)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t out[300], tag[TAGLEN], rct[300], rtag[TAGLEN];

    /*
     * default: update after final returns 1 and restarts the keystream with
     * the same nonce (a two-time pad); a second final returns 1.
     */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv), "%s init", a->name);
    T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, out, pt, 64) && fin(ctx), "%s seal", a->name);
    T_REJECT(finr(ctx), "%s: encrypt final twice", a->name);
    T_REJECT(updr(ctx, out, pt, 10), "%s: encrypt update after final", a->name);
    T_REJECT(updr(ctx, NULL, aad, 10), "%s: AAD after final", a->name);
    T_REJECT(EVP_Cipher(ctx, out, pt, 10) >= 0 ? 1 : 0, "%s: EVP_Cipher after final", a->name);

    /* Re-init with a new IV (key kept) makes it usable again. */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv2), "%s re-init with new IV", a->name);
    T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, out, pt, 64) && fin(ctx)
                 && t_get_tag(ctx, tag, TAGLEN),
             "%s seal after re-init", a->name);
    T_OK(ref_seal(a, iv2, 13, 64, rct, rtag) && memcmp(out, rct, 64) == 0
             && memcmp(tag, rtag, TAGLEN) == 0,
         "%s: seal after re-init with new IV differs from reference", a->name);

    /* Same on decrypt. */
    uint8_t back[300];
    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv2), "%s decrypt init", a->name);
    T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN) && upd(ctx, NULL, aad, 13) && upd(ctx, back, rct, 64)
                 && fin(ctx),
             "%s open", a->name);
    T_OK(memcmp(back, pt, 64) == 0, "%s: opened text differs", a->name);
    /* default: a second decrypt final returns 0 but queues no error; update returns 1. */
    T_REJECT(finr(ctx), "%s: decrypt final twice", a->name);
    T_REJECT(updr(ctx, back, rct, 10), "%s: decrypt update after final", a->name);
    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv2), "%s decrypt re-init", a->name);
    T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN) && upd(ctx, NULL, aad, 13) && upd(ctx, back, rct, 64)
                 && fin(ctx),
             "%s open after re-init", a->name);

    /*
     * A failed open also ends the message. default: a tag mismatch returns 0
     * without queuing an error (here and in every corruption case below).
     */
    uint8_t bad[TAGLEN];
    memcpy(bad, rtag, TAGLEN);
    bad[0] ^= 1;
    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv2), "%s decrypt re-init", a->name);
    T_ACCEPT(t_set_tag(ctx, bad, TAGLEN) && upd(ctx, NULL, aad, 13) && upd(ctx, back, rct, 64),
             "%s open with bad tag: updates", a->name);
    T_REJECT(finr(ctx), "%s: decrypt final with a wrong tag", a->name);
    T_REJECT(finr(ctx), "%s: decrypt final again after a failed final", a->name);
    EVP_CIPHER_CTX_free(ctx);
}

static void test_tag_lengths(const alg *a)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t rct[300], rtag[TAGLEN], back[300];
    size_t tl = 0;

    T_OK(ref_seal(a, iv, 13, 100, rct, rtag), "%s reference seal", a->name);

    /* default: taglen reads 0 until a tag is set. */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv), "%s init", a->name);
    T_OK(get_size(ctx, OSSL_CIPHER_PARAM_AEAD_TAGLEN, &tl) && tl == TAGLEN,
         "%s: taglen on a fresh encrypt context is %zu, want 16", a->name, tl);
    T_OK(EVP_CIPHER_CTX_get_tag_length(ctx) == TAGLEN, "%s: EVP_CIPHER_CTX_get_tag_length",
         a->name);
    tl = 0;
    T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s decrypt init", a->name);
    T_OK(get_size(ctx, OSSL_CIPHER_PARAM_AEAD_TAGLEN, &tl) && tl == TAGLEN,
         "%s: taglen on a decrypt context before a tag is set is %zu, want 16", a->name, tl);

    /* 0 and 17 rejected (default: same). */
    T_REJECT(t_set_tag(ctx, rtag, 0), "%s: 0-byte expected tag", a->name);
    uint8_t long_tag[17];
    memcpy(long_tag, rtag, TAGLEN);
    long_tag[16] = 0;
    T_REJECT(t_set_tag(ctx, long_tag, 17), "%s: 17-byte expected tag", a->name);

    /* 1..16 accepted; a truncated correct tag verifies, a flipped one does not. */
    for (size_t n = 1; n <= TAGLEN; n++) {
        T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s decrypt init", a->name);
        T_ACCEPT(t_set_tag(ctx, rtag, n), "%s: %zu-byte expected tag", a->name, n);
        tl = 0;
        T_OK(get_size(ctx, OSSL_CIPHER_PARAM_AEAD_TAGLEN, &tl) && tl == n,
             "%s: taglen after setting a %zu-byte tag reads %zu", a->name, n, tl);
        T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, back, rct, 100) && fin(ctx),
                 "%s: open with the correct %zu-byte truncated tag", a->name, n);

        uint8_t bad[TAGLEN];
        memcpy(bad, rtag, TAGLEN);
        bad[n - 1] ^= 0x80;
        T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s decrypt init", a->name);
        T_ACCEPT(t_set_tag(ctx, bad, n) && upd(ctx, NULL, aad, 13) && upd(ctx, back, rct, 100),
                 "%s: updates with a bad %zu-byte tag", a->name, n);
        T_REJECT(finr(ctx), "%s: open with a wrong %zu-byte tag", a->name, n);
    }

    /* Encrypt: a tag with data is refused (default: same, "tag not needed"). */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s encrypt init", a->name);
    T_REJECT(t_set_tag(ctx, rtag, TAGLEN), "%s: set tag with data on encrypt", a->name);
    T_REJECT(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAGLEN, rtag),
             "%s: EVP_CTRL_AEAD_SET_TAG with data on encrypt", a->name);
    /* A tag length without data on encrypt only records the length (as default). */
    T_ACCEPT(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAGLEN, NULL),
             "%s: EVP_CTRL_AEAD_SET_TAG(16, NULL) on encrypt", a->name);
    EVP_CIPHER_CTX_free(ctx);
}

/* keylen: only 32 (default: same); ivlen: only the algorithm's own. */
static void test_key_iv_lengths(const char *name, EVP_CIPHER *c, size_t ivlen, int aead)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    static const size_t bad_keylens[] = { 16, 31, 33, 0, 64 };
    static const size_t try_ivlens[] = { 8, 12, 16, 24, 0, 13, 32 };
    size_t v = 0;

    T_ACCEPT(EVP_CipherInit_ex(ctx, c, NULL, NULL, NULL, 1), "%s init without key", name);
    T_OK(EVP_CIPHER_CTX_get_key_length(ctx) == 32, "%s: keylen before key is %d", name,
         EVP_CIPHER_CTX_get_key_length(ctx));
    T_OK(EVP_CIPHER_CTX_get_iv_length(ctx) == (int)ivlen, "%s: ivlen before key is %d", name,
         EVP_CIPHER_CTX_get_iv_length(ctx));
    for (size_t i = 0; i < sizeof(bad_keylens) / sizeof(bad_keylens[0]); i++)
        T_REJECT(set_size(ctx, OSSL_CIPHER_PARAM_KEYLEN, bad_keylens[i]), "%s: set keylen %zu",
                 name, bad_keylens[i]);
    T_REJECT(EVP_CIPHER_CTX_set_key_length(ctx, 16), "%s: EVP_CIPHER_CTX_set_key_length 16",
             name);
    T_ACCEPT(set_size(ctx, OSSL_CIPHER_PARAM_KEYLEN, 32), "%s: set keylen 32", name);
    T_OK(get_size(ctx, OSSL_CIPHER_PARAM_KEYLEN, &v) && v == 32, "%s: keylen reads %zu", name, v);

    for (size_t i = 0; i < sizeof(try_ivlens) / sizeof(try_ivlens[0]); i++) {
        size_t n = try_ivlens[i];
        if (n == ivlen)
            T_ACCEPT(set_size(ctx, OSSL_CIPHER_PARAM_IVLEN, n), "%s: set ivlen %zu", name, n);
        else
            T_REJECT(set_size(ctx, OSSL_CIPHER_PARAM_IVLEN, n), "%s: set ivlen %zu", name, n);
        if (aead) {
            /* The way applications ask (TLS 1.3 key setup sends 12). */
            if (n == ivlen)
                T_ACCEPT(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)n, NULL),
                         "%s: EVP_CTRL_AEAD_SET_IVLEN %zu", name, n);
            else
                T_REJECT(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)n, NULL),
                         "%s: EVP_CTRL_AEAD_SET_IVLEN %zu", name, n);
        }
        T_OK(EVP_CIPHER_CTX_get_iv_length(ctx) == (int)ivlen,
             "%s: ivlen reads %d after trying %zu", name, EVP_CIPHER_CTX_get_iv_length(ctx), n);
    }
    /* After all the rejected settings the context still works with a key and IV. */
    uint8_t out[64];
    T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, 1), "%s init with key", name);
    T_ACCEPT(upd(ctx, out, pt, 64), "%s update after rejected lengths", name);
    EVP_CIPHER_CTX_free(ctx);
}

/*
 * default: ChaCha20 refuses update/EVP_Cipher with "no key set"; ChaCha20-Poly1305
 * accepts AAD, update and EVP_Cipher without a key (it runs on an all-zero key
 * state) and only the decrypt final fails, without an error queued.
 */
static void test_no_key(const char *name, EVP_CIPHER *c, int aead)
{
    for (int enc = 1; enc >= 0; enc--) {
        const char *dir = enc ? "encrypt" : "decrypt";
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        uint8_t out[300];
        uint8_t t[TAGLEN] = { 0 };

        T_ACCEPT(EVP_CipherInit_ex(ctx, c, NULL, NULL, NULL, enc), "%s %s init, no key", name,
                 dir);
        T_REJECT(updr(ctx, out, pt, 64), "%s %s: update, no key, no IV", name, dir);
        if (aead)
            T_REJECT(updr(ctx, NULL, aad, 13), "%s %s: AAD, no key, no IV", name, dir);
        T_REJECT(EVP_Cipher(ctx, out, pt, 64) >= 0 ? 1 : 0, "%s %s: EVP_Cipher, no key", name,
                 dir);

        /* Only an IV: still no key. */
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc), "%s %s init with IV only",
                 name, dir);
        if (aead && !enc)
            T_ACCEPT(t_set_tag(ctx, t, TAGLEN), "%s set tag", name);
        T_REJECT(updr(ctx, out, pt, 64), "%s %s: update with IV but no key", name, dir);
        if (aead)
            T_REJECT(finr(ctx), "%s %s: final with IV but no key", name, dir);

        /* Supplying the key afterwards makes it work. */
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, enc), "%s %s init with key", name,
                 dir);
        T_ACCEPT(upd(ctx, out, pt, 64), "%s %s update with key", name, dir);
        EVP_CIPHER_CTX_free(ctx);
    }
}

static void test_corruption(const alg *a)
{
    static const size_t lens[] = { 0, 1, 64, 300 };
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

    for (size_t li = 0; li < 4; li++) {
        size_t len = lens[li];
        uint8_t ct[300], tag[TAGLEN], back[300];
        T_OK(ref_seal(a, iv, 29, len, ct, tag), "%s reference seal", a->name);

        /* 0: ct byte, 1: aad byte, 2: tag byte, 3: AAD one byte short, 4: ct one byte short. */
        for (int what = 0; what < 5; what++) {
            if ((what == 0 || what == 4) && len == 0)
                continue;
            for (int rep = 0; rep < 3; rep++) {
                uint8_t c2[300], a2[40], t2[TAGLEN];
                size_t alen = 29, clen = len;
                memcpy(c2, ct, len);
                memcpy(a2, aad, alen);
                memcpy(t2, tag, TAGLEN);
                uint8_t bit = (uint8_t)(1u << t_rand_below(8));
                switch (what) {
                case 0: c2[t_rand_below(len)] ^= bit; break;
                case 1: a2[t_rand_below(alen)] ^= bit; break;
                case 2: t2[t_rand_below(TAGLEN)] ^= bit; break;
                case 3: alen--; break;
                default: clen--; break;
                }
                int outl = -1;
                T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv), "%s init", a->name);
                T_ACCEPT(t_set_tag(ctx, t2, TAGLEN) && upd(ctx, NULL, a2, alen)
                             && upd(ctx, back, c2, clen),
                         "%s corrupted open: updates", a->name);
                T_REJECT(EVP_DecryptFinal_ex(ctx, back + clen, &outl),
                         "%s len %zu: corruption %d (rep %d) not detected", a->name, len, what,
                         rep);
                T_OK(outl <= 0, "%s: failed final reported outl %d", a->name, outl);
            }
        }
        /* The untouched message still opens. */
        T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv), "%s init", a->name);
        T_ACCEPT(t_set_tag(ctx, tag, TAGLEN) && upd(ctx, NULL, aad, 29) && upd(ctx, back, ct, len)
                     && fin(ctx),
                 "%s len %zu: intact message rejected", a->name, len);
        T_OK(memcmp(back, pt, len) == 0, "%s len %zu: opened text differs", a->name, len);
    }
    EVP_CIPHER_CTX_free(ctx);
}

/* TLS 1.2 record mode (ChaCha20-Poly1305 only: libssl's path). */
static int tls_aad(EVP_CIPHER_CTX *ctx, uint64_t seq, size_t len)
{
    uint8_t a[13];
    for (int i = 0; i < 8; i++)
        a[i] = (uint8_t)(seq >> (56 - 8 * i));
    a[8] = 23;
    a[9] = 3;
    a[10] = 3;
    a[11] = (uint8_t)(len >> 8);
    a[12] = (uint8_t)len;
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 13, a);
}

static void test_tls(const alg *a)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new(), *rctx = EVP_CIPHER_CTX_new();
    uint8_t rec[300 + TAGLEN], ref[300 + TAGLEN];
    int outl = -1, routl = -1;

    /* Positive: a sealed record equals default's, and opens. */
    for (size_t len = 0; len <= 257; len += 257 / 4) {
        uint64_t seq = 0x0102030405060708ULL + len;
        memcpy(rec, pt, len);
        memcpy(ref, pt, len);
        outl = routl = -1;
        T_ACCEPT(EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv), "tls init");
        T_OK(tls_aad(ctx, seq, len) == TAGLEN, "%s: tlsaad on encrypt did not return 16",
             a->name);
        T_ACCEPT(EVP_EncryptUpdate(ctx, rec, &outl, rec, (int)(len + TAGLEN)),
                 "%s: TLS seal of %zu bytes", a->name, len);
        T_OK(outl == (int)(len + TAGLEN), "%s: TLS seal outl %d, want %zu", a->name, outl,
             len + TAGLEN);
        T_OK(EVP_EncryptInit_ex(rctx, a->ref, NULL, key, iv) && tls_aad(rctx, seq, len) == TAGLEN
                 && EVP_EncryptUpdate(rctx, ref, &routl, ref, (int)(len + TAGLEN)),
             "default TLS seal");
        T_OK(routl == outl && memcmp(rec, ref, len + TAGLEN) == 0,
             "%s: TLS record of %zu bytes differs from default", a->name, len);

        outl = -1;
        T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv), "tls init");
        T_OK(tls_aad(ctx, seq, len + TAGLEN) == TAGLEN, "%s: tlsaad on decrypt did not return 16",
             a->name);
        T_ACCEPT(EVP_DecryptUpdate(ctx, rec, &outl, rec, (int)(len + TAGLEN)),
                 "%s: TLS open of %zu bytes", a->name, len);
        T_OK(outl == (int)len && memcmp(rec, pt, len) == 0, "%s: TLS open of %zu bytes: outl %d",
             a->name, len, outl);

        /* Tampered record: fails, output zeroed (as default, which queues no error). */
        memcpy(rec, ref, len + TAGLEN);
        rec[t_rand_below(len + TAGLEN)] ^= 4;
        T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv), "tls init");
        T_OK(tls_aad(ctx, seq, len + TAGLEN) == TAGLEN, "tlsaad");
        T_REJECT(EVP_DecryptUpdate(ctx, rec, &outl, rec, (int)(len + TAGLEN)),
                 "%s: tampered TLS record of %zu bytes", a->name, len);
        int zero = 1;
        for (size_t i = 0; i < len; i++)
            zero &= rec[i] == 0;
        T_OK(zero, "%s: output of a rejected TLS record (%zu bytes) not zeroed", a->name, len);
    }

    /*
     * Record shorter than the tag, and update sizes that disagree with the
     * AAD length: default refuses them too, but only the tlsaad case queues an
     * error; the refused updates return 0 with an empty error queue.
     */
    T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv), "tls init");
    T_REJECT(tls_aad(ctx, 1, 15), "%s: tlsaad on decrypt with record length 15", a->name);
    T_REJECT(tls_aad(ctx, 1, 0), "%s: tlsaad on decrypt with record length 0", a->name);
    T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv), "tls init");
    T_OK(tls_aad(ctx, 1, 20) == TAGLEN, "tlsaad 20");
    T_REJECT(EVP_DecryptUpdate(ctx, rec, &outl, rec, 15), "%s: TLS open update with inl 15",
             a->name);
    T_ACCEPT(EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv), "tls init");
    T_OK(tls_aad(ctx, 1, 0) == TAGLEN, "tlsaad 0");
    T_REJECT(EVP_EncryptUpdate(ctx, rec, &outl, rec, 10), "%s: TLS seal update with inl 10",
             a->name);
    T_ACCEPT(EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv), "tls init");
    T_OK(tls_aad(ctx, 1, 10) == TAGLEN, "tlsaad 10");
    T_REJECT(EVP_EncryptUpdate(ctx, rec, &outl, rec, 30), "%s: TLS seal, inl 30 for length 10",
             a->name);

    /* default: EVP_Cipher(ctx, buf, buf, 0) in TLS mode returns 0 (success, no output). */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv), "tls init");
    T_OK(tls_aad(ctx, 1, 10) == TAGLEN, "tlsaad 10");
    ERR_clear_error();
    T_OK(EVP_Cipher(ctx, rec, rec, 0) < 0, "%s: EVP_Cipher with 0 bytes in TLS mode accepted",
         a->name);
    T_OK(t_error_queued(), "%s: EVP_Cipher with 0 bytes in TLS mode: no error queued", a->name);
    T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv), "tls init");
    T_OK(tls_aad(ctx, 1, 26) == TAGLEN, "tlsaad 26");
    ERR_clear_error();
    T_OK(EVP_Cipher(ctx, rec, rec, 0) < 0,
         "%s: EVP_Cipher with 0 bytes in TLS decrypt mode accepted", a->name);
    T_OK(t_error_queued(), "%s: EVP_Cipher 0 bytes TLS decrypt: no error queued", a->name);

    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_CTX_free(rctx);
}

static void test_mac_outsize(void)
{
    EVP_MAC *m = t_mac("POLY1305", 1);
    EVP_MAC_CTX *mc = m ? EVP_MAC_CTX_new(m) : NULL;
    uint8_t out[16];
    size_t outl = 0;

    T_OK(mc != NULL, "POLY1305 MAC context");
    if (mc != NULL) {
        T_ACCEPT(EVP_MAC_init(mc, key, 32, NULL) && EVP_MAC_update(mc, pt, 33), "MAC init+update");
        T_REJECT(EVP_MAC_final(mc, out, &outl, 15), "POLY1305 final with outsize 15");
        T_ACCEPT(EVP_MAC_final(mc, out, &outl, 16) && outl == 16, "POLY1305 final outsize 16");
    }
    EVP_MAC_CTX_free(mc);
    EVP_MAC_free(m);
}

/* Unknown and libssl/apps-only ctx params are ignored with success (default: same). */
static void test_unknown_params(const char *name, EVP_CIPHER *c)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int tlsver = 0x0303;
    size_t macsize = 0;
    unsigned int uval = 7;
    OSSL_PARAM p1[2] = { OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_TLS_VERSION, &tlsver),
                         OSSL_PARAM_construct_end() };
    OSSL_PARAM p2[2] = { OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &macsize),
                         OSSL_PARAM_construct_end() };
    OSSL_PARAM p3[3] = { OSSL_PARAM_construct_utf8_string("chapoly-no-such-param", "x", 0),
                         OSSL_PARAM_construct_uint("zz-made-up", &uval),
                         OSSL_PARAM_construct_end() };
    uint8_t out[64], ref[64];

    T_ACCEPT(EVP_EncryptInit_ex(ctx, c, NULL, NULL, NULL), "%s init", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_padding(ctx, 0), "%s: set_padding(0) before key", name);
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv), "%s init key", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_padding(ctx, 0), "%s: set_padding(0)", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_padding(ctx, 1), "%s: set_padding(1)", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_params(ctx, p1), "%s: tls-version (int)", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_params(ctx, p2), "%s: tls-mac-size (size_t)", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_params(ctx, p3), "%s: made-up params", name);
    /* The ignored params changed nothing: stream matches a clean context. */
    T_ACCEPT(upd(ctx, out, pt, 64), "%s update after unknown params", name);
    EVP_CIPHER_CTX *c2 = EVP_CIPHER_CTX_new();
    T_OK(EVP_EncryptInit_ex(c2, c, NULL, key, iv) && upd(c2, ref, pt, 64)
             && memcmp(out, ref, 64) == 0,
         "%s: output changed by ignored params", name);
    EVP_CIPHER_CTX_free(c2);
    EVP_CIPHER_CTX_free(ctx);
}

typedef struct {
    unsigned int mode;
    size_t keylen, ivlen, blocksize;
    int aead, custom_iv;
    int ok;
} alg_params;

static alg_params read_alg_params(EVP_CIPHER *c)
{
    alg_params v;
    memset(&v, 0xee, sizeof(v));
    OSSL_PARAM p[7] = { OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_MODE, &v.mode),
                        OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_KEYLEN, &v.keylen),
                        OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_IVLEN, &v.ivlen),
                        OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, &v.blocksize),
                        OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_AEAD, &v.aead),
                        OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_CUSTOM_IV, &v.custom_iv),
                        OSSL_PARAM_construct_end() };
    v.ok = EVP_CIPHER_get_params(c, p);
    for (int i = 0; i < 6; i++)
        v.ok = v.ok && OSSL_PARAM_modified(&p[i]);
    return v;
}

static void compare_alg_params(const char *name, EVP_CIPHER *ours, EVP_CIPHER *ref, int aead)
{
    alg_params o = read_alg_params(ours), r = read_alg_params(ref);

    T_OK(o.ok, "%s: get_params did not answer all of mode/keylen/ivlen/blocksize/aead/custom-iv",
         name);
    T_OK(r.ok, "%s: default get_params", name);
    T_OK(o.mode == r.mode, "%s: mode %u, default %u", name, o.mode, r.mode);
    T_OK(o.keylen == r.keylen, "%s: keylen %zu, default %zu", name, o.keylen, r.keylen);
    T_OK(o.ivlen == r.ivlen, "%s: ivlen %zu, default %zu", name, o.ivlen, r.ivlen);
    T_OK(o.blocksize == r.blocksize, "%s: blocksize %zu, default %zu", name, o.blocksize,
         r.blocksize);
    T_OK(o.aead == r.aead, "%s: aead %d, default %d", name, o.aead, r.aead);
    T_OK(o.custom_iv == r.custom_iv, "%s: custom-iv %d, default %d", name, o.custom_iv,
         r.custom_iv);
    T_OK(EVP_CIPHER_get_mode(ours) == EVP_CIPHER_get_mode(ref), "%s: EVP_CIPHER_get_mode", name);
    T_OK(EVP_CIPHER_get_key_length(ours) == 32 && EVP_CIPHER_get_iv_length(ours)
             == EVP_CIPHER_get_iv_length(ref),
         "%s: EVP key/iv length", name);
    T_OK(EVP_CIPHER_get_block_size(ours) == 1, "%s: block size", name);
    T_OK(EVP_CIPHER_get_flags(ours) == EVP_CIPHER_get_flags(ref),
         "%s: flags %#lx, default %#lx", name, EVP_CIPHER_get_flags(ours),
         EVP_CIPHER_get_flags(ref));
    T_OK(((EVP_CIPHER_get_flags(ours) & EVP_CIPH_FLAG_AEAD_CIPHER) != 0) == aead,
         "%s: EVP_CIPH_FLAG_AEAD_CIPHER %s", name, aead ? "missing" : "set");
    T_OK(EVP_CIPHER_get_nid(ours) == EVP_CIPHER_get_nid(ref) && EVP_CIPHER_get_nid(ours) != 0,
         "%s: nid %d, default %d", name, EVP_CIPHER_get_nid(ours), EVP_CIPHER_get_nid(ref));
}

/*
 * Algorithm parameters asked for with NULL data in every numeric type: a
 * size query for each, never a crash.
 */
static void test_alg_params_null_data(const char *name, EVP_CIPHER *c)
{
    static const char *const keys[] = {
        OSSL_CIPHER_PARAM_MODE, OSSL_CIPHER_PARAM_KEYLEN, OSSL_CIPHER_PARAM_IVLEN,
        OSSL_CIPHER_PARAM_BLOCK_SIZE, OSSL_CIPHER_PARAM_AEAD, OSSL_CIPHER_PARAM_CUSTOM_IV,
        OSSL_CIPHER_PARAM_CTS, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, OSSL_CIPHER_PARAM_HAS_RAND_KEY
    };
    static const unsigned types[] = { OSSL_PARAM_INTEGER, OSSL_PARAM_UNSIGNED_INTEGER,
                                      OSSL_PARAM_REAL };

    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            OSSL_PARAM p[2] = { { keys[k], types[t], NULL, 8, OSSL_PARAM_UNMODIFIED },
                                OSSL_PARAM_END };

            T_ACCEPT(EVP_CIPHER_get_params(c, p), "%s: get %s (type %u) with NULL data", name,
                     keys[k], types[t]);
            T_OK(p[0].return_size != OSSL_PARAM_UNMODIFIED && p[0].return_size != 0,
                 "%s: get %s (type %u) with NULL data: no size answered", name, keys[k],
                 types[t]);
        }
    }
}

static void test_alg_params(void)
{
    compare_alg_params("ChaCha20-Poly1305", aeads[0].ours, aeads[0].ref, 1);
    compare_alg_params("ChaCha20", cc_ours, cc_ref, 0);

    /* XChaCha20-Poly1305 has no default twin: ChaCha20-Poly1305's values but a 24-byte IV. */
    alg_params x = read_alg_params(aeads[1].ours), r = read_alg_params(aeads[0].ref);
    T_OK(x.ok, "XChaCha20-Poly1305: get_params incomplete");
    T_OK(x.mode == r.mode && x.keylen == 32 && x.ivlen == 24 && x.blocksize == 1 && x.aead == 1
             && x.custom_iv == 1,
         "XChaCha20-Poly1305 params: mode %u keylen %zu ivlen %zu blocksize %zu aead %d "
         "custom-iv %d",
         x.mode, x.keylen, x.ivlen, x.blocksize, x.aead, x.custom_iv);
    T_OK(EVP_CIPHER_get_flags(aeads[1].ours) & EVP_CIPH_FLAG_AEAD_CIPHER,
         "XChaCha20-Poly1305: EVP_CIPH_FLAG_AEAD_CIPHER missing");
    T_OK(EVP_CIPHER_get_iv_length(aeads[1].ours) == 24, "XChaCha20-Poly1305: iv length");
}

/* ---- the state machine keeps its promises -------------------------------- */

static EVP_CIPHER *ref_of(const alg *a)
{
    return a->ref ? a->ref : a->ours;
}

/*
 * One whole message (13 bytes of AAD, 100 of text) on ctx, already started
 * with key k and nonce n: sealed, it must equal the reference; opened (the
 * reference ciphertext and tag), it must verify and give pt back.
 */
static int whole_message_ok(const alg *a, EVP_CIPHER_CTX *ctx, int enc, const uint8_t *k,
                            const uint8_t *n)
{
    uint8_t rct[100], rtag[TAGLEN], out[100], tag[TAGLEN];

    if (!seal(ref_of(a), k, n, aad, 13, pt, 100, rct, rtag))
        return 0;
    if (enc)
        return upd(ctx, NULL, aad, 13) && upd(ctx, out, pt, 100) && fin(ctx)
               && t_get_tag(ctx, tag, TAGLEN) && memcmp(out, rct, 100) == 0
               && memcmp(tag, rtag, TAGLEN) == 0;
    return t_set_tag(ctx, rtag, TAGLEN) && upd(ctx, NULL, aad, 13) && upd(ctx, out, rct, 100)
           && fin(ctx) && memcmp(out, pt, 100) == 0;
}

/* Let the message started on ctx (key, iv) use its IV in one of six ways. */
static int use_iv(const alg *a, EVP_CIPHER_CTX *ctx, int enc, int how)
{
    uint8_t out[300], rct[300], rtag[TAGLEN], etag[TAGLEN];

    if (!seal(ref_of(a), key, iv, aad, 13, pt, 300, rct, rtag)
        || !seal(ref_of(a), key, iv, NULL, 0, pt, 0, out, etag))
        return 0;
    switch (how) {
    case 0: /* a little AAD, still waiting in the context's AAD buffer */
        return upd(ctx, NULL, aad, 13);
    case 1: /* AAD long enough to start the MAC */
        return upd(ctx, NULL, pt, 100);
    case 2: /* text */
        return upd(ctx, out, enc ? pt : rct, 77);
    case 3: /* an empty message, finalised */
        return (enc || t_set_tag(ctx, etag, TAGLEN)) && fin(ctx);
    case 4: /* a whole message */
        return (enc || t_set_tag(ctx, rtag, TAGLEN)) && upd(ctx, NULL, aad, 13)
               && upd(ctx, out, enc ? pt : rct, 300) && fin(ctx);
    default: /* text through EVP_Cipher */
        return EVP_Cipher(ctx, out, enc ? pt : rct, 50) == 50;
    }
}

static const char *const use_name[] = { "short AAD", "long AAD", "text", "empty final",
                                        "whole message", "EVP_Cipher text" };

/*
 * default: EVP_EncryptInit_ex(ctx, NULL, NULL, key, NULL) after a message
 * restarts the previous IV: the same keystream and Poly1305 key again.
 */
static void test_key_only_reinit(const alg *a)
{
    uint8_t key2[32];

    memcpy(key2, key, 32);
    key2[0] ^= 0x5a;
    for (int enc = 1; enc >= 0; enc--) {
        const char *dir = enc ? "encrypt" : "decrypt";

        for (int how = 0; how < 6; how++) {
            for (int same = 0; same < 2; same++) {
                const uint8_t *k2 = same ? key : key2;
                EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
                uint8_t out[64];

                T_ACCEPT(EVP_CipherInit_ex(ctx, a->ours, NULL, key, iv, enc), "%s init", a->name);
                T_ACCEPT(use_iv(a, ctx, enc, how), "%s %s: %s", a->name, dir, use_name[how]);
                T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, k2, NULL, enc), "%s key-only init",
                         a->name);
                T_REJECT_SAYS(updr(ctx, out, pt, 64), "no IV set",
                              "%s %s: text after %s then a key-only init (%s key)", a->name, dir,
                              use_name[how], same ? "same" : "new");
                T_REJECT_SAYS(updr(ctx, NULL, aad, 13), "no IV set",
                              "%s %s: AAD after %s then a key-only init", a->name, dir,
                              use_name[how]);
                T_REJECT_SAYS(EVP_Cipher(ctx, out, pt, 64) >= 0 ? 1 : 0, "no IV set",
                              "%s %s: EVP_Cipher after %s then a key-only init", a->name, dir,
                              use_name[how]);
                if (!enc)
                    T_ACCEPT(t_set_tag(ctx, out, TAGLEN), "%s set tag", a->name);
                T_REJECT_SAYS(finr(ctx), "no IV set",
                              "%s %s: final after %s then a key-only init", a->name, dir,
                              use_name[how]);
                /* A new IV makes it usable, with the new key. */
                T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv2, enc), "%s IV init",
                         a->name);
                T_OK(whole_message_ok(a, ctx, enc, k2, iv2),
                     "%s %s: message with a new IV after the refused key-only re-init", a->name,
                     dir);
                EVP_CIPHER_CTX_free(ctx);
            }
        }

        /* An IV no message has used yet starts the message when the key comes. */
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        T_ACCEPT(EVP_CipherInit_ex(ctx, a->ours, NULL, NULL, NULL, enc), "%s init", a->name);
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc), "%s IV first", a->name);
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key2, NULL, enc), "%s key second", a->name);
        T_OK(whole_message_ok(a, ctx, enc, key2, iv),
             "%s %s: IV first, key second differs from the reference", a->name, dir);
        /* ...also after a message, when the new IV comes before the new key */
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv2, enc), "%s IV first", a->name);
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key, NULL, enc), "%s key second", a->name);
        T_OK(whole_message_ok(a, ctx, enc, key, iv2),
             "%s %s: new IV then new key after a message differs from the reference", a->name,
             dir);
        /* ...and a re-key before anything was processed keeps the IV. */
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, enc), "%s init", a->name);
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key2, NULL, enc), "%s re-key", a->name);
        T_OK(whole_message_ok(a, ctx, enc, key2, iv),
             "%s %s: re-key before any data differs from the reference", a->name, dir);
        /* A zero-length update processes nothing, so it does not use the IV. */
        uint8_t z[1];
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key, iv2, enc), "%s init", a->name);
        T_ACCEPT(upd(ctx, z, pt, 0) && upd(ctx, NULL, aad, 0), "%s zero-length updates",
                 a->name);
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key2, NULL, enc), "%s re-key", a->name);
        T_OK(whole_message_ok(a, ctx, enc, key2, iv2),
             "%s %s: re-key after zero-length updates differs from the reference", a->name,
             dir);

        /* Copies carry the IV's state: a used one stays used, an unused one does not. */
        EVP_CIPHER_CTX *cp = EVP_CIPHER_CTX_new();
        uint8_t out[64];
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, enc), "%s init", a->name);
        T_ACCEPT(use_iv(a, ctx, enc, 1), "%s long AAD", a->name);
        T_ACCEPT(EVP_CIPHER_CTX_copy(cp, ctx), "%s copy", a->name);
        T_ACCEPT(EVP_CipherInit_ex(cp, NULL, NULL, key2, NULL, enc), "%s key-only on the copy",
                 a->name);
        T_REJECT_SAYS(updr(cp, out, pt, 64), "no IV set",
                      "%s %s: copy of a used context, key-only init, update", a->name, dir);
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key2, NULL, enc), "%s key-only", a->name);
        T_REJECT_SAYS(updr(ctx, out, pt, 64), "no IV set",
                      "%s %s: original after the copy, key-only init, update", a->name, dir);
        T_ACCEPT(EVP_CipherInit_ex(ctx, NULL, NULL, key, iv2, enc), "%s init", a->name);
        T_ACCEPT(EVP_CIPHER_CTX_copy(cp, ctx), "%s copy", a->name);
        T_ACCEPT(EVP_CipherInit_ex(cp, NULL, NULL, key2, NULL, enc), "%s key-only on the copy",
                 a->name);
        T_OK(whole_message_ok(a, cp, enc, key2, iv2),
             "%s %s: copy of an unused IV, re-keyed, differs from the reference", a->name, dir);
        T_OK(whole_message_ok(a, ctx, enc, key, iv2),
             "%s %s: original of that copy differs from the reference", a->name, dir);
        EVP_CIPHER_CTX_free(cp);
        EVP_CIPHER_CTX_free(ctx);
    }
}

/*
 * An expected tag set for message A must not verify message B after a
 * re-init. B is built so that the stale tag WOULD verify it (same key, IV,
 * AAD and ciphertext as the message the tag belongs to).
 * default: keeps the tag across inits; the final of B succeeds.
 */
static void test_stale_tag(const alg *a)
{
    uint8_t rct[100], rtag[TAGLEN], back[100];
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

    T_OK(seal(ref_of(a), key, iv, aad, 13, pt, 100, rct, rtag), "%s reference seal", a->name);
    for (int how = 0; how < 5; how++) {
        T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, how == 3 ? iv : iv2),
                 "%s init message A", a->name);
        T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN), "%s tag for message A", a->name);
        switch (how) {
        case 0: /* abandoned before anything was processed */
            break;
        case 1:
            T_ACCEPT(upd(ctx, NULL, aad, 13), "%s A's AAD", a->name);
            break;
        case 2:
            T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, back, rct, 50), "%s A's data", a->name);
            break;
        case 3: /* A is the first half of B itself */
            T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, back, rct, 50), "%s A's data", a->name);
            break;
        default: /* abandoned through a key-only init, which drops the used IV */
            T_ACCEPT(upd(ctx, NULL, aad, 13), "%s A's AAD", a->name);
            T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, key, NULL), "%s key-only", a->name);
            break;
        }
        T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s init message B", a->name);
        T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, back, rct, 100), "%s B's updates", a->name);
        T_REJECT_SAYS(finr(ctx), "tag not set",
                      "%s: message B verified against the tag set for abandoned message A "
                      "(case %d)",
                      a->name, how);
    }

    /* A tag set while no message is in progress is for the next one. */
    for (int how = 0; how < 5; how++) {
        EVP_CIPHER_CTX_free(ctx);
        ctx = EVP_CIPHER_CTX_new();
        switch (how) {
        case 0: /* before the key and the IV */
            T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, NULL, NULL), "%s init", a->name);
            T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN), "%s tag", a->name);
            T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, key, iv), "%s key + IV", a->name);
            break;
        case 1: /* after the key, before the IV */
            T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, NULL), "%s key", a->name);
            T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN), "%s tag", a->name);
            T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s IV", a->name);
            break;
        case 2: /* after the IV, before the key */
            T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, NULL, iv), "%s IV", a->name);
            T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN), "%s tag", a->name);
            T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, key, NULL), "%s key", a->name);
            break;
        case 3: /* after a finished message */
            T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv), "%s init", a->name);
            T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN) && upd(ctx, NULL, aad, 13)
                         && upd(ctx, back, rct, 100) && fin(ctx),
                     "%s first message", a->name);
            T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN), "%s tag after final", a->name);
            T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s IV", a->name);
            break;
        default: /* after a key-only init dropped a used IV */
            T_ACCEPT(EVP_DecryptInit_ex(ctx, a->ours, NULL, key, iv2), "%s init", a->name);
            T_ACCEPT(upd(ctx, NULL, aad, 13), "%s AAD", a->name);
            T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, key, NULL), "%s key-only", a->name);
            T_ACCEPT(t_set_tag(ctx, rtag, TAGLEN), "%s tag", a->name);
            T_ACCEPT(EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv), "%s IV", a->name);
            break;
        }
        T_ACCEPT(upd(ctx, NULL, aad, 13) && upd(ctx, back, rct, 100) && fin(ctx),
                 "%s: tag set between messages (case %d) does not verify the next one",
                 a->name, how);
        T_OK(memcmp(back, pt, 100) == 0, "%s: opened text differs (case %d)", a->name, how);
    }
    EVP_CIPHER_CTX_free(ctx);
}

/*
 * Partially overlapping input and output: refused on every data path. in ==
 * out stays supported, and buffers that only touch are not overlapping.
 * default: accepted; the output is garbage (and an AEAD tag covers it).
 */
#define OVL_MAX 20000
#define OVL_PAD 64

static void test_overlap_one(const char *name, EVP_CIPHER *c, int aead, size_t len,
                             const uint8_t *src, const uint8_t *want, uint8_t *buf)
{
    const long l = (long)len;
    const long shifts[] = { 8, -8, l - 1, 1 - l, l, -l, 0, 63, -63 };

    for (int enc = 1; enc >= 0; enc--) {
        for (size_t si = 0; si < sizeof(shifts) / sizeof(shifts[0]); si++) {
            long sh = shifts[si];
            if (sh > OVL_PAD || sh < -OVL_PAD)
                continue;
            int partial = sh != 0 && (sh < 0 ? -sh : sh) < l;
            uint8_t *in = buf + OVL_PAD, *out = in + sh;

            for (int path = 0; path < 2; path++) {
                EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
                int r = 0, outl = -1;

                T_ACCEPT(EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc), "%s init", name);
                if (aead)
                    T_ACCEPT(upd(ctx, NULL, aad, 13), "%s AAD", name);
                memcpy(in, src, len);
                ERR_clear_error();
                if (path == 0)
                    r = EVP_CipherUpdate(ctx, out, &outl, in, (int)len) && outl == l;
                else
                    r = EVP_Cipher(ctx, out, in, (unsigned int)len) == l;
                if (partial) {
                    T_OK(!r, "%s %s %s: out = in %+ld, %zu bytes accepted", name,
                         enc ? "enc" : "dec", path ? "EVP_Cipher" : "update", sh, len);
                    T_OK(err_says("partially overlapping"),
                         "%s %s %s: out = in %+ld, %zu bytes: no \"partially overlapping\" "
                         "error",
                         name, enc ? "enc" : "dec", path ? "EVP_Cipher" : "update", sh, len);
                } else {
                    T_OK(r && memcmp(out, want, len) == 0,
                         "%s %s %s: out = in %+ld, %zu bytes (no partial overlap) wrong", name,
                         enc ? "enc" : "dec", path ? "EVP_Cipher" : "update", sh, len);
                    if (!r)
                        ERR_print_errors_fp(stderr);
                    ERR_clear_error();
                }
                EVP_CIPHER_CTX_free(ctx);
            }
        }
    }
}

static void test_overlap(const char *name, EVP_CIPHER *c, int aead)
{
    static const size_t lens[] = { 1, 8, 64, 200, 3000, 20000 };
    uint8_t *src = t_xmalloc(OVL_MAX), *want = t_xmalloc(OVL_MAX);
    uint8_t *buf = t_xmalloc(OVL_MAX + 2 * OVL_PAD);

    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
        size_t len = lens[li];
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

        /* The keystream XOR, the same bytes either way: separate buffers, fresh context. */
        t_rand_bytes(src, len);
        T_OK(EVP_EncryptInit_ex(ctx, c, NULL, key, iv) && (!aead || upd(ctx, NULL, aad, 13))
                 && upd(ctx, want, src, len),
             "%s: reference output of %zu bytes", name, len);
        EVP_CIPHER_CTX_free(ctx);
        test_overlap_one(name, c, aead, len, src, want, buf);
    }

    /*
     * Each update is checked on its own: a refused overlapping update in the
     * middle of a message changes nothing, and the message goes on.
     */
    for (int enc = 1; enc >= 0; enc--) {
        const size_t len = 3000;
        uint8_t tag[TAGLEN], tag2[TAGLEN];
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

        t_rand_bytes(src, len);
        T_OK(EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc) && (!aead || upd(ctx, NULL, aad, 13))
                 && upd(ctx, want, src, len) && (!aead || enc || t_set_tag(ctx, tag, TAGLEN)),
             "%s: reference of %zu bytes", name, len);
        if (aead && enc)
            T_OK(fin(ctx) && t_get_tag(ctx, tag, TAGLEN), "%s: reference tag", name);
        EVP_CIPHER_CTX_free(ctx);
        if (aead && !enc) /* the tag of the message whose ciphertext is src */
            T_OK(seal(c, key, iv, aad, 13, want, len, buf, tag) && memcmp(buf, src, len) == 0,
                 "%s: reference tag for opening", name);

        ctx = EVP_CIPHER_CTX_new();
        uint8_t *in = buf + OVL_PAD;
        memcpy(in, src, len);
        T_ACCEPT(EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc), "%s init", name);
        if (aead)
            T_ACCEPT(upd(ctx, NULL, aad, 13), "%s AAD", name);
        T_ACCEPT(upd(ctx, in, in, 100), "%s first 100 bytes in place", name);
        T_REJECT_SAYS(updr(ctx, in + 108, in + 100, 1000), "partially overlapping",
                      "%s %s: second update with out = in + 8", name, enc ? "enc" : "dec");
        T_REJECT_SAYS(EVP_Cipher(ctx, in + 92, in + 100, 1000) >= 0 ? 1 : 0,
                      "partially overlapping", "%s %s: EVP_Cipher with in = out + 8", name,
                      enc ? "enc" : "dec");
        T_ACCEPT(upd(ctx, in + 100, in + 100, len - 100), "%s the rest in place", name);
        T_OK(memcmp(in, want, len) == 0, "%s %s: message with refused updates in the middle "
             "differs", name, enc ? "enc" : "dec");
        if (aead) {
            if (enc)
                T_OK(fin(ctx) && t_get_tag(ctx, tag2, TAGLEN) && memcmp(tag, tag2, TAGLEN) == 0,
                     "%s: tag after refused updates differs", name);
            else
                T_OK(t_set_tag(ctx, tag, TAGLEN) && fin(ctx),
                     "%s: open after refused updates fails", name);
        }
        EVP_CIPHER_CTX_free(ctx);
    }
    free(src);
    free(want);
    free(buf);
}

/*
 * TLS records and streaming messages never share an IV: record 0's nonce is
 * the fixed IV itself. (default: both orders reuse the keystream and the
 * Poly1305 key, and a record can be sealed in the middle of a message.)
 */
static void test_tls_vs_messages(const alg *a)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t rec[64 + TAGLEN], out[64];
    int outl = -1;

    /* A message, final, then a record under the same IV: refused. */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv) && upd(ctx, out, pt, 64) && fin(ctx),
             "%s message", a->name);
    T_REJECT_SAYS(tls_aad(ctx, 0, 64) > 0, "a message has used this IV",
                  "%s: tlsaad after a message under the same IV", a->name);
    /* In the middle of a message, after AAD or after text: refused. */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv2), "%s init", a->name);
    T_ACCEPT(updr(ctx, NULL, aad, 13), "%s AAD", a->name);
    T_REJECT_SAYS(tls_aad(ctx, 0, 64) > 0, "a message has used this IV",
                  "%s: tlsaad after AAD", a->name);
    T_ACCEPT(upd(ctx, out, pt, 64), "%s text", a->name);
    T_REJECT_SAYS(tls_aad(ctx, 0, 64) > 0, "a message has used this IV",
                  "%s: tlsaad after text", a->name);
    /* A record, then a streaming message under the same IV: refused. */
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv), "%s init", a->name);
    memcpy(rec, pt, 64);
    T_OK(tls_aad(ctx, 0, 64) == TAGLEN, "%s: tlsaad at the start", a->name);
    T_ACCEPT(EVP_EncryptUpdate(ctx, rec, &outl, rec, 64 + TAGLEN), "%s record", a->name);
    T_REJECT_SAYS(updr(ctx, out, pt, 64), "serves records only",
                  "%s: streaming text after a record", a->name);
    T_REJECT_SAYS(updr(ctx, NULL, aad, 13), "serves records only",
                  "%s: streaming AAD after a record", a->name);
    T_REJECT_SAYS(finr(ctx), "serves records only", "%s: final after a record", a->name);
    /* Records go on; a key-only init drops the IV; a new IV starts a message. */
    T_OK(tls_aad(ctx, 1, 64) == TAGLEN, "%s: second tlsaad", a->name);
    T_ACCEPT(EVP_EncryptUpdate(ctx, rec, &outl, rec, 64 + TAGLEN), "%s second record", a->name);
    /* A final while a record is pending: refused, and the pending record goes with it. */
    T_OK(tls_aad(ctx, 2, 64) == TAGLEN, "%s: third tlsaad", a->name);
    T_REJECT_SAYS(finr(ctx), "has no final", "%s: final with a record pending", a->name);
    memcpy(rec, pt, 64);
    T_REJECT_SAYS(updr(ctx, rec, rec, 64 + TAGLEN), "serves records only",
                  "%s: a record after the final that dropped its tlsaad", a->name);
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, key, NULL), "%s key-only init", a->name);
    T_REJECT_SAYS(updr(ctx, out, pt, 64), "no IV set", "%s: text after key-only init in TLS mode",
                  a->name);
    T_REJECT_SAYS(tls_aad(ctx, 2, 64) > 0, "needs the key and fixed IV",
                  "%s: tlsaad after key-only init in TLS mode", a->name);
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv2), "%s new IV", a->name);
    T_OK(whole_message_ok(a, ctx, 1, key, iv2), "%s: a message under a new IV after records",
         a->name);
    /* An IV given as tlsivfixed serves records only, before or after the key. */
    for (int key_first = 0; key_first < 2; key_first++) {
        T_ACCEPT(EVP_EncryptInit_ex(ctx, a->ours, NULL, key_first ? key : NULL, NULL),
                 "%s init", a->name);
        T_OK(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IV_FIXED, 12, iv) > 0,
             "%s tlsivfixed", a->name);
        if (!key_first)
            T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, key, NULL), "%s key", a->name);
        T_REJECT_SAYS(updr(ctx, out, pt, 64), "serves records only",
                      "%s: streaming text under a tlsivfixed IV (key %s)", a->name,
                      key_first ? "first" : "second");
        /* ... but records work, and seq 0 equals a record sealed after init(key, iv) */
        memcpy(rec, pt, 64);
        T_OK(tls_aad(ctx, 0, 64) == TAGLEN, "%s: tlsaad under tlsivfixed", a->name);
        T_ACCEPT(EVP_EncryptUpdate(ctx, rec, &outl, rec, 64 + TAGLEN), "%s record", a->name);
        EVP_CIPHER_CTX *r = EVP_CIPHER_CTX_new();
        uint8_t rrec[64 + TAGLEN];
        memcpy(rrec, pt, 64);
        T_OK(EVP_EncryptInit_ex(r, a->ours, NULL, key, iv) && tls_aad(r, 0, 64) == TAGLEN &&
                 EVP_EncryptUpdate(r, rrec, &outl, rrec, 64 + TAGLEN) &&
                 memcmp(rrec, rec, sizeof(rec)) == 0,
             "%s: record under tlsivfixed differs from one under init(key, iv)", a->name);
        EVP_CIPHER_CTX_free(r);
    }
    EVP_CIPHER_CTX_free(ctx);
}

/* A record to seal (payload, then room for the tag) or to open (payload and tag). */
static void load_record(uint8_t *in, const uint8_t *src, size_t len, int enc)
{
    memcpy(in, src, enc ? len : len + TAGLEN);
    if (enc)
        memset(in + len, 0, TAGLEN);
}

/* TLS 1.2 record mode: the record is sealed or opened in place, never shifted. */
static void test_overlap_tls(const alg *a)
{
    uint8_t buf[300 + TAGLEN + 2 * OVL_PAD], ref[300 + TAGLEN];
    const size_t len = 300;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int outl = -1;

    memcpy(ref, pt, len);
    T_OK(EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv) && tls_aad(ctx, 5, len) == TAGLEN
             && EVP_EncryptUpdate(ctx, ref, &outl, ref, (int)(len + TAGLEN)),
         "TLS reference record");
    for (int enc = 1; enc >= 0; enc--) {
        const uint8_t *src = enc ? pt : ref;
        for (int sh = -8; sh <= 8; sh += 16) {
            uint8_t *in = buf + OVL_PAD;
            for (int path = 0; path < 2; path++) {
                load_record(in, src, len, enc);
                T_ACCEPT(EVP_CipherInit_ex(ctx, a->ours, NULL, key, iv, enc), "tls init");
                T_OK(tls_aad(ctx, 5, enc ? len : len + TAGLEN) == TAGLEN, "tlsaad");
                if (path == 0)
                    T_REJECT_SAYS(EVP_CipherUpdate(ctx, in + sh, &outl, in, (int)(len + TAGLEN)),
                                  "partially overlapping", "%s TLS %s record, out = in %+d",
                                  a->name, enc ? "seal" : "open", sh);
                else
                    T_REJECT_SAYS(EVP_Cipher(ctx, in + sh, in, (unsigned)(len + TAGLEN)) >= 0,
                                  "partially overlapping",
                                  "%s TLS %s record through EVP_Cipher, out = in %+d", a->name,
                                  enc ? "seal" : "open", sh);
            }
        }
        /* In place still works, on the same context. */
        uint8_t *in = buf + OVL_PAD;
        load_record(in, src, len, enc);
        T_ACCEPT(EVP_CipherInit_ex(ctx, a->ours, NULL, key, iv, enc), "tls init");
        T_OK(tls_aad(ctx, 5, enc ? len : len + TAGLEN) == TAGLEN, "tlsaad");
        T_ACCEPT(EVP_CipherUpdate(ctx, in, &outl, in, (int)(len + TAGLEN)),
                 "%s TLS %s in place", a->name, enc ? "seal" : "open");
        T_OK(memcmp(in, enc ? ref : pt, enc ? len + TAGLEN : len) == 0,
             "%s TLS %s in place after refused shifted records: wrong bytes", a->name,
             enc ? "seal" : "open");
    }
    EVP_CIPHER_CTX_free(ctx);
}

/*
 * Lengths no buffer can have. EVP_EncryptUpdate in libcrypto 3.0 hands a
 * negative int to the provider as a huge size_t (default's ChaCha20 then
 * crashes); the provider's own cipher/update functions take a size_t.
 */
typedef struct {
    OSSL_FUNC_cipher_newctx_fn *newctx;
    OSSL_FUNC_cipher_freectx_fn *freectx;
    OSSL_FUNC_cipher_encrypt_init_fn *einit;
    OSSL_FUNC_cipher_decrypt_init_fn *dinit;
    OSSL_FUNC_cipher_update_fn *update;
    OSSL_FUNC_cipher_cipher_fn *cipher;
} raw_cipher;

static int raw_fetch(const char *name, raw_cipher *r)
{
    int no_cache = 0;
    const OSSL_ALGORITHM *alg = OSSL_PROVIDER_query_operation(t_prov, OSSL_OP_CIPHER, &no_cache);

    memset(r, 0, sizeof(*r));
    for (; alg != NULL && alg->algorithm_names != NULL; alg++) {
        if (strcmp(alg->algorithm_names, name) != 0)
            continue;
        for (const OSSL_DISPATCH *d = alg->implementation; d->function_id != 0; d++) {
            switch (d->function_id) {
            case OSSL_FUNC_CIPHER_NEWCTX: r->newctx = OSSL_FUNC_cipher_newctx(d); break;
            case OSSL_FUNC_CIPHER_FREECTX: r->freectx = OSSL_FUNC_cipher_freectx(d); break;
            case OSSL_FUNC_CIPHER_ENCRYPT_INIT: r->einit = OSSL_FUNC_cipher_encrypt_init(d); break;
            case OSSL_FUNC_CIPHER_DECRYPT_INIT: r->dinit = OSSL_FUNC_cipher_decrypt_init(d); break;
            case OSSL_FUNC_CIPHER_UPDATE: r->update = OSSL_FUNC_cipher_update(d); break;
            case OSSL_FUNC_CIPHER_CIPHER: r->cipher = OSSL_FUNC_cipher_cipher(d); break;
            }
        }
    }
    return r->newctx && r->freectx && r->einit && r->dinit && r->update && r->cipher;
}

static void test_huge_lengths(const char *name, EVP_CIPHER *c, size_t ivlen, int aead)
{
    static const int neg[] = { -1, -5, -64, INT_MIN };
    static const size_t huge[] = { SIZE_MAX, SIZE_MAX - 4, (size_t)PTRDIFF_MAX + 1,
                                   (size_t)(ptrdiff_t)INT_MIN };
    uint8_t out[300];

    for (int enc = 1; enc >= 0; enc--) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        T_ACCEPT(EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc), "%s init", name);
        for (size_t i = 0; i < sizeof(neg) / sizeof(neg[0]); i++) {
            int outl = -1;
            T_REJECT(EVP_CipherUpdate(ctx, out, &outl, pt, neg[i]),
                     "%s %s: EVP_CipherUpdate with inl %d", name, enc ? "enc" : "dec", neg[i]);
            if (aead)
                T_REJECT(EVP_CipherUpdate(ctx, NULL, &outl, aad, neg[i]),
                         "%s %s: AAD update with inl %d", name, enc ? "enc" : "dec", neg[i]);
        }
        /* Nothing was processed: the context goes on as if the calls never happened. */
        uint8_t want[64];
        EVP_CIPHER_CTX *r = EVP_CIPHER_CTX_new();
        T_OK(EVP_CipherInit_ex(r, c, NULL, key, iv, enc) && upd(r, want, pt, 64),
             "%s reference", name);
        T_OK(upd(ctx, out, pt, 64) && memcmp(out, want, 64) == 0,
             "%s %s: stream after refused negative lengths differs", name, enc ? "enc" : "dec");
        EVP_CIPHER_CTX_free(r);
        EVP_CIPHER_CTX_free(ctx);
    }

    raw_cipher rc;
    if (!T_OK(raw_fetch(name, &rc), "%s: the provider's own dispatch table", name))
        return;
    void *provctx = OSSL_PROVIDER_get0_provider_ctx(t_prov);
    for (int enc = 1; enc >= 0; enc--) {
        void *ctx = rc.newctx(provctx);
        int ok = ctx != NULL && (enc ? rc.einit : rc.dinit)(ctx, key, 32, iv, ivlen, NULL);
        T_OK(ok, "%s raw init", name);
        for (size_t i = 0; ok && i < sizeof(huge) / sizeof(huge[0]); i++) {
            size_t outl = 1;
            T_REJECT(rc.cipher(ctx, out, &outl, huge[i], pt, huge[i]),
                     "%s %s: cipher function with inl %#zx", name, enc ? "enc" : "dec", huge[i]);
            T_REJECT(rc.update(ctx, out, &outl, huge[i], pt, huge[i]),
                     "%s %s: update function with inl %#zx", name, enc ? "enc" : "dec", huge[i]);
            if (aead)
                T_REJECT(rc.update(ctx, NULL, &outl, 0, aad, huge[i]),
                         "%s %s: AAD of %#zx bytes", name, enc ? "enc" : "dec", huge[i]);
        }
        if (ctx != NULL)
            rc.freectx(ctx);
    }
}

/* XChaCha20-Poly1305 has no TLS record mode: it neither lists nor answers "tlsaadpad". */
static void test_gettable_lists(void)
{
    const OSSL_PARAM *g0 = EVP_CIPHER_gettable_ctx_params(aeads[0].ours);
    const OSSL_PARAM *g1 = EVP_CIPHER_gettable_ctx_params(aeads[1].ours);
    static const char *const common[] = { OSSL_CIPHER_PARAM_KEYLEN, OSSL_CIPHER_PARAM_IVLEN,
                                          OSSL_CIPHER_PARAM_AEAD_TAGLEN,
                                          OSSL_CIPHER_PARAM_AEAD_TAG };

    T_OK(g0 != NULL && g1 != NULL, "gettable ctx params lists");
    if (g0 == NULL || g1 == NULL)
        return;
    T_OK(OSSL_PARAM_locate_const(g0, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD) != NULL,
         "ChaCha20-Poly1305: gettable list lacks tlsaadpad");
    T_OK(OSSL_PARAM_locate_const(g1, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD) == NULL,
         "XChaCha20-Poly1305: gettable list advertises tlsaadpad");
    for (size_t i = 0; i < 4; i++) {
        T_OK(OSSL_PARAM_locate_const(g0, common[i]) != NULL, "ChaCha20-Poly1305 lacks %s",
             common[i]);
        T_OK(OSSL_PARAM_locate_const(g1, common[i]) != NULL, "XChaCha20-Poly1305 lacks %s",
             common[i]);
    }
    for (int i = 0; i < 2; i++) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        size_t v = 0;
        OSSL_PARAM p[2] = { OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, &v),
                            OSSL_PARAM_construct_end() };
        T_ACCEPT(EVP_EncryptInit_ex(ctx, aeads[i].ours, NULL, key, iv), "init");
        T_ACCEPT(EVP_CIPHER_CTX_get_params(ctx, p), "%s get tlsaadpad", aeads[i].name);
        if (i == 0)
            T_OK(OSSL_PARAM_modified(p) && v == TAGLEN, "ChaCha20-Poly1305: tlsaadpad %zu", v);
        else
            T_OK(!OSSL_PARAM_modified(p), "XChaCha20-Poly1305 answers tlsaadpad");
        EVP_CIPHER_CTX_free(ctx);
    }
}

/*
 * Numeric parameters with NULL data. libcrypto 3.0.19's OSSL_PARAM_get_*
 * read through it (and OSSL_PARAM_set_* write through it for REAL), so
 * chapoly must not hand such a parameter to them. default: crashes inside
 * OSSL_PARAM_get_uint64 / OSSL_PARAM_set_uint64 called by the provider.
 */
static void test_null_param_data(const char *name, EVP_CIPHER *c)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    const char *keys[] = { OSSL_CIPHER_PARAM_KEYLEN, OSSL_CIPHER_PARAM_IVLEN };
    const unsigned types[] = { OSSL_PARAM_UNSIGNED_INTEGER, OSSL_PARAM_INTEGER, OSSL_PARAM_REAL };
    uint8_t out[64], want[64];

    T_ACCEPT(EVP_EncryptInit_ex(ctx, c, NULL, key, iv), "%s init", name);
    for (int k = 0; k < 2; k++) {
        for (int t = 0; t < 3; t++) {
            size_t sz = types[t] == OSSL_PARAM_REAL ? sizeof(double) : sizeof(size_t);
            OSSL_PARAM p[2] = { { keys[k], types[t], NULL, sz, OSSL_PARAM_UNMODIFIED },
                                OSSL_PARAM_END };
            T_REJECT_SAYS(EVP_CIPHER_CTX_set_params(ctx, p), "has NULL data",
                          "%s: set %s (type %u) with NULL data", name, keys[k], types[t]);
            T_REJECT_SAYS(EVP_EncryptInit_ex2(ctx, NULL, key, iv, p), "has NULL data",
                          "%s: init with %s (type %u) with NULL data", name, keys[k], types[t]);
            /* A get with NULL data is a size query. */
            p[0].return_size = OSSL_PARAM_UNMODIFIED;
            T_ACCEPT(EVP_CIPHER_CTX_get_params(ctx, p), "%s: get %s (type %u) with NULL data",
                     name, keys[k], types[t]);
            T_OK(p[0].return_size == sz, "%s: size query for %s (type %u) returned %zu", name,
                 keys[k], types[t], p[0].return_size);
        }
    }
    /* ... and the context still works. */
    EVP_CIPHER_CTX *r = EVP_CIPHER_CTX_new();
    T_OK(EVP_EncryptInit_ex(r, c, NULL, key, iv) && upd(r, want, pt, 64), "%s reference", name);
    T_OK(EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv) && upd(ctx, out, pt, 64)
             && memcmp(out, want, 64) == 0,
         "%s: context after NULL-data params differs", name);
    EVP_CIPHER_CTX_free(r);
    EVP_CIPHER_CTX_free(ctx);
}

int main(void)
{
    t_setup();

    aeads[0] = (alg){ "ChaCha20-Poly1305", 12, t_cipher("ChaCha20-Poly1305", 1),
                      t_cipher("ChaCha20-Poly1305", 0) };
    aeads[1] = (alg){ "XChaCha20-Poly1305", 24, t_cipher("XChaCha20-Poly1305", 1), NULL };
    cc_ours = t_cipher("ChaCha20", 1);
    cc_ref = t_cipher("ChaCha20", 0);
    if (!T_OK(aeads[0].ours && aeads[0].ref && aeads[1].ours && cc_ours && cc_ref,
              "fetch all ciphers")) {
        t_teardown();
        return t_finish("test_evp_strict");
    }
    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(iv2, sizeof(iv2));
    t_rand_bytes(aad, sizeof(aad));
    t_rand_bytes(pt, sizeof(pt));

    for (int i = 0; i < 2; i++) {
        const alg *a = &aeads[i];
        test_decrypt_final_without_tag(a);
        test_tag_read_before_final(a);
        test_aad_after_data(a);
        test_use_after_final(a);
        test_tag_lengths(a);
        test_corruption(a);
        test_key_iv_lengths(a->name, a->ours, a->ivlen, 1);
        test_no_key(a->name, a->ours, 1);
        test_unknown_params(a->name, a->ours);
        test_key_only_reinit(a);
        test_stale_tag(a);
        test_overlap(a->name, a->ours, 1);
        test_huge_lengths(a->name, a->ours, a->ivlen, 1);
        test_null_param_data(a->name, a->ours);
    }
    test_key_iv_lengths("ChaCha20", cc_ours, 16, 0);
    test_no_key("ChaCha20", cc_ours, 0);
    test_unknown_params("ChaCha20", cc_ours);
    test_tls(&aeads[0]);
    test_overlap("ChaCha20", cc_ours, 0);
    test_overlap_tls(&aeads[0]);
    test_tls_vs_messages(&aeads[0]);
    test_huge_lengths("ChaCha20", cc_ours, 16, 0);
    test_null_param_data("ChaCha20", cc_ours);
    test_gettable_lists();
    test_mac_outsize();
    test_alg_params();
    test_alg_params_null_data("ChaCha20-Poly1305", aeads[0].ours);
    test_alg_params_null_data("XChaCha20-Poly1305", aeads[1].ours);
    test_alg_params_null_data("ChaCha20", cc_ours);

    EVP_CIPHER_free(aeads[0].ours);
    EVP_CIPHER_free(aeads[0].ref);
    EVP_CIPHER_free(aeads[1].ours);
    EVP_CIPHER_free(cc_ours);
    EVP_CIPHER_free(cc_ref);
    t_teardown();
    return t_finish("test_evp_strict");
}
