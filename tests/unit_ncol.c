/* The native encoding's schema 2 (codecs/native/ncol.h,
 * docs/formats/native.md "Schema 2"), beyond what tests/ncol_views.sh
 * checks of the examples' views:
 *   round trip  records of a schema with every field type (numbers of
 *               every shape, text, bytes, lists), sections and byte
 *               sections, written through tmn_enc_open_src in
 *               blocks of 2^6 and read back through decode() and
 *               decode_batch(): the same records, the same blobs, the
 *               same schema;
 *   methods     a counter, a stride, values that come back (a reference
 *               to a live block), random values: each field's method and
 *               size as the predictors promise; random values are no
 *               larger than their plain 8-byte column;
 *   damage      every byte of a small archive flipped (two ways): the
 *               records of the blocks before the damaged one, exactly,
 *               then -EIO naming that block's raw offset (the schema
 *               chunk's damage: offset 20), never a wrong record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/native/ncol.h"
#include "support/tmn_block.h"
#include "support/tmtest.h"

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* A schema of every field type: two kinds of numbers, one of text,
 * bytes and a list; one section. */
static void schema_of(struct tm_schema *s)
{
        memset(s, 0, sizeof *s);
        strcpy(s->name, "testfam");
        const char *fn[] = {"addr", "size", "delta", "name", "blob", "ids"};
        const uint8_t ft[] = {TM_FT_UINT, TM_FT_UINT,  TM_FT_INT,
                              TM_FT_TEXT, TM_FT_BYTES, TM_FT_LIST};
        s->nfields = 6;
        for (unsigned i = 0; i < 6; i++) {
                strcpy(s->field[i].name, fn[i]);
                s->field[i].type = ft[i];
                s->field[i].show = i == 0 ? TM_SHOW_HEX : TM_SHOW_DEC;
        }
        s->nkinds = 3;
        strcpy(s->kind[0].name, "get");
        s->kind[0].nfields = 3;
        memcpy(s->kind[0].field, (uint8_t[]){0, 1, 2}, 3);
        strcpy(s->kind[1].name, "put");
        strcpy(s->kind[1].label, "P");
        s->kind[1].tag = 77;
        s->kind[1].nfields = 2;
        memcpy(s->kind[1].field, (uint8_t[]){0, 3}, 2);
        strcpy(s->kind[2].name, "misc");
        s->kind[2].nfields = 3;
        memcpy(s->kind[2].field, (uint8_t[]){4, 5, 1}, 3);
        s->nsections = 1;
        strcpy(s->section[0].name, "sec");
        s->section[0].number = 9;
}

/* Records with their variable bytes in *arena. */
static struct tm_rec *records(size_t n, uint64_t seed, uint8_t **arena)
{
        struct tm_rec *r = calloc(n, sizeof *r);
        uint8_t *a = malloc(n * 64);
        size_t al = 0;
        uint64_t live[16] = {0};
        for (size_t i = 0; i < n; i++) {
                unsigned k = (unsigned)(rnd(&seed) % 3);
                r[i].kind = k;
                r[i].section = (i / 50) % 2;
                if (k == 0) {
                        uint64_t a0 = 0x7f0000001000ull + 32 * i;
                        live[i % 16] = a0;
                        r[i].v[0] = a0;
                        r[i].v[1] = 16 + (i % 5) * 8;
                        r[i].v[2] = (uint64_t) - (int64_t)(rnd(&seed) % 1000);
                } else if (k == 1) {
                        r[i].v[0] = live[rnd(&seed) % 16];
                        size_t len = rnd(&seed) % 12;
                        for (size_t j = 0; j < len; j++)
                                a[al + j] = (uint8_t)('a' + j);
                        r[i].v[1] = len;
                        r[i].var[0] = a + al;
                        al += len;
                } else {
                        size_t len = rnd(&seed) % 9, cnt = rnd(&seed) % 4;
                        for (size_t j = 0; j < len; j++)
                                a[al + j] = (uint8_t)rnd(&seed);
                        r[i].v[0] = len;
                        r[i].var[0] = a + al;
                        al += len;
                        for (size_t j = 0; j < cnt * 8; j++)
                                a[al + j] = (uint8_t)(j * i);
                        r[i].v[1] = cnt;
                        r[i].var[1] = a + al;
                        al += cnt * 8;
                        r[i].v[2] = rnd(&seed);
                }
        }
        *arena = a;
        return r;
}

static const struct tm_blob blobs[] = {{"first", (const uint8_t *)"hello", 5},
                                       {"empty", (const uint8_t *)"", 0}};

static struct tmt_buf encode(const struct tm_schema *s, const char *enc, const struct tm_rec *r,
                             size_t n)
{
        const struct tm_renc_src src = {s, blobs, 2};
        return tmn_test_encode(&src, enc, r, n);
}

/* Is record b (schema s) record a? */
static int same(const struct tm_schema *s, const struct tm_rec *a, const struct tm_rec *b)
{
        if (a->kind != b->kind || a->section != b->section)
                return 0;
        const struct tm_kind *k = &s->kind[a->kind];
        unsigned vs = 0;
        for (unsigned j = 0; j < k->nfields; j++) {
                if (a->v[j] != b->v[j])
                        return 0;
                uint8_t t = s->field[k->field[j]].type;
                if (t < TM_FT_TEXT)
                        continue;
                size_t len = t == TM_FT_LIST ? a->v[j] * 8 : a->v[j];
                if (len && memcmp(a->var[vs], b->var[vs], len) != 0)
                        return 0;
                vs++;
        }
        return 1;
}

/* Decode p through the row, checking each record against want[] as it
 * comes (the variable bytes live until the next call): the count before
 * the end or the first error, the outcome. */
struct want_recs {
        const struct tm_schema *ws;
        const struct tm_rec *r;
        size_t n;
};

static void want_put(void *arg, size_t at, const struct tm_rec *got, size_t k)
{
        const struct want_recs *w = arg;
        for (size_t i = 0; i < k; i++)
                if (at + i >= w->n || !same(w->ws, &w->r[at + i], &got[i]))
                        fail_msg("record %zu decoded wrong", at + i);
}

static int row_check(const uint8_t *p, size_t len, const struct tm_schema *ws,
                     const struct tm_rec *want, size_t nwant, size_t *n, struct tm_err *err)
{
        struct want_recs w = {ws, want, nwant};
        return tmn_test_rows(p, len, 37, want_put, &w, n, err);
}

static void test_round_trip(void **unused)
{
        (void)unused;
        struct tm_schema s;
        schema_of(&s);
        uint8_t *arena;
        size_t n = 1000;
        struct tm_rec *r = records(n, 7, &arena);
        struct tmt_buf f = encode(&s, "b6", r, n);
        assert_int_equal(f.p[9], NCOL_SCHEMA);
        size_t m;
        struct tm_err err = {0};
        assert_int_equal(row_check(f.p, f.len, &s, r, n, &m, &err), 0);
        assert_int_equal(m, n);

        /* the schema and the byte sections, as written */
        void *ctx;
        struct tm_schema got;
        struct tm_rstate st;
        int hl = tm_rcodec_native.open(f.p, f.len, "t.tmn", &ctx, &got, &st, &err);
        assert_true(hl > TMN_FILE_HDR);
        assert_memory_equal(&got, &s, sizeof s);
        struct tm_blob b[4];
        assert_int_equal(tm_rcodec_native.blobs(ctx, b, 4), 2);
        assert_string_equal(b[0].name, "first");
        assert_int_equal(b[0].n, 5);
        assert_memory_equal(b[0].p, "hello", 5);
        assert_int_equal(b[1].n, 0);

        /* decode_batch: the same values, variable bytes in the arena */
        struct tm_rbatch bt;
        assert_int_equal(tm_rbatch_init(&bt, s.nfields, 50), 0);
        assert_int_equal(tm_rbatch_arena(&bt, 300), 0);
        size_t pos = (size_t)hl, k = 0;
        for (;;) {
                size_t used = 0;
                ssize_t c = tm_rcodec_native.decode_batch(ctx, &st, f.p + pos, f.len - pos, 1, pos,
                                                          &used, &bt, 50, &err);
                assert_true(c >= 0);
                for (size_t i = 0; i < (size_t)c; i++) {
                        struct tm_rec one;
                        tm_rbatch_rec(&bt, &s, i, &one);
                        one.section = r[k + i].section; /* a batch has no sections */
                        if (!same(&s, &r[k + i], &one))
                                fail_msg("batch record %zu", k + i);
                }
                k += (size_t)c;
                pos += used;
                if (c == 0 && used == 0)
                        break;
        }
        assert_int_equal(k, n);
        tm_rbatch_free(&bt);
        tm_rcodec_native.close(ctx);
        free(f.p);
        free(r);
        free(arena);
}

static void test_methods(void **unused)
{
        (void)unused;
        struct tm_schema s;
        memset(&s, 0, sizeof s);
        strcpy(s.name, "m");
        s.nfields = 4;
        s.nkinds = 1;
        s.kind[0].nfields = 4;
        for (unsigned i = 0; i < 4; i++) {
                snprintf(s.field[i].name, TM_NAME_MAX, "f%u", i);
                s.kind[0].field[i] = (uint8_t)i;
        }
        size_t n = 4096;
        struct tm_rec *r = calloc(n, sizeof *r);
        uint64_t seed = 3, pool[64];
        for (unsigned i = 0; i < 64; i++)
                pool[i] = rnd(&seed);
        for (size_t i = 0; i < n; i++) {
                r[i].v[0] = 1000 + 48 * i;              /* a stride */
                r[i].v[1] = pool[rnd(&seed) % 64];      /* values that come back */
                r[i].v[2] = rnd(&seed);                 /* random */
                r[i].v[3] = i % 3 == 0 ? 7 : 9 + i % 3; /* a short cycle */
        }
        struct ncol_ws *w = ncol_ws_new(&s);
        assert_non_null(w);
        const uint8_t *p;
        size_t len;
        uint8_t meth[4];
        assert_int_equal(ncol_block_encode(w, r, n, 19, &p, &len, meth), 0);
        assert_true(meth[0] == NCOL_M_DELTA || meth[0] == NCOL_M_PRED); /* both all alike */
        assert_int_equal(meth[1], NCOL_M_PRED);
        assert_int_not_equal(meth[3], NCOL_M_PLAIN);
        /* the random column costs no more than its 8 bytes a value, the
         * rest a little: the stride and the cycle hit, the pool's values
         * are ranks of a byte each */
        assert_true(len < n * 8 + n + 1024);
        assert_true(len > n * 8);
        const struct ncol_cols *c;
        struct tm_err err = {0};
        uint8_t *copy = malloc(len);
        memcpy(copy, p, len);
        assert_int_equal(ncol_block_decode(w, copy, len, 0, &c, &err), 0);
        for (size_t i = 0; i < n; i++)
                for (unsigned f = 0; f < 4; f++)
                        assert_int_equal(c->col[f][i], r[i].v[f]);
        free(copy);
        ncol_ws_free(w);
        free(r);
}

static void test_damage(void **unused)
{
        (void)unused;
        struct tm_schema s;
        schema_of(&s);
        uint8_t *arena;
        size_t n = 300;
        struct tm_rec *r = records(n, 11, &arena);
        struct tmt_buf f = encode(&s, "b6", r, n);
        /* the blocks: where each starts, its length and records */
        size_t at[16], blen[16], before[17] = {0}, k = 0;
        size_t pos = TMN_FILE_HDR + NCOL_SCH_HDR + tmn_get32(f.p + TMN_FILE_HDR + 4);
        size_t first = pos;
        while (tmn_get32(f.p + pos + 4) != 0) {
                at[k] = pos;
                blen[k] = TMN_BLK_HDR + tmn_get32(f.p + pos + 8);
                before[k + 1] = before[k] + tmn_get32(f.p + pos + 4);
                pos += blen[k++];
        }
        assert_int_equal(before[k], n);
        uint8_t *d = malloc(f.len);
        static const uint8_t flips[] = {0x01, 0xff};
        struct tm_err err = {0};
        for (size_t x = 0; x < sizeof flips; x++) {
                for (size_t i = 0; i < f.len; i++) {
                        memcpy(d, f.p, f.len);
                        d[i] ^= flips[x];
                        size_t b = 0;
                        while (b < k && i >= at[b] + blen[b])
                                b++;
                        size_t m;
                        int rc = row_check(d, f.len, &s, r, n, &m, &err);
                        assert_int_equal(rc, -EIO);
                        size_t want = i < first ? 0 : before[b];
                        if (m != want)
                                fail_msg("byte %zu ^ %02x: %zu records, %zu before the damage", i,
                                         flips[x], m, want);
                        char name[64];
                        snprintf(name, sizeof name, "raw offset %zu",
                                 i < TMN_FILE_HDR ? 0
                                 : i < first      ? TMN_FILE_HDR
                                 : b < k          ? at[b]
                                                  : f.len - TMN_END_LEN);
                        if (!strstr(err.msg, name))
                                fail_msg("byte %zu: '%s' does not name %s", i, err.msg, name);
                }
        }
        free(d);
        free(f.p);
        free(r);
        free(arena);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_trip),
            cmocka_unit_test(test_methods),
            cmocka_unit_test(test_damage),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
