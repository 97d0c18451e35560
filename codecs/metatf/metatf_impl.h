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
        /* per kind: its schema kind (-1 for section and metadata), its first
         * cell (leaf i >= 1 is cell cell0 + i - 1), and per leaf the
         * position in the schema kind's fields (MTF_HIDDEN) and var slot */
        int16_t schema_kind[MTF_KINDS_MAX];
        uint16_t cell0[MTF_KINDS_MAX];
        uint8_t out_pos[MTF_KINDS_MAX][MTF_LEAVES_MAX];
        uint8_t var_slot[MTF_KINDS_MAX][MTF_LEAVES_MAX];
        /* kinds by tag, for tags < 256: [0] global scope, [s + 1] section
         * s; kind index + 1, 0 none. Larger tags are searched. */
        uint8_t by_tag[MTF_DTD_SECTIONS_MAX + 1][256];
};

/* The decoder state: plain data; a checkpoint is a copy. Each cell is one
 * leaf of one data kind, as metadata records address them. */
struct mtf_state {
        uint16_t section; /* current section: DTD section index + 1, 0 global */
        uint16_t ncells;
        uint32_t pad;
        uint64_t a[MTF_CELLS_MAX];   /* argument 1: default, base, initial value, section */
        uint64_t b[MTF_CELLS_MAX];   /* argument 2: stride */
        uint64_t cur[MTF_CELLS_MAX]; /* previous value (delta, stride), next item (sectionStride) */
        uint8_t width[MTF_CELLS_MAX];
        uint8_t interp[MTF_CELLS_MAX];
};

_Static_assert(sizeof(struct mtf_state) <= TM_RSTATE_MAX, "Meta-TF state over TM_RSTATE_MAX");

/* The kind tag names in scope section (mtf_state.section), -1 if none. */
int mtf_kind_by_tag(const struct mtf_ctx *x, unsigned section, uint32_t tag);

/* The data section numbered number, or NULL. */
const struct mtf_dsec *mtf_dsec_find(const struct mtf_ctx *x, uint32_t number);

/* Set cell c to interpretation interp with arguments a0, a1: the first
 * previous value of delta and stride is a0, sectionStride starts at item 0. */
void mtf_cell_set(struct mtf_state *s, unsigned c, unsigned interp, uint64_t a0, uint64_t a1);

ssize_t mtf_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                   uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                   struct tm_err *err);

#endif
