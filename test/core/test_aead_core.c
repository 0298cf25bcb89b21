/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The AEAD core (core/aead_core.h) through its own API, no OpenSSL, at
 * every kernel level this CPU runs. The oracle is a plain RFC 8439 2.8
 * composition written here from the portable kernels (one ChaCha20 call for
 * block 0, one for the text, one Poly1305 pass over the whole MAC input),
 * itself checked against the RFC 8439 and XChaCha vector files.
 *
 * Streaming: every length that picks a different first batch, stitched run
 * or tail (0..20 KiB), AAD lengths around the spare half of the key block
 * and the AAD buffer, AAD and text cut into random pieces (empty ones
 * included), in place and out of place, sealing and opening, truncated and
 * forged tags, a copy of a state in mid-message. One-shot: the same
 * lengths, in place, and a forged tag leaves the output untouched.
 *
 * Streaming batches (keystream made ahead, ciphertext collected for the
 * MAC): updates of fixed sizes that end mid-block, mid-MAC-block and on
 * batch ends (2 KiB batches), with the caller overwriting its buffers
 * between updates (sealing: the output it got; opening in place: the
 * plaintext it got), one state reused for messages under new nonces and
 * keys after a finish, a verify or an abandoned message, and the keystream
 * buffer all zero after each of those.
 *
 * Environment: CHAPOLY_VECTOR_DIR (default compiled in), CHAPOLY_TEST_SEED.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "aead_core.h"
#include "vectors.h"

static unsigned long n_pass, n_fail;
static const char *cur_level = "setup";

#define CHECK(cond, ...) ((cond) ? (void)n_pass++ : fail_at(__LINE__, __VA_ARGS__))

static void fail_at(int line, const char *fmt, ...)
{
    va_list ap;

    if (++n_fail > 50)
        return;
    printf("FAIL [%s] line %d: ", cur_level, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
    uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rnd_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

static uint8_t *xalloc(size_t n)
{
    uint8_t *p = malloc(n ? n : 1);

    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* ---- oracle: RFC 8439 2.8 from the portable kernels ---- */

static void ref_seal(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                     size_t aadlen, const uint8_t *pt, size_t len, uint8_t *ct, uint8_t tag[16])
{
    const chapoly_kernels *p = chapoly_kernels_portable();
    uint32_t kw[8], ctr_nonce[4] = { 0, le32(nonce), le32(nonce + 4), le32(nonce + 8) };
    uint8_t block0[64] = { 0 };
    size_t ap = (aadlen + 15) & ~(size_t)15, cp = (len + 15) & ~(size_t)15;
    uint8_t *mac = xalloc(ap + cp + 16);
    poly1305_state st;

    for (int i = 0; i < 8; i++)
        kw[i] = le32(key + 4 * i);
    p->chacha20_xor(p, block0, block0, 64, kw, ctr_nonce);
    ctr_nonce[0] = 1;
    if (len > 0)
        p->chacha20_xor(p, ct, pt, len, kw, ctr_nonce);
    memset(mac, 0, ap + cp + 16);
    if (aadlen > 0)
        memcpy(mac, aad, aadlen);
    if (len > 0)
        memcpy(mac + ap, ct, len);
    for (int i = 0; i < 8; i++) {
        mac[ap + cp + i] = (uint8_t)((uint64_t)aadlen >> (8 * i));
        mac[ap + cp + 8 + i] = (uint8_t)((uint64_t)len >> (8 * i));
    }
    chapoly_poly1305_init(p, &st, block0);
    chapoly_poly1305_update(p, &st, mac, ap + cp + 16);
    chapoly_poly1305_final(p, &st, tag);
    free(mac);
}

/* ---- the core, streamed in pieces ---- */

/* Cuts n bytes into pieces: mode 0 one piece, 1 random (empty included), 2 small, 3 around 1 KiB. */
static size_t cut(size_t *pieces, size_t max, size_t n, int mode)
{
    size_t np = 0;

    while (n > 0 && np + 1 < max) {
        size_t p;

        switch (mode) {
        case 0: p = n; break;
        case 1: p = (size_t)(rnd() % (n + 1)); if (rnd() % 4 == 0) p = 0; break;
        case 2: p = 1 + (size_t)(rnd() % 80); break;
        default: p = 1023 + (size_t)(rnd() % 3); break;
        }
        if (p > n)
            p = n;
        pieces[np++] = p;
        n -= p;
    }
    if (n > 0)
        pieces[np++] = n;
    return np;
}

#define MAXP 4096

/* Zeroed, 64-byte aligned as poly1305_state asks (the provider's contexts are too). */
static chapoly_aead *state_alloc(void)
{
    size_t n = (sizeof(chapoly_aead) + 63) & ~(size_t)63;
    chapoly_aead *a = aligned_alloc(64, n);

    if (a == NULL)
        exit(1);
    memset(a, 0, n);
    return a;
}

/*
 * One message through the core: AAD and text cut by the modes; enc seals
 * (tag out), else opens and returns the verdict for the given tag. dup: the
 * state is copied after the first text piece and the copy finishes.
 */
static int core_run(const chapoly_kernels *k, int x, const uint8_t *key, const uint8_t *nonce,
                    const uint8_t *aad, size_t aadlen, const uint8_t *in, uint8_t *out,
                    size_t len, int enc, uint8_t tag[16], size_t taglen, int amode, int tmode,
                    int dup)
{
    static size_t pieces[MAXP];
    chapoly_aead *a = state_alloc(), *b = NULL;
    size_t np, off = 0;
    int ok = 1;

    if (x)
        chapoly_aead_start_xchacha(a, k, key, nonce);
    else
        chapoly_aead_start(a, k, key, nonce);
    np = cut(pieces, MAXP, aadlen, amode);
    for (size_t i = 0; i < np; i++) {
        chapoly_aead_aad(a, aad + off, pieces[i]);
        off += pieces[i];
    }
    np = cut(pieces, MAXP, len, tmode);
    off = 0;
    for (size_t i = 0; i < np; i++) {
        chapoly_aead_text(a, out + off, in + off, pieces[i], enc);
        off += pieces[i];
        if (dup && i == 0) { /* the copy goes on, the original is abandoned */
            b = state_alloc();
            memcpy(b, a, sizeof(*b));
            chapoly_aead_clear(a);
            free(a);
            a = b;
        }
    }
    if (enc)
        chapoly_aead_finish(a, tag);
    else
        ok = chapoly_aead_verify(a, tag, taglen);
    chapoly_aead_clear(a);
    free(a);
    return ok;
}

static const size_t text_lens[] = {
    0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 191, 192, 193, 255, 256, 511, 959, 960, 961,
    1023, 1024, 1025, 1983, 1984, 1985, 2047, 2048, 2049, 3007, 3008, 3071, 3072, 3073,
    4095, 4096, 4097, 5000, 8191, 8192, 8193, 9217, 17000, 20487
};
static const size_t aad_lens[] = { 0, 1, 13, 16, 17, 32, 33, 63, 64, 65, 100, 300 };
#define NTEXT (sizeof(text_lens) / sizeof(text_lens[0]))
#define NAAD (sizeof(aad_lens) / sizeof(aad_lens[0]))
#define TMAX 20487
#define AMAX 300

static uint8_t *pt, *ct_ref, *buf, *buf2, *aadb;

static void stream_diff(const chapoly_kernels *k)
{
    uint8_t key[32], nonce[24], tag_ref[16], tag[16];

    for (size_t ti = 0; ti < NTEXT; ti++) {
        for (size_t ai = 0; ai < NAAD; ai++) {
            size_t len = text_lens[ti], aadlen = aad_lens[ai];
            int x = (int)(rnd() % 4 == 0); /* some as XChaCha */
            uint8_t n12[12];

            rnd_bytes(key, 32);
            rnd_bytes(nonce, 24);
            rnd_bytes(pt, len);
            rnd_bytes(aadb, aadlen);
            if (x) { /* the oracle's key: HChaCha20 from the portable level */
                uint8_t sub[32];

                chapoly_kernels_portable()->hchacha20(chapoly_kernels_portable(), sub, key, nonce);
                memset(n12, 0, 4);
                memcpy(n12 + 4, nonce + 16, 8);
                ref_seal(sub, n12, aadb, aadlen, pt, len, ct_ref, tag_ref);
            } else {
                ref_seal(key, nonce, aadb, aadlen, pt, len, ct_ref, tag_ref);
            }
            for (int mode = 0; mode < 4; mode++) {
                int amode = (int)(rnd() % 3), inplace = mode & 1, dup = mode == 3;

                /* seal */
                memcpy(buf, pt, len);
                core_run(k, x, key, nonce, aadb, aadlen, inplace ? buf : pt, inplace ? buf : buf2,
                         len, 1, tag, 16, amode, mode, dup);
                CHECK(memcmp(inplace ? buf : buf2, ct_ref, len) == 0 &&
                          memcmp(tag, tag_ref, 16) == 0,
                      "%s seal%s: text %zu aad %zu cut %d/%d%s%s", k->name, x ? " (X)" : "", len,
                      aadlen, amode, mode, inplace ? " in place" : "", dup ? " dup" : "");
                /* open */
                memcpy(buf, ct_ref, len);
                int ok = core_run(k, x, key, nonce, aadb, aadlen, inplace ? buf : ct_ref,
                                  inplace ? buf : buf2, len, 0, tag_ref, 16, amode, mode, dup);
                CHECK(ok && memcmp(inplace ? buf : buf2, pt, len) == 0,
                      "%s open%s: text %zu aad %zu cut %d/%d%s%s", k->name, x ? " (X)" : "", len,
                      aadlen, amode, mode, inplace ? " in place" : "", dup ? " dup" : "");
            }
            /* a forged tag, and a truncated good one */
            uint8_t bad[16];
            size_t taglen = 1 + (size_t)(rnd() % 16);

            memcpy(bad, tag_ref, 16);
            bad[rnd() % taglen] ^= (uint8_t)(1u << (rnd() % 8));
            CHECK(!core_run(k, x, key, nonce, aadb, aadlen, ct_ref, buf2, len, 0, bad, taglen,
                            0, 1, 0),
                  "%s open accepted a forged tag: text %zu aad %zu taglen %zu", k->name, len,
                  aadlen, taglen);
            CHECK(core_run(k, x, key, nonce, aadb, aadlen, ct_ref, buf2, len, 0, tag_ref, taglen,
                           1, 2, 0),
                  "%s open rejected a truncated tag: text %zu aad %zu taglen %zu", k->name, len,
                  aadlen, taglen);
        }
    }
}

/*
 * Opening in one context, message after message, each no shorter than the
 * last: the core then takes a short first update through aead_first
 * (open_rows: the key block beside the text's row sets, in place allowed)
 * instead of keystream made ahead. The level with "aead=stitched
 * open-rows=384" forced (where it has the form), so every CPU runs it:
 * texts of 100..400 bytes (the form's limits and either side) as one update
 * then the rest in pieces, AAD 0..65 in one piece or two, in place and
 * not, every tenth a forged tag (refused).
 */
static void open_rows_stream(const chapoly_kernels *k)
{
    chapoly_kernels forced;
    uint8_t key[32], nonce[12], tag_ref[16], bad[16];
    chapoly_aead *a = state_alloc();

    chapoly_kernels_build(&forced, k->name, "aead=stitched open-rows=384", NULL, NULL);
    if (forced.shapes.open_rows == 0) {
        free(a);
        return;
    }
    rnd_bytes(key, 32);
    for (size_t len = 100, i = 0; len <= 400; len += (size_t)(rnd() % 5), i++) {
        size_t aadlen = (size_t)(rnd() % 66), first = i % 7 == 6 ? len - (size_t)(rnd() % 70) : len;
        size_t acut = aadlen > 0 && i % 3 == 0 ? (size_t)(rnd() % aadlen) : aadlen;
        int inplace = (int)(i & 1), forge = i % 10 == 9;
        uint8_t *o = inplace ? buf : buf2;
        const uint8_t *in = inplace ? buf : ct_ref;

        rnd_bytes(nonce, 12);
        rnd_bytes(pt, len);
        rnd_bytes(aadb, aadlen);
        ref_seal(key, nonce, aadb, aadlen, pt, len, ct_ref, tag_ref);
        memcpy(buf, ct_ref, len);
        memcpy(bad, tag_ref, 16);
        if (forge)
            bad[rnd() % 16] ^= (uint8_t)(1u << (rnd() % 8));
        chapoly_aead_start(a, &forced, key, nonce);
        chapoly_aead_aad(a, aadb, acut);
        chapoly_aead_aad(a, aadb + acut, aadlen - acut);
        chapoly_aead_text(a, o, in, first, 0);
        chapoly_aead_text(a, o + first, in + first, len - first, 0);
        int ok = chapoly_aead_verify(a, bad, 16);

        if (forge)
            CHECK(!ok, "%s open (open_rows forced) accepted a forged tag: text %zu aad %zu",
                  k->name, len, aadlen);
        else
            CHECK(ok && memcmp(o, pt, len) == 0,
                  "%s open (open_rows forced): text %zu (first update %zu) aad %zu%s", k->name,
                  len, first, aadlen, inplace ? " in place" : "");
    }
    chapoly_aead_clear(a);
    free(a);
}

static void oneshot_diff(const chapoly_kernels *k)
{
    uint8_t key[32], nonce[12], tag_ref[16], tag[16];
    uint32_t kw[8];

    for (size_t ti = 0; ti < NTEXT; ti++) {
        for (size_t ai = 0; ai < NAAD; ai += 2) {
            size_t len = text_lens[ti], aadlen = aad_lens[ai];

            rnd_bytes(key, 32);
            rnd_bytes(nonce, 12);
            rnd_bytes(pt, len);
            rnd_bytes(aadb, aadlen);
            for (int i = 0; i < 8; i++)
                kw[i] = le32(key + 4 * i);
            ref_seal(key, nonce, aadb, aadlen, pt, len, ct_ref, tag_ref);

            chapoly_aead_seal(k, buf2, tag, pt, len, aadb, aadlen, kw, nonce);
            CHECK(memcmp(buf2, ct_ref, len) == 0 && memcmp(tag, tag_ref, 16) == 0,
                  "%s one-shot seal: text %zu aad %zu", k->name, len, aadlen);
            memcpy(buf, pt, len);
            chapoly_aead_seal(k, buf, tag, buf, len, aadb, aadlen, kw, nonce);
            CHECK(memcmp(buf, ct_ref, len) == 0 && memcmp(tag, tag_ref, 16) == 0,
                  "%s one-shot seal in place: text %zu aad %zu", k->name, len, aadlen);

            memset(buf2, 0xa5, len);
            CHECK(chapoly_aead_open(k, buf2, ct_ref, len, aadb, aadlen, tag_ref, 16, kw, nonce) &&
                      memcmp(buf2, pt, len) == 0,
                  "%s one-shot open: text %zu aad %zu", k->name, len, aadlen);
            memcpy(buf, ct_ref, len);
            CHECK(chapoly_aead_open(k, buf, buf, len, aadb, aadlen, tag_ref, 16, kw, nonce) &&
                      memcmp(buf, pt, len) == 0,
                  "%s one-shot open in place: text %zu aad %zu", k->name, len, aadlen);

            /* forged: nothing written, in place or not */
            uint8_t bad[16];
            int ok;

            memcpy(bad, tag_ref, 16);
            bad[rnd() % 16] ^= 0x10;
            memset(buf2, 0xa5, len);
            ok = chapoly_aead_open(k, buf2, ct_ref, len, aadb, aadlen, bad, 16, kw, nonce);
            size_t untouched = 0;
            while (untouched < len && buf2[untouched] == 0xa5)
                untouched++;
            CHECK(!ok && untouched == len, "%s one-shot open: forged tag %s (text %zu aad %zu)",
                  k->name, ok ? "accepted" : "but output written", len, aadlen);
            memcpy(buf, ct_ref, len);
            ok = chapoly_aead_open(k, buf, buf, len, aadb, aadlen, bad, 16, kw, nonce);
            CHECK(!ok && memcmp(buf, ct_ref, len) == 0,
                  "%s one-shot open in place: forged tag %s (text %zu aad %zu)", k->name,
                  ok ? "accepted" : "but buffer changed", len, aadlen);
        }
    }
}

/* ---- streaming batches ---- */

/* ks[] all zero: no keystream left in the state. */
static int ks_clean(const chapoly_aead *a)
{
    for (size_t i = 0; i < sizeof(a->ks); i++)
        if (a->ks[i] != 0)
            return 0;
    return a->ks_made == 0;
}

/*
 * One message on state a (already used, or fresh) in updates of u bytes.
 * After each update the caller's buffers are overwritten: sealing, the
 * ciphertext just returned (the core must have its own copy for the MAC);
 * opening in place, the plaintext just returned (the ciphertext was there).
 * The output is gathered in res. Returns the verdict (open) or 1.
 */
static int batch_run(chapoly_aead *a, const chapoly_kernels *k, const uint8_t *key,
                     const uint8_t *nonce, const uint8_t *aad, size_t aadlen,
                     const uint8_t *in, size_t len, size_t u, int enc, uint8_t *res,
                     uint8_t tag[16])
{
    uint8_t piece[4096 + 64];
    int ok = 1;

    chapoly_aead_start(a, k, key, nonce);
    chapoly_aead_aad(a, aad, aadlen);
    for (size_t off = 0; off < len; off += u) {
        size_t n = len - off < u ? len - off : u;

        memcpy(piece, in + off, n); /* in place, in the caller's reused buffer */
        chapoly_aead_text(a, piece, piece, n, enc);
        memcpy(res + off, piece, n);
        memset(piece, 0x5c, sizeof(piece));
    }
    if (enc)
        chapoly_aead_finish(a, tag);
    else
        ok = chapoly_aead_verify(a, tag, 16);
    CHECK(ks_clean(a), "%s: keystream left in the state after %s (text %zu, updates of %zu)",
          k->name, enc ? "finish" : "verify", len, u);
    return ok;
}

static void stream_batches(const chapoly_kernels *k)
{
    static const size_t us[] = { 1, 7, 15, 16, 31, 64, 136, 255, 256, 500, 511, 512, 513,
                                 1000, 1023, 1024, 1025, 1536, 2047, 2048, 2049, 4096 };
    static const size_t lens[] = { 1, 100, 1024, 2048, 3000, 5000, 8192 + 17, 12345 };
    chapoly_aead *a = state_alloc();
    uint8_t key[2][32], nonce[12], tag_ref[16], tag[16], aad[13];

    rnd_bytes(key[0], 32);
    rnd_bytes(key[1], 32);
    rnd_bytes(aad, sizeof(aad));
    for (size_t ui = 0; ui < sizeof(us) / sizeof(us[0]); ui++) {
        for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
            size_t u = us[ui], len = lens[li];
            const uint8_t *kk = key[(ui + li) & 1]; /* same key, then another */

            rnd_bytes(nonce, 12);
            rnd_bytes(pt, len);
            ref_seal(kk, nonce, aad, sizeof(aad), pt, len, ct_ref, tag_ref);
            batch_run(a, k, kk, nonce, aad, sizeof(aad), pt, len, u, 1, buf, tag);
            CHECK(memcmp(buf, ct_ref, len) == 0 && memcmp(tag, tag_ref, 16) == 0,
                  "%s batched seal: text %zu in updates of %zu", k->name, len, u);
            CHECK(batch_run(a, k, kk, nonce, aad, sizeof(aad), ct_ref, len, u, 0, buf,
                            tag_ref) &&
                      memcmp(buf, pt, len) == 0,
                  "%s batched open: text %zu in updates of %zu", k->name, len, u);
            tag[0] = (uint8_t)(tag_ref[0] ^ 1);
            CHECK(!batch_run(a, k, kk, nonce, aad, sizeof(aad), ct_ref, len, u, 0, buf, tag),
                  "%s batched open accepted a forged tag: text %zu in updates of %zu",
                  k->name, len, u);
            /* abandoned mid-message: the restart must not reuse anything of it */
            chapoly_aead_start(a, k, kk, nonce);
            chapoly_aead_text(a, buf, pt, len < u ? len : u, 1);
            if (rnd() & 1) {
                chapoly_aead_end(a);
                CHECK(ks_clean(a), "%s: keystream left after end (updates of %zu)", k->name,
                      u);
            }
        }
    }
    chapoly_aead_clear(a);
    CHECK(ks_clean(a), "%s: keystream left after clear", k->name);
    free(a);
}

/* long enough for two refills on the grid (and one past it) */
#define REFILL_LEN 8192

/*
 * Refill sizes (aead_next_batch): after an update of at least a kilobyte,
 * a refill makes only the whole blocks the update needs; small updates
 * start with the block made with the key block, then half the text so
 * far in whole batches, up to 2 KiB. The first update, 1030 bytes, leaves 6 bytes of a
 * partial block (batch_used 6 at text offset 1024 at every level), so the
 * second, of len bytes, refills from that block with 6 + len bytes to
 * cover, rounded up to a block: 1 and 58 make 64, 59 (one byte past a
 * block) 128, 506 512, 507 576, 570 576, 571 640, 1018 1024, 1019 1088,
 * 1530 1536, 1531 1600, 1978 1984, 1979 2048, 2042 2048; 2043 and 2500
 * (ks_len 0 below) make 2048 and then the rest, never more than ks[] holds
 * (ks_made, the most it held). Each message is checked (seal with the
 * buffers overwritten, open), the state's keystream made counted, and ks[]
 * wiped after the finish.
 */
static void stream_refill(const chapoly_kernels *k)
{
    static const struct {
        size_t second, ks_len;
    } cases[] = { { 1, 64 },       { 58, 64 },     { 59, 128 },    { 506, 512 },
                  { 507, 576 },    { 570, 576 },   { 571, 640 },   { 1018, 1024 },
                  { 1019, 1088 },  { 1530, 1536 }, { 1531, 1600 }, { 1978, 1984 },
                  { 1979, 2048 },  { 2042, 2048 }, { 2043, 0 },    { 2500, 0 } };
    chapoly_aead *a = state_alloc();
    uint8_t key[32], nonce[12], aad[13], tag_ref[16], tag[16], piece[2500];

    rnd_bytes(key, 32);
    rnd_bytes(aad, sizeof(aad));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t u[3] = { 1030, cases[i].second, 100 }, len = u[0] + u[1] + u[2], off = 0;

        rnd_bytes(nonce, 12);
        rnd_bytes(pt, len);
        ref_seal(key, nonce, aad, sizeof(aad), pt, len, ct_ref, tag_ref);
        for (int enc = 1; enc >= 0; enc--) {
            chapoly_aead_start(a, k, key, nonce);
            chapoly_aead_aad(a, aad, sizeof(aad));
            off = 0;
            for (int j = 0; j < 3; j++) {
                memcpy(piece, (enc ? pt : ct_ref) + off, u[j]);
                chapoly_aead_text(a, piece, piece, u[j], enc);
                memcpy(buf + off, piece, u[j]);
                memset(piece, 0x5c, sizeof(piece));
                off += u[j];
                if (j == 1 && enc && cases[i].ks_len == 0)
                    CHECK(a->ks_made == AEAD_BATCH_MAX,
                          "%s refill: 1030 then %zu bytes held %u bytes of keystream, not %d",
                          k->name, u[1], a->ks_made, AEAD_BATCH_MAX);
                else if (j == 1 && enc)
                    CHECK(a->ks_len == cases[i].ks_len,
                          "%s refill: 1030 then %zu bytes made %u bytes of keystream, not %zu",
                          k->name, u[1], a->ks_len, cases[i].ks_len);
            }
            if (enc) {
                chapoly_aead_finish(a, tag);
                CHECK(memcmp(buf, ct_ref, len) == 0 && memcmp(tag, tag_ref, 16) == 0,
                      "%s refill seal: updates 1030, %zu, 100", k->name, u[1]);
            } else {
                CHECK(chapoly_aead_verify(a, tag_ref, 16) && memcmp(buf, pt, len) == 0,
                      "%s refill open: updates 1030, %zu, 100", k->name, u[1]);
            }
            CHECK(ks_clean(a), "%s refill: keystream left after updates 1030, %zu", k->name,
                  u[1]);
        }
    }
    /*
     * small updates: a block of keystream with the key block (the first
     * update is shorter than a block: 2 blocks in all), then refills of half the text so far (a
     * message ending right after a refill costs at most one and a half times its
     * keystream), at least the level's stream_min, in whole chacha_batch batches, up to 2 KiB;
     * a 2 KiB refill ends where the text reaches a multiple of 2 KiB (the refill starts at
     * the block of 'seen': 16-byte updates refill at block boundaries), except at a level
     * whose 2 KiB is one pair of its batches, run in flight (chacha_pairs_min)
     */
    int pairs = k->shapes.chacha_pairs_min != 0 && k->shapes.chacha_pairs_min <= AEAD_BATCH_MAX &&
                2 * k->shapes.chacha_batch >= AEAD_BATCH_MAX;

    /*
     * a first update of one block takes the key block and that block only (a
     * 64-byte record or XChaCha20-Poly1305 message pays for two blocks); one
     * of 65 bytes the 4-block shape, or 3 blocks where the short row shapes
     * put an odd block beside the row sets (short-rows with chacha-one=scalar)
     */
    int odd = k->shapes.short_rows != 0 && !k->shapes.one_block_rows;

    for (size_t first = 64; first <= 65; first++) {
        unsigned want1 = first == 64 ? 64 : odd ? 128 : 192;

        chapoly_aead_start(a, k, key, nonce);
        chapoly_aead_text(a, piece, pt, first, 1);
        CHECK(a->ks_len == want1 && a->ks_made == want1,
              "%s fill: a first update of %zu bytes made %u bytes of keystream, not %u", k->name,
              first, a->ks_len, want1);
        chapoly_aead_finish(a, tag);
        ref_seal(key, nonce, NULL, 0, pt, first, ct_ref, tag_ref);
        CHECK(memcmp(tag, tag_ref, 16) == 0 && memcmp(piece, ct_ref, first) == 0,
              "%s fill: %zu bytes in one update", k->name, first);
    }
    /* the last two messages were 64 and 65 bytes: no expectation past the first block */
    CHECK(a->len_hint == 64, "%s refill: the state expects %u bytes after messages of 64 and 65",
          k->name, a->len_hint);
    chapoly_aead_start(a, k, key, nonce);
    for (int j = 0; j < 3; j++)
        chapoly_aead_text(a, piece, pt + 16 * j, 16, 1);
    CHECK(a->ks_len == 64, "%s refill: three 16-byte updates made %u bytes, not 64", k->name,
          a->ks_len);
    CHECK(a->ks_made == 64, "%s refill: three 16-byte updates held %u bytes of keystream, "
          "not the block made with the key block", k->name, a->ks_made);
    for (int j = 3; j < REFILL_LEN / 16; j++) {
        unsigned before = a->ks_len;
        size_t seen = 16 * (size_t)j;

        chapoly_aead_text(a, piece, pt + 16 * j, 16, 1);
        size_t want = seen / 2 > k->shapes.stream_min ? seen / 2 : k->shapes.stream_min;

        want = (want + k->shapes.chacha_batch - 1) / k->shapes.chacha_batch * k->shapes.chacha_batch;

        /* else the grid: refills end at AEAD_GRID_AT + k AEAD_BATCH_MAX bytes of text */
        if (want >= AEAD_BATCH_MAX)
            want = pairs ? AEAD_BATCH_MAX
                         : AEAD_BATCH_MAX - (seen + AEAD_BATCH_MAX - AEAD_GRID_AT) % AEAD_BATCH_MAX;
        if (a->ks_len != before)
            CHECK(a->ks_len == want, "%s refill: after %zu bytes a batch of %u, not %zu", k->name,
                  seen, a->ks_len, want);
    }
    chapoly_aead_finish(a, tag);
    ref_seal(key, nonce, NULL, 0, pt, REFILL_LEN, ct_ref, tag_ref);
    CHECK(memcmp(tag, tag_ref, 16) == 0, "%s refill: %d bytes in 16-byte updates, tag", k->name,
          REFILL_LEN);
    chapoly_aead_clear(a);
    free(a);
}

/*
 * stream-fill=last: once the last two messages through a state had len
 * bytes or more, a message streamed in small updates refills with the rest
 * of len in whole chacha_batch batches, up to AEAD_BATCH_MAX, without the
 * grid (stream-fill=rule: the rule stream_refill checks on a fresh
 * state). Any lengths in any order give the reference bytes; alternating
 * lengths expect the shorter.
 */
static void stream_expect(const chapoly_kernels *k)
{
    static const size_t lens[] = { 1600, 4096, 8192 + 17, 2500 };
    static const size_t us[] = { 16, 64, 256 };
    chapoly_aead *a = state_alloc();
    uint8_t key[32], nonce[12], aad[13], tag_ref[16], tag[16], piece[256];
    size_t batch = k->shapes.chacha_batch;

    rnd_bytes(key, 32);
    rnd_bytes(aad, sizeof(aad));
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
        for (size_t ui = 0; ui < sizeof(us) / sizeof(us[0]); ui++) {
            size_t len = lens[li], u = us[ui], refills = 0;

            for (int m = 0; m < 3; m++) { /* the third message expects len */
                rnd_bytes(nonce, 12);
                rnd_bytes(pt, len);
                ref_seal(key, nonce, aad, sizeof(aad), pt, len, ct_ref, tag_ref);
                chapoly_aead_start(a, k, key, nonce);
                chapoly_aead_aad(a, aad, sizeof(aad));
                CHECK(m < 2 || !k->shapes.stream_fill || a->len_hint == len,
                      "%s expect: after two messages of %zu the state expects %u", k->name, len,
                      a->len_hint);
                for (size_t off = 0; off < len; off += u) {
                    size_t n = len - off < u ? len - off : u;
                    unsigned made = a->ks_len, used = a->batch_used;
                    size_t end = (size_t)a->batch_start + made; /* where the keystream runs out */

                    memcpy(piece, pt + off, n);
                    chapoly_aead_text(a, piece, piece, n, 1);
                    memcpy(buf + off, piece, n);
                    if (m < 2 || !k->shapes.stream_fill || off == 0 ||
                        (made == a->ks_len && used < a->batch_used))
                        continue; /* no refill in this update */
                    size_t want = (len - end + batch - 1) / batch * batch;

                    want = want < AEAD_BATCH_MAX ? want : AEAD_BATCH_MAX;
                    refills++;
                    CHECK(a->ks_len == want,
                          "%s expect: %zu bytes in updates of %zu, a refill at %zu of %u, not %zu",
                          k->name, len, u, end, a->ks_len, want);
                }
                chapoly_aead_finish(a, tag);
                CHECK(memcmp(buf, ct_ref, len) == 0 && memcmp(tag, tag_ref, 16) == 0,
                      "%s expect: message %d of %zu bytes in updates of %zu", k->name, m, len, u);
            }
            CHECK(!k->shapes.stream_fill || refills > 0,
                  "%s expect: %zu bytes in updates of %zu made no refill", k->name, len, u);
        }
    }
    /* lengths in every order, sealed and opened, against the reference */
    for (int i = 0; i < 60; i++) {
        size_t len = i % 3 == 0 ? 8192 : (size_t)(rnd() % 9000), u = us[rnd() % 3];

        rnd_bytes(nonce, 12);
        rnd_bytes(pt, len);
        ref_seal(key, nonce, aad, sizeof(aad), pt, len, ct_ref, tag_ref);
        batch_run(a, k, key, nonce, aad, sizeof(aad), pt, len, u, 1, buf, tag);
        CHECK(memcmp(buf, ct_ref, len) == 0 && memcmp(tag, tag_ref, 16) == 0,
              "%s expect: seal %d, %zu bytes in updates of %zu", k->name, i, len, u);
        CHECK(batch_run(a, k, key, nonce, aad, sizeof(aad), ct_ref, len, u, 0, buf, tag_ref) &&
                  memcmp(buf, pt, len) == 0,
              "%s expect: open %d, %zu bytes in updates of %zu", k->name, i, len, u);
    }
    chapoly_aead_clear(a);
    free(a);
}

/* ---- vector files ---- */

struct vctx {
    const chapoly_kernels *k;
    int x;
    int cases;
};

static int vec_case(const tv_case *c, void *arg)
{
    struct vctx *v = arg;
    const char *want = v->x ? "xchacha20-poly1305" : "chacha20-poly1305";
    const tv_field *key = tv_get(c, "key"), *nonce = tv_get(c, "nonce"), *aad = tv_get(c, "aad"),
                   *p = tv_get(c, "plaintext"), *ct = tv_get(c, "ciphertext"),
                   *tag = tv_get(c, "tag");
    uint8_t t[16];

    if (strcmp(c->section, want) != 0)
        return 0;
    if (!key || !nonce || !aad || !p || !ct || !tag || p->len > TMAX || aad->len > AMAX) {
        CHECK(0, "vector at line %d: malformed", c->line);
        return 0;
    }
    v->cases++;
    if (!v->x) { /* the oracle first */
        ref_seal(key->bytes, nonce->bytes, aad->bytes, aad->len, p->bytes, p->len, buf2, t);
        CHECK(memcmp(buf2, ct->bytes, p->len) == 0 && memcmp(t, tag->bytes, 16) == 0,
              "oracle disagrees with the vector at line %d", c->line);
    }
    core_run(v->k, v->x, key->bytes, nonce->bytes, aad->bytes, aad->len, p->bytes, buf2,
             p->len, 1, t, 16, 0, 0, 0);
    CHECK(memcmp(buf2, ct->bytes, p->len) == 0 && memcmp(t, tag->bytes, 16) == 0,
          "%s seal, vector at line %d", v->k->name, c->line);
    CHECK(core_run(v->k, v->x, key->bytes, nonce->bytes, aad->bytes, aad->len, ct->bytes, buf2,
                   p->len, 0, tag->bytes, 16, 0, 0, 0) &&
              memcmp(buf2, p->bytes, p->len) == 0,
          "%s open, vector at line %d", v->k->name, c->line);
    return 0;
}

static void vectors(const chapoly_kernels *k, const char *dir)
{
    char path[4096];
    struct vctx v = { k, 0, 0 };

    snprintf(path, sizeof(path), "%s/rfc8439.txt", dir);
    CHECK(tv_foreach(path, vec_case, &v) > 0 && v.cases > 0, "no AEAD vectors in %s", path);
    v.x = 1;
    v.cases = 0;
    snprintf(path, sizeof(path), "%s/xchacha.txt", dir);
    CHECK(tv_foreach(path, vec_case, &v) > 0 && v.cases > 0, "no XChaCha AEAD vectors in %s",
          path);
}

int main(void)
{
    const char *seed_s = getenv("CHAPOLY_TEST_SEED");
    const char *dir = getenv("CHAPOLY_VECTOR_DIR");
    int levels = 0;

#ifdef CHAPOLY_VECTOR_DIR_DEFAULT
    if (dir == NULL || *dir == '\0')
        dir = CHAPOLY_VECTOR_DIR_DEFAULT;
#endif
    if (dir == NULL || *dir == '\0')
        dir = ".";
    rnd_state = seed_s != NULL && *seed_s ? strtoull(seed_s, NULL, 0) : 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("test_aead_core: seed %llu (CHAPOLY_TEST_SEED)\n", (unsigned long long)rnd_state);
    pt = xalloc(TMAX);
    ct_ref = xalloc(TMAX);
    buf = xalloc(TMAX);
    buf2 = xalloc(TMAX);
    aadb = xalloc(AMAX);

    const char *const *names = chapoly_kernels_compiled();
    for (size_t i = 0; names != NULL && names[i] != NULL; i++) {
        const chapoly_kernels *k = chapoly_kernels_by_name(names[i]);
        unsigned long p0 = n_pass, f0 = n_fail;

        if (k == NULL) {
            printf("level %s: compiled in but skipped: this CPU/OS lacks it\n", names[i]);
            continue;
        }
        cur_level = names[i];
        vectors(k, dir);
        stream_diff(k);
        stream_batches(k);
        stream_refill(k);
        stream_expect(k);
        oneshot_diff(k);
        open_rows_stream(k);
        levels++;
        printf("level %s: %lu passed, %lu failed\n", names[i], n_pass - p0, n_fail - f0);
    }
    cur_level = "summary";
    CHECK(levels > 0, "no kernel level ran");
    free(pt);
    free(ct_ref);
    free(buf);
    free(buf2);
    free(aadb);
    printf("%lu passed, %lu failed\n", n_pass, n_fail);
    return n_fail != 0;
}
