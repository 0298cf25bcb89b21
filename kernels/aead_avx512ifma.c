/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stitched ChaCha20 + IFMA Poly1305 over whole kilobytes: the "avx512"
 * table's aead_xor_hash_range entry when its path "aead" is "stitched" (a CPU
 * profile or a forced path: cpu_profiles.c). That table requires IFMA
 * (dispatch.c) and is the only user of this file. The split form, the
 * level's default ("aead=split"), is the generic one (generic.c): chunk by
 * chunk (shapes.aead_chunk, sized to stay in L1) ChaCha20 with two 16-lane
 * batches in flight and then the 16-lane IFMA hash of the chunk. Where the
 * ChaCha20 rounds alone keep the vector ports busy (short-latency dependent
 * vpaddd/vpxord/vprold) the split form is the faster one, also against IFMA
 * steps beside the double rounds of a two-batch loop, around which the
 * compiler parks ChaCha20 words (docs/performance.md).
 *
 * Stitched: a 16-lane ChaCha20 batch (1024 bytes) is a chain of 80
 * dependent quarter rounds per lane group and leaves vector ports idle
 * where dependent vector ops have a long latency. The IFMA Poly1305 steps
 * of the neighbouring kilobyte (8 steps of 8 lanes,
 * two accumulators stepping by r^16, exactly run16 of poly1305_avx512ifma.c)
 * are placed between its double rounds, one step after each of double
 * rounds 2..9, so both run at once, while the hashed kilobyte is still
 * in L1.
 *
 * Stitched pipelines over n kilobytes (chunk i = bytes 1024 i .. 1024 i + 1023):
 *   seal  chacha(0) + hash(prev_ciphertext) if the caller passes the
 *         kilobyte of ciphertext before out, else chacha(0) alone;
 *         chacha(i) + hash(out chunk i - 1) for i = 1..n-1;
 *         hash(out chunk n - 1)
 *   open  hash(in chunk 0); chacha(i) + hash(in chunk i + 1) for
 *         i = 0..n-2; chacha(n - 1)
 * In place (out == in) the open pipeline hashes chunk i + 1 before it is
 * overwritten, and the seal pipeline hashes chunk i - 1 after it was
 * written. The unstitched hash goes through poly1305_blocks_avx512ifma,
 * which also takes a scalar or 8-lane state into 16 pending lanes; the
 * stitched steps continue those lanes, and the call ends with the lanes
 * pending, as a blocks() call of a whole number of 16-block batches does.
 *
 * Hygiene: nothing branches on secret data; zmm16-31 are zeroed and the
 * compiler's vzeroupper cleans the rest; the stack below the caller, where
 * the stitched loop may have spilled round or hash values, is overwritten
 * before returning (the split form's callees scrub their own).
 */
#include "chacha20_zmm.h"
#include "poly1305_ifma.h"

/* r^16 in every lane, re-read from the power table (lane i = 0 is r^16). */
CHAPOLY_INLINE vkey r16_bcast(const uint64_t *p)
{
    vkey k = { _mm512_set1_epi64((long long)p[W_POW]),
               _mm512_set1_epi64((long long)p[W_POW + 16]),
               _mm512_set1_epi64((long long)p[W_POW + 32]),
               _mm512_set1_epi64((long long)p[W_POW20]),
               _mm512_set1_epi64((long long)p[W_POW20 + 16]) };
    return k;
}

/*
 * One kilobyte of ChaCha20 (counter c0 .. c0 + 15) and, if 'hash' (a
 * constant at each call site), the 64 Poly1305 blocks at h folded into the
 * lanes a (blocks 16 s .. 16 s + 7 of step s) and b (16 s + 8 .. 16 s + 15).
 * The message blocks are loaded during the rounds, before this batch
 * stores its output.
 */
CHAPOLY_INLINE void stitched_kilobyte(uint8_t *out, const uint8_t *in,
                                      const uint32_t *key_words,
                                      const uint32_t *ctr_nonce_words, uint32_t c0,
                                      const uint8_t *h, const uint64_t *powers,
                                      uint64_t *lane0_hash, v3 *pa, v3 *pb, int hash)
{
    const uint32_t *key = key_words, *ctr_nonce = ctr_nonce_words;
    const __m512i padv = _mm512_set1_epi64((long long)1 << 40);
    v3 a = *pa, b = *pb;

    OPAQUE_PTR(key);
    OPAQUE_PTR(ctr_nonce);
    COLS_INIT_ZMM(key, ADD16(BCAST16(c0), COLS_CTR_ZMM), ctr_nonce[1], ctr_nonce[2],
                  ctr_nonce[3]);
#pragma GCC unroll 10
    for (int i = 0; i < 10; i++) {
        DROUND_COLS_ZMM();
        if (hash && i >= 1 && i <= 8) {
            const uint64_t *q = powers;
            int s = i - 1;

            OPAQUE_PTR(q); /* powers are reloaded, never held across rounds */
            vkey rk = r16_bcast(q);
            if (s & 1) {
                b = ifma_mul(b, &rk, load8(h + 256 * (s / 2) + 128, padv));
            } else if (s == 0) {
                uint64_t *x = lane0_hash;

                OPAQUE_PTR(x);
                a = ifma_mul(a, &rk, v3_add(load8(h, padv), v3_load(x)));
                v3_store(x, v3_zero());
            } else {
                a = ifma_mul(a, &rk, load8(h + 256 * (s / 2), padv));
            }
        }
    }
    OPAQUE_PTR(key);
    OPAQUE_PTR(ctr_nonce);
    COLS_FEED_ZMM(key, ADD16(BCAST16(c0), COLS_CTR_ZMM), ctr_nonce[1], ctr_nonce[2],
                  ctr_nonce[3]);
    COLS_TRANSPOSE_ZMM();
    COLS_STORE_FULL_ZMM(NULL, out, in);
    *pa = a;
    *pb = b;
}

/*
 * n >= 1 kilobytes (n >= 2 when sealing without prev_ciphertext). Whatever
 * form the hash is in (scalar, 8 or 16 pending lanes), it continues as 16
 * pending lanes: 8 lanes C become A = 0, B = C; a scalar hash h joins the
 * first hashed block in lane 0 of A (lane0_hash), as in run16.
 */
static __attribute__((noinline)) void
stitched_kilobytes(uint8_t *out, const uint8_t *in, size_t n, const uint32_t key[8],
                   const uint32_t ctr_nonce[4], uint64_t *p, const uint8_t *prev_ciphertext,
                   int enc)
{
    _Alignas(64) uint64_t lane0_hash[24];
    unsigned st = (unsigned)p[W_STATE];
    uint32_t c0 = ctr_nonce[0];
    v3 a = v3_zero(), b = v3_zero();

    poly1305_powers_avx512ifma(p, 1);
    v3_store(lane0_hash, v3_zero());
    if (st & ST_L16) {
        a = v3_load(p + W_LANES);
        b = v3_load(p + W_LANES + 24);
    } else if (st & ST_L8) {
        b = v3_load(p + W_LANES + 24);
    } else {
        v3_store(lane0_hash, scalar_to_lane0(p));
    }
    if (enc) {
        size_t i = 0;

        if (prev_ciphertext == NULL) {
            stitched_kilobyte(out, in, key, ctr_nonce, c0, NULL, p, lane0_hash, &a, &b, 0);
            i = 1;
        }
        for (; i < n; i++) {
            stitched_kilobyte(out + 1024 * i, in + 1024 * i, key, ctr_nonce,
                              c0 + 16 * (uint32_t)i,
                              i > 0 ? out + 1024 * (i - 1) : prev_ciphertext, p, lane0_hash,
                              &a, &b, 1);
        }
    } else {
        for (size_t i = 0; i + 1 < n; i++) {
            stitched_kilobyte(out + 1024 * i, in + 1024 * i, key, ctr_nonce, c0,
                              in + 1024 * (i + 1), p, lane0_hash, &a, &b, 1);
            c0 += 16;
        }
        stitched_kilobyte(out + 1024 * (n - 1), in + 1024 * (n - 1), key, ctr_nonce, c0,
                          NULL, p, lane0_hash, &a, &b, 0);
    }
    v3_store(p + W_LANES, a);
    v3_store(p + W_LANES + 24, b);
    p[W_STATE] = (st & ~(ST_L8 | ST_L16)) | ST_L16 | ST_POW8 | ST_POW16;
}

/* Overwrite the stack just below the caller's frame (stitched_kilobytes' frame). */
CHAPOLY_DEFINE_SCRUB(scrub_stack_2k, 2048)

/*
 * Whole kilobytes stitched (the pipelines above); prev: the kilobyte of
 * ciphertext before out, hashed beside the first kilobyte's ChaCha20.
 */
static void stitched_run(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in, size_t n,
                         const uint32_t key[8], const uint32_t ctr_nonce[4],
                         poly1305_state *st, const uint8_t *prev, int enc)
{
    if (n == 1 && prev == NULL) { /* nothing to overlap */
        if (enc) {
            chacha20_xor_avx512(kt, out, in, 1024, key, ctr_nonce);
            poly1305_blocks_avx512ifma(kt, st, out, 1024, 1);
        } else {
            poly1305_blocks_avx512ifma(kt, st, in, 1024, 1);
            chacha20_xor_avx512(kt, out, in, 1024, key, ctr_nonce);
        }
        return;
    }
    /*
     * The unstitched kilobyte of hashing, last (seal) or first (open), goes
     * through the MAC kernel: 64 blocks take its 16-lane path.
     */
    if (enc) {
        stitched_kilobytes(out, in, n, key, ctr_nonce, st->priv, prev, 1);
        poly1305_blocks_avx512ifma(kt, st, out + 1024 * (n - 1), 1024, 1);
    } else {
        poly1305_blocks_avx512ifma(kt, st, in, 1024, 1);
        stitched_kilobytes(out, in, n, key, ctr_nonce, st->priv, NULL, 0);
    }
    scrub_stack_2k();
    zero_zmm16_31();
}

/*
 * aead_xor_hash_range (kernels.h): the whole kilobytes stitched, sealing
 * with a kilobyte of pre bytes hashed beside the first; other pre bytes
 * first, the text after the last whole kilobyte last, unstitched.
 */
void aead_xor_hash_range_avx512ifma(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in,
                                    size_t len, size_t pre, size_t hash_len,
                                    const uint32_t key[8], const uint32_t ctr_nonce[4],
                                    poly1305_state *st, int enc)
{
    size_t whole = hash_len >= (len & ~(size_t)1023) ? len & ~(size_t)1023 : 0;
    size_t rest_hash = hash_len - whole;
    const uint8_t *prev = enc && pre == 1024 && whole > 0 ? out - 1024 : NULL;
    uint32_t cn[4] = { ctr_nonce[0] + (uint32_t)(whole / 64), ctr_nonce[1], ctr_nonce[2],
                       ctr_nonce[3] };

    if (pre > 0 && prev == NULL)
        poly1305_blocks_avx512ifma(kt, st, (enc ? out : in) - pre, pre, 1);
    if (whole > 0)
        stitched_run(kt, out, in, whole / 1024, key, ctr_nonce, st, prev, enc);
    if (len == whole)
        return;
    if (enc) {
        chacha20_xor_avx512(kt, out + whole, in + whole, len - whole, key, cn);
        if (rest_hash > 0)
            poly1305_blocks_avx512ifma(kt, st, out + whole, rest_hash, 1);
    } else {
        if (rest_hash > 0)
            poly1305_blocks_avx512ifma(kt, st, in + whole, rest_hash, 1);
        chacha20_xor_avx512(kt, out + whole, in + whole, len - whole, key, cn);
    }
}
