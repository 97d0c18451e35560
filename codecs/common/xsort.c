#include "xsort.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tm_io.h"

#define WORDS_MAX 8

struct xrun {
        uint64_t off, n; /* byte offset in its file, records */
};

/* A run being merged: what is left of it in the file, and a buffer. */
struct xcur {
        int fd;
        uint64_t off, left;
        uint64_t *b;
        size_t n, i;
};

struct tm_xsort {
        unsigned words, keys, fanin;
        size_t rb; /* bytes a record */
        uint64_t *buf;
        size_t cap, n; /* records the buffer holds, records in it */
        uint64_t count;
        int fd[2];       /* runs are in fd[0]; merging a level writes fd[1] */
        uint64_t end[2]; /* bytes written to each */
        struct xrun *run;
        size_t nrun, runcap;
        int reading; /* 0 putting, 1 the buffer, 2 a merge */
        size_t pos;
        struct xcur cur[TM_XSORT_FANIN];
        unsigned heap[TM_XSORT_FANIN], nheap;
        size_t held, peak; /* bytes of buffers */
        int err;
};

static void hold(struct tm_xsort *x, size_t n)
{
        x->held += n;
        if (x->held > x->peak)
                x->peak = x->held;
}

/* ---- records in memory ---- */

static int rec_lt(const uint64_t *a, const uint64_t *b, unsigned keys)
{
        if (a[0] != b[0])
                return a[0] < b[0];
        return keys > 1 && a[1] < b[1];
}

static void rec_swap(uint64_t *a, uint64_t *b, unsigned w)
{
        for (unsigned i = 0; i < w; i++) {
                uint64_t t = a[i];
                a[i] = b[i];
                b[i] = t;
        }
}

static void sift_down(uint64_t *base, size_t i, size_t n, unsigned w, unsigned k)
{
        for (;;) {
                size_t c = 2 * i + 1;
                if (c >= n)
                        return;
                if (c + 1 < n && rec_lt(base + c * w, base + (c + 1) * w, k))
                        c++;
                if (!rec_lt(base + i * w, base + c * w, k))
                        return;
                rec_swap(base + i * w, base + c * w, w);
                i = c;
        }
}

static void heap_sort(uint64_t *base, size_t n, unsigned w, unsigned k)
{
        for (size_t i = n / 2; i-- > 0;)
                sift_down(base, i, n, w, k);
        for (size_t m = n; m > 1; m--) {
                rec_swap(base, base + (m - 1) * w, w);
                sift_down(base, 0, m - 1, w, k);
        }
}

static void insertion_sort(uint64_t *base, size_t n, unsigned w, unsigned k)
{
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && rec_lt(base + j * w, base + (j - 1) * w, k); j--)
                        rec_swap(base + j * w, base + (j - 1) * w, w);
}

/* Quicksort with a median of three, heapsort past a depth of 2 log n
 * (hostile input stays n log n); in place, as the memory bound counts
 * the buffer alone (glibc's qsort may allocate a copy). */
static void intro_sort(uint64_t *base, size_t n, unsigned w, unsigned k, unsigned depth)
{
        while (n > 16) {
                if (depth-- == 0) {
                        heap_sort(base, n, w, k);
                        return;
                }
                uint64_t *lo = base, *mid = base + n / 2 * w, *hi = base + (n - 1) * w;
                if (rec_lt(mid, lo, k))
                        rec_swap(mid, lo, w);
                if (rec_lt(hi, lo, k))
                        rec_swap(hi, lo, w);
                if (rec_lt(hi, mid, k))
                        rec_swap(hi, mid, w);
                uint64_t piv[WORDS_MAX];
                memcpy(piv, mid, w * sizeof *piv);
                size_t i = 0, j = n - 1; /* Hoare: [0, j] <= pivot <= (j, n) */
                for (;;) {
                        while (rec_lt(base + i * w, piv, k))
                                i++;
                        while (rec_lt(piv, base + j * w, k))
                                j--;
                        if (i >= j)
                                break;
                        rec_swap(base + i * w, base + j * w, w);
                        i++;
                        j--;
                }
                size_t left = j + 1, right = n - left;
                if (left < right) {
                        intro_sort(base, left, w, k, depth);
                        base += left * w;
                        n = right;
                } else {
                        intro_sort(base + left * w, right, w, k, depth);
                        n = left;
                }
        }
        insertion_sort(base, n, w, k);
}

static void sort_buffer(struct tm_xsort *x)
{
        unsigned depth = 2;
        for (size_t m = x->n; m > 1; m >>= 1)
                depth += 2;
        intro_sort(x->buf, x->n, x->words, x->keys, depth);
}

/* ---- files ---- */

static int temp_file(int *fd)
{
        const char *dir = getenv("TMPDIR");
        char path[4096];
        if (!dir || !*dir)
                dir = "/tmp";
        if (snprintf(path, sizeof path, "%s/tracemount-xsort.XXXXXX", dir) >= (int)sizeof path)
                return -ENAMETOOLONG;
        int f = mkostemp(path, O_CLOEXEC);
        if (f < 0)
                return -errno;
        unlink(path);
        *fd = f;
        return 0;
}

static int write_full(int fd, const void *p, size_t n, uint64_t off)
{
        const char *c = p;
        while (n) {
                ssize_t k = pwrite(fd, c, n, (off_t)off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -errno : -EIO;
                c += k;
                n -= (size_t)k;
                off += (uint64_t)k;
        }
        return 0;
}

static int add_run(struct tm_xsort *x, uint64_t off, uint64_t n)
{
        if (x->nrun == x->runcap) {
                size_t nc = x->runcap ? 2 * x->runcap : 16;
                struct xrun *r = realloc(x->run, nc * sizeof *r);
                if (!r)
                        return -ENOMEM;
                x->run = r;
                x->runcap = nc;
        }
        x->run[x->nrun++] = (struct xrun){off, n};
        return 0;
}

/* The buffer, sorted, as a run at the end of fd[0]. */
static int spill(struct tm_xsort *x)
{
        int rc = 0;
        if (x->fd[0] < 0)
                rc = temp_file(&x->fd[0]);
        if (rc < 0)
                return rc;
        sort_buffer(x);
        if ((rc = write_full(x->fd[0], x->buf, x->n * x->rb, x->end[0])) < 0 ||
            (rc = add_run(x, x->end[0], x->n)) < 0)
                return rc;
        x->end[0] += x->n * x->rb;
        x->n = 0;
        return 0;
}

/* ---- merging ---- */

static int cur_fill(struct tm_xsort *x, struct xcur *c)
{
        size_t want = TM_XSORT_READ_BUF / x->rb;
        if (want > c->left)
                want = (size_t)c->left;
        ssize_t k = tm_pread_full(c->fd, c->b, want * x->rb, c->off);
        if (k < 0)
                return (int)k;
        if ((size_t)k != want * x->rb)
                return -EIO;
        c->off += (uint64_t)k;
        c->left -= want;
        c->n = want;
        c->i = 0;
        return 0;
}

static const uint64_t *cur_rec(const struct tm_xsort *x, const struct xcur *c)
{
        return c->b + c->i * x->words;
}

static int heap_lt(const struct tm_xsort *x, unsigned a, unsigned b)
{
        return rec_lt(cur_rec(x, &x->cur[a]), cur_rec(x, &x->cur[b]), x->keys);
}

static void heap_down(struct tm_xsort *x, unsigned i)
{
        for (;;) {
                unsigned c = 2 * i + 1;
                if (c >= x->nheap)
                        return;
                if (c + 1 < x->nheap && heap_lt(x, x->heap[c + 1], x->heap[c]))
                        c++;
                if (!heap_lt(x, x->heap[c], x->heap[i]))
                        return;
                unsigned t = x->heap[i];
                x->heap[i] = x->heap[c];
                x->heap[c] = t;
                i = c;
        }
}

/* Start merging runs [first, first + n) of fd. */
static int merge_open(struct tm_xsort *x, int fd, size_t first, unsigned n)
{
        x->nheap = 0;
        for (unsigned i = 0; i < n; i++) {
                struct xcur *c = &x->cur[i];
                if (!c->b) {
                        if (!(c->b = malloc(TM_XSORT_READ_BUF)))
                                return -ENOMEM;
                        hold(x, TM_XSORT_READ_BUF);
                }
                c->fd = fd;
                c->off = x->run[first + i].off;
                c->left = x->run[first + i].n;
                int rc = cur_fill(x, c);
                if (rc < 0)
                        return rc;
                if (c->n)
                        x->heap[x->nheap++] = i;
        }
        for (unsigned i = x->nheap / 2; i-- > 0;)
                heap_down(x, i);
        return 0;
}

static int merge_next(struct tm_xsort *x, uint64_t *rec)
{
        if (!x->nheap)
                return 0;
        struct xcur *c = &x->cur[x->heap[0]];
        memcpy(rec, cur_rec(x, c), x->rb);
        if (++c->i == c->n) {
                int rc = c->left ? cur_fill(x, c) : 0;
                if (rc < 0)
                        return rc;
                if (!c->left && c->i == c->n)
                        x->heap[0] = x->heap[--x->nheap];
        }
        heap_down(x, 0);
        return 1;
}

/* While there are more runs than the fan-in, merge them fanin at a time
 * into fd[1], which then becomes fd[0]. The write buffer is the record
 * buffer, free by then. */
static int merge_level(struct tm_xsort *x)
{
        int rc = x->fd[1] < 0 ? temp_file(&x->fd[1]) : 0;
        size_t nout = 0, cap = x->cap;
        x->end[1] = 0;
        for (size_t first = 0; rc == 0 && first < x->nrun; first += x->fanin) {
                unsigned n = x->nrun - first < x->fanin ? (unsigned)(x->nrun - first) : x->fanin;
                uint64_t off = x->end[1], total = 0, *r = x->buf;
                int got = 0;
                rc = merge_open(x, x->fd[0], first, n);
                while (rc == 0 && (got = merge_next(x, r)) == 1) {
                        total++;
                        r += x->words;
                        if ((size_t)(r - x->buf) == cap * x->words || !x->nheap) {
                                size_t bytes = (size_t)(r - x->buf) * sizeof *r;
                                rc = write_full(x->fd[1], x->buf, bytes, x->end[1]);
                                x->end[1] += bytes;
                                r = x->buf;
                        }
                }
                if (rc == 0 && got < 0)
                        rc = got;
                if (rc == 0) /* runs already merged are not read again */
                        x->run[nout++] = (struct xrun){off, total};
        }
        if (rc < 0)
                return rc;
        x->nrun = nout;
        int t = x->fd[0];
        x->fd[0] = x->fd[1];
        x->fd[1] = t;
        x->end[0] = x->end[1];
        return ftruncate(x->fd[1], 0) < 0 ? -errno : 0;
}

/* ---- the API ---- */

int tm_xsort_new(unsigned words, unsigned keys, size_t mem, unsigned fanin, struct tm_xsort **out)
{
        if (words < 1 || words > WORDS_MAX || keys < 1 || keys > 2 || keys > words ||
            mem < words * sizeof(uint64_t) || fanin < 2)
                return -EINVAL;
        struct tm_xsort *x = calloc(1, sizeof *x);
        if (!x)
                return -ENOMEM;
        x->words = words;
        x->keys = keys;
        x->fanin = fanin < TM_XSORT_FANIN ? fanin : TM_XSORT_FANIN;
        x->rb = words * sizeof(uint64_t);
        x->cap = mem / x->rb;
        x->fd[0] = x->fd[1] = -1;
        x->buf = malloc(x->cap * x->rb);
        if (!x->buf) {
                free(x);
                return -ENOMEM;
        }
        hold(x, x->cap * x->rb);
        *out = x;
        return 0;
}

int tm_xsort_put(struct tm_xsort *x, const uint64_t *rec)
{
        if (x->err)
                return x->err;
        if (x->reading)
                return x->err = -EINVAL;
        if (x->n == x->cap) {
                int rc = spill(x);
                if (rc < 0)
                        return x->err = rc;
        }
        memcpy(x->buf + x->n * x->words, rec, x->rb);
        x->n++;
        x->count++;
        return 0;
}

int tm_xsort_grow(struct tm_xsort *x, size_t mem)
{
        size_t cap = mem / x->rb;
        if (x->err || x->reading || cap <= x->cap)
                return x->err;
        uint64_t *b = realloc(x->buf, cap * x->rb);
        if (!b)
                return -ENOMEM; /* the smaller buffer still works */
        hold(x, (cap - x->cap) * x->rb);
        x->buf = b;
        x->cap = cap;
        return 0;
}

int tm_xsort_finish(struct tm_xsort *x)
{
        if (x->err || x->reading)
                return x->err ? x->err : -EINVAL;
        int rc = 0;
        if (x->nrun == 0) { /* all in memory: the buffer shrinks to fit */
                uint64_t *b = x->n ? realloc(x->buf, x->n * x->rb) : NULL;
                if (b) {
                        x->held -= (x->cap - x->n) * x->rb;
                        x->buf = b;
                        x->cap = x->n;
                }
                sort_buffer(x);
                x->reading = 1;
                return 0;
        }
        if (x->n)
                rc = spill(x);
        while (rc == 0 && x->nrun > x->fanin)
                rc = merge_level(x);
        if (rc == 0) {
                free(x->buf); /* the merge needs only the runs' buffers */
                x->buf = NULL;
                x->held -= x->cap * x->rb;
                rc = merge_open(x, x->fd[0], 0, (unsigned)x->nrun);
        }
        x->reading = 2;
        return rc < 0 ? (x->err = rc) : 0;
}

int tm_xsort_next(struct tm_xsort *x, uint64_t *rec)
{
        if (x->err)
                return x->err;
        if (x->reading == 1) {
                if (x->pos == x->n)
                        return 0;
                memcpy(rec, x->buf + x->pos++ * x->words, x->rb);
                return 1;
        }
        if (x->reading != 2)
                return x->err = -EINVAL;
        int rc = merge_next(x, rec);
        return rc < 0 ? (x->err = rc) : rc;
}

uint64_t tm_xsort_count(const struct tm_xsort *x)
{
        return x->count;
}

uint64_t tm_xsort_runs(const struct tm_xsort *x)
{
        return x->nrun;
}

size_t tm_xsort_held(const struct tm_xsort *x)
{
        return x->held;
}

size_t tm_xsort_peak(const struct tm_xsort *x)
{
        return x->peak;
}

void tm_xsort_free(struct tm_xsort *x)
{
        if (!x)
                return;
        for (unsigned i = 0; i < TM_XSORT_FANIN; i++)
                free(x->cur[i].b);
        for (int i = 0; i < 2; i++)
                if (x->fd[i] >= 0)
                        close(x->fd[i]);
        free(x->run);
        free(x->buf);
        free(x);
}
