/* The record model: traces of any shape, described by a schema.
 *
 * A record codec (din, PDATS, PDATS II, lackey, HATF, Meta-TF, mtrace,
 * PTF, Java, Laplace, the bound formats) turns its raw stream into
 * records of its format's schema:
 *
 *   schema   the fields a trace can carry (name, value type, how text shows
 *            it, width in the binary view) and its record kinds (tag in the
 *            native encoding, name, the fields of a record of that kind in
 *            order);
 *   record   a kind and the values of that kind's fields, in the kind's
 *            order. Numbers are in v[]; a variable field (text, bytes, a
 *            list of numbers) has its length in v[] and its bytes in var[].
 *
 * Views are generic over the schema (views/records.h): the text form
 * (codecs/record/text.h), the fixed-width binary form, one file per kind
 * and per field, the schema as a Meta-TF DTD, statistics. A codec's fast
 * paths are hooks of its row (text_of, decode_batch), which the views
 * call when present; the address codecs' schema is codecs/address/arec.h's.
 *
 * Everything here is plain data with fixed-size arrays and no pointers
 * except tm_rec.var (which points into the decoder's input and lives until
 * the next decode call), so a schema can be a static const table or built
 * at run time from a DTD without allocating, and a decoder state is a copy.
 *
 * Decoder state: a plain byte array (struct tm_rstate) of which the codec
 * uses its first state_size bytes; a checkpoint of the index stores exactly
 * those. A codec whose format needs more than TM_RSTATE_MAX bytes of state
 * (names interned along the trace, say) must keep it elsewhere and say how
 * the index stays bounded; none does today.
 *
 * Errors name the raw offset ("raw offset N: ..."), as for address codecs
 * (codecs/address/trace.h); the views layer prefixes the archive path. */
#ifndef TM_RECORD_H
#define TM_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../common/tm_err.h"

#define TM_NAME_MAX 32          /* names of fields, kinds, sections, incl. NUL */
#define TM_SCHEMA_FIELDS_MAX 32 /* fields of one schema */
#define TM_SCHEMA_KINDS_MAX 64  /* record kinds of one schema */
#define TM_SCHEMA_SECTIONS_MAX 16
#define TM_KIND_FIELDS_MAX 16 /* fields of one record */
#define TM_REC_VAR_MAX 4      /* variable fields of one record */
#define TM_RSTATE_MAX 2048    /* bytes of record decoder state */
#define TM_RHEAD_MIN 4096     /* bytes probe() sees, and open() at least */
#define TM_LABEL_MAX 8        /* a kind's label in a text form, incl. NUL */
#define TM_SCHEMA_FORMS_MAX 2 /* text forms besides ascii */

/* What a field's value is. */
enum tm_ftype {
        TM_FT_UINT,  /* unsigned integer in v[] */
        TM_FT_INT,   /* signed integer in v[] (two's complement) */
        TM_FT_TEXT,  /* text: v[] = length in bytes, bytes in var[] */
        TM_FT_BYTES, /* opaque bytes: v[] = length, bytes in var[] */
        TM_FT_LIST,  /* numbers: v[] = count, var[] holds count 8-byte
                      * little-endian unsigned values */
};

/* How the text views show a number. The codes from 3 up are the shows a
 * family adds (a show row: codecs/record/text.h, TM_SHOW_OWN_MIN). */
enum tm_fshow {
        TM_SHOW_DEC,  /* decimal */
        TM_SHOW_HEX,  /* 0x and lowercase hex: addresses */
        TM_SHOW_HEXN, /* lowercase hex without 0x (din's addresses) */
};
/* Or'ed into tm_field.show: the field is not in the lines of the text
 * form (ascii, streams/), only in fields/<name> (where it shows as its
 * show says) and the binary view. */
#define TM_SHOW_HIDDEN 0x80

struct tm_field {
        char name[TM_NAME_MAX]; /* "size", "address" */
        uint8_t type;           /* enum tm_ftype */
        uint8_t show;           /* enum tm_fshow, or a show row's code */
};

struct tm_kind {
        char name[TM_NAME_MAX]; /* "alloc" */
        char label[TM_LABEL_MAX]; /* what the text form's lines start with;
                                   * "" (most schemas): the name */
        uint32_t tag;           /* the record's tag in the native encoding */
        uint8_t nfields;
        uint8_t field[TM_KIND_FIELDS_MAX]; /* indexes into tm_schema.field, in order */
};

struct tm_section {
        char name[TM_NAME_MAX];
        uint32_t number; /* Meta-TF section number, 1..255 */
};

/* A text form besides ascii, shown as the view of its name: the same
 * lines with other labels and other shows (an address trace with sizes:
 * xdin, Dinero IV's extended din). */
struct tm_form {
        char name[TM_NAME_MAX];                          /* the view: "xdin" */
        char label[TM_SCHEMA_KINDS_MAX][TM_LABEL_MAX];   /* per kind; "" as ascii */
        uint8_t show[TM_SCHEMA_FIELDS_MAX];              /* per field, as tm_field.show */
        uint8_t digits[TM_SCHEMA_FIELDS_MAX]; /* hex shows: exactly this many digits,
                                               * the low ones; 0: as many as needed */
};

struct tm_schema {
        char name[TM_NAME_MAX]; /* the family: "heap", "address" */
        unsigned nfields, nkinds, nsections, nforms;
        struct tm_field field[TM_SCHEMA_FIELDS_MAX];
        struct tm_kind kind[TM_SCHEMA_KINDS_MAX];
        struct tm_section section[TM_SCHEMA_SECTIONS_MAX];
        struct tm_form form[TM_SCHEMA_FORMS_MAX];
};

/* One decoded record. */
struct tm_rec {
        uint32_t kind;    /* index into tm_schema.kind */
        uint32_t section; /* 0: outside any section; i + 1: tm_schema.section[i] */
        uint64_t v[TM_KIND_FIELDS_MAX];
        const uint8_t *var[TM_REC_VAR_MAX]; /* the variable fields' bytes, in order */
};

/* Decoder state storage: aligned, copyable, no pointers. */
struct tm_rstate {
        _Alignas(8) uint8_t b[TM_RSTATE_MAX];
};

/* Receives encoded bytes; each call ends on a record boundary. Returns 0
 * or a negative errno (which the encoder returns). */
typedef int (*tm_rsink)(void *arg, const void *buf, size_t n);

struct tm_renc;

/* A section of bytes a codec holds per trace (a Meta-TF data section):
 * shown as the file sections/<name>. p is owned by the codec's ctx. */
struct tm_blob {
        char name[TM_NAME_MAX];
        const uint8_t *p;
        size_t n;
};

/* A column batch: records of a schema, one array per field (the bulk
 * path between decoders and the index pass's accounting and statistics;
 * the per-record struct tm_rec stays for random access). Record i is of
 * kind kind[i], outside any section (the views take the batch path only
 * where sections do not matter, or the schema has none); col[f][i] is the
 * value of schema field f, meaningful when the kind has f (0 otherwise),
 * for a variable field its length as in tm_rec.v. The arrays are the
 * owner's (tm_rbatch_init), cap records each.
 *
 * Variable values (text, bytes, lists) live in the arena, when the owner
 * gave the batch one (tm_rbatch_arena): record i's variable field of
 * var[] slot j (as tm_rec.var[j]) has its bytes at arena + var[j][i],
 * copied there by the decoder; arena_len of the arena_cap bytes are in
 * use. Both n and arena_len start from 0 at each decode_batch call, which
 * stops before a record whose values would not fit in the rest of the
 * arena as it stops at cap. A batch without an arena (arena_cap 0) takes
 * records of numbers only. */
struct tm_rbatch {
        size_t n, cap;
        uint32_t *kind;
        uint64_t *col[TM_SCHEMA_FIELDS_MAX];
        uint8_t *arena;
        size_t arena_len, arena_cap;
        uint32_t *var[TM_REC_VAR_MAX]; /* [cap] each, with an arena */
};

/* The arena the views give a batch of a schema with variable fields:
 * more than the values of any one record their input buffer holds. */
#define TM_RBATCH_ARENA (256u << 10)

/* Room for cap records of nfields columns, no arena; 0 or -ENOMEM. */
int tm_rbatch_init(struct tm_rbatch *b, unsigned nfields, size_t cap);

/* Give b (after tm_rbatch_init) an arena of bytes bytes (at most
 * UINT32_MAX) for the variable values of its records, fixed from now on;
 * 0, -EINVAL or -ENOMEM (b is then as init left it). */
int tm_rbatch_arena(struct tm_rbatch *b, size_t bytes);

/* Frees the arrays and the arena; b is then all zero. */
void tm_rbatch_free(struct tm_rbatch *b);

/* Copy n bytes at p into the arena as record i's var[] slot j: a
 * decoder's step, after it made sure they fit (n <= arena_cap -
 * arena_len). */
static inline void tm_rbatch_put_var(struct tm_rbatch *b, size_t i, unsigned j, const void *p,
                                     size_t n)
{
        b->var[j][i] = (uint32_t)b->arena_len;
        if (n)
                memcpy(b->arena + b->arena_len, p, n);
        b->arena_len += n;
}

/* Record i of b, a record of schema s, as a struct tm_rec (var pointing
 * into b's arena, valid while b is unchanged). */
void tm_rbatch_rec(const struct tm_rbatch *b, const struct tm_schema *s, size_t i,
                   struct tm_rec *r);

/* Per kind k of b's records (kinds below TM_SCHEMA_KINDS_MAX): n[k] +=
 * how many, and, when bytes is not NULL, sum[k] += bytes[i] over them. */
void tm_rbatch_kinds(const struct tm_rbatch *b, const uint32_t *bytes, uint64_t *n,
                     uint64_t *sum);

struct tm_text_plan;

/* A codec's text decoder (a fast path, tm_rcodec.text_of): the ascii
 * lines of the records in in[0..len) (in[0] at raw offset raw_off, state
 * st as for decode) into dst while they fit in cap bytes and fewer than
 * maxrec lines are written. kind >= 0 (only when the row sets
 * text_kinds; else it is -1): only the lines of records of that kind
 * (streams/<kind>), the others decoded and passed over. Returns the bytes
 * written (whole lines); *used receives the input bytes consumed, *nrec
 * the records decoded. p is the plan of the codec's schema
 * (codecs/record/text.h). Never fails: it stops where the generic decoder
 * must go on (a record cut by the end of in, anything decode() would
 * reject), so errors are reported by one path. */
typedef size_t tm_rtext_fn(struct tm_rstate *st, const uint8_t *in, size_t len, uint64_t raw_off,
                           size_t *used, const struct tm_text_plan *p, char *dst, size_t cap,
                           size_t maxrec, long kind, size_t *nrec);

/* A codec's binary decoder (a fast path, tm_rcodec.binary_of): the
 * records of in[0..len) as its family's binary records (the binary view:
 * family.h's bin_size bytes each, what the family's binary() makes of
 * them) into dst while they fit in cap bytes and fewer than maxrec are
 * done. Returns the bytes written (whole records); *used and *nrec, and
 * where it stops, as tm_rtext_fn. */
typedef size_t tm_rbin_fn(struct tm_rstate *st, const uint8_t *in, size_t len, uint64_t raw_off,
                          size_t *used, uint8_t *dst, size_t cap, size_t maxrec, size_t *nrec);

/* The archive a codec's open_at reads, as the caller reached it: what a
 * codec that looks beside the archive (a Meta-TF DTD,
 * docs/side-files.md) needs to do so without going by a path that a user
 * could swap for a symlink (docs/reliability.md, "Threat model"). */
struct tm_rarchive {
        const char *path; /* names the archive, and files beside it, in messages only */
        /* Its directory (any descriptor, O_PATH is enough): files beside
         * the archive are opened by name in it, never by path; -1: none
         * is looked at. */
        int dir_fd;
        /* The archive's stat (owner, group and mode: who could change
         * it, struct tm_side_trust); never NULL. */
        const struct stat *sb;
        /* The opt-in of struct tm_side_trust for what is looked up
         * beside it (tm_trace_opts.trust_group_dtd). */
        int trust_group;
};

/* Bids: what a row's probe returns when it takes a head; the registry
 * gives the head to every row and the highest bid wins (ties: the row
 * registered first; codecs/registry.h). 0 is "not this format". The scale
 * says how much a yes is worth, so that a row that proves more beats one
 * that proves less whatever the order of the rows:
 *
 *   100      a magic at offset 0 of 4 bytes or more, distinct for every
 *            row (pdats, pdats2, hatf, native, metatf); two such rows
 *            never both take a head.
 *   40..75   text: every whole line of the head parses, or a first
 *            line of its own (java, ptf, ptf_bin); each row its own bid,
 *            higher as its lines rule out more (lackey over din: a lackey
 *            file never parses as din, while a din file is not known never
 *            to parse as lackey). Below every magic: hatf's, native's and
 *            metatf's hold a byte no text row's line has (a NUL, 0x7f,
 *            0x89), and a text that starts "PDTS" or "PDT2" is taken as
 *            PDATS, whose header then fails.
 *   30       a bound row's magic (codecs/metatf/bound.h): a user's
 *            description must not take a file a row of C reads.
 *   20       the size rule and a check in C of the bytes (laplace_raw,
 *            a shipped bound row with a check).
 *   10       the size rule alone (a bound row): any stream of over 4 KiB
 *            passes it, so it bids least. */
enum tm_bid {
        TM_BID_SIZE = 10,
        TM_BID_SIZE_CHECKED = 20,
        TM_BID_BOUND_MAGIC = 30,
        TM_BID_LAPLACE_KEV = 40,
        TM_BID_LAPLACE_TEXT = 45,
        TM_BID_PTF = 50,
        TM_BID_PTF_BIN = 55,
        TM_BID_JAVA = 60,
        TM_BID_MTRACE = 65,
        TM_BID_DIN = 70,
        TM_BID_LACKEY = 75,
        TM_BID_MAGIC = 100,
};

struct tm_family;

/* A writer encoding's parameter (tm_rcodec.enc_params): an integer in
 * min..max, def when not given. The parameter named "level" is the one
 * tracetool pack's --level sets. */
struct tm_renc_param {
        const char *name; /* "level", "block-log2" */
        const char *what; /* one line for a tool's help */
        int min, max, def;
        /* NULL, or the largest value the encoder uses for records of in
         * (a larger one given is written as that one): what a tool
         * reports as the value the output has. */
        int (*max_for)(const struct tm_schema *in);
};
#define TM_RENC_PARAMS_MAX 4

/* What enc_open_for is given. */
struct tm_renc_args {
        const struct tm_schema *in; /* the schema of the records a writer has (the input's) */
        int v[TM_RENC_PARAMS_MAX];  /* enc_params' values, in their order */
        /* Threads the encoder may start to encode on (0: none, it encodes
         * in enc_put's caller). sink is called in enc_put's and
         * enc_finish's caller only, in the order of the bytes. */
        unsigned threads;
        /* The input's byte sections (tm_rcodec.blobs), for an encoder
         * that keeps them (the native encoding's schema 2). */
        const struct tm_blob *blob;
        unsigned nblobs;
};

/* What an encoder that takes records of any schema is opened for (the
 * native encoding's schema 2, codecs/native/ncol.h): the input's schema
 * and byte sections. */
struct tm_renc_src {
        const struct tm_schema *schema;
        const struct tm_blob *blob;
        unsigned nblobs;
};

/* Raw bytes [off, off + n) of a trace's stream into buf: n, fewer only at
 * the stream's end, or a negative errno with err (for tm_rcodec.storage). */
typedef ssize_t tm_rread_fn(void *arg, uint64_t off, void *buf, size_t n, struct tm_err *err);

struct tm_rows; /* statistics rows' sink (statrow.h) */

struct tm_rcodec {
        const char *name;   /* "hatf" */
        const char *suffix; /* for pack: ".hatf"; NULL if not written */
        /* The family of every schema open() gives (family.h); NULL when
         * the schema decides (Meta-TF, the bound rows: a DTD's records may
         * be of any family, so tm_family_of() asks the families). */
        const struct tm_family *family;

        /* Does head (the first n raw bytes, n <= 4096; fewer only when the
         * stream is that short) look like this format? Its bid (enum
         * tm_bid, below) when it does, 0 when not. */
        int (*probe)(const uint8_t *head, size_t n);

        /* Raw bytes open() may need to see (its header and whatever must be
         * loaded with it); 0 means TM_RHEAD_MIN. Callers give open() that
         * many bytes, or the whole stream when it is shorter. */
        size_t head_max;
        /* What of head_max open() needs of this stream, told from its
         * first n raw bytes (as probe's): a header that says its own length
         * (the native encoding's chunks) spares a lookup reading head_max
         * bytes. NULL, or 0 returned: head_max. tm_rcodec_head_want. */
        size_t (*head_need)(const uint8_t *head, size_t n);

        /* Per-trace set-up: parse the header in head[0..n) (n covers the
         * whole header unless the stream is shorter), fill *schema, set the
         * initial state and return the header length (the raw offset of the
         * first record) or a negative errno. path is the archive's path (a
         * codec may look beside it, e.g. for a DTD). *ctx receives what the
         * codec keeps per trace (NULL if nothing); close(ctx) frees it. */
        int (*open)(const uint8_t *head, size_t n, const char *path, void **ctx,
                    struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err);
        /* open() of the archive a (never NULL), for a codec that looks
         * beside the archive: it does so in a->dir_fd only, so a caller
         * that holds the archive's directory (the views) has nothing
         * opened by path; open() then opens the directory of path by name
         * (a caller that has no descriptor: tests, tracetool pack). NULL:
         * the codec looks at nothing beside the archive, and callers use
         * open() with a->path. A separate hook, not an argument of open(),
         * so that the rows that look at nothing beside the archive (all
         * but Meta-TF) and their callers keep open() as it is. */
        int (*open_at)(const uint8_t *head, size_t n, const struct tm_rarchive *a, void **ctx,
                       struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err);
        void (*close)(void *ctx);

        /* What open() met that a reader should know although the trace
         * opened: a side file passed over and why (a DTD beside the
         * archive that is a FIFO, a symlink or another user's;
         * docs/side-files.md), as a message naming the file, with a
         * negative code; NULL when nothing was (and when this is NULL).
         * The views show it in errors and stats. */
        const struct tm_err *(*note)(const void *ctx);

        /* Its sections of bytes, at most cap into out; the count. NULL:
         * none. (Sections of records are tm_schema.section.) */
        unsigned (*blobs)(void *ctx, struct tm_blob *out, unsigned cap);

        /* Bytes of tm_rstate this codec uses (the checkpoint payload);
         * at most TM_RSTATE_MAX. */
        size_t state_size;

        /* Could decoding of this trace (ctx) have reached state st? 1 or
         * 0, as arec_fmt.state_ok (codecs/address/arec_impl.h): the index
         * loader refuses a file holding a state this rejects (widths,
         * interpretations, section and stream fields out of what the
         * header and metadata can set), so decode() only sees states it
         * can handle. NULL: every byte string is one. */
        int (*state_ok)(const void *ctx, const struct tm_rstate *st);

        /* Decode records from in[0..len), in[0] at raw offset raw_off, as
         * address codecs do (codecs/address/trace.h): at most cap records
         * to out, *used = bytes of whole records consumed, a record cut by
         * the end of in left for the next call unless eof (then -EIO
         * "truncated"); 0 with *used == 0 means "more input". Records that
         * change only the representation (HATF metadata) are consumed and
         * not returned, so a call may consume bytes and return 0 records;
         * it then sets *used > 0. var pointers point into in. */
        ssize_t (*decode)(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                          struct tm_err *err);

        /* Encoder (NULL if decode-only). enc_open starts an encoder with
         * the encoding named enc (NULL: the codec's best) writing through
         * sink; enc_put takes a block of records, r[0..n), of the schema
         * enc_schema gives (numbered idx, idx + 1, ... for messages), so
         * that an encoder may look at many records at once (split
         * streams, predictors); a writer passes what it has decoded
         * together, a test may pass one. enc_finish flushes and frees.
         * Records the format cannot hold are -EINVAL naming idx; an
         * encoding that refuses a record another of the row's encodings
         * holds says so with -ERANGE or -EDOM (the address rows: 64-bit
         * addresses, unit 1; codecs/address/trace.h), so that a writer
         * can start again with that one. */
        int (*enc_open)(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                        struct tm_err *err);
        int (*enc_put)(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                       struct tm_err *err);
        int (*enc_finish)(struct tm_renc *e, struct tm_err *err);
        void (*enc_free)(struct tm_renc *e); /* after an error */

        /* The encodings enc_open takes, by name, NULL-terminated; the
         * first is the one enc_open(NULL) writes. NULL for an encoder
         * with one unnamed encoding (enc_open takes NULL only) and for a
         * decode-only codec. tracetool pack compares them (or, for the
         * address rows, widens one; tools/pack.h). */
        const char *const *encodings;

        /* The schema of the records enc_put takes into *s (NULL when
         * decode-only). It need not be the schema open() gives a trace
         * the encoder wrote: a Meta-TF trace's is its DTD's, while its
         * encoder takes heap records (codecs/heap/heap.h). */
        void (*enc_schema)(struct tm_schema *s);

        /* Make records r[0..n) of enc_schema's schema, with any values,
         * records this encoder writes and its decoder gives back as they
         * are: values within the format's widths, the markers it needs
         * where it needs them. A generator's step (the conformance suite
         * writes records of every row this way); NULL: every record
         * enc_put takes comes back as it went in. */
        void (*enc_fit)(struct tm_rec *r, size_t n);
        /* An encoder with typed parameters, for the records of a writer's
         * schema (NULL: the row has enc_open's names only). enc_params
         * (terminated by a NULL name) says what tm_renc_args.v holds.
         * enc_schema_for: the schema enc_put takes for records of in, into
         * *takes: in itself when the format holds it as it is (a writer
         * then passes its records unchanged), else one a writer maps them
         * to by names (codecs/record/rmap.h). enc_open_for opens the
         * encoder for a->in; its other calls are enc_put, enc_finish and
         * enc_free. */
        const struct tm_renc_param *enc_params;
        void (*enc_schema_for)(const struct tm_schema *in, struct tm_schema *takes);
        int (*enc_open_for)(const struct tm_renc_args *a, tm_rsink sink, void *arg,
                            struct tm_renc **out, struct tm_err *err);

        /* Fast paths, NULL when the codec has none; the views use them
         * when present and the bytes are those of the generic path.
         * text_of: the codec's text decoder on this machine (it may need
         * a CPU feature, and TM_NO_SIMD=1 may turn it off), or NULL. */
        tm_rtext_fn *(*text_of)(void);
        /* 1: its text decoder also renders one kind's lines (kind >= 0),
         * which the views use for streams/<kind>. */
        int text_kinds;
        /* binary_of: the codec's binary decoder, or NULL. */
        tm_rbin_fn *(*binary_of)(void);

        /* decode() into a column batch (b->n records, at most cap, each
         * below b->cap; variable values into b's arena, which a schema
         * with variable fields needs): the same records, the same *used,
         * state and errors as decode() gives, except that a record whose
         * values would not fit in the rest of the arena ends the call
         * before it, as cap does (records that change only the
         * representation before it may be consumed). When the first
         * record's values alone do not fit, -ENOSPC with err: the caller
         * decodes it with decode(). No row with variable fields has one
         * today (docs/performance.md). */
        ssize_t (*decode_batch)(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len,
                                int eof, uint64_t raw_off, size_t *used, struct tm_rbatch *b,
                                size_t cap, struct tm_err *err);

        /* Where the raw stream's bytes go, by the format's own parts (its
         * streams and framing), as statistics rows (statrow.h) into out:
         * computed from the stream's structure alone, no record decoded,
         * when a stats view is read. read(arg, off, buf, n, err) gives the
         * raw bytes at off (tm_rread_fn), raw_size of them; s is the
         * trace's schema (open()'s), ctx its open(). 0, or a negative
         * errno with err naming the raw offset, out then having received
         * no row. NULL: the row has none. */
        int (*storage)(void *ctx, const struct tm_schema *s, tm_rread_fn *read, void *arg,
                       uint64_t raw_size, struct tm_rows *out, struct tm_err *err);

        /* Bytes the row keeps for an open trace in ctx (a dictionary
         * loaded at open), which the daemon counts against its bound on
         * open traces' memory; NULL: little. */
        size_t (*ctx_mem)(const void *ctx);
};

/* An encoder's block put from its one-record put: one(e, &r[i], idx + i)
 * for each record, stopping at the first error. For the encoders that
 * keep no block state. */
static inline int tm_renc_each(int (*one)(struct tm_renc *, const struct tm_rec *, uint64_t,
                                          struct tm_err *),
                               struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                               struct tm_err *err)
{
        for (size_t i = 0; i < n; i++) {
                int rc = one(e, &r[i], idx + i, err);
                if (rc)
                        return rc;
        }
        return 0;
}

/* The record codec whose probe bids highest for head (ties: the row
 * registered first), or NULL when none takes it: the rows of the
 * process's registry (codecs/registry.h). */
const struct tm_rcodec *tm_rcodec_probe(const uint8_t *head, size_t n);

/* The raw bytes to give c's open() (fewer only when the stream is
 * shorter), head being the stream's first n: its head_need's answer, at
 * least TM_RHEAD_MIN and at most its head_max (TM_RHEAD_MIN when that is
 * 0). */
size_t tm_rcodec_head_want(const struct tm_rcodec *c, const uint8_t *head, size_t n);

/* The record codec named name, or NULL. */
const struct tm_rcodec *tm_rcodec_by_name(const char *name);

/* Index of the field / kind named name in s, or -1. */
int tm_schema_field(const struct tm_schema *s, const char *name);
int tm_schema_kind(const struct tm_schema *s, const char *name);

/* Index of the kind with native tag tag, or -1. */
int tm_schema_kind_by_tag(const struct tm_schema *s, uint32_t tag);

/* Is field f (schema index) variable-length (text, bytes, list)? */
static inline int tm_field_is_var(const struct tm_field *f)
{
        return f->type == TM_FT_TEXT || f->type == TM_FT_BYTES || f->type == TM_FT_LIST;
}

/* Has s a variable-length field? */
int tm_schema_has_var(const struct tm_schema *s);

/* Position of field f (schema index) in kind k's records, or -1. */
int tm_kind_pos(const struct tm_kind *k, unsigned f);

/* The var[] slot of the variable field at position pos of kind k
 * (how many variable fields come before it). */
unsigned tm_kind_var_slot(const struct tm_schema *s, const struct tm_kind *k, unsigned pos);

/* Write s as a Meta-TF 1.0 DTD (the `schema` view) into dst (cap bytes),
 * naming the codec. Returns the length (snprintf-style). */
size_t tm_schema_dtd(const struct tm_schema *s, const char *codec, char *dst, size_t cap);


#endif
