/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kernels: the shared vector files (rfc8439.txt, xchacha.txt,
 * poly1305-edge.txt, the Wycheproof AEAD files) read with vectors.c, each
 * case handed to the known-answer check of its concern. The case counts
 * from test/vectors/README.md are checked, so a reader that drops cases
 * fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vectors.h"

#include "test_kernels.h"

const char *vdir;

static const char *vpath(const char *file)
{
    static char buf[4096];
    snprintf(buf, sizeof(buf), "%s/%s", vdir, file);
    return buf;
}

typedef struct {
    const chapoly_kernels *k;
    const char *file;
} vctx;

static char what_buf[256];

static const char *what_of(const vctx *v, const tv_case *c)
{
    const tv_field *s = tv_get(c, "source");
    snprintf(what_buf, sizeof(what_buf), "%s:%d [%s] %s", v->file, c->line, c->section,
             s != NULL ? s->text : "");
    return what_buf;
}

/* Field with an exact length (want == SIZE_MAX: any length). */
static const uint8_t *fld(const tv_case *c, const char *name, size_t want, size_t *len,
                          const char *what, int *ok)
{
    const tv_field *f = tv_get(c, name);
    if (f == NULL || (want != SIZE_MAX && f->len != want)) {
        CHECK(0, "%s: field '%s' missing or of wrong length", what, name);
        *ok = 0;
        return NULL;
    }
    if (len != NULL)
        *len = f->len;
    return f->bytes;
}

static uint32_t fld_counter(const tv_case *c, const char *what, int *ok)
{
    const tv_field *f = tv_get(c, "counter");
    char *end;
    unsigned long long v = 0;
    if (f == NULL || f->text == NULL || f->text[0] == '\0' ||
        (v = strtoull(f->text, &end, 10), *end != '\0') || v > 0xffffffffULL) {
        CHECK(0, "%s: bad counter", what);
        *ok = 0;
    }
    return (uint32_t)v;
}


static int unknown_section(const vctx *v, const tv_case *c)
{
    CHECK(0, "%s:%d: unknown section [%s] (test does not know it)", v->file, c->line, c->section);
    return 0;
}

static int cb_txt(const tv_case *c, void *arg)
{
    const vctx *v = arg;
    const chapoly_kernels *k = v->k;
    const char *what = what_of(v, c);
    const char *sec = c->section;
    int ok = 1;
    size_t len = 0, len2 = 0, aadlen = 0;

    if (strcmp(sec, "chacha20-block") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 12, NULL, what, &ok);
        const uint8_t *blk = fld(c, "block", 64, NULL, what, &ok);
        uint32_t ctr = fld_counter(c, what, &ok);
        if (!ok)
            return 0;
        uint32_t kw[8], ctr_nonce[4] = { ctr, le32(nonce), le32(nonce + 4), le32(nonce + 8) };
        uint8_t z[64] = { 0 }, o[64];
        chapoly_load_key(kw, key);
        k_chacha(k, o, z, 64, kw, ctr_nonce);
        CHECK(meq(o, blk, 64), "%s: block differs", what);
    } else if (strcmp(sec, "chacha20") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 12, NULL, what, &ok);
        const uint8_t *pt = fld(c, "plaintext", SIZE_MAX, &len, what, &ok);
        const uint8_t *ct = fld(c, "ciphertext", SIZE_MAX, &len2, what, &ok);
        uint32_t ctr = fld_counter(c, what, &ok);
        if (!ok || len != len2) {
            CHECK(ok, "%s: plaintext/ciphertext lengths differ", what);
            return 0;
        }
        uint32_t ctr_nonce[4] = { ctr, le32(nonce), le32(nonce + 4), le32(nonce + 8) };
        chacha_known(k, what, key, ctr_nonce, pt, ct, len);
    } else if (strcmp(sec, "poly1305") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *msg = fld(c, "msg", SIZE_MAX, &len, what, &ok);
        const uint8_t *tag = fld(c, "tag", 16, NULL, what, &ok);
        if (ok)
            poly_known(k, what, key, msg, len, tag);
    } else if (strcmp(sec, "poly1305-keygen") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 12, NULL, what, &ok);
        const uint8_t *otk = fld(c, "otk", 32, NULL, what, &ok);
        if (!ok)
            return 0;
        uint32_t kw[8], ctr_nonce[4] = { 0, le32(nonce), le32(nonce + 4), le32(nonce + 8) };
        uint8_t z[64] = { 0 }, o[64];
        chapoly_load_key(kw, key);
        k_chacha(k, o, z, 32, kw, ctr_nonce);
        CHECK(meq(o, otk, 32), "%s: otk (32-byte call) differs", what);
        k_chacha(k, o, z, 64, kw, ctr_nonce);
        CHECK(meq(o, otk, 32), "%s: otk (64-byte call) differs", what);
    } else if (strcmp(sec, "chacha20-poly1305") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 12, NULL, what, &ok);
        const uint8_t *aad = fld(c, "aad", SIZE_MAX, &aadlen, what, &ok);
        const uint8_t *pt = fld(c, "plaintext", SIZE_MAX, &len, what, &ok);
        const uint8_t *ct = fld(c, "ciphertext", SIZE_MAX, &len2, what, &ok);
        const uint8_t *tag = fld(c, "tag", 16, NULL, what, &ok);
        if (ok && len == len2)
            aead_known(k, what, key, nonce, aad, aadlen, pt, len, ct, tag);
        else
            CHECK(0, "%s: malformed case", what);
    } else if (strcmp(sec, "hchacha20") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 16, NULL, what, &ok);
        const uint8_t *sub = fld(c, "subkey", 32, NULL, what, &ok);
        if (!ok)
            return 0;
        uint8_t o[32];
        k_hchacha(k, o, key, nonce);
        CHECK(meq(o, sub, 32), "%s: subkey differs", what);
    } else if (strcmp(sec, "xchacha20") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 24, NULL, what, &ok);
        const uint8_t *pt = fld(c, "plaintext", SIZE_MAX, &len, what, &ok);
        const uint8_t *ct = fld(c, "ciphertext", SIZE_MAX, &len2, what, &ok);
        uint32_t ctr = fld_counter(c, what, &ok);
        if (!ok || len != len2) {
            CHECK(ok, "%s: plaintext/ciphertext lengths differ", what);
            return 0;
        }
        uint8_t sub[32];
        k_hchacha(k, sub, key, nonce);
        uint32_t ctr_nonce[4] = { ctr, 0, le32(nonce + 16), le32(nonce + 20) };
        chacha_known(k, what, sub, ctr_nonce, pt, ct, len);
    } else if (strcmp(sec, "xchacha20-poly1305") == 0) {
        const uint8_t *key = fld(c, "key", 32, NULL, what, &ok);
        const uint8_t *nonce = fld(c, "nonce", 24, NULL, what, &ok);
        const uint8_t *aad = fld(c, "aad", SIZE_MAX, &aadlen, what, &ok);
        const uint8_t *pt = fld(c, "plaintext", SIZE_MAX, &len, what, &ok);
        const uint8_t *ct = fld(c, "ciphertext", SIZE_MAX, &len2, what, &ok);
        const uint8_t *tag = fld(c, "tag", 16, NULL, what, &ok);
        if (!ok || len != len2) {
            CHECK(0, "%s: malformed case", what);
            return 0;
        }
        uint8_t sub[32], n12[12] = { 0 };
        k_hchacha(k, sub, key, nonce);
        memcpy(n12 + 4, nonce + 16, 8);
        aead_known(k, what, sub, n12, aad, aadlen, pt, len, ct, tag);
    } else {
        return unknown_section(v, c);
    }
    return 0;
}

typedef struct {
    const chapoly_kernels *k;
    const char *file;
    int xchacha;
    int cases, skipped;
} wctx;

static int cb_wp(const wp_case *c, void *arg)
{
    wctx *w = arg;
    char what[200];
    size_t ivlen = w->xchacha ? 24 : 12;

    snprintf(what, sizeof(what), "%s tcId %d (%s)", w->file, c->tc_id, c->comment);
    w->cases++;
    if (c->key_len != 32 || c->iv_len != ivlen || c->tag_len != 16 || c->msg_len != c->ct_len) {
        /* Not expressible through the kernel API (e.g. other nonce sizes). */
        CHECK(c->valid == 0, "%s: valid case with unsupported sizes", what);
        w->skipped++;
        return 0;
    }
    uint8_t key[32], n12[12];
    if (w->xchacha) {
        k_hchacha(w->k, key, c->key, c->iv);
        memset(n12, 0, 4);
        memcpy(n12 + 4, c->iv + 16, 8);
    } else {
        memcpy(key, c->key, 32);
        memcpy(n12, c->iv, 12);
    }
    if (c->valid)
        aead_known(w->k, what, key, n12, c->aad, c->aad_len, c->msg, c->msg_len, c->ct, c->tag);
    else
        aead_reject(w->k, what, key, n12, c->aad, c->aad_len, c->ct, c->ct_len, c->tag, c->tag_len);
    return 0;
}

void run_vectors(const chapoly_kernels *k)
{
    static const struct {
        const char *file;
        int expect;
    } txt[] = { { "rfc8439.txt", 28 }, { "xchacha.txt", 4 }, { "poly1305-edge.txt", 116 } };
    for (size_t i = 0; i < sizeof(txt) / sizeof(txt[0]); i++) {
        vctx v = { k, txt[i].file };
        int n = tv_foreach(vpath(txt[i].file), cb_txt, &v);
        /* Counts from the README: a reader that silently drops cases fails. */
        CHECK(n == txt[i].expect, "%s: read %d cases, README says %d", txt[i].file, n, txt[i].expect);
    }
    static const struct {
        const char *file;
        int xchacha, expect;
    } wp[] = { { "wycheproof/chacha20_poly1305_test.json", 0, 325 },
               { "wycheproof/xchacha20_poly1305_test.json", 1, 315 } };
    for (size_t i = 0; i < sizeof(wp) / sizeof(wp[0]); i++) {
        wctx w = { k, wp[i].file, wp[i].xchacha, 0, 0 };
        int n = wp_foreach(vpath(wp[i].file), cb_wp, &w);
        CHECK(n == wp[i].expect && w.cases == n, "%s: read %d tests, README says %d", wp[i].file, n,
              wp[i].expect);
    }
}
