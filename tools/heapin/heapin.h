/* heapin: heaptrack's data files -> heap events (codecs/heap/heap.h).
 *
 * heaptrack's files, interpreted (what `heaptrack PROG` keeps) or raw
 * (`heaptrack -r`), file format versions 2 and 3 (docs/formats/heaptrack.md),
 * read as a stream of decompressed bytes (the caller, tools/pack_src.c,
 * takes off gzip / zstd) and turned into struct tm_heap_ev, one callback an
 * event. It is an import for `tracetool pack`, not a record codec: the
 * interpreted form refers to earlier lines (allocation infos, trace
 * indexes), so a decoder resumed at a checkpoint would need a table as
 * large as the traced program's distinct (size, call stack) pairs and live
 * allocations in its state, which a checkpoint cannot hold bounded.
 * (glibc mtrace logs are a record codec: codecs/heap/mtrace.h.)
 *
 * thread and heap are always 0 (heaptrack records neither); time is
 * heaptrack's elapsed milliseconds; attributes the trace index
 * ("trace=0x8"); what it records that is no heap event (the command line)
 * comes as a comment.
 *
 * Memory: the reader holds one line at a time (at most HEAPIN_LINE_MAX
 * bytes; longer lines it skips anyway) and a table proportional to the
 * traced program's distinct (size, call stack) pairs and its peak number
 * of live allocations (heaptrack.c says how much).
 *
 * Errors: a negative errno (-EIO for input that is not what the format
 * writes, -ENOTSUP for a file version this reader does not know, -ENOMEM,
 * or what the read function returned), with err saying
 * "<name>: line N (byte offset B): ...". Input never aborts. */
#ifndef TM_HEAPIN_H
#define TM_HEAPIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tools/lib_int.h"

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

/* "heaptrack" when the first n decompressed bytes head begin with
 * heaptrack's version line (n is what the caller has, ideally 4 KiB or all
 * of a shorter stream), else NULL. A file of a version the reader rejects
 * is still "heaptrack", so that its message names the version. */
const char *heapin_detect(const uint8_t *head, size_t n);

/* Read a heaptrack data file (raw or interpreted, told apart by its lines)
 * from rd(rarg, ...) to its end, calling fn(arg, ev) for each event, in
 * the file's order. name names the input in messages. Returns 0 at the
 * end of the input, fn's return value if nonzero (err is then fn's to
 * fill), or a negative errno with err set. */
int heapin_heaptrack(heapin_read_fn rd, void *rarg, const char *name, heapin_event_fn fn, void *arg,
                     struct tm_err *err);

#endif
