/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: timing and statistics. Wall time from CLOCK_MONOTONIC, CPU
 * time of the thread to spot preemption, core clocks from a dependent imul
 * chain; samples made of short bursts, medians of samples and of ratios.
 */
#include "bench_evp.h"

#include <stdlib.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Clocks and medians                                                  */

double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Thread CPU time: excludes the time this thread sat preempted (the machine is shared). */
double cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double median(const double *v, int n)
{
    double t[MAX_REPS * 4];

    if (n <= 0)
        return 0;
    memcpy(t, v, (size_t)n * sizeof(double));
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return n & 1 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* ------------------------------------------------------------------ */
/* Core clock                                                          */

double g_ghz;
double g_ghz_probe[MAX_REPS + 4];
int g_nprobe;
double g_tsc_ghz;

#if defined(__x86_64__) && defined(__GNUC__)
static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;

    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* A chain of dependent imuls runs at one per 3 core cycles whatever the TSC says. */
static double imul_ghz_once(uint64_t loops, double *tsc_ghz)
{
    uint64_t x = 3, n = loops;
    uint64_t c0 = rdtsc();
    double t0 = now_ns();

    __asm__ volatile(".p2align 4\n"
                     "1:\n\t"
                     "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
                     "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
                     "dec %1\n\t"
                     "jnz 1b\n"
                     : "+r"(x), "+r"(n)
                     :
                     : "cc");
    double t1 = now_ns();
    uint64_t c1 = rdtsc();
    if (tsc_ghz)
        *tsc_ghz = (double)(c1 - c0) / (t1 - t0);
    return 24.0 * (double)loops / (t1 - t0);
}

/* Best of a few short probes: an interrupted probe can only read low. */
double probe_ghz(void)
{
    double best = 0, tsc = 0;

    for (int i = 0; i < 5; i++) {
        double t, g = imul_ghz_once(250000, &t); /* 6M cycles, ~1.5 ms */
        if (g > best) {
            best = g;
            tsc = t;
        }
    }
    if (g_nprobe < (int)(sizeof(g_ghz_probe) / sizeof(g_ghz_probe[0])))
        g_ghz_probe[g_nprobe++] = best;
    g_tsc_ghz = tsc;
    g_ghz = median(g_ghz_probe, g_nprobe);
    return best;
}

void clock_warmup(void)
{
    double t0 = now_ns();

    while (now_ns() - t0 < 50e6) /* let the core leave any low-power state */
        imul_ghz_once(100000, NULL);
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

/*
 * A sample is made of short bursts timed with CLOCK_MONOTONIC. A burst during
 * which the thread got less than CLEAN_FRAC of the CPU (preempted, or
 * interrupted for long) is thrown away and run again, so a loaded machine
 * makes the run longer rather than the numbers wrong.
 */
/* ------------------------------------------------------------------ */
/* Samples                                                             */

#define CLEAN_FRAC 0.98
int g_bursts = 1;
int g_warm_div = 1;
double g_burst_ns;
uint64_t g_bursts_run, g_bursts_dropped, g_samples_dirty;

/* Bursts of ~2 ms (a quarter of the sample when samples are under 8 ms). */
void plan_bursts(double sample_ms)
{
    double burst_ms = sample_ms >= 8 ? 2 : sample_ms / 4;
    g_burst_ns = burst_ms * 1e6;
    g_bursts = (int)(sample_ms / burst_ms + 0.5);
    if (g_bursts < 1)
        g_bursts = 1;
}

void calibrate(cell *c, int im, double burst_ns)
{
    job *j = c->jobs[im];
    uint64_t it = 1;
    double t, best;

    for (;;) {
        double t0 = cpu_ns();
        if (!job_ok_or_note(c, im, j->run(j, c->size, it), "call failed while calibrating"))
            return;
        t = cpu_ns() - t0;
        if (t >= burst_ns / 4 || it >= (1ULL << 40))
            break;
        it *= t < burst_ns / 64 ? 8 : 2;
    }
    best = t;
    for (int k = 0; k < 2; k++) { /* the fastest of three: the least disturbed */
        double t0 = cpu_ns();
        if (!job_ok_or_note(c, im, j->run(j, c->size, it), "call failed while calibrating"))
            return;
        t = cpu_ns() - t0;
        best = t < best ? t : best;
    }
    uint64_t want = (uint64_t)(burst_ns * (double)it / best);
    c->iters[im] = want ? want : 1;
}

double sample(cell *c, int im)
{
    job *j = c->jobs[im];
    uint64_t it = c->iters[im];
    double wall = 0, dirty_wall = 0, dirty_frac = -1;
    int clean = 0, tries = 0;

    uint64_t warm = it / (uint64_t)g_warm_div;
    if (!job_ok_or_note(c, im, j->run(j, c->size, warm ? warm : 1), "call failed"))
        return 0; /* warm caches and predictors */
    while (clean < g_bursts && tries < 4 * g_bursts) {
        tries++;
        double w0 = now_ns(), c0 = cpu_ns();
        int ok = j->run(j, c->size, it);
        double c1 = cpu_ns(), w1 = now_ns();
        if (!job_ok_or_note(c, im, ok, "call failed while timing"))
            return 0;
        double w = w1 - w0, frac = (c1 - c0) / w;
        if (frac >= CLEAN_FRAC) {
            wall += w;
            clean++;
        } else if (frac > dirty_frac) {
            dirty_frac = frac;
            dirty_wall = w;
        }
    }
    g_bursts_run += (uint64_t)tries;
    g_bursts_dropped += (uint64_t)(tries - clean);
    if (clean == 0) { /* never ran undisturbed: keep the least disturbed burst, and say so */
        g_samples_dirty++;
        c->dirty[im]++;
        return dirty_wall / (double)it;
    }
    return wall / ((double)clean * (double)it);
}

/* ------------------------------------------------------------------ */
/* Results                                                             */

/* One implementation in a cell: median ns/op, range, medians of per-repetition ratios. */
result summarize(const cell *c, int im, int reps)
{
    result r = { 0 };

    if (c->jobs[im] == NULL || c->broken[im])
        return r;
    r.valid = 1;
    r.ns = median(c->ns[im], reps);
    r.ns_min = r.ns_max = c->ns[im][0];
    for (int i = 1; i < reps; i++) {
        if (c->ns[im][i] < r.ns_min)
            r.ns_min = c->ns[im][i];
        if (c->ns[im][i] > r.ns_max)
            r.ns_max = c->ns[im][i];
    }
    for (int x = 0; x < IM_N; x++) {
        double q[MAX_REPS];

        if (c->jobs[x] == NULL || c->broken[x])
            continue;
        for (int i = 0; i < reps; i++)
            q[i] = c->ns[x][i] / c->ns[im][i];
        r.ratio[x] = median(q, reps);
    }
    return r;
}
