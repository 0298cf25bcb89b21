/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20 for the "avx2" level (AVX2 only: no opmasks, no vprold, 16 ymm
 * registers).
 *
 * Shapes, chosen by what is left of len (public):
 *   from "chacha-pairs" (0: never; the CPU profile's choice) whole
 *                  kilobytes as pairs of 8-lane column batches in flight
 *                  (cols_pair_full_asm_ymm, chacha20_ymm.h), then:
 *   >= 5 blocks -> 8-lane column batches (one block per ymm lane; a partial
 *                  last batch of 5..7 blocks writes only the blocks it
 *                  owns, a last 1..4 blocks go to row sets);
 *   3..4 blocks -> two interleaved ymm row sets (2 blocks each, one per
 *                  128-bit lane); 1..2 blocks -> one ymm row set (a row
 *                  set is latency-bound: a whole column batch for one
 *                  last block costs more than it);
 *   len <= 64   -> the path "chacha-one": an xmm row set (row1, below) or
 *                  the scalar portable kernel, the CPU profile's choice.
 * Rotates: by 16 and 8 with vpshufb (one shuffle uop), by 12 and 7 with
 * shift + shift + or. A partial last block is XORed straight from the
 * keystream registers in 32/16/8/4/2/1-byte steps (at most six steps, no
 * byte loop, no keystream copy in memory, no access past len).
 *
 * 16 ymm registers cannot hold the 16-word state plus rotate temporaries.
 * The column batches run their rounds and feed-forward in inline assembly
 * (cols_batch_asm_ymm, chacha20_ymm.h) that parks two of x8..x11 in
 * memory at a time, as OpenSSL's ChaCha20_8x does: compiled from
 * intrinsics, the compiler spills many more values per double round (and
 * the batch ran slower than OpenSSL's AVX2 code). The input state is
 * broadcast once per call into a stack array; it, the parked words, the
 * batch output before the transpose and the rows path's spills are as
 * secret as the key (the rounds are invertible), so the vector work runs
 * in out-of-line functions and the caller overwrites their stack area
 * afterwards (scrub_stack_*).
 * The transpose and stores are shared with the "avx512vl" level
 * (chacha20_ymm.h).
 *
 * Counter: every lane/row offset is a 32-bit add to word 12, so the block
 * counter wraps modulo 2^32 inside a call, as in the portable kernel. The
 * compiler ends every function that touches ymm with vzeroupper.
 */
#include "chacha20_ymm.h"
#include "poly1305_scalar.h"

/* vpshufb patterns rotating each 32-bit word left by 16 and by 8 bits. */
static const __m256i rot_tbl[2] = {
    { 0x0504070601000302LL, 0x0d0c0f0e09080b0aLL, 0x0504070601000302LL, 0x0d0c0f0e09080b0aLL },
    { 0x0605040702010003LL, 0x0e0d0c0f0a09080bLL, 0x0605040702010003LL, 0x0e0d0c0f0a09080bLL },
};
#define ROT16_BYTES 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
#define ROT8_BYTES 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14

#define ROLS8(a, n) _mm256_or_si256(_mm256_slli_epi32(a, n), _mm256_srli_epi32(a, 32 - (n)))

#define QR_YMM(a, b, c, d)                                                  \
    do {                                                                    \
        a = ADD8(a, b); d = XOR8(d, a); d = _mm256_shuffle_epi8(d, r16);    \
        c = ADD8(c, d); b = XOR8(b, c); b = ROLS8(b, 12);                   \
        a = ADD8(a, b); d = XOR8(d, a); d = _mm256_shuffle_epi8(d, r8);     \
        c = ADD8(c, d); b = XOR8(b, c); b = ROLS8(b, 7);                    \
    } while (0)

/* Block 'idx' of a batch covering len bytes: whole, partial or absent. */
CHAPOLY_INLINE void xor_block_part(uint8_t *out, const uint8_t *in, __m256i lo,
                                   __m256i hi, size_t idx, size_t len)
{
    size_t off = 64 * idx;

    if (len >= off + 64) {
        xor32(out + off, in + off, lo);
        xor32(out + off + 32, in + off + 32, hi);
    } else if (len > off) {
        xor_tail(out + off, in + off, lo, hi, len - off);
    }
}

/* Block 0 raw to key_block (a key block), the others as xor_block_part. */
#define KEY_BLOCK_PART(out, in, lo, hi, idx, len)                           \
    do {                                                                    \
        if ((idx) == 0) {                                                   \
            _mm256_storeu_si256((__m256i *)key_block, lo);                  \
            _mm256_storeu_si256((__m256i *)(key_block + 32), hi);           \
        } else {                                                            \
            xor_block_part(out, in, lo, hi, idx, len);                      \
        }                                                                   \
    } while (0)

/*
 * 8 blocks, one per lane, from the column input state init[16] (counter
 * lanes in init[12]); writes min(len, 512) bytes. key_block != NULL
 * (a constant at each call site): block 0 goes there raw, and out and in
 * point 64 bytes before the text (never accessed at that offset).
 */
CHAPOLY_INLINE void cols8(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
                          const __m256i init[16], int full)
{
    _Alignas(32) __m256i w[16];

    cols_batch_asm_ymm(init, w, rot_tbl); /* rounds + feed-forward, no spills */
    __m256i x0 = w[0], x1 = w[1], x2 = w[2], x3 = w[3];
    __m256i x4 = w[4], x5 = w[5], x6 = w[6], x7 = w[7];
    __m256i x8 = w[8], x9 = w[9], x10 = w[10], x11 = w[11];
    __m256i x12 = w[12], x13 = w[13], x14 = w[14], x15 = w[15];

    COLS_TRANSPOSE_YMM();
    if (key_block != NULL)
        COLS_STORE_YMM(KEY_BLOCK_PART, out, in, full ? 512 : len);
    else
        COLS_STORE_YMM(xor_block_part, out, in, full ? 512 : len);
}

/*
 * One or two ymm row sets (2 blocks each, lane l = counter + l): len <= 256.
 * Out of line because the compiler still spills a row or two of the round
 * state here; the caller scrubs this frame afterwards.
 */
static __attribute__((noinline)) void
rows(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key_words[8],
     const uint32_t ctr_nonce[4])
{
    const uint32_t *key = key_words;

    const __m256i r16 = _mm256_setr_epi8(ROT16_BYTES, ROT16_BYTES);
    const __m256i r8 = _mm256_setr_epi8(ROT8_BYTES, ROT8_BYTES);
    const __m256i a0 = rows_sigma_ymm();
    const __m256i b0 = ROW_BCAST_YMM(key);
    const __m256i c0 = ROW_BCAST_YMM(key + 4);
    const __m256i d0 = ADD8(ROW_BCAST_YMM(ctr_nonce), ROWS_CTR_YMM(0));
    __m256i a = a0, b = b0, c = c0, d = d0;

    if (len <= 128) {
        ROUNDS_ROWS_YMM(a, b, c, d);
        OPAQUE_PTR(key); /* key rows re-read, not kept live (spilled) */
        a = ADD8(a, a0);
        b = ADD8(b, ROW_BCAST_YMM(key));
        c = ADD8(c, ROW_BCAST_YMM(key + 4));
        d = ADD8(d, d0);
        ROWS_STORE_YMM(xor_block_part, a, b, c, d, 0, out, in, len);
        return;
    }

    const __m256i e0 = ADD8(d0, _mm256_setr_epi32(2, 0, 0, 0, 2, 0, 0, 0));
    __m256i p = a0, q = b0, r = c0, s = e0;

    ROUNDS_ROWS2_YMM(a, b, c, d, p, q, r, s);
    OPAQUE_PTR(key);
    const __m256i b1 = ROW_BCAST_YMM(key);
    const __m256i c1 = ROW_BCAST_YMM(key + 4);
    a = ADD8(a, a0);
    b = ADD8(b, b1);
    c = ADD8(c, c1);
    d = ADD8(d, d0);
    p = ADD8(p, a0);
    q = ADD8(q, b1);
    r = ADD8(r, c1);
    s = ADD8(s, e0);
    ROWS_STORE_YMM(xor_block_part, a, b, c, d, 0, out, in, len);
    ROWS_STORE_YMM(xor_block_part, p, q, r, s, 2, out, in, len);
}

/*
 * Five or more blocks: whole 8-lane batches, then one partial batch. With
 * only 16 ymm registers the compiler must spill part of the round state to
 * this function's frame; chacha20_xor_avx2 scrubs that frame afterwards.
 */
/* Zero n vectors with stores the optimiser keeps. */
CHAPOLY_INLINE void wipe_ymm(__m256i *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        _mm256_store_si256(p + i, _mm256_setzero_si256());
    __asm__ volatile("" : : "r"(p) : "memory");
}

/*
 * Whole pairs of 8-lane batches ("chacha-pairs"): len a multiple of 1024,
 * from the column input state init[16]. Out of line, with its own frame:
 * it wipes the two state arrays it uses (the asm keeps everything else in
 * registers), so the caller's frame and scrub stay as they were.
 */
static __attribute__((noinline)) void
cols_pairs(const __m256i init[16], uint8_t *out, const uint8_t *in, size_t len)
{
    _Alignas(32) __m256i state_in[32]; /* [16..31]: the second batch, counters 8 on */
    _Alignas(32) __m256i st[32];

    for (int i = 0; i < 16; i++)
        state_in[i] = state_in[16 + i] = init[i];
    state_in[28] = ADD8(init[12], BCAST8(8));
    for (; len > 0; len -= 1024, in += 1024, out += 1024) {
        cols_pair_full_asm_ymm(state_in, st, rot_tbl, out, in);
        state_in[12] = ADD8(state_in[12], BCAST8(16)); /* mod 2^32 per lane */
        state_in[28] = ADD8(state_in[28], BCAST8(16));
    }
    wipe_ymm(state_in, 32);
    wipe_ymm(st, 32);
}

/*
 * Returns 0 when only whole batches ran: their asm keeps everything but
 * init and park in registers, and both are wiped here, so the caller needs
 * no scrub (test_secrets checks the dead stack after whole batches too);
 * 1 when a key block, a partial batch or row sets ran (scrub the frame).
 */
CHAPOLY_INLINE int xor_columns_body(const chapoly_kernels *kt, uint8_t *key_block, uint8_t *out,
                                    const uint8_t *in, size_t len, const uint32_t key[8],
                                    const uint32_t ctr_nonce[4])
{
    /* the input state, broadcast once per call; park: two state words */
    _Alignas(32) __m256i init[16];
    _Alignas(32) __m256i park[4];

    init[0] = BCAST8(SIGMA0);
    init[1] = BCAST8(SIGMA1);
    init[2] = BCAST8(SIGMA2);
    init[3] = BCAST8(SIGMA3);
    for (int i = 0; i < 8; i++)
        init[4 + i] = BCAST8(key[i]);
    init[12] = ADD8(BCAST8(ctr_nonce[0]), COLS_CTR_YMM);
    init[13] = BCAST8(ctr_nonce[1]);
    init[14] = BCAST8(ctr_nonce[2]);
    init[15] = BCAST8(ctr_nonce[3]);
    if (key_block != NULL) { /* the key block and up to 7 blocks of text */
        uint8_t *o = (uint8_t *)((uintptr_t)out - 64);
        const uint8_t *i = (const uint8_t *)((uintptr_t)in - 64);

        len += 64;
        if (len >= 512)
            cols8(key_block, o, i, 512, init, 1);
        else
            cols8(key_block, o, i, len, init, 0);
        init[12] = ADD8(init[12], BCAST8(8));
        if (len <= 512)
            return 1;
        in += 448;
        out += 448;
        len -= 512;
    }
    if (kt->shapes.chacha_pairs_min != 0 && len >= kt->shapes.chacha_pairs_min && len >= 1024) {
        size_t done = len & ~(size_t)1023;

        cols_pairs(init, out, in, done);
        init[12] = ADD8(init[12], BCAST8((uint32_t)(done / 64))); /* mod 2^32 per lane */
        in += done;
        out += done;
        len -= done;
    }
    while (len >= 512) {
        cols_batch_full_asm_ymm(init, park, rot_tbl, out, in);
        init[12] = ADD8(init[12], BCAST8(8)); /* mod 2^32 per lane */
        in += 512;
        out += 512;
        len -= 512;
    }
    if (len == 0 && key_block == NULL) {
        wipe_ymm(init, 16);
        wipe_ymm(park, 4);
        return 0;
    }
    if (len > 256) {
        cols8(NULL, out, in, len, init, 0);
    } else if (len > 0) { /* 1..4 blocks: row sets, not a whole batch */
        uint32_t cn[4] = { (uint32_t)_mm256_extract_epi32(init[12], 0), ctr_nonce[1],
                           ctr_nonce[2], ctr_nonce[3] };

        if (len > 64) /* one block: "chacha-one" (a ymm row set for it costs about two) */
            rows(out, in, len, key, cn);
        else if (kt->shapes.one_block_rows) {
            _mm256_zeroupper(); /* gcc may leave the batches' uppers dirty across this call */
            chacha20_xor_row1_avx2(out, in, len, key, cn);
        } else
            chacha20_xor_portable(kt, out, in, len, key, cn);
    }
    return 1;
}

static __attribute__((noinline)) int
xor_columns(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in, size_t len,
            const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    return xor_columns_body(kt, NULL, out, in, len, key, ctr_nonce);
}

/* The key block, then len > 192 bytes of text: the shapes of len + 64. */
static __attribute__((noinline)) void
keyblock_columns(const chapoly_kernels *kt, uint8_t *key_block, uint8_t *out, const uint8_t *in,
                 size_t len, const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    (void)xor_columns_body(kt, key_block, out, in, len, key, ctr_nonce);
}

/*
 * Overwrite the stack just below the caller's frame, where the frame of the
 * kernel it called last was: that frame holds spilled round state, as secret
 * as the key since the rounds are invertible. The frames are about 0x360
 * bytes (xor_columns) and 0xa0 (rows) optimised (objdump, GCC and clang);
 * the sizes below leave a wide margin at little cost.
 */
CHAPOLY_DEFINE_SCRUB(scrub_stack_2k, 2048)
CHAPOLY_DEFINE_SCRUB(scrub_stack_512, 512)
CHAPOLY_DEFINE_SCRUB(scrub_stack_384, 384)

void chacha20_xor_avx2(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in, size_t len,
                       const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    if (len > 256) {
        if (xor_columns(kt, out, in, len, key, ctr_nonce)) /* public: len % 512 != 0 */
            scrub_stack_2k();
    } else if (len <= 64 && kt->shapes.one_block_rows) { /* "chacha-one=rows" */
        chacha20_xor_row1_avx2(out, in, len, key, ctr_nonce);
    } else if (len <= 64) { /* "chacha-one=scalar" */
        chacha20_xor_portable(kt, out, in, len, key, ctr_nonce);
    } else {
        rows(out, in, len, key, ctr_nonce);
        scrub_stack_512();
    }
}

/*
 * The key block and at most one block of text (len <= 64) as one ymm row
 * set: lane 0 is the key block, stored raw; lane 1 is XORed into out. The
 * short TLS record or QUIC packet: two blocks in the latency of one, with
 * no stack buffer to fill, copy and wipe. The row set, its input copies
 * and the two vpshufb patterns fit in ymm0-15 (no stack frame, checked
 * with objdump): nothing to scrub.
 */
static __attribute__((noinline)) void
keyblock_row2(uint8_t key_block[64], uint8_t *out, const uint8_t *in, size_t len,
              const uint32_t key_words[8], const uint32_t ctr_nonce[4])
{
    const uint32_t *key = key_words;
    const __m256i r16 = _mm256_setr_epi8(ROT16_BYTES, ROT16_BYTES);
    const __m256i r8 = _mm256_setr_epi8(ROT8_BYTES, ROT8_BYTES);
    const __m256i a0 = rows_sigma_ymm();
    const __m256i d0 = ADD8(ROW_BCAST_YMM(ctr_nonce), ROWS_CTR_YMM(0));
    __m256i a = a0, b = ROW_BCAST_YMM(key), c = ROW_BCAST_YMM(key + 4), d = d0;

    ROUNDS_ROWS_YMM(a, b, c, d);
    OPAQUE_PTR(key); /* key rows re-read, not kept live */
    a = ADD8(a, a0);
    b = ADD8(b, ROW_BCAST_YMM(key));
    c = ADD8(c, ROW_BCAST_YMM(key + 4));
    d = ADD8(d, d0);
    _mm256_storeu_si256((__m256i *)key_block, _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256((__m256i *)(key_block + 32), _mm256_permute2x128_si256(c, d, 0x20));
    __m256i lo = _mm256_permute2x128_si256(a, b, 0x31);
    __m256i hi = _mm256_permute2x128_si256(c, d, 0x31);
    if (len == 64) {
        xor32(out, in, lo);
        xor32(out + 32, in + 32, hi);
    } else {
        xor_tail(out, in, lo, hi, len); /* 0..63 bytes, nothing past len */
    }
}

/*
 * Row sets sized to a short message (the "short" shapes): 1..3 ymm row
 * sets, blocks ctr_nonce[0] .. + 2 sets - 1, their rounds interleaved (one
 * dependency chain each: the latency of one set's rounds holds the
 * others'), so a text of 2..6 blocks computes no lane it throws away.
 * kb != NULL: block 0 goes raw to kb and out/in are the text from block 1;
 * else they start at block 0. len bytes are written.
 *
 * nblk > 0 (at most 40): Poly1305 blocks at m (padbit 1) hashed into h
 * (radix 2^64, key k: r0 r1 s1) between the double rounds, the scalar
 * multiplies on the integer ports beside the vector rounds (stitched);
 * m may be the input of this very call (opening in place: every block is
 * read before the stores at the end).
 *
 * scalar (no hash): one more block (counter + 2 sets) in general
 * registers, its rounds between the sets' half rounds: 3 or 5 blocks as
 * 1 or 2 sets and this block where the CPU profile says "chacha-one=scalar"
 * (a dependent vector op is slow there, and the integer ports are idle
 * beside the sets: a third set cost more).
 *
 * keyed (opening, chacha20_rows_keyed_avx2): the block in general
 * registers is the key block (ctr_nonce[0], raw to kb) and the sets are
 * the text from the next counter. Its double rounds go two to each of
 * the sets' first five, so it is done at half time; then r from it keys
 * the hash of nblk blocks at m (the padded AAD) and n2 at m2 (the
 * ciphertext), from zero, in slots after each half round of the last five.
 *
 * Out of line: the compiler spills part of three sets' state (or the
 * scalar block's), and the feed-forward inputs; the caller scrubs this
 * frame (sized per shape, chacha20_rows_short_avx2).
 */
/*
 * A block in general registers (the words x0..x15 of the caller): its
 * column and diagonal quarter rounds, for the rounds some shapes run
 * beside their vector ones.
 */
#define SCALAR_COLUMNS()                                                    \
    do {                                                                    \
        CHAPOLY_QR32(x0, x4, x8, x12);                                      \
        CHAPOLY_QR32(x1, x5, x9, x13);                                      \
        CHAPOLY_QR32(x2, x6, x10, x14);                                     \
        CHAPOLY_QR32(x3, x7, x11, x15);                                     \
    } while (0)
#define SCALAR_DIAGONALS()                                                  \
    do {                                                                    \
        CHAPOLY_QR32(x0, x5, x10, x15);                                     \
        CHAPOLY_QR32(x1, x6, x11, x12);                                     \
        CHAPOLY_QR32(x2, x7, x8, x13);                                      \
        CHAPOLY_QR32(x3, x4, x9, x14);                                      \
    } while (0)
#define ROWS_STEP_YMM(n) _mm256_setr_epi32((n), 0, 0, 0, (n), 0, 0, 0)
/*
 * The short shapes' quarter round: the vpshufb patterns as memory operands
 * (rot_tbl), so that three row sets, their rotate temporaries and nothing
 * else take the 16 ymm registers (with the patterns in registers the
 * compiler spilled round state inside the loop, on the dependency chain).
 */
#define SHUF_MEM(d, pat) __asm__("vpshufb %1, %0, %0" : "+x"(d) : "m"(pat))
#define QR_YMM_M(a, b, c, d)                                                \
    do {                                                                    \
        a = ADD8(a, b); d = XOR8(d, a); SHUF_MEM(d, rot_tbl[0]);            \
        c = ADD8(c, d); b = XOR8(b, c); b = ROLS8(b, 12);                   \
        a = ADD8(a, b); d = XOR8(d, a); SHUF_MEM(d, rot_tbl[1]);            \
        c = ADD8(c, d); b = XOR8(b, c); b = ROLS8(b, 7);                    \
    } while (0)
CHAPOLY_INLINE void rows_short_body(const int sets, const int scalar, const int keyed,
                                    uint8_t *key_block, uint8_t *out, const uint8_t *in,
                                    size_t len, const uint32_t key_words[8],
                                    const uint32_t ctr_nonce[4], uint64_t h[3],
                                    const uint64_t *kw, const uint8_t *m, size_t nblk,
                                    const uint8_t *m2, size_t n2)
{
    const uint32_t *key = key_words;
    /* keyed: the sets from the block after ctr_nonce[0], the scalar block is block 0 */
    const uint32_t first = keyed ? 1 : 0, sc_ctr = keyed ? 0 : 2 * (uint32_t)sets;
    /* scalar: one more block (counter + 2 sets; keyed: the key block) in general registers */
    uint32_t x0 = SIGMA0, x1 = SIGMA1, x2 = SIGMA2, x3 = SIGMA3, x4 = key[0], x5 = key[1],
             x6 = key[2], x7 = key[3], x8 = key[4], x9 = key[5], x10 = key[6], x11 = key[7],
             x12 = ctr_nonce[0] + sc_ctr, x13 = ctr_nonce[1], x14 = ctr_nonce[2],
             x15 = ctr_nonce[3];
    const __m256i a0 = rows_sigma_ymm();
    const __m256i d0 = ADD8(ROW_BCAST_YMM(ctr_nonce), ROWS_CTR_YMM(first));
    uint64_t kr[3]; /* keyed: r0 r1 s1 from the scalar key block */
    __m256i a = a0, b = ROW_BCAST_YMM(key), c = ROW_BCAST_YMM(key + 4), d = d0;
    __m256i a1 = a, b1 = b, c1 = c, d1 = ADD8(d0, ROWS_STEP_YMM(2));
    __m256i a2 = a, b2 = b, c2 = c, d2 = ADD8(d0, ROWS_STEP_YMM(4));
    sc_hash hh = { 0, 0, 0 };
    /*
     * Blocks per slot, (nblk + n2) / 10 rounded up, without a division:
     * a slot a double round, keyed two a double round in the last five.
     */
    size_t per = ((nblk + n2 + 9) * 6554) >> 16;

    if (nblk > 0 && !keyed)
        hh.h0 = h[0], hh.h1 = h[1], hh.h2 = h[2];
/*
 * per blocks of the hash (at most what is left): from m; keyed, m then m2
 * (one asm site for both)
 */
#define HASH_SLOT()                                                         \
    do {                                                                    \
        size_t q_ = per;                                                    \
        while (keyed && q_ > 0 && nblk + n2 > 0) {                          \
            if (nblk == 0) {                                                \
                m = m2, nblk = n2;                                          \
                n2 = 0;                                                     \
            }                                                               \
            size_t t_ = q_ < nblk ? q_ : nblk;                              \
            hh = sc_blocks_reg(hh, kw, m, t_, 1);                           \
            m += 16 * t_;                                                   \
            nblk -= t_;                                                     \
            q_ -= t_;                                                       \
        }                                                                   \
        q_ = q_ < nblk ? q_ : nblk;                                         \
        if (!keyed && q_ > 0) { /* the asm chain: hash and temporaries in general registers */ \
            hh = sc_blocks_reg(hh, kw, m, q_, 1);                           \
            m += 16 * q_;                                                   \
            nblk -= q_;                                                     \
        }                                                                   \
    } while (0)
/* A quarter round of every set, then each set's rotation (DIAG_YMM or UNDIAG_YMM). */
#define SETS_HALF_ROUND(ROTATE)                                             \
    do {                                                                    \
        QR_YMM_M(a, b, c, d);                                               \
        if (sets > 1)                                                       \
            QR_YMM_M(a1, b1, c1, d1);                                       \
        if (sets > 2)                                                       \
            QR_YMM_M(a2, b2, c2, d2);                                       \
        ROTATE(a, c, d);                                                    \
        if (sets > 1)                                                       \
            ROTATE(a1, c1, d1);                                             \
        if (sets > 2)                                                       \
            ROTATE(a2, c2, d2);                                             \
    } while (0)
    if (keyed) {
        /*
         * The key block's double rounds two to each of the sets' first
         * five (a dependent scalar op is the faster here), then its r and
         * s, and the hash in the last five, a slot after each half round
         * (10 slots of per blocks: every block).
         */
        for (int i = 0; i < 5; i++) {
            SETS_HALF_ROUND(DIAG_YMM);
            SCALAR_COLUMNS();
            SCALAR_DIAGONALS();
            SETS_HALF_ROUND(UNDIAG_YMM);
            SCALAR_COLUMNS();
            SCALAR_DIAGONALS();
        }
        uint64_t w0 = (uint64_t)(x0 + SIGMA0) | (uint64_t)(x1 + SIGMA1) << 32;
        uint64_t w1 = (uint64_t)(x2 + SIGMA2) | (uint64_t)(x3 + SIGMA3) << 32;

        kr[0] = w0 & 0x0ffffffc0fffffffULL;
        kr[1] = w1 & 0x0ffffffc0ffffffcULL;
        kr[2] = kr[1] + (kr[1] >> 2);
        store64_le(key_block, w0);
        store64_le(key_block + 8, w1);
        store64_le(key_block + 16, (uint64_t)(x4 + key[0]) | (uint64_t)(x5 + key[1]) << 32);
        store64_le(key_block + 24, (uint64_t)(x6 + key[2]) | (uint64_t)(x7 + key[3]) << 32);
        store64_le(key_block + 32, (uint64_t)(x8 + key[4]) | (uint64_t)(x9 + key[5]) << 32);
        store64_le(key_block + 40, (uint64_t)(x10 + key[6]) | (uint64_t)(x11 + key[7]) << 32);
        store64_le(key_block + 48, (uint64_t)(x12 + ctr_nonce[0]) | (uint64_t)(x13 + ctr_nonce[1]) << 32);
        store64_le(key_block + 56, (uint64_t)(x14 + ctr_nonce[2]) | (uint64_t)(x15 + ctr_nonce[3]) << 32);
        kw = kr;
        for (int i = 5; i < 10; i++) {
            SETS_HALF_ROUND(DIAG_YMM);
            HASH_SLOT();
            SETS_HALF_ROUND(UNDIAG_YMM);
            HASH_SLOT();
        }
    } else {
        for (int i = 0; i < 10; i++) {
            SETS_HALF_ROUND(DIAG_YMM);
            if (scalar)
                SCALAR_COLUMNS();
            HASH_SLOT();
            SETS_HALF_ROUND(UNDIAG_YMM);
            if (scalar)
                SCALAR_DIAGONALS();
        }
    }
#undef SETS_HALF_ROUND
#undef HASH_SLOT
    if (per > 0 || keyed) {
        h[0] = hh.h0, h[1] = hh.h1, h[2] = hh.h2;
    }
    OPAQUE_PTR(key); /* key rows re-read, not kept live */
    const __m256i kb0 = ROW_BCAST_YMM(key), kb1 = ROW_BCAST_YMM(key + 4);
    const __m256i dd = ADD8(ROW_BCAST_YMM(ctr_nonce), ROWS_CTR_YMM(first));
    uint8_t *o = out;
    const uint8_t *x = in;

    if (key_block != NULL && !keyed) { /* block 0 is the key block: the text is blocks 1.. */
        o = (uint8_t *)((uintptr_t)out - 64);
        x = (const uint8_t *)((uintptr_t)in - 64);
        len += 64;
    }
    a = ADD8(a, a0);
    b = ADD8(b, kb0);
    c = ADD8(c, kb1);
    d = ADD8(d, dd);
    if (key_block != NULL && !keyed)
        ROWS_STORE_YMM(KEY_BLOCK_PART, a, b, c, d, 0, o, x, len);
    else
        ROWS_STORE_YMM(xor_block_part, a, b, c, d, 0, o, x, len);
/* Set s (blocks 2 s and 2 s + 1) fed forward and XORed. */
#define SET_FEED_STORE(a_, b_, c_, d_, s_)                                  \
    do {                                                                    \
        a_ = ADD8(a_, a0);                                                  \
        b_ = ADD8(b_, kb0);                                                 \
        c_ = ADD8(c_, kb1);                                                 \
        d_ = ADD8(d_, ADD8(dd, ROWS_STEP_YMM(2 * (s_))));                   \
        ROWS_STORE_YMM(xor_block_part, a_, b_, c_, d_, 2 * (s_), o, x, len); \
    } while (0)
    if (sets > 1)
        SET_FEED_STORE(a1, b1, c1, d1, 1);
    if (sets > 2)
        SET_FEED_STORE(a2, b2, c2, d2, 2);
#undef SET_FEED_STORE
    if (scalar && !keyed) { /* block 2 sets, fed forward, from registers */
        __m256i lo = _mm256_setr_epi32((int)(x0 + SIGMA0), (int)(x1 + SIGMA1), (int)(x2 + SIGMA2),
                                       (int)(x3 + SIGMA3), (int)(x4 + key[0]), (int)(x5 + key[1]),
                                       (int)(x6 + key[2]), (int)(x7 + key[3]));
        __m256i hi = _mm256_setr_epi32((int)(x8 + key[4]), (int)(x9 + key[5]), (int)(x10 + key[6]),
                                       (int)(x11 + key[7]),
                                       (int)(x12 + ctr_nonce[0] + 2 * (uint32_t)sets),
                                       (int)(x13 + ctr_nonce[1]), (int)(x14 + ctr_nonce[2]),
                                       (int)(x15 + ctr_nonce[3]));

        xor_block_part(o, x, lo, hi, 2 * (size_t)sets, len);
    }
}

#define ROWS_SHORT_FN(name, n, sc)                                                           \
    static __attribute__((noinline)) void name(                                              \
        uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],     \
        const uint32_t ctr_nonce[4], uint64_t h[3], const uint64_t k[3], const uint8_t *m,   \
        size_t nblk)                                                                         \
    {                                                                                        \
        rows_short_body(n, sc, 0, kb, out, in, len, key, ctr_nonce, h, k, m, nblk, NULL, 0);  \
    }
ROWS_SHORT_FN(rows_short1, 1, 0)
ROWS_SHORT_FN(rows_short2, 2, 0)
ROWS_SHORT_FN(rows_short3, 3, 0)
ROWS_SHORT_FN(rows_short1s, 1, 1)
ROWS_SHORT_FN(rows_short2s, 2, 1)

/* keyed: the key block in general registers, then the hash of m and m2 beside the sets */
#define ROWS_KEYED_FN(name, n)                                                               \
    static __attribute__((noinline)) void name(                                              \
        uint8_t kb[64], uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],  \
        const uint32_t ctr_nonce[4], uint64_t h[3], const uint8_t *m, size_t nblk,           \
        const uint8_t *m2, size_t n2)                                                        \
    {                                                                                        \
        rows_short_body(n, 1, 1, kb, out, in, len, key, ctr_nonce, h, NULL, m, nblk, m2, n2); \
    }
ROWS_KEYED_FN(rows_keyed1, 1)
ROWS_KEYED_FN(rows_keyed2, 2)
ROWS_KEYED_FN(rows_keyed3, 3)

CHAPOLY_DEFINE_SCRUB(scrub_stack_1k, 1024)

void chacha20_rows_short_avx2(uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len,
                              const uint32_t key[8], const uint32_t ctr_nonce[4], uint64_t h[3],
                              const uint64_t k[3], const uint8_t *m, size_t nblk, int beside)
{
    size_t blocks = (len + (kb != NULL ? 64 : 0) + 63) / 64; /* public */

    /*
     * The scrub sized to the shape: one or two sets keep their state in
     * registers but for a few spills (frames of about 0x40 and 0x80 bytes
     * optimised, GCC 12), three spill rows (about 0x1a0), a block beside
     * spills a few of its words.
     */
    beside = beside && nblk == 0 && (blocks == 3 || blocks == 5);
    if (blocks <= 2) {
        rows_short1(kb, out, in, len, key, ctr_nonce, h, k, m, nblk);
        scrub_stack_512();
    } else if (beside && blocks == 3) {
        rows_short1s(kb, out, in, len, key, ctr_nonce, h, k, m, nblk);
        scrub_stack_512();
    } else if (blocks <= 4) {
        rows_short2(kb, out, in, len, key, ctr_nonce, h, k, m, nblk);
        scrub_stack_512();
    } else if (beside) {
        rows_short2s(kb, out, in, len, key, ctr_nonce, h, k, m, nblk);
        scrub_stack_512();
    } else {
        rows_short3(kb, out, in, len, key, ctr_nonce, h, k, m, nblk);
        scrub_stack_1k();
    }
}

/*
 * Opening a short first text (kernels_impl.h): the key block in general
 * registers, its double rounds two to each of the text's row sets' first
 * five, then the MAC's r from it and the hash of the AAD blocks (m, nblk)
 * and the ciphertext's (m2, n2) beside the sets' last five (a dependent
 * vector op costs about twice a scalar one on the CPUs whose profile says
 * "chacha-one=scalar"). Every block is hashed before the text is written
 * (m2 may be in, in place). The frames: as the short shapes' (three sets
 * spill rows).
 */
void chacha20_rows_keyed_avx2(uint8_t kb[64], uint8_t *out, const uint8_t *in, size_t len,
                              const uint32_t key[8], const uint32_t ctr_nonce[4], uint64_t h[3],
                              const uint8_t *m, size_t nblk, const uint8_t *m2, size_t n2)
{
    if (len <= 128) {
        rows_keyed1(kb, out, in, len, key, ctr_nonce, h, m, nblk, m2, n2);
        scrub_stack_512();
    } else if (len <= 256) {
        rows_keyed2(kb, out, in, len, key, ctr_nonce, h, m, nblk, m2, n2);
        scrub_stack_512();
    } else {
        rows_keyed3(kb, out, in, len, key, ctr_nonce, h, m, nblk, m2, n2);
        scrub_stack_1k();
    }
}

static void keyblock_split2(uint8_t key_block[64], uint8_t *out, const uint8_t *in, size_t len,
                            const uint32_t key_words[8], const uint32_t ctr_nonce[4]);

/*
 * 65..192 bytes (no short rows): one chacha20_xor over a stack buffer,
 * wiped afterwards. Out of line, so that chacha20_keyblock_xor_avx2 keeps
 * no frame of its own to lift its scrubs (CHAPOLY_DEFINE_SCRUB).
 */
static __attribute__((noinline)) void keyblock_buf(const chapoly_kernels *kt, uint8_t key_block[64],
                                                   uint8_t *out, const uint8_t *in, size_t len,
                                                   const uint32_t key[8],
                                                   const uint32_t ctr_nonce[4])
{
    _Alignas(32) uint8_t buf[256];

    memset(buf, 0, 64 + len);
    if (len > 0)
        memcpy(buf + 64, in, len);
    chacha20_xor_avx2(kt, buf, buf, 64 + len, key, ctr_nonce);
    memcpy(key_block, buf, 64);
    if (len > 0)
        memcpy(out, buf + 64, len);
    chapoly_wipe(buf, 64 + len);
}

/*
 * The key block (raw keystream at ctr_nonce[0]) and len bytes of text from
 * the next counter on, in the shapes of one len + 64 byte call: from 5
 * blocks in all, column batches whose first block goes to key_block (no
 * copy of the text); two blocks, keyblock_row2 (keyblock_split2 with
 * "chacha-one=scalar"); 65..320 bytes, the short row sets ("short-rows");
 * between, keyblock_buf.
 */
void chacha20_keyblock_xor_avx2(const chapoly_kernels *kt, uint8_t key_block[64], uint8_t *out, const uint8_t *in,
                                size_t len, const uint32_t key[8],
                                const uint32_t ctr_nonce[4])
{
    if (len > 64 && len <= 320 && len <= kt->shapes.short_rows) { /* "short-rows" */
        chacha20_rows_short_avx2(key_block, out, in, len, key, ctr_nonce, NULL, NULL, NULL, 0,
                                 !kt->shapes.one_block_rows);
        return;
    }
    if (len > 192) {
        keyblock_columns(kt, key_block, out, in, len, key, ctr_nonce);
        scrub_stack_2k();
        return;
    }
    if (len <= 64 && !kt->shapes.one_block_rows) { /* "chacha-one=scalar" */
        keyblock_split2(key_block, out, in, len, key, ctr_nonce);
        scrub_stack_384(); /* its frame and red zone, about 0x100 bytes (GCC 12) */
        return;
    }
    if (len <= 64) {
        keyblock_row2(key_block, out, in, len, key, ctr_nonce);
        return;
    }
    keyblock_buf(kt, key_block, out, in, len, key, ctr_nonce);
}

/*
 * chacha20_xor_row1_avx2: one block (0 <= len <= 64, the block at counter
 * ctr_nonce[0]) as one xmm row set: the lone block with "chacha-one=rows"
 * (faster than a ymm row set of two blocks, rows(), whose frame is
 * scrubbed). VEX xmm code only: no upper
 * state is touched, so no vzeroupper. Rotates by 16 and 8 with vpshufb, by
 * 12 and 7 with shift + shift + or. The diagonal rounds rotate rows a, c
 * and d (not b, which the next quarter round needs first), so the vpshufd
 * run beside the dependency chain instead of adding a step to it. The
 * state, its input copies, the two vpshufb patterns and the keystream stay
 * in xmm0-15 (no stack frame, checked with objdump): nothing to scrub. A
 * partial block is XORed whole rows first, then in 8/4/2/1-byte steps
 * from the register (xor_tail16_xmm): nothing read or written past len.
 */
#define ROLS4(a, n) _mm_or_si128(_mm_slli_epi32(a, n), _mm_srli_epi32(a, 32 - (n)))
#define QR_ROW1(a, b, c, d)                                                          \
    do {                                                                             \
        a = _mm_add_epi32(a, b); d = _mm_xor_si128(d, a); d = _mm_shuffle_epi8(d, r16); \
        c = _mm_add_epi32(c, d); b = _mm_xor_si128(b, c); b = ROLS4(b, 12);          \
        a = _mm_add_epi32(a, b); d = _mm_xor_si128(d, a); d = _mm_shuffle_epi8(d, r8);  \
        c = _mm_add_epi32(c, d); b = _mm_xor_si128(b, c); b = ROLS4(b, 7);           \
    } while (0)
/* Diagonals: lane j of a <- a[j - 1], of c <- c[j + 1], of d <- d[j + 2]; then back. */
#define DROUND_ROW1(a, b, c, d)                                                      \
    do {                                                                             \
        QR_ROW1(a, b, c, d);                                                         \
        DIAG_XMM(a, c, d);                                                           \
        QR_ROW1(a, b, c, d);                                                         \
        UNDIAG_XMM(a, c, d);                                                         \
    } while (0)

/*
 * The same two blocks where the CPU profile says "chacha-one=scalar" (a
 * dependent vector op costs about twice a scalar one there): the key block
 * in general registers, its double rounds two to each of the first five of
 * the text block's, which runs as one xmm row; then the text block's state
 * moves to general registers for its last five double rounds. The key block
 * is done at half time and the text block's second half runs at the scalar
 * speed, so the two blocks take about three quarters of a row set's
 * latency, for about four times the instructions (docs/performance.md).
 * The row's quarter round is QR_ROW1, the scalar ones SCALAR_COLUMNS and
 * SCALAR_DIAGONALS. The compiler spills part of the scalar state: the
 * caller scrubs this frame.
 */
#define SPLIT2_DROUND()                                                     \
    do {                                                                    \
        SCALAR_COLUMNS();                                                   \
        SCALAR_DIAGONALS();                                                 \
    } while (0)
#define SPLIT2_PUT(p, a, b, i, j) store64_le(p, (uint64_t)((a) + (i)) | (uint64_t)((b) + (j)) << 32)
#define SPLIT2_W(a, b, i, j) (long long)((uint64_t)((a) + (i)) | (uint64_t)((b) + (j)) << 32)
#define SPLIT2_ROW(w, x, y, z, i, j, k, l)                                  \
    _mm_insert_epi64(_mm_cvtsi64_si128(SPLIT2_W(w, x, i, j)), SPLIT2_W(y, z, k, l), 1)
static __attribute__((noinline)) void
keyblock_split2(uint8_t key_block[64], uint8_t *out, const uint8_t *in, size_t len,
                const uint32_t key_words[8], const uint32_t ctr_nonce[4])
{
    const uint32_t *key = key_words;
    const __m128i r16 = _mm_setr_epi8(ROT16_BYTES);
    const __m128i r8 = _mm_setr_epi8(ROT8_BYTES);
    uint32_t x0 = SIGMA0, x1 = SIGMA1, x2 = SIGMA2, x3 = SIGMA3, x4 = key[0], x5 = key[1],
             x6 = key[2], x7 = key[3], x8 = key[4], x9 = key[5], x10 = key[6], x11 = key[7],
             x12 = ctr_nonce[0], x13 = ctr_nonce[1], x14 = ctr_nonce[2], x15 = ctr_nonce[3];
    __m128i a = _mm_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
    __m128i b = _mm_loadu_si128((const __m128i *)key);
    __m128i c = _mm_loadu_si128((const __m128i *)(key + 4));
    __m128i d = _mm_add_epi32(_mm_loadu_si128((const __m128i *)ctr_nonce), _mm_setr_epi32(1, 0, 0, 0));
#pragma GCC unroll 1
    for (int i = 0; i < 5; i++) {
        QR_ROW1(a, b, c, d);
        DIAG_XMM(a, c, d);
        SPLIT2_DROUND();
        QR_ROW1(a, b, c, d);
        UNDIAG_XMM(a, c, d);
        SPLIT2_DROUND();
    }
    OPAQUE_PTR(key); /* key words re-read, not kept live */
    SPLIT2_PUT(key_block, x0, x1, SIGMA0, SIGMA1);
    SPLIT2_PUT(key_block + 8, x2, x3, SIGMA2, SIGMA3);
    SPLIT2_PUT(key_block + 16, x4, x5, key[0], key[1]);
    SPLIT2_PUT(key_block + 24, x6, x7, key[2], key[3]);
    SPLIT2_PUT(key_block + 32, x8, x9, key[4], key[5]);
    SPLIT2_PUT(key_block + 40, x10, x11, key[6], key[7]);
    SPLIT2_PUT(key_block + 48, x12, x13, ctr_nonce[0], ctr_nonce[1]);
    SPLIT2_PUT(key_block + 56, x14, x15, ctr_nonce[2], ctr_nonce[3]);
    x0 = (uint32_t)_mm_cvtsi128_si32(a), x1 = (uint32_t)_mm_extract_epi32(a, 1);
    x2 = (uint32_t)_mm_extract_epi32(a, 2), x3 = (uint32_t)_mm_extract_epi32(a, 3);
    x4 = (uint32_t)_mm_cvtsi128_si32(b), x5 = (uint32_t)_mm_extract_epi32(b, 1);
    x6 = (uint32_t)_mm_extract_epi32(b, 2), x7 = (uint32_t)_mm_extract_epi32(b, 3);
    x8 = (uint32_t)_mm_cvtsi128_si32(c), x9 = (uint32_t)_mm_extract_epi32(c, 1);
    x10 = (uint32_t)_mm_extract_epi32(c, 2), x11 = (uint32_t)_mm_extract_epi32(c, 3);
    x12 = (uint32_t)_mm_cvtsi128_si32(d), x13 = (uint32_t)_mm_extract_epi32(d, 1);
    x14 = (uint32_t)_mm_extract_epi32(d, 2), x15 = (uint32_t)_mm_extract_epi32(d, 3);
#pragma GCC unroll 1
    for (int i = 0; i < 5; i++)
        SPLIT2_DROUND();
    OPAQUE_PTR(key);
    /* fed forward, back into vector registers: the text's XOR as keyblock_row2's */
    a = SPLIT2_ROW(x0, x1, x2, x3, SIGMA0, SIGMA1, SIGMA2, SIGMA3);
    b = SPLIT2_ROW(x4, x5, x6, x7, key[0], key[1], key[2], key[3]);
    c = SPLIT2_ROW(x8, x9, x10, x11, key[4], key[5], key[6], key[7]);
    d = SPLIT2_ROW(x12, x13, x14, x15, ctr_nonce[0] + 1, ctr_nonce[1], ctr_nonce[2], ctr_nonce[3]);
    __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
    __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(c), d, 1);

    if (len == 64) {
        xor32(out, in, lo);
        xor32(out + 32, in + 32, hi);
    } else {
        xor_tail(out, in, lo, hi, len); /* 0..63 bytes, nothing past len */
    }
}
#undef SPLIT2_DROUND
#undef SPLIT2_PUT
#undef SPLIT2_W
#undef SPLIT2_ROW

CHAPOLY_INLINE void xor16(uint8_t *out, const uint8_t *in, __m128i ks)
{
    _mm_storeu_si128((__m128i *)out, _mm_xor_si128(_mm_loadu_si128((const __m128i *)in), ks));
}

void chacha20_xor_row1_avx2(uint8_t *out, const uint8_t *in, size_t len,
                            const uint32_t key_words[8], const uint32_t ctr_nonce[4])
{
    const uint32_t *key = key_words;
    const __m128i r16 = _mm_setr_epi8(ROT16_BYTES);
    const __m128i r8 = _mm_setr_epi8(ROT8_BYTES);
    const __m128i sigma = _mm_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
    const __m128i d0 = _mm_loadu_si128((const __m128i *)ctr_nonce);
    __m128i a = sigma;
    __m128i b = _mm_loadu_si128((const __m128i *)key);
    __m128i c = _mm_loadu_si128((const __m128i *)(key + 4));
    __m128i d = d0;

#pragma GCC unroll 10
    for (int i = 0; i < 10; i++)
        DROUND_ROW1(a, b, c, d);
    OPAQUE_PTR(key); /* the key rows are re-read, not kept across the rounds */
    a = _mm_add_epi32(a, sigma);
    b = _mm_add_epi32(b, _mm_loadu_si128((const __m128i *)key));
    c = _mm_add_epi32(c, _mm_loadu_si128((const __m128i *)(key + 4)));
    d = _mm_add_epi32(d, d0);
    /* whole rows, then the rest of one row from the register (len is public) */
    if (len >= 32) {
        xor16(out, in, a);
        xor16(out + 16, in + 16, b);
        if (len == 64) {
            xor16(out + 32, in + 32, c);
            xor16(out + 48, in + 48, d);
            return;
        }
        out += 32;
        in += 32;
        len -= 32;
        a = c;
        b = d;
    }
    if (len >= 16) {
        xor16(out, in, a);
        out += 16;
        in += 16;
        len -= 16;
        a = b;
    }
    xor_tail16_xmm(out, in, a, len);
}

/*
 * HChaCha20 (draft-irtf-cfrg-xchacha-03 2.2) as one xmm row set: the rounds
 * of chacha20_xor_row1_avx2, no feed-forward, rows a and d (state words 0..3
 * and 12..15) are the subkey. The "chacha-one=rows" form of the level's
 * hchacha20 entry. Registers only, nothing to scrub.
 */
void hchacha20_row1_avx2(uint8_t subkey[32], const uint8_t key[32], const uint8_t nonce[16])
{
    const __m128i r16 = _mm_setr_epi8(ROT16_BYTES);
    const __m128i r8 = _mm_setr_epi8(ROT8_BYTES);
    __m128i a = _mm_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
    __m128i b = _mm_loadu_si128((const __m128i *)key);
    __m128i c = _mm_loadu_si128((const __m128i *)(key + 16));
    __m128i d = _mm_loadu_si128((const __m128i *)nonce);

#pragma GCC unroll 10
    for (int i = 0; i < 10; i++)
        DROUND_ROW1(a, b, c, d);
    _mm_storeu_si128((__m128i *)subkey, a);
    _mm_storeu_si128((__m128i *)(subkey + 16), d);
}

void hchacha20_avx2(const chapoly_kernels *kt, uint8_t subkey[32], const uint8_t key[32],
                    const uint8_t nonce[16])
{
    if (kt->shapes.one_block_rows)
        hchacha20_row1_avx2(subkey, key, nonce);
    else
        hchacha20_portable(kt, subkey, key, nonce);
}
