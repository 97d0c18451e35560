/* The address codecs' own table (trace.h). The registry
 * (codecs/registry.c) lists them as record codec rows (arec.h); this is
 * what those rows wrap, in the same order. */
#include "din.h"
#include "lackey.h"
#include "pdats.h"
#include "pdats2.h"

const struct tm_codec *const tm_codecs[] = {
    &tm_codec_pdats2, &tm_codec_pdats, &tm_codec_lackey, &tm_codec_din, NULL,
};
