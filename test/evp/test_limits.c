/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ChaCha20-Poly1305 message limit (RFC 8439: 2^38 - 64 bytes of text)
 * reached through the test-only module's "chapoly-test-text-len" hook:
 * OPENSSL_MODULES points at build/lib-hooks for this program.
 */
#include <string.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include "test_common.h"

#define LIMIT ((((uint64_t)1) << 38) - 64)

static int set_len(EVP_CIPHER_CTX *x, uint64_t v)
{
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_uint64("chapoly-test-text-len", &v),
                        OSSL_PARAM_construct_end() };
    return EVP_CIPHER_CTX_set_params(x, p);
}

static void run(const char *name, int enc)
{
    EVP_CIPHER *c = t_cipher(name, 1);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t key[32] = { 1 }, iv[24] = { 2 }, buf[64] = { 0 };
    int ol;

    T_OK(EVP_CipherInit_ex(x, c, NULL, key, iv, enc), "%s init", name);
    T_OK(EVP_CipherUpdate(x, buf, &ol, buf, 16) && ol == 16, "%s first update", name);
    T_OK(set_len(x, LIMIT - 10), "%s hook", name);
    T_OK(EVP_CipherUpdate(x, buf, &ol, buf, 10) && ol == 10, "%s: exactly up to the limit is allowed", name);
    ERR_clear_error();
    T_OK(!EVP_CipherUpdate(x, buf, &ol, buf, 1), "%s: one byte past 2^38 - 64 accepted", name);
    T_OK(t_error_queued(), "%s: no error queued past the limit", name);
    T_OK(set_len(x, LIMIT - 10), "%s hook again", name);
    T_OK(!EVP_CipherUpdate(x, buf, &ol, buf, 64), "%s: crossing the limit in one update accepted", name);
    T_OK(t_error_queued(), "%s: no error queued crossing the limit", name);
    EVP_CIPHER_CTX_free(x);
    EVP_CIPHER_free(c);
}

int main(void)
{
    t_setup();
    for (int enc = 0; enc < 2; enc++) {
        run("ChaCha20-Poly1305", enc);
        run("XChaCha20-Poly1305", enc);
    }
    t_teardown();
    return t_finish("test_limits");
}
