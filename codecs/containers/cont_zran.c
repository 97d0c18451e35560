/* zran-style access points inside a deflate stream: see cont_zran.h. */
#include "cont_zran.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/tm_io.h"

#define ZRAN_LEVEL 6 /* windows are deflated at this level */
/* A window point is taken once the archive bytes since the last point are
 * ZRAN_BUDGET times what the point costs to save (so points stay near
 * 1/ZRAN_BUDGET of the archive), or the raw gap reaches ZRAN_MAX_RAW_GAP. */
#define ZRAN_BUDGET 200u
#define ZRAN_MAX_RAW_GAP (8u << 20)
#define ZRAN_POINT_REC 32u

int tm_zran_scan_init(struct tm_zran_scan *s, const struct tm_cont *c, int wbits,
                      struct tm_err *err)
{
        memset(s, 0, sizeof *s);
        s->tmpfd = -1;
        s->limit = UINT64_MAX;
        s->out = malloc(TM_ZRAN_SCAN_OUT);
        s->ring = malloc(TM_GZ_WINDOW);
        if (!s->out || !s->ring || tm_cin_init(&s->in, c) < 0 ||
            inflateInit2(&s->zs, wbits) != Z_OK)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        s->zs_ok = 1;
        return 0;
}

void tm_zran_scan_keep(struct tm_cont *c, struct tm_zran_scan *s)
{
        if (c->wfd_owned)
                close(c->wfd);
        c->wfd = s->tmpfd;
        c->wfd_owned = s->tmpfd >= 0;
        c->wbase = 0;
        c->wsize = s->wsize;
        s->tmpfd = -1;
}

void tm_zran_scan_free(struct tm_zran_scan *s)
{
        if (s->zs_ok)
                inflateEnd(&s->zs);
        if (s->def_ok)
                deflateEnd(&s->def);
        if (s->tmpfd >= 0)
                close(s->tmpfd);
        tm_cin_free(&s->in);
        free(s->out);
        free(s->ring);
        free(s->win);
        free(s->cwin);
        memset(s, 0, sizeof *s);
        s->tmpfd = -1;
}

static void ring_push(struct tm_zran_scan *s, const uint8_t *p, size_t n)
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
 * length (and the window's CRC) or a negative errno. */
static int deflate_window(const struct tm_cont *c, struct tm_zran_scan *s, uint32_t *crc,
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
        else if (deflateInit2(&s->def, ZRAN_LEVEL, Z_DEFLATED, TM_ZRAN_WBITS_RAW, 8,
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
static int block_point(const struct tm_cont *c, struct tm_zran_scan *s, struct tm_cpoints *pts,
                       struct tm_err *err)
{
        uint64_t coff = tm_cin_tell(&s->in);
        if (s->no_store || !tm_cpoints_want(pts, coff, s->raw))
                return 0;
        const struct tm_cpoint *last = &pts->p[pts->n - 1];
        uint64_t since_c = coff - last->coff, since_r = s->raw - last->roff;
        if (s->est && since_c < ZRAN_BUDGET * s->est && since_r < ZRAN_MAX_RAW_GAP)
                return 0;
        uint32_t crc = 0; /* set when clen >= 0 (gcc cannot tell) */
        int clen = deflate_window(c, s, &crc, err);
        if (clen < 0)
                return clen;
        s->est = (uint64_t)clen + ZRAN_POINT_REC;
        if (since_c < ZRAN_BUDGET * s->est && since_r < ZRAN_MAX_RAW_GAP)
                return 0;
        /* Without room for windows the index degrades to the points that
         * need none (member starts): slower seeks, but the archive stays
         * readable. */
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

int tm_zran_inflate(z_stream *zs, struct tm_cin *in, size_t avail, void *buf, size_t n, int flush,
                    size_t *got)
{
        size_t have = in->len - in->pos;
        zs->next_in = in->buf + in->pos;
        zs->avail_in = (uInt)(avail < have ? avail : have);
        zs->next_out = buf;
        zs->avail_out = (uInt)n;
        int zret = inflate(zs, flush);
        in->pos = (size_t)(zs->next_in - in->buf);
        *got = n - zs->avail_out;
        return zret;
}

int tm_zran_scan_step(const struct tm_cont *c, struct tm_zran_scan *s, size_t avail,
                      struct tm_cpoints *pts, tm_cont_sink sink, void *arg, int *zret,
                      struct tm_err *err)
{
        size_t got, n = TM_ZRAN_SCAN_OUT;
        if (s->raw <= s->limit && s->limit - s->raw < n)
                n = (size_t)(s->limit - s->raw) + 1;
        *zret = tm_zran_inflate(&s->zs, &s->in, avail, s->out, n, Z_BLOCK, &got);
        if (*zret != Z_OK && *zret != Z_STREAM_END && *zret != Z_BUF_ERROR)
                return 0;
        int ret;
        if (got) {
                ring_push(s, s->out, got);
                s->raw += got;
                if (sink && (ret = sink(arg, s->out, got)) != 0)
                        return ret;
        }
        if (*zret != Z_STREAM_END && (s->zs.data_type & 128) && !(s->zs.data_type & 64))
                return block_point(c, s, pts, err);
        return 0;
}

/* ---- readers ---- */

void tm_zran_win_free(struct tm_zran_win *w)
{
        free(w->win);
        free(w->cwin);
        w->win = w->cwin = NULL;
}

/* Read and inflate p's window into w->win; returns its length or a
 * negative errno. zs is used (raw mode) and left to be reset. */
static int load_window(const struct tm_cont *c, z_stream *zs, struct tm_zran_win *w,
                       const struct tm_cpoint *p, struct tm_err *err)
{
        size_t wl = p->roff < TM_GZ_WINDOW ? (size_t)p->roff : TM_GZ_WINDOW;
        if (!w->win && !(w->win = malloc(TM_GZ_WINDOW)))
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        if (!w->cwin && !(w->cwin = malloc(TM_GZ_WINDOW_CMAX)))
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        if (c->wfd < 0 || p->wpos > c->wsize || p->wlen > c->wsize - p->wpos ||
            tm_pread_full(c->wfd, w->cwin, p->wlen, c->wbase + p->wpos) != (ssize_t)p->wlen)
                return tm_err_set(err, -EIO,
                                  "%s: seek index: cannot read the window for archive "
                                  "offset %llu",
                                  c->path, (unsigned long long)p->coff);
        inflateReset2(zs, TM_ZRAN_WBITS_RAW);
        zs->next_in = w->cwin;
        zs->avail_in = p->wlen;
        zs->next_out = w->win;
        zs->avail_out = (uInt)wl;
        int zret = inflate(zs, Z_FINISH);
        if (zret != Z_STREAM_END || zs->avail_out != 0 ||
            (uint32_t)crc32(0, w->win, (uInt)wl) != p->wcrc)
                return tm_err_set(err, -EIO,
                                  "%s: seek index: corrupt window for archive offset "
                                  "%llu",
                                  c->path, (unsigned long long)p->coff);
        return (int)wl;
}

int tm_zran_restart(const struct tm_cont *c, z_stream *zs, struct tm_zran_win *w,
                    const struct tm_cpoint *p, struct tm_err *err)
{
        int wl = load_window(c, zs, w, p, err);
        if (wl < 0)
                return wl;
        inflateReset2(zs, TM_ZRAN_WBITS_RAW);
        if (p->bits) {
                uint8_t b;
                int ret = tm_cont_pread(c, &b, 1, p->coff - 1, err);
                if (ret < 0)
                        return ret;
                inflatePrime(zs, p->bits, b >> (8 - p->bits));
        }
        if (inflateSetDictionary(zs, w->win, (uInt)wl) != Z_OK)
                return tm_err_set(err, -EIO, "%s: zlib: cannot set the window", c->path);
        return 0;
}
