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

/* op on four register pairs: zmm a_k = zmm a_k op zmm b_k */
#define ZP_OP1(op, a, b) op " %%zmm" #b ", %%zmm" #a ", %%zmm" #a "\n\t"
#define ZP_OP4(op, a0, b0, a1, b1, a2, b2, a3, b3)                             \
    ZP_OP1(op, a0, b0) ZP_OP1(op, a1, b1) ZP_OP1(op, a2, b2) ZP_OP1(op, a3, b3)
#define ZP_ROL1(n, d) "vprold $" #n ", %%zmm" #d ", %%zmm" #d "\n\t"
#define ZP_ROL4(n, d0, d1, d2, d3) ZP_ROL1(n, d0) ZP_ROL1(n, d1) ZP_ROL1(n, d2) ZP_ROL1(n, d3)
/*
 * Four quarter rounds of x (A_k B_k C_k D_k) and four of y (E_k F_k G_k
 * H_k), each group in lockstep (four independent ops a step), y one step
 * behind x: every step pairs a rotate of one group with an add or xor of
 * the other, so the rotates (fewer ports than adds and xors on some
 * cores) spread evenly and eight independent ops are ready each step.
 */
#define ZP_HALF(A0, B0, C0, D0, A1, B1, C1, D1, A2, B2, C2, D2, A3, B3, C3, D3, \
                E0, F0, G0, H0, E1, F1, G1, H1, E2, F2, G2, H2, E3, F3, G3, H3) \
    ZP_OP4("vpaddd", A0, B0, A1, B1, A2, B2, A3, B3)                           \
    ZP_OP4("vpxord", D0, A0, D1, A1, D2, A2, D3, A3)                           \
    ZP_OP4("vpaddd", E0, F0, E1, F1, E2, F2, E3, F3)                           \
    ZP_ROL4(16, D0, D1, D2, D3)                                                \
    ZP_OP4("vpxord", H0, E0, H1, E1, H2, E2, H3, E3)                           \
    ZP_OP4("vpaddd", C0, D0, C1, D1, C2, D2, C3, D3)                           \
    ZP_ROL4(16, H0, H1, H2, H3)                                                \
    ZP_OP4("vpxord", B0, C0, B1, C1, B2, C2, B3, C3)                           \
    ZP_OP4("vpaddd", G0, H0, G1, H1, G2, H2, G3, H3)                           \
    ZP_ROL4(12, B0, B1, B2, B3)                                                \
    ZP_OP4("vpxord", F0, G0, F1, G1, F2, G2, F3, G3)                           \
    ZP_OP4("vpaddd", A0, B0, A1, B1, A2, B2, A3, B3)                           \
    ZP_ROL4(12, F0, F1, F2, F3)                                                \
    ZP_OP4("vpxord", D0, A0, D1, A1, D2, A2, D3, A3)                           \
    ZP_OP4("vpaddd", E0, F0, E1, F1, E2, F2, E3, F3)                           \
    ZP_ROL4(8, D0, D1, D2, D3)                                                 \
    ZP_OP4("vpxord", H0, E0, H1, E1, H2, E2, H3, E3)                           \
    ZP_OP4("vpaddd", C0, D0, C1, D1, C2, D2, C3, D3)                           \
    ZP_ROL4(8, H0, H1, H2, H3)                                                 \
    ZP_OP4("vpxord", B0, C0, B1, C1, B2, C2, B3, C3)                           \
    ZP_OP4("vpaddd", G0, H0, G1, H1, G2, H2, G3, H3)                           \
    ZP_ROL4(7, B0, B1, B2, B3)                                                 \
    ZP_OP4("vpxord", F0, G0, F1, G1, F2, G2, F3, G3)                           \
    ZP_ROL4(7, F0, F1, F2, F3)
/* columns, then diagonals, of x (zmm0-15) and y (zmm16-31) */
#define ZP_DROUND                                                              \
    ZP_HALF(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,              \
            16, 20, 24, 28, 17, 21, 25, 29, 18, 22, 26, 30, 19, 23, 27, 31)    \
    ZP_HALF(0, 5, 10, 15, 1, 6, 11, 12, 2, 7, 8, 13, 3, 4, 9, 14,              \
            16, 21, 26, 31, 17, 22, 27, 28, 18, 23, 24, 29, 19, 20, 25, 30)
#define ZP_ST4(r0, r1, r2, r3, o)                                              \
    "vmovdqa64 %%zmm" #r0 ", " #o "(%[s])\n\t"                                 \
    "vmovdqa64 %%zmm" #r1 ", " #o "+64(%[s])\n\t"                              \
    "vmovdqa64 %%zmm" #r2 ", " #o "+128(%[s])\n\t"                             \
    "vmovdqa64 %%zmm" #r3 ", " #o "+192(%[s])\n\t"
/* y = x (zmm16 + i = zmm i), then y's counters 16 on */
#define ZP_XY(i, j) "vmovdqa64 %%zmm" #i ", %%zmm" #j "\n\t"
#define ZP_COPY_XY                                                             \
    ZP_XY(0, 16) ZP_XY(1, 17) ZP_XY(2, 18) ZP_XY(3, 19) ZP_XY(4, 20)           \
    ZP_XY(5, 21) ZP_XY(6, 22) ZP_XY(7, 23) ZP_XY(8, 24) ZP_XY(9, 25)           \
    ZP_XY(10, 26) ZP_XY(11, 27) ZP_XY(12, 28) ZP_XY(13, 29) ZP_XY(14, 30)      \
    ZP_XY(15, 31) "vpaddd 128(%[sg]), %%zmm28, %%zmm28\n\t"

/* x: sixteen zmm register variables bound to zmm0-15 (asm operands) */
#define ZP_XREGS                                                               \
    register __m512i x0 __asm__("zmm0"), x1 __asm__("zmm1"), x2 __asm__("zmm2"); \
    register __m512i x3 __asm__("zmm3"), x4 __asm__("zmm4"), x5 __asm__("zmm5"); \
    register __m512i x6 __asm__("zmm6"), x7 __asm__("zmm7"), x8 __asm__("zmm8"); \
    register __m512i x9 __asm__("zmm9"), x10 __asm__("zmm10");                 \
    register __m512i x11 __asm__("zmm11"), x12 __asm__("zmm12");               \
    register __m512i x13 __asm__("zmm13"), x14 __asm__("zmm14");               \
    register __m512i x15 __asm__("zmm15")

/*
 * The input state of batch x made in zmm0-15 (the C variables x0..x15 of
 * the caller, outputs) and of batch y (x with counters 16 on) in
 * zmm16-31, then ten double rounds of both in one asm loop; y is stored to
 * st[16] at the end, x stays in registers. Nothing is loaded from a vector
 * just stored (a 512-bit load is not forwarded from 512-bit stores on AMD
 * Zen 4/5: it waits for them), and st is read only after x is fed forward
 * and stored. k: the key words, cn: counter and nonce (counter c0 here).
 */
#define ZP_BC(o, r) "vpbroadcastd " #o "(%[k]), %%zmm" #r "\n\t"
#define ZP_ROUNDS2(st_, key_, cn_, c0_)                                        \
    do {                                                                       \
        unsigned n_;                                                           \
        __asm__("vpbroadcastd 0(%[sg]), %%zmm0\n\t"                            \
                "vpbroadcastd 4(%[sg]), %%zmm1\n\t"                            \
                "vpbroadcastd 8(%[sg]), %%zmm2\n\t"                            \
                "vpbroadcastd 12(%[sg]), %%zmm3\n\t"                           \
                ZP_BC(0, 4) ZP_BC(4, 5) ZP_BC(8, 6) ZP_BC(12, 7)               \
                ZP_BC(16, 8) ZP_BC(20, 9) ZP_BC(24, 10) ZP_BC(28, 11)          \
                "vpbroadcastd %k[c], %%zmm12\n\t"                              \
                "vpaddd 64(%[sg]), %%zmm12, %%zmm12\n\t"                       \
                "vpbroadcastd 4(%[cn]), %%zmm13\n\t"                           \
                "vpbroadcastd 8(%[cn]), %%zmm14\n\t"                           \
                "vpbroadcastd 12(%[cn]), %%zmm15\n\t"                          \
                ZP_COPY_XY                                                     \
                "movl $10, %[n]\n\t"                                           \
                ".p2align 6\n"                                                 \
                "1:\n\t"                                                       \
                ZP_DROUND                                                      \
                "decl %[n]\n\t"                                                \
                "jnz 1b\n\t"                                                   \
                ZP_ST4(16, 17, 18, 19, 0) ZP_ST4(20, 21, 22, 23, 256)          \
                ZP_ST4(24, 25, 26, 27, 512) ZP_ST4(28, 29, 30, 31, 768)        \
                : "=v"(x0), "=v"(x1), "=v"(x2), "=v"(x3), "=v"(x4), "=v"(x5),  \
                  "=v"(x6), "=v"(x7), "=v"(x8), "=v"(x9), "=v"(x10), "=v"(x11), \
                  "=v"(x12), "=v"(x13), "=v"(x14), "=v"(x15),                  \
                  "=m"(*(__m512i(*)[16])(st_)), [n] "=&r"(n_)                  \
                : [s] "r"(st_), [sg] "r"(zp_consts), [k] "r"(key_), [cn] "r"(cn_), \
                  [c] "r"(c0_), "m"(*(const uint32_t(*)[8])(key_)),            \
                  "m"(*(const uint32_t(*)[4])(cn_)), "m"(zp_consts)            \
                : "cc", R16_23, R24_31);                                       \
    } while (0)
/* sigma (words 0..3), then at byte 64 the lane counters 0..15, at 128 sixteen 16s */
_Alignas(64) static const uint32_t zp_consts[48] = {
    SIGMA0, SIGMA1, SIGMA2, SIGMA3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16
};

/*
 * Two whole column batches in flight (2048 bytes, counters c0 .. c0 + 31):
 * len is a multiple of 2048, > 0; the rounds in ZP_ROUNDS2, an asm loop.
 * Where dependent vector adds/xors/rotates have a long latency one batch
 * leaves the vector ports half idle; where one batch saturates them
 * already the alternation costs nothing. The compiler's own form (the
 * pair's 32 words as C variables) either spilled words in a loop or, fully
 * unrolled, made more code than the instruction caches hold beside the
 * IFMA Poly1305 and the rest of a seal (docs/performance.md). st holds y's
 * round state until it is fed forward (as secret as the key): wiped here.
 */
static __attribute__((noinline)) void
cols32_full_zmm(uint8_t *key_block, uint8_t *out, const uint8_t *in, size_t len,
                const uint32_t key_words[8], const uint32_t ctr_nonce_words[4])
{
    _Alignas(64) __m512i st[16];
    uint32_t c0 = ctr_nonce_words[0];

    for (; len > 0; len -= 2048, in += 2048, out += 2048, c0 += 32) {
        const uint32_t *key = key_words, *ctr_nonce = ctr_nonce_words;

        OPAQUE_PTR(key);
        OPAQUE_PTR(ctr_nonce);
        {
            ZP_XREGS;

            ZP_ROUNDS2(st, key, ctr_nonce, c0);

            __m512i w0 = x0, w1 = x1, w2 = x2, w3 = x3, w4 = x4, w5 = x5, w6 = x6;
            __m512i w7 = x7, w8 = x8, w9 = x9, w10 = x10, w11 = x11, w12 = x12;
            __m512i w13 = x13, w14 = x14, w15 = x15;

            OPAQUE_PTR(key);
            OPAQUE_PTR(ctr_nonce);
            COLS_FEED_ZMM_P(w, key, ADD16(BCAST16(c0), COLS_CTR_ZMM), ctr_nonce[1],
                            ctr_nonce[2], ctr_nonce[3]);
            COLS_TRANSPOSE_ZMM_P(w);
            COLS_STORE_FULL_ZMM_P(w, key_block, out, in);
            key_block = NULL;
        }
        __asm__ volatile("" : : : "memory"); /* st read only now, not hoisted next to the asm */
        {
            __m512i y0 = st[0], y1 = st[1], y2 = st[2], y3 = st[3], y4 = st[4];
            __m512i y5 = st[5], y6 = st[6], y7 = st[7], y8 = st[8], y9 = st[9];
            __m512i y10 = st[10], y11 = st[11], y12 = st[12], y13 = st[13];
            __m512i y14 = st[14], y15 = st[15];

            OPAQUE_PTR(key);
            OPAQUE_PTR(ctr_nonce);
            COLS_FEED_ZMM_P(y, key, ADD16(BCAST16(c0 + 16), COLS_CTR_ZMM), ctr_nonce[1],
                            ctr_nonce[2], ctr_nonce[3]);
            COLS_TRANSPOSE_ZMM_P(y);
            COLS_STORE_FULL_ZMM_P(y, NULL, out + 1024, in + 1024);
        }
    }
    for (int i = 0; i < 16; i++)
        _mm512_store_si512(&st[i], _mm512_setzero_si512());
    __asm__ volatile("" : : "r"(st) : "memory");
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
 * cols32_full_zmm wipes its state array itself; GCC keeps everything else
 * of it in registers (the frame holds only the sigma broadcasts, objdump),
 * as the one-batch shapes do, so nothing is scrubbed after them. clang 14
 * parked a broadcast key word in the top slot of cols32_full_zmm's frame,
 * 16..80 bytes below this function's stack pointer: with clang that frame
 * is overwritten right after it (inline asm, kernels_impl.h).
 * test_secrets checks the dead stack after every shape.
 */
#if defined(__clang__)
CHAPOLY_DEFINE_SCRUB(scrub_stack_zmm, 1024)
#else
static inline void scrub_stack_zmm(void) {}
#endif

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
