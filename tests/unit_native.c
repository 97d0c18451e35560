/* codecs/native (docs/formats/native.md), beyond what the conformance
 * suite checks of every row:
 *   predictors   a loop's instructions and data hit their tables: the
 *                streams hold one hit code per fetch and per data access
 *                and misses only for the first iteration; random
 *                addresses are stored plainly (mode 0), no larger than
 *                their plain columns;
 *   blocks       a trace written in blocks of 64 records: each block
 *                decoded alone, with a fresh workspace and in reverse
 *                order with one, is its slice of the records;
 *   damage       every byte of a small archive flipped (two ways): the
 *                records of the blocks before the damaged one, exactly,
 *                then an error naming that block's raw offset; never a
 *                wrong record, never one of the damaged block;
 *   sizes        a block over TMN_BODY_MAX of random records is written
 *                as halves that all decode;
 *   text         the row's text decoder (text_of) in calls of odd sizes,
 *                decode() taking over where it stops, gives the din lines
 *                of the records, every type and each one's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/native/native.h"
#include "support/tmn_block.h"
#include "support/tmtest.h"

static int sink(void *arg, const void *p, size_t n)
{
        return tmt_put(arg, p, n);
}

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* n records of a program: a loop of 5 instructions (4 bytes each) over
 * an array, each iteration loading a[i] and storing to a fixed place;
 * random when random. */
static struct tm_rec *program(size_t n, int random, uint64_t seed)
{
        struct tm_rec *r = calloc(n, sizeof *r);
        assert_non_null(r);
        uint64_t s = seed | 1;
        for (size_t i = 0, it = 0; i < n; it++) {
                for (unsigned k = 0; k < 5 && i < n; k++) {
                        r[i].kind = 2;
                        r[i].v[1] = 0x400000 + 4 * k;
                        r[i++].v[2] = 4;
                        if (k == 1 && i < n) {
                                r[i].kind = 0;
                                r[i].v[1] = 0x10000 + 8 * (it % 64);
                                r[i++].v[2] = 8;
                        }
                        if (k == 3 && i < n) {
                                r[i].kind = 1;
                                r[i].v[1] = 0x20000;
                                r[i++].v[2] = 8;
                        }
                }
        }
        for (size_t i = 0; i < n; i++) {
                if (random) {
                        r[i].kind = (uint32_t)(rnd(&s) % 3);
                        r[i].v[1] = rnd(&s);
                        r[i].v[2] = rnd(&s) % 17;
                }
                r[i].v[0] = r[i].kind;
        }
        return r;
}

static struct tmt_buf encode(const char *enc, const struct tm_rec *r, size_t n)
{
        struct tmt_buf o = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        assert_int_equal(tm_rcodec_native.enc_open(enc, sink, &o, &e, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_put(e, r, n, 0, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_finish(e, &err), 0);
        return o;
}

struct cols {
        uint8_t *type;
        uint64_t *addr;
        uint32_t *size;
};

static struct cols cols_of(const struct tm_rec *r, size_t n)
{
        struct cols c = {malloc(n), malloc(8 * n), malloc(4 * n)};
        for (size_t i = 0; i < n; i++) {
                c.type[i] = (uint8_t)r[i].kind;
                c.addr[i] = r[i].v[1];
                c.size[i] = (uint32_t)r[i].v[2];
        }
        return c;
}

static void cols_free(struct cols *c)
{
        free(c->type);
        free(c->addr);
        free(c->size);
}

static void test_predictors(void **unused)
{
        (void)unused;
        size_t n = 7000; /* 1000 iterations of 7 records */
        struct tm_rec *r = program(n, 0, 1);
        struct cols c = cols_of(r, n);
        struct tmn_ws *w = tmn_ws_new();
        struct tmn_cols tc = {c.type, c.addr, c.size};
        const uint8_t *p;
        size_t len;
        struct tmn_bstats st;
        assert_int_equal(tmn_block_encode(w, &tc, n, 1, 19, &p, &len, &st), 0);
        assert_int_equal(st.mode, TMN_PREDICT);
        assert_int_equal(st.raw[TMN_S_IHIT], 5000);    /* a code per fetch */
        assert_int_equal(st.raw[TMN_S_DHIT], 2000);    /* a code per data access */
        assert_true(st.raw[TMN_S_IMISS] <= 6);         /* the first iteration's */
        assert_true(st.raw[TMN_S_DMISS] <= 1000 + 40); /* +8 from its last: 1 byte */
        assert_true(st.raw[TMN_S_TYPE] <= 5000 + 16);  /* a hit per instruction */
        assert_true(len < 400);
        /* decodes to itself */
        uint8_t ty[7000];
        uint64_t ad[7000];
        uint32_t sz[7000];
        struct tm_err err = {0};
        assert_int_equal(tmn_block_decode(w, p, len, 8, 1, 0, ty, ad, sz, &err), 0);
        assert_memory_equal(ty, c.type, n);
        assert_memory_equal(ad, c.addr, 8 * n);
        assert_memory_equal(sz, c.size, 4 * n);
        cols_free(&c);
        free(r);
        /* random addresses: stored plainly, no larger than the plain columns */
        r = program(n, 1, 7);
        c = cols_of(r, n);
        tc = (struct tmn_cols){c.type, c.addr, c.size};
        assert_int_equal(tmn_block_encode(w, &tc, n, 1, 3, &p, &len, &st), 0);
        assert_int_equal(st.mode, TMN_PLAIN);
        assert_true(len <= TMN_BLK_HDR + 1 + 3 * TMN_STREAM_ENTRY + 13 * n);
        assert_int_equal(tmn_block_decode(w, p, len, 8, 1, 0, ty, ad, sz, &err), 0);
        assert_memory_equal(ad, c.addr, 8 * n);
        assert_memory_equal(sz, c.size, 4 * n);
        cols_free(&c);
        free(r);
        tmn_ws_free(w);
}

/* The blocks of a file f: their raw offsets and lengths; the count. */
static size_t blocks_of(const struct tmt_buf *f, size_t *at, size_t *len, uint32_t *nrec,
                        size_t max)
{
        size_t k = 0, pos = TMN_FILE_HDR;
        while (pos < f->len && k < max) {
                uint32_t n, body;
                struct tm_err err = {0};
                assert_int_equal(tmn_block_head(f->p + pos, 1u << 20, pos, &n, &body, &err), 0);
                if (n == 0)
                        break;
                at[k] = pos;
                len[k] = TMN_BLK_HDR + body;
                nrec[k++] = n;
                pos += TMN_BLK_HDR + body;
        }
        return k;
}

static void test_blocks_alone(void **unused)
{
        (void)unused;
        size_t n = 1000;
        struct tm_rec *r = program(n, 0, 3);
        for (size_t i = 300; i < 400; i++) /* a stretch that goes plain */
                r[i].v[1] = 0x9e3779b97f4a7c15ull * i;
        struct tmt_buf f = encode("b6", r, n);
        size_t at[64], len[64];
        uint32_t nrec[64];
        size_t k = blocks_of(&f, at, len, nrec, 64);
        assert_int_equal(k, (n + 63) / 64);
        uint8_t ty[64];
        uint64_t ad[64];
        uint32_t sz[64];
        struct tmn_ws *one = tmn_ws_new();
        for (size_t pass = 0; pass < 2; pass++) {
                for (size_t j = 0; j < k; j++) {
                        size_t b = pass ? k - 1 - j : j; /* reverse: tables from a later block */
                        struct tmn_ws *w = pass ? one : tmn_ws_new();
                        struct tm_err err = {0};
                        assert_int_equal(
                            tmn_block_decode(w, f.p + at[b], len[b], 8, 1, at[b], ty, ad, sz, &err),
                            0);
                        for (size_t i = 0; i < nrec[b]; i++) {
                                const struct tm_rec *x = &r[64 * b + i];
                                assert_int_equal(ty[i], x->kind);
                                assert_int_equal(ad[i], x->v[1]);
                                assert_int_equal(sz[i], x->v[2]);
                        }
                        if (!pass)
                                tmn_ws_free(w);
                }
        }
        tmn_ws_free(one);
        free(f.p);
        free(r);
}

static void test_damage(void **unused)
{
        (void)unused;
        size_t n = 600;
        struct tm_rec *r = program(n, 0, 5);
        for (size_t i = 200; i < 260; i++)
                r[i].v[1] = 0x9e3779b97f4a7c15ull * i;
        struct tmt_buf f = encode("b6", r, n);
        size_t at[64], len[64];
        uint32_t nrec[64];
        size_t k = blocks_of(&f, at, len, nrec, 64);
        struct tm_rec *got = calloc(n + 64, sizeof *got);
        uint8_t *d = malloc(f.len);
        size_t m;
        struct tm_err err = {0};
        assert_int_equal(tmn_test_rows_into(37, f.p, f.len, got, n + 64, &m, &err), 0);
        assert_int_equal(m, n);
        static const uint8_t flips[] = {0x01, 0xff};
        for (size_t x = 0; x < sizeof flips; x++) {
                for (size_t i = 0; i < f.len; i++) {
                        memcpy(d, f.p, f.len);
                        d[i] ^= flips[x];
                        /* the block the byte is in (k: the end mark) and the
                         * records before it */
                        size_t b = 0, before = 0;
                        while (b < k && i >= at[b] + len[b])
                                before += nrec[b++];
                        int rc = tmn_test_rows_into(37, d, f.len, got, n + 64, &m, &err);
                        if (rc < 0 && m != before)
                                fail_msg("byte %zu ^ %02x: %zu records, %zu before the damage", i,
                                         flips[x], m, before);
                        assert_int_equal(rc, -EIO);
                        for (size_t j = 0; j < m; j++) {
                                assert_int_equal(got[j].kind, r[j].kind);
                                assert_int_equal(got[j].v[1], r[j].v[1]);
                                assert_int_equal(got[j].v[2], r[j].v[2]);
                        }
                        char want[64];
                        snprintf(want, sizeof want, "raw offset %zu",
                                 i < TMN_FILE_HDR ? 0
                                 : b < k          ? at[b]
                                                  : f.len - TMN_END_LEN);
                        if (!strstr(err.msg, want))
                                fail_msg("byte %zu: '%s' does not name %s", i, err.msg, want);
                }
        }
        free(d);
        free(got);
        free(f.p);
        free(r);
}

static void test_split(void **unused)
{
        (void)unused;
        size_t n = 1u << 16; /* random: 13 bytes each, past TMN_BODY_MAX */
        struct tm_rec *r = program(n, 1, 11);
        struct tmt_buf f = encode("b16/z1", r, n);
        size_t at[64], len[64];
        uint32_t nrec[64];
        size_t k = blocks_of(&f, at, len, nrec, 64);
        assert_true(k >= 4);
        struct tm_rec *got = calloc(n, sizeof *got);
        size_t m;
        struct tm_err err = {0};
        assert_int_equal(tmn_test_rows_into(37, f.p, f.len, got, n, &m, &err), 0);
        assert_int_equal(m, n);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(got[i].v[1], r[i].v[1]);
        free(got);
        free(f.p);
        free(r);
}

/* The din lines of f's records through the row's text decoder, in calls
 * of small and odd sizes, the generic decode() taking a record where it
 * stops (as the views' feed does); kind >= 0: that type's lines only. */
static size_t text_all(const struct tmt_buf *f, long kind, char *dst, size_t cap)
{
        tm_rtext_fn *text = tm_rcodec_native.text_of();
        void *ctx = NULL;
        struct tm_schema s;
        struct tm_rstate st;
        struct tm_err err = {0};
        int hl = tm_rcodec_native.open(f->p, f->len, "t.tmn", &ctx, &s, &st, &err);
        assert_true(hl > 0);
        size_t pos = (size_t)hl, w = 0;
        uint64_t seed = 99;
        for (int idle = 0; idle < 2;) {
                size_t used = 0, nrec = 0, room = 100 + rnd(&seed) % 3000;
                room = room < cap - w ? room : cap - w;
                size_t k = text(&st, f->p + pos, f->len - pos, pos, &used, NULL, dst + w, room,
                                1 + rnd(&seed) % 700, kind, &nrec);
                w += k;
                pos += used;
                if (nrec)
                        continue;
                struct tm_rec r;
                ssize_t n = tm_rcodec_native.decode(ctx, &st, f->p + pos, f->len - pos, 1, pos,
                                                    &used, &r, 1, &err);
                assert_true(n >= 0);
                pos += used;
                if (n == 1 && (kind < 0 || r.kind == (uint32_t)kind))
                        w += (size_t)snprintf(dst + w, cap - w, "%u %llx\n", r.kind,
                                              (unsigned long long)r.v[1]);
                idle += n == 0 && used == 0;
        }
        assert_int_equal(pos, f->len);
        tm_rcodec_native.close(ctx);
        return w;
}

static void test_text(void **unused)
{
        (void)unused;
        size_t n = 3000;
        struct tm_rec *r = program(n, 0, 13);
        for (size_t i = 700; i < 800; i++)
                r[i].v[1] = 0x9e3779b97f4a7c15ull * i;
        struct tmt_buf f = encode("b6", r, n);
        size_t cap = 20 * n + 4096;
        char *want = malloc(cap), *got = malloc(cap);
        for (long kind = -1; kind < 3; kind++) {
                size_t wl = 0;
                for (size_t i = 0; i < n; i++)
                        if (kind < 0 || r[i].kind == (uint32_t)kind)
                                wl += (size_t)snprintf(want + wl, cap - wl, "%u %llx\n", r[i].kind,
                                                       (unsigned long long)r[i].v[1]);
                size_t gl = text_all(&f, kind, got, cap);
                assert_int_equal(gl, wl);
                assert_memory_equal(got, want, wl);
        }
        free(want);
        free(got);
        free(f.p);
        free(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_predictors), cmocka_unit_test(test_blocks_alone),
            cmocka_unit_test(test_damage),     cmocka_unit_test(test_split),
            cmocka_unit_test(test_text),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
