/* rstats: statistics of a record trace, gathered in the index pass.
 *
 * For every schema: records per kind, and per numeric field its minimum
 * and maximum. For the heap family (a schema with kinds "alloc" and
 * "free" and fields "size" and "address": HATF, and Meta-TF traces whose
 * DTD uses those names) also the columns of Table 3 of the HATF paper:
 *
 *   allocs        alloc records
 *   reallocs      records of the four realloc kinds
 *   frees         free records
 *   total bytes   sizes of alloc records, plus the new sizes of reallocs
 *                 that allocate (realloc_alloc_free, realloc_alloc) or
 *                 resize in place (realloc: the paper's count of bytes
 *                 requested); requests whose address is 0 (failed) are
 *                 not counted and make nothing live
 *   max objects   the most objects live at once
 *   max bytes     the most bytes live at once
 *   avg size      total bytes / the allocations and reallocs counted in it
 *
 * plus records per thread and per heap (the first TM_RSTATS_IDS ids seen;
 * the rest counted together) and a histogram of allocation sizes by
 * powers of two. Live objects are tracked in a hash table of address ->
 * size holding at most TM_RSTATS_LIVE_MAX objects (memory bounded); past
 * that, max bytes is reported as not known and max objects counts
 * allocations minus frees. */
#ifndef TM_RSTATS_H
#define TM_RSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/record/record.h"

#define TM_RSTATS_IDS 64
#define TM_RSTATS_LIVE_MAX (1u << 20)
#define TM_RSTATS_HIST 48

struct tm_rstats {
        uint64_t records;
        uint64_t kind_n[TM_SCHEMA_KINDS_MAX];
        uint64_t fmin[TM_SCHEMA_FIELDS_MAX], fmax[TM_SCHEMA_FIELDS_MAX];
        uint64_t fseen[TM_SCHEMA_FIELDS_MAX];
        /* heap family */
        int heap;
        uint64_t allocs, reallocs, frees, total_bytes;
        uint64_t sized; /* records counted in total_bytes */
        uint64_t live_n, live_bytes, max_live_n, max_live_bytes;
        int live_overflow;
        uint64_t free_unknown; /* frees of addresses not live */
        uint64_t size_hist[TM_RSTATS_HIST];
        unsigned nthreads, nheaps;
        uint64_t thread_id[TM_RSTATS_IDS], thread_n[TM_RSTATS_IDS], thread_other;
        uint64_t heap_id[TM_RSTATS_IDS], heap_n[TM_RSTATS_IDS], heap_other;
};

struct tm_rstats_acc;

/* Does s get the heap report (kinds alloc and free, fields size and
 * address)? Then its records are counted per thread, the first
 * TM_RSTATS_IDS ids in the order they first appear. */
int tm_rstats_is_heap(const struct tm_schema *s);

/* Start gathering for schema s. NULL on out of memory. */
struct tm_rstats_acc *tm_rstats_start(const struct tm_schema *s);

void tm_rstats_add(struct tm_rstats_acc *a, const struct tm_rec *r, size_t n);

/* The totals (valid until tm_rstats_free). */
const struct tm_rstats *tm_rstats_get(const struct tm_rstats_acc *a);

void tm_rstats_free(struct tm_rstats_acc *a);

/* What the report names the trace by. */
struct tm_rstats_info {
        const char *name, *codec, *container;
        uint64_t archive_size, raw_size, ascii_size;
        const char *damage; /* as in struct tm_stats_info */
        const char *notes;  /* what the trace says of itself, a line each
                             * (its leading comments: tracetool record's
                             * notes); NULL: none */
};

/* The stats view's text into dst (cap bytes); returns the length
 * (snprintf-style). */
size_t tm_rstats_report(const struct tm_rstats *st, const struct tm_schema *s,
                        const struct tm_rstats_info *in, char *dst, size_t cap);

/* The same numbers as one JSON object (the stats.json view,
 * docs/stats-json.md); damage as for tm_stats_json (stats.h). */
size_t tm_rstats_json(const struct tm_rstats *st, const struct tm_schema *s,
                      const struct tm_rstats_info *in, const char *damage, char *dst, size_t cap);

#endif
