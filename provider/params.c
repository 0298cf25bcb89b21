/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OSSL_PARAM arrays, read and written here rather than by libcrypto's
 * OSSL_PARAM_* functions (the module links no libcrypto; the structure is
 * public and the same in every version). The conversions are the ones
 * libcrypto documents (OSSL_PARAM_int(3)): an integer of any size, signed or
 * unsigned, in native byte order, converted when the value fits; a REAL
 * (double) when the value is exactly representable; a set with NULL data
 * answers the size a value needs. Unlike libcrypto 3.0's helpers, NULL data
 * never crashes: libcrypto 3.0 reads through it for every numeric get and
 * writes through it for a REAL set; here a get with NULL data fails with an
 * error and a REAL set with NULL data is a size query.
 */
#include <string.h>
#include "prov.h"

OSSL_PARAM *chapoly_param_locate(OSSL_PARAM *p, const char *key)
{
    for (; p != NULL && p->key != NULL; p++)
        if (strcmp(p->key, key) == 0)
            return p;
    return NULL;
}

const OSSL_PARAM *chapoly_param_locate_const(const OSSL_PARAM *p, const char *key)
{
    return chapoly_param_locate((OSSL_PARAM *)p, key);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BYTE_AT(n, i) ((n) - 1 - (i)) /* index of the i-th least significant byte */
#else
#define BYTE_AT(n, i) (i)
#endif

/*
 * The integer in p's data as a sign and a 64-bit magnitude word: 0 if it
 * does not fit 64 bits (or p is not an integer).
 */
static int read_integer(const OSSL_PARAM *p, int *negative, uint64_t *v)
{
    const unsigned char *d = p->data;
    size_t n = p->data_size;
    int neg;
    uint64_t x = 0;

    if ((p->data_type != OSSL_PARAM_INTEGER && p->data_type != OSSL_PARAM_UNSIGNED_INTEGER) ||
        n == 0)
        return 0;
    neg = p->data_type == OSSL_PARAM_INTEGER && (d[BYTE_AT(n, n - 1)] & 0x80) != 0;
    for (size_t i = 8; i < n; i++) /* bytes above 64 bits: only the sign */
        if (d[BYTE_AT(n, i)] != (neg ? 0xff : 0))
            return 0;
    for (size_t i = 0; i < n && i < 8; i++)
        x |= (uint64_t)d[BYTE_AT(n, i)] << (8 * i);
    if (neg && n < 8)
        x |= ~(uint64_t)0 << (8 * n); /* sign-extend */
    if (neg && n >= 8 && !(x >> 63))
        return 0; /* the 64-bit word lost the sign */
    *negative = neg;
    *v = neg ? (uint64_t)0 - x : x; /* magnitude */
    return 1;
}

static int get_unsigned(const OSSL_PARAM *p, uint64_t *v, uint64_t max)
{
    int neg;
    uint64_t x;

    if (p->data_type == OSSL_PARAM_REAL) {
        double d;

        if (p->data_size != sizeof(double))
            return 0;
        memcpy(&d, p->data, sizeof(d));
        /* 18446744073709551616.0 is 2^64, the first double above UINT64_MAX */
        if (!(d >= 0 && d < 18446744073709551616.0) || d != (double)(uint64_t)d ||
            (uint64_t)d > max)
            return 0;
        *v = (uint64_t)d;
        return 1;
    }
    if (!read_integer(p, &neg, &x) || (neg && x != 0) || x > max)
        return 0;
    *v = x;
    return 1;
}

int chapoly_param_get_size_t(const OSSL_PARAM *p, size_t *v)
{
    uint64_t x;

    if (p->data == NULL) {
        CHAPOLY_ERR(PROV_R_FAILED_TO_GET_PARAMETER, "%s has NULL data", p->key);
        return 0;
    }
    if (!get_unsigned(p, &x, SIZE_MAX))
        return 0;
    *v = (size_t)x;
    return 1;
}

int chapoly_param_get_uint64(const OSSL_PARAM *p, uint64_t *v)
{
    if (p->data == NULL) {
        CHAPOLY_ERR(PROV_R_FAILED_TO_GET_PARAMETER, "%s has NULL data", p->key);
        return 0;
    }
    return get_unsigned(p, v, UINT64_MAX);
}

/*
 * Write an integer (neg: the value is -mag, else mag) whose natural size is
 * natural bytes, as libcrypto's OSSL_PARAM_set_* do: return_size is the size
 * written, or the size the value needs (NULL data: a size query; a failure).
 */
static int set_integer(OSSL_PARAM *p, int neg, uint64_t mag, size_t natural)
{
    unsigned char *d = p->data;
    size_t n = p->data_size;
    uint64_t x = neg ? (uint64_t)0 - mag : mag; /* two's complement */

    p->return_size = 0;
    if (p->data_type == OSSL_PARAM_REAL) {
        double r;

        p->return_size = sizeof(double);
        if (d == NULL)
            return 1;
        /* exactly representable: at most 53 significant bits */
        if (n != sizeof(double) || (mag >> 53) != 0)
            return 0;
        r = neg ? -(double)mag : (double)mag;
        memcpy(d, &r, sizeof(r));
        return 1;
    }
    if (p->data_type != OSSL_PARAM_INTEGER && p->data_type != OSSL_PARAM_UNSIGNED_INTEGER)
        return 0;
    if (neg && p->data_type == OSSL_PARAM_UNSIGNED_INTEGER)
        return 0;
    p->return_size = natural;
    if (d == NULL)
        return 1;
    if (n == 0)
        return 0;
    if (n < 8) {
        /* fits n bytes: unsigned below 2^(8n); signed in -2^(8n-1)..2^(8n-1)-1 */
        int is_signed = p->data_type == OSSL_PARAM_INTEGER;
        unsigned bits = (unsigned)(8 * n - (is_signed ? 1 : 0));

        if (neg ? mag > ((uint64_t)1 << bits) : (mag >> bits) != 0)
            return 0;
    } else if (p->data_type == OSSL_PARAM_INTEGER && !neg && (mag >> 63) != 0 && n == 8) {
        return 0; /* above INT64_MAX */
    }
    for (size_t i = 0; i < n; i++)
        d[BYTE_AT(n, i)] = i < 8 ? (unsigned char)(x >> (8 * i)) : (neg ? 0xff : 0);
    p->return_size = n;
    return 1;
}

int chapoly_param_set_size_t_(OSSL_PARAM *p, size_t v)
{
    return set_integer(p, 0, v, sizeof(size_t));
}

int chapoly_param_set_int(OSSL_PARAM *p, int v)
{
    return set_integer(p, v < 0, v < 0 ? (uint64_t)0 - (uint64_t)(int64_t)v : (uint64_t)v,
                       sizeof(int));
}

int chapoly_param_set_uint(OSSL_PARAM *p, unsigned int v)
{
    return set_integer(p, 0, v, sizeof(unsigned int));
}

int chapoly_param_set_uint64(OSSL_PARAM *p, uint64_t v)
{
    return set_integer(p, 0, v, sizeof(uint64_t));
}

int chapoly_param_set_utf8_ptr(OSSL_PARAM *p, const char *v)
{
    p->return_size = 0;
    if (p->data_type != OSSL_PARAM_UTF8_PTR)
        return 0;
    p->return_size = v != NULL ? strlen(v) : 0;
    if (p->data != NULL)
        memcpy(p->data, &v, sizeof(v));
    return 1;
}

int chapoly_param_set_octet_string(OSSL_PARAM *p, const void *v, size_t len)
{
    p->return_size = 0;
    if (p->data_type != OSSL_PARAM_OCTET_STRING)
        return 0;
    p->return_size = len;
    if (p->data == NULL)
        return 1;
    if (p->data_size < len)
        return 0;
    memcpy(p->data, v, len);
    return 1;
}
