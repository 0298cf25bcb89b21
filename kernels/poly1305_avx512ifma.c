/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Poly1305 with AVX-512 IFMA (vpmadd52luq/huq), radix 2^44, for the
 * "avx512" level only, which requires IFMA (dispatch.c); the other AVX-512
 * levels use poly1305_avx2.c. Nothing here looks at the CPU.
 *
 * Paths by the number of 16-byte blocks nb in one blocks() call (the
 * crossovers are the table's shapes, kernels.h; their values per CPU are
 * in the level table and cpu_profiles.c):
 *   nb <  poly-vector  scalar radix 2^64 (poly1305_scalar.h): no key powers,
 *                      nothing to convert;
 *   nb <  poly-vector2 one 8-lane accumulator stepping by r^8;
 *   otherwise          two 8-lane accumulators A, B (blocks 16i..16i+7 and
 *                      16i+8..16i+15) stepping by r^16, which hides the
 *                      latency of one multiply + carry chain.
 * The vector paths pay a fixed cost: the key powers (three or four
 * dependent multiplies, latency-bound) and the fold of the lanes at the
 * end. A call
 * that starts from the scalar hash therefore first hashes nb mod 8 blocks
 * (8 more when that is below poly-prefix) with the scalar code, in program
 * order between the levels of the key powers, so the integer pipes work
 * through them while the vector pipes wait on the powers; the vector part
 * is then a whole number of batches and leaves no partial batch.
 *
 * The first vector call on a state (no lanes, no powers in the table, no
 * vector call before: a one-shot MAC, the AEAD's text) keeps its lanes in
 * registers and folds them at its end, and stores the key powers only if
 * it has poly_keep blocks or more: below that, nothing of them to wipe at
 * final (cheaper than the stores and a fold in the next call or final).
 * Other vector calls store the powers and leave lanes pending, for
 * streams of updates.
 *
 * Each step computes h <- h * r^n + m: the message limbs are the initial
 * value of the low IFMA accumulators, so adding them costs nothing.
 *
 * Lanes stay pending across blocks() calls: a call that ends on a whole
 * batch stores the lanes (not yet multiplied by their final powers) and the
 * next call continues stepping. The lanes are folded into one radix-2^64
 * hash when a call ends with a partial batch, when a short call (below
 * poly_tail blocks: the MAC's padded last block) finds them pending, or at
 * final. With pending lanes the hash is
 *   8 lanes C:      sum_j C_j r^(8-j)
 *   16 lanes A, B:  sum_j A_j r^(16-j) + B_j r^(8-j)     (j = 0..7)
 * so A = 0, B = C turns the first form into the second.
 *
 * A call that continues pending lanes and ends with k >= poly_tail blocks
 * after its last whole batch places them in the last k lanes (powers
 * r^k..r^1) and folds them in together with the final powers:
 *   hash = sum_j A_j (r^(16-j) r^k) + MA_j r^(16-j) + (same for B, C)
 * where r^k times the power vector does not depend on the hash, so the
 * chain after the last full batch is one multiply long. Fewer than
 * poly_tail such blocks are hashed by the scalar code after a plain fold.
 *
 * Key powers r^1..r^8 (and r^9..r^16 when 16 lanes are used) are computed
 * the first time a call needs them, then kept until final: init only stores
 * r and s, since the AEAD rekeys for every message. The init is
 * poly1305_init_avx2: the state head it writes is the same at every SIMD
 * level (poly1305_scalar.h).
 *
 * Radix 2^44 limbs: h = h0 + 2^44 h1 + 2^88 h2. 2^132 = 4 * 2^130 == 20, so
 * the wrapped terms use s_i = 20 r_i. IFMA multiplies the low 52 bits of
 * its inputs; every limb that enters a multiply is kept below 2^52 (bounds
 * at ifma_carry).
 */
#include "poly1305_ifma.h"

/*
 * The crossovers are the table's shapes (kernels.h, chapoly_shapes):
 *   poly-vector   the 8-lane path from this many blocks;
 *   poly-vector2  the 16-lane path from here, 0: never;
 *   poly_stream_min, poly_warm_min: once poly_stream_min blocks went
 *                 through the scalar path, or once the key powers exist, a
 *                 call of poly_warm_min blocks or more takes a vector path,
 *                 so a stream of moderate updates reaches the vector code.
 *                 Not lower: an update that is not a whole number of
 *                 blocks makes a 1-block call, which folds pending lanes
 *                 back to scalar;
 *                 a vector re-entry must win that back;
 *   poly-prefix   the scalar prefix beside fresh key powers (vec_prefix):
 *                 nb mod 8 blocks, plus 8 when that is below this value;
 *                 the levels of the powers hide some scalar blocks, fewer
 *                 on a core with shorter vector latency (a lower value); 0
 *                 never moves a batch to the scalar side;
 *   poly_keep     a first vector call (see the top of the file) of this
 *                 many blocks or more stores its key powers (and still
 *                 folds its lanes): a call that long is likely followed by
 *                 another vector call (the AEAD's text after its first
 *                 batch, a stream's refills), where computing the powers
 *                 again costs more than the stores and the wipe; folding
 *                 from registers costs less than storing the lanes and
 *                 folding them from memory later, and a short next call
 *                 then runs scalar instead of a partial batch (measured:
 *                 docs/performance.md);
 *   poly_tail     a call of fewer blocks than this that finds lanes pending
 *                 (or the blocks after the last whole batch of a call that
 *                 continues them) folds the lanes and hashes the blocks
 *                 with the scalar code, instead of placing them in a
 *                 partial batch, which costs a multiply of the powers by r^k.
 * Any value gives the same hash: a vector run from the scalar hash needs a
 * whole batch (poly-vector, poly_warm_min >= 8, poly-vector2 >= 16, clamped by
 * chapoly_kernels_build), the rest only picks a path.
 */
_Static_assert(W_END <= POLY1305_PRIV_WORDS, "IFMA state must fit priv");
_Static_assert(W_END % 8 == 0, "wipe_words clears 8 words at a time");
_Static_assert(W_LANES % 8 == 0 && W_POW % 8 == 0 && W_POW20 % 8 == 0,
               "vector tables must be 64-byte aligned");

static void pow_store(uint64_t *p, unsigned i, const vkey *k)
{
    _mm512_store_si512((void *)(p + W_POW + i), k->r0);
    _mm512_store_si512((void *)(p + W_POW + 16 + i), k->r1);
    _mm512_store_si512((void *)(p + W_POW + 32 + i), k->r2);
    _mm512_store_si512((void *)(p + W_POW20 + i), k->s1);
    _mm512_store_si512((void *)(p + W_POW20 + 16 + i), k->s2);
}

CHAPOLY_INLINE v3 bcast_lane0(v3 h)
{
    const __m512i z = _mm512_setzero_si512();
    v3 b = { _mm512_permutexvar_epi64(z, h.l0), _mm512_permutexvar_epi64(z, h.l1),
             _mm512_permutexvar_epi64(z, h.l2) };
    return b;
}

/*
 * Pin a vector value: the code computing it is emitted before this point
 * (volatile asm keeps its order with the scalar block loops, which are
 * volatile asm too).
 */
#define PIN(x) __asm__ volatile("" : "+v"(x))
#define PIN_V3(v) do { PIN((v).l0); PIN((v).l1); PIN((v).l2); } while (0)

/*
 * The scalar blocks that run beside the key powers (see vec_prefix): a
 * share of them after each level of the powers.
 */
typedef struct {
    uint64_t *p;
    const uint8_t *in;
    size_t left, per;
    uint64_t padbit;
} beside;

CHAPOLY_INLINE void beside_step(beside *b)
{
    size_t n = b->left < b->per ? b->left : b->per;

    if (n > 0) {
        sc_blocks_mem(b->p + W_H, b->p + W_KEY, b->in, n, b->padbit);
        b->in += 16 * n;
        b->left -= n;
    }
}

/*
 * Key powers. Lane j of V8 holds r^(8-j); built in three dependent
 * multiplies from r, r^2 (lanes by parity) and r^4 (upper half), then
 * V16 = V8 * r^8. Computed in registers (the run keeps using them) and
 * stored in the table for later calls and the final fold.
 *
 * The levels are latency-bound, and the scalar blocks do not depend on
 * them: with b, a share of b's blocks is placed in program order after
 * each level, so the out-of-order core runs the scalar chain on the
 * integer pipes during the levels. (All of the blocks after the powers
 * gain nothing: the powers then hold the reorder buffer's head while the
 * scalar loop fills it.)
 */
CHAPOLY_INLINE vkey powers8(const uint64_t *p, beside *b)
{
    uint64_t r0 = p[W_KEY], r1 = p[W_KEY + 1];
    /* levels 1 and 2 in 4 lanes (ymm), level 3 in 8 */
    v3y r = { _mm256_set1_epi64x((long long)(r0 & M44)),
              _mm256_set1_epi64x((long long)(((r0 >> 44) | (r1 << 20)) & M44)),
              _mm256_set1_epi64x((long long)(r1 >> 24)) };
    vkeyy kr = keyy_of(r);
    v3y r2 = pow_muly(r, &kr);

    if (b != NULL) {
        PIN(r2.l0);
        PIN(r2.l1);
        PIN(r2.l2);
        beside_step(b);
    }
    /* lanes: even j -> r^2, odd j -> r; times r^2 in lanes 0, 1 -> r^4 r^3 r^2 r^1 */
    const __m256i one = _mm256_set1_epi64x(1), zy = _mm256_setzero_si256();
    v3y u = { _mm256_blend_epi32(r2.l0, r.l0, 0xcc), _mm256_blend_epi32(r2.l1, r.l1, 0xcc),
              _mm256_blend_epi32(r2.l2, r.l2, 0xcc) };
    v3y w = { _mm256_blend_epi32(r2.l0, one, 0xf0), _mm256_blend_epi32(r2.l1, zy, 0xf0),
              _mm256_blend_epi32(r2.l2, zy, 0xf0) };
    vkeyy kw = keyy_of(w);
    u = pow_muly(u, &kw);
    if (b != NULL) {
        PIN(u.l0);
        PIN(u.l1);
        PIN(u.l2);
        beside_step(b);
    }
    /* both halves r^4..r^1, times r^4 in lanes 0..3 -> r^8 .. r^1 */
#define BOTH(x) _mm512_inserti64x4(_mm512_castsi256_si512(x), (x), 1)
#define LOW4(x) _mm512_zextsi256_si512(_mm256_permute4x64_epi64((x), 0))
    v3 uu = { BOTH(u.l0), BOTH(u.l1), BOTH(u.l2) };
    v3 ww = { _mm512_mask_blend_epi64(0x0f, _mm512_set1_epi64(1), LOW4(u.l0)), LOW4(u.l1),
              LOW4(u.l2) };
#undef BOTH
#undef LOW4
    vkey kw8 = key_of(ww);

    uu = pow_mul(uu, &kw8);
    if (b != NULL) {
        PIN_V3(uu);
        beside_step(b);
    }
    return key_of(uu);
}

/* V16 = V8 * r^8 (lane j: r^(16-j)). */
CHAPOLY_INLINE vkey powers16(const vkey *k8)
{
    v3 v8 = { k8->r0, k8->r1, k8->r2 };
    vkey r8 = key_of(bcast_lane0(v8));

    return key_of(pow_mul(v8, &r8));
}

/* r^e in every lane from a power vector holding it in lane i. */
CHAPOLY_INLINE vkey vkey_lane(const vkey *k, unsigned i)
{
    const __m512i idx = _mm512_set1_epi64((long long)i);
    vkey b = { _mm512_permutexvar_epi64(idx, k->r0), _mm512_permutexvar_epi64(idx, k->r1),
               _mm512_permutexvar_epi64(idx, k->r2), _mm512_permutexvar_epi64(idx, k->s1),
               _mm512_permutexvar_epi64(idx, k->s2) };
    return b;
}

void poly1305_powers_avx512ifma(uint64_t *p, int want16)
{
    unsigned st = (unsigned)p[W_STATE];
    vkey k8;

    if (!(st & ST_POW8)) {
        k8 = powers8(p, NULL);
        pow_store(p, 8, &k8);
        st |= ST_POW8;
    } else if (want16 && !(st & ST_POW16)) {
        k8 = pow_vec(p, 8);
    }
    if (want16 && !(st & ST_POW16)) {
        vkey k16 = powers16(&k8);

        pow_store(p, 0, &k16);
        st |= ST_POW16;
    }
    p[W_STATE] = st;
}

/*
 * Sum the lanes of an uncarried accumulator into a radix-2^64 hash with
 * h2 <= 4. The final products need no vector carry: the lane sums fit in
 * 64 bits (callers: lo < 2^59, hi < 2^48 after summing 8 lanes) and are
 * recombined here, with bits 140 and up of hi2 (2^140 == 5 * 2^10) wrapped.
 */
CHAPOLY_INLINE sc_hash acc_to_scalar(vacc a)
{
    uint64_t lo0 = (uint64_t)_mm512_reduce_add_epi64(a.lo0);
    uint64_t lo1 = (uint64_t)_mm512_reduce_add_epi64(a.lo1);
    uint64_t lo2 = (uint64_t)_mm512_reduce_add_epi64(a.lo2);
    uint64_t hi0 = (uint64_t)_mm512_reduce_add_epi64(a.hi0);
    uint64_t hi1 = (uint64_t)_mm512_reduce_add_epi64(a.hi1);
    uint64_t hi2 = (uint64_t)_mm512_reduce_add_epi64(a.hi2);
    /* weights: lo0 2^0, lo1 2^44, lo2 2^88, hi0 2^52, hi1 2^96, hi2 2^140 */
    sc_u128 t = (sc_u128)(lo0 + hi2 * 5120) + ((sc_u128)hi0 << 52) + ((sc_u128)lo1 << 44);
    uint64_t w0 = (uint64_t)t;

    t = (t >> 64) + ((sc_u128)lo2 << 24) + ((sc_u128)hi1 << 32);
    return sc_fold(w0, (uint64_t)t, (uint64_t)(t >> 64));
}

CHAPOLY_INLINE void store_scalar(uint64_t *p, sc_hash h)
{
    put64(p + W_H, h.h0);
    put64(p + W_H + 1, h.h1);
    put64(p + W_H + 2, h.h2);
}

/*
 * Final powers for a 16-lane state (lanes A, B read from p: passed by
 * value they were copied to the stack) plus a partial batch of k (0..15)
 * blocks at in; leaves the radix-2^64 hash in p. All products go into one
 * accumulator (lane limbs below 2^45 times powers: per lane lo < 2^55.6,
 * hi < 2^45), summed across lanes without a vector carry.
 */
static __attribute__((noinline)) void finish16(uint64_t *p, const uint8_t *in,
                                               unsigned k, uint64_t padbit)
{
    v3 a = v3_load(p + W_LANES), b = v3_load(p + W_LANES + 24);
    vkey v16 = pow_vec(p, 0), v8 = pow_vec(p, 8);
    vacc acc = acc_init(v3_zero());

    if (k == 0) {
        acc = acc_mad_tree(acc_mad_tree(acc, a, &v16), b, &v8);
    } else {
        const __m512i padv = _mm512_set1_epi64((long long)(padbit << 40));
        vkey rk = pow_bcast(p, k);
        v3 t16 = { v16.r0, v16.r1, v16.r2 }, t8 = { v8.r0, v8.r1, v8.r2 };
        vkey q16 = key_of(pow_mul(t16, &rk));
        vkey q8 = key_of(pow_mul(t8, &rk));

        if (k > 8) {
            acc = acc_mad(acc, load_last(in, k - 8, padbit), &v16);
            acc = acc_mad(acc, load8(in + 16 * (k - 8), padv), &v8);
        } else {
            acc = acc_mad(acc, load_last(in, k, padbit), &v8);
        }
        acc = acc_mad_tree(acc_mad_tree(acc, a, &q16), b, &q8);
    }
    store_scalar(p, acc_to_scalar(acc));
}

/* Same for an 8-lane state (lanes C = B) and k (0..7) more blocks. */
static __attribute__((noinline)) void finish8(uint64_t *p, const uint8_t *in,
                                              unsigned k, uint64_t padbit)
{
    v3 c = v3_load(p + W_LANES + 24);
    vkey v8 = pow_vec(p, 8);
    vacc acc = acc_init(v3_zero());

    if (k == 0) {
        acc = acc_mad_tree(acc, c, &v8);
    } else {
        vkey rk = pow_bcast(p, k);
        v3 t8 = { v8.r0, v8.r1, v8.r2 };
        vkey q8 = key_of(pow_mul(t8, &rk));

        acc = acc_mad(acc, load_last(in, k, padbit), &v8);
        acc = acc_mad_tree(acc, c, &q8);
    }
    store_scalar(p, acc_to_scalar(acc));
}

/*
 * A call that starts from the scalar hash (no lanes pending) hashes its
 * first 'pre' blocks with the scalar code and the rest, a whole number of
 * batches, in lanes: no partial batch to fold at the end. When the key
 * powers are computed in the call, those blocks run beside them (powers8)
 * and a prefix shorter than poly-prefix blocks takes one more batch.
 */
CHAPOLY_INLINE size_t vec_prefix(size_t nb, int fresh_powers, int lanes16, size_t prefix)
{
    size_t pre = nb % 8, batches = (nb - pre) / 8;

    /*
     * One batch less saves a step of 8 lanes, but a step of 16 only when
     * the batches are odd in number (the first goes alone into B).
     */
    if (fresh_powers && pre + 1 <= prefix && batches >= 2 && (!lanes16 || (batches & 1)))
        pre += 8;
    return pre;
}

CHAPOLY_INLINE void scalar_run(uint64_t *p, const uint8_t *in, size_t nb, uint64_t padbit)
{
    sc_blocks_mem(p + W_H, p + W_KEY, in, nb, padbit);
    put64(p + W_SCALAR, p[W_SCALAR] + nb);
}

/*
 * The vector paths stay out of line (also run8, finish*): inlined, their
 * 64-byte aligned frame and register saves were paid by every short call.
 */
/* Returns 1 if finish16 ran (a deeper dead stack, see the scrub). */
static __attribute__((noinline)) int run16(uint64_t *p, const uint8_t *in, size_t nb,
                                           uint64_t padbit, const chapoly_shapes *sh)
{
    const __m512i padv = _mm512_set1_epi64((long long)(padbit << 40));
    unsigned st = (unsigned)p[W_STATE];
    int once = !(st & (ST_POW8 | ST_L8 | ST_L16 | ST_VEC)), keep = nb >= sh->poly_keep;
    vkey k8, k16;
    v3 a, b;

    if (st & (ST_L8 | ST_L16)) {
        k8 = pow_vec(p, 8);
        k16 = (st & ST_POW16) ? pow_vec(p, 0) : powers16(&k8);
        b = v3_load(p + W_LANES + 24);
        a = (st & ST_L16) ? v3_load(p + W_LANES) : v3_zero();
    } else {
        /*
         * Scalar hash: a prefix (beside the powers it needs), then the
         * hash joins the first vector block in lane 0, of B when the
         * batches are odd in number (A = 0, B = C is the 8-lane form).
         */
        size_t pre = vec_prefix(nb, !(st & ST_POW16), 1, sh->poly_prefix);
        beside bs = { p, in, pre, (pre + 3) / 4, padbit }; /* over 4 levels */

        if (!(st & ST_POW8)) {
            k8 = powers8(p, &bs);
            if (!once || keep)
                pow_store(p, 8, &k8);
        } else {
            k8 = pow_vec(p, 8);
        }
        if (!(st & ST_POW16)) {
            k16 = powers16(&k8);
            PIN(k16.r0);
            PIN(k16.r1);
            PIN(k16.r2);
        } else {
            k16 = pow_vec(p, 0);
        }
        bs.per = bs.left; /* the rest after the last level */
        beside_step(&bs);
        put64(p + W_SCALAR, p[W_SCALAR] + pre);
        in += 16 * pre;
        nb -= pre;
        if ((nb / 8) & 1) {
            a = v3_zero();
            b = v3_add(load8(in, padv), scalar_to_lane0(p));
            in += 128;
            nb -= 8;
        } else {
            a = v3_add(load8(in, padv), scalar_to_lane0(p));
            b = load8(in + 128, padv);
            in += 256;
            nb -= 16;
        }
    }
    vkey r16 = vkey_lane(&k16, 0);
    while (nb >= 16) {
        a = ifma_mul(a, &r16, load8(in, padv));
        b = ifma_mul(b, &r16, load8(in + 128, padv));
        in += 256;
        nb -= 16;
    }
    if (!(st & ST_POW16) && (!once || keep))
        pow_store(p, 0, &k16);
    if (once) { /* whole batches: fold now, from registers */
        store_scalar(p, acc_to_scalar(acc_mad_tree(acc_mad_tree(acc_init(v3_zero()), a, &k16),
                                                   b, &k8)));
        p[W_STATE] = st | ST_VEC | (keep ? ST_POW8 | ST_POW16 : 0);
        return 0;
    }
    st |= ST_POW8 | ST_POW16 | ST_VEC;
    st &= ~(ST_L8 | ST_L16);
    v3_store(p + W_LANES, a);
    v3_store(p + W_LANES + 24, b);
    p[W_STATE] = st | (nb == 0 ? ST_L16 : 0);
    if (nb == 0)
        return 0;
    if (nb < sh->poly_tail) {
        finish16(p, NULL, 0, 0);
        scalar_run(p, in, nb, padbit);
    } else {
        finish16(p, in, (unsigned)nb, padbit);
    }
    return 1;
}

static __attribute__((noinline)) void run8(uint64_t *p, const uint8_t *in, size_t nb,
                                           uint64_t padbit, const chapoly_shapes *sh)
{
    const __m512i padv = _mm512_set1_epi64((long long)(padbit << 40));
    unsigned st = (unsigned)p[W_STATE];
    int once = !(st & (ST_POW8 | ST_L8 | ST_L16 | ST_VEC)), keep = nb >= sh->poly_keep;
    vkey k8;
    v3 c;

    if (st & ST_L8) {
        k8 = pow_vec(p, 8);
        c = v3_load(p + W_LANES + 24);
    } else { /* scalar hash: a prefix, then it joins block 0 in lane 0 */
        size_t pre = vec_prefix(nb, !(st & ST_POW8), 0, sh->poly_prefix);

        if (!(st & ST_POW8)) {
            beside bs = { p, in, pre, (pre + 2) / 3, padbit };

            k8 = powers8(p, &bs);
            if (!once || keep)
                pow_store(p, 8, &k8);
            put64(p + W_SCALAR, p[W_SCALAR] + pre);
        } else {
            k8 = pow_vec(p, 8);
            if (pre > 0)
                scalar_run(p, in, pre, padbit);
        }
        in += 16 * pre;
        nb -= pre;
        c = v3_add(load8(in, padv), scalar_to_lane0(p));
        in += 128;
        nb -= 8;
    }
    vkey r8 = vkey_lane(&k8, 0);
    while (nb >= 8) {
        c = ifma_mul(c, &r8, load8(in, padv));
        in += 128;
        nb -= 8;
    }
    if (once) { /* whole batches: fold now, from registers */
        store_scalar(p, acc_to_scalar(acc_mad_tree(acc_init(v3_zero()), c, &k8)));
        p[W_STATE] = st | ST_VEC | (keep ? ST_POW8 : 0);
        return;
    }
    st |= ST_POW8 | ST_VEC;
    st &= ~(ST_L8 | ST_L16);
    v3_store(p + W_LANES + 24, c);
    if (nb == 0) {
        st |= ST_L8;
    } else if (nb < sh->poly_tail) {
        finish8(p, NULL, 0, 0);
        scalar_run(p, in, nb, padbit);
    } else {
        finish8(p, in, (unsigned)nb, padbit);
    }
    p[W_STATE] = st;
}

/*
 * Dead stack. The vector paths spill key powers (finish16/finish8 take the
 * lanes from the state: passed by value, they were copied to the stack), so
 * after them the exported blocks and final zero SCRUB_VECTOR bytes below
 * their own stack pointer, where those frames were (run16 + finish16: about
 * 600 bytes, 64-byte realignment included), with zmm16 stores in inline
 * asm: no call, and zmm16..31 leave no dirty upper state (zero_zmm16_31
 * runs next anyway). Below the stack pointer is dead: a signal handler
 * arriving meanwhile can only write more there; the asm lowers the stack
 * pointer over the area first all the same (valgrind flags stores below
 * it). The stores are 64-byte aligned, from the first 64-byte boundary at
 * or below the stack pointer down (like the array of a scrub function):
 * above it lie only the return address and the callee's saves of this
 * function's registers, the realigned vector frames lie below it. (An
 * unaligned store covering those bytes too is slow: the next frames' loads
 * there wait on the split store.)
 *
 * The scalar paths need no scrub: the block loop is one asm loop whose key
 * words are only memory operands (sc_blocks_mem), and the final reduction
 * keeps the hash in registers (checked with objdump, GCC and clang). test_secrets
 * checks the dead stack after every path; it fails with SCRUB_VECTOR 64
 * and with the C block loop (sc_blocks) without a scrub.
 */
#define ZS1(o) "vmovdqa64 %%zmm16, -" #o "(%[t])\n\t"

/*
 * n (256, 512 or 1024) bytes: 256 after the 8-lane path (run8, finish8: no
 * vector spills; a frame of pushes, a 64-byte realignment and a few GPR
 * slots, under 200 bytes optimised), 512 after run16 alone (three zmm
 * spills in a frame under 400 bytes), 1024 when finish16 ran (run16 and
 * finish16 frames: about 600 bytes, 64-byte realignment included). Each
 * 64-byte store, queued behind the fold a first vector call ends with, has
 * a cost, so the size follows the path.
 */
#define SCRUB_VECTOR 1024
#define SCRUB_VECTOR_MID 512
#define SCRUB_VECTOR8 256

CHAPOLY_INLINE void scrub_below_sp_vector_n(unsigned n)
{
    uintptr_t t;

    /* the stack pointer goes down first: no store below it (valgrind) */
    if (n == SCRUB_VECTOR8) {
        __asm__ volatile("movq %%rsp, %[t]\n\t"
                         "andq $-64, %[t]\n\t"
                         "subq $320, %%rsp\n\t"
                         "vpxord %%xmm16, %%xmm16, %%xmm16\n\t"
                         ZS1(64) ZS1(128) ZS1(192) ZS1(256)
                         "addq $320, %%rsp"
                         : [t] "=&r"(t)
                         :
                         : "xmm16", "memory");
    } else if (n == SCRUB_VECTOR_MID) {
        __asm__ volatile("movq %%rsp, %[t]\n\t"
                         "andq $-64, %[t]\n\t"
                         "subq $576, %%rsp\n\t"
                         "vpxord %%xmm16, %%xmm16, %%xmm16\n\t"
                         ZS1(64) ZS1(128) ZS1(192) ZS1(256)
                         ZS1(320) ZS1(384) ZS1(448) ZS1(512)
                         "addq $576, %%rsp"
                         : [t] "=&r"(t)
                         :
                         : "xmm16", "memory");
    } else {
        __asm__ volatile("movq %%rsp, %[t]\n\t"
                         "andq $-64, %[t]\n\t"
                         "subq $1088, %%rsp\n\t"
                         "vpxord %%xmm16, %%xmm16, %%xmm16\n\t"
                         ZS1(64) ZS1(128) ZS1(192) ZS1(256)
                         ZS1(320) ZS1(384) ZS1(448) ZS1(512)
                         ZS1(576) ZS1(640) ZS1(704) ZS1(768)
                         ZS1(832) ZS1(896) ZS1(960) ZS1(1024)
                         "addq $1088, %%rsp"
                         : [t] "=&r"(t)
                         :
                         : "xmm16", "memory");
    }
}

CHAPOLY_INLINE void scrub_below_sp_vector(void)
{
    scrub_below_sp_vector_n(SCRUB_VECTOR);
}

/* Pending lanes folded into the scalar hash. */
static __attribute__((noinline)) void fold_lanes(uint64_t *p, unsigned s)
{
    if (s & ST_L16)
        finish16(p, NULL, 0, 0);
    else
        finish8(p, NULL, 0, 0);
    p[W_STATE] = s & ~(ST_L8 | ST_L16);
}

void poly1305_blocks_avx512ifma(const chapoly_kernels *kt, poly1305_state *st, const uint8_t *in,
                                size_t len, unsigned padbit)
{
    const chapoly_shapes *sh = &kt->shapes;
    uint64_t *p = st->priv;
    size_t nb = len / POLY1305_BLOCK_BYTES;
    unsigned s = (unsigned)p[W_STATE];
    uint64_t pad = padbit ? 1 : 0;
    int warm = (s & ST_POW8) || p[W_SCALAR] >= sh->poly_stream_min;

    if (nb == 0)
        return;
    if ((s & (ST_L8 | ST_L16)) && nb < sh->poly_tail) {
        /* a short call after whole batches: fold them, then scalar blocks */
        fold_lanes(p, s);
        scrub_below_sp_vector();
        zero_zmm16_31();
        scalar_run(p, in, nb, pad);
    } else if ((s & ST_L16) || (sh->poly_vector2_min != 0 && nb >= sh->poly_vector2_min) ||
               (warm && nb >= sh->poly_warm_min && (s & ST_POW16))) {
        scrub_below_sp_vector_n(run16(p, in, nb, pad, sh) ? SCRUB_VECTOR : SCRUB_VECTOR_MID);
        zero_zmm16_31();
    } else if ((s & ST_L8) || nb >= sh->poly_vector_min || (warm && nb >= sh->poly_warm_min)) {
        run8(p, in, nb, pad, sh);
        scrub_below_sp_vector_n(SCRUB_VECTOR8);
        zero_zmm16_31();
    } else {
        scalar_run(p, in, nb, pad);
    }
}

/* The state wiped after the tag (s: its state bits). */
CHAPOLY_INLINE void final_wipe(uint64_t *p, unsigned s)
{
    /*
     * What was written: the head; with r^1..r^8 the lanes C and that half
     * of the table; with r^9..r^16 the rest. (A first vector call keeps
     * its powers and lanes in registers: nothing of them in the state.)
     */
    wipe_words(p, s & ST_POW16 ? W_END : W_LANES);
    if ((s & (ST_POW8 | ST_POW16)) == ST_POW8) {
        wipe_words(p + W_LANES + 24, 24);
        for (unsigned l = 0; l < 3; l++)
            wipe_words(p + W_POW + 16 * l + 8, 8);
        for (unsigned l = 0; l < 2; l++)
            wipe_words(p + W_POW20 + 16 * l + 8, 8);
    }
}

/* The tag from the radix-2^64 hash; wipes the state. */
CHAPOLY_INLINE void final_scalar(uint64_t *p, unsigned s, uint8_t tag[16])
{
    sc_hash h = { p[W_H], p[W_H + 1], p[W_H + 2] };

    sc_final(h, p[W_PAD], p[W_PAD + 1], tag);
    final_wipe(p, s);
}

void poly1305_final_avx512ifma(const chapoly_kernels *kt, poly1305_state *st, uint8_t tag[16])
{
    (void)kt;
    uint64_t *p = st->priv;
    unsigned s = (unsigned)p[W_STATE];

    if (s & (ST_L8 | ST_L16)) {
        fold_lanes(p, s);
        scrub_below_sp_vector();
        zero_zmm16_31();
    }
    final_scalar(p, s, tag);
}

/*
 * The last blocks and the tag (kernels.h): few blocks on a scalar hash
 * (no lanes pending) run the scalar loop on the hash in registers straight
 * into the final reduction; anything else is poly1305_blocks, then
 * poly1305_final.
 */
void poly1305_last_avx512ifma(const chapoly_kernels *kt, poly1305_state *st, const uint8_t *in,
                              size_t len, unsigned padbit, uint8_t tag[16])
{
    uint64_t *p = st->priv;
    size_t nb = len / POLY1305_BLOCK_BYTES;
    unsigned s = (unsigned)p[W_STATE];

    if ((s & (ST_L8 | ST_L16)) || !sc_last_short(&kt->shapes, nb)) {
        poly1305_blocks_avx512ifma(kt, st, in, len, padbit);
        poly1305_final_avx512ifma(kt, st, tag);
        return;
    }
    sc_last(p, (sc_hash){ p[W_H], p[W_H + 1], p[W_H + 2] }, in, nb, padbit ? 1 : 0, tag);
    final_wipe(p, s);
}
