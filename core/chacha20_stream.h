/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A position in a ChaCha20 keystream: the ChaCha20 cipher's stream
 * (provider/ciphers/chacha20.c), with OpenSSL's counter, partial-block and
 * re-initialisation rules. Whole blocks go to the kernel in one call; a
 * partial last block is XORed in that call too, and the rest of its
 * keystream is made only if another update comes, then waits in
 * keystream[]. The AEAD core (aead_core.c) keeps its own keystream and
 * shares only the XOR helper and the overlap check below.
 *
 * Counter: ctr_nonce[0] is the 32-bit block counter of the next block to
 * generate; when it wraps, ctr_nonce[1] is incremented (OpenSSL's ChaCha20
 * carry).
 *
 * Buffers: out == in, or no byte shared (chacha20_partially_overlapping
 * tells the third case, which callers reject before calling).
 */
#ifndef CHAPOLY_CHACHA20_STREAM_H
#define CHAPOLY_CHACHA20_STREAM_H

#include <string.h>
#include "kernels.h"

typedef struct chacha20_stream {
    uint32_t key[8];
    uint32_t ctr_nonce[4];
    /* keystream not used yet: keystream[keystream_pos..keystream_len) */
    uint8_t keystream[CHACHA20_BLOCK_BYTES];
    unsigned keystream_pos, keystream_len;
    /*
     * partial_used (1..63) bytes of block partial_ctr_nonce[0] are used and
     * the rest of its keystream is not made yet; 0 = none pending. After it
     * is made, partial_ctr_nonce still names the block whose keystream is
     * in keystream[0..64): chacha20_stream_rewind goes back to it, so
     * nothing may reuse it for anything else while that keystream is held.
     */
    uint32_t partial_ctr_nonce[4];
    unsigned partial_used;
    /*
     * Nonzero as OpenSSL's partial_len: the last update ended inside block
     * partial_ctr_nonce (or at its end, when that block's keystream had been
     * made by an earlier update), where chacha20_stream_rewind goes back to.
     */
    unsigned in_block;
} chacha20_stream;

/* Invariant: keystream[keystream_len..] holds no keystream. Spare keystream is wiped. */
static inline void chacha20_stream_drop(chacha20_stream *s)
{
    if (s->keystream_len != 0)
        chapoly_wipe(s->keystream, s->keystream_len);
    s->keystream_pos = s->keystream_len = 0;
    s->partial_used = 0;
}

/*
 * OpenSSL's 16-byte ChaCha20 IV: bytes 0..3 the block counter, 4..15 the
 * nonce. The stream restarts there. Inline: QUIC header protection sets an
 * IV per packet.
 */
CHAPOLY_INLINE void chacha20_stream_set_iv(chacha20_stream *s, const uint8_t iv[16])
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(s->ctr_nonce, iv, sizeof(s->ctr_nonce)); /* the words are the bytes */
#else
    s->ctr_nonce[0] = load32_le(iv);
    s->ctr_nonce[1] = load32_le(iv + 4);
    s->ctr_nonce[2] = load32_le(iv + 8);
    s->ctr_nonce[3] = load32_le(iv + 12);
#endif
    chacha20_stream_drop(s);
    s->in_block = 0;
}

/*
 * A key-only init, as OpenSSL's: the block counter stays, the partial block
 * goes. With 'back' (OpenSSL up to 3.5) the stream goes on at the start of
 * the block the last update ended in (in_block), else (3.6 on) where it is.
 */
static inline void chacha20_stream_rewind(chacha20_stream *s, int back)
{
    if (back && s->in_block)
        memcpy(s->ctr_nonce, s->partial_ctr_nonce, sizeof(s->ctr_nonce));
    chacha20_stream_drop(s);
    s->in_block = 0;
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
 * needed. The words are copied whole, as the IV init stored them: on some
 * cores four 4-byte loads from that one 16-byte store are not forwarded
 * from it and wait for it to reach the cache.
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

/* Every update but the short one below: spare keystream, several blocks, the counter wrap. */
void chacha20_stream_xor_spans(const chapoly_kernels *k, chacha20_stream *s, uint8_t *out,
                               const uint8_t *in, size_t len);

/*
 * The next len bytes of keystream XORed into in. At most one block with no
 * spare keystream (QUIC header protection, a short record) goes straight to
 * the kernel, inline: the block is partial_ctr_nonce, which the kernel reads
 * (one 16-byte copy, see chacha20_stream_set_partial), the counter moves
 * past it (carrying at the wrap), and a partial block's rest is made only
 * if another update comes.
 */
CHAPOLY_INLINE void chacha20_stream_xor(const chapoly_kernels *k, chacha20_stream *s,
                                        uint8_t *out, const uint8_t *in, size_t len)
{
    if (len - 1 < CHACHA20_BLOCK_BYTES && s->partial_used == 0 &&
        s->keystream_pos == s->keystream_len) {
        memcpy(s->partial_ctr_nonce, s->ctr_nonce, sizeof(s->ctr_nonce));
        s->partial_used = (unsigned)len & (CHACHA20_BLOCK_BYTES - 1);
        s->in_block = s->partial_used; /* nonzero: the update ended inside the block */
        chacha20_stream_advance(s, 1);
        k->chacha20_xor(k, out, in, len, s->key, s->partial_ctr_nonce);
        return;
    }
    chacha20_stream_xor_spans(k, s, out, in, len);
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
