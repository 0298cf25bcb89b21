/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_evp: TLS records through libssl. A client and a server in one
 * process over a BIO pair; one record is SSL_write on one side and SSL_read
 * on the other, so one seal and one open plus libssl's own work.
 */
#include "bench_evp.h"

#include <limits.h>
#include <stdlib.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include <openssl/x509.h>

typedef struct tls_cred {
    EVP_PKEY *key;
    X509 *cert;
} tls_cred;

static tls_cred g_cred[2]; /* [0] the timed context's, [1] the base's */
static int g_cred_made[2];

/*
 * A self-signed P-256 certificate. The subject is a name of our own, set
 * as subject and issuer (OpenSSL 4.0's X509_get_subject_name is const).
 */
static tls_cred make_cred(OSSL_LIB_CTX *lc)
{
    tls_cred c = { EVP_PKEY_Q_keygen(lc, NULL, "EC", "P-256"), X509_new_ex(lc, NULL) };
    X509_NAME *nm = X509_NAME_new();
    int ok = c.key != NULL && c.cert != NULL && nm != NULL && X509_set_version(c.cert, 2)
             && ASN1_INTEGER_set(X509_get_serialNumber(c.cert), 1)
             && X509_gmtime_adj(X509_getm_notBefore(c.cert), -3600)
             && X509_gmtime_adj(X509_getm_notAfter(c.cert), 86400)
             && X509_set_pubkey(c.cert, c.key)
             && X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC,
                                           (const unsigned char *)"bench", -1, -1, 0)
             && X509_set_subject_name(c.cert, nm) && X509_set_issuer_name(c.cert, nm)
             && X509_sign(c.cert, c.key, EVP_sha256());

    X509_NAME_free(nm);
    if (!ok)
        die("TLS self-signed certificate failed");
    return c;
}

void tls_free(tls_pair *t)
{
    if (t == NULL)
        return;
    SSL_free(t->cli);
    SSL_free(t->srv);
    SSL_CTX_free(t->cctx);
    SSL_CTX_free(t->sctx);
    free(t);
}

static SSL_CTX *tls_ctx(OSSL_LIB_CTX *lc, const tls_cred *cr, const char *propq, int version)
{
    SSL_CTX *c = SSL_CTX_new_ex(lc, propq, TLS_method());

    if (c == NULL
        || !SSL_CTX_set_min_proto_version(c, version)
        || !SSL_CTX_set_max_proto_version(c, version)
        || (version == TLS1_3_VERSION
                ? !SSL_CTX_set_ciphersuites(c, "TLS_CHACHA20_POLY1305_SHA256")
                : !SSL_CTX_set_cipher_list(c, "ECDHE-ECDSA-CHACHA20-POLY1305"))
        || !SSL_CTX_use_certificate(c, cr->cert)
        || !SSL_CTX_use_PrivateKey(c, cr->key)
        || !SSL_CTX_set_num_tickets(c, 0)) {
        SSL_CTX_free(c);
        return NULL;
    }
    return c;
}

/* A connected client/server pair; each side fetches its record cipher with its own propq. */
static tls_pair *tls_new(OSSL_LIB_CTX *lc, const tls_cred *cr, const char *propq_cli,
                         const char *propq_srv, int version)
{
    tls_pair *t = calloc(1, sizeof(*t));
    BIO *bc = NULL, *bs = NULL;
    int done[2] = { 0, 0 };

    if (t == NULL)
        return NULL;
    t->cctx = tls_ctx(lc, cr, propq_cli, version);
    t->sctx = tls_ctx(lc, cr, propq_srv, version);
    if (t->cctx == NULL || t->sctx == NULL)
        goto err;
    t->cli = SSL_new(t->cctx);
    t->srv = SSL_new(t->sctx);
    /* Room for two full records in flight each way. */
    if (t->cli == NULL || t->srv == NULL || !BIO_new_bio_pair(&bc, 40000, &bs, 40000))
        goto err;
    SSL_set_bio(t->cli, bc, bc);
    SSL_set_bio(t->srv, bs, bs);
    SSL_set_connect_state(t->cli);
    SSL_set_accept_state(t->srv);
    for (int round = 0; round < 64 && !(done[0] && done[1]); round++)
        for (int k = 0; k < 2; k++) {
            SSL *ssl = k ? t->srv : t->cli;
            int r = done[k] ? 1 : SSL_do_handshake(ssl), e = r == 1 ? 0 : SSL_get_error(ssl, r);

            done[k] = r == 1;
            if (r != 1 && e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                goto err;
        }
    if (!done[0] || !done[1] || strstr(SSL_get_cipher_name(t->cli), "CHACHA20") == NULL)
        goto err;
    return t;
err:
    fprintf(stderr, "bench_evp: TLS %s handshake (client %s, server %s) failed\n",
            version == TLS1_3_VERSION ? "1.3" : "1.2", propq_cli, propq_srv);
    ERR_print_errors_fp(stderr);
    tls_free(t);
    return NULL;
}

int tls_record(job *j, size_t n, uint64_t iters)
{
    SSL *cli = j->tls->cli, *srv = j->tls->srv;

    for (uint64_t i = 0; i < iters; i++) {
        size_t got = 0;

        if (SSL_write(cli, j->b->in, (int)n) != (int)n)
            return 0;
        while (got < n) {
            int r = SSL_read(srv, j->b->out + got, (int)(n - got));
            if (r <= 0)
                return 0;
            got += (size_t)r;
        }
    }
    return 1;
}

static int read_counters(OSSL_PROVIDER *p, uint64_t *aead, uint64_t *tls)
{
    OSSL_PARAM pr[3] = { OSSL_PARAM_construct_uint64("chapoly-aead-messages", aead),
                         OSSL_PARAM_construct_uint64("chapoly-tls-records", tls),
                         OSSL_PARAM_construct_end() };

    *aead = *tls = UINT64_MAX;
    int ok = OSSL_PROVIDER_get_params(p, pr) && *aead != UINT64_MAX && *tls != UINT64_MAX;
    ERR_clear_error();
    return ok;
}

/*
 * Prove that "?provider=chapoly" really routes libssl's records through
 * chapoly (and "?provider=default" does not): a second library context whose
 * chapoly instance counts messages (CHAPOLY_STATS=1 is read at provider init;
 * the timed context does not count). The same for the --base module.
 */
int tls_proof[2]; /* [0] TLS 1.2, [1] TLS 1.3: 1 proven, 0 not, -1 unknown */
int tls_proof_base[2];

static void prove_one(int base, int proof[2])
{
    char *old = getenv("CHAPOLY_STATS") ? strdup(getenv("CHAPOLY_STATS")) : NULL;
    OSSL_PROVIDER *ours, *dflt;
    char desc[PATH_MAX + 64];

    setenv("CHAPOLY_STATS", "1", 1);
    OSSL_LIB_CTX *lc = make_libctx(base, &ours, &dflt, desc, sizeof(desc));
    if (old) {
        setenv("CHAPOLY_STATS", old, 1);
        free(old);
    } else {
        unsetenv("CHAPOLY_STATS");
    }
    tls_cred cr = make_cred(lc);
    uint8_t buf[64] = { 0 };

    for (int v = 0; v < 2; v++) {
        int version = v ? TLS1_3_VERSION : TLS1_2_VERSION;
        uint64_t a0, r0, a1, r1, a2, r2;

        proof[v] = -1;
        if (!read_counters(ours, &a0, &r0))
            continue;
        tls_pair *tc = tls_new(lc, &cr, "?provider=chapoly", "?provider=chapoly", version);
        bufset bs = { .in = buf, .out = buf };
        job jc = { .tls = tc, .b = &bs };
        int ok = tc != NULL && tls_record(&jc, 32, 1);
        tls_free(tc);
        read_counters(ours, &a1, &r1);
        tls_pair *td = tls_new(lc, &cr, "?provider=default", "?provider=default", version);
        job jd = { .tls = td, .b = &bs };
        ok = ok && td != NULL && tls_record(&jd, 32, 1);
        tls_free(td);
        read_counters(ours, &a2, &r2);
        /* TLS 1.2 goes through the "tlsaad" record mode; TLS 1.3 through init/update/final. */
        int used = v ? a1 > a0 : r1 > r0;
        int clean = a2 == a1 && r2 == r1;
        proof[v] = ok && used && clean;
    }
    X509_free(cr.cert);
    EVP_PKEY_free(cr.key);
    OSSL_PROVIDER_unload(ours);
    OSSL_PROVIDER_unload(dflt);
    OSSL_LIB_CTX_free(lc);
}

void prove_tls_routing(void)
{
    prove_one(0, tls_proof);
    tls_proof_base[0] = tls_proof_base[1] = -1;
    if (cfg.base)
        prove_one(1, tls_proof_base);
}

static const char *proof_word(int p)
{
    return p > 0 ? "proven" : p == 0 ? "NOT PROVEN" : "unknown";
}

/* "TLS 1.2 proven, TLS 1.3 proven" (and the base's), for the headers. */
const char *tls_route_text(void)
{
    static char t[160];
    int n = snprintf(t, sizeof(t), "TLS 1.2 %s, TLS 1.3 %s", proof_word(tls_proof[0]),
                     proof_word(tls_proof[1]));

    if (cfg.base)
        snprintf(t + n, sizeof(t) - (size_t)n, "; base: TLS 1.2 %s, TLS 1.3 %s",
                 proof_word(tls_proof_base[0]), proof_word(tls_proof_base[1]));
    return t;
}

static const tls_cred *cred_for(OSSL_LIB_CTX *lc)
{
    int k = lc != g_libctx;

    if (!g_cred_made[k]) {
        g_cred[k] = make_cred(lc);
        g_cred_made[k] = 1;
    }
    return &g_cred[k];
}

/* chapoly (or the base, in its context) seals, default opens, and the other way round. */
int tls_cross_check(int impl, int version, size_t n, bufset *b)
{
    OSSL_LIB_CTX *lc = libctx_of(impl);

    for (int dir = 0; dir < 2; dir++) {
        tls_pair *x = tls_new(lc, cred_for(lc), dir ? "?provider=default" : "?provider=chapoly",
                              dir ? "?provider=chapoly" : "?provider=default", version);
        job tmp = { .tls = x, .b = b };

        memset(b->out, 0x5a, n);
        int ok = x != NULL && tls_record(&tmp, n, 1) && memcmp(b->out, b->in, n) == 0;
        tls_free(x);
        if (!ok)
            return 0;
    }
    return 1;
}

/* A connected pair in context lc (the timed one or the base's), both ends fetching with propq. */
tls_pair *tls_pair_new(OSSL_LIB_CTX *lc, const char *propq, int version)
{
    return tls_new(lc, cred_for(lc), propq, propq, version);
}

void tls_cred_free(void)
{
    for (int k = 0; k < 2; k++)
        if (g_cred_made[k]) {
            X509_free(g_cred[k].cert);
            EVP_PKEY_free(g_cred[k].key);
            g_cred_made[k] = 0;
        }
}
