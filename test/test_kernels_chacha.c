/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kernels: ChaCha20 and HChaCha20 at one level, against the vector
 * files (chacha_known, called from test_kernels_vectors.c) and against the
 * portable level: every length to 2 KiB, random lengths to 70000, counter
 * wrap, unaligned and in-place buffers, streams split at a block boundary.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_kernels.h"

void chacha_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                  const uint32_t ctr_nonce[4], const uint8_t *pt, const uint8_t *ct, size_t len)
{
    uint32_t kw[8];
    uint8_t *o = abuf_a + GUARD + 3, *w = abuf_b + GUARD + 1;

    if (len + 2 * GUARD + 8 > ABUF)
        return;
    chapoly_load_key(kw, key);
    memset(abuf_a, SENT, len + 2 * GUARD + 8);
    k_chacha(k, o, pt, len, kw, ctr_nonce);
    CHECK(meq(o, ct, len), "%s: chacha20_xor encrypt differs", what);
    CHECK(all_byte(o + len, GUARD, SENT), "%s: chacha20_xor wrote past the end", what);
    k_chacha(k, o, ct, len, kw, ctr_nonce);
    CHECK(meq(o, pt, len), "%s: chacha20_xor decrypt differs", what);
    mcpy(w, pt, len);
    k_chacha(k, w, w, len, kw, ctr_nonce);
    CHECK(meq(w, ct, len), "%s: in-place chacha20_xor differs", what);
}

static void chacha_case(const chapoly_kernels *k, size_t len, uint32_t ctr)
{
    uint32_t key[8], ctr_nonce[4];
    const uint8_t *in = pool_at(len);
    size_t ioff = 1 + rnd_below(63), ooff = 1 + rnd_below(63);

    if (rnd_below(8) == 0)
        ioff = ooff = 0; /* aligned now and then */
    for (int i = 0; i < 8; i++)
        key[i] = (uint32_t)rnd64();
    ctr_nonce[0] = ctr;
    for (int i = 1; i < 4; i++)
        ctr_nonce[i] = (uint32_t)rnd64();
    P->chacha20_xor(P, rbuf, in, len, key, ctr_nonce);

    /* out of place, unaligned, guard bytes around the output */
    memcpy(tin + 64 + ioff, in, len);
    memset(tout, SENT, len + 192);
    k_chacha(k, tout + 64 + ooff, tin + 64 + ioff, len, key, ctr_nonce);
    CHECK(memcmp(tout + 64 + ooff, rbuf, len) == 0,
          "%s chacha20_xor differs from portable: len %zu ctr 0x%08x in+%zu out+%zu", k->name, len, ctr,
          ioff, ooff);
    CHECK(all_byte(tout, 64 + ooff, SENT) && all_byte(tout + 64 + ooff + len, 64, SENT),
          "%s chacha20_xor wrote outside the output: len %zu ctr 0x%08x out+%zu", k->name, len, ctr, ooff);
    CHECK(memcmp(tin + 64 + ioff, in, len) == 0, "%s chacha20_xor modified its input: len %zu", k->name,
          len);

    /* in place */
    size_t off = rnd_below(64);
    memset(tout, SENT, len + 192);
    memcpy(tout + 64 + off, in, len);
    k_chacha(k, tout + 64 + off, tout + 64 + off, len, key, ctr_nonce);
    CHECK(memcmp(tout + 64 + off, rbuf, len) == 0,
          "%s in-place chacha20_xor differs from portable: len %zu ctr 0x%08x at+%zu", k->name, len, ctr,
          off);
    CHECK(all_byte(tout, 64 + off, SENT) && all_byte(tout + 64 + off + len, 64, SENT),
          "%s in-place chacha20_xor wrote outside the buffer: len %zu", k->name, len);
}

void chacha_diff(const chapoly_kernels *k)
{
    for (size_t len = 0; len <= 2048; len++)
        chacha_case(k, len, pick_counter(len));
    for (size_t i = 0; i < 200; i++)
        chacha_case(k, rnd_below(70001), pick_counter(i));
    /* Block-count boundaries 1..17 (and 2x for 32-block batches). */
    for (size_t n = 1; n <= 34; n++)
        for (int d = -1; d <= 1; d++)
            chacha_case(k, (size_t)((long)n * 64 + d), pick_counter(n));

    /*
     * Splitting a stream at a block boundary and advancing the counter
     * (mod 2^32) gives the same bytes: checks the level against itself,
     * including for the portable level.
     */
    for (int i = 0; i < 300; i++) {
        uint32_t key[8], ctr_nonce[4], cn2[4];
        size_t len = rnd_below(i < 150 ? 3000 : 70001);
        size_t split = rnd_below(len / 64 + 1) * 64;
        const uint8_t *in = pool_at(len);
        for (int j = 0; j < 8; j++)
            key[j] = (uint32_t)rnd64();
        ctr_nonce[0] = pick_counter((size_t)i);
        for (int j = 1; j < 4; j++)
            ctr_nonce[j] = (uint32_t)rnd64();
        memcpy(cn2, ctr_nonce, sizeof(ctr_nonce));
        cn2[0] = ctr_nonce[0] + (uint32_t)(split / 64);
        k_chacha(k, rbuf, in, len, key, ctr_nonce);
        k_chacha(k, tout, in, split, key, ctr_nonce);
        k_chacha(k, tout + split, in + split, len - split, key, cn2);
        CHECK(memcmp(rbuf, tout, len) == 0,
              "%s chacha20_xor split at %zu of %zu (ctr 0x%08x) differs from one call", k->name, split,
              len, ctr_nonce[0]);
    }
}

void hchacha_diff(const chapoly_kernels *k)
{
    uint8_t key_bytes[32 + 64], nb[16 + 64], ref[32], sb[32 + 64];

    for (int i = 0; i < 2000; i++) {
        size_t ko = rnd_below(64), no = rnd_below(64), so = rnd_below(64);
        rnd_bytes(key_bytes + ko, 32);
        rnd_bytes(nb + no, 16);
        if (i < 4) { /* all-zero and all-ones inputs */
            memset(key_bytes + ko, i & 1 ? 0xff : 0, 32);
            memset(nb + no, i & 2 ? 0xff : 0, 16);
        }
        P->hchacha20(P, ref, key_bytes + ko, nb + no);
        k_hchacha(k, sb + so, key_bytes + ko, nb + no);
        CHECK(memcmp(ref, sb + so, 32) == 0, "%s hchacha20 differs from portable (case %d)", k->name, i);
    }
}

