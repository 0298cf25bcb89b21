/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Steps of one AEAD message (aead_core.h) for a caller that shares the
 * kernel calls of many messages: the batched AEAD (aead_batch.c) makes the
 * ChaCha20 blocks of many messages in one call and hashes their MAC rows
 * in another, and drives each message's state through these steps, so the
 * state and its rules stay the core's. The text loop and the tag are
 * aead_core.c's.
 */
#include "aead_core.h"

#define BLOCK_MASK ((size_t)CHACHA20_BLOCK_BYTES - 1)

size_t chapoly_msg_aad_end(chapoly_aead_msg *a, const uint8_t *kb, uint8_t *row)
{
    size_t n = 0;

    if (a->phase == AEAD_PHASE_KEY) {
        chapoly_aead_key_aad(a->k, &a->poly, kb, NULL, 0); /* keyed, nothing hashed yet */
        if (row == NULL) {
            chapoly_poly1305_update(a->k, &a->poly, a->aad_buf, a->aad_buffered);
            a->aad_buffered = 0;
            a->phase = AEAD_PHASE_AAD;
            return 0;
        }
        n = a->aad_buffered;
        chapoly_copy_bytes(row, a->aad_buf, n);
        a->aad_buffered = 0;
    } else if (a->phase == AEAD_PHASE_AAD) { /* streamed AAD: its partial last block */
        n = a->poly.buflen;
        chapoly_copy_bytes(row, a->poly.buf, n);
        a->poly.buflen = 0;
    }
    a->phase = AEAD_PHASE_TEXT;
    return n > 0 ? chapoly_aead_pad16(row, n) : 0;
}

void chapoly_msg_text_ks(chapoly_aead_msg *a, uint8_t *out, const uint8_t *in, size_t len,
                         const uint8_t *ks, int enc, uint8_t *mac)
{
    size_t whole = len & ~BLOCK_MASK;

    if (enc && mac != NULL)
        chacha20_xor_keystream(out, in, ks, mac, whole, 1);
    else
        chacha20_xor_keystream(out, in, ks, NULL, whole, 0);
    /* the last partial block: its ciphertext straight to ct[] (out is not read back) */
    chacha20_xor_keystream(out + whole, in + whole, ks + whole, chapoly_msg_ct(a), len - whole,
                           enc);
    a->batch_start += whole;
    a->batch_used = a->ks_len = (unsigned)(len - whole);
    a->text_len += len;
}

/* The collected ciphertext's last partial block and the lengths block in ct[]: the bytes to hash. */
size_t chapoly_msg_lengths(chapoly_aead_msg *a)
{
    uint8_t *ct = chapoly_msg_ct(a);

    if (a->poly.buflen > 0) { /* AAD after the key block and no text: batch_used is 0 */
        memcpy(ct, a->poly.buf, a->poly.buflen);
        a->batch_used = (unsigned)a->poly.buflen;
        a->poly.buflen = 0;
    }
    return chapoly_aead_lengths_block(ct, a->batch_used, a->aad_len, a->text_len);
}
