/*
 * ChaCha20 for the "avx512" (zmm) and "avx512vl" (ymm) levels.
 *
 * Shapes, chosen by what is left of len (public):
 *   avx512  : whole 16-lane column batches (one block per zmm lane, vprold
 *             rotates, unpack + shuffle_i32x4 transpose); if 1..8 blocks
 *             follow the last whole batch, that batch and one or two row sets
 *             run in the same round loop (the row sets are latency-bound and
 *             fill the ports the column batch leaves idle); 9..15 blocks ->
 *             one partial column batch; 5..8 -> two interleaved zmm row sets
 *             (4 blocks each, one per 128-bit lane); 2..4 -> one row set.
 *   avx512vl: 8-lane ymm column batches (32 registers hold the state and
 *             temporaries, vprold rotates) while >= 5 blocks are left;
 *             3..4 -> two interleaved ymm row sets; 2 -> one. No zmm register
 *             is touched, so Skylake-X keeps its clock.
 *   one block (len <= 64), both levels: the scalar portable kernel. Vector
 *             row code is latency-bound and measured slower for a single
 *             block here (zmm rows ~117 ns, scalar ~86 ns per 64 bytes).
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

void chacha20_xor_avx512vl(uint8_t *out, const uint8_t *in, size_t len,
                           const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chacha20_xor_avx512(uint8_t *out, const uint8_t *in, size_t len,
                         const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chacha20_xor_kb_avx512(uint8_t kb[64], uint8_t *out, const uint8_t *in, size_t len,
                            const uint32_t key[8], const uint32_t ctr_nonce[4]);

/*
 * One block goes to the scalar portable kernel, which scrubs its own
 * frames before it returns (chacha20_portable.c). A scrub here would come
 * too late and too high: below this level's large, realigned frame the
 * portable frames lie deeper than a scrub called after that frame is
 * popped (a tail call) reaches, so the round state survived it.
 */

/* Whole 16-block column batches: len is a multiple of 1024, > 0. */
CHAPOLY_INLINE void cols16_full_zmm(uint8_t *kb, uint8_t *out, const uint8_t *in,
                                    size_t len, const uint32_t key_words[8],
                                    const uint32_t cn[4])
{
    const __m512i sixteen = BCAST16(16);
    __m512i ctr = ADD16(BCAST16(cn[0]), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6,
                                                          7, 8, 9, 10, 11, 12,
                                                          13, 14, 15));

    for (; len > 0; len -= 1024, in += 1024, out += 1024) {
        const uint32_t *key = key_words;

        OPAQUE_PTR(key);
        COLS_INIT_ZMM(key, ctr, cn[1], cn[2], cn[3]);
        for (int i = 0; i < 10; i++)
            DROUND_COLS_ZMM();
        OPAQUE_PTR(key);
        COLS_FEED_ZMM(key, ctr, cn[1], cn[2], cn[3]);
        COLS_TRANSPOSE_ZMM();
        COLS_STORE_FULL_ZMM(kb, out, in);
        kb = NULL; /* the key block is block 0 of the first batch only */
        ctr = ADD16(ctr, sixteen); /* mod 2^32 per lane */
    }
}

/* One partial column batch: 512 < len < 1024 (9..15 blocks). */
static __attribute__((noinline)) void
cols16_part_zmm(uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len,
                const uint32_t key_words[8], const uint32_t cn[4])
{
    const uint32_t *key = key_words;
    const __m512i ctr = ADD16(BCAST16(cn[0]),
                              _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                10, 11, 12, 13, 14, 15));

    OPAQUE_PTR(key);
    COLS_INIT_ZMM(key, ctr, cn[1], cn[2], cn[3]);
    for (int i = 0; i < 10; i++)
        DROUND_COLS_ZMM();
    OPAQUE_PTR(key);
    COLS_FEED_ZMM(key, ctr, cn[1], cn[2], cn[3]);
    COLS_TRANSPOSE_ZMM();
    xor_block0_zmm(kb, out, in, x0, len);
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
 * One or two row sets (4 or 8 blocks, counters cn[0] + 0..7), their rounds
 * interleaved so the two dependency chains share one latency window:
 * 0 < len <= 512; 'two' (constant per call site) selects the second set.
 */
CHAPOLY_INLINE void rows_zmm(uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len,
                             const uint32_t key_words[8], const uint32_t cn[4],
                             int two)
{
    const uint32_t *key = key_words;
    const __m512i nonce = ROW_BCAST_ZMM(cn);
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
    ROWS_FINISH_ZMM(a, b, c, d, d0, key, kb, out, in, len);
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
CHAPOLY_INLINE void cols16_rows_zmm(uint8_t *kb, uint8_t *out, const uint8_t *in,
                                    size_t len, const uint32_t key_words[8],
                                    const uint32_t cn_words[4], int two)
{
    const uint32_t *key = key_words, *cn = cn_words;

    /*
     * 24 state registers live through the rounds: the counter rows needed
     * by the feed-forward are recomputed afterwards (cn re-read through an
     * opaque pointer) so nothing else competes for the 32 registers. The
     * rounds are fully unrolled: as a 10-trip loop gcc 12 still parks part
     * of the loop-carried state in stack slots nobody wipes; unrolled, it
     * keeps all of it in registers (checked with objdump) and runs faster.
     */
    OPAQUE_PTR(key);
    OPAQUE_PTR(cn);
    COLS_INIT_ZMM(key, ADD16(BCAST16(cn[0]), COLS_CTR_ZMM), cn[1], cn[2], cn[3]);
    __m512i a = rows_sigma_zmm(), b = ROW_BCAST_ZMM(key),
            c = ROW_BCAST_ZMM(key + 4), d = ADD16(ROW_BCAST_ZMM(cn), ROWS_CTR_ZMM(16));
    __m512i p = a, q = b, r = c, s = ADD16(ROW_BCAST_ZMM(cn), ROWS_CTR_ZMM(20));

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
    OPAQUE_PTR(cn);
    COLS_FEED_ZMM(key, ADD16(BCAST16(cn[0]), COLS_CTR_ZMM), cn[1], cn[2], cn[3]);
    COLS_TRANSPOSE_ZMM();
    COLS_STORE_FULL_ZMM(kb, out, in);
    ROWS_FINISH_ZMM(a, b, c, d, ADD16(ROW_BCAST_ZMM(cn), ROWS_CTR_ZMM(16)), key, NULL,
                    out + 1024, in + 1024, len - 1024);
    if (two)
        ROWS_FINISH_ZMM(p, q, r, s, ADD16(ROW_BCAST_ZMM(cn), ROWS_CTR_ZMM(20)),
                        key, NULL, out + 1280, in + 1280, len - 1280);
}

static __attribute__((noinline)) void
cols16_rows4_zmm(uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len,
                 const uint32_t key[8], const uint32_t cn[4])
{
    cols16_rows_zmm(kb, out, in, len, key, cn, 0);
}

static __attribute__((noinline)) void
cols16_rows8_zmm(uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len,
                 const uint32_t key[8], const uint32_t cn[4])
{
    cols16_rows_zmm(kb, out, in, len, key, cn, 1);
}

static __attribute__((noinline)) void
rows4_zmm(uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
          const uint32_t cn[4])
{
    rows_zmm(kb, out, in, len, key, cn, 0);
}

static __attribute__((noinline)) void
rows8_zmm(uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
          const uint32_t cn[4])
{
    rows_zmm(kb, out, in, len, key, cn, 1);
}

/*
 * Whole column batches, except that the last whole batch runs fused with
 * the row sets when 1..8 blocks follow it; then 9..15 blocks -> a partial
 * column batch, 5..8 -> two row sets, 2..4 -> one, 1 -> scalar.
 * kb != NULL: block 0 is a key block (see xor_block0_zmm); len > 64.
 */
static void chacha20_xor_zmm(uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len,
                             const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    uint32_t cn[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };
    size_t whole = len & ~(size_t)1023;

    /* Keep the last whole batch for the fused shape if 1..8 blocks follow. */
    if (whole > 0 && len - whole > 0 && len - whole <= 512)
        whole -= 1024;
    if (whole > 0) {
        cols16_full_zmm(kb, out, in, whole, key, cn);
        kb = NULL;
        cn[0] += (uint32_t)(whole / 64); /* mod 2^32, as the lanes */
        out += whole;
        in += whole;
        len -= whole;
    }
    if (len > 1280)
        cols16_rows8_zmm(kb, out, in, len, key, cn);
    else if (len > 1024)
        cols16_rows4_zmm(kb, out, in, len, key, cn);
    else if (len > 512)
        cols16_part_zmm(kb, out, in, len, key, cn);
    else if (len > 256)
        rows8_zmm(kb, out, in, len, key, cn);
    else if (len > 0)
        rows4_zmm(kb, out, in, len, key, cn);
    zero_zmm16_31();
}

void chacha20_xor_avx512(uint8_t *out, const uint8_t *in, size_t len,
                         const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    if (len <= 64) { /* one block: see the header comment */
        chacha20_xor_portable(out, in, len, key, ctr_nonce);
        return;
    }
    chacha20_xor_zmm(NULL, out, in, len, key, ctr_nonce);
}

/*
 * The key block (counter ctr_nonce[0]) to kb and the text XORed from the
 * next block on, shaped as one call of len + 64 bytes. The shapes address
 * block i at out + 64 i, so they get the text pointers moved back by a
 * block (as integers: nothing is accessed there, block 0 goes to kb).
 */
void chacha20_xor_kb_avx512(uint8_t kb[64], uint8_t *out, const uint8_t *in, size_t len,
                            const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    if (len == 0) {
        uint32_t w[16];

        chacha20_block_portable(w, key, ctr_nonce);
        for (int i = 0; i < 16; i++)
            store32_le(kb + 4 * i, w[i]);
        chapoly_wipe(w, sizeof(w));
        return;
    }
    chacha20_xor_zmm(kb, (uint8_t *)((uintptr_t)out - 64),
                     (const uint8_t *)((uintptr_t)in - 64), len + 64, key, ctr_nonce);
}

/* ------------------------------------------------------------------ ymm -- */

#define ADD8(a, b) _mm256_add_epi32(a, b)
#define XOR8(a, b) _mm256_xor_si256(a, b)
#define ROL8(a, n) _mm256_rol_epi32(a, n)

#define QR_YMM(a, b, c, d)                                          \
    do {                                                            \
        a = ADD8(a, b); d = XOR8(d, a); d = ROL8(d, 16);            \
        c = ADD8(c, d); b = XOR8(b, c); b = ROL8(b, 12);            \
        a = ADD8(a, b); d = XOR8(d, a); d = ROL8(d, 8);             \
        c = ADD8(c, d); b = XOR8(b, c); b = ROL8(b, 7);             \
    } while (0)

#define DIAG_YMM(b, c, d)                                           \
    do {                                                            \
        b = _mm256_shuffle_epi32(b, _MM_SHUFFLE(0, 3, 2, 1));       \
        c = _mm256_shuffle_epi32(c, _MM_SHUFFLE(1, 0, 3, 2));       \
        d = _mm256_shuffle_epi32(d, _MM_SHUFFLE(2, 1, 0, 3));       \
    } while (0)
#define UNDIAG_YMM(b, c, d)                                         \
    do {                                                            \
        b = _mm256_shuffle_epi32(b, _MM_SHUFFLE(2, 1, 0, 3));       \
        c = _mm256_shuffle_epi32(c, _MM_SHUFFLE(1, 0, 3, 2));       \
        d = _mm256_shuffle_epi32(d, _MM_SHUFFLE(0, 3, 2, 1));       \
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
    __m256i x0 = _mm256_set1_epi32((int)SIGMA0);
    __m256i x1 = _mm256_set1_epi32((int)SIGMA1);
    __m256i x2 = _mm256_set1_epi32((int)SIGMA2);
    __m256i x3 = _mm256_set1_epi32((int)SIGMA3);
    __m256i x4 = _mm256_set1_epi32((int)key[0]);
    __m256i x5 = _mm256_set1_epi32((int)key[1]);
    __m256i x6 = _mm256_set1_epi32((int)key[2]);
    __m256i x7 = _mm256_set1_epi32((int)key[3]);
    __m256i x8 = _mm256_set1_epi32((int)key[4]);
    __m256i x9 = _mm256_set1_epi32((int)key[5]);
    __m256i x10 = _mm256_set1_epi32((int)key[6]);
    __m256i x11 = _mm256_set1_epi32((int)key[7]);
    __m256i x12 = ctr;
    __m256i x13 = _mm256_set1_epi32((int)n1);
    __m256i x14 = _mm256_set1_epi32((int)n2);
    __m256i x15 = _mm256_set1_epi32((int)n3);

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
    x0 = ADD8(x0, _mm256_set1_epi32((int)SIGMA0));
    x1 = ADD8(x1, _mm256_set1_epi32((int)SIGMA1));
    x2 = ADD8(x2, _mm256_set1_epi32((int)SIGMA2));
    x3 = ADD8(x3, _mm256_set1_epi32((int)SIGMA3));
    x4 = ADD8(x4, _mm256_set1_epi32((int)key[0]));
    x5 = ADD8(x5, _mm256_set1_epi32((int)key[1]));
    x6 = ADD8(x6, _mm256_set1_epi32((int)key[2]));
    x7 = ADD8(x7, _mm256_set1_epi32((int)key[3]));
    x8 = ADD8(x8, _mm256_set1_epi32((int)key[4]));
    x9 = ADD8(x9, _mm256_set1_epi32((int)key[5]));
    x10 = ADD8(x10, _mm256_set1_epi32((int)key[6]));
    x11 = ADD8(x11, _mm256_set1_epi32((int)key[7]));
    x12 = ADD8(x12, ctr);
    x13 = ADD8(x13, _mm256_set1_epi32((int)n1));
    x14 = ADD8(x14, _mm256_set1_epi32((int)n2));
    x15 = ADD8(x15, _mm256_set1_epi32((int)n3));

    /* Lane l of x(4g+k) becomes words 4g..4g+3 of block 4l+k. */
#define UNPACK4_YMM(a, b, c, d)                                     \
    do {                                                            \
        __m256i t0 = _mm256_unpacklo_epi32(a, b);                   \
        __m256i t1 = _mm256_unpackhi_epi32(a, b);                   \
        __m256i t2 = _mm256_unpacklo_epi32(c, d);                   \
        __m256i t3 = _mm256_unpackhi_epi32(c, d);                   \
        a = _mm256_unpacklo_epi64(t0, t2);                          \
        b = _mm256_unpackhi_epi64(t0, t2);                          \
        c = _mm256_unpacklo_epi64(t1, t3);                          \
        d = _mm256_unpackhi_epi64(t1, t3);                          \
    } while (0)
    UNPACK4_YMM(x0, x1, x2, x3);
    UNPACK4_YMM(x4, x5, x6, x7);
    UNPACK4_YMM(x8, x9, x10, x11);
    UNPACK4_YMM(x12, x13, x14, x15);
#undef UNPACK4_YMM
    /* Block k = lane 0 of (x(k), x(4+k) | x(8+k), x(12+k)); block 4+k = lane 1. */
#define BLOCKS_YMM(k, a, b, c, d)                                             \
    do {                                                                      \
        __m256i l0 = _mm256_permute2x128_si256(a, b, 0x20);                   \
        __m256i h0 = _mm256_permute2x128_si256(c, d, 0x20);                   \
        __m256i l1 = _mm256_permute2x128_si256(a, b, 0x31);                   \
        __m256i h1 = _mm256_permute2x128_si256(c, d, 0x31);                   \
        xor_block_ymm_part(out, in, l0, h0, k, full ? 512 : len);             \
        xor_block_ymm_part(out, in, l1, h1, k + 4, full ? 512 : len);         \
    } while (0)
    BLOCKS_YMM(0, x0, x4, x8, x12);
    BLOCKS_YMM(1, x1, x5, x9, x13);
    BLOCKS_YMM(2, x2, x6, x10, x14);
    BLOCKS_YMM(3, x3, x7, x11, x15);
#undef BLOCKS_YMM
}

static __attribute__((noinline)) void
cols8_ymm_tail(uint8_t *out, const uint8_t *in, size_t len,
               const uint32_t key[8], const uint32_t cn[4])
{
    __m256i ctr = ADD8(_mm256_set1_epi32((int)cn[0]),
                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));

    cols8_ymm(out, in, len, key, ctr, cn[1], cn[2], cn[3], 0);
}

CHAPOLY_INLINE void rows_init_ymm(__m256i *a, __m256i *b, __m256i *c,
                                  __m256i *d, const uint32_t key[8],
                                  const uint32_t cn[4])
{
    *a = _mm256_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3,
                           (int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
    *b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)key));
    *c = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(key + 4)));
    *d = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)cn));
}

/* Row set -> blocks 0 and 1 as (lo, hi) halves. */
#define ROWS_TO_BLOCKS_YMM(a, b, c, d, lo0, hi0, lo1, hi1)          \
    do {                                                            \
        lo0 = _mm256_permute2x128_si256(a, b, 0x20);                \
        hi0 = _mm256_permute2x128_si256(c, d, 0x20);                \
        lo1 = _mm256_permute2x128_si256(a, b, 0x31);                \
        hi1 = _mm256_permute2x128_si256(c, d, 0x31);                \
    } while (0)

/* One or two ymm row sets (2 blocks each, lane l = counter + l): len <= 256. */
static void rows_ymm(uint8_t *out, const uint8_t *in, size_t len,
                     const uint32_t key[8], const uint32_t cn[4])
{
    __m256i a0, b0, c0, d0, e0, l0, h0, l1, h1;

    rows_init_ymm(&a0, &b0, &c0, &d0, key, cn);
    d0 = ADD8(d0, _mm256_setr_epi32(0, 0, 0, 0, 1, 0, 0, 0));
    __m256i a = a0, b = b0, c = c0, d = d0;

    if (len <= 128) {
        for (int i = 0; i < 10; i++) {
            QR_YMM(a, b, c, d);
            DIAG_YMM(b, c, d);
            QR_YMM(a, b, c, d);
            UNDIAG_YMM(b, c, d);
        }
        a = ADD8(a, a0);
        b = ADD8(b, b0);
        c = ADD8(c, c0);
        d = ADD8(d, d0);
        ROWS_TO_BLOCKS_YMM(a, b, c, d, l0, h0, l1, h1);
        xor_block_ymm_part(out, in, l0, h0, 0, len);
        xor_block_ymm_part(out, in, l1, h1, 1, len);
        return;
    }

    e0 = ADD8(d0, _mm256_setr_epi32(2, 0, 0, 0, 2, 0, 0, 0));
    __m256i p = a0, q = b0, r = c0, s = e0;

    for (int i = 0; i < 10; i++) {
        QR_YMM(a, b, c, d);
        QR_YMM(p, q, r, s);
        DIAG_YMM(b, c, d);
        DIAG_YMM(q, r, s);
        QR_YMM(a, b, c, d);
        QR_YMM(p, q, r, s);
        UNDIAG_YMM(b, c, d);
        UNDIAG_YMM(q, r, s);
    }
    a = ADD8(a, a0);
    b = ADD8(b, b0);
    c = ADD8(c, c0);
    d = ADD8(d, d0);
    p = ADD8(p, a0);
    q = ADD8(q, b0);
    r = ADD8(r, c0);
    s = ADD8(s, e0);
    ROWS_TO_BLOCKS_YMM(a, b, c, d, l0, h0, l1, h1);
    xor_block_ymm_part(out, in, l0, h0, 0, len);
    xor_block_ymm_part(out, in, l1, h1, 1, len);
    ROWS_TO_BLOCKS_YMM(p, q, r, s, l0, h0, l1, h1);
    xor_block_ymm_part(out, in, l0, h0, 2, len);
    xor_block_ymm_part(out, in, l1, h1, 3, len);
}

void chacha20_xor_avx512vl(uint8_t *out, const uint8_t *in, size_t len,
                           const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    if (len <= 64) { /* one block: see the header comment */
        chacha20_xor_portable(out, in, len, key, ctr_nonce);
        return;
    }
    uint32_t cn[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    if (len > 256) {
        const __m256i eight = _mm256_set1_epi32(8);
        __m256i ctr = ADD8(_mm256_set1_epi32((int)cn[0]),
                           _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));

        while (len >= 512) {
            cols8_ymm(out, in, 512, key, ctr, cn[1], cn[2], cn[3], 1);
            ctr = ADD8(ctr, eight);
            cn[0] += 8;
            in += 512;
            out += 512;
            len -= 512;
        }
        if (len > 256) {
            cols8_ymm_tail(out, in, len, key, cn);
            len = 0;
        }
    }
    if (len > 0)
        rows_ymm(out, in, len, key, cn);
    zero_zmm16_31();
}
