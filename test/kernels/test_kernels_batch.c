/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kernels: chacha20_multi_blocks (the batched AEAD's kernel), against
 * the portable ChaCha20 of each block's own key, counter and nonce: every n
 * 0..40 (1..32 messages of a pipeline, and more than two 16-lane batches),
 * one key for all blocks or one per block, counters at and around the
 * 32-bit wrap (no carry: a state is one block), unaligned buffers; nothing
 * written past n blocks, the states left as they were. Also the composition
 * the helper uses when a table has no such entry. Upper vector state: the
 * call goes through k_multi_blocks (test_kernels_upper.c).
 */
#include <stdlib.h>
#include <string.h>

#include "test_kernels.h"
#include "aead_batch.h"

#define MB_MAX 40

static void set_state(uint32_t *s, const uint32_t key[8], uint32_t ctr, const uint32_t nonce[3])
{
    s[0] = 0x61707865u;
    s[1] = 0x3320646eu;
    s[2] = 0x79622d32u;
    s[3] = 0x6b206574u;
    memcpy(s + 4, key, 32);
    s[12] = ctr;
    memcpy(s + 13, nonce, 12);
}

void multi_blocks_diff(const chapoly_kernels *k)
{
    static uint32_t states_buf[MB_MAX * 16 + 16], copy[MB_MAX * 16];
    static uint8_t out_buf[MB_MAX * 64 + 64 + GUARD], ref[MB_MAX * 64];
    chapoly_kernels composed = *k;

    composed.chacha20_multi_blocks = chapoly_generic_chacha20_multi_blocks;
    for (size_t round = 0; round < 6; round++) {
        for (size_t n = 0; n <= MB_MAX; n++) {
            uint32_t *states = states_buf + rnd_below(16);
            uint8_t *out = out_buf + rnd_below(64);
            uint32_t key[8], nonce[3];
            int one_key = round & 1;

            rnd_bytes((uint8_t *)key, sizeof(key));
            for (size_t i = 0; i < n; i++) {
                if (!one_key)
                    rnd_bytes((uint8_t *)key, sizeof(key));
                rnd_bytes((uint8_t *)nonce, sizeof(nonce));
                set_state(states + 16 * i, key, pick_counter(i + round), nonce);
                memset(ref + 64 * i, 0, 64);
                chacha20_xor_portable_ref(ref + 64 * i, states + 16 * i + 4, states + 16 * i + 12);
            }
            memcpy(copy, states, n * 64);
            memset(out_buf, SENT, sizeof(out_buf));
            k_multi_blocks(k, out, states, n);
            CHECK(meq(out, ref, n * 64), "chacha20_multi_blocks n=%zu (%s key%s) differs from "
                  "the portable blocks", n, one_key ? "one" : "per-block",
                  round % 3 == 0 ? ", counters near the wrap" : "");
            CHECK(all_byte(out_buf, (size_t)(out - out_buf), SENT) &&
                      all_byte(out + 64 * n, sizeof(out_buf) - (size_t)(out - out_buf) - 64 * n,
                               SENT),
                  "chacha20_multi_blocks n=%zu wrote outside its %zu blocks", n, n);
            CHECK(meq(states, copy, n * 64), "chacha20_multi_blocks n=%zu changed its states", n);
            if (round == 0) {
                memset(out, 0, n * 64);
                composed.chacha20_multi_blocks(&composed, out, states, n);
                CHECK(meq(out, ref, n * 64), "composed multi blocks n=%zu differ", n);
            }
        }
    }
}

/*
 * The batched AEAD core (core/aead_batch.h) at this level: n = 1..32
 * messages (ChaCha20-Poly1305 and XChaCha20-Poly1305) against one-shot
 * seals of the same messages (XChaCha20: HChaCha20 of the portable level,
 * then the one-shot), text lengths 0..2100 and a few long ones, AAD 0..80,
 * everything in one call or split over several, encrypting and decrypting
 * (in place); and what an abandoned or finished batch leaves: zeros. These
 * calls are not wrapped by the upper-state check: the kernels they reach
 * are checked on their own (k_multi_blocks and the others).
 */
static int all_zero_bytes(const void *p, size_t n)
{
    return all_byte((const uint8_t *)p, n, 0);
}

void batch_core_diff(const chapoly_kernels *k)
{
    enum { NMAX = CHAPOLY_BATCH_MAX };
    chapoly_batch *b = aligned_alloc(64, (chapoly_batch_size(NMAX) + 63) & ~(size_t)63);
    static uint8_t text[NMAX][9000], ct[NMAX][9000], aad[NMAX][80];
    uint8_t key[32], nonce[NMAX][24], tags[NMAX][16], ref_tag[16], n12[12], sub[32];
    const uint8_t *np[NMAX], *ap[NMAX], *ip[NMAX];
    uint8_t *op[NMAX];
    size_t len[NMAX], alen[NMAX], part[NMAX];
    uint32_t kw[8];

    memset(b, 0xa5, chapoly_batch_size(NMAX)); /* nothing but n needs zeroing */
    b->n = 0;
    for (int x = 0; x < 2; x++) {
        for (size_t n = 1; n <= NMAX; n++) {
            int split = (n % 3) == 0;

            rnd_bytes(key, sizeof(key));
            for (size_t i = 0; i < n; i++) {
                rnd_bytes(nonce[i], sizeof(nonce[i]));
                len[i] = rnd_below(12) == 0 ? 4096 + rnd_below(4900) : rnd_below(2101);
                alen[i] = rnd_below(81);
                rnd_bytes(text[i], len[i]);
                rnd_bytes(aad[i], alen[i]);
                np[i] = nonce[i];
            }
            for (int enc = 1; enc >= 0; enc--) {
                chapoly_batch_start(b, k, key, np, n, x);
                for (int r = 0; r < (split ? 2 : 1); r++) {
                    for (size_t i = 0; i < n; i++) {
                        part[i] = split ? alen[i] / 2 : alen[i];
                        ap[i] = aad[i] + (r ? part[i] : 0);
                        part[i] = r ? alen[i] - part[i] : part[i];
                    }
                    chapoly_batch_aad(b, ap, part);
                }
                size_t done[NMAX] = { 0 };
                for (int r = 0; r < (split ? 3 : 1); r++) {
                    for (size_t i = 0; i < n; i++) {
                        size_t left = len[i] - done[i];

                        part[i] = !split || r == 2 ? left : r == 0 ? left / 3 + 1 > left ? left
                                                                                          : left / 3 + 1
                                                                   : left / 2;
                        op[i] = ct[i] + done[i];
                        ip[i] = enc ? text[i] + done[i] : ct[i] + done[i];
                        done[i] += part[i];
                    }
                    chapoly_batch_text(b, op, ip, part, enc);
                }
                chapoly_batch_finish(b, tags);
                for (size_t i = 0; i < n; i++)
                    CHECK(all_zero_bytes(b->m[i].m.key, 32) && b->m[i].m.ks_made == 0 &&
                              b->m[i].m.phase == AEAD_PHASE_DONE,
                          "batch n=%zu: finished message %zu keeps its key or keystream", n,
                          i);
                for (size_t i = 0; i < n; i++) {
                    uint8_t *exp = xalloc(len[i] + 1);

                    if (x) {
                        P->hchacha20(P, sub, key, nonce[i]);
                        chapoly_load_key(kw, sub);
                        memset(n12, 0, 4);
                        memcpy(n12 + 4, nonce[i] + 16, 8);
                    } else {
                        chapoly_load_key(kw, key);
                        memcpy(n12, nonce[i], 12);
                    }
                    chapoly_aead_seal(P, exp, ref_tag, text[i], len[i], aad[i], alen[i], kw, n12);
                    if (enc)
                        CHECK(meq(exp, ct[i], len[i]), "batch %s n=%zu msg %zu (len %zu, aad "
                              "%zu%s): ciphertext differs from the one-shot seal",
                              x ? "XChaCha" : "ChaCha", n, i, len[i], alen[i],
                              split ? ", split" : "");
                    else
                        CHECK(meq(text[i], ct[i], len[i]), "batch %s n=%zu msg %zu: decryption "
                              "differs", x ? "XChaCha" : "ChaCha", n, i);
                    CHECK(meq(ref_tag, tags[i], 16), "batch %s n=%zu msg %zu (len %zu, aad %zu%s,"
                          " %s): tag differs from the one-shot seal", x ? "XChaCha" : "ChaCha",
                          n, i, len[i], alen[i], split ? ", split" : "",
                          enc ? "seal" : "open");
                    free(exp);
                }
            }
        }
    }
    /* abandoned after AAD, and right after start: clear leaves zeros */
    for (int stage = 0; stage < 2; stage++) {
        for (size_t i = 0; i < 3; i++) {
            np[i] = nonce[i];
            ap[i] = aad[i];
            part[i] = 20;
        }
        chapoly_batch_start(b, k, key, np, 3, stage);
        if (stage == 0)
            chapoly_batch_aad(b, ap, part);
        chapoly_batch_clear(b);
        for (size_t i = 0; i < 3; i++)
            CHECK(all_zero_bytes(b->m[i].m.key, 32) &&
                      (stage != 0 || all_zero_bytes(b->m[i].m.aad_buf, 20)),
                  "an abandoned batch (%s) keeps a key or AAD in message %zu",
                  stage ? "after start" : "after AAD", i);
    }
    /*
     * A batch of one (its one-message core): clear skips only a finished
     * message (finish cleared it), so an abandoned one leaves no key at any stage.
     */
    for (int stage = 0; stage < 4; stage++) {
        uint8_t txt[40] = { 0 }, tag1[1][16];
        const uint8_t *tin[1] = { txt };
        uint8_t *tout[1] = { txt };
        size_t tl[1] = { sizeof(txt) };

        np[0] = nonce[0];
        ap[0] = aad[0];
        part[0] = 20;
        chapoly_batch_start(b, k, key, np, 1, 0);
        if (stage >= 1)
            chapoly_batch_aad(b, ap, part);
        if (stage >= 2)
            chapoly_batch_text(b, tout, tin, tl, 1);
        if (stage >= 3)
            chapoly_batch_finish(b, tag1);
        chapoly_batch_clear(b);
        CHECK(all_zero_bytes(b->m[0].m.key, 32),
              "a batch of one keeps its key after clear (stage %d)", stage);
    }
    free(b);
}

/*
 * poly1305_multi_blocks against the portable Poly1305 of each message:
 * n = 1..20 states (groups of eight lanes and a partial group), lengths of
 * 0..70 blocks (lanes for the common blocks, scalar chains for the rest,
 * the level's own blocks beyond 64), some states already past a first
 * call (scalar, or with lanes or powers from a long one), and in some
 * rounds a state passed twice or three times (its messages hashed in
 * order). Through the upper-state check.
 */
void poly_multi_diff(const chapoly_kernels *k)
{
    enum { N = 20 };
    static _Alignas(64) poly1305_state st[N], ref;
    poly1305_state *sp[N];
    const uint8_t *in[N], *pre_in[N];
    size_t len[N], pre[N], owner[N];
    uint8_t key[N][32], tag[16], rtag[16];

    for (size_t round = 0; round < 60; round++) {
        size_t n = 1 + round % N;

        for (size_t i = 0; i < n; i++) {
            rnd_bytes(key[i], 32);
            pre[i] = rnd_below(4) == 0 ? 16 * (rnd_below(3) == 0 ? 40 : 1 + rnd_below(5)) : 0;
            pre_in[i] = pool_at(pre[i]);
            k->poly1305_init(k, &st[i], key[i]);
            if (pre[i] > 0)
                k->poly1305_blocks(k, &st[i], pre_in[i], pre[i], 1);
            len[i] = 16 * (round & 1 ? 8 : rnd_below(71));
            in[i] = pool_at(len[i]);
            /* rounds 2 mod 3: some messages on an earlier message's state */
            owner[i] = round % 3 == 2 && i > 0 && rnd_below(3) == 0 ? rnd_below(i) : i;
            owner[i] = owner[owner[i]];
            sp[i] = &st[owner[i]];
        }
        k_poly_multi(k, sp, in, len, n);
        for (size_t i = 0; i < n; i++) {
            if (owner[i] != i)
                continue;
            k->poly1305_final(k, &st[i], tag);
            P->poly1305_init(P, &ref, key[i]);
            if (pre[i] > 0)
                P->poly1305_blocks(P, &ref, pre_in[i], pre[i], 1);
            for (size_t j = i; j < n; j++)
                if (owner[j] == i && len[j] > 0)
                    P->poly1305_blocks(P, &ref, in[j], len[j], 1);
            P->poly1305_final(P, &ref, rtag);
            CHECK(meq(tag, rtag, 16), "poly1305_multi_blocks n=%zu state %zu (%zu blocks after "
                  "%zu): tag differs from the portable Poly1305", n, i, len[i] / 16, pre[i] / 16);
        }
    }
}

/*
 * chacha20_multi_blocks_hash against the portable blocks and Poly1305: n
 * = 0..48 blocks, 0..24 rows of 0..70 blocks (some states past a first
 * call, some passed twice), at the level as built and with the stitched
 * form forced ("aead=stitched chacha-pairs=1024"), the rows it leaves
 * (in order, each moved past what it hashed) then through
 * poly1305_multi_blocks: the keystream, every tag, nothing written
 * outside the blocks; a row it left is a whole-block rest of the row, and
 * only the rows after the first it left may be untouched.
 */
void multi_hash_diff(const chapoly_kernels *k)
{
    enum { N = 24, NB = 48 };
    static uint32_t states[NB * 16];
    static uint8_t out_buf[NB * 64 + 2 * GUARD], ref[NB * 64];
    static _Alignas(64) poly1305_state st[N], rst;
    poly1305_state *sp[N];
    const uint8_t *in[N], *pre_in[N], *in0[N];
    size_t len[N], pre[N], owner[N], len0[N];
    uint8_t key[N][32], tag[16], rtag[16];
    chapoly_kernels forced;

    chapoly_kernels_build(&forced, k->name, "aead=stitched chacha-pairs=1024", NULL, NULL);
    for (size_t round = 0; round < 80; round++) {
        const chapoly_kernels *t = round & 1 ? &forced : k;
        size_t n = round % 5 == 0 ? 16 * (1 + rnd_below(3)) : rnd_below(NB + 1);
        size_t nh = rnd_below(N + 1);
        uint8_t *out = out_buf + GUARD;
        uint32_t kw[8], nonce[3];

        for (size_t i = 0; i < n; i++) {
            rnd_bytes((uint8_t *)kw, sizeof(kw));
            rnd_bytes((uint8_t *)nonce, sizeof(nonce));
            set_state(states + 16 * i, kw, pick_counter(i + round), nonce);
            memset(ref + 64 * i, 0, 64);
            chacha20_xor_portable_ref(ref + 64 * i, states + 16 * i + 4, states + 16 * i + 12);
        }
        for (size_t i = 0; i < nh; i++) {
            rnd_bytes(key[i], 32);
            pre[i] = rnd_below(4) == 0 ? 16 * (rnd_below(3) == 0 ? 40 : 1 + rnd_below(5)) : 0;
            pre_in[i] = pool_at(pre[i]);
            t->poly1305_init(t, &st[i], key[i]);
            if (pre[i] > 0)
                t->poly1305_blocks(t, &st[i], pre_in[i], pre[i], 1);
            len[i] = 16 * (round % 3 == 1 ? 5 : rnd_below(71));
            in[i] = pool_at(len[i]);
            owner[i] = round % 4 == 3 && i > 0 && rnd_below(3) == 0 ? rnd_below(i) : i;
            owner[i] = owner[owner[i]];
            sp[i] = &st[owner[i]];
            in0[i] = in[i];
            len0[i] = len[i];
        }
        memset(out_buf, SENT, sizeof(out_buf));
        k_multi_hash(t, out, states, n, sp, in, len, nh);
        int order = 1, left = 0;

        for (size_t i = 0; i < nh; i++) {
            size_t done = len0[i] - len[i];

            order &= len[i] <= len0[i] && done % 16 == 0 && in[i] == in0[i] + done &&
                     (!left || done == 0);
            left |= len[i] > 0;
        }
        CHECK(order, "chacha20_multi_blocks_hash n=%zu nh=%zu: the rows it left are not a "
              "whole-block rest in row order", n, nh);
        k_poly_multi(t, sp, in, len, nh);
        CHECK(meq(out, ref, n * 64), "chacha20_multi_blocks_hash n=%zu nh=%zu (%s): keystream "
              "differs from the portable blocks", n, nh, t == k ? "as built" : "stitched forced");
        CHECK(all_byte(out_buf, GUARD, SENT) &&
                  all_byte(out + 64 * n, sizeof(out_buf) - GUARD - 64 * n, SENT),
              "chacha20_multi_blocks_hash n=%zu wrote outside its blocks", n);
        for (size_t i = 0; i < nh; i++) {
            if (owner[i] != i)
                continue;
            t->poly1305_final(t, &st[i], tag);
            P->poly1305_init(P, &rst, key[i]);
            if (pre[i] > 0)
                P->poly1305_blocks(P, &rst, pre_in[i], pre[i], 1);
            for (size_t j = i; j < nh; j++)
                if (owner[j] == i && len0[j] > 0)
                    P->poly1305_blocks(P, &rst, in0[j], len0[j], 1);
            P->poly1305_final(P, &rst, rtag);
            CHECK(meq(tag, rtag, 16), "chacha20_multi_blocks_hash n=%zu nh=%zu (%s) state %zu "
                  "(%zu blocks after %zu): tag differs from the portable Poly1305", n, nh,
                  t == k ? "as built" : "stitched forced", i, len0[i] / 16, pre[i] / 16);
        }
    }
}
