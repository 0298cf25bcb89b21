/*
 * Poly1305 for the "neon" level (AArch64).
 *
 * Short inputs: scalar radix 2^64, h = h0 + 2^64 h1 + 2^128 h2, with the
 * 64x64 -> 128 products of unsigned __int128 (mul + umulh on AArch64).
 * Clamped r = r0 + 2^64 r1 with 4 | r1, so s1 = r1 + r1 / 4 is exact and
 * 2^128 r1 == s1 (mod 2^130 - 5); h2 <= 4 between blocks.
 *
 * priv layout (64-bit words):
 *   W_H     h0 h1 h2 (radix 2^64): the hash when no lanes are pending
 *   W_KEY   r0 r1 s1
 *   W_PAD   s0 s1 (the pad added at final)
 *   W_STATE ST_* bits
 */
#include "kernels_impl.h"

typedef unsigned __int128 u128;

#define W_H 0
#define W_KEY 3
#define W_PAD 6
#define W_STATE 8
#define W_HEAD 16 /* words wiped at final when no vector state exists */

typedef struct {
    uint64_t h0, h1, h2;
} sc_hash;

/*
 * h * r mod p, partially reduced: h2 <= 6 in (h + one block), h2 <= 4 out.
 * Every 128-bit sum stays below 2^127 (r0, r1 < 2^60).
 */
CHAPOLY_INLINE sc_hash sc_mul_r(sc_hash h, uint64_t r0, uint64_t r1, uint64_t s1)
{
    u128 d0 = (u128)h.h0 * r0 + (u128)h.h1 * s1;
    u128 d1 = (u128)h.h0 * r1 + (u128)h.h1 * r0;
    uint64_t d2 = h.h2 * r0;

    d1 += h.h2 * s1;
    d1 += (uint64_t)(d0 >> 64);
    d2 += (uint64_t)(d1 >> 64);
    h.h0 = (uint64_t)d0;
    h.h1 = (uint64_t)d1;
    /* bits >= 130 times 5 back in, unconditionally */
    uint64_t c = (d2 & ~(uint64_t)3) + (d2 >> 2);
    h.h2 = d2 & 3;
    h.h0 += c;
    c = h.h0 < c;
    h.h1 += c;
    h.h2 += h.h1 < c;
    return h;
}

CHAPOLY_INLINE sc_hash sc_add_block(sc_hash h, const uint8_t *in, uint64_t padbit)
{
    uint64_t m0 = load64_le(in), m1 = load64_le(in + 8);

    h.h0 += m0;
    uint64_t c = h.h0 < m0;
    h.h1 += c;
    c = h.h1 < c;
    h.h1 += m1;
    c += h.h1 < m1; /* at most one of the two carries */
    h.h2 += c + padbit;
    return h;
}

/* nb >= 1 blocks on the radix-2^64 hash in p. */
static void scalar_blocks(uint64_t *p, const uint8_t *in, size_t nb, uint64_t padbit)
{
    sc_hash h = { p[W_H], p[W_H + 1], p[W_H + 2] };
    const uint64_t r0 = p[W_KEY], r1 = p[W_KEY + 1], s1 = p[W_KEY + 2];

    do {
        h = sc_mul_r(sc_add_block(h, in, padbit), r0, r1, s1);
        in += 16;
    } while (--nb);
    p[W_H] = h.h0;
    p[W_H + 1] = h.h1;
    p[W_H + 2] = h.h2;
}

void poly1305_init_neon(poly1305_state *st, const uint8_t key[32])
{
    uint64_t *p = st->priv;
    uint64_t r0 = load64_le(key) & 0x0ffffffc0fffffffULL;
    uint64_t r1 = load64_le(key + 8) & 0x0ffffffc0ffffffcULL;

    p[W_H] = p[W_H + 1] = p[W_H + 2] = 0;
    p[W_KEY] = r0;
    p[W_KEY + 1] = r1;
    p[W_KEY + 2] = r1 + (r1 >> 2);
    p[W_PAD] = load64_le(key + 16);
    p[W_PAD + 1] = load64_le(key + 24);
    p[W_STATE] = 0;
}

void poly1305_blocks_neon(poly1305_state *st, const uint8_t *in, size_t len, unsigned padbit)
{
    size_t nb = len / POLY1305_BLOCK_BYTES;

    if (nb == 0)
        return;
    scalar_blocks(st->priv, in, nb, padbit ? 1 : 0);
}

void poly1305_final_neon(poly1305_state *st, uint8_t tag[16])
{
    uint64_t *p = st->priv;
    uint64_t h0 = p[W_H], h1 = p[W_H + 1], h2 = p[W_H + 2];
    u128 t;

    /* fold: afterwards h < 2^130 + 5, so at most one subtraction of p */
    uint64_t c = (h2 & ~(uint64_t)3) + (h2 >> 2);
    h2 &= 3;
    t = (u128)h0 + c;
    h0 = (uint64_t)t;
    t = (u128)h1 + (uint64_t)(t >> 64);
    h1 = (uint64_t)t;
    h2 += (uint64_t)(t >> 64);

    /* g = h + 5 - 2^130; use g when it did not go negative */
    t = (u128)h0 + 5;
    uint64_t g0 = (uint64_t)t;
    t = (u128)h1 + (uint64_t)(t >> 64);
    uint64_t g1 = (uint64_t)t;
    uint64_t g2 = h2 + (uint64_t)(t >> 64);
    uint64_t mask = value_barrier_u64(0 - (g2 >> 2));
    h0 = (h0 & ~mask) | (g0 & mask);
    h1 = (h1 & ~mask) | (g1 & mask);

    t = (u128)h0 + p[W_PAD];
    h0 = (uint64_t)t;
    h1 = h1 + p[W_PAD + 1] + (uint64_t)(t >> 64);
    memcpy(tag, &h0, 8); /* AArch64 Linux is little-endian */
    memcpy(tag + 8, &h1, 8);
    chapoly_wipe(p, W_HEAD * sizeof(uint64_t));
}
