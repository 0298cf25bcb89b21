/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What OpenSSL 3.5 adds around a cipher provider and how chapoly meets it
 * (built only against OpenSSL >= 3.5; docs/behaviour.md, "OpenSSL 3.5"):
 *  - EVP_SKEY (opaque symmetric keys): EVP_CipherInit_SKEY accepts only a key
 *    managed by the cipher's own provider. chapoly has no key management, so
 *    a key from the default provider is refused with an error (no crash, no
 *    state left behind: the same context then seals with a raw key exactly as
 *    the default provider seals with that EVP_SKEY), and a NULL key with an IV
 *    reaches chapoly's ordinary init as an IV-only re-init.
 *  - EVP_MAC_init_SKEY on POLY1305 is refused, as by the default provider.
 *  - "decrypt-only", asked for by 3.5's fetch, is left alone (0): chapoly's
 *    ciphers encrypt.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include "test_common.h"

#define MSGLEN 100

static uint8_t key[32], iv[12], iv2[12], aad[20], pt[MSGLEN];

/* One ChaCha20-Poly1305 seal on a context already keyed (or keyed here). */
static int seal(EVP_CIPHER_CTX *ctx, uint8_t ct[MSGLEN], uint8_t tag[16])
{
    int l = 0, l2 = 0;

    return EVP_EncryptUpdate(ctx, NULL, &l, aad, sizeof(aad)) &&
           EVP_EncryptUpdate(ctx, ct, &l, pt, MSGLEN) && l == MSGLEN &&
           EVP_EncryptFinal_ex(ctx, ct + l, &l2) && l2 == 0 && t_get_tag(ctx, tag, 16);
}

static void test_cipher_skey(void)
{
    EVP_CIPHER *ours = t_cipher("ChaCha20-Poly1305", 1);
    EVP_CIPHER *deflt = t_cipher("ChaCha20-Poly1305", 0);
    EVP_SKEY *skey = EVP_SKEY_import_raw_key(t_ctx, "GENERIC-SECRET", key, sizeof(key),
                                             PROVQ_DEFAULT);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new(), *d = EVP_CIPHER_CTX_new();
    uint8_t ct[MSGLEN], tag[16], ref_ct[MSGLEN], ref_tag[16];

    if (!T_OK(ours && deflt && skey && c && d, "setup (cipher, default-provider EVP_SKEY)"))
        goto end;

    /* The reference: the default provider seals with its own EVP_SKEY. */
    T_OK(EVP_CipherInit_SKEY(d, deflt, skey, iv, sizeof(iv), 1, NULL) == 1 && seal(d, ref_ct, ref_tag),
         "default provider: EVP_CipherInit_SKEY + seal");

    /* chapoly: a key of another provider is refused, with an error. */
    T_REJECT(EVP_CipherInit_SKEY(c, ours, skey, iv, sizeof(iv), 1, NULL),
             "EVP_CipherInit_SKEY with the default provider's key");
    /* The same context then works with the raw key, bytes as the default's. */
    T_OK(EVP_EncryptInit_ex2(c, ours, key, iv, NULL) == 1 && seal(c, ct, tag),
         "raw-key init after the refused EVP_SKEY init");
    T_EQ_MEM(ct, ref_ct, MSGLEN, "ciphertext equals the default provider's (EVP_SKEY)");
    T_EQ_MEM(tag, ref_tag, 16, "tag equals the default provider's (EVP_SKEY)");

    /* No key, a new IV: 3.5 passes it to chapoly's init as an IV-only re-init. */
    T_OK(EVP_CipherInit_SKEY(c, NULL, NULL, iv2, sizeof(iv2), 1, NULL) == 1 && seal(c, ct, tag),
         "EVP_CipherInit_SKEY with no key and a new IV, then seal");
    T_OK(EVP_EncryptInit_ex2(d, deflt, key, iv2, NULL) == 1 && seal(d, ref_ct, ref_tag),
         "default provider: seal under the new IV");
    T_EQ_MEM(ct, ref_ct, MSGLEN, "IV-only EVP_CipherInit_SKEY: ciphertext");
    T_EQ_MEM(tag, ref_tag, 16, "IV-only EVP_CipherInit_SKEY: tag");

    /* Decryption side: refused the same way. */
    T_REJECT(EVP_CipherInit_SKEY(c, ours, skey, iv, sizeof(iv), 0, NULL),
             "EVP_CipherInit_SKEY (decrypt) with the default provider's key");
end:
    EVP_CIPHER_CTX_free(c);
    EVP_CIPHER_CTX_free(d);
    EVP_SKEY_free(skey);
    EVP_CIPHER_free(ours);
    EVP_CIPHER_free(deflt);
    ERR_clear_error();
}

static void test_mac_skey(void)
{
    EVP_MAC *mac = t_mac("POLY1305", 1);
    EVP_MAC_CTX *m = mac ? EVP_MAC_CTX_new(mac) : NULL;
    EVP_SKEY *skey = EVP_SKEY_import_raw_key(t_ctx, "GENERIC-SECRET", key, sizeof(key),
                                             PROVQ_DEFAULT);
    uint8_t out[16], out2[16];
    size_t ol = 0, ol2 = 0;

    if (T_OK(m && skey, "setup (POLY1305, EVP_SKEY)")) {
        T_REJECT(EVP_MAC_init_SKEY(m, skey, NULL), "EVP_MAC_init_SKEY on POLY1305");
        /* still usable with the raw key */
        T_OK(EVP_MAC_init(m, key, sizeof(key), NULL) && EVP_MAC_update(m, pt, MSGLEN) &&
                 EVP_MAC_final(m, out, &ol, sizeof(out)) && ol == 16,
             "POLY1305 with the raw key after the refused EVP_SKEY init");
        EVP_MAC *dm = t_mac("POLY1305", 0);
        EVP_MAC_CTX *dc = dm ? EVP_MAC_CTX_new(dm) : NULL;
        T_OK(dc && EVP_MAC_init(dc, key, sizeof(key), NULL) && EVP_MAC_update(dc, pt, MSGLEN) &&
                 EVP_MAC_final(dc, out2, &ol2, sizeof(out2)) && ol2 == 16 &&
                 memcmp(out, out2, 16) == 0,
             "POLY1305 tag equals the default provider's");
        EVP_MAC_CTX_free(dc);
        EVP_MAC_free(dm);
    }
    EVP_MAC_CTX_free(m);
    EVP_MAC_free(mac);
    EVP_SKEY_free(skey);
    ERR_clear_error();
}

static void test_decrypt_only(void)
{
    static const char *const names[] = { "ChaCha20-Poly1305", "XChaCha20-Poly1305", "ChaCha20" };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        EVP_CIPHER *ci = t_cipher(names[i], 1);
        int decrypt_only = 0;
        OSSL_PARAM p[2] = { OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_DECRYPT_ONLY, &decrypt_only),
                            OSSL_PARAM_construct_end() };

        T_OK(ci && EVP_CIPHER_get_params(ci, p) && decrypt_only == 0,
             "%s: decrypt-only is 0", names[i]);
        EVP_CIPHER_free(ci);
    }
}

int main(void)
{
    t_setup();
    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(iv2, sizeof(iv2));
    t_rand_bytes(aad, sizeof(aad));
    t_rand_bytes(pt, sizeof(pt));

    test_cipher_skey();
    test_mac_skey();
    test_decrypt_only();

    t_teardown();
    return t_finish("test_openssl35");
}
