/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: chapoly against OpenSSL's default provider (and libsodium,
 * BoringSSL when present), measured the way applications call them.
 *
 * Method (see bench/README.md):
 * - One process, one private OSSL_LIB_CTX holding both providers. Every
 *   (operation, size) cell runs each implementation for a calibrated number
 *   of messages (one "sample"); repetitions are the outer loop, so the five
 *   (or more) samples of a cell are spread over the whole run, while the
 *   implementations of one cell run back to back in a rotating order.
 *   Reported: median ns/op, spread (max-min)/median, and speed ratios that are
 *   the median of per-repetition ratios of adjacent samples.
 * - All implementations of an operation see the same key, nonce sequence,
 *   13-byte AAD, input buffer and output buffer (out-of-place, tag right
 *   after the ciphertext), and before any timing each one's output for the
 *   same input is compared with a reference (the default provider, else
 *   libsodium, else BoringSSL). An implementation that disagrees or fails is
 *   reported BROKEN and never timed.
 * - ns come from CLOCK_MONOTONIC; cycles are core clocks, converted with the
 *   frequency of a dependent imul chain measured in this process (imul r64
 *   has a 3-cycle latency on every x86-64 core of the last decade), not TSC.
 *
 * Files: this one reads the command line and runs the steps in order;
 * bench_evp.h lists the others (implementations, TLS, timing, the run, the
 * report).
 */
#include "bench_evp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <openssl/err.h>

/* --avx2: OpenSSL's capability mask without AVX-512 (see avx2_reexec). */
#define AVX2_ONLY_IA32CAP ":~0xC0230000"

/* ------------------------------------------------------------------ */
/* Settings                                                            */

static const size_t default_sizes[] = { 16, 64, 256, 576, 1200, 1350, 4096, 16384, 65536 };
static const size_t quick_sizes[] = { 16, 256, 1350, 16384 };

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

/* ------------------------------------------------------------------ */
/* Command line                                                        */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_evp [options]\n"
            "  --module PATH     chapoly.so or its directory (else OPENSSL_MODULES, CHAPOLY_MODULE,\n"
            "                    the build tree, OpenSSL's module directory)\n"
            "  --base PATH       a second chapoly.so (or its directory), the baseline of an A/B: it runs\n"
            "                    in a library context of its own, interleaved with the rest; 'vs base'\n"
            "                    = base ns / ns (> 1: faster than the base)\n"
            "  --sizes a,b,...   message sizes in bytes (default 16,64,256,576,1200,1350,4096,16384,65536)\n"
            "  --ops a,b,...     operations (default all but the stream ones):");
    for (size_t i = 0; i < N_OPS; i++)
        fprintf(f, " %s", ops[i].name);
    fprintf(f,
            "\n"
            "                    'stream' = every stream operation: one message of each size (default\n"
            "                    16384,65536) fed in updates of 16..16384 bytes, and in one update\n"
            "                    (stream-whole); a closing table gives stream vs one-shot\n"
            "  --reps N          repetitions, median reported (default 5, minimum 5)\n"
            "  --time MS         target time of one sample (default 24, --quick 4)\n"
            "  --quick           short run: sizes 16,256,1350,16384, 4 ms samples\n"
            "  --threads N       seal scaling with N threads (only this, unless --ops is given)\n"
            "  --thread-time MS  duration of one thread round (default 300, --quick 80)\n"
            "  --csv FILE        write all results as CSV\n"
            "  --json FILE       write all results as JSON\n"
            "  --plot FILE.png   seal MB/s vs size, one line per implementation (gnuplot)\n"
            "  --boringssl PATH  BoringSSL libcrypto to dlopen (default /usr/lib/*/android/libcrypto.so.0)\n"
            "  --no-boringssl, --no-sodium   leave those out\n"
            "  --placement B     the output buffer B bytes into its 4 KiB page, the inputs at a page\n"
            "                    start (a multiple of 64; default: drawn per process, printed)\n"
            "  --heap-shift B    B bytes taken from the heap before any context is made (a multiple\n"
            "                    of 16 below 4096; default: drawn per process, printed): where the\n"
            "                    contexts fall in their pages\n"
            "  --avx2            AVX2-limited comparison: the program runs itself again with\n"
            "                    OPENSSL_ia32cap=" AVX2_ONLY_IA32CAP " (the default provider without\n"
            "                    AVX-512) and CHAPOLY_KERNEL=avx2; BoringSSL's ChaCha20-Poly1305 code\n"
            "                    is AVX2 at most anyway\n"
            "  --loop OP:IMPL:BYTES:COUNT   run one loop untimed and exit, for profilers, e.g.\n"
            "                    valgrind --tool=callgrind --toggle-collect=bench_loop bench_evp --loop seal:chapoly:16:20000\n"
            "Environment: CHAPOLY_KERNEL=portable|avx2|avx512vl|avx512|avx512-noifma selects chapoly's kernels\n"
            "(and the base's: both read it when they initialise).\n");
}

static void parse_sizes(const char *s)
{
    char *dup = strdup(s), *save = NULL;

    cfg.nsizes = 0;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long v = strtoul(t, &end, 0);
        if (*end != '\0' || v == 0 || v > (1UL << 26) || cfg.nsizes >= 64)
            die("bad size '%s' (1..67108864, at most 64 sizes)", t);
        cfg.sizes[cfg.nsizes++] = v;
    }
    free(dup);
    if (cfg.nsizes == 0)
        die("--sizes needs at least one size");
}

static void parse_ops(const char *s)
{
    char *dup = strdup(s), *save = NULL;

    memset(cfg.op_on, 0, sizeof(cfg.op_on));
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;
        int all = strcmp(t, "all") == 0, stream = strcmp(t, "stream") == 0;
        for (i = 0; i < N_OPS; i++)
            if (all || strcmp(t, ops[i].name) == 0 || (stream && ops[i].kind == K_STREAM))
                cfg.op_on[i] = 1;
        if (!all && !stream && strcmp(t, "none") != 0) {
            for (i = 0; i < N_OPS && strcmp(t, ops[i].name) != 0; i++)
                ;
            if (i == N_OPS)
                die("unknown operation '%s' (--help lists them)", t);
        }
    }
    free(dup);
    cfg.ops_given = 1;
}

static void parse_args(int argc, char **argv)
{
    int time_given = 0, ttime_given = 0;

    cfg.reps = 5;
    cfg.sample_ms = 24;
    cfg.thread_ms = 300;
    for (size_t i = 0; i < N_OPS; i++)
        cfg.op_on[i] = ops[i].kind != K_STREAM && !ops[i].on_request; /* --ops stream, quic-* */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die("%s needs a value", a), ""))
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--module")) {
            cfg.module = NEXT();
        } else if (!strcmp(a, "--base")) {
            cfg.base = NEXT();
        } else if (!strcmp(a, "--sizes")) {
            parse_sizes(NEXT());
            cfg.sizes_given = 1;
        } else if (!strcmp(a, "--ops")) {
            parse_ops(NEXT());
        } else if (!strcmp(a, "--reps")) {
            cfg.reps = atoi(NEXT());
        } else if (!strcmp(a, "--time")) {
            cfg.sample_ms = atof(NEXT());
            time_given = 1;
        } else if (!strcmp(a, "--quick")) {
            cfg.quick = 1;
        } else if (!strcmp(a, "--threads")) {
            cfg.threads = atoi(NEXT());
        } else if (!strcmp(a, "--thread-time")) {
            cfg.thread_ms = atof(NEXT());
            ttime_given = 1;
        } else if (!strcmp(a, "--csv")) {
            cfg.csv = NEXT();
        } else if (!strcmp(a, "--json")) {
            cfg.json = NEXT();
        } else if (!strcmp(a, "--plot")) {
            cfg.plot = NEXT();
        } else if (!strcmp(a, "--boringssl")) {
            cfg.boring_path = NEXT();
        } else if (!strcmp(a, "--no-boringssl")) {
            cfg.no_boring = 1;
        } else if (!strcmp(a, "--loop")) {
            cfg.loop = NEXT();
        } else if (!strcmp(a, "--placement")) {
            parse_placement(NEXT());
        } else if (!strcmp(a, "--heap-shift")) {
            parse_heap_shift(NEXT());
        } else if (!strcmp(a, "--no-sodium")) {
            cfg.no_sodium = 1;
        } else if (!strcmp(a, "--avx2")) {
            /* handled by avx2_reexec before the libraries initialise */
        } else {
            usage(stderr);
            die("unknown option %s", a);
        }
#undef NEXT
    }
    if (cfg.reps < 5 || cfg.reps > MAX_REPS)
        die("--reps must be 5..%d", MAX_REPS);
    if (cfg.threads < 0 || cfg.threads > 256)
        die("--threads must be 1..256");
    if (cfg.sample_ms <= 0 || cfg.thread_ms <= 0)
        die("--time and --thread-time must be positive");
    if (cfg.quick && !time_given)
        cfg.sample_ms = 4;
    if (cfg.quick && !ttime_given)
        cfg.thread_ms = 80;
    plan_bursts(cfg.sample_ms);
    if (!cfg.sizes_given) {
        const size_t *src = cfg.quick ? quick_sizes : default_sizes;
        size_t cnt = cfg.quick ? sizeof(quick_sizes) / sizeof(quick_sizes[0])
                               : sizeof(default_sizes) / sizeof(default_sizes[0]);
        for (size_t i = 0; i < cnt; i++)
            cfg.sizes[i] = src[i];
        cfg.nsizes = (int)cnt;
    }
    if (cfg.threads > 0 && !cfg.ops_given)
        memset(cfg.op_on, 0, sizeof(cfg.op_on));
}

/* Not static and not inlined: the profiler's handle (callgrind --toggle-collect=bench_loop). */
__attribute__((noinline)) int bench_loop(job *j, size_t n, uint64_t count);
__attribute__((noinline)) int bench_loop(job *j, size_t n, uint64_t count)
{
    return j->run(j, n, count);
}

static int loop_mode(void)
{
    char opname[32], implname[32];
    unsigned long long bytes, count;
    const opdef *op = NULL;
    int im = -1;

    if (sscanf(cfg.loop, "%31[^:]:%31[^:]:%llu:%llu", opname, implname, &bytes, &count) != 4
        || bytes == 0 || bytes > (1ULL << 26))
        die("--loop wants OP:IMPL:BYTES:COUNT, e.g. seal:chapoly:16:20000");
    for (size_t i = 0; i < N_OPS; i++)
        if (strcmp(ops[i].name, opname) == 0)
            op = &ops[i];
    for (int i = 0; i < IM_N; i++)
        if (strcmp(impl_name[i], implname) == 0)
            im = i;
    if (op == NULL || im < 0)
        die("--loop: unknown operation or implementation in '%s'", cfg.loop);
    open_bench_libctx();
    bufset *b = bufset_new((size_t)bytes);
    job *j = job_new(op, im, b);
    if (j == NULL)
        die("--loop: %s has no %s here", implname, opname);
    if (op->kind == K_OPEN) {
        cell c = { .op = op, .size = (size_t)bytes, .prep = seal_job_for(op, b) };
        prepare_ct(&c, b);
    }
    if (!j->run(j, (size_t)bytes, 16)) /* first-call costs (lazy init) stay out of the loop */
        die("--loop: %s %s failed", implname, opname);
    int ok = bench_loop(j, (size_t)bytes, count);
    printf("%s %s %llu bytes x %llu: %s (chapoly kernel %s)\n", opname, implname, bytes, count,
           ok ? "ok" : "FAILED", g_kernel);
    bench_cleanup();
    return ok ? 0 : 1;
}

/* The environment variables chapoly reads, when they would skew or mislabel the run. */
static void warn_stats_env(void)
{
    if (getenv("CHAPOLY_STATS") && strcmp(getenv("CHAPOLY_STATS"), "0") != 0)
        fprintf(stderr, "bench_evp: warning: CHAPOLY_STATS is set, chapoly counts every message\n");
}

static void warn_kernel_env(void)
{
    if (getenv("CHAPOLY_KERNEL") && *getenv("CHAPOLY_KERNEL")
        && strcmp(getenv("CHAPOLY_KERNEL"), "best") != 0
        && strcmp(getenv("CHAPOLY_KERNEL"), g_kernel) != 0)
        fprintf(stderr, "bench_evp: warning: CHAPOLY_KERNEL=%s asked, chapoly runs %s\n",
                getenv("CHAPOLY_KERNEL"), g_kernel);
}

static size_t max_size(void)
{
    size_t maxsize = 0;

    for (int i = 0; i < cfg.nsizes; i++)
        if (cfg.sizes[i] > maxsize)
            maxsize = cfg.sizes[i];
    if (!cfg.sizes_given) {
        static const size_t stream_sizes[] = STREAM_SIZES;

        for (size_t o = 0; o < N_OPS; o++)
            for (size_t i = 0; cfg.op_on[o] && ops[o].kind == K_STREAM && i < 2; i++)
                if (stream_sizes[i] > maxsize)
                    maxsize = stream_sizes[i];
    }
    return maxsize;
}

/*
 * --avx2: both sides limited to AVX2. OpenSSL reads OPENSSL_ia32cap once,
 * when libcrypto initialises (before main), so the program sets it and
 * CHAPOLY_KERNEL and runs itself again; BENCH_EVP_AVX2 marks the second
 * run. The mask clears AVX512F (bit 16), AVX512DQ (17), AVX512IFMA (21),
 * AVX512BW (30) and AVX512VL (31) of CPUID leaf 7 EBX, the bits OpenSSL
 * 3.0's ChaCha20 and Poly1305 code tests for its AVX-512 paths.
 */
static int avx2_mode;

static void avx2_reexec(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--avx2") == 0)
            avx2_mode = 1;
    if (!avx2_mode || getenv("BENCH_EVP_AVX2") != NULL)
        return;
    if (setenv("OPENSSL_ia32cap", AVX2_ONLY_IA32CAP, 1) != 0
        || setenv("CHAPOLY_KERNEL", "avx2", 1) != 0 || setenv("BENCH_EVP_AVX2", "1", 1) != 0)
        die("--avx2: setenv failed");
    fflush(NULL);
    execv("/proc/self/exe", argv);
    die("--avx2: cannot run /proc/self/exe again: %s", strerror(errno));
}

static void print_avx2_header(void)
{
    if (!avx2_mode)
        return;
    const char *cap = getenv("OPENSSL_ia32cap");

    printf("  limits     AVX2 only: default provider OPENSSL_ia32cap=%s, chapoly kernel %s%s\n",
           cap ? cap : "(unset)", g_kernel,
           g_have_boring ? ", BoringSSL (no AVX-512 ChaCha20/Poly1305 code)" : "");
    if (cap == NULL || strcmp(cap, AVX2_ONLY_IA32CAP) != 0 || strcmp(g_kernel, "avx2") != 0)
        fprintf(stderr, "bench_evp: warning: --avx2 but OPENSSL_ia32cap=%s, kernel %s\n",
                cap ? cap : "(unset)", g_kernel);
}

/* bench_evp_pipeline.c: "bench_evp pipeline ..." (OpenSSL 3.5 pipeline API). */
int pipeline_main(int argc, char **argv);
/* bench_sweep.c: "bench_evp sweep ..." (the never-slower map). */
int sweep_main(int argc, char **argv);

int main(int argc, char **argv)
{
    cfg.placement = -1; /* drawn per process unless --placement */
    cfg.heap_shift = -1; /* the same, --heap-shift */
    if (argc > 1 && strcmp(argv[1], "pipeline") == 0)
        return pipeline_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "sweep") == 0)
        return sweep_main(argc - 1, argv + 1);

    double t_start = now_ns();
    double load0[3] = { 0 };
    char cpu[320];

    avx2_reexec(argc, argv);
    parse_args(argc, argv);
    shift_heap(); /* before the libraries and contexts allocate */
    getloadavg(load0, 3);
    cpu_model(cpu, sizeof(cpu));
    warn_stats_env();
    init_inputs();
    load_comparison_libraries();
    if (cfg.loop)
        return loop_mode();

    prove_tls_routing();
    open_bench_libctx();
    warn_kernel_env();
    clock_warmup();
    probe_ghz();
    print_header(cpu, load0);
    print_avx2_header();

    bufset *b = bufset_new(max_size());
    cell *cells = calloc(N_OPS * (size_t)(cfg.nsizes + 2), sizeof(cell));
    int ncells = build_cells(cells, b);
    int nbroken = check_and_calibrate(cells, ncells, b);
    print_plan(cells, ncells);
    run_repetitions(cells, ncells, b);
    print_results(cells, ncells, cfg.reps);
    print_stream_summary(cells, ncells, cfg.reps);

    FILE *json = cfg.json ? json_open(cfg.json, cpu, load0[0], cells, ncells) : NULL;
    int thread_broken = cfg.threads > 0 ? run_threads(json) : 0;
    if (json)
        json_close(json);
    if (cfg.csv && ncells > 0)
        write_csv(cfg.csv, cells, ncells, cfg.reps);
    if (cfg.plot && ncells > 0)
        plot(cfg.plot, cells, ncells, cfg.reps);
    print_footer(t_start, nbroken);
    free(cells);
    bench_cleanup();
    return nbroken || thread_broken ? 2 : 0;
}
