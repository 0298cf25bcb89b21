/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One QUIC connection over 127.0.0.1 between libssl's own QUIC server
 * (OSSL_QUIC_server_method, SSL_new_listener, SSL_accept_connection) and its
 * client (OSSL_QUIC_client_method), in one process: the server in a thread,
 * the client in the caller's. Only TLS_CHACHA20_POLY1305_SHA256 on both ends.
 * Non-blocking mode, every wait bounded by a deadline (a connection that
 * stalls fails with a reason). On the connection's default stream the client
 * sends `up` bytes and concludes; the server reads them to the end, then
 * sends `down` bytes and concludes; the client reads them to the end; both
 * shut down.
 *
 * Needs OpenSSL 3.5 (its QUIC server API). Used by test_quic (the counters
 * prove chapoly served the packets). Nothing here checks the bytes: the caller gets
 * what arrived and compares.
 */
#ifndef CHAPOLY_QUIC_PAIR_H
#define CHAPOLY_QUIC_PAIR_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#define QP_SUITE "TLS_CHACHA20_POLY1305_SHA256"

typedef struct {
    /* in */
    OSSL_LIB_CTX *server_ctx, *client_ctx; /* each side's library context */
    const char *server_propq;              /* each SSL_CTX_new_ex's property query, */
    const char *client_propq;              /* e.g. "?provider=chapoly" */
    EVP_PKEY *key;                         /* the server's key ... */
    X509 *cert;                            /* ... and self-signed certificate (the client's anchor) */
    const uint8_t *up;                     /* client -> server */
    size_t up_len;
    const uint8_t *down;                   /* server -> client */
    size_t down_len;
    double limit_s;                        /* the connection's time limit; 0: 30 s */
    /* out (buffers owned by the struct: qp_free) */
    uint8_t *up_got;                       /* what the server read */
    size_t up_got_len;
    uint8_t *down_got;                     /* what the client read */
    size_t down_got_len;
    char server_suite[64], client_suite[64]; /* negotiated, each end's view */
    double handshake_s;                      /* SSL_connect, wall seconds */
    double transfer_s;                       /* connected -> the client read the last byte */
    double transfer_cpu_s;                   /* the process's CPU time (both ends) meanwhile */
    char err[512];                           /* first failure, empty if none */
} qp_run;

/* An EC P-256 key and a self-signed certificate (CN=localhost), made in ctx. */
int qp_identity(OSSL_LIB_CTX *ctx, EVP_PKEY **key, X509 **cert);

/* Runs the connection; 1 if both ends finished cleanly, else 0 and r->err. */
int qp_transfer(qp_run *r);

/* Frees r->up_got and r->down_got. */
void qp_free(qp_run *r);

#endif
