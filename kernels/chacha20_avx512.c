/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 for the "avx512" (zmm) and "avx512vl" (ymm) levels.
 *
 * Shapes, chosen by what is left of len (public):
 *   avx512  : whole 16-lane column batches (one block per zmm lane, vprold
 *             rotates, unpack + shuffle_i32x4 transpose), two at a time in
 *             flight from 2 KiB on; if 1..8 blocks follow the last whole
 *             batch, that batch and one xmm row (1 block) or one or two zmm
 *             row sets run in the same round loop (the row sets are
 *             latency-bound and fill the ports the column batch leaves
 *             idle); 9..15 blocks ->
 *             one partial column batch; 5..8 -> one 8-lane ymm column batch
 *             (the avx512vl shape; with a key block, two interleaved zmm row
 *             sets, 4 blocks each, one per 128-bit lane); 2..4 -> one row set.
 *   avx512vl: 8-lane ymm column batches (32 registers hold the state and
 *             temporaries, vprold rotates) while >= 5 blocks are left;
 *             3..4 -> two interleaved ymm row sets; 2 -> one. No zmm register
 *             is touched, so Skylake-X keeps its clock.
 *   one block (len <= 64), both levels: the path "chacha-one" (shapes):
 *             one xmm row set (chacha20_xor_row1_avx512, below), or the
 *             scalar portable kernel where a dependent vector op is slow
 *             (Zen 5: 2 cycles; cpu_profiles.c).
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
#include "chacha20_ymm.h"

/*
 * One block goes to the scalar portable kernel, which scrubs its own
 * frames before it returns (chacha20_portable.c). A scrub here would come
 * too late and too high: below this level's large, realigned frame the
 * portable frames lie deeper than a scrub called after that frame is
 * popped (a tail call) reaches, so the round state survived it.
 */

/*
 * Whole 16-block column batches: len is a multiple of 1024, > 0. The rounds
 * are unrolled: as a loop, gcc 12 adds a register move per state word at
 * the loop's back edge (16 per double round, ~7 % of the batch here).
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
 * vector add/xor/rotate costs 2 cycles (Zen 5) one batch leaves the vector
 * ports half idle; where they are saturated already (Zen 4, Intel) the
 * alternation costs nothing. The 32 registers hold both states exactly;
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
     * rounds are fully unrolled: as a 10-trip loop gcc 12 still parks part
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
 * are saturated (Zen 4) a zmm row set of four blocks for one costs a
 * quarter batch more; the xmm one a sixteenth.
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
 * cols32_full_zmm's frame (a few round-state words gcc 12 parks while the
 * second batch waits, ~600 bytes with the red zone) lies just below
 * chacha20_xor_zmm's frame, which is small: overwritten right after it.
 * The one-batch shapes keep everything in registers (objdump) and are
 * not scrubbed.
 */
CHAPOLY_DEFINE_SCRUB(scrub_stack_zmm, 1024)

static void cols8_ymm_tail(uint8_t *out, const uint8_t *in, size_t len,
                           const uint32_t key[8], const uint32_t ctr_nonce[4]);

/*
 * Whole column batches, except that the last whole batch runs fused with
 * the row sets when 1..8 blocks follow it; then 9..15 blocks -> a partial
 * column batch, 5..8 -> one 8-lane ymm column batch (the avx512vl shape;
 * two zmm row sets when block 0 is a key block), 2..4 -> one row set,
 * 1 -> scalar. Alone, 5..8 blocks are latency-bound as row sets: on the
 * Zen 4 class machine here (zmm ops issue as two ymm halves) the ymm
 * column batch measured ~20 % faster (bench_kernels -o chacha20, 320..512
 * bytes: ~125 ns against ~150 ns), which is what a streaming refill of
 * 512 bytes for a last partial block costs (seal of 2049 bytes).
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
        cols8_ymm_tail(out, in, len, key, next_ctr_nonce);
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
            chacha20_xor_row1_avx512(out, in, len, key, ctr_nonce);
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
    chacha20_xor_zmm(kt, key_block, (uint8_t *)((uintptr_t)out - 64),
                     (const uint8_t *)((uintptr_t)in - 64), len + 64, key, ctr_nonce);
}

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

/* 256 < len <= 512 (5..8 blocks); also the avx512 level's shape for those. */
static __attribute__((noinline)) void
cols8_ymm_tail(uint8_t *out, const uint8_t *in, size_t len,
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
            chacha20_xor_row1_avx512(out, in, len, key, ctr_nonce);
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
            cols8_ymm_tail(out, in, len, key, next_ctr_nonce);
            len = 0;
        }
    }
    if (len > 0)
        rows_ymm(out, in, len, key, next_ctr_nonce);
    zero_zmm16_31();
}

/* ------------------------------------------------------- one block, xmm -- */
/*
 * chacha20_xor_row1_avx512: one block (0 <= len <= 64, the block at counter
 * ctr_nonce[0]) as one xmm row set: the lone block of both levels with
 * "chacha-one=rows". Latency-bound: one dependency chain of 20 rounds x 4 steps x
 * (add, xor, rotate) = 240 vector ops. The diagonal rounds rotate rows a,
 * c and d instead of b, c and d (row b is the one the next quarter round
 * needs first, a, c and d are ready earlier), so the three vpshufd per half
 * round run beside the chain instead of adding a step to it.
 * Rotates: by 12 and 7 with vprold, by 16 and 8 with vpshufb. Where the
 * two have the same latency (Intel: 1 cycle; Zen 5: 2, where vprold
 * throughout measured the same 112 ns a block) this costs nothing; LLVM's
 * Zen 4 model gives vprold 2 cycles and vpshufb 1 (llvm-mca-16
 * -mcpu=znver4: 307 cycles a call against 346 with vprold throughout; the
 * Intel models: 265-267 either way).
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
        a = _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 1, 0, 3));                   \
        c = _mm_shuffle_epi32(c, _MM_SHUFFLE(0, 3, 2, 1));                   \
        d = _mm_shuffle_epi32(d, _MM_SHUFFLE(1, 0, 3, 2));                   \
        QR_ROW1_XMM(a, b, c, d);                                             \
        a = _mm_shuffle_epi32(a, _MM_SHUFFLE(0, 3, 2, 1));                   \
        c = _mm_shuffle_epi32(c, _MM_SHUFFLE(2, 1, 0, 3));                   \
        d = _mm_shuffle_epi32(d, _MM_SHUFFLE(1, 0, 3, 2));                   \
    } while (0)

/* Row r (public) of the keystream into out: bytes 16 r .. of the mask m. */
#define XOR_ROW1_MASKED(out, in, ks, m, r)                                   \
    do {                                                                     \
        __mmask16 mr_ = (__mmask16)((m) >> (16 * (r)));                      \
        __m128i v_ = _mm_maskz_loadu_epi8(mr_, (in) + 16 * (r));             \
        _mm_mask_storeu_epi8((out) + 16 * (r), mr_, XOR4(v_, ks));           \
    } while (0)

void chacha20_xor_row1_avx512(uint8_t *out, const uint8_t *in, size_t len,
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
 * of chacha20_xor_row1_avx512, no feed-forward, rows a and d (state words
 * 0..3 and 12..15) are the subkey. The "chacha-one=rows" form of the avx512
 * levels' hchacha20 entry. Registers only, nothing to scrub.
 */
void hchacha20_row1_avx512(uint8_t subkey[32], const uint8_t key[32], const uint8_t nonce[16])
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

void hchacha20_avx512(const chapoly_kernels *kt, uint8_t subkey[32], const uint8_t key[32],
                      const uint8_t nonce[16])
{
    if (kt->shapes.one_block_rows)
        hchacha20_row1_avx512(subkey, key, nonce);
    else
        hchacha20_portable(kt, subkey, key, nonce);
}
