/* SPDX-License-Identifier: Apache-2.0 */
/*
 * 8-lane (ymm) ChaCha20 building blocks, shared by chacha20_avx2.c (the
 * "avx2" level: 16 registers, AVX2 rotates) and chacha20_avx512vl.c (the
 * "avx512vl" level: 32 registers, vprold). Column layout: word i of eight
 * blocks in register xi; row layout: one block per 128-bit lane, so a row
 * set is two blocks.
 *
 * What differs between the two levels stays in their files: the quarter
 * round QR_YMM(a, b, c, d) (the rotates; the row-round macros below expand
 * the includer's QR_YMM), the column round loop (AVX2 parks state words in
 * memory), and the writer of one keystream block,
 *   part(out, in, lo, hi, idx, len)
 * which XORs block idx (lo = bytes 0..31, hi = 32..63) into out + 64 idx
 * and writes min(len - 64 idx, 64) bytes of it, none if len <= 64 idx
 * (AVX2 in scalar steps, AVX-512VL with byte masks).
 */
#ifndef CHAPOLY_CHACHA20_YMM_H
#define CHAPOLY_CHACHA20_YMM_H

#include <immintrin.h>
#include "kernels_impl.h"

#define ADD8(a, b) _mm256_add_epi32(a, b)
#define XOR8(a, b) _mm256_xor_si256(a, b)
#define BCAST8(w) _mm256_set1_epi32((int)(w))

/* Column counters: lane l = ctr_nonce[0] + l (32-bit adds: wraps mod 2^32). */
#define COLS_CTR_YMM _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)

/*
 * Column state: word i of eight blocks in xi. 'key' must be a pointer
 * passed through OPAQUE_PTR so the broadcasts are loads, not kept values.
 */
#define COLS_INIT_YMM(key, ctr, n1, n2, n3)                         \
    __m256i x0 = BCAST8(SIGMA0), x1 = BCAST8(SIGMA1);               \
    __m256i x2 = BCAST8(SIGMA2), x3 = BCAST8(SIGMA3);               \
    __m256i x4 = BCAST8(key[0]), x5 = BCAST8(key[1]);               \
    __m256i x6 = BCAST8(key[2]), x7 = BCAST8(key[3]);               \
    __m256i x8 = BCAST8(key[4]), x9 = BCAST8(key[5]);               \
    __m256i x10 = BCAST8(key[6]), x11 = BCAST8(key[7]);             \
    __m256i x12 = (ctr), x13 = BCAST8(n1);                          \
    __m256i x14 = BCAST8(n2), x15 = BCAST8(n3)

/* Feed-forward from broadcasts (memory operands) rather than saved registers. */
#define COLS_FEED_YMM(key, ctr, n1, n2, n3)                         \
    do {                                                            \
        x0 = ADD8(x0, BCAST8(SIGMA0));                              \
        x1 = ADD8(x1, BCAST8(SIGMA1));                              \
        x2 = ADD8(x2, BCAST8(SIGMA2));                              \
        x3 = ADD8(x3, BCAST8(SIGMA3));                              \
        x4 = ADD8(x4, BCAST8(key[0]));                              \
        x5 = ADD8(x5, BCAST8(key[1]));                              \
        x6 = ADD8(x6, BCAST8(key[2]));                              \
        x7 = ADD8(x7, BCAST8(key[3]));                              \
        x8 = ADD8(x8, BCAST8(key[4]));                              \
        x9 = ADD8(x9, BCAST8(key[5]));                              \
        x10 = ADD8(x10, BCAST8(key[6]));                            \
        x11 = ADD8(x11, BCAST8(key[7]));                            \
        x12 = ADD8(x12, (ctr));                                     \
        x13 = ADD8(x13, BCAST8(n1));                                \
        x14 = ADD8(x14, BCAST8(n2));                                \
        x15 = ADD8(x15, BCAST8(n3));                                \
    } while (0)

/*
 * Column state -> block order, in two stages. Here: lane l of x(4g+k)
 * becomes words 4g..4g+3 of block 4l+k. In COLS_STORE_YMM: block k is lane 0
 * of (x(k), x(4+k) | x(8+k), x(12+k)), block 4+k lane 1.
 */
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
#define COLS_TRANSPOSE_YMM()                                        \
    do {                                                            \
        UNPACK4_YMM(x0, x1, x2, x3);                                \
        UNPACK4_YMM(x4, x5, x6, x7);                                \
        UNPACK4_YMM(x8, x9, x10, x11);                              \
        UNPACK4_YMM(x12, x13, x14, x15);                            \
    } while (0)

/*
 * Two blocks held as one row set, or as lanes 0 and 1 of four transposed
 * column registers (a = bytes 0..15, b = 16..31, c = 32..47, d = 48..63 of
 * each block): block 'idx' from lane 0, block idx + step from lane 1.
 */
#define STORE2_YMM(part, a, b, c, d, idx, step, out, in, len)      \
    do {                                                            \
        __m256i lo0_ = _mm256_permute2x128_si256(a, b, 0x20);       \
        __m256i hi0_ = _mm256_permute2x128_si256(c, d, 0x20);       \
        __m256i lo1_ = _mm256_permute2x128_si256(a, b, 0x31);       \
        __m256i hi1_ = _mm256_permute2x128_si256(c, d, 0x31);       \
        part(out, in, lo0_, hi0_, (idx), (len));                    \
        part(out, in, lo1_, hi1_, (idx) + (step), (len));           \
    } while (0)

/* The transposed column state: writes min(len, 512) bytes. */
#define COLS_STORE_YMM(part, out, in, len)                          \
    do {                                                            \
        STORE2_YMM(part, x0, x4, x8, x12, 0, 4, out, in, len);      \
        STORE2_YMM(part, x1, x5, x9, x13, 1, 4, out, in, len);      \
        STORE2_YMM(part, x2, x6, x10, x14, 2, 4, out, in, len);     \
        STORE2_YMM(part, x3, x7, x11, x15, 3, 4, out, in, len);     \
    } while (0)

/* Row set (a, b, c, d) -> blocks idx and idx + 1. */
#define ROWS_STORE_YMM(part, a, b, c, d, idx, out, in, len)         \
    STORE2_YMM(part, a, b, c, d, idx, 1, out, in, len)

/* Row set rows: constants, key halves (from memory), counter + nonce. */
CHAPOLY_INLINE __m256i rows_sigma_ymm(void)
{
    return _mm256_setr_epi32((int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3,
                             (int)SIGMA0, (int)SIGMA1, (int)SIGMA2, (int)SIGMA3);
}
#define ROW_BCAST_YMM(p) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p)))
/* Lane counters of a row set: block counter + off, + off + 1. */
#define ROWS_CTR_YMM(off) _mm256_setr_epi32((off), 0, 0, 0, (off) + 1, 0, 0, 0)

/*
 * Row layout double round: rows a, c, d are rotated so the diagonals line
 * up as columns for the second quarter round, then rotated back (lane j of
 * a <- a[j - 1], of c <- c[j + 1], of d <- d[j + 2]). Not b: the next
 * quarter round needs b first (a += b), while a, c and d are not read
 * again until later in it, so their shuffles run beside the dependency
 * chain instead of adding a step to it twice per double round.
 */
#define DIAG_YMM(a, c, d)                                           \
    do {                                                            \
        a = _mm256_shuffle_epi32(a, _MM_SHUFFLE(2, 1, 0, 3));       \
        c = _mm256_shuffle_epi32(c, _MM_SHUFFLE(0, 3, 2, 1));       \
        d = _mm256_shuffle_epi32(d, _MM_SHUFFLE(1, 0, 3, 2));       \
    } while (0)
#define UNDIAG_YMM(a, c, d)                                         \
    do {                                                            \
        a = _mm256_shuffle_epi32(a, _MM_SHUFFLE(0, 3, 2, 1));       \
        c = _mm256_shuffle_epi32(c, _MM_SHUFFLE(2, 1, 0, 3));       \
        d = _mm256_shuffle_epi32(d, _MM_SHUFFLE(1, 0, 3, 2));       \
    } while (0)

/* The same rotations for one block held as an xmm row set (the "chacha-one=rows" forms). */
#define DIAG_XMM(a, c, d)                                           \
    do {                                                            \
        a = _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 1, 0, 3));          \
        c = _mm_shuffle_epi32(c, _MM_SHUFFLE(0, 3, 2, 1));          \
        d = _mm_shuffle_epi32(d, _MM_SHUFFLE(1, 0, 3, 2));          \
    } while (0)
#define UNDIAG_XMM(a, c, d)                                         \
    do {                                                            \
        a = _mm_shuffle_epi32(a, _MM_SHUFFLE(0, 3, 2, 1));          \
        c = _mm_shuffle_epi32(c, _MM_SHUFFLE(2, 1, 0, 3));          \
        d = _mm_shuffle_epi32(d, _MM_SHUFFLE(1, 0, 3, 2));          \
    } while (0)

/* The 20 rounds of one row set, with the includer's QR_YMM. */
#define ROUNDS_ROWS_YMM(a, b, c, d)                                 \
    do {                                                            \
        for (int i_ = 0; i_ < 10; i_++) {                           \
            QR_YMM(a, b, c, d);                                     \
            DIAG_YMM(a, c, d);                                      \
            QR_YMM(a, b, c, d);                                     \
            UNDIAG_YMM(a, c, d);                                    \
        }                                                           \
    } while (0)

/* The 20 rounds of two row sets, interleaved (two dependency chains). */
#define ROUNDS_ROWS2_YMM(a, b, c, d, p, q, r, s)                    \
    do {                                                            \
        for (int i_ = 0; i_ < 10; i_++) {                           \
            QR_YMM(a, b, c, d);                                     \
            QR_YMM(p, q, r, s);                                     \
            DIAG_YMM(a, c, d);                                      \
            DIAG_YMM(p, r, s);                                      \
            QR_YMM(a, b, c, d);                                     \
            QR_YMM(p, q, r, s);                                     \
            UNDIAG_YMM(a, c, d);                                    \
            UNDIAG_YMM(p, r, s);                                    \
        }                                                           \
    } while (0)

/*
 * ---- "avx2" column rounds in inline assembly (16 ymm registers) ----
 * The 8-lane column state needs 16 registers and the rotates by 12 and 7
 * two temporaries; compiled from intrinsics, the compiler spills many
 * values per double round (round state, as secret as the key). Here a
 * batch's 20 rounds and feed-forward are one asm block
 * (cols_batch_asm_ymm): it holds 14 state words (x0..x7, two of x8..x11,
 * x12..x15) and two temporaries in the 16 registers and parks the other
 * two of x8..x11 in slots of the output array (one swap per half round, as
 * OpenSSL's ChaCha20_8x does). The vpshufb patterns are memory
 * operands; nothing else touches the stack.
 * Registers: a0..a3 = ymm0..3 (x0..x3), b0..b3 = ymm4..7 (x4..x7), c0 c1 =
 * ymm8 ymm9 (x8 x9 between double rounds, x10 x11 in the middle),
 * t0 t1 = ymm10 ymm11, d0..d3 = ymm12..15 (x12..x15). AT&T order:
 * "op src2, src1, dst". The asm's operands: [s] the output (and parking)
 * array, [i] the input state, [r16] and [r8] the patterns.
 */
#define CC_a0 "%%ymm0"
#define CC_a1 "%%ymm1"
#define CC_a2 "%%ymm2"
#define CC_a3 "%%ymm3"
#define CC_b0 "%%ymm4"
#define CC_b1 "%%ymm5"
#define CC_b2 "%%ymm6"
#define CC_b3 "%%ymm7"
#define CC_c0 "%%ymm8"
#define CC_c1 "%%ymm9"
#define CC_t0 "%%ymm10"
#define CC_t1 "%%ymm11"
#define CC_d0 "%%ymm12"
#define CC_d1 "%%ymm13"
#define CC_d2 "%%ymm14"
#define CC_d3 "%%ymm15"
#define CC_R(x) CC_##x
#define CC_HALF_QR2(a, b, c, d, e, f, g, h, rot, l, r)                       \
    "vpaddd " CC_R(b) ", " CC_R(a) ", " CC_R(a) "\n\t"                        \
    "vpxor " CC_R(a) ", " CC_R(d) ", " CC_R(d) "\n\t"                         \
    "vpshufb %[" #rot "], " CC_R(d) ", " CC_R(d) "\n\t"                       \
    "vpaddd " CC_R(f) ", " CC_R(e) ", " CC_R(e) "\n\t"                        \
    "vpxor " CC_R(e) ", " CC_R(h) ", " CC_R(h) "\n\t"                         \
    "vpshufb %[" #rot "], " CC_R(h) ", " CC_R(h) "\n\t"                       \
    "vpaddd " CC_R(d) ", " CC_R(c) ", " CC_R(c) "\n\t"                        \
    "vpxor " CC_R(c) ", " CC_R(b) ", " CC_R(b) "\n\t"                         \
    "vpslld $" #l ", " CC_R(b) ", " CC_t0 "\n\t"                              \
    "vpsrld $" #r ", " CC_R(b) ", " CC_R(b) "\n\t"                            \
    "vpor " CC_t0 ", " CC_R(b) ", " CC_R(b) "\n\t"                            \
    "vpaddd " CC_R(h) ", " CC_R(g) ", " CC_R(g) "\n\t"                        \
    "vpxor " CC_R(g) ", " CC_R(f) ", " CC_R(f) "\n\t"                         \
    "vpslld $" #l ", " CC_R(f) ", " CC_t1 "\n\t"                              \
    "vpsrld $" #r ", " CC_R(f) ", " CC_R(f) "\n\t"                            \
    "vpor " CC_t1 ", " CC_R(f) ", " CC_R(f) "\n\t"
/* Two independent quarter rounds (a, b, c, d) and (e, f, g, h). */
#define CC_QR2(a, b, c, d, e, f, g, h)                                       \
    CC_HALF_QR2(a, b, c, d, e, f, g, h, r16, 12, 20)                          \
    CC_HALF_QR2(a, b, c, d, e, f, g, h, r8, 7, 25)
/* c0 c1 -> s[i], s[i + 1]; c0 c1 <- s[j], s[j + 1] (byte offsets given). */
#define CC_SWAP(i, j)                                                        \
    "vmovdqa " CC_c0 ", " #i "(%[s])\n\t"                                     \
    "vmovdqa " CC_c1 ", " #i "+32(%[s])\n\t"                                  \
    "vmovdqa " #j "(%[s]), " CC_c0 "\n\t"                                     \
    "vmovdqa " #j "+32(%[s]), " CC_c1 "\n\t"
/*
 * A double round: four quarter-round pairs, each followed by the text of
 * its argument (the stitched kernel puts Poly1305 steps there).
 * s[8] is at byte 256, s[10] at 320.
 */
#define CC_DROUND(s1, s2, s3, s4)                                            \
    CC_QR2(a0, b0, c0, d0, a1, b1, c1, d1) s1                                \
    CC_SWAP(256, 320)                                                         \
    CC_QR2(a2, b2, c0, d2, a3, b3, c1, d3) s2                                \
    CC_QR2(a0, b1, c0, d3, a1, b2, c1, d0) s3                                \
    CC_SWAP(320, 256)                                                         \
    CC_QR2(a2, b3, c0, d1, a3, b0, c1, d2) s4
/* Registers <- the state rows at %[p], but x10 x11. */
#define CC_LOAD_FROM(p)                                                      \
    "vmovdqa 0(%[" #p "]), " CC_a0 "\n\t"                                     \
    "vmovdqa 32(%[" #p "]), " CC_a1 "\n\t"                                    \
    "vmovdqa 64(%[" #p "]), " CC_a2 "\n\t"                                    \
    "vmovdqa 96(%[" #p "]), " CC_a3 "\n\t"                                    \
    "vmovdqa 128(%[" #p "]), " CC_b0 "\n\t"                                   \
    "vmovdqa 160(%[" #p "]), " CC_b1 "\n\t"                                   \
    "vmovdqa 192(%[" #p "]), " CC_b2 "\n\t"                                   \
    "vmovdqa 224(%[" #p "]), " CC_b3 "\n\t"                                   \
    "vmovdqa 256(%[" #p "]), " CC_c0 "\n\t"                                   \
    "vmovdqa 288(%[" #p "]), " CC_c1 "\n\t"                                   \
    "vmovdqa 384(%[" #p "]), " CC_d0 "\n\t"                                   \
    "vmovdqa 416(%[" #p "]), " CC_d1 "\n\t"                                   \
    "vmovdqa 448(%[" #p "]), " CC_d2 "\n\t"                                   \
    "vmovdqa 480(%[" #p "]), " CC_d3 "\n\t"
/* s[i] = register + init[i] (%[i]); x10 x11 from their slots s[10], s[11]. */
#define CC_FF1(reg, off)                                                     \
    "vpaddd " #off "(%[i]), " reg ", " reg "\n\t"                             \
    "vmovdqa " reg ", " #off "(%[s])\n\t"
#define CC_FEED_STORE                                                        \
    CC_FF1(CC_a0, 0) CC_FF1(CC_a1, 32) CC_FF1(CC_a2, 64) CC_FF1(CC_a3, 96)   \
    CC_FF1(CC_b0, 128) CC_FF1(CC_b1, 160) CC_FF1(CC_b2, 192)                 \
    CC_FF1(CC_b3, 224) CC_FF1(CC_c0, 256) CC_FF1(CC_c1, 288)                 \
    "vmovdqa 320(%[s]), " CC_t0 "\n\t"                                        \
    "vmovdqa 352(%[s]), " CC_t1 "\n\t"                                        \
    CC_FF1(CC_t0, 320) CC_FF1(CC_t1, 352)                                     \
    CC_FF1(CC_d0, 384) CC_FF1(CC_d1, 416) CC_FF1(CC_d2, 448)                 \
    CC_FF1(CC_d3, 480)
#define CC_CLOBBERS                                                          \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",  \
    "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

/*
 * The end of a whole batch in asm: feed-forward (init at %[i]; x10 x11 from
 * their slots at %[s] + 320, + 352), transpose and out = in ^ keystream for
 * all 512 bytes (%[o], %[x]), every input chunk loaded before the same
 * chunk of out is stored (out == in is allowed). Lane l of the column
 * state is block l: block k and 4 + k come from words (x_k, x_4+k) (bytes
 * 0..31) and (x_8+k, x_12+k) (bytes 32..63), as COLS_STORE_YMM.
 */
#define CC_U32L(a, b, d) "vpunpckldq " b ", " a ", " d "\n\t"
#define CC_U32H(a, b, d) "vpunpckhdq " b ", " a ", " d "\n\t"
#define CC_U64L(a, b, d) "vpunpcklqdq " b ", " a ", " d "\n\t"
#define CC_U64H(a, b, d) "vpunpckhqdq " b ", " a ", " d "\n\t"
/* UNPACK4_YMM of (p, q, r, u) with temporaries v, w: results in r, u, v, w. */
#define CC_UNPACK4(p, q, r, u, v, w)                                         \
    CC_U32L(p, q, v) CC_U32H(p, q, w) CC_U32L(r, u, p) CC_U32H(r, u, q)     \
    CC_U64L(v, p, r) CC_U64H(v, p, u) CC_U64L(w, q, v) CC_U64H(w, q, w)
/* Two 32-byte chunks from (lo, hi) through temporary t at byte offsets a, b. */
#define CC_XST2(lo, hi, t, a, b)                                             \
    "vperm2i128 $0x20, " hi ", " lo ", " t "\n\t"                             \
    "vpxor " #a "(%[x]), " t ", " t "\n\t"                                    \
    "vmovdqu " t ", " #a "(%[o])\n\t"                                         \
    "vperm2i128 $0x31, " hi ", " lo ", " t "\n\t"                             \
    "vpxor " #b "(%[x]), " t ", " t "\n\t"                                    \
    "vmovdqu " t ", " #b "(%[o])\n\t"
/* The same without the XOR: raw keystream to %[o]. */
#define CC_ST2(lo, hi, t, a, b)                                              \
    "vperm2i128 $0x20, " hi ", " lo ", " t "\n\t"                             \
    "vmovdqu " t ", " #a "(%[o])\n\t"                                         \
    "vperm2i128 $0x31, " hi ", " lo ", " t "\n\t"                             \
    "vmovdqu " t ", " #b "(%[o])\n\t"
#define CC_FF(reg, off) "vpaddd " #off "(%[i]), " reg ", " reg "\n\t"
/*
 * The batch end: feed-forward, transpose, XOR and stores. first stores the
 * first pair of each half (bytes 0/256 and 32/288: block 0's halves); the
 * AEAD's key-block batch passes a store that writes block 0 to the key.
 */
#define CC_FEED_XOR_STORE_WITH(first) CC_FEED_STORE_WITH(first, CC_XST2)
/* The same with every other pair through rest (CC_XST2, or CC_ST2: raw keystream). */
#define CC_FEED_STORE_WITH(first, rest)                                      \
    CC_FF(CC_a0, 0) CC_FF(CC_a1, 32) CC_FF(CC_a2, 64) CC_FF(CC_a3, 96)       \
    CC_FF(CC_b0, 128) CC_FF(CC_b1, 160) CC_FF(CC_b2, 192) CC_FF(CC_b3, 224)  \
    /* x0..x3 -> a2 a3 t0 t1; x4..x7 -> b2 b3 a0 a1 */                       \
    CC_UNPACK4(CC_a0, CC_a1, CC_a2, CC_a3, CC_t0, CC_t1)                      \
    CC_UNPACK4(CC_b0, CC_b1, CC_b2, CC_b3, CC_a0, CC_a1)                      \
    first(CC_a2, CC_b2, CC_b0, 0, 256)                                        \
    rest(CC_a3, CC_b3, CC_b0, 64, 320)                                        \
    rest(CC_t0, CC_a0, CC_b0, 128, 384)                                       \
    rest(CC_t1, CC_a1, CC_b0, 192, 448)                                       \
    CC_FF(CC_c0, 256) CC_FF(CC_c1, 288)                                       \
    "vmovdqa 320(%[s]), " CC_a2 "\n\t"                                        \
    "vmovdqa 352(%[s]), " CC_a3 "\n\t"                                        \
    CC_FF(CC_a2, 320) CC_FF(CC_a3, 352)                                       \
    CC_FF(CC_d0, 384) CC_FF(CC_d1, 416) CC_FF(CC_d2, 448) CC_FF(CC_d3, 480)  \
    /* x8..x11 -> a2 a3 t0 t1; x12..x15 -> d2 d3 b0 b1 */                    \
    CC_UNPACK4(CC_c0, CC_c1, CC_a2, CC_a3, CC_t0, CC_t1)                      \
    CC_UNPACK4(CC_d0, CC_d1, CC_d2, CC_d3, CC_b0, CC_b1)                      \
    first(CC_a2, CC_d2, CC_c0, 32, 288)                                       \
    rest(CC_a3, CC_d3, CC_c0, 96, 352)                                        \
    rest(CC_t0, CC_b0, CC_c0, 160, 416)                                       \
    rest(CC_t1, CC_b1, CC_c0, 224, 480)
#define CC_FEED_XOR_STORE CC_FEED_XOR_STORE_WITH(CC_XST2)

/*
 * A whole 8-lane batch: out[0..511] = in ^ keystream of the column input
 * state init[16]; park[4] (32-byte aligned) holds two state words at a
 * time during the rounds.
 */
CHAPOLY_INLINE void cols_batch_full_asm_ymm(const __m256i init[16], __m256i park[4],
                                            const __m256i rot[2], uint8_t *out,
                                            const uint8_t *in)
{
    unsigned n;
    /* the slots CC_DROUND uses are at byte offsets 256..383 of s */
    uintptr_t s = (uintptr_t)park - 256;

    __asm__("vmovdqa 320(%[i]), " CC_t0 "\n\t"
            "vmovdqa 352(%[i]), " CC_t1 "\n\t"
            "vmovdqa " CC_t0 ", 320(%[s])\n\t"
            "vmovdqa " CC_t1 ", 352(%[s])\n\t"
            CC_LOAD_FROM(i)
            "movl $10, %[n]\n\t"
            ".p2align 5\n"
            "1:\n\t"
            CC_DROUND("", "", "", "")
            "decl %[n]\n\t"
            "jnz 1b\n\t"
            CC_FEED_XOR_STORE
            : "=m"(*(uint8_t(*)[512])out), "+m"(*(__m256i(*)[4])park), [n] "=&r"(n)
            : [s] "r"(s), [i] "r"(init), [o] "r"(out), [x] "r"(in),
              "m"(*(const __m256i(*)[16])init), "m"(*(const uint8_t(*)[512])in),
              [r16] "m"(rot[0]), [r8] "m"(rot[1])
            : "cc", CC_CLOBBERS);
}

/*
 * One 8-lane batch's rounds and feed-forward: w[i] = rounds(init)[i] +
 * init[i], with init[16] the column input state (word i of the eight
 * blocks in init[i]) and w[16] the output, both 32-byte aligned; 'rot' the
 * two vpshufb patterns (rotate by 16, by 8). w[8..11] are also the parking
 * slots during the rounds.
 */
CHAPOLY_INLINE void cols_batch_asm_ymm(const __m256i init[16], __m256i w[16],
                                       const __m256i rot[2])
{
    unsigned n;

    __asm__("vmovdqa 320(%[i]), " CC_t0 "\n\t"
            "vmovdqa 352(%[i]), " CC_t1 "\n\t"
            "vmovdqa " CC_t0 ", 320(%[s])\n\t"
            "vmovdqa " CC_t1 ", 352(%[s])\n\t"
            CC_LOAD_FROM(i)
            "movl $10, %[n]\n\t"
            ".p2align 5\n"
            "1:\n\t"
            CC_DROUND("", "", "", "")
            "decl %[n]\n\t"
            "jnz 1b\n\t"
            CC_FEED_STORE
            : "=m"(*(__m256i(*)[16])w), [n] "=&r"(n)
            : [s] "r"(w), [i] "r"(init), "m"(*(const __m256i(*)[16])init),
              [r16] "m"(rot[0]), [r8] "m"(rot[1])
            : "cc", CC_CLOBBERS);
}


/*
 * ---- "avx2" column batch pairs ("chacha-pairs") ----
 * Where dependent vector adds, xors, shifts and shuffles have a long
 * latency, one 8-lane batch is bound by its chain of dependent ops, not by
 * the ports: half of them stay idle. Two batches X and Y in flight fill
 * them; their 32 words cannot live in 16 registers, so they live in a
 * 1 KiB state array st (X's words at bytes 0..511, Y's at 512..1023, word
 * w at 32 w), and each step loads two quarter rounds' words into ymm0-3
 * and ymm4-7, runs them interleaved op by op (temporaries ymm12, ymm13,
 * the vpshufb patterns in ymm14, ymm15) and stores them back. Consecutive
 * steps reuse the registers but not their values, so the core renames
 * them and overlaps the steps. Order per double round: X's columns, Y's
 * columns, X's diagonals, Y's diagonals: a step's inputs were stored at
 * least one step earlier. On a core where the ops have a short latency
 * the loads and stores cost more than they free (estimates:
 * docs/performance.md): a CPU profile choice, off by default
 * (level_avx2.c, cpu_profiles.c).
 */
#define CP_L(r, off) "vmovdqa " #off "(%[s]), %%ymm" #r "\n\t"
#define CP_S(r, off) "vmovdqa %%ymm" #r ", " #off "(%[s])\n\t"
#define CP_OP2(op, x, y, z, u)                                               \
    op " %%ymm" #x ", %%ymm" #y ", %%ymm" #y "\n\t"                           \
    op " %%ymm" #z ", %%ymm" #u ", %%ymm" #u "\n\t"
#define CP_ROTL(b, t, l, r)                                                  \
    "vpslld $" #l ", %%ymm" #b ", %%ymm" #t "\n\t"                            \
    "vpsrld $" #r ", %%ymm" #b ", %%ymm" #b "\n\t"                            \
    "vpor %%ymm" #t ", %%ymm" #b ", %%ymm" #b "\n\t"
/* Half of two quarter rounds: (a b c d) = ymm0-3 and ymm4-7. */
#define CP_HALF(pat, l, r)                                                   \
    CP_OP2("vpaddd", 1, 0, 5, 4) CP_OP2("vpxor", 0, 3, 4, 7)                  \
    CP_OP2("vpshufb", pat, 3, pat, 7) CP_OP2("vpaddd", 3, 2, 7, 6)            \
    CP_OP2("vpxor", 2, 1, 6, 5) CP_ROTL(1, 12, l, r) CP_ROTL(5, 13, l, r)
/* Two quarter rounds on the words at byte offsets (a b c d), (e f g h). */
#define CP_STEP(a, b, c, d, e, f, g, h)                                      \
    CP_L(0, a) CP_L(1, b) CP_L(2, c) CP_L(3, d)                               \
    CP_L(4, e) CP_L(5, f) CP_L(6, g) CP_L(7, h)                               \
    CP_HALF(14, 12, 20) CP_HALF(15, 7, 25)                                    \
    CP_S(0, a) CP_S(1, b) CP_S(2, c) CP_S(3, d)                               \
    CP_S(4, e) CP_S(5, f) CP_S(6, g) CP_S(7, h)
/* Batch B's (0 or 512) column and diagonal rounds. */
#define CP_COLS(B)                                                           \
    CP_STEP(B+0, B+128, B+256, B+384, B+32, B+160, B+288, B+416)              \
    CP_STEP(B+64, B+192, B+320, B+448, B+96, B+224, B+352, B+480)
#define CP_DIAGS(B)                                                          \
    CP_STEP(B+0, B+160, B+320, B+480, B+32, B+192, B+352, B+384)              \
    CP_STEP(B+64, B+224, B+256, B+416, B+96, B+128, B+288, B+448)
#define CP_COPY(off) "vmovdqa " #off "(%[i]), %%ymm12\n\t" "vmovdqa %%ymm12, " #off "(%[s])\n\t"
#define CP_COPY4(off) CP_COPY(off) CP_COPY(off+32) CP_COPY(off+64) CP_COPY(off+96)

/*
 * Two whole 8-lane batches: out[0..1023] = in ^ keystream, X from the
 * column input state init[0..15], Y from init[16..31] (its counters 8 on);
 * st[32] (32-byte aligned) holds the round state. Both arrays are as
 * secret as the key: the caller wipes them.
 */
/*
 * A pair's asm around its double-round loop body: the patterns to ymm14
 * ymm15, init (%[i]) copied to st (%[s]), 10 rounds of the body, then each
 * batch fed forward and stored by store (%[o]: its 512 bytes), next moving
 * the pointers from X's to Y's. The operands: [n] the round counter, [s]
 * [i] [o] (and what store and next use), [r16] [r8].
 */
#define CP_PAIR_ASM(body, store, next)                                       \
    "vmovdqa %[r16], %%ymm14\n\t"                                             \
    "vmovdqa %[r8], %%ymm15\n\t"                                              \
    CP_COPY4(0) CP_COPY4(128) CP_COPY4(256) CP_COPY4(384)                     \
    CP_COPY4(512) CP_COPY4(640) CP_COPY4(768) CP_COPY4(896)                   \
    "movl $10, %[n]\n\t"                                                      \
    ".p2align 5\n"                                                            \
    "1:\n\t"                                                                  \
    body                                                                      \
    "decl %[n]\n\t"                                                           \
    "jnz 1b\n\t"                                                              \
    CC_LOAD_FROM(s)                                                           \
    store                                                                     \
    "addq $512, %[s]\n\t"                                                     \
    "addq $512, %[i]\n\t"                                                     \
    "addq $512, %[o]\n\t"                                                     \
    next                                                                      \
    CC_LOAD_FROM(s)                                                           \
    store

CHAPOLY_INLINE void cols_pair_full_asm_ymm(const __m256i init[32], __m256i st[32],
                                           const __m256i rot[2], uint8_t *out,
                                           const uint8_t *in)
{
    unsigned n;
    uintptr_t s = (uintptr_t)st, i = (uintptr_t)init, o = (uintptr_t)out, x = (uintptr_t)in;

    __asm__(CP_PAIR_ASM(CP_COLS(0) CP_COLS(512) CP_DIAGS(0) CP_DIAGS(512), CC_FEED_XOR_STORE,
                        "addq $512, %[x]\n\t")
            : "=m"(*(uint8_t(*)[1024])out), "=m"(*(__m256i(*)[32])st), [n] "=&r"(n),
              [s] "+r"(s), [i] "+r"(i), [o] "+r"(o), [x] "+r"(x)
            : "m"(*(const __m256i(*)[32])init), "m"(*(const uint8_t(*)[1024])in),
              [r16] "m"(rot[0]), [r8] "m"(rot[1])
            : "cc", CC_CLOBBERS);
}

/*
 * Partial blocks straight from keystream registers (the avx2 ChaCha20 and
 * the zmm batches' last block): whole 32/16-byte pieces, then 8/4/2/1 bytes,
 * nothing read or written past n, no masked store: the MAC's loads of the
 * ciphertext right after can wait long on a byte-masked store's bytes
 * (docs/performance.md).
 */
CHAPOLY_INLINE void xor32(uint8_t *out, const uint8_t *in, __m256i ks)
{
    _mm256_storeu_si256((__m256i *)out,
                        XOR8(_mm256_loadu_si256((const __m256i *)in), ks));
}

/*
 * The first n (0..15) bytes of 16 keystream bytes held in k: 8/4/2/1-byte
 * steps from the register. Fixed-size memcpy compiles to a single
 * unaligned load or store.
 */
CHAPOLY_INLINE void xor_tail16_xmm(uint8_t *out, const uint8_t *in, __m128i k, size_t n)
{
    uint64_t t = (uint64_t)_mm_cvtsi128_si64(k);
    if (n >= 8) {
        uint64_t v;
        memcpy(&v, in, 8);
        v ^= t;
        memcpy(out, &v, 8);
        out += 8;
        in += 8;
        n -= 8;
        t = (uint64_t)_mm_extract_epi64(k, 1);
    }
    if (n >= 4) {
        uint32_t v;
        memcpy(&v, in, 4);
        v ^= (uint32_t)t;
        memcpy(out, &v, 4);
        out += 4;
        in += 4;
        n -= 4;
        t >>= 32;
    }
    if (n >= 2) {
        uint16_t v;
        memcpy(&v, in, 2);
        v ^= (uint16_t)t;
        memcpy(out, &v, 2);
        out += 2;
        in += 2;
        n -= 2;
        t >>= 16;
    }
    if (n)
        *out = (uint8_t)(*in ^ (uint8_t)t);
}

/* The first n (1..63) bytes of a keystream block held as (lo, hi) halves. */
CHAPOLY_INLINE void xor_tail(uint8_t *out, const uint8_t *in, __m256i lo,
                             __m256i hi, size_t n)
{
    if (n >= 32) {
        xor32(out, in, lo);
        out += 32;
        in += 32;
        n -= 32;
        lo = hi;
    }
    __m128i k = _mm256_castsi256_si128(lo);
    if (n >= 16) {
        _mm_storeu_si128((__m128i *)out,
                         _mm_xor_si128(_mm_loadu_si128((const __m128i *)in), k));
        out += 16;
        in += 16;
        n -= 16;
        k = _mm256_extracti128_si256(lo, 1);
    }
    xor_tail16_xmm(out, in, k, n);
}

#endif
