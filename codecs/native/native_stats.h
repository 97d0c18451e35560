/* native_stats: where the bytes of a .tmn file go (docs/formats/native.md;
 * the rows: docs/stats-json.md, "storage").
 *
 * A walk over the file's framing: the file header, the schema chunk
 * (schema 2), each block's header and stream table, the end mark. Every
 * byte of the file is counted once, in one part: the framing (headers,
 * the schema chunk, schema 1's dictionary chunk, the blocks' coding bytes, method bytes and stream
 * tables, the end mark) or a stream (summed over the blocks by the
 * stream's role: schema 1's six predicted streams and three plain
 * columns; schema 2's kind and section streams and, per field, the
 * streams of the methods its blocks took), so the parts add up to the
 * file's size. No record is decoded; every block's CRC-32 and the schema
 * chunk's are checked (a table is trusted only when its block's checksum
 * holds), and a table whose streams do not fill its body exactly is
 * refused: damage is an error naming the raw offset, never other
 * figures. Cost: one read of the file (a block at a time, at most
 * 256 KiB held), about 5 KiB of counters. */
#ifndef TM_NATIVE_STATS_H
#define TM_NATIVE_STATS_H

#include <stdint.h>

#include "../record/record.h"
#include "../record/statrow.h"

/* Schema 1's streams, as counted: the predicted block's six (enum
 * tmn_stream's order), then the plain block's three columns. */
#define TMN_ST_PLAIN 6 /* the first plain column */
#define TMN_ST_S1 9

/* Schema 2's streams of one field, by role: the value stream A of each
 * method (plain, varint, delta, hit codes, byte planes), the predicted
 * method's misses (B) and ranks (C), a variable field's bytes (D). */
enum tmn_role {
        TMN_R_PLAIN,
        TMN_R_VARINT,
        TMN_R_DELTA,
        TMN_R_CODES,
        TMN_R_MISSES,
        TMN_R_RANKS,
        TMN_R_PLANES,
        TMN_R_BYTES,
        TMN_R_N
};
/* Schema 2's stream slots: kind, section, then TMN_R_N a field. */
#define TMN_ST_S2 (2 + TM_SCHEMA_FIELDS_MAX * TMN_R_N)

/* What the walk counted. */
struct tmn_storage {
        unsigned schema;      /* 1 or 2 (the header's) */
        unsigned log2, sized; /* the header's */
        uint64_t size;        /* the file's bytes: the parts' sum */
        uint64_t records, blocks;
        /* blocks by coding byte: 0 plain, 1 and 2 predicted (schema 1's codings 3
         * and 4 counted as 1 and 2), 3 schema 2 */
        uint64_t coded[4];
        /* the framing */
        uint64_t file_hdr, schema_chunk, blk_hdr, tables, end;
        uint64_t dict_chunk, dict_raw; /* schema 1's dictionary chunk: its bytes, its parts' */
        /* the streams: stored bytes and raw (decompressed) bytes, by slot */
        uint64_t stored[TMN_ST_S2], raw[TMN_ST_S2];
        /* schema 2: blocks by method, per field */
        uint64_t method[TM_SCHEMA_FIELDS_MAX][7]; /* blocks a method, 0..6 (ncol.h) */
        struct tm_schema fields; /* schema 2: the file's schema (its fields' names) */
};

/* Walk the raw stream of a .tmn file (raw_size bytes, read through read
 * and arg) into *s. 0, -ENOMEM, or -EIO with err naming the raw offset of
 * what is wrong (a header, a checksum, a table, a truncation, bytes after
 * the end mark, a count the end mark does not hold). */
int tmn_storage_scan(tm_rread_fn *read, void *arg, uint64_t raw_size, struct tmn_storage *s,
                     struct tm_err *err);

/* s as statistics rows into out (the layout: docs/stats-json.md). */
void tmn_storage_rows(const struct tmn_storage *s, struct tm_rows *out);

/* The row's storage hook (tm_rcodec.storage): the walk, then its rows. */
int tmn_storage(void *ctx, const struct tm_schema *schema, tm_rread_fn *read, void *arg,
                uint64_t raw_size, struct tm_rows *out, struct tm_err *err);

#endif
