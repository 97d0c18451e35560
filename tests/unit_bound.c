/* Bound formats (codecs/metatf/bound.h, docs/formats/bound.md): a
 * fixed-layout format described by data and a DTD, with no C of its own.
 *
 * The format: an 8-byte header ("TF3L" or "TF3B", then 4 bytes the
 * decoder skips), then records of three fields with no tag, u32 a, u64 b,
 * u16 c (14 bytes), little- or big-endian. The test writes the bytes
 * itself, plain and zstd (the container writer), and reads them back
 * through the registry (tm_rcodec_probe, the row's open and decode) and
 * through the views (tm_trace_open: ascii, fields/, the view list). Also:
 * a truncated last record, files failing the probe, the size rule, the
 * description file's errors, tag.width = 0's rules in the DTD compiler. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../codecs/containers/container.h"
#include "../codecs/metatf/bound.h"
#include "../codecs/metatf/dtd.h"
#include "../codecs/metatf/metatf.h"
#include "../codecs/metatf/metatf_impl.h"
#include "../codecs/record/record.h"
#include "../codecs/registry.h"
#include "../include/tracemount.h"
#include "support/tmtest.h"

#define HDR 8
#define REC 14

static const char tf3_dtd[] = "// three fields, no tag\n"
                              "tag.width = 0;\n"
                              "tf3 : (a, b, c) {\n"
                              "    tag.value = 0;\n"
                              "}\n"
                              "a.width = 4; a.interpretation = none;\n"
                              "b.width = 8; b.interpretation = none; b.display = hex;\n"
                              "c.width = 2; c.interpretation = none;\n";

struct vals {
        uint32_t a;
        uint64_t b;
        uint16_t c;
};

static void put(uint8_t *p, uint64_t v, unsigned w, int big)
{
        for (unsigned i = 0; i < w; i++)
                p[big ? w - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/* The raw bytes of n records of random values into *v (malloc'd). */
static uint8_t *make_raw(const char *magic, int big, size_t n, uint64_t seed, struct vals **v,
                         size_t *len)
{
        *len = HDR + n * REC;
        uint8_t *raw = malloc(*len);
        *v = malloc((n ? n : 1) * sizeof **v);
        assert_non_null(raw);
        assert_non_null(*v);
        memcpy(raw, magic, 4);
        put(raw + 4, 0x01020304, 4, big); /* skipped: the header */
        for (size_t i = 0; i < n; i++) {
                struct vals *x = &(*v)[i];
                uint64_t r = tmt_rand(&seed);
                x->a = (uint32_t)r;
                x->b = tmt_rand(&seed) >> (r % 64);
                x->c = (uint16_t)(r >> 40);
                uint8_t *p = raw + HDR + i * REC;
                put(p, x->a, 4, big);
                put(p + 4, x->b, 8, big);
                put(p + 12, x->c, 2, big);
        }
        return raw;
}

static void write_archive(const char *path, enum tm_cont_kind kind, const uint8_t *raw, size_t len)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        struct tm_cwriter_opts o = {.frame_size = 4096};
        struct tm_cwriter *w;
        struct tm_err err = {0};
        assert_int_equal(tm_cwriter_open(fd, path, kind, &o, &w, &err), 0);
        for (size_t at = 0; at < len; at += 1000) { /* record boundaries: every 7 records */
                size_t n = len - at < 1000 ? len - at : 1000;
                assert_int_equal(tm_cwriter_write(w, raw + at, n, &err), 0);
        }
        assert_int_equal(tm_cwriter_close(w, &err), 0);
        close(fd);
}

/* Decode raw[0..len) through codec c in pieces of piece bytes (at most
 * cap records a call), as the views do: the records into out (room for
 * max). Returns the count or the negative errno (err filled). */
static ssize_t decode_all(const struct tm_rcodec *c, const uint8_t *raw, size_t len, size_t piece,
                          size_t cap, struct tm_rec *out, size_t max, struct tm_err *err)
{
        void *ctx;
        struct tm_schema *s = malloc(sizeof *s);
        struct tm_rstate *st = malloc(sizeof *st);
        assert_non_null(s);
        assert_non_null(st);
        size_t head = len < TM_RHEAD_MIN ? len : TM_RHEAD_MIN;
        int hl = c->open(raw, head, "/nowhere/x.tf3", &ctx, s, st, err);
        if (hl < 0) {
                free(s);
                free(st);
                return hl;
        }
        assert_int_equal(hl, HDR);
        assert_int_equal(s->nkinds, 1);
        assert_int_equal(s->nfields, 3);
        assert_string_equal(s->field[0].name, "a");
        assert_string_equal(s->field[1].name, "b");
        assert_string_equal(s->field[2].name, "c");
        assert_int_equal(s->field[1].show, TM_SHOW_HEX);
        /* the window [pos, end) grows by piece while a record does not fit */
        size_t pos = (size_t)hl, n = 0, end = pos;
        ssize_t ret = 0;
        for (;;) {
                end = len - end > piece ? end + piece : len;
                size_t used = 0;
                ret = c->decode(ctx, st, raw + pos, end - pos, end == len, pos, &used, out + n,
                                max - n < cap ? max - n : cap, err);
                if (ret < 0)
                        break;
                n += (size_t)ret;
                pos += used;
                if (end == len && used == 0 && ret == 0)
                        break;
                if (used)
                        end = pos;
        }
        c->close(ctx);
        free(s);
        free(st);
        return ret < 0 ? ret : (ssize_t)n;
}

static void check_vals(const struct tm_rec *r, const struct vals *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(r[i].kind, 0);
                assert_int_equal(r[i].v[0], v[i].a);
                assert_int_equal(r[i].v[1], v[i].b);
                assert_int_equal(r[i].v[2], v[i].c);
        }
}

static const struct tm_rcodec *tf3(void)
{
        const struct tm_rcodec *c = tm_rcodec_by_name("tf3");
        assert_non_null(c);
        return c;
}

/* Rows, from description files named by TM_BOUND_FORMATS before the
 * registry is first used (it is built then, once): tf3, tf3be and
 * tf3size by the size rule alone. */
static int setup(void **state)
{
        if (tmt_group_setup(state))
                return -1;
        setenv("TM_DTD_PATH", tmt_dir, 1);
        if (tmt_spit(tmt_path("tf3.dtd"), tf3_dtd, strlen(tf3_dtd)))
                return -1;
        static const char fmt[] = "# the test format of issue 27\n"
                                  "name = tf3;\n"
                                  "dtd = tf3.dtd;   # in TM_DTD_PATH\n"
                                  "magic = \"TF3L\";\n"
                                  "offset = 0;\n"
                                  "\n"
                                  "byteorder = little;\n"
                                  "header = 8;\n";
        if (tmt_spit(tmt_path("tf3.fmt"), fmt, strlen(fmt)))
                return -1;
        static const char be[] = "name = tf3be;\ndtd = tf3.dtd;\nmagic = \"TF3B\";\n"
                                 "byteorder = big;\nheader = 8;\n";
        static const char sz[] = "name = tf3size;\ndtd = tf3.dtd;\nsize = records;\n"
                                 "byteorder = little;\nheader = 8;\n";
        if (tmt_spit(tmt_path("tf3be.fmt"), be, strlen(be)) ||
            tmt_spit(tmt_path("tf3size.fmt"), sz, strlen(sz)))
                return -1;
        char list[3 * 1024];
        snprintf(list, sizeof list, "%s:%s:", tmt_path("tf3.fmt"), tmt_path("tf3be.fmt"));
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s", tmt_path("tf3size.fmt"));
        setenv("TM_BOUND_FORMATS", list, 1);
        return tm_rcodec_by_name("tf3size") ? 0 : -1;
}

static void roundtrip(const char *magic, int big, const char *codec, enum tm_cont_kind kind,
                      size_t n, uint64_t seed)
{
        struct vals *v;
        size_t len;
        uint8_t *raw = make_raw(magic, big, n, seed, &v, &len);
        const char *path = tmt_path(kind == TM_CONT_ZSTD ? "t.tf3.zst" : "t.tf3");
        write_archive(path, kind, raw, len);
        struct tm_err err = {0};
        size_t rlen;
        uint8_t *back = tmt_raw_of(path, 0, &rlen, &err);
        assert_non_null(back);
        assert_int_equal(rlen, len);
        const struct tm_rcodec *c = tm_rcodec_probe(back, rlen < 4096 ? rlen : 4096);
        assert_non_null(c);
        assert_string_equal(c->name, codec);
        struct tm_rec *out = malloc((n + 1) * sizeof *out);
        assert_non_null(out);
        static const size_t pieces[] = {1, 13, 14, 15, 100, 4096, 1 << 20};
        uint64_t s = seed;
        for (unsigned i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
                size_t cap = 1 + tmt_below(&s, 50);
                ssize_t got = decode_all(c, back, rlen, pieces[i], cap, out, n + 1, &err);
                if (got < 0)
                        fail_msg("%s", err.msg);
                assert_int_equal(got, n);
                check_vals(out, v, n);
        }
        free(out);
        free(back);
        free(raw);
        free(v);
}

static void test_plain_le(void **state)
{
        (void)state;
        roundtrip("TF3L", 0, "tf3", TM_CONT_PLAIN, 1000, 1);
}

static void test_zstd_le(void **state)
{
        (void)state;
        roundtrip("TF3L", 0, "tf3", TM_CONT_ZSTD, 5000, 2);
}

static void test_plain_be(void **state)
{
        (void)state;
        roundtrip("TF3B", 1, "tf3be", TM_CONT_PLAIN, 700, 3);
}

static void test_zstd_be(void **state)
{
        (void)state;
        roundtrip("TF3B", 1, "tf3be", TM_CONT_ZSTD, 3000, 4);
}

/* A header and no record: the magic says what it is; zero records. */
static void test_empty(void **state)
{
        (void)state;
        struct vals *v;
        size_t len;
        uint8_t *raw = make_raw("TF3L", 0, 0, 5, &v, &len);
        assert_ptr_equal(tm_rcodec_probe(raw, len), tf3());
        struct tm_err err = {0};
        struct tm_rec out[1];
        assert_int_equal(decode_all(tf3(), raw, len, 100, 1, out, 1, &err), 0);
        free(raw);
        free(v);
}

/* The last record cut: -EIO naming its raw offset, after the records
 * before it; a header cut: -EIO at open. */
static void test_truncated(void **state)
{
        (void)state;
        struct vals *v;
        size_t len;
        uint8_t *raw = make_raw("TF3L", 0, 100, 6, &v, &len);
        struct tm_rec out[101];
        static const size_t cut[] = {1, 7, 13};
        for (unsigned i = 0; i < 3; i++) {
                struct tm_err err = {0};
                ssize_t got = decode_all(tf3(), raw, len - cut[i], 64, 10, out, 101, &err);
                assert_int_equal(got, -EIO);
                char want[64];
                snprintf(want, sizeof want, "raw offset %d: truncated record", HDR + 99 * REC);
                assert_non_null(strstr(err.msg, want));
        }
        struct tm_err err = {0};
        void *ctx;
        struct tm_schema s;
        struct tm_rstate st;
        assert_int_equal(tf3()->open(raw, 6, "x", &ctx, &s, &st, &err), -EIO);
        assert_non_null(strstr(err.msg, "raw offset 6: truncated header"));
        free(raw);
        free(v);
}

/* Files failing the probe are not taken: another magic, the magic
 * elsewhere, too short; by the size rule alone, a size that is not a
 * header and whole records. */
static void test_probe(void **state)
{
        (void)state;
        struct vals *v;
        size_t len;
        uint8_t *raw = make_raw("TF3X", 0, 20, 7, &v, &len);
        const struct tm_rcodec *sz = tm_rcodec_by_name("tf3size");
        assert_non_null(sz);
        /* no magic matches: the size rule takes it, nothing else */
        assert_ptr_equal(tm_rcodec_probe(raw, len), sz);
        assert_null(tm_rcodec_probe(raw, len - 1));
        assert_null(tm_rcodec_probe(raw, HDR)); /* no record, no magic: not taken */
        assert_null(tm_rcodec_probe(raw, 3));
        assert_int_equal(tf3()->probe(raw, len), 0);
        memcpy(raw, "TF3L", 4);
        assert_ptr_equal(tm_rcodec_probe(raw, len), tf3());
        assert_ptr_equal(tm_rcodec_probe(raw, len - 1), tf3()); /* the decoder finds the cut */
        assert_int_equal(tf3()->probe(raw, 3), 0);
        memmove(raw + 1, raw, 4);
        assert_int_equal(tf3()->probe(raw, len), 0);
        /* the registry's own formats keep their probes */
        assert_ptr_equal(tm_rcodec_probe((const uint8_t *)MTF_MAGIC "\2\1", 6), &tm_rcodec_metatf);
        free(raw);
        free(v);
}

/* The bound rows are registered after the rows of C, in the order of
 * TM_BOUND_FORMATS; they bid below every row of C, a magic over the
 * size rule. A second row of a taken name is refused. */
static void test_order(void **state)
{
        (void)state;
        const struct tm_registry *r = tm_registry();
        static const char *const bound[] = {"tf3", "tf3be", "tf3size"};
        unsigned first = r->n - 3;
        for (unsigned i = 0; i < 3; i++)
                assert_string_equal(r->row[first + i]->name, bound[i]);
        assert_null(r->row[r->n]);
        for (unsigned i = 0; i < first; i++)
                assert_null(strstr(r->row[i]->name, "tf3"));
        struct vals *v;
        size_t len;
        uint8_t *raw = make_raw("TF3L", 0, 20, 7, &v, &len);
        assert_int_equal(r->row[first]->probe(raw, len), TM_BID_BOUND_MAGIC);
        assert_int_equal(r->row[first + 2]->probe(raw, len), TM_BID_SIZE);
        int bid = 0;
        assert_ptr_equal(tm_registry_probe(r, raw, len, &bid), r->row[first]);
        assert_int_equal(bid, TM_BID_BOUND_MAGIC);
        free(raw);
        free(v);
        struct tm_registry *more = malloc(sizeof *more);
        assert_non_null(more);
        *more = *r;
        struct tm_err err = {0};
        struct tm_bound again = {
            .name = "tf3", .dtd = "tf3.dtd", .size_rule = 1, .byteorder = MTF_LE};
        assert_int_equal(tm_registry_add_bound(more, &again, &err), -EEXIST);
        assert_non_null(strstr(err.msg, "tf3"));
        assert_int_equal(more->n, r->n);
        free(more);
}

static char *read_view(struct tm_trace *t, const char *view, size_t *len)
{
        struct tm_vfile *f;
        struct tm_err err = {0};
        if (tm_vfile_open(t, view, &f, &err) < 0)
                fail_msg("%s: %s", view, err.msg);
        size_t cap = 1 << 16, n = 0;
        char *b = malloc(cap + 1);
        for (;;) {
                if (n == cap)
                        assert_non_null(b = realloc(b, (cap *= 2) + 1));
                ssize_t got = tm_vfile_pread(f, b + n, cap - n, n, &err);
                if (got < 0)
                        fail_msg("%s: %s", view, err.msg);
                if (got == 0)
                        break;
                n += (size_t)got;
        }
        tm_vfile_close(f);
        b[n] = 0;
        *len = n;
        return b;
}

/* Through the views, as the daemon shows them: ascii, binary, fields/,
 * stats and schema are there, ascii and fields/a hold the values. */
static void test_views(void **state)
{
        (void)state;
        struct vals *v;
        size_t len, n = 300;
        uint8_t *raw = make_raw("TF3L", 0, n, 8, &v, &len);
        const char *path = tmt_path("v.tf3.zst");
        write_archive(path, TM_CONT_ZSTD, raw, len);
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tm_trace_open(path, &o, &t, &err) < 0)
                fail_msg("%s", err.msg);
        assert_string_equal(tm_trace_codec(t), "tf3");
        static const char *const want[] = {"ascii",    "binary",   "stats",   "schema",
                                           "fields/a", "fields/b", "fields/c"};
        for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
                int found = 0;
                for (const char *const *vw = tm_trace_views(t); *vw; vw++)
                        found |= strcmp(*vw, want[i]) == 0;
                if (!found)
                        fail_msg("no view %s", want[i]);
        }
        size_t alen, flen, blen;
        char *ascii = read_view(t, "ascii", &alen);
        char *fa = read_view(t, "fields/a", &flen);
        char *bin = read_view(t, "binary", &blen);
        char *line = malloc(n * 64 + 1), *fline = malloc(n * 16 + 1);
        size_t l = 0, fl = 0;
        for (size_t i = 0; i < n; i++) {
                l += (size_t)sprintf(line + l, "tf3 %u 0x%llx %u\n", v[i].a,
                                     (unsigned long long)v[i].b, v[i].c);
                fl += (size_t)sprintf(fline + fl, "%u\n", v[i].a);
        }
        assert_string_equal(ascii, line);
        assert_string_equal(fa, fline);
        assert_true(blen > 0 && blen % n == 0);
        free(ascii);
        free(fa);
        free(bin);
        free(line);
        free(fline);
        tm_trace_close(t);
        free(raw);
        free(v);
}

/* Description files: every error names the file and line, or what the
 * row lacks; nothing is added. */
static void test_description_errors(void **state)
{
        (void)state;
        static const struct {
                const char *text, *msg;
        } bad[] = {
            {"name = x;\ndtd = tf3.dtd\n", "d.fmt:2: expected ';'"},
            {"name = x;\ncolour = red;\n", "d.fmt:2: unknown key"},
            {"name = x;\nname = y;\n", "d.fmt:2: set twice: name"},
            {"magic = TF3;\n", "d.fmt:1: magic: a \"string\""},
            {"magic = 0x5446F;\n", "d.fmt:1: magic: an odd number"},
            {"magic = \"a\\qb\";\n", "d.fmt:1: magic: escapes"},
            {"magic = \"\";\n", "d.fmt:1: magic: empty"},
            {"header = 2000000;\n", "d.fmt:1: not a number in range"},
            {"header = -1;\n", "d.fmt:1: not a number"},
            {"size = bytes;\n", "d.fmt:1: size: the only rule"},
            {"byteorder = middle;\n", "d.fmt:1: byteorder: little or big"},
            {"just words\n", "d.fmt:1: expected ';'"},
            {"dtd = tf3.dtd;\nbyteorder = big;\nsize = records;\n", "d.fmt: no 'name"},
            {"name = x;\ndtd = tf3.dtd;\nbyteorder = big;\n", "d.fmt: no probe"},
            {"name = x;\ndtd = tf3.dtd;\nbyteorder = big;\noffset = 3;\nsize = records;\n",
             "an offset with no magic"},
        };
        for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                struct tm_bound b;
                struct tm_err err = {0};
                assert_int_equal(
                    tm_bound_parse("d.fmt", bad[i].text, strlen(bad[i].text), &b, &err), -EINVAL);
                if (!strstr(err.msg, bad[i].msg))
                        fail_msg("case %u: '%s' lacks '%s'", i, err.msg, bad[i].msg);
        }
        /* a well-formed file whose row cannot be made */
        static const struct {
                const char *text, *msg;
        } rows[] = {
            {"name = a b;\ndtd = tf3.dtd;\nbyteorder = big;\nsize = records;\n", "its name"},
            {"name = nodtd;\ndtd = none.dtd;\nbyteorder = big;\nsize = records;\n",
             "DTD 'none.dtd' not found"},
            {"name = far;\ndtd = tf3.dtd;\nbyteorder = big;\nmagic = \"x\";\noffset = 4096;\n",
             "first 4096 bytes"},
            {"name = metatf;\ndtd = tf3.dtd;\nbyteorder = big;\nsize = records;\n",
             "a codec of that name exists"},
            {"name = din;\ndtd = tf3.dtd;\nbyteorder = big;\nsize = records;\n",
             "a codec of that name exists"},
            {"name = vary;\ndtd = vary.dtd;\nbyteorder = big;\nsize = records;\n",
             "records of one fixed size"},
        };
        static const char vary[] = "tag.width = 0;\nv : (n, d) { tag.value = 0; }\n"
                                   "n.width = 1; n.interpretation = none;\n"
                                   "d.width = n.value; d.interpretation = none;\n";
        assert_int_equal(tmt_spit(tmt_path("vary.dtd"), vary, strlen(vary)), 0);
        struct tm_registry *reg = malloc(sizeof *reg);
        assert_non_null(reg);
        *reg = *tm_registry();
        size_t before = reg->n;
        for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                struct tm_err err = {0};
                assert_int_equal(tmt_spit(tmt_path("r.fmt"), rows[i].text, strlen(rows[i].text)),
                                 0);
                assert_true(tm_registry_add_file(reg, tmt_path("r.fmt"), &err) < 0);
                if (!strstr(err.msg, rows[i].msg) || !strstr(err.msg, "r.fmt"))
                        fail_msg("row %u: '%s' lacks '%s' or the file", i, err.msg, rows[i].msg);
        }
        assert_int_equal(reg->n, before);
        assert_null(reg->row[reg->n]);
        /* a list: empty names skipped, each failure reported, loading goes on */
        struct tm_err err = {0};
        char list[1024];
        snprintf(list, sizeof list, "::%s:%s", tmt_path("missing.fmt"), tmt_path("r.fmt"));
        assert_int_equal(tm_registry_add_list(reg, list, NULL, NULL), 2);
        assert_int_equal(reg->n, before);
        struct tm_bound b;
        assert_int_equal(tm_bound_read_file(tmt_path("missing.fmt"), &b, &err), -ENOENT);
        free(reg);
}

/* tag.width = 0 in the DTD: one kind with tag value 0, no sections, a
 * record that stores something. */
static void test_untagged_dtd(void **state)
{
        (void)state;
        static const struct {
                const char *text, *msg;
        } bad[] = {
            {"tag.width = 0; r : (a) { tag.value = 1; } a.width = 1; a.interpretation = none;",
             "does not fit tag.width"},
            {"tag.width = 0; r : (a) { tag.value = 0; } q : (a) { tag.value = 0; }\n"
             "a.width = 1; a.interpretation = none;",
             "has the tag of"},
            {"tag.width = 0; a.width = 1; a.interpretation = none;", "exactly one record"},
            {"tag.width = 0; r : (a) { tag.value = 0; } a.width = 0; a.interpretation = none;",
             "stores no byte"},
            {"tag.width = 0; r : (a) { tag.value = 0; } a.width = 4; a.interpretation = default 7;",
             "stores no byte"},
            {"tag.width = 0; a.width = 1; a.interpretation = none;\n"
             "section s 5 { q : (a) { tag.value = 0; } }",
             "no record can enter it"},
            {"tag.width = 5;", "tag.width must be 0..4"},
        };
        struct mtf_dtd *d = malloc(sizeof *d);
        struct mtf_layout *l = malloc(sizeof *l);
        assert_non_null(d);
        assert_non_null(l);
        for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                struct tm_err err = {0};
                int ret = mtf_dtd_parse(d, "u.dtd", bad[i].text, strlen(bad[i].text), &err);
                if (ret == 0)
                        ret = mtf_dtd_compile(d, l, &err);
                assert_true(ret < 0);
                if (!strstr(err.msg, bad[i].msg) || strncmp(err.msg, "u.dtd:", 6) != 0)
                        fail_msg("case %u: '%s' lacks '%s'", i, err.msg, bad[i].msg);
        }
        /* the good one: one kind, no comment/section/metadata records */
        struct tm_err err = {0};
        assert_int_equal(mtf_dtd_parse(d, "tf3.dtd", tf3_dtd, strlen(tf3_dtd), &err), 0);
        assert_int_equal(mtf_dtd_compile(d, l, &err), 0);
        assert_int_equal(l->tag_width, 0);
        assert_int_equal(l->nkinds, 1);
        assert_string_equal(l->kind[0].name, "tf3");
        free(d);
        free(l);
}

/* A hostile checkpoint whose widths are all 0 (state_ok allows 0..8)
 * cannot make the untagged decoder read records of no bytes forever. */
static void test_zero_width_state(void **state)
{
        (void)state;
        struct vals *v;
        size_t len;
        uint8_t *raw = make_raw("TF3L", 0, 3, 9, &v, &len);
        void *ctx;
        struct tm_schema s;
        struct tm_rstate st;
        struct tm_err err = {0};
        assert_int_equal(tf3()->open(raw, len, "x", &ctx, &s, &st, &err), HDR);
        struct mtf_state *ms = (struct mtf_state *)st.b;
        assert_int_equal(ms->ncells, 3);
        for (unsigned c = 0; c < ms->ncells; c++)
                ms->width[c] = 0;
        assert_int_equal(tf3()->state_ok(ctx, &st), 1);
        struct tm_rec out[4];
        size_t used;
        ssize_t got = tf3()->decode(ctx, &st, raw + HDR, len - HDR, 1, HDR, &used, out, 4, &err);
        assert_int_equal(got, -EIO);
        assert_non_null(strstr(err.msg, "raw offset 8: a record of no bytes"));
        tf3()->close(ctx);
        free(raw);
        free(v);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_plain_le),     cmocka_unit_test(test_zstd_le),
            cmocka_unit_test(test_plain_be),     cmocka_unit_test(test_zstd_be),
            cmocka_unit_test(test_empty),        cmocka_unit_test(test_truncated),
            cmocka_unit_test(test_probe),        cmocka_unit_test(test_order),
            cmocka_unit_test(test_views),        cmocka_unit_test(test_description_errors),
            cmocka_unit_test(test_untagged_dtd), cmocka_unit_test(test_zero_width_state),
        };
        return cmocka_run_group_tests(tests, setup, tmt_group_teardown);
}
