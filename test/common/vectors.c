/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Readers for the vector files in test/vectors; see vectors.h. Plain C
 * library only: test_kernels links this file without OpenSSL.
 *
 * Everything a callback sees (field bytes/text, Wycheproof buffers and
 * comment) is owned by the reader and freed as soon as the callback returns,
 * so callbacks must copy what they want to keep.
 */
#define _GNU_SOURCE /* getline on strict C11 builds */
#include "vectors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- shared helpers ---- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Decodes n hex digits. A zero-length value gives *out = NULL, *outlen = 0,
 * so "absent data" and "empty data" look the same to callers.
 * Returns 0, or -1 on an odd length, a non-hex digit or no memory.
 */
static int hex_decode(const char *s, size_t n, uint8_t **out, size_t *outlen)
{
    *out = NULL;
    *outlen = 0;
    if (n % 2 != 0)
        return -1;
    if (n == 0)
        return 0;
    uint8_t *b = malloc(n / 2);
    if (b == NULL)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval((unsigned char)s[2 * i]);
        int lo = hexval((unsigned char)s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(b);
            return -1;
        }
        b[i] = (uint8_t)(hi << 4 | lo);
    }
    *out = b;
    *outlen = n / 2;
    return 0;
}

/* ---- .txt format ---- */

const tv_field *tv_get(const tv_case *c, const char *name)
{
    for (size_t i = 0; i < c->nfields; i++)
        if (strcmp(c->f[i].name, name) == 0)
            return &c->f[i];
    return NULL;
}

/* Fields whose value is not hex: kept only as text (bytes NULL, len 0). */
static int is_text_field(const char *name)
{
    return strcmp(name, "source") == 0 || strcmp(name, "counter") == 0;
}

static void tv_clear(tv_case *c)
{
    for (size_t i = 0; i < c->nfields; i++) {
        free(c->f[i].bytes);
        free(c->f[i].text);
    }
    c->nfields = 0;
}

/*
 * Parses "name = value" or "name =" (the documented forms; one space on
 * each side of '='). The name ends at the first " =", so free text in the
 * value may itself contain " = ".
 */
static int tv_add_field(tv_case *c, const char *line)
{
    const char *eq = strstr(line, " =");
    if (eq == NULL || eq == line)
        return -1;
    size_t namelen = (size_t)(eq - line);
    const char *val;
    if (eq[2] == '\0')
        val = eq + 2;
    else if (eq[2] == ' ')
        val = eq + 3;
    else
        return -1;
    if (namelen >= sizeof(c->f[0].name) || c->nfields >= TV_MAX_FIELDS)
        return -1;
    for (size_t i = 0; i < namelen; i++) {
        char ch = line[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_'))
            return -1;
    }

    tv_field *f = &c->f[c->nfields];
    memset(f, 0, sizeof(*f));
    memcpy(f->name, line, namelen);
    f->name[namelen] = '\0';
    if (tv_get(c, f->name) != NULL)
        return -1; /* duplicate field within one case */
    f->text = strdup(val);
    if (f->text == NULL)
        return -1;
    if (!is_text_field(f->name) && hex_decode(val, strlen(val), &f->bytes, &f->len) != 0) {
        free(f->text);
        f->text = NULL;
        return -1;
    }
    c->nfields++;
    return 0;
}

int tv_foreach(const char *path, int (*cb)(const tv_case *c, void *arg), void *arg)
{
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }

    tv_case *c = calloc(1, sizeof(*c));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, count = 0, ret = -1, stop = 0;
    const char *why = NULL;

    if (c == NULL) {
        why = "out of memory";
        goto out;
    }
    for (;;) {
        n = getline(&line, &cap, fp);
        int at_eof = n < 0;
        if (!at_eof) {
            lineno++;
            while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                line[--n] = '\0';
        }
        if (at_eof || n == 0) {
            /* A blank line (or the end of the file) completes a case. */
            if (c->nfields > 0) {
                count++;
                stop = cb(c, arg) != 0;
                tv_clear(c);
                if (stop)
                    break;
            }
            if (at_eof)
                break;
            continue;
        }
        if (line[0] == '#')
            continue;
        if (line[0] == '[') {
            if (c->nfields > 0) {
                why = "section header inside a case (missing blank line)";
                goto out;
            }
            if (n < 3 || line[n - 1] != ']' || (size_t)(n - 2) >= sizeof(c->section)) {
                why = "bad section header";
                goto out;
            }
            memcpy(c->section, line + 1, (size_t)(n - 2));
            c->section[n - 2] = '\0';
            continue;
        }
        if (c->section[0] == '\0') {
            why = "field before any [section]";
            goto out;
        }
        if (c->nfields == 0)
            c->line = lineno;
        if (tv_add_field(c, line) != 0) {
            why = "malformed 'field = value' line (bad name, hex, duplicate or too many fields)";
            goto out;
        }
    }
    if (ferror(fp)) {
        why = "read error";
        goto out;
    }
    ret = count;

out:
    if (why != NULL)
        fprintf(stderr, "%s:%d: %s\n", path, lineno, why);
    if (c != NULL) {
        tv_clear(c);
        free(c);
    }
    free(line);
    fclose(fp);
    return ret;
}

/* ---- Wycheproof JSON ---- */

/*
 * A small strict JSON reader over the whole file in memory. It knows just
 * enough of aead_test_schema_v1 to find testGroups[].tests[] and skips any
 * other member generically, so key order and unknown members do not matter.
 */
typedef struct {
    const char *p, *end;
    const char *path;
    const char *err;   /* first error, set once */
    const char *errp;  /* where it happened */
} js;

static int js_fail(js *j, const char *msg)
{
    if (j->err == NULL) {
        j->err = msg;
        j->errp = j->p;
    }
    return -1;
}

static void js_ws(js *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

/* Consumes character ch (after whitespace) or fails. */
static int js_expect(js *j, char ch)
{
    js_ws(j);
    if (j->p >= j->end || *j->p != ch)
        return js_fail(j, "unexpected character");
    j->p++;
    return 0;
}

/* Peeks the next non-blank character (0 at the end). */
static char js_peek(js *j)
{
    js_ws(j);
    return j->p < j->end ? *j->p : 0;
}

static void put_utf8(char *o, size_t *k, uint32_t cp)
{
    if (cp < 0x80) {
        o[(*k)++] = (char)cp;
    } else if (cp < 0x800) {
        o[(*k)++] = (char)(0xc0 | cp >> 6);
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        o[(*k)++] = (char)(0xe0 | cp >> 12);
        o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        o[(*k)++] = (char)(0xf0 | cp >> 18);
        o[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[(*k)++] = (char)(0x80 | (cp & 0x3f));
    }
}

static int js_hex4(js *j, uint32_t *v)
{
    *v = 0;
    if (j->end - j->p < 4)
        return js_fail(j, "truncated \\u escape");
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)j->p[i]);
        if (h < 0)
            return js_fail(j, "bad \\u escape");
        *v = *v << 4 | (uint32_t)h;
    }
    j->p += 4;
    return 0;
}

/*
 * Reads a string. With out != NULL returns a malloc'd NUL-terminated UTF-8
 * copy (escapes decoded); with out == NULL only skips it.
 */
static int js_string(js *j, char **out, size_t *outlen)
{
    if (out != NULL)
        *out = NULL;
    if (js_expect(j, '"') != 0)
        return -1;
    /* Decoded text is never longer than the escaped text. */
    const char *start = j->p;
    const char *q = start;
    while (q < j->end && *q != '"') {
        if (*q == '\\')
            q++;
        q++;
    }
    if (q >= j->end)
        return js_fail(j, "unterminated string");
    char *o = NULL;
    size_t k = 0;
    if (out != NULL && (o = malloc((size_t)(q - start) + 1)) == NULL)
        return js_fail(j, "out of memory");

    while (*j->p != '"') {
        unsigned char ch = (unsigned char)*j->p++;
        uint32_t cp = ch;
        if (ch < 0x20) {
            free(o);
            return js_fail(j, "control character in string");
        }
        if (ch == '\\') {
            char e = *j->p++;
            switch (e) {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u':
                if (js_hex4(j, &cp) != 0) {
                    free(o);
                    return -1;
                }
                if (cp >= 0xd800 && cp < 0xdc00 && j->end - j->p >= 6 &&
                    j->p[0] == '\\' && j->p[1] == 'u') {
                    uint32_t lo;
                    j->p += 2;
                    if (js_hex4(j, &lo) != 0) {
                        free(o);
                        return -1;
                    }
                    if (lo >= 0xdc00 && lo < 0xe000)
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    else
                        cp = 0xfffd;
                } else if (cp >= 0xd800 && cp < 0xe000) {
                    cp = 0xfffd; /* lone surrogate */
                }
                break;
            default:
                free(o);
                return js_fail(j, "bad escape in string");
            }
            if (o != NULL)
                put_utf8(o, &k, cp);
        } else if (o != NULL) {
            o[k++] = (char)ch; /* raw UTF-8 bytes pass through */
        }
    }
    j->p++; /* closing quote */
    if (o != NULL) {
        o[k] = '\0';
        *out = o;
        if (outlen != NULL)
            *outlen = k;
    }
    return 0;
}

static int js_skip_value(js *j, int depth);

static int js_skip_container(js *j, char open, char close, int depth)
{
    if (js_expect(j, open) != 0)
        return -1;
    if (js_peek(j) == close) {
        j->p++;
        return 0;
    }
    for (;;) {
        if (open == '{') {
            if (js_string(j, NULL, NULL) != 0 || js_expect(j, ':') != 0)
                return -1;
        }
        if (js_skip_value(j, depth + 1) != 0)
            return -1;
        char c = js_peek(j);
        if (c == ',') {
            j->p++;
            continue;
        }
        return js_expect(j, close);
    }
}

static int js_skip_value(js *j, int depth)
{
    if (depth > 64)
        return js_fail(j, "nesting too deep");
    char c = js_peek(j);
    if (c == '"')
        return js_string(j, NULL, NULL);
    if (c == '{')
        return js_skip_container(j, '{', '}', depth);
    if (c == '[')
        return js_skip_container(j, '[', ']', depth);
    /* number, true, false, null: a run of literal characters */
    const char *s = j->p;
    while (j->p < j->end && strchr("+-.0123456789eEtruefalsn", *j->p) != NULL)
        j->p++;
    if (j->p == s)
        return js_fail(j, "expected a value");
    return 0;
}

static int js_int(js *j, int *v)
{
    js_ws(j);
    long acc = 0;
    int neg = 0, digits = 0;
    if (j->p < j->end && *j->p == '-') {
        neg = 1;
        j->p++;
    }
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        acc = acc * 10 + (*j->p++ - '0');
        if (acc > 0x7fffffffL)
            return js_fail(j, "integer out of range");
        digits++;
    }
    if (digits == 0)
        return js_fail(j, "expected an integer");
    *v = (int)(neg ? -acc : acc);
    return 0;
}

static int js_hex_member(js *j, uint8_t **b, size_t *len, unsigned *seen, unsigned bit)
{
    char *s;
    size_t n;
    if (*seen & bit)
        return js_fail(j, "duplicate member");
    if (js_string(j, &s, &n) != 0)
        return -1;
    int r = hex_decode(s, n, b, len);
    free(s);
    if (r != 0)
        return js_fail(j, "bad hex string");
    *seen |= bit;
    return 0;
}

static void wp_clear(wp_case *t, char **comment)
{
    free(t->key);
    free(t->iv);
    free(t->aad);
    free(t->msg);
    free(t->ct);
    free(t->tag);
    free(*comment);
    *comment = NULL;
    memset(t, 0, sizeof(*t));
}

enum { M_ID = 1, M_KEY = 2, M_IV = 4, M_AAD = 8, M_MSG = 16, M_CT = 32, M_TAG = 64, M_RES = 128 };

/* One tests[] element. Returns 0 and fills *t (caller frees), or -1. */
static int wp_parse_test(js *j, wp_case *t, char **comment)
{
    unsigned seen = 0;

    memset(t, 0, sizeof(*t));
    *comment = NULL;
    if (js_expect(j, '{') != 0)
        return -1;
    if (js_peek(j) == '}')
        return js_fail(j, "empty test object");
    for (;;) {
        char *name;
        int r = 0;
        if (js_string(j, &name, NULL) != 0)
            return -1;
        if (js_expect(j, ':') != 0) {
            free(name);
            return -1;
        }
        if (strcmp(name, "tcId") == 0) {
            r = (seen & M_ID) ? js_fail(j, "duplicate member") : js_int(j, &t->tc_id);
            seen |= M_ID;
        } else if (strcmp(name, "comment") == 0) {
            free(*comment);
            r = js_string(j, comment, NULL);
        } else if (strcmp(name, "key") == 0) {
            r = js_hex_member(j, &t->key, &t->key_len, &seen, M_KEY);
        } else if (strcmp(name, "iv") == 0) {
            r = js_hex_member(j, &t->iv, &t->iv_len, &seen, M_IV);
        } else if (strcmp(name, "aad") == 0) {
            r = js_hex_member(j, &t->aad, &t->aad_len, &seen, M_AAD);
        } else if (strcmp(name, "msg") == 0) {
            r = js_hex_member(j, &t->msg, &t->msg_len, &seen, M_MSG);
        } else if (strcmp(name, "ct") == 0) {
            r = js_hex_member(j, &t->ct, &t->ct_len, &seen, M_CT);
        } else if (strcmp(name, "tag") == 0) {
            r = js_hex_member(j, &t->tag, &t->tag_len, &seen, M_TAG);
        } else if (strcmp(name, "result") == 0) {
            char *res;
            if ((r = js_string(j, &res, NULL)) == 0) {
                if (strcmp(res, "valid") == 0)
                    t->valid = 1;
                else if (strcmp(res, "invalid") == 0)
                    t->valid = 0;
                else if (strcmp(res, "acceptable") == 0)
                    t->valid = 2;
                else
                    r = js_fail(j, "unknown result value");
                free(res);
            }
            seen |= M_RES;
        } else {
            r = js_skip_value(j, 3); /* flags and anything newer */
        }
        free(name);
        if (r != 0)
            return -1;
        char c = js_peek(j);
        if (c == ',') {
            j->p++;
            continue;
        }
        if (js_expect(j, '}') != 0)
            return -1;
        break;
    }
    const unsigned need = M_ID | M_KEY | M_IV | M_AAD | M_MSG | M_CT | M_TAG | M_RES;
    if ((seen & need) != need)
        return js_fail(j, "test object lacks a required member");
    if (*comment == NULL && (*comment = strdup("")) == NULL)
        return js_fail(j, "out of memory");
    t->comment = *comment;
    return 0;
}

/* Walks one testGroups[] element; returns 1 if a callback asked to stop. */
static int wp_group(js *j, int (*cb)(const wp_case *c, void *arg), void *arg, int *count)
{
    if (js_expect(j, '{') != 0)
        return -1;
    if (js_peek(j) == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        char *name;
        if (js_string(j, &name, NULL) != 0)
            return -1;
        int is_tests = strcmp(name, "tests") == 0;
        free(name);
        if (js_expect(j, ':') != 0)
            return -1;
        if (!is_tests) {
            if (js_skip_value(j, 2) != 0)
                return -1;
        } else {
            if (js_expect(j, '[') != 0)
                return -1;
            if (js_peek(j) == ']') {
                j->p++;
            } else {
                for (;;) {
                    wp_case t;
                    char *comment;
                    if (wp_parse_test(j, &t, &comment) != 0) {
                        wp_clear(&t, &comment);
                        return -1;
                    }
                    (*count)++;
                    int stop = cb(&t, arg) != 0;
                    wp_clear(&t, &comment);
                    if (stop)
                        return 1;
                    char c = js_peek(j);
                    if (c == ',') {
                        j->p++;
                        continue;
                    }
                    if (js_expect(j, ']') != 0)
                        return -1;
                    break;
                }
            }
        }
        char c = js_peek(j);
        if (c == ',') {
            j->p++;
            continue;
        }
        return js_expect(j, '}');
    }
}

static int wp_walk(js *j, int (*cb)(const wp_case *c, void *arg), void *arg, int *count)
{
    int found = 0;

    if (js_expect(j, '{') != 0)
        return -1;
    if (js_peek(j) == '}')
        return js_fail(j, "empty top-level object");
    for (;;) {
        char *name;
        if (js_string(j, &name, NULL) != 0)
            return -1;
        int is_groups = strcmp(name, "testGroups") == 0;
        free(name);
        if (js_expect(j, ':') != 0)
            return -1;
        if (!is_groups) {
            if (js_skip_value(j, 1) != 0)
                return -1;
        } else {
            found = 1;
            if (js_expect(j, '[') != 0)
                return -1;
            if (js_peek(j) == ']') {
                j->p++;
            } else {
                for (;;) {
                    int r = wp_group(j, cb, arg, count);
                    if (r != 0)
                        return r; /* error, or stop requested */
                    char c = js_peek(j);
                    if (c == ',') {
                        j->p++;
                        continue;
                    }
                    if (js_expect(j, ']') != 0)
                        return -1;
                    break;
                }
            }
        }
        char c = js_peek(j);
        if (c == ',') {
            j->p++;
            continue;
        }
        if (js_expect(j, '}') != 0)
            return -1;
        break;
    }
    if (!found)
        return js_fail(j, "no testGroups member");
    js_ws(j);
    if (j->p != j->end)
        return js_fail(j, "trailing data after the top-level object");
    return 0;
}

int wp_foreach(const char *path, int (*cb)(const wp_case *c, void *arg), void *arg)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 65536) {
            char *nb = realloc(buf, cap + 262144);
            if (nb == NULL) {
                fprintf(stderr, "%s: out of memory\n", path);
                free(buf);
                fclose(fp);
                return -1;
            }
            buf = nb;
            cap += 262144;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0)
            break;
    }
    int rerr = ferror(fp);
    fclose(fp);
    if (rerr) {
        fprintf(stderr, "%s: read error\n", path);
        free(buf);
        return -1;
    }

    js j = { buf, buf + len, path, NULL, NULL };
    int count = 0;
    int r = wp_walk(&j, cb, arg, &count);
    if (r < 0) {
        /* Report a line number: easier to find than a byte offset. */
        int line = 1;
        const char *at = j.errp != NULL ? j.errp : j.p;
        for (const char *q = buf; q < at && q < j.end; q++)
            line += *q == '\n';
        fprintf(stderr, "%s:%d: malformed Wycheproof JSON: %s\n", path, line,
                j.err != NULL ? j.err : "parse error");
        free(buf);
        return -1;
    }
    free(buf);
    return count;
}
