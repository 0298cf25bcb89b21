/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Byte helpers every layer shares: a wipe the optimiser cannot remove and
 * ChaCha20 key bytes to key words. (The tag comparison is the AEAD core's:
 * chapoly_tag_equal.)
 */
#include "kernels_impl.h"

static void *(*volatile wipe_memset)(void *, int, size_t) = memset;

void chapoly_wipe(void *p, size_t n)
{
    if (n > 0)
        wipe_memset(p, 0, n);
}

void chapoly_load_key(uint32_t key[8], const uint8_t bytes[32])
{
    for (int i = 0; i < 8; i++)
        key[i] = load32_le(bytes + 4 * i);
}
