/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ChaCha20-Poly1305 AEAD core (aead_core.h): one message at a time,
 * streamed or one-shot, on one kernel table. The core schedules spans of
 * text; the table's entries do the work and its shapes say how to cut it:
 *  - The first text goes with the key block (aead_first_xor_hash: block 0
 *    keys the MAC, the AAD goes in, the text is XORed and hashed).
 *  - Later text at a block boundary with no keystream made ahead goes
 *    straight through aead_xor_hash_range, a span at a time.
 *  - Streaming, small updates take keystream made ahead in a batch
 *    (AEAD_BATCH_MAX bytes) and their ciphertext is collected in ct[] and
 *    hashed in one run once the batch is used up. The collected ciphertext
 *    is a copy: the caller may reuse its output buffer between updates.
 *  - The ciphertext after the last whole block waits in ct[]; the finish
 *    hashes it with the lengths block.
 * batch_start (a multiple of 64) is the text offset of ks[0] and ct[0];
 * everything before it is hashed. ks[] is wiped up to the most it held
 * (ks_made) on finish, verify, end and restart; ct[] holds ciphertext only.
 * A message with buffers for one block (chapoly_aead_small) takes its text
 * exactly: a batch never outgrows ks_cap, and none is made ahead.
 */
#include "aead_core.h"
#include "bytes.h"

#define BLOCK CHACHA20_BLOCK_BYTES
#define BLOCK_MASK ((size_t)BLOCK - 1)
#define AEAD_STAGE_MAX 2048 /* opening in place, a first text this long goes through the stack */
#define KS(a) chapoly_msg_ks(a)
#define CT(a) chapoly_msg_ct(a)

/*
 * An update this long goes straight through the range kernel and makes the
 * keystream batches after it exact (the blocks needed): with big updates a
 * batch is the end of an update, mostly the message's last.
 */
#define AEAD_BIG_UPDATE 1024
#define AEAD_FILL_MAX 256 /* a first streamed update this short: keystream from the key block's call */
#define AEAD_KEY_AHEAD (3 * BLOCK) /* keystream with the key block when long AAD needs the key */

static const uint8_t aead_zeros[AEAD_BATCH_MAX]; /* input of keystream-only ChaCha20 calls */

/* Counter and nonce of the text block at offset pos (a multiple of 64). */
static inline void aead_ctr(const chapoly_aead_msg *a, uint64_t pos, uint32_t ctr_nonce[4])
{
    ctr_nonce[0] = chapoly_msg_text_ctr(pos);
    ctr_nonce[1] = a->ctr_nonce[1];
    ctr_nonce[2] = a->ctr_nonce[2];
    ctr_nonce[3] = a->ctr_nonce[3];
}

/* After a text of n bytes whose whole blocks are hashed: its last partial block waits in ct[]. */
static void aead_collect_tail(chapoly_aead_msg *a, const uint8_t *c, size_t n)
{
    size_t hashed = n & ~BLOCK_MASK;

    if (n > hashed)
        memcpy(CT(a), c + hashed, n - hashed);
    a->batch_start += hashed;
    a->batch_used = a->ks_len = (unsigned)(n - hashed);
}

/*
 * The first text, with the key block (aead_first_xor_hash). Opening in
 * place, the kernel would overwrite ciphertext it has yet to hash: up to
 * AEAD_STAGE_MAX bytes the plaintext goes through a stack buffer, beyond
 * that the key block goes alone and the text follows as a span. Returns the
 * bytes of text done.
 */
static size_t aead_first(chapoly_aead_msg *a, uint8_t *out, const uint8_t *in, size_t len,
                         int enc, const uint8_t *aad, size_t aadlen)
{
    const chapoly_kernels *k = a->k;
    size_t hashed = len & ~BLOCK_MASK;

    a->phase = AEAD_PHASE_TEXT;
    a->aad_buffered = 0;
    if (!enc && len > 0 && (out == in || chacha20_partially_overlapping(out, in, len)) &&
        !(out == in && chapoly_open_rows(&k->shapes, len, aadlen))) { /* that one hashes first */
        _Alignas(64) uint8_t s[AEAD_STAGE_MAX];

        if (len > sizeof(s)) { /* the key block alone (no text: any buffer will do) */
            k->aead_first_xor_hash(k, CT(a), CT(a), 0, 0, aad, aadlen, a->key, a->ctr_nonce,
                                   &a->poly, 0);
            return 0;
        }
        aead_collect_tail(a, in, len); /* before out (== in) changes */
        k->aead_first_xor_hash(k, s, in, len, hashed, aad, aadlen, a->key, a->ctr_nonce,
                               &a->poly, 0);
        memcpy(out, s, len);
        chapoly_wipe(s, len);
        return len;
    }
    if (!enc)
        aead_collect_tail(a, in, len);
    k->aead_first_xor_hash(k, out, in, len, hashed, aad, aadlen, a->key, a->ctr_nonce,
                           &a->poly, enc);
    if (enc)
        aead_collect_tail(a, out, len);
    return len;
}

/*
 * Block 0 and 'ahead' bytes of keystream for the text in one call (the
 * first batch, at text offset 0) and the buffered AAD into the MAC: padded
 * if it is complete (a short first update: the keystream covers it and
 * the next updates up to the call's row sets), else streamed (AAD
 * longer than aad_buf: its padding comes with the first text).
 */
__attribute__((noinline)) static void aead_key_ahead(chapoly_aead_msg *a, size_t ahead,
                                                     int aad_done)
{
    _Alignas(64) uint8_t kb[BLOCK];

    a->k->chacha20_keyblock_xor(a->k, kb, KS(a), aead_zeros, ahead, a->key, a->ctr_nonce);
    if (aad_done) {
        chapoly_aead_key_aad(a->k, &a->poly, kb, a->aad_buf, a->aad_buffered);
        a->aad_buffered = 0;
        a->phase = AEAD_PHASE_TEXT;
    } else {
        chapoly_msg_aad_end(a, kb, NULL);
    }
    chapoly_wipe_inline(kb, sizeof(kb));
    a->batch_start = a->batch_used = 0;
    a->ks_len = (unsigned)ahead;
    if (a->ks_made < a->ks_len)
        a->ks_made = a->ks_len;
}

/*
 * A span at a block boundary with no keystream made ahead: len bytes
 * straight through the range kernel, the collected ciphertext first. Where
 * the range carries collected ciphertext (shapes.span_pre: stitched) and the
 * text fits ct[] after it, it is sealed there with that as its pre bytes; a
 * big span of whole blocks keeps its last span_pre bytes for the next span
 * or the finish (carry), any other span its partial block only.
 */
static size_t aead_span(chapoly_aead_msg *a, uint8_t *out, const uint8_t *in, size_t len,
                        int enc)
{
    const chapoly_kernels *k = a->k;
    size_t pre = a->batch_used, hashed = len & ~BLOCK_MASK;
    int carry = len >= AEAD_BIG_UPDATE && hashed == len;
    size_t keep = carry ? k->shapes.span_pre : len - hashed; /* what stays collected */
    uint8_t *ct = CT(a);
    uint32_t ctr_nonce[4];

    aead_ctr(a, a->batch_start + pre, ctr_nonce);
    if (enc && k->shapes.span_pre != 0 && pre + len <= a->ks_cap && (carry || pre > 0)) {
        uint8_t *c = ct + pre;

        memcpy(c, in, len);
        k->aead_xor_hash_range(k, c, c, len, pre, len - keep, a->key, ctr_nonce, &a->poly, 1);
        memcpy(out, c, len);
        memmove(ct, c + len - keep, keep);
        a->batch_start += pre + len - keep;
        a->batch_used = a->ks_len = (unsigned)keep;
        return len;
    }
    if (pre > 0)
        k->poly1305_blocks(k, &a->poly, ct, pre, 1);
    a->batch_start += pre;
    if (!enc)
        aead_collect_tail(a, in, len); /* before out (== in) changes */
    k->aead_xor_hash_range(k, out, in, len, 0, hashed, a->key, ctr_nonce, &a->poly, enc);
    if (enc)
        aead_collect_tail(a, out, len);
    return len;
}

/*
 * The keystream of the batch is used up and text follows: the batch's
 * whole blocks of ciphertext go into the MAC in one run, and a new batch
 * of keystream starts at the block where the text is (a partial block
 * left by a span is made again), for need more bytes of text: the blocks
 * needed (exact), else half the text so far (at least the level's
 * shapes.stream_min) in whole batches of the level (shapes.chacha_batch),
 * up to ks_cap, then ending on the grid AEAD_GRID_AT + k ks_cap of text
 * (unless ks_cap is one pair of the level's batches in flight), so that a
 * 4 or 8 KiB stream ends in a batch and one a few blocks longer makes no
 * full refill for them; or (shapes.stream_fill) the rest of len_hint in
 * whole batches, no grid.
 */
static void aead_next_batch(chapoly_aead_msg *a, size_t need, int exact)
{
    const chapoly_kernels *k = a->k;
    unsigned full = a->batch_used & ~(unsigned)BLOCK_MASK, tail = a->batch_used & BLOCK_MASK;
    size_t seen = a->batch_start + a->batch_used, bytes = tail + need;
    uint8_t *ct = CT(a);
    uint32_t ctr_nonce[4];
    size_t round = exact ? BLOCK : k->shapes.chacha_batch, grid; /* a power of two */
    size_t left = !exact && k->shapes.stream_fill && a->len_hint > seen ? tail + a->len_hint - seen : 0;

    if (left > 0) /* the rest of a message as long as the last two: the batches it needs */
        bytes = bytes > left ? bytes : left;
    else if (!exact)
        bytes = bytes > seen / 2 ? bytes : seen / 2 > k->shapes.stream_min ? seen / 2 : k->shapes.stream_min;
    bytes = bytes < a->ks_cap ? (bytes + round - 1) & ~(round - 1) : a->ks_cap;
    grid = left > 0 || (k->shapes.chacha_pairs_min != 0 && k->shapes.chacha_pairs_min <= a->ks_cap &&
                        2 * k->shapes.chacha_batch >= a->ks_cap) ? 0
           : a->ks_cap - (a->batch_start + full + a->ks_cap - AEAD_GRID_AT % a->ks_cap) % a->ks_cap;
    bytes = bytes < a->ks_cap ? bytes : !exact && grid >= tail + need ? grid : a->ks_cap;
    if (full > 0) {
        k->poly1305_blocks(k, &a->poly, ct, full, 1);
        if (tail > 0)
            memmove(ct, ct + full, tail);
        a->batch_start += full;
    }
    aead_ctr(a, a->batch_start, ctr_nonce);
    k->chacha20_xor(k, KS(a), aead_zeros, bytes, a->key, ctr_nonce);
    a->batch_used = tail;
    a->ks_len = (unsigned)bytes;
    if (a->ks_made < bytes)
        a->ks_made = (unsigned)bytes;
}

/*
 * Keystream with the key block for a first streamed update of 65..256 bytes
 * (up to 64: one block). When the context's last message ended within this
 * many bytes (a context of one-shot messages: TLS records, QUIC packets),
 * the key block and len rounded up to a whole pair of blocks (a ymm row
 * set; at most 6 blocks: the short shapes of "short-rows"; whole blocks
 * where those put an odd one beside the sets), else to 4 or 8
 * blocks (row and column shapes of every level: the blocks made ahead cost
 * little, and a stream finds keystream made).
 */
static inline size_t aead_fill(const chapoly_aead_msg *a, size_t len)
{
    size_t want = 4 * BLOCK;

    if (a->len_last != 0 && a->len_last <= len) {
        /* odd blocks beside the row sets: with "chacha-one=scalar" (chacha20_avx2.c) */
        size_t step = a->k->shapes.short_rows != 0 && !a->k->shapes.one_block_rows ? BLOCK
                                                                                   : 2 * BLOCK;

        want = (len + BLOCK + step - 1) & ~(step - 1);
        if (want > 6 * BLOCK)
            want = 8 * BLOCK;
    }
    while (want < len + BLOCK)
        want *= 2;
    return (want < a->ks_cap ? want : a->ks_cap) - BLOCK;
}

/*
 * The keystream made with the key block for a first streamed update of
 * len <= AEAD_FILL_MAX bytes: one block up to 64, else aead_fill. A first
 * update of up to 64 bytes in a context whose last two messages were both
 * longer (len_hint, up to AEAD_FILL_MAX: a stream of small updates) gets
 * aead_fill of that length, so that the message finds its keystream made
 * in the key block's call, not in a batch of the stream's size after it.
 */
static inline size_t aead_first_fill(const chapoly_aead_msg *a, size_t len)
{
    if (len <= BLOCK && a->len_hint > BLOCK && a->len_hint <= AEAD_FILL_MAX)
        len = a->len_hint;
    return len <= BLOCK ? BLOCK : aead_fill(a, len);
}

/*
 * Opening a first update the level opens with its key block beside
 * (shapes.open_rows) that is, as far as the last message says, the whole
 * text: through aead_first, not keystream made ahead.
 */
static inline int aead_open_first(const chapoly_aead_msg *a, size_t len, int enc)
{
    return !enc && chapoly_open_rows(&a->k->shapes, len, a->aad_buffered) && a->len_last != 0 &&
           a->len_last <= len;
}

/*
 * The one text loop. aad: the whole AAD if the key block is not made yet.
 * ahead: more text may follow (streaming); exact batches once updates are
 * big or nothing follows.
 */
static void aead_text(chapoly_aead_msg *a, uint8_t *out, const uint8_t *in, size_t len,
                      int enc, const uint8_t *aad, size_t aadlen, int ahead)
{
    int exact = !ahead || len >= AEAD_BIG_UPDATE || a->last_len >= AEAD_BIG_UPDATE;

    if (a->phase == AEAD_PHASE_AAD) { /* streamed AAD, the MAC keyed already: its padding */
        chapoly_poly1305_padded(a->k, &a->poly, a->poly.buf, a->poly.buflen);
        a->poly.buflen = 0;
        a->phase = AEAD_PHASE_TEXT;
    }
    a->text_len += len;
    while (len > 0 || a->phase == AEAD_PHASE_KEY) {
        size_t n = a->ks_len - a->batch_used;

        if (a->phase == AEAD_PHASE_KEY && ahead && len <= AEAD_FILL_MAX &&
            !aead_open_first(a, len, enc)) { /* 2 blocks or a batch */
            aead_key_ahead(a, aead_first_fill(a, len), 1);
            continue;
        } else if (a->phase == AEAD_PHASE_KEY) {
            n = aead_first(a, out, in, len, enc, aad, aadlen);
        } else if (n > 0) {
            n = n < len ? n : len;
            chacha20_xor_keystream(out, in, KS(a) + a->batch_used, CT(a) + a->batch_used, n, enc);
            a->batch_used += (unsigned)n;
        } else if ((a->batch_used & BLOCK_MASK) == 0 && exact) {
            n = aead_span(a, out, in, len, enc);
        } else {
            aead_next_batch(a, len, exact);
            continue;
        }
        if (n == 0) /* the key block alone: out and in may be NULL, and NULL + 0 is undefined */
            continue;
        out += n;
        in += n;
        len -= n;
    }
}

/* Keystream made ahead wiped, as much as ks[] ever held; the key stays. */
static void aead_drop_keystream(chapoly_aead_msg *a)
{
    if (a->ks_made != 0)
        chapoly_wipe(KS(a), a->ks_made);
    a->ks_made = 0;
    a->ks_len = a->batch_used;
}

/* ---- the tag (the last step; aead_steps.c has the others and the lengths) ---- */

void chapoly_msg_tag(chapoly_aead_msg *a, const uint8_t *last, size_t len, uint8_t tag[16])
{
    a->k->poly1305_last(a->k, &a->poly, last, len, 1, tag);
    a->batch_used = 0;
    a->phase = AEAD_PHASE_DONE;
    aead_drop_keystream(a);
}

/* The collected ciphertext and the lengths block in one call, then the tag. */
static void aead_lengths_tag(chapoly_aead_msg *a, uint8_t tag[16])
{
    if (a->phase == AEAD_PHASE_KEY) /* no text: block 0 alone, the AAD beside it */
        aead_text(a, CT(a), CT(a), 0, 1, a->aad_buf, a->aad_buffered, 0);
    size_t n = chapoly_msg_lengths(a); /* before ct[] is passed: it writes the row */

    chapoly_msg_tag(a, CT(a), n, tag);
}

/*
 * The verdict, made public by one branch on it: a conditional store to a
 * volatile is a branch (it cannot become an unconditional store), and the
 * result is read back from a constant. So no caller branches on a value
 * computed from the tag; test/ct/ct.supp names this branch, and only it.
 * Never inlined or cloned, so the name stays.
 */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa))
#else
__attribute__((noinline))
#endif
static int aead_tag_verdict(uint64_t diff)
{
    volatile int equal = 1;

    if (diff != 0)
        equal = 0;
    return equal;
}

/* The differences ORed, with no branch on a byte; a whole tag as two words. */
int chapoly_tag_equal(const uint8_t calc[16], const uint8_t *tag, size_t len)
{
    uint64_t diff = 0;

    if (len < 1 || len > 16)
        return 0;
    if (len == 16) {
        diff = (load64_le(calc) ^ load64_le(tag)) | (load64_le(calc + 8) ^ load64_le(tag + 8));
    } else {
        const volatile uint8_t *x = calc, *y = tag; /* volatile: no early exit */

        for (size_t i = 0; i < len; i++)
            diff |= (uint8_t)(x[i] ^ y[i]);
    }
    return aead_tag_verdict(diff);
}

/* The tag against the first taglen bytes of tag[]; 1 if equal. */
static int aead_check(chapoly_aead_msg *a, const uint8_t *tag, size_t taglen)
{
    uint8_t calc[16];
    int ok;

    aead_lengths_tag(a, calc);
    ok = chapoly_tag_equal(calc, tag, taglen);
    chapoly_wipe_inline(calc, sizeof(calc));
    return ok;
}

/* ---- one message of either shape ---- */

void chapoly_msg_end(chapoly_aead_msg *a)
{
    if (a->phase == AEAD_PHASE_AAD || a->phase == AEAD_PHASE_TEXT)
        chapoly_wipe(&a->poly, sizeof(a->poly)); /* a finish wipes it itself */
    if (a->aad_buffered != 0)
        chapoly_wipe(a->aad_buf, a->aad_buffered);
    a->aad_buffered = 0;
    aead_drop_keystream(a);
    a->phase = AEAD_PHASE_DONE;
}

void chapoly_msg_clear(chapoly_aead_msg *a)
{
    chapoly_msg_end(a);
    chapoly_wipe_inline(a->key, sizeof(a->key));
}

/* AAD that fits aad_buf waits for the key block's batch; longer AAD needs the MAC key now. */
void chapoly_msg_aad(chapoly_aead_msg *a, const uint8_t *aad, size_t len)
{
    if (a->phase == AEAD_PHASE_KEY && len <= CHAPOLY_AEAD_AAD_BUF - a->aad_buffered) {
        chapoly_copy_bytes(a->aad_buf + a->aad_buffered, aad, len); /* short: no library call */
        a->aad_buffered += (unsigned)len;
    } else {
        if (a->phase == AEAD_PHASE_KEY)
            aead_key_ahead(a, a->ks_cap < AEAD_KEY_AHEAD ? a->ks_cap : AEAD_KEY_AHEAD, 0);
        chapoly_poly1305_update(a->k, &a->poly, aad, len);
    }
    a->aad_len += len;
}

void chapoly_msg_text(chapoly_aead_msg *a, uint8_t *out, const uint8_t *in, size_t len, int enc)
{
    if (len > 0)
        aead_text(a, out, in, len, enc, a->aad_buf, a->aad_buffered, 0);
}

void chapoly_msg_finish(chapoly_aead_msg *a, uint8_t tag[16])
{
    aead_lengths_tag(a, tag);
}

/* ---- streaming API ---- */

void chapoly_aead_end(chapoly_aead *a)
{
    chapoly_msg_end(&a->m);
}

void chapoly_aead_clear(chapoly_aead *a)
{
    chapoly_msg_clear(&a->m);
}

/* chapoly_load_key inline (little-endian: the bytes are the words, a 32-byte copy). */
static inline void aead_key_words(uint32_t w[8], const uint8_t bytes[32])
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(w, bytes, 32);
#else
    for (int i = 0; i < 8; i++)
        w[i] = load32_le(bytes + 4 * i);
#endif
}

void chapoly_aead_start(chapoly_aead *a, const chapoly_kernels *k, const uint8_t key[32],
                        const uint8_t nonce[12])
{
    chapoly_msg_end(&a->m);
    aead_key_words(a->key, key); /* straight into the message: no copy to wipe */
    chapoly_msg_reset(&a->m, k, nonce, AEAD_BATCH_MAX);
}

void chapoly_aead_start_xchacha(chapoly_aead *a, const chapoly_kernels *k,
                                const uint8_t key[32], const uint8_t nonce[24])
{
    uint8_t subkey[32];
    uint32_t kw[8];

    k->hchacha20(k, subkey, key, nonce);
    chapoly_load_key(kw, subkey);
    chapoly_msg_end(&a->m);
    chapoly_msg_begin_x(&a->m, k, kw, nonce, AEAD_BATCH_MAX);
    chapoly_wipe_inline(subkey, sizeof(subkey));
    chapoly_wipe_inline(kw, sizeof(kw));
}

void chapoly_aead_aad(chapoly_aead *a, const uint8_t *aad, size_t len)
{
    chapoly_msg_aad(&a->m, aad, len);
}

/* Streaming text that needs a kernel call: out of line, so the XOR-only path saves no registers. */
__attribute__((noinline)) static void aead_text_streaming(chapoly_aead_msg *a, uint8_t *out,
                                                          const uint8_t *in, size_t len, int enc)
{
    if (a->phase == AEAD_PHASE_KEY && len <= AEAD_FILL_MAX && !aead_open_first(a, len, enc)) {
        /* aead_text's first turns for a short first update: the key block's call, then the XOR */
        aead_key_ahead(a, len <= BLOCK ? BLOCK : aead_fill(a, len), 1);
        chacha20_xor_keystream(out, in, KS(a), CT(a), len, enc);
        a->batch_used = (unsigned)len;
        a->text_len += len;
    } else {
        aead_text(a, out, in, len, enc, a->aad_buf, a->aad_buffered, 1);
    }
    a->last_len = len < AEAD_BIG_UPDATE ? (unsigned)len : AEAD_BIG_UPDATE;
}

/* The per-update entry: keystream made ahead covers most small updates with no kernel call. */
void chapoly_aead_text(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len, int enc)
{
    if (a->phase == AEAD_PHASE_TEXT && len <= a->ks_len - a->batch_used) {
        /* keystream made ahead covers it: no kernel call */
        chacha20_xor_keystream(out, in, a->ks + a->batch_used, a->ct + a->batch_used, len, enc);
        a->batch_used += (unsigned)len;
        a->text_len += len;
    } else if (len > 0) {
        aead_text_streaming(&a->m, out, in, len, enc);
    }
}

void chapoly_aead_finish(chapoly_aead *a, uint8_t tag[16])
{
    aead_lengths_tag(&a->m, tag);
    chapoly_msg_note_len(&a->m);
}

int chapoly_aead_verify(chapoly_aead *a, const uint8_t *tag, size_t taglen)
{
    chapoly_msg_note_len(&a->m);
    return aead_check(&a->m, tag, taglen);
}

/* ---- one-shot (TLS 1.2 records, and whatever needs a whole message at once) ---- */

void chapoly_aead_seal(const chapoly_kernels *k, uint8_t *out, uint8_t tag[16],
                       const uint8_t *in, size_t len, const uint8_t *aad,
                       size_t aadlen, const uint32_t key[8],
                       const uint8_t nonce[12])
{
    chapoly_aead_small s;
    chapoly_aead_msg *a = &s.m;

    chapoly_msg_begin(a, k, key, nonce, CHAPOLY_AEAD_SMALL);
    a->aad_len = aadlen;
    aead_text(a, out, in, len, 1, aad, aadlen, 0); /* the AAD straight from the caller */
    aead_lengths_tag(a, tag);
    chapoly_wipe_inline(a->key, sizeof(a->key));
}

/*
 * The ciphertext is hashed and the tag checked before any plaintext is
 * written. Up to AEAD_STAGE_MAX bytes (the common TLS/QUIC case) the first
 * text writes the plaintext to a stack buffer, copied out once the tag is
 * good; longer, the key block comes alone, the ciphertext is hashed, and
 * the text is decrypted after the check.
 */
int chapoly_aead_open(const chapoly_kernels *k, uint8_t *out,
                      const uint8_t *in, size_t len, const uint8_t *aad,
                      size_t aadlen, const uint8_t *tag, size_t taglen,
                      const uint32_t key[8], const uint8_t nonce[12])
{
    chapoly_aead_small sm;
    chapoly_aead_msg *a = &sm.m;
    int ok;

    chapoly_msg_begin(a, k, key, nonce, CHAPOLY_AEAD_SMALL);
    a->aad_len = aadlen;
    a->text_len = len;
    if (len <= AEAD_STAGE_MAX) {
        _Alignas(64) uint8_t s[AEAD_STAGE_MAX];

        aead_first(a, s, in, len, 0, aad, aadlen);
        ok = aead_check(a, tag, taglen);
        if (ok && len > 0)
            memcpy(out, s, len);
        chapoly_wipe(s, len);
    } else {
        uint32_t ctr_nonce[4];

        aead_first(a, out, in, 0, 0, aad, aadlen); /* the key block alone */
        k->poly1305_blocks(k, &a->poly, in, len & ~BLOCK_MASK, 1);
        aead_collect_tail(a, in, len);
        ok = aead_check(a, tag, taglen);
        aead_ctr(a, 0, ctr_nonce);
        if (ok)
            k->chacha20_xor(k, out, in, len, a->key, ctr_nonce);
    }
    chapoly_wipe_inline(a->key, sizeof(a->key));
    return ok;
}
