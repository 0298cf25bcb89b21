/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp sweep: the report, made from the CSV alone (--report redoes it
 * for an earlier run; columns are found by name): the cells below 1.0, the
 * floor table, failed checks, the heat map (gnuplot) and last the headline,
 * the lowest ratio per level and overall. With a base (--base) also the
 * cells worse than it and the worst one.
 */
#include "bench_evp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

typedef struct row {
    char level[24], kernel[24], limit[48], op[24], check[300];
    size_t size;
    double v[8]; /* the columns of col_name from C_CH on */
} row;

enum { C_LEVEL, C_KERNEL, C_LIMIT, C_OP, C_SIZE, C_CHECK, C_CH, C_DEF, C_RATIO, C_FLOOR,
       C_CHF, C_DEFF, C_BORING, C_AB, C_N };
#define V(r, c) ((r)->v[(c) - C_CH])
static const char *const col_name[C_N] = {
    "level", "kernel", "default_limit", "op", "size", "check", "chapoly_ns", "default_ns", "ratio",
    "floor_ns", "chapoly_above_floor_ns", "default_above_floor_ns", "boringssl_ns", "ratio_base",
};

typedef struct table {
    row *rows;
    int n, nlevels, nops, nsizes, has_ab;
    const char *levels[16], *opnames[32];
    size_t *sizes; /* every size of any row, ascending */
} table;

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;

    return (x > y) - (x < y);
}

/* The index of s in list (added when new and there is room). */
static int intern(const char **list, int *n, int max, const char *s)
{
    int k = 0;

    while (k < *n && strcmp(list[k], s) != 0)
        k++;
    if (k == *n && *n < max)
        list[(*n)++] = s;
    return k;
}

/* Splits a line at its commas (no field holds one); returns the number of fields. */
static int split(char *line, char **fld, int max)
{
    int n = 0;

    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max; p++) {
        fld[n++] = p;
        if ((p = strchr(p, ',')) == NULL)
            break;
        *p = '\0';
    }
    return n;
}

static table read_csv(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[2048], *fld[40];
    int col[C_N], nf, cap = 1024;
    table t = { .rows = malloc((size_t)cap * sizeof(row)) };

    if (f == NULL || fgets(line, sizeof(line), f) == NULL || t.rows == NULL)
        die("sweep: cannot read %s: %s", path, f ? "empty" : strerror(errno));
    nf = split(line, fld, 40);
    for (int c = 0; c < C_N; c++) {
        for (col[c] = nf - 1; col[c] >= 0 && strcmp(fld[col[c]], col_name[c]) != 0; col[c]--)
            ;
        if (col[c] < 0 && c <= C_RATIO)
            die("sweep: %s has no column %s", path, col_name[c]);
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        row *r;

        if (split(line, fld, 40) != nf)
            die("sweep: %s: a row without %d fields", path, nf);
        if (t.n == cap && (t.rows = realloc(t.rows, (size_t)(cap *= 2) * sizeof(row))) == NULL)
            die("out of memory");
        r = &t.rows[t.n++];
        snprintf(r->level, sizeof(r->level), "%s", fld[col[C_LEVEL]]);
        snprintf(r->kernel, sizeof(r->kernel), "%s", fld[col[C_KERNEL]]);
        snprintf(r->limit, sizeof(r->limit), "%s", fld[col[C_LIMIT]]);
        snprintf(r->op, sizeof(r->op), "%s", fld[col[C_OP]]);
        snprintf(r->check, sizeof(r->check), "%s", fld[col[C_CHECK]]);
        r->size = (size_t)strtoull(fld[col[C_SIZE]], NULL, 10);
        for (int c = C_CH; c < C_N; c++)
            V(r, c) = col[c] >= 0 && *fld[col[c]] ? atof(fld[col[c]]) : NAN;
        t.has_ab |= !isnan(V(r, C_AB));
    }
    fclose(f);
    if ((t.sizes = malloc(((size_t)t.n + 1) * sizeof(size_t))) == NULL)
        die("out of memory");
    for (int i = 0; i < t.n; i++) {
        intern(t.levels, &t.nlevels, 16, t.rows[i].level);
        intern(t.opnames, &t.nops, 32, t.rows[i].op);
        t.sizes[t.nsizes++] = t.rows[i].size;
    }
    qsort(t.sizes, (size_t)t.nsizes, sizeof(size_t), cmp_size);
    int u = 0;
    for (int i = 0; i < t.nsizes; i++)
        if (u == 0 || t.sizes[u - 1] != t.sizes[i])
            t.sizes[u++] = t.sizes[i];
    t.nsizes = u;
    return t;
}

static const row *find(const table *t, const char *level, const char *op, size_t size)
{
    for (int i = 0; i < t->n; i++)
        if (t->rows[i].size == size && !strcmp(t->rows[i].level, level) && !strcmp(t->rows[i].op, op))
            return &t->rows[i];
    return NULL;
}

/*
 * The lowest ratio (to the default: c C_RATIO; to the base: C_AB) of a level
 * and op (NULL: all); *below counts the cells under thr, *cells those with a ratio.
 */
static const row *min_row(const table *t, const char *level, const char *op, int c, double thr,
                          int *below, int *cells)
{
    const row *m = NULL;

    *below = *cells = 0;
    for (int i = 0; i < t->n; i++) {
        const row *r = &t->rows[i];

        if ((level && strcmp(r->level, level)) || (op && strcmp(r->op, op)) || isnan(V(r, c)))
            continue;
        (*cells)++;
        *below += V(r, c) < thr;
        m = m == NULL || V(r, c) < V(m, c) ? r : m;
    }
    return m;
}

/* Per level and operation: the cells below thr, as runs of consecutive sizes of the grid. */
static void print_below(const table *t, int c, double thr)
{
    int any = 0;

    printf("\ncells below %.2f (%s); sizes as runs of consecutive sizes, (n) cells a run:\n", thr,
           c == C_AB ? "ratio_base = base ns / chapoly ns" : "ratio = default ns / chapoly ns");
    for (int l = 0; l < t->nlevels; l++)
        for (int o = 0; o < t->nops; o++) {
            int below, cells, run = 0, col = 0;
            const row *m = min_row(t, t->levels[l], t->opnames[o], c, thr, &below, &cells);
            size_t a = 0, b = 0;

            if (below == 0)
                continue;
            any = 1;
            printf("  %-13s %-11s min %.3f at %zu B; %d cell%s:", t->levels[l], t->opnames[o],
                   V(m, c), m->size, below, below > 1 ? "s" : "");
            for (int i = 0; i <= t->n; i++) {
                const row *r = i < t->n ? &t->rows[i] : NULL;

                if (r && (strcmp(r->level, t->levels[l]) || strcmp(r->op, t->opnames[o])))
                    continue;
                if (r && V(r, c) < thr) {
                    a = run++ ? a : r->size;
                    b = r->size;
                    continue;
                }
                if (run > 0 && col > 60) {
                    printf("\n   ");
                    col = 0;
                }
                if (run > 0)
                    col += run > 1 ? printf(" %zu-%zu (%d)", a, b, run) : printf(" %zu", a);
                run = 0;
            }
            printf("\n");
        }
    if (!any)
        printf("  none\n");
}

/* Per level chapoly ns - floor ns / default ns - floor ns at 16, 64, 256 B; BoringSSL's seal. */
static void print_floor(const table *t)
{
    static const char *const fops[] = { "seal", "open", "chacha20", "quic-hp", "poly1305" };
    static const size_t fsz[] = { 16, 64, 256 }, hpsz[] = { 5, 16, 64 };
    int header = 0;

    for (size_t o = 0; o < 5; o++)
        for (int s = 0; s < 3; s++) {
            size_t size = o == 3 ? hpsz[s] : fsz[s];
            const row *r0 = NULL;

            for (int l = 0; l < t->nlevels && r0 == NULL; l++)
                if ((r0 = find(t, t->levels[l], fops[o], size)) && isnan(V(r0, C_FLOOR)))
                    r0 = NULL;
            if (r0 == NULL)
                continue;
            if (!header++) {
                printf("\nthe floor (the same EVP calls into a provider doing no cryptography): floor"
                       " ns, then per level\nchapoly ns - floor ns / default ns - floor ns (medians of"
                       " per-repetition differences),\nand BoringSSL's whole one-shot seal\n  %-9s"
                       " %5s %7s", "op", "bytes", "floor");
                for (int l = 0; l < t->nlevels; l++)
                    printf(" %15s", t->levels[l]);
                printf(" %9s\n", "boringssl");
            }
            printf("  %-9s %5zu %7.1f", fops[o], size, V(r0, C_FLOOR));
            for (int l = 0; l < t->nlevels; l++) {
                const row *r = find(t, t->levels[l], fops[o], size);
                char pair[48] = "-";

                if (r && !isnan(V(r, C_CHF)) && !isnan(V(r, C_DEFF)))
                    snprintf(pair, sizeof(pair), "%.0f / %.0f", V(r, C_CHF), V(r, C_DEFF));
                printf(" %15s", pair);
            }
            if (!isnan(V(r0, C_BORING)))
                printf(" %9.1f", V(r0, C_BORING));
            printf("\n");
        }
}

static void print_headline(const table *t, int c, double thr)
{
    int below, cells;
    const char *name = c == C_AB ? "worst vs base" : "headline";

    printf("\n%s: %s; > 1: chapoly is faster\n", name, c == C_AB
           ? "ratio_base = base ns / chapoly ns" : "ratio = default ns / chapoly ns (xseal/xopen:"
                                                   " libsodium's or BoringSSL's)");
    for (int l = 0; l <= t->nlevels; l++) {
        const char *level = l < t->nlevels ? t->levels[l] : NULL;
        const row *m = min_row(t, level, NULL, c, thr, &below, &cells);

        if (m && level)
            printf("  %-14s min %.3f at %s %zu B (kernel %s); %d of %d cells below %.2f\n", level,
                   V(m, c), m->op, m->size, m->kernel, below, cells, thr);
        else if (m)
            printf("%s: min ratio %.3f at %s %zu B, level %s; %d of %d cells below %.2f\n", name,
                   V(m, c), m->op, m->size, m->level, below, cells, thr);
    }
}

/* ------------------------------------------------------------------ */
/* Heat map                                                            */

static int size_index(const table *t, size_t v)
{
    size_t *p = bsearch(&v, t->sizes, (size_t)t->nsizes, sizeof(size_t), cmp_size);

    return p ? (int)(p - t->sizes) : -1;
}

/*
 * One panel per level: x the size index, y the operation, colour
 * log2(ratio) on a diverging scale with its break at 1.0 (red below, blue
 * above); grey where nothing was measured, black where a check failed.
 */
static void heat_map(const table *t, const char *png)
{
    static const size_t ticks[] = { 1, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 65536 };
    FILE *g = system("command -v gnuplot >/dev/null 2>&1") == 0 ? popen("gnuplot", "w") : NULL;
    int last = -t->nsizes, n = 0, below, cells;

    if (g == NULL) {
        printf("\n(no heat map: gnuplot not installed; apt-get install gnuplot-nox)\n");
        return;
    }
    for (int l = 0; l < t->nlevels; l++)
        for (int bad = 0; bad < 2; bad++) {
            fprintf(g, "$d%d_%d << EOD\n", l, bad);
            for (int i = 0; i < t->n; i++) {
                const row *r = &t->rows[i];

                int o = 0;

                while (o < t->nops && strcmp(t->opnames[o], r->op) != 0)
                    o++;
                if (!strcmp(r->level, t->levels[l]) && (strcmp(r->check, "ok") != 0) == bad
                    && (bad || !isnan(V(r, C_RATIO))))
                    fprintf(g, "%d %d %.4f\n", size_index(t, r->size),
                            o, bad ? 0.0 : log2(V(r, C_RATIO)));
            }
            fprintf(g, "0 -10 0\nEOD\n"); /* off-range: a block is never empty */
        }
    fprintf(g, "set terminal png size 1200,%d noenhanced font ',8'\nset output '%s'\n"
               "set multiplot layout %d,1 title 'chapoly vs the default provider: ratio = default"
               " ns / chapoly ns (xseal/xopen: libsodium), red below 1.0, grey not measured,"
               " black failed check'\n"
               "set palette defined (-0.5 '#67001f', -0.25 '#d6604d', -0.0001 '#f4a582', 0 '#e0ecf4',"
               " 0.5 '#92c5de', 1 '#4393c3', 1.5 '#053061')\nset cbrange [-0.5:1.5]\n"
               "set cbtics ('0.71' -0.5, '0.84' -0.25, '1.0' 0, '1.41' 0.5, '2.0' 1, '2.83' 1.5)\n"
               "set style fill solid noborder\nset xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n"
               "set object 1 rectangle from graph 0,0 to graph 1,1 behind fc rgb '#c8c8c8'\n"
               "set xlabel 'message bytes (size index: every size swept, not to scale)'\nset xtics (",
            80 + 230 * t->nlevels, png, t->nlevels, t->nsizes - 1, t->nops - 1);
    for (size_t k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++) {
        int x = size_index(t, ticks[k]); /* at least 1/60 of the width apart; the last always */

        if (x < 0 || (x != t->nsizes - 1 && (x - last < t->nsizes / 60 || t->nsizes - 1 - x < t->nsizes / 60)))
            continue;
        fprintf(g, "%s'%zu%s' %d", n++ ? ", " : "", ticks[k] >= 1024 ? ticks[k] / 1024 : ticks[k],
                ticks[k] >= 1024 ? "K" : "", x);
        last = x;
    }
    fprintf(g, ")\nset ytics (");
    for (int o = 0; o < t->nops; o++)
        fprintf(g, "%s'%s' %d", o ? ", " : "", t->opnames[o], o);
    fprintf(g, ")\n");
    for (int l = 0; l < t->nlevels; l++) {
        const row *m = min_row(t, t->levels[l], NULL, C_RATIO, 1.0, &below, &cells);

        fprintf(g, "set title \"level %s: chapoly kernel %s, default %s; min %.3f at %s %zu B;"
                   " %d of %d cells below 1.0\"\nplot $d%d_0 using 1:2:(0.5):(0.5):3 with"
                   " boxxyerror fc palette notitle, $d%d_1 using 1:2:(0.5):(0.5) with boxxyerror"
                   " fc rgb 'black' notitle\n", t->levels[l], m ? m->kernel : "?",
                m ? (strcmp(m->limit, "none") ? m->limit : "unlimited") : "?",
                m ? V(m, C_RATIO) : NAN, m ? m->op : "-", m ? m->size : 0, below, cells, l, l);
    }
    fprintf(g, "unset multiplot\n");
    printf(pclose(g) == 0 ? "\nheat map: %s\n" : "\n(heat map failed: gnuplot error, %s)\n", png);
}

int sweep_report(const char *csv, const char *png, double worse)
{
    table t = read_csv(csv);
    int nbroken = 0;

    if (t.n == 0)
        die("sweep: %s has no rows", csv);
    print_below(&t, C_RATIO, 1.0);
    if (t.has_ab)
        print_below(&t, C_AB, worse);
    print_floor(&t);
    for (int i = 0; i < t.n; i++)
        if (strcmp(t.rows[i].check, "ok") != 0)
            printf("%s  %s %s %zu: %s\n", nbroken++ ? "" : "\nFAILED OUTPUT CHECKS (not timed):\n",
                   t.rows[i].level, t.rows[i].op, t.rows[i].size, t.rows[i].check);
    heat_map(&t, png);
    print_headline(&t, C_RATIO, 1.0);
    if (t.has_ab)
        print_headline(&t, C_AB, worse);
    fflush(stdout);
    free(t.rows);
    free(t.sizes);
    return nbroken ? 2 : 0;
}
