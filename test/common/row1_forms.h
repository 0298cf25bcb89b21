/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one-block row-form ChaCha20 kernels (kernels_impl.h:
 * chacha20_xor_row1_avx2, chacha20_xor_row1_avx512vl; 0 <= len <= 64, the
 * block at counter ctr_nonce[0]). They are not table entries yet (the
 * per-CPU one-block choice will pick one), so the tests call them directly
 * at the levels whose CPU features they need: the avx2 form at "avx2", the
 * avx512 form (AVX-512 F/VL/BW/DQ, BMI2) at "avx512vl", "avx512-noifma" and
 * "avx512". A level table is handed out only on a CPU that runs every
 * object its functions live in, and these forms live in those objects.
 */
#ifndef CHAPOLY_TEST_ROW1_FORMS_H
#define CHAPOLY_TEST_ROW1_FORMS_H

#include <string.h>
#include "kernels_impl.h"

typedef void (*row1_fn)(uint8_t *out, const uint8_t *in, size_t len, const uint32_t key[8],
                        const uint32_t ctr_nonce[4]);

struct row1_form {
    const char *name;
    row1_fn fn;
};

/* The row form to check at kernel level 'level', or NULL (none compiled or none there). */
static inline const struct row1_form *row1_form_for(const char *level)
{
#ifdef CHAPOLY_HAVE_AVX2
    static const struct row1_form avx2 = { "chacha20_xor_row1_avx2", chacha20_xor_row1_avx2 };
    if (level != NULL && strcmp(level, "avx2") == 0)
        return &avx2;
#endif
#ifdef CHAPOLY_HAVE_AVX512
    static const struct row1_form avx512 = { "chacha20_xor_row1_avx512vl",
                                             chacha20_xor_row1_avx512vl };
    if (level != NULL && (strcmp(level, "avx512vl") == 0 || strcmp(level, "avx512-noifma") == 0 ||
                          strcmp(level, "avx512") == 0))
        return &avx512;
#endif
    (void)level;
    return NULL;
}

#endif
