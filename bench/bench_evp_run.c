/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: the run. Cells (operation x size) with one job per
 * implementation; every output checked once against a reference before any
 * timing; repetitions outermost, the implementations of a cell back to back
 * in a rotating order. And the thread-scaling rounds of --threads.
 */
#include "bench_evp.h"

#include <pthread.h>
#include <stdlib.h>
#include <openssl/err.h>

/* ------------------------------------------------------------------ */
/* Cells: output check, calibration, repetitions                       */

int job_ok_or_note(cell *c, int im, int ok, const char *what)
{
    if (!ok && !c->broken[im]) {
        c->broken[im] = 1;
        snprintf(c->why[im], sizeof(c->why[im]), "%s", what);
        ERR_clear_error();
    }
    return ok;
}

void prepare_ct(cell *c, bufset *b)
{
    if (b->ct_op == c->op && b->ct_size == c->size)
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

/* Output of one message of size n, comparable across implementations. */
static size_t result_len(const opdef *op, size_t n)
{
    switch (op->kind) {
    case K_POLY: return TAG_LEN;
    case K_CHACHA: case K_HP: case K_OPEN: case K_TLS: return n;
    default: return n + TAG_LEN;
    }
}

/*
 * What the floor (bench_floor.c) promises for one message: the input copied
 * (open: the ciphertext), then a zero tag; the MAC: a zero tag. Checking it
 * shows the EVP calls reached it and did what is timed.
 */
static int floor_output_ok(const cell *c, const bufset *b, const uint8_t *got)
{
    static const uint8_t zero[TAG_LEN];
    size_t n = c->size;

    switch (c->op->kind) {
    case K_POLY: return memcmp(got, zero, TAG_LEN) == 0;
    case K_OPEN: return memcmp(got, b->ct[0], n) == 0;
    case K_CHACHA: case K_HP: return memcmp(got, b->in, n) == 0;
    default: return memcmp(got, b->in, n) == 0 && memcmp(got + n, zero, TAG_LEN) == 0;
    }
}

static void check_cell(cell *c, bufset *b)
{
    size_t n = c->size, len = result_len(c->op, n);
    uint8_t *ref = malloc(len), *got = malloc(len);
    int have_ref = 0;

    if (ref == NULL || got == NULL)
        die("out of memory");
    if (c->prep)
        prepare_ct(c, b);
    for (int r = 0; r < IM_N; r++) {
        int im = ref_order[r];
        job *j = c->jobs[im];

        if (j == NULL || c->broken[im])
            continue;
        memset(b->out, 0xa5, n + TAG_LEN);
        j->seq = c->op->kind == K_OPEN ? 0 : CHECK_SEQ;
        if (!job_ok_or_note(c, im, j->run(j, n, 1), "call failed"))
            continue;
        memcpy(got, b->out, len);
        if (im == IM_FLOOR) {
            job_ok_or_note(c, im, floor_output_ok(c, b, got), "floor: not a copy and zero tag");
            continue;
        }
        if (c->op->kind == K_OPEN) {
            /* The ciphertexts come from the reference, so the plaintext is the oracle. */
            job_ok_or_note(c, im, memcmp(got, b->in, n) == 0, "wrong plaintext");
            c->ref = c->prep->impl;
            if (c->prep->impl != im)
                c->checked = 1;
            continue;
        }
        if (c->op->kind == K_TLS) {
            job_ok_or_note(c, im, memcmp(got, b->in, n) == 0, "wrong plaintext");
            c->ref = IM_DEFAULT;
            /* Both ends of that pair use the same provider: cross it with the default one. */
            if ((im == IM_CHAPOLY || im == IM_BASE) && c->jobs[IM_DEFAULT] != NULL
                && !c->broken[im])
                job_ok_or_note(c, im, tls_cross_check(im, c->op->x, n, b),
                               "records not interoperable with the default provider");
            c->checked = 1;
            continue;
        }
        if (!have_ref) {
            memcpy(ref, got, len);
            have_ref = 1;
            c->ref = im;
            continue;
        }
        c->checked = 1;
        job_ok_or_note(c, im, memcmp(got, ref, len) == 0, "output differs from reference");
    }
    free(ref);
    free(got);
}

/* The job that seals the ciphertexts an open cell decrypts: the first reference that can. */
job *seal_job_for(const opdef *open, bufset *b)
{
    const opdef *sealop = NULL;
    job *prep = NULL;

    for (size_t k = 0; k < N_OPS; k++)
        if (ops[k].kind == K_SEAL && ops[k].x == open->x && ops[k].aad == open->aad)
            sealop = &ops[k];
    for (int r = 0; r < IM_N && prep == NULL; r++)
        prep = job_new(sealop, ref_order[r], b);
    return prep;
}

/* The cells (operation x size) with one job per implementation and operation. */
int build_cells(cell *cells, bufset *b)
{
    int ncells = 0;

    for (size_t o = 0; o < N_OPS; o++) {
        if (!cfg.op_on[o])
            continue;
        job *jobs[IM_N] = { 0 };
        job *prep = NULL;
        int njobs = 0;
        for (int im = 0; im < IM_N; im++)
            if ((jobs[im] = job_new(&ops[o], im, b)) != NULL)
                njobs++;
        if (ops[o].kind == K_OPEN)
            prep = seal_job_for(&ops[o], b);
        if (njobs == 0 || (ops[o].kind == K_OPEN && prep == NULL)) {
            printf("  (skipping %s: no implementation available)\n", ops[o].name);
            continue;
        }
        if (ops[o].kind == K_TLS && tls_proof[ops[o].x == TLS1_3_VERSION] == 0 && jobs[IM_CHAPOLY]) {
            printf("  (%s: chapoly's TLS records were not routed through chapoly: chapoly row dropped)\n",
                   ops[o].name);
            jobs[IM_CHAPOLY] = NULL;
        }
        if (ops[o].kind == K_TLS && tls_proof_base[ops[o].x == TLS1_3_VERSION] == 0 && jobs[IM_BASE]) {
            printf("  (%s: the base's TLS records were not routed through it: base row dropped)\n",
                   ops[o].name);
            jobs[IM_BASE] = NULL;
        }
        static const size_t stream_sizes[] = STREAM_SIZES;
        int stream_default = ops[o].kind == K_STREAM && !cfg.sizes_given;
        int nsizes = stream_default ? 2 : cfg.nsizes;
        for (int s = 0; s < nsizes; s++) {
            if (ops[o].kind == K_TLS && cfg.sizes[s] > TLS_MAX_RECORD)
                continue; /* a record carries at most 16384 bytes: per-record figures only */
            cell *c = &cells[ncells++];
            c->op = &ops[o];
            c->size = stream_default ? stream_sizes[s] : cfg.sizes[s];
            memcpy(c->jobs, jobs, sizeof(jobs));
            c->prep = prep;
        }
    }
    return ncells;
}

/* Check every output once, then calibrate; returns how many (cell, implementation) are broken. */
int check_and_calibrate(cell *cells, int ncells, bufset *b)
{
    int nbroken = 0;

    for (int ci = 0; ci < ncells; ci++) {
        check_cell(&cells[ci], b);
        for (int im = 0; im < IM_N; im++) {
            if (cells[ci].jobs[im] && !cells[ci].broken[im]) {
                if (cells[ci].prep)
                    prepare_ct(&cells[ci], b);
                calibrate(&cells[ci], im, g_burst_ns);
            }
            if (cells[ci].jobs[im] && cells[ci].broken[im]) {
                nbroken++;
                fprintf(stderr, "bench_evp: %s %zu bytes %s: %s\n", cells[ci].op->name,
                        cells[ci].size, impl_name[im], cells[ci].why[im]);
            }
        }
    }
    return nbroken;
}

/* Repetition r of every cell: implementations of a cell back to back, rotating who goes first. */
void run_repetition(cell *cells, int ncells, bufset *b, int r)
{
    for (int ci = 0; ci < ncells; ci++) {
        cell *c = &cells[ci];
        if (c->prep)
            prepare_ct(c, b);
        for (int s = 0; s < IM_N; s++) {
            int im = (s + r + ci) % IM_N;
            if (c->jobs[im] && !c->broken[im])
                c->ns[im][r] = sample(c, im);
        }
    }
    probe_ghz();
}

/* Repetitions outermost, so the samples of a cell are spread over the whole run. */
void run_repetitions(cell *cells, int ncells, bufset *b)
{
    for (int r = 0; r < cfg.reps; r++)
        run_repetition(cells, ncells, b, r);
}

/* ------------------------------------------------------------------ */
/* Threads                                                             */

typedef struct thr_arg {
    job *j;
    size_t n;
    uint64_t chunk;
    double dur_ns;
    pthread_barrier_t *bar;
    double mbps;
    double cpu, wall;    /* this thread's CPU time and wall time in the round */
    int ok;
} thr_arg;

static void *thr_main(void *p)
{
    thr_arg *a = p;
    uint64_t done = 0;
    double t0, t;

    pthread_barrier_wait(a->bar);
    double c0 = cpu_ns();
    t0 = now_ns();
    do {
        if (!a->j->run(a->j, a->n, a->chunk)) {
            a->ok = 0;
            return NULL;
        }
        done += a->chunk;
        t = now_ns() - t0;
    } while (t < a->dur_ns);
    a->mbps = (double)done * (double)a->n * 1e3 / t;
    a->cpu = cpu_ns() - c0;
    a->wall = t;
    a->ok = 1;
    return NULL;
}

static int g_thread_broken;

/*
 * Aggregate MB/s of nt threads, each with its own job (contexts, buffers).
 * *share = CPU time the threads got / wall time: below ~0.95 other load, not
 * the implementation, limited the round.
 */
static double thread_round(job **jobs, int nt, size_t n, uint64_t chunk, double dur_ns,
                           double *share)
{
    pthread_t th[256];
    thr_arg a[256];
    pthread_barrier_t bar;
    double agg = 0, cpu = 0, wall = 0;

    pthread_barrier_init(&bar, NULL, (unsigned)nt);
    for (int t = 0; t < nt; t++) {
        a[t] = (thr_arg){ .j = jobs[t], .n = n, .chunk = chunk, .dur_ns = dur_ns, .bar = &bar };
        if (pthread_create(&th[t], NULL, thr_main, &a[t]) != 0)
            die("pthread_create failed");
    }
    for (int t = 0; t < nt; t++) {
        pthread_join(th[t], NULL);
        if (!a[t].ok)
            g_thread_broken = 1;
        agg += a[t].mbps;
        cpu += a[t].cpu;
        wall += a[t].wall;
    }
    pthread_barrier_destroy(&bar);
    *share = wall > 0 ? cpu / wall : 0;
    return agg;
}

static const size_t thread_sizes[] = { 64, 1350, 16384 };

/* Returns 1 when a thread saw a failing call. */
int run_threads(FILE *json)
{
    int nt = cfg.threads;
    size_t sizes[64];
    int ns = 0;
    const opdef *seal = &ops[0];
    int counts[2] = { 1, nt };
    int ncount = nt > 1 ? 2 : 1;

    if (cfg.sizes_given) {
        for (int i = 0; i < cfg.nsizes; i++)
            sizes[ns++] = cfg.sizes[i];
    } else if (cfg.quick) {
        sizes[ns++] = 64;
        sizes[ns++] = 16384;
    } else {
        for (size_t i = 0; i < sizeof(thread_sizes) / sizeof(thread_sizes[0]); i++)
            sizes[ns++] = thread_sizes[i];
    }
    size_t max = 0;
    for (int i = 0; i < ns; i++)
        if (sizes[i] > max)
            max = sizes[i];

    /* jobs[impl][thread], every thread with its own buffers and contexts */
    job *jobs[IM_N][256] = { { 0 } };
    bufset *bs[256];
    for (int t = 0; t < nt; t++) {
        bs[t] = bufset_new(max);
        for (int im = 0; im < IM_N; im++)
            jobs[im][t] = job_new(seal, im, bs[t]);
    }
    double dur = cfg.thread_ms * 1e6;
    int reps = cfg.reps;

    printf("\n== threads: %s, %d thread%s each with its own contexts and buffers,"
           " %.0f ms per round, median of %d rounds\n",
           "ChaCha20-Poly1305 seal (as 'seal')", nt, nt > 1 ? "s" : "", cfg.thread_ms, reps);
    printf("  (cpu = CPU time the threads got / their wall time; well below 100%% means other\n"
           "   processes, not the implementation, set the result)\n");
    printf("%7s  %-10s %12s %12s %9s %11s %7s %7s\n", "bytes", "impl", "1T MB/s",
           nt > 1 ? "NT MB/s" : "-", "scaling", "vs default", "cpu 1T", nt > 1 ? "cpu NT" : "");
    if (json)
        fprintf(json, ",\n  \"threads\": {\"threads\": %d, \"round_ms\": %.1f, \"rows\": [", nt,
                cfg.thread_ms);
    int first_row = 1;
    for (int si = 0; si < ns; si++) {
        size_t n = sizes[si];
        uint64_t chunk[IM_N] = { 0 };
        double agg[IM_N][2][MAX_REPS], share[IM_N][2][MAX_REPS];

        for (int im = 0; im < IM_N; im++) {
            if (jobs[im][0] == NULL)
                continue;
            /* ~0.5 ms between clock reads */
            cell tmp = { .op = seal, .size = n };
            tmp.jobs[im] = jobs[im][0];
            calibrate(&tmp, im, 0.5e6);
            chunk[im] = tmp.broken[im] ? 0 : tmp.iters[im];
        }
        for (int r = 0; r < reps; r++)
            for (int k = 0; k < ncount; k++)
                for (int s = 0; s < IM_N; s++) {
                    int im = (s + r) % IM_N;
                    if (chunk[im] == 0)
                        continue;
                    agg[im][k][r] = thread_round(jobs[im], counts[k], n, chunk[im], dur,
                                                 &share[im][k][r]);
                }
        double med[IM_N][2] = { { 0 } }, cpu[IM_N][2] = { { 0 } };
        for (int im = 0; im < IM_N; im++)
            for (int k = 0; k < ncount; k++)
                if (chunk[im]) {
                    med[im][k] = median(agg[im][k], reps);
                    cpu[im][k] = median(share[im][k], reps);
                }
        for (int im = 0; im < IM_N; im++) {
            if (chunk[im] == 0)
                continue;
            double hi = med[im][ncount - 1];
            printf("%7zu  %-10s %12.1f", n, impl_name[im], med[im][0]);
            if (ncount > 1)
                printf(" %12.1f %8.2fx", hi, hi / med[im][0]);
            else
                printf(" %12s %9s", "-", "-");
            if (im != IM_DEFAULT && med[IM_DEFAULT][ncount - 1] > 0)
                printf(" %10.2fx", hi / med[IM_DEFAULT][ncount - 1]);
            else
                printf(" %11s", "-");
            printf(" %6.0f%%", 100 * cpu[im][0]);
            if (ncount > 1)
                printf(" %6.0f%%", 100 * cpu[im][1]);
            printf("\n");
            if (json) {
                fprintf(json, "%s\n    {\"bytes\": %zu, \"impl\": \"%s\", \"mb_per_s_1\": %.2f, "
                              "\"mb_per_s_n\": %.2f, \"scaling\": %.4f, \"cpu_share_1\": %.3f, "
                              "\"cpu_share_n\": %.3f}",
                        first_row ? "" : ",", n, impl_name[im], med[im][0], hi,
                        hi / med[im][0], cpu[im][0], cpu[im][ncount - 1]);
                first_row = 0;
            }
        }
    }
    if (json)
        fprintf(json, "\n  ]}");
    if (g_thread_broken)
        printf("  (a thread saw a failing call: numbers above are not valid)\n");
    return g_thread_broken;
}
