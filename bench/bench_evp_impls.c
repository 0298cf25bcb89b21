/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: the implementations under test and the work they all do.
 * chapoly and the default provider through EVP, BoringSSL's EVP_AEAD and
 * CRYPTO_* through dlopen, libsodium's one-shot calls; one loop per
 * (implementation, operation), run by a job that owns its contexts.
 */
#include "bench_evp.h"

#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <openssl/err.h>
#include <openssl/params.h>
#ifdef BENCH_HAVE_SODIUM
#include <sodium.h>
#endif

/* ------------------------------------------------------------------ */
/* Implementations                                                     */

const char *const impl_name[IM_N] = { "chapoly", "default", "boringssl", "libsodium" };
const int ref_order[IM_N] = { IM_DEFAULT, IM_SODIUM, IM_BORING, IM_CHAPOLY };

/* Operations. */
const opdef ops[] = {
    { "seal", K_SEAL, 0,
      "ChaCha20-Poly1305 seal, keyed context, fresh nonce + 13-byte AAD per message\n"
      "  (EVP: init(iv) + AAD update + update + final + get tag)" },
    { "open", K_OPEN, 0,
      "ChaCha20-Poly1305 open, keyed context, 13-byte AAD, nonce alternating between 2 valid ciphertexts\n"
      "  (EVP: init(iv) + set tag + AAD update + update + final)" },
    { "seal-rekey", K_REKEY, 0,
      "ChaCha20-Poly1305 seal with a fresh key and nonce per message (EVP: init(key, iv) + ...)" },
    { "seal-newctx", K_NEWCTX, 0,
      "ChaCha20-Poly1305 seal with a new context per message\n"
      "  (EVP: CTX_new + init(cipher, key, iv) + ... + CTX_free; BoringSSL: EVP_AEAD_CTX_new/free)" },
    { "xseal", K_SEAL, 1,
      "XChaCha20-Poly1305 seal, keyed context, fresh 24-byte nonce + 13-byte AAD (default provider has none)" },
    { "xopen", K_OPEN, 1,
      "XChaCha20-Poly1305 open, keyed context, 13-byte AAD (default provider has none)" },
    { "chacha20", K_CHACHA, 0,
      "ChaCha20 stream cipher, keyed context, fresh 16-byte IV (counter 1 || nonce) per message" },
    { "poly1305", K_POLY, 0,
      "Poly1305 one-time MAC, fresh key per message (EVP_MAC: init(key) + update + final)" },
    { "tls13", K_TLS, TLS1_3_VERSION,
      "TLS 1.3 TLS_CHACHA20_POLY1305_SHA256 record through libssl over a BIO pair:\n"
      "  SSL_write(n) on one side + SSL_read on the other = one seal + one open, per record" },
    { "tls12", K_TLS, TLS1_2_VERSION,
      "TLS 1.2 ECDHE-ECDSA-CHACHA20-POLY1305 record through libssl over a BIO pair:\n"
      "  SSL_write(n) + SSL_read = one seal + one open, per record" },
#define STREAM_OP(name, u)                                                                 \
    { name, K_STREAM, u,                                                                   \
      "ChaCha20-Poly1305 seal of one message fed in updates of " #u " bytes (as seal otherwise:\n" \
      "  init(iv) + 13-byte AAD + updates + final + get tag); bytes = the whole message" }
    STREAM_OP("stream16", 16),
    STREAM_OP("stream64", 64),
    STREAM_OP("stream256", 256),
    STREAM_OP("stream1k", 1024),
    STREAM_OP("stream4k", 4096),
    STREAM_OP("stream16k", 16384),
    { "stream-whole", K_STREAM, 0,
      "ChaCha20-Poly1305 seal of the same messages in one update: the one-shot the stream\n"
      "  operations are compared with (same calls as seal)" },
#undef STREAM_OP
};
_Static_assert(sizeof(ops) / sizeof(ops[0]) == N_OPS, "N_OPS counts the operations");

/* ------------------------------------------------------------------ */
/* Inputs and buffers                                                  */

static void *xalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);

    if (p == NULL)
        die("out of memory");
    memset(p, 0, n); /* fault the pages in before any timing */
    return p;
}

/* Deterministic fill, so runs are comparable; the values do not matter. */
static void fill(uint8_t *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;

    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 24);
    }
}

uint8_t g_key[KEY_LEN];
uint8_t g_aad[AAD_LEN];

void init_inputs(void)
{
    for (size_t i = 0; i < KEY_LEN; i++)
        g_key[i] = (uint8_t)(0x80 + i);
    fill(g_aad, AAD_LEN, 3);
}

static bufset *g_all_bufs[260];
static int g_nbufs;

bufset *bufset_new(size_t max)
{
    bufset *b = calloc(1, sizeof(*b));

    if (b == NULL || g_nbufs == (int)(sizeof(g_all_bufs) / sizeof(g_all_bufs[0])))
        die("out of memory");
    g_all_bufs[g_nbufs++] = b;
    b->max = max;
    b->in = xalloc(max + 64);
    b->out = xalloc(max + TAG_LEN + 64);
    b->ct[0] = xalloc(max + TAG_LEN + 64);
    b->ct[1] = xalloc(max + TAG_LEN + 64);
    fill(b->in, max, 7);
    return b;
}

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
#if defined(__SANITIZE_ADDRESS__)
    /* The sanitizer runtime refuses RTLD_DEEPBIND, and without it the symbols would clash. */
    snprintf(g_boring_note, sizeof(g_boring_note), "left out under AddressSanitizer");
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
/* OpenSSL library context                                             */

OSSL_LIB_CTX *g_libctx;
static OSSL_PROVIDER *g_prov_chapoly, *g_prov_default;
char g_module_desc[PATH_MAX + 64];
char g_kernel[64];
int g_have_sodium;
int g_have_boring;

/* Where chapoly.so comes from: --module, OPENSSL_MODULES, CHAPOLY_MODULE, the build tree. */
static OSSL_PROVIDER *load_chapoly(OSSL_LIB_CTX *lc, char *desc, size_t desclen)
{
    const char *src = NULL, *why = NULL;
    struct stat st;

    if (cfg.module) {
        src = cfg.module;
        why = "--module";
    } else if (getenv("OPENSSL_MODULES")) {
        src = getenv("OPENSSL_MODULES");
        why = "OPENSSL_MODULES";
    } else if (getenv("CHAPOLY_MODULE")) {
        src = getenv("CHAPOLY_MODULE");
        why = "CHAPOLY_MODULE";
    }
#ifdef BENCH_DEFAULT_MODULE
    else if (stat(BENCH_DEFAULT_MODULE, &st) == 0) {
        src = BENCH_DEFAULT_MODULE;
        why = "build tree";
    }
#endif
    if (src == NULL) {
        snprintf(desc, desclen, "chapoly from OpenSSL's module directory");
        return OSSL_PROVIDER_load(lc, "chapoly");
    }
    if (stat(src, &st) != 0)
        die("module path %s (%s): %s", src, why, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        char full[PATH_MAX];

        snprintf(full, sizeof(full), "%s/chapoly.so", src);
        snprintf(desc, desclen, "%s (%s)", full, why);
        if (!OSSL_PROVIDER_set_default_search_path(lc, src))
            return NULL;
        return OSSL_PROVIDER_load(lc, "chapoly");
    }
    /*
     * OpenSSL joins a relative name to its module directory, so hand it an
     * absolute path; the algorithms still carry provider=chapoly.
     */
    char abs[PATH_MAX];
    if (realpath(src, abs) == NULL)
        die("module path %s (%s): %s", src, why, strerror(errno));
    snprintf(desc, desclen, "%s (%s)", abs, why);
    return OSSL_PROVIDER_load(lc, abs);
}

OSSL_LIB_CTX *make_libctx(OSSL_PROVIDER **ours, OSSL_PROVIDER **dflt, char *desc,
                          size_t desclen)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();

    if (lc == NULL)
        die("OSSL_LIB_CTX_new failed");
    *dflt = OSSL_PROVIDER_load(lc, "default");
    if (*dflt == NULL)
        die("could not load the default provider");
    *ours = load_chapoly(lc, desc, desclen);
    if (*ours == NULL)
        die("could not load chapoly: %s", desc);
    return lc;
}

static void read_kernel_name(void)
{
    char *kp = NULL;
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_utf8_ptr("chapoly-kernel", &kp, 0),
                        OSSL_PARAM_construct_end() };

    if (OSSL_PROVIDER_get_params(g_prov_chapoly, p) && kp != NULL)
        snprintf(g_kernel, sizeof(g_kernel), "%s", kp);
    else
        snprintf(g_kernel, sizeof(g_kernel), "?");
    ERR_clear_error();
}

void open_bench_libctx(void)
{
    g_libctx = make_libctx(&g_prov_chapoly, &g_prov_default, g_module_desc, sizeof(g_module_desc));
    read_kernel_name();
}

/* ------------------------------------------------------------------ */
/* Per-operation loops: one message per iteration                      */

/* --- EVP AEAD --- */

static int evp_seal(job *j, size_t n, uint64_t iters)
{
    EVP_CIPHER_CTX *c = j->ctx;
    uint8_t *out = j->b->out, nonce[24];
    const uint8_t *in = j->b->in;
    int l, l2;

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(nonce, j->ivlen, j->seq++);
        if (!EVP_EncryptInit_ex(c, NULL, NULL, NULL, nonce)
            || !EVP_EncryptUpdate(c, NULL, &l, g_aad, AAD_LEN)
            || !EVP_EncryptUpdate(c, out, &l, in, (int)n)
            || !EVP_EncryptFinal_ex(c, out + l, &l2)
            || !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, out + n))
            return 0;
    }
    return 1;
}

/* seal with the text fed in updates of op->x bytes (0: one update). */
static int evp_stream(job *j, size_t n, uint64_t iters)
{
    EVP_CIPHER_CTX *c = j->ctx;
    uint8_t *out = j->b->out, nonce[24];
    const uint8_t *in = j->b->in;
    size_t u = j->op->x > 0 ? (size_t)j->op->x : n;
    int l, l2;

    for (uint64_t i = 0; i < iters; i++) {
        size_t done = 0;

        make_nonce(nonce, j->ivlen, j->seq++);
        if (!EVP_EncryptInit_ex(c, NULL, NULL, NULL, nonce)
            || !EVP_EncryptUpdate(c, NULL, &l, g_aad, AAD_LEN))
            return 0;
        while (done < n) {
            size_t m = n - done < u ? n - done : u;

            if (!EVP_EncryptUpdate(c, out + done, &l, in + done, (int)m))
                return 0;
            done += m;
        }
        if (!EVP_EncryptFinal_ex(c, out + n, &l2)
            || !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, out + n))
            return 0;
    }
    return 1;
}

static int evp_seal_rekey(job *j, size_t n, uint64_t iters)
{
    EVP_CIPHER_CTX *c = j->ctx;
    uint8_t *out = j->b->out, nonce[24], key[KEY_LEN];
    const uint8_t *in = j->b->in;
    int l, l2;

    for (uint64_t i = 0; i < iters; i++) {
        make_key(key, j->seq);
        make_nonce(nonce, j->ivlen, j->seq++);
        if (!EVP_EncryptInit_ex(c, NULL, NULL, key, nonce)
            || !EVP_EncryptUpdate(c, NULL, &l, g_aad, AAD_LEN)
            || !EVP_EncryptUpdate(c, out, &l, in, (int)n)
            || !EVP_EncryptFinal_ex(c, out + l, &l2)
            || !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, out + n))
            return 0;
    }
    return 1;
}

static int evp_seal_newctx(job *j, size_t n, uint64_t iters)
{
    uint8_t *out = j->b->out, nonce[24];
    const uint8_t *in = j->b->in;
    int l, l2;

    for (uint64_t i = 0; i < iters; i++) {
        EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

        make_nonce(nonce, j->ivlen, j->seq++);
        int ok = c != NULL
                 && EVP_EncryptInit_ex(c, j->cipher, NULL, g_key, nonce)
                 && EVP_EncryptUpdate(c, NULL, &l, g_aad, AAD_LEN)
                 && EVP_EncryptUpdate(c, out, &l, in, (int)n)
                 && EVP_EncryptFinal_ex(c, out + l, &l2)
                 && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, out + n);
        EVP_CIPHER_CTX_free(c);
        if (!ok)
            return 0;
    }
    return 1;
}

static int evp_open(job *j, size_t n, uint64_t iters)
{
    EVP_CIPHER_CTX *c = j->ctx;
    uint8_t *out = j->b->out, nonce[24];
    int l, l2;

    for (uint64_t i = 0; i < iters; i++) {
        unsigned k = (unsigned)(j->seq++ & 1);
        uint8_t *ct = j->b->ct[k];

        make_nonce(nonce, j->ivlen, OPEN_SEQ + k);
        if (!EVP_DecryptInit_ex(c, NULL, NULL, NULL, nonce)
            || !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, ct + n)
            || !EVP_DecryptUpdate(c, NULL, &l, g_aad, AAD_LEN)
            || !EVP_DecryptUpdate(c, out, &l, ct, (int)n)
            || EVP_DecryptFinal_ex(c, out + l, &l2) != 1)
            return 0;
    }
    return 1;
}

/* --- EVP ChaCha20 and Poly1305 --- */

static int evp_chacha(job *j, size_t n, uint64_t iters)
{
    EVP_CIPHER_CTX *c = j->ctx;
    uint8_t *out = j->b->out, iv[16] = { 1, 0, 0, 0 };
    const uint8_t *in = j->b->in;
    int l;

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(iv + 4, 12, j->seq++);
        if (!EVP_EncryptInit_ex(c, NULL, NULL, NULL, iv)
            || !EVP_EncryptUpdate(c, out, &l, in, (int)n))
            return 0;
    }
    return 1;
}

static int evp_poly(job *j, size_t n, uint64_t iters)
{
    EVP_MAC_CTX *m = j->mctx;
    uint8_t key[KEY_LEN];
    size_t ol;

    for (uint64_t i = 0; i < iters; i++) {
        make_key(key, j->seq++);
        if (!EVP_MAC_init(m, key, KEY_LEN, NULL)
            || !EVP_MAC_update(m, j->b->in, n)
            || !EVP_MAC_final(m, j->b->out, &ol, TAG_LEN))
            return 0;
    }
    return 1;
}

/* --- BoringSSL --- */

static int boring_seal(job *j, size_t n, uint64_t iters)
{
    uint8_t nonce[24];
    size_t ol;

    for (uint64_t i = 0; i < iters; i++) {
        make_nonce(nonce, j->ivlen, j->seq++);
        if (!B.seal(j->bctx, j->b->out, &ol, n + TAG_LEN, nonce, j->ivlen, j->b->in, n,
                    g_aad, AAD_LEN))
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
                       g_aad, AAD_LEN))
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
                                     j->b->in, n, g_aad, AAD_LEN);
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
                    g_aad, AAD_LEN))
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
                                                                 AAD_LEN, NULL, nonce, g_key)
                    : crypto_aead_chacha20poly1305_ietf_encrypt(j->b->out, &cl, j->b->in, n, g_aad,
                                                                AAD_LEN, NULL, nonce, g_key);
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
        if (crypto_aead_chacha20poly1305_ietf_encrypt(j->b->out, &cl, j->b->in, n, g_aad, AAD_LEN,
                                                      NULL, nonce, key) != 0)
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
                                                                 n + TAG_LEN, g_aad, AAD_LEN, nonce,
                                                                 g_key)
                    : crypto_aead_chacha20poly1305_ietf_decrypt(j->b->out, &ml, NULL, j->b->ct[k],
                                                                n + TAG_LEN, g_aad, AAD_LEN, nonce,
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

/* --- job construction --- */

static const char *evp_name(const opdef *op)
{
    switch (op->kind) {
    case K_CHACHA:
        return "ChaCha20";
    case K_POLY:
        return "POLY1305";
    case K_STREAM:
        return "ChaCha20-Poly1305";
    default:
        return op->x ? "XChaCha20-Poly1305" : "ChaCha20-Poly1305";
    }
}

static const char *propq_of(int impl)
{
    return impl == IM_CHAPOLY ? "provider=chapoly" : "provider=default";
}

static job *g_all_jobs[4096];
static int g_njobs;

static void job_free(job *j)
{
    EVP_CIPHER_CTX_free(j->ctx);
    EVP_CIPHER_free(j->cipher);
    EVP_MAC_CTX_free(j->mctx);
    EVP_MAC_free(j->mac);
    if (j->bctx != NULL) {
        B.ctx_cleanup(j->bctx);
        free(j->bctx);
    }
    free(j->bstate);
    tls_free(j->tls);
    free(j);
}

/* NULL when the implementation does not offer the operation (or is absent). */
job *job_new(const opdef *op, int impl, bufset *b)
{
    job *j = calloc(1, sizeof(*j));

    if (j == NULL || g_njobs == (int)(sizeof(g_all_jobs) / sizeof(g_all_jobs[0])))
        die("out of memory");
    g_all_jobs[g_njobs++] = j; /* freed at exit */
    j->op = op;
    j->impl = impl;
    j->b = b;
    j->ivlen = op->x && op->kind != K_TLS && op->kind != K_STREAM ? 24 : 12;
    j->seq = 1;

    if (impl == IM_CHAPOLY || impl == IM_DEFAULT) {
        if (op->kind == K_TLS) {
            char q[32];

            snprintf(q, sizeof(q), "?%s", propq_of(impl));
            j->tls = tls_pair_new(q, op->x);
            if (j->tls == NULL)
                goto none;
            j->run = tls_record;
            return j;
        }
        if (op->kind == K_POLY) {
            j->mac = EVP_MAC_fetch(g_libctx, "POLY1305", propq_of(impl));
            if (j->mac == NULL || (j->mctx = EVP_MAC_CTX_new(j->mac)) == NULL)
                goto none;
            j->run = evp_poly;
            return j;
        }
        j->cipher = EVP_CIPHER_fetch(g_libctx, evp_name(op), propq_of(impl));
        if (j->cipher == NULL)
            goto none; /* e.g. XChaCha20-Poly1305 in the default provider */
        if (strcmp(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(j->cipher)),
                   impl == IM_DEFAULT ? "default" : OSSL_PROVIDER_get0_name(g_prov_chapoly)) != 0)
            die("%s fetched from the wrong provider", evp_name(op));
        if (op->kind != K_NEWCTX) {
            uint8_t iv[24] = { 0 };

            j->ctx = EVP_CIPHER_CTX_new();
            if (j->ctx == NULL)
                die("out of memory");
            int enc = op->kind != K_OPEN;
            if (!EVP_CipherInit_ex(j->ctx, j->cipher, NULL, g_key, iv, enc))
                die("%s init (%s) failed", evp_name(op), impl_name[impl]);
        }
        switch (op->kind) {
        case K_SEAL: j->run = evp_seal; break;
        case K_OPEN: j->run = evp_open; break;
        case K_REKEY: j->run = evp_seal_rekey; break;
        case K_NEWCTX: j->run = evp_seal_newctx; break;
        case K_CHACHA: j->run = evp_chacha; break;
        case K_STREAM: j->run = evp_stream; break;
        default: goto none;
        }
        return j;
    }
    if (impl == IM_BORING) {
        if (!g_have_boring || op->kind == K_TLS || op->kind == K_STREAM)
            goto none;
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
            return j;
        case K_NEWCTX: j->run = boring_seal_newctx; return j;
        case K_CHACHA: j->run = boring_chacha; return j;
        case K_POLY:
            j->bstate = xalloc(BORING_POLY_STATE);
            j->run = boring_poly;
            return j;
        default: goto none;
        }
    }
#ifdef BENCH_HAVE_SODIUM
    if (impl == IM_SODIUM && g_have_sodium) {
        switch (op->kind) {
        case K_SEAL: j->run = sodium_seal; return j;
        case K_OPEN: j->run = sodium_open; return j;
        case K_REKEY: j->run = sodium_seal_rekey; return j;
        case K_CHACHA: j->run = sodium_chacha; return j;
        case K_POLY: j->run = sodium_poly; return j;
        default: break; /* no context object to renew */
        }
    }
#endif
none:
    ERR_clear_error();
    g_njobs--;
    job_free(j);
    return NULL;
}

void bench_cleanup(void)
{
    for (int i = 0; i < g_njobs; i++)
        job_free(g_all_jobs[i]);
    for (int i = 0; i < g_nbufs; i++) {
        free(g_all_bufs[i]->in);
        free(g_all_bufs[i]->out);
        free(g_all_bufs[i]->ct[0]);
        free(g_all_bufs[i]->ct[1]);
        free(g_all_bufs[i]);
    }
    g_njobs = g_nbufs = 0;
    tls_cred_free();
    OSSL_PROVIDER_unload(g_prov_chapoly);
    OSSL_PROVIDER_unload(g_prov_default);
    OSSL_LIB_CTX_free(g_libctx);
}
