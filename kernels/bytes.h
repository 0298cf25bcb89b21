/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Little-endian loads and stores and a small inline wipe: for the kernels
 * (through kernels_impl.h), the AEAD format in kernels.h and the AEAD
 * core. bytes.c holds the out-of-line byte helpers declared in kernels.h
 * (wipe, key words).
 */
#ifndef CHAPOLY_BYTES_H
#define CHAPOLY_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define CHAPOLY_INLINE static inline __attribute__((always_inline))
#else
#define CHAPOLY_INLINE static inline
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Little-endian hosts (x86-64, AArch64 Linux): one unaligned load or store each. */
CHAPOLY_INLINE uint32_t load32_le(const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof(v));
    return v;
}

CHAPOLY_INLINE void store32_le(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, sizeof(v));
}

CHAPOLY_INLINE uint64_t load64_le(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof(v));
    return v;
}

CHAPOLY_INLINE void store64_le(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, sizeof(v));
}
#else
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

/*
 * A wipe of a small buffer the optimiser keeps (the asm says the stores may
 * be read), inline: no call, unlike chapoly_wipe.
 */
CHAPOLY_INLINE void chapoly_wipe_inline(void *p, size_t n)
{
    memset(p, 0, n);
    __asm__ volatile("" : : "r"(p) : "memory");
}

#endif
