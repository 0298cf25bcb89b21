/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CPU profiles: the path choices and crossovers each microarchitecture
 * prefers, as "name=value" lists (the names of dispatch.c's shapes), keyed
 * by vendor, family and model. A CPU in no row keeps its level's table
 * values, which are the choices that are not slower than OpenSSL's default
 * provider on any CPU measured so far.
 *
 * Why a table and not a measurement at load time: a timing taken while the
 * module loads is noisy on a shared or busy host (the provider loads in
 * every program that uses libcrypto, often at start-up, beside other
 * start-up work), it would make the bytes of the choice vary from run to
 * run and from process to process, and it costs every program's start. The
 * rows below come from the sweep (bench/README.md) on each machine named,
 * and from a pipeline model (llvm-mca) for the ones not at hand; every
 * choice can be forced by name (config "paths", CHAPOLY_PATHS) to check it
 * on another machine.
 *
 * Nothing here looks at the CPU: dispatch.c passes in what cpu_features.c
 * read.
 */
#include "kernels_impl.h"

static const struct profile {
    const char *name;
    unsigned vendor;
    unsigned family_lo, family_hi; /* cpuid display family */
    const char *level;             /* NULL: every level */
    const char *paths;
} profiles[] = {
    /*
     * Intel cores (Haswell to Sapphire Rapids and later): a dependent
     * vector add/xor/rotate is 1 cycle, so a lone block in a row of xmm
     * registers (~265-320 cycles, llvm-mca sapphirerapids, icelake-server,
     * alderlake, skylake) beats the scalar block (377-456: its 320 rotates
     * share ports 0 and 6; 70 % of the time of QUIC's header protection on
     * a Sapphire Rapids class Xeon); and scalar mulx shares ports with the
     * vector rounds, so the stitched AVX2 AEAD loses to the split one
     * (measured there: stitched 0.85-0.95x the AVX2-limited default from
     * 1 KiB). These are the level tables' values.
     */
    { "intel", CHAPOLY_VENDOR_INTEL, 0, ~0u, NULL, "" },
    /*
     * AMD Zen 2-4 (family 0x17, 0x19) and Hygon: separate integer and
     * vector pipes, so the stitched AVX2 AEAD fills idle integer units
     * (Zen 4: 1.3-1.4x the AVX2-limited default from 1350 B, against
     * 0.96-1.01x split). A dependent vector op is 1 cycle: a lone block in
     * rows (the level tables' value; Zen 4 measured a ymm row set at 88 ns
     * against 116 for the scalar block; llvm-mca znver4: xmm rows 307,
     * scalar 330 cycles).
     */
    { "amd-zen2-4", CHAPOLY_VENDOR_AMD, 0x17, 0x19, "avx2", "aead=stitched" },
    { "amd-zen2-4", CHAPOLY_VENDOR_AMD, 0x17, 0x19, NULL, "" },
    { "hygon", CHAPOLY_VENDOR_HYGON, 0x18, 0x18, "avx2", "aead=stitched" },
    { "hygon", CHAPOLY_VENDOR_HYGON, 0x18, 0x18, NULL, "" },
    /*
     * AMD Zen 5 (family 0x1a): a dependent vector add/xor/rotate costs 2
     * cycles, so a lone block in vector rows (xmm: 112 ns, ~490 cycles)
     * loses to the scalar block (68 ns with its scrub), measured on AMD
     * EPYC family 26 model 2 (bench_kernels -o chacha20-1block); the
     * stitched AVX2 AEAD wins as on Zen 4.
     */
    { "amd-zen5", CHAPOLY_VENDOR_AMD, 0x1a, ~0u, "avx2", "chacha-one=scalar aead=stitched" },
    { "amd-zen5", CHAPOLY_VENDOR_AMD, 0x1a, ~0u, NULL, "chacha-one=scalar" },
};

const char *chapoly_cpu_profile(const chapoly_cpu_id *id, const char *level, const char **name)
{
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
        const struct profile *p = &profiles[i];

        if (p->vendor != id->vendor || id->family < p->family_lo || id->family > p->family_hi)
            continue;
        if (p->level != NULL && strcmp(p->level, level) != 0)
            continue;
        *name = p->name;
        return p->paths;
    }
    *name = "none";
    return "";
}
