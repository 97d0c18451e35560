/* ncol: the native encoding's schema 2 (docs/formats/native.md, "Schema
 * 2: records of any schema"): a .tmn file of records of any schema, which
 * the file carries (its fields with types and shows, its kinds, sections,
 * text forms and byte sections), CRC-protected after the file header.
 *
 * A block holds up to 2^log2 records and decodes with no state from
 * before it. Within it the kind sequence is one stream and every field
 * one or more streams, each field coded by the method the encoder found
 * smallest for it in this block (plain 8-byte values, varints, deltas,
 * or hit codes against a small set of predictors: last value, stride,
 * last of the kind, FCM order 1, DFCM orders 1..3, the previous record's
 * value at the same position (of a field coded before), a move-to-front rank
 * among the field's values so far in the block; misses and large ranks
 * in streams of their own; a heap schema's addresses by an allocator
 * model, ncol_heap.h). Each stream is stored plainly or as one zstd
 * frame, whichever is smaller. The framing (block header, CRC, end mark)
 * is schema 1's (native.h).
 *
 * A block of coding 4 (files of version 2) also carries the order its
 * fields decode in and, per field, a set of key fields decoded before it:
 * a predicted field with keys has one more hit code, the value it had
 * the last time the record's key had this value (a PTF record's format
 * from its object). The encoder chooses both per block by measurement.
 *
 * The block codec below is what the row (ncol_row.c), the tests and the
 * fuzz harness use; it allocates only in its workspace. */
#ifndef TM_NCOL_H
#define TM_NCOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/tm_err.h"
#include "../record/record.h"
#include "native.h"

#define NCOL_SCHEMA 2              /* the file header's byte 9 */
#define NCOL_VERSION 2             /* the file header's byte 8 a writer writes (1: read too) */
#define NCOL_CODING 3              /* a block body's first byte: fields in schema order */
#define NCOL_CODING_ORD 4          /* .. with the fields' order and keys */
#define NCOL_SCH_MAGIC 0x534e4d54u /* "TMNS": the schema chunk */
#define NCOL_SCH_HDR 12            /* magic, body length, CRC-32 */
#define NCOL_SCH_MAX (256u << 10)  /* bytes of the schema chunk's body */
#define NCOL_BLOBS_MAX 16          /* byte sections a file carries */
#define NCOL_LOG_MAX 16            /* records a block: 2^4 .. 2^16 */
#define NCOL_TABLE_LOG 12          /* FCM / DFCM tables: 2^12 entries at most */
#define NCOL_FSTREAMS 4            /* streams a field: A, B, C, bytes */
#define NCOL_RANK_CODES 246        /* ranks 0..245 in a hit code */
#define NCOL_VAR_MAX (16u << 20)   /* bytes of one variable field in a block */

/* A field's method in a block (the body's method byte of the field). */
enum ncol_method {
        NCOL_M_PLAIN = 0, /* A: 8-byte little-endian values */
        NCOL_M_VARINT,    /* A: varints */
        NCOL_M_DELTA,     /* A: zigzag varints of v - last */
        NCOL_M_PRED,      /* A: hit codes, B: misses, C: large ranks */
        NCOL_M_PLANES,    /* A: zigzag(v - last) as 8 byte planes, low first */
        NCOL_M_N
};
#define NCOL_M_HEAP 5   /* the address field: the allocator model's codes (ncol_heap.h) */
#define NCOL_M_HEAPED 6 /* the new_address field: coded with the address (method 5) */

/* Hit codes of NCOL_M_PRED. */
enum ncol_code {
        NCOL_C_LAST = 0,   /* the field's last value */
        NCOL_C_STRIDE,     /* last + (last - the one before) */
        NCOL_C_KIND,       /* the field's last value in a record of this kind */
        NCOL_C_FCM1,       /* what followed last, last time (kind-keyed) */
        NCOL_C_DFCM1,      /* last + the delta that followed the last delta */
        NCOL_C_DFCM2,      /* .. the last two deltas */
        NCOL_C_DFCM3,      /* .. the last three deltas */
        NCOL_C_PREV,       /* the previous record's value at this position, of an earlier field */
        NCOL_C_MISS,       /* B: zigzag varint of v - last */
        NCOL_C_RANK,       /* C: a varint move-to-front rank >= NCOL_RANK_CODES */
        NCOL_C_RANK0,      /* .. 255: the rank code - NCOL_C_RANK0 */
        NCOL_C_KEYED = 255 /* a field with keys: its value when the key last had this value */
};

/* A file's schema and byte sections, as the schema chunk holds them. */
struct ncol_file {
        struct tm_schema schema;
        unsigned nblobs;
        struct tm_blob blob[NCOL_BLOBS_MAX]; /* p into the owner's copy */
        uint8_t *bytes;                      /* that copy (the chunk's body) */
};

/* The schema chunk of s and blobs b[0..nb) (at most NCOL_BLOBS_MAX) into
 * a new buffer (*out, malloc'd, *len bytes). 0, -ENOMEM, or -EFBIG when it
 * would pass NCOL_SCH_MAX. */
int ncol_schema_put(const struct tm_schema *s, const struct tm_blob *b, unsigned nb,
                    uint8_t **out, size_t *len);

/* The schema chunk at p[0..n) (raw offset off) parsed into f (f->bytes
 * allocated: ncol_file_free). Returns the chunk's length, or -EIO with
 * err (wrong magic or CRC, a field out of range, a kind naming a field
 * that is not there, a truncated chunk: n too short), or -ENOMEM. */
int ncol_schema_get(const uint8_t *p, size_t n, uint64_t off, struct ncol_file *f,
                    struct tm_err *err);
void ncol_file_free(struct ncol_file *f);

/* The decoded columns of a block (the workspace's): kind[i], section[i],
 * col[f][i] the value of schema field f (0 when record i's kind has
 * none; a variable field's length), var[f] the concatenated bytes of
 * variable field f, off[f][i] where record i's start in them. */
struct ncol_cols {
        uint32_t nrec;
        uint8_t *kind, *section;
        uint64_t *col[TM_SCHEMA_FIELDS_MAX];
        uint64_t *off[TM_SCHEMA_FIELDS_MAX];
        uint8_t *var[TM_SCHEMA_FIELDS_MAX];
};

/* An encoder's or decoder's workspace for one schema: predictor tables,
 * streams, zstd contexts, decoded columns. Memory: per field of the
 * schema 16 bytes a record of the block (values, offsets), plus a
 * variable field's bytes; tables of 4 x 2^12 x 8 bytes; the move-to-front
 * structure (a hash of 2^ceil(log2 2n) slots of 4 bytes for n records,
 * and 8 bytes a record); the keyed values' table when a block has keys
 * (2^ceil(log2 2n) slots of 24 bytes, and 8 bytes a record); the streams
 * of the largest block and up to half as much again (stream_room); for a
 * schema with the allocator model (ncol_heap.h) its tables, at most 6.2
 * MiB at blocks of 2^16 records. */
struct ncol_ws;
struct ncol_ws *ncol_ws_new(const struct tm_schema *s);
void ncol_ws_free(struct ncol_ws *w);
/* 1 when w was made for a schema byte for byte s: it then codes any
 * trace of s, since a block carries no state from before it. */
int ncol_ws_is_for(const struct ncol_ws *w, const struct tm_schema *s);

/* Encode n records r[0..n) of w's schema (1 .. 2^TMN_LOG_MAX) as one
 * block at zstd level level: *out, *len the block (header and body),
 * valid until the next call with w. 0, -ENOMEM, -EINVAL (a record not of
 * the schema: its kind, section or a list's length), or -EFBIG when the
 * body would pass TMN_BODY_MAX (the caller splits the records).
 * methods, when not NULL, receives each field's method. */
int ncol_block_encode(struct ncol_ws *w, const struct tm_rec *r, size_t n, int level,
                      const uint8_t **out, size_t *len, uint8_t *methods);

/* The field order and key sets w's encoder uses from the next block on,
 * instead of its own choice (tests): order[j] the j-th field decoded,
 * keys[f] bit g: field g is a key of field f (a number field decoded
 * before f). always: a field with keys is coded with them (method 3)
 * even when another method is smaller. order NULL: the encoder's own
 * choice again. 0, or -EINVAL (not a permutation, a key not allowed). */
int ncol_ws_plan(struct ncol_ws *w, const uint8_t *order, const uint32_t *keys, int always);

/* Decode the block at p (header and body, len bytes as tmn_block_head
 * says) into w's columns (*c, valid until the next call with w). Checks
 * the CRC first. 0, -ENOMEM, or -EIO with err naming raw_off. */
int ncol_block_decode(struct ncol_ws *w, const uint8_t *p, size_t len, uint64_t raw_off,
                      const struct ncol_cols **c, struct tm_err *err);

/* Record i of c as a struct tm_rec of schema s (var into c). */
void ncol_rec(const struct tm_schema *s, const struct ncol_cols *c, uint32_t i, struct tm_rec *r);

/* ---- the row's part (ncol_row.c), which native_row.c dispatches to ---- */

/* Is ctx (or NULL) an open schema-2 trace's (from ncol_open)? */
int ncol_ctx_is(const void *ctx);
/* Does the state st belong to a schema-2 trace? */
int ncol_state_is(const struct tm_rstate *st);

int ncol_open(const uint8_t *head, size_t n, void **ctx, struct tm_schema *schema,
              struct tm_rstate *st, struct tm_err *err);
void ncol_close(void *ctx);
int ncol_state_ok(const void *ctx, const struct tm_rstate *st);
/* The byte sections of ctx (none for a schema-1 trace's). */
unsigned ncol_blobs(void *ctx, struct tm_blob *out, unsigned cap);
/* Is src a schema the address family claims (schema 1's)? */
int ncol_src_is_addr(const struct tm_schema *src);
ssize_t ncol_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                    uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                    struct tm_err *err);
ssize_t ncol_decode_batch(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_rbatch *b, size_t cap,
                          struct tm_err *err);

/* The encoder of schema 2 for src's records, writing the file header
 * and the schema chunk through sink at once; log2 and level as schema
 * 1's encoding names say (bK, bK/zL). enc_put, finish (which frees) and
 * free as tm_rcodec's. */
struct ncol_enc;
int ncol_enc_open(const struct tm_renc_src *src, unsigned log2, int level, tm_rsink sink,
                  void *arg, struct ncol_enc **out, struct tm_err *err);
int ncol_enc_put(struct ncol_enc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                 struct tm_err *err);
int ncol_enc_finish(struct ncol_enc *e, struct tm_err *err);
void ncol_enc_free(struct ncol_enc *e);

/* Bytes the row's open needs: the file header and the largest schema chunk. */
#define NCOL_HEAD_MAX (TMN_FILE_HDR + NCOL_SCH_HDR + NCOL_SCH_MAX)

#endif
