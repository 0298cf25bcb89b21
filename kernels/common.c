/*
 * Level-independent helpers: streaming Poly1305 on top of a table's block
 * function, the table's optional kernels or their composition, wiping and
 * constant-time comparison. The AEAD itself is in aead_core.c.
 */
#include "kernels_impl.h"

static void *(*volatile wipe_memset)(void *, int, size_t) = memset;

void chapoly_wipe(void *p, size_t n)
{
    if (n > 0)
        wipe_memset(p, 0, n);
}

int chapoly_ct_memneq(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t acc = 0;

    for (size_t i = 0; i < n; i++)
        acc |= x[i] ^ y[i];
    return (int)value_barrier_u64(acc) != 0;
}

void chapoly_load_key(uint32_t key[8], const uint8_t bytes[32])
{
    for (int i = 0; i < 8; i++)
        key[i] = load32_le(bytes + 4 * i);
}

void chapoly_poly1305_init(const chapoly_kernels *k, poly1305_state *st,
                           const uint8_t key[32])
{
    k->poly1305_init(st, key);
    st->buflen = 0;
}

void chapoly_poly1305_update(const chapoly_kernels *k, poly1305_state *st,
                             const uint8_t *in, size_t len)
{
    if (st->buflen > 0) {
        size_t take = POLY1305_BLOCK_BYTES - st->buflen;

        if (take > len)
            take = len;
        memcpy(st->buf + st->buflen, in, take);
        st->buflen += take;
        in += take;
        len -= take;
        if (st->buflen < POLY1305_BLOCK_BYTES)
            return;
        k->poly1305_blocks(st, st->buf, POLY1305_BLOCK_BYTES, 1);
        st->buflen = 0;
    }
    size_t whole = len & ~(size_t)(POLY1305_BLOCK_BYTES - 1);
    if (whole > 0)
        k->poly1305_blocks(st, in, whole, 1); /* the longest run, one call */
    if (len > whole) {
        memcpy(st->buf, in + whole, len - whole);
        st->buflen = len - whole;
    }
}

void chapoly_poly1305_final(const chapoly_kernels *k, poly1305_state *st,
                            uint8_t tag[16])
{
    if (st->buflen > 0) {
        st->buf[st->buflen] = 1;
        memset(st->buf + st->buflen + 1, 0,
               POLY1305_BLOCK_BYTES - st->buflen - 1);
        k->poly1305_blocks(st, st->buf, POLY1305_BLOCK_BYTES, 0);
    }
    k->poly1305_final(st, tag);
    chapoly_wipe(st->buf, sizeof(st->buf));
    st->buflen = 0;
}

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
