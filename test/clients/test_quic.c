/* SPDX-License-Identifier: Apache-2.0 */
/*
 * QUIC through chapoly (OpenSSL >= 3.5): libssl's own QUIC server and client
 * in one process (quic_pair.c: SSL_new_listener / SSL_accept_connection and
 * OSSL_QUIC_client_method over 127.0.0.1), only TLS_CHACHA20_POLY1305_SHA256
 * on both ends, 1 MiB and a bit each way on one stream, every byte compared.
 *
 * Each end has its own library context with the default provider and
 * chapoly (statistics on), so chapoly's counters tell the two ends apart.
 * libssl's QUIC fetches ChaCha20-Poly1305 (packet protection) and ChaCha20
 * (header protection) from the SSL_CTX's library context, but with no
 * property query of its own: libssl 3.5 does not pass SSL_CTX_new_ex's
 * query to its QUIC record layers (the QTX and QRX get the library context
 * only), so the library context's default properties decide, as
 * default_properties in openssl.cnf does for a real application. Each run
 * sets them on both contexts (EVP_set_default_properties) and passes the
 * same query to SSL_CTX_new_ex. Initial packets always use AES-128-GCM
 * (RFC 9001 5.2), so the default provider stays in play. The runs:
 *   chapoly          both ends "?provider=chapoly": each end's chapoly
 *                    sealed and opened at least one packet per 1500 bytes it
 *                    sent or received, made one header-protection mask (one
 *                    5-byte ChaCha20 call) per packet it sealed or opened,
 *                    and handled no TLS record.
 *   control          both ends "?provider=default": the same transfer intact,
 *                    and no chapoly counter moves on either end.
 *   mixed, both ways one end chapoly, the other the default provider: the
 *                    packets chapoly protects are opened by OpenSSL's own code
 *                    and the other way round; only the chapoly end counts.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/provider.h>
#include "quic_pair.h"
#include "test_common.h"

#define PROPQ_CHAPOLY "?provider=chapoly"
#define PROPQ_DEFAULT "?provider=default"
/* 1 MiB each way and a bit more, so neither ends on a packet boundary by design. */
#define UP_LEN ((size_t)1048576 + 1717)
#define DOWN_LEN ((size_t)1048576 + 4099)
/*
 * Stream bytes per packet, at most: OpenSSL 3.5's QUIC sends datagrams of at
 * most 1200 bytes (its QTX's maximum is QUIC_MIN_INITIAL_DGRAM_LEN, RFC
 * 9000's minimum; no path MTU discovery); seen: about 1060 packets per MiB.
 * 1500 leaves room for a larger datagram and still bounds the packets each
 * direction needs from below.
 */
#define MAX_DGRAM 1500
/* The whole test must end well within CTest's limit. */
#define WATCHDOG_S 200

enum { C_MESSAGES, C_SEALS, C_OPENS, C_TLS, C_CALLS, C_BYTES, C_MACS, C_PIPE, C_N };
static const char *const counter_names[C_N] = {
    "chapoly-aead-messages", "chapoly-aead-seals", "chapoly-aead-opens",
    "chapoly-tls-records", "chapoly-chacha20-calls", "chapoly-chacha20-bytes",
    "chapoly-poly1305-macs", "chapoly-pipeline-batches",
};

typedef struct {
    uint64_t v[C_N];
} counters;

static OSSL_LIB_CTX *client_ctx;
static OSSL_PROVIDER *client_prov, *client_default;

static counters read_counters(OSSL_PROVIDER *prov, const char *who)
{
    counters c;
    OSSL_PARAM p[C_N + 1];
    memset(&c, 0, sizeof(c));
    for (int i = 0; i < C_N; i++)
        p[i] = OSSL_PARAM_construct_uint64(counter_names[i], &c.v[i]);
    p[C_N] = OSSL_PARAM_construct_end();
    int ok = OSSL_PROVIDER_get_params(prov, p);
    for (int i = 0; i < C_N; i++)
        ok = ok && OSSL_PARAM_modified(&p[i]);
    T_OK(ok, "%s: every chapoly counter readable as a provider parameter", who);
    return c;
}

static counters delta(counters a, counters b)
{
    counters d;
    for (int i = 0; i < C_N; i++)
        d.v[i] = b.v[i] - a.v[i];
    return d;
}

static void print_counters(const char *run, const char *who, counters d)
{
    printf("  %-8s %-6s", run, who);
    for (int i = 0; i < C_N; i++)
        printf(" %s=%llu", counter_names[i] + 8, (unsigned long long)d.v[i]);
    printf("\n");
}

static void load_client_ctx(void)
{
    client_ctx = OSSL_LIB_CTX_new();
    client_default = client_ctx ? OSSL_PROVIDER_load(client_ctx, "default") : NULL;
    client_prov = client_ctx ? OSSL_PROVIDER_load(client_ctx, "chapoly") : NULL;
    if (client_prov == NULL || client_default == NULL) {
        ERR_print_errors_fp(stderr);
        fprintf(stderr, "the client's library context: cannot load default and chapoly\n");
        exit(1);
    }
}

/* What one end's chapoly did when it served that end's packets. */
static void check_served(const char *run, const char *who, counters d, size_t sent,
                         size_t received)
{
    uint64_t min_seals = sent / MAX_DGRAM, min_opens = received / MAX_DGRAM;
    T_OK(d.v[C_SEALS] >= min_seals,
         "%s, %s: chapoly sealed %llu packets, want >= %llu (%zu bytes sent)", run, who,
         (unsigned long long)d.v[C_SEALS], (unsigned long long)min_seals, sent);
    T_OK(d.v[C_OPENS] >= min_opens,
         "%s, %s: chapoly opened %llu packets, want >= %llu (%zu bytes received)", run, who,
         (unsigned long long)d.v[C_OPENS], (unsigned long long)min_opens, received);
    T_OK(d.v[C_MESSAGES] == d.v[C_SEALS] + d.v[C_OPENS],
         "%s, %s: aead-messages %llu != seals + opens %llu", run, who,
         (unsigned long long)d.v[C_MESSAGES],
         (unsigned long long)(d.v[C_SEALS] + d.v[C_OPENS]));
    /* header protection: one mask per packet protected or unprotected */
    T_OK(d.v[C_CALLS] == d.v[C_SEALS] + d.v[C_OPENS],
         "%s, %s: %llu ChaCha20 calls (header-protection masks), want one per packet "
         "sealed or opened (%llu)",
         run, who, (unsigned long long)d.v[C_CALLS],
         (unsigned long long)(d.v[C_SEALS] + d.v[C_OPENS]));
    T_OK(d.v[C_BYTES] == 5 * d.v[C_CALLS],
         "%s, %s: %llu ChaCha20 bytes, want 5 per mask (%llu)", run, who,
         (unsigned long long)d.v[C_BYTES], (unsigned long long)(5 * d.v[C_CALLS]));
    T_OK(d.v[C_TLS] == 0, "%s, %s: %llu TLS 1.2 records counted in QUIC", run, who,
         (unsigned long long)d.v[C_TLS]);
}

static void check_untouched(const char *run, const char *who, counters d)
{
    int zero = 1;
    for (int i = 0; i < C_N; i++)
        zero = zero && d.v[i] == 0;
    T_OK(zero, "%s, %s: chapoly was not asked, yet its counters moved (seals %llu, opens %llu, "
               "chacha20 calls %llu)",
         run, who, (unsigned long long)d.v[C_SEALS], (unsigned long long)d.v[C_OPENS],
         (unsigned long long)d.v[C_CALLS]);
}

static void run(const char *name, const char *server_propq, const char *client_propq,
                EVP_PKEY *key, X509 *cert, const uint8_t *up, const uint8_t *down)
{
    qp_run r;
    memset(&r, 0, sizeof(r));
    r.server_ctx = t_ctx;
    r.client_ctx = client_ctx;
    r.server_propq = server_propq;
    r.client_propq = client_propq;
    r.key = key;
    r.cert = cert;
    r.up = up;
    r.up_len = UP_LEN;
    r.down = down;
    r.down_len = DOWN_LEN;

    T_OK(EVP_set_default_properties(t_ctx, server_propq) &&
             EVP_set_default_properties(client_ctx, client_propq),
         "%s: default properties %s (server), %s (client)", name, server_propq, client_propq);
    counters s0 = read_counters(t_prov, "server"), c0 = read_counters(client_prov, "client");
    int ok = qp_transfer(&r);
    counters ds = delta(s0, read_counters(t_prov, "server"));
    counters dc = delta(c0, read_counters(client_prov, "client"));

    T_OK(ok, "%s: the QUIC connection failed: %s", name, r.err);
    T_OK(r.up_got_len == UP_LEN && r.up_got != NULL && memcmp(r.up_got, up, UP_LEN) == 0,
         "%s: the server received %zu bytes, want the %zu bytes sent, identical", name,
         r.up_got_len, UP_LEN);
    T_OK(r.down_got_len == DOWN_LEN && r.down_got != NULL &&
             memcmp(r.down_got, down, DOWN_LEN) == 0,
         "%s: the client received %zu bytes, want the %zu bytes sent, identical", name,
         r.down_got_len, DOWN_LEN);
    T_OK(strcmp(r.server_suite, QP_SUITE) == 0 && strcmp(r.client_suite, QP_SUITE) == 0,
         "%s: negotiated %s (server) / %s (client), want %s", name, r.server_suite,
         r.client_suite, QP_SUITE);
    print_counters(name, "server", ds);
    print_counters(name, "client", dc);
    printf("  %-8s handshake %.1f ms, transfer %.1f ms\n", name, r.handshake_s * 1e3,
           r.transfer_s * 1e3);

    if (strcmp(server_propq, PROPQ_CHAPOLY) == 0)
        check_served(name, "server", ds, DOWN_LEN, UP_LEN);
    else
        check_untouched(name, "server", ds);
    if (strcmp(client_propq, PROPQ_CHAPOLY) == 0)
        check_served(name, "client", dc, UP_LEN, DOWN_LEN);
    else
        check_untouched(name, "client", dc);
    qp_free(&r);
}

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: test_quic did not finish within the watchdog's time\n"
                              "0 passed, 1 failed\n";
    (void)!write(1, msg, sizeof(msg) - 1);
    _exit(1);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_S);
    /* Read by the provider at init, so it must be set before loading it. */
    setenv("CHAPOLY_STATS", "1", 1);
    t_setup(); /* t_ctx: the server's; exits 77 if the kernel level is absent */
    load_client_ctx();

    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    uint8_t *up = t_xmalloc(UP_LEN), *down = t_xmalloc(DOWN_LEN);
    t_rand_bytes(up, UP_LEN);
    t_rand_bytes(down, DOWN_LEN);
    if (T_OK(qp_identity(t_ctx, &key, &cert), "EC P-256 key and self-signed certificate")) {
        read_counters(t_prov, "server"); /* fails early if the counters are missing */
        run("chapoly", PROPQ_CHAPOLY, PROPQ_CHAPOLY, key, cert, up, down);
        run("control", PROPQ_DEFAULT, PROPQ_DEFAULT, key, cert, up, down);
        run("srv-only", PROPQ_CHAPOLY, PROPQ_DEFAULT, key, cert, up, down);
        run("cli-only", PROPQ_DEFAULT, PROPQ_CHAPOLY, key, cert, up, down);
    }
    ERR_print_errors_fp(stderr);
    EVP_PKEY_free(key);
    X509_free(cert);
    free(up);
    free(down);
    int rc = t_finish("test_quic");
    OSSL_PROVIDER_unload(client_prov);
    OSSL_PROVIDER_unload(client_default);
    OSSL_LIB_CTX_free(client_ctx);
    t_teardown();
    return rc;
}
