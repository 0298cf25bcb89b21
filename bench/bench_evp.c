/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: chapoly against OpenSSL's default provider (and libsodium,
 * BoringSSL, a second chapoly build, the EVP floor), measured the way
 * applications call them. bench/README.md has the method:
 * - one process, one library context holding the providers; every
 *   (operation, size) cell runs each implementation for a calibrated number
 *   of messages (a sample); repetitions are the outer loop, the
 *   implementations of a cell run back to back in a rotating order; ratios
 *   are medians of per-repetition ratios;
 * - all implementations see the same key, nonces, AAD and buffers, and each
 *   one's output is compared with a reference's before any timing: one
 *   that disagrees is reported BROKEN and never timed.
 * "bench_evp sweep" (bench_sweep.c) maps every operation x size x level.
 */
#include "bench_evp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <openssl/err.h>

struct bench_cfg cfg;

void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("bench_evp: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    ERR_print_errors_fp(stderr);
    exit(1);
}

/*
 * A level's environment: chapoly's kernels, and the default provider limited
 * as on the CPUs that get the level (OPENSSL_ia32cap, read when libcrypto
 * loads, so a process sets it before running itself again): avx2 without
 * AVX-512 (AVX512F, DQ, IFMA, BW, VL of CPUID leaf 7 EBX); avx512vl without
 * AVX512F, as OpenSSL's own probe does on Skylake-X; avx512-noifma without
 * IFMA.
 */
static const struct {
    const char *name, *kernel, *ia32cap;
} levels[] = {
    { "auto", NULL, NULL },         { "portable", "portable", NULL },
    { "avx2", "avx2", ":~0xC0230000" }, { "avx512vl", "avx512vl", ":~0x10000" },
    { "avx512-noifma", "avx512-noifma", ":~0x200000" }, { "avx512", "avx512", NULL },
    { "neon", "neon", NULL },
};

int set_level_env(const char *level, int set)
{
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
        if (strcmp(level, levels[i].name) == 0) {
            if (set
                && ((levels[i].kernel ? setenv("CHAPOLY_KERNEL", levels[i].kernel, 1)
                                  : unsetenv("CHAPOLY_KERNEL"))
                    || (levels[i].ia32cap ? setenv("OPENSSL_ia32cap", levels[i].ia32cap, 1)
                                          : unsetenv("OPENSSL_ia32cap"))))
                die("cannot set the environment of level %s", level);
            return 1;
        }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_evp [options]          (bench_evp sweep --help: the map)\n"
               "  --ops a,b,...     operations, 'all', or (default: the first eight)");
    for (size_t i = 0; i < N_OPS; i++)
        fprintf(f, "%s%s", i % 9 ? " " : "\n                    ", ops[i].name);
    fprintf(f, "\n"
               "  --sizes a,b,...   message bytes (default 16,64,256,576,1200,1350,4096,16384,\n"
               "                    65536)\n"
               "  --quick           sizes 16,256,1350,16384 and 4 ms samples\n"
               "  --reps N          repetitions, the median is reported (default 5)\n"
               "  --time MS         one sample (default 24, --quick 4)\n"
               "  --pipes N         messages per pipeline batch (default 16, at most 32)\n"
               "  --csv FILE        every number as CSV\n"
               "  --module PATH     chapoly.so or its directory (else OPENSSL_MODULES, CHAPOLY_MODULE,\n"
               "                    the build tree, OpenSSL's module directory)\n"
               "  --base PATH       a second chapoly.so (or its directory) timed beside it: 'vs base'\n"
               "  --avx2            both sides limited to AVX2 (the program runs itself again with\n"
               "                    CHAPOLY_KERNEL=avx2 OPENSSL_ia32cap=:~0xC0230000)\n"
               "  --boringssl PATH, --no-boringssl, --no-sodium   the comparison libraries\n"
               "  --placement B, --heap-shift B   fix the output's offset in its page (multiple of\n"
               "                    64) and the bytes taken from the heap first (16); else drawn\n"
               "  --loop OP:IMPL:BYTES:COUNT   one loop, untimed, for profilers\n");
}

static void parse_list(const char *s, int sizes)
{
    char *dup = strdup(s), *save = NULL;

    if (sizes)
        cfg.nsizes = 0;
    else
        memset(cfg.op_on, 0, sizeof(cfg.op_on));
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long v = strtoul(t, &end, 0);
        const opdef *op = op_named(t);

        if (sizes && (*end != '\0' || v == 0 || v > (1UL << 26) || cfg.nsizes == 64))
            die("bad size '%s' (1..67108864, at most 64 sizes)", t);
        if (sizes)
            cfg.sizes[cfg.nsizes++] = v;
        else if (strcmp(t, "all") == 0)
            for (size_t i = 0; i < N_OPS; i++)
                cfg.op_on[i] = 1;
        else if (op != NULL)
            cfg.op_on[op - ops] = 1;
        else
            die("unknown operation '%s' (--help lists them)", t);
    }
    free(dup);
}

static void parse_args(int argc, char **argv)
{
    static const size_t def[] = { 16, 64, 256, 576, 1200, 1350, 4096, 16384, 65536 };
    static const size_t quick[] = { 16, 256, 1350, 16384 };
    double ms = 0;

    cfg.reps = 5;
    for (size_t i = 0; i < N_OPS; i++)
        cfg.op_on[i] = (ops[i].flags & F_MAIN) != 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die("%s needs a value", a), ""))
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--ops"))
            parse_list(NEXT(), 0);
        else if (!strcmp(a, "--sizes")) {
            parse_list(NEXT(), 1);
            cfg.sizes_given = 1;
        } else if (!strcmp(a, "--quick"))
            cfg.quick = 1;
        else if (!strcmp(a, "--reps"))
            cfg.reps = atoi(NEXT());
        else if (!strcmp(a, "--time"))
            ms = atof(NEXT());
        else if (!strcmp(a, "--pipes"))
            cfg.pipes = atoi(NEXT());
        else if (!strcmp(a, "--csv"))
            cfg.csv = NEXT();
        else if (!strcmp(a, "--module"))
            cfg.module = NEXT();
        else if (!strcmp(a, "--base"))
            cfg.base = NEXT();
        else if (!strcmp(a, "--boringssl"))
            cfg.boring_path = NEXT();
        else if (!strcmp(a, "--no-boringssl"))
            cfg.no_boring = 1;
        else if (!strcmp(a, "--no-sodium"))
            cfg.no_sodium = 1;
        else if (!strcmp(a, "--placement"))
            cfg.placement = parse_offset(a, NEXT(), 64);
        else if (!strcmp(a, "--heap-shift"))
            cfg.heap_shift = parse_offset(a, NEXT(), 16);
        else if (!strcmp(a, "--loop"))
            cfg.loop = NEXT();
        else if (strcmp(a, "--avx2") != 0) { /* --avx2: main, before libcrypto initialises */
            usage(stderr);
            die("unknown option %s", a);
        }
#undef NEXT
    }
    if (cfg.reps < 3 || cfg.reps > MAX_REPS || cfg.pipes < 1 || cfg.pipes > MAX_PIPES || ms < 0)
        die("--reps must be 3..%d, --pipes 1..%d, --time positive", MAX_REPS, MAX_PIPES);
    plan_bursts(ms > 0 ? ms : cfg.quick ? 4 : 24);
    if (!cfg.sizes_given) {
        cfg.nsizes = cfg.quick ? 4 : 9;
        memcpy(cfg.sizes, cfg.quick ? quick : def, (size_t)cfg.nsizes * sizeof(size_t));
    }
}

/* Not static, not inlined: the profiler's handle (callgrind --toggle-collect=bench_loop). */
__attribute__((noinline)) int bench_loop(job *j, size_t n, uint64_t count);
__attribute__((noinline)) int bench_loop(job *j, size_t n, uint64_t count)
{
    return j->run(j, n, count);
}

static int loop_mode(void)
{
    char opname[32], implname[32];
    unsigned long long bytes, count;
    const opdef *op;
    int im = IM_N;

    if (sscanf(cfg.loop, "%31[^:]:%31[^:]:%llu:%llu", opname, implname, &bytes, &count) != 4
        || bytes == 0 || bytes > (1ULL << 26))
        die("--loop wants OP:IMPL:BYTES:COUNT, e.g. seal:chapoly:16:20000");
    while (im > 0 && strcmp(impl_name[im - 1], implname) != 0)
        im--;
    if ((op = op_named(opname)) == NULL || im-- == 0)
        die("--loop: unknown operation or implementation in '%s'", cfg.loop);
    open_bench_libctx();
    bufset *b = bufset_new((size_t)(bytes + TAG_LEN) * (size_t)cfg.pipes);
    job *j = job_new(op, im, b);
    if (j == NULL)
        die("--loop: %s has no %s here", implname, opname);
    cell c = { .op = op, .size = (size_t)bytes,
               .prep = op->kind == K_OPEN ? seal_job_for(op, b) : NULL };
    prepare_ct(&c, b);
    if (!j->run(j, (size_t)bytes, 16)) /* first-call costs (lazy init) stay out of the loop */
        die("--loop: %s %s failed", implname, opname);
    int ok = bench_loop(j, (size_t)bytes, count);
    printf("%s %s %llu bytes x %llu: %s (chapoly kernel %s)\n", opname, implname, bytes, count,
           ok ? "ok" : "FAILED", g_kernel);
    bench_cleanup();
    return ok ? 0 : 1;
}

/*
 * --avx2: the default provider without AVX-512 and chapoly at its avx2
 * level; OpenSSL reads OPENSSL_ia32cap once, before main, so the program
 * sets the level's environment and runs itself again (BENCH_EVP_AVX2
 * marks the second run; set it with the other two by hand where
 * /proc/self/exe is a loader, as through scripts/openssl35.sh).
 */
static int avx2_reexec(int argc, char **argv)
{
    int avx2 = 0;

    for (int i = 1; i < argc; i++)
        avx2 |= strcmp(argv[i], "--avx2") == 0;
    if (!avx2 || getenv("BENCH_EVP_AVX2") != NULL)
        return avx2;
    set_level_env("avx2", 1);
    if (setenv("BENCH_EVP_AVX2", "1", 1) != 0)
        die("--avx2: setenv failed");
    fflush(NULL);
    execv("/proc/self/exe", argv);
    die("--avx2: cannot run /proc/self/exe again: %s", strerror(errno));
}

int main(int argc, char **argv)
{
    cfg.placement = cfg.heap_shift = -1;
    cfg.pipes = 16;
    if (argc > 1 && strcmp(argv[1], "sweep") == 0)
        return sweep_main(argc - 1, argv + 1);

    double t0 = now_ns();
    int avx2 = avx2_reexec(argc, argv);

    parse_args(argc, argv);
    shift_heap(); /* before the libraries and contexts allocate */
    init_inputs();
    load_comparison_libraries();
    if (cfg.loop)
        return loop_mode();
    prove_tls_routing();
    open_bench_libctx();
    clock_warmup();
    probe_ghz();
    print_setup("bench_evp: chapoly vs OpenSSL's default provider");
    print_layout();
    if (avx2) {
        const char *cap = getenv("OPENSSL_ia32cap");

        printf("  limits     AVX2: default provider OPENSSL_ia32cap=%s, chapoly kernel %s\n",
               cap ? cap : "(unset)", g_kernel);
        if (strcmp(g_kernel, "avx2") != 0)
            fprintf(stderr, "bench_evp: warning: --avx2 but chapoly runs %s\n", g_kernel);
    }
    if (getenv("CHAPOLY_STATS") && *getenv("CHAPOLY_STATS") && strcmp(getenv("CHAPOLY_STATS"), "0"))
        fprintf(stderr, "bench_evp: warning: CHAPOLY_STATS is set, chapoly counts every message\n");

    size_t max = 0;
    for (int i = 0; i < cfg.nsizes; i++)
        max = cfg.sizes[i] > max ? cfg.sizes[i] : max;
    bufset *b = bufset_new(cfg.op_on[op_named("pipeline") - ops] ? (max + TAG_LEN) * (size_t)cfg.pipes
                                                                   : max);
    cell *cells = calloc(N_OPS * (size_t)cfg.nsizes, sizeof(cell));
    if (cells == NULL)
        die("out of memory");
    int ncells = build_cells(cells, b);
    int nbroken = check_and_calibrate(cells, ncells, b);
    printf("  plan       %d cells, %d bursts of %.1f ms a sample, %d repetitions\n", ncells,
           g_bursts, g_burst_ns / 1e6, cfg.reps);
    fflush(stdout);
    for (int r = 0; r < cfg.reps; r++)
        run_repetition(cells, ncells, b, r);
    print_results(cells, ncells, cfg.reps);
    if (cfg.csv)
        write_csv(cfg.csv, cells, ncells, cfg.reps);
    printf("\nbursts dropped as preempted: %llu of %llu; total %.1f s%s\n",
           (unsigned long long)g_bursts_dropped, (unsigned long long)g_bursts_run,
           (now_ns() - t0) / 1e9, nbroken ? "; SOME IMPLEMENTATIONS BROKEN (above)" : "");
    free(cells);
    bench_cleanup();
    return nbroken ? 2 : 0;
}
