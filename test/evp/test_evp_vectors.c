/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known-answer tests through the public EVP API, provider=chapoly only:
 * every case of rfc8439.txt, xchacha.txt and poly1305-edge.txt, and every
 * Wycheproof ChaCha20-Poly1305 / XChaCha20-Poly1305 case. The oracle is the
 * vector files (plus, for the HChaCha20 subkey, OpenSSL's default provider
 * run on the subkey the draft publishes).
 *
 * Each AEAD case runs twice: as EVP_CipherUpdate/Final and as the legacy
 * EVP_Cipher call sequence (AAD with out == NULL, data, then in == NULL to
 * finalise), because the provider implements the cipher function as well.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "test_common.h"
#include "vectors.h"

static EVP_CIPHER *chacha20;   /* ours */
static EVP_CIPHER *aead;       /* ours, ChaCha20-Poly1305 */
static EVP_CIPHER *xaead;      /* ours, XChaCha20-Poly1305 */
static EVP_CIPHER *aead_dflt;  /* default provider, HChaCha20 oracle */
static EVP_MAC *poly1305;      /* ours */

/* Stand-in for NULL inputs of length zero: EVP treats in == NULL as "finalise". */
static const uint8_t empty[1];
#define NZ(p) ((p) != NULL ? (const uint8_t *)(p) : empty)

enum call_style { STYLE_UPDATE, STYLE_CIPHER };
static const char *style_name[] = { "update/final", "EVP_Cipher" };

/* Outcome of one AEAD run. */
enum aead_result {
    AEAD_OK = 1,          /* every call succeeded */
    AEAD_FINAL_FAILED = 0, /* init/updates succeeded, finalisation refused */
    AEAD_IV_REFUSED = -1, /* setting the IV length (or init with that IV) failed */
    AEAD_CALL_FAILED = -2 /* some other call failed or returned a wrong length */
};

/*
 * One AEAD message. enc: seal 'in' into 'out' and write taglen bytes of tag to
 * 'tag'. !enc: open 'in' into 'out' with expected tag 'tag'. ivlen other than
 * the cipher's default is set through the "ivlen" ctx param first.
 */
static enum aead_result aead_run(const EVP_CIPHER *c, enum call_style style, int enc,
                                 const uint8_t *key, const uint8_t *iv, size_t ivlen,
                                 const uint8_t *aad, size_t aadlen,
                                 const uint8_t *in, size_t len, uint8_t *out,
                                 uint8_t *tag, size_t taglen)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    enum aead_result res = AEAD_CALL_FAILED;
    /* The provider may read up to its own IV length: never hand it a short buffer. */
    uint8_t ivbuf[64] = { 0 };
    int outl = -1;

    if (ctx == NULL)
        return AEAD_CALL_FAILED;
    if (ivlen > sizeof(ivbuf))
        goto done;
    if (ivlen > 0)
        memcpy(ivbuf, iv, ivlen);
    if (!EVP_CipherInit_ex2(ctx, c, NULL, NULL, enc, NULL))
        goto done;
    if (ivlen != (size_t)EVP_CIPHER_get_iv_length(c)) {
        OSSL_PARAM p[2] = { OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_IVLEN, &ivlen),
                            OSSL_PARAM_construct_end() };

        if (!EVP_CIPHER_CTX_set_params(ctx, p)) {
            res = AEAD_IV_REFUSED;
            goto done;
        }
    }
    if (!EVP_CipherInit_ex2(ctx, NULL, key, ivbuf, enc, NULL)) {
        res = AEAD_IV_REFUSED;
        goto done;
    }
    if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)taglen, tag) <= 0)
        goto done;

    if (style == STYLE_UPDATE) {
        if (!EVP_CipherUpdate(ctx, NULL, &outl, NZ(aad), (int)aadlen))
            goto done;
        t_note_aad_outl(aadlen, outl, "EVP_CipherUpdate");
        if (!EVP_CipherUpdate(ctx, out, &outl, NZ(in), (int)len) || outl != (int)len)
            goto done;
        if (!EVP_CipherFinal_ex(ctx, out + len, &outl)) {
            res = AEAD_FINAL_FAILED;
            goto done;
        }
        if (outl != 0)
            goto done;
    } else {
        /* Zero-length calls keep a non-NULL input: in == NULL would finalise. */
        int ra = EVP_Cipher(ctx, NULL, NZ(aad), (unsigned int)aadlen);
        if (ra < 0)
            goto done;
        t_note_aad_outl(aadlen, ra, "EVP_Cipher");
        if (EVP_Cipher(ctx, out, NZ(in), (unsigned int)len) != (int)len)
            goto done;
        int r = EVP_Cipher(ctx, NULL, NULL, 0);
        if (r < 0) {
            res = AEAD_FINAL_FAILED;
            goto done;
        }
        if (r != 0)
            goto done;
    }
    if (enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)taglen, tag) <= 0)
        goto done;
    res = AEAD_OK;
done:
    EVP_CIPHER_CTX_free(ctx);
    return res;
}

/*
 * Known-answer AEAD check: seal gives ct||tag, open gives pt, open with one
 * tag bit flipped (bit chosen by 'flip') is refused at finalisation. Both
 * call styles. Returns 1 if everything matched.
 */
static int aead_kat(const EVP_CIPHER *c, const char *what, int line,
                    const uint8_t *key, const uint8_t *iv, size_t ivlen,
                    const uint8_t *aad, size_t aadlen, const uint8_t *pt, size_t len,
                    const uint8_t *ct, const uint8_t *tag, size_t taglen, unsigned flip)
{
    uint8_t *out = t_xmalloc(len + 16);
    uint8_t t[16], bad[16];
    int all = 1;

    for (int s = STYLE_UPDATE; s <= STYLE_CIPHER; s++) {
        memset(out, 0xa5, len + 16);
        memset(t, 0, sizeof(t));
        enum aead_result r = aead_run(c, s, 1, key, iv, ivlen, aad, aadlen, pt, len, out, t, taglen);
        all &= T_OK(r == AEAD_OK, "%s %d (%s): seal failed (%d)", what, line, style_name[s], r);
        if (r == AEAD_OK) {
            all &= T_EQ_MEM(out, NZ(ct), len, "%s %d (%s): ciphertext differs", what, line, style_name[s]);
            all &= T_EQ_MEM(t, tag, taglen, "%s %d (%s): tag differs", what, line, style_name[s]);
        }

        memset(out, 0xa5, len + 16);
        memcpy(t, tag, taglen);
        r = aead_run(c, s, 0, key, iv, ivlen, aad, aadlen, ct, len, out, t, taglen);
        all &= T_OK(r == AEAD_OK, "%s %d (%s): open with the right tag failed (%d)", what, line,
                    style_name[s], r);
        if (r == AEAD_OK)
            all &= T_EQ_MEM(out, NZ(pt), len, "%s %d (%s): plaintext differs", what, line, style_name[s]);

        ERR_clear_error();
        memcpy(bad, tag, taglen);
        bad[(flip / 8) % taglen] ^= (uint8_t)(1u << (flip % 8));
        r = aead_run(c, s, 0, key, iv, ivlen, aad, aadlen, ct, len, out, bad, taglen);
        all &= T_OK(r == AEAD_FINAL_FAILED, "%s %d (%s): open with tag bit %u flipped: expected final "
                    "to fail, got %d", what, line, style_name[s], flip % (8 * (unsigned)taglen), r);
        all &= T_OK(t_error_queued() || r != AEAD_FINAL_FAILED,
                    "%s %d (%s): failed final queued no error", what, line, style_name[s]);
        ERR_clear_error();
    }
    free(out);
    return all;
}

/* ChaCha20 through EVP "ChaCha20", IV = LE32(counter) || nonce; one update. */
static int chacha20_evp(const uint8_t key[32], uint32_t counter, const uint8_t nonce[12],
                        const uint8_t *in, size_t len, uint8_t *out, int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t iv[16];
    int outl = -1, finl = -1, ok;

    iv[0] = (uint8_t)counter;
    iv[1] = (uint8_t)(counter >> 8);
    iv[2] = (uint8_t)(counter >> 16);
    iv[3] = (uint8_t)(counter >> 24);
    memcpy(iv + 4, nonce, 12);
    ok = ctx != NULL && EVP_CipherInit_ex2(ctx, chacha20, key, iv, enc, NULL)
         && EVP_CipherUpdate(ctx, out, &outl, NZ(in), (int)len) && outl == (int)len
         && EVP_CipherFinal_ex(ctx, out + len, &finl) && finl == 0;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

/* Poly1305 through EVP_MAC; split = 0: one update, else two updates at 'split'. */
static int poly1305_evp(const uint8_t key[32], const uint8_t *msg, size_t len, size_t split,
                        uint8_t tag[16])
{
    EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(poly1305);
    size_t outl = 0;
    int ok;

    if (split > len)
        split = len;
    ok = ctx != NULL && EVP_MAC_init(ctx, key, 32, NULL)
         && EVP_MAC_update(ctx, NZ(msg), split)
         && EVP_MAC_update(ctx, NZ(msg) + split, len - split)
         && EVP_MAC_final(ctx, tag, &outl, 16) && outl == 16;
    EVP_MAC_CTX_free(ctx);
    return ok;
}

static int field_ok(const tv_case *c, const char *name, size_t want_len)
{
    const tv_field *f = tv_get(c, name);

    return T_OK(f != NULL && (want_len == (size_t)-1 || f->len == want_len),
                "[%s] line %d: field '%s' missing or of wrong length", c->section, c->line, name);
}

static const uint8_t *fb(const tv_case *c, const char *name)
{
    const tv_field *f = tv_get(c, name);

    return f != NULL ? f->bytes : NULL;
}

static size_t fl(const tv_case *c, const char *name)
{
    const tv_field *f = tv_get(c, name);

    return f != NULL ? f->len : 0;
}

static uint32_t fcounter(const tv_case *c)
{
    const tv_field *f = tv_get(c, "counter");

    return f != NULL && f->text != NULL ? (uint32_t)strtoul(f->text, NULL, 10) : 0;
}

struct kat_counts {
    int chacha20, block, poly, keygen, aead, xaead, hchacha, xchacha20, other;
};

static int chacha20_case(const tv_case *c, struct kat_counts *n)
{
    if (!field_ok(c, "key", 32) || !field_ok(c, "nonce", 12) || !field_ok(c, "plaintext", (size_t)-1)
        || !field_ok(c, "ciphertext", fl(c, "plaintext")))
        return 0;
    size_t len = fl(c, "plaintext");
    uint8_t *out = t_xmalloc(len);
    uint32_t ctr = fcounter(c);

    for (int enc = 1; enc >= 0; enc--) {
        const uint8_t *in = fb(c, enc ? "plaintext" : "ciphertext");
        const uint8_t *want = fb(c, enc ? "ciphertext" : "plaintext");

        memset(out, 0, len);
        if (T_OK(chacha20_evp(fb(c, "key"), ctr, fb(c, "nonce"), in, len, out, enc),
                 "[chacha20] line %d: EVP %s failed", c->line, enc ? "encrypt" : "decrypt"))
            T_EQ_MEM(out, NZ(want), len, "[chacha20] line %d: %s output differs", c->line,
                     enc ? "encrypt" : "decrypt");
    }
    free(out);
    n->chacha20++;
    return 0;
}

static int block_case(const tv_case *c, struct kat_counts *n)
{
    uint8_t zero[64] = { 0 }, ks[64];

    if (!field_ok(c, "key", 32) || !field_ok(c, "nonce", 12) || !field_ok(c, "block", 64))
        return 0;
    if (T_OK(chacha20_evp(fb(c, "key"), fcounter(c), fb(c, "nonce"), zero, 64, ks, 1),
             "[chacha20-block] line %d: EVP failed", c->line))
        T_EQ_MEM(ks, fb(c, "block"), 64, "[chacha20-block] line %d: keystream differs", c->line);
    n->block++;
    return 0;
}

static int keygen_case(const tv_case *c, struct kat_counts *n)
{
    uint8_t zero[32] = { 0 }, ks[32];

    if (!field_ok(c, "key", 32) || !field_ok(c, "nonce", 12) || !field_ok(c, "otk", 32))
        return 0;
    if (T_OK(chacha20_evp(fb(c, "key"), 0, fb(c, "nonce"), zero, 32, ks, 1),
             "[poly1305-keygen] line %d: EVP failed", c->line))
        T_EQ_MEM(ks, fb(c, "otk"), 32, "[poly1305-keygen] line %d: one-time key differs", c->line);
    n->keygen++;
    return 0;
}

static int poly_case(const tv_case *c, struct kat_counts *n)
{
    uint8_t tag[16];

    if (!field_ok(c, "key", 32) || !field_ok(c, "msg", (size_t)-1) || !field_ok(c, "tag", 16))
        return 0;
    size_t len = fl(c, "msg");
    /* One update, then two updates split at a position that varies per case. */
    size_t splits[2] = { 0, len ? (size_t)(c->line * 7u) % (len + 1) : 0 };

    for (int i = 0; i < 2; i++) {
        memset(tag, 0, sizeof(tag));
        if (T_OK(poly1305_evp(fb(c, "key"), fb(c, "msg"), len, splits[i], tag),
                 "[poly1305] line %d: EVP_MAC failed (split %zu)", c->line, splits[i]))
            T_EQ_MEM(tag, fb(c, "tag"), 16, "[poly1305] line %d: tag differs (split %zu of %zu)",
                     c->line, splits[i], len);
    }
    n->poly++;
    return 0;
}

static int aead_case(const tv_case *c, struct kat_counts *n, int x)
{
    size_t nlen = x ? 24 : 12;

    if (!field_ok(c, "key", 32) || !field_ok(c, "nonce", nlen) || !field_ok(c, "aad", (size_t)-1)
        || !field_ok(c, "plaintext", (size_t)-1) || !field_ok(c, "ciphertext", fl(c, "plaintext"))
        || !field_ok(c, "tag", 16))
        return 0;
    char what[96];

    snprintf(what, sizeof(what), "[%s] line", c->section);
    aead_kat(x ? xaead : aead, what, c->line, fb(c, "key"), fb(c, "nonce"), nlen,
             fb(c, "aad"), fl(c, "aad"), fb(c, "plaintext"), fl(c, "plaintext"),
             fb(c, "ciphertext"), fb(c, "tag"), 16, (unsigned)c->line * 13u);
    if (x)
        n->xaead++;
    else
        n->aead++;
    return 0;
}

/*
 * HChaCha20 has no EVP interface of its own. It is checked through
 * XChaCha20-Poly1305: with nonce = hchacha_nonce(16) || tail(8), our output
 * must equal the default provider's ChaCha20-Poly1305 keyed with the
 * published subkey and nonce 00000000 || tail.
 */
static int hchacha_case(const tv_case *c, struct kat_counts *n)
{
    if (!field_ok(c, "key", 32) || !field_ok(c, "nonce", 16) || !field_ok(c, "subkey", 32))
        return 0;
    for (int i = 0; i < 8; i++) {
        uint8_t xnonce[24], nonce[12] = { 0 }, aad[40], pt[300], ct1[300], ct2[300], t1[16], t2[16];
        size_t aadlen = t_rand_below(sizeof(aad) + 1), len = t_rand_below(sizeof(pt) + 1);

        memcpy(xnonce, fb(c, "nonce"), 16);
        t_rand_bytes(xnonce + 16, 8);
        memcpy(nonce + 4, xnonce + 16, 8);
        t_rand_bytes(aad, sizeof(aad));
        t_rand_bytes(pt, sizeof(pt));
        int r1 = aead_run(xaead, STYLE_UPDATE, 1, fb(c, "key"), xnonce, 24, aad, aadlen, pt, len, ct1, t1, 16);
        int r2 = aead_run(aead_dflt, STYLE_UPDATE, 1, fb(c, "subkey"), nonce, 12, aad, aadlen, pt, len, ct2,
                          t2, 16);
        T_OK(r2 == AEAD_OK, "[hchacha20] line %d: default provider failed", c->line);
        if (T_OK(r1 == AEAD_OK, "[hchacha20] line %d: XChaCha20-Poly1305 seal failed (%d)", c->line, r1)
            && r2 == AEAD_OK) {
            T_EQ_MEM(ct1, ct2, len, "[hchacha20] line %d: ciphertext differs from ChaCha20-Poly1305 "
                     "under the published subkey (aad %zu, len %zu)", c->line, aadlen, len);
            T_EQ_MEM(t1, t2, 16, "[hchacha20] line %d: tag differs from ChaCha20-Poly1305 under the "
                     "published subkey (aad %zu, len %zu)", c->line, aadlen, len);
        }
    }
    n->hchacha++;
    return 0;
}

/*
 * XChaCha20 (the bare stream) has no EVP interface either. XChaCha20-Poly1305
 * encrypts its plaintext with the XChaCha20 keystream from block 1 on, so the
 * ciphertext bytes of a case at block 'counter' that fall at block >= 1 are
 * checked through the AEAD with empty AAD. Block 0 (the Poly1305 key) is not
 * observable through EVP and is skipped.
 */
static int xchacha20_case(const tv_case *c, struct kat_counts *n)
{
    if (!field_ok(c, "key", 32) || !field_ok(c, "nonce", 24) || !field_ok(c, "plaintext", (size_t)-1)
        || !field_ok(c, "ciphertext", fl(c, "plaintext")))
        return 0;
    uint32_t ctr = fcounter(c);
    size_t len = fl(c, "plaintext");
    size_t skip = ctr == 0 ? 64 : 0;

    if (!T_OK(ctr <= 1, "[xchacha20] line %d: counter %u not expressible through the AEAD", c->line, ctr))
        return 0;
    if (len <= skip) {
        n->other++;
        return 0;
    }
    uint8_t *out = t_xmalloc(len), t[16];
    int r = aead_run(xaead, STYLE_UPDATE, 1, fb(c, "key"), fb(c, "nonce"), 24, NULL, 0,
                     fb(c, "plaintext") + skip, len - skip, out, t, 16);
    if (T_OK(r == AEAD_OK, "[xchacha20] line %d: XChaCha20-Poly1305 seal failed (%d)", c->line, r))
        T_EQ_MEM(out, fb(c, "ciphertext") + skip, len - skip,
                 "[xchacha20] line %d: keystream from block 1 differs", c->line);
    free(out);
    n->xchacha20++;
    return 0;
}

static int txt_case(const tv_case *c, void *arg)
{
    struct kat_counts *n = arg;

    if (strcmp(c->section, "chacha20") == 0)
        return chacha20_case(c, n);
    if (strcmp(c->section, "chacha20-block") == 0)
        return block_case(c, n);
    if (strcmp(c->section, "poly1305") == 0)
        return poly_case(c, n);
    if (strcmp(c->section, "poly1305-keygen") == 0)
        return keygen_case(c, n);
    if (strcmp(c->section, "chacha20-poly1305") == 0)
        return aead_case(c, n, 0);
    if (strcmp(c->section, "xchacha20-poly1305") == 0)
        return aead_case(c, n, 1);
    if (strcmp(c->section, "hchacha20") == 0)
        return hchacha_case(c, n);
    if (strcmp(c->section, "xchacha20") == 0)
        return xchacha20_case(c, n);
    T_OK(0, "line %d: unknown section [%s]", c->line, c->section);
    n->other++;
    return 0;
}

struct wp_counts {
    const EVP_CIPHER *c;
    const char *label;      /* "<cipher> wycheproof tcId" */
    size_t ivlen;           /* the cipher's only valid nonce length */
    int valid, valid_passed, invalid, invalid_rejected, acceptable;
    int rejected_at_iv, rejected_at_final; /* per call style */
};

static int wycheproof_case(const wp_case *w, void *arg)
{
    struct wp_counts *k = arg;
    uint8_t *out = t_xmalloc(w->msg_len + w->ct_len + 16);
    uint8_t t[16];

    if (w->valid == 2) { /* none in the current files; no verdict to check */
        k->acceptable++;
        free(out);
        return 0;
    }
    if (w->valid == 1) {
        int ok = T_OK(w->tag_len >= 1 && w->tag_len <= 16 && w->ct_len == w->msg_len,
                      "%s %d: unexpected shape", k->label, w->tc_id);

        k->valid++;
        if (ok)
            ok = aead_kat(k->c, k->label, w->tc_id, w->key, w->iv, w->iv_len, w->aad, w->aad_len,
                          w->msg, w->msg_len, w->ct, w->tag, w->tag_len, (unsigned)w->tc_id * 29u);
        k->valid_passed += ok;
        free(out);
        return 0;
    }

    /*
     * Invalid: must never open. With the right nonce length every call but
     * the final one must succeed and the final must fail. A nonce of any
     * other length must be refused when it is set (the provider accepts only
     * its one IV length), for sealing as well as opening. Those cases carry
     * no tag; a dummy one stands in, as the refusal must come first.
     */
    const uint8_t *tag = w->tag;
    size_t taglen = w->tag_len;
    int rejected = 1;

    if (taglen < 1 || taglen > 16) {
        memset(t, 0, sizeof(t));
        tag = t;
        taglen = 16;
    }
    k->invalid++;
    for (int s = STYLE_UPDATE; s <= STYLE_CIPHER; s++) {
        uint8_t expect[16];
        int ok;

        memcpy(expect, tag, taglen);
        enum aead_result r = aead_run(k->c, s, 0, w->key, w->iv, w->iv_len, w->aad, w->aad_len, w->ct,
                                      w->ct_len, out, expect, taglen);
        if (w->iv_len == k->ivlen) {
            ok = T_OK(r == AEAD_FINAL_FAILED, "%s %d (%s, %s): expected the final to fail, "
                      "got %d", k->label, w->tc_id, style_name[s], w->comment ? w->comment : "", r);
        } else {
            ok = T_OK(r == AEAD_IV_REFUSED, "%s %d (%s): %zu-byte nonce not refused for "
                      "opening (result %d)", k->label, w->tc_id, style_name[s], w->iv_len, r);
            enum aead_result rs = aead_run(k->c, s, 1, w->key, w->iv, w->iv_len, w->aad, w->aad_len,
                                           w->msg, w->msg_len, out, expect, 16);
            ok &= T_OK(rs == AEAD_IV_REFUSED, "%s %d (%s): %zu-byte nonce not refused for "
                       "sealing (result %d)", k->label, w->tc_id, style_name[s], w->iv_len, rs);
        }
        ERR_clear_error();
        k->rejected_at_iv += r == AEAD_IV_REFUSED;
        k->rejected_at_final += r == AEAD_FINAL_FAILED;
        rejected &= ok;
    }
    k->invalid_rejected += rejected;
    free(out);
    return 0;
}

static void run_wycheproof(const char *file, const char *label, const EVP_CIPHER *c, size_t ivlen)
{
    char what[96];
    struct wp_counts k = { c, what, ivlen, 0, 0, 0, 0, 0, 0, 0 };

    snprintf(what, sizeof(what), "%s wycheproof tcId", label);
    int n = wp_foreach(t_vector_path(file), wycheproof_case, &k);

    T_OK(n > 0, "%s: could not read %s", label, file);
    T_OK(k.valid + k.invalid + k.acceptable == n, "%s: %d cases read but %d handled", label, n,
         k.valid + k.invalid + k.acceptable);
    T_OK(k.valid > 0 && k.invalid > 0, "%s: no valid or no invalid cases", label);
    printf("%s wycheproof: %d valid passed, %d invalid rejected (of %d valid, %d invalid; "
           "rejections over both call styles: %d at the IV length, %d at final",
           label, k.valid_passed, k.invalid_rejected, k.valid, k.invalid, k.rejected_at_iv,
           k.rejected_at_final);
    printf(k.acceptable ? ", %d acceptable not judged)\n" : ")\n", k.acceptable);
}

static void run_txt(const char *file, int min_cases)
{
    struct kat_counts n = { 0 };
    int got = tv_foreach(t_vector_path(file), txt_case, &n);

    T_OK(got >= min_cases, "%s: read %d cases", file, got);
    printf("%s: %d cases (chacha20 %d, chacha20-block %d, poly1305 %d, poly1305-keygen %d, "
           "chacha20-poly1305 %d, xchacha20-poly1305 %d, hchacha20 %d, xchacha20 %d)\n", file, got,
           n.chacha20, n.block, n.poly, n.keygen, n.aead, n.xaead, n.hchacha, n.xchacha20);
}

int main(void)
{
    t_setup();
    chacha20 = t_cipher("ChaCha20", 1);
    aead = t_cipher("ChaCha20-Poly1305", 1);
    xaead = t_cipher("XChaCha20-Poly1305", 1);
    aead_dflt = t_cipher("ChaCha20-Poly1305", 0);
    poly1305 = t_mac("POLY1305", 1);
    if (!T_OK(chacha20 && aead && xaead && aead_dflt && poly1305, "fetching the algorithms failed")) {
        t_teardown();
        return t_finish("test_evp_vectors");
    }

    run_txt("rfc8439.txt", 1);
    run_txt("xchacha.txt", 1);
    run_txt("poly1305-edge.txt", 1);
    run_wycheproof("wycheproof/chacha20_poly1305_test.json", "chacha20-poly1305", aead, 12);
    run_wycheproof("wycheproof/xchacha20_poly1305_test.json", "xchacha20-poly1305", xaead, 24);
    t_check_aad_outl();

    EVP_CIPHER_free(chacha20);
    EVP_CIPHER_free(aead);
    EVP_CIPHER_free(xaead);
    EVP_CIPHER_free(aead_dflt);
    EVP_MAC_free(poly1305);
    t_teardown();
    return t_finish("test_evp_vectors");
}
