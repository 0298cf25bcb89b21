/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Entry point, provider parameters, algorithm tables and teardown.
 * OSSL_provider_init is the module's only exported symbol.
 *
 * The module runs inside setuid programs: the environment is read only with
 * secure_getenv, and nothing is written or printed unless configured (the
 * statistics file) or unless the configuration itself is wrong (one stderr
 * line per kind of mistake per process).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/conf.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include "prov.h"

/* project(VERSION) in CMakeLists.txt, passed by provider/CMakeLists.txt. */
#ifndef CHAPOLY_VERSION
#error "CHAPOLY_VERSION must come from the build (project(VERSION) in CMakeLists.txt)"
#endif

#define XCHACHA20_POLY1305_ALGORITHM                                           \
    { "XChaCha20-Poly1305", CHAPOLY_PROPS, chapoly_xchacha20_poly1305_functions, \
      "XChaCha20-Poly1305 AEAD (draft-irtf-cfrg-xchacha-03)" }

static const OSSL_ALGORITHM chapoly_ciphers[] = {
    { "ChaCha20-Poly1305", CHAPOLY_PROPS, chapoly_chacha20_poly1305_functions,
      "ChaCha20-Poly1305 AEAD (RFC 8439)" },
    XCHACHA20_POLY1305_ALGORITHM,
    { "ChaCha20", CHAPOLY_PROPS, chapoly_chacha20_functions,
      "ChaCha20 stream cipher, OpenSSL 16-byte IV layout" },
    { NULL, NULL, NULL, NULL }
};

/* Without serve_all (see serve_all_setting): what no other provider has. */
static const OSSL_ALGORITHM chapoly_ciphers_xchacha_only[] = {
    XCHACHA20_POLY1305_ALGORITHM,
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM chapoly_macs[] = {
    { "POLY1305", CHAPOLY_PROPS, chapoly_poly1305_mac_functions,
      "Poly1305 one-time authenticator" },
    { NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *chapoly_query(void *provctx, int operation_id,
                                           int *no_cache)
{
    const chapoly_provctx *pc = provctx;
    int all = pc != NULL && pc->serve_all; /* fixed at init: cacheable */

    *no_cache = 0;
    switch (operation_id) {
    case OSSL_OP_CIPHER:
        return all ? chapoly_ciphers : chapoly_ciphers_xchacha_only;
    case OSSL_OP_MAC:
        return all ? chapoly_macs : NULL;
    }
    return NULL;
}

#define PARAM_KERNEL "chapoly-kernel"
#define PARAM_PATHS "chapoly-paths"

#define CHAPOLY_CTR_NAME_(id, name) name,
static const char *const counter_names[CHAPOLY_NCOUNTERS] = {
    CHAPOLY_COUNTERS(CHAPOLY_CTR_NAME_)
};
#undef CHAPOLY_CTR_NAME_

#define CHAPOLY_CTR_PARAM_(id, name) OSSL_PARAM_DEFN(name, OSSL_PARAM_UNSIGNED_INTEGER, NULL, 0),
static const OSSL_PARAM chapoly_param_types[] = {
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_KERNEL, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_PATHS, OSSL_PARAM_UTF8_PTR, NULL, 0),
    CHAPOLY_COUNTERS(CHAPOLY_CTR_PARAM_)
    OSSL_PARAM_END
};
#undef CHAPOLY_CTR_PARAM_

static const OSSL_PARAM *chapoly_gettable_params(void *provctx)
{
    (void)provctx;
    return chapoly_param_types;
}

static uint64_t counter(const chapoly_provctx *pc, int i)
{
    return __atomic_load_n(&pc->ctr[i], __ATOMIC_RELAXED);
}

static int chapoly_get_params(void *provctx, OSSL_PARAM params[])
{
    chapoly_provctx *pc = provctx;
    OSSL_PARAM *p;

    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_NAME);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, "chapoly: ChaCha20-Poly1305 provider"))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_VERSION);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, CHAPOLY_VERSION))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_BUILDINFO);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, pc->buildinfo))
        return 0;
    p = OSSL_PARAM_locate(params, OSSL_PROV_PARAM_STATUS);
    if (p != NULL && !chapoly_param_set_int(p, 1))
        return 0;
    p = OSSL_PARAM_locate(params, PARAM_KERNEL);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, pc->k->name))
        return 0;
    p = OSSL_PARAM_locate(params, PARAM_PATHS);
    if (p != NULL && !OSSL_PARAM_set_utf8_ptr(p, pc->paths))
        return 0;
    for (int i = 0; i < CHAPOLY_NCOUNTERS; i++) {
        p = OSSL_PARAM_locate(params, counter_names[i]);
        if (p != NULL && !chapoly_param_set_uint64(p, counter(pc, i)))
            return 0;
    }
    return 1;
}

/* ---- statistics: per process, written at teardown ---- */

/*
 * The counters count the work of this process. A forked child (nginx's
 * workers, a pre-forking server's children) inherits its parent's provider
 * instances with their counters; it starts them again from 0 (fork_child),
 * so a process that did nothing writes no line and the lines of a parent and
 * its children add up without counting anything twice. Instances with
 * statistics on are kept in a list for that, which only init, teardown and
 * fork touch (never the data path); the fork handlers are registered once,
 * and only by a process that turns statistics on. glibc drops them when the
 * module is unloaded (dlclose).
 */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static chapoly_provctx *stats_list; /* under stats_lock */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&stats_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&stats_lock);
}

static void fork_child(void)
{
    for (chapoly_provctx *pc = stats_list; pc != NULL; pc = pc->stats_next)
        for (int i = 0; i < CHAPOLY_NCOUNTERS; i++)
            __atomic_store_n(&pc->ctr[i], 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&stats_lock);
}

static void register_fork_handlers(void)
{
    /* on failure a child keeps counting from its parent's values */
    (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void stats_attach(chapoly_provctx *pc)
{
    /* not under stats_lock: fork takes libc's handler lock, then stats_lock */
    pthread_once(&fork_once, register_fork_handlers);
    pthread_mutex_lock(&stats_lock);
    pc->stats_next = stats_list;
    stats_list = pc;
    pthread_mutex_unlock(&stats_lock);
}

static void stats_detach(chapoly_provctx *pc)
{
    pthread_mutex_lock(&stats_lock);
    for (chapoly_provctx **pp = &stats_list; *pp != NULL; pp = &(*pp)->stats_next) {
        if (*pp == pc) {
            *pp = pc->stats_next;
            break;
        }
    }
    pthread_mutex_unlock(&stats_lock);
}

/*
 * The path with each "%p" replaced by this process's id and "%%" by "%"
 * (any other "%" stays as it is); 0 if it does not fit.
 */
static int expand_path(const char *tmpl, char *out, size_t size)
{
    char pid[24];
    size_t n = 0, pidlen;

    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    pidlen = strlen(pid);
    for (const char *s = tmpl; *s != '\0'; s++) {
        const char *add = s;
        size_t len = 1;

        if (s[0] == '%' && s[1] == 'p') {
            add = pid;
            len = pidlen;
            s++;
        } else if (s[0] == '%' && s[1] == '%') {
            s++;
        }
        if (len >= size - n)
            return 0;
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = '\0';
    return 1;
}

/*
 * Appends "pid=P chapoly-aead-messages=N ..." (every counter) to the file
 * named by CHAPOLY_STATS_FILE, else by the config key stats_file; called at
 * teardown, only with statistics on and only if this process counted
 * something. secure_getenv hides the variable from setuid/setgid processes.
 * "%p" in the path is this process's id, taken now (a forked child's own).
 * The last path component is never followed through a symlink (O_NOFOLLOW);
 * only a regular file with a single link, owned by the effective user, is
 * written; a file created here gets mode 0600 whatever the umask. The line
 * goes out in one write(2) with O_APPEND, so the lines of processes sharing
 * the file do not mix. Every failure is silent.
 */
static void write_stats_file(chapoly_provctx *pc)
{
    const char *tmpl = secure_getenv("CHAPOLY_STATS_FILE");
    const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    int saved_errno = errno, created = 1, fd, n;
    struct stat st;
    char path[PATH_MAX], line[CHAPOLY_NCOUNTERS * 48 + 32];

    if (tmpl == NULL || *tmpl == '\0')
        tmpl = pc->stats_file;
    if (tmpl == NULL || *tmpl == '\0' || !expand_path(tmpl, path, sizeof(path)))
        return;
    fd = open(path, flags | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        /* O_NONBLOCK: a FIFO without a reader fails instead of blocking */
        fd = open(path, flags | O_NONBLOCK);
    }
    if (fd < 0)
        goto out;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_nlink != 1 || (created && fchmod(fd, 0600) != 0)) {
        close(fd);
        goto out;
    }
    n = snprintf(line, sizeof(line), "pid=%ld", (long)getpid());
    for (int i = 0; i < CHAPOLY_NCOUNTERS && n > 0 && (size_t)n < sizeof(line); i++)
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %s=%llu", counter_names[i],
                      (unsigned long long)counter(pc, i));
    if (n > 0 && (size_t)n < sizeof(line) - 1) {
        ssize_t w;

        line[n++] = '\n';
        do
            w = write(fd, line, (size_t)n); /* O_APPEND: one line, one write */
        while (w < 0 && errno == EINTR);
    }
    close(fd);
out:
    errno = saved_errno;
}

static void chapoly_teardown(void *provctx)
{
    chapoly_provctx *pc = provctx;
    int counted = 0;

    if (pc == NULL)
        return;
    if (pc->stats) {
        stats_detach(pc);
        for (int i = 0; i < CHAPOLY_NCOUNTERS; i++)
            counted |= counter(pc, i) != 0;
        if (counted) /* a process that did nothing through chapoly writes nothing */
            write_stats_file(pc);
    }
    OPENSSL_free(pc->stats_file);
    OPENSSL_free(pc);
}

static const OSSL_DISPATCH chapoly_dispatch[] = {
    { OSSL_FUNC_PROVIDER_TEARDOWN, (void (*)(void))chapoly_teardown },
    { OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, (void (*)(void))chapoly_gettable_params },
    { OSSL_FUNC_PROVIDER_GET_PARAMS, (void (*)(void))chapoly_get_params },
    { OSSL_FUNC_PROVIDER_QUERY_OPERATION, (void (*)(void))chapoly_query },
    { 0, NULL }
};

/* ---- configuration: defaults on any mistake, one stderr line per kind ---- */

/* Keys a chapoly config section may hold: libcrypto's four, then ours. */
enum {
    KEY_ACTIVATE, KEY_MODULE, KEY_IDENTITY, KEY_SOFT_LOAD, KEY_STATS, KEY_STATS_FILE, KEY_KERNEL,
    KEY_SERVE, KEY_PATHS, KEY_COUNT
};
static const char *const config_keys[KEY_COUNT] = {
    "activate", "module", "identity", "soft_load", "stats", "stats_file", "kernel", "serve",
    "paths"
};
#define CONFIG_KEYS_TEXT \
    "activate, module, identity, soft_load, stats, stats_file, kernel, serve, paths"

/* Once-per-process flags, one per kind of mistake. */
static int warned_stats_key, warned_stats_env;
static int warned_kernel_unknown, warned_kernel_missing, warned_serve, warned_paths;
static int config_checked; /* the unknown-key pass: at most one per process */

static int first_time(int *flag)
{
    return __atomic_exchange_n(flag, 1, __ATOMIC_RELAXED) == 0;
}

/* 1 or 0 for OpenSSL's boolean spellings (any case), -1 for anything else. */
static int parse_bool(const char *s)
{
    static const char *const on[] = { "1", "yes", "on", "true" };
    static const char *const off[] = { "0", "no", "off", "false" };

    for (size_t i = 0; s != NULL && i < 4; i++) {
        if (strcasecmp(s, on[i]) == 0)
            return 1;
        if (strcasecmp(s, off[i]) == 0)
            return 0;
    }
    return -1;
}

/* libcrypto ignores a "N." prefix on its own provider keys and module names. */
static const char *skip_dot(const char *name)
{
    const char *p = strchr(name, '.');

    return p != NULL ? p + 1 : name;
}

/* Last value of key in a section, by the exact name the core stores, or NULL. */
static const char *section_value(STACK_OF(CONF_VALUE) *sect, const char *key, int dotted)
{
    const char *v = NULL;

    for (int i = 0; i < sk_CONF_VALUE_num(sect); i++) {
        const CONF_VALUE *cv = sk_CONF_VALUE_value(sect, i);

        if (strcmp(dotted ? skip_dot(cv->name) : cv->name, key) == 0)
            v = cv->value;
    }
    return v;
}

/* The section configuring provider 'name' in conf, following openssl_conf. */
static const char *provider_section(const CONF *conf, const char *name)
{
    const char *init = NCONF_get_string(conf, NULL, "openssl_conf");
    STACK_OF(CONF_VALUE) *mods = init != NULL ? NCONF_get_section(conf, init) : NULL;

    for (int i = 0; i < sk_CONF_VALUE_num(mods); i++) {
        const CONF_VALUE *m = sk_CONF_VALUE_value(mods, i);
        const char *dot = strrchr(m->name, '.');
        size_t len = dot != NULL ? (size_t)(dot - m->name) : strlen(m->name);
        STACK_OF(CONF_VALUE) *provs;

        if (len != strlen("providers") || strncmp(m->name, "providers", len) != 0)
            continue;
        provs = NCONF_get_section(conf, m->value);
        for (int j = 0; j < sk_CONF_VALUE_num(provs); j++) {
            const CONF_VALUE *pv = sk_CONF_VALUE_value(provs, j);
            STACK_OF(CONF_VALUE) *sect = NCONF_get_section(conf, pv->value);
            const char *id;

            if (sect == NULL)
                continue;
            id = section_value(sect, "identity", 1);
            if (strcmp(id != NULL ? id : skip_dot(pv->name), name) == 0)
                return pv->value;
        }
    }
    return NULL;
}

/*
 * The core hands a provider the values of the keys it asks for, but cannot
 * list the section's keys, so a misspelt key would go unnoticed. When this
 * instance was configured from a section (the core knows some of its keys),
 * read the config file libcrypto reads by default (CONF_get1_default_config_file:
 * OPENSSL_CONF, itself read with libcrypto's setuid-safe getenv), find this
 * provider's section through openssl_conf -> providers, and, if its known
 * keys hold exactly the values the core gave us (it is the section that
 * configured us, not another file's), report every key chapoly and libcrypto
 * do not use. Done once per process; any failure just skips the check.
 */
static void check_config_keys(const char *prov_name, const char *const core_vals[KEY_COUNT])
{
    char *file;
    CONF *conf;
    const char *sname;
    STACK_OF(CONF_VALUE) *sect;

    if (prov_name == NULL || __atomic_load_n(&config_checked, __ATOMIC_RELAXED))
        return;
    ERR_set_mark();
    file = CONF_get1_default_config_file();
    conf = NCONF_new(NULL);
    if (file == NULL || conf == NULL || NCONF_load(conf, file, NULL) <= 0)
        goto done;
    if ((sname = provider_section(conf, prov_name)) == NULL ||
        (sect = NCONF_get_section(conf, sname)) == NULL)
        goto done;
    for (int k = 0; k < KEY_COUNT; k++) {
        const char *fv = section_value(sect, config_keys[k], 0);

        if ((fv == NULL) != (core_vals[k] == NULL) ||
            (fv != NULL && strcmp(fv, core_vals[k]) != 0))
            goto done; /* another file configured this instance */
    }
    if (!first_time(&config_checked))
        goto done;
    for (int i = 0; i < sk_CONF_VALUE_num(sect); i++) {
        const CONF_VALUE *cv = sk_CONF_VALUE_value(sect, i);
        int known = 0;

        for (int k = 0; k < KEY_COUNT && !known; k++)
            known = strcmp(cv->name, config_keys[k]) == 0 ||
                    (k < KEY_STATS && strcmp(skip_dot(cv->name), config_keys[k]) == 0);
        if (!known)
            fprintf(stderr, "chapoly: unknown key \"%s\" in config section [%s], ignored "
                            "(known keys: " CONFIG_KEYS_TEXT ")\n", cv->name, sname);
    }
done:
    NCONF_free(conf);
    OPENSSL_free(file);
    ERR_pop_to_mark();
}

/* stats from the config key or CHAPOLY_STATS; a bad value is reported and means off. */
static int stats_setting(const char *cfg)
{
    const char *env = secure_getenv("CHAPOLY_STATS");
    int c = cfg != NULL ? parse_bool(cfg) : 0, e = env != NULL && *env ? parse_bool(env) : 0;

    if (c < 0 && first_time(&warned_stats_key))
        fprintf(stderr, "chapoly: config key \"stats\": unrecognised value \"%s\" (use 1/0, "
                        "yes/no, on/off or true/false); treated as off\n", cfg);
    if (e < 0 && first_time(&warned_stats_env))
        fprintf(stderr, "chapoly: CHAPOLY_STATS: unrecognised value \"%s\" (use 1/0, "
                        "yes/no, on/off or true/false); treated as off\n", env);
    return c == 1 || e == 1;
}

/*
 * The level asked for, as chapoly_kernels_select reads it: the config key,
 * else CHAPOLY_KERNEL (not in setuid processes); "" if neither. *where names
 * the source for messages.
 */
static const char *kernel_request(const char *cfg_kernel, const char **where)
{
    int from_cfg = cfg_kernel != NULL && *cfg_kernel != '\0';
    const char *asked = from_cfg ? cfg_kernel : secure_getenv("CHAPOLY_KERNEL");

    if (where != NULL)
        *where = from_cfg ? "config key \"kernel\"" : "CHAPOLY_KERNEL";
    return asked != NULL ? asked : "";
}

/*
 * Never slower than the default provider: where only the portable level runs
 * (no SIMD kernel for this CPU, or a CHAPOLY_SIMD=OFF build), OpenSSL's own
 * assembly beats it for ChaCha20, ChaCha20-Poly1305 and POLY1305, so chapoly
 * offers only XChaCha20-Poly1305, which no other provider has, and a
 * `?provider=chapoly` preference falls through to the default provider for
 * the rest. `serve = all`, or the portable level asked for by name (config
 * `kernel = portable`, CHAPOLY_KERNEL=portable), offers all four. A bad
 * value of `serve` is reported once and means the default ("auto").
 */
static int serve_all_setting(const char *cfg_serve, const char *cfg_kernel,
                             const chapoly_kernels *k)
{
    int all = 0;

    if (cfg_serve != NULL) {
        if (strcasecmp(cfg_serve, "all") == 0)
            all = 1;
        else if (strcasecmp(cfg_serve, "auto") != 0 && first_time(&warned_serve))
            fprintf(stderr, "chapoly: config key \"serve\": unrecognised value \"%s\" (use all "
                            "or auto); treated as auto\n", cfg_serve);
    }
    return all || strcmp(k->name, "portable") != 0 ||
           strcmp(kernel_request(cfg_kernel, NULL), "portable") == 0;
}

static void report_kernel(const char *cfg_kernel, const char *warning, const chapoly_kernels *k)
{
    const char *where;
    const char *asked = kernel_request(cfg_kernel, &where);

    if (!chapoly_kernels_known(asked)) {
        if (first_time(&warned_kernel_unknown))
            fprintf(stderr, "chapoly: %s: unknown kernel level \"%s\" (known: "
                            CHAPOLY_LEVELS "); using %s\n", where, asked, k->name);
    } else if (first_time(&warned_kernel_missing)) {
        fprintf(stderr, "chapoly: %s: kernel \"%s\": %s (%s)\n", where, asked, warning, k->name);
    }
}

__attribute__((visibility("default")))
int OSSL_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                       const OSSL_DISPATCH **out, void **provctx)
{
    OSSL_FUNC_core_get_params_fn *core_get_params = NULL;
    const char *cfg[KEY_COUNT] = { NULL }, *prov_name = NULL, *warning = NULL;
    const char *paths_warning = NULL;
    chapoly_provctx *pc;

    for (; in->function_id != 0; in++) {
        if (in->function_id == OSSL_FUNC_CORE_GET_PARAMS)
            core_get_params = OSSL_FUNC_core_get_params(in);
    }
    if (core_get_params != NULL) {
        /* Keys of our openssl.cnf section arrive as utf8 pointers. */
        OSSL_PARAM cp[KEY_COUNT + 2];
        int n = 0, any = 0;

        for (int k = 0; k < KEY_COUNT; k++)
            cp[n++] = OSSL_PARAM_construct_utf8_ptr(config_keys[k], (char **)&cfg[k], 0);
        cp[n++] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_CORE_PROV_NAME,
                                                (char **)&prov_name, 0);
        cp[n] = OSSL_PARAM_construct_end();
        if (!core_get_params(handle, cp)) {
            memset(cfg, 0, sizeof(cfg));
            prov_name = NULL;
        }
        for (int k = 0; k < KEY_COUNT; k++)
            any |= cfg[k] != NULL;
        if (any)
            check_config_keys(prov_name, cfg);
    }

    pc = OPENSSL_zalloc(sizeof(*pc));
    if (pc == NULL)
        return 0;
    pc->handle = handle;
    chapoly_kernels_build(&pc->table, cfg[KEY_KERNEL], cfg[KEY_PATHS], &warning, &paths_warning);
    pc->k = &pc->table;
    if (warning != NULL)
        report_kernel(cfg[KEY_KERNEL], warning, pc->k);
    if (paths_warning != NULL && first_time(&warned_paths))
        fprintf(stderr, "chapoly: %s \"%s\": %s\n",
                cfg[KEY_PATHS] != NULL && *cfg[KEY_PATHS] ? "config key \"paths\"" : "CHAPOLY_PATHS",
                cfg[KEY_PATHS] != NULL && *cfg[KEY_PATHS] ? cfg[KEY_PATHS]
                                                           : secure_getenv("CHAPOLY_PATHS"),
                paths_warning);
    chapoly_kernels_describe(pc->k, pc->paths, sizeof(pc->paths));
    pc->stats = stats_setting(cfg[KEY_STATS]);
    if (pc->stats && cfg[KEY_STATS_FILE] != NULL && *cfg[KEY_STATS_FILE] != '\0')
        pc->stats_file = OPENSSL_strdup(cfg[KEY_STATS_FILE]); /* NULL: no file, silently */
    pc->serve_all = serve_all_setting(cfg[KEY_SERVE], cfg[KEY_KERNEL], pc->k);
    snprintf(pc->buildinfo, sizeof(pc->buildinfo),
             "chapoly " CHAPOLY_VERSION " (OpenSSL " OPENSSL_VERSION_STR " headers), kernel %s: %s; "
             "paths: %s%s",
             pc->k->name, pc->k->features != NULL ? pc->k->features : "?", pc->paths,
             pc->serve_all ? ""
                           : "; serving XChaCha20-Poly1305 only: no SIMD kernel here, so "
                             "ChaCha20, ChaCha20-Poly1305 and POLY1305 are left to the default "
                             "provider (serve = all offers them)");
    if (pc->stats)
        stats_attach(pc);
    *provctx = pc;
    *out = chapoly_dispatch;
    return 1;
}
