/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Readers for test/vectors (no OpenSSL needed): the '.txt' format
 * documented at the top of rfc8439.txt, and the Wycheproof AEAD JSON files.
 */
#ifndef CHAPOLY_TEST_VECTORS_H
#define CHAPOLY_TEST_VECTORS_H

#include <stddef.h>
#include <stdint.h>

#define TV_MAX_FIELDS 12

typedef struct {
    char name[32];      /* field name, e.g. "key" */
    uint8_t *bytes;     /* hex-decoded value (NULL when len == 0) */
    size_t len;
    char *text;         /* the raw value text ('source', 'counter') */
} tv_field;

typedef struct {
    char section[64];   /* e.g. "chacha20-poly1305" */
    int line;           /* line number where the case starts */
    size_t nfields;
    tv_field f[TV_MAX_FIELDS];
} tv_case;

/* The field named 'name', or NULL. */
const tv_field *tv_get(const tv_case *c, const char *name);

/*
 * Calls cb for every case of 'path' (a full path); cb returns 0 to go on.
 * Returns the number of cases read, or -1 if the file cannot be read or is
 * malformed (the reason is printed to stderr).
 */
int tv_foreach(const char *path, int (*cb)(const tv_case *c, void *arg), void *arg);

typedef struct {
    int tc_id;
    int valid;          /* 1 "valid", 0 "invalid", 2 "acceptable" */
    const char *comment;
    uint8_t *key, *iv, *aad, *msg, *ct, *tag;
    size_t key_len, iv_len, aad_len, msg_len, ct_len, tag_len;
} wp_case;

/* Same contract as tv_foreach, for Wycheproof aead_test_schema_v1 files. */
int wp_foreach(const char *path, int (*cb)(const wp_case *c, void *arg), void *arg);

#endif
