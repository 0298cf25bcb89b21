/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chacha20_multi_blocks for the "avx2" level: n independent blocks, each
 * with its own input state (key, counter, nonce), for the batched AEAD
 * (core/aead_batch.c). Up to four blocks (and what is left after the
 * column groups below): row layout, which takes per-block states as they
 * are: a ymm row set holds two blocks (one per 128-bit lane), and two row
 * sets run interleaved (four blocks, two dependency chains); an odd last
 * block gets a zero partner state whose block is never stored. The
 * feed-forward re-reads the input states from memory.
 *
 * Five or more blocks: groups of eight as one 8-lane column batch (lane l
 * = block l of the group; cols_batch_asm_ymm, chacha20_ymm.h): the states
 * are transposed to word-major order on the way in and back on the way
 * out. A last group of 5..7 blocks fills its empty lanes with a copy of
 * its first state and stores only its own blocks; 1..4 blocks left go to
 * the row sets.
 *
 * Rotates: by 16 and 8 with vpshufb, by 12 and 7 with shift + shift + or.
 * The compiler may spill row state (as secret as the key: the rounds are
 * invertible) and the column batches keep their state in stack arrays,
 * so both run out of line and the caller scrubs their frames afterwards.
 * The compiler ends every function that touches ymm with vzeroupper.
 */
#include "chacha20_ymm.h"

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

/* Row r (0..3) of states j (lane 0) and j + 1 (lane 1, zeros if absent). */
CHAPOLY_INLINE __m256i row_pair(const uint32_t *states, size_t j, size_t n, int r)
{
    __m128i lo = _mm_loadu_si128((const __m128i *)(states + 16 * j + 4 * r));
    __m128i hi = j + 1 < n ? _mm_loadu_si128((const __m128i *)(states + 16 * (j + 1) + 4 * r))
                           : _mm_setzero_si128();

    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* Blocks j (lane 0) and j + 1 (lane 1, if present) of a row set, fed forward. */
CHAPOLY_INLINE void store_pair(uint8_t *out, const uint32_t *states, size_t j, size_t n,
                               __m256i a, __m256i b, __m256i c, __m256i d)
{
    a = ADD8(a, row_pair(states, j, n, 0));
    b = ADD8(b, row_pair(states, j, n, 1));
    c = ADD8(c, row_pair(states, j, n, 2));
    d = ADD8(d, row_pair(states, j, n, 3));
    _mm256_storeu_si256((__m256i *)(out + 64 * j), _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256((__m256i *)(out + 64 * j + 32), _mm256_permute2x128_si256(c, d, 0x20));
    if (j + 1 < n) {
        _mm256_storeu_si256((__m256i *)(out + 64 * j + 64),
                            _mm256_permute2x128_si256(a, b, 0x31));
        _mm256_storeu_si256((__m256i *)(out + 64 * j + 96),
                            _mm256_permute2x128_si256(c, d, 0x31));
    }
}

static __attribute__((noinline)) void multi_rows(uint8_t *out, const uint32_t *states, size_t n)
{
    const __m256i r16 = _mm256_setr_epi8(ROT16_BYTES, ROT16_BYTES);
    const __m256i r8 = _mm256_setr_epi8(ROT8_BYTES, ROT8_BYTES);
    size_t j = 0;

    for (; j + 2 < n; j += 4) { /* three or four blocks: two row sets */
        __m256i a = row_pair(states, j, n, 0), b = row_pair(states, j, n, 1);
        __m256i c = row_pair(states, j, n, 2), d = row_pair(states, j, n, 3);
        __m256i p = row_pair(states, j + 2, n, 0), q = row_pair(states, j + 2, n, 1);
        __m256i r = row_pair(states, j + 2, n, 2), s = row_pair(states, j + 2, n, 3);

        ROUNDS_ROWS2_YMM(a, b, c, d, p, q, r, s);
        OPAQUE_PTR(states);
        store_pair(out, states, j, n, a, b, c, d);
        store_pair(out, states, j + 2, n, p, q, r, s);
    }
    if (j < n) { /* one or two blocks: one row set */
        __m256i a = row_pair(states, j, n, 0), b = row_pair(states, j, n, 1);
        __m256i c = row_pair(states, j, n, 2), d = row_pair(states, j, n, 3);

        ROUNDS_ROWS_YMM(a, b, c, d);
        OPAQUE_PTR(states);
        store_pair(out, states, j, n, a, b, c, d);
    }
}

/* vpshufb patterns rotating each 32-bit word left by 16 and by 8 bits. */
static const __m256i rot_tbl[2] = {
    { 0x0504070601000302LL, 0x0d0c0f0e09080b0aLL, 0x0504070601000302LL, 0x0d0c0f0e09080b0aLL },
    { 0x0605040702010003LL, 0x0e0d0c0f0a09080bLL, 0x0605040702010003LL, 0x0e0d0c0f0a09080bLL },
};

/*
 * Words 4q..4q+3 of the eight states p[0..7] as columns: lane l of init[4q + k]
 * = word 4q + k of p[l]. Blocks l and l + 4 share a register (one per
 * 128-bit lane) before the 4x4 transpose inside the lanes (cheaper than
 * scalar stores into init: docs/performance.md).
 */
CHAPOLY_INLINE void cols_in_quad(__m256i init[16], const uint32_t *const p[8], int q)
{
    __m256i r0 = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p[0] + 4 * q))),
        _mm_loadu_si128((const __m128i *)(p[4] + 4 * q)), 1);
    __m256i r1 = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p[1] + 4 * q))),
        _mm_loadu_si128((const __m128i *)(p[5] + 4 * q)), 1);
    __m256i r2 = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p[2] + 4 * q))),
        _mm_loadu_si128((const __m128i *)(p[6] + 4 * q)), 1);
    __m256i r3 = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(p[3] + 4 * q))),
        _mm_loadu_si128((const __m128i *)(p[7] + 4 * q)), 1);

    UNPACK4_YMM(r0, r1, r2, r3);
    _mm256_store_si256(init + 4 * q, r0);
    _mm256_store_si256(init + 4 * q + 1, r1);
    _mm256_store_si256(init + 4 * q + 2, r2);
    _mm256_store_si256(init + 4 * q + 3, r3);
}

/* Raw block idx of a group of nb (5..8): stored only if the group owns it. */
#define RAW_BLOCK_PART(out, in, lo, hi, idx, nb)                            \
    do {                                                                    \
        (void)(in);                                                         \
        if ((idx) < (nb)) {                                                 \
            _mm256_storeu_si256((__m256i *)((out) + 64 * (idx)), lo);       \
            _mm256_storeu_si256((__m256i *)((out) + 64 * (idx) + 32), hi);  \
        }                                                                   \
    } while (0)

/*
 * Groups of eight blocks as 8-lane column batches while five or more are
 * left, the last of 5..7 blocks padded with copies of its first state.
 * Returns the number of blocks done (the rest, 0..4, for multi_rows). The
 * column states and the batch output are as secret as the key: they stay
 * in this frame, which the caller scrubs.
 */
/* The input of a pair made as raw keystream (0 ^ keystream). */
static const _Alignas(32) uint8_t multi_zeros[1024];

static __attribute__((noinline)) size_t multi_cols(uint8_t *out, const uint32_t *states, size_t n,
                                                   int pairs)
{
    _Alignas(32) __m256i init[32];
    _Alignas(32) __m256i w[32];
    size_t j = 0;

    for (; pairs && n - j >= 16; j += 16) { /* two groups in flight: keystream = 0 ^ keystream */
        const uint32_t *p[8];

        for (size_t l = 0; l < 8; l++)
            p[l] = states + 16 * (j + l);
        for (int q = 0; q < 4; q++)
            cols_in_quad(init, p, q);
        for (size_t l = 0; l < 8; l++)
            p[l] = states + 16 * (j + 8 + l);
        for (int q = 0; q < 4; q++)
            cols_in_quad(init + 16, p, q);
        cols_pair_full_asm_ymm(init, w, rot_tbl, out + 64 * j, multi_zeros);
    }
    while (n - j >= 5) {
        size_t nb = n - j >= 8 ? 8 : n - j;
        const uint32_t *p[8];

        for (size_t l = 0; l < 8; l++) /* public: n */
            p[l] = states + 16 * (j + (l < nb ? l : 0));
        for (int q = 0; q < 4; q++)
            cols_in_quad(init, p, q);
        cols_batch_asm_ymm(init, w, rot_tbl);

        __m256i x0 = w[0], x1 = w[1], x2 = w[2], x3 = w[3];
        __m256i x4 = w[4], x5 = w[5], x6 = w[6], x7 = w[7];
        __m256i x8 = w[8], x9 = w[9], x10 = w[10], x11 = w[11];
        __m256i x12 = w[12], x13 = w[13], x14 = w[14], x15 = w[15];
        uint8_t *o = out + 64 * j;

        COLS_TRANSPOSE_YMM();
        COLS_STORE_YMM(RAW_BLOCK_PART, o, NULL, nb);
        j += nb;
    }
    return j;
}

/*
 * The frames (objdump, optimised): multi_rows about 0x100 bytes;
 * multi_cols, with init and w (2 KiB: a pair of groups) and a few spills,
 * about 0x7f0 (GCC 12): 3 KiB after it, which covers multi_rows after it
 * too.
 */
CHAPOLY_DEFINE_SCRUB(scrub_stack_1k, 1024)
CHAPOLY_DEFINE_SCRUB(scrub_stack_3k, 3072)

void chacha20_multi_blocks_avx2(const chapoly_kernels *kt, uint8_t *out, const uint32_t *states, size_t n)
{
    size_t done = 0;

    if (n == 0)
        return;
    if (n >= 5)
        done = multi_cols(out, states, n, kt->shapes.chacha_pairs_min != 0);
    if (done < n)
        multi_rows(out + 64 * done, states + 16 * done, n - done);
    if (done != 0) /* public: n */
        scrub_stack_3k();
    else
        scrub_stack_1k();
}

/* ---- poly1305_multi_blocks in front of poly1305_blocks_avx2 ---- */

#include "batch_poly.h"

void poly1305_multi_blocks_avx2(const chapoly_kernels *kt, poly1305_state *const st[], const uint8_t *const in[],
                                const size_t len[], size_t n)
{
    multi_poly(kt, st, in, len, n, poly1305_blocks_avx2);
}

/* ---- chacha20_multi_blocks_hash: Poly1305 rows beside pairs of column batches ---- */

/*
 * A row of the stitched hash: nb blocks at m into the state priv p (hash
 * at W_H, key r0 r1 s1 at W_KEY), its poly1305_state st.
 */
typedef struct {
    uint64_t *p;
    const uint8_t *m;
    uint64_t nb; /* blocks left */
    poly1305_state *st;
} hash_row;
_Static_assert(sizeof(hash_row) == 32, "the asm steps rows 32 bytes apart");
_Static_assert(W_H == 0 && W_KEY == 3, "the asm reads the hash at 0, the key at 24");

#define HASH_ROWS_MAX 64

#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
    !defined(CHAPOLY_BATCH_POLY_SANITIZED)
/*
 * One Poly1305 block of the current row (the step of aead_avx2.c's PB,
 * the key words memory operands of the row's state), then: the row done,
 * its hash goes back to its state and the next row's comes in. Nothing
 * when no block is left (tot). Numeric labels: one copy per slot.
 */
#define HR_BLOCK                                                             \
    "cmpq $0, %[tot]\n\t"                                                     \
    "je 8f\n\t"                                                               \
    SC_STEP_ASM("24(%[p])", "32(%[p])", "40(%[p])")                          \
    "decq %[tot]\n\t"                                                         \
    "decq 16(%[r])\n\t"                                                       \
    "jnz 8f\n\t"                                                              \
    "movq %[h0], 0(%[p])\n\t"                                                 \
    "movq %[h1], 8(%[p])\n\t"                                                 \
    "movq %[h2], 16(%[p])\n\t"                                                \
    "cmpq $0, %[tot]\n\t"                                                     \
    "je 8f\n\t"                                                               \
    "addq $32, %[r]\n\t"                                                      \
    "movq 0(%[r]), %[p]\n\t"                                                  \
    "movq 8(%[r]), %[m]\n\t"                                                  \
    "movq 0(%[p]), %[h0]\n\t"                                                 \
    "movq 8(%[p]), %[h1]\n\t"                                                 \
    "movq 16(%[p]), %[h2]\n"                                                  \
    "8:\n\t"
#define CP_STEP_H(a, b, c, d, e, f, g, h) CP_STEP(a, b, c, d, e, f, g, h) HR_BLOCK

/*
 * A pair of 8-lane batches (CP_PAIR_ASM; raw keystream, 1 KiB at out) with
 * Poly1305 blocks of the rows from *r on (tot blocks in all) after each of
 * batch X's steps, and with Y (the Y steps' slot HR_BLOCK, else nothing)
 * after Y's too: 40 or 80 blocks a pair (what each costs beside the pair:
 * docs/performance.md, "Measurements behind the code"). The cursor (row,
 * its next block) and tot move on; a row left unfinished gets its hash
 * stored and its next block in r->m. The hash words are zeroed in the
 * registers at the end.
 */
#define PAIR_HASH_FN(name, Y)                                                                \
    static __attribute__((noinline)) void name(const __m256i init[32], __m256i st[32],      \
                                               uint8_t *out, hash_row **cur, uint64_t *tot) \
    {                                                                                        \
        unsigned n;                                                                          \
        uintptr_t s = (uintptr_t)st, i = (uintptr_t)init, o = (uintptr_t)out;               \
        hash_row *r = *cur;                                                                  \
        uint64_t *p = r->p;                                                                  \
        const uint8_t *m = r->m;                                                             \
        uint64_t h0 = p[W_H], h1 = p[W_H + 1], h2 = p[W_H + 2], pa, pb, pc, pe;              \
                                                                                             \
        __asm__ volatile(                                                                    \
            CP_PAIR_ASM(CP_STEP_H(0, 128, 256, 384, 32, 160, 288, 416)                       \
                        CP_STEP_H(64, 192, 320, 448, 96, 224, 352, 480)                      \
                        CP_STEP(512, 640, 768, 896, 544, 672, 800, 928) Y                    \
                        CP_STEP(576, 704, 832, 960, 608, 736, 864, 992) Y                    \
                        CP_STEP_H(0, 160, 320, 480, 32, 192, 352, 384)                       \
                        CP_STEP_H(64, 224, 256, 416, 96, 128, 288, 448)                      \
                        CP_STEP(512, 672, 832, 992, 544, 704, 864, 896) Y                    \
                        CP_STEP(576, 736, 768, 928, 608, 640, 800, 960) Y,                   \
                        CC_FEED_STORE_WITH(CC_ST2, CC_ST2), "")                              \
            /* an unfinished row: its hash and next block back */                           \
            "cmpq $0, %[tot]\n\t"                                                            \
            "je 9f\n\t"                                                                      \
            "movq %[h0], 0(%[p])\n\t"                                                        \
            "movq %[h1], 8(%[p])\n\t"                                                        \
            "movq %[h2], 16(%[p])\n\t"                                                       \
            "movq %[m], 8(%[r])\n"                                                           \
            "9:\n\t"                                                                         \
            "xorl %k[h0], %k[h0]\n\t"                                                        \
            "xorl %k[h1], %k[h1]\n\t"                                                        \
            "xorl %k[h2], %k[h2]\n\t"                                                        \
            "xorl %k[pa], %k[pa]\n\t"                                                        \
            "xorl %k[pb], %k[pb]\n\t"                                                        \
            "xorl %k[pc], %k[pc]\n\t"                                                        \
            "xorl %k[pe], %k[pe]\n\t"                                                        \
            "xorl %%edx, %%edx\n\t"                                                          \
            : [n] "=m"(n), [s] "+r"(s), [i] "+r"(i), [o] "+r"(o), [h0] "+r"(h0),             \
              [h1] "+r"(h1), [h2] "+r"(h2), [pa] "=&r"(pa), [pb] "=&r"(pb), [pc] "=&r"(pc), \
              [pe] "=&r"(pe), [m] "+r"(m), [p] "+r"(p), [r] "+r"(r), [tot] "+m"(*tot)      \
            : [r16] "m"(rot_tbl[0]), [r8] "m"(rot_tbl[1])                                    \
            : "cc", "rdx", "memory", CC_CLOBBERS);                                           \
        *cur = r;                                                                            \
    }
PAIR_HASH_FN(pair_hash_asm, HR_BLOCK)
/* 40 slots, after X's steps only: sparse rows stay off each other's latency */
PAIR_HASH_FN(pair_hash40_asm, "")

/* 16 blocks from their input states as a pair, hashing rows while any are left. */
static __attribute__((noinline)) void pair_from_states(uint8_t *out, const uint32_t *states, hash_row **cur, uint64_t *tot)
{
    _Alignas(32) __m256i init[32];
    _Alignas(32) __m256i w[32];
    const uint32_t *pp[8];

    for (size_t l = 0; l < 8; l++)
        pp[l] = states + 16 * l;
    for (int q = 0; q < 4; q++)
        cols_in_quad(init, pp, q);
    for (size_t l = 0; l < 8; l++)
        pp[l] = states + 16 * (8 + l);
    for (int q = 0; q < 4; q++)
        cols_in_quad(init + 16, pp, q);
    if (*tot >= 64)
        pair_hash_asm(init, w, out, cur, tot);
    else if (*tot > 0)
        pair_hash40_asm(init, w, out, cur, tot);
    else
        cols_pair_full_asm_ymm(init, w, rot_tbl, out, multi_zeros);
}
#define CHAPOLY_MULTI_HASH 1
#endif

/*
 * Pairs of 8-lane batches (16 blocks each) hashing the rows (scalar hash:
 * pending lanes folded first) up to 80 blocks a pair; the blocks after the
 * last pair as chacha20_multi_blocks. The frame holds the column states
 * (as secret as the key) and whatever the compiler spills: scrubbed as
 * multi_cols'.
 */
void chacha20_multi_blocks_hash_avx2(const chapoly_kernels *kt, uint8_t *out, const uint32_t *states,
                                     size_t n, poly1305_state *const st[], const uint8_t *in[],
                                     size_t len[], size_t nh)
{
#ifdef CHAPOLY_MULTI_HASH
    hash_row rows[HASH_ROWS_MAX];
    uint64_t first[HASH_ROWS_MAX], tot = 0;
    size_t idx[HASH_ROWS_MAX], nr = 0, j = 0;

    if (n >= 16 && kt->shapes.multi_stitch != 0) {
        for (size_t q = 0; q < nh && nr < HASH_ROWS_MAX; q++) {
            uint64_t nb = len[q] / POLY1305_BLOCK_BYTES;

            if (nb == 0)
                continue;
            if (st[q]->priv[W_STATE] != 0)
                poly1305_scalar_avx2(st[q]->priv); /* pending lanes folded: the scalar hash */
            rows[nr] = (hash_row){ st[q]->priv, in[q], nb, st[q] };
            idx[nr] = q;
            first[nr++] = nb;
            tot += nb;
        }
    }
    if (tot == 0) {
        chacha20_multi_blocks_avx2(kt, out, states, n);
        return;
    }
    hash_row *cur = rows;

    for (; n - j >= 16; j += 16)
        pair_from_states(out + 64 * j, states + 16 * j, &cur, &tot);
    scrub_stack_3k();
    if (j < n)
        chacha20_multi_blocks_avx2(kt, out + 64 * j, states + 16 * j, n - j);
    for (size_t q = 0; q < nr; q++) {
        uint64_t *p = rows[q].p, done = first[q] - rows[q].nb;

        put64(p + W_SCALAR, p[W_SCALAR] + done);
        in[idx[q]] += 16 * done;
        len[idx[q]] -= 16 * done;
    }
#else
    (void)st;
    (void)in;
    (void)len;
    (void)nh;
    chacha20_multi_blocks_avx2(kt, out, states, n);
#endif
}
