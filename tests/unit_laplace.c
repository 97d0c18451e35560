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
 * -EIO naming its raw offset and line. */
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
#include "../codecs/record/record.h"
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
        assert_int_equal(c->probe(raw, TM_RHEAD_MIN), 1);
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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_raw_round),
            cmocka_unit_test(test_raw_truncated),
            cmocka_unit_test(test_raw_probe_refuses),
            cmocka_unit_test(test_text),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
