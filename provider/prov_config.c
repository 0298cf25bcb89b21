/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration: the keys of chapoly's openssl.cnf section (through the
 * core's get_params) and the environment (secure_getenv, so not in setuid
 * processes), with defaults on any mistake and one stderr line per kind of
 * mistake per process; nothing else here writes or prints.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "prov.h"

#define CHAPOLY_CFG_NAME_(id, name) name,
static const char *const config_keys[CHAPOLY_NCONFIG] = {
    CHAPOLY_CONFIG_KEYS(CHAPOLY_CFG_NAME_)
};
#undef CHAPOLY_CFG_NAME_

/* Room for "activate, module, ..., paths": every name and its ", ". */
#define CHAPOLY_CFG_TEXT_(id, name) name ", "
#define KNOWN_KEYS_SIZE sizeof(CHAPOLY_CONFIG_KEYS(CHAPOLY_CFG_TEXT_))

/* The known keys as the unknown-key message lists them, into buf (KNOWN_KEYS_SIZE). */
static const char *known_keys_text(char *buf)
{
    size_t n = 0;

    for (int k = 0; k < CHAPOLY_NCONFIG; k++) {
        size_t len = strlen(config_keys[k]);

        if (k > 0) {
            memcpy(buf + n, ", ", 2);
            n += 2;
        }
        memcpy(buf + n, config_keys[k], len);
        n += len;
    }
    buf[n] = '\0';
    return buf;
}

/* Once-per-process flags, one per kind of mistake. */
static int warned_stats_key, warned_stats_env;
static int warned_kernel_unknown, warned_kernel_missing, warned_serve, warned_paths;
static int config_checked; /* the unknown-key pass: at most one per process */

static int first_time(int *flag)
{
    return __atomic_exchange_n(flag, 1, __ATOMIC_RELAXED) == 0;
}

/*
 * A configured value or key as a message quotes it: at most QUOTE_MAX
 * characters (past that its first QUOTE_MAX - 3 and "..."), so that a huge
 * value cannot make a huge line, and bytes that are not printable ASCII as
 * '?', so that it cannot move a terminal's cursor either.
 */
#define QUOTE_MAX 64
typedef struct {
    char text[QUOTE_MAX + 1];
} quoted;

static const char *quote(quoted *q, const char *v)
{
    size_t n = 0, len = v != NULL ? strnlen(v, QUOTE_MAX + 1) : 0;
    size_t keep = len > QUOTE_MAX ? QUOTE_MAX - 3 : len;

    for (; n < keep; n++) {
        unsigned char c = (unsigned char)v[n];

        q->text[n] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    if (len > QUOTE_MAX) {
        memcpy(q->text + n, "...", 3);
        n += 3;
    }
    q->text[n] = '\0';
    return q->text;
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

/*
 * The configuration file, read for the misspelt-key check below: every
 * "key = value" line with its section. The syntax is OpenSSL's
 * (config(5)): [section] headers, '#' comments, "quoted" and 'quoted'
 * values, backslash escapes and line continuations. A value that refers to
 * a variable ($var, ${section::var}) is not expanded: it is marked, and a
 * check that would need it is skipped. .include and .pragma lines are not
 * followed; a key in an included file then makes the file's values differ
 * from the core's and the check is skipped.
 */
typedef struct conf_entry {
    const char *section, *name, *value;
    int plain; /* the value needs no variable expansion */
} conf_entry;

typedef struct conf_file {
    char *text;
    conf_entry *e;
    size_t n, cap;
} conf_file;

#define CONF_MAX_BYTES (1u << 20)

static char *trim(char *s)
{
    char *end;

    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        *--end = '\0';
    return s;
}

/* Cut a '#' comment (outside quotes, not escaped); returns 0 if a quote is left open. */
static int cut_comment(char *s)
{
    char quote = 0;

    for (; *s != '\0'; s++) {
        if (*s == '\\' && s[1] != '\0') {
            s++;
        } else if (quote != 0) {
            if (*s == quote)
                quote = 0;
        } else if (*s == '"' || *s == '\'') {
            quote = *s;
        } else if (*s == '#') {
            *s = '\0';
            break;
        }
    }
    return quote == 0;
}

/* Quotes removed and escapes resolved in place; *plain = 0 if it names a variable. */
static void unquote(char *s, int *plain)
{
    char *o = s, quote = 0;

    *plain = 1;
    for (; *s != '\0'; s++) {
        if (*s == '\\' && s[1] != '\0') {
            s++;
            *o++ = *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s == 't' ? '\t' : *s == 'b' ? '\b' : *s;
        } else if (quote != 0 && *s == quote) {
            quote = 0;
        } else if (quote == 0 && (*s == '"' || *s == '\'')) {
            quote = *s;
        } else {
            if (*s == '$' && quote != '\'')
                *plain = 0;
            *o++ = *s;
        }
    }
    *o = '\0';
}

static int conf_add(conf_file *f, const char *section, const char *name, const char *value,
                    int plain)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        conf_entry *e = chapoly_malloc(cap * sizeof(*e));

        if (e == NULL)
            return 0;
        if (f->n > 0)
            memcpy(e, f->e, f->n * sizeof(*e));
        chapoly_free(f->e);
        f->e = e;
        f->cap = cap;
    }
    f->e[f->n++] = (conf_entry){ section, name, value, plain };
    return 1;
}

/* Parses f->text in place; 0 on anything this reader does not take. */
static int conf_parse(conf_file *f)
{
    const char *section = "default";
    char *line = f->text;

    while (*line != '\0') {
        char *next = line, *eq;

        /* a logical line: joined across backslash-newline */
        for (;;) {
            char *nl = strchr(next, '\n');
            size_t len;

            if (nl == NULL) {
                next += strlen(next);
                break;
            }
            len = (size_t)(nl - line);
            if (len > 0 && nl[-1] == '\r')
                len--;
            if (len > 0 && line[len - 1] == '\\') {
                /* remove the backslash and the newline, keep going */
                memmove(line + len - 1, nl + 1, strlen(nl + 1) + 1);
                next = line + len - 1;
                continue;
            }
            *nl = '\0';
            next = nl + 1;
            break;
        }
        if (!cut_comment(line))
            return 0;
        line = trim(line);
        if (*line == '[') {
            char *close = strchr(line, ']');

            if (close == NULL)
                return 0;
            *close = '\0';
            section = trim(line + 1);
        } else if (*line != '\0' && *line != '.' && (eq = strchr(line, '=')) != NULL) {
            char *name, *value, *sep;
            const char *sect = section;
            int plain;

            *eq = '\0';
            name = trim(line);
            value = trim(eq + 1);
            if ((sep = strstr(name, "::")) != NULL) { /* section::name = value */
                *sep = '\0';
                sect = name;
                name = sep + 2;
            }
            unquote(value, &plain);
            if (!conf_add(f, sect, name, value, plain))
                return 0;
        }
        line = next;
    }
    return 1;
}

/*
 * Last entry of key in a section, by the exact name or (dotted) the name
 * after a "N." prefix, or NULL.
 */
static const conf_entry *conf_get(const conf_file *f, const char *section, const char *key,
                                  int dotted)
{
    const conf_entry *v = NULL;

    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->e[i].section, section) == 0 &&
            strcmp(dotted ? skip_dot(f->e[i].name) : f->e[i].name, key) == 0)
            v = &f->e[i];
    return v;
}

static int conf_has_section(const conf_file *f, const char *section)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->e[i].section, section) == 0)
            return 1;
    return 0;
}

/* The section configuring provider 'name', following openssl_conf, or NULL. */
static const char *provider_section(const conf_file *f, const char *name)
{
    const conf_entry *init = conf_get(f, "default", "openssl_conf", 0);

    if (init == NULL || !init->plain)
        return NULL;
    for (size_t i = 0; i < f->n; i++) {
        const conf_entry *m = &f->e[i];
        const char *dot = strrchr(m->name, '.');
        size_t len = dot != NULL ? (size_t)(dot - m->name) : strlen(m->name);

        if (strcmp(m->section, init->value) != 0 || !m->plain ||
            len != strlen("providers") || strncmp(m->name, "providers", len) != 0)
            continue;
        for (size_t j = 0; j < f->n; j++) {
            const conf_entry *pv = &f->e[j], *id;

            if (strcmp(pv->section, m->value) != 0 || !pv->plain ||
                !conf_has_section(f, pv->value))
                continue;
            id = conf_get(f, pv->value, "identity", 1);
            if (strcmp(id != NULL ? id->value : skip_dot(pv->name), name) == 0)
                return pv->value;
        }
    }
    return NULL;
}

/*
 * The file libcrypto reads by default: OPENSSL_CONF (libcrypto reads it with
 * its setuid-safe getenv, as secure_getenv does here), else openssl.cnf in
 * OPENSSLDIR. OPENSSLDIR is not among the core's parameters; Debian builds
 * every OpenSSL (3.0 to 4.0) with /usr/lib/ssl, which the build can change
 * (CHAPOLY_OPENSSLDIR). A wrong guess only skips the check: the file must
 * hold the very values the core gave this instance.
 */
#ifndef CHAPOLY_OPENSSLDIR
#define CHAPOLY_OPENSSLDIR "/usr/lib/ssl"
#endif

/*
 * The core hands a provider the values of the keys it asks for, but cannot
 * list the section's keys, so a misspelt key would go unnoticed. When this
 * instance was configured from a section (the core knows some of its keys),
 * read the config file libcrypto reads by default through the core's BIO
 * functions, find this provider's section through openssl_conf -> providers,
 * and, if its known keys hold exactly the values the core gave us (it is the
 * section that configured us, not another file's), report every key chapoly
 * and libcrypto do not use. Done once per process; any failure just skips
 * the check.
 */
static void check_config_keys(const char *prov_name,
                              const char *const core_vals[CHAPOLY_NCONFIG])
{
    const char *env = secure_getenv("OPENSSL_CONF"), *sname;
    conf_file f = { NULL, NULL, 0, 0 };
    char text[KNOWN_KEYS_SIZE];
    quoted qk, qs;
    int marked;

    if (prov_name == NULL || __atomic_load_n(&config_checked, __ATOMIC_RELAXED))
        return;
    marked = chapoly_err_set_mark(); /* a missing file queues an error: take it back */
    if (!marked)
        return;
    f.text = chapoly_core_read_file(env != NULL && *env != '\0' ? env
                                                                : CHAPOLY_OPENSSLDIR "/openssl.cnf",
                                    CONF_MAX_BYTES);
    if (f.text == NULL || !conf_parse(&f) || (sname = provider_section(&f, prov_name)) == NULL)
        goto done;
    for (int k = 0; k < CHAPOLY_NCONFIG; k++) {
        const conf_entry *fv = conf_get(&f, sname, config_keys[k], 0);

        if ((fv == NULL) != (core_vals[k] == NULL) ||
            (fv != NULL && (!fv->plain || strcmp(fv->value, core_vals[k]) != 0)))
            goto done; /* another file configured this instance */
    }
    if (!first_time(&config_checked))
        goto done;
    for (size_t i = 0; i < f.n; i++) {
        const conf_entry *cv = &f.e[i];
        int known = 0;

        if (strcmp(cv->section, sname) != 0)
            continue;
        for (int k = 0; k < CHAPOLY_NCONFIG && !known; k++)
            known = strcmp(cv->name, config_keys[k]) == 0 ||
                    (k < CHAPOLY_CFG_STATS && strcmp(skip_dot(cv->name), config_keys[k]) == 0);
        if (!known)
            fprintf(stderr, "chapoly: unknown key \"%s\" in config section [%s], ignored "
                            "(known keys: %s)\n", quote(&qk, cv->name), quote(&qs, sname),
                    known_keys_text(text));
    }
done:
    chapoly_free(f.e);
    chapoly_free(f.text);
    chapoly_err_pop_to_mark();
}

/* stats from the config key or CHAPOLY_STATS; a bad value is reported and means off. */
static int stats_setting(const char *cfg)
{
    const char *env = secure_getenv("CHAPOLY_STATS");
    int c = cfg != NULL ? parse_bool(cfg) : 0, e = env != NULL && *env ? parse_bool(env) : 0;
    quoted q;

    if (c < 0 && first_time(&warned_stats_key))
        fprintf(stderr, "chapoly: config key \"stats\": unrecognised value \"%s\" (use 1/0, "
                        "yes/no, on/off or true/false); treated as off\n", quote(&q, cfg));
    if (e < 0 && first_time(&warned_stats_env))
        fprintf(stderr, "chapoly: CHAPOLY_STATS: unrecognised value \"%s\" (use 1/0, "
                        "yes/no, on/off or true/false); treated as off\n", quote(&q, env));
    return c == 1 || e == 1;
}

/*
 * The level asked for, as chapoly_kernels_build reads it: the config key,
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
 * Never slower than the default provider: chapoly offers what the level it
 * picked for this CPU beats the default provider at there
 * (chapoly_kernels_serves): where only the portable level runs (no SIMD
 * kernel for this CPU, or a CHAPOLY_SIMD=OFF build), OpenSSL's own assembly
 * beats it for ChaCha20, ChaCha20-Poly1305 and POLY1305, so chapoly offers
 * only XChaCha20-Poly1305, which no other provider has; at avx512-noifma
 * (AVX-512 without IFMA) it leaves POLY1305 out. A `?provider=chapoly`
 * preference then falls through to the default provider for the rest.
 * `serve = all`, or a level asked for by name (config `kernel`,
 * CHAPOLY_KERNEL), offers all four. A bad value of `serve` is reported once
 * and means the default ("auto").
 */
static unsigned serve_setting(const char *cfg_serve, const char *cfg_kernel,
                              const chapoly_kernels *k)
{
    const char *asked = kernel_request(cfg_kernel, NULL);
    quoted q;

    if (cfg_serve != NULL) {
        if (strcasecmp(cfg_serve, "all") == 0)
            return CHAPOLY_SERVE_ALL;
        if (strcasecmp(cfg_serve, "auto") != 0 && first_time(&warned_serve))
            fprintf(stderr, "chapoly: config key \"serve\": unrecognised value \"%s\" (use all "
                            "or auto); treated as auto\n", quote(&q, cfg_serve));
    }
    if (strcmp(asked, k->name) == 0) /* the level asked for by name, and granted */
        return CHAPOLY_SERVE_ALL;
    return chapoly_kernels_serves(k);
}

static void report_kernel(const char *cfg_kernel, const char *warning, const chapoly_kernels *k)
{
    const char *where;
    const char *asked = kernel_request(cfg_kernel, &where);
    quoted q;

    if (!chapoly_kernels_known(asked)) {
        if (first_time(&warned_kernel_unknown))
            fprintf(stderr, "chapoly: %s: unknown kernel level \"%s\" (known: "
                            CHAPOLY_LEVELS "); using %s\n", where, quote(&q, asked), k->name);
    } else if (first_time(&warned_kernel_missing)) {
        fprintf(stderr, "chapoly: %s: kernel \"%s\": %s (%s)\n", where, quote(&q, asked), warning,
                k->name);
    }
}

unsigned chapoly_config_openssl(const char *version)
{
    unsigned major = 0, minor = 0;
    const char *p = version;

    if (p == NULL)
        return 300;
    for (; *p >= '0' && *p <= '9' && major < 1000; p++)
        major = major * 10 + (unsigned)(*p - '0');
    if (*p++ != '.')
        return 300;
    for (; *p >= '0' && *p <= '9' && minor < 100; p++)
        minor = minor * 10 + (unsigned)(*p - '0');
    if (major < 3 || minor > 99)
        return 300;
    return major * 100 + minor;
}

/* A utf8_ptr parameter asking for a string the core holds. */
static OSSL_PARAM utf8_ptr_param(const char *key, const char **where)
{
    OSSL_PARAM p = { key, OSSL_PARAM_UTF8_PTR, (void *)where, 0, OSSL_PARAM_UNMODIFIED };

    return p;
}

void chapoly_config_read(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
                         chapoly_config *cfg)
{
    OSSL_FUNC_core_get_params_fn *core_get_params = NULL;
    const char **v = cfg->value, *prov_name = NULL;

    memset(cfg, 0, sizeof(*cfg));
    for (; in->function_id != 0; in++) {
        if (in->function_id == OSSL_FUNC_CORE_GET_PARAMS)
            core_get_params = OSSL_FUNC_core_get_params(in);
    }
    if (core_get_params != NULL) {
        /* Keys of our openssl.cnf section arrive as utf8 pointers. */
        OSSL_PARAM cp[CHAPOLY_NCONFIG + 3];
        int n = 0, any = 0;

        for (int k = 0; k < CHAPOLY_NCONFIG; k++)
            cp[n++] = utf8_ptr_param(config_keys[k], &v[k]);
        cp[n++] = utf8_ptr_param(OSSL_PROV_PARAM_CORE_PROV_NAME, &prov_name);
        cp[n++] = utf8_ptr_param(OSSL_PROV_PARAM_CORE_VERSION, &cfg->openssl_version);
        cp[n] = (OSSL_PARAM)OSSL_PARAM_END;
        if (!core_get_params(handle, cp)) {
            memset(cfg, 0, sizeof(*cfg));
            prov_name = NULL;
        }
        for (int k = 0; k < CHAPOLY_NCONFIG; k++)
            any |= v[k] != NULL;
        if (any)
            check_config_keys(prov_name, v);
    }
}

void chapoly_config_apply(chapoly_provctx *pc, const chapoly_config *cfg)
{
    const char *kernel = cfg->value[CHAPOLY_CFG_KERNEL], *paths = cfg->value[CHAPOLY_CFG_PATHS];
    const char *stats_file = cfg->value[CHAPOLY_CFG_STATS_FILE];
    const char *warning = NULL, *paths_warning = NULL;
    quoted q;

    chapoly_kernels_build(&pc->table, kernel, paths, &warning, &paths_warning);
    pc->k = &pc->table;
    chapoly_kernels_for_mac(&pc->mac, pc->k);
    if (warning != NULL)
        report_kernel(kernel, warning, pc->k);
    if (paths_warning != NULL && first_time(&warned_paths))
        fprintf(stderr, "chapoly: %s \"%s\": %s\n",
                paths != NULL && *paths ? "config key \"paths\"" : "CHAPOLY_PATHS",
                quote(&q, paths != NULL && *paths ? paths : secure_getenv("CHAPOLY_PATHS")),
                paths_warning);
    chapoly_kernels_describe(pc->k, pc->paths, sizeof(pc->paths));
    pc->stats = stats_setting(cfg->value[CHAPOLY_CFG_STATS]);
    if (pc->stats && stats_file != NULL && *stats_file != '\0')
        pc->stats_file = chapoly_strdup(stats_file); /* NULL: no file, silently */
    pc->serve = serve_setting(cfg->value[CHAPOLY_CFG_SERVE], kernel, pc->k);
}
