/* tm_vfile_*: a cursor on one view.
 *
 * A cursor is a container reader, a decoder feed, a batch of decoded
 * references not yet shown, and the rest of a partly returned line. A read
 * at the cursor's position continues; any other read restarts at the last
 * checkpoint at or before the offset and skips forward by computed line
 * lengths, so its cost is bounded by the checkpoint spacing. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "readahead.h"
#include "../codecs/address/render.h"
#include "rtrace.h"
#include "trace_priv.h"

#define VF_BATCH 4096
#define VF_FEED (64u << 10)
#define VF_REC 16 /* sizeof(struct tm_binary_ref) */
#define VF_PEND_MAX (TM_XDIN_LINE_MAX > VF_REC ? TM_XDIN_LINE_MAX : VF_REC)
#define VF_RA_AFTER 4            /* sequential reads before reading ahead */
#define VF_RA_FIRST (128u << 10) /* or a first read at 0 of this many bytes */
#define VF_RENDER_MIN 16         /* fewer lines than this: one at a time */
/* A readahead worker's vfile writes buffers that a thread on another core
 * reads next. Vector stores straight into such memory are slow (each line
 * must first be taken back from the reader's cache): rendering is ~3x
 * slower there. So a worker renders VF_STAGE_REFS references at a time
 * into a small buffer of its own, which stays in its cache, and copies
 * each piece out with memcpy (whose large copies write whole lines).
 * Measured on 10^8 refs, cat ascii --direct-io: 0.48 s -> 0.36 s. */
#define VF_STAGE_REFS 2048
#define VF_STAGE_BYTES (VF_STAGE_REFS * TM_DIN_LINE_MAX + TM_RENDER_SLACK)

struct tm_vfile {
        struct tm_trace *t;
        struct tm_rvfile *rv; /* a record trace's cursor (rtrace.h), or NULL */
        const struct tm_index *ix;
        enum tm_view_kind kind;
        unsigned type; /* streams/ */
        uint64_t size;
        struct tm_creader *r;
        struct tm_feed feed;
        struct tm_ref *refs;
        uint32_t *sizes; /* xdin: the access size of each of refs, else NULL */
        size_t rpos, rcount;
        uint64_t pos; /* view offset of the next byte returned */
        int valid;    /* the cursor state matches pos */
        char pend[VF_PEND_MAX];
        unsigned pend_pos, pend_len;
        char view[TM_VIEW_NAME_MAX];
        unsigned seq;     /* sequential reads in a row */
        int reads;        /* a read came before (the first at 0 reads ahead) */
        struct tm_ra *ra; /* reading ahead, or NULL */
        int ra_off;       /* never read ahead (a worker's own cursor, or refused) */
        char *stage;      /* a worker's staging buffer (VF_STAGE_BYTES), or NULL */
        const char *text; /* stats.json or errors: the bytes, or NULL */
        char *own;        /* errors: its text as it was at open */
        uint64_t cut;     /* a damaged trace: bytes before the damage */
        int cut_on;
};

static void vf_free(struct tm_vfile *f)
{
        tm_rtrace_vfile_close(f->rv);
        tm_ra_close(f->ra);
        tm_creader_close(f->r);
        tm_feed_free(&f->feed);
        free(f->refs);
        free(f->sizes);
        free(f->stage);
        free(f->own);
        free(f);
}

/* stats.json or errors: a text known at open. */
static int vf_open_text(struct tm_trace *t, enum tm_view_kind kind, struct tm_vfile *f,
                        struct tm_err *err)
{
        size_t len = 0;
        int rc = 0;
        if (kind == TM_VIEW_ERRORS) {
                f->text = f->own = tm_trace_errors_text(t, &len);
                if (!f->own)
                        rc = tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        } else {
                rc = tm_trace_index_ready(t, err);
                if (rc == 0)
                        rc = tm_trace_json_text(t, &f->text, &len, err);
        }
        f->t = t;
        f->kind = kind;
        f->size = len;
        f->ra_off = 1;
        return rc;
}

/* A view decoded from a damaged trace's records ends at the damage. */
static void vf_cut(struct tm_vfile *f)
{
        if (!f->t->damaged || f->kind == TM_VIEW_STATS || f->kind == TM_VIEW_SCHEMA)
                return;
        f->cut_on = 1;
        f->cut = f->size - TM_DAMAGE_MARK;
        f->ra_off = 1; /* the prefix is no place for speed */
}

int tm_vfile_volatile(const struct tm_vfile *f)
{
        return !f->rv && f->kind == TM_VIEW_ERRORS;
}

static int vf_open(struct tm_trace *t, const char *view, struct tm_vfile **out, struct tm_err *err)
{
        enum tm_view_kind kind;
        unsigned type;
        if (tm_trace_text_view(view, &kind)) {
                struct tm_vfile *f = calloc(1, sizeof *f);
                if (!f)
                        return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
                int rc = vf_open_text(t, kind, f, err);
                if (rc < 0) {
                        vf_free(f);
                        return rc;
                }
                snprintf(f->view, sizeof f->view, "%s", view);
                *out = f;
                return 0;
        }
        if (t->rt) {
                struct tm_vfile *f = calloc(1, sizeof *f);
                if (!f)
                        return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
                int rc = tm_rtrace_vfile_open(t, view, &f->rv, err);
                if (rc == 0)
                        rc = tm_trace_view_size_strict(t, view, &f->size, err);
                if (rc < 0) {
                        tm_rtrace_vfile_close(f->rv);
                        free(f);
                        return rc;
                }
                f->t = t;
                f->kind = (enum tm_view_kind)tm_rtrace_view_kind(t, view);
                snprintf(f->view, sizeof f->view, "%s", view);
                f->ra_off =
                    !(f->kind == TM_VIEW_ASCII || f->kind == TM_VIEW_BINARY) || !tm_ra_threads();
                vf_cut(f);
                *out = f;
                return 0;
        }
        if (tm_trace_view_parse(t, view, &kind, &type) < 0)
                return tm_err_set(err, -ENOENT, "%s: no view %s", t->path, view);
        uint64_t size;
        int rc = tm_trace_view_size_strict(t, view, &size, err);
        if (rc < 0)
                return rc;
        struct tm_vfile *f = calloc(1, sizeof *f);
        if (!f)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        f->t = t;
        f->ix = t->ix;
        f->kind = kind;
        f->type = type;
        f->size = size;
        snprintf(f->view, sizeof f->view, "%s", view);
        f->ra_off = !(kind == TM_VIEW_ASCII || kind == TM_VIEW_BINARY) || !tm_ra_threads();
        vf_cut(f);
        if (kind != TM_VIEW_STATS && kind != TM_VIEW_SCHEMA) {
                rc = tm_creader_open(t->cont, &f->r, err);
                if (rc < 0) {
                        vf_free(f);
                        return rc;
                }
        }
        if (kind != TM_VIEW_STATS && kind != TM_VIEW_SCHEMA && kind != TM_VIEW_RAW) {
                f->refs = malloc(VF_BATCH * sizeof *f->refs);
                if (kind == TM_VIEW_XDIN)
                        f->sizes = malloc(VF_BATCH * sizeof *f->sizes);
                if (!f->refs || (kind == TM_VIEW_XDIN && !f->sizes) ||
                    tm_feed_init(&f->feed, t->codec, VF_FEED) < 0) {
                        vf_free(f);
                        return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
                }
        }
        *out = f;
        return 0;
}

/* Cursors are counted from the start of their opening to their close: a
 * damaged trace's index is replaced only while none exists
 * (trace_retry_if_changed). */
int tm_vfile_open(struct tm_trace *t, const char *view, struct tm_vfile **out, struct tm_err *err)
{
        __atomic_fetch_add(&t->nvfiles, 1, __ATOMIC_ACQ_REL);
        int rc = vf_open(t, view, out, err);
        if (rc < 0)
                __atomic_fetch_sub(&t->nvfiles, 1, __ATOMIC_RELEASE);
        return rc;
}

int tm_vfile_worker(struct tm_vfile *f)
{
        f->ra_off = 1;
        if (f->rv)
                return tm_rtrace_vfile_worker(f->rv);
        if (f->kind == TM_VIEW_STATS || f->kind == TM_VIEW_SCHEMA || f->kind == TM_VIEW_RAW)
                return 0;
        f->stage = malloc(VF_STAGE_BYTES);
        return f->stage ? 0 : -ENOMEM;
}

void tm_vfile_close(struct tm_vfile *f)
{
        if (!f)
                return;
        struct tm_trace *t = f->t;
        vf_free(f);
        __atomic_fetch_sub(&t->nvfiles, 1, __ATOMIC_RELEASE);
}

/* ---- decoding ---- */

/* A position of the feed to come back to. */
struct vf_mark {
        struct tm_dec_state st;
        size_t pos;
        uint64_t raw_off;
};

static void vf_mark(const struct tm_feed *fd, struct vf_mark *m)
{
        m->st = fd->st;
        m->pos = fd->pos;
        m->raw_off = fd->raw_off;
}

static void vf_back(struct tm_feed *fd, const struct vf_mark *m)
{
        fd->st = m->st;
        fd->pos = m->pos;
        fd->raw_off = m->raw_off;
}

/* Decode up to cap references into refs[k..], with their sizes for xdin. */
static ssize_t vf_feed(struct tm_vfile *f, size_t k, size_t cap, struct tm_err *err)
{
        return tm_feed_decode_sized(&f->feed, f->refs + k, f->sizes ? f->sizes + k : NULL, cap,
                                    err);
}

/* A batch failed after m: the references before the bad record are still
 * good, so decode them one at a time up to it and leave the feed just
 * before it (the decoder state is undefined after an error); the next
 * batch meets the error again. Returns how many were decoded. */
static size_t vf_salvage(struct tm_vfile *f, struct vf_mark *m)
{
        size_t k = 0;
        for (;;) {
                vf_back(&f->feed, m);
                if (k == VF_BATCH || vf_feed(f, k, 1, NULL) <= 0)
                        break;
                k++;
                vf_mark(&f->feed, m);
        }
        vf_back(&f->feed, m);
        return k;
}

/* Decode the next batch into refs. Returns 1, 0 at the end of the trace,
 * or a negative errno. */
static int vf_decode(struct tm_vfile *f, struct tm_err *err)
{
        f->rpos = f->rcount = 0;
        for (;;) {
                struct vf_mark m;
                vf_mark(&f->feed, &m);
                ssize_t n = vf_feed(f, 0, VF_BATCH, err);
                if (n < 0) {
                        f->rcount = vf_salvage(f, &m);
                        return f->rcount ? 1 : (int)n;
                }
                if (n > 0) {
                        f->rcount = (size_t)n;
                        return 1;
                }
                if (f->feed.eof)
                        return 0;
                size_t room;
                uint8_t *dst = tm_feed_space(&f->feed, &room);
                ssize_t k = tm_creader_read(f->r, dst, room, err);
                if (k < 0)
                        return (int)k;
                tm_feed_commit(&f->feed, (size_t)k);
                if (k == 0 || tm_creader_tell(f->r) >= f->ix->raw_size)
                        f->feed.eof = 1;
        }
}

/* streams/: keep only the view's type, without branching on it (types
 * come in no predictable order). */
static size_t vf_compact(struct tm_ref *refs, size_t n, unsigned type)
{
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                refs[k] = refs[i];
                k += refs[i].type == type;
        }
        return k;
}

/* vf_decode, and for streams/ only the view's type, skipping batches
 * without it. */
static int vf_more(struct tm_vfile *f, struct tm_err *err)
{
        for (;;) {
                int rc = vf_decode(f, err);
                if (rc <= 0 || f->kind != TM_VIEW_STREAM)
                        return rc;
                f->rcount = vf_compact(f->refs, f->rcount, f->type);
                if (f->rcount)
                        return 1;
        }
}

/* Like vf_more, but running out of references before the view's end means
 * the archive no longer matches its index. */
static int vf_need(struct tm_vfile *f, struct tm_err *err)
{
        int rc = vf_more(f, err);
        if (rc == 0)
                return tm_err_set(err, -EIO,
                                  "%s: raw offset %llu: trace ends before its indexed end",
                                  f->t->path, (unsigned long long)f->feed.raw_off);
        return rc < 0 ? rc : 0;
}

/* Bytes of ref r in this view (streams/ batches hold only its type). */
static inline unsigned vf_len(const struct tm_vfile *f, const struct tm_ref *r)
{
        if (f->kind == TM_VIEW_XDIN)
                return tm_render_xdin_len(r->addr);
        return f->kind == TM_VIEW_BINARY ? VF_REC : tm_render_din_len(r->addr);
}

static inline void vf_binary(char *dst, const struct tm_ref *r)
{
        uint64_t w[2] = {htole64(r->addr), htole64((uint64_t)(r->type & 0xff))};
        memcpy(dst, w, VF_REC);
}

/* Render ref r (in this view) to dst with VF_PEND_MAX bytes of room. */
static inline unsigned vf_render(const struct tm_vfile *f, char *dst, const struct tm_ref *r)
{
        if (f->kind == TM_VIEW_BINARY) {
                vf_binary(dst, r);
                return VF_REC;
        }
        if (f->kind == TM_VIEW_XDIN)
                return tm_render_xdin(dst, r->type, r->addr, f->sizes[r - f->refs]);
        return tm_render_din(dst, r->type, r->addr);
}

/* Render whole references from *r to dst while they fit before lim,
 * advancing *r; returns the new end of dst. Text in batches (the room a
 * batch wants past its lines is kept inside lim), binary records one by
 * one; a worker goes through its staging buffer (see VF_STAGE_REFS). */
static char *vf_bulk(const struct tm_vfile *f, char *p, const char *lim, const struct tm_ref **r,
                     const struct tm_ref *end)
{
        int bin = f->kind == TM_VIEW_BINARY;
        size_t each = bin ? VF_REC : TM_DIN_LINE_MAX;
        if (f->kind == TM_VIEW_XDIN) /* line by line in vf_fill */
                return p;
        /* written directly, a text batch scribbles up to TM_RENDER_SLACK
         * bytes past its lines; a staged one is copied exactly */
        size_t slack = f->stage || bin ? 0 : TM_RENDER_SLACK;
        for (;;) {
                size_t room = (size_t)(lim - p), m = (size_t)(end - *r);
                if (room < slack + VF_RENDER_MIN * each)
                        return p;
                size_t fit = (room - slack) / each;
                m = m < fit ? m : fit;
                if (f->stage)
                        m = m < VF_STAGE_REFS ? m : VF_STAGE_REFS;
                if (m == 0)
                        return p;
                char *out = f->stage ? f->stage : p;
                size_t b;
                if (bin) {
                        for (size_t i = 0; i < m; i++)
                                vf_binary(out + i * VF_REC, *r + i);
                        b = m * VF_REC;
                } else {
                        b = tm_render_din_batch(out, *r, m);
                }
                if (f->stage)
                        memcpy(p, f->stage, b);
                p += b;
                *r += m;
        }
}

/* The last checkpoint at or before xdin offset off: xdin lines are din
 * lines and 1 + TM_XDIN_SIZE_DIGITS bytes more. */
static const struct tm_ckpt *vf_find_xdin(const struct tm_index *ix, uint64_t off, uint64_t *pos)
{
        uint32_t lo = 0, hi = ix->n; /* ck[lo] is at or before off, ck[hi] after */
        while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                const struct tm_ckpt *c = &ix->ck[mid];
                if (c->ascii_off + c->rec * (1 + TM_XDIN_SIZE_DIGITS) <= off)
                        lo = mid;
                else
                        hi = mid;
        }
        *pos = ix->ck[lo].ascii_off + ix->ck[lo].rec * (1 + TM_XDIN_SIZE_DIGITS);
        return &ix->ck[lo];
}

/* Restart at the last checkpoint before off and skip to off. */
static int vf_seek(struct tm_vfile *f, uint64_t off, struct tm_err *err)
{
        const struct tm_ckpt *c;
        uint64_t pos;
        f->valid = 0;
        if (f->kind == TM_VIEW_BINARY) {
                c = tm_index_find(f->ix, TM_BY_REC, 0, off / VF_REC);
                pos = c->rec * VF_REC;
        } else if (f->kind == TM_VIEW_ASCII) {
                c = tm_index_find(f->ix, TM_BY_ASCII, 0, off);
                pos = c->ascii_off;
        } else if (f->kind == TM_VIEW_XDIN) {
                c = vf_find_xdin(f->ix, off, &pos);
        } else {
                c = tm_index_find(f->ix, TM_BY_TYPE, f->type, off);
                pos = c->type_off[f->type];
        }
        int rc = tm_creader_seek(f->r, c->raw_off, err);
        if (rc < 0)
                return rc;
        tm_feed_reset(&f->feed, c->raw_off, &c->st);
        f->feed.eof = c->raw_off >= f->ix->raw_size;
        f->rpos = f->rcount = 0;
        f->pend_pos = f->pend_len = 0;
        while (pos < off) {
                if (f->rpos == f->rcount && (rc = vf_need(f, err)) < 0)
                        return rc;
                const struct tm_ref *r = &f->refs[f->rpos];
                unsigned len = vf_len(f, r);
                if (pos + len > off) {
                        f->pend_len = vf_render(f, f->pend, r);
                        f->pend_pos = (unsigned)(off - pos);
                        pos = off;
                } else {
                        pos += len;
                }
                f->rpos++;
        }
        f->pos = off;
        f->valid = 1;
        return 0;
}

/* Fill dst[0..n) from the references, n <= bytes left in the view. */
static ssize_t vf_fill(struct tm_vfile *f, char *dst, size_t n, struct tm_err *err)
{
        size_t done = 0;
        while (done < n) {
                if (f->pend_pos < f->pend_len) {
                        size_t k = f->pend_len - f->pend_pos;
                        k = k < n - done ? k : n - done;
                        memcpy(dst + done, f->pend + f->pend_pos, k);
                        f->pend_pos += (unsigned)k;
                        done += k;
                        continue;
                }
                if (f->rpos == f->rcount) {
                        int rc = vf_need(f, err);
                        if (rc < 0)
                                return done ? (ssize_t)done : rc;
                }
                const struct tm_ref *r = f->refs + f->rpos, *end = f->refs + f->rcount;
                char *p = dst + done;
                if (n - done >= VF_PEND_MAX) {
                        char *lim = dst + n - VF_PEND_MAX;
                        p = vf_bulk(f, p, dst + n, &r, end);
                        if (f->kind == TM_VIEW_XDIN) {
                                for (; r < end && p <= lim; r++)
                                        p += vf_render(f, p, r);
                        } else if (f->kind != TM_VIEW_BINARY) { /* streams: compacted */
                                for (; r < end && p <= lim; r++)
                                        p += tm_render_din(p, r->type, r->addr);
                        } else {
                                for (; r < end && p <= lim; r++, p += VF_REC)
                                        vf_binary(p, r);
                        }
                }
                done = (size_t)(p - dst);
                f->rpos = (size_t)(r - f->refs);
                /* Near the end of dst: one line through pend. */
                if (done < n && f->rpos < f->rcount && n - done < VF_PEND_MAX) {
                        r = &f->refs[f->rpos++];
                        f->pend_len = vf_render(f, f->pend, r);
                        f->pend_pos = 0;
                }
        }
        return (ssize_t)done;
}

/* Start reading ahead, unless this file never does (a worker's cursor, a
 * view the readahead refused before): 1 when it now does. */
static int vf_ra_start(struct tm_vfile *f)
{
        if (f->ra_off || f->ra)
                return 0;
        /* a record trace's text: much work a byte */
        unsigned nt = f->rv && f->kind == TM_VIEW_ASCII ? tm_ra_threads_heavy() : tm_ra_threads();
        f->ra = tm_ra_open(f->t, f->view, f->kind, f->size, nt);
        f->ra_off = !f->ra;
        return f->ra != NULL;
}

ssize_t tm_vfile_pread(struct tm_vfile *f, void *buf, size_t n, uint64_t off, struct tm_err *err)
{
        if (off >= f->size || n == 0)
                return 0;
        if (n > f->size - off)
                n = (size_t)(f->size - off);
        if (f->text) {
                memcpy(buf, f->text + off, n);
                return (ssize_t)n;
        }
        if (f->cut_on && off >= f->cut) { /* the damage: what ended the index pass */
                if (err)
                        *err = f->t->damage;
                tm_trace_note_err(f->t, &f->t->damage);
                return f->t->damage.code;
        }
        if (f->cut_on && n > f->cut - off)
                n = (size_t)(f->cut - off);
        if (f->rv && (f->ra_off || f->kind == TM_VIEW_RAW))
                return tm_rtrace_pread(f->rv, buf, n, off, err);
        if (f->kind == TM_VIEW_STATS || f->kind == TM_VIEW_SCHEMA) {
                const char *text = f->t->schema_text;
                size_t len;
                int rc = f->kind == TM_VIEW_STATS ? tm_trace_stats_text(f->t, &text, &len, err) : 0;
                if (rc < 0)
                        return rc;
                memcpy(buf, text + off, n);
                return (ssize_t)n;
        }
        ssize_t got = f->ra ? tm_ra_read(f->ra, buf, n, off) : -1;
        if (got >= 0) {
                f->pos = off + (uint64_t)got;
                f->valid = 0; /* our own cursor is elsewhere */
                return got;
        }
        if (f->ra && got != TM_RA_LATE) {
                tm_ra_close(f->ra); /* a jump or a failed segment: our own cursor */
                f->ra = NULL;
                f->valid = 0;
                f->seq = 0;
        }
        int rc = 0;
        f->seq = f->valid && f->pos == off ? f->seq + 1 : 0;
        /* A first read at 0 of VF_RA_FIRST bytes or more is a reader that
         * goes on (cat's reads, the kernel's readahead window): reading
         * ahead from there, instead of after VF_RA_AFTER reads decoded
         * here, spares decoding the start twice (the worker would begin
         * mid-interval, skipping from its checkpoint). A smaller first
         * read may be a peek at the head: it waits for the run of reads. */
        int first_at_0 = !f->reads && off == 0 && n >= VF_RA_FIRST;
        f->reads = 1;
        if ((f->seq >= VF_RA_AFTER || first_at_0) && vf_ra_start(f))
                return tm_vfile_pread(f, buf, n, off, err);
        if (f->rv) { /* a record trace's cursor keeps its own position */
                got = tm_rtrace_pread(f->rv, buf, n, off, err);
                f->valid = got > 0;
                f->pos = got > 0 ? off + (uint64_t)got : off;
                return got;
        }
        if (!f->valid || f->pos != off) {
                rc =
                    f->kind == TM_VIEW_RAW ? tm_creader_seek(f->r, off, err) : vf_seek(f, off, err);
                f->valid = rc == 0;
                f->pos = off;
        }
        got = rc;
        if (rc == 0)
                got = f->kind == TM_VIEW_RAW ? tm_creader_read_full(f->r, buf, n, err)
                                             : vf_fill(f, buf, n, err);
        return tm_trace_read_done(f->t, got, n, off, &f->valid, &f->pos, err);
}

ssize_t tm_vfile_peek(struct tm_vfile *f, size_t n, uint64_t off, struct tm_vspan *sp)
{
        sp->n = 0;
        /* the first read, as in tm_vfile_pread: then served in place too
         * (else copied into a reply buffer of fresh memory) */
        if (!f->reads && off == 0 && n >= VF_RA_FIRST && off < f->size) {
                f->reads = 1;
                vf_ra_start(f);
        }
        if (!f->ra || off >= f->size || n == 0)
                return -1;
        ssize_t got = tm_ra_peek(f->ra, n, off, sp);
        if (got <= 0)
                return -1; /* late, a jump, a failure, or too wide: pread decides */
        f->pos = off + (uint64_t)got;
        f->valid = 0; /* our own cursor is elsewhere */
        return got;
}

void tm_vfile_unpeek(struct tm_vspan *sp)
{
        tm_ra_unpeek(sp);
}
