/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_provider: the statistics file (CHAPOLY_STATS_FILE, the config key
 * stats_file, only a process that counted something writes, per process
 * across fork) and loading through an openssl.cnf file with kernel = ....
 * The program's header and main: test_provider.h, test_provider.c.
 */
#include "test_provider.h"

/* ---- the statistics file ---- */

#define LINE_MAX_ 640

/* The lines of a file (up to max), or -1 if it cannot be opened. */
static int read_lines(const char *path, char lines[][LINE_MAX_], int max)
{
    char line[LINE_MAX_];
    int n = 0;
    FILE *f = fopen(path, "r");

    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (n < max)
            snprintf(lines[n], LINE_MAX_, "%s", line);
        n++;
    }
    fclose(f);
    return n;
}

/* The line chapoly writes for process pid with counters v. */
static const char *stats_line(long pid, const uint64_t v[NCTR])
{
    static char b[LINE_MAX_];
    size_t n = (size_t)snprintf(b, sizeof(b), "pid=%ld", pid);

    for (int i = 0; i < NCTR; i++)
        n += (size_t)snprintf(b + n, sizeof(b) - n, " %s=%llu", ctr_names[i],
                              (unsigned long long)v[i]);
    snprintf(b + n, sizeof(b) - n, "\n");
    return b;
}

/* The file holds exactly one line, the one for pid and v. */
static void expect_one_line(const char *path, long pid, const uint64_t v[NCTR], const char *what)
{
    char lines[2][LINE_MAX_] = { "", "" };
    int n = read_lines(path, lines, 2);
    const char *want = stats_line(pid, v);

    T_OK(n == 1, "%s: %s has %d lines, want 1", what, path, n);
    T_OK(strcmp(lines[0], want) == 0, "%s: line is \"%s\", want \"%s\"", what, lines[0], want);
}

static int absent(const char *path)
{
    struct stat st;

    return lstat(path, &st) != 0 && errno == ENOENT;
}

/* A library context with default and chapoly, chapoly's statistics on from CHAPOLY_STATS. */
static OSSL_PROVIDER *stats_default;
static OSSL_LIB_CTX *stats_ctx(OSSL_PROVIDER **p)
{
    setenv("CHAPOLY_STATS", "1", 1);
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();

    stats_default = lc ? OSSL_PROVIDER_load(lc, "default") : NULL;
    *p = lc ? OSSL_PROVIDER_load(lc, "chapoly") : NULL;
    unsetenv("CHAPOLY_STATS");
    T_OK(lc && stats_default && *p, "stats: load default and chapoly into a new library context");
    return lc;
}

/* Unload both (the last reference to chapoly goes: its teardown runs), free the context. */
static void stats_ctx_free(OSSL_LIB_CTX *lc, OSSL_PROVIDER *p)
{
    T_OK(p == NULL || OSSL_PROVIDER_unload(p), "unload chapoly");
    T_OK(stats_default == NULL || OSSL_PROVIDER_unload(stats_default), "unload default");
    stats_default = NULL;
    OSSL_LIB_CTX_free(lc);
}

/* CHAPOLY_STATS_FILE: teardown appends "pid=P chapoly-aead-messages=N ..." (every counter). */
void test_stats_file(void)
{
    char path[] = "/tmp/chapoly-stats-XXXXXX";
    int fd = mkstemp(path);
    uint8_t tag[TAGLEN], rec[600];
    OSSL_PROVIDER *p;

    if (!T_OK(fd >= 0, "mkstemp"))
        return;
    if (write(fd, "earlier line\n", 13) != 13)
        T_OK(0, "write stats file");
    close(fd);

    setenv("CHAPOLY_STATS_FILE", path, 1);
    OSSL_LIB_CTX *lc = stats_ctx(&p);
    T_OK(op_seal(lc, "ChaCha20-Poly1305", 10, tag) && op_seal(lc, "XChaCha20-Poly1305", 10, tag)
             && op_tls_record(lc, 1, 10, 0, rec) && op_tls_record(lc, 0, 10, 0, rec)
             && op_tls_record(lc, 1, 99, 0, rec) && op_chacha20(lc, 2, 10, 0)
             && op_mac(lc, 1, 1),
         "stats file: operations");
    stats_ctx_free(lc, p);
    unsetenv("CHAPOLY_STATS_FILE");

    char lines[3][LINE_MAX_] = { "", "", "" };
    int n = read_lines(path, lines, 3);
    static const uint64_t want[NCTR] = { 5, 4, 1, 3, 2, 20, 1, 0 };
    const char *wl = stats_line((long)getpid(), want);
    unlink(path);
    T_OK(n == 2, "stats file has %d lines, want 2 (appended, not truncated)", n);
    T_OK(strcmp(lines[0], "earlier line\n") == 0, "stats file: first line \"%s\" not kept",
         lines[0]);
    T_OK(strcmp(lines[1], wl) == 0, "stats file line is \"%s\", want \"%s\"", lines[1], wl);
    ERR_clear_error();
}

/*
 * A process (here: an instance) that did nothing through chapoly writes no
 * line: loading, fetching, a context initialised and freed, a seal without
 * final, a MAC without final, a ChaCha20 update of 0 bytes count nothing.
 */
void test_stats_file_idle(const char *dir)
{
    char path[512];
    OSSL_PROVIDER *p;

    snprintf(path, sizeof(path), "%s/idle.stats", dir);
    setenv("CHAPOLY_STATS_FILE", path, 1);
    OSSL_LIB_CTX *lc = stats_ctx(&p);
    T_OK(op_seal_unfinished(lc) && op_mac(lc, 1, 0) && op_chacha20(lc, 0, 0, 0),
         "idle: operations that count nothing");
    counters c = read_counters(p);
    T_OK(c.ok && all_zero(&c), "idle: counters moved to %s", show(&c));
    stats_ctx_free(lc, p);
    unsetenv("CHAPOLY_STATS_FILE");
    T_OK(absent(path), "idle: an instance that counted nothing wrote %s", path);
    unlink(path);
    ERR_clear_error();
}

static int find_chapoly(OSSL_PROVIDER *prov, void *arg)
{
    if (strcmp(OSSL_PROVIDER_get0_name(prov), "chapoly") == 0)
        *(OSSL_PROVIDER **)arg = prov;
    return 1;
}

static int write_cnf(const char *path, const char *module, const char *extra)
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        return 0;
    fprintf(f,
            "config_diagnostics = 1\n"
            "openssl_conf = openssl_init\n\n"
            "[openssl_init]\n"
            "providers = provider_sect\n\n"
            "[provider_sect]\n"
            "default = default_sect\n"
            "chapoly = chapoly_sect\n\n"
            "[default_sect]\n"
            "activate = 1\n\n"
            "[chapoly_sect]\n"
            "module = %s\n"
            "%s"
            "activate = 1\n",
            module, extra);
    return fclose(f) == 0;
}

/* Loads cnf into a new library context; returns it with *prov = its chapoly. */
static OSSL_LIB_CTX *load_cnf(const char *path, OSSL_PROVIDER **prov)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();

    *prov = NULL;
    if (lc == NULL)
        return NULL;
    if (!OSSL_LIB_CTX_load_config(lc, path)) {
        ERR_print_errors_fp(stderr);
        OSSL_LIB_CTX_free(lc);
        return NULL;
    }
    OSSL_PROVIDER_do_all(lc, find_chapoly, prov);
    return lc;
}

/* Seal through chapoly in lc and through default in t_ctx: same bytes. */
static int works_like_default(OSSL_LIB_CTX *lc)
{
    uint8_t tag[TAGLEN], ct[300], rtag[TAGLEN];
    EVP_CIPHER *c = EVP_CIPHER_fetch(t_ctx, "ChaCha20-Poly1305", PROVQ_DEFAULT);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int l1, l2, l3;
    int ok = c && ctx && EVP_EncryptInit_ex(ctx, c, NULL, key, iv)
             && EVP_EncryptUpdate(ctx, NULL, &l1, aad, sizeof(aad))
             && EVP_EncryptUpdate(ctx, ct, &l2, pt, 300) && EVP_EncryptFinal_ex(ctx, ct, &l3)
             && t_get_tag(ctx, rtag, TAGLEN);
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return ok && op_seal(lc, "ChaCha20-Poly1305", 300, tag) && memcmp(buf, ct, 300) == 0
           && memcmp(tag, rtag, TAGLEN) == 0;
}

/* The module file for config files: CHAPOLY_MODULE, else OPENSSL_MODULES/chapoly.so. */
static const char *module_path(void)
{
    static char modbuf[4096];
    const char *module = getenv("CHAPOLY_MODULE");

    if (module == NULL || *module == '\0') {
        const char *dir = getenv("OPENSSL_MODULES");
        snprintf(modbuf, sizeof(modbuf), "%s/chapoly.so", dir ? dir : ".");
        module = modbuf;
    }
    return module;
}

void test_config(void)
{
    const char *module = module_path();
    char path[] = "/tmp/chapoly-cnf-XXXXXX";
    int fd = mkstemp(path);
    if (!T_OK(fd >= 0, "mkstemp"))
        return;
    close(fd);

    /* stats = 1 and kernel = portable from the provider's section (env CHAPOLY_STATS unset). */
    unsetenv("CHAPOLY_STATS");
    T_OK(write_cnf(path, module, "stats = 1\nkernel = portable\n"), "write config");
    OSSL_PROVIDER *p = NULL;
    OSSL_LIB_CTX *lc = load_cnf(path, &p);
    if (T_OK(lc && p, "config with stats = 1, kernel = portable: load (module %s)", module)) {
        const char *k = read_kernel(p);
        T_OK(k && strcmp(k, "portable") == 0,
             "config kernel = portable: chapoly-kernel is %s (env CHAPOLY_KERNEL=%s)",
             k ? k : "(null)", getenv("CHAPOLY_KERNEL") ? getenv("CHAPOLY_KERNEL") : "unset");
        counters c = read_counters(p);
        T_OK(c.ok && all_zero(&c), "config stats: counters start at %s", show(&c));
        check_counting(lc, p, "config stats = 1");
        T_OK(works_like_default(lc), "config kernel = portable: seal differs from default");
    }
    OSSL_LIB_CTX_free(lc);
    ERR_clear_error();

    /*
     * An unknown kernel name still loads (falls back, with a warning) and works; stats = 0.
     * serve = all: where the fallback is the portable level, chapoly would otherwise
     * leave ChaCha20-Poly1305 to the default provider (test_serve checks that).
     */
    T_OK(write_cnf(path, module, "stats = 0\nkernel = nonsense\nserve = all\n"), "write config");
    p = NULL;
    fprintf(stderr, "(a warning about kernel \"nonsense\" is expected next)\n");
    lc = load_cnf(path, &p);
    if (T_OK(lc && p, "config with kernel = nonsense: load")) {
        const char *k = read_kernel(p);
        T_OK(known_level(k), "config kernel = nonsense: chapoly-kernel is \"%s\"",
             k ? k : "(null)");
        T_OK(works_like_default(lc), "config kernel = nonsense: seal differs from default");
        uint8_t tag[TAGLEN];
        T_OK(op_seal(lc, "XChaCha20-Poly1305", 50, tag) && op_open(lc, "XChaCha20-Poly1305", 50, tag),
             "config kernel = nonsense: XChaCha round trip");
        counters c = read_counters(p);
        T_OK(c.ok && all_zero(&c), "config stats = 0: counters moved to %s", show(&c));
    }
    OSSL_LIB_CTX_free(lc);
    unlink(path);
    ERR_clear_error();
}

/* Loads a config whose chapoly section holds extra (plus this module); NULL on failure. */
static OSSL_LIB_CTX *cnf_ctx(const char *dir, const char *extra, OSSL_PROVIDER **p,
                             const char *what)
{
    char path[512];
    OSSL_LIB_CTX *lc = NULL;

    *p = NULL;
    snprintf(path, sizeof(path), "%s/chapoly.cnf", dir);
    if (T_OK(write_cnf(path, module_path(), extra), "%s: write config", what))
        lc = load_cnf(path, p);
    T_OK(lc && *p, "%s: load config with \"%s\"", what, extra);
    unlink(path);
    return lc;
}

/*
 * The config key stats_file: written at teardown with statistics on (config
 * stats = 1, no environment), "%p" the process id and "%%" a "%"; the
 * environment's CHAPOLY_STATS_FILE wins when both are set; nothing without
 * stats = 1; a created file has mode 0600; a symlink is not followed.
 */
void test_stats_file_config(const char *dir)
{
    char extra[1024], path[512], other[512];
    uint8_t tag[TAGLEN];
    OSSL_PROVIDER *p;
    OSSL_LIB_CTX *lc;
    struct stat st = { 0 };
    long pid = (long)getpid();
    static const uint64_t two_seals[NCTR] = { 2, 2, 0, 0, 0, 0, 0, 0 };

    unsetenv("CHAPOLY_STATS");
    unsetenv("CHAPOLY_STATS_FILE");
    snprintf(extra, sizeof(extra), "stats = 1\nstats_file = %s/cfg-%%p-%%%%-%%q.stats\n", dir);
    if ((lc = cnf_ctx(dir, extra, &p, "stats_file")) != NULL) {
        T_OK(op_seal(lc, "XChaCha20-Poly1305", 20, tag) && op_seal(lc, "XChaCha20-Poly1305", 0, tag),
             "stats_file: operations");
        OSSL_LIB_CTX_free(lc);
        snprintf(path, sizeof(path), "%s/cfg-%ld-%%-%%q.stats", dir, pid);
        expect_one_line(path, pid, two_seals, "config stats_file with %p, %% and %q");
        T_OK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600,
             "stats_file: created with mode %o, want 600", (unsigned)(st.st_mode & 07777));
        unlink(path);
    }

    /* both: the environment wins */
    snprintf(other, sizeof(other), "%s/env-%%p.stats", dir);
    setenv("CHAPOLY_STATS_FILE", other, 1);
    snprintf(extra, sizeof(extra), "stats = 1\nstats_file = %s/cfg2.stats\n", dir);
    if ((lc = cnf_ctx(dir, extra, &p, "stats_file and CHAPOLY_STATS_FILE")) != NULL) {
        T_OK(op_seal(lc, "XChaCha20-Poly1305", 20, tag) && op_seal(lc, "XChaCha20-Poly1305", 1, tag),
             "stats_file and env: operations");
        OSSL_LIB_CTX_free(lc);
        snprintf(path, sizeof(path), "%s/env-%ld.stats", dir, pid);
        expect_one_line(path, pid, two_seals, "CHAPOLY_STATS_FILE (with %p) over stats_file");
        unlink(path);
        snprintf(path, sizeof(path), "%s/cfg2.stats", dir);
        T_OK(absent(path), "stats_file written although CHAPOLY_STATS_FILE was set");
        unlink(path);
    }
    unsetenv("CHAPOLY_STATS_FILE");

    /* statistics off: stats_file alone writes nothing */
    snprintf(extra, sizeof(extra), "stats_file = %s/cfg3.stats\n", dir);
    if ((lc = cnf_ctx(dir, extra, &p, "stats_file without stats")) != NULL) {
        T_OK(op_seal(lc, "XChaCha20-Poly1305", 20, tag), "stats_file without stats: seal");
        OSSL_LIB_CTX_free(lc);
        snprintf(path, sizeof(path), "%s/cfg3.stats", dir);
        T_OK(absent(path), "stats_file without stats = 1: file written");
        unlink(path);
    }

    /* a symlink named by stats_file is not followed */
    snprintf(path, sizeof(path), "%s/target", dir);
    snprintf(other, sizeof(other), "%s/link.stats", dir);
    FILE *f = fopen(path, "w");
    T_OK(f && fputs("keep\n", f) >= 0 && fclose(f) == 0 && symlink(path, other) == 0,
         "stats_file: make a symlink");
    snprintf(extra, sizeof(extra), "stats = 1\nstats_file = %s\n", other);
    if ((lc = cnf_ctx(dir, extra, &p, "stats_file symlink")) != NULL) {
        T_OK(op_seal(lc, "XChaCha20-Poly1305", 20, tag), "stats_file symlink: seal");
        OSSL_LIB_CTX_free(lc);
        char lines[2][LINE_MAX_] = { "", "" };
        T_OK(read_lines(path, lines, 2) == 1 && strcmp(lines[0], "keep\n") == 0,
             "stats_file: written through a symlink");
    }
    unlink(other);
    unlink(path);
    ERR_clear_error();
}

/*
 * Per process across fork: a parent with statistics on (config stats_file
 * with %p) seals 2 messages and forks. Child A's counters start at 0; it
 * seals 3 and tears down: its own file, its own pid, 3. Child B does nothing
 * and tears down: no file. The parent still reads 2 and writes 2 under its pid.
 */
void test_stats_fork(const char *dir)
{
    char extra[1024], path[512];
    uint8_t tag[TAGLEN];
    OSSL_PROVIDER *p;
    OSSL_LIB_CTX *lc;
    static const uint64_t two_seals[NCTR] = { 2, 2, 0, 0, 0, 0, 0, 0 };
    static const uint64_t three_seals[NCTR] = { 3, 3, 0, 0, 0, 0, 0, 0 };
    pid_t kid[2];

    unsetenv("CHAPOLY_STATS");
    unsetenv("CHAPOLY_STATS_FILE");
    snprintf(extra, sizeof(extra), "stats = 1\nstats_file = %s/fork-%%p.stats\n", dir);
    if ((lc = cnf_ctx(dir, extra, &p, "fork")) == NULL)
        return;
    T_OK(op_seal(lc, "XChaCha20-Poly1305", 20, tag) && op_seal(lc, "XChaCha20-Poly1305", 30, tag),
         "fork: parent seals");
    fflush(NULL);
    for (int k = 0; k < 2; k++) {
        kid[k] = fork();
        if (kid[k] == 0) {
            /* exit status: bit 0 counters not 0 after fork, bit 1 seals failed,
             * bit 2 counters after the seals wrong */
            int rc = 0;
            counters c = read_counters(p);

            if (!c.ok || !all_zero(&c))
                rc |= 1;
            if (k == 0) {
                if (!(op_seal(lc, "XChaCha20-Poly1305", 1, tag)
                      && op_seal(lc, "XChaCha20-Poly1305", 2, tag)
                      && op_seal(lc, "XChaCha20-Poly1305", 3, tag)))
                    rc |= 2;
                c = read_counters(p);
                if (!c.ok || memcmp(c.v, three_seals, sizeof(c.v)) != 0)
                    rc |= 4;
            }
            OSSL_LIB_CTX_free(lc);
            _exit(rc);
        }
        T_OK(kid[k] > 0, "fork");
    }
    for (int k = 0; k < 2; k++) {
        int st = -1;

        if (kid[k] <= 0)
            continue;
        T_OK(waitpid(kid[k], &st, 0) == kid[k] && WIFEXITED(st), "fork: wait for child %d", k);
        T_OK(WIFEXITED(st) && (WEXITSTATUS(st) & 1) == 0,
             "fork: child %d's counters did not start at 0", k);
        T_OK(WIFEXITED(st) && (WEXITSTATUS(st) & 6) == 0,
             "fork: child %d: seals failed or counted wrong (exit %d)", k,
             WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        snprintf(path, sizeof(path), "%s/fork-%ld.stats", dir, (long)kid[k]);
        if (k == 0)
            expect_one_line(path, (long)kid[k], three_seals, "fork: the child that sealed 3");
        else
            T_OK(absent(path), "fork: the child that did nothing wrote %s", path);
        unlink(path);
    }
    counters c = read_counters(p);
    T_OK(c.ok && memcmp(c.v, two_seals, sizeof(c.v)) == 0,
         "fork: the parent's counters changed to %s", show(&c));
    OSSL_LIB_CTX_free(lc);
    snprintf(path, sizeof(path), "%s/fork-%ld.stats", dir, (long)getpid());
    expect_one_line(path, (long)getpid(), two_seals, "fork: the parent");
    unlink(path);
    ERR_clear_error();
}

