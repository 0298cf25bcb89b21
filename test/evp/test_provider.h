/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_provider, one program in two files: test_provider.c (the provider's
 * params, its algorithm tables, the counters and the statistics switch; the
 * operations that drive the counters; main) and test_provider_config.c (the
 * statistics file, loading through an openssl.cnf, statistics across fork).
 */
#ifndef CHAPOLY_TEST_PROVIDER_H
#define CHAPOLY_TEST_PROVIDER_H

#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/core_dispatch.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include "test_common.h"
#include "kernels.h"

#define TAGLEN 16

/* The statistics counters, in the order of the provider's statistics line. */
enum { C_MSGS, C_SEALS, C_OPENS, C_TLS, C_CC_CALLS, C_CC_BYTES, C_MACS, C_BATCHES, NCTR };
typedef struct {
    uint64_t v[NCTR];
    int ok;
} counters;

/* test_provider.c: the counters, the inputs (random, set by main) and the operations. */
extern const char *const ctr_names[NCTR];
int known_level(const char *s);
counters read_counters(OSSL_PROVIDER *prov);
int all_zero(const counters *c);
const char *show(const counters *c);
const char *read_kernel(OSSL_PROVIDER *prov);
extern uint8_t key[32], iv[24], aad[13], pt[500], buf[600];
int op_seal(OSSL_LIB_CTX *lc, const char *name, size_t len, uint8_t tag[TAGLEN]);
int op_open(OSSL_LIB_CTX *lc, const char *name, size_t len, const uint8_t tag[TAGLEN]);
int op_tls_record(OSSL_LIB_CTX *lc, int enc, size_t len, int use_evp_cipher, uint8_t *rec);
int op_chacha20(OSSL_LIB_CTX *lc, int nupd, size_t len, int use_cipher);
int op_mac(OSSL_LIB_CTX *lc, int nupd, int fin);
int op_seal_unfinished(OSSL_LIB_CTX *lc);
void check_counting(OSSL_LIB_CTX *lc, OSSL_PROVIDER *prov, const char *where);

/* test_provider_config.c: the checks main runs. */
void test_stats_file(void);
void test_stats_file_idle(const char *dir);
void test_config(void);
void test_stats_file_config(const char *dir);
void test_stats_fork(const char *dir);

#endif
