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
 * A streaming state is zeroed (calloc, = {0}) before its first start; it
 * holds no pointer but its kernel table's, so a copy (EVP dup) is a second
 * independent message.
 *
 * The same message without the streaming buffers (chapoly_aead_msg, with
 * one block of buffers: chapoly_aead_small) serves the one-shot calls and
 * each message of a pipeline batch (aead_batch.h); the chapoly_msg_*
 * functions below are its steps, the batch's shared kernel calls included.
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
/* Streamed refills past ks_cap end on the grid AEAD_GRID_AT + k ks_cap of text (aead_core.c). */
#define AEAD_GRID_AT 256
/* AAD up to this long waits for the key block (one kernel call for both). */
#define CHAPOLY_AEAD_AAD_BUF 64

/*
 * One message: everything but the buffers ks[] (keystream made ahead) and
 * ct[] (ciphertext not hashed yet), which follow it in memory: ks_cap bytes
 * of ks[], then ks_cap + 32 of ct[] (room for the zero pad and the lengths
 * block). Two shapes (below): chapoly_aead, the streaming message with
 * AEAD_BATCH_MAX of keystream made ahead, and chapoly_aead_small, with one
 * block, which takes every text call exactly (no keystream made ahead
 * beyond the block the text ends in): one-shot messages and each message of
 * a pipeline batch (core/aead_batch.h). The fields are listed once; a
 * chapoly_aead names them directly too (a->text_len, a->ks_made).
 */
#define CHAPOLY_AEAD_MSG_FIELDS                                                        \
    poly1305_state poly;                                                               \
    uint32_t key[8];       /* the (sub)key words */                                    \
    uint32_t ctr_nonce[4]; /* block 0 and the nonce */                                 \
    const chapoly_kernels *k;                                                          \
    uint64_t aad_len;                                                                  \
    uint64_t text_len;    /* text so far: callers check their limit against it */     \
    uint64_t batch_start; /* text offset of ks[0] and ct[0], a multiple of 64 */       \
    int phase;            /* internal: key block not made yet, AAD, text, done */      \
    unsigned aad_buffered;                                                             \
    unsigned batch_used; /* text_len - batch_start: ct[0..batch_used) awaits the MAC */ \
    unsigned ks_len;     /* keystream of the batch: ks[batch_used..ks_len) is unused */ \
    unsigned ks_made;    /* ks[0..ks_made) has held keystream since the last wipe */   \
    unsigned last_len;   /* the last update that needed a kernel call, at most 1024 */ \
    unsigned ks_cap;     /* bytes of ks[]: AEAD_BATCH_MAX or CHAPOLY_AEAD_SMALL */      \
    /* streaming, kept across messages: text lengths of the last finished message and \
     * the shorter of the last two (what a refill expects; shapes.stream_fill) */      \
    uint32_t len_last, len_hint;                                                       \
    uint8_t aad_buf[CHAPOLY_AEAD_AAD_BUF]; /* short AAD waits for the key block */

typedef struct chapoly_aead_msg {
    CHAPOLY_AEAD_MSG_FIELDS
} chapoly_aead_msg;

/* The streaming message (the provider's contexts). */
typedef struct chapoly_aead {
    union {
        chapoly_aead_msg m; /* what the core's functions take */
        struct {
            CHAPOLY_AEAD_MSG_FIELDS
        };
    };
    _Alignas(64) uint8_t ks[AEAD_BATCH_MAX];
    _Alignas(64) uint8_t ct[AEAD_BATCH_MAX + 32];
} chapoly_aead;

/* A message with buffers for one block: one-shot, and a pipeline's messages. */
#define CHAPOLY_AEAD_SMALL 64
typedef struct chapoly_aead_small {
    chapoly_aead_msg m;
    _Alignas(64) uint8_t ks[CHAPOLY_AEAD_SMALL];
    uint8_t ct[CHAPOLY_AEAD_SMALL + 32];
} chapoly_aead_small;

_Static_assert(offsetof(chapoly_aead, ks) == sizeof(chapoly_aead_msg) &&
                   offsetof(chapoly_aead, ct) == sizeof(chapoly_aead_msg) + AEAD_BATCH_MAX &&
                   offsetof(chapoly_aead_small, ks) == sizeof(chapoly_aead_msg) &&
                   offsetof(chapoly_aead_small, ct) ==
                       sizeof(chapoly_aead_msg) + CHAPOLY_AEAD_SMALL,
               "ks[] right after the message, ct[] right after ks[]");

/* A message's buffers: ks[] right after it, ct[] after ks[]. */
static inline uint8_t *chapoly_msg_ks(chapoly_aead_msg *m)
{
    return (uint8_t *)m + sizeof(*m);
}

static inline uint8_t *chapoly_msg_ct(chapoly_aead_msg *m)
{
    return (uint8_t *)m + sizeof(*m) + m->ks_cap;
}

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
/* 1 if the first taglen (1..16) bytes of the tag equal tag[] (chapoly_tag_equal). */
int chapoly_aead_verify(chapoly_aead *a, const uint8_t *tag, size_t taglen);
/*
 * The one tag comparison (every open: streamed, one-shot, TLS records,
 * pipelines): 1 if len is 1..16 and the first len bytes of calc and tag are
 * equal, else 0. Constant time in the bytes; the result is public (the
 * caller learns it anyway) and callers may branch on it.
 */
int chapoly_tag_equal(const uint8_t calc[16], const uint8_t *tag, size_t len);
/* Abandon the message: its Poly1305 key and accumulator and unused keystream are wiped. */
void chapoly_aead_end(chapoly_aead *a);
/* chapoly_aead_end, and the (sub)key words too. */
void chapoly_aead_clear(chapoly_aead *a);

/* The (sub)key words a was started with, for one-shot messages under the same key. */
static inline const uint32_t *chapoly_aead_key(const chapoly_aead *a)
{
    return a->key;
}

/* ---- one message of either shape (a pipeline's: core/aead_batch.c) ---- */

/* m->phase: block 0 not made yet (the AAD waits in aad_buf), AAD, text, done. */
enum { AEAD_PHASE_KEY, AEAD_PHASE_AAD, AEAD_PHASE_TEXT, AEAD_PHASE_DONE };

/* The counter of the text block at text offset pos (a multiple of 64): block 0 keys the MAC. */
static inline uint32_t chapoly_msg_text_ctr(uint64_t pos)
{
    return (uint32_t)(1 + pos / CHACHA20_BLOCK_BYTES);
}

/*
 * A message under the key words m->key holds (the caller has just written
 * them) and a 96-bit nonce, with ks_cap bytes of ks[] after it
 * (AEAD_BATCH_MAX or CHAPOLY_AEAD_SMALL). Nothing else of the message m
 * held before is read (nor wiped: chapoly_msg_clear first).
 */
static inline void chapoly_msg_reset(chapoly_aead_msg *m, const chapoly_kernels *k,
                                     const uint8_t nonce[12], unsigned ks_cap)
{
    m->k = k;
    m->ctr_nonce[0] = 0;
    m->ctr_nonce[1] = load32_le(nonce);
    m->ctr_nonce[2] = load32_le(nonce + 4);
    m->ctr_nonce[3] = load32_le(nonce + 8);
    m->poly.buflen = 0;
    m->aad_len = m->text_len = m->batch_start = 0;
    m->batch_used = m->ks_len = m->ks_made = 0;
    m->last_len = 0;
    m->ks_cap = ks_cap;
    if (ks_cap != AEAD_BATCH_MAX) /* a one-shot or pipeline message expects nothing */
        m->len_last = m->len_hint = 0;
    m->aad_buffered = 0;
    m->phase = AEAD_PHASE_KEY;
}

/* The same under key words given (chapoly_msg_reset after copying them). */
static inline void chapoly_msg_begin(chapoly_aead_msg *m, const chapoly_kernels *k,
                                     const uint32_t key[8], const uint8_t nonce[12],
                                     unsigned ks_cap)
{
    memcpy(m->key, key, sizeof(m->key));
    chapoly_msg_reset(m, k, nonce, ks_cap);
}

/* A finished streaming message's text length, for the next messages' refills (stream_fill). */
static inline void chapoly_msg_note_len(chapoly_aead_msg *m)
{
    uint32_t n = m->text_len < UINT32_MAX ? (uint32_t)m->text_len : UINT32_MAX;

    m->len_hint = n < m->len_last ? n : m->len_last;
    m->len_last = n;
}

/* XChaCha20-Poly1305 under the HChaCha20 subkey words: the 64-bit nonce is nonce24[16..23]. */
static inline void chapoly_msg_begin_x(chapoly_aead_msg *m, const chapoly_kernels *k,
                                       const uint32_t subkey[8], const uint8_t nonce24[24],
                                       unsigned ks_cap)
{
    uint8_t n12[12] = { 0 };

    memcpy(n12 + 4, nonce24 + 16, 8);
    chapoly_msg_begin(m, k, subkey, n12, ks_cap);
}
void chapoly_msg_aad(chapoly_aead_msg *m, const uint8_t *aad, size_t len);
/* Text taken exactly: no keystream made ahead beyond the block the text ends in. */
void chapoly_msg_text(chapoly_aead_msg *m, uint8_t *out, const uint8_t *in, size_t len,
                      int enc);
/* The lengths and the tag (chapoly_aead_finish); the message is done. */
void chapoly_msg_finish(chapoly_aead_msg *m, uint8_t tag[16]);
/* Abandoned: MAC state, unused keystream and waiting AAD wiped; clear: the key words too. */
void chapoly_msg_end(chapoly_aead_msg *m);
void chapoly_msg_clear(chapoly_aead_msg *m);

/*
 * The steps of a message whose kernel calls a caller shares with other
 * messages (aead_batch.c: one ChaCha20 call for many messages' blocks, one
 * Poly1305 call for many messages' rows). The caller hashes each row it is
 * given into m->poly, in order, before the message's next step.
 */
/* The ChaCha20 input state of block ctr of m's keystream (0: the MAC key block). */
static inline void chapoly_msg_block_state(const chapoly_aead_msg *m, uint32_t ctr,
                                           uint32_t state[16])
{
    chacha20_input_state(state, m->key, ctr, m->ctr_nonce + 1);
}
/*
 * Block 0 (kb) keys the MAC. row == NULL: the AAD waiting goes into it, and
 * more AAD may follow (returns 0). Else the AAD is complete: what of it is
 * not hashed yet (the AAD waiting, or a streamed AAD's partial last block)
 * goes zero-padded to row (room for 80 bytes), its length returned; kb may
 * then be NULL when the MAC is keyed already.
 */
size_t chapoly_msg_aad_end(chapoly_aead_msg *m, const uint8_t *kb, uint8_t *row);
/*
 * Text at a block boundary with nothing collected (batch_used 0), after
 * the AAD's end, its keystream ks made by the caller: the whole blocks of
 * ciphertext (len & ~63 bytes: out sealing, in opening) are the caller's to
 * hash, and sealing they are also copied to mac (if not NULL); the rest
 * waits in ct[] for the lengths. Opening, the caller hashes the whole
 * blocks before this call (in may equal out).
 */
void chapoly_msg_text_ks(chapoly_aead_msg *m, uint8_t *out, const uint8_t *in, size_t len,
                         const uint8_t *ks, int enc, uint8_t *mac);
/* After the AAD's end: the last row (ct[]: ciphertext collected, pad, lengths); its length. */
size_t chapoly_msg_lengths(chapoly_aead_msg *m);
/*
 * The last row's len bytes (last: ct[] after chapoly_msg_lengths, or
 * NULL with len 0 once it is hashed), then the tag; the message is done.
 */
void chapoly_msg_tag(chapoly_aead_msg *m, const uint8_t *last, size_t len, uint8_t tag[16]);

/*
 * n bytes, inline: the short copies of a message's rows (AAD, text tails)
 * cost a library call each otherwise. d and s share no byte. Whole 16-byte
 * pieces, then the last 16 (or 8, or 4) bytes again from the end: a few
 * overlapping stores of the same bytes instead of a branch per bit of n.
 */
static inline void chapoly_copy_bytes(uint8_t *d, const uint8_t *s, size_t n)
{
    if (n >= 16) {
        for (size_t i = 0; i + 16 < n; i += 16)
            memcpy(d + i, s + i, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        uint64_t head, tail;

        memcpy(&head, s, 8);
        memcpy(&tail, s + n - 8, 8);
        memcpy(d, &head, 8);
        memcpy(d + n - 8, &tail, 8);
    } else if (n >= 4) {
        uint32_t head, tail;

        memcpy(&head, s, 4);
        memcpy(&tail, s + n - 4, 4);
        memcpy(d, &head, 4);
        memcpy(d + n - 4, &tail, 4);
    } else if (n > 0) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
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
