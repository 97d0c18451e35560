/* Meta-TF records: the universal decoder a compiled DTD drives.
 *
 * A record is read into locals first (its fields' previous values, list
 * values in the per-thread scratch) and committed to the state only once
 * it is whole, so a record cut by the end of the input leaves the state as
 * it was and is read again with more input.
 *
 * Streamed data sections (metatf.h): a chunk is read whole, in one go,
 * and goes into the state at once; records read its items in the input,
 * where it still is because *used never passes a chunk records may still
 * read (mtf_state.resume says where the records go on). */
#include "metatf_impl.h"

#include "../common/tm_tls.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Lists of one decode call: every record's lists must fit, and one
 * record's always does (TM_REC_VAR_MAX lists of MTF_LIST_MAX values). */
#define SCRATCH_BYTES (2 * TM_REC_VAR_MAX * MTF_LIST_MAX * 8)
static struct tm_tls scratch_slot = TM_TLS_INIT(SCRATCH_BYTES); /* a thread's scratch */

enum { NEED_MORE = 1, SCRATCH_FULL = 2 };

/* One record being read: p[0] is at raw offset raw. */
struct rd {
        const struct mtf_ctx *x;
        const struct mtf_state *s;
        const uint8_t *p;
        size_t avail, off;
        uint64_t raw;
        size_t sused; /* scratch bytes of this call, this record's included */
        struct tm_err *err;
        /* the call's input (in0[0] at raw0), for chunk items */
        const uint8_t *in0;
        size_t len0;
        uint64_t raw0;
        uint64_t snext[MTF_STREAMS_MAX]; /* streams' cursors, committed with the record */
        mtf_chunk_cb cb;
        void *cbarg;
};

static uint64_t get_uint(const uint8_t *p, unsigned w, unsigned bo)
{
        uint64_t v = 0;
        for (unsigned i = 0; i < w; i++)
                v = v << 8 | p[bo == MTF_LE ? w - 1 - i : i];
        return v;
}

/* v, w bytes wide, sign-extended to 64 bits. */
static uint64_t sext(uint64_t v, unsigned w)
{
        if (w == 0 || w >= 8)
                return v;
        uint64_t sign = (uint64_t)1 << (8 * w - 1);
        return (v ^ sign) - sign;
}

static int field_err(const struct rd *r, uint64_t at, const struct mtf_kind *k,
                     const struct mtf_leaf *lf, const char *what, uint64_t a, uint64_t b)
{
        char msg[160];
        snprintf(msg, sizeof msg, what, (unsigned long long)a, (unsigned long long)b);
        return tm_err_set(r->err, -EIO, "raw offset %llu: field '%s' of '%s': %s",
                          (unsigned long long)at, lf->name, k->name, msg);
}

/* Item idx of streamed section slot i: in the current chunk, which lies
 * in the call's input (before the record). */
static int stream_item(const struct rd *r, uint64_t at, const struct mtf_kind *k,
                       const struct mtf_leaf *lf, int i, uint64_t idx, uint64_t *v)
{
        const struct mtf_stream *m = &r->s->stream[i];
        uint64_t items = m->at + MTF_CHUNK_HEADER(r->x->lay.tag_width);
        if (!m->active || idx < m->base || idx - m->base >= m->count)
                return field_err(r, at, k, lf, "item %llu of section %llu is in no chunk at hand",
                                 idx, r->x->stream_num[i]);
        /* no sum that can wrap: at comes from a checkpoint (count * width
         * is at most MTF_CHUNK_MAX there: mtf_state_ok) */
        if (items < m->at || items < r->raw0 || items - r->raw0 > r->len0 ||
            (idx - m->base + 1) * m->width > r->len0 - (items - r->raw0))
                return field_err(r, at, k, lf,
                                 "the chunk holding item %llu is not in the input (it starts at "
                                 "raw offset %llu: resume where the last call left)",
                                 idx, m->at);
        *v = get_uint(r->in0 + (items - r->raw0) + (idx - m->base) * m->width, m->width,
                      r->x->byteorder);
        return 0;
}

/* Item idx (width w) of data section number. */
static int item(const struct rd *r, uint64_t at, const struct mtf_kind *k,
                const struct mtf_leaf *lf, uint64_t number, uint64_t idx, unsigned w, uint64_t *v)
{
        int si = mtf_stream_find(r->x, number);
        if (si >= 0)
                return stream_item(r, at, k, lf, si, idx, v);
        const struct mtf_dsec *d = mtf_dsec_find(r->x, (uint32_t)number);
        if (!d || number > 255)
                return field_err(r, at, k, lf, "section %llu is not a data section%.0llu", number,
                                 0);
        if (w == 0 || idx >= d->size / w)
                return field_err(r, at, k, lf, "item %llu is past the end of section %llu", idx,
                                 number);
        *v = get_uint(r->x->data + d->off + idx * w, w, r->x->byteorder);
        return 0;
}

/* A number's settings and running values while a record is read: the
 * cell's (its argument may change: previous = record, sectionStride) and
 * the field's previous value, both in the reader's copies. */
struct num {
        unsigned w, in, sec;
        uint64_t b;
        uint64_t *a;    /* the cell's argument */
        uint64_t *prev; /* the field's previous value; NULL: previous = record */
};

/* Read one number of leaf lf with settings n into *v. */
static int read_num(struct rd *r, const struct mtf_kind *k, const struct mtf_leaf *lf,
                    const struct num *n, uint64_t *v)
{
        unsigned sw = mtf_interp_stores_nothing(n->in) ? 0 : n->w;
        if (r->avail - r->off < sw)
                return NEED_MORE;
        uint64_t at = r->raw + r->off;
        uint64_t raw = get_uint(r->p + r->off, sw, r->x->byteorder);
        /* delta and stride add to the field's previous value (Appendix B),
         * or to the cell's own for a previous = record leaf */
        uint64_t *prev = n->prev ? n->prev : n->a;
        r->off += sw;
        int ret = 0;
        switch (n->in) {
        case MTF_I_BASEOFFSET:
                *v = *n->a + sext(raw, sw);
                break;
        case MTF_I_DELTA:
                *v = *prev = *prev + sext(raw, sw);
                break;
        case MTF_I_DEFAULT:
                *v = *n->a;
                break;
        case MTF_I_STRIDE:
                *v = *prev = *prev + n->b;
                break;
        case MTF_I_SECTIONOFFSET:
                ret = item(r, at, k, lf, n->sec, raw, n->w, v);
                break;
        case MTF_I_SECTIONSTRIDE: {
                /* a streamed section has one cursor, every field's */
                int si = mtf_stream_find(r->x, n->sec);
                uint64_t *c = si >= 0 ? &r->snext[si] : n->a;
                ret = item(r, at, k, lf, n->sec, *c, n->w, v);
                *c += n->b;
                break;
        }
        default: /* none */
                *v = raw;
                break;
        }
        if (ret == 0 && lf->has_value && *v != lf->value)
                return field_err(r, at, k, lf, "%llu, the DTD says %llu", *v, lf->value);
        if (ret == 0 && n->prev)
                *n->prev = *v; /* whatever the interpretation */
        return ret;
}

/* Leaf i of kind k with the DTD's settings (section and metadata records). */
static int read_fixed(struct rd *r, const struct mtf_kind *k, unsigned i, uint64_t *v)
{
        const struct mtf_leaf *lf = &k->leaf[i];
        uint64_t a = lf->arg[0];
        struct num n = {lf->width, lf->interp, (unsigned)(lf->arg[0] & 0xff), lf->arg[1], &a, NULL};
        return read_num(r, k, lf, &n, v);
}

/* Leaf i of kind k as the state sets it, on the reader's copies: the
 * cells' arguments a[] (by leaf) and the fields' previous values prev[]
 * (by name slot). */
static struct num leaf_num(const struct mtf_ctx *x, const struct mtf_state *s, unsigned k,
                           unsigned i, uint64_t *a, uint64_t *prev)
{
        unsigned c = x->cell0[k] + i - 1, ns = x->name_of[k][i];
        return (struct num){s->width[c], s->interp[c], s->sec[c],
                            s->b[c],     &a[i],        ns == MTF_HIDDEN ? NULL : &prev[ns]};
}

/* The repeated group after count leaf i (n times), as lists. */
static int read_repeat(struct rd *r, const struct mtf_state *s, unsigned k, unsigned i, uint64_t n,
                       uint64_t *a, uint64_t *prev, struct tm_rec *rec)
{
        const struct mtf_ctx *x = r->x;
        const struct mtf_kind *mk = &x->lay.kind[k];
        unsigned g = mk->leaf[i].rep;
        if (n > MTF_LIST_MAX)
                return field_err(r, r->raw + r->off, mk, &mk->leaf[i],
                                 "repeats %llu times, over %llu", n, MTF_LIST_MAX);
        size_t need = (size_t)n * g * 8;
        if (need > SCRATCH_BYTES - r->sused)
                return SCRATCH_FULL;
        uint8_t *scratch = tm_tls_get(&scratch_slot);
        if (!scratch)
                return tm_err_set(r->err, -ENOMEM, "raw offset %llu: out of memory for lists",
                                  (unsigned long long)r->raw);
        uint8_t *base = scratch + r->sused;
        for (unsigned j = i + 1; j <= i + g; j++) {
                if (x->out_pos[k][j] != MTF_HIDDEN) {
                        rec->v[x->out_pos[k][j]] = n;
                        rec->var[x->var_slot[k][j]] = base + (size_t)(j - i - 1) * n * 8;
                }
        }
        for (uint64_t o = 0; o < n; o++) {
                for (unsigned j = i + 1; j <= i + g; j++) {
                        struct num nu = leaf_num(x, s, k, j, a, prev);
                        uint64_t v;
                        int ret = read_num(r, mk, &mk->leaf[j], &nu, &v);
                        if (ret)
                                return ret;
                        mtf_put(base + ((size_t)(j - i - 1) * n + o) * 8, v, 8, MTF_LE);
                }
        }
        r->sused += need;
        return 0;
}

/* A data record of kind k into rec. */
static int read_data(struct rd *r, struct mtf_state *s, unsigned k, struct tm_rec *rec)
{
        const struct mtf_ctx *x = r->x;
        const struct mtf_kind *mk = &x->lay.kind[k];
        unsigned c0 = x->cell0[k];
        /* copies of what the record changes, committed once it is whole:
         * its cells' arguments and its fields' previous values */
        uint64_t a[MTF_LEAVES_MAX], prev[MTF_NAMES_MAX], val[MTF_LEAVES_MAX] = {0};
        for (unsigned i = 1; i < mk->nleaves; i++) {
                a[i] = s->a[c0 + i - 1];
                if (x->name_of[k][i] != MTF_HIDDEN)
                        prev[x->name_of[k][i]] = s->prev[x->name_of[k][i]];
        }
        memset(rec, 0, sizeof *rec);
        rec->kind = (uint32_t)x->schema_kind[k];
        rec->section = s->section; /* record.h: 0 none, i + 1 section[i] */
        for (unsigned i = 1; i < mk->nleaves; i++) {
                const struct mtf_leaf *lf = &mk->leaf[i];
                unsigned pos = x->out_pos[k][i];
                int ret;
                if (mtf_leaf_is_bytes(lf)) {
                        uint64_t n = lf->width_of >= 0 ? val[lf->width_of] : lf->width;
                        if (n > MTF_VAR_MAX)
                                return field_err(r, r->raw + r->off, mk, lf,
                                                 "%llu bytes, over %llu", n, MTF_VAR_MAX);
                        if (r->avail - r->off < n)
                                return NEED_MORE;
                        rec->v[pos] = n;
                        rec->var[x->var_slot[k][i]] = r->p + r->off;
                        r->off += (size_t)n;
                        continue;
                }
                struct num nu = leaf_num(x, s, k, i, a, prev);
                if ((ret = read_num(r, mk, lf, &nu, &val[i])))
                        return ret;
                if (pos != MTF_HIDDEN)
                        rec->v[pos] = val[i];
                if (lf->rep) {
                        if ((ret = read_repeat(r, s, k, i, val[i], a, prev, rec)))
                                return ret;
                        i += lf->rep;
                }
        }
        for (unsigned i = 1; i < mk->nleaves; i++) {
                s->a[c0 + i - 1] = a[i];
                if (x->name_of[k][i] != MTF_HIDDEN)
                        s->prev[x->name_of[k][i]] = prev[x->name_of[k][i]];
        }
        for (unsigned i = 0; i < x->nstream; i++) {
                struct mtf_stream *m = &s->stream[i];
                m->next = r->snext[i];
                if (m->active && m->next - m->base >= m->count)
                        m->active = 0; /* its last item is read: *used may pass it */
        }
        return 0;
}

/* The rest of a chunk of streamed section slot i after its section
 * record (whose number ended at r->off): width, count, items. */
static int read_chunk(struct rd *r, struct mtf_state *s, int i)
{
        const struct mtf_ctx *x = r->x;
        size_t h = MTF_CHUNK_HEADER(x->lay.tag_width);
        if (r->avail < h)
                return NEED_MORE;
        unsigned w = r->p[r->off];
        uint64_t count = get_uint(r->p + r->off + 1, 4, x->byteorder);
        if (w < 1 || w > 8)
                return tm_err_set(r->err, -EIO,
                                  "raw offset %llu: chunk of section %u: item width %u (1..8)",
                                  (unsigned long long)(r->raw + r->off), x->stream_num[i], w);
        if (count * w > MTF_CHUNK_MAX)
                return tm_err_set(r->err, -EIO,
                                  "raw offset %llu: chunk of section %u: %llu items of %u bytes, "
                                  "over %u bytes",
                                  (unsigned long long)(r->raw + r->off + 1), x->stream_num[i],
                                  (unsigned long long)count, w, MTF_CHUNK_MAX);
        if (r->avail - h < count * w)
                return NEED_MORE;
        struct mtf_stream *m = &s->stream[i];
        m->base += m->count; /* the section is its chunks end to end */
        m->at = r->raw;
        m->count = (uint32_t)count;
        m->width = (uint8_t)w;
        m->active = count > 0;
        r->off = h + (size_t)(count * w);
        if (r->cb) {
                struct mtf_chunk c = {.number = x->stream_num[i],
                                      .width = (uint8_t)w,
                                      .byteorder = x->byteorder,
                                      .count = (uint32_t)count,
                                      .first = m->base,
                                      .raw = r->raw,
                                      .items = r->p + h};
                int ret = r->cb(r->cbarg, &c);
                if (ret < 0)
                        return tm_err_set(r->err, ret, "raw offset %llu: chunk of section %u: %s",
                                          (unsigned long long)r->raw, c.number, strerror(-ret));
        }
        return 0;
}

static int read_section(struct rd *r, struct mtf_state *s, const struct mtf_kind *k)
{
        uint64_t number;
        int ret = read_fixed(r, k, 1, &number);
        if (ret)
                return ret;
        for (unsigned i = 0; i < r->x->lay.nsections; i++) {
                if (r->x->lay.section[i].number == number) {
                        s->section = (uint16_t)(i + 1);
                        return 0;
                }
        }
        int si = mtf_stream_find(r->x, number);
        if (si >= 0)
                return read_chunk(r, s, si);
        return tm_err_set(r->err, -EIO, "raw offset %llu: section %llu is not in the DTD",
                          (unsigned long long)r->raw, (unsigned long long)number);
}

/* Apply a metadata record: property prop of field f of the kind tagged
 * tag, with values v[0], v[1] (vw bytes wide). */
static int apply_metadata(struct rd *r, struct mtf_state *s, uint64_t tag, uint64_t f,
                          uint64_t prop, const uint64_t *v, unsigned vw)
{
        const struct mtf_ctx *x = r->x;
        unsigned long long at = (unsigned long long)r->raw;
        int k = tag > UINT32_MAX ? -1 : mtf_kind_by_tag(x, s->section, (uint32_t)tag);
        if (k < 0 || x->lay.kind[k].role != MTF_R_DATA)
                return tm_err_set(r->err, -EIO,
                                  "raw offset %llu: metadata for tag %llu, not a data record here",
                                  at, (unsigned long long)tag);
        const struct mtf_kind *mk = &x->lay.kind[k];
        if (f < 1 || f >= mk->nleaves)
                return tm_err_set(r->err, -EIO,
                                  "raw offset %llu: metadata for field %llu of '%s' (1..%u)", at,
                                  (unsigned long long)f, mk->name, mk->nleaves - 1u);
        const struct mtf_leaf *lf = &mk->leaf[f];
        unsigned c = x->cell0[k] + (unsigned)f - 1;
        unsigned in = prop == MTF_PROP_WIDTH_CODE ? s->interp[c] : (unsigned)prop;
        unsigned w = prop == MTF_PROP_WIDTH_CODE ? (unsigned)(v[0] > 8 ? 9 : v[0]) : s->width[c];
        int sec = in == MTF_I_SECTIONOFFSET || in == MTF_I_SECTIONSTRIDE;
        uint64_t number = prop == MTF_PROP_WIDTH_CODE ? s->sec[c] : v[0];
        int streamed = sec && mtf_stream_find(x, number) >= 0;
        if (mtf_leaf_is_bytes(lf))
                return tm_err_set(r->err, -EIO,
                                  "raw offset %llu: metadata for '%s' of '%s', which is bytes", at,
                                  lf->name, mk->name);
        /* a streamed section's chunks say how wide its items are, so
         * sectionStride over one needs no width */
        if (w > 8 || (sec && w == 0 && !(streamed && in == MTF_I_SECTIONSTRIDE)))
                return tm_err_set(r->err, -EIO,
                                  "raw offset %llu: metadata gives '%s' of '%s' width %llu "
                                  "(numbers: 0..8, 1..8 reading a section)",
                                  at, lf->name, mk->name, (unsigned long long)(prop ? w : v[0]));
        if (prop != MTF_PROP_WIDTH_CODE && sec && !streamed && !mtf_dsec_find(x, (uint32_t)v[0]))
                return tm_err_set(
                    r->err, -EIO,
                    "raw offset %llu: metadata reads section %llu, not a data section", at,
                    (unsigned long long)v[0]);
        if (prop == MTF_PROP_WIDTH_CODE)
                s->width[c] = (uint8_t)w;
        else
                mtf_cell_set(s, c, x->name_of[k][f], in, v[0], sext(v[1], vw));
        return 0;
}

/* metadata : (tag, record, field, property, value): one value for the
 * width and most interpretations, none for none, two for the strides. */
static int read_metadata(struct rd *r, struct mtf_state *s, const struct mtf_kind *k)
{
        uint64_t tag, f, prop, v[2] = {0, 0};
        int ret;
        if ((ret = read_fixed(r, k, 1, &tag)) || (ret = read_fixed(r, k, 2, &f)) ||
            (ret = read_fixed(r, k, 3, &prop)))
                return ret;
        if (prop > MTF_I_SECTIONSTRIDE)
                return tm_err_set(r->err, -EIO, "raw offset %llu: metadata property %llu (0..7)",
                                  (unsigned long long)r->raw, (unsigned long long)prop);
        unsigned nv =
            prop == MTF_I_NONE ? 0 : (prop == MTF_I_STRIDE || prop == MTF_I_SECTIONSTRIDE) + 1u;
        for (unsigned i = 0; i < nv; i++)
                if ((ret = read_fixed(r, k, 4, &v[i])))
                        return ret;
        return apply_metadata(r, s, tag, f, prop, v, k->leaf[4].width);
}

/* One record at r->p: *emitted says whether rec was filled. */
static int read_record(struct rd *r, struct mtf_state *s, struct tm_rec *rec, int *emitted)
{
        const struct mtf_ctx *x = r->x;
        unsigned tw = x->lay.tag_width;
        *emitted = 0;
        if (r->avail < tw)
                return NEED_MORE;
        uint64_t tag = get_uint(r->p, tw, x->byteorder);
        r->off = tw;
        int k = mtf_kind_by_tag(x, s->section, (uint32_t)tag);
        if (k < 0)
                return tm_err_set(r->err, -EIO, "raw offset %llu: unknown tag %llu in %s%s",
                                  (unsigned long long)r->raw, (unsigned long long)tag,
                                  s->section ? "section " : "the global section",
                                  s->section ? x->lay.section[s->section - 1].name : "");
        const struct mtf_kind *mk = &x->lay.kind[k];
        if (mk->role == MTF_R_SECTION)
                return read_section(r, s, mk);
        if (mk->role == MTF_R_METADATA)
                return read_metadata(r, s, mk);
        for (unsigned i = 0; i < x->nstream; i++)
                r->snext[i] = s->stream[i].next;
        int ret = read_data(r, s, (unsigned)k, rec);
        /* untagged (tag.width 0): a state whose widths are all 0 (a
         * hostile checkpoint: the DTD's own cannot) would read forever */
        if (ret == 0 && r->off == 0)
                return tm_err_set(r->err, -EIO, "raw offset %llu: a record of no bytes",
                                  (unsigned long long)r->raw);
        *emitted = ret == 0;
        return ret;
}

ssize_t mtf_decode_chunks(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                          mtf_chunk_cb cb, void *arg, struct tm_err *err)
{
        const struct mtf_ctx *x = ctx;
        struct mtf_state *s = (struct mtf_state *)st->b;
        size_t pos = 0, n = 0, sused = 0;
        *used = 0;
        for (unsigned i = 0; i < x->nstream; i++)
                if (s->stream[i].active && s->stream[i].at < raw_off)
                        return tm_err_set(err, -EIO,
                                          "raw offset %llu: decoding resumed past the chunk at raw "
                                          "offset %llu, which records still read",
                                          (unsigned long long)raw_off,
                                          (unsigned long long)s->stream[i].at);
        if (s->resume > raw_off) {
                if (s->resume - raw_off > len) {
                        if (eof)
                                return tm_err_set(err, -EIO,
                                                  "raw offset %llu: truncated (records resume at "
                                                  "raw offset %llu)",
                                                  (unsigned long long)(raw_off + len),
                                                  (unsigned long long)s->resume);
                        return 0;
                }
                pos = (size_t)(s->resume - raw_off);
        }
        while (n < cap && pos < len) {
                struct rd r = {.x = x,
                               .s = s,
                               .p = in + pos,
                               .avail = len - pos,
                               .raw = raw_off + pos,
                               .sused = sused,
                               .err = err,
                               .in0 = in,
                               .len0 = len,
                               .raw0 = raw_off,
                               .cb = cb,
                               .cbarg = arg};
                int emitted, ret = read_record(&r, s, &out[n], &emitted);
                if (ret < 0)
                        return ret;
                if (ret == SCRATCH_FULL)
                        break;
                if (ret == NEED_MORE) {
                        if (eof)
                                return tm_err_set(err, -EIO, "raw offset %llu: truncated record",
                                                  (unsigned long long)(raw_off + pos));
                        break;
                }
                pos += r.off;
                sused = r.sused;
                n += (size_t)emitted;
        }
        /* At the end of the stream no record follows to read a chunk. */
        uint64_t pin = raw_off + pos;
        for (unsigned i = 0; i < x->nstream; i++) {
                struct mtf_stream *m = &s->stream[i];
                if (m->active && eof && pos == len)
                        m->active = 0;
                if (m->active && m->at < pin)
                        pin = m->at;
        }
        *used = (size_t)(pin - raw_off);
        s->resume = pin < raw_off + pos ? raw_off + pos : 0;
        return (ssize_t)n;
}

ssize_t mtf_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                   uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                   struct tm_err *err)
{
        return mtf_decode_chunks(ctx, st, in, len, eof, raw_off, used, out, cap, NULL, NULL, err);
}
