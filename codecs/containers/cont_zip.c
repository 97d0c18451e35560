/* zip: one member of a ZIP archive (PKWARE's APPNOTE.TXT) is the raw
 * stream: the member named "trace" (the Java tracing tool's layout), else
 * the only member that is not a directory. It is found through the
 * central directory (the end record, and the ZIP64 end record through its
 * locator when a field is saturated), and its local header must agree with
 * its central entry. Stored members are slices of the archive, read as
 * plain; deflate members are inflated raw and get zran-style access points
 * (cont_zran.h) from the scan, as gzip does. The scan checks the member's
 * CRC-32 and both sizes; nothing of it is vouched for before its end. The
 * other members are listed by tm_cont_members; tm_cont_open_member opens
 * one of them in the chosen member's place (the same checks and readers).
 * docs/formats/containers.md ("zip") gives the choices and the limits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cont_zip_dir.h"
#include "cont_zran.h"

#define ZIP_TRACE_NAME "trace"
#define ZIP_LIST_NAMES 4 /* members named when none can be chosen */

struct zip_cont {
        struct zip_dir dir;
        struct zip_entry m; /* the member; m.name is name below */
        uint8_t *name;
        char shown[ZIP_SHOW_NAME + 1]; /* its name for messages */
        uint64_t data, data_end;       /* its data in the archive */
};

static const struct tm_cont_ops zip_stored_ops;

static int zip_probe(const uint8_t *head, size_t n)
{
        return n >= 4 && tm_le32(head) == ZIP_LOCAL_SIG;
}

/* ---- choosing the member ---- */

struct pick {
        uint64_t files, traces;
        struct zip_entry trace, first;
        uint8_t *first_name; /* a copy: entries' names live in the walk's buffer */
        char list[ZIP_LIST_NAMES * (ZIP_SHOW_NAME + 2) + 1];
};

static int pick_entry(void *arg, const struct zip_entry *e, struct tm_err *err)
{
        (void)err;
        struct pick *k = arg;
        if (tm_zip_is_dir(e))
                return 0;
        if (e->nlen == strlen(ZIP_TRACE_NAME) && memcmp(e->name, ZIP_TRACE_NAME, e->nlen) == 0) {
                k->trace = *e;
                k->trace.name = (const uint8_t *)ZIP_TRACE_NAME;
                k->traces++;
        }
        if (k->files < ZIP_LIST_NAMES) {
                char s[ZIP_SHOW_NAME + 1];
                tm_zip_show_name(e->name, e->nlen, s);
                size_t at = strlen(k->list);
                snprintf(k->list + at, sizeof k->list - at, "%s%s", at ? ", " : "", s);
        }
        if (k->files++ == 0) {
                if (!(k->first_name = malloc(e->nlen ? e->nlen : 1)))
                        return -ENOMEM;
                memcpy(k->first_name, e->name, e->nlen);
                k->first = *e;
                k->first.name = k->first_name;
        }
        return 0;
}

/* "trace", else the only member that is not a directory. */
static int pick_member(const struct tm_cont *c, struct zip_cont *z, struct tm_err *err)
{
        struct pick k = {0};
        int ret = tm_zip_cd_walk(c, &z->dir, pick_entry, &k, err);
        if (ret == -ENOMEM)
                tm_err_set(err, ret, "%s: out of memory", c->path);
        else if (ret == 0 && k.traces > 1)
                ret = tm_err_set(err, -ENOTSUP, "%s: zip: %llu members are named %s", c->path,
                                 (unsigned long long)k.traces, ZIP_TRACE_NAME);
        else if (ret == 0 && k.files == 0)
                ret = tm_err_set(err, -ENOTSUP, "%s: zip: no member but directories", c->path);
        else if (ret == 0 && k.traces == 0 && k.files > 1)
                ret = tm_err_set(err, -ENOTSUP,
                                 "%s: zip: no member named %s and %llu members to choose from "
                                 "(%s%s)",
                                 c->path, ZIP_TRACE_NAME, (unsigned long long)k.files, k.list,
                                 k.files > ZIP_LIST_NAMES ? ", ..." : "");
        if (ret == 0) {
                z->m = k.traces ? k.trace : k.first;
                z->name = malloc(z->m.nlen ? z->m.nlen : 1);
                if (!z->name)
                        ret = tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
                else
                        memcpy(z->name, z->m.name, z->m.nlen);
                z->m.name = z->name;
                tm_zip_show_name(z->m.name, z->m.nlen, z->shown);
        }
        free(k.first_name);
        return ret;
}

/* The member at directory index want (tm_cont_open_member). */
struct pick_at {
        uint64_t want;
        int found;
        struct zip_entry e;
        uint8_t *name;
};

static int pick_at_entry(void *arg, const struct zip_entry *e, struct tm_err *err)
{
        (void)err;
        struct pick_at *k = arg;
        if (e->index != k->want)
                return 0;
        if (!(k->name = malloc(e->nlen ? e->nlen : 1)))
                return -ENOMEM;
        memcpy(k->name, e->name, e->nlen);
        k->e = *e;
        k->e.name = k->name;
        k->found = 1;
        return 1; /* stop the walk */
}

static int pick_index(const struct tm_cont *c, struct zip_cont *z, struct tm_err *err)
{
        struct pick_at k = {.want = c->member};
        int ret = tm_zip_cd_walk(c, &z->dir, pick_at_entry, &k, err);
        if (ret == -ENOMEM)
                return tm_err_set(err, ret, "%s: out of memory", c->path);
        if (ret < 0)
                return ret;
        if (!k.found)
                return tm_err_set(err, -ENOENT, "%s: zip: no member %llu in the directory", c->path,
                                  (unsigned long long)c->member);
        z->m = k.e;
        z->name = k.name;
        tm_zip_show_name(z->m.name, z->m.nlen, z->shown);
        if (tm_zip_is_dir(&z->m))
                return tm_err_set(err, -ENOTSUP, "%s: zip: member %s is a directory", c->path,
                                  z->shown);
        return 0;
}

/* ---- the member's local header and data descriptor ---- */

static int check_supported(const struct tm_cont *c, const struct zip_cont *z, struct tm_err *err)
{
        const struct zip_entry *m = &z->m;
        if (m->flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG))
                return tm_err_set(err, -ENOTSUP, "%s: zip: member %s is encrypted", c->path,
                                  z->shown);
        if (m->method != ZIP_STORED && m->method != ZIP_DEFLATE)
                return tm_err_set(err, -ENOTSUP,
                                  "%s: zip: member %s: compression method %u (read: 0 stored, "
                                  "8 deflate)",
                                  c->path, z->shown, m->method);
        if (m->method == ZIP_STORED && m->csize != m->usize)
                return tm_cont_eio(c, m->at, err,
                                   "zip: stored member %s: %llu compressed bytes but %llu "
                                   "uncompressed",
                                   z->shown, (unsigned long long)m->csize,
                                   (unsigned long long)m->usize);
        return 0;
}

/* Without a data descriptor the local header repeats the CRC and the
 * sizes (in its ZIP64 extra field when saturated). */
static int check_local_sums(const struct tm_cont *c, const struct zip_cont *z, const uint8_t *h,
                            const uint8_t *extra, size_t xlen, struct tm_err *err)
{
        const struct zip_entry *m = &z->m;
        uint64_t usize = tm_le32(h + 22), csize = tm_le32(h + 18);
        uint64_t *const vals[] = {&usize, &csize};
        if (m->flags & ZIP_FLAG_DESCRIPTOR)
                return 0;
        if (tm_zip_extra64(extra, xlen, vals, 2) < 0 || tm_le32(h + 14) != m->crc ||
            usize != m->usize || csize != m->csize)
                return tm_cont_eio(c, m->lho, err,
                                   "zip: member %s: the local header's CRC-32 and sizes are not "
                                   "the central directory's",
                                   z->shown);
        return 0;
}

static int check_local(const struct tm_cont *c, struct zip_cont *z, struct tm_err *err)
{
        const struct zip_entry *m = &z->m;
        uint8_t h[ZIP_LOCAL_LEN];
        if (m->lho > z->dir.off || z->dir.off - m->lho < ZIP_LOCAL_LEN)
                return tm_cont_eio(c, m->at, err,
                                   "zip: member %s: its local header offset %llu is not before "
                                   "the central directory at %llu",
                                   z->shown, (unsigned long long)m->lho,
                                   (unsigned long long)z->dir.off);
        int ret = tm_cont_pread(c, h, sizeof h, m->lho, err);
        if (ret < 0)
                return ret;
        size_t nlen = (size_t)tm_zip_le16(h + 26), xlen = (size_t)tm_zip_le16(h + 28);
        uint64_t data = m->lho + ZIP_LOCAL_LEN + nlen + xlen;
        if (tm_le32(h) != ZIP_LOCAL_SIG || tm_zip_le16(h + 8) != m->method || nlen != m->nlen ||
            ((unsigned)tm_zip_le16(h + 6) & ZIP_FLAG_ENCRYPTED) != (m->flags & ZIP_FLAG_ENCRYPTED))
                return tm_cont_eio(c, m->lho, err,
                                   "zip: member %s: no local header that matches its central "
                                   "directory entry here",
                                   z->shown);
        if (data > z->dir.off || m->csize > z->dir.off - data)
                return tm_cont_eio(c, m->lho, err,
                                   "zip: member %s: its %llu bytes of data run into the central "
                                   "directory at %llu",
                                   z->shown, (unsigned long long)m->csize,
                                   (unsigned long long)z->dir.off);
        uint8_t *nx = malloc(nlen + xlen + 1);
        if (!nx)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        ret = tm_cont_pread(c, nx, nlen + xlen, m->lho + ZIP_LOCAL_LEN, err);
        if (ret == 0 && memcmp(nx, m->name, nlen) != 0)
                ret =
                    tm_cont_eio(c, m->lho + ZIP_LOCAL_LEN, err,
                                "zip: member %s: the local header names another member", z->shown);
        if (ret == 0)
                ret = check_local_sums(c, z, h, nx + nlen, xlen, err);
        free(nx);
        z->data = data;
        z->data_end = data + m->csize;
        return ret;
}

/* A data descriptor follows the data: [signature] CRC-32, sizes. Its
 * CRC-32 must be the directory's (the sizes' width depends on ZIP64, and
 * the directory's sizes are the ones used). */
static int check_descriptor(const struct tm_cont *c, const struct zip_cont *z, struct tm_err *err)
{
        uint8_t d[8];
        if (!(z->m.flags & ZIP_FLAG_DESCRIPTOR))
                return 0;
        if (z->dir.off - z->data_end < 12)
                return tm_cont_eio(c, z->data_end, err,
                                   "zip: member %s: no room for its data descriptor", z->shown);
        int ret = tm_cont_pread(c, d, sizeof d, z->data_end, err);
        if (ret < 0)
                return ret;
        uint32_t crc = tm_le32(d) == ZIP_DESC_SIG ? tm_le32(d + 4) : tm_le32(d);
        if (crc != z->m.crc && tm_le32(d) != z->m.crc)
                return tm_cont_eio(c, z->data_end, err,
                                   "zip: member %s: the data descriptor's CRC-32 %08x is not the "
                                   "central directory's %08x",
                                   z->shown, crc, z->m.crc);
        return 0;
}

static int zip_open(struct tm_cont *c, struct tm_err *err)
{
        struct zip_cont *z = calloc(1, sizeof *z);
        if (!z)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        c->impl = z;
        int ret = tm_zip_read_dir(c, &z->dir, err);
        if (ret == 0)
                ret = tm_zip_check_ranges(c, &z->dir, err);
        if (ret == 0)
                c->dir_off = z->dir.off;
        if (ret == 0)
                ret = c->member == TM_CONT_MEMBER_PICK ? pick_member(c, z, err)
                                                       : pick_index(c, z, err);
        if (ret == 0)
                ret = check_supported(c, z, err);
        if (ret == 0)
                ret = check_local(c, z, err);
        if (ret == 0)
                ret = check_descriptor(c, z, err);
        if (ret < 0)
                return ret;
        c->raw_known = 1; /* the directory's word, checked by the scan */
        c->raw_size = z->m.usize;
        if (z->m.method == ZIP_STORED)
                c->ops = &zip_stored_ops;
        return 0;
}

static void zip_close(struct tm_cont *c)
{
        struct zip_cont *z = c->impl;
        if (z)
                free(z->name);
        free(z);
}

/* ---- what the scan and the readers check ---- */

/* The member's data ended at archive offset coff after raw bytes; crc is
 * the CRC-32 of all of them, or NULL when they were not all seen (a
 * reader that started at a window point). */
static int member_end(const struct tm_cont *c, uint64_t coff, uint64_t raw, const uint32_t *crc,
                      struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        if (coff != z->data_end)
                return tm_cont_eio(c, coff, err,
                                   "zip: member %s: its deflate data ends %llu bytes before its "
                                   "compressed size says",
                                   z->shown, (unsigned long long)(z->data_end - coff));
        if (raw != z->m.usize)
                return tm_cont_eio(
                    c, coff, err, "zip: member %s: %llu bytes, the central directory says %llu",
                    z->shown, (unsigned long long)raw, (unsigned long long)z->m.usize);
        if (crc && *crc != z->m.crc)
                return tm_cont_eio(c, z->data, err,
                                   "zip: member %s (data at archive offset %llu): CRC-32 %08x, "
                                   "the central directory says %08x",
                                   z->shown, (unsigned long long)z->data, *crc, z->m.crc);
        return 0;
}

/* More raw bytes than the member's size: bad data (or a bomb), stop. */
static int too_long(const struct tm_cont *c, uint64_t coff, struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        return tm_cont_eio(c, coff, err,
                           "zip: member %s inflates to more than the %llu bytes the central "
                           "directory says",
                           z->shown, (unsigned long long)z->m.usize);
}

/* Input left before the member's data ends, at most k. */
static size_t data_left(const struct zip_cont *z, uint64_t coff, ssize_t k)
{
        uint64_t left = coff < z->data_end ? z->data_end - coff : 0;
        return left < (uint64_t)k ? (size_t)left : (size_t)k;
}

static int runs_past(const struct tm_cont *c, uint64_t coff, struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        return tm_cont_eio(c, coff, err,
                           "zip: member %s: its deflate data does not end within its %llu "
                           "compressed bytes",
                           z->shown, (unsigned long long)z->m.csize);
}

static int zip_zfail(const struct tm_cont *c, uint64_t coff, int zret, const z_stream *zs,
                     struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        if (zret == Z_MEM_ERROR)
                return tm_err_set(err, -ENOMEM, "%s: zlib: out of memory", c->path);
        return tm_cont_eio(c, coff, err, "zip: member %s (data at archive offset %llu): %s",
                           z->shown, (unsigned long long)z->data,
                           zs->msg ? zs->msg : "corrupt deflate data");
}

/* ---- scan ---- */

/* The scan's sink: the CRC-32 of every raw byte, then the caller's. */
struct crc_sink {
        uint32_t crc;
        tm_cont_sink sink;
        void *arg;
};

static int crc_sink(void *arg, const uint8_t *buf, size_t n)
{
        struct crc_sink *k = arg;
        k->crc = (uint32_t)crc32_z(k->crc, buf, n);
        return k->sink ? k->sink(k->arg, buf, n) : 0;
}

static int scan_stored(struct tm_cont *c, struct crc_sink *cs, struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        struct tm_cin in;
        if (tm_cin_init(&in, c) < 0)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        tm_cin_seek(&in, z->data);
        int ret = 0;
        uint64_t raw = 0;
        while (ret == 0 && raw < z->m.usize) {
                ssize_t k = tm_cin_fill(c, &in, err);
                if (k <= 0) {
                        ret = k < 0
                                  ? (int)k
                                  : tm_cont_eio(c, tm_cin_tell(&in), err,
                                                "zip: the archive ends inside member %s", z->shown);
                        break;
                }
                size_t take = data_left(z, tm_cin_tell(&in), k);
                ret = crc_sink(cs, in.buf + in.pos, take);
                in.pos += take;
                raw += take;
        }
        tm_cin_free(&in);
        return ret != 0 ? ret : member_end(c, z->data_end, raw, &cs->crc, err);
}

static int scan_deflate(struct tm_cont *c, struct tm_cpoints *pts, struct crc_sink *cs,
                        struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        struct tm_zran_scan s;
        int ret = tm_zran_scan_init(&s, c, TM_ZRAN_WBITS_RAW, err);
        s.limit = z->m.usize; /* never inflate past the declared size */
        struct tm_cpoint start = {.coff = z->data};
        if (ret == 0 && tm_cpoints_add(pts, &start) < 0)
                ret = tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        tm_cin_seek(&s.in, z->data);
        int zret = Z_OK;
        while (ret == 0 && zret != Z_STREAM_END) {
                ssize_t k = tm_cin_fill(c, &s.in, err);
                if (k < 0) {
                        ret = (int)k;
                        break;
                }
                /* at the data's end, inflate may still have output to give */
                size_t avail = data_left(z, tm_cin_tell(&s.in), k);
                ret = tm_zran_scan_step(c, &s, avail, pts, crc_sink, cs, &zret, err);
                if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
                        ret = zip_zfail(c, tm_cin_tell(&s.in), zret, &s.zs, err);
                else if (ret == 0 && zret == Z_BUF_ERROR && avail == 0)
                        ret = runs_past(c, tm_cin_tell(&s.in), err);
                else if (ret == 0 && s.raw > z->m.usize)
                        ret = too_long(c, tm_cin_tell(&s.in), err);
        }
        if (ret == 0)
                ret = member_end(c, tm_cin_tell(&s.in), s.raw, &cs->crc, err);
        if (ret == 0)
                tm_zran_scan_keep(c, &s);
        tm_zran_scan_free(&s);
        return ret;
}

static int zip_scan(struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
                    tm_cont_sink sink, void *arg, struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        struct crc_sink cs = {.sink = sink, .arg = arg};
        int ret =
            z->m.method == ZIP_STORED ? scan_stored(c, &cs, err) : scan_deflate(c, pts, &cs, err);
        if (ret != 0)
                return ret;
        /* one member, one check: all or nothing is vouched for */
        c->scan_good = z->m.usize;
        *raw_size = z->m.usize;
        return 0;
}

/* A loaded index must fit this member: its raw size, no points for a
 * stored member, for a deflate member the data start (no window) and
 * window points inside the data. */
static int zip_check_index(struct tm_cont *c, const struct tm_cpoints *pts, uint64_t raw_size,
                           struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        if (raw_size != z->m.usize)
                return tm_err_set(err, -EIO,
                                  "%s: seek index byte 16: %llu raw bytes, the zip central "
                                  "directory says %llu",
                                  c->path, (unsigned long long)raw_size,
                                  (unsigned long long)z->m.usize);
        for (size_t i = 0; i < pts->n; i++) {
                const struct tm_cpoint *p = &pts->p[i];
                int ok = z->m.method == ZIP_DEFLATE &&
                         (p->wlen ? p->coff > z->data && p->coff < z->data_end
                                  : p->coff == z->data && p->roff == 0);
                if (!ok)
                        return tm_err_set(err, -EIO,
                                          "%s: seek index point %zu (archive offset %llu) is not "
                                          "a restart point of the zip member",
                                          c->path, i, (unsigned long long)p->coff);
        }
        return 0;
}

/* ---- readers ---- */

struct zreader {
        z_stream zs; /* deflate members */
        int zs_ok;
        struct tm_cin in;
        struct tm_zran_win w;
        int eof;
        int verify;    /* started at the member's start: the CRC is checked */
        uint32_t crc;  /* of the raw bytes from the start, while verify */
        uint64_t vpos; /* stored: raw bytes in crc (read in order from 0) */
};

static int zip_r_restart(struct tm_creader *r, const struct tm_cpoint *p, struct tm_err *err)
{
        struct zreader *g = r->impl;
        const struct zip_cont *z = r->c->impl;
        g->eof = 0;
        g->crc = 0;
        g->verify = !p || p->wlen == 0;
        tm_cin_seek(&g->in, g->verify ? z->data : p->coff);
        if (g->verify) {
                inflateReset2(&g->zs, TM_ZRAN_WBITS_RAW);
                return 0;
        }
        return tm_zran_restart(r->c, &g->zs, &g->w, p, err);
}

/* As gzip_r_mem: zlib's state and window, for a deflate member. */
static size_t zip_r_mem(const struct tm_creader *r)
{
        const struct zreader *g = r->impl;
        return sizeof *g + g->in.cap + (g->zs_ok ? 7168u + TM_GZ_WINDOW : 0) +
               tm_zran_win_mem(&g->w);
}

static void zip_r_close(struct tm_creader *r)
{
        struct zreader *g = r->impl;
        if (g->zs_ok)
                inflateEnd(&g->zs);
        tm_cin_free(&g->in);
        tm_zran_win_free(&g->w);
        free(g);
}

static int zip_r_open(struct tm_creader *r, struct tm_err *err)
{
        const struct zip_cont *z = r->c->impl;
        struct zreader *g = calloc(1, sizeof *g);
        if (!g)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", r->c->path);
        r->impl = g;
        if (z->m.method == ZIP_STORED)
                return 0; /* preads: nothing to set up */
        if (tm_cin_init(&g->in, r->c) < 0 || inflateInit2(&g->zs, TM_ZRAN_WBITS_RAW) != Z_OK) {
                zip_r_close(r);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", r->c->path);
        }
        g->zs_ok = 1;
        return zip_r_restart(r, NULL, err);
}

static ssize_t zip_r_read(struct tm_creader *r, void *buf, size_t n, struct tm_err *err)
{
        struct zreader *g = r->impl;
        const struct tm_cont *c = r->c;
        const struct zip_cont *z = c->impl;
        if (n > UINT32_MAX)
                n = UINT32_MAX;
        /* never inflate past the declared size: one byte more tells a
         * member that has more */
        if (r->pos <= z->m.usize && n > z->m.usize - r->pos)
                n = (size_t)(z->m.usize - r->pos) + 1;
        while (!g->eof) {
                ssize_t k = tm_cin_fill(c, &g->in, err);
                if (k < 0)
                        return k;
                /* at the data's end, inflate may still have output to give */
                size_t avail = data_left(z, tm_cin_tell(&g->in), k);
                size_t got;
                int zret = tm_zran_inflate(&g->zs, &g->in, avail, buf, n, Z_NO_FLUSH, &got);
                if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
                        return zip_zfail(c, tm_cin_tell(&g->in), zret, &g->zs, err);
                if (zret == Z_BUF_ERROR && avail == 0)
                        return runs_past(c, tm_cin_tell(&g->in), err);
                if (r->pos + got > z->m.usize)
                        return too_long(c, tm_cin_tell(&g->in), err);
                if (g->verify)
                        g->crc = (uint32_t)crc32_z(g->crc, buf, got);
                if (zret == Z_STREAM_END) {
                        int ret = member_end(c, tm_cin_tell(&g->in), r->pos + got,
                                             g->verify ? &g->crc : NULL, err);
                        if (ret < 0)
                                return ret;
                        g->eof = 1;
                }
                if (got)
                        return (ssize_t)got;
        }
        return 0;
}

/* ---- a stored member: a slice of the archive ---- */

static int stored_r_seek(struct tm_creader *r, uint64_t raw_off, struct tm_err *err)
{
        (void)r;
        (void)raw_off;
        (void)err;
        return 0;
}

static ssize_t stored_r_read(struct tm_creader *r, void *buf, size_t n, struct tm_err *err)
{
        struct zreader *g = r->impl;
        const struct tm_cont *c = r->c;
        const struct zip_cont *z = c->impl;
        if (r->pos >= z->m.usize)
                return 0;
        if (n > z->m.usize - r->pos)
                n = (size_t)(z->m.usize - r->pos);
        int ret = tm_cont_pread(c, buf, n, z->data + r->pos, err);
        if (ret < 0)
                return ret;
        if (r->pos == g->vpos) { /* in order from the start: the CRC can be checked */
                g->crc = (uint32_t)crc32_z(g->crc, buf, n);
                g->vpos += n;
                if (g->vpos == z->m.usize &&
                    (ret = member_end(c, z->data_end, g->vpos, &g->crc, err)) < 0)
                        return ret;
        }
        return (ssize_t)n;
}

/* ---- the members ---- */

struct list {
        const struct zip_cont *z;
        tm_cont_member_fn fn;
        void *arg;
        char *name; /* 65536 bytes: a name and its NUL */
};

static int list_entry(void *arg, const struct zip_entry *e, struct tm_err *err)
{
        (void)err;
        struct list *l = arg;
        memcpy(l->name, e->name, e->nlen);
        l->name[e->nlen] = 0;
        struct tm_cont_member m = {
            .index = e->index,
            .name = l->name,
            .name_len = e->nlen,
            .size = e->usize,
            .csize = e->csize,
            .method = e->method,
            .is_dir = tm_zip_is_dir(e) != 0,
            .is_encrypted = (e->flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG)) != 0,
            .is_raw = e->index == l->z->m.index,
        };
        return l->fn(l->arg, &m);
}

static int zip_members(const struct tm_cont *c, tm_cont_member_fn fn, void *arg, struct tm_err *err)
{
        struct list l = {.z = c->impl, .fn = fn, .arg = arg, .name = malloc(ZIP_SAT16 + 1)};
        if (!l.name)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        int ret = tm_zip_cd_walk(c, &l.z->dir, list_entry, &l, err);
        free(l.name);
        return ret;
}

#define ZIP_COMMON_OPS                                                                             \
        .name = "zip", .kind = TM_CONT_ZIP, .probe = zip_probe, .open = zip_open,                  \
        .close = zip_close, .scan = zip_scan, .check_index = zip_check_index,                      \
        .r_open = zip_r_open, .r_close = zip_r_close, .r_mem = zip_r_mem, .members = zip_members

/* The table's row: a deflate member (open switches a stored one to the
 * variant below). */
const struct tm_cont_ops tm_cont_zip_ops = {
    ZIP_COMMON_OPS,
    .r_restart = zip_r_restart,
    .r_read = zip_r_read,
};

static const struct tm_cont_ops zip_stored_ops = {
    ZIP_COMMON_OPS,
    .r_seek = stored_r_seek,
    .r_read = stored_r_read,
};
