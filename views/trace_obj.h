/* trace_obj: the fields of struct tm_trace and what the modules that
 * serve a trace share about it: its errors and notes (trace_obj.c), the
 * end of a cursor's read. trace.c owns the life cycle (open, the index),
 * records.c its records' views, vfile.c the cursors' front; each includes
 * this header, none another's, so no two of them include each other. */
#ifndef TM_TRACE_OBJ_H
#define TM_TRACE_OBJ_H

#include <pthread.h>
#include <sys/stat.h>

#include "../codecs/record/record.h"
#include "../codecs/containers/container.h"
#include "index.h"
#include "view.h"

#define TM_VIEW_NAME_MAX 32

enum tm_view_kind {
        TM_VIEW_ASCII,
        TM_VIEW_BINARY,
        TM_VIEW_RAW,
        TM_VIEW_STATS,  /* a text made once: stats, schema, a byte section */
        TM_VIEW_TABLE,  /* a family's table: made once from the records, so a damaged
                         * trace's ends with the damage as theirs do */
        TM_VIEW_JSON,   /* stats.json: a text made once, as stats */
        TM_VIEW_ERRORS, /* errors: the last error, read as it was at open */
};

/* Bytes a view of a damaged trace has past its intact prefix: reading
 * them fails with the damage (docs/damage.md). */
#define TM_DAMAGE_MARK 1

/* Side files passed over that the stats view lists. */
#define TM_SIDE_NOTES_MAX 4

enum { TM_IX_NONE, TM_IX_BUILDING, TM_IX_READY, TM_IX_FAILED };

struct tm_trace {
        char *path; /* as given, for messages */
        char *abs;  /* absolute, for index file names */
        int fd;
        int dirfd;    /* the archive's directory: index files beside it are named in it, or -1 */
        int cache_fd; /* tm_trace_opts.cache_dir_fd's copy, or -1: trace_cache_open */
        int cache_err; /* tm_trace_opts.cache_dir_fd when negative (none opened), or 0 */
        struct stat sb;               /* of the archive at open */
        struct tm_cont *cont;         /* replaced only while no index and no reader exist */
        const char *cont_name;        /* static: usable by any thread at any time */
        struct tm_records *rt;         /* its records (records.h) */
        uint8_t head[TM_RHEAD_MIN];
        size_t headn;
        char *cache_dir;
        int no_index_beside, no_save;
        int unverified_prefix; /* tm_trace_opts */
        int trust_group_index; /* tm_trace_opts */
        int trust_group_dtd;   /* tm_trace_opts: judges the DTD at every codec open */
        int ix_shared_refused; /* the cache's shared file is an untrusted user's */
        /* The index key's fingerprint (trace_key), taken once for the
         * archive version fp_sb (sb then) describes: before an index pass,
         * so that the file saved after it never claims bytes read later */
        uint64_t fp;
        int fp_rc;    /* 0, or why it could not be read */
        int fp_taken; /* fp and fp_rc are fp_sb's */
        struct stat fp_sb;
        uint64_t ckpt_refs;

        const char **views; /* the trace's views and ours (trace_views_make) */
        unsigned views_n, views_open;

        pthread_mutex_t mu;
        pthread_cond_t cv;
        int ix_state;         /* TM_IX_*, under mu */
        struct tm_err ix_err; /* the failure, when TM_IX_FAILED */
        int ix_fd;            /* the loaded index file (container windows), or -1 */
        char *ix_path;
        char *ix_note; /* why the index is in memory only, or NULL */
        enum tm_index_source ix_source;
        char *json; /* the stats.json view, made once under mu */
        size_t json_len;
        int damaged;          /* the index covers the intact prefix only */
        unsigned nvfiles;     /* cursors open or being opened, sizes being computed (atomic) */
        struct tm_err damage; /* what ended it (set once, before TM_IX_READY) */

        pthread_mutex_t err_mu;
        struct tm_err last_err; /* the errors view, under err_mu */

        /* Side files passed over (docs/side-files.md): a DTD beside the
         * archive (at open), index files (by the index pass, before the
         * stats are made); the stats view lists them. Under err_mu. */
        struct tm_err side[TM_SIDE_NOTES_MAX];
        unsigned nside;
};

/* Is view one that every trace has, made by this layer (stats.json,
 * errors)? Then 1 and its kind. */
int tm_trace_text_view(const char *view, enum tm_view_kind *kind);

/* tm_trace_index, but a damaged trace's index of its intact prefix counts
 * as ready (tm_trace_index itself returns the damage). */
int tm_trace_index_ready(struct tm_trace *t, struct tm_err *err);

/* Make sure the index is ready for view's size or cursor
 * (tm_records_view_indexed): a name the index adds is looked up, the
 * index pass run; for a trace whose codec's open failed, the pass runs
 * and fails with it (the view's size or cursor gives that error).
 * 0, or the index pass's error (err filled). */
int tm_trace_view_ready(struct tm_trace *t, const char *view, struct tm_err *err);

/* tm_trace_view_size without the stand-in size for an archive whose index
 * cannot be built: the error instead (for tm_vfile_open). */
int tm_trace_view_size_strict(struct tm_trace *t, const char *view, uint64_t *size,
                              struct tm_err *err);

/* Keep err as the trace's last error (the errors view). */
void tm_trace_note_err(struct tm_trace *t, const struct tm_err *err);

/* A side file passed over (err names it and why): kept for the stats view
 * (the first TM_SIDE_NOTES_MAX) and as the last error (the errors view). */
void tm_trace_note_side(struct tm_trace *t, const struct tm_err *err);

/* The side files passed over, a message a line, into dst (cap bytes,
 * NUL-terminated); their count. */
unsigned tm_trace_side_lines(struct tm_trace *t, char *dst, size_t cap);

/* Insert a "side file" line for each side file passed over at the end of
 * the stats text's first paragraph (text: len bytes of cap). Returns the
 * new length. */
size_t tm_trace_stats_side(struct tm_trace *t, char *text, size_t len, size_t cap);

/* The errors view's text now, in a new buffer (the caller frees it);
 * NULL on out of memory. */
char *tm_trace_errors_text(struct tm_trace *t, size_t *len);

/* The stats.json text (made on first call; the index must be ready). */
int tm_trace_json_text(struct tm_trace *t, const char **text, size_t *len, struct tm_err *err);

/* The stats view text (made on first call; the index must be ready). */
int tm_trace_stats_text(struct tm_trace *t, const char **text, size_t *len, struct tm_err *err);

/* Prefix err with the archive path when the message names a raw offset
 * only (decoder messages; container messages carry the path already).
 * Returns rc. */
int tm_trace_err_path(const struct tm_trace *t, int rc, struct tm_err *err);

/* The end of a cursor's read of n bytes at off that gave got: a short
 * read or an error leaves the cursor invalid (the next read starts over
 * from a checkpoint and meets the error again), 0 bytes is "view ends
 * early" (the sizes said there were more), an error gets the archive's
 * path; *pos moves past the bytes returned. Returns got or the error. */
ssize_t tm_trace_read_done(struct tm_trace *t, ssize_t got, size_t n, uint64_t off,
                           int *valid, uint64_t *pos, struct tm_err *err);

/* Is the archive whose fstat is now the version whose fstat was then
 * (the same size, modification and change times)? */
int tm_trace_same_version(const struct stat *now, const struct stat *then);

/* Before a read of a view of t at off: 0 while the archive is as t was
 * opened or last indexed on (size, mtime, ctime of t->sb), else -EIO
 * "the archive changed" (kept as the last error): no byte decoded before
 * the change (a carry, a read-ahead segment) is served after it, and the
 * end of the old version is not taken for the end of the view
 * (docs/damage.md, "Rewritten under readers"). */
int tm_trace_read_check(struct tm_trace *t, uint64_t off, struct tm_err *err);

/* Make f a readahead worker's cursor: it never starts a readahead of its
 * own, and it renders through a small buffer of its own before copying to
 * the caller's (the memory it fills is read on another core next; see
 * vfile.c). Returns 0 or -ENOMEM. */
int tm_vfile_worker(struct tm_vfile *f);

#endif
