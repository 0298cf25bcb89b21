/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Parameters of ChaCha20-Poly1305 and XChaCha20-Poly1305: the algorithm's
 * (constants), and the context's: lengths, the tag (read after a final
 * that sealed, set before one that opens), the TLS 1.2 record parameters
 * (aead_tls.c) and the pipeline's tags (aead_pipeline.c). Unknown keys are
 * ignored, as the default provider does.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include "aead_state.h"

int aead_chacha20_poly1305_get_params(OSSL_PARAM params[])
{
    return chapoly_cipher_get_params(params, CHACHA20_KEY_BYTES, CHACHA20_NONCE_BYTES, 1);
}

int aead_xchacha20_poly1305_get_params(OSSL_PARAM params[])
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

const OSSL_PARAM *aead_chacha20_poly1305_gettable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return chacha20_poly1305_known_gettable_ctx;
}

const OSSL_PARAM *aead_xchacha20_poly1305_gettable_ctx_params(void *cctx, void *provctx)
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

const OSSL_PARAM *aead_chacha20_poly1305_settable_ctx_params(void *cctx, void *provctx)
{
    (void)cctx;
    (void)provctx;
    return chacha20_poly1305_known_settable_ctx;
}

const OSSL_PARAM *aead_xchacha20_poly1305_settable_ctx_params(void *cctx, void *provctx)
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
int aead_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
    aead_ctx *c = vctx;

    for (OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        int ok = 1;

        switch (p->key[0]) {
        case 'i':
            if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_IVLEN))
                ok = chapoly_param_set_size_t(p, c->ivlen);
            break;
        case 'k':
            if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_KEYLEN))
                ok = chapoly_param_set_size_t(p, CHACHA20_KEY_BYTES);
            break;
        case 'p':
            if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG) &&
                !chapoly_pipeline_get_tags(c, p))
                return 0;
            break;
        case 't':
            if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_AEAD_TAGLEN)) {
                ok = chapoly_param_set_size_t(p, c->tag_len);
            } else if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_AEAD_TAG)) {
                if (p->data_type != OSSL_PARAM_OCTET_STRING) {
                    CHAPOLY_ERR(PROV_R_FAILED_TO_GET_PARAMETER, "tag must be an octet string");
                    return 0;
                }
                if (!c->enc || c->state != ST_SEALED) {
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
                if (p->data != NULL) /* NULL data: a size query; 1..16 bytes, inline */
                    chapoly_copy_bytes(p->data, c->tag, p->data_size);
                p->return_size = p->data_size;
            } else if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD) &&
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

/*
 * A size parameter equal to want (1), else 0 (chapoly_param_get_size_t
 * raised an error if it could not read it). Out of line: its local, whose
 * address is taken, would put a stack guard on every call of
 * aead_set_ctx_params (the expected tag of every open).
 */
__attribute__((noinline)) static int aead_param_size_is(const OSSL_PARAM *p, size_t want)
{
    size_t v;

    return chapoly_param_get_size_t(p, &v) && v == want;
}

int aead_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
    aead_ctx *c = vctx;

    for (const OSSL_PARAM *p = params; p != NULL && p->key != NULL; p++) {
        switch (p->key[0]) {
        case 'k':
            if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_KEYLEN)) {
                if (!aead_param_size_is(p, CHACHA20_KEY_BYTES)) {
                    if (p->data != NULL) /* else it said why */
                        CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "only 32-byte keys");
                    return 0;
                }
            }
            break;
        case 'i':
            if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_IVLEN)) {
                if (!aead_param_size_is(p, c->ivlen)) {
                    if (p->data != NULL) /* else it said why */
                        CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "only %zu-byte IVs", c->ivlen);
                    return 0;
                }
            }
            break;
        case 't':
            if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_AEAD_TAG)) {
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
                    chapoly_copy_bytes(c->tag, p->data, p->data_size); /* 1..16 bytes */
                    c->tag_set = 1; /* this message's, or the next one's (aead_state.c) */
                }
                c->tag_len = p->data_size;
            } else if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD)) {
                if (!aead_set_tls_aad(c, p))
                    return 0;
            } else if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED)) {
                if (!aead_set_tls_fixed_iv(c, p))
                    return 0;
            }
            break;
        case 'p':
            if (chapoly_key_is(p->key, OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG) &&
                !chapoly_pipeline_set_tags(c, p))
                return 0;
            break;
#ifdef CHAPOLY_TEST_HOOKS
        case 'c':
            if (chapoly_key_is(p->key, "chapoly-test-text-len")) {
                uint64_t t;
                if (p->data == NULL || !chapoly_param_get_uint64(p, &t) || t > CHAPOLY_AEAD_MAX_TEXT)
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
