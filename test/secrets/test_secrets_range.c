/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_secrets: the dead stack after each call of the range kernels,
 * aead_xor_hash_range (over whole kilobytes and around its batches) and
 * aead_first_xor_hash. The program's header and main: test_secrets.h,
 * test_secrets.c.
 */
#include "test_secrets.h"

/* ---- aead_xor_hash_range over whole kilobytes, from every state form ---- */
#define XH_MAX (16 * 1024)
/* a kilobyte of room before each: sealing, the pre bytes are the ciphertext just before out */
static uint8_t xin_b[1024 + XH_MAX], xout_b[1024 + XH_MAX], xref_b[1024 + XH_MAX];
static uint8_t xpre[1024], xtag[16];
#define xin (xin_b + 1024)
#define xout (xout_b + 1024)
#define xref (xref_b + 1024)
static _Alignas(64) poly1305_state xst, xsnap[2];

struct xop {
    const chapoly_kernels *k;
    size_t len;
    const uint8_t *pre;
    int enc;
};

static void xor_hash_op(void *arg)
{
    const struct xop *o = arg;

    o->k->aead_xor_hash_range(o->k, xout, xin, o->len, o->pre != NULL ? sizeof(xpre) : 0, o->len,
                              ckey, ccn, &xst, o->enc);
}

/*
 * Every value one block's rounds produce, in order: per quarter round the
 * four sums and the four XORs before and after their rotations (12).
 */
#define ROUND_VALUES (10 * 8 * 12)
static uint32_t rvals[16][ROUND_VALUES];

static void ref_round_values(uint32_t ctr, uint32_t v[ROUND_VALUES])
{
    static const int q[8][4] = { { 0, 4, 8, 12 }, { 1, 5, 9, 13 }, { 2, 6, 10, 14 },
                                 { 3, 7, 11, 15 }, { 0, 5, 10, 15 }, { 1, 6, 11, 12 },
                                 { 2, 7, 8, 13 }, { 3, 4, 9, 14 } };
    static const int rot[4] = { 16, 12, 8, 7 };
    uint32_t x[16], y[16];
    size_t n = 0;

    ref_init(x, ckey, ctr, ccn + 1);
    memcpy(y, x, sizeof(y));
    for (int r = 0; r < 10; r++)
        for (int i = 0; i < 8; i++)
            for (int h = 0; h < 4; h++) {
                /* steps a += b, d ^= a; c += d, b ^= c (twice): s += t, z ^= s, z <<<= rot */
                uint32_t *s = &x[q[i][h & 1 ? 2 : 0]], *t = &x[q[i][h & 1 ? 3 : 1]];
                uint32_t *z = &x[q[i][h & 1 ? 1 : 3]];

                *s += *t;
                v[n++] = *s;
                *z ^= *s;
                v[n++] = *z;
                *z = T_ROTL(*z, rot[h]);
                v[n++] = *z;
            }
    ref_rounds(y);
    if (memcmp(x, y, sizeof(x)) != 0)
        T_OK(0, "ref_round_values: rounds differ from ref_rounds");
}

/*
 * The rounds of the batch of 16 blocks from counter ctr0, as the 16-lane
 * kernels hold them: a vector of one value for blocks ctr0 .. ctr0 + 15,
 * so any two neighbouring lanes make a 64-bit word of the list.
 */
static void chacha_round_pair_words(uint32_t ctr0)
{
    for (int b = 0; b < 16; b++)
        ref_round_values(ctr0 + (uint32_t)b, rvals[b]);
    for (int b = 0; b + 1 < 16; b++)
        for (int i = 0; i < ROUND_VALUES; i++)
            add_word_idx(rvals[b][i] | (uint64_t)rvals[b + 1][i] << 32,
                         "ChaCha20 round value (two lanes)", i);
}

/*
 * The hash inside the call, batch by batch: the level's blocks() stepped 16
 * blocks at a time over what the call hashes, from the state before it;
 * the words each step changes are listed. The stitched kernel steps its
 * lanes as the MAC kernel's 16-lane path does, so from pending lanes these
 * are the very values it holds between its steps (from a scalar hash the
 * lanes start in another representation and only some match).
 */
static void xor_hash_step_words(const chapoly_kernels *k, const uint8_t *pre,
                                const uint8_t *hashed, size_t len)
{
    _Alignas(64) poly1305_state r = xsnap[0], prev;

    for (size_t off = pre != NULL ? 0 : 1024; off < 1024 + len; off += 256) {
        prev = r;
        k->poly1305_blocks(k, &r, off < 1024 ? pre + off : hashed + off - 1024, 256, 1);
        for (int i = 0; i < POLY1305_PRIV_WORDS; i++)
            if (r.priv[i] != prev.priv[i] && (r.priv[i] >> 40) != 0)
                add_word_idx(r.priv[i], "hash lane word within the call", i);
    }
}

/*
 * The table's aead_xor_hash_range at 1, 2, 4 and 16 KiB,
 * sealing with and without the kilobyte of earlier ciphertext (pre; an
 * open takes none) and opening, from a Poly1305 state in each form: blocks
 * hashed before it, 1 (scalar, no key powers yet), 24 (8 pending lanes)
 * and 48 (16 pending lanes) at the IFMA level, whose thresholds are 18 and
 * 40 blocks. Listed: the ChaCha20 key words and the state words before the
 * feed-forward of the first and the last kilobyte (32-bit); the Poly1305
 * key words, the accumulator at the tag, every wide word of the state
 * before and after the call (lanes, key powers), the lanes after each
 * batch of 16 blocks, and every round value of the last two ChaCha20
 * batches, lane pairs (64-bit).
 *
 * With GCC 12 the stitched loop spills hash lanes to its frame; an open
 * leaves them there when its scrub is cut to 512 bytes or less (found: the
 * lanes' top limb). A seal does not: the MAC kernel call that follows at
 * the same depth zeroes 1 KiB below its stack pointer. No round value or
 * key word was found there even without the scrub.
 */
void kernel_xor_hash_stack(const chapoly_kernels *k)
{
    static const size_t kibs[] = { 1, 2, 4, 16 };
    static const size_t pres[] = { 1, 24, 48 };
    const chapoly_kernels *P = chapoly_kernels_by_name("portable");
    char what[128];

    if (P == NULL)
        return;
    for (size_t ki = 0; ki < sizeof(kibs) / sizeof(kibs[0]); ki++)
        for (size_t pi = 0; pi < sizeof(pres) / sizeof(pres[0]); pi++)
            for (int mode = 0; mode < 3; mode++) { /* seal, seal after pre, open */
                size_t len = 1024 * kibs[ki], nb = len / 64;
                int enc = mode < 2;
                const uint8_t *pre = mode == 1 ? xpre : NULL;
                struct xop o = { k, len, pre, enc };
                _Alignas(64) poly1305_state r;
                uint8_t tag[16], rtag[16];

                t_rand_bytes(ckey, sizeof(ckey));
                t_rand_bytes(ccn, sizeof(ccn));
                ccn[0] = (uint32_t)t_rand64() & 0xffff; /* no 2^32 wrap: the AEAD never has one */
                t_rand_bytes(xin, len);
                t_rand_bytes(xpre, sizeof(xpre));
                t_rand_bytes(kkey, sizeof(kkey));
                t_rand_bytes(kmsg, sizeof(kmsg));

                /* off-scan: the states before and after, the tag, and the reference */
                k->poly1305_init(k, &xsnap[0], kkey);
                k->poly1305_blocks(k, &xsnap[0], kmsg, 16 * pres[pi], 1);
                xsnap[1] = xsnap[0];
                memcpy(xref - sizeof(xpre), xpre, sizeof(xpre));
                memcpy(xout - sizeof(xpre), xpre, sizeof(xpre));
                k->aead_xor_hash_range(k, xref, xin, len, pre != NULL ? sizeof(xpre) : 0, len, ckey,
                                       ccn, &xsnap[1], enc);
                r = xsnap[1];
                k->poly1305_final(k, &r, tag);
                P->chacha20_xor(P, xref, xin, len, ckey, ccn);
                P->poly1305_init(P, &r, kkey);
                P->poly1305_blocks(P, &r, kmsg, 16 * pres[pi], 1);
                if (pre != NULL)
                    P->poly1305_blocks(P, &r, xpre, sizeof(xpre), 1);
                P->poly1305_blocks(P, &r, enc ? xref : xin, len, 1);
                P->poly1305_final(P, &r, rtag);
                T_EQ_MEM(tag, rtag, 16, "aead_xor_hash_range tag, %zu KiB, mode %d, %zu blocks before",
                         kibs[ki], mode, pres[pi]);

                kernel_words(tag, &xsnap[0], &xsnap[1]);
                xor_hash_step_words(k, pre, enc ? xref : xin, len);
                /* the last two batches: the last to spill to each slot of either kind */
                for (size_t b = nb > 16 ? nb - 32 : 0; b < nb; b += 16)
                    chacha_round_pair_words(ccn[0] + (uint32_t)b);
                nwords32 = 0;
                for (int i = 0; i < 8; i++)
                    add_word32_idx(ckey[i], "ChaCha20 key word", i);
                for (size_t b = 0; b < 16; b++) {
                    uint8_t ks[64];
                    ref_block_words(ccn[0] + (uint32_t)b, (int)b, ks);
                    if (nb > 16)
                        ref_block_words(ccn[0] + (uint32_t)(nb - 16 + b), (int)(nb - 16 + b), ks);
                }
                xst = xsnap[0];
                snprintf(what, sizeof(what),
                         "kernel aead_xor_hash_range, %s%s, %zu KiB, %zu blocks before",
                         enc ? "seal" : "open", pre != NULL ? " after pre" : "", kibs[ki],
                         pres[pi]);
                check_op(xor_hash_op, &o, what);
                T_EQ_MEM(xout, xref, len, "%s: output", what);
                k->poly1305_final(k, &xst, xtag);
                T_EQ_MEM(xtag, tag, 16, "%s: tag", what);
            }
    nwords = 0;
    nwords32 = 0;
}

/* ---- aead_xor_hash_range and aead_first_xor_hash calls ---- */
#define RH_MAX 3136
static uint8_t rbuf[1024 + RH_MAX], rout[RH_MAX], rref[1024 + RH_MAX], raad[70];
static _Alignas(64) poly1305_state rsnap[2];

struct rop {
    const chapoly_kernels *k;
    int first;
    uint8_t *out;
    const uint8_t *in;
    size_t len, pre, hash_len, aadlen;
    int enc;
};

/* The table's entry: the level's kernel or the generic composition (generic.c). */
static void range_op(void *arg)
{
    const struct rop *o = arg;

    if (o->first)
        o->k->aead_first_xor_hash(o->k, o->out, o->in, o->len, o->hash_len, raad, o->aadlen, ckey,
                                  ccn, &xst, o->enc);
    else
        o->k->aead_xor_hash_range(o->k, o->out, o->in, o->len, o->pre, o->hash_len, ckey, ccn, &xst,
                                  o->enc);
}

/*
 * The words of one call over nblocks ChaCha20 blocks from ccn[0] with len
 * bytes of them used (first: block 0 is the key block): the key words, the
 * state before the feed-forward of the first and the last 16 blocks and
 * the keystream past len (32-bit); the round values of those blocks (lane
 * pairs), and the hash after each block of the hashed run stepped one
 * block at a time through the level's blocks() from the state before
 * (64-bit; from a scalar state these are the kernel's own chain values).
 */
static void range_words(const chapoly_kernels *k, const poly1305_state *before,
                        const uint8_t *hashed, size_t hash_blocks, size_t nblocks, size_t used)
{
    _Alignas(64) poly1305_state r, prev;

    if (before != NULL) {
        r = *before;
        for (size_t b = 0; b < hash_blocks; b++) {
            prev = r;
            k->poly1305_blocks(k, &r, hashed + 16 * b, 16, 1);
            for (int i = 0; i < POLY1305_PRIV_WORDS; i++)
                if (r.priv[i] != prev.priv[i] && (r.priv[i] >> 40) != 0)
                    add_word_idx(r.priv[i], "hash word within the call", i);
        }
    }
    chacha_round_pair_words(ccn[0]);
    if (nblocks > 16)
        chacha_round_pair_words(ccn[0] + (uint32_t)(nblocks - 16));
    nwords32 = 0;
    for (int i = 0; i < 8; i++)
        add_word32_idx(ckey[i], "ChaCha20 key word", i);
    /* the batches (8 blocks) the call runs: the last is whole even when the text is not */
    size_t nb8 = (nblocks + 7) & ~(size_t)7;
    for (size_t b = 0; b < nb8; b++) {
        uint8_t ks[64];

        if (b >= 16 && b + 16 < nb8)
            continue;
        ref_block_words(ccn[0] + (uint32_t)b, (int)b, ks);
        for (size_t w = 0; w < 16; w++)
            if (64 * b + 4 * w >= used)
                add_word32_idx(le32(ks + 4 * w), "keystream word past the text", (int)(16 * b + w));
    }
}

/*
 * aead_xor_hash_range over 0..3136 bytes around the 512-byte batches, pre
 * 0, 16, 512 and 1024 bytes of ciphertext before the text, sealing in
 * place and opening (in place with pre 0, else to another buffer), from a
 * Poly1305 state in each form (1, 24, 48 blocks hashed before: scalar, 8
 * and 16 pending lanes at the IFMA level); hash_len the text's whole
 * 64-byte blocks (as the AEAD core) or whole 16-byte blocks.
 */
void kernel_range_stack(const chapoly_kernels *k)
{
    static const size_t lens[] = { 0, 16, 64, 447, 511, 512, 513, 1000, 1024, 1040,
                                   1535, 1536, 2048, 2100, 2560, 3072, 3136 };
    static const size_t pres[] = { 0, 16, 512, 1024 };
    static const size_t befores[] = { 1, 24, 48 };
    const chapoly_kernels *P = chapoly_kernels_by_name("portable");
    char what[160];
    size_t n = 0;

    if (P == NULL)
        return;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
        for (size_t pi = 0; pi < sizeof(pres) / sizeof(pres[0]); pi++)
            for (int enc = 1; enc >= 0; enc--, n++) {
                size_t len = lens[li], pre = pres[pi], bb = befores[n % 3];
                size_t hash_len = len & ~(size_t)((n & 1) ? 15 : 63);
                uint8_t *base = rbuf + 1024;
                uint8_t *out = (enc || pre == 0) ? base : rout;
                struct rop o = { k, 0, out, base, len, pre, hash_len, 0, enc };
                _Alignas(64) poly1305_state r;
                uint8_t tag[16], rtag[16];

                t_rand_bytes(ckey, sizeof(ckey));
                t_rand_bytes(ccn, sizeof(ccn));
                ccn[0] = (uint32_t)t_rand64() & 0xffff; /* the AEAD has no 2^32 wrap */
                t_rand_bytes(rbuf, sizeof(rbuf));
                t_rand_bytes(kkey, sizeof(kkey));
                t_rand_bytes(kmsg, sizeof(kmsg));

                /* the reference: portable ChaCha20 and Poly1305 in the order the entry describes */
                memcpy(rref, rbuf, sizeof(rref));
                P->chacha20_xor(P, rref + 1024, rref + 1024, len, ckey, ccn);
                P->poly1305_init(P, &r, kkey);
                P->poly1305_blocks(P, &r, kmsg, 16 * bb, 1);
                if (pre + hash_len > 0)
                    P->poly1305_blocks(P, &r, (enc ? rref : rbuf) + 1024 - pre, pre + hash_len, 1);
                P->poly1305_final(P, &r, rtag);
                /* off-scan: the level's states before and after, its tag */
                k->poly1305_init(k, &rsnap[0], kkey);
                k->poly1305_blocks(k, &rsnap[0], kmsg, 16 * bb, 1);
                r = rsnap[0];
                k->poly1305_blocks(k, &r, (enc ? rref : rbuf) + 1024 - pre, pre + hash_len, 1);
                rsnap[1] = r;
                k->poly1305_final(k, &r, tag);
                T_EQ_MEM(tag, rtag, 16, "aead_xor_hash_range reference tag, %zu bytes", len);

                kernel_words(tag, &rsnap[0], &rsnap[1]);
                range_words(k, &rsnap[0], (enc ? rref : rbuf) + 1024 - pre, (pre + hash_len) / 16,
                            (len + 63) / 64, len);
                xst = rsnap[0];
                snprintf(what, sizeof(what),
                         "kernel aead_xor_hash_range, %s%s, %zu bytes, pre %zu, hash %zu, "
                         "%zu blocks before",
                         enc ? "seal" : "open", out == base ? " in place" : "", len, pre,
                         hash_len, bb);
                check_op(range_op, &o, what);
                T_EQ_MEM(out, rref + 1024, len, "%s: output", what);
                k->poly1305_final(k, &xst, xtag);
                T_EQ_MEM(xtag, rtag, 16, "%s: tag", what);
            }
    nwords = 0;
    nwords32 = 0;
}

/*
 * aead_first_xor_hash over 0..3136 bytes with 0 and 70 bytes of AAD
 * (whole blocks and a padded partial one), sealing in place and opening
 * to another buffer, hash_len the whole 64-byte blocks (the AEAD core)
 * or 448. Listed besides: the Poly1305 key (block ctr_nonce[0]) words.
 */
void kernel_first_stack(const chapoly_kernels *k)
{
    static const size_t lens[] = { 64, 65, 128, 129, 192, 193, 256, 300, 320, 321, 448,
                                   449, 464, 511, 512, 513, 576, 640, 700, 768, 769, 832, 833,
                                   960, 961, 1024, 1350, 1536, 2048, 2500, 3072, 3136 };
    static const size_t aadlens[] = { 0, 70 };
    const chapoly_kernels *P = chapoly_kernels_by_name("portable");
    char what[160];
    size_t n = 0;

    if (P == NULL)
        return;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
        for (size_t ai = 0; ai < 2; ai++)
            for (int enc = 1; enc >= 0; enc--, n++) {
                size_t len = lens[li], aadlen = aadlens[ai];
                size_t hash_len = (n % 4 == 3 && len >= 448) ? 448 : len & ~(size_t)63;
                uint8_t *base = rbuf + 1024;
                uint8_t *out = enc ? base : rout;
                struct rop o = { k, 1, out, base, len, 0, hash_len, aadlen, enc };
                _Alignas(64) poly1305_state r;
                uint8_t tag[16], otk[64], pad[16] = { 0 };

                t_rand_bytes(ckey, sizeof(ckey));
                t_rand_bytes(ccn, sizeof(ccn));
                ccn[0] = (uint32_t)t_rand64() & 0xffff;
                t_rand_bytes(rbuf, sizeof(rbuf));
                t_rand_bytes(raad, sizeof(raad));

                /* the reference: portable key block, AAD padded, text, hash */
                memset(otk, 0, sizeof(otk));
                P->chacha20_xor(P, otk, otk, 64, ckey, ccn);
                memcpy(rref, rbuf, sizeof(rref));
                ccn[0]++;
                P->chacha20_xor(P, rref + 1024, rref + 1024, len, ckey, ccn);
                ccn[0]--;
                P->poly1305_init(P, &r, otk);
                if (aadlen >= 16)
                    P->poly1305_blocks(P, &r, raad, aadlen & ~(size_t)15, 1);
                if (aadlen % 16 != 0) {
                    memcpy(pad, raad + (aadlen & ~(size_t)15), aadlen % 16);
                    P->poly1305_blocks(P, &r, pad, 16, 1);
                }
                P->poly1305_blocks(P, &r, (enc ? rref : rbuf) + 1024, hash_len, 1);
                P->poly1305_final(P, &r, tag);
                /* off-scan: the level's state after */
                k->poly1305_init(k, &rsnap[1], otk);
                if (aadlen >= 16)
                    k->poly1305_blocks(k, &rsnap[1], raad, aadlen & ~(size_t)15, 1);
                if (aadlen % 16 != 0)
                    k->poly1305_blocks(k, &rsnap[1], pad, 16, 1);
                rsnap[0] = rsnap[1];
                k->poly1305_blocks(k, &rsnap[1], (enc ? rref : rbuf) + 1024, hash_len, 1);

                memcpy(kkey, otk, 32);
                kernel_words(tag, NULL, &rsnap[1]);
                add_state_words(&rsnap[0], "state word (after the AAD)");
                range_words(k, &rsnap[0], (enc ? rref : rbuf) + 1024, hash_len / 16,
                            1 + (len + 63) / 64, 64 + len);
                for (int w = 8; w < 16; w++) /* the key block's unused half */
                    add_word32_idx(le32(otk + 4 * w), "key block word", w);
                memset(&xst, 0xa5, sizeof(xst)); /* needs no init */
                snprintf(what, sizeof(what),
                         "kernel aead_first_xor_hash, %s, %zu bytes, AAD %zu, hash %zu",
                         enc ? "seal in place" : "open", len, aadlen, hash_len);
                check_op(range_op, &o, what);
                T_EQ_MEM(out, rref + 1024, len, "%s: output", what);
                k->poly1305_final(k, &xst, xtag);
                T_EQ_MEM(xtag, tag, 16, "%s: tag", what);
                chapoly_wipe(otk, sizeof(otk));
            }
    nwords = 0;
    nwords32 = 0;
}

