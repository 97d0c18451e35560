/* stats: statistics of a trace, gathered in the index pass.
 *
 * The generic part, for every schema: records per kind, and per numeric
 * field its minimum and maximum. The rest is the family's
 * (codecs/record/family.h): when a family claims the schema, its
 * accumulator sees the same records and its block of statistics is kept
 * here (fam), saved and loaded with it (views/index_file.c). The heap
 * family's: codecs/heap/heap_stats.h. Both parts are shown as rows
 * (codecs/record/statrow.h): the generic ones (views/stats_rows.h), then
 * the family's, rendered by one rule as text and as JSON. */
#ifndef TM_STATS_H
#define TM_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/record/family.h"

struct tm_stats {
        uint64_t records;
        uint64_t kind_n[TM_SCHEMA_KINDS_MAX];
        uint64_t fmin[TM_SCHEMA_FIELDS_MAX], fmax[TM_SCHEMA_FIELDS_MAX];
        uint64_t fseen[TM_SCHEMA_FIELDS_MAX];
        /* the family's block: its stats_size bytes (the rest zero) */
        uint64_t fam[TM_FAMILY_STATS_MAX / 8];
};

/* 64-bit words of the generic part (records .. fseen). */
#define TM_STATS_WORDS (1 + TM_SCHEMA_KINDS_MAX + 3 * TM_SCHEMA_FIELDS_MAX)
_Static_assert(offsetof(struct tm_stats, fam) == 8 * TM_STATS_WORDS, "generic words");

struct tm_stats_acc;

/* Start gathering for schema s (and its family's, if any). NULL on out of
 * memory. */
struct tm_stats_acc *tm_stats_start(const struct tm_schema *s);

void tm_stats_add(struct tm_stats_acc *a, const struct tm_rec *r, size_t n);

/* The same for a column batch (record.h); kind_n: b's
 * records per kind (tm_rbatch_kinds) when the caller has counted them,
 * else NULL. */
void tm_stats_add_batch(struct tm_stats_acc *a, const struct tm_rbatch *b,
                         const uint64_t *kind_n);

/* The totals (valid until tm_stats_free). The first call ends the count
 * (the family's finish: the heap family's external sorts run then); no
 * records can be added after it. */
const struct tm_stats *tm_stats_get(struct tm_stats_acc *a);

/* Bytes the family's accumulator held at most so far. */
size_t tm_stats_peak_mem(const struct tm_stats_acc *a);

void tm_stats_free(struct tm_stats_acc *a);

/* The per-id streams' ids of a trace of schema s with statistics st, in
 * the order of their columns (family.h, stream_ids): their count, *ids
 * pointing into st; 0 when s's family has none. */
unsigned tm_stats_stream_ids(const struct tm_stats *st, const struct tm_schema *s,
                              const uint64_t **ids);

/* The stats view's text into dst (cap bytes); returns the length
 * (snprintf-style): the statistics rows' text (codecs/record/statrow.h,
 * views/stats_text.c), the generic ones then the family's, or the
 * family's alone when its text is whole (family.h, text_whole). */
size_t tm_stats_report(const struct tm_stats *st, const struct tm_schema *s,
                        const struct tm_family_info *in, char *dst, size_t cap);

/* The text of family f's rows alone for its block (of schema s; in: the
 * trace), as tm_stats_report. */
size_t tm_stats_family_text(const struct tm_family *f, const void *block,
                            const struct tm_schema *s, const struct tm_family_info *in, char *dst,
                            size_t cap);

#define TM_STATS_JSON_VERSION 2 /* stats.json's "version" (docs/stats-json.md) */

/* The same numbers as one JSON object (the stats.json view,
 * docs/stats-json.md; views/stats_json.c): the trace's members, then the
 * generic rows and the family's (family.h, rows) in a member named after
 * it, every row rendered by one rule. damage: what ended the intact prefix
 * the figures cover (then no figure is exact), or NULL. */
size_t tm_stats_json(const struct tm_stats *st, const struct tm_schema *s,
                      const struct tm_family_info *in, const char *damage, char *dst, size_t cap);

#endif
