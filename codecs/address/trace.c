/* The trace codec table: probe order, lookup by name, type names. */
#include "trace.h"

#include <string.h>

#include "din.h"
#include "lackey.h"
#include "pdats.h"
#include "pdats2.h"

/* Binary magics first, then the text formats; lackey before din because a
 * lackey file never parses as din but the reverse is not guaranteed. */
const struct tm_codec *const tm_codecs[] = {
    &tm_codec_pdats2, &tm_codec_pdats, &tm_codec_lackey, &tm_codec_din, NULL,
};

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
