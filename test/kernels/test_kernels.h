/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the translation units of test_kernels (see test_kernels.c for
 * what the program checks). One program, one level walk in main(); each
 * file checks one concern at the level it is handed:
 *
 *   test_kernels.c          results, PRNG, buffers, the level walk (main)
 *   test_kernels_upper.c    upper vector state; every kernel call (k_*) goes
 *                           through it so the state is checked around it
 *   test_kernels_vectors.c  the vector files, each case routed to a *_known
 *   test_kernels_chacha.c   ChaCha20 and HChaCha20: vectors, portable oracle;
 *                           the one-block row forms (row1_forms.h)
 *   test_kernels_poly1305.c Poly1305: vectors, portable oracle, procedural
 *                           stress checks, the crossovers forced to extremes
 *   test_kernels_aead.c     one-shot AEAD, chacha20_keyblock_xor and the AEAD
 *                           entries (range, first): vectors, portable oracle
 */
#ifndef CHAPOLY_TEST_KERNELS_H
#define CHAPOLY_TEST_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "aead_core.h" /* the kernels, the streaming Poly1305 and the one-shot AEAD */

/* ------------------------------------------------------------------ */
/* results (test_kernels.c)                                            */

extern unsigned long n_pass, n_fail;
extern const char *cur_level; /* level under test, for messages */

void fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The message is formatted only on failure: the sweeps run ~10^6 checks. */
#define CHECK(cond, ...) ((cond) ? (void)n_pass++ : fail_at(__FILE__, __LINE__, __VA_ARGS__))

/* ------------------------------------------------------------------ */
/* PRNG and helpers (test_kernels.c)                                   */

uint64_t rnd64(void);
size_t rnd_below(size_t n);
void rnd_bytes(uint8_t *p, size_t n);
uint32_t le32(const uint8_t *p);
void *xalloc(size_t n);

extern const chapoly_kernels *P; /* portable: the oracle */

extern uint8_t *abuf_a, *abuf_b; /* scratch, ABUF bytes each */
#define ABUF (70000 + 4096)
#define GUARD 64
#define SENT 0xa5

int meq(const void *a, const void *b, size_t n);
void mcpy(void *d, const void *s, size_t n);
int all_byte(const uint8_t *p, size_t n, uint8_t v);

extern uint8_t *pool;  /* random bytes, POOL long */
#define POOL (1u << 18)
extern uint8_t *rbuf, *tin, *tout; /* reference out, test in, test out */
#define TBUF (70000 + 512)

const uint8_t *pool_at(size_t len);
uint32_t pick_counter(size_t i);

/* ------------------------------------------------------------------ */
/* upper vector state and kernel calls (test_kernels_upper.c)          */

void up_init(void);
int up_active(void);          /* the upper-state check is on */
void up_level_begin(int simd); /* simd: check every call of this level */
void up_level_end(void);      /* one check per entry point that was called */
void up_done(void);

void k_chacha(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
              const uint32_t key[8], const uint32_t ctr_nonce[4]);
void k_hchacha(const chapoly_kernels *k, uint8_t sub[32], const uint8_t key[32],
               const uint8_t nonce[16]);
void k_poly_raw(const chapoly_kernels *k, uint8_t tag[16], const uint8_t key[32],
                const uint8_t *m, size_t len);
void k_poly_calls(const chapoly_kernels *k, uint8_t tag[16], const uint8_t key[32],
                  const uint8_t *m, const size_t *calls, size_t ncalls, size_t tail, int last);
void k_sinit(const chapoly_kernels *k, poly1305_state *st, const uint8_t key[32]);
void k_supdate(const chapoly_kernels *k, poly1305_state *st, const uint8_t *m, size_t len);
void k_sfinal(const chapoly_kernels *k, poly1305_state *st, uint8_t tag[16]);
void k_poly_stream(const chapoly_kernels *k, uint8_t tag[16], const uint8_t key[32],
                   const uint8_t *m, const size_t *pieces, size_t npieces);
void k_seal(const chapoly_kernels *k, uint8_t *out, uint8_t tag[16], const uint8_t *in,
            size_t len, const uint8_t *aad, size_t aadlen, const uint32_t key[8],
            const uint8_t nonce[12]);
int k_open(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
           const uint8_t *aad, size_t aadlen, const uint8_t *tag, size_t taglen,
           const uint32_t key[8], const uint8_t nonce[12]);
void k_xor_hash_range(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                      size_t pre, size_t hash_len, const uint32_t key[8],
                      const uint32_t ctr_nonce[4], poly1305_state *st, int enc);
void k_first_xor_hash(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                      size_t hash_len, const uint8_t *aad, size_t aadlen, const uint32_t key[8],
                      const uint32_t ctr_nonce[4], poly1305_state *st, int enc);
void k_keyblock_xor(const chapoly_kernels *k, uint8_t key_block[64], uint8_t *out,
                    const uint8_t *in, size_t len, const uint32_t key[8],
                    const uint32_t ctr_nonce[4]);
void k_multi_blocks(const chapoly_kernels *k, uint8_t *out, const uint32_t *states, size_t n);
void k_multi_hash(const chapoly_kernels *k, uint8_t *out, const uint32_t *states, size_t n,
                  poly1305_state *const st[], const uint8_t *in[], size_t len[], size_t nh);
/* A one-block row form (row1_forms.h), called directly: not a table entry. */
void k_row1(void (*fn)(uint8_t *, const uint8_t *, size_t, const uint32_t *, const uint32_t *),
            uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
            const uint32_t ctr_nonce[4]);
void k_poly_multi(const chapoly_kernels *k, poly1305_state *const st[], const uint8_t *const in[],
                  const size_t len[], size_t n);
/* One raw block of the portable level (the oracle of chacha20_multi_blocks). */
void chacha20_xor_portable_ref(uint8_t block[64], const uint32_t key[8],
                               const uint32_t ctr_nonce[4]);

/* ------------------------------------------------------------------ */
/* the vector files (test_kernels_vectors.c)                           */

extern const char *vdir;
void run_vectors(const chapoly_kernels *k);

/* ------------------------------------------------------------------ */
/* per concern: known answers (from run_vectors) and the sweeps        */

void chacha_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                  const uint32_t ctr_nonce[4], const uint8_t *pt, const uint8_t *ct, size_t len);
void chacha_diff(const chapoly_kernels *k);
void row1_diff(const chapoly_kernels *k); /* the level's one-block row form, if any */
void hchacha_diff(const chapoly_kernels *k);

void poly_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                const uint8_t *m, size_t len, const uint8_t tag[16]);
void poly_procedural(const chapoly_kernels *k);
void poly_diff(const chapoly_kernels *k);
void poly_calls_diff(const chapoly_kernels *k);
void shape_extremes(const char *level); /* the level rebuilt with extreme forced shapes */

void aead_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                const uint8_t nonce[12], const uint8_t *aad, size_t aadlen, const uint8_t *pt,
                size_t len, const uint8_t *ct, const uint8_t tag[16]);
void aead_reject(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                 const uint8_t nonce[12], const uint8_t *aad, size_t aadlen, const uint8_t *ct,
                 size_t len, const uint8_t *tag, size_t taglen);
void aead_diff(const chapoly_kernels *k);
void xor_hash_range_diff(const chapoly_kernels *k);
void first_xor_hash_diff(const chapoly_kernels *k);
void keyblock_xor_diff(const chapoly_kernels *k);
void multi_blocks_diff(const chapoly_kernels *k); /* test_kernels_batch.c */
void batch_core_diff(const chapoly_kernels *k);   /* test_kernels_batch.c */
void poly_multi_diff(const chapoly_kernels *k);   /* test_kernels_batch.c */
void multi_hash_diff(const chapoly_kernels *k);   /* test_kernels_batch.c */

#endif
