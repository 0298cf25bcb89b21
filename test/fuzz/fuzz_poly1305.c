/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The POLY1305 MAC fed in pieces chosen by the input against the default
 * provider's one-shot MAC. Keys and messages are biased toward the values
 * that stress the reduction: r with every unclamped bit set, s = 2^128 - 1,
 * runs of 0xff blocks (hash values near 2^130 - 5).
 *
 * Input layout (an exhausted input reads as zeros):
 *   u8  level index
 *   u8  key mode: bits 0-2 -> 0..5 raw, 6: r all ones (clamped by the MAC)
 *       and s all ones, 7: raw r and s all ones; bit 3 key through the "key"
 *       parameter instead of the init argument; bit 4 after the tag, rekey
 *       and MAC the message again; bits 5-6 message pattern; bit 7 message
 *       bytes taken from the input
 *   key[32], fz_len message length, u64 seed (or the raw message bytes)
 *   then per piece: u8 control (bit 0 duplicate the context here, bit 1
 *   zero-length update first) and fz_len size.
 */
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/params.h>
#include "fuzz_common.h"

#define MAX_MSG 40000

static EVP_MAC *ours[FZ_MAX_LEVELS];
static EVP_MAC *oracle;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_setup();
    for (int i = 0; i < fz_nlevels; i++) {
        ours[i] = EVP_MAC_fetch(fz_levels[i].ctx, "POLY1305", "provider=chapoly");
        if (ours[i] == NULL) {
            ERR_print_errors_fp(stderr);
            exit(1);
        }
    }
    oracle = EVP_MAC_fetch(fz_oracle_ctx, "POLY1305", "provider=default");
    if (oracle == NULL) {
        ERR_print_errors_fp(stderr);
        exit(1);
    }
    return 0;
}

static void oracle_mac(uint8_t tag[16], const uint8_t key[32], const uint8_t *msg, size_t len)
{
    EVP_MAC_CTX *c = EVP_MAC_CTX_new(oracle);
    size_t outl = 0;
    int ok;

    ok = c != NULL && EVP_MAC_init(c, key, 32, NULL) && EVP_MAC_update(c, msg, len) &&
         EVP_MAC_final(c, tag, &outl, 16) && outl == 16;
    EVP_MAC_CTX_free(c);
    FZ_ASSERT(ok, "the default POLY1305 oracle failed");
}

static void mac_init(EVP_MAC_CTX *c, const uint8_t key[32], int via_param)
{
    if (via_param) {
        OSSL_PARAM p[2] = { OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)key, 32),
                            OSSL_PARAM_construct_end() };

        FZ_ASSERT(EVP_MAC_init(c, NULL, 0, p), "init with the key parameter failed");
    } else {
        FZ_ASSERT(EVP_MAC_init(c, key, 32, NULL), "init with a key failed");
    }
}

/* MAC msg in pieces on ctx; returns how many contexts (1 or 2) were used. */
static void mac_pieces(EVP_MAC_CTX *ctx[2], const uint8_t *msg, size_t len, fz_in *in,
                       const uint8_t want[16])
{
    int n = 1;

    for (size_t off = 0; off < len;) {
        uint8_t ctl = 0;
        size_t m = len - off;

        if (in->n > 0) {
            ctl = fz_u8(in);
            m = fz_len(in, len - off);
        }
        if ((ctl & 1) && n == 1) {
            ctx[1] = EVP_MAC_CTX_dup(ctx[0]);
            FZ_ASSERT(ctx[1] != NULL, "EVP_MAC_CTX_dup failed at %zu", off);
            n = 2;
        }
        for (int k = 0; k < n; k++) {
            if (ctl & 2)
                FZ_ASSERT(EVP_MAC_update(ctx[k], msg + off, 0), "zero-length update failed");
            FZ_ASSERT(EVP_MAC_update(ctx[k], msg + off, m), "update of %zu at %zu failed", m, off);
        }
        off += m;
    }
    for (int k = 0; k < n; k++) {
        uint8_t tag[32];
        size_t outl = 0;

        FZ_ASSERT(EVP_MAC_CTX_get_mac_size(ctx[k]) == 16, "mac size %zu",
                  EVP_MAC_CTX_get_mac_size(ctx[k]));
        FZ_ASSERT(EVP_MAC_final(ctx[k], tag, &outl, sizeof(tag)) && outl == 16,
                  "final failed (outl %zu)", outl);
        if (memcmp(tag, want, 16) != 0) {
            fz_hexdump("ours", tag, 16);
            fz_hexdump("oracle", want, 16);
            FZ_ASSERT(0, "tag differs (context %d)", k);
        }
        /* The one-time key is spent: more data or a bare re-init must be refused. */
        FZ_ASSERT(!EVP_MAC_update(ctx[k], msg, len), "update after final accepted");
        FZ_ASSERT(fz_error_queued(), "refusal without an error queued");
        FZ_ASSERT(!EVP_MAC_init(ctx[k], NULL, 0, NULL), "init without a new key after final accepted");
        FZ_ASSERT(fz_error_queued(), "refusal without an error queued");
    }
    if (n == 2) {
        EVP_MAC_CTX_free(ctx[1]);
        ctx[1] = NULL;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_in in = { data, size };
    const fz_level *lv = fz_pick_level(fz_u8(&in));
    int lvi = (int)(lv - fz_levels);
    uint8_t mode = fz_u8(&in), key[32], want[16];
    size_t len;

    fz_bytes(&in, key, 32);
    if ((mode & 7) >= 6)
        memset(key + 16, 0xff, 16);
    if ((mode & 7) == 6)
        memset(key, 0xff, 16);
    len = fz_len(&in, MAX_MSG);

    uint8_t *msg = fz_malloc(len);

    if (mode & 0x80)
        fz_bytes(&in, msg, len);
    else
        fz_pattern(msg, len, (mode >> 5) & 3, fz_u64(&in));
    snprintf(fz_context, sizeof(fz_context), "POLY1305 level %s len %zu mode 0x%02x", lv->name,
             len, mode);
    oracle_mac(want, key, msg, len);

    EVP_MAC_CTX *ctx[2] = { EVP_MAC_CTX_new(ours[lvi]), NULL };

    FZ_ASSERT(ctx[0] != NULL, "EVP_MAC_CTX_new failed");
    mac_init(ctx[0], key, mode & 8);
    mac_pieces(ctx, msg, len, &in, want);
    if (mode & 0x10) {
        key[0] ^= 1;
        key[31] ^= 0x80;
        oracle_mac(want, key, msg, len);
        mac_init(ctx[0], key, !(mode & 8));
        mac_pieces(ctx, msg, len, &in, want);
    }
    EVP_MAC_CTX_free(ctx[0]);
    free(msg);
    ERR_clear_error();
    fz_context[0] = '\0';
    return 0;
}
