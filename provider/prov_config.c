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
#include <openssl/conf.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
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
static void check_config_keys(const char *prov_name,
                              const char *const core_vals[CHAPOLY_NCONFIG])
{
    char *file;
    CONF *conf;
    const char *sname;
    STACK_OF(CONF_VALUE) *sect;
    char text[KNOWN_KEYS_SIZE];
    quoted qk, qs;

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
    for (int k = 0; k < CHAPOLY_NCONFIG; k++) {
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

        for (int k = 0; k < CHAPOLY_NCONFIG && !known; k++)
            known = strcmp(cv->name, config_keys[k]) == 0 ||
                    (k < CHAPOLY_CFG_STATS && strcmp(skip_dot(cv->name), config_keys[k]) == 0);
        if (!known)
            fprintf(stderr, "chapoly: unknown key \"%s\" in config section [%s], ignored "
                            "(known keys: %s)\n", quote(&qk, cv->name), quote(&qs, sname),
                    known_keys_text(text));
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
        OSSL_PARAM cp[CHAPOLY_NCONFIG + 2];
        int n = 0, any = 0;

        for (int k = 0; k < CHAPOLY_NCONFIG; k++)
            cp[n++] = OSSL_PARAM_construct_utf8_ptr(config_keys[k], (char **)&v[k], 0);
        cp[n++] = OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_CORE_PROV_NAME,
                                                (char **)&prov_name, 0);
        cp[n] = OSSL_PARAM_construct_end();
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
        pc->stats_file = OPENSSL_strdup(stats_file); /* NULL: no file, silently */
    pc->serve = serve_setting(cfg->value[CHAPOLY_CFG_SERVE], kernel, pc->k);
}
