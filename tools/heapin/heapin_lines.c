/* heapin's line reader (heapin_int.h): lines of a stream from a buffer of
 * fixed size, with the line's place for messages; both readers use it. */
#include "heapin_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tools/lib_int.h"
#include <string.h>

/* Bytes asked of the read function at a time. */
#define LINES_CHUNK 65536

int heapin_lines_open(struct heapin_lines *l, heapin_read_fn rd, void *rarg, const char *name,
                      struct tm_err *err)
{
        memset(l, 0, sizeof *l);
        l->rd = rd;
        l->rarg = rarg;
        l->name = name ? name : "(input)";
        /* a whole line, its newline, a read behind it, and room for a NUL */
        l->cap = (size_t)HEAPIN_LINE_MAX + 1 + LINES_CHUNK + 1;
        l->buf = malloc(l->cap + HEAPIN_LINE_MAX + 1);
        if (!l->buf)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", l->name);
        l->text = l->buf + l->cap;
        return 0;
}

void heapin_lines_close(struct heapin_lines *l)
{
        free(l->buf);
        l->buf = l->text = NULL;
}

int heapin_lines_err(const struct heapin_lines *l, struct tm_err *err, int code, const char *fmt,
                     ...)
{
        char msg[TM_ERR_MSG];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        return tm_err_set(err, code, "%s: line %llu (byte offset %llu): %s", l->name,
                          (unsigned long long)l->line, (unsigned long long)l->off, msg);
}

/* Read more input to buf[end..); sets eof at the end. 0 or a negative errno
 * (err set). */
static int lines_fill(struct heapin_lines *l, size_t room, struct tm_err *err)
{
        ssize_t n;
        do
                n = l->rd(l->rarg, l->buf + l->end, room);
        while (n == -EINTR);
        if (n < 0)
                return tm_err_set(err, (int)n, "%s: byte offset %llu: read failed: %s", l->name,
                                  (unsigned long long)(l->next_off + (l->end - l->start)),
                                  strerror((int)-n));
        if (n == 0)
                l->eof = 1;
        l->end += (size_t)n;
        return 0;
}

/* The line being read starts at next_off: make it the current one, for a
 * message about it. */
static void lines_enter(struct heapin_lines *l)
{
        l->line++;
        l->off = l->next_off;
}

/* Pass over the rest of a line too long to hold (buf[start..end) is its
 * start), up to and including its newline. */
static int lines_skip(struct heapin_lines *l, struct tm_err *err)
{
        uint64_t skipped = l->end - l->start;
        for (;;) {
                l->start = l->end = l->scan = 0;
                int rc = lines_fill(l, l->cap - 1, err);
                if (rc < 0)
                        return rc;
                if (l->eof) {
                        lines_enter(l);
                        return heapin_lines_err(l, err, -EIO,
                                                "truncated: the input ends "
                                                "inside this line");
                }
                char *nl = memchr(l->buf, '\n', l->end);
                if (nl) {
                        l->start = l->scan = (size_t)(nl - l->buf) + 1;
                        lines_enter(l);
                        l->next_off += skipped + l->start;
                        return 0;
                }
                skipped += l->end;
        }
}

/* The next line for heapin_lines_each: 1 with *line and *len, 0 at the
 * end, or a negative errno. */
static int lines_next(struct heapin_lines *l, const char **line, size_t *len, struct tm_err *err)
{
        for (;;) {
                char *nl = memchr(l->buf + l->scan, '\n', l->end - l->scan);
                size_t have = (nl ? (size_t)(nl - l->buf) : l->end) - l->start;
                if (have > HEAPIN_LINE_MAX) {
                        if (l->skip && l->skip(l->buf[l->start])) {
                                if (nl) { /* all of it is here: just step over */
                                        lines_enter(l);
                                        l->start = l->scan = (size_t)(nl - l->buf) + 1;
                                        l->next_off += have + 1;
                                        continue;
                                }
                                int rc = lines_skip(l, err);
                                if (rc < 0)
                                        return rc;
                                continue;
                        }
                        lines_enter(l);
                        return heapin_lines_err(l, err, -EIO, "line longer than %d bytes",
                                                HEAPIN_LINE_MAX);
                }
                if (nl) {
                        *nl = '\0';
                        *line = l->buf + l->start;
                        *len = have;
                        lines_enter(l);
                        l->next_off += have + 1;
                        l->start = l->scan = (size_t)(nl - l->buf) + 1;
                        return 1;
                }
                l->scan = l->end;
                if (l->eof) {
                        if (l->start == l->end)
                                return 0;
                        lines_enter(l);
                        return heapin_lines_err(l, err, -EIO,
                                                "truncated: the input ends inside this line "
                                                "(no newline)");
                }
                if (l->start > 0) {
                        memmove(l->buf, l->buf + l->start, l->end - l->start);
                        l->end -= l->start;
                        l->scan -= l->start;
                        l->start = 0;
                }
                int rc = lines_fill(l, l->cap - 1 - l->end, err);
                if (rc < 0)
                        return rc;
        }
}

int heapin_lines_each(struct heapin_lines *l,
                      int (*fn)(void *st, const char *line, size_t len, struct tm_err *err),
                      void *st, struct tm_err *err)
{
        for (;;) {
                const char *line = NULL;
                size_t len = 0;
                int rc = lines_next(l, &line, &len, err);
                if (rc <= 0)
                        return rc;
                rc = fn(st, line, len, err);
                if (rc != 0)
                        return rc;
        }
}

int heapin_hex(const char *s, size_t n, uint64_t *v)
{
        return tm_hex_parse(s, n, 16, v);
}
