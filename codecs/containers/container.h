/* Containers: archive bytes -> the raw trace stream.
 *
 * A container is detected by magic bytes, never by file name: gzip
 * (1f 8b, single or multi-member), zstd (28 b5 2f fd, one or many frames,
 * including the seekable format of zstd's contrib/seekable_format), zip
 * (50 4b 03 04: one member of a ZIP archive is the raw stream, the others
 * are listed by tm_cont_members), and plain (anything else). The table of
 * containers lives in codecs/registry.c; adding one touches that table
 * only.
 *
 * Random access. A container keeps a seek index mapping raw offsets to
 * points where decompression can restart:
 *   plain   no index needed;
 *   zstd    the frame table: read from the seek table at open when the
 *           archive is in the seekable format, else built by tm_cont_scan;
 *           a single-frame archive has one entry and is read from its start;
 *   gzip    zran-style access points (bit position + 32 KiB window) built by
 *           tm_cont_scan, spaced so their saved size stays well under 1% of
 *           the archive; member starts are points that need no window.
 *   zip     a stored member needs no index; a deflate member gets the same
 *           access points as gzip, built by tm_cont_scan.
 * The seek index is saved inside the trace index file (views/index.c) with
 * tm_cont_index_save and restored with tm_cont_index_load, so a container
 * is scanned once per archive version.
 *
 * Threads: a struct tm_cont is shared read-only after scan/load; each
 * struct tm_creader is a cursor used by one thread at a time. All archive
 * I/O uses pread on the caller's fd, so cursors never disturb each other.
 *
 * Memory: bounded independently of archive size. Readers own one
 * decompression context each; the zstd window is capped (TM_ZSTD_WLOG_MAX),
 * gzip windows are read from the index file on demand, not kept.
 *
 * Errors: negative errno; -EIO for corrupt or truncated data with a
 * message "<path>: archive offset N: <what>". */
#ifndef TM_CONTAINER_H
#define TM_CONTAINER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "../common/tm_err.h"

/* Largest zstd window (log2 bytes) a reader accepts: 2^27 = 128 MiB is
 * zstd's own default limit; larger windows are refused with -EIO. */
#define TM_ZSTD_WLOG_MAX 27

/* A reader decodes a zstd frame of at most this many raw bytes whole, and
 * serves none of it until its checksum has passed (cont_zstd.c); pack's
 * frames are 1-2 MiB. Larger frames are streamed: the index pass has
 * verified them (docs/damage.md). */
#define TM_ZSTD_VERIFY_MAX (8u << 20)

struct tm_cont;
struct tm_creader;

/* Detect and open the container of the archive open on fd (not owned; it
 * must stay open while the container lives). path is used in messages.
 * Reads only the first bytes and, for zstd, the seekable footer; for zip,
 * the end records, the central directory and the chosen member's local
 * header (docs/formats/containers.md, "zip": which member is chosen; an
 * archive where none can be is -ENOTSUP, one whose records are damaged or
 * out of range -EIO). Returns 0 or a negative errno. */
int tm_cont_open(int fd, const char *path, struct tm_cont **out, struct tm_err *err);

/* The name of the container whose magic the first n bytes of an archive
 * (head) start with: "gzip", "zstd" or "zip"; NULL for none (plain). An
 * archive with such magic is taken for that container whatever its
 * damage. */
const char *tm_cont_magic(const uint8_t *head, size_t n);

/* Free c. Readers must be closed first. NULL is allowed. */
void tm_cont_close(struct tm_cont *c);

/* "plain", "gzip", "zstd" or "zip". */
const char *tm_cont_name(const struct tm_cont *c);

/* Size of the archive in bytes (compressed). */
uint64_t tm_cont_archive_size(const struct tm_cont *c);

/* Archive offset where the directory the container keeps at the
 * archive's end begins (zstd: the seek table; zip: the central directory
 * and its end records), as read at open; the archive size when there is
 * none. Bytes [offset, size) describe the whole archive's layout (the
 * index key's fingerprint hashes them: views/ixfile.h). */
uint64_t tm_cont_dir_offset(const struct tm_cont *c);

/* The raw (decompressed) size when it is known without decompressing
 * (plain; zstd in the seekable format, from its seek table; zip, from the
 * central directory; any container after scan or index load): returns 1
 * and sets *size. Returns 0 when it is
 * not known yet (gzip and other zstd archives before a scan: frame content
 * sizes are not summed, as that would read every block header). */
int tm_cont_raw_size(const struct tm_cont *c, uint64_t *size);

/* Whether random access is cheap: 1 when the seek index exists and its
 * points are no further apart (and the last no further from the end) than
 * 16 MiB of raw data, else 0. Plain answers 1. A single-frame zstd archive
 * of more than 16 MiB answers 0 even after scan. */
int tm_cont_seekable(const struct tm_cont *c);

/* Raw bytes a new reader decompresses and throws away to get to raw
 * offset raw: its distance from the seek-index point at or before it, or
 * from the stream's start when there is none (yet); 0 for plain. A record
 * trace's index prefers checkpoints where this is small (views/index.h). */
uint64_t tm_cont_restart_cost(const struct tm_cont *c, uint64_t raw);

/* The first seek-index point after raw offset raw: returns 1 and sets
 * *next, or 0 when there is none, the container needs none (plain) or the
 * index is not complete (before tm_cont_scan of an archive without a seek
 * table). */
int tm_cont_next_point(const struct tm_cont *c, uint64_t raw, uint64_t *next);

/* Receives raw bytes in order during tm_cont_scan. Returning non-zero stops
 * the scan, and tm_cont_scan returns that value. */
typedef int (*tm_cont_sink)(void *arg, const uint8_t *buf, size_t n);

/* One sequential pass over the whole archive: decompresses everything,
 * verifies checksums the container carries (gzip CRC32 and ISIZE, zstd
 * content checksums, the zip member's CRC32 and sizes), builds the seek
 * index, and hands every raw byte in order to sink (which may be NULL). Afterwards tm_cont_raw_size
 * answers. Returns 0, a sink's non-zero value, or a negative errno. */
int tm_cont_scan(struct tm_cont *c, tm_cont_sink sink, void *arg, struct tm_err *err);

/* Raw bytes that every tm_cont_scan of this process has decompressed
 * and handed on, whatever its sink (a debug counter: tests check with it
 * that what was scanned once is not scanned again). */
uint64_t tm_cont_scanned(void);

/* After tm_cont_scan: how many of the raw bytes it handed to the sink
 * passed every check the container can make. A zstd frame's bytes count
 * once the frame has ended with its checksum (and, in the seekable format,
 * its seek-table entry) verified, a gzip member's once its CRC32 and ISIZE
 * matched, a zip member's (all of the raw stream) once its CRC32, its
 * compressed and raw sizes matched the central directory; plain has no
 * checks, so all it read counts. After a scan that failed this is the raw offset of the start of
 * the frame or member the damage is in: bytes past it reached the sink unverified, and may be wrong
 * (docs/damage.md). After a scan that succeeded it is the raw size. */
uint64_t tm_cont_scan_good(const struct tm_cont *c);

/* Ask that the index pass keep what decoded before a damaged member even
 * though the member's CRC-32 never vouched for it (on: 1). Only streamed
 * members can: gzip and zip; tm_cont_unverified says whether c is such
 * a container with the request on. */
void tm_cont_set_unverified(struct tm_cont *c, int on);
int tm_cont_unverified(const struct tm_cont *c);

/* Append the seek index to f; returns the number of bytes written or a
 * negative errno. Valid after tm_cont_scan or tm_cont_index_load. */
int64_t tm_cont_index_save(const struct tm_cont *c, FILE *f, struct tm_err *err);

/* Restore a seek index that tm_cont_index_save wrote, stored in fd at
 * [off, off+len). fd must stay open while c lives: large parts (gzip
 * windows) are read from it on demand. Returns 0 or -EIO if the bytes are
 * not a valid index for this container. */
int tm_cont_index_load(struct tm_cont *c, int fd, uint64_t off, uint64_t len, struct tm_err *err);

/* Open a cursor on the raw stream, positioned at raw offset 0. */
int tm_creader_open(struct tm_cont *c, struct tm_creader **out, struct tm_err *err);

/* A cursor for the first bytes of the raw stream, read to tell the format
 * and parse its header: as tm_creader_open, but a zstd frame is streamed
 * as it decodes rather than decoded whole and verified first, so that a
 * trace whose first frame is damaged can still be recognised (and shown
 * with its damage) rather than be taken for a plain file. The index pass
 * verifies those bytes as it verifies all others; nothing read this way
 * may be served as a view's bytes. */
int tm_creader_open_head(struct tm_cont *c, struct tm_creader **out, struct tm_err *err);

/* Position r at raw offset raw_off. Cost: from the nearest seek-index
 * point at or before raw_off (bounded by the spacing of the index), or from
 * the current position when moving forward a short way; from the start of
 * the stream when no index point precedes it. Seeking past the end is
 * -EINVAL once the raw size is known. Returns 0 or a negative errno. */
int tm_creader_seek(struct tm_creader *r, uint64_t raw_off, struct tm_err *err);

/* Read up to n raw bytes at the cursor. Returns the count (short reads are
 * allowed), 0 at the end of the stream, or a negative errno. */
ssize_t tm_creader_read(struct tm_creader *r, void *buf, size_t n, struct tm_err *err);

/* Read until n bytes or the end of the stream: the count (short only at
 * the end), or, when an error comes after some bytes, those bytes (the
 * next call meets the error); a negative errno when it comes first. */
ssize_t tm_creader_read_full(struct tm_creader *r, void *buf, size_t n, struct tm_err *err);

/* The cursor's raw offset. */
uint64_t tm_creader_tell(const struct tm_creader *r);

/* Free r. NULL is allowed. */
void tm_creader_close(struct tm_creader *r);

/* The bytes r holds now (its decompression context, windows and buffers,
 * as its row counts them), for the budget of open views
 * (views/hmem.h). */
size_t tm_creader_mem(const struct tm_creader *r);

/* ---- the other members of an archive (zip) ---- */

/* One member as the archive's directory lists it. */
struct tm_cont_member {
        uint64_t index;            /* its place in the directory, from 0 */
        const char *name;          /* NUL-terminated copy; valid during the call only */
        size_t name_len;           /* bytes of name (a stored name may hold a NUL) */
        uint64_t size;             /* uncompressed bytes, as the directory says */
        uint64_t csize;            /* compressed bytes */
        unsigned method;           /* as stored: 0 stored, 8 deflate, others unread */
        unsigned is_dir : 1;       /* the name ends in '/' */
        unsigned is_encrypted : 1; /* general purpose bit 0 */
        unsigned is_raw : 1;       /* this container's raw stream */
};

/* Called once per member, in directory order; a non-zero return stops
 * the walk and tm_cont_members returns it. */
typedef int (*tm_cont_member_fn)(void *arg, const struct tm_cont_member *m);

/* List the members of c's archive, including the one that is its raw
 * stream (is_raw). Containers without members (plain, gzip, zstd) call
 * nothing and return 0. Reads the directory again on each call (with
 * pread, so it may run beside readers); memory stays bounded whatever
 * the count: keeping the list is the caller's choice. Sizes, methods and
 * names are the directory's word: nothing of the other members is read
 * or verified. Returns 0, fn's non-zero value, or a negative errno (-EIO
 * naming the archive offset when the directory changed or is damaged). */
int tm_cont_members(const struct tm_cont *c, tm_cont_member_fn fn, void *arg, struct tm_err *err);

/* Open member index (its place in the directory, as tm_cont_members
 * gives it) of the zip archive on fd as a container of its own, whose raw
 * stream is that member's bytes: what tm_cont_open does for the member it
 * chooses, with the same checks (its local header, its method, encryption)
 * and the same readers; tm_cont_scan then verifies the member's CRC-32 and
 * sizes and builds its seek index. Returns 0, -ENOTSUP for an archive that
 * is not zip, a directory entry, an encrypted member or another method,
 * -ENOENT when the directory has no member index, -EIO for damaged
 * records (err names the archive offset and the member). */
int tm_cont_open_member(int fd, const char *path, uint64_t index, struct tm_cont **out,
                        struct tm_err *err);

/* ---- writing (tracetool pack) ---- */

/* TM_CONT_ZIP is read only: tm_cwriter_open refuses it (-ENOTSUP). */
enum tm_cont_kind { TM_CONT_PLAIN, TM_CONT_GZIP, TM_CONT_ZSTD, TM_CONT_ZIP };

struct tm_cwriter_opts {
        int level;         /* compression level; 0 means the library default */
        size_t frame_size; /* zstd: raw bytes per seekable frame; 0 = 1 MiB */
};

struct tm_cwriter;

/* Start writing a container of the given kind to fd (not owned, not
 * closed). zstd output is in the seekable format: independent frames and a
 * seek table, readable by plain zstdcat. gzip output is one member. */
int tm_cwriter_open(int fd, const char *path, enum tm_cont_kind kind,
                    const struct tm_cwriter_opts *o, struct tm_cwriter **out, struct tm_err *err);

/* Append raw bytes. */
int tm_cwriter_write(struct tm_cwriter *w, const void *buf, size_t n, struct tm_err *err);

/* Tell the writer the raw stream is at a record boundary. A zstd frame ends
 * only here, once it holds at least frame_size raw bytes, so frames align
 * to records. Other kinds ignore it. */
int tm_cwriter_boundary(struct tm_cwriter *w, struct tm_err *err);

/* Flush everything (last frame, seek table, gzip trailer) and free w.
 * Returns 0 or a negative errno; w is freed either way. */
int tm_cwriter_close(struct tm_cwriter *w, struct tm_err *err);

#endif
