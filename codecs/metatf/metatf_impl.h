/* Inside the Meta-TF decoder: the per-trace context (the compiled DTD and
 * what the header holds) and the decoder state, shared by metatf.c (open,
 * the schema) and mtf_decode.c (records). Not for other modules. */
#ifndef TM_METATF_IMPL_H
#define TM_METATF_IMPL_H

#include "metatf.h"

#define MTF_HIDDEN 0xff /* mtf_ctx.out_pos of a leaf not in the schema */

/* A data section: n bytes at data + off. */
struct mtf_dsec {
        uint32_t number, size;
        size_t off;
};

struct mtf_ctx {
        struct mtf_layout lay;
        uint8_t byteorder;
        unsigned ndsec;
        struct mtf_dsec dsec[MTF_SECTIONS_MAX];
        uint8_t *data; /* the data sections' bytes */
        /* streamed data sections: their numbers; mtf_state.stream[i] is
         * stream_num[i]'s */
        unsigned nstream;
        uint8_t stream_num[MTF_STREAMS_MAX];
        unsigned ncells; /* cells of the state: mtf_state.ncells */
        unsigned nnames; /* field names of the state: mtf_state.nnames */
        /* every section, as mtf_sections() lists it (schema order) */
        unsigned nsec;
        struct mtf_secinfo sec[TM_SCHEMA_SECTIONS_MAX];
        /* per kind: its schema kind (-1 for section and metadata), its first
         * cell (leaf i >= 1 is cell cell0 + i - 1), and per leaf the
         * position in the schema kind's fields (MTF_HIDDEN) and var slot */
        int16_t schema_kind[MTF_KINDS_MAX];
        uint16_t cell0[MTF_KINDS_MAX];
        uint8_t out_pos[MTF_KINDS_MAX][MTF_LEAVES_MAX];
        uint8_t var_slot[MTF_KINDS_MAX][MTF_LEAVES_MAX];
        /* per leaf: its field name's slot in mtf_state.prev, MTF_HIDDEN for
         * bytes and for leaves whose previous value is the record's */
        uint8_t name_of[MTF_KINDS_MAX][MTF_LEAVES_MAX];
        /* kinds by tag, for tags < 256: [0] global scope, [s + 1] section
         * s; kind index + 1, 0 none. Larger tags are searched. */
        uint8_t by_tag[MTF_DTD_SECTIONS_MAX + 1][256];
        /* a DTD beside the archive that was not used and why (code 0:
         * none): the views show it (tm_rcodec.note) */
        struct tm_err dtd_note;
};

/* One streamed data section (docs/formats/metatf.md, "Writing, and
 * SplitAddr"): its current chunk and its cursor. */
struct mtf_stream {
        uint64_t at;    /* raw offset of the current chunk's section record */
        uint64_t base;  /* section item number of the chunk's first item */
        uint64_t next;  /* the section's cursor: the item sectionStride reads next */
        uint32_t count; /* items in the chunk */
        uint8_t width;  /* bytes an item */
        uint8_t active; /* records may still read the chunk: decoding must not
                         * have consumed it */
        uint8_t pad[2];
};

/* The decoder state: plain data; a checkpoint is a copy. Each cell is one
 * leaf of one data kind, as metadata records address them (its width and
 * interpretation); the previous value that delta and stride add to is the
 * field's (Appendix B: "the value of the same field in the most recent
 * previous record"), one per field name, which every value of the field
 * decoded sets, whichever record kind and interpretation gave it.
 * Leaves with previous = record keep theirs in their cell's a. */
struct mtf_state {
        uint16_t section; /* current section: DTD section index + 1, 0 global */
        uint16_t ncells;
        uint16_t nnames;
        uint16_t pad;
        /* raw offset of the next record: past the offset a call starts at
         * while an active chunk holds *used back (0: at that offset) */
        uint64_t resume;
        struct mtf_stream stream[MTF_STREAMS_MAX];
        /* the cell's argument: default's value, baseOffset's base,
         * sectionStride's next item of a data section; delta's and
         * stride's previous value for a previous = record leaf, their
         * initial value otherwise */
        uint64_t a[MTF_CELLS_MAX];
        uint64_t b[MTF_CELLS_MAX];    /* stride's and sectionStride's stride */
        uint64_t prev[MTF_NAMES_MAX]; /* each field name's previous value */
        uint8_t width[MTF_CELLS_MAX];
        uint8_t interp[MTF_CELLS_MAX];
        uint8_t sec[MTF_CELLS_MAX]; /* sectionOffset's, sectionStride's section number */
};

_Static_assert(sizeof(struct mtf_state) <= TM_RSTATE_MAX, "Meta-TF state over TM_RSTATE_MAX");

/* The kind tag names in scope section (mtf_state.section), -1 if none. */
int mtf_kind_by_tag(const struct mtf_ctx *x, unsigned section, uint32_t tag);

/* The data section numbered number, or NULL. */
const struct mtf_dsec *mtf_dsec_find(const struct mtf_ctx *x, uint32_t number);

/* The slot of the streamed data section numbered number, or -1. */
int mtf_stream_find(const struct mtf_ctx *x, uint64_t number);

/* Set cell c (whose leaf's field name has slot ns in s->prev, or
 * MTF_HIDDEN: previous = record) to interpretation interp with arguments
 * a0, a1: the next previous value of delta and stride is a0 (the field's,
 * or the cell's), sectionStride starts at item 0. */
void mtf_cell_set(struct mtf_state *s, unsigned c, unsigned ns, unsigned interp, uint64_t a0,
                  uint64_t a1);

/* open() of a bound format (bound.h): the DTD named dtd (built in or in
 * TM_DTD_PATH: never beside an archive), records in byte order byteorder
 * (MTF_LE, MTF_BE), as if a header with no sections had been read. The
 * record offset is the caller's. Returns 0 or a negative errno. */
int mtf_open_bound(const char *dtd, unsigned byteorder, void **ctx, struct tm_schema *schema,
                   struct tm_rstate *st, struct tm_err *err);

/* Encoder entry points (mtf_enc.c), wired into tm_rcodec_metatf. */
int mtf_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                 struct tm_err *err);
int mtf_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                struct tm_err *err);
int mtf_enc_finish(struct tm_renc *e, struct tm_err *err);
void mtf_enc_free(struct tm_renc *e);

ssize_t mtf_decode_chunks(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                          mtf_chunk_cb cb, void *arg, struct tm_err *err);

ssize_t mtf_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                   uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                   struct tm_err *err);

#endif
