/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every batch-shape boundary of the AEAD data path, against the default
 * provider: text lengths 64*b - 1, 64*b, 64*b + 1 for b = 1..33 (row sets,
 * 16-lane batches, the one-call limit of 1984 bytes and just past it), AAD
 * lengths around the 16-byte pad and the 64-byte AAD buffer, sealed and
 * opened whole, as two updates split at every interesting point (block and
 * one-call boundaries, and a partial block whose spare keystream must be
 * recomputed), in place and out of place.
 *
 * Then the kilobyte shapes of the stitched ChaCha20 + Poly1305 kernel:
 * lengths around whole kilobytes after the first update's 15..30 blocks,
 * and updates that leave the keystream or the MAC off a block boundary
 * (keystream computed ahead for long AAD, partial blocks) before whole
 * kilobytes follow.
 */
#include <string.h>
#include <openssl/evp.h>
#include "test_common.h"

static EVP_CIPHER *ours, *ref;
static unsigned long cases;

static int run(EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
               const uint8_t *aad, size_t aadlen, const uint8_t *in, size_t len,
               size_t split, int inplace, uint8_t *out, uint8_t tag[16])
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int ok, ol = 0, tot = 0;
    const uint8_t *src = in;

    if (inplace) {
        memcpy(out, in, len);
        src = out;
    }
    ok = x != NULL && EVP_CipherInit_ex(x, c, NULL, key, iv, enc);
    if (ok && !enc)
        ok = t_set_tag(x, tag, 16);
    if (ok && aadlen)
        ok = EVP_CipherUpdate(x, NULL, &ol, aad, (int)aadlen);
    if (ok && split > 0)
        ok = EVP_CipherUpdate(x, out, &ol, src, (int)split) && ol == (int)split;
    tot = (int)split;
    if (ok && len > split)
        ok = EVP_CipherUpdate(x, out + tot, &ol, src + tot, (int)(len - split)) &&
             ol == (int)(len - split);
    if (ok)
        ok = EVP_CipherFinal_ex(x, out + len, &ol);
    if (ok && enc)
        ok = t_get_tag(x, tag, 16);
    EVP_CIPHER_CTX_free(x);
    return ok;
}

/* One length, AAD and split: seal and open, in place and not, against the default. */
static void check(const uint8_t *pt, size_t len, const uint8_t *aad, size_t aadlen, size_t split,
                  uint8_t *ct_ref, uint8_t *ct, uint8_t *back)
{
    uint8_t key[32], iv[12], tag_ref[16], tag[16];

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    if (!T_OK(run(ref, 1, key, iv, aad, aadlen, pt, len, 0, 0, ct_ref, tag_ref),
              "default seal %zu/%zu", len, aadlen))
        return;
    for (int inplace = 0; inplace < 2; inplace++) {
        cases++;
        memset(ct, 0, len + 16);
        T_OK(run(ours, 1, key, iv, aad, aadlen, pt, len, split, inplace, ct, tag),
             "seal len %zu aad %zu split %zu inplace %d", len, aadlen, split, inplace);
        T_OK(memcmp(ct, ct_ref, len) == 0 && memcmp(tag, tag_ref, 16) == 0,
             "seal differs from default: len %zu aad %zu split %zu inplace %d", len, aadlen,
             split, inplace);
        memcpy(tag, tag_ref, 16);
        T_OK(run(ours, 0, key, iv, aad, aadlen, ct_ref, len, split, inplace, back, tag) &&
                 memcmp(back, pt, len) == 0,
             "open len %zu aad %zu split %zu inplace %d", len, aadlen, split, inplace);
    }
}

static void kilobyte_shapes(const uint8_t *aad)
{
    enum { MAXLEN = 16384 + 1024 + 64 };
    static const size_t aads[] = { 0, 13, 65, 100 };
    static const long offs[] = { -65, -64, -1, 0, 1, 63, 64, 65, 960, 961, 1023 };
    uint8_t *pt = t_xmalloc(MAXLEN), *ct_ref = t_xmalloc(MAXLEN + 16),
            *ct = t_xmalloc(MAXLEN + 16), *back = t_xmalloc(MAXLEN + 16);
    size_t lens[128], nlens = 0;

    t_rand_bytes(pt, MAXLEN);
    for (size_t kib = 2; kib <= 7; kib++)
        for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
            lens[nlens++] = (size_t)((long)(1024 * kib) + offs[o]);
    lens[nlens++] = 16384;
    lens[nlens++] = 16384 + 1;
    lens[nlens++] = 16384 + 960;
    for (size_t l = 0; l < nlens; l++) {
        size_t len = lens[l];
        size_t splits[] = { 0, 1, 13, 64, 100, 960, 1024, 1984, 2048, 2049, len - 1024, len - 1 };

        for (size_t a = 0; a < sizeof(aads) / sizeof(aads[0]); a++)
            for (size_t s = 0; s < sizeof(splits) / sizeof(splits[0]); s++)
                if (splits[s] <= len)
                    check(pt, len, aad, aads[a], splits[s], ct_ref, ct, back);
    }
    free(pt);
    free(ct_ref);
    free(ct);
    free(back);
}

int main(void)
{
    static const size_t aads[] = { 0, 1, 13, 15, 16, 17, 48, 63, 64, 65, 100 };
    static uint8_t pt[64 * 34 + 2], ct_ref[sizeof(pt) + 16], ct[sizeof(pt) + 16],
        back[sizeof(pt) + 16];
    uint8_t key[32], iv[12], aad[100], tag_ref[16], tag[16];

    t_setup();
    ours = t_cipher("ChaCha20-Poly1305", 1);
    ref = t_cipher("ChaCha20-Poly1305", 0);
    if (ours == NULL || ref == NULL)
        return 1;
    t_rand_bytes(pt, sizeof(pt));
    t_rand_bytes(aad, sizeof(aad));
    for (size_t b = 1; b <= 33; b++) {
        for (int d = -1; d <= 1; d++) {
            size_t len = 64 * b + d;
            size_t splits[] = { 0, 1, 63, 64, 65, len / 2, 1984, 1985, len - 1 };

            for (size_t a = 0; a < sizeof(aads) / sizeof(aads[0]); a++) {
                size_t aadlen = aads[a];

                t_rand_bytes(key, sizeof(key));
                t_rand_bytes(iv, sizeof(iv));
                if (!T_OK(run(ref, 1, key, iv, aad, aadlen, pt, len, 0, 0, ct_ref, tag_ref),
                          "default seal %zu/%zu", len, aadlen))
                    continue;
                for (size_t s = 0; s < sizeof(splits) / sizeof(splits[0]); s++) {
                    size_t split = splits[s];

                    if (split > len)
                        continue;
                    for (int inplace = 0; inplace < 2; inplace++) {
                        cases++;
                        memset(ct, 0, sizeof(ct));
                        T_OK(run(ours, 1, key, iv, aad, aadlen, pt, len, split, inplace, ct, tag),
                             "seal len %zu aad %zu split %zu inplace %d", len, aadlen, split,
                             inplace);
                        T_OK(memcmp(ct, ct_ref, len) == 0 && memcmp(tag, tag_ref, 16) == 0,
                             "seal differs from default: len %zu aad %zu split %zu inplace %d",
                             len, aadlen, split, inplace);
                        memcpy(tag, tag_ref, 16);
                        T_OK(run(ours, 0, key, iv, aad, aadlen, ct_ref, len, split, inplace, back,
                                 tag) && memcmp(back, pt, len) == 0,
                             "open len %zu aad %zu split %zu inplace %d", len, aadlen, split,
                             inplace);
                    }
                }
            }
        }
    }
    kilobyte_shapes(aad);
    printf("%lu seal/open shape cases against the default provider\n", cases);
    EVP_CIPHER_free(ours);
    EVP_CIPHER_free(ref);
    t_teardown();
    return t_finish("test_evp_shapes");
}
