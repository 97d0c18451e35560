/* PTF's binary form (ptf.h; docs/formats/ptf.md, "The binary form").
 *
 *   "PTF 1.0\n"                      the version line
 *   note lines                       any bytes but '\n', none exactly "$"
 *   "$\n"                            ends the header
 *   records: type byte (the kind's tag, 0..14), then the kind's fields
 *   in schema order: numbers LEB128 (Offset zigzag first), text a LEB128
 *   length and the bytes, a list a LEB128 count and 8-byte little-endian
 *   values (record.h's list layout, so var[] points into the input).
 *
 * Decoder state: the records decoded (8 bytes). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptf.h"
#include "ptf_stats.h"

#define HEAD_MAX 65536 /* bytes of header open() sees: version, notes, "$" */
#define VAR_MAX 65535  /* bytes of one text, values of one list x 8 */
#define PB_FIELDS 8    /* fields of a PTF kind, at most (fo's) */

static const char version_line[] = "PTF 1.0\n";

struct pb_state {
        uint64_t records;
};

struct pb_ctx {
        size_t n; /* note bytes */
        uint8_t p[];
};

static int pb_probe_takes(const uint8_t *head, size_t n)
{
        size_t k = sizeof version_line - 1;
        return n >= k ? memcmp(head, version_line, k) == 0
                      : memcmp(head, version_line, n) == 0 && n;
}

static int pb_probe(const uint8_t *head, size_t n)
{
        return pb_probe_takes(head, n) ? TM_BID_PTF_BIN : 0;
}

static int pb_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                   struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)path;
        size_t k = sizeof version_line - 1;
        if (n < k || memcmp(head, version_line, k) != 0)
                return tm_err_set(err, -EIO, "raw offset 0: ptf binary: no version line 'PTF 1.0'");
        size_t pos = k;
        for (;;) {
                const uint8_t *nl = memchr(head + pos, '\n', n - pos);
                if (!nl)
                        return tm_err_set(err, -EIO,
                                          "raw offset %zu: ptf binary: the header has no '$' line "
                                          "within %d bytes",
                                          n, HEAD_MAX);
                size_t ll = (size_t)(nl - (head + pos));
                if (ll == 1 && head[pos] == '$')
                        break;
                pos += ll + 1;
        }
        struct pb_ctx *c = malloc(sizeof *c + (pos - k));
        if (!c)
                return tm_err_set(err, -ENOMEM, "ptf binary: out of memory");
        c->n = pos - k;
        memcpy(c->p, head + k, c->n);
        *ctx = c;
        *schema = tm_schema_ptf;
        memset(st->b, 0, sizeof(struct pb_state));
        return (int)(pos + 2);
}

static void pb_close(void *ctx)
{
        free(ctx);
}

/* The notes (the header lines between the version and "$") as
 * sections/notes. */
static unsigned pb_blobs(void *ctx, struct tm_blob *out, unsigned cap)
{
        struct pb_ctx *c = ctx;
        if (!cap || !c || !c->n)
                return 0;
        memset(out, 0, sizeof *out);
        strcpy(out->name, "notes");
        out->p = c->p;
        out->n = c->n;
        return 1;
}

/* A LEB128 number at in[*pos..len): 1, 0 when cut by len, -1 when longer
 * than 64 bits. */
static int get_uleb(const uint8_t *in, size_t len, size_t *pos, uint64_t *v)
{
        uint64_t x = 0;
        for (unsigned i = 0; i < 10; i++) {
                if (*pos + i >= len)
                        return 0;
                uint8_t b = in[*pos + i];
                if (i == 9 && b > 1)
                        return -1;
                x |= (uint64_t)(b & 0x7f) << (7 * i);
                if (!(b & 0x80)) {
                        *pos += i + 1;
                        *v = x;
                        return 1;
                }
        }
        return -1;
}

static int pb_fail(struct tm_err *err, uint64_t off, uint64_t rec, const char *what)
{
        return tm_err_set(err, -EIO, "raw offset %llu: ptf binary record %llu: %s",
                          (unsigned long long)off, (unsigned long long)rec, what);
}

/* One record at in[0..len) into *r: its length, 0 when cut, or a message. */
static size_t pb_record(const uint8_t *in, size_t len, struct tm_rec *r, const char **bad)
{
        *bad = NULL;
        if (len == 0)
                return 0;
        if (in[0] >= TM_PK_N) {
                *bad = "unknown type byte";
                return 0;
        }
        /* the kind; the values past the kind's fields (up to PB_FIELDS,
         * the most a PTF kind has) and the pointers cleared one by one: a
         * memset of the whole record (168 bytes, rep stos) was half of
         * this decoder's time */
        r->kind = in[0];
        r->section = 0;
        for (unsigned i = 0; i < PB_FIELDS; i++)
                r->v[i] = 0;
        for (unsigned i = 0; i < TM_REC_VAR_MAX; i++)
                r->var[i] = NULL;
        const struct tm_kind *k = &tm_schema_ptf.kind[r->kind];
        size_t pos = 1;
        unsigned slot = 0;
        for (unsigned p = 0; p < k->nfields; p++) {
                const struct tm_field *f = &tm_schema_ptf.field[k->field[p]];
                uint64_t v;
                int rc = get_uleb(in, len, &pos, &v);
                if (rc <= 0) {
                        *bad = rc < 0 ? "a number longer than 64 bits" : NULL;
                        return 0;
                }
                if (f->type == TM_FT_INT)
                        v = (v >> 1) ^ ((uint64_t)0 - (v & 1)); /* zigzag */
                r->v[p] = v;
                if (!tm_field_is_var(f))
                        continue;
                uint64_t bytes = f->type == TM_FT_LIST ? v * 8 : v;
                if (v > VAR_MAX || bytes > VAR_MAX) {
                        *bad = "a text or list longer than 65535 bytes";
                        return 0;
                }
                if (bytes > len - pos)
                        return 0;
                r->var[slot++] = in + pos;
                pos += (size_t)bytes;
        }
        return pos;
}

static ssize_t pb_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                         struct tm_err *err)
{
        (void)ctx;
        struct pb_state *s = (struct pb_state *)st->b;
        size_t pos = 0, n = 0;
        while (n < cap && pos < len) {
                const char *bad;
                size_t l = pb_record(in + pos, len - pos, &out[n], &bad);
                if (bad && n > 0)
                        break; /* the records before it first; the next call fails */
                if (bad)
                        return pb_fail(err, raw_off + pos, s->records, bad);
                if (l == 0) {
                        if (eof && n > 0)
                                break;
                        if (eof)
                                return pb_fail(err, raw_off + pos, s->records,
                                               "truncated: the input ends inside this record");
                        break;
                }
                pos += l;
                n++;
                s->records++;
        }
        *used = pos;
        return (ssize_t)n;
}

/* ---- the encoder ---- */

struct tm_renc {
        tm_rsink sink;
        void *arg;
        size_t len;
        uint8_t buf[1 << 16];
};

static void put_uleb(uint8_t *b, size_t *pos, uint64_t v)
{
        while (v >= 0x80) {
                b[(*pos)++] = (uint8_t)(v | 0x80);
                v >>= 7;
        }
        b[(*pos)++] = (uint8_t)v;
}

static int pb_flush(struct tm_renc *e)
{
        int rc = e->len ? e->sink(e->arg, e->buf, e->len) : 0;
        e->len = 0;
        return rc;
}

static int pb_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                       struct tm_err *err)
{
        if (enc)
                return tm_err_set(err, -EINVAL, "ptf binary: no encoding named %s", enc);
        struct tm_renc *e = malloc(sizeof *e);
        if (!e)
                return tm_err_set(err, -ENOMEM, "ptf binary: out of memory");
        e->sink = sink;
        e->arg = arg;
        e->len = 0;
        memcpy(e->buf, "PTF 1.0\n$\n", 10);
        e->len = 10;
        *out = e;
        return 0;
}

/* Records at most 1 + 16 x 10 + 4 x 65535 bytes: the buffer is flushed
 * before one that may not fit. */
static int pb_put_one(struct tm_renc *e, const struct tm_rec *r, uint64_t idx, struct tm_err *err)
{
        if (r->kind >= TM_PK_N)
                return tm_err_set(err, -EINVAL, "record %llu: no kind %u in the ptf schema",
                                  (unsigned long long)idx, r->kind);
        const struct tm_kind *k = &tm_schema_ptf.kind[r->kind];
        size_t need = 1 + 10 * (size_t)k->nfields;
        for (unsigned p = 0, slot = 0; p < k->nfields; p++) {
                const struct tm_field *f = &tm_schema_ptf.field[k->field[p]];
                if (!tm_field_is_var(f))
                        continue;
                uint64_t bytes = f->type == TM_FT_LIST ? r->v[p] * 8 : r->v[p];
                if (r->v[p] > VAR_MAX || bytes > VAR_MAX)
                        return tm_err_set(err, -EINVAL, "record %llu: %s longer than 65535 bytes",
                                          (unsigned long long)idx, f->name);
                need += (size_t)bytes;
                slot++;
        }
        if (e->len + need > sizeof e->buf) {
                int rc = pb_flush(e);
                if (rc < 0)
                        return tm_err_set(err, rc, "ptf binary: writing failed");
        }
        uint8_t *b = e->buf;
        b[e->len++] = (uint8_t)k->tag;
        for (unsigned p = 0, slot = 0; p < k->nfields; p++) {
                const struct tm_field *f = &tm_schema_ptf.field[k->field[p]];
                uint64_t v = r->v[p];
                if (f->type == TM_FT_INT)
                        v = (v << 1) ^ ((uint64_t)0 - (v >> 63));
                put_uleb(b, &e->len, v);
                if (!tm_field_is_var(f))
                        continue;
                size_t bytes = (size_t)(f->type == TM_FT_LIST ? r->v[p] * 8 : r->v[p]);
                if (bytes)
                        memcpy(b + e->len, r->var[slot], bytes);
                e->len += bytes;
                slot++;
        }
        return 0;
}

static int pb_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                      struct tm_err *err)
{
        return tm_renc_each(pb_put_one, e, r, n, idx, err);
}

static void pb_enc_free(struct tm_renc *e)
{
        free(e);
}

static int pb_enc_finish(struct tm_renc *e, struct tm_err *err)
{
        int rc = pb_flush(e);
        free(e);
        return rc < 0 ? tm_err_set(err, rc, "ptf binary: writing failed") : 0;
}

const struct tm_rcodec tm_rcodec_ptf_bin = {
    .name = "ptf_bin",
    .suffix = ".ptfb",
    .family = &tm_family_object,
    .probe = pb_probe,
    .head_max = HEAD_MAX,
    .open = pb_open,
    .close = pb_close,
    .blobs = pb_blobs,
    .state_size = sizeof(struct pb_state),
    .decode = pb_decode,
    .enc_open = pb_enc_open,
    .enc_put = pb_enc_put,
    .enc_finish = pb_enc_finish,
    .enc_free = pb_enc_free,
    .enc_schema = tm_ptf_enc_schema, /* one unnamed encoding: no .encodings */
    .enc_fit = tm_ptf_enc_fit,
};
