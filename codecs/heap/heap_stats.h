/* heap_stats: the heap family's statistics (codecs/record/family.h),
 * gathered in the index pass for a schema the family claims: a kind
 * "alloc", fields "size" and "address" (HATF, mtrace, and Meta-TF traces
 * whose DTD uses those names; such a schema is named "heap"). The columns of Table 3 of
 * the HATF paper:
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
 * plus records per thread and per heap (the first TM_HEAP_STATS_IDS ids
 * seen; the rest counted together) and a histogram of allocation sizes
 * by powers of two. The thread ids are the family's per-id streams
 * (streams/thread/<id>).
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
 * of at most TM_HEAP_STATS_ADDR_MAX; past that the table becomes one
 * record an address in an external sort (codecs/common/xsort.h:
 * TM_HEAP_STATS_SORT_MEM of buffer, temporary files in $TMPDIR), every
 * later event goes there too, and tm_heap_stats_get pairs each free with
 * its allocation by sorting the events by address, then sums the changes
 * in record order by sorting them by record number (docs/index-format.md,
 * "Heap statistics"). The pass holds at most TM_HEAP_STATS_MEM_MAX bytes.
 * Only when the temporary files cannot be written (or the sizes requested
 * add up past 2^64) are figures not known: `inexact` says why, and the
 * reports say "not known" (null in JSON), never a partial count. */
#ifndef TM_HEAP_STATS_H
#define TM_HEAP_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "../record/family.h"

#define TM_HEAP_STATS_IDS TM_FAMILY_STREAMS_MAX
#define TM_HEAP_STATS_ADDR_MAX (1u << 20)
#define TM_HEAP_STATS_SORT_MEM (32u << 20)
/* the table at TM_HEAP_STATS_ADDR_MAX (2^21 slots of 16 bytes and a bit)
 * while the one of 2^20 slots is copied into it; the external sorts
 * hold less (TM_HEAP_STATS_SORT_MEM plus 128 read buffers of 64 KiB) */
#define TM_HEAP_STATS_MEM_MAX (49u << 20)
#define TM_HEAP_STATS_HIST 48

/* The family's statistics block: 64-bit words only (family.h). */
struct tm_heap_stats {
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
        uint64_t size_hist[TM_HEAP_STATS_HIST];
        uint64_t nthreads, nheaps;
        uint64_t thread_id[TM_HEAP_STATS_IDS], thread_n[TM_HEAP_STATS_IDS], thread_other;
        uint64_t heap_id[TM_HEAP_STATS_IDS], heap_n[TM_HEAP_STATS_IDS], heap_other;
};

/* The heap family's row of tm_families. */
extern const struct tm_family tm_family_heap;

struct tm_heap_stats_acc;

/* Start gathering for schema s (one tm_family_heap claims) with these
 * limits (tests; the family's acc_start uses the defaults above):
 * addr_max addresses in the table (>= 1), sort_mem bytes of the external
 * sorts' buffers. NULL on out of memory. */
struct tm_heap_stats_acc *tm_heap_stats_start_limits(const struct tm_schema *s, size_t addr_max,
                                                     size_t sort_mem);

void tm_heap_stats_add(struct tm_heap_stats_acc *a, const struct tm_rec *r, size_t n);

/* The totals (valid until tm_heap_stats_free). The first call ends the
 * count: past the table, the external sorts run then (about a second for
 * 5 million events); no records can be added after it. */
const struct tm_heap_stats *tm_heap_stats_get(struct tm_heap_stats_acc *a);

/* Bytes the accumulator held at most so far (its table and sorts). */
size_t tm_heap_stats_peak_mem(const struct tm_heap_stats_acc *a);

void tm_heap_stats_free(struct tm_heap_stats_acc *a);

#endif
