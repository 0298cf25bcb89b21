/*
 * Level-independent helpers: streaming Poly1305 on top of a table's block
 * function, the generic one-shot AEAD composition, wiping and constant-time
 * comparison.
 */
#include "kernels_impl.h"

static void *(*volatile wipe_memset)(void *, int, size_t) = memset;

void chapoly_wipe(void *p, size_t n)
{
    if (n > 0)
        wipe_memset(p, 0, n);
}

int chapoly_ct_memneq(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t acc = 0;

    for (size_t i = 0; i < n; i++)
        acc |= x[i] ^ y[i];
    return (int)value_barrier_u64(acc) != 0;
}

void chapoly_load_key(uint32_t key[8], const uint8_t bytes[32])
{
    for (int i = 0; i < 8; i++)
        key[i] = load32_le(bytes + 4 * i);
}

void chapoly_poly1305_init(const chapoly_kernels *k, poly1305_state *st,
                           const uint8_t key[32])
{
    k->poly1305_init(st, key);
    st->buflen = 0;
}

void chapoly_poly1305_update(const chapoly_kernels *k, poly1305_state *st,
                             const uint8_t *in, size_t len)
{
    if (st->buflen > 0) {
        size_t take = POLY1305_BLOCK_BYTES - st->buflen;

        if (take > len)
            take = len;
        memcpy(st->buf + st->buflen, in, take);
        st->buflen += take;
        in += take;
        len -= take;
        if (st->buflen < POLY1305_BLOCK_BYTES)
            return;
        k->poly1305_blocks(st, st->buf, POLY1305_BLOCK_BYTES, 1);
        st->buflen = 0;
    }
    size_t whole = len & ~(size_t)(POLY1305_BLOCK_BYTES - 1);
    if (whole > 0)
        k->poly1305_blocks(st, in, whole, 1); /* the longest run, one call */
    if (len > whole) {
        memcpy(st->buf, in + whole, len - whole);
        st->buflen = len - whole;
    }
}

void chapoly_poly1305_final(const chapoly_kernels *k, poly1305_state *st,
                            uint8_t tag[16])
{
    if (st->buflen > 0) {
        st->buf[st->buflen] = 1;
        memset(st->buf + st->buflen + 1, 0,
               POLY1305_BLOCK_BYTES - st->buflen - 1);
        k->poly1305_blocks(st, st->buf, POLY1305_BLOCK_BYTES, 0);
    }
    k->poly1305_final(st, tag);
    chapoly_wipe(st->buf, sizeof(st->buf));
    st->buflen = 0;
}

void chapoly_chacha20_xor_kb(const chapoly_kernels *k, uint8_t kb[64],
                             uint8_t *out, const uint8_t *in, size_t len,
                             const uint32_t key[8], const uint32_t ctr_nonce[4])
{
    _Alignas(64) uint8_t buf[2048];
    uint32_t cn[4] = { ctr_nonce[0], ctr_nonce[1], ctr_nonce[2], ctr_nonce[3] };

    if (k->chacha20_xor_kb != NULL) {
        k->chacha20_xor_kb(kb, out, in, len, key, ctr_nonce);
        return;
    }
    if (len <= sizeof(buf) - 64) { /* one call over [zero block || text] */
        memset(buf, 0, 64);
        if (len > 0)
            memcpy(buf + 64, in, len);
        k->chacha20_xor(buf, buf, 64 + len, key, cn);
        memcpy(kb, buf, 64);
        if (len > 0)
            memcpy(out, buf + 64, len);
        chapoly_wipe(buf, 64 + len);
        return;
    }
    memset(kb, 0, 64);
    k->chacha20_xor(kb, kb, 64, key, cn);
    cn[0]++; /* mod 2^32, as in the kernels */
    k->chacha20_xor(out, in, len, key, cn);
}

void chapoly_aead_xor_hash(const chapoly_kernels *k, uint8_t *out,
                           const uint8_t *in, size_t len, const uint32_t key[8],
                           const uint32_t ctr_nonce[4], poly1305_state *st,
                           const uint8_t *pre, int enc)
{
    if (k->aead_xor_hash != NULL) {
        k->aead_xor_hash(out, in, len, key, ctr_nonce, st, pre, enc);
    } else if (enc) {
        if (pre != NULL)
            k->poly1305_blocks(st, pre, 1024, 1);
        k->chacha20_xor(out, in, len, key, ctr_nonce);
        k->poly1305_blocks(st, out, len, 1);
    } else {
        k->poly1305_blocks(st, in, len, 1);
        k->chacha20_xor(out, in, len, key, ctr_nonce);
    }
}

/* ---- generic one-shot AEAD (RFC 8439 2.8) ---- */

/* m, then zeros to a multiple of 16 bytes, into the MAC. */
static void aead_hash_padded(const chapoly_kernels *k, poly1305_state *st,
                             const uint8_t *m, size_t len)
{
    size_t whole = len & ~(size_t)15;

    if (whole)
        k->poly1305_blocks(st, m, whole, 1);
    if (len & 15) {
        uint8_t b[16] = { 0 };
        memcpy(b, m + whole, len & 15);
        k->poly1305_blocks(st, b, 16, 1);
        chapoly_wipe(b, sizeof(b));
    }
}

/* Padded AAD, padded ciphertext, the lengths, then the tag. */
static void aead_mac(const chapoly_kernels *k, poly1305_state *st,
                     const uint8_t *aad, size_t aadlen, const uint8_t *ct,
                     size_t len, uint8_t tag[16])
{
    uint8_t lens[16];

    aead_hash_padded(k, st, aad, aadlen);
    aead_hash_padded(k, st, ct, len);
    store64_le(lens, (uint64_t)aadlen);
    store64_le(lens + 8, (uint64_t)len);
    k->poly1305_blocks(st, lens, 16, 1);
    k->poly1305_final(st, tag);
}

/*
 * Block 0 (Poly1305 key) plus up to three keystream blocks in one kernel
 * call: a message of up to 192 bytes needs a single ChaCha20 batch.
 * Returns how many bytes of keystream ks[] holds; cn is set to the next block.
 */
#define AEAD_AHEAD 3

static size_t aead_otk(const chapoly_kernels *k, poly1305_state *st,
                       const uint32_t key[8], const uint8_t nonce[12],
                       size_t len, uint32_t cn[4], uint8_t ks[64 * AEAD_AHEAD])
{
    uint8_t buf[64 * (1 + AEAD_AHEAD)];
    size_t ahead = (len + 63) / 64;

    if (ahead > AEAD_AHEAD)
        ahead = AEAD_AHEAD;
    memset(buf, 0, 64 * (1 + ahead));
    cn[0] = 0;
    cn[1] = load32_le(nonce);
    cn[2] = load32_le(nonce + 4);
    cn[3] = load32_le(nonce + 8);
    k->chacha20_xor(buf, buf, 64 * (1 + ahead), key, cn);
    k->poly1305_init(st, buf);
    memcpy(ks, buf + 64, 64 * ahead);
    chapoly_wipe(buf, sizeof(buf));
    cn[0] = (uint32_t)(1 + ahead);
    return 64 * ahead;
}

/* XOR with the keystream computed ahead, then the kernel for the rest. */
static void aead_xor(const chapoly_kernels *k, uint8_t *out, const uint8_t *in,
                     size_t len, const uint8_t *ks, size_t kslen,
                     const uint32_t key[8], const uint32_t cn[4])
{
    size_t n = len < kslen ? len : kslen;

    for (size_t i = 0; i < n; i++)
        out[i] = in[i] ^ ks[i];
    if (len > n)
        k->chacha20_xor(out + n, in + n, len - n, key, cn);
}

/*
 * Opening a short message (the common TLS/QUIC case): one kernel call
 * produces the Poly1305 key block and every keystream block into a stack
 * buffer; the ciphertext is hashed and the tag checked before any
 * plaintext is written from it.
 */
#define AEAD_SHORT_MAX (2048 - 64)

static size_t aead_short_keystream(const chapoly_kernels *k, uint8_t *buf,
                                   const uint8_t *in, size_t len,
                                   const uint32_t key[8], const uint8_t nonce[12],
                                   poly1305_state *st)
{
    size_t blocks = (len + 63) / 64;
    uint32_t cn[4] = { 0, load32_le(nonce), load32_le(nonce + 4), load32_le(nonce + 8) };

    memset(buf, 0, 64);
    if (len > 0) /* in and out may be NULL for an empty message */
        memcpy(buf + 64, in, len);
    memset(buf + 64 + len, 0, 64 * blocks - len + 16);
    k->chacha20_xor(buf, buf, 64 * (1 + blocks), key, cn);
    k->poly1305_init(st, buf);
    return blocks;
}

/*
 * Seal. The first batch makes the key block and 'head' bytes of text, XORed
 * from in to out (chapoly_chacha20_xor_kb), head chosen so that whole
 * kilobytes and less than a block are left: those kilobytes go through
 * the stitched ChaCha20 + Poly1305 kernel (or its composition). MAC calls:
 * padded AAD (in the spare half of the key block when it fits), the
 * ciphertext's whole blocks, then its last partial block and the lengths
 * together.
 */
#define AEAD_HEAD_MAX (31 * 64)

/*
 * Text in the first batch: all of it up to AEAD_HEAD_MAX; else 15..30
 * blocks, so that whole kilobytes and less than a block follow; from 3 KiB
 * on, 16..31 blocks, so that the last kilobyte of it can be hashed beside
 * the next kilobyte's ChaCha20 (at least one whole kilobyte follows).
 */
size_t chapoly_aead_head(size_t len)
{
    if (len <= AEAD_HEAD_MAX)
        return len;
    if (len < 3072)
        return 960 + (((len - 960) % 1024) & ~(size_t)63);
    return 1024 + (((len - 1024) % 1024) & ~(size_t)63);
}

void chapoly_aead_seal(const chapoly_kernels *k, uint8_t *out, uint8_t tag[16],
                       const uint8_t *in, size_t len, const uint8_t *aad,
                       size_t aadlen, const uint32_t key[8],
                       const uint8_t nonce[12])
{
    if (k->aead_seal != NULL) {
        k->aead_seal(out, tag, in, len, aad, aadlen, key, nonce);
        return;
    }
    poly1305_state st;
    _Alignas(64) uint8_t kb[64];
    uint8_t last[32];
    uint32_t cn[4] = { 0, load32_le(nonce), load32_le(nonce + 4), load32_le(nonce + 8) };
    size_t head = chapoly_aead_head(len);
    size_t whole = (len - head) & ~(size_t)1023, rest = len - head - whole;
    const uint8_t *pre = NULL;
    size_t apad = (aadlen + 15) & ~(size_t)15, n;

    if (out == in && head > 0 && k->chacha20_xor_kb != NULL) {
        /* in place: via a stack buffer, see aead_first_text in the provider */
        _Alignas(64) uint8_t tmp[AEAD_HEAD_MAX];

        k->chacha20_xor_kb(kb, tmp, in, head, key, cn);
        memcpy(out, tmp, head);
        chapoly_wipe(tmp, head);
    } else if (out == in && head > 0) {
        _Alignas(64) uint8_t buf[64 + AEAD_HEAD_MAX];

        memset(buf, 0, 64);
        memcpy(buf + 64, in, head);
        k->chacha20_xor(buf, buf, 64 + head, key, cn);
        memcpy(kb, buf, 64);
        memcpy(out, buf + 64, head);
        chapoly_wipe(buf, 64 + head);
    } else {
        chapoly_chacha20_xor_kb(k, kb, out, in, head, key, cn);
    }
    cn[0] = (uint32_t)(1 + (head + 63) / 64);
    k->poly1305_init(&st, kb);
    if (apad <= 32) { /* kb[32..63]: keystream nothing uses */
        if (aadlen > 0)
            memcpy(kb + 64 - apad, aad, aadlen);
        memset(kb + 64 - apad + aadlen, 0, apad - aadlen);
        if (apad > 0)
            k->poly1305_blocks(&st, kb + 64 - apad, apad, 1);
    } else {
        aead_hash_padded(k, &st, aad, aadlen);
    }
    chapoly_wipe(kb, sizeof(kb));
    if (whole > 0) { /* head is a whole number of blocks here */
        if (head >= 1024) { /* its last kilobyte is hashed beside the next one's ChaCha20 */
            pre = out + head - 1024;
            if (head > 1024)
                k->poly1305_blocks(&st, out, head - 1024, 1);
        } else {
            k->poly1305_blocks(&st, out, head, 1);
        }
        chapoly_aead_xor_hash(k, out + head, in + head, whole, key, cn, &st, pre, 1);
        cn[0] += (uint32_t)(whole / 64);
        if (rest > 0)
            k->chacha20_xor(out + head + whole, in + head + whole, rest, key, cn);
    } else {
        rest = len; /* all of the text is still to be hashed */
    }
    /* whole MAC blocks of the rest, then its partial block and the lengths */
    n = rest & ~(size_t)15;
    if (n > 0)
        k->poly1305_blocks(&st, out + len - rest, n, 1);
    memset(last, 0, 16);
    if (rest & 15)
        memcpy(last, out + len - rest + n, rest & 15);
    store64_le(last + 16, (uint64_t)aadlen);
    store64_le(last + 24, (uint64_t)len);
    k->poly1305_blocks(&st, (rest & 15) ? last : last + 16, (rest & 15) ? 32 : 16, 1);
    k->poly1305_final(&st, tag);
}

int chapoly_aead_open(const chapoly_kernels *k, uint8_t *out,
                      const uint8_t *in, size_t len, const uint8_t *aad,
                      size_t aadlen, const uint8_t *tag, size_t taglen,
                      const uint32_t key[8], const uint8_t nonce[12])
{
    if (k->aead_open != NULL)
        return k->aead_open(out, in, len, aad, aadlen, tag, taglen, key, nonce);

    poly1305_state st;
    uint8_t calc[16];
    int bad;

    if (taglen < 1 || taglen > 16)
        return 0;
    if (len <= AEAD_SHORT_MAX && len > 0 && k->chacha20_xor_kb != NULL) {
        /* the plaintext goes to a stack buffer, out gets it once the tag is good */
        _Alignas(64) uint8_t tmp[AEAD_SHORT_MAX], kb[64];
        uint32_t cn[4] = { 0, load32_le(nonce), load32_le(nonce + 4), load32_le(nonce + 8) };

        k->chacha20_xor_kb(kb, tmp, in, len, key, cn);
        k->poly1305_init(&st, kb);
        chapoly_wipe(kb, sizeof(kb));
        aead_mac(k, &st, aad, aadlen, in, len, calc); /* over the ciphertext */
        bad = chapoly_ct_memneq(calc, tag, taglen);
        chapoly_wipe(calc, sizeof(calc));
        if (!bad)
            memcpy(out, tmp, len); /* verified before any plaintext is written */
        chapoly_wipe(tmp, len);
        return !bad;
    }
    if (len <= AEAD_SHORT_MAX) {
        _Alignas(64) uint8_t buf[2048 + 32];
        size_t blocks = aead_short_keystream(k, buf, in, len, key, nonce, &st);

        aead_mac(k, &st, aad, aadlen, in, len, calc); /* over the ciphertext */
        bad = chapoly_ct_memneq(calc, tag, taglen);
        chapoly_wipe(calc, sizeof(calc));
        if (!bad && len > 0)
            memcpy(out, buf + 64, len); /* verified before any plaintext is written */
        chapoly_wipe(buf, 64 * (1 + blocks) + 16);
        return !bad;
    }
    uint32_t cn[4];
    uint8_t ks[64 * AEAD_AHEAD];
    size_t kslen;

    kslen = aead_otk(k, &st, key, nonce, len, cn, ks);
    aead_mac(k, &st, aad, aadlen, in, len, calc);
    bad = chapoly_ct_memneq(calc, tag, taglen);
    chapoly_wipe(calc, sizeof(calc));
    if (!bad)
        aead_xor(k, out, in, len, ks, kslen, key, cn);
    chapoly_wipe(ks, kslen);
    return !bad;
}
