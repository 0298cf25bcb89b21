/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ChaCha20-Poly1305 AEAD core (RFC 8439 2.8; XChaCha20-Poly1305,
 * draft-irtf-cfrg-xchacha-03, is HChaCha20 and then the same message).
 * No OpenSSL here. It owns one message: its keystream position, its
 * Poly1305 state, the AAD waiting for the key block, the lengths. Streaming
 * EVP, EVP_Cipher and TLS 1.2 records all go through it; callers check
 * their own state machine and limits and never see a batch size or a
 * Poly1305 buffer.
 *
 * Streaming: start (or start_xchacha), any number of aad calls, any number of
 * text calls (any split gives the same bytes and tag), then finish or
 * verify. Preconditions the caller enforces: no aad after text; at most
 * 2^38 - 64 bytes of text (text_len below helps); out == in or buffers
 * that share no byte (chacha20_partially_overlapping in chacha20_stream.h).
 * A state is zeroed (calloc, = {0}) before its first start; it holds no
 * pointer, so a copy (EVP dup) is a second independent message.
 */
#ifndef CHAPOLY_AEAD_CORE_H
#define CHAPOLY_AEAD_CORE_H

#include "kernels.h"
#include "chacha20_stream.h"
#include "poly1305_stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Streaming text goes through a batch: keystream made ahead in one kernel
 * call (AEAD_BATCH_MAX bytes: two 16-lane batches, four 8-lane ones) and
 * consumed across updates, and the ciphertext of the batch collected so
 * that Poly1305 hashes it in one run once the batch is used up (or at the
 * finish). Text positions: batch_start (a multiple of 64) is the text offset
 * of ks[0] and ct[0]; everything before it is hashed.
 */
#define AEAD_BATCH_MAX 2048

typedef struct chapoly_aead {
    poly1305_state poly;
    chacha20_stream stream;  /* the (sub)key; ctr_nonce: block 0 and the nonce */
    const chapoly_kernels *k;
    uint64_t aad_len;
    uint64_t text_len;       /* text so far: callers check their limit against it */
    uint64_t batch_start;    /* text offset of ks[0] and ct[0], a multiple of 64 */
    int phase;               /* internal: key block not made yet, AAD, text, done */
    unsigned aad_buffered;
    unsigned batch_used;     /* text_len - batch_start: ct[0..batch_used) waits for the MAC */
    unsigned ks_len;         /* keystream of the batch: ks[batch_used..ks_len) is unused */
    unsigned ks_made;        /* ks[0..ks_made) has held keystream since the last wipe */
    unsigned last_len;       /* the last update that needed a kernel call, at most 1024 */
    uint8_t aad_buf[64];     /* short AAD waits for the key block's batch */
    _Alignas(64) uint8_t ks[AEAD_BATCH_MAX];
    /* ciphertext of the batch; room for the zero pad and the lengths block */
    _Alignas(64) uint8_t ct[AEAD_BATCH_MAX + 32];
} chapoly_aead;

/* A message under key and a 96-bit nonce; drops the message a was holding. */
void chapoly_aead_start(chapoly_aead *a, const chapoly_kernels *k, const uint8_t key[32],
                        const uint8_t nonce[12]);
/* XChaCha20-Poly1305: HChaCha20(key, nonce[0..15]), then the 64-bit nonce[16..23]. */
void chapoly_aead_start_xchacha(chapoly_aead *a, const chapoly_kernels *k,
                                const uint8_t key[32], const uint8_t nonce[24]);
void chapoly_aead_aad(chapoly_aead *a, const uint8_t *aad, size_t len);
/* enc != 0 encrypts (the MAC reads out), enc == 0 decrypts (the MAC reads in). */
void chapoly_aead_text(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len, int enc);
/* The 16-byte tag; the message is done. */
void chapoly_aead_finish(chapoly_aead *a, uint8_t tag[16]);
/* 1 if the first taglen (1..16) bytes of the tag equal tag[], in constant time. */
int chapoly_aead_verify(chapoly_aead *a, const uint8_t *tag, size_t taglen);
/* Abandon the message: its Poly1305 key and accumulator and unused keystream are wiped. */
void chapoly_aead_end(chapoly_aead *a);
/* chapoly_aead_end, and the (sub)key words too. */
void chapoly_aead_clear(chapoly_aead *a);

/* The (sub)key words a was started with, for one-shot messages under the same key. */
static inline const uint32_t *chapoly_aead_key(const chapoly_aead *a)
{
    return a->stream.key;
}

/* ---- one-shot: the same state and code, one call per message ---- */

/*
 * AEAD_CHACHA20_POLY1305 (RFC 8439 2.8) in one call, on the same message
 * state and code as the streaming AEAD core. len must be below 2^38 - 64
 * (callers enforce it). seal writes len bytes to out and the
 * 16-byte tag. open verifies the first taglen (1..16) bytes of the tag in
 * constant time before writing anything: on success it writes len bytes of
 * plaintext and returns 1; on failure it writes nothing and returns 0.
 * out == in is allowed.
 */
void chapoly_aead_seal(const chapoly_kernels *k, uint8_t *out, uint8_t tag[16],
                       const uint8_t *in, size_t len, const uint8_t *aad,
                       size_t aadlen, const uint32_t key[8],
                       const uint8_t nonce[12]);
int chapoly_aead_open(const chapoly_kernels *k, uint8_t *out,
                      const uint8_t *in, size_t len, const uint8_t *aad,
                      size_t aadlen, const uint8_t *tag, size_t taglen,
                      const uint32_t key[8], const uint8_t nonce[12]);

#ifdef __cplusplus
}
#endif

#endif
