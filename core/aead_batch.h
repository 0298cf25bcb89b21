/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batched AEAD: up to CHAPOLY_BATCH_MAX independent ChaCha20-Poly1305
 * (or XChaCha20-Poly1305) messages under one key, each with its own nonce,
 * AAD and text, driven together: one call gives every message its AAD, one
 * its text, one its tag. The OpenSSL 3.5 pipeline API (provider/ciphers/
 * aead_pipeline.c) is its caller. No OpenSSL here.
 *
 * Each message equals one chapoly_aead message (core/aead_core.h) with the
 * same key, nonce, AAD and text, for any split of the calls. What is shared
 * across messages: the Poly1305 key blocks of all messages (and, for
 * XChaCha, their HChaCha20 subkeys) come from one table call of
 * chacha20_multi_blocks, and short texts (up to CHAPOLY_BATCH_SHORT bytes,
 * starting on a block boundary) take their keystream from such shared
 * calls too, many messages per batch; longer texts go through the
 * one-message stitched path (the table's aead_xor_hash in 1 KiB steps).
 *
 * A batch of one message runs the one-message core (chapoly_aead) itself, and
 * so does a message whose first text is CHAPOLY_BATCH_LONG bytes or more
 * while its AAD still waits (nothing to share: the kernels' own batches
 * are full).
 *
 * Order: start, any number of aad calls, any number of text calls, then
 * finish (tags). The caller enforces the order, the per-message limit of
 * 2^38 - 64 text bytes, and out == in or no shared byte for every message.
 */
#ifndef CHAPOLY_AEAD_BATCH_H
#define CHAPOLY_AEAD_BATCH_H

#include "kernels.h"
#include "aead_core.h"
#include "chacha20_stream.h"
#include "poly1305_stream.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CHAPOLY_BATCH_MAX 32
/* Texts up to this length share keystream batches with other messages. */
#define CHAPOLY_BATCH_SHORT 1023
/* A first text this long runs on the one-message core (see above). */
#define CHAPOLY_BATCH_LONG 1024
/* AAD up to this length per message waits for the text (one shared call for both). */
#define CHAPOLY_BATCH_AAD_BUF 64

typedef struct chapoly_batch_msg {
    poly1305_state poly;    /* first: 64-byte aligned */
    chacha20_stream stream; /* (sub)key, counter, keystream position */
    /*
     * single != 0: the message runs on the one-message core. Zeroed with the
     * batch and left valid by every clear, so a start needs no zeroing.
     */
    chapoly_aead one;
    int single;
    uint64_t aad_len;
    uint64_t text_len;
    unsigned aad_buffered; /* short AAD waits here for the key block's batch */
    uint8_t aad_buf[CHAPOLY_BATCH_AAD_BUF];
} chapoly_batch_msg;

typedef struct chapoly_batch {
    const chapoly_kernels *k;
    size_t n;
    int phase; /* internal: no key blocks yet, AAD, text, done */
    /* A batch of one message is that message on the one-message core: nothing to share. */
    chapoly_aead one;
    _Alignas(64) chapoly_batch_msg m[]; /* n of them (none when n is 1) */
} chapoly_batch;

/* Bytes of a chapoly_batch for n messages (allocate 64-byte aligned, zeroed). */
static inline size_t chapoly_batch_size(size_t n)
{
    return sizeof(chapoly_batch) + n * sizeof(chapoly_batch_msg);
}

/*
 * n (1..CHAPOLY_BATCH_MAX) messages under key: nonces[i] is 12 bytes, or 24
 * for XChaCha20-Poly1305 (xchacha != 0). Drops what b held.
 */
void chapoly_batch_start(chapoly_batch *b, const chapoly_kernels *k, const uint8_t key[32],
                         const uint8_t *const nonces[], size_t n, int xchacha);
/* AAD of every message (len[i] may be 0; aad[i] may then be NULL). */
void chapoly_batch_aad(chapoly_batch *b, const uint8_t *const aad[], const size_t len[]);
/* Text of every message; enc != 0 encrypts (the MAC reads out), else decrypts. */
void chapoly_batch_text(chapoly_batch *b, uint8_t *const out[], const uint8_t *const in[],
                        const size_t len[], int enc);
/* The 16-byte tag of every message to tags[i]; the messages are done. */
void chapoly_batch_finish(chapoly_batch *b, uint8_t (*tags)[16]);
/* Wipes every key, subkey, Poly1305 state and keystream b holds. */
void chapoly_batch_clear(chapoly_batch *b);

#ifdef __cplusplus
}
#endif

#endif
