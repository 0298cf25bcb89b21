/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EVP_CipherPipeline* (OpenSSL 3.5) for ChaCha20-Poly1305 and
 * XChaCha20-Poly1305: one key and numpipes (1..32) IVs at init; each
 * update covers every pipe (out == NULL: AAD, else text); final computes
 * (encryption) or checks (decryption) every pipe's tag. Tags travel in the
 * "pipeline-tag" parameter, an octet pointer to the array of numpipes tag
 * buffers whose size is one tag's length (1..16): read on encryption after
 * final, set on decryption before final.
 *
 * State machine: OFF --init--> START --update(AAD)--> AAD --update(text)-->
 * TEXT --final--> DONE; AAD after text, anything after final, and pipeline
 * calls outside pipeline mode are refused. numpipes must equal the init's
 * at every call (OpenSSL 3.5.9 passes 0 after re-initialising a used
 * EVP_CIPHER_CTX without EVP_CIPHER_CTX_reset). Every array is checked
 * before any pipe is processed, so a refused call changes nothing.
 *
 * Failure on decryption: a final that fails for any reason (a tag that does
 * not match in any pipe, tags never set) wipes the plaintext of EVERY pipe
 * (not only of the pipes that failed) and ends the pipeline. To know what to
 * wipe, each pipe's decrypted text must be one contiguous buffer: an update
 * continues where that pipe's previous one ended. Buffers of different
 * pipes must not overlap.
 */
#include <stdint.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include "aead_state.h"
#include "aead_batch.h"

_Static_assert(CHAPOLY_MAX_PIPES == CHAPOLY_BATCH_MAX, "one batch per pipeline");

enum pipe_state { PIPE_OFF, PIPE_START, PIPE_AAD, PIPE_TEXT, PIPE_DONE };

struct aead_pipeline {
    enum pipe_state state;
    int enc;
    size_t numpipes;
    int tags_set;   /* decryption: expected tags present */
    int tags_ready; /* encryption: tags computed by final */
    size_t taglen;  /* of the expected tags */
    uint8_t tags[CHAPOLY_MAX_PIPES][POLY1305_TAG_BYTES];
    uint64_t text_len[CHAPOLY_MAX_PIPES];
    /* decryption: the plaintext written so far per pipe, wiped if final fails */
    unsigned char *out_start[CHAPOLY_MAX_PIPES];
    chapoly_batch *batch; /* 64-byte aligned, for CHAPOLY_MAX_PIPES messages */
};

static void pipeline_wipe(aead_pipeline *p)
{
    if (p->batch != NULL)
        chapoly_batch_clear(p->batch);
    /* Expected tags not yet used (a final wipes them); computed tags are public output. */
    if (p->tags_set)
        OPENSSL_cleanse(p->tags, p->numpipes * sizeof(p->tags[0]));
    p->state = PIPE_OFF;
    p->tags_set = p->tags_ready = 0;
}

/* Decryption failed: no pipe keeps plaintext that was never authenticated. */
static void wipe_outputs(aead_pipeline *p)
{
    for (size_t i = 0; i < p->numpipes; i++)
        if (p->text_len[i] > 0)
            OPENSSL_cleanse(p->out_start[i], (size_t)p->text_len[i]);
}

/* A decryption that cannot complete: no plaintext survives; the pipeline is done. */
static void fail_decrypt(aead_pipeline *p)
{
    wipe_outputs(p);
    pipeline_wipe(p);
    p->state = PIPE_DONE;
}

int chapoly_pipeline_active(const aead_pipeline *p)
{
    return p != NULL && p->state != PIPE_OFF;
}

void chapoly_pipeline_end(aead_pipeline *p)
{
    if (p != NULL)
        pipeline_wipe(p);
}

void chapoly_pipeline_free(aead_pipeline *p)
{
    if (p == NULL)
        return;
    if (p->batch != NULL)
        chapoly_ctx_free(p->batch, chapoly_batch_size(CHAPOLY_MAX_PIPES));
    OPENSSL_clear_free(p, sizeof(*p));
}

aead_pipeline *chapoly_pipeline_dup(const aead_pipeline *p)
{
    aead_pipeline *d;

    if (p == NULL)
        return NULL;
    d = OPENSSL_malloc(sizeof(*d));
    if (d == NULL)
        return NULL;
    memcpy(d, p, sizeof(*d));
    d->batch = p->batch == NULL
                   ? NULL
                   : chapoly_ctx_dup(p->batch, chapoly_batch_size(CHAPOLY_MAX_PIPES));
    if (p->batch != NULL && d->batch == NULL) {
        chapoly_pipeline_free(d);
        return NULL;
    }
    return d;
}

/*
 * A pipeline init drops any ordinary message, TLS record state and tag
 * (EV_PIPELINE); the pipeline's state is allocated on first use. On failure
 * the pipeline is off, and nothing it held survives.
 */
static int aead_pipeline_init(aead_ctx *c, int enc, const unsigned char *key, size_t keylen,
                              size_t numpipes, const unsigned char **iv, size_t ivlen,
                              const OSSL_PARAM params[])
{
    aead_pipeline *p = c->pipe;

    aead_apply(c, aead_lookup(c, EV_PIPELINE));
    c->enc = enc;
    if (p == NULL) {
        p = OPENSSL_zalloc(sizeof(*p));
        if (p == NULL)
            return 0;
        p->batch = chapoly_ctx_zalloc(chapoly_batch_size(CHAPOLY_MAX_PIPES));
        if (p->batch == NULL) {
            OPENSSL_free(p);
            return 0;
        }
        c->pipe = p;
    }
    pipeline_wipe(p);
    if (numpipes == 0 || numpipes > CHAPOLY_MAX_PIPES) {
        CHAPOLY_ERR(PROV_R_INVALID_INPUT_LENGTH, "numpipes must be 1..%d, got %zu",
                    CHAPOLY_MAX_PIPES, numpipes);
        return 0;
    }
    if (key == NULL || keylen != CHACHA20_KEY_BYTES) {
        CHAPOLY_ERR(PROV_R_INVALID_KEY_LENGTH, "a pipeline needs a 32-byte key, got %s%zu",
                    key == NULL ? "none, length " : "", keylen);
        return 0;
    }
    if (iv == NULL || ivlen != c->ivlen) {
        CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "a pipeline needs %zu-byte IVs, got %s%zu",
                    c->ivlen, iv == NULL ? "no array, length " : "", ivlen);
        return 0;
    }
    for (size_t i = 0; i < numpipes; i++) {
        if (iv[i] == NULL) {
            CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "pipe %zu has no IV", i);
            return 0;
        }
    }
    chapoly_batch_start(p->batch, c->k, key, iv, numpipes, c->ivlen == 24);
    p->enc = enc;
    p->numpipes = numpipes;
    p->taglen = POLY1305_TAG_BYTES;
    if (numpipes == 1) { /* no library call for one pipe */
        p->text_len[0] = 0;
        p->out_start[0] = NULL;
    } else {
        memset(p->text_len, 0, numpipes * sizeof(p->text_len[0]));
        memset(p->out_start, 0, numpipes * sizeof(p->out_start[0]));
    }
    p->state = PIPE_START;
    if (!aead_set_ctx_params(c, params)) {
        pipeline_wipe(p); /* a failed init leaves pipeline mode and wipes the key */
        return 0;
    }
    return 1;
}

int aead_pipeline_encrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                               size_t numpipes, const unsigned char **iv, size_t ivlen,
                               const OSSL_PARAM params[])
{
    return aead_pipeline_init(vctx, 1, key, keylen, numpipes, iv, ivlen, params);
}

int aead_pipeline_decrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                               size_t numpipes, const unsigned char **iv, size_t ivlen,
                               const OSSL_PARAM params[])
{
    return aead_pipeline_init(vctx, 0, key, keylen, numpipes, iv, ivlen, params);
}

/* Why pipeline_ready refused (out of line: the ready path stays a few instructions). */
static CHAPOLY_COLD int pipeline_refuse(const aead_pipeline *p, size_t numpipes,
                                        const char *call)
{
    if (!chapoly_pipeline_active(p))
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "%s: the context is not initialised for a pipeline "
                    "(EVP_CipherPipelineEncryptInit/DecryptInit first)", call);
    else if (p->state == PIPE_DONE)
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "%s: the pipeline is finalised; initialise it again with new IVs", call);
    else
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "%s: numpipes %zu differs from the %zu given at init (a used context "
                    "re-initialised without EVP_CIPHER_CTX_reset?)", call, numpipes,
                    p->numpipes);
    return 0;
}

/* Pipeline mode, not finalised, and the numpipes of the init. */
static inline int pipeline_ready(const aead_pipeline *p, size_t numpipes, const char *call)
{
    if (p != NULL && p->state != PIPE_OFF && p->state != PIPE_DONE && numpipes == p->numpipes)
        return 1;
    return pipeline_refuse(p, numpipes, call);
}

static int check_aad(const aead_pipeline *p, const unsigned char **in, const size_t *inl)
{
    if (p->state == PIPE_TEXT) {
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "AAD after text is not allowed");
        return 0;
    }
    for (size_t i = 0; i < p->numpipes; i++) {
        if (inl[i] > PTRDIFF_MAX) {
            CHAPOLY_ERR(PROV_R_LENGTH_TOO_LARGE, "pipe %zu: AAD length %zu is larger than "
                        "any buffer (a negative length?)", i, inl[i]);
            return 0;
        }
        if (inl[i] > 0 && in[i] == NULL) {
            CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipe %zu: NULL AAD buffer", i);
            return 0;
        }
    }
    return 1;
}

static int check_text(const aead_pipeline *p, unsigned char **out, const size_t *outsize,
                      const unsigned char **in, const size_t *inl)
{
    if (outsize == NULL) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "NULL array of output sizes");
        return 0;
    }
    for (size_t i = 0; i < p->numpipes; i++) {
        if (inl[i] == 0)
            continue;
        if (in[i] == NULL || out[i] == NULL) {
            CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipe %zu: NULL %s buffer", i,
                        in[i] == NULL ? "input" : "output");
            return 0;
        }
        if (outsize[i] < inl[i]) {
            CHAPOLY_ERR(PROV_R_OUTPUT_BUFFER_TOO_SMALL,
                        "pipe %zu: output buffer of %zu bytes for %zu bytes", i, outsize[i],
                        inl[i]);
            return 0;
        }
        if (inl[i] > CHAPOLY_AEAD_MAX_TEXT - p->text_len[i]) {
            CHAPOLY_ERR(PROV_R_LENGTH_TOO_LARGE, "pipe %zu: message exceeds the "
                        "ChaCha20-Poly1305 limit of 2^38 - 64 bytes", i);
            return 0;
        }
        if (chacha20_partially_overlapping(out[i], in[i], inl[i])) {
            CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipe %zu: partially overlapping buffers", i);
            return 0;
        }
        if (!p->enc && p->text_len[i] > 0 && out[i] != p->out_start[i] + p->text_len[i]) {
            CHAPOLY_ERR(PROV_R_INVALID_DATA,
                        "pipe %zu: decrypted text must continue where the pipe's previous "
                        "update ended (so a failed final can wipe all of it)", i);
            return 0;
        }
    }
    return 1;
}

int aead_pipeline_update(void *vctx, size_t numpipes, unsigned char **out, size_t *outl,
                         const size_t *outsize, const unsigned char **in, const size_t *inl)
{
    aead_pipeline *p = ((aead_ctx *)vctx)->pipe;

    if (!pipeline_ready(p, numpipes, "pipeline update"))
        return 0;
    if (outl == NULL || inl == NULL || in == NULL) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipeline update: NULL array of %s",
                    outl == NULL ? "output lengths" : inl == NULL ? "input lengths" : "inputs");
        return 0;
    }
    if (out == NULL) {
        if (!check_aad(p, in, inl))
            return 0;
        chapoly_batch_aad(p->batch, in, inl);
        for (size_t i = 0; i < numpipes; i++)
            outl[i] = inl[i]; /* as the default provider reports AAD */
        p->state = PIPE_AAD;
        return 1;
    }
    if (!check_text(p, out, outsize, in, inl))
        return 0;
    chapoly_batch_text(p->batch, out, in, inl, p->enc);
    for (size_t i = 0; i < numpipes; i++) {
        if (p->text_len[i] == 0)
            p->out_start[i] = out[i];
        p->text_len[i] += inl[i];
        outl[i] = inl[i];
    }
    p->state = PIPE_TEXT;
    return 1;
}

/* Counts one batch and numpipes AEAD messages when the tags are computed or checked. */
int aead_pipeline_final(void *vctx, size_t numpipes, unsigned char **out, size_t *outl,
                        const size_t *outsize)
{
    aead_pipeline *p = ((aead_ctx *)vctx)->pipe;
    uint8_t calc[CHAPOLY_MAX_PIPES][POLY1305_TAG_BYTES];
    int ok = 1;
    size_t bad = 0;

    (void)out;
    (void)outsize;
    if (!pipeline_ready(p, numpipes, "pipeline final") || outl == NULL) {
        if (outl == NULL && chapoly_pipeline_active(p) && p->state != PIPE_DONE &&
            numpipes == p->numpipes)
            CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipeline final: NULL array of output lengths");
        if (chapoly_pipeline_active(p) && p->state != PIPE_DONE && !p->enc)
            fail_decrypt(p);
        return 0;
    }
    for (size_t i = 0; i < numpipes; i++)
        outl[i] = 0;
    if (!p->enc && !p->tags_set) {
        CHAPOLY_ERR(PROV_R_TAG_NOT_SET,
                    "decryption needs the expected tags (\"pipeline-tag\") before final; "
                    "every pipe's plaintext is wiped");
        fail_decrypt(p);
        return 0;
    }
    /* a batch of numpipes seals or opens (failed ones too), as many AEAD messages */
    chapoly_count_aead(((aead_ctx *)vctx)->pc, p->enc, numpipes, CHAPOLY_CTR_PIPELINE_BATCHES);
    if (p->enc) { /* the tags go out as they are: straight to their buffer */
        chapoly_batch_finish(p->batch, p->tags);
        p->tags_ready = 1;
        p->state = PIPE_DONE;
        return 1;
    }
    chapoly_batch_finish(p->batch, calc); /* the messages are done (finish wiped them) */
    /* Every pipe is compared (no early exit); the verdicts are public. */
    for (size_t i = 0; i < numpipes; i++) {
        int eq = CRYPTO_memcmp(calc[i], p->tags[i], p->taglen) == 0;

        if (!eq && ok)
            bad = i;
        ok &= eq;
    }
    if (!ok) {
        wipe_outputs(p);
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "tag mismatch (first in pipe %zu): not authentic; every pipe's "
                    "plaintext is wiped", bad);
    }
    OPENSSL_cleanse(p->tags, numpipes * sizeof(p->tags[0]));
    p->tags_set = 0;
    OPENSSL_cleanse(calc, numpipes * sizeof(calc[0]));
    p->state = PIPE_DONE;
    return ok;
}

/* The array of numpipes tag buffers and one tag's length, all checked. */
static int tag_array(const aead_pipeline *p, const OSSL_PARAM *param, unsigned char ***tags,
                     size_t *taglen)
{
    const void *ptr;

    /* OSSL_PARAM_get_octet_ptr's reading, without the call */
    if (param->data_type != OSSL_PARAM_OCTET_PTR || param->data == NULL ||
        (ptr = *(const void *const *)param->data) == NULL) {
        CHAPOLY_ERR(PROV_R_FAILED_TO_GET_PARAMETER,
                    "\"pipeline-tag\" must be an octet pointer to an array of tag buffers");
        return 0;
    }
    *taglen = param->data_size;
    if (*taglen == 0 || *taglen > POLY1305_TAG_BYTES) {
        CHAPOLY_ERR(PROV_R_INVALID_TAG_LENGTH, "tag length %zu not in 1..16", *taglen);
        return 0;
    }
    *tags = (unsigned char **)ptr;
    for (size_t i = 0; i < p->numpipes; i++) {
        if ((*tags)[i] == NULL) {
            CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipe %zu: NULL tag buffer", i);
            return 0;
        }
    }
    return 1;
}

int chapoly_pipeline_get_tags(aead_pipeline *p, OSSL_PARAM *param)
{
    unsigned char **tags;
    size_t taglen;

    if (!chapoly_pipeline_active(p)) {
        CHAPOLY_ERR(PROV_R_TAG_NOT_SET, "\"pipeline-tag\": no pipeline on this context");
        return 0;
    }
    if (!p->enc || !p->tags_ready) {
        CHAPOLY_ERR(PROV_R_TAG_NOT_SET,
                    p->enc ? "the pipeline tags are available only after a successful final"
                           : "the pipeline tags cannot be read when decrypting");
        return 0;
    }
    if (!tag_array(p, param, &tags, &taglen))
        return 0;
    for (size_t i = 0; i < p->numpipes; i++)
        memcpy(tags[i], p->tags[i], taglen);
    param->return_size = taglen;
    return 1;
}

int chapoly_pipeline_set_tags(aead_pipeline *p, const OSSL_PARAM *param)
{
    unsigned char **tags;
    size_t taglen;

    if (!chapoly_pipeline_active(p) || p->state == PIPE_DONE) {
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "\"pipeline-tag\": no pipeline in progress on this context");
        return 0;
    }
    if (p->enc) {
        CHAPOLY_ERR(PROV_R_TAG_NOT_NEEDED, "pipeline tags are not set when encrypting");
        return 0;
    }
    if (!tag_array(p, param, &tags, &taglen))
        return 0;
    for (size_t i = 0; i < p->numpipes; i++)
        memcpy(p->tags[i], tags[i], taglen);
    p->taglen = taglen;
    p->tags_set = 1;
    return 1;
}
