/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ChaCha20-Poly1305 and XChaCha20-Poly1305 through EVP, streamed in pieces
 * chosen by the input, against one-shot oracles: OpenSSL's default provider
 * for ChaCha20-Poly1305, libsodium for XChaCha20-Poly1305 (without
 * libsodium: HChaCha20 recovered from the default provider's ChaCha20 block
 * function, then the default ChaCha20-Poly1305).
 *
 * Input layout (an exhausted input reads as zeros):
 *   u8  alg/level: bit 0 XChaCha, bits 1..7 kernel level index
 *   key[32], nonce[12 or 24]
 *   u8  tag length: bit 7 set -> 16, else 1 + (b & 15)
 *   u8  forgery: bits 0-2 -> 0..3 none, 4 tag bit, 5 ciphertext bit,
 *       6 AAD bit, 7 ciphertext one byte short; bit 3 (ChaCha20-Poly1305
 *       only) TLS 1.2 record mode instead of streaming: the record is sealed
 *       and opened in place with "tlsaad" by chapoly and by the default
 *       provider, which must agree byte for byte, and a forged record must
 *       fail with its output zeroed; then u16 bit position
 *   u8  modes: bits 0-1 when the decrypt tag is set (init params / after
 *       init / between AAD and text / before final), bits 2-3 decrypt
 *       context (new / reuse with IV only / reuse with key and IV), bit 4
 *       encrypt final through EVP_Cipher, bit 5 decrypt final through
 *       EVP_Cipher, bit 6 tag read by ctrl instead of params, bit 7 seal a
 *       second message on the used context with another nonce
 *   fz_len AAD length, fz_len text length, u8 content pattern, u64 seed
 *   then the piece program shared by every pass: per piece u8 control
 *   (bit 0 in place, bit 1 EVP_Cipher, bit 2 duplicate the context here,
 *   bit 3 zero-length update first, bit 4 probe late AAD on a throwaway
 *   copy) and fz_len size; when the program runs out, the rest goes in one
 *   piece.
 *
 * Aborts on: any output or tag differing from the oracle, an authentic
 * message rejected, a forged one accepted, a failure without a queued error,
 * an update whose outl differs from inl, a final with outl != 0, late AAD
 * accepted.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#ifdef CHAPOLY_HAVE_SODIUM
#include <sodium.h>
#endif
#include "fuzz_common.h"

#define MAX_AAD 4096
#define MAX_TEXT 40000

static EVP_CIPHER *ours[FZ_MAX_LEVELS][2]; /* [level][xchacha] */
static EVP_CIPHER *oracle_aead, *oracle_chacha;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_setup();
    for (int i = 0; i < fz_nlevels; i++) {
        ours[i][0] = EVP_CIPHER_fetch(fz_levels[i].ctx, "ChaCha20-Poly1305", "provider=chapoly");
        ours[i][1] = EVP_CIPHER_fetch(fz_levels[i].ctx, "XChaCha20-Poly1305", "provider=chapoly");
        if (ours[i][0] == NULL || ours[i][1] == NULL) {
            ERR_print_errors_fp(stderr);
            exit(1);
        }
    }
    oracle_aead = EVP_CIPHER_fetch(fz_oracle_ctx, "ChaCha20-Poly1305", "provider=default");
    oracle_chacha = EVP_CIPHER_fetch(fz_oracle_ctx, "ChaCha20", "provider=default");
    if (oracle_aead == NULL || oracle_chacha == NULL) {
        ERR_print_errors_fp(stderr);
        exit(1);
    }
#ifdef CHAPOLY_HAVE_SODIUM
    if (sodium_init() < 0)
        exit(1);
#endif
    return 0;
}

/* ---- oracles ---- */

static void default_seal(uint8_t *ct, uint8_t tag[16], const uint8_t key[32],
                         const uint8_t nonce[12], const uint8_t *aad, size_t aadlen,
                         const uint8_t *pt, size_t len)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int outl, ok;

    ok = c != NULL && EVP_EncryptInit_ex2(c, oracle_aead, key, nonce, NULL);
    if (ok && aadlen > 0)
        ok = EVP_EncryptUpdate(c, NULL, &outl, aad, (int)aadlen);
    if (ok && len > 0)
        ok = EVP_EncryptUpdate(c, ct, &outl, pt, (int)len);
    ok = ok && EVP_EncryptFinal_ex(c, ct + len, &outl) &&
         EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag) > 0;
    EVP_CIPHER_CTX_free(c);
    FZ_ASSERT(ok, "the default provider oracle failed");
}

#ifndef CHAPOLY_HAVE_SODIUM
static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/*
 * HChaCha20 from the default ChaCha20: a keystream block is rounds(S) + S,
 * HChaCha20 returns rows 0 and 3 of rounds(S), with S's row 3 = the 16-byte
 * nonce (what OpenSSL's IV is: counter word then nonce words).
 */
static void default_hchacha20(uint8_t sub[32], const uint8_t key[32], const uint8_t n16[16])
{
    static const uint32_t sigma[4] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
    uint8_t ks[64] = { 0 };
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int outl, ok;

    ok = c != NULL && EVP_EncryptInit_ex2(c, oracle_chacha, key, n16, NULL) &&
         EVP_EncryptUpdate(c, ks, &outl, ks, 64);
    EVP_CIPHER_CTX_free(c);
    FZ_ASSERT(ok, "the default ChaCha20 oracle failed");
    for (int j = 0; j < 4; j++) {
        uint32_t a = le32(ks + 4 * j) - sigma[j];
        uint32_t b = le32(ks + 48 + 4 * j) - le32(n16 + 4 * j);

        for (int i = 0; i < 4; i++) {
            sub[4 * j + i] = (uint8_t)(a >> (8 * i));
            sub[16 + 4 * j + i] = (uint8_t)(b >> (8 * i));
        }
    }
}
#endif

static void oracle_seal(int xchacha, uint8_t *ct, uint8_t tag[16], const uint8_t key[32],
                        const uint8_t *nonce, const uint8_t *aad, size_t aadlen,
                        const uint8_t *pt, size_t len)
{
    if (!xchacha) {
        default_seal(ct, tag, key, nonce, aad, aadlen, pt, len);
        return;
    }
#ifdef CHAPOLY_HAVE_SODIUM
    unsigned long long maclen = 0;

    crypto_aead_xchacha20poly1305_ietf_encrypt_detached(ct, tag, &maclen, pt, len, aad, aadlen,
                                                        NULL, nonce, key);
    FZ_ASSERT(maclen == 16, "libsodium tag length %llu", maclen);
#else
    uint8_t sub[32], n12[12] = { 0 };

    default_hchacha20(sub, key, nonce);
    memcpy(n12 + 4, nonce + 16, 8);
    default_seal(ct, tag, sub, n12, aad, aadlen, pt, len);
#endif
}

/* ---- streaming through chapoly ---- */

typedef struct run {
    EVP_CIPHER_CTX *ctx[2]; /* the context and, after a dup, its copy */
    uint8_t *out[2];
    int n;
    int dupped;
} run;

static void run_free_extra(run *r)
{
    if (r->n == 2) {
        EVP_CIPHER_CTX_free(r->ctx[1]);
        r->ctx[1] = NULL;
        r->n = 1;
    }
    r->dupped = 0;
}

/* The copy inherits the text produced so far (text_done bytes). */
static void maybe_dup(run *r, uint8_t ctl, size_t text_done)
{
    if (!(ctl & 4) || r->dupped)
        return;
    r->ctx[1] = EVP_CIPHER_CTX_new();
    FZ_ASSERT(r->ctx[1] != NULL && EVP_CIPHER_CTX_copy(r->ctx[1], r->ctx[0]),
              "EVP_CIPHER_CTX_copy failed");
    memcpy(r->out[1], r->out[0], text_done);
    r->n = 2;
    r->dupped = 1;
}

/* Late AAD must be refused; probed on a copy so the real stream is untouched. */
static void probe_late_aad(run *r)
{
    EVP_CIPHER_CTX *t = EVP_CIPHER_CTX_new();
    uint8_t b = 0x5a;
    int outl = -1;

    FZ_ASSERT(t != NULL && EVP_CIPHER_CTX_copy(t, r->ctx[0]), "EVP_CIPHER_CTX_copy failed");
    FZ_ASSERT(!EVP_CipherUpdate(t, NULL, &outl, &b, 1), "AAD after data was accepted");
    FZ_ASSERT(fz_error_queued(), "late AAD refused without an error queued");
    EVP_CIPHER_CTX_free(t);
}

static void piece(run *r, int is_aad, const uint8_t *in, size_t off, size_t n, uint8_t ctl)
{
    for (int k = 0; k < r->n; k++) {
        EVP_CIPHER_CTX *c = r->ctx[k];
        uint8_t *o = is_aad ? NULL : r->out[k] + off;
        const uint8_t *src = in + off;
        int outl;

        if (ctl & 8) { /* a zero-length update is a no-op */
            outl = -1;
            FZ_ASSERT(EVP_CipherUpdate(c, o, &outl, src, 0) && outl == 0,
                      "zero-length %s update: outl %d", is_aad ? "AAD" : "data", outl);
        }
        if (!is_aad && (ctl & 1)) {
            memmove(o, src, n);
            src = o;
        }
        if ((ctl & 2) && n > 0) {
            int rc = EVP_Cipher(c, o, src, (unsigned int)n);

            FZ_ASSERT(rc == (int)n, "EVP_Cipher %s piece of %zu at %zu returned %d",
                      is_aad ? "AAD" : "data", n, off, rc);
        } else {
            outl = -1;
            FZ_ASSERT(EVP_CipherUpdate(c, o, &outl, src, (int)n),
                      "%s update of %zu at %zu failed", is_aad ? "AAD" : "data", n, off);
            FZ_ASSERT(outl == (int)n, "%s update of %zu at %zu: outl %d",
                      is_aad ? "AAD" : "data", n, off, outl);
        }
    }
}

/* Split [0, total) by the program; calls piece() for each part. */
static void feed(run *r, fz_in *prog, int is_aad, const uint8_t *in, size_t total,
                 int late_aad_ok)
{
    size_t off = 0;

    while (off < total) {
        uint8_t ctl = 0;
        size_t n = total - off;

        if (prog->n > 0) {
            ctl = fz_u8(prog);
            n = fz_len(prog, total - off);
        }
        maybe_dup(r, ctl, is_aad ? 0 : off);
        piece(r, is_aad, in, off, n, ctl);
        off += n;
        if ((ctl & 16) && !is_aad && late_aad_ok && off > 0)
            probe_late_aad(r);
    }
}

static void set_tag(run *r, const uint8_t *tag, size_t taglen)
{
    for (int k = 0; k < r->n; k++) {
        OSSL_PARAM p[2] = { OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG,
                                                              (void *)tag, taglen),
                            OSSL_PARAM_construct_end() };

        FZ_ASSERT(EVP_CIPHER_CTX_set_params(r->ctx[k], p), "setting a %zu-byte tag failed", taglen);
    }
}

/* Final on every context; returns a bit mask of the contexts that succeeded. */
static unsigned finals(run *r, int via_cipher)
{
    unsigned okmask = 0;

    for (int k = 0; k < r->n; k++) {
        uint8_t dummy[32];
        int outl = -1, ok;

        if (via_cipher) {
            int rc = EVP_Cipher(r->ctx[k], NULL, NULL, 0);

            FZ_ASSERT(rc == 0 || rc == -1, "EVP_Cipher final returned %d", rc);
            ok = rc == 0;
        } else {
            ok = EVP_CipherFinal_ex(r->ctx[k], dummy, &outl);
            FZ_ASSERT(!ok || outl == 0, "final succeeded with outl %d", outl);
        }
        if (ok)
            okmask |= 1u << k;
        else
            FZ_ASSERT(fz_error_queued(), "final failed without an error queued");
    }
    return okmask;
}

static void get_tag(EVP_CIPHER_CTX *c, uint8_t *tag, size_t taglen, int via_ctrl)
{
    int ok;

    if (via_ctrl) {
        ok = EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, (int)taglen, tag) > 0;
    } else {
        OSSL_PARAM p[2] = { OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag,
                                                              taglen),
                            OSSL_PARAM_construct_end() };
        ok = EVP_CIPHER_CTX_get_params(c, p);
    }
    FZ_ASSERT(ok, "reading a %zu-byte tag after a successful final failed", taglen);
}

/* Encrypt on r->ctx[0] (already created), check against the oracle. */
static void seal_and_check(run *r, const EVP_CIPHER *cipher, int init_key, const uint8_t *key,
                           const uint8_t *nonce, const uint8_t *aad, size_t aadlen,
                           const uint8_t *pt, size_t len, const uint8_t *want_ct,
                           const uint8_t want_tag[16], size_t taglen, fz_in *prog,
                           uint8_t modes)
{
    FZ_ASSERT(EVP_CipherInit_ex2(r->ctx[0], cipher, init_key ? key : NULL, nonce, 1, NULL),
              "encrypt init failed");
    feed(r, prog, 1, aad, aadlen, 0);
    feed(r, prog, 0, pt, len, 1);
    unsigned ok = finals(r, modes & 0x10);
    FZ_ASSERT(ok == (1u << r->n) - 1, "encrypt final failed (mask %u of %d)", ok, r->n);
    for (int k = 0; k < r->n; k++) {
        uint8_t tag[16];

        if (len > 0 && memcmp(r->out[k], want_ct, len) != 0) {
            size_t i = 0;

            while (r->out[k][i] == want_ct[i])
                i++;
            fz_hexdump("ours", r->out[k] + i, len - i < 64 ? len - i : 64);
            fz_hexdump("oracle", want_ct + i, len - i < 64 ? len - i : 64);
            FZ_ASSERT(0, "ciphertext differs at byte %zu of %zu (context %d)", i, len, k);
        }
        get_tag(r->ctx[k], tag, taglen, modes & 0x40);
        if (memcmp(tag, want_tag, taglen) != 0) {
            fz_hexdump("ours", tag, taglen);
            fz_hexdump("oracle", want_tag, taglen);
            FZ_ASSERT(0, "tag differs (context %d)", k);
        }
    }
}

/* ---- TLS 1.2 record mode ---- */

/* One record in place: "tlsaad" then a single EVP_Cipher over payload || tag. */
static int tls_record(const EVP_CIPHER *c, int enc, const uint8_t key[32], const uint8_t iv[12],
                      const uint8_t hdr[11], uint8_t *buf, size_t payload, int *ret)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t aad[13];
    size_t field = payload + (enc ? 0 : 16);
    int ok;

    memcpy(aad, hdr, 11);
    aad[11] = (uint8_t)(field >> 8);
    aad[12] = (uint8_t)field;
    ok = x != NULL && EVP_CipherInit_ex2(x, c, key, iv, enc, NULL) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) == 16;
    *ret = ok ? EVP_Cipher(x, buf, buf, (unsigned int)(payload + 16)) : -2;
    EVP_CIPHER_CTX_free(x);
    return ok;
}

static void tls_case(const EVP_CIPHER *c, const uint8_t key[32], const uint8_t iv[12],
                     const uint8_t hdr[11], const uint8_t *pt, size_t len, unsigned forge,
                     uint16_t bitpos)
{
    uint8_t *mine = fz_malloc(len + 16), *want = fz_malloc(len + 16);
    int rc, wrc;

    memcpy(mine, pt, len);
    memcpy(want, pt, len);
    FZ_ASSERT(tls_record(oracle_aead, 1, key, iv, hdr, want, len, &wrc) && wrc == (int)(len + 16),
              "the default provider's TLS seal failed (%d)", wrc);
    FZ_ASSERT(tls_record(c, 1, key, iv, hdr, mine, len, &rc), "TLS seal setup failed");
    FZ_ASSERT(rc == (int)(len + 16), "TLS seal of %zu returned %d", len, rc);
    if (memcmp(mine, want, len + 16) != 0) {
        size_t i = 0;

        while (mine[i] == want[i])
            i++;
        fz_hexdump("ours", mine + i, len + 16 - i < 64 ? len + 16 - i : 64);
        fz_hexdump("oracle", want + i, len + 16 - i < 64 ? len + 16 - i : 64);
        FZ_ASSERT(0, "sealed TLS record differs at byte %zu of %zu", i, len + 16);
    }

    int authentic = forge < 4 || (forge >= 5 && len == 0);
    if (!authentic) /* flip a bit of the tag (4, 6, 7) or of the ciphertext (5) */
        mine[forge == 5 ? (bitpos >> 3) % len : len + (bitpos >> 3) % 16] ^=
            (uint8_t)(1u << (bitpos & 7));
    FZ_ASSERT(tls_record(c, 0, key, iv, hdr, mine, len, &rc), "TLS open setup failed");
    if (authentic) {
        FZ_ASSERT(rc == (int)len, "authentic TLS record of %zu rejected (%d)", len, rc);
        FZ_ASSERT(len == 0 || memcmp(mine, pt, len) == 0, "opened TLS record differs");
    } else {
        size_t nz = 0;

        FZ_ASSERT(rc == -1, "forged TLS record of %zu: EVP_Cipher returned %d", len, rc);
        FZ_ASSERT(fz_error_queued(), "forged TLS record refused without an error queued");
        while (nz < len && mine[nz] == 0)
            nz++;
        FZ_ASSERT(nz == len, "forged TLS record: output byte %zu not zeroed", nz);
    }
    free(mine);
    free(want);
}

/* The streaming case: seal, open (maybe forged), maybe a second message. */
typedef struct scase {
    int x, lvi;
    const uint8_t *key, *nonce;
    size_t ivlen, taglen;
    uint8_t *aad;
    size_t aadlen;
    const uint8_t *pt;
    size_t len;
    unsigned forge;
    uint16_t bitpos;
    uint8_t modes;
} scase;

static void stream_case(const scase *sc, fz_in *in)
{
    size_t len = sc->len, taglen = sc->taglen;
    uint8_t *ct = fz_malloc(len + 1), *ct2 = fz_malloc(len);
    uint8_t *o0 = fz_malloc(len), *o1 = fz_malloc(len);
    uint8_t tag[16], tag2[16], dtag[16], nonce2[24];
    size_t dlen = len;
    uint8_t *flip = NULL;
    const EVP_CIPHER *cipher = ours[sc->lvi][sc->x];

    oracle_seal(sc->x, ct, tag, sc->key, sc->nonce, sc->aad, sc->aadlen, sc->pt, len);

    /* Encrypt. */
    run r = { { EVP_CIPHER_CTX_new(), NULL }, { o0, o1 }, 1, 0 };
    FZ_ASSERT(r.ctx[0] != NULL, "EVP_CIPHER_CTX_new failed");
    seal_and_check(&r, cipher, 1, sc->key, sc->nonce, sc->aad, sc->aadlen, sc->pt, len, ct, tag,
                   taglen, in, sc->modes);
    run_free_extra(&r);

    /* Decrypt, possibly forged. */
    memcpy(dtag, tag, 16);
    switch (sc->forge) {
    case 4:
        flip = &dtag[(sc->bitpos >> 3) % taglen];
        break;
    case 5:
        flip = &ct[(sc->bitpos >> 3) % len];
        break;
    case 6:
        flip = &sc->aad[(sc->bitpos >> 3) % sc->aadlen];
        break;
    case 7:
        dlen = len - 1;
        break;
    default:
        break;
    }
    if (flip != NULL)
        *flip ^= (uint8_t)(1u << (sc->bitpos & 7));

    int authentic = sc->forge < 4;
    unsigned when = sc->modes & 3, reuse = (sc->modes >> 2) & 3;
    OSSL_PARAM initp[2] = { OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG,
                                                              dtag, taglen),
                            OSSL_PARAM_construct_end() };

    if (reuse == 0 || reuse == 3) {
        EVP_CIPHER_CTX_free(r.ctx[0]);
        r.ctx[0] = EVP_CIPHER_CTX_new();
        FZ_ASSERT(r.ctx[0] != NULL, "EVP_CIPHER_CTX_new failed");
    }
    FZ_ASSERT(EVP_CipherInit_ex2(r.ctx[0], reuse == 1 ? NULL : cipher, reuse == 1 ? NULL : sc->key,
                                 sc->nonce, 0, when == 0 ? initp : NULL),
              "decrypt init failed");
    if (when == 1)
        set_tag(&r, dtag, taglen);
    feed(&r, in, 1, sc->aad, sc->aadlen, 0);
    if (when == 2)
        set_tag(&r, dtag, taglen);
    feed(&r, in, 0, ct, dlen, 1);
    if (when == 3)
        set_tag(&r, dtag, taglen);
    unsigned ok = finals(&r, sc->modes & 0x20);
    if (authentic) {
        FZ_ASSERT(ok == (1u << r.n) - 1, "authentic message rejected (mask %u of %d)", ok, r.n);
        for (int k = 0; k < r.n; k++)
            FZ_ASSERT(len == 0 || memcmp(r.out[k], sc->pt, len) == 0,
                      "decrypted text differs (context %d)", k);
    } else {
        FZ_ASSERT(ok == 0, "forged message accepted (mask %u of %d)", ok, r.n);
    }
    run_free_extra(&r);
    if (flip != NULL)
        *flip ^= (uint8_t)(1u << (sc->bitpos & 7));

    /* A second message on the same, finished context: nothing may carry over. */
    if (sc->modes & 0x80) {
        memcpy(nonce2, sc->nonce, sc->ivlen);
        nonce2[sc->ivlen - 1] ^= 0x80;
        oracle_seal(sc->x, ct2, tag2, sc->key, nonce2, sc->aad, sc->aadlen, sc->pt, len);
        seal_and_check(&r, NULL, 0, sc->key, nonce2, sc->aad, sc->aadlen, sc->pt, len, ct2, tag2,
                       taglen, in, sc->modes);
        run_free_extra(&r);
    }
    EVP_CIPHER_CTX_free(r.ctx[0]);
    free(ct);
    free(ct2);
    free(o0);
    free(o1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = { data, size };
    uint8_t b0 = fz_u8(&in);
    int x = b0 & 1;
    const fz_level *lv = fz_pick_level(b0 >> 1);
    size_t ivlen = x ? 24 : 12;
    uint8_t key[32], nonce[24] = { 0 }, tagsel, forge, modes, pat;
    uint16_t bitpos;
    size_t taglen, aadlen, len;
    uint64_t seed;
    int tls;

    fz_bytes(&in, key, 32);
    fz_bytes(&in, nonce, ivlen);
    tagsel = fz_u8(&in);
    taglen = (tagsel & 0x80) ? 16 : 1 + (size_t)(tagsel & 15);
    forge = fz_u8(&in);
    tls = (forge & 8) && !x;
    forge &= 7;
    bitpos = fz_u16(&in);
    modes = fz_u8(&in);
    aadlen = fz_len(&in, MAX_AAD);
    len = fz_len(&in, MAX_TEXT);
    pat = fz_u8(&in);
    seed = fz_u64(&in);
    /* Forgeries other than a tag bit flip are judged with a full tag (2^-128). */
    if (forge >= 5)
        taglen = 16;
    if ((forge == 5 || forge == 7) && len == 0)
        forge = 0;
    if (forge == 6 && aadlen == 0)
        forge = 0;

    uint8_t *aad = fz_malloc(aadlen), *pt = fz_malloc(len);

    fz_pattern(aad, aadlen, pat, seed ^ 0xaad);
    fz_pattern(pt, len, pat >> 2, seed);
    if (tls) {
        uint8_t hdr[11] = { 0 };

        /* Sequence number, content type and version: the first AAD bytes. */
        memcpy(hdr, aad, aadlen < sizeof(hdr) ? aadlen : sizeof(hdr));
        snprintf(fz_context, sizeof(fz_context),
                 "ChaCha20-Poly1305 TLS 1.2 record level %s payload %zu forge %u", lv->name, len,
                 forge);
        tls_case(ours[lv - fz_levels][0], key, nonce, hdr, pt, len, forge, bitpos);
    } else {
        scase sc = { x, (int)(lv - fz_levels), key, nonce, ivlen, taglen, aad, aadlen, pt, len,
                     forge, bitpos, modes };

        snprintf(fz_context, sizeof(fz_context),
                 "%s level %s aad %zu text %zu taglen %zu forge %u modes 0x%02x pattern %u",
                 x ? "XChaCha20-Poly1305" : "ChaCha20-Poly1305", lv->name, aadlen, len, taglen,
                 forge, modes, pat);
        stream_case(&sc, &in);
    }
    free(aad);
    free(pt);
    ERR_clear_error();
    fz_context[0] = '\0';
    return 0;
}
