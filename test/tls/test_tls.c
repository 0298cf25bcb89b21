/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libssl over chapoly, in one process: a TLS client and server joined by two
 * BIO pairs whose network ends this program shuttles by hand, so every record
 * on the wire can be counted, inspected and damaged.
 *
 * Both SSL_CTXs are created with "?provider=chapoly": libssl fetches the
 * record cipher once, at SSL_CTX_new_ex, so that query decides who seals and
 * opens every ChaCha20-Poly1305 record (interface brief section 3).
 * libssl gives no access to the record EVP_CIPHER_CTX, so the proof that
 * chapoly served the records is its own counters (CHAPOLY_STATS=1, read as
 * provider params): client and server live in this process, so each record
 * is counted once when sealed and once when opened.
 *
 * The default provider is the oracle for the fault cases: the same damaged
 * records are fed to SSL_CTXs made with "?provider=default", which must fail
 * the same way and leave chapoly's counters untouched.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include "test_common.h"

#define PROPQ_CHAPOLY "?provider=chapoly"
#define PROPQ_DEFAULT "?provider=default"
#define SUITE13 "TLS_CHACHA20_POLY1305_SHA256"
#define SUITE12 "ECDHE-RSA-CHACHA20-POLY1305"
#define MAX_FRAG 16384 /* libssl default max_send_fragment */
/* Big enough for a whole 40000-byte write plus record overhead in flight. */
#define PAIR_BUF (256 * 1024)

enum { CLIENT = 0, SERVER = 1 };

static EVP_PKEY *g_key;
static X509 *g_cert;

/* ---- provider counters ------------------------------------------------ */

typedef struct {
    uint64_t aead; /* chapoly-aead-messages */
    uint64_t tls;  /* chapoly-tls-records */
} stats;

static stats read_stats(void)
{
    stats s = { 0, 0 };
    OSSL_PARAM p[3] = {
        OSSL_PARAM_construct_uint64("chapoly-aead-messages", &s.aead),
        OSSL_PARAM_construct_uint64("chapoly-tls-records", &s.tls),
        OSSL_PARAM_construct_end(),
    };
    int ok = OSSL_PROVIDER_get_params(t_prov, p);

    T_OK(ok && OSSL_PARAM_modified(&p[0]) && OSSL_PARAM_modified(&p[1]),
         "provider params chapoly-aead-messages / chapoly-tls-records readable");
    return s;
}

static stats stats_delta(stats a, stats b)
{
    stats d = { b.aead - a.aead, b.tls - a.tls };
    return d;
}

/* ---- key, certificate, contexts ----------------------------------------- */

static int make_identity(void)
{
    g_key = EVP_PKEY_Q_keygen(t_ctx, NULL, "RSA", (size_t)2048);
    if (!T_OK(g_key != NULL, "RSA-2048 keygen in t_ctx"))
        return 0;

    g_cert = X509_new_ex(t_ctx, NULL);
    X509_NAME *name = X509_NAME_new();
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    int ok = g_cert != NULL && name != NULL && md != NULL &&
             X509_set_version(g_cert, X509_VERSION_3) &&
             ASN1_INTEGER_set(X509_get_serialNumber(g_cert), 1) &&
             X509_gmtime_adj(X509_getm_notBefore(g_cert), -3600) != NULL &&
             X509_gmtime_adj(X509_getm_notAfter(g_cert), 86400) != NULL &&
             X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                        (const unsigned char *)"chapoly-test", -1, -1, 0) &&
             X509_set_subject_name(g_cert, name) && X509_set_issuer_name(g_cert, name) &&
             X509_set_pubkey(g_cert, g_key) &&
             EVP_DigestSignInit_ex(md, NULL, "SHA256", t_ctx, NULL, g_key, NULL) &&
             X509_sign_ctx(g_cert, md) > 0;
    EVP_MD_CTX_free(md);
    X509_NAME_free(name);
    if (!T_OK(ok, "self-signed certificate")) {
        ERR_print_errors_fp(stderr);
        return 0;
    }
    return 1;
}

static SSL_CTX *make_ctx(int server, int version, const char *propq)
{
    SSL_CTX *x = SSL_CTX_new_ex(t_ctx, propq, server ? TLS_server_method() : TLS_client_method());
    int ok;

    if (!T_OK(x != NULL, "SSL_CTX_new_ex(%s, %s)", propq, server ? "server" : "client")) {
        ERR_print_errors_fp(stderr);
        return NULL;
    }
    ok = SSL_CTX_set_min_proto_version(x, version) && SSL_CTX_set_max_proto_version(x, version);
    T_OK(ok, "pin protocol version 0x%x", version);
    /*
     * Only the ChaCha suite: if the record cipher could not be fetched under
     * this query, libssl disables the suite and these calls fail.
     */
    if (version == TLS1_3_VERSION)
        ok = SSL_CTX_set_ciphersuites(x, SUITE13);
    else
        ok = SSL_CTX_set_cipher_list(x, SUITE12);
    if (!T_OK(ok, "%s: only the ChaCha20-Poly1305 suite (%s)", propq,
              version == TLS1_3_VERSION ? SUITE13 : SUITE12))
        ERR_print_errors_fp(stderr);
    if (server) {
        ok = SSL_CTX_use_certificate(x, g_cert) && SSL_CTX_use_PrivateKey(x, g_key) &&
             SSL_CTX_check_private_key(x);
        T_OK(ok, "server certificate and key");
    } else {
        /* The throwaway certificate is the only trust anchor. */
        ok = X509_STORE_add_cert(SSL_CTX_get_cert_store(x), g_cert);
        T_OK(ok, "client trust store");
        SSL_CTX_set_verify(x, SSL_VERIFY_PEER, NULL);
    }
    ERR_clear_error();
    return x;
}

/* ---- a connection over two BIO pairs --------------------------------------- */

typedef struct {
    SSL *ssl[2];
    BIO *net[2]; /* network end of each side's BIO pair */
} conn;

static int conn_open(conn *c, SSL_CTX *cctx, SSL_CTX *sctx)
{
    BIO *in[2] = { NULL, NULL };

    memset(c, 0, sizeof(*c));
    if (cctx == NULL || sctx == NULL)
        return 0;
    for (int s = 0; s < 2; s++) {
        if (!BIO_new_bio_pair(&in[s], PAIR_BUF, &c->net[s], PAIR_BUF))
            return 0;
        c->ssl[s] = SSL_new(s == CLIENT ? cctx : sctx);
        if (c->ssl[s] == NULL) {
            BIO_free(in[s]);
            return 0;
        }
        SSL_set_bio(c->ssl[s], in[s], in[s]);
    }
    SSL_set_connect_state(c->ssl[CLIENT]);
    SSL_set_accept_state(c->ssl[SERVER]);
    return 1;
}

static void conn_close(conn *c)
{
    for (int s = 0; s < 2; s++) {
        SSL_free(c->ssl[s]); /* frees its BIO half */
        BIO_free(c->net[s]);
        c->ssl[s] = NULL;
        c->net[s] = NULL;
    }
}

/* Take everything side `from` has put on the wire (up to cap bytes). */
static size_t wire_take(conn *c, int from, uint8_t *buf, size_t cap)
{
    size_t got = 0;

    while (got < cap && BIO_ctrl_pending(c->net[from]) > 0) {
        int r = BIO_read(c->net[from], buf + got, (int)(cap - got));
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

static int wire_put(conn *c, int to, const uint8_t *buf, size_t n)
{
    return n == 0 || BIO_write(c->net[to], buf, (int)n) == (int)n;
}

/* Deliver all pending bytes in both directions, untouched. */
static void pump(conn *c)
{
    static uint8_t buf[PAIR_BUF];

    for (int from = 0; from < 2; from++) {
        size_t room = BIO_ctrl_get_write_guarantee(c->net[!from]);
        size_t n = wire_take(c, from, buf, room < sizeof(buf) ? room : sizeof(buf));
        if (!wire_put(c, !from, buf, n))
            T_OK(0, "wire_put of %zu bytes", n);
    }
}

static int retryable(SSL *s, int r)
{
    int e = SSL_get_error(s, r);
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE;
}

static int handshake(conn *c)
{
    int done[2] = { 0, 0 };

    for (int i = 0; i < 64 && !(done[0] && done[1]); i++) {
        for (int s = 0; s < 2; s++) {
            if (done[s])
                continue;
            int r = SSL_do_handshake(c->ssl[s]);
            if (r == 1) {
                done[s] = 1;
            } else if (!retryable(c->ssl[s], r)) {
                fprintf(stderr, "%s handshake failed:\n", s == CLIENT ? "client" : "server");
                ERR_print_errors_fp(stderr);
                return 0;
            }
        }
        pump(c);
    }
    pump(c);
    return done[0] && done[1];
}

static size_t records_for(size_t n)
{
    return (n + MAX_FRAG - 1) / MAX_FRAG;
}

/*
 * `from` writes n bytes, the peer reads them back; both must match. The
 * writer never needs the reader's help with PAIR_BUF-sized pairs, but the loop
 * interleaves both anyway so a short BIO buffer could not deadlock it.
 */
static int xfer(conn *c, int from, size_t n)
{
    static uint8_t data[64 * 1024], got[64 * 1024];
    size_t sent = 0, recvd = 0;
    int to = !from, ok = 1;

    if (n > sizeof(data))
        return 0;
    t_rand_bytes(data, n);
    memset(got, 0, n);
    for (int guard = 0; (sent < n || recvd < n) && guard < 1000; guard++) {
        size_t k;
        if (sent < n) {
            int r = SSL_write_ex(c->ssl[from], data + sent, n - sent, &k);
            if (r)
                sent += k;
            else if (!retryable(c->ssl[from], r)) {
                ok = 0;
                break;
            }
        }
        pump(c);
        while (recvd < n) {
            int r = SSL_read_ex(c->ssl[to], got + recvd, n - recvd, &k);
            if (r) {
                recvd += k;
                continue;
            }
            if (!retryable(c->ssl[to], r))
                ok = 0;
            break;
        }
        if (!ok)
            break;
    }
    if (!T_OK(ok && sent == n && recvd == n, "%s->%s %zu bytes: sent %zu, received %zu",
              from == CLIENT ? "client" : "server", to == CLIENT ? "client" : "server", n, sent,
              recvd)) {
        ERR_print_errors_fp(stderr);
        return 0;
    }
    return T_EQ_MEM(data, got, n, "%s->%s %zu bytes arrive intact",
                    from == CLIENT ? "client" : "server", to == CLIENT ? "client" : "server", n);
}

static const char *vname(int version)
{
    return version == TLS1_3_VERSION ? "TLS 1.3" : "TLS 1.2";
}

static void check_suite(conn *c, int version, const char *what)
{
    const char *want = version == TLS1_3_VERSION ? SUITE13 : SUITE12;

    for (int s = 0; s < 2; s++) {
        const SSL_CIPHER *ci = SSL_get_current_cipher(c->ssl[s]);
        const char *got = ci ? SSL_CIPHER_get_name(ci) : "(none)";
        T_OK(strcmp(got, want) == 0, "%s %s %s: negotiated suite %s, want %s", what,
             vname(version), s == CLIENT ? "client" : "server", got, want);
        T_OK(SSL_version(c->ssl[s]) == version, "%s %s: protocol version 0x%x", what,
             vname(version), SSL_version(c->ssl[s]));
    }
    T_OK(SSL_get_verify_result(c->ssl[CLIENT]) == X509_V_OK, "%s: server certificate verified",
         what);
}

/*
 * Counter expectation for records that chapoly sealed and opened: TLS 1.2
 * records go through tlsaad record mode, and every one of them is also an
 * AEAD message; TLS 1.3 never uses tlsaad.
 */
static void check_records(stats d, int version, uint64_t ops, const char *what, int exact)
{
    if (version == TLS1_2_VERSION) {
        if (exact) {
            T_OK(d.tls == ops, "%s: %s chapoly-tls-records delta %llu, want %llu", vname(version),
                 what, (unsigned long long)d.tls, (unsigned long long)ops);
            T_OK(d.aead == ops, "%s: %s chapoly-aead-messages delta %llu, want %llu",
                 vname(version), what, (unsigned long long)d.aead, (unsigned long long)ops);
        } else {
            T_OK(d.tls >= ops, "%s: %s chapoly-tls-records delta %llu, want >= %llu",
                 vname(version), what, (unsigned long long)d.tls, (unsigned long long)ops);
            T_OK(d.aead >= d.tls, "%s: %s aead-messages delta %llu >= tls-records delta %llu",
                 vname(version), what, (unsigned long long)d.aead, (unsigned long long)d.tls);
        }
    } else {
        if (exact)
            T_OK(d.aead == ops, "%s: %s chapoly-aead-messages delta %llu, want %llu",
                 vname(version), what, (unsigned long long)d.aead, (unsigned long long)ops);
        else
            T_OK(d.aead >= ops, "%s: %s chapoly-aead-messages delta %llu, want >= %llu",
                 vname(version), what, (unsigned long long)d.aead, (unsigned long long)ops);
        T_OK(d.tls == 0, "%s: %s chapoly-tls-records delta %llu, want 0 (no tlsaad in 1.3)",
             vname(version), what, (unsigned long long)d.tls);
    }
}

/* ---- data exchange through chapoly --------------------------------------- */

static const size_t sizes[] = { 1, 16, 100, 1350, 4096, 16383, 16384, 16385, 40000 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static void exchange(int version)
{
    SSL_CTX *sctx = make_ctx(1, version, PROPQ_CHAPOLY);
    SSL_CTX *cctx = make_ctx(0, version, PROPQ_CHAPOLY);
    conn c;
    uint64_t app_ops = 0;

    if (!T_OK(conn_open(&c, cctx, sctx), "%s: connection objects", vname(version)))
        goto close;
    stats s0 = read_stats();
    if (!T_OK(handshake(&c), "%s: handshake through chapoly", vname(version)))
        goto close;
    check_suite(&c, version, "chapoly");
    stats s1 = read_stats();
    /*
     * Each side's Finished is sealed by its sender and opened by its peer.
     * TLS 1.2 encrypts nothing else in a full handshake (its NewSessionTicket
     * precedes ChangeCipherSpec); TLS 1.3 also encrypts EncryptedExtensions,
     * Certificate, CertificateVerify and the tickets.
     */
    check_records(stats_delta(s0, s1), version, 4, "handshake", version == TLS1_2_VERSION);

    /*
     * Warm-up both ways: the TLS 1.3 client opens the server's post-handshake
     * tickets on its first read, so only later exchanges have an exact count.
     */
    for (int from = 0; from < 2; from++)
        if (xfer(&c, from, 1))
            app_ops += 2;
    stats s2 = read_stats();
    check_records(stats_delta(s1, s2), version, app_ops, "warm-up", version == TLS1_2_VERSION);

    for (size_t i = 0; i < NSIZES; i++) {
        for (int from = 0; from < 2; from++) {
            char what[64];
            stats a = read_stats();
            if (!xfer(&c, from, sizes[i]))
                continue;
            stats b = read_stats();
            uint64_t ops = 2 * records_for(sizes[i]); /* sealed + opened */
            app_ops += ops;
            snprintf(what, sizeof(what), "%s %zu-byte write", from == CLIENT ? "client" : "server",
                     sizes[i]);
            check_records(stats_delta(a, b), version, ops, what, 1);
        }
    }
    stats s3 = read_stats();
    check_records(stats_delta(s0, s3), version, app_ops + 4, "whole connection", 0);

    /* close_notify is a record too: sealed by the client, opened by the server. */
    int r = SSL_shutdown(c.ssl[CLIENT]);
    T_OK(r == 0, "%s: client sends close_notify (SSL_shutdown %d)", vname(version), r);
    pump(&c);
    uint8_t b1;
    size_t k;
    r = SSL_read_ex(c.ssl[SERVER], &b1, 1, &k);
    T_OK(!r && SSL_get_error(c.ssl[SERVER], r) == SSL_ERROR_ZERO_RETURN,
         "%s: server sees close_notify", vname(version));
    stats s4 = read_stats();
    check_records(stats_delta(s3, s4), version, 2, "close_notify", 1);
close:
    conn_close(&c);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    ERR_clear_error();
}

/* Two live connections on one SSL_CTX pair, records interleaved. */
static void interleaved(int version)
{
    SSL_CTX *sctx = make_ctx(1, version, PROPQ_CHAPOLY);
    SSL_CTX *cctx = make_ctx(0, version, PROPQ_CHAPOLY);
    conn c[2];
    int ok = conn_open(&c[0], cctx, sctx) && conn_open(&c[1], cctx, sctx);

    if (T_OK(ok && handshake(&c[0]) && handshake(&c[1]), "%s: two concurrent connections",
             vname(version))) {
        for (int i = 0; i < 8; i++) {
            size_t n = 1 + t_rand_below(3 * MAX_FRAG);
            xfer(&c[i & 1], (i >> 1) & 1, n);
        }
    }
    conn_close(&c[0]);
    conn_close(&c[1]);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    ERR_clear_error();
}

/* ---- damaged records -------------------------------------------------- */

enum fault { FLIP_BODY, FLIP_TAG, FLIP_TYPE, REPLAY };
static const char *const fault_name[] = { "bit flip in ciphertext", "bit flip in tag",
                                          "record type changed (AAD)", "replayed record" };

/* Does the error queue hold this libssl reason? Clears the queue. */
static int ssl_reason_queued(int reason)
{
    unsigned long e;
    int found = 0;

    while ((e = ERR_get_error()) != 0)
        if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == reason)
            found = 1;
    return found;
}

static void fault_case(int version, const char *propq, int from, enum fault f)
{
    SSL_CTX *sctx = make_ctx(1, version, propq);
    SSL_CTX *cctx = make_ctx(0, version, propq);
    const char *dir = from == CLIENT ? "client->server" : "server->client";
    int to = !from;
    conn c;
    char what[160];

    snprintf(what, sizeof(what), "%s %s [%s] %s", vname(version), propq, dir, fault_name[f]);
    if (!T_OK(conn_open(&c, cctx, sctx) && handshake(&c), "%s: handshake", what))
        goto close;
    /* Consume TLS 1.3 tickets so the next wire bytes are exactly one record. */
    xfer(&c, SERVER, 1);
    xfer(&c, CLIENT, 1);

    uint8_t msg[100], rec[512], got[128];
    size_t k;
    t_rand_bytes(msg, sizeof(msg));
    if (!T_OK(SSL_write_ex(c.ssl[from], msg, sizeof(msg), &k) && k == sizeof(msg),
              "%s: write", what))
        goto close;
    size_t n = wire_take(&c, from, rec, sizeof(rec));
    /* header 5 + payload (+ inner content type in 1.3) + tag 16, no explicit nonce */
    size_t want = 5 + sizeof(msg) + (version == TLS1_3_VERSION) + 16;
    if (!T_OK(n == want && rec[0] == 23, "%s: one application record of %zu bytes on the wire "
              "(got %zu, type %u)", what, want, n, n ? rec[0] : 0))
        goto close;

    switch (f) {
    case FLIP_BODY:
        rec[5 + 37] ^= 0x04;
        break;
    case FLIP_TAG:
        rec[n - 1] ^= 0x80;
        break;
    case FLIP_TYPE:
        rec[0] ^= 0x01; /* application_data -> handshake; only in 1.2's AAD */
        break;
    case REPLAY: {
        /* the genuine record is accepted first */
        wire_put(&c, to, rec, n);
        int r = SSL_read_ex(c.ssl[to], got, sizeof(got), &k);
        T_OK(r && k == sizeof(msg) && memcmp(got, msg, k) == 0, "%s: original record accepted",
             what);
        break;
    }
    }
    ERR_clear_error();
    wire_put(&c, to, rec, n);
    k = 0;
    int r = SSL_read_ex(c.ssl[to], got, sizeof(got), &k);
    int err = SSL_get_error(c.ssl[to], r);
    T_OK(!r && k == 0 && err == SSL_ERROR_SSL, "%s: receiver rejects the record (r %d, %zu bytes, "
         "SSL error %d)", what, r, k, err);
    T_OK(ssl_reason_queued(SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC),
         "%s: receiver reason is SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC", what);

    /* The receiver's fatal alert reaches the sender as bad_record_mac. */
    pump(&c);
    r = SSL_read_ex(c.ssl[from], got, sizeof(got), &k);
    T_OK(!r && SSL_get_error(c.ssl[from], r) == SSL_ERROR_SSL &&
         ssl_reason_queued(SSL_R_SSLV3_ALERT_BAD_RECORD_MAC),
         "%s: sender receives a bad_record_mac alert", what);
close:
    conn_close(&c);
    ERR_clear_error();

    /* The SSL_CTXs (and the record cipher they fetched) keep working. */
    if (T_OK(conn_open(&c, cctx, sctx) && handshake(&c), "%s: new connection afterwards", what)) {
        check_suite(&c, version, what);
        xfer(&c, CLIENT, 1350);
        xfer(&c, SERVER, 1350);
    }
    conn_close(&c);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    ERR_clear_error();
}

static void faults(int version, const char *propq)
{
    for (int from = 0; from < 2; from++)
        for (int f = FLIP_BODY; f <= REPLAY; f++) {
            /* TLS 1.3 rejects a non-application_data outer type before decrypting. */
            if (f == FLIP_TYPE && version == TLS1_3_VERSION)
                continue;
            fault_case(version, propq, from, (enum fault)f);
        }
}

/* ---- TLS 1.3 KeyUpdate in both directions ------------------------------------ */

/*
 * At every TLS 1.3 key change libssl 3.0 sets the new key with no IV
 * (EVP_CipherInit_ex(ctx, NULL, NULL, key, NULL, -1) after setting the IV
 * length) and then gives each record its nonce through an IV-only init, so
 * key-only inits must keep working. Each side in turn requests an update
 * (SSL_KEY_UPDATE_REQUESTED), so both sides change both keys; data must
 * arrive intact after every change, and chapoly's counters must show every
 * record, the KeyUpdate messages included, sealed and opened by chapoly.
 */
static void key_updates(void)
{
    SSL_CTX *sctx = make_ctx(1, TLS1_3_VERSION, PROPQ_CHAPOLY);
    SSL_CTX *cctx = make_ctx(0, TLS1_3_VERSION, PROPQ_CHAPOLY);
    conn c;

    if (!T_OK(conn_open(&c, cctx, sctx) && handshake(&c), "KeyUpdate: handshake"))
        goto close;
    check_suite(&c, TLS1_3_VERSION, "KeyUpdate");
    /* Consume the tickets, so that every later record is counted exactly. */
    xfer(&c, SERVER, 1);
    xfer(&c, CLIENT, 1);

    for (int round = 0; round < 3; round++) {
        for (int who = 0; who < 2; who++) {
            const char *side = who == CLIENT ? "client" : "server";
            char what[96];
            stats a = read_stats();

            snprintf(what, sizeof(what), "KeyUpdate requested by the %s (round %d)", side, round);
            T_OK(SSL_key_update(c.ssl[who], SSL_KEY_UPDATE_REQUESTED), "%s: SSL_key_update",
                 what);
            T_OK(SSL_get_key_update_type(c.ssl[who]) == SSL_KEY_UPDATE_REQUESTED,
                 "%s: update pending", what);
            T_OK(SSL_do_handshake(c.ssl[who]) == 1, "%s: SSL_do_handshake sends it", what);
            T_OK(SSL_get_key_update_type(c.ssl[who]) == SSL_KEY_UPDATE_NONE,
                 "%s: KeyUpdate sent", what);
            /* The peer opens the KeyUpdate, then data under the new key. */
            xfer(&c, who, 1350);
            /* The peer answers with its own KeyUpdate, then data under its new key. */
            xfer(&c, !who, 1350 + 1000 * (size_t)round);
            T_OK(SSL_get_key_update_type(c.ssl[!who]) == SSL_KEY_UPDATE_NONE,
                 "%s: the peer's KeyUpdate sent", what);
            /*
             * Sealed and opened: the KeyUpdate, the data record and the
             * peer's KeyUpdate and data record = 4 records, 8 operations.
             */
            check_records(stats_delta(a, read_stats()), TLS1_3_VERSION, 8, what, 1);
        }
    }
    /* Several records each way under the final keys. */
    xfer(&c, CLIENT, 40000);
    xfer(&c, SERVER, 40000);
close:
    conn_close(&c);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    ERR_clear_error();
}

/* ---- negative control: default provider's records are not ours -------------- */

static void default_provider(int version)
{
    SSL_CTX *sctx = make_ctx(1, version, PROPQ_DEFAULT);
    SSL_CTX *cctx = make_ctx(0, version, PROPQ_DEFAULT);
    conn c;
    stats a = read_stats();

    if (T_OK(conn_open(&c, cctx, sctx) && handshake(&c), "%s %s: handshake", vname(version),
             PROPQ_DEFAULT)) {
        check_suite(&c, version, PROPQ_DEFAULT);
        xfer(&c, CLIENT, 4096);
        xfer(&c, SERVER, 40000);
    }
    conn_close(&c);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    faults(version, PROPQ_DEFAULT);

    stats b = read_stats();
    stats d = stats_delta(a, b);
    T_OK(d.aead == 0 && d.tls == 0,
         "%s with %s: chapoly counters unchanged (aead +%llu, tls +%llu)", vname(version),
         PROPQ_DEFAULT, (unsigned long long)d.aead, (unsigned long long)d.tls);
    ERR_clear_error();
}

int main(void)
{
    /* Read by the provider at init, so it must be set before t_setup(). */
    setenv("CHAPOLY_STATS", "1", 1);
    t_setup();
    if (make_identity()) {
        read_stats(); /* fails early if stats params are missing */
        const int versions[] = { TLS1_3_VERSION, TLS1_2_VERSION };
        for (int v = 0; v < 2; v++) {
            exchange(versions[v]);
            interleaved(versions[v]);
            faults(versions[v], PROPQ_CHAPOLY);
            default_provider(versions[v]);
        }
        key_updates();
    }
    X509_free(g_cert);
    EVP_PKEY_free(g_key);
    int rc = t_finish("test_tls");
    t_teardown();
    return rc;
}
