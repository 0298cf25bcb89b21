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
#include "test_evp_strict.h"

/* Does a queued error's reason or detail text contain needle? Clears the queue. */
int err_says(const char *needle)
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

alg aeads[2];
EVP_CIPHER *cc_ours, *cc_ref;

uint8_t key[32], iv[24], iv2[24], aad[40], pt[300];

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

int upd(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t n)
{
    int outl = -1;
    int ok = EVP_CipherUpdate(ctx, out, &outl, in, (int)n);
    return ok && outl == (int)n;
}

/* Raw results for calls that must be refused (an outl mismatch is not a refusal). */
int updr(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t n)
{
    int outl = -1;
    return EVP_CipherUpdate(ctx, out, &outl, in, (int)n);
}

int finr(EVP_CIPHER_CTX *ctx)
{
    uint8_t sink[32];
    int outl = -1;
    return EVP_CipherFinal_ex(ctx, sink, &outl);
}

int fin(EVP_CIPHER_CTX *ctx)
{
    uint8_t sink[32];
    int outl = -1;
    int ok = EVP_CipherFinal_ex(ctx, sink, &outl);
    return ok && outl == 0;
}

/* One-shot seal with the given cipher; returns 1 on success. */
int seal(EVP_CIPHER *c, const uint8_t *k, const uint8_t *n, const uint8_t *a, size_t alen,
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
int tls_aad(EVP_CIPHER_CTX *ctx, uint64_t seq, size_t len)
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
