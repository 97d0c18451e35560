/* readahead: decode the next pieces of a view in parallel while it is read
 * sequentially.
 *
 * Checkpoint intervals are independent: each can be decoded from its own
 * checkpoint. When a vfile sees sequential reads, it starts a readahead
 * that keeps workers + 3 intervals ("segments") in flight on a few worker
 * threads, each with its own cursor (records.h, as a vfile has), and serves
 * reads from the finished ones. On a read outside that window, or a
 * segment that failed, tm_ra_read says so and the vfile falls back to its
 * own cursor, which meets any error itself.
 *
 * An interval longer than TM_RA_SEG_MAX bytes is read ahead as several
 * segments of at most TM_RA_PIECE bytes (a heap trace's are ~7 MB of
 * ascii); a worker takes the piece after its last one first, so that its
 * cursor runs on without decoding the interval again. Other workers take
 * the first pieces of the next intervals (the window then holds those
 * intervals too), not pieces inside one, whose start they would reach
 * only by decoding what the first worker decodes anyway: they do that
 * only for the piece a reader waits for when no cursor is heading there
 * (a read that starts mid-interval).
 *
 * Memory: workers + 3 buffers of the largest segment (at most
 * TM_RA_SEG_MAX bytes; from 1 MiB on rounded up to whole 2 MiB huge
 * pages), and with several workers on cut intervals as
 * many more as a worker beyond the first needs for one interval, plus
 * one cursor per worker. All readaheads of the process share
 * TM_RA_MEM_TOTAL bytes of segment buffers ($TM_READ_AHEAD_MEM overrides
 * it, for tests): a file that finds it spent
 * reads ahead with fewer workers or not at all (measured: 40 concurrent
 * readers of a 10^8-reference trace peaked at 447 MB without this bound).
 * Threads: at most TM_RA_WORKERS_TOTAL workers alive in the process,
 * however many files are read at once. */
#ifndef TM_READAHEAD_H
#define TM_READAHEAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "trace_obj.h"

#define TM_RA_SEG_MAX (4u << 20)
#define TM_RA_PIECE (2u << 20)
#define TM_RA_THREADS_MAX 8
#define TM_RA_WORKERS_TOTAL 32
#define TM_RA_MEM_TOTAL (64ull << 20)

struct tm_ra;

/* Bytes of segment buffers the process's readaheads hold now (tests). */
uint64_t tm_ra_mem_in_use(void);

/* Segments the process's workers began neither where their cursor was
 * nor at a checkpoint, so decoded from the checkpoint before them up to
 * their start (tests). */
unsigned tm_ra_far_starts(void);

/* Worker threads to use: $TM_READ_THREADS if set (0 disables), else the
 * online CPUs minus one, at most TM_RA_THREADS_MAX. */
unsigned tm_ra_threads(void);

/* tm_ra_threads for a view whose worker does much per byte, a record
 * trace's text: at least two when there are two CPUs. With one worker
 * such a view's cold read is bound by it, and the reader's side (the
 * FUSE threads' copies, the reader's) leaves most of the other CPU free:
 * a heap trace's cold cat on 2 vCPUs, 31 alternating rounds, 0.73x ->
 * 0.82x of zstdcat. An address trace's worker does less per byte: a
 * second worker there made it slower (0.58x -> 0.47x), as the reader's
 * side needs that CPU. */
unsigned tm_ra_threads_heavy(void);

/* Start reading ahead in view (ascii or binary) of t, size bytes, with
 * nthreads workers. Returns NULL when it cannot or should not (segments
 * too big, out of memory, no threads). */
struct tm_ra *tm_ra_open(struct tm_trace *t, const char *view, enum tm_view_kind kind,
                         uint64_t size, unsigned nthreads);

/* tm_ra_read: off is a little behind the window. */
#define TM_RA_LATE (-2)

/* Copy up to n bytes at off from finished segments, waiting for the ones
 * in flight. Returns the count (> 0; short only at the end of the view), 0
 * at or past the end, -1 when off is outside the window or a segment
 * failed (the caller reads it itself and closes the readahead), or
 * TM_RA_LATE when off is a few segments behind the window, as a request
 * that overtook others of a sequential reader is (the caller reads it
 * itself and keeps the readahead). */
ssize_t tm_ra_read(struct tm_ra *ra, void *buf, size_t n, uint64_t off);

/* tm_ra_peek: the request is not one to serve in place (see there). */
#define TM_RA_COPY (-3)

/* Like tm_ra_read, but instead of copying, point sp at the bytes inside
 * the segments and hold those, so that no worker reuses them, until
 * tm_ra_unpeek (which needs no lock of the caller's: call it when the
 * reply has gone, from any thread). Returns the same as tm_ra_read (a
 * count > 0 then all n bytes or up to the end), or TM_RA_COPY when the
 * bytes span more than TM_VSPAN_MAX segments or a segment after the
 * first failed: nothing is held and the caller uses tm_ra_read. */
ssize_t tm_ra_peek(struct tm_ra *ra, size_t n, uint64_t off, struct tm_vspan *sp);

/* Give back what sp holds (nothing after a failed tm_ra_peek). */
void tm_ra_unpeek(struct tm_vspan *sp);

/* Stop the workers and free everything, once every span held is given
 * back (it waits). NULL is allowed. */
void tm_ra_close(struct tm_ra *ra);

#endif
