/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 with AVX-512 F/VL/BW on ymm and xmm registers only: the
 * "avx512vl" level's chacha20_xor, and two shapes the zmm levels
 * (chacha20_avx512.c) share with it: the 8-lane ymm column batch for 5..8
 * blocks (chacha20_xor_cols8_avx512vl) and the one-block xmm row set
 * (chacha20_xor_row1_avx512vl).
 *
 * Shapes, chosen by what is left of len (public): 8-lane ymm column
 * batches (32 registers hold the state and temporaries, vprold rotates)
 * while >= 5 blocks are left; 3..4 -> two interleaved ymm row sets; 2 ->
 * one. No zmm register is touched, so Skylake-X keeps its clock. One block
 * (len <= 64): the path "chacha-one" (shapes): one xmm row set
 * (chacha20_xor_row1_avx512vl, below), or the scalar portable kernel where
 * a dependent vector op is slow (the CPU profile's choice).
 * Partial blocks use AVX-512BW byte-masked loads and stores: no byte loop,
 * no read or write past len, no keystream copy in memory.
 *
 * Counter: every lane/row offset is a 32-bit add to word 12, so the block
 * counter wraps modulo 2^32 inside a call, exactly like the portable kernel.
 * Nothing branches on or indexes by key, nonce or data. The compiler ends
 * every function that touches ymm with vzeroupper; zmm16-31 are zeroed
 * explicitly. Key broadcasts are re-read (OPAQUE_PTR) instead of being kept
 * across the rounds, so no key material is left in stack slots.
 */
#include "simd_zmm.h"
#include "chacha20_ymm.h"

#define XOR4(a, b) _mm_xor_si128(a, b)

/* ------------------------------------------------------------------ ymm -- */
/* Around the rounds, the same pieces as the "avx2" level (chacha20_ymm.h). */

#define ROL8(a, n) _mm256_rol_epi32(a, n)

#define QR_YMM(a, b, c, d)                                          \
    do {                                                            \
        a = ADD8(a, b); d = XOR8(d, a); d = ROL8(d, 16);            \
        c = ADD8(c, d); b = XOR8(b, c); b = ROL8(b, 12);            \
        a = ADD8(a, b); d = XOR8(d, a); d = ROL8(d, 8);             \
        c = ADD8(c, d); b = XOR8(b, c); b = ROL8(b, 7);             \
    } while (0)

/*
 * One 64-byte block held as two ymm halves (lo = bytes 0..31); writes
 * min(len - 64 * idx, 64) bytes of it, if any, with byte masks for the part.
 */
CHAPOLY_INLINE void xor_block_ymm_part(uint8_t *out, const uint8_t *in,
                                       __m256i lo, __m256i hi, size_t idx,
                                       size_t len)
{
    size_t off = 64 * idx;

    if (len >= off + 64) {
        _mm256_storeu_si256((__m256i *)(out + off),
            XOR8(_mm256_loadu_si256((const __m256i *)(in + off)), lo));
        _mm256_storeu_si256((__m256i *)(out + off + 32),
            XOR8(_mm256_loadu_si256((const __m256i *)(in + off + 32)), hi));
    } else if (len > off) {
        size_t n = len - off; /* 1..63 */
        if (n >= 32) {
            _mm256_storeu_si256((__m256i *)(out + off),
                XOR8(_mm256_loadu_si256((const __m256i *)(in + off)), lo));
            off += 32;
            n -= 32;
            lo = hi;
        }
        __mmask32 m = (__mmask32)_bzhi_u32(~0u, (unsigned)n);
        __m256i v = _mm256_maskz_loadu_epi8(m, in + off);
        _mm256_mask_storeu_epi8(out + off, m, XOR8(v, lo));
    }
}

/* 8 blocks, one per ymm lane; writes min(len, 512) bytes. */
CHAPOLY_INLINE void cols8_ymm(uint8_t *out, const uint8_t *in, size_t len,
                              const uint32_t key_words[8], __m256i ctr, uint32_t n1,
                              uint32_t n2, uint32_t n3, int full)
{
    const uint32_t *key = key_words;

    OPAQUE_PTR(key);
    COLS_INIT_YMM(key, ctr, n1, n2, n3);

    for (int i = 0; i < 10; i++) {
        QR_YMM(x0, x4, x8, x12);
        QR_YMM(x1, x5, x9, x13);
        QR_YMM(x2, x6, x10, x14);
        QR_YMM(x3, x7, x11, x15);
        QR_YMM(x0, x5, x10, x15);
        QR_YMM(x1, x6, x11, x12);
        QR_YMM(x2, x7, x8, x13);
        QR_YMM(x3, x4, x9, x14);
    }
    OPAQUE_PTR(key);
    COLS_FEED_YMM(key, ctr, n1, n2, n3);
    COLS_TRANSPOSE_YMM();
    COLS_STORE_YMM(xor_block_ymm_part, out, in, full ? 512 : len);
}

/* 256 < len <= 512 (5..8 blocks); also the zmm levels' shape for those. */
__attribute__((noinline)) void
chacha20_xor_cols8_avx512vl(uint8_t *out, const uint8_t *in, size_t len,
                            const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    __m256i ctr = ADD8(BCAST8(ctr_nonce[0]), COLS_CTR_YMM);

    cols8_ymm(out, in, len, key, ctr, ctr_nonce[1], ctr_nonce[2], ctr_nonce[3], 0);
}

/* One or two ymm row sets (2 blocks each, lane l = counter + l): len <= 256. */
static void rows_ymm(uint8_t *out, const uint8_t *in, size_t len,
                     const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    const __m256i a0 = rows_sigma_ymm();
    const __m256i b0 = ROW_BCAST_YMM(key);
    const __m256i c0 = ROW_BCAST_YMM(key + 4);
    const __m256i d0 = ADD8(ROW_BCAST_YMM(ctr_nonce), ROWS_CTR_YMM(0));
    __m256i a = a0, b = b0, c = c0, d = d0;

    if (len <= 128) {
        ROUNDS_ROWS_YMM(a, b, c, d);
        a = ADD8(a, a0);
        b = ADD8(b, b0);
        c = ADD8(c, c0);
        d = ADD8(d, d0);
        ROWS_STORE_YMM(xor_block_ymm_part, a, b, c, d, 0, out, in, len);
        return;
    }

    const __m256i e0 = ADD8(d0, _mm256_setr_epi32(2, 0, 0, 0, 2, 0, 0, 0));
    __m256i p = a0, q = b0, r = c0, s = e0;

    ROUNDS_ROWS2_YMM(a, b, c, d, p, q, r, s);
    a = ADD8(a, a0);
    b = ADD8(b, b0);
    c = ADD8(c, c0);
    d = ADD8(d, d0);
    p = ADD8(p, a0);
    q = ADD8(q, b0);
    r = ADD8(r, c0);
    s = ADD8(s, e0);
    ROWS_STORE_YMM(xor_block_ymm_part, a, b, c, d, 0, out, in, len);
    ROWS_STORE_YMM(xor_block_ymm_part, p, q, r, s, 2, out, in, len);
}

void chacha20_xor_avx512vl(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in, size_t len,
                           const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    if (len <= 64) { /* one block: see the header comment */
        if (kt->shapes.one_block_rows)
            chacha20_xor_row1_avx512vl(out, in, len, key, ctr_nonce);
        else
            chacha20_xor_portable(kt, out, in, len, key, ctr_nonce);
        return;
    }
    uint32_t next_ctr_nonce[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    if (len > 256) {
        const __m256i eight = _mm256_set1_epi32(8);
        __m256i ctr = ADD8(BCAST8(next_ctr_nonce[0]), COLS_CTR_YMM);

        while (len >= 512) {
            cols8_ymm(out, in, 512, key, ctr, next_ctr_nonce[1], next_ctr_nonce[2],
                      next_ctr_nonce[3], 1);
            ctr = ADD8(ctr, eight);
            next_ctr_nonce[0] += 8;
            in += 512;
            out += 512;
            len -= 512;
        }
        if (len > 256) {
            chacha20_xor_cols8_avx512vl(out, in, len, key, next_ctr_nonce);
            len = 0;
        }
    }
    if (len > 64)
        rows_ymm(out, in, len, key, next_ctr_nonce);
    else if (len > 0 && kt->shapes.one_block_rows) { /* one block after batches: "chacha-one" */
        _mm256_zeroupper(); /* gcc leaves the batches' ymm uppers dirty across this call */
        chacha20_xor_row1_avx512vl(out, in, len, key, next_ctr_nonce);
    } else if (len > 0) /* a ymm row set for it costs about two */
        chacha20_xor_portable(kt, out, in, len, key, next_ctr_nonce);
    zero_zmm16_31();
}

/*
 * The key block (raw, to key_block) and len bytes of text after it. Up to
 * one block of text: one ymm row set, lane 0 the key block and lane 1 the
 * text's keystream (a short TLS record or QUIC packet: two blocks in the
 * latency of one, no stack buffer, copy or wipe); longer texts: the generic
 * composition over this level's chacha20_xor.
 */
void chacha20_keyblock_xor_avx512vl(const chapoly_kernels *kt, uint8_t key_block[64],
                                    uint8_t *out, const uint8_t *in, size_t len,
                                    const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    if (len > 64) {
        chapoly_generic_keyblock_xor(kt, key_block, out, in, len, key, ctr_nonce);
        return;
    }
    const __m256i a0 = rows_sigma_ymm();
    const __m256i b0 = ROW_BCAST_YMM(key);
    const __m256i c0 = ROW_BCAST_YMM(key + 4);
    const __m256i d0 = ADD8(ROW_BCAST_YMM(ctr_nonce), ROWS_CTR_YMM(0));
    __m256i a = a0, b = b0, c = c0, d = d0;

    ROUNDS_ROWS_YMM(a, b, c, d);
    a = ADD8(a, a0);
    b = ADD8(b, b0);
    c = ADD8(c, c0);
    d = ADD8(d, d0);
    _mm256_storeu_si256((__m256i *)key_block, _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256((__m256i *)(key_block + 32), _mm256_permute2x128_si256(c, d, 0x20));
    xor_block_ymm_part(out, in, _mm256_permute2x128_si256(a, b, 0x31),
                       _mm256_permute2x128_si256(c, d, 0x31), 0, len);
    zero_zmm16_31();
}

/* ------------------------------------------------------- one block, xmm -- */
/*
 * chacha20_xor_row1_avx512vl: one block (0 <= len <= 64, the block at
 * counter ctr_nonce[0]) as one xmm row set: the lone block of every
 * AVX-512 level with "chacha-one=rows". Latency-bound: one dependency
 * chain of 20 rounds x 4 steps x (add, xor, rotate) = 240 vector ops.
 * The diagonal rounds rotate rows a, c and d instead of b, c and d (row b
 * is the one the next quarter round needs first, a, c and d are ready
 * earlier), so the three vpshufd per half round run beside the chain
 * instead of adding a step to it.
 * Rotates: by 12 and 7 with vprold, by 16 and 8 with vpshufb. Where the
 * two have the same latency this costs nothing; where vprold is the slower
 * one, the shuffles shorten the chain.
 * Partial block: each 16-byte row is XORed with a byte-masked load and
 * store (masks from len, no branch): nothing is read or written past len.
 * The state, its input copies and the keystream live in xmm0-15 only (no
 * stack frame, checked with objdump), so there is nothing to scrub; VEX/EVEX
 * xmm code leaves the upper halves clean, no vzeroupper is needed.
 */
#define QR_ROW1_XMM(a, b, c, d)                                              \
    do {                                                                     \
        a = _mm_add_epi32(a, b); d = XOR4(d, a);                             \
        d = _mm_shuffle_epi8(d, r16);                                        \
        c = _mm_add_epi32(c, d); b = XOR4(b, c); b = _mm_rol_epi32(b, 12);   \
        a = _mm_add_epi32(a, b); d = XOR4(d, a);                             \
        d = _mm_shuffle_epi8(d, r8);                                         \
        c = _mm_add_epi32(c, d); b = XOR4(b, c); b = _mm_rol_epi32(b, 7);    \
    } while (0)

/*
 * One double round, diagonals by rotating rows a (lane j <- a[j - 1]),
 * c (c[j + 1]) and d (d[j + 2]) against b, then back.
 */
#define DROUND_ROW1_XMM(a, b, c, d)                                          \
    do {                                                                     \
        QR_ROW1_XMM(a, b, c, d);                                             \
        DIAG_XMM(a, c, d);                                                   \
        QR_ROW1_XMM(a, b, c, d);                                             \
        UNDIAG_XMM(a, c, d);                                                 \
    } while (0)

/* Row r (public) of the keystream into out: bytes 16 r .. of the mask m. */
#define XOR_ROW1_MASKED(out, in, ks, m, r)                                   \
    do {                                                                     \
        __mmask16 mr_ = (__mmask16)((m) >> (16 * (r)));                      \
        __m128i v_ = _mm_maskz_loadu_epi8(mr_, (in) + 16 * (r));             \
        _mm_mask_storeu_epi8((out) + 16 * (r), mr_, XOR4(v_, ks));           \
    } while (0)

void chacha20_xor_row1_avx512vl(uint8_t *out, const uint8_t *in, size_t len,
                                const uint32_t key_words[8], const uint32_t ctr_nonce[4])
{
    const uint32_t *key = key_words;
    /* vpshufb patterns rotating each 32-bit word left by 16 and by 8 bits */
    const __m128i r16 = _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    const __m128i r8 = _mm_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
    const __m128i sigma = _mm_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
    const __m128i d0 = _mm_loadu_si128((const __m128i *)ctr_nonce);
    __m128i a = sigma;
    __m128i b = _mm_loadu_si128((const __m128i *)key);
    __m128i c = _mm_loadu_si128((const __m128i *)(key + 4));
    __m128i d = d0;
    /* bits 0..len-1 (len <= 64; bzhi keeps all 64 bits from 64 on) */
    const uint64_t m = _bzhi_u64(~(uint64_t)0, (unsigned)len);

#pragma GCC unroll 10
    for (int i = 0; i < 10; i++)
        DROUND_ROW1_XMM(a, b, c, d);
    OPAQUE_PTR(key); /* the key rows are re-read, not kept across the rounds */
    a = _mm_add_epi32(a, sigma);
    b = _mm_add_epi32(b, _mm_loadu_si128((const __m128i *)key));
    c = _mm_add_epi32(c, _mm_loadu_si128((const __m128i *)(key + 4)));
    d = _mm_add_epi32(d, d0);
    XOR_ROW1_MASKED(out, in, a, m, 0);
    XOR_ROW1_MASKED(out, in, b, m, 1);
    XOR_ROW1_MASKED(out, in, c, m, 2);
    XOR_ROW1_MASKED(out, in, d, m, 3);
}

/*
 * HChaCha20 (draft-irtf-cfrg-xchacha-03 2.2) as one xmm row set: the rounds
 * of chacha20_xor_row1_avx512vl, no feed-forward, rows a and d (state words
 * 0..3 and 12..15) are the subkey. Registers only, nothing to scrub.
 */
void hchacha20_row1_avx512vl(uint8_t subkey[32], const uint8_t key[32], const uint8_t nonce[16])
{
    const __m128i r16 = _mm_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    const __m128i r8 = _mm_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
    __m128i a = _mm_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
    __m128i b = _mm_loadu_si128((const __m128i *)key);
    __m128i c = _mm_loadu_si128((const __m128i *)(key + 16));
    __m128i d = _mm_loadu_si128((const __m128i *)nonce);

#pragma GCC unroll 10
    for (int i = 0; i < 10; i++)
        DROUND_ROW1_XMM(a, b, c, d);
    _mm_storeu_si128((__m128i *)subkey, a);
    _mm_storeu_si128((__m128i *)(subkey + 16), d);
}

/* The AVX-512 levels' hchacha20 entry: the form "chacha-one" picks for a lone block. */
void hchacha20_avx512vl(const chapoly_kernels *kt, uint8_t subkey[32], const uint8_t key[32],
                        const uint8_t nonce[16])
{
    if (kt->shapes.one_block_rows)
        hchacha20_row1_avx512vl(subkey, key, nonce);
    else
        hchacha20_portable(kt, subkey, key, nonce);
}
