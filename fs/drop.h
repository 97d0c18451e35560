/* drop: drop-behind for sequential readers of the mount.
 *
 * Through the kernel page cache, every page a reader has read stays
 * cached until memory runs short: one `cat` of a 9.5 GB ascii view (10^9
 * references) fills 9.5 GB of memory. Filling that much memory is what
 * costs there, not the decoding. On the 2-vCPU project VM, memory the
 * guest has not used lately is backed again by the host page by page, and
 * the kernel's copies of FUSE replies into those fresh pages took 69% of
 * all samples: a cold `cat` of that view took 12-16 s against 3.4 s for
 * `zstdcat` of the same text. On a machine without that cost the kernel
 * instead evicts other users' cached files to make room.
 *
 * So once an open file has been read sequentially for more than `keep`
 * bytes, the pages more than `keep` bytes behind its reader are invalidated
 * (FUSE_NOTIFY_INVAL_INODE), and the kernel reuses that memory for the
 * pages ahead: the same `cat` then took 3.6-5.3 s. Files shorter than keep,
 * the last keep bytes of a stream, and anything before where a sequential
 * run began stay cached as before. A thread of this module sends the
 * invalidations, so that no FUSE thread waits on a page lock the
 * invalidation needs (the page may belong to a read another FUSE thread
 * is answering). */
#ifndef TMFS_DROP_H
#define TMFS_DROP_H

#include <stdint.h>

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

/* Default keep, MiB: a 10^8-reference ascii view (953 MB) stays cached
 * whole, so that re-reading it comes from memory. */
#define DROP_KEEP_MB_DEFAULT 1024

/* One open file's sequential run, kept by its caller; zeroed means none
 * yet. */
struct drop_run {
        uint64_t from; /* where the run began: the lowest offset it read */
        uint64_t next; /* end of the furthest read of the run */
        uint64_t done; /* bytes before this are dropped or not the run's */
        int started;
};

/* Reads further than this from the end of a run start a new one (the
 * kernel's readahead requests may arrive out of order, ~1 MiB apart). */
#define DROP_JUMP (16u << 20)

/* The pure part of drop_note: account a read of len bytes at off in r.
 * Returns 1 and the range [*from, *from + *n) to invalidate when the run
 * has reached more than keep + keep/8 bytes past r->done (which then moves
 * to the range's end: ranges are invalidated a keep/8 at a time), else 0.
 * keep 0: never. */
int drop_advance(struct drop_run *r, uint64_t keep, uint64_t off, uint64_t len, uint64_t *from,
                 uint64_t *n);

/* What is kept is counted back from the furthest request the daemon has
 * seen, and the kernel's readahead sends those ahead of the reader (by up
 * to twice the readahead window): keep is at least this, and at least four
 * times the mount's readahead. */
#define DROP_KEEP_MIN (16u << 20)

/* The keep drop_start uses for a request of keep bytes (0: never drop) on a
 * mount whose kernel readahead is readahead bytes. */
uint64_t drop_keep(uint64_t keep, uint64_t readahead);

/* Start the drop-behind thread for session se (mounted), keeping keep
 * bytes behind each sequential reader (see drop_keep). keep 0: drop_note
 * does nothing and no thread starts. Returns 0, or -errno when the thread
 * cannot start (the daemon then serves without dropping). */
int drop_start(struct fuse_session *se, uint64_t keep, uint64_t readahead);

/* Stop the thread (pending invalidations are discarded). Call before the
 * session is unmounted: the thread writes to its /dev/fuse descriptor. */
void drop_stop(void);

/* A read of len bytes at off of node ino, by the open file whose run is
 * r: queues the invalidation of what is now more than keep bytes behind
 * (when the queue is full, that range stays cached: dropping is only
 * advice). Thread-safe: r is updated under this module's lock. Never
 * blocks on the kernel. */
void drop_note(struct drop_run *r, fuse_ino_t ino, uint64_t off, uint64_t len);

#endif
