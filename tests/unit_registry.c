/* The registry (codecs/registry.h): which row wins, for every example and
 * fixture and for inputs more than one row takes, and how the process's
 * registry is built.
 *
 * Expected winners are those of the probe order the rows' bids replace
 * (the rows of C in their table's order, then the bound rows with a
 * magic, laplace_raw, the bound rows by the size rule alone: the first
 * row that takes a head wins), written out per input, and checked again
 * by that order itself (legacy_first) over thousands of changed heads:
 * the highest bid always names the row that order names.
 *
 * The bound rows come from description files named by TM_BOUND_FORMATS,
 * set before the registry is first used; eight threads then ask for it at
 * once: one build, the same rows for all. Two rows have magics that rows
 * of C also take (tfpdt: "PDT2", PDATS II's; tfdin: "0 1", a din line),
 * one a magic of its own (tfm), one the size rule alone (tfsize). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codecs/common/tm_err.h"
#include "codecs/laplace/laplace.h"
#include "codecs/object/ptf.h"
#include "codecs/record/record.h"
#include "codecs/record/text.h"
#include "codecs/registry.h"
#include "support/tmtest.h"

static const char tf3_dtd[] = "tag.width = 0;\n"
                              "tf3 : (a, b, c) {\n"
                              "    tag.value = 0;\n"
                              "}\n"
                              "a.width = 4; a.interpretation = none;\n"
                              "b.width = 8; b.interpretation = none;\n"
                              "c.width = 2; c.interpretation = none;\n"; /* 14 bytes a record */

static const struct {
        const char *file, *text;
} fmts[] = {
    {"tfm.fmt", "name = tfm;\ndtd = tf3.dtd;\nmagic = \"TF3L\";\nbyteorder = little;\n"
                "header = 8;\n"},
    {"tfsize.fmt", "name = tfsize;\ndtd = tf3.dtd;\nsize = records;\nbyteorder = little;\n"},
    {"tfpdt.fmt", "name = tfpdt;\ndtd = tf3.dtd;\nmagic = \"PDT2\";\nbyteorder = big;\n"},
    {"tfdin.fmt", "name = tfdin;\ndtd = tf3.dtd;\nmagic = \"0 1\";\nbyteorder = big;\n"},
};
#define NFMTS (sizeof fmts / sizeof fmts[0])

/* The probe order the bids replace, first to last. */
static const char *const legacy[] = {
    /* the rows of C with a magic or lines, in their table's order */
    "pdats2",
    "pdats",
    "lackey",
    "din",
    "hatf",
    "native",
    "metatf",
    "mtrace",
    "java",
    "ptf_bin",
    "ptf",
    "laplace_text",
    "laplace_kev",
    /* bound rows with a magic, as TM_BOUND_FORMATS lists them */
    "tfm",
    "tfpdt",
    "tfdin",
    /* the size rule and a check of C */
    "laplace_raw",
    /* bound rows by the size rule alone */
    "tfsize",
};
#define NLEGACY (sizeof legacy / sizeof legacy[0])

/* What the threads that raced to build the registry saw. */
#define RACERS 8
static const struct tm_registry *seen_reg[RACERS];
static const struct tm_rcodec *seen_row[RACERS];
static pthread_barrier_t start;

static void *racer(void *arg)
{
        size_t i = (size_t)arg;
        pthread_barrier_wait(&start);
        seen_row[i] = tm_rcodec_by_name("tfsize");
        seen_reg[i] = tm_registry();
        return NULL;
}

static int setup(void **state)
{
        if (tmt_group_setup(state))
                return -1;
        setenv("TM_DTD_PATH", tmt_dir, 1);
        if (tmt_spit(tmt_path("tf3.dtd"), tf3_dtd, strlen(tf3_dtd)))
                return -1;
        char list[NFMTS * 1100] = "";
        for (size_t i = 0; i < NFMTS; i++) {
                if (tmt_spit(tmt_path(fmts[i].file), fmts[i].text, strlen(fmts[i].text)))
                        return -1;
                size_t at = strlen(list);
                snprintf(list + at, sizeof list - at, "%s%s", i ? ":" : "", tmt_path(fmts[i].file));
        }
        setenv("TM_BOUND_FORMATS", list, 1);
        pthread_t t[RACERS];
        pthread_barrier_init(&start, NULL, RACERS);
        for (size_t i = 0; i < RACERS; i++)
                if (pthread_create(&t[i], NULL, racer, (void *)i))
                        return -1;
        for (size_t i = 0; i < RACERS; i++)
                pthread_join(t[i], NULL);
        pthread_barrier_destroy(&start);
        return 0;
}

/* The first row of the legacy order in r that takes head, or NULL. */
static const struct tm_rcodec *legacy_first(const struct tm_registry *r, const uint8_t *head,
                                            size_t n)
{
        for (size_t i = 0; i < NLEGACY; i++) {
                const struct tm_rcodec *c = tm_registry_by_name(r, legacy[i]);
                if (c && c->probe(head, n))
                        return c;
        }
        return NULL;
}

/* How many rows of C (not described ones) of r bid top for head: at most
 * one ever does (registry.h: rows of C never tie). */
static unsigned c_rows_bidding(const struct tm_registry *r, const uint8_t *head, size_t n, int top)
{
        unsigned k = 0;
        for (unsigned i = 0; i < r->n; i++)
                k += top > 0 && r->row[i]->probe(head, n) == top &&
                     strncmp(r->row[i]->name, "tf", 2);
        return k;
}

static const char *name_of(const struct tm_rcodec *c)
{
        return c ? c->name : "(none)";
}

/* The winner of head in r is want (NULL: none) and the legacy order's. */
static void expect(const struct tm_registry *r, const char *what, const uint8_t *head, size_t n,
                   const char *want)
{
        int bid = -1;
        const struct tm_rcodec *c = tm_registry_probe(r, head, n, &bid);
        if (strcmp(name_of(c), want ? want : "(none)") != 0)
                fail_msg("%s: %s wins, not %s", what, name_of(c), want ? want : "(none)");
        if (c != legacy_first(r, head, n))
                fail_msg("%s: %s wins, the legacy order says %s", what, name_of(c),
                         name_of(legacy_first(r, head, n)));
        assert_int_equal(bid, c ? c->probe(head, n) : 0);
        assert_true(c_rows_bidding(r, head, n, bid) <= 1);
}

/* One build for every thread: the rows of C, then the described rows in
 * the order TM_BOUND_FORMATS names them, with no family (their DTD's
 * schema decides); tm_registry_init gives the rows of C alone. */
static void test_build(void **state)
{
        (void)state;
        const struct tm_registry *r = tm_registry();
        for (size_t i = 0; i < RACERS; i++) {
                assert_ptr_equal(seen_reg[i], r);
                assert_non_null(seen_row[i]);
                assert_ptr_equal(seen_row[i], tm_rcodec_by_name("tfsize"));
        }
        assert_int_equal(r->n, NLEGACY);
        assert_null(r->row[r->n]);
        static const char *const described[] = {"tfm", "tfsize", "tfpdt", "tfdin"};
        for (size_t i = 0; i < NFMTS; i++) {
                assert_string_equal(r->row[r->n - NFMTS + i]->name, described[i]);
                assert_null(r->row[r->n - NFMTS + i]->family);
        }
        for (size_t i = 0; i < NLEGACY; i++)
                assert_non_null(tm_registry_by_name(r, legacy[i]));
        struct tm_registry *plain = malloc(sizeof *plain);
        assert_non_null(plain);
        tm_registry_init(plain);
        assert_int_equal(plain->n, NLEGACY - NFMTS);
        for (unsigned i = 0; i < plain->n; i++)
                assert_ptr_equal(plain->row[i], r->row[i]);
        free(plain);
        /* the shipped field shows (Laplace's type character, PTF's
         * words): codes in range, one row a code, each with a put */
        const char *bad = NULL;
        assert_int_equal(tm_show_rows_check(&bad), 0);
        assert_null(bad);
        assert_non_null(tm_show_row(TM_LAPLACE_SHOW_TYPE));
        assert_non_null(tm_show_row(TM_PTF_SHOW_WORDS));
        assert_true(TM_LAPLACE_SHOW_TYPE != TM_PTF_SHOW_WORDS);
}

/* Every example and fixture, through its container, wins as before: in a
 * registry of the rows of C alone (expected) and in the process's, whose
 * size rule row also takes what no other row does (expected_bound). */
static const struct {
        const char *path, *expected, *expected_bound;
} files[] = {
    {"examples/README.txt", NULL, NULL},
    {"examples/gzip.din.zst", "din", "din"},
    {"examples/heapwork.mtf.zst", "metatf", "metatf"},
    {"examples/ls.pdt.gz", "pdats", "pdats"},
    {"examples/record.sh", NULL, NULL},
    {"examples/sort.hatf.zst", "hatf", "hatf"},
    {"examples/sort.pdt2.zst", "pdats2", "pdats2"},
    {"examples/tex-table3.din", "din", "din"},
    {"examples/true.lackey.gz", "lackey", "lackey"},
    {"tests/data/heap/heapprog.c", NULL, NULL},
    {"tests/data/heap/heapprog.heaptrack", NULL, "tfsize"},
    {"tests/data/heap/heapprog.heaptrack.raw", NULL, NULL},
    {"tests/data/heap/heapprog.mtrace", "mtrace", "mtrace"},
    {"tests/data/heap/record.sh", NULL, NULL},
    {"tests/data/java/hello.trace", "java", "java"},
    {"tests/data/laplace/loop.lpk", "laplace_kev", "laplace_kev"},
    {"tests/data/laplace/loop.lpr", "laplace_raw", "laplace_raw"},
    {"tests/data/laplace/loop.lpt", "laplace_text", "laplace_text"},
    {"tests/data/laplace/make_loop.py", NULL, NULL},
    {"tests/data/native/README", NULL, "tfsize"},
    {"tests/data/native/true.tmn", "native", "native"},
    {"tests/data/ptf/every_event.ptf", "ptf", "ptf"},
    {"tests/data/ptf/figure3.ptf", "ptf", "ptf"},
    {"tests/data/ptf/figure3.ptfb", "ptf_bin", "ptf_bin"},
    {"tests/data/ptf/rule_after_delete.ptf", "ptf", "ptf"},
    {"tests/data/ptf/rule_before_create.ptf", "ptf", "ptf"},
    {"tests/data/ptf/rule_brackets.ptf", "ptf", "ptf"},
    {"tests/data/ptf/rule_brackets_open.ptf", "ptf", "ptf"},
    {"tests/data/ptf/rule_delete_missing.ptf", "ptf", "ptf"},
    {"tests/data/ptf/rule_null.ptf", "ptf", "ptf"},
    {"tests/data/ptf/rule_reused.ptf", "ptf", "ptf"},
    {"tests/data/record/alloc_pattern.c", NULL, "tfsize"},
};
#define NFILES (sizeof files / sizeof files[0])

/* The first TM_RHEAD_MIN raw bytes of the fixture at rel, as a trace is
 * probed. */
static uint8_t *head_of(const char *rel, size_t *n)
{
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", TM_SOURCE_DIR, rel);
        struct tm_err err = {0};
        uint8_t *raw = tmt_raw_of(path, TM_RHEAD_MIN, n, &err);
        if (!raw)
                fail_msg("%s: %s", rel, err.msg);
        return raw;
}

static void test_fixtures(void **state)
{
        (void)state;
        struct tm_registry *plain = malloc(sizeof *plain);
        assert_non_null(plain);
        tm_registry_init(plain);
        for (size_t i = 0; i < NFILES; i++) {
                size_t n;
                uint8_t *raw = head_of(files[i].path, &n);
                expect(plain, files[i].path, raw, n, files[i].expected);
                expect(tm_registry(), files[i].path, raw, n, files[i].expected_bound);
                free(raw);
        }
        free(plain);
}

/* Heads more than one row takes, and each text row's smallest. */
static void test_tricky(void **state)
{
        (void)state;
        static uint8_t zeros[64], pattern[8192];
        for (size_t i = 0; i < sizeof pattern; i++)
                pattern[i] = (uint8_t)(i * 7 + 3);
        uint8_t pdt2[28] = "PDT2", tf3l[28] = "TF3L", tf3l_hdr[22] = "TF3Lxxxx";
#define S(text) text, sizeof text - 1
        static const struct {
                const char *what;
                const void *p;
                size_t n;
                const char *want;
        } in[] = {
            {"din lines", S("0 1000\n1 2000\n"), "din"},
            {"lackey lines", S("I  04000a8c,3\n L 7ff000398,8\n"), "lackey"},
            {"lackey's banner", S("==123== Lackey\nI  04000a8c,3\n"), "lackey"},
            {"din, tfdin's magic, 14 bytes", S("0 100\n0 10000\n"), "din"},
            {"VS line", S("VS:1\n"), "java"},
            {"mtrace start", S("= Start\n"), "mtrace"},
            {"PTF begin", S("Trace begin\n"), "ptf"},
            {"PTF binary line", S("PTF 1.0\n"), "ptf_bin"},
            {"PTF binary cut", S("P"), "ptf_bin"},
            {"laplace text", S("r 1 4 1 1\n"), "laplace_text"},
            {"empty", S(""), NULL},
            {"a newline", S("\n"), NULL},
            {"a comment", S("# comment\n"), NULL},
        };
#undef S
        for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
                expect(tm_registry(), in[i].what, in[i].p, in[i].n, in[i].want);
        const struct tm_registry *r = tm_registry();
        /* PDATS II's magic, tfpdt's too, and two records by size */
        expect(r, "PDT2 + 24 zeros", pdt2, sizeof pdt2, "pdats2");
        assert_int_equal(tm_rcodec_by_name("tfpdt")->probe(pdt2, sizeof pdt2), TM_BID_BOUND_MAGIC);
        assert_int_equal(tm_rcodec_by_name("tfsize")->probe(pdt2, sizeof pdt2), TM_BID_SIZE);
        /* a bound magic over the size rule */
        expect(r, "TF3L + 24 zeros", tf3l, sizeof tf3l, "tfm");
        expect(r, "TF3L header, a record", tf3l_hdr, sizeof tf3l_hdr, "tfm");
        /* the size rule alone: whole records, or a head of a longer stream */
        expect(r, "2 records of zeros", zeros, 28, "tfsize");
        expect(r, "27 zeros", zeros, 27, NULL);
        expect(r, "a 4 KiB head", pattern, TM_RHEAD_MIN, "tfsize");
        expect(r, "14 zeros", zeros, 14, "tfsize");
}

/* Changed heads (bytes set, cut short, one fixture's start on another's
 * rest): the highest bid is the legacy order's first row, every time. */
static void test_changed_heads(void **state)
{
        (void)state;
        uint8_t *head[NFILES];
        size_t len[NFILES];
        for (size_t i = 0; i < NFILES; i++)
                head[i] = head_of(files[i].path, &len[i]);
        uint8_t buf[TM_RHEAD_MIN];
        uint64_t s = 36;
        unsigned tried = 0;
        for (size_t i = 0; i < NFILES; i++) {
                for (unsigned k = 0; k < 120; k++, tried++) {
                        size_t n = len[i];
                        memcpy(buf, head[i], n);
                        switch (k % 4) {
                        case 0: /* a few bytes set, in the first 64 mostly */
                                for (unsigned j = 0; n && j < 1 + k % 5; j++)
                                        buf[tmt_below(&s, j && n > 64 ? 64 : n)] =
                                            (uint8_t)tmt_rand(&s);
                                break;
                        case 1: /* cut short */
                                n = n ? (size_t)tmt_below(&s, n) : 0;
                                break;
                        case 2: { /* another fixture's start */
                                size_t o = tmt_below(&s, NFILES), m = 1 + tmt_below(&s, 16);
                                if (m > len[o])
                                        m = len[o];
                                if (m > n)
                                        n = m;
                                memcpy(buf, head[o], m);
                                break;
                        }
                        default: /* the first 40 bytes */
                                n = n > 40 ? 40 : n;
                                break;
                        }
                        int bid;
                        const struct tm_rcodec *c = tm_registry_probe(tm_registry(), buf, n, &bid);
                        assert_true(c_rows_bidding(tm_registry(), buf, n, bid) <= 1);
                        if (c != legacy_first(tm_registry(), buf, n))
                                fail_msg("%s changed (%u): %s wins, the legacy order says %s",
                                         files[i].path, k, name_of(c),
                                         name_of(legacy_first(tm_registry(), buf, n)));
                }
        }
        for (size_t i = 0; i < NFILES; i++)
                free(head[i]);
        print_message("%u changed heads: bids and the legacy order agree\n", tried);
}

/* A registry as a value: rows added once, names unique, full is full. */
static void test_value(void **state)
{
        (void)state;
        struct tm_registry *r = malloc(sizeof *r);
        assert_non_null(r);
        tm_registry_init(r);
        unsigned n = r->n;
        struct tm_err err = {0};
        assert_int_equal(tm_registry_add(r, tm_rcodec_by_name("din"), &err), -EEXIST);
        assert_non_null(strstr(err.msg, "din"));
        assert_int_equal(tm_registry_add(r, tm_rcodec_by_name("tfm"), &err), 0);
        assert_int_equal(r->n, n + 1);
        assert_ptr_equal(tm_registry_by_name(r, "tfm"), tm_rcodec_by_name("tfm"));
        assert_null(tm_registry_by_name(r, "tfsize"));
        while (r->n < TM_REGISTRY_MAX)
                r->row[r->n++] = r->row[0]; /* filler, never probed */
        r->row[r->n] = NULL;
        assert_int_equal(tm_registry_add(r, tm_rcodec_by_name("tfsize"), &err), -ENOSPC);
        assert_int_equal(r->n, TM_REGISTRY_MAX);
        free(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_build),  cmocka_unit_test(test_fixtures),
            cmocka_unit_test(test_tricky), cmocka_unit_test(test_changed_heads),
            cmocka_unit_test(test_value),
        };
        return cmocka_run_group_tests(tests, setup, tmt_group_teardown);
}
