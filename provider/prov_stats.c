/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Statistics: the counters as provider parameters, their line in the
 * statistics file at teardown, and their restart in a forked child. Only
 * instances with statistics on (config key stats, CHAPOLY_STATS) get here;
 * the counting itself is inline in prov.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* secure_getenv */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/params.h>
#include "prov.h"

#define CHAPOLY_CTR_NAME_(id, name) name,
static const char *const counter_names[CHAPOLY_NCOUNTERS] = {
    CHAPOLY_COUNTERS(CHAPOLY_CTR_NAME_)
};
#undef CHAPOLY_CTR_NAME_

static uint64_t counter(const chapoly_provctx *pc, int i)
{
    return __atomic_load_n(&pc->ctr[i], __ATOMIC_RELAXED);
}

int chapoly_stats_get_params(const chapoly_provctx *pc, OSSL_PARAM params[])
{
    OSSL_PARAM *p;

    for (int i = 0; i < CHAPOLY_NCOUNTERS; i++) {
        p = chapoly_param_locate(params, counter_names[i]);
        if (p != NULL && !chapoly_param_set_uint64(p, counter(pc, i)))
            return 0;
    }
    return 1;
}

/* ---- per process: restarted in a forked child, written at teardown ---- */

/*
 * The counters count the work of this process. A forked child (nginx's
 * workers, a pre-forking server's children) inherits its parent's provider
 * instances with their counters; it starts them again from 0 (fork_child),
 * so a process that did nothing writes no line and the lines of a parent and
 * its children add up without counting anything twice. Instances with
 * statistics on are kept in a list for that, which only init, teardown and
 * fork touch (never the data path); the fork handlers are registered once,
 * and only by a process that turns statistics on. glibc drops them when the
 * module is unloaded (dlclose).
 */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static chapoly_provctx *stats_list; /* under stats_lock */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&stats_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&stats_lock);
}

static void fork_child(void)
{
    for (chapoly_provctx *pc = stats_list; pc != NULL; pc = pc->stats_next)
        for (int i = 0; i < CHAPOLY_NCOUNTERS; i++)
            __atomic_store_n(&pc->ctr[i], 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&stats_lock);
}

static void register_fork_handlers(void)
{
    /* on failure a child keeps counting from its parent's values */
    (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void chapoly_stats_attach(chapoly_provctx *pc)
{
    /* not under stats_lock: fork takes libc's handler lock, then stats_lock */
    pthread_once(&fork_once, register_fork_handlers);
    pthread_mutex_lock(&stats_lock);
    pc->stats_next = stats_list;
    stats_list = pc;
    pthread_mutex_unlock(&stats_lock);
}

static void stats_unlink(chapoly_provctx *pc)
{
    pthread_mutex_lock(&stats_lock);
    for (chapoly_provctx **pp = &stats_list; *pp != NULL; pp = &(*pp)->stats_next) {
        if (*pp == pc) {
            *pp = pc->stats_next;
            break;
        }
    }
    pthread_mutex_unlock(&stats_lock);
}

/*
 * The path with each "%p" replaced by this process's id and "%%" by "%"
 * (any other "%" stays as it is); 0 if it does not fit.
 */
static int expand_path(const char *tmpl, char *out, size_t size)
{
    char pid[24];
    size_t n = 0, pidlen;

    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    pidlen = strlen(pid);
    for (const char *s = tmpl; *s != '\0'; s++) {
        const char *add = s;
        size_t len = 1;

        if (s[0] == '%' && s[1] == 'p') {
            add = pid;
            len = pidlen;
            s++;
        } else if (s[0] == '%' && s[1] == '%') {
            s++;
        }
        if (len >= size - n)
            return 0;
        memcpy(out + n, add, len);
        n += len;
    }
    out[n] = '\0';
    return 1;
}

/*
 * Appends "pid=P chapoly-aead-messages=N ..." (every counter) to the file
 * named by CHAPOLY_STATS_FILE, else by the config key stats_file; called at
 * teardown, only with statistics on and only if this process counted
 * something. secure_getenv hides the variable from setuid/setgid processes.
 * "%p" in the path is this process's id, taken now (a forked child's own).
 * The last path component is never followed through a symlink (O_NOFOLLOW);
 * only a regular file with a single link, owned by the effective user, is
 * written; a file created here gets mode 0600 whatever the umask. The line
 * goes out in one write(2) with O_APPEND, so the lines of processes sharing
 * the file do not mix. Every failure is silent.
 */
static void write_stats_file(chapoly_provctx *pc)
{
    const char *tmpl = secure_getenv("CHAPOLY_STATS_FILE");
    const int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    int saved_errno = errno, created = 1, fd, n;
    struct stat st;
    char path[PATH_MAX], line[CHAPOLY_NCOUNTERS * 48 + 32];

    if (tmpl == NULL || *tmpl == '\0')
        tmpl = pc->stats_file;
    if (tmpl == NULL || *tmpl == '\0' || !expand_path(tmpl, path, sizeof(path)))
        return;
    fd = open(path, flags | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        created = 0;
        /* O_NONBLOCK: a FIFO without a reader fails instead of blocking */
        fd = open(path, flags | O_NONBLOCK);
    }
    if (fd < 0)
        goto out;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_nlink != 1 || (created && fchmod(fd, 0600) != 0)) {
        close(fd);
        goto out;
    }
    n = snprintf(line, sizeof(line), "pid=%ld", (long)getpid());
    for (int i = 0; i < CHAPOLY_NCOUNTERS && n > 0 && (size_t)n < sizeof(line); i++)
        n += snprintf(line + n, sizeof(line) - (size_t)n, " %s=%llu", counter_names[i],
                      (unsigned long long)counter(pc, i));
    if (n > 0 && (size_t)n < sizeof(line) - 1) {
        ssize_t w;

        line[n++] = '\n';
        do
            w = write(fd, line, (size_t)n); /* O_APPEND: one line, one write */
        while (w < 0 && errno == EINTR);
    }
    close(fd);
out:
    errno = saved_errno;
}

void chapoly_stats_detach(chapoly_provctx *pc)
{
    int counted = 0;

    stats_unlink(pc);
    for (int i = 0; i < CHAPOLY_NCOUNTERS; i++)
        counted |= counter(pc, i) != 0;
    if (counted) /* a process that did nothing through chapoly writes nothing */
        write_stats_file(pc);
}
