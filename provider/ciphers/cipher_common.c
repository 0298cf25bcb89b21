/* SPDX-License-Identifier: Apache-2.0 */
/* Algorithm-level (not context) parameters shared by the three ciphers. */
#include <openssl/core_names.h>
#include <openssl/params.h>
#include "prov.h"

static const OSSL_PARAM cipher_known_gettable[] = {
    OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
    OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
    OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL),
    OSSL_PARAM_END
};

const OSSL_PARAM *chapoly_cipher_gettable_params(void *provctx)
{
    (void)provctx;
    return cipher_known_gettable;
}

int chapoly_cipher_get_params(OSSL_PARAM params[], size_t keylen, size_t ivlen,
                              int aead)
{
    OSSL_PARAM *p;

    /* mode 0 = EVP_CIPH_STREAM_CIPHER; libssl relies on it not being GCM/CCM. */
    p = chapoly_param_locate(params, OSSL_CIPHER_PARAM_MODE);
    if (p != NULL && !chapoly_param_set_uint(p, 0))
        goto err;
    p = chapoly_param_locate(params, OSSL_CIPHER_PARAM_KEYLEN);
    if (p != NULL && !chapoly_param_set_size_t(p, keylen))
        goto err;
    p = chapoly_param_locate(params, OSSL_CIPHER_PARAM_IVLEN);
    if (p != NULL && !chapoly_param_set_size_t(p, ivlen))
        goto err;
    p = chapoly_param_locate(params, OSSL_CIPHER_PARAM_BLOCK_SIZE);
    if (p != NULL && !chapoly_param_set_size_t(p, 1))
        goto err;
    p = chapoly_param_locate(params, OSSL_CIPHER_PARAM_AEAD);
    if (p != NULL && !chapoly_param_set_int(p, aead))
        goto err;
    p = chapoly_param_locate(params, OSSL_CIPHER_PARAM_CUSTOM_IV);
    if (p != NULL && !chapoly_param_set_int(p, 1))
        goto err;
    p = chapoly_param_locate(params, OSSL_CIPHER_PARAM_CTS);
    if (p != NULL && !chapoly_param_set_int(p, 0))
        goto err;
    p = chapoly_param_locate(params, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK);
    if (p != NULL && !chapoly_param_set_int(p, 0))
        goto err;
    p = chapoly_param_locate(params, OSSL_CIPHER_PARAM_HAS_RAND_KEY);
    if (p != NULL && !chapoly_param_set_int(p, 0))
        goto err;
    return 1;
err:
    CHAPOLY_ERR(PROV_R_FAILED_TO_SET_PARAMETER, "algorithm parameter");
    return 0;
}
