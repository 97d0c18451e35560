/* index: the sparse checkpoint index of one trace archive.
 *
 * One sequential pass over the archive (tm_cont_scan, which also builds the
 * container's seek index) decodes every reference and records, every K
 * references, a checkpoint: where the decoder resumes in the raw stream,
 * its state, and where that point falls in every view. K starts at
 * TM_CKPT_REFS_DEFAULT; when TM_CKPT_CAP checkpoints exist, every other one
 * is dropped and K doubles, so the index never exceeds TM_CKPT_CAP entries.
 * The same pass computes view sizes and the stats (views/stats.h).
 *
 * The index file (docs/index-format.md) stores all of it plus the
 * container's seek index, keyed by the archive's size, mtime and inode, and
 * protected by a CRC32; tm_index_load never trusts it: any mismatch or
 * inconsistency is an error, which callers treat as "rebuild". */
#ifndef TM_INDEX_H
#define TM_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/address/trace.h"
#include "../codecs/containers/container.h"
#include "../codecs/address/addr_stats.h"
#include "view.h"

#define TM_CKPT_REFS_DEFAULT (1u << 16)
#define TM_CKPT_CAP 8192
/* With the default spacing, checkpoints are thinned after the pass until
 * they take at most archive size / TM_INDEX_BUDGET_DIV bytes (0.5%). An
 * explicit spacing (tests, TM_CKPT_REFS) is kept as asked. */
#define TM_INDEX_BUDGET_DIV 200
/* Bytes of one checkpoint in the index file. */
#define TM_CKPT_BYTES (8 * (3 + 2 * TM_NTYPES) + TM_STATE_MAX)

/* A point where decoding can restart, between two references. */
struct tm_ckpt {
        uint64_t raw_off;             /* raw offset the decoder resumes at */
        uint64_t rec;                 /* references before this point */
        uint64_t ascii_off;           /* offset in the ascii view */
        uint64_t type_rec[TM_NTYPES]; /* references of each type before */
        uint64_t type_off[TM_NTYPES]; /* offset in streams/<type> */
        struct tm_dec_state st;       /* decoder state here */
};

struct tm_index {
        uint64_t k;   /* references between checkpoints */
        uint32_t n;   /* checkpoints in ck; ck[0] is the start */
        uint32_t cap; /* entries allocated, at most TM_CKPT_CAP */
        struct tm_ckpt *ck;
        uint64_t hdr_len; /* raw bytes of the trace header */
        uint64_t raw_size;
        uint64_t nrefs;
        uint64_t ascii_size;
        uint64_t type_refs[TM_NTYPES];
        uint64_t type_size[TM_NTYPES]; /* size of streams/<type> */
        struct tm_stats stats;
};

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
         * (a struct tm_dec_state, or a struct tm_rstate for a record
         * trace)? The codec's state_ok with ctx; NULL: not checked. A
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

/* One pass over c (tm_cont_scan) decoding with codec from the start of the
 * raw stream; head holds its first headn bytes (for dec_init). k is the
 * initial checkpoint spacing (0: TM_CKPT_REFS_DEFAULT). progress may be
 * NULL. Returns 0 and a new index in *out, or a negative errno (-EIO with
 * "raw offset N: ..." or the container's message), or TM_INDEX_PREFIX when
 * damage (a decode or container error) stopped the pass: then *out indexes
 * the intact prefix (every reference before the damage, sizes and stats
 * of those) and err says where the damage is (docs/damage.md). */
#define TM_INDEX_PREFIX 1
int tm_index_build(struct tm_cont *c, const struct tm_codec *codec, const uint8_t *head,
                   size_t headn, uint64_t k, tm_progress_fn progress, void *arg,
                   struct tm_index **out, struct tm_err *err);

void tm_index_free(struct tm_index *ix);

/* Write ix and c's seek index to path atomically: a temporary file in the
 * same directory, fsync, rename. Returns 0 or a negative errno (the
 * temporary file is removed on failure). */
int tm_index_save(const struct tm_index *ix, const struct tm_cont *c,
                  const struct tm_index_key *key, const char *path, struct tm_err *err);

/* Read the index file at path. It must match key and pass its CRC and
 * consistency checks. When c is not NULL, also restores c's seek index
 * from the file, which must then stay open: *fd_out receives the file's
 * descriptor (the caller closes it after c). Returns 0, -ENOENT if there is
 * no file, -ESTALE if it belongs to another version of the archive, or
 * -EIO if it is corrupt. */
int tm_index_load(const char *path, const struct tm_index_key *key, struct tm_cont *c,
                  struct tm_index **out, int *fd_out, struct tm_err *err);

/* Which offset a lookup is by. */
enum tm_ix_by { TM_BY_REC, TM_BY_ASCII, TM_BY_TYPE };

/* The last checkpoint whose position (by: reference number, ascii offset
 * or offset in streams/<type>) is <= v. Never NULL (ck[0] is at 0). */
const struct tm_ckpt *tm_index_find(const struct tm_index *ix, enum tm_ix_by by, unsigned type,
                                    uint64_t v);

/* Compare two indexes built from the same archive (totals, stats and, when
 * both have the same spacing, every checkpoint). Returns 0, or -EIO with a
 * message naming the first difference. */
/* -EIO with "index differs from the archive: what (i)" in err (verify's
 * comparisons, both families). */
int tm_index_differ(struct tm_err *err, const char *what, uint64_t i);

int tm_index_compare(const struct tm_index *a, const struct tm_index *b, struct tm_err *err);

#endif
