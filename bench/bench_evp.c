/*
 * bench_evp: chapoly against OpenSSL's default provider (and libsodium,
 * BoringSSL when present), measured the way applications call them.
 *
 * Method (see bench/README.md):
 * - One process, one private OSSL_LIB_CTX holding both providers. Every
 *   (operation, size) cell runs each implementation for a calibrated number
 *   of messages (one "sample"); repetitions are the outer loop, so the five
 *   (or more) samples of a cell are spread over the whole run, while the
 *   implementations of one cell run back to back in a rotating order.
 *   Reported: median ns/op, spread (max-min)/median, and speed ratios that are
 *   the median of per-repetition ratios of adjacent samples.
 * - All implementations of an operation see the same key, nonce sequence,
 *   13-byte AAD, input buffer and output buffer (out-of-place, tag right
 *   after the ciphertext), and before any timing each one's output for the
 *   same input is compared with a reference (the default provider, else
 *   libsodium, else BoringSSL). An implementation that disagrees or fails is
 *   reported BROKEN and never timed.
 * - ns come from CLOCK_MONOTONIC; cycles are core clocks, converted with the
 *   frequency of a dependent imul chain measured in this process (imul r64
 *   has a 3-cycle latency on every x86-64 core of the last decade), not TSC.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#ifdef BENCH_HAVE_SODIUM
#include <sodium.h>
#endif

#define AAD_LEN 13
#define TAG_LEN 16
#define KEY_LEN 32
#define TLS_MAX_RECORD 16384
#define MAX_REPS 64
#define CHECK_SEQ 0x0123456789abcdefULL
#define OPEN_SEQ 0x5eed000000000000ULL

/* ------------------------------------------------------------------ */
/* Implementations                                                     */

enum { IM_CHAPOLY, IM_DEFAULT, IM_BORING, IM_SODIUM, IM_N };
static const char *const impl_name[IM_N] = { "chapoly", "default", "boringssl", "libsodium" };
/* Reference order for the output check and for preparing ciphertexts. */
static const int ref_order[IM_N] = { IM_DEFAULT, IM_SODIUM, IM_BORING, IM_CHAPOLY };

/* Operations. */
enum kind { K_SEAL, K_OPEN, K_REKEY, K_NEWCTX, K_CHACHA, K_POLY, K_TLS };
typedef struct opdef {
    const char *name;
    enum kind kind;
    int x;               /* AEAD: 1 = XChaCha20-Poly1305; TLS: protocol version */
    const char *title;
} opdef;

static const opdef ops[] = {
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
};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))

/* ------------------------------------------------------------------ */
/* Settings                                                            */

static size_t default_sizes[] = { 16, 64, 256, 576, 1200, 1350, 4096, 16384, 65536 };
static size_t quick_sizes[] = { 16, 256, 1350, 16384 };
static size_t thread_sizes[] = { 64, 1350, 16384 };

static struct {
    size_t sizes[64];
    int nsizes, sizes_given;
    int op_on[N_OPS];
    int ops_given;
    int reps;
    double sample_ms;
    int quick;
    int threads;
    double thread_ms;
    const char *csv, *json, *plot;
    const char *module;
    const char *boring_path;
    const char *loop;
    int no_boring, no_sodium;
} cfg;

/* ------------------------------------------------------------------ */
/* Utilities                                                           */

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("bench_evp: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    ERR_print_errors_fp(stderr);
    exit(1);
}

static void *xalloc(size_t n)
{
    void *p = aligned_alloc(64, (n + 63) & ~(size_t)63);

    if (p == NULL)
        die("out of memory");
    memset(p, 0, n); /* fault the pages in before any timing */
    return p;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double t[MAX_REPS * 4];

    if (n <= 0)
        return 0;
    memcpy(t, v, (size_t)n * sizeof(double));
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return n & 1 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
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

static uint8_t g_key[KEY_LEN];
static uint8_t g_aad[AAD_LEN];

/* Same nonce sequence for every implementation: fixed prefix, LE counter at the end. */
static inline void make_nonce(uint8_t *nonce, size_t len, uint64_t seq)
{
    for (size_t i = 0; i < len - 8; i++)
        nonce[i] = (uint8_t)(0xa0 + i);
    for (int i = 0; i < 8; i++)
        nonce[len - 8 + i] = (uint8_t)(seq >> (8 * i));
}

/* Per-message key for the re-keying operations: master key with the counter XORed in. */
static inline void make_key(uint8_t key[KEY_LEN], uint64_t seq)
{
    memcpy(key, g_key, KEY_LEN);
    for (int i = 0; i < 8; i++)
        key[i] ^= (uint8_t)(seq >> (8 * i));
}

/* ------------------------------------------------------------------ */
/* Core clock                                                          */

static double g_ghz;      /* median of the probes, used for conversion */
static double g_ghz_probe[MAX_REPS + 4];
static int g_nprobe;
static double g_tsc_ghz;

#if defined(__x86_64__) && defined(__GNUC__)
static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;

    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* A chain of dependent imuls runs at one per 3 core cycles whatever the TSC says. */
static double imul_ghz_once(uint64_t loops, double *tsc_ghz)
{
    uint64_t x = 3, n = loops;
    uint64_t c0 = rdtsc();
    double t0 = now_ns();

    __asm__ volatile(".p2align 4\n"
                     "1:\n\t"
                     "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
                     "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
                     "dec %1\n\t"
                     "jnz 1b\n"
                     : "+r"(x), "+r"(n)
                     :
                     : "cc");
    double t1 = now_ns();
    uint64_t c1 = rdtsc();
    if (tsc_ghz)
        *tsc_ghz = (double)(c1 - c0) / (t1 - t0);
    return 24.0 * (double)loops / (t1 - t0);
}

/* Best of a few short probes: an interrupted probe can only read low. */
static double probe_ghz(void)
{
    double best = 0, tsc = 0;

    for (int i = 0; i < 5; i++) {
        double t, g = imul_ghz_once(250000, &t); /* 6M cycles, ~1.5 ms */
        if (g > best) {
            best = g;
            tsc = t;
        }
    }
    if (g_nprobe < (int)(sizeof(g_ghz_probe) / sizeof(g_ghz_probe[0])))
        g_ghz_probe[g_nprobe++] = best;
    g_tsc_ghz = tsc;
    g_ghz = median(g_ghz_probe, g_nprobe);
    return best;
}

static void clock_warmup(void)
{
    double t0 = now_ns();

    while (now_ns() - t0 < 50e6) /* let the core leave any low-power state */
        imul_ghz_once(100000, NULL);
}
#else
static double probe_ghz(void)
{
    return 0;
}

static void clock_warmup(void)
{
}
#endif

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
static char g_boring_note[PATH_MAX + 64];
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

/* ------------------------------------------------------------------ */
/* OpenSSL library context                                             */

static OSSL_LIB_CTX *g_libctx;
static OSSL_PROVIDER *g_prov_chapoly, *g_prov_default;
static char g_module_desc[PATH_MAX + 64];
static char g_kernel[64];
static int g_have_sodium;
static int g_have_boring;

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

static OSSL_LIB_CTX *make_libctx(OSSL_PROVIDER **ours, OSSL_PROVIDER **dflt, char *desc,
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

static int read_counters(OSSL_PROVIDER *p, uint64_t *aead, uint64_t *tls)
{
    OSSL_PARAM pr[3] = { OSSL_PARAM_construct_uint64("chapoly-aead-messages", aead),
                         OSSL_PARAM_construct_uint64("chapoly-tls-records", tls),
                         OSSL_PARAM_construct_end() };

    *aead = *tls = UINT64_MAX;
    int ok = OSSL_PROVIDER_get_params(p, pr) && *aead != UINT64_MAX && *tls != UINT64_MAX;
    ERR_clear_error();
    return ok;
}

/* ------------------------------------------------------------------ */
/* Jobs: one implementation of one operation, with its own state.      */

typedef struct bufset {
    uint8_t *in;        /* plaintext, max size */
    uint8_t *out;       /* max + 16: ciphertext || tag, or plaintext, or MAC */
    uint8_t *ct[2];     /* open: two valid ciphertext || tag under two nonces */
    size_t ct_size;     /* size the ct ring currently holds */
    const opdef *ct_op; /* and for which operation */
    size_t max;
} bufset;

typedef struct tls_pair {
    SSL_CTX *cctx, *sctx;
    SSL *cli, *srv;
} tls_pair;

typedef struct job job;
typedef int (*run_fn)(job *j, size_t n, uint64_t iters);

struct job {
    const opdef *op;
    int impl;
    run_fn run;
    bufset *b;
    uint64_t seq;        /* message counter: nonce, and key for re-keying ops */
    size_t ivlen;
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;
    EVP_MAC *mac;
    EVP_MAC_CTX *mctx;
    const void *aead;    /* BoringSSL EVP_AEAD */
    void *bctx;          /* BoringSSL EVP_AEAD_CTX (own storage for re-keying) */
    void *bstate;        /* BoringSSL poly1305_state */
    tls_pair *tls;
};

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

/* --- TLS through libssl --- */

typedef struct tls_cred {
    EVP_PKEY *key;
    X509 *cert;
} tls_cred;

static tls_cred make_cred(OSSL_LIB_CTX *lc)
{
    tls_cred c = { EVP_PKEY_Q_keygen(lc, NULL, "EC", "P-256"), X509_new_ex(lc, NULL) };
    X509_NAME *nm;

    if (c.key == NULL || c.cert == NULL)
        die("TLS key/cert allocation failed");
    nm = X509_get_subject_name(c.cert);
    if (!X509_set_version(c.cert, 2)
        || !ASN1_INTEGER_set(X509_get_serialNumber(c.cert), 1)
        || !X509_gmtime_adj(X509_getm_notBefore(c.cert), -3600)
        || !X509_gmtime_adj(X509_getm_notAfter(c.cert), 86400)
        || !X509_set_pubkey(c.cert, c.key)
        || !X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (const unsigned char *)"bench", -1,
                                       -1, 0)
        || !X509_set_issuer_name(c.cert, nm)
        || !X509_sign(c.cert, c.key, EVP_sha256()))
        die("TLS self-signed certificate failed");
    return c;
}

static void tls_free(tls_pair *t)
{
    if (t == NULL)
        return;
    SSL_free(t->cli);
    SSL_free(t->srv);
    SSL_CTX_free(t->cctx);
    SSL_CTX_free(t->sctx);
    free(t);
}

static SSL_CTX *tls_ctx(OSSL_LIB_CTX *lc, const tls_cred *cr, const char *propq, int version)
{
    SSL_CTX *c = SSL_CTX_new_ex(lc, propq, TLS_method());

    if (c == NULL
        || !SSL_CTX_set_min_proto_version(c, version)
        || !SSL_CTX_set_max_proto_version(c, version)
        || (version == TLS1_3_VERSION
                ? !SSL_CTX_set_ciphersuites(c, "TLS_CHACHA20_POLY1305_SHA256")
                : !SSL_CTX_set_cipher_list(c, "ECDHE-ECDSA-CHACHA20-POLY1305"))
        || !SSL_CTX_use_certificate(c, cr->cert)
        || !SSL_CTX_use_PrivateKey(c, cr->key)
        || !SSL_CTX_set_num_tickets(c, 0)) {
        SSL_CTX_free(c);
        return NULL;
    }
    return c;
}

/* A connected client/server pair; each side fetches its record cipher with its own propq. */
static tls_pair *tls_new(OSSL_LIB_CTX *lc, const tls_cred *cr, const char *propq_cli,
                         const char *propq_srv, int version)
{
    tls_pair *t = calloc(1, sizeof(*t));
    BIO *bc = NULL, *bs = NULL;
    int done_c = 0, done_s = 0;

    if (t == NULL)
        return NULL;
    t->cctx = tls_ctx(lc, cr, propq_cli, version);
    t->sctx = tls_ctx(lc, cr, propq_srv, version);
    if (t->cctx == NULL || t->sctx == NULL)
        goto err;
    t->cli = SSL_new(t->cctx);
    t->srv = SSL_new(t->sctx);
    /* Room for two full records in flight each way. */
    if (t->cli == NULL || t->srv == NULL || !BIO_new_bio_pair(&bc, 40000, &bs, 40000))
        goto err;
    SSL_set_bio(t->cli, bc, bc);
    SSL_set_bio(t->srv, bs, bs);
    SSL_set_connect_state(t->cli);
    SSL_set_accept_state(t->srv);
    for (int round = 0; round < 64 && !(done_c && done_s); round++) {
        if (!done_c) {
            int r = SSL_do_handshake(t->cli);
            if (r == 1)
                done_c = 1;
            else if (SSL_get_error(t->cli, r) != SSL_ERROR_WANT_READ
                     && SSL_get_error(t->cli, r) != SSL_ERROR_WANT_WRITE)
                goto err;
        }
        if (!done_s) {
            int r = SSL_do_handshake(t->srv);
            if (r == 1)
                done_s = 1;
            else if (SSL_get_error(t->srv, r) != SSL_ERROR_WANT_READ
                     && SSL_get_error(t->srv, r) != SSL_ERROR_WANT_WRITE)
                goto err;
        }
    }
    if (!done_c || !done_s || strstr(SSL_get_cipher_name(t->cli), "CHACHA20") == NULL)
        goto err;
    return t;
err:
    fprintf(stderr, "bench_evp: TLS %s handshake (client %s, server %s) failed\n",
            version == TLS1_3_VERSION ? "1.3" : "1.2", propq_cli, propq_srv);
    ERR_print_errors_fp(stderr);
    tls_free(t);
    return NULL;
}

static int tls_record(job *j, size_t n, uint64_t iters)
{
    SSL *cli = j->tls->cli, *srv = j->tls->srv;

    for (uint64_t i = 0; i < iters; i++) {
        size_t got = 0;

        if (SSL_write(cli, j->b->in, (int)n) != (int)n)
            return 0;
        while (got < n) {
            int r = SSL_read(srv, j->b->out + got, (int)(n - got));
            if (r <= 0)
                return 0;
            got += (size_t)r;
        }
    }
    return 1;
}

/*
 * Prove that "?provider=chapoly" really routes libssl's records through
 * chapoly (and "?provider=default" does not): a second library context whose
 * chapoly instance counts messages (CHAPOLY_STATS=1 is read at provider init;
 * the timed context does not count).
 */
static int tls_proof[2]; /* [0] TLS 1.2, [1] TLS 1.3: 1 proven, 0 not, -1 unknown */

static void prove_tls_routing(void)
{
    char *old = getenv("CHAPOLY_STATS") ? strdup(getenv("CHAPOLY_STATS")) : NULL;
    OSSL_PROVIDER *ours, *dflt;
    char desc[PATH_MAX + 64];

    setenv("CHAPOLY_STATS", "1", 1);
    OSSL_LIB_CTX *lc = make_libctx(&ours, &dflt, desc, sizeof(desc));
    if (old) {
        setenv("CHAPOLY_STATS", old, 1);
        free(old);
    } else {
        unsetenv("CHAPOLY_STATS");
    }
    tls_cred cr = make_cred(lc);
    uint8_t buf[64] = { 0 };

    for (int v = 0; v < 2; v++) {
        int version = v ? TLS1_3_VERSION : TLS1_2_VERSION;
        uint64_t a0, r0, a1, r1, a2, r2;

        tls_proof[v] = -1;
        if (!read_counters(ours, &a0, &r0))
            continue;
        tls_pair *tc = tls_new(lc, &cr, "?provider=chapoly", "?provider=chapoly", version);
        bufset bs = { .in = buf, .out = buf };
        job jc = { .tls = tc, .b = &bs };
        int ok = tc != NULL && tls_record(&jc, 32, 1);
        tls_free(tc);
        read_counters(ours, &a1, &r1);
        tls_pair *td = tls_new(lc, &cr, "?provider=default", "?provider=default", version);
        job jd = { .tls = td, .b = &bs };
        ok = ok && td != NULL && tls_record(&jd, 32, 1);
        tls_free(td);
        read_counters(ours, &a2, &r2);
        /* TLS 1.2 goes through the "tlsaad" record mode; TLS 1.3 through init/update/final. */
        int used = v ? a1 > a0 : r1 > r0;
        int clean = a2 == a1 && r2 == r1;
        tls_proof[v] = ok && used && clean;
    }
    X509_free(cr.cert);
    EVP_PKEY_free(cr.key);
    OSSL_PROVIDER_unload(ours);
    OSSL_PROVIDER_unload(dflt);
    OSSL_LIB_CTX_free(lc);
}

static tls_cred g_cred;
static int g_cred_made;

/* chapoly seals, default opens, and the other way round. */
static int tls_cross_check(int version, size_t n, bufset *b)
{
    for (int dir = 0; dir < 2; dir++) {
        tls_pair *x = tls_new(g_libctx, &g_cred, dir ? "?provider=default" : "?provider=chapoly",
                              dir ? "?provider=chapoly" : "?provider=default", version);
        job tmp = { .tls = x, .b = b };

        memset(b->out, 0x5a, n);
        int ok = x != NULL && tls_record(&tmp, n, 1) && memcmp(b->out, b->in, n) == 0;
        tls_free(x);
        if (!ok)
            return 0;
    }
    return 1;
}

/* --- job construction --- */

static const char *evp_name(const opdef *op)
{
    switch (op->kind) {
    case K_CHACHA:
        return "ChaCha20";
    case K_POLY:
        return "POLY1305";
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
static job *job_new(const opdef *op, int impl, bufset *b)
{
    job *j = calloc(1, sizeof(*j));

    if (j == NULL || g_njobs == (int)(sizeof(g_all_jobs) / sizeof(g_all_jobs[0])))
        die("out of memory");
    g_all_jobs[g_njobs++] = j; /* freed at exit */
    j->op = op;
    j->impl = impl;
    j->b = b;
    j->ivlen = op->x && op->kind != K_TLS ? 24 : 12;
    j->seq = 1;

    if (impl == IM_CHAPOLY || impl == IM_DEFAULT) {
        if (op->kind == K_TLS) {
            char q[32];

            if (!g_cred_made) {
                g_cred = make_cred(g_libctx);
                g_cred_made = 1;
            }
            snprintf(q, sizeof(q), "?%s", propq_of(impl));
            j->tls = tls_new(g_libctx, &g_cred, q, q, op->x);
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
        default: goto none;
        }
        return j;
    }
    if (impl == IM_BORING) {
        if (!g_have_boring || op->kind == K_TLS)
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

/* ------------------------------------------------------------------ */
/* Cells, checking, calibration                                        */

typedef struct cell {
    const opdef *op;
    size_t size;
    job *jobs[IM_N];
    job *prep;               /* open: seals the ciphertexts with the reference */
    uint64_t iters[IM_N];
    double ns[IM_N][MAX_REPS];
    int broken[IM_N];
    char why[IM_N][96];
    int dirty[IM_N];         /* samples with no undisturbed burst */
    int checked;             /* outputs compared against a reference */
    int ref;                 /* which implementation was the reference */
} cell;

static int job_ok_or_note(cell *c, int im, int ok, const char *what)
{
    if (!ok && !c->broken[im]) {
        c->broken[im] = 1;
        snprintf(c->why[im], sizeof(c->why[im]), "%s", what);
        ERR_clear_error();
    }
    return ok;
}

static void prepare_ct(cell *c, bufset *b)
{
    if (b->ct_op == c->op && b->ct_size == c->size)
        return;
    for (unsigned k = 0; k < 2; k++) {
        c->prep->seq = OPEN_SEQ + k;
        if (!c->prep->run(c->prep, c->size, 1))
            die("could not prepare %s ciphertexts with %s", c->op->name, impl_name[c->prep->impl]);
        memcpy(b->ct[k], b->out, c->size + TAG_LEN);
    }
    b->ct_op = c->op;
    b->ct_size = c->size;
}

/* Output of one message of size n, comparable across implementations. */
static size_t result_len(const opdef *op, size_t n)
{
    switch (op->kind) {
    case K_POLY: return TAG_LEN;
    case K_CHACHA: case K_OPEN: case K_TLS: return n;
    default: return n + TAG_LEN;
    }
}

static void check_cell(cell *c, bufset *b)
{
    size_t n = c->size, len = result_len(c->op, n);
    uint8_t *ref = malloc(len), *got = malloc(len);
    int have_ref = 0;

    if (ref == NULL || got == NULL)
        die("out of memory");
    if (c->prep)
        prepare_ct(c, b);
    for (int r = 0; r < IM_N; r++) {
        int im = ref_order[r];
        job *j = c->jobs[im];

        if (j == NULL || c->broken[im])
            continue;
        memset(b->out, 0xa5, n + TAG_LEN);
        j->seq = c->op->kind == K_OPEN ? 0 : CHECK_SEQ;
        if (!job_ok_or_note(c, im, j->run(j, n, 1), "call failed"))
            continue;
        memcpy(got, b->out, len);
        if (c->op->kind == K_OPEN) {
            /* The ciphertexts come from the reference, so the plaintext is the oracle. */
            job_ok_or_note(c, im, memcmp(got, b->in, n) == 0, "wrong plaintext");
            c->ref = c->prep->impl;
            if (c->prep->impl != im)
                c->checked = 1;
            continue;
        }
        if (c->op->kind == K_TLS) {
            job_ok_or_note(c, im, memcmp(got, b->in, n) == 0, "wrong plaintext");
            c->ref = IM_DEFAULT;
            /* Both ends of that pair use the same provider: cross it with the default one. */
            if (im == IM_CHAPOLY && c->jobs[IM_DEFAULT] != NULL && !c->broken[im])
                job_ok_or_note(c, im, tls_cross_check(c->op->x, n, b),
                               "records not interoperable with the default provider");
            c->checked = 1;
            continue;
        }
        if (!have_ref) {
            memcpy(ref, got, len);
            have_ref = 1;
            c->ref = im;
            continue;
        }
        c->checked = 1;
        job_ok_or_note(c, im, memcmp(got, ref, len) == 0, "output differs from reference");
    }
    free(ref);
    free(got);
}

/* Thread CPU time: excludes the time this thread sat preempted (the machine is shared). */
static double cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*
 * A sample is made of short bursts timed with CLOCK_MONOTONIC. A burst during
 * which the thread got less than CLEAN_FRAC of the CPU (preempted, or
 * interrupted for long) is thrown away and run again, so a loaded machine
 * makes the run longer rather than the numbers wrong.
 */
#define CLEAN_FRAC 0.98
static int g_bursts = 1;           /* clean bursts per sample */
static double g_burst_ns;
static uint64_t g_bursts_run, g_bursts_dropped, g_samples_dirty;

static void calibrate(cell *c, int im, double burst_ns)
{
    job *j = c->jobs[im];
    uint64_t it = 1;
    double t, best;

    for (;;) {
        double t0 = cpu_ns();
        if (!job_ok_or_note(c, im, j->run(j, c->size, it), "call failed while calibrating"))
            return;
        t = cpu_ns() - t0;
        if (t >= burst_ns / 4 || it >= (1ULL << 40))
            break;
        it *= t < burst_ns / 64 ? 8 : 2;
    }
    best = t;
    for (int k = 0; k < 2; k++) { /* the fastest of three: the least disturbed */
        double t0 = cpu_ns();
        if (!job_ok_or_note(c, im, j->run(j, c->size, it), "call failed while calibrating"))
            return;
        t = cpu_ns() - t0;
        best = t < best ? t : best;
    }
    uint64_t want = (uint64_t)(burst_ns * (double)it / best);
    c->iters[im] = want ? want : 1;
}

static double sample(cell *c, int im)
{
    job *j = c->jobs[im];
    uint64_t it = c->iters[im];
    double wall = 0, dirty_wall = 0, dirty_frac = -1;
    int clean = 0, tries = 0;

    if (!job_ok_or_note(c, im, j->run(j, c->size, it), "call failed")) /* warm caches, predictors */
        return 0;
    while (clean < g_bursts && tries < 4 * g_bursts) {
        tries++;
        double w0 = now_ns(), c0 = cpu_ns();
        int ok = j->run(j, c->size, it);
        double c1 = cpu_ns(), w1 = now_ns();
        if (!job_ok_or_note(c, im, ok, "call failed while timing"))
            return 0;
        double w = w1 - w0, frac = (c1 - c0) / w;
        if (frac >= CLEAN_FRAC) {
            wall += w;
            clean++;
        } else if (frac > dirty_frac) {
            dirty_frac = frac;
            dirty_wall = w;
        }
    }
    g_bursts_run += (uint64_t)tries;
    g_bursts_dropped += (uint64_t)(tries - clean);
    if (clean == 0) { /* never ran undisturbed: keep the least disturbed burst, and say so */
        g_samples_dirty++;
        c->dirty[im]++;
        return dirty_wall / (double)it;
    }
    return wall / ((double)clean * (double)it);
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

typedef struct result {
    double ns, ns_min, ns_max, ratio[IM_N]; /* ratio[x] = ns(x)/ns(this), per-rep median */
    int valid;
} result;

static result summarize(const cell *c, int im, int reps)
{
    result r = { 0 };

    if (c->jobs[im] == NULL || c->broken[im])
        return r;
    r.valid = 1;
    r.ns = median(c->ns[im], reps);
    r.ns_min = r.ns_max = c->ns[im][0];
    for (int i = 1; i < reps; i++) {
        if (c->ns[im][i] < r.ns_min)
            r.ns_min = c->ns[im][i];
        if (c->ns[im][i] > r.ns_max)
            r.ns_max = c->ns[im][i];
    }
    for (int x = 0; x < IM_N; x++) {
        double q[MAX_REPS];

        if (c->jobs[x] == NULL || c->broken[x])
            continue;
        for (int i = 0; i < reps; i++)
            q[i] = c->ns[x][i] / c->ns[im][i];
        r.ratio[x] = median(q, reps);
    }
    return r;
}

static double mbps(size_t n, double ns)
{
    return ns > 0 ? (double)n * 1e3 / ns : 0;
}

static void print_ratio(double r)
{
    if (r > 0)
        printf(" %9.2fx", r);
    else
        printf(" %10s", "-");
}

static void print_tables(cell *cells, int ncells, int reps)
{
    const opdef *cur = NULL;

    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci];

        if (c->op != cur) {
            cur = c->op;
            printf("\n== %s: %s\n", cur->name, cur->title);
            printf("%7s  %-10s %11s %10s %8s %9s %7s %10s %10s %10s  %s\n", "bytes", "impl",
                   "ns/op", "cycles/op", "c/B", "MB/s", "spread", "vs default", "vs boring",
                   "vs sodium", "");
        }
        for (int im = 0; im < IM_N; im++) {
            if (c->jobs[im] == NULL)
                continue;
            printf("%7zu  %-10s", c->size, impl_name[im]);
            if (c->broken[im]) {
                printf(" BROKEN: %s (not timed)\n", c->why[im]);
                continue;
            }
            result r = summarize(c, im, reps);
            double cyc = r.ns * g_ghz;
            printf(" %11.1f", r.ns);
            if (g_ghz > 0)
                printf(" %10.0f %8.2f", cyc, cyc / (double)c->size);
            else
                printf(" %10s %8s", "-", "-");
            printf(" %9.1f %6.1f%%", mbps(c->size, r.ns), 100 * (r.ns_max - r.ns_min) / r.ns);
            print_ratio(im == IM_DEFAULT ? 0 : r.ratio[IM_DEFAULT]);
            print_ratio(im == IM_BORING ? 0 : r.ratio[IM_BORING]);
            print_ratio(im == IM_SODIUM ? 0 : r.ratio[IM_SODIUM]);
            if (!c->checked)
                printf("  (unchecked: no second implementation)");
            else if (c->ref == im && c->op->kind != K_OPEN && c->op->kind != K_TLS)
                printf("  ref");
            printf("\n");
        }
    }
}

static void write_csv(const char *path, cell *cells, int ncells, int reps)
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        die("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "op,bytes,impl,status,ns_median,ns_min,ns_max,cycles_median,cycles_per_byte,"
               "mb_per_s,ratio_vs_default,ratio_vs_boringssl,ratio_vs_libsodium,reps,iters,"
               "core_ghz,kernel\n");
    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci];

        for (int im = 0; im < IM_N; im++) {
            if (c->jobs[im] == NULL)
                continue;
            result r = summarize(c, im, reps);
            fprintf(f, "%s,%zu,%s,%s,", c->op->name, c->size, impl_name[im],
                    c->broken[im] ? "broken" : c->checked ? "ok" : "unchecked");
            if (!r.valid) {
                fprintf(f, ",,,,,,,,,%d,,%.4f,%s\n", reps, g_ghz, g_kernel);
                continue;
            }
            fprintf(f, "%.2f,%.2f,%.2f,%.1f,%.4f,%.2f,", r.ns, r.ns_min, r.ns_max, r.ns * g_ghz,
                    r.ns * g_ghz / (double)c->size, mbps(c->size, r.ns));
            for (int x = IM_DEFAULT; x < IM_N; x++)
                if (x != im && r.ratio[x] > 0)
                    fprintf(f, "%.4f,", r.ratio[x]);
                else
                    fprintf(f, ",");
            fprintf(f, "%d,%llu,%.4f,%s\n", reps, (unsigned long long)c->iters[im], g_ghz,
                    g_kernel);
        }
    }
    fclose(f);
}

/* ------------------------------------------------------------------ */
/* Threads                                                             */

typedef struct thr_arg {
    job *j;
    size_t n;
    uint64_t chunk;
    double dur_ns;
    pthread_barrier_t *bar;
    double mbps;
    double cpu, wall;    /* this thread's CPU time and wall time in the round */
    int ok;
} thr_arg;

static void *thr_main(void *p)
{
    thr_arg *a = p;
    uint64_t done = 0;
    double t0, t;

    pthread_barrier_wait(a->bar);
    double c0 = cpu_ns();
    t0 = now_ns();
    do {
        if (!a->j->run(a->j, a->n, a->chunk)) {
            a->ok = 0;
            return NULL;
        }
        done += a->chunk;
        t = now_ns() - t0;
    } while (t < a->dur_ns);
    a->mbps = (double)done * (double)a->n * 1e3 / t;
    a->cpu = cpu_ns() - c0;
    a->wall = t;
    a->ok = 1;
    return NULL;
}

static int g_thread_broken;

/*
 * Aggregate MB/s of nt threads, each with its own job (contexts, buffers).
 * *share = CPU time the threads got / wall time: below ~0.95 other load, not
 * the implementation, limited the round.
 */
static double thread_round(job **jobs, int nt, size_t n, uint64_t chunk, double dur_ns,
                           double *share)
{
    pthread_t th[256];
    thr_arg a[256];
    pthread_barrier_t bar;
    double agg = 0, cpu = 0, wall = 0;

    pthread_barrier_init(&bar, NULL, (unsigned)nt);
    for (int t = 0; t < nt; t++) {
        a[t] = (thr_arg){ .j = jobs[t], .n = n, .chunk = chunk, .dur_ns = dur_ns, .bar = &bar };
        if (pthread_create(&th[t], NULL, thr_main, &a[t]) != 0)
            die("pthread_create failed");
    }
    for (int t = 0; t < nt; t++) {
        pthread_join(th[t], NULL);
        if (!a[t].ok)
            g_thread_broken = 1;
        agg += a[t].mbps;
        cpu += a[t].cpu;
        wall += a[t].wall;
    }
    pthread_barrier_destroy(&bar);
    *share = wall > 0 ? cpu / wall : 0;
    return agg;
}

static bufset *g_all_bufs[260];
static int g_nbufs;

static bufset *bufset_new(size_t max)
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

static void run_threads(FILE *json)
{
    int nt = cfg.threads;
    size_t sizes[64];
    int ns = 0;
    const opdef *seal = &ops[0];
    int counts[2] = { 1, nt };
    int ncount = nt > 1 ? 2 : 1;

    if (cfg.sizes_given) {
        for (int i = 0; i < cfg.nsizes; i++)
            sizes[ns++] = cfg.sizes[i];
    } else if (cfg.quick) {
        sizes[ns++] = 64;
        sizes[ns++] = 16384;
    } else {
        for (size_t i = 0; i < sizeof(thread_sizes) / sizeof(thread_sizes[0]); i++)
            sizes[ns++] = thread_sizes[i];
    }
    size_t max = 0;
    for (int i = 0; i < ns; i++)
        if (sizes[i] > max)
            max = sizes[i];

    /* jobs[impl][thread], every thread with its own buffers and contexts */
    job *jobs[IM_N][256] = { { 0 } };
    bufset *bs[256];
    for (int t = 0; t < nt; t++) {
        bs[t] = bufset_new(max);
        for (int im = 0; im < IM_N; im++)
            jobs[im][t] = job_new(seal, im, bs[t]);
    }
    double dur = cfg.thread_ms * 1e6;
    int reps = cfg.reps;

    printf("\n== threads: %s, %d thread%s each with its own contexts and buffers,"
           " %.0f ms per round, median of %d rounds\n",
           "ChaCha20-Poly1305 seal (as 'seal')", nt, nt > 1 ? "s" : "", cfg.thread_ms, reps);
    printf("  (cpu = CPU time the threads got / their wall time; well below 100%% means other\n"
           "   processes, not the implementation, set the result)\n");
    printf("%7s  %-10s %12s %12s %9s %11s %7s %7s\n", "bytes", "impl", "1T MB/s",
           nt > 1 ? "NT MB/s" : "-", "scaling", "vs default", "cpu 1T", nt > 1 ? "cpu NT" : "");
    if (json)
        fprintf(json, ",\n  \"threads\": {\"threads\": %d, \"round_ms\": %.1f, \"rows\": [", nt,
                cfg.thread_ms);
    int first_row = 1;
    for (int si = 0; si < ns; si++) {
        size_t n = sizes[si];
        uint64_t chunk[IM_N] = { 0 };
        double agg[IM_N][2][MAX_REPS], share[IM_N][2][MAX_REPS];

        for (int im = 0; im < IM_N; im++) {
            if (jobs[im][0] == NULL)
                continue;
            /* ~0.5 ms between clock reads */
            cell tmp = { .op = seal, .size = n };
            tmp.jobs[im] = jobs[im][0];
            calibrate(&tmp, im, 0.5e6);
            chunk[im] = tmp.broken[im] ? 0 : tmp.iters[im];
        }
        for (int r = 0; r < reps; r++)
            for (int k = 0; k < ncount; k++)
                for (int s = 0; s < IM_N; s++) {
                    int im = (s + r) % IM_N;
                    if (chunk[im] == 0)
                        continue;
                    agg[im][k][r] = thread_round(jobs[im], counts[k], n, chunk[im], dur,
                                                 &share[im][k][r]);
                }
        double med[IM_N][2] = { { 0 } }, cpu[IM_N][2] = { { 0 } };
        for (int im = 0; im < IM_N; im++)
            for (int k = 0; k < ncount; k++)
                if (chunk[im]) {
                    med[im][k] = median(agg[im][k], reps);
                    cpu[im][k] = median(share[im][k], reps);
                }
        for (int im = 0; im < IM_N; im++) {
            if (chunk[im] == 0)
                continue;
            double hi = med[im][ncount - 1];
            printf("%7zu  %-10s %12.1f", n, impl_name[im], med[im][0]);
            if (ncount > 1)
                printf(" %12.1f %8.2fx", hi, hi / med[im][0]);
            else
                printf(" %12s %9s", "-", "-");
            if (im != IM_DEFAULT && med[IM_DEFAULT][ncount - 1] > 0)
                printf(" %10.2fx", hi / med[IM_DEFAULT][ncount - 1]);
            else
                printf(" %11s", "-");
            printf(" %6.0f%%", 100 * cpu[im][0]);
            if (ncount > 1)
                printf(" %6.0f%%", 100 * cpu[im][1]);
            printf("\n");
            if (json) {
                fprintf(json, "%s\n    {\"bytes\": %zu, \"impl\": \"%s\", \"mb_per_s_1\": %.2f, "
                              "\"mb_per_s_n\": %.2f, \"scaling\": %.4f, \"cpu_share_1\": %.3f, "
                              "\"cpu_share_n\": %.3f}",
                        first_row ? "" : ",", n, impl_name[im], med[im][0], hi,
                        hi / med[im][0], cpu[im][0], cpu[im][ncount - 1]);
                first_row = 0;
            }
        }
    }
    if (json)
        fprintf(json, "\n  ]}");
    if (g_thread_broken)
        printf("  (a thread saw a failing call: numbers above are not valid)\n");
}

/* ------------------------------------------------------------------ */
/* Plot                                                                */

static int plot(const char *png, cell *cells, int ncells, int reps)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("\n(no plot: gnuplot not installed; apt-get install gnuplot-nox)\n");
        return 0;
    }
    FILE *g = popen("gnuplot", "w");
    int lines = 0;

    if (g == NULL)
        return 0;
    for (int im = 0; im < IM_N; im++) {
        fprintf(g, "$d%d << EOD\n", im);
        for (int ci = 0; ci < ncells; ci++) {
            cell *c = &cells[ci];
            if (strcmp(c->op->name, "seal") != 0 || c->jobs[im] == NULL || c->broken[im])
                continue;
            result r = summarize(c, im, reps);
            fprintf(g, "%zu %.3f\n", c->size, mbps(c->size, r.ns));
        }
        fprintf(g, "EOD\n");
    }
    fprintf(g, "set terminal pngcairo size 960,600 noenhanced font ',10'\n"
               "set output '%s'\n"
               "set title 'ChaCha20-Poly1305 seal through EVP (13-byte AAD, fresh nonce), "
               "kernel %s, median of %d'\n"
               "set xlabel 'message bytes'\nset ylabel 'MB/s (10^6 bytes/s)'\n"
               "set logscale x 2\nset logscale y 10\nset grid\nset key left top\n"
               "set format x '%%.0f'\n",
               png, g_kernel, reps);
    fprintf(g, "plot ");
    for (int im = 0; im < IM_N; im++) {
        int any = 0;
        for (int ci = 0; ci < ncells; ci++)
            if (strcmp(cells[ci].op->name, "seal") == 0 && cells[ci].jobs[im] && !cells[ci].broken[im])
                any = 1;
        if (!any)
            continue;
        fprintf(g, "%s$d%d using 1:2 with linespoints lw 2 title '%s'", lines ? ", " : "", im,
                impl_name[im]);
        lines++;
    }
    fprintf(g, "\n");
    int rc = pclose(g);
    if (lines == 0 || rc != 0) {
        printf("\n(plot failed: no seal results or gnuplot error)\n");
        return 0;
    }
    printf("\nplot: %s\n", png);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_evp [options]\n"
            "  --module PATH     chapoly.so or its directory (else OPENSSL_MODULES, CHAPOLY_MODULE,\n"
            "                    the build tree, OpenSSL's module directory)\n"
            "  --sizes a,b,...   message sizes in bytes (default 16,64,256,576,1200,1350,4096,16384,65536)\n"
            "  --ops a,b,...     operations (default all):");
    for (size_t i = 0; i < N_OPS; i++)
        fprintf(f, " %s", ops[i].name);
    fprintf(f,
            "\n"
            "  --reps N          repetitions, median reported (default 5, minimum 5)\n"
            "  --time MS         target time of one sample (default 24, --quick 4)\n"
            "  --quick           short run: sizes 16,256,1350,16384, 4 ms samples\n"
            "  --threads N       seal scaling with N threads (only this, unless --ops is given)\n"
            "  --thread-time MS  duration of one thread round (default 300, --quick 80)\n"
            "  --csv FILE        write all results as CSV\n"
            "  --json FILE       write all results as JSON\n"
            "  --plot FILE.png   seal MB/s vs size, one line per implementation (gnuplot)\n"
            "  --boringssl PATH  BoringSSL libcrypto to dlopen (default /usr/lib/*/android/libcrypto.so.0)\n"
            "  --no-boringssl, --no-sodium   leave those out\n"
            "  --loop OP:IMPL:BYTES:COUNT   run one loop untimed and exit, for profilers, e.g.\n"
            "                    valgrind --tool=callgrind --toggle-collect=bench_loop bench_evp --loop seal:chapoly:16:20000\n"
            "Environment: CHAPOLY_KERNEL=portable|avx2|avx512vl|avx512 selects chapoly's kernels.\n");
}

static void parse_sizes(const char *s)
{
    char *dup = strdup(s), *save = NULL;

    cfg.nsizes = 0;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long v = strtoul(t, &end, 0);
        if (*end != '\0' || v == 0 || v > (1UL << 26) || cfg.nsizes >= 64)
            die("bad size '%s' (1..67108864, at most 64 sizes)", t);
        cfg.sizes[cfg.nsizes++] = v;
    }
    free(dup);
    if (cfg.nsizes == 0)
        die("--sizes needs at least one size");
}

static void parse_ops(const char *s)
{
    char *dup = strdup(s), *save = NULL;

    memset(cfg.op_on, 0, sizeof(cfg.op_on));
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;
        int all = strcmp(t, "all") == 0;
        for (i = 0; i < N_OPS; i++)
            if (all || strcmp(t, ops[i].name) == 0)
                cfg.op_on[i] = 1;
        if (!all && strcmp(t, "none") != 0) {
            for (i = 0; i < N_OPS && strcmp(t, ops[i].name) != 0; i++)
                ;
            if (i == N_OPS)
                die("unknown operation '%s' (--help lists them)", t);
        }
    }
    free(dup);
    cfg.ops_given = 1;
}

static void parse_args(int argc, char **argv)
{
    int time_given = 0, ttime_given = 0;

    cfg.reps = 5;
    cfg.sample_ms = 24;
    cfg.thread_ms = 300;
    for (size_t i = 0; i < N_OPS; i++)
        cfg.op_on[i] = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die("%s needs a value", a), ""))
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--module")) {
            cfg.module = NEXT();
        } else if (!strcmp(a, "--sizes")) {
            parse_sizes(NEXT());
            cfg.sizes_given = 1;
        } else if (!strcmp(a, "--ops")) {
            parse_ops(NEXT());
        } else if (!strcmp(a, "--reps")) {
            cfg.reps = atoi(NEXT());
        } else if (!strcmp(a, "--time")) {
            cfg.sample_ms = atof(NEXT());
            time_given = 1;
        } else if (!strcmp(a, "--quick")) {
            cfg.quick = 1;
        } else if (!strcmp(a, "--threads")) {
            cfg.threads = atoi(NEXT());
        } else if (!strcmp(a, "--thread-time")) {
            cfg.thread_ms = atof(NEXT());
            ttime_given = 1;
        } else if (!strcmp(a, "--csv")) {
            cfg.csv = NEXT();
        } else if (!strcmp(a, "--json")) {
            cfg.json = NEXT();
        } else if (!strcmp(a, "--plot")) {
            cfg.plot = NEXT();
        } else if (!strcmp(a, "--boringssl")) {
            cfg.boring_path = NEXT();
        } else if (!strcmp(a, "--no-boringssl")) {
            cfg.no_boring = 1;
        } else if (!strcmp(a, "--loop")) {
            cfg.loop = NEXT();
        } else if (!strcmp(a, "--no-sodium")) {
            cfg.no_sodium = 1;
        } else {
            usage(stderr);
            die("unknown option %s", a);
        }
#undef NEXT
    }
    if (cfg.reps < 5 || cfg.reps > MAX_REPS)
        die("--reps must be 5..%d", MAX_REPS);
    if (cfg.threads < 0 || cfg.threads > 256)
        die("--threads must be 1..256");
    if (cfg.sample_ms <= 0 || cfg.thread_ms <= 0)
        die("--time and --thread-time must be positive");
    if (cfg.quick && !time_given)
        cfg.sample_ms = 4;
    if (cfg.quick && !ttime_given)
        cfg.thread_ms = 80;
    double burst_ms = cfg.sample_ms >= 8 ? 2 : cfg.sample_ms / 4;
    g_burst_ns = burst_ms * 1e6;
    g_bursts = (int)(cfg.sample_ms / burst_ms + 0.5);
    if (g_bursts < 1)
        g_bursts = 1;
    if (!cfg.sizes_given) {
        const size_t *src = cfg.quick ? quick_sizes : default_sizes;
        size_t cnt = cfg.quick ? sizeof(quick_sizes) / sizeof(quick_sizes[0])
                               : sizeof(default_sizes) / sizeof(default_sizes[0]);
        for (size_t i = 0; i < cnt; i++)
            cfg.sizes[i] = src[i];
        cfg.nsizes = (int)cnt;
    }
    if (cfg.threads > 0 && !cfg.ops_given)
        memset(cfg.op_on, 0, sizeof(cfg.op_on));
}

/* ------------------------------------------------------------------ */

static void cleanup_all(void)
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
    if (g_cred_made) {
        X509_free(g_cred.cert);
        EVP_PKEY_free(g_cred.key);
    }
    OSSL_PROVIDER_unload(g_prov_chapoly);
    OSSL_PROVIDER_unload(g_prov_default);
    OSSL_LIB_CTX_free(g_libctx);
}

/* Not static and not inlined: the profiler's handle (callgrind --toggle-collect=bench_loop). */
__attribute__((noinline)) int bench_loop(job *j, size_t n, uint64_t count);
__attribute__((noinline)) int bench_loop(job *j, size_t n, uint64_t count)
{
    return j->run(j, n, count);
}

static int loop_mode(void)
{
    char opname[32], implname[32];
    unsigned long long bytes, count;
    const opdef *op = NULL;
    int im = -1;

    if (sscanf(cfg.loop, "%31[^:]:%31[^:]:%llu:%llu", opname, implname, &bytes, &count) != 4
        || bytes == 0 || bytes > (1ULL << 26))
        die("--loop wants OP:IMPL:BYTES:COUNT, e.g. seal:chapoly:16:20000");
    for (size_t i = 0; i < N_OPS; i++)
        if (strcmp(ops[i].name, opname) == 0)
            op = &ops[i];
    for (int i = 0; i < IM_N; i++)
        if (strcmp(impl_name[i], implname) == 0)
            im = i;
    if (op == NULL || im < 0)
        die("--loop: unknown operation or implementation in '%s'", cfg.loop);
    g_libctx = make_libctx(&g_prov_chapoly, &g_prov_default, g_module_desc, sizeof(g_module_desc));
    read_kernel_name();
    bufset *b = bufset_new((size_t)bytes);
    job *j = job_new(op, im, b);
    if (j == NULL)
        die("--loop: %s has no %s here", implname, opname);
    if (op->kind == K_OPEN) {
        job *p = NULL;
        for (size_t k = 0; k < N_OPS && p == NULL; k++)
            if (ops[k].kind == K_SEAL && ops[k].x == op->x)
                for (int r = 0; r < IM_N && p == NULL; r++)
                    p = job_new(&ops[k], ref_order[r], b);
        cell c = { .op = op, .size = (size_t)bytes, .prep = p };
        prepare_ct(&c, b);
    }
    if (!j->run(j, (size_t)bytes, 16)) /* first-call costs (lazy init) stay out of the loop */
        die("--loop: %s %s failed", implname, opname);
    int ok = bench_loop(j, (size_t)bytes, count);
    printf("%s %s %llu bytes x %llu: %s (chapoly kernel %s)\n", opname, implname, bytes, count,
           ok ? "ok" : "FAILED", g_kernel);
    cleanup_all();
    return ok ? 0 : 1;
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void cpu_model(char *out, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512], name[160] = "?";
    int family = -1, model = -1;

    snprintf(out, len, "?");
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *p = strchr(line, ':');
        if (p == NULL)
            continue;
        if (strncmp(line, "model name", 10) == 0) {
            p += 2;
            p[strcspn(p, "\n")] = '\0';
            snprintf(name, sizeof(name), "%s", p);
        } else if (strncmp(line, "cpu family", 10) == 0 && family < 0) {
            family = atoi(p + 1);
        } else if (strncmp(line, "model\t", 6) == 0 && model < 0) {
            model = atoi(p + 1);
        } else if (line[0] == '\n' && name[0] != '?') {
            break; /* first processor is enough */
        }
    }
    fclose(f);
    snprintf(out, len, "%s (family %d model %d), %ld online CPUs", name, family, model,
             sysconf(_SC_NPROCESSORS_ONLN));
}

int main(int argc, char **argv)
{
    double t_start = now_ns();
    double load0[3] = { 0 }, load1[3] = { 0 };
    char cpu[320];

    parse_args(argc, argv);
    getloadavg(load0, 3);
    cpu_model(cpu, sizeof(cpu));
    if (getenv("CHAPOLY_STATS") && strcmp(getenv("CHAPOLY_STATS"), "0") != 0)
        fprintf(stderr, "bench_evp: warning: CHAPOLY_STATS is set, chapoly counts every message\n");

    for (size_t i = 0; i < KEY_LEN; i++)
        g_key[i] = (uint8_t)(0x80 + i);
    fill(g_aad, AAD_LEN, 3);

#ifdef BENCH_HAVE_SODIUM
    if (!cfg.no_sodium) {
        if (sodium_init() < 0)
            die("sodium_init failed");
        g_have_sodium = 1;
    }
#endif
    g_have_boring = boring_load();

    if (cfg.loop)
        return loop_mode();
    prove_tls_routing();
    g_libctx = make_libctx(&g_prov_chapoly, &g_prov_default, g_module_desc, sizeof(g_module_desc));
    read_kernel_name();
    if (getenv("CHAPOLY_KERNEL") && *getenv("CHAPOLY_KERNEL")
        && strcmp(getenv("CHAPOLY_KERNEL"), "best") != 0
        && strcmp(getenv("CHAPOLY_KERNEL"), g_kernel) != 0)
        fprintf(stderr, "bench_evp: warning: CHAPOLY_KERNEL=%s asked, chapoly runs %s\n",
                getenv("CHAPOLY_KERNEL"), g_kernel);

    clock_warmup();
    probe_ghz();

    printf("bench_evp: chapoly vs OpenSSL default provider%s%s\n",
           g_have_boring ? ", BoringSSL" : "", g_have_sodium ? ", libsodium" : "");
    printf("  cpu        %s\n", cpu);
    printf("  openssl    %s\n", OpenSSL_version(OPENSSL_VERSION));
    printf("  chapoly    %s, kernel %s\n", g_module_desc, g_kernel);
#ifdef BENCH_HAVE_SODIUM
    printf("  libsodium  %s\n", g_have_sodium ? sodium_version_string() : "disabled (--no-sodium)");
#else
    printf("  libsodium  not built in (libsodium-dev absent at configure time)\n");
#endif
    printf("  boringssl  %s\n", g_boring_note);
    printf("  tls route  TLS 1.2 %s, TLS 1.3 %s (chapoly's message counters, separate context)\n",
           tls_proof[0] > 0 ? "proven" : tls_proof[0] == 0 ? "NOT PROVEN" : "unknown",
           tls_proof[1] > 0 ? "proven" : tls_proof[1] == 0 ? "NOT PROVEN" : "unknown");
    printf("  load avg   %.2f %.2f %.2f at start\n", load0[0], load0[1], load0[2]);

    /* Build the cells (operation x size) with one job per implementation and operation. */
    size_t maxsize = 0;
    for (int i = 0; i < cfg.nsizes; i++)
        if (cfg.sizes[i] > maxsize)
            maxsize = cfg.sizes[i];
    bufset *b = bufset_new(maxsize);
    cell *cells = calloc(N_OPS * (size_t)cfg.nsizes, sizeof(cell));
    int ncells = 0;
    for (size_t o = 0; o < N_OPS; o++) {
        if (!cfg.op_on[o])
            continue;
        job *jobs[IM_N] = { 0 };
        job *prep = NULL;
        int njobs = 0;
        for (int im = 0; im < IM_N; im++)
            if ((jobs[im] = job_new(&ops[o], im, b)) != NULL)
                njobs++;
        if (ops[o].kind == K_OPEN) {
            const opdef *sealop = NULL;
            for (size_t k = 0; k < N_OPS; k++)
                if (ops[k].kind == K_SEAL && ops[k].x == ops[o].x)
                    sealop = &ops[k];
            for (int r = 0; r < IM_N && prep == NULL; r++)
                prep = job_new(sealop, ref_order[r], b);
        }
        if (njobs == 0 || (ops[o].kind == K_OPEN && prep == NULL)) {
            printf("  (skipping %s: no implementation available)\n", ops[o].name);
            continue;
        }
        if (ops[o].kind == K_TLS && tls_proof[ops[o].x == TLS1_3_VERSION] == 0 && jobs[IM_CHAPOLY]) {
            printf("  (%s: chapoly's TLS records were not routed through chapoly: chapoly row dropped)\n",
                   ops[o].name);
            jobs[IM_CHAPOLY] = NULL;
        }
        for (int s = 0; s < cfg.nsizes; s++) {
            if (ops[o].kind == K_TLS && cfg.sizes[s] > TLS_MAX_RECORD)
                continue; /* a record carries at most 16384 bytes: per-record figures only */
            cell *c = &cells[ncells++];
            c->op = &ops[o];
            c->size = cfg.sizes[s];
            memcpy(c->jobs, jobs, sizeof(jobs));
            c->prep = prep;
        }
    }

    /* Check every output once, then calibrate. */
    int nbroken = 0;
    for (int ci = 0; ci < ncells; ci++) {
        check_cell(&cells[ci], b);
        for (int im = 0; im < IM_N; im++) {
            if (cells[ci].jobs[im] && !cells[ci].broken[im]) {
                if (cells[ci].prep)
                    prepare_ct(&cells[ci], b);
                calibrate(&cells[ci], im, g_burst_ns);
            }
            if (cells[ci].jobs[im] && cells[ci].broken[im]) {
                nbroken++;
                fprintf(stderr, "bench_evp: %s %zu bytes %s: %s\n", cells[ci].op->name,
                        cells[ci].size, impl_name[im], cells[ci].why[im]);
            }
        }
    }
    if (ncells > 0) {
        int nsamples = 0;
        for (int ci = 0; ci < ncells; ci++)
            for (int im = 0; im < IM_N; im++)
                nsamples += cells[ci].jobs[im] && !cells[ci].broken[im];
        printf("  plan       %d cells, %d samples of %d x %.1f ms bursts x %d repetitions"
               " (~%.0f s of CPU)\n", ncells, nsamples, g_bursts, g_burst_ns / 1e6, cfg.reps,
               nsamples * cfg.reps * (g_bursts + 1) * g_burst_ns / 1e9);
        fflush(stdout);
    }

    /* Repetitions outermost; implementations of a cell back to back, rotating who goes first. */
    for (int r = 0; r < cfg.reps; r++) {
        for (int ci = 0; ci < ncells; ci++) {
            cell *c = &cells[ci];
            if (c->prep)
                prepare_ct(c, b);
            for (int s = 0; s < IM_N; s++) {
                int im = (s + r + ci) % IM_N;
                if (c->jobs[im] && !c->broken[im])
                    c->ns[im][r] = sample(c, im);
            }
        }
        probe_ghz();
    }

    double lo = g_ghz_probe[0], hi = g_ghz_probe[0];
    for (int i = 1; i < g_nprobe; i++) {
        lo = g_ghz_probe[i] < lo ? g_ghz_probe[i] : lo;
        hi = g_ghz_probe[i] > hi ? g_ghz_probe[i] : hi;
    }
    if (ncells > 0) {
        printf("\nUnits: ns/op = median wall time per message (CLOCK_MONOTONIC); cycles = core clocks at\n"
               "%.2f GHz (dependent imul chain in this process, %d probes %.2f-%.2f GHz; TSC %.2f GHz);\n"
               "MB/s = 10^6 bytes/s; spread = (max-min)/median over %d repetitions; 'vs X' = ns(X)/ns(row),\n"
               ">1 means the row is faster than X (median of per-repetition ratios).\n",
               g_ghz, g_nprobe, lo, hi, g_tsc_ghz, cfg.reps);
        print_tables(cells, ncells, cfg.reps);
    }

    FILE *json = NULL;
    if (cfg.json) {
        json = fopen(cfg.json, "w");
        if (json == NULL)
            die("cannot write %s: %s", cfg.json, strerror(errno));
        fprintf(json, "{\n  \"meta\": {\"openssl\": ");
        json_str(json, OpenSSL_version(OPENSSL_VERSION));
        fprintf(json, ", \"chapoly_module\": ");
        json_str(json, g_module_desc);
        fprintf(json, ", \"kernel\": ");
        json_str(json, g_kernel);
        fprintf(json, ", \"cpu\": ");
        json_str(json, cpu);
        fprintf(json, ", \"boringssl\": ");
        json_str(json, g_boring_note);
        fprintf(json, ", \"libsodium\": %s, \"core_ghz\": %.4f, \"tsc_ghz\": %.4f, "
                      "\"reps\": %d, \"sample_ms\": %.1f, \"loadavg_start\": %.2f},\n",
                g_have_sodium ? "true" : "false", g_ghz, g_tsc_ghz, cfg.reps, cfg.sample_ms,
                load0[0]);
        fprintf(json, "  \"results\": [");
        int first = 1;
        for (int ci = 0; ci < ncells; ci++) {
            cell *c = &cells[ci];
            for (int im = 0; im < IM_N; im++) {
                if (c->jobs[im] == NULL)
                    continue;
                result r = summarize(c, im, cfg.reps);
                fprintf(json, "%s\n    {\"op\": \"%s\", \"bytes\": %zu, \"impl\": \"%s\", "
                              "\"status\": \"%s\"",
                        first ? "" : ",", c->op->name, c->size, impl_name[im],
                        c->broken[im] ? "broken" : c->checked ? "ok" : "unchecked");
                first = 0;
                if (r.valid) {
                    fprintf(json, ", \"ns\": %.2f, \"ns_min\": %.2f, \"ns_max\": %.2f, "
                                  "\"cycles\": %.1f, \"mb_per_s\": %.2f, \"samples_ns\": [",
                            r.ns, r.ns_min, r.ns_max, r.ns * g_ghz, mbps(c->size, r.ns));
                    for (int k = 0; k < cfg.reps; k++)
                        fprintf(json, "%s%.2f", k ? ", " : "", c->ns[im][k]);
                    fprintf(json, "], \"ratio\": {");
                    int f2 = 1;
                    for (int x = 0; x < IM_N; x++)
                        if (x != im && r.ratio[x] > 0) {
                            fprintf(json, "%s\"%s\": %.4f", f2 ? "" : ", ", impl_name[x], r.ratio[x]);
                            f2 = 0;
                        }
                    fprintf(json, "}");
                }
                fprintf(json, "}");
            }
        }
        fprintf(json, "\n  ]");
    }
    if (cfg.threads > 0)
        run_threads(json);
    if (json) {
        fprintf(json, "\n}\n");
        fclose(json);
    }
    if (cfg.csv && ncells > 0)
        write_csv(cfg.csv, cells, ncells, cfg.reps);
    if (cfg.plot && ncells > 0)
        plot(cfg.plot, cells, ncells, cfg.reps);

    getloadavg(load1, 3);
    printf("\nbursts dropped as preempted: %llu of %llu (%.1f%%); samples with no clean burst: %llu\n",
           (unsigned long long)g_bursts_dropped, (unsigned long long)g_bursts_run,
           g_bursts_run ? 100.0 * (double)g_bursts_dropped / (double)g_bursts_run : 0.0,
           (unsigned long long)g_samples_dirty);
    printf("load avg %.2f at end; total %.1f s%s\n", load1[0], (now_ns() - t_start) / 1e9,
           nbroken ? "; SOME IMPLEMENTATIONS BROKEN (see above)" : "");
    free(cells);
    cleanup_all();
    return nbroken || g_thread_broken ? 2 : 0;
}
