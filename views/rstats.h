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
 * powers of two.
 *
 * Records are taken as written, in the order of the trace. What cannot
 * be reconciled is counted, not corrected: frees of an address that is
 * not live (double frees, an address freed before and not allocated
 * since, among them), reallocs of an old address that is not live, and
 * allocations at an address already live (the object there is counted
 * as freed). A threaded log written out of order shows as these. A free
 * or realloc of address 0 (free(NULL)) is none of them.
 *
 * Exact for any number of live objects, in bounded memory: the addresses
 * seen (live, or freed and not allocated since) are kept in a hash table
 * of at most TM_RSTATS_ADDR_MAX; past that the table becomes one record
 * an address in an external sort (views/xsort.h: TM_RSTATS_SORT_MEM of
 * buffer, temporary files in $TMPDIR), every later event goes there too,
 * and tm_rstats_get pairs each free with its allocation by sorting the
 * events by address, then sums the changes in record order by sorting
 * them by record number (docs/index-format.md, "Heap statistics"). The
 * pass holds at most TM_RSTATS_MEM_MAX bytes. Only when the temporary
 * files cannot be written (or the sizes requested add up past 2^64) are
 * figures not known: `inexact` says why, and the reports say "not known"
 * (null in JSON), never a partial count. */
#ifndef TM_RSTATS_H
#define TM_RSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/record/record.h"

#define TM_RSTATS_IDS 64
#define TM_RSTATS_ADDR_MAX (1u << 20)
#define TM_RSTATS_SORT_MEM (32u << 20)
/* the table at TM_RSTATS_ADDR_MAX (2^21 slots of 16 bytes and a bit)
 * while the one of 2^20 slots is copied into it; the external sorts
 * hold less (TM_RSTATS_SORT_MEM plus 128 read buffers of 64 KiB) */
#define TM_RSTATS_MEM_MAX (49u << 20)
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
        uint64_t inexact;         /* 0, or why not: the errno that stopped the external sort, or
                                   * EOVERFLOW (the sizes add up past 2^64) */
        uint64_t free_unknown;    /* frees of addresses not live */
        uint64_t double_frees;    /* of those, of an address freed and not allocated since */
        uint64_t realloc_unknown; /* reallocs of an old address not live */
        uint64_t alloc_live;      /* allocations at an address already live */
        uint64_t spilled;         /* events sorted externally (0: the table sufficed) */
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

/* The same with other limits (tests): addr_max addresses in the table
 * (>= 1), sort_mem bytes of the external sorts' buffers. */
struct tm_rstats_acc *tm_rstats_start_limits(const struct tm_schema *s, size_t addr_max,
                                             size_t sort_mem);

void tm_rstats_add(struct tm_rstats_acc *a, const struct tm_rec *r, size_t n);

/* The totals (valid until tm_rstats_free). The first call ends the
 * count: past the table, the external sorts run then (about a second for
 * 5 million events); no records can be added after it. */
const struct tm_rstats *tm_rstats_get(struct tm_rstats_acc *a);

/* Bytes the accumulator held at most so far (its table and sorts). */
size_t tm_rstats_peak_mem(const struct tm_rstats_acc *a);

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
