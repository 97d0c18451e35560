/* The seek index: restart points, and their saved form.
 *
 * Saved layout (all little-endian; docs/formats/containers.md):
 *   0  4  magic "TMCX"
 *   4  2  version (1)
 *   6  1  container kind (enum tm_cont_kind)
 *   7  1  0
 *   8  8  archive size the index was built for
 *  16  8  raw size
 *  24  4  number of points n
 *  28  4  CRC32 of bytes 0..27 followed by the n point records
 *  32     n point records of 32 bytes:
 *           coff u64, roff u64, wlen u32, wcrc u32, bits u8, 7 zero bytes
 *         then the gzip windows, raw-deflated, concatenated in point order.
 * The total length is exactly 32 + 32 n + the sum of wlen. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "cont_impl.h"
#include "../common/tm_io.h"

#define IDX_MAGIC "TMCX"
#define IDX_VERSION 1
#define IDX_HEAD 32
#define IDX_REC 32

int tm_cpoints_want(const struct tm_cpoints *pts, uint64_t coff, uint64_t roff)
{
        if (pts->n == 0)
                return 1;
        const struct tm_cpoint *last = &pts->p[pts->n - 1];
        return roff >= last->roff + TM_CONT_POINT_MIN_RAW &&
               coff >= last->coff + TM_CONT_POINT_MIN_COMP;
}

int tm_cpoints_add(struct tm_cpoints *pts, const struct tm_cpoint *p)
{
        if (pts->n == pts->cap) {
                size_t cap = pts->cap ? pts->cap * 2 : 64;
                struct tm_cpoint *np = realloc(pts->p, cap * sizeof *np);
                if (!np)
                        return -ENOMEM;
                pts->p = np;
                pts->cap = cap;
        }
        pts->p[pts->n++] = *p;
        return 0;
}

void tm_cpoints_free(struct tm_cpoints *pts)
{
        free(pts->p);
        memset(pts, 0, sizeof *pts);
}

void tm_cont_set_index(struct tm_cont *c, struct tm_cpoints *pts, uint64_t raw_size)
{
        tm_cpoints_free(&c->pts);
        c->pts = *pts;
        memset(pts, 0, sizeof *pts);
        c->raw_known = 1;
        c->raw_size = raw_size;
        c->indexed = 1;
        uint64_t prev = 0, gap = 0;
        for (size_t i = 0; i < c->pts.n; i++) {
                if (c->pts.p[i].roff - prev > gap)
                        gap = c->pts.p[i].roff - prev;
                prev = c->pts.p[i].roff;
        }
        if (raw_size - prev > gap)
                gap = raw_size - prev;
        c->max_gap = gap;
}

static void put_record(uint8_t *b, const struct tm_cpoint *p)
{
        memset(b, 0, IDX_REC);
        tm_put64(b, p->coff);
        tm_put64(b + 8, p->roff);
        tm_put32(b + 16, p->wlen);
        tm_put32(b + 20, p->wcrc);
        b[24] = p->bits;
}

static int64_t save_fail(const struct tm_cont *c, struct tm_err *err)
{
        return tm_err_set(err, -EIO, "%s: writing the seek index: %s", c->path, strerror(errno));
}

int64_t tm_cont_index_save(const struct tm_cont *c, FILE *f, struct tm_err *err)
{
        if (!c->indexed && !c->ops->r_seek)
                return tm_err_set(err, -EINVAL, "%s: no seek index yet (scan first)", c->path);
        uint8_t head[IDX_HEAD] = {0};
        memcpy(head, IDX_MAGIC, 4);
        head[4] = IDX_VERSION;
        head[6] = (uint8_t)c->ops->kind;
        tm_put64(head + 8, c->asize);
        tm_put64(head + 16, c->raw_size);
        tm_put32(head + 24, (uint32_t)c->pts.n);
        uLong crc = crc32(0, head, 28);
        uint8_t rec[IDX_REC];
        for (size_t i = 0; i < c->pts.n; i++) {
                put_record(rec, &c->pts.p[i]);
                crc = crc32(crc, rec, IDX_REC);
        }
        tm_put32(head + 28, (uint32_t)crc);
        if (fwrite(head, 1, IDX_HEAD, f) != IDX_HEAD)
                return save_fail(c, err);
        int64_t total = IDX_HEAD;
        for (size_t i = 0; i < c->pts.n; i++) {
                put_record(rec, &c->pts.p[i]);
                if (fwrite(rec, 1, IDX_REC, f) != IDX_REC)
                        return save_fail(c, err);
                total += IDX_REC;
        }
        /* Copy the window store (a temporary file after scan, the old
         * index file after load). */
        uint8_t buf[1 << 14];
        for (uint64_t done = 0; done < c->wsize;) {
                size_t n = c->wsize - done < sizeof buf ? (size_t)(c->wsize - done) : sizeof buf;
                ssize_t k = pread(c->wfd, buf, n, (off_t)(c->wbase + done));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return tm_err_set(err, -EIO, "%s: reading gzip windows at %llu: %s",
                                          c->path, (unsigned long long)(c->wbase + done),
                                          k < 0 ? strerror(errno) : "end of file");
                if (fwrite(buf, 1, (size_t)k, f) != (size_t)k)
                        return save_fail(c, err);
                done += (uint64_t)k;
                total += k;
        }
        return total;
}

static int bad_index(const struct tm_cont *c, uint64_t where, struct tm_err *err, const char *what)
{
        return tm_err_set(err, -EIO, "%s: seek index byte %llu: %s", c->path,
                          (unsigned long long)where, what);
}

/* Parse and validate the point records in b (n of them) into pts. */
static int parse_records(const struct tm_cont *c, const uint8_t *b, uint32_t n, uint64_t raw_size,
                         uint64_t wbytes, struct tm_cpoints *pts, struct tm_err *err)
{
        /* deflate points have windows: gzip, a zip deflate member */
        int windows = c->ops->kind == TM_CONT_GZIP || c->ops->kind == TM_CONT_ZIP;
        uint64_t wpos = 0;
        for (uint32_t i = 0; i < n; i++) {
                const uint8_t *r = b + (size_t)i * IDX_REC;
                uint64_t at = IDX_HEAD + (uint64_t)i * IDX_REC;
                struct tm_cpoint p = {
                    .coff = tm_le64(r),
                    .roff = tm_le64(r + 8),
                    .wlen = tm_le32(r + 16),
                    .wcrc = tm_le32(r + 20),
                    .bits = r[24],
                    .wpos = wpos,
                };
                for (int k = 25; k < IDX_REC; k++)
                        if (r[k])
                                return bad_index(c, at + k, err, "reserved byte set");
                const struct tm_cpoint *last = i ? &pts->p[i - 1] : NULL;
                if (p.coff >= c->asize || p.roff > raw_size ||
                    (last && (p.coff <= last->coff || p.roff < last->roff)))
                        return bad_index(c, at, err, "point out of order or out of range");
                if (p.bits > 7 || (p.bits && (!windows || p.coff == 0 || !p.wlen)))
                        return bad_index(c, at + 24, err, "bad bit position");
                if (p.wlen && (!windows || p.wlen > TM_GZ_WINDOW_CMAX || p.roff == 0 ||
                               p.wlen > wbytes - wpos))
                        return bad_index(c, at + 16, err, "bad window length");
                wpos += p.wlen;
                if (tm_cpoints_add(pts, &p) < 0)
                        return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        }
        if (wpos != wbytes)
                return bad_index(c, 24, err, "length does not match the windows");
        return 0;
}

int tm_cont_index_load(struct tm_cont *c, int fd, uint64_t off, uint64_t len, struct tm_err *err)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return tm_err_set(err, -errno, "%s: seek index: stat: %s", c->path,
                                  strerror(errno));
        if (len < IDX_HEAD || off > (uint64_t)st.st_size || len > (uint64_t)st.st_size - off)
                return bad_index(c, 0, err, "index truncated");
        uint8_t head[IDX_HEAD];
        if (tm_pread_full(fd, head, IDX_HEAD, off) != IDX_HEAD)
                return bad_index(c, 0, err, "cannot read the header");
        if (memcmp(head, IDX_MAGIC, 4) != 0 || head[4] != IDX_VERSION || head[5] || head[7])
                return bad_index(c, 0, err, "not a tracemount container index (version 1)");
        if (head[6] != (uint8_t)c->ops->kind)
                return bad_index(c, 6, err, "index is for another container kind");
        if (tm_le64(head + 8) != c->asize)
                return bad_index(c, 8, err, "index is for another version of the archive");
        uint64_t raw_size = tm_le64(head + 16);
        uint32_t n = tm_le32(head + 24);
        if ((uint64_t)n > (len - IDX_HEAD) / IDX_REC)
                return bad_index(c, 24, err, "point count exceeds the index length");
        size_t rbytes = (size_t)n * IDX_REC;
        uint8_t *recs = malloc(rbytes ? rbytes : 1);
        if (!recs)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        int ret = 0;
        if (rbytes && tm_pread_full(fd, recs, rbytes, off + IDX_HEAD) != (ssize_t)rbytes) {
                ret = bad_index(c, IDX_HEAD, err, "cannot read the points");
                goto out;
        }
        uLong crc = crc32_z(crc32(0, head, 28), recs, rbytes);
        if ((uint32_t)crc != tm_le32(head + 28)) {
                ret = bad_index(c, 28, err, "checksum mismatch");
                goto out;
        }
        struct tm_cpoints pts = {0};
        uint64_t wbytes = len - IDX_HEAD - rbytes;
        ret = parse_records(c, recs, n, raw_size, wbytes, &pts, err);
        if (ret == 0 && c->ops->check_index)
                ret = c->ops->check_index(c, &pts, raw_size, err);
        if (ret < 0) {
                tm_cpoints_free(&pts);
                goto out;
        }
        tm_cont_set_index(c, &pts, raw_size);
        if (c->wfd_owned)
                close(c->wfd);
        c->wfd = fd;
        c->wfd_owned = 0;
        c->wbase = off + IDX_HEAD + rbytes;
        c->wsize = wbytes;
out:
        free(recs);
        return ret;
}
