/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A position in a ChaCha20 keystream, shared by the ChaCha20 cipher and the
 * AEAD core (aead_core.c): whole blocks go to the kernel in one call;
 * keystream computed ahead (a partial last block, or blocks produced in the
 * same batch as the AEAD's Poly1305 key) waits in keystream[] for the next
 * bytes.
 *
 * Counter: ctr_nonce[0] is the 32-bit block counter of the next block to
 * generate; when it wraps, ctr_nonce[1] is incremented (OpenSSL's ChaCha20
 * carry). The AEAD never reaches the wrap because of its 2^38 - 64 byte limit.
 *
 * Buffers: out == in, or no byte shared (chacha20_partially_overlapping
 * tells the third case, which callers reject before calling).
 */
#ifndef CHAPOLY_CHACHA20_STREAM_H
#define CHAPOLY_CHACHA20_STREAM_H

#include <string.h>
#include "kernels.h"

#define CHACHA20_STREAM_AHEAD 3 /* blocks keystream[] can hold */

typedef struct chacha20_stream {
    uint32_t key[8];
    uint32_t ctr_nonce[4];
    /* keystream not used yet: keystream[keystream_pos..keystream_len) */
    uint8_t keystream[64 * CHACHA20_STREAM_AHEAD];
    unsigned keystream_pos, keystream_len;
    /*
     * A partial last block is XORed inside the same kernel call as the whole
     * blocks; the rest of its keystream is recomputed only if another update
     * comes: partial_used (1..63) bytes of block partial_ctr_nonce[0]
     * are used; partial_used 0 = none pending. After the recompute
     * partial_ctr_nonce still names the block whose keystream is in
     * keystream[0..64): the ChaCha20 cipher's key-only init goes back to it
     * (provider/ciphers/chacha20.c), so nothing here may reuse it for
     * anything else while that keystream is held.
     */
    uint32_t partial_ctr_nonce[4];
    unsigned partial_used;
} chacha20_stream;

/*
 * Invariant: keystream[keystream_len..] holds no keystream. Restarting wipes
 * whatever the previous stream left in keystream[0..keystream_len) (nothing,
 * after an AEAD finish).
 */
static inline void chacha20_stream_start(chacha20_stream *s, uint32_t counter,
                                         const uint32_t nonce[3])
{
    if (s->keystream_len != 0)
        chapoly_wipe(s->keystream, s->keystream_len);
    s->ctr_nonce[0] = counter;
    s->ctr_nonce[1] = nonce[0];
    s->ctr_nonce[2] = nonce[1];
    s->ctr_nonce[3] = nonce[2];
    s->keystream_pos = s->keystream_len = 0;
    s->partial_used = 0;
}

static inline void chacha20_stream_advance(chacha20_stream *s, uint64_t blocks)
{
    uint64_t c = (uint64_t)s->ctr_nonce[0] + blocks;

    s->ctr_nonce[0] = (uint32_t)c;
    if (c >> 32)
        s->ctr_nonce[1]++;
}

/*
 * 'used' (1..63) bytes of block 'block' are spent; its rest is made only if
 * needed. The words are copied whole, as the IV init stored them: four 4-byte
 * loads from that one 16-byte store wait for it to reach the cache where
 * store forwarding does not split it (ChaCha20 240 B 0.96x -> 1.11x the
 * pre-contract build, AMD EPYC family 26 model 2, perf: 71 % of this
 * function's samples on those loads).
 */
static inline void chacha20_stream_set_partial(chacha20_stream *s, uint32_t block,
                                               unsigned used)
{
    memcpy(s->partial_ctr_nonce, s->ctr_nonce, sizeof(s->partial_ctr_nonce));
    s->partial_ctr_nonce[0] = block;
    s->partial_used = used;
}

/* 16 bytes in a general vector register: no intrinsics, no instruction set of its own. */
typedef uint8_t chacha20_v16 __attribute__((vector_size(16)));
#define CHACHA20_V16 16
/* An empty asm in the 0..15-byte tail loop: the compiler keeps it a byte loop (no alias checks). */
#define CHACHA20_NO_VECTORIZE_HINT() __asm__("")

/*
 * The one XOR of keystream made ahead: out = in ^ ks over n bytes, and with
 * ct != NULL the ciphertext (out sealing, in opening) also to ct, which the
 * AEAD core's MAC hashes later (aead_core.c). Each step reads in before it
 * writes out, so out == in is safe. Always inlined: it is on the path of
 * every small streamed update, and each caller's constant ct (and enc)
 * leaves only the stores that caller needs.
 */
CHAPOLY_INLINE void chacha20_xor_keystream(uint8_t *out, const uint8_t *in, const uint8_t *ks,
                                           uint8_t *ct, size_t n, int enc)
{
    size_t i = 0;

    for (; i + CHACHA20_V16 <= n; i += CHACHA20_V16) {
        chacha20_v16 x, y;

        memcpy(&x, in + i, CHACHA20_V16);
        memcpy(&y, ks + i, CHACHA20_V16);
        y ^= x;
        if (ct != NULL)
            memcpy(ct + i, enc ? &y : &x, CHACHA20_V16);
        memcpy(out + i, &y, CHACHA20_V16);
    }
    for (; i < n; i++) {
        uint8_t x = in[i];

        CHACHA20_NO_VECTORIZE_HINT();
        if (ct != NULL && !enc)
            ct[i] = x;
        x ^= ks[i];
        if (ct != NULL && enc)
            ct[i] = x;
        out[i] = x;
    }
}

static inline void chacha20_stream_xor(const chapoly_kernels *k, chacha20_stream *s,
                                       uint8_t *out, const uint8_t *in, size_t len)
{
    if (s->partial_used != 0) {
        memset(s->keystream, 0, 64);
        k->chacha20_xor(k, s->keystream, s->keystream, 64, s->key, s->partial_ctr_nonce);
        s->keystream_pos = s->partial_used;
        s->keystream_len = 64;
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
            return;
        }
        /* Split at the 32-bit counter wrap, where the kernel would not carry. */
        k->chacha20_xor(k, out, in, (size_t)to_wrap * 64, s->key, s->ctr_nonce);
        chacha20_stream_advance(s, to_wrap);
        in += to_wrap * 64;
        out += to_wrap * 64;
        len -= to_wrap * 64;
    }
}

/*
 * Output and input share some bytes but do not start at the same address
 * (in place, out == in, is fine). One subtraction and two compares: the
 * distance from in to out, taken modulo the address space, is below len
 * when out starts inside in, and above -len when in starts inside out.
 * Callers bound len first (at most PTRDIFF_MAX, so neither range wraps).
 */
static inline int chacha20_partially_overlapping(const void *out, const void *in, size_t len)
{
    uintptr_t d = (uintptr_t)out - (uintptr_t)in;

    return len != 0 && d != 0 && (d < len || d > (uintptr_t)0 - len);
}

#endif
