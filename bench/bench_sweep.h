/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "bench_evp sweep": chapoly against the default provider for every
 * operation x size x kernel level (bench/README.md, "The never-slower
 * sweep"). Built on bench_evp's jobs, output checks, calibration and
 * interleaved samples (bench_evp.h); these files add:
 *
 *   bench_sweep.c         command line; one child process per level (the
 *                         level's environment must be in place before
 *                         libcrypto loads); the time budget; the CSV
 *   bench_sweep_level.c   one level in this process: the size grids, the
 *                         cells, the timed passes, re-measuring the cells
 *                         near or below 1.0, the CSV rows
 *   bench_sweep_report.c  from the CSV: headline, cells below 1.0, the
 *                         floor table, the heat map (gnuplot)
 */
#ifndef BENCH_SWEEP_H
#define BENCH_SWEEP_H

#include "bench_evp.h"

#define SWEEP_MAX_SIZES 1024
#define SWEEP_MAX_LEVELS 8
/* OpenSSL's capability mask without AVX-512 (bench_evp --avx2 uses the same). */
#define SWEEP_AVX2_IA32CAP ":~0xC0230000"
/* AVX512F cleared, VL kept: the mask OpenSSL's own CPU probe applies on
 * Skylake-X/Cascade Lake (family 6 model 0x55), the CPUs chapoly's best level
 * is avx512vl on; its ChaCha20 then runs ymm (ChaCha20_avx512vl), its
 * Poly1305 AVX2. */
#define SWEEP_AVX512VL_IA32CAP ":~0x10000"
/* IFMA cleared: a CPU (or a VM's CPU model) with AVX-512 F/VL/BW/DQ but no
 * IFMA, where OpenSSL's Poly1305 runs its zmm base 2^26 code. */
#define SWEEP_NOIFMA_IA32CAP ":~0x200000"

/*
 * The CSV's columns, in order (bench_sweep_report.c reads them by name; the
 * three of --base are empty without it; those and layout may be absent from
 * older files). layout: 1 for a level's own process, 2.. for the fresh
 * processes that measured its cells below 1.0 again (--layouts): a cell
 * then has one row per process, and the report takes the median.
 * placement: the output buffer's offset in its page in that process.
 */
#define SWEEP_CSV_HEADER                                                                  \
    "level,kernel,default_limit,op,size,baseline,check,chapoly_ns,default_ns,ratio,reps,"   \
    "spread,remeasured,ratio_first,reps_first,floor_ns,chapoly_above_floor_ns,"            \
    "default_above_floor_ns,boringssl_ns,base_ns,ratio_base,ratio_base_first,layout,placement"
/* At most this many processes measure a cell (--layouts). */
#define SWEEP_MAX_LAYOUTS 9

struct sweep_cfg {
    int quick;
    int op_on[N_OPS];              /* the operations swept */
    size_t sizes[SWEEP_MAX_SIZES]; /* --sizes, else the mode's grid */
    int nsizes, sizes_given;
    const char *levels[SWEEP_MAX_LEVELS];
    int nlevels;
    double budget_s;               /* whole run (parent) or this level (child) */
    double burst_ms;               /* forced burst length; 0: from the budget */
    int reps, rereps;              /* repetitions: first pass, re-measure */
    double near;                   /* re-measure cells with a ratio below this */
    double spread_s;               /* re-measure: repetitions spread over at least this */
    double base_worse;             /* --base: cells with ratio_base below this count as worse */
    const char *csv, *png;
    const char *report_only;       /* --report CSV: no measuring */
    const char *child_level;       /* set in a level's child process */
    int this_process;              /* measure the environment's level here, no child */
    int brief;                     /* a level after the first: no module lines again */
    int layouts;                   /* processes (address layouts) a cell below 1.0 gets */
    int layout;                    /* this process's number among them (1: the level's own) */
    char *recheck;                 /* in a recheck process: the cells, "op:size,..." */
    double recheck_below;          /* cells re-run in fresh processes: ratio below this */
    double t_start;
};
extern struct sweep_cfg scfg;

/* bench_sweep_level.c: measure one level in this process, append its rows to scfg.csv. */
int sweep_level(const char *level, double budget_s);

/* bench_sweep_report.c: from the CSV, print the report and draw the heat map. */
int sweep_report(const char *csv, const char *png);

/*
 * bench_sweep_report.c: the cells of a level whose ratio (its own process's
 * row) is below 'below', as "op:size,op:size"; returns how many (0: none,
 * and *list is NULL). The caller frees *list.
 */
int sweep_cells_below(const char *csv, const char *level, double below, char **list);

#endif
