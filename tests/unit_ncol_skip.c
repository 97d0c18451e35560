/* The fast paths of reading schema 2 (codecs/native/ncol_row.c,
 * ncol_blk.c, codecs/record/text.c) against the paths they stand for:
 *   batches     decode_batch's column-by-column batches (kinds whose
 *               variable fields sit in different var[] slots, lists,
 *               values past a small arena, a batch without one) give
 *               record for record what decode() gives, and stop where
 *               the values of one more record would not fit;
 *   planes      method 4 (byte planes) decodes 8 values at a time: every
 *               count of values around a multiple of 8, the same values;
 *   lengths     tm_text_batch_lens of batches of text with and without
 *               bytes to escape (a lone "-", empty, every byte value)
 *               equals the lengths of the lines tm_text_pline writes;
 *   views       a trace written to a file and opened as the daemon opens
 *               one: its ascii, streams/ and binary views read at many
 *               offsets (the records before an offset skipped by the
 *               column path) are the bytes of the view read whole from
 *               its start (every record rendered). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/native/ncol.h"
#include "codecs/record/text.h"
#include "support/tmn_block.h"
#include "support/tmtest.h"
#include "views/view.h"

/* Fields: t (number), cls (text), mth (text), obj (number), ids (list),
 * raw (bytes). Kinds put the variable fields in different var[] slots:
 * cls is slot 0 of "load" and of "call", raw slot 0 of "blob" and slot 1
 * of "call"; "tick" has none. */
static void schema_of(struct tm_schema *s)
{
        memset(s, 0, sizeof *s);
        strcpy(s->name, "skipfam");
        const char *fn[] = {"t", "cls", "mth", "obj", "ids", "raw"};
        const uint8_t ft[] = {TM_FT_UINT, TM_FT_TEXT, TM_FT_TEXT,
                              TM_FT_UINT, TM_FT_LIST, TM_FT_BYTES};
        s->nfields = 6;
        for (unsigned i = 0; i < 6; i++) {
                strcpy(s->field[i].name, fn[i]);
                s->field[i].type = ft[i];
                s->field[i].show = i == 3 ? TM_SHOW_HEX : TM_SHOW_DEC;
        }
        static const struct {
                const char *name;
                unsigned n;
                uint8_t f[5];
        } k[] = {{"tick", 1, {0}},
                 {"load", 2, {0, 1}},
                 {"call", 5, {0, 1, 2, 5, 3}},
                 {"blob", 3, {5, 0, 4}},
                 {"ids", 2, {4, 3}}};
        s->nkinds = 5;
        for (unsigned i = 0; i < 5; i++) {
                strcpy(s->kind[i].name, k[i].name);
                s->kind[i].nfields = (uint8_t)k[i].n;
                memcpy(s->kind[i].field, k[i].f, k[i].n);
        }
}

/* Text of len bytes: plain names most of the time; from every byte
 * value when odd is set (escaped in the text form). */
static void text_of(uint8_t *p, size_t len, uint64_t *seed, int odd)
{
        static const char plain[] = "java/lang/StringBuilderappendtoString$1<init>";
        for (size_t j = 0; j < len; j++)
                p[j] = odd ? (uint8_t)tmt_rand(seed)
                           : (uint8_t)plain[tmt_below(seed, sizeof plain - 1)];
}

/* n records of schema s (schema_of's), their bytes in *arena. big: some
 * values of kilobytes (past a small arena); odd: some text to escape,
 * lone "-"s and empty values. kinds: the kinds to draw from (bit k). */
static struct tm_rec *records(const struct tm_schema *s, size_t n, uint64_t seed, int big, int odd,
                              unsigned kinds, uint8_t **arena)
{
        struct tm_rec *r = calloc(n, sizeof *r);
        size_t cap = n * 200 + (big ? n / 16 * 6000 : 0), al = 0;
        uint8_t *a = malloc(cap);
        assert_non_null(r);
        assert_non_null(a);
        uint64_t t = 1000;
        for (size_t i = 0; i < n; i++) {
                struct tm_rec *x = &r[i];
                do
                        x->kind = (unsigned)tmt_below(&seed, s->nkinds);
                while (!(kinds >> x->kind & 1));
                t += tmt_below(&seed, 4) ? tmt_below(&seed, 300) : tmt_rand(&seed) >> 20;
                const struct tm_kind *k = &s->kind[x->kind];
                unsigned vs = 0;
                for (unsigned j = 0; j < k->nfields; j++) {
                        unsigned f = k->field[j];
                        if (f == 0) {
                                x->v[j] = t;
                        } else if (f == 3) {
                                x->v[j] = 0x7f0000000000ull + 16 * tmt_below(&seed, 5000);
                        } else if (f == 4) {
                                size_t c = tmt_below(&seed, 5);
                                for (size_t q = 0; q < c * 8; q++)
                                        a[al + q] = (uint8_t)tmt_rand(&seed);
                                x->v[j] = c;
                                x->var[vs++] = a + al;
                                al += c * 8;
                        } else {
                                size_t len = 1 + tmt_below(&seed, 40);
                                if (big && tmt_below(&seed, 16) == 0)
                                        len = 3000 + tmt_below(&seed, 3000);
                                int o = odd && tmt_below(&seed, 8) == 0;
                                if (odd && tmt_below(&seed, 10) == 0)
                                        len = tmt_below(&seed, 2); /* empty, or one byte */
                                text_of(a + al, len, &seed, o);
                                if (len == 1 && odd && tmt_below(&seed, 2))
                                        a[al] = '-';
                                x->v[j] = len;
                                x->var[vs++] = a + al;
                                al += len;
                        }
                }
                assert_true(al <= cap);
        }
        *arena = a;
        return r;
}

static struct tmt_buf encode(const struct tm_schema *s, const char *enc, const struct tm_rec *r,
                             size_t n)
{
        const struct tm_renc_src src = {s, NULL, 0};
        return tmn_test_encode(&src, enc, r, n);
}

/* Is record b (schema s) record a, sections aside? */
static int same(const struct tm_schema *s, const struct tm_rec *a, const struct tm_rec *b)
{
        if (a->kind != b->kind)
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

/* Bytes of r's variable values. */
static size_t var_bytes(const struct tm_schema *s, const struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[r->kind];
        size_t n = 0;
        for (unsigned j = 0; j < k->nfields; j++) {
                uint8_t t = s->field[k->field[j]].type;
                if (t >= TM_FT_TEXT)
                        n += t == TM_FT_LIST ? r->v[j] * 8 : r->v[j];
        }
        return n;
}

/* The file f read through decode_batch with batches of cap records and
 * an arena of arena bytes (0: none): each batch's records are want's, in
 * order, and each batch stops exactly where the next record's values
 * would pass the arena, or at cap, or at a block's end. Returns the
 * records read (before the first -ENOSPC, when no arena). */
static size_t batches(const struct tmt_buf *f, const struct tm_schema *s, const struct tm_rec *want,
                      size_t n, size_t cap, size_t arena)
{
        void *ctx;
        struct tm_schema got;
        struct tm_rstate st;
        struct tm_err err = {0};
        int hl = tm_rcodec_native.open(f->p, f->len, "t.tmn", &ctx, &got, &st, &err);
        assert_true(hl > 0);
        struct tm_rbatch b;
        assert_int_equal(tm_rbatch_init(&b, s->nfields, cap), 0);
        if (arena)
                assert_int_equal(tm_rbatch_arena(&b, arena), 0);
        size_t pos = (size_t)hl, k = 0;
        for (;;) {
                size_t used = 0;
                ssize_t c = tm_rcodec_native.decode_batch(ctx, &st, f->p + pos, f->len - pos, 1,
                                                          pos, &used, &b, cap, &err);
                if (c == -ENOSPC && !arena)
                        break;
                assert_true(c >= 0);
                size_t bytes = 0;
                for (size_t i = 0; i < (size_t)c; i++) {
                        struct tm_rec one;
                        tm_rbatch_rec(&b, s, i, &one);
                        if (!same(s, &want[k + i], &one))
                                fail_msg("cap %zu arena %zu: batch record %zu", cap, arena, k + i);
                        bytes += var_bytes(s, &want[k + i]);
                }
                assert_true(bytes <= arena);
                /* it stopped at cap, a block's end, or where one more record's
                 * values would not fit */
                if (c > 0 && (size_t)c < cap && k + (size_t)c < n && !used)
                        assert_true(bytes + var_bytes(s, &want[k + (size_t)c]) > arena);
                k += (size_t)c;
                pos += used;
                if (c == 0 && used == 0)
                        break;
        }
        tm_rbatch_free(&b);
        tm_rcodec_native.close(ctx);
        return k;
}

static void test_batches(void **unused)
{
        (void)unused;
        struct tm_schema s;
        schema_of(&s);
        uint8_t *arena;
        size_t n = 5000;
        struct tm_rec *r = records(&s, n, 5, 1, 1, 0x1f, &arena);
        struct tmt_buf f = encode(&s, "b10", r, n);
        static const size_t caps[] = {1, 7, 256, 1024};
        for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
                assert_int_equal(batches(&f, &s, r, n, caps[i], TM_RBATCH_ARENA), n);
                assert_int_equal(batches(&f, &s, r, n, caps[i], 20000),
                                 n); /* a record: 18,032 bytes at most */
        }
        /* no arena: the records of numbers only before the first with bytes */
        size_t first = 0;
        while (var_bytes(&s, &r[first]) == 0)
                first++;
        assert_int_equal(batches(&f, &s, r, n, 256, 0), first < 256 ? first : 256);
        free(f.p);
        free(r);
        free(arena);
}

static void test_planes(void **unused)
{
        (void)unused;
        struct tm_schema s;
        memset(&s, 0, sizeof s);
        strcpy(s.name, "p");
        s.nfields = 1;
        s.nkinds = 1;
        strcpy(s.field[0].name, "t");
        s.kind[0].nfields = 1;
        struct ncol_ws *w = ncol_ws_new(&s);
        assert_non_null(w);
        struct tm_rec *r = calloc(4200, sizeof *r);
        int planes = 0;
        static const size_t ns[] = {1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4095, 4096, 4097};
        for (size_t q = 0; q < sizeof ns / sizeof *ns; q++) {
                size_t n = ns[q];
                uint64_t seed = 11 + q, t = 1ull << 40;
                /* steps of two random bytes in the middle of the word, now and
                 * then a step back: planes of zeros and two planes of noise,
                 * where varints would spread the noise over every byte */
                for (size_t i = 0; i < n; i++) {
                        t += (tmt_rand(&seed) & 0xffff) << 24;
                        r[i].v[0] = i % 97 == 5 ? t - (3ull << 24) : t;
                }
                const uint8_t *p;
                size_t len;
                uint8_t meth[1];
                assert_int_equal(ncol_block_encode(w, r, n, 3, &p, &len, meth), 0);
                planes += meth[0] == NCOL_M_PLANES;
                uint8_t *copy = malloc(len);
                memcpy(copy, p, len);
                const struct ncol_cols *c;
                struct tm_err err = {0};
                assert_int_equal(ncol_block_decode(w, copy, len, 0, &c, &err), 0);
                for (size_t i = 0; i < n; i++)
                        if (c->col[0][i] != r[i].v[0])
                                fail_msg("%zu values (method %u): value %zu", n, meth[0], i);
                free(copy);
        }
        assert_true(planes >= 8); /* the path under test was taken */
        free(r);
        ncol_ws_free(w);
}

/* tm_text_batch_lens of records r[0..n) (in batches of 256 read from the
 * file) against the lines tm_text_pline writes. */
static void lens_check(const struct tm_schema *s, const struct tm_rec *r, size_t n)
{
        struct tm_text_plan *p = calloc(1, sizeof *p);
        assert_non_null(p);
        assert_int_equal(tm_text_plan_init(p, s), 0);
        struct tmt_buf f = encode(s, "b10", r, n);
        void *ctx;
        struct tm_schema got;
        struct tm_rstate st;
        struct tm_err err = {0};
        int hl = tm_rcodec_native.open(f.p, f.len, "t.tmn", &ctx, &got, &st, &err);
        assert_true(hl > 0);
        struct tm_rbatch b;
        assert_int_equal(tm_rbatch_init(&b, s->nfields, 256), 0);
        assert_int_equal(tm_rbatch_arena(&b, TM_RBATCH_ARENA), 0);
        uint32_t len[256];
        char *line = malloc(tm_text_line_max(s, 8000) + 64);
        size_t pos = (size_t)hl, k = 0;
        for (;;) {
                size_t used = 0;
                ssize_t c = tm_rcodec_native.decode_batch(ctx, &st, f.p + pos, f.len - pos, 1, pos,
                                                          &used, &b, 256, &err);
                assert_true(c >= 0);
                tm_text_batch_lens(p, &b, len, NULL);
                for (size_t i = 0; i < (size_t)c; i++) {
                        size_t want = tm_text_pline(line, p, &r[k + i]);
                        if (len[i] + p->kind[r[k + i].kind].head_len != want)
                                fail_msg("record %zu: length %u + %u, its line %zu bytes", k + i,
                                         len[i], p->kind[r[k + i].kind].head_len, want);
                        assert_int_equal(tm_text_line_len(p, &r[k + i]), want);
                }
                k += (size_t)c;
                pos += used;
                if (c == 0 && used == 0)
                        break;
        }
        assert_int_equal(k, n);
        free(line);
        tm_rbatch_free(&b);
        tm_rcodec_native.close(ctx);
        free(f.p);
        free(p);
}

static void test_lengths(void **unused)
{
        (void)unused;
        struct tm_schema s;
        schema_of(&s);
        /* odd: batches with bytes to escape; plain: batches all plain
         * (their lengths taken without reading the text; no lists, whose
         * bytes are of any value), lone "-"s and empty values among them */
        for (int odd = 0; odd < 2; odd++) {
                uint8_t *arena;
                size_t n = 3000;
                struct tm_rec *r =
                    records(&s, n, 17 + (uint64_t)odd, 0, odd, odd ? 0x1f : 0x07, &arena);
                if (!odd)
                        for (size_t i = 0; i < n; i += 5)
                                if (r[i].kind == 1 && r[i].v[1] > 1) {
                                        r[i].var[0] = (const uint8_t *)"-";
                                        r[i].v[1] = i % 2; /* a lone "-", or empty */
                                }
                lens_check(&s, r, n);
                free(r);
                free(arena);
        }
        /* each byte value alone, and among plain words */
        uint8_t val[256 * 24];
        struct tm_rec r[512];
        memset(r, 0, sizeof r);
        for (unsigned c = 0; c < 256; c++) {
                for (unsigned h = 0; h < 2; h++) {
                        struct tm_rec *x = &r[2 * c + h];
                        uint8_t *v = val + (2 * c + h) * 12;
                        size_t len = h ? 1 + c % 11 : 1;
                        memset(v, 'a', len);
                        v[h ? c % len : 0] = (uint8_t)c;
                        x->kind = 1;
                        x->v[0] = c;
                        x->v[1] = len;
                        x->var[0] = v;
                }
        }
        lens_check(&s, r, 512);
}

/* View v of the open trace t: n bytes at off into buf from a fresh
 * open (its cursor placed by skipping); the bytes read. */
static size_t read_at(struct tm_trace *t, const char *v, uint64_t off, uint8_t *buf, size_t n)
{
        struct tm_err err = {0};
        struct tm_vfile *f;
        if (tm_vfile_open(t, v, &f, &err) != 0)
                fail_msg("%s: %s", v, err.msg);
        size_t got = 0;
        while (got < n) {
                ssize_t r = tm_vfile_pread(f, buf + got, n - got, off + got, &err);
                if (r < 0)
                        fail_msg("%s at %llu: %s", v, (unsigned long long)(off + got), err.msg);
                if (r == 0)
                        break;
                got += (size_t)r;
        }
        tm_vfile_close(f);
        return got;
}

static void test_views(void **state)
{
        (void)state;
        struct tm_schema s;
        schema_of(&s);
        uint8_t *arena;
        size_t n = 20000;
        struct tm_rec *r = records(&s, n, 23, 1, 1, 0x1f, &arena);
        struct tmt_buf f = encode(&s, "b12", r, n);
        char dir[256], path[300];
        assert_int_equal(tmt_tmpdir_make("ncol_skip", dir, sizeof dir), 0);
        snprintf(path, sizeof path, "%s/t.tmn", dir);
        assert_int_equal(tmt_spit(path, f.p, f.len), 0);
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t = NULL;
        struct tm_err err = {0};
        if (tm_trace_open(path, &o, &t, &err) != 0)
                fail_msg("%s: %s", path, err.msg);
        static const char *views[] = {"ascii", "binary", "streams/call", "streams/blob"};
        uint64_t seed = 99;
        uint8_t *buf = malloc(5000);
        for (size_t v = 0; v < sizeof views / sizeof *views; v++) {
                struct tmt_buf whole = {0};
                uint8_t chunk[65536];
                size_t at = 0, got;
                while ((got = read_at(t, views[v], at, chunk, sizeof chunk)) > 0) {
                        assert_int_equal(tmt_put(&whole, chunk, got), 0);
                        at += got;
                }
                assert_true(whole.len > 100000);
                for (int i = 0; i < 150; i++) {
                        uint64_t off = i == 0 ? whole.len - 1 : tmt_below(&seed, whole.len);
                        size_t want = whole.len - off < 5000 ? whole.len - off : 5000;
                        got = read_at(t, views[v], off, buf, 5000);
                        if (got != want || memcmp(buf, whole.p + off, want) != 0)
                                fail_msg("%s at %llu: not the bytes read from its start", views[v],
                                         (unsigned long long)off);
                }
                free(whole.p);
        }
        free(buf);
        tm_trace_close(t);
        assert_int_equal(tmt_tmpdir_remove(dir), 0);
        free(f.p);
        free(r);
        free(arena);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_batches),
            cmocka_unit_test(test_planes),
            cmocka_unit_test(test_lengths),
            cmocka_unit_test(test_views),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
