/* zran-style access points inside a deflate stream, in the manner of
 * zlib's examples/zran.c: shared by the containers whose data is deflate
 * (cont_gzip.c: every member; cont_zip.c: a method-8 member). Not for use
 * above codecs/containers/.
 *
 * The scan inflates with Z_BLOCK, so inflate stops at each deflate block
 * boundary; tm_zran_scan_step may keep a point there: the archive offset
 * of the next whole byte, the bits of the byte before it that belong to the
 * next block, and the 32 KiB of raw history before it (the window),
 * deflated into a window store (an unlinked temporary file, handed to the
 * container by tm_zran_scan_keep; the index file after tm_cont_index_load).
 * A reader restarts there with tm_zran_restart: it reads and inflates the
 * window back (checking its CRC32), primes the bits and sets the window as
 * the dictionary of a raw inflate stream. The spacing rule is in
 * docs/formats/containers.md ("gzip (zran-style)"). */
#ifndef TM_CONT_ZRAN_H
#define TM_CONT_ZRAN_H

#include <zlib.h>

#include "cont_impl.h"

#define TM_ZRAN_SCAN_OUT (256u << 10) /* raw bytes per inflate call of a scan */
#define TM_ZRAN_WBITS_RAW (-15)       /* raw deflate, 32 KiB window */

/* The state of one scan. The module owns zs's mode (gzip wrapper or raw)
 * and the loop; everything else is this file's. */
struct tm_zran_scan {
        z_stream zs; /* inflating the archive; initialised by tm_zran_scan_init */
        int zs_ok;
        z_stream def; /* deflates windows */
        int def_ok;
        struct tm_cin in;
        uint8_t *out;  /* TM_ZRAN_SCAN_OUT bytes of output */
        uint8_t *ring; /* the last 32 KiB of raw output */
        /* made at the first window point (an archive under a MiB has
         * none): deflating 300 KiB of zlib state, buffers */
        uint8_t *win;  /* a window, linearised */
        uint8_t *cwin; /* a window, deflated */
        uint64_t raw;  /* raw bytes so far */
        int tmpfd;     /* the window store, -1 until the first window */
        int no_store;  /* no temporary file: points without windows only */
        uint64_t wsize;
        uint64_t est;   /* saved size of the last window point, 0 if none yet */
        uint64_t limit; /* raw bytes the stream may make (UINT64_MAX: any): a
                         * step inflates at most one byte past it */
};

/* Set up s for c, inflating with windowBits wbits (31: gzip, -15: raw).
 * Returns 0 or -ENOMEM (with a message); tm_zran_scan_free either way. */
int tm_zran_scan_init(struct tm_zran_scan *s, const struct tm_cont *c, int wbits,
                      struct tm_err *err);

/* One inflate(zs, flush) from at most avail of the unread bytes of in
 * into buf[0..n) (n < 4 GiB): consumes the input it used, sets *got to
 * the bytes made and returns inflate's code. */
int tm_zran_inflate(z_stream *zs, struct tm_cin *in, size_t avail, void *buf, size_t n, int flush,
                    size_t *got);

/* One inflate(Z_BLOCK) over at most avail of the unread bytes of s->in
 * (the caller has filled it), of at most TM_ZRAN_SCAN_OUT bytes and at
 * most one byte past s->limit (so that a stream longer than its declared
 * size is seen without inflating the rest): the output goes to the ring and to sink (may
 * be NULL), and at a block boundary that is not the stream's end a window
 * point may be added to pts. *zret receives inflate's code; on an error
 * code (other than Z_OK, Z_STREAM_END, Z_BUF_ERROR) nothing is handed on
 * and the caller reports it in its own words. Returns 0, a sink's non-zero
 * value, or a negative errno (with a message). */
int tm_zran_scan_step(const struct tm_cont *c, struct tm_zran_scan *s, size_t avail,
                      struct tm_cpoints *pts, tm_cont_sink sink, void *arg, int *zret,
                      struct tm_err *err);

/* After a scan that succeeded: the window store becomes c's (its raw-
 * deflated windows are what tm_cont_index_save copies). */
void tm_zran_scan_keep(struct tm_cont *c, struct tm_zran_scan *s);

void tm_zran_scan_free(struct tm_zran_scan *s);

/* A reader's window buffers, allocated at its first window restart. */
struct tm_zran_win {
        uint8_t *win, *cwin;
};

/* The bytes w holds. */
static inline size_t tm_zran_win_mem(const struct tm_zran_win *w)
{
        return (w->win ? TM_GZ_WINDOW : 0) + (w->cwin ? TM_GZ_WINDOW_CMAX : 0);
}

/* Restart zs (an inflate stream of any mode) as a raw inflate at the
 * window point p (p->wlen > 0), whose window is in c's window store. The
 * caller positions its input at p->coff. Returns 0 or a negative errno:
 * -EIO when the window cannot be read or fails its CRC32. */
int tm_zran_restart(const struct tm_cont *c, z_stream *zs, struct tm_zran_win *w,
                    const struct tm_cpoint *p, struct tm_err *err);

void tm_zran_win_free(struct tm_zran_win *w);

#endif
