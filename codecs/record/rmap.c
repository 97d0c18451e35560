/* rmap: records of one schema as records of another (rmap.h). */
#include "rmap.h"

#include <errno.h>
#include <string.h>

enum { RM_OK, RM_NO_KIND, RM_NO_FIELD, RM_TYPE };

static int is_var(uint8_t type)
{
        return type == TM_FT_TEXT || type == TM_FT_BYTES || type == TM_FT_LIST;
}

/* Can a value of type a stand for one of type b? Numbers for numbers,
 * variable fields of the same type for each other. */
static int type_fits(uint8_t a, uint8_t b)
{
        return is_var(a) || is_var(b) ? a == b : 1;
}

static int same_schema(const struct tm_schema *a, const struct tm_schema *b)
{
        if (a->nkinds != b->nkinds || a->nfields != b->nfields)
                return 0;
        for (unsigned f = 0; f < a->nfields; f++)
                if (strcmp(a->field[f].name, b->field[f].name) != 0 ||
                    a->field[f].type != b->field[f].type)
                        return 0;
        for (unsigned k = 0; k < a->nkinds; k++) {
                const struct tm_kind *x = &a->kind[k], *y = &b->kind[k];
                if (strcmp(x->name, y->name) != 0 || x->nfields != y->nfields ||
                    memcmp(x->field, y->field, x->nfields) != 0)
                        return 0;
        }
        return 1;
}

/* The map of from's kind k: its target kind and where each value of it
 * comes from, or why it has none. */
static void map_kind(struct tm_rmap *m, unsigned k)
{
        const struct tm_kind *fk = &m->from->kind[k];
        int t = tm_schema_kind(m->to, fk->name);
        m->kind[k] = (int16_t)t;
        m->why[k] = t < 0 ? RM_NO_KIND : RM_OK;
        memset(m->var[k], -1, sizeof m->var[k]);
        if (t < 0)
                return;
        const struct tm_kind *tk = &m->to->kind[t];
        for (unsigned p = 0; p < tk->nfields; p++) {
                const struct tm_field *tf = &m->to->field[tk->field[p]];
                int f = tm_schema_field(m->from, tf->name);
                int sp = f < 0 ? -1 : tm_kind_pos(fk, (unsigned)f);
                m->src[k][p] = (int8_t)sp;
                if (f < 0 || !type_fits(m->from->field[f].type, tf->type)) {
                        m->why[k] = f < 0 ? RM_NO_FIELD : RM_TYPE;
                        m->field[k] = tk->field[p];
                        m->kind[k] = -1;
                        return;
                }
                if (is_var(tf->type) && sp >= 0)
                        m->var[k][tm_kind_var_slot(m->to, tk, p)] =
                            (int8_t)tm_kind_var_slot(m->from, fk, (unsigned)sp);
        }
}

/* Does every kind of from map to the kind of the same index, each value
 * to the same position? Then a record of from is one of to as it is. */
static int identity(const struct tm_rmap *m)
{
        if (m->from->nsections)
                return 0;
        for (unsigned k = 0; k < m->from->nkinds; k++) {
                const struct tm_kind *fk = &m->from->kind[k];
                if (m->kind[k] != (int)k || fk->nfields != m->to->kind[k].nfields)
                        return 0;
                for (unsigned p = 0; p < fk->nfields; p++)
                        if (m->src[k][p] != (int)p)
                                return 0;
        }
        return 1;
}

void tm_rmap_init(struct tm_rmap *m, const struct tm_schema *from, const char *from_name,
                  const struct tm_schema *to, const char *to_name, const struct tm_family *to_fam)
{
        memset(m, 0, sizeof *m);
        m->from = from;
        m->to = to;
        m->from_name = from_name;
        m->to_name = to_name;
        m->fam = to_fam;
        for (unsigned k = 0; k < from->nkinds && k < TM_SCHEMA_KINDS_MAX; k++)
                map_kind(m, k);
        m->same = same_schema(from, to) ||
                  (identity(m) && !tm_family_more(m->fam)->rec_refine); /* din's as PDATS II's */
}

int tm_rmap_kind_ok(const struct tm_rmap *m, unsigned k)
{
        return k < m->from->nkinds && (m->same || m->kind[k] >= 0);
}

/* Why records of kind k do not map, as err. */
static int refuse(const struct tm_rmap *m, unsigned k, uint64_t idx, struct tm_err *err)
{
        unsigned long long i = (unsigned long long)idx;
        const char *kn = m->from->kind[k].name, *fn = m->to->field[m->field[k]].name;
        switch (m->why[k]) {
        case RM_NO_KIND:
                return tm_err_set(err, -EINVAL,
                                  "record %llu (%s): %s output has no %s records (it takes %s "
                                  "records)",
                                  i, kn, m->to_name, kn, m->to->name);
        case RM_NO_FIELD:
                return tm_err_set(
                    err, -EINVAL,
                    "record %llu (%s): %s output needs its field %s, which %s has not", i, kn,
                    m->to_name, fn, m->from_name);
        default:
                return tm_err_set(
                    err, -EINVAL,
                    "record %llu (%s): its field %s is not of the type %s output's is", i, kn, fn,
                    m->to_name);
        }
}

int tm_rmap_rec(const struct tm_rmap *m, const struct tm_rec *r, uint64_t idx, struct tm_rec *o,
                const struct tm_rec **out, struct tm_err *err)
{
        if (r->kind >= m->from->nkinds)
                return tm_err_set(err, -EINVAL, "record %llu: kind %u is not in %s's schema",
                                  (unsigned long long)idx, r->kind, m->from_name);
        if (m->same) {
                *out = r;
                return 0;
        }
        if (m->kind[r->kind] < 0)
                return refuse(m, r->kind, idx, err);
        unsigned t = (unsigned)m->kind[r->kind];
        const struct tm_kind *tk = &m->to->kind[t];
        const int8_t *src = m->src[r->kind], *var = m->var[r->kind];
        o->kind = t;
        o->section = 0;
        for (unsigned p = 0; p < tk->nfields; p++)
                o->v[p] = src[p] < 0 ? 0 : r->v[src[p]];
        for (unsigned s = 0; s < TM_REC_VAR_MAX; s++)
                o->var[s] = var[s] < 0 ? NULL : r->var[var[s]];
        if (tm_family_more(m->fam)->rec_refine)
                tm_family_more(m->fam)->rec_refine(m->from, m->to, o);
        *out = o;
        return 0;
}
