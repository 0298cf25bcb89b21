/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: the run. Clocks (wall time, the thread's CPU time, core clocks
 * from a dependent imul chain); samples made of short bursts, a burst the
 * thread did not have the CPU for dropped and run again; cells (operation x
 * size) with one job per implementation, every output checked against a
 * reference before any timing; repetitions outermost, the implementations
 * of a cell back to back in a rotating order; the tables and the CSV.
 */
#include "bench_evp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>

/* ------------------------------------------------------------------ */
/* Clocks                                                              */

static double clock_ns(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double median(const double *v, int n)
{
    double t[MAX_REPS];

    if (n <= 0 || n > MAX_REPS)
        return NAN;
    memcpy(t, v, (size_t)n * sizeof(double));
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return n & 1 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

double g_ghz; /* the best probe so far: cycles = ns x g_ghz */

#if defined(__x86_64__) && defined(__GNUC__)
/* A chain of dependent imuls runs at one per 3 core cycles, whatever the TSC says. */
static double imul_ghz(uint64_t loops)
{
    uint64_t x = 3, n = loops;
    double t0 = now_ns();

    __asm__ volatile(".p2align 4\n1:\n\t"
                     "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
                     "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
                     "dec %1\n\tjnz 1b\n"
                     : "+r"(x), "+r"(n)::"cc");
    return 24.0 * (double)loops / (now_ns() - t0);
}

/* Best of a few short probes: an interrupted probe can only read low. */
double probe_ghz(void)
{
    for (int i = 0; i < 5; i++) {
        double g = imul_ghz(250000);
        g_ghz = g > g_ghz ? g : g_ghz;
    }
    return g_ghz;
}

void clock_warmup(void)
{
    for (double t0 = now_ns(); now_ns() - t0 < 50e6;) /* leave any low-power state */
        imul_ghz(100000);
}
#else
double probe_ghz(void)
{
    return 0;
}

void clock_warmup(void)
{
}
#endif

/* "model name (family F model M), N online CPUs" from /proc/cpuinfo. */
void cpu_model(char *out, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512], name[160] = "?";
    int family = -1, model = -1;

    while (f != NULL && fgets(line, sizeof(line), f) && !(line[0] == '\n' && name[0] != '?')) {
        char *p = strchr(line, ':');

        if (p != NULL && strncmp(line, "model name", 10) == 0)
            snprintf(name, sizeof(name), "%.*s", (int)strcspn(p + 2, "\n"), p + 2);
        else if (p != NULL && strncmp(line, "cpu family", 10) == 0)
            family = atoi(p + 1);
        else if (p != NULL && strncmp(line, "model\t", 6) == 0)
            model = atoi(p + 1);
    }
    if (f != NULL)
        fclose(f);
    snprintf(out, len, "%s (family %d model %d), %ld online CPUs", name, family, model,
             sysconf(_SC_NPROCESSORS_ONLN));
}

/* ------------------------------------------------------------------ */
/* Samples                                                             */

#define CLEAN_FRAC 0.98 /* a burst with less of the CPU was preempted */
int g_bursts = 1, g_warm_div = 1;
double g_burst_ns;
uint64_t g_bursts_run, g_bursts_dropped;

/* Bursts of ~2 ms (a quarter of the sample when samples are under 8 ms). */
void plan_bursts(double sample_ms)
{
    double burst_ms = sample_ms >= 8 ? 2 : sample_ms / 4;

    g_burst_ns = burst_ms * 1e6;
    g_bursts = (int)(sample_ms / burst_ms + 0.5);
}

static int job_ok(cell *c, int im, int ok, const char *what)
{
    if (!ok && !c->broken[im]) {
        c->broken[im] = 1;
        snprintf(c->why[im], sizeof(c->why[im]), "%s", what);
        ERR_clear_error();
    }
    return ok;
}

/* Messages per iteration of a job's loop. */
static double msgs(const cell *c)
{
    return c->op->kind == K_PIPE ? cfg.pipes : 1;
}

/* Iterations for a burst of g_burst_ns: the fastest of three runs, the least disturbed. */
static void calibrate(cell *c, int im)
{
    job *j = c->jobs[im];
    uint64_t it = 1;
    double t, best = INFINITY;

    for (int k = 0; k < 3; k++) {
        for (;;) {
            double t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

            if (!job_ok(c, im, j->run(j, c->size, it), "call failed while calibrating"))
                return;
            t = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
            if (k > 0 || t >= g_burst_ns / 4 || it >= (1ULL << 40))
                break;
            it *= t < g_burst_ns / 64 ? 8 : 2;
        }
        best = t < best ? t : best;
    }
    c->iters[im] = (uint64_t)(g_burst_ns * (double)it / best) + 1;
}

/* ns per message: a warm-up, then g_bursts bursts the thread had the CPU for. */
static double sample(cell *c, int im)
{
    job *j = c->jobs[im];
    uint64_t it = c->iters[im];
    double wall = 0, dirty = 0, dirty_frac = -1;
    int clean = 0, tries = 0;

    if (!job_ok(c, im, j->run(j, c->size, it / (uint64_t)g_warm_div + 1), "call failed"))
        return 0;
    while (clean < g_bursts && tries < 4 * g_bursts) {
        double w0 = now_ns(), c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        int ok = j->run(j, c->size, it);
        double cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0, w = now_ns() - w0;

        tries++;
        if (!job_ok(c, im, ok, "call failed while timing"))
            return 0;
        if (cpu / w >= CLEAN_FRAC) {
            wall += w;
            clean++;
        } else if (cpu / w > dirty_frac) { /* kept in case no burst is clean */
            dirty_frac = cpu / w;
            dirty = w;
        }
    }
    g_bursts_run += (uint64_t)tries;
    g_bursts_dropped += (uint64_t)(tries - clean);
    return (clean ? wall / clean : dirty) / ((double)it * msgs(c));
}

double med_ns(const cell *c, int im, int reps)
{
    return c->jobs[im] == NULL || c->broken[im] ? NAN : median(c->ns[im], reps);
}

double rep_stat(const cell *c, int a, int b, int reps, int diff)
{
    double q[MAX_REPS];

    if (isnan(med_ns(c, a, reps)) || isnan(med_ns(c, b, reps)))
        return NAN;
    for (int i = 0; i < reps; i++)
        q[i] = diff ? c->ns[a][i] - c->ns[b][i] : c->ns[a][i] / c->ns[b][i];
    return median(q, reps);
}

/* ------------------------------------------------------------------ */
/* Cells                                                               */

void prepare_ct(cell *c, bufset *b)
{
    if (c->prep == NULL || (b->ct_op == c->op && b->ct_size == c->size))
        return;
    for (unsigned k = 0; k < 2; k++) {
        c->prep->seq = OPEN_SEQ + k;
        if (!c->prep->run(c->prep, c->size, 1))
            die("could not prepare %s ciphertexts with %s", c->op->name, impl_name[c->prep->impl]);
        memcpy(b->ct[k], b->out, c->size + TAG_LEN);
    }
    b->ct_op = c->op;
    b->ct_size = c->size;
}

/* The job that seals the ciphertexts an open cell decrypts: the first reference that can. */
job *seal_job_for(const opdef *open, bufset *b)
{
    static const int order[] = { IM_DEFAULT, IM_SODIUM, IM_BORING, IM_CHAPOLY };
    const opdef *seal = op_named(open->flags & F_X ? "xseal" : open->flags & F_QUIC ? "quic-seal"
                                                                                     : "seal");
    job *prep = NULL;

    for (int r = 0; r < 4 && prep == NULL; r++)
        prep = job_new(seal, order[r], b);
    return prep;
}

/*
 * One message per implementation, compared: with the reference's output
 * (the default provider, else libsodium, else BoringSSL, else chapoly:
 * "unchecked"); open and TLS with the plaintext (the ciphertexts come from
 * the reference), TLS records crossed with the default provider both ways;
 * the floor with what it promises (a copy, zero tags).
 */
static void check_cell(cell *c, bufset *b)
{
    static const int order[] = { IM_DEFAULT, IM_SODIUM, IM_BORING, IM_CHAPOLY, IM_BASE, IM_FLOOR };
    static const uint8_t zero[TAG_LEN];
    size_t n = c->size, tag = c->op->kind == K_SEAL || c->op->kind == K_PIPE ? TAG_LEN : 0;
    size_t len = c->op->kind == K_POLY ? TAG_LEN : (n + tag) * (size_t)msgs(c);
    uint8_t *ref = malloc(len), *got = malloc(len);
    int have_ref = 0;

    if (ref == NULL || got == NULL)
        die("out of memory");
    prepare_ct(c, b);
    for (int r = 0; r < IM_N; r++) {
        int im = order[r], k = c->op->kind;
        job *j = c->jobs[im];

        if (j == NULL || c->broken[im])
            continue;
        memset(b->out, 0xa5, len);
        j->seq = k == K_OPEN ? 0 : CHECK_SEQ;
        if (!job_ok(c, im, j->run(j, n, 1), "call failed"))
            continue;
        memcpy(got, b->out, len);
        if (im == IM_FLOOR) {
            job_ok(c, im, k == K_POLY ? !memcmp(got, zero, TAG_LEN)
                          : !memcmp(got, k == K_OPEN ? b->ct[0] : b->in, n)
                                && !memcmp(got + n, zero, tag),
                   "floor: not a copy and zero tag");
        } else if (k == K_OPEN || k == K_TLS) {
            job_ok(c, im, !memcmp(got, b->in, n), "wrong plaintext");
            c->ref = k == K_OPEN ? c->prep->impl : IM_DEFAULT;
            c->checked |= c->ref != im;
            if (k == K_TLS && im != IM_DEFAULT && !c->broken[im])
                job_ok(c, im, tls_cross_check(im, c->op->arg, n, b),
                       "records not interoperable with the default provider");
        } else if (!have_ref) {
            memcpy(ref, got, len);
            have_ref = 1;
            c->ref = im;
        } else {
            c->checked = 1;
            job_ok(c, im, !memcmp(got, ref, len), "output differs from the reference");
        }
    }
    free(ref);
    free(got);
}

/* Check every output once, then calibrate; returns how many (cell, implementation) broke. */
int check_and_calibrate(cell *cells, int ncells, bufset *b)
{
    int nbroken = 0;

    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci];

        check_cell(c, b);
        for (int im = 0; im < IM_N; im++) {
            if (c->jobs[im] && !c->broken[im])
                calibrate(c, im);
            if (c->jobs[im] && c->broken[im]) {
                nbroken++;
                fprintf(stderr, "bench_evp: %s %zu bytes %s: %s\n", c->op->name, c->size,
                        impl_name[im], c->why[im]);
            }
        }
    }
    return nbroken;
}

/* Repetition r of every cell: its implementations back to back, rotating who goes first. */
void run_repetition(cell *cells, int ncells, bufset *b, int r)
{
    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci];

        prepare_ct(c, b);
        for (int s = 0; s < IM_N; s++) {
            int im = (s + r + ci) % IM_N;

            if (c->jobs[im] && !c->broken[im])
                c->ns[im][r] = sample(c, im);
        }
    }
    probe_ghz();
}

/* ------------------------------------------------------------------ */
/* bench_evp's cells, tables and CSV                                   */

/* A cell per operation and size, with every implementation that offers the operation. */
int build_cells(cell *cells, bufset *b)
{
    int ncells = 0;

    for (size_t o = 0; o < N_OPS; o++) {
        const opdef *op = &ops[o];
        job *jobs[IM_N] = { 0 }, *prep = NULL;

        if (!cfg.op_on[o])
            continue;
        for (int im = 0; im < IM_N; im++)
            if (im != IM_FLOOR || op->kind == K_SEAL || op->kind == K_OPEN || op->kind == K_CHACHA
                || op->kind == K_HP || op->kind == K_POLY)
                jobs[im] = job_new(op, im, b);
        if (op->kind == K_OPEN)
            prep = seal_job_for(op, b);
        if (jobs[IM_CHAPOLY] == NULL || (op->kind == K_OPEN && prep == NULL)) {
            printf("  (skipping %s: chapoly does not offer it here)\n", op->name);
            continue;
        }
        for (int base = 0; base < 2 && op->kind == K_TLS; base++)
            if ((base ? tls_proof_base : tls_proof)[op->arg == TLS1_3_VERSION] == 0
                && jobs[base ? IM_BASE : IM_CHAPOLY]) {
                printf("  (%s: the %s's records did not go through it: row dropped)\n", op->name,
                       impl_name[base ? IM_BASE : IM_CHAPOLY]);
                jobs[base ? IM_BASE : IM_CHAPOLY] = NULL;
            }
        for (int s = 0; s < cfg.nsizes; s++) {
            if (op->kind == K_TLS && cfg.sizes[s] > TLS_MAX_RECORD)
                continue; /* a record carries at most 16384 bytes */
            cells[ncells] = (cell){ .op = op, .size = cfg.sizes[s], .prep = prep };
            memcpy(cells[ncells++].jobs, jobs, sizeof(jobs));
        }
    }
    return ncells;
}

/* A column of 10: a ratio (x) or ns, "-" when absent. */
static void col(double v, int ratio)
{
    if (isnan(v))
        printf(" %9s", "-");
    else
        printf(ratio ? " %8.2fx" : " %9.1f", v);
}

/* The units, then one table per operation. */
void print_results(cell *cells, int ncells, int reps)
{
    static const int vs[] = { IM_DEFAULT, IM_BORING, IM_SODIUM, IM_BASE };
    const opdef *cur = NULL;

    printf("\nns/op: median per message (CLOCK_MONOTONIC); cycles: core clocks at %.2f GHz (imul"
           " chain);\nspread: (max-min)/median of %d repetitions; 'vs X' = ns(X)/ns(row), > 1: the"
           " row is faster\n(median of per-repetition ratios); 'ns-floor': ns - the floor's ns, the"
           " same way.\n", g_ghz, reps);
    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci];

        if (c->op != cur) {
            cur = c->op;
            printf("\n== %s: %s\n%7s  %-10s %9s %8s %7s %9s %6s %9s %9s %9s %9s %9s\n", cur->name,
                   cur->title, "bytes", "impl", "ns/op", "cycles", "c/B", "MB/s", "spread",
                   "vs deflt", "vs boring", "vs sodium", "vs base", "ns-floor");
        }
        for (int im = 0; im < IM_N; im++) {
            double ns = med_ns(c, im, reps), lo = INFINITY, hi = 0;

            if (c->jobs[im] == NULL)
                continue;
            printf("%7zu  %-10s", c->size, impl_name[im]);
            if (c->broken[im]) {
                printf(" BROKEN: %s (not timed)\n", c->why[im]);
                continue;
            }
            for (int r = 0; r < reps; r++) {
                lo = c->ns[im][r] < lo ? c->ns[im][r] : lo;
                hi = c->ns[im][r] > hi ? c->ns[im][r] : hi;
            }
            printf(" %9.1f %8.0f %7.2f %9.1f %5.1f%%", ns, ns * g_ghz, ns * g_ghz / (double)c->size,
                   (double)c->size * 1e3 / ns, 100 * (hi - lo) / ns);
            for (size_t k = 0; k < 4; k++)
                col(vs[k] == im ? NAN : rep_stat(c, vs[k], im, reps, 0), 1);
            col(im >= IM_FLOOR ? NAN : rep_stat(c, im, IM_FLOOR, reps, 1), 0); /* EVP's only */
            printf("%s\n", !c->checked ? "  (unchecked)" : c->ref == im ? "  ref" : "");
        }
    }
}

void write_csv(const char *path, cell *cells, int ncells, int reps)
{
    static const int vs[] = { IM_DEFAULT, IM_BORING, IM_SODIUM, IM_BASE };
    FILE *f = fopen(path, "w");

    if (f == NULL)
        die("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "op,bytes,impl,status,ns_median,cycles_per_byte,mb_per_s,ratio_vs_default,"
               "ratio_vs_boringssl,ratio_vs_libsodium,ratio_vs_base,above_floor_ns,reps,kernel\n");
    for (int ci = 0; ci < ncells; ci++)
        for (int im = 0; im < IM_N; im++) {
            cell *c = &cells[ci];
            double ns = med_ns(c, im, reps), v;

            if (c->jobs[im] == NULL)
                continue;
            fprintf(f, "%s,%zu,%s,%s", c->op->name, c->size, impl_name[im],
                    c->broken[im] ? "broken" : c->checked ? "ok" : "unchecked");
            if (isnan(ns))
                fprintf(f, ",,,");
            else
                fprintf(f, ",%.2f,%.4f,%.2f", ns, ns * g_ghz / (double)c->size,
                        (double)c->size * 1e3 / ns);
            for (size_t k = 0; k < 5; k++) {
                v = k == 4 ? (im >= IM_FLOOR ? NAN : rep_stat(c, im, IM_FLOOR, reps, 1))
                           : vs[k] == im ? NAN : rep_stat(c, vs[k], im, reps, 0);
                if (isnan(v))
                    fputc(',', f);
                else
                    fprintf(f, ",%.4f", v);
            }
            fprintf(f, ",%d,%s\n", reps, im == IM_BASE ? g_base_kernel : g_kernel);
        }
    fclose(f);
}
