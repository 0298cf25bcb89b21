/* SPDX-License-Identifier: Apache-2.0 */
/*
 * No forced value changes a byte. For every kernel level this CPU runs
 * (portable included), chapoly is loaded from a configuration with
 * `kernel = LEVEL`, `serve = all` and a `paths` line: every forceable size
 * at edge and random values (0, 1, 15, 63, 65, 100, the steps, 2^31 - 1
 * and past it, words that are no number), every choice both ways, `flip`,
 * names that are not forceable (aead-chunk=100, first-max=100, ...) and
 * random mixtures. Under each, random messages go through chapoly and the
 * default provider (or, for XChaCha20-Poly1305, chapoly's portable level
 * with nothing forced, the oracle) and must give the same bytes:
 * ChaCha20-Poly1305 seal and open in random update splits (forged tags and
 * ciphertexts refused), TLS 1.2 records, XChaCha20-Poly1305, ChaCha20
 * (counters near the wrap), the POLY1305 MAC and, against OpenSSL 3.5 or
 * later, the cipher pipeline. The paths chapoly reports ("chapoly-paths")
 * must be what it applies: forcing the reported text again reports the
 * same, and a list refused whole reports the unforced paths.
 *
 * Reproduce a failure with the same CHAPOLY_TEST_SEED.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include "test_common.h"
#include "kernels.h"
#if OPENSSL_VERSION_NUMBER >= 0x30500000L
#include "pipeline_helpers.h"
#endif

#define MAX_TEXT 20000
#define TLS_MAX 16384
#define MESSAGES 10 /* of each kind per setting */

static const char *const sizes[] = { "chacha-pairs", "poly-vector", "poly-vector2", "poly-prefix",
                                     "poly-mac", "short-rows", "open-rows" };
/* the pair: the avx2 level's open-rows needs the stitched AEAD (a short first open, in place too) */
static const char *const choices[] = { "chacha-one=scalar", "chacha-one=rows", "aead=split",
                                       "aead=stitched", "aead=stitched,open-rows=384", "flip" };
/* each alone is refused whole: the unforced paths apply */
static const char *const refused[] = {
    "aead-chunk=100", "first-max=100", "aead-chunk=1", "first-max=0", "chacha-batch=100",
    "stream-min=1", "poly-tail=0", "poly-keep=1", "multi-lanes=0", "chacha-wide=1",
    "first-head=long", "stream-fill=rule", "poly-vector=2147483648", "poly-vector=4294967296",
    "poly-vector=-1", "poly-vector=", "poly-vector=12abc", "poly-mac=0x10", "chacha-one=maybe",
    "aead=both", "poly-vector", "nonsense",
};
static const char *const edge_values[] = { "0", "1", "4", "7", "8", "15", "16", "63", "64",
                                           "65", "100", "127", "1024", "2047", "2048",
                                           "65536", "2147483647" };

static uint8_t *pt, *ct, *ct2, *out, *aad;
static EVP_CIPHER *d_aead, *d_chacha;
static EVP_MAC *d_mac;
static OSSL_LIB_CTX *oracle_ctx; /* chapoly at portable, nothing forced: XChaCha's oracle */
static EVP_CIPHER *o_xchacha;
static unsigned long settings_run, levels_run;

static size_t pick_len(size_t max)
{
    static const size_t scales[] = { 130, 130, 1100, 1100, 4200, (size_t)-1 };

    return t_pick_len(max, scales, sizeof(scales) / sizeof(scales[0]));
}

/* A random split of n bytes: pieces of 0..max bytes (0: the whole at once). */
static size_t piece(size_t left, size_t max)
{
    size_t n = max == 0 ? left : t_rand_below(max + 1);

    return n < left ? n : left;
}

static size_t split_max(void)
{
    static const size_t m[] = { 0, 0, 17, 64, 200, 1500 };

    return m[t_rand_below(sizeof(m) / sizeof(m[0]))];
}

/* ---- one library context per configuration ---- */

static OSSL_LIB_CTX *load(const char *level, const char *paths, OSSL_PROVIDER **prov)
{
    char path[] = "/tmp/chapoly-forced-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    int ok = 0;

    *prov = NULL;
    if (f != NULL && lc != NULL) {
        fprintf(f, "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n"
                   "[provider_sect]\nchapoly = chapoly_sect\n[chapoly_sect]\nactivate = 1\n"
                   "serve = all\nkernel = %s\n%s%s%s",
                level, paths != NULL ? "paths = " : "", paths != NULL ? paths : "",
                paths != NULL ? "\n" : "");
        ok = fclose(f) == 0 && OSSL_LIB_CTX_load_config(lc, path) == 1;
        f = NULL;
    }
    if (f != NULL)
        fclose(f);
    else if (fd >= 0 && !ok)
        close(fd);
    if (fd >= 0)
        unlink(path);
    if (ok)
        *prov = OSSL_PROVIDER_load(lc, "chapoly"); /* a handle; the config's activation stays */
    if (*prov == NULL) {
        OSSL_LIB_CTX_free(lc);
        return NULL;
    }
    return lc;
}

static void unload(OSSL_LIB_CTX *lc, OSSL_PROVIDER *p)
{
    OSSL_PROVIDER_unload(p);
    OSSL_LIB_CTX_free(lc);
}

/* The provider's "chapoly-kernel" and "chapoly-paths" (paths without the profile). */
static int reported(OSSL_PROVIDER *p, char *kernel, size_t kn, char *paths, size_t pn)
{
    char *k = NULL, *s = NULL;
    OSSL_PARAM gp[3] = { OSSL_PARAM_construct_utf8_ptr("chapoly-kernel", &k, 0),
                         OSSL_PARAM_construct_utf8_ptr("chapoly-paths", &s, 0),
                         OSSL_PARAM_construct_end() };
    const char *prof;

    if (!OSSL_PROVIDER_get_params(p, gp) || k == NULL || s == NULL)
        return 0;
    snprintf(kernel, kn, "%s", k);
    prof = strstr(s, "(profile ");
    snprintf(paths, pn, "%.*s", (int)(prof != NULL ? (size_t)(prof - s) : strlen(s)), s);
    for (size_t n = strlen(paths); n > 0 && paths[n - 1] == ' '; n--)
        paths[n - 1] = '\0';
    return 1;
}

/* ---- the operations, chapoly in lc against the oracles ---- */

static int aead_stream(EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *iv,
                       const uint8_t *a, size_t alen, const uint8_t *in, size_t len, uint8_t *o,
                       uint8_t tag[16])
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    size_t am = split_max(), tm = split_max(), done;
    int ok = x != NULL && EVP_CipherInit_ex(x, c, NULL, key, iv, enc), l;

    for (done = 0; ok && done < alen;) {
        size_t n = piece(alen - done, am);

        ok = EVP_CipherUpdate(x, NULL, &l, a + done, (int)n);
        done += n;
    }
    for (done = 0; ok && done < len;) {
        size_t n = piece(len - done, tm);

        ok = EVP_CipherUpdate(x, o + done, &l, in + done, (int)n) && (size_t)l == n;
        done += n;
    }
    if (ok && !enc)
        ok = t_set_tag(x, tag, 16);
    ok = ok && EVP_CipherFinal_ex(x, o + len, &l) == 1 && l == 0;
    if (ok && enc)
        ok = t_get_tag(x, tag, 16);
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return ok;
}

static void check_aead(EVP_CIPHER *ours, const char *what)
{
    uint8_t key[32], iv[12], tag[16], dtag[16];
    size_t len = pick_len(MAX_TEXT), alen = t_rand_below(65);

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(pt, len);
    t_rand_bytes(aad, alen);
    T_OK(aead_stream(d_aead, 1, key, iv, aad, alen, pt, len, ct2, dtag), "%s: default seal", what);
    if (!T_OK(aead_stream(ours, 1, key, iv, aad, alen, pt, len, ct, tag),
              "%s: seal of %zu bytes (AAD %zu) failed", what, len, alen))
        return;
    T_OK(memcmp(ct, ct2, len) == 0 && memcmp(tag, dtag, 16) == 0,
         "%s: seal of %zu bytes (AAD %zu) differs from the default provider", what, len, alen);
    T_OK(aead_stream(ours, 0, key, iv, aad, alen, ct, len, out, tag) && memcmp(out, pt, len) == 0,
         "%s: open of %zu bytes (AAD %zu) failed or differs", what, len, alen);
    /* forged: a bit of the tag, the ciphertext or the AAD */
    size_t where = t_rand_below(3), bit;
    if (where == 1 && len == 0)
        where = 0;
    if (where == 2 && alen == 0)
        where = 0;
    bit = t_rand_below(8 * (where == 0 ? 16 : where == 1 ? len : alen));
    uint8_t *p = where == 0 ? tag : where == 1 ? ct : aad;
    p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    T_OK(!aead_stream(ours, 0, key, iv, aad, alen, ct, len, out, tag),
         "%s: a forged %s (%zu bytes, AAD %zu, bit %zu) was accepted", what,
         where == 0 ? "tag" : where == 1 ? "ciphertext" : "AAD", len, alen, bit);
}

static void check_xchacha(EVP_CIPHER *ours, const char *what)
{
    uint8_t key[32], iv[24], tag[16], otag[16];
    size_t len = pick_len(MAX_TEXT), alen = t_rand_below(65);

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(pt, len);
    t_rand_bytes(aad, alen);
    T_OK(aead_stream(o_xchacha, 1, key, iv, aad, alen, pt, len, ct2, otag), "%s: oracle xseal",
         what);
    if (!T_OK(aead_stream(ours, 1, key, iv, aad, alen, pt, len, ct, tag),
              "%s: XChaCha20-Poly1305 seal of %zu bytes failed", what, len))
        return;
    T_OK(memcmp(ct, ct2, len) == 0 && memcmp(tag, otag, 16) == 0,
         "%s: XChaCha20-Poly1305 seal of %zu bytes differs from the portable level", what, len);
    tag[t_rand_below(16)] ^= 0x80;
    T_OK(!aead_stream(ours, 0, key, iv, aad, alen, ct, len, out, tag),
         "%s: XChaCha20-Poly1305 forged tag accepted (%zu bytes)", what, len);
}

static int chacha_stream(EVP_CIPHER *c, const uint8_t key[32], const uint8_t iv[16],
                         const uint8_t *in, size_t len, uint8_t *o)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    size_t m = split_max(), done;
    int ok = x != NULL && EVP_EncryptInit_ex(x, c, NULL, key, iv), l;

    for (done = 0; ok && done < len;) {
        size_t n = piece(len - done, m);

        ok = EVP_EncryptUpdate(x, o + done, &l, in + done, (int)n) && (size_t)l == n;
        done += n;
    }
    EVP_CIPHER_CTX_free(x);
    return ok;
}

static void check_chacha20(EVP_CIPHER *ours, const char *what)
{
    uint8_t key[32], iv[16];
    size_t len = pick_len(MAX_TEXT);
    uint32_t ctr = t_rand_below(2) ? (uint32_t)t_rand64() : 0xffffffffu - (uint32_t)t_rand_below(40);

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    for (int i = 0; i < 4; i++)
        iv[i] = (uint8_t)(ctr >> (8 * i));
    t_rand_bytes(pt, len);
    T_OK(chacha_stream(d_chacha, key, iv, pt, len, ct2), "%s: default ChaCha20", what);
    T_OK(chacha_stream(ours, key, iv, pt, len, ct) && memcmp(ct, ct2, len) == 0,
         "%s: ChaCha20 of %zu bytes from counter %#x differs from the default provider", what,
         len, (unsigned)ctr);
}

static int mac_stream(EVP_MAC *m, const uint8_t key[32], const uint8_t *in, size_t len,
                      uint8_t tag[16])
{
    EVP_MAC_CTX *x = EVP_MAC_CTX_new(m);
    size_t sm = split_max(), done, tl = 0;
    int ok = x != NULL && EVP_MAC_init(x, key, 32, NULL);

    for (done = 0; ok && done < len;) {
        size_t n = piece(len - done, sm);

        ok = EVP_MAC_update(x, in + done, n);
        done += n;
    }
    ok = ok && EVP_MAC_final(x, tag, &tl, 16) && tl == 16;
    EVP_MAC_CTX_free(x);
    return ok;
}

static void check_mac(EVP_MAC *ours, const char *what)
{
    uint8_t key[32], tag[16], dtag[16];
    size_t len = pick_len(MAX_TEXT);

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(pt, len);
    T_OK(mac_stream(d_mac, key, pt, len, dtag), "%s: default POLY1305", what);
    T_OK(mac_stream(ours, key, pt, len, tag) && memcmp(tag, dtag, 16) == 0,
         "%s: POLY1305 of %zu bytes differs from the default provider", what, len);
}

/* One TLS 1.2 record in place (the AAD ctrl, one update over payload + tag), then opened. */
static int tls12(EVP_CIPHER *c, int enc, const uint8_t key[32], const uint8_t iv[12],
                 uint64_t seq, uint8_t *rec, size_t reclen)
{
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    uint8_t a[EVP_AEAD_TLS1_AAD_LEN];
    size_t payload = enc ? reclen - 16 : reclen;
    int ok, l = -1;

    for (int i = 0; i < 8; i++)
        a[i] = (uint8_t)(seq >> (56 - 8 * i));
    a[8] = 23;
    a[9] = 3;
    a[10] = 3;
    a[11] = (uint8_t)(payload >> 8);
    a[12] = (uint8_t)payload;
    ok = x != NULL && EVP_CipherInit_ex(x, c, NULL, key, iv, enc) &&
         EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_AEAD_TLS1_AAD, EVP_AEAD_TLS1_AAD_LEN, a) == 16 &&
         EVP_CipherUpdate(x, rec, &l, rec, (int)reclen) == 1 &&
         (size_t)l == (enc ? reclen : reclen - 16);
    EVP_CIPHER_CTX_free(x);
    ERR_clear_error();
    return ok;
}

static void check_tls12(EVP_CIPHER *ours, const char *what)
{
    uint8_t key[32], iv[12];
    size_t len = pick_len(TLS_MAX);
    uint64_t seq = t_rand64() >> t_rand_below(64);

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(iv, sizeof(iv));
    t_rand_bytes(pt, len);
    memcpy(ct, pt, len);
    memcpy(ct2, pt, len);
    T_OK(tls12(d_aead, 1, key, iv, seq, ct2, len + 16), "%s: default TLS 1.2 seal", what);
    if (!T_OK(tls12(ours, 1, key, iv, seq, ct, len + 16) && memcmp(ct, ct2, len + 16) == 0,
              "%s: TLS 1.2 record of %zu bytes failed or differs from the default provider",
              what, len))
        return;
    memcpy(out, ct, len + 16);
    T_OK(tls12(ours, 0, key, iv, seq, out, len + 16) && memcmp(out, pt, len) == 0,
         "%s: TLS 1.2 open of %zu bytes failed or differs", what, len);
    size_t bit = t_rand_below(8 * (len + 16));
    memcpy(out, ct, len + 16);
    out[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    T_OK(!tls12(ours, 0, key, iv, seq, out, len + 16),
         "%s: TLS 1.2 forged record accepted (%zu bytes, bit %zu)", what, len, bit);
}

#if OPENSSL_VERSION_NUMBER >= 0x30500000L
static void check_pipeline(EVP_CIPHER *ours, const char *what)
{
    aead a = { "ChaCha20-Poly1305", 12, ours, d_aead };
    batch b;
    size_t n = 1 + t_rand_below(MAXP);

    batch_make(&b, n, a.ivlen, t_rand_below(4) == 0);
    int ok = pipeline(ours, a.ivlen, &b, 1, (int)t_rand_below(2), (int)t_rand_below(2));

    T_OK(ok, "%s: pipeline seal of %zu messages failed", what, n);
    for (size_t i = 0; ok && i < n; i++) {
        uint8_t tag[TAGLEN], *ref = t_xmalloc(b.len[i] + 1); /* long messages: up to 70 KiB */

        T_OK(single(d_aead, 1, b.key, b.iv[i], b.aad[i], b.aadl[i], b.pt[i], b.len[i], ref, tag) &&
                 memcmp(ref, b.out[i], b.len[i]) == 0 && memcmp(tag, b.tag[i], TAGLEN) == 0,
             "%s: pipeline message %zu of %zu (%zu bytes) differs from the default provider",
             what, i, n, b.len[i]);
        free(ref);
    }
    batch_free(&b);
}
#endif

/* ---- one setting ---- */

static void run_setting(const char *level, const char *paths, const char *unforced)
{
    OSSL_PROVIDER *p;
    OSSL_LIB_CTX *lc = load(level, paths, &p);
    char kernel[64], shown[CHAPOLY_DESCRIBE_MAX], what[CHAPOLY_DESCRIBE_MAX + 400];

    snprintf(what, sizeof(what), "%s paths \"%.300s\"", level, paths);
    if (!T_OK(lc != NULL, "%s: chapoly did not load", what))
        return;
    settings_run++;
    if (T_OK(reported(p, kernel, sizeof(kernel), shown, sizeof(shown)), "%s: no paths reported",
             what)) {
        T_OK(strcmp(kernel, level) == 0, "%s: runs %s", what, kernel);
        if (unforced != NULL) /* the list was refused whole */
            T_OK(strcmp(shown, unforced) == 0, "%s: reports \"%s\", not the unforced \"%s\"",
                 what, shown, unforced);
        else if (*shown != '\0') {
            /* what is reported is what applies: forcing it again changes nothing */
            OSSL_PROVIDER *p2;
            OSSL_LIB_CTX *lc2 = load(level, shown, &p2);
            char k2[64], again[CHAPOLY_DESCRIBE_MAX];

            T_OK(lc2 != NULL && reported(p2, k2, sizeof(k2), again, sizeof(again)) &&
                     strcmp(again, shown) == 0,
                 "%s: reports \"%s\", forced again reports \"%s\"", what, shown,
                 lc2 != NULL ? again : "(no load)");
            if (lc2 != NULL)
                unload(lc2, p2);
        }
    }

    EVP_CIPHER *c = EVP_CIPHER_fetch(lc, "ChaCha20-Poly1305", PROVQ_OURS);
    EVP_CIPHER *x = EVP_CIPHER_fetch(lc, "XChaCha20-Poly1305", PROVQ_OURS);
    EVP_CIPHER *s = EVP_CIPHER_fetch(lc, "ChaCha20", PROVQ_OURS);
    EVP_MAC *m = EVP_MAC_fetch(lc, "POLY1305", PROVQ_OURS);

    if (T_OK(c && x && s && m, "%s: fetch", what))
        for (int i = 0; i < MESSAGES; i++) {
            check_aead(c, what);
            check_xchacha(x, what);
            check_chacha20(s, what);
            check_mac(m, what);
            check_tls12(c, what);
#if OPENSSL_VERSION_NUMBER >= 0x30500000L
            if (i == 0)
                check_pipeline(c, what);
#endif
        }
    ERR_clear_error();
    EVP_CIPHER_free(c);
    EVP_CIPHER_free(x);
    EVP_CIPHER_free(s);
    EVP_MAC_free(m);
    unload(lc, p);
}

static void run_level(const char *level)
{
    OSSL_PROVIDER *p;
    OSSL_LIB_CTX *lc = load(level, NULL, &p);
    char kernel[64], unforced[CHAPOLY_DESCRIBE_MAX], list[512];

    if (lc == NULL || !reported(p, kernel, sizeof(kernel), unforced, sizeof(unforced)) ||
        strcmp(kernel, level) != 0) {
        printf("level %s: not run here\n", level);
        if (lc != NULL)
            unload(lc, p);
        return;
    }
    unload(lc, p);
    levels_run++;
    printf("level %s, unforced: %s\n", level, *unforced ? unforced : "(no choices)");

    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        run_setting(level, refused[i], unforced);
    for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++)
        run_setting(level, choices[i], NULL);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (size_t v = 0; v < sizeof(edge_values) / sizeof(edge_values[0]); v++) {
            snprintf(list, sizeof(list), "%s=%s", sizes[i], edge_values[v]);
            run_setting(level, list, NULL);
        }
        snprintf(list, sizeof(list), "%s=%zu", sizes[i], t_rand_below(5000));
        run_setting(level, list, NULL);
    }
    /* mixtures: several names at random values, a refused item among them now and then */
    for (int r = 0; r < 12; r++) {
        size_t used = 0, items = 2 + t_rand_below(5);

        list[0] = '\0';
        for (size_t k = 0; k < items; k++) {
            size_t w = t_rand_below(10);
            int n;

            if (w < 6)
                n = snprintf(list + used, sizeof(list) - used, "%s%s=%zu", k ? " " : "",
                             sizes[t_rand_below(5)],
                             t_rand_below(3) ? t_rand_below(200) : t_rand_below(70000));
            else if (w < 9)
                n = snprintf(list + used, sizeof(list) - used, "%s%s", k ? "," : "",
                             choices[t_rand_below(sizeof(choices) / sizeof(choices[0]))]);
            else
                n = snprintf(list + used, sizeof(list) - used, "%s%s", k ? " " : "",
                             refused[t_rand_below(sizeof(refused) / sizeof(refused[0]))]);
            if (n < 0 || (size_t)n >= sizeof(list) - used)
                break;
            used += (size_t)n;
        }
        run_setting(level, list, NULL);
    }
}

int main(void)
{
    static const char *const levels[] = {
#define LEVEL_(name, build) name,
        CHAPOLY_LEVEL_LIST(LEVEL_)
#undef LEVEL_
    };
    OSSL_PROVIDER *op;

    t_setup();
    pt = t_xmalloc(MAX_TEXT + 64);
    ct = t_xmalloc(MAX_TEXT + 64);
    ct2 = t_xmalloc(MAX_TEXT + 64);
    out = t_xmalloc(MAX_TEXT + 64);
    aad = t_xmalloc(64);
    d_aead = t_cipher("ChaCha20-Poly1305", 0);
    d_chacha = t_cipher("ChaCha20", 0);
    d_mac = t_mac("POLY1305", 0);
    oracle_ctx = load("portable", NULL, &op);
    o_xchacha = oracle_ctx != NULL ? EVP_CIPHER_fetch(oracle_ctx, "XChaCha20-Poly1305", PROVQ_OURS)
                                   : NULL;
    if (!T_OK(d_aead && d_chacha && d_mac && o_xchacha, "the oracles"))
        return t_finish("test_forced_paths");
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
        run_level(levels[i]);
    T_OK(levels_run >= 1 && settings_run >= 100 * levels_run,
         "ran %lu settings at %lu levels", settings_run, levels_run);
    printf("%lu settings at %lu levels\n", settings_run, levels_run);
    EVP_CIPHER_free(o_xchacha);
    unload(oracle_ctx, op);
    EVP_CIPHER_free(d_aead);
    EVP_CIPHER_free(d_chacha);
    EVP_MAC_free(d_mac);
    free(pt);
    free(ct);
    free(ct2);
    free(out);
    free(aad);
    t_teardown();
    return t_finish("test_forced_paths");
}
