/*
 * Entry point, provider parameters, algorithm tables and teardown.
 * OSSL_provider_init is the module's only exported symbol.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include "prov.h"

#ifndef CHAPOLY_VERSION
#define CHAPOLY_VERSION "0"
#endif

static const OSSL_ALGORITHM chapoly_ciphers[] = {
    { "ChaCha20-Poly1305", CHAPOLY_PROPS, chapoly_chacha20_poly1305_functions,
      "ChaCha20-Poly1305 AEAD (RFC 8439)" },
    { "XChaCha20-Poly1305", CHAPOLY_PROPS, chapoly_xchacha20_poly1305_functions,
      "XChaCha20-Poly1305 AEAD (draft-irtf-cfrg-xchacha-03)" },
    { "ChaCha20", CHAPOLY_PROPS, chapoly_chacha20_functions,
      "ChaCha20 stream cipher, OpenSSL 16-byte IV layout" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM chapoly_macs[] = {
    { "POLY1305", CHAPOLY_PROPS, chapoly_poly1305_mac_functions,
      "Poly1305 one-time authenticator" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *chapoly_query(void *provctx, int operation_id,
                                           int *no_cache)
{
    (void)provctx;
    *no_cache = 0;
    switch (operation_id) {
    case OSSL_OP_CIPHER:
        return chapoly_ciphers;
    case OSSL_OP_MAC:
        return chapoly_macs;
    }
    return NULL;
}

#define PARAM_KERNEL "chapoly-kernel"
#define PARAM_AEAD_MESSAGES "chapoly-aead-messages"
#define PARAM_TLS_RECORDS "chapoly-tls-records"

static const OSSL_PARAM chapoly_param_types[] = {
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_KERNEL, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_AEAD_MESSAGES, OSSL_PARAM_UNSIGNED_INTEGER, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_TLS_RECORDS, OSSL_PARAM_UNSIGNED_INTEGER, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *chapoly_gettable_params(void *provctx)
{
    (void)provctx;
    return chapoly_param_types;
}

static int chapoly_get_params(void *provctx, OSSL_PARAM params[])
{
    chapoly_provctx *pc = provctx;
    OSSL_PARAM *p;

    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, "chapoly: ChaCha20-Poly1305 provider"))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, CHAPOLY_VERSION))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, "chapoly " CHAPOLY_VERSION
                                                 " built against " OPENSSL_VERSION_TEXT))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS);
    if (p != NULL && !OSSL_PARAM_set_int(p, 1))
        return 0;
    p = OSSL_PARAM_locate(params, PARAM_KERNEL);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, pc->k->name))
        return 0;
    p = OSSL_PARAM_locate(params, PARAM_AEAD_MESSAGES);
    if (p != NULL &&
        !OSSL_PARAM_set_uint64(p, __atomic_load_n(&pc->aead_messages, __ATOMIC_RELAXED)))
        return 0;
    p = OSSL_PARAM_locate(params, PARAM_TLS_RECORDS);
    if (p != NULL &&
        !OSSL_PARAM_set_uint64(p, __atomic_load_n(&pc->tls_records, __ATOMIC_RELAXED)))
        return 0;
    return 1;
}

static void chapoly_teardown(void *provctx)
{
    chapoly_provctx *pc = provctx;
    const char *path = getenv("CHAPOLY_STATS_FILE");

    if (pc == NULL)
        return;
    if (path != NULL && *path != '\0') {
        FILE *f = fopen(path, "a");
        if (f != NULL) {
            fprintf(f, "chapoly-aead-messages=%llu chapoly-tls-records=%llu\n",
                    (unsigned long long)__atomic_load_n(&pc->aead_messages, __ATOMIC_RELAXED),
                    (unsigned long long)__atomic_load_n(&pc->tls_records, __ATOMIC_RELAXED));
            fclose(f);
        }
    }
    OPENSSL_free(pc);
}

static const OSSL_DISPATCH chapoly_dispatch[] = {
    { OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))chapoly_teardown },
    { OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))chapoly_gettable_params },
    { OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))chapoly_get_params },
    { OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))chapoly_query },
    { 0, NULL }
};

static int truthy(const char *s)
{
    return s != NULL && (strcmp(s, "1") == 0 || strcasecmp(s, "yes") == 0 ||
                         strcasecmp(s, "true") == 0 || strcasecmp(s, "on") == 0);
}

__attribute__((visibility("default")))
int OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                       const OSSL_DISPATCH **out, void **provctx)
{
    OSSL_FUNC_core_get_params_fn *core_get_params = NULL;
    const char *cfg_stats = NULL, *cfg_kernel = NULL, *warning = NULL;
    chapoly_provctx *pc;

    for (; in->function_id != 0; in++) {
        if (in->function_id == OSSL_FUNC_CORE_GET_PARAMS)
            core_get_params = OSSL_FUNC_core_get_params(in);
    }
    if (core_get_params != NULL) {
        /* Keys of our openssl.cnf section arrive as utf8 pointers. */
        OSSL_PARAM cp[] = {
            OSSL_PARAM_utf8_ptr("stats", (char **)&cfg_stats, 0),
            OSSL_PARAM_utf8_ptr("kernel", (char **)&cfg_kernel, 0),
            OSSL_PARAM_END
        };
        if (!core_get_params(handle, cp))
            cfg_stats = cfg_kernel = NULL;
    }

    pc = OPENSSL_zalloc(sizeof(*pc));
    if (pc == NULL)
        return 0;
    pc->handle = handle;
    pc->k = chapoly_kernels_select(cfg_kernel, &warning);
    if (warning != NULL) {
        const char *asked = (cfg_kernel && *cfg_kernel) ? cfg_kernel : getenv("CHAPOLY_KERNEL");
        fprintf(stderr, "chapoly: kernel \"%s\": %s (%s)\n", asked ? asked : "",
                warning, pc->k->name);
    }
    pc->stats = truthy(cfg_stats) || truthy(getenv("CHAPOLY_STATS"));
    *provctx = pc;
    *out = chapoly_dispatch;
    return 1;
}
