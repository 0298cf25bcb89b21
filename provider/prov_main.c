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
#define PARAM_AEAD_MESSAGES "chapoly-aead-messages"
#define PARAM_TLS_RECORDS "chapoly-tls-records"

static const OSSL_PARAM chapoly_param_types[] = {
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_KERNEL, OSSL_PARAM_UTF8_PTR, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_AEAD_MESSAGES, OSSL_PARAM_UNSIGNED_INTEGER, NULL, 0),
    OSSL_PARAM_DEFN(PARAM_TLS_RECORDS, OSSL_PARAM_UNSIGNED_INTEGER, NULL, 0),
    OSSL_PARAM_END
};

static const OSSL_PARAM *chapoly_gettable_params(void *provctx)
{
    (void)provctx;
    return chapoly_param_types;
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
    p = OSSL_PARAM_locate(params, PARAM_AEAD_MESSAGES);
    if (p != NULL &&
        !chapoly_param_set_uint64(p, __atomic_load_n(&pc->aead_messages, __ATOMIC_RELAXED)))
        return 0;
    p = OSSL_PARAM_locate(params, PARAM_TLS_RECORDS);
    if (p != NULL &&
        !chapoly_param_set_uint64(p, __atomic_load_n(&pc->tls_records, __ATOMIC_RELAXED)))
        return 0;
    return 1;
}

/*
 * Appends "chapoly-aead-messages=N chapoly-tls-records=M" to the file named
 * by CHAPOLY_STATS_FILE; called only when statistics are on. secure_getenv
 * hides the variable from setuid/setgid processes. The last path component
 * is never followed through a symlink (O_NOFOLLOW); only a regular file with
 * a single link, owned by the effective user, is written; a file created here
 * gets mode 0600 whatever the umask. Every failure is silent.
 */
static void write_stats_file(chapoly_provctx *pc)
{
    const char *path = secure_getenv("CHAPOLY_STATS_FILE");
    const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    int saved_errno = errno, created = 1, fd, n;
    struct stat st;
    char line[96];

    if (path == NULL || *path == '\0')
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
    n = snprintf(line, sizeof(line), "chapoly-aead-messages=%llu chapoly-tls-records=%llu\n",
                 (unsigned long long)__atomic_load_n(&pc->aead_messages, __ATOMIC_RELAXED),
                 (unsigned long long)__atomic_load_n(&pc->tls_records, __ATOMIC_RELAXED));
    if (n > 0 && (size_t)n < sizeof(line)) {
        ssize_t w;

        do
            w = write(fd, line, (size_t)n); /* O_APPEND: one short line, one write */
        while (w < 0 && errno == EINTR);
    }
    close(fd);
out:
    errno = saved_errno;
}

static void chapoly_teardown(void *provctx)
{
    chapoly_provctx *pc = provctx;

    if (pc == NULL)
        return;
    if (pc->stats)
        write_stats_file(pc);
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
    KEY_ACTIVATE, KEY_MODULE, KEY_IDENTITY, KEY_SOFT_LOAD, KEY_STATS, KEY_KERNEL, KEY_SERVE,
    KEY_COUNT
};
static const char *const config_keys[KEY_COUNT] = {
    "activate", "module", "identity", "soft_load", "stats", "kernel", "serve"
};
#define CONFIG_KEYS_TEXT "activate, module, identity, soft_load, stats, kernel, serve"

/* Once-per-process flags, one per kind of mistake. */
static int warned_stats_key, warned_stats_env;
static int warned_kernel_unknown, warned_kernel_missing, warned_serve;
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
    return all || k != chapoly_kernels_portable() ||
           strcmp(kernel_request(cfg_kernel, NULL), "portable") == 0;
}

static void report_kernel(const char *cfg_kernel, const char *warning, const chapoly_kernels *k)
{
    const char *where;
    const char *asked = kernel_request(cfg_kernel, &where);

    if (!chapoly_kernels_known(asked)) {
        if (first_time(&warned_kernel_unknown))
            fprintf(stderr, "chapoly: %s: unknown kernel level \"%s\" (known: "
                            CHAPOLY_KERNEL_NAMES "); using %s\n", where, asked, k->name);
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
    pc->k = chapoly_kernels_select(cfg[KEY_KERNEL], &warning);
    if (warning != NULL)
        report_kernel(cfg[KEY_KERNEL], warning, pc->k);
    pc->stats = stats_setting(cfg[KEY_STATS]);
    pc->serve_all = serve_all_setting(cfg[KEY_SERVE], cfg[KEY_KERNEL], pc->k);
    snprintf(pc->buildinfo, sizeof(pc->buildinfo),
             "chapoly " CHAPOLY_VERSION " (OpenSSL " OPENSSL_VERSION_STR " headers), kernel %s: %s%s",
             pc->k->name, pc->k->features != NULL ? pc->k->features : "?",
             pc->serve_all ? ""
                           : "; serving XChaCha20-Poly1305 only: no SIMD kernel here, so "
                             "ChaCha20, ChaCha20-Poly1305 and POLY1305 are left to the default "
                             "provider (serve = all offers them)");
    *provctx = pc;
    *out = chapoly_dispatch;
    return 1;
}
