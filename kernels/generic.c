/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The generic compositions: the table entries a level does not specialise,
 * built from that table's own chacha20_xor and poly1305_blocks (every entry
 * takes its table first, kernels.h). The AEAD format they and the core use
 * is written once, in kernels.h: the Poly1305 key from block 0
 * (chapoly_aead_key_aad), the zero padding to a block
 * (chapoly_poly1305_padded) and the lengths block (chapoly_aead_lengths_block).
 */
#include "kernels_impl.h"

void chapoly_generic_keyblock_xor(const chapoly_kernels *k, uint8_t key_block[64],
                                  uint8_t *out, const uint8_t *in, size_t len,
                                  const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    _Alignas(64) uint8_t buf[CHAPOLY_GENERIC_BATCH];
    uint32_t next_ctr_nonce[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    if (len <= sizeof(buf) - CHACHA20_BLOCK_BYTES) { /* one call over [zero block || text] */
        memset(buf, 0, CHACHA20_BLOCK_BYTES);
        if (len > 0)
            memcpy(buf + CHACHA20_BLOCK_BYTES, in, len);
        k->chacha20_xor(k, buf, buf, CHACHA20_BLOCK_BYTES + len, key, next_ctr_nonce);
        memcpy(key_block, buf, CHACHA20_BLOCK_BYTES);
        if (len > 0)
            memcpy(out, buf + CHACHA20_BLOCK_BYTES, len);
        chapoly_wipe(buf, CHACHA20_BLOCK_BYTES + len);
        return;
    }
    memset(key_block, 0, CHACHA20_BLOCK_BYTES);
    k->chacha20_xor(k, key_block, key_block, CHACHA20_BLOCK_BYTES, key, next_ctr_nonce);
    next_ctr_nonce[0]++; /* mod 2^32, as in the kernels */
    k->chacha20_xor(k, out, in, len, key, next_ctr_nonce);
}

/*
 * The split form: the pre bytes, then chunk by chunk (shapes.aead_chunk
 * bytes, 0: all at once) ChaCha20 and the chunk's Poly1305 while it is in
 * L1 (opening: the hash first, so out == in works).
 */
void chapoly_generic_xor_hash_range(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                    size_t len, size_t pre, size_t hash_len,
                                    const uint32_t key[8], const uint32_t ctr_nonce[4],
                                    poly1305_state *st, int enc)
{
    size_t chunk = k->shapes.aead_chunk != 0 ? k->shapes.aead_chunk : len;
    uint32_t cn[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    if (pre > 0)
        k->poly1305_blocks(k, st, (enc ? out : in) - pre, pre, 1);
    while (len > 0) {
        size_t n = len < chunk ? len : chunk, h = hash_len < n ? hash_len : n;

        if (enc) {
            k->chacha20_xor(k, out, in, n, key, cn);
            if (h > 0)
                k->poly1305_blocks(k, st, out, h, 1);
        } else {
            if (h > 0)
                k->poly1305_blocks(k, st, in, h, 1);
            k->chacha20_xor(k, out, in, n, key, cn);
        }
        cn[0] += (uint32_t)(n / CHACHA20_BLOCK_BYTES); /* mod 2^32; only the last chunk is partial */
        hash_len -= h;
        out += n;
        in += n;
        len -= n;
    }
}

/*
 * The key block and the first head bytes of text in one call (up to
 * shapes.first_max, chosen so that whole ChaCha20 batches, shapes.chacha_batch,
 * follow; where first_max - chacha_batch bytes would leave only whole
 * batches, at least two, shapes.first_long takes one batch more: the
 * call makes two batches, which the zmm ChaCha20 runs in flight
 * together), the MAC keyed and the AAD in,
 * then the rest as a range whose pre bytes are the head's ciphertext, so
 * a stitched range hashes them beside its first batch.
 */
void chapoly_generic_first_xor_hash(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                    size_t len, size_t hash_len, const uint8_t *aad,
                                    size_t aadlen, const uint32_t key[8],
                                    const uint32_t ctr_nonce[4], poly1305_state *st, int enc)
{
    _Alignas(64) uint8_t key_block[CHACHA20_BLOCK_BYTES];
    size_t batch = k->shapes.chacha_batch, base = k->shapes.first_max - batch;
    /* whole batches after the head: base plus what is left of a batch (a power of two, so
     * no division), in whole blocks */
    size_t head = len <= k->shapes.first_max
                      ? len
                      : base + ((len - base) & (batch - 1) & ~(size_t)(CHACHA20_BLOCK_BYTES - 1));

    if (head == base && len - base >= 2 * batch && k->shapes.first_long)
        head = base + batch; /* first_long: one batch more beside the key block */
    uint32_t next[4] = { ctr_nonce[0] + 1 + (uint32_t)(head / CHACHA20_BLOCK_BYTES),
                         ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    k->chacha20_keyblock_xor(k, key_block, out, in, head, key, ctr_nonce);
    chapoly_aead_key_aad(k, st, key_block, aad, aadlen);
    chapoly_wipe_inline(key_block, sizeof(key_block));
    if (head < len && hash_len >= head) { /* head is whole blocks: the pre bytes of the rest */
        k->aead_xor_hash_range(k, out + head, in + head, len - head, head, hash_len - head, key,
                               next, st, enc);
        return;
    }
    if (hash_len > 0)
        k->poly1305_blocks(k, st, enc ? out : in, hash_len < head ? hash_len : head, 1);
    if (head < len)
        k->aead_xor_hash_range(k, out + head, in + head, len - head, 0, 0, key, next, st, enc);
}

void chapoly_generic_chacha20_multi_blocks(const chapoly_kernels *k, uint8_t *out,
                                           const uint32_t *states, size_t n)
{
    /* One kernel call per block over zeros: its keystream is the raw block. */
    for (size_t i = 0; i < n; i++) {
        uint8_t *b = out + CHACHA20_BLOCK_BYTES * i;

        memset(b, 0, CHACHA20_BLOCK_BYTES);
        k->chacha20_xor(k, b, b, CHACHA20_BLOCK_BYTES, states + 16 * i + 4, states + 16 * i + 12);
    }
}

void chapoly_generic_poly1305_multi_blocks(const chapoly_kernels *k, poly1305_state *const st[],
                                           const uint8_t *const in[], const size_t len[],
                                           size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (len[i] > 0)
            k->poly1305_blocks(k, st[i], in[i], len[i], 1);
}

void chapoly_generic_multi_blocks_hash(const chapoly_kernels *k, uint8_t *out,
                                       const uint32_t *states, size_t n,
                                       poly1305_state *const st[], const uint8_t *in[],
                                       size_t len[], size_t nh)
{
    (void)st;
    (void)in;
    (void)len;
    (void)nh; /* nothing hashed beside: the rows stay for the caller */
    k->chacha20_multi_blocks(k, out, states, n);
}

void chapoly_generic_poly1305_last(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in,
                                   size_t len, unsigned padbit, uint8_t tag[16])
{
    if (len >= POLY1305_BLOCK_BYTES)
        k->poly1305_blocks(k, st, in, len, padbit);
    k->poly1305_final(k, st, tag);
}
