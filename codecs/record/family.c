/* Which family a schema is of (family.h); the table is the registry's
 * (codecs/registry.c). */
#include "family.h"

#include <string.h>

#include "family_row.h"

/* The linker's bounds of the sections (family_row.h); weak: a program
 * with no such row has no section, and both are NULL. */
extern const struct tm_family *const __start_tm_family_rows[] __attribute__((weak));
extern const struct tm_family *const __stop_tm_family_rows[] __attribute__((weak));
extern const struct tm_rcodec *const __start_tm_rcodec_rows[] __attribute__((weak));
extern const struct tm_rcodec *const __stop_tm_rcodec_rows[] __attribute__((weak));

const struct tm_family *const *tm_family_rows(const struct tm_family *const **end)
{
        *end = __stop_tm_family_rows;
        return __start_tm_family_rows;
}

const struct tm_rcodec *const *tm_rcodec_rows(const struct tm_rcodec *const **end)
{
        *end = __stop_tm_rcodec_rows;
        return __start_tm_rcodec_rows;
}

const struct tm_family *tm_family_of(const struct tm_schema *s)
{
        for (unsigned i = 0; tm_families[i]; i++)
                if (tm_families[i]->claims(s))
                        return tm_families[i];
        const struct tm_family *const *end, *const *f = tm_family_rows(&end);
        for (; f < end; f++)
                if ((*f)->claims(s))
                        return *f;
        return NULL;
}

int tm_family_stream_field(const struct tm_schema *s)
{
        const struct tm_family *f = tm_family_of(s);
        return f && f->stream_field ? tm_schema_field(s, f->stream_field) : -1;
}

const char *tm_family_line(const char **l, size_t *len)
{
        const char *s = *l;
        if (!s || !*s)
                return NULL;
        const char *e = strchr(s, '\n');
        *len = e ? (size_t)(e - s) : strlen(s);
        *l = s + *len + (e != NULL);
        return s;
}
