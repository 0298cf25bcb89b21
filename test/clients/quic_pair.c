/* SPDX-License-Identifier: Apache-2.0 */
/* One QUIC connection over loopback in one process: see quic_pair.h. */
#define _POSIX_C_SOURCE 200809L
#include "quic_pair.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#define CHUNK 65536
/* ALPN is mandatory in QUIC; any name both ends agree on. */
static const unsigned char alpn[] = { 10, 'c', 'h', 'a', 'p', 'o', 'l', 'y', '-', 'q', 't' };
/* A peer that vanished ends the connection after this long. */
#define IDLE_TIMEOUT_MS 10000
/* The whole connection's limit unless qp_run.limit_s says otherwise. */
#define DEFAULT_LIMIT_S 30.0
/* The longest wait between two looks at the deadline. */
#define POLL_MS 20

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* Records the first failure (with libssl's error queue) in buf. */
static void fail(char *buf, size_t n, const char *fmt, ...)
{
    if (buf[0] != '\0') {
        ERR_clear_error();
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    unsigned long e;
    while ((e = ERR_get_error()) != 0 && k >= 0 && (size_t)k + 2 < n) {
        buf[k++] = ';';
        buf[k++] = ' ';
        ERR_error_string_n(e, buf + k, n - (size_t)k);
        k += (int)strlen(buf + k);
    }
    ERR_clear_error();
}

int qp_identity(OSSL_LIB_CTX *ctx, EVP_PKEY **key, X509 **cert)
{
    EVP_PKEY *k = EVP_PKEY_Q_keygen(ctx, NULL, "EC", "P-256");
    X509 *c = X509_new_ex(ctx, NULL);
    X509_NAME *name = X509_NAME_new();
    int ok = k != NULL && c != NULL && name != NULL && X509_set_version(c, X509_VERSION_3) &&
             ASN1_INTEGER_set(X509_get_serialNumber(c), 1) &&
             X509_gmtime_adj(X509_getm_notBefore(c), -3600) != NULL &&
             X509_gmtime_adj(X509_getm_notAfter(c), 86400) != NULL &&
             X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                        (const unsigned char *)"localhost", -1, -1, 0) &&
             X509_set_subject_name(c, name) && X509_set_issuer_name(c, name) &&
             X509_set_pubkey(c, k) && X509_sign(c, k, EVP_sha256()) > 0;
    X509_NAME_free(name);
    if (!ok) {
        EVP_PKEY_free(k);
        X509_free(c);
        return 0;
    }
    *key = k;
    *cert = c;
    return 1;
}

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl;
    (void)arg;
    if (SSL_select_next_proto((unsigned char **)out, outlen, alpn, sizeof(alpn), in, inlen) ==
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_OK;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

static SSL_CTX *make_ctx(qp_run *r, int server, char *err, size_t errn)
{
    OSSL_LIB_CTX *lib = server ? r->server_ctx : r->client_ctx;
    const char *propq = server ? r->server_propq : r->client_propq;
    SSL_CTX *x = SSL_CTX_new_ex(lib, propq,
                                server ? OSSL_QUIC_server_method() : OSSL_QUIC_client_method());
    if (x == NULL) {
        fail(err, errn, "%s: SSL_CTX_new_ex(%s)", server ? "server" : "client", propq);
        return NULL;
    }
    /* Only the ChaCha suite: fails if its ciphers cannot be fetched under propq. */
    if (!SSL_CTX_set_ciphersuites(x, QP_SUITE)) {
        fail(err, errn, "%s: SSL_CTX_set_ciphersuites(%s)", server ? "server" : "client",
             QP_SUITE);
        SSL_CTX_free(x);
        return NULL;
    }
    if (server) {
        if (SSL_CTX_use_certificate(x, r->cert) <= 0 || SSL_CTX_use_PrivateKey(x, r->key) <= 0 ||
            !SSL_CTX_check_private_key(x)) {
            fail(err, errn, "server: certificate and key");
            SSL_CTX_free(x);
            return NULL;
        }
        SSL_CTX_set_alpn_select_cb(x, select_alpn, NULL);
    } else {
        if (!X509_STORE_add_cert(SSL_CTX_get_cert_store(x), r->cert)) {
            fail(err, errn, "client: trust store");
            SSL_CTX_free(x);
            return NULL;
        }
        SSL_CTX_set_verify(x, SSL_VERIFY_PEER, NULL);
    }
    return x;
}

static void suite_of(SSL *s, char *out, size_t n)
{
    const SSL_CIPHER *c = SSL_get_current_cipher(s);
    snprintf(out, n, "%s", c != NULL ? SSL_CIPHER_get_name(c) : "(none)");
}

/*
 * Every SSL object here is non-blocking: an operation that would block waits
 * (pause_io) and is retried until the deadline, so that a connection that
 * stalls (a peer that cannot open our packets never answers) fails with a
 * reason instead of hanging.
 */
/* Waits for the socket or libssl's next timer (at most POLL_MS), then lets libssl run. */
static void pause_io(SSL *s)
{
    struct timeval tv;
    int infinite = 1, ms = POLL_MS;
    if (SSL_get_event_timeout(s, &tv, &infinite) && !infinite) {
        long t = (long)tv.tv_sec * 1000 + (long)tv.tv_usec / 1000;
        ms = t < ms ? (int)t : ms;
    }
    struct pollfd pfd = { .fd = SSL_get_fd(s),
                          .events = POLLIN | (SSL_net_write_desired(s) ? POLLOUT : 0) };
    (void)poll(&pfd, 1, ms);
    (void)SSL_handle_events(s);
}

static int wait_io(SSL *s, int ret, double deadline, const char *who, const char *op,
                   char *err, size_t errn)
{
    int e = SSL_get_error(s, ret);
    if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        fail(err, errn, "%s: %s failed (SSL_get_error %d)", who, op, e);
        return 0;
    }
    if (now_s() > deadline) {
        fail(err, errn, "%s: %s still waiting at the deadline (the connection stalled)", who,
             op);
        return 0;
    }
    pause_io(s);
    return 1;
}

/* Reads to the end of the stream into a new buffer (more than cap is an error). */
static int read_all(SSL *s, size_t cap, uint8_t **out, size_t *outlen, double deadline,
                    const char *who, char *err, size_t errn)
{
    uint8_t *buf = malloc(cap + 1);
    size_t have = 0, n;
    if (buf == NULL) {
        fail(err, errn, "%s: out of memory", who);
        return 0;
    }
    *out = buf;
    *outlen = 0;
    for (;;) {
        size_t room = cap + 1 - have;
        if (room == 0) {
            fail(err, errn, "%s: more than the %zu bytes expected arrived", who, cap);
            return 0;
        }
        int r = SSL_read_ex(s, buf + have, room < CHUNK ? room : CHUNK, &n);
        if (r > 0) {
            have += n;
            *outlen = have;
            continue;
        }
        if (SSL_get_error(s, r) == SSL_ERROR_ZERO_RETURN)
            return 1; /* the peer's FIN */
        if (!wait_io(s, r, deadline, who, "SSL_read_ex", err, errn)) {
            fail(err, errn, "%s: stream broken after %zu bytes (read state %d)", who, have,
                 SSL_get_stream_read_state(s));
            return 0;
        }
    }
}

static int write_all(SSL *s, const uint8_t *p, size_t len, double deadline, const char *who,
                     char *err, size_t errn)
{
    size_t off = 0, w;
    while (off < len) {
        size_t n = len - off < CHUNK ? len - off : CHUNK;
        int r = SSL_write_ex(s, p + off, n, &w);
        if (r > 0)
            off += w;
        else if (!wait_io(s, r, deadline, who, "SSL_write_ex", err, errn))
            return 0;
    }
    int r;
    while ((r = SSL_stream_conclude(s, 0)) != 1)
        if (!wait_io(s, r, deadline, who, "SSL_stream_conclude", err, errn))
            return 0;
    return 1;
}

static int shutdown_all(SSL *s, double deadline, const char *who, char *err, size_t errn)
{
    int r;
    while ((r = SSL_shutdown(s)) != 1) {
        if (r < 0) {
            fail(err, errn, "%s: SSL_shutdown", who);
            return 0;
        }
        /* 0: still flushing the streams, then closing; libssl needs its timers run */
        if (now_s() > deadline) {
            fail(err, errn, "%s: SSL_shutdown not done at the deadline", who);
            return 0;
        }
        pause_io(s);
    }
    return 1;
}

typedef struct {
    qp_run *r;
    SSL *listener;
    double deadline;
    atomic_int stop; /* the client gave up: stop waiting for its connection */
    int ok;
    char err[256];
} server_arg;

static void *server_main(void *p)
{
    server_arg *a = p;
    qp_run *r = a->r;
    SSL *conn = NULL;
    int fd = SSL_get_fd(a->listener);

    while ((conn = SSL_accept_connection(a->listener, SSL_ACCEPT_CONNECTION_NO_BLOCK)) == NULL) {
        if (atomic_load(&a->stop) || now_s() > a->deadline) {
            fail(a->err, sizeof(a->err), "server: no connection accepted");
            return NULL;
        }
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        (void)poll(&pfd, 1, POLL_MS);
        (void)SSL_handle_events(a->listener);
    }
    if (read_all(conn, r->up_len, &r->up_got, &r->up_got_len, a->deadline, "server", a->err,
                 sizeof(a->err)) &&
        write_all(conn, r->down, r->down_len, a->deadline, "server", a->err, sizeof(a->err))) {
        suite_of(conn, r->server_suite, sizeof(r->server_suite));
        a->ok = shutdown_all(conn, a->deadline, "server", a->err, sizeof(a->err));
    }
    SSL_free(conn);
    return NULL;
}

int qp_transfer(qp_run *r)
{
    SSL_CTX *sctx = NULL, *cctx = NULL;
    SSL *listener = NULL, *client = NULL;
    BIO_ADDR *peer = NULL;
    int sfd = -1, cfd = -1, ok = 0, started = 0;
    pthread_t th;
    server_arg sa;
    struct sockaddr_in sin;
    socklen_t slen = sizeof(sin);
    char cerr[256] = "";
    double t0 = 0, t1 = 0, cpu1 = 0;
    BIO *bio = NULL;

    memset(&sa, 0, sizeof(sa));
    atomic_init(&sa.stop, 0);
    sa.r = r;
    r->err[0] = '\0';
    r->up_got = r->down_got = NULL;
    r->up_got_len = r->down_got_len = 0;
    r->server_suite[0] = r->client_suite[0] = '\0';
    r->handshake_s = r->transfer_s = r->transfer_cpu_s = 0;

    sctx = make_ctx(r, 1, cerr, sizeof(cerr));
    cctx = sctx != NULL ? make_ctx(r, 0, cerr, sizeof(cerr)) : NULL;
    if (cctx == NULL)
        goto done;

    /* UDP sockets on 127.0.0.1; libssl's QUIC wants them non-blocking. */
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sfd = socket(AF_INET, SOCK_DGRAM, 0);
    if (sfd < 0 || bind(sfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
        getsockname(sfd, (struct sockaddr *)&sin, &slen) != 0 || !BIO_socket_nbio(sfd, 1)) {
        fail(cerr, sizeof(cerr), "server: UDP socket on 127.0.0.1");
        goto done;
    }
    cfd = socket(AF_INET, SOCK_DGRAM, 0);
    if (cfd < 0 || connect(cfd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
        !BIO_socket_nbio(cfd, 1)) {
        fail(cerr, sizeof(cerr), "client: UDP socket connected to 127.0.0.1:%u",
             ntohs(sin.sin_port));
        goto done;
    }

    /* the connections it accepts inherit its non-blocking mode */
    listener = SSL_new_listener(sctx, 0);
    if (listener == NULL || !SSL_set_fd(listener, sfd) || !SSL_set_blocking_mode(listener, 0) ||
        !SSL_listen(listener)) {
        fail(cerr, sizeof(cerr), "server: SSL_new_listener / SSL_set_fd / SSL_listen");
        goto done;
    }
    sa.listener = listener;

    client = SSL_new(cctx);
    peer = BIO_ADDR_new();
    bio = BIO_new_dgram(cfd, BIO_NOCLOSE);
    if (client == NULL || peer == NULL || bio == NULL) {
        BIO_free(bio);
        fail(cerr, sizeof(cerr), "client: SSL_new / BIO_new_dgram");
        goto done;
    }
    SSL_set_bio(client, bio, bio);
    if (!BIO_ADDR_rawmake(peer, AF_INET, &sin.sin_addr, sizeof(sin.sin_addr), sin.sin_port) ||
        !SSL_set1_initial_peer_addr(client, peer) ||
        SSL_set_alpn_protos(client, alpn, sizeof(alpn)) != 0 ||
        !SSL_set_tlsext_host_name(client, "localhost") ||
        !SSL_set_feature_request_uint(client, SSL_VALUE_QUIC_IDLE_TIMEOUT, IDLE_TIMEOUT_MS) ||
        !SSL_set_blocking_mode(client, 0)) {
        fail(cerr, sizeof(cerr), "client: peer address / ALPN / SNI / idle timeout");
        goto done;
    }

    double deadline = now_s() + (r->limit_s > 0 ? r->limit_s : DEFAULT_LIMIT_S);
    sa.deadline = deadline;
    if (pthread_create(&th, NULL, server_main, &sa) != 0) {
        fail(cerr, sizeof(cerr), "pthread_create");
        goto done;
    }
    started = 1;

    t0 = now_s();
    int rc;
    while ((rc = SSL_connect(client)) != 1) {
        if (!wait_io(client, rc, deadline, "client", "SSL_connect", cerr, sizeof(cerr))) {
            long v = SSL_get_verify_result(client);
            if (v != X509_V_OK)
                fail(cerr, sizeof(cerr), "client: verify: %s", X509_verify_cert_error_string(v));
            goto done;
        }
    }
    t1 = now_s();
    cpu1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    r->handshake_s = t1 - t0;
    suite_of(client, r->client_suite, sizeof(r->client_suite));
    if (write_all(client, r->up, r->up_len, deadline, "client", cerr, sizeof(cerr)) &&
        read_all(client, r->down_len, &r->down_got, &r->down_got_len, deadline, "client", cerr,
                 sizeof(cerr))) {
        r->transfer_s = now_s() - t1;
        r->transfer_cpu_s = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu1;
        ok = shutdown_all(client, deadline, "client", cerr, sizeof(cerr));
    }

done:
    if (started) {
        if (!ok && client != NULL)
            /* tell the server at once, so that it does not wait for its deadline */
            (void)SSL_shutdown_ex(client, SSL_SHUTDOWN_FLAG_RAPID | SSL_SHUTDOWN_FLAG_NO_BLOCK,
                                  NULL, 0);
        atomic_store(&sa.stop, 1);
        pthread_join(th, NULL);
    }
    SSL_free(client);
    SSL_free(listener);
    SSL_CTX_free(cctx);
    SSL_CTX_free(sctx);
    BIO_ADDR_free(peer);
    if (cfd >= 0)
        close(cfd);
    if (sfd >= 0)
        close(sfd);
    ok = ok && started && sa.ok;
    if (cerr[0] != '\0' && sa.err[0] != '\0')
        snprintf(r->err, sizeof(r->err), "%s | %s", cerr, sa.err);
    else if (cerr[0] != '\0' || sa.err[0] != '\0')
        snprintf(r->err, sizeof(r->err), "%s", cerr[0] != '\0' ? cerr : sa.err);
    else if (!ok)
        snprintf(r->err, sizeof(r->err), "failed without a reason");
    return ok;
}

void qp_free(qp_run *r)
{
    free(r->up_got);
    free(r->down_got);
    r->up_got = r->down_got = NULL;
}
