/* SPDX-License-Identifier: Apache-2.0 */
/* The batch, single-message and pipeline helpers of pipeline_helpers.h. */
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "pipeline_helpers.h"
#include "test_common.h"

void batch_free(batch *b)
{
    for (size_t i = 0; i < MAXP; i++) {
        free(b->aad[i]);
        free(b->pt[i]);
        free(b->ct[i]);
        free(b->out[i]);
    }
    memset(b, 0, sizeof(*b));
}

static size_t pick_text_len(void)
{
    size_t r = t_rand_below(40);

    if (r == 0)
        return 16384;
    if (r == 1)
        return 70000;
    if (r < 6)
        return t_rand_below(17); /* 0..16 */
    return t_rand_below(2049);
}

void batch_make(batch *b, size_t n, size_t ivlen, int longs)
{
    memset(b, 0, sizeof(*b));
    b->n = n;
    t_rand_bytes(b->key, sizeof(b->key));
    for (size_t i = 0; i < n; i++) {
        t_rand_bytes(b->iv[i], ivlen);
        b->len[i] = pick_text_len();
        if (!longs && b->len[i] > 2048)
            b->len[i] = t_rand_below(2049);
        b->aadl[i] = t_rand_below(8) == 0 ? 0 : t_rand_below(t_rand_below(4) == 0 ? 400 : 40);
        b->aad[i] = t_xmalloc(b->aadl[i]);
        b->pt[i] = t_xmalloc(b->len[i]);
        b->ct[i] = t_xmalloc(b->len[i]);
        b->out[i] = t_xmalloc(b->len[i]);
        t_rand_bytes(b->aad[i], b->aadl[i]);
        t_rand_bytes(b->pt[i], b->len[i]);
    }
}

int single(EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
           const uint8_t *aad, size_t aadl, const uint8_t *in, size_t len, uint8_t *out,
           uint8_t tag[TAGLEN])
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok, outl = 0;

    ok = ctx != NULL && EVP_CipherInit_ex2(ctx, c, key, iv, enc, NULL);
    if (ok && aadl > 0)
        ok = EVP_CipherUpdate(ctx, NULL, &outl, aad, (int)aadl);
    if (ok && len > 0)
        ok = EVP_CipherUpdate(ctx, out, &outl, in, (int)len);
    if (ok && !enc)
        ok = t_set_tag(ctx, tag, TAGLEN);
    if (ok)
        ok = EVP_CipherFinal_ex(ctx, out + len, &outl);
    if (ok && enc)
        ok = t_get_tag(ctx, tag, TAGLEN);
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

int get_tags(EVP_CIPHER_CTX *ctx, uint8_t **tags, size_t taglen)
{
    void *p = tags;
    OSSL_PARAM params[2] = { OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, &p,
                                                  taglen),
                             OSSL_PARAM_END };

    return EVP_CIPHER_CTX_get_params(ctx, params);
}

int set_tags(EVP_CIPHER_CTX *ctx, uint8_t **tags, size_t taglen)
{
    void *p = tags;
    OSSL_PARAM params[2] = { OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, &p,
                                                  taglen),
                             OSSL_PARAM_END };

    return EVP_CIPHER_CTX_set_params(ctx, params);
}


int pipeline(EVP_CIPHER *c, size_t ivlen, batch *b, int enc, int inplace, int split)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok = ctx != NULL && pipeline_on(ctx, c, ivlen, b, enc, inplace, split);

    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

int pipeline_on(EVP_CIPHER_CTX *ctx, EVP_CIPHER *c, size_t ivlen, batch *b, int enc,
                int inplace, int split)
{
    const unsigned char *ivs[MAXP], *in[MAXP];
    unsigned char *out[MAXP], *tags[MAXP];
    size_t inl[MAXP], outl[MAXP], outsize[MAXP], done[MAXP] = { 0 };
    int ok;

    for (size_t i = 0; i < b->n; i++) {
        ivs[i] = b->iv[i];
        tags[i] = b->tag[i];
        if (inplace)
            memcpy(b->out[i], enc ? b->pt[i] : b->ct[i], b->len[i]);
    }
    ok = enc ? EVP_CipherPipelineEncryptInit(ctx, c, b->key, 32, b->n, ivs, ivlen)
             : EVP_CipherPipelineDecryptInit(ctx, c, b->key, 32, b->n, ivs, ivlen);
    /* AAD: one update, or first a prefix then the rest */
    for (int round = 0; ok && round < (split ? 2 : 1); round++) {
        for (size_t i = 0; i < b->n; i++) {
            size_t cut = split ? b->aadl[i] / 3 : b->aadl[i];

            in[i] = b->aad[i] + (round ? cut : 0);
            inl[i] = round ? b->aadl[i] - cut : cut;
        }
        ok = EVP_CipherPipelineUpdate(ctx, NULL, outl, NULL, in, inl);
        for (size_t i = 0; ok && i < b->n; i++)
            T_OK(outl[i] == inl[i], "AAD outl %zu for %zu", outl[i], inl[i]);
    }
    if (ok && !enc)
        ok = set_tags(ctx, tags, TAGLEN);
    /* text: one update, or three of uneven sizes */
    for (int round = 0; ok && round < (split ? 3 : 1); round++) {
        for (size_t i = 0; i < b->n; i++) {
            size_t take = b->len[i] - done[i];

            if (split && round == 0)
                take = take / 5 + (take > 70 ? 3 : 0);
            else if (split && round == 1)
                take = take / 2;
            in[i] = (inplace ? b->out[i] : enc ? b->pt[i] : b->ct[i]) + done[i];
            out[i] = b->out[i] + done[i];
            inl[i] = take;
            outsize[i] = take;
        }
        ok = EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl);
        for (size_t i = 0; ok && i < b->n; i++) {
            T_OK(outl[i] == inl[i], "text outl %zu for %zu", outl[i], inl[i]);
            done[i] += inl[i];
        }
    }
    if (ok) {
        for (size_t i = 0; i < b->n; i++) {
            out[i] = b->out[i] + b->len[i];
            outsize[i] = 0;
        }
        ok = EVP_CipherPipelineFinal(ctx, out, outl, outsize);
        for (size_t i = 0; ok && i < b->n; i++)
            T_OK(outl[i] == 0, "final outl %zu", outl[i]);
    }
    if (ok && enc)
        ok = get_tags(ctx, tags, TAGLEN);
    return ok;
}
