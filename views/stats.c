/* The generic statistics of a record trace and the family's hooks
 * (stats.h). */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codecs/record/family.h"

struct tm_stats_acc {
        const struct tm_schema *s;
        const struct tm_family *fam; /* NULL: none, or one without statistics */
        struct tm_family_acc *fa;
        struct tm_stats st;
        int ended;
        int same;  /* every kind has every field, in schema order (columns) */
        int whole; /* the family reports the whole stats: the fields' ranges go
                    * unshown, and uncounted */
        uint64_t bias[TM_SCHEMA_FIELDS_MAX]; /* order_bias of each field */
};

/* What a field's values are XORed with so that unsigned comparison orders
 * them as the field's type does: the sign bit for a signed field (two's
 * complement), nothing for an unsigned one. */
static uint64_t order_bias(const struct tm_field *f)
{
        return f->type == TM_FT_INT ? UINT64_C(1) << 63 : 0;
}

/* Widen the range [*lo, *hi] to hold v, all three biased (order_bias). */
static inline void range_add(uint64_t *lo, uint64_t *hi, uint64_t v)
{
        *lo = v < *lo ? v : *lo;
        *hi = v > *hi ? v : *hi;
}

/* Count value v of field f, whose order_bias is bias. */
static inline void field_add(struct tm_stats *st, unsigned f, uint64_t bias, uint64_t v)
{
        uint64_t lo = st->fmin[f] ^ bias, hi = st->fmax[f] ^ bias;
        range_add(&lo, &hi, v ^ bias);
        st->fmin[f] = lo ^ bias;
        st->fmax[f] = hi ^ bias;
        st->fseen[f]++;
}

struct tm_stats_acc *tm_stats_start(const struct tm_schema *s)
{
        struct tm_stats_acc *a = calloc(1, sizeof *a);
        if (!a)
                return NULL;
        a->s = s;
        for (unsigned f = 0; f < TM_SCHEMA_FIELDS_MAX; f++) {
                a->bias[f] = f < s->nfields ? order_bias(&s->field[f]) : 0;
                a->st.fmin[f] = UINT64_MAX ^ a->bias[f]; /* the type's largest */
                a->st.fmax[f] = a->bias[f];              /* and smallest */
        }
        a->same = s->nkinds > 0;
        for (unsigned k = 0; k < s->nkinds && a->same; k++) {
                a->same = s->kind[k].nfields == s->nfields;
                for (unsigned j = 0; j < s->kind[k].nfields && a->same; j++)
                        a->same = s->kind[k].field[j] == j;
        }
        a->fam = tm_family_of(s);
        a->whole = tm_family_more(a->fam)->text_whole;
        if (a->fam && !a->fam->stats_size)
                a->fam = NULL;
        if (a->fam && !(a->fa = a->fam->acc_start(s))) {
                free(a);
                return NULL;
        }
        return a;
}

void tm_stats_free(struct tm_stats_acc *a)
{
        if (!a)
                return;
        if (a->fa)
                a->fam->acc_free(a->fa);
        free(a);
}

size_t tm_stats_peak_mem(const struct tm_stats_acc *a)
{
        return a->fa && a->fam->acc_peak_mem ? a->fam->acc_peak_mem(a->fa) : 0;
}

void tm_stats_add(struct tm_stats_acc *a, const struct tm_rec *r, size_t n)
{
        struct tm_stats *st = &a->st;
        if (a->ended)
                return;
        for (size_t i = 0; i < n; i++) {
                const struct tm_kind *k = &a->s->kind[r[i].kind];
                st->kind_n[r[i].kind]++;
                for (unsigned j = 0; j < k->nfields; j++) {
                        unsigned f = k->field[j];
                        if (tm_field_is_var(&a->s->field[f]))
                                continue;
                        field_add(st, f, a->bias[f], r[i].v[j]);
                }
        }
        st->records += n;
        if (a->fa)
                a->fam->acc_add(a->fa, r, n);
}

void tm_stats_add_batch(struct tm_stats_acc *a, const struct tm_rbatch *b, const uint64_t *kind_n)
{
        struct tm_stats *st = &a->st;
        if (a->ended)
                return;
        if (kind_n)
                for (unsigned k = 0; k < a->s->nkinds; k++)
                        st->kind_n[k] += kind_n[k];
        else
                tm_rbatch_kinds(b, NULL, st->kind_n, NULL);
        for (size_t i = 0; i < b->n && a->same && !a->whole; i = b->n) /* every kind, every field */
                for (unsigned f = 0; f < a->s->nfields; f++) {
                        if (tm_field_is_var(&a->s->field[f]))
                                continue;
                        uint64_t bs = a->bias[f], lo = st->fmin[f] ^ bs, hi = st->fmax[f] ^ bs;
                        const uint64_t *c = b->col[f];
                        for (size_t r = 0; r < b->n; r++)
                                range_add(&lo, &hi, c[r] ^ bs);
                        st->fmin[f] = lo ^ bs;
                        st->fmax[f] = hi ^ bs;
                        st->fseen[f] += b->n;
                }
        for (size_t i = 0; i < b->n && !a->same && !a->whole; i++) {
                const struct tm_kind *k = &a->s->kind[b->kind[i]];
                for (unsigned j = 0; j < k->nfields; j++) {
                        unsigned f = k->field[j];
                        if (tm_field_is_var(&a->s->field[f]))
                                continue;
                        field_add(st, f, a->bias[f], b->col[f][i]);
                }
        }
        st->records += b->n;
        if (!a->fa)
                return;
        if (tm_family_more(a->fam)->acc_add_batch) {
                tm_family_more(a->fam)->acc_add_batch(a->fa, b);
                return;
        }
        struct tm_rec r[64];
        for (size_t i = 0; i < b->n;) { /* the family's per-record hook */
                size_t m = b->n - i < 64 ? b->n - i : 64;
                for (size_t j = 0; j < m; j++)
                        tm_rbatch_rec(b, a->s, i + j, &r[j]);
                a->fam->acc_add(a->fa, r, m);
                i += m;
        }
}

const struct tm_stats *tm_stats_get(struct tm_stats_acc *a)
{
        if (!a->ended && a->fa)
                a->fam->acc_finish(a->fa, a->st.fam);
        a->ended = 1;
        return &a->st;
}

unsigned tm_stats_stream_ids(const struct tm_stats *st, const struct tm_schema *s,
                             const uint64_t **ids)
{
        const struct tm_family *fam = tm_family_of(s);
        if (!fam || !fam->stats_size || !fam->stream_ids || tm_family_stream_field(s) < 0)
                return 0;
        unsigned n = fam->stream_ids(st->fam, ids);
        return n < TM_FAMILY_STREAMS_MAX ? n : TM_FAMILY_STREAMS_MAX;
}
