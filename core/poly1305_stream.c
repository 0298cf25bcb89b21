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
        k->poly1305_blocks(k, st, st->buf, POLY1305_BLOCK_BYTES, 0);
    }
    k->poly1305_final(k, st, tag);
    chapoly_wipe(st->buf, sizeof(st->buf));
    st->buflen = 0;
}
