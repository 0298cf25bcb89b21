/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 on zmm registers for the "avx512" and "avx512-noifma" levels
 * (the ymm and xmm shapes they share with "avx512vl" are in
 * chacha20_avx512vl.c).
 *
 * Shapes, chosen by what is left of len (public): whole 16-lane column
 * batches (one block per zmm lane, vprold rotates, unpack + shuffle_i32x4
 * transpose), two at a time in flight from "chacha-pairs" on; if 1..8
 * blocks follow the last whole batch, that batch and one xmm row (1 block)
 * or one or two zmm row sets run in the same round loop (the row sets are
 * latency-bound and fill the ports the column batch leaves idle); 9..15
 * blocks -> one partial column batch; 5..8 -> one 8-lane ymm column batch
 * (the avx512vl shape, chacha20_xor_cols8_avx512vl; with a key block, two
 * interleaved zmm row sets, 4 blocks each, one per 128-bit lane); 2..4 ->
 * one row set. One block (len <= 64): the path "chacha-one" (shapes): one
 * xmm row set (chacha20_xor_row1_avx512vl), or the scalar portable kernel
 * where a dependent vector op is slow (the CPU profile's choice).
 * Partial blocks use AVX-512BW byte-masked loads and stores: no byte loop,
 * no read or write past len, no keystream copy in memory.
 *
 * Counter: every lane/row offset is a 32-bit add to word 12, so the block
 * counter wraps modulo 2^32 inside a call, exactly like the portable kernel.
 * Nothing branches on or indexes by key, nonce or data. The compiler ends
 * every function that touches ymm/zmm with vzeroupper; zmm16-31 are zeroed
 * explicitly. No round state or key material is left in stack slots: key
 * broadcasts are re-read (OPAQUE_PTR) instead of being kept across the
 * rounds, which is what made the compiler spill them.
 */
#include "chacha20_zmm.h"

/*
 * One block goes to the scalar portable kernel, which scrubs its own
 * frames before it returns (chacha20_portable.c). A scrub here would come
 * too late and too high: below this level's large, realigned frame the
 * portable frames lie deeper than a scrub called after that frame is
 * popped (a tail call) reaches, so the round state survived it.
 */

/*
 * Whole 16-block column batches: len is a multiple of 1024, > 0. The rounds
 * are unrolled: as a loop, the compiler adds a register move per state
 * word at the loop's back edge.
 */
static __attribute__((noinline)) void
cols16_full_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
                const uint32_t key_words[8], const uint32_t ctr_nonce_words[4])
{
    uint32_t c0 = ctr_nonce_words[0];

    for (; len > 0; len -= 1024, in += 1024, out += 1024, c0 += 16) {
        const uint32_t *key = key_words, *ctr_nonce = ctr_nonce_words;

        OPAQUE_PTR(key);
        OPAQUE_PTR(ctr_nonce);
        COLS_INIT_ZMM(key, ADD16(BCAST16(c0), COLS_CTR_ZMM), ctr_nonce[1], ctr_nonce[2],
                      ctr_nonce[3]);
#pragma GCC unroll 10
        for (int i = 0; i < 10; i++)
            DROUND_COLS_ZMM();
        OPAQUE_PTR(key);
        OPAQUE_PTR(ctr_nonce);
        COLS_FEED_ZMM(key, ADD16(BCAST16(c0), COLS_CTR_ZMM), ctr_nonce[1], ctr_nonce[2],
                      ctr_nonce[3]);
        COLS_TRANSPOSE_ZMM();
        COLS_STORE_FULL_ZMM(key_block, out, in);
        key_block = NULL; /* the key block is block 0 of the first batch only */
    }
}

/*
 * Two whole column batches in flight (2048 bytes, counters c0 .. c0 + 31):
 * len is a multiple of 2048, > 0. Their quarter rounds alternate, so one
 * batch's dependency chains run in the other's latency: where a dependent
 * vector add/xor/rotate takes 2 cycles one batch leaves the vector ports
 * half idle; where one batch saturates them already the alternation costs
 * nothing. The 32 registers hold both states exactly;
 * batch y waits while batch x is finished and stored, and the few of its
 * words the compiler parks meanwhile are on the stack that
 * chacha20_xor_zmm scrubs.
 */
static __attribute__((noinline)) void
cols32_full_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
                const uint32_t key_words[8], const uint32_t ctr_nonce_words[4])
{
    uint32_t c0 = ctr_nonce_words[0];

    for (; len > 0; len -= 2048, in += 2048, out += 2048, c0 += 32) {
        const uint32_t *key = key_words, *ctr_nonce = ctr_nonce_words;

        OPAQUE_PTR(key);
        OPAQUE_PTR(ctr_nonce);
        COLS_INIT_ZMM_P(x, key, ADD16(BCAST16(c0), COLS_CTR_ZMM), ctr_nonce[1],
                        ctr_nonce[2], ctr_nonce[3]);
        COLS_INIT_ZMM_P(y, key, ADD16(BCAST16(c0 + 16), COLS_CTR_ZMM), ctr_nonce[1],
                        ctr_nonce[2], ctr_nonce[3]);
#pragma GCC unroll 10
        for (int i = 0; i < 10; i++)
            DROUND_COLS2_ZMM(x, y);
        OPAQUE_PTR(key);
        OPAQUE_PTR(ctr_nonce);
        COLS_FEED_ZMM_P(x, key, ADD16(BCAST16(c0), COLS_CTR_ZMM), ctr_nonce[1],
                        ctr_nonce[2], ctr_nonce[3]);
        COLS_TRANSPOSE_ZMM_P(x);
        COLS_STORE_FULL_ZMM_P(x, key_block, out, in);
        key_block = NULL;
        COLS_FEED_ZMM_P(y, key, ADD16(BCAST16(c0 + 16), COLS_CTR_ZMM), ctr_nonce[1],
                        ctr_nonce[2], ctr_nonce[3]);
        COLS_TRANSPOSE_ZMM_P(y);
        COLS_STORE_FULL_ZMM_P(y, NULL, out + 1024, in + 1024);
    }
}

/* One partial column batch: 512 < len < 1024 (9..15 blocks). */
static __attribute__((noinline)) void
cols16_part_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
                const uint32_t key_words[8], const uint32_t ctr_nonce[4])
{
    const uint32_t *key = key_words;
    const __m512i ctr = ADD16(BCAST16(ctr_nonce[0]),
                              _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                10, 11, 12, 13, 14, 15));

    OPAQUE_PTR(key);
    COLS_INIT_ZMM(key, ctr, ctr_nonce[1], ctr_nonce[2], ctr_nonce[3]);
#pragma GCC unroll 10
    for (int i = 0; i < 10; i++)
        DROUND_COLS_ZMM();
    OPAQUE_PTR(key);
    COLS_FEED_ZMM(key, ctr, ctr_nonce[1], ctr_nonce[2], ctr_nonce[3]);
    COLS_TRANSPOSE_ZMM();
    xor_block0_zmm(key_block, out, in, x0, len);
    xor_block_zmm(out + 1 * 64, in + 1 * 64, x1);
    xor_block_zmm(out + 2 * 64, in + 2 * 64, x2);
    xor_block_zmm(out + 3 * 64, in + 3 * 64, x3);
    xor_block_zmm(out + 4 * 64, in + 4 * 64, x4);
    xor_block_zmm(out + 5 * 64, in + 5 * 64, x5);
    xor_block_zmm(out + 6 * 64, in + 6 * 64, x6);
    xor_block_zmm(out + 7 * 64, in + 7 * 64, x7);
    xor_block_zmm_part(out, in, x8, 8, len);
    xor_block_zmm_part(out, in, x9, 9, len);
    xor_block_zmm_part(out, in, x10, 10, len);
    xor_block_zmm_part(out, in, x11, 11, len);
    xor_block_zmm_part(out, in, x12, 12, len);
    xor_block_zmm_part(out, in, x13, 13, len);
    xor_block_zmm_part(out, in, x14, 14, len);
    xor_block_zmm_part(out, in, x15, 15, len);
}

/*
 * One or two row sets (4 or 8 blocks, counters ctr_nonce[0] + 0..7), their
 * rounds interleaved so the two dependency chains share one latency window:
 * 0 < len <= 512; 'two' (constant per call site) selects the second set.
 */
CHAPOLY_INLINE void rows_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
                             const uint32_t key_words[8], const uint32_t ctr_nonce[4],
                             int two)
{
    const uint32_t *key = key_words;
    const __m512i nonce = ROW_BCAST_ZMM(ctr_nonce);
    const __m512i d0 = ADD16(nonce, ROWS_CTR_ZMM(0));
    const __m512i e0 = ADD16(nonce, ROWS_CTR_ZMM(4));
    __m512i a = rows_sigma_zmm(), b = ROW_BCAST_ZMM(key),
            c = ROW_BCAST_ZMM(key + 4), d = d0;
    __m512i p = a, q = b, r = c, s = e0;

    if (two) {
        for (int i = 0; i < 10; i++) {
            DROUND_ROWS_ZMM(a, b, c, d);
            DROUND_ROWS_ZMM(p, q, r, s);
        }
    } else {
        for (int i = 0; i < 10; i++)
            DROUND_ROWS_ZMM(a, b, c, d);
    }
    OPAQUE_PTR(key);
    ROWS_FINISH_ZMM(a, b, c, d, d0, key, key_block, out, in, len);
    if (two)
        ROWS_FINISH_ZMM(p, q, r, s, e0, key, NULL, out + 256, in + 256, len - 256);
}

/*
 * The last whole column batch and the 1..8 blocks after it, in one loop:
 * the row sets are latency-bound and leave the vector ports half idle, the
 * column batch is throughput-bound, so together they cost little more than
 * the column batch alone. 1024 < len <= 1536; 'two' = more than 4 blocks
 * follow the column batch.
 */
CHAPOLY_INLINE void cols16_rows_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in,
                                    size_t len, const uint32_t key_words[8],
                                    const uint32_t ctr_nonce_words[4], int two)
{
    const uint32_t *key = key_words, *ctr_nonce = ctr_nonce_words;

    /*
     * 24 state registers live through the rounds: the counter rows needed
     * by the feed-forward are recomputed afterwards (ctr_nonce re-read through
     * an opaque pointer) so nothing else competes for the 32 registers. The
     * rounds are fully unrolled: as a 10-trip loop the compiler parks part
     * of the loop-carried state in stack slots nobody wipes; unrolled, it
     * keeps all of it in registers (checked with objdump) and runs faster.
     */
    OPAQUE_PTR(key);
    OPAQUE_PTR(ctr_nonce);
    COLS_INIT_ZMM(key, ADD16(BCAST16(ctr_nonce[0]), COLS_CTR_ZMM), ctr_nonce[1], ctr_nonce[2],
                  ctr_nonce[3]);
    __m512i a = rows_sigma_zmm(), b = ROW_BCAST_ZMM(key),
            c = ROW_BCAST_ZMM(key + 4), d = ADD16(ROW_BCAST_ZMM(ctr_nonce), ROWS_CTR_ZMM(16));
    __m512i p = a, q = b, r = c, s = ADD16(ROW_BCAST_ZMM(ctr_nonce), ROWS_CTR_ZMM(20));

    if (two) {
#pragma GCC unroll 10
        for (int i = 0; i < 10; i++) {
            DROUND_ROWS_ZMM(a, b, c, d);
            DROUND_ROWS_ZMM(p, q, r, s);
            DROUND_COLS_ZMM();
        }
    } else {
#pragma GCC unroll 10
        for (int i = 0; i < 10; i++) {
            DROUND_ROWS_ZMM(a, b, c, d);
            DROUND_COLS_ZMM();
        }
    }
    OPAQUE_PTR(key);
    OPAQUE_PTR(ctr_nonce);
    COLS_FEED_ZMM(key, ADD16(BCAST16(ctr_nonce[0]), COLS_CTR_ZMM), ctr_nonce[1], ctr_nonce[2],
                  ctr_nonce[3]);
    COLS_TRANSPOSE_ZMM();
    COLS_STORE_FULL_ZMM(key_block, out, in);
    ROWS_FINISH_ZMM(a, b, c, d, ADD16(ROW_BCAST_ZMM(ctr_nonce), ROWS_CTR_ZMM(16)), key, NULL,
                    out + 1024, in + 1024, len - 1024);
    if (two)
        ROWS_FINISH_ZMM(p, q, r, s, ADD16(ROW_BCAST_ZMM(ctr_nonce), ROWS_CTR_ZMM(20)),
                        key, NULL, out + 1280, in + 1280, len - 1280);
}

/* One block as an xmm row set: a..d = rows 0..3 of the block. */
#define XOR4(a, b) _mm_xor_si128(a, b)
#define QR_XMM(a, b, c, d)                                                   \
    do {                                                                     \
        a = _mm_add_epi32(a, b); d = XOR4(d, a); d = _mm_rol_epi32(d, 16);   \
        c = _mm_add_epi32(c, d); b = XOR4(b, c); b = _mm_rol_epi32(b, 12);   \
        a = _mm_add_epi32(a, b); d = XOR4(d, a); d = _mm_rol_epi32(d, 8);    \
        c = _mm_add_epi32(c, d); b = XOR4(b, c); b = _mm_rol_epi32(b, 7);    \
    } while (0)
#define DROUND_ROW_XMM(a, b, c, d)                                           \
    do {                                                                     \
        QR_XMM(a, b, c, d);                                                  \
        b = _mm_shuffle_epi32(b, _MM_PERM_ADCB);                             \
        c = _mm_shuffle_epi32(c, _MM_PERM_BADC);                             \
        d = _mm_shuffle_epi32(d, _MM_PERM_CBAD);                             \
        QR_XMM(a, b, c, d);                                                  \
        b = _mm_shuffle_epi32(b, _MM_PERM_CBAD);                             \
        c = _mm_shuffle_epi32(c, _MM_PERM_BADC);                             \
        d = _mm_shuffle_epi32(d, _MM_PERM_ADCB);                             \
    } while (0)

/* 16 bytes of a block at off (public) out of len: whole, partial (byte mask) or none. */
CHAPOLY_INLINE void xor_row_xmm_part(uint8_t *out, const uint8_t *in, __m128i ks,
                                     size_t off, size_t len)
{
    if (len >= off + 16) {
        _mm_storeu_si128((__m128i *)(out + off),
                         XOR4(_mm_loadu_si128((const __m128i *)(in + off)), ks));
    } else if (len > off) {
        __mmask16 m = (__mmask16)_bzhi_u32(0xffffu, (unsigned)(len - off));
        __m128i v = _mm_maskz_loadu_epi8(m, in + off);
        _mm_mask_storeu_epi8(out + off, m, XOR4(v, ks));
    }
}

/*
 * The last whole column batch and the one block after it (1024 < len <=
 * 1088: the AEAD's key block and its first kilobyte of text): the block
 * runs as an xmm row set in the batch's round loop. Where the vector ports
 * are saturated a zmm row set of four blocks for one costs a quarter batch
 * more; the xmm one a sixteenth.
 */
static __attribute__((noinline)) void
cols16_row1_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
                const uint32_t key_words[8], const uint32_t ctr_nonce_words[4])
{
    const uint32_t *key = key_words, *ctr_nonce = ctr_nonce_words;

    OPAQUE_PTR(key);
    OPAQUE_PTR(ctr_nonce);
    COLS_INIT_ZMM(key, ADD16(BCAST16(ctr_nonce[0]), COLS_CTR_ZMM), ctr_nonce[1], ctr_nonce[2],
                  ctr_nonce[3]);
    __m128i a = _mm_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
    __m128i b = _mm_loadu_si128((const __m128i *)key);
    __m128i c = _mm_loadu_si128((const __m128i *)(key + 4));
    __m128i d = _mm_add_epi32(_mm_loadu_si128((const __m128i *)ctr_nonce),
                              _mm_setr_epi32(16, 0, 0, 0));

#pragma GCC unroll 10
    for (int i = 0; i < 10; i++) {
        DROUND_ROW_XMM(a, b, c, d);
        DROUND_COLS_ZMM();
    }
    OPAQUE_PTR(key);
    OPAQUE_PTR(ctr_nonce);
    COLS_FEED_ZMM(key, ADD16(BCAST16(ctr_nonce[0]), COLS_CTR_ZMM), ctr_nonce[1], ctr_nonce[2],
                  ctr_nonce[3]);
    COLS_TRANSPOSE_ZMM();
    COLS_STORE_FULL_ZMM(key_block, out, in);
    a = _mm_add_epi32(a, _mm_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3));
    b = _mm_add_epi32(b, _mm_loadu_si128((const __m128i *)key));
    c = _mm_add_epi32(c, _mm_loadu_si128((const __m128i *)(key + 4)));
    d = _mm_add_epi32(d, _mm_add_epi32(_mm_loadu_si128((const __m128i *)ctr_nonce),
                                       _mm_setr_epi32(16, 0, 0, 0)));
    xor_row_xmm_part(out + 1024, in + 1024, a, 0, len - 1024);
    xor_row_xmm_part(out + 1024, in + 1024, b, 16, len - 1024);
    xor_row_xmm_part(out + 1024, in + 1024, c, 32, len - 1024);
    xor_row_xmm_part(out + 1024, in + 1024, d, 48, len - 1024);
}

static __attribute__((noinline)) void
cols16_rows4_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
                 const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    cols16_rows_zmm(key_block, out, in, len, key, ctr_nonce, 0);
}

static __attribute__((noinline)) void
cols16_rows8_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
                 const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    cols16_rows_zmm(key_block, out, in, len, key, ctr_nonce, 1);
}

static __attribute__((noinline)) void
rows4_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
          const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    rows_zmm(key_block, out, in, len, key, ctr_nonce, 0);
}

static __attribute__((noinline)) void
rows8_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
          const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    rows_zmm(key_block, out, in, len, key, ctr_nonce, 1);
}

/*
 * cols32_full_zmm's frame (a few round-state words the compiler parks
 * while the second batch waits, ~600 bytes with the red zone, objdump) lies just below
 * chacha20_xor_zmm's frame, which is small: overwritten right after it.
 * The one-batch shapes keep everything in registers (objdump) and are
 * not scrubbed.
 * clang 14 parks a broadcast key word in the top slot of cols32_full_zmm's
 * frame, 16..80 bytes below this function's stack pointer: the reason the
 * scrub is inline asm with clang (kernels_impl.h).
 */
CHAPOLY_DEFINE_SCRUB(scrub_stack_zmm, 1024)

/*
 * Whole column batches, except that the last whole batch runs fused with
 * the row sets when 1..8 blocks follow it; then 9..15 blocks -> a partial
 * column batch, 5..8 -> one 8-lane ymm column batch (the avx512vl shape;
 * two zmm row sets when block 0 is a key block), 2..4 -> one row set,
 * 1 -> scalar. Alone, 5..8 blocks are latency-bound as row sets, and a
 * core that issues zmm ops as two ymm halves runs them faster as one ymm
 * column batch; that is what a streaming refill of 512 bytes for a last
 * partial block costs (a seal of 2049 bytes).
 * key_block != NULL: block 0 is a key block (see xor_block0_zmm); len > 64.
 */
static void chacha20_xor_zmm(const chapoly_kernels *kt, uint8_t *key_block, uint8_t *out,
                             const uint8_t *in, size_t len, const uint32_t key[8],
                             const uint32_t ctr_nonce[4])
{
    /* whole kilobytes from which two batches run in flight ("chacha-pairs", 0: never) */
    size_t pairs_min = kt->shapes.chacha_pairs_min;
    uint32_t next_ctr_nonce[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };
    size_t whole = len & ~(size_t)1023;

    /* Keep the last whole batch for the fused shape if 1..8 blocks follow. */
    if (whole > 0 && len - whole > 0 && len - whole <= 512)
        whole -= 1024;
    if (pairs_min != 0 && whole >= pairs_min && whole >= 2048) {
        size_t pairs = whole & ~(size_t)2047;

        cols32_full_zmm(key_block, out, in, pairs, key, next_ctr_nonce);
        scrub_stack_zmm(); /* the only shape that parks round state */
        key_block = NULL;
        next_ctr_nonce[0] += (uint32_t)(pairs / 64); /* mod 2^32, as the lanes */
        out += pairs;
        in += pairs;
        len -= pairs;
        whole -= pairs;
    }
    if (whole > 0) {
        cols16_full_zmm(key_block, out, in, whole, key, next_ctr_nonce);
        key_block = NULL;
        next_ctr_nonce[0] += (uint32_t)(whole / 64); /* mod 2^32, as the lanes */
        out += whole;
        in += whole;
        len -= whole;
    }
    if (len > 1280)
        cols16_rows8_zmm(key_block, out, in, len, key, next_ctr_nonce);
    else if (len > 1088)
        cols16_rows4_zmm(key_block, out, in, len, key, next_ctr_nonce);
    else if (len > 1024)
        cols16_row1_zmm(key_block, out, in, len, key, next_ctr_nonce);
    else if (len > 512)
        cols16_part_zmm(key_block, out, in, len, key, next_ctr_nonce);
    else if (len > 256 && key_block == NULL)
        chacha20_xor_cols8_avx512vl(out, in, len, key, next_ctr_nonce);
    else if (len > 256)
        rows8_zmm(key_block, out, in, len, key, next_ctr_nonce);
    else if (len > 0)
        rows4_zmm(key_block, out, in, len, key, next_ctr_nonce);
    zero_zmm16_31();
}

void chacha20_xor_avx512(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in, size_t len,
                         const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    if (len <= 64) { /* one block: see the header comment */
        if (kt->shapes.one_block_rows)
            chacha20_xor_row1_avx512vl(out, in, len, key, ctr_nonce);
        else
            chacha20_xor_portable(kt, out, in, len, key, ctr_nonce);
        return;
    }
    chacha20_xor_zmm(kt, NULL, out, in, len, key, ctr_nonce);
}

/*
 * The key block (counter ctr_nonce[0]) to key_block and the text XORed from
 * the next block on, shaped as one call of len + 64 bytes. The shapes address
 * block i at out + 64 i, so they get the text pointers moved back by a
 * block (as integers: nothing is accessed there, block 0 goes to key_block).
 */
void chacha20_keyblock_xor_avx512(const chapoly_kernels *kt, uint8_t key_block[64], uint8_t *out, const uint8_t *in,
                                  size_t len, const uint32_t key[8],
                                  const uint32_t ctr_nonce[4])
{
    (void)kt;
    if (len == 0) {
        uint32_t w[16];

        chacha20_block_portable(w, key, ctr_nonce);
        for (int i = 0; i < 16; i++)
            store32_le(key_block + 4 * i, w[i]);
        chapoly_wipe(w, sizeof(w));
        return;
    }
    if (len <= 64) { /* two blocks: one ymm row set (a zmm one holds four) */
        chacha20_keyblock_xor_avx512vl(kt, key_block, out, in, len, key, ctr_nonce);
        return;
    }
    chacha20_xor_zmm(kt, key_block, (uint8_t *)((uintptr_t)out - 64),
                     (const uint8_t *)((uintptr_t)in - 64), len + 64, key, ctr_nonce);
}
