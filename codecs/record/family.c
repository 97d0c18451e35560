/* Which family a schema is of (family.h); the table is the registry's
 * (codecs/registry.c). */
#include "family.h"

const struct tm_family *tm_family_of(const struct tm_schema *s)
{
        for (unsigned i = 0; tm_families[i]; i++)
                if (tm_families[i]->claims(s))
                        return tm_families[i];
        return NULL;
}

int tm_family_stream_field(const struct tm_schema *s)
{
        const struct tm_family *f = tm_family_of(s);
        return f && f->stream_field ? tm_schema_field(s, f->stream_field) : -1;
}
