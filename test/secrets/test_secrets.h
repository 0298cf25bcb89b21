/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_secrets, one program in four files: test_secrets.c (freed memory
 * scanned for secrets, the EVP calls' dead stack, main), test_secrets_stack.c
 * (the dead-stack scanner and its secret word lists), test_secrets_kernels.c
 * (the Poly1305 and ChaCha20 kernel calls), test_secrets_range.c
 * (aead_xor_hash_range and aead_first_xor_hash).
 */
#ifndef CHAPOLY_TEST_SECRETS_H
#define CHAPOLY_TEST_SECRETS_H

#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "kernels.h"
#include "row1_forms.h"
#include "test_common.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define T_MAKE_DEFINED(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))
#endif
#endif
#ifndef T_MAKE_DEFINED
#define T_MAKE_DEFINED(p, n) ((void)(p), (void)(n))
#endif

#define DEAD_STACK_BYTES (64 * 1024)
#define T_NOASAN __attribute__((noinline, no_sanitize_address))

/* Secret words, sorted by value before a scan (stack_scan bsearches). */
#define NWORDS 80000
struct word {
    uint64_t v;
    const char *what;
    int idx; /* state word index, or -1 */
    int swapped; /* big-endian CPUs: v is the word's little-endian byte form */
};

/*
 * A secret word lies in memory in one of two byte orders: as the CPU stores
 * a register (a spill, a saved register: native order) or as the bytes it
 * was loaded from or is stored to (key, keystream, tag: ChaCha20 and
 * Poly1305 are little-endian). On a little-endian CPU the two are the same
 * bytes; on a big-endian one (s390x) the lists hold both forms of each
 * word (add_word_idx, add_word32_idx), and the scanner reads native words.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define T_BIG_ENDIAN 1
#endif

/*
 * 32-bit secret words (ChaCha20 is a 32-bit cipher), looked for at every
 * byte offset too. A random 32-bit word matches about 64K / 2^32 of the
 * time per scan: rare enough, and the PRNG is deterministic. Zero is never
 * listed: the scanned region is zeroed before the call.
 */
#define NWORDS32 2048
#define NVECS 64

/* An operation check_op runs deep on a clean stack. */
typedef void (*stack_op)(void *arg);

/* Reference ChaCha20 rounds (RFC 8439 2.3), in the test: no kernel code. */
#define T_ROTL(v, c) (((v) << (c)) | ((v) >> (32 - (c))))
#define T_QR(a, b, c, d)                                    \
    do {                                                    \
        a += b; d ^= a; d = T_ROTL(d, 16);                  \
        c += d; b ^= c; b = T_ROTL(b, 12);                  \
        a += b; d ^= a; d = T_ROTL(d, 8);                   \
        c += d; b ^= c; b = T_ROTL(b, 7);                   \
    } while (0)

/* test_secrets_stack.c has t_secrets_call_regs here (x86-64 and AArch64 ELF). */
#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__ELF__)
#define T_CALL_REGS 1
#endif

/* test_secrets_stack.c: the word lists, the scanner and its self-checks. */
extern struct word words[NWORDS];
extern size_t nwords;
extern size_t nwords32;
void add_word32_idx(uint32_t w, const char *what, int idx);
void add_word_idx(uint64_t w, const char *what, int idx);
void add_word(uint64_t w, const char *what);
extern size_t nvecs;
void add_vec4(const uint64_t v[4], const char *what);
void add_state_words(const poly1305_state *st, const char *what);
uint64_t le64(const uint8_t *p);
void add_poly_words(const uint8_t key[32], const uint8_t *tag);
void add_lane_product_words(const uint8_t key[32], const uint8_t *msg, size_t nblocks,
                            unsigned padbit);
void words_sort(void);
void stack_clear(void);
void call_deep(stack_op op, void *arg);
const struct word *stack_scan(void);
extern unsigned long stack_scans;
extern int keep_callee_saved;
void check_op(stack_op op, void *arg, const char *what);
extern uint64_t planted;
void plant_op(void *arg);
extern uint32_t planted32;
void plant32_op(void *arg);
void plant_le_op(void *arg);
void plant32_native_op(void *arg);
const struct word *scan_with_planted_regs(uint64_t w);

/* test_secrets_kernels.c: the kernel calls' inputs, the reference rounds. */
extern uint8_t kkey[32], kmsg[4096], ktag[16];
void kernel_words(const uint8_t *tag, const poly1305_state *before, const poly1305_state *after);
void kernel_poly_stack(const chapoly_kernels *k);
void kernel_poly_multi_stack(const chapoly_kernels *k);
void kernel_multi_hash_stack(const chapoly_kernels *k);
extern uint32_t ckey[8], ccn[4];
void ref_rounds(uint32_t x[16]);
void ref_init(uint32_t s[16], const uint32_t key[8], uint32_t ctr, const uint32_t n[3]);
uint32_t le32(const uint8_t *p);
void ref_block_words(uint32_t ctr, int b, uint8_t ks[64]);
void kernel_chacha_stack(const chapoly_kernels *k);

/* test_secrets_range.c */
void kernel_xor_hash_stack(const chapoly_kernels *k);
void kernel_range_stack(const chapoly_kernels *k);
void kernel_first_stack(const chapoly_kernels *k);

#endif
