/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "ChaCha20" with OpenSSL's 16-byte IV: bytes 0..3 the little-endian 32-bit
 * block counter, bytes 4..15 the 96-bit nonce. When the counter wraps it
 * carries into the first nonce word, as the default provider does.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include "prov.h"
#include "chacha20_stream.h"

#define CHACHA20_KEYLEN 32
#define CHACHA20_IVLEN 16

typedef struct chacha20_ctx {
    const chapoly_kernels *k;
    int key_set, iv_set;
    uint8_t iv[CHACHA20_IVLEN];
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

    if (c != NULL)
        c->k = ((chapoly_provctx *)provctx)->k;
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

static int chacha20_init(chacha20_ctx *c, const unsigned char *key, size_t keylen,
                         const unsigned char *iv, size_t ivlen,
                         const OSSL_PARAM params[])
{
    if (key != NULL) {
        if (keylen != CHACHA20_KEYLEN) {
            CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "key must be 32 bytes, got %zu", keylen);
            return 0;
        }
        chapoly_load_key(c->stream.key, key);
        c->key_set = 1;
    }
    if (iv != NULL) {
        if (ivlen != CHACHA20_IVLEN) {
            CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "IV must be 16 bytes, got %zu", ivlen);
            return 0;
        }
        memcpy(c->iv, iv, CHACHA20_IVLEN);
        c->iv_set = 1;
    }
    if (key != NULL || iv != NULL) {
        /*
         * Like the default provider, any (re)init restarts the stream at the
         * IV; chacha20_stream_start wipes the previous stream's spare keystream.
         */
        uint32_t w[4];

        for (int i = 0; i < 4; i++)
            w[i] = (uint32_t)c->iv[4 * i] | ((uint32_t)c->iv[4 * i + 1] << 8) |
                   ((uint32_t)c->iv[4 * i + 2] << 16) | ((uint32_t)c->iv[4 * i + 3] << 24);
        chacha20_stream_start(&c->stream, w[0], w + 1);
    }
    return chacha20_set_ctx_params(c, params);
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

static int chacha20_update(void *vctx, unsigned char *out, size_t *outl,
                           size_t outsize, const unsigned char *in, size_t inl)
{
    chacha20_ctx *c = vctx;

    *outl = 0;
    if (inl == 0)
        return 1;
    if (!c->key_set || !c->iv_set) {
        if (c->key_set)
            CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "no IV set: initialise with an IV first");
        else
            CHAPOLY_ERR(PROV_R_NO_KEY_SET, "initialise with a 32-byte key first");
        return 0;
    }
    if (out == NULL || in == NULL) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "NULL buffer");
        return 0;
    }
    /*
     * The stream itself has no practical limit (the block counter carries
     * into the next word); a length no buffer can have is a negative int
     * from EVP_EncryptUpdate (libcrypto 3.0 passes it on as a huge size_t).
     */
    if (inl > PTRDIFF_MAX) {
        CHAPOLY_ERR(PROV_R_LENGTH_TOO_LARGE,
                    "input length %zu is larger than any buffer (a negative length?)", inl);
        return 0;
    }
    if (outsize < inl) {
        CHAPOLY_ERR(PROV_R_OUTPUT_BUFFER_TOO_SMALL, "output buffer too small");
        return 0;
    }
    if (chacha20_partially_overlapping(out, in, inl)) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "partially overlapping buffers");
        return 0;
    }
    chacha20_stream_xor(c->k, &c->stream, out, in, inl);
    *outl = inl;
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
    return chapoly_cipher_get_params(params, CHACHA20_KEYLEN, CHACHA20_IVLEN, 0);
}

static const OSSL_PARAM chacha20_known_ctx[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_END
};

static const OSSL_PARAM *chacha20_gettable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return chacha20_known_ctx;
}

static const OSSL_PARAM *chacha20_settable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return chacha20_known_ctx;
}

static int chacha20_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    (void)vctx;
    for (OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        if (strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN) == 0) {
            if (!chapoly_param_set_size_t(p, CHACHA20_IVLEN))
                goto err;
        } else if (strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN) == 0) {
            if (!chapoly_param_set_size_t(p, CHACHA20_KEYLEN))
                goto err;
        }
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
        if (strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN) == 0) {
            if (!chapoly_param_get_size_t(p, &v) || v != CHACHA20_KEYLEN) {
                if (p->data != NULL) /* else it said why */
                    CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "only 32-byte keys");
                return 0;
            }
        } else if (strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN) == 0) {
            if (!chapoly_param_get_size_t(p, &v) || v != CHACHA20_IVLEN) {
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
