/* SPDX-License-Identifier: Apache-2.0 */
/*
 * poly1305_multi_blocks of the "avx512" level, built with that level's
 * flags (IFMA included) like the Poly1305 it falls back to.
 *
 * Eight messages, one per IFMA lane: each lane runs its own message's
 * Horner chain with its own key r (radix 2^44 limbs, poly1305_ifma.h), so
 * no key powers are needed; eight chains share every multiply. A group of
 * up to eight messages whose states are still scalar (W_STATE 0: no lanes,
 * no powers) and whose texts are at most LANES_MAX blocks steps together
 * for as many blocks as its shortest message has (when that is at least
 * the table's multi_lanes_min, else not at all); the hashes go back to
 * each state's radix-2^64 head, and each message's remaining blocks run
 * the scalar chain (sc_blocks_mem). Any other message goes to
 * poly1305_blocks_avx512ifma. Absent lanes hash zeros under a zero key.
 *
 * Step: g = h + m_0, then g = g r + m_j for each next block, then h = g r:
 * (h + m) r unrolled, every product the ifma_mul of the single-message
 * kernel (same limb bounds: a converted scalar hash plus a block is the
 * largest input it takes). Keys and hashes pass through stack arrays on
 * the way in and out: the work runs out of line and the frame is scrubbed.
 */
#include "poly1305_ifma.h"

#define LANES_MAX 64

/* Block j of eight messages -> lanes of limbs (lane i = message i). */
CHAPOLY_INLINE v3 load_lanes(const uint8_t *const in[8], size_t j, __m512i padv)
{
    const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    const __m512i odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
#define B(i) _mm_loadu_si128((const __m128i *)(in[i] + 16 * j))
    __m512i z0 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(B(1), B(0))),
                                    _mm256_set_m128i(B(3), B(2)), 1);
    __m512i z1 = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(B(5), B(4))),
                                    _mm256_set_m128i(B(7), B(6)), 1);
#undef B
    return msg_split(_mm512_permutex2var_epi64(z0, even, z1),
                     _mm512_permutex2var_epi64(z0, odd, z1), padv);
}

/* steps (>= 1) blocks of eight lanes; the hashes of the first n go back to their states. */
static CHAPOLY_NOINLINE void lanes8(uint64_t *const p[8], const uint8_t *const in[8],
                                   size_t steps, size_t n)
{
    _Alignas(64) uint64_t t[6][8];
    const __m512i padv = _mm512_set1_epi64((long long)1 << 40);
    v3 h, r, g;
    vkey k;

    for (int i = 0; i < 8; i++) {
        uint64_t h0 = p[i][W_H], h1 = p[i][W_H + 1], h2 = p[i][W_H + 2];
        uint64_t r0 = p[i][W_KEY], r1 = p[i][W_KEY + 1];

        t[0][i] = h0 & M44;
        t[1][i] = ((h0 >> 44) | (h1 << 20)) & M44;
        t[2][i] = (h1 >> 24) | (h2 << 40);
        t[3][i] = r0 & M44;
        t[4][i] = ((r0 >> 44) | (r1 << 20)) & M44;
        t[5][i] = r1 >> 24;
    }
    h = v3_load(t[0]);
    r = (v3){ _mm512_load_si512((const void *)t[3]), _mm512_load_si512((const void *)t[4]),
              _mm512_load_si512((const void *)t[5]) };
    k = key_of(r);
    g = v3_add(h, load_lanes(in, 0, padv));
    for (size_t j = 1; j < steps; j++)
        g = ifma_mul(g, &k, load_lanes(in, j, padv));
    h = ifma_mul(g, &k, v3_zero());
    v3_store(t[0], h);
    for (size_t i = 0; i < n; i++) {
        /* l0 + 2^44 l1 + 2^88 l2 in radix 2^64, bits from 130 up folded */
        sc_u128 v = (sc_u128)t[0][i] + ((sc_u128)t[1][i] << 44);
        uint64_t w0 = (uint64_t)v;

        v = (v >> 64) + ((sc_u128)t[2][i] << 24);
        sc_hash f = sc_fold(w0, (uint64_t)v, (uint64_t)(v >> 64));

        put64(p[i] + W_H, f.h0);
        put64(p[i] + W_H + 1, f.h1);
        put64(p[i] + W_H + 2, f.h2);
    }
    zero_zmm16_31();
}

CHAPOLY_DEFINE_SCRUB(scrub_lanes, 1024)

/*
 * The group's common blocks (steps: its shortest message's) in lanes if
 * there are at least lanes_min (multi_lanes_min; steps >= 1 always, as every
 * message has a block), then each message's rest in its scalar chain. steps
 * is kept in general registers as the group grows (a vector min here would
 * move a length out of a vector register into a branch, which ct_objdump
 * refuses).
 */
static void run_group(uint64_t *const p[8], const uint8_t *const in[8], const size_t nb[8],
                      size_t n, size_t steps, size_t lanes_min)
{
    if (steps < lanes_min) {
        steps = 0;
    } else {
        lanes8(p, in, steps, n);
        scrub_lanes();
    }
    for (size_t i = 0; i < n; i++) {
        if (nb[i] > steps)
            sc_blocks_mem(p[i] + W_H, p[i] + W_KEY, in[i] + 16 * steps, nb[i] - steps, 1);
        put64(p[i] + W_SCALAR, p[i][W_SCALAR] + nb[i]);
    }
}

/* The group so far (g messages, 1..8): one message runs its own chain, more the lanes. */
static void group_flush(uint64_t *p[8], const uint8_t *ip[8], size_t nb[8], size_t g,
                        size_t steps, size_t lanes_min)
{
    static const _Alignas(64) uint64_t idle[W_LANES]; /* absent lanes: zero hash, zero key */
    static const uint8_t zero_blocks[16 * LANES_MAX];

    if (g == 1) { /* one message: its own chain */
        sc_blocks_mem(p[0] + W_H, p[0] + W_KEY, ip[0], nb[0], 1);
        put64(p[0] + W_SCALAR, p[0][W_SCALAR] + nb[0]);
    } else if (g > 1) {
        size_t used = g;

        for (; g < 8; g++) { /* stand-ins: never written (run_group stores n lanes) */
            p[g] = (uint64_t *)idle;
            ip[g] = zero_blocks;
            nb[g] = LANES_MAX;
        }
        run_group(p, ip, nb, used, steps, lanes_min);
    }
}

void poly1305_multi_blocks_avx512ifma(const chapoly_kernels *kt, poly1305_state *const st[], const uint8_t *const in[],
                                      const size_t len[], size_t n)
{
    uint64_t *p[8];
    const uint8_t *ip[8];
    size_t nb[8], g = 0, steps = 0;

    for (size_t i = 0; i < n; i++) {
        uint64_t *w = st[i]->priv;
        size_t blocks = len[i] / POLY1305_BLOCK_BYTES;
        int again = 0;

        if (blocks == 0)
            continue;
        for (size_t j = 0; j < g; j++)
            again |= p[j] == w;
        if (again) { /* one state twice: its earlier blocks first */
            group_flush(p, ip, nb, g, steps, kt->shapes.multi_lanes_min);
            g = 0;
        }
        if (w[W_STATE] != 0 || blocks > LANES_MAX) {
            poly1305_blocks_avx512ifma(kt, st[i], in[i], len[i], 1);
            continue;
        }
        p[g] = w;
        ip[g] = in[i];
        nb[g] = blocks;
        if (g == 0 || blocks < steps)
            steps = blocks;
        if (++g == 8) {
            run_group(p, ip, nb, 8, steps, kt->shapes.multi_lanes_min);
            g = 0;
        }
    }
    group_flush(p, ip, nb, g, steps, kt->shapes.multi_lanes_min);
}
