#include "index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../codecs/common/tm_io.h"
#include "feed.h"
#include "ixfile.h"
#include "../codecs/address/render.h"

#define BUILD_BATCH 4096
#define BUILD_FEED (256u << 10)

/* An index with room for cap checkpoints (grown by build_checkpoint). */
static struct tm_index *index_alloc(uint32_t cap)
{
        struct tm_index *ix = calloc(1, sizeof *ix);
        if (!ix)
                return NULL;
        ix->ck = calloc(cap, sizeof *ix->ck);
        if (!ix->ck) {
                free(ix);
                return NULL;
        }
        ix->cap = cap;
        return ix;
}

void tm_index_free(struct tm_index *ix)
{
        if (!ix)
                return;
        free(ix->ck);
        free(ix);
}

/* ---- the index pass ---- */

struct build {
        struct tm_index *ix;
        struct tm_feed feed;
        struct tm_ref refs[BUILD_BATCH];
        struct tm_stats_acc acc;
        struct tm_ckpt at; /* running positions; .st unused */
        uint64_t next_ckpt;
        struct tm_scan_front front;
        struct tm_cont *cont;
        struct tm_err *err;
        int budgeted;      /* default spacing: thin to the size budget */
        int one;           /* after a decode error: one reference at a time */
        uint64_t good_raw; /* raw offset after the last reference counted */
};

/* Keep every other checkpoint (the start stays) and double the spacing. */
static void index_halve(struct tm_index *ix)
{
        for (uint32_t i = 0; i < (ix->n + 1) / 2; i++)
                ix->ck[i] = ix->ck[2 * i];
        ix->n = (ix->n + 1) / 2;
        ix->k *= 2;
}

static int build_checkpoint(struct build *b)
{
        struct tm_index *ix = b->ix;
        if (ix->n == ix->cap && ix->cap < TM_CKPT_CAP) {
                uint32_t cap = ix->cap * 4 < TM_CKPT_CAP ? ix->cap * 4 : TM_CKPT_CAP;
                struct tm_ckpt *ck = realloc(ix->ck, cap * sizeof *ck);
                if (!ck)
                        return tm_err_set(b->err, -ENOMEM, "out of memory");
                ix->ck = ck;
                ix->cap = cap;
        }
        if (ix->n == TM_CKPT_CAP)
                index_halve(ix);
        struct tm_ckpt *c = &ix->ck[ix->n++];
        *c = b->at;
        c->raw_off = b->feed.raw_off;
        c->st = b->feed.st;
        b->next_ckpt = b->at.rec + ix->k;
        return 0;
}

static void build_account(struct build *b, const struct tm_ref *r, size_t n)
{
        struct tm_ckpt *at = &b->at;
        uint64_t ascii = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned t = r[i].type & (TM_NTYPES - 1);
                unsigned len = tm_render_din_len(r[i].addr);
                ascii += len;
                at->type_rec[t]++;
                at->type_off[t] += len;
        }
        at->rec += n;
        at->ascii_off += ascii;
        tm_stats_add(&b->acc, r, n);
}

/* Decode everything the feed holds. A failed batch is decoded again one
 * reference at a time from where it started (the decoder's state is
 * undefined after an error), so that every reference before the damage is
 * counted and the intact prefix ends right before the bad one. */
static int build_drain(struct build *b)
{
        for (;;) {
                size_t cap = b->next_ckpt - b->at.rec;
                if (cap > BUILD_BATCH)
                        cap = BUILD_BATCH;
                if (b->one)
                        cap = 1;
                struct tm_dec_state st = b->feed.st;
                size_t pos = b->feed.pos;
                uint64_t raw = b->feed.raw_off;
                ssize_t n = tm_feed_decode(&b->feed, b->refs, cap, b->err);
                for (ssize_t i = 0; i < n; i++)
                        if (b->refs[i].type >= TM_NTYPES)
                                n = tm_err_set(b->err, -EIO, "raw offset %llu: reference type %u",
                                               (unsigned long long)b->feed.raw_off,
                                               b->refs[i].type);
                if (n < 0 && !b->one) {
                        b->one = 1;
                        b->feed.st = st;
                        b->feed.pos = pos;
                        b->feed.raw_off = raw;
                        continue;
                }
                if (n <= 0)
                        return (int)n;
                build_account(b, b->refs, (size_t)n);
                b->good_raw = b->feed.raw_off;
                if (b->at.rec == b->next_ckpt && build_checkpoint(b) < 0)
                        return -ENOMEM;
        }
}

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
        if (end <= tm_cont_scan_good(c))
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

static int build_sink(void *arg, const uint8_t *buf, size_t n)
{
        struct build *b = arg;
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

/* The totals, from what has been counted (all of it, or the intact
 * prefix before damage). */
static void build_totals(struct build *b)
{
        tm_stats_finish(&b->acc);
        struct tm_index *ix = b->ix;
        /* With the default spacing, the checkpoints of a highly compressed
         * archive could outweigh 1% of it: thin them to fit the budget. */
        uint64_t budget = tm_cont_archive_size(b->cont) / TM_INDEX_BUDGET_DIV;
        while (b->budgeted && ix->n > 1 && (uint64_t)ix->n * TM_CKPT_BYTES > budget)
                index_halve(ix);
        ix->raw_size = b->good_raw;
        ix->nrefs = b->at.rec;
        ix->ascii_size = b->at.ascii_off;
        memcpy(ix->type_refs, b->at.type_rec, sizeof ix->type_refs);
        memcpy(ix->type_size, b->at.type_off, sizeof ix->type_size);
        ix->stats = b->acc.s;
}

static int build_finish(struct build *b)
{
        b->feed.eof = 1;
        int rc = build_drain(b);
        return rc < 0 ? rc
                      : tm_scan_end(&b->front, b->feed.len - b->feed.pos, b->feed.raw_off, b->err);
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
static int index_pass(struct tm_cont *c, const struct tm_codec *codec, const uint8_t *head,
                      size_t headn, uint64_t k, tm_progress_fn progress, void *arg,
                      const uint64_t *limit, struct tm_index **out, struct tm_err *err)
{
        struct build *b = calloc(1, sizeof *b);
        struct tm_index *ix = index_alloc(64);
        int rc = -ENOMEM;
        if (!b || !ix || tm_feed_init(&b->feed, codec, BUILD_FEED) < 0) {
                tm_err_set(err, rc, "out of memory");
                goto out;
        }
        struct tm_dec_state st;
        memset(&st, 0, sizeof st);
        int hl = codec->dec_init(&st, head, headn, err);
        if (hl < 0) {
                rc = hl;
                goto out;
        }
        ix->k = k ? k : TM_CKPT_REFS_DEFAULT;
        b->budgeted = k == 0;
        ix->hdr_len = (uint64_t)hl;
        tm_feed_reset(&b->feed, (uint64_t)hl, &st);
        b->ix = ix;
        b->front = (struct tm_scan_front){.skip = (uint64_t)hl,
                                          .progress = progress,
                                          .arg = arg,
                                          .cont = c,
                                          .limit = limit ? *limit : 0,
                                          .limited = limit != NULL};
        b->next_ckpt = 0;
        b->cont = c;
        b->err = err;
        tm_stats_init(&b->acc);
        b->good_raw = (uint64_t)hl;
        rc = build_checkpoint(b);
        if (rc == 0)
                rc = tm_cont_scan(c, build_sink, b, err);
        if (rc == 0)
                rc = build_finish(b);
        rc = tm_scan_result(rc, err);
        if (rc >= 0)
                build_totals(b);
        if (rc == 0 && progress)
                progress(arg, b->front.seen, b->front.seen);
out:
        if (b)
                tm_feed_free(&b->feed);
        free(b);
        if (rc < 0) {
                tm_index_free(ix);
                return rc;
        }
        *out = ix;
        return rc;
}

int tm_index_build(struct tm_cont *c, const struct tm_codec *codec, const uint8_t *head,
                   size_t headn, uint64_t k, tm_progress_fn progress, void *arg,
                   struct tm_index **out, struct tm_err *err)
{
        int rc = index_pass(c, codec, head, headn, k, progress, arg, NULL, out, err);
        uint64_t limit;
        int cut = rc == TM_INDEX_PREFIX ? tm_scan_unverified(c, (*out)->raw_size, &limit, err) : 0;
        if (cut == 0)
                return rc;
        tm_index_free(*out);
        *out = NULL;
        if (cut < 0)
                return cut;
        struct tm_err damage = err ? *err : (struct tm_err){0};
        rc = index_pass(c, codec, head, headn, k, NULL, NULL, &limit, out, err);
        if (err && rc >= 0)
                *err = damage;
        return rc == 0 ? TM_INDEX_PREFIX : rc;
}

/* ---- lookups ---- */

static uint64_t ckpt_pos(const struct tm_ckpt *c, enum tm_ix_by by, unsigned type)
{
        switch (by) {
        case TM_BY_REC:
                return c->rec;
        case TM_BY_ASCII:
                return c->ascii_off;
        default:
                return c->type_off[type];
        }
}

const struct tm_ckpt *tm_index_find(const struct tm_index *ix, enum tm_ix_by by, unsigned type,
                                    uint64_t v)
{
        uint32_t lo = 0, hi = ix->n; /* answer in [lo, hi) */
        while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (ckpt_pos(&ix->ck[mid], by, type) <= v)
                        lo = mid;
                else
                        hi = mid;
        }
        return &ix->ck[lo];
}

/* ---- the file ---- */

static const char index_magic[8] = {'T', 'M', 'I', 'N', 'D', 'E', 'X', '\n'};
#define INDEX_VERSION 1

/* Header fields after magic, version and crc, in file order. */
struct file_head {
        uint64_t raw_size, hdr_len, nrefs, ascii_size;
        uint64_t type_refs[TM_NTYPES], type_size[TM_NTYPES];
        uint64_t k, nckpt, ckpt_off, stats_off, cont_off, cont_len, file_size;
};
#define HEAD_BYTES (TM_IX_KEY_END + 8 * 4 + 16 * TM_NTYPES + 8 * 7)

/* The fields after the key (bytes 0-71: tm_ix_head_put). */
static void head_encode(const struct file_head *h, uint8_t *buf)
{
        uint8_t *p = buf + TM_IX_KEY_END;
        tm_ix_put64(&p, h->raw_size);
        tm_ix_put64(&p, h->hdr_len);
        tm_ix_put64(&p, h->nrefs);
        tm_ix_put64(&p, h->ascii_size);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                tm_ix_put64(&p, h->type_refs[t]);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                tm_ix_put64(&p, h->type_size[t]);
        tm_ix_put64(&p, h->k);
        tm_ix_put64(&p, h->nckpt);
        tm_ix_put64(&p, h->ckpt_off);
        tm_ix_put64(&p, h->stats_off);
        tm_ix_put64(&p, h->cont_off);
        tm_ix_put64(&p, h->cont_len);
        tm_ix_put64(&p, h->file_size);
}

static void head_decode(struct file_head *h, const uint8_t *buf)
{
        const uint8_t *p = buf + TM_IX_KEY_END;
        h->raw_size = tm_ix_get64(&p);
        h->hdr_len = tm_ix_get64(&p);
        h->nrefs = tm_ix_get64(&p);
        h->ascii_size = tm_ix_get64(&p);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                h->type_refs[t] = tm_ix_get64(&p);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                h->type_size[t] = tm_ix_get64(&p);
        h->k = tm_ix_get64(&p);
        h->nckpt = tm_ix_get64(&p);
        h->ckpt_off = tm_ix_get64(&p);
        h->stats_off = tm_ix_get64(&p);
        h->cont_off = tm_ix_get64(&p);
        h->cont_len = tm_ix_get64(&p);
        h->file_size = tm_ix_get64(&p);
}

static void ckpt_encode(const struct tm_ckpt *c, uint8_t *p)
{
        tm_ix_put64(&p, c->raw_off);
        tm_ix_put64(&p, c->rec);
        tm_ix_put64(&p, c->ascii_off);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                tm_ix_put64(&p, c->type_rec[t]);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                tm_ix_put64(&p, c->type_off[t]);
        tm_ix_put_bytes(&p, c->st.b, TM_STATE_MAX);
}

static void ckpt_decode(struct tm_ckpt *c, const uint8_t *p)
{
        c->raw_off = tm_ix_get64(&p);
        c->rec = tm_ix_get64(&p);
        c->ascii_off = tm_ix_get64(&p);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                c->type_rec[t] = tm_ix_get64(&p);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                c->type_off[t] = tm_ix_get64(&p);
        tm_ix_get_bytes(&p, c->st.b, TM_STATE_MAX);
}

static void stats_encode(const struct tm_stats *s, uint8_t *p)
{
        uint64_t w[TM_STATS_WORDS];
        memcpy(w, s, sizeof w);
        for (size_t i = 0; i < TM_STATS_WORDS; i++)
                tm_ix_put64(&p, w[i]);
}

static void stats_decode(struct tm_stats *s, const uint8_t *p)
{
        uint64_t w[TM_STATS_WORDS];
        for (size_t i = 0; i < TM_STATS_WORDS; i++)
                w[i] = tm_ix_get64(&p);
        memcpy(s, w, sizeof w);
}

static int write_all(FILE *f, const void *p, size_t n)
{
        return fwrite(p, 1, n, f) == n ? 0 : -EIO;
}

static int save_body(const struct tm_index *ix, const struct tm_cont *c, FILE *f,
                     struct file_head *h, struct tm_err *err)
{
        uint8_t zero[HEAD_BYTES] = {0};
        uint8_t rec[TM_CKPT_BYTES];
        uint8_t st[TM_STATS_WORDS * 8];
        if (write_all(f, zero, sizeof zero) < 0)
                return -EIO;
        h->ckpt_off = HEAD_BYTES;
        for (uint32_t i = 0; i < ix->n; i++) {
                ckpt_encode(&ix->ck[i], rec);
                if (write_all(f, rec, sizeof rec) < 0)
                        return -EIO;
        }
        h->stats_off = h->ckpt_off + (uint64_t)ix->n * TM_CKPT_BYTES;
        stats_encode(&ix->stats, st);
        if (write_all(f, st, sizeof st) < 0)
                return -EIO;
        h->cont_off = h->stats_off + sizeof st;
        int64_t cl = tm_cont_index_save(c, f, err);
        if (cl < 0)
                return (int)cl;
        h->cont_len = (uint64_t)cl;
        h->file_size = h->cont_off + h->cont_len;
        return fflush(f) == 0 ? 0 : -errno;
}

int tm_index_save(const struct tm_index *ix, const struct tm_cont *c,
                  const struct tm_index_key *key, const char *path, struct tm_err *err)
{
        struct tm_ixfile x;
        int rc = tm_ixfile_create(&x, path, err);
        if (rc < 0)
                return rc;
        struct file_head h;
        memset(&h, 0, sizeof h);
        h.raw_size = ix->raw_size;
        h.hdr_len = ix->hdr_len;
        h.nrefs = ix->nrefs;
        h.ascii_size = ix->ascii_size;
        memcpy(h.type_refs, ix->type_refs, sizeof h.type_refs);
        memcpy(h.type_size, ix->type_size, sizeof h.type_size);
        h.k = ix->k;
        h.nckpt = ix->n;
        uint8_t hb[HEAD_BYTES];
        rc = save_body(ix, c, x.f, &h, err);
        tm_ix_head_put(hb, index_magic, INDEX_VERSION, key);
        head_encode(&h, hb);
        return tm_ixfile_commit(&x, rc, hb, sizeof hb, h.file_size, err);
}

static int pread_all(int fd, void *p, size_t n, uint64_t off)
{
        return tm_pread_full(fd, p, n, off) == (ssize_t)n ? 0 : -EIO;
}

/* What the file's numbers must satisfy whoever wrote them (docs/index-
 * format.md, "What the index trusts"): totals that add up; the first
 * checkpoint at the start; checkpoint i exactly i * k references in (the
 * pass places them so), each within the totals and none before the one
 * before it; per type, references and bytes that add up to the ascii
 * view's, and bytes that din lines can take (4 to TM_DIN_LINE_MAX bytes a
 * reference); fewer than k references after the last. Decoder states are
 * checked only as far as the codec can tell a state its decoder cannot
 * reach (key->state_ok, in load_body); whether a reachable state is the
 * right one only decoding can tell (the file's owner is trusted for it,
 * tm_ixfile_open). */
#define DIN_LINE_MIN 4u
#define DIN_LINE_MAX TM_DIN_LINE_MAX

static int span_ok(uint64_t refs, uint64_t bytes)
{
        return refs <= UINT64_MAX / DIN_LINE_MAX && bytes >= refs * DIN_LINE_MIN &&
               bytes <= refs * DIN_LINE_MAX;
}

static int ckpt_ok(const struct tm_index *ix, uint32_t i)
{
        const struct tm_ckpt *c = &ix->ck[i], *p = i ? c - 1 : c;
        uint64_t refs = 0, size = 0;
        if (c->raw_off > ix->raw_size || c->rec > ix->nrefs || c->ascii_off > ix->ascii_size ||
            c->raw_off < p->raw_off || c->ascii_off < p->ascii_off)
                return 0;
        if (i && (ix->k > ix->nrefs / i || c->rec != (uint64_t)i * ix->k))
                return 0;
        for (unsigned t = 0; t < TM_NTYPES; t++) {
                if (c->type_rec[t] > ix->type_refs[t] || c->type_off[t] > ix->type_size[t] ||
                    c->type_rec[t] < p->type_rec[t] || c->type_off[t] < p->type_off[t] ||
                    !span_ok(c->type_rec[t] - p->type_rec[t], c->type_off[t] - p->type_off[t]))
                        return 0;
                refs += c->type_rec[t];
                size += c->type_off[t];
        }
        return refs == c->rec && size == c->ascii_off;
}

static int index_consistent(const struct tm_index *ix)
{
        uint64_t refs = 0, size = 0;
        for (unsigned t = 0; t < TM_NTYPES; t++) {
                if (ix->type_refs[t] > ix->nrefs || ix->type_size[t] > ix->ascii_size ||
                    !span_ok(ix->type_refs[t], ix->type_size[t]))
                        return 0;
                refs += ix->type_refs[t];
                size += ix->type_size[t];
        }
        if (refs != ix->nrefs || size != ix->ascii_size || ix->stats.refs != ix->nrefs)
                return 0;
        const struct tm_ckpt *c0 = &ix->ck[0];
        if (c0->rec || c0->ascii_off || c0->raw_off != ix->hdr_len || ix->hdr_len > ix->raw_size)
                return 0;
        for (uint32_t i = 0; i < ix->n; i++)
                if (!ckpt_ok(ix, i))
                        return 0;
        const struct tm_ckpt *last = &ix->ck[ix->n - 1];
        for (unsigned t = 0; t < TM_NTYPES; t++)
                if (!span_ok(ix->type_refs[t] - last->type_rec[t],
                             ix->type_size[t] - last->type_off[t]))
                        return 0;
        return ix->nrefs - last->rec <= ix->k;
}

static int load_body(int fd, const struct file_head *h, const struct tm_index_key *key,
                     struct tm_index *ix)
{
        uint8_t rec[TM_CKPT_BYTES];
        uint8_t st[TM_STATS_WORDS * 8];
        for (uint32_t i = 0; i < ix->n; i++) {
                if (pread_all(fd, rec, sizeof rec, h->ckpt_off + (uint64_t)i * TM_CKPT_BYTES) < 0)
                        return -EIO;
                ckpt_decode(&ix->ck[i], rec);
                if (key->state_ok && !key->state_ok(key->state_ctx, &ix->ck[i].st))
                        return -EIO;
        }
        if (pread_all(fd, st, sizeof st, h->stats_off) < 0)
                return -EIO;
        stats_decode(&ix->stats, st);
        return index_consistent(ix) ? 0 : -EIO;
}

int tm_index_load(const char *path, const struct tm_index_key *key, struct tm_cont *c,
                  struct tm_index **out, int *fd_out, struct tm_err *err)
{
        int fd;
        struct stat sb;
        int rc = tm_ixfile_open(path, key->trust, &fd, &sb, err);
        if (rc < 0)
                return rc;
        uint8_t hb[HEAD_BYTES];
        struct file_head h;
        rc = -EIO;
        const char *why = "too short";
        struct tm_index *ix = NULL;
        if (sb.st_size < HEAD_BYTES || pread_all(fd, hb, sizeof hb, 0) < 0)
                goto bad;
        rc = tm_ix_head_check(hb, index_magic, INDEX_VERSION, key);
        why = rc == -ESTALE ? "made for another version of the archive"
                            : "not an index file of this version";
        if (rc < 0)
                goto bad;
        head_decode(&h, hb);
        rc = -EIO;
        why = "bad layout";
        if (h.file_size != (uint64_t)sb.st_size || h.nckpt < 1 || h.nckpt > TM_CKPT_CAP ||
            h.k < 1 || h.ckpt_off != HEAD_BYTES ||
            h.stats_off != h.ckpt_off + h.nckpt * TM_CKPT_BYTES ||
            h.cont_off != h.stats_off + TM_STATS_WORDS * 8 ||
            h.cont_len != h.file_size - h.cont_off || h.cont_off > h.file_size)
                goto bad;
        uint32_t crc;
        why = "CRC mismatch";
        if (tm_ixfile_crc(fd, TM_IXFILE_CRC_FROM, h.file_size, &crc) < 0 ||
            crc != tm_ixfile_head_crc(hb))
                goto bad;
        why = "out of memory";
        ix = index_alloc((uint32_t)h.nckpt);
        if (!ix)
                goto bad;
        ix->k = h.k;
        ix->n = (uint32_t)h.nckpt;
        ix->hdr_len = h.hdr_len;
        ix->raw_size = h.raw_size;
        ix->nrefs = h.nrefs;
        ix->ascii_size = h.ascii_size;
        memcpy(ix->type_refs, h.type_refs, sizeof ix->type_refs);
        memcpy(ix->type_size, h.type_size, sizeof ix->type_size);
        why = "inconsistent checkpoints";
        if (load_body(fd, &h, key, ix) < 0)
                goto bad;
        rc = tm_ixfile_finish_load(fd, path, c, h.cont_off, h.cont_len, ix->raw_size, fd_out, err);
        if (rc < 0)
                goto fail;
        *out = ix;
        return 0;
bad:
        tm_err_set(err, rc, "%s: %s", path, why);
fail:
        tm_index_free(ix);
        close(fd);
        return rc < 0 ? rc : -EIO;
}

int tm_index_differ(struct tm_err *err, const char *what, uint64_t i)
{
        return tm_err_set(err, -EIO, "index differs from the archive: %s (%llu)", what,
                          (unsigned long long)i);
}

int tm_index_compare(const struct tm_index *a, const struct tm_index *b, struct tm_err *err)
{
        if (a->raw_size != b->raw_size)
                return tm_index_differ(err, "raw size", b->raw_size);
        if (a->hdr_len != b->hdr_len)
                return tm_index_differ(err, "header length", b->hdr_len);
        if (a->nrefs != b->nrefs)
                return tm_index_differ(err, "reference count", b->nrefs);
        if (a->ascii_size != b->ascii_size)
                return tm_index_differ(err, "ascii size", b->ascii_size);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                if (a->type_refs[t] != b->type_refs[t] || a->type_size[t] != b->type_size[t])
                        return tm_index_differ(err, "references of type", t);
        if (memcmp(&a->stats, &b->stats, sizeof a->stats))
                return tm_index_differ(err, "stats", 0);
        if (a->k != b->k || a->n != b->n)
                return tm_index_differ(err, "checkpoint count", b->n);
        for (uint32_t i = 0; i < a->n; i++)
                if (memcmp(&a->ck[i], &b->ck[i], sizeof a->ck[i]))
                        return tm_index_differ(err, "checkpoint", i);
        return 0;
}
