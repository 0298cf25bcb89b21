/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal to kernels/: the one declaration of every level's kernel
 * functions, the tables, pieces the SIMD files share
 * (OPAQUE_PTR, the dead-stack scrub) and the CPU feature probe; the
 * SIGMA words are in kernels.h.
 * The tables are defined in level_<isa>.c (the portable one in dispatch.c);
 * a table may point entries its ISA does not accelerate at the portable
 * functions declared here.
 */
#ifndef CHAPOLY_KERNELS_IMPL_H
#define CHAPOLY_KERNELS_IMPL_H

#include <string.h>
#include "kernels.h"
#include "bytes.h"

CHAPOLY_INLINE uint32_t rotl32(uint32_t v, int c)
{
    return (v << c) | (v >> (32 - c));
}

/* The ChaCha20 quarter round on 32-bit words (RFC 8439 2.1): the portable
 * kernel's, and the scalar blocks some SIMD levels run beside their vectors. */
#define CHAPOLY_QR32(a, b, c, d)                                            \
    do {                                                                    \
        a += b; d ^= a; d = rotl32(d, 16);                                  \
        c += d; b ^= c; b = rotl32(b, 12);                                  \
        a += b; d ^= a; d = rotl32(d, 8);                                   \
        c += d; b ^= c; b = rotl32(b, 7);                                   \
    } while (0)

/*
 * Makes the compiler forget where a pointer points. The SIMD ChaCha20
 * kernels use it on the key pointer once before a batch's rounds and once
 * after them, so the key broadcasts are re-read from the caller's key
 * (loads, or memory operands of the feed-forward adds) and never kept live
 * across the rounds: otherwise the compiler parks 8-12 broadcast key
 * vectors in stack slots that nobody wipes.
 */
#define OPAQUE_PTR(p) __asm__ volatile("" : "+r"(p))

/*
 * Hide a value from the optimiser so that masks built from secret data stay
 * arithmetic (no branch, no cmov-to-jump conversion).
 */
CHAPOLY_INLINE uint64_t value_barrier_u64(uint64_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    __asm__("" : "+r"(v));
#endif
    return v;
}

/*
 * Dead-stack scrub. Spill slots of a kernel's frame (round state, key
 * words) stay on the stack after it returns, and nothing overwrites them.
 * A kernel whose frame may hold such words runs its work in an out-of-line
 * function and then calls a scrub defined with CHAPOLY_DEFINE_SCRUB(name,
 * bytes): called at the depth of that call, the scrub's own array lies where
 * the frame was, and it zeroes 'bytes' of it (a multiple of 32) with aligned
 * stores, unrolled: 32-byte ones in objects built with AVX (the SIMD
 * levels; as fast as the memset their own scrubs used to call), 16-byte ones
 * elsewhere. Not ASan-instrumented (redzones would move the
 * array away from the frame). Keep the calling function free of a large
 * frame of its own: the scrub may become a tail call made after that frame
 * is popped, which lifts it by the frame's size. In AVX objects built by
 * clang 14 the array's top ends 48 or 64 bytes below the caller's stack
 * pointer (the frame is realigned to 32 with a 32-byte unit unused above
 * the array), where a callee frame that is not realigned parks secrets in
 * its top slots: with clang on x86-64 the scrub is inline asm instead
 * (below).
 * test_secrets checks the dead stack after every kernel call.
 */
#if defined(__GNUC__) || defined(__clang__)
#define CHAPOLY_NOINLINE __attribute__((noinline))
#define CHAPOLY_SCRUB_FN static __attribute__((noinline, no_sanitize_address)) void
#else
#define CHAPOLY_NOINLINE
#define CHAPOLY_SCRUB_FN static void
#endif

/* Words per store: 32-byte stores where the object is built with AVX. */
#ifdef __AVX__
#define CHAPOLY_SCRUB_STEP 4
#else
#define CHAPOLY_SCRUB_STEP 2
#endif

CHAPOLY_INLINE void chapoly_scrub_words(uint64_t *p, size_t n)
{
#if defined(__GNUC__) || defined(__clang__)
    /* p escapes here, so the barriers below may read what was stored */
    __asm__ volatile("" : : "r"(p) : "memory");
#if defined(__clang__)
#pragma unroll
#else
#pragma GCC unroll 128
#endif
    for (size_t i = 0; i < n; i += CHAPOLY_SCRUB_STEP) {
        for (size_t j = 0; j < CHAPOLY_SCRUB_STEP; j++)
            p[i + j] = 0;
        /* per vector: a bare loop becomes a memset call or rep stos */
        __asm__ volatile("" : : : "memory");
    }
#else
    chapoly_wipe(p, n * sizeof(*p)); /* stores the optimiser must keep */
#endif
}

#if defined(__clang__) && defined(__x86_64__)
/*
 * clang on x86-64: the scrub's array would not reach the top of the dead
 * frame (see above), so the scrub is inline asm in the caller that zeroes
 * 'bytes' below the caller's own stack pointer, the callee's return address
 * slot included, with 16-byte VEX.128 stores in AVX objects (no dirty upper
 * state) and SSE stores elsewhere. The stack pointer moves below the area
 * first, so the stores are on the stack for valgrind. The caller calls a
 * function just before (no red zone in use).
 */
#ifdef __AVX__
#define CHAPOLY_SCRUB_ZERO_ "vpxor %%xmm0, %%xmm0, %%xmm0\n\t"
#define CHAPOLY_SCRUB_STORE_ "vmovdqa %%xmm0, (%[p])\n\t"
#else
#define CHAPOLY_SCRUB_ZERO_ "pxor %%xmm0, %%xmm0\n\t"
#define CHAPOLY_SCRUB_STORE_ "movdqa %%xmm0, (%[p])\n\t"
#endif
#define CHAPOLY_DEFINE_SCRUB(name, bytes)                                          \
    _Static_assert((bytes) % 32 == 0, "scrub size");                               \
    CHAPOLY_INLINE void name(void)                                                 \
    {                                                                              \
        uintptr_t p, e;                                                            \
                                                                                   \
        __asm__ volatile("movq %%rsp, %[p]\n\t"                                     \
                         "andq $-16, %[p]\n\t"                                      \
                         "leaq -%c[n](%[p]), %[e]\n\t"                              \
                         "subq $%c[n] + 16, %%rsp\n\t" CHAPOLY_SCRUB_ZERO_          \
                         "1:\n\t"                                                   \
                         "subq $16, %[p]\n\t" CHAPOLY_SCRUB_STORE_                  \
                         "cmpq %[e], %[p]\n\t"                                      \
                         "ja 1b\n\t"                                                \
                         "addq $%c[n] + 16, %%rsp"                                  \
                         : [p] "=&r"(p), [e] "=&r"(e)                              \
                         : [n] "i"(bytes)                                          \
                         : "xmm0", "memory", "cc");                                \
    }
#else
#define CHAPOLY_DEFINE_SCRUB(name, bytes)             \
    _Static_assert((bytes) % 32 == 0, "scrub size");  \
    CHAPOLY_SCRUB_FN name(void)                       \
    {                                                 \
        _Alignas(8 * CHAPOLY_SCRUB_STEP)              \
        uint64_t area[(bytes) / 8];                   \
                                                      \
        chapoly_scrub_words(area, (bytes) / 8);       \
    }
#endif

/* ---- portable level (always built) ---- */
void chacha20_xor_portable(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                           const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chacha20_block_portable(uint32_t out[16], const uint32_t key[8],
                             const uint32_t ctr_nonce[4]);
void hchacha20_portable(const chapoly_kernels *k, uint8_t subkey[32], const uint8_t key[32],
                        const uint8_t nonce[16]);
void poly1305_init_portable(const chapoly_kernels *k, poly1305_state *st, const uint8_t key[32]);
void poly1305_blocks_portable(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in,
                              size_t len, unsigned padbit);
void poly1305_final_portable(const chapoly_kernels *k, poly1305_state *st, uint8_t tag[16]);
/* batch_portable.c: the oracle of chacha20_multi_blocks */
void chacha20_multi_blocks_portable(const chapoly_kernels *k, uint8_t *out, const uint32_t *states, size_t n);

extern const chapoly_kernels chapoly_kernels_portable_table;

/*
 * ---- SIMD levels: present only when compiled (CMake defines these) ----
 * Every function a SIMD kernel file exports, to the level tables or to
 * another kernel file, is declared here and nowhere else, named
 * <operation>_<isa> after the flags its file is built with.
 */
#ifdef CHAPOLY_HAVE_AVX2
/* chacha20_avx2.c, poly1305_avx2.c (-mavx2 -mbmi2) */
void chacha20_xor_avx2(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                       const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chacha20_keyblock_xor_avx2(const chapoly_kernels *k, uint8_t key_block[64], uint8_t *out, const uint8_t *in,
                                size_t len, const uint32_t key[8],
                                const uint32_t ctr_nonce[4]);
/*
 * The short shapes: len bytes (kb != NULL: after the raw key block kb) in
 * 1..3 interleaved ymm row sets, at most 6 blocks in all, with nblk <= 40
 * Poly1305 blocks at m hashed into h (key k, radix 2^64) beside the rounds
 * (chacha20_avx2.c; scrubs its frame). beside (with nblk 0): 3 or 5
 * blocks as 1 or 2 row sets and one block in general registers.
 */
void chacha20_rows_short_avx2(uint8_t *kb, uint8_t *out, const uint8_t *in, size_t len,
                              const uint32_t key[8], const uint32_t ctr_nonce[4], uint64_t h[3],
                              const uint64_t k[3], const uint8_t *m, size_t nblk, int beside);
/*
 * Opening a first text of 1..384 bytes (chacha20_avx2.c; scrubs its frame):
 * the key block at ctr_nonce[0] in general registers, raw to kb, the text from the next block in 1..3 row sets, and h (from
 * zero, key r from kb) over nblk blocks at m then n2 at m2, all hashed
 * before the text is written.
 */
void chacha20_rows_keyed_avx2(uint8_t kb[64], uint8_t *out, const uint8_t *in, size_t len,
                              const uint32_t key[8], const uint32_t ctr_nonce[4], uint64_t h[3],
                              const uint8_t *m, size_t nblk, const uint8_t *m2, size_t n2);
/*
 * One block (0 <= len <= 64, counter ctr_nonce[0]) as one xmm row set (VEX,
 * vpshufb and shift rotates, register tail): the "chacha-one=rows" form of a
 * lone block at the avx2 level.
 */
void chacha20_xor_row1_avx2(uint8_t *out, const uint8_t *in, size_t len,
                            const uint32_t key[8], const uint32_t ctr_nonce[4]);
/* HChaCha20 in the same xmm row set: the "chacha-one=rows" form of hchacha20. */
void hchacha20_row1_avx2(uint8_t subkey[32], const uint8_t key[32], const uint8_t nonce[16]);
/* The avx2 level's hchacha20 entry: the row form or the portable one ("chacha-one"). */
void hchacha20_avx2(const chapoly_kernels *kt, uint8_t subkey[32], const uint8_t key[32],
                    const uint8_t nonce[16]);
/*
 * Stores the key and a zero hash (poly1305_scalar.h, "state head"): the
 * init of every SIMD Poly1305, the IFMA one included.
 */
void poly1305_init_avx2(const chapoly_kernels *k, poly1305_state *st, const uint8_t key[32]);
void poly1305_blocks_avx2(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in, size_t len,
                          unsigned padbit);
void poly1305_final_avx2(const chapoly_kernels *k, poly1305_state *st, uint8_t tag[16]);
void poly1305_last_avx2(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in,
                        size_t len, unsigned padbit, uint8_t tag[16]);
/* Pending lanes folded into the scalar hash (priv words W_H..): aead_avx2.c */
void poly1305_scalar_avx2(uint64_t *priv);
/* aead_avx2.c: the table's aead_xor_hash_range (kernels.h) */
void aead_xor_hash_range_avx2(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len, size_t pre,
                              size_t hash_len, const uint32_t key[8],
                              const uint32_t ctr_nonce[4], poly1305_state *st, int enc);
/* aead_avx2.c: the table's aead_first_xor_hash (kernels.h) */
void aead_first_xor_hash_avx2(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len, size_t hash_len,
                              const uint8_t *aad, size_t aadlen, const uint32_t key[8],
                              const uint32_t ctr_nonce[4], poly1305_state *st, int enc);
/* batch_avx2.c (-mavx2 -mbmi2) */
void chacha20_multi_blocks_avx2(const chapoly_kernels *k, uint8_t *out, const uint32_t *states, size_t n);
void chacha20_multi_blocks_hash_avx2(const chapoly_kernels *k, uint8_t *out, const uint32_t *states,
                                     size_t n, poly1305_state *const st[], const uint8_t *in[],
                                     size_t len[], size_t nh);
void poly1305_multi_blocks_avx2(const chapoly_kernels *k, poly1305_state *const st[], const uint8_t *const in[],
                                const size_t len[], size_t n);

extern const chapoly_kernels chapoly_kernels_avx2;
#endif
#ifdef CHAPOLY_HAVE_AVX512
/* chacha20_avx512vl.c (AVX-512 F/VL/BW/DQ, no IFMA): ymm and xmm only */
void chacha20_xor_avx512vl(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                           const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chacha20_keyblock_xor_avx512vl(const chapoly_kernels *k, uint8_t key_block[64], uint8_t *out,
                                    const uint8_t *in, size_t len, const uint32_t key[8],
                                    const uint32_t ctr_nonce[4]);
/* 5..8 blocks (256 < len <= 512) as one 8-lane ymm column batch: the zmm levels' shape too */
void chacha20_xor_cols8_avx512vl(uint8_t *out, const uint8_t *in, size_t len,
                                 const uint32_t key[8], const uint32_t ctr_nonce[4]);
/*
 * One block (0 <= len <= 64, counter ctr_nonce[0]) as one xmm row set
 * (vprold and vpshufb rotates, byte-masked rows): every AVX-512 level's
 * lone block when its path "chacha-one" is "rows".
 */
void chacha20_xor_row1_avx512vl(uint8_t *out, const uint8_t *in, size_t len,
                                const uint32_t key[8], const uint32_t ctr_nonce[4]);
/* HChaCha20 in the same xmm row set, and the AVX-512 levels' hchacha20 entry ("chacha-one"). */
void hchacha20_row1_avx512vl(uint8_t subkey[32], const uint8_t key[32], const uint8_t nonce[16]);
void hchacha20_avx512vl(const chapoly_kernels *kt, uint8_t subkey[32], const uint8_t key[32],
                        const uint8_t nonce[16]);
/* chacha20_avx512.c (AVX-512 F/VL/BW/DQ, no IFMA): zmm */
void chacha20_xor_avx512(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                         const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chacha20_keyblock_xor_avx512(const chapoly_kernels *k, uint8_t key_block[64], uint8_t *out,
                                  const uint8_t *in, size_t len,
                                  const uint32_t key[8],
                                  const uint32_t ctr_nonce[4]);
/* batch_avx512.c (AVX-512 F/VL/BW/DQ, no IFMA) */
void chacha20_multi_blocks_avx512(const chapoly_kernels *k, uint8_t *out, const uint32_t *states, size_t n);
/* batch_avx512ifma.c (also -mavx512ifma): eight messages in IFMA lanes, "avx512" only */
void poly1305_multi_blocks_avx512ifma(const chapoly_kernels *k, poly1305_state *const st[], const uint8_t *const in[],
                                      const size_t len[], size_t n);
/* poly1305_avx512ifma.c and aead_avx512ifma.c (also -mavx512ifma): "avx512" only */
void poly1305_blocks_avx512ifma(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in,
                                size_t len, unsigned padbit);
void poly1305_final_avx512ifma(const chapoly_kernels *k, poly1305_state *st, uint8_t tag[16]);
void poly1305_last_avx512ifma(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in,
                              size_t len, unsigned padbit, uint8_t tag[16]);
/* Key powers r^1..r^8 (and r^9..r^16 if want16) into st->priv, once. */
void poly1305_powers_avx512ifma(uint64_t *priv, int want16);
void aead_xor_hash_range_avx512ifma(const chapoly_kernels *kt, uint8_t *out, const uint8_t *in,
                                    size_t len, size_t pre, size_t hash_len,
                                    const uint32_t key[8], const uint32_t ctr_nonce[4],
                                    poly1305_state *st, int enc);

/* level_avx512vl.c: ymm ChaCha20 + AVX2 Poly1305 (Skylake-X, Cascade Lake) */
extern const chapoly_kernels chapoly_kernels_avx512vl;
/* level_avx512.c: zmm ChaCha20 + IFMA Poly1305 (+ the stitched IFMA range) */
extern const chapoly_kernels chapoly_kernels_avx512;
/* level_avx512.c: zmm ChaCha20 + AVX2 Poly1305: AVX-512 without IFMA, not Skylake-X */
extern const chapoly_kernels chapoly_kernels_avx512_noifma;
#endif

#ifdef CHAPOLY_HAVE_NEON
/* chacha20_neon.c, poly1305_neon.c (-march=armv8-a+simd): AArch64 only */
void chacha20_xor_neon(const chapoly_kernels *k, uint8_t *out, const uint8_t *in, size_t len,
                       const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chacha20_keyblock_xor_neon(const chapoly_kernels *k, uint8_t key_block[64], uint8_t *out,
                                const uint8_t *in, size_t len,
                                const uint32_t key[8],
                                const uint32_t ctr_nonce[4]);
void poly1305_init_neon(const chapoly_kernels *k, poly1305_state *st, const uint8_t key[32]);
void poly1305_blocks_neon(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in, size_t len,
                          unsigned padbit);
void poly1305_final_neon(const chapoly_kernels *k, poly1305_state *st, uint8_t tag[16]);

/* level_neon.c */
extern const chapoly_kernels chapoly_kernels_neon;
#endif

/*
 * The AVX2 Poly1305's crossovers (poly1305_avx2.c), the same at every level
 * that runs it: the vector path for the AEADs from 32 blocks and for the
 * MAC from 22, a warm stream's calls from 16.
 */
#define CHAPOLY_AVX2_POLY_SHAPES                                                          \
    .poly_vector_min = 32, .poly_mac_min = 22, .poly_stream_min = 32, .poly_warm_min = 16, \
    .poly_prefix = 0, .poly_tail = 3

/*
 * ---- CPU features (cpu_features.c; read only by dispatch.c) ----
 * One bit per compiler ISA flag the SIMD objects are built with
 * (kernels/CMakeLists.txt): -mavx2 AVX2, -mbmi2 BMI2, -mavx512f AVX512F,
 * -mavx512vl AVX512VL, -mavx512bw AVX512BW, -mavx512dq AVX512DQ,
 * -mavx512ifma AVX512IFMA; on AArch64 -march=armv8-a+simd ASIMD. A flag
 * added there needs a bit here, a line in the probe and a place in the
 * masks of the tables whose objects use it (dispatch.c); test_cpu_masks
 * fails until it has them.
 */
enum {
    CHAPOLY_CPU_AVX2 = 1u << 0,     /* AVX2 + OS saves YMM */
    CHAPOLY_CPU_BMI2 = 1u << 1,
    CHAPOLY_CPU_AVX512F = 1u << 3,  /* AVX-512F + OS saves ZMM/opmask */
    CHAPOLY_CPU_AVX512VL = 1u << 4,
    CHAPOLY_CPU_AVX512BW = 1u << 5,
    CHAPOLY_CPU_AVX512IFMA = 1u << 6,
    CHAPOLY_CPU_YMM_ONLY = 1u << 7, /* not an ISA: a class that keeps to ymm (cpu_profiles.c) */
    CHAPOLY_CPU_AVX512DQ = 1u << 8,
    CHAPOLY_CPU_ASIMD = 1u << 9,    /* AArch64: HWCAP_ASIMD (-march=armv8-a+simd) */
    /*
     * Not an ISA flag: 512-bit registers may be used (AVX-512F and its OS
     * state, and OPENSSL_ia32cap does not mask AVX-512F, which libcrypto
     * reads as "no 512-bit code" while it keeps its AVX-512VL ymm code).
     */
    CHAPOLY_CPU_ZMM = 1u << 10
};
/* The probe's bits, less those OPENSSL_ia32cap (read with secure_getenv) masks on x86. */
unsigned chapoly_cpu_features(void);
/*
 * The CHAPOLY_CPU_* bits an OPENSSL_ia32cap value leaves (all for NULL),
 * read as libcrypto reads it; chapoly_cpu_features ANDs them on x86.
 */
unsigned chapoly_cpu_ia32cap_keep(const char *env);

/* Who made the CPU and which one it is (cpuid leaf 1's display family and model). */
enum { CHAPOLY_VENDOR_OTHER, CHAPOLY_VENDOR_INTEL, CHAPOLY_VENDOR_AMD, CHAPOLY_VENDOR_HYGON };
typedef struct chapoly_cpu_id {
    unsigned vendor, family, model;
} chapoly_cpu_id;
void chapoly_cpu_identify(chapoly_cpu_id *id);

/*
 * The CHAPOLY_CPU_* bits level 'name' requires: every ISA flag of every
 * object its table's functions live in (and of the objects those call).
 * chapoly_kernels_by_name hands out the table only on a CPU with all of
 * them; no kernel checks the CPU itself. Returns 0 (and sets *required to
 * 0) if name is not a level compiled into this build; portable requires
 * nothing.
 */
int chapoly_kernels_required(const char *name, unsigned *required);

/* The level chapoly_kernels_best picks for CPU features f (testable): its template table. */
const chapoly_kernels *chapoly_kernels_best_for(unsigned f);

/*
 * The paths CPU id's profile row sets at 'level' (a list for
 * chapoly_kernels_build), its class name and whether it was measured or
 * estimated (NULL when no row matches).
 */
const char *chapoly_cpu_profile(const chapoly_cpu_id *id, const char *level, const char **name,
                                const char **basis);

/* 1 if CPU id's class keeps to ymm registers ("best" is then avx512vl at most). */
int chapoly_cpu_ymm_only(const chapoly_cpu_id *id);

#endif
