/* din codec: Dinero IV input lines (0x, tabs, trailing fields, CRLF, blank
 * lines), the paper's dinero example, the encoder against printf, long
 * tails skipped across calls, bad lines (an address that the end of the
 * stream ends is cut), probing. */
#include "codec_test.h"

#include "codecs/address/din.h"

static const struct tm_rcodec *const C = &tm_rcodec_din;

static ssize_t dec_str(const char *s, size_t piece, size_t cap, struct tm_ref *got, size_t max,
                       struct tm_err *err)
{
        return ct_decode(C, (const uint8_t *)s, strlen(s), piece, cap, got, max, err);
}

/* Decode s in every piece size 0..12 and caps 1 and 64; all must agree. */
static void expect_refs(const char *s, const struct tm_ref *want, size_t n)
{
        struct tm_ref got[64];
        for (size_t piece = 0; piece <= 12; piece++) {
                for (size_t cap = 1; cap <= 64; cap += 63) {
                        struct tm_err err = {0};
                        ssize_t m = dec_str(s, piece, cap, got, 64, &err);
                        if (m < 0)
                                fail_msg("piece %zu cap %zu: %s", piece, cap, err.msg);
                        assert_int_equal(m, n);
                        ct_assert_refs(got, want, n);
                }
        }
}

static void test_paper_example(void **unused)
{
        (void)unused;
        /* the dinero segment at the start of the PDATS II paper */
        static const char s[] = "2 430d70\n2 430d74\n2 415130\n0 1000acac\n2 415134\n2 415138\n";
        static const struct tm_ref want[] = {{0x430d70, 2},   {0x430d74, 2}, {0x415130, 2},
                                             {0x1000acac, 0}, {0x415134, 2}, {0x415138, 2}};
        expect_refs(s, want, 6);
        assert_true(C->probe((const uint8_t *)s, sizeof s - 1));
}

static void test_dinero_iv_lines(void **unused)
{
        (void)unused;
        static const char s[] = "0 0x1000\n"
                                "1\t0X2000 4 trailing fields ignored\n"
                                "  2   ABCDEF\r\n"
                                "\n"
                                "   \t\n"
                                "3 0\n"
                                "4 ffffffffffffffff\t\n"
                                "5 0x0000000000000001 x\r\n"
                                "2 7fff00ac 4";
        static const struct tm_ref want[] = {{0x1000, 0},     {0x2000, 1}, {0xabcdef, 2},  {0, 3},
                                             {UINT64_MAX, 4}, {1, 5},      {0x7fff00ac, 2}};
        expect_refs(s, want, 7);
}

static void expect_bad(const char *s, const char *what, size_t off)
{
        struct tm_ref got[16];
        struct tm_err err = {0};
        char where[32];
        snprintf(where, sizeof where, "raw offset %zu:", off);
        assert_int_equal(dec_str(s, 0, 16, got, 16, &err), -EIO);
        if (!strstr(err.msg, where) || !strstr(err.msg, what))
                fail_msg("\"%s\": message \"%s\", want \"%s\" and \"%s\"", s, err.msg, where, what);
        /* also when fed a byte at a time */
        assert_int_equal(dec_str(s, 1, 16, got, 16, &err), -EIO);
        assert_non_null(strstr(err.msg, where));
}

static void test_bad_lines(void **unused)
{
        (void)unused;
        expect_bad("2 10\n6 10\n", "label", 5);
        expect_bad("a 10\n", "label", 0);
        expect_bad("x10\n", "label", 0);
        expect_bad("# comment\n", "label", 0);
        expect_bad("20x10\n", "blank after the label", 1);
        expect_bad("2 12345678123456789\n", "16 hex digits", 18);
        expect_bad("2 \n", "missing address", 2);
        expect_bad("2 0x\n", "missing address", 4);
        expect_bad("2 43g\n", "after the address", 4);
        expect_bad("2 43,1\n", "after the address", 4);
        expect_bad("2 00x1\n", "after the address", 4);
        expect_bad("2 10\n2", "truncated", 6);
        expect_bad("2 10\n2 ", "truncated", 7);
        expect_bad("2 10\n1 0x", "truncated", 9);
        /* an address that the end cuts may be cut (a file being written) */
        expect_bad("2 10\n2 7fff00ac", "the last line has no newline", 15);
}

static void test_prefix_limit(void **unused)
{
        (void)unused;
        /* a label followed by endless blanks cannot be waited for forever */
        char s[DIN_MAX_PREFIX + 8];
        memset(s, ' ', sizeof s);
        s[0] = '2';
        struct aref_dec d;
        struct tm_ref got[4];
        struct tm_err err = {0};
        size_t used = 0;
        assert_int_equal(aref_open(&d, C, NULL, 0, NULL), 0);
        assert_int_equal(aref_decode(&d, (const uint8_t *)s, 20, 0, 0, &used, got, 4, &err), 0);
        assert_int_equal(used, 0);
        assert_int_equal(aref_decode(&d, (const uint8_t *)s, sizeof s, 0, 0, &used, got, 4, &err),
                         -EIO);
        assert_non_null(strstr(err.msg, "raw offset 0"));
        aref_close(&d);
}

/* A tail of 100000 bytes is skipped in the state, never waited for. */
static void test_long_tail(void **unused)
{
        (void)unused;
        enum { N = 100000 };
        const size_t n = N;
        static char s[N + 32];
        memcpy(s, "1 abc ", 6);
        memset(s + 6, 'z', n);
        memcpy(s + 6 + n, "\n2 def\n", 8);
        struct tm_ref got[4];
        assert_int_equal(ct_decode_window(C, (const uint8_t *)s, strlen(s), 16, got, 4), 2);
        static const struct tm_ref want[] = {{0xabc, 1}, {0xdef, 2}};
        ct_assert_refs(got, want, 2);
}

/* The encoder against printf("%x %llx\n"), an independent formatter. */
static void test_encode_format(void **unused)
{
        (void)unused;
        uint64_t s = 99;
        struct aref_enc w;
        struct tm_enc_opts o = {0};
        assert_int_equal(aref_enc_open(&w, C, &o, NULL), 0);
        assert_int_equal(w.len, 0);
        for (int i = 0; i < 5000; i++) {
                uint64_t v = ct_rand(&s);
                struct tm_ref r = {v >> (v & 63), (unsigned)(i % 6)};
                if (i < 2)
                        r.addr = i ? UINT64_MAX : 0;
                char want[40];
                int wl =
                    snprintf(want, sizeof want, "%x %llx\n", r.type, (unsigned long long)r.addr);
                int n = aref_put(&w, &r, 0, (uint64_t)i, NULL);
                assert_int_equal(n, wl);
                assert_memory_equal(w.buf + w.len - (size_t)n, want, (size_t)wl);
        }
        struct tm_ref bad = {0x10, 6};
        struct tm_err err = {0};
        assert_int_equal(aref_put(&w, &bad, 0, 41, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "reference 41"));
        assert_int_equal(aref_finish(&w, NULL), 0);
        aref_enc_free(&w);
}

static void test_roundtrip(void **unused)
{
        (void)unused;
        ct_check_random(C, 6, 0);
        size_t n = 4000;
        struct tm_ref *refs = malloc(n * sizeof *refs);
        struct tm_enc_opts o = {0};
        ct_gen_program(refs, n, 6, 64, 1, 6);
        ct_check_roundtrip(C, &o, refs, n);
        free(refs);
}

static void test_probe(void **unused)
{
        (void)unused;
        static const char *const yes[] = {
            "2 430d70\n", "0 0x1000 4\r\n1 2000\n",
            "2 430d70\n2 430d7", /* the whole stream: the last line counts */
        };
        static const char *const no[] = {
            "",
            "\n\n",
            "# tracemount\n\nMount trace archives.\n",
            "README\n",
            "I  0401ab70,3\n S 1fff000628,8\n",
            "==4053== Lackey\n",
            "2 430d70\nhello\n",
            "PDT2\1 \4\0\x80\x81",
        };
        for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
                assert_true(C->probe((const uint8_t *)yes[i], strlen(yes[i])));
        for (size_t i = 0; i < sizeof no / sizeof *no; i++)
                assert_false(C->probe((const uint8_t *)no[i], strlen(no[i])));
        uint8_t bin[TM_PROBE_BYTES];
        uint64_t s = 3;
        for (size_t i = 0; i < sizeof bin; i++)
                bin[i] = (uint8_t)ct_rand(&s);
        assert_false(C->probe(bin, sizeof bin));
        /* a full probe buffer whose last line is cut: complete lines decide */
        for (size_t i = 0; i < sizeof bin; i++)
                bin[i] = (uint8_t) "2 430d70\n"[i % 9];
        assert_true(C->probe(bin, sizeof bin));
        bin[sizeof bin - 1] = 'q'; /* inside the cut last line: ignored */
        assert_true(C->probe(bin, sizeof bin));
}

static void test_hostile(void **unused)
{
        (void)unused;
        static const char valid[] = "2 430d70\n0 0x1000acac\n1 7fff00a8 4\n"
                                    "  5 ffffffffffffffff\r\n\n";
        ct_check_text_hostile(C, valid, "0123456789abcdefxX \t\r\n,zq", 11);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_paper_example), cmocka_unit_test(test_dinero_iv_lines),
            cmocka_unit_test(test_bad_lines),     cmocka_unit_test(test_prefix_limit),
            cmocka_unit_test(test_long_tail),     cmocka_unit_test(test_encode_format),
            cmocka_unit_test(test_roundtrip),     cmocka_unit_test(test_probe),
            cmocka_unit_test(test_hostile),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
