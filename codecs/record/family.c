/* A family's text helpers (family.h); the families' table and which one
 * a schema is of: codecs/families.c. */
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
