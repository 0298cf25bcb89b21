/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp sweep: the "never slower" map. Every operation x size x kernel
 * level, chapoly against the default provider in the same process,
 * interleaved (bench/README.md, "The never-slower sweep").
 *
 * This file: the command line, and the parent process. libcrypto reads
 * OPENSSL_ia32cap when it loads and chapoly reads CHAPOLY_KERNEL when it
 * initialises, so each level runs in a child process (this program again,
 * with "--child LEVEL") started with that level's environment:
 *
 *   level           CHAPOLY_KERNEL   default provider (OPENSSL_ia32cap)
 *   auto            unset            unlimited (unset)
 *   avx2            avx2             :~0xC0230000 (no AVX-512: as bench_evp --avx2)
 *   avx512vl        avx512vl         :~0x10000 (AVX512F cleared: what OpenSSL itself
 *                                    does on Skylake-X, where this level is the best)
 *   avx512-noifma   avx512-noifma    :~0x200000 (IFMA cleared)
 *   avx512, neon, portable
 *                   the level        unlimited (unset)
 *
 * A child whose chapoly does not run the level asked for (the CPU lacks it)
 * exits 3 and the level is reported as skipped. Each child appends its rows
 * to the CSV; the parent then reads the CSV back for the report
 * (bench_sweep_report.c). The time budget is shared out as the run goes: a
 * level gets what is left divided by the levels still to run.
 *
 * Address layouts (--layouts): where the loader puts libcrypto, chapoly.so
 * and the heap differs from process to process (ASLR), and with it how their
 * hot code and data share the core's predictors and caches. One cell's ratio
 * moves by up to ~15 % between two processes of the same build (POLY1305 at
 * 352 B, avx2 level, AMD EPYC family 26 model 2: 0.98-1.13 in five
 * processes; within 2 % in five with ASLR off, setarch -R), so one process
 * is one sample of the layouts a program may get. The cells of a level still
 * below 1.0 after its re-measure are measured again in fresh processes (the
 * level's child again, for those cells only, bursts planned from a short
 * budget) once every level has run, a round of processes over the levels at
 * a time, so a cell's processes are minutes apart; every process's row goes
 * into the CSV, and the report judges the cell by the median over the
 * processes and shows the worst one beside it.
 */
#include "bench_sweep.h"

#include <errno.h>
#include <math.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/crypto.h>

#define EXIT_LEVEL_ABSENT 3
/* seconds for one recheck process: its start, a first pass and a re-measure spread */
#define RECHECK_BUDGET 16.0

struct sweep_cfg scfg;

/* The operations swept unless --ops says otherwise. */
static const char *const default_ops[] = {
    "seal", "open", "seal-rekey", "seal-newctx", "tls13", "tls12", "stream16", "stream64",
    "stream256", "stream1k", "chacha20", "quic-hp", "poly1305", "xseal", "xopen",
    "quic-seal", "quic-open",
};

static const char *const default_levels[] = {
#if defined(__x86_64__)
    "auto", "avx2", "avx512vl", "avx512-noifma", "avx512",
#elif defined(__aarch64__)
    "auto", "neon",
#else
    "auto",
#endif
};

static const char *const known_levels[] = {
    "auto", "portable", "avx2", "avx512vl", "avx512-noifma", "avx512", "neon",
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_evp sweep [options]\n"
            "  --quick           coarse size grid, ~40 s budget (the inner loop)\n"
            "  --full            every size of the grid, ~9 min budget (default)\n"
            "  --ops a,b,...     operations (default: the 17 of the README's table)\n"
            "  --sizes LIST      sizes instead of the mode's grid: N, A-B (every size), A-B:STEP,\n"
            "                    'quick' or 'full'; each operation keeps those in its range\n"
            "  --levels a,b,...  auto, avx2, avx512vl, avx512-noifma, avx512 (x86-64), neon, portable;\n"
            "                    default: auto and every forced level the CPU has\n"
            "  --budget S        seconds for the whole run (default 540, --quick 40)\n"
            "  --burst MS        burst length instead of the one the budget allows\n"
            "  --reps N          repetitions of the first pass (default 5)\n"
            "  --rereps N        repetitions when re-measuring (default 11)\n"
            "  --near X          re-measure cells whose ratio is below X (default 1.02)\n"
            "  --spread S        the re-measure's repetition r of N starts no earlier than\n"
            "                    r / (N - 1) of S seconds after the first (default 15, --quick 0;\n"
            "                    at most half a level's budget): the host changes speed for\n"
            "                    seconds at a time, and every repetition within one such stretch\n"
            "                    would judge the cell by it\n"
            "  --csv FILE        the results (default sweep.csv)\n"
            "  --png FILE        the heat map (default: the CSV's name with .png)\n"
            "  --report CSV      no measuring: the report and heat map of an earlier run\n"
            "  --this-process    measure only the level the environment sets (CHAPOLY_KERNEL,\n"
            "                    OPENSSL_ia32cap), in this process: for OpenSSL 3.5's loader\n"
            "  --base PATH       A/B: a second chapoly.so (or its directory), the baseline build, in a\n"
            "                    library context of its own and interleaved with the rest; the CSV gets\n"
            "                    base_ns and ratio_base = base ns / chapoly ns, the report the cells\n"
            "                    below --base-worse (re-measured below it + (--near - 1))\n"
            "  --base-worse X    what counts as worse than the base (default 0.97: 3 %% slower)\n"
            "  --layouts N       a cell still below 1.0 after the re-measure is measured again in\n"
            "                    N - 1 fresh processes (other address layouts; default 3, 1: no);\n"
            "                    the report takes the median over the N processes (not with\n"
            "                    --this-process)\n"
            "  --layouts-below X those cells: ratio below X (default 1.0)\n"
            "  --module PATH, --no-boringssl, --no-sodium, --placement B, --heap-shift B   as for\n"
            "                    bench_evp (each process draws them unless given)\n");
}

static void add_size(size_t v)
{
    for (int i = 0; i < scfg.nsizes; i++)
        if (scfg.sizes[i] == v)
            return;
    if (scfg.nsizes == SWEEP_MAX_SIZES)
        die("sweep: more than %d sizes", SWEEP_MAX_SIZES);
    scfg.sizes[scfg.nsizes++] = v;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;

    return (x > y) - (x < y);
}

/*
 * The grids. full: every size 1-64, every 16 bytes to 1 KiB, the multiples
 * of 64 and their neighbours (+-1) to 8 KiB, powers of two to 64 KiB.
 * quick: the edges that matter most, 1 B to 64 KiB.
 */
static void add_grid(int full)
{
    static const size_t quick[] = { 1,    15,   16,   63,   64,   65,    255,   256,  576,
                                    1023, 1024, 1350, 2049, 4096, 8192, 16384, 65536 };

    if (!full) {
        for (size_t i = 0; i < sizeof(quick) / sizeof(quick[0]); i++)
            add_size(quick[i]);
        return;
    }
    for (size_t v = 1; v <= 64; v++)
        add_size(v);
    for (size_t v = 80; v <= 1024; v += 16)
        add_size(v);
    for (size_t v = 64; v <= 8192; v += 64) {
        add_size(v - 1);
        add_size(v);
        add_size(v + 1);
    }
    for (size_t v = 16384; v <= 65536; v *= 2)
        add_size(v);
}

static void parse_sizes(const char *s)
{
    char *dup = strdup(s), *save = NULL;

    scfg.nsizes = 0;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        unsigned long a, b, step = 1;
        char *end;

        if (strcmp(t, "quick") == 0 || strcmp(t, "full") == 0) {
            add_grid(t[0] == 'f');
            continue;
        }
        a = strtoul(t, &end, 10);
        b = a;
        if (*end == '-')
            b = strtoul(end + 1, &end, 10);
        if (*end == ':')
            step = strtoul(end + 1, &end, 10);
        if (*end != '\0' || a == 0 || b < a || b > (1UL << 26) || step == 0)
            die("sweep: bad size '%s' (N, A-B or A-B:STEP, 1..67108864)", t);
        for (unsigned long v = a; v <= b; v += step)
            add_size(v);
    }
    free(dup);
    if (scfg.nsizes == 0)
        die("sweep: --sizes needs at least one size");
    scfg.sizes_given = 1;
}

static void parse_ops(const char *s)
{
    char *dup = strdup(s), *save = NULL;

    memset(scfg.op_on, 0, sizeof(scfg.op_on));
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;

        for (i = 0; i < N_OPS && strcmp(t, ops[i].name) != 0; i++)
            ;
        if (i == N_OPS)
            die("sweep: unknown operation '%s' (bench_evp --help lists them)", t);
        scfg.op_on[i] = 1;
    }
    free(dup);
}

static void parse_levels(const char *s)
{
    char *dup = strdup(s), *save = NULL; /* kept: scfg.levels points into it */

    scfg.nlevels = 0;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;

        for (i = 0; i < sizeof(known_levels) / sizeof(known_levels[0]); i++)
            if (strcmp(t, known_levels[i]) == 0)
                break;
        if (i == sizeof(known_levels) / sizeof(known_levels[0]))
            die("sweep: unknown level '%s'", t);
        if (scfg.nlevels == SWEEP_MAX_LEVELS)
            die("sweep: at most %d levels", SWEEP_MAX_LEVELS);
        scfg.levels[scfg.nlevels++] = t;
    }
    if (scfg.nlevels == 0)
        die("sweep: --levels needs at least one level");
}

static void parse_args(int argc, char **argv)
{
    int full = 0, budget_given = 0, spread_given = 0;

    scfg.reps = 5;
    scfg.rereps = 11;
    scfg.layouts = 3;
    scfg.layout = 1;
    scfg.recheck_below = 1.0;
    scfg.near = 1.02;
    scfg.base_worse = 0.97;
    scfg.csv = "sweep.csv";
    for (size_t i = 0; i < sizeof(default_ops) / sizeof(default_ops[0]); i++)
        for (size_t o = 0; o < N_OPS; o++)
            if (strcmp(ops[o].name, default_ops[i]) == 0)
                scfg.op_on[o] = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die("sweep: %s needs a value", a), ""))
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--quick")) {
            scfg.quick = 1;
        } else if (!strcmp(a, "--full")) {
            full = 1;
        } else if (!strcmp(a, "--ops")) {
            parse_ops(NEXT());
        } else if (!strcmp(a, "--sizes")) {
            parse_sizes(NEXT());
        } else if (!strcmp(a, "--levels")) {
            parse_levels(NEXT());
        } else if (!strcmp(a, "--budget")) {
            scfg.budget_s = atof(NEXT());
            budget_given = 1;
        } else if (!strcmp(a, "--burst")) {
            scfg.burst_ms = atof(NEXT());
        } else if (!strcmp(a, "--reps")) {
            scfg.reps = atoi(NEXT());
        } else if (!strcmp(a, "--rereps")) {
            scfg.rereps = atoi(NEXT());
        } else if (!strcmp(a, "--near")) {
            scfg.near = atof(NEXT());
        } else if (!strcmp(a, "--spread")) {
            scfg.spread_s = atof(NEXT());
            spread_given = 1;
        } else if (!strcmp(a, "--csv")) {
            scfg.csv = NEXT();
        } else if (!strcmp(a, "--png")) {
            scfg.png = NEXT();
        } else if (!strcmp(a, "--report")) {
            scfg.report_only = NEXT();
        } else if (!strcmp(a, "--this-process")) {
            scfg.this_process = 1;
        } else if (!strcmp(a, "--child")) {
            scfg.child_level = NEXT();
        } else if (!strcmp(a, "--brief")) {
            scfg.brief = 1;
        } else if (!strcmp(a, "--layouts")) {
            scfg.layouts = atoi(NEXT());
        } else if (!strcmp(a, "--layouts-below")) {
            scfg.recheck_below = atof(NEXT());
        } else if (!strcmp(a, "--recheck")) { /* internal: a recheck process's cells */
            scfg.recheck = NEXT();
        } else if (!strcmp(a, "--layout")) { /* internal: its number */
            scfg.layout = atoi(NEXT());
        } else if (!strcmp(a, "--module")) {
            cfg.module = NEXT();
        } else if (!strcmp(a, "--base")) {
            cfg.base = NEXT();
        } else if (!strcmp(a, "--base-worse")) {
            scfg.base_worse = atof(NEXT());
        } else if (!strcmp(a, "--no-boringssl")) {
            cfg.no_boring = 1;
        } else if (!strcmp(a, "--no-sodium")) {
            cfg.no_sodium = 1;
        } else if (!strcmp(a, "--placement")) {
            parse_placement(NEXT());
        } else if (!strcmp(a, "--heap-shift")) {
            parse_heap_shift(NEXT());
        } else {
            usage(stderr);
            die("sweep: unknown option %s", a);
        }
#undef NEXT
    }
    if (full && scfg.quick)
        die("sweep: --quick or --full, not both");
    if (scfg.reps < 3 || scfg.reps > MAX_REPS || scfg.rereps < 3 || scfg.rereps > MAX_REPS)
        die("sweep: --reps and --rereps must be 3..%d", MAX_REPS);
    if (scfg.burst_ms < 0 || scfg.burst_ms > 100 || scfg.near <= 0 || scfg.base_worse <= 0)
        die("sweep: bad --burst, --near or --base-worse");
    if (!budget_given)
        scfg.budget_s = scfg.quick ? 40 : 540;
    if (!spread_given)
        scfg.spread_s = scfg.quick ? 0 : 15;
    if (scfg.spread_s < 0 || scfg.spread_s > 600)
        die("sweep: --spread must be 0..600 seconds");
    if (scfg.budget_s <= 0)
        die("sweep: --budget must be positive");
    if (scfg.layouts < 1 || scfg.layouts > SWEEP_MAX_LAYOUTS || scfg.layout < 1
        || scfg.layout > scfg.layouts || scfg.recheck_below <= 0)
        die("sweep: --layouts must be 1..%d, --layouts-below positive", SWEEP_MAX_LAYOUTS);
    if (scfg.recheck != NULL) {
        scfg.near = INFINITY; /* every cell of the list gets the re-measure */
        if (!spread_given || scfg.spread_s > RECHECK_BUDGET / 3)
            scfg.spread_s = RECHECK_BUDGET / 3;
    }
    if (!scfg.sizes_given)
        add_grid(!scfg.quick);
    qsort(scfg.sizes, (size_t)scfg.nsizes, sizeof(scfg.sizes[0]), cmp_size);
    if (scfg.nlevels == 0)
        for (size_t i = 0; i < sizeof(default_levels) / sizeof(default_levels[0]); i++)
            scfg.levels[scfg.nlevels++] = default_levels[i];
    if (scfg.png == NULL) {
        const char *csv = scfg.report_only ? scfg.report_only : scfg.csv;
        size_t n = strlen(csv);
        char *png = malloc(n + 5);

        if (png == NULL)
            die("out of memory");
        memcpy(png, csv, n + 1);
        if (n > 4 && strcmp(png + n - 4, ".csv") == 0)
            png[n - 4] = '\0';
        strcat(png, ".png");
        scfg.png = png;
    }
}

/* ------------------------------------------------------------------ */
/* The parent: one child per level                                     */

/* The environment of a level (see the top of this file). */
static void set_level_env(const char *level)
{
    int ok = 1;

    if (strcmp(level, "auto") == 0)
        ok = unsetenv("CHAPOLY_KERNEL") == 0;
    else
        ok = setenv("CHAPOLY_KERNEL", level, 1) == 0;
    if (strcmp(level, "avx2") == 0)
        ok = ok && setenv("OPENSSL_ia32cap", SWEEP_AVX2_IA32CAP, 1) == 0;
    else if (strcmp(level, "avx512vl") == 0)
        ok = ok && setenv("OPENSSL_ia32cap", SWEEP_AVX512VL_IA32CAP, 1) == 0;
    else if (strcmp(level, "avx512-noifma") == 0)
        ok = ok && setenv("OPENSSL_ia32cap", SWEEP_NOIFMA_IA32CAP, 1) == 0;
    else
        ok = ok && unsetenv("OPENSSL_ia32cap") == 0;
    if (!ok)
        die("sweep: cannot set the environment of level %s", level);
}

/* Runs this program again for one level; returns its exit status. */
static int run_child(int argc, char **argv, const char *level, double budget_s, int brief,
                     char *const *extra)
{
    char budget[32];
    char **av = calloc((size_t)argc + 12, sizeof(char *));
    int n = 0, status = 0;

    if (av == NULL)
        die("out of memory");
    snprintf(budget, sizeof(budget), "%.1f", budget_s);
    for (int i = 0; i < argc; i++)
        av[n++] = argv[i];
    av[n++] = "--child";
    av[n++] = (char *)level;
    av[n++] = "--budget";
    av[n++] = budget;
    if (brief)
        av[n++] = "--brief";
    for (; extra != NULL && *extra != NULL; extra++)
        av[n++] = *extra;
    av[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        die("sweep: fork failed: %s", strerror(errno));
    if (pid == 0) {
        set_level_env(level);
        execv("/proc/self/exe", av);
        fprintf(stderr, "bench_evp sweep: cannot run /proc/self/exe again: %s\n", strerror(errno));
        _exit(127);
    }
    free(av);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("sweep: waitpid failed: %s", strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Through OpenSSL 3.5's loader /proc/self/exe is the loader: a child would not start. */
static void refuse_loader(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n <= 0)
        return;
    exe[n] = '\0';
    if (strncmp(basename(exe), "ld-", 3) == 0)
        die("sweep: started through a loader (%s): the levels cannot be re-run; run each level"
            " with --this-process and its environment (bench/README.md)", exe);
}

/* The level the environment sets up, for --this-process. */
static const char *env_level(void)
{
    const char *k = getenv("CHAPOLY_KERNEL");

    return k == NULL || *k == '\0' || strcmp(k, "best") == 0 ? "auto" : k;
}

static void print_run_header(void)
{
    char cpu[320];
    double load[3] = { 0 };

    cpu_model(cpu, sizeof(cpu));
    getloadavg(load, 3);
    printf("bench_evp sweep: chapoly vs OpenSSL's default provider, operation x size x level\n");
    printf("  cpu        %s\n", cpu);
    printf("  openssl    %s\n", OpenSSL_version(OPENSSL_VERSION));
    printf("  mode       %s: %d sizes (%zu..%zu B; each operation keeps those in its range),"
           " budget %.0f s\n", scfg.sizes_given ? "--sizes" : scfg.quick ? "quick" : "full",
           scfg.nsizes, scfg.sizes[0], scfg.sizes[scfg.nsizes - 1], scfg.budget_s);
    printf("  ops       ");
    for (size_t o = 0; o < N_OPS; o++)
        if (scfg.op_on[o])
            printf(" %s", ops[o].name);
    printf("\n  levels    ");
    for (int i = 0; i < scfg.nlevels && !scfg.this_process; i++)
        printf(" %s", scfg.levels[i]);
    if (scfg.this_process)
        printf(" %s (this process: CHAPOLY_KERNEL and OPENSSL_ia32cap as they are)", env_level());
    printf("\n");
    printf("  load avg   %.2f %.2f %.2f at start (other processes share the CPU: only the\n"
           "             interleaved in-run ratios mean anything)\n", load[0], load[1], load[2]);
    if (cfg.base)
        printf("  base       %s (A/B: ratio_base = base ns / chapoly ns; worse: below %.2f)\n",
               cfg.base, scfg.base_worse);
    printf("  csv        %s\n", scfg.csv);
    fflush(stdout);
}

/*
 * The cells still below scfg.recheck_below, measured again in fresh
 * processes (see the top of this file): after every level has run once, a
 * second process for each level that has such cells, then a third, and so
 * on, so a cell's processes lie minutes apart (the host changes speed for
 * minutes at a time, too). Returns the worst exit status.
 */
static int recheck_levels(int argc, char **argv, const char *const *ran_levels, int nran)
{
    char *list[SWEEP_MAX_LEVELS] = { NULL }, num[16], total[16];
    int n[SWEEP_MAX_LEVELS] = { 0 }, worst = 0, any = 0;

    if (scfg.layouts < 2)
        return 0;
    for (int i = 0; i < nran; i++) {
        n[i] = sweep_cells_below(scfg.csv, ran_levels[i], scfg.recheck_below, &list[i]);
        any += n[i] > 0;
    }
    if (!any)
        return 0;
    snprintf(total, sizeof(total), "%d", scfg.layouts);
    printf("\n== layouts: cells below %.2f measured again in %d fresh process%s each, level by"
           " level, one round after another:\n", scfg.recheck_below, scfg.layouts - 1,
           scfg.layouts > 2 ? "es" : "");
    for (int i = 0; i < nran; i++)
        if (n[i] > 0)
            printf("  %-13s %d cell%s\n", ran_levels[i], n[i], n[i] > 1 ? "s" : "");
    for (int k = 2; k <= scfg.layouts; k++)
        for (int i = 0; i < nran; i++) {
            char *extra[] = { "--recheck", list[i], "--layout", num, "--layouts", total, NULL };

            if (n[i] == 0)
                continue;
            snprintf(num, sizeof(num), "%d", k);
            int rc = run_child(argc, argv, ran_levels[i], RECHECK_BUDGET, 1, extra);
            if (rc != 0 && rc != 2)
                die("sweep: level %s, process %d failed (exit status %d)", ran_levels[i], k, rc);
            worst = rc > worst ? rc : worst;
        }
    for (int i = 0; i < nran; i++)
        free(list[i]);
    return worst;
}

int sweep_main(int argc, char **argv)
{
    scfg.t_start = now_ns();
    parse_args(argc, argv);
    if (scfg.report_only)
        return sweep_report(scfg.report_only, scfg.png);
    if (scfg.child_level)
        return sweep_level(scfg.child_level, scfg.budget_s);

    FILE *f = fopen(scfg.csv, "w");
    if (f == NULL)
        die("sweep: cannot write %s: %s", scfg.csv, strerror(errno));
    fprintf(f, "%s\n", SWEEP_CSV_HEADER);
    fclose(f);
    print_run_header();

    int worst = 0, ran = 0;
    const char *ran_levels[SWEEP_MAX_LEVELS];
    if (scfg.this_process) {
        worst = sweep_level(env_level(), scfg.budget_s);
        ran = worst != EXIT_LEVEL_ABSENT;
    } else {
        refuse_loader();
        for (int i = 0; i < scfg.nlevels; i++) {
            double left = scfg.budget_s - (now_ns() - scfg.t_start) / 1e9;
            double share = left / (scfg.nlevels - i);
            /* argv - 1: main's argv, whose [1] is "sweep" (main passed argv + 1) */
            int rc = run_child(argc + 1, argv - 1, scfg.levels[i], share > 1 ? share : 1, ran > 0,
                               NULL);

            if (rc == EXIT_LEVEL_ABSENT)
                continue;
            ran++;
            if (rc != 0 && rc != 2)
                die("sweep: level %s failed (exit status %d)", scfg.levels[i], rc);
            worst = rc > worst ? rc : worst;
            ran_levels[ran - 1] = scfg.levels[i];
        }
        int rc = recheck_levels(argc + 1, argv - 1, ran_levels, ran);
        worst = rc > worst ? rc : worst;
    }
    if (ran == 0)
        die("sweep: no level could run");
    int rc = sweep_report(scfg.csv, scfg.png);
    printf("total %.0f s\n", (now_ns() - scfg.t_start) / 1e9);
    return worst ? worst : rc;
}
