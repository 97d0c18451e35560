/* pack_out: tracetool pack's output, the encoders of its row (pack_out.h). */
#include "pack_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Hand the buffered bytes (whole records) to the writer, then mark the
 * record boundary. */
static int cand_flush(struct pack_cand *c)
{
        if (!c->len)
                return 0;
        int rc = tm_cwriter_write(c->w, c->buf, c->len, &c->werr);
        c->len = 0;
        return rc < 0 ? rc : tm_cwriter_boundary(c->w, &c->werr);
}

static int cand_sink(void *arg, const void *buf, size_t n)
{
        struct pack_cand *c = arg;
        if (c->len + n > c->cap) {
                size_t cap = c->len + n > 2 * PACK_OUT_FLUSH ? c->len + n : 2 * PACK_OUT_FLUSH;
                uint8_t *b = realloc(c->buf, cap);
                if (!b)
                        return tm_err_set(&c->werr, -ENOMEM, "out of memory");
                c->buf = b;
                c->cap = cap;
        }
        memcpy(c->buf + c->len, buf, n);
        c->len += n;
        c->raw += n;
        return c->len >= PACK_OUT_FLUSH ? cand_flush(c) : 0;
}

/* The encoder's error, or the writer's when that is what stopped it. */
static int cand_err(struct pack_cand *c, int rc, struct tm_err *err)
{
        if (c->werr.code)
                *err = c->werr;
        return rc;
}

static int cand_open(struct pack_out *o, struct pack_cand *c, const char *out,
                     enum tm_cont_kind kind, const struct tm_cwriter_opts *wo, struct tm_err *err)
{
        c->fd = STDOUT_FILENO;
        if (out) {
                const char *enc = o->n > 1 ? c->enc : NULL;
                size_t len = strlen(out) + (enc ? strlen(enc) + 1 : 0) + 5;
                if (!(c->tmp = malloc(len)))
                        return tm_err_set(err, -ENOMEM, "out of memory");
                snprintf(c->tmp, len, "%s%s%s.tmp", out, enc ? "." : "", enc ? enc : "");
                c->fd = open(c->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (c->fd < 0)
                        return tm_err_set(err, -errno, "%s: %s", c->tmp, strerror(errno));
        }
        int rc = tm_cwriter_open(c->fd, out ? c->tmp : "<stdout>", kind, wo, &c->w, err);
        if (rc == 0)
                rc = o->row->enc_open_src ? o->row->enc_open_src(o->src, c->enc, cand_sink, c, &c->e, err)
                                          : o->row->enc_open(c->enc, cand_sink, c, &c->e, err);
        return rc < 0 ? cand_err(c, rc, err) : 0;
}

int pack_out_open(struct pack_out *o, const struct tm_rcodec *row, const char *out,
                  enum tm_cont_kind kind, const struct tm_cwriter_opts *wo, const char *const *enc,
                  unsigned n, const struct tm_renc_src *src, struct tm_err *err)
{
        memset(o, 0, sizeof *o);
        o->row = row;
        o->src = src;
        for (unsigned i = 0; i < PACK_OUT_CANDS; i++)
                o->c[i].fd = -1;
        if (n > PACK_OUT_CANDS || (!out && n != 1))
                return tm_err_set(err, -EINVAL, "%s: %u encodings at once", row->name, n);
        o->n = n;
        for (unsigned i = 0; i < n; i++)
                o->c[i].enc = enc[i];
        for (unsigned i = 0; i < n; i++) {
                int rc = cand_open(o, &o->c[i], out, kind, wo, err);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

int pack_out_put(struct pack_out *o, const struct tm_rec *r, size_t n, uint64_t idx,
                 struct tm_err *err)
{
        for (unsigned i = 0; i < o->n; i++) {
                int rc = o->row->enc_put(o->c[i].e, r, n, idx, err);
                if (rc < 0)
                        return cand_err(&o->c[i], rc, err);
        }
        return 0;
}

/* Finish c: its encoder, the rest of its bytes, its writer; its size. */
static int cand_finish(struct pack_out *o, struct pack_cand *c, struct tm_err *err)
{
        int rc = o->row->enc_finish(c->e, err);
        c->e = NULL;
        if (rc == 0)
                rc = cand_flush(c);
        if (rc < 0)
                rc = cand_err(c, rc, err);
        struct tm_err e = {0};
        int wc = tm_cwriter_close(c->w, &e);
        c->w = NULL;
        if (rc == 0 && wc < 0) {
                *err = e;
                rc = wc;
        }
        struct stat sb;
        if (rc == 0 && c->tmp && fstat(c->fd, &sb) < 0)
                rc = tm_err_set(err, -errno, "%s: %s", c->tmp, strerror(errno));
        if (rc == 0 && c->tmp)
                c->size = sb.st_size;
        return rc;
}

int pack_out_finish(struct pack_out *o, const char *out, unsigned *best, struct tm_err *err)
{
        int b = -1, rc = 0;
        for (unsigned i = 0; i < o->n; i++) {
                struct tm_err e = {0};
                int k = cand_finish(o, &o->c[i], &e);
                if (k < 0) {
                        *err = e;
                        rc = k;
                } else if (b < 0 || o->c[i].size < o->c[(unsigned)b].size) {
                        b = (int)i;
                }
        }
        if (b < 0)
                return rc ? rc : tm_err_set(err, -EIO, "%s: nothing written", o->row->name);
        *best = (unsigned)b;
        struct pack_cand *c = &o->c[b];
        if (!out)
                return 0;
        int fd = c->fd; /* the one kept is synced before its rename, the others unlinked */
        c->fd = -1;
        int e = fsync(fd) < 0 ? errno : 0;
        if (close(fd) < 0 && !e)
                e = errno;
        if (e)
                return tm_err_set(err, -e, "%s: %s", c->tmp, strerror(e));
        if (rename(c->tmp, out) < 0)
                return tm_err_set(err, -errno, "rename %s: %s", out, strerror(errno));
        free(c->tmp);
        c->tmp = NULL;
        return 0;
}

void pack_out_free(struct pack_out *o)
{
        for (unsigned i = 0; i < o->n; i++) {
                struct pack_cand *c = &o->c[i];
                if (c->e)
                        o->row->enc_free(c->e);
                if (c->w) {
                        struct tm_err e;
                        tm_cwriter_close(c->w, &e);
                }
                if (c->fd >= 0 && c->tmp)
                        close(c->fd);
                if (c->tmp) {
                        unlink(c->tmp);
                        free(c->tmp);
                }
                free(c->buf);
        }
        o->n = 0;
}
