/* node: a mount path -> what it stands for, and the trace cache.
 *
 * A path under the mount resolves to one of
 *   NODE_PASS   a real entry of the source tree (dir, file, symlink, ...)
 *               that is not a trace: shown as is;
 *   NODE_TRACE  a regular source file recognised as a trace: a directory;
 *   NODE_VDIR   a directory inside a trace (e.g. "streams");
 *   NODE_VFILE  a view file inside a trace (e.g. "ascii", "streams/read");
 *   NODE_MDIR   "members" of a zip trace, or a directory inside it;
 *   NODE_MFILE  a member of a zip trace's archive, "members/<path>".
 * A zip trace's "members" is listed from the archive's directory at its
 * first lookup (not at the trace's), once per cache entry.
 *
 * Every source entry is reached from a descriptor of the source directory
 * opened at node_init, walked down with no symlink followed in any
 * component (walk.h), never by a path string: a user who swaps a directory
 * of theirs for a symlink makes the walk fail, not the daemon read or
 * write where it points. What is opened is then checked against what was
 * resolved (device and inode): another object is -ESTALE.
 *
 * Traces are probed lazily, when a path naming them is resolved, and the
 * result is cached per source path together with the file's identity
 * (dev, ino, size, mtime). A resolve that sees a different identity drops
 * the old entry (holders keep their reference until they put it) and probes
 * again, so archives added, removed or replaced while mounted show up. The
 * struct tm_trace of an entry is opened on first need and shared by all
 * threads. The number of cached entries is bounded: unreferenced entries
 * are evicted least recently used first.
 *
 * Threads: every function may be called from any FUSE worker thread. */
#ifndef TMFS_NODE_H
#define TMFS_NODE_H

#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "views/view.h"

enum node_kind { NODE_PASS, NODE_TRACE, NODE_VDIR, NODE_VFILE, NODE_MDIR, NODE_MFILE };

/* The directory of a zip trace's other members (tm_members_open). */
#define NODE_MEMBERS "members"
#define NODE_MEMBERS_LEN 7

/* One cached source file: its identity, probe result and opened trace. */
struct node_trace;

struct node_res {
        enum node_kind kind;
        struct stat st;         /* lstat of the source entry (the archive for traces) */
        char src[PATH_MAX];     /* absolute source path (the archive for traces), for messages */
        const char *rel;        /* src below the source root ("" for the root), in src */
        char view[PATH_MAX];    /* view path inside the trace, "" for NODE_TRACE */
        struct node_trace *tr;  /* referenced entry for TRACE/VDIR/VFILE, else NULL */
        struct tm_trace *t;     /* tr's opened trace for VDIR/VFILE, else NULL */
        int view_idx;           /* VFILE: index of view in tm_trace_views(t) */
        struct tm_members *mem; /* MDIR/MFILE: tr's member table (tr's, held by r) */
        const char *member;     /* MDIR/MFILE: the path in mem (in view) */
        uint64_t msize;         /* MFILE: the member's size */
};

/* Set up the cache for the source directory src (an absolute path without
 * a trailing slash) and the trace options every tm_trace_open gets (copied;
 * the strings must outlive the cache). Returns 0 or -ENOMEM. */
int node_init(const char *src, const struct tm_trace_opts *o);

/* Close every cached trace. No resolve may be running. */
void node_fini(void);

/* Resolve path (absolute, as FUSE gives it) into r. For trace kinds it
 * takes a reference on r->tr, which the caller gives back with
 * node_res_put. Returns 0, -ENOENT, -ENOTDIR, -ENAMETOOLONG, -EIO when the
 * trace cannot be opened, -ESTALE when the archive was replaced meanwhile,
 * or another negative errno of the walk (node_open_entry). */
int node_resolve(const char *path, struct node_res *r);

/* Open the source entry r names (resolved, any kind: the archive for a
 * trace's nodes) with open flags as walk_open takes them (O_PATH,
 * O_RDONLY | O_DIRECTORY, ...), walked to below the source root. Returns
 * the descriptor; -ESTALE when the object there is not the one resolved
 * (r->st's device and inode); else the walk's error as node_resolve
 * gives it (a failing source: -EIO, logged). */
int node_open_entry(const struct node_res *r, int flags);

/* statvfs of the source directory (its descriptor). 0 or a negative
 * errno (-EIO, logged, when the source fails). */
int node_statvfs(struct statvfs *sv);

/* Drop the reference r holds (if any). */
void node_res_put(struct node_res *r);

/* Bounds of the traces kept open (tracemount's --max-traces and
 * --trace-memory): the least recently used traces nobody holds are
 * closed while more than max_open are open or they hold more than
 * max_bytes (tm_trace_memory, weighed when a trace is let go); the next
 * access opens one again from its index file. */
#define NODE_OPEN_DEFAULT 64
#define NODE_OPEN_MB_DEFAULT 32
void node_set_bounds(unsigned max_open, uint64_t max_bytes);

/* Take one more reference on tr (for an open file handle). */
void node_trace_get(struct node_trace *tr);
void node_trace_put(struct node_trace *tr);

/* Open tr's trace if not yet open (once, whatever the threads) and set *t:
 * from a descriptor of the archive walked to below the source root and
 * its directory's (for index files beside it), the archive checked to be
 * the object tr was made for. A failure is remembered and logged once.
 * Returns 0, -ESTALE (another file is at the path now; not remembered) or
 * -EIO. */
int node_trace_open(struct node_trace *tr, struct tm_trace **t);

/* fn(mpath) is called when a resolve finds the archive shown at mount
 * path mpath ("/dir/x.zst") another file or another version than the one
 * cached (dev, ino, size or mtime changed), and by node_trace_changed:
 * the kernel's attributes and pages below mpath are the old version's.
 * Called from the resolving thread, with no lock of this module held.
 * Set it before the session starts; NULL: nothing is called. */
void node_set_change_hook(void (*fn)(const char *mpath));

/* After a failed read of tr's trace: is the archive at tr's path another
 * file or version than tr was made for (or gone)? 1 (and the change hook
 * is called), else 0. One walk and fstat. */
int node_trace_changed(struct node_trace *tr);

/* Whether kernel-cached pages of view number idx (index in tm_trace_views)
 * can be kept on open: 0 the first time it is asked for this entry (the
 * archive is new or was replaced, so old pages must go), 1 afterwards. */
int node_trace_keep_cache(struct node_trace *tr, unsigned idx);

/* Log err's message once per entry and message (a repeat of the last
 * logged message of tr is not logged again), naming the archive if the
 * message does not. */
void node_trace_log(struct node_trace *tr, const struct tm_err *err);
/* Once per trace: log why its index stays in memory only (the cache's
 * reason, tm_trace_index_note), when the index is in memory only. */
void node_trace_note(struct node_trace *tr, struct tm_trace *t);

/* Is name (one path component) an index file, or one being written, that
 * listings hide? */
int node_hidden_name(const char *name);

/* The index of view in tm_trace_views(t), or -1. */
int node_view_index(struct tm_trace *t, const char *view);

/* Is view ("" for the trace's own directory) a directory of t's views,
 * i.e. a proper prefix of some view path followed by '/'? 1 or 0. */
int node_view_is_dir(struct tm_trace *t, const char *view);

#endif
