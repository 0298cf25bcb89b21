/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Everything chapoly takes from OpenSSL, taken from the core's dispatch
 * table (the "in" of OSSL_provider_init), never from a linked libcrypto:
 * memory (CRYPTO_malloc, zalloc, free), cleanse, errors and error marks,
 * and the BIO upcalls that read the configuration file for the misspelt-key
 * check (prov_config.c). The module links nothing but libc, so one build
 * serves every libcrypto from 3.0 on (libcrypto.so.3, libcrypto.so.4): it
 * always uses the libcrypto of the process that loaded it, and its errors
 * go into that libcrypto's queue.
 *
 * Errors are raised in chapoly's own error library: the core gives every
 * provider one (named after the provider, "chapoly") and loads the reason
 * strings the provider hands it (chapoly_get_reason_strings), so an error
 * prints as "chapoly::invalid tag length:<detail>" in any version. The
 * reason codes are the PROV_R_* numbers of <openssl/proverr.h> with
 * OpenSSL's own texts. The core finds the library through a provider
 * handle; errors are raised with the handle of a live instance (the first
 * one, then another when it is torn down), and a teardown waits until no
 * thread is inside a raise that may be using its handle. With no instance
 * left (a raise racing the last teardown), the error is raised as libcrypto's
 * "Provider routines" with the same code, which needs no handle.
 *
 * The function pointers are the same for every instance in a process (the
 * core's table is static in libcrypto): the first init stores them, later
 * inits check that they come from the same libcrypto and refuse to start
 * otherwise (two libcrypto copies loading the same module file).
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include "prov.h"

typedef struct core_fns {
    OSSL_FUNC_CRYPTO_malloc_fn *malloc_fn;
    OSSL_FUNC_CRYPTO_zalloc_fn *zalloc_fn;
    OSSL_FUNC_CRYPTO_free_fn *free_fn;
    OSSL_FUNC_OPENSSL_cleanse_fn *cleanse_fn;
    OSSL_FUNC_core_new_error_fn *new_error;
    OSSL_FUNC_core_set_error_debug_fn *set_error_debug;
    OSSL_FUNC_core_vset_error_fn *vset_error;
    OSSL_FUNC_core_set_error_mark_fn *set_error_mark;
    OSSL_FUNC_core_pop_error_to_mark_fn *pop_error_to_mark;
    OSSL_FUNC_BIO_new_file_fn *bio_new_file;
    OSSL_FUNC_BIO_read_ex_fn *bio_read_ex;
    OSSL_FUNC_BIO_free_fn *bio_free;
    int ready;
} core_fns;

static core_fns core;

static pthread_mutex_t core_lock = PTHREAD_MUTEX_INITIALIZER;
static chapoly_provctx *live; /* instances, under core_lock */
static const OSSL_CORE_HANDLE *err_handle; /* a live instance's handle (atomic) */
static unsigned raising;                   /* threads inside chapoly_raise (atomic) */

int chapoly_core_take(const OSSL_DISPATCH *in)
{
    core_fns t;
    int ok;

    memset(&t, 0, sizeof(t));
    for (; in != NULL && in->function_id != 0; in++) {
        switch (in->function_id) {
        case OSSL_FUNC_CRYPTO_MALLOC: t.malloc_fn = OSSL_FUNC_CRYPTO_malloc(in); break;
        case OSSL_FUNC_CRYPTO_ZALLOC: t.zalloc_fn = OSSL_FUNC_CRYPTO_zalloc(in); break;
        case OSSL_FUNC_CRYPTO_FREE: t.free_fn = OSSL_FUNC_CRYPTO_free(in); break;
        case OSSL_FUNC_OPENSSL_CLEANSE: t.cleanse_fn = OSSL_FUNC_OPENSSL_cleanse(in); break;
        case OSSL_FUNC_CORE_NEW_ERROR: t.new_error = OSSL_FUNC_core_new_error(in); break;
        case OSSL_FUNC_CORE_SET_ERROR_DEBUG:
            t.set_error_debug = OSSL_FUNC_core_set_error_debug(in);
            break;
        case OSSL_FUNC_CORE_VSET_ERROR: t.vset_error = OSSL_FUNC_core_vset_error(in); break;
        case OSSL_FUNC_CORE_SET_ERROR_MARK:
            t.set_error_mark = OSSL_FUNC_core_set_error_mark(in);
            break;
        case OSSL_FUNC_CORE_POP_ERROR_TO_MARK:
            t.pop_error_to_mark = OSSL_FUNC_core_pop_error_to_mark(in);
            break;
        case OSSL_FUNC_BIO_NEW_FILE: t.bio_new_file = OSSL_FUNC_BIO_new_file(in); break;
        case OSSL_FUNC_BIO_READ_EX: t.bio_read_ex = OSSL_FUNC_BIO_read_ex(in); break;
        case OSSL_FUNC_BIO_FREE: t.bio_free = OSSL_FUNC_BIO_free(in); break;
        }
    }
    /* what chapoly cannot work without; every libcrypto from 3.0 on hands all of them */
    if (t.malloc_fn == NULL || t.zalloc_fn == NULL || t.free_fn == NULL ||
        t.new_error == NULL || t.set_error_debug == NULL || t.vset_error == NULL)
        return 0;
    t.ready = 1;
    pthread_mutex_lock(&core_lock);
    if (!core.ready) {
        core = t;
        ok = 1;
    } else {
        /* the same libcrypto: the same functions */
        ok = core.malloc_fn == t.malloc_fn && core.vset_error == t.vset_error;
    }
    pthread_mutex_unlock(&core_lock);
    return ok;
}

void chapoly_core_attach(chapoly_provctx *pc)
{
    pthread_mutex_lock(&core_lock);
    pc->core_next = live;
    live = pc;
    if (__atomic_load_n(&err_handle, __ATOMIC_SEQ_CST) == NULL)
        __atomic_store_n(&err_handle, pc->handle, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&core_lock);
}

void chapoly_core_detach(chapoly_provctx *pc)
{
    pthread_mutex_lock(&core_lock);
    for (chapoly_provctx **p = &live; *p != NULL; p = &(*p)->core_next) {
        if (*p == pc) {
            *p = pc->core_next;
            break;
        }
    }
    if (__atomic_load_n(&err_handle, __ATOMIC_SEQ_CST) == pc->handle) {
        const OSSL_CORE_HANDLE *next = NULL;

        for (chapoly_provctx *q = live; q != NULL && next == NULL; q = q->core_next)
            if (q->handle != pc->handle)
                next = q->handle;
        __atomic_store_n(&err_handle, next, __ATOMIC_SEQ_CST);
        /* a raise that read the old handle is still inside the core's functions */
        while (__atomic_load_n(&raising, __ATOMIC_SEQ_CST) != 0)
            sched_yield();
    }
    pthread_mutex_unlock(&core_lock);
}

void *chapoly_core_malloc(size_t n, const char *file, int line)
{
    return core.malloc_fn(n, file, line);
}

void *chapoly_core_zalloc(size_t n, const char *file, int line)
{
    return core.zalloc_fn(n, file, line);
}

void chapoly_core_free(void *p, const char *file, int line)
{
    core.free_fn(p, file, line);
}

char *chapoly_core_strdup(const char *s, const char *file, int line)
{
    size_t n = strlen(s) + 1;
    char *d = core.malloc_fn(n, file, line);

    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

void chapoly_cleanse(void *p, size_t n)
{
    if (core.cleanse_fn != NULL)
        core.cleanse_fn(p, n);
    else
        chapoly_wipe(p, n);
}

void chapoly_raise(const char *file, int line, const char *func, int reason,
                   const char *fmt, ...)
{
    const OSSL_CORE_HANDLE *h;
    va_list ap;

    if (!core.ready)
        return;
    __atomic_add_fetch(&raising, 1, __ATOMIC_SEQ_CST);
    h = __atomic_load_n(&err_handle, __ATOMIC_SEQ_CST);
    core.new_error(h);
    core.set_error_debug(h, file, line, func);
    va_start(ap, fmt);
    /* lib 0: the provider's own library (the handle's); else libcrypto's PROV */
    core.vset_error(h, h != NULL ? (uint32_t)reason : ERR_PACK(ERR_LIB_PROV, 0, reason), fmt, ap);
    va_end(ap);
    __atomic_sub_fetch(&raising, 1, __ATOMIC_SEQ_CST);
}

int chapoly_err_set_mark(void)
{
    if (core.set_error_mark == NULL || core.pop_error_to_mark == NULL)
        return 0;
    /* its result says whether the queue held an error to mark; popping to
     * the mark works either way (an empty queue is emptied again) */
    (void)core.set_error_mark(NULL);
    return 1;
}

void chapoly_err_pop_to_mark(void)
{
    core.pop_error_to_mark(NULL);
}

char *chapoly_core_read_file(const char *path, size_t max)
{
    OSSL_CORE_BIO *bio;
    char *text;
    size_t len = 0, got = 0;

    if (core.bio_new_file == NULL || core.bio_read_ex == NULL || core.bio_free == NULL)
        return NULL;
    if ((bio = core.bio_new_file(path, "r")) == NULL)
        return NULL;
    text = chapoly_malloc(max + 1);
    while (text != NULL && len < max && core.bio_read_ex(bio, text + len, max - len, &got) &&
           got > 0)
        len += got;
    core.bio_free(bio);
    if (text != NULL && len >= max) { /* too big to be a configuration file worth checking */
        chapoly_free(text);
        return NULL;
    }
    if (text != NULL)
        text[len] = '\0';
    return text;
}

/* The reason codes chapoly raises, with OpenSSL's texts for them. */
#define CHAPOLY_REASON_ITEM_(code, text) { (unsigned)(code), (void *)(text) },
static const OSSL_ITEM reason_strings[] = {
    CHAPOLY_REASONS(CHAPOLY_REASON_ITEM_)
    { 0, NULL }
};
#undef CHAPOLY_REASON_ITEM_

const OSSL_ITEM *chapoly_get_reason_strings(void *provctx)
{
    (void)provctx;
    return reason_strings;
}
