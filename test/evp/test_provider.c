/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The provider object itself: its params (name, version, buildinfo, status,
 * chapoly-kernel, the statistics counters), the algorithm tables it
 * answers for each operation, the statistics switch (env CHAPOLY_STATS or
 * `stats = 1` in its config section, read at provider init), each counter's
 * exact movement for known calls (and none with statistics off), the
 * statistics line written at teardown to CHAPOLY_STATS_FILE or the config
 * key stats_file (with %p), only by a process that counted something, per
 * process across fork, and loading through an openssl.cnf file with
 * `kernel = ...`.
 */
#include <stdio.h>
#include <openssl/crypto.h>
#include "test_provider.h"

/* Every level name (kernels.h's one list), built in or not; never "best". */
#define LEVEL_NAME_(name, build) name,
static const char *const levels[] = { CHAPOLY_LEVEL_LIST(LEVEL_NAME_) };

int known_level(const char *s)
{
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
        if (s != NULL && strcmp(s, levels[i]) == 0)
            return 1;
    return 0;
}

const char *const ctr_names[NCTR] = {
    "chapoly-aead-messages",  "chapoly-aead-seals",     "chapoly-aead-opens",
    "chapoly-tls-records",    "chapoly-chacha20-calls", "chapoly-chacha20-bytes",
    "chapoly-poly1305-macs",  "chapoly-pipeline-batches"
};

counters read_counters(OSSL_PROVIDER *prov)
{
    counters c = { { 0 }, 0 };
    OSSL_PARAM p[NCTR + 1];

    for (int i = 0; i < NCTR; i++)
        p[i] = OSSL_PARAM_construct_uint64(ctr_names[i], &c.v[i]);
    p[NCTR] = OSSL_PARAM_construct_end();
    c.ok = OSSL_PROVIDER_get_params(prov, p);
    for (int i = 0; i < NCTR; i++)
        c.ok = c.ok && OSSL_PARAM_modified(&p[i]);
    return c;
}

int all_zero(const counters *c)
{
    for (int i = 0; i < NCTR; i++)
        if (c->v[i] != 0)
            return 0;
    return 1;
}

/* "name=value ..." of every counter (static buffer), for messages. */
const char *show(const counters *c)
{
    static char b[512];
    size_t n = 0;

    b[0] = '\0';
    for (int i = 0; i < NCTR && n < sizeof(b); i++)
        n += (size_t)snprintf(b + n, sizeof(b) - n, "%s%s=%llu", i ? " " : "",
                              ctr_names[i] + 8, (unsigned long long)c->v[i]);
    return b;
}

/*
 * Each counter moved by exactly want[] from before to now; on a mismatch the
 * message names every counter that did not.
 */
static void check_deltas(const counters *before, const counters *now, const uint64_t want[NCTR],
                         const char *where, const char *what)
{
    char msg[512] = "";
    size_t n = 0;
    int ok = now->ok;

    for (int i = 0; i < NCTR; i++) {
        uint64_t d = now->v[i] - before->v[i];

        if (d != want[i]) {
            ok = 0;
            if (n < sizeof(msg))
                n += (size_t)snprintf(msg + n, sizeof(msg) - n, " %s +%llu (want +%llu)",
                                      ctr_names[i], (unsigned long long)d,
                                      (unsigned long long)want[i]);
        }
    }
    T_OK(ok, "%s: %s:%s%s", where, what, now->ok ? "" : " counters not readable", msg);
}

const char *read_kernel(OSSL_PROVIDER *prov)
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

uint8_t key[32], iv[24], aad[13], pt[500], buf[600];

/* Streaming seal (update/final); tag out. */
int op_seal(OSSL_LIB_CTX *lc, const char *name, size_t len, uint8_t tag[TAGLEN])
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
int op_open(OSSL_LIB_CTX *lc, const char *name, size_t len, const uint8_t tag[TAGLEN])
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
int op_tls_record(OSSL_LIB_CTX *lc, int enc, size_t len, int use_evp_cipher, uint8_t *rec)
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

/*
 * ChaCha20: nupd updates of len bytes each (one context, one init), an
 * update of 0 bytes, one EVP_Cipher call of len bytes when use_cipher, final.
 */
int op_chacha20(OSSL_LIB_CTX *lc, int nupd, size_t len, int use_cipher)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lc, "ChaCha20", PROVQ_OURS);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t civ[16] = { 0 };
    int l = 0, ok = c && ctx && EVP_EncryptInit_ex(ctx, c, NULL, key, civ)
                    && EVP_EncryptUpdate(ctx, buf, &l, pt, 0) && l == 0;

    for (int i = 0; ok && i < nupd; i++)
        ok = EVP_EncryptUpdate(ctx, buf, &l, pt, (int)len) && l == (int)len;
    if (ok && use_cipher)
        ok = EVP_Cipher(ctx, buf, pt, (unsigned int)len) > 0;
    ok = ok && EVP_EncryptFinal_ex(ctx, buf, &l) && l == 0;
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return ok;
}

/* POLY1305: nupd updates of 100 bytes, then final when fin (else the context is just freed). */
int op_mac(OSSL_LIB_CTX *lc, int nupd, int fin)
{
    EVP_MAC *m = EVP_MAC_fetch(lc, "POLY1305", PROVQ_OURS);
    EVP_MAC_CTX *mc = m ? EVP_MAC_CTX_new(m) : NULL;
    uint8_t t[16];
    size_t tl;
    int ok = mc && EVP_MAC_init(mc, key, 32, NULL);

    for (int i = 0; ok && i < nupd; i++)
        ok = EVP_MAC_update(mc, pt, 100);
    if (ok && fin)
        ok = EVP_MAC_final(mc, t, &tl, 16) && tl == 16;
    EVP_MAC_CTX_free(mc);
    EVP_MAC_free(m);
    return ok;
}

/* A streaming open that must fail: op_seal's output with the tag's first bit flipped. */
static int op_open_forged(OSSL_LIB_CTX *lc, size_t len, const uint8_t tag[TAGLEN])
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", PROVQ_OURS);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    uint8_t back[600], bad[TAGLEN];
    int l1, l2, l3;

    memcpy(bad, tag, TAGLEN);
    bad[0] ^= 1;
    int ok = c && ctx && EVP_DecryptInit_ex(ctx, c, NULL, key, iv) && t_set_tag(ctx, bad, TAGLEN)
             && EVP_DecryptUpdate(ctx, NULL, &l1, aad, sizeof(aad))
             && EVP_DecryptUpdate(ctx, back, &l2, buf, (int)len)
             && EVP_DecryptFinal_ex(ctx, back + len, &l3) <= 0;
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    ERR_clear_error();
    return ok;
}

/* A streaming seal abandoned before final: no message is counted. */
int op_seal_unfinished(OSSL_LIB_CTX *lc)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", PROVQ_OURS);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int l1, l2;
    int ok = c && ctx && EVP_EncryptInit_ex(ctx, c, NULL, key, iv)
             && EVP_EncryptUpdate(ctx, NULL, &l1, aad, sizeof(aad))
             && EVP_EncryptUpdate(ctx, buf, &l2, pt, 50);
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    return ok;
}

/*
 * Each step and the exact increase of every counter it must cause (stats
 * enabled), in the order of ctr_names: messages, seals, opens, TLS records,
 * ChaCha20 calls, ChaCha20 bytes, POLY1305 MACs, pipeline batches (the
 * pipeline steps are in test_pipeline.c, which needs OpenSSL 3.5).
 */
void check_counting(OSSL_LIB_CTX *lc, OSSL_PROVIDER *prov, const char *where)
{
    uint8_t tag[TAGLEN], rec[600];
    counters before = read_counters(prov), now;
    T_OK(before.ok, "%s: counters not readable", where);

#define STEP(call, what, ...)                                                                \
    do {                                                                                     \
        static const uint64_t want_[NCTR] = { __VA_ARGS__ };                                 \
        T_OK(call, "%s: %s failed", where, what);                                            \
        now = read_counters(prov);                                                           \
        check_deltas(&before, &now, want_, where, what);                                     \
        before = now;                                                                        \
    } while (0)

    /*   call                                              what                       msg seal open tls cc  bytes mac batch */
    STEP(op_seal(lc, "ChaCha20-Poly1305", 100, tag), "ChaCha20-Poly1305 seal",      1, 1, 0, 0, 0, 0, 0, 0);
    STEP(op_open(lc, "ChaCha20-Poly1305", 100, tag), "ChaCha20-Poly1305 open",      1, 0, 1, 0, 0, 0, 0, 0);
    STEP(op_open_forged(lc, 100, tag), "ChaCha20-Poly1305 failed open (forged tag)", 1, 0, 1, 0, 0, 0, 0, 0);
    STEP(op_seal(lc, "ChaCha20-Poly1305", 0, tag), "ChaCha20-Poly1305 empty seal",  1, 1, 0, 0, 0, 0, 0, 0);
    STEP(op_seal_unfinished(lc), "seal without final",                              0, 0, 0, 0, 0, 0, 0, 0);
    STEP(op_seal(lc, "XChaCha20-Poly1305", 333, tag), "XChaCha20-Poly1305 seal",    1, 1, 0, 0, 0, 0, 0, 0);
    STEP(op_open(lc, "XChaCha20-Poly1305", 333, tag), "XChaCha20-Poly1305 open",    1, 0, 1, 0, 0, 0, 0, 0);
    STEP(op_seal(lc, "ChaCha20-Poly1305", 1, tag) && op_seal(lc, "ChaCha20-Poly1305", 64, tag)
             && op_seal(lc, "ChaCha20-Poly1305", 65, tag), "three seals",           3, 3, 0, 0, 0, 0, 0, 0);
    STEP(op_cipher_oneshot(lc, 1, 77, tag), "EVP_Cipher one-shot seal",             1, 1, 0, 0, 0, 0, 0, 0);
    STEP(op_cipher_oneshot(lc, 0, 77, tag), "EVP_Cipher one-shot open",             1, 0, 1, 0, 0, 0, 0, 0);
    STEP(op_tls_record(lc, 1, 200, 0, rec), "TLS 1.2 record seal (update)",         1, 1, 0, 1, 0, 0, 0, 0);
    STEP(op_tls_record(lc, 0, 200, 0, rec), "TLS 1.2 record open (update)",         1, 0, 1, 1, 0, 0, 0, 0);
    STEP(op_tls_record(lc, 1, 31, 1, rec), "TLS 1.2 record seal (EVP_Cipher)",      1, 1, 0, 1, 0, 0, 0, 0);
    STEP(op_tls_record(lc, 0, 31, 1, rec), "TLS 1.2 record open (EVP_Cipher)",      1, 0, 1, 1, 0, 0, 0, 0);
    STEP(op_tls_record(lc, 1, 0, 0, rec), "TLS 1.2 empty record seal",              1, 1, 0, 1, 0, 0, 0, 0);
    STEP(op_chacha20(lc, 3, 100, 0), "ChaCha20: 3 updates of 100 bytes (and one of 0)", 0, 0, 0, 0, 3, 300, 0, 0);
    STEP(op_chacha20(lc, 1, 7, 1), "ChaCha20: an update and an EVP_Cipher of 7 bytes", 0, 0, 0, 0, 2, 14, 0, 0);
    STEP(op_chacha20(lc, 0, 0, 0), "ChaCha20: init and final only",                 0, 0, 0, 0, 0, 0, 0, 0);
    STEP(op_mac(lc, 3, 1), "POLY1305: 3 updates and a final",                       0, 0, 0, 0, 0, 0, 1, 0);
    STEP(op_mac(lc, 0, 1), "POLY1305: an empty message's MAC",                      0, 0, 0, 0, 0, 0, 1, 0);
    STEP(op_mac(lc, 2, 0), "POLY1305: updates, no final",                           0, 0, 0, 0, 0, 0, 0, 0);
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
    static const char *const keys[] = {
        OSSL_PROV_PARAM_NAME,  OSSL_PROV_PARAM_VERSION, OSSL_PROV_PARAM_BUILDINFO,
        OSSL_PROV_PARAM_STATUS, "chapoly-kernel",       "chapoly-aead-messages",
        "chapoly-aead-seals",  "chapoly-aead-opens",    "chapoly-tls-records",
        "chapoly-chacha20-calls", "chapoly-chacha20-bytes", "chapoly-poly1305-macs",
        "chapoly-pipeline-batches"
    };
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
    if (buildinfo != NULL) {
        /* the version chapoly read from the core is this process's libcrypto */
        char want[96];

        snprintf(want, sizeof(want), "running in libcrypto %s)",
                 OpenSSL_version(OPENSSL_VERSION_STRING));
        T_OK(strstr(buildinfo, want) != NULL, "buildinfo \"%s\" lacks \"%s\"", buildinfo, want);
    }
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
        { "chapoly-aead-seals", OSSL_PARAM_UNSIGNED_INTEGER },
        { "chapoly-aead-opens", OSSL_PARAM_UNSIGNED_INTEGER },
        { "chapoly-tls-records", OSSL_PARAM_UNSIGNED_INTEGER },
        { "chapoly-chacha20-calls", OSSL_PARAM_UNSIGNED_INTEGER },
        { "chapoly-chacha20-bytes", OSSL_PARAM_UNSIGNED_INTEGER },
        { "chapoly-poly1305-macs", OSSL_PARAM_UNSIGNED_INTEGER },
        { "chapoly-pipeline-batches", OSSL_PARAM_UNSIGNED_INTEGER },
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

/* Stats off (CHAPOLY_STATS unset at init): no counter moves whatever happens. */
static void test_stats_off(void)
{
    uint8_t tag[TAGLEN], rec[600];
    counters c = read_counters(t_prov);

    T_OK(c.ok && all_zero(&c), "stats off: counters start at %s", show(&c));
    T_OK(op_seal(t_ctx, "ChaCha20-Poly1305", 100, tag) && op_open(t_ctx, "ChaCha20-Poly1305", 100, tag)
             && op_open_forged(t_ctx, 100, tag) && op_seal(t_ctx, "XChaCha20-Poly1305", 10, tag)
             && op_cipher_oneshot(t_ctx, 1, 20, tag) && op_tls_record(t_ctx, 1, 50, 0, rec)
             && op_tls_record(t_ctx, 0, 50, 0, rec) && op_chacha20(t_ctx, 3, 100, 1)
             && op_mac(t_ctx, 2, 1),
         "stats off: operations");
    c = read_counters(t_prov);
    T_OK(c.ok && all_zero(&c), "stats off: counters moved to %s", show(&c));
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
        T_OK(c.ok && all_zero(&c), "CHAPOLY_STATS=1: counters start at %s", show(&c));
        check_counting(lc, p, "CHAPOLY_STATS=1");
    }
    /* The first instance (stats off) is unaffected by the second one's counting. */
    counters c0 = read_counters(t_prov);
    T_OK(c0.ok && all_zero(&c0), "stats-off instance reads %s after another instance counted",
         show(&c0));
    OSSL_PROVIDER_unload(p);
    OSSL_PROVIDER_unload(d);
    OSSL_LIB_CTX_free(lc);
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
    char dir[] = "/tmp/chapoly-stats-XXXXXX";
    if (T_OK(mkdtemp(dir) != NULL, "mkdtemp")) {
        test_stats_file_idle(dir);
        test_stats_file_config(dir);
        test_stats_fork(dir);
        /* every test removed what it expected: anything left was written where it should not be */
        DIR *dd = opendir(dir);
        struct dirent *e;
        char f[600];
        int left = 0;
        while (dd != NULL && (e = readdir(dd)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            T_OK(0, "stats: unexpected file %s/%s", dir, e->d_name);
            snprintf(f, sizeof(f), "%s/%s", dir, e->d_name);
            unlink(f);
            left++;
        }
        if (dd != NULL)
            closedir(dd);
        T_OK(rmdir(dir) == 0, "stats: remove %s (%d files were left)", dir, left);
    }

    t_teardown();
    return t_finish("test_provider");
}
