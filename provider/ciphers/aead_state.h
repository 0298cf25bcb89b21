/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The context of "ChaCha20-Poly1305" and "XChaCha20-Poly1305" and its
 * state machine: one transition table (aead_state.c, where it is drawn and
 * explained) from (state, event) to the next state and what happens, or to
 * a refusal and its reason. Beside the state only two flags: enc (the
 * direction of the last init) and tag_set (an expected tag; which message
 * it belongs to follows from the state).
 *
 * The AEAD's files: aead_chacha20_poly1305.c (contexts, init, update,
 * final, the dispatch tables), aead_state.c (the table), aead_params.c
 * (parameters), aead_tls.c (TLS 1.2 records), aead_pipeline.c (the
 * OpenSSL 3.5 pipeline API). The message itself (keystream, MAC, batch
 * shapes) is the AEAD core's (core/aead_core.h).
 */
#ifndef CHAPOLY_AEAD_STATE_H
#define CHAPOLY_AEAD_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/core.h>
#include <openssl/evp.h>
#include "prov.h"
#include "aead_core.h"
#include "aead_pipeline.h"

#define TLS_AAD_LEN EVP_AEAD_TLS1_AAD_LEN /* 13 */

/*
 * Before ST_START: no message in progress, so an expected tag set now is
 * for the next message. From ST_START on: a message (or TLS records) uses
 * the key and IV, and an expected tag is this message's.
 */
enum aead_state {
    ST_NEW,       /* neither key nor IV */
    ST_KEY,       /* a key, no IV */
    ST_IV,        /* an IV, no key */
    ST_FIXED,     /* a "tlsivfixed" IV, no key */
    ST_IDLE,      /* key and IV, no message started (an init's IV was refused) */
    ST_IDLE_FIX,  /* key and "tlsivfixed" IV, no record mode yet (the same) */
    ST_SEALED,    /* finalised encrypting: the tag can be read */
    ST_OPENED,    /* finalised decrypting (whatever the verdict) */
    ST_START,     /* a message under key and IV, nothing processed yet */
    ST_AAD,       /* AAD processed */
    ST_TEXT,      /* text processed */
    ST_TLS,       /* TLS 1.2 record mode: the IV is the fixed IV of records */
    ST_RECORD,    /* ... and a "tlsaad" waits for its record */
    /* pipeline mode (OpenSSL 3.5, aead_pipeline.c): from ST_PIPE on */
    ST_PIPE,      /* a batch under the key and the IVs, nothing processed yet */
    ST_PIPE_AAD,  /* AAD processed */
    ST_PIPE_TEXT, /* text processed */
    ST_PIPE_DONE, /* finalised (encrypting: the tags can be read), or failed */
    AEAD_NSTATES
};

/* The calls, as the state machine tells them apart (aead_state.c). */
enum aead_event {
    EV_KEY,        /* init with a key and no IV */
    EV_IV,         /* init with an IV and no key */
    EV_KEY_IV,     /* init with a key and an IV */
    EV_KEY_BAD_IV, /* init with a key and an IV of the wrong length: the key is kept */
    EV_FIXED_IV,   /* "tlsivfixed" set */
    EV_TLS_AAD,    /* "tlsaad" set */
    EV_EMPTY,      /* update with no bytes */
    EV_NO_INPUT,   /* update of bytes at NULL */
    EV_AAD,        /* update with out == NULL: AAD */
    EV_TEXT,       /* update with out != NULL: text */
    EV_SEAL,       /* final, encrypting */
    EV_OPEN,       /* final, decrypting, expected tag set */
    EV_NO_TAG,     /* final, decrypting, no expected tag */
    EV_PIPELINE,   /* pipeline init (OpenSSL 3.5) */
    EV_PIPE_AAD,   /* pipeline update with out == NULL: AAD */
    EV_PIPE_TEXT,  /* pipeline update with out != NULL: text */
    EV_PIPE_SEAL,  /* pipeline final, encrypting */
    EV_PIPE_OPEN,  /* pipeline final, decrypting, expected tags set */
    EV_PIPE_NO_TAG, /* pipeline final, decrypting, no expected tags */
    AEAD_NEVENTS
};

/* What a transition does besides moving to the next state. */
enum aead_action {
    ACT_NONE,   /* nothing here: the call does its own work (AAD, text, record...) */
    ACT_START,  /* a message starts under the key and the IV */
    ACT_DROP,   /* the used IV is dropped with its message */
    ACT_FINISH, /* the message is finalised: an expected tag is used up */
    ACT_RECORD, /* the update is the TLS record of the last "tlsaad" (aead_tls.c) */
    ACT_RESET   /* everything is dropped (message, records, a previous batch): a pipeline */
};

/* Refusals: an OpenSSL reason code and its message (aead_state.c). */
enum aead_why {
    WHY_NONE, WHY_NO_KEY, WHY_NO_IV, WHY_ENDED, WHY_RECORDS, WHY_AAD_LATE, WHY_NULL_IN,
    WHY_NO_TAG, WHY_NO_FINAL, WHY_TLS_KEY, WHY_IV_USED, WHY_PIPELINE, WHY_NOT_PIPE,
    WHY_PIPE_ENDED, WHY_PIPE_NO_TAG
};

typedef struct aead_step {
    uint8_t next; /* enum aead_state, also after a refusal */
    uint8_t act;  /* enum aead_action */
    uint8_t why;  /* enum aead_why: WHY_NONE, or the call is refused */
    uint8_t pad_; /* 4 bytes: with AEAD_NCOLS a row is a shift away (every call looks one up) */
} aead_step;

/* Columns of a row: the events, rounded up to a power of two (the rest is never looked up). */
#define AEAD_NCOLS 32
_Static_assert(AEAD_NEVENTS <= AEAD_NCOLS, "every event has its column");

extern const aead_step aead_steps[AEAD_NSTATES][AEAD_NCOLS];

typedef struct aead_ctx {
    chapoly_provctx *pc;
    const chapoly_kernels *k;
    size_t ivlen;               /* 12 or 24: fixed by the algorithm */
    enum aead_state state;
    int enc;                    /* flag: the direction of the last init */
    int tag_set;                /* flag: tag[] holds an expected tag (aead_state.c) */
    uint8_t key[CHACHA20_KEY_BYTES];    /* master key bytes */
    uint8_t iv[XCHACHA20_NONCE_BYTES];  /* as given; TLS 1.2: the fixed IV */
    chapoly_aead msg;           /* the message; its (sub)key serves TLS records too */
    uint8_t tag[POLY1305_TAG_BYTES];    /* computed (enc) or expected (dec) */
    size_t tag_len;
    /* TLS 1.2 record mode (ST_RECORD): the record's AAD and payload length */
    uint8_t tls_aad[TLS_AAD_LEN];
    size_t tls_payload;
    aead_pipeline *pipe;        /* OpenSSL 3.5 pipeline mode (aead_pipeline.c) */
} aead_ctx;

static inline const aead_step *aead_lookup(const aead_ctx *c, enum aead_event ev)
{
    return &aead_steps[c->state][ev];
}

/* DROP, FINISH and RESET (aead_state.c): the actions off the per-message path. */
void aead_act(aead_ctx *c, const aead_step *s);

/* The transition's action, then its state (s not a refusal). */
static inline void aead_apply(aead_ctx *c, const aead_step *s)
{
    if (s->act == ACT_START) {
        if (c->state >= ST_START) /* a tag set before ST_START is for this new message */
            c->tag_set = 0;
        if (c->ivlen == XCHACHA20_NONCE_BYTES)
            chapoly_aead_start_xchacha(&c->msg, c->k, c->key, c->iv);
        else
            chapoly_aead_start(&c->msg, c->k, c->key, c->iv);
    } else if (s->act != ACT_NONE) {
        aead_act(c, s);
    }
    c->state = (enum aead_state)s->next;
}

/*
 * Raises the refusal's error (naming the calling function, file and line)
 * and moves to its state; returns 0.
 */
#define aead_refuse(c, s) aead_refuse_at((c), (s), OPENSSL_FILE, OPENSSL_LINE, OPENSSL_FUNC)
CHAPOLY_COLD int aead_refuse_at(aead_ctx *c, const aead_step *s, const char *file, int line,
                                const char *func);

/* Pipeline mode: the states from ST_PIPE on. */
static inline int aead_in_pipeline(const aead_ctx *c)
{
    return c->state >= ST_PIPE;
}

/* ---- the other AEAD files' functions ---- */

/* aead_params.c */
OSSL_FUNC_cipher_get_params_fn aead_chacha20_poly1305_get_params;
OSSL_FUNC_cipher_get_params_fn aead_xchacha20_poly1305_get_params;
OSSL_FUNC_cipher_get_ctx_params_fn aead_get_ctx_params;
OSSL_FUNC_cipher_set_ctx_params_fn aead_set_ctx_params;
OSSL_FUNC_cipher_gettable_ctx_params_fn aead_chacha20_poly1305_gettable_ctx_params;
OSSL_FUNC_cipher_gettable_ctx_params_fn aead_xchacha20_poly1305_gettable_ctx_params;
OSSL_FUNC_cipher_settable_ctx_params_fn aead_chacha20_poly1305_settable_ctx_params;
OSSL_FUNC_cipher_settable_ctx_params_fn aead_xchacha20_poly1305_settable_ctx_params;

/* aead_tls.c: the record (ST_RECORD's updates) and the two TLS parameters */
int aead_tls_record(aead_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                    const unsigned char *in, size_t inl);
int aead_set_tls_aad(aead_ctx *c, const OSSL_PARAM *p);
int aead_set_tls_fixed_iv(aead_ctx *c, const OSSL_PARAM *p);

/*
 * aead_pipeline.c: the pipeline functions (3.0's headers have no types for
 * them), and leaving pipeline mode (an ordinary init: everything the
 * pipeline held wiped, then ST_NEW).
 */
void aead_pipeline_leave(aead_ctx *c);
int aead_pipeline_encrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                               size_t numpipes, const unsigned char **iv, size_t ivlen,
                               const OSSL_PARAM params[]);
int aead_pipeline_decrypt_init(void *vctx, const unsigned char *key, size_t keylen,
                               size_t numpipes, const unsigned char **iv, size_t ivlen,
                               const OSSL_PARAM params[]);
int aead_pipeline_update(void *vctx, size_t numpipes, unsigned char **out, size_t *outl,
                         const size_t *outsize, const unsigned char **in, const size_t *inl);
int aead_pipeline_final(void *vctx, size_t numpipes, unsigned char **out, size_t *outl,
                        const size_t *outsize);

#endif
