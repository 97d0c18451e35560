/* tm_huge: buffers of fresh memory that the kernel backs with transparent
 * huge pages where it may.
 *
 * A process's first touch of fresh memory costs a page fault a 4 KiB page
 * (measured in this project's VM: 4-5 us each, the kernel's clearing
 * included), so a decoder that starts on megabytes of new tables and
 * columns (a fresh daemon's first read, a `tail`) spends more in faults
 * than in decoding. Under THP's "madvise" mode (Debian's default) memory
 * that asks for huge pages takes one fault a 2 MiB page. */
#ifndef TM_HUGE_H
#define TM_HUGE_H

#include <stddef.h>

#define TM_HUGE_PAGE ((size_t)2 << 20)

/* n bytes (uninitialised), from 1 MiB on aligned to TM_HUGE_PAGE and asked
 * to be huge pages (a failed request only loses that); free with free().
 * Below 1 MiB a plain malloc: a huge page would be mostly waste. Callers
 * that will touch all of a larger buffer should round n up to a whole
 * number of TM_HUGE_PAGE (tm_huge_round), or its tail is small pages. */
void *tm_huge_alloc(size_t n);

/* n rounded up to a whole number of huge pages from 1 MiB on. */
size_t tm_huge_round(size_t n);

#endif
