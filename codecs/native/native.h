/* native: tracemount's own block-predictive trace encoding (.tmn), for
 * address traces (docs/formats/native.md is the byte layout; this header
 * its constants and the block codec's contract).
 *
 * A file is a header, blocks, an end mark. A block holds up to 2^log2
 * records of the address schema (type, address, size) and decodes with no
 * state from before it: its predictor tables start empty. Within a block
 * the records are either predicted (a type pattern per instruction, hit
 * codes against per-PC and per-(PC, position) tables, misses as zigzag
 * varint deltas: six streams) or stored plainly (three columns), each
 * stream stored as it is or as one zstd frame, whichever is smaller; the
 * block carries a CRC-32 of its header and body.
 *
 * The block codec below is what the row (native_row.c) and the tests and
 * benchmarks use; it allocates nothing per call beyond its workspace. */
#ifndef TM_NATIVE_H
#define TM_NATIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/tm_err.h"
#include "../record/record.h"

#define TMN_MAGIC "\x89TMN\r\n\x1a\n" /* 8 bytes */
#define TMN_VERSION 1
#define TMN_VERSION_DICT 2 /* a schema-1 file with a dictionary chunk */
#define TMN_SCHEMA_ADDRESS 1
#define TMN_FILE_HDR 20           /* file header bytes */
#define TMN_BLK_HDR 16            /* block header bytes */
#define TMN_BLK_MAGIC 0x424e4d54u /* "TMNB" little-endian */
#define TMN_LOG_MIN 4             /* records a block: 2^4 .. */
#define TMN_LOG_MAX 20            /* .. 2^20 */
#define TMN_BODY_MAX (200u << 10) /* bytes of a block's body, at most */
#define TMN_TABLE_LOG 16          /* predictor table entries: 2^16 each */
#define TMN_POS_MAX 15            /* positions of a data access keyed apart */
#define TMN_PAT_K 19              /* data accesses a remembered pattern holds */
/* The row's defaults, measured (docs/performance.md, "pack's defaults,
 * levels and threads"): 2^18 records a block keep `tail -n 1` of a
 * 10^8-reference trace on a fresh mount at about 6 ms of the daemon's
 * CPU (2^19: 9, 2^20: 14) and hold 3.5x the references a byte of din
 * text + zstd -19 at zstd 12, which packs lackey text at about 180 MB a
 * CPU second (zstd 19: 3.8x, 56 MB). */
#define TMN_LOG_DEFAULT 18
#define TMN_LEVEL_DEFAULT 12

/* Little-endian fields of the layout. */
static inline uint32_t tmn_get32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t tmn_get64(const uint8_t *p)
{
        return (uint64_t)tmn_get32(p) | (uint64_t)tmn_get32(p + 4) << 32;
}

static inline void tmn_put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> 8 * i);
}

/* Block codings (the body's first byte): 0 plain; 1, 2 predicted (the
 * block starts with a fetch, with a data access); 3, 4 as 1, 2 with the
 * data addresses as deltas from the previous one. */
enum tmn_mode { TMN_PLAIN = 0, TMN_PREDICT = 1, TMN_PREDICT_DELTA = 3 };

/* Streams of a predicted block, in the stream table's order. */
enum tmn_stream {
        TMN_S_TYPE,  /* per instruction: its data types, or a hit */
        TMN_S_IHIT,  /* per instruction fetch: 0 last successor, 1 second, 2 fall-through, 3 miss */
        TMN_S_IMISS, /* zigzag varint PC deltas */
        TMN_S_DHIT,  /* per data access: 0 last, 1 second-last, 2 previous data, 3/4 miss */
        TMN_S_DMISS, /* zigzag varint deltas from the nearer base */
        TMN_S_SIZE,  /* per record: 0 predicted, else varint(size + 1) */
        TMN_NSTREAMS
};
#define TMN_PLAIN_STREAMS 3 /* type bytes, addresses u64 LE, sizes u32 LE */
#define TMN_STREAM_ENTRY 9  /* coding u8, stored u32, raw u32 */

/* Columns of a block's records. size may be NULL for an unsized trace. */
struct tmn_cols {
        const uint8_t *type;
        const uint64_t *addr;
        const uint32_t *size;
};

/* What an encoder or decoder works in: the predictor tables, the streams,
 * the zstd contexts. Opaque; tmn_ws_new / tmn_ws_free. Its tables grow to
 * the largest block it has coded (100 bytes an entry, 2^(ceil(log2 n) + 2)
 * entries for a block of n records, at most 2^TMN_TABLE_LOG: 6.3 MiB) and
 * its streams to a block's needs: a new one allocates nothing else, and
 * memory a path never uses is never touched. */
struct tmn_ws;
struct tmn_ws *tmn_ws_new(void);
void tmn_ws_free(struct tmn_ws *w);

/* For tests and benchmarks: on != 0 makes tmn_block_decode with w decode
 * predicted blocks with the reference decoder only (a record at a time,
 * every check inline), 0 with the fast one, which hands a block it
 * refuses to the reference for the error. Both give the same records and
 * the same errors. */
void tmn_ws_reference(struct tmn_ws *w, int on);

/* Statistics of the last block tmn_block_encode wrote: bytes per stream
 * as stored (predicted streams, or the plain ones at [0..3)). */
struct tmn_bstats {
        int mode;
        size_t stored[TMN_NSTREAMS];
        size_t raw[TMN_NSTREAMS];
};

/* Encode n records (1 .. 2^TMN_LOG_MAX) of c (types below 8; sizes when
 * sized) as one block at zstd level level into w's output: *out points
 * to the block (header and body), *len its length, valid until the next
 * call with w. Returns 0, -ENOMEM, or -EFBIG when the body would exceed
 * TMN_BODY_MAX (the caller splits the records). st, when not NULL,
 * receives where the bytes went. */
int tmn_block_encode(struct tmn_ws *w, const struct tmn_cols *c, size_t n, int sized, int level,
                     const uint8_t **out, size_t *len, struct tmn_bstats *st);

/* The block header at p (TMN_BLK_HDR bytes): its record count and body
 * length, checked against the limits (max_rec: the file's 2^log2). 0, or
 * -EIO with err naming raw_off. An end mark has nrec 0. */
int tmn_block_head(const uint8_t *p, uint32_t max_rec, uint64_t raw_off, uint32_t *nrec,
                   uint32_t *body, struct tm_err *err);

/* Decode the block at p (its header and body, len bytes as
 * tmn_block_head says) of a file whose header has ntypes and sized into
 * the columns type, addr, size (room for nrec each; size may be NULL when
 * unsized). Checks the CRC first. 0, -ENOMEM, or -EIO with err naming
 * raw_off (the block's) and what is wrong. */
int tmn_block_decode(struct tmn_ws *w, const uint8_t *p, size_t len, unsigned ntypes, int sized,
                     uint64_t raw_off, uint8_t *type, uint64_t *addr, uint32_t *size,
                     struct tm_err *err);

/* The file header: write one (TMN_FILE_HDR bytes, version TMN_VERSION) /
 * parse one of version TMN_VERSION or TMN_VERSION_DICT (p[8] says which:
 * the caller reads the dictionary chunk after the latter), 0 or -EIO /
 * -ENOTSUP with err. */
void tmn_file_head_put(uint8_t *p, unsigned ntypes, int sized, unsigned log2);
int tmn_file_head_get(const uint8_t *p, size_t n, unsigned *ntypes, int *sized, unsigned *log2,
                      struct tm_err *err);

/* The end mark (TMN_BLK_HDR + 8 bytes: the trace's record count). */
#define TMN_END_LEN (TMN_BLK_HDR + 8)
void tmn_end_put(uint8_t *p, uint64_t records);
/* The end mark of a file of records records written through sink (both
 * schemas' encoders end with it): 0, or sink's error with err set. */
int tmn_end_write(tm_rsink sink, void *arg, uint64_t records, struct tm_err *err);

/* The end mark at in (len bytes, at least TMN_END_LEN; eof: nothing
 * follows them) checked against the records decoded: total in all, done
 * of them in a block not yet finished (must be 0). 0, or -EIO with err
 * naming raw offset raw_off. Both schemas' rows use it. */
int tmn_end_check(const uint8_t *in, size_t len, int eof, uint64_t done, uint64_t total,
                  uint64_t raw_off, struct tm_err *err);

/* ---- the file's dictionary (native_dict.c) ----
 *
 * A schema-1 file of version TMN_VERSION_DICT has a dictionary chunk
 * right after its header: per predicted stream kind (enum tmn_stream) raw
 * content that a stream of storage TMN_STORE_DICT is a zstd frame made
 * against (zstd's raw-content dictionary), so that a trace that repeats
 * with a period longer than a block still finds the repeat, and every
 * block still decodes alone given the chunk. Layout and the writer's
 * choice: docs/formats/native.md, "The dictionary chunk". */
#define TMN_STORE_DICT 2             /* stream table storage: a frame against the dictionary */
#define TMN_DICT_MAGIC 0x444e4d54u   /* "TMND" little-endian */
#define TMN_DICT_HDR 16              /* magic, raw length, body length, CRC-32 */
#define TMN_DICT_MAX (4u << 20)      /* the dictionary's raw bytes (its parts), at most */
#define TMN_DICT_ZMAX (1u << 20)     /* the chunk's body (one zstd frame), at most */
#define TMN_DICT_PART_MAX (1u << 20) /* the writer's part of one stream kind, at most */
#define TMN_DICT_PART_MIN 8          /* a part is empty or at least this long */
/* A stream stored in fewer bytes is not tried against the dictionary,
 * and a kind whose stream the writer's test block stores so gets no part:
 * a loop's hit codes take a few hundred bytes of 2^18 raw, whose
 * compression again costs as much as a large stream's for a few bytes,
 * and whose part would cost every open its decompression. */
#define TMN_DICT_TRY_MIN 512
/* Raw bytes the row's open sees: a file header and a whole chunk. */
#define TMN_HEAD_MAX (TMN_FILE_HDR + TMN_DICT_HDR + TMN_DICT_ZMAX)

/* A dictionary: the parts, one per predicted stream kind (len[k] 0: that
 * kind has none), in one buffer (raw: the decompressed body). */
struct tmn_dict {
        uint8_t *raw;
        size_t raw_len;
        const uint8_t *part[TMN_NSTREAMS];
        uint32_t len[TMN_NSTREAMS];
};

/* The chunk at p (n bytes of the file from raw offset TMN_FILE_HDR on):
 * checked (magic, lengths within the limits, CRC-32, the frame, the
 * parts) and decompressed into *d (tmn_dict_release frees it); *chunk
 * receives its length. 0, -ENOMEM, or -EIO with err naming the raw
 * offset of what is wrong. */
int tmn_dict_get(const uint8_t *p, size_t n, struct tmn_dict *d, size_t *chunk, struct tm_err *err);
/* The two halves of tmn_dict_get, for a reader that loads the dictionary
 * when a block first needs it: the chunk at p checked (magic, lengths
 * within the limits, CRC-32; *chunk its length, *raw_len what it holds
 * decompressed), and a checked chunk decompressed into *d (the frame and
 * the parts checked). 0, -ENOMEM, or -EIO with err as tmn_dict_get's. */
int tmn_dict_check(const uint8_t *p, size_t n, size_t *chunk, size_t *raw_len, struct tm_err *err);
int tmn_dict_load(const uint8_t *p, struct tmn_dict *d, struct tm_err *err);
void tmn_dict_release(struct tmn_dict *d);

/* The decoder's dictionary for the blocks tmn_block_decode decodes with
 * w next (NULL: none; a stream of storage TMN_STORE_DICT is then -EIO).
 * d must outlive those calls. */
void tmn_ws_dict(struct tmn_ws *w, const struct tmn_dict *d);

/* The raw streams of the block tmn_block_encode wrote last with w, when
 * it is a predicted one (its coding byte not 0): what the dictionary is
 * made of and what tmn_dict_pass compresses again. */
struct tmn_raw {
        const uint8_t *p[TMN_NSTREAMS];
        size_t len[TMN_NSTREAMS];
};
void tmn_ws_streams(const struct tmn_ws *w, struct tmn_raw *r);

/* The writer's side: a dictionary's parts as zstd CDicts at one level
 * (made once a file, shared read-only by the encoder's threads), and a
 * pass that stores each stream of a finished predicted block as a frame
 * against them where that is shorter (so a block never grows). */
struct tmn_cdict;
struct tmn_cdict *tmn_cdict_new(const struct tmn_dict *d, int level);
void tmn_cdict_free(struct tmn_cdict *c);
struct tmn_dpass; /* a thread's scratch: a zstd context, the block's bytes */
struct tmn_dpass *tmn_dpass_new(void);
void tmn_dpass_free(struct tmn_dpass *p);
/* The block blk (len bytes, as tmn_block_encode made it; raw its raw
 * streams) with its streams against c where shorter: *out (valid until
 * the next call with p) and *olen; a plain block passes as it is. 0 or
 * -ENOMEM. */
int tmn_dict_pass(struct tmn_dpass *p, const struct tmn_cdict *c, const uint8_t *blk, size_t len,
                  const struct tmn_raw *raw, const uint8_t **out, size_t *olen);
/* The dictionary of parts raw->p[k][0..raw->len[k]) into *d (copied; a
 * part that zstd would take for a structured dictionary or shorter than
 * TMN_DICT_PART_MIN is trimmed or dropped), and its chunk at zstd level
 * level into *chunk (malloc'd, *clen bytes). 0, -ENOMEM, or -EFBIG when
 * the parts pass TMN_DICT_MAX or the body TMN_DICT_ZMAX. */
int tmn_dict_make(const struct tmn_raw *raw, int level, struct tmn_dict *d, uint8_t **chunk,
                  size_t *clen);

/* The file header with a version (TMN_VERSION, or TMN_VERSION_DICT when
 * a dictionary chunk follows). */
void tmn_file_head_put_v(uint8_t *p, unsigned ntypes, int sized, unsigned log2, unsigned version);

/* The row's encoder (native_enc.c; record.h has the calls' contracts).
 * Records of the address schema of 1..8 types, with or without sizes:
 * the header's ntypes and sized are those of the schema it takes, so a
 * trace reopens with its input's schema. Blocks are encoded in the
 * caller (tmn_enc_open: the names bK[/zL][/d], blocks of 2^K records at
 * zstd level L, K TMN_LOG_MIN..TMN_LOG_MAX, default TMN_LOG_DEFAULT and
 * TMN_LEVEL_DEFAULT, every type with sizes, the dictionary when it pays
 * with /d only) or on tm_renc_args.threads threads (tmn_enc_open_for, the
 * dictionary by its parameter), with the same bytes either way. */
enum tmn_param { TMN_P_LEVEL, TMN_P_DICT, TMN_P_LOG2 }; /* tmn_enc_params' order */
extern const struct tm_renc_param tmn_enc_params[];
void tmn_enc_schema(struct tm_schema *s);
void tmn_enc_schema_for(const struct tm_schema *in, struct tm_schema *takes);
int tmn_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                 struct tm_err *err);
int tmn_enc_open_for(const struct tm_renc_args *a, tm_rsink sink, void *arg, struct tm_renc **out,
                     struct tm_err *err);
/* The encoder for records of src (its schema and byte sections) by a
 * name as tmn_enc_open takes: schema 1 for an address schema, else
 * schema 2 (ncol.h, blocks of at most 2^16 records). For tests and
 * fuzzing; pack goes through tmn_enc_open_for. */
struct tm_renc_src;
int tmn_enc_open_src(const struct tm_renc_src *src, const char *enc, tm_rsink sink, void *arg,
                     struct tm_renc **out, struct tm_err *err);
int tmn_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                struct tm_err *err);
int tmn_enc_finish(struct tm_renc *e, struct tm_err *err);
void tmn_enc_free(struct tm_renc *e);

/* The row (codecs/registry.c). */
extern const struct tm_rcodec tm_rcodec_native;

#endif
