/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Constant-time check of the kernels (ctgrind, run under valgrind memcheck):
 * the ChaCha20 key, the Poly1305 key, HChaCha20's key, the plaintext and the
 * MAC input are marked secret; every kernel entry, the level's one-block
 * row form (row1_forms.h) and the helpers built on
 * them (streaming Poly1305, one-shot seal/open, the tag compare) run over lengths
 * that reach each tail and batch path. Outputs are declassified, then
 * compared with the portable level computed on public copies, so the run
 * also proves the secret-marked calls did the real work.
 *
 * Levels: every compiled level this CPU (as valgrind presents it) runs, or
 * only CHAPOLY_KERNEL when set (exit 77 if that level cannot run here).
 * valgrind 3.19 does not execute AVX-512: those levels are absent under it
 * and are covered by check_objdump.sh instead.
 *
 * The tag verdict is public by design but computed from secrets: the core's
 * tag comparison makes it public with one branch, which ct.supp names.
 *
 * "--canary" runs a deliberately leaky function instead (a branch and a
 * table index on a secret byte): the ct_canary test expects both reports,
 * proving the tooling catches what it is meant to catch.
 */
#include <stdlib.h>
#include <string.h>
#include "ct_common.h"
#include "aead_core.h" /* the kernels, the streaming Poly1305 and the one-shot AEAD */
#include "row1_forms.h"
#include "test_common.h"

static const size_t chacha_lens[] = { 0, 1, 15, 16, 63, 64, 65, 127, 128, 129, 255, 256, 257,
                                      383, 384, 511, 512, 513, 767, 1023, 1024, 1025, 2048 + 17,
                                      4096 + 63 };
static const size_t mac_lens[] = { 0, 1, 15, 16, 17, 31, 32, 48, 63, 64, 65, 128, 129, 255,
                                   256, 257, 511, 512, 1000, 1024, 2048 + 5, 4096 + 15 };

static uint8_t buf_in[8192], buf_out[8192], buf_ref[8192];

static void chacha_checks(const chapoly_kernels *k, const chapoly_kernels *p)
{
    uint32_t key[8], ctr_nonce[4];

    for (size_t i = 0; i < sizeof(chacha_lens) / sizeof(chacha_lens[0]); i++) {
        size_t len = chacha_lens[i];

        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(ctr_nonce, sizeof(ctr_nonce));
        ctr_nonce[0] = (uint32_t)(0xfffffff0u + i); /* some runs straddle the 32-bit wrap */
        t_rand_bytes(buf_in, len);
        p->chacha20_xor(p, buf_ref, buf_in, len, key, ctr_nonce);

        CT_SECRET(key, sizeof(key));
        CT_SECRET(buf_in, len);
        k->chacha20_xor(k, buf_out, buf_in, len, key, ctr_nonce);
        CT_PUBLIC(buf_out, len);
        T_EQ_MEM(buf_out, buf_ref, len, "%s chacha20_xor len %zu", k->name, len);

        /* In place, as the provider's TLS path runs it. */
        memcpy(buf_out, buf_in, len);
        k->chacha20_xor(k, buf_out, buf_out, len, key, ctr_nonce);
        CT_PUBLIC(buf_out, len);
        T_EQ_MEM(buf_out, buf_ref, len, "%s chacha20_xor in place len %zu", k->name, len);
        CT_PUBLIC(key, sizeof(key));
        CT_PUBLIC(buf_in, len);
    }
}

/*
 * The level's one-block row form (row1_forms.h, not a table entry yet):
 * every length 0..64, out of place and in place, key and input secret.
 */
static void row1_checks(const chapoly_kernels *k, const chapoly_kernels *p)
{
    const struct row1_form *f = row1_form_for(k->name);
    uint32_t key[8], ctr_nonce[4];

    for (size_t len = 0; f != NULL && len <= 64; len++) {
        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(ctr_nonce, sizeof(ctr_nonce));
        if (len % 3 == 0)
            ctr_nonce[0] = 0xffffffffu;
        t_rand_bytes(buf_in, len);
        p->chacha20_xor(p, buf_ref, buf_in, len, key, ctr_nonce);

        CT_SECRET(key, sizeof(key));
        CT_SECRET(buf_in, len);
        f->fn(buf_out + 1, buf_in, len, key, ctr_nonce);
        CT_PUBLIC(buf_out + 1, len);
        T_EQ_MEM(buf_out + 1, buf_ref, len, "%s len %zu", f->name, len);

        memcpy(buf_out, buf_in, len);
        f->fn(buf_out, buf_out, len, key, ctr_nonce);
        CT_PUBLIC(buf_out, len);
        T_EQ_MEM(buf_out, buf_ref, len, "%s in place len %zu", f->name, len);
        CT_PUBLIC(key, sizeof(key));
        CT_PUBLIC(buf_in, len);
    }
}

static void hchacha_checks(const chapoly_kernels *k, const chapoly_kernels *p)
{
    uint8_t key[32], nonce[16], sub[32], ref[32];

    for (int i = 0; i < 4; i++) {
        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(nonce, sizeof(nonce));
        p->hchacha20(p, ref, key, nonce);
        CT_SECRET(key, sizeof(key));
        k->hchacha20(k, sub, key, nonce);
        CT_PUBLIC(sub, sizeof(sub));
        CT_PUBLIC(key, sizeof(key));
        T_EQ_MEM(sub, ref, 32, "%s hchacha20", k->name);
    }
}

/* Poly1305 keys: random, then the extremes (every r bit the clamp keeps, s = 2^128 - 1). */
static void poly_key(uint8_t key[32], int variant)
{
    t_rand_bytes(key, 32);
    if (variant == 1)
        memset(key, 0xff, 32);
    if (variant == 2)
        memset(key + 16, 0xff, 16);
}

static void poly_checks(const chapoly_kernels *k, const chapoly_kernels *p)
{
    poly1305_state st, rst;
    uint8_t key[32], tag[16], ref[16];

    for (size_t i = 0; i < sizeof(mac_lens) / sizeof(mac_lens[0]); i++) {
        size_t len = mac_lens[i];

        for (int v = 0; v < 3; v++) {
            poly_key(key, v);
            if (v == 1)
                memset(buf_in, 0xff, len); /* hash near 2^130 - 5 */
            else
                t_rand_bytes(buf_in, len);
            chapoly_poly1305_init(p, &rst, key);
            chapoly_poly1305_update(p, &rst, buf_in, len);
            chapoly_poly1305_final(p, &rst, ref);

            /* Streaming helpers, split 1 / 15 / 33 / rest: buffered and direct blocks. */
            CT_SECRET(key, sizeof(key));
            CT_SECRET(buf_in, len);
            chapoly_poly1305_init(k, &st, key);
            size_t off = 0;
            static const size_t split[3] = { 1, 15, 33 };
            for (int s = 0; s < 3 && off < len; s++) {
                size_t n = split[s] < len - off ? split[s] : len - off;
                chapoly_poly1305_update(k, &st, buf_in + off, n);
                off += n;
            }
            chapoly_poly1305_update(k, &st, buf_in + off, len - off);
            chapoly_poly1305_final(k, &st, tag);
            CT_PUBLIC(tag, sizeof(tag));
            T_EQ_MEM(tag, ref, 16, "%s poly1305 streaming len %zu key variant %d", k->name, len, v);

            /* The raw table entries: whole blocks in one call, padded tail with padbit 0. */
            size_t whole = len & ~(size_t)15;
            k->poly1305_init(k, &st, key);
            if (whole > 0)
                k->poly1305_blocks(k, &st, buf_in, whole, 1);
            if (len > whole) {
                uint8_t last[16] = { 0 };

                memcpy(last, buf_in + whole, len - whole);
                last[len - whole] = 1;
                k->poly1305_blocks(k, &st, last, 16, 0);
            }
            k->poly1305_final(k, &st, tag);
            CT_PUBLIC(tag, sizeof(tag));
            T_EQ_MEM(tag, ref, 16, "%s poly1305 blocks len %zu key variant %d", k->name, len, v);
            CT_PUBLIC(key, sizeof(key));
            CT_PUBLIC(buf_in, len);
        }
    }
}

static void aead_checks(const chapoly_kernels *k, const chapoly_kernels *p)
{
    static const size_t aad_lens[] = { 0, 1, 13, 16, 17, 64 };
    uint32_t key[8];
    uint8_t nonce[12], aad[64], tag[16], rtag[16];

    for (size_t i = 0; i < sizeof(chacha_lens) / sizeof(chacha_lens[0]); i++) {
        size_t len = chacha_lens[i], aadlen = aad_lens[i % 6];
        int secret_aad = (i & 1) != 0; /* AAD is public, but the code should not care */

        t_rand_bytes(key, sizeof(key));
        t_rand_bytes(nonce, sizeof(nonce));
        t_rand_bytes(aad, sizeof(aad));
        t_rand_bytes(buf_in, len);
        chapoly_aead_seal(p, buf_ref, rtag, buf_in, len, aad, aadlen, key, nonce);

        CT_SECRET(key, sizeof(key));
        CT_SECRET(buf_in, len);
        if (secret_aad)
            CT_SECRET(aad, aadlen);
        chapoly_aead_seal(k, buf_out, tag, buf_in, len, aad, aadlen, key, nonce);
        CT_PUBLIC(buf_out, len);
        CT_PUBLIC(tag, sizeof(tag));
        T_EQ_MEM(buf_out, buf_ref, len, "%s aead_seal text len %zu aad %zu", k->name, len, aadlen);
        T_EQ_MEM(tag, rtag, 16, "%s aead_seal tag len %zu aad %zu", k->name, len, aadlen);

        /* Open: ciphertext and tag are public, the key and the plaintext secret. */
        int ok = chapoly_aead_open(k, buf_out, buf_ref, len, aad, aadlen, rtag, 16, key, nonce);
        CT_PUBLIC(buf_out, len); /* ok comes back public: chapoly_tag_equal */
        T_OK(ok == 1, "%s aead_open rejected an authentic message (len %zu)", k->name, len);
        CT_PUBLIC(buf_in, len);
        T_EQ_MEM(buf_out, buf_in, len, "%s aead_open text len %zu", k->name, len);

        rtag[i % 16] ^= 0x10;
        memset(buf_out, 0xa5, len);
        ok = chapoly_aead_open(k, buf_out, buf_ref, len, aad, aadlen, rtag, 16, key, nonce);
        T_OK(ok == 0, "%s aead_open accepted a forged tag (len %zu)", k->name, len);
        size_t untouched = 0;
        while (untouched < len && buf_out[untouched] == 0xa5)
            untouched++;
        T_OK(untouched == len, "%s aead_open wrote plaintext on failure (len %zu)", k->name, len);
        CT_PUBLIC(key, sizeof(key));
        CT_PUBLIC(aad, sizeof(aad));
    }
}

/*
 * The tag comparison on secret tags of every length, equal and differing in
 * each byte. Its result is not declassified here: it must come back public
 * (a branch on it would be reported otherwise).
 */
static void tag_equal_checks(void)
{
    uint8_t a[16], b[16];

    for (size_t len = 0; len <= 17; len++) {
        for (size_t i = 0; i <= 16; i++) {
            size_t n = len < 16 ? len : 16;

            t_rand_bytes(a, sizeof(a));
            memcpy(b, a, sizeof(b));
            if (i < 16)
                b[i] ^= (uint8_t)(1u << (i % 8));
            CT_SECRET(a, sizeof(a));
            CT_SECRET(b, sizeof(b));
            int r = chapoly_tag_equal(a, b, len);
            int want = len >= 1 && len <= 16 && i >= n;
            T_OK(r == want, "chapoly_tag_equal len %zu, difference at %zu: %d", len, i, r);
            CT_PUBLIC(a, sizeof(a));
            CT_PUBLIC(b, sizeof(b));
        }
    }
}

/* Deliberately not constant time: the canary the tooling must flag. */
static volatile uint8_t canary_table[256];
static volatile int canary_hits;

static __attribute__((noinline)) void canary_hit(void)
{
    canary_hits++;
}

static __attribute__((noinline)) int leaky(const uint8_t *secret)
{
    int r = canary_table[secret[1]]; /* secret-indexed load */

    if (secret[0] & 1) /* secret-dependent branch (a call: no cmov possible) */
        canary_hit();
    return r + canary_hits;
}

static int canary(void)
{
    uint8_t s[2] = { 0x35, 0x7b };

    CT_SECRET(s, sizeof(s));
    int r = leaky(s);
    CT_PUBLIC(&r, sizeof(r));
    printf("canary ran (%d)%s\n", r, RUNNING_ON_VALGRIND ? "" : " -- not under valgrind!");
    return 0;
}

int main(int argc, char **argv)
{
    const char *want = getenv("CHAPOLY_KERNEL");
    const chapoly_kernels *p = chapoly_kernels_portable();
    int ran = 0;

    if (argc > 1 && strcmp(argv[1], "--canary") == 0)
        return canary();
    if (!RUNNING_ON_VALGRIND)
        printf("note: not under valgrind, only correctness is checked\n");
    if (want != NULL && (*want == '\0' || strcmp(want, "best") == 0))
        want = NULL;
    for (const char *const *n = chapoly_kernels_compiled(); *n != NULL; n++) {
        const chapoly_kernels *k;

        if (want != NULL && strcmp(want, *n) != 0)
            continue;
        k = chapoly_kernels_by_name(*n);
        if (k == NULL) {
            printf("level %s: not runnable here%s\n", *n,
                   RUNNING_ON_VALGRIND ? " (valgrind does not execute AVX-512)" : "");
            continue;
        }
        printf("level %s: checking\n", k->name);
        chacha_checks(k, p);
        row1_checks(k, p);
        hchacha_checks(k, p);
        poly_checks(k, p);
        aead_checks(k, p);
        /*
         * The stitched AEAD and the scalar lone block (with both, the avx2
         * level's open_rows) whatever the CPU's profile chose: valgrind's
         * CPU has none.
         */
        chapoly_kernels forced;

        chapoly_kernels_build(&forced, k->name, "aead=stitched chacha-one=scalar open-rows=384",
                              NULL, NULL);
        if (forced.shapes.aead_stitched != k->shapes.aead_stitched ||
            forced.shapes.one_block_rows != k->shapes.one_block_rows ||
            forced.shapes.open_rows != k->shapes.open_rows) {
            printf("level %s: checking with aead=stitched chacha-one=scalar open-rows=384\n",
                   k->name);
            chacha_checks(&forced, p);
            aead_checks(&forced, p);
        }
        ran++;
    }
    if (ran == 0) {
        printf("kernel level %s not available here: skipped\n", want ? want : "(any)");
        return T_SKIP;
    }
    tag_equal_checks();
    return t_finish("ct_kernels");
}
