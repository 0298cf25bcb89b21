/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provider-wide definitions shared by the glue files. Nothing here knows an
 * ISA: the kernels are reached through the table in the provider context.
 */
#ifndef CHAPOLY_PROV_H
#define CHAPOLY_PROV_H

#include <stdint.h>
#include <string.h>
#include <openssl/core.h>
#include <openssl/crypto.h>
#include <openssl/core_dispatch.h>
#include <openssl/err.h>
#include <openssl/proverr.h>
#include "kernels.h"

#define CHAPOLY_PROV_NAME "chapoly"
#define CHAPOLY_PROPS "provider=chapoly"

/* One per OSSL_LIB_CTX that loads the module; read-only after init except the counters. */
typedef struct chapoly_provctx {
    const OSSL_CORE_HANDLE *handle;
    const chapoly_kernels *k; /* chosen once at init */
    int stats;                /* counters are touched only when set */
    int serve_all;            /* ChaCha20, ChaCha20-Poly1305, POLY1305 offered too (prov_main.c) */
    uint64_t aead_messages;   /* atomic adds only */
    uint64_t tls_records;
    char buildinfo[384];      /* version, OpenSSL headers, kernel level and its features,
                                 what is served */
} chapoly_provctx;

static inline void chapoly_count(chapoly_provctx *pc, uint64_t *counter)
{
    if (pc->stats)
        __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/*
 * Contexts embed a poly1305_state, which the SIMD kernels access with aligned
 * 64-byte loads; OpenSSL's allocator guarantees only 16. The base pointer is
 * kept just below the aligned block.
 */
static inline void *chapoly_ctx_place(unsigned char *base)
{
    uintptr_t p;

    if (base == NULL)
        return NULL;
    p = ((uintptr_t)base + sizeof(void *) + 63) & ~(uintptr_t)63;
    ((void **)p)[-1] = base;
    return (void *)p;
}

/* Not zeroed: for contexts with big buffers that are written before they are read. */
static inline void *chapoly_ctx_alloc(size_t size)
{
    return chapoly_ctx_place(OPENSSL_malloc(size + 64 + sizeof(void *)));
}

/* The caller has wiped every byte of the context that ever held a secret. */
static inline void chapoly_ctx_release(void *ctx)
{
    if (ctx != NULL)
        OPENSSL_free(((void **)ctx)[-1]);
}

static inline void *chapoly_ctx_zalloc(size_t size)
{
    return chapoly_ctx_place(OPENSSL_zalloc(size + 64 + sizeof(void *)));
}

static inline void chapoly_ctx_free(void *ctx, size_t size)
{
    if (ctx == NULL)
        return;
    /* keys, subkeys, Poly1305 key and powers, tags; libc's memset (through a
     * volatile pointer) wipes a 1.6 KiB MAC context far faster than OPENSSL_cleanse */
    chapoly_wipe(ctx, size);
    OPENSSL_free(((void **)ctx)[-1]);
}

static inline void *chapoly_ctx_dup(const void *ctx, size_t size)
{
    void *d = chapoly_ctx_alloc(size);

    if (d != NULL)
        memcpy(d, ctx, size);
    return d;
}

/* Raise an OpenSSL error with a reason code and a readable detail. */
#define CHAPOLY_ERR(reason, ...) ERR_raise_data(ERR_LIB_PROV, (reason), __VA_ARGS__)

/* Algorithm dispatch tables (provider/ciphers, provider/macs). */
extern const OSSL_DISPATCH chapoly_chacha20_poly1305_functions[];
extern const OSSL_DISPATCH chapoly_xchacha20_poly1305_functions[];
extern const OSSL_DISPATCH chapoly_chacha20_functions[];
extern const OSSL_DISPATCH chapoly_poly1305_mac_functions[];

/* Numeric parameters with NULL data never reach libcrypto's helpers (params.c). */
int chapoly_param_get_size_t(const OSSL_PARAM *p, size_t *v);
int chapoly_param_set_size_t(OSSL_PARAM *p, size_t v);
int chapoly_param_set_int(OSSL_PARAM *p, int v);
int chapoly_param_set_uint(OSSL_PARAM *p, unsigned int v);
int chapoly_param_set_uint64(OSSL_PARAM *p, uint64_t v);

/*
 * Shared answer to a cipher's algorithm get_params (the constants the
 * default provider reports; EVP caches them at fetch time).
 */
int chapoly_cipher_get_params(OSSL_PARAM params[], size_t keylen, size_t ivlen,
                              int aead);
const OSSL_PARAM *chapoly_cipher_gettable_params(void *provctx);

#endif
