/* The containers' reads and writes of the archive file (cont_impl.h):
 * pread with the check that the archive did not change, the buffered
 * input, the writers' output. A module of its own below container.c and
 * the container modules, which all use it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/tm_io.h"
#include "cont_impl.h"

int tm_cont_eio(const struct tm_cont *c, uint64_t off, struct tm_err *err, const char *fmt, ...)
{
        char what[TM_ERR_MSG];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        return tm_err_set(err, -EIO, "%s: archive offset %llu: %s", c->path,
                          (unsigned long long)off, what);
}

void tm_cont_id_of(const struct stat *st, struct tm_cont_id *id)
{
        *id = (struct tm_cont_id){
            .dev = (uint64_t)st->st_dev,
            .ino = (uint64_t)st->st_ino,
            .size = (uint64_t)st->st_size,
            .mtime_s = (int64_t)st->st_mtim.tv_sec,
            .mtime_ns = (int64_t)st->st_mtim.tv_nsec,
            .ctime_s = (int64_t)st->st_ctim.tv_sec,
            .ctime_ns = (int64_t)st->st_ctim.tv_nsec,
        };
}

/* After a read at archive offset off: is the archive still the version
 * c was opened on? 0, or -EIO naming what changed. */
static int cont_same(const struct tm_cont *c, uint64_t off, struct tm_err *err)
{
        struct stat st;
        struct tm_cont_id now;
        if (fstat(c->fd, &st) < 0)
                return tm_err_set(err, -errno, "%s: archive offset %llu: stat: %s", c->path,
                                  (unsigned long long)off, strerror(errno));
        tm_cont_id_of(&st, &now);
        if (memcmp(&now, &c->id, sizeof now) == 0)
                return 0;
        return tm_cont_eio(c, off, err,
                           "the archive changed while it was read (%s; %llu bytes, were %llu): "
                           "reopen it",
                           now.size != c->id.size ? "its size"
                           : now.mtime_s != c->id.mtime_s || now.mtime_ns != c->id.mtime_ns
                               ? "its modification time"
                           : now.ino != c->id.ino || now.dev != c->id.dev ? "its inode"
                                                                          : "its change time",
                           (unsigned long long)now.size, (unsigned long long)c->id.size);
}

int tm_cont_pread(const struct tm_cont *c, void *buf, size_t n, uint64_t off, struct tm_err *err)
{
        ssize_t k = tm_pread_full(c->fd, buf, n, off);
        if (k < 0)
                return tm_err_set(err, (int)k, "%s: archive offset %llu: read: %s", c->path,
                                  (unsigned long long)off, strerror((int)-k));
        int ret = cont_same(c, off, err);
        if (ret < 0)
                return ret;
        if ((size_t)k < n)
                return tm_cont_eio(c, off + (uint64_t)k, err, "unexpected end of archive");
        return 0;
}

int tm_cin_init(struct tm_cin *in, const struct tm_cont *c)
{
        size_t cap = TM_CONT_INBUF;
        if (c->asize < cap)
                cap = c->asize ? (size_t)c->asize : 1;
        memset(in, 0, sizeof *in);
        in->buf = malloc(cap);
        if (!in->buf)
                return -ENOMEM;
        in->cap = cap;
        return 0;
}

void tm_cin_free(struct tm_cin *in)
{
        free(in->buf);
        in->buf = NULL;
}

void tm_cin_seek(struct tm_cin *in, uint64_t off)
{
        if (off >= in->off && off <= in->off + in->len) {
                in->pos = (size_t)(off - in->off);
                return;
        }
        in->off = off;
        in->pos = in->len = 0;
}

ssize_t tm_cin_fill(const struct tm_cont *c, struct tm_cin *in, struct tm_err *err)
{
        if (in->pos < in->len)
                return (ssize_t)(in->len - in->pos);
        in->off += in->len;
        in->pos = in->len = 0;
        if (in->off >= c->asize)
                return 0;
        uint64_t left = c->asize - in->off;
        size_t want = left < in->cap ? (size_t)left : in->cap;
        ssize_t k = tm_pread_full(c->fd, in->buf, want, in->off);
        if (k < 0)
                return tm_err_set(err, (int)k, "%s: archive offset %llu: read: %s", c->path,
                                  (unsigned long long)in->off, strerror((int)-k));
        int ret = cont_same(c, in->off, err);
        if (ret < 0)
                return ret;
        if ((size_t)k < want)
                return tm_cont_eio(c, in->off + (uint64_t)k, err,
                                   "archive shrank while reading (was %llu bytes)",
                                   (unsigned long long)c->asize);
        in->len = (size_t)k;
        return k;
}

int tm_cwriter_out(struct tm_cwriter *w, const void *buf, size_t n, struct tm_err *err)
{
        const uint8_t *p = buf;
        while (n > 0) {
                ssize_t k = write(w->fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return tm_err_set(err, -errno, "%s: write at offset %llu: %s", w->path,
                                          (unsigned long long)w->out_off, strerror(errno));
                p += k;
                n -= (size_t)k;
                w->out_off += (uint64_t)k;
        }
        return 0;
}
