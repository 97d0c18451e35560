/* fuzz_ptf: libFuzzer harness for the PTF decoders (codecs/object/ptf.c,
 * the ASCII form; ptf_bin.c, the binary form), the ASCII writer
 * (ptf_write.c) and the object family's statistics and verifier
 * (ptf_stats.c).
 *
 * Byte 0's bit 7 picks the form (binary when set); the rest of the input
 * is fz_rec.h's (the records asked per call, the window, the raw stream,
 * the binary form's header first), and so is the check: whole against
 * windows with the state copied at every call (both decoders return the
 * records before a bad line or record first), then the object family's
 * pass, report and verify. Then the writer: the records the stream
 * decodes to (up to its first error) written as text either are refused
 * (-EINVAL) or give a text the ASCII decoder reads whole, whose records
 * written again give the same text; from an ASCII stream the text holds
 * exactly the records decoded. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/object/ptf.h"
#include "codecs/object/ptf_stats.h"
#include "fz_rec.h"

struct out {
        uint8_t *p;
        size_t len, cap;
};

static int sink(void *arg, const void *p, size_t n)
{
        struct out *o = arg;
        if (o->len + n > o->cap) {
                size_t cap = (o->len + n) * 2;
                uint8_t *q = realloc(o->p, cap);
                if (!q)
                        return -ENOMEM;
                o->p = q;
                o->cap = cap;
        }
        memcpy(o->p + o->len, p, n);
        o->len += n;
        return 0;
}

/* The records of raw[0..len) (row c) written as text into o, up to the
 * decoder's first error; *n the records, *whole whether there was none.
 * 0, or the writer's error (1: the stream does not open). */
static int write_text(const struct tm_rcodec *c, const uint8_t *raw, size_t len, struct out *o,
                      uint64_t *n, int *whole)
{
        struct tm_schema s;
        struct tm_rstate st;
        struct tm_err err = {0};
        void *ctx = NULL;
        int hl = c->open(raw, len, "fuzz", &ctx, &s, &st, &err);
        *n = 0;
        *whole = 0;
        o->len = 0;
        if (hl < 0)
                return 1;
        struct tm_renc *e;
        if (tm_ptf_enc_open(NULL, sink, o, &e, &err) < 0)
                abort();
        static struct tm_rec r[64];
        size_t pos = (size_t)hl < len ? (size_t)hl : len;
        int rc = 0;
        for (;;) {
                size_t used = 0;
                ssize_t m = c->decode(ctx, &st, raw + pos, len - pos, 1, pos, &used, r, 64, &err);
                *whole = m == 0 && used == 0;
                if (m < 0 || *whole)
                        break;
                rc = tm_ptf_enc_put(e, r, (size_t)m, *n, &err);
                if (rc < 0)
                        break;
                *n += (uint64_t)m;
                pos += used;
        }
        if (c->close)
                c->close(ctx);
        if (rc < 0) {
                if (rc != -EINVAL || !err.msg[0])
                        abort();
                tm_ptf_enc_free(e);
                return rc;
        }
        return tm_ptf_enc_finish(e, &err);
}

static void check_writer(const struct tm_rcodec *c, const uint8_t *raw, size_t len)
{
        struct out a = {0}, b = {0};
        uint64_t n, n2;
        int whole, whole2;
        if (write_text(c, raw, len, &a, &n, &whole) == 0) {
                /* the text decodes whole and says the same again; a whole
                 * ASCII stream's records are the text's */
                if (write_text(&tm_rcodec_ptf, a.p, a.len, &b, &n2, &whole2) != 0 || !whole2)
                        abort();
                if (a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
                        abort();
                if (c == &tm_rcodec_ptf && whole && n2 != n)
                        abort();
        }
        free(a.p);
        free(b.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const struct tm_rcodec *c = size && (data[0] & 0x80) ? &tm_rcodec_ptf_bin : &tm_rcodec_ptf;
        int rc = fzr_run("fuzz_ptf", c, &tm_family_object, 0, data, size);
        if (size >= 2) /* fz_rec.h's raw stream */
                check_writer(c, data + 2, size - 2);
        return rc;
}
