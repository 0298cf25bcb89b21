/*
 * Keystream position shared by the ChaCha20 cipher and the AEAD streaming
 * path: whole blocks go to the kernel in one call, a partial last block
 * leaves its unused keystream here for the next update.
 *
 * Counter: cn[0] is the 32-bit block counter; when it wraps, cn[1] is
 * incremented (OpenSSL's ChaCha20 carry). The AEAD never reaches the wrap
 * because of its 2^38 - 64 byte limit.
 */
#ifndef CHAPOLY_CHACHA_STREAM_H
#define CHAPOLY_CHACHA_STREAM_H

#include <string.h>
#include "kernels.h"

typedef struct chacha_stream {
    uint32_t key[8];
    uint32_t cn[4];
    uint8_t ks[64];   /* keystream of the block before cn[0] */
    unsigned ks_pos;  /* bytes of ks already used; 64 = none left */
} chacha_stream;

static inline void chacha_stream_start(chacha_stream *s, uint32_t counter,
                                       const uint32_t nonce[3])
{
    s->cn[0] = counter;
    s->cn[1] = nonce[0];
    s->cn[2] = nonce[1];
    s->cn[3] = nonce[2];
    s->ks_pos = 64;
}

static inline void chacha_stream_advance(chacha_stream *s, uint64_t blocks)
{
    uint64_t c = (uint64_t)s->cn[0] + blocks;

    s->cn[0] = (uint32_t)c;
    if (c >> 32)
        s->cn[1]++;
}

static inline void chacha_stream_xor(const chapoly_kernels *k, chacha_stream *s,
                                     uint8_t *out, const uint8_t *in, size_t len)
{
    if (s->ks_pos < 64) {
        size_t n = 64 - s->ks_pos;

        if (n > len)
            n = len;
        for (size_t i = 0; i < n; i++)
            out[i] = in[i] ^ s->ks[s->ks_pos + i];
        s->ks_pos += (unsigned)n;
        in += n;
        out += n;
        len -= n;
    }
    while (len >= 64) {
        /* Split at the 32-bit counter wrap, where the kernel would not carry. */
        uint64_t blocks = len / 64, to_wrap = ((uint64_t)1 << 32) - s->cn[0];

        if (blocks > to_wrap)
            blocks = to_wrap;
        k->chacha20_xor(out, in, (size_t)blocks * 64, s->key, s->cn);
        chacha_stream_advance(s, blocks);
        in += blocks * 64;
        out += blocks * 64;
        len -= blocks * 64;
    }
    if (len > 0) {
        memset(s->ks, 0, 64);
        k->chacha20_xor(s->ks, s->ks, 64, s->key, s->cn);
        chacha_stream_advance(s, 1);
        for (size_t i = 0; i < len; i++)
            out[i] = in[i] ^ s->ks[i];
        s->ks_pos = (unsigned)len;
    }
}

#endif
