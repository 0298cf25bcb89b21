/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kernels: Poly1305 at one level, raw table calls and the streaming
 * helpers, against the vector files (poly_known, called from
 * test_kernels_vectors.c), against the portable level (every length to
 * 2 KiB, every two-piece split to 300 bytes, random multi-piece splits),
 * with the two published procedural stress checks, and with the level's
 * crossovers forced to extremes (shape_extremes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_kernels.h"

/* Poly1305 on one (key, msg, tag) case, one-shot and in several streams. */
void poly_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                const uint8_t *m, size_t len, const uint8_t tag[16])
{
    uint8_t t[16];
    size_t pieces[4096];
    static const size_t two_splits[] = { 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257 };
    static const size_t cyc1[] = { 1, 3, 16, 48, 100 };
    static const size_t cyc2[] = { 7, 13, 32, 64, 129, 250, 512 };

    k_poly_raw(k, t, key, m, len);
    CHECK(meq(t, tag, 16), "%s: one-shot tag differs (len %zu)", what, len);

    pieces[0] = len;
    k_poly_stream(k, t, key, m, pieces, 1);
    CHECK(meq(t, tag, 16), "%s: single-update stream differs", what);

    for (size_t i = 0; i < sizeof(two_splits) / sizeof(two_splits[0]) + 1; i++) {
        size_t s = i < sizeof(two_splits) / sizeof(two_splits[0]) ? two_splits[i] : len / 2;
        if (s > len)
            continue;
        pieces[0] = s;
        pieces[1] = len - s;
        k_poly_stream(k, t, key, m, pieces, 2);
        CHECK(meq(t, tag, 16), "%s: stream split at %zu differs", what, s);
    }
    const size_t *cycs[2] = { cyc1, cyc2 };
    size_t ncyc[2] = { sizeof(cyc1) / sizeof(cyc1[0]), sizeof(cyc2) / sizeof(cyc2[0]) };
    for (int c = 0; c < 2; c++) {
        size_t n = 0, left = len;
        while (left > 0 && n < 4096) {
            size_t p = cycs[c][n % ncyc[c]];
            if (p > left)
                p = left;
            pieces[n++] = p;
            left -= p;
        }
        if (left == 0) {
            k_poly_stream(k, t, key, m, pieces, n);
            CHECK(meq(t, tag, 16), "%s: stream in cycled chunks (pattern %d) differs", what, c);
        }
    }
    if (len <= 4096) {
        for (size_t i = 0; i < len; i++)
            pieces[i] = 1;
        k_poly_stream(k, t, key, m, pieces, len);
        CHECK(meq(t, tag, 16), "%s: byte-at-a-time stream differs", what);
    }
}

/* Keys and messages: random, or the all-0xff extremes that stress carries. */
static void poly_inputs(uint8_t key[32], const uint8_t **m, size_t len, size_t i)
{
    rnd_bytes(key, 32);
    switch (i % 5) {
    case 0: memset(key, 0xff, 32); break;
    case 1: memset(key, 0xff, 16); break; /* largest clamped r */
    default: break;
    }
    if (i % 7 == 3) {
        memset(tin, 0xff, len);
        *m = tin;
    } else {
        *m = pool_at(len);
    }
}

static void poly_case(const chapoly_kernels *k, size_t len, size_t i)
{
    uint8_t key[32], ref[16], t[16];
    const uint8_t *m;
    size_t off = rnd_below(64);

    poly_inputs(key, &m, len, i);
    k_poly_raw(P, ref, key, m, len);
    memcpy(tout + off, m, len);
    k_poly_raw(k, t, key, tout + off, len);
    CHECK(memcmp(ref, t, 16) == 0, "%s poly1305 one-shot differs from portable: len %zu msg+%zu", k->name,
          len, off);
}

void poly_diff(const chapoly_kernels *k)
{
    size_t pieces[256];
    uint8_t key[32], ref[16], t[16];
    const uint8_t *m;

    for (size_t len = 0; len <= 2048; len++)
        poly_case(k, len, len);
    for (size_t i = 0; i < 200; i++)
        poly_case(k, rnd_below(70001), i);

    /* Every two-piece split of every length up to 300. */
    for (size_t len = 0; len <= 300; len++) {
        poly_inputs(key, &m, len, len);
        k_poly_raw(P, ref, key, m, len);
        for (size_t s = 0; s <= len; s++) {
            pieces[0] = s;
            pieces[1] = len - s;
            k_poly_stream(k, t, key, m, pieces, 2);
            CHECK(memcmp(ref, t, 16) == 0, "%s poly1305 stream differs from portable: len %zu split %zu",
                  k->name, len, s);
        }
    }
    /* Random multi-piece splits; piece sizes skewed towards small. */
    for (size_t i = 0; i < 1500; i++) {
        size_t len = i < 1400 ? rnd_below(5000) : rnd_below(70001);
        size_t n = 0, left = len;
        poly_inputs(key, &m, len, i);
        k_poly_raw(P, ref, key, m, len);
        while (left > 0 && n < 255) {
            size_t cap;
            switch (rnd_below(4)) {
            case 0: cap = 17; break;
            case 1: cap = 80; break;
            case 2: cap = 600; break;
            default: cap = 9000; break;
            }
            size_t p = rnd_below(cap + 1);
            if (p > left)
                p = left;
            pieces[n++] = p;
            left -= p;
        }
        pieces[n++] = left;
        k_poly_stream(k, t, key, m, pieces, n);
        CHECK(memcmp(ref, t, 16) == 0, "%s poly1305 stream (%zu pieces) differs from portable: len %zu",
              k->name, n, len);
    }
}

/*
 * Sequences of raw blocks calls against the portable one-shot: every
 * block count to 80 followed by every count to 40 (so each level's
 * crossovers, the scalar prefix beside the key powers, whole and partial
 * batches, and a second call finding lanes pending with each short tail
 * are all crossed), three-call sequences after the 8/16-lane entry points,
 * and streams of equal short calls that pass the streaming thresholds.
 * Some sequences end with a padded partial block, some keys and messages
 * are the all-0xff extremes; every other one ends in one poly1305_last
 * call (the padded block, else the last blocks call) instead of blocks and
 * final.
 */
static void poly_calls_case(const chapoly_kernels *k, const size_t *calls, size_t ncalls,
                            size_t tail, size_t i)
{
    uint8_t key[32], ref[16], t[16];
    const uint8_t *m;
    size_t len = tail;

    for (size_t c = 0; c < ncalls; c++)
        len += 16 * calls[c];
    poly_inputs(key, &m, len, i);
    k_poly_raw(P, ref, key, m, len);
    k_poly_calls(k, t, key, m, calls, ncalls, tail, (int)(i & 1));
    CHECK(memcmp(ref, t, 16) == 0,
          "%s poly1305 blocks calls %zu, %zu, %zu (of %zu) + %zu tail bytes%s differ from portable",
          k->name, calls[0], ncalls > 1 ? calls[1] : 0, ncalls > 2 ? calls[2] : 0, ncalls, tail,
          (i & 1) ? " (ending in poly1305_last)" : "");
}

void poly_calls_diff(const chapoly_kernels *k)
{
    static const size_t firsts[] = { 8, 14, 15, 16, 17, 23, 24, 25, 31, 32, 33, 40, 47, 48, 64 };
    size_t calls[64], i = 0;

    for (size_t n1 = 0; n1 <= 80; n1++)
        for (size_t n2 = 0; n2 <= 40; n2++, i++) {
            calls[0] = n1;
            calls[1] = n2;
            poly_calls_case(k, calls, 2, i % 3 ? (n1 * 7 + n2) % 16 : 0, i);
        }
    for (size_t f = 0; f < sizeof(firsts) / sizeof(firsts[0]); f++)
        for (size_t n2 = 0; n2 <= 20; n2++)
            for (size_t n3 = 0; n3 <= 20; n3++, i++) {
                calls[0] = firsts[f];
                calls[1] = n2;
                calls[2] = n3;
                poly_calls_case(k, calls, 3, i % 2 ? 9 : 0, i);
            }
    for (size_t c = 1; c <= 24; c++)
        for (size_t n = 1; n <= 60 && n * c <= 400; n += 7, i++) {
            for (size_t j = 0; j < n; j++)
                calls[j] = c;
            poly_calls_case(k, calls, n, i % 2 ? 15 : 0, i);
        }
}

/*
 * The crossovers at their extremes: level 'level' rebuilt with each list of
 * forced choices (chapoly_kernels_build raises what a kernel cannot take,
 * so no value changes a result) and with the level's constant crossovers
 * set to extremes in the table itself (they are not forceable, but the
 * kernels must take any value the next table gives them), every Poly1305
 * call pattern, the multi-message entry and (where "chacha-pairs" or the
 * five-block NEON step changed) ChaCha20 against portable.
 */
void shape_extremes(const char *level)
{
    static const struct {
        const char *forced;
        /* the constants: poly_stream_min, poly_warm_min, poly_tail, poly_keep, multi_lanes_min,
         * chacha_wide_min (poly_warm_min a whole step at every level: 8) */
        uint32_t stream, warm, tail, keep, multi, wide;
    } cases[] = {
        /* every vector path as early as it can be, nothing kept */
        { "poly-vector=0 poly-vector2=1 poly-prefix=0 chacha-pairs=1 poly-mac=1", 0, 8, 0, 0, 0,
          1 },
        /* scalar wherever a value can make it so */
        { "poly-vector=100000 poly-vector2=0 poly-prefix=100000 chacha-pairs=0 poly-mac=100000",
          100000, 100000, 100000, 100000, 100000, 0 },
        /* 16 lanes before 8, warm at once, long prefixes and tails */
        { "poly-vector=100000 poly-vector2=16 poly-prefix=8 chacha-pairs=3072 poly-mac=0", 0, 8,
          100, 100000, 1, 100000 },
        /* the largest value a forced size takes */
        { "poly-vector=2147483647 poly-vector2=2147483647 poly-prefix=2147483647 "
          "chacha-pairs=2147483647 poly-mac=2147483647",
          0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu },
    };
    const chapoly_kernels *k = chapoly_kernels_by_name(level);
    chapoly_kernels t;

    for (size_t i = 0; k != NULL && i < sizeof(cases) / sizeof(cases[0]); i++) {
        chapoly_kernels_build(&t, level, cases[i].forced, NULL, NULL);
        CHECK(strcmp(t.name, level) == 0, "shape extremes: built %s for %s", t.name, level);
        t.shapes.poly_stream_min = cases[i].stream;
        t.shapes.poly_warm_min = cases[i].warm;
        t.shapes.poly_tail = cases[i].tail;
        t.shapes.poly_keep = cases[i].keep;
        t.shapes.multi_lanes_min = cases[i].multi;
        t.shapes.chacha_wide_min = cases[i].wide;
        poly_calls_diff(&t);
        poly_multi_diff(&t);
        {
            /* the table the POLY1305 MAC runs: poly-mac in place of poly-vector */
            chapoly_kernels mac;

            chapoly_kernels_for_mac(&mac, &t);
            CHECK(mac.shapes.poly_vector_min == (t.shapes.poly_mac_min != 0
                                                     ? t.shapes.poly_mac_min
                                                     : t.shapes.poly_vector_min),
                  "shape extremes: %s MAC table poly-vector %u", level,
                  (unsigned)mac.shapes.poly_vector_min);
            poly_calls_diff(&mac);
        }
        /* ChaCha20 again where the case changed one of its shapes */
        if (t.shapes.chacha_wide_min != k->shapes.chacha_wide_min ||
            t.shapes.chacha_pairs_min != k->shapes.chacha_pairs_min)
            chacha_diff(&t);
    }
}

/* ------------------------------------------------------------------ */
/* procedural Poly1305 stress checks (test/vectors/README.md)          */

static int unhex16(uint8_t out[16], const char *s)
{
    for (int i = 0; i < 16; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

void poly_procedural(const chapoly_kernels *k)
{
    uint8_t want[16], t[16], key[32], msg[4096];
    poly1305_state a, b, c;

    /* Linux poly1305_kunit "all ones". */
    memset(key, 0xff, 32);
    memset(msg, 0xff, sizeof(msg));
    k_sinit(k, &a, key);
    k_sinit(k, &b, key);
    for (int rep = 0; rep < 32; rep++) {
        for (size_t len = 0; len <= 4096; len += 16) {
            k_supdate(k, &a, msg, len);
            memcpy(&c, &a, sizeof(a));
            k_sfinal(k, &c, t);
            k_supdate(k, &b, t, 16);
        }
    }
    k_sfinal(k, &b, t);
    unhex16(want, "0c266b458706cfc43f707db350dd8125");
    CHECK(memcmp(t, want, 16) == 0, "%s poly1305 'all ones' procedural check: wrong final tag", k->name);

    /* poly1305-donna "total". */
    static const uint8_t tkey[32] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xff,
                                      0xfe, 0xfd, 0xfc, 0xfb, 0xfa, 0xf9, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00 };
    k_sinit(k, &a, tkey);
    for (int i = 0; i < 256; i++) {
        memset(key, i, 32);
        memset(msg, i, (size_t)i);
        k_poly_raw(k, t, key, msg, (size_t)i);
        k_supdate(k, &a, t, 16);
    }
    k_sfinal(k, &a, t);
    unhex16(want, "64afe2e8d6ad7bbdd287f97c44623d39");
    CHECK(memcmp(t, want, 16) == 0, "%s poly1305 'total' procedural check (one-shot inner): wrong final tag",
          k->name);

    /* Same with streamed inner tags (one update each). */
    k_sinit(k, &a, tkey);
    for (int i = 0; i < 256; i++) {
        size_t piece = (size_t)i;
        memset(key, i, 32);
        memset(msg, i, (size_t)i);
        k_poly_stream(k, t, key, msg, &piece, 1);
        k_supdate(k, &a, t, 16);
    }
    k_sfinal(k, &a, t);
    CHECK(memcmp(t, want, 16) == 0, "%s poly1305 'total' procedural check (streamed inner): wrong final tag",
          k->name);
}
