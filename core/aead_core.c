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
 */
#include "aead_core.h"
#include "bytes.h"

#define BLOCK CHACHA20_BLOCK_BYTES
#define BLOCK_MASK ((size_t)BLOCK - 1)
#define AEAD_STAGE_MAX 2048 /* opening in place, a first text this long goes through the stack */

/*
 * An update this long goes straight through the range kernel and makes the
 * keystream batches after it exact (the blocks needed): with big updates a
 * batch is the end of an update, mostly the message's last.
 */
#define AEAD_BIG_UPDATE 1024

#define AEAD_FILL_MAX 256 /* a first streamed update this short: keystream from the key block's call */
#define AEAD_KEY_AHEAD (3 * BLOCK) /* keystream with the key block when long AAD needs the key */
enum { PHASE_KEY, PHASE_AAD, PHASE_TEXT, PHASE_DONE }; /* PHASE_KEY: block 0 not made yet */

static const uint8_t aead_zeros[AEAD_BATCH_MAX]; /* input of keystream-only ChaCha20 calls */

/* Counter and nonce of the text block at offset pos (a multiple of 64). */
static inline void aead_ctr(const chapoly_aead *a, uint64_t pos, uint32_t ctr_nonce[4])
{
    ctr_nonce[0] = (uint32_t)(1 + pos / BLOCK);
    ctr_nonce[1] = a->stream.ctr_nonce[1];
    ctr_nonce[2] = a->stream.ctr_nonce[2];
    ctr_nonce[3] = a->stream.ctr_nonce[3];
}

static inline int aead_overlap(const uint8_t *out, const uint8_t *in, size_t len)
{
    return (uintptr_t)out < (uintptr_t)in + len && (uintptr_t)in < (uintptr_t)out + len;
}

/* Key words and nonce in place; nothing of a previous message is read. */
static void aead_begin(chapoly_aead *a, const chapoly_kernels *k, const uint32_t key[8],
                       const uint8_t nonce[12])
{
    a->k = k;
    memcpy(a->stream.key, key, sizeof(a->stream.key));
    a->stream.ctr_nonce[0] = 0;
    a->stream.ctr_nonce[1] = load32_le(nonce);
    a->stream.ctr_nonce[2] = load32_le(nonce + 4);
    a->stream.ctr_nonce[3] = load32_le(nonce + 8);
    a->stream.keystream_pos = a->stream.keystream_len = 0;
    a->stream.partial_used = 0;
    a->poly.buflen = 0;
    a->aad_len = a->text_len = a->batch_start = 0;
    a->batch_used = a->ks_len = a->ks_made = 0;
    a->last_len = 0;
    a->aad_buffered = 0;
    a->phase = PHASE_KEY;
}

/* After a text of n bytes whose whole blocks are hashed: its last partial block waits in ct[]. */
static void aead_collect_tail(chapoly_aead *a, const uint8_t *c, size_t n)
{
    size_t hashed = n & ~BLOCK_MASK;

    if (n > hashed)
        memcpy(a->ct, c + hashed, n - hashed);
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
static size_t aead_first(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len, int enc,
                         const uint8_t *aad, size_t aadlen)
{
    const chapoly_kernels *k = a->k;
    size_t hashed = len & ~BLOCK_MASK;

    a->phase = PHASE_TEXT;
    a->aad_buffered = 0;
    if (!enc && len > 0 && aead_overlap(out, in, len)) {
        _Alignas(64) uint8_t s[AEAD_STAGE_MAX];

        if (len > sizeof(s)) { /* the key block alone (no text: any buffer will do) */
            k->aead_first_xor_hash(k, a->ct, a->ct, 0, 0, aad, aadlen, a->stream.key,
                                   a->stream.ctr_nonce, &a->poly, 0);
            return 0;
        }
        aead_collect_tail(a, in, len); /* before out (== in) changes */
        k->aead_first_xor_hash(k, s, in, len, hashed, aad, aadlen, a->stream.key,
                               a->stream.ctr_nonce, &a->poly, 0);
        memcpy(out, s, len);
        chapoly_wipe(s, len);
        return len;
    }
    if (!enc)
        aead_collect_tail(a, in, len);
    k->aead_first_xor_hash(k, out, in, len, hashed, aad, aadlen, a->stream.key,
                           a->stream.ctr_nonce, &a->poly, enc);
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
__attribute__((noinline)) static void aead_key_ahead(chapoly_aead *a, size_t ahead, int aad_done)
{
    _Alignas(64) uint8_t kb[BLOCK];

    a->k->chacha20_keyblock_xor(a->k, kb, a->ks, aead_zeros, ahead, a->stream.key,
                                a->stream.ctr_nonce);
    chapoly_aead_key_aad(a->k, &a->poly, kb, a->aad_buf, aad_done ? a->aad_buffered : 0);
    chapoly_wipe_inline(kb, sizeof(kb));
    a->batch_start = a->batch_used = 0;
    a->ks_len = (unsigned)ahead;
    if (a->ks_made < a->ks_len)
        a->ks_made = a->ks_len;
    if (!aad_done)
        chapoly_poly1305_update(a->k, &a->poly, a->aad_buf, a->aad_buffered);
    a->aad_buffered = 0;
    a->phase = aad_done ? PHASE_TEXT : PHASE_AAD;
}

/*
 * A span at a block boundary with no keystream made ahead: len bytes
 * straight through the range kernel, the collected ciphertext first. On a
 * level that carries collected ciphertext into a span (shapes.span_pre: a
 * stitched range), sealing whole blocks that fit ct[] after it, the text is
 * sealed there with the collected ciphertext as its pre bytes, and the last
 * span_pre bytes of ciphertext stay collected for the next span or the
 * finish.
 */
static size_t aead_span(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len, int enc)
{
    const chapoly_kernels *k = a->k;
    size_t pre = a->batch_used, keep = k->shapes.span_pre, hashed = len & ~BLOCK_MASK;
    uint32_t ctr_nonce[4];

    aead_ctr(a, a->batch_start + pre, ctr_nonce);
    if (enc && keep != 0 && len >= AEAD_BIG_UPDATE && hashed == len &&
        pre + len <= AEAD_BATCH_MAX) {
        uint8_t *c = a->ct + pre;

        memcpy(c, in, len);
        k->aead_xor_hash_range(k, c, c, len, pre, len - keep, a->stream.key, ctr_nonce,
                               &a->poly, 1);
        memcpy(out, c, len);
        memmove(a->ct, c + len - keep, keep);
        a->batch_start += pre + len - keep;
        a->batch_used = a->ks_len = (unsigned)keep;
        return len;
    }
    if (pre > 0)
        k->poly1305_blocks(k, &a->poly, a->ct, pre, 1);
    a->batch_start += pre;
    if (!enc)
        aead_collect_tail(a, in, len); /* before out (== in) changes */
    k->aead_xor_hash_range(k, out, in, len, 0, hashed, a->stream.key, ctr_nonce, &a->poly, enc);
    if (enc)
        aead_collect_tail(a, out, len);
    return len;
}

/*
 * The keystream of the batch is used up and text follows: the batch's
 * whole blocks of ciphertext go into the MAC in one run, and a new batch
 * of keystream starts at the block where the text is (a partial block
 * left by a span is made again), for need more bytes of text: the blocks
 * needed (exact), else as much as the text so far (at least the level's
 * shapes.stream_min), up to AEAD_BATCH_MAX: keystream made ahead at most
 * doubles the work however soon the message ends, and a long stream gets
 * whole batches.
 */
static void aead_next_batch(chapoly_aead *a, size_t need, int exact)
{
    const chapoly_kernels *k = a->k;
    unsigned full = a->batch_used & ~(unsigned)BLOCK_MASK, tail = a->batch_used & BLOCK_MASK;
    size_t seen = a->batch_start + a->batch_used, bytes = tail + need;
    uint32_t ctr_nonce[4];
    if (!exact)
        bytes = bytes > seen ? bytes : seen > k->shapes.stream_min ? seen : k->shapes.stream_min;
    bytes = bytes < AEAD_BATCH_MAX ? (bytes + BLOCK_MASK) & ~BLOCK_MASK : AEAD_BATCH_MAX;
    if (full > 0) {
        k->poly1305_blocks(k, &a->poly, a->ct, full, 1);
        if (tail > 0)
            memmove(a->ct, a->ct + full, tail);
        a->batch_start += full;
    }
    aead_ctr(a, a->batch_start, ctr_nonce);
    k->chacha20_xor(k, a->ks, aead_zeros, bytes, a->stream.key, ctr_nonce);
    a->batch_used = tail;
    a->ks_len = (unsigned)bytes;
    if (a->ks_made < bytes)
        a->ks_made = (unsigned)bytes;
}

/* 16 bytes in a general vector register: no intrinsics, no instruction set of its own. */
typedef uint8_t aead_v16 __attribute__((vector_size(16)));
#define AEAD_STEP 16
/* An empty asm in the 0..15-byte tail loop: the compiler keeps it a byte loop (no alias checks). */
#define AEAD_NO_VECTORIZE_HINT() __asm__("")

/*
 * out = in ^ ks, and the ciphertext (out sealing, in opening) to ct; out
 * may equal in, ks and ct are the state's. Every load of a step comes
 * before its stores, so out == in is safe.
 */
static inline void aead_xor_collect(uint8_t *out, const uint8_t *in, const uint8_t *ks,
                                    uint8_t *ct, size_t n, int enc)
{
    size_t i = 0;

    if (enc) {
        for (; i + AEAD_STEP <= n; i += AEAD_STEP) {
            aead_v16 x, y;

            memcpy(&x, in + i, AEAD_STEP);
            memcpy(&y, ks + i, AEAD_STEP);
            y ^= x;
            memcpy(ct + i, &y, AEAD_STEP);
            memcpy(out + i, &y, AEAD_STEP);
        }
        for (; i < n; i++) {
            uint8_t y = (uint8_t)(in[i] ^ ks[i]);

            AEAD_NO_VECTORIZE_HINT();
            ct[i] = y;
            out[i] = y;
        }
    } else {
        for (; i + AEAD_STEP <= n; i += AEAD_STEP) {
            aead_v16 x, y;

            memcpy(&x, in + i, AEAD_STEP);
            memcpy(&y, ks + i, AEAD_STEP);
            y ^= x;
            memcpy(ct + i, &x, AEAD_STEP);
            memcpy(out + i, &y, AEAD_STEP);
        }
        for (; i < n; i++) {
            uint8_t x = in[i];

            AEAD_NO_VECTORIZE_HINT();
            ct[i] = x;
            out[i] = (uint8_t)(x ^ ks[i]);
        }
    }
}

/*
 * The one text loop. aad: the whole AAD if the key block is not made yet.
 * ahead: more text may follow (streaming); exact batches once updates are
 * big or nothing follows.
 */
static void aead_text(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len, int enc,
                      const uint8_t *aad, size_t aadlen, int ahead)
{
    int exact = !ahead || len >= AEAD_BIG_UPDATE || a->last_len >= AEAD_BIG_UPDATE;

    if (a->phase == PHASE_AAD) { /* streamed AAD, the MAC keyed already: its padding */
        chapoly_poly1305_padded(a->k, &a->poly, a->poly.buf, a->poly.buflen);
        a->poly.buflen = 0;
        a->phase = PHASE_TEXT;
    }
    a->text_len += len;
    while (len > 0 || a->phase == PHASE_KEY) {
        size_t n = a->ks_len - a->batch_used;

        if (a->phase == PHASE_KEY && ahead && len <= AEAD_FILL_MAX) { /* 2 or 8 blocks in all */
            aead_key_ahead(a, len < BLOCK ? BLOCK : 7 * BLOCK, 1);
            continue;
        } else if (a->phase == PHASE_KEY) {
            n = aead_first(a, out, in, len, enc, aad, aadlen);
        } else if (n > 0) {
            n = n < len ? n : len;
            aead_xor_collect(out, in, a->ks + a->batch_used, a->ct + a->batch_used, n, enc);
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

/* The collected ciphertext and the lengths block in one call, then the tag. */
static void aead_lengths_tag(chapoly_aead *a, uint8_t tag[16])
{
    size_t n;

    if (a->phase == PHASE_KEY) /* no text: block 0 alone, the AAD beside it */
        aead_text(a, a->ct, a->ct, 0, 1, a->aad_buf, a->aad_buffered, 0);
    if (a->poly.buflen > 0) { /* AAD after the key block and no text: batch_used is 0 */
        memcpy(a->ct, a->poly.buf, a->poly.buflen);
        a->batch_used = (unsigned)a->poly.buflen;
        a->poly.buflen = 0;
    }
    n = chapoly_aead_lengths_block(a->ct, a->batch_used, a->aad_len, a->text_len);
    a->k->poly1305_blocks(a->k, &a->poly, a->ct, n, 1);
    a->k->poly1305_final(a->k, &a->poly, tag);
    a->batch_used = a->ks_len = 0;
    a->phase = PHASE_DONE;
}

/* Keystream made ahead wiped, as much as ks[] ever held; the key stays. */
static void aead_drop_keystream(chapoly_aead *a)
{
    if (a->ks_made != 0)
        chapoly_wipe(a->ks, a->ks_made);
    a->ks_made = 0;
    a->ks_len = a->batch_used;
}

/* The tag against the first taglen bytes of tag[], in constant time; 1 if equal. */
static int aead_check(chapoly_aead *a, const uint8_t *tag, size_t taglen)
{
    uint8_t calc[16];
    int bad;

    aead_lengths_tag(a, calc);
    bad = taglen < 1 || taglen > 16 || chapoly_consttime_memneq(calc, tag, taglen);
    chapoly_wipe_inline(calc, sizeof(calc));
    return !bad;
}

/* ---- streaming API ---- */

void chapoly_aead_end(chapoly_aead *a)
{
    if (a->phase == PHASE_AAD || a->phase == PHASE_TEXT)
        chapoly_wipe(&a->poly, sizeof(a->poly)); /* a finish wipes it itself */
    aead_drop_keystream(a);
    a->phase = PHASE_DONE;
}

void chapoly_aead_clear(chapoly_aead *a)
{
    chapoly_aead_end(a);
    chapoly_wipe(a->stream.key, sizeof(a->stream.key));
}

void chapoly_aead_start(chapoly_aead *a, const chapoly_kernels *k, const uint8_t key[32],
                        const uint8_t nonce[12])
{
    uint32_t kw[8];

    chapoly_aead_end(a);
    chapoly_load_key(kw, key);
    aead_begin(a, k, kw, nonce);
    chapoly_wipe_inline(kw, sizeof(kw));
}

void chapoly_aead_start_xchacha(chapoly_aead *a, const chapoly_kernels *k,
                                const uint8_t key[32], const uint8_t nonce[24])
{
    uint8_t subkey[32], n12[12] = { 0 };

    k->hchacha20(k, subkey, key, nonce);
    memcpy(n12 + 4, nonce + 16, 8);
    chapoly_aead_start(a, k, subkey, n12);
    chapoly_wipe(subkey, sizeof(subkey));
}

/* AAD that fits aad_buf waits for the key block's batch; longer AAD needs the MAC key now. */
void chapoly_aead_aad(chapoly_aead *a, const uint8_t *aad, size_t len)
{
    if (a->phase == PHASE_KEY && len <= sizeof(a->aad_buf) - a->aad_buffered) {
        memcpy(a->aad_buf + a->aad_buffered, aad, len);
        a->aad_buffered += (unsigned)len;
    } else {
        if (a->phase == PHASE_KEY)
            aead_key_ahead(a, AEAD_KEY_AHEAD, 0);
        chapoly_poly1305_update(a->k, &a->poly, aad, len);
    }
    a->aad_len += len;
}

/* Streaming text that needs a kernel call: out of line, so the XOR-only path saves no registers. */
__attribute__((noinline)) static void aead_text_streaming(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len,
                                int enc)
{
    aead_text(a, out, in, len, enc, a->aad_buf, a->aad_buffered, 1);
    a->last_len = len < AEAD_BIG_UPDATE ? (unsigned)len : AEAD_BIG_UPDATE;
}

/* The per-update entry; 64-byte aligned, so the small-update loop's place does not move with
 * unrelated code (16-byte updates measured 5 % apart between two placements). */
__attribute__((aligned(64))) void chapoly_aead_text(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len, int enc)
{
    if (a->phase == PHASE_TEXT && len <= a->ks_len - a->batch_used) {
        /* keystream made ahead covers it: no kernel call */
        aead_xor_collect(out, in, a->ks + a->batch_used, a->ct + a->batch_used, len, enc);
        a->batch_used += (unsigned)len;
        a->text_len += len;
    } else if (len > 0) {
        aead_text_streaming(a, out, in, len, enc);
    }
}

void chapoly_aead_finish(chapoly_aead *a, uint8_t tag[16])
{
    aead_lengths_tag(a, tag);
    aead_drop_keystream(a);
}

int chapoly_aead_verify(chapoly_aead *a, const uint8_t *tag, size_t taglen)
{
    int ok = aead_check(a, tag, taglen);

    aead_drop_keystream(a);
    return ok;
}

/* ---- one-shot (TLS 1.2 records, and whatever needs a whole message at once) ---- */

void chapoly_aead_seal(const chapoly_kernels *k, uint8_t *out, uint8_t tag[16],
                       const uint8_t *in, size_t len, const uint8_t *aad,
                       size_t aadlen, const uint32_t key[8],
                       const uint8_t nonce[12])
{
    chapoly_aead a;

    aead_begin(&a, k, key, nonce);
    a.aad_len = aadlen;
    aead_text(&a, out, in, len, 1, aad, aadlen, 0); /* the AAD straight from the caller */
    aead_lengths_tag(&a, tag);
    chapoly_wipe_inline(a.stream.key, sizeof(a.stream.key));
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
    chapoly_aead a;
    int ok;

    aead_begin(&a, k, key, nonce);
    a.aad_len = aadlen;
    a.text_len = len;
    if (len <= AEAD_STAGE_MAX) {
        _Alignas(64) uint8_t s[AEAD_STAGE_MAX];

        aead_first(&a, s, in, len, 0, aad, aadlen);
        ok = aead_check(&a, tag, taglen);
        if (ok && len > 0)
            memcpy(out, s, len);
        chapoly_wipe(s, len);
    } else {
        uint32_t ctr_nonce[4];

        aead_first(&a, out, in, 0, 0, aad, aadlen); /* the key block alone */
        k->poly1305_blocks(k, &a.poly, in, len & ~BLOCK_MASK, 1);
        aead_collect_tail(&a, in, len);
        ok = aead_check(&a, tag, taglen);
        aead_ctr(&a, 0, ctr_nonce);
        if (ok)
            k->chacha20_xor(k, out, in, len, a.stream.key, ctr_nonce);
    }
    chapoly_wipe_inline(a.stream.key, sizeof(a.stream.key));
    return ok;
}
