/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OpenSSL 3.5 cipher pipeline API for ChaCha20-Poly1305 and
 * XChaCha20-Poly1305 (aead_pipeline.c): numpipes independent messages
 * under one key per EVP_CipherPipeline* call, on the batched AEAD
 * (core/aead_batch.h). The AEAD context (aead_state.h) holds a pointer to
 * this state, and its state machine the pipeline's progress; the pipeline
 * calls take the context, the "pipeline-tag" parameter (aead_params.c)
 * comes here. The state is allocated for the numpipes of an init (again
 * when a later init has more) and only what a batch used is wiped.
 *
 * The function ids and the parameter name are OpenSSL's ABI constants: they
 * are defined here when the headers (OpenSSL 3.0) lack them, so one module
 * binary offers the pipeline functions and a 3.0 core, which does not know
 * the ids, ignores them.
 */
#ifndef CHAPOLY_AEAD_PIPELINE_H
#define CHAPOLY_AEAD_PIPELINE_H

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include "kernels.h"

#ifndef OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT
#define OSSL_FUNC_CIPHER_PIPELINE_ENCRYPT_INIT 15
#define OSSL_FUNC_CIPHER_PIPELINE_DECRYPT_INIT 16
#define OSSL_FUNC_CIPHER_PIPELINE_UPDATE 17
#define OSSL_FUNC_CIPHER_PIPELINE_FINAL 18
#endif
#ifndef OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG
#define OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG "pipeline-tag"
#endif
/* EVP_MAX_PIPES in OpenSSL 3.5's evp.h */
#define CHAPOLY_MAX_PIPES 32

typedef struct aead_pipeline aead_pipeline;
struct aead_ctx;

/*
 * The four pipeline dispatch functions are in aead_pipeline.c (declared in
 * aead_state.h with the AEAD context they take); the rest of the AEAD
 * reaches the pipeline through these.
 */
/* "pipeline-tag": get (encryption, after final) and set (decryption, before final). */
int chapoly_pipeline_get_tags(struct aead_ctx *c, OSSL_PARAM *param);
int chapoly_pipeline_set_tags(struct aead_ctx *c, const OSSL_PARAM *param);
/* Everything the batch and the expected tags hold wiped (a pipeline init's RESET). */
void chapoly_pipeline_drop(aead_pipeline *p);
void chapoly_pipeline_free(aead_pipeline *p);
/* A deep copy (EVP_CIPHER_CTX_copy), NULL for NULL or on allocation failure. */
aead_pipeline *chapoly_pipeline_dup(const aead_pipeline *p);

#endif
