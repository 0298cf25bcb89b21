/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EVP_MAC "POLY1305" through chapoly against the default provider (same key
 * and message -> same tag), the key rules (32 bytes by init argument or by the
 * "key" parameter; no MACing without a key; no silent reuse of a one-time key
 * after data), dup mid-stream, output size, and the two procedural
 * accumulator checks documented in test/vectors/README.md.
 */
#include <stdlib.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include "test_common.h"

#define MAXLEN 5000
#define MAXSPLIT 161

static EVP_MAC *ours, *ref;

static int ref_tag(const uint8_t key[32], const uint8_t *msg, size_t len, uint8_t tag[16])
{
    EVP_MAC_CTX *mc = EVP_MAC_CTX_new(ref);
    size_t outl = 0;
    int ok = mc && EVP_MAC_init(mc, key, 32, NULL) && EVP_MAC_update(mc, msg, len)
             && EVP_MAC_final(mc, tag, &outl, 16) && outl == 16;
    EVP_MAC_CTX_free(mc);
    return ok;
}

static int key_param_init(EVP_MAC_CTX *mc, const uint8_t *key, size_t keylen)
{
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)key, keylen),
                        OSSL_PARAM_construct_end() };
    return EVP_MAC_init(mc, NULL, 0, p);
}

static int key_param_set(EVP_MAC_CTX *mc, const uint8_t *key, size_t keylen)
{
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)key, keylen),
                        OSSL_PARAM_construct_end() };
    return EVP_MAC_CTX_set_params(mc, p);
}

/* Keys the context one of three ways. */
static int set_key(EVP_MAC_CTX *mc, const uint8_t key[32], int how)
{
    switch (how) {
    case 0: return EVP_MAC_init(mc, key, 32, NULL);
    case 1: return key_param_init(mc, key, 32);
    default: return key_param_set(mc, key, 32) && EVP_MAC_init(mc, NULL, 0, NULL);
    }
}

static int feed_random(EVP_MAC_CTX *mc, const uint8_t *msg, size_t from, size_t to)
{
    for (size_t off = from; off < to;) {
        size_t n = t_rand_below(MAXSPLIT + 1);
        if (n > to - off)
            n = to - off;
        if (!EVP_MAC_update(mc, msg + off, n))
            return 0;
        off += n;
    }
    return 1;
}

static void test_random(void)
{
    static uint8_t msg[MAXLEN];
    static const char *hows[] = { "init key", "init key param", "set_params key" };

    for (size_t len = 0; len <= MAXLEN && t_fail <= 200; len++) {
        uint8_t key[32], want[16], got[16];
        int how = (int)(len % 3);
        size_t outl = 0;

        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(msg, len);
        if (!T_OK(ref_tag(key, msg, len, want), "default POLY1305 len %zu", len))
            continue;
        EVP_MAC_CTX *mc = EVP_MAC_CTX_new(ours);
        int ok = mc && set_key(mc, key, how) && feed_random(mc, msg, 0, len)
                 && EVP_MAC_final(mc, got, &outl, sizeof(got));
        T_OK(ok && outl == 16, "POLY1305 len %zu (%s): failed, outl %zu", len, hows[how], outl);
        T_OK(ok && memcmp(got, want, 16) == 0, "POLY1305 len %zu (%s): tag differs from default",
             len, hows[how]);
        EVP_MAC_CTX_free(mc);
        ERR_clear_error();
    }
}

static void test_dup(void)
{
    static uint8_t msg[MAXLEN];

    for (int i = 0; i < 200 && t_fail <= 200; i++) {
        size_t len = t_rand_below(i < 150 ? 300 : MAXLEN), cut = t_rand_below(len + 1);
        uint8_t key[32], want[16], t1[16], t2[16];
        size_t l1 = 0, l2 = 0;

        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(msg, len);
        T_OK(ref_tag(key, msg, len, want), "default POLY1305");
        EVP_MAC_CTX *mc = EVP_MAC_CTX_new(ours), *dup = NULL;
        int ok = mc && EVP_MAC_init(mc, key, 32, NULL) && feed_random(mc, msg, 0, cut)
                 && (dup = EVP_MAC_CTX_dup(mc)) != NULL;
        T_OK(ok, "POLY1305 dup at %zu of %zu", cut, len);
        if (ok) {
            T_OK(feed_random(mc, msg, cut, len) && EVP_MAC_final(mc, t1, &l1, 16) && l1 == 16
                     && memcmp(t1, want, 16) == 0,
                 "POLY1305 len %zu: original after dup at %zu differs from default", len, cut);
            T_OK(feed_random(dup, msg, cut, len) && EVP_MAC_final(dup, t2, &l2, 16) && l2 == 16
                     && memcmp(t2, want, 16) == 0,
                 "POLY1305 len %zu: duplicate made at %zu differs from default", len, cut);
        }
        EVP_MAC_CTX_free(mc);
        EVP_MAC_CTX_free(dup);
        ERR_clear_error();
    }
}

static void test_key_rules(void)
{
    uint8_t key[64], msg[100], want[16], got[16];
    size_t outl = 0;
    static const size_t bad[] = { 0, 1, 16, 31, 33, 64 };

    t_rand_bytes(key, sizeof(key));
    t_rand_bytes(msg, sizeof(msg));
    T_OK(ref_tag(key, msg, sizeof(msg), want), "default POLY1305");

    EVP_MAC_CTX *mc = EVP_MAC_CTX_new(ours);
    if (!T_OK(mc != NULL, "POLY1305 context"))
        return;

    /* Size is 16 before and after keying (default answers through get_params). */
    T_OK(EVP_MAC_CTX_get_mac_size(mc) == 16, "mac size before init: %zu",
         EVP_MAC_CTX_get_mac_size(mc));

    /* default 3.0.19: update without a key returns 1 (3.0.22 refuses with "no key set"). */
    T_REJECT(EVP_MAC_update(mc, msg, 10), "POLY1305 update without a key");
    /* default 3.0.19: final without a key crashes (NULL function pointer). */
    T_REJECT(EVP_MAC_final(mc, got, &outl, 16), "POLY1305 final without a key");

    /* Wrong key lengths: by argument, by init param, by set_params (default: same). */
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (bad[i] != 0)
            T_REJECT(EVP_MAC_init(mc, key, bad[i], NULL), "POLY1305 init with a %zu-byte key",
                     bad[i]);
        T_REJECT(key_param_init(mc, key, bad[i]), "POLY1305 init with a %zu-byte key param",
                 bad[i]);
        T_REJECT(key_param_set(mc, key, bad[i]), "POLY1305 set_params %zu-byte key", bad[i]);
    }
    /*
     * A rejected key does not leave a usable half-key behind. default 3.0.19:
     * this second keyless update crashes (NULL function pointer).
     */
    T_REJECT(EVP_MAC_update(mc, msg, 10), "POLY1305 update after only rejected keys");

    /* A good key works and the size stays 16. */
    T_OK(EVP_MAC_init(mc, key, 32, NULL), "POLY1305 init with 32-byte key");
    T_OK(EVP_MAC_CTX_get_mac_size(mc) == 16, "mac size after init: %zu",
         EVP_MAC_CTX_get_mac_size(mc));
    T_OK(EVP_MAC_update(mc, msg, 40), "update");

    /*
     * Rekeying with NULL after data would reuse a one-time key. default: also
     * refused, but without an error queued (here and after final).
     */
    T_REJECT(EVP_MAC_init(mc, NULL, 0, NULL), "POLY1305 init(NULL key) after update");
    T_OK(EVP_MAC_update(mc, msg + 40, sizeof(msg) - 40), "update after rejected re-init");
    /* Output buffer too small (EVP checks before calling the provider). */
    T_REJECT(EVP_MAC_final(mc, got, &outl, 15), "POLY1305 final with outsize 15");
    T_REJECT(EVP_MAC_final(mc, got, &outl, 0), "POLY1305 final with outsize 0");
    T_OK(EVP_MAC_final(mc, got, &outl, 16) && outl == 16 && memcmp(got, want, 16) == 0,
         "POLY1305 tag after rejected re-init/final differs from default");
    T_REJECT(EVP_MAC_init(mc, NULL, 0, NULL), "POLY1305 init(NULL key) after final");

    /* Re-init with the key, argument or param, reproduces the tag. */
    for (int how = 0; how < 3; how++) {
        memset(got, 0, sizeof(got));
        T_OK(set_key(mc, key, how) && EVP_MAC_update(mc, msg, sizeof(msg))
                 && EVP_MAC_final(mc, got, &outl, 16) && memcmp(got, want, 16) == 0,
             "POLY1305 re-init with the key (way %d) does not reproduce the tag", how);
    }
    /* Init(NULL key) right after a fresh key, before data, is fine (default: same). */
    T_OK(EVP_MAC_init(mc, key, 32, NULL) && EVP_MAC_init(mc, NULL, 0, NULL)
             && EVP_MAC_update(mc, msg, sizeof(msg)) && EVP_MAC_final(mc, got, &outl, 16)
             && memcmp(got, want, 16) == 0,
         "POLY1305 init(key) then init(NULL) before data");
    EVP_MAC_CTX_free(mc);

    /* A fresh context with a NULL key is unkeyed: update must fail (default 3.0.19: returns 1). */
    mc = EVP_MAC_CTX_new(ours);
    ERR_clear_error();
    (void)EVP_MAC_init(mc, NULL, 0, NULL); /* default accepts; either answer is fine */
    ERR_clear_error();
    T_REJECT(EVP_MAC_update(mc, msg, 10), "POLY1305 update after init(NULL) on a fresh context");
    EVP_MAC_CTX_free(mc);

    /* The algorithm's own size param (default: 16). */
    size_t sz = 0;
    OSSL_PARAM p[2] = { OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &sz),
                        OSSL_PARAM_construct_end() };
    T_OK(EVP_MAC_get_params(ours, p) && sz == 16, "POLY1305 algorithm size param %zu", sz);
}

static void hex(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        sscanf(s + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

/* Feeds one tag from mac into acc (a keyed accumulator context). */
static int tag_into(EVP_MAC_CTX *m, EVP_MAC_CTX *acc)
{
    uint8_t t[16];
    size_t l = 0;
    return EVP_MAC_final(m, t, &l, 16) && l == 16 && EVP_MAC_update(acc, t, 16);
}

/* README "all ones" (Linux poly1305_kunit). */
static int all_ones(EVP_MAC *mac, uint8_t result[16])
{
    uint8_t key[32], ff[4096];
    size_t l = 0;
    EVP_MAC_CTX *a = EVP_MAC_CTX_new(mac), *b = EVP_MAC_CTX_new(mac);
    int ok = a && b;

    memset(key, 0xff, sizeof(key));
    memset(ff, 0xff, sizeof(ff));
    ok = ok && EVP_MAC_init(a, key, 32, NULL) && EVP_MAC_init(b, key, 32, NULL);
    for (int rep = 0; ok && rep < 32; rep++) {
        for (size_t len = 0; ok && len <= 4096; len += 16) {
            EVP_MAC_CTX *copy = NULL;
            ok = EVP_MAC_update(a, ff, len) && (copy = EVP_MAC_CTX_dup(a)) != NULL
                 && tag_into(copy, b);
            EVP_MAC_CTX_free(copy);
        }
    }
    ok = ok && EVP_MAC_final(b, result, &l, 16) && l == 16;
    EVP_MAC_CTX_free(a);
    EVP_MAC_CTX_free(b);
    return ok;
}

/* README "total" (poly1305-donna). */
static int total(EVP_MAC *mac, uint8_t result[16])
{
    uint8_t tkey[32], key[32], msg[256];
    size_t l = 0;
    EVP_MAC_CTX *t = EVP_MAC_CTX_new(mac);

    hex("01020304050607fffefdfcfbfaf9ffffffffffffffffffffffffffff00000000", tkey, 32);
    int ok = t && EVP_MAC_init(t, tkey, 32, NULL);
    for (int i = 0; ok && i < 256; i++) {
        EVP_MAC_CTX *m = EVP_MAC_CTX_new(mac);
        memset(key, i, sizeof(key));
        memset(msg, i, (size_t)i);
        ok = m && EVP_MAC_init(m, key, 32, NULL) && EVP_MAC_update(m, msg, (size_t)i)
             && tag_into(m, t);
        EVP_MAC_CTX_free(m);
    }
    ok = ok && EVP_MAC_final(t, result, &l, 16) && l == 16;
    EVP_MAC_CTX_free(t);
    return ok;
}

static void test_procedural(void)
{
    uint8_t want[16], got[16], dref[16];

    hex("0c266b458706cfc43f707db350dd8125", want, 16);
    T_OK(all_ones(ours, got) && memcmp(got, want, 16) == 0, "POLY1305 \"all ones\" check");
    T_OK(all_ones(ref, dref) && memcmp(dref, want, 16) == 0, "default \"all ones\" check");

    hex("64afe2e8d6ad7bbdd287f97c44623d39", want, 16);
    T_OK(total(ours, got) && memcmp(got, want, 16) == 0, "POLY1305 \"total\" check");
    T_OK(total(ref, dref) && memcmp(dref, want, 16) == 0, "default \"total\" check");
}

/* The size asked for with NULL data in every numeric type: a size query, never a crash. */
static void test_null_param_data(void)
{
    static const unsigned types[] = { OSSL_PARAM_INTEGER, OSSL_PARAM_UNSIGNED_INTEGER,
                                      OSSL_PARAM_REAL };
    EVP_MAC_CTX *mc = EVP_MAC_CTX_new(ours);

    T_OK(mc != NULL, "EVP_MAC_CTX_new");
    for (size_t t = 0; mc != NULL && t < sizeof(types) / sizeof(types[0]); t++) {
        size_t want = types[t] == OSSL_PARAM_REAL ? sizeof(double) : sizeof(size_t);
        OSSL_PARAM p[2] = { { OSSL_MAC_PARAM_SIZE, types[t], NULL, want, OSSL_PARAM_UNMODIFIED },
                            OSSL_PARAM_END };

        T_OK(EVP_MAC_get_params(ours, p) == 1 && p[0].return_size == want,
             "EVP_MAC_get_params size (type %u) with NULL data: return_size %zu", types[t],
             p[0].return_size);
        p[0].return_size = OSSL_PARAM_UNMODIFIED;
        T_OK(EVP_MAC_CTX_get_params(mc, p) == 1 && p[0].return_size == want,
             "EVP_MAC_CTX_get_params size (type %u) with NULL data: return_size %zu", types[t],
             p[0].return_size);
    }
    EVP_MAC_CTX_free(mc);
}

/*
 * The size in each integer form a caller may ask for it (the provider answers
 * a size_t directly, the rest through OSSL_PARAM_set_size_t): the same value
 * and return_size as the default provider's EVP_MAC_get_params (its POLY1305
 * has no context parameters), from both of ours.
 */
static void test_size_forms(void)
{
    static const struct {
        unsigned type;
        size_t bytes;
    } forms[] = { { OSSL_PARAM_UNSIGNED_INTEGER, sizeof(size_t) },
                  { OSSL_PARAM_UNSIGNED_INTEGER, sizeof(uint32_t) },
                  { OSSL_PARAM_INTEGER, sizeof(int64_t) },
                  { OSSL_PARAM_INTEGER, sizeof(int32_t) } };
    EVP_MAC_CTX *mo = EVP_MAC_CTX_new(ours), *mr = EVP_MAC_CTX_new(ref);

    T_OK(mo != NULL && mr != NULL, "EVP_MAC_CTX_new");
    for (size_t f = 0; mo != NULL && mr != NULL && f < sizeof(forms) / sizeof(forms[0]); f++) {
        unsigned char vo[8], vr[8];
        OSSL_PARAM po[2] = { { OSSL_MAC_PARAM_SIZE, forms[f].type, vo, forms[f].bytes,
                               OSSL_PARAM_UNMODIFIED }, OSSL_PARAM_END };
        OSSL_PARAM pr[2] = { { OSSL_MAC_PARAM_SIZE, forms[f].type, vr, forms[f].bytes,
                               OSSL_PARAM_UNMODIFIED }, OSSL_PARAM_END };

        memset(vo, 0xa5, sizeof(vo));
        memset(vr, 0xa5, sizeof(vr));
        int okr = EVP_MAC_get_params(ref, pr);

        for (int ctx = 0; ctx < 2; ctx++) {
            int ok = ctx ? EVP_MAC_CTX_get_params(mo, po) : EVP_MAC_get_params(ours, po);

            T_OK(ok == 1 && okr == 1 && po[0].return_size == pr[0].return_size &&
                 memcmp(vo, vr, 8) == 0,
                 "size as type %u of %zu bytes (%s): %d/%d, return_size %zu/%zu (ours/default)",
                 forms[f].type, forms[f].bytes, ctx ? "context" : "algorithm", ok, okr,
                 po[0].return_size, pr[0].return_size);
            memset(vo, 0xa5, sizeof(vo));
            po[0].return_size = OSSL_PARAM_UNMODIFIED;
        }
    }
    /* behind another key, and twice: the first "size" answered (as OSSL_PARAM_locate finds) */
    if (mo != NULL) {
        size_t other = 7, a = 0, b = 0;
        OSSL_PARAM p[4] = { OSSL_PARAM_construct_size_t("chapoly-no-such-key", &other),
                            OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &a),
                            OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &b), OSSL_PARAM_END };

        T_OK(EVP_MAC_CTX_get_params(mo, p) == 1 && a == 16 && other == 7 &&
             OSSL_PARAM_modified(&p[1]) && !OSSL_PARAM_modified(&p[0]),
             "size behind another key: %zu (other %zu)", a, other);
    }
    T_OK(mo != NULL && EVP_MAC_CTX_get_mac_size(mo) == 16, "EVP_MAC_CTX_get_mac_size");
    EVP_MAC_CTX_free(mo);
    EVP_MAC_CTX_free(mr);
}

int main(void)
{
    t_setup();
    ours = t_mac("POLY1305", 1);
    ref = t_mac("POLY1305", 0);
    if (T_OK(ours != NULL && ref != NULL, "fetch POLY1305")) {
        test_random();
        test_dup();
        test_key_rules();
        test_procedural();
        test_null_param_data();
        test_size_forms();
    }
    EVP_MAC_free(ours);
    EVP_MAC_free(ref);
    t_teardown();
    return t_finish("test_mac");
}
