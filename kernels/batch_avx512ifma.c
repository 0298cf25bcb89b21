/*
 * poly1305_multi_blocks of the "avx512" level: the multi-message scalar
 * chains (batch_poly.h) in front of poly1305_blocks_avx512ifma, built with
 * that level's flags (IFMA included) like the Poly1305 it falls back to.
 */
#include "batch_poly.h"

void poly1305_multi_blocks_avx512ifma(poly1305_state *const st[], const uint8_t *const in[],
                                      const size_t len[], size_t n)
{
    multi_poly(st, in, len, n, poly1305_blocks_avx512ifma);
}
