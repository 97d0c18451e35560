/* The java family's statistics (jstats.h) and its row of the family
 * table (codecs/record/family.h). */
#include "jstats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tm_json.h"

_Static_assert(sizeof(struct tm_java_stats) % 8 == 0 &&
                   sizeof(struct tm_java_stats) <= TM_FAMILY_STATS_MAX,
               "the java statistics are a family block of words");

enum { P_THREAD, P_CLASS, P_METHOD, P_N };

/* One set of interned names: open addressing over offsets into the
 * arena (0: empty), each name stored as its 4-byte length and bytes. */
struct jnames {
        uint32_t *slot;
        size_t cap, n; /* cap a power of two */
};

struct tm_java_stats_acc {
        const struct tm_schema *s;
        struct tm_java_stats st;
        int8_t pos[TM_SCHEMA_KINDS_MAX][P_N]; /* position of each field, -1 */
        int8_t var[TM_SCHEMA_KINDS_MAX][P_N]; /* var[] slot of class, method */
        int8_t jk[TM_SCHEMA_KINDS_MAX];       /* enum tm_java_kind, -1 */
        struct jnames classes, methods;
        uint8_t *arena;
        size_t alen, acap;
        uint8_t *key; /* "class.method" */
        size_t kcap;
        size_t peak;
};

/* The one rule (family.h): what the statistics need. */
static int java_claims(const struct tm_schema *s)
{
        return tm_schema_kind(s, "method_entry") >= 0 && tm_schema_kind(s, "object_alloc") >= 0 &&
               tm_schema_field(s, "thread") >= 0 && tm_schema_field(s, "class") >= 0 &&
               tm_schema_field(s, "method") >= 0;
}

static struct tm_family_acc *fam_start(const struct tm_schema *s)
{
        struct tm_java_stats_acc *a = calloc(1, sizeof *a);
        if (!a)
                return NULL;
        a->s = s;
        static const char *const fname[P_N] = {"thread", "class", "method"};
        for (unsigned k = 0; k < s->nkinds; k++) {
                a->jk[k] = (int8_t)tm_schema_kind(&tm_schema_java, s->kind[k].name);
                for (unsigned p = 0; p < P_N; p++) {
                        int f = tm_schema_field(s, fname[p]);
                        int at = f < 0 ? -1 : tm_kind_pos(&s->kind[k], (unsigned)f);
                        a->pos[k][p] = (int8_t)at;
                        a->var[k][p] =
                            (int8_t)(at < 0 || !tm_field_is_var(&s->field[f])
                                         ? -1
                                         : (int)tm_kind_var_slot(s, &s->kind[k], (unsigned)at));
                }
        }
        return (struct tm_family_acc *)a;
}

static void fam_free(struct tm_family_acc *fa)
{
        struct tm_java_stats_acc *a = (struct tm_java_stats_acc *)fa;
        if (!a)
                return;
        free(a->classes.slot);
        free(a->methods.slot);
        free(a->arena);
        free(a->key);
        free(a);
}

static size_t fam_peak_mem(const struct tm_family_acc *fa)
{
        return ((const struct tm_java_stats_acc *)fa)->peak;
}

static void note_mem(struct tm_java_stats_acc *a)
{
        size_t held = a->acap + a->kcap + (a->classes.cap + a->methods.cap) * sizeof(uint32_t);
        if (held > a->peak)
                a->peak = held;
}

/* ---- interning ---- */

static uint64_t name_hash(const uint8_t *p, size_t n)
{
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 0x100000001b3ull;
        return h;
}

static int name_eq(const struct tm_java_stats_acc *a, uint32_t off, const uint8_t *p, size_t n)
{
        uint32_t len;
        memcpy(&len, a->arena + off, 4);
        return len == n && memcmp(a->arena + off + 4, p, n) == 0;
}

static size_t slot_find(const struct tm_java_stats_acc *a, const struct jnames *t, const uint8_t *p,
                        size_t n)
{
        size_t j = (size_t)name_hash(p, n) & (t->cap - 1);
        while (t->slot[j] && !name_eq(a, t->slot[j], p, n))
                j = (j + 1) & (t->cap - 1);
        return j;
}

static int names_grow(struct tm_java_stats_acc *a, struct jnames *t)
{
        size_t ncap = t->cap ? t->cap * 2 : 1024;
        uint32_t *ns = calloc(ncap, sizeof *ns);
        if (!ns)
                return -1;
        struct jnames o = *t;
        t->slot = ns;
        t->cap = ncap;
        for (size_t i = 0; i < o.cap; i++)
                if (o.slot[i]) {
                        uint32_t len;
                        memcpy(&len, a->arena + o.slot[i], 4);
                        ns[slot_find(a, t, a->arena + o.slot[i] + 4, len)] = o.slot[i];
                }
        free(o.slot);
        note_mem(a);
        return 0;
}

/* Add name p[0..n) to t unless it is there; past the limits (or out of
 * memory) it is not added and the counts become lower bounds. */
static void intern(struct tm_java_stats_acc *a, struct jnames *t, uint64_t *count, const uint8_t *p,
                   size_t n)
{
        if (t->cap && t->slot[slot_find(a, t, p, n)])
                return;
        struct tm_java_stats *st = &a->st;
        if (st->classes + st->methods >= TM_JAVA_NAMES_MAX ||
            a->alen + 4 + n > TM_JAVA_NAME_BYTES) {
                st->names_inexact = 1;
                return;
        }
        if ((t->n + 1) * 2 > t->cap && names_grow(a, t) < 0) {
                st->names_inexact = 1;
                return;
        }
        if (a->alen == 0)
                a->alen = 1; /* offset 0 marks an empty slot */
        if (a->alen + 4 + n > a->acap) {
                size_t ncap = a->acap ? a->acap : 65536;
                while (ncap < a->alen + 4 + n)
                        ncap *= 2;
                uint8_t *na = realloc(a->arena, ncap);
                if (!na) {
                        st->names_inexact = 1;
                        return;
                }
                a->arena = na;
                a->acap = ncap;
                note_mem(a);
        }
        uint32_t len = (uint32_t)n, off = (uint32_t)a->alen;
        memcpy(a->arena + off, &len, 4);
        memcpy(a->arena + off + 4, p, n);
        a->alen += 4 + n;
        t->slot[slot_find(a, t, p, n)] = off;
        t->n++;
        (*count)++;
}

static void intern_names(struct tm_java_stats_acc *a, const struct tm_rec *r)
{
        const int8_t *pos = a->pos[r->kind], *var = a->var[r->kind];
        if (var[P_CLASS] < 0)
                return;
        const uint8_t *cl = r->var[var[P_CLASS]];
        size_t cn = (size_t)r->v[pos[P_CLASS]];
        intern(a, &a->classes, &a->st.classes, cl, cn);
        if (var[P_METHOD] < 0)
                return;
        size_t mn = (size_t)r->v[pos[P_METHOD]], kn = cn + 1 + mn;
        if (kn > a->kcap) {
                uint8_t *nk = realloc(a->key, kn);
                if (!nk) {
                        a->st.names_inexact = 1;
                        return;
                }
                a->key = nk;
                a->kcap = kn;
                note_mem(a);
        }
        memcpy(a->key, cl, cn);
        a->key[cn] = '.'; /* class names use '/', so the pair is unambiguous */
        memcpy(a->key + cn + 1, r->var[var[P_METHOD]], mn);
        intern(a, &a->methods, &a->st.methods, a->key, kn);
}

/* ---- counting ---- */

/* The index of thread id among those counted one by one, or -1. */
static int thread_of(struct tm_java_stats *st, uint64_t id)
{
        for (unsigned i = 0; i < st->nthreads; i++)
                if (st->thread_id[i] == id)
                        return (int)i;
        if (st->nthreads < TM_JAVA_STATS_IDS) {
                st->thread_id[st->nthreads] = id;
                return (int)st->nthreads++;
        }
        return -1;
}

static void thread_add(struct tm_java_stats *st, uint64_t id, int jk)
{
        int t = thread_of(st, id);
        if (t < 0) {
                st->thread_other++;
                st->thread_other_entries += jk == TM_JK_METHOD_ENTRY;
                if (jk == TM_JK_METHOD_ENTRY || jk == TM_JK_METHOD_EXIT || jk == TM_JK_FRAME_POP)
                        st->depth_inexact = 1;
                return;
        }
        st->thread_n[t]++;
        if (jk == TM_JK_METHOD_ENTRY) {
                st->thread_entries[t]++;
                if (++st->thread_depth[t] > st->thread_max_depth[t])
                        st->thread_max_depth[t] = st->thread_depth[t];
                if (st->thread_depth[t] > st->max_depth)
                        st->max_depth = st->thread_depth[t];
        } else if (jk == TM_JK_METHOD_EXIT || jk == TM_JK_FRAME_POP) {
                if (st->thread_depth[t])
                        st->thread_depth[t]--;
                else
                        st->exits_not_entered++;
        }
}

static void fam_add(struct tm_family_acc *fa, const struct tm_rec *r, size_t n)
{
        struct tm_java_stats_acc *a = (struct tm_java_stats_acc *)fa;
        struct tm_java_stats *st = &a->st;
        for (size_t i = 0; i < n; i++) {
                int jk = a->jk[r[i].kind];
                if (jk >= 0)
                        st->events[jk]++;
                if (jk == TM_JK_OBJECT_ALLOC) {
                        st->allocs++;
                        if (++st->live > st->max_live)
                                st->max_live = st->live;
                } else if (jk == TM_JK_OBJECT_FREE) {
                        st->frees++;
                        if (st->live)
                                st->live--;
                        else
                                st->frees_not_live++;
                }
                if (a->pos[r[i].kind][P_THREAD] >= 0)
                        thread_add(st, r[i].v[a->pos[r[i].kind][P_THREAD]], jk);
                intern_names(a, &r[i]);
        }
}

static void fam_finish(struct tm_family_acc *fa, void *block)
{
        memcpy(block, &((struct tm_java_stats_acc *)fa)->st, sizeof(struct tm_java_stats));
}

/* Parts within their wholes, flags 0 or 1, the thread list within its
 * arrays and each thread's figures within its records. */
static int fam_stats_ok(const void *block)
{
        const struct tm_java_stats *st = block;
        if (st->nthreads > TM_JAVA_STATS_IDS || st->names_inexact > 1 || st->depth_inexact > 1 ||
            st->allocs != st->events[TM_JK_OBJECT_ALLOC] ||
            st->frees != st->events[TM_JK_OBJECT_FREE] || st->frees_not_live > st->frees ||
            st->live > st->max_live || st->max_live > st->allocs ||
            st->thread_other_entries > st->thread_other)
                return 0;
        for (unsigned i = 0; i < st->nthreads; i++)
                if (st->thread_entries[i] > st->thread_n[i] ||
                    st->thread_depth[i] > st->thread_max_depth[i] ||
                    st->thread_max_depth[i] > st->thread_entries[i] ||
                    st->thread_max_depth[i] > st->max_depth)
                        return 0;
        return 1;
}

/* ---- the report ---- */

#define OUT(...)                                                                                   \
        do {                                                                                       \
                int k_ = snprintf(dst + n, n < cap ? cap - n : 0, __VA_ARGS__);                    \
                if (k_ > 0)                                                                        \
                        n += (size_t)k_;                                                           \
        } while (0)

static size_t fam_report(const void *block, const struct tm_schema *s, char *dst, size_t cap)
{
        (void)s;
        const struct tm_java_stats *st = block;
        size_t n = 0;
        const char *least = st->names_inexact ? "at least " : "";
        OUT("\njava\n");
        OUT("  events per type\n");
        for (unsigned k = 0; k < TM_JK_N; k++) {
                uint32_t tag = tm_schema_java.kind[k].tag;
                OUT("    %c%c %-14s %" PRIu64 "\n", (char)(tag >> 8), (char)tag,
                    tm_schema_java.kind[k].name, st->events[k]);
        }
        OUT("  classes loaded     %" PRIu64 "\n", st->events[TM_JK_CLASS_LOAD]);
        OUT("  classes named      %s%" PRIu64 "\n", least, st->classes);
        OUT("  methods named      %s%" PRIu64 "\n", least, st->methods);
        if (st->names_inexact)
                OUT("  (the name table is full: at most %u names, %u bytes)\n", TM_JAVA_NAMES_MAX,
                    TM_JAVA_NAME_BYTES);
        OUT("  objects allocated  %" PRIu64 "\n", st->allocs);
        OUT("  objects freed      %" PRIu64 "\n", st->frees);
        OUT("  max live objects   %" PRIu64 "\n", st->max_live);
        OUT("  live at end        %" PRIu64 "\n", st->live);
        OUT("  frees when none was live: %" PRIu64 "\n", st->frees_not_live);
        if (st->depth_inexact)
                OUT("  max stack depth    not known (more than %u threads)\n", TM_JAVA_STATS_IDS);
        else
                OUT("  max stack depth    %" PRIu64 "\n", st->max_depth);
        OUT("  exits of frames not entered: %" PRIu64 "\n", st->exits_not_entered);
        OUT("\nper thread          records  method entries  depth at end  max depth\n");
        for (unsigned i = 0; i < st->nthreads; i++)
                OUT("  %-18" PRIu64 " %7" PRIu64 " %15" PRIu64 " %13" PRIu64 " %10" PRIu64 "\n",
                    st->thread_id[i], st->thread_n[i], st->thread_entries[i], st->thread_depth[i],
                    st->thread_max_depth[i]);
        if (st->thread_other)
                OUT("  %-18s %7" PRIu64 " %15" PRIu64 "\n", "(others)", st->thread_other,
                    st->thread_other_entries);
        return n;
}

static void fam_json(const void *block, const struct tm_schema *s, struct tm_json *o)
{
        (void)s;
        const struct tm_java_stats *st = block;
        tm_json_open(o, "java", '{');
        tm_json_open(o, "events", '{');
        for (unsigned k = 0; k < TM_JK_N; k++)
                tm_json_u64(o, tm_schema_java.kind[k].name, st->events[k]);
        tm_json_close(o, '}');
        tm_json_u64(o, "classes_loaded", st->events[TM_JK_CLASS_LOAD]);
        tm_json_u64(o, "classes_named", st->classes);
        tm_json_u64(o, "methods_named", st->methods);
        tm_json_bool(o, "names_exact", !st->names_inexact);
        tm_json_u64(o, "objects_allocated", st->allocs);
        tm_json_u64(o, "objects_freed", st->frees);
        tm_json_u64(o, "max_live_objects", st->max_live);
        tm_json_u64(o, "live_objects", st->live);
        tm_json_u64(o, "frees_not_live", st->frees_not_live);
        if (st->depth_inexact)
                tm_json_str(o, "max_stack_depth", NULL);
        else
                tm_json_u64(o, "max_stack_depth", st->max_depth);
        tm_json_u64(o, "exits_not_entered", st->exits_not_entered);
        tm_json_open(o, "threads", '[');
        for (unsigned i = 0; i < st->nthreads; i++) {
                tm_json_open(o, NULL, '{');
                tm_json_u64(o, "id", st->thread_id[i]);
                tm_json_u64(o, "records", st->thread_n[i]);
                tm_json_u64(o, "method_entries", st->thread_entries[i]);
                tm_json_u64(o, "depth", st->thread_depth[i]);
                tm_json_u64(o, "max_depth", st->thread_max_depth[i]);
                tm_json_close(o, '}');
        }
        tm_json_close(o, ']');
        tm_json_u64(o, "threads_other", st->thread_other);
        tm_json_u64(o, "threads_other_method_entries", st->thread_other_entries);
        tm_json_close(o, '}');
}

static unsigned fam_stream_ids(const void *block, const uint64_t **ids)
{
        const struct tm_java_stats *st = block;
        *ids = st->thread_id;
        return (unsigned)st->nthreads;
}

/* ---- the tables (sections/classes, sections/methods) ---- */

static const char *const java_tables[] = {"classes", "methods", NULL};

/* Table i (0 classes, 1 methods): a line `number name` for each name of
 * that set, numbered from 0 in the order they were first met (the arena's
 * order; an entry of the arena is of set t when t's slot for its bytes
 * holds its offset, so a class named like a class.method pair is told
 * apart), then, when the table was full, a `#` line saying so. */
static int fam_table(struct tm_family_acc *fa, unsigned i, char **out, size_t *len)
{
        struct tm_java_stats_acc *a = (struct tm_java_stats_acc *)fa;
        const struct jnames *t = i == 0 ? &a->classes : &a->methods;
        size_t cap = a->alen + t->n * 10 + 160, n = 0;
        char *b = malloc(cap);
        if (!b)
                return -ENOMEM;
        uint64_t num = 0;
        for (size_t off = 1; off < a->alen;) {
                uint32_t l;
                memcpy(&l, a->arena + off, 4);
                const uint8_t *p = a->arena + off + 4;
                if (t->cap && t->slot[slot_find(a, t, p, l)] == off) {
                        n += (size_t)snprintf(b + n, cap - n, "%" PRIu64 " ", num++);
                        memcpy(b + n, p, l);
                        n += l;
                        b[n++] = '\n';
                }
                off += 4 + l;
        }
        if (a->st.names_inexact)
                n += (size_t)snprintf(b + n, cap - n,
                                      "# more names not numbered: the table holds %u names "
                                      "and %u bytes of them at most\n",
                                      TM_JAVA_NAMES_MAX, TM_JAVA_NAME_BYTES);
        *out = b;
        *len = n;
        return 0;
}

const struct tm_family tm_family_java = {
    .name = "java",
    .claims = java_claims,
    .stats_size = sizeof(struct tm_java_stats),
    .acc_start = fam_start,
    .acc_add = fam_add,
    .acc_finish = fam_finish,
    .acc_free = fam_free,
    .acc_peak_mem = fam_peak_mem,
    .stats_ok = fam_stats_ok,
    .report = fam_report,
    .json = fam_json,
    .stream_field = "thread",
    .stream_ids = fam_stream_ids,
    .tables = java_tables,
    .table = fam_table,
};
