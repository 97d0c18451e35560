/* ncol_row: schema 2 of the native row (ncol.h), the part native_row.c
 * hands a trace to when the file header's schema byte is 2.
 *
 * Decoding as schema 1's: a block is decoded whole, once, into this
 * thread's cache (a workspace for the trace's schema and its columns,
 * freed when the thread ends), keyed by the open's serial, the block's raw
 * offset and checksum; the raw offset stays at the block's start until its
 * last record is returned, and the end mark goes with the last record.
 * Variable values point into the cache, valid until this thread's next
 * decode call. */
#include "ncol.h"

#include "../address/addr_stats.h"
#include "../address/arec.h"
#include "../record/family.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CTX_MAGIC 0xfe4e434f4c325f31ull /* a value schema 1's serial never reaches */

#define NO_FIELD 0xff /* in cctx.slot: the kind has no such var[] slot */

struct cctx {
        uint64_t magic;
        uint64_t id;
        uint32_t max_rec;
        unsigned log2;
        struct ncol_file f;
        /* the schema's variable fields, for batches taken column by
         * column: var[0..nvar) the fields, slot[k][s] the field in kind
         * k's var[] slot s (NO_FIELD), nslots the most slots a kind has */
        unsigned nvar, nslots;
        uint8_t var[TM_SCHEMA_FIELDS_MAX];
        uint8_t slot[TM_SCHEMA_KINDS_MAX][TM_REC_VAR_MAX];
};

/* x's variable fields and each kind's var[] slots, from its schema. */
static void var_slots(struct cctx *x)
{
        const struct tm_schema *s = &x->f.schema;
        memset(x->slot, NO_FIELD, sizeof x->slot);
        for (unsigned f = 0; f < s->nfields; f++)
                if (s->field[f].type >= TM_FT_TEXT)
                        x->var[x->nvar++] = (uint8_t)f;
        for (unsigned k = 0; k < s->nkinds; k++) {
                unsigned vs = 0;
                for (unsigned q = 0; q < s->kind[k].nfields && vs < TM_REC_VAR_MAX; q++)
                        if (s->field[s->kind[k].field[q]].type >= TM_FT_TEXT)
                                x->slot[k][vs++] = s->kind[k].field[q];
                x->nslots = vs > x->nslots ? vs : x->nslots;
        }
}

/* The state (tm_rstate's first bytes), laid out as schema 1's with a 0
 * where schema 1 has its type count (1..8) and the schema byte after. */
struct cstate {
        uint64_t total; /* records returned before this call */
        uint32_t done;  /* of them, in the block at the raw offset */
        uint8_t ended;  /* the end mark is consumed */
        uint8_t zero, schema, log2;
};

static _Atomic uint64_t next_id = 1;

int ncol_ctx_is(const void *ctx)
{
        uint64_t m;
        if (!ctx)
                return 0;
        memcpy(&m, ctx, sizeof m);
        return m == CTX_MAGIC;
}

int ncol_state_is(const struct tm_rstate *st)
{
        struct cstate s;
        memcpy(&s, st->b, sizeof s);
        return s.zero == 0 && s.schema == NCOL_SCHEMA;
}

int ncol_open(const uint8_t *head, size_t n, void **ctx, struct tm_schema *schema,
              struct tm_rstate *st, struct tm_err *err)
{
        if (n < TMN_FILE_HDR)
                return tm_err_set(err, -EIO, "raw offset 0: truncated file header");
        uint8_t want[4];
        tmn_put32(want, (uint32_t)crc32(0, head, 16));
        if (memcmp(head, TMN_MAGIC, 8) != 0 || memcmp(want, head + 16, 4) != 0)
                return tm_err_set(err, -EIO, "raw offset 0: file header checksum mismatch");
        unsigned log2 = head[12];
        if (head[8] != TMN_VERSION && head[8] != NCOL_VERSION)
                return tm_err_set(err, -ENOTSUP, "raw offset 0: native version %u", head[8]);
        if (head[10] || head[11] || log2 < TMN_LOG_MIN || log2 > NCOL_LOG_MAX || head[13] ||
            head[14] || head[15])
                return tm_err_set(err, -EIO, "raw offset 0: file header out of range");
        struct cctx *x = calloc(1, sizeof *x);
        if (!x)
                return tm_err_set(err, -ENOMEM, "out of memory");
        int hl = ncol_schema_get(head + TMN_FILE_HDR, n - TMN_FILE_HDR, TMN_FILE_HDR, &x->f, err);
        if (hl < 0) {
                free(x);
                return hl;
        }
        x->magic = CTX_MAGIC;
        x->id = atomic_fetch_add(&next_id, 1);
        x->log2 = log2;
        x->max_rec = 1u << log2;
        var_slots(x);
        struct cstate s0 = {.schema = NCOL_SCHEMA, .log2 = (uint8_t)log2};
        memcpy(st->b, &s0, sizeof s0);
        *schema = x->f.schema;
        *ctx = x;
        return TMN_FILE_HDR + hl;
}

void ncol_close(void *ctx)
{
        struct cctx *x = ctx;
        ncol_file_free(&x->f);
        free(x);
}

int ncol_state_ok(const void *ctx, const struct tm_rstate *st)
{
        const struct cctx *x = ctx;
        struct cstate s;
        memcpy(&s, st->b, sizeof s);
        return s.done < x->max_rec && s.ended <= 1 && !(s.ended && s.done) && s.zero == 0 &&
               s.schema == NCOL_SCHEMA && s.log2 == x->log2;
}

int ncol_src_is_addr(const struct tm_schema *src)
{
        return tm_family_address.claims(src);
}

unsigned ncol_blobs(void *ctx, struct tm_blob *out, unsigned cap)
{
        const struct cctx *x = ctx;
        if (!ncol_ctx_is(ctx))
                return 0;
        unsigned n = x->f.nblobs < cap ? x->f.nblobs : cap;
        memcpy(out, x->f.blob, n * sizeof *out);
        return n;
}

/* ---- this thread's decoded block ---- */

struct ccache {
        uint64_t id, raw_off; /* id 0: nothing */
        uint32_t crc, nrec, body;
        int valid;
        struct ncol_ws *ws;
        const struct ncol_cols *c;
};

static pthread_key_t cc_key;
static pthread_once_t cc_once = PTHREAD_ONCE_INIT;
static _Thread_local struct ccache *cc_mine;

static void cc_free(void *p)
{
        struct ccache *t = p;
        if (t) {
                ncol_ws_free(t->ws);
                free(t);
        }
}

static void cc_make_key(void)
{
        pthread_key_create(&cc_key, cc_free);
}

static struct ccache *cc_get(void)
{
        if (cc_mine)
                return cc_mine;
        pthread_once(&cc_once, cc_make_key);
        struct ccache *t = calloc(1, sizeof *t);
        if (!t)
                return NULL;
        pthread_setspecific(cc_key, t);
        cc_mine = t;
        return t;
}

/* The block at in (nrec records, body bytes) of trace x, decoded. */
static int block_get(const struct cctx *x, const uint8_t *in, uint32_t nrec, uint32_t body,
                     uint64_t raw_off, const struct ncol_cols **c, struct tm_err *err)
{
        struct ccache *t = cc_get();
        if (!t)
                return tm_err_set(err, -ENOMEM, "out of memory");
        uint32_t crc = tmn_get32(in + 12);
        if (t->valid && t->id == x->id && t->raw_off == raw_off && t->crc == crc &&
            t->nrec == nrec && t->body == body) {
                *c = t->c;
                return 0;
        }
        t->valid = 0;
        /* another trace's workspace serves when its schema is this one's:
         * making one (its tables, zstd contexts, columns) for every open
         * cost the fuzz harness a tenth of its time */
        if (t->id != x->id && !(t->ws && ncol_ws_is_for(t->ws, &x->f.schema))) {
                ncol_ws_free(t->ws);
                t->id = 0;
                if (!(t->ws = ncol_ws_new(&x->f.schema)))
                        return tm_err_set(err, -ENOMEM, "out of memory");
        }
        t->id = x->id;
        int rc = ncol_block_decode(t->ws, in, TMN_BLK_HDR + (size_t)body, raw_off, &t->c, err);
        if (rc < 0)
                return rc;
        t->raw_off = raw_off;
        t->crc = crc;
        t->nrec = nrec;
        t->body = body;
        t->valid = 1;
        *c = t->c;
        return 0;
}

/* ---- framing: as native_row.c's for schema 1 ---- */

/* The end mark at in (whole): checked against the records returned. */
static int end_mark(const uint8_t *in, size_t len, int eof, const struct cstate *s,
                    uint64_t raw_off, struct tm_err *err)
{
        return tmn_end_check(in, len, eof, s->done, s->total, raw_off, err);
}

/* The next block's records (1: *c, *nrec, *body), or 0 (more input, the
 * end), or an error. */
static int next_block(const struct cctx *x, struct cstate *s, const uint8_t *in, size_t len,
                      int eof, uint64_t raw_off, size_t *used, const struct ncol_cols **c,
                      uint32_t *body, struct tm_err *err)
{
        unsigned long long o = (unsigned long long)raw_off;
        *used = 0;
        if (s->ended)
                return len ? tm_err_set(err, -EIO, "raw offset %llu: bytes after the end mark", o)
                           : 0;
        if (len < TMN_BLK_HDR)
                return eof ? tm_err_set(err, -EIO, "raw offset %llu: truncated (no end mark)", o)
                           : 0;
        uint32_t nrec;
        int rc = tmn_block_head(in, x->max_rec, raw_off, &nrec, body, err);
        if (rc < 0)
                return rc;
        if (len < TMN_BLK_HDR + (size_t)*body)
                return eof ? tm_err_set(err, -EIO, "raw offset %llu: truncated block", o) : 0;
        if (nrec == 0) {
                rc = end_mark(in, len, eof, s, raw_off, err);
                if (rc < 0)
                        return rc;
                s->ended = 1;
                *used = TMN_END_LEN;
                return 0;
        }
        if (s->done >= nrec)
                return tm_err_set(err, -EIO, "raw offset %llu: resumed at record %u of %u", o,
                                  s->done, nrec);
        rc = block_get(x, in, nrec, *body, raw_off, c, err);
        return rc < 0 ? rc : 1;
}

/* How many of m records to return (the end mark goes with the last one,
 * which waits while the end of the input hides what follows); *end. */
static size_t take(const struct cstate *s, const struct ncol_cols *c, uint32_t body,
                   const uint8_t *in, size_t len, int eof, size_t m, int *end)
{
        *end = 0;
        size_t blk = TMN_BLK_HDR + (size_t)body, rest = len - blk;
        if (s->done + m < c->nrec)
                return m;
        const uint8_t *p = in + blk;
        int mark = rest >= 8 && tmn_get32(p) == TMN_BLK_MAGIC && tmn_get32(p + 4) == 0;
        if (rest >= TMN_END_LEN || eof || (rest >= 8 && !mark)) {
                struct cstate after = *s;
                after.done = 0;
                after.total += m;
                struct tm_err e;
                *end = mark && rest >= TMN_END_LEN && end_mark(p, rest, eof, &after, 0, &e) == 0;
                return m;
        }
        return m - 1;
}

static void advance(struct cstate *s, const struct ncol_cols *c, uint32_t body, size_t m, int end,
                    size_t *used)
{
        s->done += (uint32_t)m;
        s->total += m;
        if (s->done == c->nrec) {
                s->done = 0;
                *used = TMN_BLK_HDR + (size_t)body + (end ? TMN_END_LEN : 0);
                s->ended = (uint8_t)end;
        }
}

/* Records [j0, j0 + m) of c as out[0..m) (ncol_rec's, var[] slots from
 * x->slot): rendering a heap trace spent a tenth of its instructions
 * there, looking up each field's type in the schema. */
static void recs_put(const struct cctx *x, const struct ncol_cols *c, uint32_t j0, size_t m,
                     struct tm_rec *out)
{
        const struct tm_schema *sc = &x->f.schema;
        for (size_t i = 0; i < m; i++) {
                uint32_t j = j0 + (uint32_t)i;
                unsigned k = c->kind[j];
                const struct tm_kind *kd = &sc->kind[k];
                struct tm_rec *r = &out[i];
                r->kind = k;
                r->section = c->section[j];
                for (unsigned q = 0; q < kd->nfields; q++)
                        r->v[q] = c->col[kd->field[q]][j];
                for (unsigned v = 0; v < x->nslots && x->slot[k][v] != NO_FIELD; v++) {
                        unsigned f = x->slot[k][v];
                        r->var[v] = c->var[f] + c->off[f][j];
                }
        }
}

ssize_t ncol_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                    uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                    struct tm_err *err)
{
        const struct cctx *x = ctx;
        struct cstate s;
        memcpy(&s, st->b, sizeof s);
        const struct ncol_cols *c = NULL;
        uint32_t body = 0;
        int rc = next_block(x, &s, in, len, eof, raw_off, used, &c, &body, err);
        if (rc <= 0) {
                if (rc == 0)
                        memcpy(st->b, &s, sizeof s);
                return rc;
        }
        size_t m = c->nrec - s.done < cap ? c->nrec - s.done : cap;
        int end;
        m = take(&s, c, body, in, len, eof, m, &end);
        recs_put(x, c, s.done, m, out);
        advance(&s, c, body, m, end, used);
        memcpy(st->b, &s, sizeof s);
        return (ssize_t)m;
}

/* Where record i's bytes of variable field f end in c->var[f]. */
static inline uint64_t var_end(const struct tm_schema *sc, const struct ncol_cols *c, unsigned f,
                               uint32_t i)
{
        uint64_t n = c->col[f][i];
        return c->off[f][i] + (sc->field[f].type == TM_FT_LIST ? n * 8 : n);
}

/* Bytes of the variable values of records [j, j + k) of c (k >= 1). */
static uint64_t var_need(const struct cctx *x, const struct ncol_cols *c, uint32_t j, size_t k)
{
        uint64_t need = 0;
        for (unsigned q = 0; q < x->nvar; q++) {
                unsigned f = x->var[q];
                need += var_end(&x->f.schema, c, f, j + (uint32_t)k - 1) - c->off[f][j];
        }
        return need;
}

/* How many of the m records of c from j fit in b's arena (empty): the
 * most whose values take at most its bytes (none without an arena). */
static size_t batch_fit(const struct cctx *x, const struct ncol_cols *c, uint32_t j, size_t m,
                        const struct tm_rbatch *b)
{
        uint64_t room = b->arena ? b->arena_cap : 0;
        if (!x->nvar || !m || var_need(x, c, j, m) <= room)
                return m;
        size_t lo = 0, hi = m; /* lo records fit, hi do not */
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (var_need(x, c, j, mid) <= room)
                        lo = mid;
                else
                        hi = mid;
        }
        return lo;
}

/* Records [j, j + k) of c into b (empty) as its records 0..k, column by
 * column: the block's columns already hold every field of every record (0
 * where a kind has none), and a variable field's values of consecutive
 * records lie together in c->var, so each column is one copy and only
 * the var[] offsets are made a record at a time. The values must fit
 * (batch_fit). */
static void batch_cols(const struct cctx *x, const struct ncol_cols *c, uint32_t j, size_t k,
                       struct tm_rbatch *b)
{
        const struct tm_schema *sc = &x->f.schema;
        const uint8_t *kind = c->kind + j;
        for (size_t i = 0; i < k; i++)
                b->kind[i] = kind[i];
        for (unsigned f = 0; f < sc->nfields; f++)
                memcpy(b->col[f], c->col[f] + j, k * sizeof *b->col[f]);
        if (!k || !x->nvar || !b->arena)
                return;
        uint64_t base[TM_SCHEMA_FIELDS_MAX]; /* arena offset of c->var[f] + 0, mod 2^64 */
        for (unsigned q = 0; q < x->nvar; q++) {
                unsigned f = x->var[q];
                uint64_t lo = c->off[f][j], n = var_end(sc, c, f, j + (uint32_t)k - 1) - lo;
                if (n)
                        memcpy(b->arena + b->arena_len, c->var[f] + lo, n);
                base[f] = b->arena_len - lo;
                b->arena_len += n;
        }
        for (unsigned s = 0; s < x->nslots; s++) {
                uint32_t *v = b->var[s];
                for (size_t i = 0; i < k; i++) {
                        unsigned f = x->slot[kind[i]][s];
                        if (f != NO_FIELD)
                                v[i] = (uint32_t)(base[f] + c->off[f][j + i]);
                }
        }
}

ssize_t ncol_decode_batch(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_rbatch *b, size_t cap,
                          struct tm_err *err)
{
        const struct cctx *x = ctx;
        struct cstate s;
        memcpy(&s, st->b, sizeof s);
        b->n = 0;
        b->arena_len = 0;
        const struct ncol_cols *c = NULL;
        uint32_t body = 0;
        int rc = next_block(x, &s, in, len, eof, raw_off, used, &c, &body, err);
        if (rc <= 0) {
                if (rc == 0)
                        memcpy(st->b, &s, sizeof s);
                return rc;
        }
        if (cap > b->cap)
                cap = b->cap;
        size_t m = c->nrec - s.done < cap ? c->nrec - s.done : cap;
        size_t k = batch_fit(x, c, s.done, m, b);
        if (k == 0 && m)
                return tm_err_set(err, -ENOSPC, "raw offset %llu: a record larger than the batch",
                                  (unsigned long long)raw_off);
        int end;
        k = take(&s, c, body, in, len, eof, k, &end); /* the last record may wait */
        batch_cols(x, c, s.done, k, b);
        b->n = k;
        advance(&s, c, body, k, end, used);
        memcpy(st->b, &s, sizeof s);
        return (ssize_t)k;
}

/* ---- encoding ---- */

struct ncol_enc {
        tm_rsink sink;
        void *arg;
        int level;
        size_t n, cap;      /* records buffered, a block's */
        struct tm_rec *rec; /* var[] NULL: their bytes at voff in vbytes */
        uint64_t *voff;     /* [cap][TM_REC_VAR_MAX] */
        uint8_t *vbytes;
        size_t vlen, vcap;
        struct ncol_ws *ws;
        struct tm_schema s;
        uint64_t total;
};

void ncol_enc_free(struct ncol_enc *e)
{
        if (!e)
                return;
        free(e->rec);
        free(e->voff);
        free(e->vbytes);
        ncol_ws_free(e->ws);
        free(e);
}

int ncol_enc_open(const struct tm_renc_src *src, unsigned log2, int level, tm_rsink sink, void *arg,
                  struct ncol_enc **out, struct tm_err *err)
{
        struct ncol_enc *e = calloc(1, sizeof *e);
        if (!e)
                return tm_err_set(err, -ENOMEM, "out of memory");
        e->sink = sink;
        e->arg = arg;
        e->level = level;
        e->cap = (size_t)1 << log2;
        e->s = *src->schema;
        e->rec = malloc(e->cap * sizeof *e->rec);
        e->voff = malloc(e->cap * TM_REC_VAR_MAX * sizeof *e->voff);
        e->vcap = 4096; /* never NULL: an empty value's pointer is vbytes + 0 */
        e->vbytes = malloc(e->vcap);
        e->ws = ncol_ws_new(&e->s);
        if (!e->rec || !e->voff || !e->vbytes || !e->ws) {
                ncol_enc_free(e);
                return tm_err_set(err, -ENOMEM, "out of memory");
        }
        uint8_t *sch;
        size_t sl;
        int rc = ncol_schema_put(&e->s, src->blob, src->nblobs, &sch, &sl);
        if (rc < 0) {
                ncol_enc_free(e);
                return tm_err_set(err, rc, "native: the schema and byte sections do not fit (%s)",
                                  rc == -EFBIG ? "over 256 KiB" : "out of memory");
        }
        uint8_t h[TMN_FILE_HDR] = {0};
        memcpy(h, TMN_MAGIC, 8);
        h[8] = NCOL_VERSION; /* its blocks may be coding 4 */
        h[9] = NCOL_SCHEMA;
        h[12] = (uint8_t)log2;
        tmn_put32(h + 16, (uint32_t)crc32(0, h, 16));
        rc = sink(arg, h, sizeof h);
        if (rc == 0)
                rc = sink(arg, sch, sl);
        free(sch);
        if (rc < 0) {
                ncol_enc_free(e);
                return tm_err_set(err, rc, "native: writing the header failed");
        }
        *out = e;
        return 0;
}

/* The buffered records [lo, lo + n) as blocks: one, or halves. */
static int enc_flush(struct ncol_enc *e, size_t lo, size_t n, struct tm_err *err)
{
        const uint8_t *p;
        size_t len;
        int rc = ncol_block_encode(e->ws, e->rec + lo, n, e->level, &p, &len, NULL);
        if (rc == -EFBIG && n > 1) {
                rc = enc_flush(e, lo, n / 2, err);
                return rc < 0 ? rc : enc_flush(e, lo + n / 2, n - n / 2, err);
        }
        unsigned long long k = (unsigned long long)(e->total + lo);
        if (rc == -EFBIG)
                return tm_err_set(err, -EINVAL, "record %llu: too large for a block", k);
        if (rc < 0)
                return tm_err_set(err, rc, "native: encoding the block of record %llu failed", k);
        rc = e->sink(e->arg, p, len);
        return rc < 0 ? tm_err_set(err, rc, "native: writing a block failed") : 0;
}

static int enc_block(struct ncol_enc *e, struct tm_err *err)
{
        if (!e->n)
                return 0;
        for (size_t i = 0; i < e->n; i++) {
                const struct tm_kind *k = &e->s.kind[e->rec[i].kind];
                unsigned vs = 0;
                for (unsigned j = 0; j < k->nfields; j++)
                        if (e->s.field[k->field[j]].type >= TM_FT_TEXT) {
                                e->rec[i].var[vs] = e->vbytes + e->voff[i * TM_REC_VAR_MAX + vs];
                                vs++;
                        }
        }
        int rc = enc_flush(e, 0, e->n, err);
        e->total += e->n;
        e->n = 0;
        e->vlen = 0;
        return rc;
}

/* Bytes of r's variable values (a list's 8 a number). */
static uint64_t var_bytes(const struct tm_schema *s, const struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[r->kind];
        uint64_t n = 0;
        for (unsigned j = 0; j < k->nfields; j++) {
                uint8_t t = s->field[k->field[j]].type;
                if (t >= TM_FT_TEXT)
                        n += t == TM_FT_LIST ? (r->v[j] & (UINT64_MAX >> 4)) * 8 : r->v[j];
        }
        return n;
}

/* Record r's variable bytes copied into e->vbytes for buffered record i. */
static int enc_keep(struct ncol_enc *e, const struct tm_rec *r, size_t i, uint64_t idx,
                    struct tm_err *err)
{
        const struct tm_kind *k = &e->s.kind[r->kind];
        unsigned vs = 0;
        for (unsigned j = 0; j < k->nfields; j++) {
                const struct tm_field *f = &e->s.field[k->field[j]];
                if (f->type < TM_FT_TEXT)
                        continue;
                uint64_t n = f->type == TM_FT_LIST ? r->v[j] * 8 : r->v[j];
                if (n > NCOL_VAR_MAX || (f->type == TM_FT_LIST && r->v[j] > NCOL_VAR_MAX))
                        return tm_err_set(err, -EINVAL, "record %llu: %s of %llu bytes",
                                          (unsigned long long)idx, f->name, (unsigned long long)n);
                if (e->vlen + n > e->vcap) {
                        size_t c = (e->vlen + (size_t)n) * 2;
                        uint8_t *p = realloc(e->vbytes, c);
                        if (!p)
                                return tm_err_set(err, -ENOMEM, "out of memory");
                        e->vbytes = p;
                        e->vcap = c;
                }
                if (n)
                        memcpy(e->vbytes + e->vlen, r->var[vs], (size_t)n);
                e->voff[i * TM_REC_VAR_MAX + vs] = e->vlen;
                e->rec[i].var[vs] = NULL;
                e->vlen += (size_t)n;
                vs++;
        }
        return 0;
}

int ncol_enc_put(struct ncol_enc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                 struct tm_err *err)
{
        for (size_t i = 0; i < n; i++) {
                unsigned long long k = (unsigned long long)(idx + i);
                if (r[i].kind >= e->s.nkinds || r[i].section > e->s.nsections)
                        return tm_err_set(err, -EINVAL, "record %llu: kind %u, section %u", k,
                                          r[i].kind, r[i].section);
                int rc = 0;
                if (e->n && e->vlen + var_bytes(&e->s, &r[i]) > NCOL_VAR_MAX)
                        rc = enc_block(e, err);
                e->rec[e->n] = r[i];
                if (rc == 0)
                        rc = enc_keep(e, &r[i], e->n, idx + i, err);
                if (rc < 0)
                        return rc;
                if (++e->n == e->cap) {
                        rc = enc_block(e, err);
                        if (rc < 0)
                                return rc;
                }
        }
        return 0;
}

int ncol_enc_finish(struct ncol_enc *e, struct tm_err *err)
{
        int rc = enc_block(e, err);
        if (rc == 0)
                rc = tmn_end_write(e->sink, e->arg, e->total, err);
        ncol_enc_free(e);
        return rc;
}
