/* index: what every pass over an archive shares, and the index's limits.
 *
 * The checkpoint index itself (one layout for every trace) is rindex.h;
 * its file rindex_file.c (docs/index-format.md). Here: its spacing and
 * size limits, the key an index file must match, the front of a pass's
 * sink (progress, the header's bytes, a limit), its end, and the check
 * that damage stopped a pass at verified bytes only. */
#ifndef TM_INDEX_H
#define TM_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/containers/container.h"
#include "view.h"

#define TM_CKPT_REFS_DEFAULT (1u << 16)
#define TM_CKPT_CAP 8192
/* With the default spacing, checkpoints are thinned after the pass until
 * they take at most archive size / TM_INDEX_BUDGET_DIV bytes (0.5%). An
 * explicit spacing (tests, TM_CKPT_REFS) is kept as asked. */
#define TM_INDEX_BUDGET_DIV 200

struct tm_side_trust;

/* What an index file must match to be used. */
struct tm_index_key {
        uint64_t archive_size;
        int64_t mtime_ns;
        uint64_t ino;
        const char *codec;
        const char *container;
        /* Not stored: who could change the archive, whose index files
         * are believed as the caller's own are (views/ixfile.h); NULL:
         * only the caller's and root's. */
        const struct tm_side_trust *trust;
        /* Not stored: can the trace's decoder reach a checkpoint's state
         * (a struct tm_rstate)? The codec's state_ok with ctx; NULL: not checked. A
         * file with a state it rejects is "inconsistent" and not used. */
        int (*state_ok)(const void *ctx, const void *state);
        const void *state_ctx;
};

/* What an index pass's sink does first with each piece of the raw stream
 * (both index passes, this one and rindex.c's): count it, report progress
 * now and then, and drop the bytes of the trace header, which the decoder
 * was given at its set-up. */
#define TM_SCAN_PROGRESS_EVERY (64ull << 20) /* raw bytes between progress calls */

struct tm_scan_front {
        uint64_t seen; /* raw bytes so far */
        uint64_t skip; /* header bytes still to drop */
        uint64_t next_progress;
        tm_progress_fn progress; /* may be NULL */
        void *arg;
        struct tm_cont *cont;
        uint64_t limit; /* with limited: raw bytes past this are dropped */
        int limited;
        int stop; /* the limit was reached: the sink ends the scan */
};

/* Move *buf past what of its n bytes is still header, and cut what lies
 * past the limit; returns the bytes left. */
size_t tm_scan_front(struct tm_scan_front *s, const uint8_t **buf, size_t n);

/* Damage stopped a pass whose prefix ends at raw offset end: may the
 * prefix keep all of it? The container vouches for the bytes before
 * tm_cont_scan_good; when end lies past them (the pass stopped in a zstd
 * frame or gzip member before its checksum, or the checksum failed) the
 * rest of the container is verified without decoding: intact, the
 * prefix stands (0); damaged, *limit is where the damaged frame or member
 * starts and err the container's message (1): the pass must be run again
 * with the limit, so that no unverified byte is served as right. -ENOMEM
 * when the check could not be made. */
int tm_scan_unverified(struct tm_cont *c, uint64_t end, uint64_t *limit, struct tm_err *err);

/* The end of both index passes: the decoder, at the end of the stream,
 * left `left` bytes undecoded at raw_off (a record cut short), or the
 * header is not whole: -EIO naming the raw offset; else 0. */
int tm_scan_end(const struct tm_scan_front *s, size_t left, uint64_t raw_off, struct tm_err *err);

/* What a pass that returned rc gives its caller: 0, TM_INDEX_PREFIX when
 * damage stopped it (err says where), or -ENOMEM. */
int tm_scan_result(int rc, struct tm_err *err);

/* What a pass returns when damage stopped it: it indexes the intact
 * prefix (every record before the damage) and err says where the damage
 * is (docs/damage.md). */
#define TM_INDEX_PREFIX 1

/* -EIO with "index differs from the archive: what (i)" in err (verify's
 * comparison, tm_rindex_compare). */
int tm_index_differ(struct tm_err *err, const char *what, uint64_t i);

#endif
