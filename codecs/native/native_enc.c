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
 * and the block's bytes) and k workspaces (native.h, "Memory").
 *
 * The dictionary (native.h; docs/formats/native.md, "The dictionary
 * chunk"): the first blocks, up to a window of WIN_BLOCKS blocks,
 * WIN_REC records or WIN_RAW bytes of raw streams, are kept (their bytes
 * and their raw streams) instead of written. Then the raw streams of the
 * last predicted blocks before the window's last predicted block (the
 * test), up to TMN_DICT_MAX bytes, become the dictionary, every kept
 * block is stored again against it (each stream where that is shorter),
 * and the file gets the dictionary when that is smaller over the window,
 * chunk included, and saves at least 1/DICT_TEST_SHARE of the test
 * block; else it is written as without one (version 1, the same bytes).
 * The decision is taken in the caller, in block order, so the bytes are
 * the same with any number of threads. */
#include "native.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../address/arec.h"
#include "ncol.h"

#define ENC_THREADS_MAX 8
#define WIN_BLOCKS 64       /* blocks kept before the dictionary is chosen, at most */
#define WIN_REC (1u << 23)  /* records of them */
#define WIN_RAW (48u << 20) /* bytes of their raw streams */
#define DICT_TEST_SHARE 32  /* the test block saves 1/32 of its bytes, at least */

/* Schema 2 (any trace but an address one) keeps its blocks at 2^16
 * records at most. */
static int log2_max_for(const struct tm_schema *in)
{
        return ncol_src_is_addr(in) ? TMN_LOG_MAX : NCOL_LOG_MAX;
}

/* Schema 2 writes no dictionary. */
static int dict_max_for(const struct tm_schema *in)
{
        return ncol_src_is_addr(in) ? 1 : 0;
}

const struct tm_renc_param tmn_enc_params[] = {
    [TMN_P_LEVEL] = {"level", "zstd level of the streams: higher is smaller and slower", 1, 22,
                     TMN_LEVEL_DEFAULT},
    [TMN_P_DICT] = {"dict",
                    "1: a dictionary of the first blocks' streams when it pays (address "
                    "traces), 0: none",
                    0, 1, 1, dict_max_for},
    [TMN_P_LOG2] = {"block-log2",
                    "2^N records a block (at most 2^16 but in address traces): larger is "
                    "smaller, a seek decodes its block",
                    TMN_LOG_MIN, TMN_LOG_MAX, TMN_LOG_DEFAULT, log2_max_for},
    {NULL, NULL, 0, 0, 0, NULL},
};

enum slot_state { S_FREE, S_READY, S_BUSY, S_DONE };
enum dict_state { D_WINDOW, D_ON, D_OFF };

/* A block kept for the window: its bytes and, when predicted, its raw
 * streams (end to end, rlen[] each). */
struct kept {
        uint8_t *blk, *raw;
        size_t len, rlen[TMN_NSTREAMS];
};

struct kepts {
        struct kept *k;
        unsigned n, cap;
};

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
        int keep; /* window: its blocks kept in kept, not out */
        struct kepts kept;
        const struct tmn_cdict *cd; /* the file's dictionary, or NULL */
};

struct tm_renc {
        struct ncol_enc *col; /* records of any other schema: schema 2 (ncol.h), or NULL */
        tm_rsink sink;
        void *arg;
        int level, sized;
        unsigned ntypes;
        size_t cap;              /* records a block */
        uint64_t total;          /* records put */
        struct tmn_ws *ws;       /* the caller's, without threads */
        struct tmn_dpass *dp;    /* the caller's: the window's and kept blocks' dictionary pass */
        unsigned ntypes_h, log2; /* the header's */
        int dstate;              /* enum dict_state */
        struct kepts win;        /* the window's blocks */
        uint64_t win_rec;
        size_t win_raw;
        struct tmn_dict dict;
        struct tmn_cdict *cd;
        unsigned nthr;  /* threads running */
        unsigned nslot; /* nthr + 1 */
        unsigned cur;   /* the slot being filled */
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

static void kepts_free(struct kepts *k)
{
        for (unsigned i = 0; i < k->n; i++) {
                free(k->k[i].blk);
                free(k->k[i].raw);
        }
        free(k->k);
        memset(k, 0, sizeof *k);
}

static void slot_release(struct slot *s)
{
        free(s->type);
        free(s->addr);
        free(s->size);
        free(s->out);
        kepts_free(&s->kept);
}

/* A block (and ws's raw streams, when it is predicted) onto k. */
static int kepts_add(struct kepts *k, struct tmn_ws *ws, const uint8_t *p, size_t len)
{
        if (k->n == k->cap) {
                unsigned cap = k->cap ? 2 * k->cap : 8;
                struct kept *q = realloc(k->k, cap * sizeof *q);
                if (!q)
                        return -ENOMEM;
                k->k = q;
                k->cap = cap;
        }
        struct kept *e = &k->k[k->n];
        memset(e, 0, sizeof *e);
        struct tmn_raw r;
        tmn_ws_streams(ws, &r);
        size_t total = 0;
        int pred = p[TMN_BLK_HDR] != TMN_PLAIN;
        for (int s = 0; pred && s < TMN_NSTREAMS; s++)
                total += e->rlen[s] = r.len[s];
        e->blk = malloc(len);
        e->raw = malloc(total ? total : 1);
        if (!e->blk || !e->raw) {
                free(e->blk);
                free(e->raw);
                return -ENOMEM;
        }
        memcpy(e->blk, p, len);
        e->len = len;
        for (int s = 0, at = 0; pred && s < TMN_NSTREAMS; at += (int)r.len[s], s++)
                memcpy(e->raw + at, r.p[s], r.len[s]);
        k->n++;
        return 0;
}

/* The raw streams of a kept block. */
static void kept_raw(const struct kept *e, struct tmn_raw *r)
{
        size_t at = 0;
        for (int s = 0; s < TMN_NSTREAMS; s++) {
                r->p[s] = e->raw + at;
                r->len[s] = e->rlen[s];
                at += e->rlen[s];
        }
}

static size_t kept_rawsum(const struct kept *e)
{
        size_t t = 0;
        for (int s = 0; s < TMN_NSTREAMS; s++)
                t += e->rlen[s];
        return t;
}

/* The slot's records [lo, lo + n) appended to its bytes as blocks: one,
 * or halves when its body would be too long. */
static int slot_flush(const struct tm_renc *e, struct tmn_ws *ws, struct tmn_dpass *dp,
                      struct slot *s, size_t lo, size_t n)
{
        struct tmn_cols c = {s->type + lo, s->addr + lo, s->size ? s->size + lo : NULL};
        const uint8_t *p;
        size_t len;
        int rc = tmn_block_encode(ws, &c, n, e->sized, e->level, &p, &len, NULL);
        if (rc == -EFBIG && n > 1) {
                rc = slot_flush(e, ws, dp, s, lo, n / 2);
                return rc < 0 ? rc : slot_flush(e, ws, dp, s, lo + n / 2, n - n / 2);
        }
        if (rc == 0 && s->keep)
                rc = kepts_add(&s->kept, ws, p, len);
        if (rc == 0 && s->cd) {
                struct tmn_raw r;
                tmn_ws_streams(ws, &r);
                rc = tmn_dict_pass(dp, s->cd, p, len, &r, &p, &len);
        }
        if (rc < 0)
                return tm_err_set(&s->err, rc, "native: encoding the block of record %llu failed",
                                  (unsigned long long)(s->first + lo));
        if (s->keep)
                return 0;
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

static int slot_encode(const struct tm_renc *e, struct tmn_ws *ws, struct tmn_dpass *dp,
                       struct slot *s)
{
        s->len = 0;
        if (!ws || !dp)
                return tm_err_set(&s->err, -ENOMEM, "out of memory");
        return slot_flush(e, ws, dp, s, 0, s->n);
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
        struct tmn_dpass *dp = tmn_dpass_new();
        pthread_mutex_lock(&e->mu);
        for (;;) {
                struct slot *s;
                while (!(s = next_ready(e)) && !e->quit)
                        pthread_cond_wait(&e->work, &e->mu);
                if (!s)
                        break;
                s->state = S_BUSY;
                pthread_mutex_unlock(&e->mu);
                int rc = slot_encode(e, ws, dp, s);
                pthread_mutex_lock(&e->mu);
                s->rc = rc;
                s->state = S_DONE;
                pthread_cond_broadcast(&e->done);
        }
        pthread_mutex_unlock(&e->mu);
        tmn_ws_free(ws);
        tmn_dpass_free(dp);
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

/* ---- the window and the dictionary ---- */

/* A kept block written after the window: against the dictionary when
 * the file has one. */
static int kept_emit(struct tm_renc *e, const struct kept *b, struct tm_err *err)
{
        const uint8_t *p = b->blk;
        size_t len = b->len;
        if (e->dstate == D_ON) {
                struct tmn_raw r;
                kept_raw(b, &r);
                int rc = tmn_dict_pass(e->dp, e->cd, b->blk, b->len, &r, &p, &len);
                if (rc < 0)
                        return tm_err_set(err, rc,
                                          "native: storing a block against the "
                                          "dictionary failed");
        }
        int rc = e->sink(e->arg, p, len);
        return rc < 0 ? tm_err_set(err, rc, "native: writing a block failed") : 0;
}

/* The earliest of the predicted window blocks before block t whose raw
 * streams, with those after it, fit TMN_DICT_MAX; -1 when none does. */
static int dict_first(const struct tm_renc *e, int t)
{
        size_t sum = 0;
        int first = -1;
        for (int i = t - 1; i >= 0; i--) {
                const struct kept *b = &e->win.k[i];
                if (b->blk[TMN_BLK_HDR] == TMN_PLAIN)
                        continue;
                if (sum + kept_rawsum(b) > TMN_DICT_MAX)
                        break;
                sum += kept_rawsum(b);
                first = i;
        }
        return first;
}

/* The dictionary of the predicted window blocks [lo, t) into e->dict and
 * its chunk; 0, -ENOMEM, -EFBIG (tmn_dict_make). */
static int dict_of(struct tm_renc *e, int lo, int t, uint8_t **chunk, size_t *clen)
{
        struct tmn_raw r;
        uint8_t *part[TMN_NSTREAMS] = {0};
        int rc = 0;
        for (int s = 0; s < TMN_NSTREAMS; s++) {
                size_t n = 0;
                for (int i = lo; i < t; i++)
                        n += e->win.k[i].blk[TMN_BLK_HDR] != TMN_PLAIN ? e->win.k[i].rlen[s] : 0;
                if (!(part[s] = malloc(n ? n : 1)))
                        rc = -ENOMEM;
                r.p[s] = part[s];
                r.len[s] = 0;
                for (int i = lo; rc == 0 && i < t; i++) {
                        struct tmn_raw b;
                        kept_raw(&e->win.k[i], &b);
                        if (e->win.k[i].blk[TMN_BLK_HDR] != TMN_PLAIN)
                                memcpy(part[s] + r.len[s], b.p[s], b.len[s]);
                        r.len[s] += e->win.k[i].blk[TMN_BLK_HDR] != TMN_PLAIN ? b.len[s] : 0;
                }
        }
        /* a kind the test block stores in a few bytes gets no part; the
         * others their latest bytes, the nearest to what follows */
        const uint8_t *tab = e->win.k[t].blk + TMN_BLK_HDR + 1;
        for (int s = 0; rc == 0 && s < TMN_NSTREAMS; s++) {
                if (tmn_get32(tab + s * TMN_STREAM_ENTRY + 1) < TMN_DICT_TRY_MIN)
                        r.len[s] = 0;
                if (r.len[s] > TMN_DICT_PART_MAX) {
                        r.p[s] += r.len[s] - TMN_DICT_PART_MAX;
                        r.len[s] = TMN_DICT_PART_MAX;
                }
        }
        if (rc == 0)
                rc = tmn_dict_make(&r, e->level, &e->dict, chunk, clen);
        for (int s = 0; s < TMN_NSTREAMS; s++)
                free(part[s]);
        return rc;
}

/* The window's blocks against a dictionary of its blocks before the last
 * predicted one (t): with[i] (NULL: block i as it is) and *pays. */
static int dict_try(struct tm_renc *e, int t, uint8_t **with, size_t *wlen, uint8_t **chunk,
                    size_t *clen, int *pays)
{
        int rc = -EFBIG;
        for (int lo = dict_first(e, t); lo >= 0 && lo < t && rc == -EFBIG; lo++)
                rc = dict_of(e, lo, t, chunk, clen);
        if (rc < 0)
                return rc == -EFBIG ? 0 : rc;
        if (!(e->cd = tmn_cdict_new(&e->dict, e->level)))
                return -ENOMEM;
        uint64_t sum_with = *clen, sum_wo = 0, test_with = 0, test_wo = 0;
        for (unsigned i = 0; i < e->win.n; i++) {
                const struct kept *b = &e->win.k[i];
                struct tmn_raw r;
                const uint8_t *p;
                kept_raw(b, &r);
                if ((rc = tmn_dict_pass(e->dp, e->cd, b->blk, b->len, &r, &p, &wlen[i])) < 0)
                        return rc;
                if (wlen[i] < b->len) {
                        if (!(with[i] = malloc(wlen[i])))
                                return -ENOMEM;
                        memcpy(with[i], p, wlen[i]);
                }
                sum_with += wlen[i];
                sum_wo += b->len;
                if ((int)i == t) {
                        test_with = wlen[i];
                        test_wo = b->len;
                }
        }
        *pays = sum_with < sum_wo && (test_wo - test_with) * DICT_TEST_SHARE >= test_wo;
        return 0;
}

/* The window decided: the file header (with the dictionary chunk when it
 * pays) and the window's blocks written; the blocks after follow. */
static int dict_decide(struct tm_renc *e, struct tm_err *err)
{
        unsigned n = e->win.n;
        uint8_t **with = calloc(n ? n : 1, sizeof *with), *chunk = NULL;
        size_t *wlen = calloc(n ? n : 1, sizeof *wlen), clen = 0;
        int pays = 0, t = -1, rc = with && wlen ? 0 : -ENOMEM;
        for (unsigned i = 0; i < n; i++)
                if (e->win.k[i].blk[TMN_BLK_HDR] != TMN_PLAIN)
                        t = (int)i;
        if (rc == 0 && t > 0)
                rc = dict_try(e, t, with, wlen, &chunk, &clen, &pays);
        if (rc < 0)
                tm_err_set(err, rc, "native: choosing the dictionary failed");
        uint8_t h[TMN_FILE_HDR];
        tmn_file_head_put_v(h, e->ntypes_h, e->sized, e->log2,
                            pays ? TMN_VERSION_DICT : TMN_VERSION);
        if (rc == 0 && (rc = e->sink(e->arg, h, sizeof h)) < 0)
                tm_err_set(err, rc, "native: writing the header failed");
        if (rc == 0 && pays && (rc = e->sink(e->arg, chunk, clen)) < 0)
                tm_err_set(err, rc, "native: writing the dictionary failed");
        for (unsigned i = 0; rc == 0 && i < n; i++) {
                const struct kept *b = &e->win.k[i];
                int with_d = pays && with[i];
                if ((rc = e->sink(e->arg, with_d ? with[i] : b->blk, with_d ? wlen[i] : b->len)) <
                    0)
                        tm_err_set(err, rc, "native: writing a block failed");
        }
        for (unsigned i = 0; with && i < n; i++)
                free(with[i]);
        free(with);
        free(wlen);
        free(chunk);
        kepts_free(&e->win);
        e->dstate = pays ? D_ON : D_OFF;
        if (!pays) {
                tmn_cdict_free(e->cd);
                e->cd = NULL;
                tmn_dict_release(&e->dict);
        }
        return rc;
}

/* A slot's kept blocks (of n records): onto the window while it is open
 * (and the window decided when full), else written. */
static int kept_take(struct tm_renc *e, struct kepts *k, size_t n, struct tm_err *err)
{
        int rc = 0;
        for (unsigned i = 0; rc == 0 && i < k->n; i++) {
                struct kept *b = &k->k[i];
                if (e->dstate != D_WINDOW) {
                        rc = kept_emit(e, b, err);
                        continue;
                }
                struct kepts *w = &e->win;
                if (w->n == w->cap) {
                        unsigned cap = w->cap ? 2 * w->cap : 16;
                        struct kept *q = realloc(w->k, cap * sizeof *q);
                        if (!q) {
                                rc = tm_err_set(err, -ENOMEM, "out of memory");
                                break;
                        }
                        w->k = q;
                        w->cap = cap;
                }
                w->k[w->n++] = *b;
                e->win_raw += kept_rawsum(b);
                b->blk = b->raw = NULL;
        }
        kepts_free(k);
        if (rc == 0 && e->dstate == D_WINDOW) {
                e->win_rec += n;
                if (e->win.n >= WIN_BLOCKS || e->win_rec >= WIN_REC || e->win_raw >= WIN_RAW)
                        rc = dict_decide(e, err);
        }
        return rc;
}

/* ---- the slots in order ---- */

/* Wait for slot s's block, if it has one in the making, and hand it to
 * the sink (or the window); s is free after. */
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
        size_t n = s->n;
        s->n = 0;
        if (s->rc < 0) {
                kepts_free(&s->kept);
                *err = s->err;
                return s->rc;
        }
        if (s->keep)
                return kept_take(e, &s->kept, n, err);
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
        s->keep = e->dstate == D_WINDOW;
        s->cd = e->dstate == D_ON ? e->cd : NULL;
        if (!e->nthr) {
                s->rc = slot_encode(e, e->ws, e->dp, s);
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
        tmn_dpass_free(e->dp);
        kepts_free(&e->win);
        tmn_cdict_free(e->cd);
        tmn_dict_release(&e->dict);
        free(e);
}

static int enc_start(unsigned ntypes, int sized, unsigned log2, int level, int dict,
                     unsigned threads, tm_rsink sink, void *arg, struct tm_renc **out,
                     struct tm_err *err)
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
        e->ntypes_h = ntypes;
        e->log2 = log2;
        e->dstate = dict ? D_WINDOW : D_OFF;
        threads_start(e, threads < ENC_THREADS_MAX ? threads : ENC_THREADS_MAX);
        e->nslot = e->nthr + 1;
        int rc = (e->nthr || (e->ws = tmn_ws_new())) && (e->dp = tmn_dpass_new()) ? 0 : -ENOMEM;
        for (unsigned i = 0; rc == 0 && i < e->nslot; i++)
                rc = slot_alloc(&e->slot[i], e->cap, sized);
        if (rc < 0) {
                enc_release(e);
                return tm_err_set(err, -ENOMEM, "out of memory");
        }
        uint8_t h[TMN_FILE_HDR];
        tmn_file_head_put(h, ntypes, sized, log2);
        rc = dict ? 0 : sink(arg, h, sizeof h); /* else after the window (dict_decide) */
        if (rc < 0) {
                enc_release(e);
                return tm_err_set(err, rc, "native: writing the header failed");
        }
        *out = e;
        return 0;
}

/* Encoding names: bK (blocks of 2^K records) with an optional /zL (zstd
 * level L, 1..22) and an optional /d (the dictionary when it pays; without
 * it none, so that a name's bytes are those of the blocks alone). */
static int enc_name(const char *enc, unsigned *log2, int *level, int *dict)
{
        *log2 = TMN_LOG_DEFAULT;
        *level = TMN_LEVEL_DEFAULT;
        *dict = 0;
        if (!enc)
                return 0;
        char *end;
        if (enc[0] != 'b')
                return -1;
        unsigned long k = strtoul(enc + 1, &end, 10);
        if (end == enc + 1 || k < TMN_LOG_MIN || k > TMN_LOG_MAX)
                return -1;
        *log2 = (unsigned)k;
        if (end[0] == '/' && end[1] == 'z') {
                const char *l = end + 2;
                unsigned long z = strtoul(l, &end, 10);
                if (end == l || z < 1 || z > 22)
                        return -1;
                *level = (int)z;
        }
        if (end[0] == '/' && end[1] == 'd') {
                *dict = 1;
                end += 2;
        }
        return *end ? -1 : 0;
}

int tmn_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                 struct tm_err *err)
{
        unsigned log2;
        int level, dict;
        if (enc_name(enc, &log2, &level, &dict) < 0)
                return tm_err_set(err, -EINVAL, "native: no encoding %s (bK[/zL][/d]: K %d..%d)",
                                  enc, TMN_LOG_MIN, TMN_LOG_MAX);
        return enc_start(TM_NTYPES, 1, log2, level, dict, 0, sink, arg, out, err);
}

int tmn_enc_open_src(const struct tm_renc_src *src, const char *enc, tm_rsink sink, void *arg,
                     struct tm_renc **out, struct tm_err *err)
{
        if (ncol_src_is_addr(src->schema))
                return tmn_enc_open(enc, sink, arg, out, err);
        unsigned log2;
        int level, dict;
        if (enc_name(enc, &log2, &level, &dict) < 0)
                return tm_err_set(err, -EINVAL, "native: no encoding %s (bK[/zL][/d]: K %d..%d)",
                                  enc, TMN_LOG_MIN, TMN_LOG_MAX);
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
                         a->v[TMN_P_DICT], a->threads, sink, arg, out, err);
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
        if (rc == 0 && e->dstate == D_WINDOW)
                rc = dict_decide(e, err);
        if (rc == 0)
                rc = tmn_end_write(e->sink, e->arg, e->total, err);
        enc_release(e);
        return rc;
}

void tmn_enc_free(struct tm_renc *e)
{
        enc_release(e);
}
