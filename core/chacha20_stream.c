/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ChaCha20 stream's general update (chacha20_stream.h): spare keystream
 * first, then everything left in one kernel call, split only at the 32-bit
 * counter wrap, where the kernels do not carry.
 */
#include "chacha20_stream.h"

void chacha20_stream_xor_spans(const chapoly_kernels *k, chacha20_stream *s, uint8_t *out,
                               const uint8_t *in, size_t len)
{
    /* keystream left of the block partial_ctr_nonce names: does this update end in it? */
    size_t spare = s->partial_used != 0 ? CHACHA20_BLOCK_BYTES - s->partial_used
                                        : s->keystream_len - s->keystream_pos;
    size_t total = len;

    if (len == 0) /* nothing moves, as in OpenSSL */
        return;
    if (s->partial_used != 0) {
        memset(s->keystream, 0, CHACHA20_BLOCK_BYTES);
        k->chacha20_xor(k, s->keystream, s->keystream, CHACHA20_BLOCK_BYTES, s->key,
                        s->partial_ctr_nonce);
        s->keystream_pos = s->partial_used;
        s->keystream_len = CHACHA20_BLOCK_BYTES;
        s->partial_used = 0;
    }
    if (s->keystream_pos < s->keystream_len) {
        size_t n = s->keystream_len - s->keystream_pos;

        if (n > len)
            n = len;
        chacha20_xor_keystream(out, in, s->keystream + s->keystream_pos, NULL, n, 0);
        s->keystream_pos += (unsigned)n;
        in += n;
        out += n;
        len -= n;
    }
    while (len > 0) {
        uint64_t need = (len + 63) / 64, to_wrap = ((uint64_t)1 << 32) - s->ctr_nonce[0];

        if (need <= to_wrap) {
            /* everything left, partial block included, in one kernel call */
            if (len & 63)
                chacha20_stream_set_partial(s, s->ctr_nonce[0] + (uint32_t)(need - 1),
                                            (unsigned)(len & 63));
            k->chacha20_xor(k, out, in, len, s->key, s->ctr_nonce);
            chacha20_stream_advance(s, need);
            break;
        }
        k->chacha20_xor(k, out, in, (size_t)to_wrap * 64, s->key, s->ctr_nonce);
        chacha20_stream_advance(s, to_wrap);
        in += to_wrap * 64;
        out += to_wrap * 64;
        len -= to_wrap * 64;
    }
    s->in_block = total <= spare || s->partial_used != 0;
}
