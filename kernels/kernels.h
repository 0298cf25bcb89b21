/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chapoly kernels: the whole kernel API.
 *
 * Pure C (plus intrinsics in the per-ISA files). Nothing here knows about
 * OpenSSL; the provider glue reaches the kernels only through a
 * chapoly_kernels table, built once by chapoly_kernels_build(), and
 * through the AEAD core (core/aead_core.h), which drives such a table.
 *
 * Conventions shared by every kernel level:
 *  - ChaCha20 state words follow RFC 8439: key[8] are the eight little-endian
 *    key words, ctr_nonce[0] is the 32-bit block counter and ctr_nonce[1..3]
 *    the three nonce words. The block counter wraps modulo 2^32 inside a call
 *    (RFC 8439 semantics); callers that want OpenSSL's 64-bit carry split the
 *    call at the wrap themselves.
 *  - chacha20_xor consumes ceil(len / 64) blocks; a partial last block uses
 *    the leading bytes of that block's keystream. out == in is allowed;
 *    otherwise the buffers must not overlap.
 *  - Poly1305 "blocks" functions take whole 16-byte blocks only; padbit is 1
 *    for full message blocks (adds 2^128) and 0 for a final partial block
 *    that the caller has already padded with 0x01 and zeros.
 *  - No kernel branches on or indexes by secret data; every AVX/AVX-512
 *    kernel returns with a clean upper vector state.
 */
#ifndef CHAPOLY_KERNELS_H
#define CHAPOLY_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "bytes.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The constants of the algorithms, defined here once for every layer (the
 * kernels, the AEAD core and the provider glue all include this header).
 */
#define CHACHA20_KEY_BYTES 32
#define CHACHA20_BLOCK_BYTES 64
#define CHACHA20_NONCE_BYTES 12   /* RFC 8439: the AEAD's nonce, 96 bits */
#define HCHACHA20_NONCE_BYTES 16
#define XCHACHA20_NONCE_BYTES 24  /* draft-irtf-cfrg-xchacha-03 */
/* State words 12..15 as bytes: the 32-bit block counter, then the nonce
 * (OpenSSL's "ChaCha20" cipher takes them as its 16-byte IV). */
#define CHACHA20_CTR_NONCE_BYTES 16
#define POLY1305_KEY_BYTES 32
#define POLY1305_TAG_BYTES 16
#define POLY1305_BLOCK_BYTES 16
/* The generic compositions' stack batch: a key block and 31 text blocks. */
#define CHAPOLY_GENERIC_BATCH 2048
/* RFC 8439 2.8: at most 2^32 - 1 blocks of AEAD text after the key block. */
#define CHAPOLY_AEAD_MAX_TEXT ((((uint64_t)1) << 38) - 64)

/* ChaCha20 state words 0..3: "expand 32-byte k" read as little-endian words. */
#define SIGMA0 0x61707865u
#define SIGMA1 0x3320646eu
#define SIGMA2 0x79622d32u
#define SIGMA3 0x6b206574u

/*
 * The 16-word ChaCha20 input state (RFC 8439 2.3), built here only: the
 * constants, the key words, the block counter, the nonce words. The
 * portable kernel's blocks, the AEAD core's key blocks and HChaCha20's input
 * (the nonce's first word in the counter's place) for chacha20_multi_blocks.
 */
CHAPOLY_INLINE void chacha20_input_state(uint32_t s[16], const uint32_t key[8], uint32_t ctr,
                                         const uint32_t nonce[3])
{
    s[0] = SIGMA0;
    s[1] = SIGMA1;
    s[2] = SIGMA2;
    s[3] = SIGMA3;
    for (int i = 0; i < 8; i++)
        s[4 + i] = key[i];
    s[12] = ctr;
    for (int i = 0; i < 3; i++)
        s[13 + i] = nonce[i];
}

/*
 * Poly1305 state. The layout of 'priv' belongs to the kernel level that
 * initialised it (radix 2^64 scalar, 2^26 AVX2 or 2^44 IFMA hash, key
 * powers); a state must be driven by the same table from init to final.
 * 'buf'/'buflen' hold MAC input short of a block between calls: the
 * streaming helpers and the AEAD core (core/) use them; the
 * kernels never do.
 */
#define POLY1305_PRIV_WORDS 192
typedef struct poly1305_state {
    _Alignas(64) uint64_t priv[POLY1305_PRIV_WORDS];
    uint8_t buf[POLY1305_BLOCK_BYTES];
    size_t buflen;
} poly1305_state;

typedef struct chapoly_kernels chapoly_kernels;

/*
 * Shapes: how a level wants its work cut, as data. The AEAD core schedules
 * by them and the kernels read their own crossovers here. A level's table
 * gives its values. Eight of them are choices that differ between CPUs
 * (dispatch.c's list: chacha-one, aead, chacha-pairs, poly-vector,
 * poly-vector2, poly-prefix, poly-mac, short-rows): the CPU profile (cpu_profiles.c)
 * sets what this microarchitecture prefers and the configuration can force
 * them by name ("paths"). The rest are constants of the level. The
 * choices are:
 *   one_block_rows  "chacha-one": a lone block (len <= 64) as a row of
 *                   vector registers (1) or in the scalar registers (0);
 *                   with 0 the avx2 short shapes also run blocks in
 *                   general registers beside their rows (chacha20_avx2.c)
 *   aead_stitched   "aead": the level's stitched ChaCha20 + Poly1305 kernels
 *                   (1) or the generic split form (0): ChaCha20 over a chunk,
 *                   then its Poly1305 while the chunk is in L1
 * and the crossovers are sizes in bytes (ChaCha20) or 16-byte blocks in one
 * call (Poly1305): any value is safe, the kernels only pick a path by it
 * (dispatch.c raises the vector ones to a whole step). The sizes the work
 * is cut by (aead_chunk, first_max, chacha_batch) are rounded down to whole
 * blocks where they are used, so no value changes a result either.
 */
typedef struct chapoly_shapes {
    uint8_t one_block_rows;     /* chacha-one */
    uint8_t aead_stitched;      /* aead */
    /*
     * A streaming refill is sized by the rule below
     * (stream_min, half the text so far, the grid: 0) or, while the
     * message is shorter than the shorter of the last two messages through
     * the same state, by what those messages needed (1): a
     * context that streams messages of one length gets the batches that
     * length needs, and alternating lengths fall back to the rule.
     */
    uint8_t stream_fill;
    /*
     * An AEAD's first text with the key block is first_max -
     * chacha_batch bytes plus what is left of a batch (whole blocks), so
     * whole batches follow; when nothing is left of one and at least two
     * whole batches follow, 1 puts one of them beside the key block too (generic.c, chapoly_generic_first_xor_hash).
     */
    uint8_t first_long;
    uint32_t chacha_pairs_min;  /* chacha-pairs: two column batches in flight from here */
    /*
     * A text this long or longer runs five-block steps (a vector batch and
     * a block in general registers, NEON); 0: never.
     */
    uint32_t chacha_wide_min;
    uint32_t aead_chunk;        /* the split form's chunk (0: the whole range) */
    /*
     * Poly1305, in blocks of one poly1305_blocks call on a state with no
     * vector lanes pending (pending lanes always continue as vectors); the
     * forceable ones by their names, the level's constants by their fields:
     *   poly-vector   the vector path (the level's first vector shape:
     *                 AVX2 4 lanes, IFMA 8, NEON 2 x 2) from this many; at
     *                 least one batch of that shape;
     *   poly-vector2  two IFMA accumulators (16 lanes) from here; 0: never;
     *                 at least two batches;
     *   poly_stream_min  once this many went through the scalar path (or the
     *                 key powers exist), a stream is warm...
     *   poly_warm_min ...and its calls from this many take the vector path;
     *                 at least one batch;
     *   poly-prefix   a call that computes the key powers hashes nb mod
     *                 batch blocks with the scalar code first, one batch
     *                 more when that is fewer than this;
     *   poly_tail     fewer blocks than this after pending lanes (a call's
     *                 end, or a short call) are folded and hashed by the
     *                 scalar code instead of a partial batch;
     *   poly_keep     a state's first vector call folds its lanes from
     *                 registers and stores its key powers only if it is at
     *                 least this long (IFMA).
     */
    uint32_t poly_vector_min;   /* poly-vector */
    uint32_t poly_vector2_min;  /* poly-vector2 */
    uint32_t poly_stream_min;
    uint32_t poly_warm_min;
    uint32_t poly_prefix;       /* poly-prefix */
    uint32_t poly_tail;
    uint32_t poly_keep;
    /*
     * poly-mac: poly-vector for the POLY1305 MAC (chapoly_kernels_for_mac;
     * 0: the same as poly-vector). A MAC call is all the work between two
     * EVP calls; inside an AEAD record the vector start costs more
     * (libssl's and the core's work between calls), so the crossover differs.
     */
    uint32_t poly_mac_min;
    /*
     * In poly1305_multi_blocks, a group of messages steps in
     * vector lanes (one message per lane, IFMA) when its shortest text has
     * this many blocks; shorter groups run scalar chains.
     */
    uint32_t multi_lanes_min;
    uint32_t first_max;         /* text beside the key block in one call, at most */
    /*
     * The level's widest ChaCha20 batch (a power of two, at
     * most first_max, at least a block); a longer first text
     * puts first_max - chacha_batch bytes and the rest of a batch beside the
     * key block, so whole batches follow it.
     */
    uint32_t chacha_batch;
    /* A streaming refill (of half the text so far, in whole batches) is at least this long. */
    uint32_t stream_min;
    /*
     * Ciphertext the AEAD core keeps collected for the next span's pre
     * bytes, so that a stitched range hashes it beside that span's ChaCha20
     * (0: hashed right away). Follows from "aead" (dispatch.c).
     */
    uint32_t span_pre;
    /*
     * short-rows: a text of 65 bytes up to this long (at most 320) beside
     * the key block runs as 2 or 3 interleaved ymm row sets sized to it, and
     * with "aead=stitched" a text of 449 up to 448 + this long puts what
     * follows the key block's column batch in row sets, the scalar
     * Poly1305 of that batch between their rounds (0: column batches only)
     */
    uint32_t short_rows;
    /*
     * Blocks per chacha20_multi_blocks_hash call in the batched AEAD: the
     * level hashes the Poly1305 rows it is given beside these blocks'
     * rounds (0: it does not; the core then makes the keystream of a
     * whole queue in one call). Follows from "aead" and "chacha-pairs"
     * (dispatch.c).
     */
    uint32_t multi_stitch;
    /*
     * open-rows: opening, a first text of CHAPOLY_OPEN_ROWS_MIN up to this
     * many bytes (at most CHAPOLY_OPEN_ROWS_MAX, and short-rows + 64: the
     * same row sets) with at most CHAPOLY_OPEN_ROWS_AAD bytes of AAD
     * (chapoly_open_rows) runs the key block in general registers and the
     * hash of the AAD and ciphertext beside the text's row sets, every
     * block hashed before any is written, so out == in is allowed (0: no
     * such text; the core then makes a short first update's keystream
     * ahead). Only with "aead=stitched" (dispatch.c).
     */
    uint32_t open_rows;
} chapoly_shapes;

/*
 * A kernel table. Every entry is filled at every level (generic.c has the
 * compositions a level does not specialise) and takes the table itself
 * first: its shapes, and the entries a composition calls.
 */
struct chapoly_kernels {
    const char *name; /* a level of CHAPOLY_LEVELS */
    /* CPU features the level requires, for messages ("AVX2 BMI2", ...). */
    const char *features;
    chapoly_shapes shapes;

    void (*chacha20_xor)(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                         size_t len, const uint32_t key[8], const uint32_t ctr_nonce[4]);
    /*
     * The raw keystream block at counter ctr_nonce[0] to key_block, and len
     * bytes of text XORed from the next counter on, in the batch shapes of
     * one len + 64 byte call. The AEAD's Poly1305 key block and its first
     * text.
     */
    void (*chacha20_keyblock_xor)(const chapoly_kernels *k, uint8_t key_block[64],
                                  uint8_t *out, const uint8_t *in, size_t len,
                                  const uint32_t key[8], const uint32_t ctr_nonce[4]);
    /* HChaCha20 (draft-irtf-cfrg-xchacha-03 2.2): 32-byte subkey. */
    void (*hchacha20)(const chapoly_kernels *k, uint8_t subkey[32], const uint8_t key[32],
                      const uint8_t nonce[16]);

    void (*poly1305_init)(const chapoly_kernels *k, poly1305_state *st, const uint8_t key[32]);
    void (*poly1305_blocks)(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in,
                            size_t len, unsigned padbit);
    /* Writes the tag of everything hashed so far and wipes st->priv. */
    void (*poly1305_final)(const chapoly_kernels *k, poly1305_state *st, uint8_t tag[16]);
    /*
     * The last len bytes (whole blocks, len may be 0; in is not read then)
     * as poly1305_blocks(st, in, len, padbit), then the tag as
     * poly1305_final: one call for the end of a message (the POLY1305
     * MAC's padded last block; an AEAD's last ciphertext and its lengths
     * block), so a level can keep the hash in registers from the last
     * block into the final reduction.
     */
    void (*poly1305_last)(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in,
                          size_t len, unsigned padbit, uint8_t tag[16]);

    /*
     * n independent ChaCha20 blocks, block i the block function of the
     * 16-word input state states[16 i .. 16 i + 15] (words 0..3 the
     * constants SIGMA0..3, 4..11 a key, 12 a counter, 13..15 a nonce: key,
     * counter and nonce may differ from block to block), written to
     * out + 64 i. Raw keystream; no counter is incremented. The batched
     * AEAD: many messages' Poly1305 key blocks, short texts and HChaCha20
     * subkeys in shared batches.
     */
    void (*chacha20_multi_blocks)(const chapoly_kernels *k, uint8_t *out,
                                  const uint32_t *states, size_t n);
    /*
     * n states of this table, each with its own whole blocks (len[i] a
     * multiple of 16, padbit 1): the same as poly1305_blocks(st[i], in[i],
     * len[i], 1) for each i. The batched AEAD: short messages' Horner
     * chains in one call.
     */
    void (*poly1305_multi_blocks)(const chapoly_kernels *k, poly1305_state *const st[],
                                  const uint8_t *const in[], const size_t len[], size_t n);
    /*
     * ChaCha20 over len bytes (any length) from counter ctr_nonce[0], and
     * Poly1305 blocks (padbit 1) over the pre + hash_len bytes that start
     * pre bytes before the text's ciphertext (base = out sealing, in
     * opening: base - pre .. base + hash_len). pre and hash_len are
     * multiples of 16, hash_len <= len; the pre bytes are ciphertext not
     * hashed yet. Sealing, out == in is allowed; opening, out == in only
     * with pre == 0, else out and in share no byte. st must be driven by
     * this table, with no partial block buffered.
     */
    void (*aead_xor_hash_range)(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                size_t len, size_t pre, size_t hash_len, const uint32_t key[8],
                                const uint32_t ctr_nonce[4], poly1305_state *st, int enc);
    /*
     * The start of an AEAD message. Block ctr_nonce[0] keys st and the
     * AAD is hashed zero-padded (chapoly_aead_key_aad: st needs no init
     * before), then len bytes of text (any length, 0 too) from the next
     * counter are XORed and the first hash_len bytes of their ciphertext
     * (a multiple of 16, hash_len <= len) hashed, as aead_xor_hash_range.
     * Sealing, out == in is allowed; opening, out and in share no byte.
     */
    void (*aead_first_xor_hash)(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                size_t len, size_t hash_len, const uint8_t *aad,
                                size_t aadlen, const uint32_t key[8],
                                const uint32_t ctr_nonce[4], poly1305_state *st, int enc);
    /*
     * chacha20_multi_blocks(out, states, n), and of the nh Poly1305 rows
     * (state st[i], len[i] bytes at in[i], whole blocks, padbit 1) as many
     * blocks, in row order, as the level hashes beside those rounds
     * ("multi_stitch"; the composition: none): each row's in[i] and len[i]
     * move past what was hashed (len[i] 0: the row is done). The rows may
     * not overlap out. The batched AEAD: the rows of the messages whose
     * keystream earlier calls made; what is left goes to the next call.
     */
    void (*chacha20_multi_blocks_hash)(const chapoly_kernels *k, uint8_t *out,
                                       const uint32_t *states, size_t n,
                                       poly1305_state *const st[], const uint8_t *in[],
                                       size_t len[], size_t nh);
};

/* ---- dispatch (kernels/dispatch.c): the one place that picks kernels ---- */

/*
 * Every kernel level the code knows, built in or not, in order, each with
 * the build define that compiles it in (kernels/CMakeLists.txt;
 * CHAPOLY_ALWAYS: every build). The one list of level names, each spelled
 * once, here: code that names a level (the level tables' .name) uses its
 * CHAPOLY_LEVEL_* define, and the list gives CHAPOLY_LEVELS (for the
 * provider's messages and chapoly_kernels_known), dispatch.c's compiled
 * levels, and the test registration (test/CMakeLists.txt reads the defines
 * and the X(...) lines below: keep one of each per line, in this form).
 */
#define CHAPOLY_LEVEL_PORTABLE "portable"
#define CHAPOLY_LEVEL_AVX2 "avx2"
#define CHAPOLY_LEVEL_AVX512VL "avx512vl"
#define CHAPOLY_LEVEL_AVX512_NOIFMA "avx512-noifma"
#define CHAPOLY_LEVEL_AVX512 "avx512"
#define CHAPOLY_LEVEL_NEON "neon"
#define CHAPOLY_LEVEL_LIST(X)                            \
    X(CHAPOLY_LEVEL_PORTABLE, CHAPOLY_ALWAYS)            \
    X(CHAPOLY_LEVEL_AVX2, CHAPOLY_HAVE_AVX2)             \
    X(CHAPOLY_LEVEL_AVX512VL, CHAPOLY_HAVE_AVX512)       \
    X(CHAPOLY_LEVEL_AVX512_NOIFMA, CHAPOLY_HAVE_AVX512)  \
    X(CHAPOLY_LEVEL_AVX512, CHAPOLY_HAVE_AVX512)         \
    X(CHAPOLY_LEVEL_NEON, CHAPOLY_HAVE_NEON)

/* "best, portable, avx2, ...": every name a request may use ("best" first). */
#define CHAPOLY_LEVEL_NAME_(name, build) ", " name
#define CHAPOLY_LEVELS "best" CHAPOLY_LEVEL_LIST(CHAPOLY_LEVEL_NAME_)

/* Always available; the oracle for every other level (no CPU profile, no paths). */
const chapoly_kernels *chapoly_kernels_portable(void);

/*
 * Table for a named level (CHAPOLY_LEVELS but "best"), or NULL if that
 * level was not compiled in or this CPU/OS cannot run it: the level's
 * table with this CPU's profile and the paths of CHAPOLY_PATHS (read once,
 * with secure_getenv). Built once per process, read-only after.
 */
const chapoly_kernels *chapoly_kernels_by_name(const char *name);

/* The best level this CPU runs (classes that keep to ymm: "avx512vl"; cpu_profiles.c). */
const chapoly_kernels *chapoly_kernels_best(void);

/*
 * *t = the table of level 'level' with this CPU's profile, then the forced
 * paths. The level: 'level' (config key) if non-NULL and non-empty, else
 * the environment variable CHAPOLY_KERNEL (read with secure_getenv, so
 * ignored in setuid processes), else the best. A level this CPU or build
 * cannot run, or a name that is not a level at all, falls back to the best
 * and sets *level_warning (if non-NULL) to a static message. The paths:
 * 'paths' if non-NULL and non-empty, else CHAPOLY_PATHS (secure_getenv), a
 * list of name=value separated by commas or spaces (names: chapoly_kernels_describe);
 * the item "flip" turns every choice the level has the other way (so the
 * test suite runs each variant on any CPU with the level's ISA).
 * A name or value that is not valid for the level is skipped and sets
 * *paths_warning (if non-NULL) to a static message; the rest apply.
 */
void chapoly_kernels_build(chapoly_kernels *t, const char *level, const char *paths,
                           const char **level_warning, const char **paths_warning);

/*
 * *mac = t as the POLY1305 MAC runs it: poly-vector replaced by poly-mac
 * (when set; raised to a whole step as poly-vector is).
 */
void chapoly_kernels_for_mac(chapoly_kernels *mac, const chapoly_kernels *t);

/*
 * The choices of t that its level uses, "name=value ...", and the CPU
 * profile that set them (and whether measured or estimated), into buf (always terminated; truncated to n).
 * CHAPOLY_DESCRIBE_MAX holds every level's text (test_cpu_masks checks).
 */
#define CHAPOLY_DESCRIBE_MAX 512
void chapoly_kernels_describe(const chapoly_kernels *t, char *buf, size_t n);

/*
 * What chapoly offers when a level was picked for the CPU (config `serve =
 * auto`, no level asked for by name): the algorithms the level beats the
 * default provider at on the CPUs that pick it (the sweep, bench/README.md).
 * XChaCha20-Poly1305 always (no other provider has it); portable: nothing
 * else (OpenSSL's assembly is faster); avx512-noifma: not POLY1305 (picked
 * on AVX-512 CPUs without IFMA, where OpenSSL's Poly1305 runs zmm code and
 * this level's runs AVX2; its AEADs still win on the zmm ChaCha20).
 */
#define CHAPOLY_SERVE_XCHACHA 1u /* XChaCha20-Poly1305 */
#define CHAPOLY_SERVE_CHACHA 2u  /* ChaCha20-Poly1305 and ChaCha20 */
#define CHAPOLY_SERVE_MAC 4u     /* POLY1305 */
#define CHAPOLY_SERVE_ALL 7u
unsigned chapoly_kernels_serves(const chapoly_kernels *t);

/* Names of every level compiled into this build, NULL-terminated. */
const char *const *chapoly_kernels_compiled(void);

/* 1 if name is one of CHAPOLY_LEVELS, 0 otherwise (NULL included). */
int chapoly_kernels_known(const char *name);

/* ---- generic compositions (kernels/generic.c): table entries of levels
 * that do not specialise them, built from the table's other entries ---- */
void chapoly_generic_keyblock_xor(const chapoly_kernels *k, uint8_t key_block[64],
                                  uint8_t *out, const uint8_t *in, size_t len,
                                  const uint32_t key[8], const uint32_t ctr_nonce[4]);
void chapoly_generic_xor_hash_range(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                    size_t len, size_t pre, size_t hash_len,
                                    const uint32_t key[8], const uint32_t ctr_nonce[4],
                                    poly1305_state *st, int enc);
void chapoly_generic_first_xor_hash(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                                    size_t len, size_t hash_len, const uint8_t *aad,
                                    size_t aadlen, const uint32_t key[8],
                                    const uint32_t ctr_nonce[4], poly1305_state *st, int enc);
void chapoly_generic_chacha20_multi_blocks(const chapoly_kernels *k, uint8_t *out,
                                           const uint32_t *states, size_t n);
void chapoly_generic_poly1305_multi_blocks(const chapoly_kernels *k, poly1305_state *const st[],
                                           const uint8_t *const in[], const size_t len[],
                                           size_t n);
void chapoly_generic_poly1305_last(const chapoly_kernels *k, poly1305_state *st, const uint8_t *in,
                                   size_t len, unsigned padbit, uint8_t tag[16]);
void chapoly_generic_multi_blocks_hash(const chapoly_kernels *k, uint8_t *out,
                                       const uint32_t *states, size_t n,
                                       poly1305_state *const st[], const uint8_t *in[],
                                       size_t len[], size_t nh);

/* ---- the AEAD format (RFC 8439 2.8), written once (kernels/generic.c) ---- */

/*
 * data[0..len) into st zero-padded to a whole block (RFC 8439's pad16):
 * the whole blocks from data, the rest from a zeroed copy; up to two
 * blocks (an AAD) in one call.
 */
static inline void chapoly_poly1305_padded(const chapoly_kernels *k, poly1305_state *st,
                                           const uint8_t *data, size_t len)
{
    uint8_t pad[2 * POLY1305_BLOCK_BYTES] = { 0 };
    size_t whole = len > sizeof(pad) ? len & ~(size_t)(POLY1305_BLOCK_BYTES - 1) : 0;
    size_t rest = len - whole;

    if (whole > 0)
        k->poly1305_blocks(k, st, data, whole, 1);
    if (rest == 0)
        return;
    memcpy(pad, data + whole, rest);
    k->poly1305_blocks(k, st, pad, (rest + POLY1305_BLOCK_BYTES - 1) &
                                       ~(size_t)(POLY1305_BLOCK_BYTES - 1), 1);
}

/* Opening a first text of len bytes after aadlen of AAD: shapes.open_rows' form. */
#define CHAPOLY_OPEN_ROWS_MIN 128
#define CHAPOLY_OPEN_ROWS_MAX 384 /* three row sets */
#define CHAPOLY_OPEN_ROWS_AAD 64
static inline int chapoly_open_rows(const chapoly_shapes *s, size_t len, size_t aadlen)
{
    return len >= CHAPOLY_OPEN_ROWS_MIN && len <= s->open_rows && len <= CHAPOLY_OPEN_ROWS_MAX &&
           aadlen <= CHAPOLY_OPEN_ROWS_AAD;
}

/*
 * st keyed from block 0 of the message's keystream (its first 32 bytes: r
 * and s), then the AAD hashed zero-padded. The caller wipes key_block.
 */
static inline void chapoly_aead_key_aad(const chapoly_kernels *k, poly1305_state *st,
                                        const uint8_t key_block[64], const uint8_t *aad,
                                        size_t aadlen)
{
    k->poly1305_init(k, st, key_block);
    st->buflen = 0;
    chapoly_poly1305_padded(k, st, aad, aadlen);
}

/*
 * After n bytes of AAD or ciphertext at c: zeros to a whole block (RFC
 * 8439's pad16), in place, for a caller that hashes c itself (the batched
 * AEAD hashes many messages' rows in one call). c must have room for
 * n + 16 bytes (a constant-size store: no call). Returns the padded length.
 */
static inline size_t chapoly_aead_pad16(uint8_t *c, size_t n)
{
    memset(c + n, 0, POLY1305_BLOCK_BYTES); /* padded - n < 16 */
    return (n + POLY1305_BLOCK_BYTES - 1) & ~(size_t)(POLY1305_BLOCK_BYTES - 1);
}

/*
 * After n bytes of ciphertext at c: zeros to a whole block and the lengths
 * block (RFC 8439 2.8: AAD and text lengths, 64-bit little-endian). c must
 * have room for n + 31 bytes. Returns the bytes to hash from c.
 */
static inline size_t chapoly_aead_lengths_block(uint8_t *c, size_t n, uint64_t aad_len,
                                                uint64_t text_len)
{
    size_t padded = chapoly_aead_pad16(c, n);

    store64_le(c + padded, aad_len);
    store64_le(c + padded + 8, text_len);
    return padded + POLY1305_BLOCK_BYTES;
}

/* ---- byte helpers (kernels/bytes.c) ---- */

/* key bytes -> key words (little-endian). */
void chapoly_load_key(uint32_t key[8], const uint8_t bytes[32]);

/* A wipe the optimiser cannot remove. */
void chapoly_wipe(void *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif
