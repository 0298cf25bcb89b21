/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The floor: a provider that does no cryptography, timed with exactly the
 * EVP calls chapoly and the default provider get, so chapoly ns - floor ns
 * is chapoly's own cost above libcrypto's EVP layer. ChaCha20-Poly1305,
 * ChaCha20 and POLY1305 with their key and IV length checks, but an update
 * copies its input (AAD updates do nothing), a tag is 16 zero bytes and an
 * open accepts any tag.
 *
 * It must never stand in for a real cipher: it lives in bench_evp itself,
 * registered with OSSL_PROVIDER_add_builtin in bench_evp's own library
 * context only, and its algorithms carry "provider=floor".
 */
#include "bench_evp.h"

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

typedef struct floor_ctx {
    size_t ivlen; /* 12: ChaCha20-Poly1305, 16: ChaCha20; 0: the MAC */
    int enc, key_set;
} floor_ctx;

static void *floor_new(size_t ivlen)
{
    floor_ctx *c = OPENSSL_zalloc(sizeof(*c));

    if (c != NULL)
        c->ivlen = ivlen;
    return c;
}

static void *aead_new(void *provctx)
{
    (void)provctx;
    return floor_new(12);
}

static void *chacha_new(void *provctx)
{
    (void)provctx;
    return floor_new(16);
}

static void *mac_new(void *provctx)
{
    (void)provctx;
    return floor_new(0);
}

static void floor_free(void *c)
{
    OPENSSL_free(c);
}

static int set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    floor_ctx *c = vctx;
    size_t v;

    for (const OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAG) == 0
            && (c->ivlen != 12 || p->data_size == 0 || p->data_size > TAG_LEN || c->enc))
            return 0; /* the tag itself is not kept: open accepts any */
        if ((strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN) == 0
             && (!OSSL_PARAM_get_size_t(p, &v) || v != KEY_LEN))
            || (strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN) == 0
                && (!OSSL_PARAM_get_size_t(p, &v) || v != c->ivlen)))
            return 0;
        if (strcmp(p->key, OSSL_MAC_PARAM_KEY) == 0) {
            if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data_size != KEY_LEN)
                return 0;
            c->key_set = 1;
        }
    }
    return 1;
}

static int get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    floor_ctx *c = vctx;

    for (OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        int ok = 1;

        if (strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN) == 0)
            ok = OSSL_PARAM_set_size_t(p, c->ivlen);
        else if (strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN) == 0)
            ok = OSSL_PARAM_set_size_t(p, KEY_LEN);
        else if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAGLEN) == 0
                 || strcmp(p->key, OSSL_MAC_PARAM_SIZE) == 0)
            ok = OSSL_PARAM_set_size_t(p, TAG_LEN);
        else if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAG) == 0) {
            ok = c->enc && p->data_type == OSSL_PARAM_OCTET_STRING && p->data_size <= TAG_LEN;
            if (ok && p->data != NULL)
                memset(p->data, 0, p->data_size); /* the "tag" */
            p->return_size = p->data_size;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

static int get_params(OSSL_PARAM params[], size_t ivlen)
{
    OSSL_PARAM *p;

    return ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_MODE)) == NULL
            || OSSL_PARAM_set_uint(p, 0)) /* EVP_CIPH_STREAM_CIPHER, as chapoly */
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_KEYLEN)) == NULL
               || OSSL_PARAM_set_size_t(p, KEY_LEN))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IVLEN)) == NULL
               || OSSL_PARAM_set_size_t(p, ivlen))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_BLOCK_SIZE)) == NULL
               || OSSL_PARAM_set_size_t(p, 1))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD)) == NULL
               || OSSL_PARAM_set_int(p, ivlen == 12))
           && ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_CUSTOM_IV)) == NULL
               || OSSL_PARAM_set_int(p, 1))
           && ((p = OSSL_PARAM_locate(params, OSSL_MAC_PARAM_SIZE)) == NULL
               || OSSL_PARAM_set_size_t(p, TAG_LEN));
}

static int aead_get_params(OSSL_PARAM params[])
{
    return get_params(params, 12);
}

static int chacha_get_params(OSSL_PARAM params[])
{
    return get_params(params, 16);
}

static int mac_get_params(OSSL_PARAM params[])
{
    return get_params(params, 0);
}

static const OSSL_PARAM ctx_params[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
    OSSL_PARAM_size_t(OSSL_MAC_PARAM_SIZE, NULL),
    OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *ctx_params_list(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return ctx_params;
}

static int init(floor_ctx *c, int enc, const unsigned char *key, size_t keylen,
                const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])
{
    if ((key != NULL && keylen != KEY_LEN) || (iv != NULL && ivlen != c->ivlen))
        return 0;
    c->enc = enc;
    return set_ctx_params(c, params);
}

static int einit(void *c, const unsigned char *key, size_t keylen, const unsigned char *iv,
                 size_t ivlen, const OSSL_PARAM params[])
{
    return init(c, 1, key, keylen, iv, ivlen, params);
}

static int dinit(void *c, const unsigned char *key, size_t keylen, const unsigned char *iv,
                 size_t ivlen, const OSSL_PARAM params[])
{
    return init(c, 0, key, keylen, iv, ivlen, params);
}

/* Text is copied to the output; AAD (out == NULL) is dropped. */
static int update(void *c, unsigned char *out, size_t *outl, size_t outsize,
                  const unsigned char *in, size_t inl)
{
    (void)c;
    if (out != NULL && inl > 0) {
        if (outsize < inl || in == NULL)
            return 0;
        memmove(out, in, inl);
    }
    *outl = inl;
    return 1;
}

static int final(void *c, unsigned char *out, size_t *outl, size_t outsize)
{
    (void)c;
    (void)out;
    (void)outsize;
    *outl = 0;
    return 1;
}

#define FN(id, f) { OSSL_FUNC_##id, (void (*)(void))(f) }
#define CIPHER(name, kind)                                                                  \
    static const OSSL_DISPATCH name[] = {                                                   \
        FN(CIPHER_NEWCTX, kind##_new), FN(CIPHER_FREECTX, floor_free),                     \
        FN(CIPHER_ENCRYPT_INIT, einit), FN(CIPHER_DECRYPT_INIT, dinit),                    \
        FN(CIPHER_UPDATE, update), FN(CIPHER_FINAL, final),                                \
        FN(CIPHER_GET_PARAMS, kind##_get_params),                                          \
        FN(CIPHER_GET_CTX_PARAMS, get_ctx_params), FN(CIPHER_SET_CTX_PARAMS, set_ctx_params), \
        FN(CIPHER_GETTABLE_CTX_PARAMS, ctx_params_list),                                   \
        FN(CIPHER_SETTABLE_CTX_PARAMS, ctx_params_list), { 0, NULL }                       \
    }
CIPHER(aead_fns, aead);
CIPHER(chacha_fns, chacha);

/* The MAC: any 32-byte key, a tag of 16 zero bytes. */
static int mac_init(void *vctx, const unsigned char *key, size_t keylen, const OSSL_PARAM params[])
{
    floor_ctx *c = vctx;

    if (!set_ctx_params(c, params) || (key != NULL && keylen != KEY_LEN))
        return 0;
    c->key_set |= key != NULL;
    return c->key_set;
}

static int mac_update(void *c, const unsigned char *data, size_t datalen)
{
    (void)data;
    (void)datalen;
    return ((floor_ctx *)c)->key_set;
}

static int mac_final(void *c, unsigned char *out, size_t *outl, size_t outsize)
{
    if (!((floor_ctx *)c)->key_set || outsize < TAG_LEN)
        return 0;
    memset(out, 0, TAG_LEN);
    *outl = TAG_LEN;
    return 1;
}

static const OSSL_DISPATCH mac_fns[] = {
    FN(MAC_NEWCTX, mac_new), FN(MAC_FREECTX, floor_free), FN(MAC_INIT, mac_init),
    FN(MAC_UPDATE, mac_update), FN(MAC_FINAL, mac_final), FN(MAC_GET_PARAMS, mac_get_params),
    FN(MAC_GET_CTX_PARAMS, get_ctx_params), FN(MAC_SET_CTX_PARAMS, set_ctx_params),
    FN(MAC_GETTABLE_CTX_PARAMS, ctx_params_list), FN(MAC_SETTABLE_CTX_PARAMS, ctx_params_list),
    { 0, NULL }
};

static const OSSL_ALGORITHM ciphers[] = {
    { "ChaCha20-Poly1305", "provider=floor", aead_fns, "no cryptography: copies, zero tags" },
    { "ChaCha20", "provider=floor", chacha_fns, "no cryptography: copies" },
    { NULL, NULL, NULL, NULL }
};
static const OSSL_ALGORITHM macs[] = {
    { "POLY1305", "provider=floor", mac_fns, "no cryptography: zero tags" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *query(void *provctx, int id, int *no_cache)
{
    (void)provctx;
    *no_cache = 0;
    return id == OSSL_OP_CIPHER ? ciphers : id == OSSL_OP_MAC ? macs : NULL;
}

static const OSSL_DISPATCH provider_fns[] = { FN(PROVIDER_QUERY_OPERATION, query), { 0, NULL } };

int bench_floor_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                     const OSSL_DISPATCH **out, void **provctx)
{
    (void)handle;
    (void)in;
    *out = provider_fns;
    *provctx = (void *)provider_fns; /* unused, but not NULL */
    return 1;
}
