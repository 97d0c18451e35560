/* Statistics rows (codecs/record/statrow.h) rendered by views/: the text
 * template of every kind of value against snprintf with the printf
 * format it stands for, and stats.json's groups, keyless rows and
 * exactness for a family whose rows are made here. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "codecs/record/family.h"
#include "views/stats.h"

/* ---- the text: one row a case, and what printf makes of it ---- */

static const char *const KEY_ID[] = {"threads", "1919", "records", NULL};

struct tcase {
        struct tm_row row;
        char want[96];
};

#define NCASES 24
static struct tcase cases[NCASES];
static unsigned ncases;

static struct tm_row *add_case(const char *text, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static struct tm_row *add_case(const char *text, const char *fmt, ...)
{
        struct tcase *c = &cases[ncases++];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->want, sizeof c->want, fmt, ap);
        va_end(ap);
        memset(&c->row, 0, sizeof c->row);
        c->row.key = KEY_ID;
        c->row.text = text;
        c->row.exact = 1;
        return &c->row;
}

static void make_cases(void)
{
        uint64_t big = UINT64_C(0xfedcba9876543210);
        ncases = 0;
        add_case("a {} b\n", "a %" PRIu64 " b\n", big)->v.u = big;
        add_case("[{14}]", "[%14" PRIu64 "]", UINT64_C(42))->v.u = 42;
        add_case("[{-14}]", "[%-14" PRIu64 "]", UINT64_C(42))->v.u = 42;
        add_case("{x}", "%" PRIx64, big)->v.u = big;
        add_case(" 0x{18x}", " 0x%18" PRIx64, big)->v.u = big;
        add_case("{c}{c}", "%c%c", 'A', 'A')->v.u = 'A';
        struct tm_row *r = add_case("{}|{x}", "%" PRId64 "|%" PRIx64, INT64_C(-5), (uint64_t)-5);
        r->type = TM_ROW_I64;
        r->v.i = -5;
        r = add_case("{8}", "%8" PRId64, INT64_MIN);
        r->type = TM_ROW_I64;
        r->v.i = INT64_MIN;
        r = add_case("{}", "%.6f", 2.0 / 3);
        r->type = TM_ROW_REAL;
        r->v.r = 2.0 / 3;
        r = add_case("{.1} {10.4} {-9.3}|", "%.1f %10.4f %-9.3f|", 4196.2297, 4196.2297,
                     4196.2297); /* one value, three places: each its own format */
        r->type = TM_ROW_REAL;
        r->v.r = 4196.2297;
        r = add_case("{} {18x} {-16}|", "0x%" PRIx64 " %18" PRIx64 " 0x%-16" PRIx64 "|", big, big,
                     big);
        r->type = TM_ROW_ADDR;
        r->v.u = big;
        r = add_case("<{-8}>", "<%-8s>", "zstd");
        r->type = TM_ROW_STR;
        r->v.s = "zstd";
        r = add_case("{}", "%s", "true");
        r->type = TM_ROW_BOOL;
        r->v.b = 1;
        r = add_case("total bytes {}\n", "total bytes %s\n", "not known");
        r->type = TM_ROW_UNKNOWN;
        r = add_case("[{12}]", "[%12s]", "not known");
        r->type = TM_ROW_UNKNOWN;
        add_case("  {N-18} {}\n", "  %-18s %" PRIu64 "\n", "1919", UINT64_C(7))->v.u = 7;
        add_case("{n10}|{N}", "%10s|%s", "records", "1919");
        r = add_case("heading, 100% sure {", "heading, 100%% sure {");
        r->key = NULL; /* a line of the text only */
        add_case("{}", "%" PRIu64, UINT64_C(0));
}

static void case_rows(const void *block, const struct tm_schema *s,
                      const struct tm_family_info *in, struct tm_rows *out)
{
        (void)block;
        (void)s;
        (void)in;
        for (unsigned i = 0; i < ncases; i++)
                out->put(out, &cases[i].row);
}

static void test_templates(void **state)
{
        (void)state;
        make_cases();
        struct tm_family f = {.name = "cases", .rows = case_rows};
        struct tm_family_info in = {.name = "t", .codec = "t", .container = "plain"};
        struct tm_schema s;
        memset(&s, 0, sizeof s);
        char want[NCASES * 96] = "", got[NCASES * 96];
        for (unsigned i = 0; i < ncases; i++)
                strcat(want, cases[i].want);
        size_t n = tm_stats_family_text(&f, NULL, &s, &in, got, sizeof got);
        assert_int_equal(n, strlen(want));
        assert_string_equal(got, want);
        /* snprintf's contract at any cap: the length, a NUL-terminated prefix */
        for (size_t cap = 0; cap < n + 2; cap += 5) {
                char small[NCASES * 96];
                memset(small, 'x', sizeof small);
                assert_int_equal(tm_stats_family_text(&f, NULL, &s, &in, small, cap), n);
                if (cap)
                        assert_int_equal(strlen(small), cap <= n ? cap - 1 : n);
                if (cap > 1 && cap <= n)
                        assert_memory_equal(small, want, cap - 1);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_templates),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
