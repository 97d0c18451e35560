/* A family's text helpers (family.h); the families' table and which one
 * a schema is of: codecs/families.c. */
#include "family.h"

#include <string.h>

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
