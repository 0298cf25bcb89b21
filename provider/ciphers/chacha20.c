/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "ChaCha20" with OpenSSL's 16-byte IV: bytes 0..3 the little-endian 32-bit
 * block counter, bytes 4..15 the 96-bit nonce. When the counter wraps it
 * carries into the first nonce word, as the default provider does.
 *
 * Re-initialisation, as the default provider of OpenSSL 3.0 to 3.5 does it
 * (providers/implementations/ciphers/cipher_chacha20.c, _hw.c; its counter
 * names the block its partial-block buffer came from until an update goes
 * past that block, and a key-only init drops the buffer, not the counter):
 *   an IV (with or without a key): the stream restarts at the IV;
 *   a key only: the stream goes on at the start of the block the last byte
 *     was taken from (after 100 bytes: keystream byte 64), or at the next
 *     block when the last update ended with whole blocks of its own;
 *   neither: nothing changes.
 * From OpenSSL 3.6 on (openssl/openssl pull request 27484) the default's
 * counter moves past a partial block when it makes the block, a key-only
 * init therefore goes on at the next block, and "updated-iv" answers the
 * counter and nonce of the next block (EVP_CIPHER_CTX_get_updated_iv): chapoly
 * answers as the running libcrypto's default does (pc->openssl).
 * docs/behaviour.md ("Re-initialisation") has the table; test_evp_reinit
 * checks every pattern against the default.
 *
 * The stream, its counter carry, partial blocks and the key-only init's
 * position are the core's (core/chacha20_stream.h); here are the EVP calls'
 * own checks and errors. QUIC header protection costs one IV-only init and
 * one 5-byte update per packet: both are inline up to the kernel call.
 */
#include <stddef.h>
#include <string.h>
#include "prov.h"
#include "bytes.h"
#include "chacha20_stream.h"

#define HAVE_KEY 1
#define HAVE_IV 2

typedef struct chacha20_ctx {
    const chapoly_kernels *k;
    chapoly_provctx *pc; /* statistics */
    unsigned have;     /* HAVE_KEY | HAVE_IV */
    chacha20_stream stream;
} chacha20_ctx;

static OSSL_FUNC_cipher_newctx_fn chacha20_newctx;
static OSSL_FUNC_cipher_freectx_fn chacha20_freectx;
static OSSL_FUNC_cipher_dupctx_fn chacha20_dupctx;
static OSSL_FUNC_cipher_encrypt_init_fn chacha20_encrypt_init;
static OSSL_FUNC_cipher_decrypt_init_fn chacha20_decrypt_init;
static OSSL_FUNC_cipher_update_fn chacha20_update;
static OSSL_FUNC_cipher_final_fn chacha20_final;
static OSSL_FUNC_cipher_cipher_fn chacha20_cipher;
static OSSL_FUNC_cipher_get_params_fn chacha20_get_params;
static OSSL_FUNC_cipher_get_ctx_params_fn chacha20_get_ctx_params;
static OSSL_FUNC_cipher_set_ctx_params_fn chacha20_set_ctx_params;
static OSSL_FUNC_cipher_gettable_ctx_params_fn chacha20_gettable_ctx_params;
static OSSL_FUNC_cipher_settable_ctx_params_fn chacha20_settable_ctx_params;

static void *chacha20_newctx(void *provctx)
{
    chacha20_ctx *c = chapoly_ctx_zalloc(sizeof(*c));

    if (c != NULL) {
        c->pc = provctx;
        c->k = c->pc->k;
    }
    return c;
}

static void chacha20_freectx(void *vctx)
{
    chapoly_ctx_free(vctx, sizeof(chacha20_ctx));
}

static void *chacha20_dupctx(void *vctx)
{
    return chapoly_ctx_dup(vctx, sizeof(chacha20_ctx));
}

CHAPOLY_INLINE void chacha20_load_iv(chacha20_ctx *c, const unsigned char *iv)
{
    chacha20_stream_set_iv(&c->stream, iv);
    c->have |= HAVE_IV;
}

/* Any init but the IV-only one. */
static __attribute__((noinline)) int chacha20_init_key(chacha20_ctx *c, const unsigned char *key,
                                                       size_t keylen, const unsigned char *iv,
                                                       size_t ivlen)
{
    if (key != NULL && keylen != CHACHA20_KEY_BYTES) {
        CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "key must be 32 bytes, got %zu", keylen);
        return 0;
    }
    if (iv != NULL && ivlen != CHACHA20_CTR_NONCE_BYTES) {
        CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "IV must be 16 bytes, got %zu", ivlen);
        return 0;
    }
    if (iv != NULL)
        chacha20_load_iv(c, iv);
    if (key != NULL) {
        if (iv == NULL) /* see the top: up to 3.5 back to the block the last update ended in */
            chacha20_stream_rewind(&c->stream, !chapoly_openssl_at_least(c->pc, 3, 6));
        chapoly_load_key(c->stream.key, key);
        c->have |= HAVE_KEY;
    }
    return 1;
}

static int chacha20_init(chacha20_ctx *c, const unsigned char *key, size_t keylen,
                         const unsigned char *iv, size_t ivlen,
                         const OSSL_PARAM params[])
{
    if (key == NULL && iv != NULL && ivlen == CHACHA20_CTR_NONCE_BYTES)
        chacha20_load_iv(c, iv); /* QUIC header protection: once per packet */
    else if (!chacha20_init_key(c, key, keylen, iv, ivlen))
        return 0;
    if (params != NULL && params->key != NULL)
        return chacha20_set_ctx_params(c, params);
    return 1;
}

static int chacha20_encrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                                 const unsigned char *iv, size_t ivlen,
                                 const OSSL_PARAM params[])
{
    return chacha20_init(vctx, key, keylen, iv, ivlen, params);
}

static int chacha20_decrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                                 const unsigned char *iv, size_t ivlen,
                                 const OSSL_PARAM params[])
{
    return chacha20_init(vctx, key, keylen, iv, ivlen, params);
}

/*
 * Why an update is refused, off the data path. It takes chacha20_update's
 * own arguments, so reaching it moves nothing.
 */
static __attribute__((noinline, cold)) int chacha20_refuse(void *vctx, unsigned char *out,
                                                            size_t *outl, size_t outsize,
                                                            const unsigned char *in, size_t inl)
{
    const chacha20_ctx *c = vctx;

    *outl = 0;
    if (c->have != (HAVE_KEY | HAVE_IV)) {
        if (c->have & HAVE_KEY)
            CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "no IV set: initialise with an IV first");
        else
            CHAPOLY_ERR(PROV_R_NO_KEY_SET, "initialise with a 32-byte key first");
    } else if (out == NULL || in == NULL) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "NULL buffer");
    } else if (inl > PTRDIFF_MAX) {
        /*
         * The stream itself has no practical limit (the block counter carries
         * into the next word); a length no buffer can have is a negative int
         * from EVP_EncryptUpdate (libcrypto 3.0 passes it on as a huge size_t).
         */
        CHAPOLY_ERR(PROV_R_LENGTH_TOO_LARGE,
                    "input length %zu is larger than any buffer (a negative length?)", inl);
    } else if (outsize < inl) {
        CHAPOLY_ERR(PROV_R_OUTPUT_BUFFER_TOO_SMALL, "output buffer too small");
    } else {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "partially overlapping buffers");
    }
    return 0;
}

static int chacha20_update(void *vctx, unsigned char *out, size_t *outl,
                           size_t outsize, const unsigned char *in, size_t inl)
{
    chacha20_ctx *c = vctx;

    if (inl == 0) {
        *outl = 0;
        return 1;
    }
    if (c->have != (HAVE_KEY | HAVE_IV) || out == NULL || in == NULL || inl > PTRDIFF_MAX
        || outsize < inl || chacha20_partially_overlapping(out, in, inl))
        return chacha20_refuse(vctx, out, outl, outsize, in, inl);
    *outl = inl;
    chacha20_stream_xor(c->k, &c->stream, out, in, inl);
    chapoly_count_chacha20(c->pc, inl);
    return 1;
}

static int chacha20_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    (void)vctx;
    (void)out;
    (void)outsize;
    *outl = 0; /* a stream cipher has nothing left to emit */
    return 1;
}

static int chacha20_cipher(void *vctx, unsigned char *out, size_t *outl,
                           size_t outsize, const unsigned char *in, size_t inl)
{
    if (in == NULL) {
        *outl = 0;
        return 1;
    }
    return chacha20_update(vctx, out, outl, outsize, in, inl);
}

static int chacha20_get_params(OSSL_PARAM params[])
{
    return chapoly_cipher_get_params(params, CHACHA20_KEY_BYTES, CHACHA20_CTR_NONCE_BYTES, 0);
}

static const OSSL_PARAM chacha20_known_ctx[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_END
};

/* 3.6 on: "updated-iv" too */
static const OSSL_PARAM chacha20_known_gettable_ctx_36[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *chacha20_gettable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    return provctx != NULL && chapoly_openssl_at_least(provctx, 3, 6)
               ? chacha20_known_gettable_ctx_36
               : chacha20_known_ctx;
}

static const OSSL_PARAM *chacha20_settable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return chacha20_known_ctx;
}

/*
 * A parameter name against a literal (n = sizeof the literal, its NUL
 * included), inline: libcrypto 3.0 asks for "ivlen" at every init that
 * brings an IV, so a strcmp call per name would be on QUIC's per-packet path.
 * Stops at the first difference, so it never reads past a shorter name.
 */
static inline int chacha20_name_is(const char *name, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (name[i] != lit[i])
            return 0;
    return 1;
}
#define NAME_IS(name, lit) chacha20_name_is((name), (lit), sizeof(lit))

/* The counter and nonce of the next block, as 16 IV bytes (OpenSSL 3.6 on). */
static __attribute__((noinline)) int chacha20_get_updated_iv(const chacha20_ctx *c, OSSL_PARAM *p)
{
    unsigned char iv[CHACHA20_CTR_NONCE_BYTES];
    int ok;

    for (int i = 0; i < 4; i++)
        store32_le(iv + 4 * i, c->stream.ctr_nonce[i]);
    ok = chapoly_param_set_octet_string(p, iv, sizeof(iv));
    chapoly_wipe(iv, sizeof(iv));
    if (!ok)
        CHAPOLY_ERR(PROV_R_FAILED_TO_SET_PARAMETER, "cannot return the updated IV "
                    "(a 16-byte octet string)");
    return ok;
}

static int chacha20_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    const chacha20_ctx *c = vctx;

    for (OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        if (NAME_IS(p->key, OSSL_CIPHER_PARAM_IVLEN)) {
            if (!chapoly_param_set_size_t(p, CHACHA20_CTR_NONCE_BYTES))
                goto err;
        } else if (NAME_IS(p->key, OSSL_CIPHER_PARAM_KEYLEN)) {
            if (!chapoly_param_set_size_t(p, CHACHA20_KEY_BYTES))
                goto err;
        } else if (NAME_IS(p->key, OSSL_CIPHER_PARAM_UPDATED_IV) &&
                   chapoly_openssl_at_least(c->pc, 3, 6)) {
            if (!chacha20_get_updated_iv(c, p))
                return 0;
        }
        /*
         * "iv", and "updated-iv" up to 3.5, stay unanswered, as in the
         * default provider (EVP_CIPHER_CTX_get_updated_iv returns 1, buffer
         * untouched).
         */
    }
    return 1;
err:
    CHAPOLY_ERR(PROV_R_FAILED_TO_SET_PARAMETER, "cannot return a length");
    return 0;
}

static int chacha20_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    size_t v;

    (void)vctx;
    for (const OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        if (NAME_IS(p->key, OSSL_CIPHER_PARAM_KEYLEN)) {
            if (!chapoly_param_get_size_t(p, &v) || v != CHACHA20_KEY_BYTES) {
                if (p->data != NULL) /* else it said why */
                    CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "only 32-byte keys");
                return 0;
            }
        } else if (NAME_IS(p->key, OSSL_CIPHER_PARAM_IVLEN)) {
            if (!chapoly_param_get_size_t(p, &v) || v != CHACHA20_CTR_NONCE_BYTES) {
                if (p->data != NULL) /* else it said why */
                    CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "only 16-byte IVs");
                return 0;
            }
        }
        /* anything else (padding from enc -nopad or speed) is ignored */
    }
    return 1;
}

const OSSL_DISPATCH chapoly_chacha20_functions[] = {
    { OSSL_FUNC_CIPHER_NEWCTX, (void (*)(void))chacha20_newctx },
    { OSSL_FUNC_CIPHER_FREECTX, (void (*)(void))chacha20_freectx },
    { OSSL_FUNC_CIPHER_DUPCTX, (void (*)(void))chacha20_dupctx },
    { OSSL_FUNC_CIPHER_ENCRYPT_INIT, (void (*)(void))chacha20_encrypt_init },
    { OSSL_FUNC_CIPHER_DECRYPT_INIT, (void (*)(void))chacha20_decrypt_init },
    { OSSL_FUNC_CIPHER_UPDATE, (void (*)(void))chacha20_update },
    { OSSL_FUNC_CIPHER_FINAL, (void (*)(void))chacha20_final },
    { OSSL_FUNC_CIPHER_CIPHER, (void (*)(void))chacha20_cipher },
    { OSSL_FUNC_CIPHER_GET_PARAMS, (void (*)(void))chacha20_get_params },
    { OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (void (*)(void))chapoly_cipher_gettable_params },
    { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (void (*)(void))chacha20_get_ctx_params },
    { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (void (*)(void))chacha20_set_ctx_params },
    { OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (void (*)(void))chacha20_gettable_ctx_params },
    { OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (void (*)(void))chacha20_settable_ctx_params },
    { 0, NULL }
};
