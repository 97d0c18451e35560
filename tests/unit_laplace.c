/* Laplace traces (codecs/laplace/laplace.h, docs/formats/laplace.md).
 *
 * The raw reference records: the test writes 18-byte records of random
 * values itself (little-endian, packed), finds the codec through the
 * registry's probe (the shipped bound row laplace_raw), decodes them in
 * windows of several sizes and compares every value; a cut last record is
 * -EIO naming its raw offset. The probe does not take what is not Laplace:
 * random bytes, text, a record with a type that is not a letter, a stream
 * that is not whole records.
 *
 * The text form (laplace_text): the same references written as lines by
 * the test decode to the same values under the same schema; a bad line is
 * -EIO naming its raw offset and line.
 *
 * The type shows as its character in ascii and fields/type. The encoders:
 * the test's references written as text by the encoder are the lines the
 * test prints itself, and as raw the bytes it packs itself; an address
 * trace's kinds become valgrind's letters with the record's number for
 * the time and the address's high half for the space; what a form cannot
 * hold is refused naming the record.
 *
 * Kernel events: every tag of the catalog, lines printed by the test,
 * decode to the test's values in windows of several sizes; a bad line
 * (each way one can be) is -EIO naming its raw offset and line. The
 * laplace family's figures are the test's own counts, past the table of
 * spaces too ("at least"), and a block with a part larger than its whole
 * is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../codecs/laplace/laplace.h"
#include "../codecs/laplace/lapfamily.h"
#include "../codecs/record/text.h"
#include "../codecs/record/record.h"
#include "../views/stats.h"
#include "support/tmtest.h"

struct ref {
        uint8_t type, size;
        uint64_t time;
        uint32_t space, address;
};

static void put_le(uint8_t *p, uint64_t v, unsigned w)
{
        for (unsigned i = 0; i < w; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* n random references into *v and their raw bytes (both malloc'd). */
static uint8_t *make_raw(size_t n, uint64_t seed, struct ref **v, size_t *len)
{
        static const uint8_t types[] = {'i', 'r', 'w', 'm'};
        *len = n * TM_LAPLACE_REC;
        uint8_t *raw = malloc(*len ? *len : 1);
        *v = malloc((n ? n : 1) * sizeof **v);
        assert_non_null(raw);
        assert_non_null(*v);
        for (size_t i = 0; i < n; i++) {
                struct ref *x = &(*v)[i];
                uint64_t r = tmt_rand(&seed);
                x->type = types[r % 4];
                x->size = (uint8_t)(1u << (r >> 8) % 4);
                x->time = tmt_rand(&seed) >> (r % 64);
                x->space = (uint32_t)(r >> 16);
                x->address = (uint32_t)tmt_rand(&seed);
                uint8_t *p = raw + i * TM_LAPLACE_REC;
                p[0] = x->type;
                put_le(p + 1, x->time, 8);
                p[9] = x->size;
                put_le(p + 10, x->space, 4);
                put_le(p + 14, x->address, 4);
        }
        return raw;
}

static const struct tm_rcodec *probe(const uint8_t *raw, size_t len)
{
        return tm_rcodec_probe(raw, len < TM_RHEAD_MIN ? len : TM_RHEAD_MIN);
}

/* Decode raw[0..len) with c in windows growing by piece bytes, as the
 * views do; records into out (room for max). The count or -errno. */
static ssize_t decode_all(const struct tm_rcodec *c, const uint8_t *raw, size_t len, size_t piece,
                          struct tm_rec *out, size_t max, struct tm_schema *s, struct tm_err *err)
{
        void *ctx;
        struct tm_rstate *st = malloc(sizeof *st);
        assert_non_null(st);
        size_t head = len < TM_RHEAD_MIN ? len : TM_RHEAD_MIN;
        int hl = c->open(raw, head, "/nowhere/x.lpr", &ctx, s, st, err);
        if (hl < 0) {
                free(st);
                return hl;
        }
        size_t pos = (size_t)hl, n = 0, end = pos;
        ssize_t ret = 0;
        for (;;) {
                end = len - end > piece ? end + piece : len;
                size_t used = 0;
                ret = c->decode(ctx, st, raw + pos, end - pos, end == len, pos, &used, out + n,
                                max - n < 50 ? max - n : 50, err);
                if (ret < 0)
                        break;
                n += (size_t)ret;
                pos += used;
                if (end == len && used == 0 && ret == 0)
                        break;
                if (used)
                        end = pos;
        }
        c->close(ctx);
        free(st);
        return ret < 0 ? ret : (ssize_t)n;
}

static void check_schema(const struct tm_schema *s)
{
        static const char *const names[] = {"type", "time", "size", "space", "address"};
        assert_int_equal(s->nkinds, 1);
        assert_string_equal(s->kind[0].name, "ref");
        assert_int_equal(s->kind[0].nfields, 5);
        for (unsigned i = 0; i < 5; i++)
                assert_string_equal(s->field[s->kind[0].field[i]].name, names[i]);
}

static void check_refs(const struct tm_schema *s, const struct tm_rec *r, const struct ref *v,
                       size_t n)
{
        int f[5];
        static const char *const names[] = {"type", "time", "size", "space", "address"};
        for (unsigned i = 0; i < 5; i++)
                f[i] = tm_kind_pos(&s->kind[0], (unsigned)tm_schema_field(s, names[i]));
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(r[i].kind, 0);
                assert_int_equal(r[i].v[f[0]], v[i].type);
                assert_int_equal(r[i].v[f[1]], v[i].time);
                assert_int_equal(r[i].v[f[2]], v[i].size);
                assert_int_equal(r[i].v[f[3]], v[i].space);
                assert_int_equal(r[i].v[f[4]], v[i].address);
        }
}

static void test_raw_round(void **state)
{
        (void)state;
        static const size_t counts[] = {1, 2, 227, 228, 5000};
        static const size_t pieces[] = {1, 17, 18, 4096};
        for (unsigned k = 0; k < sizeof counts / sizeof counts[0]; k++) {
                struct ref *v;
                size_t len;
                uint8_t *raw = make_raw(counts[k], 7 + k, &v, &len);
                const struct tm_rcodec *c = probe(raw, len);
                assert_non_null(c);
                assert_string_equal(c->name, "laplace_raw");
                struct tm_rec *out = malloc(counts[k] * sizeof *out);
                struct tm_schema *s = malloc(sizeof *s);
                assert_non_null(out);
                assert_non_null(s);
                for (unsigned p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
                        struct tm_err err = {0};
                        ssize_t n = decode_all(c, raw, len, pieces[p], out, counts[k], s, &err);
                        if (n < 0)
                                fail_msg("%zu records, piece %zu: %s", counts[k], pieces[p],
                                         err.msg);
                        assert_int_equal(n, counts[k]);
                        check_schema(s);
                        check_refs(s, out, v, counts[k]);
                }
                free(s);
                free(out);
                free(raw);
                free(v);
        }
}

/* A cut last record: -EIO naming the cut record's raw offset. The probe
 * sees more than 4 KiB, so the size is not known to it and it accepts. */
static void test_raw_truncated(void **state)
{
        (void)state;
        struct ref *v;
        size_t len;
        uint8_t *raw = make_raw(300, 3, &v, &len);
        const struct tm_rcodec *c = tm_rcodec_by_name("laplace_raw");
        assert_non_null(c);
        struct tm_rec out[300];
        struct tm_schema *s = malloc(sizeof *s);
        assert_non_null(s);
        for (size_t cut = 1; cut < TM_LAPLACE_REC; cut += 4) {
                struct tm_err err = {0};
                assert_ptr_equal(probe(raw, len - cut), c);
                ssize_t n = decode_all(c, raw, len - cut, 100, out, 300, s, &err);
                assert_int_equal(n, -EIO);
                char want[64];
                snprintf(want, sizeof want, "raw offset %d", 299 * TM_LAPLACE_REC);
                if (!strstr(err.msg, want) || !strstr(err.msg, "truncated"))
                        fail_msg("cut %zu: %s", cut, err.msg);
        }
        /* a whole stream under 4 KiB that is not whole records: not taken */
        assert_ptr_not_equal(probe(raw, 10 * TM_LAPLACE_REC + 5), c);
        assert_ptr_equal(probe(raw, 10 * TM_LAPLACE_REC), c);
        free(s);
        free(raw);
        free(v);
}

/* What the probe must not take. */
static void test_raw_probe_refuses(void **state)
{
        (void)state;
        const struct tm_rcodec *c = tm_rcodec_by_name("laplace_raw");
        assert_non_null(c);
        uint64_t seed = 11;
        uint8_t buf[8192];
        for (int round = 0; round < 100; round++) { /* random bytes */
                for (size_t i = 0; i < sizeof buf; i++)
                        buf[i] = (uint8_t)tmt_rand(&seed);
                assert_int_equal(c->probe(buf, TM_RHEAD_MIN), 0);
        }
        memset(buf, 0, sizeof buf); /* zeros */
        assert_int_equal(c->probe(buf, TM_RHEAD_MIN), 0);
        for (size_t i = 0; i < sizeof buf; i++) /* text */
                buf[i] = (uint8_t)("the quick brown fox jumps 0123 over the lazy dog.\n"[i % 50]);
        assert_int_equal(c->probe(buf, TM_RHEAD_MIN), 0);
        /* one record with a type that is not a letter, or a size of 0 */
        struct ref *v;
        size_t len;
        uint8_t *raw = make_raw(500, 5, &v, &len);
        assert_int_equal(c->probe(raw, TM_RHEAD_MIN), TM_BID_SIZE_CHECKED);
        raw[100 * TM_LAPLACE_REC] = '3';
        assert_int_equal(c->probe(raw, TM_RHEAD_MIN), 0);
        raw[100 * TM_LAPLACE_REC] = 'r';
        raw[200 * TM_LAPLACE_REC + TM_LAPLACE_OFF_SIZE] = 0;
        assert_int_equal(c->probe(raw, TM_RHEAD_MIN), 0);
        assert_int_equal(c->probe(raw, 0), 0);
        free(raw);
        free(v);
}

/* refs[0..n) as text lines (malloc'd), the paper's form. */
static char *make_text(const struct ref *v, size_t n, size_t *len)
{
        char *t = malloc(n * 48 + 1);
        assert_non_null(t);
        size_t at = 0;
        for (size_t i = 0; i < n; i++)
                at += (size_t)sprintf(t + at, i % 2 ? "%c %llx %x %x %x\n" : "%c\t%016llX  %x %X %x\n",
                                      v[i].type, (unsigned long long)v[i].time, v[i].size,
                                      v[i].space, v[i].address);
        *len = at;
        return t;
}

static void test_text(void **state)
{
        (void)state;
        struct ref *v;
        size_t rlen, tlen, n = 700;
        uint8_t *raw = make_raw(n, 21, &v, &rlen);
        char *text = make_text(v, n, &tlen);
        const struct tm_rcodec *c = probe((const uint8_t *)text, tlen);
        assert_non_null(c);
        assert_string_equal(c->name, "laplace_text");
        struct tm_rec *out = malloc(n * sizeof *out), *rout = malloc(n * sizeof *rout);
        struct tm_schema *s = malloc(sizeof *s), *rs = malloc(sizeof *rs);
        assert_true(out && rout && s && rs);
        struct tm_err err = {0};
        assert_int_equal(decode_all(c, (const uint8_t *)text, tlen, 37, out, n, s, &err), n);
        check_schema(s);
        check_refs(s, out, v, n);
        /* the raw form's schema and records, exactly */
        assert_int_equal(decode_all(probe(raw, rlen), raw, rlen, 4096, rout, n, rs, &err), n);
        assert_memory_equal(s, rs, sizeof *s);
        for (size_t i = 0; i < n; i++)
                assert_memory_equal(out[i].v, rout[i].v, 5 * sizeof out[i].v[0]);
        /* a bad line: its raw offset and number */
        static const char *const bad[] = {"r 1 4 9f8e7\n", "rr 1 4 1 1\n", "r 1 100 1 1\n",
                                          "r 1 4 1 123456789\n", "r 1 4 1 1 x\n",
                                          "r 1 4 1 1"};
        size_t line3 = (size_t)(strchr(strchr(strchr(text, '\n') + 1, '\n') + 1, '\n') + 1 - text);
        for (unsigned b = 0; b < sizeof bad / sizeof bad[0]; b++) {
                char *t = malloc(line3 + strlen(bad[b]) + tlen);
                assert_non_null(t);
                memcpy(t, text, line3);
                strcpy(t + line3, bad[b]);
                size_t len = line3 + strlen(bad[b]);
                if (b + 1 < sizeof bad / sizeof bad[0]) { /* then more good lines */
                        memcpy(t + len, text, tlen);
                        len += tlen;
                }
                memset(&err, 0, sizeof err);
                assert_int_equal(decode_all(c, (const uint8_t *)t, len, 50, out, n, s, &err), -EIO);
                char want[64];
                snprintf(want, sizeof want, "raw offset %zu: laplace line 4: ", line3);
                if (!strstr(err.msg, want))
                        fail_msg("bad line %u: %s", b, err.msg);
                free(t);
        }
        free(s);
        free(rs);
        free(out);
        free(rout);
        free(text);
        free(raw);
        free(v);
}

/* ---- the type as a character ---- */

static void test_type_shown(void **state)
{
        (void)state;
        struct ref *v;
        size_t len;
        uint8_t *raw = make_raw(3, 9, &v, &len);
        raw[2 * TM_LAPLACE_REC] = 0x01; /* not graphic: %01, as a byte of text shows */
        v[2].type = 0x01;
        const struct tm_rcodec *c = tm_rcodec_by_name("laplace_raw");
        struct tm_rec out[3];
        struct tm_schema *s = malloc(sizeof *s);
        assert_non_null(s);
        struct tm_err err = {0};
        assert_int_equal(decode_all(c, raw, len, 4096, out, 3, s, &err), 3);
        for (unsigned i = 0; i < 3; i++) {
                char want[128], got[512], tok[8];
                if (v[i].type > 0x20 && v[i].type < 0x7f)
                        snprintf(tok, sizeof tok, "%c", v[i].type);
                else
                        snprintf(tok, sizeof tok, "%%%02X", v[i].type);
                snprintf(want, sizeof want, "ref %s 0x%llx %u 0x%x 0x%x\n", tok,
                         (unsigned long long)v[i].time, v[i].size, v[i].space, v[i].address);
                size_t n = tm_text_line(got, s, &out[i]);
                assert_int_equal(n, strlen(want));
                assert_memory_equal(got, want, n);
                n = tm_text_field(got, s, &out[i], 0);
                assert_int_equal(n, strlen(tok) + 1);
                assert_memory_equal(got, tok, n - 1);
        }
        free(s);
        free(raw);
        free(v);
}

/* ---- the encoders ---- */

static int sink_buf(void *arg, const void *p, size_t n)
{
        return tmt_put(arg, p, n);
}

/* r[0..n) through row c's encoder into b (reset); the encoder's result. */
static int encode(const struct tm_rcodec *c, const struct tm_rec *r, size_t n, struct tmt_buf *b,
                  struct tm_err *err)
{
        struct tm_renc *e = NULL;
        b->len = 0;
        assert_int_equal(c->enc_open(NULL, sink_buf, b, &e, err), 0);
        int rc = c->enc_put(e, r, n, 0, err);
        if (rc < 0) {
                c->enc_free(e);
                return rc;
        }
        return c->enc_finish(e, err);
}

static void test_encoders(void **state)
{
        (void)state;
        const struct tm_rcodec *rawc = tm_rcodec_by_name("laplace_raw"),
                               *textc = tm_rcodec_by_name("laplace_text");
        assert_non_null(rawc->enc_open);
        assert_non_null(textc->enc_open);
        struct ref *v;
        size_t rlen, n = 600;
        uint8_t *raw = make_raw(n, 31, &v, &rlen);
        struct tm_rec *out = malloc(n * sizeof *out);
        struct tm_schema *s = malloc(sizeof *s), *es = malloc(sizeof *es);
        assert_true(out && s && es);
        struct tm_err err = {0};
        assert_int_equal(decode_all(rawc, raw, rlen, 4096, out, n, s, &err), n);
        /* raw -> text: the lines the test prints (lowercase hex, no 0x, one blank) */
        struct tmt_buf text = {0}, want = {0}, back = {0};
        assert_int_equal(encode(textc, out, n, &text, &err), 0);
        for (size_t i = 0; i < n; i++) {
                char line[64];
                int k = snprintf(line, sizeof line, "%c %llx %x %x %x\n", v[i].type,
                                 (unsigned long long)v[i].time, v[i].size, v[i].space,
                                 v[i].address);
                assert_int_equal(tmt_put(&want, line, (size_t)k), 0);
        }
        assert_int_equal(text.len, want.len);
        assert_memory_equal(text.p, want.p, want.len);
        /* text -> raw: the test's bytes */
        assert_int_equal(decode_all(textc, text.p, text.len, 333, out, n, s, &err), n);
        assert_int_equal(encode(rawc, out, n, &back, &err), 0);
        assert_int_equal(back.len, rlen);
        assert_memory_equal(back.p, raw, rlen);
        /* an address trace's references (lackey's kinds, size and address) */
        tm_laplace_enc_schema(es);
        struct tm_rec a[3];
        memset(a, 0, sizeof a);
        static const char *const kinds[] = {"read", "write", "ifetch"};
        for (unsigned i = 0; i < 3; i++) {
                a[i].kind = (uint32_t)tm_schema_kind(es, kinds[i]);
                assert_true(tm_schema_field(es, "size") == es->kind[a[i].kind].field[0]);
                a[i].v[0] = 1u << i;
                a[i].v[1] = 0x1fff000628ull + i;
        }
        assert_int_equal(encode(textc, a, 3, &text, &err), 0);
        const char *lines = "L 0 1 1f ff000628\nS 1 2 1f ff000629\nI 2 4 1f ff00062a\n";
        assert_int_equal(text.len, strlen(lines));
        assert_memory_equal(text.p, lines, text.len);
        /* what a form cannot hold: refused, naming the record */
        struct tm_rec bad[2];
        memcpy(bad, out, sizeof bad);
        static const struct {
                unsigned pos;
                uint64_t v;
                int text;
        } no[] = {{2, 256, 0}, {3, 1ull << 32, 0}, {4, 1ull << 32, 0}, {0, 256, 0}, {0, 0x01, 1},
                  {0, ' ', 1}};
        for (unsigned k = 0; k < sizeof no / sizeof no[0]; k++) {
                memcpy(bad, out, sizeof bad);
                bad[1].v[no[k].pos] = no[k].v;
                memset(&err, 0, sizeof err);
                assert_int_equal(encode(no[k].text ? textc : rawc, bad, 2, &back, &err), -EINVAL);
                if (!strstr(err.msg, "record 1"))
                        fail_msg("refusal %u: %s", k, err.msg);
        }
        a[0].v[0] = 256;
        assert_int_equal(encode(rawc, a, 1, &back, &err), -EINVAL);
        free(text.p);
        free(want.p);
        free(back.p);
        free(es);
        free(s);
        free(out);
        free(raw);
        free(v);
}

/* ---- kernel events ---- */

struct kev {
        unsigned tag;
        uint64_t v[4]; /* time, then the tag's fields */
};

static const unsigned kev_nf[TM_LPK_N] = {3, 2, 2, 2, 4, 4}; /* fields with the time */

/* n events, every tag in turn, as lines printed by the test (tabs, upper
 * case, leading zeros on some); *ev their values. */
static char *make_kev(size_t n, uint64_t seed, struct kev **ev, size_t *len)
{
        char *t = malloc(n * 96 + 1);
        *ev = malloc(n * sizeof **ev);
        assert_true(t && *ev);
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
                struct kev *e = &(*ev)[i];
                e->tag = (unsigned)(i % TM_LPK_N);
                at += (size_t)sprintf(t + at, "%s", tm_schema_laplace_kev.kind[e->tag].name);
                for (unsigned f = 0; f < kev_nf[e->tag]; f++) {
                        uint64_t r = tmt_rand(&seed);
                        e->v[f] = f == 0 ? r >> (r % 64) : (uint32_t)r >> (r % 32);
                        at += (size_t)sprintf(t + at, i % 3 == 0   ? "\t%llX"
                                                      : i % 3 == 1 ? " %08llx"
                                                                   : "  %llx",
                                              (unsigned long long)e->v[f]);
                }
                t[at++] = '\n';
        }
        *len = at;
        return t;
}

static void test_kernel(void **state)
{
        (void)state;
        static const size_t pieces[] = {1, 7, 64, 100000};
        struct kev *ev;
        size_t len, n = 1200;
        char *text = make_kev(n, 17, &ev, &len);
        const struct tm_rcodec *c = probe((const uint8_t *)text, len);
        assert_non_null(c);
        assert_string_equal(c->name, "laplace_kev");
        struct tm_rec *out = malloc(n * sizeof *out);
        struct tm_schema *s = malloc(sizeof *s);
        assert_true(out && s);
        for (unsigned p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
                struct tm_err err = {0};
                ssize_t got = decode_all(c, (const uint8_t *)text, len, pieces[p], out, n, s, &err);
                if (got < 0)
                        fail_msg("piece %zu: %s", pieces[p], err.msg);
                assert_int_equal(got, n);
                for (size_t i = 0; i < n; i++) {
                        assert_int_equal(out[i].kind, ev[i].tag);
                        assert_int_equal(s->kind[ev[i].tag].nfields, kev_nf[ev[i].tag]);
                        assert_memory_equal(out[i].v, ev[i].v, kev_nf[ev[i].tag] * 8);
                }
        }
        /* each tag's line as ascii shows it: the tag, then 0x hex (size decimal) */
        char line[512];
        size_t k = tm_text_line(line, s, &out[TM_LPK_MMAP]);
        char want[160];
        snprintf(want, sizeof want, "mmap 0x%llx 0x%llx 0x%llx %llu\n",
                 (unsigned long long)ev[4].v[0], (unsigned long long)ev[4].v[1],
                 (unsigned long long)ev[4].v[2], (unsigned long long)ev[4].v[3]);
        assert_int_equal(k, strlen(want));
        assert_memory_equal(line, want, k);
        /* the forms do not take each other's lines */
        assert_int_equal(tm_rcodec_laplace_text.probe((const uint8_t *)text, 4096), 0);
        assert_int_equal(tm_rcodec_laplace_kev.probe((const uint8_t *)"r 1 4 1 1\n", 10), 0);
        assert_int_equal(tm_rcodec_laplace_kev.probe((const uint8_t *)"spawn 1 2\n", 10), 0);
        free(s);
        free(out);
        free(text);
        free(ev);
}

static void test_kernel_bad(void **state)
{
        (void)state;
        struct kev *ev;
        size_t len, n = 30;
        char *text = make_kev(n, 5, &ev, &len);
        static const char *const bad[] = {
            "spawn 1 2\n",          "fork 1 2\n",        "exit 1 2 3\n",  "switch 1 xyz\n",
            "switch 12345678901234567 1\n", "switch 1 123456789\n", "switch 0x10 1\n", "\n",
            "mmap 1 2 3 4 5\n",     "munmap 1 2 3\n",    "switch 1 1"};
        size_t line3 = (size_t)(strchr(strchr(strchr(text, '\n') + 1, '\n') + 1, '\n') + 1 - text);
        const struct tm_rcodec *c = &tm_rcodec_laplace_kev;
        struct tm_rec out[64];
        struct tm_schema *s = malloc(sizeof *s);
        assert_non_null(s);
        char *t = malloc(line3 + 512 + len);
        assert_non_null(t);
        for (unsigned b = 0; b <= sizeof bad / sizeof bad[0]; b++) {
                memcpy(t, text, line3);
                size_t at = line3;
                if (b < sizeof bad / sizeof bad[0]) {
                        strcpy(t + at, bad[b]);
                        at += strlen(bad[b]);
                } else { /* a line over 128 bytes */
                        at += (size_t)sprintf(t + at, "switch 1");
                        while (at - line3 < 200)
                                t[at++] = ' ';
                        t[at++] = '1';
                        t[at++] = '\n';
                }
                if (b + 1 != sizeof bad / sizeof bad[0]) { /* good lines after it */
                        memcpy(t + at, text, len);
                        at += len;
                }
                for (size_t piece = 5; piece < 5000; piece *= 9) {
                        struct tm_err err = {0};
                        assert_int_equal(
                            decode_all(c, (const uint8_t *)t, at, piece, out, 64, s, &err), -EIO);
                        char want[64];
                        snprintf(want, sizeof want, "raw offset %zu: laplace kernel line 4: ",
                                 line3);
                        if (!strstr(err.msg, want))
                                fail_msg("bad line %u, piece %zu: %s", b, piece, err.msg);
                }
        }
        free(t);
        free(s);
        free(text);
        free(ev);
}

/* ---- the laplace family ---- */

/* The family's block for the records r[0..n) of schema s. */
static void family_pass(const struct tm_schema *s, const struct tm_rec *r, size_t n,
                        struct tm_laplace_stats *st)
{
        const struct tm_family *f = tm_family_of(s);
        assert_ptr_equal(f, &tm_family_laplace);
        struct tm_family_acc *a = f->acc_start(s);
        assert_non_null(a);
        for (size_t i = 0; i < n; i += 7)
                f->acc_add(a, r + i, n - i < 7 ? n - i : 7);
        f->acc_finish(a, st);
        f->acc_free(a);
        assert_int_equal(f->stats_ok(st), 1);
}

static void test_family(void **state)
{
        (void)state;
        struct ref *v;
        size_t len, n = 3000;
        uint8_t *raw = make_raw(n, 41, &v, &len);
        /* 70 spaces: 0..69, space i first met at record i */
        for (size_t i = 0; i < n; i++) {
                v[i].space = (uint32_t)(i < 70 ? i : v[i].address % 70);
                uint8_t *p = raw + i * TM_LAPLACE_REC + TM_LAPLACE_OFF_SPACE;
                for (unsigned b = 0; b < 4; b++)
                        p[b] = (uint8_t)(v[i].space >> (8 * b));
        }
        const struct tm_rcodec *c = tm_rcodec_by_name("laplace_raw");
        struct tm_rec *out = malloc(n * sizeof *out);
        struct tm_schema *s = malloc(sizeof *s);
        struct tm_laplace_stats *st = malloc(sizeof *st), *bad = malloc(sizeof *bad);
        assert_true(out && s && st && bad);
        struct tm_err err = {0};
        assert_int_equal(decode_all(c, raw, len, 4096, out, n, s, &err), n);
        assert_string_equal(s->name, "laplace");
        family_pass(s, out, n, st);
        uint64_t types[256] = {0}, spaces[70] = {0};
        for (size_t i = 0; i < n; i++) {
                types[v[i].type]++;
                spaces[v[i].space]++;
        }
        assert_int_equal(st->refs, n);
        assert_memory_equal(st->type_n, types, sizeof types);
        assert_int_equal(st->nspaces, TM_LAPLACE_SPACES);
        assert_int_equal(st->spaces_inexact, 1);
        uint64_t other = 0;
        for (unsigned i = 0; i < 70; i++) {
                if (i < TM_LAPLACE_SPACES) {
                        assert_int_equal(st->space_id[i], i);
                        assert_int_equal(st->space_n[i], spaces[i]);
                } else {
                        other += spaces[i];
                }
        }
        assert_int_equal(st->other_n, other);
        char *rep = malloc(1 << 16);
        assert_non_null(rep);
        const struct tm_family *f = &tm_family_laplace;
        struct tm_family_info in = {.name = "t", .codec = "t", .container = "plain"};
        size_t rn = tm_stats_family_text(f, st, s, &in, rep, 1 << 16);
        rep[rn] = 0;
        char want[64];
        snprintf(want, sizeof want, "    %-3s %16llu", "r", (unsigned long long)types['r']);
        if (!strstr(rep, "address spaces     at least 65\n") || !strstr(rep, want))
                fail_msg("report: %s", rep);
        /* a block with a part larger than its whole: refused */
        memcpy(bad, st, sizeof *bad);
        bad->type_n['r']++;
        assert_int_equal(f->stats_ok(bad), 0);
        memcpy(bad, st, sizeof *bad);
        bad->nspaces = TM_LAPLACE_SPACES + 1;
        assert_int_equal(f->stats_ok(bad), 0);
        memcpy(bad, st, sizeof *bad);
        bad->space_n[3] = n + 1;
        assert_int_equal(f->stats_ok(bad), 0);
        /* kernel events: per tag */
        struct kev *ev;
        size_t klen, kn = 500;
        char *text = make_kev(kn, 3, &ev, &klen);
        struct tm_rec *kout = malloc(kn * sizeof *kout);
        assert_non_null(kout);
        assert_int_equal(decode_all(&tm_rcodec_laplace_kev, (const uint8_t *)text, klen, 4096,
                                    kout, kn, s, &err),
                         kn);
        family_pass(s, kout, kn, st);
        uint64_t tags[TM_LPK_N] = {0};
        for (size_t i = 0; i < kn; i++)
                tags[ev[i].tag]++;
        assert_int_equal(st->events, kn);
        assert_int_equal(st->refs, 0);
        assert_memory_equal(st->tag_n, tags, sizeof tags);
        assert_int_equal(st->spaces_inexact, 1); /* the test's spaces are random */
        free(kout);
        free(text);
        free(ev);
        free(rep);
        free(bad);
        free(st);
        free(s);
        free(out);
        free(raw);
        free(v);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_raw_round),
            cmocka_unit_test(test_raw_truncated),
            cmocka_unit_test(test_raw_probe_refuses),
            cmocka_unit_test(test_text),
            cmocka_unit_test(test_type_shown),
            cmocka_unit_test(test_encoders),
            cmocka_unit_test(test_kernel),
            cmocka_unit_test(test_kernel_bad),
            cmocka_unit_test(test_family),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
