/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Piecewise AEAD: ChaCha20-Poly1305 and XChaCha20-Poly1305 through chapoly,
 * with data fed in every piece size from 1 to 161 bytes and AAD fed in pieces
 * of 1..17 bytes, for message lengths around the 16-byte Poly1305 block and
 * the 64-byte ChaCha20 block. Every update must report outl == inl (libssl's
 * TLS 1.3 path requires that update emits every byte at once).
 *
 * Oracles: ChaCha20-Poly1305 -> the default provider, one-shot.
 * XChaCha20-Poly1305 -> a one-shot run through chapoly, which is itself checked
 * once per length against the draft-irtf-cfrg-xchacha-03 construction built
 * from default-provider pieces only (HChaCha20 derived from a default ChaCha20
 * block, then default ChaCha20-Poly1305 with the subkey).
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include "test_common.h"

#define MAXLEN 1025
#define MAXPIECE 161
#define TAGLEN 16
#define CANARY 0xa5
#define SLACK 64

static const size_t lens[] = { 0,   1,   15,  16,  17,  63,   64,   65,   127,  128,
                               129, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025 };
#define NLENS (sizeof(lens) / sizeof(lens[0]))

typedef struct {
    const char *name;
    size_t ivlen;
    EVP_CIPHER *ours;
    EVP_CIPHER *ref;   /* default provider's cipher, or NULL (XChaCha) */
} alg;

/* One description of how a message is fed to the cipher. */
typedef struct {
    size_t aad_piece;  /* 0 = whole AAD in one call */
    size_t piece;      /* 0 = whole text in one call */
    int inplace;
    int zero_updates;  /* interleave zero-length updates (must be no-ops) */
    int tag_early;     /* decrypt: set the expected tag before the AAD */
} feed;

static const char *fail_step; /* first thing that went wrong, for messages */
static size_t fail_at;

static int note(const char *step, size_t at)
{
    if (fail_step == NULL) {
        fail_step = step;
        fail_at = at;
    }
    return 0;
}

/* AAD in f->aad_piece chunks; every call must report outl == inl. */
static int feed_aad(EVP_CIPHER_CTX *ctx, const uint8_t *aad, size_t aadlen, const feed *f)
{
    size_t step = f->aad_piece ? f->aad_piece : (aadlen ? aadlen : 1);
    int outl;

    for (size_t off = 0; off < aadlen; off += step) {
        size_t n = aadlen - off < step ? aadlen - off : step;
        outl = -1;
        if (!EVP_CipherUpdate(ctx, NULL, &outl, aad + off, (int)n))
            return note("AAD update failed", off);
        if (outl != (int)n)
            return note("AAD update outl != inl", off);
        if (f->zero_updates) {
            outl = -1;
            if (!EVP_CipherUpdate(ctx, NULL, &outl, aad + off, 0) || outl != 0)
                return note("zero-length AAD update not a no-op", off);
        }
    }
    return 1;
}

/*
 * Text in f->piece chunks into out (in place: out already holds the input).
 * Every call must report outl == inl.
 */
static int feed_text(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t len,
                     const feed *f)
{
    size_t step = f->piece ? f->piece : (len ? len : 1);
    int outl;

    for (size_t off = 0; off < len; off += step) {
        size_t n = len - off < step ? len - off : step;
        const uint8_t *src = f->inplace ? out + off : in + off;
        outl = -1;
        if (!EVP_CipherUpdate(ctx, out + off, &outl, src, (int)n))
            return note("update failed", off);
        if (outl != (int)n)
            return note("update outl != inl", off);
        if (f->zero_updates) {
            outl = -1;
            if (!EVP_CipherUpdate(ctx, out + off + n, &outl, src + n, 0) || outl != 0)
                return note("zero-length update not a no-op", off);
        }
    }
    return 1;
}

static int seal(EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv, const uint8_t *aad,
                size_t aadlen, const uint8_t *pt, size_t len, uint8_t *ct, uint8_t tag[TAGLEN],
                const feed *f)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok = 0, outl = -1;

    if (f->inplace)
        memcpy(ct, pt, len);
    if (ctx == NULL || !EVP_EncryptInit_ex(ctx, c, NULL, key, iv))
        note("encrypt init failed", 0);
    else if (feed_aad(ctx, aad, aadlen, f) && feed_text(ctx, ct, pt, len, f)) {
        if (!EVP_EncryptFinal_ex(ctx, ct + len, &outl))
            note("encrypt final failed", len);
        else if (outl != 0)
            note("encrypt final produced output", len);
        else if (!t_get_tag(ctx, tag, TAGLEN))
            note("get tag failed", len);
        else
            ok = 1;
    }
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int open_(EVP_CIPHER *c, const uint8_t *key, const uint8_t *iv, const uint8_t *aad,
                 size_t aadlen, const uint8_t *ct, size_t len, const uint8_t tag[TAGLEN],
                 uint8_t *pt, const feed *f)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok = 0, outl = -1;

    if (f->inplace)
        memcpy(pt, ct, len);
    if (ctx == NULL || !EVP_DecryptInit_ex(ctx, c, NULL, key, iv))
        note("decrypt init failed", 0);
    else if (f->tag_early && !t_set_tag(ctx, tag, TAGLEN))
        note("set tag (early) failed", 0);
    else if (feed_aad(ctx, aad, aadlen, f) && feed_text(ctx, pt, ct, len, f)) {
        if (!f->tag_early && !t_set_tag(ctx, tag, TAGLEN))
            note("set tag (late) failed", len);
        else if (!EVP_DecryptFinal_ex(ctx, pt + len, &outl))
            note("decrypt final failed (tag rejected)", len);
        else if (outl != 0)
            note("decrypt final produced output", len);
        else
            ok = 1;
    }
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static int canary_intact(const uint8_t *buf, size_t len)
{
    for (size_t i = len; i < len + SLACK; i++)
        if (buf[i] != CANARY)
            return 0;
    return 1;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/*
 * HChaCha20 from the default provider's ChaCha20: with IV = the 16-byte
 * HChaCha nonce, state words 12..15 equal the nonce words, and a block is the
 * permuted state plus the input state, so subtracting the constants (words
 * 0..3) and the nonce (words 12..15) leaves exactly the HChaCha20 output.
 */
static int hchacha20_default(uint8_t sub[32], const uint8_t key[32], const uint8_t n16[16])
{
    static const uint32_t sigma[4] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
    EVP_CIPHER *c = t_cipher("ChaCha20", 0);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t zero[64] = { 0 }, blk[64];
    int outl, ok;

    ok = c != NULL && ctx != NULL && EVP_EncryptInit_ex(ctx, c, NULL, key, n16)
         && EVP_EncryptUpdate(ctx, blk, &outl, zero, 64) && outl == 64;
    for (int i = 0; i < 4; i++) {
        put_le32(sub + 4 * i, le32(blk + 4 * i) - sigma[i]);
        put_le32(sub + 16 + 4 * i, le32(blk + 48 + 4 * i) - le32(n16 + 4 * i));
    }
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return ok;
}

/* AEAD_XChaCha20_Poly1305 built from default-provider primitives only. */
static int xchacha_seal_default(EVP_CIPHER *cp_default, const uint8_t key[32], const uint8_t iv[24],
                                const uint8_t *aad, size_t aadlen, const uint8_t *pt, size_t len,
                                uint8_t *ct, uint8_t tag[TAGLEN])
{
    uint8_t sub[32], n12[12] = { 0 };
    feed whole = { 0 };

    memcpy(n12 + 4, iv + 16, 8);
    return hchacha20_default(sub, key, iv)
           && seal(cp_default, sub, n12, aad, aadlen, pt, len, ct, tag, &whole);
}

/* Reference ciphertext and tag for one (alg, key, iv, aad, pt). */
static int reference(const alg *a, EVP_CIPHER *cp_default, const uint8_t *key, const uint8_t *iv,
                     const uint8_t *aad, size_t aadlen, const uint8_t *pt, size_t len,
                     uint8_t *ct, uint8_t tag[TAGLEN])
{
    feed whole = { 0 };

    fail_step = NULL;
    if (a->ref != NULL)
        return seal(a->ref, key, iv, aad, aadlen, pt, len, ct, tag, &whole);

    uint8_t ct2[MAXLEN + SLACK], tag2[TAGLEN];
    int ok = seal(a->ours, key, iv, aad, aadlen, pt, len, ct, tag, &whole);
    T_OK(ok, "%s len %zu: whole-message seal through chapoly failed (%s)", a->name, len,
         fail_step ? fail_step : "?");
    if (!ok)
        return 0;
    T_OK(xchacha_seal_default(cp_default, key, iv, aad, aadlen, pt, len, ct2, tag2),
         "%s len %zu: default-provider construction failed", a->name, len);
    T_OK(memcmp(ct, ct2, len) == 0 && memcmp(tag, tag2, TAGLEN) == 0,
         "%s len %zu aadlen %zu: chapoly one-shot != HChaCha20+ChaCha20-Poly1305 (default)",
         a->name, len, aadlen);
    return 1;
}

static uint8_t key[32], iv[24], aad[96], pt[MAXLEN], ref_ct[MAXLEN], ref_tag[TAGLEN];
static uint8_t out[MAXLEN + SLACK], back[MAXLEN + SLACK], tag[TAGLEN];

/* Seal and open one message the way f says; compare with the reference. */
static void run_one(const alg *a, size_t len, size_t aadlen, const feed *f)
{
    char what[160];

    snprintf(what, sizeof(what), "%s len %zu aad %zu/%zu piece %zu%s%s", a->name, len, aadlen,
             f->aad_piece, f->piece, f->inplace ? " in-place" : "",
             f->zero_updates ? " +zero-updates" : "");

    memset(out, CANARY, sizeof(out));
    memset(tag, 0, sizeof(tag));
    fail_step = NULL;
    int ok = seal(a->ours, key, iv, aad, aadlen, pt, len, out, tag, f);
    T_OK(ok, "%s: seal: %s at offset %zu", what, fail_step ? fail_step : "?", fail_at);
    if (ok) {
        T_OK(memcmp(out, ref_ct, len) == 0, "%s: ciphertext differs from reference", what);
        T_OK(memcmp(tag, ref_tag, TAGLEN) == 0, "%s: tag differs from reference", what);
        T_OK(canary_intact(out, len), "%s: seal wrote past the message end", what);
    }

    memset(back, CANARY, sizeof(back));
    fail_step = NULL;
    ok = open_(a->ours, key, iv, aad, aadlen, ref_ct, len, ref_tag, back, f);
    T_OK(ok, "%s: open: %s at offset %zu", what, fail_step ? fail_step : "?", fail_at);
    if (ok) {
        T_OK(memcmp(back, pt, len) == 0, "%s: decrypted text differs", what);
        T_OK(canary_intact(back, len), "%s: open wrote past the message end", what);
    }
    ERR_clear_error();
}

/*
 * Dup mid-stream: after the AAD and a random prefix of the text, copy the
 * context; both must finish to the reference.
 */
static void run_dup(const alg *a, size_t len, size_t aadlen)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new(), *dup = EVP_CIPHER_CTX_new();
    size_t cut = t_rand_below(len + 1);
    uint8_t o1[MAXLEN + 16], o2[MAXLEN + 16], t1[TAGLEN], t2[TAGLEN];
    int l1 = 0, l2 = 0, l3 = 0, lf = -1;
    int ok = ctx && dup && EVP_EncryptInit_ex(ctx, a->ours, NULL, key, iv)
             && EVP_EncryptUpdate(ctx, NULL, &l1, aad, (int)aadlen)
             && EVP_EncryptUpdate(ctx, o1, &l1, pt, (int)cut) && l1 == (int)cut
             && EVP_CIPHER_CTX_copy(dup, ctx);

    T_OK(ok, "%s len %zu: setup for dup at %zu failed", a->name, len, cut);
    if (ok) {
        memcpy(o2, o1, cut);
        ok = EVP_EncryptUpdate(ctx, o1 + cut, &l2, pt + cut, (int)(len - cut))
             && l2 == (int)(len - cut) && EVP_EncryptFinal_ex(ctx, o1 + len, &lf) && lf == 0
             && t_get_tag(ctx, t1, TAGLEN);
        T_OK(ok && memcmp(o1, ref_ct, len) == 0 && memcmp(t1, ref_tag, TAGLEN) == 0,
             "%s len %zu: original context after dup at %zu differs from reference", a->name,
             len, cut);
        lf = -1;
        ok = EVP_EncryptUpdate(dup, o2 + cut, &l3, pt + cut, (int)(len - cut))
             && l3 == (int)(len - cut) && EVP_EncryptFinal_ex(dup, o2 + len, &lf) && lf == 0
             && t_get_tag(dup, t2, TAGLEN);
        T_OK(ok && memcmp(o2, ref_ct, len) == 0 && memcmp(t2, ref_tag, TAGLEN) == 0,
             "%s len %zu: duplicated context (dup at %zu) differs from reference", a->name, len,
             cut);
    }
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_CTX_free(dup);
    ERR_clear_error();
}

static void test_alg(alg *a, EVP_CIPHER *cp_default)
{
    unsigned long before = t_fail;

    for (size_t li = 0; li < NLENS; li++) {
        size_t len = lens[li];

        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(iv, a->ivlen);
        t_rand_bytes(aad, sizeof(aad));
        t_rand_bytes(pt, len);

        /* Text pieces 1..161 with a 13-byte (TLS-sized) AAD in one call. */
        if (!reference(a, cp_default, key, iv, aad, 13, pt, len, ref_ct, ref_tag))
            continue;
        for (size_t piece = 1; piece <= MAXPIECE; piece++) {
            feed f = { .piece = piece, .inplace = (piece & 1) != 0,
                       .zero_updates = piece % 5 == 0, .tag_early = (piece & 2) != 0 };
            run_one(a, len, 13, &f);
        }
        for (int i = 0; i < 4; i++)
            run_dup(a, len, 13);

        /* AAD pieces 1..17 for the 13-byte AAD and for one that spans several blocks. */
        static const size_t aadlens[] = { 13, 77 };
        for (size_t ai = 0; ai < 2; ai++) {
            size_t aadlen = aadlens[ai];
            if (aadlen != 13
                && !reference(a, cp_default, key, iv, aad, aadlen, pt, len, ref_ct, ref_tag))
                continue;
            for (size_t ap = 1; ap <= 17; ap++) {
                feed f = { .aad_piece = ap, .piece = 1 + t_rand_below(MAXPIECE),
                           .inplace = (ap & 1) == 0, .zero_updates = ap % 3 == 0,
                           .tag_early = (ap & 2) == 0 };
                run_one(a, len, aadlen, &f);
            }
        }
        /* Empty AAD (no AAD call at all) with a few text piece sizes. */
        if (reference(a, cp_default, key, iv, aad, 0, pt, len, ref_ct, ref_tag)) {
            static const size_t pieces[] = { 1, 16, 64, 100 };
            for (size_t pi = 0; pi < 4; pi++) {
                feed f = { .piece = pieces[pi], .inplace = (int)(pi & 1) };
                run_one(a, len, 0, &f);
            }
        }
        if (t_fail - before > 200) {
            fprintf(stderr, "%s: too many failures, skipping the remaining lengths\n", a->name);
            break;
        }
    }
}

/*
 * A kept context: one sealing and one opening context initialised once, then
 * a new IV for every message (EVP_CipherInit_ex with the IV only), messages
 * of lengths that repeat and alternate, in small updates: the provider's
 * streaming state carries what it learnt of earlier messages' lengths
 * (stream-fill) from message to message, and no sequence may change a byte.
 * Reference: the default provider (XChaCha: HChaCha20 + ChaCha20-Poly1305
 * from default-provider pieces), one-shot.
 */
/*
 * One message on a kept context: a new IV only, the 13-byte AAD, the text
 * from in to out (canaries after it) the way f says; sealing gets the tag
 * into tag, opening checks it. 1 if every call succeeded.
 */
static int kept_message(EVP_CIPHER_CTX *ctx, int encrypt, const uint8_t *iv, const uint8_t *in,
                        uint8_t *out, size_t len, uint8_t tag[TAGLEN], const feed *f)
{
    int outl = -1;

    fail_step = NULL;
    memset(out, CANARY, len + SLACK);
    if (f->inplace)
        memcpy(out, in, len);
    return EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, encrypt) && feed_aad(ctx, aad, 13, f)
           && feed_text(ctx, out, in, len, f) && (encrypt || t_set_tag(ctx, tag, TAGLEN))
           && EVP_CipherFinal_ex(ctx, out + len, &outl) && outl == 0
           && (!encrypt || t_get_tag(ctx, tag, TAGLEN));
}

static void test_kept(const alg *a, EVP_CIPHER *cp_default)
{
    static const size_t seq[] = { 1600, 1600, 1600, 4100, 4100, 512, 8192, 8192, 300, 2500,
                                  2500, 2500, 0, 7000, 64, 3000, 3000, 1500 };
    static const size_t pieces[] = { 16, 64, 256, 0 };
    enum { KEPT_MAX = 8192 };
    uint8_t *m = malloc(KEPT_MAX), *r = malloc(KEPT_MAX), *b = malloc(KEPT_MAX + SLACK),
            *o = malloc(KEPT_MAX + SLACK);
    EVP_CIPHER_CTX *enc = EVP_CIPHER_CTX_new(), *dec = EVP_CIPHER_CTX_new();
    uint8_t k[32], n[24], rt[TAGLEN], t[TAGLEN];
    int ok;

    T_OK(m && r && b && o && enc && dec, "%s kept context: allocation", a->name);
    t_rand_bytes(k, sizeof(k));
    ok = m && r && b && o && enc && dec && EVP_EncryptInit_ex(enc, a->ours, NULL, k, NULL)
         && EVP_DecryptInit_ex(dec, a->ours, NULL, k, NULL);
    T_OK(ok, "%s kept context: init with the key", a->name);
    for (size_t i = 0; ok && i < 3 * sizeof(seq) / sizeof(seq[0]); i++) {
        size_t len = seq[i % (sizeof(seq) / sizeof(seq[0]))];
        feed f = { .piece = pieces[i % 4] ? pieces[i % 4] : 1 + t_rand_below(300),
                   .inplace = (int)(i & 1) };
        feed whole = { 0 };
        char what[96];

        snprintf(what, sizeof(what), "%s kept context, message %zu: %zu bytes in pieces of %zu",
                 a->name, i, len, f.piece);
        t_rand_bytes(n, a->ivlen);
        t_rand_bytes(m, len);
        fail_step = NULL;
        T_OK(a->ref != NULL ? seal(a->ref, k, n, aad, 13, m, len, r, rt, &whole)
                            : xchacha_seal_default(cp_default, k, n, aad, 13, m, len, r, rt),
             "%s: reference", what);
        T_OK(kept_message(enc, 1, n, m, o, len, t, &f), "%s: seal (%s)", what,
             fail_step ? fail_step : "init, final or tag");
        T_OK(memcmp(o, r, len) == 0 && memcmp(t, rt, TAGLEN) == 0 && canary_intact(o, len),
             "%s: ciphertext or tag differ from the reference", what);
        T_OK(kept_message(dec, 0, n, r, b, len, rt, &f), "%s: open (%s)", what,
             fail_step ? fail_step : "init, tag or final");
        T_OK(memcmp(b, m, len) == 0 && canary_intact(b, len), "%s: plaintext differs", what);
        ERR_clear_error();
    }
    EVP_CIPHER_CTX_free(enc);
    EVP_CIPHER_CTX_free(dec);
    free(m);
    free(r);
    free(b);
    free(o);
}

int main(void)
{
    t_setup();

    EVP_CIPHER *cp_default = t_cipher("ChaCha20-Poly1305", 0);
    alg algs[2] = {
        { "ChaCha20-Poly1305", 12, t_cipher("ChaCha20-Poly1305", 1), cp_default },
        { "XChaCha20-Poly1305", 24, t_cipher("XChaCha20-Poly1305", 1), NULL },
    };

    T_OK(cp_default != NULL, "fetch default ChaCha20-Poly1305");
    for (int i = 0; i < 2; i++) {
        T_OK(algs[i].ours != NULL, "fetch %s from chapoly", algs[i].name);
        if (algs[i].ours != NULL && cp_default != NULL) {
            test_alg(&algs[i], cp_default);
            test_kept(&algs[i], cp_default);
        }
        EVP_CIPHER_free(algs[i].ours);
    }
    EVP_CIPHER_free(cp_default);

    t_teardown();
    return t_finish("test_evp_piecewise");
}
