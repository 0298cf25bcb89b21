/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_evp_strict: parameters (unknown ones, the algorithm's, NULL data, the
 * gettable lists), the POLY1305 output size, and lengths no buffer can have
 * through the provider's own functions. The program's header and main:
 * test_evp_strict.h, test_evp_strict.c.
 */
#include "test_evp_strict.h"

void test_mac_outsize(void)
{
    EVP_MAC *m = t_mac("POLY1305", 1);
    EVP_MAC_CTX *mc = m ? EVP_MAC_CTX_new(m) : NULL;
    uint8_t out[16];
    size_t outl = 0;

    T_OK(mc != NULL, "POLY1305 MAC context");
    if (mc != NULL) {
        T_ACCEPT(EVP_MAC_init(mc, key, 32, NULL) && EVP_MAC_update(mc, pt, 33), "MAC init+update");
        T_REJECT(EVP_MAC_final(mc, out, &outl, 15), "POLY1305 final with outsize 15");
        T_ACCEPT(EVP_MAC_final(mc, out, &outl, 16) && outl == 16, "POLY1305 final outsize 16");
    }
    EVP_MAC_CTX_free(mc);
    EVP_MAC_free(m);
}

/* Unknown and libssl/apps-only ctx params are ignored with success (default: same). */
void test_unknown_params(const char *name, EVP_CIPHER *c)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int tlsver = 0x0303;
    size_t macsize = 0;
    unsigned int uval = 7;
    OSSL_PARAM p1[2] = { OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_TLS_VERSION, &tlsver),
                         OSSL_PARAM_construct_end() };
    OSSL_PARAM p2[2] = { OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &macsize),
                         OSSL_PARAM_construct_end() };
    OSSL_PARAM p3[3] = { OSSL_PARAM_construct_utf8_string("chapoly-no-such-param", "x", 0),
                         OSSL_PARAM_construct_uint("zz-made-up", &uval),
                         OSSL_PARAM_construct_end() };
    uint8_t out[64], ref[64];

    T_ACCEPT(EVP_EncryptInit_ex(ctx, c, NULL, NULL, NULL), "%s init", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_padding(ctx, 0), "%s: set_padding(0) before key", name);
    T_ACCEPT(EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv), "%s init key", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_padding(ctx, 0), "%s: set_padding(0)", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_padding(ctx, 1), "%s: set_padding(1)", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_params(ctx, p1), "%s: tls-version (int)", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_params(ctx, p2), "%s: tls-mac-size (size_t)", name);
    T_ACCEPT(EVP_CIPHER_CTX_set_params(ctx, p3), "%s: made-up params", name);
    /* The ignored params changed nothing: stream matches a clean context. */
    T_ACCEPT(upd(ctx, out, pt, 64), "%s update after unknown params", name);
    EVP_CIPHER_CTX *c2 = EVP_CIPHER_CTX_new();
    T_OK(EVP_EncryptInit_ex(c2, c, NULL, key, iv) && upd(c2, ref, pt, 64)
             && memcmp(out, ref, 64) == 0,
         "%s: output changed by ignored params", name);
    EVP_CIPHER_CTX_free(c2);
    EVP_CIPHER_CTX_free(ctx);
}

typedef struct {
    unsigned int mode;
    size_t keylen, ivlen, blocksize;
    int aead, custom_iv;
    int ok;
} alg_params;

static alg_params read_alg_params(EVP_CIPHER *c)
{
    alg_params v;
    memset(&v, 0xee, sizeof(v));
    OSSL_PARAM p[7] = { OSSL_PARAM_construct_uint(OSSL_CIPHER_PARAM_MODE, &v.mode),
                        OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_KEYLEN, &v.keylen),
                        OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_IVLEN, &v.ivlen),
                        OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, &v.blocksize),
                        OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_AEAD, &v.aead),
                        OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_CUSTOM_IV, &v.custom_iv),
                        OSSL_PARAM_construct_end() };
    v.ok = EVP_CIPHER_get_params(c, p);
    for (int i = 0; i < 6; i++)
        v.ok = v.ok && OSSL_PARAM_modified(&p[i]);
    return v;
}

static void compare_alg_params(const char *name, EVP_CIPHER *ours, EVP_CIPHER *ref, int aead)
{
    alg_params o = read_alg_params(ours), r = read_alg_params(ref);

    T_OK(o.ok, "%s: get_params did not answer all of mode/keylen/ivlen/blocksize/aead/custom-iv",
         name);
    T_OK(r.ok, "%s: default get_params", name);
    T_OK(o.mode == r.mode, "%s: mode %u, default %u", name, o.mode, r.mode);
    T_OK(o.keylen == r.keylen, "%s: keylen %zu, default %zu", name, o.keylen, r.keylen);
    T_OK(o.ivlen == r.ivlen, "%s: ivlen %zu, default %zu", name, o.ivlen, r.ivlen);
    T_OK(o.blocksize == r.blocksize, "%s: blocksize %zu, default %zu", name, o.blocksize,
         r.blocksize);
    T_OK(o.aead == r.aead, "%s: aead %d, default %d", name, o.aead, r.aead);
    T_OK(o.custom_iv == r.custom_iv, "%s: custom-iv %d, default %d", name, o.custom_iv,
         r.custom_iv);
    T_OK(EVP_CIPHER_get_mode(ours) == EVP_CIPHER_get_mode(ref), "%s: EVP_CIPHER_get_mode", name);
    T_OK(EVP_CIPHER_get_key_length(ours) == 32 && EVP_CIPHER_get_iv_length(ours)
             == EVP_CIPHER_get_iv_length(ref),
         "%s: EVP key/iv length", name);
    T_OK(EVP_CIPHER_get_block_size(ours) == 1, "%s: block size", name);
    T_OK(EVP_CIPHER_get_flags(ours) == EVP_CIPHER_get_flags(ref),
         "%s: flags %#lx, default %#lx", name, EVP_CIPHER_get_flags(ours),
         EVP_CIPHER_get_flags(ref));
    T_OK(((EVP_CIPHER_get_flags(ours) & EVP_CIPH_FLAG_AEAD_CIPHER) != 0) == aead,
         "%s: EVP_CIPH_FLAG_AEAD_CIPHER %s", name, aead ? "missing" : "set");
    T_OK(EVP_CIPHER_get_nid(ours) == EVP_CIPHER_get_nid(ref) && EVP_CIPHER_get_nid(ours) != 0,
         "%s: nid %d, default %d", name, EVP_CIPHER_get_nid(ours), EVP_CIPHER_get_nid(ref));
}

/*
 * Algorithm parameters asked for with NULL data in every numeric type: a
 * size query for each, never a crash.
 */
void test_alg_params_null_data(const char *name, EVP_CIPHER *c)
{
    static const char *const keys[] = {
        OSSL_CIPHER_PARAM_MODE, OSSL_CIPHER_PARAM_KEYLEN, OSSL_CIPHER_PARAM_IVLEN,
        OSSL_CIPHER_PARAM_BLOCK_SIZE, OSSL_CIPHER_PARAM_AEAD, OSSL_CIPHER_PARAM_CUSTOM_IV,
        OSSL_CIPHER_PARAM_CTS, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, OSSL_CIPHER_PARAM_HAS_RAND_KEY
    };
    static const unsigned types[] = { OSSL_PARAM_INTEGER, OSSL_PARAM_UNSIGNED_INTEGER,
                                      OSSL_PARAM_REAL };

    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            OSSL_PARAM p[2] = { { keys[k], types[t], NULL, 8, OSSL_PARAM_UNMODIFIED },
                                OSSL_PARAM_END };

            T_ACCEPT(EVP_CIPHER_get_params(c, p), "%s: get %s (type %u) with NULL data", name,
                     keys[k], types[t]);
            T_OK(p[0].return_size != OSSL_PARAM_UNMODIFIED && p[0].return_size != 0,
                 "%s: get %s (type %u) with NULL data: no size answered", name, keys[k],
                 types[t]);
        }
    }
}

void test_alg_params(void)
{
    compare_alg_params("ChaCha20-Poly1305", aeads[0].ours, aeads[0].ref, 1);
    compare_alg_params("ChaCha20", cc_ours, cc_ref, 0);

    /* XChaCha20-Poly1305 has no default twin: ChaCha20-Poly1305's values but a 24-byte IV. */
    alg_params x = read_alg_params(aeads[1].ours), r = read_alg_params(aeads[0].ref);
    T_OK(x.ok, "XChaCha20-Poly1305: get_params incomplete");
    T_OK(x.mode == r.mode && x.keylen == 32 && x.ivlen == 24 && x.blocksize == 1 && x.aead == 1
             && x.custom_iv == 1,
         "XChaCha20-Poly1305 params: mode %u keylen %zu ivlen %zu blocksize %zu aead %d "
         "custom-iv %d",
         x.mode, x.keylen, x.ivlen, x.blocksize, x.aead, x.custom_iv);
    T_OK(EVP_CIPHER_get_flags(aeads[1].ours) & EVP_CIPH_FLAG_AEAD_CIPHER,
         "XChaCha20-Poly1305: EVP_CIPH_FLAG_AEAD_CIPHER missing");
    T_OK(EVP_CIPHER_get_iv_length(aeads[1].ours) == 24, "XChaCha20-Poly1305: iv length");
}

/*
 * Lengths no buffer can have. EVP_EncryptUpdate in libcrypto 3.0 hands a
 * negative int to the provider as a huge size_t (default's ChaCha20 then
 * crashes); the provider's own cipher/update functions take a size_t.
 */
typedef struct {
    OSSL_FUNC_cipher_newctx_fn *newctx;
    OSSL_FUNC_cipher_freectx_fn *freectx;
    OSSL_FUNC_cipher_encrypt_init_fn *einit;
    OSSL_FUNC_cipher_decrypt_init_fn *dinit;
    OSSL_FUNC_cipher_update_fn *update;
    OSSL_FUNC_cipher_cipher_fn *cipher;
} raw_cipher;

static int raw_fetch(const char *name, raw_cipher *r)
{
    int no_cache = 0;
    const OSSL_ALGORITHM *alg = OSSL_PROVIDER_query_operation(t_prov, OSSL_OP_CIPHER, &no_cache);

    memset(r, 0, sizeof(*r));
    for (; alg != NULL && alg->algorithm_names != NULL; alg++) {
        if (strcmp(alg->algorithm_names, name) != 0)
            continue;
        for (const OSSL_DISPATCH *d = alg->implementation; d->function_id != 0; d++) {
            switch (d->function_id) {
            case OSSL_FUNC_CIPHER_NEWCTX: r->newctx = OSSL_FUNC_cipher_newctx(d); break;
            case OSSL_FUNC_CIPHER_FREECTX: r->freectx = OSSL_FUNC_cipher_freectx(d); break;
            case OSSL_FUNC_CIPHER_ENCRYPT_INIT: r->einit = OSSL_FUNC_cipher_encrypt_init(d); break;
            case OSSL_FUNC_CIPHER_DECRYPT_INIT: r->dinit = OSSL_FUNC_cipher_decrypt_init(d); break;
            case OSSL_FUNC_CIPHER_UPDATE: r->update = OSSL_FUNC_cipher_update(d); break;
            case OSSL_FUNC_CIPHER_CIPHER: r->cipher = OSSL_FUNC_cipher_cipher(d); break;
            }
        }
    }
    return r->newctx && r->freectx && r->einit && r->dinit && r->update && r->cipher;
}

void test_huge_lengths(const char *name, EVP_CIPHER *c, size_t ivlen, int aead)
{
    static const int neg[] = { -1, -5, -64, INT_MIN };
    static const size_t huge[] = { SIZE_MAX, SIZE_MAX - 4, (size_t)PTRDIFF_MAX + 1,
                                   (size_t)(ptrdiff_t)INT_MIN };
    uint8_t out[300];

    for (int enc = 1; enc >= 0; enc--) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        T_ACCEPT(EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc), "%s init", name);
        for (size_t i = 0; i < sizeof(neg) / sizeof(neg[0]); i++) {
            int outl = -1;
            T_REJECT(EVP_CipherUpdate(ctx, out, &outl, pt, neg[i]),
                     "%s %s: EVP_CipherUpdate with inl %d", name, enc ? "enc" : "dec", neg[i]);
            if (aead)
                T_REJECT(EVP_CipherUpdate(ctx, NULL, &outl, aad, neg[i]),
                         "%s %s: AAD update with inl %d", name, enc ? "enc" : "dec", neg[i]);
        }
        /* Nothing was processed: the context goes on as if the calls never happened. */
        uint8_t want[64];
        EVP_CIPHER_CTX *r = EVP_CIPHER_CTX_new();
        T_OK(EVP_CipherInit_ex(r, c, NULL, key, iv, enc) && upd(r, want, pt, 64),
             "%s reference", name);
        T_OK(upd(ctx, out, pt, 64) && memcmp(out, want, 64) == 0,
             "%s %s: stream after refused negative lengths differs", name, enc ? "enc" : "dec");
        EVP_CIPHER_CTX_free(r);
        EVP_CIPHER_CTX_free(ctx);
    }

    raw_cipher rc;
    if (!T_OK(raw_fetch(name, &rc), "%s: the provider's own dispatch table", name))
        return;
    void *provctx = OSSL_PROVIDER_get0_provider_ctx(t_prov);
    for (int enc = 1; enc >= 0; enc--) {
        void *ctx = rc.newctx(provctx);
        int ok = ctx != NULL && (enc ? rc.einit : rc.dinit)(ctx, key, 32, iv, ivlen, NULL);
        T_OK(ok, "%s raw init", name);
        for (size_t i = 0; ok && i < sizeof(huge) / sizeof(huge[0]); i++) {
            size_t outl = 1;
            T_REJECT(rc.cipher(ctx, out, &outl, huge[i], pt, huge[i]),
                     "%s %s: cipher function with inl %#zx", name, enc ? "enc" : "dec", huge[i]);
            T_REJECT(rc.update(ctx, out, &outl, huge[i], pt, huge[i]),
                     "%s %s: update function with inl %#zx", name, enc ? "enc" : "dec", huge[i]);
            if (aead)
                T_REJECT(rc.update(ctx, NULL, &outl, 0, aad, huge[i]),
                         "%s %s: AAD of %#zx bytes", name, enc ? "enc" : "dec", huge[i]);
        }
        if (ctx != NULL)
            rc.freectx(ctx);
    }
}

/* XChaCha20-Poly1305 has no TLS record mode: it neither lists nor answers "tlsaadpad". */
void test_gettable_lists(void)
{
    const OSSL_PARAM *g0 = EVP_CIPHER_gettable_ctx_params(aeads[0].ours);
    const OSSL_PARAM *g1 = EVP_CIPHER_gettable_ctx_params(aeads[1].ours);
    static const char *const common[] = { OSSL_CIPHER_PARAM_KEYLEN, OSSL_CIPHER_PARAM_IVLEN,
                                          OSSL_CIPHER_PARAM_AEAD_TAGLEN,
                                          OSSL_CIPHER_PARAM_AEAD_TAG };

    T_OK(g0 != NULL && g1 != NULL, "gettable ctx params lists");
    if (g0 == NULL || g1 == NULL)
        return;
    T_OK(OSSL_PARAM_locate_const(g0, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD) != NULL,
         "ChaCha20-Poly1305: gettable list lacks tlsaadpad");
    T_OK(OSSL_PARAM_locate_const(g1, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD) == NULL,
         "XChaCha20-Poly1305: gettable list advertises tlsaadpad");
    for (size_t i = 0; i < 4; i++) {
        T_OK(OSSL_PARAM_locate_const(g0, common[i]) != NULL, "ChaCha20-Poly1305 lacks %s",
             common[i]);
        T_OK(OSSL_PARAM_locate_const(g1, common[i]) != NULL, "XChaCha20-Poly1305 lacks %s",
             common[i]);
    }
    for (int i = 0; i < 2; i++) {
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
        size_t v = 0;
        OSSL_PARAM p[2] = { OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, &v),
                            OSSL_PARAM_construct_end() };
        T_ACCEPT(EVP_EncryptInit_ex(ctx, aeads[i].ours, NULL, key, iv), "init");
        T_ACCEPT(EVP_CIPHER_CTX_get_params(ctx, p), "%s get tlsaadpad", aeads[i].name);
        if (i == 0)
            T_OK(OSSL_PARAM_modified(p) && v == TAGLEN, "ChaCha20-Poly1305: tlsaadpad %zu", v);
        else
            T_OK(!OSSL_PARAM_modified(p), "XChaCha20-Poly1305 answers tlsaadpad");
        EVP_CIPHER_CTX_free(ctx);
    }
}

/*
 * Numeric parameters with NULL data. libcrypto 3.0.19's OSSL_PARAM_get_*
 * read through it (and OSSL_PARAM_set_* write through it for REAL), so
 * chapoly must not hand such a parameter to them. default: crashes inside
 * OSSL_PARAM_get_uint64 / OSSL_PARAM_set_uint64 called by the provider.
 */
void test_null_param_data(const char *name, EVP_CIPHER *c)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    const char *keys[] = { OSSL_CIPHER_PARAM_KEYLEN, OSSL_CIPHER_PARAM_IVLEN };
    const unsigned types[] = { OSSL_PARAM_UNSIGNED_INTEGER, OSSL_PARAM_INTEGER, OSSL_PARAM_REAL };
    uint8_t out[64], want[64];

    T_ACCEPT(EVP_EncryptInit_ex(ctx, c, NULL, key, iv), "%s init", name);
    for (int k = 0; k < 2; k++) {
        for (int t = 0; t < 3; t++) {
            size_t sz = types[t] == OSSL_PARAM_REAL ? sizeof(double) : sizeof(size_t);
            OSSL_PARAM p[2] = { { keys[k], types[t], NULL, sz, OSSL_PARAM_UNMODIFIED },
                                OSSL_PARAM_END };
            T_REJECT_SAYS(EVP_CIPHER_CTX_set_params(ctx, p), "has NULL data",
                          "%s: set %s (type %u) with NULL data", name, keys[k], types[t]);
            T_REJECT_SAYS(EVP_EncryptInit_ex2(ctx, NULL, key, iv, p), "has NULL data",
                          "%s: init with %s (type %u) with NULL data", name, keys[k], types[t]);
            /* A get with NULL data is a size query. */
            p[0].return_size = OSSL_PARAM_UNMODIFIED;
            T_ACCEPT(EVP_CIPHER_CTX_get_params(ctx, p), "%s: get %s (type %u) with NULL data",
                     name, keys[k], types[t]);
            T_OK(p[0].return_size == sz, "%s: size query for %s (type %u) returned %zu", name,
                 keys[k], types[t], p[0].return_size);
        }
    }
    /* ... and the context still works. */
    EVP_CIPHER_CTX *r = EVP_CIPHER_CTX_new();
    T_OK(EVP_EncryptInit_ex(r, c, NULL, key, iv) && upd(r, want, pt, 64), "%s reference", name);
    T_OK(EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv) && upd(ctx, out, pt, 64)
             && memcmp(out, want, 64) == 0,
         "%s: context after NULL-data params differs", name);
    EVP_CIPHER_CTX_free(r);
    EVP_CIPHER_CTX_free(ctx);
}

