/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp sweep: one level, measured in this process (the parent started
 * it with the level's environment). bench_evp's machinery does the work:
 * jobs, the output check of every implementation before any timing,
 * calibration, samples of bursts with the preemption filter, repetitions
 * outermost with the implementations of a cell back to back in rotating
 * order. Here: which cells (operation x size, and which implementations in
 * each), the burst length the time budget allows, the second pass over the
 * cells whose ratio came out near or below 1.0, and the CSV rows.
 *
 * Implementations in a cell: chapoly and its baseline (the default provider;
 * for xseal/xopen, which the default lacks, libsodium), plus the floor
 * (bench_floor.c) for seal, open, chacha20, quic-hp and poly1305 up to
 * FLOOR_MAX bytes, plus BoringSSL's one-shot seal at 16, 64 and 256 bytes,
 * plus, with --base, the base build: chapoly's loops in the base's context.
 */
#include "bench_sweep.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define EXIT_LEVEL_ABSENT 3
#define FLOOR_MAX 1024
#define BURSTS 2          /* bursts per sample, first pass */
#define WARM_DIV 4        /* a sample's warm-up: a quarter of a burst */
#define RESERVE_FRAC 0.10 /* share of cells the plan expects to re-measure */
#define CALIB_BURSTS 4.0  /* output check + calibration of a sample, in bursts (measured) */

/* ------------------------------------------------------------------ */
/* Cells                                                               */

/* Sizes of one operation: the grid within the operation's range. */
static int op_sizes(const opdef *op, size_t *out)
{
    static const size_t hp_sizes[] = { 5, 16, 64 };
    static const size_t quic_extra[] = { 1200, 1350, 1500 };
    int n = 0;

    if (op->kind == K_HP && !scfg.sizes_given) {
        for (size_t i = 0; i < 3; i++)
            out[n++] = hp_sizes[i];
        return n;
    }
    for (int i = 0; i < scfg.nsizes; i++) {
        size_t v = scfg.sizes[i];

        if ((op->kind == K_TLS && v > TLS_MAX_RECORD) || (op->kind == K_HP && v > 64)
            || (op->kind == K_STREAM && op->x > 0 && v <= (size_t)op->x)
            || (op->aad == QUIC_AAD_LEN && (v < 64 || v > 1500)))
            continue;
        out[n++] = v;
    }
    if (op->aad == QUIC_AAD_LEN && !scfg.sizes_given) /* the common QUIC packet sizes */
        for (size_t i = 0; i < 3; i++) {
            int k = n;
            while (k > 0 && out[k - 1] > quic_extra[i])
                k--;
            if (k > 0 && out[k - 1] == quic_extra[i])
                continue;
            memmove(out + k + 1, out + k, (size_t)(n - k) * sizeof(*out));
            out[k] = quic_extra[i];
            n++;
        }
    return n;
}

/* Who chapoly is compared with: the default provider; for XChaCha libsodium (else BoringSSL). */
static int baseline_of(const opdef *op)
{
    if (!op->x || op->kind == K_TLS || op->kind == K_STREAM)
        return IM_DEFAULT;
    return g_have_sodium ? IM_SODIUM : g_have_boring ? IM_BORING : -1;
}

static int floor_op(const opdef *op)
{
    return (op->kind == K_SEAL || op->kind == K_OPEN) ? !op->x && op->aad == 0
           : op->kind == K_CHACHA || op->kind == K_HP || op->kind == K_POLY;
}

static int count_cells(size_t *maxsize)
{
    size_t sizes[SWEEP_MAX_SIZES + 8];
    int n = 0;

    *maxsize = 0;
    for (size_t o = 0; o < N_OPS; o++) {
        if (!scfg.op_on[o])
            continue;
        int k = op_sizes(&ops[o], sizes);
        n += k;
        if (k > 0 && sizes[k - 1] > *maxsize)
            *maxsize = sizes[k - 1];
    }
    return n;
}

/* In a recheck process: is op:size one of the cells to measure again? */
static int rechecked(const char *op, size_t size)
{
    char key[64];
    size_t n = strlen(scfg.recheck), k;

    k = (size_t)snprintf(key, sizeof(key), "%s:%zu", op, size);
    for (const char *p = scfg.recheck; (p = strstr(p, key)) != NULL; p += k)
        if ((p == scfg.recheck || p[-1] == ',') && (p + k == scfg.recheck + n || p[k] == ','))
            return 1;
    return 0;
}

static int build_sweep_cells(cell *cells, bufset *b)
{
    size_t sizes[SWEEP_MAX_SIZES + 8];
    int ncells = 0;

    for (size_t o = 0; o < N_OPS; o++) {
        const opdef *op = &ops[o];
        if (!scfg.op_on[o])
            continue;
        int base = baseline_of(op);
        job *ch = job_new(op, IM_CHAPOLY, b);
        job *bj = base >= 0 ? job_new(op, base, b) : NULL;
        job *fl = floor_op(op) ? job_new(op, IM_FLOOR, b) : NULL;
        job *bo = op->kind == K_SEAL && !op->x && op->aad == 0 ? job_new(op, IM_BORING, b) : NULL;
        job *prep = op->kind == K_OPEN ? seal_job_for(op, b) : NULL;
        job *ba = cfg.base ? job_new(op, IM_BASE, b) : NULL;

        if (ch == NULL || bj == NULL || (op->kind == K_OPEN && prep == NULL)) {
            printf("  (skipping %s: %s)\n", op->name,
                   ch == NULL ? "chapoly does not offer it here" : "nothing to compare it with");
            continue;
        }
        if (op->kind == K_TLS && tls_proof[op->x == TLS1_3_VERSION] == 0) {
            printf("  (skipping %s: its records were not routed through chapoly)\n", op->name);
            continue;
        }
        if (ba != NULL && op->kind == K_TLS && tls_proof_base[op->x == TLS1_3_VERSION] == 0) {
            printf("  (%s: the base's records were not routed through it: no base column)\n",
                   op->name);
            ba = NULL;
        }
        if (cfg.base && ba == NULL)
            printf("  (%s: the base does not offer it: no base column)\n", op->name);
        int k = op_sizes(op, sizes);
        for (int s = 0; s < k; s++) {
            if (scfg.recheck != NULL && !rechecked(op->name, sizes[s]))
                continue;
            cell *c = &cells[ncells++];

            memset(c, 0, sizeof(*c));
            c->op = op;
            c->size = sizes[s];
            c->prep = prep;
            c->jobs[IM_CHAPOLY] = ch;
            c->jobs[base] = bj;
            c->jobs[IM_BASE] = ba;
            if (sizes[s] <= FLOOR_MAX)
                c->jobs[IM_FLOOR] = fl;
            if (sizes[s] == 16 || sizes[s] == 64 || sizes[s] == 256)
                c->jobs[IM_BORING] = bo;
        }
    }
    return ncells;
}

static int nsamples(const cell *cells, int ncells)
{
    int n = 0;

    for (int ci = 0; ci < ncells; ci++)
        for (int im = 0; im < IM_N; im++)
            n += cells[ci].jobs[im] != NULL && !cells[ci].broken[im];
    return n;
}

/* ------------------------------------------------------------------ */
/* Outcomes                                                            */

typedef struct outcome {
    double ch, base, ratio, spread;  /* medians; ratio = median of per-rep base/chapoly */
    double floor, ch_floor, base_floor, boring;
    double ab, ab_ratio;             /* --base: its median, median of per-rep base/chapoly */
    int reps;
} outcome;

/* Median over repetitions of ns[a] - ns[b] (NAN when either is missing). */
static double rep_diff(const cell *c, int a, int b, int reps)
{
    double d[MAX_REPS];

    if (c->jobs[a] == NULL || c->broken[a] || c->jobs[b] == NULL || c->broken[b])
        return NAN;
    for (int i = 0; i < reps; i++)
        d[i] = c->ns[a][i] - c->ns[b][i];
    return median(d, reps);
}

static double med_or_nan(const cell *c, int im, int reps)
{
    return c->jobs[im] == NULL || c->broken[im] ? NAN : median(c->ns[im], reps);
}

/*
 * Median over repetitions of ns[other] / ns[chapoly] (NAN when either is
 * missing); *spread = (max - min) / median of those ratios.
 */
static double ratio_to_chapoly(const cell *c, int other, int reps, double *spread)
{
    double q[MAX_REPS], lo = INFINITY, hi = 0, m;

    *spread = NAN;
    if (isnan(med_or_nan(c, IM_CHAPOLY, reps)) || isnan(med_or_nan(c, other, reps)))
        return NAN;
    for (int i = 0; i < reps; i++) {
        q[i] = c->ns[other][i] / c->ns[IM_CHAPOLY][i];
        lo = q[i] < lo ? q[i] : lo;
        hi = q[i] > hi ? q[i] : hi;
    }
    m = median(q, reps);
    *spread = (hi - lo) / m;
    return m;
}

static outcome outcome_of(const cell *c, int base, int reps)
{
    outcome o = { .reps = reps };
    double unused;

    o.ch = med_or_nan(c, IM_CHAPOLY, reps);
    o.base = med_or_nan(c, base, reps);
    o.ratio = ratio_to_chapoly(c, base, reps, &o.spread);
    o.ab = med_or_nan(c, IM_BASE, reps);
    o.ab_ratio = ratio_to_chapoly(c, IM_BASE, reps, &unused);
    o.floor = med_or_nan(c, IM_FLOOR, reps);
    o.ch_floor = rep_diff(c, IM_CHAPOLY, IM_FLOOR, reps);
    o.base_floor = rep_diff(c, base, IM_FLOOR, reps);
    o.boring = med_or_nan(c, IM_BORING, reps);
    return o;
}

static int cell_base(const cell *c)
{
    return baseline_of(c->op);
}

/* ------------------------------------------------------------------ */
/* Passes                                                              */

static int g_pass_shortened;

static void progress(const char *level, const char *pass, int r, int reps)
{
    if (isatty(2))
        fprintf(stderr, "\r  %s: %s, repetition %d of %d ", level, pass, r + 1, reps);
}

/*
 * Every cell's samples shorter by factor f (the messages per burst): what
 * keeps a pass within its time when other processes take the CPU and many
 * bursts are dropped and run again. Per-message times stay comparable.
 */
static void shorten(cell *cells, int ncells, double f)
{
    for (int ci = 0; ci < ncells; ci++)
        for (int im = 0; im < IM_N; im++) {
            uint64_t it = (uint64_t)((double)cells[ci].iters[im] * f);
            cells[ci].iters[im] = it ? it : 1;
        }
    g_burst_ns *= f;
}

/* Sleep until now_ns() reaches t (ns). */
static void sleep_until(double t)
{
    for (double now = now_ns(); now < t; now = now_ns()) {
        struct timespec ts = { (time_t)((t - now) / 1e9), (long)fmod(t - now, 1e9) };

        nanosleep(&ts, NULL);
    }
}

/*
 * reps repetitions of every cell; with a deadline (ns, 0: none), samples
 * shorten to meet it (judged by the time measuring, not the waits); with a
 * span (ns, 0: none), repetition r starts no earlier than r / (reps - 1) of
 * it after the first.
 */
static void run_pass(cell *cells, int ncells, bufset *b, int reps, double deadline, double span,
                     const char *level, const char *pass)
{
    double t0 = now_ns(), busy = 0;

    cfg.reps = reps;
    for (int r = 0; r < reps; r++) {
        if (span > 0 && r > 0)
            sleep_until(t0 + span * r / (reps - 1));
        progress(level, pass, r, reps);
        double tr = now_ns();
        run_repetition(cells, ncells, b, r);
        double now = now_ns(), need;
        busy += now - tr;
        need = busy / (r + 1) * (reps - r - 1);
        if (deadline > 0 && r + 1 < reps && need > deadline - now && g_burst_ns > 0.1e6) {
            double f = (deadline - now) / need;
            f = f < 0.25 ? 0.25 : f;
            f = g_burst_ns * f < 0.1e6 ? 0.1e6 / g_burst_ns : f;
            shorten(cells, ncells, f);
            g_pass_shortened++;
        }
    }
    if (isatty(2))
        fprintf(stderr, "\r%60s\r", "");
}

/*
 * Burst length from the budget: every sample of the first pass costs reps x
 * (BURSTS + warm-up) bursts, its output check and calibration CALIB_BURSTS,
 * and the re-measure reserve rereps x (4 x BURSTS + warm-up) for
 * RESERVE_FRAC of the samples; 15 % more for bursts dropped as preempted.
 */
static double plan_burst_ns(int samples, double budget_s, double *first_share)
{
    double warm = 1.0 / WARM_DIV;
    double first = samples * (scfg.reps * (BURSTS + warm) + CALIB_BURSTS);
    double units = first + RESERVE_FRAC * samples * scfg.rereps * (4 * BURSTS + warm);
    double ns = budget_s * 1e9 / (units * 1.15);

    *first_share = first / units;

    if (scfg.burst_ms > 0)
        return scfg.burst_ms * 1e6;
    return ns < 0.1e6 ? 0.1e6 : ns > 2e6 ? 2e6 : ns;
}

/* ------------------------------------------------------------------ */
/* Rows                                                                */

static void csv_num(FILE *f, double v, int prec)
{
    if (isnan(v))
        fputc(',', f);
    else
        fprintf(f, ",%.*f", prec, v);
}

static void write_rows(FILE *f, const char *level, const char *limit, cell *cells, int ncells,
                       const outcome *first, const outcome *final, const int *re)
{
    for (int ci = 0; ci < ncells; ci++) {
        const cell *c = &cells[ci];
        char check[400] = "";
        int base = cell_base(c);

        for (int im = 0; im < IM_N; im++)
            if (c->jobs[im] && c->broken[im])
                snprintf(check + strlen(check), sizeof(check) - strlen(check), "%s%s: %s",
                         check[0] ? "; " : "", impl_name[im], c->why[im]);
        fprintf(f, "%s,%s,%s,%s,%zu,%s,%s", level, g_kernel, limit, c->op->name, c->size,
                impl_name[base], check[0] ? check : "ok");
        const outcome *o = &final[ci];
        csv_num(f, o->ch, 2);
        csv_num(f, o->base, 2);
        csv_num(f, o->ratio, 4);
        fprintf(f, ",%d", o->reps);
        csv_num(f, o->spread, 4);
        fprintf(f, ",%d", re[ci]);
        csv_num(f, first[ci].ratio, 4);
        fprintf(f, ",%d", first[ci].reps);
        csv_num(f, o->floor, 2);
        csv_num(f, o->ch_floor, 2);
        csv_num(f, o->base_floor, 2);
        csv_num(f, o->boring, 2);
        csv_num(f, o->ab, 2);
        csv_num(f, o->ab_ratio, 4);
        csv_num(f, first[ci].ab_ratio, 4);
        fprintf(f, ",%d,%d\n", scfg.layout, placement_bytes());
    }
}

/* ------------------------------------------------------------------ */
/* The level                                                           */

static void print_level_header(const char *level, const char *limit)
{
    if (scfg.recheck != NULL)
        printf("\n== level %s again, process %d of %d (a fresh address layout)", level,
               scfg.layout, scfg.layouts);
    else
        printf("\n== level %s", level);
    printf(": chapoly kernel %s; default provider %s", g_kernel,
           strcmp(limit, "none") == 0 ? "unlimited" : limit);
    printf(cfg.base ? "; base kernel %s\n" : "\n", g_base_kernel);
    if (scfg.brief)
        return; /* the first level said it, and the same process image runs every level */
    print_modules(0);
    printf("  floor      %s\n", g_floor_note);
    printf("  baselines  default provider; xseal/xopen: %s\n",
           g_have_sodium ? "libsodium" : g_have_boring ? "BoringSSL (no libsodium)" : "none");
    printf("  boringssl  %s\n", g_boring_note);
    printf("  tls route  %s\n", tls_route_text());
}

/*
 * Cells to measure again: ratio below scfg.near, or (--base) ratio to the
 * base below what counts as worse plus the same margin (near - 1).
 */
static int pick_remeasure(const outcome *first, int ncells, int *re, int *nbase)
{
    int n = 0;

    *nbase = 0;
    for (int ci = 0; ci < ncells; ci++) {
        int ab = first[ci].ab_ratio < scfg.base_worse + (scfg.near - 1); /* NAN: false */

        re[ci] = first[ci].ratio < scfg.near || ab;
        n += re[ci];
        *nbase += ab;
    }
    return n;
}

/* (cell, implementation) pairs whose output check or a timed call failed. */
static int count_broken(const cell *cells, int ncells)
{
    int n = 0;

    for (int ci = 0; ci < ncells; ci++)
        for (int im = 0; im < IM_N; im++)
            n += cells[ci].jobs[im] != NULL && cells[ci].broken[im];
    return n;
}

int sweep_level(const char *level, double budget_s)
{
    double t0 = now_ns(), load[3] = { 0 };
    const char *ia32 = getenv("OPENSSL_ia32cap");
    char limit[96];

    snprintf(limit, sizeof(limit), "%s%s", ia32 ? "OPENSSL_ia32cap=" : "none", ia32 ? ia32 : "");
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
    load_floor();
    clock_warmup();
    probe_ghz();
    print_level_header(level, limit);

    size_t maxsize;
    int ncap = count_cells(&maxsize);
    bufset *b = bufset_new(maxsize ? maxsize : 64);
    cell *cells = calloc((size_t)ncap + 1, sizeof(cell));
    outcome *first = calloc((size_t)ncap + 1, sizeof(outcome));
    outcome *final = calloc((size_t)ncap + 1, sizeof(outcome));
    int *re = calloc((size_t)ncap + 1, sizeof(int));
    if (cells == NULL || first == NULL || final == NULL || re == NULL)
        die("out of memory");
    int ncells = build_sweep_cells(cells, b);

    /* the plan, then the output check and calibration with its burst length */
    /* the re-measure's spread comes out of the budget (at most half of it) */
    double tplan = now_ns(), first_share, avail = budget_s - (tplan - t0) / 1e9;
    double spread_s = scfg.spread_s < avail / 2 ? scfg.spread_s : avail / 2;
    avail -= spread_s;
    g_burst_ns = plan_burst_ns(nsamples(cells, ncells), avail, &first_share);
    g_bursts = BURSTS;
    g_warm_div = WARM_DIV;
    check_and_calibrate(cells, ncells, b);
    int samples = nsamples(cells, ncells);
    printf("  plan       %d cells, %d samples: %d repetitions x %d bursts of %.2f ms"
           " (budget %.0f s; start %.1f s, checks and calibration %.1f s)\n", ncells, samples,
           scfg.reps, BURSTS, g_burst_ns / 1e6, budget_s, (tplan - t0) / 1e9,
           (now_ns() - tplan) / 1e9);
    print_layout();
    fflush(stdout);

    /* first pass: its share of the budget, bursts shortened if it runs late */
    double t1 = now_ns();
    double deadline = scfg.burst_ms > 0 ? 0 : tplan + first_share * avail * 1e9;
    uint64_t run0 = g_bursts_run, drop0 = g_bursts_dropped;
    run_pass(cells, ncells, b, scfg.reps, deadline, 0, level, "first pass");
    for (int ci = 0; ci < ncells; ci++)
        first[ci] = final[ci] = outcome_of(&cells[ci], cell_base(&cells[ci]), scfg.reps);
    int nre_base, nre = pick_remeasure(first, ncells, re, &nre_base);
    if (scfg.recheck != NULL)
        printf("  pass 1     %.0f s%s; every cell measured again", (now_ns() - t1) / 1e9,
               g_pass_shortened ? ", bursts shortened to keep to the budget" : "");
    else
        printf("  pass 1     %.0f s%s; %d cells below %.2f", (now_ns() - t1) / 1e9,
               g_pass_shortened ? ", bursts shortened to keep to the budget" : "", nre,
               scfg.near);
    if (cfg.base)
        printf(" (%d of them: below %.2f vs base)", nre_base, scfg.base_worse + scfg.near - 1);
    printf("\n");
    g_pass_shortened = 0;

    /* the cells near or below 1.0 again: more repetitions, longer samples, interleaved */
    if (nre > 0) {
        cell *again = calloc((size_t)nre, sizeof(cell));
        int k = 0, mult = 4;

        if (again == NULL)
            die("out of memory");
        for (int ci = 0; ci < ncells; ci++)
            if (re[ci])
                again[k++] = cells[ci];
        double left = budget_s - (now_ns() - t0) / 1e9;
        double per = nsamples(again, nre) * scfg.rereps * g_burst_ns / 1e9;
        while (mult > 1 && per * (mult * BURSTS + 1.0 / WARM_DIV) > left)
            mult /= 2;
        g_bursts = mult * BURSTS;
        double t2 = now_ns();
        run_pass(again, nre, b, scfg.rereps, scfg.burst_ms > 0 ? 0 : t0 + budget_s * 1e9,
                 spread_s * 1e9, level, "re-measuring");
        k = 0;
        for (int ci = 0; ci < ncells; ci++)
            if (re[ci]) { /* the second pass counts; a call that failed in it too */
                final[ci] = outcome_of(&again[k], cell_base(&cells[ci]), scfg.rereps);
                memcpy(cells[ci].broken, again[k].broken, sizeof(cells[ci].broken));
                memcpy(cells[ci].why, again[k].why, sizeof(cells[ci].why));
                k++;
            }
        int below = 0, worse = 0;
        for (int ci = 0; ci < ncells; ci++) {
            below += re[ci] && final[ci].ratio < 1.0;
            worse += re[ci] && final[ci].ab_ratio < scfg.base_worse;
        }
        printf("  pass 2     %.0f s: %d cells again, %d repetitions x %d bursts of %.2f ms%s"
               " over %.0f s or more; %d below 1.00", (now_ns() - t2) / 1e9, nre, scfg.rereps,
               g_bursts, g_burst_ns / 1e6, g_pass_shortened ? " (shortened)" : "", spread_s,
               below);
        if (cfg.base)
            printf(", %d below %.2f vs base", worse, scfg.base_worse);
        printf("\n");
        free(again);
    }

    FILE *f = fopen(scfg.csv, "a");
    if (f == NULL)
        die("sweep: cannot append to %s", scfg.csv);
    write_rows(f, level, limit, cells, ncells, first, final, re);
    fclose(f);

    int nbroken = count_broken(cells, ncells);
    getloadavg(load, 3);
    uint64_t run = g_bursts_run - run0, drop = g_bursts_dropped - drop0;
    printf("  level      %.0f s; bursts dropped as preempted %.1f%%; load avg %.2f at end%s\n",
           (now_ns() - t0) / 1e9, run ? 100.0 * (double)drop / (double)run : 0.0, load[0],
           nbroken ? "; SOME OUTPUT CHECKS FAILED" : "");
    fflush(stdout);
    free(cells);
    free(first);
    free(final);
    free(re);
    bench_cleanup();
    return nbroken ? 2 : 0;
}
