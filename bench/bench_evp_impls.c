/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: the implementations under test and the work they all do.
 * chapoly, the default provider and the floor (bench_floor.c) through EVP:
 * one loop per operation, run by a job that owns its contexts. BoringSSL
 * and libsodium are in bench_evp_libs.c.
 */
#include "bench_evp.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <openssl/core.h>
#include <openssl/err.h>
#include <openssl/params.h>

/* ------------------------------------------------------------------ */
/* Implementations                                                     */

const char *const impl_name[IM_N] = { "chapoly", "default", "boringssl", "libsodium", "floor",
                                      "base" };
/* The floor is never a reference: its output is checked against what it promises. */
const int ref_order[IM_N] = { IM_DEFAULT, IM_SODIUM, IM_BORING, IM_CHAPOLY, IM_BASE, IM_FLOOR };

/* Operations. */
const opdef ops[] = {
    { "seal", K_SEAL, 0,
      "ChaCha20-Poly1305 seal, keyed context, fresh nonce + 13-byte AAD per message\n"
      "  (EVP: init(iv) + AAD update + update + final + get tag)", 0, 0 },
    { "open", K_OPEN, 0,
      "ChaCha20-Poly1305 open, keyed context, 13-byte AAD, nonce alternating between 2 valid ciphertexts\n"
      "  (EVP: init(iv) + set tag + AAD update + update + final)", 0, 0 },
    { "seal-rekey", K_REKEY, 0,
      "ChaCha20-Poly1305 seal with a fresh key and nonce per message (EVP: init(key, iv) + ...)", 0, 0 },
    { "seal-newctx", K_NEWCTX, 0,
      "ChaCha20-Poly1305 seal with a new context per message\n"
      "  (EVP: CTX_new + init(cipher, key, iv) + ... + CTX_free; BoringSSL: EVP_AEAD_CTX_new/free)", 0, 0 },
    { "xseal", K_SEAL, 1,
      "XChaCha20-Poly1305 seal, keyed context, fresh 24-byte nonce + 13-byte AAD (default provider has none)", 0, 0 },
    { "xopen", K_OPEN, 1,
      "XChaCha20-Poly1305 open, keyed context, 13-byte AAD (default provider has none)", 0, 0 },
    { "chacha20", K_CHACHA, 0,
      "ChaCha20 stream cipher, keyed context, fresh 16-byte IV (counter 1 || nonce) per message", 0, 0 },
    { "poly1305", K_POLY, 0,
      "Poly1305 one-time MAC, fresh key per message (EVP_MAC: init(key) + update + final)", 0, 0 },
    { "tls13", K_TLS, TLS1_3_VERSION,
      "TLS 1.3 TLS_CHACHA20_POLY1305_SHA256 record through libssl over a BIO pair:\n"
      "  SSL_write(n) on one side + SSL_read on the other = one seal + one open, per record", 0, 0 },
    { "tls12", K_TLS, TLS1_2_VERSION,
      "TLS 1.2 ECDHE-ECDSA-CHACHA20-POLY1305 record through libssl over a BIO pair:\n"
      "  SSL_write(n) + SSL_read = one seal + one open, per record", 0, 0 },
#define STREAM_OP(name, u)                                                                 \
    { name, K_STREAM, u,                                                                   \
      "ChaCha20-Poly1305 seal of one message fed in updates of " #u " bytes (as seal otherwise:\n" \
      "  init(iv) + 13-byte AAD + updates + final + get tag); bytes = the whole message",  \
      0, 0 }
    STREAM_OP("stream16", 16),
    STREAM_OP("stream64", 64),
    STREAM_OP("stream256", 256),
    STREAM_OP("stream1k", 1024),
    STREAM_OP("stream4k", 4096),
    STREAM_OP("stream16k", 16384),
    { "stream-whole", K_STREAM, 0,
      "ChaCha20-Poly1305 seal of the same messages in one update: the one-shot the stream\n"
      "  operations are compared with (same calls as seal)", 0, 0 },
#undef STREAM_OP
    { "quic-hp", K_HP, 0,
      "QUIC header protection mask: IV-only init(16-byte sample) on a keyed ChaCha20 context\n"
      "  + one update (5 bytes in QUIC)", 0, 1 },
    { "quic-seal", K_SEAL, 0,
      "QUIC packet seal: init(iv) + 20-byte header as AAD + one update + final + get tag",
      QUIC_AAD_LEN, 1 },
    { "quic-open", K_OPEN, 0,
      "QUIC packet open: init(iv) + set tag + 20-byte header as AAD + one update + final",
      QUIC_AAD_LEN, 1 },
};
_Static_assert(sizeof(ops) / sizeof(ops[0]) == N_OPS, "N_OPS counts the operations");

/* ------------------------------------------------------------------ */
/* Inputs and buffers                                                  */

void *xalloc(size_t n)
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
uint8_t g_aad[AAD_MAX];

void init_inputs(void)
{
    for (size_t i = 0; i < KEY_LEN; i++)
        g_key[i] = (uint8_t)(0x80 + i);
    fill(g_aad, AAD_MAX, 3);
}

static bufset *g_all_bufs[260];
static int g_nbufs;

/*
 * Placement: where the output buffer lies against the input, modulo 4 KiB.
 * A load whose address matches an earlier store's in bits 0-11 can be held
 * back as if it depended on it (4K aliasing), so a kernel's time depends on
 * out - in mod 4096: one build's seal of 1350 B took 590 ns or 724 ns by
 * that offset alone, another's 673 or 841 ns at other offsets (AMD EPYC
 * family 26 model 2). Applications put their buffers anywhere, so each
 * process draws the offset (a multiple of 64) unless --placement fixes it;
 * the inputs (in, ct[]) start a 4 KiB page, the output is that far into
 * its own. The headers print it.
 */
static int g_placement = -1;

/* A layout option's value: bytes, a multiple of 'step' from 0 to 4096 - step. */
static int parse_offset(const char *opt, const char *s, int step)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (*s == '\0' || *end != '\0' || v < 0 || v > 4096 - step || v % step != 0)
        die("%s must be a multiple of %d from 0 to %d (bytes), not '%s'", opt, step, 4096 - step,
            s);
    return (int)v;
}

/* The value a process uses: the option's, else drawn once (a multiple of step below 4096). */
static int offset_of(int *drawn, int given, int step, uint64_t salt)
{
    if (*drawn < 0) {
        if (given >= 0) {
            *drawn = given;
        } else {
            struct timespec t;
            uint64_t x;

            clock_gettime(CLOCK_MONOTONIC, &t);
            x = ((uint64_t)getpid() << 32) ^ (uint64_t)t.tv_nsec ^ (uint64_t)t.tv_sec;
            x = (x ^ salt) * 0x9e3779b97f4a7c15ULL;
            *drawn = (int)((x >> 40) % (uint64_t)(4096 / step)) * step;
        }
    }
    return *drawn;
}

void parse_placement(const char *s)
{
    cfg.placement = parse_offset("--placement", s, 64);
}

int placement_bytes(void)
{
    return offset_of(&g_placement, cfg.placement, 64, 0);
}

/*
 * Heap placement. Contexts (the module's, OpenSSL's, the key schedule
 * and Poly1305 state inside them) come from malloc in an order fixed by
 * the program, so with ASLR at page granularity every process of one
 * build puts them at the same offsets in their pages, and a different
 * build (other context sizes) at other ones. Where a kernel's stores and
 * loads then fall relative to each other mod 4096 moves a call by up to
 * ~30 % (an EVP Poly1305 MAC of 1 KiB: 145 or 195 ns by this shift alone,
 * AMD EPYC family 26 model 2), which an A/B of two builds would read as a
 * difference between them. Each process therefore takes a drawn number of
 * bytes (a multiple of 16 below 4 KiB) from the heap before anything else
 * allocates, unless --heap-shift fixes it; the headers print it.
 */
static int g_heap_shift = -1;

void parse_heap_shift(const char *s)
{
    cfg.heap_shift = parse_offset("--heap-shift", s, 16);
}

int heap_shift_bytes(void)
{
    return offset_of(&g_heap_shift, cfg.heap_shift, 16, 0xd6e8feb86659fd93ULL);
}

static void *g_heap_pad;

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

bufset *bufset_new(size_t max)
{
    bufset *b = calloc(1, sizeof(*b));
    size_t off = (size_t)placement_bytes();

    if (b == NULL || g_nbufs == (int)(sizeof(g_all_bufs) / sizeof(g_all_bufs[0])))
        die("out of memory");
    g_all_bufs[g_nbufs++] = b;
    b->max = max;
    b->in = page_buf(max + 64, 0);
    b->out = page_buf(max + TAG_LEN + 64, off);
    b->ct[0] = page_buf(max + TAG_LEN + 64, 0);
    b->ct[1] = page_buf(max + TAG_LEN + 64, 0);
    fill(b->in, max, 7);
    return b;
}


/* ------------------------------------------------------------------ */
/* OpenSSL library context                                             */

OSSL_LIB_CTX *g_libctx;
static OSSL_PROVIDER *g_prov_chapoly, *g_prov_default;
char g_module_desc[PATH_MAX + 64];
char g_kernel[64];
/*
 * --base: a second chapoly.so in a context of its own. Loaded from another
 * path, it is another copy of the code (dlopen keys on the file), and its
 * algorithms carry provider=chapoly in that context only.
 */
OSSL_LIB_CTX *g_base_libctx;
static OSSL_PROVIDER *g_prov_base, *g_prov_base_default;
char g_base_desc[PATH_MAX + 64];
char g_base_kernel[64];
static char g_want[2][PATH_MAX]; /* the file asked for: [0] chapoly, [1] base ("": unknown) */

/*
 * Where chapoly.so comes from: --module, OPENSSL_MODULES, CHAPOLY_MODULE, the
 * build tree; the base (base = 1) from --base only.
 */
static OSSL_PROVIDER *load_chapoly(OSSL_LIB_CTX *lc, int base, char *desc, size_t desclen)
{
    const char *src = NULL, *why = NULL;
    char *want = g_want[base != 0];
    struct stat st;

    want[0] = '\0';
    if (base) {
        src = cfg.base;
        why = "--base";
    } else if (cfg.module) {
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
        if (realpath(full, want) == NULL)
            die("%s (%s): %s", full, why, strerror(errno));
        snprintf(desc, desclen, "%s (%s)", want, why);
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
    snprintf(want, PATH_MAX, "%s", abs);
    return OSSL_PROVIDER_load(lc, abs);
}

OSSL_LIB_CTX *make_libctx(int base, OSSL_PROVIDER **ours, OSSL_PROVIDER **dflt, char *desc,
                          size_t desclen)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();

    if (lc == NULL)
        die("OSSL_LIB_CTX_new failed");
    *dflt = OSSL_PROVIDER_load(lc, "default");
    if (*dflt == NULL)
        die("could not load the default provider");
    *ours = load_chapoly(lc, base, desc, desclen);
    if (*ours == NULL)
        die("could not load %s: %s", base ? "the base chapoly" : "chapoly", desc);
    return lc;
}

static void read_param(OSSL_PROVIDER *prov, const char *name, char *out, size_t len)
{
    char *v = NULL;
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_utf8_ptr(name, &v, 0), OSSL_PARAM_construct_end() };

    if (OSSL_PROVIDER_get_params(prov, p) && v != NULL)
        snprintf(out, len, "%s", v);
    else
        snprintf(out, len, "?");
    ERR_clear_error();
}

/* The file a provider's code runs from: the object holding its dispatch table. */
static int module_file(OSSL_PROVIDER *prov, char *out, size_t len)
{
    const OSSL_DISPATCH *d = OSSL_PROVIDER_get0_dispatch(prov);
    Dl_info di;

    char abs[PATH_MAX];

    snprintf(out, len, "?");
    if (d == NULL || dladdr(d, &di) == 0 || di.dli_fname == NULL)
        return 0;
    /* the name dlopen was given: relative when a relative search path was set */
    snprintf(out, len, "%s", realpath(di.dli_fname, abs) ? abs : di.dli_fname);
    return 1;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;

    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev
           && sa.st_ino == sb.st_ino;
}

/*
 * Each context must run the file asked for: the provider's dispatch table
 * lies in it. (Two paths to one file are one copy: an A/A run.)
 */
static void check_module_file(int base)
{
    char file[PATH_MAX];

    if (!module_file(base ? g_prov_base : g_prov_chapoly, file, sizeof(file)))
        die("cannot tell which file %s runs from", base ? "the base" : "chapoly");
    if (g_want[base][0] && !same_file(file, g_want[base]))
        die("%s runs from %s, not from %s", base ? "the base" : "chapoly", file, g_want[base]);
}

/*
 * For the headers: "runs from FILE: BUILDINFO" of chapoly (base 0) or the
 * base (1); returns 1 when the base is the same file as chapoly.
 */
int module_lines(int base, char *out, size_t len)
{
    OSSL_PROVIDER *p = base ? g_prov_base : g_prov_chapoly;
    char file[PATH_MAX], other[PATH_MAX], info[600];

    module_file(p, file, sizeof(file));
    read_param(p, "buildinfo", info, sizeof(info));
    snprintf(out, len, "runs from %s: %s", file, info);
    return base && module_file(g_prov_chapoly, other, sizeof(other)) && same_file(file, other);
}

void open_bench_libctx(void)
{
    g_libctx = make_libctx(0, &g_prov_chapoly, &g_prov_default, g_module_desc,
                           sizeof(g_module_desc));
    read_param(g_prov_chapoly, "chapoly-kernel", g_kernel, sizeof(g_kernel));
    check_module_file(0);
    if (cfg.base == NULL)
        return;
    g_base_libctx = make_libctx(1, &g_prov_base, &g_prov_base_default, g_base_desc,
                                sizeof(g_base_desc));
    read_param(g_prov_base, "chapoly-kernel", g_base_kernel, sizeof(g_base_kernel));
    check_module_file(1);
}

OSSL_LIB_CTX *libctx_of(int impl)
{
    return impl == IM_BASE ? g_base_libctx : g_libctx;
}

/*
 * The floor (bench_floor.c) in the timed library context: the shared object
 * has no OSSL_provider_init on purpose, so it is registered here as a
 * built-in provider under its own init function. BENCH_FLOOR_MODULE (the
 * environment, else the build tree) names the file.
 */
static OSSL_PROVIDER *g_prov_floor;
static void *g_floor_dl;
int g_have_floor;
char g_floor_note[PATH_MAX + 64] = "not loaded";

void load_floor(void)
{
    const char *path = getenv("BENCH_FLOOR_MODULE");
    OSSL_provider_init_fn *init;

#ifdef BENCH_FLOOR_MODULE
    if (path == NULL)
        path = BENCH_FLOOR_MODULE;
#endif
    if (path == NULL) {
        snprintf(g_floor_note, sizeof(g_floor_note), "absent (no BENCH_FLOOR_MODULE)");
        return;
    }
    g_floor_dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    *(void **)&init = g_floor_dl ? dlsym(g_floor_dl, "bench_floor_provider_init") : NULL;
    if (init == NULL) {
        snprintf(g_floor_note, sizeof(g_floor_note), "%s not loadable: %s", path, dlerror());
        return;
    }
    if (!OSSL_PROVIDER_add_builtin(g_libctx, "bench-floor", init)
        || (g_prov_floor = OSSL_PROVIDER_load(g_libctx, "bench-floor")) == NULL)
        die("could not register the floor provider from %s", path);
    snprintf(g_floor_note, sizeof(g_floor_note), "%s (no cryptography: copies, zero tags)", path);
    g_have_floor = 1;
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
            || !EVP_EncryptUpdate(c, NULL, &l, g_aad, (int)j->aadlen)
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
            || !EVP_EncryptUpdate(c, NULL, &l, g_aad, (int)j->aadlen))
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
            || !EVP_EncryptUpdate(c, NULL, &l, g_aad, (int)j->aadlen)
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
                 && EVP_EncryptUpdate(c, NULL, &l, g_aad, (int)j->aadlen)
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
            || !EVP_DecryptUpdate(c, NULL, &l, g_aad, (int)j->aadlen)
            || !EVP_DecryptUpdate(c, out, &l, ct, (int)n)
            || EVP_DecryptFinal_ex(c, out + l, &l2) != 1)
            return 0;
    }
    return 1;
}

/* --- EVP ChaCha20 and Poly1305 --- */

/*
 * QUIC header protection (RFC 9001 5.4.4): the 16-byte sample of the packet
 * is ChaCha20's IV (counter || nonce) on a keyed context; the mask is the
 * keystream of one short update (5 bytes in QUIC). The sample varies in
 * all 16 bytes, as ciphertext does.
 */
static int evp_quic_hp(job *j, size_t n, uint64_t iters)
{
    EVP_CIPHER_CTX *c = j->ctx;
    uint8_t *out = j->b->out, sample[16];
    const uint8_t *in = j->b->in;
    int l;

    for (uint64_t i = 0; i < iters; i++) {
        uint32_t ctr = (uint32_t)(j->seq * 0x9e3779b9u);

        make_nonce(sample + 4, 12, j->seq++);
        for (int k = 0; k < 4; k++)
            sample[k] = (uint8_t)(ctr >> (8 * k));
        if (!EVP_CipherInit_ex(c, NULL, NULL, NULL, sample, 1)
            || !EVP_CipherUpdate(c, out, &l, in, (int)n))
            return 0;
    }
    return 1;
}

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


/* --- job construction --- */

static const char *evp_name(const opdef *op)
{
    switch (op->kind) {
    case K_CHACHA:
    case K_HP:
        return "ChaCha20";
    case K_POLY:
        return "POLY1305";
    case K_STREAM:
        return "ChaCha20-Poly1305";
    default:
        return op->x ? "XChaCha20-Poly1305" : "ChaCha20-Poly1305";
    }
}

/* The base is a chapoly too, in its own context. */
static const char *propq_of(int impl)
{
    return impl == IM_CHAPOLY || impl == IM_BASE ? "provider=chapoly"
           : impl == IM_FLOOR ? "provider=floor"
                              : "provider=default";
}

static OSSL_PROVIDER *provider_of(int impl)
{
    return impl == IM_CHAPOLY ? g_prov_chapoly
           : impl == IM_BASE  ? g_prov_base
           : impl == IM_FLOOR ? g_prov_floor
                              : g_prov_default;
}

static job *g_all_jobs[4096];
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
    j->aadlen = op->aad > 0 ? (size_t)op->aad : AAD_LEN;
    j->seq = 1;

    if ((impl == IM_FLOOR && (!g_have_floor || op->kind == K_TLS))
        || (impl == IM_BASE && g_base_libctx == NULL))
        goto none;
    if (impl == IM_CHAPOLY || impl == IM_DEFAULT || impl == IM_FLOOR || impl == IM_BASE) {
        OSSL_LIB_CTX *lc = libctx_of(impl);

        if (op->kind == K_TLS) {
            char q[32];

            snprintf(q, sizeof(q), "?%s", propq_of(impl));
            j->tls = tls_pair_new(lc, q, op->x);
            if (j->tls == NULL)
                goto none;
            j->run = tls_record;
            return j;
        }
        if (op->kind == K_POLY) {
            j->mac = EVP_MAC_fetch(lc, "POLY1305", propq_of(impl));
            if (j->mac == NULL || (j->mctx = EVP_MAC_CTX_new(j->mac)) == NULL)
                goto none;
            if (EVP_MAC_get0_provider(j->mac) != provider_of(impl))
                die("POLY1305 fetched from the wrong provider");
            j->run = evp_poly;
            return j;
        }
        j->cipher = EVP_CIPHER_fetch(lc, evp_name(op), propq_of(impl));
        if (j->cipher == NULL)
            goto none; /* e.g. XChaCha20-Poly1305 in the default provider */
        if (EVP_CIPHER_get0_provider(j->cipher) != provider_of(impl))
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
        case K_HP: j->run = evp_quic_hp; break;
        case K_STREAM: j->run = evp_stream; break;
        default: goto none;
        }
        return j;
    }
    if ((impl == IM_BORING || impl == IM_SODIUM) && libs_job_init(j))
        return j;
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
        free(g_all_bufs[i]->out - placement_bytes()); /* page_buf's own pointer */
        free(g_all_bufs[i]->ct[0]);
        free(g_all_bufs[i]->ct[1]);
        free(g_all_bufs[i]);
    }
    g_njobs = g_nbufs = 0;
    tls_cred_free();
    OSSL_PROVIDER_unload(g_prov_chapoly);
    OSSL_PROVIDER_unload(g_prov_default);
    OSSL_PROVIDER_unload(g_prov_floor);
    OSSL_LIB_CTX_free(g_libctx);
    OSSL_PROVIDER_unload(g_prov_base);
    OSSL_PROVIDER_unload(g_prov_base_default);
    OSSL_LIB_CTX_free(g_base_libctx);
    g_libctx = g_base_libctx = NULL;
    g_prov_chapoly = g_prov_default = g_prov_base = g_prov_base_default = NULL;
    if (g_floor_dl != NULL)
        dlclose(g_floor_dl);
    g_prov_floor = NULL;
    g_floor_dl = NULL;
    free(g_heap_pad); /* after the contexts it placed */
    g_heap_pad = NULL;
    g_have_floor = 0;
}
