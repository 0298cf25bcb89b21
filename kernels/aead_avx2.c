/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stitched ChaCha20 + scalar Poly1305: the "avx2" table's
 * aead_xor_hash_range and aead_first_xor_hash when its path "aead" is
 * "stitched" (AVX2 + BMI2 only; the split form is generic.c's).
 *
 * The 8-lane ChaCha20 batch (512 bytes) keeps the vector ports busy; the
 * radix-2^64 Poly1305 step (mulx, poly1305_scalar.h) runs on the integer
 * ports. One asm block per batch holds both: 10 double rounds of the
 * column state (the register plan of chacha20_ymm.h) with up to 40
 * Poly1305 blocks spread over the quarter-round pairs, so the blocks of a
 * neighbouring batch are hashed at the same time. That wins where the
 * integer and vector pipes are separate (AMD) and loses where mulx shares
 * ports with the vector rounds (Intel): cpu_profiles.c. The hash h0 h1 h2
 * stays in general registers, the key words r0 r1 s1 are memory operands
 * (a stack copy), the message blocks are loaded as they are hashed.
 *
 * Range (kernels.h): batch j hashes up to 32 blocks (opening 40) of the run
 * [base - pre, base + hash_len), sealing only ciphertext earlier batches
 * wrote, opening in place each batch's own input before it is
 * overwritten. The first text: the key block and 7 text blocks in one
 * batch (head_batch), the MAC keyed from it (chapoly_aead_key_aad), then
 * the range with those 7 blocks as its pre bytes.
 *
 * A state with pending lanes is folded to the scalar hash first
 * (poly1305_scalar_avx2). Hygiene: no branch on secret data; the input
 * state, the parked words, the batch output before its transpose, the key
 * copy and whatever the compiler spills live in the frame of an
 * out-of-line function, which the caller overwrites afterwards
 * (scrub_stack_2k); the compiler ends the ymm functions with vzeroupper.
 */
#include "chacha20_ymm.h"
#include "poly1305_scalar.h"

/* vpshufb patterns rotating each 32-bit word left by 16 and by 8 bits. */
static const __m256i rot_tbl[2] = {
    { 0x0504070601000302LL, 0x0d0c0f0e09080b0aLL, 0x0504070601000302LL, 0x0d0c0f0e09080b0aLL },
    { 0x0605040702010003LL, 0x0e0d0c0f0a09080bLL, 0x0605040702010003LL, 0x0e0d0c0f0a09080bLL },
};

/*
 * One Poly1305 block at %[m] (padbit 1), m += 16: h = (h + m) r mod p,
 * partially reduced, the arithmetic and bounds of sc_blocks_mem
 * (poly1305_scalar.h). Clobbers rdx and the flags (the vector round code
 * around it uses neither).
 */
#define PB SC_STEP_ASM("%[kr0]", "%[kr1]", "%[ks1]")

/*
 * One whole batch (cols_batch_full_asm_ymm's), hashing nblk (0..40) blocks at m: c4
 * double rounds with four Poly1305 blocks each, c3 with three, then at
 * most one with two or one, the rest with none (counts in C; every loop
 * may run zero times). The counters are memory operands.
 * Not inlined (but in sanitizer builds): stitched_range calls it for
 * whole batches and for the last, partial one, and one copy of its loop
 * code serves both (a copy per call site put both in the path of a short
 * seal; docs/performance.md).
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CHAPOLY_SANITIZED_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(CHAPOLY_SANITIZED_BUILD)
/* the sanitizers' frame and instrumentation leave the asm too few registers out of line */
#define BATCH_HASH_LINKAGE CHAPOLY_INLINE
#else
#define BATCH_HASH_LINKAGE static __attribute__((noinline))
#endif
BATCH_HASH_LINKAGE void
batch_hash_n_asm(const __m256i init[16], __m256i park[4], uint8_t *out, const uint8_t *in,
                 uint64_t h[3], const uint64_t k[3], const uint8_t *m, unsigned nblk)
{
    uint64_t h0 = h[0], h1 = h[1], h2 = h[2], pa, pb, pc, pe;
    uintptr_t s = (uintptr_t)park - 256; /* CC_DROUND's slots: bytes 256..383 of s */
    unsigned c4 = nblk > 30 ? nblk - 30 : 0, c3 = nblk > 30 ? 10 - c4 : nblk / 3;
    unsigned c2 = nblk < 30 && nblk % 3 == 2, c1 = nblk < 30 && nblk % 3 == 1;
    unsigned c[5] = { c4, c3, c2, c1, 10 - c4 - c3 - c2 - c1 }; /* 4, 3, 2, 1, 0 blocks */

    __asm__("vmovdqa 320(%[i]), " CC_t0 "\n\t"
            "vmovdqa 352(%[i]), " CC_t1 "\n\t"
            "vmovdqa " CC_t0 ", 320(%[s])\n\t"
            "vmovdqa " CC_t1 ", 352(%[s])\n\t"
            CC_LOAD_FROM(i)
            "jmp 20f\n"
            "21:\n\t"
            CC_DROUND(PB, PB, PB, PB)
            "20:\n\t"
            "subl $1, 0+%[c]\n\t"
            "jnc 21b\n\t"
            "jmp 22f\n"
            "23:\n\t"
            CC_DROUND(PB, PB, PB, "")
            "22:\n\t"
            "subl $1, 4+%[c]\n\t"
            "jnc 23b\n\t"
            "jmp 24f\n"
            "25:\n\t"
            CC_DROUND(PB, "", PB, "")
            "24:\n\t"
            "subl $1, 8+%[c]\n\t"
            "jnc 25b\n\t"
            "jmp 26f\n"
            "27:\n\t"
            CC_DROUND(PB, "", "", "")
            "26:\n\t"
            "subl $1, 12+%[c]\n\t"
            "jnc 27b\n\t"
            "jmp 28f\n"
            "29:\n\t"
            CC_DROUND("", "", "", "")
            "28:\n\t"
            "subl $1, 16+%[c]\n\t"
            "jnc 29b\n\t"
            CC_FEED_XOR_STORE
            : [c] "+m"(c), [h0] "+r"(h0), [h1] "+r"(h1), [h2] "+r"(h2), [pa] "=&r"(pa),
              [pb] "=&r"(pb), [pc] "=&r"(pc), [pe] "=&r"(pe), [m] "+r"(m)
            : [s] "r"(s), [i] "r"(init), [o] "r"(out), [x] "r"(in), [kr0] "m"(k[0]),
              [kr1] "m"(k[1]), [ks1] "m"(k[2]), [r16] "m"(rot_tbl[0]), [r8] "m"(rot_tbl[1])
            : "cc", "rdx", "memory", CC_CLOBBERS);
    h[0] = h0;
    h[1] = h1;
    h[2] = h2;
}

/* Overwrite the stack just below the caller's frame (stitched_range's, head_batch's). */
CHAPOLY_DEFINE_SCRUB(scrub_stack_2k, 2048)
CHAPOLY_DEFINE_SCRUB(scrub_stack_1k, 1024)

/*
 * aead_xor_hash_range (kernels.h): batches of 512 bytes of text, the last
 * one through a stack copy if partial; batch j hashes up to 32 blocks of
 * the run [base - pre, base + hash_len) (base: out sealing, in opening),
 * in order: sealing only the ciphertext of earlier batches (and the pre
 * bytes), opening anything, so opening in place (pre 0) hashes exactly
 * each batch's own input before it is overwritten. Returns the bytes of
 * that run hashed here; the caller hashes the rest.
 */
static __attribute__((noinline)) size_t
stitched_range(uint8_t *out, const uint8_t *in, size_t len, size_t pre, size_t hash_len,
               const uint32_t key[8], const uint32_t ctr_nonce[4], uint64_t *p, int enc)
{
    _Alignas(32) __m256i init[16];
    _Alignas(32) __m256i park[4];
    _Alignas(32) uint8_t buf[512];
    uint64_t h[3] = { p[W_H], p[W_H + 1], p[W_H + 2] };
    const uint64_t k[3] = { p[W_KEY], p[W_KEY + 1], p[W_KEY + 2] };
    const uint8_t *m = (enc ? out : in) - pre;
    size_t total = (pre + hash_len) / 16, done = 0, nb = (len + 511) / 512;

    init[0] = BCAST8(SIGMA0);
    init[1] = BCAST8(SIGMA1);
    init[2] = BCAST8(SIGMA2);
    init[3] = BCAST8(SIGMA3);
    for (int i = 0; i < 8; i++)
        init[4 + i] = BCAST8(key[i]);
    init[12] = ADD8(BCAST8(ctr_nonce[0]), COLS_CTR_YMM);
    init[13] = BCAST8(ctr_nonce[1]);
    init[14] = BCAST8(ctr_nonce[2]);
    init[15] = BCAST8(ctr_nonce[3]);
    for (size_t j = 0; j < nb; j++) {
        size_t avail = enc ? (pre + 512 * j) / 16 : total, nblk, rem = len - 512 * j;

        if (avail > total)
            avail = total;
        if (enc) {
            nblk = avail - done < 32 ? avail - done : 32;
        } else {
            /*
             * opening: 40 blocks a batch while more than 32 a batch are
             * left, then 32, so that no tail is hashed alone (no division:
             * the constant-time rules forbid it even on public lengths)
             */
            size_t rest = total - done, cap = rest > 32 * (nb - j) ? 40 : 32;

            nblk = rest < cap ? rest : cap;
            if (out == in) { /* pre is 0: at least this batch's own input */
                size_t own = (512 * (j + 1)) / 16 < total ? (512 * (j + 1)) / 16 : total;

                if (nblk < own - done)
                    nblk = own - done;
            }
        }
        if (rem >= 512) {
            if (nblk > 0)
                batch_hash_n_asm(init, park, out + 512 * j, in + 512 * j, h, k, m,
                                 (unsigned)nblk);
            else
                cols_batch_full_asm_ymm(init, park, rot_tbl, out + 512 * j, in + 512 * j);
        } else {
            memcpy(buf, in + 512 * j, rem);
            memset(buf + rem, 0, 512 - rem);
            batch_hash_n_asm(init, park, buf, buf, h, k, m, (unsigned)nblk);
            memcpy(out + 512 * j, buf, rem);
            chapoly_wipe(buf, sizeof(buf)); /* keystream past rem */
        }
        m += 16 * nblk;
        done += nblk;
        init[12] = ADD8(init[12], BCAST8(8)); /* mod 2^32 per lane */
    }
    put64(p + W_H, h[0]);
    put64(p + W_H + 1, h[1]);
    put64(p + W_H + 2, h[2]);
    put64(p + W_SCALAR, p[W_SCALAR] + done);
    return 16 * done;
}

/*
 * Inlined in both entries below, so that in aead_first_xor_hash_avx2 the
 * one scrub after stitched_range also covers head_batch's frame, which
 * lies at the same depth (a separate scrub for it slowed short seals:
 * docs/performance.md).
 */
CHAPOLY_INLINE void range_body(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in,
                               size_t len, size_t pre, size_t hash_len, const uint32_t key[8],
                               const uint32_t ctr_nonce[4], poly1305_state *st, int enc)
{
    const uint8_t *base = (enc ? out : in) - pre;
    size_t done = 0;

    if (len > 0) {
        poly1305_scalar_avx2(st->priv);
        done = stitched_range(out, in, len, pre, hash_len, key, ctr_nonce, st->priv, enc);
        scrub_stack_2k();
    }
    if (pre + hash_len - done > 16 * 32) {
        poly1305_blocks_avx2(kt, st, base + done, pre + hash_len - done, 1);
    } else if (pre + hash_len > done) {
        /*
         * What the last batch wrote (sealing): at most a batch's 32 blocks,
         * scalar. Through poly1305_blocks_avx2 the state, warm after the
         * stitched blocks, would build its key powers for them and leave
         * lanes for the final, which costs more (docs/performance.md).
         */
        size_t nb = (pre + hash_len - done) / 16;

        poly1305_scalar_avx2(st->priv); /* len 0: lanes may pend */
        sc_blocks_mem(st->priv + W_H, st->priv + W_KEY, base + done, nb, 1);
        put64(st->priv + W_SCALAR, st->priv[W_SCALAR] + nb);
    }
}

void aead_xor_hash_range_avx2(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in,
                              size_t len, size_t pre, size_t hash_len, const uint32_t key[8],
                              const uint32_t ctr_nonce[4], poly1305_state *st, int enc)
{
    range_body(kt, out, in, len, pre, hash_len, key, ctr_nonce, st, enc);
}

/*
 * The end of a whole batch as CC_FEED_XOR_STORE, but block 0 (lane 0:
 * the chunks at byte offsets 0 and 32) goes raw to %[kb]; %[o] and %[x]
 * are out - 64 and in - 64, so blocks 1..7 are text bytes 0..447.
 */
#define CC_XST2_KB(lo, hi, t, a, b)                                          \
    "vperm2i128 $0x20, " hi ", " lo ", " t "\n\t"                             \
    "vmovdqu " t ", " #a "(%[kb])\n\t"                                        \
    "vperm2i128 $0x31, " hi ", " lo ", " t "\n\t"                             \
    "vpxor " #b "(%[x]), " t ", " t "\n\t"                                    \
    "vmovdqu " t ", " #b "(%[o])\n\t"
#define CC_FEED_XOR_STORE_KB CC_FEED_XOR_STORE_WITH(CC_XST2_KB)

/* Text beside the key block in its 8-lane batch: 7 blocks. */
#define AEAD_HEAD 448

/* The key block's batch: block ctr_nonce[0] to kb, text bytes 0..447 out = in ^ keystream. */
static __attribute__((noinline)) void head_batch(uint8_t kb[64], uint8_t *out, const uint8_t *in,
                                                 const uint32_t key[8],
                                                 const uint32_t ctr_nonce[4])
{
    _Alignas(32) __m256i init[16];
    _Alignas(32) __m256i park[4];
    uintptr_t s = (uintptr_t)park - 256, o = (uintptr_t)out - 64, x = (uintptr_t)in - 64;
    unsigned n;

    init[0] = BCAST8(SIGMA0);
    init[1] = BCAST8(SIGMA1);
    init[2] = BCAST8(SIGMA2);
    init[3] = BCAST8(SIGMA3);
    for (int i = 0; i < 8; i++)
        init[4 + i] = BCAST8(key[i]);
    init[12] = ADD8(BCAST8(ctr_nonce[0]), COLS_CTR_YMM);
    init[13] = BCAST8(ctr_nonce[1]);
    init[14] = BCAST8(ctr_nonce[2]);
    init[15] = BCAST8(ctr_nonce[3]);
    __asm__ volatile("vmovdqa 320(%[i]), " CC_t0 "\n\t"
                     "vmovdqa 352(%[i]), " CC_t1 "\n\t"
                     "vmovdqa " CC_t0 ", 320(%[s])\n\t"
                     "vmovdqa " CC_t1 ", 352(%[s])\n\t"
                     CC_LOAD_FROM(i)
                     "movl $10, %[n]\n\t"
                     ".p2align 5\n"
                     "1:\n\t"
                     CC_DROUND("", "", "", "")
                     "decl %[n]\n\t"
                     "jnz 1b\n\t"
                     CC_FEED_XOR_STORE_KB
                     : [n] "=&r"(n)
                     : [s] "r"(s), [i] "r"(init), [o] "r"(o), [x] "r"(x), [kb] "r"(kb),
                       [r16] "m"(rot_tbl[0]), [r8] "m"(rot_tbl[1])
                     : "cc", "memory", CC_CLOBBERS);
}

/* The most text the short row sets hold after a column batch: three sets. */
#define SHORT_ROWS_MAX 384

/*
 * "short-rows" with "aead=stitched": a text of 449 .. 448 + 384 bytes. The
 * key block and 7 blocks in one column batch (head_batch), the MAC keyed
 * and the AAD in, then the rest (1..6 blocks) in row sets sized to it
 * (chacha20_rows_short_avx2), with the hash of the head's ciphertext
 * (opening: of the whole text) between their rounds: a row set is
 * latency-bound, and the scalar multiplies fill the integer ports beside
 * it. What is left of the hash (sealing: the rest's ciphertext) follows,
 * scalar. The row sets scrub their own frame, this the head's.
 */
static void short_tail(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in, size_t len,
                       size_t hash_len, const uint8_t *aad, size_t aadlen, const uint32_t key[8],
                       const uint32_t ctr_nonce[4], poly1305_state *st, int enc)
{
    _Alignas(32) uint8_t kb[64];
    uint32_t cn[4] = { ctr_nonce[0] + 8, ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };
    const uint8_t *base = enc ? out : in;
    uint64_t *p = st->priv;
    /* sealing: the head's ciphertext; opening: everything, in is not written over */
    size_t now = (enc ? (hash_len < AEAD_HEAD ? hash_len : AEAD_HEAD) : hash_len) / 16;

    head_batch(kb, out, in, key, ctr_nonce);
    chapoly_aead_key_aad(kt, st, kb, aad, aadlen);
    chapoly_wipe(kb, sizeof(kb));
    poly1305_scalar_avx2(p); /* lanes may pend after a long AAD */
    if (now > 40)
        now = 40;
    chacha20_rows_short_avx2(NULL, out + AEAD_HEAD, in + AEAD_HEAD, len - AEAD_HEAD, key, cn,
                             p + W_H, p + W_KEY, base, now, 0);
    put64(p + W_SCALAR, p[W_SCALAR] + now);
    scrub_stack_1k(); /* head_batch's frame (its input state, about 0x2a0 bytes) */
    if (hash_len > 16 * now) {
        size_t nb = hash_len / 16 - now;

        sc_blocks_mem(p + W_H, p + W_KEY, base + 16 * now, nb, 1);
        put64(p + W_SCALAR, p[W_SCALAR] + nb);
    }
}

/*
 * shapes.open_rows (chapoly_open_rows): opening a short first text, the
 * key block in general registers, then the hash of the AAD and of the
 * ciphertext's hash_len bytes beside the text's row sets
 * (chacha20_rows_keyed_avx2): the ciphertext is there from the start, so
 * only the key block's rounds stand before the hash, not all of them.
 */
static void open_rows(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in, size_t len,
                      size_t hash_len, const uint8_t *aad, size_t aadlen, const uint32_t key[8],
                      const uint32_t ctr_nonce[4], poly1305_state *st)
{
    _Alignas(32) uint8_t kb[64];
    _Alignas(16) uint8_t ab[CHAPOLY_OPEN_ROWS_AAD + 16];
    uint64_t h[3], *p = st->priv;
    size_t na = chapoly_aead_pad16(ab, aadlen) / 16;

    if (aadlen > 0)
        memcpy(ab, aad, aadlen);
    chacha20_rows_keyed_avx2(kb, out, in, len, key, ctr_nonce, h, ab, na, in, hash_len / 16);
    kt->poly1305_init(kt, st, kb);
    st->buflen = 0;
    put64(p + W_H, h[0]);
    put64(p + W_H + 1, h[1]);
    put64(p + W_H + 2, h[2]);
    put64(p + W_SCALAR, na + hash_len / 16);
    chapoly_wipe(kb, sizeof(kb));
    chapoly_wipe(h, sizeof(h));
}

void aead_first_xor_hash_avx2(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in,
                              size_t len, size_t hash_len, const uint8_t *aad, size_t aadlen,
                              const uint32_t key[8], const uint32_t ctr_nonce[4],
                              poly1305_state *st, int enc)
{
    _Alignas(32) uint8_t kb[64];
    uint32_t cn[4] = { ctr_nonce[0] + 8, ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };
    size_t r = len % 512;

    if (!enc && chapoly_open_rows(&kt->shapes, len, aadlen)) {
        open_rows(kt, out, in, len, hash_len, aad, aadlen, key, ctr_nonce, st);
        return;
    }
    if (len > AEAD_HEAD && len - AEAD_HEAD <= SHORT_ROWS_MAX && len - AEAD_HEAD <= kt->shapes.short_rows) {
        short_tail(kt, out, in, len, hash_len, aad, aadlen, key, ctr_nonce, st, enc);
        return;
    }
    if (len <= AEAD_HEAD) { /* the key block's batch holds the whole text */
        chapoly_generic_first_xor_hash(kt, out, in, len, hash_len, aad, aadlen, key, ctr_nonce,
                                       st, enc);
        return;
    }
    /*
     * Opening a text whose batches would be one more with 7 blocks beside
     * the key block (len mod 512 is 0 or above 448: 1, 2, 4 KiB), the key
     * block goes alone and every batch hashes beside its ChaCha20 (opening
     * needs none of the text's batches first).
     */
    if (!enc && (r == 0 || r > AEAD_HEAD)) {
        kt->chacha20_keyblock_xor(kt, kb, NULL, NULL, 0, key, ctr_nonce);
        chapoly_aead_key_aad(kt, st, kb, aad, aadlen);
        chapoly_wipe(kb, sizeof(kb));
        cn[0] = ctr_nonce[0] + 1;
        aead_xor_hash_range_avx2(kt, out, in, len, 0, hash_len, key, cn, st, enc);
        return;
    }
    head_batch(kb, out, in, key, ctr_nonce);
    chapoly_aead_key_aad(kt, st, kb, aad, aadlen);
    chapoly_wipe(kb, sizeof(kb));
    /* len > AEAD_HEAD: range_body's scrub runs, and covers head_batch's frame too */
    range_body(kt, out + AEAD_HEAD, in + AEAD_HEAD, len - AEAD_HEAD, AEAD_HEAD,
               hash_len - AEAD_HEAD, key, cn, st, enc);
}
