/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Little-endian loads and stores, inline: for the kernels (through
 * kernels_impl.h) and the AEAD core. bytes.c holds the out-of-line byte
 * helpers declared in kernels.h (wipe, constant-time compare, key words).
 */
#ifndef CHAPOLY_BYTES_H
#define CHAPOLY_BYTES_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define CHAPOLY_INLINE static inline __attribute__((always_inline))
#else
#define CHAPOLY_INLINE static inline
#endif

CHAPOLY_INLINE uint32_t load32_le(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

CHAPOLY_INLINE void store32_le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

CHAPOLY_INLINE uint64_t load64_le(const uint8_t *p)
{
    return (uint64_t)load32_le(p) | ((uint64_t)load32_le(p + 4) << 32);
}

CHAPOLY_INLINE void store64_le(uint8_t *p, uint64_t v)
{
    store32_le(p, (uint32_t)v);
    store32_le(p + 4, (uint32_t)(v >> 32));
}

#endif
