/* fuzz_hatf: libFuzzer harness for the HATF decoder and encoder.
 *
 * Input: byte 0 the records asked per call, byte 1 the input window (0:
 * everything at once), byte 2 picks an encoding for the round trip; the
 * rest is a HATF stream. Decoding must never read past its input or write
 * past cap, and must give the same records whatever the windows and caps
 * (a whole-stream pass is the reference; a second pass in windows, with
 * the state copied out and back at every call, as the index's checkpoints
 * do), and the same error at the same place. Whatever decodes is then encoded with the chosen encoding and
 * decoded again: the same records must come back. The buffers are kept
 * from run to run (fz_buf.h: ASan still sees each at its size). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/heap/hatf.h"
#include "fz_buf.h"

#define MAXREC 4096

struct recs {
        struct tm_rec r[MAXREC];
        uint8_t *bytes; /* var data copied out (the decoder's pointers move) */
        size_t n, blen, bcap;
};

static void keep(struct recs *k, const struct tm_rec *r)
{
        if (k->n == MAXREC)
                return;
        struct tm_rec c = *r;
        if (r->kind < TM_HK_N) {
                const struct tm_kind *kd = &tm_schema_heap.kind[r->kind];
                for (unsigned i = 0; i < kd->nfields; i++)
                        if (kd->field[i] == TM_HF_ATTRIBUTES || kd->field[i] == TM_HF_TEXT) {
                                size_t n = (size_t)r->v[i];
                                c.var[0] = (const uint8_t *)(uintptr_t)k->blen;
                                if (n == 0)
                                        continue;
                                if (k->blen + n > k->bcap) {
                                        k->bcap = (k->blen + n) * 2 + 64;
                                        k->bytes = realloc(k->bytes, k->bcap);
                                        if (!k->bytes)
                                                abort();
                                }
                                memcpy(k->bytes + k->blen, r->var[0], n);
                                k->blen += n;
                        }
        }
        k->r[k->n++] = c;
}

/* Decode raw[0..len) in windows of piece bytes (0: all), cap records a
 * call. Returns the error code or 0. */
static int decode(const uint8_t *raw, size_t len, size_t piece, size_t cap, struct recs *k)
{
        struct tm_rstate st, copy;
        struct tm_schema s;
        struct tm_err err = {0};
        void *ctx;
        tm_rcodec_hatf.open(raw, len, "fuzz", &ctx, &s, &st, &err);
        static struct fz_buf outb;
        struct tm_rec *out = fz_buf_get(&outb, cap * sizeof *out);
        size_t pos = 0;
        int rc = 0;
        for (;;) {
                size_t avail = len - pos;
                int eof = 1;
                if (piece && avail > piece) {
                        avail = piece;
                        eof = 0;
                }
                size_t used = 0;
                memcpy(&copy, &st, sizeof st); /* a checkpoint is a copy */
                ssize_t n = tm_rcodec_hatf.decode(NULL, &copy, raw + pos, avail, eof, pos, &used,
                                                  out, cap, &err);
                memcpy(&st, &copy, sizeof st);
                if (n < 0) {
                        rc = (int)n;
                        break;
                }
                if (used > avail || !tm_rcodec_hatf.state_ok(NULL, &st))
                        abort(); /* overran, or reached a state state_ok refuses */
                for (ssize_t i = 0; i < n; i++)
                        keep(k, &out[i]);
                pos += used;
                if (n == 0 && used == 0) {
                        if (eof)
                                break;
                        if (piece)
                                piece *= 2; /* a record longer than the window */
                }
        }
        return rc;
}

/* Are a's records the first of b's (all of them when whole)? */
static int prefix(const struct recs *a, const struct recs *b, int whole)
{
        if (whole ? a->n != b->n : a->n > b->n)
                return 0;
        for (size_t i = 0; i < a->n; i++) {
                const struct tm_rec *x = &a->r[i], *y = &b->r[i];
                if (x->kind != y->kind)
                        return 0;
                const struct tm_kind *kd = &tm_schema_heap.kind[x->kind];
                for (unsigned f = 0; f < kd->nfields; f++) {
                        if (x->v[f] != y->v[f])
                                return 0;
                        if (kd->field[f] == TM_HF_ATTRIBUTES || kd->field[f] == TM_HF_TEXT)
                                if (x->v[f] && memcmp(a->bytes + (uintptr_t)x->var[0],
                                                      b->bytes + (uintptr_t)y->var[0],
                                                      (size_t)x->v[f]) != 0)
                                        return 0;
                }
        }
        return 1;
}

static int same(const struct recs *a, const struct recs *b)
{
        return prefix(a, b, 1);
}

struct sink {
        uint8_t *p;
        size_t n, cap;
};

static int sink_put(void *arg, const void *buf, size_t n)
{
        struct sink *s = arg;
        if (s->n + n > s->cap) {
                s->cap = (s->n + n) * 2;
                s->p = realloc(s->p, s->cap);
                if (!s->p)
                        abort();
        }
        memcpy(s->p + s->n, buf, n);
        s->n += n;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 3)
                return 0;
        const size_t cap = 1 + data[0] % 64, piece = (size_t)data[1] * 3;
        const uint8_t *raw = data + 3;
        size_t len = size - 3;
        static struct recs whole, windows, again;
        whole.n = windows.n = again.n = 0;
        whole.blen = windows.blen = again.blen = 0;
        int r1 = decode(raw, len, 0, MAXREC, &whole);
        int r2 = decode(raw, len, piece, cap, &windows);
        /* A call that meets corrupt input returns the error, not the
         * records before it in the same call: with smaller calls more of
         * them come out first. So on an error the whole pass's records
         * are a prefix of the windowed pass's; without one they are the
         * same. */
        if (r1 != r2 || !prefix(&whole, &windows, r1 == 0)) {
                fprintf(stderr, "fuzz_hatf: windows of %zu, cap %zu differ (%d, %d)\n", piece, cap,
                        r1, r2);
                abort();
        }
        if (whole.n == MAXREC)
                return 0;
        /* round trip what decoded through an encoding */
        unsigned ne = 0;
        while (tm_rcodec_hatf.encodings[ne])
                ne++;
        struct sink out = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        const char *enc = tm_rcodec_hatf.encodings[data[2] % ne];
        if (tm_rcodec_hatf.enc_open(enc, sink_put, &out, &e, &err) < 0)
                abort();
        int rc = 0;
        for (size_t i = 0; i < whole.n && rc == 0; i++) {
                struct tm_rec r = whole.r[i];
                r.var[0] = whole.bytes ? whole.bytes + (uintptr_t)r.var[0] : NULL;
                rc = tm_rcodec_hatf.enc_put(e, &r, 1, i, &err);
        }
        if (rc == 0)
                rc = tm_rcodec_hatf.enc_finish(e, &err);
        else
                tm_rcodec_hatf.enc_free(e);
        if (rc == 0) { /* everything the decoder gives, the encoder takes back */
                if (decode(out.p, out.n, 0, MAXREC, &again) != 0 || !same(&whole, &again)) {
                        fprintf(stderr, "fuzz_hatf: round trip through %s differs\n", enc);
                        abort();
                }
        }
        free(out.p);
        return 0;
}
