/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arm64_insn_driver PROVIDER OP LEN REPS: the operation whose instructions
 * scripts/arm64-insn-count.sh counts under qemu. Loads PROVIDER ("default"
 * or "chapoly", from OPENSSL_MODULES) into its own library context, sets up
 * OP once (fetch, context, key, one warm-up operation), then runs REPS more
 * operations of LEN bytes:
 *   chacha20   EVP ChaCha20: init with a fresh IV, one update of LEN bytes
 *   poly1305   EVP_MAC POLY1305: init with a key, one update, final
 *   aead       EVP ChaCha20-Poly1305 seal: init with a fresh nonce, 13 bytes
 *              of AAD, one update of LEN bytes, final, get the tag (a TLS
 *              record's calls)
 * The counting script subtracts a run with fewer REPS or a shorter LEN, so
 * setup, the warm-up and process start cancel out. Prints a checksum of the
 * output so the work cannot be skipped. Not a test: never built by CMake.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

static unsigned char buf[65536 + 64];

static void die(const char *what)
{
    fprintf(stderr, "arm64_insn_driver: %s failed\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: arm64_insn_driver default|chapoly chacha20|poly1305|aead LEN REPS\n");
        return 2;
    }
    const char *prov = argv[1], *op = argv[2];
    size_t len = strtoul(argv[3], NULL, 10);
    long reps = strtol(argv[4], NULL, 10);
    unsigned char key[32], iv[16] = { 0 }, tag[16], aad[13] = { 0x17, 3, 3 };
    char props[64];
    unsigned sum = 0;
    int ol;

    if (len > 65536)
        die("LEN <= 65536");
    for (int i = 0; i < 32; i++)
        key[i] = (unsigned char)(i * 7 + 1);
    OSSL_LIB_CTX *lib = OSSL_LIB_CTX_new();
    if (lib == NULL || OSSL_PROVIDER_load(lib, prov) == NULL)
        die("loading the provider");
    snprintf(props, sizeof(props), "provider=%s", prov);

    if (strcmp(op, "poly1305") == 0) {
        EVP_MAC *mac = EVP_MAC_fetch(lib, "POLY1305", props);
        EVP_MAC_CTX *m = mac ? EVP_MAC_CTX_new(mac) : NULL;
        size_t tl;

        if (m == NULL)
            die("fetching POLY1305");
        for (long r = -1; r < reps; r++) { /* r == -1: the warm-up */
            key[0] = (unsigned char)r;
            if (!EVP_MAC_init(m, key, 32, NULL) || !EVP_MAC_update(m, buf, len) ||
                !EVP_MAC_final(m, tag, &tl, sizeof(tag)))
                die("POLY1305");
            sum += tag[0];
        }
    } else {
        int aead = strcmp(op, "aead") == 0;
        EVP_CIPHER *c = EVP_CIPHER_fetch(lib, aead ? "ChaCha20-Poly1305" : "ChaCha20", props);
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();

        if (c == NULL || x == NULL || (!aead && strcmp(op, "chacha20") != 0))
            die("fetching the cipher");
        if (!EVP_EncryptInit_ex(x, c, NULL, key, iv))
            die("init");
        for (long r = -1; r < reps; r++) {
            iv[aead ? 11 : 15] = (unsigned char)r;
            if (!EVP_EncryptInit_ex(x, NULL, NULL, NULL, iv))
                die("re-init");
            if (aead && !EVP_EncryptUpdate(x, NULL, &ol, aad, sizeof(aad)))
                die("AAD");
            if (!EVP_EncryptUpdate(x, buf, &ol, buf, (int)len))
                die("update");
            if (aead && (!EVP_EncryptFinal_ex(x, buf + len, &ol) ||
                         !EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag)))
                die("final");
            sum += buf[0] + tag[0];
        }
    }
    printf("%s %s %zu x %ld: checksum %u\n", prov, op, len, reps, sum);
    return 0;
}
