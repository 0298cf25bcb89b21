/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kernels: the one-shot AEAD (seal/open), chacha20_keyblock_xor and
 * the AEAD entries (aead_xor_hash_range, aead_first_xor_hash) at one
 * level, against the vector files (aead_known/aead_reject, called from
 * test_kernels_vectors.c) and against the portable level.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_kernels.h"

/*
 * Full positive + negative check of one AEAD case with a known answer
 * (ct, tag): seal out of place and in place, open out of place and in
 * place, truncated tags, and rejections (tag, ciphertext, AAD flips; tag
 * length 0) that must leave the output untouched.
 */
void aead_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                const uint8_t nonce[12], const uint8_t *aad, size_t aadlen,
                const uint8_t *pt, size_t len, const uint8_t *ct, const uint8_t tag[16])
{
    uint32_t kw[8];
    uint8_t t[16], badtag[16];
    uint8_t *o = abuf_a + GUARD, *w = abuf_b + GUARD;

    if (len + 2 * GUARD > ABUF) {
        CHECK(0, "%s: case too large for the scratch buffers (%zu)", what, len);
        return;
    }
    chapoly_load_key(kw, key);

    memset(abuf_a, SENT, len + 2 * GUARD);
    k_seal(k, o, t, pt, len, aad, aadlen, kw, nonce);
    CHECK(meq(o, ct, len), "%s: seal ciphertext differs (len %zu)", what, len);
    CHECK(meq(t, tag, 16), "%s: seal tag differs (len %zu)", what, len);
    CHECK(all_byte(abuf_a, GUARD, SENT) && all_byte(o + len, GUARD, SENT),
          "%s: seal wrote outside [out, out+len)", what);

    mcpy(w, pt, len);
    memset(t, 0, 16);
    k_seal(k, w, t, w, len, aad, aadlen, kw, nonce);
    CHECK(meq(w, ct, len) && meq(t, tag, 16), "%s: in-place seal differs", what);

    memset(abuf_a, SENT, len + 2 * GUARD);
    CHECK(k_open(k, o, ct, len, aad, aadlen, tag, 16, kw, nonce) == 1, "%s: open rejected", what);
    CHECK(meq(o, pt, len), "%s: open plaintext differs", what);
    CHECK(all_byte(abuf_a, GUARD, SENT) && all_byte(o + len, GUARD, SENT),
          "%s: open wrote outside [out, out+len)", what);

    mcpy(w, ct, len);
    CHECK(k_open(k, w, w, len, aad, aadlen, tag, 16, kw, nonce) == 1 && meq(w, pt, len),
          "%s: in-place open failed", what);

    /* A prefix of the right tag verifies (taglen 1..16 by contract). */
    CHECK(k_open(k, o, ct, len, aad, aadlen, tag, 1, kw, nonce) == 1,
          "%s: open with taglen 1 rejected", what);
    CHECK(k_open(k, o, ct, len, aad, aadlen, tag, 15, kw, nonce) == 1,
          "%s: open with taglen 15 rejected", what);

    /* Rejections: nothing may be written, in place or not. */
    for (int i = 0; i < 16; i++) {
        memcpy(badtag, tag, 16);
        badtag[i] ^= (uint8_t)(1u << (rnd64() & 7));
        memset(abuf_a, SENT, len + 2 * GUARD);
        CHECK(k_open(k, o, ct, len, aad, aadlen, badtag, 16, kw, nonce) == 0,
              "%s: open accepted a tag with byte %d flipped", what, i);
        CHECK(all_byte(abuf_a, len + 2 * GUARD, SENT), "%s: failed open (tag byte %d) wrote output",
              what, i);
    }
    memcpy(badtag, tag, 16);
    badtag[15] ^= 0x80;
    mcpy(w, ct, len);
    CHECK(k_open(k, w, w, len, aad, aadlen, badtag, 16, kw, nonce) == 0 && meq(w, ct, len),
          "%s: failed in-place open changed the buffer", what);
    memset(abuf_a, SENT, len + 2 * GUARD);
    CHECK(k_open(k, o, ct, len, aad, aadlen, badtag, 0, kw, nonce) == 0 &&
              all_byte(abuf_a, len + 2 * GUARD, SENT),
          "%s: open with taglen 0 must fail and write nothing", what);
    if (len > 0) {
        mcpy(w, ct, len);
        w[rnd_below(len)] ^= 0x01;
        memset(abuf_a, SENT, len + 2 * GUARD);
        CHECK(k_open(k, o, w, len, aad, aadlen, tag, 16, kw, nonce) == 0 &&
                  all_byte(abuf_a, len + 2 * GUARD, SENT),
              "%s: open accepted a modified ciphertext", what);
    }
    if (aadlen > 0) {
        uint8_t *a2 = xalloc(aadlen);
        mcpy(a2, aad, aadlen);
        a2[rnd_below(aadlen)] ^= 0x40;
        memset(abuf_a, SENT, len + 2 * GUARD);
        CHECK(k_open(k, o, ct, len, a2, aadlen, tag, 16, kw, nonce) == 0 &&
                  all_byte(abuf_a, len + 2 * GUARD, SENT),
              "%s: open accepted a modified AAD", what);
        free(a2);
    }
}

/* A case that must be rejected (Wycheproof 'invalid'). */
void aead_reject(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                 const uint8_t nonce[12], const uint8_t *aad, size_t aadlen,
                 const uint8_t *ct, size_t len, const uint8_t *tag, size_t taglen)
{
    uint32_t kw[8];
    uint8_t *o = abuf_a + GUARD;

    if (len + 2 * GUARD > ABUF)
        return;
    chapoly_load_key(kw, key);
    memset(abuf_a, SENT, len + 2 * GUARD);
    CHECK(k_open(k, o, ct, len, aad, aadlen, tag, taglen, kw, nonce) == 0,
          "%s: invalid case accepted", what);
    CHECK(all_byte(abuf_a, len + 2 * GUARD, SENT), "%s: rejected open wrote output", what);
}

static void aead_case(const chapoly_kernels *k, size_t aadlen, size_t len)
{
    uint8_t key[32], nonce[12], rtag[16], tag[16], badtag[16];
    uint32_t kw[8];
    const uint8_t *aad = pool_at(aadlen), *pt = pool_at(len);
    size_t off = rnd_below(64);
    int inplace = rnd_below(3) == 0;

    rnd_bytes(key, 32);
    rnd_bytes(nonce, 12);
    chapoly_load_key(kw, key);
    chapoly_aead_seal(P, rbuf, rtag, pt, len, aad, aadlen, kw, nonce);

    uint8_t *o = tout + 64 + off;
    memset(tout, SENT, len + 192);
    if (inplace) {
        memcpy(o, pt, len);
        k_seal(k, o, tag, o, len, aad, aadlen, kw, nonce);
    } else {
        memcpy(tin + 64 + (off ^ 7), pt, len);
        k_seal(k, o, tag, tin + 64 + (off ^ 7), len, aad, aadlen, kw, nonce);
    }
    CHECK(memcmp(o, rbuf, len) == 0 && memcmp(tag, rtag, 16) == 0,
          "%s aead_seal differs from portable: aad %zu len %zu%s out+%zu", k->name, aadlen, len,
          inplace ? " in place" : "", off);
    CHECK(all_byte(tout, 64 + off, SENT) && all_byte(o + len, 64, SENT),
          "%s aead_seal wrote outside the output: aad %zu len %zu", k->name, aadlen, len);

    /* open the portable ciphertext, in place or not */
    memset(tout, SENT, len + 192);
    int r;
    if (inplace) {
        memcpy(o, rbuf, len);
        r = k_open(k, o, o, len, aad, aadlen, rtag, 16, kw, nonce);
    } else {
        r = k_open(k, o, rbuf, len, aad, aadlen, rtag, 16, kw, nonce);
    }
    CHECK(r == 1 && memcmp(o, pt, len) == 0, "%s aead_open failed on portable output: aad %zu len %zu%s",
          k->name, aadlen, len, inplace ? " in place" : "");
    CHECK(all_byte(tout, 64 + off, SENT) && all_byte(o + len, 64, SENT),
          "%s aead_open wrote outside the output: aad %zu len %zu", k->name, aadlen, len);

    /* a flipped tag bit: rejected, nothing written */
    memcpy(badtag, rtag, 16);
    badtag[rnd_below(16)] ^= (uint8_t)(1u << rnd_below(8));
    memset(tout, SENT, len + 192);
    if (inplace) {
        memcpy(o, rbuf, len);
        r = k_open(k, o, o, len, aad, aadlen, badtag, 16, kw, nonce);
        CHECK(r == 0 && memcmp(o, rbuf, len) == 0,
              "%s aead_open (in place) accepted a bad tag or changed the buffer: aad %zu len %zu",
              k->name, aadlen, len);
    } else {
        r = k_open(k, o, rbuf, len, aad, aadlen, badtag, 16, kw, nonce);
        CHECK(r == 0 && all_byte(tout, len + 192, SENT),
              "%s aead_open accepted a bad tag or wrote output: aad %zu len %zu", k->name, aadlen, len);
    }
}

/*
 * chacha20_keyblock_xor (key block + text in one call's shapes) against
 * portable ChaCha20 over [64 zero bytes || text]: the key block, the text,
 * and nothing written around either.
 */
static void keyblock_xor_case(const chapoly_kernels *k, size_t len, size_t i)
{
    uint8_t key_block[64 + 2 * GUARD];
    uint32_t kw[8], ctr_nonce[4];
    size_t off = rnd_below(64);
    const uint8_t *src = pool_at(len);
    int inplace = (int)(i % 3 == 0);

    rnd_bytes((uint8_t *)kw, sizeof(kw));
    ctr_nonce[0] = pick_counter(i);
    ctr_nonce[1] = (uint32_t)rnd64();
    ctr_nonce[2] = (uint32_t)rnd64();
    ctr_nonce[3] = (uint32_t)rnd64();
    memset(rbuf, 0, 64);
    memcpy(rbuf + 64, src, len);
    P->chacha20_xor(P, rbuf, rbuf, 64 + len, kw, ctr_nonce);

    uint8_t *o = tout + 64 + off;
    memset(tout, SENT, len + 192);
    memset(key_block, SENT, sizeof(key_block));
    if (inplace) {
        memcpy(o, src, len);
        k_keyblock_xor(k, key_block + GUARD, o, o, len, kw, ctr_nonce);
    } else {
        memcpy(tin + 64 + (off ^ 5), src, len);
        k_keyblock_xor(k, key_block + GUARD, o, tin + 64 + (off ^ 5), len, kw, ctr_nonce);
    }
    CHECK(memcmp(key_block + GUARD, rbuf, 64) == 0,
          "%s chacha20_keyblock_xor key block differs: len %zu ctr %08x",
          k->name, len, ctr_nonce[0]);
    CHECK(memcmp(o, rbuf + 64, len) == 0,
          "%s chacha20_keyblock_xor text differs: len %zu ctr %08x%s",
          k->name, len, ctr_nonce[0], inplace ? " in place" : "");
    CHECK(all_byte(key_block, GUARD, SENT) && all_byte(key_block + GUARD + 64, GUARD, SENT) &&
              all_byte(tout, 64 + off, SENT) && all_byte(o + len, 64, SENT),
          "%s chacha20_keyblock_xor wrote outside its outputs: len %zu", k->name, len);
}

void keyblock_xor_diff(const chapoly_kernels *k)
{
    size_t i = 0;

    for (size_t len = 0; len <= 2112; len++, i++)
        keyblock_xor_case(k, len, i);
    for (; i < 2112 + 200; i++)
        keyblock_xor_case(k, rnd_below(9000), i);
}

/*
 * aead_xor_hash_range (the level's kernel or the generic split form)
 * against portable ChaCha20 then Poly1305: pre bytes of ciphertext just
 * before the text's (out sealing, in opening), len bytes of text (any
 * length), the first hash_len of its ciphertext hashed; the hash enters
 * with a prefix in every state form and more blocks follow. Output, the
 * pre bytes (unchanged), guard bytes and the tag must match.
 */
static void xor_hash_range_case(const chapoly_kernels *k, size_t prefix, size_t pre,
                                size_t len, size_t hash_len, size_t post, int enc, int inplace,
                                size_t i)
{
    uint8_t key[32], pkey[32], rtag[16], tag[16];
    uint32_t kw[8], ctr_nonce[4];
    size_t off = rnd_below(64);
    const uint8_t *src = pool_at(len), *prefix_data = pool_at(prefix);
    const uint8_t *pre_data = pool_at(pre), *postfix_data = pool_at(post);
    poly1305_state rs_, ks_;

    if (!enc && inplace)
        pre = 0; /* the contract: opening in place only without pre bytes */
    rnd_bytes(key, 32);
    rnd_bytes(pkey, 32);
    chapoly_load_key(kw, key);
    ctr_nonce[0] = pick_counter(i);
    ctr_nonce[1] = (uint32_t)rnd64();
    ctr_nonce[2] = (uint32_t)rnd64();
    ctr_nonce[3] = (uint32_t)rnd64();

    /* reference */
    P->poly1305_init(P, &rs_, pkey);
    if (prefix)
        P->poly1305_blocks(P, &rs_, prefix_data, prefix, 1);
    if (pre)
        P->poly1305_blocks(P, &rs_, pre_data, pre, 1);
    if (len)
        P->chacha20_xor(P, rbuf, src, len, kw, ctr_nonce);
    if (hash_len)
        P->poly1305_blocks(P, &rs_, enc ? rbuf : src, hash_len, 1);
    if (post)
        P->poly1305_blocks(P, &rs_, postfix_data, post, 1);
    P->poly1305_final(P, &rs_, rtag);

    /* out at tout + 64 + pre + off; sealing, the pre bytes just before it */
    uint8_t *o = tout + 64 + 1024 + off, *x = tin + 64 + 1024 + (off ^ 9);
    memset(tout, SENT, 64 + 1024 + off + len + 64);
    k->poly1305_init(k, &ks_, pkey);
    if (prefix)
        k->poly1305_blocks(k, &ks_, prefix_data, prefix, 1);
    if (inplace) {
        memcpy(o - pre, pre_data, pre);
        memcpy(o, src, len);
        k_xor_hash_range(k, o, o, len, pre, hash_len, kw, ctr_nonce, &ks_, enc);
    } else {
        memcpy(enc ? o - pre : x - pre, pre_data, pre);
        memcpy(x, src, len);
        k_xor_hash_range(k, o, x, len, pre, hash_len, kw, ctr_nonce, &ks_, enc);
    }
    if (post)
        k->poly1305_blocks(k, &ks_, postfix_data, post, 1);
    k->poly1305_final(k, &ks_, tag);
    CHECK(len == 0 || memcmp(o, rbuf, len) == 0,
          "%s aead_xor_hash_range output differs: %s, %zu bytes, ctr %08x%s", k->name,
          enc ? "enc" : "dec", len, ctr_nonce[0], inplace ? " in place" : "");
    CHECK(memcmp(tag, rtag, 16) == 0,
          "%s aead_xor_hash_range tag differs: %s prefix %zu, pre %zu, %zu bytes, hash %zu, "
          "post %zu%s", k->name, enc ? "enc" : "dec", prefix, pre, len, hash_len, post,
          inplace ? " in place" : "");
    CHECK(pre == 0 || !(inplace || enc) || memcmp(o - pre, pre_data, pre) == 0,
          "%s aead_xor_hash_range changed the pre bytes: %zu bytes", k->name, len);
    CHECK(all_byte(tout, 64 + 1024 + off - (inplace || enc ? pre : 0), SENT) &&
              all_byte(o + len, 64, SENT),
          "%s aead_xor_hash_range wrote outside the output: %zu bytes", k->name, len);
}

void xor_hash_range_diff(const chapoly_kernels *k)
{
    static const size_t pres[] = { 0, 16, 448, 512, 1008, 1024 };
    static const size_t prefixes[] = { 0, 1, 8, 17, 39, 40, 41, 64, 100 };
    size_t i = 0;

    /* every length 0..3 KiB + 64, the hash over its whole 64-byte blocks or all 16-byte ones */
    for (size_t len = 0; len <= 3136; len++, i++) {
        size_t hash_len = (i & 1) ? len & ~(size_t)63 : len & ~(size_t)15;

        xor_hash_range_case(k, 16 * prefixes[i % 9], pres[(i / 2) % 6], len, hash_len,
                            16 * (i % 5), (int)((i / 3) & 1), (int)(i % 7 == 0), i);
    }
    /* around the 512-byte batches: every pre, shorter hashes, both directions, in place */
    for (size_t b = 0; b <= 8; b++)
        for (long d = -17; d <= 17; d += 4)
            for (size_t p = 0; p < sizeof(pres) / sizeof(pres[0]); p++)
                for (int enc = 0; enc <= 1; enc++, i++) {
                    long l = (long)(512 * b) + d;
                    size_t len = l < 0 ? 0 : (size_t)l;
                    size_t hash_len = (i % 3 == 0) ? 16 * rnd_below(len / 16 + 1)
                                                   : len & ~(size_t)15;

                    xor_hash_range_case(k, 16 * prefixes[i % 9], pres[p], len, hash_len,
                                        16 * (i % 3), enc, (int)(i % 4 == 0), i);
                }
    for (size_t j = 0; j < 40; j++, i++) {
        size_t len = rnd_below(20000);

        xor_hash_range_case(k, 16 * rnd_below(300), 16 * rnd_below(65), len,
                            16 * rnd_below(len / 16 + 1), 16 * rnd_below(70),
                            (int)rnd_below(2), (int)rnd_below(2), i);
    }
}

/*
 * aead_first_xor_hash (the level's kernel or the generic composition)
 * against portable ChaCha20 and Poly1305: the key block at the counter,
 * the AAD zero-padded, len bytes of text from the next counter and the
 * first hash_len bytes of its ciphertext, then more blocks. Output, guard
 * bytes and the tag must match.
 */
static void first_xor_hash_case(const chapoly_kernels *k, size_t aadlen, size_t len,
                                size_t hash_len, size_t post, int enc, int inplace, size_t i)
{
    uint8_t key[32], rtag[16], tag[16], kblock[64] = { 0 }, pad[16] = { 0 };
    uint32_t kw[8], ctr_nonce[4], next[4];
    size_t off = rnd_below(64), whole = aadlen & ~(size_t)15;
    const uint8_t *src = pool_at(len), *aad = pool_at(aadlen), *postfix_data = pool_at(post);
    poly1305_state rs_, ks_;

    if (!enc && !chapoly_open_rows(&k->shapes, len, aadlen))
        inplace = 0; /* the contract: opening, out and in share no byte (but open_rows' texts) */
    rnd_bytes(key, 32);
    chapoly_load_key(kw, key);
    ctr_nonce[0] = pick_counter(i);
    ctr_nonce[1] = (uint32_t)rnd64();
    ctr_nonce[2] = (uint32_t)rnd64();
    ctr_nonce[3] = (uint32_t)rnd64();
    memcpy(next, ctr_nonce, sizeof(next));
    next[0]++; /* mod 2^32 */

    /* reference */
    P->chacha20_xor(P, kblock, kblock, 64, kw, ctr_nonce);
    P->poly1305_init(P, &rs_, kblock);
    if (whole)
        P->poly1305_blocks(P, &rs_, aad, whole, 1);
    if (aadlen > whole) {
        memcpy(pad, aad + whole, aadlen - whole);
        P->poly1305_blocks(P, &rs_, pad, 16, 1);
    }
    P->chacha20_xor(P, rbuf, src, len, kw, next);
    P->poly1305_blocks(P, &rs_, enc ? rbuf : src, hash_len, 1);
    if (post)
        P->poly1305_blocks(P, &rs_, postfix_data, post, 1);
    P->poly1305_final(P, &rs_, rtag);

    uint8_t *o = tout + 64 + off, *x = tin + 64 + (off ^ 9);
    memset(tout, SENT, 64 + off + len + 64);
    if (inplace) {
        memcpy(o, src, len);
        x = o;
    } else {
        memcpy(x, src, len);
    }
    k_first_xor_hash(k, o, x, len, hash_len, aad, aadlen, kw, ctr_nonce, &ks_, enc);
    if (post)
        k->poly1305_blocks(k, &ks_, postfix_data, post, 1);
    k->poly1305_final(k, &ks_, tag);
    CHECK(memcmp(o, rbuf, len) == 0,
          "%s aead_first_xor_hash output differs: %s, aad %zu, %zu bytes, ctr %08x%s", k->name,
          enc ? "enc" : "dec", aadlen, len, ctr_nonce[0], inplace ? " in place" : "");
    CHECK(memcmp(tag, rtag, 16) == 0,
          "%s aead_first_xor_hash tag differs: %s, aad %zu, %zu bytes, hash %zu, post %zu, "
          "ctr %08x%s", k->name, enc ? "enc" : "dec", aadlen, len, hash_len, post,
          ctr_nonce[0], inplace ? " in place" : "");
    CHECK(all_byte(tout, 64 + off, SENT) && all_byte(o + len, 64, SENT),
          "%s aead_first_xor_hash wrote outside the output: %zu bytes", k->name, len);
}

void first_xor_hash_diff(const chapoly_kernels *k)
{
    size_t i = 0;

    /* every length 0..3 KiB + 64, hashes of whole 64- or 16-byte blocks */
    for (size_t len = 0; len <= 3136; len++, i++) {
        size_t hash_len = (i & 1) ? len & ~(size_t)63 : len & ~(size_t)15;

        first_xor_hash_case(k, i % 71, len, hash_len, 16 * (i % 5), (int)((i / 3) & 1),
                            (int)(i % 4 == 0), i);
    }
    /*
     * The short shapes ("short-rows": row sets up to 320 bytes beside the
     * key block, and the stitched rest of 449..832): every length, each
     * with four or five AAD lengths up to 64 (every AAD length 0..64 over
     * 16 consecutive text lengths), both directions, in place and not, a
     * random hash length a caller may ask (whole 16-byte blocks, 0 too).
     */
    for (size_t len = 0; len <= 832; len++)
        for (size_t aad = len % 16; aad <= 64; aad += 16, i++) {
            size_t hash_len = 16 * rnd_below(len / 16 + 1);

            first_xor_hash_case(k, aad, len, hash_len, 16 * (i % 3), (int)(i & 1),
                                (int)(i % 4 == 1), i);
        }
    /*
     * Opening with the key block beside the text's row sets ("open-rows",
     * where the level has it: "aead=stitched open-rows=384" forced, so
     * that every CPU runs it): every length to 400 (the form takes 128 up
     * to short-rows), each with four or five AAD lengths up to 64 and 65,
     * in place and not, a random hash length, so its limits and the forms
     * on either side are crossed.
     */
    chapoly_kernels forced;

    chapoly_kernels_build(&forced, k->name, "aead=stitched open-rows=384", NULL, NULL);
    if (forced.shapes.open_rows != 0)
        for (size_t len = 0; len <= 400; len++)
            for (size_t aad = len % 16; aad <= 65; aad += 16, i++) {
                size_t hash_len = (i & 1) ? len & ~(size_t)63 : 16 * rnd_below(len / 16 + 1);

                first_xor_hash_case(&forced, aad + (aad == 64 && (len & 1)), len, hash_len,
                                    16 * (i % 3), 0, (int)((i >> 1) & 1), i);
            }
    /* shorter hashes, long AAD, long texts */
    for (size_t j = 0; j < 60; j++, i++) {
        size_t len = 449 + rnd_below(20000);
        size_t hash_len = 448 + 16 * rnd_below((len - 448) / 16 + 1);

        first_xor_hash_case(k, rnd_below(j < 30 ? 100 : 3000), len, hash_len,
                            16 * rnd_below(70), (int)rnd_below(2), (int)rnd_below(2), i);
    }
}

void aead_diff(const chapoly_kernels *k)
{
    for (size_t aad = 0; aad <= 40; aad++)
        for (size_t len = 0; len <= 1100; len++)
            aead_case(k, aad, len);
    /* every length to 2 KiB, AAD 0..64 (each AAD length at every 65th text length) */
    for (size_t len = 0; len <= 2048; len++)
        for (size_t aad = len % 65; aad <= 64; aad += 65)
            aead_case(k, aad, len);
    for (size_t len = 1101; len <= 2048; len++)
        aead_case(k, 41 + len % 24, len);
    /* Block-count boundaries 1..17 with partial tails and longer AAD. */
    static const size_t aads[] = { 0, 1, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000 };
    static const int deltas[] = { -17, -16, -15, -1, 0, 1, 15, 16, 17 };
    for (size_t a = 0; a < sizeof(aads) / sizeof(aads[0]); a++)
        for (size_t n = 1; n <= 17; n++)
            for (size_t d = 0; d < sizeof(deltas) / sizeof(deltas[0]); d++)
                aead_case(k, aads[a], (size_t)((long)n * 64 + deltas[d]));
    /* Long seals: the first batch's head, whole kilobytes and the rest around their limits. */
    static const long koffs[] = { -65, -64, -1, 0, 1, 63, 64, 65, 960, 961, 1023 };
    static const size_t kaads[] = { 0, 13, 100 };
    for (size_t kib = 1; kib <= 5; kib++)
        for (size_t o = 0; o < sizeof(koffs) / sizeof(koffs[0]); o++)
            for (size_t a = 0; a < sizeof(kaads) / sizeof(kaads[0]); a++)
                aead_case(k, kaads[a], (size_t)((long)(1024 * kib + 960) + koffs[o]));
    for (int i = 0; i < 120; i++)
        aead_case(k, rnd_below(i % 4 == 0 ? 3000 : 64), rnd_below(70001));
}
