/* stats: the numbers behind the `stats` view, gathered in the index pass.
 *
 * What is counted, after the PDATS II paper (Johnson 1999):
 *   - references in total and by type, address range overall and by type;
 *   - references per byte of the archive and of the raw stream, and the
 *     din-text size over each (the compression ratios of Tables 2 and 4);
 *   - jump-initiated instruction runs (Figure 3): a non-sequential
 *     instruction fetch and the sequential fetches after it, up to the next
 *     other reference or jump;
 *   - data-instruction clusters (Figure 4): the number of sequential
 *     instruction fetches right after a data reference (read or write);
 *   - data offsets (Figure 5): address minus the previous data reference's
 *     address, reads and writes together.
 * An instruction fetch is sequential when it lies 1 to TM_ADDR_SEQ_MAX
 * bytes after the previous instruction fetch (this covers fixed 2- and
 * 4-byte instructions and variable-length ones up to 15 bytes).
 *
 * struct tm_addr_stats is all uint64_t so the index file stores it as an array
 * of little-endian words (views/index_file.c: the address family's block); struct tm_addr_acc is
 * the running state of the pass, never stored. */
#ifndef TM_ADDR_STATS_H
#define TM_ADDR_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../record/family.h"
#include "trace.h"

#define TM_ADDR_SEQ_MAX 16
#define TM_ADDR_RUN_MAX 64 /* run-length histograms: 0..63 exact, last bucket >= 64 */
#define TM_ADDR_OFF_MAX 32 /* data offsets -32..32 exact */
#define TM_ADDR_OFF_EXACT (2 * TM_ADDR_OFF_MAX + 1)

/* Data offsets outside -32..32, by the signed width that holds them. */
enum {
        TM_ADDR_OFF_8BIT,
        TM_ADDR_OFF_16BIT,
        TM_ADDR_OFF_32BIT,
        TM_ADDR_OFF_64BIT,
        TM_ADDR_OFF_NRANGE
};

struct tm_addr_stats {
        uint64_t refs;
        uint64_t count[TM_NTYPES];
        uint64_t addr_min[TM_NTYPES]; /* UINT64_MAX when count is 0 */
        uint64_t addr_max[TM_NTYPES];
        uint64_t jump_runs[TM_ADDR_RUN_MAX + 1];    /* runs by length */
        uint64_t jump_fetches[TM_ADDR_RUN_MAX + 1]; /* instruction fetches in them */
        uint64_t clus_runs[TM_ADDR_RUN_MAX + 1];
        uint64_t clus_fetches[TM_ADDR_RUN_MAX + 1];
        uint64_t data_off[TM_ADDR_OFF_EXACT]; /* offset d at d + TM_ADDR_OFF_MAX */
        uint64_t data_off_range[TM_ADDR_OFF_NRANGE];
};

#define TM_ADDR_WORDS (sizeof(struct tm_addr_stats) / sizeof(uint64_t))
_Static_assert(sizeof(struct tm_addr_stats) % sizeof(uint64_t) == 0, "stats are words");

struct tm_addr_acc {
        struct tm_addr_stats s;
        uint64_t prev_ifetch, prev_data;
        int have_ifetch, have_data;
        int run;          /* 0 none, 1 jump run, 2 cluster */
        uint64_t run_len; /* fetches in the open run */
};

/* Start an empty accumulation. */
void tm_addr_stats_init(struct tm_addr_acc *a);

/* Account n references in order. */
void tm_addr_stats_add(struct tm_addr_acc *a, const struct tm_ref *refs, size_t n);

/* Close the open run; a->s is then final. */
void tm_addr_stats_finish(struct tm_addr_acc *a);

/* The statistics of a trace as rows (statrow.h): the whole stats text and
 * stats.json's member "address" (docs/stats-json.md). in: the trace's
 * archive, sizes and damage; ntypes: its codec's types. */
void tm_addr_stats_rows(const struct tm_addr_stats *s, const struct tm_family_info *in,
                        unsigned ntypes, struct tm_rows *k);

/* The address family (family.h): the statistics above as its block, the
 * stats view laid out as the PDATS II paper's tables (its rows,
 * text_whole), and the binary view's 16-byte records (struct
 * tm_binary_ref, views/tm_binary.h). */
#define TM_ADDR_BIN_SIZE 16
extern const struct tm_family tm_family_address;

/* One binary record at dst: the address little-endian, the type, 7 zero
 * bytes (the family's binary, and the rows' binary decoder). */
static inline void tm_addr_bin_put(uint8_t *dst, uint64_t addr, uint32_t type)
{
        for (unsigned b = 0; b < 8; b++)
                dst[b] = (uint8_t)(addr >> (8 * b));
        dst[8] = (uint8_t)type;
        memset(dst + 9, 0, 7);
}

#endif
