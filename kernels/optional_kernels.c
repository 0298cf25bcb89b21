/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The optional table entries (chacha20_keyblock_xor, aead_xor_hash): the
 * level's kernel if its table has one, else the same bytes composed from
 * the required entries (chacha20_xor, poly1305_blocks).
 */
#include "kernels_impl.h"

void chapoly_chacha20_keyblock_xor(const chapoly_kernels *k, uint8_t key_block[64],
                                   uint8_t *out, const uint8_t *in, size_t len,
                                   const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    _Alignas(64) uint8_t buf[2048];
    uint32_t next_ctr_nonce[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    if (k->chacha20_keyblock_xor != NULL) {
        k->chacha20_keyblock_xor(key_block, out, in, len, key, ctr_nonce);
        return;
    }
    if (len <= sizeof(buf) - 64) { /* one call over [zero block || text] */
        memset(buf, 0, 64);
        if (len > 0)
            memcpy(buf + 64, in, len);
        k->chacha20_xor(buf, buf, 64 + len, key, next_ctr_nonce);
        memcpy(key_block, buf, 64);
        if (len > 0)
            memcpy(out, buf + 64, len);
        chapoly_wipe(buf, 64 + len);
        return;
    }
    memset(key_block, 0, 64);
    k->chacha20_xor(key_block, key_block, 64, key, next_ctr_nonce);
    next_ctr_nonce[0]++; /* mod 2^32, as in the kernels */
    k->chacha20_xor(out, in, len, key, next_ctr_nonce);
}

void chapoly_aead_xor_hash(const chapoly_kernels *k, uint8_t *out,
                           const uint8_t *in, size_t len, const uint32_t key[8],
                           const uint32_t ctr_nonce[4], poly1305_state *st,
                           const uint8_t *prev_ciphertext, int enc)
{
    if (k->aead_xor_hash != NULL) {
        k->aead_xor_hash(out, in, len, key, ctr_nonce, st, prev_ciphertext, enc);
    } else if (enc) {
        if (prev_ciphertext != NULL)
            k->poly1305_blocks(st, prev_ciphertext, 1024, 1);
        k->chacha20_xor(out, in, len, key, ctr_nonce);
        k->poly1305_blocks(st, out, len, 1);
    } else {
        k->poly1305_blocks(st, in, len, 1);
        k->chacha20_xor(out, in, len, key, ctr_nonce);
    }
}

void chapoly_aead_xor_hash_range(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                 size_t len, size_t pre, size_t hash_len, const uint32_t key[8],
                                 const uint32_t ctr_nonce[4], poly1305_state *st, int enc)
{
    if (k->aead_xor_hash_range != NULL) {
        k->aead_xor_hash_range(out, in, len, pre, hash_len, key, ctr_nonce, st, enc);
    } else if (enc) {
        if (len > 0)
            k->chacha20_xor(out, in, len, key, ctr_nonce);
        if (pre + hash_len > 0)
            k->poly1305_blocks(st, out - pre, pre + hash_len, 1);
    } else {
        if (pre + hash_len > 0)
            k->poly1305_blocks(st, in - pre, pre + hash_len, 1);
        if (len > 0)
            k->chacha20_xor(out, in, len, key, ctr_nonce);
    }
}

void chapoly_aead_first_xor_hash(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                 size_t len, size_t hash_len, const uint8_t *aad,
                                 size_t aadlen, const uint32_t key[8],
                                 const uint32_t ctr_nonce[4], poly1305_state *st, int enc)
{
    uint8_t key_block[64];
    uint32_t next[4] = { ctr_nonce[0] + 8, ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };
    size_t whole = aadlen & ~(size_t)15;

    if (k->aead_first_xor_hash != NULL) {
        k->aead_first_xor_hash(out, in, len, hash_len, aad, aadlen, key, ctr_nonce, st, enc);
        return;
    }
    /* the key block and 7 text blocks (mod 2^32 counters, as in the kernels) */
    chapoly_chacha20_keyblock_xor(k, key_block, out, in, 448, key, ctr_nonce);
    k->poly1305_init(st, key_block);
    chapoly_wipe(key_block, sizeof(key_block));
    if (whole > 0)
        k->poly1305_blocks(st, aad, whole, 1);
    if (aadlen > whole) {
        uint8_t pad[16] = { 0 };

        memcpy(pad, aad + whole, aadlen - whole);
        k->poly1305_blocks(st, pad, 16, 1);
    }
    chapoly_aead_xor_hash_range(k, out + 448, in + 448, len - 448, 448, hash_len - 448, key,
                                next, st, enc);
}

void chapoly_chacha20_multi_blocks(const chapoly_kernels *k, uint8_t *out,
                                   const uint32_t *states, size_t n)
{
    if (k->chacha20_multi_blocks != NULL) {
        k->chacha20_multi_blocks(out, states, n);
        return;
    }
    /* One kernel call per block over zeros: its keystream is the raw block. */
    for (size_t i = 0; i < n; i++) {
        memset(out + 64 * i, 0, 64);
        k->chacha20_xor(out + 64 * i, out + 64 * i, 64, states + 16 * i + 4,
                        states + 16 * i + 12);
    }
}

void chapoly_poly1305_multi_blocks(const chapoly_kernels *k, poly1305_state *const st[],
                                   const uint8_t *const in[], const size_t len[], size_t n)
{
    if (k->poly1305_multi_blocks != NULL) {
        k->poly1305_multi_blocks(st, in, len, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (len[i] > 0)
            k->poly1305_blocks(st[i], in[i], len[i], 1);
}
