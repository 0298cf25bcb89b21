/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chacha20_multi_blocks for the "avx2" level: n independent blocks, each
 * with its own input state (key, counter, nonce), for the batched AEAD
 * (core/aead_batch.c). Row layout, which takes per-block states as they
 * are: a ymm row set holds two blocks (one per 128-bit lane), and two row
 * sets run interleaved (four blocks, two dependency chains); an odd last
 * block gets a zero partner state whose block is never stored. The
 * feed-forward re-reads the input states from memory.
 *
 * Rotates: by 16 and 8 with vpshufb, by 12 and 7 with shift + shift + or.
 * The compiler may spill row state (as secret as the key: the rounds are
 * invertible), so the rounds run out of line and the caller scrubs that
 * frame afterwards. The compiler ends every function that touches ymm with
 * vzeroupper.
 */
#include "chacha20_ymm.h"

#define ROT16_BYTES 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13
#define ROT8_BYTES 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14

#define ROLS8(a, n) _mm256_or_si256(_mm256_slli_epi32(a, n), _mm256_srli_epi32(a, 32 - (n)))

#define QR_YMM(a, b, c, d)                                                  \
    do {                                                                    \
        a = ADD8(a, b); d = XOR8(d, a); d = _mm256_shuffle_epi8(d, r16);    \
        c = ADD8(c, d); b = XOR8(b, c); b = ROLS8(b, 12);                   \
        a = ADD8(a, b); d = XOR8(d, a); d = _mm256_shuffle_epi8(d, r8);     \
        c = ADD8(c, d); b = XOR8(b, c); b = ROLS8(b, 7);                    \
    } while (0)

/* Row r (0..3) of states j (lane 0) and j + 1 (lane 1, zeros if absent). */
CHAPOLY_INLINE __m256i row_pair(const uint32_t *states, size_t j, size_t n, int r)
{
    __m128i lo = _mm_loadu_si128((const __m128i *)(states + 16 * j + 4 * r));
    __m128i hi = j + 1 < n ? _mm_loadu_si128((const __m128i *)(states + 16 * (j + 1) + 4 * r))
                           : _mm_setzero_si128();

    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* Blocks j (lane 0) and j + 1 (lane 1, if present) of a row set, fed forward. */
CHAPOLY_INLINE void store_pair(uint8_t *out, const uint32_t *states, size_t j, size_t n,
                               __m256i a, __m256i b, __m256i c, __m256i d)
{
    a = ADD8(a, row_pair(states, j, n, 0));
    b = ADD8(b, row_pair(states, j, n, 1));
    c = ADD8(c, row_pair(states, j, n, 2));
    d = ADD8(d, row_pair(states, j, n, 3));
    _mm256_storeu_si256((__m256i *)(out + 64 * j), _mm256_permute2x128_si256(a, b, 0x20));
    _mm256_storeu_si256((__m256i *)(out + 64 * j + 32), _mm256_permute2x128_si256(c, d, 0x20));
    if (j + 1 < n) {
        _mm256_storeu_si256((__m256i *)(out + 64 * j + 64),
                            _mm256_permute2x128_si256(a, b, 0x31));
        _mm256_storeu_si256((__m256i *)(out + 64 * j + 96),
                            _mm256_permute2x128_si256(c, d, 0x31));
    }
}

static __attribute__((noinline)) void multi_rows(uint8_t *out, const uint32_t *states, size_t n)
{
    const __m256i r16 = _mm256_setr_epi8(ROT16_BYTES, ROT16_BYTES);
    const __m256i r8 = _mm256_setr_epi8(ROT8_BYTES, ROT8_BYTES);
    size_t j = 0;

    for (; j + 2 < n; j += 4) { /* three or four blocks: two row sets */
        __m256i a = row_pair(states, j, n, 0), b = row_pair(states, j, n, 1);
        __m256i c = row_pair(states, j, n, 2), d = row_pair(states, j, n, 3);
        __m256i p = row_pair(states, j + 2, n, 0), q = row_pair(states, j + 2, n, 1);
        __m256i r = row_pair(states, j + 2, n, 2), s = row_pair(states, j + 2, n, 3);

        ROUNDS_ROWS2_YMM(a, b, c, d, p, q, r, s);
        OPAQUE_PTR(states);
        store_pair(out, states, j, n, a, b, c, d);
        store_pair(out, states, j + 2, n, p, q, r, s);
    }
    if (j < n) { /* one or two blocks: one row set */
        __m256i a = row_pair(states, j, n, 0), b = row_pair(states, j, n, 1);
        __m256i c = row_pair(states, j, n, 2), d = row_pair(states, j, n, 3);

        ROUNDS_ROWS_YMM(a, b, c, d);
        OPAQUE_PTR(states);
        store_pair(out, states, j, n, a, b, c, d);
    }
}

/* multi_rows' frame: about 0x100 bytes optimised (objdump); a wide margin. */
CHAPOLY_DEFINE_SCRUB(scrub_stack_1k, 1024)

void chacha20_multi_blocks_avx2(const chapoly_kernels *kt, uint8_t *out, const uint32_t *states, size_t n)
{
    (void)kt;
    if (n == 0)
        return;
    multi_rows(out, states, n);
    scrub_stack_1k();
}

/* ---- poly1305_multi_blocks in front of poly1305_blocks_avx2 ---- */

#include "batch_poly.h"

void poly1305_multi_blocks_avx2(const chapoly_kernels *kt, poly1305_state *const st[], const uint8_t *const in[],
                                const size_t len[], size_t n)
{
    multi_poly(kt, st, in, len, n, poly1305_blocks_avx2);
}
