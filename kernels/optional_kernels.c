/*
 * The optional table entries (chacha20_xor_kb, aead_xor_hash): the level's
 * kernel if its table has one, else the same bytes composed from the
 * required entries (chacha20_xor, poly1305_blocks).
 */
#include "kernels_impl.h"

void chapoly_chacha20_xor_kb(const chapoly_kernels *k, uint8_t kb[64],
                             uint8_t *out, const uint8_t *in, size_t len,
                             const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    _Alignas(64) uint8_t buf[2048];
    uint32_t cn[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    if (k->chacha20_xor_kb != NULL) {
        k->chacha20_xor_kb(kb, out, in, len, key, ctr_nonce);
        return;
    }
    if (len <= sizeof(buf) - 64) { /* one call over [zero block || text] */
        memset(buf, 0, 64);
        if (len > 0)
            memcpy(buf + 64, in, len);
        k->chacha20_xor(buf, buf, 64 + len, key, cn);
        memcpy(kb, buf, 64);
        if (len > 0)
            memcpy(out, buf + 64, len);
        chapoly_wipe(buf, 64 + len);
        return;
    }
    memset(kb, 0, 64);
    k->chacha20_xor(kb, kb, 64, key, cn);
    cn[0]++; /* mod 2^32, as in the kernels */
    k->chacha20_xor(out, in, len, key, cn);
}

void chapoly_aead_xor_hash(const chapoly_kernels *k, uint8_t *out,
                           const uint8_t *in, size_t len, const uint32_t key[8],
                           const uint32_t ctr_nonce[4], poly1305_state *st,
                           const uint8_t *pre, int enc)
{
    if (k->aead_xor_hash != NULL) {
        k->aead_xor_hash(out, in, len, key, ctr_nonce, st, pre, enc);
    } else if (enc) {
        if (pre != NULL)
            k->poly1305_blocks(st, pre, 1024, 1);
        k->chacha20_xor(out, in, len, key, ctr_nonce);
        k->poly1305_blocks(st, out, len, 1);
    } else {
        k->poly1305_blocks(st, in, len, 1);
        k->chacha20_xor(out, in, len, key, ctr_nonce);
    }
}
