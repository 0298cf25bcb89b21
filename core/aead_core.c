/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ChaCha20-Poly1305 AEAD core (aead_core.h): one message at a time,
 * streamed or one-shot, on one kernel table.
 *
 * The data path of a message:
 *  - The first text arrives with the key block: block 0 (its first 32 bytes
 *    are the Poly1305 key) and the first text (aead_first_text_len bytes)
 *    come from ONE kernel call (chacha20_keyblock_xor), so a short
 *    message costs one ChaCha20 batch. AAD that fits goes into the MAC from
 *    the spare half of block 0 (keystream nothing uses).
 *  - Whole kilobytes after that go to the stitched ChaCha20 + Poly1305
 *    kernel (aead_xor_hash); sealing, the first text's last
 *    kilobyte is hashed beside the first of them (prev_ciphertext).
 *  - Streaming, text that is not a whole kilobyte goes through a batch
 *    (aead_core.h): whole ChaCha20 batches of keystream made ahead in one
 *    call and consumed by this and the following updates (an update that
 *    fits the keystream already made is an XOR, no kernel call), its
 *    ciphertext collected in the state and hashed in one Poly1305 run when
 *    the batch is used up. The collected ciphertext is a copy: the caller
 *    may reuse its output buffer between updates, and opening hashes the
 *    input. One-shot calls know that no text follows and make only the
 *    keystream they use.
 *  - The ciphertext after the last multiple of 64 bytes waits in ct[]; the
 *    finish hashes it, zero-padded, with the lengths in one call.
 * Secrets: ks[] is wiped up to the most it held (ks_made) on finish,
 * verify, end and restart; ct[] holds ciphertext only.
 */
#include "aead_core.h"
#include "bytes.h"

/* Text in the first batch, at most: 31 blocks beside the key block. */
#define AEAD_FIRST_TEXT_MAX (2048 - 64)

/* Ciphertext a staged seal keeps collected: one 8-lane batch. */
#define AEAD_BATCH_UNIT 512

/*
 * Granule of an exact streaming batch (aead_batch_bytes): one block. Every
 * level's ChaCha20 makes a few blocks in a short shape (avx512: one block
 * scalar, 2..4 one zmm row set; avx2: 1..4 ymm row sets), so the last byte
 * of a 2049- or 4097-byte seal costs one block, not a 512-byte batch.
 */
#define AEAD_EXACT_UNIT 64

/* An update this long (or the last one that needed a kernel call) makes exact batches. */
#define AEAD_BIG_UPDATE 1024

/* Keystream blocks made with the key block when the AAD needs the key first. */
#define AEAD_KEY_AHEAD 3

enum { PHASE_KEY, PHASE_AAD, PHASE_TEXT, PHASE_DONE }; /* PHASE_KEY: block 0 not made yet */

/* Input of the keystream-only ChaCha20 calls. */
static const uint8_t aead_zeros[AEAD_BATCH_MAX];

/* Stores the optimiser keeps, without the call chapoly_wipe costs. */
static inline void aead_wipe_small(void *p, size_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    memset(p, 0, n);
    __asm__ volatile("" : : "r"(p) : "memory");
#else
    chapoly_wipe(p, n);
#endif
}

/*
 * Text in the first batch when len bytes arrive at once: all of it up to
 * AEAD_FIRST_TEXT_MAX; else 15..30 blocks, so that whole kilobytes and less
 * than a block follow; from 3 KiB on, 16..31 blocks, so that the last kilobyte
 * of it can be hashed beside the next kilobyte's ChaCha20 (at least one
 * whole kilobyte follows).
 */
static size_t aead_first_text_len(size_t len)
{
    if (len <= AEAD_FIRST_TEXT_MAX)
        return len;
    if (len < 3072)
        return 960 + (((len - 960) % 1024) & ~(size_t)63);
    return 1024 + (((len - 1024) % 1024) & ~(size_t)63);
}

/*
 * Keystream one streaming batch makes for need bytes from its start (the
 * partial block it makes again and the rest of the update): AEAD_BATCH_MAX,
 * two whole 16-lane batches (the avx512 ChaCha20 runs them in flight
 * together) or four 8-lane ones. Measured on Zen 4, 256-byte updates: 2 KiB
 * batches 1.77x -> 1.98x the default in openssl speed -evp, 69 % -> 76 % of
 * the one-shot in bench_evp stream256 (16 and 64 KiB messages), against
 * 1 KiB batches; at the avx2 level 512-byte batches cost 13 % more
 * instructions per byte than 1 KiB ones. Updates of whole kilobytes at a
 * block boundary do not use a batch (aead_more_text), so with big updates
 * (this one or the last that needed a kernel call at least a kilobyte, or
 * exact: no text follows) a batch is the end of an update, mostly the last
 * of the message: then only the blocks the update needs are made (1350
 * bytes in 1 KiB updates at avx2: 384 bytes instead of 2 KiB for the 326
 * after the first kilobyte). A message of small updates leaves half a batch
 * unused on average.
 */
static inline unsigned aead_batch_bytes(size_t need, int exact)
{
    if (exact && need < AEAD_BATCH_MAX)
        return (unsigned)((need + AEAD_EXACT_UNIT - 1) & ~(size_t)(AEAD_EXACT_UNIT - 1));
    return AEAD_BATCH_MAX;
}

/* Counter and nonce of the text block at offset pos (a multiple of 64). */
static inline void aead_ctr(const chapoly_aead *a, uint64_t pos, uint32_t ctr_nonce[4])
{
    ctr_nonce[0] = (uint32_t)(1 + pos / 64);
    ctr_nonce[1] = a->stream.ctr_nonce[1];
    ctr_nonce[2] = a->stream.ctr_nonce[2];
    ctr_nonce[3] = a->stream.ctr_nonce[3];
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

/* The MAC input so far, zero-padded to a block (end of the AAD). */
static void aead_pad16(chapoly_aead *a)
{
    poly1305_state *st = &a->poly;

    if (st->buflen > 0) {
        memset(st->buf + st->buflen, 0, POLY1305_BLOCK_BYTES - st->buflen);
        a->k->poly1305_blocks(a->k, st, st->buf, POLY1305_BLOCK_BYTES, 1);
        st->buflen = 0;
    }
}

/*
 * Poly1305 keyed from block 0 (key_block), then the whole AAD, zero-padded
 * (in key_block's spare half if it fits).
 */
static void aead_key_block(chapoly_aead *a, uint8_t key_block[64], const uint8_t *aad,
                           size_t aadlen)
{
    size_t aad_padded = (aadlen + 15) & ~(size_t)15;

    chapoly_poly1305_init(a->k, &a->poly, key_block);
    /* key_block[32..63]: block 0's keystream that nothing uses */
    if (aad_padded > 0 && aad_padded <= 32) {
        memcpy(key_block + 64 - aad_padded, aad, aadlen);
        memset(key_block + 64 - aad_padded + aadlen, 0, aad_padded - aadlen);
        a->k->poly1305_blocks(a->k, &a->poly, key_block + 64 - aad_padded, aad_padded, 1);
    } else if (aad_padded > 32) {
        chapoly_poly1305_update(a->k, &a->poly, aad, aadlen);
        aead_pad16(a);
    }
}

/*
 * Block 0 and AEAD_KEY_AHEAD keystream blocks for the text (the batch at
 * text offset 0) in ONE kernel call, for when the Poly1305 key is needed
 * before any text: AAD longer than aad_buf, or a one-shot open that hashes
 * everything first. The buffered AAD is hashed (not padded: more may follow).
 */
static void aead_key_ahead(chapoly_aead *a)
{
    uint8_t buf[64 * (1 + AEAD_KEY_AHEAD)];

    memset(buf, 0, sizeof(buf));
    a->k->chacha20_xor(a->k, buf, buf, sizeof(buf), a->stream.key, a->stream.ctr_nonce);
    chapoly_poly1305_init(a->k, &a->poly, buf);
    memcpy(a->ks, buf + 64, 64 * AEAD_KEY_AHEAD);
    chapoly_wipe(buf, sizeof(buf));
    a->batch_start = 0;
    a->batch_used = 0;
    a->ks_len = 64 * AEAD_KEY_AHEAD;
    if (a->ks_made < a->ks_len)
        a->ks_made = a->ks_len;
    if (a->aad_buffered > 0)
        chapoly_poly1305_update(a->k, &a->poly, a->aad_buf, a->aad_buffered);
    a->aad_buffered = 0;
    a->phase = PHASE_AAD;
}

/*
 * Block 0 and the keystream of n bytes of text (n <= AEAD_FIRST_TEXT_MAX) in
 * one kernel call through a stack buffer s: block 0 lands in s[0..63], the
 * text XORed with its keystream at s + 64.
 */
static void aead_first_batch(chapoly_aead *a, uint8_t s[2048], const uint8_t *in, size_t n)
{
    a->k->chacha20_keyblock_xor(a->k, s, s + 64, in, n, a->stream.key, a->stream.ctr_nonce);
}

/*
 * n bytes of ciphertext c that start the batch at batch_start (no partial
 * MAC block pending): whole 64-byte blocks into the MAC now, the rest into
 * ct[] for later. The keystream of the batch is used up (none is kept).
 */
static void aead_hash_text(chapoly_aead *a, const uint8_t *c, size_t n)
{
    size_t hashed = n & ~(size_t)63;

    if (hashed > 0)
        a->k->poly1305_blocks(a->k, &a->poly, c, hashed, 1);
    if (n > hashed)
        memcpy(a->ct, c + hashed, n - hashed);
    a->batch_start += hashed;
    a->batch_used = a->ks_len = (unsigned)(n - hashed);
}

/*
 * First text of a message, n <= AEAD_FIRST_TEXT_MAX bytes, with the key block
 * (aead_first_batch's shapes: the kernel picks one batch shape for the
 * whole packet). Into a separate buffer, the text is XORed straight from
 * in to out and the MAC reads the ciphertext where it is. In place, the
 * kernel writes the text to a stack buffer that is then copied out:
 * opening must hash the ciphertext before it is overwritten (the key to
 * hash it comes from the same batch), and for sealing the copy measured no
 * slower in the TLS benchmarks (libssl seals and opens in place, data it
 * has just copied) than XORing in place. The AAD (complete now) goes in
 * with the key block. defer: a kilobyte at the end of the ciphertext left
 * for the caller to hash (sealing; n is then a multiple of 64).
 */
static void aead_first_text(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t n,
                            size_t defer, int enc, const uint8_t *aad, size_t aadlen)
{
    const chapoly_kernels *k = a->k;
    uintptr_t o = (uintptr_t)out, i = (uintptr_t)in;

    if (!(o < i + n && i < o + n)) { /* separate buffers (or no text) */
        _Alignas(64) uint8_t key_block[64];

        k->chacha20_keyblock_xor(k, key_block, out, in, n, a->stream.key,
                                      a->stream.ctr_nonce);
        aead_key_block(a, key_block, aad, aadlen);
        chapoly_wipe(key_block, sizeof(key_block));
        aead_hash_text(a, enc ? out : in, n - defer);
    } else {
        _Alignas(64) uint8_t s[2048];

        aead_first_batch(a, s, in, n);
        aead_key_block(a, s, aad, aadlen);
        /* the ciphertext: here (sealing) or in, before out (== in) changes */
        aead_hash_text(a, enc ? s + 64 : in, n - defer);
        memcpy(out, s + 64, n);
        chapoly_wipe(s, 64 * (1 + (n + 63) / 64));
    }
    a->batch_start += defer; /* the caller hashes it: the batch starts after it */
    a->aad_buffered = 0;
    a->text_len = n;
    a->phase = PHASE_TEXT;
}

/* Text in the key block's batch when the level has aead_xor_hash_range: 7 blocks (8 lanes). */
#define AEAD_RANGE_HEAD 448

/*
 * Text beside the key block for aead_first_text_range: the key block's
 * batch takes 7 blocks of text, but opening a text whose batches are then
 * one more (n mod 512 is 0 or above 448: 1, 2, 4 KiB) makes the key block
 * alone and hashes all the ciphertext beside the batches (opening needs
 * none of the text's batches first). Sealing, either costs about the same.
 */
static inline size_t aead_range_head(size_t n, int enc)
{
    size_t r = n % 512;

    return !enc && (r == 0 || r > AEAD_RANGE_HEAD) ? 0 : AEAD_RANGE_HEAD;
}

/*
 * First text of a message, n > AEAD_RANGE_HEAD bytes, on a level with
 * aead_xor_hash_range (the avx2 one): the key block and the first 7 blocks
 * of text in one 8-lane batch (head, aead_range_head), the Poly1305 key
 * and the AAD, then the rest of the text in batches that each hash up to
 * 32 (opening 40) blocks of the ciphertext, those 7 blocks first, so that
 * only what the last batch wrote is hashed alone (sealing). dst: the
 * output, == in sealing in place; opening, dst and in share no byte unless
 * head is 0 (the caller stages in-place text). The ciphertext after its
 * last multiple of 64 bytes waits in ct[], as aead_hash_text.
 */
static void aead_first_text_range(chapoly_aead *a, uint8_t *dst, const uint8_t *in, size_t n,
                                  int enc, const uint8_t *aad, size_t aadlen)
{
    const chapoly_kernels *k = a->k;
    _Alignas(64) uint8_t key_block[64];
    size_t hashed = n & ~(size_t)63, head = aead_range_head(n, enc);
    uint32_t ctr_nonce[4];

    if (!enc && n > hashed) /* before dst (== in when head is 0) changes */
        memcpy(a->ct, in + hashed, n - hashed);
    if (head > 0) {
        /* the key block's batch, the Poly1305 key, the AAD and the rest: one kernel call */
        k->aead_first_xor_hash(k, dst, in, n, hashed, aad, aadlen, a->stream.key,
                               a->stream.ctr_nonce, &a->poly, enc);
    } else {
        k->chacha20_keyblock_xor(k, key_block, dst, in, head, a->stream.key,
                                      a->stream.ctr_nonce);
        aead_key_block(a, key_block, aad, aadlen);
        aead_wipe_small(key_block, sizeof(key_block));
        aead_ctr(a, head, ctr_nonce);
        k->aead_xor_hash_range(k, dst + head, in + head, n - head, head, hashed - head,
                               a->stream.key, ctr_nonce, &a->poly, enc);
    }
    if (enc && n > hashed)
        memcpy(a->ct, dst + hashed, n - hashed);
    a->batch_start = hashed;
    a->batch_used = a->ks_len = (unsigned)(n - hashed);
    a->aad_buffered = 0;
    a->text_len = n;
    a->phase = PHASE_TEXT;
}

#if defined(__GNUC__) || defined(__clang__)
/* 16 bytes in a general vector register (SSE2, NEON): no intrinsics, no ISA of its own. */
typedef uint8_t aead_v16 __attribute__((vector_size(16)));
#define AEAD_STEP 16
/* An empty asm in the 0..15-byte tail loop: the compiler keeps it a byte loop (no alias checks). */
#define AEAD_NO_VECTORIZE_HINT() __asm__("")
#else
typedef uint64_t aead_v16;
#define AEAD_STEP 8
#define AEAD_NO_VECTORIZE_HINT() ((void)0)
#endif

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
 * The keystream of the batch is used up and text follows: the batch's
 * whole blocks of ciphertext go into the MAC in one run, and a new batch
 * of keystream starts at the block where the text is (a partial block
 * left by a first text is made again), for len more bytes of text (exact:
 * aead_batch_bytes).
 */
static void aead_next_batch(chapoly_aead *a, size_t len, int exact)
{
    const chapoly_kernels *k = a->k;
    unsigned full = a->batch_used & ~63u, tail = a->batch_used & 63u;
    unsigned bytes = aead_batch_bytes(tail + len, exact);
    uint32_t ctr_nonce[4];

    if (full > 0) {
        k->poly1305_blocks(k, &a->poly, a->ct, full, 1);
        if (tail > 0)
            memmove(a->ct, a->ct + full, tail);
        a->batch_start += full;
    }
    aead_ctr(a, a->batch_start, ctr_nonce);
    k->chacha20_xor(k, a->ks, aead_zeros, bytes, a->stream.key, ctr_nonce);
    a->batch_used = tail;
    a->ks_len = bytes;
    if (a->ks_made < bytes)
        a->ks_made = bytes;
}

/*
 * Text straight from in to out at a block boundary with no keystream made
 * ahead: whole kilobytes stitched, or (ahead == 0: nothing follows) all of
 * len through the cipher and the MAC kernels. The collected ciphertext
 * goes first (sealing a kilobyte of it, beside the first kilobyte's
 * ChaCha20). Returns the bytes done.
 */
static size_t aead_direct(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len,
                          int enc, const uint8_t *prev_ciphertext)
{
    const chapoly_kernels *k = a->k;
    size_t whole = len & ~(size_t)1023;
    uint32_t ctr_nonce[4];

    if (whole > 0 && enc && prev_ciphertext == NULL && a->batch_used >= 1024) {
        /* the last kilobyte beside the first kilobyte's ChaCha20 */
        if (a->batch_used > 1024)
            k->poly1305_blocks(k, &a->poly, a->ct, a->batch_used - 1024, 1);
        prev_ciphertext = a->ct + a->batch_used - 1024;
    } else if (a->batch_used > 0) {
        k->poly1305_blocks(k, &a->poly, a->ct, a->batch_used, 1);
    }
    if (whole == 0 && prev_ciphertext != NULL)
        k->poly1305_blocks(k, &a->poly, prev_ciphertext, 1024, 1);
    a->batch_start += a->batch_used;
    a->batch_used = a->ks_len = 0;
    aead_ctr(a, a->batch_start, ctr_nonce);
    if (whole > 0) {
        /* ChaCha20 and Poly1305 interleaved, kilobyte by kilobyte */
        k->aead_xor_hash(k, out, in, whole, a->stream.key, ctr_nonce, &a->poly,
                              prev_ciphertext, enc);
        a->batch_start += whole;
        return whole;
    }
    if (enc) {
        k->chacha20_xor(k, out, in, len, a->stream.key, ctr_nonce);
        aead_hash_text(a, out, len);
    } else {
        aead_hash_text(a, in, len); /* before out (== in) changes */
        k->chacha20_xor(k, out, in, len, a->stream.key, ctr_nonce);
    }
    return len;
}

/*
 * Text straight from in to out at a block boundary with no keystream made
 * ahead, on a level with aead_xor_hash_range: all len bytes in one call
 * that hashes their whole blocks beside the ChaCha20 (the collected
 * ciphertext first), as the one-shot's first text does; the ciphertext
 * after the last whole block waits in ct[] and its keystream is not kept.
 */
static size_t aead_direct_range(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len,
                                int enc)
{
    const chapoly_kernels *k = a->k;
    size_t hashed = len & ~(size_t)63;
    uint32_t ctr_nonce[4];

    if (a->batch_used > 0)
        k->poly1305_blocks(k, &a->poly, a->ct, a->batch_used, 1);
    a->batch_start += a->batch_used;
    aead_ctr(a, a->batch_start, ctr_nonce);
    if (!enc && len > hashed) /* before out (== in) changes */
        memcpy(a->ct, in + hashed, len - hashed);
    k->aead_xor_hash_range(k, out, in, len, 0, hashed, a->stream.key, ctr_nonce, &a->poly, enc);
    if (enc && len > hashed)
        memcpy(a->ct, out + hashed, len - hashed);
    a->batch_start += hashed;
    a->batch_used = a->ks_len = (unsigned)(len - hashed);
    return len;
}

/*
 * Sealing len bytes (a multiple of 64, at least 1024) at a block boundary
 * with no keystream made ahead, on a level with aead_xor_hash_range, when
 * the collected ciphertext and the text fit ct[]: the text is copied after
 * the collected ciphertext and sealed there in one call that hashes the
 * collected ciphertext as its pre bytes, so every block hashed here is
 * hashed beside a batch's ChaCha20 (aead_xor_hash hashes a call's last
 * 512-byte batch alone, a quarter of the time of a 1 KiB update at avx2);
 * the last 512 bytes of ciphertext, which only a following batch could hash
 * beside its rounds, stay collected for the next update or the finish.
 */
static size_t aead_seal_staged(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len)
{
    const chapoly_kernels *k = a->k;
    size_t pre = a->batch_used;
    uint8_t *c = a->ct + pre;
    uint32_t ctr_nonce[4];

    aead_ctr(a, a->batch_start + pre, ctr_nonce);
    memcpy(c, in, len);
    k->aead_xor_hash_range(k, c, c, len, pre, len - AEAD_BATCH_UNIT, a->stream.key, ctr_nonce,
                           &a->poly, 1);
    memcpy(out, c, len);
    memmove(a->ct, c + len - AEAD_BATCH_UNIT, AEAD_BATCH_UNIT);
    a->batch_start += pre + len - AEAD_BATCH_UNIT;
    a->batch_used = a->ks_len = AEAD_BATCH_UNIT;
    return len;
}

/*
 * Text after the first: keystream made ahead first, then whole kilobytes
 * straight through, then the rest from a new batch (ahead) or straight
 * through (the one-shot calls: nothing follows).
 */
static void aead_more_text(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len,
                           int enc, const uint8_t *prev_ciphertext, int ahead)
{
    /* big updates: the batch made here is likely the message's last */
    int exact = !ahead || len >= AEAD_BIG_UPDATE || a->last_len >= AEAD_BIG_UPDATE;

    a->text_len += len;
    while (len > 0) {
        size_t n = a->ks_len - a->batch_used;

        if (n > 0) {
            if (n > len)
                n = len;
            aead_xor_collect(out, in, a->ks + a->batch_used, a->ct + a->batch_used, n, enc);
            a->batch_used += (unsigned)n;
        } else if ((a->batch_used & 63) == 0 && enc && prev_ciphertext == NULL &&
                   a->k->shapes.range_head != 0 && len >= 1024 && len % 64 == 0 &&
                   a->batch_used + len <= AEAD_BATCH_MAX) {
            n = aead_seal_staged(a, out, in, len);
        } else if ((a->batch_used & 63) == 0 && exact && prev_ciphertext == NULL &&
                   a->k->shapes.range_head != 0 && len < 1024) {
            n = aead_direct_range(a, out, in, len, enc);
        } else if ((a->batch_used & 63) == 0 && (len >= 1024 || !ahead)) {
            n = aead_direct(a, out, in, len, enc, prev_ciphertext);
            prev_ciphertext = NULL;
        } else {
            aead_next_batch(a, len, exact);
            continue;
        }
        out += n;
        in += n;
        len -= n;
    }
}

/*
 * Text with the AAD the message has so far (aad: complete if the key block
 * is not made yet). ahead: more text may follow (streaming).
 */
static void aead_text(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len, int enc,
                      const uint8_t *aad, size_t aadlen, int ahead)
{
    /* sealing: the kilobyte of ciphertext before out, not hashed yet */
    const uint8_t *prev_ciphertext = NULL;

    if (a->phase == PHASE_KEY && a->k->shapes.range_head != 0 && len > AEAD_RANGE_HEAD) {
        uintptr_t o = (uintptr_t)out, i = (uintptr_t)in;

        if (enc || !(o < i + len && i < o + len) || aead_range_head(len, enc) == 0) {
            aead_first_text_range(a, out, in, len, enc, aad, aadlen);
            return;
        }
        if (len <= 2048) { /* opening in place: staged, in is hashed as it is read */
            _Alignas(64) uint8_t s[2048];

            aead_first_text_range(a, s, in, len, enc, aad, aadlen);
            memcpy(out, s, len);
            chapoly_wipe(s, len);
            return;
        }
    }
    if (a->phase == PHASE_KEY) {
        /*
         * A long first text starts with one or two 16-lane batches, so that
         * whole kilobytes, and less than a block after them, are left for
         * the stitched kernel; sealing 3 KiB or more, the last kilobyte of
         * the first batch is hashed beside the next kilobyte's ChaCha20.
         */
        size_t n = aead_first_text_len(len);

        if (enc && n >= 1024 && len - n >= 1024)
            prev_ciphertext = out + n - 1024;
        aead_first_text(a, out, in, n, prev_ciphertext != NULL ? 1024 : 0, enc, aad, aadlen);
        in += n;
        out += n;
        len -= n;
    } else if (a->phase == PHASE_AAD) {
        aead_pad16(a);
        a->phase = PHASE_TEXT;
    }
    if (len > 0)
        aead_more_text(a, out, in, len, enc, prev_ciphertext, ahead);
}

/*
 * The collected ciphertext, zero-padded to a block, and the lengths in one
 * call (an AAD partial block instead when there is no text), then the tag.
 */
static void aead_lengths_tag(chapoly_aead *a, uint8_t tag[16])
{
    poly1305_state *st = &a->poly;
    unsigned n, padded;

    if (a->phase == PHASE_KEY) /* no text: block 0 alone, the AAD beside it */
        aead_first_text(a, NULL, NULL, 0, 0, 1, a->aad_buf, a->aad_buffered);
    if (st->buflen > 0) { /* AAD after the key block and no text: batch_used is 0 */
        memcpy(a->ct, st->buf, st->buflen);
        a->batch_used = (unsigned)st->buflen;
        st->buflen = 0;
    }
    n = a->batch_used;
    padded = (n + 15) & ~15u;
    memset(a->ct + n, 0, padded - n);
    store64_le(a->ct + padded, a->aad_len);
    store64_le(a->ct + padded + 8, a->text_len);
    a->k->poly1305_blocks(a->k, st, a->ct, padded + POLY1305_BLOCK_BYTES, 1);
    a->k->poly1305_final(a->k, st, tag);
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

static void aead_tag(chapoly_aead *a, uint8_t tag[16])
{
    aead_lengths_tag(a, tag);
    aead_drop_keystream(a);
}

/* The tag against the first taglen bytes of tag[], in constant time; 1 if equal. */
static int aead_check(chapoly_aead *a, const uint8_t *tag, size_t taglen)
{
    uint8_t calc[16];
    int bad;

    aead_lengths_tag(a, calc);
    bad = taglen < 1 || taglen > 16 || chapoly_consttime_memneq(calc, tag, taglen);
    aead_wipe_small(calc, sizeof(calc));
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
    aead_wipe_small(kw, sizeof(kw));
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

void chapoly_aead_aad(chapoly_aead *a, const uint8_t *aad, size_t len)
{
    if (a->phase == PHASE_KEY && len <= sizeof(a->aad_buf) - a->aad_buffered) {
        memcpy(a->aad_buf + a->aad_buffered, aad, len);
        a->aad_buffered += (unsigned)len;
    } else {
        if (a->phase == PHASE_KEY) /* the text that follows uses the keystream made ahead */
            aead_key_ahead(a);
        chapoly_poly1305_update(a->k, &a->poly, aad, len);
    }
    a->aad_len += len;
}

/* Streaming text that needs a kernel call: out of line, so the XOR-only path saves no registers. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static void aead_text_streaming(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len,
                                int enc)
{
    aead_text(a, out, in, len, enc, a->aad_buf, a->aad_buffered, 1);
    a->last_len = len < AEAD_BIG_UPDATE ? (unsigned)len : AEAD_BIG_UPDATE;
}

/* The per-update entry; 64-byte aligned, so the small-update loop's place does not move with
 * unrelated code (16-byte updates at avx512 measured 5 % apart between two placements). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((aligned(64)))
#endif
void chapoly_aead_text(chapoly_aead *a, uint8_t *out, const uint8_t *in, size_t len, int enc)
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
    aead_tag(a, tag);
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
    /* the AAD straight from the caller; no text follows */
    aead_text(&a, out, in, len, 1, aad, aadlen, 0);
    aead_tag(&a, tag);
    aead_wipe_small(a.stream.key, sizeof(a.stream.key));
}

/*
 * The ciphertext is hashed and the tag checked before any plaintext is
 * written. Up to AEAD_FIRST_TEXT_MAX bytes (the common TLS/QUIC case), one
 * kernel call makes the key block and the plaintext in a stack buffer, copied out
 * once the tag is good; longer, the key block comes with keystream ahead
 * and the text is decrypted after the check.
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
    if (len > AEAD_RANGE_HEAD && len <= 2048 && k->shapes.range_head != 0) {
        _Alignas(64) uint8_t s[2048];

        /* the plaintext to s, the ciphertext hashed as it is read */
        aead_first_text_range(&a, s, in, len, 0, aad, aadlen);
        ok = aead_check(&a, tag, taglen);
        if (ok)
            memcpy(out, s, len);
        chapoly_wipe(s, len);
    } else if (len <= AEAD_FIRST_TEXT_MAX) {
        _Alignas(64) uint8_t s[2048];

        aead_first_batch(&a, s, in, len);
        aead_key_block(&a, s, aad, aadlen);
        aead_hash_text(&a, in, len);
        a.phase = PHASE_TEXT;
        ok = aead_check(&a, tag, taglen);
        if (ok && len > 0)
            memcpy(out, s + 64, len);
        chapoly_wipe(s, 64 * (1 + (len + 63) / 64));
    } else {
        size_t ahead = 64 * AEAD_KEY_AHEAD;
        uint32_t ctr_nonce[4];

        aead_key_ahead(&a);
        chapoly_poly1305_update(k, &a.poly, aad, aadlen);
        aead_pad16(&a);
        aead_hash_text(&a, in, len);
        a.phase = PHASE_TEXT;
        ok = aead_check(&a, tag, taglen);
        if (ok) {
            chacha20_xor_bytes(out, in, a.ks, ahead); /* len > ahead */
            aead_ctr(&a, ahead, ctr_nonce);
            k->chacha20_xor(k, out + ahead, in + ahead, len - ahead, a.stream.key, ctr_nonce);
        }
        aead_drop_keystream(&a);
    }
    aead_wipe_small(a.stream.key, sizeof(a.stream.key));
    return ok;
}
