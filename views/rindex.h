/* rindex: the checkpoint index of a record trace (the record model's
 * twin of index.h).
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
 *                            appear (tm_rstats_stream_ids); later ones
 *                            get no stream of their own
 *
 * Where the container's restart points are known during the pass (a zstd
 * archive in the seekable format: its frames), a checkpoint is also taken
 * at the first record that starts at or after each of them: resuming there
 * decompresses nothing in vain, and read-ahead workers take the intervals
 * between such checkpoints (tm_rtrace_segments). Checkpoints are at most K
 * records apart, not exactly K.
 *
 * The same pass gives every view's size (the totals) and the statistics
 * (rstats.h). K starts at TM_CKPT_REFS_DEFAULT and doubles whenever
 * TM_CKPT_CAP checkpoints exist, dropping about every other checkpoint but
 * keeping those at restart points where it can (points known when the
 * pass began; else every other one); with the default spacing the
 * checkpoints are then thinned to 0.5% of the archive (docs/index-
 * format.md). rindex_file.c saves and loads it, with
 * the container's seek index, like index.c's file. */
#ifndef TM_RINDEX_H
#define TM_RINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/containers/container.h"
#include "index.h"
#include "rstats.h"
#include "view.h"

/* A checkpoint at most this far after a restart point of the container
 * (raw bytes decompressed in vain to resume there), and the first after
 * it, counts as at that point (tm_rindex_at_point). */
#define TM_RINDEX_ALIGN_SLACK (64u << 10)

struct tm_rindex {
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
        const struct tm_family *fam; /* the schema's, when it has statistics; else NULL */
        struct tm_rstats stats;
};

/* Column of streams/<kind k> and of fields/<field f>. */
#define TM_RCOL_REC 0
#define TM_RCOL_ASCII 1
static inline unsigned tm_rcol_kind(unsigned k)
{
        return 2 + k;
}
static inline unsigned tm_rcol_field(const struct tm_schema *s, unsigned f)
{
        return 2 + s->nkinds + f;
}
static inline unsigned tm_rcol_section(const struct tm_schema *s, unsigned i)
{
        return 2 + s->nkinds + s->nfields + i;
}
static inline unsigned tm_rcol_form(const struct tm_schema *s, unsigned i)
{
        return 2 + s->nkinds + s->nfields + s->nsections + i;
}
/* Column of the j-th per-id stream (tm_family_stream_field). */
static inline unsigned tm_rcol_stream(const struct tm_schema *s, unsigned j)
{
        return 2 + s->nkinds + s->nfields + s->nsections + s->nforms + j;
}
static inline unsigned tm_rcol_count(const struct tm_schema *s)
{
        return 2 + s->nkinds + s->nfields + s->nsections + s->nforms +
               (tm_family_stream_field(s) >= 0 ? TM_FAMILY_STREAMS_MAX : 0);
}

/* Build the index of the trace in c (one tm_cont_scan). The decoder starts
 * at raw offset hdr_len with state st0 (codec->open's). k: initial spacing
 * (0: default). Returns 0 or a negative errno with err set, or
 * TM_INDEX_PREFIX (index.h) when damage stopped the pass: *out then
 * indexes the records before it and err names it. */
int tm_rindex_build(struct tm_cont *c, const struct tm_rcodec *codec, void *ctx,
                    const struct tm_schema *s, uint64_t hdr_len, const struct tm_rstate *st0,
                    uint64_t k, tm_progress_fn progress, void *arg, struct tm_rindex **out,
                    struct tm_err *err);

/* tm_rindex_build with the checkpoints of like (an index file's: their
 * record counts must increase, as tm_rindex_load checks) and its K,
 * instead of every K records and at restart points, and none thinned: an
 * index to compare like with (tm_rindex_compare), whatever thinning made
 * like (verify; a pass with like's K would take others where the
 * container's restart points, or the size budget, decided). */
int tm_rindex_build_like(struct tm_cont *c, const struct tm_rcodec *codec, void *ctx,
                         const struct tm_schema *s, uint64_t hdr_len, const struct tm_rstate *st0,
                         const struct tm_rindex *like, tm_progress_fn progress, void *arg,
                         struct tm_rindex **out, struct tm_err *err);

void tm_rindex_free(struct tm_rindex *ix);

/* Is checkpoint i at a restart point of c: the first checkpoint after one
 * and at most TM_RINDEX_ALIGN_SLACK raw bytes after it? Checkpoint 0 is. */
int tm_rindex_at_point(const struct tm_rindex *ix, const struct tm_cont *c, uint32_t i);

/* The last checkpoint whose position in column col is <= v. */
uint32_t tm_rindex_find(const struct tm_rindex *ix, unsigned col, uint64_t v);

/* The bytes record r adds to column col (1 for the record count), from
 * lengths alone; r->kind must be a kind of s. p: the plans of s's text
 * forms, ascii's first, then one per tm_schema.form. */
struct tm_rrender_plan;
uint64_t tm_rindex_len(const struct tm_schema *s, const struct tm_rrender_plan *p,
                       const struct tm_rindex *ix, unsigned col, const struct tm_rec *r);

/* The plans of s's text forms (ascii's, then one per tm_schema.form), in
 * one new array; NULL on out of memory or a schema this build cannot
 * render (tm_rrender_plan_form). */
struct tm_rrender_plan *tm_rindex_plans(const struct tm_schema *s);

/* A fingerprint of the schema: an index made under another schema (a
 * Meta-TF trace whose DTD changed) is not used. */
uint32_t tm_rindex_schema_crc(const struct tm_schema *s);

/* Write ix and c's seek index to path atomically (views/ixfile.h). */
int tm_rindex_save(const struct tm_rindex *ix, const struct tm_cont *c,
                   const struct tm_index_key *key, uint32_t schema_crc, const char *path,
                   struct tm_err *err);

/* Read the index file at path: it must match key, the schema s (its CRC,
 * column count and family's statistics size) and the state size, pass its
 * CRC and consistency checks (the first checkpoint at hdr_len; the
 * family's stats_ok). When c is not NULL, also restores c's seek index
 * and hands the file's descriptor to *fd_out (it must stay open while c
 * lives). Returns 0, -ENOENT, -ESTALE (another archive version or schema)
 * or -EIO (corrupt). */
int tm_rindex_load(const char *path, const struct tm_index_key *key, const struct tm_schema *s,
                   size_t stsize, uint64_t hdr_len, struct tm_cont *c, struct tm_rindex **out,
                   int *fd_out, struct tm_err *err);

/* 0 if a (an index file's) and b (a fresh build's) describe the archive
 * alike, else -EIO with err naming the first difference (verify). */
int tm_rindex_compare(const struct tm_rindex *a, const struct tm_rindex *b, struct tm_err *err);

#endif
