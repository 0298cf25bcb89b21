/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the EVP/TLS test programs: load chapoly (and default) into a
 * private OSSL_LIB_CTX, simple checks that count failures, a deterministic
 * PRNG, hex helpers. Each program ends with t_finish(), which prints the
 * "N passed, N failed" line and returns the exit code.
 *
 * Environment (set by CTest): OPENSSL_MODULES = directory of chapoly.so,
 * CHAPOLY_KERNEL = kernel level under test (the program exits 77 = skipped
 * when the provider reports a different active level, i.e. the CPU lacks it),
 * CHAPOLY_VECTOR_DIR = the test vectors (default: test/vectors in the source
 * tree, compiled in as CHAPOLY_VECTOR_DIR_DEFAULT), CHAPOLY_TEST_SEED = PRNG seed.
 */
#ifndef CHAPOLY_TEST_COMMON_H
#define CHAPOLY_TEST_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#define T_SKIP 77
#define PROVQ_OURS "provider=chapoly"
#define PROVQ_DEFAULT "provider=default"

extern OSSL_LIB_CTX *t_ctx;        /* set by t_setup() */
extern OSSL_PROVIDER *t_prov;      /* chapoly in t_ctx */
extern OSSL_PROVIDER *t_default;   /* default in t_ctx */

/* Create t_ctx with default + chapoly; exits 77 if the kernel level is absent. */
void t_setup(void);
void t_teardown(void);
const char *t_kernel(void); /* chapoly-kernel provider param */

EVP_CIPHER *t_cipher(const char *name, int ours); /* ours: provider=chapoly */
EVP_MAC *t_mac(const char *name, int ours);

/* Checks: record a failure with file:line and a message, never abort. */
extern unsigned long t_pass, t_fail;
int t_check_(int ok, const char *file, int line, const char *fmt, ...);
#define T_OK(cond, ...) t_check_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define T_EQ_MEM(a, b, n, ...) t_check_(memcmp((a), (b), (n)) == 0, __FILE__, __LINE__, __VA_ARGS__)
int t_finish(const char *program); /* prints counts; returns 0 iff no failure */

/* True if an error is queued; clears the queue. */
int t_error_queued(void);

/* The call must fail (<= 0) and leave an error queued. */
#define T_REJECT(call, ...)                                                                  \
    do {                                                                                     \
        ERR_clear_error();                                                                   \
        int r_ = (call);                                                                     \
        T_OK(r_ <= 0, "accepted: " __VA_ARGS__);                                             \
        T_OK(t_error_queued(), "no error queued: " __VA_ARGS__);                             \
    } while (0)

/* malloc that exits on failure (n == 0 allowed). */
uint8_t *t_xmalloc(size_t n);

/* The "tag" ctx parameter as an octet string. */
int t_set_tag(EVP_CIPHER_CTX *ctx, const uint8_t *tag, size_t n);
int t_get_tag(EVP_CIPHER_CTX *ctx, uint8_t *tag, size_t n);

/*
 * An AAD update must report outl == inl, as the default provider does. It is
 * tallied apart (one summary check, t_check_aad_outl) so that a deviation
 * there does not hide the results of everything that follows in a message.
 */
void t_note_aad_outl(size_t inl, int outl, const char *where);
void t_check_aad_outl(void);

/* Deterministic PRNG (xoshiro256**), seeded from CHAPOLY_TEST_SEED or 1. */
uint64_t t_rand64(void);
size_t t_rand_below(size_t n); /* uniform-ish in [0, n) */
void t_rand_bytes(void *buf, size_t n);
/*
 * A length in [0, max], mostly near k*64 or k*16 (+-1): the limit is drawn
 * from scales[0..n), then a block multiple, a tag-block multiple or any value.
 */
size_t t_pick_len(size_t max, const size_t *scales, size_t nscales);

void t_hexdump(const char *label, const uint8_t *p, size_t n);

/* Path of a file in CHAPOLY_VECTOR_DIR, else CHAPOLY_VECTOR_DIR_DEFAULT (static buffer). */
const char *t_vector_path(const char *file);

#endif
