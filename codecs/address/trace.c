/* Address codec look-ups (the table: table.c) and type names. */
#include "trace.h"

#include <string.h>

const struct tm_codec *tm_codec_probe(const uint8_t *head, size_t n)
{
        for (const struct tm_codec *const *c = tm_codecs; *c; c++)
                if ((*c)->probe(head, n))
                        return *c;
        return NULL;
}

const struct tm_codec *tm_codec_by_name(const char *name)
{
        for (const struct tm_codec *const *c = tm_codecs; *c; c++)
                if (strcmp((*c)->name, name) == 0)
                        return *c;
        return NULL;
}

const char *tm_type_name(unsigned t)
{
        static const char *const names[TM_NTYPES] = {
            "read", "write", "ifetch", "misc", "copyback", "invalidate", "type6", "type7",
        };
        return t < TM_NTYPES ? names[t] : "unknown";
}
