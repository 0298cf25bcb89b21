/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: what it prints and writes. The header (machine, libraries,
 * plan), the units and one table per operation on stdout; CSV, JSON and a
 * gnuplot PNG on request; the closing lines on preemption and load.
 */
#include "bench_evp.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <openssl/crypto.h>
#ifdef BENCH_HAVE_SODIUM
#include <sodium.h>
#endif

/* ------------------------------------------------------------------ */
/* Header                                                              */

/* "model name (family F model M), N online CPUs" from /proc/cpuinfo. */
void cpu_model(char *out, size_t len)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512], name[160] = "?";
    int family = -1, model = -1;

    snprintf(out, len, "?");
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *p = strchr(line, ':');
        if (p == NULL)
            continue;
        if (strncmp(line, "model name", 10) == 0) {
            p += 2;
            p[strcspn(p, "\n")] = '\0';
            snprintf(name, sizeof(name), "%s", p);
        } else if (strncmp(line, "cpu family", 10) == 0 && family < 0) {
            family = atoi(p + 1);
        } else if (strncmp(line, "model\t", 6) == 0 && model < 0) {
            model = atoi(p + 1);
        } else if (line[0] == '\n' && name[0] != '?') {
            break; /* first processor is enough */
        }
    }
    fclose(f);
    snprintf(out, len, "%s (family %d model %d), %ld online CPUs", name, family, model,
             sysconf(_SC_NPROCESSORS_ONLN));
}

/*
 * The chapoly line; with --base, also the base's and, for each, the file its
 * provider runs from and its buildinfo (so two contexts are seen to run two
 * modules, or one file twice: an A/A run).
 */
void print_modules(int with_kernel)
{
    char line[PATH_MAX + 800];

    printf("  chapoly    %s", g_module_desc);
    printf(with_kernel ? ", kernel %s\n" : "\n", g_kernel);
    if (cfg.base == NULL)
        return;
    module_lines(0, line, sizeof(line));
    printf("             %s\n", line);
    printf("  base       %s", g_base_desc);
    printf(with_kernel ? ", kernel %s\n" : "\n", g_base_kernel);
    int same = module_lines(1, line, sizeof(line));
    printf("             %s\n", line);
    if (same)
        printf("             (the same file as chapoly, one copy in two contexts: an A/A run)\n");
    if (strcmp(g_kernel, g_base_kernel) != 0)
        printf("             (the base runs kernel %s, chapoly %s)\n", g_base_kernel, g_kernel);
}

/* The process's buffer placement and heap shift, drawn or given (header lines). */
void print_layout(void)
{
    printf("  placement  the output %d bytes into its 4 KiB page, the inputs at a page start%s\n",
           placement_bytes(), cfg.placement >= 0 ? " (--placement)" : " (drawn for this process)");
    printf("  heap shift %d bytes before the contexts%s\n", heap_shift_bytes(),
           cfg.heap_shift >= 0 ? " (--heap-shift)" : " (drawn for this process)");
}

void print_header(const char *cpu, const double load0[3])
{
    printf("bench_evp: chapoly vs OpenSSL default provider%s%s%s\n",
           g_have_boring ? ", BoringSSL" : "", g_have_sodium ? ", libsodium" : "",
           cfg.base ? ", the base build (--base)" : "");
    printf("  cpu        %s\n", cpu);
    printf("  openssl    %s\n", OpenSSL_version(OPENSSL_VERSION));
    print_modules(1);
#ifdef BENCH_HAVE_SODIUM
    printf("  libsodium  %s\n", g_have_sodium ? sodium_version_string() : "disabled (--no-sodium)");
#else
    printf("  libsodium  not built in (libsodium-dev absent at configure time)\n");
#endif
    printf("  boringssl  %s\n", g_boring_note);
    printf("  tls route  %s (chapoly's message counters, separate context)\n", tls_route_text());
    printf("  load avg   %.2f %.2f %.2f at start\n", load0[0], load0[1], load0[2]);
    print_layout();
}

/* The size of the run, once the outputs are checked and the samples calibrated. */
void print_plan(const cell *cells, int ncells)
{
    if (ncells > 0) {
        int nsamples = 0;
        for (int ci = 0; ci < ncells; ci++)
            for (int im = 0; im < IM_N; im++)
                nsamples += cells[ci].jobs[im] && !cells[ci].broken[im];
        printf("  plan       %d cells, %d samples of %d x %.1f ms bursts x %d repetitions"
               " (~%.0f s of CPU)\n", ncells, nsamples, g_bursts, g_burst_ns / 1e6, cfg.reps,
               nsamples * cfg.reps * (g_bursts + 1) * g_burst_ns / 1e9);
        fflush(stdout);
    }
}

/* ------------------------------------------------------------------ */
/* Tables, CSV, JSON                                                   */

static double mbps(size_t n, double ns)
{
    return ns > 0 ? (double)n * 1e3 / ns : 0;
}

static void print_ratio(double r)
{
    if (r > 0)
        printf(" %9.2fx", r);
    else
        printf(" %10s", "-");
}

static void print_tables(cell *cells, int ncells, int reps)
{
    const opdef *cur = NULL;

    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci];

        if (c->op != cur) {
            cur = c->op;
            printf("\n== %s: %s\n", cur->name, cur->title);
            printf("%7s  %-10s %11s %10s %8s %9s %7s %10s %10s %10s", "bytes", "impl", "ns/op",
                   "cycles/op", "c/B", "MB/s", "spread", "vs default", "vs boring", "vs sodium");
            printf(cfg.base ? " %10s\n" : "\n", "vs base");
        }
        for (int im = 0; im < IM_N; im++) {
            if (c->jobs[im] == NULL)
                continue;
            printf("%7zu  %-10s", c->size, impl_name[im]);
            if (c->broken[im]) {
                printf(" BROKEN: %s (not timed)\n", c->why[im]);
                continue;
            }
            result r = summarize(c, im, reps);
            double cyc = r.ns * g_ghz;
            printf(" %11.1f", r.ns);
            if (g_ghz > 0)
                printf(" %10.0f %8.2f", cyc, cyc / (double)c->size);
            else
                printf(" %10s %8s", "-", "-");
            printf(" %9.1f %6.1f%%", mbps(c->size, r.ns), 100 * (r.ns_max - r.ns_min) / r.ns);
            print_ratio(im == IM_DEFAULT ? 0 : r.ratio[IM_DEFAULT]);
            print_ratio(im == IM_BORING ? 0 : r.ratio[IM_BORING]);
            print_ratio(im == IM_SODIUM ? 0 : r.ratio[IM_SODIUM]);
            if (cfg.base)
                print_ratio(im == IM_BASE ? 0 : r.ratio[IM_BASE]);
            if (!c->checked)
                printf("  (unchecked: no second implementation)");
            else if (c->ref == im && c->op->kind != K_OPEN && c->op->kind != K_TLS)
                printf("  ref");
            printf("\n");
        }
    }
}

/* The units paragraph, then one table per operation. */
void print_results(cell *cells, int ncells, int reps)
{
    double lo = g_ghz_probe[0], hi = g_ghz_probe[0];
    for (int i = 1; i < g_nprobe; i++) {
        lo = g_ghz_probe[i] < lo ? g_ghz_probe[i] : lo;
        hi = g_ghz_probe[i] > hi ? g_ghz_probe[i] : hi;
    }
    if (ncells > 0) {
        printf("\nUnits: ns/op = median wall time per message (CLOCK_MONOTONIC); cycles = core clocks at\n"
               "%.2f GHz (dependent imul chain in this process, %d probes %.2f-%.2f GHz; TSC %.2f GHz);\n"
               "MB/s = 10^6 bytes/s; spread = (max-min)/median over %d repetitions; 'vs X' = ns(X)/ns(row),\n"
               ">1 means the row is faster than X (median of per-repetition ratios).\n",
               g_ghz, g_nprobe, lo, hi, g_tsc_ghz, reps);
        print_tables(cells, ncells, reps);
    }
}

void write_csv(const char *path, cell *cells, int ncells, int reps)
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        die("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "op,bytes,impl,status,ns_median,ns_min,ns_max,cycles_median,cycles_per_byte,"
               "mb_per_s,ratio_vs_default,ratio_vs_boringssl,ratio_vs_libsodium,ratio_vs_base,"
               "reps,iters,core_ghz,kernel\n");
    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci];

        for (int im = 0; im < IM_N; im++) {
            if (c->jobs[im] == NULL)
                continue;
            result r = summarize(c, im, reps);
            fprintf(f, "%s,%zu,%s,%s,", c->op->name, c->size, impl_name[im],
                    c->broken[im] ? "broken" : c->checked ? "ok" : "unchecked");
            if (!r.valid) {
                fprintf(f, ",,,,,,,,,,%d,,%.4f,%s\n", reps, g_ghz, g_kernel);
                continue;
            }
            fprintf(f, "%.2f,%.2f,%.2f,%.1f,%.4f,%.2f,", r.ns, r.ns_min, r.ns_max, r.ns * g_ghz,
                    r.ns * g_ghz / (double)c->size, mbps(c->size, r.ns));
            static const int cols[] = { IM_DEFAULT, IM_BORING, IM_SODIUM, IM_BASE };
            for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) /* the header's four */
                if (cols[k] != im && r.ratio[cols[k]] > 0)
                    fprintf(f, "%.4f,", r.ratio[cols[k]]);
                else
                    fprintf(f, ",");
            fprintf(f, "%d,%llu,%.4f,%s\n", reps, (unsigned long long)c->iters[im], g_ghz,
                    g_kernel);
        }
    }
    fclose(f);
}

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* Opens the JSON file with the run's metadata and every result; --threads appends its rows. */
FILE *json_open(const char *path, const char *cpu, double load0, cell *cells, int ncells)
{
    FILE *json = fopen(path, "w");

    if (json == NULL)
        die("cannot write %s: %s", path, strerror(errno));
    fprintf(json, "{\n  \"meta\": {\"openssl\": ");
    json_str(json, OpenSSL_version(OPENSSL_VERSION));
    fprintf(json, ", \"chapoly_module\": ");
    json_str(json, g_module_desc);
    fprintf(json, ", \"kernel\": ");
    json_str(json, g_kernel);
    if (cfg.base) {
        fprintf(json, ", \"base_module\": ");
        json_str(json, g_base_desc);
        fprintf(json, ", \"base_kernel\": ");
        json_str(json, g_base_kernel);
    }
    fprintf(json, ", \"cpu\": ");
    json_str(json, cpu);
    fprintf(json, ", \"boringssl\": ");
    json_str(json, g_boring_note);
    fprintf(json, ", \"libsodium\": %s, \"core_ghz\": %.4f, \"tsc_ghz\": %.4f, "
                  "\"reps\": %d, \"sample_ms\": %.1f, \"loadavg_start\": %.2f},\n",
            g_have_sodium ? "true" : "false", g_ghz, g_tsc_ghz, cfg.reps, cfg.sample_ms,
            load0);
    fprintf(json, "  \"results\": [");
    int first = 1;
    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci];
        for (int im = 0; im < IM_N; im++) {
            if (c->jobs[im] == NULL)
                continue;
            result r = summarize(c, im, cfg.reps);
            fprintf(json, "%s\n    {\"op\": \"%s\", \"bytes\": %zu, \"impl\": \"%s\", "
                          "\"status\": \"%s\"",
                    first ? "" : ",", c->op->name, c->size, impl_name[im],
                    c->broken[im] ? "broken" : c->checked ? "ok" : "unchecked");
            first = 0;
            if (r.valid) {
                fprintf(json, ", \"ns\": %.2f, \"ns_min\": %.2f, \"ns_max\": %.2f, "
                              "\"cycles\": %.1f, \"mb_per_s\": %.2f, \"samples_ns\": [",
                        r.ns, r.ns_min, r.ns_max, r.ns * g_ghz, mbps(c->size, r.ns));
                for (int k = 0; k < cfg.reps; k++)
                    fprintf(json, "%s%.2f", k ? ", " : "", c->ns[im][k]);
                fprintf(json, "], \"ratio\": {");
                int f2 = 1;
                for (int x = 0; x < IM_N; x++)
                    if (x != im && r.ratio[x] > 0) {
                        fprintf(json, "%s\"%s\": %.4f", f2 ? "" : ", ", impl_name[x], r.ratio[x]);
                        f2 = 0;
                    }
                fprintf(json, "}");
            }
            fprintf(json, "}");
        }
    }
    fprintf(json, "\n  ]");
    return json;
}

void json_close(FILE *json)
{
    fprintf(json, "\n}\n");
    fclose(json);
}

/* ------------------------------------------------------------------ */
/* Plot                                                                */

int plot(const char *png, cell *cells, int ncells, int reps)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("\n(no plot: gnuplot not installed; apt-get install gnuplot-nox)\n");
        return 0;
    }
    FILE *g = popen("gnuplot", "w");
    int lines = 0;

    if (g == NULL)
        return 0;
    for (int im = 0; im < IM_N; im++) {
        fprintf(g, "$d%d << EOD\n", im);
        for (int ci = 0; ci < ncells; ci++) {
            cell *c = &cells[ci];
            if (strcmp(c->op->name, "seal") != 0 || c->jobs[im] == NULL || c->broken[im])
                continue;
            result r = summarize(c, im, reps);
            fprintf(g, "%zu %.3f\n", c->size, mbps(c->size, r.ns));
        }
        fprintf(g, "EOD\n");
    }
    fprintf(g, "set terminal pngcairo size 960,600 noenhanced font ',10'\n"
               "set output '%s'\n"
               "set title 'ChaCha20-Poly1305 seal through EVP (13-byte AAD, fresh nonce), "
               "kernel %s, median of %d'\n"
               "set xlabel 'message bytes'\nset ylabel 'MB/s (10^6 bytes/s)'\n"
               "set logscale x 2\nset logscale y 10\nset grid\nset key left top\n"
               "set format x '%%.0f'\n",
               png, g_kernel, reps);
    fprintf(g, "plot ");
    for (int im = 0; im < IM_N; im++) {
        int any = 0;
        for (int ci = 0; ci < ncells; ci++)
            if (strcmp(cells[ci].op->name, "seal") == 0 && cells[ci].jobs[im] && !cells[ci].broken[im])
                any = 1;
        if (!any)
            continue;
        fprintf(g, "%s$d%d using 1:2 with linespoints lw 2 title '%s'", lines ? ", " : "", im,
                impl_name[im]);
        lines++;
    }
    fprintf(g, "\n");
    int rc = pclose(g);
    if (lines == 0 || rc != 0) {
        printf("\n(plot failed: no seal results or gnuplot error)\n");
        return 0;
    }
    printf("\nplot: %s\n", png);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Closing lines                                                       */

/* Median over repetitions of ns(a, ia) / ns(b, ib): > 1 means b is faster. */
static double rep_ratio(const cell *a, int ia, const cell *b, int ib, int reps)
{
    double q[MAX_REPS];

    for (int i = 0; i < reps; i++)
        q[i] = a->ns[ia][i] / b->ns[ib][i];
    return median(q, reps);
}

/*
 * The stream operations side by side: ns per byte of chapoly and the
 * default, chapoly vs default, and each one's streaming throughput as a
 * share of its one-shot (stream-whole, same size): ns(one-shot) / ns(stream).
 */
void print_stream_summary(cell *cells, int ncells, int reps)
{
    int header = 0;

    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci], *whole = NULL;

        if (c->op->kind != K_STREAM || c->op->x == 0)
            continue;
        for (int w = 0; w < ncells; w++)
            if (cells[w].op->kind == K_STREAM && cells[w].op->x == 0 && cells[w].size == c->size)
                whole = &cells[w];
        if (!header) {
            printf("\n== stream summary: one message of 'bytes' in updates of 'update' bytes; ns/B of the\n"
                   "  whole message (init, AAD, updates, final, tag); 'of one-shot' = ns(stream-whole) /\n"
                   "  ns(row), the streamed throughput as a share of one update of the same message\n");
            printf("%7s %7s %12s %12s %11s %16s %16s\n", "bytes", "update", "chapoly ns/B",
                   "default ns/B", "vs default", "chapoly of 1shot", "default of 1shot");
            header = 1;
        }
        printf("%7zu %7d", c->size, c->op->x);
        for (int im = IM_CHAPOLY; im <= IM_DEFAULT; im++) {
            if (c->jobs[im] == NULL || c->broken[im])
                printf(" %12s", "-");
            else
                printf(" %12.3f", summarize(c, im, reps).ns / (double)c->size);
        }
        int both = c->jobs[IM_CHAPOLY] && !c->broken[IM_CHAPOLY] && c->jobs[IM_DEFAULT] &&
                   !c->broken[IM_DEFAULT];
        if (both)
            printf(" %10.2fx", rep_ratio(c, IM_DEFAULT, c, IM_CHAPOLY, reps));
        else
            printf(" %11s", "-");
        for (int im = IM_CHAPOLY; im <= IM_DEFAULT; im++) {
            if (whole && c->jobs[im] && !c->broken[im] && whole->jobs[im] && !whole->broken[im])
                printf(" %15.0f%%", 100 * rep_ratio(whole, im, c, im, reps));
            else
                printf(" %16s", "-");
        }
        printf("\n");
    }
}

void print_footer(double t_start, int nbroken)
{
    double load1[3] = { 0 };

    getloadavg(load1, 3);
    printf("\nbursts dropped as preempted: %llu of %llu (%.1f%%); samples with no clean burst: %llu\n",
           (unsigned long long)g_bursts_dropped, (unsigned long long)g_bursts_run,
           g_bursts_run ? 100.0 * (double)g_bursts_dropped / (double)g_bursts_run : 0.0,
           (unsigned long long)g_samples_dirty);
    printf("load avg %.2f at end; total %.1f s%s\n", load1[0], (now_ns() - t_start) / 1e9,
           nbroken ? "; SOME IMPLEMENTATIONS BROKEN (see above)" : "");
}
