/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Robustness of every chapoly algorithm's parameter handling and call
 * sequencing, called through the provider's own dispatch tables (as any
 * libcrypto version or a direct core caller may), not only through what
 * today's EVP lets through.
 *
 * Each input is a program: pick an algorithm (any level's cipher or MAC, or
 * the provider's own get_params), then a sequence of calls on one context:
 * set/get ctx params, algorithm get_params, init with honest but unusual
 * key/IV lengths (NULL or exact-size buffers), update/cipher/final with
 * output buffers that may be too small, in place or not, dupctx, TLS 1.2
 * record attempts, free and new. Parameter arrays mix the names from the
 * gettable/settable lists with junk names, every data type, odd sizes and
 * NULL data. Every buffer is allocated at exactly its declared size, so an
 * over-read or over-write is an ASan report. Nothing is checked but "no
 * crash, no sanitizer report, no hang".
 *
 * NULL data is not given to set calls with a numeric type, nor to any call
 * with a REAL type: OpenSSL 3.0.19's own helpers dereference it there
 * (OSSL_PARAM_get_* for every numeric type, OSSL_PARAM_set_* when the type
 * is REAL), in libcrypto rather than in the provider, so those cases would
 * only find libcrypto's behaviour. Otherwise NULL data, the documented size
 * query for get calls, is used with every type.
 */
#include <string.h>
#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include "fuzz_common.h"

#define MAX_IMPLS 32
#define MAX_NAMES 96
#define MAX_P 8
#define MAX_STEPS 40

typedef struct impl {
    const char *alg;
    const char *level;
    int is_mac;
    void *provctx;
    void (*fn[16])(void);
} impl;

static impl impls[MAX_IMPLS];
static int nimpls;

typedef struct known {
    const char *name;
    unsigned type;
} known;
static known names[MAX_NAMES];
static int nnames;

static const char *const junk[] = {
    "", "k", "i", "t", "padding", "tls-version", "tls-mac-size", "num", "rounds", "iv",
    "updated-iv", "key", "size", "digest", "tlsivinv", "tls1multi_maxbufsz", "keylenx",
    "ivlen ", "taglength", "tagx", "tlsaadx", "xts_standard", "cts_mode", "use-bits",
};

static void add_name(const char *name, unsigned type)
{
    for (int i = 0; i < nnames; i++)
        if (strcmp(names[i].name, name) == 0)
            return;
    if (nnames < MAX_NAMES) {
        names[nnames].name = name;
        names[nnames].type = type;
        nnames++;
    }
}

static void add_list(const OSSL_PARAM *p)
{
    for (; p != NULL && p->key != NULL; p++)
        add_name(p->key, p->data_type);
}

/* Call through a dispatch entry with its real prototype. */
#define FN(im, id, type) ((type)(im)->fn[(id)])

static void collect(const fz_level *lv, int op, int is_mac)
{
    int no_cache = 0;
    const OSSL_ALGORITHM *a = OSSL_PROVIDER_query_operation(lv->prov, op, &no_cache);

    for (; a != NULL && a->algorithm_names != NULL && nimpls < MAX_IMPLS; a++) {
        impl *im = &impls[nimpls++];

        im->alg = a->algorithm_names;
        im->level = lv->name;
        im->is_mac = is_mac;
        im->provctx = OSSL_PROVIDER_get0_provider_ctx(lv->prov);
        for (const OSSL_DISPATCH *d = a->implementation; d->function_id != 0; d++)
            if (d->function_id > 0 && d->function_id < 16)
                im->fn[d->function_id] = d->function;

        /* Names from every list the algorithm publishes. */
        if (is_mac) {
            void *ctx = FN(im, OSSL_FUNC_MAC_NEWCTX, OSSL_FUNC_mac_newctx_fn *)(im->provctx);

            if (im->fn[OSSL_FUNC_MAC_GETTABLE_PARAMS])
                add_list(FN(im, OSSL_FUNC_MAC_GETTABLE_PARAMS, OSSL_FUNC_mac_gettable_params_fn *)(im->provctx));
            if (im->fn[OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS])
                add_list(FN(im, OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, OSSL_FUNC_mac_gettable_ctx_params_fn *)(ctx, im->provctx));
            if (im->fn[OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS])
                add_list(FN(im, OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, OSSL_FUNC_mac_settable_ctx_params_fn *)(ctx, im->provctx));
            FN(im, OSSL_FUNC_MAC_FREECTX, OSSL_FUNC_mac_freectx_fn *)(ctx);
        } else {
            void *ctx = FN(im, OSSL_FUNC_CIPHER_NEWCTX, OSSL_FUNC_cipher_newctx_fn *)(im->provctx);

            if (im->fn[OSSL_FUNC_CIPHER_GETTABLE_PARAMS])
                add_list(FN(im, OSSL_FUNC_CIPHER_GETTABLE_PARAMS, OSSL_FUNC_cipher_gettable_params_fn *)(im->provctx));
            if (im->fn[OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS])
                add_list(FN(im, OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, OSSL_FUNC_cipher_gettable_ctx_params_fn *)(ctx, im->provctx));
            if (im->fn[OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS])
                add_list(FN(im, OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, OSSL_FUNC_cipher_settable_ctx_params_fn *)(ctx, im->provctx));
            FN(im, OSSL_FUNC_CIPHER_FREECTX, OSSL_FUNC_cipher_freectx_fn *)(ctx);
        }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_setup();
    for (int i = 0; i < fz_nlevels; i++) {
        collect(&fz_levels[i], OSSL_OP_CIPHER, 0);
        collect(&fz_levels[i], OSSL_OP_MAC, 1);
        add_list(OSSL_PROVIDER_gettable_params(fz_levels[i].prov));
    }
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
        add_name(junk[i], OSSL_PARAM_OCTET_STRING);
    if (nimpls == 0) {
        fprintf(stderr, "chapoly offers no cipher or MAC?\n");
        exit(1);
    }
    fprintf(stderr, "fuzz_params: %d implementations, %d parameter names\n", nimpls, nnames);
    return 0;
}

/* ---- random parameter arrays ---- */

typedef struct pset {
    OSSL_PARAM p[MAX_P + 1];
    void *bufs[2 * MAX_P];
    int nbufs;
    char rname[MAX_P][17];
} pset;

static void *keep(pset *ps, size_t n)
{
    void *b = fz_malloc(n);

    ps->bufs[ps->nbufs++] = b;
    return b;
}

static void pset_free(pset *ps)
{
    for (int i = 0; i < ps->nbufs; i++)
        free(ps->bufs[i]);
    ps->nbufs = 0;
}

static OSSL_PARAM *make_params(fz_in *in, pset *ps, int for_set)
{
    static const size_t sizes[15] = { 0, 1, 2, 3, 4, 7, 8, 9, 12, 13, 15, 16, 17, 24, 33 };
    static const unsigned types[7] = { OSSL_PARAM_INTEGER, OSSL_PARAM_UNSIGNED_INTEGER,
                                       OSSL_PARAM_REAL, OSSL_PARAM_UTF8_STRING,
                                       OSSL_PARAM_OCTET_STRING, OSSL_PARAM_UTF8_PTR,
                                       OSSL_PARAM_OCTET_PTR };
    uint8_t count = fz_u8(in);
    int n;

    ps->nbufs = 0;
    if (count == 0xff)
        return NULL;
    n = count % (MAX_P + 1);
    for (int i = 0; i < n; i++) {
        OSSL_PARAM *p = &ps->p[i];
        uint8_t s = fz_u8(in), t = fz_u8(in);
        unsigned natural = OSSL_PARAM_OCTET_STRING;
        size_t size;
        int numeric, null_data;

        if (s < 0xe0) {
            p->key = names[s % nnames].name;
            natural = names[s % nnames].type;
        } else {
            size_t l = s & 15;

            fz_bytes(in, ps->rname[i], l);
            ps->rname[i][l] = '\0';
            p->key = ps->rname[i];
        }
        p->data_type = (t & 7) == 7 ? natural : types[t & 7];
        numeric = p->data_type == OSSL_PARAM_INTEGER ||
                  p->data_type == OSSL_PARAM_UNSIGNED_INTEGER || p->data_type == OSSL_PARAM_REAL;
        if (((t >> 3) & 15) == 15)
            size = numeric ? sizeof(size_t) : 16; /* the size a correct caller uses */
        else
            size = sizes[(t >> 3) & 15];
        null_data = (t & 0x80) && !(for_set && numeric) && p->data_type != OSSL_PARAM_REAL;
        p->data_size = size;
        p->return_size = OSSL_PARAM_UNMODIFIED;
        if (null_data) {
            p->data = NULL;
        } else if (p->data_type == OSSL_PARAM_UTF8_PTR || p->data_type == OSSL_PARAM_OCTET_PTR) {
            /* The data is a pointer; what it points to has data_size bytes (or is NULL). */
            void **slot = keep(ps, sizeof(void *));

            if (fz_u8(in) & 1) {
                *slot = NULL;
            } else {
                *slot = keep(ps, size);
                fz_bytes(in, *slot, size);
            }
            p->data = slot;
        } else {
            p->data = keep(ps, size);
            fz_bytes(in, p->data, size);
        }
    }
    ps->p[n] = OSSL_PARAM_construct_end();
    return ps->p;
}

/* A buffer of exactly n bytes (or NULL when asked), content from the input. */
static uint8_t *maybe_buf(fz_in *in, size_t n, int null)
{
    uint8_t *b;

    if (null)
        return NULL;
    b = fz_malloc(n);
    fz_pattern(b, n, 0, fz_u8(in));
    return b;
}

static const size_t keylens[8] = { 32, 32, 0, 1, 16, 31, 33, 64 };
static const size_t ivlens[16] = { 12, 24, 16, 12, 24, 16, 0, 1, 8, 11, 13, 15, 17, 23, 25, 32 };

/* ---- ciphers ---- */

static void cipher_io(const impl *im, void *ctx, fz_in *in, int use_cipher_fn)
{
    uint8_t sel = fz_u8(in);
    size_t inl = fz_len(in, 4096), outsize;
    static const int deltas[8] = { 0, 0, 16, -1, -16, 64, -64, 1 };
    long d = deltas[sel & 7];
    uint8_t *ibuf, *obuf;
    size_t outl = 0;

    outsize = (d < 0 && (size_t)-d > inl) ? 0 : (size_t)((long)inl + d);
    ibuf = maybe_buf(in, inl, (sel & 0x18) == 0x18);
    if ((sel & 0x60) == 0x60 && ibuf != NULL && outsize <= inl) {
        obuf = ibuf; /* in place */
    } else {
        obuf = maybe_buf(in, outsize, (sel & 0x60) == 0x40);
    }
    if (use_cipher_fn)
        FN(im, OSSL_FUNC_CIPHER_CIPHER, OSSL_FUNC_cipher_cipher_fn *)(ctx, obuf, &outl, outsize, ibuf, inl);
    else
        FN(im, OSSL_FUNC_CIPHER_UPDATE, OSSL_FUNC_cipher_update_fn *)(ctx, obuf, &outl, outsize, ibuf, inl);
    if (obuf != ibuf)
        free(obuf);
    free(ibuf);
}

/* The TLS 1.2 shape: "tlsaad" then one in-place call over payload (+ tag). */
static void cipher_tls(const impl *im, void *ctx, fz_in *in)
{
    uint8_t aad[13], sel;
    size_t declared, inl;
    uint8_t *buf;
    size_t outl = 0;

    fz_bytes(in, aad, sizeof(aad));
    sel = fz_u8(in);
    aad[11] &= 0x0f; /* keep records small */
    declared = ((size_t)aad[11] << 8) | aad[12];
    inl = declared + ((sel & 1) ? 16 : 0) + ((sel & 2) ? 1 : 0);
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, aad, 13),
                        OSSL_PARAM_construct_end() };
    FN(im, OSSL_FUNC_CIPHER_SET_CTX_PARAMS, OSSL_FUNC_cipher_set_ctx_params_fn *)(ctx, p);
    buf = maybe_buf(in, inl, 0);
    FN(im, OSSL_FUNC_CIPHER_UPDATE, OSSL_FUNC_cipher_update_fn *)(ctx, buf, &outl, inl, buf, inl);
    free(buf);
}

/* Reads every entry of a published list (ASan checks it is terminated). */
static volatile size_t list_sink;

static void walk_list(const OSSL_PARAM *p)
{
    for (; p != NULL && p->key != NULL; p++)
        list_sink += strlen(p->key) + p->data_type;
}

static void fuzz_cipher(const impl *im, fz_in *in)
{
    void *ctx = FN(im, OSSL_FUNC_CIPHER_NEWCTX, OSSL_FUNC_cipher_newctx_fn *)(im->provctx);
    pset ps;

    FZ_ASSERT(ctx != NULL, "newctx failed");
    for (int step = 0; step < MAX_STEPS && in->n > 0; step++) {
        uint8_t op = fz_u8(in);

        switch (op % 12) {
        case 0:
            FN(im, OSSL_FUNC_CIPHER_SET_CTX_PARAMS, OSSL_FUNC_cipher_set_ctx_params_fn *)(ctx, make_params(in, &ps, 1));
            pset_free(&ps);
            break;
        case 1:
            FN(im, OSSL_FUNC_CIPHER_GET_CTX_PARAMS, OSSL_FUNC_cipher_get_ctx_params_fn *)(ctx, make_params(in, &ps, 0));
            pset_free(&ps);
            break;
        case 2:
        case 3: {
            uint8_t ks = fz_u8(in);
            size_t kl = keylens[ks & 7], il = ivlens[(ks >> 3) & 15];
            uint8_t *key = maybe_buf(in, kl, (ks & 0x80) != 0);
            uint8_t *iv = maybe_buf(in, il, (fz_u8(in) & 3) == 0);
            const OSSL_PARAM *p = make_params(in, &ps, 1);

            if (op % 12 == 2)
                FN(im, OSSL_FUNC_CIPHER_ENCRYPT_INIT, OSSL_FUNC_cipher_encrypt_init_fn *)(ctx, key, kl, iv, il, p);
            else
                FN(im, OSSL_FUNC_CIPHER_DECRYPT_INIT, OSSL_FUNC_cipher_decrypt_init_fn *)(ctx, key, kl, iv, il, p);
            pset_free(&ps);
            free(key);
            free(iv);
            break;
        }
        case 4:
            cipher_io(im, ctx, in, 0);
            break;
        case 5: {
            static const size_t fsz[4] = { 0, 16, 64, 1 };
            size_t n = fsz[(op >> 4) & 3], outl = 0;
            uint8_t *o = maybe_buf(in, n, (op & 0x40) != 0);

            FN(im, OSSL_FUNC_CIPHER_FINAL, OSSL_FUNC_cipher_final_fn *)(ctx, o, &outl, n);
            free(o);
            break;
        }
        case 6:
            cipher_io(im, ctx, in, 1);
            break;
        case 7: {
            void *d = FN(im, OSSL_FUNC_CIPHER_DUPCTX, OSSL_FUNC_cipher_dupctx_fn *)(ctx);

            if (d != NULL) {
                if (op & 0x80) { /* continue on the copy */
                    FN(im, OSSL_FUNC_CIPHER_FREECTX, OSSL_FUNC_cipher_freectx_fn *)(ctx);
                    ctx = d;
                } else {
                    FN(im, OSSL_FUNC_CIPHER_FREECTX, OSSL_FUNC_cipher_freectx_fn *)(d);
                }
            }
            break;
        }
        case 8:
            FN(im, OSSL_FUNC_CIPHER_GET_PARAMS, OSSL_FUNC_cipher_get_params_fn *)(make_params(in, &ps, 0));
            pset_free(&ps);
            break;
        case 9:
            walk_list(FN(im, OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, OSSL_FUNC_cipher_gettable_ctx_params_fn *)(ctx, im->provctx));
            walk_list(FN(im, OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, OSSL_FUNC_cipher_settable_ctx_params_fn *)(ctx, im->provctx));
            walk_list(FN(im, OSSL_FUNC_CIPHER_GETTABLE_PARAMS, OSSL_FUNC_cipher_gettable_params_fn *)(im->provctx));
            break;
        case 10:
            FN(im, OSSL_FUNC_CIPHER_FREECTX, OSSL_FUNC_cipher_freectx_fn *)(ctx);
            ctx = FN(im, OSSL_FUNC_CIPHER_NEWCTX, OSSL_FUNC_cipher_newctx_fn *)(im->provctx);
            FZ_ASSERT(ctx != NULL, "newctx failed");
            break;
        default:
            cipher_tls(im, ctx, in);
            break;
        }
        ERR_clear_error();
    }
    FN(im, OSSL_FUNC_CIPHER_FREECTX, OSSL_FUNC_cipher_freectx_fn *)(ctx);
}

/* ---- MACs ---- */

static void fuzz_mac(const impl *im, fz_in *in)
{
    void *ctx = FN(im, OSSL_FUNC_MAC_NEWCTX, OSSL_FUNC_mac_newctx_fn *)(im->provctx);
    pset ps;

    FZ_ASSERT(ctx != NULL, "newctx failed");
    for (int step = 0; step < MAX_STEPS && in->n > 0; step++) {
        uint8_t op = fz_u8(in);

        switch (op % 9) {
        case 0:
            FN(im, OSSL_FUNC_MAC_SET_CTX_PARAMS, OSSL_FUNC_mac_set_ctx_params_fn *)(ctx, make_params(in, &ps, 1));
            pset_free(&ps);
            break;
        case 1:
            FN(im, OSSL_FUNC_MAC_GET_CTX_PARAMS, OSSL_FUNC_mac_get_ctx_params_fn *)(ctx, make_params(in, &ps, 0));
            pset_free(&ps);
            break;
        case 2: {
            uint8_t ks = fz_u8(in);
            size_t kl = keylens[ks & 7];
            uint8_t *key = maybe_buf(in, kl, (ks & 0x80) != 0);

            FN(im, OSSL_FUNC_MAC_INIT, OSSL_FUNC_mac_init_fn *)(ctx, key, kl, make_params(in, &ps, 1));
            pset_free(&ps);
            free(key);
            break;
        }
        case 3: {
            size_t n = fz_len(in, 4096);
            uint8_t *b = maybe_buf(in, n, 0);

            FN(im, OSSL_FUNC_MAC_UPDATE, OSSL_FUNC_mac_update_fn *)(ctx, b, n);
            free(b);
            break;
        }
        case 4: {
            static const size_t fsz[8] = { 16, 16, 0, 1, 8, 15, 17, 64 };
            size_t n = fsz[(op >> 4) & 7], outl = 0;
            uint8_t *o = maybe_buf(in, n, 0);

            FN(im, OSSL_FUNC_MAC_FINAL, OSSL_FUNC_mac_final_fn *)(ctx, o, &outl, n);
            free(o);
            break;
        }
        case 5: {
            void *d = FN(im, OSSL_FUNC_MAC_DUPCTX, OSSL_FUNC_mac_dupctx_fn *)(ctx);

            if (d != NULL) {
                if (op & 0x80) {
                    FN(im, OSSL_FUNC_MAC_FREECTX, OSSL_FUNC_mac_freectx_fn *)(ctx);
                    ctx = d;
                } else {
                    FN(im, OSSL_FUNC_MAC_FREECTX, OSSL_FUNC_mac_freectx_fn *)(d);
                }
            }
            break;
        }
        case 6:
            FN(im, OSSL_FUNC_MAC_GET_PARAMS, OSSL_FUNC_mac_get_params_fn *)(make_params(in, &ps, 0));
            pset_free(&ps);
            break;
        case 7:
            walk_list(FN(im, OSSL_FUNC_MAC_GETTABLE_CTX_PARAMS, OSSL_FUNC_mac_gettable_ctx_params_fn *)(ctx, im->provctx));
            walk_list(FN(im, OSSL_FUNC_MAC_SETTABLE_CTX_PARAMS, OSSL_FUNC_mac_settable_ctx_params_fn *)(ctx, im->provctx));
            walk_list(FN(im, OSSL_FUNC_MAC_GETTABLE_PARAMS, OSSL_FUNC_mac_gettable_params_fn *)(im->provctx));
            break;
        default:
            FN(im, OSSL_FUNC_MAC_FREECTX, OSSL_FUNC_mac_freectx_fn *)(ctx);
            ctx = FN(im, OSSL_FUNC_MAC_NEWCTX, OSSL_FUNC_mac_newctx_fn *)(im->provctx);
            FZ_ASSERT(ctx != NULL, "newctx failed");
            break;
        }
        ERR_clear_error();
    }
    FN(im, OSSL_FUNC_MAC_FREECTX, OSSL_FUNC_mac_freectx_fn *)(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = { data, size };

    /* Up to four algorithm sessions per input. */
    for (int s = 0; s < 4 && in.n > 0; s++) {
        uint8_t pick = fz_u8(&in);

        if (pick % (nimpls + 1) == (unsigned)nimpls) {
            pset ps;

            OSSL_PROVIDER_get_params(fz_pick_level(fz_u8(&in))->prov, make_params(&in, &ps, 0));
            pset_free(&ps);
            ERR_clear_error();
            continue;
        }
        const impl *im = &impls[pick % (nimpls + 1)];

        snprintf(fz_context, sizeof(fz_context), "%s (%s level)", im->alg, im->level);
        if (im->is_mac)
            fuzz_mac(im, &in);
        else
            fuzz_cipher(im, &in);
    }
    ERR_clear_error();
    fz_context[0] = '\0';
    return 0;
}
