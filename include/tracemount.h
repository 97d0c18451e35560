/* tracemount.h: the libtracemount API, a trace archive seen as a directory
 * of views. This header is the whole public interface of the installed
 * library (libtracemount.a, pkg-config name tracemount): everything the
 * FUSE daemon (fs/) and tracetool (tools/) do with a trace goes through
 * these functions, and the installed archive exports nothing else.
 *
 *     cc prog.c $(pkg-config --cflags --libs tracemount)
 *     #include <tracemount.h>
 *
 * A trace is an archive file (plain, gzip, zstd, seekable zstd or zip)
 * holding one trace in a format the library knows (din, PDATS, PDATS II,
 * lackey, HATF, Meta-TF, ...). It is opened as a struct tm_trace, and each
 * of its views, a file of the trace's directory in the mount, is read
 * through a cursor, struct tm_vfile. Views, as paths relative to the
 * trace's directory (the README's "Views" lists them all):
 *   ascii            the trace as text; din lines "<type> <hex addr>\n" for
 *                    address traces
 *   binary           fixed-width records; for address traces struct
 *                    tm_binary_ref (<tracemount/tm_binary.h>)
 *   raw              the native encoding, decompressed
 *   stats            a text report of the trace's statistics
 *   streams/<type>   the ascii lines of one reference type or record kind
 *   and, by format: xdin, schema, stats.json, errors, fields/<field>, ...
 *
 * Errors. Every fallible function returns a negative errno-style code and,
 * when given a non-NULL struct tm_err, fills it with one line naming what
 * failed and where: "<file>: archive offset N: ..." or "<file>: raw offset
 * N: ...". -EIO means corrupt or truncated input, -ENOMEM out of memory,
 * -EINVAL a bad argument, -ENOTSUP a valid but unsupported feature,
 * -EMEDIUMTYPE a file that is not a trace; others come from the system
 * call that failed. Input never aborts the process.
 *
 * Cost. tm_trace_open reads a few KiB and decodes nothing else. Sizes and
 * reads need the index: tm_trace_index loads it (validated against the
 * archive's size, mtime and inode) or builds it with one pass over the
 * archive and saves it atomically beside the archive when that directory
 * is writable, else in the cache directory. After that a read at any
 * offset of any view costs time bounded independently of the trace's
 * length. Memory stays bounded whatever the trace's size.
 *
 * Threads. A struct tm_trace may be shared by threads: every function
 * taking one is safe to call concurrently, except tm_trace_close, which
 * must be the last call on it. A struct tm_vfile is one cursor: one thread
 * at a time (the caller serialises), except where a function says
 * otherwise. Distinct traces and cursors are independent. The library
 * keeps no global state that callers must set up or tear down.
 *
 * Memory. Objects the library returns belong to it until their close
 * function is called; strings it returns are owned by the library and
 * stay valid as each function says. The library never frees what the
 * caller passes in and keeps no pointer to it past the call, except where
 * a function says otherwise. */
#ifndef TRACEMOUNT_H
#define TRACEMOUNT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The functions of this header are the library's exported symbols: it is
 * built with hidden visibility, and TM_API marks what stays visible. */
#if defined(__GNUC__) || defined(__clang__)
#define TM_API __attribute__((visibility("default")))
#else
#define TM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---- */

#define TM_ERR_MSG 512

/* What went wrong: filled by every function that takes one, when that
 * function fails (its contents are unspecified after a success). The
 * caller owns it, usually on the stack; zero-initialise it before the
 * first use. */
struct tm_err {
        int code;             /* the negative errno last set, 0 if none */
        char msg[TM_ERR_MSG]; /* NUL-terminated message */
};

/* ---- traces ---- */

struct tm_trace;
struct tm_vfile;
struct tm_ra;

/* Options of tm_trace_open. Zero-initialise, then set what you need;
 * strings are copied, so they need not outlive the call. */
struct tm_trace_opts {
        /* Where to keep indexes when the archive's directory is not
         * writable. NULL: $XDG_CACHE_HOME/tracemount, or
         * $HOME/.cache/tracemount. */
        const char *cache_dir;
        /* > 0: a descriptor of the cache directory (O_PATH is enough; the
         * library keeps a copy): index files in the cache are read and
         * written by name in it (a temporary file made with O_EXCL and
         * renamed into place), never through a path, and cache_dir only
         * names it in messages (a daemon opens it once, at mount). 0:
         * none given: the library opens cache_dir, as above, by name when
         * it reads or writes an index there (made if missing), then goes
         * through that descriptor likewise. < 0: a negative errno, why the
         * caller could not open it: no cache directory is used, and the
         * index's note names cache_dir and that reason. */
        int cache_dir_fd;
        /* 1: never write an index file beside the archive (always use
         * cache_dir). */
        int no_index_beside;
        /* 1: also believe index files that members of a group-shared
         * cache directory wrote for archives they cannot change
         * (docs/shared-cache.md). */
        int trust_group_index;
        /* 1: also believe a Meta-TF DTD beside the archive that members of
         * the group of its directory may write, when that directory is
         * group-writable, not by others, and the caller is in the group
         * (docs/side-files.md). */
        int trust_group_dtd;
        /* 1: keep the index in memory only. */
        int no_save;
        /* 1: a damaged gzip or zip member serves what decoded before the
         * damage although its CRC-32 never vouched for it (the views then
         * say so in errors and stats; docs/damage.md, "The unverified
         * prefix"). 0 (the default): nothing of a damaged member. */
        int unverified_prefix;
        /* References between checkpoints to start with (0: the environment
         * variable TM_CKPT_REFS if set, else 64Ki). Smaller means faster
         * seeks and a bigger index; tests use tiny values. */
        uint64_t ckpt_refs;
};

/* Is path a trace? Opens it, reads the first bytes and decompresses at
 * most a few KiB of raw data, asks each codec, and closes it again.
 *
 * Returns 1 if it is a trace, and then sets *codec_name and *cont_name
 * (each may be NULL) to static strings, such as "pdats2" and "zstd",
 * valid for the life of the process. A damaged archive is a trace too
 * when its container's magic (gzip, zstd, zip) or its codec's header is
 * recognised: cut, emptied, or with a bad header or directory (the codec
 * is then "unknown" when nothing of it could be read;
 * docs/damage.md). Returns 0 if it is not a trace, including
 * unreadable, missing and empty files and intact archives that hold
 * something else; never an error, never decodes more. Thread-safe. */
TM_API int tm_probe_path(const char *path, const char **codec_name, const char **cont_name);

/* tm_probe_path on fd, a descriptor open for reading on the file (the
 * library reads it with pread and keeps no copy past the call); path
 * only names the file in messages and is never opened. Returns 1 or 0 as
 * tm_probe_path (0 for fd < 0). Thread-safe. */
TM_API int tm_probe_fd(int fd, const char *path, const char **codec_name, const char **cont_name);

/* Open the trace at path, probing it as tm_probe_path does, with options o
 * (NULL: all defaults).
 *
 * Returns 0 and sets *out to a new trace, which the caller closes with
 * tm_trace_close. Otherwise returns a negative errno and fills err:
 * -ENOENT-style errors from open(2), -EMEDIUMTYPE when the file is not a
 * regular file, is empty (err: "PATH: empty file") or is not a trace in a
 * known format ("PATH: not a trace this build can read"), -ENOMEM; *out
 * is not set then. A damaged archive that tm_probe_path takes opens:
 * tm_trace_open_error says why and its errors view holds it.
 * The archive's file descriptor stays open until tm_trace_close. */
TM_API int tm_trace_open(const char *path, const struct tm_trace_opts *o, struct tm_trace **out,
                         struct tm_err *err);

/* tm_trace_open of an archive the caller opened itself: for a program that
 * must not open files by a name that someone else could redirect (a root
 * daemon serving other users' directories reaches each file from a
 * directory descriptor, with no symlink followed).
 *
 * fd: a descriptor open for reading on the archive; the library reads
 * it with pread and keeps a copy (the caller keeps and closes its own).
 * dirfd: a descriptor of the directory holding the archive (O_PATH is
 * enough), or -1; the library keeps a copy. Index files beside the
 * archive are looked up, judged (docs/index-format.md, "What the index
 * trusts", against the directory's own stat) and written through it
 * only, by name (".<name>.tmidx", name path's last component; written as
 * a temporary file with O_CREAT | O_EXCL | O_NOFOLLOW renamed into place),
 * never by path; -1: no index file beside the archive, the cache only.
 * path: the archive's path, for messages and to name its index file in
 * the cache (absolute, so that the name is stable); the library never
 * opens it nor its directory by name.
 *
 * Returns as tm_trace_open (-EBADF for fd < 0), *out set only on
 * success. */
TM_API int tm_trace_open_fd(int fd, int dirfd, const char *path, const struct tm_trace_opts *o,
                            struct tm_trace **out, struct tm_err *err);

/* Close t and free everything it holds. Every struct tm_vfile opened on t
 * must be closed first, and no other call on t may run or follow. NULL is
 * a no-op. */
TM_API void tm_trace_close(struct tm_trace *t);

/* The bytes t holds in memory (its schema, index, texts), for a cache of
 * open traces to bound: call it only while no other thread uses t. */
TM_API uint64_t tm_trace_memory(const struct tm_trace *t);

/* The budget of open view files (tm_vfile): what their decoders, buffers
 * and readahead segments may hold together, in bytes (0: the default,
 * 256 MiB). Past it, the files least recently read give back what they
 * hold and their next read resumes from a checkpoint; so between reads
 * the files hold at most bytes together, and during reads that much plus
 * what the reads in flight need. */
TM_API void tm_handle_memory_set(uint64_t bytes);

/* What the open view files hold now, in bytes. */
TM_API uint64_t tm_handle_memory_in_use(void);

/* Return heap memory freed since to the system (malloc_trim), at most
 * once a second unless no view file holds any: for a daemon after it
 * closes files or traces. */
TM_API void tm_memory_trim(void);

/* The name of t's trace codec ("pdats2", "hatf", ...) and of its container
 * ("plain", "gzip", "zstd", ...): static strings, valid for the life of
 * the process. Never fail. */
TM_API const char *tm_trace_codec(const struct tm_trace *t);
TM_API const char *tm_trace_container(const struct tm_trace *t);

/* Why t, a damaged archive or one whose codec could not open it, has no
 * views but stats and errors (every other view fails with -EIO): the
 * message naming the archive and the offset, or NULL when t opened
 * whole. Valid until tm_trace_close. */
TM_API const struct tm_err *tm_trace_open_error(const struct tm_trace *t);

/* Called now and then by long passes with the raw bytes done and the raw
 * total (0 if unknown), from the thread that called the pass. */
typedef void (*tm_progress_fn)(void *arg, uint64_t done, uint64_t total);

/* Load or build t's index (see "Cost" above). progress (may be NULL) is
 * called with arg during a build.
 *
 * Returns 0 once the index is in memory: loaded, built, or already there
 * (later calls return at once). Returns a negative errno and fills err
 * when the build fails, -EIO naming the archive and offset on corrupt
 * input. A failed build is remembered: later calls return the same error
 * without decoding again until the archive changes. When it is rewritten
 * in place (size or mtime) with a trace of the same codec and the same
 * views (the per-id streams aside), the next call with no cursor open
 * starts over on the new version, after a failed build as after one that
 * kept a damaged archive's intact prefix; else it stays failed. Failing
 * to save the index file is not an error (tm_trace_index_note says why).
 * Thread-safe: however many threads call it, the index is built once and
 * the others wait for it. */
TM_API int tm_trace_index(struct tm_trace *t, tm_progress_fn progress, void *arg,
                          struct tm_err *err);

/* The path of the index file in use, or NULL (not built yet, or kept in
 * memory only). Owned by t, valid until tm_trace_close. */
TM_API const char *tm_trace_index_path(const struct tm_trace *t);

/* Why an index built for t stays in memory only ("index in memory only:
 * <dir or file>: <reason>"), or NULL (saved, loaded, or not asked to
 * save). Owned by t, valid until tm_trace_close. */
TM_API const char *tm_trace_index_note(const struct tm_trace *t);

/* How t got its index: not yet, loaded from an index file (nothing
 * decoded), or built by decoding the whole archive. Lets callers and tests
 * tell a cache hit from a rebuild. Never fails. */
enum tm_index_source { TM_INDEX_NONE, TM_INDEX_LOADED, TM_INDEX_BUILT };
TM_API enum tm_index_source tm_trace_index_source(const struct tm_trace *t);

/* ---- views ---- */

/* The views of t: a NULL-terminated array of paths relative to the
 * trace's directory ("ascii", ..., "streams/read", ...). Known without the
 * index, but for those the index adds (a heap trace's
 * streams/thread/<id>), which are appended once it is built: read the
 * array again after tm_trace_index or tm_trace_view_lookup (after a
 * rewritten archive's new index, they are the new version's). The array and
 * its strings are owned by t and valid until tm_trace_close. Never fails. */
TM_API const char *const *tm_trace_views(const struct tm_trace *t);

/* The name resolver every lookup of a view by name goes through (the
 * mount's, tm_vfile_open's, tm_trace_view_size's, and a listing of
 * "streams" or of the whole trace by the mount and `tracetool views`):
 * when view (a view, or a directory of views such as "streams" or
 * "streams/thread") could be or hold one the index adds and the index is
 * not built yet, build it, so that tm_trace_views(t) then lists view if
 * the trace has it.
 *
 * Returns 0 (including when view is unknown: the list says whether it
 * exists), or the index build's negative errno (the list is then what it
 * was). Thread-safe. */
TM_API int tm_trace_view_lookup(struct tm_trace *t, const char *view);

/* The exact size in bytes of view into *size, building the index if
 * needed. Returns 0, -ENOENT for an unknown view, or the index build's
 * error (err filled). Thread-safe. */
TM_API int tm_trace_view_size(struct tm_trace *t, const char *view, uint64_t *size,
                              struct tm_err *err);

/* Open a cursor on view of t, building the index if needed. Returns 0 and
 * sets *out to a new cursor, which the caller closes with tm_vfile_close
 * (before closing t). Returns -ENOENT for an unknown view, -ENOMEM, or the
 * index build's error (err filled); *out is not set then. Thread-safe
 * with respect to t: any number of cursors may be open on one trace. */
TM_API int tm_vfile_open(struct tm_trace *t, const char *view, struct tm_vfile **out,
                         struct tm_err *err);

/* Read up to n bytes of f's view at offset off into buf.
 *
 * Returns the count: n, unless the view ends first, or fewer when a
 * corrupt record follows the bytes returned (the next read, at the
 * following offset, returns the error). Returns 0 at or past the end, or
 * a negative errno: -EIO with err naming the file and offset on corrupt
 * input, -ENOMEM. An error leaves the cursor usable for any other offset.
 * Sequential reads continue from the cursor without seeking; after a few
 * of them, ascii and binary are decoded ahead in parallel by threads the
 * cursor owns (their number: $TM_READ_THREADS, 0 turns it off; default
 * CPUs - 1). One thread at a time per cursor. */
TM_API ssize_t tm_vfile_pread(struct tm_vfile *f, void *buf, size_t n, uint64_t off,
                              struct tm_err *err);

/* Bytes of a view where they lie in a decoder's buffers, for a reply that
 * sends them without copying them first (the FUSE daemon's reads). Filled
 * by tm_vfile_peek; the caller owns the struct, the library the bytes. */
#define TM_VSPAN_MAX 2
struct tm_vspan {
        unsigned n; /* pieces, in order */
        struct iovec iov[TM_VSPAN_MAX];
        struct tm_ra *ra; /* private: what holds them */
        unsigned slot[TM_VSPAN_MAX];
};

/* Like tm_vfile_pread, but when the bytes are ready in place (a sequential
 * reader whose read-ahead has decoded them), point sp at them instead of
 * copying: then it returns the count (all n bytes, or up to the end), and
 * they stay valid and unchanged until tm_vfile_unpeek(sp). Returns -1
 * otherwise, with nothing held: use tm_vfile_pread, which serves every
 * read and meets every error. Only the caller's serialisation of f is
 * needed here, as for tm_vfile_pread. */
TM_API ssize_t tm_vfile_peek(struct tm_vfile *f, size_t n, uint64_t off, struct tm_vspan *sp);

/* Give back the bytes sp holds (a no-op after a -1 from tm_vfile_peek).
 * Safe from any thread, concurrently with any call on the cursor; the
 * cursor's tm_vfile_close waits for it. */
TM_API void tm_vfile_unpeek(struct tm_vspan *sp);

/* 1 if the bytes of f's view may change while it is open (errors): serve
 * it uncached, each open seeing the text of that moment; else 0. Never
 * fails. */
TM_API int tm_vfile_volatile(const struct tm_vfile *f);

/* Close f and free what it holds, waiting for bytes it lent through
 * tm_vfile_peek to be given back. NULL is a no-op. */
TM_API void tm_vfile_close(struct tm_vfile *f);

/* ---- the other members of an archive (zip) ----
 *
 * A zip archive holds the trace as one member (its raw stream, the `raw`
 * view) and may hold other files beside it. They are listed by a path
 * made safe from the stored name (docs/formats/containers.md, "Members in
 * the mount": '/' makes directories, empty components go, "." and ".."
 * and bytes that are not printable UTF-8 are %-escaped, and a name that
 * cannot be shown, too long or colliding, becomes "~<index>"), and read
 * with random access through a cursor, struct tm_member. The trace's own
 * member is not listed. */

struct tm_members;
struct tm_member;

/* 1 if t's archive has members (zip), even when the trace's is its only
 * one; else 0. Reads nothing. Never fails. */
TM_API int tm_trace_has_members(const struct tm_trace *t);

/* List the members of t's archive but the trace's own, reading the
 * archive's central directory once (nothing of the members is read).
 * At most 65536 members and 16 MiB of paths are listed; the rest, and
 * members shown as "~<index>", are noted in t's errors view.
 *
 * Returns 0 and sets *out to a new table, which the caller frees with
 * tm_members_close (before tm_trace_close(t)); an archive without members
 * gives an empty table. Returns -EIO (err naming the archive offset) when
 * the directory is damaged, or -ENOMEM. The table is read-only: any number
 * of threads may use it at once. */
TM_API int tm_members_open(struct tm_trace *t, struct tm_members **out, struct tm_err *err);

/* Free m and the verified members it keeps. NULL is a no-op. Every cursor
 * opened through m must be closed first. */
TM_API void tm_members_close(struct tm_members *m);

/* What path (relative to the members' directory, without a leading or
 * trailing '/'; "" is that directory itself) is in m: 1 a member, with its
 * uncompressed size (the directory's word) in *size (may be NULL); 2 a
 * directory of members; 0 nothing. Never fails. */
TM_API int tm_members_find(const struct tm_members *m, const char *path, uint64_t *size);

/* Called by tm_members_list for each name (one component, NUL-terminated,
 * valid during the call) directly under the listed directory; is_dir says
 * whether it is a directory. A non-zero return stops the listing. */
typedef int (*tm_members_fn)(void *arg, const char *name, int is_dir);

/* Call fn once per name directly under directory dir of m ("" for the top),
 * in byte order. Returns 0, fn's non-zero value, or -ENOENT when dir is
 * not a directory of m. */
TM_API int tm_members_list(const struct tm_members *m, const char *dir, tm_members_fn fn,
                           void *arg);

/* Open a cursor on the member at path of m (t: the trace m was opened
 * on). The first open of a member reads all of it once, verifying its
 * CRC-32 and both sizes against the central directory and keeping restart
 * points (every MiB or so of a deflate member) for random access; m keeps
 * the last few members so verified, and the last few that failed, whose
 * error a later open returns without reading them again. No byte of a
 * member is served before it passed.
 *
 * Returns 0 and sets *out. Returns -ENOENT when path is not a member of m,
 * -EIO when the member is damaged (err names the archive, the member and
 * the archive offset; the same line goes to t's errors view), -ENOTSUP for
 * an encrypted member or one of a method other than stored and deflate,
 * -ENOMEM. Thread-safe with respect to t and m. */
TM_API int tm_member_open(struct tm_trace *t, struct tm_members *m, const char *path,
                          struct tm_member **out, struct tm_err *err);

/* The member's size in bytes (verified by the open). Never fails. */
TM_API uint64_t tm_member_size(const struct tm_member *f);

/* Read up to n bytes of f's member at offset off into buf: returns the
 * count (short only at the end), 0 at or past the end, or a negative errno
 * (-EIO with err naming the archive and offset, -ENOMEM). A read far from
 * the last one restarts at the restart point before off: its cost is
 * bounded by their spacing, whatever the member's size, and so is the
 * cursor's memory. One thread at a time per cursor. */
TM_API ssize_t tm_member_pread(struct tm_member *f, void *buf, size_t n, uint64_t off,
                               struct tm_err *err);

/* Close f. NULL is a no-op. */
TM_API void tm_member_close(struct tm_member *f);

/* ---- checking ---- */

/* The full check of tracetool verify: decode all of t, verify the
 * container's checksums, and if an index exists check that it matches.
 * progress (may be NULL) is called with arg as for tm_trace_index.
 * Returns 0 or the first error (-EIO with err naming the file and offset).
 * Costs a whole pass over the archive; one call at a time per trace. */
TM_API int tm_trace_verify(struct tm_trace *t, tm_progress_fn progress, void *arg,
                           struct tm_err *err);

#ifdef __cplusplus
}
#endif

#endif
