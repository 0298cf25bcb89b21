/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_evp_strict, one program in three files: test_evp_strict.c (the
 * helpers, single messages, TLS records and main), test_evp_strict_state.c
 * (the state machine keeps its promises), test_evp_strict_params.c
 * (parameters, the MAC's output size, lengths no buffer can have).
 */
#ifndef CHAPOLY_TEST_EVP_STRICT_H
#define CHAPOLY_TEST_EVP_STRICT_H

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include "test_common.h"

#define TAGLEN 16

/* A call that must fail (return <= 0) and queue an error. */
/* A call that must succeed; a queued error is reported and cleared. */
#define T_ACCEPT(call, ...)                                                                  \
    do {                                                                                     \
        ERR_clear_error();                                                                   \
        int r_ = (call);                                                                     \
        T_OK(r_ > 0, "rejected: " __VA_ARGS__);                                              \
        if (r_ <= 0)                                                                         \
            ERR_print_errors_fp(stderr);                                                     \
        ERR_clear_error();                                                                   \
    } while (0)

/* Like T_REJECT, and the error must say `text` (a string literal). */
#define T_REJECT_SAYS(call, text, ...)                                                       \
    do {                                                                                     \
        ERR_clear_error();                                                                   \
        int r_ = (call);                                                                     \
        T_OK(r_ <= 0, "accepted: " __VA_ARGS__);                                             \
        T_OK(err_says(text), "no \"" text "\" error: " __VA_ARGS__);                         \
    } while (0)

typedef struct {
    const char *name;
    size_t ivlen;
    EVP_CIPHER *ours;
    EVP_CIPHER *ref; /* default provider's, NULL for XChaCha */
} alg;

/* test_evp_strict.c: the inputs (random, set by main) and the helpers. */
int err_says(const char *needle);
extern alg aeads[2];
extern EVP_CIPHER *cc_ours, *cc_ref;
extern uint8_t key[32], iv[24], iv2[24], aad[40], pt[300];
int upd(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t n);
int updr(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t n);
int finr(EVP_CIPHER_CTX *ctx);
int fin(EVP_CIPHER_CTX *ctx);
int seal(EVP_CIPHER *c, const uint8_t *k, const uint8_t *n, const uint8_t *a, size_t alen,
         const uint8_t *in, size_t len, uint8_t *out, uint8_t tag[TAGLEN]);
int tls_aad(EVP_CIPHER_CTX *ctx, uint64_t seq, size_t len);

/* test_evp_strict_params.c and test_evp_strict_state.c: the checks main runs. */
void test_mac_outsize(void);
void test_unknown_params(const char *name, EVP_CIPHER *c);
void test_alg_params_null_data(const char *name, EVP_CIPHER *c);
void test_alg_params(void);
void test_key_only_reinit(const alg *a);
void test_stale_tag(const alg *a);
void test_overlap(const char *name, EVP_CIPHER *c, int aead);
void test_tls_vs_messages(const alg *a);
void test_overlap_tls(const alg *a);
void test_huge_lengths(const char *name, EVP_CIPHER *c, size_t ivlen, int aead);
void test_gettable_lists(void);
void test_null_param_data(const char *name, EVP_CIPHER *c);

#endif
