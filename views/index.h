/* index: the checkpoint index of a trace, one layout for every format.
 *
 * One pass over the archive (tm_cont_scan) decodes every record and every
 * K records keeps a checkpoint: the raw offset the decoder resumes at, its
 * state (the codec's state_size bytes) and the position of that point in
 * every view, as columns:
 *
 *   column 0                 records before (binary offset = records x
 *                            record size)
 *   column 1                 ascii offset
 *   columns 2 .. 2+nkinds    offset in streams/<kind>
 *   then nfields columns     offset in fields/<field>
 *   then nsections columns   offset in sections/<section> (its records'
 *                            ascii lines)
 *   then nforms columns      offset in the view of each text form besides
 *                            ascii (tm_schema.form: an address trace's xdin)
 *   then TM_FAMILY_STREAMS_MAX  a family with per-id streams (heap: the
 *                            thread field): offset in
 *                            streams/<field>/<id> of the j-th id to
 *                            appear (tm_stats_stream_ids); later ones
 *                            get no stream of their own
 *
 * Where the container's restart points are known before the pass (a zstd
 * archive in the seekable format: its frames), a checkpoint is also taken
 * at the first record that starts at or after each of them: resuming there
 * decompresses nothing in vain, and read-ahead workers take the intervals
 * between such checkpoints (tm_records_segments). Checkpoints are at most
 * K records apart, not exactly K.
 *
 * The same pass gives every view's size (the totals) and the statistics
 * (stats.h). K starts at TM_CKPT_REFS_DEFAULT and doubles whenever
 * TM_CKPT_CAP checkpoints exist, dropping about every other checkpoint but
 * keeping those at restart points where it can; with the default spacing
 * the checkpoints are then thinned to 0.5% of the archive
 * (docs/index-format.md). index_file.c saves and loads it, with the
 * container's seek index. A codec with a column path (tm_rcodec.
 * decode_batch) is accounted a batch at a time.
 *
 * Also here, what every pass over an archive shares: the key an index
 * file must match, the front of the scan's sink (progress, the header's
 * bytes, a limit), its end, and the check that damage stopped a pass at
 * verified bytes only. */
#ifndef TM_INDEX_H
#define TM_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/containers/container.h"
#include "stats.h"
#include "view.h"

#define TM_CKPT_REFS_DEFAULT (1u << 16)
#define TM_CKPT_CAP 8192
/* With the default spacing, checkpoints are thinned after the pass until
 * they take at most archive size / TM_INDEX_BUDGET_DIV bytes (0.5%), or
 * the bytes of one checkpoint every TM_INDEX_KEEP_REFS records (and two)
 * when that is more: an archive of many records a byte (the native
 * encoding's 37 an address reference) would otherwise keep one every 2^20
 * records, all of which a read near the end (`tail`) decodes and skips
 * (on 10^8 references in 2^18-record blocks, 12 ms of the daemon's CPU
 * against 6). An explicit spacing (tests, TM_CKPT_REFS) is kept as
 * asked. */
#define TM_INDEX_BUDGET_DIV 200
#define TM_INDEX_KEEP_REFS (1u << 17)

struct tm_side_trust;

/* What an index file must match to be used. */
struct tm_index_key {
        uint64_t archive_size;
        int64_t mtime_ns;
        uint64_t ino;
        /* tm_ix_fingerprint of the archive's content (views/ixfile.h);
         * fp_failed: it could not be read, and no file matches */
        uint64_t fingerprint;
        int fp_failed;
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
        /* Not stored: a descriptor of the directory the index file is in
         * (its path's last component is its name there), through which it
         * is read and written, never reopened by path; NULL: the
         * directory of the path, by name. */
        const int *dir_fd;
};

/* What an index pass's sink does first with each piece of the raw stream
 * (the index pass and verify's): count it, report progress
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
 * comparison, tm_index_compare). */
int tm_index_differ(struct tm_err *err, const char *what, uint64_t i);

/* ---- the index ---- */

/* A checkpoint at most this far after a restart point of the container
 * (raw bytes decompressed in vain to resume there), and the first after
 * it, counts as at that point (tm_index_at_point). */
#define TM_INDEX_ALIGN_SLACK (64u << 10)

struct tm_index {
        uint64_t k;    /* records between checkpoints, at most */
        uint32_t n;    /* checkpoints */
        uint32_t cap;  /* allocated */
        unsigned ncol; /* columns */
        size_t stsize; /* bytes of decoder state */
        uint64_t *raw; /* [cap] raw offsets */
        uint64_t *col; /* [cap * ncol] */
        uint8_t *st;   /* [cap * stsize] */
        uint64_t *tot; /* [ncol] positions at the end: view sizes */
        uint64_t raw_size;
        /* a damaged archive whose verified bytes end before the header
         * does: what the header gives (schema, byte sections) is not
         * served (docs/damage.md) */
        int head_unverified;
        const struct tm_family *fam; /* the schema's, when it has statistics; else NULL */
        struct tm_stats stats;
};

/* Column of streams/<kind k> and of fields/<field f>. */
#define TM_COL_REC 0
#define TM_COL_ASCII 1
static inline unsigned tm_col_kind(unsigned k)
{
        return 2 + k;
}
static inline unsigned tm_col_field(const struct tm_schema *s, unsigned f)
{
        return 2 + s->nkinds + f;
}
static inline unsigned tm_col_section(const struct tm_schema *s, unsigned i)
{
        return 2 + s->nkinds + s->nfields + i;
}
static inline unsigned tm_col_form(const struct tm_schema *s, unsigned i)
{
        return 2 + s->nkinds + s->nfields + s->nsections + i;
}
/* Column of the j-th per-id stream (tm_family_stream_field). */
static inline unsigned tm_col_stream(const struct tm_schema *s, unsigned j)
{
        return 2 + s->nkinds + s->nfields + s->nsections + s->nforms + j;
}
static inline unsigned tm_col_count(const struct tm_schema *s)
{
        return 2 + s->nkinds + s->nfields + s->nsections + s->nforms +
               (tm_family_stream_field(s) >= 0 ? TM_FAMILY_STREAMS_MAX : 0);
}

/* Build the index of the trace in c (one tm_cont_scan). The decoder starts
 * at raw offset hdr_len with state st0 (codec->open's). k: initial spacing
 * (0: default). Returns 0 or a negative errno with err set, or
 * TM_INDEX_PREFIX (index.h) when damage stopped the pass: *out then
 * indexes the records before it and err names it. */
int tm_index_build(struct tm_cont *c, const struct tm_rcodec *codec, void *ctx,
                    const struct tm_schema *s, uint64_t hdr_len, const struct tm_rstate *st0,
                    uint64_t k, tm_progress_fn progress, void *arg, struct tm_index **out,
                    struct tm_err *err);

/* tm_index_build with the checkpoints of like (an index file's: their
 * record counts must increase, as tm_index_load checks) and its K,
 * instead of every K records and at restart points, and none thinned: an
 * index to compare like with (tm_index_compare), whatever thinning made
 * like (verify; a pass with like's K would take others where the
 * container's restart points, or the size budget, decided). */
int tm_index_build_like(struct tm_cont *c, const struct tm_rcodec *codec, void *ctx,
                         const struct tm_schema *s, uint64_t hdr_len, const struct tm_rstate *st0,
                         const struct tm_index *like, tm_progress_fn progress, void *arg,
                         struct tm_index **out, struct tm_err *err);

void tm_index_free(struct tm_index *ix);

/* Is checkpoint i at a restart point of c: the first checkpoint after one
 * and at most TM_INDEX_ALIGN_SLACK raw bytes after it? Checkpoint 0 is. */
int tm_index_at_point(const struct tm_index *ix, const struct tm_cont *c, uint32_t i);

/* The last checkpoint whose position in column col is <= v. */
uint32_t tm_index_find(const struct tm_index *ix, unsigned col, uint64_t v);

/* The bytes record r adds to column col (1 for the record count), from
 * lengths alone; r->kind must be a kind of s. p: the plans of s's text
 * forms, ascii's first, then one per tm_schema.form. */
struct tm_text_plan;
uint64_t tm_index_len(const struct tm_schema *s, const struct tm_text_plan *p,
                       const struct tm_index *ix, unsigned col, const struct tm_rec *r);

/* The plans of s's text forms (ascii's, then one per tm_schema.form), in
 * one new array; NULL on out of memory or a schema this build cannot
 * render (tm_text_plan_form). */
struct tm_text_plan *tm_index_plans(const struct tm_schema *s);

/* A fingerprint of the schema: an index made under another schema (a
 * Meta-TF trace whose DTD changed) is not used. */
uint32_t tm_index_schema_crc(const struct tm_schema *s);

/* Write ix and c's seek index to path atomically (views/ixfile.h). */
int tm_index_save(const struct tm_index *ix, const struct tm_cont *c,
                   const struct tm_index_key *key, uint32_t schema_crc, const char *path,
                   struct tm_err *err);

/* Read the index file at path: it must match key, the schema s (its CRC,
 * column count and family's statistics size) and the state size, pass its
 * CRC and consistency checks (the first checkpoint at hdr_len; the
 * family's stats_ok). When c is not NULL, also restores c's seek index
 * and hands the file's descriptor to *fd_out (it must stay open while c
 * lives). Returns 0, -ENOENT, -ESTALE (another archive version or schema)
 * or -EIO (corrupt). */
int tm_index_load(const char *path, const struct tm_index_key *key, const struct tm_schema *s,
                   size_t stsize, uint64_t hdr_len, struct tm_cont *c, struct tm_index **out,
                   int *fd_out, struct tm_err *err);

/* 0 if a (an index file's) and b (a fresh build's) describe the archive
 * alike, else -EIO with err naming the first difference (verify). */
int tm_index_compare(const struct tm_index *a, const struct tm_index *b, struct tm_err *err);

#endif
