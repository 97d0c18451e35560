/* HATF 1.0 encoder: the writer encodings of the paper's section 3.3.
 *
 * Records wait in a look-ahead window (ENC_WINDOW records, ENC_ATTR_CAP
 * bytes of attributes and comments, copied because tm_rec.var points into
 * the caller's buffer). When the window is full, the oldest record leaves:
 * for each field it carries, the encoding's policy decides whether the
 * field's current setting (width, interpretation) should change, the
 * metadata records that change it are written and applied to our own
 * struct hatf_state with hatf_meta_apply (the decoder's function), then
 * the data record is written from that state. So the encoder's view of the
 * state is the decoder's by construction.
 *
 * One decision machine serves every encoding; the encodings differ only in
 * their per-field policy (which widths and interpretations a field may
 * take, see struct fpolicy and the table at the end). A decision compares
 * candidate settings by what they save over the run of records they can
 * encode, against staying in the "none" interpretation at the field's
 * current none width:
 *
 *   gain = sum over the run (baseline bytes - bytes in this setting)
 *          - bytes of metadata to switch to it - bytes to switch back
 *
 * The run is measured on the look-ahead window and ends at the first
 * record the setting cannot encode; the switch-back cost is what makes the
 * choice hysteretic (a 1-byte size field does not widen and narrow around
 * every large size; a baseOffset run must be long enough to pay for its
 * 12-24 bytes of metadata). The biggest gain wins, the current setting on
 * a tie. Decisions happen when the current setting cannot encode the
 * record, on every record while the field is in "none" (a run may start),
 * and every ENC_REEVAL records otherwise. Every scan stops at the first
 * record a candidate cannot encode and at the window's end, so a record
 * costs O(window) at worst and O(1) typically; candidates that cannot beat
 * the current setting on the first record are not scanned at all. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "hatf.h"
#include "hatf_impl.h"

#define ENC_WINDOW 128             /* records of look-ahead; a power of two */
#define ENC_ATTR_CAP (256u * 1024) /* attribute / comment bytes the window holds */
#define ENC_ARENA (2 * ENC_ATTR_CAP + 65536)
#define ENC_FLUSH (64u * 1024) /* hand output to the sink past this */
/* The output buffer holds ENC_FLUSH plus the largest record with its
 * metadata: 6 fields x (20 + 4) bytes of metadata, tag, 7 x 8 bytes of
 * numbers, a 2-byte length and 65535 bytes of attributes. */
#define ENC_OUT_CAP (ENC_FLUSH + 6 * 24 + 1 + 7 * 8 + 2 + 65535)
/* Both start at this and grow by need up to the sizes above: a small
 * trace (a test's, a fuzzer's) does not get 700 KiB. */
#define ENC_BUF_MIN 4096u
#define ENC_REEVAL 32      /* re-decide a non-none setting this often */
#define ENC_SCAN 32        /* occurrences of a field one candidate's scan looks at */
#define ENC_MAX_LEN 65535u /* comment and attribute bytes (2-byte length) */

/* Candidate slots: numbers: none 1/2/4/8, default, baseOffset 1/2/4,
 * delta 1/2/4, stride; attributes: the widths of attr_cands, default. */
enum {
        SLOT_NONE = 0,
        SLOT_DEFAULT = 4,
        SLOT_BO = 5,
        SLOT_DELTA = 8,
        SLOT_STRIDE = 11,
        SLOT_N = 12
};

#define WB(code) (1u << (code)) /* a width code as a bit of a width set */

/* What a field may become under one encoding. */
struct fpolicy {
        uint16_t none;  /* widths "none" may take (WB bits); numbers need 8, attributes v2 */
        uint8_t grow;   /* 1: the none width never narrows (naive): 4 or 8, v1 or v2 */
        uint8_t dflt;   /* runs of one value use "default" */
        uint8_t bo;     /* baseOffset widths (WB bits of 1, 2, 4) */
        uint8_t delta;  /* delta widths (WB bits of 1, 2, 4) */
        uint8_t stride; /* runs with a constant stride use "stride" */
        uint8_t start;  /* width the prologue sets (0: none set) */
};

struct encoding {
        const char *name;
        struct fpolicy f[HATF_NF];
};

/* A record waiting in the window, its fields by tm_schema_heap index. */
struct pend {
        uint8_t kind;
        uint32_t alen; /* attribute or comment bytes */
        uint64_t apos; /* their position in the arena's byte stream */
        uint64_t v[TM_HF_N];
};

struct tm_renc {
        tm_rsink sink;
        void *arg;
        const struct encoding *enc;
        struct hatf_state st;   /* the decoder's state after what we wrote */
        uint8_t nw[HATF_NF];    /* the none width a field returns to */
        uint8_t since[HATF_NF]; /* records since the field's last decision */
        uint64_t occn[HATF_NF]; /* records written that carry the field */
        /* per field and candidate slot (SLOT_*): the last occurrence still
         * inside a run that candidate was found to have and did not win;
         * a run starting later inside it is a part of it, so no better */
        uint64_t until[HATF_NF][SLOT_N];
        int started; /* prologue written */
        int forced;  /* deciding because the setting cannot encode the record */

        struct pend ring[ENC_WINDOW];
        size_t head, npend;

        uint8_t *arena;      /* attribute bytes of the window */
        size_t acap;         /* its size, up to ENC_ARENA */
        uint64_t arena_base; /* stream position of arena[0] */
        uint64_t arena_end;  /* stream position after the last byte */

        uint8_t *out;
        size_t olen, ocap; /* ocap up to ENC_OUT_CAP (or more for the first record) */
};

/* A candidate setting of one field. */
struct mode {
        uint8_t interp, width;
        uint64_t arg; /* default value, base, stride */
        uint64_t a3;  /* delta, stride: the initial previous value */
};

/* One occurrence of a field in a record: one value (two for a realloc's
 * addresses), or the attribute bytes. */
struct occ {
        uint64_t v[2];
        unsigned n;
        const uint8_t *b;
        uint32_t len;
};

/* HATF fields each kind carries (bit f for HATF field f), from
 * tm_schema_heap's kinds: size 0, address 1, time 2, thread 3, heap 4,
 * attributes 5. */
static const uint8_t kind_fields[TM_HK_N] = {
    [TM_HK_ALLOC] = 0x3f,         [TM_HK_FREE] = 0x3e,
    [TM_HK_REALLOC] = 0x3f,       [TM_HK_REALLOC_ALLOC_FREE] = 0x3f,
    [TM_HK_REALLOC_ALLOC] = 0x3f, [TM_HK_REALLOC_FREE] = 0x3f,
    [TM_HK_CREATE_HEAP] = 0x3c,   [TM_HK_DESTROY_HEAP] = 0x3c,
    [TM_HK_CREATE_THREAD] = 0x2c, [TM_HK_DESTROY_THREAD] = 0x2c,
    [TM_HK_COMMENT] = 0,
};

/* ---- value fitting, mirroring the decoder's field_value ---- */

static int fits_unsigned(uint64_t v, unsigned w)
{
        return w >= 8 || (v >> (8 * w)) == 0;
}

static int fits_signed(uint64_t d, unsigned w)
{
        if (w >= 8)
                return 1;
        if (w == 0)
                return d == 0;
        int64_t s = (int64_t)d, lim = (int64_t)1 << (8 * w - 1);
        return s >= -lim && s < lim;
}

/* The smallest of 1, 2, 4, 8 that holds v. */
static unsigned need_width(uint64_t v)
{
        return v < 0x100 ? 1 : v < 0x10000 ? 2 : v < 0x100000000ull ? 4 : 8;
}

static int num_fits(const struct hatf_fstate *fs, uint64_t v)
{
        switch (fs->interp) {
        case HATF_I_NONE:
                return fits_unsigned(v, fs->width);
        case HATF_I_DEFAULT:
                return v == fs->arg;
        case HATF_I_BASEOFFSET:
                return fits_signed(v - fs->arg, fs->width);
        case HATF_I_DELTA:
                return fits_signed(v - fs->prev, fs->width);
        default:
                return v == fs->prev + fs->arg;
        }
}

static int attr_fits(const struct hatf_fstate *fs, const uint8_t *b, uint32_t len)
{
        if (fs->interp == HATF_I_DEFAULT) {
                if (fs->arg == 0)
                        return len == 0;
                return len == 8 && hatf_get_be(b, 8) == fs->arg;
        }
        if (fs->width == HATF_W_V1)
                return len <= 0xff;
        if (fs->width == HATF_W_V2)
                return len <= 0xffff;
        return len == fs->width;
}

/* Does fs encode occurrence o of field f? Advances fs (prev) as the
 * decoder would. */
static int occ_fits(struct hatf_fstate *fs, unsigned f, const struct occ *o)
{
        if (f == HATF_F_ATTR)
                return attr_fits(fs, o->b, o->len);
        for (unsigned i = 0; i < o->n; i++) {
                if (!num_fits(fs, o->v[i]))
                        return 0;
                fs->prev = o->v[i];
        }
        return 1;
}

/* Bytes o takes in a record under fs (which encodes it). */
static unsigned occ_cost(const struct hatf_fstate *fs, unsigned f, const struct occ *o)
{
        unsigned w = hatf_stored_width(fs);
        if (f != HATF_F_ATTR)
                return w * o->n;
        if (fs->interp == HATF_I_DEFAULT)
                return 0;
        return fs->width == HATF_W_V1 || fs->width == HATF_W_V2 ? w + o->len : w;
}

/* Bytes o would take in "none" at the field's none width, widened as the
 * value needs (the baseline every candidate is measured against). */
static unsigned occ_base(const struct tm_renc *e, unsigned f, const struct occ *o)
{
        if (f == HATF_F_ATTR)
                return (e->nw[f] == HATF_W_V2 || o->len > 0xff ? 2 : 1) + o->len;
        uint64_t m = o->v[0] | (o->n > 1 ? o->v[1] : 0);
        unsigned w = need_width(m);
        if (e->enc->f[f].grow && w < 4)
                w = 4;
        return (w > e->nw[f] ? w : e->nw[f]) * o->n;
}

/* ---- the window ---- */

static struct pend *pend_at(struct tm_renc *e, size_t i)
{
        return &e->ring[(e->head + i) & (ENC_WINDOW - 1)];
}

static const uint8_t *pend_bytes(const struct tm_renc *e, const struct pend *p)
{
        return e->arena + (p->apos - e->arena_base);
}

/* The occurrence of field f in window record i; 0 if the record lacks f. */
static int pend_occ(struct tm_renc *e, size_t i, unsigned f, struct occ *o)
{
        const struct pend *p = pend_at(e, i);
        if (!(kind_fields[p->kind] >> f & 1))
                return 0;
        switch (f) {
        case HATF_F_SIZE:
                o->v[0] = p->v[TM_HF_SIZE];
                o->n = 1;
                break;
        case HATF_F_ADDRESS:
                o->v[0] = p->v[TM_HF_ADDRESS];
                o->v[1] = p->v[TM_HF_NEW_ADDRESS];
                o->n = tm_heap_is_realloc(p->kind) ? 2 : 1;
                break;
        case HATF_F_TIME:
                o->v[0] = p->v[TM_HF_TIME];
                o->n = 1;
                break;
        case HATF_F_THREAD:
                o->v[0] = p->v[TM_HF_THREAD];
                o->n = 1;
                break;
        case HATF_F_HEAP:
                o->v[0] = p->v[TM_HF_HEAP];
                o->n = 1;
                break;
        default:
                o->b = pend_bytes(e, p);
                o->len = p->alen;
                o->n = 0;
                break;
        }
        return 1;
}

/* ---- metadata ---- */

/* Write into buf the metadata records that take state cur of field f to
 * setting m; returns their length (0, 4, 8, 12, 16, 20 or 24 bytes). An
 * interpretation record comes first: none, baseOffset and delta restore
 * the last non-zero width, which a fieldSize after it then corrects. */
static size_t meta_plan(const struct hatf_fstate *cur, unsigned f, const struct mode *m,
                        uint8_t *buf)
{
        size_t n = 0;
        int same = cur->interp == m->interp;
        if (same && (m->interp == HATF_I_DEFAULT || m->interp == HATF_I_BASEOFFSET))
                same = cur->arg == m->arg;
        else if (same && m->interp == HATF_I_STRIDE)
                same = cur->arg == m->arg && cur->prev == m->a3;
        unsigned width = cur->width;
        if (!same) {
                buf[0] = HATF_TAG_METADATA;
                buf[1] = HATF_OP_INTERP;
                buf[2] = (uint8_t)f;
                buf[3] = m->interp;
                n = 4;
                switch (m->interp) {
                case HATF_I_NONE:
                        width = cur->lastnz;
                        break;
                case HATF_I_DEFAULT:
                case HATF_I_BASEOFFSET:
                        hatf_put_be(buf + 4, m->arg, 8);
                        n = 12;
                        width = m->interp == HATF_I_DEFAULT ? 0 : cur->lastnz;
                        break;
                case HATF_I_DELTA:
                        hatf_put_be(buf + 4, m->a3, 8);
                        n = 12;
                        width = cur->lastnz;
                        break;
                default:
                        hatf_put_be(buf + 4, m->a3, 8);
                        hatf_put_be(buf + 12, m->arg, 8);
                        n = 20;
                        width = 0;
                        break;
                }
        }
        if (m->interp == HATF_I_DEFAULT || m->interp == HATF_I_STRIDE || width == m->width)
                return n;
        buf[n] = HATF_TAG_METADATA;
        buf[n + 1] = HATF_OP_SIZE;
        buf[n + 2] = (uint8_t)f;
        buf[n + 3] = m->width;
        return n + 4;
}

/* Apply the metadata records in buf[0..n) to fs (field f). */
static void meta_apply_all(struct hatf_fstate *fs, unsigned f, const uint8_t *buf, size_t n)
{
        struct hatf_state tmp;
        const char *why;
        tmp.f[f] = *fs;
        for (size_t at = 0; at < n; at += (size_t)hatf_meta_len(buf + at))
                (void)hatf_meta_apply(&tmp, buf + at, &why); /* ours: always valid */
        *fs = tmp.f[f];
}

/* ---- output ---- */

static int out_flush(struct tm_renc *e)
{
        if (e->olen == 0)
                return 0;
        int r = e->sink(e->arg, e->out, e->olen);
        e->olen = 0;
        return r;
}

/* Room in out for n more bytes: the buffer grows by need up to
 * ENC_OUT_CAP. */
static int out_room(struct tm_renc *e, size_t n)
{
        if (e->olen + n <= e->ocap)
                return 0;
        size_t c = e->ocap * 2 > ENC_BUF_MIN ? e->ocap * 2 : ENC_BUF_MIN;
        if (c > ENC_OUT_CAP)
                c = ENC_OUT_CAP;
        if (c < e->olen + n)
                c = e->olen + n;
        uint8_t *o = realloc(e->out, c);
        if (!o)
                return -ENOMEM;
        e->out = o;
        e->ocap = c;
        return 0;
}

static void out_put(struct tm_renc *e, const void *p, size_t n)
{
        memcpy(e->out + e->olen, p, n);
        e->olen += n;
}

/* ---- decisions ---- */

struct cand {
        uint8_t meta[24];
        size_t mlen;
        struct hatf_fstate st;
        long gain;
        int have;
};

/* How many records in a row from window record 0 state fs encodes, and
 * what it saves against the baseline (*gain) over the best prefix of that
 * run: a setting is left where staying stops paying, so a wide "none"
 * that holds everything is not charged for the small values after the
 * one that needed it. Stops at the first record it cannot encode, after
 * ENC_SCAN records (longer runs pay for any switch) and after the window. */
static unsigned sim_run(struct tm_renc *e, unsigned f, struct hatf_fstate fs, long *gain)
{
        unsigned run = 0;
        long g = 0, best = LONG_MIN;
        struct occ o = {0};
        for (size_t i = 0; i < e->npend && run < ENC_SCAN; i++) {
                if (!pend_occ(e, i, f, &o))
                        continue;
                unsigned c = occ_cost(&fs, f, &o); /* fs's width: prev does not change it */
                if (!occ_fits(&fs, f, &o))
                        break;
                g += (long)occ_base(e, f, &o) - (long)c;
                best = g > best ? g : best;
                run++;
        }
        *gain = best;
        return run;
}

/* Bytes of metadata from fs back to "none" at the field's none width. */
static long back_cost(const struct tm_renc *e, unsigned f, const struct hatf_fstate *fs)
{
        struct mode m = {.interp = HATF_I_NONE, .width = e->nw[f]};
        uint8_t buf[24];
        return (long)meta_plan(fs, f, &m, buf);
}

/* Consider setting m for field f, whose first occurrence is o0; keep it in
 * *best if it gains more. cur_cost: bytes o0 takes in the current setting
 * (UINT_MAX if that cannot encode it). The run is measured on the setting
 * itself; the metadata that reaches it is planned, and applied to a copy
 * with hatf_meta_apply, only for a candidate that may win. */
static void try_mode(struct tm_renc *e, unsigned f, unsigned slot, const struct mode *m,
                     const struct occ *o0, unsigned cur_cost, struct cand *best)
{
        int zero = m->interp == HATF_I_DEFAULT || m->interp == HATF_I_STRIDE;
        struct hatf_fstate d = {
            .interp = m->interp, .width = zero ? 0 : m->width, .arg = m->arg, .prev = m->a3};
        struct hatf_fstate probe = d;
        /* not scanned unless it encodes o0 more cheaply than now */
        if (occ_cost(&d, f, o0) >= cur_cost || !occ_fits(&probe, f, o0))
                return;
        long g;
        unsigned run = sim_run(e, f, d, &g);
        /* a stride run's last value may start the next run */
        e->until[f][slot] = e->occn[f] + run - (run > 1 && slot == SLOT_STRIDE ? 2 : 1);
        if (best->have && g - 4 <= best->gain)
                return; /* any metadata costs at least 4 bytes */
        struct cand c;
        const struct hatf_fstate *cur = &e->st.f[f];
        c.mlen = meta_plan(cur, f, m, c.meta);
        if (c.mlen == 0)
                return; /* that is the current setting, already considered */
        c.st = *cur;
        meta_apply_all(&c.st, f, c.meta, c.mlen);
        c.gain = g - (long)c.mlen - back_cost(e, f, &c.st);
        if (!best->have || c.gain > best->gain) {
                c.have = 1;
                *best = c;
        }
}

/* The values of field f in window order from record 0: up to max, into v;
 * returns how many. */
static unsigned first_values(struct tm_renc *e, unsigned f, uint64_t *v, unsigned max)
{
        unsigned n = 0;
        struct occ o = {0};
        for (size_t i = 0; i < e->npend && n < max; i++) {
                if (!pend_occ(e, i, f, &o))
                        continue;
                for (unsigned k = 0; k < o.n && n < max; k++)
                        v[n++] = o.v[k];
        }
        return n;
}

/* The base for a w-byte baseOffset run from window record 0 on: the middle
 * of the values' range, extended record by record while it fits. */
static uint64_t base_for(struct tm_renc *e, unsigned f, unsigned w)
{
        uint64_t span = (1ull << (8 * w)) - 1, lo = 0, hi = 0;
        unsigned any = 0;
        struct occ o = {0};
        for (size_t i = 0; i < e->npend && any < ENC_SCAN; i++) {
                if (!pend_occ(e, i, f, &o))
                        continue;
                uint64_t l = any ? lo : o.v[0], h = any ? hi : o.v[0];
                for (unsigned k = 0; k < o.n; k++) {
                        l = o.v[k] < l ? o.v[k] : l;
                        h = o.v[k] > h ? o.v[k] : h;
                }
                if (h - l > span)
                        break;
                lo = l;
                hi = h;
                any++;
        }
        return lo + (1ull << (8 * w - 1));
}

/* Is candidate slot of field f inside a run it lost before? Not when the
 * current setting cannot encode the record (e->forced): then every
 * candidate is looked at, and a run's suffix may win against the others. */
static int cand_skip(const struct tm_renc *e, unsigned f, unsigned slot)
{
        return !e->forced && e->occn[f] <= e->until[f][slot] && e->until[f][slot] != 0;
}

static unsigned log2w(unsigned w)
{
        return w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : 3;
}

/* Candidates for a numeric field. */
static void numeric_cands(struct tm_renc *e, unsigned f, const struct occ *o0, unsigned cur_cost,
                          struct cand *best)
{
        const struct fpolicy *p = &e->enc->f[f];
        const struct hatf_fstate *cur = &e->st.f[f];
        uint64_t both = o0->v[0] | (o0->n > 1 ? o0->v[1] : 0);
        unsigned need = need_width(both);
        struct mode m;
        if (p->grow) {
                unsigned w = need < 4 ? 4 : need;
                w = w > e->nw[f] ? w : e->nw[f];
                m = (struct mode){.interp = HATF_I_NONE, .width = (uint8_t)w};
                try_mode(e, f, SLOT_NONE + log2w(w), &m, o0, cur_cost, best);
        } else {
                for (unsigned w = need; w <= 8; w *= 2)
                        if ((p->none & WB(w)) && !cand_skip(e, f, SLOT_NONE + log2w(w))) {
                                m = (struct mode){.interp = HATF_I_NONE, .width = (uint8_t)w};
                                try_mode(e, f, SLOT_NONE + log2w(w), &m, o0, cur_cost, best);
                        }
        }
        if (p->dflt && (o0->n == 1 || o0->v[0] == o0->v[1]) && !cand_skip(e, f, SLOT_DEFAULT)) {
                m = (struct mode){.interp = HATF_I_DEFAULT, .arg = o0->v[0]};
                try_mode(e, f, SLOT_DEFAULT, &m, o0, cur_cost, best);
        }
        for (unsigned w = 1; w <= 4; w *= 2) {
                if ((p->bo & WB(w)) && w * o0->n < cur_cost &&
                    !cand_skip(e, f, SLOT_BO + log2w(w))) {
                        m = (struct mode){.interp = HATF_I_BASEOFFSET,
                                          .width = (uint8_t)w,
                                          .arg = base_for(e, f, w)};
                        try_mode(e, f, SLOT_BO + log2w(w), &m, o0, cur_cost, best);
                }
                if ((p->delta & WB(w)) && !cand_skip(e, f, SLOT_DELTA + log2w(w))) {
                        m = (struct mode){.interp = HATF_I_DELTA,
                                          .width = (uint8_t)w,
                                          .a3 = cur->interp == HATF_I_DELTA ? cur->prev : o0->v[0]};
                        try_mode(e, f, SLOT_DELTA + log2w(w), &m, o0, cur_cost, best);
                }
        }
        if (p->stride && !cand_skip(e, f, SLOT_STRIDE)) {
                uint64_t v[2];
                if (first_values(e, f, v, 2) == 2) {
                        uint64_t s = v[1] - v[0];
                        m = (struct mode){.interp = HATF_I_STRIDE, .arg = s, .a3 = v[0] - s};
                        try_mode(e, f, SLOT_STRIDE, &m, o0, cur_cost, best);
                }
        }
}

/* Candidates for the attributes. */
static void attr_cands(struct tm_renc *e, const struct occ *o0, unsigned cur_cost,
                       struct cand *best)
{
        const unsigned f = HATF_F_ATTR;
        const struct fpolicy *p = &e->enc->f[f];
        struct mode m = {.interp = HATF_I_NONE};
        if (p->grow) {
                unsigned w = o0->len > 0xff ? HATF_W_V2 : HATF_W_V1;
                m.width = (uint8_t)(w > e->nw[f] ? w : e->nw[f]);
                try_mode(e, f, m.width == HATF_W_V1 ? 0 : 1, &m, o0, cur_cost, best);
        } else {
                static const uint8_t ws[] = {HATF_W_V1, HATF_W_V2, 0, 1, 2, 4, 8};
                for (unsigned i = 0; i < sizeof ws; i++) {
                        m.width = ws[i];
                        struct hatf_fstate t = {.interp = HATF_I_NONE, .width = ws[i]};
                        if ((p->none & WB(ws[i])) && attr_fits(&t, o0->b, o0->len) &&
                            !cand_skip(e, f, i))
                                try_mode(e, f, i, &m, o0, cur_cost, best);
                }
        }
        if (p->dflt && (o0->len == 0 || (o0->len == 8 && hatf_get_be(o0->b, 8) != 0)) &&
            !cand_skip(e, f, 7)) {
                m = (struct mode){.interp = HATF_I_DEFAULT,
                                  .arg = o0->len ? hatf_get_be(o0->b, 8) : 0};
                try_mode(e, f, 7, &m, o0, cur_cost, best);
        }
}

/* Does the policy offer anything but widening "none"? */
static int policy_chooses(const struct fpolicy *p)
{
        return !p->grow || p->dflt || p->bo || p->delta || p->stride;
}

/* Decide field f's setting for window record 0 (which carries f, as o0)
 * and write the metadata that changes it. */
static void field_decide(struct tm_renc *e, unsigned f, const struct occ *o0)
{
        const struct fpolicy *p = &e->enc->f[f];
        struct hatf_fstate *cur = &e->st.f[f];
        struct hatf_fstate probe = *cur;
        int fits = occ_fits(&probe, f, o0);
        e->occn[f]++;
        if (fits) {
                if (!policy_chooses(p))
                        return;
                /* a setting that stores nothing cannot be bettered */
                if (cur->interp != HATF_I_NONE &&
                    (++e->since[f] < ENC_REEVAL || hatf_stored_width(cur) == 0))
                        return;
        }
        e->since[f] = 0;
        e->forced = !fits;
        struct cand best = {.have = 0};
        unsigned cur_cost = UINT_MAX;
        if (fits) {
                /* staying: in "none" at the none width it costs the baseline
                 * exactly; otherwise measure its run */
                cur_cost = occ_cost(cur, f, o0);
                best.have = 1;
                best.mlen = 0;
                best.st = *cur;
                if (cur->interp == HATF_I_NONE && cur->width == e->nw[f]) {
                        best.gain = 0;
                } else {
                        long g;
                        sim_run(e, f, *cur, &g);
                        best.gain = g - back_cost(e, f, cur);
                }
        }
        if (f == HATF_F_ATTR)
                attr_cands(e, o0, cur_cost, &best);
        else
                numeric_cands(e, f, o0, cur_cost, &best);
        if (!best.have || best.mlen == 0)
                return; /* best.have is always set: the widest none encodes anything */
        out_put(e, best.meta, best.mlen);
        meta_apply_all(cur, f, best.meta, best.mlen);
        /* the none width to return to; for attributes only v1 / v2 (a
         * fixed width or "empty" is a run setting) */
        if (cur->interp == HATF_I_NONE && (f != HATF_F_ATTR || cur->width >= HATF_W_V1) &&
            (!p->grow || cur->width > e->nw[f]))
                e->nw[f] = cur->width;
}

/* ---- records ---- */

/* The prologue: the widths that hold the whole first window ("naive" and
 * the fields other encodings leave naive), the size field's 1 byte
 * ("smallsize"). */
static void prologue(struct tm_renc *e)
{
        for (unsigned f = 0; f < HATF_NF; f++) {
                const struct fpolicy *p = &e->enc->f[f];
                struct hatf_fstate *cur = &e->st.f[f];
                unsigned w = p->start;
                if (cur->interp != HATF_I_NONE)
                        continue;
                if (p->grow && f != HATF_F_ATTR) {
                        struct occ o = {0};
                        w = 4;
                        for (size_t i = 0; i < e->npend; i++)
                                if (pend_occ(e, i, f, &o))
                                        for (unsigned k = 0; k < o.n; k++)
                                                if (need_width(o.v[k]) > w)
                                                        w = 8;
                }
                if (w == 0 || w == cur->width)
                        continue;
                struct mode m = {.interp = HATF_I_NONE, .width = (uint8_t)w};
                uint8_t buf[24];
                size_t n = meta_plan(cur, f, &m, buf);
                out_put(e, buf, n);
                meta_apply_all(cur, f, buf, n);
                e->nw[f] = (uint8_t)w;
        }
}

/* Write the stored bytes of value v under fs, advancing fs. */
static void put_value(struct tm_renc *e, struct hatf_fstate *fs, uint64_t v)
{
        unsigned w = hatf_stored_width(fs);
        uint64_t s = v;
        if (fs->interp == HATF_I_BASEOFFSET)
                s = v - fs->arg;
        else if (fs->interp == HATF_I_DELTA)
                s = v - fs->prev;
        if (w) {
                hatf_put_be(e->out + e->olen, s, w);
                e->olen += w;
        }
        fs->prev = v;
}

static void put_attr(struct tm_renc *e, struct hatf_fstate *fs, const uint8_t *b, uint32_t len)
{
        if (fs->interp == HATF_I_DEFAULT)
                return;
        if (fs->width == HATF_W_V1 || fs->width == HATF_W_V2) {
                unsigned w = hatf_stored_width(fs);
                hatf_put_be(e->out + e->olen, len, w);
                e->olen += w;
        }
        out_put(e, b, len);
}

/* Write window record 0 (decisions, metadata, the record) and drop it. */
static int emit_one(struct tm_renc *e, struct tm_err *err)
{
        struct pend *p = pend_at(e, 0);
        /* the most one record writes: the prologue's and the decisions'
         * metadata (HATF_NF x 24 bytes each), tag, numbers, length, bytes */
        if (out_room(e, 2 * HATF_NF * 24 + 1 + 7 * 8 + 2 + p->alen) < 0)
                return tm_err_set(err, -ENOMEM, "hatf encoder: out of memory");
        if (!e->started) {
                prologue(e);
                e->started = 1;
        }
        uint8_t tag = p->kind;
        if (p->kind == TM_HK_COMMENT) {
                uint8_t hdr[3] = {tag, (uint8_t)(p->alen >> 8), (uint8_t)p->alen};
                out_put(e, hdr, 3);
                out_put(e, pend_bytes(e, p), p->alen);
        } else {
                unsigned fm = kind_fields[p->kind];
                struct occ o[HATF_NF] = {0};
                for (unsigned f = 0; f < HATF_NF; f++)
                        if (fm >> f & 1) {
                                pend_occ(e, 0, f, &o[f]);
                                field_decide(e, f, &o[f]);
                                struct hatf_fstate chk = e->st.f[f];
                                if (!occ_fits(&chk, f, &o[f]))
                                        return tm_err_set(err, -EIO,
                                                          "hatf encoder: field %u setting cannot "
                                                          "hold its value (internal error)",
                                                          f);
                        }
                out_put(e, &tag, 1);
                const struct tm_kind *k = &tm_schema_heap.kind[p->kind];
                for (unsigned i = 0; i < k->nfields; i++) {
                        unsigned hf = k->field[i], f = hatf_field_of(hf);
                        if (f == HATF_F_ATTR)
                                put_attr(e, &e->st.f[f], pend_bytes(e, p), p->alen);
                        else
                                put_value(e, &e->st.f[f], p->v[hf]);
                }
        }
        e->head = (e->head + 1) & (ENC_WINDOW - 1);
        e->npend--;
        if (e->npend == 0) {
                e->arena_base = e->arena_end;
        }
        if (e->olen >= ENC_FLUSH) {
                int r = out_flush(e);
                if (r < 0)
                        return tm_err_set(err, r, "hatf encoder: writing the output failed");
        }
        return 0;
}

/* Bytes of attributes / comments the window holds. */
static uint64_t arena_live(struct tm_renc *e)
{
        return e->npend ? e->arena_end - pend_at(e, 0)->apos : 0;
}

static int hatf_put_one(struct tm_renc *e, const struct tm_rec *r, uint64_t idx,
                        struct tm_err *err)
{
        if (r->kind >= TM_HK_N)
                return tm_err_set(err, -EINVAL, "record %llu: kind %u is not a heap record kind",
                                  (unsigned long long)idx, r->kind);
        struct tm_heap_ev ev;
        tm_heap_rec_to_ev(r, &ev);
        if (ev.attr_len > ENC_MAX_LEN)
                return tm_err_set(
                    err, -EINVAL, "record %llu: %s of %zu bytes (HATF holds at most %u)",
                    (unsigned long long)idx, r->kind == TM_HK_COMMENT ? "comment" : "attributes",
                    ev.attr_len, ENC_MAX_LEN);
        if (ev.attr_len && !ev.attr)
                return tm_err_set(err, -EINVAL, "record %llu: %zu bytes of attributes but no data",
                                  (unsigned long long)idx, ev.attr_len);
        while (e->npend == ENC_WINDOW || (e->npend && arena_live(e) + ev.attr_len > ENC_ATTR_CAP)) {
                int rc = emit_one(e, err);
                if (rc < 0)
                        return rc;
        }
        if (e->npend == 0)
                e->arena_base = e->arena_end;
        uint64_t need = e->arena_end - e->arena_base + ev.attr_len;
        if (need > e->acap && e->acap < ENC_ARENA) { /* grow by need up to ENC_ARENA */
                size_t c = e->acap * 2 > need ? e->acap * 2 : (size_t)need;
                if (c > ENC_ARENA)
                        c = ENC_ARENA;
                uint8_t *a = realloc(e->arena, c);
                if (!a)
                        return tm_err_set(err, -ENOMEM, "hatf encoder: out of memory");
                e->arena = a;
                e->acap = c;
        }
        if (need > e->acap) {
                /* slide the live bytes to the front: they are at most
                 * ENC_ATTR_CAP, so this happens once per ENC_ATTR_CAP bytes */
                uint64_t first = pend_at(e, 0)->apos;
                memmove(e->arena, e->arena + (first - e->arena_base), e->arena_end - first);
                e->arena_base = first;
        }
        struct pend *p = pend_at(e, e->npend);
        p->kind = (uint8_t)r->kind;
        p->alen = (uint32_t)ev.attr_len;
        p->apos = e->arena_end;
        p->v[TM_HF_SIZE] = ev.size;
        p->v[TM_HF_ADDRESS] = ev.addr;
        p->v[TM_HF_NEW_ADDRESS] = ev.new_addr;
        p->v[TM_HF_THREAD] = ev.thread;
        p->v[TM_HF_HEAP] = ev.heap;
        p->v[TM_HF_TIME] = ev.time;
        if (ev.attr_len)
                memcpy(e->arena + (e->arena_end - e->arena_base), ev.attr, ev.attr_len);
        e->arena_end += ev.attr_len;
        e->npend++;
        return 0;
}

int hatf_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                 struct tm_err *err)
{
        return tm_renc_each(hatf_put_one, e, r, n, idx, err);
}

int hatf_enc_finish(struct tm_renc *e, struct tm_err *err)
{
        int r = 0;
        while (e->npend && r == 0)
                r = emit_one(e, err);
        if (r == 0) {
                r = out_flush(e);
                if (r < 0)
                        tm_err_set(err, r, "hatf encoder: writing the output failed");
        }
        hatf_enc_free(e);
        return r;
}

void hatf_enc_free(struct tm_renc *e)
{
        if (!e)
                return;
        free(e->arena);
        free(e->out);
        free(e);
}

/* ---- the encodings ---- */

#define NUM_NAIVE                                                                                  \
        {                                                                                          \
                .none = WB(4) | WB(8), .grow = 1                                                   \
        }
#define ATTR_NAIVE                                                                                 \
        {                                                                                          \
                .none = WB(HATF_W_V1) | WB(HATF_W_V2), .grow = 1                                   \
        }
#define NUM_SMALL WB(1) | WB(2) | WB(4) | WB(8)
#define NAIVE_REST                                                                                 \
        [HATF_F_TIME] = NUM_NAIVE, [HATF_F_THREAD] = NUM_NAIVE, [HATF_F_HEAP] = NUM_NAIVE,         \
        [HATF_F_ATTR] = ATTR_NAIVE
#define ADDR_WITH(...)                                                                             \
        .f = {[HATF_F_SIZE] = NUM_NAIVE,                                                           \
              [HATF_F_ADDRESS] = {.none = WB(4) | WB(8), .grow = 1, __VA_ARGS__},                  \
              NAIVE_REST}

static const struct encoding encodings[] = {
    {.name = "naive", .f = {[HATF_F_SIZE] = NUM_NAIVE, [HATF_F_ADDRESS] = NUM_NAIVE, NAIVE_REST}},
    {.name = "smallsize",
     .f = {[HATF_F_SIZE] = {.none = NUM_SMALL, .start = 1},
           [HATF_F_ADDRESS] = NUM_NAIVE,
           NAIVE_REST}},
    {.name = "samesize",
     .f = {[HATF_F_SIZE] = {.none = WB(4) | WB(8), .grow = 1, .dflt = 1},
           [HATF_F_ADDRESS] = NUM_NAIVE,
           NAIVE_REST}},
    {.name = "baseoffset1", ADDR_WITH(.bo = WB(1))},
    {.name = "baseoffset2", ADDR_WITH(.bo = WB(2))},
    {.name = "baseoffset", ADDR_WITH(.bo = WB(1) | WB(2))},
    {.name = "stride", ADDR_WITH(.stride = 1)},
    {.name = "best",
     .f = {[HATF_F_SIZE] = {.none = NUM_SMALL, .dflt = 1, .start = 1},
           [HATF_F_ADDRESS] = {.none = NUM_SMALL,
                               .bo = WB(1) | WB(2) | WB(4),
                               .delta = WB(1) | WB(2) | WB(4),
                               .stride = 1},
           [HATF_F_TIME] =
               {.none = NUM_SMALL, .dflt = 1, .delta = WB(1) | WB(2) | WB(4), .stride = 1},
           [HATF_F_THREAD] = {.none = NUM_SMALL, .dflt = 1},
           [HATF_F_HEAP] = {.none = NUM_SMALL, .dflt = 1},
           [HATF_F_ATTR] = {.none = WB(0) | WB(1) | WB(2) | WB(4) | WB(8) | WB(HATF_W_V1) |
                                    WB(HATF_W_V2),
                            .dflt = 1}}},
};

int hatf_enc_open(const char *name, tm_rsink sink, void *arg, struct tm_renc **out,
                  struct tm_err *err)
{
        const struct encoding *enc = NULL;
        if (!name)
                name = "best";
        for (size_t i = 0; i < sizeof encodings / sizeof encodings[0]; i++)
                if (strcmp(encodings[i].name, name) == 0)
                        enc = &encodings[i];
        if (!enc)
                return tm_err_set(err, -EINVAL, "hatf: unknown encoding \"%s\"", name);
        struct tm_renc *e = calloc(1, sizeof *e);
        if (!e || !(e->arena = malloc(ENC_BUF_MIN)) || !(e->out = malloc(ENC_BUF_MIN))) {
                hatf_enc_free(e);
                return tm_err_set(err, -ENOMEM, "hatf encoder: out of memory");
        }
        e->acap = e->ocap = ENC_BUF_MIN;
        e->sink = sink;
        e->arg = arg;
        e->enc = enc;
        hatf_state_init(&e->st);
        for (unsigned f = 0; f < HATF_NF; f++)
                e->nw[f] = e->st.f[f].lastnz;
        static const uint8_t sig[HATF_SIGNATURE_LEN] = {TM_HK_COMMENT, 0,   8,   'H', 'A', 'T',
                                                        'F',           ' ', '1', '.', '0'};
        out_put(e, sig, sizeof sig);
        *out = e;
        return 0;
}
