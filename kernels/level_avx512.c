/*
 * The "avx512vl" (ymm kernels with vprold and opmasks) and "avx512" (zmm
 * kernels) level tables. Entries a level does not accelerate point at the
 * portable functions. The ChaCha20 entries and the Poly1305 entries are
 * owned by different kernel files; keep each group's lines together.
 */
#include "kernels_impl.h"

void chacha20_xor_avx512vl(uint8_t *out, const uint8_t *in, size_t len,
                           const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chacha20_xor_avx512(uint8_t *out, const uint8_t *in, size_t len,
                         const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chacha20_xor_kb_avx512(uint8_t kb[64], uint8_t *out, const uint8_t *in, size_t len,
                            const uint32_t key[8], const uint32_t ctr_nonce[4]);
/* IFMA when the CPU has it, else AVX2 radix 2^26 (poly1305_avx512.c) */
void poly1305_init_avx512(poly1305_state *st, const uint8_t key[32]);
void poly1305_blocks_avx512(poly1305_state *st, const uint8_t *in, size_t len,
                            unsigned padbit);
void poly1305_final_avx512(poly1305_state *st, uint8_t tag[16]);
/* stitched ChaCha20 + IFMA Poly1305 (aead_avx512.c) */
void aead_xor_hash_avx512(uint8_t *out, const uint8_t *in, size_t len,
                          const uint32_t key[8], const uint32_t ctr_nonce[4],
                          poly1305_state *st, const uint8_t *pre, int enc);

const chapoly_kernels chapoly_kernels_avx512vl = {
    .name = "avx512vl",
    .features = "AVX2 BMI2 AVX-512F/VL/BW/DQ",
    .chacha20_xor = chacha20_xor_avx512vl,
    .chacha20_xor_kb = NULL,
    .hchacha20 = hchacha20_portable,
    .poly1305_init = poly1305_init_avx512,
    .poly1305_blocks = poly1305_blocks_avx512,
    .poly1305_final = poly1305_final_avx512,
    .aead_seal = NULL,
    .aead_open = NULL,
    .aead_xor_hash = NULL,
};

const chapoly_kernels chapoly_kernels_avx512 = {
    .name = "avx512",
    .features = "AVX2 BMI2 AVX-512F/VL/BW/DQ",
    .chacha20_xor = chacha20_xor_avx512,
    .chacha20_xor_kb = chacha20_xor_kb_avx512,
    .hchacha20 = hchacha20_portable,
    .poly1305_init = poly1305_init_avx512,
    .poly1305_blocks = poly1305_blocks_avx512,
    .poly1305_final = poly1305_final_avx512,
    .aead_seal = NULL,
    .aead_open = NULL,
    .aead_xor_hash = aead_xor_hash_avx512,
};
