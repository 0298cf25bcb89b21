/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Clean upper vector state after every EVP operation through chapoly: after
 * seal, open, ChaCha20 and POLY1305 of many sizes, XINUSE (xgetbv ECX=1)
 * must show the upper halves of ymm0-15 (bit 2) and zmm0-15 (bit 6) unused.
 * Dirty state there makes the next legacy-SSE instruction in the caller pay
 * a transition penalty. (Bit 7, zmm16-31, is left to glibc's EVEX memcpy and
 * costs SSE code nothing.) The default provider is measured too, for the
 * record, but not judged.
 */
#include <string.h>
#include <openssl/evp.h>
#include "test_common.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

#define DIRTY_BITS ((1u << 2) | (1u << 6))

static int xinuse_supported(void)
{
    unsigned a, b, c, d;

    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX))
        return 0;
    __cpuid_count(0xd, 1, a, b, c, d);
    return (a >> 2) & 1;
}

static unsigned xinuse(void)
{
    unsigned lo, hi;

    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
    return lo;
}

static void clean(void)
{
    __asm__ volatile("vzeroupper" ::: "memory");
}

static void dirty(void)
{
    __asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0" ::: "xmm0");
}

static const size_t sizes[] = { 0, 1, 16, 63, 64, 100, 192, 256, 300, 512, 576, 1024,
                                1350, 1500, 4096, 16384, 70000 };

static unsigned long dirty_after_default;

static void aead_once(EVP_CIPHER *c, size_t n, int enc, uint8_t *buf, uint8_t *tag)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t key[32] = { 7 }, iv[24] = { 9 }, aad[13] = { 1 };
    int ol;

    EVP_CipherInit_ex(x, c, NULL, key, iv, enc);
    if (!enc)
        EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_SET_TAG, 16, tag);
    EVP_CipherUpdate(x, NULL, &ol, aad, sizeof(aad));
    EVP_CipherUpdate(x, buf, &ol, buf, (int)n);
    EVP_CipherFinal_ex(x, buf, &ol);
    if (enc)
        EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_GET_TAG, 16, tag);
    EVP_CIPHER_CTX_free(x);
}

static void run_aead(const char *name, int ours)
{
    static uint8_t buf[70000];
    EVP_CIPHER *c = t_cipher(name, ours);
    uint8_t tag[16] = { 0 };

    if (c == NULL) {
        T_OK(!ours, "fetch %s", name);
        return;
    }
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (int enc = 1; enc >= 0; enc--) {
            clean();
            aead_once(c, sizes[i], enc, buf, tag);
            unsigned x = xinuse() & DIRTY_BITS;
            if (ours)
                T_OK(x == 0, "%s %s %zu bytes left XINUSE 0x%x", name, enc ? "seal" : "open",
                     sizes[i], x);
            else if (x)
                dirty_after_default++;
        }
    }
    EVP_CIPHER_free(c);
}

static void run_chacha_mac(void)
{
    static uint8_t buf[70000];
    EVP_CIPHER *c = t_cipher("ChaCha20", 1);
    EVP_MAC *m = t_mac("POLY1305", 1);
    uint8_t key[32] = { 3 }, iv[16] = { 0 }, tag[16];

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
        EVP_MAC_CTX *mc = EVP_MAC_CTX_new(m);
        size_t tl;
        int ol;

        clean();
        EVP_EncryptInit_ex(x, c, NULL, key, iv);
        EVP_EncryptUpdate(x, buf, &ol, buf, (int)sizes[i]);
        T_OK((xinuse() & DIRTY_BITS) == 0, "ChaCha20 %zu bytes left XINUSE 0x%x", sizes[i],
             xinuse() & DIRTY_BITS);
        clean();
        EVP_MAC_init(mc, key, 32, NULL);
        EVP_MAC_update(mc, buf, sizes[i]);
        EVP_MAC_final(mc, tag, &tl, sizeof(tag));
        T_OK((xinuse() & DIRTY_BITS) == 0, "POLY1305 %zu bytes left XINUSE 0x%x", sizes[i],
             xinuse() & DIRTY_BITS);
        EVP_MAC_CTX_free(mc);
        EVP_CIPHER_CTX_free(x);
    }
    EVP_CIPHER_free(c);
    EVP_MAC_free(m);
}

int main(void)
{
    t_setup();
    if (!xinuse_supported()) {
        printf("XGETBV with ECX=1 not available: nothing to check here\n");
        t_teardown();
        return T_SKIP;
    }
    /* The detector must see dirt and see it cleared. */
    clean();
    T_OK((xinuse() & (1u << 2)) == 0, "self-check: vzeroupper did not clear XINUSE bit 2");
    dirty();
    T_OK((xinuse() & (1u << 2)) != 0, "self-check: dirty ymm0 not seen in XINUSE");
    clean();
    run_aead("ChaCha20-Poly1305", 1);
    run_aead("XChaCha20-Poly1305", 1);
    run_chacha_mac();
    run_aead("ChaCha20-Poly1305", 0);
    printf("default provider left the upper state dirty after %lu of %zu operations\n",
           dirty_after_default, 2 * sizeof(sizes) / sizeof(sizes[0]));
    t_teardown();
    return t_finish("test_upper_state");
}

#else
int main(void)
{
    printf("not x86-64: no upper vector state to check\n");
    return T_SKIP;
}
#endif
