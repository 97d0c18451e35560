#include "feed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tm_feed_init(struct tm_feed *f, const struct tm_codec *codec, size_t cap)
{
        memset(f, 0, sizeof *f);
        f->codec = codec;
        f->buf = malloc(cap);
        if (!f->buf)
                return -ENOMEM;
        f->cap = cap;
        return 0;
}

void tm_feed_free(struct tm_feed *f)
{
        free(f->buf);
        f->buf = NULL;
}

void tm_feed_reset(struct tm_feed *f, uint64_t raw_off, const struct tm_dec_state *st)
{
        f->st = *st;
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

ssize_t tm_feed_decode(struct tm_feed *f, struct tm_ref *out, size_t cap, struct tm_err *err)
{
        return tm_feed_decode_sized(f, out, NULL, cap, err);
}

ssize_t tm_feed_decode_sized(struct tm_feed *f, struct tm_ref *out, uint32_t *sizes, size_t cap,
                             struct tm_err *err)
{
        for (;;) {
                size_t used = 0;
                const uint8_t *in = f->buf + f->pos;
                size_t len = f->len - f->pos;
                ssize_t n = sizes ? f->codec->decode_sized(&f->st, in, len, f->eof, f->raw_off,
                                                           &used, out, sizes, cap, err)
                                  : f->codec->decode(&f->st, in, len, f->eof, f->raw_off, &used,
                                                     out, cap, err);
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
