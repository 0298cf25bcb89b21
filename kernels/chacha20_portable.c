/*
 * Portable ChaCha20 and HChaCha20 (RFC 8439 2.3, draft-irtf-cfrg-xchacha-03
 * 2.2). The oracle for every SIMD level.
 */
#include "kernels_impl.h"

#define QR(a, b, c, d)              \
    do {                            \
        a += b; d ^= a; d = rotl32(d, 16); \
        c += d; b ^= c; b = rotl32(b, 12); \
        a += b; d ^= a; d = rotl32(d, 8);  \
        c += d; b ^= c; b = rotl32(b, 7);  \
    } while (0)

static void chacha20_rounds(uint32_t x[16])
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

static void chacha20_init_state(uint32_t s[16], const uint32_t key[8],
                                const uint32_t ctr_nonce[4])
{
    s[0] = 0x61707865; /* "expand 32-byte k" */
    s[1] = 0x3320646e;
    s[2] = 0x79622d32;
    s[3] = 0x6b206574;
    for (int i = 0; i < 8; i++)
        s[4 + i] = key[i];
    for (int i = 0; i < 4; i++)
        s[12 + i] = ctr_nonce[i];
}

void chacha20_block_portable(uint32_t out[16], const uint32_t key[8],
                             const uint32_t ctr_nonce[4])
{
    uint32_t s[16];

    chacha20_init_state(s, key, ctr_nonce);
    for (int i = 0; i < 16; i++)
        out[i] = s[i];
    chacha20_rounds(out);
    for (int i = 0; i < 16; i++)
        out[i] += s[i];
    chapoly_wipe(s, sizeof(s));
}

void chacha20_xor_portable(uint8_t *out, const uint8_t *in, size_t len,
                           const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    uint32_t cn[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };
    uint32_t ks[16];
    uint8_t kb[64];

    while (len >= 64) {
        chacha20_block_portable(ks, key, cn);
        for (int i = 0; i < 16; i++)
            store32_le(out + 4 * i, load32_le(in + 4 * i) ^ ks[i]);
        cn[0]++; /* wraps mod 2^32 by contract */
        in += 64;
        out += 64;
        len -= 64;
    }
    if (len > 0) {
        chacha20_block_portable(ks, key, cn);
        for (int i = 0; i < 16; i++)
            store32_le(kb + 4 * i, ks[i]);
        for (size_t i = 0; i < len; i++)
            out[i] = in[i] ^ kb[i];
        chapoly_wipe(kb, sizeof(kb));
    }
    chapoly_wipe(ks, sizeof(ks));
}

void hchacha20_portable(uint8_t subkey[32], const uint8_t key[32],
                        const uint8_t nonce[16])
{
    uint32_t x[16], k[8], n[4];

    chapoly_load_key(k, key);
    for (int i = 0; i < 4; i++)
        n[i] = load32_le(nonce + 4 * i);
    chacha20_init_state(x, k, n);
    chacha20_rounds(x); /* no feed-forward: that is what makes it a KDF */
    for (int i = 0; i < 4; i++) {
        store32_le(subkey + 4 * i, x[i]);
        store32_le(subkey + 16 + 4 * i, x[12 + i]);
    }
    chapoly_wipe(x, sizeof(x));
    chapoly_wipe(k, sizeof(k));
}
