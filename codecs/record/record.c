/* Record codec look-ups (the table is codecs/registry.c) and schema
 * look-ups. */
#include "record.h"

#include <string.h>

const struct tm_rcodec *tm_rcodec_probe(const uint8_t *head, size_t n)
{
        for (const struct tm_rcodec *const *c = tm_rcodecs; *c; c++)
                if ((*c)->probe(head, n))
                        return *c;
        return NULL;
}

const struct tm_rcodec *tm_rcodec_by_name(const char *name)
{
        for (const struct tm_rcodec *const *c = tm_rcodecs; *c; c++)
                if (strcmp((*c)->name, name) == 0)
                        return *c;
        return NULL;
}

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

unsigned tm_kind_var_slot(const struct tm_schema *s, const struct tm_kind *k, unsigned pos)
{
        unsigned slot = 0;
        for (unsigned i = 0; i < pos && i < k->nfields; i++)
                slot += tm_field_is_var(&s->field[k->field[i]]) != 0;
        return slot;
}

#define ADDR_KIND(nm, t)                                                                           \
        {                                                                                          \
                .name = nm, .tag = t, .nfields = 1, .field = { 0 }                                 \
        }

const struct tm_schema tm_schema_address = {
    .name = "address",
    .nfields = 1,
    .nkinds = 8,
    .field = {{.name = "address", .type = TM_FT_UINT, .show = TM_SHOW_HEX}},
    .kind =
        {
            ADDR_KIND("read", 0),
            ADDR_KIND("write", 1),
            ADDR_KIND("ifetch", 2),
            ADDR_KIND("misc", 3),
            ADDR_KIND("copyback", 4),
            ADDR_KIND("invalidate", 5),
            ADDR_KIND("type6", 6),
            ADDR_KIND("type7", 7),
        },
};
