/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What test_pipeline and test_pipeline_memory share: a batch of messages,
 * the same messages one at a time through the ordinary EVP calls, and the
 * whole pipeline (EVP_CipherPipeline*) over a batch.
 */
#ifndef CHAPOLY_TEST_PIPELINE_HELPERS_H
#define CHAPOLY_TEST_PIPELINE_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/evp.h>


#define MAXP 32
#define TAGLEN 16

typedef struct {
    const char *name;
    size_t ivlen;
    EVP_CIPHER *ours, *dflt; /* dflt NULL: the default provider lacks it */
} aead;

/* One batch of numpipes messages and the buffers the pipeline writes. */
typedef struct {
    size_t n;
    uint8_t key[32];
    uint8_t iv[MAXP][24];
    uint8_t *aad[MAXP], *pt[MAXP], *ct[MAXP], *out[MAXP];
    size_t aadl[MAXP], len[MAXP];
    uint8_t tag[MAXP][TAGLEN];
} batch;

void batch_free(batch *b);
/* n messages under one key: random IVs, AAD and texts (longs: up to 70 KiB, else 2 KiB) */
void batch_make(batch *b, size_t n, size_t ivlen, int longs);
/* One message through the ordinary EVP calls. */
int single(EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv, const uint8_t *aad,
           size_t aadl, const uint8_t *in, size_t len, uint8_t *out, uint8_t tag[TAGLEN]);
/* The pipeline's tags, read or set through OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG. */
int get_tags(EVP_CIPHER_CTX *ctx, uint8_t **tags, size_t taglen);
int set_tags(EVP_CIPHER_CTX *ctx, uint8_t **tags, size_t taglen);
/*
 * The pipeline over b: enc seals pt into out (or in place: pt copied to out
 * first) and reads the tags into tag; decryption opens ct into out with tag.
 * split: AAD and text over several updates (decryption: contiguous).
 */
int pipeline(EVP_CIPHER *c, size_t ivlen, batch *b, int enc, int inplace, int split);
/* The same on ctx; c NULL: ctx keeps the cipher of its last init (and EVP numpipes). */
int pipeline_on(EVP_CIPHER_CTX *ctx, EVP_CIPHER *c, size_t ivlen, batch *b, int enc,
                int inplace, int split);

#endif
