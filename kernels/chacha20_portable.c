/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Portable ChaCha20 and HChaCha20 (RFC 8439 2.3, draft-irtf-cfrg-xchacha-03
 * 2.2). The oracle for every SIMD level.
 */
#include "kernels_impl.h"

#define QR CHAPOLY_QR32

/* Inlined into each out-of-line function below: one frame to scrub. */
CHAPOLY_INLINE void chacha20_rounds(uint32_t x[16])
{
    for (int i = 0; i < 10; i++) {
        QR(x[0], x[4], x[8], x[12]);
        QR(x[1], x[5], x[9], x[13]);
        QR(x[2], x[6], x[10], x[14]);
        QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]);
        QR(x[1], x[6], x[11], x[12]);
        QR(x[2], x[7], x[8], x[13]);
        QR(x[3], x[4], x[9], x[14]);
    }
}

/*
 * One keystream block as words. The feed-forward reads the key and nonce
 * from the caller's arrays again instead of from a copy of the input
 * state: fewer values for the compiler to keep (and spill) across the
 * rounds, so a smaller frame to scrub.
 */
CHAPOLY_INLINE void chacha20_block_words(uint32_t x[16], const uint32_t key[8],
                                         const uint32_t ctr, const uint32_t nonce[3])
{
    chacha20_input_state(x, key, ctr, nonce);
    chacha20_rounds(x);
    x[0] += SIGMA0;
    x[1] += SIGMA1;
    x[2] += SIGMA2;
    x[3] += SIGMA3;
    for (int i = 0; i < 8; i++)
        x[4 + i] += key[i];
    x[12] += ctr;
    for (int i = 0; i < 3; i++)
        x[13 + i] += nonce[i];
}

/*
 * Dead stack: sixteen state words do not fit in the general registers, so
 * the compiler spills round state, the state after the rounds included
 * (GCC at -O3 parked it in the red zone of an out-of-line round function),
 * and that minus the keystream is the input block, key words and all. So
 * each exported function runs its rounds in one out-of-line function,
 * leaves the words it holds to the spill slots of that frame, and then
 * scrubs where the frame was, once per call. Optimised, those frames reach
 * at most about 330 bytes below the caller (GCC at -O3, xor_impl: return
 * address, six saved registers, a 0x108-byte frame); test_secrets fails
 * with SCRUB_BYTES 256. Unoptimised builds keep every local in the frame.
 */
#ifdef __OPTIMIZE__
#define SCRUB_BYTES 384
#else
#define SCRUB_BYTES 1024
#endif
CHAPOLY_DEFINE_SCRUB(scrub_stack, SCRUB_BYTES)

static CHAPOLY_NOINLINE void block_impl(uint32_t out[16], const uint32_t key[8],
                                        const uint32_t ctr_nonce[4])
{
    chacha20_block_words(out, key, ctr_nonce[0], ctr_nonce + 1);
}

void chacha20_block_portable(uint32_t out[16], const uint32_t key[8],
                             const uint32_t ctr_nonce[4])
{
    block_impl(out, key, ctr_nonce);
    scrub_stack();
}

/* len > 0. One copy of the rounds for whole and partial blocks. */
static CHAPOLY_NOINLINE void xor_impl(uint8_t *out, const uint8_t *in, size_t len,
                                      const uint32_t key[8],
                                      const uint32_t ctr_nonce[4])
{
    uint32_t x[16], ctr = ctr_nonce[0];
    uint8_t keystream[64];

    for (;;) {
        chacha20_block_words(x, key, ctr, ctr_nonce + 1);
        if (len < 64)
            break;
        for (int i = 0; i < 16; i++)
            store32_le(out + 4 * i, load32_le(in + 4 * i) ^ x[i]);
        len -= 64;
        if (len == 0)
            return;
        ctr++; /* wraps mod 2^32 by contract */
        in += 64;
        out += 64;
    }
    for (int i = 0; i < 16; i++)
        store32_le(keystream + 4 * i, x[i]);
    for (size_t i = 0; i < len; i++)
        out[i] = in[i] ^ keystream[i];
    chapoly_wipe(keystream, sizeof(keystream));
}

void chacha20_xor_portable(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in, size_t len,
                           const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    (void)kt;
    if (len == 0)
        return;
    xor_impl(out, in, len, key, ctr_nonce);
    scrub_stack();
}

/*
 * The words live in registers and this frame's spill slots, which the
 * caller's scrub_stack overwrites (as for the other functions here): no
 * wipe of its own, no call on the XChaCha20 rekey's path.
 */
static CHAPOLY_NOINLINE void hchacha20_impl(uint8_t subkey[32], const uint8_t key[32],
                                            const uint8_t nonce[16])
{
    uint32_t x[16], k[8], n[4];

    for (int i = 0; i < 8; i++)
        k[i] = load32_le(key + 4 * i);
    for (int i = 0; i < 4; i++)
        n[i] = load32_le(nonce + 4 * i);
    chacha20_input_state(x, k, n[0], n + 1);
    chacha20_rounds(x); /* no feed-forward: that is what makes it a KDF */
    for (int i = 0; i < 4; i++) {
        store32_le(subkey + 4 * i, x[i]);
        store32_le(subkey + 16 + 4 * i, x[12 + i]);
    }
}

void hchacha20_portable(const chapoly_kernels *kt, uint8_t subkey[32], const uint8_t key[32],
                        const uint8_t nonce[16])
{
    (void)kt;
    hchacha20_impl(subkey, key, nonce);
    scrub_stack();
}
