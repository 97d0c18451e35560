/* HATF 1.0 decoder: the field state machine and tm_rcodec_hatf. The
 * layout and its decisions are in hatf.h and docs/formats/hatf.md. */
#include "hatf.h"

#include <errno.h>
#include <string.h>

#include "hatf_impl.h"

const char *const hatf_encodings[] = {
    "best",        "naive",      "smallsize", "samesize", "baseoffset1",
    "baseoffset2", "baseoffset", "stride",    NULL,
};

static const char *const interp_names[HATF_NI] = {"none", "default", "baseOffset", "delta",
                                                  "stride"};

void hatf_state_init(struct hatf_state *s)
{
        memset(s, 0, sizeof *s);
        for (unsigned f = 0; f < HATF_NF; f++) {
                struct hatf_fstate *fs = &s->f[f];
                fs->lastnz = f == HATF_F_ATTR ? HATF_W_V1 : 4;
                if (f == HATF_F_SIZE || f == HATF_F_ADDRESS) {
                        fs->width = 4;
                        fs->interp = HATF_I_NONE;
                } else {
                        fs->width = 0;
                        fs->interp = HATF_I_DEFAULT;
                }
        }
}

int hatf_meta_len(const uint8_t *p)
{
        if (p[1] == HATF_OP_SIZE)
                return 4;
        if (p[1] != HATF_OP_INTERP)
                return -1;
        switch (p[3]) {
        case HATF_I_NONE:
                return 4;
        case HATF_I_DEFAULT:
        case HATF_I_BASEOFFSET:
        case HATF_I_DELTA:
                return 12;
        case HATF_I_STRIDE:
                return 20;
        default:
                return -1;
        }
}

static int width_ok(unsigned field, unsigned w)
{
        if (w == 0 || w == 1 || w == 2 || w == 4 || w == 8)
                return 1;
        return field == HATF_F_ATTR && (w == HATF_W_V1 || w == HATF_W_V2);
}

int hatf_meta_apply(struct hatf_state *s, const uint8_t *p, const char **why)
{
        unsigned field = p[2];
        if (field >= HATF_NF) {
                *why = "metadata names an unknown field";
                return -1;
        }
        struct hatf_fstate *fs = &s->f[field];
        if (p[1] == HATF_OP_SIZE) {
                if (!width_ok(field, p[3])) {
                        *why = field == HATF_F_ATTR ? "bad attributes width"
                                                    : "bad field width (v1/v2 are for attributes)";
                        return -1;
                }
                fs->width = p[3];
                if (p[3])
                        fs->lastnz = p[3];
                return 0;
        }
        unsigned in = p[3];
        if (field == HATF_F_ATTR && in != HATF_I_NONE && in != HATF_I_DEFAULT) {
                *why = "attributes take only the none and default interpretations";
                return -1;
        }
        fs->interp = (uint8_t)in;
        switch (in) {
        case HATF_I_NONE:
                fs->width = fs->lastnz;
                break;
        case HATF_I_DEFAULT:
                fs->width = 0;
                fs->arg = hatf_get_be(p + 4, 8);
                break;
        case HATF_I_BASEOFFSET:
                fs->width = fs->lastnz;
                fs->arg = hatf_get_be(p + 4, 8);
                break;
        case HATF_I_DELTA:
                fs->width = fs->lastnz;
                fs->prev = hatf_get_be(p + 4, 8);
                break;
        default: /* stride */
                fs->width = 0;
                fs->prev = hatf_get_be(p + 4, 8);
                fs->arg = hatf_get_be(p + 12, 8);
                break;
        }
        return 0;
}

/* ---- data records ---- */

/* The attributes field (state fs) at position pos of r, its stored bytes
 * at p: fixed widths are that many bytes; v1 / v2 a length then bytes;
 * default V: empty when V is 0, else V's 8 bytes. Returns the bytes
 * consumed. */
static size_t attr_decode(const struct hatf_fstate *fs, const uint8_t *p, struct tm_rec *r,
                          unsigned pos)
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
static size_t comment_decode(const uint8_t *p, struct tm_rec *r)
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

#define KP_NONE 0xff

struct kplan {
        uint8_t nf;     /* fields of the kind */
        uint8_t varpos; /* position of a v1/v2 attributes field, or KP_NONE */
        uint8_t varoff; /* its length prefix's offset in the record */
        uint8_t fixed;  /* bytes of the record but a v1/v2 field's data */
        uint8_t hf[TM_KIND_FIELDS_MAX], w[TM_KIND_FIELDS_MAX];
};

static void plan_kinds(const struct hatf_state *s, struct kplan *kp)
{
        for (unsigned kind = 0; kind < TM_HK_COMMENT; kind++) {
                const struct tm_kind *k = &tm_schema_heap.kind[kind];
                struct kplan *p = &kp[kind];
                unsigned at = 1;
                p->nf = k->nfields;
                p->varpos = KP_NONE;
                for (unsigned i = 0; i < k->nfields; i++) {
                        unsigned hf = hatf_field_of(k->field[i]);
                        const struct hatf_fstate *fs = &s->f[hf];
                        unsigned w = hatf_stored_width(fs);
                        p->hf[i] = (uint8_t)hf;
                        p->w[i] = (uint8_t)w;
                        if (hf == HATF_F_ATTR && fs->interp == HATF_I_NONE &&
                            (fs->width == HATF_W_V1 || fs->width == HATF_W_V2)) {
                                p->varpos = (uint8_t)i;
                                p->varoff = (uint8_t)at;
                        }
                        at += w;
                }
                p->fixed = (uint8_t)at;
        }
}

/* The n (0, 1, 2, 4, 8) big-endian bytes at p. */
static inline uint64_t get_be_w(const uint8_t *p, unsigned n)
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
static inline uint64_t get_be_sw(const uint8_t *p, unsigned n)
{
        uint64_t v = get_be_w(p, n);
        if (n && n < 8 && (v >> (8 * n - 1)) & 1)
                v |= ~0ull << (8 * n);
        return v;
}

/* Decode the data record of kind kind at p (its plan kp, rl bytes, all
 * there) into r. */
static void rec_decode_planned(struct hatf_state *s, const struct kplan *kp, unsigned kind,
                               const uint8_t *p, struct tm_rec *r)
{
        r->kind = kind;
        r->section = 0;
        size_t at = 1;
        for (unsigned i = 0; i < kp->nf; i++) {
                unsigned hf = kp->hf[i], w = kp->w[i];
                struct hatf_fstate *fs = &s->f[hf];
                if (hf == HATF_F_ATTR) {
                        at += attr_decode(fs, p + at, r, i);
                        continue;
                }
                uint64_t v;
                switch (fs->interp) {
                case HATF_I_NONE:
                        v = get_be_w(p + at, w);
                        break;
                case HATF_I_DEFAULT:
                        v = fs->arg;
                        break;
                case HATF_I_BASEOFFSET:
                        v = fs->arg + get_be_sw(p + at, w);
                        break;
                case HATF_I_DELTA:
                        v = fs->prev + get_be_sw(p + at, w);
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

static int hatf_probe(const uint8_t *head, size_t n)
{
        static const uint8_t sig[HATF_SIGNATURE_LEN] = {TM_HK_COMMENT, 0,   8,   'H', 'A', 'T',
                                                        'F',           ' ', '1', '.', '0'};
        return n >= sizeof sig && memcmp(head, sig, sizeof sig) == 0;
}

static ssize_t hatf_decode(void *ctx, struct tm_rstate *rs, const uint8_t *in, size_t len, int eof,
                           uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                           struct tm_err *err)
{
        (void)ctx;
        struct hatf_state *s = (struct hatf_state *)rs->b;
        struct kplan plan[TM_HK_COMMENT];
        size_t pos = 0, n = 0;
        plan_kinds(s, plan);
        while (n < cap && pos < len) {
                const uint8_t *p = in + pos;
                size_t avail = len - pos;
                unsigned tag = p[0];
                size_t rl;
                if (tag == HATF_TAG_METADATA) {
                        int ml = avail >= 4 ? hatf_meta_len(p) : 0;
                        if (ml < 0)
                                return tm_err_set(err, -EIO,
                                                  "raw offset %llu: unknown metadata op %u / "
                                                  "interpretation %u",
                                                  (unsigned long long)(raw_off + pos), p[1], p[3]);
                        if (ml == 0 || avail < (size_t)ml)
                                break;
                        const char *why;
                        if (hatf_meta_apply(s, p, &why) < 0)
                                return tm_err_set(err, -EIO, "raw offset %llu: %s",
                                                  (unsigned long long)(raw_off + pos), why);
                        plan_kinds(s, plan);
                        pos += (size_t)ml;
                        continue;
                }
                if (tag >= TM_HK_N)
                        return tm_err_set(err, -EIO, "raw offset %llu: unknown record tag %u",
                                          (unsigned long long)(raw_off + pos), tag);
                if (tag == TM_HK_COMMENT) {
                        if (avail < 3 || avail < (rl = 3 + (size_t)hatf_get_be(p + 1, 2)))
                                break;
                        pos += rl;
                        /* The signature at offset 0 marks the file; it is not
                         * one of the trace's records (a re-pack would double
                         * it). */
                        if (raw_off + pos - rl == 0 && hatf_probe(p, rl))
                                continue;
                        comment_decode(p, &out[n++]);
                        continue;
                }
                const struct kplan *kp = &plan[tag];
                rl = kp->fixed;
                if (kp->varpos != KP_NONE && avail >= rl)
                        rl += (size_t)hatf_get_be(p + kp->varoff, kp->w[kp->varpos]);
                if (avail < rl)
                        break;
                rec_decode_planned(s, kp, tag, p, &out[n++]);
                pos += rl;
        }
        *used = pos;
        if (eof && pos < len && n < cap)
                return tm_err_set(err, -EIO, "raw offset %llu: truncated %s record",
                                  (unsigned long long)(raw_off + pos),
                                  in[pos] == HATF_TAG_METADATA ? "metadata"
                                  : in[pos] < TM_HK_N          ? tm_schema_heap.kind[in[pos]].name
                                                               : "unknown");
        return (ssize_t)n;
}

static int hatf_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                     struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)path;
        (void)err;
        *ctx = NULL;
        *schema = tm_schema_heap;
        hatf_state_init((struct hatf_state *)st->b);
        return 0; /* no header: the signature is a comment record */
}

static void hatf_close(void *ctx)
{
        (void)ctx;
}

/* Used by tests and tools to name an interpretation. */
const char *hatf_interp_name(unsigned in)
{
        return in < HATF_NI ? interp_names[in] : "unknown";
}

const struct tm_rcodec tm_rcodec_hatf = {
    .name = "hatf",
    .suffix = ".hatf",
    .family = "heap",
    .probe = hatf_probe,
    .open = hatf_open,
    .close = hatf_close,
    .state_size = sizeof(struct hatf_state),
    .decode = hatf_decode,
    .enc_open = hatf_enc_open,
    .enc_put = hatf_enc_put,
    .enc_finish = hatf_enc_finish,
    .enc_free = hatf_enc_free,
};
