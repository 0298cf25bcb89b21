/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EVP_MAC "POLY1305". A one-time key must not authenticate two messages, so
 * once anything was MACed the context accepts init only with a fresh key.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include "prov.h"
#include "poly1305_stream.h"

typedef struct poly_mac_ctx {
    const chapoly_kernels *k;
    chapoly_provctx *pc; /* statistics */
    int key_set;
    int updated; /* data or final since the last key */
    poly1305_state st;
} poly_mac_ctx;

static OSSL_FUNC_mac_newctx_fn poly_newctx;
static OSSL_FUNC_mac_dupctx_fn poly_dupctx;
static OSSL_FUNC_mac_freectx_fn poly_freectx;
static OSSL_FUNC_mac_init_fn poly_init;
static OSSL_FUNC_mac_update_fn poly_update;
static OSSL_FUNC_mac_final_fn poly_final;
static OSSL_FUNC_mac_get_params_fn poly_get_params;
static OSSL_FUNC_mac_get_ctx_params_fn poly_get_ctx_params;
static OSSL_FUNC_mac_set_ctx_params_fn poly_set_ctx_params;
static OSSL_FUNC_mac_gettable_params_fn poly_gettable_params;
static OSSL_FUNC_mac_gettable_ctx_params_fn poly_gettable_ctx_params;
static OSSL_FUNC_mac_settable_ctx_params_fn poly_settable_ctx_params;

static void *poly_newctx(void *provctx)
{
    poly_mac_ctx *c = chapoly_ctx_zalloc(sizeof(*c));

    if (c != NULL) {
        c->k = &((chapoly_provctx *)provctx)->mac;
        c->pc = provctx;
    }
    return c;
}

static void *poly_dupctx(void *vctx)
{
    return chapoly_ctx_dup(vctx, sizeof(poly_mac_ctx)); /* with the buffered partial block */
}

static void poly_freectx(void *vctx)
{
    chapoly_ctx_free(vctx, sizeof(poly_mac_ctx));
}

static int poly_setkey(poly_mac_ctx *c, const unsigned char *key, size_t keylen)
{
    if (keylen != POLY1305_KEY_BYTES) {
        CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "Poly1305 key must be 32 bytes, got %zu", keylen);
        return 0;
    }
    chapoly_poly1305_init(c->k, &c->st, key);
    c->key_set = 1;
    c->updated = 0;
    return 1;
}

static int poly_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    poly_mac_ctx *c = vctx;
    const OSSL_PARAM *p;

    if (params == NULL)
        return 1;
    p = chapoly_param_locate_const(params, OSSL_MAC_PARAM_KEY);
    if (p != NULL) {
        if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL) {
            CHAPOLY_ERR(PROV_R_INVALID_KEY, "key must be an octet string");
            return 0;
        }
        return poly_setkey(c, p->data, p->data_size);
    }
    return 1;
}

static int poly_init(void *vctx, const unsigned char *key, size_t keylen,
                     const OSSL_PARAM params[])
{
    poly_mac_ctx *c = vctx;
    int had_key_before = c->key_set && !c->updated;

    /* A key param rekeys too; only a bare init after use is refused. */
    if (!poly_set_ctx_params(c, params))
        return 0;
    if (key != NULL)
        return poly_setkey(c, key, keylen);
    if (params != NULL && chapoly_param_locate_const(params, OSSL_MAC_PARAM_KEY) != NULL)
        return 1;
    if (!had_key_before) {
        CHAPOLY_ERR(PROV_R_NO_KEY_SET, c->key_set
                    ? "a Poly1305 key authenticates one message; supply a new key"
                    : "initialise with a 32-byte key first");
        return 0;
    }
    return 1;
}

static int poly_update(void *vctx, const unsigned char *data, size_t datalen)
{
    poly_mac_ctx *c = vctx;

    if (!c->key_set) {
        CHAPOLY_ERR(PROV_R_NO_KEY_SET, "initialise with a 32-byte key first");
        return 0;
    }
    if (c->updated < 0) {
        CHAPOLY_ERR(PROV_R_NO_KEY_SET, "tag already produced; supply a new key");
        return 0;
    }
    c->updated = 1;
    if (datalen > 0)
        chapoly_poly1305_update(c->k, &c->st, data, datalen);
    return 1;
}

static int poly_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
    poly_mac_ctx *c = vctx;

    if (!c->key_set || c->updated < 0) {
        CHAPOLY_ERR(PROV_R_NO_KEY_SET, c->key_set ? "tag already produced; supply a new key"
                                                  : "initialise with a 32-byte key first");
        return 0;
    }
    if (outsize < POLY1305_TAG_BYTES) {
        CHAPOLY_ERR(PROV_R_OUTPUT_BUFFER_TOO_SMALL, "Poly1305 tag needs 16 bytes");
        return 0;
    }
    chapoly_poly1305_final(c->k, &c->st, out);
    chapoly_count(c->pc, CHAPOLY_CTR_POLY1305_MACS);
    c->updated = -1; /* the key is spent */
    *outl = POLY1305_TAG_BYTES;
    return 1;
}

static const OSSL_PARAM poly_known_gettable[] = {
    OSSL_PARAM_size_t(OSSL_MAC_PARAM_SIZE, NULL),
    OSSL_PARAM_END
};

static const OSSL_PARAM *poly_gettable_params(void *provctx)
{
    (void)provctx;
    return poly_known_gettable;
}

static const OSSL_PARAM *poly_gettable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return poly_known_gettable;
}

/*
 * EVP_MAC_final asks for the size before every tag (EVP_MAC_CTX_get_mac_size):
 * OSSL_PARAM_locate's strcmp cost about 60 instructions a MAC, so the key is
 * compared inline (and chapoly_param_set_size_t answers a size_t inline);
 * like OSSL_PARAM_locate, the first "size" is the one answered.
 */
static int poly_get_params(OSSL_PARAM params[])
{
    for (OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        if (!chapoly_key_is(p->key, OSSL_MAC_PARAM_SIZE))
            continue;
        if (!chapoly_param_set_size_t(p, POLY1305_TAG_BYTES)) {
            CHAPOLY_ERR(PROV_R_FAILED_TO_SET_PARAMETER, "size");
            return 0;
        }
        break;
    }
    return 1;
}

static int poly_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    (void)vctx;
    return poly_get_params(params);
}

static const OSSL_PARAM poly_known_settable_ctx[] = {
    OSSL_PARAM_octet_string(OSSL_MAC_PARAM_KEY, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *poly_settable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return poly_known_settable_ctx;
}

const OSSL_DISPATCH chapoly_poly1305_mac_functions[] = {
    { OSSL_FUNC_MAC_NEWCTX, (void (*)(void))poly_newctx },
    { OSSL_FUNC_MAC_DUPCTX, (void (*)(void))poly_dupctx },
    { OSSL_FUNC_MAC_FREECTX, (void (*)(void))poly_freectx },
    { OSSL_FUNC_MAC_INIT, (void (*)(void))poly_init },
    { OSSL_FUNC_MAC_UPDATE, (void (*)(void))poly_update },
    { OSSL_FUNC_MAC_FINAL, (void (*)(void))poly_final },
    { OSSL_FUNC_MAC_GET_PARAMS, (void (*)(void))poly_get_params },
    { OSSL_FUNC_MAC_GET_CTX_PARAMS, (void (*)(void))poly_get_ctx_params },
    { OSSL_FUNC_MAC_SET_CTX_PARAMS, (void (*)(void))poly_set_ctx_params },
    { OSSL_FUNC_MAC_GETTABLE_PARAMS, (void (*)(void))poly_gettable_params },
    { OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, (void (*)(void))poly_gettable_ctx_params },
    { OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, (void (*)(void))poly_settable_ctx_params },
    { 0, NULL }
};
