/* The java family's statistics (jstats.h) and its row of the family
 * table (codecs/record/family.h). */
#include "jstats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct tm_java_stats) % 8 == 0 &&
                   sizeof(struct tm_java_stats) <= TM_FAMILY_STATS_MAX,
               "the java statistics are a family block of words");

/* One set of interned names: open addressing over offsets into the
 * arena (0: empty). Each name is stored as its 4-byte length, its 4-byte
 * number (its line in the table: the set's count when it was added) and
 * its bytes. */
struct jnames {
        uint32_t *slot;
        size_t cap, n; /* cap a power of two */
};

#define NAME_HEAD 8 /* length, number */

struct tm_java_stats_acc {
        const struct tm_schema *s;
        struct tm_java_stats st;
        int8_t pos[TM_SCHEMA_KINDS_MAX][TM_JF_N]; /* position of each java field, -1 */
        int8_t var[TM_SCHEMA_KINDS_MAX][TM_JF_N]; /* var[] slot of class, method */
        int8_t jk[TM_SCHEMA_KINDS_MAX];           /* enum tm_java_kind, -1 */
        struct jnames classes, methods;
        uint8_t *arena;
        size_t alen, acap;
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
        for (unsigned k = 0; k < s->nkinds; k++) {
                a->jk[k] = (int8_t)tm_schema_kind(&tm_schema_java, s->kind[k].name);
                for (unsigned p = 0; p < TM_JF_N; p++) {
                        int f = tm_schema_field(s, tm_schema_java.field[p].name);
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
        free(a);
}

static size_t fam_peak_mem(const struct tm_family_acc *fa)
{
        return ((const struct tm_java_stats_acc *)fa)->peak;
}

static void note_mem(struct tm_java_stats_acc *a)
{
        size_t held = a->acap + (a->classes.cap + a->methods.cap) * sizeof(uint32_t);
        if (held > a->peak)
                a->peak = held;
}

/* ---- interning ---- */

/* A name as a record holds it, looked up without copying: a class
 * p[0..n), or a class.method pair p[0..n) '.' q[0..m) (q non-NULL). A
 * method name has no '.', so the pair's last '.' ends its class
 * (tm_java_method_split). */
struct jkey {
        const uint8_t *p, *q;
        size_t n, m;
};

size_t tm_java_method_split(const uint8_t *key, size_t n)
{
        for (size_t i = n; i > 0; i--)
                if (key[i - 1] == '.')
                        return i - 1;
        return n;
}

static size_t key_len(const struct jkey *k)
{
        return k->q ? k->n + 1 + k->m : k->n;
}

/* The key's bytes hashed 8 at a time as one string (a pair's class, '.'
 * and method end to end, so that a pair hashes as its stored bytes do
 * whatever its method holds): a multiply a word, where a byte at a time
 * (FNV) took a sixth of an index pass over a Java trace. */
struct whash {
        uint64_t h, buf; /* buf: the nb bytes not yet mixed, low first */
        unsigned nb;
};

static inline uint64_t wmix(uint64_t h, uint64_t w)
{
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        return h ^ h >> 29;
}

static void whash_feed(struct whash *s, const uint8_t *p, size_t n)
{
        for (; n >= 8; p += 8, n -= 8) {
                uint64_t w;
                memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                w = __builtin_bswap64(w); /* byte i at bits 8i, as below */
#endif
                if (s->nb == 0) {
                        s->h = wmix(s->h, w);
                } else {
                        s->h = wmix(s->h, s->buf | w << (8 * s->nb));
                        s->buf = w >> (64 - 8 * s->nb);
                }
        }
        for (size_t i = 0; i < n; i++) {
                s->buf |= (uint64_t)p[i] << (8 * s->nb);
                if (++s->nb == 8) {
                        s->h = wmix(s->h, s->buf);
                        s->buf = 0;
                        s->nb = 0;
                }
        }
}

static uint64_t key_hash(const struct jkey *k)
{
        struct whash s = {0xcbf29ce484222325ull ^ key_len(k), 0, 0};
        whash_feed(&s, k->p, k->n);
        if (k->q) {
                whash_feed(&s, (const uint8_t *)".", 1);
                whash_feed(&s, k->q, k->m);
        }
        uint64_t h = wmix(s.h, s.buf) * 0xff51afd7ed558ccdull;
        return h ^ h >> 32;
}

static int name_eq(const struct tm_java_stats_acc *a, uint32_t off, const struct jkey *k)
{
        uint32_t len;
        memcpy(&len, a->arena + off, 4);
        const uint8_t *b = a->arena + off + NAME_HEAD;
        if (len != key_len(k) || memcmp(b, k->p, k->n) != 0)
                return 0;
        return !k->q || (b[k->n] == '.' && memcmp(b + k->n + 1, k->q, k->m) == 0);
}

/* The slot of t holding k, or the empty one where it would go. */
static size_t slot_find(const struct tm_java_stats_acc *a, const struct jnames *t,
                        const struct jkey *k)
{
        size_t j = (size_t)key_hash(k) & (t->cap - 1);
        while (t->slot[j] && !name_eq(a, t->slot[j], k))
                j = (j + 1) & (t->cap - 1);
        return j;
}

/* The stored name at arena offset off, as a key. */
static struct jkey stored(const struct tm_java_stats_acc *a, uint32_t off)
{
        uint32_t len;
        memcpy(&len, a->arena + off, 4);
        return (struct jkey){a->arena + off + NAME_HEAD, NULL, len, 0};
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
                        struct jkey k = stored(a, o.slot[i]);
                        ns[slot_find(a, t, &k)] = o.slot[i];
                }
        free(o.slot);
        note_mem(a);
        return 0;
}

/* Add name k to t, numbered t->n, unless it is there; past the limits (or
 * out of memory) it is not added and the counts become lower bounds. */
static void intern(struct tm_java_stats_acc *a, struct jnames *t, uint64_t *count,
                   const struct jkey *k)
{
        if (t->cap && t->slot[slot_find(a, t, k)])
                return;
        struct tm_java_stats *st = &a->st;
        size_t n = key_len(k), need = NAME_HEAD + n;
        if (st->classes + st->methods >= TM_JAVA_NAMES_MAX || a->alen + need > TM_JAVA_NAME_BYTES) {
                st->names_inexact = 1;
                return;
        }
        if ((t->n + 1) * 2 > t->cap && names_grow(a, t) < 0) {
                st->names_inexact = 1;
                return;
        }
        if (a->alen == 0)
                a->alen = 1; /* offset 0 marks an empty slot */
        if (a->alen + need > a->acap) {
                size_t ncap = a->acap ? a->acap : 65536;
                while (ncap < a->alen + need)
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
        uint32_t len = (uint32_t)n, num = (uint32_t)t->n, off = (uint32_t)a->alen;
        uint8_t *b = a->arena + off;
        memcpy(b, &len, 4);
        memcpy(b + 4, &num, 4);
        memcpy(b + NAME_HEAD, k->p, k->n);
        if (k->q) {
                b[NAME_HEAD + k->n] = '.';
                memcpy(b + NAME_HEAD + k->n + 1, k->q, k->m);
        }
        a->alen += need;
        t->slot[slot_find(a, t, k)] = off;
        t->n++;
        (*count)++;
}

/* r's class (pair 0) or class.method pair (pair 1) as a key: 1, or 0 when
 * r's kind lacks the fields. */
static int rec_key(const struct tm_java_stats_acc *a, const struct tm_rec *r, int pair,
                   struct jkey *k)
{
        const int8_t *pos = a->pos[r->kind], *var = a->var[r->kind];
        if (var[TM_JF_CLASS] < 0 || (pair && var[TM_JF_METHOD] < 0))
                return 0;
        *k = (struct jkey){r->var[var[TM_JF_CLASS]], NULL, (size_t)r->v[pos[TM_JF_CLASS]], 0};
        if (pair) {
                k->q = r->var[var[TM_JF_METHOD]];
                k->m = (size_t)r->v[pos[TM_JF_METHOD]];
        }
        return 1;
}

static void intern_names(struct tm_java_stats_acc *a, const struct tm_rec *r)
{
        struct jkey k;
        if (rec_key(a, r, 0, &k))
                intern(a, &a->classes, &a->st.classes, &k);
        if (rec_key(a, r, 1, &k))
                intern(a, &a->methods, &a->st.methods, &k);
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
                if (a->pos[r[i].kind][TM_JF_THREAD] >= 0)
                        thread_add(st, r[i].v[a->pos[r[i].kind][TM_JF_THREAD]], jk);
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

/* ---- the rows ---- */

/* The name counts are lower bounds once the name table is full; what a
 * recorder could not see is in its notes (comments). */
static void fam_rows(const void *block, const struct tm_schema *s, const struct tm_family_info *in,
                     struct tm_rows *k)
{
        (void)s;
        (void)in;
        const struct tm_java_stats *st = block;
        int names = !st->names_inexact, noted = st->events[TM_JK_COMMENT] != 0;
        tm_row_text(k, "\njava\n  events per type\n");
        for (unsigned i = 0; i < TM_JK_EVENTS; i++) {
                uint32_t tag = tm_schema_java.kind[i].tag;
                tm_row_u64(k, NULL, (tag >> 8) & 0xff, NULL, 1, "    {c}");
                tm_row_u64(k, NULL, tag & 0xff, NULL, 1, "{c}");
                tm_row_u64(k, TM_KEY("events", tm_schema_java.kind[i].name), st->events[i],
                           "records", 1, " {n-14} {}\n");
        }
        tm_row_u64(k, TM_KEY("classes_loaded"), st->events[TM_JK_CLASS_LOAD], "classes", 1,
                   noted ? "  classes loaded     {} (as recorded: see the notes)\n"
                         : "  classes loaded     {}\n");
        tm_row_u64(k, TM_KEY("classes_named"), st->classes, "classes", names,
                   names ? "  classes named      {}\n" : "  classes named      at least {}\n");
        tm_row_u64(k, TM_KEY("methods_named"), st->methods, "methods", names,
                   names ? "  methods named      {}\n" : "  methods named      at least {}\n");
        if (!names) {
                char full[96];
                snprintf(full, sizeof full,
                         "  (the name table is full: at most %u names, %u bytes)\n",
                         TM_JAVA_NAMES_MAX, TM_JAVA_NAME_BYTES);
                tm_row_text(k, full);
        }
        tm_row_u64(k, TM_KEY("objects_allocated"), st->allocs, "objects", 1,
                   noted ? "  objects allocated  {} (as recorded: see the notes)\n"
                         : "  objects allocated  {}\n");
        tm_row_u64(k, TM_KEY("objects_freed"), st->frees, "objects", 1,
                   "  objects freed      {}\n");
        tm_row_u64(k, TM_KEY("max_live_objects"), st->max_live, "objects", 1,
                   "  max live objects   {}\n");
        tm_row_u64(k, TM_KEY("live_objects"), st->live, "objects", 1, "  live at end        {}\n");
        tm_row_u64(k, TM_KEY("frees_not_live"), st->frees_not_live, "records", 1,
                   "  frees when none was live: {}\n");
        char deep[80];
        snprintf(deep, sizeof deep, "  max stack depth    {} (more than %u threads)\n",
                 TM_JAVA_STATS_IDS);
        tm_row_u64_known(k, TM_KEY("max_stack_depth"), st->max_depth, "frames", !st->depth_inexact,
                         st->depth_inexact ? deep : "  max stack depth    {}\n");
        tm_row_u64(k, TM_KEY("exits_not_entered"), st->exits_not_entered, "records", 1,
                   "  exits of frames not entered: {}\n");
        tm_row_text(k, "\nper thread          records  method entries  depth at end  max depth\n");
        for (unsigned i = 0; i < st->nthreads; i++) {
                char id[24];
                snprintf(id, sizeof id, "%" PRIu64, st->thread_id[i]);
                tm_row_u64(k, TM_KEY("threads", id, "records"), st->thread_n[i], "records", 1,
                           "  {N-18} {7}");
                tm_row_u64(k, TM_KEY("threads", id, "method_entries"), st->thread_entries[i],
                           "records", 1, " {15}");
                tm_row_u64(k, TM_KEY("threads", id, "depth"), st->thread_depth[i], "frames", 1,
                           " {13}");
                tm_row_u64(k, TM_KEY("threads", id, "max_depth"), st->thread_max_depth[i], "frames",
                           1, " {10}\n");
        }
        tm_row_u64(k, TM_KEY("threads_other"), st->thread_other, "records", 1,
                   st->thread_other ? "  (others)           {7}" : NULL);
        tm_row_u64(k, TM_KEY("threads_other_method_entries"), st->thread_other_entries, "records",
                   1, st->thread_other ? " {15}\n" : NULL);
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
 * that set, in the order they were first met (the arena's order, which
 * is the order of their numbers; an entry of the arena is of set t when
 * t's slot for its bytes holds its offset, so a class named like a
 * class.method pair is told apart), then, when the table was full, a `#`
 * line saying so. */
static int fam_table(struct tm_family_acc *fa, unsigned i, char **out, size_t *len)
{
        struct tm_java_stats_acc *a = (struct tm_java_stats_acc *)fa;
        const struct jnames *t = i == 0 ? &a->classes : &a->methods;
        size_t cap = a->alen + t->n * 10 + 160, n = 0;
        char *b = malloc(cap);
        if (!b)
                return -ENOMEM;
        for (size_t off = 1; off < a->alen;) {
                struct jkey k = stored(a, (uint32_t)off);
                if (t->cap && t->slot[slot_find(a, t, &k)] == off) {
                        uint32_t num;
                        memcpy(&num, a->arena + off + 4, 4);
                        n += (size_t)snprintf(b + n, cap - n, "%" PRIu32 " ", num);
                        memcpy(b + n, k.p, k.n);
                        n += k.n;
                        b[n++] = '\n';
                }
                off += NAME_HEAD + k.n;
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

/* ---- the binary record (jstats.h) ---- */

/* k's number in t, or TM_JAVA_UNNUMBERED. */
static uint32_t name_number(const struct tm_java_stats_acc *a, const struct jnames *t,
                            const struct jkey *k)
{
        uint32_t off = t->cap ? t->slot[slot_find(a, t, k)] : 0, num = TM_JAVA_UNNUMBERED;
        if (off)
                memcpy(&num, a->arena + off + 4, 4);
        return num;
}

static void put_le(uint8_t *dst, uint64_t v, unsigned bytes)
{
        for (unsigned b = 0; b < bytes; b++)
                dst[b] = (uint8_t)(v >> (8 * b));
}

static void fam_binary(const struct tm_family_acc *tables, uint8_t *dst, const struct tm_schema *s,
                       const struct tm_rec *r, size_t n)
{
        (void)s; /* the accumulator's: tables was made for s */
        const struct tm_java_stats_acc *a = (const struct tm_java_stats_acc *)tables;
        /* each field's offset and bytes (jstats.h): a name is a number */
        static const unsigned at[TM_JF_EVENTS] = {8, 16, 32, 36, 24},
                              w[TM_JF_EVENTS] = {8, 8, 4, 4, 8};
        for (size_t i = 0; i < n; i++, dst += TM_JAVA_BIN_SIZE) {
                const int8_t *pos = a->pos[r[i].kind];
                uint32_t present = 0;
                memset(dst, 0, TM_JAVA_BIN_SIZE);
                put_le(dst, a->jk[r[i].kind] < 0 ? UINT32_MAX : (uint32_t)a->jk[r[i].kind], 4);
                for (unsigned f = 0; f < TM_JF_EVENTS; f++)
                        if (pos[f] >= 0) { /* a name not text (another schema's) has no number */
                                present |= 1u << f;
                                put_le(dst + at[f], w[f] == 8 ? r[i].v[pos[f]] : TM_JAVA_UNNUMBERED,
                                       w[f]);
                        }
                put_le(dst + 4, present, 4);
                struct jkey k;
                if (rec_key(a, &r[i], 0, &k))
                        put_le(dst + at[TM_JF_CLASS], name_number(a, &a->classes, &k), 4);
                if (rec_key(a, &r[i], 1, &k))
                        put_le(dst + at[TM_JF_METHOD], name_number(a, &a->methods, &k), 4);
        }
}

#define OUT(...)                                                                                   \
        do {                                                                                       \
                int k_ = snprintf(dst + n, n < cap ? cap - n : 0, __VA_ARGS__);                    \
                if (k_ > 0)                                                                        \
                        n += (size_t)k_;                                                           \
        } while (0)

static size_t fam_layout(char *dst, size_t cap)
{
        size_t n = 0;
        OUT("binary: %u-byte little-endian records, one an event\n", TM_JAVA_BIN_SIZE);
        OUT("C:\n    struct tm_java_rec {\n"
            "        uint32_t kind;      /* the event type, below */\n"
            "        uint32_t present;   /* bit i: the event has field i (0 time, 1 thread,\n"
            "                               2 class, 3 method, 4 object) */\n"
            "        uint64_t time;\n        uint64_t thread;\n        uint64_t object;\n"
            "        uint32_t class_no;  /* the class's line number in sections/classes */\n"
            "        uint32_t method_no; /* class.method's in sections/methods */\n"
            "    }; /* a field the event lacks is 0; a name past the tables' bound\n"
            "          (%u names) is %" PRIu32 " (2^32 - 1) */\n",
            TM_JAVA_NAMES_MAX, TM_JAVA_UNNUMBERED);
        OUT("numpy:\n    np.dtype([(\"kind\", \"<u4\"), (\"present\", \"<u4\"), "
            "(\"time\", \"<u8\"), (\"thread\", \"<u8\"), (\"object\", \"<u8\"), "
            "(\"class_no\", \"<u4\"), (\"method_no\", \"<u4\")])\nkinds:");
        for (unsigned k = 0; k < TM_JK_N; k++)
                OUT(" %u=%s", k, tm_schema_java.kind[k].name);
        OUT("\n");
        return n;
}

static const struct tm_family_more java_more = {
    .tables = java_tables,
    .table = fam_table,
};

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
    .rows = fam_rows,
    .stream_field = "thread",
    .stream_ids = fam_stream_ids,
    .bin_size = TM_JAVA_BIN_SIZE,
    .binary = fam_binary,
    .bin_layout = fam_layout,
    .more = &java_more,
};
