/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include "test_common.h"

OSSL_LIB_CTX *t_ctx;
OSSL_PROVIDER *t_prov;
OSSL_PROVIDER *t_default;
unsigned long t_pass, t_fail;

static char kernel_name[64];

const char *t_kernel(void)
{
    return kernel_name;
}

void t_setup(void)
{
    t_ctx = OSSL_LIB_CTX_new();
    if (t_ctx == NULL) {
        fprintf(stderr, "OSSL_LIB_CTX_new failed\n");
        exit(1);
    }
    t_default = OSSL_PROVIDER_load(t_ctx, "default");
    t_prov = OSSL_PROVIDER_load(t_ctx, "chapoly");
    if (t_default == NULL || t_prov == NULL) {
        ERR_print_errors_fp(stderr);
        fprintf(stderr, "could not load providers (OPENSSL_MODULES=%s)\n",
                getenv("OPENSSL_MODULES") ? getenv("OPENSSL_MODULES") : "(unset)");
        exit(1);
    }
    char *kp = NULL;
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_utf8_ptr("chapoly-kernel", &kp, 0),
                        OSSL_PARAM_construct_end() };
    if (!OSSL_PROVIDER_get_params(t_prov, p) || kp == NULL) {
        fprintf(stderr, "provider param chapoly-kernel missing\n");
        exit(1);
    }
    snprintf(kernel_name, sizeof(kernel_name), "%s", kp);
    const char *want = getenv("CHAPOLY_KERNEL");
    if (want != NULL && *want != '\0' && strcmp(want, "best") != 0 &&
        strcmp(want, kernel_name) != 0) {
        printf("kernel level %s not available here (active: %s): skipped\n",
               want, kernel_name);
        exit(T_SKIP);
    }
    ERR_clear_error();
}

void t_teardown(void)
{
    OSSL_PROVIDER_unload(t_prov);
    OSSL_PROVIDER_unload(t_default);
    OSSL_LIB_CTX_free(t_ctx);
    t_prov = t_default = NULL;
    t_ctx = NULL;
}

EVP_CIPHER *t_cipher(const char *name, int ours)
{
    EVP_CIPHER *c = EVP_CIPHER_fetch(t_ctx, name, ours ? PROVQ_OURS : PROVQ_DEFAULT);

    if (c == NULL) {
        fprintf(stderr, "fetch %s from %s failed\n", name, ours ? "chapoly" : "default");
        ERR_print_errors_fp(stderr);
    }
    return c;
}

EVP_MAC *t_mac(const char *name, int ours)
{
    EVP_MAC *m = EVP_MAC_fetch(t_ctx, name, ours ? PROVQ_OURS : PROVQ_DEFAULT);

    if (m == NULL) {
        fprintf(stderr, "fetch MAC %s from %s failed\n", name, ours ? "chapoly" : "default");
        ERR_print_errors_fp(stderr);
    }
    return m;
}

int t_check_(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        t_pass++;
        return 1;
    }
    t_fail++;
    if (t_fail <= 50) {
        va_list ap;
        fprintf(stderr, "FAIL %s:%d: ", file, line);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    return 0;
}

int t_finish(const char *program)
{
    printf("%s [kernel %s]: %lu checks\n", program, kernel_name[0] ? kernel_name : "-",
           t_pass + t_fail);
    printf("%lu passed, %lu failed\n", t_pass, t_fail);
    return t_fail == 0 && t_pass > 0 ? 0 : 1;
}

int t_error_queued(void)
{
    int any = ERR_peek_error() != 0;

    ERR_clear_error();
    return any;
}

uint8_t *t_xmalloc(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);

    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

int t_set_tag(EVP_CIPHER_CTX *ctx, const uint8_t *tag, size_t n)
{
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG,
                                                          (void *)tag, n),
                        OSSL_PARAM_construct_end() };
    return EVP_CIPHER_CTX_set_params(ctx, p);
}

int t_get_tag(EVP_CIPHER_CTX *ctx, uint8_t *tag, size_t n)
{
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag, n),
                        OSSL_PARAM_construct_end() };
    return EVP_CIPHER_CTX_get_params(ctx, p);
}

static unsigned long aad_outl_bad;
static char aad_outl_first[200];

void t_note_aad_outl(size_t inl, int outl, const char *where)
{
    if (outl == (int)inl)
        return;
    if (aad_outl_bad++ == 0)
        snprintf(aad_outl_first, sizeof(aad_outl_first), "%s: %zu AAD bytes, outl %d", where,
                 inl, outl);
}

void t_check_aad_outl(void)
{
    T_OK(aad_outl_bad == 0, "%lu AAD updates/EVP_Cipher calls reported outl != inl; first: %s",
         aad_outl_bad, aad_outl_first);
}

static uint64_t rs[4];
static int rs_init;

static uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t t_rand64(void)
{
    if (!rs_init) {
        const char *s = getenv("CHAPOLY_TEST_SEED");
        uint64_t z = s ? strtoull(s, NULL, 0) : 1;
        for (int i = 0; i < 4; i++) { /* splitmix64 */
            z += 0x9e3779b97f4a7c15ULL;
            uint64_t x = z;
            x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
            x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
            rs[i] = x ^ (x >> 31);
        }
        rs_init = 1;
    }
    uint64_t r = rotl64(rs[1] * 5, 7) * 9, t = rs[1] << 17;
    rs[2] ^= rs[0];
    rs[3] ^= rs[1];
    rs[1] ^= rs[2];
    rs[0] ^= rs[3];
    rs[2] ^= t;
    rs[3] = rotl64(rs[3], 45);
    return r;
}

size_t t_rand_below(size_t n)
{
    return n ? (size_t)(t_rand64() % n) : 0;
}

void t_rand_bytes(void *buf, size_t n)
{
    uint8_t *p = buf;

    while (n > 0) {
        uint64_t r = t_rand64();
        size_t k = n < 8 ? n : 8;
        memcpy(p, &r, k);
        p += k;
        n -= k;
    }
}

size_t t_pick_len(size_t max, const size_t *scales, size_t nscales)
{
    size_t lim = scales[t_rand_below(nscales)], r;

    if (lim > max)
        lim = max;
    switch (t_rand_below(3)) {
    case 0:
        r = t_rand_below(lim / 64 + 1) * 64;
        break;
    case 1:
        r = t_rand_below(lim / 16 + 1) * 16;
        break;
    default:
        return t_rand_below(lim + 1);
    }
    r += t_rand_below(3);
    r = r > 0 ? r - 1 : 0;
    return r > max ? max : r;
}

void t_hexdump(const char *label, const uint8_t *p, size_t n)
{
    fprintf(stderr, "%s (%zu):", label, n);
    for (size_t i = 0; i < n && i < 96; i++)
        fprintf(stderr, "%02x", p[i]);
    fprintf(stderr, n > 96 ? "...\n" : "\n");
}

/* CMake passes the configured vector directory (test/vectors in the source tree). */
#ifndef CHAPOLY_VECTOR_DIR_DEFAULT
#error "CHAPOLY_VECTOR_DIR_DEFAULT must name the test vector directory"
#endif

const char *t_vector_path(const char *file)
{
    static char path[4096];
    const char *dir = getenv("CHAPOLY_VECTOR_DIR");

    if (dir == NULL || *dir == '\0')
        dir = CHAPOLY_VECTOR_DIR_DEFAULT;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return path;
}
