/* plain: the archive is the raw stream. Readers pread at their offset. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cont_impl.h"

#define PLAIN_WBUF (256u << 10)

static int plain_probe(const uint8_t *head, size_t n)
{
        (void)head;
        (void)n;
        return 1;
}

static int plain_open(struct tm_cont *c, struct tm_err *err)
{
        (void)err;
        c->raw_known = 1;
        c->raw_size = c->asize;
        return 0;
}

static int plain_scan(struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
                      tm_cont_sink sink, void *arg, struct tm_err *err)
{
        (void)pts;
        *raw_size = c->asize;
        if (!sink)
                return 0;
        struct tm_cin in;
        if (tm_cin_init(&in, c) < 0)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        ssize_t k;
        int ret = 0;
        while ((k = tm_cin_fill(c, &in, err)) > 0) {
                c->scan_good += (uint64_t)k; /* nothing to check: all of it counts */
                ret = sink(arg, in.buf + in.pos, (size_t)k);
                in.pos = in.len;
                if (ret)
                        break;
        }
        tm_cin_free(&in);
        return k < 0 ? (int)k : ret;
}

static int plain_r_open(struct tm_creader *r, struct tm_err *err)
{
        (void)r;
        (void)err;
        return 0;
}

static void plain_r_close(struct tm_creader *r)
{
        (void)r;
}

static int plain_r_seek(struct tm_creader *r, uint64_t raw_off, struct tm_err *err)
{
        (void)r;
        (void)raw_off;
        (void)err;
        return 0;
}

static ssize_t plain_r_read(struct tm_creader *r, void *buf, size_t n, struct tm_err *err)
{
        const struct tm_cont *c = r->c;
        if (r->pos >= c->asize)
                return 0;
        if (n > c->asize - r->pos)
                n = (size_t)(c->asize - r->pos);
        int ret = tm_cont_pread(c, buf, n, r->pos, err);
        return ret < 0 ? ret : (ssize_t)n;
}

/* ---- writer: a buffer in front of write(2) ---- */

struct plain_w {
        size_t len;
        uint8_t buf[PLAIN_WBUF];
};

static int plain_w_open(struct tm_cwriter *w, struct tm_err *err)
{
        w->impl = malloc(sizeof(struct plain_w));
        if (!w->impl)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", w->path);
        ((struct plain_w *)w->impl)->len = 0;
        return 0;
}

static int plain_w_write(struct tm_cwriter *w, const uint8_t *buf, size_t n, struct tm_err *err)
{
        struct plain_w *p = w->impl;
        if (p->len + n > PLAIN_WBUF) {
                int ret = tm_cwriter_out(w, p->buf, p->len, err);
                p->len = 0;
                if (ret < 0)
                        return ret;
        }
        if (n >= PLAIN_WBUF)
                return tm_cwriter_out(w, buf, n, err);
        memcpy(p->buf + p->len, buf, n);
        p->len += n;
        return 0;
}

static int plain_w_finish(struct tm_cwriter *w, struct tm_err *err)
{
        struct plain_w *p = w->impl;
        return tm_cwriter_out(w, p->buf, p->len, err);
}

static void plain_w_free(struct tm_cwriter *w)
{
        free(w->impl);
}

const struct tm_cont_ops tm_cont_plain_ops = {
    .name = "plain",
    .kind = TM_CONT_PLAIN,
    .probe = plain_probe,
    .open = plain_open,
    .scan = plain_scan,
    .r_open = plain_r_open,
    .r_close = plain_r_close,
    .r_seek = plain_r_seek,
    .r_read = plain_r_read,
    .w_open = plain_w_open,
    .w_write = plain_w_write,
    .w_finish = plain_w_finish,
    .w_free = plain_w_free,
};
