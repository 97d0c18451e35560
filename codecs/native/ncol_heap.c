/* ncol_heap: the allocator model of schema 2's method 5 (ncol_heap.h). */
#include "ncol_heap.h"
#include "../common/tm_huge.h"
#include "ncol_marks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Addresses ranked by the time of their last event of one sort: a mark
 * at each address's time among [1..n]. */
struct order {
        struct ncol_marks k;
        uint64_t *at; /* the address at each time */
};

/* An address of the block (one cache line's part, for the lookup). */
struct slot {
        uint64_t key;
        uint32_t time; /* in live (an allocation's) or gone (a free's); 0: an empty slot */
        uint16_t cls;  /* its size's class; NCOL_HEAP_CLASSES: not known */
        uint16_t dead;
};

struct ncol_heap {
        struct slot *slot; /* every address of the block, linear probing */
        void *slab;        /* live.at, gone.at, slot and its scratch, on huge pages */
        /* slots in use (hcap), its most this block (bound), allocated
         * (hmax, and hmax / 4 + 1 of scratch after them); used are taken */
        size_t hcap, bound, hmax, used, n;
        struct order live, gone;
        uint64_t stack[NCOL_HEAP_CLASSES][NCOL_HEAP_DEPTH]; /* [0] the most recent */
        uint8_t depth[NCOL_HEAP_CLASSES];
        uint64_t class_end[NCOL_HEAP_CLASSES];
        uint64_t bump, carve, last[2], miss[2][NCOL_HEAP_MISSES]; /* [0] the last */
};

void ncol_heap_map_of(const struct tm_schema *s, struct ncol_heap_map *m)
{
        memset(m, 0, sizeof *m);
        int sz = tm_schema_field(s, "size"), a = tm_schema_field(s, "address");
        int na = tm_schema_field(s, "new_address");
        if (sz < 0 || a < 0 || sz >= a || (na >= 0 && na <= a))
                return;
        m->size = (unsigned)sz;
        m->addr = (unsigned)a;
        m->naddr = na < 0 ? TM_SCHEMA_FIELDS_MAX : (unsigned)na;
        if (s->field[sz].type >= TM_FT_TEXT || s->field[a].type >= TM_FT_TEXT ||
            (na >= 0 && s->field[na].type >= TM_FT_TEXT))
                return;
        for (unsigned k = 0; k < s->nkinds; k++) {
                int hs = tm_kind_pos(&s->kind[k], m->size) >= 0;
                int ha = tm_kind_pos(&s->kind[k], m->addr) >= 0;
                int hn = na >= 0 && tm_kind_pos(&s->kind[k], m->naddr) >= 0;
                if (ha && hs && hn)
                        m->role[k] = NCOL_HR_REALLOC;
                else if (ha && hs)
                        m->role[k] = NCOL_HR_ALLOC;
                else if (ha && !hn)
                        m->role[k] = NCOL_HR_FREE;
                else if (ha || hn)
                        m->role[k] = NCOL_HR_OTHER;
                m->ok |= ha;
        }
}

struct ncol_heap *ncol_heap_new(void)
{
        return calloc(1, sizeof(struct ncol_heap));
}

static void tables_free(struct ncol_heap *h)
{
        free(h->slab);
        h->slab = NULL;
        ncol_marks_free(&h->live.k);
        ncol_marks_free(&h->gone.k);
}

void ncol_heap_free(struct ncol_heap *h)
{
        if (!h)
                return;
        tables_free(h);
        free(h);
}

/* The table's slots for a block whose last block took used of them: a
 * third full, at least 2^10. */
static size_t cap_for(size_t used, size_t bound)
{
        size_t c = 1024;
        while (c < 3 * used && c < bound)
                c <<= 1;
        return c < bound ? c : bound;
}

int ncol_heap_reset(struct ncol_heap *h, size_t n, size_t events)
{
        size_t c = 16;
        while (c < events + events / 2 + 1)
                c <<= 1;
        /* A block's first (no block before) takes the table at its bound,
         * as every block once did; the next ones start at three times the
         * addresses the last one had and grow by halves (grow): a heap
         * trace's blocks of 2^16 records have about 20,000 addresses, and
         * the bound's 2^17 slots of 16 bytes spread them over 2 MiB, which
         * missed the cache at every lookup (and was cleared each block). */
        int first = h->hmax == 0;
        if (n > h->n || c > h->hmax) {
                tables_free(h);
                /* one slab on huge pages (tm_huge.h): a fresh daemon's first
                 * block otherwise took a page fault every 4 KiB of it; the
                 * table's scratch last, untouched unless it grows */
                size_t at = (n + 1) * sizeof(uint64_t);
                h->slab = tm_huge_alloc(tm_huge_round(2 * at + (c + c / 4 + 1) * sizeof *h->slot));
                int lk = ncol_marks_alloc(&h->live.k, n), gk = ncol_marks_alloc(&h->gone.k, n);
                h->live.at = h->slab;
                h->gone.at = h->slab ? (uint64_t *)((uint8_t *)h->live.at + at) : NULL;
                h->slot = h->slab ? (struct slot *)((uint8_t *)h->gone.at + at) : NULL;
                h->n = h->hmax = 0;
                if (!h->slab || lk < 0 || gk < 0) {
                        tables_free(h);
                        memset(h, 0, sizeof *h);
                        return -ENOMEM;
                }
                h->n = n;
                h->hmax = c;
        }
        h->bound = c;
        h->hcap = first ? c : cap_for(h->used, c);
        h->used = 0;
        memset(h->slot, 0, h->hcap * sizeof *h->slot);
        ncol_marks_reset(&h->live.k, h->n); /* times up to h->n: order_mark */
        ncol_marks_reset(&h->gone.k, h->n);
        memset(h->depth, 0, sizeof h->depth);
        memset(h->class_end, 0, sizeof h->class_end);
        memset(h->miss, 0, sizeof h->miss);
        h->bump = h->carve = h->last[0] = h->last[1] = 0;
        return 0;
}

/* glibc's chunk of a request of s bytes (64-bit: 8 bytes of header, 16-byte
 * steps, 32 at least), in 16-byte units; the last class holds the rest. */
static unsigned size_class(uint64_t s)
{
        if (s >= 16 * NCOL_HEAP_CLASSES)
                return NCOL_HEAP_CLASSES - 1;
        uint64_t c = (s + 8 + 15) / 16;
        c = c < 2 ? 2 : c;
        return c < NCOL_HEAP_CLASSES ? (unsigned)c : NCOL_HEAP_CLASSES - 1;
}

static uint64_t chunk_end(uint64_t v, uint64_t s)
{
        uint64_t c = (s + 8 + 15) & ~(uint64_t)15;
        return v + (c < 32 ? 32 : c);
}

static size_t slot_of(const struct ncol_heap *h, uint64_t v)
{
        size_t i = ((size_t)(((v >> 11) * 0x9E3779B97F4A7C15ull) >> 32) << 6 | (v >> 5 & 63)) &
                   (h->hcap - 1);
        while (h->slot[i].time && h->slot[i].key != v)
                i = (i + 1) & (h->hcap - 1);
        return i;
}

/* The table twice as large, its addresses moved (when it is over half
 * full and below its bound, so at most hcap / 2 + 1 <= hmax / 4 + 1 are):
 * the scratch past hmax holds them meanwhile. */
static void grow(struct ncol_heap *h)
{
        if (h->used * 2 <= h->hcap || h->hcap >= h->bound)
                return;
        struct slot *tmp = h->slot + h->hmax;
        size_t m = 0;
        for (size_t i = 0; i < h->hcap; i++)
                if (h->slot[i].time)
                        tmp[m++] = h->slot[i];
        h->hcap *= 2;
        memset(h->slot, 0, h->hcap * sizeof *h->slot);
        for (size_t j = 0; j < m; j++)
                h->slot[slot_of(h, tmp[j].key)] = tmp[j];
}

/* v marked in o at its next time (0 when o is full); the time. */
static uint32_t order_mark(const struct ncol_heap *h, struct order *o, uint64_t v)
{
        if (o->k.now >= h->n)
                return 0;
        uint32_t t = ++o->k.now;
        o->at[t] = v;
        ncol_marks_flip(&o->k, t, 1);
        return t;
}

int ncol_heap_guess(const struct ncol_heap *h, int ev, uint64_t size, uint64_t old, unsigned c,
                    uint64_t *v)
{
        if (c == NCOL_H_ZERO) {
                *v = 0;
                return 0;
        }
        if (ev != NCOL_HE_ALLOC)
                return -1;
        if (c == NCOL_H_INPLACE) {
                *v = old;
                return old == ~(uint64_t)0 ? -1 : 0;
        }
        if (c == NCOL_H_BUMP || c == NCOL_H_CARVE) {
                *v = c == NCOL_H_BUMP ? h->bump : h->carve;
                return 0;
        }
        unsigned k = size_class(size), d = c - NCOL_H_STACK0;
        if (c == NCOL_H_CLASS) {
                *v = h->class_end[k];
                return 0;
        }
        if (c < NCOL_H_STACK0 || d >= h->depth[k])
                return -1;
        *v = h->stack[k][d];
        return 0;
}

int ncol_heap_code(const struct ncol_heap *h, int ev, uint64_t size, uint64_t old, uint64_t v)
{
        static const uint8_t order[] = {NCOL_H_ZERO,       NCOL_H_INPLACE,    NCOL_H_STACK0,
                                        NCOL_H_BUMP,       NCOL_H_CARVE,      NCOL_H_CLASS,
                                        NCOL_H_STACK0 + 1, NCOL_H_STACK0 + 2, NCOL_H_STACK0 + 3,
                                        NCOL_H_STACK0 + 4, NCOL_H_STACK0 + 5, NCOL_H_STACK0 + 6,
                                        NCOL_H_STACK0 + 7};
        for (size_t i = 0; i < sizeof order; i++) {
                uint64_t g;
                if (ncol_heap_guess(h, ev, size, old, order[i], &g) == 0 && g == v)
                        return order[i];
        }
        return -1;
}

uint64_t ncol_heap_ref(const struct ncol_heap *h, int ev, unsigned code)
{
        unsigned j = code - NCOL_H_MISS2;
        return j < NCOL_HEAP_MISSES ? h->miss[ev == NCOL_HE_FREE][j] : h->last[ev == NCOL_HE_FREE];
}

/* An allocation ranks among the freed addresses, a free among the live. */
static const struct order *order_of(const struct ncol_heap *h, int ev)
{
        return ev == NCOL_HE_ALLOC ? &h->gone : ev == NCOL_HE_FREE ? &h->live : NULL;
}

int64_t ncol_heap_rank(const struct ncol_heap *h, int ev, uint64_t v)
{
        const struct order *o = order_of(h, ev);
        const struct slot *e = &h->slot[slot_of(h, v)];
        if (!o || !e->time || e->dead != (o == &h->gone))
                return -1;
        return (int64_t)ncol_marks_after(&o->k, e->time);
}

int ncol_heap_at(const struct ncol_heap *h, int ev, uint64_t r, uint64_t *v)
{
        const struct order *o = order_of(h, ev);
        if (!o || r >= o->k.marks)
                return -1;
        *v = o->at[ncol_marks_nth(&o->k, (uint32_t)r)];
        return 0;
}

/* v off the free stack of class k, if it is there. */
static int stack_take(struct ncol_heap *h, unsigned k, uint64_t v)
{
        for (unsigned d = 0; d < h->depth[k]; d++)
                if (h->stack[k][d] == v) {
                        memmove(&h->stack[k][d], &h->stack[k][d + 1],
                                (h->depth[k] - d - 1) * sizeof(uint64_t));
                        h->depth[k]--;
                        return 1;
                }
        return 0;
}

static void stack_push(struct ncol_heap *h, unsigned k, uint64_t v)
{
        stack_take(h, k, v);
        memmove(&h->stack[k][1], &h->stack[k][0], (NCOL_HEAP_DEPTH - 1) * sizeof(uint64_t));
        h->stack[k][0] = v;
        if (h->depth[k] < NCOL_HEAP_DEPTH)
                h->depth[k]++;
}

void ncol_heap_see(struct ncol_heap *h, int ev, uint64_t size, uint64_t v, unsigned code)
{
        if (ev == NCOL_HE_OTHER)
                return;
        h->last[ev == NCOL_HE_FREE] = v;
        if (code >= NCOL_H_MISS && code < NCOL_H_RANK) {
                uint64_t *m = h->miss[ev == NCOL_HE_FREE];
                memmove(m + 1, m, (NCOL_HEAP_MISSES - 1) * sizeof *m);
                m[0] = v;
        }
        if (v == 0)
                return;
        struct slot *e = &h->slot[slot_of(h, v)];
        int known = e->time != 0;
        if (known) /* off its list */
                ncol_marks_flip(&(e->dead ? &h->gone : &h->live)->k, e->time, -1);
        if (ev == NCOL_HE_FREE) {
                if (known && !e->dead)
                        stack_push(h, e->cls, v);
                else if (!known)
                        e->cls = NCOL_HEAP_CLASSES; /* allocated before the block */
        } else {
                if (!stack_take(h, size_class(size), v))
                        h->carve = chunk_end(v, size);
                h->bump = chunk_end(v, size);
                e->cls = (uint16_t)size_class(size);
                h->class_end[e->cls] = h->bump;
        }
        e->key = v;
        e->dead = ev == NCOL_HE_FREE;
        /* a block of n records has at most n events of a sort, so a time is free */
        e->time = order_mark(h, e->dead ? &h->gone : &h->live, v);
        if (!known) {
                h->used++;
                grow(h);
        }
}
