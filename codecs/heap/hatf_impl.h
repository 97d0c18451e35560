/* HATF internals shared by the decoder (hatf.c) and the encoder
 * (hatf_enc.c): the field state machine both must agree on.
 *
 * The state of one HATF field is its width, the last non-zero width (which
 * none, baseOffset and delta restore), the interpretation, its argument
 * (default value, base, or stride) and the previous value (for delta and
 * stride). The encoder keeps the same struct and changes it only through
 * hatf_meta_apply, so what it writes is what the decoder reads. */
#ifndef TM_HATF_IMPL_H
#define TM_HATF_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "hatf.h"

struct hatf_fstate {
        uint8_t width;  /* width code in effect: 0, 1, 2, 4, 8, HATF_W_V1, HATF_W_V2 */
        uint8_t lastnz; /* last non-zero width code */
        uint8_t interp; /* enum hatf_interp */
        uint8_t pad[5];
        uint64_t arg;  /* default value, base, or stride */
        uint64_t prev; /* the field's previous value */
};

/* The whole decoder state: a checkpoint is a copy of it. */
struct hatf_state {
        struct hatf_fstate f[HATF_NF];
};

/* The paper's "standard default configuration". */
void hatf_state_init(struct hatf_state *s);

/* Bytes of the metadata record whose first bytes are p[0..n) (n >= 4;
 * p[0] is HATF_TAG_METADATA): 4, 12 or 20, or -1 if op or interpretation
 * is unknown. */
int hatf_meta_len(const uint8_t *p);

/* Apply the whole metadata record at p (hatf_meta_len(p) bytes) to s.
 * Returns 0, or -1 with *why set to a static reason (unknown field, a
 * width code the field cannot take, an interpretation attributes cannot
 * take). */
int hatf_meta_apply(struct hatf_state *s, const uint8_t *p, const char **why);

/* Bytes a field of state fs occupies in a record (its stored width; for
 * v1 / v2 attributes, the length prefix's width: the data follow). */
static inline unsigned hatf_stored_width(const struct hatf_fstate *fs)
{
        if (fs->interp == HATF_I_DEFAULT || fs->interp == HATF_I_STRIDE)
                return 0;
        if (fs->width == HATF_W_V1)
                return 1;
        if (fs->width == HATF_W_V2)
                return 2;
        return fs->width;
}

/* The HATF field of a tm_schema_heap field. */
static inline unsigned hatf_field_of(unsigned heap_field)
{
        switch (heap_field) {
        case TM_HF_SIZE:
                return HATF_F_SIZE;
        case TM_HF_ADDRESS:
        case TM_HF_NEW_ADDRESS:
                return HATF_F_ADDRESS;
        case TM_HF_TIME:
                return HATF_F_TIME;
        case TM_HF_THREAD:
                return HATF_F_THREAD;
        case TM_HF_HEAP:
                return HATF_F_HEAP;
        default:
                return HATF_F_ATTR;
        }
}

/* Big-endian helpers. */
static inline uint64_t hatf_get_be(const uint8_t *p, unsigned n)
{
        uint64_t v = 0;
        for (unsigned i = 0; i < n; i++)
                v = v << 8 | p[i];
        return v;
}

static inline void hatf_put_be(uint8_t *p, uint64_t v, unsigned n)
{
        for (unsigned i = 0; i < n; i++)
                p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* n (1, 2, 4, 8) big-endian bytes at p, sign-extended. */
static inline uint64_t hatf_get_be_signed(const uint8_t *p, unsigned n)
{
        uint64_t v = hatf_get_be(p, n);
        if (n < 8 && (v >> (8 * n - 1)) & 1)
                v |= ~0ull << (8 * n);
        return v;
}

/* Encoder entry points (hatf_enc.c), wired into tm_rcodec_hatf. */
int hatf_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                  struct tm_err *err);
int hatf_enc_put(struct tm_renc *e, const struct tm_rec *r, uint64_t idx, struct tm_err *err);
int hatf_enc_finish(struct tm_renc *e, struct tm_err *err);
void hatf_enc_free(struct tm_renc *e);

#endif
