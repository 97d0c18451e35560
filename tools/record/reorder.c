/* reorder: reorder.h has the contract. */
#include "reorder.h"

#include <errno.h>
#include <stdlib.h>

int reorder_init(struct reorder *o, size_t max, reorder_emit_fn emit, void *arg)
{
        *o = (struct reorder){.next = 1, .emit = emit, .arg = arg};
        o->max = REORDER_MIN;
        while (o->max < (max ? max : REORDER_MAX))
                o->max *= 2;
        o->cap = REORDER_MIN;
        o->slot = calloc(o->cap, sizeof *o->slot);
        return o->slot ? 0 : -ENOMEM;
}

static int grow(struct reorder *o)
{
        size_t ncap = o->cap * 2;
        struct reorder_rec *ns = calloc(ncap, sizeof *ns);
        if (!ns)
                return -ENOMEM;
        for (size_t i = 0; i < o->cap; i++)
                if (o->slot[i].seq)
                        ns[o->slot[i].seq & (ncap - 1)] = o->slot[i];
        free(o->slot);
        o->slot = ns;
        o->cap = ncap;
        return 0;
}

/* Emit the slot of o->next if it holds that record, then step past it. */
static int step(struct reorder *o)
{
        struct reorder_rec *r = &o->slot[o->next & (o->cap - 1)];
        int rc = 0;
        if (r->seq == o->next) {
                rc = o->emit(o->arg, r);
                r->seq = 0;
                o->held--;
        }
        o->next++;
        return rc;
}

int reorder_put(struct reorder *o, const struct reorder_rec *r)
{
        uint64_t s = r->seq;
        o->seen++;
        if (s > o->top)
                o->top = s;
        if (s < o->next) {
                o->late++;
                return o->emit(o->arg, r);
        }
        while (s - o->next >= o->cap) {
                if (o->cap < o->max) {
                        int rc = grow(o);
                        if (rc < 0)
                                return rc;
                        continue;
                }
                if (o->held == 0) { /* nothing to emit on the way: jump */
                        uint64_t to = s - o->cap + 1;
                        o->passed += to - o->next;
                        o->next = to;
                        break;
                }
                if (o->slot[o->next & (o->cap - 1)].seq != o->next)
                        o->passed++;
                int rc = step(o);
                if (rc < 0)
                        return rc;
        }
        o->slot[s & (o->cap - 1)] = *r;
        if (++o->held > o->max_held)
                o->max_held = o->held;
        while (o->slot[o->next & (o->cap - 1)].seq == o->next) {
                int rc = step(o);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

int reorder_finish(struct reorder *o)
{
        while (o->held) {
                int rc = step(o);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

void reorder_free(struct reorder *o)
{
        free(o->slot);
        o->slot = NULL;
}
