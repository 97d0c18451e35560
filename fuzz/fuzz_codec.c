/* fuzz_codec: libFuzzer harness for one address-trace codec's decoder,
 * built once per codec: -DFZ_CODEC='"din"' (fuzz_din), "pdats"
 * (fuzz_pdats), "lackey" (fuzz_lackey); PDATS II has fuzz_pdats2.
 *
 * Input: byte 0 picks the references asked per call (bits 0-3) and the
 * input window a feed offers (bits 4-7; 0: everything at once); the rest is
 * the raw stream, header first. The codec is its record row, as the views
 * see it (tests/support/aref.h gives its records as references): probe,
 * open and decode must never read outside what they are given (the buffer ends exactly there, for
 * ASan). The stream is decoded twice, all at once and in windows as a view's feed offers it: both
 * must give the same references, types below the codec's count, and the same outcome (the end, or
 * an error with a message; references a failing call made are not returned, so after an error only
 * the common part is compared).
 * Then decoding restarts from a copy of the state taken in the middle of
 * the windowed pass (what a checkpoint is) and must give the same rest.
 * At most FZD_MAX references are compared: one PDATS record can stand for
 * billions. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/address/arec.h"
#include "tests/support/aref.h"

#ifndef FZ_CODEC
#define FZ_CODEC "din"
#endif

#define FZD_MAX (1u << 16)

/* The codec under test (tests/unit_fuzzregress.c sets it per input). */
static const char *fzd_codec = FZ_CODEC;

struct fzd_pass {
        struct tm_ref *r;
        size_t n;    /* references kept */
        int rc;      /* 0 end, 1 cap reached, < 0 the error */
        size_t stop; /* raw offset where it ended */
        /* a checkpoint taken on the way (windowed pass) */
        int have_ck;
        struct tm_rstate ck;
        size_t ck_pos, ck_n;
};

static void fzd_fail(const char *what)
{
        fprintf(stderr, "fuzz_%s: %s\n", fzd_codec, what);
        abort();
}

/* Decode raw[hdr..len) with d (its state moves on), piece bytes offered
 * at a time (0: all), cap references a call. */
static void fzd_run(struct aref_dec *d, const uint8_t *raw, size_t len, size_t hdr, size_t piece,
                    size_t cap, struct fzd_pass *p, size_t ck_at)
{
        struct tm_ref *out = malloc(cap * sizeof *out);
        if (!out)
                abort();
        size_t pos = hdr, end = piece ? (len - pos < piece ? len : pos + piece) : len;
        unsigned long long calls = 0;
        p->n = 0;
        p->rc = 0;
        for (;;) {
                if (++calls > 4 * (unsigned long long)len + 4 * FZD_MAX + 100)
                        fzd_fail("decode makes no progress");
                if (p->n >= FZD_MAX) {
                        p->rc = 1;
                        break;
                }
                if (!p->have_ck && ck_at && p->n >= ck_at) {
                        p->have_ck = 1;
                        p->ck = d->st;
                        p->ck_pos = pos;
                        p->ck_n = p->n;
                }
                /* the input window ends at end: copy it so ASan sees its end */
                size_t wl = end - pos;
                uint8_t *w = malloc(wl ? wl : 1);
                if (!w)
                        abort();
                memcpy(w, raw + pos, wl);
                size_t used = 0, ask = cap < FZD_MAX - p->n ? cap : FZD_MAX - p->n;
                struct tm_err err = {0};
                int eof = end == len;
                ssize_t n = aref_decode(d, w, wl, eof, pos, &used, out, ask, &err);
                free(w);
                if (n < 0) {
                        if (!err.msg[0])
                                fzd_fail("an error without a message");
                        p->rc = (int)n;
                        break;
                }
                if ((size_t)n > ask || used > wl)
                        fzd_fail("decode overran its arguments");
                if (!aref_state_ok(d))
                        fzd_fail("decoding reached a state its state_ok refuses");
                for (ssize_t i = 0; i < n; i++)
                        if (out[i].type >= d->schema.nkinds)
                                fzd_fail("a type beyond the codec's count");
                memcpy(p->r + p->n, out, (size_t)n * sizeof *out);
                p->n += (size_t)n;
                pos += used;
                if (n == 0 && used == 0) {
                        if (eof)
                                break;
                        end = piece && len - end > piece ? end + piece : len;
                } else if (piece && end - pos < piece) {
                        end = len - pos < piece ? len : pos + piece;
                }
        }
        p->stop = pos;
        free(out);
}

/* Same references and outcome. A call that fails returns none of the
 * references it made, so with an error either pass may stop earlier than
 * the other: then the common part must agree and both must fail. */
static int fzd_same(const struct fzd_pass *a, const struct fzd_pass *b)
{
        size_t n = a->n < b->n ? a->n : b->n;
        for (size_t i = 0; i < n; i++)
                if (a->r[i].addr != b->r[i].addr || a->r[i].type != b->r[i].type)
                        return 0;
        if (a->rc == 1 || b->rc == 1)
                return 1; /* a cap: the common part is all there is to compare */
        if (a->rc < 0 || b->rc < 0)
                return a->rc < 0 && b->rc < 0;
        return a->n == b->n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        const struct tm_rcodec *c = tm_rcodec_by_name(fzd_codec);
        if (!c)
                abort();
        static const size_t caps[16] = {1,   2,   3,   5,    7,    16,   31, 64,
                                        100, 255, 256, 1000, 4096, 4097, 9,  33};
        const size_t cap = caps[data[0] & 15];
        const size_t piece = (size_t)(data[0] >> 4) * 23;
        const size_t len = size - 1;
        uint8_t *raw = malloc(len ? len : 1);
        if (!raw)
                abort();
        memcpy(raw, data + 1, len);

        (void)c->probe(raw, len < TM_PROBE_BYTES ? len : TM_PROBE_BYTES);
        /* one trace (ctx), several states: a copy of d0 is a decoder */
        struct aref_dec d0, sa, sb;
        struct tm_err err = {0};
        int hdr = aref_open(&d0, c, raw, len, &err);
        if (hdr < 0) {
                if (!err.msg[0])
                        fzd_fail("open failed without a message");
                free(raw);
                return 0;
        }
        if ((size_t)hdr > len)
                fzd_fail("header longer than the stream");
        static struct tm_ref ra[FZD_MAX], rb[FZD_MAX], rr[FZD_MAX];
        struct fzd_pass a = {.r = ra}, b = {.r = rb};
        sa = d0;
        fzd_run(&sa, raw, len, (size_t)hdr, 0, 4096, &a, 0);
        sb = d0;
        fzd_run(&sb, raw, len, (size_t)hdr, piece, cap, &b, 1 + len % 97);
        if (!fzd_same(&a, &b)) {
                fprintf(stderr, "fuzz_%s: all at once %zu refs (rc %d), in windows %zu (rc %d)\n",
                        fzd_codec, a.n, a.rc, b.n, b.rc);
                abort();
        }
        if (b.have_ck) {
                /* resume from the checkpoint: the rest must be the same */
                struct fzd_pass r = {.r = rr};
                struct aref_dec sc = d0;
                sc.st = b.ck;
                fzd_run(&sc, raw, len, b.ck_pos, piece, cap, &r, 0);
                struct fzd_pass tail = b;
                tail.r = b.r + b.ck_n;
                tail.n = b.n - b.ck_n;
                if (b.rc == 1)
                        r.rc = r.rc < 0 ? r.rc : 1;
                if (!fzd_same(&tail, &r)) {
                        fprintf(stderr,
                                "fuzz_%s: resumed at raw %zu after %zu refs: %zu refs "
                                "(rc %d), first pass %zu (rc %d)\n",
                                fzd_codec, b.ck_pos, b.ck_n, r.n, r.rc, tail.n, tail.rc);
                        abort();
                }
        }
        aref_close(&d0);
        free(raw);
        return 0;
}
