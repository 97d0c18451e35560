/* The tracemount library API: an archive seen as a directory of views.
 *
 * This is everything fs/ (the FUSE daemon) and tools/ (tracetool) use.
 * Below it: containers (codecs/container.h), trace codecs
 * (codecs/trace.h) and the checkpoint index (views/index.h).
 *
 * Views of a trace, as paths relative to the trace's directory:
 *   ascii            din text: "<type> <hex addr>\n", lowercase, no 0x
 *   binary           struct tm_binary_ref records (views/tm_binary.h)
 *   raw              the native encoding, decompressed
 *   stats            a text report (counts by type, refs/byte, ranges,
 *                    run-length and offset histograms)
 *   streams/<type>   din text of one reference type, e.g. streams/read
 *
 * Cost model. tm_trace_open reads a few KiB and decodes nothing else.
 * Sizes and reads need the index: tm_trace_index loads it (validated
 * against the archive's size, mtime and inode) or builds it with one pass
 * and saves it atomically beside the archive when that directory is
 * writable, else in the cache directory. After that a read at any offset of
 * any view costs time bounded independently of the trace's length.
 *
 * Threads: a struct tm_trace may be shared by threads; tm_trace_index
 * builds once however many threads call it. A struct tm_vfile is one
 * cursor: one thread at a time (the caller serialises).
 *
 * Memory: bounded whatever the trace size (the index in memory is capped;
 * each vfile holds one container cursor and small buffers). */
#ifndef TM_VIEW_H
#define TM_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "../codecs/common/tm_err.h"

struct tm_trace;
struct tm_vfile;
struct tm_ra;

struct tm_trace_opts {
        /* Where to keep indexes when the archive's directory is not
         * writable. NULL: $XDG_CACHE_HOME/tracemount, or
         * $HOME/.cache/tracemount. */
        const char *cache_dir;
        /* 1: never write an index file beside the archive (always use
         * cache_dir). */
        int no_index_beside;
        /* 1: also believe index files that members of a group-shared
         * cache directory wrote for archives they cannot change
         * (views/ixfile.h, docs/shared-cache.md). */
        int trust_group_index;
        /* 1: keep the index in memory only. */
        int no_save;
        /* References between checkpoints to start with (0: the environment
         * variable TM_CKPT_REFS if set, else 64Ki). Smaller means faster
         * seeks and a bigger index; tests use tiny values. */
        uint64_t ckpt_refs;
};

/* Is path a trace? Opens it, reads the first bytes, decompresses at most
 * TM_PROBE_BYTES of raw data and asks each codec. Returns 1 (and, if not
 * NULL, sets *codec_name and *cont_name to static strings), 0 if it is not
 * a trace (including unreadable or empty files), never decodes more. */
int tm_probe_path(const char *path, const char **codec_name, const char **cont_name);

/* Open the trace at path (probes as above). Returns 0, -ENOENT-style
 * errors from open(2), or -EMEDIUMTYPE if the file is not a trace. o may
 * be NULL for defaults. The archive file is kept open until close. */
int tm_trace_open(const char *path, const struct tm_trace_opts *o, struct tm_trace **out,
                  struct tm_err *err);

void tm_trace_close(struct tm_trace *t);

/* Codec and container names ("pdats2", "zstd"). */
const char *tm_trace_codec(const struct tm_trace *t);
const char *tm_trace_container(const struct tm_trace *t);

/* Load or build the index (see above). progress, if not NULL, is called
 * now and then with raw bytes done and the raw total (0 if unknown).
 * Returns 0 or a negative errno; a failed build is remembered, and later
 * calls return the same error without decoding again until the archive
 * changes. */
typedef void (*tm_progress_fn)(void *arg, uint64_t done, uint64_t total);
int tm_trace_index(struct tm_trace *t, tm_progress_fn progress, void *arg, struct tm_err *err);

/* Path of the index file in use, or NULL (not built, or memory only). */
const char *tm_trace_index_path(const struct tm_trace *t);

/* Why an index built for t stays in memory only ("index in memory only:
 * <dir or file>: <reason>"), or NULL (saved, loaded, or not asked to
 * save). */
const char *tm_trace_index_note(const struct tm_trace *t);

/* How this struct tm_trace got its index: not yet, loaded from an index
 * file (nothing decoded), or built by decoding the whole archive. Lets
 * callers and tests tell a cache hit from a rebuild. */
enum tm_index_source { TM_INDEX_NONE, TM_INDEX_LOADED, TM_INDEX_BUILT };
enum tm_index_source tm_trace_index_source(const struct tm_trace *t);

/* The views of this trace, a NULL-terminated array of paths relative to
 * the trace directory ("ascii", ..., "streams/read", ...). Known without
 * the index, but for those the index adds: a heap trace's
 * streams/thread/<id>, listed once the index is built. */
const char *const *tm_trace_views(const struct tm_trace *t);

/* The name resolver every lookup of a view by name goes through (the
 * mount's, tm_vfile_open's, tm_trace_view_size's): when view (a view, or
 * a directory of views such as "streams/thread") could be one the index
 * adds and the index is not built yet, build it, so that
 * tm_trace_views(t) then lists view if the trace has it. Returns 0 or the
 * index pass's error (the list is then what it was). */
int tm_trace_view_lookup(struct tm_trace *t, const char *view);

/* Exact size in bytes of a view; builds the index if needed. -ENOENT for
 * an unknown view. */
int tm_trace_view_size(struct tm_trace *t, const char *view, uint64_t *size, struct tm_err *err);

/* Open a cursor on a view; builds the index if needed. */
int tm_vfile_open(struct tm_trace *t, const char *view, struct tm_vfile **out, struct tm_err *err);

/* Read up to n bytes at offset off. Returns the count (n unless the view
 * ends first, or fewer when a corrupt record follows the bytes returned:
 * the next read, at the following offset, returns the error), 0 at or
 * past the end, or a negative errno (-EIO with a message naming the file
 * and offset on corrupt input). An error leaves the cursor usable for any
 * other offset. Sequential reads continue from the cursor without seeking;
 * after a few of them, `ascii` and `binary` are decoded ahead in parallel
 * (threads: $TM_READ_THREADS, 0 turns it off; default CPUs - 1). */
ssize_t tm_vfile_pread(struct tm_vfile *f, void *buf, size_t n, uint64_t off, struct tm_err *err);

/* Bytes of a view where they lie in a decoder's buffers, for a reply that
 * sends them without copying them first (the FUSE daemon's reads). */
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
 * needed here, as for tm_vfile_pread; tm_vfile_unpeek needs none. */
ssize_t tm_vfile_peek(struct tm_vfile *f, size_t n, uint64_t off, struct tm_vspan *sp);

/* Give back the bytes sp holds (no-op after a -1 from tm_vfile_peek). Safe
 * from any thread, concurrently with any call on the vfile; the vfile's
 * tm_vfile_close waits for it. */
void tm_vfile_unpeek(struct tm_vspan *sp);

/* 1 if the view's bytes may change while it is open (errors): serve it
 * uncached, each open seeing the text of that moment. */
int tm_vfile_volatile(const struct tm_vfile *f);

void tm_vfile_close(struct tm_vfile *f);

/* Full check of an archive for tracetool verify: decodes everything,
 * verifies container checksums, and if an index exists checks that it
 * matches. Returns 0 or the first error. */
int tm_trace_verify(struct tm_trace *t, tm_progress_fn progress, void *arg, struct tm_err *err);

#endif
