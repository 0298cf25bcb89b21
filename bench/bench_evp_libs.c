/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: the comparison libraries, for seal, open (XChaCha too),
 * chacha20 and poly1305. BoringSSL (Debian's android-libboringssl) through
 * dlopen, since its symbols clash with OpenSSL's; libsodium when it was
 * found at configure time.
 */
#include "bench_evp.h"

#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#ifdef BENCH_HAVE_SODIUM
#include <sodium.h>
#endif

int g_have_sodium, g_have_boring;
char g_boring_note[PATH_MAX + 64];

/* EVP_AEAD_CTX is 600 bytes in the Debian headers, poly1305_state 512: our own storage. */
#define BORING_STATE 1024

static struct {
    void *dl;
    const void *(*aead_chacha)(void);
    const void *(*aead_xchacha)(void);
    int (*ctx_init)(void *ctx, const void *aead, const uint8_t *key, size_t key_len,
                    size_t tag_len, void *engine);
    void (*ctx_cleanup)(void *ctx);
    int (*seal)(const void *ctx, uint8_t *out, size_t *out_len, size_t max_out,
                const uint8_t *nonce, size_t nonce_len, const uint8_t *in, size_t in_len,
                const uint8_t *ad, size_t ad_len); /* EVP_AEAD_CTX_open has the same type */
    int (*open)(const void *ctx, uint8_t *out, size_t *out_len, size_t max_out,
                const uint8_t *nonce, size_t nonce_len, const uint8_t *in, size_t in_len,
                const uint8_t *ad, size_t ad_len);
    void (*chacha_20)(uint8_t *out, const uint8_t *in, size_t in_len, const uint8_t key[32],
                      const uint8_t nonce[12], uint32_t counter);
    void (*poly_init)(void *state, const uint8_t key[32]);
    void (*poly_update)(void *state, const uint8_t *in, size_t in_len);
    void (*poly_finish)(void *state, uint8_t mac[16]);
} B;

static int boring_load(void)
{
    const char *path = cfg.boring_path ? cfg.boring_path : getenv("BENCH_BORINGSSL");
    glob_t g = { 0 };

    if (cfg.no_boring) {
        snprintf(g_boring_note, sizeof(g_boring_note), "disabled (--no-boringssl)");
        return 0;
    }
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* the sanitizer runtime refuses RTLD_DEEPBIND, and without it the symbols would clash */
    snprintf(g_boring_note, sizeof(g_boring_note), "left out under a sanitizer");
    return 0;
#endif
    if (path == NULL && glob("/usr/lib/*/android/libcrypto.so.0", 0, NULL, &g) == 0)
        path = g.gl_pathv[0];
    if (path != NULL)
        B.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    snprintf(g_boring_note, sizeof(g_boring_note), "%s%s",
             path ? path : "absent (apt-get install android-libboringssl)",
             path == NULL ? "" : B.dl ? " (dlopen, RTLD_DEEPBIND)" : " not loadable");
    globfree(&g);
    if (B.dl == NULL)
        return 0;
#define SYM(field, name)                                                              \
    if ((*(void **)&B.field = dlsym(B.dl, name)) == NULL) {                           \
        snprintf(g_boring_note, sizeof(g_boring_note), "the library lacks %s", name); \
        return 0;                                                                     \
    }
    SYM(aead_chacha, "EVP_aead_chacha20_poly1305");
    SYM(aead_xchacha, "EVP_aead_xchacha20_poly1305");
    SYM(ctx_init, "EVP_AEAD_CTX_init");
    SYM(ctx_cleanup, "EVP_AEAD_CTX_cleanup");
    SYM(seal, "EVP_AEAD_CTX_seal");
    SYM(open, "EVP_AEAD_CTX_open");
    SYM(chacha_20, "CRYPTO_chacha_20");
    SYM(poly_init, "CRYPTO_poly1305_init");
    SYM(poly_update, "CRYPTO_poly1305_update");
    SYM(poly_finish, "CRYPTO_poly1305_finish");
#undef SYM
    return 1;
}

void load_comparison_libraries(void)
{
#ifdef BENCH_HAVE_SODIUM
    if (!cfg.no_sodium && sodium_init() < 0)
        die("sodium_init failed");
    g_have_sodium = !cfg.no_sodium;
#endif
    g_have_boring = boring_load();
}

/* ------------------------------------------------------------------ */
/* Loops: one message per iteration                                    */

static int boring_seal(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24];
    size_t ol;

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(nonce, j->ivlen, j->seq++);
        if (!B.seal(j->bctx, j->b->out, &ol, n + TAG_LEN, nonce, j->ivlen, j->b->in, n, g_aad,
                    j->aadlen))
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
        if (!B.open(j->bctx, j->b->out, &ol, n, nonce, j->ivlen, j->b->ct[k], n + TAG_LEN, g_aad,
                    j->aadlen))
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
        B.poly_init(j->bctx, key);
        B.poly_update(j->bctx, j->b->in, n);
        B.poly_finish(j->bctx, j->b->out);
    }
    return 1;
}

#ifdef BENCH_HAVE_SODIUM
static int sodium_seal(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24];
    unsigned long long cl;

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(nonce, j->ivlen, j->seq++);
        if ((j->ivlen == 24 ? crypto_aead_xchacha20poly1305_ietf_encrypt
                            : crypto_aead_chacha20poly1305_ietf_encrypt)(
                j->b->out, &cl, j->b->in, n, g_aad, j->aadlen, NULL, nonce, g_key) != 0)
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
        if ((j->ivlen == 24 ? crypto_aead_xchacha20poly1305_ietf_decrypt
                            : crypto_aead_chacha20poly1305_ietf_decrypt)(
                j->b->out, &ml, NULL, j->b->ct[k], n + TAG_LEN, g_aad, j->aadlen, nonce, g_key)
            != 0)
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

/* j (BoringSSL or libsodium) for its operation: 0 when not offered. */
int libs_job_init(job *j)
{
    const opdef *op = j->op;
    int plain = !(op->flags & (F_REKEY | F_NEWCTX)) && op->arg == 0;

    if (!plain || (op->kind != K_SEAL && op->kind != K_OPEN && op->kind != K_CHACHA
                   && op->kind != K_POLY))
        return 0;
    if (j->impl == IM_BORING && g_have_boring) {
        j->bctx = calloc(1, BORING_STATE);
        if (j->bctx == NULL)
            die("out of memory");
        if (op->kind == K_SEAL || op->kind == K_OPEN) {
            j->aead = op->flags & F_X ? B.aead_xchacha() : B.aead_chacha();
            if (!B.ctx_init(j->bctx, j->aead, g_key, KEY_LEN, TAG_LEN, NULL))
                die("BoringSSL EVP_AEAD_CTX_init failed");
        }
        j->run = op->kind == K_SEAL ? boring_seal : op->kind == K_OPEN ? boring_open
                 : op->kind == K_CHACHA ? boring_chacha : boring_poly;
        return 1;
    }
#ifdef BENCH_HAVE_SODIUM
    if (j->impl == IM_SODIUM && g_have_sodium) {
        j->run = op->kind == K_SEAL ? sodium_seal : op->kind == K_OPEN ? sodium_open
                 : op->kind == K_CHACHA ? sodium_chacha : sodium_poly;
        return 1;
    }
#endif
    return 0;
}

void libs_job_free(job *j)
{
    if (j->aead != NULL)
        B.ctx_cleanup(j->bctx);
    free(j->bctx);
}
