/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batched AEAD (aead_batch.h). Messages share ChaCha20 work through
 * the table's chacha20_multi_blocks (any key, counter and nonce per block):
 *  - start (XChaCha20 only): the HChaCha20 subkeys of all messages in one
 *    call (HChaCha20 is the block function without its feed-forward, so
 *    each subkey word is an output word minus its input word);
 *  - the Poly1305 key blocks (counter 0): in the same calls as the text's
 *    keystream when the AAD so far fits each message's aad_buf (it waits
 *    there), else at the aad call that overflows it, all in one call;
 *  - text: every message whose text is short (CHAPOLY_BATCH_SHORT) and
 *    starts on a block boundary queues its blocks; up to BATCH_BLOCKS
 *    queued blocks of many messages go to one call, then each message
 *    XORs its part. A longer text runs the one-message stitched path
 *    (aead_xor_hash_range over whole kilobytes, then the stream).
 * Poly1305 of several messages goes to the table's poly1305_multi_blocks
 * (at the SIMD levels the scalar Horner chains of all short messages in one
 * call): the padded last AAD
 * blocks, the short texts' whole blocks, and at finish the last partial
 * blocks with the lengths.
 * Per message, the MAC input is RFC 8439 2.8's: AAD, zero pad to 16, text,
 * zero pad to 16, the two 64-bit lengths.
 *
 * Secrets on the stack (the input states carry the key words, the
 * keystream buffer Poly1305 keys and keystream) are wiped before return.
 */
#include <stddef.h>
#include <string.h>
#include "aead_batch.h"
#include "bytes.h"

enum { PHASE_NEW, PHASE_AAD, PHASE_TEXT, PHASE_DONE };

/* Blocks per shared call: 8 KiB of keystream, 8 KiB of input states. */
#define BATCH_BLOCKS 128

_Static_assert(CHAPOLY_BATCH_SHORT / 64 + 1 <= BATCH_BLOCKS, "a short text fits one call");
_Static_assert(CHAPOLY_BATCH_MAX <= BATCH_BLOCKS, "all key blocks fit one call");

/*
 * n bytes (lengths are public), inline: the short copies of every message
 * (AAD, text tails, MAC rows) cost a library call each otherwise.
 */
static inline void copy_tail(uint8_t *d, const uint8_t *s, size_t n) /* n < 16 */
{
    if (n & 8) {
        memcpy(d, s, 8);
        d += 8;
        s += 8;
    }
    if (n & 4) {
        memcpy(d, s, 4);
        d += 4;
        s += 4;
    }
    if (n & 2) {
        memcpy(d, s, 2);
        d += 2;
        s += 2;
    }
    if (n & 1)
        *d = *s;
}

static inline void copy_bytes(uint8_t *d, const uint8_t *s, size_t n)
{
    if (n >= 64) {
        memcpy(d, s, n);
        return;
    }
    for (; n >= 16; n -= 16, d += 16, s += 16)
        memcpy(d, s, 16);
    copy_tail(d, s, n);
}

static void set_state(uint32_t *s, const uint32_t key[8], uint32_t ctr,
                      const uint32_t nonce[3])
{
    s[0] = SIGMA0;
    s[1] = SIGMA1;
    s[2] = SIGMA2;
    s[3] = SIGMA3;
    memcpy(s + 4, key, 32);
    s[12] = ctr;
    s[13] = nonce[0];
    s[14] = nonce[1];
    s[15] = nonce[2];
}

/*
 * Only what can hold secrets in each phase: between the key blocks and the
 * tags, whole messages (Poly1305 states whose layout belongs to the level);
 * before the key blocks, the streams ((sub)keys) and waiting AAD; after finish, nothing (it
 * wiped the streams, and each level's final wipes its Poly1305 state).
 */
void chapoly_batch_clear(chapoly_batch *b)
{
    if (b->n == 1) { /* a finished message was cleared by finish */
        if (b->phase != PHASE_DONE)
            chapoly_aead_clear(&b->one);
        b->phase = PHASE_DONE;
        return;
    }
    if (b->phase == PHASE_AAD || b->phase == PHASE_TEXT)
        chapoly_wipe(b->m, b->n * sizeof(b->m[0]));
    else if (b->phase == PHASE_NEW) /* streams and any AAD waiting */
        for (size_t i = 0; i < b->n; i++) {
            chapoly_wipe(&b->m[i].stream, sizeof(b->m[i].stream));
            chapoly_wipe(b->m[i].aad_buf, sizeof(b->m[i].aad_buf));
            b->m[i].aad_buffered = 0;
        }
    b->phase = PHASE_DONE;
}

/*
 * The work of many messages runs out of line (its frames hold kilobytes of
 * arrays): a batch of one pays only for its one-message core.
 */
#if defined(__GNUC__) || defined(__clang__)
#define BATCH_MANY __attribute__((noinline))
#else
#define BATCH_MANY
#endif

static BATCH_MANY void start_many(chapoly_batch *b, const chapoly_kernels *k,
                                  const uint8_t key[32], const uint8_t *const nonces[],
                                  size_t n, int xchacha);

void chapoly_batch_start(chapoly_batch *b, const chapoly_kernels *k, const uint8_t key[32],
                         const uint8_t *const nonces[], size_t n, int xchacha)
{
    chapoly_batch_clear(b);
    b->k = k;
    b->n = n;
    b->phase = PHASE_NEW;
    if (n != 1)
        start_many(b, k, key, nonces, n, xchacha);
    else if (xchacha)
        chapoly_aead_start_xchacha(&b->one, k, key, nonces[0]);
    else
        chapoly_aead_start(&b->one, k, key, nonces[0]);
}

static void start_many(chapoly_batch *b, const chapoly_kernels *k, const uint8_t key[32],
                       const uint8_t *const nonces[], size_t n, int xchacha)
{
    uint32_t kw[8], nonce[3];

    chapoly_load_key(kw, key);
    if (!xchacha) {
        for (size_t i = 0; i < n; i++) {
            chacha20_stream *s = &b->m[i].stream;

            memcpy(s->key, kw, sizeof(kw));
            for (int j = 0; j < 3; j++)
                nonce[j] = load32_le(nonces[i] + 4 * j);
            chacha20_stream_start(s, 1, nonce); /* the text starts at block 1 */
        }
    } else {
        _Alignas(64) uint32_t states[CHAPOLY_BATCH_MAX * 16];
        _Alignas(64) uint8_t out[CHAPOLY_BATCH_MAX * 64];

        for (size_t i = 0; i < n; i++) {
            for (int j = 0; j < 3; j++)
                nonce[j] = load32_le(nonces[i] + 4 + 4 * j);
            set_state(states + 16 * i, kw, load32_le(nonces[i]), nonce);
        }
        k->chacha20_multi_blocks(k, out, states, n);
        for (size_t i = 0; i < n; i++) {
            chacha20_stream *s = &b->m[i].stream;

            for (int j = 0; j < 4; j++) {
                s->key[j] = load32_le(out + 64 * i + 4 * j) - states[16 * i + j];
                s->key[4 + j] = load32_le(out + 64 * i + 48 + 4 * j) - states[16 * i + 12 + j];
            }
            nonce[0] = 0;
            nonce[1] = load32_le(nonces[i] + 16);
            nonce[2] = load32_le(nonces[i] + 20);
            chacha20_stream_start(s, 1, nonce);
        }
        chapoly_wipe(states, n * 64);
        chapoly_wipe(out, n * 64);
    }
    for (size_t i = 0; i < n; i++) {
        b->m[i].aad_len = b->m[i].text_len = 0;
        b->m[i].aad_buffered = 0;
        b->m[i].single = 0;
    }
    chapoly_wipe(kw, sizeof(kw));
}

/* A message's Poly1305 key is here: the AAD that waited for it goes in first. */
static void poly_start(const chapoly_kernels *k, chapoly_batch_msg *m, const uint8_t key[32])
{
    chapoly_poly1305_init(k, &m->poly, key);
    if (m->aad_buffered > 0)
        chapoly_poly1305_update(k, &m->poly, m->aad_buf, m->aad_buffered);
    m->aad_buffered = 0;
}

/* The Poly1305 key blocks of all messages, in one call. */
static BATCH_MANY void key_blocks(chapoly_batch *b)
{
    _Alignas(64) uint32_t states[CHAPOLY_BATCH_MAX * 16];
    _Alignas(64) uint8_t out[CHAPOLY_BATCH_MAX * 64];

    for (size_t i = 0; i < b->n; i++)
        set_state(states + 16 * i, b->m[i].stream.key, 0, b->m[i].stream.ctr_nonce + 1);
    b->k->chacha20_multi_blocks(b->k, out, states, b->n);
    for (size_t i = 0; i < b->n; i++)
        poly_start(b->k, &b->m[i], out + 64 * i);
    chapoly_wipe(states, b->n * 64);
    chapoly_wipe(out, b->n * 64);
    b->phase = PHASE_AAD;
}

void chapoly_batch_aad(chapoly_batch *b, const uint8_t *const aad[], const size_t len[])
{
    if (b->n == 1) {
        if (len[0] > 0)
            chapoly_aead_aad(&b->one, aad[0], len[0]);
        return;
    }
    if (b->phase == PHASE_NEW) {
        size_t i = 0;

        while (i < b->n && len[i] <= CHAPOLY_BATCH_AAD_BUF - b->m[i].aad_buffered)
            i++;
        if (i == b->n) { /* every message's AAD still fits: it waits for the text */
            for (i = 0; i < b->n; i++) {
                chapoly_batch_msg *m = &b->m[i];

                if (len[i] > 0)
                    copy_bytes(m->aad_buf + m->aad_buffered, aad[i], len[i]);
                m->aad_buffered += (unsigned)len[i];
                m->aad_len += len[i];
            }
            return;
        }
        key_blocks(b);
    }
    for (size_t i = 0; i < b->n; i++) {
        if (len[i] == 0)
            continue;
        chapoly_poly1305_update(b->k, &b->m[i].poly, aad[i], len[i]);
        b->m[i].aad_len += len[i];
    }
}

/*
 * XOR of a short text at a block boundary, keystream ks (ceil(len / 64)
 * blocks). Encrypting, the ciphertext also goes straight from registers to
 * where the MAC reads it: its whole 16-byte blocks to mac (if not NULL), its
 * last partial block to the Poly1305 buffer. (Reading back bytes just stored
 * in other widths would stall on store forwarding.)
 */
static void text_short_xor(chapoly_batch_msg *m, uint8_t *out, const uint8_t *in, size_t len,
                           const uint8_t *ks, int enc, uint8_t *mac)
{
    chacha20_stream *s = &m->stream;
    uint32_t nb = (uint32_t)((len + 63) / 64);
    size_t whole = len & ~(size_t)15, tail = len - whole;

    if (!enc) {
        chacha20_xor_bytes(out, in, ks, len);
    } else {
        for (size_t i = 0; i < whole; i += 16) {
            uint64_t a[2], k[2];

            memcpy(a, in + i, 16);
            memcpy(k, ks + i, 16);
            a[0] ^= k[0];
            a[1] ^= k[1];
            memcpy(out + i, a, 16);
            if (mac != NULL)
                memcpy(mac + i, a, 16);
        }
        if (tail > 0) {
            /* the keystream masked to the tail's bytes: nothing beyond them leaves */
            uint8_t c[16] = { 0 };
            uint64_t m0 = tail >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * tail)) - 1;
            uint64_t m1 = tail > 8 ? ((uint64_t)1 << (8 * (tail - 8))) - 1 : 0;

            copy_tail(c, in + whole, tail);
            store64_le(c, load64_le(c) ^ (load64_le(ks + whole) & m0));
            store64_le(c + 8, load64_le(c + 8) ^ (load64_le(ks + whole + 8) & m1));
            memcpy(m->poly.buf, c, 16); /* the ciphertext overwrote the plaintext in c */
            copy_tail(out + whole, c, tail);
        }
        m->poly.buflen = tail;
    }
    if (len & 63) /* the rest of the last block is made again only if more text comes */
        chacha20_stream_set_partial(s, s->ctr_nonce[0] + nb - 1, (unsigned)(len & 63));
    chacha20_stream_advance(s, nb);
}

/*
 * Before its key block, with all its AAD waiting: the message moves to the
 * one-message core (same (sub)key, nonce and AAD).
 */
static void go_single(chapoly_batch *b, chapoly_batch_msg *m)
{
    uint8_t key[32], nonce[12];

    for (int i = 0; i < 8; i++)
        store32_le(key + 4 * i, m->stream.key[i]);
    for (int i = 0; i < 3; i++)
        store32_le(nonce + 4 * i, m->stream.ctr_nonce[1 + i]);
    chapoly_wipe(&m->stream, sizeof(m->stream)); /* the key lives on in the core only */
    chapoly_aead_start(&m->one, b->k, key, nonce);
    if (m->aad_buffered > 0)
        chapoly_aead_aad(&m->one, m->aad_buf, m->aad_buffered);
    m->aad_buffered = 0;
    m->single = 1;
    chapoly_wipe(key, sizeof(key));
}

/* A short text's last partial MAC block waits in the Poly1305 buffer (empty before). */
static void buffer_tail(chapoly_batch_msg *m, const uint8_t *text, size_t len)
{
    size_t whole = len & ~(size_t)15;

    copy_bytes(m->poly.buf, text + whole, len - whole);
    m->poly.buflen = len - whole;
}

/* Any other text: whole kilobytes stitched, the rest through the stream. */
static void text_long(const chapoly_kernels *k, chapoly_batch_msg *m, uint8_t *out,
                      const uint8_t *in, size_t len, int enc)
{
    chacha20_stream *s = &m->stream;
    size_t whole = len & ~(size_t)1023;

    if (whole > 0 && s->keystream_pos == s->keystream_len && s->partial_used == 0 &&
        m->poly.buflen == 0 && (uint64_t)s->ctr_nonce[0] + whole / 64 <= 0xffffffffu) {
        k->aead_xor_hash_range(k, out, in, whole, 0, whole, s->key, s->ctr_nonce, &m->poly, enc);
        chacha20_stream_advance(s, whole / 64);
        out += whole;
        in += whole;
        len -= whole;
    }
    if (len == 0)
        return;
    if (!enc)
        chapoly_poly1305_update(k, &m->poly, in, len);
    chacha20_stream_xor(k, s, out, in, len);
    if (enc)
        chapoly_poly1305_update(k, &m->poly, out, len);
}

typedef struct {
    size_t msg;    /* message index */
    size_t first;  /* its first block in the call */
    uint32_t key;  /* 1 if its Poly1305 key block is there */
    uint32_t text; /* blocks of short text there (0: long or empty text) */
} queued;

typedef struct {
    chapoly_batch *b;
    uint8_t *const *out;
    const uint8_t *const *in;
    const size_t *len;
    int enc, pad_aad;
    size_t nq, nblocks;
    queued q[CHAPOLY_BATCH_MAX];
    _Alignas(64) uint32_t states[BATCH_BLOCKS * 16];
    _Alignas(64) uint8_t ks[BATCH_BLOCKS * 64];
} text_queue;

/*
 * A first text up to this many whole MAC bytes shares one Poly1305 input
 * with its message's padded AAD end (copied together into a row of flush's
 * mac[]): one multi-message call hashes both.
 */
#define MERGE_TEXT 256

/*
 * The queued messages, in passes that keep each message's order (key
 * block, AAD and its padding, text): the Poly1305 keys, and each padded AAD
 * end (the AAD that waited for its key block, or a partial last AAD block)
 * joined to the text's whole MAC blocks in one row of mac[] (alone, in a
 * call of their own, before a text too long to copy); then the short texts
 * (XOR, and one multi-message Poly1305 call for every message: before the
 * XOR when decrypting, as the text may be in place, after it when
 * encrypting); then the long texts.
 */
static void flush(text_queue *t)
{
    chapoly_batch *b = t->b;
    const chapoly_kernels *k = b->k;
    poly1305_state *st[CHAPOLY_BATCH_MAX];
    const uint8_t *mac_in[CHAPOLY_BATCH_MAX];
    size_t mac_len[CHAPOLY_BATCH_MAX], pre[CHAPOLY_BATCH_MAX], n = 0;
    _Alignas(64) uint8_t mac[CHAPOLY_BATCH_MAX][CHAPOLY_BATCH_AAD_BUF + MERGE_TEXT];

    _Static_assert(CHAPOLY_BATCH_AAD_BUF % 16 == 0, "waiting AAD pads within its row");
    if (t->nblocks > 0)
        k->chacha20_multi_blocks(k, t->ks, t->states, t->nblocks);
    for (size_t j = 0; j < t->nq; j++) {
        const queued *q = &t->q[j];
        chapoly_batch_msg *m = &b->m[q->msg];
        const uint8_t *a = NULL;
        size_t alen = 0, padded;

        if (q->key) { /* all its AAD waited for this key block */
            chapoly_poly1305_init(k, &m->poly, t->ks + 64 * q->first);
            a = m->aad_buf;
            alen = m->aad_buffered;
            m->aad_buffered = 0;
        } else if (t->pad_aad && m->poly.buflen > 0) { /* a partial last AAD block */
            a = m->poly.buf;
            alen = m->poly.buflen;
            m->poly.buflen = 0;
        }
        padded = (alen + 15) & ~(size_t)15;
        pre[j] = padded;
        if (padded == 0)
            continue;
        memset(mac[j] + padded - 16, 0, 16); /* the padding, then the bytes */
        copy_bytes(mac[j], a, alen);
        if (q->text && (t->len[q->msg] & ~(size_t)15) > MERGE_TEXT) {
            st[n] = &m->poly;
            mac_in[n] = mac[j];
            mac_len[n++] = padded;
            pre[j] = 0;
        }
    }
    if (n > 0)
        k->poly1305_multi_blocks(k, st, mac_in, mac_len, n);
    n = 0;
    for (size_t j = 0; j < t->nq; j++) { /* the MAC inputs (decryption: the ciphertext in) */
        const queued *q = &t->q[j];
        size_t i = q->msg, whole = q->text ? t->len[i] & ~(size_t)15 : 0;

        if (!q->text && pre[j] == 0)
            continue;
        st[n] = &b->m[i].poly;
        mac_len[n] = pre[j] + whole;
        if (pre[j] == 0) {
            mac_in[n++] = t->enc ? t->out[i] : t->in[i];
        } else {
            if (!t->enc && whole > 0)
                copy_bytes(mac[j] + pre[j], t->in[i], whole);
            mac_in[n++] = mac[j];
        }
        if (!t->enc && q->text) /* the ciphertext, before an in-place XOR overwrites it */
            buffer_tail(&b->m[i], t->in[i], t->len[i]);
    }
    if (!t->enc)
        k->poly1305_multi_blocks(k, st, mac_in, mac_len, n);
    for (size_t j = 0; j < t->nq; j++) {
        const queued *q = &t->q[j];
        size_t i = q->msg;

        if (q->text) {
            text_short_xor(&b->m[i], t->out[i], t->in[i], t->len[i],
                           t->ks + 64 * (q->first + q->key), t->enc,
                           pre[j] > 0 ? mac[j] + pre[j] : NULL);
        }
    }
    if (t->enc)
        k->poly1305_multi_blocks(k, st, mac_in, mac_len, n);
    for (size_t j = 0; j < t->nq; j++) {
        const queued *q = &t->q[j];
        chapoly_batch_msg *m = &b->m[q->msg];
        size_t len = t->len[q->msg];

        if (!q->text && len > 0)
            text_long(k, m, t->out[q->msg], t->in[q->msg], len, t->enc);
        m->text_len += len;
    }
    chapoly_wipe(t->states, t->nblocks * 64);
    chapoly_wipe(t->ks, t->nblocks * 64);
    t->nq = t->nblocks = 0;
}

static BATCH_MANY void text_many(chapoly_batch *b, uint8_t *const out[],
                                 const uint8_t *const in[], const size_t len[], int enc)
{
    text_queue t;
    uint32_t key = b->phase == PHASE_NEW;

    t.b = b;
    t.out = out;
    t.in = in;
    t.len = len;
    t.enc = enc;
    t.pad_aad = b->phase != PHASE_TEXT;
    t.nq = t.nblocks = 0;
    for (size_t i = 0; i < b->n; i++) {
        chacha20_stream *s = &b->m[i].stream;
        uint32_t text = 0;

        if (key && len[i] >= CHAPOLY_BATCH_LONG)
            go_single(b, &b->m[i]);
        if (b->m[i].single) {
            if (len[i] > 0)
                chapoly_aead_text(&b->m[i].one, out[i], in[i], len[i], enc);
            b->m[i].text_len += len[i];
            continue;
        }

        if (len[i] > 0 && len[i] <= CHAPOLY_BATCH_SHORT && s->keystream_pos == s->keystream_len &&
            s->partial_used == 0 && (t.pad_aad || b->m[i].poly.buflen == 0) &&
            (uint64_t)s->ctr_nonce[0] + (len[i] + 63) / 64 <= 0xffffffffu)
            text = (uint32_t)((len[i] + 63) / 64);
        if (t.nblocks + key + text > BATCH_BLOCKS)
            flush(&t);
        t.q[t.nq] = (queued){ i, t.nblocks, key, text };
        t.nq++;
        if (key)
            set_state(t.states + 16 * t.nblocks++, s->key, 0, s->ctr_nonce + 1);
        for (uint32_t j = 0; j < text; j++)
            set_state(t.states + 16 * t.nblocks++, s->key, s->ctr_nonce[0] + j,
                      s->ctr_nonce + 1);
    }
    flush(&t);
    b->phase = PHASE_TEXT;
}

void chapoly_batch_text(chapoly_batch *b, uint8_t *const out[], const uint8_t *const in[],
                        const size_t len[], int enc)
{
    if (b->n != 1)
        text_many(b, out, in, len, enc);
    else if (len[0] > 0)
        chapoly_aead_text(&b->one, out[0], in[0], len[0], enc);
}

/*
 * Per message the zero-padded last partial block (of the text, or of the
 * AAD when no text came) and the lengths: all messages' in one
 * multi-message Poly1305 call, then the tags.
 */
static BATCH_MANY void finish_many(chapoly_batch *b, uint8_t (*tags)[16]);

void chapoly_batch_finish(chapoly_batch *b, uint8_t (*tags)[16])
{
    if (b->n != 1) {
        finish_many(b, tags);
        return;
    }
    chapoly_aead_finish(&b->one, tags[0]);
    chapoly_aead_clear(&b->one); /* the (sub)key too */
    b->phase = PHASE_DONE;
}

static void finish_many(chapoly_batch *b, uint8_t (*tags)[16])
{
    uint8_t last[CHAPOLY_BATCH_MAX][32];
    poly1305_state *st[CHAPOLY_BATCH_MAX];
    const uint8_t *mac_in[CHAPOLY_BATCH_MAX];
    size_t mac_len[CHAPOLY_BATCH_MAX], c = 0;

    if (b->phase == PHASE_NEW)
        key_blocks(b);
    for (size_t i = 0; i < b->n; i++) {
        chapoly_batch_msg *m = &b->m[i];
        size_t n = m->poly.buflen;

        if (m->single) { /* finished on its own core */
            chapoly_aead_finish(&m->one, tags[i]);
            chapoly_aead_clear(&m->one);
            continue;
        }
        if (n > 0) {
            memset(last[c], 0, 16);
            copy_bytes(last[c], m->poly.buf, n);
            n = 16;
        }
        store64_le(last[c] + n, m->aad_len);
        store64_le(last[c] + n + 8, m->text_len);
        m->poly.buflen = 0;
        st[c] = &m->poly;
        mac_in[c] = last[c];
        mac_len[c++] = n + 16;
    }
    b->k->poly1305_multi_blocks(b->k, st, mac_in, mac_len, c);
    for (size_t i = 0; i < b->n; i++) {
        if (b->m[i].single)
            continue;
        chapoly_poly1305_final(b->k, &b->m[i].poly, tags[i]);
        chapoly_wipe(&b->m[i].stream, sizeof(b->m[i].stream));
    }
    b->phase = PHASE_DONE;
}
