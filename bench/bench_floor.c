/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_floor: a provider that does no cryptography at all, for measuring
 * what libcrypto's EVP layer costs by itself ("the floor"). bench_evp sweep
 * times it with exactly the EVP calls it uses for chapoly and the default
 * provider, so chapoly ns - floor ns is chapoly's own cost above libcrypto.
 *
 * It offers what chapoly's ChaCha20-Poly1305, ChaCha20 and POLY1305 offer
 * (newctx, freectx, dupctx, encrypt/decrypt init, update, final, cipher,
 * get/set params and their gettable/settable lists) with the same checks of
 * key and IV lengths, but: an update copies its input to its output (AAD
 * updates do nothing), a seal's tag is 16 zero bytes, an open accepts any
 * tag, and the MAC's tag is 16 zero bytes.
 *
 * It must never stand in for a real cipher, so it cannot be loaded by
 * accident: it is never installed, its algorithms carry "provider=floor",
 * and the shared object has no OSSL_provider_init. The only way in is
 * bench_floor_provider_init, which bench_evp registers with
 * OSSL_PROVIDER_add_builtin under the name "bench-floor" in its own library
 * context; OSSL_PROVIDER_load on this file (from openssl.cnf, say) fails.
 */
#include <string.h>
#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#define FLOOR_PROPS "provider=floor"
#define KEYLEN 32
#define TAGLEN 16

OSSL_provider_init_fn bench_floor_provider_init;

typedef struct floor_ctx {
    size_t ivlen;   /* 12 (ChaCha20-Poly1305) or 16 (ChaCha20) */
    int aead;
    int enc;
    size_t taglen;
} floor_ctx;

/* ---- contexts ---- */

static void *floor_newctx(size_t ivlen, int aead)
{
    floor_ctx *c = OPENSSL_zalloc(sizeof(*c));

    if (c != NULL) {
        c->ivlen = ivlen;
        c->aead = aead;
        c->taglen = TAGLEN;
    }
    return c;
}

static void *floor_aead_newctx(void *provctx)
{
    (void)provctx;
    return floor_newctx(12, 1);
}

static void *floor_chacha_newctx(void *provctx)
{
    (void)provctx;
    return floor_newctx(16, 0);
}

static void floor_freectx(void *vctx)
{
    OPENSSL_free(vctx);
}

static void *floor_dupctx(void *vctx)
{
    return OPENSSL_memdup(vctx, sizeof(floor_ctx));
}

/* ---- parameters ---- */

static int floor_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    floor_ctx *c = vctx;

    for (const OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        size_t v;

        if (strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAG) == 0 && c->aead) {
            if (p->data_size == 0 || p->data_size > TAGLEN || (p->data != NULL && c->enc))
                return 0;
            c->taglen = p->data_size; /* the tag itself is not kept: open accepts any */
        } else if (strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN) == 0) {
            if (!OSSL_PARAM_get_size_t(p, &v) || v != KEYLEN)
                return 0;
        } else if (strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN) == 0) {
            if (!OSSL_PARAM_get_size_t(p, &v) || v != c->ivlen)
                return 0;
        }
    }
    return 1;
}

static int floor_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    floor_ctx *c = vctx;

    for (OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        int ok = 1;

        if (strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN) == 0) {
            ok = OSSL_PARAM_set_size_t(p, c->ivlen);
        } else if (strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN) == 0) {
            ok = OSSL_PARAM_set_size_t(p, KEYLEN);
        } else if (c->aead && strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAGLEN) == 0) {
            ok = OSSL_PARAM_set_size_t(p, c->taglen);
        } else if (c->aead && strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAG) == 0) {
            if (!c->enc || p->data_type != OSSL_PARAM_OCTET_STRING || p->data_size == 0
                || p->data_size > TAGLEN)
                return 0;
            if (p->data != NULL)
                memset(p->data, 0, p->data_size); /* the "tag" */
            p->return_size = p->data_size;
        } else if (c->aead && strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD) == 0) {
            ok = OSSL_PARAM_set_size_t(p, TAGLEN);
        }
        if (!ok)
            return 0;
    }
    return 1;
}

static int floor_get_params(OSSL_PARAM params[], size_t ivlen, int aead)
{
    OSSL_PARAM *p;

    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_MODE)) != NULL
        && !OSSL_PARAM_set_uint(p, 0)) /* EVP_CIPH_STREAM_CIPHER, as chapoly */
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_KEYLEN)) != NULL
        && !OSSL_PARAM_set_size_t(p, KEYLEN))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_IVLEN)) != NULL
        && !OSSL_PARAM_set_size_t(p, ivlen))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_BLOCK_SIZE)) != NULL
        && !OSSL_PARAM_set_size_t(p, 1))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_AEAD)) != NULL
        && !OSSL_PARAM_set_int(p, aead))
        return 0;
    if ((p = OSSL_PARAM_locate(params, OSSL_CIPHER_PARAM_CUSTOM_IV)) != NULL
        && !OSSL_PARAM_set_int(p, 1))
        return 0;
    return 1;
}

static int floor_aead_get_params(OSSL_PARAM params[])
{
    return floor_get_params(params, 12, 1);
}

static int floor_chacha_get_params(OSSL_PARAM params[])
{
    return floor_get_params(params, 16, 0);
}

static const OSSL_PARAM floor_gettable[] = {
    OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
    OSSL_PARAM_END
};

static const OSSL_PARAM floor_ctx_gettable[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL),
    OSSL_PARAM_END
};

static const OSSL_PARAM floor_ctx_settable[] = {
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *floor_gettable_params(void *provctx)
{
    (void)provctx;
    return floor_gettable;
}

static const OSSL_PARAM *floor_gettable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return floor_ctx_gettable;
}

static const OSSL_PARAM *floor_settable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return floor_ctx_settable;
}

/* ---- the "cipher" ---- */

static int floor_init(floor_ctx *c, int enc, const unsigned char *key, size_t keylen,
                      const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])
{
    if ((key != NULL && keylen != KEYLEN) || (iv != NULL && ivlen != c->ivlen))
        return 0;
    c->enc = enc;
    return floor_set_ctx_params(c, params);
}

static int floor_einit(void *vctx, const unsigned char *key, size_t keylen,
                       const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])
{
    return floor_init(vctx, 1, key, keylen, iv, ivlen, params);
}

static int floor_dinit(void *vctx, const unsigned char *key, size_t keylen,
                       const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])
{
    return floor_init(vctx, 0, key, keylen, iv, ivlen, params);
}

/* Text is copied to the output; AAD (out == NULL) is counted and dropped. */
static int floor_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                        const unsigned char *in, size_t inl)
{
    (void)vctx;
    if (out != NULL && inl > 0) {
        if (outsize < inl || in == NULL)
            return 0;
        memmove(out, in, inl);
    }
    *outl = inl;
    return 1;
}

static int floor_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    (void)vctx;
    (void)out;
    (void)outsize;
    *outl = 0;
    return 1;
}

static int floor_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
                        const unsigned char *in, size_t inl)
{
    if (in == NULL)
        return floor_final(vctx, out, outl, outsize);
    return floor_update(vctx, out, outl, outsize, in, inl);
}

#define FLOOR_CIPHER_DISPATCH(name, kind)                                                  \
    static const OSSL_DISPATCH name[] = {                                                  \
        { OSSL_FUNC_CIPHER_NEWCTX, (void (*)(void))floor_##kind##_newctx },                \
        { OSSL_FUNC_CIPHER_FREECTX, (void (*)(void))floor_freectx },                       \
        { OSSL_FUNC_CIPHER_DUPCTX, (void (*)(void))floor_dupctx },                         \
        { OSSL_FUNC_CIPHER_ENCRYPT_INIT, (void (*)(void))floor_einit },                    \
        { OSSL_FUNC_CIPHER_DECRYPT_INIT, (void (*)(void))floor_dinit },                    \
        { OSSL_FUNC_CIPHER_UPDATE, (void (*)(void))floor_update },                         \
        { OSSL_FUNC_CIPHER_FINAL, (void (*)(void))floor_final },                           \
        { OSSL_FUNC_CIPHER_CIPHER, (void (*)(void))floor_cipher },                         \
        { OSSL_FUNC_CIPHER_GET_PARAMS, (void (*)(void))floor_##kind##_get_params },        \
        { OSSL_FUNC_CIPHER_GETTABLE_PARAMS, (void (*)(void))floor_gettable_params },       \
        { OSSL_FUNC_CIPHER_GET_CTX_PARAMS, (void (*)(void))floor_get_ctx_params },         \
        { OSSL_FUNC_CIPHER_SET_CTX_PARAMS, (void (*)(void))floor_set_ctx_params },         \
        { OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, (void (*)(void))floor_gettable_ctx_params }, \
        { OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, (void (*)(void))floor_settable_ctx_params }, \
        { 0, NULL }                                                                        \
    }

FLOOR_CIPHER_DISPATCH(floor_aead_functions, aead);
FLOOR_CIPHER_DISPATCH(floor_chacha_functions, chacha);

/* ---- the "MAC": any key of 32 bytes, a tag of 16 zero bytes ---- */

typedef struct floor_mac {
    int key_set;
} floor_mac;

static void *floor_mac_newctx(void *provctx)
{
    (void)provctx;
    return OPENSSL_zalloc(sizeof(floor_mac));
}

static void *floor_mac_dupctx(void *vctx)
{
    return OPENSSL_memdup(vctx, sizeof(floor_mac));
}

static int floor_mac_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    const OSSL_PARAM *p = params ? OSSL_PARAM_locate_const(params, OSSL_MAC_PARAM_KEY) : NULL;

    if (p != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data_size != KEYLEN)
            return 0;
        ((floor_mac *)vctx)->key_set = 1;
    }
    return 1;
}

static int floor_mac_init(void *vctx, const unsigned char *key, size_t keylen,
                          const OSSL_PARAM params[])
{
    floor_mac *m = vctx;

    if (!floor_mac_set_ctx_params(m, params) || (key != NULL && keylen != KEYLEN))
        return 0;
    if (key != NULL)
        m->key_set = 1;
    return m->key_set;
}

static int floor_mac_update(void *vctx, const unsigned char *data, size_t datalen)
{
    (void)data;
    (void)datalen;
    return ((floor_mac *)vctx)->key_set;
}

static int floor_mac_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    floor_mac *m = vctx;

    if (!m->key_set || outsize < TAGLEN)
        return 0;
    memset(out, 0, TAGLEN);
    *outl = TAGLEN;
    return 1;
}

static const OSSL_PARAM floor_mac_gettable[] = {
    OSSL_PARAM_size_t(OSSL_MAC_PARAM_SIZE, NULL),
    OSSL_PARAM_END
};

static const OSSL_PARAM floor_mac_settable[] = {
    OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, NULL, 0),
    OSSL_PARAM_END
};

static int floor_mac_get_params(OSSL_PARAM params[])
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, OSSL_MAC_PARAM_SIZE);

    return p == NULL || OSSL_PARAM_set_size_t(p, TAGLEN);
}

static int floor_mac_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    (void)vctx;
    return floor_mac_get_params(params);
}

static const OSSL_PARAM *floor_mac_gettable_params(void *provctx)
{
    (void)provctx;
    return floor_mac_gettable;
}

static const OSSL_PARAM *floor_mac_gettable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return floor_mac_gettable;
}

static const OSSL_PARAM *floor_mac_settable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return floor_mac_settable;
}

static const OSSL_DISPATCH floor_mac_functions[] = {
    { OSSL_FUNC_MAC_NEWCTX, (void (*)(void))floor_mac_newctx },
    { OSSL_FUNC_MAC_DUPCTX, (void (*)(void))floor_mac_dupctx },
    { OSSL_FUNC_MAC_FREECTX, (void (*)(void))floor_freectx },
    { OSSL_FUNC_MAC_INIT, (void (*)(void))floor_mac_init },
    { OSSL_FUNC_MAC_UPDATE, (void (*)(void))floor_mac_update },
    { OSSL_FUNC_MAC_FINAL, (void (*)(void))floor_mac_final },
    { OSSL_FUNC_MAC_GET_PARAMS, (void (*)(void))floor_mac_get_params },
    { OSSL_FUNC_MAC_GET_CTX_PARAMS, (void (*)(void))floor_mac_get_ctx_params },
    { OSSL_FUNC_MAC_SET_CTX_PARAMS, (void (*)(void))floor_mac_set_ctx_params },
    { OSSL_FUNC_MAC_GETTABLE_PARAMS, (void (*)(void))floor_mac_gettable_params },
    { OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, (void (*)(void))floor_mac_gettable_ctx_params },
    { OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, (void (*)(void))floor_mac_settable_ctx_params },
    { 0, NULL }
};

/* ---- the provider ---- */

static const OSSL_ALGORITHM floor_ciphers[] = {
    { "ChaCha20-Poly1305", FLOOR_PROPS, floor_aead_functions,
      "bench floor: no cryptography (copies, zero tag)" },
    { "ChaCha20", FLOOR_PROPS, floor_chacha_functions, "bench floor: no cryptography (copies)" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM floor_macs[] = {
    { "POLY1305", FLOOR_PROPS, floor_mac_functions, "bench floor: no cryptography (zero tag)" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *floor_query(void *provctx, int operation_id, int *no_cache)
{
    (void)provctx;
    *no_cache = 0;
    return operation_id == OSSL_OP_CIPHER ? floor_ciphers
           : operation_id == OSSL_OP_MAC  ? floor_macs
                                          : NULL;
}

static const OSSL_DISPATCH floor_dispatch[] = {
    { OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))floor_query },
    { 0, NULL }
};

int bench_floor_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                              const OSSL_DISPATCH **out, void **provctx)
{
    (void)handle;
    (void)in;
    *out = floor_dispatch;
    *provctx = (void *)floor_dispatch; /* unused, but not NULL */
    return 1;
}
