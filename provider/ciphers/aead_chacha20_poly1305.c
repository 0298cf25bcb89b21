/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "ChaCha20-Poly1305" (RFC 8439) and "XChaCha20-Poly1305"
 * (draft-irtf-cfrg-xchacha-03): one AEAD core, two dispatch tables.
 *
 * This file translates the EVP calls (contexts, init, update, final,
 * EVP_Cipher) into events of the context's state machine (aead_state.c:
 * one table says what each call may do in each state) and into calls of
 * the AEAD core (core/aead_core.h), which owns the message's keystream, MAC
 * and batch shapes; here are only the calls' own limits and errors.
 * Parameters: aead_params.c; TLS 1.2 records: aead_tls.c; the OpenSSL 3.5
 * pipeline API: aead_pipeline.c.
 */
#include <stddef.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include "aead_state.h"
#include "bytes.h" /* CHAPOLY_INLINE */

static OSSL_FUNC_cipher_newctx_fn chacha20_poly1305_newctx;
static OSSL_FUNC_cipher_newctx_fn xchacha20_poly1305_newctx;
static OSSL_FUNC_cipher_freectx_fn aead_freectx;
static OSSL_FUNC_cipher_dupctx_fn aead_dupctx;
static OSSL_FUNC_cipher_encrypt_init_fn aead_encrypt_init;
static OSSL_FUNC_cipher_decrypt_init_fn aead_decrypt_init;
static OSSL_FUNC_cipher_update_fn aead_update;
static OSSL_FUNC_cipher_final_fn aead_final;
static OSSL_FUNC_cipher_cipher_fn aead_cipher;

/*
 * The message's keystream and ciphertext buffers (4 KiB of the context) are
 * written before they are read, so a new context zeroes only the bytes
 * before and after them, and a freed one wipes ks[] only as far as it ever
 * held keystream (chapoly_aead_clear); ct[] holds ciphertext only. So is
 * the MAC state's priv[] (1.5 KiB): the level's init writes what its
 * blocks and final read, and its final, or chapoly_aead_clear for a
 * message abandoned with its MAC keyed, wipes it. Allocating, zeroing and
 * wiping all of it cost more than a short message (or, per batch, than a
 * pipeline reset per batch allows).
 */
#define AEAD_PRIV_OFF (offsetof(aead_ctx, msg) + offsetof(chapoly_aead, poly))
#define AEAD_PRIV_END (AEAD_PRIV_OFF + sizeof(((poly1305_state *)0)->priv))
#define AEAD_BUFS_OFF (offsetof(aead_ctx, msg) + offsetof(chapoly_aead, ks))
#define AEAD_BUFS_END (offsetof(aead_ctx, msg) + offsetof(chapoly_aead, ct) \
                       + sizeof(((chapoly_aead *)0)->ct))
_Static_assert(offsetof(chapoly_aead, ct)
                   == offsetof(chapoly_aead, ks) + sizeof(((chapoly_aead *)0)->ks),
               "nothing between ks[] and ct[]: new fields go before ks[]");

/*
 * Everything but priv[], ks[] and ct[]: header fields, keys, the message's
 * fields, tag; zeroed (new) or wiped (free) alike, by libc's memset through
 * a volatile pointer (faster than OPENSSL_cleanse, and than the rep stos
 * an inline memset of these sizes becomes).
 */
static void aead_ctx_outside_bufs(aead_ctx *c)
{
    unsigned char *p = (unsigned char *)c;

    chapoly_wipe(p, AEAD_PRIV_OFF);
    chapoly_wipe(p + AEAD_PRIV_END, AEAD_BUFS_OFF - AEAD_PRIV_END);
    chapoly_wipe(p + AEAD_BUFS_END, sizeof(*c) - AEAD_BUFS_END);
}

static void *aead_newctx(void *provctx, size_t ivlen)
{
    chapoly_provctx *pc = provctx;
    aead_ctx *c = chapoly_ctx_alloc(sizeof(*c));

    if (c == NULL)
        return NULL;
    aead_ctx_outside_bufs(c);
    c->pc = pc;
    c->k = pc->k;
    c->ivlen = ivlen;
    c->tag_len = POLY1305_TAG_BYTES;
    c->state = ST_NEW;
    return c;
}

static void *chacha20_poly1305_newctx(void *provctx)
{
    return aead_newctx(provctx, CHACHA20_NONCE_BYTES);
}

static void *xchacha20_poly1305_newctx(void *provctx)
{
    return aead_newctx(provctx, XCHACHA20_NONCE_BYTES);
}

static void aead_freectx(void *vctx)
{
    aead_ctx *c = vctx;

    if (c == NULL)
        return;
    chapoly_pipeline_free(c->pipe);
    chapoly_aead_clear(&c->msg); /* ks[] as far as it was ever filled */
    aead_ctx_outside_bufs(c);
    chapoly_ctx_release(c);
}

static void *aead_dupctx(void *vctx)
{
    aead_ctx *c = vctx, *d = chapoly_ctx_dup(vctx, sizeof(aead_ctx));

    if (d != NULL && c->pipe != NULL && (d->pipe = chapoly_pipeline_dup(c->pipe)) == NULL) {
        chapoly_ctx_free(d, sizeof(aead_ctx));
        return NULL;
    }
    return d;
}

/*
 * Lengths are checked first; a key is kept from then on, even when the IV
 * of the same init is refused (EV_KEY_BAD_IV). Inlined into both inits, as
 * it is on every message's path.
 */
CHAPOLY_INLINE int aead_init(aead_ctx *c, int enc, const unsigned char *key, size_t keylen,
                             const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])
{
    if (aead_in_pipeline(c)) /* an ordinary init leaves pipeline mode (to ST_NEW) */
        aead_pipeline_leave(c);
    c->enc = enc;
    if (key != NULL) {
        if (keylen != CHACHA20_KEY_BYTES) {
            CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "key must be 32 bytes, got %zu", keylen);
            return 0;
        }
        memcpy(c->key, key, CHACHA20_KEY_BYTES);
    }
    if (iv != NULL) {
        if (ivlen != c->ivlen) {
            if (key != NULL)
                aead_apply(c, aead_lookup(c, EV_KEY_BAD_IV));
            CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "IV must be %zu bytes, got %zu",
                        c->ivlen, ivlen);
            return 0;
        }
        chapoly_copy_bytes(c->iv, iv, c->ivlen); /* 12 or 24 bytes: no library call */
        aead_apply(c, aead_lookup(c, key != NULL ? EV_KEY_IV : EV_IV));
    } else if (key != NULL) {
        aead_apply(c, aead_lookup(c, EV_KEY));
    }
    return params == NULL || aead_set_ctx_params(c, params); /* EVP passes none per message */
}

static int aead_encrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                             const unsigned char *iv, size_t ivlen,
                             const OSSL_PARAM params[])
{
    return aead_init(vctx, 1, key, keylen, iv, ivlen, params);
}

static int aead_decrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                             const unsigned char *iv, size_t ivlen,
                             const OSSL_PARAM params[])
{
    return aead_init(vctx, 0, key, keylen, iv, ivlen, params);
}

static int aead_update(void *vctx, unsigned char *out, size_t *outl,
                       size_t outsize, const unsigned char *in, size_t inl)
{
    aead_ctx *c = vctx;
    enum aead_event ev = inl == 0 ? EV_EMPTY : in == NULL ? EV_NO_INPUT
                         : out == NULL ? EV_AAD : EV_TEXT;
    const aead_step *s = aead_lookup(c, ev);

    if (s->act == ACT_RECORD)
        return aead_tls_record(c, out, outl, outsize, in, inl);
    *outl = 0;
    if (s->why != WHY_NONE)
        return aead_refuse(c, s);
    if (inl == 0)
        return 1; /* a no-op: only final produces or checks the tag */
    if (out == NULL) {
        if (inl > PTRDIFF_MAX) {
            CHAPOLY_ERR(PROV_R_LENGTH_TOO_LARGE,
                        "input length %zu is larger than any buffer (a negative length?)",
                        inl);
            return 0;
        }
        /* the state first: nothing is live across the core's call (which cannot fail) */
        c->state = (enum aead_state)s->next;
        *outl = inl; /* as the default provider reports AAD */
        chapoly_aead_aad(&c->msg, in, inl);
        return 1;
    }
    if (outsize < inl) {
        CHAPOLY_ERR(PROV_R_OUTPUT_BUFFER_TOO_SMALL, "output buffer too small");
        return 0;
    }
    if (inl > CHAPOLY_AEAD_MAX_TEXT - c->msg.text_len) {
        CHAPOLY_ERR(PROV_R_LENGTH_TOO_LARGE,
                    "message exceeds the ChaCha20-Poly1305 limit of 2^38 - 64 bytes");
        return 0;
    }
    if (chacha20_partially_overlapping(out, in, inl)) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "partially overlapping buffers");
        return 0;
    }
    c->state = (enum aead_state)s->next;
    *outl = inl;
    chapoly_aead_text(&c->msg, out, in, inl, c->enc);
    return 1;
}

static int aead_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    aead_ctx *c = vctx;
    const aead_step *s = aead_lookup(c, c->enc ? EV_SEAL : c->tag_set ? EV_OPEN : EV_NO_TAG);
    int ok = 1;

    (void)out;
    (void)outsize;
    *outl = 0;
    if (s->why != WHY_NONE)
        return aead_refuse(c, s);
    /* FIN, the only other outcome of a final: an expected tag is used up (tag[] keeps it) */
    c->state = (enum aead_state)s->next;
    c->tag_set = 0;
    chapoly_count_aead(c->pc, c->enc, 1, -1); /* failed opens too */
    if (c->enc) {
        chapoly_aead_finish(&c->msg, c->tag);
    } else {
        ok = chapoly_aead_verify(&c->msg, c->tag, c->tag_len);
        if (!ok)
            CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "tag mismatch: message not authentic");
    }
    return ok;
}

/*
 * EVP_Cipher(): in == NULL finalises, out == NULL feeds AAD, otherwise data;
 * in TLS record mode after a "tlsaad", every call is the record.
 * EVP turns a 0 return into -1 and a 1 into outl.
 */
static int aead_cipher(void *vctx, unsigned char *out, size_t *outl,
                       size_t outsize, const unsigned char *in, size_t inl)
{
    aead_ctx *c = vctx;

    if (in == NULL && c->state != ST_RECORD)
        return aead_final(c, out, outl, outsize);
    return aead_update(c, out, outl, outsize, in, inl);
}

#define AEAD_DISPATCH(prefix)                                                          \
    const OSSL_DISPATCH chapoly_##prefix##_functions[] = {                             \
        { OSSL_FUNC_CIPHER_NEWCTX, (void (*)(void))prefix##_newctx },                  \
        { OSSL_FUNC_CIPHER_FREECTX, (void (*)(void))aead_freectx },                    \
        { OSSL_FUNC_CIPHER_DUPCTX, (void (*)(void))aead_dupctx },                      \
        { OSSL_FUNC_CIPHER_ENCRYPT_INIT, (void (*)(void))aead_encrypt_init },          \
        { OSSL_FUNC_CIPHER_DECRYPT_INIT, (void (*)(void))aead_decrypt_init },          \
        { OSSL_FUNC_CIPHER_UPDATE, (void (*)(void))aead_update },                      \
        { OSSL_FUNC_CIPHER_FINAL, (void (*)(void))aead_final },                        \
        { OSSL_FUNC_CIPHER_CIPHER, (void (*)(void))aead_cipher },                      \
        { OSSL_FUNC_CIPHER_GET_PARAMS, (void (*)(void))aead_##prefix##_get_params },   \
        { OSSL_FUNC_CIPHER_GETTABLE_PARAMS,                                            \
          (void (*)(void))chapoly_cipher_gettable_params },                            \
        { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (void (*)(void))aead_get_ctx_params },      \
        { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (void (*)(void))aead_set_ctx_params },      \
        { OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS,                                        \
          (void (*)(void))aead_##prefix##_gettable_ctx_params },                       \
        { OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS,                                         \
          (void (*)(void))aead_##prefix##_settable_ctx_params },                       \
        { OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT,                                      \
          (void (*)(void))aead_pipeline_encrypt_init },                                \
        { OSSL_FUNC_CIPHER_PIPELINE_DECRYPT_INIT,                                      \
          (void (*)(void))aead_pipeline_decrypt_init },                                \
        { OSSL_FUNC_CIPHER_PIPELINE_UPDATE, (void (*)(void))aead_pipeline_update },    \
        { OSSL_FUNC_CIPHER_PIPELINE_FINAL, (void (*)(void))aead_pipeline_final },      \
        { 0, NULL }                                                                    \
    }

AEAD_DISPATCH(chacha20_poly1305);
AEAD_DISPATCH(xchacha20_poly1305);
