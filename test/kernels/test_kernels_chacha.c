/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kernels: ChaCha20 and HChaCha20 at one level, against the vector
 * files (chacha_known, called from test_kernels_vectors.c) and against the
 * portable level: every length to 2 KiB, random lengths to 70000, counter
 * wrap, unaligned and in-place buffers, streams split at a block boundary.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_kernels.h"
#include "row1_forms.h"

#if defined(__unix__)
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

void chacha_known(const chapoly_kernels *k, const char *what, const uint8_t key[32],
                  const uint32_t ctr_nonce[4], const uint8_t *pt, const uint8_t *ct, size_t len)
{
    uint32_t kw[8];
    uint8_t *o = abuf_a + GUARD + 3, *w = abuf_b + GUARD + 1;

    if (len + 2 * GUARD + 8 > ABUF)
        return;
    chapoly_load_key(kw, key);
    memset(abuf_a, SENT, len + 2 * GUARD + 8);
    k_chacha(k, o, pt, len, kw, ctr_nonce);
    CHECK(meq(o, ct, len), "%s: chacha20_xor encrypt differs", what);
    CHECK(all_byte(o + len, GUARD, SENT), "%s: chacha20_xor wrote past the end", what);
    k_chacha(k, o, ct, len, kw, ctr_nonce);
    CHECK(meq(o, pt, len), "%s: chacha20_xor decrypt differs", what);
    mcpy(w, pt, len);
    k_chacha(k, w, w, len, kw, ctr_nonce);
    CHECK(meq(w, ct, len), "%s: in-place chacha20_xor differs", what);

    /* one-block vectors: the level's one-block row form too */
    const struct row1_form *f = row1_form_for(k->name);
    if (f != NULL && len <= 64) {
        memset(abuf_a, SENT, len + 2 * GUARD + 8);
        k_row1(f->fn, o, pt, len, kw, ctr_nonce);
        CHECK(meq(o, ct, len), "%s: %s differs", what, f->name);
        CHECK(all_byte(o + len, GUARD, SENT), "%s: %s wrote past the end", what, f->name);
    }
}

static void chacha_case(const chapoly_kernels *k, size_t len, uint32_t ctr)
{
    uint32_t key[8], ctr_nonce[4];
    const uint8_t *in = pool_at(len);
    size_t ioff = 1 + rnd_below(63), ooff = 1 + rnd_below(63);

    if (rnd_below(8) == 0)
        ioff = ooff = 0; /* aligned now and then */
    for (int i = 0; i < 8; i++)
        key[i] = (uint32_t)rnd64();
    ctr_nonce[0] = ctr;
    for (int i = 1; i < 4; i++)
        ctr_nonce[i] = (uint32_t)rnd64();
    P->chacha20_xor(P, rbuf, in, len, key, ctr_nonce);

    /* out of place, unaligned, guard bytes around the output */
    memcpy(tin + 64 + ioff, in, len);
    memset(tout, SENT, len + 192);
    k_chacha(k, tout + 64 + ooff, tin + 64 + ioff, len, key, ctr_nonce);
    CHECK(memcmp(tout + 64 + ooff, rbuf, len) == 0,
          "%s chacha20_xor differs from portable: len %zu ctr 0x%08x in+%zu out+%zu", k->name, len, ctr,
          ioff, ooff);
    CHECK(all_byte(tout, 64 + ooff, SENT) && all_byte(tout + 64 + ooff + len, 64, SENT),
          "%s chacha20_xor wrote outside the output: len %zu ctr 0x%08x out+%zu", k->name, len, ctr, ooff);
    CHECK(memcmp(tin + 64 + ioff, in, len) == 0, "%s chacha20_xor modified its input: len %zu", k->name,
          len);

    /* in place */
    size_t off = rnd_below(64);
    memset(tout, SENT, len + 192);
    memcpy(tout + 64 + off, in, len);
    k_chacha(k, tout + 64 + off, tout + 64 + off, len, key, ctr_nonce);
    CHECK(memcmp(tout + 64 + off, rbuf, len) == 0,
          "%s in-place chacha20_xor differs from portable: len %zu ctr 0x%08x at+%zu", k->name, len, ctr,
          off);
    CHECK(all_byte(tout, 64 + off, SENT) && all_byte(tout + 64 + off + len, 64, SENT),
          "%s in-place chacha20_xor wrote outside the buffer: len %zu", k->name, len);
}

void chacha_diff(const chapoly_kernels *k)
{
    for (size_t len = 0; len <= 2048; len++)
        chacha_case(k, len, pick_counter(len));
    for (size_t i = 0; i < 200; i++)
        chacha_case(k, rnd_below(70001), pick_counter(i));
    /* Block-count boundaries 1..17 (and 2x for 32-block batches). */
    for (size_t n = 1; n <= 34; n++)
        for (int d = -1; d <= 1; d++)
            chacha_case(k, (size_t)((long)n * 64 + d), pick_counter(n));

    /*
     * Splitting a stream at a block boundary and advancing the counter
     * (mod 2^32) gives the same bytes: checks the level against itself,
     * including for the portable level.
     */
    for (int i = 0; i < 300; i++) {
        uint32_t key[8], ctr_nonce[4], cn2[4];
        size_t len = rnd_below(i < 150 ? 3000 : 70001);
        size_t split = rnd_below(len / 64 + 1) * 64;
        const uint8_t *in = pool_at(len);
        for (int j = 0; j < 8; j++)
            key[j] = (uint32_t)rnd64();
        ctr_nonce[0] = pick_counter((size_t)i);
        for (int j = 1; j < 4; j++)
            ctr_nonce[j] = (uint32_t)rnd64();
        memcpy(cn2, ctr_nonce, sizeof(ctr_nonce));
        cn2[0] = ctr_nonce[0] + (uint32_t)(split / 64);
        k_chacha(k, rbuf, in, len, key, ctr_nonce);
        k_chacha(k, tout, in, split, key, ctr_nonce);
        k_chacha(k, tout + split, in + split, len - split, key, cn2);
        CHECK(memcmp(rbuf, tout, len) == 0,
              "%s chacha20_xor split at %zu of %zu (ctr 0x%08x) differs from one call", k->name, split,
              len, ctr_nonce[0]);
    }
}

void hchacha_diff(const chapoly_kernels *k)
{
    uint8_t key_bytes[32 + 64], nb[16 + 64], ref[32], sb[32 + 64];

    for (int i = 0; i < 2000; i++) {
        size_t ko = rnd_below(64), no = rnd_below(64), so = rnd_below(64);
        rnd_bytes(key_bytes + ko, 32);
        rnd_bytes(nb + no, 16);
        if (i < 4) { /* all-zero and all-ones inputs */
            memset(key_bytes + ko, i & 1 ? 0xff : 0, 32);
            memset(nb + no, i & 2 ? 0xff : 0, 16);
        }
        P->hchacha20(P, ref, key_bytes + ko, nb + no);
        k_hchacha(k, sb + so, key_bytes + ko, nb + no);
        CHECK(memcmp(ref, sb + so, 32) == 0, "%s hchacha20 differs from portable (case %d)", k->name, i);
    }
}


/*
 * ---- the one-block row forms (row1_forms.h), against the portable level ----
 * Every length 0..64, counters at and around the 2^32 wrap (the block at
 * ctr_nonce[0] only: no carry into word 13), out of place with unaligned
 * pointers and sentinel bytes on both sides of the output (no write outside
 * [out, out + len)), the input left alone, in place; then each length with
 * the buffers against inaccessible pages (no read or write outside len,
 * masked or not: an access there faults).
 */
static void row1_case(const struct row1_form *f, size_t len, uint32_t ctr)
{
    uint32_t key[8], ctr_nonce[4];
    const uint8_t *in = pool_at(len);
    size_t ioff = rnd_below(64), ooff = rnd_below(64);

    for (int i = 0; i < 8; i++)
        key[i] = (uint32_t)rnd64();
    ctr_nonce[0] = ctr;
    for (int i = 1; i < 4; i++)
        ctr_nonce[i] = rnd_below(4) == 0 ? 0xffffffffu : (uint32_t)rnd64();
    P->chacha20_xor(P, rbuf, in, len, key, ctr_nonce);

    memcpy(tin + 64 + ioff, in, len);
    memset(tout, SENT, 256);
    k_row1(f->fn, tout + 64 + ooff, tin + 64 + ioff, len, key, ctr_nonce);
    CHECK(memcmp(tout + 64 + ooff, rbuf, len) == 0,
          "%s differs from portable: len %zu ctr 0x%08x in+%zu out+%zu", f->name, len, ctr, ioff,
          ooff);
    CHECK(all_byte(tout, 64 + ooff, SENT) && all_byte(tout + 64 + ooff + len, 128 - ooff, SENT),
          "%s wrote outside the output: len %zu out+%zu", f->name, len, ooff);
    CHECK(memcmp(tin + 64 + ioff, in, len) == 0, "%s modified its input: len %zu", f->name, len);

    memset(tout, SENT, 256);
    memcpy(tout + 64 + ooff, in, len);
    k_row1(f->fn, tout + 64 + ooff, tout + 64 + ooff, len, key, ctr_nonce);
    CHECK(memcmp(tout + 64 + ooff, rbuf, len) == 0,
          "%s in place differs from portable: len %zu ctr 0x%08x at+%zu", f->name, len, ctr, ooff);
    CHECK(all_byte(tout, 64 + ooff, SENT) && all_byte(tout + 64 + ooff + len, 128 - ooff, SENT),
          "%s in place wrote outside the buffer: len %zu at+%zu", f->name, len, ooff);
}

#if defined(__unix__) && defined(MAP_ANONYMOUS)
static const char *row1_guard_name;

static void row1_guard_fault(int sig)
{
    static const char msg[] = "FAIL: one-block row form touched a guard page (read or "
                              "write outside [p, p + len)): ";
    (void)sig;
    if (write(2, msg, sizeof(msg) - 1) < 0 ||
        write(2, row1_guard_name, strlen(row1_guard_name)) < 0 || write(2, "\n", 1) < 0)
        _exit(1);
    _exit(1);
}

/* Input and output at the very start and end of a page between two PROT_NONE pages. */
static void row1_guard_pages(const struct row1_form *f)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa, old_segv, old_bus;

    CHECK(m != MAP_FAILED, "mmap for the guard-page check");
    if (m == MAP_FAILED)
        return;
    CHECK(mprotect(m, pg, PROT_NONE) == 0 && mprotect(m + 2 * pg, pg, PROT_NONE) == 0,
          "mprotect for the guard-page check");
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = row1_guard_fault;
    sigemptyset(&sa.sa_mask);
    row1_guard_name = f->name;
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);

    uint8_t *first = m + pg, *end = m + 2 * pg;
    for (size_t len = 0; len <= 64; len++) {
        uint32_t key[8], ctr_nonce[4];
        const uint8_t *src = pool_at(len);

        for (int i = 0; i < 8; i++)
            key[i] = (uint32_t)rnd64();
        for (int i = 0; i < 4; i++)
            ctr_nonce[i] = (uint32_t)rnd64();
        P->chacha20_xor(P, rbuf, src, len, key, ctr_nonce);
        /* in at the end of the page, out at its start; then the other way round */
        for (int way = 0; way < 2; way++) {
            uint8_t *i = way ? first : end - len, *o = way ? end - len : first;

            memcpy(i, src, len);
            k_row1(f->fn, o, i, len, key, ctr_nonce);
            CHECK(memcmp(o, rbuf, len) == 0, "%s against guard pages differs: len %zu way %d",
                  f->name, len, way);
        }
        /* in place at each end */
        for (int at = 0; at < 2; at++) {
            uint8_t *p = at ? end - len : first;

            memcpy(p, src, len);
            k_row1(f->fn, p, p, len, key, ctr_nonce);
            CHECK(memcmp(p, rbuf, len) == 0, "%s in place against guard pages differs: len %zu",
                  f->name, len);
        }
    }
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    munmap(m, 3 * pg);
}
#else
static void row1_guard_pages(const struct row1_form *f)
{
    (void)f;
}
#endif

void row1_diff(const chapoly_kernels *k)
{
    static const uint32_t ctrs[] = { 0, 1, 0x7fffffffu, 0xfffffffeu, 0xffffffffu };
    const struct row1_form *f = row1_form_for(k->name);

    if (f == NULL)
        return;
    for (size_t len = 0; len <= 64; len++) {
        for (size_t c = 0; c < sizeof(ctrs) / sizeof(ctrs[0]); c++)
            row1_case(f, len, ctrs[c]);
        for (int r = 0; r < 4; r++)
            row1_case(f, len, r & 1 ? pick_counter(len + (size_t)r) : (uint32_t)rnd64());
    }
    row1_guard_pages(f);
}
