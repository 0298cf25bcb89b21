/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Streaming Poly1305 on top of a kernel table's block function
 * (poly1305_stream.c): input arrives in any split, a partial block waits in
 * poly1305_state.buf. The EVP MAC and the AEAD core use it.
 */
#ifndef CHAPOLY_POLY1305_STREAM_H
#define CHAPOLY_POLY1305_STREAM_H

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Any split of the input gives the same tag. */
void chapoly_poly1305_init(const chapoly_kernels *k, poly1305_state *st,
                           const uint8_t key[32]);
void chapoly_poly1305_update(const chapoly_kernels *k, poly1305_state *st,
                             const uint8_t *in, size_t len);
void chapoly_poly1305_final(const chapoly_kernels *k, poly1305_state *st,
                            uint8_t tag[16]);

#ifdef __cplusplus
}
#endif

#endif
