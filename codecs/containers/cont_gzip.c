/* gzip: single or multi-member, random access in the manner of zlib's
 * examples/zran.c. The scan records restart points at deflate block
 * boundaries (bit position + the 32 KiB of raw history before it) and at
 * member starts (no history needed). Windows are deflated into a window
 * store (a temporary file after scan, the index file after load) and read
 * back only when a reader restarts at that point. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cont_zran.h"

#define GZ_WBITS_GZIP 31 /* gzip wrapper only */
#define GZ_DEFAULT_LEVEL 6
#define GZ_WBUF (256u << 10)

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

static int member_point(const struct tm_cont *c, struct tm_zran_scan *s, int64_t *member,
                        struct tm_cpoints *pts, struct tm_err *err)
{
        struct tm_cpoint p = {.coff = tm_cin_tell(&s->in), .roff = s->raw};
        *member = (int64_t)p.coff;
        if (tm_cpoints_want(pts, p.coff, p.roff) && tm_cpoints_add(pts, &p) < 0)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        return 0;
}

static int scan_loop(struct tm_cont *c, struct tm_zran_scan *s, struct tm_cpoints *pts,
                     tm_cont_sink sink, void *arg, struct tm_err *err)
{
        int in_member = 1, ret;
        int64_t member; /* archive offset of the member being read */
        if ((ret = member_point(c, s, &member, pts, err)) < 0)
                return ret;
        for (;;) {
                ssize_t k = tm_cin_fill(c, &s->in, err);
                if (k < 0)
                        return (int)k;
                if (k == 0 && in_member)
                        return gz_cut(c, member, err);
                if (k == 0)
                        return 0;
                if (!in_member) {
                        if (s->in.buf[s->in.pos] != 0x1f)
                                return garbage(c, tm_cin_tell(&s->in), err);
                        inflateReset(&s->zs);
                        if ((ret = member_point(c, s, &member, pts, err)) < 0)
                                return ret;
                        in_member = 1;
                }
                int zret;
                ret = tm_zran_scan_step(c, s, (size_t)k, pts, sink, arg, &zret, err);
                if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
                        return gz_zfail(c, tm_cin_tell(&s->in), member, zret, &s->zs, err);
                if (ret != 0)
                        return ret;
                if (zret == Z_STREAM_END) {
                        in_member = 0; /* zlib checked CRC32 and ISIZE */
                        c->scan_good = s->raw;
                }
        }
}

static int gzip_scan(struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
                     tm_cont_sink sink, void *arg, struct tm_err *err)
{
        struct tm_zran_scan s;
        int ret = tm_zran_scan_init(&s, c, GZ_WBITS_GZIP, err);
        if (ret == 0)
                ret = scan_loop(c, &s, pts, sink, arg, err);
        if (ret == 0) {
                *raw_size = s.raw;
                tm_zran_scan_keep(c, &s);
        }
        tm_zran_scan_free(&s);
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
        struct tm_zran_win w;
};

static int gzip_r_restart(struct tm_creader *r, const struct tm_cpoint *p, struct tm_err *err)
{
        struct greader *g = r->impl;
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
        g->raw_mode = 1;
        return tm_zran_restart(r->c, &g->zs, &g->w, p, err);
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

/* zlib's inflate state and its 32 KiB window (zlib allocates the window
 * at the first block), not counted by zlib itself. */
#define GZ_INFLATE_MEM (7168u + TM_GZ_WINDOW)

static size_t gzip_r_mem(const struct tm_creader *r)
{
        const struct greader *g = r->impl;
        return sizeof *g + g->in.cap + GZ_INFLATE_MEM + tm_zran_win_mem(&g->w);
}

static void gzip_r_close(struct tm_creader *r)
{
        struct greader *g = r->impl;
        inflateEnd(&g->zs);
        tm_cin_free(&g->in);
        tm_zran_win_free(&g->w);
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
                size_t got;
                int zret = tm_zran_inflate(&g->zs, &g->in, (size_t)k, buf, n, Z_NO_FLUSH, &got);
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
    .r_mem = gzip_r_mem,
    .w_open = gzip_w_open,
    .w_write = gzip_w_write,
    .w_finish = gzip_w_finish,
    .w_free = gzip_w_free,
};
