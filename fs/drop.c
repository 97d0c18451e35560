/* drop: see drop.h. */
#include "drop.h"

#include <pthread.h>
#include <stdatomic.h>

/* Invalidations waiting for the thread; more are not queued (see
 * drop_note). */
#define DROP_QUEUE 64

struct drop_req {
        fuse_ino_t ino;
        uint64_t off, len;
};

static struct {
        pthread_mutex_t mu;
        pthread_cond_t cv;
        struct fuse_session *se;
        _Atomic uint64_t keep; /* 0: not running (read unlocked by drop_note) */
        int stop;
        pthread_t th;
        unsigned head, count;
        struct drop_req q[DROP_QUEUE];
} drop = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

int drop_advance(struct drop_run *r, uint64_t keep, uint64_t off, uint64_t len, uint64_t *from,
                 uint64_t *n)
{
        const uint64_t end = off + len;
        if (!r->started || off > r->next + DROP_JUMP || end + DROP_JUMP < r->next) {
                /* a new run: what lies before it may be another reader's */
                r->started = 1;
                r->from = r->done = off;
                r->next = end;
                return 0;
        }
        if (off < r->from && r->done == r->from) /* its first requests came out of order */
                r->from = r->done = off;
        if (end > r->next)
                r->next = end;
        if (!keep || r->next - r->done <= keep + keep / 8)
                return 0;
        *from = r->done;
        *n = r->next - keep - r->done;
        r->done = r->next - keep;
        return 1;
}

static void *drop_main(void *arg)
{
        (void)arg;
        pthread_mutex_lock(&drop.mu);
        for (;;) {
                while (!drop.stop && drop.count == 0)
                        pthread_cond_wait(&drop.cv, &drop.mu);
                if (drop.stop)
                        break;
                const struct drop_req rq = drop.q[drop.head];
                drop.head = (drop.head + 1) % DROP_QUEUE;
                drop.count--;
                pthread_mutex_unlock(&drop.mu);
                /* -ENOENT when the kernel has forgotten the node: nothing
                 * of it is cached then */
                (void)fuse_lowlevel_notify_inval_inode(drop.se, rq.ino, (off_t)rq.off,
                                                       (off_t)rq.len);
                pthread_mutex_lock(&drop.mu);
        }
        pthread_mutex_unlock(&drop.mu);
        return NULL;
}

uint64_t drop_keep(uint64_t keep, uint64_t readahead)
{
        if (!keep)
                return 0;
        if (keep < DROP_KEEP_MIN)
                keep = DROP_KEEP_MIN;
        return keep < 4 * readahead ? 4 * readahead : keep;
}

int drop_start(struct fuse_session *se, uint64_t keep, uint64_t readahead)
{
        keep = drop_keep(keep, readahead);
        if (!keep)
                return 0;
        drop.se = se;
        drop.stop = 0;
        drop.head = drop.count = 0;
        int rc = pthread_create(&drop.th, NULL, drop_main, NULL);
        if (rc != 0)
                return -rc;
        (void)pthread_setname_np(drop.th, "tm-drop");
        atomic_store(&drop.keep, keep);
        return 0;
}

void drop_stop(void)
{
        pthread_mutex_lock(&drop.mu);
        const int running = atomic_exchange(&drop.keep, 0) != 0;
        drop.stop = 1;
        pthread_cond_signal(&drop.cv);
        pthread_mutex_unlock(&drop.mu);
        if (running)
                pthread_join(drop.th, NULL);
}

void drop_note(struct drop_run *r, fuse_ino_t ino, uint64_t off, uint64_t len)
{
        /* off (--drop-behind 0): every read would take the lock for nothing */
        const uint64_t keep = atomic_load_explicit(&drop.keep, memory_order_relaxed);
        if (!keep)
                return;
        uint64_t from, n;
        pthread_mutex_lock(&drop.mu);
        if (drop_advance(r, keep, off, len, &from, &n) && drop.count < DROP_QUEUE) {
                drop.q[(drop.head + drop.count) % DROP_QUEUE] =
                    (struct drop_req){.ino = ino, .off = from, .len = n};
                drop.count++;
                pthread_cond_signal(&drop.cv);
        }
        pthread_mutex_unlock(&drop.mu);
}
