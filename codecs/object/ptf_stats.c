/* The object family's statistics and verifier (ptf_stats.h) and its row
 * of the family table (codecs/record/family.h). */
#include "ptf_stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


_Static_assert(sizeof(struct tm_ptf_stats) % 8 == 0 &&
                   sizeof(struct tm_ptf_stats) <= TM_FAMILY_STATS_MAX,
               "the object statistics are a family block of words");

const char *const tm_ptf_rule_name[TM_PR_N] = {
    [TM_PR_NULL] = "null",
    [TM_PR_REUSED] = "reused",
    [TM_PR_BEFORE_CREATE] = "before_create",
    [TM_PR_AFTER_DELETE] = "after_delete",
    [TM_PR_DELETE_MISSING] = "delete_missing",
    [TM_PR_BRACKETS] = "brackets",
};

#define PRIM_MIN 10 /* Table 2's reserved range */
#define PRIM_MAX 40

/* What a kind does. */
enum { R_OTHER, R_CREATE, R_DELETE, R_USE, R_EDGE_READ, R_EDGE_WRITE, R_TS, R_TE };
/* The OId fields, and whether 0 (NULL) is allowed in each. */
enum { P_FORMAT, P_OID, P_FROM, P_TO, P_CONTAINER, P_SUPER, P_N };
static const char *const pname[P_N] = {"FormatId", "OId",          "FromOId",
                                       "ToOId",    "ContainerOId", "SuperFormatId"};
static const uint8_t null_ok[P_N] = {[P_TO] = 1, [P_SUPER] = 1};

/* an OId's slot: S_FREE is an empty slot; an OId seen is never created
 * yet (used before its create), live, deleted, or a primitive format */
enum { S_FREE, S_UNKNOWN, S_LIVE, S_DELETED, S_PRIM };

struct tm_family_acc {
        struct tm_ptf_stats st;
        uint8_t role[TM_SCHEMA_KINDS_MAX];
        int8_t pos[TM_SCHEMA_KINDS_MAX][P_N]; /* position of each OId field, -1 */
        int8_t list_pos[TM_SCHEMA_KINDS_MAX], ndata_pos[TM_SCHEMA_KINDS_MAX];
        uint64_t *key;
        uint8_t *state;
        size_t cap, used, peak;
        uint64_t live, depth, open_at; /* open_at: record of the outermost open ts */
        unsigned list_slot[TM_SCHEMA_KINDS_MAX];
};

static int obj_claims(const struct tm_schema *s)
{
        return tm_schema_kind(s, "co") >= 0 && tm_schema_kind(s, "ew") >= 0 &&
               tm_schema_field(s, "OId") >= 0;
}

static void obj_roles(struct tm_family_acc *a, const struct tm_schema *s)
{
        static const struct {
                const char *kind;
                uint8_t role;
        } roles[] = {{"fo", R_CREATE},    {"co", R_CREATE},     {"cao", R_CREATE}, {"do", R_DELETE},
                     {"er", R_EDGE_READ}, {"ew", R_EDGE_WRITE}, {"ts", R_TS},      {"te", R_TE}};
        int list = tm_schema_field(s, "MemberFormatIds"),
            nd = tm_schema_field(s, "NumberOfDataMembers");
        for (unsigned k = 0; k < s->nkinds; k++) {
                const struct tm_kind *kd = &s->kind[k];
                a->role[k] = R_USE;
                for (unsigned i = 0; i < sizeof roles / sizeof roles[0]; i++)
                        if (strcmp(kd->name, roles[i].kind) == 0)
                                a->role[k] = roles[i].role;
                if (strcmp(kd->name, "Trace") == 0 || strcmp(kd->name, "gr") == 0)
                        a->role[k] = R_OTHER;
                for (unsigned p = 0; p < P_N; p++) {
                        int f = tm_schema_field(s, pname[p]);
                        a->pos[k][p] = (int8_t)(f < 0 ? -1 : tm_kind_pos(kd, (unsigned)f));
                }
                /* fo creates its FormatId */
                if (strcmp(kd->name, "fo") == 0) {
                        a->pos[k][P_OID] = a->pos[k][P_FORMAT];
                        a->pos[k][P_FORMAT] = -1;
                }
                a->list_pos[k] = (int8_t)(list < 0 ? -1 : tm_kind_pos(kd, (unsigned)list));
                a->ndata_pos[k] = (int8_t)(nd < 0 ? -1 : tm_kind_pos(kd, (unsigned)nd));
                if (a->list_pos[k] >= 0)
                        a->list_slot[k] = tm_kind_var_slot(s, kd, (unsigned)a->list_pos[k]);
        }
}

static size_t slot_of(const struct tm_family_acc *a, uint64_t oid)
{
        uint64_t h = oid * 0x9e3779b97f4a7c15ull;
        size_t j = (size_t)(h >> 20) & (a->cap - 1);
        while (a->state[j] != S_FREE && a->key[j] != oid)
                j = (j + 1) & (a->cap - 1);
        return j;
}

static int table_grow(struct tm_family_acc *a)
{
        size_t ncap = a->cap ? a->cap * 2 : 1024, ocap = a->cap;
        if (ncap > TM_PTF_OIDS_MAX)
                return -ENOSPC;
        uint64_t *okey = a->key;
        uint8_t *ost = a->state;
        a->key = calloc(ncap, sizeof *a->key);
        a->state = calloc(ncap, 1);
        if (!a->key || !a->state) {
                free(a->key);
                free(a->state);
                a->key = okey;
                a->state = ost;
                return -ENOMEM;
        }
        a->cap = ncap;
        for (size_t i = 0; i < ocap; i++)
                if (ost[i] != S_FREE) {
                        size_t j = slot_of(a, okey[i]);
                        a->key[j] = okey[i];
                        a->state[j] = ost[i];
                }
        free(okey);
        free(ost);
        size_t held = (ncap + ocap) * (sizeof *a->key + 1); /* both, while copying */
        if (held > a->peak)
                a->peak = held;
        return 0;
}

/* The slot of oid, S_UNKNOWN when new (NULL when the table cannot grow:
 * the rules about oid are then not checked). */
static uint8_t *state_of(struct tm_family_acc *a, uint64_t oid)
{
        int full = (a->used + 1) * 2 > a->cap && table_grow(a) < 0;
        size_t j = slot_of(a, oid);
        if (full && a->state[j] == S_FREE) { /* known OIds are still checked */
                a->st.unchecked++;
                return NULL;
        }
        if (a->state[j] == S_FREE) {
                a->key[j] = oid;
                a->state[j] = S_UNKNOWN;
                a->used++;
        }
        return &a->state[j];
}

static void violate(struct tm_family_acc *a, unsigned rule)
{
        if (!a->st.violations[rule]++)
                a->st.first[rule] = a->st.records + 1;
}

/* oid used as an object or a format */
static void use(struct tm_family_acc *a, uint64_t oid, int zero_ok)
{
        if (oid == 0) {
                if (!zero_ok)
                        violate(a, TM_PR_NULL);
                return;
        }
        uint8_t *s = state_of(a, oid);
        if (s && *s == S_UNKNOWN)
                violate(a, TM_PR_BEFORE_CREATE);
        else if (s && *s == S_DELETED)
                violate(a, TM_PR_AFTER_DELETE);
}

static void create(struct tm_family_acc *a, uint64_t oid)
{
        if (oid == 0) {
                violate(a, TM_PR_NULL);
                return;
        }
        uint8_t *s = state_of(a, oid); /* NULL: not checked, counted as kept */
        if (s && *s != S_UNKNOWN) {
                violate(a, TM_PR_REUSED);
                return;
        }
        if (s)
                *s = S_LIVE;
        a->st.created++;
        if (++a->live > a->st.live_max)
                a->st.live_max = a->live;
}

static void delete (struct tm_family_acc *a, uint64_t oid)
{
        if (oid == 0) {
                violate(a, TM_PR_NULL);
                return;
        }
        uint8_t *s = state_of(a, oid);
        if (s && *s != S_LIVE) {
                violate(a, TM_PR_DELETE_MISSING);
                return;
        }
        if (s)
                *s = S_DELETED;
        a->st.deleted++;
        if (a->live)
                a->live--;
}

static uint64_t le64(const uint8_t *b)
{
        uint64_t v = 0;
        for (unsigned k = 0; k < 8; k++)
                v |= (uint64_t)b[k] << (8 * k);
        return v;
}

/* fo's member formats: NumberOfDataMembers format ids, then pairs of an
 * array format id and its element count */
static void use_members(struct tm_family_acc *a, const struct tm_rec *r, unsigned k)
{
        if (a->list_pos[k] < 0)
                return;
        uint64_t n = r->v[a->list_pos[k]], nd = a->ndata_pos[k] >= 0 ? r->v[a->ndata_pos[k]] : n;
        const uint8_t *b = r->var[a->list_slot[k]];
        for (uint64_t i = 0; i < n; i++)
                if (i < nd || (i - nd) % 2 == 0)
                        use(a, le64(b + 8 * i), 0);
}

static void obj_add1(struct tm_family_acc *a, const struct tm_rec *r)
{
        unsigned k = r->kind;
        const int8_t *pos = a->pos[k];
        switch (a->role[k]) {
        case R_TS:
                if (a->depth++ == 0)
                        a->open_at = a->st.records;
                if (a->depth > a->st.depth_max)
                        a->st.depth_max = a->depth;
                break;
        case R_TE:
                if (a->depth == 0)
                        violate(a, TM_PR_BRACKETS);
                else
                        a->depth--;
                break;
        case R_OTHER:
                break;
        default:
                for (unsigned p = 0; p < P_N; p++)
                        if (pos[p] >= 0 &&
                            !(p == P_OID && (a->role[k] == R_CREATE || a->role[k] == R_DELETE)))
                                use(a, r->v[pos[p]], null_ok[p]);
                use_members(a, r, k);
                if (a->role[k] == R_CREATE && pos[P_OID] >= 0)
                        create(a, r->v[pos[P_OID]]);
                if (a->role[k] == R_DELETE && pos[P_OID] >= 0)
                        delete (a, r->v[pos[P_OID]]);
                a->st.edges_read += a->role[k] == R_EDGE_READ;
                a->st.edges_written += a->role[k] == R_EDGE_WRITE;
        }
        a->st.records++;
}

/* ---- the family's hooks ---- */

static struct tm_family_acc *fam_start(const struct tm_schema *s)
{
        struct tm_family_acc *a = calloc(1, sizeof *a);
        if (!a || table_grow(a) < 0) {
                free(a);
                return NULL;
        }
        obj_roles(a, s);
        for (uint64_t f = PRIM_MIN; f <= PRIM_MAX; f++)
                *state_of(a, f) = S_PRIM;
        return a;
}

static void fam_add(struct tm_family_acc *a, const struct tm_rec *r, size_t n)
{
        for (size_t i = 0; i < n; i++)
                obj_add1(a, &r[i]);
}

static void fam_finish(struct tm_family_acc *a, void *block)
{
        a->st.live_end = a->live;
        a->st.depth_end = a->depth;
        if (a->depth) { /* the outermost ts left open is one violation */
                uint64_t *first = &a->st.first[TM_PR_BRACKETS];
                if (!a->st.violations[TM_PR_BRACKETS]++ || a->open_at + 1 < *first)
                        *first = a->open_at + 1;
        }
        memcpy(block, &a->st, sizeof a->st);
}

static void fam_free(struct tm_family_acc *a)
{
        if (!a)
                return;
        free(a->key);
        free(a->state);
        free(a);
}

static size_t fam_peak_mem(const struct tm_family_acc *a)
{
        return a->peak;
}

/* Parts within their wholes; a first violation within the records, and
 * there exactly when the rule was broken. */
static int fam_stats_ok(const void *block)
{
        const struct tm_ptf_stats *st = block;
        if (st->deleted > st->created || st->live_max > st->created ||
            (!st->unchecked && st->live_end != st->created - st->deleted) ||
            st->live_end > st->live_max ||
            st->depth_end > st->depth_max || st->edges_read > st->records ||
            st->edges_written > st->records - st->edges_read)
                return 0;
        for (unsigned i = 0; i < TM_PR_N; i++)
                if ((st->violations[i] == 0) != (st->first[i] == 0) || st->first[i] > st->records)
                        return 0;
        return st->unchecked <= 4 * st->records; /* at most a few OIds a record */
}

/* The violation counts are lower bounds when uses went unchecked. */
static void fam_rows(const void *block, const struct tm_schema *s,
                     const struct tm_family_info *in, struct tm_rows *k)
{
        (void)s;
        (void)in;
        const struct tm_ptf_stats *st = block;
        int exact = st->unchecked == 0;
        tm_row_text(k, "\nobjects (the object family)\n");
        tm_row_u64(k, TM_KEY("created"), st->created, "objects", 1, "  created              {}\n");
        tm_row_u64(k, TM_KEY("deleted"), st->deleted, "objects", 1, "  deleted              {}\n");
        tm_row_u64(k, TM_KEY("max_live"), st->live_max, "objects", 1,
                   "  live at most         {}\n");
        tm_row_u64(k, TM_KEY("live"), st->live_end, "objects", 1, "  live at the end      {}\n");
        tm_row_u64(k, TM_KEY("edges_read"), st->edges_read, "records", 1,
                   "  edges read           {}\n");
        tm_row_u64(k, TM_KEY("edges_written"), st->edges_written, "records", 1,
                   "  edges written        {}\n");
        tm_row_u64(k, TM_KEY("max_bracket_depth"), st->depth_max, "brackets", 1,
                   "  bracket depth        {} at most, ");
        tm_row_u64(k, TM_KEY("bracket_depth_at_end"), st->depth_end, "brackets", 1,
                   "{} at the end\n");
        tm_row_text(k, "\nverifier: rule, violations, first record (from 0)\n");
        for (unsigned i = 0; i < TM_PR_N; i++) {
                const char *rule = tm_ptf_rule_name[i];
                tm_row_u64(k, TM_KEY("violations", rule, "count"), st->violations[i], "records",
                           exact, "  {N-20} {} ");
                if (st->first[i])
                        tm_row_u64(k, TM_KEY("violations", rule, "first_record"), st->first[i] - 1,
                                   "record number", exact, "{}\n");
                else
                        tm_row_unknown(k, TM_KEY("violations", rule, "first_record"),
                                       "record number", "-\n");
        }
        char note[224];
        snprintf(note, sizeof note,
                 "  not exact: {} uses of objects past the first %u were not checked (the "
                 "verifier's table is full); the counts above take them as keeping the rules\n",
                 TM_PTF_OIDS_MAX / 2);
        tm_row_u64(k, TM_KEY("unchecked"), st->unchecked, "uses", 1, st->unchecked ? note : NULL);
}

/* The verifier: the first rule broken, by record number. */
static int fam_verify(const void *block, const struct tm_schema *s, struct tm_err *err)
{
        (void)s;
        const struct tm_ptf_stats *st = block;
        int first = -1;
        for (unsigned i = 0; i < TM_PR_N; i++)
                if (st->first[i] && (first < 0 || st->first[i] < st->first[first]))
                        first = (int)i;
        if (first < 0 && st->unchecked)
                return tm_err_set(err, -ENOSPC,
                                  "no object rule broken, but %" PRIu64 " uses of objects past "
                                  "the first %u were not checked (the verifier's table is full)",
                                  st->unchecked, TM_PTF_OIDS_MAX / 2);
        if (first < 0)
                return 0;
        uint64_t total = 0;
        for (unsigned i = 0; i < TM_PR_N; i++)
                total += st->violations[i];
        return tm_err_set(err, -EIO,
                          "record %" PRIu64 ": object rule %s broken (%" PRIu64
                          " violations in all; stats lists them)",
                          st->first[first] - 1, tm_ptf_rule_name[first], total);
}

static const struct tm_family_more obj_more = {
    .verify = fam_verify,
};

const struct tm_family tm_family_object = {
    .name = "object",
    .claims = obj_claims,
    .stats_size = sizeof(struct tm_ptf_stats),
    .acc_start = fam_start,
    .acc_add = fam_add,
    .acc_finish = fam_finish,
    .acc_free = fam_free,
    .acc_peak_mem = fam_peak_mem,
    .stats_ok = fam_stats_ok,
    .rows = fam_rows,
    .more = &obj_more,
};
