/* ncol_blk: one block of schema 2 both ways (ncol.h;
 * docs/formats/native.md, "Schema 2 blocks"). */
#include "../common/tm_huge.h"
#include "ncol.h"
#include "ncol_heap.h"
#include "ncol_marks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define NS_KIND 0
#define NS_SECTION 1
#define NS_FIELD0 2
#define PICK_LEVEL 1   /* zstd level the methods are compared at */
#define PREV_OK 0x80   /* in vkind: the value has an NCOL_C_PREV prediction */
#define KEY_OK 0x40    /* in vkind: the value has a key (vkey) */
#define KIND_BITS 0x3f /* in vkind: the kind (< TM_SCHEMA_KINDS_MAX) */
_Static_assert(TM_SCHEMA_KINDS_MAX <= KIND_BITS + 1, "a kind fits vkind's low bits");
_Static_assert(TM_SCHEMA_FIELDS_MAX <= 32, "a field's key set fits 32 bits");

struct stream {
        uint8_t *p;
        size_t len, cap;
        int lent; /* p is a slab's: not freed, a copy when it grows */
};

/* The move-to-front ranks of a field's values in a block: value -> time
 * of its last use (hash, open addressing), and a mark at each value's
 * last use among the times 1..n (ncol_marks.h). A value's rank is the
 * number of marks after its time. A slot holds only the time, base + t
 * (t from 1), the value's key being at[t]: 4 bytes a slot keep the hash
 * in the cache. A slot whose time is at most the base is empty, so a
 * reset moves the base instead of clearing the table. */
struct mtf {
        uint32_t *slot;
        size_t hcap, hmax;   /* in use, allocated: powers of two */
        struct ncol_marks k; /* k.now: the newest time */
        uint64_t *at;        /* the value used at each time */
        uint32_t base;
        int dirty; /* slot not cleared since room() made it */
};

/* The keyed last values of a field (NCOL_C_KEYED): key -> the field's
 * value when the key was last seen, open addressing in 2^ceil(log2 2m)
 * slots for m values (so never full); a slot of another generation is
 * empty, so a reset bumps the generation instead of clearing. */
struct kslot {
        uint64_t key, val;
        uint32_t gen, unused;
};

struct keyed {
        struct kslot *slot;
        size_t hcap, hmax; /* in use, allocated: powers of two */
        uint32_t gen;
        uint64_t *vkey; /* [vcap]: each value's key */
        size_t vcap;
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
        uint64_t *vals;                                        /* one field's values */
        uint64_t *vprev;                                       /* their NCOL_C_PREV predictions */
        uint8_t *vkind; /* their kinds; PREV_OK: vprev holds one */
        struct mtf m;
        struct pred p;
        struct keyed kt;
        /* this block's plan: order[j] the j-th field decoded, rank[f]
         * field f's place in it, keys[f] f's key fields (bit g: field g) */
        uint8_t order[TM_SCHEMA_FIELDS_MAX], rank[TM_SCHEMA_FIELDS_MAX];
        uint32_t keys[TM_SCHEMA_FIELDS_MAX];
        uint64_t done; /* decoding: bit f, field f is decoded */
        /* ncol_ws_plan's: the plan every block takes (fixed), and whether
         * keys are used whatever their size (always) */
        uint8_t fix_order[TM_SCHEMA_FIELDS_MAX];
        uint32_t fix_keys[TM_SCHEMA_FIELDS_MAX];
        int fixed, always;
        /* a method's streams A, B, C and (a keyed field's) D */
        struct stream st[NCOL_M_N][4], var, kind, section, out, z;
        struct stream dec[3]; /* a field's decompressed streams */
        struct ncol_heap_map hm;
        struct ncol_heap *heap; /* method 5's model, when hm.ok */
        struct stream hst[3];   /* method 5's streams */
        int heaped;             /* this block's addresses took method 5 */
        ZSTD_CCtx *cc;
        ZSTD_DCtx *dc;
        uint8_t *slab;  /* what room() carved the columns and arrays from */
        uint8_t *sslab; /* what dec[] and c.var[] are lent from (stream_room) */
        size_t sslab_cap;
};

static int grow(struct stream *s, size_t n)
{
        if (n <= s->cap)
                return 0;
        size_t c = n < 4096 ? 4096 : n + n / 2;
        uint8_t *p = s->lent ? malloc(c) : realloc(s->p, c);
        if (!p)
                return -ENOMEM;
        if (s->lent && s->len)
                memcpy(p, s->p, s->len);
        s->lent = 0;
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
        free(w->slab);
        w->slab = NULL;
        for (unsigned f = 0; f < TM_SCHEMA_FIELDS_MAX; f++)
                w->c.col[f] = w->c.off[f] = NULL;
        ncol_marks_free(&w->m.k);
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
        for (unsigned i = 0; i < NCOL_M_N; i++)
                for (unsigned k = 0; k < 4; k++)
                        free(w->st[i][k].p);
        for (unsigned k = 0; k < 3; k++) {
                if (!w->dec[k].lent)
                        free(w->dec[k].p);
                free(w->hst[k].p);
        }
        free(w->sslab);
        ncol_heap_free(w->heap);
        free(w->kt.slot);
        free(w->kt.vkey);
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

/* The next part of n bytes at *at of a slab at base (NULL: *at only
 * counted), 64-byte aligned. */
static void *slab_part(uint8_t *base, size_t *at, size_t n)
{
        void *p = base ? base + *at : NULL;
        *at += (n + 63) & ~(size_t)63;
        return p;
}

/* The columns and the values' arrays for n records, and the ranks' hash
 * of h slots, carved from the slab at base (NULL: only its size, the
 * return). What only some blocks touch (the NCOL_C_PREV predictions, the
 * ranks) comes last: a huge page of the slab that no block writes is
 * never faulted in (1 of a heap trace's 4). */
static size_t slab_carve(struct ncol_ws *w, uint8_t *base, size_t n, size_t h)
{
        size_t at = 0;
        w->c.kind = slab_part(base, &at, n);
        w->c.section = slab_part(base, &at, n);
        w->vkind = slab_part(base, &at, n);
        w->vals = slab_part(base, &at, n * sizeof *w->vals);
        for (unsigned f = 0; f < w->s.nfields; f++) {
                w->c.col[f] = slab_part(base, &at, n * sizeof(uint64_t));
                if (w->s.field[f].type >= TM_FT_TEXT)
                        w->c.off[f] = slab_part(base, &at, n * sizeof(uint64_t));
        }
        w->vprev = slab_part(base, &at, n * sizeof *w->vprev);
        w->m.at = slab_part(base, &at, (n + 1) * sizeof *w->m.at);
        w->m.slot = slab_part(base, &at, h * sizeof *w->m.slot);
        return at;
}

/* Columns and move-to-front room for n records: one slab on huge pages
 * (tm_huge.h), as a fresh daemon's first block (a fresh mount's tail)
 * otherwise took a page fault every 4 KiB of them, more time than its
 * decoding. */
static int room(struct ncol_ws *w, size_t n)
{
        if (w->cap >= n)
                return 0;
        cols_free(w);
        size_t h = 16;
        while (h < 2 * n)
                h <<= 1;
        size_t bytes = tm_huge_round(slab_carve(w, NULL, n, h));
        w->slab = tm_huge_alloc(bytes);
        if (!w->slab || ncol_marks_alloc(&w->m.k, n) < 0) {
                cols_free(w);
                return -ENOMEM;
        }
        slab_carve(w, w->slab, n, h);
        w->m.dirty = 1; /* cleared by the first mtf_reset: untouched by blocks without ranks */
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
        if (m->dirty || m->base + (uint64_t)m->k.now + n + 1 > UINT32_MAX) {
                m->dirty = 0;
                memset(m->slot, 0, m->hmax * sizeof *m->slot);
                m->base = 0;
        } else {
                m->base += m->k.now;
        }
        ncol_marks_reset(&m->k, n);
}

static size_t mtf_hash(const struct mtf *m, uint64_t v)
{
        return (size_t)((v * 0x9E3779B97F4A7C15ull) >> 32) & (m->hcap - 1);
}

static size_t mtf_slot(const struct mtf *m, uint64_t v)
{
        size_t i = mtf_hash(m, v);
        while (m->slot[i] > m->base && m->at[m->slot[i] - m->base] != v)
                i = (i + 1) & (m->hcap - 1);
        return i;
}

/* The time (from 1) of slot's value's last use; 0: not used yet. */
static uint32_t mtf_time(const struct mtf *m, size_t slot)
{
        uint32_t t = m->slot[slot];
        return t > m->base ? t - m->base : 0;
}

/* v used now. */
static void mtf_use(struct mtf *m, size_t slot, uint64_t v)
{
        uint32_t t = ++m->k.now, old = mtf_time(m, slot);
        if (old)
                ncol_marks_flip(&m->k, old, -1);
        m->slot[slot] = m->base + t;
        m->at[t] = v;
        ncol_marks_flip(&m->k, t, 1);
}

/* ---- keyed last values ---- */

/* The table reset for m values (and vkey room for them). */
static int kt_reset(struct keyed *t, size_t m)
{
        size_t h = 16;
        while (h < 2 * m)
                h <<= 1;
        if (h > t->hmax) {
                free(t->slot);
                t->slot = calloc(h, sizeof *t->slot);
                t->hmax = t->slot ? h : 0;
                t->gen = 0;
                if (!t->slot)
                        return -ENOMEM;
        }
        if (m > t->vcap) {
                free(t->vkey);
                t->vkey = malloc(m * sizeof *t->vkey);
                t->vcap = t->vkey ? m : 0;
                if (!t->vkey)
                        return -ENOMEM;
        }
        t->hcap = h;
        if (++t->gen == 0) { /* the generations wrapped: clear */
                memset(t->slot, 0, t->hmax * sizeof *t->slot);
                t->gen = 1;
        }
        return 0;
}

static inline size_t kt_hash(const struct keyed *t, uint64_t key)
{
        return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (t->hcap - 1);
}

/* key's slot: its own, or the empty one it would take. */
static inline size_t kt_slot(const struct keyed *t, uint64_t key)
{
        size_t i = kt_hash(t, key);
        while (t->slot[i].gen == t->gen && t->slot[i].key != key)
                i = (i + 1) & (t->hcap - 1);
        return i;
}

/* The keyed prediction at slot i: the value last seen with its key, or
 * last when there is none. */
static inline uint64_t kt_get(const struct keyed *t, size_t i, uint64_t last)
{
        return t->slot[i].gen == t->gen ? t->slot[i].val : last;
}

/* Does slot i hold a value (its key was seen before)? */
static inline int kt_has(const struct keyed *t, size_t i)
{
        return t->slot[i].gen == t->gen;
}

static inline void kt_put(struct keyed *t, size_t i, uint64_t key, uint64_t v)
{
        t->slot[i] = (struct kslot){key, v, t->gen, 0};
}

/* The key of a record of kind k whose values are v (by position) for
 * key set keys: its value of the lowest key field its kind has. 0 and
 * *key, or -1 when it has none. */
static inline int key_of(const struct ncol_ws *w, unsigned k, uint32_t keys, const uint64_t *v,
                         uint64_t *key)
{
        uint64_t kk = w->has[k] & keys;
        if (!kk)
                return -1;
        *key = v[w->pos[k][__builtin_ctzll(kk)]];
        return 0;
}

/* order (a permutation of w's fields) and keys (per number field a set
 * of number fields before it in order) checked, rank filled. 0; 1:
 * order[*bad] is out of range or repeats; 2: field *bad's keys are not
 * allowed. */
static int plan_check(const struct ncol_ws *w, const uint8_t *order, const uint32_t *keys,
                      uint8_t *rank, unsigned *bad)
{
        unsigned nf = w->s.nfields;
        uint64_t seen = 0;
        for (unsigned j = 0; j < nf; j++) {
                if (order[j] >= nf || (seen >> order[j] & 1)) {
                        *bad = j;
                        return 1;
                }
                seen |= 1ull << order[j];
                rank[order[j]] = (uint8_t)j;
        }
        for (unsigned f = 0; f < nf; f++) {
                uint64_t k = keys[f];
                if (k && w->s.field[f].type >= TM_FT_TEXT) {
                        *bad = f;
                        return 2;
                }
                for (unsigned g = 0; k && g < TM_SCHEMA_FIELDS_MAX; g++) {
                        if (!(k >> g & 1))
                                continue;
                        if (g >= nf || w->s.field[g].type >= TM_FT_TEXT || rank[g] >= rank[f]) {
                                *bad = f;
                                return 2;
                        }
                }
        }
        return 0;
}

int ncol_ws_plan(struct ncol_ws *w, const uint8_t *order, const uint32_t *keys, int always)
{
        uint8_t rank[TM_SCHEMA_FIELDS_MAX];
        unsigned bad;
        if (!order) {
                w->fixed = w->always = 0;
                return 0;
        }
        if (plan_check(w, order, keys, rank, &bad))
                return -EINVAL;
        memcpy(w->fix_order, order, w->s.nfields);
        memcpy(w->fix_keys, keys, w->s.nfields * sizeof *keys);
        w->fixed = 1;
        w->always = always;
        return 0;
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
static int heap_order_ok(const struct ncol_ws *w);
static int heap_decode(struct ncol_ws *w, unsigned f, int meth);

/* ---- encoding ---- */

/* The m values of a field in w->vals (kinds in w->vkind) by method
 * meth into w->st[meth]; keyed (method 3): with code NCOL_C_KEYED, the
 * keys in w->kt.vkey. */
static int enc_method(struct ncol_ws *w, int meth, size_t m, int keyed)
{
        struct stream *a = &w->st[meth][0], *b = &w->st[meth][1], *c = &w->st[meth][2];
        struct stream *d = &w->st[meth][3];
        a->len = b->len = c->len = d->len = 0;
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
        if (keyed && kt_reset(&w->kt, m) < 0)
                return -ENOMEM;
        /* a keyed field's code 255 is NCOL_C_KEYED, so one rank code fewer */
        uint32_t rank_codes = NCOL_RANK_CODES - (keyed != 0);
        for (size_t i = 0; i < m && rc == 0; i++) {
                uint64_t v = w->vals[i], pr[NCOL_C_MISS];
                unsigned k = w->vkind[i] & KIND_BITS, code = NCOL_C_MISS;
                int kok = keyed && (w->vkind[i] & KEY_OK);
                size_t ks = kok ? kt_slot(&w->kt, w->kt.vkey[i]) : 0;
                if (keyed && (kok ? kt_get(&w->kt, ks, p->last) : p->last) == v) {
                        code = NCOL_C_KEYED; /* first: one code where the key tells */
                } else {
                        /* a keyed field takes no table's code (FCM1 .. DFCM3) and
                         * no rank, so that its decoder keeps neither tables nor the
                         * ranks' structure (a third of its time on PTF's formats;
                         * where the key does not tell, they hit by chance) */
                        unsigned skip = keyed ? 0x78u : 0;
                        predict(p, k, w->vkind[i] & PREV_OK ? w->vprev[i] : p->last, pr);
                        for (unsigned j = 0; j < NCOL_C_MISS; j++)
                                if (pr[j] == v && !(skip >> j & 1)) {
                                        code = j;
                                        break;
                                }
                }
                size_t slot = mtf_slot(&w->m, v);
                if (code == NCOL_C_MISS && !keyed && mtf_time(&w->m, slot)) {
                        uint32_t r = ncol_marks_after(&w->m.k, mtf_time(&w->m, slot));
                        if (r < rank_codes)
                                code = NCOL_C_RANK0 + r;
                        else {
                                code = NCOL_C_RANK;
                                rc = put_varint(c, r - rank_codes);
                        }
                }
                if (code == NCOL_C_MISS)
                        rc = put_varint(b, zz(v - p->last));
                uint8_t cb = (uint8_t)code;
                if (rc == 0) /* D: the codes of values whose key was seen */
                        rc = put(kok && kt_has(&w->kt, ks) ? d : a, &cb, 1);
                mtf_use(&w->m, slot, v);
                pred_update(p, k, v, ~0u);
                if (kok)
                        kt_put(&w->kt, ks, w->kt.vkey[i], v);
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

/* Field f's values and bytes of records r[0..n) gathered (with the
 * NCOL_C_PREV predictions of fields before it in w->rank, and the keys of
 * w->keys[f]); its count. */
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
                        if (kp && j < kp->nfields && w->rank[kp->field[j]] < w->rank[f]) {
                                w->vprev[k] = r[i - 1].v[j];
                                w->vkind[k] |= PREV_OK;
                        }
                        if (w->keys[f] &&
                            key_of(w, r[i].kind, w->keys[f], r[i].v, &w->kt.vkey[k]) == 0)
                                w->vkind[k] |= KEY_OK;
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

/* The method of methods 0..4 (and 3 keyed, when keyed) whose streams
 * of the m values in w->vals are smallest at PICK_LEVEL: *best, *kbest
 * (it is the keyed one), *best_size (0 when m is 0). */
static int pick(struct ncol_ws *w, size_t m, int keyed, int *best, int *kbest, size_t *best_size)
{
        *best = NCOL_M_PLAIN;
        *kbest = 0;
        *best_size = m ? SIZE_MAX : 0;
        for (int t = 0; t < NCOL_M_N + (keyed != 0) && m; t++) {
                int meth = t < NCOL_M_N ? t : NCOL_M_PRED;
                int rc = enc_method(w, meth, m, t == NCOL_M_N);
                if (rc < 0)
                        return rc;
                size_t sz = 0;
                for (int k = 0; k < 4; k++)
                        sz += stored_size(w, &w->st[meth][k], PICK_LEVEL);
                if (sz < *best_size) {
                        *best_size = sz;
                        *best = meth;
                        *kbest = t == NCOL_M_N;
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
        int best = NCOL_M_PLAIN, kbest = 0;
        size_t best_size = SIZE_MAX;
        if ((rc = pick(w, m, w->keys[f] != 0, &best, &kbest, &best_size)) < 0)
                return rc;
        if (w->always && w->keys[f] && m) {
                best = NCOL_M_PRED;
                kbest = 1;
        }
        struct stream *st = w->st[best];
        if (f == w->hm.addr && w->hm.ok && heap_order_ok(w)) {
                /* method 5 codes the new addresses too: against both fields' best */
                size_t mn, hsize, nbest = 0;
                int nm, nk;
                if (w->hm.naddr < TM_SCHEMA_FIELDS_MAX &&
                    ((rc = gather(w, r, n, w->hm.naddr, &mn)) < 0 ||
                     (rc = pick(w, mn, w->keys[w->hm.naddr] != 0, &nm, &nk, &nbest)) < 0))
                        return rc;
                if ((rc = heap_encode(w, r, n, &hsize)) < 0)
                        return rc;
                /* and only when its streams fit a reader's limit (8 bytes a miss) */
                size_t max = 10 * n + 16;
                w->heaped = m && hsize < best_size + nbest && w->hst[0].len <= max &&
                            w->hst[1].len <= max && w->hst[2].len <= max;
                if (w->heaped) {
                        best = NCOL_M_HEAP;
                        kbest = 0;
                        st = w->hst;
                } else if ((rc = gather(w, r, n, f, &m)) < 0) {
                        return rc;
                }
        } else if (f == w->hm.naddr && w->heaped) {
                best = NCOL_M_HEAPED;
                kbest = 0;
                for (int k = 0; k < 3; k++)
                        w->st[NCOL_M_PLAIN][k].len = 0;
                st = w->st[NCOL_M_PLAIN];
        }
        if (!kbest)
                w->keys[f] = 0;
        if (m && best < NCOL_M_N && (rc = enc_method(w, best, m, kbest)) < 0)
                return rc;
        *method = (uint8_t)best;
        for (int k = 0; k < 3; k++) {
                if (!m)
                        st[k].len = 0;
                if ((rc = emit(w, &st[k], level, table + (size_t)k * TMN_STREAM_ENTRY)) < 0)
                        return rc;
        }
        return emit(w, kbest ? &st[3] : &w->var, level, table + 3 * TMN_STREAM_ENTRY);
}

/* ---- the plan: the fields' order and keys ---- */

#define PLAN_WIN 1024 /* records a window of the plan's sample */
#define PLAN_WINS 8   /* windows, spread over the block */
#define PLAN_KEYS 3   /* key fields of a field at most */

/* Over the plan's sample of records r[0..n): of the values of field f
 * that neither its last value nor its last in a record of the kind
 * predicts, how many the value last seen with the key under keys does
 * (the return; keys 0: how many there are); *all, of all values. w->kt
 * reset for the sample before. */
static size_t plan_hits(struct ncol_ws *w, const struct tm_rec *r, size_t n, unsigned f,
                        uint32_t keys, size_t *all)
{
        size_t step = n > PLAN_WIN * PLAN_WINS ? n / PLAN_WINS : n, hits = 0;
        *all = 0;
        size_t win = n > PLAN_WIN * PLAN_WINS ? PLAN_WIN : n;
        uint64_t last = 0, klast[TM_SCHEMA_KINDS_MAX] = {0}, key;
        for (size_t s0 = 0; s0 + win <= n; s0 += step)
                for (size_t i = s0; i < s0 + win; i++) {
                        unsigned k = r[i].kind;
                        if (!(w->has[k] >> f & 1))
                                continue;
                        uint64_t v = r[i].v[w->pos[k][f]];
                        int base = v == last || v == klast[k];
                        last = klast[k] = v;
                        if (!keys) {
                                hits += !base;
                                continue;
                        }
                        if (key_of(w, k, keys, r[i].v, &key) < 0)
                                continue;
                        size_t sl = kt_slot(&w->kt, key);
                        int hit = kt_get(&w->kt, sl, v + 1) == v;
                        hits += hit && !base;
                        *all += hit;
                        kt_put(&w->kt, sl, key, v);
                }
        return hits;
}

/* Fields g with a path from f in preds (bit g of preds[h]: g before h),
 * f among them. */
static uint64_t plan_after(const uint32_t *preds, unsigned nf, unsigned f)
{
        uint64_t after = 1ull << f, was = 0;
        while (after != was) {
                was = after;
                for (unsigned g = 0; g < nf; g++)
                        if (preds[g] & after)
                                after |= 1ull << g;
        }
        return after;
}

/* The key set of field f by measurement over the sample: of the key
 * fields that share a kind with f and predict enough values that the
 * cheap predictors miss (plan_hits), the one that predicts most, then
 * others while each adds enough hits (a kind's key, whose values' codes
 * go to D); *gain the set's hits where the cheap predictors miss. */
static int plan_keys(struct ncol_ws *w, const struct tm_rec *r, size_t n, uint64_t kinds,
                     unsigned f, size_t sample, uint32_t *keys, size_t *gain)
{
        unsigned nf = w->s.nfields, nc = 0, cand[TM_SCHEMA_FIELDS_MAX];
        size_t hit[TM_SCHEMA_FIELDS_MAX];
        *keys = 0;
        *gain = 0;
        if (w->s.field[f].type >= TM_FT_TEXT)
                return 0;
        if (kt_reset(&w->kt, sample) < 0)
                return -ENOMEM;
        size_t all, miss = plan_hits(w, r, n, f, 0, &all), least = miss / 32 > 8 ? miss / 32 : 8;
        size_t have = 0;
        if (miss < least)
                return 0;
        for (unsigned g = 0; g < nf; g++) {
                int shared = 0;
                for (unsigned k = 0; k < w->s.nkinds && !shared; k++)
                        shared = (kinds >> k & 1) && (w->has[k] >> f & 1) && (w->has[k] >> g & 1);
                if (g == f || !shared || w->s.field[g].type >= TM_FT_TEXT)
                        continue;
                if (kt_reset(&w->kt, sample) < 0)
                        return -ENOMEM;
                size_t h = plan_hits(w, r, n, f, 1u << g, &all);
                if (all < least)
                        continue;
                h = (h << 24) + all; /* sorted by both */
                unsigned j = nc++;   /* by hits, most first */
                for (; j && hit[j - 1] < h; j--) {
                        hit[j] = hit[j - 1];
                        cand[j] = cand[j - 1];
                }
                hit[j] = h;
                cand[j] = g;
        }
        for (unsigned c = 0, taken = 0; c < nc && taken < PLAN_KEYS; c++) {
                uint32_t more = *keys | 1u << cand[c];
                if (kt_reset(&w->kt, sample) < 0)
                        return -ENOMEM;
                size_t h = plan_hits(w, r, n, f, more, &all);
                if (*keys ? all >= have + least : h >= least) {
                        *keys = more;
                        *gain = h;
                        have = all;
                        taken++;
                }
        }
        return 0;
}

/* w->order and w->rank from w->keys: the schema's order, each field
 * moved only as late as its keys and the allocator model's order (size,
 * address, new address) need. */
static void plan_sort(struct ncol_ws *w)
{
        unsigned nf = w->s.nfields;
        uint32_t preds[TM_SCHEMA_FIELDS_MAX];
        memcpy(preds, w->keys, sizeof preds);
        const struct ncol_heap_map *hm = &w->hm;
        if (hm->ok) {
                preds[hm->addr] |= 1u << hm->size;
                if (hm->naddr < TM_SCHEMA_FIELDS_MAX)
                        preds[hm->naddr] |= 1u << hm->addr;
        }
        uint64_t placed = 0;
        for (unsigned j = 0; j < nf; j++)
                for (unsigned g = 0; g < nf; g++)
                        if (!(placed >> g & 1) && !(preds[g] & ~placed)) {
                                w->order[j] = (uint8_t)g;
                                w->rank[g] = (uint8_t)j;
                                placed |= 1ull << g;
                                break;
                        }
}

/* This block's plan into w->order, w->rank, w->keys (the key sets that
 * may pay; enc_field keeps those that do): each field's key set
 * (plan_keys), taken by gain, most first, unless it would need a field
 * both before and after another; then the fields in schema order, each
 * as early as its keys (and the allocator model: size, address, new
 * address) allow. Bounded: one sample of at most PLAN_WIN x PLAN_WINS
 * records, read at most (F + PLAN_KEYS) times a field. */
static int plan(struct ncol_ws *w, const struct tm_rec *r, size_t n)
{
        unsigned nf = w->s.nfields, bad;
        if (w->fixed) {
                memcpy(w->order, w->fix_order, nf);
                memcpy(w->keys, w->fix_keys, nf * sizeof *w->keys);
                plan_check(w, w->order, w->keys, w->rank, &bad);
                return 0;
        }
        uint32_t preds[TM_SCHEMA_FIELDS_MAX] = {0}, cand[TM_SCHEMA_FIELDS_MAX];
        size_t gain[TM_SCHEMA_FIELDS_MAX];
        const struct ncol_heap_map *hm = &w->hm;
        if (hm->ok) {
                preds[hm->addr] |= 1u << hm->size;
                if (hm->naddr < TM_SCHEMA_FIELDS_MAX)
                        preds[hm->naddr] |= 1u << hm->addr;
        }
        uint64_t kinds = 0, fields = 0;
        for (size_t i = 0; i < n; i++)
                kinds |= 1ull << r[i].kind;
        for (unsigned k = 0; k < w->s.nkinds; k++)
                fields |= kinds >> k & 1 ? w->has[k] : 0;
        size_t sample = n < PLAN_WIN * PLAN_WINS ? n : PLAN_WIN * PLAN_WINS;
        memset(w->keys, 0, sizeof w->keys);
        for (unsigned f = 0; f < nf; f++) {
                cand[f] = 0;
                gain[f] = 0;
                /* the allocator model's addresses have their own method */
                int mine = hm->ok && (f == hm->addr || f == hm->naddr);
                int rc = fields >> f & 1 && !mine
                             ? plan_keys(w, r, n, kinds, f, sample, &cand[f], &gain[f])
                             : 0;
                if (rc < 0)
                        return rc;
        }
        for (;;) { /* the largest gain left first */
                unsigned f = nf;
                for (unsigned g = 0; g < nf; g++)
                        if (cand[g] && (f == nf || gain[g] > gain[f]))
                                f = g;
                if (f == nf)
                        break;
                if (!(plan_after(preds, nf, f) & cand[f])) {
                        preds[f] |= cand[f];
                        w->keys[f] = cand[f];
                }
                cand[f] = 0;
        }
        plan_sort(w);
        return 0;
}

static int check_recs(const struct ncol_ws *w, const struct tm_rec *r, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (r[i].kind >= w->s.nkinds || r[i].section > w->s.nsections)
                        return -EINVAL;
        return 0;
}

/* The plan's key sets measured on the block's first records (the
 * plan's sample size): those whose field's method 3 is not smaller with
 * them (at PICK_LEVEL) dropped, the order made again from the others
 * (enc_field then weighs the keyed method against all, on the block). */
static int plan_measure(struct ncol_ws *w, const struct tm_rec *r, size_t n)
{
        int any = 0;
        n = n < PLAN_WIN * PLAN_WINS ? n : PLAN_WIN * PLAN_WINS;
        for (unsigned f = 0; f < w->s.nfields; f++) {
                if (!w->keys[f])
                        continue;
                size_t m, size[2] = {0, 0};
                int rc;
                if ((rc = kt_reset(&w->kt, n)) < 0 || (rc = gather(w, r, n, f, &m)) < 0)
                        return rc;
                for (int keyed = 0; keyed < 2; keyed++) {
                        if ((rc = enc_method(w, NCOL_M_PRED, m, keyed)) < 0)
                                return rc;
                        for (int k = 0; k < 4; k++)
                                size[keyed] += stored_size(w, &w->st[NCOL_M_PRED][k], PICK_LEVEL);
                }
                if (size[1] >= size[0])
                        w->keys[f] = 0;
                any = 1;
        }
        if (any)
                plan_sort(w);
        return 0;
}

/* A coding-4 block's order and the keys kept written after its methods;
 * none kept and the order the schema's: the block made coding 3. */
static void ord_put(struct ncol_ws *w, unsigned nf)
{
        uint8_t *b = w->out.p + TMN_BLK_HDR;
        int any = 0;
        for (unsigned f = 0; f < nf; f++) {
                b[1 + nf + f] = w->order[f];
                tmn_put32(b + 1 + 2 * nf + 4 * f, w->keys[f]);
                any |= w->order[f] != f || w->keys[f];
        }
        if (any)
                return;
        size_t from = TMN_BLK_HDR + 1 + 6 * (size_t)nf, to = TMN_BLK_HDR + 1 + (size_t)nf;
        memmove(w->out.p + to, w->out.p + from, w->out.len - from);
        w->out.len -= from - to;
        b[0] = NCOL_CODING;
}

int ncol_block_encode(struct ncol_ws *w, const struct tm_rec *r, size_t n, int level,
                      const uint8_t **out, size_t *len, uint8_t *methods)
{
        if (n == 0 || n > ((size_t)1 << TMN_LOG_MAX) || check_recs(w, r, n) < 0)
                return -EINVAL;
        if (room(w, n) < 0)
                return -ENOMEM;
        unsigned nf = w->s.nfields;
        int rc = plan(w, r, n);
        if (rc < 0)
                return rc;
        if (!w->fixed) /* the keys that pay, and the order they need */
                rc = plan_measure(w, r, n);
        if (rc < 0)
                return rc;
        int ord = 0; /* coding 4: an order or keys */
        for (unsigned f = 0; f < nf; f++)
                ord |= w->order[f] != f || w->keys[f];
        if (ord && kt_reset(&w->kt, n) < 0) /* room for the keys */
                return -ENOMEM;
        size_t nstreams = NS_FIELD0 + (size_t)nf * NCOL_FSTREAMS;
        size_t table = TMN_BLK_HDR + 1 + (ord ? 6 : 1) * (size_t)nf;
        w->out.len = 0;
        if (grow(&w->out, table + nstreams * TMN_STREAM_ENTRY) < 0)
                return -ENOMEM;
        w->out.len = table + nstreams * TMN_STREAM_ENTRY;
        w->out.p[TMN_BLK_HDR] = ord ? NCOL_CODING_ORD : NCOL_CODING;
        w->heaped = 0;
        w->kind.len = w->section.len = 0;
        if (grow(&w->kind, n) < 0 || grow(&w->section, n) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                w->kind.p[w->kind.len++] = (uint8_t)r[i].kind;
                if (w->s.nsections)
                        w->section.p[w->section.len++] = (uint8_t)r[i].section;
        }
        rc = emit(w, &w->kind, level, table);
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
        if (ord)
                ord_put(w, nf);
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
static int load(struct ncol_ws *w, const uint8_t *e, const uint8_t *body, size_t blen, size_t *at,
                size_t max, struct stream *dst)
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

#define MTF_LAG 16  /* values decoded ahead of the ranks' structure */
#define KT_AHEAD 16 /* keyed slots fetched this many values ahead */
#define MTF_NEAR 16 /* ranks read with those values not used yet */

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
        for (uint32_t t = m->k.marks ? m->k.now : 0; t; t = ncol_marks_older(&m->k, t)) {
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

#define CODES_255 31 /* codes_of's bit of code 255 (a rank, or NCOL_C_KEYED) */

/* The codes of the hit-code stream c[0..n): bit c for a code c below
 * NCOL_C_RANK, bit NCOL_C_RANK for any rank below 245, bit CODES_255. */
static unsigned codes_of(const uint8_t *c, size_t n)
{
        unsigned u = 0;
        for (size_t i = 0; i < n; i++)
                u |= 1u << (c[i] < NCOL_C_RANK ? c[i] : c[i] == 255 ? CODES_255 : NCOL_C_RANK);
        return u;
}

/* The 8 x 8 bytes r[k] (byte j: plane k's byte of value j) transposed
 * in place (r[j]: value j, its byte k from plane k), in three rounds of
 * swapping blocks (4 x 4, 2 x 2, 1 x 1 bytes): eight values of method 4 in
 * 72 operations, where gathering them a byte at a time took 8 loads a
 * value from 8 places m bytes apart. */
static inline void planes8(uint64_t r[8])
{
#define SWAP(a, b, sh, mask)                                                                       \
        do {                                                                                       \
                uint64_t t_ = ((r[a] >> (sh)) ^ r[b]) & (mask);                                    \
                r[b] ^= t_;                                                                        \
                r[a] ^= t_ << (sh);                                                                \
        } while (0)
        SWAP(0, 4, 32, 0x00000000ffffffffull);
        SWAP(1, 5, 32, 0x00000000ffffffffull);
        SWAP(2, 6, 32, 0x00000000ffffffffull);
        SWAP(3, 7, 32, 0x00000000ffffffffull);
        SWAP(0, 2, 16, 0x0000ffff0000ffffull);
        SWAP(1, 3, 16, 0x0000ffff0000ffffull);
        SWAP(4, 6, 16, 0x0000ffff0000ffffull);
        SWAP(5, 7, 16, 0x0000ffff0000ffffull);
        SWAP(0, 1, 8, 0x00ff00ff00ff00ffull);
        SWAP(2, 3, 8, 0x00ff00ff00ff00ffull);
        SWAP(4, 5, 8, 0x00ff00ff00ff00ffull);
        SWAP(6, 7, 8, 0x00ff00ff00ff00ffull);
#undef SWAP
}

/* Field f's m values decoded by method meth from w->dec into w->vals
 * (codes: codes_of its hit codes, for NCOL_M_PRED; keyed: with code
 * NCOL_C_KEYED, the keys in w->kt.vkey, w->kt reset). */
static int dec_values(struct ncol_ws *w, int meth, size_t m, unsigned codes,
                      const struct stream *keyed)
{
        struct rd a = {w->dec[0].p, w->dec[0].len, 0}, b = {w->dec[1].p, w->dec[1].len, 0},
                  c = {w->dec[2].p, w->dec[2].len, 0}, d = {NULL, 0, 0};
        if (keyed)
                d = (struct rd){keyed->p, keyed->len, 0};
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
                size_t i = 0;
                for (; i + 8 <= m; i += 8) {
                        uint64_t r[8];
                        for (int k = 0; k < 8; k++)
                                r[k] = tmn_get64(a.p + k * m + i);
                        planes8(r);
                        for (int k = 0; k < 8; k++)
                                w->vals[i + k] = last += unzz(r[k]);
                }
                for (; i < m; i++) {
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
                int ranks = (codes >> NCOL_C_RANK & 1) || (!keyed && (codes >> CODES_255 & 1));
                size_t used = 0;
                if (ranks)
                        mtf_reset(&w->m, m);
                for (size_t i = 0; i < m; i++) {
                        unsigned k = w->vkind[i] & KIND_BITS;
                        uint64_t v, x;
                        int kok = keyed && (w->vkind[i] & KEY_OK);
                        /* the keys are known ahead: their slots fetched early (random
                         * objects' keys miss the cache) */
                        if (keyed && i + KT_AHEAD < m)
                                __builtin_prefetch(
                                    &w->kt.slot[kt_hash(&w->kt, w->kt.vkey[i + KT_AHEAD])]);
                        size_t ks = kok ? kt_slot(&w->kt, w->kt.vkey[i]) : 0;
                        struct rd *cs = kok && kt_has(&w->kt, ks) ? &d : &a;
                        if (cs->pos >= cs->len)
                                return -1;
                        unsigned code = cs->p[cs->pos++];
                        if (keyed && code == NCOL_C_KEYED) {
                                v = kok ? kt_get(&w->kt, ks, p->last) : p->last;
                        } else if (code < NCOL_C_MISS) {
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
                                        if (get_varint(&c, &x) < 0 || x >= w->m.k.marks)
                                                return -1;
                                        x += NCOL_RANK_CODES - (keyed != NULL);
                                } else {
                                        x = code - NCOL_C_RANK0;
                                }
                                if (x >= w->m.k.marks)
                                        return -1;
                                v = w->m.at[ncol_marks_nth(&w->m.k, (uint32_t)x)];
                        }
                        pred_update(p, k, v, codes);
                        if (kok)
                                kt_put(&w->kt, ks, w->kt.vkey[i], v);
                        w->vals[i] = v;
                        if (ranks) {
                                __builtin_prefetch(&w->m.slot[mtf_hash(&w->m, v)]);
                                if (i + 1 - used > MTF_LAG)
                                        mtf_catch_up(&w->m, w->vals, &used, used + 1);
                        }
                }
        }
        return a.pos == a.len && b.pos == b.len && c.pos == c.len && d.pos == d.len ? 0 : -1;
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
                int rc =
                    load(w, tab + (size_t)k * TMN_STREAM_ENTRY, body, blen, at, max, &w->dec[k]);
                if (rc)
                        return rc;
        }
        /* D: a variable field's bytes, or a keyed field's codes */
        uint32_t keys = w->keys[f];
        struct stream v = {w->c.var[f], 0, w->var_cap[f], 1};
        int rc = load(w, tab + 3 * TMN_STREAM_ENTRY, body, blen, at,
                      fd->type >= TM_FT_TEXT ? NCOL_VAR_MAX
                      : keys                 ? max
                                             : 0,
                      &v);
        w->c.var[f] = v.p;
        w->var_cap[f] = v.cap;
        if (rc)
                return rc;
        if (meth == NCOL_M_HEAP || meth == NCOL_M_HEAPED)
                return heap_decode(w, f, meth);
        if (w->heaped && f == w->hm.naddr)
                return -1;
        /* the codes read (a predicted field's); the NCOL_C_PREV predictions
         * are worked out only when that code is among them, the keys when
         * the field has them */
        unsigned codes = meth == NCOL_M_PRED ? codes_of(w->dec[0].p, w->dec[0].len) : 0;
        if (keys)
                codes |= codes_of(v.p, v.len);
        if (keys && (rc = kt_reset(&w->kt, n)) < 0)
                return rc;
        if ((codes & 1u << NCOL_C_PREV) || keys) {
                for (uint32_t i = 0; i < n; i++) {
                        unsigned k = w->c.kind[i];
                        if (!(w->has[k] >> f & 1))
                                continue;
                        w->vkind[m] = (uint8_t)k;
                        int j = w->pos[k][f];
                        const struct tm_kind *kp = i ? &w->s.kind[w->c.kind[i - 1]] : NULL;
                        if (kp && j < kp->nfields && w->rank[kp->field[j]] < w->rank[f]) {
                                w->vprev[m] = w->c.col[kp->field[j]][i - 1];
                                w->vkind[m] |= PREV_OK;
                        }
                        uint64_t kk = w->has[k] & keys;
                        if (kk) {
                                w->kt.vkey[m] = w->c.col[__builtin_ctzll(kk)][i];
                                w->vkind[m] |= KEY_OK;
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
        if (meth >= NCOL_M_N ||
            (m == 0 && (w->dec[0].len || w->dec[1].len || w->dec[2].len || (keys && v.len))) ||
            dec_values(w, meth, m, codes, keys ? &v : NULL) < 0)
                return -1;
        uint64_t off = 0;
        size_t j = 0;
        uint64_t *col = w->c.col[f];
        const uint64_t *vals = w->vals;
        const uint8_t *kind = w->c.kind;
        if (fd->type < TM_FT_TEXT && m == n) { /* every record has the field */
                memcpy(col, vals, n * sizeof *col);
                return v.len && !keys ? -1 : 0;
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
        return off == (keys ? 0 : v.len) ? 0 : -1;
}

/* Bytes a stream of table entry e may take: its raw length, at most max
 * (load() rejects more), at least 1 (load() asks for 1 when it is
 * empty), 64-byte aligned. */
static size_t stream_bytes(const uint8_t *e, size_t max)
{
        size_t raw = tmn_get32(e + 5);
        raw = raw < max ? raw : max;
        return (raw + 64) & ~(size_t)63;
}

/* The bytes of a stream slab for streams of all bytes, cap the slab's
 * now (0: none yet). A quarter more than asked, and on growth at least
 * half as much again: blocks of one trace differ by a few percent, and a
 * slab made exactly as large as each block that needs more was made
 * anew by 30 of a heap trace's 41 blocks, every one new memory (1,541
 * page faults of the 3,434 of its `cat`), and a second huge page for
 * Java's. What a block does not write stays untouched, and so costs no
 * page; the headroom keeps to the side of 1 MiB that all is on, so that
 * a first block (a fresh mount's tail) takes the pages it took. */
static size_t sslab_want(size_t all, size_t cap)
{
        size_t want = all + all / 4;
        if (cap && want < cap + cap / 2)
                want = cap + cap / 2;
        if (all < TM_HUGE_PAGE / 2 && want >= TM_HUGE_PAGE / 2)
                want = TM_HUGE_PAGE / 2 - 64;
        return tm_huge_round(want);
}

/* The decoded streams of the block of n records whose stream table is
 * tab (w->keys read): the fields' streams A, B and C (w->dec, each as
 * large as the largest field's) and every field's stream D (c.var[f],
 * which the columns point into) lent from one slab on huge pages
 * (tm_huge.h), as large as the table says (bounded as load() bounds
 * them) and some (sslab_want): a fresh daemon's first block otherwise
 * took a page fault every 4 KiB of them as zstd wrote them. The slab
 * grows, never shrinks. */
static int stream_room(struct ncol_ws *w, const uint8_t *tab, uint32_t n)
{
        size_t max = 10 * (size_t)n + 16, abc[3] = {64, 64, 64}, d[TM_SCHEMA_FIELDS_MAX], all = 0;
        for (unsigned f = 0; f < w->s.nfields; f++) {
                const uint8_t *e = tab + (NS_FIELD0 + (size_t)f * NCOL_FSTREAMS) * TMN_STREAM_ENTRY;
                for (unsigned k = 0; k < 3; k++) {
                        size_t b = stream_bytes(e + k * TMN_STREAM_ENTRY, max);
                        abc[k] = b > abc[k] ? b : abc[k];
                }
                d[f] = stream_bytes(e + 3 * TMN_STREAM_ENTRY, w->s.field[f].type >= TM_FT_TEXT
                                                                  ? NCOL_VAR_MAX
                                                              : w->keys[f] ? max
                                                                           : 0);
                all += d[f];
        }
        all += abc[0] + abc[1] + abc[2];
        if (all > w->sslab_cap) {
                free(w->sslab);
                w->sslab_cap = sslab_want(all, w->sslab_cap);
                if (!(w->sslab = tm_huge_alloc(w->sslab_cap))) {
                        w->sslab_cap = 0;
                        for (unsigned k = 0; k < 3; k++)
                                if (w->dec[k].lent)
                                        w->dec[k] = (struct stream){0};
                        memset(w->c.var, 0, sizeof w->c.var);
                        memset(w->var_cap, 0, sizeof w->var_cap);
                        return -ENOMEM;
                }
        }
        uint8_t *p = w->sslab;
        for (unsigned k = 0; k < 3; k++) {
                if (!w->dec[k].lent)
                        free(w->dec[k].p);
                w->dec[k] = (struct stream){p, 0, abc[k], 1};
                p += abc[k];
        }
        for (unsigned f = 0; f < w->s.nfields; f++) {
                w->c.var[f] = p;
                w->var_cap[f] = d[f];
                p += d[f];
        }
        return 0;
}

/* The order and keys of the block body b (raw offset o) into w: coding
 * 4's, checked (plan_check; keys only on a predicted field), or schema
 * order and none. 0, or -EIO with err. */
static int ord_get(struct ncol_ws *w, const uint8_t *b, unsigned long long o, struct tm_err *err)
{
        unsigned nf = w->s.nfields, bad;
        for (unsigned f = 0; f < nf; f++) {
                w->order[f] = w->rank[f] = (uint8_t)f;
                w->keys[f] = 0;
        }
        if (b[0] != NCOL_CODING_ORD)
                return 0;
        memcpy(w->order, b + 1 + nf, nf);
        for (unsigned f = 0; f < nf; f++)
                w->keys[f] = tmn_get32(b + 1 + 2 * nf + 4 * f);
        int rc = plan_check(w, w->order, w->keys, w->rank, &bad);
        if (rc == 1)
                return tm_err_set(err, -EIO,
                                  "raw offset %llu: block field order byte %u (%u) is not a "
                                  "field or repeats one",
                                  o, bad, w->order[bad]);
        for (unsigned f = 0; f < nf && rc == 0; f++)
                if (w->keys[f] && b[1 + f] != NCOL_M_PRED) {
                        rc = 2;
                        bad = f;
                }
        if (rc == 2)
                return tm_err_set(err, -EIO,
                                  "raw offset %llu: field %u's keys 0x%x are not number fields "
                                  "decoded before it (or its method %u has none)",
                                  o, bad, w->keys[bad], b[1 + bad]);
        return 0;
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
        int ord = body[0] == NCOL_CODING_ORD;
        size_t nstreams = NS_FIELD0 + (size_t)nf * NCOL_FSTREAMS, pre = 1 + (ord ? 6 : 1) * nf;
        size_t at = pre + nstreams * TMN_STREAM_ENTRY;
        if (blen < at || (body[0] != NCOL_CODING && !ord))
                return tm_err_set(err, -EIO, "raw offset %llu: not a schema-2 block", o);
        int rc = ord_get(w, body, o, err);
        if (rc < 0)
                return rc;
        if (room(w, n) < 0)
                return tm_err_set(err, -ENOMEM, "out of memory");
        w->c.nrec = n;
        w->heaped = 0;
        w->done = 0;
        const uint8_t *tab = body + pre;
        struct stream ks = {w->c.kind, 0, n, 1}, ss = {w->c.section, 0, n, 1};
        rc = load(w, tab, body, blen, &at, n, &ks);
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
        /* the fields' streams lie in schema order; they decode in w->order */
        size_t start[TM_SCHEMA_FIELDS_MAX];
        for (unsigned f = 0; f < nf && rc == 0; f++) {
                start[f] = at;
                for (unsigned k = 0; k < NCOL_FSTREAMS; k++) {
                        const uint8_t *e =
                            tab + (NS_FIELD0 + (size_t)f * NCOL_FSTREAMS + k) * TMN_STREAM_ENTRY;
                        if (tmn_get32(e + 1) > blen - at)
                                rc = -1;
                        else
                                at += tmn_get32(e + 1);
                }
        }
        if (rc == 0)
                rc = stream_room(w, tab, n);
        for (unsigned j = 0; j < nf && rc == 0; j++) {
                unsigned f = w->order[j];
                size_t a = start[f];
                rc = dec_field(w, f, body[1 + f],
                               tab + (NS_FIELD0 + (size_t)f * NCOL_FSTREAMS) * TMN_STREAM_ENTRY,
                               body, blen, &a);
                w->done |= 1ull << f;
        }
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

/* Does the block's order put the size before the address, and that
 * before the new address (method 5's)? */
static int heap_order_ok(const struct ncol_ws *w)
{
        const struct ncol_heap_map *hm = &w->hm;
        return w->rank[hm->size] < w->rank[hm->addr] &&
               (hm->naddr >= TM_SCHEMA_FIELDS_MAX || w->rank[hm->addr] < w->rank[hm->naddr]);
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
        /* the sizes decoded before, the new addresses not yet */
        if (meth == NCOL_M_HEAP &&
            (!(w->done >> w->hm.size & 1) ||
             (w->hm.naddr < TM_SCHEMA_FIELDS_MAX && (w->done >> w->hm.naddr & 1))))
                return -1;
        if (meth == NCOL_M_HEAPED)
                return w->heaped && f == w->hm.naddr && !w->dec[0].len && !w->dec[1].len &&
                               !w->dec[2].len
                           ? 0
                           : -1;
        struct hio io = {1,
                         {{w->dec[0].p, w->dec[0].len, 0},
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
