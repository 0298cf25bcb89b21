/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batched AEAD: up to CHAPOLY_BATCH_MAX independent ChaCha20-Poly1305
 * (or XChaCha20-Poly1305) messages under one key, each with its own nonce,
 * AAD and text, driven together: one call gives every message its AAD, one
 * its text, one its tag. The OpenSSL 3.5 pipeline API (provider/ciphers/
 * aead_pipeline.c) is its caller. No OpenSSL here.
 *
 * A layer over the one-message core (core/aead_core.h): each message is a
 * chapoly_aead_small, the core's message with buffers for one block, and
 * its state moves only through the core's steps; the layer shares kernel
 * calls across messages. The Poly1305 key blocks of all messages (and, for
 * XChaCha, their HChaCha20 subkeys) come from one table call of
 * chacha20_multi_blocks, and short texts (up to CHAPOLY_BATCH_SHORT bytes,
 * starting on a block boundary) take their keystream from such shared calls
 * too, many messages per call; their MAC rows (the AAD's end, the text's
 * whole blocks, then the lengths) go to poly1305_multi_blocks, many
 * messages per call. Any other text runs on the core's own text loop
 * (chapoly_msg_text), and so does everything in a batch of one.
 *
 * Each message equals one chapoly_aead message with the same key, nonce,
 * AAD and text, for any split of the calls. Order: start, any number of aad
 * calls, any number of text calls, then finish (tags). The caller enforces
 * the order, the per-message limit of 2^38 - 64 text bytes (text_len), and
 * out == in or no shared byte for every message.
 */
#ifndef CHAPOLY_AEAD_BATCH_H
#define CHAPOLY_AEAD_BATCH_H

#include "kernels.h"
#include "aead_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CHAPOLY_BATCH_MAX 32
/* Texts up to this length share keystream batches with other messages. */
#define CHAPOLY_BATCH_SHORT 1023

typedef struct chapoly_batch {
    const chapoly_kernels *k;
    size_t n;                         /* messages of the batch started last (0: none yet) */
    _Alignas(64) chapoly_aead_small m[]; /* n of them: the core's messages */
} chapoly_batch;

/*
 * Bytes of a chapoly_batch with room for n messages (allocate 64-byte
 * aligned; nothing needs zeroing but n, set to 0 before the first start).
 */
static inline size_t chapoly_batch_size(size_t n)
{
    return sizeof(chapoly_batch) + n * sizeof(chapoly_aead_small);
}

/* Text so far of message i (the message's own count, the only one). */
static inline uint64_t chapoly_batch_text_len(const chapoly_batch *b, size_t i)
{
    return b->m[i].m.text_len;
}

/*
 * n (1..CHAPOLY_BATCH_MAX, within the room allocated) messages under key:
 * nonces[i] is 12 bytes, or 24 for XChaCha20-Poly1305 (xchacha != 0).
 * b holds no message in progress (none started yet, finished or cleared).
 */
void chapoly_batch_start(chapoly_batch *b, const chapoly_kernels *k, const uint8_t key[32],
                         const uint8_t *const nonces[], size_t n, int xchacha);
/* AAD of every message (len[i] may be 0; aad[i] may then be NULL). */
void chapoly_batch_aad(chapoly_batch *b, const uint8_t *const aad[], const size_t len[]);
/* Text of every message; enc != 0 encrypts (the MAC reads out), else decrypts. */
void chapoly_batch_text(chapoly_batch *b, uint8_t *const out[], const uint8_t *const in[],
                        const size_t len[], int enc);
/* The 16-byte tag of every message to tags[i]; the messages are done and wiped. */
void chapoly_batch_finish(chapoly_batch *b, uint8_t (*tags)[16]);
/*
 * Wipes every key, subkey, Poly1305 state, waiting AAD and keystream the
 * messages of the batch hold (a finished batch holds none: nothing to do).
 */
void chapoly_batch_clear(chapoly_batch *b);

#ifdef __cplusplus
}
#endif

#endif
