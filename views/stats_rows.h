/* The generic statistics rows of a trace (codecs/record/statrow.h), which
 * both renderers take: views/stats_text.c (the stats view) and
 * views/stats_json.c (stats.json). */
#ifndef TM_STATS_ROWS_H
#define TM_STATS_ROWS_H

#include "stats.h"

/* Into k: the text's head (the trace's name, format, damage, sizes,
 * notes: rows of the text only), records, records per kind and each
 * numeric field's count and range. text 0: the rows without their text
 * (a family whose rows give the whole text: family.h, text_whole). */
void tm_stats_generic_rows(const struct tm_stats *st, const struct tm_schema *s,
                           const struct tm_family_info *in, int text, struct tm_rows *k);

/* s's family when it has statistics (stats_size) and rows, else NULL. */
const struct tm_family *tm_stats_family(const struct tm_schema *s);

#endif
