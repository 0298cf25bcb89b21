/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chapoly kernels: the whole kernel API.
 *
 * Pure C (plus intrinsics in the per-ISA files). Nothing here knows about
 * OpenSSL; the provider glue reaches the kernels only through a
 * chapoly_kernels table, picked once by chapoly_kernels_select(), and
 * through the AEAD core (core/aead_core.h), which drives such a table.
 *
 * Conventions shared by every kernel level:
 *  - ChaCha20 state words follow RFC 8439: key[8] are the eight little-endian
 *    key words, ctr_nonce[0] is the 32-bit block counter and ctr_nonce[1..3]
 *    the three nonce words. The block counter wraps modulo 2^32 inside a call
 *    (RFC 8439 semantics); callers that want OpenSSL's 64-bit carry split the
 *    call at the wrap themselves.
 *  - chacha20_xor consumes ceil(len / 64) blocks; a partial last block uses
 *    the leading bytes of that block's keystream. out == in is allowed;
 *    otherwise the buffers must not overlap.
 *  - Poly1305 "blocks" functions take whole 16-byte blocks only; padbit is 1
 *    for full message blocks (adds 2^128) and 0 for a final partial block
 *    that the caller has already padded with 0x01 and zeros.
 *  - No kernel branches on or indexes by secret data; every AVX/AVX-512
 *    kernel returns with a clean upper vector state.
 */
#ifndef CHAPOLY_KERNELS_H
#define CHAPOLY_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHACHA20_KEY_BYTES 32
#define CHACHA20_BLOCK_BYTES 64
#define CHACHA20_NONCE_BYTES 12
#define HCHACHA20_NONCE_BYTES 16
#define POLY1305_KEY_BYTES 32
#define POLY1305_TAG_BYTES 16
#define POLY1305_BLOCK_BYTES 16

/*
 * Poly1305 state. The layout of 'priv' belongs to the kernel level that
 * initialised it (radix 2^64 scalar, 2^26 AVX2 or 2^44 IFMA hash, key
 * powers); a state must be driven by the same table from init to final.
 * 'buf'/'buflen' hold MAC input short of a block between calls: the
 * streaming helpers and the AEAD core (core/) use them; the
 * kernels never do.
 */
#define POLY1305_PRIV_WORDS 192
typedef struct poly1305_state {
    _Alignas(64) uint64_t priv[POLY1305_PRIV_WORDS];
    uint8_t buf[POLY1305_BLOCK_BYTES];
    size_t buflen;
} poly1305_state;

typedef struct chapoly_kernels {
    const char *name; /* a level of CHAPOLY_KERNEL_NAMES */
    /* CPU features the level requires, for messages ("AVX2 BMI2", ...). */
    const char *features;

    void (*chacha20_xor)(uint8_t *out, const uint8_t *in, size_t len,
                         const uint32_t key[8], const uint32_t ctr_nonce[4]);
    /*
     * Optional (NULL: the helper chapoly_chacha20_keyblock_xor composes it):
     * the raw keystream block at counter ctr_nonce[0] to key_block, and len
     * bytes of text XORed from the next counter on, in the batch shapes of
     * one len + 64 byte call. The AEAD's Poly1305 key block and its first
     * text.
     */
    void (*chacha20_keyblock_xor)(uint8_t key_block[64], uint8_t *out,
                                  const uint8_t *in, size_t len,
                                  const uint32_t key[8],
                                  const uint32_t ctr_nonce[4]);
    /* HChaCha20 (draft-irtf-cfrg-xchacha-03 2.2): 32-byte subkey. */
    void (*hchacha20)(uint8_t subkey[32], const uint8_t key[32],
                      const uint8_t nonce[16]);

    void (*poly1305_init)(poly1305_state *st, const uint8_t key[32]);
    void (*poly1305_blocks)(poly1305_state *st, const uint8_t *in, size_t len,
                            unsigned padbit);
    /* Writes the tag of everything hashed so far and wipes st->priv. */
    void (*poly1305_final)(poly1305_state *st, uint8_t tag[16]);

    /*
     * Optional (NULL: the helper chapoly_aead_xor_hash composes it): ChaCha20
     * over len bytes, a multiple of 1024, and Poly1305 blocks (padbit 1)
     * over their ciphertext, the two interleaved. enc != 0: out is the
     * ciphertext, hashed after it is written; if prev_ciphertext is not
     * NULL, the 1024 bytes there (the kilobyte of ciphertext just before
     * out, not hashed yet) are hashed first, while the first kilobyte is
     * encrypted. enc == 0: in is the ciphertext, hashed before out is
     * written; prev_ciphertext must be NULL. out == in is allowed. st must
     * be driven by this table, with no partial block buffered.
     */
    void (*aead_xor_hash)(uint8_t *out, const uint8_t *in, size_t len,
                          const uint32_t key[8], const uint32_t ctr_nonce[4],
                          poly1305_state *st, const uint8_t *prev_ciphertext,
                          int enc);

    /*
     * Optional (NULL: the helper chapoly_chacha20_multi_blocks composes it):
     * n independent ChaCha20 blocks, block i the block function of the
     * 16-word input state states[16 i .. 16 i + 15] (words 0..3 the
     * constants SIGMA0..3, 4..11 a key, 12 a counter, 13..15 a nonce: key,
     * counter and nonce may differ from block to block), written to
     * out + 64 i. Raw keystream; no counter is incremented. The batched
     * AEAD (core/aead_batch.c): many messages' Poly1305 key blocks, short
     * texts and HChaCha20 subkeys in shared batches.
     */
    void (*chacha20_multi_blocks)(uint8_t *out, const uint32_t *states, size_t n);
    /*
     * Optional (NULL: the helper chapoly_poly1305_multi_blocks calls
     * poly1305_blocks once per state): n states of this table, each with
     * its own whole blocks (len[i] a multiple of 16, padbit 1), the same as
     * poly1305_blocks(st[i], in[i], len[i], 1) for each i. The batched AEAD:
     * short messages' Horner chains in one call (eight messages per IFMA
     * vector at the "avx512" level).
     */
    void (*poly1305_multi_blocks)(poly1305_state *const st[], const uint8_t *const in[],
                                  const size_t len[], size_t n);
    /*
     * Optional (NULL: the AEAD core uses chacha20_keyblock_xor,
     * poly1305_blocks and aead_xor_hash instead): ChaCha20 over len bytes
     * (any length) from counter ctr_nonce[0], and Poly1305 blocks (padbit
     * 1) over the pre + hash_len bytes that start pre bytes before the
     * text's ciphertext (base = out sealing, in opening: base - pre ..
     * base + hash_len), interleaved. pre and hash_len are multiples of 16,
     * hash_len <= len; the pre bytes are ciphertext not hashed yet (the
     * AEAD core: the text of the key block's batch). Sealing, out == in is
     * allowed; opening, out == in only with pre == 0, else out and in
     * share no byte. st as for aead_xor_hash. The core's first text: a
     * whole short message in one batch pipeline.
     */
    void (*aead_xor_hash_range)(uint8_t *out, const uint8_t *in, size_t len, size_t pre,
                                size_t hash_len, const uint32_t key[8],
                                const uint32_t ctr_nonce[4], poly1305_state *st, int enc);
    /*
     * Optional (NULL: the helper chapoly_aead_first_xor_hash composes it):
     * the start of an AEAD message. Block ctr_nonce[0] keys st (as
     * poly1305_init with its first 32 bytes; st needs no init before), the
     * aadlen bytes at aad are hashed zero-padded to a block, then len > 448
     * bytes of text from the next counter are XORed and the first hash_len
     * bytes of their ciphertext (a multiple of 16, 448 <= hash_len <= len)
     * hashed, as aead_xor_hash_range with the text's first 7 blocks in the
     * key block's batch. Sealing, out == in is allowed; opening, out and in
     * share no byte.
     */
    void (*aead_first_xor_hash)(uint8_t *out, const uint8_t *in, size_t len, size_t hash_len,
                                const uint8_t *aad, size_t aadlen, const uint32_t key[8],
                                const uint32_t ctr_nonce[4], poly1305_state *st, int enc);
} chapoly_kernels;

/* ---- dispatch (kernels/dispatch.c): the one place that picks kernels ---- */

/* Always available; the oracle for every other level. */
const chapoly_kernels *chapoly_kernels_portable(void);

/*
 * Table for a named level (CHAPOLY_KERNEL_NAMES but "best"), or NULL
 * if that level was not compiled in or this CPU/OS cannot run it.
 */
const chapoly_kernels *chapoly_kernels_by_name(const char *name);

/* The best level this CPU runs (Skylake-X class cores prefer "avx512vl"). */
const chapoly_kernels *chapoly_kernels_best(void);

/*
 * The level to use: 'request' (config key) if non-NULL and non-empty, else
 * the environment variable CHAPOLY_KERNEL (read with secure_getenv, so
 * ignored in setuid processes), else the best. A request this CPU or build
 * cannot honour, or a name that is not a level at all, falls back to the
 * best level and sets *warning (if non-NULL) to a static message; otherwise
 * *warning is set to NULL.
 */
const chapoly_kernels *chapoly_kernels_select(const char *request,
                                              const char **warning);

/* Names of every level compiled into this build, NULL-terminated. */
const char *const *chapoly_kernels_compiled(void);

/* Every level name the code knows ("best" included), built in or not. */
#define CHAPOLY_KERNEL_NAMES "best, portable, avx2, avx512vl, avx512-noifma, avx512, neon"

/* 1 if name is one of CHAPOLY_KERNEL_NAMES, 0 otherwise (NULL included). */
int chapoly_kernels_known(const char *name);

/* ---- optional table entries (kernels/optional_kernels.c) ---- */

/* The table's chacha20_keyblock_xor, or the same bytes through chacha20_xor. */
void chapoly_chacha20_keyblock_xor(const chapoly_kernels *k,
                                   uint8_t key_block[64], uint8_t *out,
                                   const uint8_t *in, size_t len,
                                   const uint32_t key[8],
                                   const uint32_t ctr_nonce[4]);

/*
 * The table's aead_xor_hash, or chacha20_xor and poly1305_blocks in the
 * order it describes. len must be a multiple of 1024.
 */
void chapoly_aead_xor_hash(const chapoly_kernels *k, uint8_t *out,
                           const uint8_t *in, size_t len, const uint32_t key[8],
                           const uint32_t ctr_nonce[4], poly1305_state *st,
                           const uint8_t *prev_ciphertext, int enc);

/* The table's aead_xor_hash_range, or chacha20_xor and poly1305_blocks in its order. */
void chapoly_aead_xor_hash_range(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                 size_t len, size_t pre, size_t hash_len, const uint32_t key[8],
                                 const uint32_t ctr_nonce[4], poly1305_state *st, int enc);

/* The table's aead_first_xor_hash, or the same from the required entries. */
void chapoly_aead_first_xor_hash(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                 size_t len, size_t hash_len, const uint8_t *aad,
                                 size_t aadlen, const uint32_t key[8],
                                 const uint32_t ctr_nonce[4], poly1305_state *st, int enc);

/* The table's chacha20_multi_blocks, or the same bytes through chacha20_xor. */
void chapoly_chacha20_multi_blocks(const chapoly_kernels *k, uint8_t *out,
                                   const uint32_t *states, size_t n);

/* The table's poly1305_multi_blocks, or poly1305_blocks per state. */
void chapoly_poly1305_multi_blocks(const chapoly_kernels *k, poly1305_state *const st[],
                                   const uint8_t *const in[], const size_t len[], size_t n);

/* ---- byte helpers (kernels/bytes.c) ---- */

/* key bytes -> key words (little-endian). */
void chapoly_load_key(uint32_t key[8], const uint8_t bytes[32]);

/* Constant-time comparison: 0 if equal. */
int chapoly_consttime_memneq(const void *a, const void *b, size_t n);

/* A wipe the optimiser cannot remove. */
void chapoly_wipe(void *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif
