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

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* ---- data records (the decoder, hatf.c, and the text decoder,
 * hatf_text.c) ---- */

/* The attributes field (state fs) at position pos of r, its stored bytes
 * at p: fixed widths are that many bytes; v1 / v2 a length then bytes;
 * default V: empty when V is 0, else V's 8 bytes. Returns the bytes
 * consumed. */
static inline size_t hatf_attr_decode(const struct hatf_fstate *fs, const uint8_t *p,
                                      struct tm_rec *r, unsigned pos)
{
        unsigned w = hatf_stored_width(fs);
        if (fs->interp == HATF_I_DEFAULT) {
                /* The default's 8 bytes live in the record's last, unused
                 * v[] slot: in the state a later record of the same call
                 * with another default would overwrite them. */
                uint64_t *bytes = &r->v[TM_KIND_FIELDS_MAX - 1];
                hatf_put_be((uint8_t *)bytes, fs->arg, 8);
                r->v[pos] = fs->arg ? 8 : 0;
                r->var[0] = (const uint8_t *)bytes;
                return 0;
        }
        if (fs->width == HATF_W_V1 || fs->width == HATF_W_V2) {
                r->v[pos] = hatf_get_be(p, w);
                r->var[0] = p + w;
                return w + (size_t)r->v[pos];
        }
        r->v[pos] = w;
        r->var[0] = p;
        return w;
}

/* A comment record at p (whole) into r; returns its length. */
static inline size_t hatf_comment_decode(const uint8_t *p, struct tm_rec *r)
{
        r->kind = TM_HK_COMMENT;
        r->section = 0;
        r->v[0] = hatf_get_be(p + 1, 2);
        r->var[0] = p + 3;
        return 3 + (size_t)r->v[0];
}

/* ---- the per-kind plan of the decoder's hot loop ----
 *
 * Widths and interpretations change only at metadata records, so a decode
 * call works out once, for every data kind, where each field's bytes lie
 * and how they are read, and again after each metadata record. The plan
 * lives on the call's stack: the state stays the plain struct the index
 * copies. Measured on a 7 M-record recorded trace: ~2x fewer ns a record
 * than walking the schema for every record. */

#define HATF_KP_NONE 0xff

struct hatf_kplan {
        uint8_t nf;     /* fields of the kind */
        uint8_t varpos; /* position of a v1/v2 attributes field, or HATF_KP_NONE */
        uint8_t varoff; /* its length prefix's offset in the record */
        uint8_t fixed;  /* bytes of the record but a v1/v2 field's data */
        uint8_t hf[TM_KIND_FIELDS_MAX], w[TM_KIND_FIELDS_MAX];
};

/* The n (0, 1, 2, 4, 8) big-endian bytes at p. */
static inline uint64_t hatf_get_be_w(const uint8_t *p, unsigned n)
{
        switch (n) {
        case 0:
                return 0;
        case 1:
                return p[0];
        case 2:
                return (uint64_t)p[0] << 8 | p[1];
        case 4: {
                uint32_t v;
                memcpy(&v, p, 4);
                return __builtin_bswap32(v);
        }
        case 8: {
                uint64_t v;
                memcpy(&v, p, 8);
                return __builtin_bswap64(v);
        }
        default:
                return hatf_get_be(p, n);
        }
}

/* The same, sign-extended. */
static inline uint64_t hatf_get_be_sw(const uint8_t *p, unsigned n)
{
        uint64_t v = hatf_get_be_w(p, n);
        if (n && n < 8 && (v >> (8 * n - 1)) & 1)
                v |= ~0ull << (8 * n);
        return v;
}

/* Decode the data record of kind kind at p (its plan kp, rl bytes, all
 * there) into r. */
static inline void hatf_rec_decode_planned(struct hatf_state *s, const struct hatf_kplan *kp,
                                           unsigned kind, const uint8_t *p, struct tm_rec *r)
{
        r->kind = kind;
        r->section = 0;
        size_t at = 1;
        for (unsigned i = 0; i < kp->nf; i++) {
                unsigned hf = kp->hf[i], w = kp->w[i];
                struct hatf_fstate *fs = &s->f[hf];
                if (hf == HATF_F_ATTR) {
                        at += hatf_attr_decode(fs, p + at, r, i);
                        continue;
                }
                uint64_t v;
                switch (fs->interp) {
                case HATF_I_NONE:
                        v = hatf_get_be_w(p + at, w);
                        break;
                case HATF_I_DEFAULT:
                        v = fs->arg;
                        break;
                case HATF_I_BASEOFFSET:
                        v = fs->arg + hatf_get_be_sw(p + at, w);
                        break;
                case HATF_I_DELTA:
                        v = fs->prev + hatf_get_be_sw(p + at, w);
                        break;
                default:
                        v = fs->prev + fs->arg;
                        break;
                }
                fs->prev = v;
                r->v[i] = v;
                at += w;
        }
}

/* The kinds' plans for state s (kp: TM_HK_COMMENT of them). */
void hatf_plan_kinds(const struct hatf_state *s, struct hatf_kplan *kp);

/* The kinds' plans for state s, kept per thread with the part of s they
 * depend on (widths, interpretations, arguments: not the previous values)
 * and made again only when that changes; *gen (if not NULL) gets a number
 * that changes whenever they are made again, for plans derived from them.
 * Valid until the thread's next call. The decoder is called per batch of
 * a few hundred records, and making them at every call was ~12% of its
 * time (bench/text_bench, decoding alone: 15.2 -> 13.3 ns a record). */
const struct hatf_kplan *hatf_plans(const struct hatf_state *s, uint64_t *gen);

/* Is the comment record p[0..n) the signature HATF_SIGNATURE? */
int hatf_is_signature(const uint8_t *p, size_t n);

/* What the record at p (avail > 0 bytes, at raw offset off) is. */
enum hatf_step {
        HATF_STEP_MORE, /* cut by the end of the input */
        HATF_STEP_META, /* metadata: hatf_meta_apply it (*rl bytes) */
        HATF_STEP_SIG,  /* the signature at offset 0: skip *rl bytes */
        HATF_STEP_REC,  /* a data record or comment of *rl bytes: hatf_rec_decode */
};

/* Look at the record at p without decoding it: its length into *rl and
 * what it is (enum hatf_step), or -EIO naming off (an unknown tag,
 * metadata op or interpretation). plan is the kinds' plan in effect. */
static inline int hatf_peek(const struct hatf_kplan *plan, const uint8_t *p, size_t avail,
                            uint64_t off, size_t *rl, struct tm_err *err)
{
        unsigned tag = p[0];
        if (tag == HATF_TAG_METADATA) {
                int ml = avail >= 4 ? hatf_meta_len(p) : 0;
                if (ml < 0)
                        return tm_err_set(err, -EIO,
                                          "raw offset %llu: unknown metadata op %u / "
                                          "interpretation %u",
                                          (unsigned long long)off, p[1], p[3]);
                *rl = (size_t)ml;
                return ml == 0 || avail < (size_t)ml ? HATF_STEP_MORE : HATF_STEP_META;
        }
        if (tag >= TM_HK_N)
                return tm_err_set(err, -EIO, "raw offset %llu: unknown record tag %u",
                                  (unsigned long long)off, tag);
        if (tag == TM_HK_COMMENT) {
                if (avail < 3 || avail < (*rl = 3 + (size_t)hatf_get_be(p + 1, 2)))
                        return HATF_STEP_MORE;
                return off == 0 && hatf_is_signature(p, *rl) ? HATF_STEP_SIG : HATF_STEP_REC;
        }
        const struct hatf_kplan *kp = &plan[tag];
        *rl = kp->fixed;
        if (kp->varpos != HATF_KP_NONE && avail >= *rl)
                *rl += (size_t)hatf_get_be(p + kp->varoff, kp->w[kp->varpos]);
        return avail < *rl ? HATF_STEP_MORE : HATF_STEP_REC;
}

/* Decode the record hatf_peek called HATF_STEP_REC at p into r. */
static inline void hatf_rec_decode(struct hatf_state *s, const struct hatf_kplan *plan,
                                   const uint8_t *p, struct tm_rec *r)
{
        if (p[0] == TM_HK_COMMENT)
                hatf_comment_decode(p, r);
        else
                hatf_rec_decode_planned(s, &plan[p[0]], p[0], p, r);
}

/* Encoder entry points (hatf_enc.c), wired into tm_rcodec_hatf. */
int hatf_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                  struct tm_err *err);
int hatf_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                 struct tm_err *err);
int hatf_enc_finish(struct tm_renc *e, struct tm_err *err);
void hatf_enc_free(struct tm_renc *e);

/* HATF's text decoder on this machine, or NULL (hatf_text.h): the row's
 * text_of. */
tm_rtext_fn *hatf_text_of(void);

#endif
