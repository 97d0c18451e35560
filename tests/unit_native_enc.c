/* codecs/native's encoder through its typed parameters (enc_open_for):
 *   schemas   records of the address schema without sizes (din's, 8 and
 *             6 types), with sizes and 3 types (lackey's), and PDATS II's
 *             3 types without: the trace reopens with the same schema
 *             (the header's ntypes and sized), its records decoded are
 *             the ones written; enc_schema_for gives that schema back, and
 *             for a schema of another family every type with its sizes;
 *   threads   0, 1, 2 and 3 threads write the same bytes, in blocks of
 *             2^6 records and in blocks of 2^16 of random addresses (each
 *             written as halves: TMN_BODY_MAX), and the same bytes as the
 *             named encoding bK/zL of the sized schema;
 *   refusals  a type the schema has not, a size over 32 bits, a
 *             parameter out of its range: -EINVAL, naming the record;
 *             a sink that fails stops the encoder (threads or not) with
 *             its error, and nothing hangs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/address/arec.h"
#include "codecs/native/native.h"

struct out {
        uint8_t *p;
        size_t len, cap;
        int fail_at; /* the call that fails (1-based), 0: none */
        int calls;
};

static int sink(void *arg, const void *p, size_t n)
{
        struct out *o = arg;
        if (o->fail_at && ++o->calls == o->fail_at)
                return -ENOSPC;
        if (o->len + n > o->cap) {
                o->cap = (o->len + n) * 2;
                o->p = realloc(o->p, o->cap);
                assert_non_null(o->p);
        }
        memcpy(o->p + o->len, p, n);
        o->len += n;
        return 0;
}

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* n records of schema s: fetches in a loop with data accesses of the
 * schema's other types, every 50th record a random jump; random
 * addresses (and sizes) throughout when random. */
static struct tm_rec *records(const struct tm_schema *s, size_t n, int random, uint64_t seed)
{
        struct tm_rec *r = calloc(n, sizeof *r);
        assert_non_null(r);
        uint64_t x = seed | 1;
        int sized = s->nfields > 2;
        unsigned fetch = s->nkinds > 2 ? 2 : 0;
        for (size_t i = 0; i < n; i++) {
                unsigned k = i % 3 == 0 ? fetch : (unsigned)(rnd(&x) % s->nkinds);
                uint64_t a = k == fetch ? 0x400000 + 4 * (i % 60) : 0x10000 + 8 * (i % 97);
                if (random || i % 50 == 0)
                        a = rnd(&x);
                r[i].kind = k;
                r[i].v[0] = k;
                r[i].v[1] = a;
                r[i].v[2] = sized ? (random ? rnd(&x) % 100000 : 1 + i % 8) : 0;
        }
        return r;
}

static int open_for(const struct tm_schema *in, int level, int log2, unsigned threads,
                    struct out *o, struct tm_renc **e, struct tm_err *err)
{
        struct tm_renc_args a = {.in = in, .threads = threads};
        a.v[TMN_P_LEVEL] = level;
        a.v[TMN_P_LOG2] = log2;
        return tm_rcodec_native.enc_open_for(&a, sink, o, e, err);
}

/* r[0..n) of schema in written with these parameters, in pieces of 100. */
static struct out write_for(const struct tm_schema *in, const struct tm_rec *r, size_t n,
                            int level, int log2, unsigned threads)
{
        struct out o = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        assert_int_equal(open_for(in, level, log2, threads, &o, &e, &err), 0);
        for (size_t i = 0; i < n; i += 100)
                assert_int_equal(tm_rcodec_native.enc_put(e, r + i, n - i < 100 ? n - i : 100, i,
                                                          &err),
                                 0);
        assert_int_equal(tm_rcodec_native.enc_finish(e, &err), 0);
        return o;
}

/* The trace o decoded: its schema into *s, its records compared with
 * want[0..n). */
static void check_decodes(const struct out *o, struct tm_schema *s, const struct tm_rec *want,
                          size_t n)
{
        void *ctx = NULL;
        struct tm_rstate st;
        struct tm_err err = {0};
        int hl = tm_rcodec_native.open(o->p, o->len, "t.tmn", &ctx, s, &st, &err);
        assert_true(hl > 0);
        size_t pos = (size_t)hl, got = 0;
        static struct tm_rec buf[1000];
        for (;;) {
                size_t used = 0;
                ssize_t k = tm_rcodec_native.decode(ctx, &st, o->p + pos, o->len - pos, 1, pos,
                                                    &used, buf, 1000, &err);
                assert_true(k >= 0);
                for (ssize_t i = 0; i < k; i++, got++) {
                        assert_true(got < n);
                        assert_int_equal(buf[i].kind, want[got].kind);
                        assert_int_equal(buf[i].v[1], want[got].v[1]);
                        if (s->nfields > 2)
                                assert_int_equal(buf[i].v[2], want[got].v[2]);
                }
                pos += used;
                if (k == 0 && used == 0)
                        break;
        }
        assert_int_equal(got, n);
        assert_int_equal(pos, o->len);
        tm_rcodec_native.close(ctx);
}

static void same_schema(const struct tm_schema *a, const struct tm_schema *b)
{
        assert_int_equal(a->nkinds, b->nkinds);
        assert_int_equal(a->nfields, b->nfields);
        for (unsigned k = 0; k < a->nkinds; k++)
                assert_string_equal(a->kind[k].name, b->kind[k].name);
        for (unsigned f = 0; f < a->nfields; f++)
                assert_string_equal(a->field[f].name, b->field[f].name);
}

static void test_schemas(void **unused)
{
        (void)unused;
        static const struct {
                unsigned ntypes;
                int sized;
        } cases[] = {{8, 0}, {6, 0}, {3, 1}, {3, 0}, {8, 1}, {1, 0}};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                struct tm_schema in, takes, back;
                tm_addr_schema(&in, cases[c].ntypes, cases[c].sized);
                tm_rcodec_native.enc_schema_for(&in, &takes);
                same_schema(&in, &takes);
                size_t n = 5000;
                struct tm_rec *r = records(&in, n, 0, 7 + c);
                struct out o = write_for(&in, r, n, 3, 10, 0);
                assert_int_equal(o.p[10], cases[c].ntypes);
                assert_int_equal(o.p[11], cases[c].sized);
                check_decodes(&o, &back, r, n);
                same_schema(&in, &back);
                free(o.p);
                free(r);
        }
        /* another family's schema: taken as it is (schema 2, ncol.h) */
        struct tm_schema other, takes;
        memset(&other, 0, sizeof other);
        snprintf(other.name, sizeof other.name, "heap");
        other.nkinds = 2;
        other.nfields = 1;
        snprintf(other.kind[0].name, sizeof other.kind[0].name, "malloc");
        snprintf(other.field[0].name, sizeof other.field[0].name, "size");
        tm_rcodec_native.enc_schema_for(&other, &takes);
        same_schema(&other, &takes);
}

static void test_threads(void **unused)
{
        (void)unused;
        struct tm_schema in;
        tm_addr_schema(&in, TM_NTYPES, 1);
        size_t n = 20000;
        struct tm_rec *r = records(&in, n, 0, 3);
        struct out base = write_for(&in, r, n, 3, 6, 0);
        for (unsigned t = 1; t <= 3; t++) {
                struct out o = write_for(&in, r, n, 3, 6, t);
                assert_int_equal(o.len, base.len);
                assert_memory_equal(o.p, base.p, base.len);
                free(o.p);
        }
        /* the named encoding of the same parameters */
        struct out named = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        assert_int_equal(tm_rcodec_native.enc_open("b6/z3", sink, &named, &e, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_put(e, r, n, 0, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_finish(e, &err), 0);
        assert_int_equal(named.len, base.len);
        assert_memory_equal(named.p, base.p, base.len);
        free(named.p);
        free(base.p);
        free(r);
        /* random records in blocks of 2^16: each block over TMN_BODY_MAX,
         * written as halves by whichever thread */
        n = 3 << 16;
        r = records(&in, n, 1, 5);
        base = write_for(&in, r, n, 1, 16, 0);
        struct out two = write_for(&in, r, n, 1, 16, 2);
        assert_int_equal(two.len, base.len);
        assert_memory_equal(two.p, base.p, base.len);
        struct tm_schema back;
        check_decodes(&two, &back, r, n);
        free(two.p);
        free(base.p);
        free(r);
}

static void test_refusals(void **unused)
{
        (void)unused;
        struct tm_schema in;
        tm_addr_schema(&in, 3, 1);
        struct out o = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        /* a type the schema has not; a size over 32 bits */
        struct tm_rec bad = {.kind = 3, .v = {3, 0x1000, 4}};
        assert_int_equal(open_for(&in, 3, 10, 2, &o, &e, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_put(e, &bad, 1, 41, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "record 41"));
        tm_rcodec_native.enc_free(e);
        bad = (struct tm_rec){.kind = 1, .v = {1, 0x1000, 1ull << 32}};
        assert_int_equal(open_for(&in, 3, 10, 0, &o, &e, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_put(e, &bad, 1, 9, &err), -EINVAL);
        tm_rcodec_native.enc_free(e);
        free(o.p);
        /* parameters out of range */
        assert_int_equal(open_for(&in, 23, 10, 0, &o, &e, &err), -EINVAL);
        assert_int_equal(open_for(&in, 3, TMN_LOG_MAX + 1, 0, &o, &e, &err), -EINVAL);
        assert_int_equal(open_for(&in, 3, TMN_LOG_MIN - 1, 0, &o, &e, &err), -EINVAL);
        /* a sink that fails at its 3rd call (the header is the 1st): the
         * encoder stops with its error, threads or not */
        size_t n = 4000;
        struct tm_rec *r = records(&in, n, 0, 11);
        for (unsigned t = 0; t <= 2; t++) {
                struct out f = {.fail_at = 3};
                memset(&err, 0, sizeof err);
                assert_int_equal(open_for(&in, 1, 6, t, &f, &e, &err), 0);
                int rc = tm_rcodec_native.enc_put(e, r, n, 0, &err);
                if (rc == 0)
                        rc = tm_rcodec_native.enc_finish(e, &err);
                else
                        tm_rcodec_native.enc_free(e);
                assert_int_equal(rc, -ENOSPC);
                free(f.p);
        }
        free(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_schemas),
            cmocka_unit_test(test_threads),
            cmocka_unit_test(test_refusals),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
