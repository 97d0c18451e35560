/* Meta-TF encoder: heap traces as Meta-TF files naming hatf10v2.dtd
 * (Appendix C's HATF DTD with HATF 1.0's realloc records and field order),
 * in two encodings (metatf.h): "hatf" and "splitaddr".
 * docs/formats/metatf.md ("Writing, and SplitAddr") gives the reasons.
 *
 * The DTD is the shipped text, compiled at enc_open, so the record layouts
 * (tags, leaf order, the metadata record's widths) come from the one
 * place the decoder takes them from. Every changeable field of every
 * record kind is a cell, as in the decoder (metatf_impl.h); the encoder
 * keeps its own copy of each cell's setting and changes it only by writing
 * the metadata record that changes the decoder's. The previous value
 * delta adds to is the field's (every value of a field name sets it,
 * whatever the record kind), as the decoder keeps it: a record's metadata
 * all come before it and a delta's initial value sets the field's previous
 * value, so a record is encoded in two passes, first the settings (the
 * metadata that changes interpretations), then the values from the
 * previous values those leave (widening a width where a value needs it).
 *
 * Each cell chooses its setting online, without look-ahead: among "none"
 * and "delta" at the narrowest width (1..8 bytes: Meta-TF has every byte
 * width, HATF only 1, 2, 4, 8) and "default" for a run of one value. A
 * value the setting cannot hold changes it at once (a wider width, or out
 * of "default"); every ENC_BLOCK occurrences the cell looks back at them
 * and moves to the setting that would have stored them in the fewest
 * bytes, metadata included, if that beats staying. The last block predicts
 * the next: sizes, threads and times change slowly in allocation traces.
 *
 * splitaddr sends every address to streamed data section 2 (metatf.h):
 * records are encoded into a span buffer and their addresses into an
 * array; a span is written as one chunk (section record, width, count,
 * items at the narrowest width that holds them all) followed by its
 * records, when the chunk reaches ENC_CHUNK bytes or the span would pass
 * MTF_SPAN_MAX. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../heap/heap.h"
#include "metatf_impl.h"

#define ENC_DTD "hatf10v2.dtd"
#define ENC_BO MTF_LE                    /* byte order written (measured: see the doc) */
#define ENC_BLOCK 16                     /* occurrences of a cell between look-backs */
#define ENC_NEAR 2                       /* splitaddr: bytes of a delta the records keep */
#define ENC_FLUSH (64u << 10)            /* hatf: hand output to the sink past this */
#define ENC_CHUNK (128u << 10)           /* splitaddr: item bytes of a full chunk */
#define ENC_VAR_MAX 65535u               /* attribute and comment bytes (2-byte length) */
#define ENC_REC_MAX (ENC_VAR_MAX + 1024) /* one record and its metadata */
#define ENC_ADDR_MAX (MTF_SPAN_MAX)      /* addresses of a span: each takes >= 1 byte */

/* Where a leaf's value comes from. */
enum src {
        SRC_NONE,
        SRC_SIZE,
        SRC_ADDR,
        SRC_NEW_ADDR,
        SRC_TIME,
        SRC_THREAD,
        SRC_HEAP,
        SRC_LEN,
        SRC_DATA
};

/* The encoder's copy of a cell (mtf_state's arrays, one cell) and what it
 * saw in its current block. */
struct ecell {
        uint8_t interp, width;
        uint64_t a; /* default value, delta's first previous value */
        uint8_t ns; /* the field name's slot in tm_renc.prev */
        unsigned n; /* occurrences in the block */
        uint8_t hi_none, hi_delta, same;
        uint8_t addr;   /* splitaddr: an address field, in records or in section 2 */
        uint64_t first; /* the block's first value */
};

/* A heap kind as a record kind of the DTD. */
struct ekind {
        int lk; /* layout kind, -1 if none */
        uint32_t tag;
        unsigned nleaves, cell0;
        uint8_t src[MTF_LEAVES_MAX];
};

struct tm_renc {
        tm_rsink sink;
        void *arg;
        int split;
        struct mtf_layout *lay;
        struct ekind kind[TM_HK_N];
        unsigned tag_w, meta_tag, sec_tag, rec_w, field_w, prop_w, value_w;
        unsigned ncells, nnames;
        struct ecell cell[MTF_CELLS_MAX];
        uint64_t prev[MTF_NAMES_MAX]; /* each field's previous value, as the decoder's */
        /* each field's last value: the statistics' base, which a delta's
         * initial value (0 when the last value is wider than metadata's
         * 4 bytes) does not reset */
        uint64_t last[MTF_NAMES_MAX];
        int header_done;
        uint64_t amax; /* every address ORed: the header's class */
        /* the span: records not yet written, and (splitaddr) their addresses */
        uint8_t *rec;
        size_t rlen;
        uint64_t *addr;
        size_t naddr;
        uint64_t span_amax;
};

/* ---- numbers ---- */

static unsigned need_u(uint64_t v)
{
        unsigned w = 1;
        while (w < 8 && (v >> (8 * w)) != 0)
                w++;
        return w;
}

static unsigned need_s(uint64_t d)
{
        int64_t s = (int64_t)d;
        unsigned w = 1;
        while (w < 8 && (s < -((int64_t)1 << (8 * w - 1)) || s >= ((int64_t)1 << (8 * w - 1))))
                w++;
        return w;
}

/* Append v (w bytes) to the span. */
static void put(struct tm_renc *e, uint64_t v, unsigned w)
{
        mtf_put(e->rec + e->rlen, v, w, ENC_BO);
        e->rlen += w;
}

/* ---- metadata ---- */

/* Write a metadata record for leaf i of kind k: property prop (0 width,
 * else an interpretation) with nv values; apply it to the cell. */
static void meta(struct tm_renc *e, const struct ekind *k, unsigned i, unsigned prop, unsigned nv,
                 uint64_t v0, uint64_t v1)
{
        put(e, e->meta_tag, e->tag_w);
        put(e, k->tag, e->rec_w);
        put(e, i, e->field_w);
        put(e, prop, e->prop_w);
        if (nv > 0)
                put(e, v0, e->value_w);
        if (nv > 1)
                put(e, v1, e->value_w);
        struct ecell *c = &e->cell[k->cell0 + i - 1];
        if (prop == MTF_PROP_WIDTH_CODE) {
                c->width = (uint8_t)v0;
                return;
        }
        c->interp = (uint8_t)prop;
        c->a = v0;
        if (prop == MTF_I_DELTA || prop == MTF_I_STRIDE)
                e->prev[c->ns] = v0;
}

/* Does the metadata value field hold v? (Appendix B: 4 bytes.) */
static int value_fits(const struct tm_renc *e, uint64_t v)
{
        return e->value_w >= 8 || (v >> (8 * e->value_w)) == 0;
}

/* Metadata bytes to reach interpretation in (arguments a) at width w from
 * cell c. */
static unsigned switch_cost(const struct tm_renc *e, const struct ecell *c, unsigned in, uint64_t a,
                            unsigned w)
{
        unsigned head = e->tag_w + e->rec_w + e->field_w + e->prop_w, cost = 0;
        if (c->interp != in || (in != MTF_I_NONE && c->a != a))
                cost += head + (in == MTF_I_NONE ? 0 : e->value_w);
        if (in != MTF_I_DEFAULT && w != c->width)
                cost += head + e->value_w;
        return cost;
}

/* Move leaf i of kind k to interpretation in (argument a) at width w. */
static void set_mode(struct tm_renc *e, const struct ekind *k, unsigned i, unsigned in, uint64_t a,
                     unsigned w)
{
        struct ecell *c = &e->cell[k->cell0 + i - 1];
        if (in == MTF_I_SECTIONSTRIDE && c->interp != in)
                meta(e, k, i, in, 2, a, 1);
        if (in == MTF_I_SECTIONSTRIDE)
                return;
        if (c->interp != in || (in != MTF_I_NONE && c->a != a))
                meta(e, k, i, in, in == MTF_I_NONE ? 0 : 1, a, 0);
        if (in != MTF_I_DEFAULT && w != c->width)
                meta(e, k, i, MTF_PROP_WIDTH_CODE, 1, w, 0);
}

/* delta's first previous value: the field's previous one when the value
 * field holds it (else the first delta is the whole value). */
static uint64_t delta_start(const struct tm_renc *e, const struct ecell *c)
{
        return value_fits(e, e->last[c->ns]) ? e->last[c->ns] : 0;
}

/* The look-back at the end of a block: the setting that would have stored
 * the block in the fewest bytes, metadata included. */
static void reconsider(struct tm_renc *e, const struct ekind *k, unsigned i)
{
        struct ecell *c = &e->cell[k->cell0 + i - 1];
        unsigned n = c->n, stay;
        c->n = 0;
        if (c->addr) {
                /* splitaddr: addresses the records compact (a delta of at
                 * most ENC_NEAR bytes) stay there, the others go to section
                 * 2, where the compressor sees them side by side */
                if (c->hi_delta > ENC_NEAR && c->interp != MTF_I_SECTIONSTRIDE)
                        set_mode(e, k, i, MTF_I_SECTIONSTRIDE, MTF_ADDR_SECTION, c->width);
                else if (c->hi_delta <= ENC_NEAR &&
                         (c->interp != MTF_I_DELTA || c->hi_delta < c->width))
                        set_mode(e, k, i, MTF_I_DELTA,
                                 c->interp == MTF_I_DELTA ? c->a : delta_start(e, c), c->hi_delta);
                return;
        }
        if (c->interp == MTF_I_DEFAULT)
                stay = c->same && c->first == c->a ? 0 : n * 8u;
        else
                stay = n * c->width;
        unsigned best = stay, in = c->interp, w = c->width;
        uint64_t a = c->a;
        unsigned cost = n * c->hi_none + switch_cost(e, c, MTF_I_NONE, 0, c->hi_none);
        if (cost < best)
                best = cost, in = MTF_I_NONE, w = c->hi_none, a = 0;
        uint64_t d0 = delta_start(e, c);
        /* a delta that starts from 0 pays a wide first value, then narrows */
        cost = n * c->hi_delta + switch_cost(e, c, MTF_I_DELTA, d0, c->hi_delta) +
               (d0 == e->last[c->ns] ? 0 : 2 * (e->tag_w + e->rec_w + e->field_w + e->prop_w) + 8);
        if (c->interp == MTF_I_DELTA)
                cost = n * c->hi_delta + switch_cost(e, c, MTF_I_DELTA, c->a, c->hi_delta);
        if (cost < best)
                best = cost, in = MTF_I_DELTA, w = c->hi_delta,
                a = c->interp == MTF_I_DELTA ? c->a : d0;
        if (c->same && value_fits(e, c->first)) {
                cost = switch_cost(e, c, MTF_I_DEFAULT, c->first, 0);
                if (cost < best)
                        best = cost, in = MTF_I_DEFAULT, a = c->first, w = c->width;
        }
        if (best < stay)
                set_mode(e, k, i, in, a, w);
}

/* The first pass over value v of leaf i of kind k: the metadata that
 * changes the cell's interpretation, after a block or when out of a
 * default run. */
static void decide(struct tm_renc *e, const struct ekind *k, unsigned i, uint64_t v)
{
        struct ecell *c = &e->cell[k->cell0 + i - 1];
        if (c->n == ENC_BLOCK)
                reconsider(e, k, i);
        if (c->interp == MTF_I_DEFAULT && v != c->a) {
                /* out of a run: none, or delta if the block so far says so */
                unsigned nu = need_u(v), nd = need_s(v - e->last[c->ns]);
                if (c->n && c->hi_delta < c->hi_none && nd < nu)
                        set_mode(e, k, i, MTF_I_DELTA, delta_start(e, c),
                                 need_s(v - delta_start(e, c)));
                else
                        set_mode(e, k, i, MTF_I_NONE, 0, nu);
        }
}

/* The second pass: store value v of leaf i of kind k at dst (returns the
 * bytes), widening the cell first when it cannot hold v; v becomes the
 * field's previous value. */
static unsigned store(struct tm_renc *e, const struct ekind *k, unsigned i, uint64_t v,
                      uint8_t *dst)
{
        struct ecell *c = &e->cell[k->cell0 + i - 1];
        uint64_t *prev = &e->prev[c->ns];
        if (c->interp == MTF_I_SECTIONSTRIDE) { /* the value goes to the chunk */
                e->addr[e->naddr++] = v;
                e->span_amax |= v;
        }
        if (c->interp == MTF_I_NONE && need_u(v) > c->width)
                meta(e, k, i, MTF_PROP_WIDTH_CODE, 1, need_u(v), 0);
        if (c->interp == MTF_I_DELTA && need_s(v - *prev) > c->width)
                meta(e, k, i, MTF_PROP_WIDTH_CODE, 1, need_s(v - *prev), 0);
        unsigned w = mtf_interp_stores_nothing(c->interp) ? 0 : c->width;
        if (c->interp == MTF_I_NONE)
                mtf_put(dst, v, w, ENC_BO);
        else if (c->interp == MTF_I_DELTA)
                mtf_put(dst, v - *prev, w, ENC_BO);
        /* the block's statistics */
        unsigned nu = need_u(v), nd = need_s(v - e->last[c->ns]);
        if (c->n == 0) {
                c->hi_none = (uint8_t)nu;
                c->hi_delta = (uint8_t)nd;
                c->same = 1;
                c->first = v;
        } else {
                c->hi_none = (uint8_t)(nu > c->hi_none ? nu : c->hi_none);
                c->hi_delta = (uint8_t)(nd > c->hi_delta ? nd : c->hi_delta);
                c->same &= v == c->first;
        }
        *prev = e->last[c->ns] = v;
        c->n++;
        return w;
}

/* ---- output ---- */

static int write_header(struct tm_renc *e)
{
        struct mtf_header h = {.class = e->amax >> 32 ? 2 : 1, .byteorder = ENC_BO};
        h.dtdlength = (uint8_t)strlen(ENC_DTD);
        memcpy(h.dtd, ENC_DTD, h.dtdlength);
        h.nsections = e->split ? 2 : 1;
        h.start = (uint32_t)mtf_header_size(&h);
        /* sizes unknown to a writer that streams: 0, as nrecords */
        h.section[0] = (struct mtf_shdr){1, h.start, 0};
        h.section[1] = (struct mtf_shdr){MTF_ADDR_SECTION, h.start, 0};
        uint8_t buf[MTF_FIXED_HEADER + 256 + MTF_SECTIONS_MAX * MTF_SHDR_SIZE];
        int n = mtf_header_write(&h, buf, sizeof buf, NULL);
        e->header_done = 1;
        return n < 0 ? n : e->sink(e->arg, buf, (size_t)n);
}

/* Write the span's first rlen bytes of records, after their chunk. */
static int flush_span(struct tm_renc *e, size_t rlen, struct tm_err *err)
{
        int r = e->header_done ? 0 : write_header(e);
        if (r == 0 && e->naddr) {
                unsigned w = need_u(e->span_amax);
                size_t hl = MTF_CHUNK_HEADER(e->tag_w), n = hl + e->naddr * w;
                uint8_t *buf = malloc(n);
                if (!buf)
                        return tm_err_set(err, -ENOMEM, "metatf encoder: out of memory");
                mtf_put(buf, e->sec_tag, e->tag_w, ENC_BO);
                buf[e->tag_w] = MTF_ADDR_SECTION;
                buf[e->tag_w + 1] = (uint8_t)w;
                mtf_put(buf + e->tag_w + 2, e->naddr, 4, ENC_BO);
                for (size_t i = 0; i < e->naddr; i++)
                        mtf_put(buf + hl + i * w, e->addr[i], w, ENC_BO);
                r = e->sink(e->arg, buf, n);
                free(buf);
        }
        if (r == 0 && rlen)
                r = e->sink(e->arg, e->rec, rlen);
        if (r < 0)
                return tm_err_set(err, r, "metatf encoder: writing the output failed");
        memmove(e->rec, e->rec + rlen, e->rlen - rlen);
        e->rlen -= rlen;
        e->naddr = 0;
        e->span_amax = 0;
        return 0;
}

/* Bytes of the span if the record at r0.. (with k more addresses,
 * ORed into am) joins it. */
static size_t span_bytes(const struct tm_renc *e, size_t rlen, size_t naddr, uint64_t am)
{
        return naddr ? MTF_CHUNK_HEADER(e->tag_w) + naddr * need_u(am) + rlen : rlen;
}

/* ---- records ---- */

static uint64_t src_value(const struct tm_heap_ev *ev, unsigned src)
{
        switch (src) {
        case SRC_SIZE:
                return ev->size;
        case SRC_ADDR:
                return ev->addr;
        case SRC_NEW_ADDR:
                return ev->new_addr;
        case SRC_TIME:
                return ev->time;
        case SRC_THREAD:
                return ev->thread;
        case SRC_HEAP:
                return ev->heap;
        case SRC_LEN:
                return ev->attr_len;
        default:
                return 0;
        }
}

static int mtf_put_one(struct tm_renc *e, const struct tm_rec *r, uint64_t idx, struct tm_err *err)
{
        if (r->kind >= TM_HK_N || e->kind[r->kind].lk < 0)
                return tm_err_set(err, -EINVAL, "record %llu: kind %u is not a heap record kind",
                                  (unsigned long long)idx, r->kind);
        struct tm_heap_ev ev;
        tm_heap_rec_to_ev(r, &ev);
        if (ev.attr_len > ENC_VAR_MAX || (ev.attr_len && !ev.attr))
                return tm_err_set(err, -EINVAL,
                                  "record %llu: %zu bytes of %s (Meta-TF's vfield holds at most "
                                  "%u)",
                                  (unsigned long long)idx, ev.attr_len,
                                  r->kind == TM_HK_COMMENT ? "comment" : "attributes", ENC_VAR_MAX);
        const struct ekind *k = &e->kind[r->kind];
        size_t r0 = e->rlen, naddr = e->naddr;
        uint64_t am = e->span_amax;
        /* the record is built aside: metadata that changes its fields'
         * settings goes to the span first */
        uint8_t rec[8 * MTF_LEAVES_MAX + 8];
        size_t rl = 0;
        mtf_put(rec, k->tag, e->tag_w, ENC_BO);
        rl += e->tag_w;
        /* the bytes field is the last leaf (map_kinds): after the numbers */
        for (unsigned i = 1; i < k->nleaves; i++)
                if (k->src[i] != SRC_DATA)
                        decide(e, k, i, src_value(&ev, k->src[i]));
        for (unsigned i = 1; i < k->nleaves; i++) {
                unsigned s = k->src[i];
                if (s == SRC_DATA)
                        continue;
                uint64_t v = src_value(&ev, s);
                if (s == SRC_ADDR || s == SRC_NEW_ADDR)
                        e->amax |= v;
                rl += store(e, k, i, v, rec + rl);
        }
        memcpy(e->rec + e->rlen, rec, rl);
        e->rlen += rl;
        if (ev.attr_len) {
                memcpy(e->rec + e->rlen, ev.attr, ev.attr_len);
                e->rlen += ev.attr_len;
        }
        /* the span: flush what came before this record when it is full */
        int r1 = 0;
        if (e->split && (span_bytes(e, e->rlen, e->naddr, e->span_amax) > MTF_SPAN_MAX ||
                         (e->naddr > naddr && naddr * need_u(am) >= ENC_CHUNK))) {
                size_t k0 = e->naddr - naddr;
                uint64_t mine[2];
                memcpy(mine, e->addr + naddr, k0 * sizeof *mine);
                e->naddr = naddr;
                e->span_amax = am;
                r1 = flush_span(e, r0, err);
                memcpy(e->addr, mine, k0 * sizeof *mine);
                e->naddr = k0;
                for (size_t j = 0; j < k0; j++)
                        e->span_amax |= mine[j];
        } else if (e->rlen >= ENC_FLUSH && e->naddr == 0) {
                r1 = flush_span(e, e->rlen, err); /* no chunk open: records alone */
        }
        return r1;
}

int mtf_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                struct tm_err *err)
{
        return tm_renc_each(mtf_put_one, e, r, n, idx, err);
}

/* ---- open, finish ---- */

/* The source of leaf i of layout kind mk; seen counts the address leaves
 * before it. */
static int leaf_src(const struct mtf_kind *mk, unsigned i, unsigned *seen_addr)
{
        const struct mtf_leaf *lf = &mk->leaf[i];
        if (mtf_leaf_is_bytes(lf))
                return SRC_DATA;
        if (lf->is_len)
                return SRC_LEN;
        static const struct {
                const char *name;
                int src;
        } names[] = {
            {"size", SRC_SIZE}, {"time", SRC_TIME}, {"thread", SRC_THREAD}, {"heap", SRC_HEAP}};
        if (strcmp(lf->name, "address") == 0)
                return (*seen_addr)++ ? SRC_NEW_ADDR : SRC_ADDR;
        for (unsigned j = 0; j < sizeof names / sizeof names[0]; j++)
                if (strcmp(lf->name, names[j].name) == 0)
                        return names[j].src;
        return -1;
}

/* The slot of leaf lf's field name in e->prev: the decoder's rule. */
static unsigned name_slot(struct tm_renc *e, const char **names, const struct mtf_leaf *lf)
{
        unsigned j = 0;
        while (j < e->nnames && strcmp(names[j], lf->name) != 0)
                j++;
        if (j == e->nnames)
                names[e->nnames++] = lf->name;
        return j;
}

/* The heap kinds as the DTD's, by name (hatf10v2.dtd has HATF's four
 * realloc records). */
static int map_kinds(struct tm_renc *e, struct tm_err *err)
{
        const struct mtf_layout *l = e->lay;
        unsigned cell = 0;
        int cell0[MTF_KINDS_MAX];
        const char *names[MTF_CELLS_MAX];
        for (unsigned j = 0; j < l->nkinds; j++) {
                cell0[j] = -1;
                if (l->kind[j].role == MTF_R_METADATA)
                        e->meta_tag = l->kind[j].tag;
                if (l->kind[j].role == MTF_R_SECTION)
                        e->sec_tag = l->kind[j].tag;
                if (l->kind[j].role != MTF_R_DATA)
                        continue;
                cell0[j] = (int)cell;
                cell += l->kind[j].nleaves - 1u;
        }
        if (cell > MTF_CELLS_MAX)
                return tm_err_set(err, -ENOTSUP, "metatf encoder: %s has too many fields", ENC_DTD);
        e->ncells = cell;
        for (unsigned hk = 0; hk < TM_HK_N; hk++) {
                const char *name = tm_schema_heap.kind[hk].name;
                struct ekind *k = &e->kind[hk];
                k->lk = -1;
                for (unsigned j = 0; j < l->nkinds; j++)
                        if (l->kind[j].role == MTF_R_DATA && strcmp(l->kind[j].name, name) == 0)
                                k->lk = (int)j;
                if (k->lk < 0)
                        return tm_err_set(err, -ENOTSUP, "metatf encoder: %s has no '%s' record",
                                          ENC_DTD, name);
                const struct mtf_kind *mk = &l->kind[k->lk];
                k->tag = mk->tag;
                k->nleaves = mk->nleaves;
                k->cell0 = (unsigned)cell0[k->lk];
                unsigned seen = 0;
                for (unsigned i = 1; i < mk->nleaves; i++) {
                        const struct mtf_leaf *lf = &mk->leaf[i];
                        int s = leaf_src(mk, i, &seen);
                        if (s < 0 || (s == SRC_DATA && i + 1 != mk->nleaves) || lf->rep ||
                            lf->previous != MTF_PV_FIELD)
                                return tm_err_set(err, -ENOTSUP,
                                                  "metatf encoder: field '%s' of '%s' in %s",
                                                  lf->name, mk->name, ENC_DTD);
                        k->src[i] = (uint8_t)s;
                        if (e->nnames >= MTF_NAMES_MAX)
                                return tm_err_set(err, -ENOTSUP,
                                                  "metatf encoder: %s has too many field names",
                                                  ENC_DTD);
                        struct ecell *c = &e->cell[k->cell0 + i - 1];
                        c->width = (uint8_t)(mtf_leaf_is_bytes(lf) ? 0 : lf->width);
                        c->interp = lf->interp;
                        c->a = lf->arg[0];
                        c->ns = (uint8_t)name_slot(e, names, lf);
                        if (lf->interp == MTF_I_DELTA || lf->interp == MTF_I_STRIDE)
                                e->prev[c->ns] = lf->arg[0];
                }
        }
        return 0;
}

static int compile_dtd(struct tm_renc *e, struct tm_err *err)
{
        const char *text = NULL;
        for (const struct mtf_shipped *s = mtf_dtd_shipped; s->name; s++)
                if (strcmp(s->name, ENC_DTD) == 0)
                        text = s->text;
        struct mtf_dtd *d = malloc(sizeof *d);
        e->lay = malloc(sizeof *e->lay);
        if (!d || !e->lay || !text) {
                free(d);
                return tm_err_set(err, -ENOMEM, "metatf encoder: out of memory or no %s", ENC_DTD);
        }
        int r = mtf_dtd_parse(d, ENC_DTD, text, strlen(text), err);
        if (r == 0)
                r = mtf_dtd_compile(d, e->lay, err);
        free(d);
        if (r < 0)
                return r;
        const struct mtf_layout *l = e->lay;
        e->tag_w = l->tag_width;
        for (unsigned j = 0; j < l->nkinds; j++) {
                const struct mtf_kind *mk = &l->kind[j];
                if (mk->role != MTF_R_METADATA)
                        continue;
                e->rec_w = mk->leaf[1].width;
                e->field_w = mk->leaf[2].width;
                e->prop_w = mk->leaf[3].width;
                e->value_w = mk->leaf[4].width;
        }
        return map_kinds(e, err);
}

/* The first records: the section the DTD's records live in; for
 * splitaddr, every address field reading section 2 in turn. */
static void prologue(struct tm_renc *e)
{
        put(e, e->sec_tag, e->tag_w);
        put(e, e->lay->section[0].number, 1);
        if (!e->split)
                return;
        for (unsigned hk = 0; hk < TM_HK_N; hk++) {
                const struct ekind *k = &e->kind[hk];
                for (unsigned i = 1; i < k->nleaves; i++) {
                        struct ecell *c = &e->cell[k->cell0 + i - 1];
                        if ((k->src[i] != SRC_ADDR && k->src[i] != SRC_NEW_ADDR) || c->addr)
                                continue;
                        meta(e, k, i, MTF_I_SECTIONSTRIDE, 2, MTF_ADDR_SECTION, 1);
                        c->addr = 1;
                }
        }
}

int mtf_enc_open(const char *name, tm_rsink sink, void *arg, struct tm_renc **out,
                 struct tm_err *err)
{
        if (!name)
                name = "splitaddr";
        if (strcmp(name, "hatf") != 0 && strcmp(name, "splitaddr") != 0)
                return tm_err_set(err, -EINVAL, "metatf: unknown encoding \"%s\"", name);
        struct tm_renc *e = calloc(1, sizeof *e);
        if (!e || !(e->rec = malloc(MTF_SPAN_MAX + ENC_FLUSH + ENC_REC_MAX)) ||
            !(e->addr = malloc((ENC_ADDR_MAX + 2) * sizeof *e->addr))) {
                mtf_enc_free(e);
                return tm_err_set(err, -ENOMEM, "metatf encoder: out of memory");
        }
        e->sink = sink;
        e->arg = arg;
        e->split = strcmp(name, "splitaddr") == 0;
        int r = compile_dtd(e, err);
        if (r < 0) {
                mtf_enc_free(e);
                return r;
        }
        prologue(e);
        *out = e;
        return 0;
}

int mtf_enc_finish(struct tm_renc *e, struct tm_err *err)
{
        int r = flush_span(e, e->rlen, err);
        mtf_enc_free(e);
        return r;
}

void mtf_enc_free(struct tm_renc *e)
{
        if (!e)
                return;
        free(e->lay);
        free(e->rec);
        free(e->addr);
        free(e);
}
