/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "ChaCha20-Poly1305" (RFC 8439) and "XChaCha20-Poly1305"
 * (draft-irtf-cfrg-xchacha-03): one AEAD core, two dispatch tables.
 *
 * Message state machine (per context):
 *   NEED_KEY_IV -> init with key and IV -> START
 *   START/AAD --update(out == NULL)--> AAD
 *   START/AAD/TEXT --update(out != NULL)--> TEXT
 *   any of START/AAD/TEXT --final--> DONE; DONE accepts nothing until the
 *   next init that supplies a key or an IV.
 * An IV starts one message. Once a message has used it (AAD or text
 * processed, or a final: states AAD, TEXT, DONE), an init with a key and no
 * IV drops it and goes back to NEED_KEY_IV, so a new key never restarts an
 * old nonce. An IV that no message has used yet (init with the IV first,
 * then with the key) starts the message when the key arrives.
 * An expected tag belongs to one message: the one in progress when it was
 * set, or, if it was set while none was (NEED_KEY_IV or DONE), the next one.
 * Every start or abandonment of a message forgets a tag that belonged to
 * the previous one, and the final that checks a tag consumes it.
 * TLS 1.2 record mode: one in-place update after each "tlsaad" seals or
 * opens a whole record with the core's one-shot, under the nonce fixed IV
 * XOR sequence number (record 0's nonce is the IV itself). So records and
 * streaming messages never share an IV: the first "tlsaad" is accepted only
 * while no streaming message has used the IV (START) and moves the context
 * to TLS, where streaming update and final are refused; an IV set as
 * "tlsivfixed" starts in TLS directly. Only an init with a new IV leaves
 * TLS, and a key-only init there drops the IV as after a used message.
 *
 * This file translates EVP calls and parameters into calls of the AEAD core
 * (core/aead_core.h), which owns the message's keystream, MAC and batch
 * shapes; here are only the state machine, the limits and the errors.
 */
#include <stddef.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "prov.h"
#include "aead_core.h"
#include "aead_pipeline.h"

#define TLS_AAD_LEN EVP_AEAD_TLS1_AAD_LEN /* 13 */

enum aead_state { ST_NEED_KEY_IV, ST_START, ST_AAD, ST_TEXT, ST_DONE, ST_TLS };

typedef struct aead_ctx {
    chapoly_provctx *pc;
    const chapoly_kernels *k;
    size_t ivlen;           /* 12 or 24: fixed by the algorithm */
    int enc;
    int key_set, iv_set;
    enum aead_state state;
    uint8_t key[CHACHA20_KEY_BYTES];   /* master key bytes */
    uint8_t iv[XCHACHA20_NONCE_BYTES];  /* as given; TLS 1.2: the fixed IV */
    int iv_fixed;               /* iv came as "tlsivfixed": records only */
    chapoly_aead msg;           /* the message; its (sub)key serves TLS records too */
    uint8_t tag[POLY1305_TAG_BYTES];   /* computed (enc) or expected (dec) */
    size_t tag_len;
    int tag_set;                /* dec: expected tag present */
    int tag_next;               /* ...and set between messages: it is for the next one */
    int tag_ready;              /* enc: tag computed by final */
    /* TLS 1.2 record mode */
    int tls_pending;            /* a "tlsaad" waits for its record */
    uint8_t tls_aad[TLS_AAD_LEN];
    size_t tls_payload;
    aead_pipeline *pipe;        /* OpenSSL 3.5 pipeline mode (aead_pipeline.c) */
} aead_ctx;

static OSSL_FUNC_cipher_newctx_fn chacha20_poly1305_newctx;
static OSSL_FUNC_cipher_newctx_fn xchacha20_poly1305_newctx;
static OSSL_FUNC_cipher_freectx_fn aead_freectx;
static OSSL_FUNC_cipher_dupctx_fn aead_dupctx;
static OSSL_FUNC_cipher_encrypt_init_fn aead_encrypt_init;
static OSSL_FUNC_cipher_decrypt_init_fn aead_decrypt_init;
static OSSL_FUNC_cipher_update_fn aead_update;
static OSSL_FUNC_cipher_final_fn aead_final;
static OSSL_FUNC_cipher_cipher_fn aead_cipher;
static OSSL_FUNC_cipher_get_params_fn chacha20_poly1305_get_params;
static OSSL_FUNC_cipher_get_params_fn xchacha20_poly1305_get_params;
static OSSL_FUNC_cipher_get_ctx_params_fn aead_get_ctx_params;
static OSSL_FUNC_cipher_set_ctx_params_fn aead_set_ctx_params;
static OSSL_FUNC_cipher_gettable_ctx_params_fn chacha20_poly1305_gettable_ctx_params;
static OSSL_FUNC_cipher_gettable_ctx_params_fn xchacha20_poly1305_gettable_ctx_params;
static OSSL_FUNC_cipher_settable_ctx_params_fn chacha20_poly1305_settable_ctx_params;
static OSSL_FUNC_cipher_settable_ctx_params_fn xchacha20_poly1305_settable_ctx_params;

/*
 * The message's keystream and ciphertext buffers (6 KiB of the context) are
 * written before they are read, so a new context zeroes only the bytes
 * before and after them, and a freed one wipes ks[] only as far as it ever
 * held keystream (chapoly_aead_clear); ct[] holds ciphertext only.
 * Allocating, zeroing and wiping all of it cost more than a short message.
 */
#define AEAD_BUFS_OFF (offsetof(aead_ctx, msg) + offsetof(chapoly_aead, ks))
#define AEAD_BUFS_END (offsetof(aead_ctx, msg) + offsetof(chapoly_aead, ct) \
                       + sizeof(((chapoly_aead *)0)->ct))
_Static_assert(offsetof(chapoly_aead, ct)
                   == offsetof(chapoly_aead, ks) + sizeof(((chapoly_aead *)0)->ks),
               "nothing between ks[] and ct[]: new fields go before ks[]");

/* Everything but ks[] and ct[]: header fields, keys, Poly1305 state, tag. */
static void aead_ctx_outside_bufs(aead_ctx *c, int wipe)
{
    unsigned char *p = (unsigned char *)c;

    if (wipe) { /* libc's memset through a volatile pointer: faster than OPENSSL_cleanse */
        chapoly_wipe(p, AEAD_BUFS_OFF);
        chapoly_wipe(p + AEAD_BUFS_END, sizeof(*c) - AEAD_BUFS_END);
    } else {
        memset(p, 0, AEAD_BUFS_OFF);
        memset(p + AEAD_BUFS_END, 0, sizeof(*c) - AEAD_BUFS_END);
    }
}

static void *aead_newctx(void *provctx, size_t ivlen)
{
    chapoly_provctx *pc = provctx;
    aead_ctx *c = chapoly_ctx_alloc(sizeof(*c));

    if (c == NULL)
        return NULL;
    aead_ctx_outside_bufs(c, 0);
    c->pc = pc;
    c->k = pc->k;
    c->ivlen = ivlen;
    c->tag_len = POLY1305_TAG_BYTES;
    c->state = ST_NEED_KEY_IV;
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
    aead_ctx_outside_bufs(c, 1);
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

/* A new message starts: an expected tag set during the previous one is dropped. */
static void aead_claim_tag(aead_ctx *c)
{
    if (!c->tag_next)
        c->tag_set = 0;
    c->tag_next = 0;
}

/* A message under the key and IV; the core drops what the previous one left. */
static void aead_start(aead_ctx *c)
{
    aead_claim_tag(c);
    if (c->ivlen == XCHACHA20_NONCE_BYTES)
        chapoly_aead_start_xchacha(&c->msg, c->k, c->key, c->iv);
    else
        chapoly_aead_start(&c->msg, c->k, c->key, c->iv);
    c->state = c->iv_fixed ? ST_TLS : ST_START;
    c->tag_ready = 0;
    c->tls_pending = 0;
}

/*
 * The IV has served a message and a new key arrived without a new IV: the
 * message (finished or not) ends here and the context needs an IV.
 */
static void aead_drop_iv(aead_ctx *c)
{
    if (!c->tag_next)
        c->tag_set = 0;
    c->tag_ready = 0;
    c->tls_pending = 0;
    c->iv_set = 0;
    c->state = ST_NEED_KEY_IV;
    chapoly_aead_clear(&c->msg); /* its MAC state, keystream and (sub)key */
}

static int aead_init(aead_ctx *c, int enc, const unsigned char *key,
                     size_t keylen, const unsigned char *iv, size_t ivlen,
                     const OSSL_PARAM params[])
{
    chapoly_pipeline_end(c->pipe); /* an ordinary init leaves pipeline mode */
    c->enc = enc;
    if (key != NULL) {
        if (keylen != CHACHA20_KEY_BYTES) {
            CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "key must be 32 bytes, got %zu", keylen);
            return 0;
        }
        memcpy(c->key, key, CHACHA20_KEY_BYTES);
        c->key_set = 1;
        if (iv == NULL && c->iv_set &&
            (c->state == ST_AAD || c->state == ST_TEXT || c->state == ST_DONE ||
             c->state == ST_TLS))
            aead_drop_iv(c);
    }
    if (iv != NULL) {
        if (ivlen != c->ivlen) {
            CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "IV must be %zu bytes, got %zu",
                        c->ivlen, ivlen);
            return 0;
        }
        memcpy(c->iv, iv, c->ivlen);
        c->iv_set = 1;
        c->iv_fixed = 0;
    }
    if ((key != NULL || iv != NULL) && c->key_set && c->iv_set)
        aead_start(c);
    return aead_set_ctx_params(c, params);
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

static int aead_ready(aead_ctx *c)
{
    if (chapoly_pipeline_active(c->pipe)) {
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "the context is initialised for a pipeline: use EVP_CipherPipelineUpdate/"
                    "Final, or an ordinary init first");
        return 0;
    }
    if (c->state == ST_NEED_KEY_IV) {
        if (c->key_set)
            CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "no IV set: initialise with an IV first");
        else
            CHAPOLY_ERR(PROV_R_NO_KEY_SET, "initialise with a 32-byte key first");
        return 0;
    }
    if (c->state == ST_DONE) {
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "message already finalised; re-initialise with a new IV");
        return 0;
    }
    if (c->state == ST_TLS) {
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "TLS record mode: the IV serves records only; re-initialise with a new "
                    "IV for a message");
        return 0;
    }
    return 1;
}

/* TLS 1.2 record: in place over payload || tag, tag appended or checked. */
static int aead_tls_record(aead_ctx *c, unsigned char *out, size_t *outl,
                           size_t outsize, const unsigned char *in, size_t inl)
{
    uint8_t nonce[CHACHA20_NONCE_BYTES];
    size_t plen = c->tls_payload;
    int ok;

    c->tls_pending = 0;
    if (out == NULL || in == NULL || inl != plen + POLY1305_TAG_BYTES) {
        CHAPOLY_ERR(PROV_R_INVALID_INPUT_LENGTH,
                    "TLS record of %zu bytes does not match the AAD length %zu + tag",
                    inl, plen);
        return 0;
    }
    if (outsize < (c->enc ? inl : plen)) {
        CHAPOLY_ERR(PROV_R_OUTPUT_BUFFER_TOO_SMALL, "TLS record output buffer too small");
        return 0;
    }
    if (chacha20_partially_overlapping(out, in, inl)) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "partially overlapping buffers");
        return 0;
    }
    /* RFC 7905: nonce = fixed IV XOR (0^32 || 64-bit sequence number). */
    memcpy(nonce, c->iv, CHACHA20_NONCE_BYTES);
    for (int i = 0; i < 8; i++)
        nonce[4 + i] ^= c->tls_aad[i];
    chapoly_count_aead(c->pc, c->enc, 1, CHAPOLY_CTR_TLS_RECORDS); /* failed opens too */
    if (c->enc) {
        chapoly_aead_seal(c->k, out, out + plen, in, plen, c->tls_aad, TLS_AAD_LEN,
                          chapoly_aead_key(&c->msg), nonce);
        *outl = inl;
        return 1;
    }
    ok = chapoly_aead_open(c->k, out, in, plen, c->tls_aad, TLS_AAD_LEN, in + plen,
                           POLY1305_TAG_BYTES, chapoly_aead_key(&c->msg), nonce);
    if (!ok) {
        OPENSSL_cleanse(out, plen); /* never leave anything that looks like plaintext */
        *outl = 0;
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "TLS record authentication failed");
        return 0;
    }
    *outl = plen;
    return 1;
}

static int aead_update(void *vctx, unsigned char *out, size_t *outl,
                       size_t outsize, const unsigned char *in, size_t inl)
{
    aead_ctx *c = vctx;

    if (c->tls_pending)
        return aead_tls_record(c, out, outl, outsize, in, inl);
    *outl = 0;
    if (!aead_ready(c))
        return 0;
    if (inl == 0)
        return 1; /* a no-op: only final produces or checks the tag */
    if (in == NULL) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "NULL input");
        return 0;
    }
    if (out == NULL) {
        if (c->state == ST_TEXT) {
            CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "AAD after data is not allowed");
            return 0;
        }
        if (inl > PTRDIFF_MAX) {
            CHAPOLY_ERR(PROV_R_LENGTH_TOO_LARGE,
                        "input length %zu is larger than any buffer (a negative length?)",
                        inl);
            return 0;
        }
        chapoly_aead_aad(&c->msg, in, inl);
        c->state = ST_AAD;
        *outl = inl; /* as the default provider reports AAD */
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
    chapoly_aead_text(&c->msg, out, in, inl, c->enc);
    c->state = ST_TEXT;
    *outl = inl;
    return 1;
}

static int aead_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    aead_ctx *c = vctx;
    int ok = 1;

    (void)out;
    (void)outsize;
    *outl = 0;
    if (c->tls_pending) {
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "TLS record mode has no final");
        c->tls_pending = 0;
        return 0;
    }
    if (!aead_ready(c))
        return 0;
    if (!c->enc && !c->tag_set) {
        CHAPOLY_ERR(PROV_R_TAG_NOT_SET, "decryption needs the expected tag before final");
        return 0;
    }
    c->state = ST_DONE;
    chapoly_count_aead(c->pc, c->enc, 1, -1); /* failed opens too */
    if (c->enc) {
        chapoly_aead_finish(&c->msg, c->tag);
        c->tag_ready = 1;
    } else {
        /*
         * libcrypto's constant-time compare rather than chapoly_aead_verify:
         * the verdict is public, and ct_evp declassifies it there.
         */
        uint8_t calc[POLY1305_TAG_BYTES];

        chapoly_aead_finish(&c->msg, calc);
        ok = CRYPTO_memcmp(calc, c->tag, c->tag_len) == 0;
        chapoly_wipe(calc, sizeof(calc));
        c->tag_set = c->tag_next = 0; /* an expected tag serves one message */
        if (!ok)
            CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "tag mismatch: message not authentic");
    }
    return ok;
}

/*
 * EVP_Cipher(): in == NULL finalises, out == NULL feeds AAD, otherwise data.
 * EVP turns a 0 return into -1 and a 1 into outl.
 */
static int aead_cipher(void *vctx, unsigned char *out, size_t *outl,
                       size_t outsize, const unsigned char *in, size_t inl)
{
    aead_ctx *c = vctx;

    if (c->tls_pending)
        return aead_tls_record(c, out, outl, outsize, in, inl);
    if (in == NULL)
        return aead_final(c, out, outl, outsize);
    return aead_update(c, out, outl, outsize, in, inl);
}

/* ---- parameters ---- */

static int chacha20_poly1305_get_params(OSSL_PARAM params[])
{
    return chapoly_cipher_get_params(params, CHACHA20_KEY_BYTES, CHACHA20_NONCE_BYTES, 1);
}

static int xchacha20_poly1305_get_params(OSSL_PARAM params[])
{
    return chapoly_cipher_get_params(params, CHACHA20_KEY_BYTES, XCHACHA20_NONCE_BYTES, 1);
}

static const OSSL_PARAM chacha20_poly1305_known_gettable_ctx[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL),
    OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, NULL, 0),
    OSSL_PARAM_END
};

/* No TLS record mode, so no "tlsaadpad". */
static const OSSL_PARAM xchacha20_poly1305_known_gettable_ctx[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
    OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *chacha20_poly1305_gettable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return chacha20_poly1305_known_gettable_ctx;
}

static const OSSL_PARAM *xchacha20_poly1305_gettable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return xchacha20_poly1305_known_gettable_ctx;
}

static const OSSL_PARAM chacha20_poly1305_known_settable_ctx[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0),
    OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM xchacha20_poly1305_known_settable_ctx[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
    OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *chacha20_poly1305_settable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return chacha20_poly1305_known_settable_ctx;
}

static const OSSL_PARAM *xchacha20_poly1305_settable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return xchacha20_poly1305_known_settable_ctx;
}

/*
 * One pass over the caller's array with a switch on the first character:
 * "ivlen" is asked for twice per TLS 1.3 record, so no OSSL_PARAM_locate
 * chains on the hot path.
 */
static int aead_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    aead_ctx *c = vctx;

    for (OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        int ok = 1;

        switch (p->key[0]) {
        case 'i':
            if (strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN) == 0)
                ok = chapoly_param_set_size_t(p, c->ivlen);
            break;
        case 'k':
            if (strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN) == 0)
                ok = chapoly_param_set_size_t(p, CHACHA20_KEY_BYTES);
            break;
        case 'p':
            if (strcmp(p->key, OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG) == 0 &&
                !chapoly_pipeline_get_tags(c->pipe, p))
                return 0;
            break;
        case 't':
            if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAGLEN) == 0) {
                ok = chapoly_param_set_size_t(p, c->tag_len);
            } else if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAG) == 0) {
                if (p->data_type != OSSL_PARAM_OCTET_STRING) {
                    CHAPOLY_ERR(PROV_R_FAILED_TO_GET_PARAMETER, "tag must be an octet string");
                    return 0;
                }
                if (!c->enc || !c->tag_ready) {
                    CHAPOLY_ERR(PROV_R_TAG_NOT_SET,
                                c->enc ? "the tag is available only after a successful final"
                                       : "the tag cannot be read when decrypting");
                    return 0;
                }
                if (p->data_size == 0 || p->data_size > POLY1305_TAG_BYTES) {
                    CHAPOLY_ERR(PROV_R_INVALID_TAG_LENGTH, "tag length %zu not in 1..16",
                                p->data_size);
                    return 0;
                }
                if (p->data != NULL) /* NULL data: a size query */
                    memcpy(p->data, c->tag, p->data_size);
                p->return_size = p->data_size;
            } else if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD) == 0 &&
                       c->ivlen == CHACHA20_NONCE_BYTES) { /* XChaCha has no TLS record mode */
                ok = chapoly_param_set_size_t(p, POLY1305_TAG_BYTES);
            }
            break;
        }
        if (!ok) {
            CHAPOLY_ERR(PROV_R_FAILED_TO_SET_PARAMETER, "cannot return %s", p->key);
            return 0;
        }
    }
    return 1;
}

static int aead_set_tls_aad(aead_ctx *c, const OSSL_PARAM *p)
{
    size_t len;

    if (c->ivlen != CHACHA20_NONCE_BYTES) {
        CHAPOLY_ERR(PROV_R_NOT_SUPPORTED, "TLS record mode is for ChaCha20-Poly1305 only");
        return 0;
    }
    if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL ||
        p->data_size != TLS_AAD_LEN) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "TLS AAD must be %d bytes", TLS_AAD_LEN);
        return 0;
    }
    if (!c->key_set || !c->iv_set) {
        CHAPOLY_ERR(PROV_R_NO_KEY_SET, "TLS record mode needs the key and fixed IV first");
        return 0;
    }
    if (c->state != ST_START && c->state != ST_TLS) {
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "TLS record mode: a message has used this IV; re-initialise with the "
                    "fixed IV first");
        return 0;
    }
    memcpy(c->tls_aad, p->data, TLS_AAD_LEN);
    len = ((size_t)c->tls_aad[TLS_AAD_LEN - 2] << 8) | c->tls_aad[TLS_AAD_LEN - 1];
    if (!c->enc) {
        /* On open the length field counts the tag; the MAC input does not. */
        if (len < POLY1305_TAG_BYTES) {
            CHAPOLY_ERR(PROV_R_INVALID_INPUT_LENGTH, "TLS record shorter than the tag");
            return 0;
        }
        len -= POLY1305_TAG_BYTES;
        c->tls_aad[TLS_AAD_LEN - 2] = (uint8_t)(len >> 8);
        c->tls_aad[TLS_AAD_LEN - 1] = (uint8_t)len;
    }
    c->tls_payload = len;
    c->tls_pending = 1;
    c->state = ST_TLS;
    return 1;
}

static int aead_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    aead_ctx *c = vctx;

    for (const OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        size_t v;

        switch (p->key[0]) {
        case 'k':
            if (strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN) == 0) {
                if (!chapoly_param_get_size_t(p, &v) || v != CHACHA20_KEY_BYTES) {
                    if (p->data != NULL) /* else it said why */
                        CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "only 32-byte keys");
                    return 0;
                }
            }
            break;
        case 'i':
            if (strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN) == 0) {
                if (!chapoly_param_get_size_t(p, &v) || v != c->ivlen) {
                    if (p->data != NULL) /* else it said why */
                        CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "only %zu-byte IVs", c->ivlen);
                    return 0;
                }
            }
            break;
        case 't':
            if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAG) == 0) {
                if (p->data_type != OSSL_PARAM_OCTET_STRING) {
                    CHAPOLY_ERR(PROV_R_FAILED_TO_SET_PARAMETER, "tag must be an octet string");
                    return 0;
                }
                if (p->data_size == 0 || p->data_size > POLY1305_TAG_BYTES) {
                    CHAPOLY_ERR(PROV_R_INVALID_TAG_LENGTH, "tag length %zu not in 1..16",
                                p->data_size);
                    return 0;
                }
                if (p->data != NULL) {
                    if (c->enc) {
                        CHAPOLY_ERR(PROV_R_TAG_NOT_NEEDED, "a tag is not set when encrypting");
                        return 0;
                    }
                    memcpy(c->tag, p->data, p->data_size);
                    c->tag_set = 1;
                    /* no message in progress: the tag is for the next one */
                    c->tag_next = c->state == ST_NEED_KEY_IV || c->state == ST_DONE;
                }
                c->tag_len = p->data_size;
            } else if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD) == 0) {
                if (!aead_set_tls_aad(c, p))
                    return 0;
            } else if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED) == 0) {
                if (c->ivlen != CHACHA20_NONCE_BYTES || p->data_type != OSSL_PARAM_OCTET_STRING ||
                    p->data == NULL || p->data_size != CHACHA20_NONCE_BYTES) {
                    CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "fixed TLS IV must be 12 bytes");
                    return 0;
                }
                memcpy(c->iv, p->data, CHACHA20_NONCE_BYTES);
                c->iv_set = 1;
                c->iv_fixed = 1;
                if (c->key_set)
                    aead_start(c);
            }
            break;
        case 'p':
            if (strcmp(p->key, OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG) == 0 &&
                !chapoly_pipeline_set_tags(c->pipe, p))
                return 0;
            break;
#ifdef CHAPOLY_TEST_HOOKS
        case 'c':
            if (strcmp(p->key, "chapoly-test-text-len") == 0) {
                uint64_t t;
                if (p->data == NULL || !OSSL_PARAM_get_uint64(p, &t) || t > CHAPOLY_AEAD_MAX_TEXT)
                    return 0;
                c->msg.text_len = t; /* only the length accounting; not for real use */
            }
            break;
#endif
        default:
            break; /* unknown keys (padding, tls-version, ...) are ignored */
        }
    }
    return 1;
}

/* ---- the OpenSSL 3.5 pipeline API (aead_pipeline.c) ---- */

/* A pipeline init drops any ordinary message, TLS record state and tag. */
static int aead_pipeline_init(aead_ctx *c, int enc, const unsigned char *key, size_t keylen,
                              size_t numpipes, const unsigned char **iv, size_t ivlen,
                              const OSSL_PARAM params[])
{
    if (c->key_set || c->iv_set)
        chapoly_aead_clear(&c->msg);
    c->key_set = c->iv_set = c->iv_fixed = 0;
    c->tag_set = c->tag_next = c->tag_ready = c->tls_pending = 0;
    c->state = ST_NEED_KEY_IV;
    c->enc = enc;
    if (!chapoly_pipeline_init(&c->pipe, c->k, c->ivlen, enc, key, keylen, numpipes, iv,
                               ivlen))
        return 0;
    if (!aead_set_ctx_params(c, params)) {
        /* a failed init leaves pipeline mode and wipes the key (aead_pipeline.h) */
        chapoly_pipeline_end(c->pipe);
        return 0;
    }
    return 1;
}

static int aead_pipeline_encrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                                      size_t numpipes, const unsigned char **iv,
                                      size_t ivlen, const OSSL_PARAM params[])
{
    return aead_pipeline_init(vctx, 1, key, keylen, numpipes, iv, ivlen, params);
}

static int aead_pipeline_decrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                                      size_t numpipes, const unsigned char **iv,
                                      size_t ivlen, const OSSL_PARAM params[])
{
    return aead_pipeline_init(vctx, 0, key, keylen, numpipes, iv, ivlen, params);
}

static int aead_pipeline_update(void *vctx, size_t numpipes, unsigned char **out,
                                size_t *outl, const size_t *outsize,
                                const unsigned char **in, const size_t *inl)
{
    return chapoly_pipeline_update(((aead_ctx *)vctx)->pipe, numpipes, out, outl, outsize, in,
                                   inl);
}

static int aead_pipeline_final(void *vctx, size_t numpipes, unsigned char **out,
                               size_t *outl, const size_t *outsize)
{
    aead_ctx *c = vctx;

    return chapoly_pipeline_final(c->pipe, c->pc, numpipes, out, outl, outsize);
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
        { OSSL_FUNC_CIPHER_GET_PARAMS, (void (*)(void))prefix##_get_params },          \
        { OSSL_FUNC_CIPHER_GETTABLE_PARAMS,                                            \
          (void (*)(void))chapoly_cipher_gettable_params },                            \
        { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (void (*)(void))aead_get_ctx_params },      \
        { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (void (*)(void))aead_set_ctx_params },      \
        { OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS,                                        \
          (void (*)(void))prefix##_gettable_ctx_params },                              \
        { OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS,                                        \
          (void (*)(void))prefix##_settable_ctx_params },                              \
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
