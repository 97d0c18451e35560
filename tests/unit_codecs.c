/* Cross-codec checks: the address rows (names, probes, type names) and
 * chains din -> PDATS II -> PDATS -> din and lackey -> PDATS II -> din that
 * must give the same din text byte for byte. */
#include "codec_test.h"

#include "codecs/address/addr_stats.h"
#include "codecs/address/arec.h"
#include "codecs/address/din.h"
#include "codecs/address/lackey.h"
#include "codecs/address/pdats.h"
#include "codecs/address/pdats2.h"

static void test_table(void **unused)
{
        (void)unused;
        /* the address rows, of the address family */
        static const struct {
                const char *name;
                const struct tm_rcodec *c;
        } rows[] = {{"pdats2", &tm_rcodec_pdats2},
                    {"pdats", &tm_rcodec_pdats},
                    {"lackey", &tm_rcodec_lackey},
                    {"din", &tm_rcodec_din}};
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                assert_ptr_equal(tm_rcodec_by_name(rows[i].name), rows[i].c);
                assert_string_equal(rows[i].c->name, rows[i].name);
                assert_ptr_equal(rows[i].c->family, &tm_family_address);
        }
        assert_null(tm_rcodec_by_name("dinero"));
        assert_ptr_not_equal(tm_rcodec_by_name("hatf")->family, &tm_family_address);
        static const char *const names[] = {"read",     "write",      "ifetch", "misc",
                                            "copyback", "invalidate", "type6",  "type7"};
        for (unsigned t = 0; t < TM_NTYPES; t++)
                assert_string_equal(tm_type_name(t), names[t]);
        assert_null(tm_rcodec_probe((const uint8_t *)"\x00\x01\x02", 3));
        assert_null(tm_rcodec_probe((const uint8_t *)"", 0));
}

/* Encode refs with c (header included) and check the stream probes as c. */
static uint8_t *encode_probed(const struct tm_rcodec *c, const struct tm_enc_opts *o,
                              const struct tm_ref *refs, size_t n, size_t *len)
{
        uint8_t *raw = NULL;
        struct tm_err err = {0};
        int r = ct_encode(c, o, refs, n, &raw, len, NULL, NULL, &err);
        if (r < 0)
                fail_msg("%s: %s", c->name, err.msg);
        size_t head = *len < TM_PROBE_BYTES ? *len : TM_PROBE_BYTES;
        if (n)
                assert_ptr_equal(tm_rcodec_probe(raw, head), c);
        return raw;
}

/* Decode raw with the codec the probe picks. */
static size_t decode_probed(const uint8_t *raw, size_t len, struct tm_ref *out, size_t max)
{
        const struct tm_rcodec *c =
            tm_rcodec_probe(raw, len < TM_PROBE_BYTES ? len : TM_PROBE_BYTES);
        assert_non_null(c);
        struct tm_err err = {0};
        ssize_t m = ct_decode(c, raw, len, 0, 300, out, max, &err);
        if (m < 0)
                fail_msg("%s: %s", c->name, err.msg);
        return (size_t)m;
}

/* din -> refs -> PDATS II -> refs -> PDATS -> refs -> din: same text. */
static void chain(const char *din, size_t n_expect, unsigned bits, unsigned unit)
{
        size_t len = strlen(din), l2 = 0, l1 = 0, l0 = 0;
        struct tm_ref *a = malloc((n_expect + 1) * sizeof *a);
        struct tm_ref *b = malloc((n_expect + 1) * sizeof *b);
        assert_int_equal(decode_probed((const uint8_t *)din, len, a, n_expect + 1), n_expect);
        struct tm_enc_opts o = {.addr_bits = bits, .unit = unit};
        uint8_t *p2 = encode_probed(&tm_rcodec_pdats2, &o, a, n_expect, &l2);
        assert_int_equal(decode_probed(p2, l2, b, n_expect + 1), n_expect);
        uint8_t *p1 = encode_probed(&tm_rcodec_pdats, &o, b, n_expect, &l1);
        assert_int_equal(decode_probed(p1, l1, a, n_expect + 1), n_expect);
        uint8_t *d = encode_probed(&tm_rcodec_din, &o, a, n_expect, &l0);
        assert_int_equal(l0, len);
        assert_memory_equal(d, din, len);
        free(a);
        free(b);
        free(p2);
        free(p1);
        free(d);
}

static void test_chain_table3(void **unused)
{
        (void)unused;
        char text[29 * 20], *p = text;
        for (size_t i = 0; i < 29; i++)
                p += sprintf(p, "%x %llx\n", ct_table3[i].type,
                             (unsigned long long)ct_table3[i].addr);
        chain(text, 29, 32, 4);
        chain(text, 29, 64, 1);
}

static void test_chain_program(void **unused)
{
        (void)unused;
        size_t n = 20000;
        struct tm_ref *refs = malloc(n * sizeof *refs);
        char *text = malloc(n * 20), *p = text;
        ct_gen_program(refs, n, 77, 64, 1, 3);
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "%x %llx\n", refs[i].type, (unsigned long long)refs[i].addr);
        chain(text, n, 64, 1);
        free(refs);
        free(text);
}

/* lackey in, PDATS II (64-bit, unit 1) and back, din out. */
static void test_chain_lackey(void **unused)
{
        (void)unused;
        static const char lk[] = "==9== Command: /bin/true\n"
                                 "I  0401ab70,3\n"
                                 " S 1fff000628,8\n"
                                 " M 04033e06,1\n"
                                 "I  0401ab73,5\n";
        static const char want[] = "2 401ab70\n1 1fff000628\n0 4033e06\n1 4033e06\n2 401ab73\n";
        struct tm_ref a[8];
        assert_int_equal(decode_probed((const uint8_t *)lk, sizeof lk - 1, a, 8), 5);
        size_t l2 = 0, l0 = 0;
        struct tm_enc_opts o = {.addr_bits = 64, .unit = 1};
        uint8_t *p2 = encode_probed(&tm_rcodec_pdats2, &o, a, 5, &l2);
        struct tm_ref b[8];
        assert_int_equal(decode_probed(p2, l2, b, 8), 5);
        uint8_t *d = encode_probed(&tm_rcodec_din, &o, b, 5, &l0);
        assert_int_equal(l0, sizeof want - 1);
        assert_memory_equal(d, want, l0);
        free(p2);
        free(d);
}

/* examples/tex-table3.din is Table 3 as din text: it probes as din and
 * decodes to the table's references. */
static void test_example_file(void **unused)
{
        (void)unused;
        FILE *f = fopen(TM_SOURCE_DIR "/examples/tex-table3.din", "rb");
        if (!f)
                skip();
        uint8_t buf[4096];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        struct tm_ref got[40], want[29];
        assert_ptr_equal(tm_rcodec_probe(buf, len), &tm_rcodec_din);
        assert_int_equal(decode_probed(buf, len, got, 40), 29);
        ct_table3_refs(want);
        ct_assert_refs(got, want, 29);
}

/* The documented fallback: -ERANGE means use 64-bit addresses, -EDOM a
 * smaller instruction unit; the retry then works. */
static void test_fallback(void **unused)
{
        (void)unused;
        struct tm_ref refs[] = {{0x1000, 2}, {0x1003, 2}, {0x100000000ull, 0}};
        uint8_t *raw = NULL;
        size_t len = 0;
        struct tm_enc_opts o = {.addr_bits = 32, .unit = 4};
        assert_int_equal(ct_encode(&tm_rcodec_pdats2, &o, refs, 3, &raw, &len, NULL, NULL, NULL),
                         -EDOM);
        o.unit = 1;
        assert_int_equal(ct_encode(&tm_rcodec_pdats2, &o, refs, 3, &raw, &len, NULL, NULL, NULL),
                         -ERANGE);
        assert_int_equal(ct_encode(&tm_rcodec_pdats, &o, refs, 3, &raw, &len, NULL, NULL, NULL),
                         -ERANGE);
        o.addr_bits = 64;
        ct_check_roundtrip(&tm_rcodec_pdats2, &o, refs, 3);
        ct_check_roundtrip(&tm_rcodec_pdats, &o, refs, 3);
}

/* tm_err_prefix puts context before a message; one too long for the
 * buffer keeps its start and ends in "...". */
static void test_err_prefix(void **state)
{
        (void)state;
        struct tm_err e = {0};
        assert_int_equal(tm_err_set(&e, -EIO, "raw offset %d: bad header", 12), -EIO);
        assert_int_equal(tm_err_prefix(&e, "%s", "t.pdt2"), -EIO);
        assert_string_equal(e.msg, "t.pdt2: raw offset 12: bad header");
        char path[TM_ERR_MSG];
        memset(path, 'p', sizeof path - 1);
        path[sizeof path - 1] = '\0';
        assert_int_equal(tm_err_prefix(&e, "%s", path + 20), -EIO);
        assert_int_equal(strlen(e.msg), TM_ERR_MSG - 1);
        assert_int_equal(strncmp(e.msg, path + 20, 100), 0);
        assert_string_equal(e.msg + TM_ERR_MSG - 4, "...");
        assert_int_equal(tm_err_prefix(NULL, "x"), 0);
}

/* The address rows' decode_batch splits the decoder's references into the
 * kind, type and address columns with AVX-512 where the CPU has it and a
 * portable loop elsewhere: both give the references the codec decoded,
 * for every count (runs of 8 and their tails), on PDATS II (the vector
 * block decoder) and din. */
static void batch_cols(const struct tm_rcodec *rc, const uint8_t *raw, size_t len,
                       const struct tm_ref *want, size_t n)
{
        struct tm_rbatch b;
        assert_int_equal(tm_rbatch_init(&b, 3, 4096), 0);
        for (int scalar = 0; scalar < 2; scalar++) {
                tm_arec_force_scalar(scalar);
                void *ctx = NULL;
                struct tm_schema sc;
                struct tm_rstate st;
                struct tm_err err = {0};
                int hl = rc->open(raw, len, "t", &ctx, &sc, &st, &err);
                assert_true(hl >= 0);
                size_t at = (size_t)hl, got = 0;
                for (size_t cap = 1; at < len; cap = cap % 37 + 5) {
                        size_t used = 0;
                        ssize_t k = rc->decode_batch(ctx, &st, raw + at, len - at, 1, at, &used, &b,
                                                     cap, &err);
                        assert_true(k >= 0 && (size_t)k <= cap && used > 0);
                        assert_int_equal(b.n, (size_t)k);
                        for (ssize_t i = 0; i < k; i++, got++) {
                                assert_true(got < n);
                                assert_int_equal(b.kind[i], want[got].type);
                                assert_int_equal(b.col[0][i], want[got].type);
                                assert_int_equal(b.col[1][i], want[got].addr);
                        }
                        at += used;
                }
                assert_int_equal(got, n);
                size_t used = 0; /* one call for all of it: the vector loop's long runs */
                rc->close(ctx);
                hl = rc->open(raw, len, "t", &ctx, &sc, &st, &err);
                ssize_t k = rc->decode_batch(ctx, &st, raw + hl, len - (size_t)hl, 1, (uint64_t)hl,
                                             &used, &b, 4096, &err);
                assert_int_equal(k, n < 4096 ? n : 4096);
                for (ssize_t i = 0; i < k; i++) {
                        assert_int_equal(b.kind[i], want[i].type);
                        assert_int_equal(b.col[1][i], want[i].addr);
                }
                rc->close(ctx);
        }
        tm_arec_force_scalar(0);
        tm_rbatch_free(&b);
}

typedef void row_check_fn(const struct tm_rcodec *rc, const uint8_t *raw, size_t len,
                          const struct tm_ref *want, size_t n);

/* check on a program's 3000 references (ct_gen_program with seed, 64-bit
 * addresses) packed as PDATS II and as din, with the row of each. */
static void on_pdats2_and_din(uint64_t seed, row_check_fn *check)
{
        size_t n = 3000, len = 0;
        struct tm_ref *refs = malloc(n * sizeof *refs);
        ct_gen_program(refs, n, seed, 64, 1, 3);
        struct tm_enc_opts o = {.addr_bits = 64, .unit = 1};
        uint8_t *p2 = encode_probed(&tm_rcodec_pdats2, &o, refs, n, &len);
        check(&tm_rcodec_pdats2, p2, len, refs, n);
        free(p2);
        uint8_t *d = encode_probed(&tm_rcodec_din, &o, refs, n, &len);
        check(&tm_rcodec_din, d, len, refs, n);
        free(d);
        free(refs);
}

static void test_batch_cols(void **unused)
{
        (void)unused;
        on_pdats2_and_din(91, batch_cols);
}

/* The address rows' binary decoder (binary_of, the binary view's fast
 * path) gives the address family's binary records of what decode gives,
 * for rooms that are not whole records and for one record at a time. */
static void binary_of(const struct tm_rcodec *rc, const uint8_t *raw, size_t len,
                      const struct tm_ref *want, size_t n)
{
        tm_rbin_fn *fn = rc->binary_of();
        assert_non_null(fn);
        uint8_t *got = malloc(n * TM_ADDR_BIN_SIZE + 64), *exp = malloc(n * TM_ADDR_BIN_SIZE);
        struct tm_rec r;
        for (size_t i = 0; i < n; i++) {
                r.v[0] = want[i].type;
                r.v[1] = want[i].addr;
                tm_family_address.binary(NULL, exp + i * TM_ADDR_BIN_SIZE, NULL, &r, 1);
        }
        for (size_t room = 7; room < 5000; room = room * 3 + 1) {
                void *ctx = NULL;
                struct tm_schema sc;
                struct tm_rstate st;
                struct tm_err err = {0};
                int hl = rc->open(raw, len, "t", &ctx, &sc, &st, &err);
                assert_true(hl >= 0);
                size_t at = (size_t)hl, w = 0, recs = 0;
                while (at < len) {
                        size_t used = 0, k = 0, max = room % 2 ? 1 : SIZE_MAX;
                        size_t b = fn(&st, raw + at, len - at, at, &used, got + w, room, max, &k);
                        assert_int_equal(b, k * TM_ADDR_BIN_SIZE);
                        assert_true(b <= room && k <= max);
                        assert_true(used > 0 || k > 0 ||
                                    room < TM_ADDR_BIN_SIZE); /* PDATS II: a run */
                        if (room < TM_ADDR_BIN_SIZE)
                                break;
                        at += used;
                        w += b;
                        recs += k;
                }
                if (room >= TM_ADDR_BIN_SIZE) {
                        assert_int_equal(recs, n);
                        assert_memory_equal(got, exp, n * TM_ADDR_BIN_SIZE);
                }
                rc->close(ctx);
        }
        free(got);
        free(exp);
}

static void test_binary_of(void **unused)
{
        (void)unused;
        on_pdats2_and_din(93, binary_of);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table),         cmocka_unit_test(test_batch_cols),
            cmocka_unit_test(test_binary_of),     cmocka_unit_test(test_chain_table3),
            cmocka_unit_test(test_chain_program), cmocka_unit_test(test_chain_lackey),
            cmocka_unit_test(test_fallback),      cmocka_unit_test(test_example_file),
            cmocka_unit_test(test_err_prefix),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
