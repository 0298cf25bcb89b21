/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pipeline_seal.c: OpenSSL 3.5's cipher pipeline API with chapoly.
 *
 * Seals four ChaCha20-Poly1305 messages under one key in one batch, opens
 * them again in one batch, and shows a forged tag refused. Message 0 is the
 * example of RFC 8439, section 2.8.2, so its tag can be checked by eye.
 *
 * Build and run (OpenSSL 3.5 or later; chapoly.so in OpenSSL's module
 * directory, or OPENSSL_MODULES naming the directory that holds it):
 *     cc pipeline_seal.c -o pipeline_seal -lcrypto
 *     ./pipeline_seal
 * Exit status 0 when everything behaved as printed, 1 otherwise.
 */
#include <stdio.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#define NMSG 4
#define TAGLEN 16

/* One message: its nonce, AAD and text (the batch shares one key). */
struct message {
    unsigned char nonce[12];
    const unsigned char *aad;
    size_t aadlen;
    const unsigned char *text;
    size_t len;
};

static const unsigned char key[32] = {
    0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
    0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f,
};
static const unsigned char rfc_aad[12] = {
    0x50, 0x51, 0x52, 0x53, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
};
static const char rfc_text[] = "Ladies and Gentlemen of the class of '99: If I could offer you "
                               "only one tip for the future, sunscreen would be it.";
static const unsigned char rfc_tag[TAGLEN] = {
    0x1a, 0xe1, 0x0b, 0x59, 0x4f, 0x09, 0xe2, 0x6a, 0x7e, 0x90, 0x2e, 0xcb, 0xd0, 0x60, 0x06, 0x91,
};
static const char aad13[] = "a 13-byte AAD";
static const char text64[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
static unsigned char text1350[1350];

/* Print what went wrong, with OpenSSL's error queue. */
static int fail(const char *what)
{
    fprintf(stderr, "pipeline_seal: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    return 0;
}

/* Set (decrypting) or get (encrypting) every message's tag: "pipeline-tag". */
static int pipeline_tags(EVP_CIPHER_CTX *ctx, unsigned char *tags[NMSG], int set)
{
    void *p = tags; /* an octet pointer to the array of tag buffers */
    OSSL_PARAM params[2] = {
        OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_PIPELINE_AEAD_TAG, &p, TAGLEN),
        OSSL_PARAM_END,
    };

    return set ? EVP_CIPHER_CTX_set_params(ctx, params) : EVP_CIPHER_CTX_get_params(ctx, params);
}

/*
 * One batch: enc = 1 seals each message's text into out[i] and writes its
 * tag to tags[i]; enc = 0 opens in[i] (the ciphertexts) into out[i] and
 * checks them against tags[i]. Returns 1 if every call succeeded.
 */
static int run_batch(const EVP_CIPHER *cipher, const struct message m[NMSG], int enc,
                     unsigned char *const in[NMSG], unsigned char *out[NMSG],
                     unsigned char *tags[NMSG])
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    const unsigned char *ivs[NMSG], *inp[NMSG];
    unsigned char *outp[NMSG];
    size_t inl[NMSG], outl[NMSG], outsize[NMSG];
    int ok;

    for (int i = 0; i < NMSG; i++)
        ivs[i] = m[i].nonce;
    /* one key and one nonce per message, for all NMSG messages */
    ok = ctx != NULL &&
         (enc ? EVP_CipherPipelineEncryptInit(ctx, cipher, key, sizeof(key), NMSG, ivs, 12)
              : EVP_CipherPipelineDecryptInit(ctx, cipher, key, sizeof(key), NMSG, ivs, 12));
    if (!ok)
        fail("pipeline init");
    /* the AAD of every message: an update with no outputs */
    for (int i = 0; i < NMSG; i++) {
        inp[i] = m[i].aad;
        inl[i] = m[i].aadlen;
    }
    if (ok && !(ok = EVP_CipherPipelineUpdate(ctx, NULL, outl, NULL, inp, inl)))
        fail("AAD update");
    /* the expected tags, before a decrypting final */
    if (ok && !enc && !(ok = pipeline_tags(ctx, tags, 1)))
        fail("setting the tags");
    /* the text of every message: outsize[i] is the room in out[i] */
    for (int i = 0; i < NMSG; i++) {
        inp[i] = in[i];
        inl[i] = m[i].len;
        outp[i] = out[i];
        outsize[i] = m[i].len;
    }
    if (ok && !(ok = EVP_CipherPipelineUpdate(ctx, outp, outl, outsize, inp, inl)))
        fail("text update");
    /* final: no more output (a stream cipher); decrypting, the tags are checked here */
    for (int i = 0; i < NMSG; i++) {
        outp[i] = out[i] + m[i].len;
        outsize[i] = 0;
    }
    if (ok)
        ok = EVP_CipherPipelineFinal(ctx, outp, outl, outsize);
    if (ok && enc && !(ok = pipeline_tags(ctx, tags, 0)))
        fail("reading the tags");
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static void hex(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
}

int main(void)
{
    struct message m[NMSG] = {
        { { 0x07, 0, 0, 0, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47 },
          rfc_aad, sizeof(rfc_aad), (const unsigned char *)rfc_text, sizeof(rfc_text) - 1 },
        { { 0x07, 0, 0, 0, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x48 },
          (const unsigned char *)"", 0, (const unsigned char *)"", 0 },
        { { 0x07, 0, 0, 0, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x49 },
          (const unsigned char *)aad13, 13, (const unsigned char *)text64, 64 },
        { { 0x07, 0, 0, 0, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x4a },
          (const unsigned char *)aad13, 13, text1350, sizeof(text1350) },
    };
    static unsigned char ct[NMSG][sizeof(text1350)], pt[NMSG][sizeof(text1350)];
    static unsigned char tag[NMSG][TAGLEN];
    unsigned char *text[NMSG], *ctp[NMSG], *ptp[NMSG], *tagp[NMSG];
    OSSL_PROVIDER *dflt = NULL, *chapoly = NULL;
    EVP_CIPHER *cipher = NULL;
    int ok = 0, wiped = 1;

    for (size_t j = 0; j < sizeof(text1350); j++)
        text1350[j] = (unsigned char)(j * 7 + 3);
    for (int i = 0; i < NMSG; i++) {
        text[i] = (unsigned char *)m[i].text;
        ctp[i] = ct[i];
        ptp[i] = pt[i];
        tagp[i] = tag[i];
    }

    /*
     * Load both providers: once a program loads one explicitly, OpenSSL no
     * longer loads the default provider by itself (with openssl.cnf
     * enabling chapoly, these two calls are not needed).
     */
    dflt = OSSL_PROVIDER_load(NULL, "default");
    chapoly = OSSL_PROVIDER_load(NULL, "chapoly");
    if (dflt == NULL || chapoly == NULL) {
        fail("loading the default and chapoly providers");
        goto end;
    }
    /* The pipeline API is chapoly's: ask for it by property. */
    cipher = EVP_CIPHER_fetch(NULL, "ChaCha20-Poly1305", "provider=chapoly");
    if (cipher == NULL) {
        fail("fetching ChaCha20-Poly1305 from chapoly");
        goto end;
    }
    printf("ChaCha20-Poly1305 from provider %s, pipeline API: %s\n",
           OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(cipher)),
           EVP_CIPHER_can_pipeline(cipher, 1) && EVP_CIPHER_can_pipeline(cipher, 0) ? "yes"
                                                                                    : "no");

    /* Seal all four in one batch. */
    if (!run_batch(cipher, m, 1, text, ctp, tagp))
        goto end;
    printf("sealed %d messages in one batch:\n", NMSG);
    for (int i = 0; i < NMSG; i++) {
        printf("  message %d: %4zu bytes, AAD %2zu, tag ", i, m[i].len, m[i].aadlen);
        hex(tag[i], TAGLEN);
        printf("\n");
    }
    if (memcmp(tag[0], rfc_tag, TAGLEN) != 0) {
        printf("message 0: the tag differs from RFC 8439, section 2.8.2\n");
        goto end;
    }
    printf("message 0: the tag of RFC 8439, section 2.8.2\n");

    /* Open all four in one batch: every tag verified, every text back. */
    if (!run_batch(cipher, m, 0, ctp, ptp, tagp))
        goto end;
    for (int i = 0; i < NMSG; i++)
        if (memcmp(pt[i], m[i].text, m[i].len) != 0) {
            printf("message %d: opened to other bytes than were sealed\n", i);
            goto end;
        }
    printf("opened %d messages in one batch: every tag verified, every text as sealed\n", NMSG);

    /*
     * A forged tag in one message: the final fails and no message's
     * plaintext is left behind, not only the forged one's.
     */
    tag[2][0] ^= 1;
    if (run_batch(cipher, m, 0, ctp, ptp, tagp)) {
        printf("a forged tag in message 2 was accepted\n");
        goto end;
    }
    ERR_clear_error(); /* the expected failure's error */
    for (int i = 0; i < NMSG; i++)
        for (size_t j = 0; j < m[i].len; j++)
            wiped &= pt[i][j] == 0;
    printf("a forged tag in message 2: final refused the batch, %s\n",
           wiped ? "every message's text wiped" : "TEXT LEFT BEHIND");
    ok = wiped;

end:
    EVP_CIPHER_free(cipher);
    if (chapoly != NULL)
        OSSL_PROVIDER_unload(chapoly);
    if (dflt != NULL)
        OSSL_PROVIDER_unload(dflt);
    return ok ? 0 : 1;
}
