#include "feed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tm_feed_init(struct tm_feed *f, const struct tm_rcodec *codec, void *ctx)
{
        memset(f, 0, sizeof *f);
        f->codec = codec;
        f->ctx = ctx;
        f->buf = malloc(TM_FEED_CAP);
        if (!f->buf)
                return -ENOMEM;
        f->cap = TM_FEED_CAP;
        f->text = codec->text_of ? codec->text_of() : NULL;
        f->bin = codec->binary_of ? codec->binary_of() : NULL;
        return 0;
}

void tm_feed_free(struct tm_feed *f)
{
        free(f->buf);
        f->buf = NULL;
}

void tm_feed_reset(struct tm_feed *f, uint64_t raw_off, const void *st)
{
        memcpy(f->st.b, st, f->codec->state_size);
        f->pos = f->len = 0;
        f->raw_off = raw_off;
        f->eof = 0;
}

uint8_t *tm_feed_space(struct tm_feed *f, size_t *room)
{
        if (f->pos) {
                memmove(f->buf, f->buf + f->pos, f->len - f->pos);
                f->len -= f->pos;
                f->pos = 0;
        }
        *room = f->cap - f->len;
        return f->buf + f->len;
}

/* One decode call through dec (decode(), or decode_batch() into b):
 * returns what it returns. */
static ssize_t feed_call(struct tm_feed *f, struct tm_rec *out, struct tm_rbatch *b, size_t cap,
                         size_t *used, struct tm_err *err)
{
        const uint8_t *in = f->buf + f->pos;
        size_t len = f->len - f->pos;
        return b ? f->codec->decode_batch(f->ctx, &f->st, in, len, f->eof, f->raw_off, used, b, cap,
                                          err)
                 : f->codec->decode(f->ctx, &f->st, in, len, f->eof, f->raw_off, used, out, cap,
                                    err);
}

static ssize_t feed_decode(struct tm_feed *f, struct tm_rec *out, struct tm_rbatch *b, size_t cap,
                           struct tm_err *err)
{
        for (;;) {
                size_t used = 0;
                ssize_t n = feed_call(f, out, b, cap, &used, err);
                if (n < 0)
                        return n;
                if (used > f->len - f->pos)
                        return tm_err_set(err, -EIO, "raw offset %llu: decoder overran its input",
                                          (unsigned long long)f->raw_off);
                f->pos += used;
                f->raw_off += used;
                if (n > 0)
                        return n;
                if (used)
                        continue;
                if (!f->eof && f->pos == 0 && f->len == f->cap)
                        return tm_err_set(err, -EIO,
                                          "raw offset %llu: record longer than %zu bytes",
                                          (unsigned long long)f->raw_off, f->cap);
                return 0;
        }
}

ssize_t tm_feed_decode(struct tm_feed *f, struct tm_rec *out, size_t cap, struct tm_err *err)
{
        return feed_decode(f, out, NULL, cap, err);
}

ssize_t tm_feed_decode_batch(struct tm_feed *f, struct tm_rbatch *b, size_t cap, struct tm_err *err)
{
        b->n = 0;
        ssize_t n = feed_decode(f, NULL, b, cap, err);
        if (n <= 0)
                b->n = 0;
        return n;
}

size_t tm_feed_text(struct tm_feed *f, const struct tm_text_plan *p, char *dst, size_t cap,
                    size_t maxrec, long kind)
{
        size_t used = 0, nrec;
        size_t w = f->text(&f->st, f->buf + f->pos, f->len - f->pos, f->raw_off, &used, p, dst, cap,
                           maxrec, kind, &nrec);
        f->pos += used;
        f->raw_off += used;
        return w;
}

size_t tm_feed_binary(struct tm_feed *f, uint8_t *dst, size_t cap, size_t maxrec)
{
        size_t used = 0, nrec;
        size_t w = f->bin(&f->st, f->buf + f->pos, f->len - f->pos, f->raw_off, &used, dst, cap,
                          maxrec, &nrec);
        f->pos += used;
        f->raw_off += used;
        return w;
}
