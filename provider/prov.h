/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provider-wide definitions shared by the glue files. Nothing here knows an
 * ISA: the kernels are reached through the table in the provider context.
 */
#ifndef CHAPOLY_PROV_H
#define CHAPOLY_PROV_H

#include <stdint.h>
#include <string.h>
/*
 * OpenSSL's headers give the types, names and numbers; no function of
 * libcrypto is called (the module links none): the core's dispatch table
 * serves memory, cleanse and errors (prov_core.c), and OSSL_PARAM arrays are
 * read and written by params.c.
 */
#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/proverr.h>
#include "kernels.h"

#define CHAPOLY_PROV_NAME "chapoly"
#define CHAPOLY_PROPS "provider=chapoly"

/*
 * The statistics counters, each a provider parameter (OSSL_PARAM_UNSIGNED_INTEGER)
 * and a field of the statistics file's line, in this order (prov_stats.c):
 * AEAD messages (both AEADs, sealed or opened: streaming finals, TLS 1.2
 * records and pipeline messages), of which seals and opens (failed opens
 * included), TLS 1.2 records, ChaCha20 update calls with data and their
 * bytes, POLY1305 MACs finalised, pipeline batches finalised.
 */
#define CHAPOLY_COUNTERS(X)                                                    \
    X(AEAD_MESSAGES, "chapoly-aead-messages")                                  \
    X(AEAD_SEALS, "chapoly-aead-seals")                                        \
    X(AEAD_OPENS, "chapoly-aead-opens")                                        \
    X(TLS_RECORDS, "chapoly-tls-records")                                      \
    X(CHACHA20_CALLS, "chapoly-chacha20-calls")                                \
    X(CHACHA20_BYTES, "chapoly-chacha20-bytes")                                \
    X(POLY1305_MACS, "chapoly-poly1305-macs")                                  \
    X(PIPELINE_BATCHES, "chapoly-pipeline-batches")

#define CHAPOLY_CTR_ENUM_(id, name) CHAPOLY_CTR_##id,
enum { CHAPOLY_COUNTERS(CHAPOLY_CTR_ENUM_) CHAPOLY_NCOUNTERS };
#undef CHAPOLY_CTR_ENUM_

/*
 * The keys a chapoly config section may hold: libcrypto's four (which the
 * core handles; a "N." prefix on them is ignored), then chapoly's own
 * (prov_config.c reads them). One list: the key names, their indexes and
 * the "known keys" of the unknown-key message all come from it.
 */
#define CHAPOLY_CONFIG_KEYS(X)                                                 \
    X(ACTIVATE, "activate")                                                    \
    X(MODULE, "module")                                                        \
    X(IDENTITY, "identity")                                                    \
    X(SOFT_LOAD, "soft_load")                                                  \
    X(STATS, "stats")                                                          \
    X(STATS_FILE, "stats_file")                                                \
    X(KERNEL, "kernel")                                                        \
    X(SERVE, "serve")                                                          \
    X(PATHS, "paths")

#define CHAPOLY_CFG_ENUM_(id, name) CHAPOLY_CFG_##id,
enum { CHAPOLY_CONFIG_KEYS(CHAPOLY_CFG_ENUM_) CHAPOLY_NCONFIG };
#undef CHAPOLY_CFG_ENUM_

/* One per OSSL_LIB_CTX that loads the module; read-only after init except the counters. */
typedef struct chapoly_provctx {
    const OSSL_CORE_HANDLE *handle;
    struct chapoly_provctx *core_next; /* the live instances (prov_core.c) */
    /*
     * The running libcrypto's version, major * 100 + minor (300, 305, 306,
     * 400), from the core's "openssl-version": chapoly answers as that
     * version's default provider does (docs/behaviour.md, "OpenSSL versions").
     */
    unsigned openssl;
    const chapoly_kernels *k; /* chosen once at init: &table */
    chapoly_kernels table;    /* the level, this CPU's profile, the forced paths */
    chapoly_kernels mac;      /* table as the POLY1305 MAC runs it (chapoly_kernels_for_mac) */
    char paths[CHAPOLY_DESCRIBE_MAX]; /* chapoly_kernels_describe(k): the path choices in use */
    int stats;                /* counters are touched only when set */
    unsigned serve;           /* CHAPOLY_SERVE_*: the algorithms offered (prov_config.c) */
    char *stats_file;         /* config key stats_file (with any %p), or NULL */
    struct chapoly_provctx *stats_next; /* instances counting in this process (prov_stats.c) */
    char buildinfo[CHAPOLY_DESCRIBE_MAX + 448]; /* version, OpenSSL headers, kernel level and its features,
                                 what is served */
    /* atomic adds only; after buildinfo, so that counting threads do not
     * share a cache line with k and stats, which every call reads */
    uint64_t ctr[CHAPOLY_NCOUNTERS];
} chapoly_provctx;

/*
 * A parameter's key equal to a name, for the parameters every message
 * passes (the tag, the IV length): inlined against the literal, where a
 * strcmp call cost about 30 instructions each, three per sealed message.
 * name must be a string literal (the "" makes any other argument an
 * error): its length is a constant, so the loop unrolls into a compare
 * and a branch per character. key is read no further than its first
 * difference from name (its terminator included).
 */
#define chapoly_key_is(key, name) chapoly_key_is_((key), "" name, sizeof(name) - 1)
static inline int chapoly_key_is_(const char *key, const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (key[i] != name[i])
            return 0;
    return key[len] == '\0';
}

/*
 * Counting: with statistics off (the default) one predictable branch and no
 * write; with them on, relaxed atomic adds.
 */
static inline void chapoly_add_(chapoly_provctx *pc, int i, uint64_t n)
{
    __atomic_fetch_add(&pc->ctr[i], n, __ATOMIC_RELAXED);
}

static inline void chapoly_count(chapoly_provctx *pc, int i)
{
    if (pc->stats)
        chapoly_add_(pc, i, 1);
}

/* ChaCha20: one update call of n bytes. */
static inline void chapoly_count_chacha20(chapoly_provctx *pc, size_t n)
{
    if (pc->stats) {
        chapoly_add_(pc, CHAPOLY_CTR_CHACHA20_CALLS, 1);
        chapoly_add_(pc, CHAPOLY_CTR_CHACHA20_BYTES, n);
    }
}

/* n AEAD messages sealed (enc) or opened, and +1 on also (a counter, or -1 for none). */
static inline void chapoly_count_aead(chapoly_provctx *pc, int enc, uint64_t n, int also)
{
    if (pc->stats) {
        chapoly_add_(pc, CHAPOLY_CTR_AEAD_MESSAGES, n);
        chapoly_add_(pc, enc ? CHAPOLY_CTR_AEAD_SEALS : CHAPOLY_CTR_AEAD_OPENS, n);
        if (also >= 0)
            chapoly_add_(pc, also, 1);
    }
}

/*
 * Contexts embed a poly1305_state, which the SIMD kernels access with aligned
 * 64-byte loads; OpenSSL's allocator guarantees only 16. The base pointer is
 * kept just below the aligned block.
 */
/* ---- the core's services (prov_core.c) ---- */

/*
 * Takes the core's functions from OSSL_provider_init's "in" (the first init
 * in the process; later ones check they are the same libcrypto's). 0: the
 * table lacks memory or error functions, or comes from another libcrypto.
 */
int chapoly_core_take(const OSSL_DISPATCH *in);
/* pc is live (its handle may carry errors) until chapoly_core_detach. */
void chapoly_core_attach(chapoly_provctx *pc);
void chapoly_core_detach(chapoly_provctx *pc);
void *chapoly_core_malloc(size_t n, const char *file, int line);
void *chapoly_core_zalloc(size_t n, const char *file, int line);
void chapoly_core_free(void *p, const char *file, int line);
char *chapoly_core_strdup(const char *s, const char *file, int line);
#define chapoly_malloc(n) chapoly_core_malloc((n), __FILE__, __LINE__)
#define chapoly_zalloc(n) chapoly_core_zalloc((n), __FILE__, __LINE__)
#define chapoly_free(p) chapoly_core_free((p), __FILE__, __LINE__)
#define chapoly_strdup(s) chapoly_core_strdup((s), __FILE__, __LINE__)
/* libcrypto's OPENSSL_cleanse through the core (chapoly_wipe if it has none). */
void chapoly_cleanse(void *p, size_t n);
/* One error in the application's queue: chapoly's library, reason, detail. */
void chapoly_raise(const char *file, int line, const char *func, int reason,
                   const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* An error mark (0: the core has no mark functions, so none), and back to it. */
int chapoly_err_set_mark(void);
void chapoly_err_pop_to_mark(void);
/* A whole text file through the core's BIO, NUL-terminated (chapoly_free), or NULL. */
char *chapoly_core_read_file(const char *path, size_t max);
const OSSL_ITEM *chapoly_get_reason_strings(void *provctx);

/*
 * The reasons chapoly raises: the PROV_R_* codes, with OpenSSL's texts for
 * them, handed to the core as chapoly's reason strings.
 */
#define CHAPOLY_REASONS(X)                                                     \
    X(PROV_R_CIPHER_OPERATION_FAILED, "cipher operation failed")               \
    X(PROV_R_FAILED_TO_GET_PARAMETER, "failed to get parameter")               \
    X(PROV_R_FAILED_TO_SET_PARAMETER, "failed to set parameter")               \
    X(PROV_R_INVALID_DATA, "invalid data")                                     \
    X(PROV_R_INVALID_INPUT_LENGTH, "invalid input length")                     \
    X(PROV_R_INVALID_IV_LENGTH, "invalid iv length")                           \
    X(PROV_R_INVALID_KEY, "invalid key")                                       \
    X(PROV_R_INVALID_KEY_LENGTH, "invalid key length")                         \
    X(PROV_R_INVALID_TAG_LENGTH, "invalid tag length")                         \
    X(PROV_R_LENGTH_TOO_LARGE, "length too large")                             \
    X(PROV_R_NOT_SUPPORTED, "not supported")                                   \
    X(PROV_R_NO_KEY_SET, "no key set")                                         \
    X(PROV_R_OUTPUT_BUFFER_TOO_SMALL, "output buffer too small")               \
    X(PROV_R_TAG_NOT_NEEDED, "tag not needed")                                 \
    X(PROV_R_TAG_NOT_SET, "tag not set")

/* The running libcrypto is at least major.minor. */
static inline int chapoly_openssl_at_least(const chapoly_provctx *pc, unsigned major,
                                           unsigned minor)
{
    return pc->openssl >= major * 100 + minor;
}

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
    return chapoly_ctx_place(chapoly_malloc(size + 64 + sizeof(void *)));
}

/* The caller has wiped every byte of the context that ever held a secret. */
static inline void chapoly_ctx_release(void *ctx)
{
    if (ctx != NULL)
        chapoly_free(((void **)ctx)[-1]);
}

static inline void *chapoly_ctx_zalloc(size_t size)
{
    return chapoly_ctx_place(chapoly_zalloc(size + 64 + sizeof(void *)));
}

static inline void chapoly_ctx_free(void *ctx, size_t size)
{
    if (ctx == NULL)
        return;
    /* keys, subkeys, Poly1305 key and powers, tags; libc's memset (through a
     * volatile pointer) wipes a 1.6 KiB MAC context far faster than libcrypto's cleanse */
    chapoly_wipe(ctx, size);
    chapoly_free(((void **)ctx)[-1]);
}

static inline void *chapoly_ctx_dup(const void *ctx, size_t size)
{
    void *d = chapoly_ctx_alloc(size);

    if (d != NULL)
        memcpy(d, ctx, size);
    return d;
}

/* ---- configuration (prov_config.c) ---- */

/* This instance's config key values as the core gave them (NULL: not set). */
typedef struct chapoly_config {
    const char *value[CHAPOLY_NCONFIG];
    const char *openssl_version; /* the core's "openssl-version", e.g. "3.6.5" */
} chapoly_config;

/*
 * Asks the core (through in's core_get_params) for the config keys and the
 * running libcrypto's version, and reports keys of chapoly's config section
 * that nothing reads (once per process, on stderr).
 */
void chapoly_config_read(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                         chapoly_config *cfg);
/* "3.6.5" as major * 100 + minor (306); 300 if absent or unreadable. */
unsigned chapoly_config_openssl(const char *version);
/*
 * The configuration (config keys, else the environment, read with
 * secure_getenv) applied to pc: the kernel table and its paths, statistics
 * and their file, what is served. A wrong value means the default and is
 * reported once per process on stderr.
 */
void chapoly_config_apply(chapoly_provctx *pc, const chapoly_config *cfg);

/* ---- statistics (prov_stats.c) ---- */

/* The counters asked for in params (any others are left alone). */
int chapoly_stats_get_params(const chapoly_provctx *pc, OSSL_PARAM params[]);
/* pc counts (pc->stats): its counters restart at 0 in a forked child. */
void chapoly_stats_attach(chapoly_provctx *pc);
/* Teardown of a counting pc: appends its line to the statistics file if it counted. */
void chapoly_stats_detach(chapoly_provctx *pc);

/* Error paths: out of line, so that the paths they leave stay short. */
#if defined(__GNUC__) || defined(__clang__)
#define CHAPOLY_COLD __attribute__((cold, noinline))
#else
#define CHAPOLY_COLD
#endif

/* Raise an OpenSSL error with a reason code (CHAPOLY_REASONS) and a readable detail. */
#define CHAPOLY_ERR(reason, ...) chapoly_raise(__FILE__, __LINE__, __func__, (reason), __VA_ARGS__)

/* Algorithm dispatch tables (provider/ciphers, provider/macs). */
extern const OSSL_DISPATCH chapoly_chacha20_poly1305_functions[];
extern const OSSL_DISPATCH chapoly_xchacha20_poly1305_functions[];
extern const OSSL_DISPATCH chapoly_chacha20_functions[];
extern const OSSL_DISPATCH chapoly_poly1305_mac_functions[];

/*
 * OSSL_PARAM access (params.c), as libcrypto's OSSL_PARAM_* functions do it
 * (every integer size, signed or not, and exact REALs), except that NULL
 * data never crashes: a get fails, a set is a size query.
 */
OSSL_PARAM *chapoly_param_locate(OSSL_PARAM *p, const char *key);
const OSSL_PARAM *chapoly_param_locate_const(const OSSL_PARAM *p, const char *key);
int chapoly_param_get_size_t(const OSSL_PARAM *p, size_t *v);
int chapoly_param_get_uint64(const OSSL_PARAM *p, uint64_t *v);
int chapoly_param_set_size_t_(OSSL_PARAM *p, size_t v);
int chapoly_param_set_utf8_ptr(OSSL_PARAM *p, const char *v);
int chapoly_param_set_octet_string(OSSL_PARAM *p, const void *v, size_t len);

/*
 * Answer a size: the common form, a size_t with data (EVP asks for the IV
 * length at every cipher init and the MAC size at every EVP_MAC_final),
 * here as OSSL_PARAM_set_size_t answers it, without its call chain (about
 * 40 instructions); every other form through it (params.c).
 */
static inline int chapoly_param_set_size_t(OSSL_PARAM *p, size_t v)
{
    if (p->data_type == OSSL_PARAM_UNSIGNED_INTEGER && p->data_size == sizeof(size_t) &&
        p->data != NULL) {
        memcpy(p->data, &v, sizeof(v));
        p->return_size = sizeof(v);
        return 1;
    }
    return chapoly_param_set_size_t_(p, v);
}
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
