/* native_blk: one block of the native encoding, both directions
 * (native.h; docs/formats/native.md is the layout and the predictors). */
#include "native.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../common/tm_huge.h"

#define IFETCH 2 /* the type that starts an instruction */

/* The instruction table, keyed by a PC: its successors, its data types
 * pattern, its fetch's size. */
struct ient {
        uint64_t s1, s2, pat;
        uint32_t isz, pad;
};

/* The data table, keyed by (PC, position): its addresses, its size. The
 * fast decoder does not clear the table a block: an entry whose gen is not
 * that block's tmn_ws.dgen counts as all zero (the reference's clearing
 * makes gen 0, which no block of the fast decoder has). */
struct dent {
        uint64_t a1, a2;
        uint32_t sz, gen;
};

/* The fast decoder's instruction table: the entries of the indices a
 * block uses, in the order it first uses them (slot 1 on), so that a
 * loop's instructions share cache lines; n1, n2 are the slots of s1's and
 * s2's entries, which takes the next instruction's entry without hashing
 * its PC or reading the index map; at is its index in the map, so that
 * the next block clears only the map's entries this one set. */
struct cent {
        uint64_t s1, s2, pat;
        uint32_t isz, n1, n2, at;
};

struct buf {
        uint8_t *p;
        size_t len, cap;
};

struct tmn_ws {
        struct ient *it;
        struct dent *dt;
        unsigned shift;             /* 64 - the index bits of this block's tables */
        unsigned tbits;             /* the tables hold 2^tbits entries (0: none yet) */
        struct buf s[TMN_NSTREAMS]; /* raw streams */
        struct buf out, alt, fin;   /* predicted and plain at level 1, the level asked */
        struct buf dz;              /* the data addresses as deltas (codings 3, 4) */
        ZSTD_CCtx *cc;
        ZSTD_DCtx *dc;
        int ref;         /* decode with dec_predict only (tmn_ws_reference) */
        uint32_t *imap;  /* index -> slot of ic, 0: none yet (fast decoder) */
        uint32_t iused;  /* slots of ic in use (imap's entries set), UINT32_MAX: imap unknown */
        uint32_t dgen;   /* the fast decoder's block: struct dent's gen (0: none yet) */
        struct cent *ic; /* 1 + 2^tbits slots */
        const struct tmn_dict *dict; /* the file's, for storage TMN_STORE_DICT (tmn_ws_dict) */
};

#define NO_PAT UINT64_MAX /* a pattern no table entry predicts */

static int buf_room(struct buf *b, size_t more)
{
        if (b->cap - b->len >= more)
                return 0;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len < more)
                cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p)
                return -ENOMEM;
        b->p = p;
        b->cap = cap;
        return 0;
}

struct tmn_ws *tmn_ws_new(void)
{
        return calloc(1, sizeof(struct tmn_ws)); /* tables: tables_room */
}

void tmn_ws_reference(struct tmn_ws *w, int on)
{
        w->ref = on;
}

void tmn_ws_dict(struct tmn_ws *w, const struct tmn_dict *d)
{
        w->dict = d;
}

void tmn_ws_streams(const struct tmn_ws *w, struct tmn_raw *r)
{
        for (int s = 0; s < TMN_NSTREAMS; s++) {
                r->p[s] = w->s[s].p;
                r->len[s] = w->s[s].len;
        }
}

void tmn_ws_free(struct tmn_ws *w)
{
        if (!w)
                return;
        free(w->it);
        free(w->dt);
        free(w->imap);
        free(w->ic);
        for (int i = 0; i < TMN_NSTREAMS; i++)
                free(w->s[i].p);
        free(w->out.p);
        free(w->alt.p);
        free(w->fin.p);
        free(w->dz.p);
        ZSTD_freeCCtx(w->cc);
        ZSTD_freeDCtx(w->dc);
        free(w);
}

/* ---- little-endian fields, varints ---- */

static void le64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> 8 * i);
}

/* Unchecked: the caller made room for 10 bytes. */
static inline void put_var(struct buf *b, uint64_t v)
{
        uint8_t *p = b->p + b->len;
        while (v >= 0x80) {
                *p++ = (uint8_t)(v | 0x80);
                v >>= 7;
        }
        *p++ = (uint8_t)v;
        b->len = (size_t)(p - b->p);
}

static inline uint64_t zigzag(uint64_t d)
{
        return d << 1 ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
        return z >> 1 ^ (0 - (z & 1));
}

/* ---- the predictors' keys ---- */

static inline uint32_t hash_pc(uint64_t pc, unsigned shift)
{
        return (uint32_t)((pc * 0x9E3779B97F4A7C15ull) >> shift);
}

static inline uint32_t hash_data(uint64_t pc, size_t pos, unsigned shift)
{
        uint64_t p = pos < TMN_POS_MAX ? pos : TMN_POS_MAX;
        return (uint32_t)(((pc ^ (p + 1) * 0xD6E8FEB86659FD93ull) * 0x9E3779B97F4A7C15ull) >>
                          shift);
}

/* The pattern of k data types t[0..k): k in bits 0..4, type j in bits
 * 5 + 3j .. 7 + 3j; NO_PAT when k > TMN_PAT_K. */
static uint64_t pattern(const uint8_t *t, size_t k)
{
        if (k > TMN_PAT_K)
                return NO_PAT;
        uint64_t p = k;
        for (size_t j = 0; j < k; j++)
                p |= (uint64_t)(t[j] & 7) << (5 + 3 * j);
        return p;
}

/* The index bits of a block of n records' tables: min(TMN_TABLE_LOG,
 * ceil(log2 n) + 2) (a block uses at most n entries of each: a small
 * block clears and touches less). */
static unsigned table_bits(size_t n)
{
        unsigned bits = 2;
        while (bits < TMN_TABLE_LOG && ((size_t)1 << (bits - 2)) < n)
                bits++;
        return bits;
}

/* The tables made room for a block of n records (0, or -ENOMEM). They
 * grow to the largest block w has coded, so that a workspace of small
 * blocks stays small: allocating all 2^TMN_TABLE_LOG entries of the four
 * up front (6.3 MiB) cost each encoder open of the fuzz harnesses most
 * of its time under ASan. New tables are unknown to the fast decoder
 * (iused, dgen): its next block clears them whole. */
static int tables_room(struct tmn_ws *w, size_t n)
{
        unsigned bits = table_bits(n);
        if (bits <= w->tbits)
                return 0;
        free(w->it);
        free(w->dt);
        free(w->imap);
        free(w->ic);
        w->it = malloc(sizeof *w->it << bits);
        w->dt = tm_huge_alloc(tm_huge_round(sizeof *w->dt << bits));
        w->imap = malloc(sizeof *w->imap << bits);
        w->ic = malloc(sizeof *w->ic * ((1u << bits) + 1));
        w->iused = UINT32_MAX;
        w->dgen = 0;
        w->tbits = w->it && w->dt && w->imap && w->ic ? bits : 0;
        return w->tbits ? 0 : -ENOMEM;
}

/* The tables of a block of n records, all zero: 2^table_bits(n) entries
 * each (tables_room made them). */
static void tables_reset(struct tmn_ws *w, size_t n)
{
        unsigned bits = table_bits(n);
        w->shift = 64 - bits;
        memset(w->it, 0, sizeof *w->it << bits);
        memset(w->dt, 0, sizeof *w->dt << bits);
}

/* ---- encoding ---- */

/* A size against its prediction p (then p = the size). */
static inline void put_size(struct buf *b, uint32_t *p, uint32_t sz)
{
        if (sz == *p) {
                b->p[b->len++] = 0;
                return;
        }
        put_var(b, (uint64_t)sz + 1);
        *p = sz;
}

/* The fetch at record i (its PC pc) after the one at prev (size psz). */
static void enc_fetch(struct tmn_ws *w, uint64_t pc, uint64_t prev, uint32_t psz, int sized)
{
        struct ient *e = &w->it[hash_pc(prev, w->shift)];
        uint8_t code = 3;
        if (pc == e->s1)
                code = 0;
        else if (pc == e->s2)
                code = 1;
        else if (sized && pc == prev + psz)
                code = 2;
        else
                put_var(&w->s[TMN_S_IMISS], zigzag(pc - prev));
        w->s[TMN_S_IHIT].p[w->s[TMN_S_IHIT].len++] = code;
        if (pc != e->s1) {
                e->s2 = e->s1;
                e->s1 = pc;
        }
}

/* The data access a (size sz) at position pos of the instruction pc. */
static void enc_data(struct tmn_ws *w, uint64_t pc, size_t pos, uint64_t a, uint32_t sz,
                     uint64_t *prev, int sized)
{
        struct dent *d = &w->dt[hash_data(pc, pos, w->shift)];
        uint8_t code;
        if (a == d->a1) {
                code = 0;
        } else if (a == d->a2) {
                code = 1;
        } else if (a == *prev) {
                code = 2;
        } else {
                uint64_t d1 = a - d->a1, d2 = a - *prev;
                uint64_t z1 = zigzag(d1), z2 = zigzag(d2);
                code = z1 <= z2 ? 3 : 4;
                put_var(&w->s[TMN_S_DMISS], code == 3 ? z1 : z2);
        }
        w->s[TMN_S_DHIT].p[w->s[TMN_S_DHIT].len++] = code;
        put_var(&w->dz, zigzag(a - *prev));
        if (sized)
                put_size(&w->s[TMN_S_SIZE], &d->sz, sz);
        if (a != d->a1) {
                d->a2 = d->a1;
                d->a1 = a;
        }
        *prev = a;
}

/* Room in every stream for an instruction of k data accesses. */
static int enc_room(struct tmn_ws *w, size_t k)
{
        static const size_t per[TMN_NSTREAMS] = {1, 1, 10, 1, 10, 5};
        for (int s = 0; s < TMN_NSTREAMS; s++)
                if (buf_room(&w->s[s], 16 + per[s] * (k + 1)) < 0)
                        return -ENOMEM;
        return buf_room(&w->dz, 16 + 10 * (k + 1));
}

/* The predicted streams of c[0..n) into w->s; the block's mode. */
static int enc_predict(struct tmn_ws *w, const struct tmn_cols *c, size_t n, int sized)
{
        tables_reset(w, n);
        for (int s = 0; s < TMN_NSTREAMS; s++)
                w->s[s].len = 0;
        w->dz.len = 0;
        uint64_t prev_pc = 0, prev_data = 0;
        uint32_t prev_sz = 0;
        int mode = c->type[0] == IFETCH ? 1 : 2;
        for (size_t i = 0; i < n;) {
                int fetch = c->type[i] == IFETCH;
                size_t j = i + (size_t)fetch, e = j;
                while (e < n && c->type[e] != IFETCH)
                        e++;
                size_t k = e - j;
                if (enc_room(w, k) < 0)
                        return -ENOMEM;
                uint64_t pc = fetch ? c->addr[i] : 0;
                if (fetch)
                        enc_fetch(w, pc, prev_pc, prev_sz, sized);
                struct ient *q = &w->it[hash_pc(pc, w->shift)];
                uint64_t pat = pattern(c->type + j, k);
                struct buf *t = &w->s[TMN_S_TYPE];
                if (pat != NO_PAT && pat == q->pat) {
                        t->p[t->len++] = 0;
                } else {
                        put_var(t, (uint64_t)k + 1);
                        memcpy(t->p + t->len, c->type + j, k);
                        t->len += k;
                }
                q->pat = pat;
                if (fetch && sized) {
                        put_size(&w->s[TMN_S_SIZE], &q->isz, c->size[i]);
                        prev_sz = c->size[i];
                }
                if (fetch)
                        prev_pc = pc;
                for (size_t d = 0; d < k; d++)
                        enc_data(w, pc, d, c->addr[j + d], sized ? c->size[j + d] : 0, &prev_data,
                                 sized);
                i = e;
        }
        return mode;
}

/* r's bytes in a zstd frame at level 1, or as they are when not
 * shorter; SIZE_MAX when out of memory. w->fin is the scratch. */
static size_t enc_zlen(struct tmn_ws *w, const struct buf *r)
{
        if (!r->len)
                return 0;
        size_t bound = ZSTD_compressBound(r->len);
        w->fin.len = 0;
        if (buf_room(&w->fin, bound) < 0 || (!w->cc && !(w->cc = ZSTD_createCCtx())))
                return SIZE_MAX;
        size_t z = ZSTD_compressCCtx(w->cc, w->fin.p, bound, r->p, r->len, 1);
        return ZSTD_isError(z) ? SIZE_MAX : z < r->len ? z : r->len;
}

/* The streams of codings 3, 4 from enc_predict's: DHIT empty, DMISS the
 * deltas. */
static void enc_delta_take(struct tmn_ws *w)
{
        struct buf t = w->s[TMN_S_DMISS];
        w->s[TMN_S_DMISS] = w->dz;
        w->dz = t;
        w->s[TMN_S_DHIT].len = 0;
}

/* The plain columns of c[0..n) into w->s[0..3). */
static int enc_plain(struct tmn_ws *w, const struct tmn_cols *c, size_t n, int sized)
{
        for (int s = 0; s < TMN_NSTREAMS; s++)
                w->s[s].len = 0;
        if (buf_room(&w->s[0], n) < 0 || buf_room(&w->s[1], 8 * n) < 0 ||
            buf_room(&w->s[2], 4 * n) < 0)
                return -ENOMEM;
        memcpy(w->s[0].p, c->type, n);
        for (size_t i = 0; i < n; i++)
                le64(w->s[1].p + 8 * i, c->addr[i]);
        for (size_t i = 0; sized && i < n; i++)
                tmn_put32(w->s[2].p + 4 * i, c->size[i]);
        w->s[0].len = n;
        w->s[1].len = 8 * n;
        w->s[2].len = sized ? 4 * n : 0;
        return TMN_PLAIN;
}

/* The block of n records, mode and w->s[0..ns) as they are, into o at
 * zstd level level (its body may pass TMN_BODY_MAX). */
static int enc_assemble(struct tmn_ws *w, struct buf *o, size_t n, int mode, int ns, int level,
                        struct tmn_bstats *st)
{
        size_t need = TMN_BLK_HDR + 1 + (size_t)ns * TMN_STREAM_ENTRY;
        for (int s = 0; s < ns; s++)
                need += ZSTD_compressBound(w->s[s].len);
        o->len = 0;
        if (buf_room(o, need) < 0)
                return -ENOMEM;
        if (!w->cc && !(w->cc = ZSTD_createCCtx()))
                return -ENOMEM;
        uint8_t *tab = o->p + TMN_BLK_HDR + 1;
        o->p[TMN_BLK_HDR] = (uint8_t)mode;
        size_t at = TMN_BLK_HDR + 1 + (size_t)ns * TMN_STREAM_ENTRY;
        for (int s = 0; s < ns; s++) {
                const struct buf *r = &w->s[s];
                uint8_t coding = 0;
                size_t k = r->len;
                if (r->len) {
                        size_t z =
                            ZSTD_compressCCtx(w->cc, o->p + at, need - at, r->p, r->len, level);
                        if (ZSTD_isError(z))
                                return -ENOMEM;
                        if (z < r->len) {
                                coding = 1;
                                k = z;
                        } else {
                                memcpy(o->p + at, r->p, r->len);
                        }
                }
                tab[s * TMN_STREAM_ENTRY] = coding;
                tmn_put32(tab + s * TMN_STREAM_ENTRY + 1, (uint32_t)k);
                tmn_put32(tab + s * TMN_STREAM_ENTRY + 5, (uint32_t)r->len);
                if (st) {
                        st->stored[s] = k;
                        st->raw[s] = r->len;
                }
                at += k;
        }
        size_t body = at - TMN_BLK_HDR; /* the caller checks it against TMN_BODY_MAX */
        tmn_put32(o->p, TMN_BLK_MAGIC);
        tmn_put32(o->p + 4, (uint32_t)n);
        tmn_put32(o->p + 8, (uint32_t)body);
        uLong crc = crc32_z(crc32(0, o->p, 12), o->p + TMN_BLK_HDR, body);
        tmn_put32(o->p + 12, (uint32_t)crc);
        o->len = at;
        return 0;
}

/* The chosen candidate at the level asked into w->fin (the streams in
 * w->s), kept when smaller than cand; the block to write. */
static const struct buf *enc_final(struct tmn_ws *w, const struct buf *cand, size_t n, int mode,
                                   int level, struct tmn_bstats *st)
{
        struct tmn_bstats sf = {0};
        int ns = mode == TMN_PLAIN ? TMN_PLAIN_STREAMS : TMN_NSTREAMS;
        if (level <= 1 || enc_assemble(w, &w->fin, n, mode, ns, level, &sf) < 0 ||
            w->fin.len >= cand->len)
                return cand;
        *st = sf;
        return &w->fin;
}

int tmn_block_encode(struct tmn_ws *w, const struct tmn_cols *c, size_t n, int sized, int level,
                     const uint8_t **out, size_t *len, struct tmn_bstats *st)
{
        if (n == 0 || n > (1u << TMN_LOG_MAX))
                return -EINVAL;
        if (tables_room(w, n) < 0)
                return -ENOMEM;
        struct tmn_bstats sp = {0}, sq = {0};
        int mode = enc_predict(w, c, n, sized);
        if (mode < 0)
                return mode;
        if (enc_assemble(w, &w->out, n, mode, TMN_NSTREAMS, 1, &sp) < 0)
                return -ENOMEM;
        /* the data addresses as deltas from the previous one (codings 3,
         * 4) when smaller at level 1 than the hit codes and misses: so on
         * a pointer-chasing walk, whose tables rarely hit and whose misses
         * against a table's address are no smaller than the step from the
         * previous access */
        size_t dz = enc_zlen(w, &w->dz);
        int delta = dz < sp.stored[TMN_S_DHIT] + sp.stored[TMN_S_DMISS];
        if (delta) {
                enc_delta_take(w);
                mode += TMN_PREDICT_DELTA - TMN_PREDICT;
                if (enc_assemble(w, &w->out, n, mode, TMN_NSTREAMS, 1, &sp) < 0)
                        return -ENOMEM;
        }
        if (enc_plain(w, c, n, sized) < 0 ||
            enc_assemble(w, &w->alt, n, TMN_PLAIN, TMN_PLAIN_STREAMS, 1, &sq) < 0)
                return -ENOMEM;
        /* both at level 1 choose the coding, and say early when the block
         * cannot fit: a higher level rarely halves these streams */
        int plain = w->alt.len < w->out.len;
        size_t best = plain ? w->alt.len : w->out.len;
        if (best - TMN_BLK_HDR > 2 * (size_t)TMN_BODY_MAX)
                return -EFBIG;
        const struct buf *b;
        struct tmn_bstats sb;
        if (plain) {
                sb = sq;
                b = enc_final(w, &w->alt, n, TMN_PLAIN, level, &sb);
        } else {
                sb = sp;
                if (enc_predict(w, c, n, sized) < 0)
                        return -ENOMEM;
                if (delta)
                        enc_delta_take(w);
                b = enc_final(w, &w->out, n, mode, level, &sb);
                if (b->len > w->alt.len) { /* never larger than the plain columns */
                        b = &w->alt;
                        sb = sq;
                        mode = TMN_PLAIN;
                }
        }
        if (b->len - TMN_BLK_HDR > TMN_BODY_MAX)
                return -EFBIG;
        sb.mode = plain ? TMN_PLAIN : mode;
        if (st)
                *st = sb;
        *out = b->p;
        *len = b->len;
        return 0;
}

/* ---- decoding ---- */

int tmn_block_head(const uint8_t *p, uint32_t max_rec, uint64_t raw_off, uint32_t *nrec,
                   uint32_t *body, struct tm_err *err)
{
        unsigned long long o = (unsigned long long)raw_off;
        if (tmn_get32(p) != TMN_BLK_MAGIC)
                return tm_err_set(err, -EIO, "raw offset %llu: no block here (bad block magic)", o);
        *nrec = tmn_get32(p + 4);
        *body = tmn_get32(p + 8);
        if (*nrec > max_rec)
                return tm_err_set(err, -EIO, "raw offset %llu: block of %u records (at most %u)", o,
                                  *nrec, max_rec);
        if (*nrec == 0 ? *body != 8 : *body > TMN_BODY_MAX || *body < 1)
                return tm_err_set(err, -EIO, "raw offset %llu: block body of %u bytes", o, *body);
        return 0;
}

/* A stream being read: its bytes, where the reader is. */
struct rd {
        const uint8_t *p, *end;
};

static inline int rd_var(struct rd *r, uint64_t *v)
{
        uint64_t x = 0;
        for (unsigned sh = 0; sh < 64 && r->p < r->end; sh += 7) {
                uint8_t b = *r->p++;
                x |= (uint64_t)(b & 0x7f) << sh;
                if (!(b & 0x80)) {
                        *v = x;
                        return 0;
                }
        }
        return -1;
}

static inline int rd_byte(struct rd *r, uint8_t *v)
{
        if (r->p == r->end)
                return -1;
        *v = *r->p++;
        return 0;
}

static const char *const stream_name[TMN_NSTREAMS] = {"type", "ihit",  "imiss",
                                                      "dhit", "dmiss", "size"};

/* Zero bytes after each raw stream: the fast decoder reads a varint's
 * first bytes before it knows where the stream ends. */
#define STREAM_SLACK 16

/* The streams of the block body b (len bytes, ns streams, each raw at
 * most lim bytes) into w->s. A frame against the dictionary (storage
 * TMN_STORE_DICT) is refused before any stream is decompressed when w has
 * none for its kind, so that a caller without the file's dictionary (the
 * text decoder, which has no trace) hands the block on at once. */
static int dec_streams(struct tmn_ws *w, const uint8_t *b, size_t len, int ns, size_t lim,
                       uint64_t raw_off, struct tm_err *err)
{
        unsigned long long o = (unsigned long long)raw_off;
        size_t at = 1 + (size_t)ns * TMN_STREAM_ENTRY;
        if (len < at)
                return tm_err_set(err, -EIO, "raw offset %llu: block body cut in its table", o);
        if (!w->dc && !(w->dc = ZSTD_createDCtx()))
                return tm_err_set(err, -ENOMEM, "out of memory");
        for (int s = 0; s < ns; s++) {
                const uint8_t *e = b + 1 + s * TMN_STREAM_ENTRY;
                if (e[0] == TMN_STORE_DICT && (ns != TMN_NSTREAMS || !w->dict || !w->dict->len[s]))
                        return tm_err_set(err, -EIO,
                                          "raw offset %llu: stream %d: a dictionary frame "
                                          "and no dictionary for it",
                                          o, s);
        }
        for (int s = 0; s < ns; s++) {
                const uint8_t *e = b + 1 + s * TMN_STREAM_ENTRY;
                uint32_t k = tmn_get32(e + 1), raw = tmn_get32(e + 5);
                if (e[0] > TMN_STORE_DICT || k > len - at || raw > lim || (e[0] == 0 && k != raw))
                        return tm_err_set(err, -EIO, "raw offset %llu: stream %d: bad table entry",
                                          o, s);
                w->s[s].len = 0;
                if (buf_room(&w->s[s], raw + STREAM_SLACK) < 0)
                        return tm_err_set(err, -ENOMEM, "out of memory");
                if (e[0] == 0) {
                        memcpy(w->s[s].p, b + at, k);
                } else {
                        size_t z =
                            e[0] == 1
                                ? ZSTD_decompressDCtx(w->dc, w->s[s].p, raw, b + at, k)
                                : ZSTD_decompress_usingDict(w->dc, w->s[s].p, raw, b + at, k,
                                                            w->dict->part[s], w->dict->len[s]);
                        if (ZSTD_isError(z) || z != raw)
                                return tm_err_set(
                                    err, -EIO, "raw offset %llu: stream %d: bad zstd frame", o, s);
                }
                memset(w->s[s].p + raw, 0, STREAM_SLACK);
                w->s[s].len = raw;
                at += k;
        }
        if (at != len)
                return tm_err_set(err, -EIO, "raw offset %llu: %zu bytes after the streams", o,
                                  len - at);
        return 0;
}

static int dec_plain(struct tmn_ws *w, size_t n, unsigned ntypes, int sized, uint8_t *type,
                     uint64_t *addr, uint32_t *size, uint64_t raw_off, struct tm_err *err)
{
        if (w->s[0].len != n || w->s[1].len != 8 * n || w->s[2].len != (sized ? 4 * n : 0))
                return tm_err_set(err, -EIO, "raw offset %llu: plain columns of wrong lengths",
                                  (unsigned long long)raw_off);
        for (size_t i = 0; i < n; i++) {
                type[i] = w->s[0].p[i];
                if (type[i] >= ntypes)
                        return tm_err_set(err, -EIO, "raw offset %llu: record %zu: type %u",
                                          (unsigned long long)raw_off, i, type[i]);
                addr[i] = tmn_get64(w->s[1].p + 8 * i);
                if (size)
                        size[i] = sized ? tmn_get32(w->s[2].p + 4 * i) : 0;
        }
        return 0;
}

/* A size code against its prediction *p. */
static inline int rd_size(struct rd *r, uint32_t *p, uint32_t *sz)
{
        uint64_t v;
        if (rd_var(r, &v) < 0 || v > (uint64_t)UINT32_MAX + 1)
                return -1;
        if (v)
                *p = (uint32_t)(v - 1);
        *sz = *p;
        return 0;
}

/* Why a predicted block is refused: the stream, the record. */
static int bad(uint64_t raw_off, int s, size_t i, struct tm_err *err)
{
        return tm_err_set(err, -EIO, "raw offset %llu: record %zu: stream %s is bad",
                          (unsigned long long)raw_off, i, stream_name[s]);
}

/* The fetch of record i after prev (size psz): its PC into *pc. */
static int dec_fetch(struct tmn_ws *w, struct rd *r, uint64_t prev, uint32_t psz, int sized,
                     uint64_t *pc)
{
        struct ient *e = &w->it[hash_pc(prev, w->shift)];
        uint8_t code;
        uint64_t z;
        if (rd_byte(&r[TMN_S_IHIT], &code) < 0)
                return TMN_S_IHIT;
        switch (code) {
        case 0:
                *pc = e->s1;
                break;
        case 1:
                *pc = e->s2;
                break;
        case 2:
                if (!sized)
                        return TMN_S_IHIT;
                *pc = prev + psz;
                break;
        case 3:
                if (rd_var(&r[TMN_S_IMISS], &z) < 0)
                        return TMN_S_IMISS;
                *pc = prev + unzigzag(z);
                break;
        default:
                return TMN_S_IHIT;
        }
        if (*pc != e->s1) {
                e->s2 = e->s1;
                e->s1 = *pc;
        }
        return -1;
}

/* The data types of an instruction into t (room for max): *k of them. */
static int dec_types(struct ient *q, struct rd *r, unsigned ntypes, uint8_t *t, size_t max,
                     size_t *k)
{
        uint64_t v;
        if (rd_var(r, &v) < 0)
                return -1;
        if (v == 0) {
                if (q->pat == NO_PAT || (q->pat & 31) > max)
                        return -1;
                *k = (size_t)(q->pat & 31);
                for (size_t j = 0; j < *k; j++)
                        t[j] = (uint8_t)(q->pat >> (5 + 3 * j) & 7);
                return 0;
        }
        if (v - 1 > max || v - 1 > (size_t)(r->end - r->p))
                return -1;
        *k = (size_t)(v - 1);
        for (size_t j = 0; j < *k; j++) {
                t[j] = r->p[j];
                if (t[j] >= ntypes || t[j] == IFETCH)
                        return -1;
        }
        r->p += *k;
        q->pat = pattern(t, *k);
        return 0;
}

/* The data access at position pos of instruction pc: its address. */
static int dec_data(struct tmn_ws *w, struct rd *r, uint64_t pc, size_t pos, uint64_t *prev,
                    uint64_t *a, uint32_t *sz, int sized, int delta)
{
        struct dent *d = &w->dt[hash_data(pc, pos, w->shift)];
        uint8_t code;
        uint64_t z;
        if (delta) /* codings 3, 4: no hit codes, a delta from the previous address */
                code = 4;
        else if (rd_byte(&r[TMN_S_DHIT], &code) < 0 || code > 4)
                return TMN_S_DHIT;
        if (code == 0)
                *a = d->a1;
        else if (code == 1)
                *a = d->a2;
        else if (code == 2)
                *a = *prev;
        else if (rd_var(&r[TMN_S_DMISS], &z) < 0)
                return TMN_S_DMISS;
        else
                *a = (code == 3 ? d->a1 : *prev) + unzigzag(z);
        if (sized && rd_size(&r[TMN_S_SIZE], &d->sz, sz) < 0)
                return TMN_S_SIZE;
        if (*a != d->a1) {
                d->a2 = d->a1;
                d->a1 = *a;
        }
        *prev = *a;
        return -1;
}

static int dec_predict(struct tmn_ws *w, int mode, size_t n, unsigned ntypes, int sized,
                       uint8_t *type, uint64_t *addr, uint32_t *size, uint64_t raw_off,
                       struct tm_err *err)
{
        struct rd r[TMN_NSTREAMS];
        for (int s = 0; s < TMN_NSTREAMS; s++)
                r[s] = (struct rd){w->s[s].p, w->s[s].p + w->s[s].len};
        if (!sized && w->s[TMN_S_SIZE].len)
                return bad(raw_off, TMN_S_SIZE, 0, err);
        int delta = mode >= TMN_PREDICT_DELTA;
        if (delta && w->s[TMN_S_DHIT].len)
                return bad(raw_off, TMN_S_DHIT, 0, err);
        int first = mode == TMN_PREDICT || mode == TMN_PREDICT_DELTA; /* starts with a fetch */
        tables_reset(w, n);
        uint64_t prev_pc = 0, prev_data = 0;
        uint32_t prev_sz = 0, sz = 0;
        for (size_t i = 0; i < n;) {
                int fetch = i > 0 || first, s;
                uint64_t pc = 0;
                if (fetch && ntypes <= IFETCH)
                        return bad(raw_off, TMN_S_IHIT, i, err);
                if (fetch && (s = dec_fetch(w, r, prev_pc, prev_sz, sized, &pc)) >= 0)
                        return bad(raw_off, s, i, err);
                struct ient *q = &w->it[hash_pc(pc, w->shift)];
                size_t j = i + (size_t)fetch, k;
                if (dec_types(q, &r[TMN_S_TYPE], ntypes, type + j, n - j, &k) < 0)
                        return bad(raw_off, TMN_S_TYPE, i, err);
                if (fetch) {
                        type[i] = IFETCH;
                        addr[i] = pc;
                        if (sized && rd_size(&r[TMN_S_SIZE], &q->isz, &sz) < 0)
                                return bad(raw_off, TMN_S_SIZE, i, err);
                        if (size)
                                size[i] = sized ? sz : 0;
                        prev_sz = sz;
                        prev_pc = pc;
                }
                for (size_t d = 0; d < k; d++) {
                        s = dec_data(w, r, pc, d, &prev_data, &addr[j + d], &sz, sized, delta);
                        if (s >= 0)
                                return bad(raw_off, s, j + d, err);
                        if (size)
                                size[j + d] = sized ? sz : 0;
                }
                i = j + k;
        }
        for (int s = 0; s < TMN_NSTREAMS; s++)
                if (r[s].p != r[s].end)
                        return tm_err_set(err, -EIO, "raw offset %llu: stream %s: %zu bytes left",
                                          (unsigned long long)raw_off, stream_name[s],
                                          (size_t)(r[s].end - r[s].p));
        return 0;
}

/* ---- decoding, the fast path ----
 *
 * The same predictors as dec_predict, with the checks that cannot fail
 * on a good block taken out of the loop: the hit codes are checked in
 * bulk before it, a varint's common one-byte form is read inline, the
 * instruction table's entry of the previous PC is the one the previous
 * instruction looked up, the addresses are chosen without branches. A
 * block it refuses (-1) is decoded again by dec_predict, which names what
 * is wrong; a block it accepts decodes to the same records (tests). */

/* A varint of the stream at *p (before end) of two or more bytes, by
 * rd_var's rules; -1 when there is none. */
static int var_long(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
        struct rd r = {*p, end};
        if (rd_var(&r, v) < 0)
                return -1;
        *p = r.p;
        return 0;
}

/* The next varint of [*p, end): the one-byte form inline. */
#define VAR_NEXT(p, end, v, fail)                                                                  \
        do {                                                                                       \
                if ((p) >= (end))                                                                  \
                        goto fail;                                                                 \
                if (*(p) < 0x80) {                                                                 \
                        (v) = *(p)++;                                                              \
                } else if (var_long(&(p), (end), &(v)) < 0) {                                      \
                        goto fail;                                                                 \
                }                                                                                  \
        } while (0)

/* 1 when every byte of c[0..n) is a code below lim (and not 2 when no2). */
static int codes_ok(const uint8_t *c, size_t n, unsigned lim, int no2)
{
        unsigned bad = 0;
        for (size_t i = 0; i < n; i++)
                bad |= (unsigned)(c[i] >= lim) | (unsigned)(no2 & (c[i] == 2));
        return !bad;
}

/* (pos + 1) * 0xD6E8FEB86659FD93 of hash_data, per position. */
static const uint64_t pos_key[TMN_POS_MAX + 1] = {
#define K(p) (uint64_t)(p + 1) * 0xD6E8FEB86659FD93ull
    K(0), K(1), K(2),  K(3),  K(4),  K(5),  K(6),  K(7),
    K(8), K(9), K(10), K(11), K(12), K(13), K(14), K(15),
#undef K
};

/* hash_data of the fast decoder. */
static inline uint32_t dent_at(uint64_t pc, size_t pos, unsigned sh)
{
        return (uint32_t)(((pc ^ pos_key[pos < TMN_POS_MAX ? pos : TMN_POS_MAX]) *
                           0x9E3779B97F4A7C15ull) >>
                          sh);
}

/* The fast decoder's tables for a block of n records: the data table
 * (a new generation; cleared whole at the first and when the count wraps:
 * clearing it a block costs 5% of the decoder's samples) and the
 * instruction table's index map, as tables_reset. */
static void tables_reset_fast(struct tmn_ws *w, size_t n)
{
        w->shift = 64 - table_bits(n);
        /* the map's entries the last block set, or all of it when they
         * are many (a memset is faster than as many scattered stores) */
        if (w->iused > (1u << w->tbits) / 16)
                memset(w->imap, 0, sizeof *w->imap << w->tbits);
        else
                for (uint32_t k = 1; k <= w->iused; k++)
                        w->imap[w->ic[k].at] = 0;
        w->iused = 0;
        if (++w->dgen <= 1) {
                memset(w->dt, 0, sizeof *w->dt << w->tbits);
                w->dgen = 1;
        }
}

/* The slot of pc's entry, made (all zero, its successors PC 0's, in
 * slot0) when the block has none yet. */
static inline uint32_t cent_slot(struct cent *ic, uint32_t *imap, uint32_t *used, uint64_t pc,
                                 unsigned sh, uint32_t slot0)
{
        uint32_t at = hash_pc(pc, sh), *m = &imap[at];
        if (*m)
                return *m;
        *m = ++*used;
        ic[*m] = (struct cent){.n1 = slot0 ? slot0 : *m, .n2 = slot0 ? slot0 : *m, .at = at};
        return *m;
}

/* A varint of up to 8 bytes at p (8 bytes readable) and its length, or
 * length 0 when it is longer: the 7-bit groups gathered without a loop. */
static inline uint64_t var_peek(const uint8_t *p, unsigned *len)
{
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t stop = ~x & 0x8080808080808080ull;
        if (!stop) {
                *len = 0;
                return 0;
        }
        unsigned b = (unsigned)__builtin_ctzll(stop) + 1;
        *len = b >> 3;
        x &= UINT64_MAX >> (64 - b);
        x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
        x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
        return (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
}

/* 1 when no byte of c[0..n) has its high bit: each is a one-byte varint. */
static int all_short(const uint8_t *c, size_t n)
{
        uint8_t o = 0;
        for (size_t i = 0; i < n; i++)
                o |= c[i];
        return !(o & 0x80);
}

/* A size code for record r against the prediction *p: SIZE1, the
 * stream's byte r (size1: every record's code is one byte), else its
 * next varint. */
#define SIZE_NEXT(p, r, fail)                                                                      \
        do {                                                                                       \
                if (size1) {                                                                       \
                        v = sp[r];                                                                 \
                } else {                                                                           \
                        VAR_NEXT(sp, spe, v, fail);                                                \
                        if (v > (uint64_t)UINT32_MAX + 1)                                          \
                                goto fail;                                                         \
                }                                                                                  \
                (p) = v ? (uint32_t)(v - 1) : (p);                                                 \
                sz = (p);                                                                          \
        } while (0)

/* A data access of codings 3, 4: the next DMISS varint as a delta from
 * *prev (the address into *prev), its branch-free form inline. */
#define DELTA_NEXT(prev, fail)                                                                     \
        do {                                                                                       \
                unsigned len_;                                                                     \
                uint64_t z_ = var_peek(dm, &len_);                                                 \
                if (len_)                                                                          \
                        dm += len_;                                                                \
                else                                                                               \
                        VAR_NEXT(dm, dme, z_, fail);                                               \
                if (dm > dme)                                                                      \
                        goto fail;                                                                 \
                (prev) += unzigzag(z_);                                                            \
        } while (0)

/* The fast decoder of a block of coding mode (1..4); size1 and delta
 * constants of the call (delta: codings 3, 4), so that each of the
 * loop's four forms has no branch on them. */
static inline __attribute__((always_inline)) int
dec_predict_loop(struct tmn_ws *w, int mode, size_t n, unsigned ntypes, int sized, uint8_t *type,
                 uint64_t *addr, uint32_t *size, const int size1, const int delta)
{
        const uint8_t *ih = w->s[TMN_S_IHIT].p, *ihe = ih + w->s[TMN_S_IHIT].len;
        const uint8_t *dh = w->s[TMN_S_DHIT].p, *dhe = dh + w->s[TMN_S_DHIT].len;
        const uint8_t *im = w->s[TMN_S_IMISS].p, *ime = im + w->s[TMN_S_IMISS].len;
        const uint8_t *dm = w->s[TMN_S_DMISS].p, *dme = dm + w->s[TMN_S_DMISS].len;
        const uint8_t *tp = w->s[TMN_S_TYPE].p, *tpe = tp + w->s[TMN_S_TYPE].len;
        const uint8_t *sp = w->s[TMN_S_SIZE].p, *spe = sp + w->s[TMN_S_SIZE].len;
        if ((!sized && sp != spe) || (delta && dh != dhe))
                return -1;
        if (!codes_ok(ih, (size_t)(ihe - ih), 4, !sized) || !codes_ok(dh, (size_t)(dhe - dh), 5, 0))
                return -1;
        tables_reset_fast(w, n);
        struct cent *const ic = w->ic;
        uint32_t *const imap = w->imap;
        struct dent *const dt = w->dt;
        const unsigned sh = w->shift;
        const uint32_t gen = w->dgen;
        uint32_t used = 0;
        uint64_t prev_pc = 0, prev_data = 0, v;
        uint32_t prev_sz = 0, sz = 0;
        const uint32_t slot0 = cent_slot(ic, imap, &used, 0, sh, 0);
        struct cent *q = &ic[slot0]; /* the entry of prev_pc */
        for (size_t i = 0; i < n;) {
                int fetch = i > 0 || mode == TMN_PREDICT || mode == TMN_PREDICT_DELTA;
                uint64_t pc = 0;
                if (fetch) {
                        if (ih == ihe || ntypes <= IFETCH)
                                goto fail;
                        unsigned c = *ih++;
                        struct cent *e = q;
                        uint32_t ns;
                        if (c < 2) {
                                pc = c == 0 ? e->s1 : e->s2;
                                ns = c == 0 ? e->n1 : e->n2;
                        } else {
                                pc = prev_pc + prev_sz;
                                if (c == 3) {
                                        VAR_NEXT(im, ime, v, fail);
                                        pc = prev_pc + unzigzag(v);
                                }
                                ns = cent_slot(ic, imap, &used, pc, sh, slot0);
                        }
                        if (pc != e->s1) {
                                e->s2 = e->s1;
                                e->n2 = e->n1;
                                e->s1 = pc;
                                e->n1 = ns;
                        }
                        q = &ic[ns];
                        if (!delta || sized) /* codings 3, 4 use the data table for sizes */
                                __builtin_prefetch(&dt[dent_at(pc, 0, sh)]);
                } else {
                        q = &ic[slot0];
                }
                size_t j = i + (size_t)fetch, k;
                VAR_NEXT(tp, tpe, v, fail);
                if (v == 0) {
                        uint64_t pat = q->pat;
                        if (pat == NO_PAT || (pat & 31) > n - j)
                                goto fail;
                        k = (size_t)(pat & 31);
                        pat >>= 5;
                        if (k <= 4 && n - j >= 4) {
                                /* four bytes whatever k: those past k are
                                 * records that later instructions write */
                                uint32_t t4 = (uint32_t)(pat & 7) | (uint32_t)(pat >> 3 & 7) << 8 |
                                              (uint32_t)(pat >> 6 & 7) << 16 |
                                              (uint32_t)(pat >> 9 & 7) << 24;
                                memcpy(type + j, &t4, 4);
                        } else {
                                for (size_t x = 0; x < k; x++, pat >>= 3)
                                        type[j + x] = (uint8_t)(pat & 7);
                        }
                } else {
                        if (v - 1 > n - j || v - 1 > (size_t)(tpe - tp))
                                goto fail;
                        k = (size_t)(v - 1);
                        unsigned bad = 0;
                        for (size_t x = 0; x < k; x++) {
                                type[j + x] = tp[x];
                                bad |= (unsigned)(tp[x] >= ntypes) | (unsigned)(tp[x] == IFETCH);
                        }
                        if (bad)
                                goto fail;
                        tp += k;
                        q->pat = pattern(type + j, k);
                }
                if (fetch) {
                        type[i] = IFETCH;
                        addr[i] = pc;
                        if (sized)
                                SIZE_NEXT(q->isz, i, fail);
                        if (size)
                                size[i] = sz;
                        prev_sz = sz;
                        prev_pc = pc;
                }
                if (delta) {
                        /* no hit codes: the data table's addresses are
                         * never read, so only its sizes are kept */
                        for (size_t x = 0; x < k; x++) {
                                DELTA_NEXT(prev_data, fail);
                                addr[j + x] = prev_data;
                                if (sized) {
                                        struct dent *d = &dt[dent_at(pc, x, sh)];
                                        uint32_t dsz = d->gen == gen ? d->sz : 0;
                                        SIZE_NEXT(dsz, j + x, fail);
                                        d->sz = dsz;
                                        d->gen = gen;
                                }
                                if (size)
                                        size[j + x] = sized ? sz : 0;
                        }
                        i = j + k;
                        continue;
                }
                if ((size_t)(dhe - dh) < k)
                        goto fail;
                for (size_t x = 0; x < k; x++) {
                        struct dent *d = &dt[dent_at(pc, x, sh)];
                        unsigned c = dh[x];
                        int live = d->gen == gen;
                        uint64_t a1 = live ? d->a1 : 0, a2 = live ? d->a2 : 0;
                        uint32_t dsz = live ? d->sz : 0;
                        uint64_t a = c == 1 ? a2 : c == 0 || c == 3 ? a1 : prev_data;
                        unsigned len, miss = c >= 3;
                        uint64_t z = var_peek(dm, &len);
                        if (miss && !len) {
                                VAR_NEXT(dm, dme, z, fail);
                        } else {
                                dm += miss ? len : 0;
                                z = miss ? z : 0;
                        }
                        if (dm > dme)
                                goto fail;
                        a += unzigzag(z);
                        if (sized)
                                SIZE_NEXT(dsz, j + x, fail);
                        d->sz = dsz;
                        d->gen = gen;
                        d->a2 = a != a1 ? a1 : a2;
                        d->a1 = a;
                        prev_data = a;
                        addr[j + x] = a;
                        if (size)
                                size[j + x] = sized ? sz : 0;
                }
                dh += k;
                i = j + k;
        }
        if (size1)
                sp = spe;
        w->iused = used;
        if (ih != ihe || dh != dhe || im != ime || dm != dme || tp != tpe || sp != spe)
                return -1;
        return 0;
fail:
        w->iused = used;
        return -1;
}

static int dec_predict_fast(struct tmn_ws *w, int mode, size_t n, unsigned ntypes, int sized,
                            uint8_t *type, uint64_t *addr, uint32_t *size)
{
        const struct buf *s = &w->s[TMN_S_SIZE];
        int size1 = sized && s->len == n && all_short(s->p, n);
        if (mode >= TMN_PREDICT_DELTA)
                return size1 ? dec_predict_loop(w, mode, n, ntypes, sized, type, addr, size, 1, 1)
                             : dec_predict_loop(w, mode, n, ntypes, sized, type, addr, size, 0, 1);
        return size1 ? dec_predict_loop(w, mode, n, ntypes, sized, type, addr, size, 1, 0)
                     : dec_predict_loop(w, mode, n, ntypes, sized, type, addr, size, 0, 0);
}

int tmn_block_decode(struct tmn_ws *w, const uint8_t *p, size_t len, unsigned ntypes, int sized,
                     uint64_t raw_off, uint8_t *type, uint64_t *addr, uint32_t *size,
                     struct tm_err *err)
{
        unsigned long long o = (unsigned long long)raw_off;
        uint32_t n = tmn_get32(p + 4), body = tmn_get32(p + 8);
        if (len != (size_t)TMN_BLK_HDR + body || n == 0)
                return tm_err_set(err, -EIO, "raw offset %llu: block length", o);
        uLong crc = crc32_z(crc32(0, p, 12), p + TMN_BLK_HDR, body);
        if ((uint32_t)crc != tmn_get32(p + 12))
                return tm_err_set(err, -EIO, "raw offset %llu: block checksum mismatch", o);
        const uint8_t *b = p + TMN_BLK_HDR;
        int mode = b[0];
        if (mode > TMN_PREDICT_DELTA + 1)
                return tm_err_set(err, -EIO, "raw offset %llu: block coding %d", o, mode);
        int ns = mode == TMN_PLAIN ? TMN_PLAIN_STREAMS : TMN_NSTREAMS;
        int rc = dec_streams(w, b, body, ns, 11 * (size_t)n + 16, raw_off, err);
        if (rc < 0)
                return rc;
        if (mode == TMN_PLAIN)
                return dec_plain(w, n, ntypes, sized, type, addr, size, raw_off, err);
        if (tables_room(w, n) < 0)
                return tm_err_set(err, -ENOMEM, "out of memory");
        if (w->ref || dec_predict_fast(w, mode, n, ntypes, sized, type, addr, size) < 0)
                return dec_predict(w, mode, n, ntypes, sized, type, addr, size, raw_off, err);
        return 0;
}

/* ---- the file header and the end mark ---- */

void tmn_file_head_put(uint8_t *p, unsigned ntypes, int sized, unsigned log2)
{
        tmn_file_head_put_v(p, ntypes, sized, log2, TMN_VERSION);
}

void tmn_file_head_put_v(uint8_t *p, unsigned ntypes, int sized, unsigned log2, unsigned version)
{
        memset(p, 0, TMN_FILE_HDR);
        memcpy(p, TMN_MAGIC, 8);
        p[8] = (uint8_t)version;
        p[9] = TMN_SCHEMA_ADDRESS;
        p[10] = (uint8_t)ntypes;
        p[11] = sized ? 1 : 0;
        p[12] = (uint8_t)log2;
        tmn_put32(p + 16, (uint32_t)crc32(0, p, 16));
}

int tmn_file_head_get(const uint8_t *p, size_t n, unsigned *ntypes, int *sized, unsigned *log2,
                      struct tm_err *err)
{
        if (n < TMN_FILE_HDR || memcmp(p, TMN_MAGIC, 8) != 0)
                return tm_err_set(err, -EIO, "raw offset 0: not a native trace header");
        if ((uint32_t)crc32(0, p, 16) != tmn_get32(p + 16))
                return tm_err_set(err, -EIO, "raw offset 0: header checksum mismatch");
        if ((p[8] != TMN_VERSION && p[8] != TMN_VERSION_DICT) || p[9] != TMN_SCHEMA_ADDRESS)
                return tm_err_set(err, -ENOTSUP, "raw offset 8: version %u schema %u", p[8], p[9]);
        if (p[10] < 1 || p[10] > 8 || p[11] > 1 || p[12] < TMN_LOG_MIN || p[12] > TMN_LOG_MAX ||
            p[13] || p[14] || p[15])
                return tm_err_set(err, -EIO, "raw offset 10: bad header fields");
        *ntypes = p[10];
        *sized = p[11];
        *log2 = p[12];
        return 0;
}

int tmn_end_check(const uint8_t *in, size_t len, int eof, uint64_t done, uint64_t total,
                  uint64_t raw_off, struct tm_err *err)
{
        unsigned long long o = (unsigned long long)raw_off;
        uint8_t want[TMN_END_LEN];
        tmn_end_put(want, tmn_get64(in + TMN_BLK_HDR));
        if (memcmp(want, in, TMN_END_LEN) != 0)
                return tm_err_set(err, -EIO, "raw offset %llu: end mark checksum mismatch", o);
        if (done || tmn_get64(in + TMN_BLK_HDR) != total)
                return tm_err_set(
                    err, -EIO, "raw offset %llu: end mark says %llu records, %llu decoded", o,
                    (unsigned long long)tmn_get64(in + TMN_BLK_HDR), (unsigned long long)total);
        if (len > TMN_END_LEN || (eof && len < TMN_END_LEN))
                return tm_err_set(err, -EIO, "raw offset %llu: bytes after the end mark",
                                  o + TMN_END_LEN);
        return 0;
}

void tmn_end_put(uint8_t *p, uint64_t records)
{
        tmn_put32(p, TMN_BLK_MAGIC);
        tmn_put32(p + 4, 0);
        tmn_put32(p + 8, 8);
        le64(p + TMN_BLK_HDR, records);
        tmn_put32(p + 12, (uint32_t)crc32_z(crc32(0, p, 12), p + TMN_BLK_HDR, 8));
}

int tmn_end_write(tm_rsink sink, void *arg, uint64_t records, struct tm_err *err)
{
        uint8_t m[TMN_END_LEN];
        tmn_end_put(m, records);
        int rc = sink(arg, m, sizeof m);
        if (rc < 0)
                tm_err_set(err, rc, "native: writing the end mark failed");
        return rc;
}
