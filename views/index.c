/* The checkpoint index: the pass, lookups, and what every pass shares
 * (index.h). Its file: index_file.c. */
#include "index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../codecs/record/text.h"
#include "feed.h"


size_t tm_scan_front(struct tm_scan_front *s, const uint8_t **buf, size_t n)
{
        s->seen += n;
        if (s->progress && s->seen >= s->next_progress) {
                uint64_t total = 0;
                tm_cont_raw_size(s->cont, &total);
                s->progress(s->arg, s->seen, total);
                s->next_progress = s->seen + TM_SCAN_PROGRESS_EVERY;
        }
        if (s->limited && s->seen > s->limit) {
                uint64_t over = s->seen - s->limit;
                n = over >= n ? 0 : n - (size_t)over;
                s->stop = 1;
        }
        size_t k = n < s->skip ? n : (size_t)s->skip;
        *buf += k;
        s->skip -= k;
        return n - k;
}

int tm_scan_unverified(struct tm_cont *c, uint64_t end, uint64_t *limit, struct tm_err *err)
{
        if (end <= tm_cont_scan_good(c) || tm_cont_unverified(c)) /* asked for: kept */
                return 0;
        struct tm_err e = {0};
        int rc = tm_cont_scan(c, NULL, NULL, &e);
        if (rc == -ENOMEM)
                return tm_err_set(err, rc, "out of memory");
        if (rc == 0)
                return 0;
        if (err)
                *err = e;
        *limit = tm_cont_scan_good(c);
        return 1;
}

int tm_scan_end(const struct tm_scan_front *s, size_t left, uint64_t raw_off, struct tm_err *err)
{
        if (left)
                return tm_err_set(err, -EIO, "raw offset %llu: %zu bytes after the last record",
                                  (unsigned long long)raw_off, left);
        if (s->skip)
                return tm_err_set(err, -EIO, "raw offset %llu: truncated header",
                                  (unsigned long long)s->seen);
        return 0;
}

int tm_scan_result(int rc, struct tm_err *err)
{
        if (rc > 0)
                rc = -EIO;
        if (rc < 0 && rc != -ENOMEM) { /* damage: keep the intact prefix */
                if (err && !err->code)
                        tm_err_set(err, rc, "cannot index");
                return TM_INDEX_PREFIX;
        }
        return rc;
}

/* One pass; limit: NULL, or the raw offset past which nothing is decoded
 * (tm_scan_unverified). */
int tm_index_differ(struct tm_err *err, const char *what, uint64_t i)
{
        return tm_err_set(err, -EIO, "index differs from the archive: %s (%llu)", what,
                          (unsigned long long)i);
}

#define BUILD_BATCH 256
#define BUILD_COLS 4096 /* records of a column batch (a decode call has a set-up) */

void tm_index_free(struct tm_index *ix)
{
        if (!ix)
                return;
        free(ix->raw);
        free(ix->col);
        free(ix->st);
        free(ix->tot);
        free(ix);
}

static int index_reserve(struct tm_index *ix, uint32_t cap)
{
        uint64_t *raw = realloc(ix->raw, cap * sizeof *raw);
        if (raw)
                ix->raw = raw;
        uint64_t *col = realloc(ix->col, (size_t)cap * ix->ncol * sizeof *col);
        if (col)
                ix->col = col;
        uint8_t *st = realloc(ix->st, (size_t)cap * ix->stsize + 1);
        if (st)
                ix->st = st;
        if (!raw || !col || !st)
                return -ENOMEM;
        ix->cap = cap;
        return 0;
}

int tm_index_at_point(const struct tm_index *ix, const struct tm_cont *c, uint32_t i)
{
        uint64_t cost = tm_cont_restart_cost(c, ix->raw[i]);
        return i == 0 || (cost <= TM_INDEX_ALIGN_SLACK && cost < ix->raw[i] - ix->raw[i - 1]);
}

static uint64_t ck_rec(const struct tm_index *ix, uint32_t i)
{
        return ix->col[(size_t)i * ix->ncol + TM_COL_REC];
}

/* Checkpoint i moved down to m (m <= i): thinning keeps it. */
static void ck_move(struct tm_index *ix, uint32_t m, uint32_t i)
{
        ix->raw[m] = ix->raw[i];
        memmove(ix->col + (size_t)m * ix->ncol, ix->col + (size_t)i * ix->ncol,
                ix->ncol * sizeof *ix->col);
        memmove(ix->st + (size_t)m * ix->stsize, ix->st + (size_t)i * ix->stsize, ix->stsize);
}

/* Does index_halve keep checkpoint i (0 < i < n), last the records before
 * the last one kept, end those counted? Yes when it starts at a restart
 * point of the container, or when dropping it would leave more than the
 * new spacing before the next (or the end). */
static int halve_keeps(const struct tm_index *ix, const struct tm_cont *c, uint64_t end,
                       uint32_t i, uint64_t last)
{
        uint64_t next = i + 1 < ix->n ? ck_rec(ix, i + 1) : end;
        return next - last > 2 * ix->k || tm_index_at_point(ix, c, i);
}

/* Double the spacing, keeping checkpoint 0 and those halve_keeps keeps;
 * when those are more than three quarters, or c is NULL (checkpoints not
 * placed at restart points: rbuild.aligned), every other one instead.
 * Both leave at most twice the old spacing between two checkpoints, as
 * the old ones are at most k apart; every other one of K-spaced
 * checkpoints is what a pass with twice the spacing takes (verify makes
 * one). (Moving kept ones down leaves raw[i - 1] as it was when
 * checkpoint i is considered: only i - 1 itself is written there.) */
static void index_halve(struct tm_index *ix, const struct tm_cont *c, uint64_t end)
{
        uint32_t m = 1;
        for (uint32_t i = 1, last = 0; c && i < ix->n; i++)
                if (halve_keeps(ix, c, end, i, ck_rec(ix, last)))
                        m++, last = i;
        int greedy = c && (uint64_t)m * 4 <= (uint64_t)ix->n * 3;
        m = 1;
        for (uint32_t i = 1, last = 0; i < ix->n; i++) {
                if (greedy ? !halve_keeps(ix, c, end, i, ck_rec(ix, last)) : i % 2)
                        continue;
                ck_move(ix, m, i);
                last = m++;
        }
        ix->n = m;
        ix->k *= 2;
}

uint32_t tm_index_find(const struct tm_index *ix, unsigned col, uint64_t v)
{
        uint32_t lo = 0, hi = ix->n; /* col[lo] <= v; answer in [lo, hi) */
        while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (ix->col[(size_t)mid * ix->ncol + col] <= v)
                        lo = mid;
                else
                        hi = mid;
        }
        return lo;
}

/* Does r's kind have the per-id stream field (schema field tf)? Then 1
 * and its value in *t. */
static int rec_stream_id(const struct tm_text_plan *p, int tf, const struct tm_rec *r, uint64_t *t)
{
        int pos = tf < 0 ? -1 : p->kind[r->kind].pos[tf];
        if (pos < 0)
                return 0;
        *t = r->v[pos];
        return 1;
}

uint64_t tm_index_len(const struct tm_schema *s, const struct tm_text_plan *p,
                       const struct tm_index *ix, unsigned col, const struct tm_rec *r)
{
        if (col == TM_COL_REC)
                return 1;
        if (col == TM_COL_ASCII)
                return tm_text_line_len(p, r);
        if (col < 2 + s->nkinds)
                return r->kind == col - 2 ? tm_text_line_len(p, r) : 0;
        if (col >= tm_col_stream(s, 0)) {
                unsigned j = col - tm_col_stream(s, 0);
                const uint64_t *ids;
                uint64_t t;
                return j < tm_stats_stream_ids(&ix->stats, s, &ids) &&
                               rec_stream_id(p, tm_family_stream_field(s), r, &t) && t == ids[j]
                           ? tm_text_line_len(p, r)
                           : 0;
        }
        if (col >= tm_col_form(s, 0))
                return tm_text_line_len(&p[1 + col - tm_col_form(s, 0)], r);
        if (col >= tm_col_section(s, 0))
                return r->section == col - tm_col_section(s, 0) + 1 ? tm_text_line_len(p, r)
                                                                     : 0;
        int pos = p->kind[r->kind].pos[col - 2 - s->nkinds];
        return pos < 0 ? 0 : tm_text_field_len(p, r, (unsigned)pos);
}

struct tm_text_plan *tm_index_plans(const struct tm_schema *s)
{
        if (s->nforms > TM_SCHEMA_FORMS_MAX)
                return NULL;
        struct tm_text_plan *p = malloc((1 + s->nforms) * sizeof *p);
        if (!p)
                return NULL;
        for (unsigned i = 0; i <= s->nforms; i++)
                if (tm_text_plan_form(&p[i], s, i ? &s->form[i - 1] : NULL) < 0) {
                        free(p);
                        return NULL;
                }
        return p;
}

/* ---- the pass ---- */

struct rbuild {
        struct tm_index *ix;
        const struct tm_schema *s;
        struct tm_feed feed;
        struct tm_rec recs[BUILD_BATCH];
        struct tm_stats_acc *acc;
        uint64_t *at; /* running positions, ncol */
        uint64_t next_ckpt;
        struct tm_scan_front front;
        struct tm_text_plan *plan;
        int tf;        /* per-id stream field, or -1 */
        unsigned ntid; /* its ids seen, at most TM_FAMILY_STREAMS_MAX */
        uint64_t tid[TM_FAMILY_STREAMS_MAX];
        struct tm_cont *cont;
        struct tm_err *err;
        int one;           /* after a decode error: one record at a time */
        int slow;          /* one record at a time up to next_pt */
        int have_pt;       /* next_pt is the container's next restart point */
        /* The restart points were known when the pass began (a zstd seek
         * table), so checkpoints are taken at them and thinning keeps
         * them. Else (gzip's access points, the frames of zstd without a
         * seek table: found by the pass itself) a checkpoint near one is
         * there by chance and the checkpoints stay K-spaced. */
        int aligned;
        uint64_t next_pt;
        const struct tm_index *like; /* checkpoints where it has them, or NULL */
        uint64_t good_raw; /* raw offset after the last record counted */
        struct tm_rstate mark;
        /* the column path (tm_rcodec.decode_batch), when the codec has
         * one and the schema no sections; else batch.cap is 0 */
        struct tm_rbatch batch;
        uint32_t *line, *fline; /* [batch.cap] */
        uint64_t kind_n[TM_SCHEMA_KINDS_MAX]; /* the batch's records per kind */
};

static int build_ckpt(struct rbuild *b)
{
        struct tm_index *ix = b->ix;
        if (ix->n == ix->cap && ix->cap < TM_CKPT_CAP &&
            index_reserve(ix, ix->cap * 4 < TM_CKPT_CAP ? ix->cap * 4 : TM_CKPT_CAP) < 0)
                return tm_err_set(b->err, -ENOMEM, "out of memory");
        if (ix->n == TM_CKPT_CAP)
                index_halve(ix, b->aligned ? b->cont : NULL, b->at[TM_COL_REC]);
        uint32_t i = ix->n++;
        ix->raw[i] = b->feed.raw_off;
        memcpy(ix->col + (size_t)i * ix->ncol, b->at, ix->ncol * sizeof *b->at);
        memcpy(ix->st + (size_t)i * ix->stsize, b->feed.st.b, ix->stsize);
        b->next_ckpt = b->at[TM_COL_REC] + ix->k;
        if (b->like) /* its records before checkpoint i + 1 (increasing: index_file.c) */
                b->next_ckpt = i + 1 < b->like->n ? ck_rec(b->like, i + 1) : UINT64_MAX;
        return 0;
}

/* A record of per-id stream id t adds line bytes to that id's column;
 * ids get columns in the order of their first appearance, as the
 * family's stream_ids lists them, the first TM_FAMILY_STREAMS_MAX only. */
static void build_stream(struct rbuild *b, uint64_t t, uint64_t line)
{
        unsigned j = 0;
        while (j < b->ntid && b->tid[j] != t)
                j++;
        if (j == b->ntid && j < TM_FAMILY_STREAMS_MAX)
                b->tid[b->ntid++] = t;
        if (j < TM_FAMILY_STREAMS_MAX)
                b->at[tm_col_stream(b->s, j)] += line;
}

static void build_account(struct rbuild *b, const struct tm_rec *r)
{
        const struct tm_schema *s = b->s;
        const struct tm_kind *k = &s->kind[r->kind];
        uint64_t tok[TM_KIND_FIELDS_MAX];
        uint64_t line = tm_text_lens(b->plan, r, tok);
        for (unsigned i = 0; i < k->nfields; i++)
                b->at[tm_col_field(s, k->field[i])] += tok[i];
        b->at[TM_COL_REC]++;
        b->at[TM_COL_ASCII] += line;
        b->at[tm_col_kind(r->kind)] += line;
        if (r->section && r->section <= s->nsections)
                b->at[tm_col_section(s, r->section - 1)] += line;
        for (unsigned i = 0; i < s->nforms; i++)
                b->at[tm_col_form(s, i)] += tm_text_line_len(&b->plan[1 + i], r);
        uint64_t t;
        if (rec_stream_id(b->plan, b->tf, r, &t))
                build_stream(b, t, line);
}

/* Account the records of the column batch, as build_account does one.
 * The lengths come without the kinds' labels, which are added per kind. */
static void build_account_batch(struct rbuild *b)
{
        const struct tm_schema *s = b->s;
        const struct tm_rbatch *bt = &b->batch;
        size_t n = bt->n;
        tm_text_batch_lens(&b->plan[0], bt, b->line, &b->at[tm_col_field(s, 0)]);
        uint64_t sum[TM_SCHEMA_KINDS_MAX] = {0}, ascii = 0;
        memset(b->kind_n, 0, sizeof b->kind_n);
        tm_rbatch_kinds(bt, b->line, b->kind_n, sum);
        for (unsigned k = 0; k < s->nkinds; k++) {
                uint64_t bytes = sum[k] + b->kind_n[k] * b->plan[0].kind[k].head_len;
                b->at[tm_col_kind(k)] += bytes;
                ascii += bytes;
        }
        b->at[TM_COL_REC] += n;
        b->at[TM_COL_ASCII] += ascii;
        for (unsigned j = 0; j < s->nforms; j++) {
                const struct tm_text_plan *fp = &b->plan[1 + j];
                uint64_t bytes = 0;
                tm_text_batch_lens(fp, bt, b->fline, NULL);
                for (size_t i = 0; i < n; i++)
                        bytes += b->fline[i];
                for (unsigned k = 0; k < s->nkinds; k++)
                        bytes += b->kind_n[k] * fp->kind[k].head_len;
                b->at[tm_col_form(s, j)] += bytes;
        }
        for (size_t i = 0; b->tf >= 0 && i < n; i++) {
                const struct tm_text_kind *pk = &b->plan[0].kind[bt->kind[i]];
                if (pk->pos[b->tf] < 0)
                        continue;
                build_stream(b, bt->col[b->tf][i], b->line[i] + pk->head_len);
        }
}

/* Decode everything the feed holds; a failed batch is decoded again one
 * record at a time from its start, so that every record before the damage
 * is counted (as index.c does). */
static int build_drain(struct rbuild *b)
{
        for (;;) {
                uint64_t cap = b->next_ckpt - b->at[TM_COL_REC];
                if (b->one || b->slow)
                        cap = 1;
                memcpy(b->mark.b, b->feed.st.b, b->ix->stsize);
                size_t pos = b->feed.pos;
                uint64_t raw = b->feed.raw_off;
                int cols = b->batch.cap && !b->one && !b->slow;
                ssize_t n;
                if (cols) {
                        n = tm_feed_decode_batch(&b->feed, &b->batch,
                                                  cap < b->batch.cap ? (size_t)cap : b->batch.cap,
                                                  b->err);
                        uint32_t nk = b->s->nkinds, bad = 0;
                        for (ssize_t i = 0; i < n; i++)
                                bad |= b->batch.kind[i] >= nk;
                        for (ssize_t i = 0; bad && i < n; i++)
                                if (b->batch.kind[i] >= nk)
                                        n = tm_err_set(b->err, -EIO,
                                                       "raw offset %llu: record kind %u",
                                                       (unsigned long long)b->feed.raw_off,
                                                       b->batch.kind[i]);
                } else {
                        n = tm_feed_decode(&b->feed, b->recs,
                                            cap < BUILD_BATCH ? (size_t)cap : BUILD_BATCH, b->err);
                        for (ssize_t i = 0; i < n; i++)
                                if (b->recs[i].kind >= b->s->nkinds)
                                        n = tm_err_set(b->err, -EIO,
                                                       "raw offset %llu: record kind %u",
                                                       (unsigned long long)b->feed.raw_off,
                                                       b->recs[i].kind);
                }
                /* a failed batch, or one that ran past a restart point
                 * (the checkpoint goes at the first record after it):
                 * again, a record at a time */
                int past = n > 1 && b->have_pt && b->feed.raw_off > b->next_pt;
                if ((n < 0 && !b->one) || past) {
                        b->one |= n < 0;
                        b->slow |= past;
                        memcpy(b->feed.st.b, b->mark.b, b->ix->stsize);
                        b->feed.pos = pos;
                        b->feed.raw_off = raw;
                        continue;
                }
                if (n <= 0)
                        return (int)n;
                if (cols) {
                        build_account_batch(b);
                        tm_stats_add_batch(b->acc, &b->batch, b->kind_n);
                } else {
                        for (ssize_t i = 0; i < n; i++)
                                build_account(b, &b->recs[i]);
                        tm_stats_add(b->acc, b->recs, (size_t)n);
                }
                b->good_raw = b->feed.raw_off;
                int at_pt = b->have_pt && b->feed.raw_off >= b->next_pt;
                if (at_pt) {
                        b->slow = 0;
                        b->have_pt = tm_cont_next_point(b->cont, b->feed.raw_off, &b->next_pt);
                }
                if ((at_pt || b->at[TM_COL_REC] == b->next_ckpt) && build_ckpt(b) < 0)
                        return -ENOMEM;
        }
}

static int build_sink(void *arg, const uint8_t *buf, size_t n)
{
        struct rbuild *b = arg;
        n = tm_scan_front(&b->front, &buf, n);
        while (n) {
                size_t room;
                uint8_t *dst = tm_feed_space(&b->feed, &room);
                size_t c = n < room ? n : room;
                memcpy(dst, buf, c);
                tm_feed_commit(&b->feed, c);
                buf += c;
                n -= c;
                int rc = build_drain(b);
                if (rc < 0)
                        return rc;
        }
        return b->front.stop;
}

static int build_finish(struct rbuild *b)
{
        b->feed.eof = 1;
        int rc = build_drain(b);
        return rc < 0 ? rc
                      : tm_scan_end(&b->front, b->feed.len - b->feed.pos, b->feed.raw_off, b->err);
}

/* How many checkpoints of ix are at restart points of c. */
static uint32_t points_of(const struct tm_index *ix, const struct tm_cont *c)
{
        uint32_t a = 0;
        for (uint32_t i = 0; i < ix->n; i++)
                a += (uint32_t)tm_index_at_point(ix, c, i);
        return a;
}

/* Keep only checkpoints at restart points, at most max of them (>= 2):
 * every one, or every second, third... so that they fit; K becomes the
 * most records between two (or after the last, end the records counted).
 * Returns whether it did (it needs two such checkpoints). As in
 * index_halve, raw[i - 1] is as it was when i is considered. */
static int index_keep_points(struct tm_index *ix, const struct tm_cont *c, uint64_t end,
                              uint64_t max)
{
        uint32_t a = points_of(ix, c);
        if (a < 2 || max < 2)
                return 0;
        uint64_t step = (a + max - 1) / max, k = 1;
        uint32_t m = 0, j = 0;
        for (uint32_t i = 0; i < ix->n; i++) {
                if (!tm_index_at_point(ix, c, i) || j++ % step)
                        continue;
                if (m && ck_rec(ix, i) - ck_rec(ix, m - 1) > k)
                        k = ck_rec(ix, i) - ck_rec(ix, m - 1);
                ck_move(ix, m++, i);
        }
        ix->n = m; /* >= 2: a >= 2 and step <= a - 1 */
        ix->k = end - ck_rec(ix, m - 1) > k ? end - ck_rec(ix, m - 1) : k;
        return 1;
}

/* The totals, from what has been counted (all, or the intact prefix).
 * Over the size budget, when checkpoints were placed at restart points
 * (aligned) and those are at least half of what fits: those alone, as
 * many as fit (halving keeps them only while the others it must keep are
 * few, then every other one: a heaptrack trace in 15 frames kept 4, and
 * its read-ahead held ~11 pieces of each interval in fresh memory); else,
 * or with fewer than two of them, halving, which keeps them and others
 * between. (A 10 MB PDATS trace in gzip, whose three access points some
 * checkpoints were near by chance, had kept 4 checkpoints 5.9 M records
 * apart where halving keeps 152: a random read cost 118 ms, not 20; a
 * PDATS II trace of 2e7 references in 21 frames kept those 21 where 174
 * fit: random reads of ascii 3x slower, its read-ahead in pieces.) */
static void build_totals(struct rbuild *b, int budgeted)
{
        struct tm_index *ix = b->ix;
        const struct tm_cont *pts = b->aligned ? b->cont : NULL;
        uint64_t per = 8 * (1 + (uint64_t)ix->ncol) + ix->stsize;
        uint64_t budget = tm_cont_archive_size(b->cont) / TM_INDEX_BUDGET_DIV;
        uint64_t floor = (b->at[TM_COL_REC] / TM_INDEX_KEEP_REFS + 2) * per;
        budget = budget > floor ? budget : floor;
        if (budgeted && pts && ix->n > 1 && (uint64_t)ix->n * per > budget &&
            2 * points_of(ix, pts) >= budget / per)
                index_keep_points(ix, pts, b->at[TM_COL_REC], budget / per);
        while (budgeted && ix->n > 1 && (uint64_t)ix->n * per > budget)
                index_halve(ix, pts, b->at[TM_COL_REC]);
        memcpy(ix->tot, b->at, ix->ncol * sizeof *b->at);
        ix->raw_size = b->good_raw;
        ix->stats = *tm_stats_get(b->acc);
}

static void batch_free(struct rbuild *b)
{
        tm_rbatch_free(&b->batch);
        free(b->line);
        free(b->fline);
}

/* The column path's buffers, with an arena when the schema has variable
 * fields, when it has no sections (a batch's records are outside any:
 * else none, batch.cap stays 0). 0 or -ENOMEM. */
static int batch_init(struct rbuild *b)
{
        const struct tm_schema *s = b->s;
        if (s->nsections)
                return 0;
        if (tm_rbatch_init(&b->batch, s->nfields, BUILD_COLS) < 0 ||
            (tm_schema_has_var(s) && tm_rbatch_arena(&b->batch, TM_RBATCH_ARENA) < 0))
                return -ENOMEM;
        b->line = malloc(BUILD_COLS * sizeof *b->line);
        b->fline = malloc(BUILD_COLS * sizeof *b->fline);
        return b->line && b->fline ? 0 : -ENOMEM;
}

/* One pass; limit: NULL, or the raw offset past which nothing is decoded
 * (tm_scan_unverified); like: NULL, or the index whose checkpoints to take
 * (tm_index_build_like), with k its K. */
static int index_pass(struct tm_cont *c, const struct tm_rcodec *codec, void *ctx,
                       const struct tm_schema *s, uint64_t hdr_len, const struct tm_rstate *st0,
                       uint64_t k, const struct tm_index *like, tm_progress_fn progress, void *arg,
                       const uint64_t *limit, struct tm_index **out, struct tm_err *err)
{
        struct rbuild *b = calloc(1, sizeof *b);
        struct tm_index *ix = calloc(1, sizeof *ix);
        int rc = -ENOMEM;
        if (!b || !ix)
                goto fail;
        ix->ncol = tm_col_count(s);
        ix->fam = tm_family_of(s);
        if (ix->fam && !ix->fam->stats_size)
                ix->fam = NULL;
        ix->stsize = codec->state_size;
        ix->k = k ? k : TM_CKPT_REFS_DEFAULT;
        b->ix = ix;
        b->s = s;
        b->at = calloc(ix->ncol, sizeof *b->at);
        ix->tot = calloc(ix->ncol, sizeof *ix->tot);
        b->plan = tm_index_plans(s);
        b->acc = tm_stats_start(s);
        if (!b->at || !ix->tot || !b->plan || !b->acc || index_reserve(ix, 64) < 0 ||
            tm_feed_init(&b->feed, codec, ctx) < 0)
                goto fail;
        b->tf = tm_family_stream_field(s);
        if (codec->decode_batch && batch_init(b) < 0)
                goto fail;
        tm_feed_reset(&b->feed, hdr_len, st0->b);
        b->front = (struct tm_scan_front){.skip = hdr_len,
                                          .next_progress = TM_SCAN_PROGRESS_EVERY,
                                          .progress = progress,
                                          .arg = arg,
                                          .cont = c,
                                          .limit = limit ? *limit : 0,
                                          .limited = limit != NULL};
        b->cont = c;
        b->err = err;
        b->good_raw = hdr_len;
        b->like = like;
        b->have_pt = !like && tm_cont_next_point(c, hdr_len, &b->next_pt);
        b->aligned = b->have_pt;
        if ((rc = build_ckpt(b)) < 0)
                goto fail;
        rc = tm_cont_scan(c, build_sink, b, err);
        if (rc == 0)
                rc = build_finish(b);
        rc = tm_scan_result(rc, err);
        if (rc < 0)
                goto fail;
        build_totals(b, k == 0);
        if (rc == 0 && progress) /* the last call says all done */
                progress(arg, b->front.seen, b->front.seen);
        *out = ix;
        ix = NULL;
fail:
        if (rc == -ENOMEM && err && !err->code)
                tm_err_set(err, rc, "out of memory");
        if (b) {
                tm_feed_free(&b->feed);
                tm_stats_free(b->acc);
                batch_free(b);
                free(b->plan);
                free(b->at);
        }
        free(b);
        tm_index_free(ix);
        return rc;
}

/* tm_index_build, with checkpoints where like has them when it is not
 * NULL. */
static int index_build(struct tm_cont *c, const struct tm_rcodec *codec, void *ctx,
                        const struct tm_schema *s, uint64_t hdr_len, const struct tm_rstate *st0,
                        uint64_t k, const struct tm_index *like, tm_progress_fn progress,
                        void *arg, struct tm_index **out, struct tm_err *err)
{
        int rc =
            index_pass(c, codec, ctx, s, hdr_len, st0, k, like, progress, arg, NULL, out, err);
        uint64_t limit;
        int cut = rc == TM_INDEX_PREFIX ? tm_scan_unverified(c, (*out)->raw_size, &limit, err) : 0;
        if (cut == 0)
                return rc;
        tm_index_free(*out);
        *out = NULL;
        if (cut < 0)
                return cut;
        struct tm_err damage = err ? *err : (struct tm_err){0};
        rc = index_pass(c, codec, ctx, s, hdr_len, st0, k, like, NULL, NULL, &limit, out, err);
        if (err && rc >= 0)
                *err = damage;
        if (rc >= 0)
                (*out)->head_unverified = limit < hdr_len;
        return rc == 0 ? TM_INDEX_PREFIX : rc;
}

int tm_index_build(struct tm_cont *c, const struct tm_rcodec *codec, void *ctx,
                    const struct tm_schema *s, uint64_t hdr_len, const struct tm_rstate *st0,
                    uint64_t k, tm_progress_fn progress, void *arg, struct tm_index **out,
                    struct tm_err *err)
{
        return index_build(c, codec, ctx, s, hdr_len, st0, k, NULL, progress, arg, out, err);
}

int tm_index_build_like(struct tm_cont *c, const struct tm_rcodec *codec, void *ctx,
                         const struct tm_schema *s, uint64_t hdr_len, const struct tm_rstate *st0,
                         const struct tm_index *like, tm_progress_fn progress, void *arg,
                         struct tm_index **out, struct tm_err *err)
{
        return index_build(c, codec, ctx, s, hdr_len, st0, like->k, like, progress, arg, out, err);
}
