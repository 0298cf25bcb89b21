/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Portable Poly1305 (RFC 8439 2.5): the oracle for every SIMD level.
 *
 * With unsigned __int128: radix 2^64, h = h0 + 2^64 h1 + 2^128 h2.
 * Otherwise (or with CHAPOLY_POLY1305_32BIT): radix 2^26, five limbs,
 * 32x32->64 multiplies. Both keep h partially reduced between blocks.
 *
 * priv layout (portable level only), one value per 64-bit word:
 *   radix 2^64: [0..2] h0 h1 h2, [3..4] r0 r1, [5] s1 = r1 + r1/4,
 *               [6..7] s (the pad, added at final)
 *   radix 2^26: [0..4] h, [5..9] r, [10..13] 5*r1..5*r4, [14..15] s
 *
 * Dead stack: the compiler keeps key words and the hash in spill slots of
 * the block loop and the final reduction (GCC at -O2 parks r1, 5 r1 / 4 and
 * h1 in the red zone), which nothing overwrites once they return. So the
 * exported init, blocks and final run the work in an out-of-line function
 * and then zero the stack where its frame was (scrub_stack, once per call).
 * Init too: where an unaligned load is assembled from bytes in a stack slot
 * (RISC-V: GCC 12 assumes slow misaligned access there), the slot kept the
 * last key words init loaded, the pad's s bytes 8..15 (test_secrets, riscv64).
 */
#include "kernels_impl.h"

/*
 * Optimised, the arithmetic frames below take at most about 100 bytes on
 * x86-64 (return address, six saved registers, a few red-zone spills, one
 * of them r1). The scrub is a tail call here (GCC), made after the
 * exported function's own frame is popped, so it must also reach as far
 * below as that frame is big: on s390x every calling frame holds the ABI's
 * 160-byte register save area, and blocks_impl's spill slots (GCC 12: h1,
 * h2 s1 and r1) lie 160..248 bytes below the exported function's stack
 * pointer; with 192 bytes test_secrets found them on the dead stack there.
 * 384, as for ChaCha20 (chacha20_portable.c), covers both with a margin.
 * Unoptimised builds keep every local in the frame. test_secrets checks
 * the dead stack after every call.
 */
#ifdef __OPTIMIZE__
#define SCRUB_BYTES 384
#else
#define SCRUB_BYTES 512
#endif

CHAPOLY_DEFINE_SCRUB(scrub_stack, SCRUB_BYTES)

#if defined(__SIZEOF_INT128__) && !defined(CHAPOLY_POLY1305_32BIT)

typedef unsigned __int128 u128;

static CHAPOLY_NOINLINE void init_impl(poly1305_state *st, const uint8_t key[32])
{
    uint64_t *p = st->priv;
    uint64_t r0 = load64_le(key) & 0x0ffffffc0fffffffULL;
    uint64_t r1 = load64_le(key + 8) & 0x0ffffffc0ffffffcULL;

    p[0] = p[1] = p[2] = 0;
    p[3] = r0;
    p[4] = r1;
    p[5] = r1 + (r1 >> 2); /* exact: clamping makes r1 divisible by 4 */
    p[6] = load64_le(key + 16);
    p[7] = load64_le(key + 24);
}

static CHAPOLY_NOINLINE void blocks_impl(poly1305_state *st, const uint8_t *in,
                                   size_t len, unsigned padbit)
{
    uint64_t *p = st->priv;
    uint64_t h0 = p[0], h1 = p[1], h2 = p[2];
    const uint64_t r0 = p[3], r1 = p[4], s1 = p[5];

    /*
     * Carries as 64-bit compares: GCC routed the 128-bit sums of the
     * obvious form through stack slots (h and key words on the stack,
     * and slower).
     */
    while (len >= 16) {
        /* h += m (+ 2^128 padbit). Invariant on entry: h2 <= 4. */
        uint64_t m0 = load64_le(in), m1 = load64_le(in + 8);
        h0 += m0;
        uint64_t c = h0 < m0;
        h1 += c;
        c = h1 < c;
        h1 += m1;
        c += h1 < m1; /* at most one of the two carries */
        h2 += c + padbit;

        /*
         * h * r mod p with 2^128 * r1 == s1 (mod p). r0, r1 < 2^60 and
         * h2 <= 6, so each 128-bit sum below stays under 2^127.
         */
        u128 d0 = (u128)h0 * r0 + (u128)h1 * s1;
        u128 d1 = (u128)h0 * r1 + (u128)h1 * r0;
        uint64_t d2 = h2 * r0;

        d1 += h2 * s1;
        d1 += (uint64_t)(d0 >> 64);
        d2 += (uint64_t)(d1 >> 64);
        h0 = (uint64_t)d0;
        h1 = (uint64_t)d1;

        /* Partial reduction, unconditional: bits >= 130 times 5 back in. */
        c = (d2 & ~(uint64_t)3) + (d2 >> 2);
        h2 = d2 & 3;
        h0 += c;
        c = h0 < c;
        h1 += c;
        h2 += h1 < c;

        in += 16;
        len -= 16;
    }
    p[0] = h0;
    p[1] = h1;
    p[2] = h2;
}

static CHAPOLY_NOINLINE void final_impl(poly1305_state *st, uint8_t tag[16])
{
    uint64_t *p = st->priv;
    uint64_t h0 = p[0], h1 = p[1], h2 = p[2];
    u128 t;

    /* Fold twice: afterwards h < 2^130, so one conditional subtract of p. */
    for (int i = 0; i < 2; i++) {
        uint64_t c = (h2 >> 2) * 5;
        h2 &= 3;
        t = (u128)h0 + c;
        h0 = (uint64_t)t;
        t = (u128)h1 + (uint64_t)(t >> 64);
        h1 = (uint64_t)t;
        h2 += (uint64_t)(t >> 64);
    }

    /* g = h + 5 - 2^130; use g when it did not go negative. */
    t = (u128)h0 + 5;
    uint64_t g0 = (uint64_t)t;
    t = (u128)h1 + (uint64_t)(t >> 64);
    uint64_t g1 = (uint64_t)t;
    uint64_t g2 = h2 + (uint64_t)(t >> 64);
    uint64_t mask = value_barrier_u64(0 - (g2 >> 2));
    h0 = (h0 & ~mask) | (g0 & mask);
    h1 = (h1 & ~mask) | (g1 & mask);

    t = (u128)h0 + p[6];
    h0 = (uint64_t)t;
    h1 = h1 + p[7] + (uint64_t)(t >> 64);
    store64_le(tag, h0);
    store64_le(tag + 8, h1);
    chapoly_wipe(st->priv, 8 * sizeof(uint64_t));
}

#else /* 32-bit limbs */

static CHAPOLY_NOINLINE void init_impl(poly1305_state *st, const uint8_t key[32])
{
    uint64_t *p = st->priv;
    /* r &= 0x0ffffffc0ffffffc0ffffffc0fffffff, split into 26-bit limbs */
    p[5] = (load32_le(key + 0)) & 0x3ffffff;
    p[6] = (load32_le(key + 3) >> 2) & 0x3ffff03;
    p[7] = (load32_le(key + 6) >> 4) & 0x3ffc0ff;
    p[8] = (load32_le(key + 9) >> 6) & 0x3f03fff;
    p[9] = (load32_le(key + 12) >> 8) & 0x00fffff;
    for (int i = 0; i < 4; i++)
        p[10 + i] = p[6 + i] * 5;
    for (int i = 0; i < 5; i++)
        p[i] = 0;
    p[14] = load64_le(key + 16);
    p[15] = load64_le(key + 24);
}

static CHAPOLY_NOINLINE void blocks_impl(poly1305_state *st, const uint8_t *in,
                                   size_t len, unsigned padbit)
{
    uint64_t *p = st->priv;
    const uint32_t hibit = padbit ? (1u << 24) : 0;
    const uint32_t r0 = (uint32_t)p[5], r1 = (uint32_t)p[6], r2 = (uint32_t)p[7],
                   r3 = (uint32_t)p[8], r4 = (uint32_t)p[9];
    const uint32_t s1 = (uint32_t)p[10], s2 = (uint32_t)p[11],
                   s3 = (uint32_t)p[12], s4 = (uint32_t)p[13];
    uint32_t h0 = (uint32_t)p[0], h1 = (uint32_t)p[1], h2 = (uint32_t)p[2],
             h3 = (uint32_t)p[3], h4 = (uint32_t)p[4];

    while (len >= 16) {
        /* limbs stay below 2^26 + small after each carry pass */
        h0 += (load32_le(in + 0)) & 0x3ffffff;
        h1 += (load32_le(in + 3) >> 2) & 0x3ffffff;
        h2 += (load32_le(in + 6) >> 4) & 0x3ffffff;
        h3 += (load32_le(in + 9) >> 6) & 0x3ffffff;
        h4 += (load32_le(in + 12) >> 8) | hibit;

        uint64_t d0 = (uint64_t)h0 * r0 + (uint64_t)h1 * s4 + (uint64_t)h2 * s3 +
                      (uint64_t)h3 * s2 + (uint64_t)h4 * s1;
        uint64_t d1 = (uint64_t)h0 * r1 + (uint64_t)h1 * r0 + (uint64_t)h2 * s4 +
                      (uint64_t)h3 * s3 + (uint64_t)h4 * s2;
        uint64_t d2 = (uint64_t)h0 * r2 + (uint64_t)h1 * r1 + (uint64_t)h2 * r0 +
                      (uint64_t)h3 * s4 + (uint64_t)h4 * s3;
        uint64_t d3 = (uint64_t)h0 * r3 + (uint64_t)h1 * r2 + (uint64_t)h2 * r1 +
                      (uint64_t)h3 * r0 + (uint64_t)h4 * s4;
        uint64_t d4 = (uint64_t)h0 * r4 + (uint64_t)h1 * r3 + (uint64_t)h2 * r2 +
                      (uint64_t)h3 * r1 + (uint64_t)h4 * r0;

        uint32_t c;
        c = (uint32_t)(d0 >> 26); h0 = (uint32_t)d0 & 0x3ffffff;
        d1 += c; c = (uint32_t)(d1 >> 26); h1 = (uint32_t)d1 & 0x3ffffff;
        d2 += c; c = (uint32_t)(d2 >> 26); h2 = (uint32_t)d2 & 0x3ffffff;
        d3 += c; c = (uint32_t)(d3 >> 26); h3 = (uint32_t)d3 & 0x3ffffff;
        d4 += c; c = (uint32_t)(d4 >> 26); h4 = (uint32_t)d4 & 0x3ffffff;
        h0 += c * 5; c = h0 >> 26; h0 &= 0x3ffffff;
        h1 += c;

        in += 16;
        len -= 16;
    }
    p[0] = h0; p[1] = h1; p[2] = h2; p[3] = h3; p[4] = h4;
}

static CHAPOLY_NOINLINE void final_impl(poly1305_state *st, uint8_t tag[16])
{
    uint64_t *p = st->priv;
    uint32_t h0 = (uint32_t)p[0], h1 = (uint32_t)p[1], h2 = (uint32_t)p[2],
             h3 = (uint32_t)p[3], h4 = (uint32_t)p[4];
    uint32_t c, g0, g1, g2, g3, g4, mask;

    c = h1 >> 26; h1 &= 0x3ffffff;
    h2 += c; c = h2 >> 26; h2 &= 0x3ffffff;
    h3 += c; c = h3 >> 26; h3 &= 0x3ffffff;
    h4 += c; c = h4 >> 26; h4 &= 0x3ffffff;
    h0 += c * 5; c = h0 >> 26; h0 &= 0x3ffffff;
    h1 += c;

    g0 = h0 + 5; c = g0 >> 26; g0 &= 0x3ffffff;
    g1 = h1 + c; c = g1 >> 26; g1 &= 0x3ffffff;
    g2 = h2 + c; c = g2 >> 26; g2 &= 0x3ffffff;
    g3 = h3 + c; c = g3 >> 26; g3 &= 0x3ffffff;
    g4 = h4 + c - (1u << 26);

    mask = (uint32_t)value_barrier_u64((uint32_t)((g4 >> 31) - 1));
    h0 = (h0 & ~mask) | (g0 & mask);
    h1 = (h1 & ~mask) | (g1 & mask);
    h2 = (h2 & ~mask) | (g2 & mask);
    h3 = (h3 & ~mask) | (g3 & mask);
    h4 = (h4 & ~mask) | (g4 & mask);

    uint64_t f0 = ((uint64_t)h0 | ((uint64_t)h1 << 26) | ((uint64_t)h2 << 52));
    uint64_t f1 = (((uint64_t)h2 >> 12) | ((uint64_t)h3 << 14) | ((uint64_t)h4 << 40));
    uint64_t s0 = p[14], s1 = p[15];
    uint64_t lo = f0 + s0;
    uint64_t carry = lo < s0;
    uint64_t hi = f1 + s1 + carry;
    store64_le(tag, lo);
    store64_le(tag + 8, hi);
    chapoly_wipe(st->priv, 16 * sizeof(uint64_t));
}

#endif

void poly1305_init_portable(const chapoly_kernels *kt, poly1305_state *st, const uint8_t key[32])
{
    (void)kt;
    init_impl(st, key);
    scrub_stack();
}

void poly1305_blocks_portable(const chapoly_kernels *kt, poly1305_state *st, const uint8_t *in,
                              size_t len, unsigned padbit)
{
    (void)kt;
    if (len < POLY1305_BLOCK_BYTES)
        return;
    blocks_impl(st, in, len, padbit);
    scrub_stack();
}

void poly1305_final_portable(const chapoly_kernels *kt, poly1305_state *st, uint8_t tag[16])
{
    (void)kt;
    final_impl(st, tag);
    scrub_stack();
}
