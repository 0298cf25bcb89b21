/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS 1.2 records for ChaCha20-Poly1305 (RFC 7905), the way libssl drives
 * an AEAD: "tlsivfixed" sets the 12-byte fixed IV, each record's 13-byte
 * "tlsaad" (sequence number, type, version, length) is set, and one
 * in-place update (or EVP_Cipher call) then seals or opens the whole
 * record, payload || tag, with the core's one-shot under the nonce fixed
 * IV XOR sequence number (record 0's nonce is the IV itself). Which states
 * accept the two parameters and the record: aead_state.c.
 */
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include "aead_state.h"

/* TLS 1.2 record (ST_RECORD): in place over payload || tag, tag appended or checked. */
int aead_tls_record(aead_ctx *c, unsigned char *out, size_t *outl, size_t outsize,
                    const unsigned char *in, size_t inl)
{
    uint8_t nonce[CHACHA20_NONCE_BYTES];
    size_t plen = c->tls_payload;
    int ok;

    c->state = ST_TLS; /* one record per "tlsaad", whatever happens to it */
    if (out == NULL || in == NULL || inl != plen + POLY1305_TAG_BYTES) {
        CHAPOLY_ERR(PROV_R_INVALID_INPUT_LENGTH,
                    "TLS record of %zu bytes does not match the AAD length %zu + tag",
                    inl, plen);
        return 0;
    }
    if (outsize < (c->enc ? inl : plen)) {
        CHAPOLY_ERR(PROV_R_OUTPUT_BUFFER_TOO_SMALL, "TLS record output buffer too small");
        return 0;
    }
    if (chacha20_partially_overlapping(out, in, inl)) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "partially overlapping buffers");
        return 0;
    }
    /* RFC 7905: nonce = fixed IV XOR (0^32 || 64-bit sequence number). */
    memcpy(nonce, c->iv, CHACHA20_NONCE_BYTES);
    for (int i = 0; i < 8; i++)
        nonce[4 + i] ^= c->tls_aad[i];
    chapoly_count_aead(c->pc, c->enc, 1, CHAPOLY_CTR_TLS_RECORDS); /* failed opens too */
    if (c->enc) {
        chapoly_aead_seal(c->k, out, out + plen, in, plen, c->tls_aad, TLS_AAD_LEN,
                          chapoly_aead_key(&c->msg), nonce);
        *outl = inl;
        return 1;
    }
    ok = chapoly_aead_open(c->k, out, in, plen, c->tls_aad, TLS_AAD_LEN, in + plen,
                           POLY1305_TAG_BYTES, chapoly_aead_key(&c->msg), nonce);
    if (!ok) {
        chapoly_cleanse(out, plen); /* never leave anything that looks like plaintext */
        *outl = 0;
        CHAPOLY_ERR(PROV_R_CIPHER_OPERATION_FAILED, "TLS record authentication failed");
        return 0;
    }
    *outl = plen;
    return 1;
}

/* "tlsaad": the next record's AAD; its length field gives the record's. */
int aead_set_tls_aad(aead_ctx *c, const OSSL_PARAM *p)
{
    const aead_step *s;
    size_t len;

    if (c->ivlen != CHACHA20_NONCE_BYTES) {
        CHAPOLY_ERR(PROV_R_NOT_SUPPORTED, "TLS record mode is for ChaCha20-Poly1305 only");
        return 0;
    }
    if (p->data_type != OSSL_PARAM_OCTET_STRING || p->data == NULL ||
        p->data_size != TLS_AAD_LEN) {
        CHAPOLY_ERR(PROV_R_INVALID_DATA, "TLS AAD must be %d bytes", TLS_AAD_LEN);
        return 0;
    }
    s = aead_lookup(c, EV_TLS_AAD);
    if (s->why != WHY_NONE)
        return aead_refuse(c, s);
    memcpy(c->tls_aad, p->data, TLS_AAD_LEN);
    len = ((size_t)c->tls_aad[TLS_AAD_LEN - 2] << 8) | c->tls_aad[TLS_AAD_LEN - 1];
    if (!c->enc) {
        /* On open the length field counts the tag; the MAC input does not. */
        if (len < POLY1305_TAG_BYTES) {
            CHAPOLY_ERR(PROV_R_INVALID_INPUT_LENGTH, "TLS record shorter than the tag");
            return 0;
        }
        len -= POLY1305_TAG_BYTES;
        c->tls_aad[TLS_AAD_LEN - 2] = (uint8_t)(len >> 8);
        c->tls_aad[TLS_AAD_LEN - 1] = (uint8_t)len;
    }
    c->tls_payload = len;
    aead_apply(c, s);
    return 1;
}

/* "tlsivfixed": the fixed IV of the records; with a key, record mode starts. */
int aead_set_tls_fixed_iv(aead_ctx *c, const OSSL_PARAM *p)
{
    const aead_step *s;

    if (c->ivlen != CHACHA20_NONCE_BYTES || p->data_type != OSSL_PARAM_OCTET_STRING ||
        p->data == NULL || p->data_size != CHACHA20_NONCE_BYTES) {
        CHAPOLY_ERR(PROV_R_INVALID_IV_LENGTH, "fixed TLS IV must be 12 bytes");
        return 0;
    }
    s = aead_lookup(c, EV_FIXED_IV);
    if (s->why != WHY_NONE) /* pipeline mode */
        return aead_refuse(c, s);
    memcpy(c->iv, p->data, CHACHA20_NONCE_BYTES);
    aead_apply(c, s);
    return 1;
}
