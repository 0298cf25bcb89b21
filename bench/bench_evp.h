/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp's internal header: the types, globals and functions its files
 * share. One program split by concern, not an API:
 *
 *   bench_evp.c          command line, --loop (profiler mode), main
 *   bench_evp_impls.c    operations, inputs, the library context, and the
 *                        implementations under test through EVP: chapoly,
 *                        default, the floor; their loops, jobs and buffers
 *   bench_evp_libs.c     BoringSSL (dlopen) and libsodium: loops and jobs
 *   bench_evp_tls.c      TLS records through libssl: client/server pairs,
 *                        the record loop, the routing proof, the cross check
 *   bench_evp_timing.c   clocks, core-clock probe, calibration, samples of
 *                        bursts, medians and ratios
 *   bench_evp_run.c      cells: output check, calibration, the timed
 *                        repetitions; thread scaling
 *   bench_evp_report.c   header, tables, CSV, JSON, plot, closing lines
 *   bench_sweep*.c       "bench_evp sweep": the never-slower map (bench_sweep.h)
 *   bench_floor.c        the do-nothing provider the sweep measures as a floor
 *
 * Every bench_evp_*.c includes this header first (it sets _GNU_SOURCE).
 */
#ifndef BENCH_EVP_H
#define BENCH_EVP_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/ssl.h>

#define AAD_LEN 13      /* the AAD of seal/open/...: a TLS 1.2 record's */
#define QUIC_AAD_LEN 20 /* the AAD of quic-seal/quic-open: a short QUIC header */
#define AAD_MAX 20
#define TAG_LEN 16
#define KEY_LEN 32
#define TLS_MAX_RECORD 16384
#define MAX_REPS 64
#define CHECK_SEQ 0x0123456789abcdefULL
#define OPEN_SEQ 0x5eed000000000000ULL

/* ------------------------------------------------------------------ */
/* Implementations and operations (bench_evp_impls.c)                  */

/*
 * IM_FLOOR: bench_floor.c, loaded only by the sweep (load_floor). IM_BASE:
 * a second chapoly.so (--base, the baseline build of an A/B) in a library
 * context of its own, run with chapoly's loops; present only with --base.
 */
enum { IM_CHAPOLY, IM_DEFAULT, IM_BORING, IM_SODIUM, IM_FLOOR, IM_BASE, IM_N };
extern const char *const impl_name[IM_N];
/* Reference order for the output check and for preparing ciphertexts. */
extern const int ref_order[IM_N];

/* Operations. */
enum kind { K_SEAL, K_OPEN, K_REKEY, K_NEWCTX, K_CHACHA, K_POLY, K_TLS, K_STREAM, K_HP };
typedef struct opdef {
    const char *name;
    enum kind kind;
    int x;               /* AEAD: 1 = XChaCha20-Poly1305; TLS: protocol version;
                            stream: bytes per update (0: the whole message in one) */
    const char *title;
    int aad;             /* AAD bytes per message (0: AAD_LEN) */
    int on_request;      /* not in bench_evp's default set (as the stream ones) */
} opdef;

#define N_OPS 20
/* Sizes of the stream operations unless --sizes is given (total message bytes). */
#define STREAM_SIZES { 16384, 65536 }
extern const opdef ops[N_OPS];

/* ------------------------------------------------------------------ */
/* Settings (bench_evp.c)                                              */

struct bench_cfg {
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
    const char *base;   /* --base: the baseline chapoly.so (or its directory) */
    const char *boring_path;
    const char *loop;
    int no_boring, no_sodium;
    int placement; /* --placement: out - in mod 4096, a multiple of 64; -1: random per process */
    int heap_shift; /* --heap-shift: bytes taken from the heap first, a multiple of 16; -1: random */
};
extern struct bench_cfg cfg;

__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);

/* bench_evp_impls.c: --placement's value, or the random one this process drew. */
int placement_bytes(void);
/* Parses --placement's argument into cfg.placement (dies on a bad one). */
void parse_placement(const char *s);
/* --heap-shift's value, or the one this process drew; parse_heap_shift as parse_placement. */
int heap_shift_bytes(void);
void parse_heap_shift(const char *s);
/* Takes heap_shift_bytes() from the heap before any context exists (freed by bench_cleanup). */
void shift_heap(void);
/* bench_evp_report.c: the placement and heap shift lines of a header. */
void print_layout(void);

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
    size_t aadlen;
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;
    EVP_MAC *mac;
    EVP_MAC_CTX *mctx;
    const void *aead;    /* BoringSSL EVP_AEAD */
    void *bctx;          /* BoringSSL EVP_AEAD_CTX (own storage for re-keying) */
    void *bstate;        /* BoringSSL poly1305_state */
    tls_pair *tls;
};

/* Same work for everyone: one key, one AAD, one nonce sequence. */
extern uint8_t g_key[KEY_LEN];
extern uint8_t g_aad[AAD_MAX];

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

/* The timed library context, holding both providers. */
extern OSSL_LIB_CTX *g_libctx;
extern char g_module_desc[];
extern char g_kernel[64];
/* --base: its own library context (the default provider and the base chapoly). */
extern OSSL_LIB_CTX *g_base_libctx;
extern char g_base_desc[];
extern char g_base_kernel[64];
extern int g_have_sodium;
extern int g_have_boring;
extern char g_boring_note[];
extern int g_have_floor;
extern char g_floor_note[];

void init_inputs(void);
void load_comparison_libraries(void);
OSSL_LIB_CTX *make_libctx(int base, OSSL_PROVIDER **ours, OSSL_PROVIDER **dflt, char *desc,
                          size_t desclen);
void open_bench_libctx(void);
OSSL_LIB_CTX *libctx_of(int impl);
int module_lines(int base, char *out, size_t len);
void load_floor(void);
void *xalloc(size_t n);
job *job_new(const opdef *op, int impl, bufset *b);
bufset *bufset_new(size_t max);
void bench_cleanup(void);

/* ------------------------------------------------------------------ */
/* TLS through libssl (bench_evp_tls.c)                                */

/* [0] TLS 1.2, [1] TLS 1.3: 1 proven, 0 not, -1 unknown; tls_proof_base: the --base module's */
extern int tls_proof[2], tls_proof_base[2];

void prove_tls_routing(void);
const char *tls_route_text(void);
tls_pair *tls_pair_new(OSSL_LIB_CTX *lc, const char *propq, int version);
void tls_free(tls_pair *t);
int tls_record(job *j, size_t n, uint64_t iters);
int tls_cross_check(int impl, int version, size_t n, bufset *b);
void tls_cred_free(void);

/* ------------------------------------------------------------------ */
/* BoringSSL and libsodium (bench_evp_libs.c)                          */

int libs_job_init(job *j);
void libs_job_free(job *j);

/* ------------------------------------------------------------------ */
/* Cells (bench_evp_run.c)                                             */

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

int job_ok_or_note(cell *c, int im, int ok, const char *what);
job *seal_job_for(const opdef *open, bufset *b);
void prepare_ct(cell *c, bufset *b);
int build_cells(cell *cells, bufset *b);
int check_and_calibrate(cell *cells, int ncells, bufset *b);
void run_repetition(cell *cells, int ncells, bufset *b, int r);
void run_repetitions(cell *cells, int ncells, bufset *b);
int run_threads(FILE *json);

/* ------------------------------------------------------------------ */
/* Timing and statistics (bench_evp_timing.c)                          */

extern double g_ghz;      /* median of the probes, used for conversion */
extern double g_ghz_probe[MAX_REPS + 4];
extern int g_nprobe;
extern double g_tsc_ghz;
extern int g_bursts;      /* clean bursts per sample */
extern int g_warm_div;    /* a sample's untimed warm-up runs 1/g_warm_div of a burst */
extern double g_burst_ns;
extern uint64_t g_bursts_run, g_bursts_dropped, g_samples_dirty;

typedef struct result {
    double ns, ns_min, ns_max, ratio[IM_N]; /* ratio[x] = ns(x)/ns(this), per-rep median */
    int valid;
} result;

double now_ns(void);
double cpu_ns(void);
double median(const double *v, int n);
double probe_ghz(void);
void clock_warmup(void);
void plan_bursts(double sample_ms);
void calibrate(cell *c, int im, double burst_ns);
double sample(cell *c, int im);
result summarize(const cell *c, int im, int reps);

/* ------------------------------------------------------------------ */
/* Output (bench_evp_report.c)                                         */

void cpu_model(char *out, size_t len);
void print_modules(int with_kernel);
void print_header(const char *cpu, const double load0[3]);
void print_plan(const cell *cells, int ncells);
void print_results(cell *cells, int ncells, int reps);
FILE *json_open(const char *path, const char *cpu, double load0, cell *cells, int ncells);
void json_close(FILE *json);
void write_csv(const char *path, cell *cells, int ncells, int reps);
int plot(const char *png, cell *cells, int ncells, int reps);
void print_stream_summary(cell *cells, int ncells, int reps);
void print_footer(double t_start, int nbroken);

#endif
