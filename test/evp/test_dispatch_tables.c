/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every dispatch table the module hands to libcrypto, reached the way
 * libcrypto reaches them: dlopen the built chapoly.so, call its
 * OSSL_provider_init with a minimal core, walk the provider's own dispatch,
 * then query_operation's OSSL_ALGORITHM arrays and each implementation's
 * OSSL_DISPATCH (the tables are not exported, and must not be).
 *
 * Why a test: libcrypto keeps the first entry of an id that appears twice and
 * ignores the later ones, ignores ids it does not know, and refuses an
 * algorithm only when a whole group is missing (provider-cipher(7): newctx
 * and freectx, plus encrypt_init/decrypt_init/update/final or cipher;
 * provider-mac(7): newctx, freectx, init, update, final). A slip in a table
 * therefore shows up, if at all, as a feature quietly missing at run time.
 *
 * The rules here are chapoly's contract, a superset of libcrypto's minimum:
 * each table lists every id its operation defines in the OpenSSL 3.0 headers
 * the module is built against (dupctx for EVP_CIPHER_CTX_copy / EVP_MAC_CTX_dup,
 * cipher for EVP_Cipher, each get/set with its gettable/settable list), each
 * exactly once, with a non-NULL function, and nothing else.
 *
 * Usage: test_dispatch_tables [module.so ...]; default $CHAPOLY_MODULE.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include "test_common.h"

/* A table this long has lost its { 0, NULL } terminator. */
#define MAX_ENTRIES 64

typedef struct {
    int id;
    const char *name;
} fn_id;

#define ID(x) { x, #x }

static const fn_id provider_required[] = {
    ID(OSSL_FUNC_PROVIDER_TEARDOWN),
    ID(OSSL_FUNC_PROVIDER_GETTABLE_PARAMS),
    ID(OSSL_FUNC_PROVIDER_GET_PARAMS),
    ID(OSSL_FUNC_PROVIDER_QUERY_OPERATION),
};
/* Allowed in the provider's table, not required. */
static const fn_id provider_optional[] = {
    ID(OSSL_FUNC_PROVIDER_UNQUERY_OPERATION),
    ID(OSSL_FUNC_PROVIDER_GET_REASON_STRINGS),
    ID(OSSL_FUNC_PROVIDER_GET_CAPABILITIES),
    ID(OSSL_FUNC_PROVIDER_SELF_TEST),
};

static const fn_id cipher_required[] = {
    ID(OSSL_FUNC_CIPHER_NEWCTX),
    ID(OSSL_FUNC_CIPHER_FREECTX),
    ID(OSSL_FUNC_CIPHER_DUPCTX),
    ID(OSSL_FUNC_CIPHER_ENCRYPT_INIT),
    ID(OSSL_FUNC_CIPHER_DECRYPT_INIT),
    ID(OSSL_FUNC_CIPHER_UPDATE),
    ID(OSSL_FUNC_CIPHER_FINAL),
    ID(OSSL_FUNC_CIPHER_CIPHER),
    ID(OSSL_FUNC_CIPHER_GET_PARAMS),
    ID(OSSL_FUNC_CIPHER_GETTABLE_PARAMS),
    ID(OSSL_FUNC_CIPHER_GET_CTX_PARAMS),
    ID(OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS),
    ID(OSSL_FUNC_CIPHER_SET_CTX_PARAMS),
    ID(OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS),
};

/*
 * The OpenSSL 3.5 pipeline functions (ABI constants, defined here when the
 * 3.0 headers lack them): allowed, offered by the AEAD tables, ignored by a
 * 3.0 core.
 */
#ifndef OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT
#define OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT 15
#define OSSL_FUNC_CIPHER_PIPELINE_DECRYPT_INIT 16
#define OSSL_FUNC_CIPHER_PIPELINE_UPDATE 17
#define OSSL_FUNC_CIPHER_PIPELINE_FINAL 18
#endif
static const fn_id cipher_optional[] = {
    ID(OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT),
    ID(OSSL_FUNC_CIPHER_PIPELINE_DECRYPT_INIT),
    ID(OSSL_FUNC_CIPHER_PIPELINE_UPDATE),
    ID(OSSL_FUNC_CIPHER_PIPELINE_FINAL),
};

static const fn_id mac_required[] = {
    ID(OSSL_FUNC_MAC_NEWCTX),
    ID(OSSL_FUNC_MAC_FREECTX),
    ID(OSSL_FUNC_MAC_DUPCTX),
    ID(OSSL_FUNC_MAC_INIT),
    ID(OSSL_FUNC_MAC_UPDATE),
    ID(OSSL_FUNC_MAC_FINAL),
    ID(OSSL_FUNC_MAC_GET_PARAMS),
    ID(OSSL_FUNC_MAC_GETTABLE_PARAMS),
    ID(OSSL_FUNC_MAC_GET_CTX_PARAMS),
    ID(OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS),
    ID(OSSL_FUNC_MAC_SET_CTX_PARAMS),
    ID(OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

typedef struct {
    const char *what; /* "cipher", "MAC", "provider" */
    const fn_id *required;
    size_t nrequired;
    const fn_id *optional;
    size_t noptional;
} table_rules;

static const table_rules provider_rules = { "provider", provider_required,
                                            N(provider_required), provider_optional,
                                            N(provider_optional) };
static const table_rules cipher_rules = { "cipher", cipher_required, N(cipher_required),
                                          cipher_optional, N(cipher_optional) };
static const table_rules mac_rules = { "MAC", mac_required, N(mac_required), NULL, 0 };

/* What check_table found, as a bit set. */
enum {
    P_DUPLICATE = 1,     /* an id twice */
    P_MISSING = 2,       /* a required id absent */
    P_UNKNOWN = 4,       /* an id the operation does not define */
    P_NULL_FUNCTION = 8, /* an id with no function */
    P_UNTERMINATED = 16, /* no { 0, NULL } within MAX_ENTRIES */
};

static const char *id_name(const table_rules *r, int id)
{
    for (size_t i = 0; i < r->nrequired; i++)
        if (r->required[i].id == id)
            return r->required[i].name;
    for (size_t i = 0; i < r->noptional; i++)
        if (r->optional[i].id == id)
            return r->optional[i].name;
    return NULL;
}

/*
 * Checks one OSSL_DISPATCH table against its rules; returns the P_* bits
 * found and, unless quiet, prints one line per problem naming table 'label'.
 */
static int check_table(const char *label, const OSSL_DISPATCH *d, const table_rules *r,
                       int quiet)
{
    int found = 0;
    size_t n = 0;

    if (d == NULL) {
        if (!quiet)
            fprintf(stderr, "%s: no dispatch table\n", label);
        return P_MISSING;
    }
    while (n < MAX_ENTRIES && d[n].function_id != 0)
        n++;
    if (n == MAX_ENTRIES) {
        if (!quiet)
            fprintf(stderr, "%s: no terminator within %d entries\n", label, MAX_ENTRIES);
        return P_UNTERMINATED;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = id_name(r, d[i].function_id);

        if (name == NULL) {
            found |= P_UNKNOWN;
            if (!quiet)
                fprintf(stderr, "%s: id %d (entry %zu) is not a %s function id\n", label,
                        d[i].function_id, i, r->what);
            name = "?";
        }
        if (d[i].function == NULL) {
            found |= P_NULL_FUNCTION;
            if (!quiet)
                fprintf(stderr, "%s: %s (entry %zu) has no function\n", label, name, i);
        }
        for (size_t j = 0; j < i; j++) {
            if (d[j].function_id == d[i].function_id) {
                found |= P_DUPLICATE;
                if (!quiet)
                    fprintf(stderr, "%s: %s twice (entries %zu and %zu; libcrypto uses "
                                    "the first, ignores the second)\n", label, name, j, i);
                break;
            }
        }
    }
    for (size_t k = 0; k < r->nrequired; k++) {
        size_t i = 0;

        while (i < n && d[i].function_id != r->required[k].id)
            i++;
        if (i == n) {
            found |= P_MISSING;
            if (!quiet)
                fprintf(stderr, "%s: %s missing\n", label, r->required[k].name);
        }
    }
    return found;
}

/* ---- the checker itself, on tables made wrong on purpose ---- */

static void dummy_fn(void)
{
}

/* A complete cipher table into t (MAX_ENTRIES + 1 slots); returns its length. */
static size_t good_cipher_table(OSSL_DISPATCH *t)
{
    size_t n = 0;

    for (; n < N(cipher_required); n++) {
        t[n].function_id = cipher_required[n].id;
        t[n].function = dummy_fn;
    }
    t[n].function_id = 0;
    t[n].function = NULL;
    return n;
}

static void test_checker(void)
{
    OSSL_DISPATCH t[MAX_ENTRIES + 1];
    size_t n;

    good_cipher_table(t);
    T_OK(check_table("good", t, &cipher_rules, 1) == 0, "checker: complete table refused");

    n = good_cipher_table(t);
    t[n].function_id = OSSL_FUNC_CIPHER_FINAL; /* FINAL twice, as in the slip STYLE.md cites */
    t[n].function = dummy_fn;
    t[n + 1].function_id = 0;
    t[n + 1].function = NULL;
    T_OK(check_table("dup", t, &cipher_rules, 1) == P_DUPLICATE,
         "checker: duplicated FINAL not reported alone");

    n = good_cipher_table(t);
    t[2] = t[n - 1]; /* DUPCTX replaced by the last entry (SETTABLE_CTX_PARAMS) */
    t[n - 1].function_id = 0;
    t[n - 1].function = NULL;
    T_OK(check_table("missing", t, &cipher_rules, 1) == P_MISSING,
         "checker: missing DUPCTX not reported alone");

    n = good_cipher_table(t);
    t[n].function_id = 4242;
    t[n].function = dummy_fn;
    t[n + 1].function_id = 0;
    t[n + 1].function = NULL;
    T_OK(check_table("unknown", t, &cipher_rules, 1) == P_UNKNOWN,
         "checker: unknown id not reported alone");

    good_cipher_table(t);
    t[3].function = NULL;
    T_OK(check_table("null", t, &cipher_rules, 1) == P_NULL_FUNCTION,
         "checker: NULL function not reported alone");

    for (n = 0; n <= MAX_ENTRIES; n++) {
        t[n].function_id = OSSL_FUNC_CIPHER_UPDATE;
        t[n].function = dummy_fn;
    }
    T_OK(check_table("unterminated", t, &cipher_rules, 1) == P_UNTERMINATED,
         "checker: unterminated table not reported");

    /* A MAC table is not a cipher table: MAC ids 1..12 are cipher ids too, but 13, 14 miss. */
    good_cipher_table(t);
    T_OK(check_table("cipher as MAC", t, &mac_rules, 1) == P_UNKNOWN,
         "checker: cipher ids 13, 14 accepted in a MAC table");
}

/* ---- the module ---- */

/*
 * The configuration: only `serve = all`, so that every table is offered even
 * where the best kernel level is portable (test_serve checks that policy).
 */
static int core_get_params(const OSSL_CORE_HANDLE *handle, OSSL_PARAM params[])
{
    OSSL_PARAM *p = OSSL_PARAM_locate(params, "serve");

    (void)handle;
    return p == NULL || OSSL_PARAM_set_utf8_ptr(p, "all");
}

/*
 * The core's services chapoly takes from "in" (it links no libcrypto), here
 * from this test's libcrypto: memory, and errors raised straight into its
 * queue (a NULL handle has no error library of its own).
 */
static void core_new_error(const OSSL_CORE_HANDLE *handle)
{
    (void)handle;
    ERR_new();
}

static void core_set_error_debug(const OSSL_CORE_HANDLE *handle, const char *file, int line,
                                 const char *func)
{
    (void)handle;
    ERR_set_debug(file, line, func);
}

static void core_vset_error(const OSSL_CORE_HANDLE *handle, uint32_t reason, const char *fmt,
                            va_list args)
{
    (void)handle;
    ERR_vset_error(ERR_GET_LIB(reason), ERR_GET_REASON(reason), fmt, args);
}

static const OSSL_DISPATCH minimal_core[] = {
    { OSSL_FUNC_CORE_GET_PARAMS, (void (*)(void))core_get_params },
    { OSSL_FUNC_CORE_NEW_ERROR, (void (*)(void))core_new_error },
    { OSSL_FUNC_CORE_SET_ERROR_DEBUG, (void (*)(void))core_set_error_debug },
    { OSSL_FUNC_CORE_VSET_ERROR, (void (*)(void))core_vset_error },
    { OSSL_FUNC_CRYPTO_MALLOC, (void (*)(void))CRYPTO_malloc },
    { OSSL_FUNC_CRYPTO_ZALLOC, (void (*)(void))CRYPTO_zalloc },
    { OSSL_FUNC_CRYPTO_FREE, (void (*)(void))CRYPTO_free },
    { 0, NULL }
};

/* Without memory and error functions chapoly cannot run: its init refuses. */
static const OSSL_DISPATCH params_only_core[] = {
    { OSSL_FUNC_CORE_GET_PARAMS, (void (*)(void))core_get_params },
    { 0, NULL }
};

static void (*find_fn(const OSSL_DISPATCH *d, int id))(void)
{
    for (size_t n = 0; d != NULL && n < MAX_ENTRIES && d[n].function_id != 0; n++)
        if (d[n].function_id == id)
            return d[n].function;
    return NULL;
}

/* The algorithms each operation must offer, each once (aliases included). */
static const char *const cipher_names[] = { "ChaCha20-Poly1305", "XChaCha20-Poly1305",
                                            "ChaCha20" };
static const char *const mac_names[] = { "POLY1305" };

/* Is name one of the colon-separated names of a->algorithm_names? */
static int has_name(const OSSL_ALGORITHM *a, const char *name)
{
    size_t len = strlen(name);

    for (const char *p = a->algorithm_names; p != NULL && *p != '\0';) {
        const char *end = strchr(p, ':');
        size_t l = end != NULL ? (size_t)(end - p) : strlen(p);

        if (l == len && strncasecmp(p, name, len) == 0)
            return 1;
        p = end != NULL ? end + 1 : NULL;
    }
    return 0;
}

/* Smoke calls through the table: the slots hold functions of the right kind. */
static void exercise_cipher(const char *label, const OSSL_DISPATCH *d, void *provctx)
{
    OSSL_FUNC_cipher_newctx_fn *newctx = (OSSL_FUNC_cipher_newctx_fn *)find_fn(d, OSSL_FUNC_CIPHER_NEWCTX);
    OSSL_FUNC_cipher_dupctx_fn *dupctx = (OSSL_FUNC_cipher_dupctx_fn *)find_fn(d, OSSL_FUNC_CIPHER_DUPCTX);
    OSSL_FUNC_cipher_freectx_fn *freectx = (OSSL_FUNC_cipher_freectx_fn *)find_fn(d, OSSL_FUNC_CIPHER_FREECTX);
    OSSL_FUNC_cipher_gettable_params_fn *gettable =
        (OSSL_FUNC_cipher_gettable_params_fn *)find_fn(d, OSSL_FUNC_CIPHER_GETTABLE_PARAMS);
    OSSL_FUNC_cipher_gettable_ctx_params_fn *gettable_ctx =
        (OSSL_FUNC_cipher_gettable_ctx_params_fn *)find_fn(d, OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS);
    OSSL_FUNC_cipher_settable_ctx_params_fn *settable_ctx =
        (OSSL_FUNC_cipher_settable_ctx_params_fn *)find_fn(d, OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS);
    OSSL_FUNC_cipher_get_params_fn *get_params =
        (OSSL_FUNC_cipher_get_params_fn *)find_fn(d, OSSL_FUNC_CIPHER_GET_PARAMS);
    void *ctx, *dup;
    size_t keylen = 0;
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_KEYLEN, &keylen),
                        OSSL_PARAM_construct_end() };

    if (newctx == NULL || dupctx == NULL || freectx == NULL || gettable == NULL ||
        gettable_ctx == NULL || settable_ctx == NULL || get_params == NULL)
        return; /* reported by check_table */
    ctx = newctx(provctx);
    T_OK(ctx != NULL, "%s: newctx returned NULL", label);
    dup = ctx != NULL ? dupctx(ctx) : NULL;
    T_OK(dup != NULL, "%s: dupctx returned NULL", label);
    T_OK(gettable(provctx) != NULL, "%s: gettable_params returned NULL", label);
    T_OK(gettable_ctx(ctx, provctx) != NULL, "%s: gettable_ctx_params returned NULL", label);
    T_OK(settable_ctx(ctx, provctx) != NULL, "%s: settable_ctx_params returned NULL", label);
    T_OK(get_params(p) == 1 && keylen == 32, "%s: get_params keylen %zu, want 32", label,
         keylen);
    freectx(dup);
    freectx(ctx);
}

static void exercise_mac(const char *label, const OSSL_DISPATCH *d, void *provctx)
{
    OSSL_FUNC_mac_newctx_fn *newctx = (OSSL_FUNC_mac_newctx_fn *)find_fn(d, OSSL_FUNC_MAC_NEWCTX);
    OSSL_FUNC_mac_dupctx_fn *dupctx = (OSSL_FUNC_mac_dupctx_fn *)find_fn(d, OSSL_FUNC_MAC_DUPCTX);
    OSSL_FUNC_mac_freectx_fn *freectx = (OSSL_FUNC_mac_freectx_fn *)find_fn(d, OSSL_FUNC_MAC_FREECTX);
    OSSL_FUNC_mac_gettable_params_fn *gettable =
        (OSSL_FUNC_mac_gettable_params_fn *)find_fn(d, OSSL_FUNC_MAC_GETTABLE_PARAMS);
    OSSL_FUNC_mac_gettable_ctx_params_fn *gettable_ctx =
        (OSSL_FUNC_mac_gettable_ctx_params_fn *)find_fn(d, OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS);
    OSSL_FUNC_mac_settable_ctx_params_fn *settable_ctx =
        (OSSL_FUNC_mac_settable_ctx_params_fn *)find_fn(d, OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS);
    void *ctx, *dup;

    if (newctx == NULL || dupctx == NULL || freectx == NULL || gettable == NULL ||
        gettable_ctx == NULL || settable_ctx == NULL)
        return; /* reported by check_table */
    ctx = newctx(provctx);
    T_OK(ctx != NULL, "%s: newctx returned NULL", label);
    dup = ctx != NULL ? dupctx(ctx) : NULL;
    T_OK(dup != NULL, "%s: dupctx returned NULL", label);
    T_OK(gettable(provctx) != NULL, "%s: gettable_params returned NULL", label);
    T_OK(gettable_ctx(ctx, provctx) != NULL, "%s: gettable_ctx_params returned NULL", label);
    T_OK(settable_ctx(ctx, provctx) != NULL, "%s: settable_ctx_params returned NULL", label);
    freectx(dup);
    freectx(ctx);
}

/* One operation's OSSL_ALGORITHM array: exactly the expected names, each table valid. */
static void check_algorithms(const char *module, const char *op, const OSSL_ALGORITHM *algs,
                             const char *const *names, size_t nnames, const table_rules *r,
                             void *provctx)
{
    size_t n = 0;
    int seen[8] = { 0 };

    T_OK(algs != NULL, "%s: query_operation(%s) returned NULL", module, op);
    if (algs == NULL)
        return;
    for (; n < MAX_ENTRIES && algs[n].algorithm_names != NULL; n++) {
        const OSSL_ALGORITHM *a = &algs[n];
        char label[256];
        int known = 0;

        snprintf(label, sizeof(label), "%s: %s %s", module, op, a->algorithm_names);
        T_OK(a->property_definition != NULL &&
                 strcmp(a->property_definition, "provider=chapoly") == 0,
             "%s: property \"%s\", want \"provider=chapoly\"", label,
             a->property_definition != NULL ? a->property_definition : "(null)");
        T_OK(a->algorithm_description != NULL && *a->algorithm_description != '\0',
             "%s: no description", label);
        for (size_t k = 0; k < nnames; k++) {
            if (has_name(a, names[k])) {
                known = 1;
                T_OK(seen[k]++ == 0, "%s: %s offered twice", label, names[k]);
            }
        }
        T_OK(known, "%s: not an algorithm this test knows (add it to the test)", label);
        T_OK(check_table(label, a->implementation, r, 0) == 0,
             "%s: dispatch table breaks the rules above", label);
        if (r == &cipher_rules)
            exercise_cipher(label, a->implementation, provctx);
        else
            exercise_mac(label, a->implementation, provctx);
    }
    T_OK(n < MAX_ENTRIES, "%s: %s algorithm array has no terminator", module, op);
    for (size_t k = 0; k < nnames; k++)
        T_OK(seen[k] == 1, "%s: %s %s offered %d times, want once", module, op, names[k],
             seen[k]);
}

static void check_module(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    OSSL_provider_init_fn *init;
    const OSSL_DISPATCH *out = NULL;
    void *provctx = NULL;
    OSSL_FUNC_provider_query_operation_fn *query;
    OSSL_FUNC_provider_gettable_params_fn *gettable;
    OSSL_FUNC_provider_get_params_fn *get_params;
    OSSL_FUNC_provider_teardown_fn *teardown;

    T_OK(h != NULL, "dlopen %s: %s", path, dlerror());
    if (h == NULL)
        return;
    init = (OSSL_provider_init_fn *)dlsym(h, "OSSL_provider_init");
    T_OK(init != NULL, "%s: OSSL_provider_init not exported", path);
    /* The tables are reached through OSSL_provider_init only. */
    T_OK(dlsym(h, "chapoly_chacha20_poly1305_functions") == NULL,
         "%s: an algorithm table is exported", path);
    if (init != NULL)
        T_OK(init(NULL, params_only_core, &out, &provctx) == 0,
             "%s: OSSL_provider_init without the core's memory and error functions "
             "succeeded", path);
    if (init == NULL || !init(NULL, minimal_core, &out, &provctx)) {
        T_OK(0, "%s: OSSL_provider_init failed", path);
        dlclose(h);
        return;
    }
    T_OK(check_table(path, out, &provider_rules, 0) == 0,
         "%s: provider dispatch table breaks the rules above", path);

    query = (OSSL_FUNC_provider_query_operation_fn *)find_fn(out, OSSL_FUNC_PROVIDER_QUERY_OPERATION);
    gettable = (OSSL_FUNC_provider_gettable_params_fn *)find_fn(out, OSSL_FUNC_PROVIDER_GETTABLE_PARAMS);
    get_params = (OSSL_FUNC_provider_get_params_fn *)find_fn(out, OSSL_FUNC_PROVIDER_GET_PARAMS);
    teardown = (OSSL_FUNC_provider_teardown_fn *)find_fn(out, OSSL_FUNC_PROVIDER_TEARDOWN);

    if (gettable != NULL)
        T_OK(gettable(provctx) != NULL, "%s: provider gettable_params returned NULL", path);
    if (get_params != NULL) {
        char *name = NULL;
        OSSL_PARAM p[2] = { OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_NAME, &name, 0),
                            OSSL_PARAM_construct_end() };

        T_OK(get_params(provctx, p) == 1 && name != NULL && strncmp(name, "chapoly", 7) == 0,
             "%s: provider get_params name \"%s\"", path, name != NULL ? name : "(null)");
    }
    if (query != NULL) {
        for (int op = 1; op <= OSSL_OP__HIGHEST; op++) {
            int no_cache = -1;
            const OSSL_ALGORITHM *algs = query(provctx, op, &no_cache);

            T_OK(no_cache == 0 || no_cache == 1, "%s: query_operation(%d) left no_cache %d",
                 path, op, no_cache);
            if (op == OSSL_OP_CIPHER)
                check_algorithms(path, "cipher", algs, cipher_names, N(cipher_names),
                                 &cipher_rules, provctx);
            else if (op == OSSL_OP_MAC)
                check_algorithms(path, "MAC", algs, mac_names, N(mac_names), &mac_rules,
                                 provctx);
            else
                T_OK(algs == NULL, "%s: query_operation(%d) offers algorithms this test "
                                   "does not check", path, op);
        }
    }
    if (teardown != NULL)
        teardown(provctx);
    dlclose(h);
}

int main(int argc, char **argv)
{
    const char *env = getenv("CHAPOLY_MODULE");

    test_checker();
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            check_module(argv[i]);
    } else if (env != NULL && *env != '\0') {
        check_module(env);
    } else {
        fprintf(stderr, "usage: %s module.so ... (or set CHAPOLY_MODULE)\n", argv[0]);
        return 2;
    }
    return t_finish("test_dispatch_tables");
}
