/* ncol_blk: one block of schema 2 both ways (ncol.h;
 * docs/formats/native.md, "Schema 2 blocks"). */
#include "ncol.h"
#include "ncol_heap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define NS_KIND 0
#define NS_SECTION 1
#define NS_FIELD0 2
#define PICK_LEVEL 1 /* zstd level the methods are compared at */
#define PREV_OK 0x80 /* in vkind: the value has an NCOL_C_PREV prediction */

struct stream {
        uint8_t *p;
        size_t len, cap;
};

/* A value and the time of its last use, base + t (t from 1): a slot
 * whose time is at most the base is empty, so a reset moves the base
 * instead of clearing the table. */
struct mslot {
        uint64_t key;
        uint32_t time, unused;
};

/* The move-to-front ranks of a field's values in a block: value -> time
 * of its last use (hash, open addressing), and a mark at each value's
 * last use among the times 1..n: a bit set, with counts per 64-bit word
 * and per group of MTF_GROUP words. A value's rank is the number of marks
 * after its time; ranks are mostly small, so both ways (a time's rank,
 * the time of a rank) walk down from the newest time, and at most
 * n / 2^12 groups and 2 x MTF_GROUP words. */
#define MTF_GROUP 64
struct mtf {
        struct mslot *slot;
        size_t hcap, hmax; /* in use, allocated: powers of two */
        uint64_t *bits;    /* [n / 64 + 1]: bit t, a mark at time t */
        uint8_t *wcnt;     /* marks per word */
        uint32_t *gcnt;    /* marks per group */
        uint64_t *at;      /* the value used at each time */
        uint32_t now, marks, base;
};

/* A field's predictor state, reset at each field of each block. */
struct pred {
        uint64_t last, d1, d2, d3;
        uint64_t kind_last[TM_SCHEMA_KINDS_MAX];
        uint64_t *fcm1, *dfcm1, *dfcm2, *dfcm3;
        unsigned bits;
};

struct ncol_ws {
        struct tm_schema s;
        uint64_t has[TM_SCHEMA_KINDS_MAX]; /* bit f: the kind has field f */
        size_t cap;                        /* records of the columns */
        struct ncol_cols c;
        size_t var_cap[TM_SCHEMA_FIELDS_MAX];
        int8_t pos[TM_SCHEMA_KINDS_MAX][TM_SCHEMA_FIELDS_MAX]; /* field f's position in kind k */
        uint64_t *vals;  /* one field's values */
        uint64_t *vprev; /* their NCOL_C_PREV predictions */
        uint8_t *vkind;  /* their kinds; PREV_OK: vprev holds one */
        struct mtf m;
        struct pred p;
        struct stream st[NCOL_M_N][3], var, kind, section, out, z;
        struct stream dec[3]; /* a field's decompressed streams */
        struct ncol_heap_map hm;
        struct ncol_heap *heap; /* method 5's model, when hm.ok */
        struct stream hst[3];   /* method 5's streams */
        int heaped;             /* this block's addresses took method 5 */
        ZSTD_CCtx *cc;
        ZSTD_DCtx *dc;
};

static int grow(struct stream *s, size_t n)
{
        if (n <= s->cap)
                return 0;
        size_t c = n < 4096 ? 4096 : n + n / 2;
        uint8_t *p = realloc(s->p, c);
        if (!p)
                return -ENOMEM;
        s->p = p;
        s->cap = c;
        return 0;
}

static int put(struct stream *s, const void *p, size_t n)
{
        if (grow(s, s->len + n) < 0)
                return -ENOMEM;
        if (n)
                memcpy(s->p + s->len, p, n);
        s->len += n;
        return 0;
}

static int put_varint(struct stream *s, uint64_t v)
{
        uint8_t b[10];
        size_t n = 0;
        while (v >= 0x80) {
                b[n++] = (uint8_t)(v | 0x80);
                v >>= 7;
        }
        b[n++] = (uint8_t)v;
        return put(s, b, n);
}

static uint64_t zz(uint64_t d)
{
        return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static uint64_t unzz(uint64_t v)
{
        return (v >> 1) ^ (0 - (v & 1));
}

/* ---- workspace ---- */

struct ncol_ws *ncol_ws_new(const struct tm_schema *s)
{
        struct ncol_ws *w = calloc(1, sizeof *w);
        if (!w)
                return NULL;
        w->s = *s;
        memset(w->pos, -1, sizeof w->pos);
        for (unsigned k = 0; k < s->nkinds; k++)
                for (unsigned j = 0; j < s->kind[k].nfields; j++) {
                        w->has[k] |= 1ull << s->kind[k].field[j];
                        w->pos[k][s->kind[k].field[j]] = (int8_t)j;
                }
        size_t t = (size_t)1 << NCOL_TABLE_LOG;
        w->p.fcm1 = malloc(4 * t * sizeof(uint64_t));
        w->cc = ZSTD_createCCtx();
        w->dc = ZSTD_createDCtx();
        ncol_heap_map_of(s, &w->hm);
        if (w->hm.ok)
                w->heap = ncol_heap_new();
        if (!w->p.fcm1 || !w->cc || !w->dc || (w->hm.ok && !w->heap)) {
                ncol_ws_free(w);
                return NULL;
        }
        w->p.dfcm1 = w->p.fcm1 + t;
        w->p.dfcm2 = w->p.dfcm1 + t;
        w->p.dfcm3 = w->p.dfcm2 + t;
        return w;
}

int ncol_ws_is_for(const struct ncol_ws *w, const struct tm_schema *s)
{
        return memcmp(&w->s, s, sizeof *s) == 0;
}

static void cols_free(struct ncol_ws *w)
{
        free(w->c.kind);
        free(w->c.section);
        for (unsigned f = 0; f < TM_SCHEMA_FIELDS_MAX; f++) {
                free(w->c.col[f]);
                free(w->c.off[f]);
                w->c.col[f] = w->c.off[f] = NULL;
        }
        free(w->vals);
        free(w->vprev);
        free(w->vkind);
        free(w->m.slot);
        free(w->m.bits);
        free(w->m.wcnt);
        free(w->m.gcnt);
        free(w->m.at);
        w->c.kind = w->c.section = w->vkind = NULL;
        w->vals = w->vprev = NULL;
        memset(&w->m, 0, sizeof w->m);
        w->cap = 0;
}

void ncol_ws_free(struct ncol_ws *w)
{
        if (!w)
                return;
        cols_free(w);
        for (unsigned f = 0; f < TM_SCHEMA_FIELDS_MAX; f++)
                free(w->c.var[f]);
        for (unsigned i = 0; i < NCOL_M_N; i++)
                for (unsigned k = 0; k < 3; k++)
                        free(w->st[i][k].p);
        for (unsigned k = 0; k < 3; k++) {
                free(w->dec[k].p);
                free(w->hst[k].p);
        }
        ncol_heap_free(w->heap);
        free(w->var.p);
        free(w->kind.p);
        free(w->section.p);
        free(w->out.p);
        free(w->z.p);
        free(w->p.fcm1);
        ZSTD_freeCCtx(w->cc);
        ZSTD_freeDCtx(w->dc);
        free(w);
}

/* Columns and move-to-front room for n records. */
static int room(struct ncol_ws *w, size_t n)
{
        if (w->cap >= n)
                return 0;
        cols_free(w);
        size_t h = 16;
        while (h < 2 * n)
                h <<= 1;
        w->c.kind = malloc(n);
        w->c.section = malloc(n);
        w->vals = malloc(n * sizeof *w->vals);
        w->vprev = malloc(n * sizeof *w->vprev);
        w->vkind = malloc(n);
        w->m.slot = calloc(h, sizeof *w->m.slot);
        size_t words = n / 64 + 1;
        w->m.bits = malloc(words * sizeof *w->m.bits);
        w->m.wcnt = malloc(words);
        w->m.gcnt = malloc((words / MTF_GROUP + 1) * sizeof *w->m.gcnt);
        w->m.at = malloc((n + 1) * sizeof *w->m.at);
        int bad = !w->c.kind || !w->c.section || !w->vals || !w->vprev || !w->vkind || !w->m.slot ||
                  !w->m.bits || !w->m.wcnt || !w->m.gcnt || !w->m.at;
        for (unsigned f = 0; f < w->s.nfields && !bad; f++) {
                w->c.col[f] = malloc(n * sizeof(uint64_t));
                if (w->s.field[f].type >= TM_FT_TEXT)
                        w->c.off[f] = malloc(n * sizeof(uint64_t));
                bad = !w->c.col[f] || (w->s.field[f].type >= TM_FT_TEXT && !w->c.off[f]);
        }
        if (bad) {
                cols_free(w);
                return -ENOMEM;
        }
        w->m.hcap = w->m.hmax = h;
        w->cap = n;
        return 0;
}

/* ---- move-to-front ranks ---- */

static void mtf_reset(struct mtf *m, size_t n)
{
        size_t h = 16;
        while (h < 2 * n)
                h <<= 1;
        m->hcap = h;
        if (m->base + (uint64_t)m->now + n + 1 > UINT32_MAX) {
                memset(m->slot, 0, m->hmax * sizeof *m->slot);
                m->base = 0;
        } else {
                m->base += m->now;
        }
        size_t words = n / 64 + 1;
        memset(m->bits, 0, words * sizeof *m->bits);
        memset(m->wcnt, 0, words);
        memset(m->gcnt, 0, (words / MTF_GROUP + 1) * sizeof *m->gcnt);
        m->now = m->marks = 0;
}

static size_t mtf_hash(const struct mtf *m, uint64_t v)
{
        return (size_t)((v * 0x9E3779B97F4A7C15ull) >> 32) & (m->hcap - 1);
}

static size_t mtf_slot(const struct mtf *m, uint64_t v)
{
        size_t i = mtf_hash(m, v);
        while (m->slot[i].time > m->base && m->slot[i].key != v)
                i = (i + 1) & (m->hcap - 1);
        return i;
}

/* The time (from 1) of slot's value's last use; 0: not used yet. */
static uint32_t mtf_time(const struct mtf *m, size_t slot)
{
        uint32_t t = m->slot[slot].time;
        return t > m->base ? t - m->base : 0;
}

/* A mark at time t set (d 1) or cleared (d -1). */
static void mark(struct mtf *m, uint32_t t, int d)
{
        uint32_t wd = t / 64;
        m->bits[wd] ^= 1ull << (t % 64);
        m->wcnt[wd] = (uint8_t)(m->wcnt[wd] + d);
        m->gcnt[wd / MTF_GROUP] += (uint32_t)d;
}

/* Marks after time t (t <= now): the rank of the value used at t. */
static uint32_t mtf_after(const struct mtf *m, uint32_t t)
{
        uint32_t wd = t / 64, top = m->now / 64, g = wd / MTF_GROUP, gtop = top / MTF_GROUP;
        uint32_t r = (uint32_t)__builtin_popcountll(t % 64 == 63 ? 0 : m->bits[wd] >> (t % 64 + 1));
        uint32_t wend = g == gtop ? top : (g + 1) * MTF_GROUP - 1;
        for (uint32_t x = wd + 1; x <= wend; x++)
                r += m->wcnt[x];
        for (uint32_t x = g + 1; x <= gtop; x++)
                r += m->gcnt[x];
        return r;
}

/* The time of the mark of rank x (x < marks): the (x + 1)-th from the
 * newest. */
static uint32_t mtf_nth(const struct mtf *m, uint32_t x)
{
        uint32_t wd = m->now / 64, g = wd / MTF_GROUP;
        for (;; wd--) { /* the newest group's words, newest first */
                if (x < m->wcnt[wd])
                        goto found;
                x -= m->wcnt[wd];
                if (wd == g * MTF_GROUP)
                        break;
        }
        while (x >= m->gcnt[--g])
                x -= m->gcnt[g];
        for (wd = (g + 1) * MTF_GROUP - 1; x >= m->wcnt[wd]; wd--)
                x -= m->wcnt[wd];
found:;
        uint64_t b = m->bits[wd];
        for (; x; x--)
                b &= ~(1ull << (63 - __builtin_clzll(b)));
        return wd * 64 + 63 - (uint32_t)__builtin_clzll(b);
}

/* v used now. */
static void mtf_use(struct mtf *m, size_t slot, uint64_t v)
{
        uint32_t t = ++m->now, old = mtf_time(m, slot);
        if (old)
                mark(m, old, -1);
        else
                m->marks++;
        m->slot[slot].key = v;
        m->slot[slot].time = m->base + t;
        m->at[t] = v;
        mark(m, t, 1);
}

/* ---- predictors ---- */

/* p reset for a field of n values; tables as pred_update's (only the
 * tables kept are cleared). */
static void pred_reset(struct pred *p, size_t n, unsigned tables)
{
        unsigned bits = 4;
        while (bits < NCOL_TABLE_LOG && ((size_t)1 << bits) < 2 * n)
                bits++;
        p->bits = bits;
        size_t t = (size_t)1 << bits;
        uint64_t *tab[4] = {p->fcm1, p->dfcm1, p->dfcm2, p->dfcm3};
        for (unsigned c = 0; c < 4; c++)
                if (tables & 1u << (NCOL_C_FCM1 + c))
                        memset(tab[c], 0, t * 8);
        p->last = p->d1 = p->d2 = p->d3 = 0;
        memset(p->kind_last, 0, sizeof p->kind_last);
}

static size_t hix(const struct pred *p, uint64_t a, uint64_t b, uint64_t c, unsigned kind)
{
        uint64_t h = (a + (uint64_t)kind * 0xD6E8FEB86659FD93ull) * 0x9E3779B97F4A7C15ull;
        h = (h ^ b) * 0xC2B2AE3D27D4EB4Full;
        h = (h ^ c) * 0x9E3779B97F4A7C15ull;
        return (size_t)(h >> (64 - p->bits));
}

/* The prediction of code (below NCOL_C_MISS) for the next value of kind
 * k (prev: the NCOL_C_PREV one, or the last value when there is none).
 * The decoder asks for the one code it reads; inlined with a constant
 * code, the switch goes. */
static inline uint64_t predict_one(const struct pred *p, unsigned k, uint64_t prev, unsigned code)
{
        switch (code) {
        case NCOL_C_LAST:
                return p->last;
        case NCOL_C_STRIDE:
                return p->last + p->d1;
        case NCOL_C_KIND:
                return p->kind_last[k];
        case NCOL_C_FCM1:
                return p->fcm1[hix(p, p->last, 0, 0, k)];
        case NCOL_C_DFCM1:
                return p->last + p->dfcm1[hix(p, p->d1, 1, 0, k)];
        case NCOL_C_DFCM2:
                return p->last + p->dfcm2[hix(p, p->d1, p->d2, 2, k)];
        case NCOL_C_DFCM3:
                return p->last + p->dfcm3[hix(p, p->d1, p->d2, p->d3 + 3, k)];
        default:
                return prev;
        }
}

/* The predictions of codes 0..NCOL_C_PREV (the encoder's choice). */
static void predict(const struct pred *p, unsigned k, uint64_t prev, uint64_t out[NCOL_C_MISS])
{
        for (unsigned j = 0; j < NCOL_C_MISS; j++)
                out[j] = predict_one(p, k, prev, j);
}

/* v, of kind k, seen. tables: bit c set for each code c whose table
 * is kept (NCOL_C_FCM1 .. NCOL_C_DFCM3; the decoder keeps only those of
 * the codes it will read). */
static inline void pred_update(struct pred *p, unsigned k, uint64_t v, unsigned tables)
{
        uint64_t d = v - p->last;
        if (tables & 1u << NCOL_C_FCM1)
                p->fcm1[hix(p, p->last, 0, 0, k)] = v;
        if (tables & 1u << NCOL_C_DFCM1)
                p->dfcm1[hix(p, p->d1, 1, 0, k)] = d;
        if (tables & 1u << NCOL_C_DFCM2)
                p->dfcm2[hix(p, p->d1, p->d2, 2, k)] = d;
        if (tables & 1u << NCOL_C_DFCM3)
                p->dfcm3[hix(p, p->d1, p->d2, p->d3 + 3, k)] = d;
        p->d3 = p->d2;
        p->d2 = p->d1;
        p->d1 = d;
        p->kind_last[k] = v;
        p->last = v;
}

static int heap_encode(struct ncol_ws *w, const struct tm_rec *r, size_t n, size_t *size);
static int heap_decode(struct ncol_ws *w, unsigned f, int meth);

/* ---- encoding ---- */

/* The m values of a field in w->vals (kinds in w->vkind) by method
 * meth into w->st[meth]. */
static int enc_method(struct ncol_ws *w, int meth, size_t m)
{
        struct stream *a = &w->st[meth][0], *b = &w->st[meth][1], *c = &w->st[meth][2];
        a->len = b->len = c->len = 0;
        int rc = 0;
        uint64_t last = 0;
        if (meth == NCOL_M_PLAIN) {
                if (grow(a, m * 8) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < m; i++)
                        for (int k = 0; k < 8; k++)
                                a->p[a->len++] = (uint8_t)(w->vals[i] >> 8 * k);
                return 0;
        }
        if (meth == NCOL_M_PLANES) {
                if (grow(a, m * 8) < 0)
                        return -ENOMEM;
                for (size_t i = 0; i < m; i++) {
                        uint64_t z = zz(w->vals[i] - last);
                        last = w->vals[i];
                        for (int k = 0; k < 8; k++)
                                a->p[k * m + i] = (uint8_t)(z >> 8 * k);
                }
                a->len = m * 8;
                return 0;
        }
        if (meth == NCOL_M_VARINT || meth == NCOL_M_DELTA) {
                for (size_t i = 0; i < m && rc == 0; i++) {
                        uint64_t v = w->vals[i];
                        rc = put_varint(a, meth == NCOL_M_VARINT ? v : zz(v - last));
                        last = v;
                }
                return rc;
        }
        struct pred *p = &w->p;
        pred_reset(p, m, ~0u);
        mtf_reset(&w->m, m);
        for (size_t i = 0; i < m && rc == 0; i++) {
                uint64_t v = w->vals[i], pr[NCOL_C_MISS];
                unsigned k = w->vkind[i] & ~PREV_OK, code = NCOL_C_MISS;
                predict(p, k, w->vkind[i] & PREV_OK ? w->vprev[i] : p->last, pr);
                for (unsigned j = 0; j < NCOL_C_MISS; j++)
                        if (pr[j] == v) {
                                code = j;
                                break;
                        }
                size_t slot = mtf_slot(&w->m, v);
                if (code == NCOL_C_MISS && mtf_time(&w->m, slot)) {
                        uint32_t r = mtf_after(&w->m, mtf_time(&w->m, slot));
                        if (r < NCOL_RANK_CODES)
                                code = NCOL_C_RANK0 + r;
                        else {
                                code = NCOL_C_RANK;
                                rc = put_varint(c, r - NCOL_RANK_CODES);
                        }
                }
                if (code == NCOL_C_MISS)
                        rc = put_varint(b, zz(v - p->last));
                uint8_t cb = (uint8_t)code;
                if (rc == 0)
                        rc = put(a, &cb, 1);
                mtf_use(&w->m, slot, v);
                pred_update(p, k, v, ~0u);
        }
        return rc;
}

/* Bytes s takes stored at level (as it is, or one zstd frame). */
static size_t stored_size(struct ncol_ws *w, const struct stream *s, int level)
{
        if (!s->len)
                return 0;
        size_t b = ZSTD_compressBound(s->len);
        if (grow(&w->z, b) < 0)
                return s->len;
        size_t z = ZSTD_compressCCtx(w->cc, w->z.p, b, s->p, s->len, level);
        return ZSTD_isError(z) || z >= s->len ? s->len : z;
}

/* s appended to the body as stored at level, and its table entry at ent. */
static int emit(struct ncol_ws *w, const struct stream *s, int level, size_t ent)
{
        uint8_t *e;
        size_t n = s->len;
        int zst = 0;
        if (n) {
                size_t b = ZSTD_compressBound(n);
                if (grow(&w->z, b) < 0)
                        return -ENOMEM;
                size_t z = ZSTD_compressCCtx(w->cc, w->z.p, b, s->p, n, level);
                zst = !ZSTD_isError(z) && z < n;
                if (zst)
                        n = z;
        }
        if (s->len > UINT32_MAX || put(&w->out, zst ? w->z.p : s->p, n) < 0)
                return -ENOMEM;
        e = w->out.p + ent;
        e[0] = (uint8_t)zst;
        tmn_put32(e + 1, (uint32_t)n);
        tmn_put32(e + 5, (uint32_t)s->len);
        return 0;
}

/* Field f's values and bytes of records r[0..n) gathered; its count. */
static int gather(struct ncol_ws *w, const struct tm_rec *r, size_t n, unsigned f, size_t *m)
{
        const struct tm_field *fd = &w->s.field[f];
        size_t k = 0;
        w->var.len = 0;
        for (size_t i = 0; i < n; i++) {
                const struct tm_kind *kd = &w->s.kind[r[i].kind];
                unsigned vslot = 0;
                for (unsigned j = 0; j < kd->nfields; j++) {
                        unsigned g = kd->field[j];
                        if (g != f) {
                                vslot += w->s.field[g].type >= TM_FT_TEXT;
                                continue;
                        }
                        uint64_t v = r[i].v[j];
                        w->vals[k] = v;
                        w->vkind[k] = (uint8_t)r[i].kind;
                        const struct tm_kind *kp = i ? &w->s.kind[r[i - 1].kind] : NULL;
                        if (kp && j < kp->nfields && kp->field[j] < f) {
                                w->vprev[k] = r[i - 1].v[j];
                                w->vkind[k] |= PREV_OK;
                        }
                        k++;
                        if (fd->type < TM_FT_TEXT)
                                break;
                        uint64_t bytes = fd->type == TM_FT_LIST ? v * 8 : v;
                        if ((fd->type == TM_FT_LIST && v > (UINT32_MAX >> 3)) || bytes > UINT32_MAX)
                                return -EINVAL;
                        if (put(&w->var, r[i].var[vslot], (size_t)bytes) < 0)
                                return -ENOMEM;
                        break;
                }
        }
        *m = k;
        return 0;
}

/* The method of methods 0..4 whose streams of the m values in w->vals
 * are smallest at PICK_LEVEL: *best, *best_size (0 when m is 0). */
static int pick(struct ncol_ws *w, size_t m, int *best, size_t *best_size)
{
        *best = NCOL_M_PLAIN;
        *best_size = m ? SIZE_MAX : 0;
        for (int meth = 0; meth < NCOL_M_N && m; meth++) {
                int rc = enc_method(w, meth, m);
                if (rc < 0)
                        return rc;
                size_t sz = 0;
                for (int k = 0; k < 3; k++)
                        sz += stored_size(w, &w->st[meth][k], PICK_LEVEL);
                if (sz < *best_size) {
                        *best_size = sz;
                        *best = meth;
                }
        }
        return 0;
}

static int enc_field(struct ncol_ws *w, const struct tm_rec *r, size_t n, unsigned f, int level,
                     size_t table, uint8_t *method)
{
        size_t m;
        int rc = gather(w, r, n, f, &m);
        if (rc < 0)
                return rc;
        int best = NCOL_M_PLAIN;
        size_t best_size = SIZE_MAX;
        if ((rc = pick(w, m, &best, &best_size)) < 0)
                return rc;
        struct stream *st = w->st[best];
        if (f == w->hm.addr && w->hm.ok) {
                /* method 5 codes the new addresses too: against both fields' best */
                size_t mn, hsize, nbest = 0;
                int nm;
                if (w->hm.naddr < TM_SCHEMA_FIELDS_MAX &&
                    ((rc = gather(w, r, n, w->hm.naddr, &mn)) < 0 ||
                     (rc = pick(w, mn, &nm, &nbest)) < 0))
                        return rc;
                if ((rc = heap_encode(w, r, n, &hsize)) < 0)
                        return rc;
                /* and only when its streams fit a reader's limit (8 bytes a miss) */
                size_t max = 10 * n + 16;
                w->heaped = m && hsize < best_size + nbest && w->hst[0].len <= max &&
                            w->hst[1].len <= max && w->hst[2].len <= max;
                if (w->heaped) {
                        best = NCOL_M_HEAP;
                        st = w->hst;
                } else if ((rc = gather(w, r, n, f, &m)) < 0) {
                        return rc;
                }
        } else if (f == w->hm.naddr && w->heaped) {
                best = NCOL_M_HEAPED;
                for (int k = 0; k < 3; k++)
                        w->st[NCOL_M_PLAIN][k].len = 0;
                st = w->st[NCOL_M_PLAIN];
        }
        if (m && best < NCOL_M_N && (rc = enc_method(w, best, m)) < 0)
                return rc;
        *method = (uint8_t)best;
        for (int k = 0; k < 3; k++) {
                if (!m)
                        st[k].len = 0;
                if ((rc = emit(w, &st[k], level, table + (size_t)k * TMN_STREAM_ENTRY)) < 0)
                        return rc;
        }
        return emit(w, &w->var, level, table + 3 * TMN_STREAM_ENTRY);
}

static int check_recs(const struct ncol_ws *w, const struct tm_rec *r, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (r[i].kind >= w->s.nkinds || r[i].section > w->s.nsections)
                        return -EINVAL;
        return 0;
}

int ncol_block_encode(struct ncol_ws *w, const struct tm_rec *r, size_t n, int level,
                      const uint8_t **out, size_t *len, uint8_t *methods)
{
        if (n == 0 || n > ((size_t)1 << TMN_LOG_MAX) || check_recs(w, r, n) < 0)
                return -EINVAL;
        if (room(w, n) < 0)
                return -ENOMEM;
        unsigned nf = w->s.nfields;
        size_t nstreams = NS_FIELD0 + (size_t)nf * NCOL_FSTREAMS;
        size_t table = TMN_BLK_HDR + 1 + nf;
        w->out.len = 0;
        if (grow(&w->out, table + nstreams * TMN_STREAM_ENTRY) < 0)
                return -ENOMEM;
        w->out.len = table + nstreams * TMN_STREAM_ENTRY;
        w->out.p[TMN_BLK_HDR] = NCOL_CODING;
        w->heaped = 0;
        w->kind.len = w->section.len = 0;
        if (grow(&w->kind, n) < 0 || grow(&w->section, n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                w->kind.p[w->kind.len++] = (uint8_t)r[i].kind;
                if (w->s.nsections)
                        w->section.p[w->section.len++] = (uint8_t)r[i].section;
        }
        int rc = emit(w, &w->kind, level, table);
        if (rc == 0)
                rc = emit(w, &w->section, level, table + TMN_STREAM_ENTRY);
        for (unsigned f = 0; f < nf && rc == 0; f++) {
                size_t t = table + (NS_FIELD0 + (size_t)f * NCOL_FSTREAMS) * TMN_STREAM_ENTRY;
                rc = enc_field(w, r, n, f, level, t, w->out.p + TMN_BLK_HDR + 1 + f);
                if (rc == 0 && methods)
                        methods[f] = w->out.p[TMN_BLK_HDR + 1 + f];
        }
        if (rc < 0)
                return rc;
        size_t body = w->out.len - TMN_BLK_HDR;
        if (body > TMN_BODY_MAX)
                return -EFBIG;
        uint8_t *h = w->out.p;
        tmn_put32(h, TMN_BLK_MAGIC);
        tmn_put32(h + 4, (uint32_t)n);
        tmn_put32(h + 8, (uint32_t)body);
        tmn_put32(h + 12, (uint32_t)crc32_z(crc32(0, h, 12), h + TMN_BLK_HDR, body));
        *out = w->out.p;
        *len = w->out.len;
        return 0;
}

/* ---- decoding ---- */

struct rd {
        const uint8_t *p;
        size_t len, pos;
};

static int get_varint(struct rd *s, uint64_t *v)
{
        uint64_t x = 0;
        for (unsigned sh = 0; sh < 70; sh += 7) {
                if (s->pos >= s->len)
                        return -1;
                uint8_t b = s->p[s->pos++];
                if (sh == 63 && b > 1)
                        return -1;
                x |= (uint64_t)(b & 0x7f) << sh;
                if (!(b & 0x80)) {
                        *v = x;
                        return 0;
                }
        }
        return -1;
}

/* The stream of table entry e (its bytes at body + *at) into dst, checked
 * against max raw bytes. */
static int load(struct ncol_ws *w, const uint8_t *e, const uint8_t *body, size_t blen,
                size_t *at, size_t max, struct stream *dst)
{
        uint32_t stored = tmn_get32(e + 1), raw = tmn_get32(e + 5);
        if (e[0] > 1 || stored > blen - *at || raw > max || (e[0] == 0 && stored != raw))
                return -1;
        const uint8_t *p = body + *at;
        *at += stored;
        dst->len = 0;
        if (grow(dst, raw ? raw : 1) < 0)
                return -ENOMEM;
        if (e[0] == 0) {
                if (raw)
                        memcpy(dst->p, p, raw);
        } else {
                size_t z = ZSTD_decompressDCtx(w->dc, dst->p, raw, p, stored);
                if (ZSTD_isError(z) || z != raw || ZSTD_getFrameContentSize(p, stored) != raw)
                        return -1;
        }
        dst->len = raw;
        return 0;
}

#define MTF_LAG 16 /* values decoded ahead of the ranks' structure */
#define MTF_NEAR 16 /* ranks read with those values not used yet */

/* The newest mark older than time t; 0: none. */
static uint32_t mtf_older(const struct mtf *m, uint32_t t)
{
        uint32_t wd = t / 64;
        uint64_t b = m->bits[wd] & ((1ull << (t % 64)) - 1);
        while (!b) {
                if (wd == 0)
                        return 0;
                wd--;
                if (wd % MTF_GROUP == MTF_GROUP - 1) { /* a group's newest word: pass empty groups */
                        uint32_t g = wd / MTF_GROUP;
                        while (!m->gcnt[g]) {
                                if (g == 0)
                                        return 0;
                                g--;
                        }
                        wd = g * MTF_GROUP + MTF_GROUP - 1;
                }
                b = m->bits[wd];
        }
        return wd * 64 + 63 - (uint32_t)__builtin_clzll(b);
}

/* Is v among vals[lo .. hi)? */
static int among(const uint64_t *vals, size_t lo, size_t hi, uint64_t v)
{
        for (size_t j = lo; j < hi; j++)
                if (vals[j] == v)
                        return 1;
        return 0;
}

/* The value of rank x when vals[used .. i) are not used in m yet: their
 * distinct values first, the newest first, then m's from its newest,
 * passing over those among them. 0 and *v, or -1 when there are not x + 1
 * distinct values. */
static int mtf_near(const struct mtf *m, const uint64_t *vals, size_t used, size_t i, uint64_t x,
                    uint64_t *v)
{
        for (size_t j = i; j-- > used;) {
                if (among(vals, j + 1, i, vals[j]))
                        continue;
                if (x-- == 0) {
                        *v = vals[j];
                        return 0;
                }
        }
        for (uint32_t t = m->marks ? m->now : 0; t; t = mtf_older(m, t)) {
                if (among(vals, used, i, m->at[t]))
                        continue;
                if (x-- == 0) {
                        *v = m->at[t];
                        return 0;
                }
        }
        return -1;
}

/* vals[*used .. to) used, in order. */
static void mtf_catch_up(struct mtf *m, const uint64_t *vals, size_t *used, size_t to)
{
        for (; *used < to; ++*used)
                mtf_use(m, mtf_slot(m, vals[*used]), vals[*used]);
}

/* The codes of the hit-code stream c[0..n): bit c for a code c below
 * NCOL_C_RANK, bit NCOL_C_RANK for any rank. */
static unsigned codes_of(const uint8_t *c, size_t n)
{
        unsigned u = 0;
        for (size_t i = 0; i < n; i++)
                u |= 1u << (c[i] < NCOL_C_RANK ? c[i] : NCOL_C_RANK);
        return u;
}

/* Field f's m values decoded by method meth from w->dec into w->vals
 * (codes: codes_of its hit codes, for NCOL_M_PRED). */
static int dec_values(struct ncol_ws *w, int meth, size_t m, unsigned codes)
{
        struct rd a = {w->dec[0].p, w->dec[0].len, 0}, b = {w->dec[1].p, w->dec[1].len, 0},
                  c = {w->dec[2].p, w->dec[2].len, 0};
        uint64_t last = 0;
        if (meth == NCOL_M_PLAIN) {
                if (a.len != m * 8)
                        return -1;
                for (size_t i = 0; i < m; i++)
                        w->vals[i] = tmn_get64(a.p + 8 * i);
                a.pos = a.len;
        } else if (meth == NCOL_M_PLANES) {
                if (a.len != m * 8)
                        return -1;
                for (size_t i = 0; i < m; i++) {
                        uint64_t z = 0;
                        for (int k = 0; k < 8; k++)
                                z |= (uint64_t)a.p[k * m + i] << 8 * k;
                        w->vals[i] = last += unzz(z);
                }
                a.pos = a.len;
        } else if (meth == NCOL_M_VARINT || meth == NCOL_M_DELTA) {
                for (size_t i = 0; i < m; i++) {
                        uint64_t v;
                        if (get_varint(&a, &v) < 0)
                                return -1;
                        w->vals[i] = last = meth == NCOL_M_VARINT ? v : last + unzz(v);
                }
        } else {
                struct pred *p = &w->p;
                pred_reset(p, m, codes);
                /* The ranks' structure is kept only when a rank is read,
                 * and a value enters it MTF_LAG values late (its slot
                 * prefetched meanwhile): a small rank is read past the
                 * values not in it yet, a larger one after they enter. */
                int ranks = codes >> NCOL_C_RANK & 1;
                size_t used = 0;
                if (ranks)
                        mtf_reset(&w->m, m);
                for (size_t i = 0; i < m; i++) {
                        unsigned k = w->vkind[i] & ~PREV_OK;
                        uint64_t v, x;
                        if (a.pos >= a.len)
                                return -1;
                        unsigned code = a.p[a.pos++];
                        if (code < NCOL_C_MISS) {
                                v = predict_one(p, k, w->vkind[i] & PREV_OK ? w->vprev[i] : p->last,
                                                code);
                        } else if (code == NCOL_C_MISS) {
                                if (get_varint(&b, &x) < 0)
                                        return -1;
                                v = p->last + unzz(x);
                        } else if (code - NCOL_C_RANK0 < MTF_NEAR) {
                                if (mtf_near(&w->m, w->vals, used, i, code - NCOL_C_RANK0, &v) < 0)
                                        return -1;
                        } else {
                                mtf_catch_up(&w->m, w->vals, &used, i);
                                if (code == NCOL_C_RANK) {
                                        if (get_varint(&c, &x) < 0 || x >= w->m.marks)
                                                return -1;
                                        x += NCOL_RANK_CODES;
                                } else {
                                        x = code - NCOL_C_RANK0;
                                }
                                if (x >= w->m.marks)
                                        return -1;
                                v = w->m.at[mtf_nth(&w->m, (uint32_t)x)];
                        }
                        pred_update(p, k, v, codes);
                        w->vals[i] = v;
                        if (ranks) {
                                __builtin_prefetch(&w->m.slot[mtf_hash(&w->m, v)]);
                                if (i + 1 - used > MTF_LAG)
                                        mtf_catch_up(&w->m, w->vals, &used, used + 1);
                        }
                }
        }
        return a.pos == a.len && b.pos == b.len && c.pos == c.len ? 0 : -1;
}

/* Field f of the block: its values into c.col[f] (offsets into c.off[f]
 * for a variable field, its bytes into c.var[f]). */
static int dec_field(struct ncol_ws *w, unsigned f, int meth, const uint8_t *tab,
                     const uint8_t *body, size_t blen, size_t *at)
{
        uint32_t n = w->c.nrec;
        const struct tm_field *fd = &w->s.field[f];
        size_t m = 0;
        size_t max = 10 * (size_t)n + 16;
        for (int k = 0; k < 3; k++) {
                int rc = load(w, tab + (size_t)k * TMN_STREAM_ENTRY, body, blen, at, max, &w->dec[k]);
                if (rc)
                        return rc;
        }
        struct stream v = {w->c.var[f], 0, w->var_cap[f]};
        int rc = load(w, tab + 3 * TMN_STREAM_ENTRY, body, blen, at,
                      fd->type >= TM_FT_TEXT ? NCOL_VAR_MAX : 0, &v);
        w->c.var[f] = v.p;
        w->var_cap[f] = v.cap;
        if (rc)
                return rc;
        if (meth == NCOL_M_HEAP || meth == NCOL_M_HEAPED)
                return heap_decode(w, f, meth);
        if (w->heaped && f == w->hm.naddr)
                return -1;
        /* the codes read (a predicted field's); the NCOL_C_PREV predictions
         * are worked out only when that code is among them */
        unsigned codes = meth == NCOL_M_PRED ? codes_of(w->dec[0].p, w->dec[0].len) : 0;
        if (codes & 1u << NCOL_C_PREV) {
                for (uint32_t i = 0; i < n; i++) {
                        unsigned k = w->c.kind[i];
                        if (!(w->has[k] >> f & 1))
                                continue;
                        w->vkind[m] = (uint8_t)k;
                        int j = w->pos[k][f];
                        const struct tm_kind *kp = i ? &w->s.kind[w->c.kind[i - 1]] : NULL;
                        if (kp && j < kp->nfields && kp->field[j] < f) {
                                w->vprev[m] = w->c.col[kp->field[j]][i - 1];
                                w->vkind[m] |= PREV_OK;
                        }
                        m++;
                }
        } else {
                const uint8_t *kind = w->c.kind;
                uint8_t *vk = w->vkind;
                uint8_t has[TM_SCHEMA_KINDS_MAX];
                unsigned all = 1;
                for (unsigned k = 0; k < w->s.nkinds; k++) {
                        has[k] = w->has[k] >> f & 1;
                        all &= has[k];
                }
                if (all) { /* every kind has the field */
                        memcpy(vk, kind, n);
                        m = n;
                }
                for (uint32_t i = 0; i < n && !all; i++) {
                        vk[m] = kind[i];
                        m += has[kind[i]];
                }
        }
        if (meth >= NCOL_M_N || (m == 0 && (w->dec[0].len || w->dec[1].len || w->dec[2].len)) ||
            dec_values(w, meth, m, codes) < 0)
                return -1;
        uint64_t off = 0;
        size_t j = 0;
        uint64_t *col = w->c.col[f];
        const uint64_t *vals = w->vals;
        const uint8_t *kind = w->c.kind;
        if (fd->type < TM_FT_TEXT && m == n) { /* every record has the field */
                memcpy(col, vals, n * sizeof *col);
                return v.len ? -1 : 0;
        }
        uint8_t has[TM_SCHEMA_KINDS_MAX];
        for (unsigned k = 0; k < w->s.nkinds; k++)
                has[k] = w->has[k] >> f & 1;
        for (uint32_t i = 0; i < n; i++) {
                uint64_t x = has[kind[i]] ? vals[j++] : 0;
                col[i] = x;
                if (fd->type < TM_FT_TEXT)
                        continue;
                w->c.off[f][i] = off;
                uint64_t bytes = fd->type == TM_FT_LIST ? x * 8 : x;
                if ((fd->type == TM_FT_LIST && x > (UINT32_MAX >> 3)) || bytes > v.len - off)
                        return -1;
                off += bytes;
        }
        return off == v.len ? 0 : -1;
}

int ncol_block_decode(struct ncol_ws *w, const uint8_t *p, size_t len, uint64_t raw_off,
                      const struct ncol_cols **cols, struct tm_err *err)
{
        unsigned long long o = (unsigned long long)raw_off;
        uint32_t n = tmn_get32(p + 4), blen = (uint32_t)(len - TMN_BLK_HDR);
        const uint8_t *body = p + TMN_BLK_HDR;
        if ((uint32_t)crc32_z(crc32(0, p, 12), body, blen) != tmn_get32(p + 12))
                return tm_err_set(err, -EIO, "raw offset %llu: block checksum mismatch", o);
        unsigned nf = w->s.nfields;
        size_t nstreams = NS_FIELD0 + (size_t)nf * NCOL_FSTREAMS;
        size_t at = 1 + nf + nstreams * TMN_STREAM_ENTRY;
        if (blen < at || body[0] != NCOL_CODING)
                return tm_err_set(err, -EIO, "raw offset %llu: not a schema-2 block", o);
        if (room(w, n) < 0)
                return tm_err_set(err, -ENOMEM, "out of memory");
        w->c.nrec = n;
        w->heaped = 0;
        const uint8_t *tab = body + 1 + nf;
        struct stream ks = {w->c.kind, 0, n}, ss = {w->c.section, 0, n};
        int rc = load(w, tab, body, blen, &at, n, &ks);
        if (rc == 0)
                rc = load(w, tab + TMN_STREAM_ENTRY, body, blen, &at, w->s.nsections ? n : 0, &ss);
        if (rc == 0 && (ks.len != n || (w->s.nsections && ss.len != n)))
                rc = -1;
        for (uint32_t i = 0; i < n && rc == 0; i++) {
                if (!w->s.nsections)
                        w->c.section[i] = 0;
                if (w->c.kind[i] >= w->s.nkinds || w->c.section[i] > w->s.nsections)
                        rc = -1;
        }
        for (unsigned f = 0; f < nf && rc == 0; f++)
                rc = dec_field(w, f, body[1 + f],
                               tab + (NS_FIELD0 + (size_t)f * NCOL_FSTREAMS) * TMN_STREAM_ENTRY,
                               body, blen, &at);
        if (rc == -ENOMEM)
                return tm_err_set(err, -ENOMEM, "out of memory");
        if (rc == 0 && at != blen)
                rc = -1;
        if (rc)
                return tm_err_set(err, -EIO, "raw offset %llu: corrupt schema-2 block", o);
        *cols = &w->c;
        return 0;
}

void ncol_rec(const struct tm_schema *s, const struct ncol_cols *c, uint32_t i, struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[c->kind[i]];
        r->kind = c->kind[i];
        r->section = c->section[i];
        unsigned vs = 0;
        for (unsigned j = 0; j < k->nfields; j++) {
                unsigned f = k->field[j];
                r->v[j] = c->col[f][i];
                if (s->field[f].type >= TM_FT_TEXT)
                        r->var[vs++] = c->var[f] + c->off[f][i];
        }
}

/* ---- heap addresses (methods 5 and 6; ncol_heap.h) ---- */

/* Method 5's streams: written (w->hst) or read (rd). */
struct hio {
        int dec;
        struct rd rd[3];
};

/* The misses (8 bytes LE each in w->hst[1]) as byte planes: the low
 * bytes of all, then the second bytes, ... */
static int heap_planes(struct ncol_ws *w)
{
        struct stream *b = &w->hst[1], *t = &w->dec[0];
        size_t m = b->len / 8;
        if (grow(t, b->len) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < m; i++)
                for (int k = 0; k < 8; k++)
                        t->p[k * m + i] = b->p[8 * i + k];
        memcpy(b->p, t->p, b->len);
        return 0;
}

/* The next miss of the planes at s (s->pos counts misses). */
static int heap_miss_get(struct rd *s, uint64_t *v)
{
        size_t m = s->len / 8;
        if (s->len % 8 || s->pos >= m)
                return -1;
        uint64_t x = 0;
        for (int k = 0; k < 8; k++)
                x |= (uint64_t)s->p[k * m + s->pos] << 8 * k;
        s->pos++;
        *v = x;
        return 0;
}

/* One address event ev (size, old as ncol_heap_guess's) at *v: coded
 * into w->hst, or decoded into *v. */
static int heap_ev(struct ncol_ws *w, struct hio *io, int ev, uint64_t size, uint64_t old,
                   uint64_t *v)
{
        struct ncol_heap *h = w->heap;
        uint64_t x;
        unsigned code;
        if (io->dec) {
                if (io->rd[0].pos >= io->rd[0].len)
                        return -1;
                code = io->rd[0].p[io->rd[0].pos++];
                if (code < NCOL_H_MISS) {
                        if (ncol_heap_guess(h, ev, size, old, code, v) < 0)
                                return -1;
                } else if (code < NCOL_H_RANK) {
                        if (heap_miss_get(&io->rd[1], &x) < 0)
                                return -1;
                        *v = ncol_heap_ref(h, ev, code) + unzz(x);
                } else {
                        x = code - NCOL_H_RANK0;
                        if (code == NCOL_H_RANK &&
                            (get_varint(&io->rd[2], &x) < 0 || x > UINT32_MAX - NCOL_H_RANKS))
                                return -1;
                        x += code == NCOL_H_RANK ? NCOL_H_RANKS : 0;
                        if (ncol_heap_at(h, ev, x, v) < 0)
                                return -1;
                }
        } else {
                int c = ncol_heap_code(h, ev, size, old, *v);
                int64_t r = c < 0 ? ncol_heap_rank(h, ev, *v) : -1;
                int rc = 0;
                if (c >= 0) {
                        code = (unsigned)c;
                } else if (r >= NCOL_H_RANKS) {
                        code = NCOL_H_RANK;
                        rc = put_varint(&w->hst[2], (uint64_t)r - NCOL_H_RANKS);
                } else if (r >= 0) {
                        code = NCOL_H_RANK0 + (unsigned)r;
                } else {
                        /* the nearest reference */
                        code = NCOL_H_MISS;
                        x = zz(*v - ncol_heap_ref(h, ev, code));
                        for (unsigned j = NCOL_H_MISS2; j < NCOL_H_RANK; j++)
                                if (zz(*v - ncol_heap_ref(h, ev, j)) < x) {
                                        x = zz(*v - ncol_heap_ref(h, ev, j));
                                        code = j;
                                }
                        uint8_t le[8];
                        for (int b = 0; b < 8; b++)
                                le[b] = (uint8_t)(x >> 8 * b);
                        rc = put(&w->hst[1], le, 8);
                }
                uint8_t cb = (uint8_t)code;
                if (rc < 0 || put(&w->hst[0], &cb, 1) < 0)
                        return -ENOMEM;
        }
        ncol_heap_see(h, ev, size, *v, code);
        return 0;
}

/* The block's address events in record order, from or into the columns
 * of the address and new address fields (the size's read). */
static int heap_walk(struct ncol_ws *w, struct hio *io, uint32_t n)
{
        const struct ncol_heap_map *hm = &w->hm;
        uint64_t *sz = w->c.col[hm->size], *a = w->c.col[hm->addr];
        uint64_t *na = hm->naddr < TM_SCHEMA_FIELDS_MAX ? w->c.col[hm->naddr] : NULL;
        const uint64_t none = ~(uint64_t)0;
        size_t events = 0;
        for (uint32_t i = 0; i < n; i++) {
                unsigned r = hm->role[w->c.kind[i]];
                events += r == NCOL_HR_REALLOC ? 2 : r == NCOL_HR_ALLOC || r == NCOL_HR_FREE;
        }
        int rc = ncol_heap_reset(w->heap, n, events);
        for (uint32_t i = 0; i < n && rc == 0; i++) {
                unsigned k = w->c.kind[i];
                if (io->dec) {
                        a[i] = 0;
                        if (na)
                                na[i] = 0;
                }
                switch (w->hm.role[k]) {
                case NCOL_HR_ALLOC:
                        rc = heap_ev(w, io, NCOL_HE_ALLOC, sz[i], none, &a[i]);
                        break;
                case NCOL_HR_FREE:
                        rc = heap_ev(w, io, NCOL_HE_FREE, 0, none, &a[i]);
                        break;
                case NCOL_HR_REALLOC:
                        rc = heap_ev(w, io, NCOL_HE_FREE, 0, none, &a[i]);
                        if (rc == 0)
                                rc = heap_ev(w, io, NCOL_HE_ALLOC, sz[i], a[i], &na[i]);
                        break;
                case NCOL_HR_OTHER:
                        if (w->has[k] >> hm->addr & 1)
                                rc = heap_ev(w, io, NCOL_HE_OTHER, 0, none, &a[i]);
                        if (rc == 0 && na && w->has[k] >> hm->naddr & 1)
                                rc = heap_ev(w, io, NCOL_HE_OTHER, 0, none, &na[i]);
                        break;
                default:
                        break;
                }
        }
        return rc;
}

/* The column of field f of records r[0..n) into w->c.col[f] (0 where a
 * record's kind has no f). */
static void heap_column(struct ncol_ws *w, const struct tm_rec *r, size_t n, unsigned f)
{
        for (size_t i = 0; i < n; i++) {
                int j = w->pos[r[i].kind][f];
                w->c.col[f][i] = j < 0 ? 0 : r[i].v[j];
        }
}

/* Method 5's streams of records r[0..n) into w->hst; their size at
 * PICK_LEVEL into *size. */
static int heap_encode(struct ncol_ws *w, const struct tm_rec *r, size_t n, size_t *size)
{
        struct hio io = {0};
        for (size_t i = 0; i < n; i++)
                w->c.kind[i] = (uint8_t)r[i].kind;
        heap_column(w, r, n, w->hm.size);
        heap_column(w, r, n, w->hm.addr);
        if (w->hm.naddr < TM_SCHEMA_FIELDS_MAX)
                heap_column(w, r, n, w->hm.naddr);
        for (int k = 0; k < 3; k++)
                w->hst[k].len = 0;
        int rc = heap_walk(w, &io, (uint32_t)n);
        if (rc == 0)
                rc = heap_planes(w);
        *size = 0;
        for (int k = 0; rc == 0 && k < 3; k++)
                *size += stored_size(w, &w->hst[k], PICK_LEVEL);
        return rc;
}

/* The address field (method 5) from w->dec into the address and new
 * address columns; the new address field (method 6) checked. */
static int heap_decode(struct ncol_ws *w, unsigned f, int meth)
{
        if (!w->hm.ok || (meth == NCOL_M_HEAP) != (f == w->hm.addr))
                return -1;
        if (meth == NCOL_M_HEAPED)
                return w->heaped && f == w->hm.naddr && !w->dec[0].len && !w->dec[1].len &&
                               !w->dec[2].len
                           ? 0
                           : -1;
        struct hio io = {1, {{w->dec[0].p, w->dec[0].len, 0},
                             {w->dec[1].p, w->dec[1].len, 0},
                             {w->dec[2].p, w->dec[2].len, 0}}};
        int rc = heap_walk(w, &io, w->c.nrec);
        if (rc < 0)
                return rc;
        if (io.rd[1].pos != io.rd[1].len / 8 || io.rd[1].len % 8)
                return -1;
        for (int k = 0; k < 3; k += 2)
                if (io.rd[k].pos != io.rd[k].len)
                        return -1;
        w->heaped = 1;
        return 0;
}
