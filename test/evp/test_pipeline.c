/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OpenSSL 3.5 cipher pipeline API (EVP_CipherPipeline*) on chapoly's
 * ChaCha20-Poly1305 and XChaCha20-Poly1305 (provider/ciphers/aead_pipeline.c,
 * core/aead_batch.c), at the kernel level CHAPOLY_KERNEL names:
 *  - EVP_CIPHER_can_pipeline is 1 for both AEADs and both directions;
 *  - differential: for every numpipes 1..32, a pipeline seal equals N
 *    single-message seals through chapoly and (ChaCha20-Poly1305) the default
 *    provider, and a pipeline open gives the texts back: mixed text lengths
 *    0..2 KiB plus long ones (16 KiB, 70 KiB), mixed AAD lengths, in place and
 *    not, in one update or split over several;
 *  - a forged tag (or ciphertext byte) in any pipe fails final and leaves
 *    every pipe's output wiped (zeros);
 *  - misuse is refused with an error and no crash: numpipes 0 or above 32,
 *    NULL array entries, wrong tag sizes, calls out of order, pipeline and
 *    ordinary calls mixed on one context, a used context re-initialised for a
 *    pipeline without EVP_CIPHER_CTX_reset (EVP then passes numpipes 0);
 *  - a pipeline init whose parameters fail (called on the provider directly:
 *    EVP passes none) leaves the context out of pipeline mode;
 *  - one context for batches of changing numpipes (no cipher at re-init):
 *    the same bytes; the TLS record parameters refused in pipeline mode;
 *  - memory (allocations, what freed blocks hold): test_pipeline_memory.c;
 *  - statistics: a finalised batch of N is one chapoly-pipeline-batches and N
 *    AEAD messages (N seals or N opens, failed opens included); a batch
 *    never finalised or refused before its tags are computed counts nothing;
 *    with statistics off nothing moves.
 * Built only against OpenSSL 3.5 or later (test/CMakeLists.txt).
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include "pipeline_helpers.h"
#include "test_common.h"

static void test_can_pipeline(const aead *a)
{
    T_OK(EVP_CIPHER_can_pipeline(a->ours, 1) == 1, "%s: can_pipeline(enc) is not 1", a->name);
    T_OK(EVP_CIPHER_can_pipeline(a->ours, 0) == 1, "%s: can_pipeline(dec) is not 1", a->name);
}

static void test_differential(const aead *a)
{
    uint8_t ref[TAGLEN];

    for (size_t n = 1; n <= MAXP; n++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            batch b;
            int split = (n + inplace) % 3 == 0;

            batch_make(&b, n, a->ivlen, inplace == (int)(n & 1));
            if (!T_OK(pipeline(a->ours, a->ivlen, &b, 1, inplace, split),
                      "%s n=%zu: pipeline seal failed", a->name, n)) {
                ERR_print_errors_fp(stderr);
                batch_free(&b);
                continue;
            }
            for (size_t i = 0; i < n; i++) {
                uint8_t *exp = t_xmalloc(b.len[i] + 16);

                memcpy(b.ct[i], b.out[i], b.len[i]);
                T_OK(single(a->ours, 1, b.key, b.iv[i], b.aad[i], b.aadl[i], b.pt[i], b.len[i],
                            exp, ref), "single seal");
                T_EQ_MEM(exp, b.ct[i], b.len[i], "%s n=%zu pipe %zu (len %zu, aad %zu%s%s): "
                         "ciphertext differs from chapoly's single seal", a->name, n, i,
                         b.len[i], b.aadl[i], inplace ? ", in place" : "", split ? ", split" : "");
                T_EQ_MEM(ref, b.tag[i], TAGLEN, "%s n=%zu pipe %zu (len %zu, aad %zu): tag "
                         "differs from chapoly's single seal", a->name, n, i, b.len[i], b.aadl[i]);
                if (a->dflt != NULL) {
                    T_OK(single(a->dflt, 1, b.key, b.iv[i], b.aad[i], b.aadl[i], b.pt[i],
                                b.len[i], exp, ref), "default seal");
                    T_EQ_MEM(exp, b.ct[i], b.len[i], "%s n=%zu pipe %zu: ciphertext differs "
                             "from the default provider", a->name, n, i);
                    T_EQ_MEM(ref, b.tag[i], TAGLEN, "%s n=%zu pipe %zu: tag differs from the "
                             "default provider", a->name, n, i);
                }
                free(exp);
                memset(b.out[i], 0xa5, b.len[i]);
            }
            /* open: the texts come back (the other buffer mode, other split) */
            T_OK(pipeline(a->ours, a->ivlen, &b, 0, !inplace, !split),
                 "%s n=%zu: pipeline open failed", a->name, n);
            for (size_t i = 0; i < n; i++)
                T_EQ_MEM(b.out[i], b.pt[i], b.len[i], "%s n=%zu pipe %zu: open gave other "
                         "text", a->name, n, i);
            batch_free(&b);
        }
    }
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

/* A forged tag (or ciphertext byte) in each pipe position: final fails, nothing survives. */
static void test_forgery(const aead *a)
{
    static const size_t ns[] = { 1, 3, 16, 32 };

    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        size_t n = ns[k];

        for (size_t pos = 0; pos < n; pos++) {
            for (int what = 0; what < 2; what++) {
                batch b;

                batch_make(&b, n, a->ivlen, 0);
                b.len[pos] = b.len[pos] < 1 ? 1 : b.len[pos]; /* a byte to forge */
                free(b.pt[pos]);
                free(b.ct[pos]);
                free(b.out[pos]);
                b.pt[pos] = t_xmalloc(b.len[pos]);
                b.ct[pos] = t_xmalloc(b.len[pos]);
                b.out[pos] = t_xmalloc(b.len[pos]);
                t_rand_bytes(b.pt[pos], b.len[pos]);
                T_OK(pipeline(a->ours, a->ivlen, &b, 1, 0, 0), "seal");
                for (size_t i = 0; i < n; i++)
                    memcpy(b.ct[i], b.out[i], b.len[i]);
                if (what == 0)
                    b.tag[pos][t_rand_below(TAGLEN)] ^= (uint8_t)(1u << t_rand_below(8));
                else
                    b.ct[pos][t_rand_below(b.len[pos])] ^= 0x01;
                ERR_clear_error();
                T_OK(!pipeline(a->ours, a->ivlen, &b, 0, (int)(pos & 1), 0),
                     "%s n=%zu: forged %s in pipe %zu accepted", a->name, n,
                     what ? "ciphertext" : "tag", pos);
                T_OK(t_error_queued(), "%s: forgery without an error", a->name);
                for (size_t i = 0; i < n; i++)
                    T_OK(all_zero(b.out[i], b.len[i]), "%s n=%zu forged pipe %zu: pipe %zu "
                         "keeps plaintext", a->name, n, pos, i);
                batch_free(&b);
            }
        }
    }
}

/* A context in pipeline mode after init (and AAD of 3 bytes per pipe if aad). */
static EVP_CIPHER_CTX *pipe_ctx(const aead *a, int enc, size_t n, const uint8_t *key,
                                uint8_t iv[][24])
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    const unsigned char *ivs[MAXP];

    for (size_t i = 0; i < n; i++)
        ivs[i] = iv[i];
    if (ctx == NULL ||
        !(enc ? EVP_CipherPipelineEncryptInit(ctx, a->ours, key, 32, n, ivs, a->ivlen)
              : EVP_CipherPipelineDecryptInit(ctx, a->ours, key, 32, n, ivs, a->ivlen))) {
        T_OK(0, "%s: pipeline init failed", a->name);
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* The last queued error's text names word (and the queue is cleared). */
static int error_mentions(const char *word)
{
    const char *data = NULL;
    int flags = 0, ok;

    ERR_peek_last_error_data(&data, &flags);
    ok = data != NULL && (flags & ERR_TXT_STRING) && strstr(data, word) != NULL;
    ERR_clear_error();
    return ok;
}

static void test_misuse(const aead *a)
{
    uint8_t key[32], iv[MAXP][24], buf[MAXP][64], tagbuf[MAXP][TAGLEN];
    const unsigned char *ivs[MAXP], *in[MAXP];
    unsigned char *out[MAXP], *tags[MAXP];
    size_t inl[MAXP], outl[MAXP], outsize[MAXP];
    EVP_CIPHER_CTX *ctx;
    const size_t n = 4;
    int il;

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    for (size_t i = 0; i < MAXP; i++) {
        ivs[i] = iv[i];
        in[i] = buf[i];
        out[i] = buf[i];
        inl[i] = 10;
        outsize[i] = 64;
        tags[i] = tagbuf[i];
    }

    /* init: numpipes 0 and 33, NULL IV entry, wrong IV and key lengths */
    ctx = EVP_CIPHER_CTX_new();
    T_REJECT(EVP_CipherPipelineEncryptInit(ctx, a->ours, key, 32, 0, ivs, a->ivlen),
             "%s: numpipes 0", a->name);
    EVP_CIPHER_CTX_reset(ctx);
    T_REJECT(EVP_CipherPipelineEncryptInit(ctx, a->ours, key, 32, 33, ivs, a->ivlen),
             "%s: numpipes 33", a->name);
    EVP_CIPHER_CTX_reset(ctx);
    ivs[2] = NULL;
    T_REJECT(EVP_CipherPipelineEncryptInit(ctx, a->ours, key, 32, n, ivs, a->ivlen),
             "%s: NULL IV entry", a->name);
    ivs[2] = iv[2];
    EVP_CIPHER_CTX_reset(ctx);
    T_REJECT(EVP_CipherPipelineEncryptInit(ctx, a->ours, key, 32, n, ivs, a->ivlen - 1),
             "%s: short IV length", a->name);
    EVP_CIPHER_CTX_reset(ctx);
    T_REJECT(EVP_CipherPipelineDecryptInit(ctx, a->ours, key, 16, n, ivs, a->ivlen),
             "%s: 16-byte key", a->name);
    EVP_CIPHER_CTX_reset(ctx);
    T_REJECT(EVP_CipherPipelineDecryptInit(ctx, a->ours, NULL, 32, n, ivs, a->ivlen),
             "%s: no key", a->name);
    /* a failed init leaves no pipeline behind */
    T_REJECT(EVP_CipherPipelineUpdate(ctx, NULL, outl, NULL, in, inl),
             "%s: update after a failed init", a->name);
    EVP_CIPHER_CTX_free(ctx);

    /* update: NULL entries, small output, overlap, order */
    if ((ctx = pipe_ctx(a, 1, n, key, iv)) != NULL) {
        in[1] = NULL;
        T_REJECT(EVP_CipherPipelineUpdate(ctx, NULL, outl, NULL, in, inl), "%s: NULL AAD entry",
                 a->name);
        T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
                 "%s: NULL input entry", a->name);
        in[1] = buf[1];
        out[3] = NULL;
        T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
                 "%s: NULL output entry", a->name);
        out[3] = buf[3];
        T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, NULL, in, inl),
                 "%s: NULL outsize array", a->name);
        outsize[2] = 9;
        T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
                 "%s: output too small", a->name);
        outsize[2] = 64;
        out[0] = buf[0] + 1;
        T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
                 "%s: partially overlapping", a->name);
        out[0] = buf[0];
        T_REJECT(get_tags(ctx, tags, TAGLEN), "%s: tags before final", a->name);
        T_REJECT(set_tags(ctx, tags, TAGLEN), "%s: tags set when encrypting", a->name);
        /* ordinary calls on a pipeline context: refused, saying why */
        ERR_clear_error();
        T_OK(EVP_EncryptUpdate(ctx, buf[0], &il, buf[1], 10) <= 0 && error_mentions("pipeline"),
             "%s: ordinary update in pipeline mode not refused as such", a->name);
        T_REJECT(EVP_EncryptUpdate(ctx, buf[0], &il, buf[1], 10), "%s: ordinary update in "
                 "pipeline mode", a->name);
        T_REJECT(EVP_EncryptFinal_ex(ctx, buf[0], &il), "%s: ordinary final in pipeline mode",
                 a->name);
        /* the refused calls changed nothing: a text update and final still work */
        T_OK(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl), "%s: text update",
             a->name);
        T_REJECT(EVP_CipherPipelineUpdate(ctx, NULL, outl, NULL, in, inl), "%s: AAD after text",
                 a->name);
        T_OK(EVP_CipherPipelineFinal(ctx, out, outl, outsize), "%s: final", a->name);
        T_REJECT(EVP_CipherPipelineFinal(ctx, out, outl, outsize), "%s: final twice", a->name);
        T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
                 "%s: update after final", a->name);
        tags[2] = NULL;
        T_REJECT(get_tags(ctx, tags, TAGLEN), "%s: NULL tag buffer (get)", a->name);
        tags[2] = tagbuf[2];
        T_REJECT(get_tags(ctx, tags, 17), "%s: 17-byte tags", a->name);
        T_REJECT(get_tags(ctx, tags, 0), "%s: 0-byte tags", a->name);
        T_OK(get_tags(ctx, tags, TAGLEN), "%s: get tags", a->name);
        /* an ordinary init leaves pipeline mode; pipeline calls are then refused */
        T_OK(EVP_EncryptInit_ex2(ctx, NULL, key, iv[0], NULL), "%s: ordinary init", a->name);
        T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
                 "%s: pipeline update after an ordinary init", a->name);
        T_OK(EVP_EncryptUpdate(ctx, buf[0], &il, buf[1], 10) && il == 10,
             "%s: ordinary update after leaving pipeline mode", a->name);
        EVP_CIPHER_CTX_free(ctx);
    }

    /* decryption: tag sizes, tags never set, non-contiguous output */
    if ((ctx = pipe_ctx(a, 0, n, key, iv)) != NULL) {
        T_REJECT(set_tags(ctx, tags, 17), "%s: 17-byte tags (set)", a->name);
        T_REJECT(set_tags(ctx, tags, 0), "%s: 0-byte tags (set)", a->name);
        tags[1] = NULL;
        T_REJECT(set_tags(ctx, tags, TAGLEN), "%s: NULL tag buffer (set)", a->name);
        tags[1] = tagbuf[1];
        T_OK(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl), "%s: dec update",
             a->name);
        out[2] = buf[2] + 20; /* not where pipe 2's text ended (buf[2] + 10) */
        T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
                 "%s: non-contiguous decryption output", a->name);
        out[2] = buf[2];
        T_REJECT(EVP_CipherPipelineFinal(ctx, out, outl, outsize), "%s: final without tags",
                 a->name);
        for (size_t i = 0; i < n; i++)
            T_OK(all_zero(buf[i], 10), "%s: pipe %zu keeps unauthenticated text", a->name, i);
        T_REJECT(EVP_CipherPipelineFinal(ctx, out, outl, outsize), "%s: final after a failed "
                 "final", a->name);
        T_REJECT(get_tags(ctx, tags, TAGLEN), "%s: tags read when decrypting", a->name);
        EVP_CIPHER_CTX_free(ctx);
    }

    /*
     * A used context initialised again for a pipeline without a reset:
     * OpenSSL 3.5 passes numpipes 0 to update and final. Refused cleanly;
     * after EVP_CIPHER_CTX_reset the same context works.
     */
    if ((ctx = pipe_ctx(a, 1, n, key, iv)) != NULL) {
        T_OK(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl), "%s: update", a->name);
        T_OK(EVP_CipherPipelineFinal(ctx, out, outl, outsize), "%s: final", a->name);
        T_OK(EVP_CipherPipelineEncryptInit(ctx, a->ours, key, 32, n, ivs, a->ivlen),
             "%s: re-init", a->name);
        T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
                 "%s: update after a re-init without reset (numpipes 0)", a->name);
        T_REJECT(EVP_CipherPipelineFinal(ctx, out, outl, outsize),
                 "%s: final after a re-init without reset (numpipes 0)", a->name);
        EVP_CIPHER_CTX_reset(ctx);
        T_OK(EVP_CipherPipelineEncryptInit(ctx, a->ours, key, 32, n, ivs, a->ivlen),
             "%s: init after reset", a->name);
        T_OK(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
             "%s: update after reset", a->name);
        T_OK(EVP_CipherPipelineFinal(ctx, out, outl, outsize), "%s: final after reset",
             a->name);
        /* re-init without a cipher: EVP keeps numpipes, the next batch works */
        T_OK(EVP_CipherPipelineEncryptInit(ctx, NULL, key, 32, n, ivs, a->ivlen) &&
             EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl) &&
             EVP_CipherPipelineFinal(ctx, out, outl, outsize),
             "%s: a batch after a re-init with no cipher", a->name);
        EVP_CIPHER_CTX_free(ctx);
    }

    /* an ordinary context: pipeline calls refused */
    ctx = EVP_CIPHER_CTX_new();
    T_OK(EVP_EncryptInit_ex2(ctx, a->ours, key, iv[0], NULL), "%s: ordinary init", a->name);
    T_REJECT(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl),
             "%s: pipeline update on an ordinary context", a->name);
    T_REJECT(EVP_CipherPipelineFinal(ctx, out, outl, outsize),
             "%s: pipeline final on an ordinary context", a->name);
    EVP_CIPHER_CTX_free(ctx);

    /*
     * A pipeline init drops the ordinary message the context held (with no
     * cipher given, EVP keeps the provider's context): once an ordinary init
     * without key or IV has ended pipeline mode, no message is left to
     * continue.
     */
    ctx = EVP_CIPHER_CTX_new();
    T_OK(EVP_EncryptInit_ex2(ctx, a->ours, key, iv[0], NULL) &&
         EVP_EncryptUpdate(ctx, buf[0], &il, buf[1], 10), "%s: ordinary message", a->name);
    T_OK(EVP_CipherPipelineEncryptInit(ctx, NULL, key, 32, n, ivs, a->ivlen),
         "%s: pipeline init over an ordinary message", a->name);
    T_OK(EVP_EncryptInit_ex2(ctx, NULL, NULL, NULL, NULL), "%s: init leaving pipeline mode",
         a->name);
    T_REJECT(EVP_EncryptUpdate(ctx, buf[0], &il, buf[1], 10),
             "%s: the message from before the pipeline continued", a->name);
    EVP_CIPHER_CTX_free(ctx);
}

/* name is one of the colon-separated names in names. */
static int names_include(const char *names, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = names; p != NULL; p = strchr(p, ':'), p = p ? p + 1 : NULL)
        if (OPENSSL_strncasecmp(p, name, n) == 0 && (p[n] == ':' || p[n] == '\0'))
            return 1;
    return 0;
}

/*
 * A pipeline init whose parameters fail leaves the context out of pipeline
 * mode (aead_pipeline.h: "on failure the pipeline is off"), so nothing keyed
 * survives it. EVP_CipherPipeline*Init passes no parameters, so the
 * provider's functions are called directly, as libcrypto calls them: the
 * implementation from OSSL_PROVIDER_query_operation, a context from its
 * newctx.
 */
static void test_init_params_fail(const aead *a)
{
    typedef void *newctx_fn(void *);
    typedef void freectx_fn(void *);
    typedef int pinit_fn(void *, const unsigned char *, size_t, size_t,
                         const unsigned char **, size_t, const OSSL_PARAM[]);
    typedef int pupdate_fn(void *, size_t, unsigned char **, size_t *, const size_t *,
                           const unsigned char **, const size_t *);
    const OSSL_ALGORITHM *algs;
    const OSSL_DISPATCH *fns = NULL;
    newctx_fn *newctx = NULL;
    freectx_fn *freectx = NULL;
    pinit_fn *einit = NULL, *dinit = NULL;
    pupdate_fn *update = NULL;
    uint8_t key[32], iv[MAXP][24], buf[MAXP][16], tagbuf[MAXP][17];
    const unsigned char *ivs[MAXP], *in[MAXP];
    unsigned char *out[MAXP], *tags[MAXP];
    size_t inl[MAXP], outl[MAXP], outsize[MAXP];
    const size_t n = 3;
    int no_cache = 0;

    algs = OSSL_PROVIDER_query_operation(t_prov, OSSL_OP_CIPHER, &no_cache);
    for (const OSSL_ALGORITHM *al = algs; al != NULL && al->algorithm_names != NULL; al++)
        if (names_include(al->algorithm_names, a->name)) {
            fns = al->implementation;
            break;
        }
    for (const OSSL_DISPATCH *f = fns; f != NULL && f->function_id != 0; f++) {
        switch (f->function_id) {
        case OSSL_FUNC_CIPHER_NEWCTX: newctx = (newctx_fn *)f->function; break;
        case OSSL_FUNC_CIPHER_FREECTX: freectx = (freectx_fn *)f->function; break;
        case OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT: einit = (pinit_fn *)f->function; break;
        case OSSL_FUNC_CIPHER_PIPELINE_DECRYPT_INIT: dinit = (pinit_fn *)f->function; break;
        case OSSL_FUNC_CIPHER_PIPELINE_UPDATE: update = (pupdate_fn *)f->function; break;
        default: break;
        }
    }
    if (!T_OK(newctx != NULL && freectx != NULL && einit != NULL && dinit != NULL &&
                  update != NULL,
              "%s: the provider's pipeline functions not found", a->name)) {
        OSSL_PROVIDER_unquery_operation(t_prov, OSSL_OP_CIPHER, algs);
        return;
    }

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    memset(tagbuf, 0, sizeof(tagbuf));
    for (size_t i = 0; i < MAXP; i++) {
        ivs[i] = iv[i];
        in[i] = buf[i];
        out[i] = buf[i];
        inl[i] = 10;
        outsize[i] = sizeof(buf[i]);
        tags[i] = tagbuf[i];
    }
    for (int c = 0; c < 3; c++) {
        /* 0: tags at encryption init (not needed); 1, 2: malformed tags at decryption init */
        static const char *const what[] = { "pipeline-tag at encryption init",
                                            "17-byte pipeline tags at decryption init",
                                            "pipeline-tag not an octet pointer" };
        OSSL_PARAM params[2];
        size_t notptr = 0;
        void *ctx = newctx(OSSL_PROVIDER_get0_provider_ctx(t_prov));
        int r;

        if (!T_OK(ctx != NULL, "%s: newctx", a->name))
            break;
        if (c == 2)
            params[0] = OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, &notptr);
        else
            params[0] = OSSL_PARAM_construct_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG,
                                                       (void **)tags, c == 1 ? 17 : TAGLEN);
        params[1] = OSSL_PARAM_construct_end();
        ERR_clear_error();
        r = c == 0 ? einit(ctx, key, 32, n, ivs, a->ivlen, params)
                   : dinit(ctx, key, 32, n, ivs, a->ivlen, params);
        T_OK(r == 0 && t_error_queued(), "%s: %s accepted or no error", a->name, what[c]);
        ERR_clear_error();
        /* the failed init left no pipeline (and so no key) behind */
        T_OK(update(ctx, n, out, outl, outsize, in, inl) == 0 &&
                 error_mentions("not initialised for a pipeline"),
             "%s: after a failed init (%s) a pipeline update not refused as outside a "
             "pipeline", a->name, what[c]);
        /* the context is still usable: a good init and update work */
        T_OK(einit(ctx, key, 32, n, ivs, a->ivlen, NULL) &&
                 update(ctx, n, out, outl, outsize, in, inl),
             "%s: a pipeline after a failed init (%s)", a->name, what[c]);
        freectx(ctx);
    }
    OSSL_PROVIDER_unquery_operation(t_prov, OSSL_OP_CIPHER, algs);
}

/* EVP_CIPHER_CTX_copy in the middle of a pipeline: two independent batches. */
static void test_copy(const aead *a)
{
    batch b;
    EVP_CIPHER_CTX *ctx, *dup;
    const unsigned char *ivs[MAXP], *in[MAXP];
    unsigned char *out[MAXP], *out2[MAXP], *tags[MAXP], *tags2[MAXP];
    uint8_t t2[MAXP][TAGLEN], ref[TAGLEN];
    size_t inl[MAXP], outl[MAXP], outsize[MAXP];

    batch_make(&b, 5, a->ivlen, 0);
    for (size_t i = 0; i < b.n; i++) {
        ivs[i] = b.iv[i];
        in[i] = b.aad[i];
        inl[i] = b.aadl[i];
        tags[i] = b.tag[i];
        tags2[i] = t2[i];
    }
    ctx = EVP_CIPHER_CTX_new();
    dup = EVP_CIPHER_CTX_new();
    T_OK(EVP_CipherPipelineEncryptInit(ctx, a->ours, b.key, 32, b.n, ivs, a->ivlen) &&
         EVP_CipherPipelineUpdate(ctx, NULL, outl, NULL, in, inl) &&
         EVP_CIPHER_CTX_copy(dup, ctx), "%s: copy of a pipeline", a->name);
    for (size_t i = 0; i < b.n; i++) {
        in[i] = b.pt[i];
        inl[i] = outsize[i] = b.len[i];
        out[i] = b.out[i];
        out2[i] = b.ct[i];
    }
    T_OK(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl) &&
         EVP_CipherPipelineUpdate(dup, out2, outl, outsize, in, inl) &&
         EVP_CipherPipelineFinal(ctx, out, outl, outsize) &&
         EVP_CipherPipelineFinal(dup, out2, outl, outsize) && get_tags(ctx, tags, TAGLEN) &&
         get_tags(dup, tags2, TAGLEN), "%s: both copies finish", a->name);
    for (size_t i = 0; i < b.n; i++) {
        uint8_t *exp = t_xmalloc(b.len[i] + 16);

        single(a->ours, 1, b.key, b.iv[i], b.aad[i], b.aadl[i], b.pt[i], b.len[i], exp, ref);
        T_EQ_MEM(exp, b.out[i], b.len[i], "%s: original pipe %zu", a->name, i);
        T_EQ_MEM(exp, b.ct[i], b.len[i], "%s: copy pipe %zu", a->name, i);
        T_EQ_MEM(ref, b.tag[i], TAGLEN, "%s: original tag %zu", a->name, i);
        T_EQ_MEM(ref, t2[i], TAGLEN, "%s: copy tag %zu", a->name, i);
        free(exp);
    }
    EVP_CIPHER_CTX_free(ctx);
    EVP_CIPHER_CTX_free(dup);
    batch_free(&b);
}

/*
 * One context for batches of changing size (an init with no cipher: EVP
 * keeps the context and takes the new numpipes): the pipeline's memory is
 * made again for more pipes and kept for fewer; every batch equals the
 * single seals, and a second kept context opens it. AAD up to 400 bytes:
 * some pipes' AAD overflows the core's buffer before the key block.
 */
static void test_regrow(const aead *a)
{
    static const size_t ns[] = { 3, 32, 1, 17, 32, 2, 9 };
    EVP_CIPHER_CTX *ec = EVP_CIPHER_CTX_new(), *dc = EVP_CIPHER_CTX_new();
    uint8_t ref[TAGLEN];

    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        batch b;

        batch_make(&b, ns[k], a->ivlen, k & 1);
        if (!T_OK(pipeline_on(ec, k == 0 ? a->ours : NULL, a->ivlen, &b, 1, 0, (int)(k & 1)),
                  "%s: kept-context seal of %zu after %zu failed", a->name, ns[k],
                  k ? ns[k - 1] : 0)) {
            ERR_print_errors_fp(stderr);
            batch_free(&b);
            continue;
        }
        for (size_t i = 0; i < b.n; i++) {
            uint8_t *exp = t_xmalloc(b.len[i] + 16);

            T_OK(single(a->ours, 1, b.key, b.iv[i], b.aad[i], b.aadl[i], b.pt[i], b.len[i],
                        exp, ref), "single seal");
            T_EQ_MEM(exp, b.out[i], b.len[i], "%s: kept context, %zu pipes after %zu, pipe %zu: "
                     "ciphertext", a->name, ns[k], k ? ns[k - 1] : 0, i);
            T_EQ_MEM(ref, b.tag[i], TAGLEN, "%s: kept context, %zu pipes after %zu, pipe %zu: "
                     "tag", a->name, ns[k], k ? ns[k - 1] : 0, i);
            memcpy(b.ct[i], b.out[i], b.len[i]);
            memset(b.out[i], 0, b.len[i]);
            free(exp);
        }
        T_OK(pipeline_on(dc, k == 0 ? a->ours : NULL, a->ivlen, &b, 0, 1, !(k & 1)),
             "%s: kept-context open of %zu failed", a->name, ns[k]);
        for (size_t i = 0; i < b.n; i++)
            T_EQ_MEM(b.out[i], b.pt[i], b.len[i], "%s: kept-context open, %zu pipes, pipe %zu",
                     a->name, ns[k], i);
        batch_free(&b);
    }
    EVP_CIPHER_CTX_free(ec);
    EVP_CIPHER_CTX_free(dc);
}

/* The TLS record parameters are refused in pipeline mode, and the batch goes on. */
static void test_tls_params(const aead *a)
{
    uint8_t key[32] = { 7 }, iv[MAXP][24] = { { 1 } }, fixed[12] = { 3 }, tlsaad[13] = { 0 };
    uint8_t buf[2][40] = { { 0 } }, tagbuf[2][TAGLEN];
    const unsigned char *in[2] = { buf[0], buf[1] };
    unsigned char *out[2] = { buf[0], buf[1] }, *tags[2] = { tagbuf[0], tagbuf[1] };
    size_t inl[2] = { 40, 40 }, outl[2], outsize[2] = { 40, 40 };
    EVP_CIPHER_CTX *ctx;
    OSSL_PARAM p[2] = { OSSL_PARAM_END, OSSL_PARAM_END };

    iv[1][0] = 2;
    if ((ctx = pipe_ctx(a, 1, 2, key, iv)) == NULL)
        return;
    p[0] = OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, fixed,
                                             sizeof(fixed));
    T_REJECT(EVP_CIPHER_CTX_set_params(ctx, p), "%s: tlsivfixed in pipeline mode", a->name);
    tlsaad[11] = 40;
    p[0] = OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, tlsaad,
                                             sizeof(tlsaad));
    T_REJECT(EVP_CIPHER_CTX_set_params(ctx, p), "%s: tlsaad in pipeline mode", a->name);
    T_OK(EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl) &&
             EVP_CipherPipelineFinal(ctx, out, outl, outsize) && get_tags(ctx, tags, TAGLEN),
         "%s: the batch after refused TLS parameters", a->name);
    EVP_CIPHER_CTX_free(ctx);
}

/* ---- statistics ---- */

enum { C_MSGS, C_SEALS, C_OPENS, C_TLS, C_CC_CALLS, C_CC_BYTES, C_MACS, C_BATCHES, NCTR };
static const char *const ctr_names[NCTR] = {
    "chapoly-aead-messages",  "chapoly-aead-seals",     "chapoly-aead-opens",
    "chapoly-tls-records",    "chapoly-chacha20-calls", "chapoly-chacha20-bytes",
    "chapoly-poly1305-macs",  "chapoly-pipeline-batches"
};

static int read_ctrs(OSSL_PROVIDER *prov, uint64_t v[NCTR])
{
    OSSL_PARAM p[NCTR + 1];
    int ok;

    for (int i = 0; i < NCTR; i++)
        p[i] = OSSL_PARAM_construct_uint64(ctr_names[i], &v[i]);
    p[NCTR] = OSSL_PARAM_construct_end();
    ok = OSSL_PROVIDER_get_params(prov, p);
    for (int i = 0; i < NCTR; i++)
        ok = ok && OSSL_PARAM_modified(&p[i]);
    return ok;
}

/* Every counter of prov moved by exactly want[] since *before (then updated). */
static void expect_moved(OSSL_PROVIDER *prov, uint64_t before[NCTR], const uint64_t want[NCTR],
                         const char *name, const char *what)
{
    uint64_t now[NCTR] = { 0 };
    int ok = read_ctrs(prov, now);

    T_OK(ok, "%s %s: counters not readable", name, what);
    for (int i = 0; ok && i < NCTR; i++)
        T_OK(now[i] - before[i] == want[i], "%s %s: %s +%llu, want +%llu", name, what,
             ctr_names[i], (unsigned long long)(now[i] - before[i]),
             (unsigned long long)want[i]);
    memcpy(before, now, sizeof(now));
}

/* A pipeline initialised and fed, then abandoned (enc), or finalised without tags (dec). */
static int pipeline_unfinished(EVP_CIPHER *c, size_t ivlen, int enc)
{
    uint8_t key[32] = { 1 }, iv[4][24] = { { 2 } }, buf[4][8] = { { 0 } };
    const unsigned char *ivs[4], *in[4];
    unsigned char *out[4];
    size_t inl[4], outl[4], outsize[4];
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int ok;

    for (size_t i = 0; i < 4; i++) {
        iv[i][0] = (uint8_t)i;
        ivs[i] = iv[i];
        in[i] = buf[i];
        out[i] = buf[i];
        inl[i] = outsize[i] = 8;
    }
    ok = ctx != NULL && (enc ? EVP_CipherPipelineEncryptInit(ctx, c, key, 32, 4, ivs, ivlen)
                             : EVP_CipherPipelineDecryptInit(ctx, c, key, 32, 4, ivs, ivlen))
         && EVP_CipherPipelineUpdate(ctx, out, outl, outsize, in, inl);
    if (ok && !enc) { /* no tags set: final refuses */
        ERR_set_mark();
        ok = !EVP_CipherPipelineFinal(ctx, out, outl, outsize);
        ERR_pop_to_mark();
    }
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static void test_counters(const aead *a)
{
    /*                                        msg seal open tls cc bytes mac batch */
    static const uint64_t seal4[NCTR]     = { 4, 4, 0, 0, 0, 0, 0, 1 };
    static const uint64_t open4[NCTR]     = { 4, 0, 4, 0, 0, 0, 0, 1 };
    static const uint64_t seal1[NCTR]     = { 1, 1, 0, 0, 0, 0, 0, 1 };
    static const uint64_t nothing[NCTR]   = { 0 };
    uint64_t before[NCTR] = { 0 }, off0[NCTR] = { 0 };
    batch b;

    /* statistics on: a library context whose chapoly read CHAPOLY_STATS=1 at init */
    setenv("CHAPOLY_STATS", "1", 1);
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *d = lc ? OSSL_PROVIDER_load(lc, "default") : NULL;
    OSSL_PROVIDER *p = lc ? OSSL_PROVIDER_load(lc, "chapoly") : NULL;
    EVP_CIPHER *c = p ? EVP_CIPHER_fetch(lc, a->name, PROVQ_OURS) : NULL;
    unsetenv("CHAPOLY_STATS");

    if (T_OK(c != NULL && read_ctrs(p, before), "%s: a chapoly with statistics", a->name)) {
        batch_make(&b, 4, a->ivlen, 0);
        T_OK(pipeline(c, a->ivlen, &b, 1, 0, 0), "%s: seal 4", a->name);
        expect_moved(p, before, seal4, a->name, "a pipeline seal of 4");
        for (size_t i = 0; i < 4; i++)
            memcpy(b.ct[i], b.out[i], b.len[i]);
        T_OK(pipeline(c, a->ivlen, &b, 0, 0, 1), "%s: open 4", a->name);
        expect_moved(p, before, open4, a->name, "a pipeline open of 4");
        b.tag[2][0] ^= 1;
        ERR_set_mark();
        T_OK(!pipeline(c, a->ivlen, &b, 0, 1, 0), "%s: forged open of 4 accepted", a->name);
        ERR_pop_to_mark();
        expect_moved(p, before, open4, a->name, "a failed pipeline open of 4");
        batch_free(&b);
        batch_make(&b, 1, a->ivlen, 0);
        T_OK(pipeline(c, a->ivlen, &b, 1, 1, 0), "%s: seal 1", a->name);
        expect_moved(p, before, seal1, a->name, "a pipeline seal of 1");
        batch_free(&b);
        T_OK(pipeline_unfinished(c, a->ivlen, 1), "%s: unfinished seal", a->name);
        expect_moved(p, before, nothing, a->name, "a pipeline seal never finalised");
        T_OK(pipeline_unfinished(c, a->ivlen, 0), "%s: open without tags", a->name);
        expect_moved(p, before, nothing, a->name, "a pipeline open refused for lack of tags");
    }
    EVP_CIPHER_free(c);
    OSSL_PROVIDER_unload(p);
    OSSL_PROVIDER_unload(d);
    OSSL_LIB_CTX_free(lc);

    /* statistics off (t_prov): nothing moves */
    if (T_OK(read_ctrs(t_prov, off0), "%s: counters of t_prov", a->name)) {
        batch_make(&b, 4, a->ivlen, 0);
        T_OK(pipeline(a->ours, a->ivlen, &b, 1, 0, 0), "%s: seal 4 (stats off)", a->name);
        for (size_t i = 0; i < 4; i++)
            memcpy(b.ct[i], b.out[i], b.len[i]);
        T_OK(pipeline(a->ours, a->ivlen, &b, 0, 0, 0), "%s: open 4 (stats off)", a->name);
        batch_free(&b);
        expect_moved(t_prov, off0, nothing, a->name, "statistics off: seal and open of 4");
    }
    ERR_clear_error();
}

int main(void)
{
    aead aeads[2] = { { "ChaCha20-Poly1305", 12, NULL, NULL },
                      { "XChaCha20-Poly1305", 24, NULL, NULL } };

    unsetenv("CHAPOLY_STATS"); /* t_prov counts nothing */
    t_setup();
    aeads[0].ours = t_cipher("ChaCha20-Poly1305", 1);
    aeads[0].dflt = t_cipher("ChaCha20-Poly1305", 0);
    aeads[1].ours = t_cipher("XChaCha20-Poly1305", 1);
    for (int i = 0; i < 2; i++) {
        const aead *a = &aeads[i];

        if (!T_OK(a->ours != NULL, "%s not fetched", a->name))
            continue;
        test_can_pipeline(a);
        test_differential(a);
        test_forgery(a);
        test_misuse(a);
        test_init_params_fail(a);
        test_copy(a);
        test_regrow(a);
        test_tls_params(a);
        test_counters(a);
    }
    for (int i = 0; i < 2; i++) {
        EVP_CIPHER_free(aeads[i].ours);
        EVP_CIPHER_free(aeads[i].dflt);
    }
    t_teardown();
    return t_finish("test_pipeline");
}
