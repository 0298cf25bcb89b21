/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The AEAD context's state machine (states and events: aead_state.h), as
 * one table: every (state, event) pair and its outcome.
 *
 * Rules the table implements:
 *  - An IV starts one message. Once a message has used it (AAD or text
 *    processed, a final, TLS records), an init with a key and no IV drops
 *    it (DROP: back to ST_KEY), so a new key never restarts an old nonce.
 *    An IV no message has used yet (ST_START, or an IV given before the
 *    key) starts the message when a key arrives.
 *  - AAD first, then text; a final ends the message, and nothing but an
 *    init with a key or an IV starts another.
 *  - TLS 1.2 records (ChaCha20-Poly1305 only: aead_tls.c): each in-place
 *    update after a "tlsaad" seals or opens a whole record with the core's
 *    one-shot, under the nonce fixed IV XOR sequence number. Records and
 *    streaming messages never share an IV: "tlsaad" is accepted only while
 *    no message has used the IV (ST_START) or in record mode, and an IV set
 *    as "tlsivfixed" starts record mode directly. Only an init with a new
 *    IV leaves it.
 *  - An expected tag (flag tag_set) belongs to one message: the one in
 *    progress when it was set (states from ST_START on), or, if none was
 *    (states before ST_START), the next one. So START and DROP keep a tag
 *    set before ST_START (it is the next message's) and forget one set
 *    after (it was the previous message's); a final uses it up (FIN), and a
 *    pipeline init forgets it (RESET). Setting or reading a tag changes no
 *    state: a tag is read only in ST_SEALED, encrypting (aead_params.c).
 *  - Pipeline mode (OpenSSL 3.5, aead_pipeline.c) is the states from
 *    ST_PIPE on: a pipeline init drops whatever the context held (RESET)
 *    and its batch goes ST_PIPE, ST_PIPE_AAD, ST_PIPE_TEXT, ST_PIPE_DONE as
 *    the pipeline calls go, with the rules of one message (AAD first, then
 *    text; a final ends the batch). The table refuses the ordinary update
 *    and final and the TLS parameters in those states, and the pipeline
 *    calls in every other state, so no call needs a check of its own. An
 *    ordinary init leaves pipeline mode first (aead_pipeline_leave: all
 *    wiped, ST_NEW), then takes its cell in ST_NEW's row: the pipeline
 *    rows' init cells are never looked up (they refuse). A decryption's
 *    final refused for want of tags (or, aead_pipeline.c, of arrays) fails
 *    the batch: every pipe's text is wiped, ST_PIPE_DONE.
 *
 * Cells: GO(s) the call does its work, then state s. START(s) the message
 * starts (the core's start with key and IV), then s (ST_START, or ST_TLS for
 * a "tlsivfixed" IV). DROP the IV and its message are dropped (the core
 * clears the message), then ST_KEY. FIN(s) the message is finalised, then s.
 * RECORD the update is the pending TLS record, then ST_TLS. RESET all
 * dropped, then ST_PIPE (a pipeline init whose arguments then fail leaves
 * again: aead_pipeline_leave). NO(why) refused: the state stays, the error
 * is why's (why[] below); NO_FINAL also ends the pending record (ST_TLS),
 * PIPE_FAIL the batch (ST_PIPE_DONE; the caller wipes every pipe's text).
 * The calls rely on these kinds per column: init and the TLS parameters
 * GO, START, DROP or NO; update GO (EMPTY: to the same state), RECORD or
 * NO; final FIN or NO; pipeline init RESET; pipeline update GO or NO;
 * pipeline final FIN or NO.
 * Argument checks (lengths, buffers, the parameter's type) come before the
 * table for init and parameters, after it for update and final (pipeline
 * init: after its RESET), and a call refused by them changes nothing,
 * except that a refused IV keeps the key of its init (EV_KEY_BAD_IV), a
 * refused record still ends (ST_TLS), a refused pipeline init leaves
 * pipeline mode and a refused pipeline final fails a decryption (as
 * PIPE_FAIL).
 */
#include <openssl/proverr.h>
#include "aead_state.h"

#define GO(s) { ST_##s, ACT_NONE, WHY_NONE, 0 }
#define START(s) { ST_##s, ACT_START, WHY_NONE, 0 }
#define DROP { ST_KEY, ACT_DROP, WHY_NONE, 0 }
#define FIN(s) { ST_##s, ACT_FINISH, WHY_NONE, 0 }
#define RECORD { ST_TLS, ACT_RECORD, WHY_NONE, 0 }
#define RESET { ST_PIPE, ACT_RESET, WHY_NONE, 0 }
#define NO_(s, w) { ST_##s, ACT_NONE, WHY_##w, 0 }
#define NO_FINAL { ST_TLS, ACT_NONE, WHY_NO_FINAL, 0 }
#define PIPE_FAIL { ST_PIPE_DONE, ACT_NONE, WHY_PIPE_NO_TAG, 0 }
/*
 * A row: state s and its outcome per event, in the order of the header
 * below. The pipeline calls are refused in every such row.
 */
#define ROW(s, key, iv, key_iv, key_bad_iv, fixed_iv, tls_aad, empty, no_input, aad, text,       \
            seal, open, no_tag, pipeline)                                                      \
    [ST_##s] = { [EV_KEY] = key, [EV_IV] = iv, [EV_KEY_IV] = key_iv,                           \
                 [EV_KEY_BAD_IV] = key_bad_iv, [EV_FIXED_IV] = fixed_iv,                       \
                 [EV_TLS_AAD] = tls_aad, [EV_EMPTY] = empty, [EV_NO_INPUT] = no_input,         \
                 [EV_AAD] = aad, [EV_TEXT] = text, [EV_SEAL] = seal, [EV_OPEN] = open,         \
                 [EV_NO_TAG] = no_tag, [EV_PIPELINE] = pipeline, [EV_PIPE_AAD] = NO(NOT_PIPE), \
                 [EV_PIPE_TEXT] = NO(NOT_PIPE), [EV_PIPE_SEAL] = NO(NOT_PIPE),                 \
                 [EV_PIPE_OPEN] = NO(NOT_PIPE), [EV_PIPE_NO_TAG] = NO(NOT_PIPE) }
/*
 * A row of pipeline mode: its outcome per pipeline call (update AAD, update
 * text, final sealing, opening, opening without tags); every ordinary call
 * and TLS parameter is refused, a pipeline init RESETs.
 */
#define PIPE_ROW(s, aad, text, seal, open, no_tag)                                             \
    [ST_##s] = { [EV_KEY] = NO(PIPELINE), [EV_IV] = NO(PIPELINE),                              \
                 [EV_KEY_IV] = NO(PIPELINE), [EV_KEY_BAD_IV] = NO(PIPELINE),                   \
                 [EV_FIXED_IV] = NO(PIPELINE), [EV_TLS_AAD] = NO(PIPELINE),                    \
                 [EV_EMPTY] = NO(PIPELINE), [EV_NO_INPUT] = NO(PIPELINE),                      \
                 [EV_AAD] = NO(PIPELINE), [EV_TEXT] = NO(PIPELINE), [EV_SEAL] = NO(PIPELINE),  \
                 [EV_OPEN] = NO(PIPELINE), [EV_NO_TAG] = NO(PIPELINE), [EV_PIPELINE] = RESET,  \
                 [EV_PIPE_AAD] = aad, [EV_PIPE_TEXT] = text, [EV_PIPE_SEAL] = seal,            \
                 [EV_PIPE_OPEN] = open, [EV_PIPE_NO_TAG] = no_tag }

/* NO(why) in the row of state s: refused, still s. */
#define NO(w) NO_(SAME_, w)
enum { ST_SAME_ = 0xff };

/* A new state or event needs its row or column: ROW takes every event by name. */
_Static_assert(AEAD_NSTATES == 17 && AEAD_NEVENTS == 19, "every row and column below");

const aead_step aead_steps[AEAD_NSTATES][AEAD_NCOLS] = {
/*      event: KEY           IV            KEY_IV        KEY_BAD_IV    FIXED_IV      TLS_AAD
 * (update)    EMPTY         NO_INPUT      AAD           TEXT
 * (final)     SEAL          OPEN          NO_TAG        PIPELINE (init)
 * state */
ROW(NEW,      GO(KEY),      GO(IV),       START(START), GO(KEY),      GO(FIXED),    NO(TLS_KEY),
              NO(NO_KEY),   NO(NO_KEY),   NO(NO_KEY),   NO(NO_KEY),
              NO(NO_KEY),   NO(NO_KEY),   NO(NO_KEY),   RESET),
ROW(KEY,      GO(KEY),      START(START), START(START), GO(KEY),      START(TLS),   NO(TLS_KEY),
              NO(NO_IV),    NO(NO_IV),    NO(NO_IV),    NO(NO_IV),
              NO(NO_IV),    NO(NO_IV),    NO(NO_IV),    RESET),
ROW(IV,       START(START), GO(IV),       START(START), GO(IDLE),     GO(FIXED),    NO(TLS_KEY),
              NO(NO_KEY),   NO(NO_KEY),   NO(NO_KEY),   NO(NO_KEY),
              NO(NO_KEY),   NO(NO_KEY),   NO(NO_KEY),   RESET),
ROW(FIXED,    START(TLS),   GO(IV),       START(START), GO(IDLE_FIX), GO(FIXED),    NO(TLS_KEY),
              NO(NO_KEY),   NO(NO_KEY),   NO(NO_KEY),   NO(NO_KEY),
              NO(NO_KEY),   NO(NO_KEY),   NO(NO_KEY),   RESET),
ROW(IDLE,     START(START), START(START), START(START), GO(IDLE),     START(TLS),   NO(IV_USED),
              NO(NO_IV),    NO(NO_IV),    NO(NO_IV),    NO(NO_IV),
              NO(NO_IV),    NO(NO_IV),    NO(NO_IV),    RESET),
ROW(IDLE_FIX, START(TLS),   START(START), START(START), GO(IDLE_FIX), START(TLS),   NO(IV_USED),
              NO(NO_IV),    NO(NO_IV),    NO(NO_IV),    NO(NO_IV),
              NO(NO_IV),    NO(NO_IV),    NO(NO_IV),    RESET),
ROW(SEALED,   DROP,         START(START), START(START), GO(SEALED),   START(TLS),   NO(IV_USED),
              NO(ENDED),    NO(ENDED),    NO(ENDED),    NO(ENDED),
              NO(ENDED),    NO(ENDED),    NO(ENDED),    RESET),
ROW(OPENED,   DROP,         START(START), START(START), GO(OPENED),   START(TLS),   NO(IV_USED),
              NO(ENDED),    NO(ENDED),    NO(ENDED),    NO(ENDED),
              NO(ENDED),    NO(ENDED),    NO(ENDED),    RESET),
ROW(START,    START(START), START(START), START(START), GO(START),    START(TLS),   GO(RECORD),
              GO(START),    NO(NULL_IN),  GO(AAD),      GO(TEXT),
              FIN(SEALED),  FIN(OPENED),  NO(NO_TAG),   RESET),
ROW(AAD,      DROP,         START(START), START(START), GO(AAD),      START(TLS),   NO(IV_USED),
              GO(AAD),      NO(NULL_IN),  GO(AAD),      GO(TEXT),
              FIN(SEALED),  FIN(OPENED),  NO(NO_TAG),   RESET),
ROW(TEXT,     DROP,         START(START), START(START), GO(TEXT),     START(TLS),   NO(IV_USED),
              GO(TEXT),     NO(NULL_IN),  NO(AAD_LATE), GO(TEXT),
              FIN(SEALED),  FIN(OPENED),  NO(NO_TAG),   RESET),
ROW(TLS,      DROP,         START(START), START(START), GO(TLS),      START(TLS),   GO(RECORD),
              NO(RECORDS),  NO(RECORDS),  NO(RECORDS),  NO(RECORDS),
              NO(RECORDS),  NO(RECORDS),  NO(RECORDS),  RESET),
ROW(RECORD,   DROP,         START(START), START(START), GO(RECORD),   START(TLS),   GO(RECORD),
              RECORD,       RECORD,       RECORD,       RECORD,
              NO_FINAL,     NO_FINAL,     NO_FINAL,     RESET),
/*  pipeline call: AAD             TEXT            SEAL            OPEN            NO_TAG */
PIPE_ROW(PIPE,      GO(PIPE_AAD),   GO(PIPE_TEXT),  FIN(PIPE_DONE), FIN(PIPE_DONE), PIPE_FAIL),
PIPE_ROW(PIPE_AAD,  GO(PIPE_AAD),   GO(PIPE_TEXT),  FIN(PIPE_DONE), FIN(PIPE_DONE), PIPE_FAIL),
PIPE_ROW(PIPE_TEXT, NO(AAD_LATE),   GO(PIPE_TEXT),  FIN(PIPE_DONE), FIN(PIPE_DONE), PIPE_FAIL),
PIPE_ROW(PIPE_DONE, NO(PIPE_ENDED), NO(PIPE_ENDED), NO(PIPE_ENDED), NO(PIPE_ENDED), NO(PIPE_ENDED)),
};

static const struct {
    int reason;
    const char *text;
} why[] = {
    [WHY_NO_KEY] = { PROV_R_NO_KEY_SET, "initialise with a 32-byte key first" },
    [WHY_NO_IV] = { PROV_R_CIPHER_OPERATION_FAILED, "no IV set: initialise with an IV first" },
    [WHY_ENDED] = { PROV_R_CIPHER_OPERATION_FAILED,
                    "message already finalised; re-initialise with a new IV" },
    [WHY_RECORDS] = { PROV_R_CIPHER_OPERATION_FAILED,
                      "TLS record mode: the IV serves records only; re-initialise with a new "
                      "IV for a message" },
    [WHY_AAD_LATE] = { PROV_R_CIPHER_OPERATION_FAILED, "AAD after data is not allowed" },
    [WHY_NULL_IN] = { PROV_R_INVALID_DATA, "NULL input" },
    [WHY_NO_TAG] = { PROV_R_TAG_NOT_SET, "decryption needs the expected tag before final" },
    [WHY_NO_FINAL] = { PROV_R_CIPHER_OPERATION_FAILED, "TLS record mode has no final" },
    [WHY_TLS_KEY] = { PROV_R_NO_KEY_SET, "TLS record mode needs the key and fixed IV first" },
    [WHY_IV_USED] = { PROV_R_CIPHER_OPERATION_FAILED,
                      "TLS record mode: a message has used this IV; re-initialise with the "
                      "fixed IV first" },
    [WHY_PIPELINE] = { PROV_R_CIPHER_OPERATION_FAILED,
                       "the context is initialised for a pipeline: use "
                       "EVP_CipherPipelineUpdate/Final, or an ordinary init first" },
    [WHY_NOT_PIPE] = { PROV_R_CIPHER_OPERATION_FAILED,
                       "the context is not initialised for a pipeline "
                       "(EVP_CipherPipelineEncryptInit/DecryptInit first)" },
    [WHY_PIPE_ENDED] = { PROV_R_CIPHER_OPERATION_FAILED,
                         "the pipeline is finalised; initialise it again with new IVs" },
    [WHY_PIPE_NO_TAG] = { PROV_R_TAG_NOT_SET,
                          "decryption needs the expected tags (\"pipeline-tag\") before "
                          "final; every pipe's plaintext is wiped" },
};

int aead_refuse_at(aead_ctx *c, const aead_step *s, const char *file, int line,
                   const char *func)
{
    chapoly_raise(file, line, func, why[s->why].reason, "%s", why[s->why].text);
    if (s->next != ST_SAME_)
        c->state = (enum aead_state)s->next;
    return 0;
}

void aead_act(aead_ctx *c, const aead_step *s)
{
    switch (s->act) {
    case ACT_DROP:
        if (c->state >= ST_START) /* not a tag set before ST_START: the next message's */
            c->tag_set = 0;
        chapoly_aead_clear(&c->msg); /* its MAC state, keystream and (sub)key */
        break;
    case ACT_FINISH:
        c->tag_set = 0;
        break;
    case ACT_RESET:
        if (aead_in_pipeline(c))
            chapoly_pipeline_drop(c->pipe); /* the previous batch */
        else if (c->state != ST_NEW)
            chapoly_aead_clear(&c->msg);
        c->tag_set = 0;
        break;
    }
}
