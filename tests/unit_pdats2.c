/* PDATS II codec: the paper's Table 3 worked example, round trips of
 * program-shaped and random traces in both widths and all units, run and
 * offset-width boundaries, state copies, corrupt input, and the AVX-512
 * block decoder against the scalar one. */
#include "codec_test.h"

#include "arch/x86/pdats2_x86.h"
#include "codecs/address/pdats2.h"
#include "p2_lockstep.h"

static const struct tm_rcodec *const C = &tm_rcodec_pdats2;

static void test_table3(void **unused)
{
        (void)unused;
        struct tm_ref refs[29], got[30];
        struct tm_enc_opts o = {.addr_bits = 32, .unit = 4};
        struct tm_err err = {0};
        uint8_t *raw = NULL;
        size_t len = 0, rec_len[64], nrec = 0;
        unsigned row_bytes[29];
        ct_table3_refs(refs);
        assert_int_equal(ct_encode(C, &o, refs, 29, &raw, &len, rec_len, &nrec, &err), 0);
        assert_int_equal(len, 8 + 28); /* the PDATS II column sums to 28 */
        assert_int_equal(nrec, 12);
        assert_int_equal(ct_record_rows(C, raw, 8, rec_len, nrec, row_bytes, 29), 29);
        for (size_t i = 0; i < 29; i++)
                if (row_bytes[i] != ct_table3[i].pdats2)
                        fail_msg("Table 3 row %zu: record of %u bytes, paper says %u", i + 1,
                                 row_bytes[i], ct_table3[i].pdats2);
        static const uint8_t head[] = {'P', 'D', 'T', '2', 1, 32, 4, 0};
        assert_memory_equal(raw, head, 8);
        /* row 1: instruction, 4-byte offset 10c35c units, 1 sequential */
        static const uint8_t row1[] = {0xe1, 0x00, 0x10, 0xc3, 0x5c};
        assert_memory_equal(raw + 8, row1, 5);
        /* row 3: -1bc44 bytes is stored as -6f11 units: 90 ef */
        static const uint8_t row3[] = {0xc0, 0x90, 0xef};
        assert_memory_equal(raw + 13, row3, 3);
        /* row 4: read, 4-byte offset, zone 0, 3 sequential */
        static const uint8_t row4[] = {0x3b, 0x10, 0x00, 0xac, 0xac};
        assert_memory_equal(raw + 16, row4, 5);
        /* row 8: +1 unit, no run */
        assert_int_equal(raw[21], 0x80);
        /* row 11: write, zone 1 (the least recently used on a tie) */
        assert_int_equal(raw[25], 0x40 | 7 << 3 | 4 | 1);
        /* row 13: write -4 in zone 1 and 1 sequential: one byte */
        assert_int_equal(raw[30], 0x40 | 2 << 3 | 4 | 1);
        /* row 25: +1 unit and 4 sequential */
        assert_int_equal(raw[35], 0x84);
        assert_int_equal(ct_decode(C, raw, len, 0, 300, got, 30, &err), 29);
        ct_assert_refs(got, refs, 29);
        free(raw);
        ct_check_roundtrip(C, &o, refs, 29);
}

static void test_program_traces(void **unused)
{
        (void)unused;
        static const unsigned units[] = {1, 2, 4};
        size_t n = 20000;
        struct tm_ref *refs = malloc(n * sizeof *refs);
        for (unsigned bits = 32; bits <= 64; bits += 32) {
                for (size_t u = 0; u < 3; u++) {
                        ct_gen_program(refs, n, bits + u, bits, units[u], 3);
                        struct tm_enc_opts o = {.addr_bits = bits, .unit = units[u]};
                        size_t len = ct_check_roundtrip(C, &o, refs, n);
                        /* din spends about 10 bytes a reference on these */
                        assert_true(len < n * (bits == 64 ? 4 : 3));
                }
        }
        free(refs);
}

static void test_random_traces(void **unused)
{
        (void)unused;
        ct_check_random(C, 3, 1);
}

/* Every instruction and data offset code, both widths, and runs at the
 * limits: 31, 32 and 33 sequential fetches; 3 and 4 after a data record. */
static void test_codes_and_runs(void **unused)
{
        (void)unused;
        static const int64_t ioffs[] = {
            1,      2,     -1,     127,          -128,          128, -129,         32767,
            -32768, 32768, -32769, 0x7fffffffLL, -0x80000000LL, 0,   0x123456789LL};
        static const int64_t doffs[] = {0,
                                        4,
                                        -4,
                                        8,
                                        -8,
                                        1,
                                        -1,
                                        127,
                                        -128,
                                        200,
                                        -32768,
                                        32767,
                                        40000,
                                        -40000,
                                        0x7fffffffLL,
                                        -0x7fffffffLL,
                                        0x1234567890LL};
        for (unsigned bits = 32; bits <= 64; bits += 32) {
                struct tm_ref refs[1200];
                size_t n = 0;
                uint64_t pc = 0x10000, zone = 0x200000, mask = bits == 64 ? UINT64_MAX : UINT32_MAX;
                for (size_t i = 0; i < sizeof ioffs / sizeof *ioffs; i++) {
                        pc = (pc + (uint64_t)ioffs[i] * 4) & mask;
                        refs[n++] = (struct tm_ref){pc, TM_IFETCH};
                        for (size_t d = 0; d < sizeof doffs / sizeof *doffs; d++) {
                                zone = (zone + (uint64_t)doffs[d]) & mask;
                                refs[n++] = (struct tm_ref){zone, d & 1};
                                for (size_t j = 0; j < (d % 6); j++) {
                                        pc = (pc + 4) & mask;
                                        refs[n++] = (struct tm_ref){pc, TM_IFETCH};
                                }
                        }
                }
                for (size_t run = 30; run <= 34; run++) {
                        pc = (pc + 0x1000) & mask;
                        for (size_t j = 0; j < run; j++, pc = (pc + 4) & mask)
                                refs[n++] = (struct tm_ref){pc, TM_IFETCH};
                }
                assert_true(n <= 1200);
                struct tm_enc_opts o = {.addr_bits = bits, .unit = 4};
                ct_check_roundtrip(C, &o, refs, n);
        }
}

/* A run of 32 sequential fetches is one record of 31 plus a +1 record; the
 * 33rd fetch after 31 goes into that second record. */
static void test_run_split(void **unused)
{
        (void)unused;
        struct tm_ref refs[64];
        for (size_t i = 0; i < 64; i++)
                refs[i] = (struct tm_ref){0x1000 + 4 * i, TM_IFETCH};
        struct tm_enc_opts o = {.addr_bits = 32, .unit = 4};
        uint8_t *raw = NULL;
        size_t len = 0, rec_len[8], nrec = 0;
        assert_int_equal(ct_encode(C, &o, refs, 64, &raw, &len, rec_len, &nrec, NULL), 0);
        /* 0x1000/4 = 0x400 units: 2 bytes; 32 + 32 references */
        assert_int_equal(nrec, 2);
        assert_int_equal(raw[8], 0x80 | 2 << 5 | 31);
        assert_int_equal(raw[11], 0x80 | 31);
        assert_int_equal(len, 8 + 3 + 1);
        free(raw);
}

static void test_x86_64_unit1(void **unused)
{
        (void)unused;
        /* byte-granular fetches of a 64-bit x86 program: unit 1 is lossless */
        struct tm_ref refs[] = {
            {0x55d4a0001139, 2}, {0x55d4a000113a, 2}, {0x55d4a000113d, 2}, {0x7ffc9a3b2ff8, 1},
            {0x55d4a0001141, 2}, {0x7f12c0a01000, 2}, {0x7ffc9a3b2ff0, 1}, {0x55d4a2c00010, 0},
            {0x7ffc9a3b2ff0, 0}, {0x55d4a2c00018, 0}, {0x7f12c0a01004, 2}, {0x7f12c0a01005, 2},
        };
        size_t n = sizeof refs / sizeof *refs;
        struct tm_enc_opts o = {.addr_bits = 64, .unit = 1};
        ct_check_roundtrip(C, &o, refs, n);
        /* unit 4 cannot hold an odd instruction address: -EDOM */
        struct tm_enc_opts o4 = {.addr_bits = 64, .unit = 4};
        uint8_t *raw = NULL;
        size_t len = 0;
        struct tm_err err = {0};
        assert_int_equal(ct_encode(C, &o4, refs, n, &raw, &len, NULL, NULL, &err), -EDOM);
        assert_non_null(strstr(err.msg, "reference 0"));
        /* 32-bit files cannot hold them: -ERANGE */
        struct tm_enc_opts o32 = {.addr_bits = 32, .unit = 1};
        assert_int_equal(ct_encode(C, &o32, refs, n, &raw, &len, NULL, NULL, &err), -ERANGE);
        assert_non_null(strstr(err.msg, "reference 0"));
}

static void test_types_refused(void **unused)
{
        (void)unused;
        struct tm_enc_opts o = {.addr_bits = 32, .unit = 4};
        for (unsigned t = 3; t < 8; t++) {
                struct tm_ref refs[] = {{0x100, 2}, {0x200, 0}, {0x300, t}};
                uint8_t *raw = NULL;
                size_t len = 0;
                struct tm_err err = {0};
                assert_int_equal(ct_encode(C, &o, refs, 3, &raw, &len, NULL, NULL, &err), -EINVAL);
                assert_non_null(strstr(err.msg, "reference 2"));
                assert_non_null(strstr(err.msg, tm_type_name(t)));
        }
        struct aref_enc w;
        struct tm_enc_opts bad = {.addr_bits = 48, .unit = 4};
        assert_int_equal(aref_enc_open(&w, C, &bad, NULL), -EINVAL);
        bad = (struct tm_enc_opts){.addr_bits = 32, .unit = 3};
        assert_int_equal(aref_enc_open(&w, C, &bad, NULL), -EINVAL);
}

static void test_bad_header(void **unused)
{
        (void)unused;
        static const uint8_t good[8] = {'P', 'D', 'T', '2', 1, 32, 4, 0};
        ct_check_header_errors(C, good);
        uint8_t h[8];
        memcpy(h, good, 8);
        for (unsigned u = 0; u < 256; u++) {
                h[6] = (uint8_t)u;
                if (u == 1 || u == 2 || u == 4)
                        continue;
                ct_expect_init(C, h, 8, -ENOTSUP, "unit");
        }
        assert_true(C->probe((const uint8_t *)"PDT2", 4));
        assert_false(C->probe((const uint8_t *)"PDTS\1 \4", 8));
        assert_false(C->probe((const uint8_t *)"PD", 2));
}

/* Every record cut short at eof is -EIO naming its raw offset; cut short
 * without eof it waits for more input. */
static void test_truncated(void **unused)
{
        (void)unused;
        struct tm_ref refs[29];
        ct_table3_refs(refs);
        struct tm_enc_opts o = {.addr_bits = 32, .unit = 4};
        uint8_t *raw = NULL;
        size_t len = 0;
        assert_int_equal(ct_encode(C, &o, refs, 29, &raw, &len, NULL, NULL, NULL), 0);
        /* records start at 8, 13, 16, 21; cut inside the row-4 record */
        for (size_t cut = 17; cut < 21; cut++) {
                struct tm_ref got[40];
                struct tm_err err = {0};
                assert_int_equal(ct_decode(C, raw, cut, 0, 300, got, 40, &err), -EIO);
                assert_non_null(strstr(err.msg, "raw offset 16"));
                assert_non_null(strstr(err.msg, "truncated"));
                struct aref_dec d;
                size_t used = 99;
                assert_int_equal(aref_open(&d, C, raw, cut, NULL), 8);
                assert_int_equal(aref_decode(&d, raw + 16, cut - 16, 0, 16, &used, got, 40, NULL),
                                 0);
                assert_int_equal(used, 0);
                aref_close(&d);
        }
        free(raw);
}

/* Hostile bytes after a valid header never crash and decode or fail with
 * -EIO; every stream of PDATS II records is valid when complete. */
static void test_hostile(void **unused)
{
        (void)unused;
        uint64_t s = 42;
        uint8_t buf[1024];
        struct tm_ref *got = malloc(1024 * 34 * sizeof *got);
        struct tm_ref *got2 = malloc(1024 * 34 * sizeof *got2);
        for (int iter = 0; iter < 300; iter++) {
                size_t n = 8 + ct_rand(&s) % 1000;
                for (size_t i = 8; i < n; i++)
                        buf[i] = (uint8_t)ct_rand(&s);
                static const uint8_t h[] = {'P', 'D', 'T', '2', 1, 32, 4, 0};
                memcpy(buf, h, 8);
                buf[5] = iter & 1 ? 64 : 32;
                buf[6] = (uint8_t)(1u << (iter % 3));
                if (iter & 4) {
                        /* zero bytes are 1-byte records: complete a cut last record */
                        memset(buf + n, 0, 8);
                        n += 8;
                }
                ct_assert_paths_agree(C, buf, n, iter, got, got2, 1024 * 34);
        }
        free(got);
        free(got2);
}

/* Fill the stack below the caller with 0xff, so that a decoder that reads
 * its own scratch arrays past what it wrote this call meets bytes that
 * are not zero (run counts of 255), whatever ran before. */
__attribute__((noinline)) static void poison_stack(void)
{
        volatile uint8_t junk[64 * 1024];
        memset((uint8_t *)junk, 0xff, sizeof junk);
        __asm__ volatile("" : : "r"(junk) : "memory");
}

static void lockstep(const uint8_t *raw, size_t len, size_t piece, size_t cap, struct tm_ref *a,
                     struct tm_ref *b)
{
        char why[512];
        if (p2_lockstep(raw, len, piece, cap, a, b, poison_stack, why, sizeof why) != 0)
                fail_msg("%s", why);
}

/* Several caps (a block's references often do not fit: the scalar loops
 * take over) and input windows. */
static void blocks_agree(const uint8_t *raw, size_t len, struct tm_ref *a, struct tm_ref *b)
{
        static const size_t caps[] = {4096, 300, 97, 64, 33};
        static const size_t pieces[] = {0, 1000, 173};
        for (size_t i = 0; i < sizeof caps / sizeof *caps; i++)
                for (size_t j = 0; j < sizeof pieces / sizeof *pieces; j++)
                        lockstep(raw, len, pieces[j], caps[i], a, b);
}

static void test_block_decoder(void **unused)
{
        (void)unused;
        p2x_force_scalar(0);
        if (!p2x_blocks(0)) {
                fprintf(stderr, "SKIP: this CPU has no AVX-512 VBMI: the block decoder is not "
                                "used and not tested here\n");
                skip();
        }
        struct tm_ref *a = malloc(4096 * sizeof *a), *b = malloc(4096 * sizeof *b);
        uint8_t *raw = malloc(200016);
        uint64_t s = 7;
        /* Any bytes are records: random ones (most records 2-5 bytes; 2-9
         * in 64-bit files), ones that are all or mostly 1-byte records
         * (data codes 0-4, +1 fetches: 50-64 records in 64 bytes), and long
         * runs; every unit, both widths; lengths around the 128-byte
         * minimum. */
        for (int iter = 0; iter < 240; iter++) {
                size_t n = 8 + (iter < 20       ? 100 + (size_t)iter * 6
                                : iter % 4 == 3 ? ct_rand(&s) % 200000
                                                : ct_rand(&s) % 20000);
                static const uint8_t h[] = {'P', 'D', 'T', '2', 1, 32, 4, 0};
                memcpy(raw, h, 8);
                raw[5] = iter % 5 < 2 ? 64 : 32;
                raw[6] = (uint8_t)(1u << (iter % 3));
                for (size_t i = 8; i < n; i++) {
                        uint8_t x = (uint8_t)ct_rand(&s);
                        if (iter % 4 == 3 && x < 0x10)
                                x = 0x38; /* a read with a 4-byte (64-bit files: 8-byte) offset */
                        else if (iter % 4 == 1 || iter % 4 == 3) /* 1-byte records */
                                x = x & 0x80 ? (uint8_t)(0x80 | (x & 0x1f)) : (uint8_t)(x & 0x67);
                        else if (iter % 4 == 2 && x < 0x40) /* runs of 31 and 3 */
                                x = x & 1 ? 0x9f : 0x23;
                        raw[i] = x;
                }
                /* zero bytes are 1-byte records: complete a cut last record */
                memset(raw + n, 0, 8);
                blocks_agree(raw, n + 8, a, b);
        }
        free(raw);
        /* program-shaped traces, every unit and width, decoded back to what
         * was encoded */
        static const unsigned units[] = {1, 2, 4};
        size_t nref = 50000;
        struct tm_ref *refs = malloc(nref * sizeof *refs);
        struct tm_ref *got = malloc(nref * sizeof *got);
        for (size_t u = 0; u < 6; u++) {
                const unsigned bits = u < 3 ? 32 : 64;
                ct_gen_program(refs, nref, 11 + u, bits, units[u % 3], 3);
                struct tm_enc_opts o = {.addr_bits = bits, .unit = units[u % 3]};
                uint8_t *enc = NULL;
                size_t len = 0;
                assert_int_equal(ct_encode(C, &o, refs, nref, &enc, &len, NULL, NULL, NULL), 0);
                blocks_agree(enc, len, a, b);
                assert_int_equal(ct_decode(C, enc, len, 0, 300, got, nref, NULL), (ssize_t)nref);
                ct_assert_refs(got, refs, nref);
                free(enc);
        }
        free(got);
        free(refs);
        free(a);
        free(b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table3),        cmocka_unit_test(test_program_traces),
            cmocka_unit_test(test_random_traces), cmocka_unit_test(test_codes_and_runs),
            cmocka_unit_test(test_run_split),     cmocka_unit_test(test_x86_64_unit1),
            cmocka_unit_test(test_types_refused), cmocka_unit_test(test_bad_header),
            cmocka_unit_test(test_truncated),     cmocka_unit_test(test_hostile),
            cmocka_unit_test(test_block_decoder),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
