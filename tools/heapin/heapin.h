/* heapin: real heap traces -> heap events (codecs/heap/heap.h).
 *
 * Two text formats that programs on Linux leave behind, read as streams of
 * decompressed bytes (the caller, tools/pack_heap.c, takes off gzip / zstd)
 * and turned into struct tm_heap_ev, one callback a event:
 *
 *   mtrace     glibc's malloc trace (MALLOC_TRACE=file with mtrace(), or
 *              LD_PRELOAD=libc_malloc_debug.so.0 since glibc 2.34);
 *              docs/formats/mtrace.md;
 *   heaptrack  heaptrack's data files, interpreted (what `heaptrack PROG`
 *              keeps) or raw (`heaptrack -r`), file format versions 2 and 3;
 *              docs/formats/heaptrack.md.
 *
 * The docs say, line by line, what becomes which event and why; in short:
 * thread and heap are always 0 (neither format records them); time is the
 * mtrace line number, or heaptrack's elapsed milliseconds; attributes are
 * the mtrace caller ("./prog:[0x11f0]") or the heaptrack trace index
 * ("trace=0x8"); what a format records that is no heap event (a failed
 * allocation, heaptrack's command line) comes as a comment.
 *
 * Memory: a reader holds one line at a time (at most HEAPIN_LINE_MAX bytes,
 * a longer line is an error, except heaptrack lines the reader skips
 * anyway) and mtrace keeps nothing else. heaptrack's interpreted files keep
 * no pointers, so that reader keeps a table proportional to the traced
 * program's distinct (size, call stack) pairs and its peak number of live
 * allocations (heaptrack.c says how much).
 *
 * Errors: a negative errno (-EIO for input that is not what the format
 * writes, -ENOTSUP for a heaptrack file version this reader does not know,
 * -ENOMEM, or what the read function returned), with err saying
 * "<name>: line N (byte offset B): ...". Input never aborts. */
#ifndef TM_HEAPIN_H
#define TM_HEAPIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codecs/common/tm_err.h"
#include "codecs/heap/heap.h"

/* Longest line a reader accepts, without its newline: 64 KiB - 1, so that
 * an attribute or comment cut from one line fits a HATF attribute with a
 * 2-byte length. */
#define HEAPIN_LINE_MAX 65535

/* Reads up to n decompressed input bytes into buf: the count read, 0 at the
 * end of the input, or a negative errno (-EINTR is retried). */
typedef ssize_t (*heapin_read_fn)(void *arg, void *buf, size_t n);

/* Receives one event. ev and the bytes ev->attr points at live until the
 * call returns. A nonzero return stops the reader, which returns it. */
typedef int (*heapin_event_fn)(void *arg, const struct tm_heap_ev *ev);

/* The format of a stream whose first n decompressed bytes are head (n is
 * what the caller has, ideally 4 KiB or all of a shorter stream), from
 * content only: "mtrace", "heaptrack" or NULL. A heaptrack file of a
 * version the reader rejects is still "heaptrack", so that its message
 * names the version. */
const char *heapin_detect(const uint8_t *head, size_t n);

/* Read a glibc mtrace log from rd(rarg, ...) to its end, calling fn(arg, ev)
 * for each event, in the log's order. name names the input in messages.
 * Returns 0 at the end of the input, fn's return value if nonzero (err is
 * then fn's to fill, e.g. through arg), or a negative errno with err set. */
int heapin_mtrace(heapin_read_fn rd, void *rarg, const char *name, heapin_event_fn fn, void *arg,
                  struct tm_err *err);

/* The same for a heaptrack data file (raw or interpreted, told apart by
 * its lines). */
int heapin_heaptrack(heapin_read_fn rd, void *rarg, const char *name, heapin_event_fn fn, void *arg,
                     struct tm_err *err);

#endif
