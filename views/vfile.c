/* tm_vfile_*: a cursor on one view.
 *
 * The views made once (stats.json, errors) are served from their text;
 * every other view through the trace's cursor (records.c: a container
 * reader, a decoder feed, a batch of decoded records and the rest of a
 * partly returned line; a read at the cursor's position continues, any
 * other restarts at the last checkpoint at or before the offset, so its
 * cost is bounded by the checkpoint spacing). Sequential readers of the
 * text and binary views get parallel readahead (readahead.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readahead.h"
#include "records.h"
#include "trace_obj.h"

#define VF_RA_AFTER 4            /* sequential reads before reading ahead */
#define VF_RA_FIRST (128u << 10) /* or a first read at 0 of this many bytes */

struct tm_vfile {
        struct tm_trace *t;
        struct tm_cursor *rv; /* the trace's cursor (records.h); NULL for the texts */
        enum tm_view_kind kind;
        uint64_t size;
        uint64_t pos; /* view offset of the next byte returned */
        int valid;    /* the cursor state matches pos */
        char view[TM_VIEW_NAME_MAX];
        unsigned seq;     /* sequential reads in a row */
        int reads;        /* a read came before (the first at 0 reads ahead) */
        struct tm_ra *ra; /* reading ahead, or NULL */
        int ra_off;       /* never read ahead (a worker's own cursor, or refused) */
        const char *text; /* stats.json or errors: the bytes, or NULL */
        char *own;        /* errors: its text as it was at open */
        uint64_t cut;     /* a damaged trace: bytes before the damage */
        int cut_on;
};

static void vf_free(struct tm_vfile *f)
{
        tm_records_vfile_close(f->rv);
        tm_ra_close(f->ra);
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
        if (!f->t->damaged || f->kind == TM_VIEW_STATS)
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
        struct tm_vfile *f = calloc(1, sizeof *f);
        if (!f)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        int rc = tm_trace_view_ready(t, view, err);
        if (rc == 0)
                rc = tm_records_vfile_open(t, view, &f->rv, err);
        if (rc == 0)
                rc = tm_trace_view_size_strict(t, view, &f->size, err);
        if (rc < 0) {
                tm_records_vfile_close(f->rv);
                free(f);
                return rc;
        }
        f->t = t;
        f->kind = (enum tm_view_kind)tm_records_view_kind(t, view);
        snprintf(f->view, sizeof f->view, "%s", view);
        f->ra_off = !(f->kind == TM_VIEW_ASCII || f->kind == TM_VIEW_BINARY) || !tm_ra_threads();
        vf_cut(f);
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
        return f->rv ? tm_records_vfile_worker(f->rv) : 0;
}

void tm_vfile_close(struct tm_vfile *f)
{
        if (!f)
                return;
        struct tm_trace *t = f->t;
        vf_free(f);
        __atomic_fetch_sub(&t->nvfiles, 1, __ATOMIC_RELEASE);
}

/* Start reading ahead, unless this file never does (a worker's cursor, a
 * view the readahead refused before): 1 when it now does. */
static int vf_ra_start(struct tm_vfile *f)
{
        if (f->ra_off || f->ra)
                return 0;
        /* text: much work a byte */
        unsigned nt = f->kind == TM_VIEW_ASCII ? tm_ra_threads_heavy() : tm_ra_threads();
        f->ra = tm_ra_open(f->t, f->view, f->kind, f->size, nt);
        f->ra_off = !f->ra;
        return f->ra != NULL;
}

ssize_t tm_vfile_pread(struct tm_vfile *f, void *buf, size_t n, uint64_t off, struct tm_err *err)
{
        int rc = f->text || !n ? 0 : tm_trace_read_check(f->t, off, err);
        if (rc < 0) /* the archive changed: nothing of the old version */
                return rc;
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
        if (f->ra_off || f->kind == TM_VIEW_RAW)
                return tm_records_pread(f->rv, buf, n, off, err);
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
        got = tm_records_pread(f->rv, buf, n, off, err); /* it keeps its own position */
        f->valid = got > 0;
        f->pos = got > 0 ? off + (uint64_t)got : off;
        return got;
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
        if (!f->ra || off >= f->size || n == 0 || tm_trace_read_check(f->t, off, NULL) < 0)
                return -1; /* the archive changed: pread says so */
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
