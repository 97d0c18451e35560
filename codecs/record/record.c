/* Schema look-ups (the record codecs' look-ups: codecs/registry.c). */
#include "record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tm_schema_field(const struct tm_schema *s, const char *name)
{
        for (unsigned i = 0; i < s->nfields; i++)
                if (strcmp(s->field[i].name, name) == 0)
                        return (int)i;
        return -1;
}

int tm_schema_kind(const struct tm_schema *s, const char *name)
{
        for (unsigned i = 0; i < s->nkinds; i++)
                if (strcmp(s->kind[i].name, name) == 0)
                        return (int)i;
        return -1;
}

int tm_schema_kind_by_tag(const struct tm_schema *s, uint32_t tag)
{
        for (unsigned i = 0; i < s->nkinds; i++)
                if (s->kind[i].tag == tag)
                        return (int)i;
        return -1;
}

int tm_kind_pos(const struct tm_kind *k, unsigned f)
{
        for (unsigned i = 0; i < k->nfields; i++)
                if (k->field[i] == f)
                        return (int)i;
        return -1;
}

int tm_schema_has_var(const struct tm_schema *s)
{
        for (unsigned f = 0; f < s->nfields; f++)
                if (tm_field_is_var(&s->field[f]))
                        return 1;
        return 0;
}

unsigned tm_kind_var_slot(const struct tm_schema *s, const struct tm_kind *k, unsigned pos)
{
        unsigned slot = 0;
        for (unsigned i = 0; i < pos && i < k->nfields; i++)
                slot += tm_field_is_var(&s->field[k->field[i]]) != 0;
        return slot;
}


int tm_rbatch_init(struct tm_rbatch *b, unsigned nfields, size_t cap)
{
        memset(b, 0, sizeof *b);
        b->cap = cap;
        b->kind = malloc(cap * sizeof *b->kind);
        int ok = b->kind != NULL && nfields <= TM_SCHEMA_FIELDS_MAX;
        for (unsigned f = 0; ok && f < nfields; f++)
                ok = (b->col[f] = calloc(cap, sizeof *b->col[f])) != NULL;
        if (!ok) {
                tm_rbatch_free(b);
                return -ENOMEM;
        }
        return 0;
}

int tm_rbatch_arena(struct tm_rbatch *b, size_t bytes)
{
        if (bytes > UINT32_MAX || b->arena)
                return -EINVAL;
        b->arena = malloc(bytes ? bytes : 1);
        int ok = b->arena != NULL;
        for (unsigned j = 0; ok && j < TM_REC_VAR_MAX; j++)
                ok = (b->var[j] = calloc(b->cap ? b->cap : 1, sizeof *b->var[j])) != NULL;
        if (!ok) {
                free(b->arena);
                for (unsigned j = 0; j < TM_REC_VAR_MAX; j++)
                        free(b->var[j]);
                b->arena = NULL;
                memset(b->var, 0, sizeof b->var);
                return -ENOMEM;
        }
        b->arena_len = 0;
        b->arena_cap = bytes;
        return 0;
}

void tm_rbatch_free(struct tm_rbatch *b)
{
        free(b->kind);
        for (unsigned f = 0; f < TM_SCHEMA_FIELDS_MAX; f++)
                free(b->col[f]);
        free(b->arena);
        for (unsigned j = 0; j < TM_REC_VAR_MAX; j++)
                free(b->var[j]);
        memset(b, 0, sizeof *b);
}

void tm_rbatch_rec(const struct tm_rbatch *b, const struct tm_schema *s, size_t i, struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[b->kind[i]];
        unsigned slot = 0;
        r->kind = b->kind[i];
        r->section = 0;
        for (unsigned q = 0; q < k->nfields; q++) {
                r->v[q] = b->col[k->field[q]][i];
                if (tm_field_is_var(&s->field[k->field[q]]) && slot < TM_REC_VAR_MAX) {
                        r->var[slot] = b->arena ? b->arena + b->var[slot][i] : NULL;
                        slot++;
                }
        }
}

/* Four sets of counters, record i in set i % 4, so that runs of one kind
 * do not wait on one counter's previous increment. */
void tm_rbatch_kinds(const struct tm_rbatch *b, const uint32_t *bytes, uint64_t *n, uint64_t *sum)
{
        enum { K = TM_SCHEMA_KINDS_MAX };
        uint32_t c[4][K] = {{0}};
        uint64_t by[4][K];
        size_t i = 0;
        if (bytes) {
                memset(by, 0, sizeof by);
                for (; i + 4 <= b->n; i += 4)
                        for (unsigned j = 0; j < 4; j++) {
                                uint32_t k = b->kind[i + j] % K;
                                c[j][k]++;
                                by[j][k] += bytes[i + j];
                        }
                for (; i < b->n; i++) {
                        c[0][b->kind[i] % K]++;
                        by[0][b->kind[i] % K] += bytes[i];
                }
                for (unsigned k = 0; k < K; k++)
                        sum[k] += by[0][k] + by[1][k] + by[2][k] + by[3][k];
        } else {
                for (; i + 4 <= b->n; i += 4)
                        for (unsigned j = 0; j < 4; j++)
                                c[j][b->kind[i + j] % K]++;
                for (; i < b->n; i++)
                        c[0][b->kind[i] % K]++;
        }
        for (unsigned k = 0; k < K; k++)
                n[k] += (uint64_t)c[0][k] + c[1][k] + c[2][k] + c[3][k];
}
