/* fuzz_java: libFuzzer harness for the Java trace decoder
 * (codecs/java/jtrace.c) and the java family's statistics.
 *
 * Input: byte 0 the records asked per call, byte 1 the input window (0:
 * everything at once); the rest is the raw stream. The probe must not
 * read past what it is given. Decoding must never read past its input,
 * never consume more than it was offered, reach only states state_ok
 * takes, and give the same records and the same outcome (the end, or the
 * same error at the same raw offset) whole and in windows with the state
 * copied out and back at every call, as the index's checkpoints do: the
 * decoder returns the records before a bad line first, so both passes
 * stop at the same record. The records then go through the family's pass,
 * whose block stats_ok must accept, and its report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/java/jstats.h"
#include "codecs/java/jtrace.h"
#include "fz_buf.h"

#define FZJ_MAX 4096

struct fzj_recs {
        struct tm_rec r[FZJ_MAX];
        uint8_t *bytes; /* the text fields copied out (the decoder's pointers move) */
        size_t n, blen, bcap;
        int rc;
        char msg[256];
};

static void fzj_keep(struct fzj_recs *k, const struct tm_rec *r)
{
        if (k->n == FZJ_MAX)
                return;
        struct tm_rec c = *r;
        const struct tm_kind *kd = &tm_schema_java.kind[r->kind];
        unsigned slot = 0;
        for (unsigned i = 0; i < kd->nfields; i++) {
                if (tm_schema_java.field[kd->field[i]].type != TM_FT_TEXT)
                        continue;
                size_t n = (size_t)r->v[i];
                if (k->blen + n > k->bcap) {
                        k->bcap = (k->blen + n) * 2 + 64;
                        k->bytes = realloc(k->bytes, k->bcap);
                        if (!k->bytes)
                                abort();
                }
                memcpy(k->bytes + k->blen, r->var[slot], n);
                c.var[slot++] = (const uint8_t *)(uintptr_t)k->blen;
                k->blen += n;
        }
        k->r[k->n++] = c;
}

static void fzj_decode(const uint8_t *raw, size_t len, size_t piece, size_t cap,
                       struct fzj_recs *k)
{
        const struct tm_rcodec *c = &tm_rcodec_java;
        struct tm_rstate st, copy;
        struct tm_schema s;
        struct tm_err err = {0};
        void *ctx = NULL;
        k->n = k->blen = 0;
        k->rc = 0;
        k->msg[0] = '\0';
        if (c->open(raw, len, "fuzz", &ctx, &s, &st, &err) != 0)
                abort();
        static struct fz_buf outb;
        struct tm_rec *out = fz_buf_get(&outb, cap * sizeof *out);
        size_t pos = 0;
        for (;;) {
                size_t avail = len - pos;
                int eof = 1;
                if (piece && avail > piece) {
                        avail = piece;
                        eof = 0;
                }
                size_t used = 0;
                memcpy(&copy, &st, sizeof st); /* a checkpoint is a copy */
                ssize_t n = c->decode(ctx, &copy, raw + pos, avail, eof, pos, &used, out, cap, &err);
                memcpy(&st, &copy, sizeof st);
                if (n < 0) {
                        k->rc = (int)n;
                        snprintf(k->msg, sizeof k->msg, "%s", err.msg);
                        break;
                }
                if (used > avail || (size_t)n > cap || !c->state_ok(ctx, &st))
                        abort(); /* overran, or reached a state state_ok refuses */
                for (ssize_t i = 0; i < n; i++)
                        fzj_keep(k, &out[i]);
                pos += used;
                if (n == 0 && used == 0) {
                        if (eof)
                                break;
                        if (piece)
                                piece *= 2; /* a line longer than the window */
                }
        }
        c->close(ctx);
}

static int fzj_same(const struct fzj_recs *a, const struct fzj_recs *b)
{
        if (a->n != b->n || a->rc != b->rc || strcmp(a->msg, b->msg) != 0)
                return 0;
        for (size_t i = 0; i < a->n; i++) {
                const struct tm_rec *x = &a->r[i], *y = &b->r[i];
                if (x->kind != y->kind)
                        return 0;
                const struct tm_kind *kd = &tm_schema_java.kind[x->kind];
                unsigned slot = 0;
                for (unsigned f = 0; f < kd->nfields; f++) {
                        if (x->v[f] != y->v[f])
                                return 0;
                        if (tm_schema_java.field[kd->field[f]].type != TM_FT_TEXT)
                                continue;
                        if (memcmp(a->bytes + (uintptr_t)x->var[slot],
                                   b->bytes + (uintptr_t)y->var[slot], (size_t)x->v[f]) != 0)
                                return 0;
                        slot++;
                }
        }
        return 1;
}

/* The family's pass over whole's records (pointers restored). */
static void fzj_stats(const struct fzj_recs *k)
{
        const struct tm_family *f = &tm_family_java;
        struct tm_family_acc *a = f->acc_start(&tm_schema_java);
        if (!a)
                abort();
        for (size_t i = 0; i < k->n; i++) {
                struct tm_rec r = k->r[i];
                const struct tm_kind *kd = &tm_schema_java.kind[r.kind];
                unsigned slot = 0;
                for (unsigned j = 0; j < kd->nfields; j++)
                        if (tm_schema_java.field[kd->field[j]].type == TM_FT_TEXT) {
                                r.var[slot] = k->bytes + (uintptr_t)r.var[slot];
                                slot++;
                        }
                f->acc_add(a, &r, 1);
        }
        static struct tm_java_stats block;
        f->acc_finish(a, &block);
        f->acc_free(a);
        if (!f->stats_ok(&block))
                abort(); /* the pass made a block the loader would refuse */
        static char text[1 << 16];
        f->report(&block, &tm_schema_java, text, sizeof text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;
        const size_t cap = 1 + data[0] % 64, piece = (size_t)data[1] * 3;
        size_t len = size - 2;
        static struct fz_buf rawb;
        uint8_t *raw = fz_buf_get(&rawb, len);
        memcpy(raw, data + 2, len);
        tm_rcodec_java.probe(raw, len < TM_RHEAD_MIN ? len : TM_RHEAD_MIN);
        static struct fzj_recs whole, windows;
        fzj_decode(raw, len, 0, FZJ_MAX, &whole);
        fzj_decode(raw, len, piece, cap, &windows);
        if (whole.n < FZJ_MAX && !fzj_same(&whole, &windows)) {
                fprintf(stderr, "fuzz_java: windows of %zu, cap %zu differ (%d \"%s\", %d \"%s\")\n",
                        piece, cap, whole.rc, whole.msg, windows.rc, windows.msg);
                abort();
        }
        fzj_stats(&whole);
        return 0;
}
