/* The laplace family (lapfamily.h). */
#include "lapfamily.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(n, sh) {.name = n, .type = TM_FT_UINT, .show = sh}
#define K(n, t, cnt, ...) {.name = n, .tag = t, .nfields = cnt, .field = {__VA_ARGS__}}

const struct tm_schema tm_schema_laplace_kev = {
    .name = "laplace",
    .nfields = TM_LPKF_N,
    .nkinds = TM_LPK_N,
    .field =
        {
            [TM_LPKF_TIME] = F("time", TM_SHOW_HEX),
            [TM_LPKF_SPACE] = F("space", TM_SHOW_HEX),
            [TM_LPKF_CHILD] = F("child", TM_SHOW_HEX),
            [TM_LPKF_ADDRESS] = F("address", TM_SHOW_HEX),
            [TM_LPKF_SIZE] = F("size", TM_SHOW_DEC),
        },
    .kind =
        {
            [TM_LPK_FORK] = K("fork", TM_LPK_FORK, 3, TM_LPKF_TIME, TM_LPKF_SPACE, TM_LPKF_CHILD),
            [TM_LPK_EXEC] = K("exec", TM_LPK_EXEC, 2, TM_LPKF_TIME, TM_LPKF_SPACE),
            [TM_LPK_EXIT] = K("exit", TM_LPK_EXIT, 2, TM_LPKF_TIME, TM_LPKF_SPACE),
            [TM_LPK_SWITCH] = K("switch", TM_LPK_SWITCH, 2, TM_LPKF_TIME, TM_LPKF_SPACE),
            [TM_LPK_MMAP] = K("mmap", TM_LPK_MMAP, 4, TM_LPKF_TIME, TM_LPKF_SPACE, TM_LPKF_ADDRESS, TM_LPKF_SIZE),
            [TM_LPK_MUNMAP] = K("munmap", TM_LPK_MUNMAP, 4, TM_LPKF_TIME, TM_LPKF_SPACE, TM_LPKF_ADDRESS, TM_LPKF_SIZE),
        },
};
#undef F
#undef K


struct lp_acc {
        struct tm_laplace_stats st;
        /* per kind of the schema: -1 the reference kind, 0.. the kernel tag,
         * -2 neither */
        int8_t role[TM_SCHEMA_KINDS_MAX];
        int8_t pos_type[TM_SCHEMA_KINDS_MAX], pos_space[TM_SCHEMA_KINDS_MAX]; /* -1: none */
        unsigned last; /* the table entry of the last space met: runs are long */
};

/* The one rule (family.h), from kinds and fields: a reference kind with
 * its five fields, or the kernel catalog. */
static int lp_claims(const struct tm_schema *s)
{
        static const char *const ref_fields[] = {"type", "time", "size", "space", "address"};
        int k = tm_schema_kind(s, "ref");
        if (k >= 0) {
                const struct tm_kind *kd = &s->kind[k];
                for (unsigned i = 0; i < 5; i++) {
                        int f = tm_schema_field(s, ref_fields[i]);
                        if (f < 0 || tm_kind_pos(kd, (unsigned)f) < 0)
                                return 0;
                }
                return 1;
        }
        for (unsigned t = 0; t < TM_LPK_N; t++)
                if (tm_schema_kind(s, tm_schema_laplace_kev.kind[t].name) < 0)
                        return 0;
        return tm_schema_field(s, "space") >= 0;
}

static struct tm_family_acc *lp_start(const struct tm_schema *s)
{
        struct lp_acc *a = calloc(1, sizeof *a);
        if (!a)
                return NULL;
        int ft = tm_schema_field(s, "type"), fs = tm_schema_field(s, "space");
        for (unsigned k = 0; k < s->nkinds; k++) {
                const struct tm_kind *kd = &s->kind[k];
                int tag = tm_schema_kind(&tm_schema_laplace_kev, kd->name);
                a->role[k] = (int8_t)(strcmp(kd->name, "ref") == 0 ? -1 : tag >= 0 ? tag : -2);
                a->pos_type[k] = (int8_t)(ft < 0 ? -1 : tm_kind_pos(kd, (unsigned)ft));
                a->pos_space[k] = (int8_t)(fs < 0 ? -1 : tm_kind_pos(kd, (unsigned)fs));
        }
        return (struct tm_family_acc *)a;
}

static void lp_space(struct lp_acc *a, uint64_t id)
{
        struct tm_laplace_stats *st = &a->st;
        if (a->last < st->nspaces && st->space_id[a->last] == id) {
                st->space_n[a->last]++;
                return;
        }
        for (unsigned i = 0; i < st->nspaces; i++)
                if (st->space_id[i] == id) {
                        st->space_n[a->last = i]++;
                        return;
                }
        if (st->nspaces < TM_LAPLACE_SPACES) {
                st->space_id[st->nspaces] = id;
                st->space_n[a->last = (unsigned)st->nspaces++] = 1;
                return;
        }
        st->spaces_inexact = 1;
        st->other_n++;
}

static void lp_add(struct tm_family_acc *fa, const struct tm_rec *r, size_t n)
{
        struct lp_acc *a = (struct lp_acc *)fa;
        for (size_t i = 0; i < n; i++) {
                uint32_t k = r[i].kind;
                if (k >= TM_SCHEMA_KINDS_MAX || a->role[k] == -2)
                        continue;
                if (a->role[k] == -1) {
                        a->st.refs++;
                        if (a->pos_type[k] >= 0)
                                a->st.type_n[(uint8_t)r[i].v[a->pos_type[k]]]++;
                } else {
                        a->st.events++;
                        a->st.tag_n[a->role[k]]++;
                }
                if (a->pos_space[k] >= 0)
                        lp_space(a, r[i].v[a->pos_space[k]]);
        }
}

static void lp_finish(struct tm_family_acc *fa, void *block)
{
        memcpy(block, &((struct lp_acc *)fa)->st, sizeof(struct tm_laplace_stats));
}

static void lp_free(struct tm_family_acc *fa)
{
        free(fa);
}

static size_t lp_peak_mem(const struct tm_family_acc *fa)
{
        (void)fa;
        return sizeof(struct lp_acc);
}

static uint64_t sum(const uint64_t *v, size_t n)
{
        uint64_t s = 0;
        for (size_t i = 0; i < n; i++)
                s += v[i];
        return s;
}

/* Parts within their wholes: the types sum to the references, the tags to
 * the events, the spaces (and the rest) to at most every record. */
static int lp_stats_ok(const void *block)
{
        const struct tm_laplace_stats *st = block;
        if (st->nspaces > TM_LAPLACE_SPACES || st->spaces_inexact > 1 ||
            (st->other_n != 0) != (st->spaces_inexact != 0) ||
            (st->spaces_inexact && st->nspaces != TM_LAPLACE_SPACES) ||
            sum(st->type_n, 256) != st->refs || sum(st->tag_n, TM_LPK_N) != st->events ||
            st->refs > UINT64_MAX / 2 || st->events > UINT64_MAX / 2)
                return 0;
        uint64_t all = st->other_n;
        for (unsigned i = 0; i < st->nspaces; i++) {
                if (st->space_n[i] == 0 || st->space_n[i] > st->refs + st->events)
                        return 0;
                all += st->space_n[i];
        }
        return all <= st->refs + st->events;
}

/* A type byte as the ascii view shows it: the character, or %XX (out:
 * 5 bytes). */
static void type_name(unsigned t, char *out)
{
        if (t > 0x20 && t < 0x7f && t != '%' && t != '-')
                snprintf(out, 5, "%c", (char)t);
        else
                snprintf(out, 5, "%%%02X", (uint8_t)t);
}

/* The count of spaces is a lower bound once the table of spaces is full. */
static void lp_rows(const void *block, const struct tm_schema *s, const struct tm_family_info *in,
                    struct tm_rows *k)
{
        (void)in;
        const struct tm_laplace_stats *st = block;
        int refs = tm_schema_kind(s, "ref") >= 0;
        tm_row_text(k, "\nlaplace\n");
        if (refs) {
                tm_row_u64(k, TM_KEY("references"), st->refs, "records", 1,
                           "  references         {}\n");
                tm_row_text(k, "  references per type\n");
                for (unsigned t = 0; t < 256; t++) {
                        char name[5];
                        type_name(t, name);
                        if (!st->type_n[t])
                                continue;
                        tm_row_u64(k, TM_KEY("types", name), st->type_n[t], "records", 1,
                                   "    {n-3} {16}");
                        tm_row_real(k, NULL, (double)st->type_n[t] / (double)st->refs, NULL, 1,
                                    " {8.4}\n");
                }
        } else {
                tm_row_u64(k, TM_KEY("events"), st->events, "records", 1,
                           "  kernel events      {}\n");
                tm_row_text(k, "  events per tag\n");
                for (unsigned t = 0; t < TM_LPK_N; t++)
                        tm_row_u64(k, TM_KEY("tags", tm_schema_laplace_kev.kind[t].name),
                                   st->tag_n[t], "records", 1, "    {n-8} {14}\n");
        }
        tm_row_u64(k, TM_KEY("spaces"), st->nspaces + st->spaces_inexact, "spaces",
                   !st->spaces_inexact,
                   st->spaces_inexact ? "  address spaces     at least {}\n"
                                      : "  address spaces     {}\n");
        char title[96];
        snprintf(title, sizeof title, "  %s per address space (the first %u to appear)\n",
                 refs ? "references" : "events", TM_LAPLACE_SPACES);
        tm_row_text(k, title);
        for (unsigned i = 0; i < st->nspaces; i++) {
                char id[24];
                snprintf(id, sizeof id, "%" PRIu64, st->space_id[i]);
                tm_row_addr(k, NULL, st->space_id[i], 1, "    {-16}");
                tm_row_u64(k, TM_KEY("per_space", id), st->space_n[i], "records", 1, " {14}\n");
        }
        tm_row_u64(k, TM_KEY("records_other_spaces"), st->other_n, "records", 1,
                   st->spaces_inexact ? "    (other spaces)     {14}\n" : NULL);
}

static unsigned lp_stream_ids(const void *block, const uint64_t **ids)
{
        const struct tm_laplace_stats *st = block;
        *ids = st->space_id;
        return (unsigned)st->nspaces;
}

const struct tm_family tm_family_laplace = {
    .name = "laplace",
    .claims = lp_claims,
    .stats_size = sizeof(struct tm_laplace_stats),
    .acc_start = lp_start,
    .acc_add = lp_add,
    .acc_finish = lp_finish,
    .acc_free = lp_free,
    .acc_peak_mem = lp_peak_mem,
    .stats_ok = lp_stats_ok,
    .rows = lp_rows,
    .stream_field = "space",
    .stream_ids = lp_stream_ids,
};
