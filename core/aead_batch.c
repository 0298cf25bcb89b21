/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batched AEAD (aead_batch.h): kernel calls shared across messages,
 * each message's state driven by the core's steps (aead_core.h):
 *  - start (XChaCha20 only): the HChaCha20 subkeys of all messages in one
 *    chacha20_multi_blocks call (HChaCha20 is the block function without
 *    its feed-forward, so each subkey word is an output word minus its
 *    input word);
 *  - the Poly1305 key blocks (block 0): in the same calls as the text's
 *    keystream when the AAD fits each message's aad_buf (it waits there),
 *    else at the aad call that overflows it, those messages' in one call;
 *  - text: every message whose text is short (CHAPOLY_BATCH_SHORT) and
 *    starts on a block boundary queues its blocks; up to BATCH_BLOCKS
 *    queued blocks of many messages go to one call, then each message
 *    XORs its part (chapoly_msg_text_ks). Any other text runs on the
 *    core's text loop (chapoly_msg_text).
 * Poly1305 of several messages goes to the table's poly1305_multi_blocks
 * (at the SIMD levels the Horner chains of all short messages in one call):
 * each message's AAD end (chapoly_msg_aad_end: zero-padded) joined to its
 * first text's whole blocks in one row. At finish each message's last row
 * (chapoly_msg_lengths: the text's last partial block, the pad, the
 * lengths) goes with its tag (poly1305_last).
 *
 * Secrets on the stack (the input states carry the key words, the
 * keystream buffer Poly1305 keys and keystream) are wiped before return.
 */
#include <stddef.h>
#include <string.h>
#include "aead_batch.h"
#include "bytes.h"

/* Blocks per shared call: 8 KiB of keystream, 8 KiB of input states. */
#define BATCH_BLOCKS 128

_Static_assert(CHAPOLY_BATCH_SHORT / 64 + 2 <= BATCH_BLOCKS, "a short text fits one call");
_Static_assert(CHAPOLY_BATCH_MAX <= BATCH_BLOCKS, "all key blocks fit one call");

/*
 * The work of many messages runs out of line (its frames hold kilobytes of
 * arrays): a batch of one pays only for its one-message core.
 */
#if defined(__GNUC__) || defined(__clang__)
#define BATCH_MANY __attribute__((noinline))
#else
#define BATCH_MANY
#endif

static inline chapoly_aead_msg *msg(chapoly_batch *b, size_t i)
{
    return &b->m[i].m;
}

void chapoly_batch_clear(chapoly_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        if (msg(b, i)->phase != AEAD_PHASE_DONE) /* a finished message was cleared by finish */
            chapoly_msg_clear(msg(b, i));
}

static BATCH_MANY void subkeys(chapoly_batch *b, const uint32_t kw[8],
                               const uint8_t *const nonces[], size_t n)
{
    _Alignas(64) uint32_t states[CHAPOLY_BATCH_MAX * 16];
    _Alignas(64) uint8_t out[CHAPOLY_BATCH_MAX * 64];
    uint32_t sub[8];

    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++) { /* HChaCha20's input: key, nonce[0..15] */
        uint32_t nw[3] = { load32_le(nonces[i] + 4), load32_le(nonces[i] + 8),
                           load32_le(nonces[i] + 12) };

        chacha20_input_state(states + 16 * i, kw, load32_le(nonces[i]), nw);
    }
    b->k->chacha20_multi_blocks(b->k, out, states, n);
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < 4; j++) {
            sub[j] = load32_le(out + 64 * i + 4 * j) - states[16 * i + j];
            sub[4 + j] = load32_le(out + 64 * i + 48 + 4 * j) - states[16 * i + 12 + j];
        }
        chapoly_msg_begin_x(msg(b, i), b->k, sub, nonces[i], CHAPOLY_AEAD_SMALL);
    }
    chapoly_wipe(states, n * 64);
    chapoly_wipe(out, n * 64);
    chapoly_wipe(sub, sizeof(sub));
}

void chapoly_batch_start(chapoly_batch *b, const chapoly_kernels *k, const uint8_t key[32],
                         const uint8_t *const nonces[], size_t n, int xchacha)
{
    uint32_t kw[8];

    b->k = k;
    b->n = n;
    chapoly_load_key(kw, key);
    if (xchacha)
        subkeys(b, kw, nonces, n);
    else
        for (size_t i = 0; i < n; i++)
            chapoly_msg_begin(msg(b, i), k, kw, nonces[i], CHAPOLY_AEAD_SMALL);
    chapoly_wipe_inline(kw, sizeof(kw));
}

/*
 * The messages whose AAD overflows aad_buf before their key block (len
 * NULL: every message still without one): their key blocks in one call;
 * the AAD that waited goes into their MACs.
 */
static BATCH_MANY void aad_keys(chapoly_batch *b, const size_t len[])
{
    _Alignas(64) uint32_t states[CHAPOLY_BATCH_MAX * 16];
    _Alignas(64) uint8_t out[CHAPOLY_BATCH_MAX * 64];
    size_t idx[CHAPOLY_BATCH_MAX], nk = 0;

    for (size_t i = 0; i < b->n; i++) {
        chapoly_aead_msg *m = msg(b, i);

        if (m->phase == AEAD_PHASE_KEY &&
            (len == NULL || len[i] > CHAPOLY_AEAD_AAD_BUF - m->aad_buffered)) {
            chapoly_msg_block_state(m, 0, states + 16 * nk);
            idx[nk++] = i;
        }
    }
    if (nk == 0)
        return;
    b->k->chacha20_multi_blocks(b->k, out, states, nk);
    for (size_t j = 0; j < nk; j++)
        chapoly_msg_aad_end(msg(b, idx[j]), out + 64 * j, NULL);
    chapoly_wipe(states, nk * 64);
    chapoly_wipe(out, nk * 64);
}

void chapoly_batch_aad(chapoly_batch *b, const uint8_t *const aad[], const size_t len[])
{
    if (b->n == 1) { /* nothing to share */
        if (len[0] > 0)
            chapoly_msg_aad(msg(b, 0), aad[0], len[0]);
        return;
    }
    for (size_t i = 0; i < b->n; i++) {
        chapoly_aead_msg *m = msg(b, i);

        if (m->phase == AEAD_PHASE_KEY && len[i] > CHAPOLY_AEAD_AAD_BUF - m->aad_buffered) {
            aad_keys(b, len);
            break;
        }
    }
    for (size_t i = 0; i < b->n; i++)
        if (len[i] > 0)
            chapoly_msg_aad(msg(b, i), aad[i], len[i]);
}

typedef struct {
    size_t msg;    /* message index */
    size_t first;  /* its first block in the call */
    uint32_t key;  /* 1 if its Poly1305 key block is there */
    uint32_t text; /* blocks of its text there */
} queued;

typedef struct {
    chapoly_batch *b;
    uint8_t *const *out;
    const uint8_t *const *in;
    const size_t *len;
    int enc;
    size_t nq, nblocks;
    queued q[CHAPOLY_BATCH_MAX];
    size_t pre[CHAPOLY_BATCH_MAX]; /* flush: the AAD end's bytes in each message's row */
    _Alignas(64) uint32_t states[BATCH_BLOCKS * 16];
    _Alignas(64) uint8_t ks[BATCH_BLOCKS * 64];
} text_queue;

/*
 * A first text up to this many whole MAC bytes shares one Poly1305 row
 * with its message's AAD end (copied together into a row of flush's
 * mac[]): one multi-message call hashes both.
 */
#define MERGE_TEXT 256
/* A row: the AAD end (at most aad_buf, padded, with chapoly_aead_pad16's 16 bytes of room). */
#define ROW_AAD (CHAPOLY_AEAD_AAD_BUF + 16)

/*
 * The queued messages, in passes that keep each message's order (key
 * block, AAD end, text): the AAD ends (chapoly_msg_aad_end, which keys the
 * MAC from block 0 if it is there) joined to the text's whole MAC blocks in
 * one row of mac[] (alone, in a call of their own, before a text too long
 * to copy); then the texts (XOR, and one multi-message Poly1305 call for
 * every message: before the XOR when decrypting, as the text may be in
 * place, after it when encrypting).
 */
static BATCH_MANY void flush_whole(text_queue *t)
{
    chapoly_batch *b = t->b;
    const chapoly_kernels *k = b->k;
    poly1305_state *st[CHAPOLY_BATCH_MAX];
    const uint8_t *mac_in[CHAPOLY_BATCH_MAX];
    size_t mac_len[CHAPOLY_BATCH_MAX], pre[CHAPOLY_BATCH_MAX], n = 0;
    _Alignas(64) uint8_t mac[CHAPOLY_BATCH_MAX][ROW_AAD + MERGE_TEXT];

    if (t->nblocks > 0)
        k->chacha20_multi_blocks(k, t->ks, t->states, t->nblocks);
    for (size_t j = 0; j < t->nq; j++) {
        const queued *q = &t->q[j];
        chapoly_aead_msg *m = msg(b, q->msg);

        pre[j] = chapoly_msg_aad_end(m, q->key ? t->ks + 64 * q->first : NULL, mac[j]);
        if (pre[j] > 0 && (t->len[q->msg] & ~(size_t)63) > MERGE_TEXT) {
            st[n] = &m->poly;
            mac_in[n] = mac[j];
            mac_len[n++] = pre[j];
            pre[j] = 0;
        }
    }
    if (n > 0)
        k->poly1305_multi_blocks(k, st, mac_in, mac_len, n);
    n = 0;
    for (size_t j = 0; j < t->nq; j++) { /* the MAC inputs (decryption: the ciphertext in) */
        size_t i = t->q[j].msg, whole = t->len[i] & ~(size_t)63;

        if (pre[j] == 0 && whole == 0)
            continue;
        st[n] = &msg(b, i)->poly;
        mac_len[n] = pre[j] + whole;
        if (pre[j] == 0) {
            mac_in[n++] = t->enc ? t->out[i] : t->in[i];
        } else {
            if (!t->enc && whole > 0)
                chapoly_copy_bytes(mac[j] + pre[j], t->in[i], whole);
            mac_in[n++] = mac[j];
        }
    }
    if (!t->enc)
        k->poly1305_multi_blocks(k, st, mac_in, mac_len, n);
    for (size_t j = 0; j < t->nq; j++) {
        const queued *q = &t->q[j];
        size_t i = q->msg;

        chapoly_msg_text_ks(msg(b, i), t->out[i], t->in[i], t->len[i],
                            t->ks + 64 * (q->first + q->key), t->enc,
                            pre[j] > 0 ? mac[j] + pre[j] : NULL);
    }
    if (t->enc)
        k->poly1305_multi_blocks(k, st, mac_in, mac_len, n);
    chapoly_wipe(t->states, t->nblocks * 64);
    chapoly_wipe(t->ks, t->nblocks * 64);
    t->nq = t->nblocks = 0;
}

/* The Poly1305 rows waiting for the next call (at most two per message). */
typedef struct {
    poly1305_state *st[2 * CHAPOLY_BATCH_MAX];
    const uint8_t *in[2 * CHAPOLY_BATCH_MAX];
    size_t len[2 * CHAPOLY_BATCH_MAX], n;
} rows;

CHAPOLY_INLINE void row_add(rows *r, poly1305_state *st, const uint8_t *in, size_t len)
{
    r->st[r->n] = st;
    r->in[r->n] = in;
    r->len[r->n++] = len;
}

/*
 * Queued message j, all its keystream made: the MAC keyed and its AAD end
 * (chapoly_msg_aad_end), its rows (as flush_whole's: the AAD end joined to
 * a short text's whole blocks, alone before a longer one) to r; sealing,
 * the text XORed now (its ciphertext is what the rows hash), opening,
 * later (text_open), after its rows are hashed.
 */
static void message_rows(text_queue *t, size_t j, uint8_t *mac, rows *r)
{
    const queued *q = &t->q[j];
    size_t i = q->msg, whole = t->len[i] & ~(size_t)63;
    chapoly_aead_msg *m = msg(t->b, i);
    size_t pre = chapoly_msg_aad_end(m, q->key ? t->ks + 64 * q->first : NULL, mac);

    if (pre > 0 && whole > MERGE_TEXT) {
        row_add(r, &m->poly, mac, pre);
        pre = 0;
    }
    if (pre > 0 && !t->enc && whole > 0)
        chapoly_copy_bytes(mac + pre, t->in[i], whole);
    if (pre > 0 || whole > 0)
        row_add(r, &m->poly, pre > 0 ? mac : t->enc ? t->out[i] : t->in[i], pre + whole);
    if (t->enc)
        chapoly_msg_text_ks(m, t->out[i], t->in[i], t->len[i], t->ks + 64 * (q->first + q->key),
                            1, pre > 0 ? mac + pre : NULL);
    t->pre[j] = pre;
}

/* Opening: queued messages [from, to), their rows hashed: the text XORed. */
static void text_open(text_queue *t, size_t from, size_t to, uint8_t (*mac)[ROW_AAD + MERGE_TEXT])
{
    for (size_t j = from; j < to; j++) {
        const queued *q = &t->q[j];
        size_t i = q->msg;

        chapoly_msg_text_ks(msg(t->b, i), t->out[i], t->in[i], t->len[i],
                            t->ks + 64 * (q->first + q->key), 0,
                            t->pre[j] > 0 ? mac[j] + t->pre[j] : NULL);
    }
}

/*
 * The queue in calls of multi_stitch blocks (the level hashes rows beside
 * them: chacha20_multi_blocks_hash): the rows of every message whose
 * keystream the calls before completed, in order, as far as each call
 * takes them (the rest waits for the next); what the last call leaves goes
 * to poly1305_multi_blocks. Opening, a message's text is XORed once all
 * its rows are hashed (row_end). Texts under 4 blocks a message gain less
 * from the rows beside than the calls and the rows' bookkeeping cost
 * (docs/performance.md, "Measurements behind the code"): those queues go
 * whole (flush_whole).
 */
static void flush(text_queue *t)
{
    const chapoly_kernels *k = t->b->k;
    size_t seg = k->shapes.multi_stitch, done = 0, opened = 0, rc = 0;
    size_t row_end[CHAPOLY_BATCH_MAX];
    _Alignas(64) uint8_t mac[CHAPOLY_BATCH_MAX][ROW_AAD + MERGE_TEXT];
    rows r;

    /* short texts (under 4 blocks a message with the key block): one call pays more */
    if (seg == 0 || t->nblocks <= seg || t->nblocks < 4 * t->nq) {
        flush_whole(t);
        return;
    }
    r.n = 0;
    for (size_t b = 0; b < t->nblocks; b += seg) {
        size_t nb = t->nblocks - b < seg ? t->nblocks - b : seg;

        k->chacha20_multi_blocks_hash(k, t->ks + 64 * b, t->states + 16 * b, nb, r.st + rc,
                                      r.in + rc, r.len + rc, r.n - rc);
        while (rc < r.n && r.len[rc] == 0)
            rc++;
        for (; !t->enc && opened < done && row_end[opened] <= rc; opened++)
            text_open(t, opened, opened + 1, mac);
        for (; done < t->nq && t->q[done].first + t->q[done].key + t->q[done].text <= b + nb;
             done++) {
            message_rows(t, done, mac[done], &r);
            row_end[done] = r.n;
        }
    }
    k->poly1305_multi_blocks(k, r.st + rc, r.in + rc, r.len + rc, r.n - rc);
    if (!t->enc)
        text_open(t, opened, done, mac);
    chapoly_wipe(t->states, t->nblocks * 64);
    chapoly_wipe(t->ks, t->nblocks * 64);
    t->nq = t->nblocks = 0;
}

static BATCH_MANY void text_many(chapoly_batch *b, uint8_t *const out[],
                                 const uint8_t *const in[], const size_t len[], int enc)
{
    text_queue t;

    t.b = b;
    t.out = out;
    t.in = in;
    t.len = len;
    t.enc = enc;
    t.nq = t.nblocks = 0;
    for (size_t i = 0; i < b->n; i++) {
        chapoly_aead_msg *m = msg(b, i);
        uint32_t key = m->phase == AEAD_PHASE_KEY, text, ctr;

        if (len[i] == 0)
            continue;
        if (len[i] > CHAPOLY_BATCH_SHORT || m->batch_used != 0) { /* on its own */
            chapoly_msg_text(m, out[i], in[i], len[i], enc);
            continue;
        }
        text = (uint32_t)((len[i] + 63) / 64);
        if (t.nblocks + key + text > BATCH_BLOCKS)
            flush(&t);
        t.q[t.nq++] = (queued){ i, t.nblocks, key, text };
        if (key)
            chapoly_msg_block_state(m, 0, t.states + 16 * t.nblocks++);
        ctr = chapoly_msg_text_ctr(m->text_len);
        for (uint32_t j = 0; j < text; j++)
            chapoly_msg_block_state(m, ctr + j, t.states + 16 * t.nblocks++);
    }
    flush(&t);
}

void chapoly_batch_text(chapoly_batch *b, uint8_t *const out[], const uint8_t *const in[],
                        const size_t len[], int enc)
{
    if (b->n != 1)
        text_many(b, out, in, len, enc);
    else
        chapoly_msg_text(msg(b, 0), out[0], in[0], len[0], enc);
}

/*
 * Every message's last row (the text's last partial block, the pad, the
 * lengths; a message with no text gets its key block here, all of those
 * in one call) and its tag in one poly1305_last call a message: a
 * multi-message call for rows of a block or two cost more than it saved
 * (docs/performance.md, "The pipeline's finish").
 */
static BATCH_MANY void finish_many(chapoly_batch *b, uint8_t (*tags)[16])
{
    for (size_t i = 0; i < b->n; i++) {
        if (msg(b, i)->phase == AEAD_PHASE_KEY) {
            aad_keys(b, NULL);
            break;
        }
    }
    for (size_t i = 0; i < b->n; i++) {
        chapoly_aead_msg *m = msg(b, i);
        size_t n = chapoly_msg_lengths(m);

        chapoly_msg_tag(m, chapoly_msg_ct(m), n, tags[i]);
    }
    for (size_t i = 0; i < b->n; i++)
        chapoly_msg_clear(msg(b, i)); /* the key words: nothing of the message is left */
}

void chapoly_batch_finish(chapoly_batch *b, uint8_t (*tags)[16])
{
    if (b->n != 1) {
        finish_many(b, tags);
        return;
    }
    chapoly_msg_finish(msg(b, 0), tags[0]);
    chapoly_msg_clear(msg(b, 0));
}
