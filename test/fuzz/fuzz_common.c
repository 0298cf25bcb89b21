/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include "fuzz_common.h"

#ifndef CHAPOLY_MODULE_DIR
#define CHAPOLY_MODULE_DIR ""
#endif

fz_level fz_levels[FZ_MAX_LEVELS];
int fz_nlevels;
OSSL_LIB_CTX *fz_oracle_ctx;
char fz_context[512];

uint8_t fz_u8(fz_in *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

uint16_t fz_u16(fz_in *in)
{
    uint16_t v = fz_u8(in);

    return (uint16_t)(v | (fz_u8(in) << 8));
}

uint32_t fz_u32(fz_in *in)
{
    uint32_t v = fz_u16(in);

    return v | ((uint32_t)fz_u16(in) << 16);
}

uint64_t fz_u64(fz_in *in)
{
    uint64_t v = fz_u32(in);

    return v | ((uint64_t)fz_u32(in) << 32);
}

void fz_bytes(fz_in *in, void *dst, size_t n)
{
    size_t k = n < in->n ? n : in->n;

    memcpy(dst, in->p, k);
    memset((uint8_t *)dst + k, 0, n - k);
    in->p += k;
    in->n -= k;
}

size_t fz_len(fz_in *in, size_t max)
{
    uint8_t sel = fz_u8(in);
    size_t r;

    switch (sel >> 6) {
    case 0: /* small: most pieces in real use are short */
        r = sel & 0x3f;
        break;
    case 1: /* k*16 - 1 .. k*16 + 1 */
        r = (size_t)fz_u8(in) * 16 + (sel & 3);
        r = r > 0 ? r - 1 : 0;
        break;
    case 2: /* k*64 - 1 .. k*64 + 1, up to 16 KiB: every SIMD batch width */
        r = (size_t)fz_u8(in) * 64 + (sel & 3);
        r = r > 0 ? r - 1 : 0;
        break;
    default:
        r = fz_u16(in);
        break;
    }
    return r > max ? max : r;
}

void fz_fill(uint8_t *dst, size_t n, uint64_t seed)
{
    uint64_t z = seed;

    while (n > 0) {
        uint64_t x;
        size_t k = n < 8 ? n : 8;

        z += 0x9e3779b97f4a7c15ULL;
        x = z;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        x ^= x >> 31;
        memcpy(dst, &x, k);
        dst += k;
        n -= k;
    }
}

void fz_pattern(uint8_t *dst, size_t n, unsigned pattern, uint64_t seed)
{
    switch (pattern & 3) {
    case 0:
        fz_fill(dst, n, seed);
        break;
    case 1:
        memset(dst, 0xff, n);
        break;
    case 2:
        memset(dst, 0, n);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            dst[i] = ((i >> 4) & 1) ? 0x00 : 0xff;
        break;
    }
}

void *fz_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        abort();
    }
    return p;
}

void fz_hexdump(const char *label, const uint8_t *p, size_t n)
{
    fprintf(stderr, "%s (%zu):", label, n);
    for (size_t i = 0; i < n && i < 128; i++)
        fprintf(stderr, "%02x", p[i]);
    fprintf(stderr, n > 128 ? "...\n" : "\n");
}

void fz_report_context(void)
{
    if (fz_context[0] != '\0')
        fprintf(stderr, "case: %s\n", fz_context);
    ERR_print_errors_fp(stderr);
}

int fz_error_queued(void)
{
    int any = ERR_peek_error() != 0;

    ERR_clear_error();
    return any;
}

static const char *active_level(OSSL_PROVIDER *prov)
{
    static char name[64];
    char *kp = NULL;
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_utf8_ptr("chapoly-kernel", &kp, 0),
                        OSSL_PARAM_construct_end() };

    if (!OSSL_PROVIDER_get_params(prov, p) || kp == NULL)
        return "";
    snprintf(name, sizeof(name), "%s", kp);
    return name;
}

void fz_setup(void)
{
#define LEVEL_NAME_(name, build) name,
    static const char *const want[] = { CHAPOLY_LEVEL_LIST(LEVEL_NAME_) }; /* kernels.h */
    const char *only = getenv("CHAPOLY_FUZZ_LEVEL"); /* restrict to one level */

    if (fz_oracle_ctx != NULL)
        return;
    if (getenv("OPENSSL_MODULES") == NULL && CHAPOLY_MODULE_DIR[0] != '\0')
        setenv("OPENSSL_MODULES", CHAPOLY_MODULE_DIR, 1);
    if (getenv("OPENSSL_CONF") == NULL)
        setenv("OPENSSL_CONF", "/dev/null", 1);

    fz_oracle_ctx = OSSL_LIB_CTX_new();
    if (fz_oracle_ctx == NULL || OSSL_PROVIDER_load(fz_oracle_ctx, "default") == NULL) {
        ERR_print_errors_fp(stderr);
        fprintf(stderr, "cannot load the default provider\n");
        exit(1);
    }
    for (int i = 0; i < FZ_MAX_LEVELS; i++) {
        OSSL_LIB_CTX *ctx;
        OSSL_PROVIDER *prov;

        if (only != NULL && *only != '\0' && strcmp(only, want[i]) != 0)
            continue;
        setenv("CHAPOLY_KERNEL", want[i], 1);
        ctx = OSSL_LIB_CTX_new();
        prov = ctx ? OSSL_PROVIDER_load(ctx, "chapoly") : NULL;
        if (prov == NULL) {
            ERR_print_errors_fp(stderr);
            fprintf(stderr, "cannot load chapoly (OPENSSL_MODULES=%s)\n",
                    getenv("OPENSSL_MODULES") ? getenv("OPENSSL_MODULES") : "(unset)");
            exit(1);
        }
        /* A level the CPU lacks falls back to another one: keep each level once. */
        if (strcmp(active_level(prov), want[i]) != 0) {
            OSSL_PROVIDER_unload(prov);
            OSSL_LIB_CTX_free(ctx);
            continue;
        }
        fz_levels[fz_nlevels].name = want[i];
        fz_levels[fz_nlevels].ctx = ctx;
        fz_levels[fz_nlevels].prov = prov;
        fz_nlevels++;
    }
    unsetenv("CHAPOLY_KERNEL");
    if (fz_nlevels == 0) {
        fprintf(stderr, "no chapoly kernel level could be loaded\n");
        exit(1);
    }
    fprintf(stderr, "chapoly fuzz: %d kernel level(s):", fz_nlevels);
    for (int i = 0; i < fz_nlevels; i++)
        fprintf(stderr, " %s", fz_levels[i].name);
    fputc('\n', stderr);
    ERR_clear_error();
}

const fz_level *fz_pick_level(uint8_t b)
{
    return &fz_levels[b % fz_nlevels];
}
