/* The address codecs' own table (trace.h) and the look-ups in it. The registry
 * (codecs/registry.c) lists them as record codec rows (arec.h); this is
 * what those rows wrap, in the same order. */
#include "din.h"
#include "lackey.h"
#include "pdats.h"
#include "pdats2.h"

#include <string.h>

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
