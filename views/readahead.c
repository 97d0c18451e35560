#include "readahead.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../codecs/common/tm_huge.h"
#include "hmem.h"
#include "records.h"
#include "trace_obj.h"

/* Workers alive in the process, all readaheads together: many sequential
 * readers at once share TM_RA_WORKERS_TOTAL threads. */
static atomic_uint ra_live;
static _Atomic uint64_t ra_mem; /* bytes of segment buffers, all readaheads */
static atomic_uint ra_far;      /* segments begun away from a cursor and a checkpoint */

/* Slots beyond one per worker: the segment being read, the one before it
 * (the kernel's readahead sends a file's requests concurrently, and they
 * can reach us out of order across a segment boundary) and one more
 * ahead. */
#define RA_SPARE 3
/* Slots at most: with several workers on a trace whose checkpoint
 * intervals are cut into pieces, the window holds an interval a worker
 * beyond the first (see ra_slots). */
#define RA_SLOTS_MAX 32
/* Segments behind the window a request may fall and still count as late
 * (served by the caller, the readahead kept) rather than a jump. */
#define RA_LATE 4

enum { SLOT_EMPTY, SLOT_WANTED, SLOT_BUSY, SLOT_READY, SLOT_FAILED };

struct slot {
        uint32_t seg; /* checkpoint interval held or wanted */
        int state;
        unsigned holds; /* tm_vspan pieces in it not yet given back */
        char *buf;      /* from the pool while BUSY, READY or FAILED; else NULL */
};

struct worker {
        struct tm_ra *ra;
        struct tm_cursor *cur; /* its own cursor on the view (records.h) */
        pthread_t th;
        int started;
        uint32_t next; /* the segment after the one it decodes or decoded last
                          (UINT32_MAX: none yet); under mu once started */
};

struct tm_ra {
        struct tm_trace *t;
        uint64_t *start; /* [nseg] where each segment starts in the view */
        uint8_t *ck;     /* [nseg] 1: the segment starts at a checkpoint */
        uint32_t nseg;
        enum tm_view_kind kind;
        uint64_t size;
        uint32_t cur; /* lowest segment in the window */
        int placed;   /* the window is set */
        pthread_mutex_t mu;
        pthread_cond_t cv;
        int stop;
        unsigned nslots; /* see ra_slots */
        struct slot slot[RA_SLOTS_MAX];
        /* Segment buffers not in a slot, the last given back on top: a
         * worker takes one as it starts a segment, and the window gives
         * it back when it moves off the segment (buf_take, buf_give). */
        char *pool[RA_SLOTS_MAX];
        unsigned npool;
        unsigned nworkers;
        unsigned reserved; /* counted in ra_live */
        uint64_t mem;      /* counted in ra_mem */
        struct worker w[TM_RA_THREADS_MAX];
};

/* $TM_READ_AHEAD_MEM bytes if set (tests), else TM_RA_MEM_TOTAL. */
static uint64_t ra_mem_budget(void)
{
        const char *e = getenv("TM_READ_AHEAD_MEM");
        return e && *e ? strtoull(e, NULL, 10) : TM_RA_MEM_TOTAL;
}

uint64_t tm_ra_mem_in_use(void)
{
        return atomic_load(&ra_mem);
}

unsigned tm_ra_far_starts(void)
{
        return atomic_load(&ra_far);
}

unsigned tm_ra_threads(void)
{
        const char *s = getenv("TM_READ_THREADS");
        long n;
        if (s && *s)
                n = strtol(s, NULL, 10);
        else
                n = sysconf(_SC_NPROCESSORS_ONLN) - 1;
        if (n < 0)
                n = 0;
        return n > TM_RA_THREADS_MAX ? TM_RA_THREADS_MAX : (unsigned)n;
}

unsigned tm_ra_threads_heavy(void)
{
        unsigned n = tm_ra_threads();
        const char *s = getenv("TM_READ_THREADS");
        if (s && *s)
                return n;
        return n == 1 && sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : n;
}

/* Segment s of the view: [*start, *end). */
static void seg_bounds(const struct tm_ra *ra, uint32_t s, uint64_t *start, uint64_t *end)
{
        *start = ra->start[s];
        *end = s + 1 < ra->nseg ? ra->start[s + 1] : ra->size;
}

/* The last segment starting at or before off. */
static uint32_t seg_of(const struct tm_ra *ra, uint64_t off)
{
        uint32_t lo = 0, hi = ra->nseg;
        while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (ra->start[mid] <= off)
                        lo = mid;
                else
                        hi = mid;
        }
        return lo;
}

/* When a checkpoint interval is longer than TM_RA_SEG_MAX, cut every
 * interval longer than TM_RA_PIECE into equal pieces of at most that: the
 * segments of the readahead (starts s[0..*n), the view size bytes). A
 * record trace's index keeps its size to a share of the archive, so a
 * heap trace packed to 1.5 bytes a record gets a checkpoint every ~128 Ki
 * records, 7 MB of ascii and 9 MB of binary, and was never read ahead.
 * All intervals are cut, not only the long ones, so that the slots are
 * TM_RA_PIECE bytes: a slot is new memory, and faulting in 4 of 3.3 MB
 * cost a cold cat of such a trace ~10% of its samples (and a huge page
 * fault can stall on compaction). A piece that does not start at a
 * checkpoint costs nothing to the worker whose cursor ended where it
 * starts (worker_pick prefers that one); another worker's cursor decodes
 * from the checkpoint up to it. Returns the new array (s freed), or NULL;
 * *ck gets which of its segments start at a checkpoint. */
static uint64_t *cut_long(uint64_t *s, uint32_t *n, uint64_t size, uint8_t **ck)
{
        uint64_t limit = TM_RA_SEG_MAX, pieces = 0;
        for (uint32_t i = 0; i < *n; i++)
                if ((i + 1 < *n ? s[i + 1] : size) - s[i] > TM_RA_SEG_MAX)
                        limit = TM_RA_PIECE;
        for (uint32_t i = 0; i < *n; i++) {
                uint64_t len = (i + 1 < *n ? s[i + 1] : size) - s[i];
                pieces += len > limit ? (len + TM_RA_PIECE - 1) / TM_RA_PIECE : 1;
        }
        uint64_t *o = pieces == *n ? s : pieces < UINT32_MAX ? malloc(pieces * sizeof *o) : NULL;
        *ck = o ? malloc(pieces) : NULL;
        if (!*ck) {
                if (o != s)
                        free(o);
                free(s);
                return NULL;
        }
        if (o == s) {
                memset(*ck, 1, pieces);
                return s;
        }
        uint32_t m = 0;
        for (uint32_t i = 0; i < *n; i++) {
                uint64_t len = (i + 1 < *n ? s[i + 1] : size) - s[i];
                uint64_t k = len > limit ? (len + TM_RA_PIECE - 1) / TM_RA_PIECE : 1;
                for (uint64_t j = 0; j < k; j++) {
                        (*ck)[m] = j == 0;
                        o[m++] = s[i] + j * (len / k); /* the last takes len % k */
                }
        }
        free(s);
        *n = m;
        return o;
}

/* A segment buffer for sl, which a worker starts on: the one given back
 * last, so a sequential read cycles through as few buffers as are in use
 * at once (the one being read, the one behind it, the workers' and those
 * decoded ahead) rather than through every slot of the window. A buffer
 * is new memory the first time it is written, a fault that clears 2 MiB
 * (on this project's VM, whose host takes freed memory back, 1-3 ms); a
 * cold `cat` of a Java or heap trace wrote 7 of its 8. There is one
 * buffer a slot, so one is free. Under mu. */
static void buf_take(struct tm_ra *ra, struct slot *sl)
{
        if (!sl->buf)
                sl->buf = ra->pool[--ra->npool];
}

/* sl's buffer back to the pool (sl neither BUSY nor held). Under mu. */
static void buf_give(struct tm_ra *ra, struct slot *sl)
{
        if (sl->buf) {
                ra->pool[ra->npool++] = sl->buf;
                sl->buf = NULL;
        }
}

/* Decode one segment into its slot. */
static int worker_fill(struct worker *w, struct slot *sl, uint32_t seg)
{
        uint64_t start, end;
        seg_bounds(w->ra, seg, &start, &end);
        size_t len = (size_t)(end - start), done = 0;
        while (done < len) {
                /* the archive changed: nothing of the new version (the
                 * reader checks it as it takes the bytes too) */
                if (tm_trace_read_check(w->ra->t, start + done, NULL) < 0)
                        return -1;
                ssize_t k =
                    tm_records_pread(w->cur, sl->buf + done, len - done, start + done, NULL);
                if (k <= 0)
                        return -1;
                done += (size_t)k;
        }
        return 0;
}

/* Whether a worker's cursor is at segment s or will be when it ends the
 * one it decodes (it takes s then). Under mu. */
static int seg_claimed(const struct tm_ra *ra, uint32_t s)
{
        for (unsigned i = 0; i < TM_RA_THREADS_MAX; i++)
                if (ra->w[i].next == s)
                        return 1;
        return 0;
}

/* The wanted segment worker w takes next, or NULL (it waits):
 * 1. the one its cursor ended at (next), so that pieces of one interval
 *    go on without decoding again;
 * 2. else the lowest, the one a reader waits for first, unless another
 *    worker's cursor is heading there;
 * 3. else the lowest that starts at a checkpoint and that no other
 *    cursor is heading for: nothing to decode to get there (so two
 *    workers take every other interval). A piece that
 *    does not start at one would cost the decoding from there to its
 *    start, which another worker does anyway: not taken (measured, taking
 *    them made two workers slower than one).
 * Under mu. */
static struct slot *worker_pick(struct tm_ra *ra, const struct worker *w)
{
        struct slot *ck = NULL, *low = NULL;
        for (unsigned i = 0; i < ra->nslots; i++) {
                struct slot *sl = &ra->slot[i];
                if (sl->state != SLOT_WANTED)
                        continue;
                if (sl->seg == w->next)
                        return sl;
                if (ra->ck[sl->seg] && (!ck || sl->seg < ck->seg) && !seg_claimed(ra, sl->seg))
                        ck = sl;
                if (!low || sl->seg < low->seg)
                        low = sl;
        }
        if (low && !seg_claimed(ra, low->seg))
                return low;
        return ck;
}

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        struct tm_ra *ra = w->ra;
        pthread_setname_np(pthread_self(), "tm-readahead"); /* for top -H, perf */
        pthread_mutex_lock(&ra->mu);
        while (!ra->stop) {
                struct slot *best = worker_pick(ra, w);
                if (!best) {
                        pthread_cond_wait(&ra->cv, &ra->mu);
                        continue;
                }
                best->state = SLOT_BUSY;
                buf_take(ra, best);
                uint32_t seg = best->seg;
                if (seg != w->next && !ra->ck[seg])
                        atomic_fetch_add(&ra_far, 1);
                w->next = seg + 1; /* where its cursor will be */
                pthread_mutex_unlock(&ra->mu);
                int rc = worker_fill(w, best, seg);
                pthread_mutex_lock(&ra->mu);
                best->state = rc == 0 ? SLOT_READY : SLOT_FAILED;
                pthread_cond_broadcast(&ra->cv);
        }
        pthread_mutex_unlock(&ra->mu);
        return NULL;
}

/* A segment buffer. Each is new memory that the worker fills first, and
 * page faults on it were ~2% of a cold `cat`'s samples: so one of 2 MiB or
 * more starts on a 2 MiB boundary and asks for transparent huge pages
 * (which THP's "madvise" mode, this machine's, gives only to memory that
 * asks): one fault per 2 MiB instead of 512 for most of it. Measured,
 * cold cat ascii --direct-io of 10^8 refs (2.5 MB segments), 8
 * alternating runs: median 0.382 -> 0.372 s (no change measurable through
 * the page cache's noise). A failed madvise only loses that. */
enum { RA_HUGE = 2u << 20 };

static char *slot_alloc(size_t n)
{
        return n < RA_HUGE ? malloc(n) : tm_huge_alloc(n);
}

/* The bytes of a slot for segments of at most big bytes: from 1 MiB on, a
 * whole number of huge pages. The pieces of a cut interval are a little
 * under TM_RA_PIECE (equal parts of it), and as small pages their first
 * touch was 8,600 page faults and ~9% of the samples of a heap trace's
 * cold cat (session 18); a huge page is allocated whole anyway. */
static uint64_t slot_bytes(uint64_t big)
{
        if (big < RA_HUGE / 2)
                return big ? big : 1;
        return (big + RA_HUGE - 1) / RA_HUGE * RA_HUGE;
}

/* The slots of a readahead with n workers: one each and RA_SPARE. With
 * several workers on a trace whose checkpoint intervals are cut into up to
 * P pieces, (n - 1) * P more: a worker takes only pieces its cursor gets
 * to without decoding others (worker_pick), so while the reader is in one
 * interval the others decode the next ones, whole, and the window must
 * hold them. At most RA_SLOTS_MAX. */
static unsigned ra_slots(const struct tm_ra *ra, unsigned n)
{
        uint32_t p = 0, run = 0, starts = 0;
        for (uint32_t s = 0; s < ra->nseg; s++) {
                run = ra->ck[s] ? 1 : run + 1;
                p = run > p ? run : p;
                starts += ra->ck[s];
        }
        uint64_t want = n + RA_SPARE;
        if (p > 1 && starts > 1)
                want += (uint64_t)(n - 1) * p;
        return want > RA_SLOTS_MAX ? RA_SLOTS_MAX : (unsigned)want;
}

/* A worker's cursor on view, counted as one of the trace's open cursors
 * (no retry replaces the index under it) from its opening to its close;
 * its reads stop where the records end (a damaged trace's, at the
 * damage). The index is ready: the reader's cursor is open. 1 or 0. */
static int ra_cursor_open(struct tm_ra *ra, const char *view, struct tm_cursor **cur)
{
        __atomic_fetch_add(&ra->t->nvfiles, 1, __ATOMIC_ACQ_REL);
        if (tm_records_vfile_open(ra->t, view, cur, NULL) == 0 &&
            tm_records_vfile_worker(*cur) == 0)
                return 1;
        tm_records_vfile_close(*cur);
        *cur = NULL;
        __atomic_fetch_sub(&ra->t->nvfiles, 1, __ATOMIC_RELEASE);
        return 0;
}

static void ra_cursor_close(struct tm_ra *ra, struct tm_cursor *cur)
{
        if (!cur)
                return;
        tm_records_vfile_close(cur);
        __atomic_fetch_sub(&ra->t->nvfiles, 1, __ATOMIC_RELEASE);
}

struct tm_ra *tm_ra_open(struct tm_trace *t, const char *view, enum tm_view_kind kind,
                         uint64_t size, unsigned nthreads)
{
        if (nthreads == 0 || (kind != TM_VIEW_ASCII && kind != TM_VIEW_BINARY))
                return NULL;
        struct tm_ra *ra = calloc(1, sizeof *ra);
        if (!ra)
                return NULL;
        for (unsigned i = 0; i < TM_RA_THREADS_MAX; i++)
                ra->w[i].next = UINT32_MAX;
        ra->start = tm_records_segments(t, view, &ra->nseg);
        if (ra->start)
                ra->start = cut_long(ra->start, &ra->nseg, size, &ra->ck);
        if (!ra->start || ra->nseg < 2) {
                free(ra->start);
                free(ra->ck);
                free(ra);
                return NULL;
        }
        ra->t = t;
        ra->kind = kind;
        ra->size = size;
        uint64_t big = 0;
        for (uint32_t s = 0; s < ra->nseg; s++) {
                uint64_t a, b;
                seg_bounds(ra, s, &a, &b);
                big = b - a > big ? b - a : big;
        }
        if (big > TM_RA_SEG_MAX) {
                free(ra->start);
                free(ra->ck);
                free(ra);
                return NULL;
        }
        nthreads = nthreads > TM_RA_THREADS_MAX ? TM_RA_THREADS_MAX : nthreads;
        unsigned live = atomic_fetch_add(&ra_live, nthreads);
        if (live + nthreads > TM_RA_WORKERS_TOTAL) {
                unsigned over = live + nthreads - TM_RA_WORKERS_TOTAL;
                over = over > nthreads ? nthreads : over;
                atomic_fetch_sub(&ra_live, over);
                nthreads -= over;
        }
        ra->reserved = nthreads;
        /* Segment buffers of all readaheads share TM_RA_MEM_TOTAL, and
         * come out of the budget of open views (hmem.h): take fewer
         * workers, or none, when either is spent. */
        uint64_t seg = slot_bytes(big), budget = ra_mem_budget();
        while (nthreads > 0) {
                uint64_t want = ra_slots(ra, nthreads) * seg;
                if (atomic_fetch_add(&ra_mem, want) + want <= budget && tm_hmem_take(want) == 0) {
                        ra->mem = want;
                        break;
                }
                atomic_fetch_sub(&ra_mem, want);
                nthreads--;
        }
        atomic_fetch_sub(&ra_live, ra->reserved - nthreads);
        ra->reserved = nthreads;
        ra->nslots = nthreads ? ra_slots(ra, nthreads) : 0;
        pthread_mutex_init(&ra->mu, NULL);
        pthread_cond_init(&ra->cv, NULL);
        int ok = 1;
        for (unsigned i = 0; i < ra->nslots && ok; i++)
                if ((ok = (ra->pool[i] = slot_alloc((size_t)seg)) != NULL))
                        ra->npool++;
        ok = ok && nthreads > 0;
        for (unsigned i = 0; i < nthreads && ok; i++) {
                struct worker *w = &ra->w[i];
                w->ra = ra;
                ok = ra_cursor_open(ra, view, &w->cur);
                if (ok)
                        ok = pthread_create(&w->th, NULL, worker_main, w) == 0;
                w->started = ok;
                ra->nworkers = i + 1;
        }
        if (!ok) {
                tm_ra_close(ra);
                return NULL;
        }
        return ra;
}

void tm_ra_close(struct tm_ra *ra)
{
        if (!ra)
                return;
        pthread_mutex_lock(&ra->mu);
        ra->stop = 1;
        pthread_cond_broadcast(&ra->cv);
        /* a reply may still be sending from a held segment */
        for (unsigned i = 0; i < ra->nslots; i++)
                while (ra->slot[i].holds)
                        pthread_cond_wait(&ra->cv, &ra->mu);
        pthread_mutex_unlock(&ra->mu);
        for (unsigned i = 0; i < ra->nworkers; i++) {
                if (ra->w[i].started)
                        pthread_join(ra->w[i].th, NULL);
                ra_cursor_close(ra, ra->w[i].cur);
        }
        for (unsigned i = 0; i < ra->nslots; i++)
                buf_give(ra, &ra->slot[i]);
        for (unsigned i = 0; i < ra->npool; i++)
                free(ra->pool[i]);
        free(ra->start);
        free(ra->ck);
        atomic_fetch_sub(&ra_live, ra->reserved);
        atomic_fetch_sub(&ra_mem, ra->mem);
        tm_hmem_give(ra->mem);
        pthread_mutex_destroy(&ra->mu);
        pthread_cond_destroy(&ra->cv);
        free(ra);
}

/* Point slot s % nslots at segment s (waiting out a worker still on
 * its old segment, and replies still sending from it). Under mu. */
static void slot_want(struct tm_ra *ra, uint32_t s)
{
        struct slot *sl = &ra->slot[s % ra->nslots];
        while (sl->state == SLOT_BUSY || sl->holds)
                pthread_cond_wait(&ra->cv, &ra->mu);
        if (sl->seg == s && sl->state != SLOT_EMPTY)
                return;
        buf_give(ra, sl);
        sl->seg = s;
        sl->state = s < ra->nseg ? SLOT_WANTED : SLOT_EMPTY;
}

/* Make segment s the lowest of the window. Under mu. */
static void window_move(struct tm_ra *ra, uint32_t s)
{
        uint32_t from = ra->placed && s - ra->cur < ra->nslots ? ra->cur + ra->nslots : s;
        ra->cur = s;
        ra->placed = 1;
        for (uint32_t i = from; i < s + ra->nslots; i++)
                slot_want(ra, i);
        pthread_cond_broadcast(&ra->cv);
}

/* Serve n bytes at off from finished segments, waiting for the ones in
 * flight: copied to buf, or (buf NULL) held and pointed at from sp. See
 * tm_ra_read for what it returns. */
static ssize_t ra_serve(struct tm_ra *ra, void *buf, size_t n, uint64_t off, struct tm_vspan *sp)
{
        if (off >= ra->size || n == 0)
                return 0;
        size_t done = 0;
        pthread_mutex_lock(&ra->mu);
        while (done < n && off + done < ra->size) {
                uint64_t at = off + done;
                uint32_t s = seg_of(ra, at);
                if (done == 0 && ra->placed) {
                        if (s < ra->cur && ra->cur - s <= RA_LATE) {
                                pthread_mutex_unlock(&ra->mu);
                                return TM_RA_LATE; /* a late request */
                        }
                        if (s < ra->cur || s > ra->cur + ra->nslots)
                                break; /* a jump: not ours */
                }
                /* The window starts one segment behind the one being
                 * read, so that a late request for it is still served. */
                if (!ra->placed)
                        window_move(ra, s);
                else if (s > ra->cur + 1)
                        window_move(ra, s - 1);
                struct slot *sl = &ra->slot[s % ra->nslots];
                while (sl->state == SLOT_WANTED || sl->state == SLOT_BUSY)
                        pthread_cond_wait(&ra->cv, &ra->mu);
                if (sl->state != SLOT_READY || sl->seg != s)
                        break;
                uint64_t start, end;
                seg_bounds(ra, s, &start, &end);
                size_t k = (size_t)(end - at) < n - done ? (size_t)(end - at) : n - done;
                if (buf) {
                        memcpy((char *)buf + done, sl->buf + (at - start), k);
                } else if (sp->n == TM_VSPAN_MAX) {
                        break; /* cannot happen (tm_ra_peek checks): short, so copied */
                } else {
                        sl->holds++;
                        sp->slot[sp->n] = (unsigned)(sl - ra->slot);
                        sp->iov[sp->n].iov_base = sl->buf + (at - start);
                        sp->iov[sp->n].iov_len = k;
                        sp->n++;
                }
                done += k;
        }
        pthread_mutex_unlock(&ra->mu);
        return done ? (ssize_t)done : -1;
}

ssize_t tm_ra_read(struct tm_ra *ra, void *buf, size_t n, uint64_t off)
{
        return ra_serve(ra, buf, n, off, NULL);
}

ssize_t tm_ra_peek(struct tm_ra *ra, size_t n, uint64_t off, struct tm_vspan *sp)
{
        sp->ra = ra;
        sp->n = 0;
        if (off >= ra->size || n == 0)
                return 0;
        n = n < ra->size - off ? n : (size_t)(ra->size - off);
        /* Two segments at most: a third would move the window over the
         * first, which this request holds. */
        if (seg_of(ra, off + n - 1) - seg_of(ra, off) >= TM_VSPAN_MAX)
                return TM_RA_COPY;
        ssize_t got = ra_serve(ra, NULL, n, off, sp);
        if (got > 0 && (size_t)got < n) {
                tm_ra_unpeek(sp); /* a segment failed: the copying path meets it */
                return TM_RA_COPY;
        }
        return got;
}

void tm_ra_unpeek(struct tm_vspan *sp)
{
        if (sp->n == 0)
                return;
        struct tm_ra *ra = sp->ra;
        pthread_mutex_lock(&ra->mu);
        for (unsigned i = 0; i < sp->n; i++)
                ra->slot[sp->slot[i]].holds--;
        sp->n = 0;
        pthread_cond_broadcast(&ra->cv);
        pthread_mutex_unlock(&ra->mu);
}
