/* SPDX-License-Identifier: Apache-2.0 */
/*
 * deploy_seal [--two-contexts] [MODULE_DIR]: the smallest real application
 * for test_deploy.sh. Loads the default provider and chapoly with
 * OSSL_PROVIDER_load (from MODULE_DIR when given: a setuid process ignores
 * OPENSSL_MODULES, libcrypto reads it with its setuid-safe getenv), seals one
 * XChaCha20-Poly1305 message through chapoly (which serves it at every kernel
 * level and in every configuration), prints chapoly's active kernel
 * level as "chapoly-kernel: NAME", unloads both providers and exits 0.
 * --two-contexts first loads chapoly into a second library context and
 * keeps it there while the same is done in both contexts (two chapoly
 * instances alive in one process). Exits 1 on any failure.
 */
#include <stdio.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

static int seal_once(OSSL_LIB_CTX *lc, const char *dir, int print_kernel)
{
    static const unsigned char key[32] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    static const unsigned char iv[24] = { 9, 10, 11 };
    unsigned char msg[64] = "one message sealed by chapoly inside an application", ct[64], tag[16];
    OSSL_PROVIDER *def = NULL, *cp = NULL;
    EVP_CIPHER *c = NULL;
    EVP_CIPHER_CTX *ctx = NULL;
    char *kernel = NULL;
    OSSL_PARAM kp[2] = { OSSL_PARAM_construct_utf8_ptr("chapoly-kernel", &kernel, 0),
                         OSSL_PARAM_construct_end() };
    int n = 0, m = 0, ok = 0;

    if (dir != NULL && !OSSL_PROVIDER_set_default_search_path(lc, dir))
        goto end;
    if ((def = OSSL_PROVIDER_load(lc, "default")) == NULL ||
        (cp = OSSL_PROVIDER_load(lc, "chapoly")) == NULL)
        goto end;
    if ((c = EVP_CIPHER_fetch(lc, "XChaCha20-Poly1305", "provider=chapoly")) == NULL ||
        EVP_CIPHER_get0_provider(c) != cp || (ctx = EVP_CIPHER_CTX_new()) == NULL)
        goto end;
    if (!EVP_EncryptInit_ex2(ctx, c, key, iv, NULL) ||
        !EVP_EncryptUpdate(ctx, ct, &n, msg, (int)sizeof(msg)) ||
        !EVP_EncryptFinal_ex(ctx, ct + n, &m) ||
        !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, (int)sizeof(tag), tag) ||
        n + m != (int)sizeof(msg))
        goto end;
    if (!OSSL_PROVIDER_get_params(cp, kp) || kernel == NULL)
        goto end;
    if (print_kernel)
        printf("chapoly-kernel: %s\n", kernel);
    ok = 1;
end:
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_free(c);
    /* unload: chapoly's teardown runs here, before exit */
    if (cp != NULL && !OSSL_PROVIDER_unload(cp))
        ok = 0;
    if (def != NULL && !OSSL_PROVIDER_unload(def))
        ok = 0;
    return ok;
}

int main(int argc, char **argv)
{
    int two = 0, i = 1, ok = 1;
    const char *dir = NULL;

    if (i < argc && strcmp(argv[i], "--two-contexts") == 0) {
        two = 1;
        i++;
    }
    if (i < argc)
        dir = argv[i++];
    if (i != argc) {
        fprintf(stderr, "usage: deploy_seal [--two-contexts] [MODULE_DIR]\n");
        return 2;
    }
    if (two) {
        /* a second library context whose chapoly stays loaded meanwhile */
        OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
        OSSL_PROVIDER *keep = NULL;

        ok = lc != NULL && (dir == NULL || OSSL_PROVIDER_set_default_search_path(lc, dir)) &&
             (keep = OSSL_PROVIDER_load(lc, "chapoly")) != NULL && seal_once(lc, dir, 0) &&
             seal_once(NULL, dir, 1);
        if (keep != NULL && !OSSL_PROVIDER_unload(keep))
            ok = 0;
        OSSL_LIB_CTX_free(lc);
    } else {
        ok = seal_once(NULL, dir, 1);
    }
    if (!ok) {
        fprintf(stderr, "deploy_seal: failed\n");
        ERR_print_errors_fp(stderr);
        return 1;
    }
    return 0;
}
