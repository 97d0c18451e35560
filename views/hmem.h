/* hmem: the memory budget of the process's open view files.
 *
 * Each cursor of a view (records.c) and of a zip member (members.c)
 * holds a container reader (a zstd
 * context and a decoded frame of up to TM_ZSTD_VERIFY_MAX bytes, or a
 * gzip window), an input buffer, a batch of records and a line buffer:
 * from a few hundred KiB to several MiB while it is in use. Readahead
 * segments (readahead.c) come on top. Without a bound, 2,000 handles of
 * a daemon held 3.6 GB.
 *
 * A cursor is a user of the budget (struct tm_hmem_user): it counts the
 * bytes it holds after each use, and when the users together hold more
 * than the budget, the least recently used ones that are not in use are
 * parked: their park function frees all they hold and the next read
 * rebuilds it from the last checkpoint (the cost of a seek, bounded by
 * the checkpoint spacing). A user that alone is over the budget parks
 * itself after its read. So, between reads, the bytes held never exceed
 * the budget; during reads they exceed it by at most what the reads in
 * flight hold (at most one cursor per FUSE thread and readahead worker).
 * Readahead segments are taken from the same budget (tm_hmem_take),
 * parking idle users to make room; when there is none, the file reads
 * through its own cursor.
 *
 * Threads: every function may be called from any thread. A user's mu is
 * held by its owner while it uses what it holds; the pool takes it only
 * with trylock, so no lock order can deadlock. */
#ifndef TM_HMEM_H
#define TM_HMEM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* The default budget: tracemount's --handle-memory. */
#define TM_HMEM_DEFAULT (256ull << 20)

struct tm_hmem_user {
        pthread_mutex_t mu;               /* held while the owner uses its memory */
        uint64_t bytes;                   /* counted in the pool; under the pool's lock */
        struct tm_hmem_user *prev, *next; /* holders, least recent first */
        int listed;
        /* Free what the owner holds (mu held, the pool's lock held: it
         * may not call into the pool). */
        void (*park)(struct tm_hmem_user *u);
};

/* The budget in bytes (0: TM_HMEM_DEFAULT). It applies from the next use
 * on; users over it are parked at their next settle. */
void tm_hmem_set_budget(uint64_t bytes);
uint64_t tm_hmem_budget(void);

/* Bytes held now: users' and taken. */
uint64_t tm_hmem_in_use(void);

/* Users parked by the pool since the start (tests). */
uint64_t tm_hmem_parks(void);

/* Set up u (holding nothing) with its park function. */
void tm_hmem_join(struct tm_hmem_user *u, void (*park)(struct tm_hmem_user *u));

/* Forget u, before its owner frees what it holds (from then on no other
 * thread parks it); the owner calls tm_hmem_trim once it has. */
void tm_hmem_leave(struct tm_hmem_user *u);

/* Before a use: lock u->mu. */
void tm_hmem_begin(struct tm_hmem_user *u);

/* After a use: u now holds bytes; park the least recently used idle
 * users while the pool is over its budget, then u itself if still over;
 * unlock u->mu. Returns 1 when u was parked. */
int tm_hmem_end(struct tm_hmem_user *u, uint64_t bytes);

/* Take n bytes for memory no user holds (readahead segments), parking
 * idle users to make room. 0, or -1 when even that leaves no room. */
int tm_hmem_take(uint64_t n);

/* Give back what tm_hmem_take took. */
void tm_hmem_give(uint64_t n);

/* Return freed heap memory to the system (malloc_trim), at most once a
 * second, or 50 ms after the last trim when nothing is held any more:
 * glibc keeps what many small frees leave in its arenas. A trim asked for
 * before it is due runs when it is, on a thread of its own (made at the
 * first such request), so the last of a burst of closes is trimmed too. */
void tm_hmem_trim(void);

#endif
