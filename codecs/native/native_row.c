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
 * Encoding: records are buffered into columns of one block (2^log2 of
 * them) and written a block at a time; a block whose body would pass
 * TMN_BODY_MAX is written as two halves. */
#include "native.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../address/arec.h"

/* ---- decoding ---- */

struct nctx {
        uint64_t id; /* this open's serial: the block cache's key */
        unsigned ntypes;
        int sized;
        uint32_t max_rec;
};

/* The decoder state (struct tm_rstate's first bytes). */
struct nstate {
        uint64_t total; /* records returned before this call */
        uint32_t done;  /* of them, in the block at the raw offset */
        uint32_t ended; /* 1: the end mark is consumed */
};

static _Atomic uint64_t next_id = 1;

static int native_probe(const uint8_t *head, size_t n)
{
        return n >= 8 && memcmp(head, TMN_MAGIC, 8) == 0;
}

static int native_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                       struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)path;
        unsigned ntypes, log2;
        int sized;
        int rc = tmn_file_head_get(head, n, &ntypes, &sized, &log2, err);
        if (rc < 0)
                return rc;
        struct nctx *x = malloc(sizeof *x);
        if (!x)
                return tm_err_set(err, -ENOMEM, "out of memory");
        x->id = atomic_fetch_add(&next_id, 1);
        x->ntypes = ntypes;
        x->sized = sized;
        x->max_rec = 1u << log2;
        memset(st->b, 0, sizeof(struct nstate));
        tm_addr_schema(schema, ntypes, sized);
        *ctx = x;
        return TMN_FILE_HDR;
}

static void native_close(void *ctx)
{
        free(ctx);
}

static int native_state_ok(const void *ctx, const struct tm_rstate *st)
{
        const struct nctx *x = ctx;
        struct nstate s;
        memcpy(&s, st->b, sizeof s);
        return s.done < x->max_rec && s.ended <= 1 && !(s.ended && s.done);
}

/* One thread's decoded block. */
struct tcache {
        uint64_t id, raw_off;
        uint32_t crc, nrec, body;
        int valid;
        size_t cap;
        uint8_t *type;
        uint64_t *addr;
        uint32_t *size;
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
        free(t->type);
        free(t->addr);
        free(t->size);
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

static int tc_room(struct tcache *t, size_t n)
{
        if (t->cap >= n)
                return 0;
        free(t->type);
        free(t->addr);
        free(t->size);
        t->type = malloc(n);
        t->addr = malloc(n * sizeof *t->addr);
        t->size = malloc(n * sizeof *t->size);
        t->cap = t->type && t->addr && t->size ? n : 0;
        return t->cap ? 0 : -ENOMEM;
}

static uint32_t rd32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The block at in (whole: nrec records, body bytes) decoded, from this
 * thread's cache or into it. */
static int block_get(const struct nctx *x, const uint8_t *in, uint32_t nrec, uint32_t body,
                     uint64_t raw_off, struct tcache **out, struct tm_err *err)
{
        struct tcache *t = tc_get();
        if (!t)
                return tm_err_set(err, -ENOMEM, "out of memory");
        uint32_t crc = rd32(in + 12);
        *out = t;
        if (t->valid && t->id == x->id && t->raw_off == raw_off && t->crc == crc &&
            t->nrec == nrec && t->body == body)
                return 0;
        t->valid = 0;
        if (tc_room(t, nrec) < 0)
                return tm_err_set(err, -ENOMEM, "out of memory");
        int rc = tmn_block_decode(t->ws, in, TMN_BLK_HDR + (size_t)body, x->ntypes, x->sized,
                                  raw_off, t->type, t->addr, t->size, err);
        if (rc < 0)
                return rc;
        *t = (struct tcache){.id = x->id,
                             .raw_off = raw_off,
                             .crc = crc,
                             .nrec = nrec,
                             .body = body,
                             .valid = 1,
                             .cap = t->cap,
                             .type = t->type,
                             .addr = t->addr,
                             .size = t->size,
                             .ws = t->ws};
        return 0;
}

static uint64_t rd64(const uint8_t *p)
{
        return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* The end mark at in (whole): checked against the records returned. */
static int end_mark(const uint8_t *in, size_t len, int eof, const struct nstate *s,
                    uint64_t raw_off, struct tm_err *err)
{
        unsigned long long o = (unsigned long long)raw_off;
        uint8_t want[TMN_END_LEN];
        tmn_end_put(want, rd64(in + TMN_BLK_HDR));
        if (memcmp(want, in, TMN_END_LEN) != 0)
                return tm_err_set(err, -EIO, "raw offset %llu: end mark checksum mismatch", o);
        if (s->done || rd64(in + TMN_BLK_HDR) != s->total)
                return tm_err_set(
                    err, -EIO, "raw offset %llu: end mark says %llu records, %llu decoded", o,
                    (unsigned long long)rd64(in + TMN_BLK_HDR), (unsigned long long)s->total);
        if (len > TMN_END_LEN || (eof && len < TMN_END_LEN))
                return tm_err_set(err, -EIO, "raw offset %llu: bytes after the end mark",
                                  o + TMN_END_LEN);
        return 0;
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
        int mark = rest >= 8 && rd32(p) == TMN_BLK_MAGIC && rd32(p + 4) == 0;
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
                s->ended = (uint32_t)end;
        }
}

static ssize_t native_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len,
                             int eof, uint64_t raw_off, size_t *used, struct tm_rec *out,
                             size_t cap, struct tm_err *err)
{
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

/* ---- encoding ---- */

struct tm_renc {
        tm_rsink sink;
        void *arg;
        int level;
        size_t n, cap; /* records buffered, a block's */
        uint8_t *type;
        uint64_t *addr;
        uint32_t *size;
        struct tmn_ws *ws;
        uint64_t total;
};

/* Encoding names: bK (blocks of 2^K records, K 4..20) with an optional
 * /zL (zstd level L, 1..22; default 19). */
static int enc_name(const char *enc, unsigned *log2, int *level)
{
        *log2 = TMN_LOG_DEFAULT;
        *level = TMN_LEVEL_DEFAULT;
        if (!enc)
                return 0;
        char *end;
        if (enc[0] != 'b')
                return -1;
        unsigned long k = strtoul(enc + 1, &end, 10);
        if (end == enc + 1 || k < TMN_LOG_MIN || k > TMN_LOG_MAX)
                return -1;
        *log2 = (unsigned)k;
        if (!*end)
                return 0;
        if (end[0] != '/' || end[1] != 'z')
                return -1;
        const char *l = end + 2;
        unsigned long z = strtoul(l, &end, 10);
        if (end == l || *end || z < 1 || z > 22)
                return -1;
        *level = (int)z;
        return 0;
}

static void enc_release(struct tm_renc *e)
{
        free(e->type);
        free(e->addr);
        free(e->size);
        tmn_ws_free(e->ws);
        free(e);
}

static int native_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                           struct tm_err *err)
{
        unsigned log2;
        int level;
        if (enc_name(enc, &log2, &level) < 0)
                return tm_err_set(err, -EINVAL, "native: no encoding %s (bK[/zL]: K 4..20)", enc);
        struct tm_renc *e = calloc(1, sizeof *e);
        if (!e)
                return tm_err_set(err, -ENOMEM, "out of memory");
        e->sink = sink;
        e->arg = arg;
        e->level = level;
        e->cap = (size_t)1 << log2;
        e->type = malloc(e->cap);
        e->addr = malloc(e->cap * sizeof *e->addr);
        e->size = malloc(e->cap * sizeof *e->size);
        e->ws = tmn_ws_new();
        if (!e->type || !e->addr || !e->size || !e->ws) {
                enc_release(e);
                return tm_err_set(err, -ENOMEM, "out of memory");
        }
        uint8_t h[TMN_FILE_HDR];
        tmn_file_head_put(h, TM_NTYPES, 1, log2);
        int rc = sink(arg, h, sizeof h);
        if (rc < 0) {
                enc_release(e);
                return tm_err_set(err, rc, "native: writing the header failed");
        }
        *out = e;
        return 0;
}

/* The buffered records [lo, lo + n) as blocks: one, or halves when its
 * body would be too long. */
static int enc_flush(struct tm_renc *e, size_t lo, size_t n, struct tm_err *err)
{
        struct tmn_cols c = {e->type + lo, e->addr + lo, e->size + lo};
        const uint8_t *p;
        size_t len;
        int rc = tmn_block_encode(e->ws, &c, n, 1, e->level, &p, &len, NULL);
        if (rc == -EFBIG && n > 1) {
                rc = enc_flush(e, lo, n / 2, err);
                return rc < 0 ? rc : enc_flush(e, lo + n / 2, n - n / 2, err);
        }
        if (rc < 0)
                return tm_err_set(err, rc, "native: encoding block of record %llu failed",
                                  (unsigned long long)(e->total + lo));
        rc = e->sink(e->arg, p, len);
        return rc < 0 ? tm_err_set(err, rc, "native: writing a block failed") : 0;
}

static int enc_block(struct tm_renc *e, struct tm_err *err)
{
        if (!e->n)
                return 0;
        int rc = enc_flush(e, 0, e->n, err);
        e->total += e->n;
        e->n = 0;
        return rc;
}

static int native_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                          struct tm_err *err)
{
        for (size_t i = 0; i < n; i++) {
                const struct tm_rec *x = &r[i];
                unsigned long long k = (unsigned long long)(idx + i);
                if (x->kind >= TM_NTYPES || x->v[0] != x->kind)
                        return tm_err_set(err, -EINVAL, "record %llu: type %llu, kind %u", k,
                                          (unsigned long long)x->v[0], x->kind);
                if (x->v[2] > UINT32_MAX)
                        return tm_err_set(err, -EINVAL, "record %llu: size %llu", k,
                                          (unsigned long long)x->v[2]);
                e->type[e->n] = (uint8_t)x->kind;
                e->addr[e->n] = x->v[1];
                e->size[e->n] = (uint32_t)x->v[2];
                if (++e->n == e->cap) {
                        int rc = enc_block(e, err);
                        if (rc < 0)
                                return rc;
                }
        }
        return 0;
}

static int native_enc_finish(struct tm_renc *e, struct tm_err *err)
{
        int rc = enc_block(e, err);
        if (rc == 0) {
                uint8_t m[TMN_END_LEN];
                tmn_end_put(m, e->total);
                rc = e->sink(e->arg, m, sizeof m);
                if (rc < 0)
                        tm_err_set(err, rc, "native: writing the end mark failed");
        }
        enc_release(e);
        return rc;
}

static void native_enc_free(struct tm_renc *e)
{
        enc_release(e);
}

static const char *const native_encodings[] = {"b20", NULL};

static void native_enc_schema(struct tm_schema *s)
{
        tm_addr_schema(s, TM_NTYPES, 1);
}

const struct tm_rcodec tm_rcodec_native = {
    .name = "native",
    .suffix = ".tmn",
    .family = "address",
    .probe = native_probe,
    .open = native_open,
    .close = native_close,
    .state_size = sizeof(struct nstate),
    .state_ok = native_state_ok,
    .decode = native_decode,
    .enc_open = native_enc_open,
    .enc_put = native_enc_put,
    .enc_finish = native_enc_finish,
    .enc_free = native_enc_free,
    .encodings = native_encodings,
    .enc_schema = native_enc_schema,
    .decode_batch = native_decode_batch,
};
