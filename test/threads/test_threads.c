/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Many threads sealing, opening and MACing at once, each on its own
 * contexts, over one loaded provider. Every result is checked against the
 * same operation done single-threaded beforehand. Run with CHAPOLY_STATS=1
 * as well (a CTest variant), where the shared counters are written by all
 * threads: the final counts must add up exactly.
 * Built normally and, in CI, with ThreadSanitizer (CHAPOLY_TSAN=ON).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "test_common.h"

#define NTHREADS 8
#define NMSG 48
#define ROUNDS 20

typedef struct {
    uint8_t key[32], nonce[24], aad[13], pt[2048], ct[2048], tag[16], mac[16];
    size_t len;
} job;

static job jobs[NMSG];
static EVP_CIPHER *aead, *xaead;
static EVP_MAC *mac;
static unsigned long thread_fail[NTHREADS];

static int seal(EVP_CIPHER *c, const job *j, uint8_t *ct, uint8_t *tag)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int ol = 0, ok = x != NULL && EVP_EncryptInit_ex(x, c, NULL, j->key, j->nonce) &&
                     EVP_EncryptUpdate(x, NULL, &ol, j->aad, sizeof(j->aad)) &&
                     EVP_EncryptUpdate(x, ct, &ol, j->pt, (int)j->len) &&
                     EVP_EncryptFinal_ex(x, ct + ol, &ol) &&
                     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0;
    EVP_CIPHER_CTX_free(x);
    return ok;
}

static int open_ok(EVP_CIPHER *c, const job *j, const uint8_t *ct, const uint8_t *tag,
                   uint8_t *pt)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int ol = 0, ok = x != NULL && EVP_DecryptInit_ex(x, c, NULL, j->key, j->nonce) &&
                     EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, (void *)tag) > 0 &&
                     EVP_DecryptUpdate(x, NULL, &ol, j->aad, sizeof(j->aad)) &&
                     EVP_DecryptUpdate(x, pt, &ol, ct, (int)j->len) &&
                     EVP_DecryptFinal_ex(x, pt + ol, &ol);
    EVP_CIPHER_CTX_free(x);
    return ok;
}

static int do_mac(const job *j, uint8_t *out)
{
    EVP_MAC_CTX *m = EVP_MAC_CTX_new(mac);
    size_t ol = 0;
    int ok = m != NULL && EVP_MAC_init(m, j->key, 32, NULL) &&
             EVP_MAC_update(m, j->pt, j->len) && EVP_MAC_final(m, out, &ol, 16) && ol == 16;
    EVP_MAC_CTX_free(m);
    return ok;
}

static void *worker(void *arg)
{
    size_t id = (size_t)arg;
    uint8_t ct[2048], pt[2048], tag[16], m[16];

    for (int r = 0; r < ROUNDS; r++) {
        for (size_t i = 0; i < NMSG; i++) {
            const job *j = &jobs[(i + id * 7) % NMSG];
            EVP_CIPHER *c = ((i + id) & 1) ? xaead : aead;
            const uint8_t *want_ct = j->ct, *want_tag = j->tag;
            uint8_t xct[2048], xtag[16];

            if (c == xaead) { /* reference for XChaCha computed on the fly, then compared */
                if (!seal(xaead, j, xct, xtag)) {
                    thread_fail[id]++;
                    continue;
                }
                want_ct = xct;
                want_tag = xtag;
            }
            if (!seal(c, j, ct, tag) || memcmp(ct, want_ct, j->len) || memcmp(tag, want_tag, 16))
                thread_fail[id]++;
            if (!open_ok(c, j, ct, tag, pt) || memcmp(pt, j->pt, j->len))
                thread_fail[id]++;
            tag[0] ^= 1;
            if (open_ok(c, j, ct, tag, pt))
                thread_fail[id]++; /* forged tag accepted */
            if (!do_mac(j, m) || memcmp(m, j->mac, 16))
                thread_fail[id]++;
        }
    }
    return NULL;
}

static uint64_t counter(const char *name)
{
    uint64_t v = 0;
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_uint64(name, &v), OSSL_PARAM_construct_end() };

    OSSL_PROVIDER_get_params(t_prov, p);
    return v;
}

int main(void)
{
    pthread_t th[NTHREADS];
    EVP_CIPHER *ref;

    t_setup();
    aead = t_cipher("ChaCha20-Poly1305", 1);
    xaead = t_cipher("XChaCha20-Poly1305", 1);
    ref = t_cipher("ChaCha20-Poly1305", 0);
    mac = t_mac("POLY1305", 1);
    EVP_MAC *refmac = t_mac("POLY1305", 0);
    if (!aead || !xaead || !ref || !mac || !refmac)
        return 1;
    /* References from the default provider, single-threaded. */
    for (size_t i = 0; i < NMSG; i++) {
        job *j = &jobs[i];
        EVP_MAC *keep = mac;

        t_rand_bytes(j->key, 32);
        t_rand_bytes(j->nonce, 24);
        t_rand_bytes(j->aad, 13);
        j->len = t_rand_below(2049);
        t_rand_bytes(j->pt, j->len);
        T_OK(seal(ref, j, j->ct, j->tag), "reference seal %zu", i);
        mac = refmac;
        T_OK(do_mac(j, j->mac), "reference MAC %zu", i);
        mac = keep;
    }
    uint64_t msgs0 = counter("chapoly-aead-messages"), seals0 = counter("chapoly-aead-seals"),
             opens0 = counter("chapoly-aead-opens"), macs0 = counter("chapoly-poly1305-macs");
    for (size_t t = 0; t < NTHREADS; t++)
        T_OK(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
    for (size_t t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (size_t t = 0; t < NTHREADS; t++)
        T_OK(thread_fail[t] == 0, "thread %zu: %lu wrong results", t, thread_fail[t]);
    uint64_t ops = (uint64_t)NTHREADS * ROUNDS * NMSG;
    const char *stats = getenv("CHAPOLY_STATS");
    if (stats != NULL && strcmp(stats, "1") == 0) {
        /* per message: seal, open, forged open, MAC; XChaCha jobs seal twice */
        uint64_t seals = 0, opens = 0, macs = 0, want;
        for (size_t t = 0; t < NTHREADS; t++)
            for (size_t i = 0; i < NMSG; i++) {
                seals += ((i + t) & 1) ? 2 : 1;
                opens += 2;
                macs++;
            }
        seals *= ROUNDS;
        opens *= ROUNDS;
        macs *= ROUNDS;
        want = seals + opens;
        T_OK(counter("chapoly-aead-messages") - msgs0 == want,
             "aead-messages counted %llu, expected %llu",
             (unsigned long long)(counter("chapoly-aead-messages") - msgs0),
             (unsigned long long)want);
        T_OK(counter("chapoly-aead-seals") - seals0 == seals, "aead-seals counted %llu, expected %llu",
             (unsigned long long)(counter("chapoly-aead-seals") - seals0), (unsigned long long)seals);
        T_OK(counter("chapoly-aead-opens") - opens0 == opens, "aead-opens counted %llu, expected %llu",
             (unsigned long long)(counter("chapoly-aead-opens") - opens0), (unsigned long long)opens);
        T_OK(counter("chapoly-poly1305-macs") - macs0 == macs,
             "poly1305-macs counted %llu, expected %llu",
             (unsigned long long)(counter("chapoly-poly1305-macs") - macs0), (unsigned long long)macs);
    } else {
        T_OK(counter("chapoly-aead-messages") == 0 && counter("chapoly-aead-seals") == 0 &&
                 counter("chapoly-aead-opens") == 0 && counter("chapoly-poly1305-macs") == 0,
             "counters must stay 0 without stats");
    }
    printf("%d threads x %d rounds x %d messages: %llu seal/open/forgery/MAC rounds checked\n",
           NTHREADS, ROUNDS, NMSG, (unsigned long long)ops);
    EVP_CIPHER_free(aead);
    EVP_CIPHER_free(xaead);
    EVP_CIPHER_free(ref);
    EVP_MAC_free(mac);
    EVP_MAC_free(refmac);
    t_teardown();
    return t_finish("test_threads");
}
