/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Differential test: chapoly's ChaCha20-Poly1305 against OpenSSL's default
 * provider. Same key, nonce, AAD and plaintext must give the same bytes.
 *
 * The default provider is always driven the simplest way (whole AAD, whole
 * data, out of place), so it acts as a one-shot oracle; chapoly is driven
 * with random update splits (including zero-length pieces), in place or out
 * of place, with a context copied mid-message, with short tags, and through
 * the TLS 1.2 record mode and the TLS 1.3 call sequence.
 *
 * Lengths are biased toward the 16-byte Poly1305 and 64-byte ChaCha20 block
 * boundaries. Reproduce a reported case with the same CHAPOLY_TEST_SEED.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "test_common.h"

#define MAX_AAD 600
#define MAX_DATA 70000
#define TLS_MAX_RECORD 16384

static EVP_CIPHER *ours, *dflt;

/* EVP_CIPHER_CTX_dup() only exists from 3.1; copy goes through dupctx the same way. */
static EVP_CIPHER_CTX *ctx_dup(const EVP_CIPHER_CTX *in)
{
    EVP_CIPHER_CTX *out = EVP_CIPHER_CTX_new();

    if (out != NULL && !EVP_CIPHER_CTX_copy(out, in)) {
        EVP_CIPHER_CTX_free(out);
        out = NULL;
    }
    return out;
}

/*
 * A length in [0, max], biased: k*64 + {-1,0,1}, k*16 + {-1,0,1} or uniform,
 * each under a randomly chosen scale so small sizes come up often.
 */
/* the full range only one time in eight: it holds most of the bytes (and run time) */
static size_t pick_len(size_t max)
{
    static const size_t scales[] = { 130, 130, 130, 1100, 1100, 9000, 9000, (size_t)-1 };

    return t_pick_len(max, scales, sizeof(scales) / sizeof(scales[0]));
}

enum split_mode { SPLIT_WHOLE, SPLIT_SMALL, SPLIT_LARGE, SPLIT_MODES };
static const char *split_name[] = { "whole", "0..161", "0..5000" };

static size_t next_chunk(enum split_mode m, size_t left)
{
    size_t n;

    switch (m) {
    case SPLIT_SMALL:
        n = t_rand_below(162);
        break;
    case SPLIT_LARGE:
        n = t_rand_below(5001);
        break;
    default:
        n = left;
        break;
    }
    return n < left ? n : left;
}

struct step {
    int is_aad;
    size_t off, len;
};

struct plan {
    enum split_mode aad_split, data_split;
    int inplace;
    long dup_at;        /* copy the context before this step; -1: no copy */
    int dup_orphan;     /* free the original right after copying; the copy finishes alone */
    int use_cipher;     /* drive the provider's cipher function: EVP_Cipher, in == NULL finalises */
    int tag_early;      /* decrypt: set the expected tag right after init (else just before final) */
    struct step *steps;
    size_t nsteps;
};

static void plan_make(struct plan *p, size_t aadlen, size_t len, int allow_dup)
{
    size_t cap = 16;

    p->aad_split = (enum split_mode)t_rand_below(SPLIT_MODES);
    p->data_split = (enum split_mode)t_rand_below(SPLIT_MODES);
    p->inplace = (int)t_rand_below(2);
    p->tag_early = (int)t_rand_below(2);
    p->steps = malloc(cap * sizeof(*p->steps));
    p->nsteps = 0;
    for (int phase = 0; phase < 2; phase++) {
        size_t total = phase == 0 ? aadlen : len, off = 0;
        enum split_mode m = phase == 0 ? p->aad_split : p->data_split;
        /* A whole phase is one call even when empty; split phases may have empty pieces. */
        int first = 1;

        while (first || off < total) {
            size_t n = next_chunk(m, total - off);

            if (p->nsteps == cap) {
                cap *= 2;
                p->steps = realloc(p->steps, cap * sizeof(*p->steps));
            }
            if (p->steps == NULL) {
                fprintf(stderr, "out of memory\n");
                exit(1);
            }
            p->steps[p->nsteps++] = (struct step){ phase == 0, off, n };
            off += n;
            first = 0;
        }
    }
    p->dup_at = allow_dup && t_rand_below(3) == 0 ? (long)t_rand_below(p->nsteps + 1) : -1;
    p->dup_orphan = p->dup_at >= 0 && t_rand_below(3) == 0;
    p->use_cipher = t_rand_below(4) == 0;
}

static void plan_free(struct plan *p)
{
    free(p->steps);
    p->steps = NULL;
}

static void plan_describe(char *buf, size_t n, const struct plan *p)
{
    snprintf(buf, n, "%s, aad split %s, data split %s, %s, %zu calls, copy before call %ld%s, tag %s",
             p->use_cipher ? "EVP_Cipher" : "update/final", split_name[p->aad_split], split_name[p->data_split],
             p->inplace ? "in place" : "out of place", p->nsteps, p->dup_at,
             p->dup_orphan ? " (original freed)" : "", p->tag_early ? "early" : "late");
}

/* The default provider as a one-shot oracle. Returns 1 iff every call (final included) succeeded. */
static int dflt_aead(int enc, const uint8_t key[32], const uint8_t nonce[12],
                     const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len,
                     uint8_t *out, uint8_t *tag, size_t taglen, int set_taglen)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int outl, ok = ctx != NULL && EVP_CipherInit_ex2(ctx, dflt, key, nonce, enc, NULL);

    if (ok && enc && set_taglen)
        ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)taglen, NULL) > 0;
    if (ok && !enc)
        ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)taglen, tag) > 0;
    if (ok && aadlen > 0)
        ok = EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)aadlen);
    if (ok && len > 0)
        ok = EVP_CipherUpdate(ctx, out, &outl, in, (int)len) && outl == (int)len;
    if (ok)
        ok = EVP_CipherFinal_ex(ctx, out + len, &outl);
    if (ok && enc)
        ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)taglen, tag) > 0;
    EVP_CIPHER_CTX_free(ctx);
    ERR_clear_error();
    return ok;
}

/*
 * chapoly driven by plan p. out gets the output; with p->dup_at >= 0 the
 * copied context finishes the message into out2/tag2. Returns 1 iff every
 * call succeeded (each update with outl == inl); *final_ok gets the result
 * of the final call(s) (both must agree). Failure details go to 'why'.
 */
static int ours_aead(int enc, const struct plan *p, const uint8_t key[32], const uint8_t nonce[12],
                     const uint8_t *aad, const uint8_t *in, size_t len,
                     uint8_t *out, uint8_t *tag, uint8_t *out2, uint8_t *tag2, int *final_ok,
                     char *why, size_t whyn)
{
    EVP_CIPHER_CTX *c[2] = { EVP_CIPHER_CTX_new(), NULL };
    uint8_t *o[2] = { out, out2 };
    uint8_t *t[2] = { tag, tag2 };
    int nctx = 1, ok = 0, outl, fin[2] = { 0, 0 };

    *final_ok = 0;
    snprintf(why, whyn, "init");
    if (c[0] == NULL || !EVP_CipherInit_ex2(c[0], ours, key, nonce, enc, NULL))
        goto done;
    if (!enc && p->tag_early && EVP_CIPHER_CTX_ctrl(c[0], EVP_CTRL_AEAD_SET_TAG, 16, tag) <= 0) {
        snprintf(why, whyn, "set tag after init");
        goto done;
    }
    if (p->inplace)
        memcpy(out, in, len);
    for (size_t i = 0; i <= p->nsteps; i++) {
        if ((long)i == p->dup_at) {
            if ((c[1] = ctx_dup(c[0])) == NULL) {
                snprintf(why, whyn, "context copy before call %zu", i);
                goto done;
            }
            if (p->dup_orphan) {
                /* The copy must own all its state: free the original and finish with the copy in 'out'. */
                EVP_CIPHER_CTX_free(c[0]);
                c[0] = c[1];
                c[1] = NULL;
            } else {
                nctx = 2;
                /* The copy carries on from the same point: same prefix, same pending input. */
                memcpy(out2, out, len);
            }
        }
        if (i == p->nsteps)
            break;
        const struct step *s = &p->steps[i];
        for (int k = 0; k < nctx; k++) {
            int r;

            uint8_t *dst = s->is_aad ? NULL : o[k] + s->off;
            /* never NULL, also for empty pieces: a NULL input to EVP_Cipher means "finalise" */
            const uint8_t *src = (s->is_aad ? aad : p->inplace ? o[k] : in) + s->off;

            outl = -1;
            if (p->use_cipher) {
                outl = EVP_Cipher(c[k], dst, src, (unsigned int)s->len);
                r = outl >= 0;
            } else {
                r = EVP_CipherUpdate(c[k], dst, &outl, src, (int)s->len);
            }
            if (r && s->is_aad) {
                t_note_aad_outl(s->len, outl, "split AAD update");
                continue;
            }
            if (!r || outl != (int)s->len) {
                snprintf(why, whyn, "%s update %zu (%s ctx, %zu bytes at %zu): returned %d, outl %d",
                         s->is_aad ? "AAD" : "data", i, k ? "copied" : "original", s->len, s->off, r,
                         outl);
                goto done;
            }
        }
    }
    snprintf(why, whyn, "every call before final succeeded");
    for (int k = 0; k < nctx; k++) {
        if (!enc && !p->tag_early && EVP_CIPHER_CTX_ctrl(c[k], EVP_CTRL_AEAD_SET_TAG, 16, tag) <= 0) {
            snprintf(why, whyn, "set tag before final (%s ctx)", k ? "copied" : "original");
            goto done;
        }
        if (p->use_cipher) {
            outl = EVP_Cipher(c[k], NULL, NULL, 0);
            fin[k] = outl >= 0;
        } else {
            outl = -1;
            fin[k] = EVP_CipherFinal_ex(c[k], o[k] + len, &outl);
        }
        if (fin[k] && outl != 0) {
            snprintf(why, whyn, "final wrote %d bytes", outl);
            goto done;
        }
        if (fin[k] && enc && EVP_CIPHER_CTX_ctrl(c[k], EVP_CTRL_AEAD_GET_TAG, 16, t[k]) <= 0) {
            snprintf(why, whyn, "get tag after final (%s ctx)", k ? "copied" : "original");
            goto done;
        }
    }
    if (nctx == 2 && fin[0] != fin[1]) {
        snprintf(why, whyn, "final: original %d, copy %d", fin[0], fin[1]);
        goto done;
    }
    *final_ok = fin[0];
    ok = 1;
done:
    EVP_CIPHER_CTX_free(c[0]);
    EVP_CIPHER_CTX_free(c[1]);
    ERR_clear_error();
    return ok;
}

struct counts {
    int aead, aead_dup, aead_bad, shorttag, tls12_seal, tls12_open, tls12_bad, tls13_rec, tls13_bad;
};

/* Random AEAD messages, random plans, vs the default provider; both directions. */
static void aead_cases(int ncases, struct counts *n)
{
    uint8_t *aad = t_xmalloc(MAX_AAD), *pt = t_xmalloc(MAX_DATA + 16);
    uint8_t *ct_d = t_xmalloc(MAX_DATA + 16), *ct_o = t_xmalloc(MAX_DATA + 16);
    uint8_t *ct_o2 = t_xmalloc(MAX_DATA + 16), *pt_o = t_xmalloc(MAX_DATA + 16);
    uint8_t *pt_o2 = t_xmalloc(MAX_DATA + 16), *pt_d = t_xmalloc(MAX_DATA + 16);
    char why[200], desc[240];

    for (int ci = 0; ci < ncases; ci++) {
        uint8_t key[32], nonce[12], tag_d[16], tag_o[16], tag_o2[16], tag_x[16];
        size_t aadlen = pick_len(MAX_AAD), len = pick_len(MAX_DATA);
        struct plan p;
        int fin, ok;

        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(nonce, sizeof(nonce));
        t_rand_bytes(aad, aadlen);
        t_rand_bytes(pt, len);
        if (!T_OK(dflt_aead(1, key, nonce, aad, aadlen, pt, len, ct_d, tag_d, 16, 0),
                  "case %d: default provider seal failed", ci))
            continue;

        /* seal with chapoly */
        plan_make(&p, aadlen, len, 1);
        plan_describe(desc, sizeof(desc), &p);
        ok = ours_aead(1, &p, key, nonce, aad, pt, len, ct_o, tag_o, ct_o2, tag_o2, &fin, why, sizeof(why));
        if (T_OK(ok && fin, "case %d seal (aad %zu, len %zu; %s): %s%s", ci, aadlen, len, desc, why,
                 ok ? ", final failed" : "")) {
            T_OK(memcmp(ct_o, ct_d, len) == 0, "case %d seal (aad %zu, len %zu; %s): ciphertext differs "
                 "from default", ci, aadlen, len, desc);
            T_OK(memcmp(tag_o, tag_d, 16) == 0, "case %d seal (aad %zu, len %zu; %s): tag differs from "
                 "default", ci, aadlen, len, desc);
            if (p.dup_at >= 0 && !p.dup_orphan) {
                T_OK(memcmp(ct_o2, ct_d, len) == 0 && memcmp(tag_o2, tag_d, 16) == 0,
                     "case %d seal (aad %zu, len %zu; %s): copied context's output differs", ci, aadlen,
                     len, desc);
            }
            n->aead_dup += p.dup_at >= 0;
        }
        plan_free(&p);

        /* open the default's output with chapoly */
        plan_make(&p, aadlen, len, 1);
        plan_describe(desc, sizeof(desc), &p);
        memcpy(tag_x, tag_d, 16);
        ok = ours_aead(0, &p, key, nonce, aad, ct_d, len, pt_o, tag_x, pt_o2, NULL, &fin, why, sizeof(why));
        if (T_OK(ok && fin, "case %d open (aad %zu, len %zu; %s): %s%s", ci, aadlen, len, desc, why,
                 ok ? ", final failed" : "")) {
            T_OK(memcmp(pt_o, pt, len) == 0, "case %d open (aad %zu, len %zu; %s): plaintext differs",
                 ci, aadlen, len, desc);
            if (p.dup_at >= 0 && !p.dup_orphan)
                T_OK(memcmp(pt_o2, pt, len) == 0, "case %d open (aad %zu, len %zu; %s): copied "
                     "context's plaintext differs", ci, aadlen, len, desc);
        }
        plan_free(&p);

        /* the default provider opens chapoly's output */
        T_OK(dflt_aead(0, key, nonce, aad, aadlen, ct_o, len, pt_d, tag_o, 16, 0)
             && memcmp(pt_d, pt, len) == 0, "case %d: default provider cannot open chapoly's output "
             "(aad %zu, len %zu)", ci, aadlen, len);

        /* every 6th case: one flipped bit in AAD, ciphertext or tag must fail at final */
        if (ci % 6 == 0) {
            uint8_t *a2 = t_xmalloc(aadlen), *c2 = t_xmalloc(len);
            int where = (int)t_rand_below(3);

            if (aadlen > 0)
                memcpy(a2, aad, aadlen);
            if (len > 0)
                memcpy(c2, ct_d, len);
            memcpy(tag_x, tag_d, 16);
            if (where == 0 && aadlen > 0)
                a2[t_rand_below(aadlen)] ^= (uint8_t)(1u << t_rand_below(8));
            else if (where == 1 && len > 0)
                c2[t_rand_below(len)] ^= (uint8_t)(1u << t_rand_below(8));
            else
                tag_x[t_rand_below(16)] ^= (uint8_t)(1u << t_rand_below(8));
            plan_make(&p, aadlen, len, 1);
            plan_describe(desc, sizeof(desc), &p);
            ok = ours_aead(0, &p, key, nonce, a2, c2, len, pt_o, tag_x, pt_o2, NULL, &fin, why, sizeof(why));
            T_OK(ok && !fin, "case %d corrupted open (aad %zu, len %zu; %s): %s", ci, aadlen, len, desc,
                 ok ? "final accepted a corrupted message" : why);
            T_OK(!dflt_aead(0, key, nonce, a2, aadlen, c2, len, pt_d, tag_x, 16, 0),
                 "case %d: default provider accepted a corrupted message", ci);
            plan_free(&p);
            free(a2);
            free(c2);
            n->aead_bad++;
        }
        n->aead++;
    }
    free(aad);
    free(pt);
    free(ct_d);
    free(ct_o);
    free(ct_o2);
    free(pt_o);
    free(pt_o2);
    free(pt_d);
}

/*
 * Tags shorter than 16 bytes: either declared up front (EVP_CTRL_AEAD_SET_TAG
 * with NULL data, as CCM-style callers do) or just read truncated; opened with
 * the short tag; a flipped bit inside it must fail.
 */
static void short_tag_cases(int ncases, struct counts *n)
{
    uint8_t aad[200], pt[1200], ct_o[1216], ct_d[1216], out[1216];

    for (int ci = 0; ci < ncases; ci++) {
        uint8_t key[32], nonce[12], tag_o[16] = { 0 }, tag_d[16] = { 0 }, bad[16];
        size_t taglen = ci % 3 == 0 ? 8 : 1 + t_rand_below(15);
        size_t aadlen = pick_len(sizeof(aad)), len = pick_len(sizeof(pt));
        int declare = (int)t_rand_below(2), outl, ok;

        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(nonce, sizeof(nonce));
        t_rand_bytes(aad, sizeof(aad));
        t_rand_bytes(pt, sizeof(pt));
        if (!T_OK(dflt_aead(1, key, nonce, aad, aadlen, pt, len, ct_d, tag_d, taglen, declare),
                  "short tag case %d: default seal failed", ci))
            continue;

        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        size_t got_taglen = 0;
        OSSL_PARAM gp[2] = { OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, &got_taglen),
                             OSSL_PARAM_construct_end() };
        ok = ctx != NULL && EVP_CipherInit_ex2(ctx, ours, key, nonce, 1, NULL);
        if (ok && declare) {
            ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)taglen, NULL) > 0;
            T_OK(ok, "short tag case %d: declaring taglen %zu refused", ci, taglen);
            T_OK(!ok || (EVP_CIPHER_CTX_get_params(ctx, gp) && got_taglen == taglen),
                 "short tag case %d: taglen reads %zu after declaring %zu", ci, got_taglen, taglen);
        }
        ok = ok && EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)aadlen);
        if (ok)
            t_note_aad_outl(aadlen, outl, "short-tag AAD update");
        ok = ok && EVP_CipherUpdate(ctx, ct_o, &outl, pt, (int)len) && outl == (int)len
             && EVP_CipherFinal_ex(ctx, ct_o + len, &outl) && outl == 0
             && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)taglen, tag_o) > 0;
        EVP_CIPHER_CTX_free(ctx);
        if (T_OK(ok, "short tag case %d (taglen %zu, %s, aad %zu, len %zu): seal failed", ci, taglen,
                 declare ? "declared" : "truncated", aadlen, len)) {
            T_OK(memcmp(ct_o, ct_d, len) == 0, "short tag case %d: ciphertext differs", ci);
            T_OK(memcmp(tag_o, tag_d, taglen) == 0, "short tag case %d (taglen %zu, %s): tag differs "
                 "from default", ci, taglen, declare ? "declared" : "truncated");
        }

        for (int flip = 0; flip < 2; flip++) {
            memcpy(bad, tag_d, taglen);
            if (flip)
                bad[t_rand_below(taglen)] ^= (uint8_t)(1u << t_rand_below(8));
            ctx = EVP_CIPHER_CTX_new();
            ok = ctx != NULL && EVP_CipherInit_ex2(ctx, ours, key, nonce, 0, NULL)
                 && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)taglen, bad) > 0
                 && EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)aadlen)
                 && EVP_CipherUpdate(ctx, out, &outl, ct_d, (int)len) && outl == (int)len;
            int fin = ok && EVP_CipherFinal_ex(ctx, out + len, &outl);
            EVP_CIPHER_CTX_free(ctx);
            ERR_clear_error();
            int dfin = dflt_aead(0, key, nonce, aad, aadlen, ct_d, len, out, bad, taglen, 0);
            T_OK(ok, "short tag case %d (taglen %zu): open calls failed before final", ci, taglen);
            T_OK(fin == !flip && dfin == !flip, "short tag case %d (taglen %zu, %s tag): chapoly final %d, "
                 "default final %d", ci, taglen, flip ? "flipped" : "right", fin, dfin);
        }
        n->shorttag++;
    }
}

static void be_store(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static int tls12_aad(EVP_CIPHER_CTX *ctx, uint64_t seq, size_t reclen)
{
    uint8_t aad[EVP_AEAD_TLS1_AAD_LEN];

    be_store(aad, seq, 8);
    aad[8] = 23;
    aad[9] = 3;
    aad[10] = 3;
    be_store(aad + 11, reclen, 2);
    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, EVP_AEAD_TLS1_AAD_LEN, aad);
}

static EVP_CIPHER_CTX *tls12_ctx(const EVP_CIPHER *c, const uint8_t key[32], const uint8_t iv[12], int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

    if (ctx != NULL && !EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc)) {
        EVP_CIPHER_CTX_free(ctx);
        ctx = NULL;
    }
    return ctx;
}

/*
 * TLS 1.2 record mode as libssl drives it: one context per direction, per
 * record the 13-byte AAD ctrl, then one in-place update over payload + tag.
 */
static void tls12_cases(int nrandom, struct counts *n)
{
    uint8_t key[32], iv[12];
    uint8_t *bo = t_xmalloc(TLS_MAX_RECORD + 16), *bd = t_xmalloc(TLS_MAX_RECORD + 16);
    uint8_t *pt = t_xmalloc(TLS_MAX_RECORD + 16), *ct = t_xmalloc(TLS_MAX_RECORD + 16);

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    EVP_CIPHER_CTX *oe = tls12_ctx(ours, key, iv, 1), *de = tls12_ctx(dflt, key, iv, 1);
    EVP_CIPHER_CTX *od = tls12_ctx(ours, key, iv, 0), *dd = tls12_ctx(dflt, key, iv, 0);
    uint64_t seq = t_rand64() >> (t_rand_below(2) ? 0 : 40);

    if (!T_OK(oe && de && od && dd, "TLS 1.2: context setup failed"))
        goto out;
    for (int ri = 0; ri < 301 + nrandom; ri++, seq++) {
        size_t len = ri <= 300 ? (size_t)ri : pick_len(TLS_MAX_RECORD);
        int lo = -1, ld = -1, ro, rd, ao, ad;

        t_rand_bytes(pt, len);
        memcpy(bo, pt, len);
        memcpy(bd, pt, len);
        ao = tls12_aad(oe, seq, len);
        ad = tls12_aad(de, seq, len);
        if (!T_OK(ao == 16 && ad == 16, "TLS 1.2 seal record %d (len %zu): AAD ctrl returned %d (default %d)",
                  ri, len, ao, ad))
            continue;
        ro = EVP_CipherUpdate(oe, bo, &lo, bo, (int)len + 16);
        rd = EVP_CipherUpdate(de, bd, &ld, bd, (int)len + 16);
        T_OK(rd == 1 && ld == (int)len + 16, "TLS 1.2 seal record %d: default returned %d, outl %d", ri, rd, ld);
        if (!T_OK(ro == 1 && lo == (int)len + 16, "TLS 1.2 seal record %d (len %zu, seq %llu): returned %d, "
                  "outl %d, expected outl %zu", ri, len, (unsigned long long)seq, ro, lo, len + 16))
            continue;
        T_OK(memcmp(bo, bd, len + 16) == 0, "TLS 1.2 seal record %d (len %zu, seq %llu): record differs from "
             "default", ri, len, (unsigned long long)seq);
        n->tls12_seal++;
        memcpy(ct, bo, len + 16);

        /* open chapoly's record with chapoly and with default */
        int bad = ri % 4 == 3;
        size_t flip = t_rand_below((len + 16) * 8);
        for (int k = 0; k < 2; k++) {
            EVP_CIPHER_CTX *d = k ? dd : od;
            uint8_t *b = k ? bd : bo;
            int l = -1, a, r;

            memcpy(b, ct, len + 16);
            if (bad)
                b[flip / 8] ^= (uint8_t)(1u << (flip % 8));
            a = tls12_aad(d, seq, len + 16);
            if (!T_OK(a == 16, "TLS 1.2 open record %d (%s): AAD ctrl returned %d", ri, k ? "default" : "chapoly",
                      a))
                continue;
            r = EVP_CipherUpdate(d, b, &l, b, (int)len + 16);
            ERR_clear_error();
            if (!bad) {
                if (T_OK(r == 1 && l == (int)len, "TLS 1.2 open record %d (%s, len %zu, seq %llu): returned %d, "
                         "outl %d", ri, k ? "default" : "chapoly", len, (unsigned long long)seq, r, l))
                    T_OK(memcmp(b, pt, len) == 0, "TLS 1.2 open record %d (%s): plaintext differs", ri,
                         k ? "default" : "chapoly");
            } else {
                size_t nz = 0;
                for (size_t i = 0; i < len; i++)
                    nz += b[i] != 0;
                T_OK(r == 0, "TLS 1.2 open record %d (%s, len %zu, bit %zu flipped): returned %d, outl %d",
                     ri, k ? "default" : "chapoly", len, flip, r, l);
                T_OK(nz == 0, "TLS 1.2 open record %d (%s, len %zu, bit %zu flipped): %zu payload bytes not "
                     "zeroed", ri, k ? "default" : "chapoly", len, flip, nz);
            }
        }
        if (bad)
            n->tls12_bad++;
        else
            n->tls12_open++;
    }
out:
    EVP_CIPHER_CTX_free(oe);
    EVP_CIPHER_CTX_free(de);
    EVP_CIPHER_CTX_free(od);
    EVP_CIPHER_CTX_free(dd);
    free(bo);
    free(bd);
    free(pt);
    free(ct);
}

/* TLS 1.3 key setup as libssl 3.0 does it: no key, set ivlen, then key only (enc -1 = keep). */
static EVP_CIPHER_CTX *tls13_ctx(const EVP_CIPHER *c, const uint8_t key[32], int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

    if (ctx == NULL || !EVP_CipherInit_ex(ctx, c, NULL, NULL, NULL, enc)
        || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) <= 0
        || EVP_CIPHER_CTX_get_key_length(ctx) != 32
        || !EVP_CipherInit_ex(ctx, NULL, NULL, key, NULL, -1)) {
        EVP_CIPHER_CTX_free(ctx);
        ctx = NULL;
    }
    return ctx;
}

/*
 * One TLS 1.3 record on an existing context: init with the per-record nonce,
 * [set tag], 5-byte header as AAD, in-place update, final, [get tag].
 * Returns 1 if every call succeeded; *why names the first failing call.
 */
static int tls13_record(EVP_CIPHER_CTX *ctx, int enc, const uint8_t nonce[12], uint8_t *buf, size_t len,
                        uint8_t tag[16], const char **why)
{
    uint8_t hdr[5] = { 23, 3, 3, (uint8_t)((len + 16) >> 8), (uint8_t)(len + 16) };
    int l1 = -1, l2 = -1, l3 = -1;

    *why = "get ivlen";
    if (EVP_CIPHER_CTX_get_iv_length(ctx) != 12)
        return 0;
    *why = "init with nonce";
    if (!EVP_CipherInit_ex(ctx, NULL, NULL, NULL, nonce, enc))
        return 0;
    *why = "set tag";
    if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag) <= 0)
        return 0;
    *why = "header update";
    if (!EVP_CipherUpdate(ctx, NULL, &l1, hdr, 5))
        return 0;
    t_note_aad_outl(5, l1, "TLS 1.3 header update");
    *why = "payload update";
    if (!EVP_CipherUpdate(ctx, buf, &l2, buf, (int)len) || l2 != (int)len)
        return 0;
    *why = "final";
    if (!EVP_CipherFinal_ex(ctx, buf + l2, &l3) || l3 != 0)
        return 0;
    *why = "get tag";
    if (enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) <= 0)
        return 0;
    *why = "";
    return 1;
}

static void tls13_cases(int nsessions, int nrecords, struct counts *n)
{
    uint8_t *bo = t_xmalloc(TLS_MAX_RECORD + 2), *bd = t_xmalloc(TLS_MAX_RECORD + 2);
    uint8_t *pt = t_xmalloc(TLS_MAX_RECORD + 2), *ct = t_xmalloc(TLS_MAX_RECORD + 2);

    for (int si = 0; si < nsessions; si++) {
        uint8_t key[32], iv[12];

        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(iv, sizeof(iv));
        EVP_CIPHER_CTX *oe = tls13_ctx(ours, key, 1), *de = tls13_ctx(dflt, key, 1);
        EVP_CIPHER_CTX *od = tls13_ctx(ours, key, 0), *dd = tls13_ctx(dflt, key, 0);
        uint64_t seq = si % 2 ? 0 : t_rand64();

        if (T_OK(oe && de && od && dd, "TLS 1.3 session %d: key setup failed (chapoly enc %p dec %p)", si,
                 (void *)oe, (void *)od)) {
            for (int ri = 0; ri < nrecords; ri++, seq++) {
                uint8_t nonce[12], tag_o[16], tag_d[16], tag_x[16];
                /* inner plaintext: content + type byte, 1 .. 2^14 + 1 bytes */
                size_t len = 1 + pick_len(TLS_MAX_RECORD);
                const char *why;

                memcpy(nonce, iv, 12);
                for (int i = 0; i < 8; i++)
                    nonce[4 + i] ^= (uint8_t)(seq >> (56 - 8 * i));
                t_rand_bytes(pt, len);
                memcpy(bo, pt, len);
                memcpy(bd, pt, len);
                int rd = tls13_record(de, 1, nonce, bd, len, tag_d, &why);
                T_OK(rd, "TLS 1.3 session %d record %d: default seal failed at %s", si, ri, why);
                if (!T_OK(tls13_record(oe, 1, nonce, bo, len, tag_o, &why),
                          "TLS 1.3 session %d record %d (len %zu): seal failed at %s", si, ri, len, why) || !rd)
                    continue;
                T_OK(memcmp(bo, bd, len) == 0 && memcmp(tag_o, tag_d, 16) == 0,
                     "TLS 1.3 session %d record %d (len %zu): record differs from default", si, ri, len);
                memcpy(ct, bo, len);

                int bad = ri % 5 == 4;
                size_t flip = t_rand_below((len + 16) * 8);
                for (int k = 0; k < 2; k++) {
                    uint8_t *b = k ? bd : bo;

                    memcpy(b, ct, len);
                    memcpy(tag_x, tag_o, 16);
                    if (bad) {
                        if (flip / 8 < len)
                            b[flip / 8] ^= (uint8_t)(1u << (flip % 8));
                        else
                            tag_x[flip / 8 - len] ^= (uint8_t)(1u << (flip % 8));
                    }
                    int r = tls13_record(k ? dd : od, 0, nonce, b, len, tag_x, &why);
                    ERR_clear_error();
                    if (!bad) {
                        if (T_OK(r, "TLS 1.3 session %d record %d (%s, len %zu): open failed at %s", si, ri,
                                 k ? "default" : "chapoly", len, why))
                            T_OK(memcmp(b, pt, len) == 0, "TLS 1.3 session %d record %d (%s): plaintext "
                                 "differs", si, ri, k ? "default" : "chapoly");
                    } else {
                        T_OK(!r && strcmp(why, "final") == 0, "TLS 1.3 session %d record %d (%s, len %zu, "
                             "bit %zu flipped): expected final to fail, got %s", si, ri,
                             k ? "default" : "chapoly", len, flip, r ? "success" : why);
                    }
                }
                if (bad)
                    n->tls13_bad++;
                else
                    n->tls13_rec++;
            }
        }
        EVP_CIPHER_CTX_free(oe);
        EVP_CIPHER_CTX_free(de);
        EVP_CIPHER_CTX_free(od);
        EVP_CIPHER_CTX_free(dd);
    }
    free(bo);
    free(bd);
    free(pt);
    free(ct);
}

int main(void)
{
    struct counts n = { 0 };

    t_setup();
    ours = t_cipher("ChaCha20-Poly1305", 1);
    dflt = t_cipher("ChaCha20-Poly1305", 0);
    if (T_OK(ours != NULL && dflt != NULL, "fetching ChaCha20-Poly1305 failed")) {
        aead_cases(2000, &n);
        short_tag_cases(200, &n);
        tls12_cases(250, &n);
        tls13_cases(60, 8, &n);
        t_check_aad_outl();
    }
    printf("aead: %d messages sealed+opened vs default (%d with a context copy mid-message, "
           "%d corrupted and rejected)\n", n.aead, n.aead_dup, n.aead_bad);
    printf("short tags: %d\n", n.shorttag);
    printf("tls1.2 records: %d sealed, %d opened, %d corrupted\n", n.tls12_seal, n.tls12_open, n.tls12_bad);
    printf("tls1.3 records: %d sealed+opened, %d corrupted\n", n.tls13_rec, n.tls13_bad);
    printf("differential cases: %d\n", n.aead + n.shorttag + n.tls12_seal + n.tls13_rec + n.tls13_bad);
    EVP_CIPHER_free(ours);
    EVP_CIPHER_free(dflt);
    t_teardown();
    return t_finish("test_evp_diff");
}
