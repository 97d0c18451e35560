/* Families: what a kind of trace adds to the generic record views.
 *
 * Every record trace gets the generic statistics (views/stats.h: records
 * per kind, per numeric field its minimum and maximum) and the generic
 * views (ascii, binary, streams/<kind>, fields/<field>, sections/...). A
 * family (address, heap, object, java, laplace) adds to those through
 * the hooks below, never through a branch in views/: statistics gathered
 * in the index pass, saved in the index file and checked when loaded
 * from it, and given as rows (statrow.h) that views/ renders by one rule
 * as the stats view and as stats.json's member named after the family;
 * per-id streams (heap: streams/thread/<id>) with their index columns;
 * and what one family or another adds (struct tm_family_more).
 *
 * Which family a trace is of is decided once, by the schema: the first
 * row of tm_families, then of the families modules add themselves
 * (family_row.h), whose claims() accepts it (tm_family_of). The same
 * rule names a Meta-TF trace's schema (codecs/metatf/metatf.c). No family
 * claims a schema: only the generic part applies.
 *
 * The statistics block: stats_size bytes (a multiple of 8, at most
 * TM_FAMILY_STATS_MAX) of plain data, 64-bit words in host order, no
 * pointers and no padding, so the index file stores it as little-endian
 * words (docs/index-format.md, "The family's statistics") and a block
 * read back from a file is the one that was saved. A block read from a
 * file is not trusted: stats_ok() is asked before any other hook sees it,
 * and must refuse whatever would make another hook read out of bounds or
 * give figures that cannot be (parts larger than their wholes). */
#ifndef TM_FAMILY_H
#define TM_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"
#include "statrow.h"

struct tm_family_acc; /* a family's running state in the index pass */

/* What the stats views name a trace by (the views fill it in). */
struct tm_family_info {
        const char *name;      /* the archive's file name */
        const char *codec;     /* "pdats2" */
        const char *container; /* "zstd" */
        uint64_t archive_size, raw_size, ascii_size;
        const char *damage; /* what ended the intact prefix the figures cover,
                             * or NULL: the whole trace */
        const char *notes;  /* what the trace says of itself, a line each (its
                             * leading comments: tracetool record's notes);
                             * NULL: none */
        const char *side;   /* side files passed over and why (a DTD beside the
                             * archive: docs/side-files.md), a line each;
                             * NULL: none */
        /* The rows of where the archive's bytes go (the codec's storage
         * hook, record.h), which the renderers put after the family's
         * under "storage": storage(storage_arg, out); NULL: none. */
        void (*storage)(const void *storage_arg, struct tm_rows *out);
        const void *storage_arg;
};

#define TM_FAMILY_STATS_MAX 4096 /* bytes of a family's statistics block */
#define TM_FAMILY_STREAMS_MAX 64 /* per-id streams of a trace, at most */

/* What one family or another adds beyond its statistics: a faster pass,
 * a text layout of its own, rules, a correction of mapped records,
 * tables. A family that adds none of these has no such struct (more is
 * NULL); tm_family_more gives one with every member NULL then. */
struct tm_family_more {
        /* acc_add for a column batch (record.h), when the codec decodes
         * into them; NULL: the pass hands such records to acc_add. */
        void (*acc_add_batch)(struct tm_family_acc *a, const struct tm_rbatch *b);

        /* 1: the family's rows give the whole stats text (the address
         * family: the PDATS II paper's tables, laid out before the generic
         * ones), the generic rows are in stats.json only, and the generic
         * field ranges are not counted. 0: the generic text, then the
         * family's. */
        int text_whole;

        /* The family's rules, which `tracetool verify` (tm_trace_verify)
         * checks after decoding the whole trace: 0 when block (stats_ok
         * accepted it) records no violation, else -EIO with err naming
         * the rule and the record number of the first violation. NULL:
         * the family has no rules beyond decoding. */
        int (*verify)(const void *block, const struct tm_schema *s, struct tm_err *err);

        /* A record of another schema of the family made a record of to
         * (a schema this family claims: its encoders') by names
         * (codecs/record/rmap.h): correct in o what names cannot say.
         * from is the record's schema. NULL: names say all. */
        void (*rec_refine)(const struct tm_schema *from, const struct tm_schema *to,
                           struct tm_rec *o);

        /* Tables the pass can make beside its statistics (java: the names
         * it interned), each shown as the view sections/<name>: their
         * names, NULL-terminated, at most TM_FAMILY_TABLES_MAX; NULL:
         * none. They are not in the statistics block nor the index: the
         * views make them by a pass of their own when one is first asked
         * for (views/tables.h), or binary is opened (when the family has
         * a binary hook), so the family must bound what its accumulator
         * holds; the views keep that accumulator for binary(). table()
         * writes table i of accumulator a (after acc_finish) as text into
         * a buffer it allocates (*out, freed by the caller), *len bytes:
         * 0, or -ENOMEM. */
        const char *const *tables;
        int (*table)(struct tm_family_acc *a, unsigned i, char **out, size_t *len);
};

struct tm_family {
        const char *name; /* "heap": the schema's name, stats.json's member */

        /* Is s a schema of this family? 1 or 0; the one rule, from the
         * schema's kinds and fields (never its name). */
        int (*claims)(const struct tm_schema *s);

        /* Bytes of the statistics block (see above); 0: none, and the
         * statistics hooks are not called. */
        size_t stats_size;

        /* The pass: start for schema s (NULL on out of memory), add n
         * records of s in trace order, finish into block (stats_size
         * bytes; no records are added after it), free (also without a
         * finish, after an error). peak_mem: the most bytes the
         * accumulator held at once so far. */
        struct tm_family_acc *(*acc_start)(const struct tm_schema *s);
        void (*acc_add)(struct tm_family_acc *a, const struct tm_rec *r, size_t n);
        void (*acc_finish)(struct tm_family_acc *a, void *block);
        void (*acc_free)(struct tm_family_acc *a);
        size_t (*acc_peak_mem)(const struct tm_family_acc *a);

        /* Could the pass have produced block? 1 or 0 (the index loader
         * refuses the file otherwise). NULL: every block is one. */
        int (*stats_ok)(const void *block);

        /* The family's statistics as rows into out (statrow.h), in order,
         * keys relative to the family (stats.json puts them in the member
         * named name: docs/stats-json.md), at most 4 names a key, with
         * their text (the stats view, after the generic rows). in: the
         * trace, for figures per byte of it. */
        void (*rows)(const void *block, const struct tm_schema *s, const struct tm_family_info *in,
                     struct tm_rows *out);

        /* Per-id streams: the field whose distinct values each get a
         * stream (streams/<stream_field>/<id>) and an index column, NULL
         * for none; stream_ids gives the ids from the block, in the order
         * they first appear in the trace, at most TM_FAMILY_STREAMS_MAX
         * (their count; *ids points into block). The index pass assigns
         * columns in the same order of first appearance. */
        const char *stream_field;
        unsigned (*stream_ids)(const void *block, const uint64_t **ids);

        /* The binary view's record in place of the generic one
         * (codecs/record/text.h): bin_size bytes; binary() writes the
         * records of r[0..n) to dst, n * bin_size bytes, nothing past
         * them; bin_layout() describes the record (a C struct and a numpy
         * dtype, for the schema view) into dst, its length
         * (snprintf-style). 0 / NULL: the generic record. tables: for a
         * family with tables (more), the finished accumulator of the
         * pass that made the trace's tables (views/tables.h), read only,
         * so that a record can refer to a table's entries by number;
         * NULL for a family without. */
        size_t bin_size;
        void (*binary)(const struct tm_family_acc *tables, uint8_t *dst, const struct tm_schema *s,
                       const struct tm_rec *r, size_t n);
        size_t (*bin_layout)(char *dst, size_t cap);

        /* What the family adds beyond the above, or NULL: nothing. */
        const struct tm_family_more *more;
};

#define TM_FAMILY_TABLES_MAX 4 /* tables of a family, at most */

/* f's more, or one with every member NULL. */
static inline const struct tm_family_more *tm_family_more(const struct tm_family *f)
{
        static const struct tm_family_more none;
        return f && f->more ? f->more : &none;
}

/* The next line of a text of lines (tm_family_info.notes, .side) at *l:
 * its start, its length in *len, *l moved past it; NULL after the last
 * (and for a NULL text). */
const char *tm_family_line(const char **l, size_t *len);

/* The family table, NULL-terminated, and the lookups below: defined in
 * codecs/families.c (a module of the codecs' layer, above this one). */
extern const struct tm_family *const tm_families[];

/* The family of schema s: the first row that claims it (tm_families, then
 * the modules' own rows: family_row.h), or NULL. */
const struct tm_family *tm_family_of(const struct tm_schema *s);

/* The schema field of s whose values get per-id streams, or -1. */
int tm_family_stream_field(const struct tm_schema *s);

#endif
