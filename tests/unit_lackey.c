/* lackey codec: an excerpt of real `valgrind --tool=lackey --trace-mem=yes`
 * output, M lines split across calls, valgrind lines skipped, bad lines,
 * probing. */
#include "codec_test.h"

#include "codecs/address/arec.h"
#include "codecs/address/lackey.h"

static const struct tm_rcodec *const C = &tm_rcodec_lackey;

/* valgrind-3.19 lackey on /bin/true (stderr), cut down; the M lines come
 * from later in the same run */
static const char sample[] = "==4053== Lackey, an example Valgrind tool\n"
                             "==4053== Copyright (C) 2002-2017, and GNU GPL'd, by Nicholas "
                             "Nethercote.\n"
                             "==4053== Using Valgrind-3.19.0 and LibVEX; rerun with -h for "
                             "copyright info\n"
                             "==4053== Command: /bin/true\n"
                             "==4053== \n"
                             "I  0401ab70,3\n"
                             "I  0401ab73,5\n"
                             " S 1fff000628,8\n"
                             "I  0401b770,1\n"
                             " S 1fff000620,8\n"
                             "I  0401b771,7\n"
                             " L 04032e58,8\n"
                             " M 04033e06,1\n"
                             "I  0401b778,7\n"
                             " M 04032eb8,8\n"
                             "==4053== \n"
                             "==4053== Counted 1 call to main()\n";

static const struct tm_ref sample_refs[] = {
    {0x0401ab70, 2},   {0x0401ab73, 2}, {0x1fff000628, 1}, {0x0401b770, 2},
    {0x1fff000620, 1}, {0x0401b771, 2}, {0x04032e58, 0},   {0x04033e06, 0},
    {0x04033e06, 1},   {0x0401b778, 2}, {0x04032eb8, 0},   {0x04032eb8, 1},
};

static void test_sample(void **unused)
{
        (void)unused;
        struct tm_ref got[32];
        size_t n = sizeof sample_refs / sizeof *sample_refs;
        for (size_t piece = 0; piece <= 17; piece++) {
                for (size_t cap = 1; cap <= 4; cap++) {
                        struct tm_err err = {0};
                        ssize_t m = ct_decode(C, (const uint8_t *)sample, sizeof sample - 1, piece,
                                              cap, got, 32, &err);
                        if (m < 0)
                                fail_msg("piece %zu cap %zu: %s", piece, cap, err.msg);
                        assert_int_equal(m, n);
                        ct_assert_refs(got, sample_refs, n);
                }
        }
        /* stopping between the read and the write of an M line, then
         * continuing from a copy of the state */
        for (size_t split = 0; split <= n; split++) {
                ssize_t m =
                    ct_decode_copied(C, (const uint8_t *)sample, sizeof sample - 1, split, got, 32);
                assert_int_equal(m, n);
                ct_assert_refs(got, sample_refs, n);
        }
        assert_true(C->probe((const uint8_t *)sample, sizeof sample - 1));
        /* the encoder takes sizes and the decoder gives them: the row's
         * schema has the size field */
        assert_non_null(C->enc_open);
        assert_true(aref_sized(C));
        assert_false(aref_sized(&tm_rcodec_din));
}

static void test_crlf_and_eof(void **unused)
{
        (void)unused;
        static const char s[] = "I  10,4\r\n\r\n S 20,8 \r\n L 0000000000000030,16\r";
        static const struct tm_ref want[] = {{0x10, 2}, {0x20, 1}, {0x30, 0}};
        struct tm_ref got[8];
        assert_int_equal(ct_decode(C, (const uint8_t *)s, strlen(s), 0, 8, got, 8, NULL), 3);
        ct_assert_refs(got, want, 3);
}

static void expect_bad(const char *s, size_t off)
{
        struct tm_ref got[16];
        struct tm_err err = {0};
        char where[32];
        snprintf(where, sizeof where, "raw offset %zu:", off);
        assert_int_equal(ct_decode(C, (const uint8_t *)s, strlen(s), 0, 16, got, 16, &err), -EIO);
        if (!strstr(err.msg, where))
                fail_msg("\"%s\": message \"%s\", want \"%s\"", s, err.msg, where);
}

static void test_bad_lines(void **unused)
{
        (void)unused;
        expect_bad("I  10,4\nhello world\n", 8);
        expect_bad("I  xyz,4\n", 3);
        expect_bad(" X 10,4\n", 1);
        expect_bad("I10,4\n", 1);
        expect_bad(" L 10\n", 5);
        expect_bad(" L 10,\n", 6);
        expect_bad(" L 10,4x\n", 7);
        expect_bad(" S 12345678123456789,4\n", 19);
        expect_bad("==12 not a valgrind line\n", 0);
        expect_bad("I  10,4\nI  20", 8);   /* truncated */
        expect_bad("I  10,4\n==12", 8);    /* truncated */
        expect_bad("I  10,4\n L 30,1", 8); /* its size may be cut: truncated */
}

/* A valgrind line of 100000 bytes is skipped without being waited for. */
static void test_long_valgrind_line(void **unused)
{
        (void)unused;
        enum { N = 100000 };
        const size_t n = N;
        static char s[N + 64];
        memcpy(s, "==77== ", 7);
        memset(s + 7, 'v', n);
        memcpy(s + 7 + n, "\n M 40,4\n", 10);
        struct tm_ref got[4];
        assert_int_equal(ct_decode_window(C, (const uint8_t *)s, strlen(s), 32, got, 4), 2);
        static const struct tm_ref want[] = {{0x40, 0}, {0x40, 1}};
        ct_assert_refs(got, want, 2);
}

static void test_probe(void **unused)
{
        (void)unused;
        static const char *const no[] = {
            "",
            "==4053== Lackey, an example Valgrind tool\n==4053== \n",
            "2 430d70\n2 430d74\n",
            "# README\n",
            "I  0401ab70,3\nhello from the program\n",
            "PDTS\1 \4\0",
        };
        for (size_t i = 0; i < sizeof no / sizeof *no; i++)
                assert_false(C->probe((const uint8_t *)no[i], strlen(no[i])));
        assert_true(C->probe((const uint8_t *)"I  0401ab70,3\n", 14));
        assert_true(tm_rcodec_probe((const uint8_t *)sample, sizeof sample - 1) == C);
}

static void test_hostile(void **unused)
{
        (void)unused;
        static const char valid[] = "==7== x\nI  0401ab70,3\n S 1fff000628,8\n"
                                    " M 04033e06,1\n L 00000000ffffffff,16\n";
        ct_check_text_hostile(C, valid, "0123456789abcdef=-ILSM ,\r\n\tzq", 13);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sample),    cmocka_unit_test(test_crlf_and_eof),
            cmocka_unit_test(test_bad_lines), cmocka_unit_test(test_long_valgrind_line),
            cmocka_unit_test(test_probe),     cmocka_unit_test(test_hostile),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
