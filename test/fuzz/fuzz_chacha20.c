/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "ChaCha20" (16-byte IV = LE32 block counter || 96-bit nonce) streamed in
 * pieces chosen by the input, with the counter started near its 32-bit wrap
 * (and, on request, the first nonce word at 0xffffffff so the carry itself
 * wraps), against the default provider encrypting each stretch in one call.
 *
 * Input layout (an exhausted input reads as zeros):
 *   u8  level index
 *   key[32]
 *   u8  counter mode: bits 0-1 -> 0: 0xffffffff - u8, 1: 0xffffffff - u16,
 *       2: raw u32, 3: 0; bit 2: first nonce word 0xffffffff; bit 3 decrypt
 *       direction; bits 4-5 content pattern
 *   u32 counter material, nonce[12], fz_len total length, u64 seed
 *   then per piece: u8 control (bit 0 in place, bit 1 EVP_Cipher, bit 2
 *   duplicate the context here, bit 3 zero-length update first, bit 4
 *   re-initialise with the IV only before this piece, which restarts the
 *   stream) and fz_len size; when the program runs out, the rest goes in one
 *   piece.
 */
#include <string.h>
#include <openssl/err.h>
#include "fuzz_common.h"

#define MAX_TEXT 40000
#define MAX_RESTARTS 64

static EVP_CIPHER *ours[FZ_MAX_LEVELS];
static EVP_CIPHER *oracle;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_setup();
    for (int i = 0; i < fz_nlevels; i++) {
        ours[i] = EVP_CIPHER_fetch(fz_levels[i].ctx, "ChaCha20", "provider=chapoly");
        if (ours[i] == NULL) {
            ERR_print_errors_fp(stderr);
            exit(1);
        }
    }
    oracle = EVP_CIPHER_fetch(fz_oracle_ctx, "ChaCha20", "provider=default");
    if (oracle == NULL) {
        ERR_print_errors_fp(stderr);
        exit(1);
    }
    return 0;
}

static void oracle_xor(uint8_t *out, const uint8_t *in, size_t len, const uint8_t key[32],
                       const uint8_t iv[16])
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int outl = 0, ok;

    ok = c != NULL && EVP_EncryptInit_ex2(c, oracle, key, iv, NULL) &&
         (len == 0 || EVP_EncryptUpdate(c, out, &outl, in, (int)len)) && outl == (int)len;
    EVP_CIPHER_CTX_free(c);
    FZ_ASSERT(ok, "the default ChaCha20 oracle failed");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = { data, size };
    const fz_level *lv = fz_pick_level(fz_u8(&in));
    int lvi = (int)(lv - fz_levels);
    uint8_t key[32], iv[16], mode;
    uint32_t ctr, mat;
    size_t len, restarts[MAX_RESTARTS + 2];
    int nrestarts = 0;
    uint64_t seed;

    fz_bytes(&in, key, 32);
    mode = fz_u8(&in);
    mat = fz_u32(&in);
    switch (mode & 3) {
    case 0:
        ctr = 0xffffffffu - (mat & 0xff);
        break;
    case 1:
        ctr = 0xffffffffu - (mat & 0xffff);
        break;
    case 2:
        ctr = mat;
        break;
    default:
        ctr = 0;
        break;
    }
    for (int i = 0; i < 4; i++)
        iv[i] = (uint8_t)(ctr >> (8 * i));
    fz_bytes(&in, iv + 4, 12);
    if (mode & 4)
        memset(iv + 4, 0xff, 4);
    len = fz_len(&in, MAX_TEXT);
    seed = fz_u64(&in);
    snprintf(fz_context, sizeof(fz_context), "ChaCha20 level %s counter 0x%08x nonce0 0x%02x%02x%02x%02x len %zu mode 0x%02x",
             lv->name, ctr, iv[7], iv[6], iv[5], iv[4], len, mode);

    uint8_t *pt = fz_malloc(len), *want = fz_malloc(len);
    uint8_t *out[2] = { fz_malloc(len), fz_malloc(len) };
    EVP_CIPHER_CTX *ctx[2] = { EVP_CIPHER_CTX_new(), NULL };
    int n = 1, enc = !(mode & 8);

    fz_pattern(pt, len, mode >> 4, seed);
    FZ_ASSERT(ctx[0] != NULL && EVP_CipherInit_ex2(ctx[0], ours[lvi], key, iv, enc, NULL),
              "init failed");
    restarts[nrestarts++] = 0;
    for (size_t off = 0; off < len;) {
        uint8_t ctl = 0;
        size_t m = len - off;

        if (in.n > 0) {
            ctl = fz_u8(&in);
            m = fz_len(&in, len - off);
        }
        if ((ctl & 16) && nrestarts <= MAX_RESTARTS) {
            for (int k = 0; k < n; k++)
                FZ_ASSERT(EVP_CipherInit_ex2(ctx[k], NULL, NULL, iv, enc, NULL), "re-init failed");
            if (restarts[nrestarts - 1] == off)
                nrestarts--;
            restarts[nrestarts++] = off;
        }
        if ((ctl & 4) && n == 1) {
            ctx[1] = EVP_CIPHER_CTX_new();
            FZ_ASSERT(ctx[1] != NULL && EVP_CIPHER_CTX_copy(ctx[1], ctx[0]), "copy failed");
            memcpy(out[1], out[0], off);
            n = 2;
        }
        for (int k = 0; k < n; k++) {
            const uint8_t *src = pt + off;
            uint8_t *dst = out[k] + off;
            int outl;

            if (ctl & 8) {
                outl = -1;
                FZ_ASSERT(EVP_CipherUpdate(ctx[k], dst, &outl, src, 0) && outl == 0,
                          "zero-length update: outl %d", outl);
            }
            if (ctl & 1) {
                memmove(dst, src, m);
                src = dst;
            }
            if ((ctl & 2) && m > 0) {
                int rc = EVP_Cipher(ctx[k], dst, src, (unsigned int)m);

                FZ_ASSERT(rc == (int)m, "EVP_Cipher of %zu at %zu returned %d", m, off, rc);
            } else {
                outl = -1;
                FZ_ASSERT(EVP_CipherUpdate(ctx[k], dst, &outl, src, (int)m) && outl == (int)m,
                          "update of %zu at %zu: outl %d", m, off, outl);
            }
        }
        off += m;
    }
    for (int k = 0; k < n; k++) {
        uint8_t dummy[16];
        int outl = -1;

        FZ_ASSERT(EVP_CipherFinal_ex(ctx[k], dummy, &outl) && outl == 0, "final: outl %d", outl);
    }

    /* Each restart begins the keystream again at the IV. */
    restarts[nrestarts] = len;
    for (int i = 0; i < nrestarts; i++)
        oracle_xor(want + restarts[i], pt + restarts[i], restarts[i + 1] - restarts[i], key, iv);
    for (int k = 0; k < n; k++) {
        if (len > 0 && memcmp(out[k], want, len) != 0) {
            size_t i = 0;

            while (out[k][i] == want[i])
                i++;
            fz_hexdump("ours", out[k] + i, len - i < 64 ? len - i : 64);
            fz_hexdump("oracle", want + i, len - i < 64 ? len - i : 64);
            FZ_ASSERT(0, "output differs at byte %zu of %zu (block %zu, context %d, %d restarts)",
                      i, len, i / 64, k, nrestarts - 1);
        }
        EVP_CIPHER_CTX_free(ctx[k]);
    }
    free(pt);
    free(want);
    free(out[0]);
    free(out[1]);
    ERR_clear_error();
    fz_context[0] = '\0';
    return 0;
}
