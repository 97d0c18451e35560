/* Cursors on the records' views (records_int.h). */
#include "records_int.h"

struct tm_cursor {
        struct tm_trace *t;
        struct tm_records *rt;
        enum rv_kind kind;
        unsigned sel, col;
        uint64_t size;
        size_t recsize;                  /* binary */
        const struct tm_text_plan *plan; /* the view's text form's */
        const char *text;                /* schema and byte sections: their bytes */
        struct tm_creader *r;
        struct tm_feed feed;
        struct tm_rstate mark; /* the decoder's state before the batch (rv_salvage) */
        struct tm_rec *recs;   /* [RV_BATCH] */
        size_t rpos, rcount;
        uint64_t pos; /* view offset of the next byte returned */
        int valid;
        char *line; /* the current record's bytes in this view */
        size_t line_len, line_pos;
        char *stage; /* a readahead worker's render buffer (RV_STAGE), or NULL */
        /* skipping by the column path (rv_skip_cols), when the codec has
         * one and the view is ascii, a form, a stream or binary; else
         * cols.cap is 0 */
        struct tm_rbatch cols;
        uint32_t *lens;                     /* [cols.cap] */
        const struct tm_family_acc *tables; /* binary: the family's tables (rt->tacc) */
        int worker;                         /* a readahead worker's: it has a stage */
        /* The budget (hmem.h): r, the feed's buffer, recs, line, stage,
         * cols and lens are what the cursor holds while it reads; parked
         * (r NULL), it holds none of them and the next read makes them
         * anew and starts from a checkpoint. */
        struct tm_hmem_user hm;
};

/* Whether f reads through a container reader (the views not served from
 * a text): the cursors the budget counts. */
static int rv_reads(const struct tm_cursor *f)
{
        return f->kind != RV_STATS && f->kind != RV_SCHEMA && f->kind != RV_BLOB;
}

/* Free what f holds to read (its state invalid then). */
static void rv_state_free(struct tm_cursor *f)
{
        tm_creader_close(f->r);
        f->r = NULL;
        tm_rbatch_free(&f->cols);
        free(f->lens);
        f->lens = NULL;
        tm_feed_free(&f->feed);
        free(f->line);
        f->line = NULL;
        free(f->stage);
        f->stage = NULL;
        free(f->recs);
        f->recs = NULL;
        f->valid = 0;
        f->rpos = f->rcount = 0;
        f->line_len = f->line_pos = 0;
}

static void rv_park(struct tm_hmem_user *u)
{
        struct tm_cursor *f = (struct tm_cursor *)((char *)u - offsetof(struct tm_cursor, hm));
        rv_state_free(f);
}

/* The bytes f holds to read, for the budget. */
static uint64_t rv_state_bytes(const struct tm_cursor *f)
{
        if (!f->r)
                return 0;
        uint64_t n = tm_creader_mem(f->r) + f->feed.cap;
        if (f->recs)
                n += RV_BATCH * sizeof *f->recs;
        if (f->line)
                n += tm_text_line_max(&f->rt->schema, TM_FEED_CAP);
        if (f->stage)
                n += RV_STAGE;
        if (f->lens)
                n += f->cols.cap * (sizeof *f->lens + sizeof *f->cols.kind +
                                    f->rt->schema.nfields * sizeof **f->cols.col);
        n += f->cols.arena_cap;
        for (unsigned j = 0; j < TM_REC_VAR_MAX; j++)
                n += f->cols.var[j] ? f->cols.cap * sizeof *f->cols.var[j] : 0;
        return n;
}

void tm_records_vfile_close(struct tm_cursor *f)
{
        if (!f)
                return;
        if (rv_reads(f))
                tm_hmem_leave(&f->hm); /* first: then no other thread parks f */
        rv_state_free(f);
        free(f);
        tm_hmem_trim();
}

int tm_records_vfile_worker(struct tm_cursor *f)
{
        if (f->worker || !rv_reads(f) || f->kind == RV_RAW) /* text views only */
                return 0;
        tm_hmem_begin(&f->hm);
        f->worker = 1;
        if (f->r && !f->stage)
                f->stage = malloc(RV_STAGE);
        int rc = f->r && !f->stage ? -ENOMEM : 0;
        tm_hmem_end(&f->hm, rv_state_bytes(f));
        return rc;
}

/* Set up the column path for f when its codec has one and the view is
 * one whose lengths it gives (sections do not change them), with an
 * arena when the schema has variable fields. 0 or -ENOMEM. */
static int rv_cols_init(struct tm_cursor *f)
{
        const struct tm_schema *s = &f->rt->schema;
        if (!f->rt->codec->decode_batch || !(f->kind == RV_ASCII || f->kind == RV_FORM ||
                                             f->kind == RV_STREAM || f->kind == RV_BINARY))
                return 0;
        f->lens = malloc(RV_BATCH * sizeof *f->lens);
        if (!f->lens || tm_rbatch_init(&f->cols, s->nfields, RV_BATCH) < 0 ||
            (tm_schema_has_var(s) && tm_rbatch_arena(&f->cols, TM_RBATCH_ARENA) < 0))
                return -ENOMEM;
        return 0;
}

/* Make what f needs to read (f->r NULL: new or parked): a container
 * reader, and for the decoded views the feed, records, line and column
 * batch. 0, or a negative errno (what was made is freed). */
static int rv_state_open(struct tm_cursor *f, struct tm_err *err)
{
        struct tm_records *rt = f->rt;
        int rc = tm_creader_open(f->t->cont, &f->r, err);
        if (rc < 0 || f->kind == RV_RAW)
                return rc;
        f->line = malloc(tm_text_line_max(&rt->schema, TM_FEED_CAP));
        f->recs = malloc(RV_BATCH * sizeof *f->recs);
        if (!f->line || !f->recs || tm_feed_init(&f->feed, rt->codec, rt->ctx) < 0 ||
            rv_cols_init(f) < 0 || (f->worker && !(f->stage = malloc(RV_STAGE)))) {
                rv_state_free(f);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", f->t->path);
        }
        return 0;
}

int tm_records_vfile_open(struct tm_trace *t, const char *view, struct tm_cursor **out,
                          struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        uint64_t size;
        int rc = tm_records_view_size(t, view, &size, err);
        if (rc < 0)
                return rc;
        struct tm_cursor *f = calloc(1, sizeof *f);
        if (!f)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        f->t = t;
        f->rt = rt;
        rv_parse(rt, view, &f->kind, &f->sel);
        f->col = rv_col(&rt->schema, f->kind, f->sel);
        f->size = size;
        f->recsize = rt_bin_size(rt);
        f->plan = f->kind == RV_FORM ? &rt->plan[1 + f->sel] : rt->plan;
        int text = f->kind == RV_STATS || f->kind == RV_SCHEMA || f->kind == RV_BLOB;
        if (f->kind == RV_SCHEMA || f->kind == RV_BLOB)
                rv_text_of(t, f->kind, f->sel, &f->text, &f->size);
        if (f->kind == RV_BINARY && (rc = rt_tables(t, ~0u, err)) == 0) {
                pthread_mutex_lock(&t->mu);
                f->tables = rt->tacc;
                pthread_mutex_unlock(&t->mu);
                if (!f->tables && rt->fam && rt->fam->binary && tm_family_more(rt->fam)->tables)
                        rc = tm_err_set(err, -EIO, "%s: no room for the tables binary needs",
                                        t->path);
        }
        if (!text) {
                tm_hmem_join(&f->hm, rv_park);
                if (rc == 0) {
                        tm_hmem_begin(&f->hm);
                        rc = rv_state_open(f, err);
                        tm_hmem_end(&f->hm, rv_state_bytes(f));
                }
        }
        if (rc < 0) {
                tm_records_vfile_close(f);
                return rc;
        }
        *out = f;
        return 0;
}

/* Where the feed was before a decode call (its state in f->mark). */
struct rv_mark {
        size_t pos;
        uint64_t raw_off;
};

static void rv_mark(struct tm_cursor *f, struct rv_mark *m)
{
        memcpy(f->mark.b, f->feed.st.b, f->rt->codec->state_size);
        m->pos = f->feed.pos;
        m->raw_off = f->feed.raw_off;
}

static void rv_back(struct tm_cursor *f, const struct rv_mark *m)
{
        memcpy(f->feed.st.b, f->mark.b, f->rt->codec->state_size);
        f->feed.pos = m->pos;
        f->feed.raw_off = m->raw_off;
}

/* A batch decoded from m failed, but the records before the bad one are
 * good (a decoder may fail a whole batch; the index pass counts them, in
 * index.c's build_drain): count them a record at a time, then decode
 * that many again in one call (a record may point into what its call
 * decoded). That leaves the feed just before the bad record, so that the
 * next batch meets the error again. Returns the records in f->recs, 0
 * when the bad one is the first. */
static size_t rv_salvage(struct tm_cursor *f, const struct rv_mark *m)
{
        struct tm_err e = {0};
        size_t k = 0;
        rv_back(f, m);
        while (k < RV_BATCH && tm_feed_decode(&f->feed, f->recs, 1, &e) == 1)
                k++;
        rv_back(f, m);
        ssize_t n = k ? tm_feed_decode(&f->feed, f->recs, k, &e) : 0;
        if (n > 0)
                return (size_t)n;
        rv_back(f, m);
        return 0;
}

/* More raw bytes into the feed (the end of the stream sets its eof): 0
 * or a read error. */
static int rv_read(struct tm_cursor *f, struct tm_err *err)
{
        size_t room;
        uint8_t *dst = tm_feed_space(&f->feed, &room);
        ssize_t k = tm_creader_read(f->r, dst, room, err);
        if (k < 0)
                return (int)k;
        if (k == 0)
                f->feed.eof = 1;
        tm_feed_commit(&f->feed, (size_t)k);
        return 0;
}

/* Decode the next batch. 1: records ready, 0: the end, < 0: error. */
static int rv_more(struct tm_cursor *f, struct tm_err *err)
{
        for (;;) {
                struct rv_mark m;
                rv_mark(f, &m);
                ssize_t n = tm_feed_decode(&f->feed, f->recs, RV_BATCH, err);
                if (n < 0) {
                        size_t k = rv_salvage(f, &m);
                        if (k == 0)
                                return (int)n;
                        n = (ssize_t)k; /* the next call fails again */
                }
                if (n > 0) {
                        f->rpos = 0;
                        f->rcount = (size_t)n;
                        return 1;
                }
                if (f->feed.eof)
                        return 0;
                int rc = rv_read(f, err);
                if (rc < 0)
                        return rc;
        }
}

/* The next record (decoding more when needed): 1 and *out, 0 at the end,
 * or an error. */
static int rv_take(struct tm_cursor *f, const struct tm_rec **out, struct tm_err *err)
{
        if (f->rpos == f->rcount) {
                int rc = rv_more(f, err);
                if (rc <= 0)
                        return rc;
        }
        const struct tm_rec *r = &f->recs[f->rpos];
        if (r->kind >= f->rt->schema.nkinds)
                return tm_err_set(err, -EIO, "raw offset %llu: record kind %u",
                                  (unsigned long long)f->feed.raw_off, r->kind);
        f->rpos++;
        *out = r;
        return 1;
}

/* The binary records of r[0..n) into dst: the family's, or generic. */
static void rv_binaries(const struct tm_cursor *f, uint8_t *dst, const struct tm_rec *r, size_t n)
{
        const struct tm_records *rt = f->rt;
        if (rt->fam && rt->fam->binary)
                rt->fam->binary(f->tables, dst, &rt->schema, r, n);
        else
                tm_text_binaries(dst, rt->plan, r, n);
}

/* r's bytes in this view into f->line, whole (0 bytes when the view
 * skips r). */
static void rv_render(struct tm_cursor *f, const struct tm_rec *r)
{
        const struct tm_records *rt = f->rt;
        const struct tm_schema *s = &rt->schema;
        f->line_pos = 0;
        switch (f->kind) {
        case RV_BINARY:
                rv_binaries(f, (uint8_t *)f->line, r, 1);
                f->line_len = f->recsize;
                return;
        case RV_FIELD: {
                int pos = rt->plan->kind[r->kind].pos[f->sel];
                f->line_len = pos < 0 ? 0 : tm_text_field(f->line, s, r, (unsigned)pos);
                return;
        }
        default:
                f->line_len = tm_index_len(s, rt->plan, rt->ix, f->col, r)
                                  ? tm_text_pline(f->line, f->plan, r)
                                  : 0;
                return;
        }
}

/* The next record's bytes in this view into f->line. 1, 0 at the end, or
 * an error. */
static int rv_next(struct tm_cursor *f, struct tm_err *err)
{
        const struct tm_rec *r;
        int rc = rv_take(f, &r, err);
        if (rc > 0)
                rv_render(f, r);
        return rc;
}

/* Move the cursor, whose next byte is at view offset pos with nothing of
 * a line pending, forward to off by decoding records and adding up their
 * lengths in this view, without rendering them (the record at off is). */
/* The lengths in this view of the records of the column batch f->cols
 * into f->lens (views rv_cols_init takes). */
static void rv_cols_lens(struct tm_cursor *f)
{
        const struct tm_rbatch *b = &f->cols;
        uint32_t *len = f->lens;
        if (f->kind == RV_BINARY) {
                for (size_t i = 0; i < b->n; i++)
                        len[i] = (uint32_t)f->recsize;
                return;
        }
        const struct tm_text_plan *p = f->plan;
        tm_text_batch_lens(p, b, len, NULL);
        for (size_t i = 0; i < b->n; i++)
                len[i] += p->kind[b->kind[i]].head_len;
        if (f->kind == RV_STREAM)
                for (size_t i = 0; i < b->n; i++)
                        len[i] = b->kind[i] == f->sel ? len[i] : 0;
}

/* Skip, by the column path, the whole records that end at or before view
 * offset off, *pos moving past them: records are decoded a batch at a
 * time and only their lengths computed; the batch that holds off's
 * record is decoded again up to it. Anything the column path does not
 * take (no batch pending, a decode error, a bad kind) is left to the
 * record path, which reports it. 0 or a read error. */
static int rv_skip_cols(struct tm_cursor *f, uint64_t *pos, uint64_t off, struct tm_err *err)
{
        if (!f->cols.cap || f->rpos != f->rcount)
                return 0;
        const unsigned nk = f->rt->schema.nkinds;
        while (*pos < off) {
                struct rv_mark m;
                rv_mark(f, &m);
                struct tm_err e = {0};
                ssize_t n = tm_feed_decode_batch(&f->feed, &f->cols, f->cols.cap, &e);
                int bad = n < 0;
                for (ssize_t i = 0; i < n && !bad; i++)
                        bad = f->cols.kind[i] >= nk;
                if (bad) {
                        rv_back(f, &m);
                        return 0;
                }
                if (n == 0) {
                        if (f->feed.eof)
                                return 0;
                        int rc = rv_read(f, err);
                        if (rc < 0)
                                return rc;
                        continue;
                }
                rv_cols_lens(f);
                size_t j = 0;
                uint64_t p = *pos;
                while (j < (size_t)n && p + f->lens[j] <= off)
                        p += f->lens[j++];
                if (j < (size_t)n) { /* off's record is in this batch: up to it */
                        rv_back(f, &m);
                        if (j && tm_feed_decode_batch(&f->feed, &f->cols, j, &e) != (ssize_t)j)
                                return tm_err_set(err, -EIO, "raw offset %llu: decoded differently",
                                                  (unsigned long long)m.raw_off);
                        *pos = p;
                        return 0;
                }
                *pos = p;
        }
        return 0;
}

static int rv_skip(struct tm_cursor *f, uint64_t pos, uint64_t off, struct tm_err *err)
{
        int rc = rv_skip_cols(f, &pos, off, err);
        if (rc < 0)
                return rc;
        while (pos < off) {
                const struct tm_rec *r;
                int rc = rv_take(f, &r, err);
                if (rc <= 0)
                        return rc ? rc : tm_err_set(err, -EIO, "view ends early");
                uint64_t len = f->kind == RV_BINARY ? f->recsize
                                                    : tm_index_len(&f->rt->schema, f->rt->plan,
                                                                   f->rt->ix, f->col, r);
                if (pos + len > off) {
                        rv_render(f, r);
                        f->line_pos = (size_t)(off - pos);
                        break;
                }
                pos += len;
        }
        return 0;
}

/* View offset of checkpoint i in this view. */
static uint64_t rv_ckpt_pos(const struct tm_cursor *f, uint32_t i)
{
        const struct tm_index *ix = f->rt->ix;
        uint64_t pos = ix->col[(size_t)i * ix->ncol + f->col];
        return f->kind == RV_BINARY ? pos * f->recsize : pos;
}

/* Position the cursor at view offset off. When the cursor is valid and
 * behind off with no checkpoint between (a readahead worker taking the
 * piece after next, a reader skipping forward), it goes on from where it
 * is: decoding only, without seeking the container back to the
 * checkpoint, which would decompress that stretch of the archive again.
 * Else from the last checkpoint at or before off. */
static int rv_seek(struct tm_cursor *f, uint64_t off, struct tm_err *err)
{
        const struct tm_index *ix = f->rt->ix;
        uint64_t key = f->kind == RV_BINARY ? off / f->recsize : off;
        uint32_t i = tm_index_find(ix, f->col, key);
        uint64_t ck = rv_ckpt_pos(f, i);
        if (f->valid && f->pos < off && ck <= f->pos) {
                size_t left = f->line_len - f->line_pos;
                if (off - f->pos < left) {
                        f->line_pos += (size_t)(off - f->pos);
                        return 0;
                }
                f->line_pos = f->line_len = 0;
                return rv_skip(f, f->pos + left, off, err);
        }
        int rc = tm_creader_seek(f->r, ix->raw[i], err);
        if (rc < 0)
                return rc;
        tm_feed_reset(&f->feed, ix->raw[i], ix->st + (size_t)i * ix->stsize);
        f->rpos = f->rcount = 0;
        f->line_len = f->line_pos = 0;
        return rv_skip(f, ck, off, err);
}

/* As many whole records as fit into dst[0..cap) straight from the decoded
 * batch (the fast renderers); returns the bytes written and moves rpos
 * past the records done. Stops before a record it leaves to rv_next. */
static size_t rv_batch(struct tm_cursor *f, char *dst, size_t cap)
{
        const struct tm_text_plan *p = f->rt->plan;
        const struct tm_rec *r = f->recs + f->rpos;
        size_t n = f->rcount - f->rpos, k = 0, w = 0;
        switch (f->kind) {
        case RV_ASCII:
        case RV_FORM:
                w = tm_text_lines(dst, cap, f->plan, r, n, &k);
                break;
        case RV_STREAM:
                w = tm_text_kind_lines(dst, cap, p, r, n, f->sel, &k);
                break;
        case RV_FIELD:
                w = tm_text_fields(dst, cap, p, r, n, f->sel, &k);
                break;
        case RV_BINARY:
                for (size_t m = cap / f->recsize; k < n && k < m && r[k].kind < p->nkinds;)
                        k++;
                rv_binaries(f, (uint8_t *)dst, r, k);
                w = k * f->recsize;
                break;
        default: /* sections: record by record */
                break;
        }
        f->rpos += k;
        return w;
}

/* Does f's view come from the codec's text decoder (tm_feed_text)?
 * ascii, and streams/<kind> when the row's decoder takes kinds. */
static int rv_texted(const struct tm_cursor *f)
{
        return f->feed.text &&
               (f->kind == RV_ASCII || (f->kind == RV_STREAM && f->rt->codec->text_kinds));
}

/* ascii or a stream through the codec's text decoder (tm_feed_text):
 * whole lines into dst (through the stage for a worker), then the next
 * line, whole, into f->line. Returns the bytes written to dst; nothing
 * anywhere leaves the next record to rv_next (more input, the end, an
 * error, records of other kinds only). */
static size_t rv_text(struct tm_cursor *f, char *dst, size_t n)
{
        const struct tm_text_plan *p = f->rt->plan;
        long kind = f->kind == RV_STREAM ? (long)f->sel : -1;
        char *o = f->stage ? f->stage : dst;
        size_t w =
            tm_feed_text(&f->feed, p, o, f->stage && n > RV_STAGE ? RV_STAGE : n, SIZE_MAX, kind);
        if (f->stage)
                memcpy(dst, f->stage, w);
        f->line_pos = 0;
        f->line_len = w < n ? tm_feed_text(&f->feed, p, f->line,
                                           tm_text_line_max(&f->rt->schema, TM_FEED_CAP), 1, kind)
                            : 0;
        return w;
}

/* binary through the codec's binary decoder (tm_feed_binary): whole
 * records into dst, and when less than one is left, the next into
 * f->line. Returns the bytes written to dst, as rv_text. */
static size_t rv_bin(struct tm_cursor *f, char *dst, size_t n)
{
        size_t w = tm_feed_binary(&f->feed, (uint8_t *)dst, n, SIZE_MAX);
        f->line_pos = 0;
        f->line_len = w < n && n - w < f->recsize
                          ? tm_feed_binary(&f->feed, (uint8_t *)f->line, f->recsize, 1)
                          : 0;
        return w;
}

static ssize_t rv_fill(struct tm_cursor *f, char *dst, size_t n, struct tm_err *err)
{
        size_t done = 0;
        while (done < n) {
                if (f->line_pos < f->line_len) {
                        size_t c = f->line_len - f->line_pos;
                        if (c > n - done)
                                c = n - done;
                        memcpy(dst + done, f->line + f->line_pos, c);
                        f->line_pos += c;
                        done += c;
                        continue;
                }
                if (f->rpos < f->rcount && f->stage) {
                        size_t room = n - done < RV_STAGE ? n - done : RV_STAGE;
                        size_t w = rv_batch(f, f->stage, room);
                        memcpy(dst + done, f->stage, w);
                        done += w;
                        if (done == n)
                                break;
                        if (w && f->rpos < f->rcount)
                                continue; /* the stage was full: more of the batch */
                } else if (f->rpos < f->rcount) {
                        done += rv_batch(f, dst + done, n - done);
                        if (done == n)
                                break;
                }
                if (f->rpos == f->rcount &&
                    (rv_texted(f) || (f->kind == RV_BINARY && f->feed.bin))) {
                        size_t w = f->kind == RV_BINARY ? rv_bin(f, dst + done, n - done)
                                                        : rv_text(f, dst + done, n - done);
                        done += w;
                        if (w || f->line_len)
                                continue;
                }
                int rc = rv_next(f, err);
                if (rc < 0)
                        return done ? (ssize_t)done : rc;
                if (rc == 0)
                        break;
        }
        return (ssize_t)done;
}

ssize_t tm_records_pread(struct tm_cursor *f, void *buf, size_t n, uint64_t off, struct tm_err *err)
{
        if (off >= f->size || n == 0)
                return 0;
        if (n > f->size - off)
                n = (size_t)(f->size - off);
        if (f->kind == RV_STATS || f->kind == RV_SCHEMA || f->kind == RV_BLOB) {
                const char *text = f->text;
                size_t len;
                int rc = f->kind == RV_STATS ? rv_stats(f->t, &text, &len, err) : 0;
                if (rc < 0)
                        return rc;
                memcpy(buf, text + off, n);
                return (ssize_t)n;
        }
        tm_hmem_begin(&f->hm);
        int rc = f->r ? 0 : rv_state_open(f, err); /* parked */
        if (rc == 0 && (!f->valid || f->pos != off)) {
                rc = f->kind == RV_RAW ? tm_creader_seek(f->r, off, err) : rv_seek(f, off, err);
                f->valid = rc == 0;
                f->pos = off;
        }
        ssize_t got = rc;
        if (rc == 0)
                got = f->kind == RV_RAW ? tm_creader_read_full(f->r, buf, n, err)
                                        : rv_fill(f, buf, n, err);
        got = tm_trace_read_done(f->t, got, n, off, &f->valid, &f->pos, err);
        tm_hmem_end(&f->hm, rv_state_bytes(f));
        return got;
}
