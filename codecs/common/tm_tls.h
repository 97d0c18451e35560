/* Per-thread buffers made on first use.
 *
 * A static _Thread_local array is part of every thread's static TLS block,
 * which the C library zeroes when it makes the thread: each FUSE worker,
 * read-ahead worker and probe thread would touch the sum of every such
 * array whether or not it ever decodes (about 250 KB a thread), and keep
 * it while it idles. A buffer of a tm_tls slot is instead allocated the
 * first time a thread asks for it, and freed when the thread ends or lets
 * go of its buffers (tm_tls_release: the daemon's FUSE threads, after each
 * read, so that an idle worker holds none); threads that never ask never
 * pay. A buffer is scratch: its bytes are undefined when it is made.
 *
 *   static struct tm_tls refs_slot = TM_TLS_INIT(4096 * sizeof(struct tm_ref));
 *   struct tm_ref *refs = tm_tls_get(&refs_slot);  // NULL: out of memory
 *
 * A slot serves up to TM_TLS_SLOTS slots in all (a fixed table of
 * pointers a thread, so that the fast path is one thread-local load). */
#ifndef TM_TLS_H
#define TM_TLS_H

#include <stddef.h>

#define TM_TLS_SLOTS 16 /* slots of the whole program, at most */

struct tm_tls {
        size_t size; /* bytes of each thread's buffer */
        int id;      /* 0: not yet numbered; else the slot's index + 1 */
};

#define TM_TLS_INIT(bytes)                                                                         \
        {                                                                                          \
                .size = (bytes), .id = 0                                                           \
        }

/* The calling thread's buffer of slot s (s->size bytes, undefined when
 * made, then as the thread left it), or NULL when it cannot be allocated (or
 * more than TM_TLS_SLOTS slots are used: a programming error, also
 * reported on stderr once). */
void *tm_tls_slow(struct tm_tls *s);

/* Free the calling thread's buffers (the next tm_tls_get makes them
 * again). */
void tm_tls_release(void);

extern _Thread_local void *tm_tls_bufs[TM_TLS_SLOTS];

static inline void *tm_tls_get(struct tm_tls *s)
{
        int id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);
        if (__builtin_expect(id > 0, 1) && tm_tls_bufs[id - 1])
                return tm_tls_bufs[id - 1];
        return tm_tls_slow(s);
}

#endif
