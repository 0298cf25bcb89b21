/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Numeric OSSL_PARAM access that no caller-supplied parameter can crash.
 * libcrypto 3.0's OSSL_PARAM_get_* read through p->data for every numeric
 * type without checking it for NULL, and OSSL_PARAM_set_* write through it
 * for OSSL_PARAM_REAL (for the integer types NULL data is a size query).
 * Every numeric parameter the provider reads or answers goes through here.
 */
#include <openssl/params.h>
#include "prov.h"

int chapoly_param_get_size_t(const OSSL_PARAM *p, size_t *v)
{
    if (p->data == NULL) {
        CHAPOLY_ERR(PROV_R_FAILED_TO_GET_PARAMETER, "%s has NULL data", p->key);
        return 0;
    }
    return OSSL_PARAM_get_size_t(p, v);
}

/* NULL data in a REAL parameter: answer the size query the integer types get. */
static int real_size_query(OSSL_PARAM *p)
{
    if (p->data != NULL || p->data_type != OSSL_PARAM_REAL)
        return 0;
    p->return_size = sizeof(double);
    return 1;
}

int chapoly_param_set_size_t_(OSSL_PARAM *p, size_t v)
{
    return real_size_query(p) || OSSL_PARAM_set_size_t(p, v);
}

int chapoly_param_set_int(OSSL_PARAM *p, int v)
{
    return real_size_query(p) || OSSL_PARAM_set_int(p, v);
}

int chapoly_param_set_uint(OSSL_PARAM *p, unsigned int v)
{
    return real_size_query(p) || OSSL_PARAM_set_uint(p, v);
}

int chapoly_param_set_uint64(OSSL_PARAM *p, uint64_t v)
{
    return real_size_query(p) || OSSL_PARAM_set_uint64(p, v);
}
