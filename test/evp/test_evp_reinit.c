/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Re-initialisation against the default provider (issue 19 item 7): after
 * some bytes, EVP_CipherInit_ex(ctx, NULL, NULL, key or NULL, iv or NULL)
 * with every init pattern (key only, IV only, both, neither; the same or a
 * new key/IV), then more updates. The default provider (OpenSSL 3.0 to 3.5,
 * providers/implementations/ciphers/cipher_chacha20*.c) does:
 *   ChaCha20   key only: keeps the block counter and drops the partial block,
 *              so the stream goes on at the start of the block the last byte
 *              was taken from (a block whose last byte was used by a
 *              previous partial-block update counts as that block too);
 *              IV (with or without key): restarts at the new IV;
 *              neither: goes on exactly where it was.
 *   the AEADs  key only / neither: start a message under the old nonce
 *              (after a message had used it: nonce reuse) or continue the
 *              message in progress (neither); IV: a new message.
 * chapoly must give the same bytes (and tags, and the same answers for the
 * "updated-iv" and "iv" context parameters) wherever it accepts; the AEADs
 * refuse, by design, a message that would reuse a used nonce without a new
 * IV (docs/behaviour.md, "Re-initialisation"): there the update/final calls
 * must fail cleanly, with an error queued and no output.
 * XChaCha20-Poly1305 has no default implementation: its reference is the
 * default ChaCha20-Poly1305 under the HChaCha20 subkey, which is computed
 * here from the default ChaCha20 keystream (one block minus the input words).
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "test_common.h"

#define MAXLEN 70000
#define BUFLEN (MAXLEN + 8192) /* the largest "before" plus every "after" fits */
#define P_KEY 1
#define P_IV 2
static const char *const pat_name[] = { "neither", "key only", "IV only", "key+IV" };

static EVP_CIPHER *c20[2], *cp[2], *xcp; /* [0] default, [1] chapoly */
static uint8_t *src, *out_d, *out_o, *plain;

static EVP_CIPHER_CTX *ctx_copy(const EVP_CIPHER_CTX *in)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

    if (c != NULL && !EVP_CIPHER_CTX_copy(c, in)) {
        EVP_CIPHER_CTX_free(c);
        c = NULL;
    }
    return c;
}

/* ---- ChaCha20 ---- */

/*
 * The "updated-iv" and "iv" context parameters: same return value and same
 * buffer contents (the default 3.0-3.5 answers neither: 1, buffer untouched).
 */
static void cmp_iv_params(EVP_CIPHER_CTX *d, EVP_CIPHER_CTX *o, const char *where)
{
    for (int which = 0; which < 2; which++) {
        uint8_t bd[16], bo[16];

        memset(bd, 0xee, sizeof(bd));
        memset(bo, 0xee, sizeof(bo));
        int rd = which ? EVP_CIPHER_CTX_get_original_iv(d, bd, 16)
                       : EVP_CIPHER_CTX_get_updated_iv(d, bd, 16);
        int ro = which ? EVP_CIPHER_CTX_get_original_iv(o, bo, 16)
                       : EVP_CIPHER_CTX_get_updated_iv(o, bo, 16);
        ERR_clear_error();
        T_OK(rd == ro && memcmp(bd, bo, 16) == 0, "%s: %s: default %d, chapoly %d (or bytes differ)",
             where, which ? "get_original_iv" : "get_updated_iv", rd, ro);
    }
}

/* One update of n bytes at src+off on both contexts; the outputs must agree. */
static int c20_update(EVP_CIPHER_CTX *d, EVP_CIPHER_CTX *o, size_t off, size_t n, int inplace,
                      const char *where)
{
    int ld = -1, lo = -1, rd, ro;

    if (inplace) {
        memcpy(out_d + off, src + off, n);
        memcpy(out_o + off, src + off, n);
    }
    rd = EVP_CipherUpdate(d, out_d + off, &ld, inplace ? out_d + off : src + off, (int)n);
    ro = EVP_CipherUpdate(o, out_o + off, &lo, inplace ? out_o + off : src + off, (int)n);
    return T_OK(rd == 1 && ro == 1 && ld == (int)n && lo == (int)n,
                "%s: update %zu at %zu: default %d/%d, chapoly %d/%d", where, n, off, rd, ld, ro,
                lo)
           && T_OK(memcmp(out_d + off, out_o + off, n) == 0,
                   "%s: update of %zu bytes at %zu differs from the default", where, n, off);
}

struct seq {
    size_t n, len[4];
};

/* What is processed before the re-init: block boundaries, partial blocks, splits. */
static const struct seq before[] = {
    { 0, { 0 } },      { 1, { 1 } },         { 1, { 63 } },        { 1, { 64 } },
    { 1, { 65 } },     { 1, { 100 } },       { 1, { 128 } },       { 2, { 100, 28 } },
    { 2, { 60, 4 } },  { 2, { 1, 63 } },     { 3, { 36, 28, 64 } }, { 3, { 3, 61, 1 } },
    { 2, { 100, 10 } }, { 1, { 4103 } },     { 1, { 65536 } },     { 2, { 1000, 30000 } },
};
static const size_t after[] = { 5, 59, 64, 1, 130, 1000, 4096, 3 };

/*
 * Every init pattern after every 'before' sequence, with the same or new
 * key/IV, both directions, in place or not, a counter far from or near the
 * 32-bit wrap (the default carries into the first nonce word).
 */
static int c20_matrix(void)
{
    int cases = 0;

    for (size_t bi = 0; bi < sizeof(before) / sizeof(before[0]); bi++)
        for (int pat = 0; pat < 4; pat++)
            for (int same = 0; same < 2; same++) {
                if (pat == 0 && same)
                    continue;
                for (int wrap = 0; wrap < 2; wrap++) {
                    uint8_t k1[32], k2[32], iv1[16], iv2[16];
                    int enc = (int)t_rand_below(2), inplace = (int)t_rand_below(2);
                    char where[160];

                    t_rand_bytes(k1, 32);
                    t_rand_bytes(k2, 32);
                    t_rand_bytes(iv1, 16);
                    t_rand_bytes(iv2, 16);
                    if (wrap) /* counter 0xfffffffe: the wrap comes 128 bytes in */
                        memcpy(iv1, "\xfe\xff\xff\xff", 4);
                    snprintf(where, sizeof(where), "ChaCha20 %s (%s) after %zu updates [%zu%s], %s%s",
                             pat_name[pat], same ? "same" : "new", before[bi].n, before[bi].len[0],
                             before[bi].n > 1 ? ",..." : "", enc ? "enc" : "dec",
                             wrap ? ", counter near wrap" : "");
                    EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new(), *o = EVP_CIPHER_CTX_new();
                    if (!T_OK(d && o && EVP_CipherInit_ex(d, c20[0], NULL, k1, iv1, enc)
                                  && EVP_CipherInit_ex(o, c20[1], NULL, k1, iv1, enc),
                              "%s: init", where))
                        goto next;
                    size_t off = 0;
                    for (size_t i = 0; i < before[bi].n; off += before[bi].len[i++])
                        if (!c20_update(d, o, off, before[bi].len[i], inplace, where))
                            goto next;
                    cmp_iv_params(d, o, where);
                    const uint8_t *k = pat & P_KEY ? (same ? k1 : k2) : NULL;
                    const uint8_t *iv = pat & P_IV ? (same ? iv1 : iv2) : NULL;
                    int rd = EVP_CipherInit_ex(d, NULL, NULL, k, iv, enc);
                    int ro = EVP_CipherInit_ex(o, NULL, NULL, k, iv, enc);
                    if (!T_OK(rd == 1 && ro == 1, "%s: re-init: default %d, chapoly %d", where, rd, ro))
                        goto next;
                    cmp_iv_params(d, o, where);
                    for (size_t i = 0; i < sizeof(after) / sizeof(after[0]); off += after[i++])
                        if (!c20_update(d, o, off, after[i], inplace, where))
                            goto next;
                    cmp_iv_params(d, o, where);
                    cases++;
                next:
                    EVP_CIPHER_CTX_free(d);
                    EVP_CIPHER_CTX_free(o);
                }
            }
    return cases;
}

/*
 * Random sequences of updates (0..1100 bytes, sometimes more) and re-inits
 * (any pattern, keys and IVs from small pools so "same" comes up), context
 * copies, direction changes.
 */
static int c20_random(int n)
{
    static const size_t scales[] = { 70, 130, 130, 1100, 9000 };
    uint8_t keys[3][32], ivs[3][16];
    int ops = 0;

    for (int ci = 0; ci < n; ci++) {
        char where[96];
        int enc = (int)t_rand_below(2);

        t_rand_bytes(keys, sizeof(keys));
        t_rand_bytes(ivs, sizeof(ivs));
        if (t_rand_below(4) == 0)
            memcpy(ivs[t_rand_below(3)], "\xff\xff\xff\xff", 4);
        EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new(), *o = EVP_CIPHER_CTX_new();
        snprintf(where, sizeof(where), "ChaCha20 random sequence %d", ci);
        if (!T_OK(d && o && EVP_CipherInit_ex(d, c20[0], NULL, keys[0], ivs[0], enc)
                      && EVP_CipherInit_ex(o, c20[1], NULL, keys[0], ivs[0], enc),
                  "%s: init", where))
            goto next;
        size_t off = 0;
        for (int step = 0, nsteps = 2 + (int)t_rand_below(14); step < nsteps; step++, ops++) {
            size_t r = t_rand_below(10);

            if (r < 6) {
                size_t len = t_pick_len(MAXLEN / 4, scales, sizeof(scales) / sizeof(scales[0]));

                if (off + len > MAXLEN)
                    off = 0;
                if (!c20_update(d, o, off, len, r == 0, where))
                    goto next;
                off += len;
            } else if (r < 9) {
                int pat = (int)t_rand_below(4);
                const uint8_t *k = pat & P_KEY ? keys[t_rand_below(3)] : NULL;
                const uint8_t *iv = pat & P_IV ? ivs[t_rand_below(3)] : NULL;

                if (t_rand_below(4) == 0)
                    enc = !enc;
                if (!T_OK(EVP_CipherInit_ex(d, NULL, NULL, k, iv, enc)
                              && EVP_CipherInit_ex(o, NULL, NULL, k, iv, enc),
                          "%s: re-init (%s) at step %d", where, pat_name[pat], step))
                    goto next;
            } else {
                EVP_CIPHER_CTX *d2 = ctx_copy(d), *o2 = ctx_copy(o);

                if (!T_OK(d2 && o2, "%s: context copy", where)) {
                    EVP_CIPHER_CTX_free(d2);
                    EVP_CIPHER_CTX_free(o2);
                    goto next;
                }
                EVP_CIPHER_CTX_free(d);
                EVP_CIPHER_CTX_free(o);
                d = d2;
                o = o2;
            }
        }
        cmp_iv_params(d, o, where);
    next:
        EVP_CIPHER_CTX_free(d);
        EVP_CIPHER_CTX_free(o);
    }
    return ops;
}

/* ---- the AEADs ---- */

/* HChaCha20(key, n[0..16)) from one default ChaCha20 block with IV n[0..16). */
static int hchacha20(uint8_t sub[32], const uint8_t key[32], const uint8_t n16[16])
{
    static const uint32_t sigma[4] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
    uint8_t zero[64] = { 0 }, ks[64];
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int l = 0, ok = c && EVP_EncryptInit_ex(c, c20[0], NULL, key, n16)
                    && EVP_EncryptUpdate(c, ks, &l, zero, 64) && l == 64;

    EVP_CIPHER_CTX_free(c);
    for (int i = 0; i < 8; i++) {
        const uint8_t *p = ks + (i < 4 ? 4 * i : 48 + 4 * (i - 4));
        uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16
                     | (uint32_t)p[3] << 24, sub_in;
        if (i < 4)
            sub_in = sigma[i];
        else
            sub_in = (uint32_t)n16[4 * (i - 4)] | (uint32_t)n16[4 * (i - 4) + 1] << 8
                     | (uint32_t)n16[4 * (i - 4) + 2] << 16 | (uint32_t)n16[4 * (i - 4) + 3] << 24;
        w -= sub_in;
        for (int b = 0; b < 4; b++)
            sub[4 * i + b] = (uint8_t)(w >> (8 * b));
    }
    return ok;
}

/* draft-irtf-cfrg-xchacha-03 section 2.2.1: the reference itself must be right. */
static void hchacha20_selftest(void)
{
    static const uint8_t n[16] = { 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x4a,
                                   0x00, 0x00, 0x00, 0x00, 0x31, 0x41, 0x59, 0x27 };
    static const uint8_t want[32] = {
        0x82, 0x41, 0x3b, 0x42, 0x27, 0xb2, 0x7b, 0xfe, 0xd3, 0x0e, 0x42, 0x50, 0x8a, 0x87, 0x7d, 0x73,
        0xa0, 0xf9, 0xe4, 0xd5, 0x8a, 0x74, 0xa8, 0x53, 0xc1, 0x2e, 0xc4, 0x13, 0x26, 0xd3, 0xec, 0xdc
    };
    uint8_t key[32], sub[32];

    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    T_OK(hchacha20(sub, key, n) && memcmp(sub, want, 32) == 0, "HChaCha20 reference vector");
}

struct acase {
    int x;                  /* XChaCha20-Poly1305 */
    int enc;
    size_t aad1, text1;     /* before the re-init */
    int fin1;               /* ...and a final */
    int pat, same;
    size_t aad2, text2[3];  /* after it, then final */
};

/* A used nonce is never restarted without a new IV (chapoly's refusal). */
static int refused(const struct acase *a)
{
    int used = a->aad1 > 0 || a->text1 > 0 || a->fin1;

    return (a->pat == P_KEY && used) || (a->pat == 0 && a->fin1);
}

#define MAXCALLS 12
struct run {
    int r[MAXCALLS], outl[MAXCALLS], err[MAXCALLS], ncalls;
    uint8_t tag[2][16]; /* enc: the tags of the first (if final) and second message */
};

/*
 * An EVP init on an AEAD context: ci for the first, NULL for a re-init. The
 * XChaCha reference is the default ChaCha20-Poly1305 under HChaCha20(key,
 * iv[0..16)) with nonce 0^4 || iv[16..24): curk/curiv track the context's
 * key and IV to derive it.
 */
static int aead_init(EVP_CIPHER_CTX *c, const EVP_CIPHER *ci, int xref, const uint8_t *k,
                     const uint8_t *iv, int enc, uint8_t curk[32], uint8_t curiv[24])
{
    uint8_t sub[32], n12[12] = { 0 };

    if (k != NULL)
        memcpy(curk, k, 32);
    if (iv != NULL)
        memcpy(curiv, iv, 24);
    if (!xref)
        return EVP_CipherInit_ex(c, ci, NULL, k, iv, enc);
    if (k == NULL && iv == NULL)
        return EVP_CipherInit_ex(c, ci, NULL, NULL, NULL, enc);
    memcpy(n12 + 4, curiv + 16, 8);
    if (!hchacha20(sub, curk, curiv))
        return 0;
    return EVP_CipherInit_ex(c, ci, NULL, sub, iv != NULL ? n12 : NULL, enc);
}

/*
 * Drives one case: init(k1, iv1), phase 1, re-init, phase 2, final. 'ours'
 * selects chapoly (else the default, for XChaCha through the subkey). Every
 * call's result, outl and "error queued" are recorded in order; the text
 * goes to out (out[0..text1) then phase 2's text). dec: tags[0] and
 * tags[1] are the expected tags of the two messages (each set just before
 * its final); enc: the tags are read into res->tag.
 */
static void aead_drive(const struct acase *a, int ours, int enc, const uint8_t *in, uint8_t *out,
                       const uint8_t k1[32], const uint8_t k2[32], const uint8_t *iv1,
                       const uint8_t *iv2, const uint8_t *aad, uint8_t tags[2][16],
                       struct run *res)
{
    const EVP_CIPHER *ci = a->x ? (ours ? xcp : cp[0]) : cp[ours];
    int xref = a->x && !ours;
    uint8_t curk[32], curiv[24];
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    size_t off = 0;
    int n = 0, l;

#define REC(call)                                                                           \
    do {                                                                                    \
        l = -1;                                                                             \
        ERR_clear_error();                                                                  \
        res->r[n] = (call);                                                                 \
        res->outl[n] = l;                                                                   \
        res->err[n++] = ERR_peek_error() != 0;                                              \
        ERR_clear_error();                                                                  \
    } while (0)

    memset(res, 0, sizeof(*res));
    if (c == NULL)
        return;
    REC(aead_init(c, ci, xref, k1, iv1, enc, curk, curiv));
    if (a->aad1)
        REC(EVP_CipherUpdate(c, NULL, &l, aad, (int)a->aad1));
    if (a->text1) {
        REC(EVP_CipherUpdate(c, out, &l, in, (int)a->text1));
        off = a->text1;
    }
    if (a->fin1) {
        if (!enc)
            REC(t_set_tag(c, tags[0], 16));
        REC(EVP_CipherFinal_ex(c, out + off, &l));
        if (enc)
            REC(t_get_tag(c, res->tag[0], 16));
    }
    REC(aead_init(c, NULL, xref, a->pat & P_KEY ? (a->same ? k1 : k2) : NULL,
                  a->pat & P_IV ? (a->same ? iv1 : iv2) : NULL, enc, curk, curiv));
    if (a->aad2)
        REC(EVP_CipherUpdate(c, NULL, &l, aad + 100, (int)a->aad2));
    for (int i = 0; i < 3; i++) {
        REC(EVP_CipherUpdate(c, out + off, &l, in + off, (int)a->text2[i]));
        off += a->text2[i];
    }
    if (!enc)
        REC(t_set_tag(c, tags[1], 16));
    REC(EVP_CipherFinal_ex(c, out + off, &l));
    if (enc)
        REC(t_get_tag(c, res->tag[1], 16));
    res->ncalls = n;
    EVP_CIPHER_CTX_free(c);
#undef REC
}

static void aead_case(const struct acase *a, int *ok_cases, int *refused_cases)
{
    uint8_t k1[32], k2[32], iv1[24], iv2[24], aad[200], tags[2][16];
    size_t ivlen = a->x ? 24 : 12, total = a->text1 + a->text2[0] + a->text2[1] + a->text2[2];
    struct run rd, ro, re;
    char where[200];
    int refuse = refused(a);
    /*
     * OpenSSL 4.0's default refuses AAD and text after an encrypting final
     * until an init brings a new IV (openssl/openssl pull request 31104;
     * 3.0 to 3.6 accept them and reuse the nonce), with no error queued, and
     * its final then returns 1. Decrypting, the second message's expected
     * tag then cannot come from the default (it does not seal it), so its
     * final fails. Those patterns are ones chapoly refuses in every version
     * (checked below); everything up to the re-init is still accepted.
     */
    int guard40 = a->fin1 && !(a->pat & P_IV) && OpenSSL_version_num() >= 0x40000000UL;

    t_rand_bytes(k1, 32);
    t_rand_bytes(k2, 32);
    t_rand_bytes(iv1, ivlen);
    t_rand_bytes(iv2, ivlen);
    t_rand_bytes(aad, sizeof(aad));
    t_rand_bytes(src, total);
    t_rand_bytes(tags, sizeof(tags));
    snprintf(where, sizeof(where), "%s %s: aad %zu, text %zu%s, then %s (%s), aad %zu, text %zu+%zu+%zu",
             a->x ? "XChaCha20-Poly1305" : "ChaCha20-Poly1305", a->enc ? "enc" : "dec", a->aad1,
             a->text1, a->fin1 ? ", final" : "", pat_name[a->pat], a->same ? "same" : "new", a->aad2,
             a->text2[0], a->text2[1], a->text2[2]);
    if (!a->enc) {
        /*
         * The expected tags of the decrypting run: the default encrypting the
         * default's plaintext through the same calls gives back src and the
         * tags over it (the plaintext does not depend on the tags).
         */
        aead_drive(a, 0, 0, src, plain, k1, k2, iv1, iv2, aad, tags, &rd);
        aead_drive(a, 0, 1, plain, out_o, k1, k2, iv1, iv2, aad, NULL, &re);
        /* OpenSSL 4.0's default refuses the second message (guard40 below) */
        T_OK(memcmp(out_o, src, guard40 ? a->text1 : total) == 0, "%s: reference round trip",
             where);
        memcpy(tags, re.tag, sizeof(tags));
    }
    memset(out_d, 0xa5, total);
    memset(out_o, 0xa5, total);
    aead_drive(a, 0, a->enc, src, out_d, k1, k2, iv1, iv2, aad, tags, &rd);
    aead_drive(a, 1, a->enc, src, out_o, k1, k2, iv1, iv2, aad, tags, &ro);
    /* calls up to and including the re-init */
    int first2 = 2 + (a->aad1 > 0) + (a->text1 > 0) + (a->fin1 ? 2 : 0);
    int dall = rd.ncalls > 0, drefused = 0;
    for (int i = 0; i < rd.ncalls; i++) {
        if (guard40 && i >= first2)
            drefused |= rd.r[i] == 0;
        else
            dall &= rd.r[i] == 1;
    }
    T_OK(dall, "%s: the default refused a call (the reference must accept every pattern)", where);
    if (guard40)
        T_OK(refuse && drefused, "%s: OpenSSL >= 4.0: the default accepted a message on the "
             "finished message's nonce", where);
    if (!T_OK(ro.ncalls == rd.ncalls, "%s: call counts", where))
        return;
    if (!refuse) {
        for (int i = 0; i < ro.ncalls; i++)
            T_OK(ro.r[i] == rd.r[i] && ro.outl[i] == rd.outl[i],
                 "%s: call %d: default %d (outl %d), chapoly %d (outl %d)", where, i, rd.r[i],
                 rd.outl[i], ro.r[i], ro.outl[i]);
        T_OK(memcmp(out_o, out_d, total) == 0, "%s: output differs from the default", where);
        if (a->enc)
            T_OK(memcmp(ro.tag, rd.tag, sizeof(ro.tag)) == 0, "%s: tag differs from the default",
                 where);
        ++*ok_cases;
        return;
    }
    /* Everything up to the re-init as the default; everything after it refused. */
    for (int i = 0; i < first2; i++)
        T_OK(ro.r[i] == 1 && ro.outl[i] == rd.outl[i], "%s: call %d before the refusal: %d", where,
             i, ro.r[i]);
    if (a->enc && a->fin1)
        T_OK(memcmp(ro.tag[0], rd.tag[0], 16) == 0, "%s: first tag differs", where);
    for (int i = first2; i < ro.ncalls; i++) {
        if (!a->enc && i == ro.ncalls - 2) /* setting the expected tag is not refused */
            continue;
        if (a->enc && a->pat == 0 && i == ro.ncalls - 1) {
            /* a re-init with neither changes nothing: the finished message's tag stays */
            T_OK(ro.r[i] == 1 && memcmp(ro.tag[1], rd.tag[0], 16) == 0,
                 "%s: the tag after a refused message is not the finished message's", where);
            continue;
        }
        T_OK(ro.r[i] == 0 && ro.err[i], "%s: call %d after a key-only/neither re-init on a used "
             "nonce: chapoly returned %d (error queued: %d), want a refusal", where, i, ro.r[i],
             ro.err[i]);
        T_OK(ro.outl[i] <= 0, "%s: call %d refused but outl %d", where, i, ro.outl[i]);
    }
    size_t z = 0;
    for (size_t i = a->text1; i < total; i++)
        z += out_o[i] != 0xa5;
    T_OK(z == 0, "%s: %zu bytes written by refused calls", where, z);
    T_OK(memcmp(out_o, out_d, a->text1) == 0, "%s: text before the re-init differs", where);
    ++*refused_cases;
}

static int aead_matrix(int *refused_cases)
{
    static const size_t text1s[] = { 0, 1, 63, 64, 65, 100, 128, 1000 };
    int ok_cases = 0;

    for (int x = 0; x < 2; x++)
        for (int enc = 1; enc >= 0; enc--)
            for (size_t ti = 0; ti < sizeof(text1s) / sizeof(text1s[0]); ti++)
                for (int aad1 = 0; aad1 < 2; aad1++)
                    for (int fin1 = 0; fin1 < 2; fin1++)
                        for (int pat = 0; pat < 4; pat++)
                            for (int same = 0; same < 2; same++) {
                                if (pat == 0 && same)
                                    continue;
                                /* phase 2 AAD only where a new message may start (never after text) */
                                struct acase a = { x, enc, aad1 ? 13 : 0, text1s[ti], fin1, pat, same,
                                                   pat != 0 || fin1 ? 7 + t_rand_below(30) : 0,
                                                   { 5, 59 + t_rand_below(70), 1 + t_rand_below(2000) } };
                                if (pat == 0 && !fin1 && a.text1 == 0 && a.aad1 == 0)
                                    a.aad2 = 7;
                                aead_case(&a, &ok_cases, refused_cases);
                            }
    return ok_cases;
}

/*
 * After a refusal the context is not stuck: a new IV starts a message, with
 * the key the refused re-init brought, as in the default.
 */
static void aead_recover(int x)
{
    const EVP_CIPHER *ci = x ? xcp : cp[1];
    size_t ivlen = x ? 24 : 12;
    uint8_t k1[32], k2[32], iv1[24], iv3[24], curk[32], curiv[24], aad[13], to[16], td[16];
    EVP_CIPHER_CTX *o = EVP_CIPHER_CTX_new(), *d = EVP_CIPHER_CTX_new();
    int l;

    t_rand_bytes(k1, 32);
    t_rand_bytes(k2, 32);
    t_rand_bytes(iv1, ivlen);
    t_rand_bytes(iv3, ivlen);
    t_rand_bytes(aad, 13);
    t_rand_bytes(src, 300);
    T_OK(EVP_EncryptInit_ex(o, ci, NULL, k1, iv1) && EVP_EncryptUpdate(o, out_o, &l, src, 100)
             && EVP_EncryptInit_ex(o, NULL, NULL, k2, NULL),
         "recover %d: a message, then a key-only re-init", x);
    ERR_clear_error();
    T_REJECT(EVP_EncryptUpdate(o, out_o, &l, src, 10), "recover %d: text without a new IV", x);
    T_OK(EVP_EncryptInit_ex(o, NULL, NULL, NULL, iv3) && EVP_EncryptUpdate(o, NULL, &l, aad, 13)
             && EVP_EncryptUpdate(o, out_o, &l, src, 300) && EVP_EncryptFinal_ex(o, out_o + 300, &l)
             && t_get_tag(o, to, 16),
         "recover %d: a message after a new IV", x);
    T_OK(aead_init(d, cp[0], x, k2, iv3, 1, curk, curiv) && EVP_EncryptUpdate(d, NULL, &l, aad, 13)
             && EVP_EncryptUpdate(d, out_d, &l, src, 300) && EVP_EncryptFinal_ex(d, out_d + 300, &l)
             && t_get_tag(d, td, 16),
         "recover %d: the reference message", x);
    T_OK(memcmp(out_o, out_d, 300) == 0 && memcmp(to, td, 16) == 0,
         "recover %d: the message after the refusal is not (new key, new IV)", x);
    EVP_CIPHER_CTX_free(o);
    EVP_CIPHER_CTX_free(d);
}

/*
 * Which message an expected tag belongs to across a key-only re-init (the
 * default cannot say: it has no such refusal). A tag set after a final is
 * the next message's, also when a new key drops the used IV before that
 * message starts; one set during a message goes with that message.
 */
static void aead_tag_owner(int x)
{
    const EVP_CIPHER *ci = x ? xcp : cp[1];
    size_t ivlen = x ? 24 : 12;
    uint8_t k1[32], k2[32], iv1[24], iv3[24], curk[32], curiv[24], aad[13], tag[16], junk[16];
    EVP_CIPHER_CTX *o = EVP_CIPHER_CTX_new(), *d = EVP_CIPHER_CTX_new();
    int l;

    t_rand_bytes(k1, 32);
    t_rand_bytes(k2, 32);
    t_rand_bytes(iv1, ivlen);
    t_rand_bytes(iv3, ivlen);
    t_rand_bytes(aad, 13);
    t_rand_bytes(junk, 16);
    t_rand_bytes(src, 300);
    /* the message (k2, iv3): its ciphertext in out_d, its tag */
    T_OK(aead_init(d, cp[0], x, k2, iv3, 1, curk, curiv) && EVP_EncryptUpdate(d, NULL, &l, aad, 13)
             && EVP_EncryptUpdate(d, out_d, &l, src, 300) && EVP_EncryptFinal_ex(d, out_d + 300, &l)
             && t_get_tag(d, tag, 16),
         "tag owner %d: the reference message", x);
    /* a finished (failed) open, the next message's tag, a new key, a new IV */
    T_OK(EVP_DecryptInit_ex(o, ci, NULL, k1, iv1) && EVP_DecryptUpdate(o, out_o, &l, src, 50)
             && t_set_tag(o, junk, 16),
         "tag owner %d: a first message", x);
    T_REJECT(EVP_DecryptFinal_ex(o, out_o, &l), "tag owner %d: the first message's wrong tag", x);
    T_OK(t_set_tag(o, tag, 16) && EVP_DecryptInit_ex(o, NULL, NULL, k2, NULL)
             && EVP_DecryptInit_ex(o, NULL, NULL, NULL, iv3)
             && EVP_DecryptUpdate(o, NULL, &l, aad, 13)
             && EVP_DecryptUpdate(o, out_o, &l, out_d, 300),
         "tag owner %d: the next message", x);
    T_OK(EVP_DecryptFinal_ex(o, out_o + 300, &l) && memcmp(out_o, src, 300) == 0,
         "tag owner %d: the tag set after a final did not serve the message after a new key", x);
    /* a tag set during a message ends with it when a new key drops the IV */
    T_OK(EVP_DecryptInit_ex(o, NULL, NULL, k1, iv1) && EVP_DecryptUpdate(o, out_o, &l, src, 50)
             && t_set_tag(o, tag, 16) && EVP_DecryptInit_ex(o, NULL, NULL, k2, NULL)
             && EVP_DecryptInit_ex(o, NULL, NULL, NULL, iv3)
             && EVP_DecryptUpdate(o, NULL, &l, aad, 13)
             && EVP_DecryptUpdate(o, out_o, &l, out_d, 300),
         "tag owner %d: a message, its tag, then a new key and IV", x);
    T_REJECT(EVP_DecryptFinal_ex(o, out_o + 300, &l),
             "tag owner %d: a dropped message's tag served the next one", x);
    EVP_CIPHER_CTX_free(o);
    EVP_CIPHER_CTX_free(d);
}

int main(void)
{
    int refused_cases = 0;

    t_setup();
    c20[0] = t_cipher("ChaCha20", 0);
    c20[1] = t_cipher("ChaCha20", 1);
    cp[0] = t_cipher("ChaCha20-Poly1305", 0);
    cp[1] = t_cipher("ChaCha20-Poly1305", 1);
    xcp = t_cipher("XChaCha20-Poly1305", 1);
    src = t_xmalloc(BUFLEN);
    out_d = t_xmalloc(BUFLEN);
    out_o = t_xmalloc(BUFLEN);
    plain = t_xmalloc(BUFLEN);
    t_rand_bytes(src, BUFLEN);
    if (T_OK(c20[0] && c20[1] && cp[0] && cp[1] && xcp, "fetching the ciphers")) {
        hchacha20_selftest();
        int m = c20_matrix();
        int r = c20_random(1500);
        t_rand_bytes(src, BUFLEN);
        int a = aead_matrix(&refused_cases);
        aead_recover(0);
        aead_recover(1);
        aead_tag_owner(0);
        aead_tag_owner(1);
        printf("ChaCha20: %d re-init cases, %d random steps; AEADs: %d cases equal to the default, "
               "%d refused by design\n", m, r, a, refused_cases);
    }
    for (int i = 0; i < 2; i++) {
        EVP_CIPHER_free(c20[i]);
        EVP_CIPHER_free(cp[i]);
    }
    EVP_CIPHER_free(xcp);
    free(src);
    free(out_d);
    free(out_o);
    free(plain);
    t_teardown();
    return t_finish("test_evp_reinit");
}
