/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp sweep: the report, made from the CSV alone (so --report can
 * redo it for an earlier run): every cell below 1.0, the floor table, the
 * heat map (gnuplot), and last the headline, the minimum ratio per level
 * and overall. With a base build (--base) the same for the ratio to it: the
 * cells worse than --base-worse and the worst one. A cell measured in
 * several processes (--layouts: rows with layout 2..) is one row here, the
 * median process's (its ratio, and its ns beside it), with the first
 * process's ratio and the lowest kept.
 */
#include "bench_sweep.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

typedef struct row {
    char level[24], kernel[24], limit[48], op[24], baseline[16], check[400];
    size_t size;
    double ch, base, ratio, ratio_first, floor, ch_floor, base_floor, boring;
    double ab, ab_ratio, ab_first; /* --base: base ns, base ns / chapoly ns (final, first) */
    int remeasured;
    int layouts;                   /* processes that measured the cell */
    double lch[SWEEP_MAX_LAYOUTS], lbase[SWEEP_MAX_LAYOUTS], lratio[SWEEP_MAX_LAYOUTS];
    double ratio_own, ratio_low;   /* with layouts > 1: the level's own process, the lowest */
} row;

typedef struct table {
    row *rows;
    int n;
    const char *levels[SWEEP_MAX_LEVELS];
    int nlevels;
    const char *opnames[N_OPS];
    int nops;
    size_t *sizes;  /* every size of any row, ascending */
    int nsizes;
    int has_ab;     /* some row has a ratio to the base */
} table;

/* The ratio a report is about: to the default (ab 0) or to the base (ab 1). */
static double rv(const row *r, int ab)
{
    return ab ? r->ab_ratio : r->ratio;
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */

/* The columns from C_AB on are optional (CSVs from before --base lack them). */
enum { C_LEVEL, C_KERNEL, C_LIMIT, C_OP, C_SIZE, C_BASE, C_CHECK, C_CH, C_DEF, C_RATIO,
       C_REMEASURED, C_FIRST, C_FLOOR, C_CHF, C_DEFF, C_BORING, C_AB, C_ABR, C_ABF, C_LAYOUT,
       C_N };
static const char *const col_name[C_N] = {
    "level", "kernel", "default_limit", "op", "size", "baseline", "check", "chapoly_ns",
    "default_ns", "ratio", "remeasured", "ratio_first", "floor_ns", "chapoly_above_floor_ns",
    "default_above_floor_ns", "boringssl_ns", "base_ns", "ratio_base", "ratio_base_first",
    "layout",
};

static int split(char *line, char **f, int max)
{
    int n = 0;

    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max; p++) {
        f[n++] = p;
        p = strchr(p, ',');
        if (p == NULL)
            break;
        *p = '\0';
    }
    return n;
}

static double num(const char *s)
{
    return *s ? atof(s) : NAN;
}

static void copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;

    return (x > y) - (x < y);
}

static void index_table(table *t)
{
    t->sizes = malloc(((size_t)t->n + 1) * sizeof(size_t));
    if (t->sizes == NULL)
        die("out of memory");
    for (int i = 0; i < t->n; i++) {
        row *r = &t->rows[i];
        int k;

        for (k = 0; k < t->nlevels && strcmp(t->levels[k], r->level) != 0; k++)
            ;
        if (k == t->nlevels && t->nlevels < SWEEP_MAX_LEVELS)
            t->levels[t->nlevels++] = r->level;
        for (k = 0; k < t->nops && strcmp(t->opnames[k], r->op) != 0; k++)
            ;
        if (k == t->nops && t->nops < N_OPS)
            t->opnames[t->nops++] = r->op;
        t->sizes[t->nsizes++] = r->size;
    }
    qsort(t->sizes, (size_t)t->nsizes, sizeof(size_t), cmp_size);
    int u = 0;
    for (int i = 0; i < t->nsizes; i++)
        if (u == 0 || t->sizes[u - 1] != t->sizes[i])
            t->sizes[u++] = t->sizes[i];
    t->nsizes = u;
}

/*
 * A row of process 2.. (--layouts) joins the row of its cell read before
 * (the level's own process wrote all its rows first); 0 if there is none.
 */
static int add_layout(table *t, const char *level, const char *op, size_t size, double ch,
                      double base, double ratio)
{
    for (int i = t->n - 1; i >= 0; i--) {
        row *r = &t->rows[i];

        if (r->size != size || strcmp(r->op, op) != 0 || strcmp(r->level, level) != 0)
            continue;
        if (r->layouts < SWEEP_MAX_LAYOUTS) {
            r->lch[r->layouts] = ch;
            r->lbase[r->layouts] = base;
            r->lratio[r->layouts++] = ratio;
        }
        return 1;
    }
    return 0;
}

/* A cell of several processes: the median process's numbers (lower middle of an even count). */
static void take_median(row *r)
{
    int idx[SWEEP_MAX_LAYOUTS], n = r->layouts;

    if (n < 2)
        return;
    for (int i = 0; i < n; i++)
        idx[i] = i;
    for (int i = 1; i < n; i++) /* insertion sort by ratio; NAN last */
        for (int j = i; j > 0 && (isnan(r->lratio[idx[j - 1]])
                                  || r->lratio[idx[j]] < r->lratio[idx[j - 1]]); j--) {
            int x = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = x;
        }
    int m = idx[(n - 1) / 2];
    r->ratio_low = r->lratio[idx[0]];
    r->ch = r->lch[m];
    r->base = r->lbase[m];
    r->ratio = r->lratio[m];
}

static table read_csv(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[2048], *fld[32];
    int col[C_N], cap = 1024;
    table t = { 0 };

    if (f == NULL)
        die("sweep: cannot read %s: %s", path, strerror(errno));
    if (fgets(line, sizeof(line), f) == NULL)
        die("sweep: %s is empty", path);
    int nf = split(line, fld, 32);
    for (int c = 0; c < C_N; c++) {
        col[c] = -1;
        for (int i = 0; i < nf; i++)
            if (strcmp(fld[i], col_name[c]) == 0)
                col[c] = i;
        if (col[c] < 0 && c < C_AB)
            die("sweep: %s has no column %s", path, col_name[c]);
    }
    t.rows = malloc((size_t)cap * sizeof(row));
    while (t.rows != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (split(line, fld, 32) != nf)
            die("sweep: %s: a row without %d fields", path, nf);
        if (col[C_LAYOUT] >= 0 && atoi(fld[col[C_LAYOUT]]) > 1
            && add_layout(&t, fld[col[C_LEVEL]], fld[col[C_OP]],
                          (size_t)strtoull(fld[col[C_SIZE]], NULL, 10), num(fld[col[C_CH]]),
                          num(fld[col[C_DEF]]), num(fld[col[C_RATIO]])))
            continue; /* another process's row of a cell read already */
        if (t.n == cap && (t.rows = realloc(t.rows, (size_t)(cap *= 2) * sizeof(row))) == NULL)
            break;
        row *r = &t.rows[t.n++];
        copy(r->level, sizeof(r->level), fld[col[C_LEVEL]]);
        copy(r->kernel, sizeof(r->kernel), fld[col[C_KERNEL]]);
        copy(r->limit, sizeof(r->limit), fld[col[C_LIMIT]]);
        copy(r->op, sizeof(r->op), fld[col[C_OP]]);
        copy(r->baseline, sizeof(r->baseline), fld[col[C_BASE]]);
        copy(r->check, sizeof(r->check), fld[col[C_CHECK]]);
        r->size = (size_t)strtoull(fld[col[C_SIZE]], NULL, 10);
        r->ch = num(fld[col[C_CH]]);
        r->base = num(fld[col[C_DEF]]);
        r->ratio = num(fld[col[C_RATIO]]);
        r->remeasured = atoi(fld[col[C_REMEASURED]]);
        r->ratio_first = num(fld[col[C_FIRST]]);
        r->floor = num(fld[col[C_FLOOR]]);
        r->ch_floor = num(fld[col[C_CHF]]);
        r->base_floor = num(fld[col[C_DEFF]]);
        r->boring = num(fld[col[C_BORING]]);
        r->ab = col[C_AB] >= 0 ? num(fld[col[C_AB]]) : NAN;
        r->ab_ratio = col[C_ABR] >= 0 ? num(fld[col[C_ABR]]) : NAN;
        r->ab_first = col[C_ABF] >= 0 ? num(fld[col[C_ABF]]) : NAN;
        t.has_ab |= !isnan(r->ab_ratio);
        r->layouts = 1;
        r->lch[0] = r->ch;
        r->lbase[0] = r->base;
        r->lratio[0] = r->ratio_own = r->ratio_low = r->ratio;
    }
    fclose(f);
    if (t.rows == NULL)
        die("out of memory");
    for (int i = 0; i < t.n; i++)
        take_median(&t.rows[i]);
    index_table(&t);
    return t;
}

/* ------------------------------------------------------------------ */
/* Text                                                                */

static const row *find(const table *t, const char *level, const char *op, size_t size)
{
    for (int i = 0; i < t->n; i++)
        if (t->rows[i].size == size && strcmp(t->rows[i].level, level) == 0
            && strcmp(t->rows[i].op, op) == 0)
            return &t->rows[i];
    return NULL;
}

/*
 * The row with the lowest ratio (ab: to the base) of a level (NULL: all
 * levels); *below counts the cells under thr.
 */
static const row *min_row(const table *t, const char *level, int ab, double thr, int *below,
                          int *cells)
{
    const row *m = NULL;

    *below = *cells = 0;
    for (int i = 0; i < t->n; i++) {
        const row *r = &t->rows[i];
        if ((level && strcmp(r->level, level) != 0) || isnan(rv(r, ab)))
            continue;
        (*cells)++;
        *below += rv(r, ab) < thr;
        if (m == NULL || rv(r, ab) < rv(m, ab))
            m = r;
    }
    return m;
}

/* Appends "A-B (n)" or "A" for a run of consecutive grid sizes, wrapping long lines. */
static void print_run(int *col, int *items, size_t a, size_t b, int n)
{
    char item[48];

    if (n > 1)
        snprintf(item, sizeof(item), "%zu-%zu (%d)", a, b, n);
    else
        snprintf(item, sizeof(item), "%zu", a);
    if (*items > 0 && *col + (int)strlen(item) > 96) {
        printf(",\n%30s", "");
        *col = 30;
    } else if (*items > 0) {
        printf(", ");
        *col += 2;
    }
    printf("%s", item);
    *col += (int)strlen(item);
    (*items)++;
}

/*
 * Per level and operation: how many cells are below thr (1.0; to the base:
 * --base-worse), the lowest, and the sizes as runs of consecutive grid
 * sizes (the CSV has every ratio).
 */
static void print_below(const table *t, int ab, double thr)
{
    int any = 0;

    if (ab)
        printf("\ncells more than %.0f %% slower than the base after re-measuring (ratio_base = base"
               " ns /\nchapoly ns below %.2f); sizes as runs of consecutive sizes of the grid:\n",
               100 * (1 - thr), thr);
    else
        printf("\ncells below 1.0 after re-measuring (ratio = default ns / chapoly ns); sizes as"
               " runs\nof consecutive sizes of the grid, (n) cells in a run:\n");
    for (int l = 0; l < t->nlevels; l++)
        for (int o = 0; o < t->nops; o++) {
            const row *m = NULL;
            int n = 0, col = 30, run = 0, items = 0;
            size_t a = 0, b = 0;

            for (int i = 0; i < t->n; i++) {
                const row *r = &t->rows[i];
                if (strcmp(r->level, t->levels[l]) || strcmp(r->op, t->opnames[o]))
                    continue;
                if (isnan(rv(r, ab)) || rv(r, ab) >= thr) {
                    if (run)
                        print_run(&col, &items, a, b, run);
                    run = 0;
                    continue;
                }
                if (n++ == 0) {
                    const row *lo = r;
                    for (int k = i; k < t->n; k++)
                        if (!strcmp(t->rows[k].level, r->level) && !strcmp(t->rows[k].op, r->op)
                            && rv(&t->rows[k], ab) < rv(lo, ab))
                            lo = &t->rows[k];
                    m = lo;
                    printf("  %-13s %-11s min %.3f at %zu B: ", t->levels[l], t->opnames[o],
                           rv(m, ab), m->size);
                    col = 30 + 24;
                }
                if (run == 0)
                    a = r->size;
                b = r->size;
                run++;
            }
            if (run)
                print_run(&col, &items, a, b, run);
            if (n) {
                printf("; %d cell%s\n", n, n > 1 ? "s" : "");
                any = 1;
            }
        }
    if (!any)
        printf("  none\n");
}

/*
 * chapoly's and the default's cost above the floor at 16, 64, 256 bytes
 * (quic-hp: 5, 16, 64), one column pair per level, BoringSSL's one-shot
 * seal beside it.
 */
static void print_floor(const table *t)
{
    static const char *const fops[] = { "seal", "open", "chacha20", "quic-hp", "poly1305" };
    static const size_t fsz[] = { 16, 64, 256 }, hpsz[] = { 5, 16, 64 };
    int header = 0;

    for (size_t o = 0; o < sizeof(fops) / sizeof(fops[0]); o++)
        for (int s = 0; s < 3; s++) {
            size_t size = strcmp(fops[o], "quic-hp") == 0 ? hpsz[s] : fsz[s];
            const row *r0 = NULL;
            for (int l = 0; l < t->nlevels && r0 == NULL; l++) {
                r0 = find(t, t->levels[l], fops[o], size);
                r0 = r0 && !isnan(r0->floor) ? r0 : NULL;
            }
            if (r0 == NULL)
                continue;
            if (!header) {
                printf("\nthe floor (bench_floor: the same EVP calls into a provider that does no\n"
                       "cryptography): floor ns, then per level chapoly ns - floor ns / default ns -"
                       " floor ns\n(medians of per-repetition differences), and BoringSSL's"
                       " one-shot EVP_AEAD_CTX_seal\n  %-9s %5s %7s", "op", "bytes", "floor");
                for (int l = 0; l < t->nlevels; l++)
                    printf(" %15s", t->levels[l]);
                printf(" %9s\n", "boringssl");
                header = 1;
            }
            printf("  %-9s %5zu %7.1f", fops[o], size, r0->floor);
            for (int l = 0; l < t->nlevels; l++) {
                const row *r = find(t, t->levels[l], fops[o], size);
                char pair[48] = "-";
                if (r && !isnan(r->ch_floor) && !isnan(r->base_floor))
                    snprintf(pair, sizeof(pair), "%.0f / %.0f", r->ch_floor, r->base_floor);
                printf(" %15s", pair);
            }
            if (!isnan(r0->boring))
                printf(" %9.1f", r0->boring);
            printf("\n");
        }
}

static int print_broken(const table *t)
{
    int n = 0;

    for (int i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].check, "ok") != 0) {
            if (n++ == 0)
                printf("\nFAILED OUTPUT CHECKS (those implementations were not timed):\n");
            printf("  %s %s %zu: %s\n", t->rows[i].level, t->rows[i].op, t->rows[i].size,
                   t->rows[i].check);
        }
    return n;
}

/* With a base: the worst ratio to it per level and overall, and the cells worse than thr. */
static void print_base_headline(const table *t, double thr)
{
    int worse, cells;
    const row *m = min_row(t, NULL, 1, thr, &worse, &cells);

    printf("\nheadline vs base: ratio_base = base ns / chapoly ns; > 1: this build is faster than"
           " the base\n");
    for (int l = 0; l < t->nlevels; l++) {
        int w, c;
        const row *r = min_row(t, t->levels[l], 1, thr, &w, &c);
        if (r != NULL)
            printf("  %-14s worst %.3f at %s %zu B; %d of %d cells below %.2f\n", t->levels[l],
                   r->ab_ratio, r->op, r->size, w, c, thr);
    }
    if (m != NULL)
        printf("worst vs base: ratio %.3f at %s/%zu/%s; %d of %d cells more than %.0f %% worse"
               " than base (below %.2f)\n", m->ab_ratio, m->op, m->size, m->level, worse, cells,
               100 * (1 - thr), thr);
}

static void print_headline(const table *t)
{
    int below, cells;
    const row *m = min_row(t, NULL, 0, 1.0, &below, &cells);

    printf("\nheadline: ratio = default ns / chapoly ns (for xseal/xopen libsodium's); > 1: chapoly"
           " is faster\n");
    for (int l = 0; l < t->nlevels; l++) {
        const row *r = min_row(t, t->levels[l], 0, 1.0, &below, &cells);
        if (r != NULL)
            printf("  %-14s min %.3f at %s %zu B (kernel %s); %d of %d cells below 1.0\n",
                   t->levels[l], r->ratio, r->op, r->size, r->kernel, below, cells);
    }
    min_row(t, NULL, 0, 1.0, &below, &cells);
    if (m != NULL)
        printf("headline: min ratio %.3f at %s %zu B, level %s; %d of %d cells below 1.0\n",
               m->ratio, m->op, m->size, m->level, below, cells);
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
 * log2(ratio) on a diverging scale with a break at 1.0, every cell below it
 * red, above it blue; grey where nothing was measured, black where an
 * output check failed.
 */
static int heat_map(const table *t, const char *png)
{
    static const size_t ticks[] = { 1, 16, 64, 256, 1024, 2048, 4096, 8192, 16384, 65536 };

    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("\n(no heat map: gnuplot not installed; apt-get install gnuplot-nox)\n");
        return 0;
    }
    FILE *g = popen("gnuplot", "w");
    if (g == NULL)
        return 0;
    for (int l = 0; l < t->nlevels; l++) {
        for (int bad = 0; bad < 2; bad++) {
            fprintf(g, "$d%d_%d << EOD\n", l, bad);
            for (int i = 0; i < t->n; i++) {
                const row *r = &t->rows[i];
                int o;
                for (o = 0; o < t->nops && strcmp(t->opnames[o], r->op) != 0; o++)
                    ;
                int is_bad = strcmp(r->check, "ok") != 0 && isnan(r->ratio);
                if (strcmp(r->level, t->levels[l]) != 0 || is_bad != bad
                    || (!bad && isnan(r->ratio)))
                    continue;
                fprintf(g, "%d %d %.5f\n", size_index(t, r->size), o,
                        bad ? 0.0 : log2(r->ratio));
            }
            fprintf(g, "0 -10 0\nEOD\n"); /* off-range point: a block is never empty */
        }
    }
    fprintf(g, "set terminal pngcairo size 1800,%d noenhanced font ',9'\n"
               "set output '%s'\n"
               "set multiplot layout %d,1 title 'chapoly vs the default provider: ratio = default"
               " ns / chapoly ns (xseal/xopen: libsodium), red below 1.0, grey not measured,"
               " black failed check'\n",
            120 + 330 * t->nlevels, png, t->nlevels);
    fprintf(g, "set palette defined (-0.5 '#67001f', -0.25 '#d6604d', -0.0001 '#f4a582',"
               " 0 '#e0ecf4', 0.5 '#92c5de', 1 '#4393c3', 1.5 '#053061')\n"
               "set cbrange [-0.5:1.5]\n"
               "set cbtics ('0.71' -0.5, '0.84' -0.25, '1.0' 0, '1.41' 0.5, '2.0' 1, '2.83' 1.5)\n"
               "set style fill solid noborder\nset xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n",
            t->nsizes - 1, t->nops - 1);
    /* size ticks at least 1/60 of the width apart; the largest size always */
    fprintf(g, "set xtics (");
    int last = -t->nsizes, n = 0;
    for (size_t k = 0; k < sizeof(ticks) / sizeof(ticks[0]); k++) {
        int x = size_index(t, ticks[k]), top = ticks[k] == t->sizes[t->nsizes - 1];
        if (x < 0 || (!top && x - last < t->nsizes / 60)
            || (!top && t->nsizes - 1 - x < t->nsizes / 60 && x != t->nsizes - 1))
            continue;
        if (ticks[k] >= 1024)
            fprintf(g, "%s'%zuK' %d", n ? ", " : "", ticks[k] / 1024, x);
        else
            fprintf(g, "%s'%zu' %d", n ? ", " : "", ticks[k], x);
        last = x;
        n++;
    }
    fprintf(g, ")\nset ytics (");
    for (int o = 0; o < t->nops; o++)
        fprintf(g, "%s'%s' %d", o ? ", " : "", t->opnames[o], o);
    fprintf(g, ")\nset xlabel 'message bytes (size index: every size swept, not to scale)'\n"
               "set object 1 rectangle from graph 0,0 to graph 1,1 behind fc rgb '#c8c8c8'"
               " fs solid\n");
    for (int l = 0; l < t->nlevels; l++) {
        int below, cells;
        const row *m = min_row(t, t->levels[l], 0, 1.0, &below, &cells);
        const char *kernel = "?", *limit = "?";
        for (int i = 0; i < t->n; i++)
            if (strcmp(t->rows[i].level, t->levels[l]) == 0) {
                kernel = t->rows[i].kernel;
                limit = strcmp(t->rows[i].limit, "none") == 0 ? "unlimited" : t->rows[i].limit;
                break;
            }
        fprintf(g, "set title \"level %s: chapoly kernel %s, default %s; min %.3f at %s %zu B;"
                   " %d of %d cells below 1.0\"\n",
                t->levels[l], kernel, limit, m ? m->ratio : NAN, m ? m->op : "-",
                m ? m->size : 0, below, cells);
        fprintf(g, "plot $d%d_0 using 1:2:(0.5):(0.5):3 with boxxyerror fc palette notitle, "
                   "$d%d_1 using 1:2:(0.5):(0.5) with boxxyerror fc rgb 'black' notitle\n", l, l);
    }
    fprintf(g, "unset multiplot\n");
    if (pclose(g) != 0) {
        printf("\n(heat map failed: gnuplot error)\n");
        return 0;
    }
    printf("\nheat map: %s\n", png);
    return 1;
}

/*
 * The cells measured in more than one process, per level: how many, how
 * many of them the median leaves below 1.0, and the lowest single process.
 */
static void print_layouts(const table *t)
{
    int header = 0;

    for (int l = 0; l < t->nlevels; l++) {
        const row *lo = NULL, *worst = NULL;
        int n = 0, below = 0, procs = 0;

        for (int i = 0; i < t->n; i++) {
            const row *r = &t->rows[i];
            if (r->layouts < 2 || strcmp(r->level, t->levels[l]) != 0)
                continue;
            n++;
            below += r->ratio < 1.0;
            procs = r->layouts > procs ? r->layouts : procs;
            if (lo == NULL || r->ratio < lo->ratio)
                lo = r;
            if (worst == NULL || r->ratio_low < worst->ratio_low)
                worst = r;
        }
        if (n == 0)
            continue;
        if (!header++)
            printf("\ncells measured in more than one process (another address layout each,"
                   " --layouts);\nratio = the median process's:\n");
        printf("  %-13s %d cell%s in %d processes: %d below 1.0 in the median (lowest %.3f at"
               " %s %zu B);\n                one process alone: lowest %.3f at %s %zu B\n",
               t->levels[l], n, n > 1 ? "s" : "", procs, below, lo->ratio, lo->op, lo->size,
               worst->ratio_low, worst->op, worst->size);
    }
}

int sweep_cells_below(const char *csv, const char *level, double below, char **list)
{
    table t = read_csv(csv);
    size_t len = 0, cap = 256;
    char *s = malloc(cap);
    int n = 0;

    if (s == NULL)
        die("out of memory");
    s[0] = '\0';
    for (int i = 0; i < t.n; i++) {
        const row *r = &t.rows[i];
        char item[64];

        if (strcmp(r->level, level) != 0 || r->layouts != 1 || !(r->ratio < below))
            continue;
        int k = snprintf(item, sizeof(item), "%s%s:%zu", n ? "," : "", r->op, r->size);
        if (len + (size_t)k + 1 > cap && (s = realloc(s, cap = 2 * (len + (size_t)k + 1))) == NULL)
            die("out of memory");
        memcpy(s + len, item, (size_t)k + 1);
        len += (size_t)k;
        n++;
    }
    free(t.rows);
    free(t.sizes);
    if (n == 0) {
        free(s);
        s = NULL;
    }
    *list = s;
    return n;
}

int sweep_report(const char *csv, const char *png)
{
    table t = read_csv(csv);

    if (t.n == 0)
        die("sweep: %s has no rows", csv);
    print_layouts(&t);
    print_below(&t, 0, 1.0);
    if (t.has_ab)
        print_below(&t, 1, scfg.base_worse);
    print_floor(&t);
    int nbroken = print_broken(&t);
    heat_map(&t, png);
    print_headline(&t);
    if (t.has_ab)
        print_base_headline(&t, scfg.base_worse);
    fflush(stdout);
    free(t.rows);
    free(t.sizes);
    return nbroken ? 2 : 0;
}
