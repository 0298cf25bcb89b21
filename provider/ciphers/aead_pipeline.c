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
 * The progress is the AEAD context's state (aead_state.c): init --> ST_PIPE
 * --update(AAD)--> ST_PIPE_AAD --update(text)--> ST_PIPE_TEXT --final-->
 * ST_PIPE_DONE; its table refuses AAD after text, anything after final,
 * and pipeline calls outside pipeline mode. Each message's own progress is
 * the core's (core/aead_batch.h). numpipes must equal the init's at every
 * call (OpenSSL 3.5.9 passes 0 after re-initialising a used EVP_CIPHER_CTX
 * without EVP_CIPHER_CTX_reset). Every array is checked before any pipe is
 * processed, so a refused call changes nothing.
 *
 * Memory: one block, this header and the batch's messages (2 KiB each),
 * made for an init's numpipes and again only for more; nothing zeroed (a
 * start writes what it reads), and since a finish leaves no secret, only an
 * abandoned batch is wiped (message by message) before a free.
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

struct aead_pipeline {
    size_t room;    /* messages the allocation holds */
    int tags_set;   /* decryption: expected tags in tags[] */
    size_t taglen;  /* of the expected tags */
    uint8_t tags[CHAPOLY_MAX_PIPES][POLY1305_TAG_BYTES]; /* computed (enc) or expected (dec) */
    /* decryption: where each pipe's text began (its length is its message's), for a wipe */
    unsigned char *out_start[CHAPOLY_MAX_PIPES];
};

/* The batch follows the header, 64-byte aligned (contexts are: chapoly_ctx_alloc). */
#define PIPE_HDR ((sizeof(aead_pipeline) + 63) & ~(size_t)63)
#define PIPE_BYTES(room) (PIPE_HDR + chapoly_batch_size(room))

static inline chapoly_batch *batch_of(const aead_pipeline *p)
{
    return (chapoly_batch *)((unsigned char *)p + PIPE_HDR);
}

static aead_pipeline *pipeline_alloc(size_t room)
{
    aead_pipeline *p = chapoly_ctx_alloc(PIPE_BYTES(room));

    if (p == NULL)
        return NULL;
    p->room = room;
    p->tags_set = 0;
    p->taglen = POLY1305_TAG_BYTES;
    batch_of(p)->n = 0;
    return p;
}

void chapoly_pipeline_drop(aead_pipeline *p)
{
    if (p == NULL)
        return;
    chapoly_batch_clear(batch_of(p));
    /* Expected tags not yet used (a final wipes them); computed tags are public output. */
    if (p->tags_set)
        chapoly_cleanse(p->tags, batch_of(p)->n * sizeof(p->tags[0]));
    p->tags_set = 0;
}

void aead_pipeline_leave(aead_ctx *c)
{
    chapoly_pipeline_drop(c->pipe);
    c->state = ST_NEW;
}

/* A drop wiped whatever the batch used: the rest never held a secret. */
void chapoly_pipeline_free(aead_pipeline *p)
{
    chapoly_pipeline_drop(p);
    chapoly_ctx_release(p);
}

aead_pipeline *chapoly_pipeline_dup(const aead_pipeline *p)
{
    size_t n = p == NULL ? 0 : batch_of(p)->n;
    aead_pipeline *d = p == NULL ? NULL : chapoly_ctx_alloc(PIPE_BYTES(n));

    if (d == NULL)
        return NULL;
    memcpy(d, p, PIPE_BYTES(n)); /* the header and the batch's n messages */
    d->room = n;
    return d;
}

/* Decryption failed: no pipe keeps plaintext that was never authenticated. */
static void wipe_outputs(aead_pipeline *p)
{
    const chapoly_batch *b = batch_of(p);

    for (size_t i = 0; i < b->n; i++)
        if (chapoly_batch_text_len(b, i) > 0)
            chapoly_cleanse(p->out_start[i], (size_t)chapoly_batch_text_len(b, i));
}

/* A decryption that cannot complete: no plaintext survives, nothing of the batch either. */
static void fail_decrypt(aead_ctx *c)
{
    wipe_outputs(c->pipe);
    chapoly_pipeline_drop(c->pipe);
    c->state = ST_PIPE_DONE; /* PIPE_FAIL's state */
}

static int check_init(const aead_ctx *c, const unsigned char *key, size_t keylen,
                      size_t numpipes, const unsigned char **iv, size_t ivlen)
{
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
    return 1;
}

/*
 * A pipeline init drops any ordinary message, TLS record state, tag or
 * earlier batch (RESET, to ST_PIPE); the pipeline's memory is allocated on
 * first use, and again for more pipes than it has room for. On failure the
 * context leaves pipeline mode (ST_NEW), and nothing it held survives.
 */
static int aead_pipeline_init(aead_ctx *c, int enc, const unsigned char *key, size_t keylen,
                              size_t numpipes, const unsigned char **iv, size_t ivlen,
                              const OSSL_PARAM params[])
{
    aead_pipeline *p = c->pipe;

    aead_apply(c, aead_lookup(c, EV_PIPELINE));
    c->enc = enc;
    if (!check_init(c, key, keylen, numpipes, iv, ivlen)) {
        aead_pipeline_leave(c);
        return 0;
    }
    if (p == NULL || p->room < numpipes) {
        aead_pipeline *q = pipeline_alloc(numpipes);

        if (q == NULL) {
            aead_pipeline_leave(c);
            return 0;
        }
        chapoly_pipeline_free(p);
        c->pipe = p = q;
    }
    chapoly_batch_start(batch_of(p), c->k, key, iv, numpipes, c->ivlen == 24);
    p->taglen = POLY1305_TAG_BYTES;
    if (!aead_set_ctx_params(c, params)) {
        aead_pipeline_leave(c); /* a failed init leaves pipeline mode and wipes the key */
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

/* numpipes is not the init's (out of line: the ready path stays a few instructions). */
static CHAPOLY_COLD int refuse_numpipes(const aead_pipeline *p, size_t numpipes,
                                        const char *call)
{
    CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                "%s: numpipes %zu differs from the %zu given at init (a used context "
                "re-initialised without EVP_CIPHER_CTX_reset?)", call, numpipes,
                batch_of(p)->n);
    return 0;
}

static int check_aad(const aead_pipeline *p, const unsigned char **in, const size_t *inl)
{
    for (size_t i = 0; i < batch_of(p)->n; i++) {
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

static int check_text(const aead_ctx *c, unsigned char **out, const size_t *outsize,
                      const unsigned char **in, const size_t *inl)
{
    const aead_pipeline *p = c->pipe;
    const chapoly_batch *b = batch_of(p);

    if (outsize == NULL) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "NULL array of output sizes");
        return 0;
    }
    for (size_t i = 0; i < b->n; i++) {
        uint64_t done = chapoly_batch_text_len(b, i);

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
        if (inl[i] > CHAPOLY_AEAD_MAX_TEXT - done) {
            CHAPOLY_ERR(PROV_R_LENGTH_TOO_LARGE, "pipe %zu: message exceeds the "
                        "ChaCha20-Poly1305 limit of 2^38 - 64 bytes", i);
            return 0;
        }
        if (chacha20_partially_overlapping(out[i], in[i], inl[i])) {
            CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipe %zu: partially overlapping buffers", i);
            return 0;
        }
        if (!c->enc && done > 0 && out[i] != p->out_start[i] + done) {
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
    aead_ctx *c = vctx;
    const aead_step *s = aead_lookup(c, out == NULL ? EV_PIPE_AAD : EV_PIPE_TEXT);
    aead_pipeline *p = c->pipe;
    chapoly_batch *b;

    if (s->why != WHY_NONE)
        return aead_refuse(c, s);
    b = batch_of(p);
    if (numpipes != b->n)
        return refuse_numpipes(p, numpipes, "pipeline update");
    if (outl == NULL || inl == NULL || in == NULL) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipeline update: NULL array of %s",
                    outl == NULL ? "output lengths" : inl == NULL ? "input lengths" : "inputs");
        return 0;
    }
    if (out == NULL) {
        if (!check_aad(p, in, inl))
            return 0;
        chapoly_batch_aad(b, in, inl);
        for (size_t i = 0; i < numpipes; i++)
            outl[i] = inl[i]; /* as the default provider reports AAD */
    } else {
        if (!check_text(c, out, outsize, in, inl))
            return 0;
        for (size_t i = 0; i < numpipes; i++) {
            if (chapoly_batch_text_len(b, i) == 0)
                p->out_start[i] = out[i];
            outl[i] = inl[i];
        }
        chapoly_batch_text(b, out, in, inl, c->enc);
    }
    c->state = (enum aead_state)s->next;
    return 1;
}

/* Counts one batch and numpipes AEAD messages when the tags are computed or checked. */
int aead_pipeline_final(void *vctx, size_t numpipes, unsigned char **out, size_t *outl,
                        const size_t *outsize)
{
    aead_ctx *c = vctx;
    aead_pipeline *p = c->pipe;
    const aead_step *s = aead_lookup(c, c->enc ? EV_PIPE_SEAL
                                     : p != NULL && p->tags_set ? EV_PIPE_OPEN : EV_PIPE_NO_TAG);
    uint8_t calc[CHAPOLY_MAX_PIPES][POLY1305_TAG_BYTES];
    chapoly_batch *b;
    int ok = 1;
    size_t bad = 0;

    (void)out;
    (void)outsize;
    if (s->why != WHY_NONE) {
        if (s->why == WHY_PIPE_NO_TAG) /* PIPE_FAIL */
            fail_decrypt(c);
        return aead_refuse(c, s);
    }
    b = batch_of(p);
    if (numpipes != b->n || outl == NULL) {
        if (numpipes != b->n)
            refuse_numpipes(p, numpipes, "pipeline final");
        else
            CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipeline final: NULL array of output lengths");
        if (!c->enc)
            fail_decrypt(c); /* as PIPE_FAIL */
        return 0;
    }
    for (size_t i = 0; i < numpipes; i++)
        outl[i] = 0;
    c->state = (enum aead_state)s->next; /* FIN, the only other outcome: ST_PIPE_DONE */
    c->tag_set = 0;
    /* a batch of numpipes seals or opens (failed ones too), as many AEAD messages */
    chapoly_count_aead(c->pc, c->enc, numpipes, CHAPOLY_CTR_PIPELINE_BATCHES);
    if (c->enc) { /* the tags go out as they are: straight to their buffer */
        chapoly_batch_finish(b, p->tags);
        return 1;
    }
    chapoly_batch_finish(b, calc); /* the messages are done (finish wiped them) */
    /* Every pipe is compared (no early exit); the verdicts are public. */
    for (size_t i = 0; i < numpipes; i++) {
        int eq = chapoly_tag_equal(calc[i], p->tags[i], p->taglen);

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
    chapoly_cleanse(p->tags, numpipes * sizeof(p->tags[0]));
    p->tags_set = 0;
    chapoly_cleanse(calc, numpipes * sizeof(calc[0]));
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
    for (size_t i = 0; i < batch_of(p)->n; i++) {
        if ((*tags)[i] == NULL) {
            CHAPOLY_ERR(PROV_R_INVALID_DATA, "pipe %zu: NULL tag buffer", i);
            return 0;
        }
    }
    return 1;
}

int chapoly_pipeline_get_tags(aead_ctx *c, OSSL_PARAM *param)
{
    aead_pipeline *p = c->pipe;
    unsigned char **tags;
    size_t taglen;

    if (!aead_in_pipeline(c)) {
        CHAPOLY_ERR(PROV_R_TAG_NOT_SET, "\"pipeline-tag\": no pipeline on this context");
        return 0;
    }
    if (!c->enc || c->state != ST_PIPE_DONE) {
        CHAPOLY_ERR(PROV_R_TAG_NOT_SET,
                    c->enc ? "the pipeline tags are available only after a successful final"
                           : "the pipeline tags cannot be read when decrypting");
        return 0;
    }
    if (!tag_array(p, param, &tags, &taglen))
        return 0;
    for (size_t i = 0; i < batch_of(p)->n; i++)
        memcpy(tags[i], p->tags[i], taglen);
    param->return_size = taglen;
    return 1;
}

int chapoly_pipeline_set_tags(aead_ctx *c, const OSSL_PARAM *param)
{
    aead_pipeline *p = c->pipe;
    unsigned char **tags;
    size_t taglen;

    if (!aead_in_pipeline(c) || c->state == ST_PIPE_DONE) {
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED,
                    "\"pipeline-tag\": no pipeline in progress on this context");
        return 0;
    }
    if (c->enc) {
        CHAPOLY_ERR(PROV_R_TAG_NOT_NEEDED, "pipeline tags are not set when encrypting");
        return 0;
    }
    if (!tag_array(p, param, &tags, &taglen))
        return 0;
    for (size_t i = 0; i < batch_of(p)->n; i++)
        memcpy(p->tags[i], tags[i], taglen);
    p->taglen = taglen;
    p->tags_set = 1;
    return 1;
}
