/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp sweep: the "never slower" map. Every operation x size x kernel
 * level, chapoly against the default provider (XChaCha: libsodium, else
 * BoringSSL) in one process, interleaved, with bench_evp's jobs, output
 * checks, calibration and samples. Each level runs in a child process (this
 * program again) started with the level's environment (set_level_env):
 * libcrypto reads OPENSSL_ia32cap when it loads, chapoly CHAPOLY_KERNEL
 * when it initialises. A child whose chapoly does not run the level asked
 * for exits 3: skipped. Each appends its rows to the CSV; the parent then
 * makes the report from the CSV (bench_sweep_report.c).
 *
 * In a level: the cells (their sizes, and beside chapoly and its baseline
 * the floor up to FLOOR_MAX bytes, BoringSSL's one-shot seal at 16, 64 and
 * 256 B, the base with --base); a burst length from the time budget; a
 * first pass; then the cells whose ratio came out below --near (or, with
 * --base, near worse than the base) once more, longer and spread over
 * --spread seconds, and only that second figure counts.
 */
#include "bench_evp.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_LEVEL_ABSENT 3
#define FLOOR_MAX 1024
#define BURSTS 2          /* bursts per sample in the first pass */
#define WARM_DIV 4        /* a sample's warm-up: a quarter of a burst */
#define RESERVE_FRAC 0.10 /* share of the samples the plan expects to re-measure */
#define CALIB_BURSTS 4.0  /* output check and calibration of a sample, in bursts */
#define MAX_SIZES 1024
#define MAX_LEVELS 8
#define CSV_HEADER                                                                          \
    "level,kernel,default_limit,op,size,baseline,check,chapoly_ns,default_ns,ratio,reps,"   \
    "spread,remeasured,ratio_first,floor_ns,chapoly_above_floor_ns,default_above_floor_ns," \
    "boringssl_ns,base_ns,ratio_base,placement,heap_shift"

static struct {
    int quick, op_on[N_OPS], nsizes, sizes_given, nlevels, reps, rereps, this_process, brief;
    size_t sizes[MAX_SIZES];
    const char *levels[MAX_LEVELS], *csv, *png, *report, *child;
    double budget_s, burst_ms, near, spread_s, worse;
} S;

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_evp sweep [options]\n"
               "  --quick           17 sizes, 40 s budget (default: the full grid, 540 s)\n"
               "  --ops a,b,...     operations (default: all but pipeline)\n"
               "  --sizes LIST      N, A-B, A-B:STEP, quick or full instead of the grid; each\n"
               "                    operation keeps those in its range\n"
               "  --levels a,b,...  auto portable avx2 avx512vl avx512-noifma avx512 neon (default:\n"
               "                    auto and every forced level of the architecture)\n"
               "  --budget S        seconds for the whole run\n"
               "  --burst MS        a fixed burst length instead of the budget's\n"
               "  --reps N, --rereps N   repetitions of the first pass (5) and the re-measure (11)\n"
               "  --near X          re-measure the cells below X (default 1.02)\n"
               "  --spread S        the re-measure's repetitions spread over S seconds (default 15,\n"
               "                    --quick 0; at most half a level's budget)\n"
               "  --csv FILE        the results (default sweep.csv); --png FILE: the heat map\n"
               "                    (default: the CSV's name with .png)\n"
               "  --report CSV      no measuring: the report and heat map of an earlier run\n"
               "  --this-process    only the level the environment sets, in this process\n"
               "  --base PATH       A/B: a second chapoly.so in every cell: base_ns, ratio_base\n"
               "  --base-worse X    with --base: worse than the base below X (default 0.97)\n"
               "  --module, --no-boringssl, --no-sodium, --placement, --heap-shift: as bench_evp\n");
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */

static void add_size(size_t v)
{
    for (int i = 0; i < S.nsizes; i++)
        if (S.sizes[i] == v)
            return;
    if (S.nsizes == MAX_SIZES)
        die("sweep: more than %d sizes", MAX_SIZES);
    S.sizes[S.nsizes++] = v;
}

/*
 * full: every size 1-64, every 16 bytes to 1 KiB, the multiples of 64 and
 * their neighbours to 8 KiB, powers of two to 64 KiB (494); quick: 17.
 */
static void add_grid(int full)
{
    static const size_t quick[] = { 1,    15,   16,   63,   64,   65,    255,   256,  576,
                                    1023, 1024, 1350, 2049, 4096, 8192, 16384, 65536 };

    for (size_t i = 0; !full && i < sizeof(quick) / sizeof(quick[0]); i++)
        add_size(quick[i]);
    for (size_t v = 1; full && v <= 64; v++)
        add_size(v);
    for (size_t v = 80; full && v <= 1024; v += 16)
        add_size(v);
    for (size_t v = 64; full && v <= 8192; v += 64) {
        add_size(v - 1);
        add_size(v);
        add_size(v + 1);
    }
    for (size_t v = 16384; full && v <= 65536; v *= 2)
        add_size(v);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;

    return (x > y) - (x < y);
}

/* A comma-separated list: sizes (kind 0), operations (1) or levels (2). */
static void parse_list(char *s, int kind)
{
    char *save = NULL;

    for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        unsigned long a, b, step = 1;
        char *end;

        if (kind == 1 && op_named(t) == NULL)
            die("sweep: unknown operation '%s'", t);
        if (kind == 1)
            S.op_on[op_named(t) - ops] = 1;
        else if (kind == 2 && (S.nlevels == MAX_LEVELS || !set_level_env(t, 0)))
            die("sweep: unknown level '%s' (or more than %d)", t, MAX_LEVELS);
        else if (kind == 2)
            S.levels[S.nlevels++] = t;
        else if (strcmp(t, "quick") == 0 || strcmp(t, "full") == 0)
            add_grid(t[0] == 'f');
        else {
            a = b = strtoul(t, &end, 10);
            if (*end == '-')
                b = strtoul(end + 1, &end, 10);
            if (*end == ':')
                step = strtoul(end + 1, &end, 10);
            if (*end != '\0' || a == 0 || b < a || b > (1UL << 26) || step == 0)
                die("sweep: bad size '%s' (N, A-B or A-B:STEP)", t);
            for (unsigned long v = a; v <= b; v += step)
                add_size(v);
        }
    }
}

static void parse_args(int argc, char **argv)
{
    int ops_given = 0, spread_given = 0;

    S.reps = 5;
    S.rereps = 11;
    S.near = 1.02;
    S.worse = 0.97;
    S.csv = "sweep.csv";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die("sweep: %s needs a value", a), ""))
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--quick"))
            S.quick = 1;
        else if (!strcmp(a, "--full"))
            S.quick = 0;
        else if (!strcmp(a, "--ops") && (ops_given = 1))
            parse_list(NEXT(), 1);
        else if (!strcmp(a, "--sizes") && (S.sizes_given = 1))
            parse_list(NEXT(), 0);
        else if (!strcmp(a, "--levels"))
            parse_list(NEXT(), 2);
        else if (!strcmp(a, "--budget"))
            S.budget_s = atof(NEXT());
        else if (!strcmp(a, "--burst"))
            S.burst_ms = atof(NEXT());
        else if (!strcmp(a, "--reps"))
            S.reps = atoi(NEXT());
        else if (!strcmp(a, "--rereps"))
            S.rereps = atoi(NEXT());
        else if (!strcmp(a, "--near"))
            S.near = atof(NEXT());
        else if (!strcmp(a, "--spread") && (spread_given = 1))
            S.spread_s = atof(NEXT());
        else if (!strcmp(a, "--csv"))
            S.csv = NEXT();
        else if (!strcmp(a, "--png"))
            S.png = NEXT();
        else if (!strcmp(a, "--report"))
            S.report = NEXT();
        else if (!strcmp(a, "--this-process"))
            S.this_process = 1;
        else if (!strcmp(a, "--child")) /* internal: a level's process */
            S.child = NEXT();
        else if (!strcmp(a, "--brief")) /* internal: not the first level */
            S.brief = 1;
        else if (!strcmp(a, "--module"))
            cfg.module = NEXT();
        else if (!strcmp(a, "--base"))
            cfg.base = NEXT();
        else if (!strcmp(a, "--base-worse"))
            S.worse = atof(NEXT());
        else if (!strcmp(a, "--no-boringssl"))
            cfg.no_boring = 1;
        else if (!strcmp(a, "--no-sodium"))
            cfg.no_sodium = 1;
        else if (!strcmp(a, "--placement"))
            cfg.placement = parse_offset(a, NEXT(), 64);
        else if (!strcmp(a, "--heap-shift"))
            cfg.heap_shift = parse_offset(a, NEXT(), 16);
        else {
            usage(stderr);
            die("sweep: unknown option %s", a);
        }
#undef NEXT
    }
    if (S.reps < 3 || S.reps > MAX_REPS || S.rereps < 3 || S.rereps > MAX_REPS)
        die("sweep: --reps and --rereps must be 3..%d", MAX_REPS);
    if (S.burst_ms < 0 || S.burst_ms > 100 || S.near <= 0 || S.worse <= 0 || S.spread_s < 0)
        die("sweep: bad --burst, --near, --base-worse or --spread");
    S.budget_s = S.budget_s > 0 ? S.budget_s : S.quick ? 40 : 540;
    S.spread_s = spread_given ? S.spread_s : S.quick ? 0 : 15;
    for (size_t o = 0; !ops_given && o < N_OPS; o++)
        S.op_on[o] = (ops[o].flags & F_SWEEP) != 0;
    if (!S.sizes_given)
        add_grid(!S.quick);
    qsort(S.sizes, (size_t)S.nsizes, sizeof(S.sizes[0]), cmp_size);
    if (S.nlevels == 0) {
#if defined(__x86_64__)
        static const char *const def[] = { "auto", "avx2", "avx512vl", "avx512-noifma", "avx512" };
#elif defined(__aarch64__)
        static const char *const def[] = { "auto", "neon" };
#else
        static const char *const def[] = { "auto" };
#endif
        for (size_t i = 0; i < sizeof(def) / sizeof(def[0]); i++)
            S.levels[S.nlevels++] = def[i];
    }
    if (S.png == NULL) {
        const char *csv = S.report ? S.report : S.csv;
        size_t n = strlen(csv) - (strlen(csv) > 4 && !strcmp(csv + strlen(csv) - 4, ".csv") ? 4 : 0);
        char *png = malloc(n + 5);

        if (png == NULL)
            die("out of memory");
        snprintf(png, n + 5, "%.*s.png", (int)n, csv);
        S.png = png;
    }
}

/* ------------------------------------------------------------------ */
/* One level, in this process                                          */

/* Sizes of one operation: the grid within the operation's range. */
static int op_sizes(const opdef *op, size_t *out)
{
    static const size_t hp[] = { 5, 16, 64 }, quic[] = { 1200, 1350, 1500 };
    int n = 0, hp_grid = op->kind == K_HP && !S.sizes_given; /* 5 B is QUIC's */

    for (int i = 0; hp_grid && i < 3; i++)
        out[n++] = hp[i];
    for (int i = 0; !hp_grid && i < S.nsizes; i++) {
        size_t v = S.sizes[i];

        if (!(op->kind == K_TLS && v > TLS_MAX_RECORD) && !(op->kind == K_HP && v > 64)
            && !(op->arg > 0 && op->kind == K_SEAL && v <= (size_t)op->arg)
            && !(op->flags & F_QUIC && (v < 64 || v > 1500)))
            out[n++] = v;
    }
    for (int i = 0; op->flags & F_QUIC && !S.sizes_given && i < 3; i++) {
        int k = n; /* the common QUIC packet sizes, in order */

        while (k > 0 && out[k - 1] > quic[i])
            k--;
        if (k == 0 || out[k - 1] != quic[i]) {
            memmove(out + k + 1, out + k, (size_t)(n - k) * sizeof(*out));
            out[k] = quic[i];
            n++;
        }
    }
    return n;
}

/* Who chapoly is compared with: the default provider; for XChaCha libsodium, else BoringSSL. */
static int baseline_of(const opdef *op)
{
    return !(op->flags & F_X) ? IM_DEFAULT
           : g_have_sodium    ? IM_SODIUM
           : g_have_boring    ? IM_BORING
                              : -1;
}

static int build_sweep_cells(cell *cells, bufset *b)
{
    size_t sizes[MAX_SIZES + 8];
    int ncells = 0;

    for (size_t o = 0; o < N_OPS; o++) {
        const opdef *op = &ops[o];
        int bl = baseline_of(op), plain = op->arg == 0 && !(op->flags & ~(F_MAIN | F_SWEEP));
        job *jobs[IM_N] = { 0 };

        if (!S.op_on[o])
            continue;
        jobs[IM_CHAPOLY] = job_new(op, IM_CHAPOLY, b);
        if (bl >= 0)
            jobs[bl] = job_new(op, bl, b);
        if (plain && (op->kind == K_SEAL || op->kind == K_OPEN || op->kind == K_CHACHA
                      || op->kind == K_HP || op->kind == K_POLY))
            jobs[IM_FLOOR] = job_new(op, IM_FLOOR, b);
        if (plain && op->kind == K_SEAL && bl != IM_BORING)
            jobs[IM_BORING] = job_new(op, IM_BORING, b);
        if (cfg.base)
            jobs[IM_BASE] = job_new(op, IM_BASE, b);
        job *prep = op->kind == K_OPEN ? seal_job_for(op, b) : NULL;
        if (jobs[IM_CHAPOLY] == NULL || bl < 0 || jobs[bl] == NULL
            || (op->kind == K_OPEN && prep == NULL)) {
            printf("  (skipping %s: %s)\n", op->name, jobs[IM_CHAPOLY] == NULL
                   ? "chapoly does not offer it here" : "nothing to compare it with");
            continue;
        }
        if (op->kind == K_TLS && tls_proof[op->arg == TLS1_3_VERSION] == 0) {
            printf("  (skipping %s: its records did not go through chapoly)\n", op->name);
            continue;
        }
        if (cfg.base && (jobs[IM_BASE] == NULL
                         || (op->kind == K_TLS && tls_proof_base[op->arg == TLS1_3_VERSION] == 0))) {
            printf("  (%s: no base column: the base does not offer it or its records did not go"
                   " through it)\n", op->name);
            jobs[IM_BASE] = NULL;
        }
        for (int s = 0, k = op_sizes(op, sizes); s < k; s++) {
            cell *c = &cells[ncells++];

            *c = (cell){ .op = op, .size = sizes[s], .prep = prep };
            memcpy(c->jobs, jobs, sizeof(jobs));
            if (sizes[s] > FLOOR_MAX)
                c->jobs[IM_FLOOR] = NULL;
            if (sizes[s] != 16 && sizes[s] != 64 && sizes[s] != 256 && bl != IM_BORING)
                c->jobs[IM_BORING] = NULL;
        }
    }
    return ncells;
}

static int count_samples(const cell *cells, int ncells)
{
    int n = 0;

    for (int ci = 0; ci < ncells; ci++)
        for (int im = 0; im < IM_N; im++)
            n += cells[ci].jobs[im] != NULL && !cells[ci].broken[im];
    return n;
}

static int g_shortened;

/*
 * reps repetitions of every cell; with a deadline (ns, 0: none) samples
 * shorten to meet it (the messages per burst: per-message times stay
 * comparable); with a span (ns), repetition r starts no earlier than
 * r / (reps - 1) of it after the first, so no stretch of seconds in which
 * the host runs slower decides a cell.
 */
static void run_pass(cell *cells, int ncells, bufset *b, int reps, double deadline, double span)
{
    double t0 = now_ns(), busy = 0;

    for (int r = 0; r < reps; r++) {
        for (double now = now_ns(); span > 0 && r > 0 && now < t0 + span * r / (reps - 1);
             now = now_ns()) {
            double w = t0 + span * r / (reps - 1) - now;
            struct timespec ts = { (time_t)(w / 1e9), (long)fmod(w, 1e9) };

            nanosleep(&ts, NULL);
        }
        if (isatty(2))
            fprintf(stderr, "\r  repetition %d of %d ", r + 1, reps);
        double tr = now_ns();
        run_repetition(cells, ncells, b, r);
        double now = now_ns(), need = (busy += now - tr) / (r + 1) * (reps - r - 1);
        if (deadline > 0 && r + 1 < reps && need > deadline - now && g_burst_ns > 0.1e6) {
            double f = fmax(fmax((deadline - now) / need, 0.25), 0.1e6 / g_burst_ns);

            for (int ci = 0; ci < ncells; ci++)
                for (int im = 0; im < IM_N; im++)
                    cells[ci].iters[im] = (uint64_t)((double)cells[ci].iters[im] * f) + 1;
            g_burst_ns *= f;
            g_shortened = 1;
        }
    }
    if (isatty(2))
        fprintf(stderr, "\r%40s\r", "");
}

static void csv_num(FILE *f, double v, int prec)
{
    if (isnan(v))
        fputc(',', f);
    else
        fprintf(f, ",%.*f", prec, v);
}

static void write_rows(const char *level, const char *limit, cell *cells, int ncells,
                       const int *re, const double *first)
{
    FILE *f = fopen(S.csv, "a");

    if (f == NULL)
        die("sweep: cannot append to %s", S.csv);
    for (int ci = 0; ci < ncells; ci++) {
        const cell *c = &cells[ci];
        int bl = baseline_of(c->op), n = re[ci] ? S.rereps : S.reps;
        char check[300] = "";
        double lo = INFINITY, hi = 0, ratio = rep_stat(c, bl, IM_CHAPOLY, n, 0);

        for (int im = 0; im < IM_N; im++)
            if (c->jobs[im] && c->broken[im])
                snprintf(check + strlen(check), sizeof(check) - strlen(check), "%s%s: %s",
                         check[0] ? "; " : "", impl_name[im], c->why[im]);
        for (int r = 0; r < n && !isnan(ratio); r++) {
            lo = fmin(lo, c->ns[bl][r] / c->ns[IM_CHAPOLY][r]);
            hi = fmax(hi, c->ns[bl][r] / c->ns[IM_CHAPOLY][r]);
        }
        fprintf(f, "%s,%s,%s,%s,%zu,%s,%s", level, g_kernel, limit, c->op->name, c->size,
                impl_name[bl], check[0] ? check : "ok");
        csv_num(f, med_ns(c, IM_CHAPOLY, n), 2);
        csv_num(f, med_ns(c, bl, n), 2);
        csv_num(f, ratio, 4);
        fprintf(f, ",%d", n);
        csv_num(f, (hi - lo) / ratio, 4);
        fprintf(f, ",%d", re[ci]);
        csv_num(f, first[ci], 4);
        csv_num(f, med_ns(c, IM_FLOOR, n), 2);
        csv_num(f, rep_stat(c, IM_CHAPOLY, IM_FLOOR, n, 1), 2);
        csv_num(f, rep_stat(c, bl, IM_FLOOR, n, 1), 2);
        csv_num(f, bl == IM_BORING ? NAN : med_ns(c, IM_BORING, n), 2);
        csv_num(f, med_ns(c, IM_BASE, n), 2);
        csv_num(f, rep_stat(c, IM_BASE, IM_CHAPOLY, n, 0), 4);
        fprintf(f, ",%d,%d\n", placement_bytes(), heap_shift_bytes());
    }
    fclose(f);
}

/*
 * Burst length from the budget: each sample of the first pass costs reps x
 * (BURSTS + warm-up) bursts and CALIB_BURSTS for its check and calibration,
 * the re-measure reserve rereps x (4 BURSTS + warm-up) for RESERVE_FRAC of
 * the samples; 15 % more for bursts dropped as preempted.
 */
static double plan_burst_ns(int samples, double budget_s, double *first_share)
{
    double first = samples * (S.reps * (BURSTS + 1.0 / WARM_DIV) + CALIB_BURSTS);
    double units = first + RESERVE_FRAC * samples * S.rereps * (4 * BURSTS + 1.0 / WARM_DIV);
    double ns = budget_s * 1e9 / (units * 1.15);

    *first_share = first / units;
    return S.burst_ms > 0 ? S.burst_ms * 1e6 : fmin(fmax(ns, 0.1e6), 2e6);
}

static int sweep_level(const char *level)
{
    double t0 = now_ns(), share, load[3] = { 0 };
    const char *cap = getenv("OPENSSL_ia32cap");
    char limit[96];
    size_t sizes[MAX_SIZES + 8], max = 64;
    int ncap = 0;

    snprintf(limit, sizeof(limit), "%s%s", cap ? "OPENSSL_ia32cap=" : "none", cap ? cap : "");
    shift_heap(); /* before the libraries and contexts allocate */
    init_inputs();
    load_comparison_libraries();
    prove_tls_routing();
    open_bench_libctx();
    if (strcmp(level, "auto") != 0 && strcmp(level, g_kernel) != 0) {
        printf("\n== level %s: not on this CPU (chapoly runs %s): skipped\n", level, g_kernel);
        bench_cleanup();
        return EXIT_LEVEL_ABSENT;
    }
    clock_warmup();
    probe_ghz();
    printf("\n== level %s: chapoly kernel %s; default provider %s\n", level, g_kernel,
           cap ? limit : "unlimited");
    if (!S.brief) { /* the first level said it, and the same program runs every level */
        print_setup(NULL);
        printf("  baselines  default provider; xseal/xopen: %s\n",
               g_have_sodium ? "libsodium" : g_have_boring ? "BoringSSL (no libsodium)" : "none");
    }
    for (size_t o = 0; o < N_OPS; o++) {
        int k = S.op_on[o] ? op_sizes(&ops[o], sizes) : 0;

        ncap += k;
        max = k > 0 && sizes[k - 1] > max ? sizes[k - 1] : max;
    }
    bufset *b = bufset_new(S.op_on[op_named("pipeline") - ops] ? (max + TAG_LEN) * (size_t)cfg.pipes
                                                                 : max);
    cell *cells = calloc((size_t)ncap + 1, sizeof(cell));
    double *first = calloc((size_t)ncap + 1, sizeof(double));
    int *re = calloc((size_t)ncap + 1, sizeof(int)), nre = 0, below = 0, worse = 0, nbroken = 0;
    if (cells == NULL || first == NULL || re == NULL)
        die("out of memory");
    int ncells = build_sweep_cells(cells, b);

    /* the plan; the re-measure's spread comes out of the budget (at most half) */
    double tplan = now_ns(), avail = S.budget_s - (tplan - t0) / 1e9;
    double spread_s = fmin(S.spread_s, avail / 2);
    avail -= spread_s;
    g_burst_ns = plan_burst_ns(count_samples(cells, ncells), avail, &share);
    g_bursts = BURSTS;
    g_warm_div = WARM_DIV;
    check_and_calibrate(cells, ncells, b);
    printf("  plan       %d cells, %d samples: %d repetitions x %d bursts of %.2f ms (budget %.0f s;"
           " start %.1f s, checks and calibration %.1f s)\n", ncells, count_samples(cells, ncells),
           S.reps, BURSTS, g_burst_ns / 1e6, S.budget_s, (tplan - t0) / 1e9,
           (now_ns() - tplan) / 1e9);
    print_layout();
    fflush(stdout);

    double t1 = now_ns();
    uint64_t run0 = g_bursts_run, drop0 = g_bursts_dropped;
    run_pass(cells, ncells, b, S.reps, S.burst_ms > 0 ? 0 : tplan + share * avail * 1e9, 0);
    for (int ci = 0; ci < ncells; ci++) {
        const cell *c = &cells[ci];

        first[ci] = rep_stat(c, baseline_of(c->op), IM_CHAPOLY, S.reps, 0);
        /* NAN compares false: a cell without a ratio is not measured again */
        re[ci] = first[ci] < S.near
                 || rep_stat(c, IM_BASE, IM_CHAPOLY, S.reps, 0) < S.worse + S.near - 1;
        nre += re[ci];
    }
    printf("  pass 1     %.0f s%s; %d cells to re-measure (below %.2f%s)\n", (now_ns() - t1) / 1e9,
           g_shortened ? ", bursts shortened to keep to the budget" : "", nre, S.near,
           cfg.base ? ", or near worse than the base" : "");
    g_shortened = 0;

    if (nre > 0) { /* the cells near or below 1.0 again: more repetitions, longer samples */
        cell *again = calloc((size_t)nre, sizeof(cell));
        int k = 0, mult = 4;

        if (again == NULL)
            die("out of memory");
        for (int ci = 0; ci < ncells; ci++)
            if (re[ci])
                again[k++] = cells[ci];
        double left = S.budget_s - (now_ns() - t0) / 1e9;
        double per = count_samples(again, nre) * S.rereps * g_burst_ns / 1e9;
        while (mult > 1 && per * (mult * BURSTS + 1.0 / WARM_DIV) > left)
            mult /= 2;
        g_bursts = mult * BURSTS;
        double t2 = now_ns();
        run_pass(again, nre, b, S.rereps, S.burst_ms > 0 ? 0 : t0 + S.budget_s * 1e9, spread_s * 1e9);
        for (int ci = 0, k2 = 0; ci < ncells; ci++)
            if (re[ci]) {
                cells[ci] = again[k2++];
                below += rep_stat(&cells[ci], baseline_of(cells[ci].op), IM_CHAPOLY, S.rereps, 0) < 1.0;
                worse += rep_stat(&cells[ci], IM_BASE, IM_CHAPOLY, S.rereps, 0) < S.worse;
            }
        printf("  pass 2     %.0f s: %d cells again, %d repetitions x %d bursts of %.2f ms%s over"
               " %.0f s or more; %d below 1.00", (now_ns() - t2) / 1e9, nre, S.rereps, g_bursts,
               g_burst_ns / 1e6, g_shortened ? " (shortened)" : "", spread_s, below);
        if (cfg.base)
            printf(", %d below %.2f vs base", worse, S.worse);
        printf("\n");
        free(again);
    }
    write_rows(level, limit, cells, ncells, re, first);
    for (int ci = 0; ci < ncells; ci++)
        for (int im = 0; im < IM_N; im++)
            nbroken += cells[ci].jobs[im] != NULL && cells[ci].broken[im];
    getloadavg(load, 3);
    uint64_t run = g_bursts_run - run0, drop = g_bursts_dropped - drop0;
    printf("  level      %.0f s; bursts dropped as preempted %.1f%%; load avg %.2f at end%s\n",
           (now_ns() - t0) / 1e9, run ? 100.0 * (double)drop / (double)run : 0.0, load[0],
           nbroken ? "; SOME OUTPUT CHECKS FAILED" : "");
    fflush(stdout);
    free(cells);
    free(first);
    free(re);
    bench_cleanup();
    return nbroken ? 2 : 0;
}

/* ------------------------------------------------------------------ */
/* The parent: one child process per level                             */

static int run_child(int argc, char **argv, const char *level, double budget_s, int brief)
{
    char budget[32], **av = calloc((size_t)argc + 8, sizeof(char *));
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
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        die("sweep: fork failed: %s", strerror(errno));
    if (pid == 0) {
        set_level_env(level, 1);
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

int sweep_main(int argc, char **argv)
{
    double t0 = now_ns(), load[3] = { 0 };
    const char *k = getenv("CHAPOLY_KERNEL");
    const char *env_level = k == NULL || *k == '\0' || strcmp(k, "best") == 0 ? "auto" : k;
    char exe[PATH_MAX], cpu[320];
    int worst = 0, ran = 0;

    parse_args(argc, argv);
    if (S.report)
        return sweep_report(S.report, S.png, S.worse);
    if (S.child)
        return sweep_level(S.child);
    ssize_t n = S.this_process ? 0 : readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    if (strncmp(basename(exe), "ld-", 3) == 0) /* /proc/self/exe is a loader: no children */
        die("sweep: started through a loader (%s): run each level with --this-process and its"
            " environment (bench/README.md)", exe);
    FILE *f = fopen(S.csv, "w");
    if (f == NULL || fprintf(f, "%s\n", CSV_HEADER) < 0 || fclose(f) != 0)
        die("sweep: cannot write %s: %s", S.csv, strerror(errno));
    cpu_model(cpu, sizeof(cpu));
    getloadavg(load, 3);
    printf("bench_evp sweep: chapoly vs OpenSSL's default provider, operation x size x level\n"
           "  cpu        %s\n  openssl    %s\n  mode       %s: %d sizes (%zu..%zu B), budget %.0f s\n"
           "  ops       ", cpu, OpenSSL_version(OPENSSL_VERSION),
           S.sizes_given ? "--sizes" : S.quick ? "quick" : "full", S.nsizes, S.sizes[0],
           S.sizes[S.nsizes - 1], S.budget_s);
    for (size_t o = 0; o < N_OPS; o++)
        if (S.op_on[o])
            printf(" %s", ops[o].name);
    printf("\n  levels    ");
    for (int i = 0; i < (S.this_process ? 1 : S.nlevels); i++)
        printf(" %s", S.this_process ? env_level : S.levels[i]);
    printf("%s\n  load avg   %.2f %.2f %.2f at start (only the interleaved in-run ratios mean"
           " anything)\n  csv        %s\n", S.this_process ? " (this process)" : "", load[0],
           load[1], load[2], S.csv);
    if (S.this_process) {
        worst = sweep_level(env_level);
        ran = worst != EXIT_LEVEL_ABSENT;
    }
    for (int i = 0; !S.this_process && i < S.nlevels; i++) {
        double left = S.budget_s - (now_ns() - t0) / 1e9;
        /* argv - 1: main's argv, whose [1] is "sweep" */
        int rc = run_child(argc + 1, argv - 1, S.levels[i], fmax(left / (S.nlevels - i), 1), ran > 0);

        if (rc == EXIT_LEVEL_ABSENT)
            continue;
        ran++;
        if (rc != 0 && rc != 2)
            die("sweep: level %s failed (exit status %d)", S.levels[i], rc);
        worst = rc > worst ? rc : worst;
    }
    if (ran == 0)
        die("sweep: no level could run");
    int rc = sweep_report(S.csv, S.png, S.worse);
    printf("total %.0f s\n", (now_ns() - t0) / 1e9);
    return worst ? worst : rc;
}
