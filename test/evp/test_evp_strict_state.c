/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_evp_strict: the state machine keeps its promises (re-initialising
 * with a key only, stale tags, overlapping buffers, TLS records between
 * messages). The program's header and main: test_evp_strict.h, test_evp_strict.c.
 */
#include "test_evp_strict.h"

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
void test_key_only_reinit(const alg *a)
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
void test_stale_tag(const alg *a)
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

void test_overlap(const char *name, EVP_CIPHER *c, int aead)
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
void test_tls_vs_messages(const alg *a)
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
void test_overlap_tls(const alg *a)
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

