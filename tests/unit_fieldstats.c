/* The generic statistics of views/stats.c: each numeric field's records,
 * minimum and maximum by its declared type, through every way records
 * reach them (one at a time, a column batch of a schema whose kinds have
 * every field, a batch of one whose kinds differ), against a plain
 * computation over the same values; and the stats text and stats.json
 * print a signed field's range signed. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codecs/record/record.h"
#include "views/stats.h"

#define N 5000

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

/* Fields: s (signed), u (unsigned); kind a has both, kind b (when two
 * kinds) only s. */
static void schema(struct tm_schema *s, int two_kinds)
{
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "t");
        s->nfields = 2;
        snprintf(s->field[0].name, sizeof s->field[0].name, "s");
        s->field[0].type = TM_FT_INT;
        snprintf(s->field[1].name, sizeof s->field[1].name, "u");
        s->field[1].type = TM_FT_UINT;
        s->nkinds = two_kinds ? 2 : 1;
        snprintf(s->kind[0].name, sizeof s->kind[0].name, "a");
        s->kind[0].nfields = 2;
        s->kind[0].field[0] = 0;
        s->kind[0].field[1] = 1;
        snprintf(s->kind[1].name, sizeof s->kind[1].name, "b");
        s->kind[1].nfields = 1;
        s->kind[1].field[0] = 0;
        s->kind[1].tag = 1;
}

/* A value crossing zero: small ones of both signs, and now and then the
 * extremes of int64_t (whose bits are the extremes of uint64_t's order
 * turned around). */
static int64_t sval(void)
{
        uint64_t r = rng();
        if (r % 97 == 0)
                return r % 2 ? INT64_MIN : INT64_MAX;
        return (int64_t)(r % 2001) - 1000;
}

struct want {
        uint64_t seen[2];
        int64_t smin, smax;
        uint64_t umin, umax;
};

static void check(const struct tm_stats *st, const struct want *w)
{
        assert_int_equal(st->fseen[0], w->seen[0]);
        assert_int_equal(st->fseen[1], w->seen[1]);
        assert_int_equal((int64_t)st->fmin[0], w->smin);
        assert_int_equal((int64_t)st->fmax[0], w->smax);
        assert_int_equal(st->fmin[1], w->umin);
        assert_int_equal(st->fmax[1], w->umax);
}

/* N records of kinds from the schema (every one a when one kind), given
 * one at a time (batch 0) or as column batches; the figures against the
 * plain computation. */
static void run(int two_kinds, int batch)
{
        struct tm_schema s;
        schema(&s, two_kinds);
        struct tm_stats_acc *a = tm_stats_start(&s);
        assert_non_null(a);
        struct tm_rbatch b;
        assert_int_equal(tm_rbatch_init(&b, s.nfields, 300), 0);
        struct want w = {{0, 0}, INT64_MAX, INT64_MIN, UINT64_MAX, 0};
        for (size_t i = 0; i < N; i++) {
                struct tm_rec r;
                memset(&r, 0, sizeof r);
                r.kind = two_kinds ? (unsigned)(rng() % 2) : 0;
                int64_t v = sval();
                uint64_t u = rng() % 3 ? rng() % 100000 : rng();
                r.v[0] = (uint64_t)v;
                r.v[1] = u;
                w.seen[0]++;
                w.smin = v < w.smin ? v : w.smin;
                w.smax = v > w.smax ? v : w.smax;
                if (r.kind == 0) {
                        w.seen[1]++;
                        w.umin = u < w.umin ? u : w.umin;
                        w.umax = u > w.umax ? u : w.umax;
                }
                if (!batch) {
                        tm_stats_add(a, &r, 1);
                        continue;
                }
                b.kind[b.n] = r.kind;
                b.col[0][b.n] = r.v[0];
                b.col[1][b.n] = r.kind == 0 ? u : 0;
                if (++b.n == b.cap || i + 1 == N) {
                        tm_stats_add_batch(a, &b, NULL);
                        b.n = 0;
                }
        }
        check(tm_stats_get(a), &w);
        tm_rbatch_free(&b);
        tm_stats_free(a);
}

static void test_one_at_a_time(void **state)
{
        (void)state;
        run(0, 0);
        run(1, 0);
}

static void test_batches(void **state)
{
        (void)state;
        run(0, 1); /* the columns path */
        run(1, 1); /* kinds differ: record by record */
}

/* Offset-like values -1 and 5: "-1 5" in the text, "min":-1 in the JSON,
 * not 18446744073709551615. */
static void test_printed_signed(void **state)
{
        (void)state;
        struct tm_schema s;
        schema(&s, 0);
        struct tm_stats_acc *a = tm_stats_start(&s);
        assert_non_null(a);
        struct tm_rec r[2];
        memset(r, 0, sizeof r);
        r[0].v[0] = (uint64_t)-1;
        r[0].v[1] = 7;
        r[1].v[0] = 5;
        r[1].v[1] = 3;
        tm_stats_add(a, r, 2);
        const struct tm_stats *st = tm_stats_get(a);
        struct tm_family_info in = {.name = "t", .codec = "c", .container = "plain"};
        static char text[1 << 14], json[1 << 14];
        size_t n = tm_stats_report(st, &s, &in, text, sizeof text);
        assert_true(n < sizeof text);
        assert_non_null(strstr(text, "\n  s                    2 -1 5\n"));
        assert_non_null(strstr(text, "\n  u                    2 3 7\n"));
        n = tm_stats_json(st, &s, &in, NULL, json, sizeof json);
        assert_true(n < sizeof json);
        assert_non_null(strstr(json, "\"s\":{\"records\":{\"value\":2,\"unit\":\"records\","
                                     "\"exact\":true},\"min\":{\"value\":-1,\"unit\":null,"
                                     "\"exact\":true},\"max\":{\"value\":5,"));
        assert_non_null(strstr(json, "\"u\":{\"records\":{\"value\":2,\"unit\":\"records\","
                                     "\"exact\":true},\"min\":{\"value\":3,\"unit\":null,"
                                     "\"exact\":true},\"max\":{\"value\":7,"));
        tm_stats_free(a);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_one_at_a_time),
            cmocka_unit_test(test_batches),
            cmocka_unit_test(test_printed_signed),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
