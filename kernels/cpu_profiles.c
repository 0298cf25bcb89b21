/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU profiles: the path choices each CPU class prefers at each kernel
 * level, as "name=value" lists of dispatch.c's forceable names, and the one
 * level rule that depends on the CPU (which classes keep to ymm). A CPU or
 * level in no row keeps the level's table values, the ones that were never
 * slower than OpenSSL's default provider on any CPU measured.
 *
 * One row per class and level. Each row says whether its values were
 * measured on such a CPU (the sweep and A/B runs of docs/performance.md,
 * which names the CPU and the command) or estimated from a pipeline model
 * (llvm-mca, scripts/mca-estimate.py) for a CPU not at hand. Any value can
 * be forced by name (config "paths", CHAPOLY_PATHS) to check a row on
 * another machine; no value changes a result, only the path computing it.
 *
 * Why a table and not a timing at load time: the provider loads in every
 * program that uses libcrypto, often at start-up and on busy hosts, and a
 * timing there would be noisy, would make the choice vary from process to
 * process and would cost every program's start.
 *
 * Nothing here reads the CPU: dispatch.c passes in what cpu_features.c read.
 */
#include "kernels_impl.h"

#define ANY_MODEL { 0 }
#define MEASURED "measured"
#define ESTIMATED "estimated"

static const struct profile {
    const char *name;            /* the CPU class, shown in build info */
    unsigned vendor;
    unsigned family_lo, family_hi; /* cpuid display family */
    unsigned char models[4];     /* cpuid display models; none listed: every model */
    const char *level;           /* one level of CHAPOLY_LEVEL_LIST */
    const char *paths;
    const char *basis;           /* MEASURED, ESTIMATED or which of its values is which */
} profiles[] = {
    /*
     * Intel: a dependent vector add/xor/rotate takes one cycle, so the
     * levels' "chacha-one=rows" holds; scalar mulx shares ports with the
     * vector rounds, so the levels' "aead=split" holds. Ice Lake-SP issues
     * 512-bit IFMA on one port (16 lanes cost nearly two 8-lane steps);
     * Sapphire Rapids class cores (Emerald, Granite Rapids) have two.
     */
    { "intel-icx", CHAPOLY_VENDOR_INTEL, 6, 6, { 0x6a, 0x6c }, "avx512",
      "poly-vector=12 poly-vector2=80 poly-prefix=0", ESTIMATED },
    { "intel-spr", CHAPOLY_VENDOR_INTEL, 6, 6, { 0x8f, 0xad, 0xae, 0xcf }, "avx512",
      "poly-vector=11 poly-vector2=40 poly-prefix=0", ESTIMATED },
    { "intel", CHAPOLY_VENDOR_INTEL, 0, ~0u, ANY_MODEL, "avx512", "poly-prefix=0", ESTIMATED },
    { "intel", CHAPOLY_VENDOR_INTEL, 0, ~0u, ANY_MODEL, "avx512vl", "poly-vector=16", ESTIMATED },
    { "intel", CHAPOLY_VENDOR_INTEL, 0, ~0u, ANY_MODEL, "avx512-noifma", "poly-vector=16",
      ESTIMATED },
    { "intel", CHAPOLY_VENDOR_INTEL, 0, ~0u, ANY_MODEL, "avx2", "poly-vector=16", ESTIMATED },
    /*
     * AMD Zen 2-4 and Hygon: separate integer and vector pipes, so the
     * stitched AVX2 AEAD fills idle integer units. Zen 4 issues 512-bit ops
     * as two halves: no 16-lane IFMA step. No open-rows: a lone block in
     * general registers measured about a third slower than a row set on
     * Zen 3 (chacha-one), and the key block has to finish in half the
     * sets' rounds to gain.
     */
    { "amd-zen2", CHAPOLY_VENDOR_AMD, 0x17, 0x17, ANY_MODEL, "avx2", "aead=stitched", ESTIMATED },
    { "hygon", CHAPOLY_VENDOR_HYGON, 0x18, 0x18, ANY_MODEL, "avx2", "aead=stitched", ESTIMATED },
    { "amd-zen3-4", CHAPOLY_VENDOR_AMD, 0x19, 0x19, ANY_MODEL, "avx2",
      "aead=stitched poly-vector=20", "aead measured, poly-vector estimated" },
    { "amd-zen3-4", CHAPOLY_VENDOR_AMD, 0x19, 0x19, ANY_MODEL, "avx512vl", "poly-vector=20",
      ESTIMATED },
    { "amd-zen3-4", CHAPOLY_VENDOR_AMD, 0x19, 0x19, ANY_MODEL, "avx512-noifma", "poly-vector=20",
      ESTIMATED },
    { "amd-zen4", CHAPOLY_VENDOR_AMD, 0x19, 0x19, ANY_MODEL, "avx512",
      "poly-vector=20 poly-vector2=0", ESTIMATED },
    /*
     * AMD Zen 5: a dependent vector op takes two cycles, so a lone block
     * runs scalar, and one 8-lane ChaCha20 batch leaves ports idle (two in
     * flight from 2 KiB); an open's key block in general registers is done
     * at half the sets' rounds (open-rows). The MAC alone takes IFMA lanes
     * earlier than the hash inside a record, where the work between calls
     * hides less.
     */
    { "amd-zen5", CHAPOLY_VENDOR_AMD, 0x1a, ~0u, ANY_MODEL, "avx2",
      "chacha-one=scalar aead=stitched chacha-pairs=2048 open-rows=384", MEASURED },
    { "amd-zen5", CHAPOLY_VENDOR_AMD, 0x1a, ~0u, ANY_MODEL, "avx512vl", "chacha-one=scalar",
      ESTIMATED },
    { "amd-zen5", CHAPOLY_VENDOR_AMD, 0x1a, ~0u, ANY_MODEL, "avx512-noifma", "chacha-one=scalar",
      ESTIMATED },
    { "amd-zen5", CHAPOLY_VENDOR_AMD, 0x1a, ~0u, ANY_MODEL, "avx512",
      "chacha-one=scalar poly-vector=24 poly-vector2=32 poly-prefix=0 poly-mac=16", MEASURED },
};

/*
 * The classes whose "best" level keeps to ymm registers: Skylake-SP and
 * Cascade Lake lower their clock under sustained zmm use (OpenSSL keeps to
 * ymm there too).
 */
static const struct profile ymm_only[] = {
    { "intel-skx", CHAPOLY_VENDOR_INTEL, 6, 6, { 0x55 }, NULL, NULL, MEASURED },
};

static int matches(const struct profile *p, const chapoly_cpu_id *id)
{
    int any_model = 1, model = 0;

    for (size_t i = 0; i < sizeof(p->models); i++) {
        any_model &= p->models[i] == 0;
        model |= p->models[i] != 0 && p->models[i] == id->model;
    }
    return p->vendor == id->vendor && id->family >= p->family_lo && id->family <= p->family_hi &&
           (any_model || model);
}

const char *chapoly_cpu_profile(const chapoly_cpu_id *id, const char *level, const char **name,
                                const char **basis)
{
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
        const struct profile *p = &profiles[i];

        if (matches(p, id) && strcmp(p->level, level) == 0) {
            *name = p->name;
            *basis = p->basis;
            return p->paths;
        }
    }
    *name = "none";
    *basis = NULL;
    return "";
}

int chapoly_cpu_ymm_only(const chapoly_cpu_id *id)
{
    for (size_t i = 0; i < sizeof(ymm_only) / sizeof(ymm_only[0]); i++)
        if (matches(&ymm_only[i], id))
            return 1;
    return 0;
}
