/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: the comparison libraries. BoringSSL (Debian's
 * android-libboringssl) through dlopen, since its symbols clash with
 * OpenSSL's, and libsodium when it was found at configure time: their
 * loading, one loop per operation, and the jobs that run them.
 */
#include "bench_evp.h"

#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#ifdef BENCH_HAVE_SODIUM
#include <sodium.h>
#endif

int g_have_sodium;
int g_have_boring;

/* ------------------------------------------------------------------ */
/* BoringSSL through dlopen: its symbols clash with OpenSSL's.          */

typedef struct boring_api {
    void *dl;
    char path[PATH_MAX];
    const void *(*aead_chacha)(void);
    const void *(*aead_xchacha)(void);
    void *(*ctx_new)(const void *aead, const uint8_t *key, size_t key_len, size_t tag_len);
    void (*ctx_free)(void *ctx);
    int (*ctx_init)(void *ctx, const void *aead, const uint8_t *key, size_t key_len,
                    size_t tag_len, void *engine);
    void (*ctx_cleanup)(void *ctx);
    int (*seal)(const void *ctx, uint8_t *out, size_t *out_len, size_t max_out,
                const uint8_t *nonce, size_t nonce_len, const uint8_t *in, size_t in_len,
                const uint8_t *ad, size_t ad_len);
    int (*open)(const void *ctx, uint8_t *out, size_t *out_len, size_t max_out,
                const uint8_t *nonce, size_t nonce_len, const uint8_t *in, size_t in_len,
                const uint8_t *ad, size_t ad_len);
    void (*chacha_20)(uint8_t *out, const uint8_t *in, size_t in_len, const uint8_t key[32],
                      const uint8_t nonce[12], uint32_t counter);
    void (*poly_init)(void *state, const uint8_t key[32]);
    void (*poly_update)(void *state, const uint8_t *in, size_t in_len);
    void (*poly_finish)(void *state, uint8_t mac[16]);
} boring_api;

static boring_api B;
char g_boring_note[PATH_MAX + 64];
/*
 * EVP_AEAD_CTX is 8 + 584 + 8 bytes in the Debian headers (opaque state of
 * 580 bytes); re-keying in place needs storage of our own for it.
 */
#define BORING_CTX_BYTES 1024
#define BORING_POLY_STATE 512

static int boring_load(void)
{
    const char *cands[8];
    int nc = 0;
    glob_t g = { 0 };

    if (cfg.no_boring) {
        snprintf(g_boring_note, sizeof(g_boring_note), "disabled (--no-boringssl)");
        return 0;
    }
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BENCH_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BENCH_SANITIZER 1
#endif
#endif
#ifdef BENCH_SANITIZER
    /* The sanitizer runtime refuses RTLD_DEEPBIND, and without it the symbols would clash. */
    snprintf(g_boring_note, sizeof(g_boring_note), "left out under a sanitizer (ASan, TSan)");
    return 0;
#endif
    if (cfg.boring_path)
        cands[nc++] = cfg.boring_path;
    else if (getenv("BENCH_BORINGSSL"))
        cands[nc++] = getenv("BENCH_BORINGSSL");
    else if (glob("/usr/lib/*/android/libcrypto.so.0", 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc && nc < 8; i++)
            cands[nc++] = g.gl_pathv[i];
    for (int i = 0; i < nc && B.dl == NULL; i++) {
        B.dl = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
        if (B.dl)
            snprintf(B.path, sizeof(B.path), "%s", cands[i]);
    }
    if (B.dl == NULL) {
        snprintf(g_boring_note, sizeof(g_boring_note),
                 nc ? "not loadable (%s)" : "absent (apt-get install android-libboringssl)",
                 nc ? dlerror() : "");
        globfree(&g);
        return 0;
    }
    globfree(&g);
#define SYM(field, name) \
    do { \
        *(void **)&B.field = dlsym(B.dl, name); \
        if (B.field == NULL) { \
            snprintf(g_boring_note, sizeof(g_boring_note), "%s lacks %s", B.path, name); \
            dlclose(B.dl); \
            B.dl = NULL; \
            return 0; \
        } \
    } while (0)
    SYM(aead_chacha, "EVP_aead_chacha20_poly1305");
    SYM(aead_xchacha, "EVP_aead_xchacha20_poly1305");
    SYM(ctx_new, "EVP_AEAD_CTX_new");
    SYM(ctx_free, "EVP_AEAD_CTX_free");
    SYM(ctx_init, "EVP_AEAD_CTX_init");
    SYM(ctx_cleanup, "EVP_AEAD_CTX_cleanup");
    SYM(seal, "EVP_AEAD_CTX_seal");
    SYM(open, "EVP_AEAD_CTX_open");
    SYM(chacha_20, "CRYPTO_chacha_20");
    SYM(poly_init, "CRYPTO_poly1305_init");
    SYM(poly_update, "CRYPTO_poly1305_update");
    SYM(poly_finish, "CRYPTO_poly1305_finish");
#undef SYM
    snprintf(g_boring_note, sizeof(g_boring_note), "%s (dlopen, RTLD_DEEPBIND)", B.path);
    return 1;
}

void load_comparison_libraries(void)
{
#ifdef BENCH_HAVE_SODIUM
    if (!cfg.no_sodium) {
        if (sodium_init() < 0)
            die("sodium_init failed");
        g_have_sodium = 1;
    }
#endif
    g_have_boring = boring_load();
}

/* ------------------------------------------------------------------ */
/* Per-operation loops: one message per iteration                      */

/* --- BoringSSL --- */

static int boring_seal(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24];
    size_t ol;

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(nonce, j->ivlen, j->seq++);
        if (!B.seal(j->bctx, j->b->out, &ol, n + TAG_LEN, nonce, j->ivlen, j->b->in, n,
                    g_aad, j->aadlen))
            return 0;
    }
    return 1;
}

static int boring_seal_rekey(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24], key[KEY_LEN];
    size_t ol;

    for (uint64_t i = 0; i < iters; i++) {
        make_key(key, j->seq);
        make_nonce(nonce, j->ivlen, j->seq++);
        B.ctx_cleanup(j->bctx);
        if (!B.ctx_init(j->bctx, j->aead, key, KEY_LEN, TAG_LEN, NULL)
            || !B.seal(j->bctx, j->b->out, &ol, n + TAG_LEN, nonce, j->ivlen, j->b->in, n,
                       g_aad, j->aadlen))
            return 0;
    }
    return 1;
}

static int boring_seal_newctx(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24];
    size_t ol;

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(nonce, j->ivlen, j->seq++);
        void *c = B.ctx_new(j->aead, g_key, KEY_LEN, TAG_LEN);
        int ok = c != NULL && B.seal(c, j->b->out, &ol, n + TAG_LEN, nonce, j->ivlen,
                                     j->b->in, n, g_aad, j->aadlen);
        B.ctx_free(c);
        if (!ok)
            return 0;
    }
    return 1;
}

static int boring_open(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24];
    size_t ol;

    for (uint64_t i = 0; i < iters; i++) {
        unsigned k = (unsigned)(j->seq++ & 1);

        make_nonce(nonce, j->ivlen, OPEN_SEQ + k);
        if (!B.open(j->bctx, j->b->out, &ol, n, nonce, j->ivlen, j->b->ct[k], n + TAG_LEN,
                    g_aad, j->aadlen))
            return 0;
    }
    return 1;
}

static int boring_chacha(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[12];

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(nonce, 12, j->seq++);
        B.chacha_20(j->b->out, j->b->in, n, g_key, nonce, 1);
    }
    return 1;
}

static int boring_poly(job *j, size_t n, uint64_t iters)
{
    uint8_t key[KEY_LEN];

    for (uint64_t i = 0; i < iters; i++) {
        make_key(key, j->seq++);
        B.poly_init(j->bstate, key);
        B.poly_update(j->bstate, j->b->in, n);
        B.poly_finish(j->bstate, j->b->out);
    }
    return 1;
}

/* --- libsodium --- */
#ifdef BENCH_HAVE_SODIUM
static int sodium_seal(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24];
    unsigned long long cl;

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(nonce, j->ivlen, j->seq++);
        int r = j->ivlen == 24
                    ? crypto_aead_xchacha20poly1305_ietf_encrypt(j->b->out, &cl, j->b->in, n, g_aad,
                                                                 j->aadlen, NULL, nonce, g_key)
                    : crypto_aead_chacha20poly1305_ietf_encrypt(j->b->out, &cl, j->b->in, n, g_aad,
                                                                j->aadlen, NULL, nonce, g_key);
        if (r != 0)
            return 0;
    }
    return 1;
}

/* libsodium has no key schedule: a fresh key costs it nothing extra, which is the point of the row. */
static int sodium_seal_rekey(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24], key[KEY_LEN];
    unsigned long long cl;

    for (uint64_t i = 0; i < iters; i++) {
        make_key(key, j->seq);
        make_nonce(nonce, j->ivlen, j->seq++);
        if (crypto_aead_chacha20poly1305_ietf_encrypt(j->b->out, &cl, j->b->in, n, g_aad,
                                                      j->aadlen, NULL, nonce, key) != 0)
            return 0;
    }
    return 1;
}

static int sodium_open(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24];
    unsigned long long ml;

    for (uint64_t i = 0; i < iters; i++) {
        unsigned k = (unsigned)(j->seq++ & 1);

        make_nonce(nonce, j->ivlen, OPEN_SEQ + k);
        int r = j->ivlen == 24
                    ? crypto_aead_xchacha20poly1305_ietf_decrypt(j->b->out, &ml, NULL, j->b->ct[k],
                                                                 n + TAG_LEN, g_aad, j->aadlen, nonce,
                                                                 g_key)
                    : crypto_aead_chacha20poly1305_ietf_decrypt(j->b->out, &ml, NULL, j->b->ct[k],
                                                                n + TAG_LEN, g_aad, j->aadlen, nonce,
                                                                g_key);
        if (r != 0)
            return 0;
    }
    return 1;
}

static int sodium_chacha(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[12];

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(nonce, 12, j->seq++);
        if (crypto_stream_chacha20_ietf_xor_ic(j->b->out, j->b->in, n, nonce, 1, g_key) != 0)
            return 0;
    }
    return 1;
}

static int sodium_poly(job *j, size_t n, uint64_t iters)
{
    uint8_t key[KEY_LEN];

    for (uint64_t i = 0; i < iters; i++) {
        make_key(key, j->seq++);
        if (crypto_onetimeauth_poly1305(j->b->out, j->b->in, n, key) != 0)
            return 0;
    }
    return 1;
}
#endif

/* --- jobs --- */

/* Sets up j (impl IM_BORING or IM_SODIUM) for its operation; 0 when not offered. */
int libs_job_init(job *j)
{
    const opdef *op = j->op;
    int impl = j->impl;

    if (impl == IM_BORING) {
        if (!g_have_boring || op->kind == K_TLS || op->kind == K_STREAM)
            return 0;
        j->aead = op->x ? B.aead_xchacha() : B.aead_chacha();
        switch (op->kind) {
        case K_SEAL:
        case K_OPEN:
        case K_REKEY:
            j->bctx = xalloc(BORING_CTX_BYTES);
            if (!B.ctx_init(j->bctx, j->aead, g_key, KEY_LEN, TAG_LEN, NULL))
                die("BoringSSL EVP_AEAD_CTX_init failed");
            j->run = op->kind == K_SEAL ? boring_seal
                     : op->kind == K_OPEN ? boring_open : boring_seal_rekey;
            return 1;
        case K_NEWCTX: j->run = boring_seal_newctx; return 1;
        case K_CHACHA: j->run = boring_chacha; return 1;
        case K_POLY:
            j->bstate = xalloc(BORING_POLY_STATE);
            j->run = boring_poly;
            return 1;
        default: return 0;
        }
    }
#ifdef BENCH_HAVE_SODIUM
    if (impl == IM_SODIUM && g_have_sodium) {
        switch (op->kind) {
        case K_SEAL: j->run = sodium_seal; return 1;
        case K_OPEN: j->run = sodium_open; return 1;
        case K_REKEY: j->run = sodium_seal_rekey; return 1;
        case K_CHACHA: j->run = sodium_chacha; return 1;
        case K_POLY: j->run = sodium_poly; return 1;
        default: break; /* no context object to renew */
        }
    }
#endif
    return 0;
}

void libs_job_free(job *j)
{
    if (j->bctx != NULL) {
        B.ctx_cleanup(j->bctx);
        free(j->bctx);
    }
    free(j->bstate);
}
