/* xsort: an external sort of fixed-size records in bounded memory.
 *
 * Records are `words` 64-bit words in host order, ordered by their first
 * `keys` words (1 or 2) as unsigned integers, lexicographically; records
 * with equal keys come out in no particular order. Records are put in
 * any order, then read back in key order once.
 *
 * Memory: a buffer of `mem` bytes collects records; when it is full it is
 * sorted and written to a temporary file as one run. Reading merges the
 * runs, at most `fanin` at a time through a 64 KiB buffer each (more runs
 * are first merged fanin at a time into longer ones, in a second file).
 * So the sorter holds at most max(mem, fanin x 64 KiB) bytes plus its run
 * list (16 bytes a run). Nothing is written when every record fits the
 * buffer. Disk: at most twice the records' bytes.
 *
 * Files: made in $TMPDIR (else /tmp) and unlinked at once, so nothing is
 * left behind whatever happens to the process.
 *
 * Errors are negative errno values (-ENOMEM, or what creating, writing or
 * reading the temporary files returned); after one, the sorter only
 * returns it again. */
#ifndef TM_XSORT_H
#define TM_XSORT_H

#include <stddef.h>
#include <stdint.h>

#define TM_XSORT_FANIN 128
#define TM_XSORT_READ_BUF (64u << 10)

struct tm_xsort;

/* A sorter of records of `words` (1-8) words ordered by the first `keys`
 * (1 or 2, <= words); mem >= one record, fanin >= 2. */
int tm_xsort_new(unsigned words, unsigned keys, size_t mem, unsigned fanin, struct tm_xsort **out);

/* Add one record (words words). */
int tm_xsort_put(struct tm_xsort *x, const uint64_t *rec);

/* A larger buffer, mem bytes, while records are being put (one that
 * starts small while its owner still holds other memory). */
int tm_xsort_grow(struct tm_xsort *x, size_t mem);

/* End of input: from now on tm_xsort_next gives the records in order. */
int tm_xsort_finish(struct tm_xsort *x);

/* The next record into rec: 1, 0 at the end, or a negative errno. */
int tm_xsort_next(struct tm_xsort *x, uint64_t *rec);

/* Records put so far, and runs written to the file (0 while everything
 * fitted in memory). */
uint64_t tm_xsort_count(const struct tm_xsort *x);
uint64_t tm_xsort_runs(const struct tm_xsort *x);

/* Bytes of buffers it holds now, and the most it has held at once. */
size_t tm_xsort_held(const struct tm_xsort *x);
size_t tm_xsort_peak(const struct tm_xsort *x);

void tm_xsort_free(struct tm_xsort *x);

#endif
