/* fz_rec: the check every record-codec harness makes (fuzz_ptf, fuzz_java).
 *
 * fzr_run(c, f, must_open, data, size): byte 0 of data gives the records
 * asked per call (1 + its low 6 bits), byte 1 the input window (x3; 0:
 * everything at once); the rest is the raw stream. The probe and open must
 * not read past what they are given (must_open: open may not refuse it).
 * Decoding must never read past its input, never consume more than it was
 * offered, reach only states state_ok takes, and give the same records and
 * the same outcome (the end, or the same error at the same raw offset)
 * whole and in windows with the state copied out and back at every call,
 * as the index's checkpoints do. The records then go through family f's
 * pass, whose block stats_ok must accept, its tables (whole lines), its
 * binary records, its report and its verify. A
 * failure aborts after a line on stderr naming the harness. */
#ifndef TM_FZ_REC_H
#define TM_FZ_REC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/record/family.h"
#include "codecs/record/record.h"
#include "views/stats.h"
#include "fz_buf.h"

#define FZR_MAX 4096

struct fzr_recs {
        struct tm_schema s; /* open's */
        struct tm_rec r[FZR_MAX];
        uint8_t *bytes; /* variable fields copied out (the decoder's pointers move) */
        size_t n, blen, bcap;
        int rc;
        char msg[256];
};

/* Bytes of the variable field at position p of r (text, bytes: v; list: 8 v). */
static size_t fzr_var_bytes(const struct tm_schema *s, const struct tm_rec *r, unsigned p)
{
        const struct tm_field *f = &s->field[s->kind[r->kind].field[p]];
        return f->type == TM_FT_LIST ? (size_t)r->v[p] * 8 : (size_t)r->v[p];
}

static int fzr_is_var(const struct tm_schema *s, unsigned kind, unsigned p)
{
        return tm_field_is_var(&s->field[s->kind[kind].field[p]]);
}

static void fzr_keep(struct fzr_recs *k, const struct tm_rec *r)
{
        if (k->n == FZR_MAX)
                return;
        struct tm_rec c = *r;
        unsigned slot = 0;
        for (unsigned i = 0; i < k->s.kind[r->kind].nfields; i++) {
                if (!fzr_is_var(&k->s, r->kind, i))
                        continue;
                size_t n = fzr_var_bytes(&k->s, r, i);
                /* never NULL: fzr_same and fzr_rec add offsets to it, and
                 * NULL + 0 is undefined (UBSan stops the harness) */
                if (k->blen + n > k->bcap || !k->bytes) {
                        k->bcap = (k->blen + n) * 2 + 64;
                        k->bytes = realloc(k->bytes, k->bcap);
                        if (!k->bytes)
                                abort();
                }
                if (n)
                        memcpy(k->bytes + k->blen, r->var[slot], n);
                c.var[slot++] = (const uint8_t *)(uintptr_t)k->blen;
                k->blen += n;
        }
        k->r[k->n++] = c;
}

/* 0, or -1 when open refused the stream (both passes see the same). */
static int fzr_decode(const struct tm_rcodec *c, const uint8_t *raw, size_t len, size_t piece,
                      size_t cap, struct fzr_recs *k)
{
        struct tm_rstate st, copy;
        struct tm_err err = {0};
        void *ctx = NULL;
        k->n = k->blen = 0;
        k->rc = 0;
        k->msg[0] = '\0';
        int hl = c->open(raw, len, "fuzz", &ctx, &k->s, &st, &err);
        if (hl < 0)
                return -1;
        if ((size_t)hl > len)
                abort(); /* a header longer than the stream */
        static struct fz_buf outb;
        struct tm_rec *out = fz_buf_get(&outb, cap * sizeof *out);
        size_t pos = (size_t)hl;
        for (;;) {
                size_t avail = len - pos;
                int eof = 1;
                if (piece && avail > piece) {
                        avail = piece;
                        eof = 0;
                }
                size_t used = 0;
                memcpy(&copy, &st, sizeof st); /* a checkpoint is a copy */
                ssize_t n =
                    c->decode(ctx, &copy, raw + pos, avail, eof, pos, &used, out, cap, &err);
                memcpy(&st, &copy, sizeof st);
                if (n < 0) {
                        k->rc = (int)n;
                        snprintf(k->msg, sizeof k->msg, "%.*s", (int)sizeof k->msg - 1, err.msg);
                        break;
                }
                if (used > avail || (size_t)n > cap || (c->state_ok && !c->state_ok(ctx, &st)))
                        abort(); /* overran, or reached a state state_ok refuses */
                for (ssize_t i = 0; i < n; i++)
                        fzr_keep(k, &out[i]);
                pos += used;
                if (n == 0 && used == 0) {
                        if (eof)
                                break;
                        if (piece)
                                piece *= 2; /* a record longer than the window */
                }
        }
        c->close(ctx);
        return 0;
}

static int fzr_same(const struct fzr_recs *a, const struct fzr_recs *b)
{
        if (a->n != b->n || a->rc != b->rc || strcmp(a->msg, b->msg) != 0)
                return 0;
        for (size_t i = 0; i < a->n; i++) {
                const struct tm_rec *x = &a->r[i], *y = &b->r[i];
                if (x->kind != y->kind)
                        return 0;
                unsigned slot = 0;
                for (unsigned f = 0; f < a->s.kind[x->kind].nfields; f++) {
                        if (x->v[f] != y->v[f])
                                return 0;
                        if (!fzr_is_var(&a->s, x->kind, f))
                                continue;
                        if (memcmp(a->bytes + (uintptr_t)x->var[slot],
                                   b->bytes + (uintptr_t)y->var[slot],
                                   fzr_var_bytes(&a->s, x, f)) != 0)
                                return 0;
                        slot++;
                }
        }
        return 1;
}

/* Record i of k, its pointers restored. */
static struct tm_rec fzr_rec(const struct fzr_recs *k, size_t i)
{
        struct tm_rec r = k->r[i];
        unsigned slot = 0;
        for (unsigned j = 0; j < k->s.kind[r.kind].nfields; j++)
                if (fzr_is_var(&k->s, r.kind, j)) {
                        r.var[slot] = k->bytes + (uintptr_t)r.var[slot];
                        slot++;
                }
        return r;
}

/* Family f's pass over k's records; its binary records, numbered by the
 * tables' accumulator, each into a buffer of exactly bin_size bytes. */
/* A row sink: a row has a key or a text, a key a name, and a real of
 * stats.json (a row with a key) is finite. */
static void fzr_row_check(struct tm_rows *k, const struct tm_row *r)
{
        (void)k;
        if ((!r->key && !r->text) || (r->key && !r->key[0]) ||
            (r->key && r->type == TM_ROW_REAL && !(r->v.r == r->v.r && r->v.r - r->v.r == 0)))
                abort();
}

static void fzr_family(const struct tm_family *f, const struct fzr_recs *k)
{
        struct tm_family_acc *a = f->acc_start(&k->s);
        if (!a)
                abort();
        for (size_t i = 0; i < k->n; i++) {
                struct tm_rec r = fzr_rec(k, i);
                f->acc_add(a, &r, 1);
        }
        static uint64_t block[TM_FAMILY_STATS_MAX / 8];
        if (f->stats_size > sizeof block)
                abort();
        f->acc_finish(a, block);
        const struct tm_family_more *more = tm_family_more(f);
        for (unsigned i = 0; more->tables && more->tables[i]; i++) { /* whole lines, or nothing */
                char *t = NULL;
                size_t n = 0;
                if (more->table(a, i, &t, &n) < 0 || (n && t[n - 1] != '\n'))
                        abort();
                free(t);
        }
        uint8_t *bin = f->binary ? malloc(f->bin_size) : NULL;
        for (size_t i = 0; bin && i < k->n; i++) {
                struct tm_rec r = fzr_rec(k, i);
                f->binary(more->tables ? a : NULL, bin, &k->s, &r, 1);
        }
        free(bin);
        f->acc_free(a);
        if (!f->stats_ok(block))
                abort(); /* the pass made a block the loader would refuse */
        static char text[1 << 16];
        struct tm_family_info in = {.name = "fuzz", .codec = "fuzz", .container = "plain"};
        tm_stats_family_text(f, block, &k->s, &in, text, sizeof text);
        struct tm_rows rows = {fzr_row_check};
        f->rows(block, &k->s, &in, &rows);
        struct tm_err err = {0};
        if (tm_family_more(f)->verify)
                tm_family_more(f)->verify(block, &k->s, &err);
}

static int fzr_run(const char *name, const struct tm_rcodec *c, const struct tm_family *f,
                   int must_open, const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;
        const size_t cap = 1 + (data[0] & 63), piece = (size_t)data[1] * 3;
        size_t len = size - 2;
        static struct fz_buf rawb;
        uint8_t *raw = fz_buf_get(&rawb, len);
        memcpy(raw, data + 2, len);
        c->probe(raw, len < TM_RHEAD_MIN ? len : TM_RHEAD_MIN);
        static struct fzr_recs whole, windows;
        if (fzr_decode(c, raw, len, 0, FZR_MAX, &whole) < 0) {
                if (must_open)
                        abort();
                return 0;
        }
        fzr_decode(c, raw, len, piece, cap, &windows);
        if (whole.n < FZR_MAX && !fzr_same(&whole, &windows)) {
                fprintf(stderr, "%s: windows of %zu, cap %zu differ (%d \"%s\", %d \"%s\")\n", name,
                        piece, cap, whole.rc, whole.msg, windows.rc, windows.msg);
                abort();
        }
        fzr_family(f, &whole);
        return 0;
}

#endif
