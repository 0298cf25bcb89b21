/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Errors chapoly raises reach this program's own error queue, whichever
 * libcrypto runs it (3.0, 3.5, 3.6, 4.0) and whichever headers the module was
 * built with (the compat tests run it with the other build): the module links
 * no libcrypto and raises through the core's functions, so there is no second
 * libcrypto (and no second queue) in the process. Each misuse queues exactly
 * one error, in chapoly's own error library (named after the provider) with
 * chapoly's reason string and detail, and "Provider routines" never appears.
 * The same misuse through the default provider is the control: its errors
 * reach the queue too.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include "test_common.h"

static const uint8_t key[32], iv[16];

/* The errors queued since the last clear: how many, and the first's texts. */
static int drain(const char **lib, const char **reason, const char **data)
{
    unsigned long e, first = 0;
    const char *d = NULL;
    int flags = 0, n = 0;

    while ((e = ERR_get_error_all(NULL, NULL, NULL, n == 0 ? &d : NULL, n == 0 ? &flags : NULL))
           != 0) {
        if (n++ == 0)
            first = e;
    }
    *lib = first != 0 ? ERR_lib_error_string(first) : NULL;
    *reason = first != 0 ? ERR_reason_error_string(first) : NULL;
    *data = (flags & ERR_TXT_STRING) ? d : NULL;
    return n;
}

static void expect(const char *what, int n, const char *lib, const char *reason,
                   const char *data, const char *want_reason, const char *want_data)
{
    T_OK(n == 1, "%s: %d errors in the application's queue, want 1", what, n);
    T_OK(lib != NULL && strcmp(lib, "chapoly") == 0, "%s: library \"%s\", want \"chapoly\"",
         what, lib != NULL ? lib : "(none)");
    T_OK(reason != NULL && strcmp(reason, want_reason) == 0, "%s: reason \"%s\", want \"%s\"",
         what, reason != NULL ? reason : "(none)", want_reason);
    T_OK(data != NULL && strstr(data, want_data) != NULL, "%s: detail \"%s\", want \"%s\"", what,
         data != NULL ? data : "(none)", want_data);
}

/* The check: a tag length of 17 set on an encrypt context. */
static void tag_length_17(void)
{
    EVP_CIPHER *ours = t_cipher("ChaCha20-Poly1305", 1), *dflt = t_cipher("ChaCha20-Poly1305", 0);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    const char *lib, *reason, *data;
    int n;

    if (!T_OK(ours && dflt && c, "setup"))
        goto end;
    ERR_clear_error();
    T_OK(EVP_EncryptInit_ex2(c, ours, key, iv, NULL) == 1, "chapoly: encrypt init");
    T_OK(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 17, NULL) <= 0,
         "chapoly: tag length 17 accepted");
    n = drain(&lib, &reason, &data);
    expect("tag length 17", n, lib, reason, data, "invalid tag length", "17");

    /* the control: the default provider's error reaches the queue as well */
    T_OK(EVP_EncryptInit_ex2(c, dflt, key, iv, NULL) == 1, "default: encrypt init");
    T_OK(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 17, NULL) <= 0,
         "default: tag length 17 accepted");
    T_OK(t_error_queued(), "default: no error queued for tag length 17");
end:
    EVP_CIPHER_CTX_free(c);
    EVP_CIPHER_free(ours);
    EVP_CIPHER_free(dflt);
}

/* More kinds: ChaCha20 with no key, a short POLY1305 key, a forged tag. */
static void other_errors(void)
{
    EVP_CIPHER *cc = t_cipher("ChaCha20", 1), *aead = t_cipher("ChaCha20-Poly1305", 1);
    EVP_MAC *mac = t_mac("POLY1305", 1);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    EVP_MAC_CTX *m = mac != NULL ? EVP_MAC_CTX_new(mac) : NULL;
    const char *lib, *reason, *data;
    uint8_t buf[64] = { 0 }, tag[16] = { 0 };
    int outl = 0, n;

    if (!T_OK(cc && aead && mac && c && m, "setup"))
        goto end;
    ERR_clear_error();
    T_OK(EVP_EncryptInit_ex2(c, cc, NULL, NULL, NULL) == 1, "ChaCha20: init without key");
    T_OK(EVP_EncryptUpdate(c, buf, &outl, buf, 10) == 0, "ChaCha20: update without key");
    n = drain(&lib, &reason, &data);
    expect("ChaCha20 without a key", n, lib, reason, data, "no key set", "32-byte key");

    T_OK(EVP_MAC_init(m, key, 16, NULL) == 0, "POLY1305: 16-byte key accepted");
    n = drain(&lib, &reason, &data);
    expect("POLY1305 16-byte key", n, lib, reason, data, "invalid key length", "got 16");

    T_OK(EVP_DecryptInit_ex2(c, aead, key, iv, NULL) == 1 &&
             EVP_DecryptUpdate(c, buf, &outl, buf, 20) == 1 && t_set_tag(c, tag, 16),
         "ChaCha20-Poly1305: open with a forged tag");
    T_OK(EVP_DecryptFinal_ex(c, buf, &outl) == 0, "ChaCha20-Poly1305: forged tag accepted");
    n = drain(&lib, &reason, &data);
    expect("forged tag", n, lib, reason, data, "cipher operation failed", "tag mismatch");
end:
    EVP_MAC_CTX_free(m);
    EVP_MAC_free(mac);
    EVP_CIPHER_CTX_free(c);
    EVP_CIPHER_free(cc);
    EVP_CIPHER_free(aead);
}

int main(void)
{
    t_setup();
    tag_length_17();
    other_errors();
    t_teardown();
    return t_finish("test_errors");
}
