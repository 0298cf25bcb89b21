/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Streaming Poly1305 on top of a table's block function: input arrives in
 * any split, a partial block waits in poly1305_state.buf, and the final
 * partial block is padded here. The EVP MAC and the AEAD core use it.
 */
#include <string.h>
#include "poly1305_stream.h"

void chapoly_poly1305_init(const chapoly_kernels *k, poly1305_state *st,
                           const uint8_t key[32])
{
    k->poly1305_init(k, st, key);
    st->buflen = 0;
}

/*
 * n (1..15) bytes into an empty buf. On little-endian hosts as two 64-bit
 * words built from loads that stay inside in[0..n) (two overlapping ones
 * of the widest size that fits), stored whole: the final's padding reads
 * buf as words (pad_block), and a load that spans a narrower store still
 * in flight (memcpy's byte or dword stores of the tail, the update just
 * before a one-shot MAC's final) is not forwarded: it waits for the
 * store to reach the cache.
 */
static void tail_store(poly1305_state *st, const uint8_t *in, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w0 = 0, w1 = 0;

    if (n >= 8) {
        memcpy(&w0, in, 8);
        if (n > 8) {
            memcpy(&w1, in + n - 8, 8);
            w1 >>= 8 * (16 - n);
        }
    } else if (n >= 4) {
        uint32_t lo, hi;

        memcpy(&lo, in, 4);
        memcpy(&hi, in + n - 4, 4);
        w0 = lo | (uint64_t)hi << (8 * (n - 4));
    } else if (n >= 2) {
        uint16_t lo, hi;

        memcpy(&lo, in, 2);
        memcpy(&hi, in + n - 2, 2);
        w0 = lo | (uint64_t)hi << (8 * (n - 2));
    } else {
        w0 = in[0];
    }
    /* two word stores, not one vector store the loads would wait for */
    volatile uint64_t *b = (volatile uint64_t *)(void *)st->buf;

    b[0] = w0;
    b[1] = w1;
#else
    memcpy(st->buf, in, n);
#endif
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
        k->poly1305_blocks(k, st, st->buf, POLY1305_BLOCK_BYTES, 1);
        st->buflen = 0;
    }
    size_t whole = len & ~(size_t)(POLY1305_BLOCK_BYTES - 1);
    if (whole > 0)
        k->poly1305_blocks(k, st, in, whole, 1); /* the longest run, one call */
    if (len > whole) {
        tail_store(st, in + whole, len - whole);
        st->buflen = len - whole;
    }
}

/*
 * The padded last block: the buffered bytes, a 1, zeros. On little-endian
 * hosts it is made in two 64-bit words and written back whole: the block
 * function reads it as 64-bit words, and a load that spans a byte store
 * and a memset's stores is not forwarded (it waits for them to reach the
 * cache; measured: docs/performance.md).
 * Bytes past buflen may be stale (or, in a state on the stack, never
 * written); the masks drop them.
 */
static void pad_block(poly1305_state *st)
{
    size_t n = st->buflen; /* 1..15 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w[2];

    memcpy(w, st->buf, sizeof(w));
    if (n < 8) {
        w[0] = (w[0] & (((uint64_t)1 << (8 * n)) - 1)) | (uint64_t)1 << (8 * n);
        w[1] = 0;
    } else {
        w[1] = (w[1] & (((uint64_t)1 << (8 * (n - 8))) - 1)) | (uint64_t)1 << (8 * (n - 8));
    }
    memcpy(st->buf, w, sizeof(w));
#else
    st->buf[n] = 1;
    memset(st->buf + n + 1, 0, POLY1305_BLOCK_BYTES - n - 1);
#endif
}

void chapoly_poly1305_final(const chapoly_kernels *k, poly1305_state *st,
                            uint8_t tag[16])
{
    size_t last = 0;

    if (st->buflen > 0) {
        pad_block(st);
        last = POLY1305_BLOCK_BYTES;
    }
    k->poly1305_last(k, st, st->buf, last, 0, tag);
    chapoly_wipe_inline(st->buf, sizeof(st->buf)); /* the last message bytes; no call */
    st->buflen = 0;
}
