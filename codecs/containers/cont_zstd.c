/* zstd: one or many frames, skippable frames skipped; the seekable format's
 * seek table is read at open. Points are frame starts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "cont_impl.h"
#include "zstd_seek.h"

#define ZSTD_MAGIC 0xFD2FB528u
#define ZSTD_SKIP_MASK 0xFFFFFFF0u
#define ZSTD_SKIP_START 0x184D2A50u
#define ZSTD_SCAN_OUT (256u << 10)
#define ZSTD_DEFAULT_LEVEL 3
#define ZSTD_DEFAULT_FRAME (1u << 20) /* see docs/formats/containers.md */

struct zstd_cont {
        int seek_table;       /* the archive has a seekable-format table */
        uint64_t table_raw;   /* raw size the table claims */
        struct zseek_loc loc; /* its entries */
};

static int zstd_probe(const uint8_t *head, size_t n)
{
        if (n < 4)
                return 0;
        uint32_t m = tm_le32(head);
        return m == ZSTD_MAGIC || (m & ZSTD_SKIP_MASK) == ZSTD_SKIP_START;
}

static int zstd_open(struct tm_cont *c, struct tm_err *err)
{
        struct zstd_cont *z = calloc(1, sizeof *z);
        if (!z)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        c->impl = z;
        struct tm_cpoints pts = {0};
        uint64_t raw = 0;
        int ret = zseek_read(c, &pts, &raw, &z->loc, err);
        if (ret <= 0)
                return ret;
        z->seek_table = 1;
        z->table_raw = raw;
        c->dir_off = z->loc.data_end;
        tm_cont_set_index(c, &pts, raw);
        return 0;
}

static void zstd_close(struct tm_cont *c)
{
        free(c->impl);
}

static int zstd_check_index(struct tm_cont *c, const struct tm_cpoints *pts, uint64_t raw_size,
                            struct tm_err *err)
{
        (void)pts;
        const struct zstd_cont *z = c->impl;
        if (z->seek_table && raw_size != z->table_raw)
                return tm_err_set(err, -EIO,
                                  "%s: seek index byte 16: %llu raw bytes, the zstd seek table "
                                  "says %llu",
                                  c->path, (unsigned long long)raw_size,
                                  (unsigned long long)z->table_raw);
        return 0;
}

static ZSTD_DCtx *new_dctx(void)
{
        ZSTD_DCtx *d = ZSTD_createDCtx();
        if (d && ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, TM_ZSTD_WLOG_MAX))) {
                ZSTD_freeDCtx(d);
                return NULL;
        }
        return d;
}

/* A zstd error at the decoder's position in, in the frame that starts at
 * archive offset frame: a checksum mismatch is found at the frame's end,
 * but the damage can be anywhere in it, so the message names both. */
static int zstd_fail(const struct tm_cont *c, const struct tm_cin *in, uint64_t frame, size_t zret,
                     struct tm_err *err)
{
        if (ZSTD_getErrorCode(zret) == ZSTD_error_memory_allocation)
                return tm_err_set(err, -ENOMEM, "%s: zstd: out of memory", c->path);
        return tm_cont_eio(c, tm_cin_tell(in), err,
                           "zstd: %s (in the frame at archive offset %llu)",
                           ZSTD_getErrorName(zret), (unsigned long long)frame);
}

/* ---- scan ---- */

struct zscan {
        ZSTD_DCtx *d;
        struct tm_cin in;
        uint8_t *out;
        struct zseek_iter it; /* the seek table's entries, in step with the frames */
        uint32_t order_crc;   /* of the entries so far (zseek_order_crc) */
        uint64_t raw;         /* raw bytes of the frames so far */
};

/* The frame at coff that the seek table lists as entry i is a skippable
 * one: when it is an order record, it must describe the frames before it. */
static int scan_check_order(struct tm_cont *c, struct zscan *s, uint64_t coff, uint32_t i,
                            const struct zseek_entry *e, struct tm_err *err)
{
        uint8_t f[ZSEEK_ORDER_FRAME];
        uint32_t n, crc;
        uint64_t raw;
        int ret;
        if (e->csize != ZSEEK_ORDER_FRAME || (ret = tm_cont_pread(c, f, sizeof f, coff, err)) < 0 ||
            tm_le32(f) != ZSEEK_ORDER_MAGIC || !zseek_order_get(f + 8, &n, &raw, &crc))
                return 0;
        if (n != i || raw != s->raw || crc != s->order_crc) {
                /* which frame moved cannot be told: none is vouched for */
                c->scan_good = 0;
                return tm_cont_eio(c, coff, err,
                                   "zstd: the order record says %u frames of %llu raw bytes "
                                   "(entries' CRC %08x), the archive has %u of %llu (%08x): "
                                   "frames reordered, dropped or repeated",
                                   n, (unsigned long long)raw, crc, i, (unsigned long long)s->raw,
                                   s->order_crc);
        }
        return 0;
}

/* The frame at archive offsets [coff, end) has ended holding raw bytes:
 * the seek table's next entry must describe it, sizes and checksum, so
 * that frames reordered, dropped, duplicated or taken from elsewhere are
 * seen (each frame's own checksum only covers the frame). A frame of ours
 * carries its checksum in its last 4 bytes (descriptor bit 2). */
static int scan_check_entry(struct tm_cont *c, struct zscan *s, uint64_t coff, uint64_t end,
                            uint64_t raw, struct tm_err *err)
{
        const struct zstd_cont *z = c->impl;
        if (!z->seek_table || coff >= z->loc.data_end)
                return 0;
        uint32_t i = s->it.next;
        struct zseek_entry e;
        int ret = zseek_iter_next(c, &s->it, &e, err);
        if (ret <= 0)
                return ret < 0 ? ret
                               : tm_cont_eio(c, coff, err,
                                             "zstd seek table lists %u frames, this is one more",
                                             z->loc.n);
        if (e.csize != end - coff || e.rsize != raw)
                return tm_cont_eio(c, coff, err,
                                   "zstd seek table: frame %u is %llu bytes (%llu raw), the table "
                                   "says %u (%u raw)",
                                   i, (unsigned long long)(end - coff), (unsigned long long)raw,
                                   e.csize, e.rsize);
        uint8_t fhd[5], sum[4];
        if ((ret = tm_cont_pread(c, fhd, sizeof fhd, coff, err)) < 0)
                return ret;
        if ((tm_le32(fhd) & ZSTD_SKIP_MASK) == ZSTD_SKIP_START) {
                ret = scan_check_order(c, s, coff, i, &e, err);
        } else if (e.has_sum && end - coff >= 9 && (fhd[4] & 4)) {
                if ((ret = tm_cont_pread(c, sum, sizeof sum, end - 4, err)) < 0)
                        return ret;
                if (tm_le32(sum) != e.sum)
                        return tm_cont_eio(c, coff, err,
                                           "zstd seek table: frame %u is not the frame the table "
                                           "lists there (checksum %08x, the table's %08x): "
                                           "frames reordered, replaced, or the table damaged",
                                           i, tm_le32(sum), e.sum);
        } /* else: no checksum to compare */
        s->order_crc = zseek_order_crc(s->order_crc, &e);
        s->raw += raw;
        return ret;
}

static int scan_loop(struct tm_cont *c, struct zscan *s, struct tm_cpoints *pts, uint64_t *raw_size,
                     tm_cont_sink sink, void *arg, struct tm_err *err)
{
        uint64_t raw = 0, fr_coff = 0, fr_roff = 0;
        int boundary = 1;
        for (;;) {
                ZSTD_inBuffer ib = {s->in.buf, s->in.len, s->in.pos};
                ZSTD_outBuffer ob = {s->out, ZSTD_SCAN_OUT, 0};
                size_t zret = ZSTD_decompressStream(s->d, &ob, &ib);
                size_t used = ib.pos - s->in.pos;
                s->in.pos = ib.pos;
                if (ZSTD_isError(zret))
                        return zstd_fail(c, &s->in, fr_coff, zret, err);
                if (ob.pos) {
                        raw += ob.pos;
                        int sret = sink ? sink(arg, s->out, ob.pos) : 0;
                        if (sret)
                                return sret;
                }
                if (zret == 0) {
                        /* A frame ended, its checksum verified by zstd;
                         * keep its start if it held data. */
                        struct tm_cpoint p = {.coff = fr_coff, .roff = fr_roff};
                        int ret = scan_check_entry(c, s, fr_coff, tm_cin_tell(&s->in),
                                                   raw - fr_roff, err);
                        if (ret < 0)
                                return ret;
                        if (raw > fr_roff && tm_cpoints_want(pts, fr_coff, fr_roff) &&
                            tm_cpoints_add(pts, &p) < 0)
                                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
                        c->scan_good = raw;
                        boundary = 1;
                        fr_coff = tm_cin_tell(&s->in);
                        fr_roff = raw;
                } else if (used || ob.pos) {
                        boundary = 0;
                }
                if (ob.pos == ob.size || s->in.pos < s->in.len)
                        continue;
                ssize_t k = tm_cin_fill(c, &s->in, err);
                if (k < 0)
                        return (int)k;
                if (k == 0 && !boundary)
                        return tm_cont_eio(c, c->asize, err, "zstd: archive ends inside a frame");
                if (k == 0)
                        break;
        }
        const struct zstd_cont *z = c->impl;
        if (z->seek_table && s->it.next != z->loc.n)
                return tm_cont_eio(c, z->loc.data_end, err,
                                   "zstd seek table lists %u frames, the archive holds %u",
                                   z->loc.n, s->it.next);
        if (z->seek_table && raw != z->table_raw)
                return tm_cont_eio(c, c->asize, err,
                                   "zstd seek table says %llu raw bytes, the frames hold %llu",
                                   (unsigned long long)z->table_raw, (unsigned long long)raw);
        *raw_size = raw;
        return 0;
}

static int zstd_scan(struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
                     tm_cont_sink sink, void *arg, struct tm_err *err)
{
        struct zscan s = {0};
        int ret;
        const struct zstd_cont *z = c->impl;
        s.d = new_dctx();
        s.out = malloc(ZSTD_SCAN_OUT);
        if (z->seek_table)
                zseek_iter_init(&s.it, &z->loc);
        if (!s.d || !s.out || tm_cin_init(&s.in, c) < 0)
                ret = tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        else
                ret = scan_loop(c, &s, pts, raw_size, sink, arg, err);
        zseek_iter_free(&s.it);
        ZSTD_freeDCtx(s.d);
        free(s.out);
        tm_cin_free(&s.in);
        return ret;
}

/* ---- reader ---- */

struct zreader {
        ZSTD_DCtx *d;
        struct tm_cin in;
        int boundary; /* between frames */
        int eof;
        size_t next_pt;   /* first point after the restart position */
        uint64_t fr_coff; /* archive offset of the frame being decoded */
        /* A frame decoded whole and verified before any of it is served
         * (zstd_r_read): fbuf[fpos..flen) is still to be read. */
        uint8_t *fbuf;
        size_t fcap, flen, fpos;
};

static void zr_free(struct zreader *z)
{
        if (!z)
                return;
        ZSTD_freeDCtx(z->d);
        tm_cin_free(&z->in);
        free(z->fbuf);
        free(z);
}

static int zstd_r_restart(struct tm_creader *r, const struct tm_cpoint *p, struct tm_err *err)
{
        (void)err;
        struct zreader *z = r->impl;
        const struct tm_cpoints *pts = &r->c->pts;
        uint64_t coff = p ? p->coff : 0;
        tm_cin_seek(&z->in, coff);
        z->fr_coff = coff;
        ZSTD_DCtx_reset(z->d, ZSTD_reset_session_only);
        z->boundary = 1;
        z->eof = 0;
        z->flen = z->fpos = 0;
        z->next_pt = p ? (size_t)(p - pts->p) + 1 : 0;
        while (z->next_pt < pts->n && pts->p[z->next_pt].coff <= coff)
                z->next_pt++;
        return 0;
}

static int zstd_r_open(struct tm_creader *r, struct tm_err *err)
{
        struct zreader *z = calloc(1, sizeof *z);
        if (!z || !(z->d = new_dctx()) || tm_cin_init(&z->in, r->c) < 0) {
                zr_free(z);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", r->c->path);
        }
        r->impl = z;
        return zstd_r_restart(r, NULL, err);
}

static void zstd_r_close(struct tm_creader *r)
{
        zr_free(r->impl);
}

static size_t zstd_r_mem(const struct tm_creader *r)
{
        const struct zreader *z = r->impl;
        return sizeof *z + z->in.cap + z->fcap + ZSTD_sizeof_DCtx(z->d);
}

/* A frame ended at archive offset coff, raw offset raw: the seek index
 * must agree (its points come from the archive's own seek table, which may
 * lie). */
static int check_frame_end(struct tm_creader *r, uint64_t coff, uint64_t raw, struct tm_err *err)
{
        struct zreader *z = r->impl;
        const struct tm_cpoints *pts = &r->c->pts;
        if (z->next_pt < pts->n && pts->p[z->next_pt].coff < coff)
                return tm_cont_eio(r->c, pts->p[z->next_pt].coff, err,
                                   "zstd seek table: no frame starts here");
        if (z->next_pt < pts->n && pts->p[z->next_pt].coff == coff) {
                if (pts->p[z->next_pt].roff != raw)
                        return tm_cont_eio(r->c, coff, err,
                                           "zstd seek table puts raw offset %llu here, the "
                                           "frames say %llu",
                                           (unsigned long long)pts->p[z->next_pt].roff,
                                           (unsigned long long)raw);
                z->next_pt++;
        }
        return 0;
}

/* At a frame start: when the frame says its content size (at most
 * TM_ZSTD_VERIFY_MAX) and carries a checksum, as pack's and the zstd
 * program's do, decode all of it into fbuf, so that none of it is served
 * before libzstd has checked the checksum at its end: the index pass
 * verified every frame once, but the archive's bytes can change later
 * without its size or time changing (a disk or a server going bad).
 * Returns 1 when fbuf holds the frame, 0 when the frame is not one of
 * these (it is then streamed: skippable frames, frames without a size or
 * checksum, larger ones, the end of the archive), or a negative errno. */
static int frame_whole(struct tm_creader *r, struct tm_err *err)
{
        struct zreader *z = r->impl;
        const struct tm_cont *c = r->c;
        if (r->head)
                return 0; /* tm_creader_open_head */
        /* a frame header is at most 18 bytes (zstd's format spec) */
        while (z->in.len - z->in.pos < 18) {
                size_t had = z->in.len - z->in.pos;
                ssize_t k = tm_cin_fill(c, &z->in, err);
                if (k < 0)
                        return (int)k;
                if ((size_t)k <= had)
                        break; /* the archive ends within 18 bytes */
        }
        const uint8_t *h = z->in.buf + z->in.pos;
        size_t avail = z->in.len - z->in.pos;
        if (avail < 5 || tm_le32(h) != ZSTD_MAGIC || !(h[4] & 4))
                return 0; /* skippable, the end, or no checksum (FHD bit 2) */
        unsigned long long fcs = ZSTD_getFrameContentSize(h, avail);
        if (fcs == 0 || fcs > TM_ZSTD_VERIFY_MAX) /* also ZSTD_CONTENTSIZE_UNKNOWN, _ERROR */
                return 0;
        size_t size = (size_t)fcs;
        if (z->fcap < size) {
                uint8_t *b = realloc(z->fbuf, size);
                if (!b)
                        return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
                z->fbuf = b;
                z->fcap = size;
        }
        ZSTD_outBuffer ob = {z->fbuf, size, 0};
        size_t zret;
        for (;;) {
                ZSTD_inBuffer ib = {z->in.buf, z->in.len, z->in.pos};
                size_t out0 = ob.pos;
                zret = ZSTD_decompressStream(z->d, &ob, &ib);
                int moved = ib.pos != z->in.pos || ob.pos != out0;
                z->in.pos = ib.pos;
                if (ZSTD_isError(zret))
                        return zstd_fail(c, &z->in, z->fr_coff, zret, err);
                if (zret == 0)
                        break;
                if (!moved && ob.pos == ob.size)
                        break; /* more data than the header said: named below */
                if (z->in.pos < z->in.len)
                        continue;
                ssize_t k = tm_cin_fill(c, &z->in, err);
                if (k < 0)
                        return (int)k;
                if (k == 0)
                        return tm_cont_eio(c, c->asize, err, "zstd: archive ends inside a frame");
        }
        if (ob.pos != size || zret != 0)
                return tm_cont_eio(c, tm_cin_tell(&z->in), err,
                                   "zstd: the frame at archive offset %llu holds other than the "
                                   "%zu bytes its header says",
                                   (unsigned long long)z->fr_coff, size);
        z->fr_coff = tm_cin_tell(&z->in);
        int ret = check_frame_end(r, z->fr_coff, r->pos + size, err);
        if (ret < 0)
                return ret;
        z->flen = size;
        z->fpos = 0;
        return 1;
}

static ssize_t zstd_r_read(struct tm_creader *r, void *buf, size_t n, struct tm_err *err)
{
        struct zreader *z = r->impl;
        const struct tm_cont *c = r->c;
        for (;;) {
                if (z->fpos < z->flen) {
                        size_t k = z->flen - z->fpos < n ? z->flen - z->fpos : n;
                        memcpy(buf, z->fbuf + z->fpos, k);
                        z->fpos += k;
                        return (ssize_t)k;
                }
                if (z->boundary && !z->eof) {
                        int ret = frame_whole(r, err);
                        if (ret < 0)
                                return ret;
                        if (ret > 0)
                                continue;
                }
                if (z->eof)
                        return 0;
                ZSTD_inBuffer ib = {z->in.buf, z->in.len, z->in.pos};
                ZSTD_outBuffer ob = {buf, n, 0};
                size_t zret = ZSTD_decompressStream(z->d, &ob, &ib);
                size_t used = ib.pos - z->in.pos;
                z->in.pos = ib.pos;
                if (ZSTD_isError(zret))
                        return zstd_fail(c, &z->in, z->fr_coff, zret, err);
                if (zret == 0) {
                        z->boundary = 1;
                        z->fr_coff = tm_cin_tell(&z->in);
                        int ret = check_frame_end(r, z->fr_coff, r->pos + ob.pos, err);
                        if (ret < 0)
                                return ret;
                } else if (used || ob.pos) {
                        z->boundary = 0;
                }
                if (ob.pos)
                        return (ssize_t)ob.pos;
                if (z->in.pos < z->in.len)
                        continue;
                ssize_t k = tm_cin_fill(c, &z->in, err);
                if (k < 0)
                        return k;
                if (k > 0)
                        continue;
                if (!z->boundary)
                        return tm_cont_eio(c, c->asize, err, "zstd: archive ends inside a frame");
                if (c->raw_known && r->pos != c->raw_size)
                        return tm_cont_eio(
                            c, c->asize, err, "archive holds %llu raw bytes, its index says %llu",
                            (unsigned long long)r->pos, (unsigned long long)c->raw_size);
                z->eof = 1;
        }
}

/* ---- writer: the seekable format ---- */

struct zwriter {
        ZSTD_CCtx *cc;
        uint8_t *fbuf; /* raw bytes of the frame being gathered */
        size_t flen, fcap;
        uint8_t *obuf;
        size_t ocap;
        size_t frame_size; /* end a frame at a boundary once this full */
        size_t hard;       /* end a frame here even without a boundary */
        struct zseek_table table;
};

static int zw_oom(struct tm_cwriter *w, struct tm_err *err)
{
        return tm_err_set(err, -ENOMEM, "%s: out of memory", w->path);
}

static int zstd_w_open(struct tm_cwriter *w, struct tm_err *err)
{
        struct zwriter *z = calloc(1, sizeof *z);
        if (!z)
                return zw_oom(w, err);
        w->impl = z;
        z->frame_size = w->o.frame_size ? w->o.frame_size : ZSTD_DEFAULT_FRAME;
        if (z->frame_size > ZSEEK_MAX_FRAME_RAW / 2)
                z->frame_size = ZSEEK_MAX_FRAME_RAW / 2;
        z->hard = z->frame_size + (z->frame_size > (1u << 20) ? z->frame_size : (1u << 20));
        int level = w->o.level ? w->o.level : ZSTD_DEFAULT_LEVEL;
        if (!(z->cc = ZSTD_createCCtx()))
                return zw_oom(w, err);
        if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel())
                return tm_err_set(err, -EINVAL, "%s: zstd level %d out of range", w->path, level);
        if (ZSTD_isError(ZSTD_CCtx_setParameter(z->cc, ZSTD_c_compressionLevel, level)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(z->cc, ZSTD_c_checksumFlag, 1)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(z->cc, ZSTD_c_contentSizeFlag, 1)))
                return tm_err_set(err, -EINVAL, "%s: zstd: cannot set parameters", w->path);
        return 0;
}

static int end_frame(struct tm_cwriter *w, struct tm_err *err)
{
        struct zwriter *z = w->impl;
        if (z->flen == 0)
                return 0;
        size_t bound = ZSTD_compressBound(z->flen);
        if (z->ocap < bound) {
                free(z->obuf);
                if (!(z->obuf = malloc(bound)))
                        return zw_oom(w, err);
                z->ocap = bound;
        }
        /* The whole frame in one e_end call: zstd then knows the content
         * size and writes it in the frame header. */
        ZSTD_inBuffer in = {z->fbuf, z->flen, 0};
        ZSTD_outBuffer out = {z->obuf, z->ocap, 0};
        size_t zret = ZSTD_compressStream2(z->cc, &out, &in, ZSTD_e_end);
        if (ZSTD_isError(zret) || zret != 0)
                return tm_err_set(err, -EIO, "%s: zstd: %s", w->path,
                                  zret ? ZSTD_getErrorName(zret) : "frame did not fit");
        int ret = tm_cwriter_out(w, z->obuf, out.pos, err);
        if (ret < 0)
                return ret;
        /* checksumFlag is set: the frame ends with its content checksum */
        ret = zseek_add(&z->table, (uint32_t)out.pos, (uint32_t)z->flen,
                        tm_le32(z->obuf + out.pos - 4));
        if (ret < 0)
                return tm_err_set(err, ret, "%s: zstd seek table: too many frames", w->path);
        z->flen = 0;
        return 0;
}

static int zstd_w_write(struct tm_cwriter *w, const uint8_t *buf, size_t n, struct tm_err *err)
{
        struct zwriter *z = w->impl;
        while (n > 0) {
                size_t take = z->hard - z->flen < n ? z->hard - z->flen : n;
                if (z->flen + take > z->fcap) {
                        size_t cap = z->fcap ? z->fcap : (64u << 10);
                        while (cap < z->flen + take)
                                cap *= 2;
                        if (cap > z->hard)
                                cap = z->hard;
                        uint8_t *nb = realloc(z->fbuf, cap);
                        if (!nb)
                                return zw_oom(w, err);
                        z->fbuf = nb;
                        z->fcap = cap;
                }
                memcpy(z->fbuf + z->flen, buf, take);
                z->flen += take;
                buf += take;
                n -= take;
                if (z->flen == z->hard) {
                        int ret = end_frame(w, err);
                        if (ret < 0)
                                return ret;
                }
        }
        return 0;
}

static int zstd_w_boundary(struct tm_cwriter *w, struct tm_err *err)
{
        struct zwriter *z = w->impl;
        return z->flen >= z->frame_size ? end_frame(w, err) : 0;
}

static int zstd_w_finish(struct tm_cwriter *w, struct tm_err *err)
{
        struct zwriter *z = w->impl;
        int ret = end_frame(w, err);
        if (ret < 0)
                return ret;
        /* the order record, listed as a frame of no raw bytes */
        uint32_t crc = 0;
        uint64_t raw = 0;
        for (size_t i = 0; i < z->table.n; i++) {
                const uint32_t *t = z->table.e + 3 * i;
                struct zseek_entry e = {.csize = t[0], .rsize = t[1], .sum = t[2]};
                crc = zseek_order_crc(crc, &e);
                raw += t[1];
        }
        uint8_t order[ZSEEK_ORDER_FRAME];
        zseek_order_put(order, (uint32_t)z->table.n, raw, crc);
        if ((ret = tm_cwriter_out(w, order, sizeof order, err)) < 0)
                return ret;
        if ((ret = zseek_add(&z->table, sizeof order, 0, ZSEEK_EMPTY_SUM)) < 0)
                return tm_err_set(err, ret, "%s: zstd seek table: too many frames", w->path);
        size_t len;
        uint8_t *t = zseek_serialize(&z->table, &len);
        if (!t)
                return zw_oom(w, err);
        ret = tm_cwriter_out(w, t, len, err);
        free(t);
        return ret;
}

static void zstd_w_free(struct tm_cwriter *w)
{
        struct zwriter *z = w->impl;
        if (!z)
                return;
        ZSTD_freeCCtx(z->cc);
        free(z->fbuf);
        free(z->obuf);
        zseek_free(&z->table);
        free(z);
}

const struct tm_cont_ops tm_cont_zstd_ops = {
    .name = "zstd",
    .kind = TM_CONT_ZSTD,
    .probe = zstd_probe,
    .open = zstd_open,
    .close = zstd_close,
    .scan = zstd_scan,
    .check_index = zstd_check_index,
    .r_open = zstd_r_open,
    .r_close = zstd_r_close,
    .r_restart = zstd_r_restart,
    .r_read = zstd_r_read,
    .r_mem = zstd_r_mem,
    .w_open = zstd_w_open,
    .w_write = zstd_w_write,
    .w_boundary = zstd_w_boundary,
    .w_finish = zstd_w_finish,
    .w_free = zstd_w_free,
};
