/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The generic compositions: the table entries a level does not specialise,
 * built from that table's own chacha20_xor and poly1305_blocks (every entry
 * takes its table first, kernels.h), and the AEAD format of RFC 8439 2.8,
 * written once: the Poly1305 key from block 0, the AAD zero-padded, the
 * lengths block. The AEAD core, the batched AEAD and the stitched kernels
 * all use these three.
 */
#include "kernels_impl.h"

void chapoly_generic_keyblock_xor(const chapoly_kernels *k, uint8_t key_block[64],
                                  uint8_t *out, const uint8_t *in, size_t len,
                                  const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    _Alignas(64) uint8_t buf[2048];
    uint32_t next_ctr_nonce[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    if (len <= sizeof(buf) - 64) { /* one call over [zero block || text] */
        memset(buf, 0, 64);
        if (len > 0)
            memcpy(buf + 64, in, len);
        k->chacha20_xor(k, buf, buf, 64 + len, key, next_ctr_nonce);
        memcpy(key_block, buf, 64);
        if (len > 0)
            memcpy(out, buf + 64, len);
        chapoly_wipe(buf, 64 + len);
        return;
    }
    memset(key_block, 0, 64);
    k->chacha20_xor(k, key_block, key_block, 64, key, next_ctr_nonce);
    next_ctr_nonce[0]++; /* mod 2^32, as in the kernels */
    k->chacha20_xor(k, out, in, len, key, next_ctr_nonce);
}

/*
 * The split form: chunk by chunk (shapes.aead_chunk bytes, which stay in
 * L1 between the two passes), ChaCha20 and then the chunk's Poly1305
 * (opening: the hash first). Sealing, prev_ciphertext's kilobyte first.
 */
void chapoly_generic_xor_hash(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                              size_t len, const uint32_t key[8], const uint32_t ctr_nonce[4],
                              poly1305_state *st, const uint8_t *prev_ciphertext, int enc)
{
    if (enc && prev_ciphertext != NULL)
        k->poly1305_blocks(k, st, prev_ciphertext, 1024, 1);
    chapoly_generic_xor_hash_range(k, out, in, len, 0, len, key, ctr_nonce, st, enc);
}

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
        cn[0] += (uint32_t)(n / 64); /* mod 2^32; only the last chunk may be partial */
        hash_len -= h;
        out += n;
        in += n;
        len -= n;
    }
}

void chapoly_generic_first_xor_hash(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                    size_t len, size_t hash_len, const uint8_t *aad,
                                    size_t aadlen, const uint32_t key[8],
                                    const uint32_t ctr_nonce[4], poly1305_state *st, int enc)
{
    _Alignas(64) uint8_t key_block[64];
    uint32_t next[4] = { ctr_nonce[0] + 8, ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    /* the key block and 7 text blocks (mod 2^32 counters, as in the kernels) */
    k->chacha20_keyblock_xor(k, key_block, out, in, 448, key, ctr_nonce);
    chapoly_aead_key_aad(k, st, key_block, aad, aadlen);
    chapoly_wipe(key_block, sizeof(key_block));
    k->aead_xor_hash_range(k, out + 448, in + 448, len - 448, 448, hash_len - 448, key, next,
                           st, enc);
}

void chapoly_generic_chacha20_multi_blocks(const chapoly_kernels *k, uint8_t *out,
                                           const uint32_t *states, size_t n)
{
    /* One kernel call per block over zeros: its keystream is the raw block. */
    for (size_t i = 0; i < n; i++) {
        memset(out + 64 * i, 0, 64);
        k->chacha20_xor(k, out + 64 * i, out + 64 * i, 64, states + 16 * i + 4,
                        states + 16 * i + 12);
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

/* ---- the AEAD format ---- */

void chapoly_aead_key_aad(const chapoly_kernels *k, poly1305_state *st,
                          uint8_t key_block[64], const uint8_t *aad, size_t aadlen)
{
    size_t whole = aadlen & ~(size_t)15, padded = (aadlen + 15) & ~(size_t)15;

    k->poly1305_init(k, st, key_block);
    st->buflen = 0;
    if (padded == 0)
        return;
    /* key_block[32..63]: block 0's keystream that nothing uses */
    if (padded <= 32) { /* all of it in one call */
        memcpy(key_block + 64 - padded, aad, aadlen);
        memset(key_block + 64 - padded + aadlen, 0, padded - aadlen);
        k->poly1305_blocks(k, st, key_block + 64 - padded, padded, 1);
        return;
    }
    k->poly1305_blocks(k, st, aad, whole, 1);
    if (aadlen > whole) {
        memcpy(key_block + 48, aad + whole, aadlen - whole);
        memset(key_block + 48 + (aadlen - whole), 0, padded - aadlen);
        k->poly1305_blocks(k, st, key_block + 48, 16, 1);
    }
}

size_t chapoly_aead_lengths_block(uint8_t *c, size_t n, uint64_t aad_len, uint64_t text_len)
{
    size_t padded = (n + 15) & ~(size_t)15;

    memset(c + n, 0, padded - n);
    store64_le(c + padded, aad_len);
    store64_le(c + padded + 8, text_len);
    return padded + POLY1305_BLOCK_BYTES;
}
