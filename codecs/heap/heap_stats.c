/* The heap family's statistics (heap_stats.h) and its row of the family
 * table (codecs/record/family.h). */
#include "heap_stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/xsort.h"
#include "heap.h"

_Static_assert(sizeof(struct tm_heap_stats) % 8 == 0 &&
                   sizeof(struct tm_heap_stats) <= TM_FAMILY_STATS_MAX,
               "the heap statistics are a family block of words");

enum { H_SIZE, H_ADDR, H_NEW, H_THREAD, H_HEAP, H_N };
enum { K_OTHER, K_ALLOC, K_FREE, K_REALLOC };

struct tm_heap_stats_acc {
        const struct tm_schema *s;
        struct tm_heap_stats st;
        int8_t pos[TM_SCHEMA_KINDS_MAX][H_N]; /* position of each heap field, -1 */
        uint8_t role[TM_SCHEMA_KINDS_MAX];    /* K_* */
        uint8_t allocates[TM_SCHEMA_KINDS_MAX];
        /* addresses seen: linear probing, address 0 = empty; a bit of
         * freed set = freed and not allocated since (size unused) */
        uint64_t *addr, *size, *freed;
        size_t cap, used; /* cap a power of two */
        size_t addr_max, sort_mem;
        size_t held, peak; /* bytes of the table and the sorts */
        /* past the table: every event, sorted by address (spill_put) */
        struct tm_xsort *ev;
        uint64_t seq; /* records seen (the one being added counts) */
        int ended;
};

/* The family's one rule (family.h): a kind alloc and fields size and
 * address, what Table 3 needs (a trace with no free kind counts none). */
static int heap_claims(const struct tm_schema *s)
{
        return tm_schema_kind(s, "alloc") >= 0 && tm_schema_field(s, "size") >= 0 &&
               tm_schema_field(s, "address") >= 0;
}

static void heap_roles(struct tm_heap_stats_acc *a)
{
        static const char *const fname[H_N] = {"size", "address", "new_address", "thread", "heap"};
        const struct tm_schema *s = a->s;
        for (unsigned k = 0; k < s->nkinds; k++) {
                const char *nm = s->kind[k].name;
                for (unsigned h = 0; h < H_N; h++) {
                        int f = tm_schema_field(s, fname[h]);
                        a->pos[k][h] = (int8_t)(f < 0 ? -1 : tm_kind_pos(&s->kind[k], (unsigned)f));
                }
                if (strcmp(nm, "alloc") == 0)
                        a->role[k] = K_ALLOC;
                else if (strcmp(nm, "free") == 0)
                        a->role[k] = K_FREE;
                else if (strncmp(nm, "realloc", 7) == 0)
                        a->role[k] = K_REALLOC;
                a->allocates[k] = a->role[k] == K_ALLOC ||
                                  (a->role[k] == K_REALLOC && strcmp(nm, "realloc_free") != 0);
        }
}

struct tm_heap_stats_acc *tm_heap_stats_start_limits(const struct tm_schema *s, size_t addr_max,
                                             size_t sort_mem)
{
        struct tm_heap_stats_acc *a = calloc(1, sizeof *a);
        if (!a)
                return NULL;
        a->s = s;
        a->addr_max = addr_max ? addr_max : 1;
        a->sort_mem = sort_mem;
        heap_roles(a);
        return a;
}


static void table_free(struct tm_heap_stats_acc *a)
{
        free(a->addr);
        free(a->size);
        free(a->freed);
        a->addr = a->size = a->freed = NULL;
        a->held -= a->cap * 16 + a->cap / 8;
        a->cap = a->used = 0;
}

void tm_heap_stats_free(struct tm_heap_stats_acc *a)
{
        if (!a)
                return;
        table_free(a);
        tm_xsort_free(a->ev);
        free(a);
}

size_t tm_heap_stats_peak_mem(const struct tm_heap_stats_acc *a)
{
        return a->peak;
}

static void hold(struct tm_heap_stats_acc *a, size_t n)
{
        a->held += n;
        if (a->held > a->peak)
                a->peak = a->held;
}

/* ---- the table of addresses ---- */

static size_t slot_of(const struct tm_heap_stats_acc *a, uint64_t addr)
{
        uint64_t h = addr * 0x9e3779b97f4a7c15ull;
        return (size_t)(h >> 20) & (a->cap - 1);
}

static int is_freed(const struct tm_heap_stats_acc *a, size_t j)
{
        return (int)(a->freed[j / 64] >> (j % 64) & 1);
}

static void set_freed(struct tm_heap_stats_acc *a, size_t j, int on)
{
        uint64_t bit = 1ull << (j % 64);
        a->freed[j / 64] = on ? a->freed[j / 64] | bit : a->freed[j / 64] & ~bit;
}

static int table_grow(struct tm_heap_stats_acc *a)
{
        size_t ncap = a->cap ? a->cap * 2 : 4096;
        uint64_t *na = calloc(ncap, sizeof *na), *ns = calloc(ncap, sizeof *ns),
                 *nf = calloc(ncap / 64, sizeof *nf);
        if (!na || !ns || !nf) {
                free(na);
                free(ns);
                free(nf);
                return -ENOMEM;
        }
        hold(a, ncap * 16 + ncap / 8);
        struct tm_heap_stats_acc o = *a;
        a->addr = na;
        a->size = ns;
        a->freed = nf;
        a->cap = ncap;
        for (size_t i = 0; i < o.cap; i++)
                if (o.addr[i]) {
                        size_t j = slot_of(a, o.addr[i]);
                        while (na[j])
                                j = (j + 1) & (ncap - 1);
                        na[j] = o.addr[i];
                        ns[j] = o.size[i];
                        set_freed(a, j, is_freed(&o, i));
                }
        free(o.addr);
        free(o.size);
        free(o.freed);
        a->held -= o.cap * 16 + o.cap / 8;
        return 0;
}

/* The slot of addr (not 0), or of the empty one where it would go. */
static size_t table_find(const struct tm_heap_stats_acc *a, uint64_t addr)
{
        size_t j = slot_of(a, addr);
        while (a->addr[j] && a->addr[j] != addr)
                j = (j + 1) & (a->cap - 1);
        return j;
}

/* ---- past the table: the external count ----
 *
 * Every heap event becomes a record (address, record number << 3 | op,
 * size). Sorted by address and record number, an address's events are
 * in order, so each free meets the size of what it frees (join); the
 * changes that makes to the live count and bytes, sorted by record
 * number, give the running totals and their maxima (sweep). The table's
 * contents at the switch go first, at record number 0 (EV_LIVE,
 * EV_FREED: a state, no change); the totals then are the sweep's start.
 * At one record number a release sorts before an allocation, as a
 * realloc in place frees and then allocates. */

enum { EV_FREE, EV_RFREE, EV_ALLOC, EV_LIVE, EV_FREED };
#define SPILL_FIRST_MEM (4u << 20)

static void spill_fail(struct tm_heap_stats_acc *a, int rc)
{
        a->st.inexact = (uint64_t)(rc < 0 ? -rc : EIO);
        tm_xsort_free(a->ev);
        a->ev = NULL;
}

static void spill_put(struct tm_heap_stats_acc *a, uint64_t addr, uint64_t seq, unsigned op,
                      uint64_t size)
{
        uint64_t r[3] = {addr, seq << 3 | op, size};
        int rc = a->ev ? tm_xsort_put(a->ev, r) : 0;
        if (rc < 0)
                spill_fail(a, rc);
        a->st.spilled += a->ev != NULL;
}

/* From now on every event goes to the sort: the table first, through a
 * small buffer while the table is still there. */
static void spill_start(struct tm_heap_stats_acc *a)
{
        size_t mem = a->sort_mem < SPILL_FIRST_MEM ? a->sort_mem : SPILL_FIRST_MEM;
        int rc = tm_xsort_new(3, 2, mem, TM_XSORT_FANIN, &a->ev);
        if (rc < 0) {
                spill_fail(a, rc);
        } else {
                for (size_t j = 0; j < a->cap && a->ev; j++)
                        if (a->addr[j])
                                spill_put(a, a->addr[j], 0, is_freed(a, j) ? EV_FREED : EV_LIVE,
                                          a->size[j]);
        }
        if (a->ev)
                hold(a, tm_xsort_peak(a->ev));
        table_free(a);
        if (a->ev) {
                a->held -= tm_xsort_peak(a->ev);
                tm_xsort_grow(a->ev, a->sort_mem); /* if it cannot, the small one serves */
        }
}

static int spilling(const struct tm_heap_stats_acc *a)
{
        return a->ev != NULL || a->st.inexact;
}

/* ---- live objects ---- */

/* The slot for a new address, growing the table; -1 when it is full. */
static int table_slot_new(struct tm_heap_stats_acc *a, uint64_t addr, size_t *j)
{
        if (a->used + 1 > a->addr_max || (2 * (a->used + 1) > a->cap && table_grow(a) < 0))
                return -1;
        *j = table_find(a, addr);
        a->addr[*j] = addr;
        a->used++;
        return 0;
}

static void live_add(struct tm_heap_stats_acc *a, uint64_t addr, uint64_t size)
{
        struct tm_heap_stats *st = &a->st;
        size_t j = a->cap && !spilling(a) ? table_find(a, addr) : 0;
        int fresh = !spilling(a) && (!a->cap || !a->addr[j]);
        if (fresh && table_slot_new(a, addr, &j) < 0)
                spill_start(a);
        if (spilling(a)) {
                spill_put(a, addr, a->seq, EV_ALLOC, size);
                return;
        }
        if (!fresh && !is_freed(a, j)) { /* allocated again without a free */
                st->alloc_live++;
                st->live_n--;
                st->live_bytes -= a->size[j];
        }
        a->size[j] = size;
        set_freed(a, j, 0);
        st->live_n++;
        st->live_bytes += size;
        if (st->live_n > st->max_live_n)
                st->max_live_n = st->live_n;
        if (st->live_bytes > st->max_live_bytes)
                st->max_live_bytes = st->live_bytes;
}

/* The release of addr (not 0) by a free or a realloc (op). */
static void live_remove(struct tm_heap_stats_acc *a, uint64_t addr, unsigned op)
{
        struct tm_heap_stats *st = &a->st;
        if (spilling(a)) {
                spill_put(a, addr, a->seq, op, 0);
                return;
        }
        size_t j = a->cap ? table_find(a, addr) : 0;
        if (!a->cap || !a->addr[j] || is_freed(a, j)) {
                if (op == EV_RFREE) {
                        st->realloc_unknown++;
                } else {
                        st->free_unknown++;
                        st->double_frees += a->cap && a->addr[j];
                }
                return;
        }
        st->live_n--;
        st->live_bytes -= a->size[j];
        set_freed(a, j, 1);
}

/* ---- per record ---- */

static void count_id(uint64_t *ids, uint64_t *ns, uint64_t *n, uint64_t *other, uint64_t id)
{
        for (uint64_t i = 0; i < *n; i++)
                if (ids[i] == id) {
                        ns[i]++;
                        return;
                }
        if (*n < TM_HEAP_STATS_IDS) {
                ids[*n] = id;
                ns[(*n)++] = 1;
        } else {
                (*other)++;
        }
}

static uint64_t get(const struct tm_rec *r, int pos)
{
        return pos < 0 ? 0 : r->v[pos];
}

static void heap_add(struct tm_heap_stats_acc *a, const struct tm_rec *r)
{
        struct tm_heap_stats *st = &a->st;
        const int8_t *p = a->pos[r->kind];
        unsigned role = a->role[r->kind];
        if (p[H_THREAD] >= 0)
                count_id(st->thread_id, st->thread_n, &st->nthreads, &st->thread_other,
                         r->v[p[H_THREAD]]);
        if (p[H_HEAP] >= 0)
                count_id(st->heap_id, st->heap_n, &st->nheaps, &st->heap_other, r->v[p[H_HEAP]]);
        if (role == K_OTHER)
                return;
        uint64_t size = get(r, p[H_SIZE]), addr = get(r, p[H_ADDR]);
        if (role == K_FREE) {
                st->frees++;
                if (addr)
                        live_remove(a, addr, EV_FREE);
                return;
        }
        if (role == K_REALLOC) {
                st->reallocs++;
                if (addr)
                        live_remove(a, addr, EV_RFREE);
                addr = get(r, p[H_NEW]);
        } else {
                st->allocs++;
        }
        if (!a->allocates[r->kind] || addr == 0) /* 0: the request failed */
                return;
        if (st->total_bytes + size < size) /* past 2^64: no byte figure holds */
                st->inexact = EOVERFLOW;
        st->total_bytes += size;
        st->sized++;
        unsigned b = size ? 64u - (unsigned)__builtin_clzll(size) : 0;
        st->size_hist[b < TM_HEAP_STATS_HIST ? b : TM_HEAP_STATS_HIST - 1]++;
        live_add(a, addr, size);
}

void tm_heap_stats_add(struct tm_heap_stats_acc *a, const struct tm_rec *r, size_t n)
{
        if (a->ended)
                return;
        for (size_t i = 0; i < n; i++) {
                a->seq++;
                heap_add(a, &r[i]);
        }
}

/* ---- the end of an external count ---- */

/* The change a record (number seq) makes: live objects by dobj (-1, 0,
 * 1), bytes by db (mod 2^64, as the running total). */
static int delta_put(struct tm_xsort *d, uint64_t seq, int dobj, uint64_t db)
{
        uint64_t r[2] = {seq << 2 | (uint64_t)(dobj + 1), db};
        return tm_xsort_put(d, r);
}

/* One address's events, in order (join): the counts of what cannot be
 * reconciled, and the changes into d. *size and *state (0 not seen, 1
 * live, 2 freed) carry the address's state from event to event. */
static int join_event(struct tm_heap_stats *st, struct tm_xsort *d, const uint64_t *e, int *state,
                      uint64_t *size)
{
        uint64_t seq = e[1] >> 3;
        unsigned op = (unsigned)(e[1] & 7);
        switch (op) {
        case EV_LIVE:
        case EV_FREED:
                *state = op == EV_LIVE ? 1 : 2;
                *size = e[2];
                return 0;
        case EV_ALLOC: {
                int rc = 0;
                if (*state == 1) {
                        st->alloc_live++;
                        rc = delta_put(d, seq, -1, -*size);
                }
                *state = 1;
                *size = e[2];
                return rc < 0 ? rc : delta_put(d, seq, 1, e[2]);
        }
        default: /* EV_FREE, EV_RFREE */
                if (*state == 1) {
                        *state = 2;
                        return delta_put(d, seq, -1, -*size);
                }
                if (op == EV_RFREE)
                        st->realloc_unknown++;
                else
                        st->free_unknown++, st->double_frees += *state == 2;
                return 0;
        }
}

/* Events by address into the changes by record number. */
static int spill_join(struct tm_heap_stats_acc *a, struct tm_xsort *d)
{
        uint64_t e[3], addr = 0, size = 0;
        int state = 0, rc;
        while ((rc = tm_xsort_next(a->ev, e)) == 1) {
                if (e[0] != addr)
                        state = 0, addr = e[0];
                if ((rc = join_event(&a->st, d, e, &state, &size)) < 0)
                        return rc;
        }
        return rc;
}

/* The changes in record order: the running totals from those at the
 * switch, their maxima after each record. */
static int spill_sweep(struct tm_heap_stats *st, struct tm_xsort *d)
{
        uint64_t r[2], seq = 0;
        int rc;
        while ((rc = tm_xsort_next(d, r)) == 1) {
                if (r[0] >> 2 != seq) { /* the previous record is complete */
                        if (st->live_n > st->max_live_n)
                                st->max_live_n = st->live_n;
                        if (st->live_bytes > st->max_live_bytes)
                                st->max_live_bytes = st->live_bytes;
                        seq = r[0] >> 2;
                }
                st->live_n += (r[0] & 3) - 1;
                st->live_bytes += r[1];
        }
        if (st->live_n > st->max_live_n)
                st->max_live_n = st->live_n;
        if (st->live_bytes > st->max_live_bytes)
                st->max_live_bytes = st->live_bytes;
        return rc;
}

static void spill_end(struct tm_heap_stats_acc *a)
{
        struct tm_xsort *d = NULL;
        struct tm_heap_stats save = a->st;
        int rc = tm_xsort_finish(a->ev);
        size_t held = tm_xsort_held(a->ev); /* the second sort gets what is left */
        size_t least = (a->sort_mem < SPILL_FIRST_MEM ? a->sort_mem : SPILL_FIRST_MEM) / 4 + 64;
        size_t mem = a->sort_mem > held + least ? a->sort_mem - held : least;
        if (rc == 0)
                rc = tm_xsort_new(2, 1, mem, TM_XSORT_FANIN, &d);
        if (rc == 0)
                rc = spill_join(a, d);
        /* the table is gone; the sorts' buffers at their fullest: the
         * first alone, then its merge beside the second's buffer, then
         * the second alone */
        hold(a, tm_xsort_peak(a->ev));
        a->held = 0;
        hold(a, tm_xsort_held(a->ev) + (d ? tm_xsort_peak(d) : 0));
        a->held = 0;
        tm_xsort_free(a->ev);
        a->ev = NULL;
        if (rc == 0 && (rc = tm_xsort_finish(d)) == 0)
                rc = spill_sweep(&a->st, d);
        if (d)
                hold(a, tm_xsort_peak(d));
        a->held = 0;
        tm_xsort_free(d);
        if (rc < 0) { /* the counts before the switch stand; the rest is not known */
                a->st = save;
                a->st.inexact = (uint64_t)-rc;
        }
}

const struct tm_heap_stats *tm_heap_stats_get(struct tm_heap_stats_acc *a)
{
        if (!a->ended && a->ev)
                spill_end(a);
        a->ended = 1;
        return &a->st;
}

/* ---- the rows ---- */

/* Why the live figures are not known (st->inexact set). */
static const char *inexact_why(const struct tm_heap_stats *st, char *buf, size_t cap)
{
        if (st->inexact == EOVERFLOW)
                snprintf(buf, cap, "the sizes requested add up past 2^64");
        else
                snprintf(buf, cap,
                         "past %u addresses the count needs temporary files ($TMPDIR, else /tmp), "
                         "which failed: %s",
                         TM_HEAP_STATS_ADDR_MAX, strerror((int)st->inexact));
        return buf;
}

/* Rows of ids (threads, heaps) under key, the others' records after them
 * (in the text when there are any). */
static void rows_ids(struct tm_rows *k, const char *key, const char *title, const uint64_t *id,
                     const uint64_t *n, unsigned count, uint64_t other)
{
        char name[24], other_key[32];
        tm_row_text(k, title);
        for (unsigned i = 0; i < count; i++) {
                snprintf(name, sizeof name, "%" PRIu64, id[i]);
                tm_row_u64(k, TM_KEY(key, name, "records"), n[i], "records", 1, "  {N-18} {}\n");
        }
        snprintf(other_key, sizeof other_key, "%s_other", key);
        tm_row_u64(k, TM_KEY(other_key), other, "records", 1,
                   other ? "  (others)           {}\n" : NULL);
}

/* Table 3: the live figures, known or not. */
static void rows_live(struct tm_rows *k, const struct tm_heap_stats *st)
{
        int live = !st->inexact, odd = st->free_unknown || st->realloc_unknown || st->alloc_live;
        char why[256];
        if (!live) {
                tm_row_unknown(k, TM_KEY("live_objects"), "objects", "  live at end        {}\n");
                tm_row_unknown(k, TM_KEY("live_bytes"), "bytes", NULL);
                tm_row_str(k, TM_KEY("inexact"), inexact_why(st, why, sizeof why),
                           "  not exact: {}; max objects, max bytes, live at end and the counts of "
                           "what does not add up are not known\n");
                tm_row_unknown(k, TM_KEY("frees_not_live"), "records", NULL);
                tm_row_unknown(k, TM_KEY("double_frees"), "records", NULL);
                tm_row_unknown(k, TM_KEY("reallocs_not_live"), "records", NULL);
                tm_row_unknown(k, TM_KEY("allocs_at_live"), "records", NULL);
                return;
        }
        tm_row_u64(k, TM_KEY("live_objects"), st->live_n, "objects", 1,
                   "  live at end        {} objects, ");
        tm_row_u64(k, TM_KEY("live_bytes"), st->live_bytes, "bytes", 1, "{} bytes\n");
        tm_row_u64(k, TM_KEY("frees_not_live"), st->free_unknown, "records", 1,
                   "  frees of addresses not live: {}\n");
        tm_row_u64(k, TM_KEY("double_frees"), st->double_frees, "records", 1,
                   odd ? "  of them double frees: {} (an address freed and not allocated since)\n"
                       : NULL);
        tm_row_u64(k, TM_KEY("reallocs_not_live"), st->realloc_unknown, "records", 1,
                   odd ? "  reallocs of addresses not live: {}\n" : NULL);
        tm_row_u64(k, TM_KEY("allocs_at_live"), st->alloc_live, "records", 1,
                   odd ? "  allocations at live addresses: {} (the object there counted as "
                         "freed)\n"
                       : NULL);
        if (odd)
                tm_row_text(k, "  (records are taken in the order written: a log of threads "
                               "written out of order, or one with records missing, shows as "
                               "these)\n");
}

static void rows_heap(struct tm_rows *k, const struct tm_heap_stats *st)
{
        int live = !st->inexact, sums = st->inexact != EOVERFLOW;
        tm_row_text(k, "\nheap (the columns of Table 3 of the HATF paper)\n");
        tm_row_u64(k, TM_KEY("allocs"), st->allocs, "records", 1, "  total allocs       {}\n");
        tm_row_u64(k, TM_KEY("reallocs"), st->reallocs, "records", 1, "  total reallocs     {}\n");
        tm_row_u64(k, TM_KEY("frees"), st->frees, "records", 1, "  total frees        {}\n");
        tm_row_u64_known(k, TM_KEY("total_bytes"), st->total_bytes, "bytes", sums,
                         "  total bytes        {}\n");
        tm_row_u64_known(k, TM_KEY("max_objects"), st->max_live_n, "objects", live,
                         "  max objects        {}\n");
        tm_row_u64_known(k, TM_KEY("max_bytes"), st->max_live_bytes, "bytes", live,
                         "  max bytes          {}\n");
        if (sums)
                tm_row_real(k, TM_KEY("avg_size"),
                            st->sized ? (double)st->total_bytes / (double)st->sized : 0.0, "bytes",
                            1, "  avg object size    {.1}\n");
        else
                tm_row_unknown(k, TM_KEY("avg_size"), "bytes", "  avg object size    {}\n");
        rows_live(k, st);
        rows_ids(k, "threads", "\nrecords per thread\n", st->thread_id, st->thread_n,
                 (unsigned)st->nthreads, st->thread_other);
        rows_ids(k, "heaps", "\nrecords per heap\n", st->heap_id, st->heap_n,
                 (unsigned)st->nheaps, st->heap_other);
        tm_row_text(k, "\nallocation sizes (bytes)\n");
        for (unsigned b = 0; b < TM_HEAP_STATS_HIST; b++) {
                if (!st->size_hist[b])
                        continue;
                char lo[24];
                snprintf(lo, sizeof lo, "%llu", b ? 1ull << (b - 1) : 0ull);
                tm_row_u64(k, TM_KEY("size_histogram", lo, "max"), b ? (1ull << b) - 1 : 0,
                           "bytes", 1, "  {N10} - {-10} ");
                tm_row_u64(k, TM_KEY("size_histogram", lo, "count"), st->size_hist[b], "records",
                           1, "{}\n");
        }
}

/* ---- the family's hooks ---- */

static struct tm_family_acc *fam_start(const struct tm_schema *s)
{
        return (struct tm_family_acc *)tm_heap_stats_start_limits(s, TM_HEAP_STATS_ADDR_MAX,
                                                                   TM_HEAP_STATS_SORT_MEM);
}

static void fam_add(struct tm_family_acc *a, const struct tm_rec *r, size_t n)
{
        tm_heap_stats_add((struct tm_heap_stats_acc *)a, r, n);
}

static void fam_finish(struct tm_family_acc *a, void *block)
{
        memcpy(block, tm_heap_stats_get((struct tm_heap_stats_acc *)a),
               sizeof(struct tm_heap_stats));
}

static void fam_free(struct tm_family_acc *a)
{
        tm_heap_stats_free((struct tm_heap_stats_acc *)a);
}

static size_t fam_peak_mem(const struct tm_family_acc *a)
{
        return tm_heap_stats_peak_mem((const struct tm_heap_stats_acc *)a);
}

/* Parts within their wholes, an errno as the reason, the id lists within
 * their arrays. */
static int fam_stats_ok(const void *block)
{
        const struct tm_heap_stats *st = block;
        return st->double_frees <= st->free_unknown && st->free_unknown <= st->frees &&
               st->realloc_unknown <= st->reallocs && st->inexact <= 4095 &&
               st->nthreads <= TM_HEAP_STATS_IDS && st->nheaps <= TM_HEAP_STATS_IDS;
}

static void fam_rows(const void *block, const struct tm_schema *s,
                     const struct tm_family_info *in, struct tm_rows *out)
{
        (void)s;
        (void)in;
        rows_heap(out, block);
}

static unsigned fam_stream_ids(const void *block, const uint64_t **ids)
{
        const struct tm_heap_stats *st = block;
        *ids = st->thread_id;
        return (unsigned)st->nthreads;
}

static const struct tm_family_more heap_more = {
    .rec_refine = tm_heap_refine,
};

const struct tm_family tm_family_heap = {
    .name = "heap",
    .claims = heap_claims,
    .stats_size = sizeof(struct tm_heap_stats),
    .acc_start = fam_start,
    .acc_add = fam_add,
    .acc_finish = fam_finish,
    .acc_free = fam_free,
    .acc_peak_mem = fam_peak_mem,
    .stats_ok = fam_stats_ok,
    .rows = fam_rows,
    .stream_field = "thread",
    .stream_ids = fam_stream_ids,
    .more = &heap_more,
};
