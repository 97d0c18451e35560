/* fuzz_ptf: libFuzzer harness for the PTF decoders (codecs/object/ptf.c,
 * the ASCII form; ptf_bin.c, the binary form) and the object family's
 * statistics and verifier (ptf_stats.c).
 *
 * Input: byte 0 picks the form (bit 7: binary) and the records asked per
 * call (bits 0-5, plus one), byte 1 the input window (0: everything at
 * once); the rest is the raw stream (the binary form's header first). The
 * probe and open must not read past what they are given. Decoding must
 * never read past its input, never consume more than it was offered,
 * reach only states state_ok takes, and give the same records and the
 * same outcome (the end, or the same error at the same raw offset) whole
 * and in windows with the state copied out and back at every call, as the
 * index's checkpoints do (both decoders return the records before a bad
 * line or record first). The records then go through the family's pass,
 * whose block stats_ok must accept, its report and its verify. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/object/ptf.h"
#include "codecs/object/ptf_stats.h"
#include "fz_buf.h"

#define FZP_MAX 4096

struct fzp_recs {
        struct tm_rec r[FZP_MAX];
        uint8_t *bytes; /* text and lists copied out (the decoders' pointers move) */
        size_t n, blen, bcap;
        int rc;
        char msg[256];
};

/* Bytes of the variable field at position p of r (text: v, list: 8 v). */
static size_t fzp_var_bytes(const struct tm_rec *r, unsigned p)
{
        const struct tm_kind *kd = &tm_schema_ptf.kind[r->kind];
        const struct tm_field *f = &tm_schema_ptf.field[kd->field[p]];
        return f->type == TM_FT_LIST ? (size_t)r->v[p] * 8 : (size_t)r->v[p];
}

static void fzp_keep(struct fzp_recs *k, const struct tm_rec *r)
{
        if (k->n == FZP_MAX)
                return;
        struct tm_rec c = *r;
        const struct tm_kind *kd = &tm_schema_ptf.kind[r->kind];
        unsigned slot = 0;
        for (unsigned i = 0; i < kd->nfields; i++) {
                if (!tm_field_is_var(&tm_schema_ptf.field[kd->field[i]]))
                        continue;
                size_t n = fzp_var_bytes(r, i);
                if (k->blen + n > k->bcap) {
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
static int fzp_decode(const struct tm_rcodec *c, const uint8_t *raw, size_t len, size_t piece,
                      size_t cap, struct fzp_recs *k)
{
        struct tm_rstate st, copy;
        struct tm_schema s;
        struct tm_err err = {0};
        void *ctx = NULL;
        k->n = k->blen = 0;
        k->rc = 0;
        k->msg[0] = '\0';
        int hl = c->open(raw, len, "fuzz", &ctx, &s, &st, &err);
        if (hl < 0)
                return -1;
        if ((size_t)hl > len)
                abort();
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
                        snprintf(k->msg, sizeof k->msg, "%s", err.msg);
                        break;
                }
                if (used > avail || (size_t)n > cap || (c->state_ok && !c->state_ok(ctx, &st)))
                        abort(); /* overran, or reached a state state_ok refuses */
                for (ssize_t i = 0; i < n; i++)
                        fzp_keep(k, &out[i]);
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

static int fzp_same(const struct fzp_recs *a, const struct fzp_recs *b)
{
        if (a->n != b->n || a->rc != b->rc || strcmp(a->msg, b->msg) != 0)
                return 0;
        for (size_t i = 0; i < a->n; i++) {
                const struct tm_rec *x = &a->r[i], *y = &b->r[i];
                if (x->kind != y->kind)
                        return 0;
                const struct tm_kind *kd = &tm_schema_ptf.kind[x->kind];
                unsigned slot = 0;
                for (unsigned f = 0; f < kd->nfields; f++) {
                        if (x->v[f] != y->v[f])
                                return 0;
                        if (!tm_field_is_var(&tm_schema_ptf.field[kd->field[f]]))
                                continue;
                        if (memcmp(a->bytes + (uintptr_t)x->var[slot],
                                   b->bytes + (uintptr_t)y->var[slot], fzp_var_bytes(x, f)) != 0)
                                return 0;
                        slot++;
                }
        }
        return 1;
}

/* The family's pass over whole's records (pointers restored). */
static void fzp_stats(const struct fzp_recs *k)
{
        const struct tm_family *f = &tm_family_object;
        struct tm_family_acc *a = f->acc_start(&tm_schema_ptf);
        if (!a)
                abort();
        for (size_t i = 0; i < k->n; i++) {
                struct tm_rec r = k->r[i];
                const struct tm_kind *kd = &tm_schema_ptf.kind[r.kind];
                unsigned slot = 0;
                for (unsigned j = 0; j < kd->nfields; j++)
                        if (tm_field_is_var(&tm_schema_ptf.field[kd->field[j]])) {
                                r.var[slot] = k->bytes + (uintptr_t)r.var[slot];
                                slot++;
                        }
                f->acc_add(a, &r, 1);
        }
        static struct tm_ptf_stats block;
        f->acc_finish(a, &block);
        f->acc_free(a);
        if (!f->stats_ok(&block))
                abort(); /* the pass made a block the loader would refuse */
        static char text[1 << 16];
        f->report(&block, &tm_schema_ptf, text, sizeof text);
        struct tm_err err = {0};
        f->verify(&block, &tm_schema_ptf, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;
        const struct tm_rcodec *c = data[0] & 0x80 ? &tm_rcodec_ptf_bin : &tm_rcodec_ptf;
        const size_t cap = 1 + (data[0] & 63), piece = (size_t)data[1] * 3;
        size_t len = size - 2;
        static struct fz_buf rawb;
        uint8_t *raw = fz_buf_get(&rawb, len);
        memcpy(raw, data + 2, len);
        c->probe(raw, len < TM_RHEAD_MIN ? len : TM_RHEAD_MIN);
        static struct fzp_recs whole, windows;
        if (fzp_decode(c, raw, len, 0, FZP_MAX, &whole) < 0)
                return 0;
        fzp_decode(c, raw, len, piece, cap, &windows);
        if (whole.n < FZP_MAX && !fzp_same(&whole, &windows)) {
                fprintf(stderr, "fuzz_ptf: windows of %zu, cap %zu differ (%d \"%s\", %d \"%s\")\n",
                        piece, cap, whole.rc, whole.msg, windows.rc, windows.msg);
                abort();
        }
        fzp_stats(&whole);
        return 0;
}
