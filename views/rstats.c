#include "rstats.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

enum { H_SIZE, H_ADDR, H_NEW, H_THREAD, H_HEAP, H_N };
enum { K_OTHER, K_ALLOC, K_FREE, K_REALLOC };

struct tm_rstats_acc {
        const struct tm_schema *s;
        struct tm_rstats st;
        int8_t pos[TM_SCHEMA_KINDS_MAX][H_N]; /* position of each heap field, -1 */
        uint8_t role[TM_SCHEMA_KINDS_MAX];    /* K_* */
        uint8_t allocates[TM_SCHEMA_KINDS_MAX];
        /* live objects: linear probing, address 0 = empty */
        uint64_t *addr, *size;
        size_t cap; /* power of two */
};

int tm_rstats_is_heap(const struct tm_schema *s)
{
        return tm_schema_kind(s, "alloc") >= 0 && tm_schema_kind(s, "free") >= 0 &&
               tm_schema_field(s, "size") >= 0 && tm_schema_field(s, "address") >= 0;
}

static int heap_roles(struct tm_rstats_acc *a)
{
        static const char *const fname[H_N] = {"size", "address", "new_address", "thread", "heap"};
        const struct tm_schema *s = a->s;
        if (!tm_rstats_is_heap(s))
                return 0;
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
        return 1;
}

struct tm_rstats_acc *tm_rstats_start(const struct tm_schema *s)
{
        struct tm_rstats_acc *a = calloc(1, sizeof *a);
        if (!a)
                return NULL;
        a->s = s;
        for (unsigned f = 0; f < TM_SCHEMA_FIELDS_MAX; f++)
                a->st.fmin[f] = UINT64_MAX;
        a->st.heap = heap_roles(a);
        return a;
}

void tm_rstats_free(struct tm_rstats_acc *a)
{
        if (!a)
                return;
        free(a->addr);
        free(a->size);
        free(a);
}

const struct tm_rstats *tm_rstats_get(const struct tm_rstats_acc *a)
{
        return &a->st;
}

/* ---- live objects ---- */

static size_t slot_of(const struct tm_rstats_acc *a, uint64_t addr)
{
        uint64_t h = addr * 0x9e3779b97f4a7c15ull;
        return (size_t)(h >> 20) & (a->cap - 1);
}

static int live_grow(struct tm_rstats_acc *a)
{
        size_t ncap = a->cap ? a->cap * 2 : 4096;
        uint64_t *na = calloc(ncap, sizeof *na), *ns = calloc(ncap, sizeof *ns);
        if (!na || !ns) {
                free(na);
                free(ns);
                return -1;
        }
        uint64_t *oa = a->addr, *os = a->size;
        size_t ocap = a->cap;
        a->addr = na;
        a->size = ns;
        a->cap = ncap;
        for (size_t i = 0; i < ocap; i++)
                if (oa[i]) {
                        size_t j = slot_of(a, oa[i]);
                        while (na[j])
                                j = (j + 1) & (ncap - 1);
                        na[j] = oa[i];
                        ns[j] = os[i];
                }
        free(oa);
        free(os);
        return 0;
}

static void live_add(struct tm_rstats_acc *a, uint64_t addr, uint64_t size)
{
        struct tm_rstats *st = &a->st;
        if (!st->live_overflow) {
                if (st->live_n + 1 > TM_RSTATS_LIVE_MAX ||
                    (2 * (st->live_n + 1) > a->cap && live_grow(a) < 0)) {
                        st->live_overflow = 1;
                } else {
                        size_t j = slot_of(a, addr);
                        while (a->addr[j] && a->addr[j] != addr)
                                j = (j + 1) & (a->cap - 1);
                        if (a->addr[j]) { /* allocated again without a free */
                                st->live_n--;
                                st->live_bytes -= a->size[j];
                        }
                        a->addr[j] = addr;
                        a->size[j] = size;
                }
        }
        st->live_n++;
        st->live_bytes += size;
        if (st->live_n > st->max_live_n)
                st->max_live_n = st->live_n;
        if (st->live_bytes > st->max_live_bytes)
                st->max_live_bytes = st->live_bytes;
}

/* Remove addr; returns 1 if it was live. Backward-shift deletion keeps
 * probe chains whole without tombstones. */
static int live_remove(struct tm_rstats_acc *a, uint64_t addr)
{
        struct tm_rstats *st = &a->st;
        if (st->live_overflow) {
                if (st->live_n)
                        st->live_n--;
                return 1;
        }
        if (!a->cap || addr == 0)
                return 0;
        size_t m = a->cap - 1, j = slot_of(a, addr);
        while (a->addr[j] && a->addr[j] != addr)
                j = (j + 1) & m;
        if (!a->addr[j])
                return 0;
        st->live_n--;
        st->live_bytes -= a->size[j];
        for (size_t i = j, k = (j + 1) & m;; k = (k + 1) & m) {
                if (!a->addr[k]) {
                        a->addr[i] = 0;
                        break;
                }
                size_t home = slot_of(a, a->addr[k]);
                if (((k - home) & m) >= ((k - i) & m)) {
                        a->addr[i] = a->addr[k];
                        a->size[i] = a->size[k];
                        i = k;
                }
        }
        return 1;
}

/* ---- per record ---- */

static void count_id(uint64_t *ids, uint64_t *ns, unsigned *n, uint64_t *other, uint64_t id)
{
        for (unsigned i = 0; i < *n; i++)
                if (ids[i] == id) {
                        ns[i]++;
                        return;
                }
        if (*n < TM_RSTATS_IDS) {
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

static void heap_add(struct tm_rstats_acc *a, const struct tm_rec *r)
{
        struct tm_rstats *st = &a->st;
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
                if (!live_remove(a, addr))
                        st->free_unknown++;
                return;
        }
        if (role == K_REALLOC) {
                st->reallocs++;
                live_remove(a, addr);
                addr = get(r, p[H_NEW]);
        } else {
                st->allocs++;
        }
        if (!a->allocates[r->kind] || addr == 0) /* 0: the request failed */
                return;
        st->total_bytes += size;
        st->sized++;
        unsigned b = size ? 64u - (unsigned)__builtin_clzll(size) : 0;
        st->size_hist[b < TM_RSTATS_HIST ? b : TM_RSTATS_HIST - 1]++;
        live_add(a, addr, size);
}

void tm_rstats_add(struct tm_rstats_acc *a, const struct tm_rec *r, size_t n)
{
        struct tm_rstats *st = &a->st;
        for (size_t i = 0; i < n; i++) {
                const struct tm_kind *k = &a->s->kind[r[i].kind];
                st->kind_n[r[i].kind]++;
                for (unsigned j = 0; j < k->nfields; j++) {
                        unsigned f = k->field[j];
                        if (tm_field_is_var(&a->s->field[f]))
                                continue;
                        uint64_t v = r[i].v[j];
                        st->fseen[f]++;
                        if (v < st->fmin[f])
                                st->fmin[f] = v;
                        if (v > st->fmax[f])
                                st->fmax[f] = v;
                }
                if (st->heap)
                        heap_add(a, &r[i]);
        }
        st->records += n;
}

/* ---- the report ---- */

/* The next line of the notes at *l (tm_rstats_info.notes): its start, its
 * length in *len; NULL after the last. */
static const char *note_line(const char **l, size_t *len)
{
        const char *s = *l;
        if (!s || !*s)
                return NULL;
        const char *e = strchr(s, '\n');
        *len = e ? (size_t)(e - s) : strlen(s);
        *l = s + *len + (e != NULL);
        return s;
}

#define OUT(...)                                                                                   \
        do {                                                                                       \
                int k_ = snprintf(dst + n, n < cap ? cap - n : 0, __VA_ARGS__);                    \
                if (k_ > 0)                                                                        \
                        n += (size_t)k_;                                                           \
        } while (0)

static size_t report_heap(const struct tm_rstats *st, char *dst, size_t cap)
{
        size_t n = 0;
        uint64_t made = st->sized;
        OUT("\nheap (the columns of Table 3 of the HATF paper)\n");
        OUT("  total allocs       %" PRIu64 "\n", st->allocs);
        OUT("  total reallocs     %" PRIu64 "\n", st->reallocs);
        OUT("  total frees        %" PRIu64 "\n", st->frees);
        OUT("  total bytes        %" PRIu64 "\n", st->total_bytes);
        OUT("  max objects        %" PRIu64 "%s\n", st->max_live_n,
            st->live_overflow ? " (allocations minus frees past the live table)" : "");
        if (st->live_overflow)
                OUT("  max bytes          not known (more than %u live objects)\n",
                    TM_RSTATS_LIVE_MAX);
        else
                OUT("  max bytes          %" PRIu64 "\n", st->max_live_bytes);
        OUT("  avg object size    %.1f\n", made ? (double)st->total_bytes / (double)made : 0.0);
        OUT("  live at end        %" PRIu64 " objects, %" PRIu64 " bytes\n", st->live_n,
            st->live_bytes);
        OUT("  frees of addresses not live: %" PRIu64 "\n", st->free_unknown);
        OUT("\nrecords per thread\n");
        for (unsigned i = 0; i < st->nthreads; i++)
                OUT("  %-18" PRIu64 " %" PRIu64 "\n", st->thread_id[i], st->thread_n[i]);
        if (st->thread_other)
                OUT("  %-18s %" PRIu64 "\n", "(others)", st->thread_other);
        OUT("\nrecords per heap\n");
        for (unsigned i = 0; i < st->nheaps; i++)
                OUT("  %-18" PRIu64 " %" PRIu64 "\n", st->heap_id[i], st->heap_n[i]);
        if (st->heap_other)
                OUT("  %-18s %" PRIu64 "\n", "(others)", st->heap_other);
        OUT("\nallocation sizes (bytes)\n");
        for (unsigned b = 0; b < TM_RSTATS_HIST; b++) {
                if (!st->size_hist[b])
                        continue;
                uint64_t lo = b ? 1ull << (b - 1) : 0, hi = b ? (1ull << b) - 1 : 0;
                OUT("  %10" PRIu64 " - %-10" PRIu64 " %" PRIu64 "\n", lo, hi, st->size_hist[b]);
        }
        return n;
}

size_t tm_rstats_report(const struct tm_rstats *st, const struct tm_schema *s,
                        const struct tm_rstats_info *in, char *dst, size_t cap)
{
        size_t n = 0;
        OUT("trace      %s\n", in->name);
        OUT("format     %s (%s family) in %s\n", in->codec, s->name, in->container);
        if (in->damage)
                OUT("damaged    %s (the numbers are of the records before it)\n", in->damage);
        OUT("records    %" PRIu64 "\n", st->records);
        OUT("archive    %" PRIu64 " bytes, %.3f bytes a record\n", in->archive_size,
            st->records ? (double)in->archive_size / (double)st->records : 0.0);
        OUT("raw        %" PRIu64 " bytes, %.3f bytes a record\n", in->raw_size,
            st->records ? (double)in->raw_size / (double)st->records : 0.0);
        OUT("ascii      %" PRIu64 " bytes\n", in->ascii_size);
        size_t nl;
        for (const char *l = in->notes, *ln; (ln = note_line(&l, &nl));)
                OUT("note       %.*s\n", (int)nl, ln);
        OUT("\nrecords per kind\n");
        for (unsigned k = 0; k < s->nkinds; k++)
                OUT("  %-20s %" PRIu64 "\n", s->kind[k].name, st->kind_n[k]);
        OUT("\nfields (numbers): records with it, min, max\n");
        for (unsigned f = 0; f < s->nfields; f++) {
                if (!st->fseen[f])
                        continue;
                if (s->field[f].show == TM_SHOW_HEX)
                        OUT("  %-20s %" PRIu64 " 0x%" PRIx64 " 0x%" PRIx64 "\n", s->field[f].name,
                            st->fseen[f], st->fmin[f], st->fmax[f]);
                else
                        OUT("  %-20s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", s->field[f].name,
                            st->fseen[f], st->fmin[f], st->fmax[f]);
        }
        if (st->heap)
                n += report_heap(st, dst + (n < cap ? n : cap), n < cap ? cap - n : 0);
        return n;
}

/* ---- JSON ---- */

static void json_ids(struct tm_json *o, const char *key, const uint64_t *id, const uint64_t *n,
                     unsigned count, uint64_t other)
{
        tm_json_open(o, key, '[');
        for (unsigned i = 0; i < count; i++) {
                tm_json_open(o, NULL, '{');
                tm_json_u64(o, "id", id[i]);
                tm_json_u64(o, "records", n[i]);
                tm_json_close(o, '}');
        }
        tm_json_close(o, ']');
        char other_key[32];
        snprintf(other_key, sizeof other_key, "%s_other", key);
        tm_json_u64(o, other_key, other);
}

static void json_heap(struct tm_json *o, const struct tm_rstats *st)
{
        tm_json_open(o, "heap", '{');
        tm_json_u64(o, "allocs", st->allocs);
        tm_json_u64(o, "reallocs", st->reallocs);
        tm_json_u64(o, "frees", st->frees);
        tm_json_u64(o, "total_bytes", st->total_bytes);
        tm_json_u64(o, "max_objects", st->max_live_n);
        tm_json_bool(o, "max_objects_exact", !st->live_overflow);
        if (st->live_overflow)
                tm_json_str(o, "max_bytes", NULL);
        else
                tm_json_u64(o, "max_bytes", st->max_live_bytes);
        tm_json_real(o, "avg_size", st->sized ? (double)st->total_bytes / (double)st->sized : 0.0);
        tm_json_u64(o, "live_objects", st->live_n);
        tm_json_u64(o, "live_bytes", st->live_bytes);
        tm_json_u64(o, "frees_not_live", st->free_unknown);
        json_ids(o, "threads", st->thread_id, st->thread_n, st->nthreads, st->thread_other);
        json_ids(o, "heaps", st->heap_id, st->heap_n, st->nheaps, st->heap_other);
        tm_json_open(o, "size_histogram", '[');
        for (unsigned b = 0; b < TM_RSTATS_HIST; b++) {
                if (!st->size_hist[b])
                        continue;
                tm_json_open(o, NULL, '{');
                tm_json_u64(o, "min", b ? 1ull << (b - 1) : 0);
                tm_json_u64(o, "max", b ? (1ull << b) - 1 : 0);
                tm_json_u64(o, "count", st->size_hist[b]);
                tm_json_close(o, '}');
        }
        tm_json_close(o, ']');
        tm_json_close(o, '}');
}

size_t tm_rstats_json(const struct tm_rstats *st, const struct tm_schema *s,
                      const struct tm_rstats_info *in, const char *damage, char *dst, size_t cap)
{
        struct tm_json o = {dst, cap, 0, 0};
        struct tm_json_head h = {.family = "record",
                                 .name = in->name,
                                 .codec = in->codec,
                                 .container = in->container,
                                 .damage = damage,
                                 .archive_size = in->archive_size,
                                 .raw_size = in->raw_size,
                                 .ascii_size = in->ascii_size};
        tm_json_stats_head(&o, &h);
        tm_json_open(&o, "notes", '[');
        size_t nl;
        for (const char *l = in->notes, *ln; (ln = note_line(&l, &nl));) {
                char line[512];
                snprintf(line, sizeof line, "%.*s", (int)(nl < sizeof line ? nl : sizeof line - 1),
                         ln);
                tm_json_str(&o, NULL, line);
        }
        tm_json_close(&o, ']');
        tm_json_str(&o, "schema", s->name);
        tm_json_u64(&o, "records", st->records);
        tm_json_open(&o, "kinds", '[');
        for (unsigned k = 0; k < s->nkinds; k++) {
                tm_json_open(&o, NULL, '{');
                tm_json_str(&o, "name", s->kind[k].name);
                tm_json_u64(&o, "records", st->kind_n[k]);
                tm_json_close(&o, '}');
        }
        tm_json_close(&o, ']');
        tm_json_open(&o, "fields", '[');
        for (unsigned f = 0; f < s->nfields; f++) {
                if (!st->fseen[f])
                        continue;
                tm_json_open(&o, NULL, '{');
                tm_json_str(&o, "name", s->field[f].name);
                tm_json_u64(&o, "records", st->fseen[f]);
                tm_json_u64(&o, "min", st->fmin[f]);
                tm_json_u64(&o, "max", st->fmax[f]);
                tm_json_close(&o, '}');
        }
        tm_json_close(&o, ']');
        if (st->heap)
                json_heap(&o, st);
        else
                tm_json_str(&o, "heap", NULL);
        return tm_json_stats_end(&o);
}
