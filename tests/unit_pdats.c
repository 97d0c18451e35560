/* PDATS codec: the PDATS column of Table 3, repeat runs at their limits,
 * round trips of all eight types in both widths, the liberal decoder, and
 * corrupt input. */
#include "codec_test.h"

#include "codecs/address/pdats.h"

static const struct tm_rcodec *const C = &tm_rcodec_pdats;

static void test_table3(void **unused)
{
        (void)unused;
        struct tm_ref refs[29], got[30];
        struct tm_enc_opts o = {.addr_bits = 32, .unit = 4};
        struct tm_err err = {0};
        uint8_t *raw = NULL;
        size_t len = 0, rec_len[64], nrec = 0, want = 0;
        unsigned row_bytes[29];
        ct_table3_refs(refs);
        assert_int_equal(ct_encode(C, &o, refs, 29, &raw, &len, rec_len, &nrec, &err), 0);
        for (size_t i = 0; i < 29; i++)
                want += ct_table3[i].pdats;
        assert_int_equal(want, 46);
        assert_int_equal(len, 8 + want);
        assert_int_equal(ct_record_rows(C, raw, 8, rec_len, nrec, row_bytes, 29), 29);
        for (size_t i = 0; i < 29; i++)
                if (row_bytes[i] != ct_table3[i].pdats)
                        fail_msg("Table 3 row %zu: record of %u bytes, paper says %u", i + 1,
                                 row_bytes[i], ct_table3[i].pdats);
        static const uint8_t head[] = {'P', 'D', 'T', 'S', 1, 32, 4, 0};
        assert_memory_equal(raw, head, 8);
        /* rows 1-5: fetch +430d70 (4 bytes), fetch at the default offset,
         * fetch -1bc44, read +1000acac, fetch +4 repeated 3 more times */
        static const uint8_t recs[] = {0x62, 0x00, 0x43, 0x0d, 0x70, 0x02, 0x62, 0xff, 0xfe,
                                       0x43, 0xbc, 0x60, 0x10, 0x00, 0xac, 0xac, 0x82, 0x03};
        assert_memory_equal(raw + 8, recs, sizeof recs);
        /* row 13: write -4 with a 1-byte offset; row 19: write +4 likewise */
        static const uint8_t row13[] = {0x21, 0xfc};
        assert_memory_equal(raw + 8 + 30, row13, 2);
        static const uint8_t row19[] = {0x21, 0x04};
        assert_memory_equal(raw + 8 + 39, row19, 2);
        assert_int_equal(ct_decode(C, raw, len, 0, 300, got, 30, &err), 29);
        ct_assert_refs(got, refs, 29);
        free(raw);
        ct_check_roundtrip(C, &o, refs, 29);
}

/* A run of r equal offsets is ceil(r / 256) records. */
static void test_repeat_limits(void **unused)
{
        (void)unused;
        static const size_t runs[] = {1, 2, 255, 256, 257, 512, 513};
        struct tm_ref refs[600];
        for (size_t ri = 0; ri < sizeof runs / sizeof *runs; ri++) {
                size_t r = runs[ri];
                for (size_t i = 0; i < r; i++)
                        refs[i] = (struct tm_ref){0x10 + 0x20 * i, TM_READ};
                struct tm_enc_opts o = {.addr_bits = 32, .unit = 4};
                uint8_t *raw = NULL;
                size_t len = 0, rec_len[8], nrec = 0;
                assert_int_equal(ct_encode(C, &o, refs, r, &raw, &len, rec_len, &nrec, NULL), 0);
                /* the first reference has offset 0x10, the rest 0x20 */
                assert_int_equal(nrec, 1 + (r - 1 + 255) / 256);
                if (r >= 257) {
                        assert_int_equal(raw[8 + 2], 0x80 | 1 << 5);
                        assert_int_equal(raw[8 + 3], 255);
                }
                free(raw);
                ct_check_roundtrip(C, &o, refs, r);
        }
}

static void test_program_traces(void **unused)
{
        (void)unused;
        size_t n = 20000;
        struct tm_ref *refs = malloc(n * sizeof *refs);
        for (unsigned bits = 32; bits <= 64; bits += 32) {
                for (unsigned unit = 1; unit <= 4; unit *= 2) {
                        ct_gen_program(refs, n, bits * unit, bits, unit, 8);
                        struct tm_enc_opts o = {.addr_bits = bits, .unit = unit};
                        size_t len = ct_check_roundtrip(C, &o, refs, n);
                        assert_true(len < n * (bits == 64 ? 5 : 4));
                }
        }
        free(refs);
}

static void test_random_traces(void **unused)
{
        (void)unused;
        ct_check_random(C, 8, 4);
}

/* Every offset width in both address widths, and types 6 and 7 (which
 * share a previous address) interleaved. */
static void test_offset_widths(void **unused)
{
        (void)unused;
        static const int64_t offs[] = {4,
                                       0,
                                       1,
                                       -1,
                                       127,
                                       -128,
                                       128,
                                       32767,
                                       -32768,
                                       32768,
                                       -32769,
                                       0x7fffffffLL,
                                       -0x80000000LL,
                                       0x100000000LL,
                                       -0x123456789abLL};
        for (unsigned bits = 32; bits <= 64; bits += 32) {
                uint64_t mask = bits == 64 ? UINT64_MAX : UINT32_MAX;
                struct tm_ref refs[8 * 15 * 2];
                size_t n = 0;
                uint64_t a[8] = {0};
                for (unsigned t = 0; t < 8; t++)
                        for (size_t i = 0; i < 15; i++)
                                for (int k = 0; k < 2; k++) {
                                        unsigned tt = t >= 6 ? 6 + (unsigned)k : t;
                                        a[t] = (a[t] + (uint64_t)offs[i]) & mask;
                                        refs[n++] = (struct tm_ref){a[t], tt};
                                }
                struct tm_enc_opts o = {.addr_bits = bits, .unit = 4};
                ct_check_roundtrip(C, &o, refs, n);
        }
}

/* Table 1 calls code 0 "the default offset" for any type: accepted. */
static void test_default_offset_any_type(void **unused)
{
        (void)unused;
        static const uint8_t raw[] = {'P',  'D',  'T', 'S', 1, 32, 4, 0, 0x00, /* read at 4 */
                                      0x81, 0x02,  /* writes at 4, 8, 12 */
                                      0x07,        /* type 7 at 4 */
                                      0x26, 0x10,  /* type 6 at 4 + 16 (shared) */
                                      0x22, 0xff}; /* fetch at -1 */
        struct tm_ref got[10];
        static const struct tm_ref want[] = {{4, 0}, {4, 1},  {8, 1},         {12, 1},
                                             {4, 7}, {20, 6}, {0xffffffff, 2}};
        assert_int_equal(ct_decode(C, raw, sizeof raw, 0, 10, got, 10, NULL), 7);
        ct_assert_refs(got, want, 7);
}

static void test_time_code(void **unused)
{
        (void)unused;
        uint8_t raw[] = {'P', 'D', 'T', 'S', 1, 32, 4, 0, 0x02, 0x0a};
        struct tm_ref got[4];
        struct tm_err err = {0};
        assert_int_equal(ct_decode(C, raw, sizeof raw, 0, 4, got, 4, &err), -ENOTSUP);
        assert_non_null(strstr(err.msg, "raw offset 9"));
        assert_non_null(strstr(err.msg, "timestamps"));
}

static void test_bad_header(void **unused)
{
        (void)unused;
        static const uint8_t good[8] = {'P', 'D', 'T', 'S', 1, 64, 4, 0};
        ct_check_header_errors(C, good);
        uint8_t h[8];
        memcpy(h, good, 8);
        h[6] = 0;
        ct_expect_init(C, h, 8, -EIO, "default offset");
        assert_true(C->probe((const uint8_t *)"PDTS\1", 5));
        assert_false(C->probe((const uint8_t *)"PDT2\1", 5));
        assert_false(C->probe((const uint8_t *)"2 40", 4));
}

static void test_encoder_errors(void **unused)
{
        (void)unused;
        struct tm_ref refs[] = {{0x10, 0}, {0x100000000ull, 1}};
        struct tm_enc_opts o = {.addr_bits = 32, .unit = 4};
        uint8_t *raw = NULL;
        size_t len = 0;
        struct tm_err err = {0};
        assert_int_equal(ct_encode(C, &o, refs, 2, &raw, &len, NULL, NULL, &err), -ERANGE);
        assert_non_null(strstr(err.msg, "reference 1"));
        refs[1] = (struct tm_ref){0x10, 8};
        assert_int_equal(ct_encode(C, &o, refs, 2, &raw, &len, NULL, NULL, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "reference 1"));
        struct aref_enc w;
        struct tm_enc_opts bad = {.addr_bits = 40, .unit = 4};
        assert_int_equal(aref_enc_open(&w, C, &bad, NULL), -EINVAL);
}

static void test_truncated(void **unused)
{
        (void)unused;
        struct tm_ref refs[29];
        ct_table3_refs(refs);
        struct tm_enc_opts o = {.addr_bits = 32, .unit = 4};
        uint8_t *raw = NULL;
        size_t len = 0;
        assert_int_equal(ct_encode(C, &o, refs, 29, &raw, &len, NULL, NULL, NULL), 0);
        /* records at 8 (5 bytes), 13 (1), 14 (5), 19 (5), 24 (2: repeat) */
        for (size_t cut = 20; cut < 26; cut++) {
                if (cut == 24)
                        continue; /* a record boundary: decodes fine */
                struct tm_ref got[40];
                struct tm_err err = {0};
                size_t at = cut < 24 ? 19 : 24;
                char want[32];
                snprintf(want, sizeof want, "raw offset %zu", at);
                assert_int_equal(ct_decode(C, raw, cut, 0, 300, got, 40, &err), -EIO);
                assert_non_null(strstr(err.msg, want));
                assert_non_null(strstr(err.msg, "truncated"));
        }
        free(raw);
}

static void test_hostile(void **unused)
{
        (void)unused;
        uint64_t s = 7;
        uint8_t buf[1024];
        struct tm_ref *got = malloc(1024 * 256 * sizeof *got);
        struct tm_ref *got2 = malloc(1024 * 256 * sizeof *got2);
        for (int iter = 0; iter < 300; iter++) {
                size_t n = 8 + ct_rand(&s) % 1000;
                for (size_t i = 8; i < n; i++) {
                        buf[i] = (uint8_t)ct_rand(&s);
                        if (iter & 2)
                                buf[i] &= 0xe7; /* no time code: get further */
                }
                static const uint8_t h[] = {'P', 'D', 'T', 'S', 1, 32, 4, 0};
                memcpy(buf, h, 8);
                buf[5] = iter & 1 ? 64 : 32;
                if (iter & 4) {
                        /* zero bytes are 1-byte records: complete a cut last record */
                        memset(buf + n, 0, 9);
                        n += 9;
                }
                ct_assert_paths_agree(C, buf, n, iter, got, got2, 1024 * 256);
        }
        free(got);
        free(got2);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table3),         cmocka_unit_test(test_repeat_limits),
            cmocka_unit_test(test_program_traces), cmocka_unit_test(test_random_traces),
            cmocka_unit_test(test_offset_widths),  cmocka_unit_test(test_default_offset_any_type),
            cmocka_unit_test(test_time_code),      cmocka_unit_test(test_bad_header),
            cmocka_unit_test(test_encoder_errors), cmocka_unit_test(test_truncated),
            cmocka_unit_test(test_hostile),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
