/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the libFuzzer targets: an input reader that never fails (an
 * exhausted input reads as zeros, so every byte string is a valid program),
 * one OSSL_LIB_CTX per kernel level with chapoly loaded in it, and a
 * separate context holding the default provider as the oracle.
 *
 * A mismatch against an oracle is reported with FZ_ASSERT, which prints
 * the reason and aborts: libFuzzer then saves the input as a crash file.
 */
#ifndef CHAPOLY_FUZZ_COMMON_H
#define CHAPOLY_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include "kernels.h" /* CHAPOLY_LEVEL_LIST */

typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

uint8_t fz_u8(fz_in *in);
uint16_t fz_u16(fz_in *in);
uint32_t fz_u32(fz_in *in);
uint64_t fz_u64(fz_in *in);
void fz_bytes(fz_in *in, void *dst, size_t n);
/*
 * A length in [0, max]: mostly small, often at a 16- or 64-byte boundary
 * (+-1), sometimes anywhere up to max.
 */
size_t fz_len(fz_in *in, size_t max);

/* Deterministic filler (splitmix64 stream) for large buffers. */
void fz_fill(uint8_t *dst, size_t n, uint64_t seed);
/* Fill by pattern: 0 = prng(seed), 1 = 0xff, 2 = 0x00, 3 = alternating 0xff/0x00 blocks. */
void fz_pattern(uint8_t *dst, size_t n, unsigned pattern, uint64_t seed);

/* Allocation that never returns NULL; n == 0 gives a 1-byte block. */
void *fz_malloc(size_t n);

/* Every level of kernels.h's CHAPOLY_LEVEL_LIST, built in or not. */
#define FZ_LEVEL_ONE_(name, build) +1
#define FZ_MAX_LEVELS (0 CHAPOLY_LEVEL_LIST(FZ_LEVEL_ONE_))
typedef struct fz_level {
    const char *name;
    OSSL_LIB_CTX *ctx;
    OSSL_PROVIDER *prov;
} fz_level;

extern fz_level fz_levels[FZ_MAX_LEVELS];
extern int fz_nlevels;
extern OSSL_LIB_CTX *fz_oracle_ctx; /* default provider only */

/*
 * Load chapoly once per kernel level this CPU runs (CHAPOLY_KERNEL set
 * before each load; the provider reads it at init) and the default provider
 * into fz_oracle_ctx. OPENSSL_MODULES falls back to the build's module
 * directory. Exits on failure: a harness that cannot load is useless.
 */
void fz_setup(void);

/* Level chosen by an input byte. */
const fz_level *fz_pick_level(uint8_t b);

#define FZ_ASSERT(cond, ...)                                                    \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "FUZZ CHECK FAILED %s:%d: (%s) ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            fz_report_context();                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

/* The current case description (set by the target) printed on failure. */
extern char fz_context[512];
void fz_report_context(void);
void fz_hexdump(const char *label, const uint8_t *p, size_t n);

/* True if an OpenSSL error is queued; clears the queue. */
int fz_error_queued(void);

/* The libFuzzer entry points each target defines. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
