/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU profiles: the path choices and crossovers each microarchitecture
 * prefers, as "name=value" lists (the names of dispatch.c's shapes), keyed
 * by vendor, family, model and level. The first row that matches the CPU
 * and the level applies; a CPU in no row keeps its level's table values,
 * which are the choices that are not slower than OpenSSL's default
 * provider on any CPU measured or estimated so far.
 *
 * Why a table and not a measurement at load time: a timing taken while the
 * module loads is noisy on a shared or busy host (the provider loads in
 * every program that uses libcrypto, often at start-up, beside other
 * start-up work), it would make the bytes of the choice vary from run to
 * run and from process to process, and it costs every program's start. The
 * rows below come from the sweep (bench/README.md) on the machines named
 * in bench/results/kernel-notes.md ("measured") and from a pipeline model
 * (llvm-mca) for the cores not at hand ("estimated"); every choice can be
 * forced by name (config "paths", CHAPOLY_PATHS) to check it on another
 * machine. No value changes a result, only the path that computes it.
 *
 * Nothing here looks at the CPU: dispatch.c passes in what cpu_features.c
 * read.
 */
#include "kernels_impl.h"

#define ANY 0, ~0u
/* The levels whose Poly1305 is the AVX2 one (poly1305_avx2.c). */
#define AVX2_POLY "avx2 avx512vl avx512-noifma"

static const struct profile {
    const char *name;
    unsigned vendor;
    unsigned family_lo, family_hi; /* cpuid display family */
    unsigned model_lo, model_hi;   /* cpuid display model */
    const char *levels;            /* space-separated; NULL: every level */
    const char *paths;
} profiles[] = {
    /*
     * Intel cores (Haswell to Sapphire Rapids and later): a dependent
     * vector add/xor/rotate takes 1 cycle, so a lone block in a row of xmm
     * registers beats the scalar block, whose rotates share two ports (the
     * level tables' "chacha-one=rows", estimated); scalar mulx shares ports
     * with the vector rounds, so the stitched AVX2 AEAD loses to the split
     * one (measured; the tables' "aead=split").
     * IFMA Poly1305 (estimated): Ice Lake-SP runs 512-bit IFMA on one port,
     * so its 16-lane step costs nearly two 8-lane ones; Sapphire Rapids
     * class cores (Emerald and Granite Rapids alike) have two IFMA ports.
     * The scalar prefix beside the key powers gains nothing where vector
     * latency is short: 0. AVX2 Poly1305: the vector path from 16 blocks
     * (estimated).
     */
    { "intel-icx", CHAPOLY_VENDOR_INTEL, 6, 6, 0x6a, 0x6c, "avx512",
      "poly-vector=12 poly-vector2=80 poly-prefix=0" },
    { "intel-spr", CHAPOLY_VENDOR_INTEL, 6, 6, 0x8f, 0x8f, "avx512",
      "poly-vector=11 poly-vector2=40 poly-prefix=0" },
    { "intel-spr", CHAPOLY_VENDOR_INTEL, 6, 6, 0xad, 0xae, "avx512",
      "poly-vector=11 poly-vector2=40 poly-prefix=0" },
    { "intel-spr", CHAPOLY_VENDOR_INTEL, 6, 6, 0xcf, 0xcf, "avx512",
      "poly-vector=11 poly-vector2=40 poly-prefix=0" },
    { "intel", CHAPOLY_VENDOR_INTEL, ANY, ANY, "avx512", "poly-prefix=0" },
    { "intel", CHAPOLY_VENDOR_INTEL, ANY, ANY, AVX2_POLY, "poly-vector=16" },
    { "intel", CHAPOLY_VENDOR_INTEL, ANY, ANY, NULL, "" },
    /*
     * AMD Zen 2-4 (family 0x17, 0x19) and Hygon: separate integer and
     * vector pipes, so the stitched AVX2 AEAD fills idle integer units
     * (measured on Zen 4). A dependent vector op takes 1 cycle: a lone block
     * in rows (the level tables' value; measured on Zen 4). AVX2 Poly1305
     * from 20 blocks on Zen 3/4, 22 (the tables' value) on Zen 2
     * (estimated). Zen 4 (the only family 0x19 core with AVX-512) splits
     * 512-bit ops: its 16-lane IFMA step costs two 8-lane ones, so no 16
     * lanes; 8 lanes from 20 blocks (estimated).
     */
    { "amd-zen2", CHAPOLY_VENDOR_AMD, 0x17, 0x17, ANY, "avx2", "aead=stitched" },
    { "amd-zen2", CHAPOLY_VENDOR_AMD, 0x17, 0x17, ANY, NULL, "" },
    { "amd-zen3-4", CHAPOLY_VENDOR_AMD, 0x19, 0x19, ANY, "avx2",
      "aead=stitched poly-vector=20" },
    { "amd-zen3-4", CHAPOLY_VENDOR_AMD, 0x19, 0x19, ANY, "avx512vl avx512-noifma",
      "poly-vector=20" },
    { "amd-zen4", CHAPOLY_VENDOR_AMD, 0x19, 0x19, ANY, "avx512",
      "poly-vector=20 poly-vector2=0" },
    { "amd-zen3-4", CHAPOLY_VENDOR_AMD, 0x19, 0x19, ANY, NULL, "" },
    { "hygon", CHAPOLY_VENDOR_HYGON, 0x18, 0x18, ANY, "avx2", "aead=stitched" },
    { "hygon", CHAPOLY_VENDOR_HYGON, 0x18, 0x18, ANY, NULL, "" },
    /*
     * AMD Zen 5 (family 0x1a): a dependent vector add/xor/rotate takes 2
     * cycles, so a lone block in vector rows loses to the scalar block
     * (measured); the stitched AVX2 AEAD wins as on Zen 4 (measured). IFMA
     * Poly1305: 8 lanes from 24 blocks, 16 from 32; a tight MAC loop wins
     * from 15 blocks, but inside a TLS record (libssl's work between the
     * calls) the 8-lane start costs more than it saves below 24: TLS 1.3
     * records of 240-300 B 0.92-0.94x the pre-contract build b460290 with
     * 15, 0.99-1.01x with 24, the MAC still 1.10-1.53x the default there
     * (bench_evp --base, measured). The one-shot MAC (no libssl between
     * calls) takes 8 lanes from 16 blocks: 288-352 B 1.09-1.33x the default
     * against 1.00-1.06x from 24. No scalar prefix beside the powers: in
     * the level table's 3, the MAC at 24-26 and 40-42 blocks (384, 416,
     * 672 B) hashed 8 more blocks with the scalar code and measured
     * 0.90-0.98x the default, 1.04-1.11x with 0; seal and TLS 1.3 at
     * 384 B-2 KiB no slower with 0 (measured; kernel-notes.md has a tight
     * kernel loop where the prefix gained 10 %, which EVP calls do not
     * show). AVX2 Poly1305: the tables' values
     * (the MAC from 22 blocks, the AEADs from 32; measured). The avx2 level's ChaCha20 runs two
     * 8-lane batches in flight from 2 KiB ("chacha-pairs"): one batch is
     * bound by its chain of 2-cycle ops and leaves ports idle; a lone pair
     * (1 KiB) gains nothing over two batches, 2 KiB and more gain 8-24 %
     * (measured). On 1-cycle cores the pair's loads and stores cost more
     * than it frees (llvm-mca): not in the other rows.
     */
    { "amd-zen5", CHAPOLY_VENDOR_AMD, 0x1a, ~0u, ANY, "avx2",
      "chacha-one=scalar aead=stitched chacha-pairs=2048" },
    { "amd-zen5", CHAPOLY_VENDOR_AMD, 0x1a, ~0u, ANY, "avx512",
      "chacha-one=scalar poly-vector=24 poly-vector2=32 poly-prefix=0 poly-mac=16" },
    { "amd-zen5", CHAPOLY_VENDOR_AMD, 0x1a, ~0u, ANY, NULL, "chacha-one=scalar" },
};

/* 1 if 'level' is a word of the space-separated list (NULL: every level). */
static int level_in(const char *list, const char *level)
{
    size_t n = strlen(level);

    if (list == NULL)
        return 1;
    for (const char *p = list; (p = strstr(p, level)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

const char *chapoly_cpu_profile(const chapoly_cpu_id *id, const char *level, const char **name)
{
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
        const struct profile *p = &profiles[i];

        if (p->vendor != id->vendor || id->family < p->family_lo || id->family > p->family_hi ||
            id->model < p->model_lo || id->model > p->model_hi || !level_in(p->levels, level))
            continue;
        *name = p->name;
        return p->paths;
    }
    *name = "none";
    return "";
}
