/* pack_src: tracetool pack's input (pack_src.h). */
#include "pack_src.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heapin/heapin.h"
#include "lib_int.h"

#define SPOOL_CHUNK (1u << 20) /* bytes of a pipe read at once */

void pack_src_spool_end(struct pack_src *s)
{
        if (s->spool >= 0)
                close(s->spool);
        s->spool = -1;
}

/* Append buf[0..n) to the spool; on failure (a full disk) stop spooling:
 * pack then says which option to give instead of starting again. */
static void spool_put(struct pack_src *s, const void *buf, size_t n)
{
        size_t done = 0;
        while (s->spool >= 0 && done < n) {
                ssize_t k = pwrite(s->spool, (const char *)buf + done, n - done,
                                   (off_t)(s->spool_len + done));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        pack_src_spool_end(s);
                        return;
                }
                done += (size_t)k;
        }
        s->spool_len += done;
        s->replay = s->spool_len;
}

/* Up to n raw bytes from the stream (past the head once it is read); 0
 * at its end. */
static ssize_t raw_read(struct pack_src *s, void *buf, size_t n, struct tm_err *err)
{
        if (s->r)
                return tm_creader_read(s->r, buf, n, err);
        if (s->spool >= 0 && s->replay < s->spool_len) {
                size_t m = s->spool_len - s->replay < n ? (size_t)(s->spool_len - s->replay) : n;
                ssize_t k = pread(s->spool, buf, m, (off_t)s->replay);
                if (k <= 0)
                        return tm_err_set(err, k < 0 ? -errno : -EIO, "%s: reading its copy: %s",
                                          s->name, k < 0 ? strerror(errno) : "short");
                s->replay += (uint64_t)k;
                return k;
        }
        for (;;) {
                ssize_t k = read(s->fd, buf, n < SPOOL_CHUNK ? n : SPOOL_CHUNK);
                if (k > 0)
                        spool_put(s, buf, (size_t)k);
                if (k >= 0)
                        return k;
                if (errno != EINTR)
                        return tm_err_set(err, -errno, "%s: read: %s", s->name, strerror(errno));
        }
}

/* Up to n raw bytes of the pass: the head first (in the first pass), then
 * the stream. */
static ssize_t src_read(struct pack_src *s, void *buf, size_t n, struct tm_err *err)
{
        ssize_t k;
        if (s->headpos < s->headn) {
                size_t c = s->headn - s->headpos < n ? s->headn - s->headpos : n;
                memcpy(buf, s->head + s->headpos, c);
                s->headpos += c;
                k = (ssize_t)c;
        } else {
                k = raw_read(s, buf, n, err);
        }
        if (k > 0)
                s->raw += (uint64_t)k;
        return k;
}

/* Read the head up to want bytes (fewer only at the end of the input). */
static int read_head(struct pack_src *s, size_t want, struct tm_err *err)
{
        uint8_t *h = realloc(s->head, want);
        if (!h)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", s->name);
        s->head = h;
        ssize_t k = 1;
        while (s->headn < want && (k = raw_read(s, h + s->headn, want - s->headn, err)) > 0)
                s->headn += (size_t)k;
        return k < 0 ? (int)k : 0;
}

/* Probe the head and open what it is. */
static int src_identify(struct pack_src *s, struct tm_err *err)
{
        int rc = read_head(s, TM_RHEAD_MIN, err);
        if (rc < 0)
                return rc;
        if (s->headn == 0)
                return tm_err_set(err, -EMEDIUMTYPE, "%s: empty file", s->name);
        s->row = tm_rcodec_probe(s->head, s->headn);
        if (!s->row) {
                if (!heapin_detect(s->head, s->headn))
                        return tm_err_set(err, -EMEDIUMTYPE,
                                          "%s: not a trace this build can read%s", s->name,
                                          s->r ? "" : " (a pipe must be uncompressed)");
                s->format = "heaptrack";
                s->schema = tm_schema_heap;
                return 0;
        }
        s->format = s->row->name;
        size_t want = tm_rcodec_head_want(s->row, s->head, s->headn);
        if (want > s->headn && s->headn == TM_RHEAD_MIN && (rc = read_head(s, want, err)) < 0)
                return rc;
        int hl = s->row->open(s->head, s->headn, s->name, &s->ctx, &s->schema, &s->st0, err);
        if (hl < 0)
                return tm_err_prefix(err, "%s", s->name);
        s->opened = 1;
        if ((size_t)hl > s->headn)
                return tm_err_set(err, -EIO, "%s: truncated header", s->name);
        s->hdr_len = (uint64_t)hl;
        if (tm_feed_init(&s->feed, s->row, s->ctx) < 0)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", s->name);
        return 0;
}

int pack_src_open(struct pack_src *s, const char *path, int fd, const char *name, int spool,
                  struct tm_err *err)
{
        memset(s, 0, sizeof *s);
        s->name = name;
        s->spool = -1;
        s->fd = fd;
        if (fd < 0 && strcmp(path, "-") == 0) {
                s->fd = STDIN_FILENO;
        } else if (fd < 0) {
                s->fd = open(path, O_RDONLY | O_CLOEXEC);
                s->own_fd = 1;
                if (s->fd < 0)
                        return tm_err_set(err, -errno, "%s: %s", path, strerror(errno));
        }
        struct stat sb;
        if (fstat(s->fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
                int rc = tm_cont_open(s->fd, name, &s->cont, err);
                if (rc == 0)
                        rc = tm_creader_open(s->cont, &s->r, err);
                if (rc < 0)
                        return rc;
                if (!tm_cont_raw_size(s->cont, &s->total))
                        s->total = 0;
        } else if (spool) {
                const char *dir = getenv("TMPDIR");
                s->spool = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        }
        progress_init(&s->prog, "packing");
        return src_identify(s, err);
}

/* A heaptrack file's reader and events. */
static ssize_t heap_read(void *arg, void *buf, size_t n)
{
        struct pack_src *s = arg;
        ssize_t k = src_read(s, buf, n, s->err);
        progress_update(&s->prog, s->raw, s->total);
        return k;
}

static int heap_event(void *arg, const struct tm_heap_ev *ev)
{
        struct pack_src *s = arg;
        struct tm_rec r;
        tm_heap_ev_to_rec(ev, &r);
        return s->fn(s->arg, &r, 1);
}

static int run_row(struct pack_src *s, struct tm_err *err)
{
        struct tm_feed *f = &s->feed;
        tm_feed_reset(f, s->hdr_len, s->st0.b);
        for (uint64_t skip = s->hdr_len;;) {
                ssize_t n = tm_feed_decode(f, s->rec, PACK_SRC_BATCH, err);
                if (n < 0)
                        return tm_err_prefix(err, "%s", s->name);
                if (n > 0) {
                        int rc = s->fn(s->arg, s->rec, (size_t)n);
                        if (rc)
                                return rc;
                        continue;
                }
                if (f->eof)
                        return 0;
                size_t room;
                uint8_t *p = tm_feed_space(f, &room);
                ssize_t k = src_read(s, p, room, err);
                if (k < 0)
                        return (int)k;
                size_t s0 = skip < (uint64_t)k ? (size_t)skip : (size_t)k; /* the header */
                memmove(p, p + s0, (size_t)k - s0);
                skip -= s0;
                tm_feed_commit(f, (size_t)k - s0);
                f->eof = k == 0;
                progress_update(&s->prog, s->raw, s->total);
        }
}

int pack_src_run(struct pack_src *s, pack_src_fn fn, void *arg, struct tm_err *err)
{
        s->fn = fn;
        s->arg = arg;
        s->err = err;
        s->raw = 0;
        if (s->row)
                return run_row(s, err);
        return heapin_heaptrack(heap_read, s, s->name, heap_event, s, err);
}

int pack_src_rewind(struct pack_src *s)
{
        struct tm_err err;
        if (!s->r) {
                if (s->spool < 0)
                        return -ESPIPE;
                s->replay = 0;
        } else if (tm_creader_seek(s->r, 0, &err) < 0) {
                return -ESPIPE;
        }
        s->headpos = s->headn; /* the stream gives the head again */
        return 0;
}

void pack_src_blame_damage(struct pack_src *s, struct tm_err *err)
{
        static uint8_t buf[64 << 10];
        struct tm_err e = {0};
        ssize_t k = 1;
        while (s->r && (k = tm_creader_read(s->r, buf, sizeof buf, &e)) > 0)
                ;
        if (k < 0)
                *err = e;
}

void pack_src_close(struct pack_src *s)
{
        progress_end(&s->prog);
        pack_src_spool_end(s);
        tm_feed_free(&s->feed);
        if (s->opened && s->row->close)
                s->row->close(s->ctx);
        tm_creader_close(s->r);
        tm_cont_close(s->cont);
        if (s->own_fd && s->fd >= 0)
                close(s->fd);
        free(s->head);
}
