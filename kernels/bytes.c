/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Byte helpers every layer shares: a wipe the optimiser cannot remove, a
 * constant-time comparison, and ChaCha20 key bytes to key words.
 */
#include "kernels_impl.h"

static void *(*volatile wipe_memset)(void *, int, size_t) = memset;

void chapoly_wipe(void *p, size_t n)
{
    if (n > 0)
        wipe_memset(p, 0, n);
}

int chapoly_consttime_memneq(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t acc = 0;

    for (size_t i = 0; i < n; i++)
        acc |= x[i] ^ y[i];
    return (int)value_barrier_u64(acc) != 0;
}

void chapoly_load_key(uint32_t key[8], const uint8_t bytes[32])
{
    for (int i = 0; i < 8; i++)
        key[i] = load32_le(bytes + 4 * i);
}
