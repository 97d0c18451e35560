/* Containers: detection, and the shared reader and writer layer
 * (positions, seek policy); the table is cont_table.c, the buffered pread
 * input cont_io.c. See container.h. */
#include "container.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/tm_io.h"
#include "cont_impl.h"

/* tm_cont_open, reading member (TM_CONT_MEMBER_PICK: the module's
 * choice) of an archive that has members. */
static int cont_open(int fd, const char *path, uint64_t member, struct tm_cont **out,
                     struct tm_err *err)
{
        *out = NULL;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return tm_err_set(err, -errno, "%s: stat: %s", path, strerror(errno));
        struct tm_cont *c = calloc(1, sizeof *c);
        if (!c || !(c->path = strdup(path ? path : "?"))) {
                free(c);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", path);
        }
        c->fd = fd;
        c->wfd = -1;
        c->asize = (uint64_t)st.st_size;
        c->dir_off = c->asize;
        tm_cont_id_of(&st, &c->id);
        c->member = member;

        uint8_t head[4];
        size_t n = c->asize < sizeof head ? (size_t)c->asize : sizeof head;
        int ret = tm_cont_pread(c, head, n, 0, err);
        if (ret < 0)
                goto fail;
        for (size_t i = 0; tm_cont_table[i]; i++) {
                if (tm_cont_table[i]->probe(head, n)) {
                        c->ops = tm_cont_table[i];
                        break;
                }
        }
        if (member != TM_CONT_MEMBER_PICK && c->ops->kind != TM_CONT_ZIP) {
                ret = tm_err_set(err, -ENOTSUP, "%s: a %s archive has no members", c->path,
                                 c->ops->name);
                goto fail;
        }
        if (c->ops->open && (ret = c->ops->open(c, err)) < 0)
                goto fail;
        *out = c;
        return 0;
fail:
        tm_cont_close(c);
        return ret;
}

const char *tm_cont_magic(const uint8_t *head, size_t n)
{
        for (size_t i = 0; tm_cont_table[i]; i++)
                if (tm_cont_table[i]->kind != TM_CONT_PLAIN && tm_cont_table[i]->probe(head, n))
                        return tm_cont_table[i]->name;
        return NULL;
}

int tm_cont_open(int fd, const char *path, struct tm_cont **out, struct tm_err *err)
{
        return cont_open(fd, path, TM_CONT_MEMBER_PICK, out, err);
}

int tm_cont_open_member(int fd, const char *path, uint64_t index, struct tm_cont **out,
                        struct tm_err *err)
{
        if (index == TM_CONT_MEMBER_PICK)
                return tm_err_set(err, -EINVAL, "%s: no member %llu", path,
                                  (unsigned long long)index);
        return cont_open(fd, path, index, out, err);
}

void tm_cont_close(struct tm_cont *c)
{
        if (!c)
                return;
        if (c->ops && c->ops->close)
                c->ops->close(c);
        if (c->wfd_owned)
                close(c->wfd);
        tm_cpoints_free(&c->pts);
        free(c->path);
        free(c);
}

const char *tm_cont_name(const struct tm_cont *c)
{
        return c->ops->name;
}

uint64_t tm_cont_archive_size(const struct tm_cont *c)
{
        return c->asize;
}

uint64_t tm_cont_dir_offset(const struct tm_cont *c)
{
        return c->dir_off < c->asize ? c->dir_off : c->asize;
}

int tm_cont_raw_size(const struct tm_cont *c, uint64_t *size)
{
        if (!c->raw_known)
                return 0;
        *size = c->raw_size;
        return 1;
}

int tm_cont_seekable(const struct tm_cont *c)
{
        if (c->ops->r_seek)
                return 1;
        return c->indexed && c->raw_known && c->pts.n > 0 && c->max_gap <= TM_CONT_SEEKABLE_GAP;
}

/* Raw bytes every scan of the process has made (tm_cont_scanned). */
static uint64_t cont_scanned;

/* The caller's sink behind a counter of the bytes the scan makes. */
struct scan_count {
        tm_cont_sink sink;
        void *arg;
};

static int scan_count_sink(void *arg, const uint8_t *buf, size_t n)
{
        struct scan_count *k = arg;
        __atomic_fetch_add(&cont_scanned, (uint64_t)n, __ATOMIC_RELAXED);
        return k->sink ? k->sink(k->arg, buf, n) : 0;
}

uint64_t tm_cont_scanned(void)
{
        return __atomic_load_n(&cont_scanned, __ATOMIC_RELAXED);
}

int tm_cont_scan(struct tm_cont *c, tm_cont_sink sink, void *arg, struct tm_err *err)
{
        struct tm_cpoints pts = {0};
        uint64_t raw = 0;
        c->scan_good = 0;
        struct scan_count k = {sink, arg};
        /* plain with no sink reads nothing: keep it so */
        tm_cont_sink counted = !sink && c->ops->kind == TM_CONT_PLAIN ? NULL : scan_count_sink;
        int ret = c->ops->scan(c, &pts, &raw, counted, &k, err);
        if (ret != 0) {
                tm_cpoints_free(&pts);
                return ret;
        }
        tm_cont_set_index(c, &pts, raw);
        c->scan_good = raw;
        return 0;
}

void tm_cont_set_unverified(struct tm_cont *c, int on)
{
        c->unverified = on;
}

int tm_cont_unverified(const struct tm_cont *c)
{
        return c->unverified && (c->ops->kind == TM_CONT_GZIP || c->ops->kind == TM_CONT_ZIP);
}

uint64_t tm_cont_scan_good(const struct tm_cont *c)
{
        return c->scan_good;
}

int tm_cont_members(const struct tm_cont *c, tm_cont_member_fn fn, void *arg, struct tm_err *err)
{
        return c->ops->members ? c->ops->members(c, fn, arg, err) : 0;
}

/* ---- readers ---- */

int tm_creader_open(struct tm_cont *c, struct tm_creader **out, struct tm_err *err)
{
        *out = NULL;
        struct tm_creader *r = calloc(1, sizeof *r);
        if (!r)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        r->c = c;
        int ret = c->ops->r_open(r, err);
        if (ret < 0) {
                free(r);
                return ret;
        }
        *out = r;
        return 0;
}

int tm_creader_open_head(struct tm_cont *c, struct tm_creader **out, struct tm_err *err)
{
        int ret = tm_creader_open(c, out, err);
        if (ret == 0)
                (*out)->head = 1;
        return ret;
}

void tm_creader_close(struct tm_creader *r)
{
        if (!r)
                return;
        r->c->ops->r_close(r);
        free(r->scratch);
        free(r);
}

size_t tm_creader_mem(const struct tm_creader *r)
{
        size_t n = sizeof *r + r->scap;
        return r->c->ops->r_mem ? n + r->c->ops->r_mem(r) : n;
}

uint64_t tm_creader_tell(const struct tm_creader *r)
{
        return r->pos;
}

ssize_t tm_creader_read(struct tm_creader *r, void *buf, size_t n, struct tm_err *err)
{
        if (r->broken)
                return tm_err_set(err, -EIO,
                                  "%s: raw offset %llu: reader failed earlier; seek first",
                                  r->c->path, (unsigned long long)r->pos);
        if (n == 0)
                return 0;
        ssize_t k = r->c->ops->r_read(r, buf, n, err);
        if (k < 0) {
                r->broken = 1;
                return k;
        }
        r->pos += (uint64_t)k;
        return k;
}

ssize_t tm_creader_read_full(struct tm_creader *r, void *buf, size_t n, struct tm_err *err)
{
        size_t done = 0;
        while (done < n) {
                ssize_t k = tm_creader_read(r, (uint8_t *)buf + done, n - done, err);
                if (k < 0)
                        return done ? (ssize_t)done : k;
                if (k == 0)
                        break;
                done += (size_t)k;
        }
        return (ssize_t)done;
}

/* The last point at or before raw_off, or NULL. */
static const struct tm_cpoint *point_before(const struct tm_cont *c, uint64_t raw_off)
{
        size_t lo = 0, hi = c->pts.n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (c->pts.p[mid].roff <= raw_off)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo ? &c->pts.p[lo - 1] : NULL;
}

uint64_t tm_cont_restart_cost(const struct tm_cont *c, uint64_t raw)
{
        if (c->ops->r_seek)
                return 0;
        const struct tm_cpoint *p = point_before(c, raw);
        return raw - (p ? p->roff : 0);
}

int tm_cont_next_point(const struct tm_cont *c, uint64_t raw, uint64_t *next)
{
        if (c->ops->r_seek || !c->indexed)
                return 0;
        const struct tm_cpoint *p = point_before(c, raw);
        size_t i = p ? (size_t)(p - c->pts.p) + 1 : 0;
        if (i >= c->pts.n)
                return 0;
        *next = c->pts.p[i].roff;
        return 1;
}

static int discard(struct tm_creader *r, uint64_t target, struct tm_err *err)
{
        while (r->pos < target) {
                uint64_t left = target - r->pos;
                size_t want = left < TM_CONT_SCRATCH ? (size_t)left : TM_CONT_SCRATCH;
                if (want > r->scap) { /* short skips (small archives) keep it small */
                        size_t cap = r->scap * 2 > want ? r->scap * 2 : want;
                        cap = cap < TM_CONT_SCRATCH ? cap : TM_CONT_SCRATCH;
                        uint8_t *s = realloc(r->scratch, cap);
                        if (!s)
                                return tm_err_set(err, -ENOMEM, "%s: out of memory", r->c->path);
                        r->scratch = s;
                        r->scap = cap;
                }
                ssize_t k = tm_creader_read(r, r->scratch, want, err);
                if (k < 0)
                        return (int)k;
                if (k == 0)
                        return tm_err_set(
                            err, -EINVAL, "%s: seek to raw offset %llu past the end (%llu)",
                            r->c->path, (unsigned long long)target, (unsigned long long)r->pos);
        }
        return 0;
}

int tm_creader_seek(struct tm_creader *r, uint64_t raw_off, struct tm_err *err)
{
        struct tm_cont *c = r->c;
        if (c->raw_known && raw_off > c->raw_size)
                return tm_err_set(err, -EINVAL, "%s: seek to raw offset %llu past the end (%llu)",
                                  c->path, (unsigned long long)raw_off,
                                  (unsigned long long)c->raw_size);
        if (c->ops->r_seek) {
                int ret = c->ops->r_seek(r, raw_off, err);
                if (ret == 0) {
                        r->pos = raw_off;
                        r->broken = 0;
                }
                return ret;
        }
        const struct tm_cpoint *p = point_before(c, raw_off);
        uint64_t start = p ? p->roff : 0;
        int forward = !r->broken && raw_off >= r->pos &&
                      (r->pos >= start || raw_off - r->pos <= TM_CONT_SHORT_SKIP);
        if (!forward) {
                r->broken = 1;
                int ret = c->ops->r_restart(r, p, err);
                if (ret < 0)
                        return ret;
                r->broken = 0;
                r->pos = start;
        }
        return discard(r, raw_off, err);
}

/* ---- writers ---- */

static const struct tm_cont_ops *ops_of_kind(enum tm_cont_kind kind)
{
        for (size_t i = 0; tm_cont_table[i]; i++)
                if (tm_cont_table[i]->kind == kind)
                        return tm_cont_table[i];
        return NULL;
}

int tm_cwriter_open(int fd, const char *path, enum tm_cont_kind kind,
                    const struct tm_cwriter_opts *o, struct tm_cwriter **out, struct tm_err *err)
{
        *out = NULL;
        const struct tm_cont_ops *ops = ops_of_kind(kind);
        if (!ops)
                return tm_err_set(err, -EINVAL, "%s: unknown container kind %d", path, (int)kind);
        if (!ops->w_open)
                return tm_err_set(err, -ENOTSUP, "%s: tracemount does not write %s archives", path,
                                  ops->name);
        struct tm_cwriter *w = calloc(1, sizeof *w);
        if (!w || !(w->path = strdup(path ? path : "?"))) {
                free(w);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", path);
        }
        w->ops = ops;
        w->fd = fd;
        if (o)
                w->o = *o;
        int ret = ops->w_open(w, err);
        if (ret < 0) {
                ops->w_free(w);
                free(w->path);
                free(w);
                return ret;
        }
        *out = w;
        return 0;
}

int tm_cwriter_write(struct tm_cwriter *w, const void *buf, size_t n, struct tm_err *err)
{
        if (n == 0)
                return 0;
        return w->ops->w_write(w, buf, n, err);
}

int tm_cwriter_boundary(struct tm_cwriter *w, struct tm_err *err)
{
        return w->ops->w_boundary ? w->ops->w_boundary(w, err) : 0;
}

int tm_cwriter_close(struct tm_cwriter *w, struct tm_err *err)
{
        if (!w)
                return 0;
        int ret = w->ops->w_finish(w, err);
        w->ops->w_free(w);
        free(w->path);
        free(w);
        return ret;
}
