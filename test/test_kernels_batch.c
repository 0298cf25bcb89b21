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

    composed.chacha20_multi_blocks = NULL;
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
                chapoly_chacha20_multi_blocks(&composed, out, states, n);
                CHECK(meq(out, ref, n * 64), "composed multi blocks n=%zu differ", n);
            }
        }
    }
}
