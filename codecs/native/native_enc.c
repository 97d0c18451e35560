/* native_enc: the native row's encoder (native.h).
 *
 * Records are buffered into the columns of one block (2^log2 of them), a
 * slot; a full slot is encoded as a block (one whose body would pass
 * TMN_BODY_MAX as two halves, recursively) into the slot's bytes, which go
 * to the sink in the order of the slots. Without threads the caller
 * encodes each slot as it fills. With k threads there are k + 1 slots in
 * a ring: the caller fills one while the threads encode the others, each
 * thread in its own workspace, and before the caller fills a slot again
 * it waits for that slot's block and hands it to the sink. So the bytes
 * are the same with any number of threads, in order, and memory is
 * bounded: k + 1 slots (13 bytes a record, 13.6 MiB each at 2^20 records,
 * and the block's bytes) and k workspaces (native.h, "Memory"). */
#include "native.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../address/arec.h"
#include "ncol.h"

#define ENC_THREADS_MAX 8

/* Schema 2 (any trace but an address one) keeps its blocks at 2^16
 * records at most. */
static int log2_max_for(const struct tm_schema *in)
{
        return ncol_src_is_addr(in) ? TMN_LOG_MAX : NCOL_LOG_MAX;
}

const struct tm_renc_param tmn_enc_params[] = {
    [TMN_P_LEVEL] = {"level", "zstd level of the streams: higher is smaller and slower", 1, 22,
                     TMN_LEVEL_DEFAULT},
    [TMN_P_LOG2] = {"block-log2",
                    "2^N records a block (at most 2^16 but in address traces): larger is "
                    "smaller, a seek decodes its block",
                    TMN_LOG_MIN, TMN_LOG_MAX, TMN_LOG_DEFAULT, log2_max_for},
    {NULL, NULL, 0, 0, 0, NULL},
};

enum slot_state { S_FREE, S_READY, S_BUSY, S_DONE };

struct slot {
        uint8_t *type;
        uint64_t *addr;
        uint32_t *size; /* NULL when unsized */
        size_t n;       /* records */
        uint64_t first; /* the number of its first record, for messages */
        uint64_t seq;   /* the order it was handed to the threads in */
        int state;      /* enum slot_state */
        int rc;         /* its encoding's outcome, err the message */
        struct tm_err err;
        uint8_t *out; /* its block (or blocks) */
        size_t len, cap;
};

struct tm_renc {
        struct ncol_enc *col; /* records of any other schema: schema 2 (ncol.h), or NULL */
        tm_rsink sink;
        void *arg;
        int level, sized;
        unsigned ntypes;
        size_t cap;        /* records a block */
        uint64_t total;    /* records put */
        struct tmn_ws *ws; /* the caller's, without threads */
        unsigned nthr;     /* threads running */
        unsigned nslot;    /* nthr + 1 */
        unsigned cur;      /* the slot being filled */
        uint64_t seq;
        int quit;
        struct slot slot[ENC_THREADS_MAX + 1];
        pthread_t thr[ENC_THREADS_MAX];
        pthread_mutex_t mu;
        pthread_cond_t work, done;
};

/* ---- one slot ---- */

static int slot_alloc(struct slot *s, size_t cap, int sized)
{
        s->type = malloc(cap);
        s->addr = malloc(cap * sizeof *s->addr);
        s->size = sized ? malloc(cap * sizeof *s->size) : NULL;
        return s->type && s->addr && (s->size || !sized) ? 0 : -ENOMEM;
}

static void slot_release(struct slot *s)
{
        free(s->type);
        free(s->addr);
        free(s->size);
        free(s->out);
}

/* The slot's records [lo, lo + n) appended to its bytes as blocks: one,
 * or halves when its body would be too long. */
static int slot_flush(const struct tm_renc *e, struct tmn_ws *ws, struct slot *s, size_t lo,
                      size_t n)
{
        struct tmn_cols c = {s->type + lo, s->addr + lo, s->size ? s->size + lo : NULL};
        const uint8_t *p;
        size_t len;
        int rc = tmn_block_encode(ws, &c, n, e->sized, e->level, &p, &len, NULL);
        if (rc == -EFBIG && n > 1) {
                rc = slot_flush(e, ws, s, lo, n / 2);
                return rc < 0 ? rc : slot_flush(e, ws, s, lo + n / 2, n - n / 2);
        }
        if (rc < 0)
                return tm_err_set(&s->err, rc, "native: encoding the block of record %llu failed",
                                  (unsigned long long)(s->first + lo));
        if (s->cap - s->len < len) {
                size_t cap = s->len + len > 2 * s->cap ? s->len + len : 2 * s->cap;
                uint8_t *q = realloc(s->out, cap);
                if (!q)
                        return tm_err_set(&s->err, -ENOMEM, "out of memory");
                s->out = q;
                s->cap = cap;
        }
        memcpy(s->out + s->len, p, len);
        s->len += len;
        return 0;
}

static int slot_encode(const struct tm_renc *e, struct tmn_ws *ws, struct slot *s)
{
        s->len = 0;
        if (!ws)
                return tm_err_set(&s->err, -ENOMEM, "out of memory");
        return slot_flush(e, ws, s, 0, s->n);
}

/* ---- the threads ---- */

/* The slot handed over first of those waiting, or NULL. Under mu. */
static struct slot *next_ready(struct tm_renc *e)
{
        struct slot *best = NULL;
        for (unsigned i = 0; i < e->nslot; i++) {
                struct slot *s = &e->slot[i];
                if (s->state == S_READY && (!best || s->seq < best->seq))
                        best = s;
        }
        return best;
}

static void *enc_thread(void *arg)
{
        struct tm_renc *e = arg;
        struct tmn_ws *ws = tmn_ws_new();
        pthread_mutex_lock(&e->mu);
        for (;;) {
                struct slot *s;
                while (!(s = next_ready(e)) && !e->quit)
                        pthread_cond_wait(&e->work, &e->mu);
                if (!s)
                        break;
                s->state = S_BUSY;
                pthread_mutex_unlock(&e->mu);
                int rc = slot_encode(e, ws, s);
                pthread_mutex_lock(&e->mu);
                s->rc = rc;
                s->state = S_DONE;
                pthread_cond_broadcast(&e->done);
        }
        pthread_mutex_unlock(&e->mu);
        tmn_ws_free(ws);
        return NULL;
}

static void threads_stop(struct tm_renc *e)
{
        if (!e->nthr)
                return;
        pthread_mutex_lock(&e->mu);
        e->quit = 1;
        pthread_cond_broadcast(&e->work);
        pthread_mutex_unlock(&e->mu);
        for (unsigned i = 0; i < e->nthr; i++)
                pthread_join(e->thr[i], NULL);
        e->nthr = 0;
        pthread_cond_destroy(&e->work);
        pthread_cond_destroy(&e->done);
        pthread_mutex_destroy(&e->mu);
}

/* Up to want threads (fewer when they cannot start: the caller encodes
 * what they do not). */
static void threads_start(struct tm_renc *e, unsigned want)
{
        if (!want)
                return;
        pthread_mutex_init(&e->mu, NULL);
        pthread_cond_init(&e->work, NULL);
        pthread_cond_init(&e->done, NULL);
        while (e->nthr < want && pthread_create(&e->thr[e->nthr], NULL, enc_thread, e) == 0)
                e->nthr++;
        if (!e->nthr) {
                pthread_cond_destroy(&e->work);
                pthread_cond_destroy(&e->done);
                pthread_mutex_destroy(&e->mu);
        }
}

/* ---- the slots in order ---- */

/* Wait for slot s's block, if it has one in the making, and hand it to
 * the sink; s is free after. */
static int slot_collect(struct tm_renc *e, struct slot *s, struct tm_err *err)
{
        if (e->nthr) {
                pthread_mutex_lock(&e->mu);
                while (s->state == S_READY || s->state == S_BUSY)
                        pthread_cond_wait(&e->done, &e->mu);
                pthread_mutex_unlock(&e->mu);
        }
        if (s->state != S_DONE)
                return 0;
        s->state = S_FREE;
        s->n = 0;
        if (s->rc < 0) {
                *err = s->err;
                return s->rc;
        }
        int rc = e->sink(e->arg, s->out, s->len);
        return rc < 0 ? tm_err_set(err, rc, "native: writing a block failed") : 0;
}

/* The slot being filled encoded (by the caller, or handed to the
 * threads), and the next one made free for filling. */
static int slot_submit(struct tm_renc *e, struct tm_err *err)
{
        struct slot *s = &e->slot[e->cur];
        if (!s->n)
                return 0;
        if (!e->nthr) {
                s->rc = slot_encode(e, e->ws, s);
                s->state = S_DONE;
                return slot_collect(e, s, err);
        }
        pthread_mutex_lock(&e->mu);
        s->seq = e->seq++;
        s->state = S_READY;
        pthread_cond_signal(&e->work);
        pthread_mutex_unlock(&e->mu);
        e->cur = (e->cur + 1) % e->nslot;
        return slot_collect(e, &e->slot[e->cur], err);
}

/* ---- the row's calls ---- */

static void enc_release(struct tm_renc *e)
{
        ncol_enc_free(e->col);
        threads_stop(e);
        for (unsigned i = 0; i < ENC_THREADS_MAX + 1; i++)
                slot_release(&e->slot[i]);
        tmn_ws_free(e->ws);
        free(e);
}

static int enc_start(unsigned ntypes, int sized, unsigned log2, int level, unsigned threads,
                     tm_rsink sink, void *arg, struct tm_renc **out, struct tm_err *err)
{
        struct tm_renc *e = calloc(1, sizeof *e);
        if (!e)
                return tm_err_set(err, -ENOMEM, "out of memory");
        e->sink = sink;
        e->arg = arg;
        e->level = level;
        e->sized = sized;
        e->ntypes = ntypes;
        e->cap = (size_t)1 << log2;
        threads_start(e, threads < ENC_THREADS_MAX ? threads : ENC_THREADS_MAX);
        e->nslot = e->nthr + 1;
        int rc = e->nthr || (e->ws = tmn_ws_new()) ? 0 : -ENOMEM;
        for (unsigned i = 0; rc == 0 && i < e->nslot; i++)
                rc = slot_alloc(&e->slot[i], e->cap, sized);
        if (rc < 0) {
                enc_release(e);
                return tm_err_set(err, -ENOMEM, "out of memory");
        }
        uint8_t h[TMN_FILE_HDR];
        tmn_file_head_put(h, ntypes, sized, log2);
        rc = sink(arg, h, sizeof h);
        if (rc < 0) {
                enc_release(e);
                return tm_err_set(err, rc, "native: writing the header failed");
        }
        *out = e;
        return 0;
}

/* Encoding names: bK (blocks of 2^K records) with an optional /zL (zstd
 * level L, 1..22). */
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

int tmn_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                 struct tm_err *err)
{
        unsigned log2;
        int level;
        if (enc_name(enc, &log2, &level) < 0)
                return tm_err_set(err, -EINVAL, "native: no encoding %s (bK[/zL]: K %d..%d)", enc,
                                  TMN_LOG_MIN, TMN_LOG_MAX);
        return enc_start(TM_NTYPES, 1, log2, level, 0, sink, arg, out, err);
}

int tmn_enc_open_src(const struct tm_renc_src *src, const char *enc, tm_rsink sink, void *arg,
                     struct tm_renc **out, struct tm_err *err)
{
        if (ncol_src_is_addr(src->schema))
                return tmn_enc_open(enc, sink, arg, out, err);
        unsigned log2;
        int level;
        if (enc_name(enc, &log2, &level) < 0)
                return tm_err_set(err, -EINVAL, "native: no encoding %s (bK[/zL]: K %d..%d)", enc,
                                  TMN_LOG_MIN, TMN_LOG_MAX);
        struct tm_renc *e = calloc(1, sizeof *e);
        if (!e)
                return tm_err_set(err, -ENOMEM, "out of memory");
        int rc = ncol_enc_open(src, log2 < NCOL_LOG_MAX ? log2 : NCOL_LOG_MAX, level, sink, arg,
                               &e->col, err);
        if (rc < 0) {
                free(e);
                return rc;
        }
        *out = e;
        return 0;
}

void tmn_enc_schema(struct tm_schema *s)
{
        tm_addr_schema(s, TM_NTYPES, 1);
}

/* The address schema of in's types and sizes when in is one (its kinds
 * the first of tm_addr_schema's), so that its records pass as they are;
 * else every type, with sizes when in has them. */
void tmn_enc_schema_for(const struct tm_schema *in, struct tm_schema *takes)
{
        if (!ncol_src_is_addr(in)) { /* schema 2 takes in's records as they are */
                *takes = *in;
                return;
        }
        int sized = tm_schema_field(in, "size") >= 0;
        unsigned nt = in->nkinds;
        if (nt < 1 || nt > TM_NTYPES || strcmp(in->name, "address") != 0)
                nt = TM_NTYPES;
        tm_addr_schema(takes, nt, sized);
        for (unsigned k = 0; k < nt && nt < TM_NTYPES; k++)
                if (strcmp(in->kind[k].name, takes->kind[k].name) != 0) {
                        tm_addr_schema(takes, TM_NTYPES, sized);
                        return;
                }
}

int tmn_enc_open_for(const struct tm_renc_args *a, tm_rsink sink, void *arg, struct tm_renc **out,
                     struct tm_err *err)
{
        for (int p = 0; tmn_enc_params[p].name; p++)
                if (a->v[p] < tmn_enc_params[p].min || a->v[p] > tmn_enc_params[p].max)
                        return tm_err_set(err, -EINVAL, "native: %s %d is not in %d..%d",
                                          tmn_enc_params[p].name, a->v[p], tmn_enc_params[p].min,
                                          tmn_enc_params[p].max);
        if (!ncol_src_is_addr(a->in)) {
                struct tm_renc *e = calloc(1, sizeof *e);
                if (!e)
                        return tm_err_set(err, -ENOMEM, "out of memory");
                struct tm_renc_src src = {a->in, a->blob, a->nblobs};
                unsigned log2 = (unsigned)a->v[TMN_P_LOG2];
                int rc = ncol_enc_open(&src, log2 < NCOL_LOG_MAX ? log2 : NCOL_LOG_MAX,
                                       a->v[TMN_P_LEVEL], sink, arg, &e->col, err);
                if (rc < 0) {
                        free(e);
                        return rc;
                }
                *out = e;
                return 0;
        }
        struct tm_schema s;
        tmn_enc_schema_for(a->in, &s);
        return enc_start(s.nkinds, s.nfields > 2, (unsigned)a->v[TMN_P_LOG2], a->v[TMN_P_LEVEL],
                         a->threads, sink, arg, out, err);
}

int tmn_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                struct tm_err *err)
{
        if (e->col)
                return ncol_enc_put(e->col, r, n, idx, err);
        for (size_t i = 0; i < n; i++) {
                const struct tm_rec *x = &r[i];
                unsigned long long k = (unsigned long long)(idx + i);
                if (x->kind >= e->ntypes || x->v[0] != x->kind)
                        return tm_err_set(err, -EINVAL, "record %llu: type %llu, kind %u", k,
                                          (unsigned long long)x->v[0], x->kind);
                if (e->sized && x->v[2] > UINT32_MAX)
                        return tm_err_set(err, -EINVAL, "record %llu: size %llu", k,
                                          (unsigned long long)x->v[2]);
                struct slot *s = &e->slot[e->cur];
                if (!s->n)
                        s->first = e->total;
                s->type[s->n] = (uint8_t)x->kind;
                s->addr[s->n] = x->v[1];
                if (e->sized)
                        s->size[s->n] = (uint32_t)x->v[2];
                e->total++;
                if (++s->n == e->cap) {
                        int rc = slot_submit(e, err);
                        if (rc < 0)
                                return rc;
                }
        }
        return 0;
}

int tmn_enc_finish(struct tm_renc *e, struct tm_err *err)
{
        if (e->col) {
                int rc = ncol_enc_finish(e->col, err); /* which frees it */
                e->col = NULL;
                free(e);
                return rc;
        }
        int rc = slot_submit(e, err);
        for (unsigned i = 1; rc == 0 && i < e->nslot; i++)
                rc = slot_collect(e, &e->slot[(e->cur + i) % e->nslot], err);
        if (rc == 0)
                rc = tmn_end_write(e->sink, e->arg, e->total, err);
        enc_release(e);
        return rc;
}

void tmn_enc_free(struct tm_renc *e)
{
        enc_release(e);
}
