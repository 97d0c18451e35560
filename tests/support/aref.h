/* aref: the address rows (din, PDATS, PDATS II, lackey: record codec rows
 * of codecs/address/arec.h) at the level of references, for the tests, the
 * fuzzers and the benches. A decoder opens a row on a stream's head and
 * gives each call of the row's decode() as references (type = the kind =
 * v[0], address = v[1], size = v[2]); an encoder puts references through
 * the row's enc_put into a growing buffer and keeps the length of every
 * piece the row's sink is given. Header-only, test code. */
#ifndef TM_AREF_H
#define TM_AREF_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "codecs/address/arec.h"

/* References one aref_decode call gives at most (the row's own limit of a
 * call is higher). */
#define AREF_CAP 4096

struct aref_dec {
        const struct tm_rcodec *c;
        void *ctx;
        struct tm_schema schema;
        struct tm_rstate st; /* the row's state: its first c->state_size bytes */
};

/* Open row c on head[0..n) (the whole header unless the stream is
 * shorter): the header length, or a negative errno with err (d then holds
 * nothing to close). */
static inline int aref_open(struct aref_dec *d, const struct tm_rcodec *c, const uint8_t *head,
                            size_t n, struct tm_err *err)
{
        memset(d, 0, sizeof *d);
        d->c = c;
        int h = c->open(head, n, "test", &d->ctx, &d->schema, &d->st, err);
        if (h < 0)
                d->ctx = NULL;
        return h;
}

static inline void aref_close(struct aref_dec *d)
{
        if (d->ctx && d->c->close)
                d->c->close(d->ctx);
        d->ctx = NULL;
}

/* One call of the row's decode() (its contract: record.h), at most cap
 * references (and AREF_CAP) into out, their sizes into sizes when not
 * NULL (0 for a row without sizes). A record whose kind is not its type
 * field is -EPROTO: the rows' records are references. */
static inline ssize_t aref_decode_sized(struct aref_dec *d, const uint8_t *in, size_t len, int eof,
                                        uint64_t raw_off, size_t *used, struct tm_ref *out,
                                        uint32_t *sizes, size_t cap, struct tm_err *err)
{
        static _Thread_local struct tm_rec recs[AREF_CAP];
        if (cap > AREF_CAP)
                cap = AREF_CAP;
        *used = 0;
        ssize_t n = d->c->decode(d->ctx, &d->st, in, len, eof, raw_off, used, recs, cap, err);
        for (ssize_t i = 0; i < n; i++) {
                if (recs[i].v[0] != recs[i].kind)
                        return tm_err_set(err, -EPROTO, "record %zd: type %llu, kind %u", i,
                                          (unsigned long long)recs[i].v[0], recs[i].kind);
                out[i].type = recs[i].kind;
                out[i].addr = recs[i].v[1];
                if (sizes)
                        sizes[i] = d->schema.nfields > 2 ? (uint32_t)recs[i].v[2] : 0;
        }
        return n;
}

static inline ssize_t aref_decode(struct aref_dec *d, const uint8_t *in, size_t len, int eof,
                                  uint64_t raw_off, size_t *used, struct tm_ref *out, size_t cap,
                                  struct tm_err *err)
{
        return aref_decode_sized(d, in, len, eof, raw_off, used, out, NULL, cap, err);
}

/* Could decoding have reached d's state (the row's state_ok)? 1 or 0. */
static inline int aref_state_ok(const struct aref_dec *d)
{
        return !d->c->state_ok || d->c->state_ok(d->ctx, &d->st);
}

/* Does row c write access sizes (lackey)? Its encoder's schema has them. */
static inline int aref_sized(const struct tm_rcodec *c)
{
        struct tm_schema s;
        c->enc_schema(&s);
        return s.nfields > 2;
}

struct aref_enc {
        const struct tm_rcodec *c;
        struct tm_renc *e;
        uint8_t *buf; /* what the encoder wrote, len bytes (malloc'ed) */
        size_t len, cap;
        size_t last; /* bytes the last aref_put or aref_finish appended */
};

static inline int aref_sink(void *arg, const void *p, size_t n)
{
        struct aref_enc *w = arg;
        if (w->len + n > w->cap) {
                size_t cap = w->cap ? w->cap : 256;
                while (cap < w->len + n)
                        cap *= 2;
                uint8_t *b = realloc(w->buf, cap);
                if (!b)
                        return -ENOMEM;
                w->buf = b;
                w->cap = cap;
        }
        memcpy(w->buf + w->len, p, n);
        w->len += n;
        w->last += n;
        return 0;
}

/* The row encoding of o: "<addr_bits>/<unit>" (arec.h). */
static inline void aref_encoding(const struct tm_enc_opts *o, char *out, size_t cap)
{
        snprintf(out, cap, "%u/%u", o && o->addr_bits ? o->addr_bits : 64,
                 o && o->unit ? o->unit : 1);
}

/* Start an encoder of row c with o (NULL: the row's default); the header
 * is in w->buf. 0 or a negative errno with err (w then holds nothing). */
static inline int aref_enc_open(struct aref_enc *w, const struct tm_rcodec *c,
                                const struct tm_enc_opts *o, struct tm_err *err)
{
        char enc[32];
        memset(w, 0, sizeof *w);
        w->c = c;
        aref_encoding(o, enc, sizeof enc);
        int r = c->enc_open(o ? enc : NULL, aref_sink, w, &w->e, err);
        if (r < 0) {
                free(w->buf);
                memset(w, 0, sizeof *w);
        }
        return r;
}

/* Put reference ref (of size size, for a row with sizes) numbered idx:
 * the bytes appended (>= 0) or a negative errno (the row's). */
static inline int aref_put(struct aref_enc *w, const struct tm_ref *ref, uint32_t size,
                           uint64_t idx, struct tm_err *err)
{
        struct tm_rec r;
        memset(&r, 0, sizeof r);
        r.kind = ref->type;
        r.v[0] = ref->type;
        r.v[1] = ref->addr;
        r.v[2] = size;
        w->last = 0;
        int k = w->c->enc_put(w->e, &r, 1, idx, err);
        return k < 0 ? k : (int)w->last;
}

/* Flush and end the encoder: the bytes appended, or a negative errno. */
static inline int aref_finish(struct aref_enc *w, struct tm_err *err)
{
        w->last = 0;
        int k = w->c->enc_finish(w->e, err);
        w->e = NULL;
        return k < 0 ? k : (int)w->last;
}

/* Free what w holds (an encoder left open after an error, the buffer). */
static inline void aref_enc_free(struct aref_enc *w)
{
        if (w->e)
                w->c->enc_free(w->e);
        free(w->buf);
        memset(w, 0, sizeof *w);
}

/* refs[0..n) (sizes[i] each when sizes is not NULL) encoded by row c with
 * o into a new buffer (*out, *len; the caller frees), header included. 0
 * or a negative errno with err. */
static inline int aref_encode_all(const struct tm_rcodec *c, const struct tm_enc_opts *o,
                                  const struct tm_ref *refs, const uint32_t *sizes, size_t n,
                                  uint8_t **out, size_t *len, struct tm_err *err)
{
        struct aref_enc w;
        int r = aref_enc_open(&w, c, o, err);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = aref_put(&w, &refs[i], sizes ? sizes[i] : 0, i, err);
        if (r >= 0)
                r = aref_finish(&w, err);
        if (r < 0) {
                aref_enc_free(&w);
                return r;
        }
        *out = w.buf;
        *len = w.len;
        return 0;
}

/* The reference types row c's traces have: the kinds of its schema, as
 * its encoder's header of an empty stream opens; 0 when that fails. */
static inline unsigned aref_types(const struct tm_rcodec *c)
{
        uint8_t *raw = NULL;
        size_t len = 0;
        struct aref_dec d;
        if (aref_encode_all(c, NULL, NULL, NULL, 0, &raw, &len, NULL) < 0)
                return 0;
        unsigned k = aref_open(&d, c, raw, len, NULL) < 0 ? 0 : d.schema.nkinds;
        aref_close(&d);
        free(raw);
        return k;
}

#endif
