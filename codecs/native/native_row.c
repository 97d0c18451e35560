/* native_row: the native encoding as a row of the registry (native.h).
 *
 * Decoding: a call returns records of one block. The block is decoded
 * whole, once, into this thread's block cache (one block of columns and a
 * workspace per thread that decodes, freed when the thread ends), keyed
 * by the trace's open (a serial number), the block's raw offset and its
 * checksum; the calls that follow copy from it. *used stays at the block's
 * start until its last record is returned, so a checkpoint inside a block
 * is its start and the state's count of records already returned.
 *
 * Encoding: native_enc.c. */
#include "native.h"
#include "native_stats.h"
#include "ncol.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../address/addr_stats.h"
#include "../address/arec.h"
#include "../address/render.h"
#include "../common/tm_huge.h"
#include "../common/tm_tls.h"

/* ---- decoding ---- */

struct nctx {
        uint64_t id; /* this open's serial: the block cache's key */
        unsigned ntypes;
        int sized;
        uint32_t max_rec;
        struct ndict *dict; /* the file's dictionary (version TMN_VERSION_DICT), or NULL */
};

/* A file's dictionary: its chunk as stored, checked at open and
 * decompressed by the first block decoded (dict_for), so that a lookup,
 * which opens the trace, or an `ls -l` does not pay its decompression
 * and its pages. */
struct ndict {
        uint8_t *chunk; /* until loaded */
        size_t chunk_len, raw_len;
        pthread_mutex_t mu;
        _Atomic int state; /* 0: not loaded, 1: d loaded, -1: its frame or parts are bad (e) */
        struct tm_err e;
        struct tmn_dict d;
};

static void ndict_free(struct ndict *n)
{
        if (!n)
                return;
        pthread_mutex_destroy(&n->mu);
        free(n->chunk);
        tmn_dict_release(&n->d);
        free(n);
}

/* The checked chunk at p (n bytes of the file from TMN_FILE_HDR on) kept
 * for dict_for; *chunk its length. 0, -ENOMEM or -EIO with err. */
static int ndict_open(const uint8_t *p, size_t n, struct ndict **out, size_t *chunk,
                      struct tm_err *err)
{
        struct ndict *d = calloc(1, sizeof *d);
        if (!d)
                return tm_err_set(err, -ENOMEM, "out of memory");
        int rc = tmn_dict_check(p, n, &d->chunk_len, &d->raw_len, err);
        if (rc < 0) {
                free(d);
                return rc;
        }
        if (!(d->chunk = malloc(d->chunk_len))) {
                free(d);
                return tm_err_set(err, -ENOMEM, "out of memory");
        }
        memcpy(d->chunk, p, d->chunk_len);
        pthread_mutex_init(&d->mu, NULL);
        *chunk = d->chunk_len;
        *out = d;
        return 0;
}

/* The dictionary of n, loaded now if it is not yet: NULL with err set
 * when its frame or parts are bad (every block of the trace then fails
 * so) or memory is short (tried again the next time). */
static const struct tmn_dict *dict_for(struct ndict *n, struct tm_err *err)
{
        if (atomic_load_explicit(&n->state, memory_order_acquire) == 0) {
                pthread_mutex_lock(&n->mu);
                if (n->state == 0) {
                        int rc = tmn_dict_load(n->chunk, &n->d, &n->e);
                        if (rc == -ENOMEM) {
                                pthread_mutex_unlock(&n->mu);
                                tm_err_set(err, -ENOMEM, "out of memory");
                                return NULL;
                        }
                        free(n->chunk);
                        n->chunk = NULL;
                        atomic_store_explicit(&n->state, rc < 0 ? -1 : 1, memory_order_release);
                }
                pthread_mutex_unlock(&n->mu);
        }
        if (n->state < 0) {
                if (err)
                        *err = n->e;
                return NULL;
        }
        return &n->d;
}

/* The decoder state (struct tm_rstate's first bytes). */
struct nstate {
        uint64_t total;              /* records returned before this call */
        uint32_t done;               /* of them, in the block at the raw offset */
        uint8_t ended;               /* 1: the end mark is consumed */
        uint8_t ntypes, sized, log2; /* the file header's (for the text decoder) */
};

static _Atomic uint64_t next_id = 1;

static int native_probe(const uint8_t *head, size_t n)
{
        return n >= 8 && memcmp(head, TMN_MAGIC, 8) == 0 ? TM_BID_MAGIC : 0;
}

/* What open() reads: the file header and the chunk after it (schema 2's
 * schema, schema 1's dictionary), whose length its header says; a head
 * too short to tell, or a length past the limit (open() reports it),
 * asks for all (0). */
static size_t native_head_need(const uint8_t *head, size_t n)
{
        if (n < TMN_FILE_HDR + TMN_DICT_HDR)
                return 0;
        const uint8_t *c = head + TMN_FILE_HDR;
        if (head[9] == NCOL_SCHEMA)
                return tmn_get32(c + 4) <= NCOL_SCH_MAX
                           ? TMN_FILE_HDR + NCOL_SCH_HDR + (size_t)tmn_get32(c + 4)
                           : 0;
        if (head[8] != TMN_VERSION_DICT)
                return TMN_FILE_HDR;
        return tmn_get32(c + 8) <= TMN_DICT_ZMAX ? TMN_FILE_HDR + TMN_DICT_HDR + tmn_get32(c + 8)
                                                 : 0;
}

static int native_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                       struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)path;
        if (n > 9 && head[9] == NCOL_SCHEMA) /* records of any schema: ncol_row.c */
                return ncol_open(head, n, ctx, schema, st, err);
        unsigned ntypes, log2;
        int sized;
        int rc = tmn_file_head_get(head, n, &ntypes, &sized, &log2, err);
        if (rc < 0)
                return rc;
        struct nctx *x = calloc(1, sizeof *x);
        if (!x)
                return tm_err_set(err, -ENOMEM, "out of memory");
        size_t chunk = 0; /* a damaged chunk: no record is served */
        if (head[8] == TMN_VERSION_DICT &&
            (rc = ndict_open(head + TMN_FILE_HDR, n - TMN_FILE_HDR, &x->dict, &chunk, err)) < 0) {
                free(x);
                return rc;
        }
        x->id = atomic_fetch_add(&next_id, 1);
        x->ntypes = ntypes;
        x->sized = sized;
        x->max_rec = 1u << log2;
        struct nstate s0 = {
            .ntypes = (uint8_t)ntypes, .sized = (uint8_t)sized, .log2 = (uint8_t)log2};
        memcpy(st->b, &s0, sizeof s0);
        tm_addr_schema(schema, ntypes, sized);
        *ctx = x;
        return (int)(TMN_FILE_HDR + chunk);
}

static void native_close(void *ctx)
{
        if (ncol_ctx_is(ctx))
                return ncol_close(ctx);
        struct nctx *x = ctx;
        ndict_free(x->dict);
        free(x);
}

/* The dictionary, which a daemon's bound on open traces counts: the
 * chunk and what it decompresses to (its most, held from the first
 * block on). */
static size_t native_ctx_mem(const void *ctx)
{
        if (ncol_ctx_is(ctx))
                return 0;
        const struct nctx *x = ctx;
        return sizeof *x + (x->dict ? x->dict->chunk_len + tm_huge_round(x->dict->raw_len) : 0);
}

static int native_state_ok(const void *ctx, const struct tm_rstate *st)
{
        if (ncol_ctx_is(ctx))
                return ncol_state_ok(ctx, st);
        const struct nctx *x = ctx;
        struct nstate s;
        memcpy(&s, st->b, sizeof s);
        return s.done < x->max_rec && s.ended <= 1 && !(s.ended && s.done) &&
               s.ntypes == x->ntypes && s.sized == x->sized && s.log2 < 32 &&
               1u << s.log2 == x->max_rec;
}

/* One thread's decoded block: the records, and the block's bytes with
 * the header's ntypes and sized (what the text decoder, which has no ctx,
 * compares); id 0 when the text decoder filled it. */
struct tcache {
        uint64_t id, raw_off;
        uint32_t crc, nrec, body;
        int valid, ntypes, sized;
        int has_size; /* the size column is filled (the text decoder's fills leave it) */
        size_t cap;
        uint8_t *type;
        uint64_t *addr;
        uint32_t *size;
        uint8_t bytes[TMN_BLK_HDR + TMN_BODY_MAX];
        struct tmn_ws *ws;
};

static pthread_key_t tc_key;
static pthread_once_t tc_once = PTHREAD_ONCE_INIT;
static _Thread_local struct tcache *tc_mine;

static void tc_free(void *p)
{
        struct tcache *t = p;
        if (!t)
                return;
        free(t->addr);
        tmn_ws_free(t->ws);
        free(t);
}

static void tc_make_key(void)
{
        pthread_key_create(&tc_key, tc_free);
}

static struct tcache *tc_get(void)
{
        if (tc_mine)
                return tc_mine;
        pthread_once(&tc_once, tc_make_key);
        struct tcache *t = calloc(1, sizeof *t);
        if (!t || !(t->ws = tmn_ws_new())) {
                free(t);
                return NULL;
        }
        pthread_setspecific(tc_key, t);
        tc_mine = t;
        return t;
}

/* Room for n records: the columns in one buffer (t->addr's), the sizes
 * last, whose pages stay untouched while only the text decoder fills it. */
static int tc_room(struct tcache *t, size_t n)
{
        if (t->cap >= n)
                return 0;
        free(t->addr);
        size_t nt = (n + 7) & ~(size_t)7; /* the sizes aligned */
        t->addr = tm_huge_alloc(tm_huge_round(n * sizeof *t->addr + nt + n * sizeof *t->size));
        t->type = t->addr ? (uint8_t *)(t->addr + n) : NULL;
        t->size = t->addr ? (uint32_t *)(t->type + nt) : NULL;
        t->cap = t->addr ? n : 0;
        return t->cap ? 0 : -ENOMEM;
}

/* t filled with the block at in (whole: nrec records, body bytes), the
 * sizes too when with_size; d: the file's dictionary (NULL: the caller has
 * none, and a block that needs it is an error). */
static int tc_fill(struct tcache *t, uint64_t id, unsigned ntypes, int sized,
                   const struct tmn_dict *d, const uint8_t *in, uint32_t nrec, uint32_t body,
                   uint64_t raw_off, int with_size, struct tm_err *err)
{
        t->valid = 0;
        if (tc_room(t, nrec) < 0)
                return tm_err_set(err, -ENOMEM, "out of memory");
        size_t len = TMN_BLK_HDR + (size_t)body;
        tmn_ws_dict(t->ws, d);
        int rc = tmn_block_decode(t->ws, in, len, ntypes, sized, raw_off, t->type, t->addr,
                                  with_size ? t->size : NULL, err);
        tmn_ws_dict(t->ws, NULL);
        if (rc < 0)
                return rc;
        memcpy(t->bytes, in, len);
        t->id = id;
        t->raw_off = raw_off;
        t->crc = tmn_get32(in + 12);
        t->nrec = nrec;
        t->body = body;
        t->ntypes = (int)ntypes;
        t->sized = sized;
        t->has_size = with_size;
        t->valid = 1;
        return 0;
}

/* The block at in (whole: nrec records, body bytes) decoded, from this
 * thread's cache or into it. */
static int block_get(const struct nctx *x, const uint8_t *in, uint32_t nrec, uint32_t body,
                     uint64_t raw_off, struct tcache **out, struct tm_err *err)
{
        struct tcache *t = tc_get();
        if (!t)
                return tm_err_set(err, -ENOMEM, "out of memory");
        *out = t;
        if (t->valid && t->id == x->id && t->raw_off == raw_off && t->crc == tmn_get32(in + 12) &&
            t->nrec == nrec && t->body == body && t->has_size)
                return 0;
        const struct tmn_dict *d = NULL;
        if (x->dict && !(d = dict_for(x->dict, err)))
                return err && err->code ? err->code : -EIO;
        return tc_fill(t, x->id, x->ntypes, x->sized, d, in, nrec, body, raw_off, 1, err);
}

/* The same for the text decoder, by the block's bytes: NULL when it
 * does not decode (the generic path reports why). The text decoder has
 * no trace, so no dictionary: a block with streams against it is left
 * to the generic path, which decodes it into this cache, where the text
 * decoder then finds it by its bytes (one generic call a block). */
static struct tcache *block_by_bytes(const struct nstate *s, const uint8_t *in, uint32_t nrec,
                                     uint32_t body)
{
        struct tcache *t = tc_get();
        struct tm_err e;
        if (!t)
                return NULL;
        size_t len = TMN_BLK_HDR + (size_t)body;
        if (t->valid && t->nrec == nrec && t->body == body && t->ntypes == s->ntypes &&
            t->sized == s->sized && memcmp(t->bytes, in, len) == 0)
                return t;
        return tc_fill(t, 0, s->ntypes, s->sized, NULL, in, nrec, body, 0, 0, &e) < 0 ? NULL : t;
}

/* The end mark at in (whole): checked against the records returned. */
static int end_mark(const uint8_t *in, size_t len, int eof, const struct nstate *s,
                    uint64_t raw_off, struct tm_err *err)
{
        return tmn_end_check(in, len, eof, s->done, s->total, raw_off, err);
}

/* Where the next records are: the block at in[0..len) decoded (*t, nrec
 * records of which s->done are returned), or 0 for none (more input, the
 * end: *used says what was consumed), or an error. 1 when *t is ready. */
static int next_block(const struct nctx *x, struct nstate *s, const uint8_t *in, size_t len,
                      int eof, uint64_t raw_off, size_t *used, struct tcache **t,
                      struct tm_err *err)
{
        unsigned long long o = (unsigned long long)raw_off;
        *used = 0;
        if (s->ended) {
                if (len)
                        return tm_err_set(err, -EIO, "raw offset %llu: bytes after the end mark",
                                          o);
                return 0;
        }
        if (len < TMN_BLK_HDR)
                return eof ? tm_err_set(err, -EIO, "raw offset %llu: truncated (no end mark)", o)
                           : 0;
        uint32_t nrec, body;
        int rc = tmn_block_head(in, x->max_rec, raw_off, &nrec, &body, err);
        if (rc < 0)
                return rc;
        if (len < TMN_BLK_HDR + (size_t)body)
                return eof ? tm_err_set(err, -EIO, "raw offset %llu: truncated block", o) : 0;
        if (nrec == 0) {
                rc = end_mark(in, len, eof, s, raw_off, err);
                if (rc < 0)
                        return rc;
                s->ended = 1;
                *used = TMN_END_LEN;
                return 0;
        }
        if (s->done >= nrec)
                return tm_err_set(err, -EIO, "raw offset %llu: resumed at record %u of %u", o,
                                  s->done, nrec);
        rc = block_get(x, in, nrec, body, raw_off, t, err);
        return rc < 0 ? rc : 1;
}

/* How many of the m records the call returns, when they would end the
 * block *t at in (its header at raw_off): the end mark after the trace's
 * last block is consumed with its last record, so that the raw offset
 * after the last record is the stream's end (the index's raw size); while
 * what follows the block cannot be told from an end mark yet (it is cut by
 * the end of the input, no eof), the last record waits for more input.
 * *end receives 1 when the end mark goes with them. */
static size_t take(const struct nstate *s, const struct tcache *t, const uint8_t *in, size_t len,
                   int eof, size_t m, int *end)
{
        *end = 0;
        size_t blk = TMN_BLK_HDR + (size_t)t->body, rest = len - blk;
        if (s->done + m < t->nrec)
                return m;
        const uint8_t *p = in + blk;
        int mark = rest >= 8 && tmn_get32(p) == TMN_BLK_MAGIC && tmn_get32(p + 4) == 0;
        if (rest >= TMN_END_LEN || eof || (rest >= 8 && !mark)) {
                struct nstate after = *s;
                after.done = 0;
                after.total += m;
                struct tm_err e;
                *end = mark && rest >= TMN_END_LEN && end_mark(p, rest, eof, &after, 0, &e) == 0;
                return m;
        }
        return m - 1;
}

/* After m records of the block *t returned (end: with the end mark): the
 * state and *used. */
static void advance(struct nstate *s, const struct tcache *t, size_t m, int end, size_t *used)
{
        s->done += (uint32_t)m;
        s->total += m;
        if (s->done == t->nrec) {
                s->done = 0;
                *used = TMN_BLK_HDR + (size_t)t->body + (end ? TMN_END_LEN : 0);
                s->ended = (uint8_t)end;
        }
}

static ssize_t native_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len,
                             int eof, uint64_t raw_off, size_t *used, struct tm_rec *out,
                             size_t cap, struct tm_err *err)
{
        if (ncol_ctx_is(ctx))
                return ncol_decode(ctx, st, in, len, eof, raw_off, used, out, cap, err);
        struct nstate s;
        memcpy(&s, st->b, sizeof s);
        struct tcache *t = NULL;
        int rc = next_block(ctx, &s, in, len, eof, raw_off, used, &t, err);
        if (rc <= 0) {
                if (rc == 0)
                        memcpy(st->b, &s, sizeof s);
                return rc;
        }
        size_t m = t->nrec - s.done < cap ? t->nrec - s.done : cap;
        int end;
        m = take(&s, t, in, len, eof, m, &end);
        for (size_t i = 0; i < m; i++) {
                size_t j = s.done + i;
                out[i].kind = t->type[j];
                out[i].section = 0;
                out[i].v[0] = t->type[j];
                out[i].v[1] = t->addr[j];
                out[i].v[2] = t->size[j];
        }
        advance(&s, t, m, end, used);
        memcpy(st->b, &s, sizeof s);
        return (ssize_t)m;
}

static ssize_t native_decode_batch(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len,
                                   int eof, uint64_t raw_off, size_t *used, struct tm_rbatch *b,
                                   size_t cap, struct tm_err *err)
{
        if (ncol_ctx_is(ctx))
                return ncol_decode_batch(ctx, st, in, len, eof, raw_off, used, b, cap, err);
        const struct nctx *x = ctx;
        struct nstate s;
        memcpy(&s, st->b, sizeof s);
        b->n = 0;
        struct tcache *t = NULL;
        int rc = next_block(x, &s, in, len, eof, raw_off, used, &t, err);
        if (rc <= 0) {
                if (rc == 0)
                        memcpy(st->b, &s, sizeof s);
                return rc;
        }
        if (cap > b->cap)
                cap = b->cap;
        size_t m = t->nrec - s.done < cap ? t->nrec - s.done : cap;
        int end;
        m = take(&s, t, in, len, eof, m, &end);
        for (size_t i = 0; i < m; i++) {
                uint32_t ty = t->type[s.done + i];
                b->kind[i] = ty;
                b->col[0][i] = ty;
        }
        memcpy(b->col[1], t->addr + s.done, m * sizeof *t->addr);
        for (size_t i = 0; x->sized && i < m; i++)
                b->col[2][i] = t->size[s.done + i];
        b->n = m;
        advance(&s, t, m, end, used);
        memcpy(st->b, &s, sizeof s);
        return (ssize_t)m;
}

/* ---- the text decoder (tm_rcodec.text_of) ---- */

#define TEXT_COLS 4096 /* references rendered a step */
#define TEXT_MIN 256   /* fewer than this, after some: left to the next call */
static struct tm_tls text_slot = TM_TLS_INIT(TEXT_COLS * sizeof(struct tm_ref));

/* The records [at, at + m) of t of type kind as references into text_refs
 * (the count). */
static size_t refs_of(struct tm_ref *text_refs, const struct tcache *t, size_t at, size_t m,
                      uint32_t kind)
{
        size_t k = 0;
        for (size_t i = 0; i < m; i++) {
                text_refs[k] = (struct tm_ref){.addr = t->addr[at + i], .type = t->type[at + i]};
                k += t->type[at + i] == kind;
        }
        return k;
}

/* The ascii lines (din's) of the records at in: whole blocks' records
 * from this thread's block cache, through the din renderer (render.h);
 * kind >= 0: only that type's. Stops where decode() must go on. */
static size_t native_text(struct tm_rstate *st, const uint8_t *in, size_t len, uint64_t raw_off,
                          size_t *used, const struct tm_text_plan *p, char *dst, size_t cap,
                          size_t maxrec, long kind, size_t *nrec)
{
        (void)p;
        (void)raw_off;
        *used = *nrec = 0;
        if (ncol_state_is(st)) /* schema 2: the generic path renders its lines */
                return 0;
        struct nstate s;
        memcpy(&s, st->b, sizeof s);
        size_t w = 0, off = 0, done = 0, lines = 0;
        const uint8_t *seen = NULL; /* the block checked against the cache in this call */
        struct tcache *t = NULL;
        struct tm_ref *text_refs = tm_tls_get(&text_slot);
        *used = 0;
        *nrec = 0;
        if (!text_refs) /* decode() goes on, and reports it */
                return 0;
        while (lines < maxrec && !s.ended && cap - w >= TM_RENDER_SLACK + TM_DIN_LINE_MAX) {
                size_t n = (cap - w - TM_RENDER_SLACK) / TM_DIN_LINE_MAX;
                if (done && n < TEXT_MIN)
                        break;
                n = n < TEXT_COLS ? n : TEXT_COLS;
                n = n < maxrec - lines ? n : maxrec - lines;
                const uint8_t *b = in + off;
                uint32_t nr, body;
                struct tm_err e;
                if (len - off < TMN_BLK_HDR ||
                    tmn_block_head(b, 1u << s.log2, 0, &nr, &body, &e) < 0 || nr == 0 ||
                    len - off < TMN_BLK_HDR + (size_t)body || s.done >= nr)
                        break;
                if (b != seen && !(t = block_by_bytes(&s, b, nr, body)))
                        break;
                seen = b;
                int end;
                size_t m = nr - s.done < n ? nr - s.done : n;
                m = take(&s, t, b, len - off, 0, m, &end);
                if (m == 0)
                        break;
                size_t k = m;
                if (kind < 0) /* the columns as they are */
                        w += tm_render_din_cols(dst + w, t->type + s.done, t->addr + s.done, m);
                else {
                        k = refs_of(text_refs, t, s.done, m, (uint32_t)kind);
                        w += tm_render_din_batch(dst + w, text_refs, k);
                }
                size_t u = 0;
                advance(&s, t, m, end, &u);
                off += u;
                done += m;
                lines += k;
        }
        memcpy(st->b, &s, sizeof s);
        *used = off;
        *nrec = done;
        return w;
}

static tm_rtext_fn *native_text_of(void)
{
        return native_text;
}

const struct tm_rcodec tm_rcodec_native = {
    .name = "native",
    .suffix = ".tmn",
    .family = &tm_family_address,
    .probe = native_probe,
    .open = native_open,
    .close = native_close,
    .state_size = sizeof(struct nstate),
    .state_ok = native_state_ok,
    .decode = native_decode,
    .enc_open = tmn_enc_open,
    .enc_put = tmn_enc_put,
    .enc_finish = tmn_enc_finish,
    .enc_free = tmn_enc_free,
    .enc_schema = tmn_enc_schema,
    .enc_params = tmn_enc_params,
    .enc_schema_for = tmn_enc_schema_for,
    .enc_open_for = tmn_enc_open_for,
    .text_of = native_text_of,
    .text_kinds = 1,
    .decode_batch = native_decode_batch,
    .head_max = NCOL_HEAD_MAX > TMN_HEAD_MAX ? NCOL_HEAD_MAX : TMN_HEAD_MAX,
    .head_need = native_head_need,
    .blobs = ncol_blobs,
    .storage = tmn_storage,
    .ctx_mem = native_ctx_mem,
};
