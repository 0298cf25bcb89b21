/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_secrets: the dead stack after each Poly1305 kernel call (one state,
 * and eight through poly1305_multi_blocks) and each ChaCha20 kernel call
 * of the level under test, with the reference ChaCha20 rounds the words
 * come from. The program's header and main: test_secrets.h, test_secrets.c.
 */
#include "test_secrets.h"

/* ---- kernel table calls ---- */
static _Alignas(64) poly1305_state kst;
uint8_t kkey[32], kmsg[4096], ktag[16];

struct kop {
    const chapoly_kernels *k;
    int which; /* 0 init, 1 blocks, 2 final, 3 last */
    const uint8_t *in;
    size_t len;
    unsigned padbit;
};

static void kernel_op(void *arg)
{
    const struct kop *o = arg;

    if (o->which == 0)
        o->k->poly1305_init(o->k, &kst, kkey);
    else if (o->which == 1)
        o->k->poly1305_blocks(o->k, &kst, o->in, o->len, o->padbit);
    else if (o->which == 2)
        o->k->poly1305_final(o->k, &kst, ktag);
    else
        o->k->poly1305_last(o->k, &kst, o->in, o->len, o->padbit, ktag);
}

static _Alignas(64) poly1305_state kref, ksnap[4];

/*
 * The vector lanes a state holds (words 16..63: the AVX2 level's 5 x 4
 * lanes, IFMA's 3 x 8 + 3 x 8), as 32-byte vectors.
 */
static void add_lane_vecs(const poly1305_state *st, const char *what)
{
    for (size_t w = 16; w + 4 <= 64; w += 4)
        add_vec4(st->priv + w, what);
}

/* The words known before and after one call: the key's and the states'. */
void kernel_words(const uint8_t *tag, const poly1305_state *before,
                  const poly1305_state *after)
{
    nwords = 0;
    nvecs = 0;
    add_poly_words(kkey, tag);
    if (before != NULL) {
        add_state_words(before, "state word (before the call)");
        add_lane_vecs(before, "state lanes (before the call)");
    }
    if (after != NULL) {
        add_state_words(after, "state word (after the call)");
        add_lane_vecs(after, "state lanes (after the call)");
    }
}

/*
 * Up to three blocks() calls of n0, n1 and n2 blocks, then final. n1: 1, 5
 * and 14 (scalar everywhere), 17, 20 and 24 (IFMA 8 lanes after a scalar
 * prefix of 1, 4 and 8 blocks run beside the key powers), 32, 43, 45 (16
 * lanes; 43: an odd number of batches), 64 and 256 (whole batches; AVX2
 * batches). A state's first vector call folds its lanes at its end; after
 * a first call of n0 = 32 blocks, the next vector call leaves whole
 * batches pending. n2 = 1 (a padded partial block: pending lanes are
 * folded, then a scalar block), 13 and 21 (lanes go on, then a partial
 * batch of 5 blocks), 17 (lanes go on, then one scalar block after the
 * fold), 16 (whole batches go on), 7 and 15 after pending lanes (the last
 * three blocks in a partial batch with the final powers: AVX2 finish4) or
 * none (final folds the lanes). Then the same state again with the n2
 * blocks and the tag in one poly1305_last call (the scalar loop on the
 * hash in registers where it is short, the lanes folded first).
 */
void kernel_poly_stack(const chapoly_kernels *k)
{
    static const size_t n[][3] = { { 0, 1, 1 },   { 0, 5, 1 },   { 0, 14, 1 },  { 0, 17, 1 },
                                   { 0, 20, 1 },  { 0, 24, 13 }, { 0, 24, 17 }, { 0, 32, 0 },
                                   { 0, 32, 1 },  { 0, 32, 21 }, { 0, 43, 1 },  { 0, 45, 1 },
                                   { 0, 64, 16 }, { 0, 256, 0 }, { 32, 32, 0 }, { 32, 32, 13 },
                                   { 32, 64, 1 }, { 32, 24, 17 }, { 32, 64, 16 }, { 32, 32, 15 },
                                   { 32, 64, 7 } };
    char what[96];

    for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
        size_t n0 = n[i][0], n1 = n[i][1], n2 = n[i][2];
        size_t at[3] = { 0, n0, n0 + n1 };
        unsigned pad[3] = { 1, 1, n2 == 1 ? 0 : 1 };
        struct kop o = { k, 0, kmsg, 0, 1 };
        uint8_t tag[16];

        t_rand_bytes(kkey, sizeof(kkey));
        t_rand_bytes(kmsg, sizeof(kmsg));
        /* the same calls off-scan first: the states after each, and the tag */
        k->poly1305_init(k, &kref, kkey);
        ksnap[0] = kref;
        for (int c = 0; c < 3; c++) {
            if (n[i][c] > 0)
                k->poly1305_blocks(k, &kref, kmsg + 16 * at[c], 16 * n[i][c], pad[c]);
            ksnap[1 + c] = kref;
        }
        k->poly1305_final(k, &kref, tag);

        kernel_words(tag, NULL, &ksnap[0]);
        snprintf(what, sizeof(what), "kernel poly1305_init");
        check_op(kernel_op, &o, what);
        for (int c = 0; c < 3; c++) {
            if (n[i][c] == 0)
                continue;
            kernel_words(tag, &ksnap[c], &ksnap[1 + c]);
            add_lane_product_words(kkey, kmsg + 16 * at[c], n[i][c], pad[c]);
            o.which = 1;
            o.in = kmsg + 16 * at[c];
            o.len = 16 * n[i][c];
            o.padbit = pad[c];
            snprintf(what, sizeof(what), "kernel poly1305_blocks, %zu blocks after %zu", n[i][c],
                     at[c]);
            check_op(kernel_op, &o, what);
        }
        kernel_words(tag, &ksnap[3], NULL);
        o.which = 2;
        snprintf(what, sizeof(what), "kernel poly1305_final after %zu + %zu + %zu blocks", n0, n1,
                 n2);
        check_op(kernel_op, &o, what);
        T_EQ_MEM(ktag, tag, 16, "kernel tag after %zu + %zu + %zu blocks", n0, n1, n2);
        /* final wipes the state: hash, key, pad, lanes and key powers */
        size_t left = POLY1305_PRIV_WORDS;
        for (size_t w = 0; w < POLY1305_PRIV_WORDS; w++)
            if (kst.priv[w] == 0)
                left--;
        T_OK(left == 0,
             "kernel poly1305_final after %zu + %zu + %zu blocks (%s): %zu state words not wiped",
             n0, n1, n2, t_kernel(), left);

        /* the end again as one poly1305_last call on the state before it */
        kst = ksnap[2];
        kernel_words(tag, &ksnap[2], NULL);
        if (n2 > 0)
            add_lane_product_words(kkey, kmsg + 16 * at[2], n2, pad[2]);
        o.which = 3;
        o.in = n2 > 0 ? kmsg + 16 * at[2] : NULL;
        o.len = 16 * n2;
        o.padbit = pad[2];
        memset(ktag, 0, sizeof(ktag));
        snprintf(what, sizeof(what), "kernel poly1305_last of %zu blocks after %zu + %zu", n2, n0,
                 n1);
        check_op(kernel_op, &o, what);
        T_EQ_MEM(ktag, tag, 16, "kernel poly1305_last tag after %zu + %zu + %zu blocks", n0, n1,
                 n2);
        left = POLY1305_PRIV_WORDS;
        for (size_t w = 0; w < POLY1305_PRIV_WORDS; w++)
            if (kst.priv[w] == 0)
                left--;
        T_OK(left == 0,
             "kernel poly1305_last after %zu + %zu + %zu blocks (%s): %zu state words not wiped",
             n0, n1, n2, t_kernel(), left);
    }
    nvecs = 0;
}

/*
 * poly1305_multi_blocks (the batched AEAD): eight states of 2, 3 or 16
 * blocks each, or of unequal lengths (lanes for the common blocks, scalar
 * chains for the rest), or short messages between ones long enough for the
 * level's vector path (a scalar chain, then a poly1305_blocks call: what
 * the chain leaves in registers must not reach that call's frame). The
 * words of all eight keys and the states after.
 */
static _Alignas(64) poly1305_state kst8[8], kref8[8];
static uint8_t kkeys[8][32];
static const size_t *kmulti_len;

static void multi_op(void *arg)
{
    const chapoly_kernels *k = arg;
    poly1305_state *st[8];
    const uint8_t *in[8];

    for (int i = 0; i < 8; i++) {
        st[i] = &kst8[i];
        in[i] = kmsg + 256 * i;
    }
    k->poly1305_multi_blocks(k, st, in, kmulti_len, 8);
}

void kernel_poly_multi_stack(const chapoly_kernels *k)
{
    static const size_t lens[][8] = {
        { 32, 32, 32, 32, 32, 32, 32, 32 },
        { 48, 48, 48, 48, 48, 48, 48, 48 },
        { 256, 256, 256, 256, 256, 256, 256, 256 },
        { 256, 48, 128, 16, 240, 64, 32, 176 },
        { 48, 768, 16, 512, 32, 400, 64, 1024 },
    };
    char what[96];

    for (size_t c = 0; c < sizeof(lens) / sizeof(lens[0]);
         c++) {
        poly1305_state *st[8];
        const uint8_t *in[8];

        t_rand_bytes(kmsg, sizeof(kmsg));
        nwords = 0;
        for (int i = 0; i < 8; i++) {
            t_rand_bytes(kkeys[i], 32);
            k->poly1305_init(k, &kst8[i], kkeys[i]);
            kref8[i] = kst8[i];
            st[i] = &kref8[i];
            in[i] = kmsg + 256 * i;
            add_poly_words(kkeys[i], NULL);
        }
        k->poly1305_multi_blocks(k, st, in, lens[c], 8); /* off-scan: the states after */
        for (int i = 0; i < 8; i++)
            add_state_words(&kref8[i], "state word (after the call)");
        kmulti_len = lens[c];
        snprintf(what, sizeof(what), "kernel poly1305_multi_blocks, case %zu", c);
        check_op(multi_op, (void *)k, what);
        for (int i = 0; i < 8; i++)
            T_OK(memcmp(kst8[i].priv, kref8[i].priv, 8 * 16) == 0, "%s: state %d", what, i);
    }
    nwords = 0;
}

/* ---- ChaCha20 kernel calls ---- */
uint32_t ckey[8], ccn[4];
static uint8_t cin[2048], cout[2048], ckb[64], chkey[32], chnonce[16], csub[32];

struct cop {
    const chapoly_kernels *k;
    int which; /* 0 chacha20_xor, 1 chacha20_keyblock_xor, 2 hchacha20, 3 chacha20_multi_blocks,
                  4 the level's one-block row form (row1) */
    size_t len;
    row1_fn row1;
};

static uint32_t cstates[32 * 16];

static void chacha_op(void *arg)
{
    const struct cop *o = arg;

    if (o->which == 0)
        o->k->chacha20_xor(o->k, cout, cin, o->len, ckey, ccn);
    else if (o->which == 1)
        o->k->chacha20_keyblock_xor(o->k, ckb, cout, cin, o->len, ckey, ccn);
    else if (o->which == 3)
        o->k->chacha20_multi_blocks(o->k, cout, cstates, o->len); /* len: blocks */
    else if (o->which == 4)
        o->row1(cout, cin, o->len, ckey, ccn);
    else
        o->k->hchacha20(o->k, csub, chkey, chnonce);
}


void ref_rounds(uint32_t x[16])
{
    for (int i = 0; i < 10; i++) {
        T_QR(x[0], x[4], x[8], x[12]);
        T_QR(x[1], x[5], x[9], x[13]);
        T_QR(x[2], x[6], x[10], x[14]);
        T_QR(x[3], x[7], x[11], x[15]);
        T_QR(x[0], x[5], x[10], x[15]);
        T_QR(x[1], x[6], x[11], x[12]);
        T_QR(x[2], x[7], x[8], x[13]);
        T_QR(x[3], x[4], x[9], x[14]);
    }
}

void ref_init(uint32_t s[16], const uint32_t key[8], uint32_t ctr, const uint32_t n[3])
{
    s[0] = 0x61707865;
    s[1] = 0x3320646e;
    s[2] = 0x79622d32;
    s[3] = 0x6b206574;
    for (int i = 0; i < 8; i++)
        s[4 + i] = key[i];
    s[12] = ctr;
    for (int i = 0; i < 3; i++)
        s[13 + i] = n[i];
}

uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/*
 * Block 'ctr' of (ckey, ccn): its state words after the rounds go on the
 * 32-bit list (index b * 16 + word), its keystream to ks.
 */
void ref_block_words(uint32_t ctr, int b, uint8_t ks[64])
{
    uint32_t s[16], x[16];

    ref_init(s, ckey, ctr, ccn + 1);
    memcpy(x, s, sizeof(x));
    ref_rounds(x);
    for (int i = 0; i < 16; i++) {
        add_word32_idx(x[i], "ChaCha20 state word before the feed-forward", b * 16 + i);
        uint32_t k = x[i] + s[i];
        for (int j = 0; j < 4; j++)
            ks[4 * i + j] = (uint8_t)(k >> (8 * j));
    }
}

static void chacha_key_words(void)
{
    nwords = 0;
    nwords32 = 0;
    for (int i = 0; i < 8; i++)
        add_word32_idx(ckey[i], "ChaCha20 key word", i);
}

/* Random key, nonce and counter (near the 2^32 wrap one time in four). */
static void chacha_fresh(void)
{
    t_rand_bytes(ckey, sizeof(ckey));
    t_rand_bytes(ccn, sizeof(ccn));
    if ((t_rand64() & 3) == 0)
        ccn[0] = 0xfffffff0u + (uint32_t)t_rand_below(16);
    t_rand_bytes(cin, sizeof(cin));
}

static uint8_t cks[2048 + 64];

/*
 * Blocks ctr0 .. ctr0 + nb - 1 of (ckey, ccn): keystream to cks, words to
 * the lists. Computed before the call: stack_clear zeroes what these frames
 * leave below the caller, so the scan sees only what the kernel leaves.
 */
static void ref_blocks(uint32_t ctr0, size_t nb)
{
    for (size_t b = 0; b < nb; b++)
        ref_block_words(ctr0 + (uint32_t)b, (int)b, cks + 64 * b);
}

void kernel_chacha_stack(const chapoly_kernels *k)
{
    /*
     * one block (the SIMD levels' scalar fallback), rows, columns, tails;
     * 1024: whole batches only (the avx2 level wipes its own state there
     * instead of scrubbing the frame); 1000 and 2048: a partial and two
     * whole 16-block batches (with GCC 12 either one, added at 580765f,
     * made main leave the EVP cases' key word 3 in r15: see run_scan)
     */
    static const size_t lens[] = { 1, 63, 64, 65, 200, 600, 1000, 1024, 2000, 2048 };
    static const size_t kblens[] = { 0, 1, 63, 64, 65, 128, 192, 200, 256, 320, 321, 600, 1984 };
    char what[96];

    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t len = lens[i];
        struct cop o = { k, 0, len, NULL };
        int ok = 1;

        chacha_fresh();
        chacha_key_words();
        ref_blocks(ccn[0], (len + 63) / 64);
        snprintf(what, sizeof(what), "kernel chacha20_xor, %zu bytes", len);
        check_op(chacha_op, &o, what);
        for (size_t j = 0; j < len; j++)
            ok &= cout[j] == (cin[j] ^ cks[j]);
        T_OK(ok, "%s: output differs from the reference", what);
    }
    /* the key block and 0.. blocks after it, as the AEAD calls it */
    for (size_t i = 0; i < sizeof(kblens) / sizeof(kblens[0]); i++) {
        size_t len = kblens[i];
        struct cop o = { k, 1, len, NULL };
        int ok = 1;

        chacha_fresh();
        chacha_key_words();
        ref_blocks(ccn[0], 1 + (len + 63) / 64);
        snprintf(what, sizeof(what), "kernel chacha20_keyblock_xor, %zu bytes", len);
        check_op(chacha_op, &o, what);
        ok &= memcmp(ckb, cks, 64) == 0;
        for (size_t j = 0; j < len; j++)
            ok &= cout[j] == (cin[j] ^ cks[64 + j]);
        T_OK(ok, "%s: output differs from the reference", what);
    }
    /* n blocks of (ckey, ccn) from their input states: every shape of the batch kernels */
    static const size_t mbns[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 20, 24, 32 };
    for (size_t i = 0; i < sizeof(mbns) / sizeof(mbns[0]); i++) {
        size_t nb = mbns[i];
        struct cop o = { k, 3, nb, NULL };

        chacha_fresh();
        chacha_key_words();
        ref_blocks(ccn[0], nb);
        for (size_t b = 0; b < nb; b++)
            ref_init(cstates + 16 * b, ckey, ccn[0] + (uint32_t)b, ccn + 1);
        snprintf(what, sizeof(what), "kernel chacha20_multi_blocks, %zu blocks", nb);
        check_op(chacha_op, &o, what);
        T_OK(memcmp(cout, cks, 64 * nb) == 0, "%s: output differs from the reference", what);
    }
    memset(cstates, 0, sizeof(cstates));
    /*
     * The level's one-block row form (row1_forms.h; not a table entry yet):
     * it keeps the state in xmm registers and scrubs nothing, so nothing of
     * it may be on the stack.
     */
    static const size_t row1lens[] = { 0, 1, 5, 16, 17, 31, 32, 33, 48, 63, 64 };
    const struct row1_form *f = row1_form_for(k->name);
    for (size_t i = 0; f != NULL && i < sizeof(row1lens) / sizeof(row1lens[0]); i++) {
        size_t len = row1lens[i];
        struct cop o = { k, 4, len, f->fn };
        int ok = 1;

        chacha_fresh();
        chacha_key_words();
        ref_blocks(ccn[0], 1);
        snprintf(what, sizeof(what), "kernel %s, %zu bytes", f->name, len);
        check_op(chacha_op, &o, what);
        for (size_t j = 0; j < len; j++)
            ok &= cout[j] == (cin[j] ^ cks[j]);
        T_OK(ok, "%s: output differs from the reference", what);
    }
    for (int rep = 0; rep < 4; rep++) {
        struct cop o = { k, 2, 0, NULL };
        uint32_t x[16], kw[8], n[4], sub[8];

        t_rand_bytes(chkey, sizeof(chkey));
        t_rand_bytes(chnonce, sizeof(chnonce));
        nwords = 0;
        nwords32 = 0;
        for (int i = 0; i < 8; i++) {
            kw[i] = le32(chkey + 4 * i);
            add_word32_idx(kw[i], "HChaCha20 key word", i);
        }
        for (int i = 0; i < 4; i++)
            n[i] = le32(chnonce + 4 * i);
        ref_init(x, kw, n[0], n + 1);
        ref_rounds(x);
        /* all 16 words: the rounds are invertible, any full state is the key */
        for (int i = 0; i < 16; i++)
            add_word32_idx(x[i], (i < 4 || i >= 12) ? "HChaCha20 subkey word"
                                                    : "HChaCha20 state word after the rounds", i);
        snprintf(what, sizeof(what), "kernel hchacha20 (%d)", rep);
        check_op(chacha_op, &o, what);
        for (int i = 0; i < 4; i++) {
            sub[i] = x[i];
            sub[4 + i] = x[12 + i];
        }
        for (int i = 0; i < 8; i++)
            T_OK(le32(csub + 4 * i) == sub[i], "hchacha20 subkey word %d", i);
    }
    nwords = 0;
    nwords32 = 0;
}


/*
 * chacha20_multi_blocks_hash (the batched AEAD's pipeline form) with the
 * stitched form forced ("aead=stitched chacha-pairs=1024"): 32 blocks of
 * (ckey, ccn) and eight Poly1305 rows of 5 or 17 blocks (40 beside one
 * pair, or more than its slots: rows left for the caller). The ChaCha20
 * words, the eight keys, the states after.
 */
static const chapoly_kernels *mh_k;
static const size_t *mh_len;

static void mhash_op(void *arg)
{
    poly1305_state *st[8];
    const uint8_t *in[8];
    size_t len[8];

    (void)arg;
    for (int i = 0; i < 8; i++) {
        st[i] = &kst8[i];
        in[i] = kmsg + 256 * i;
        len[i] = mh_len[i];
    }
    mh_k->chacha20_multi_blocks_hash(mh_k, cout, cstates, 32, st, in, len, 8);
}

void kernel_multi_hash_stack(const chapoly_kernels *k)
{
    static const size_t lens[][8] = {
        { 80, 80, 80, 80, 80, 80, 80, 80 },
        { 272, 272, 272, 272, 272, 272, 272, 272 },
    };
    static chapoly_kernels t;
    char what[96];

    chapoly_kernels_build(&t, k->name, "aead=stitched chacha-pairs=1024", NULL, NULL);
    mh_k = &t;
    for (size_t c = 0; c < sizeof(lens) / sizeof(lens[0]); c++) {
        poly1305_state *st[8];
        const uint8_t *in[8];
        size_t len[8];

        t_rand_bytes(kmsg, sizeof(kmsg));
        nwords = 0;
        chacha_fresh();
        chacha_key_words();
        ref_blocks(ccn[0], 32);
        for (size_t b = 0; b < 32; b++)
            ref_init(cstates + 16 * b, ckey, ccn[0] + (uint32_t)b, ccn + 1);
        for (int i = 0; i < 8; i++) {
            t_rand_bytes(kkeys[i], 32);
            t.poly1305_init(&t, &kst8[i], kkeys[i]);
            kref8[i] = kst8[i];
            st[i] = &kref8[i];
            in[i] = kmsg + 256 * i;
            len[i] = lens[c][i];
            add_poly_words(kkeys[i], NULL);
        }
        t.chacha20_multi_blocks_hash(&t, cout, cstates, 32, st, in, len, 8); /* off-scan */
        for (int i = 0; i < 8; i++)
            add_state_words(&kref8[i], "state word (after the call)");
        mh_len = lens[c];
        snprintf(what, sizeof(what), "kernel chacha20_multi_blocks_hash, rows of %zu bytes",
                 lens[c][0]);
        check_op(mhash_op, NULL, what);
        T_OK(memcmp(cout, cks, 64 * 32) == 0, "%s: keystream differs from the reference", what);
        for (int i = 0; i < 8; i++)
            T_OK(memcmp(kst8[i].priv, kref8[i].priv, 8 * 16) == 0, "%s: state %d", what, i);
    }
    nwords = 0;
}
