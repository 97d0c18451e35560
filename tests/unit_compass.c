/* The fixture family (tests/fixture/compass.h): its rows reach the
 * registry, the families and the text forms through the linker sections
 * alone (codecs/record/family_row.h, text.h's TM_SHOW_ROW); its show
 * renders the same bytes on every text path (one record, the batch
 * renderers, the lengths, fields/, a hidden field); its decoder names the
 * raw offset of a bad record. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../codecs/record/family_row.h"
#include "../codecs/record/text.h"
#include "../codecs/registry.h"
#include "fixture/compass.h"

/* A header and: step N t=7, step W t=8, jump t=9 to=0x1f, step E t=4294967295. */
static const uint8_t trace[] = {'C', 'M',  'P',  'S', 1, 0,    0, 0,    0x01, 0,    7,   0,
                                0,   0,    0x01, 3,   8, 0,    0, 0,    0x02, 9,    0,   0,
                                0,   0x1f, 0,    0,   0, 0x01, 1, 0xff, 0xff, 0xff, 0xff};
static const char ascii[] = "step 7 N\nstep 8 W\njump 9 0x1f\nstep 4294967295 E\n";

/* Open and decode the whole of in[0..n) into r; the records, or the error. */
static ssize_t decode_all(const uint8_t *in, size_t n, struct tm_schema *s, struct tm_rec *r,
                          size_t cap, struct tm_err *err)
{
        const struct tm_rcodec *c = &tm_rcodec_compass;
        struct tm_rstate st = {0};
        void *ctx;
        int hdr = c->open(in, n, "t.cmps", &ctx, s, &st, err);
        if (hdr < 0)
                return hdr;
        size_t pos = (size_t)hdr, got = 0;
        for (;;) {
                size_t used = 0;
                ssize_t k =
                    c->decode(ctx, &st, in + pos, n - pos, 1, pos, &used, r + got, cap - got, err);
                if (k < 0)
                        return k;
                got += (size_t)k;
                pos += used;
                if (k == 0 && used == 0)
                        return (ssize_t)got;
        }
}

static void test_rows(void **state)
{
        (void)state;
        const char *bad = "";
        assert_int_equal(tm_show_rows_check(&bad), 0);
        assert_ptr_equal(tm_show_row(TM_COMPASS_SHOW), &tm_show_compass);
        assert_null(tm_show_row(TM_COMPASS_SHOW + 1));
        assert_ptr_equal(tm_rcodec_by_name("compass"), &tm_rcodec_compass);
        int bid = 0;
        assert_ptr_equal(tm_registry_probe(tm_registry(), trace, sizeof trace, &bid),
                         &tm_rcodec_compass);
        assert_int_equal(bid, TM_BID_MAGIC);
        /* in the registry once, after the list's rows */
        const struct tm_registry *r = tm_registry();
        unsigned seen = 0;
        for (unsigned i = 0; i < r->n; i++)
                seen += r->row[i] == &tm_rcodec_compass;
        assert_int_equal(seen, 1);
        /* the family: claimed by the section's row, by no row of the list */
        struct tm_schema s;
        struct tm_err err = {0};
        struct tm_rec rec[8];
        assert_int_equal(decode_all(trace, sizeof trace, &s, rec, 8, &err), 4);
        assert_ptr_equal(tm_family_of(&s), &tm_family_compass);
        for (unsigned i = 0; tm_families[i]; i++)
                assert_false(tm_families[i]->claims(&s));
        const struct tm_family *const *end, *const *f = tm_family_rows(&end);
        assert_int_equal(end - f, 1);
        assert_ptr_equal(*f, &tm_family_compass);
}

/* Every text path gives the hand-written ascii, with the show's letters. */
static void test_text(void **state)
{
        (void)state;
        struct tm_schema s;
        struct tm_err err = {0};
        struct tm_rec r[8];
        assert_int_equal(decode_all(trace, sizeof trace, &s, r, 8, &err), 4);
        static struct tm_text_plan p;
        assert_int_equal(tm_text_plan_init(&p, &s), 0);
        char one[4096], line[512];
        size_t n = 0;
        for (unsigned i = 0; i < 4; i++) {
                size_t l = tm_text_line(line, &s, &r[i]);
                assert_int_equal(tm_text_line_len(&p, &r[i]), l);
                assert_int_equal(tm_text_pline(line + 256, &p, &r[i]), l);
                assert_memory_equal(line + 256, line, l);
                uint64_t tok[TM_KIND_FIELDS_MAX];
                assert_int_equal(tm_text_lens(&p, &r[i], tok), l);
                memcpy(one + n, line, l);
                n += l;
        }
        assert_int_equal(n, strlen(ascii));
        assert_memory_equal(one, ascii, n);
        char batch[4096];
        size_t k = 0;
        assert_int_equal(tm_text_lines(batch, sizeof batch, &p, r, 4, &k), n);
        assert_int_equal(k, 4);
        assert_memory_equal(batch, ascii, n);
        static const char steps[] = "step 7 N\nstep 8 W\nstep 4294967295 E\n";
        assert_int_equal(tm_text_kind_lines(batch, sizeof batch, &p, r, 4, 0, &k), strlen(steps));
        assert_memory_equal(batch, steps, strlen(steps));
        int dir = tm_schema_field(&s, "dir");
        assert_int_equal(tm_text_fields(batch, sizeof batch, &p, r, 4, (unsigned)dir, &k), 6);
        assert_memory_equal(batch, "N\nW\nE\n", 6);
        assert_int_equal(tm_text_field(line, &s, &r[1], 1), 2);
        assert_memory_equal(line, "W\n", 2);
        assert_int_equal(tm_text_field_len(&p, &r[1], 1), 2);
        /* hidden: out of the lines, still in fields/ with its show */
        s.field[dir].show |= TM_SHOW_HIDDEN;
        assert_int_equal(tm_text_plan_init(&p, &s), 0);
        assert_int_equal(tm_text_pline(line, &p, &r[0]), 7);
        assert_memory_equal(line, "step 7\n", 7);
        assert_int_equal(tm_text_fields(batch, sizeof batch, &p, r, 4, (unsigned)dir, &k), 6);
        assert_memory_equal(batch, "N\nW\nE\n", 6);
        /* a value no decoder gives still has a token */
        struct tm_rec odd = {.kind = 0, .v = {1, 12}};
        s.field[dir].show &= (uint8_t)~TM_SHOW_HIDDEN;
        assert_int_equal(tm_text_line(line, &s, &odd), 10);
        assert_memory_equal(line, "step 1 12\n", 10);
        odd.v[1] = UINT64_MAX;
        assert_int_equal(tm_text_line(line, &s, &odd), 28);
        assert_memory_equal(line, "step 1 18446744073709551615\n", 28);
}

/* Bad records: -EIO naming the raw offset; the records before come first. */
static void test_bad(void **state)
{
        (void)state;
        struct {
                size_t at;     /* byte changed (or the length cut to) */
                uint8_t to;    /* its value; 0 with cut */
                int cut;       /* 1: the trace ends at at */
                size_t before; /* records decoded before the error */
                const char *msg;
        } cases[] = {
            {14, 0x07, 0, 1, "raw offset 14: compass: unknown record tag (tag 0x07)"},
            {15, 9, 0, 1, "raw offset 14: compass: step: dir above 3 (tag 0x01)"},
            {33, 0, 1, 3, "raw offset 29: compass: truncated"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                uint8_t t[sizeof trace];
                memcpy(t, trace, sizeof trace);
                size_t n = cases[i].cut ? cases[i].at : sizeof trace;
                if (!cases[i].cut)
                        t[cases[i].at] = cases[i].to;
                const struct tm_rcodec *c = &tm_rcodec_compass;
                struct tm_schema s;
                struct tm_rstate st = {0};
                struct tm_err err = {0};
                struct tm_rec r[8];
                void *ctx;
                assert_int_equal(c->open(t, n, "t.cmps", &ctx, &s, &st, &err), TM_COMPASS_HDR);
                size_t used = 0;
                ssize_t k = c->decode(ctx, &st, t + 8, n - 8, 1, 8, &used, r, 8, &err);
                assert_int_equal(k, (ssize_t)cases[i].before);
                k = c->decode(ctx, &st, t + 8 + used, n - 8 - used, 1, 8 + used, &used, r, 8, &err);
                assert_int_equal(k, -EIO);
                assert_non_null(strstr(err.msg, cases[i].msg));
        }
        struct tm_schema s;
        struct tm_rstate st = {0};
        struct tm_err err = {0};
        void *ctx;
        uint8_t v2[8] = {'C', 'M', 'P', 'S', 2, 0, 0, 0};
        assert_int_equal(tm_rcodec_compass.open(v2, 8, "t.cmps", &ctx, &s, &st, &err), -EIO);
        assert_non_null(strstr(err.msg, "raw offset 4: compass: version 2"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_rows),
            cmocka_unit_test(test_text),
            cmocka_unit_test(test_bad),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
