/* reorder: a recorder's records back in the order the calls took effect.
 *
 * libtmrecord.so numbers every record from one sequence shared by the
 * program's threads (rec_wire.h: 1, 2, ...; each number taken once, by
 * one record), but the records reach the pipe in the order the threads'
 * buffers were flushed. reorder_put takes them in that arrival order and
 * hands them to emit in sequence order: record s is emitted once s - 1 has
 * been (a ring indexed by the number; O(1) a record).
 *
 * Memory is bounded: the ring starts at REORDER_MIN slots and doubles up to
 * max (REORDER_MAX by default; REORDER_REC_BYTES a slot). A record more
 * than max numbers ahead of the next one to emit means a number is late by
 * more than the window (a thread held a record that long, or it was lost):
 * the window then moves on (the numbers it passes are counted in passed)
 * instead of growing, and a record that arrives behind it is emitted at
 * once, in arrival order (counted in late). The recorder flushes every
 * thread's buffer whenever one fills (preload.c), so in practice the window
 * holds a few buffers' worth of records. */
#ifndef TM_REORDER_H
#define TM_REORDER_H

#include <stddef.h>
#include <stdint.h>

#define REORDER_MIN 4096u
#define REORDER_MAX (1u << 20)

struct reorder_rec {
        uint64_t seq; /* 0: an empty slot */
        uint64_t size, addr, new_addr, time;
        uint32_t thread;
        uint8_t kind; /* enum tm_heap_kind */
};
#define REORDER_REC_BYTES sizeof(struct reorder_rec)

/* Receives the records in order; a negative return stops reorder_put /
 * reorder_finish with that value. */
typedef int (*reorder_emit_fn)(void *arg, const struct reorder_rec *r);

struct reorder {
        struct reorder_rec *slot;
        size_t cap, max; /* ring slots now (a power of two), at most */
        uint64_t next;   /* the next number to emit */
        uint64_t held;   /* records in the ring */
        uint64_t seen;   /* records put */
        uint64_t top;    /* the largest number put */
        uint64_t late;   /* records emitted in arrival order: behind the window */
        uint64_t passed; /* numbers the window moved past without their record */
        uint64_t max_held;
        reorder_emit_fn emit;
        void *arg;
};

/* Set o up with a window of at most max records (0: REORDER_MAX; rounded
 * up to a power of two). Returns 0 or -ENOMEM. */
int reorder_init(struct reorder *o, size_t max, reorder_emit_fn emit, void *arg);

/* One record in arrival order. Returns 0, emit's error, or -ENOMEM. */
int reorder_put(struct reorder *o, const struct reorder_rec *r);

/* The end of the input: emits what the ring holds, in order (numbers never
 * seen are skipped). Returns 0 or emit's error. */
int reorder_finish(struct reorder *o);

/* Numbers up to top never seen: records lost on the way (a thread's
 * buffer at a crash) or still to come. Valid after reorder_finish. */
static inline uint64_t reorder_missing(const struct reorder *o)
{
        return o->top > o->seen ? o->top - o->seen : 0;
}

void reorder_free(struct reorder *o);

#endif
