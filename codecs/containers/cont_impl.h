/* Internals shared by the container modules (container.c, cont_index.c,
 * cont_plain.c, cont_gzip.c, cont_zstd.c, cont_zip.c; cont_zran.h for the
 * deflate ones). Not for use above codecs/.
 *
 * A container module is one const struct tm_cont_ops registered in the
 * table in cont_table.c. The shared layer owns everything that is the same
 * for every container: the archive fd and path, the seek index (a sorted
 * array of restart points), its save/load format, the reader's position and
 * the seek policy. A module only knows how to decompress: start at a point,
 * read forward, scan once, write. */
#ifndef TM_CONT_IMPL_H
#define TM_CONT_IMPL_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "container.h"

/* Seek-index tuning, explained in docs/formats/containers.md. */
#define TM_CONT_POINT_MIN_RAW (1u << 20) /* raw bytes between two points, at least */
#define TM_CONT_POINT_MIN_COMP 512u      /* archive bytes between two points, at least */
#define TM_CONT_SEEKABLE_GAP (16u << 20) /* tm_cont_seekable: largest raw gap */
#define TM_CONT_SHORT_SKIP (1u << 20)    /* forward seeks this short never restart */
#define TM_CONT_INBUF (256u << 10)       /* archive bytes per pread */
#define TM_CONT_SCRATCH (128u << 10)     /* discard buffer of a reader */

/* gzip and zip (deflate) windows: 32 KiB of raw history, stored
 * raw-deflated. */
#define TM_GZ_WINDOW 32768u
#define TM_GZ_WINDOW_CMAX 34000u /* > deflateBound of a 32 KiB window */

/* One place where decompression can restart. For gzip, wlen == 0 means a
 * member start (no window; for zip, the member's data start); else the
 * deflate stream restarts at bit (8 - bits) of the byte before coff (zlib's inflatePrime
 * convention: bits is how many high bits of byte coff-1 still belong to the next block) with the
 * window of min(32 KiB, roff) raw bytes stored deflated at wpos of the window store. For zstd,
 * every point is a frame start. */
struct tm_cpoint {
        uint64_t coff; /* archive offset */
        uint64_t roff; /* raw offset */
        uint64_t wpos; /* gzip: offset of the window in the window store */
        uint32_t wlen; /* gzip: compressed window length, 0 if none */
        uint32_t wcrc; /* gzip: CRC32 of the raw window */
        uint8_t bits;  /* gzip: 0..7 */
};

/* A growing, sorted array of points. */
struct tm_cpoints {
        struct tm_cpoint *p;
        size_t n, cap;
};

/* Buffered pread input over the archive. */
struct tm_cin {
        uint8_t *buf;
        size_t cap, pos, len; /* buf[pos..len) is unread */
        uint64_t off;         /* archive offset of buf[0] */
};

/* What identifies the archive's version: its fstat at open. Any pread
 * of the archive is followed by an fstat that must give the same
 * (tm_cont_pread, tm_cin_fill): a write updates the size or the times
 * before its bytes can be read, so bytes read while this holds are the
 * version the container (and its index) was made for. */
struct tm_cont_id {
        uint64_t dev, ino, size;
        int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
};

struct tm_cont {
        const struct tm_cont_ops *ops;
        int fd;
        char *path;
        uint64_t asize;
        uint64_t dir_off; /* tm_cont_dir_offset: set by the module's open */
        struct tm_cont_id id;
        int raw_known;
        uint64_t raw_size;
        int indexed;           /* the points are a complete seek index */
        uint64_t scan_good;    /* tm_cont_scan_good: set by the modules' scans */
        struct tm_cpoints pts; /* sorted by coff and by roff */
        uint64_t max_gap;      /* largest raw distance between points / to the end */
        int wfd;               /* gzip window store: fd (-1 if none) */
        int wfd_owned;         /* a temporary file made by scan */
        uint64_t wbase;        /* offset of the store in wfd */
        uint64_t wsize;        /* bytes in the store */
        uint64_t member;       /* zip: the member to read, or TM_CONT_MEMBER_PICK */
        int unverified;        /* tm_cont_set_unverified */
        void *impl;            /* module state */
};

/* tm_cont.member of tm_cont_open: the container's own choice. */
#define TM_CONT_MEMBER_PICK UINT64_MAX

struct tm_creader {
        struct tm_cont *c;
        uint64_t pos;     /* raw offset */
        int broken;       /* decoder state undefined after an error: restart */
        int head;         /* tm_creader_open_head: nothing decoded whole first */
        uint8_t *scratch; /* discarded bytes of forward seeks, sized by need */
        size_t scap;      /* its size, at most TM_CONT_SCRATCH */
        void *impl;
};

struct tm_cwriter {
        const struct tm_cont_ops *ops;
        int fd;
        char *path;
        uint64_t out_off; /* bytes written to fd */
        struct tm_cwriter_opts o;
        void *impl;
};

struct tm_cont_ops {
        const char *name;
        enum tm_cont_kind kind;
        /* Does the archive start with this container's magic? (n >= 4
         * unless the archive is shorter) */
        int (*probe)(const uint8_t *head, size_t n);
        /* Optional: set up c->impl, raw size, points. It may replace
         * c->ops by a variant of the same container (same name and kind)
         * whose hooks suit this archive (zip: a stored member is read
         * with r_seek, as plain). */
        int (*open)(struct tm_cont *c, struct tm_err *err);
        void (*close)(struct tm_cont *c);
        /* Decompress everything, verify, fill *pts (points that pass
         * tm_cpoints_want; gzip windows go to the window store). Set
         * c->scan_good at the end of each frame or member that passed its
         * checks (it starts at 0). */
        int (*scan)(struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
                    tm_cont_sink sink, void *arg, struct tm_err *err);
        /* Optional: check a loaded index against what open learnt. */
        int (*check_index)(struct tm_cont *c, const struct tm_cpoints *pts, uint64_t raw_size,
                           struct tm_err *err);

        int (*r_open)(struct tm_creader *r, struct tm_err *err);
        void (*r_close)(struct tm_creader *r);
        /* Optional direct seek (plain); otherwise the shared policy uses
         * r_restart and r_read. */
        int (*r_seek)(struct tm_creader *r, uint64_t raw_off, struct tm_err *err);
        /* Restart decoding at p (NULL: the start of the archive); the
         * shared layer then sets r->pos = p ? p->roff : 0. */
        int (*r_restart)(struct tm_creader *r, const struct tm_cpoint *p, struct tm_err *err);
        /* Read up to n raw bytes at r->pos (which the shared layer then
         * advances); 0 at the end. */
        ssize_t (*r_read)(struct tm_creader *r, void *buf, size_t n, struct tm_err *err);
        /* Optional: the bytes r->impl holds (tm_creader_mem); NULL: its
         * input buffer's size is all it reports. */
        size_t (*r_mem)(const struct tm_creader *r);

        /* Optional: tm_cont_members. */
        int (*members)(const struct tm_cont *c, tm_cont_member_fn fn, void *arg,
                       struct tm_err *err);

        /* Optional (NULL: the container is read only). */
        int (*w_open)(struct tm_cwriter *w, struct tm_err *err);
        int (*w_write)(struct tm_cwriter *w, const uint8_t *buf, size_t n, struct tm_err *err);
        int (*w_boundary)(struct tm_cwriter *w, struct tm_err *err);
        /* Finish the stream; w->impl is freed by w_free. */
        int (*w_finish)(struct tm_cwriter *w, struct tm_err *err);
        void (*w_free)(struct tm_cwriter *w);
};

/* The containers in detection order, NULL-terminated: cont_table.c. */
extern const struct tm_cont_ops *const tm_cont_table[];

extern const struct tm_cont_ops tm_cont_plain_ops;
extern const struct tm_cont_ops tm_cont_gzip_ops;
extern const struct tm_cont_ops tm_cont_zstd_ops;
extern const struct tm_cont_ops tm_cont_zip_ops;

/* -EIO with "<path>: archive offset N: <what>". */
int tm_cont_eio(const struct tm_cont *c, uint64_t off, struct tm_err *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The identity of the archive file st describes (cont_io.c): a read
 * compares it with the one taken at open. */
void tm_cont_id_of(const struct stat *st, struct tm_cont_id *id);

/* pread exactly n bytes at off; a short read (end of file) is -EIO naming
 * off. Returns 0 or a negative errno. */
int tm_cont_pread(const struct tm_cont *c, void *buf, size_t n, uint64_t off, struct tm_err *err);

/* Input buffer. tm_cin_init allocates TM_CONT_INBUF bytes, or the
 * archive's size when it is smaller (all it can ever hold: a small
 * archive, of which a daemon may open thousands, does not get 256 KiB per
 * reader); tm_cin_seek moves to an
 * archive offset, keeping the buffered bytes when off falls inside them.
 * tm_cin_fill reads more when the buffer is empty (keeping unread bytes
 * otherwise) and returns the number of unread bytes, 0 only at the end of
 * the archive, or a negative errno. */
int tm_cin_init(struct tm_cin *in, const struct tm_cont *c);
void tm_cin_free(struct tm_cin *in);
void tm_cin_seek(struct tm_cin *in, uint64_t off);
ssize_t tm_cin_fill(const struct tm_cont *c, struct tm_cin *in, struct tm_err *err);
static inline uint64_t tm_cin_tell(const struct tm_cin *in)
{
        return in->off + in->pos;
}

/* Points. tm_cpoints_want says whether a point at (coff, roff) is far
 * enough from the last one to be worth keeping (the first always is);
 * tm_cpoints_add appends (-ENOMEM on failure). */
int tm_cpoints_want(const struct tm_cpoints *pts, uint64_t coff, uint64_t roff);
int tm_cpoints_add(struct tm_cpoints *pts, const struct tm_cpoint *p);
void tm_cpoints_free(struct tm_cpoints *pts);
/* Install pts (taken over) as c's seek index with the given raw size. */
void tm_cont_set_index(struct tm_cont *c, struct tm_cpoints *pts, uint64_t raw_size);

/* Write all of buf to the writer's fd. */
int tm_cwriter_out(struct tm_cwriter *w, const void *buf, size_t n, struct tm_err *err);

/* Little-endian helpers. */
static inline uint32_t tm_le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tm_le64(const uint8_t *p)
{
        return (uint64_t)tm_le32(p) | (uint64_t)tm_le32(p + 4) << 32;
}
static inline void tm_put32(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
        p[2] = (uint8_t)(v >> 16);
        p[3] = (uint8_t)(v >> 24);
}
static inline void tm_put64(uint8_t *p, uint64_t v)
{
        tm_put32(p, (uint32_t)v);
        tm_put32(p + 4, (uint32_t)(v >> 32));
}

#endif
