/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp's internal header: one program split by concern, not an API.
 *
 *   bench_evp.c          command line, the levels' environments (--avx2),
 *                        --loop, main
 *   bench_evp_impls.c    operations, inputs and buffers, the library contexts,
 *                        the EVP loops (chapoly, default, base, floor), jobs
 *   bench_evp_libs.c     BoringSSL (dlopen) and libsodium loops
 *   bench_evp_tls.c      TLS records through libssl, the routing proof
 *   bench_evp_floor.c    the floor: a built-in provider doing no cryptography
 *   bench_evp_run.c      clocks, samples, cells (output check, calibration,
 *                        interleaved repetitions), the tables and the CSV
 *   bench_sweep.c        "bench_evp sweep": levels, passes, the CSV rows
 *   bench_sweep_report.c the sweep's report and heat map, from its CSV
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

#define AAD_LEN 13      /* seal, open, ...: a TLS 1.2 record's AAD */
#define QUIC_AAD_LEN 20 /* quic-seal, quic-open: a short QUIC header */
#define TAG_LEN 16
#define KEY_LEN 32
#define TLS_MAX_RECORD 16384
#define MAX_REPS 64
#define MAX_PIPES 32
#define CHECK_SEQ 0x0123456789abcdefULL
#define OPEN_SEQ 0x5eed000000000000ULL

/*
 * Implementations. base: a second chapoly.so (--base) in a library context
 * of its own, run with chapoly's loops; floor: bench_evp_floor.c.
 */
enum { IM_CHAPOLY, IM_DEFAULT, IM_BASE, IM_FLOOR, IM_BORING, IM_SODIUM, IM_N };
extern const char *const impl_name[IM_N];

enum kind { K_SEAL, K_OPEN, K_CHACHA, K_HP, K_POLY, K_TLS, K_PIPE };
enum {
    F_X = 1,      /* XChaCha20-Poly1305 (24-byte nonce) */
    F_REKEY = 2,  /* a new key every message */
    F_NEWCTX = 4, /* a new context every message */
    F_QUIC = 8,   /* the 20-byte AAD of a QUIC packet */
    F_MAIN = 16,  /* in bench_evp's default set */
    F_SWEEP = 32, /* in the sweep's default set */
};
typedef struct opdef {
    const char *name;
    enum kind kind;
    int flags;
    int arg; /* seal: bytes per update (0: one update); tls: the protocol version */
    const char *title;
} opdef;
#define N_OPS 18
extern const opdef ops[N_OPS];
const opdef *op_named(const char *name);

struct bench_cfg {
    size_t sizes[64];
    int nsizes, sizes_given;
    int op_on[N_OPS];
    int reps, quick, pipes;
    double sample_ms;
    const char *csv, *module, *base, *boring_path, *loop;
    int no_boring, no_sodium;
    int placement;  /* --placement: out - in mod 4096 (a multiple of 64); -1: drawn */
    int heap_shift; /* --heap-shift: bytes taken from the heap first (multiple of 16); -1: drawn */
};
extern struct bench_cfg cfg;

__attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...);

/* Sets a kernel level's environment (CHAPOLY_KERNEL, OPENSSL_ia32cap) if set; 0: unknown level. */
int set_level_env(const char *level, int set);

/* ------------------------------------------------------------------ */
/* Jobs: one implementation of one operation, with its own state.      */

typedef struct bufset {
    uint8_t *in, *out; /* out: ciphertext || tag per message (pipeline: one per pipe) */
    uint8_t *ct[2];    /* open: two valid ciphertexts || tags under two nonces */
    size_t ct_size;
    const opdef *ct_op;
} bufset;

typedef struct tls_pair {
    SSL_CTX *cctx, *sctx;
    SSL *cli, *srv;
} tls_pair;

typedef struct job job;
struct job {
    const opdef *op;
    int impl;
    int (*run)(job *j, size_t n, uint64_t iters);
    bufset *b;
    uint64_t seq; /* message counter: nonce, and key of the re-keying ops */
    size_t ivlen, aadlen;
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;
    int pipe_ready; /* the pipeline context holds its cipher */
    EVP_MAC *mac;
    EVP_MAC_CTX *mctx;
    const void *aead; /* BoringSSL EVP_AEAD */
    void *bctx;       /* BoringSSL EVP_AEAD_CTX, poly1305_state */
    tls_pair *tls;
};

extern uint8_t g_key[KEY_LEN];
extern uint8_t g_aad[QUIC_AAD_LEN];

/* Same nonce sequence for every implementation: fixed prefix, LE counter at the end. */
static inline void make_nonce(uint8_t *nonce, size_t len, uint64_t seq)
{
    for (size_t i = 0; i < len - 8; i++)
        nonce[i] = (uint8_t)(0xa0 + i);
    for (int i = 0; i < 8; i++)
        nonce[len - 8 + i] = (uint8_t)(seq >> (8 * i));
}

/* Per-message key of the re-keying operations: the key with the counter XORed in. */
static inline void make_key(uint8_t key[KEY_LEN], uint64_t seq)
{
    memcpy(key, g_key, KEY_LEN);
    for (int i = 0; i < 8; i++)
        key[i] ^= (uint8_t)(seq >> (8 * i));
}

/* bench_evp_impls.c */
extern OSSL_LIB_CTX *g_libctx, *g_base_libctx;
extern char g_kernel[64], g_base_kernel[64];
int placement_bytes(void);
int heap_shift_bytes(void);
int parse_offset(const char *opt, const char *s, int step);
void shift_heap(void);
void init_inputs(void);
bufset *bufset_new(size_t max);
OSSL_LIB_CTX *make_libctx(int base, OSSL_PROVIDER **ours, OSSL_PROVIDER **dflt, char *desc,
                          size_t desclen);
void open_bench_libctx(void);
OSSL_LIB_CTX *libctx_of(int impl);
void print_modules(int with_kernel);
void print_setup(const char *title);
void print_layout(void);
job *job_new(const opdef *op, int impl, bufset *b);
void bench_cleanup(void);

/* bench_evp_libs.c */
extern int g_have_sodium, g_have_boring;
extern char g_boring_note[];
void load_comparison_libraries(void);
int libs_job_init(job *j);
void libs_job_free(job *j);

/* bench_evp_tls.c: [0] TLS 1.2, [1] TLS 1.3: 1 proven, 0 not, -1 unknown */
extern int tls_proof[2], tls_proof_base[2];
void prove_tls_routing(void);
const char *tls_route_text(void);
tls_pair *tls_pair_new(OSSL_LIB_CTX *lc, const char *propq, int version);
void tls_free(tls_pair *t);
int tls_record(job *j, size_t n, uint64_t iters);
int tls_cross_check(int impl, int version, size_t n, bufset *b);
void tls_cred_free(void);

/* bench_evp_floor.c */
OSSL_provider_init_fn bench_floor_init;

/* ------------------------------------------------------------------ */
/* Cells and timing (bench_evp_run.c)                                   */

typedef struct cell {
    const opdef *op;
    size_t size;
    job *jobs[IM_N];
    job *prep; /* open: seals its ciphertexts with the reference */
    uint64_t iters[IM_N];
    double ns[IM_N][MAX_REPS];
    int broken[IM_N];
    char why[IM_N][80];
    int checked, ref;
} cell;

extern double g_ghz, g_burst_ns;
extern int g_bursts, g_warm_div;
extern uint64_t g_bursts_run, g_bursts_dropped;

double now_ns(void);
double median(const double *v, int n);
void clock_warmup(void);
double probe_ghz(void);
void plan_bursts(double sample_ms);
void cpu_model(char *out, size_t len);
/* Median over repetitions of ns[a] / ns[b] (diff: ns[a] - ns[b]); NAN when either is absent. */
double rep_stat(const cell *c, int a, int b, int reps, int diff);
double med_ns(const cell *c, int im, int reps);
job *seal_job_for(const opdef *open, bufset *b);
void prepare_ct(cell *c, bufset *b);
int check_and_calibrate(cell *cells, int ncells, bufset *b);
void run_repetition(cell *cells, int ncells, bufset *b, int r);
int build_cells(cell *cells, bufset *b);
void print_results(cell *cells, int ncells, int reps);
void write_csv(const char *path, cell *cells, int ncells, int reps);

/* bench_sweep.c */
int sweep_main(int argc, char **argv);
/* bench_sweep_report.c: the report of a sweep CSV; worse: what counts as worse than the base */
int sweep_report(const char *csv, const char *png, double worse);

#endif
