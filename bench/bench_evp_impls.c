/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: the operations, the work they all do (key, AAD, nonces,
 * buffers), the library contexts, and chapoly, the default provider, the
 * base and the floor through EVP: one loop per operation, run by a job that
 * owns its contexts. BoringSSL and libsodium: bench_evp_libs.c.
 */
#include "bench_evp.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/params.h>
#ifdef BENCH_HAVE_SODIUM
#include <sodium.h>
#endif

const char *const impl_name[IM_N] = { "chapoly", "default", "base", "floor", "boringssl",
                                      "libsodium" };

#define AEAD_CALLS "init(iv), AAD update, update, final, tag"
const opdef ops[N_OPS] = {
    { "seal", K_SEAL, F_MAIN | F_SWEEP, 0, "ChaCha20-Poly1305 seal, keyed context, 13-byte AAD: " AEAD_CALLS },
    { "open", K_OPEN, F_MAIN | F_SWEEP, 0, "ChaCha20-Poly1305 open of 2 alternating ciphertexts: init(iv), set tag, AAD, update, final" },
    { "xseal", K_SEAL, F_X | F_MAIN | F_SWEEP, 0, "XChaCha20-Poly1305 seal, 24-byte nonce (the default provider has none)" },
    { "xopen", K_OPEN, F_X | F_MAIN | F_SWEEP, 0, "XChaCha20-Poly1305 open (the default provider has none)" },
    { "chacha20", K_CHACHA, F_MAIN | F_SWEEP, 0, "ChaCha20, keyed context: init(16-byte iv: counter 1, nonce), update" },
    { "poly1305", K_POLY, F_MAIN | F_SWEEP, 0, "POLY1305 MAC, a new key every message: EVP_MAC init(key), update, final" },
    { "tls13", K_TLS, F_MAIN | F_SWEEP, TLS1_3_VERSION, "TLS 1.3 record through libssl (SSL_write + SSL_read: one seal, one open)" },
    { "tls12", K_TLS, F_MAIN | F_SWEEP, TLS1_2_VERSION, "TLS 1.2 record through libssl (SSL_write + SSL_read: one seal, one open)" },
    { "seal-rekey", K_SEAL, F_REKEY | F_SWEEP, 0, "seal with a new key every message: init(key, iv), ..." },
    { "seal-newctx", K_SEAL, F_NEWCTX | F_SWEEP, 0, "seal with a new context every message: CTX_new, init(cipher, key, iv), ..., CTX_free" },
    { "stream16", K_SEAL, F_SWEEP, 16, "seal with the text in updates of 16 bytes" },
    { "stream64", K_SEAL, F_SWEEP, 64, "seal with the text in updates of 64 bytes" },
    { "stream256", K_SEAL, F_SWEEP, 256, "seal with the text in updates of 256 bytes" },
    { "stream1k", K_SEAL, F_SWEEP, 1024, "seal with the text in updates of 1024 bytes" },
    { "quic-hp", K_HP, F_SWEEP, 0, "QUIC header protection: init(16-byte sample) on a keyed ChaCha20 context, update" },
    { "quic-seal", K_SEAL, F_QUIC | F_SWEEP, 0, "QUIC packet seal: as seal with a 20-byte header as AAD" },
    { "quic-open", K_OPEN, F_QUIC | F_SWEEP, 0, "QUIC packet open: as open with a 20-byte header as AAD" },
    { "pipeline", K_PIPE, 0, 0, "OpenSSL 3.5 pipeline seal of --pipes messages per batch, ns per message (default: single seals)" },
};

const opdef *op_named(const char *name)
{
    for (size_t i = 0; i < N_OPS; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Inputs and buffers                                                  */

uint8_t g_key[KEY_LEN];
uint8_t g_aad[QUIC_AAD_LEN];

/* Deterministic fill, so runs are comparable; the values do not matter. */
static void fill(uint8_t *p, size_t n, uint64_t x)
{
    x = x * 0x9e3779b97f4a7c15ULL + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 24);
    }
}

void init_inputs(void)
{
    for (size_t i = 0; i < KEY_LEN; i++)
        g_key[i] = (uint8_t)(0x80 + i);
    fill(g_aad, sizeof(g_aad), 3);
}

/*
 * Placements, drawn per process unless given (the headers print them):
 * where the output lies against the input mod 4096 (--placement; a load
 * that matches an earlier store in bits 0-11 can wait on it), and how many
 * bytes the heap gives away before any context is made (--heap-shift:
 * where the contexts fall in their pages). Both moved cells by more than a
 * code change does (docs/performance.md), and applications get any of them.
 */
int parse_offset(const char *opt, const char *s, int step)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (*s == '\0' || *end != '\0' || v < 0 || v > 4096 - step || v % step != 0)
        die("%s must be a multiple of %d from 0 to %d, not '%s'", opt, step, 4096 - step, s);
    return (int)v;
}

static int drawn(int *v, int given, int step, uint64_t salt)
{
    if (*v < 0 && given >= 0)
        *v = given;
    if (*v < 0) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        uint64_t x = ((uint64_t)getpid() << 32) ^ (uint64_t)t.tv_nsec ^ (uint64_t)t.tv_sec ^ salt;
        *v = (int)(((x * 0x9e3779b97f4a7c15ULL) >> 40) % (uint64_t)(4096 / step)) * step;
    }
    return *v;
}

static int g_placement = -1, g_heap_shift = -1;
static void *g_heap_pad;

int placement_bytes(void)
{
    return drawn(&g_placement, cfg.placement, 64, 0);
}

int heap_shift_bytes(void)
{
    return drawn(&g_heap_shift, cfg.heap_shift, 16, 0xd6e8feb86659fd93ULL);
}

void shift_heap(void)
{
    size_t n = (size_t)heap_shift_bytes();

    if (n > 0 && (g_heap_pad = malloc(n)) == NULL)
        die("out of memory");
}

static uint8_t *page_buf(size_t n, size_t off)
{
    uint8_t *p = aligned_alloc(4096, (off + n + 4095) & ~(size_t)4095);

    if (p == NULL)
        die("out of memory");
    memset(p, 0, off + n); /* fault the pages in before any timing */
    return p + off;
}

static bufset *g_bufs[260];
static int g_nbufs;

/* The inputs at a page start, the output placement_bytes() into its page. */
bufset *bufset_new(size_t max)
{
    bufset *b = calloc(1, sizeof(*b));

    if (b == NULL || g_nbufs == (int)(sizeof(g_bufs) / sizeof(g_bufs[0])))
        die("out of memory");
    g_bufs[g_nbufs++] = b;
    max += TAG_LEN + 64;
    b->in = page_buf(max, 0);
    b->out = page_buf(max, (size_t)placement_bytes());
    b->ct[0] = page_buf(max, 0);
    b->ct[1] = page_buf(max, 0);
    fill(b->in, max, 7);
    return b;
}

/* ------------------------------------------------------------------ */
/* Library contexts                                                    */

OSSL_LIB_CTX *g_libctx, *g_base_libctx;
static OSSL_PROVIDER *g_prov[IM_FLOOR + 1], *g_base_default;
static char g_desc[2][PATH_MAX + 64], g_want[2][PATH_MAX];
char g_kernel[64], g_base_kernel[64];

/* chapoly.so: --module, OPENSSL_MODULES, CHAPOLY_MODULE, the build tree, OpenSSL's directory. */
static OSSL_PROVIDER *load_chapoly(OSSL_LIB_CTX *lc, int base, char *desc, size_t desclen)
{
    const char *src = base ? cfg.base : cfg.module, *why = base ? "--base" : "--module";
    char full[PATH_MAX + 16];
    struct stat st;

    g_want[base][0] = '\0';
    if (src == NULL && (src = getenv("OPENSSL_MODULES")) != NULL)
        why = "OPENSSL_MODULES";
    else if (src == NULL && (src = getenv("CHAPOLY_MODULE")) != NULL)
        why = "CHAPOLY_MODULE";
#ifdef BENCH_DEFAULT_MODULE
    if (src == NULL && stat(BENCH_DEFAULT_MODULE, &st) == 0) {
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
    snprintf(full, sizeof(full), S_ISDIR(st.st_mode) ? "%s/chapoly.so" : "%s", src);
    /* an absolute path: OpenSSL joins a relative name to its module directory */
    if (realpath(full, g_want[base]) == NULL)
        die("%s (%s): %s", full, why, strerror(errno));
    snprintf(desc, desclen, "%s (%s)", g_want[base], why);
    return OSSL_PROVIDER_load(lc, g_want[base]);
}

OSSL_LIB_CTX *make_libctx(int base, OSSL_PROVIDER **ours, OSSL_PROVIDER **dflt, char *desc,
                          size_t desclen)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();

    if (lc == NULL || (*dflt = OSSL_PROVIDER_load(lc, "default")) == NULL)
        die("no library context with the default provider");
    if ((*ours = load_chapoly(lc, base, desc, desclen)) == NULL)
        die("could not load %s: %s", base ? "the base chapoly" : "chapoly", desc);
    return lc;
}

static void read_param(OSSL_PROVIDER *prov, const char *name, char *out, size_t len)
{
    char *v = NULL;
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_utf8_ptr(name, &v, 0), OSSL_PARAM_construct_end() };

    snprintf(out, len, "%s", OSSL_PROVIDER_get_params(prov, p) && v != NULL ? v : "?");
    ERR_clear_error();
}

/* The file a provider's code runs from: the object holding its dispatch table. */
static int module_file(OSSL_PROVIDER *prov, char *out)
{
    const OSSL_DISPATCH *d = OSSL_PROVIDER_get0_dispatch(prov);
    Dl_info di;

    snprintf(out, PATH_MAX, "?");
    return d != NULL && dladdr(d, &di) != 0 && di.dli_fname != NULL
           && realpath(di.dli_fname, out) != NULL;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;

    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev
           && sa.st_ino == sb.st_ino;
}

/* The timed context (chapoly, default, the floor) and, with --base, the base's. */
void open_bench_libctx(void)
{
    char file[PATH_MAX];

    for (int base = 0; base <= (cfg.base != NULL); base++) {
        OSSL_PROVIDER **ours = base ? &g_prov[IM_BASE] : &g_prov[IM_CHAPOLY];
        OSSL_LIB_CTX *lc = make_libctx(base, ours, base ? &g_base_default : &g_prov[IM_DEFAULT],
                                       g_desc[base], sizeof(g_desc[0]));

        *(base ? &g_base_libctx : &g_libctx) = lc;
        read_param(*ours, "chapoly-kernel", base ? g_base_kernel : g_kernel, sizeof(g_kernel));
        /* two paths to one file are one copy (an A/A run); another file is a mistake */
        if (!module_file(*ours, file) || (g_want[base][0] && !same_file(file, g_want[base])))
            die("%s runs from %s, not from %s", impl_name[base ? IM_BASE : IM_CHAPOLY], file,
                g_want[base]);
    }
    if (!OSSL_PROVIDER_add_builtin(g_libctx, "bench-floor", bench_floor_init)
        || (g_prov[IM_FLOOR] = OSSL_PROVIDER_load(g_libctx, "bench-floor")) == NULL)
        die("could not register the floor provider");
}

OSSL_LIB_CTX *libctx_of(int impl)
{
    return impl == IM_BASE ? g_base_libctx : g_libctx;
}

/* The chapoly line; with --base, for each, the file it runs from and its buildinfo. */
void print_modules(int with_kernel)
{
    char file[PATH_MAX], other[PATH_MAX], info[600];

    for (int base = 0; base <= (cfg.base != NULL); base++) {
        OSSL_PROVIDER *p = g_prov[base ? IM_BASE : IM_CHAPOLY];

        printf("  %-10s %s", impl_name[base ? IM_BASE : IM_CHAPOLY], g_desc[base]);
        printf(with_kernel ? ", kernel %s\n" : "\n", base ? g_base_kernel : g_kernel);
        if (cfg.base == NULL)
            return;
        module_file(p, file);
        read_param(p, "buildinfo", info, sizeof(info));
        printf("             runs from %s: %s\n", file, info);
        if (base && module_file(g_prov[IM_CHAPOLY], other) && same_file(file, other))
            printf("             (the same file as chapoly, one copy in two contexts: an A/A run)\n");
    }
}

/*
 * Header lines: with a title, the title, CPU, OpenSSL and load; then the
 * modules, the comparison libraries and the TLS routing proof.
 */
void print_setup(const char *title)
{
    char cpu[320];
    double load[3] = { 0 };

    if (title != NULL) {
        cpu_model(cpu, sizeof(cpu));
        getloadavg(load, 3);
        printf("%s\n  cpu        %s\n  openssl    %s\n  load avg   %.2f %.2f %.2f at start\n",
               title, cpu, OpenSSL_version(OPENSSL_VERSION), load[0], load[1], load[2]);
    }
    print_modules(1);
#ifdef BENCH_HAVE_SODIUM
    printf("  libsodium  %s\n", g_have_sodium ? sodium_version_string() : "disabled (--no-sodium)");
#else
    printf("  libsodium  not built in (libsodium-dev absent at configure time)\n");
#endif
    printf("  boringssl  %s\n", g_boring_note);
    printf("  tls route  %s (chapoly's message counters, separate context)\n", tls_route_text());
}

void print_layout(void)
{
    printf("  placement  output %d bytes into its page%s; heap shift %d bytes%s\n",
           placement_bytes(), cfg.placement >= 0 ? " (--placement)" : " (drawn)",
           heap_shift_bytes(), cfg.heap_shift >= 0 ? " (--heap-shift)" : " (drawn)");
}

/* ------------------------------------------------------------------ */
/* The EVP loops: one message per iteration                            */

/* seal, seal-rekey, seal-newctx, the stream ops (op->arg bytes per update). */
static int evp_seal(job *j, size_t n, uint64_t iters)
{
    const opdef *op = j->op;
    uint8_t *out = j->b->out, nonce[24], key[KEY_LEN];
    const uint8_t *in = j->b->in;
    size_t u = op->arg > 0 ? (size_t)op->arg : n;
    int l;

    for (uint64_t i = 0; i < iters; i++) {
        EVP_CIPHER_CTX *c = op->flags & F_NEWCTX ? EVP_CIPHER_CTX_new() : j->ctx;
        const uint8_t *k = op->flags & F_NEWCTX ? g_key : NULL;

        if (op->flags & F_REKEY) {
            make_key(key, j->seq);
            k = key;
        }
        make_nonce(nonce, j->ivlen, j->seq++);
        int ok = c != NULL
                 && EVP_EncryptInit_ex(c, op->flags & F_NEWCTX ? j->cipher : NULL, NULL, k, nonce)
                 && EVP_EncryptUpdate(c, NULL, &l, g_aad, (int)j->aadlen);
        for (size_t done = 0; ok && done < n; done += u)
            ok = EVP_EncryptUpdate(c, out + done, &l, in + done, (int)(n - done < u ? n - done : u));
        ok = ok && EVP_EncryptFinal_ex(c, out + n, &l)
             && EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, TAG_LEN, out + n);
        if (op->flags & F_NEWCTX)
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
    int l;

    for (uint64_t i = 0; i < iters; i++) {
        unsigned k = (unsigned)(j->seq++ & 1);
        uint8_t *ct = j->b->ct[k];

        make_nonce(nonce, j->ivlen, OPEN_SEQ + k);
        if (!EVP_DecryptInit_ex(c, NULL, NULL, NULL, nonce)
            || !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, TAG_LEN, ct + n)
            || !EVP_DecryptUpdate(c, NULL, &l, g_aad, (int)j->aadlen)
            || !EVP_DecryptUpdate(c, out, &l, ct, (int)n) || EVP_DecryptFinal_ex(c, out + n, &l) != 1)
            return 0;
    }
    return 1;
}

/*
 * chacha20: a fresh 16-byte IV (counter 1, nonce); quic-hp (RFC 9001
 * 5.4.4): the packet's 16-byte sample is the IV, varying in all its bytes.
 */
static int evp_chacha(job *j, size_t n, uint64_t iters)
{
    uint8_t iv[16] = { 1, 0, 0, 0 };
    int l;

    for (uint64_t i = 0; i < iters; i++) {
        if (j->op->kind == K_HP) {
            uint32_t ctr = (uint32_t)(j->seq * 0x9e3779b9u);
            for (int k = 0; k < 4; k++)
                iv[k] = (uint8_t)(ctr >> (8 * k));
        }
        make_nonce(iv + 4, 12, j->seq++);
        if (!EVP_CipherInit_ex(j->ctx, NULL, NULL, NULL, iv, 1)
            || !EVP_CipherUpdate(j->ctx, j->b->out, &l, j->b->in, (int)n))
            return 0;
    }
    return 1;
}

static int evp_poly(job *j, size_t n, uint64_t iters)
{
    uint8_t key[KEY_LEN];
    size_t ol;

    for (uint64_t i = 0; i < iters; i++) {
        make_key(key, j->seq++);
        if (!EVP_MAC_init(j->mctx, key, KEY_LEN, NULL) || !EVP_MAC_update(j->mctx, j->b->in, n)
            || !EVP_MAC_final(j->mctx, j->b->out, &ol, TAG_LEN))
            return 0;
    }
    return 1;
}

/*
 * pipeline: message k of a batch reads in + k * (n + 16) and writes its
 * ciphertext and tag at the same offset of out. The default provider has
 * no pipeline: its job seals the same messages one by one (its "seal").
 */
static int evp_pipe_singles(job *j, size_t n, uint64_t iters)
{
    bufset *b = j->b, one = *b;
    job s = *j;

    s.b = &one;
    for (uint64_t i = 0; i < iters * (uint64_t)cfg.pipes; i++) {
        size_t off = (size_t)(i % (uint64_t)cfg.pipes) * (n + TAG_LEN);

        one.in = b->in + off;
        one.out = b->out + off;
        if (!evp_seal(&s, n, 1))
            return 0;
    }
    j->seq = s.seq;
    return 1;
}

#if OPENSSL_VERSION_NUMBER >= 0x30500000L
static int evp_pipeline(job *j, size_t n, uint64_t iters)
{
    size_t np = (size_t)cfg.pipes, aadl[MAX_PIPES], inl[MAX_PIPES], outl[MAX_PIPES];
    const unsigned char *ivs[MAX_PIPES], *aad[MAX_PIPES], *in[MAX_PIPES];
    unsigned char *out[MAX_PIPES], *tags[MAX_PIPES], nonce[MAX_PIPES][12];
    void *tp = tags;
    OSSL_PARAM p[2] = { OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, &tp, TAG_LEN),
                        OSSL_PARAM_END };

    for (size_t k = 0; k < np; k++) {
        in[k] = j->b->in + k * (n + TAG_LEN);
        out[k] = j->b->out + k * (n + TAG_LEN);
        tags[k] = out[k] + n;
        ivs[k] = nonce[k];
        aad[k] = g_aad;
        aadl[k] = j->aadlen;
        inl[k] = n;
    }
    for (uint64_t i = 0; i < iters; i++) {
        for (size_t k = 0; k < np; k++)
            make_nonce(nonce[k], 12, j->seq++);
        /* the context keeps its cipher: later batches pass none, as applications do */
        if (!EVP_CipherPipelineEncryptInit(j->ctx, j->pipe_ready ? NULL : j->cipher, g_key,
                                           KEY_LEN, np, ivs, 12)
            || !EVP_CipherPipelineUpdate(j->ctx, NULL, outl, NULL, aad, aadl)
            || !EVP_CipherPipelineUpdate(j->ctx, out, outl, inl, in, inl)
            || !EVP_CipherPipelineFinal(j->ctx, out, outl, inl) || !EVP_CIPHER_CTX_get_params(j->ctx, p))
            return 0;
        j->pipe_ready = 1;
    }
    return 1;
}
#endif

/* ------------------------------------------------------------------ */
/* Jobs                                                                */

static const char *const propq[IM_FLOOR + 1] = { "provider=chapoly", "provider=default",
                                                 "provider=chapoly", "provider=floor" };
static job *g_jobs[4096];
static int g_njobs;

static void job_free(job *j)
{
    EVP_CIPHER_CTX_free(j->ctx);
    EVP_CIPHER_free(j->cipher);
    EVP_MAC_CTX_free(j->mctx);
    EVP_MAC_free(j->mac);
    libs_job_free(j);
    tls_free(j->tls);
    free(j);
}

/* The EVP implementations' jobs; 0: not offered. */
static int evp_job_init(job *j)
{
    const opdef *op = j->op;
    OSSL_LIB_CTX *lc = libctx_of(j->impl);
    const char *name = op->kind == K_CHACHA || op->kind == K_HP ? "ChaCha20"
                       : op->flags & F_X                       ? "XChaCha20-Poly1305"
                                                               : "ChaCha20-Poly1305";
    uint8_t iv[24] = { 0 };

    if (op->kind == K_TLS) {
        char q[32];

        snprintf(q, sizeof(q), "?%s", propq[j->impl]);
        j->run = tls_record;
        return j->impl != IM_FLOOR && (j->tls = tls_pair_new(lc, q, op->arg)) != NULL;
    }
    if (op->kind == K_POLY) {
        j->mac = EVP_MAC_fetch(lc, "POLY1305", propq[j->impl]);
        j->run = evp_poly;
        return j->mac != NULL && (j->mctx = EVP_MAC_CTX_new(j->mac)) != NULL;
    }
    if ((j->cipher = EVP_CIPHER_fetch(lc, name, propq[j->impl])) == NULL
        || (j->ctx = EVP_CIPHER_CTX_new()) == NULL)
        return 0;
    if (op->kind == K_PIPE && j->impl != IM_DEFAULT) {
#if OPENSSL_VERSION_NUMBER >= 0x30500000L
        j->run = evp_pipeline;
        return j->impl != IM_FLOOR && EVP_CIPHER_can_pipeline(j->cipher, 1) == 1;
#else
        return 0;
#endif
    }
    if (!EVP_CipherInit_ex(j->ctx, j->cipher, NULL, g_key, iv, op->kind != K_OPEN))
        die("%s init (%s) failed", name, impl_name[j->impl]);
    j->run = op->kind == K_PIPE ? evp_pipe_singles : op->kind == K_SEAL ? evp_seal
             : op->kind == K_OPEN                  ? evp_open
                                                   : evp_chacha;
    return 1;
}

/* NULL when the implementation does not offer the operation (or is absent). */
job *job_new(const opdef *op, int impl, bufset *b)
{
    job *j = calloc(1, sizeof(*j));

    if (j == NULL || g_njobs == (int)(sizeof(g_jobs) / sizeof(g_jobs[0])))
        die("out of memory");
    g_jobs[g_njobs++] = j; /* freed by bench_cleanup */
    *j = (job){ .op = op, .impl = impl, .b = b, .seq = 1, .ivlen = op->flags & F_X ? 24 : 12,
                .aadlen = op->flags & F_QUIC ? QUIC_AAD_LEN : AAD_LEN };
    if (impl == IM_BASE && g_base_libctx == NULL ? 0
        : impl <= IM_FLOOR                      ? evp_job_init(j)
                                                : libs_job_init(j))
        return j;
    ERR_clear_error();
    g_njobs--;
    job_free(j);
    return NULL;
}

void bench_cleanup(void)
{
    for (int i = 0; i < g_njobs; i++)
        job_free(g_jobs[i]);
    for (int i = 0; i < g_nbufs; i++) {
        free(g_bufs[i]->in);
        free(g_bufs[i]->out - placement_bytes()); /* page_buf's own pointer */
        free(g_bufs[i]->ct[0]);
        free(g_bufs[i]->ct[1]);
        free(g_bufs[i]);
    }
    g_njobs = g_nbufs = 0;
    tls_cred_free();
    for (int i = 0; i <= IM_FLOOR; i++)
        OSSL_PROVIDER_unload(g_prov[i]);
    OSSL_PROVIDER_unload(g_base_default);
    OSSL_LIB_CTX_free(g_libctx);
    OSSL_LIB_CTX_free(g_base_libctx);
    memset(g_prov, 0, sizeof(g_prov));
    g_base_default = NULL;
    g_libctx = g_base_libctx = NULL;
    free(g_heap_pad); /* after the contexts it placed */
    g_heap_pad = NULL;
}
