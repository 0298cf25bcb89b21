/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider object itself: its params (name, version, buildinfo, status,
 * chapoly-kernel, the two statistics counters), the algorithm tables it
 * answers for each operation, the statistics switch (env CHAPOLY_STATS or
 * `stats = 1` in its config section, read at provider init), the
 * CHAPOLY_STATS_FILE line written at teardown, and loading through an
 * openssl.cnf file with `kernel = ...`.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/core_dispatch.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include "test_common.h"

#define TAGLEN 16

static const char *const levels[] = { "portable", "avx2", "avx512vl", "avx512-noifma", "avx512",
                                      "neon" };

static int known_level(const char *s)
{
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
        if (s != NULL && strcmp(s, levels[i]) == 0)
            return 1;
    return 0;
}

typedef struct {
    uint64_t msgs, tls;
    int ok;
} counters;

static counters read_counters(OSSL_PROVIDER *prov)
{
    counters c = { 0, 0, 0 };
    OSSL_PARAM p[3] = { OSSL_PARAM_construct_uint64("chapoly-aead-messages", &c.msgs),
                        OSSL_PARAM_construct_uint64("chapoly-tls-records", &c.tls),
                        OSSL_PARAM_construct_end() };
    c.ok = OSSL_PROVIDER_get_params(prov, p) && OSSL_PARAM_modified(&p[0])
           && OSSL_PARAM_modified(&p[1]);
    return c;
}

static const char *read_kernel(OSSL_PROVIDER *prov)
{
    static char buf[64];
    char *k = NULL;
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_utf8_ptr("chapoly-kernel", &k, 0),
                        OSSL_PARAM_construct_end() };

    if (!OSSL_PROVIDER_get_params(prov, p) || k == NULL)
        return NULL;
    snprintf(buf, sizeof(buf), "%s", k);
    return buf;
}

/* ---------------------------------------------------------------------- */
/* Operations used to drive the counters, in a given library context.      */

static uint8_t key[32], iv[24], aad[13], pt[500], buf[600];

/* Streaming seal (update/final); tag out. */
static int op_seal(OSSL_LIB_CTX *lc, const char *name, size_t len, uint8_t tag[TAGLEN])
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lc, name, PROVQ_OURS);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int l1, l2, l3;
    int ok = c && ctx && EVP_EncryptInit_ex(ctx, c, NULL, key, iv)
             && EVP_EncryptUpdate(ctx, NULL, &l1, aad, sizeof(aad))
             && EVP_EncryptUpdate(ctx, buf, &l2, pt, (int)len)
             && EVP_EncryptFinal_ex(ctx, buf + len, &l3) && t_get_tag(ctx, tag, TAGLEN);
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return ok;
}

/* Streaming open of what op_seal just left in buf. */
static int op_open(OSSL_LIB_CTX *lc, const char *name, size_t len, const uint8_t tag[TAGLEN])
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lc, name, PROVQ_OURS);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t back[600];
    int l1, l2, l3;
    int ok = c && ctx && EVP_DecryptInit_ex(ctx, c, NULL, key, iv) && t_set_tag(ctx, tag, TAGLEN)
             && EVP_DecryptUpdate(ctx, NULL, &l1, aad, sizeof(aad))
             && EVP_DecryptUpdate(ctx, back, &l2, buf, (int)len)
             && EVP_DecryptFinal_ex(ctx, back + len, &l3) && memcmp(back, pt, len) == 0;
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return ok;
}

/* EVP_Cipher one-shot style: AAD, data, then in == NULL finalises. */
static int op_cipher_oneshot(OSSL_LIB_CTX *lc, int enc, size_t len, uint8_t tag[TAGLEN])
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", PROVQ_OURS);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t o[600];
    int ok = c && ctx && EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc)
             && (enc || t_set_tag(ctx, tag, TAGLEN))
             && EVP_Cipher(ctx, NULL, aad, sizeof(aad)) == (int)sizeof(aad)
             && EVP_Cipher(ctx, o, enc ? pt : buf, len) == (int)len
             && EVP_Cipher(ctx, NULL, NULL, 0) >= 0 && (!enc || t_get_tag(ctx, tag, TAGLEN));
    if (ok && enc)
        memcpy(buf, o, len);
    else if (ok)
        ok = memcmp(o, pt, len) == 0;
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return ok;
}

/* One TLS 1.2 record (tlsaad + one in-place update, or EVP_Cipher), sealed then opened. */
static int op_tls_record(OSSL_LIB_CTX *lc, int enc, size_t len, int use_evp_cipher,
                         uint8_t *rec)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", PROVQ_OURS);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t a[13] = { 0, 0, 0, 0, 0, 0, 0, 9, 23, 3, 3, 0, 0 };
    size_t reclen = enc ? len : len + TAGLEN; /* the AAD length as libssl writes it */
    int outl = -1;

    a[11] = (uint8_t)(reclen >> 8);
    a[12] = (uint8_t)reclen;
    if (enc)
        memcpy(rec, pt, len);
    int ok = c && ctx && EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc)
             && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 13, a) == TAGLEN;
    if (ok && use_evp_cipher)
        ok = EVP_Cipher(ctx, rec, rec, (unsigned int)(len + TAGLEN)) > 0;
    else if (ok)
        ok = EVP_CipherUpdate(ctx, rec, &outl, rec, (int)(len + TAGLEN))
             && outl == (int)(enc ? len + TAGLEN : len);
    if (ok && !enc)
        ok = memcmp(rec, pt, len) == 0;
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return ok;
}

static int op_chacha20_and_mac(OSSL_LIB_CTX *lc)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lc, "ChaCha20", PROVQ_OURS);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    EVP_MAC *m = EVP_MAC_fetch(lc, "POLY1305", PROVQ_OURS);
    EVP_MAC_CTX *mc = m ? EVP_MAC_CTX_new(m) : NULL;
    uint8_t civ[16] = { 0 }, t[16];
    size_t tl;
    int l1, l2;
    int ok = c && ctx && EVP_EncryptInit_ex(ctx, c, NULL, key, civ)
             && EVP_EncryptUpdate(ctx, buf, &l1, pt, 100) && EVP_EncryptFinal_ex(ctx, buf, &l2)
             && mc && EVP_MAC_init(mc, key, 32, NULL) && EVP_MAC_update(mc, pt, 100)
             && EVP_MAC_final(mc, t, &tl, 16);
    EVP_MAC_CTX_free(mc);
    EVP_MAC_free(m);
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return ok;
}

/* Each step and the counter increase it must cause (stats enabled). */
static void check_counting(OSSL_LIB_CTX *lc, OSSL_PROVIDER *prov, const char *where)
{
    uint8_t tag[TAGLEN], rec[600];
    counters before = read_counters(prov), now;
    T_OK(before.ok, "%s: counters not readable", where);

#define STEP(call, dm, dt, what)                                                             \
    do {                                                                                     \
        T_OK(call, "%s: %s failed", where, what);                                            \
        now = read_counters(prov);                                                           \
        T_OK(now.ok && now.msgs - before.msgs == (dm) && now.tls - before.tls == (dt),       \
             "%s: %s: aead-messages +%llu (want +%d), tls-records +%llu (want +%d)", where,  \
             what, (unsigned long long)(now.msgs - before.msgs), (dm),                       \
             (unsigned long long)(now.tls - before.tls), (dt));                              \
        before = now;                                                                        \
    } while (0)

    STEP(op_seal(lc, "ChaCha20-Poly1305", 100, tag), 1, 0, "ChaCha20-Poly1305 seal");
    STEP(op_open(lc, "ChaCha20-Poly1305", 100, tag), 1, 0, "ChaCha20-Poly1305 open");
    STEP(op_seal(lc, "ChaCha20-Poly1305", 0, tag), 1, 0, "ChaCha20-Poly1305 empty seal");
    STEP(op_seal(lc, "XChaCha20-Poly1305", 333, tag), 1, 0, "XChaCha20-Poly1305 seal");
    STEP(op_open(lc, "XChaCha20-Poly1305", 333, tag), 1, 0, "XChaCha20-Poly1305 open");
    STEP(op_seal(lc, "ChaCha20-Poly1305", 1, tag) && op_seal(lc, "ChaCha20-Poly1305", 64, tag)
             && op_seal(lc, "ChaCha20-Poly1305", 65, tag),
         3, 0, "three seals");
    STEP(op_cipher_oneshot(lc, 1, 77, tag), 1, 0, "EVP_Cipher one-shot seal");
    STEP(op_cipher_oneshot(lc, 0, 77, tag), 1, 0, "EVP_Cipher one-shot open");
    STEP(op_tls_record(lc, 1, 200, 0, rec), 1, 1, "TLS 1.2 record seal (update)");
    STEP(op_tls_record(lc, 0, 200, 0, rec), 1, 1, "TLS 1.2 record open (update)");
    STEP(op_tls_record(lc, 1, 31, 1, rec), 1, 1, "TLS 1.2 record seal (EVP_Cipher)");
    STEP(op_tls_record(lc, 0, 31, 1, rec), 1, 1, "TLS 1.2 record open (EVP_Cipher)");
    STEP(op_tls_record(lc, 1, 0, 0, rec), 1, 1, "TLS 1.2 empty record seal");
    STEP(op_chacha20_and_mac(lc), 0, 0, "ChaCha20 + POLY1305 (not AEAD messages)");
#undef STEP
}

/* ---------------------------------------------------------------------- */

/*
 * Every provider parameter asked for with NULL data, in every type: a size
 * query that must not crash (libcrypto 3.0's OSSL_PARAM_set_* write through
 * the NULL data of a REAL parameter unless the provider keeps it away).
 */
static void test_params_null_data(void)
{
    static const char *const keys[] = { OSSL_PROV_PARAM_NAME, OSSL_PROV_PARAM_VERSION,
                                        OSSL_PROV_PARAM_BUILDINFO, OSSL_PROV_PARAM_STATUS,
                                        "chapoly-kernel", "chapoly-aead-messages",
                                        "chapoly-tls-records" };
    static const unsigned types[] = { OSSL_PARAM_INTEGER, OSSL_PARAM_UNSIGNED_INTEGER,
                                      OSSL_PARAM_REAL, OSSL_PARAM_UTF8_PTR };

    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            OSSL_PARAM p[2] = { { keys[k], types[t], NULL, 8, OSSL_PARAM_UNMODIFIED },
                                OSSL_PARAM_END };

            ERR_set_mark();
            (void)OSSL_PROVIDER_get_params(t_prov, p); /* a type mismatch may fail; no crash */
            ERR_pop_to_mark();
            if (types[t] == OSSL_PARAM_REAL && k >= 3 && k != 4) /* the numeric ones */
                T_OK(p[0].return_size == sizeof(double),
                     "provider param %s as a REAL size query: return_size %zu", keys[k],
                     p[0].return_size);
        }
    }
}

/* ---------------------------------------------------------------------- */

static void test_params(void)
{
    char *name = NULL, *version = NULL, *buildinfo = NULL, *kernel = NULL;
    int status = -1;
    OSSL_PARAM p[6] = { OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_NAME, &name, 0),
                        OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_VERSION, &version, 0),
                        OSSL_PARAM_construct_utf8_ptr(OSSL_PROV_PARAM_BUILDINFO, &buildinfo, 0),
                        OSSL_PARAM_construct_int(OSSL_PROV_PARAM_STATUS, &status),
                        OSSL_PARAM_construct_utf8_ptr("chapoly-kernel", &kernel, 0),
                        OSSL_PARAM_construct_end() };

    T_OK(OSSL_PROVIDER_get_params(t_prov, p), "OSSL_PROVIDER_get_params");
    T_OK(name && *name, "provider param name missing or empty");
    T_OK(version && *version, "provider param version missing or empty");
    T_OK(buildinfo && *buildinfo, "provider param buildinfo missing or empty");
    T_OK(status == 1, "provider param status = %d, want 1", status);
    T_OK(kernel && known_level(kernel), "chapoly-kernel = \"%s\", not a known level",
         kernel ? kernel : "(null)");
    const char *want = getenv("CHAPOLY_KERNEL");
    if (want != NULL && *want != '\0' && strcmp(want, "best") != 0)
        T_OK(kernel && strcmp(kernel, want) == 0, "chapoly-kernel = %s, CHAPOLY_KERNEL = %s",
             kernel ? kernel : "(null)", want);
    T_OK(OSSL_PROVIDER_available(t_ctx, "chapoly"), "OSSL_PROVIDER_available");
    T_OK(strcmp(OSSL_PROVIDER_get0_name(t_prov), "chapoly") == 0, "provider name %s",
         OSSL_PROVIDER_get0_name(t_prov));

    static const struct {
        const char *key;
        unsigned type;
    } want_gettable[] = {
        { OSSL_PROV_PARAM_NAME, OSSL_PARAM_UTF8_PTR },
        { OSSL_PROV_PARAM_VERSION, OSSL_PARAM_UTF8_PTR },
        { OSSL_PROV_PARAM_BUILDINFO, OSSL_PARAM_UTF8_PTR },
        { OSSL_PROV_PARAM_STATUS, OSSL_PARAM_INTEGER },
        { "chapoly-kernel", OSSL_PARAM_UTF8_PTR },
        { "chapoly-aead-messages", OSSL_PARAM_UNSIGNED_INTEGER },
        { "chapoly-tls-records", OSSL_PARAM_UNSIGNED_INTEGER },
    };
    const OSSL_PARAM *g = OSSL_PROVIDER_gettable_params(t_prov);
    T_OK(g != NULL, "gettable params list missing");
    for (size_t i = 0; g != NULL && i < sizeof(want_gettable) / sizeof(want_gettable[0]); i++) {
        const OSSL_PARAM *e = OSSL_PARAM_locate_const(g, want_gettable[i].key);
        T_OK(e != NULL, "gettable params lack %s", want_gettable[i].key);
        T_OK(e == NULL || e->data_type == want_gettable[i].type,
             "gettable %s has type %u, want %u", want_gettable[i].key, e ? e->data_type : 0,
             want_gettable[i].type);
    }
}

static void check_table(int op, const char *opname, const char *const *names, size_t n)
{
    int no_cache = -1;
    const OSSL_ALGORITHM *a = OSSL_PROVIDER_query_operation(t_prov, op, &no_cache);
    int seen[8] = { 0 };
    size_t count = 0;

    T_OK(a != NULL, "query_operation(%s) returned NULL", opname);
    for (; a != NULL && a->algorithm_names != NULL; a++, count++) {
        size_t i;
        for (i = 0; i < n; i++)
            if (strcmp(a->algorithm_names, names[i]) == 0)
                break;
        T_OK(i < n, "%s table: unexpected algorithm \"%s\"", opname, a->algorithm_names);
        if (i < n) {
            T_OK(!seen[i], "%s table: %s listed twice", opname, names[i]);
            seen[i] = 1;
        }
        T_OK(a->property_definition && strcmp(a->property_definition, "provider=chapoly") == 0,
             "%s table: %s has property \"%s\", want \"provider=chapoly\"", opname,
             a->algorithm_names, a->property_definition ? a->property_definition : "(null)");
        T_OK(a->implementation != NULL, "%s table: %s has no dispatch table", opname,
             a->algorithm_names);
    }
    for (size_t i = 0; i < n; i++)
        T_OK(seen[i], "%s table: %s missing", opname, names[i]);
    T_OK(count == n, "%s table has %zu entries, want %zu", opname, count, n);
    if (a != NULL)
        OSSL_PROVIDER_unquery_operation(t_prov, op, a);
}

static void test_tables(void)
{
    static const char *const ciphers[] = { "ChaCha20-Poly1305", "ChaCha20", "XChaCha20-Poly1305" };
    static const char *const macs[] = { "POLY1305" };
    static const struct {
        int op;
        const char *name;
    } none[] = { { OSSL_OP_DIGEST, "digest" },       { OSSL_OP_RAND, "rand" },
                 { OSSL_OP_KDF, "kdf" },             { OSSL_OP_KEYMGMT, "keymgmt" },
                 { OSSL_OP_SIGNATURE, "signature" }, { OSSL_OP_KEYEXCH, "keyexch" },
                 { OSSL_OP_ASYM_CIPHER, "asym" },    { OSSL_OP_KEM, "kem" },
                 { OSSL_OP_ENCODER, "encoder" },     { OSSL_OP_DECODER, "decoder" },
                 { OSSL_OP_STORE, "store" } };

    check_table(OSSL_OP_CIPHER, "cipher", ciphers, 3);
    check_table(OSSL_OP_MAC, "mac", macs, 1);
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        int nc;
        const OSSL_ALGORITHM *a = OSSL_PROVIDER_query_operation(t_prov, none[i].op, &nc);
        T_OK(a == NULL || a->algorithm_names == NULL, "query_operation(%s) is not empty",
             none[i].name);
    }
}

/* Stats off (CHAPOLY_STATS unset at init): counters stay 0 whatever happens. */
static void test_stats_off(void)
{
    uint8_t tag[TAGLEN], rec[600];
    counters c = read_counters(t_prov);

    T_OK(c.ok && c.msgs == 0 && c.tls == 0, "stats off: counters start at %llu/%llu",
         (unsigned long long)c.msgs, (unsigned long long)c.tls);
    T_OK(op_seal(t_ctx, "ChaCha20-Poly1305", 100, tag) && op_open(t_ctx, "ChaCha20-Poly1305", 100, tag)
             && op_seal(t_ctx, "XChaCha20-Poly1305", 10, tag)
             && op_cipher_oneshot(t_ctx, 1, 20, tag) && op_tls_record(t_ctx, 1, 50, 0, rec)
             && op_tls_record(t_ctx, 0, 50, 0, rec),
         "stats off: operations");
    c = read_counters(t_prov);
    T_OK(c.ok && c.msgs == 0 && c.tls == 0,
         "stats off: counters moved to aead-messages %llu, tls-records %llu",
         (unsigned long long)c.msgs, (unsigned long long)c.tls);
}

/* A second library context whose chapoly instance was initialised with CHAPOLY_STATS=1. */
static void test_stats_env(void)
{
    setenv("CHAPOLY_STATS", "1", 1);
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *d = lc ? OSSL_PROVIDER_load(lc, "default") : NULL;
    OSSL_PROVIDER *p = lc ? OSSL_PROVIDER_load(lc, "chapoly") : NULL;
    unsetenv("CHAPOLY_STATS");

    if (T_OK(lc && d && p, "CHAPOLY_STATS=1: load chapoly into a new library context")) {
        counters c = read_counters(p);
        T_OK(c.ok && c.msgs == 0 && c.tls == 0, "CHAPOLY_STATS=1: counters start at %llu/%llu",
             (unsigned long long)c.msgs, (unsigned long long)c.tls);
        check_counting(lc, p, "CHAPOLY_STATS=1");
    }
    /* The first instance (stats off) is unaffected by the second one's counting. */
    counters c0 = read_counters(t_prov);
    T_OK(c0.ok && c0.msgs == 0 && c0.tls == 0,
         "stats-off instance reads %llu/%llu after another instance counted",
         (unsigned long long)c0.msgs, (unsigned long long)c0.tls);
    OSSL_PROVIDER_unload(p);
    OSSL_PROVIDER_unload(d);
    OSSL_LIB_CTX_free(lc);
    ERR_clear_error();
}

/* CHAPOLY_STATS_FILE: teardown appends "chapoly-aead-messages=N chapoly-tls-records=M". */
static void test_stats_file(void)
{
    char path[] = "/tmp/chapoly-stats-XXXXXX";
    int fd = mkstemp(path);
    uint8_t tag[TAGLEN], rec[600];

    if (!T_OK(fd >= 0, "mkstemp"))
        return;
    if (write(fd, "earlier line\n", 13) != 13)
        T_OK(0, "write stats file");
    close(fd);

    setenv("CHAPOLY_STATS", "1", 1);
    setenv("CHAPOLY_STATS_FILE", path, 1);
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *d = lc ? OSSL_PROVIDER_load(lc, "default") : NULL;
    OSSL_PROVIDER *p = lc ? OSSL_PROVIDER_load(lc, "chapoly") : NULL;
    unsetenv("CHAPOLY_STATS");
    T_OK(lc && d && p, "stats file: load");
    T_OK(op_seal(lc, "ChaCha20-Poly1305", 10, tag) && op_seal(lc, "XChaCha20-Poly1305", 10, tag)
             && op_tls_record(lc, 1, 10, 0, rec) && op_tls_record(lc, 0, 10, 0, rec)
             && op_tls_record(lc, 1, 99, 0, rec),
         "stats file: operations");
    OSSL_PROVIDER_unload(p);
    OSSL_PROVIDER_unload(d);
    OSSL_LIB_CTX_free(lc); /* the last reference goes: teardown runs */
    unsetenv("CHAPOLY_STATS_FILE");

    char line[256] = "", last[256] = "";
    int lines = 0;
    FILE *f = fopen(path, "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        snprintf(last, sizeof(last), "%s", line);
        lines++;
    }
    if (f != NULL)
        fclose(f);
    unlink(path);
    T_OK(lines == 2, "stats file has %d lines, want 2 (appended, not truncated)", lines);
    T_OK(strcmp(last, "chapoly-aead-messages=5 chapoly-tls-records=3\n") == 0,
         "stats file line is \"%s\", want \"chapoly-aead-messages=5 chapoly-tls-records=3\"",
         last);
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

static void test_config(void)
{
    const char *module = getenv("CHAPOLY_MODULE");
    char modbuf[4096], path[] = "/tmp/chapoly-cnf-XXXXXX";

    if (module == NULL || *module == '\0') {
        const char *dir = getenv("OPENSSL_MODULES");
        snprintf(modbuf, sizeof(modbuf), "%s/chapoly.so", dir ? dir : ".");
        module = modbuf;
    }
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
        T_OK(c.ok && c.msgs == 0 && c.tls == 0, "config stats: counters start at %llu/%llu",
             (unsigned long long)c.msgs, (unsigned long long)c.tls);
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
        T_OK(c.ok && c.msgs == 0 && c.tls == 0, "config stats = 0: counters moved to %llu/%llu",
             (unsigned long long)c.msgs, (unsigned long long)c.tls);
    }
    OSSL_LIB_CTX_free(lc);
    unlink(path);
    ERR_clear_error();
}

/*
 * A tree configured for an OpenSSL version (CHAPOLY_EXPECT_OPENSSL=3.5, see
 * scripts/openssl35.sh) must be compiled against its headers and run with its
 * libcrypto: a tree that silently picked up the system's 3.0 fails here.
 */
static void test_openssl_version(void)
{
#ifdef CHAPOLY_EXPECT_OPENSSL_NUM
    T_OK(OPENSSL_VERSION_NUMBER >= CHAPOLY_EXPECT_OPENSSL_NUM,
         "compiled against OpenSSL headers 0x%lx, want at least 0x%lx",
         (unsigned long)OPENSSL_VERSION_NUMBER, (unsigned long)CHAPOLY_EXPECT_OPENSSL_NUM);
    T_OK(OpenSSL_version_num() >= CHAPOLY_EXPECT_OPENSSL_NUM,
         "running with libcrypto %s (0x%lx), want at least 0x%lx", OpenSSL_version(OPENSSL_VERSION),
         (unsigned long)OpenSSL_version_num(), (unsigned long)CHAPOLY_EXPECT_OPENSSL_NUM);
#endif
}

int main(void)
{
    /* Statistics must be off in t_ctx: make sure nothing from outside turns them on. */
    unsetenv("CHAPOLY_STATS");
    unsetenv("CHAPOLY_STATS_FILE");
    t_setup();

    test_openssl_version();
    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(aad, sizeof(aad));
    t_rand_bytes(pt, sizeof(pt));

    test_params();
    test_params_null_data();
    test_tables();
    test_stats_off();
    test_stats_env();
    test_stats_file();
    test_config();

    t_teardown();
    return t_finish("test_provider");
}
