/* gzip: single or multi-member, random access in the manner of zlib's
 * examples/zran.c. The scan records restart points at deflate block
 * boundaries (bit position + the 32 KiB of raw history before it) and at
 * member starts (no history needed). Windows are deflated into a window
 * store (a temporary file after scan, the index file after load) and read
 * back only when a reader restarts at that point. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cont_impl.h"
#include "../common/tm_io.h"

#define GZ_SCAN_OUT (256u << 10)
#define GZ_WBITS_GZIP 31 /* gzip wrapper only */
#define GZ_WBITS_RAW (-15)
#define GZ_DEFAULT_LEVEL 6
#define GZ_WBUF (256u << 10)
/* A window point is taken once the archive bytes since the last point are
 * GZ_BUDGET times what the point costs to save (so points stay near
 * 1/GZ_BUDGET of the archive), or the raw gap reaches GZ_MAX_RAW_GAP. */
#define GZ_BUDGET 200u
#define GZ_MAX_RAW_GAP (8u << 20)
#define GZ_POINT_REC 32u

static int gzip_probe(const uint8_t *head, size_t n)
{
        return n >= 2 && head[0] == 0x1f && head[1] == 0x8b;
}

/* " (in the member at archive offset M)" into buf, or "" when member < 0
 * (a reader that began inside a member does not know where it starts). A
 * CRC mismatch is seen at the member's end: the damage can be anywhere
 * from its start. */
static const char *gz_member_at(int64_t member, char *buf, size_t cap)
{
        buf[0] = 0;
        if (member >= 0)
                snprintf(buf, cap, " (in the member at archive offset %lld)", (long long)member);
        return buf;
}

static int gz_zfail(const struct tm_cont *c, uint64_t off, int64_t member, int zret,
                    const z_stream *zs, struct tm_err *err)
{
        char at[64];
        if (zret == Z_MEM_ERROR)
                return tm_err_set(err, -ENOMEM, "%s: zlib: out of memory", c->path);
        return tm_cont_eio(c, off, err, "gzip: %s%s",
                           zs->msg               ? zs->msg
                           : zret == Z_NEED_DICT ? "needs a dictionary"
                                                 : "corrupt deflate data",
                           gz_member_at(member, at, sizeof at));
}

/* The archive ended inside the member at member (or an unknown one). */
static int gz_cut(const struct tm_cont *c, int64_t member, struct tm_err *err)
{
        char at[64];
        return tm_cont_eio(c, c->asize, err, "gzip: archive ends inside a member%s",
                           gz_member_at(member, at, sizeof at));
}

static int garbage(const struct tm_cont *c, uint64_t off, struct tm_err *err)
{
        return tm_cont_eio(c, off, err, "trailing garbage after the last gzip member");
}

/* ---- scan ---- */

struct gscan {
        z_stream zs;
        z_stream def; /* deflates windows */
        int zs_ok, def_ok;
        struct tm_cin in;
        uint8_t *out;
        uint8_t *ring; /* the last 32 KiB of raw output */
        /* made at the first window point (an archive under a MiB has
         * none): deflating 300 KiB of zlib state, buffers */
        uint8_t *win;  /* a window, linearised */
        uint8_t *cwin; /* a window, deflated */
        uint64_t raw;
        int tmpfd;
        int no_store; /* no temporary file: member points only */
        uint64_t wsize;
        uint64_t est;   /* saved size of the last window point, 0 if none yet */
        int64_t member; /* archive offset of the member being read */
};

static void ring_push(struct gscan *s, const uint8_t *p, size_t n)
{
        uint64_t start = s->raw;
        if (n > TM_GZ_WINDOW) {
                start += n - TM_GZ_WINDOW;
                p += n - TM_GZ_WINDOW;
                n = TM_GZ_WINDOW;
        }
        size_t at = (size_t)(start % TM_GZ_WINDOW);
        size_t first = TM_GZ_WINDOW - at < n ? TM_GZ_WINDOW - at : n;
        memcpy(s->ring + at, p, first);
        memcpy(s->ring, p + first, n - first);
}

static int open_tmp(void)
{
        const char *dir = getenv("TMPDIR");
        if (!dir || !*dir)
                dir = "/tmp";
        int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd >= 0)
                return fd;
        char path[4096];
        snprintf(path, sizeof path, "%s/tracemount-gzwin.XXXXXX", dir);
        fd = mkstemp(path);
        if (fd >= 0)
                unlink(path);
        return fd;
}

/* Deflate the window before raw offset s->raw into s->cwin; returns its
 * length (and the window's length and CRC) or a negative errno. */
static int deflate_window(const struct tm_cont *c, struct gscan *s, uint32_t *crc,
                          struct tm_err *err)
{
        if (!s->win && !(s->win = malloc(TM_GZ_WINDOW)))
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        if (!s->cwin && !(s->cwin = malloc(TM_GZ_WINDOW_CMAX)))
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        size_t wl = s->raw < TM_GZ_WINDOW ? (size_t)s->raw : TM_GZ_WINDOW;
        size_t at = (size_t)(s->raw % TM_GZ_WINDOW);
        /* Oldest byte first: ring[at..] then ring[..at]. */
        if (wl == TM_GZ_WINDOW) {
                memcpy(s->win, s->ring + at, TM_GZ_WINDOW - at);
                memcpy(s->win + TM_GZ_WINDOW - at, s->ring, at);
        } else {
                memcpy(s->win, s->ring, wl);
        }
        *crc = (uint32_t)crc32(0, s->win, (uInt)wl);
        if (s->def_ok)
                deflateReset(&s->def);
        else if (deflateInit2(&s->def, GZ_DEFAULT_LEVEL, Z_DEFLATED, GZ_WBITS_RAW, 8,
                              Z_DEFAULT_STRATEGY) == Z_OK)
                s->def_ok = 1;
        else
                return tm_err_set(err, -ENOMEM, "%s: zlib: out of memory", c->path);
        s->def.next_in = s->win;
        s->def.avail_in = (uInt)wl;
        s->def.next_out = s->cwin;
        s->def.avail_out = TM_GZ_WINDOW_CMAX;
        if (deflate(&s->def, Z_FINISH) != Z_STREAM_END)
                return tm_err_set(err, -EIO, "%s: zlib: cannot deflate a window", c->path);
        return (int)(TM_GZ_WINDOW_CMAX - s->def.avail_out);
}

/* At a deflate block boundary: maybe keep a point there. */
static int block_point(const struct tm_cont *c, struct gscan *s, struct tm_cpoints *pts,
                       struct tm_err *err)
{
        uint64_t coff = tm_cin_tell(&s->in);
        if (s->no_store || !tm_cpoints_want(pts, coff, s->raw))
                return 0;
        const struct tm_cpoint *last = &pts->p[pts->n - 1];
        uint64_t since_c = coff - last->coff, since_r = s->raw - last->roff;
        if (s->est && since_c < GZ_BUDGET * s->est && since_r < GZ_MAX_RAW_GAP)
                return 0;
        uint32_t crc = 0; /* set when clen >= 0 (gcc cannot tell) */
        int clen = deflate_window(c, s, &crc, err);
        if (clen < 0)
                return clen;
        s->est = (uint64_t)clen + GZ_POINT_REC;
        if (since_c < GZ_BUDGET * s->est && since_r < GZ_MAX_RAW_GAP)
                return 0;
        /* Without room for windows the index degrades to member starts:
         * slower seeks, but the archive stays readable. */
        if ((s->tmpfd < 0 && (s->tmpfd = open_tmp()) < 0) ||
            pwrite(s->tmpfd, s->cwin, (size_t)clen, (off_t)s->wsize) != clen) {
                s->no_store = 1;
                return 0;
        }
        struct tm_cpoint p = {
            .coff = coff,
            .roff = s->raw,
            .wpos = s->wsize,
            .wlen = (uint32_t)clen,
            .wcrc = crc,
            .bits = (uint8_t)(s->zs.data_type & 7),
        };
        s->wsize += (uint64_t)clen;
        return tm_cpoints_add(pts, &p) < 0 ? tm_err_set(err, -ENOMEM, "%s: out of memory", c->path)
                                           : 0;
}

static int member_point(const struct tm_cont *c, struct gscan *s, struct tm_cpoints *pts,
                        struct tm_err *err)
{
        struct tm_cpoint p = {.coff = tm_cin_tell(&s->in), .roff = s->raw};
        s->member = (int64_t)p.coff;
        if (tm_cpoints_want(pts, p.coff, p.roff) && tm_cpoints_add(pts, &p) < 0)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        return 0;
}

static int scan_loop(struct tm_cont *c, struct gscan *s, struct tm_cpoints *pts, tm_cont_sink sink,
                     void *arg, struct tm_err *err)
{
        int in_member = 1, ret;
        if ((ret = member_point(c, s, pts, err)) < 0)
                return ret;
        for (;;) {
                ssize_t k = tm_cin_fill(c, &s->in, err);
                if (k < 0)
                        return (int)k;
                if (k == 0 && in_member)
                        return gz_cut(c, s->member, err);
                if (k == 0)
                        return 0;
                if (!in_member) {
                        if (s->in.buf[s->in.pos] != 0x1f)
                                return garbage(c, tm_cin_tell(&s->in), err);
                        inflateReset(&s->zs);
                        if ((ret = member_point(c, s, pts, err)) < 0)
                                return ret;
                        in_member = 1;
                }
                s->zs.next_in = s->in.buf + s->in.pos;
                s->zs.avail_in = (uInt)(s->in.len - s->in.pos);
                s->zs.next_out = s->out;
                s->zs.avail_out = GZ_SCAN_OUT;
                int zret = inflate(&s->zs, Z_BLOCK);
                s->in.pos = (size_t)(s->zs.next_in - s->in.buf);
                size_t got = GZ_SCAN_OUT - s->zs.avail_out;
                if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
                        return gz_zfail(c, tm_cin_tell(&s->in), s->member, zret, &s->zs, err);
                if (got) {
                        ring_push(s, s->out, got);
                        s->raw += got;
                        if (sink && (ret = sink(arg, s->out, got)) != 0)
                                return ret;
                }
                if (zret == Z_STREAM_END) {
                        in_member = 0; /* zlib checked CRC32 and ISIZE */
                        c->scan_good = s->raw;
                        continue;
                }
                if ((s->zs.data_type & 128) && !(s->zs.data_type & 64) &&
                    (ret = block_point(c, s, pts, err)) < 0)
                        return ret;
        }
}

static int gzip_scan(struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
                     tm_cont_sink sink, void *arg, struct tm_err *err)
{
        struct gscan s = {.tmpfd = -1};
        int ret = -ENOMEM;
        s.out = malloc(GZ_SCAN_OUT);
        s.ring = malloc(TM_GZ_WINDOW);
        if (!s.out || !s.ring || tm_cin_init(&s.in, c) < 0)
                goto out;
        if (inflateInit2(&s.zs, GZ_WBITS_GZIP) != Z_OK)
                goto out;
        s.zs_ok = 1;
        ret = scan_loop(c, &s, pts, sink, arg, err);
        if (ret == 0) {
                *raw_size = s.raw;
                if (c->wfd_owned)
                        close(c->wfd);
                c->wfd = s.tmpfd;
                c->wfd_owned = s.tmpfd >= 0;
                c->wbase = 0;
                c->wsize = s.wsize;
                s.tmpfd = -1;
        }
out:
        if (ret == -ENOMEM)
                tm_err_set(err, ret, "%s: out of memory", c->path);
        if (s.zs_ok)
                inflateEnd(&s.zs);
        if (s.def_ok)
                deflateEnd(&s.def);
        if (s.tmpfd >= 0)
                close(s.tmpfd);
        tm_cin_free(&s.in);
        free(s.out);
        free(s.ring);
        free(s.win);
        free(s.cwin);
        return ret;
}

/* ---- reader ---- */

struct greader {
        z_stream zs;
        struct tm_cin in;
        int between;      /* a member ended; the next one has not started */
        int raw_mode;     /* started at a block point: trailer is ours to skip */
        unsigned trailer; /* trailer bytes still to skip */
        int64_t member;   /* archive offset of the member being read, -1: not known */
        int eof;
        uint8_t *win, *cwin;
};

static int load_window(struct tm_creader *r, const struct tm_cpoint *p, struct tm_err *err)
{
        struct greader *g = r->impl;
        const struct tm_cont *c = r->c;
        size_t wl = p->roff < TM_GZ_WINDOW ? (size_t)p->roff : TM_GZ_WINDOW;
        if (!g->win && !(g->win = malloc(TM_GZ_WINDOW)))
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        if (!g->cwin && !(g->cwin = malloc(TM_GZ_WINDOW_CMAX)))
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        if (c->wfd < 0 || p->wpos > c->wsize || p->wlen > c->wsize - p->wpos ||
            tm_pread_full(c->wfd, g->cwin, p->wlen, c->wbase + p->wpos) != (ssize_t)p->wlen)
                return tm_err_set(err, -EIO,
                                  "%s: seek index: cannot read the window for archive "
                                  "offset %llu",
                                  c->path, (unsigned long long)p->coff);
        inflateReset2(&g->zs, GZ_WBITS_RAW);
        g->zs.next_in = g->cwin;
        g->zs.avail_in = p->wlen;
        g->zs.next_out = g->win;
        g->zs.avail_out = (uInt)wl;
        int zret = inflate(&g->zs, Z_FINISH);
        if (zret != Z_STREAM_END || g->zs.avail_out != 0 ||
            (uint32_t)crc32(0, g->win, (uInt)wl) != p->wcrc)
                return tm_err_set(err, -EIO,
                                  "%s: seek index: corrupt window for archive offset "
                                  "%llu",
                                  c->path, (unsigned long long)p->coff);
        return (int)wl;
}

static int gzip_r_restart(struct tm_creader *r, const struct tm_cpoint *p, struct tm_err *err)
{
        struct greader *g = r->impl;
        const struct tm_cont *c = r->c;
        tm_cin_seek(&g->in, p ? p->coff : 0);
        g->between = 0;
        g->trailer = 0;
        g->eof = 0;
        g->member = p && p->wlen ? -1 : (int64_t)(p ? p->coff : 0);
        if (!p || p->wlen == 0) {
                g->raw_mode = 0;
                inflateReset2(&g->zs, GZ_WBITS_GZIP);
                return 0;
        }
        int wl = load_window(r, p, err);
        if (wl < 0)
                return wl;
        inflateReset2(&g->zs, GZ_WBITS_RAW);
        g->raw_mode = 1;
        if (p->bits) {
                uint8_t b;
                int ret = tm_cont_pread(c, &b, 1, p->coff - 1, err);
                if (ret < 0)
                        return ret;
                inflatePrime(&g->zs, p->bits, b >> (8 - p->bits));
        }
        if (inflateSetDictionary(&g->zs, g->win, (uInt)wl) != Z_OK)
                return tm_err_set(err, -EIO, "%s: zlib: cannot set the window", c->path);
        return 0;
}

static int gzip_r_open(struct tm_creader *r, struct tm_err *err)
{
        struct greader *g = calloc(1, sizeof *g);
        if (!g)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", r->c->path);
        if (tm_cin_init(&g->in, r->c) < 0 || inflateInit2(&g->zs, GZ_WBITS_GZIP) != Z_OK) {
                tm_cin_free(&g->in);
                free(g);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", r->c->path);
        }
        r->impl = g;
        return gzip_r_restart(r, NULL, err);
}

static void gzip_r_close(struct tm_creader *r)
{
        struct greader *g = r->impl;
        inflateEnd(&g->zs);
        tm_cin_free(&g->in);
        free(g->win);
        free(g->cwin);
        free(g);
}

/* Between members: skip the trailer we own, then find the next member or
 * the end. Returns 1 at a new member, 0 at the end, or a negative errno. */
static int next_member(struct tm_creader *r, struct tm_err *err)
{
        struct greader *g = r->impl;
        const struct tm_cont *c = r->c;
        while (g->trailer > 0) {
                ssize_t k = tm_cin_fill(c, &g->in, err);
                if (k < 0)
                        return (int)k;
                if (k == 0)
                        return tm_cont_eio(c, c->asize, err, "gzip: archive ends inside a trailer");
                size_t skip = (size_t)k < g->trailer ? (size_t)k : g->trailer;
                g->in.pos += skip;
                g->trailer -= (unsigned)skip;
        }
        ssize_t k = tm_cin_fill(c, &g->in, err);
        if (k <= 0)
                return (int)k;
        if (g->in.buf[g->in.pos] != 0x1f)
                return garbage(c, tm_cin_tell(&g->in), err);
        g->member = (int64_t)tm_cin_tell(&g->in);
        inflateReset2(&g->zs, GZ_WBITS_GZIP);
        g->raw_mode = 0;
        g->between = 0;
        return 1;
}

static ssize_t gzip_r_read(struct tm_creader *r, void *buf, size_t n, struct tm_err *err)
{
        struct greader *g = r->impl;
        const struct tm_cont *c = r->c;
        if (n > UINT32_MAX)
                n = UINT32_MAX;
        for (;;) {
                if (g->eof)
                        return 0;
                if (g->between) {
                        int ret = next_member(r, err);
                        if (ret < 0)
                                return ret;
                        if (ret == 0) {
                                g->eof = 1;
                                return 0;
                        }
                }
                ssize_t k = tm_cin_fill(c, &g->in, err);
                if (k < 0)
                        return k;
                if (k == 0)
                        return gz_cut(c, g->member, err);
                g->zs.next_in = g->in.buf + g->in.pos;
                g->zs.avail_in = (uInt)k;
                g->zs.next_out = buf;
                g->zs.avail_out = (uInt)n;
                int zret = inflate(&g->zs, Z_NO_FLUSH);
                g->in.pos = (size_t)(g->zs.next_in - g->in.buf);
                size_t got = n - g->zs.avail_out;
                if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
                        return gz_zfail(c, tm_cin_tell(&g->in), g->member, zret, &g->zs, err);
                if (zret == Z_STREAM_END) {
                        g->between = 1;
                        g->trailer = g->raw_mode ? 8 : 0;
                }
                if (got)
                        return (ssize_t)got;
        }
}

/* ---- writer: one member ---- */

struct gwriter {
        z_stream zs;
        int ok;
        uint8_t out[GZ_WBUF];
};

static int gzip_w_open(struct tm_cwriter *w, struct tm_err *err)
{
        struct gwriter *g = calloc(1, sizeof *g);
        if (!g)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", w->path);
        w->impl = g;
        int level = w->o.level ? w->o.level : GZ_DEFAULT_LEVEL;
        if (level < 1 || level > 9)
                return tm_err_set(err, -EINVAL, "%s: gzip level %d out of range 1..9", w->path,
                                  level);
        if (deflateInit2(&g->zs, level, Z_DEFLATED, GZ_WBITS_GZIP, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return tm_err_set(err, -ENOMEM, "%s: zlib: deflateInit2 failed", w->path);
        g->ok = 1;
        return 0;
}

static int gz_deflate(struct tm_cwriter *w, const uint8_t *buf, size_t n, int flush,
                      struct tm_err *err)
{
        struct gwriter *g = w->impl;
        g->zs.next_in = (uint8_t *)buf;
        g->zs.avail_in = (uInt)n;
        for (;;) {
                g->zs.next_out = g->out;
                g->zs.avail_out = GZ_WBUF;
                int zret = deflate(&g->zs, flush);
                if (zret == Z_STREAM_ERROR)
                        return tm_err_set(err, -EIO, "%s: zlib: deflate failed", w->path);
                int ret = tm_cwriter_out(w, g->out, GZ_WBUF - g->zs.avail_out, err);
                if (ret < 0)
                        return ret;
                if (flush == Z_FINISH ? zret == Z_STREAM_END
                                      : g->zs.avail_in == 0 && g->zs.avail_out != 0)
                        return 0;
        }
}

static int gzip_w_write(struct tm_cwriter *w, const uint8_t *buf, size_t n, struct tm_err *err)
{
        while (n > 0) {
                size_t take = n > (1u << 30) ? (1u << 30) : n;
                int ret = gz_deflate(w, buf, take, Z_NO_FLUSH, err);
                if (ret < 0)
                        return ret;
                buf += take;
                n -= take;
        }
        return 0;
}

static int gzip_w_finish(struct tm_cwriter *w, struct tm_err *err)
{
        return gz_deflate(w, NULL, 0, Z_FINISH, err);
}

static void gzip_w_free(struct tm_cwriter *w)
{
        struct gwriter *g = w->impl;
        if (!g)
                return;
        if (g->ok)
                deflateEnd(&g->zs);
        free(g);
}

const struct tm_cont_ops tm_cont_gzip_ops = {
    .name = "gzip",
    .kind = TM_CONT_GZIP,
    .probe = gzip_probe,
    .scan = gzip_scan,
    .r_open = gzip_r_open,
    .r_close = gzip_r_close,
    .r_restart = gzip_r_restart,
    .r_read = gzip_r_read,
    .w_open = gzip_w_open,
    .w_write = gzip_w_write,
    .w_finish = gzip_w_finish,
    .w_free = gzip_w_free,
};
