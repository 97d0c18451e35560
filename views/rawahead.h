/* rawahead: a container cursor whose raw stream a thread of its own
 * decompresses ahead of the reader.
 *
 * A readahead with a single worker (two CPUs: the worker on one, the FUSE
 * threads and the reading program on the other) spends about a quarter of
 * its time in zstd. A rawahead moves that stage to its own thread, which
 * fills a ring of TM_RAWAHEAD_CHUNKS chunks of TM_RAWAHEAD_CHUNK raw bytes
 * while the worker decodes and renders the chunks before. Measured in
 * docs/performance.md.
 *
 * Same contract as tm_creader_seek / _read / _tell (container.h), for one
 * reading thread. Bytes come from the container cursor in order, so they
 * are exactly its bytes; an error is returned at the byte offset where the
 * cursor met it, with its message, and again on every read until a seek.
 * Memory: the ring, fixed. */
#ifndef TM_RAWAHEAD_H
#define TM_RAWAHEAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../codecs/container.h"

#define TM_RAWAHEAD_CHUNK (128u << 10)
#define TM_RAWAHEAD_CHUNKS 4
#define TM_RAWAHEAD_BYTES (TM_RAWAHEAD_CHUNK * TM_RAWAHEAD_CHUNKS)

struct tm_rawahead;

/* Open a cursor on c at raw offset 0 and start its thread. Returns 0,
 * -ENOMEM, or the error of pthread_create as a negative errno. */
int tm_rawahead_open(struct tm_cont *c, struct tm_rawahead **out, struct tm_err *err);

/* Continue at raw_off: ahead of the chunks already decompressed (a short
 * hop forward) they are skipped, otherwise the thread seeks its cursor
 * and starts over there. Errors of that seek come with the next read. */
int tm_rawahead_seek(struct tm_rawahead *a, uint64_t raw_off, struct tm_err *err);

/* Copy up to n bytes at the position, waiting for the thread if needed.
 * Returns the count (short reads happen at chunk ends), 0 at the end of
 * the stream, or the cursor's negative errno with its message. */
ssize_t tm_rawahead_read(struct tm_rawahead *a, void *buf, size_t n, struct tm_err *err);

/* The raw offset of the next byte tm_rawahead_read returns. */
uint64_t tm_rawahead_tell(const struct tm_rawahead *a);

/* Stop the thread and free everything. NULL is allowed. */
void tm_rawahead_close(struct tm_rawahead *a);

#endif
