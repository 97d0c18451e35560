/* A trace's errors and notes, and the end of a cursor's read
 * (trace_obj.h). */
#include "trace_obj.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int tm_trace_err_path(const struct tm_trace *t, int rc, struct tm_err *err)
{
        if (err && strncmp(err->msg, "raw offset", 10) == 0)
                tm_err_prefix(err, "%s", t->path);
        return rc;
}

ssize_t tm_trace_read_done(struct tm_trace *t, ssize_t got, size_t n, uint64_t off, int *valid,
                           uint64_t *pos, struct tm_err *err)
{
        if (got < 0 || (size_t)got < n) {
                *valid = 0;
                if (got == 0)
                        got = tm_err_set(err, -EIO, "%s: view ends early", t->path);
        }
        if (got > 0)
                *pos = off + (uint64_t)got;
        else
                tm_trace_err_path(t, (int)got, err);
        if (got < 0)
                tm_trace_note_err(t, err);
        return got;
}

int tm_trace_same_version(const struct stat *now, const struct stat *then)
{
        return now->st_size == then->st_size && now->st_mtim.tv_sec == then->st_mtim.tv_sec &&
               now->st_mtim.tv_nsec == then->st_mtim.tv_nsec &&
               now->st_ctim.tv_sec == then->st_ctim.tv_sec &&
               now->st_ctim.tv_nsec == then->st_ctim.tv_nsec;
}

int tm_trace_read_check(struct tm_trace *t, uint64_t off, struct tm_err *err)
{
        struct stat sb;
        if (fstat(t->fd, &sb) == 0 && tm_trace_same_version(&sb, &t->sb))
                return 0;
        struct tm_err e;
        tm_err_set(&e, -EIO,
                   "%s: view offset %llu: the archive changed while it was read (since this "
                   "view's version was opened): reopen it",
                   t->path, (unsigned long long)off);
        tm_trace_note_err(t, &e);
        if (err)
                *err = e;
        return e.code;
}

void tm_trace_note_err(struct tm_trace *t, const struct tm_err *err)
{
        if (!err || err->code == 0 || err->code == -ENOENT)
                return;
        pthread_mutex_lock(&t->err_mu);
        t->last_err = *err;
        if (!t->last_err.msg[0])
                snprintf(t->last_err.msg, sizeof t->last_err.msg, "%s: %s", t->path,
                         strerror(-err->code));
        pthread_mutex_unlock(&t->err_mu);
}

void tm_trace_note_side(struct tm_trace *t, const struct tm_err *err)
{
        pthread_mutex_lock(&t->err_mu);
        int seen = 0;
        for (unsigned i = 0; i < t->nside && !seen; i++)
                seen = strcmp(t->side[i].msg, err->msg) == 0;
        if (!seen && t->nside < TM_SIDE_NOTES_MAX)
                t->side[t->nside++] = *err;
        pthread_mutex_unlock(&t->err_mu);
        tm_trace_note_err(t, err);
}

unsigned tm_trace_side_lines(struct tm_trace *t, char *dst, size_t cap)
{
        size_t n = 0;
        pthread_mutex_lock(&t->err_mu);
        unsigned k = t->nside;
        if (cap)
                dst[0] = 0;
        for (unsigned i = 0; i < k && n < cap; i++)
                n += (size_t)snprintf(dst + n, cap - n, "%s\n", t->side[i].msg);
        pthread_mutex_unlock(&t->err_mu);
        return k;
}

size_t tm_trace_stats_side(struct tm_trace *t, char *text, size_t len, size_t cap)
{
        char lines[TM_SIDE_NOTES_MAX * (TM_ERR_MSG + 16)];
        size_t n = 0;
        pthread_mutex_lock(&t->err_mu);
        for (unsigned i = 0; i < t->nside; i++)
                n += (size_t)snprintf(lines + n, sizeof lines - n, "side file  %s\n",
                                      t->side[i].msg);
        pthread_mutex_unlock(&t->err_mu);
        if (n == 0 || len + n >= cap)
                return len;
        const char *para = memmem(text, len, "\n\n", 2);
        size_t at = para ? (size_t)(para - text) + 1 : len;
        memmove(text + at + n, text + at, len - at);
        memcpy(text + at, lines, n);
        text[len + n] = 0;
        return len + n;
}
