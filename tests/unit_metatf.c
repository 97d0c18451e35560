/* Meta-TF traces built byte by byte here and decoded by tm_rcodec_metatf:
 * every interpretation, metadata records changing widths and
 * interpretations mid-trace, vfield, comments, repeats, data sections
 * read by sectionOffset / sectionStride, both byte orders, the Appendix C
 * HATF DTD on a trace of every HATF record, where the DTD is found,
 * checkpoints, truncated and corrupt traces; delta and stride adding to
 * the field's previous value across record kinds (and per record with
 * previous = record, hatf10.dtd's files), one field name used two ways
 * refused at the DTD's line and column, display decided by the DTD. Every trace is decoded in
 * several piece sizes and record caps, and each must give the records the
 * test wrote. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "codecs/metatf/metatf.h"
#include "codecs/metatf/metatf_impl.h"

static const struct tm_rcodec *const C = &tm_rcodec_metatf;
static char dir[64];     /* a temporary directory for DTDs */
static char archive[96]; /* dir/trace.mtf: the archive's path for open() */

/* ---- writing traces ---- */

struct dsec {
        uint32_t number;
        const uint8_t *bytes;
        uint32_t size;
};

struct tf {
        uint8_t b[16384];
        size_t n;
        unsigned bo;
        struct mtf_header h;
};

static void put(struct tf *t, uint64_t v, unsigned w)
{
        assert_true(t->n + w <= sizeof t->b);
        mtf_put(t->b + t->n, v, w, t->bo);
        t->n += w;
}

static void put_bytes(struct tf *t, const void *p, size_t n)
{
        memcpy(t->b + t->n, p, n);
        t->n += n;
}

/* The header naming dtd, the data sections, and a record section 1 entry
 * (informational) at start. */
static void begin(struct tf *t, unsigned bo, const char *dtd, const struct dsec *ds, unsigned nds)
{
        memset(t, 0, sizeof *t);
        t->bo = bo;
        struct mtf_header *h = &t->h;
        h->class = 2;
        h->byteorder = (uint8_t)bo;
        h->dtdlength = (uint8_t)strlen(dtd);
        memcpy(h->dtd, dtd, strlen(dtd));
        h->nsections = nds + 1;
        size_t off = MTF_FIXED_HEADER + h->dtdlength + h->nsections * MTF_SHDR_SIZE;
        for (unsigned i = 0; i < nds; i++) {
                h->section[i] = (struct mtf_shdr){ds[i].number, (uint32_t)off, ds[i].size};
                off += ds[i].size;
        }
        h->start = (uint32_t)off;
        h->section[nds] = (struct mtf_shdr){1, (uint32_t)off, 0};
        struct tm_err err = {0};
        int n = mtf_header_write(h, t->b, sizeof t->b, &err);
        if (n < 0)
                fail_msg("%s", err.msg);
        t->n = (size_t)n;
        for (unsigned i = 0; i < nds; i++)
                put_bytes(t, ds[i].bytes, ds[i].size);
        assert_int_equal(t->n, h->start);
}

/* Items of width w in byte order bo: a data section's bytes. */
static uint32_t items(uint8_t *out, const uint64_t *v, unsigned n, unsigned w, unsigned bo)
{
        for (unsigned i = 0; i < n; i++)
                mtf_put(out + i * w, v[i], w, bo);
        return n * w;
}

static void write_file(const char *name, const char *text)
{
        char path[160];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

/* metadata (tag 3): record tag, field position, property, values (4 bytes) */
static void put_meta(struct tf *t, unsigned tw, unsigned tag, unsigned field, unsigned prop, int nv,
                     uint64_t v0, uint64_t v1)
{
        put(t, 3, tw);
        put(t, tag, tw);
        put(t, field, 1);
        put(t, prop, 1);
        if (nv > 0)
                put(t, v0, 4);
        if (nv > 1)
                put(t, v1, 4);
}

/* ---- decoding and comparing ---- */

struct want {
        const char *kind;
        unsigned section;
        uint64_t v[TM_KIND_FIELDS_MAX];
        const char *bytes[TM_REC_VAR_MAX];    /* text and bytes fields */
        const uint64_t *list[TM_REC_VAR_MAX]; /* list fields */
};

static void check_rec(const struct tm_schema *s, const struct tm_rec *r, const struct want *w,
                      size_t idx)
{
        if (r->kind >= s->nkinds || strcmp(s->kind[r->kind].name, w->kind) != 0)
                fail_msg("record %zu: kind %u (%s), want %s", idx, r->kind,
                         r->kind < s->nkinds ? s->kind[r->kind].name : "?", w->kind);
        if (r->section != w->section) fail_msg("record %zu: section %u, want %u", idx, r->section, w->section);
        const struct tm_kind *k = &s->kind[r->kind];
        unsigned slot = 0;
        for (unsigned i = 0; i < k->nfields; i++) {
                const struct tm_field *f = &s->field[k->field[i]];
                if (r->v[i] != w->v[i])
                        fail_msg("record %zu (%s): field %s is %llu, want %llu", idx, w->kind,
                                 f->name, (unsigned long long)r->v[i], (unsigned long long)w->v[i]);
                if (!tm_field_is_var(f))
                        continue;
                if (f->type == TM_FT_LIST) {
                        for (uint64_t j = 0; j < r->v[i]; j++) {
                                uint64_t x = 0;
                                for (unsigned b = 0; b < 8; b++)
                                        x |= (uint64_t)r->var[slot][j * 8 + b] << (8 * b);
                                if (x != w->list[slot][j])
                                        fail_msg("record %zu: %s[%llu] is %llu, want %llu", idx,
                                                 f->name, (unsigned long long)j,
                                                 (unsigned long long)x,
                                                 (unsigned long long)w->list[slot][j]);
                        }
                } else if (r->v[i] && memcmp(r->var[slot], w->bytes[slot], r->v[i]) != 0) {
                        fail_msg("record %zu: %s differs", idx, f->name);
                }
                slot++;
        }
}

/* Open t and decode it all, piece bytes at a time beyond what is left
 * over (0: all at once), at most cap records a call; check each record
 * against want as it comes (list values live until the next call).
 * Returns the record count or a negative errno (err filled). */
static ssize_t decode_all(const uint8_t *raw, size_t len, const char *path, size_t piece,
                          size_t cap, const struct want *want, size_t nwant, struct tm_schema *s,
                          struct tm_err *err)
{
        void *ctx;
        struct tm_rstate st;
        struct tm_rec out[64];
        int start = C->open(raw, len, path, &ctx, s, &st, err);
        if (start < 0)
                return start;
        size_t pos = (size_t)start, got = 0;
        size_t window = piece ? (pos + piece < len ? pos + piece : len) : len;
        ssize_t ret = 0;
        while (pos < len) {
                size_t used;
                ssize_t n = C->decode(ctx, &st, raw + pos, window - pos, window == len, pos, &used,
                                      out, cap, err);
                if (n < 0) {
                        ret = n;
                        break;
                }
                assert_true(C->state_ok(ctx, &st)); /* a state a checkpoint may hold */
                for (ssize_t i = 0; i < n; i++, got++)
                        if (want && got < nwant)
                                check_rec(s, &out[i], &want[got], got);
                pos += used;
                if (n == 0 && used == 0 && window == len)
                        fail_msg("stuck at %zu", pos);
                if ((n == 0 && used == 0) || window <= pos)
                        window = window + (piece ? piece : len) < len ? window + piece : len;
        }
        C->close(ctx);
        return ret < 0 ? ret : (ssize_t)got;
}

/* Decode in every piece size and cap; all give want. */
static void expect(const struct tf *t, const char *path, const struct want *want, size_t n,
                   struct tm_schema *s)
{
        static const size_t pieces[] = {0, 1, 2, 3, 5, 13, 64};
        for (size_t p = 0; p < sizeof pieces / sizeof pieces[0]; p++) {
                for (size_t cap = 1; cap <= 64; cap += 63) {
                        struct tm_err err = {0};
                        ssize_t m = decode_all(t->b, t->n, path, pieces[p], cap, want, n, s, &err);
                        if (m < 0)
                                fail_msg("piece %zu cap %zu: %s", pieces[p], cap, err.msg);
                        assert_int_equal(m, n);
                }
        }
}

/* Decoding t fails with code and a message containing what. */
static void expect_bad(const struct tf *t, int code, const char *what)
{
        struct tm_schema s;
        struct tm_err err = {0};
        ssize_t m = decode_all(t->b, t->n, archive, 0, 64, NULL, 0, &s, &err);
        if (m != code || !strstr(err.msg, what))
                fail_msg("got %zd \"%s\", want %d \"%s\"", m, err.msg, code, what);
}

static int field_pos(const struct tm_schema *s, const char *kind, const char *field)
{
        int k = tm_schema_kind(s, kind), f = tm_schema_field(s, field);
        assert_true(k >= 0 && f >= 0);
        return tm_kind_pos(&s->kind[k], (unsigned)f);
}

/* ---- every interpretation, both byte orders ---- */

static const char interp_dtd[] = "tag.width = 1;\n"
                                 "section main 1 {\n"
                                 "  ev : (tag, a, b, c, d, e, f, g) {\n"
                                 "    tag.value = 4;\n"
                                 "    a.width = 2; a.interpretation = none;\n"
                                 "    b.interpretation = default 77;\n"
                                 "    c.width = 1; c.interpretation = baseOffset 1000;\n"
                                 "    d.width = 2; d.interpretation = delta 500;\n"
                                 "    e.interpretation = stride 10 3;\n"
                                 "    f.width = 4; f.interpretation = sectionOffset 2;\n"
                                 "    g.width = 2; g.interpretation = sectionStride 3 2;\n"
                                 "  }\n"
                                 "}\n";

static const uint64_t sec2[] = {0xdeadbeef, 0x11223344, 7, 0x80000000};
static const uint64_t sec3[] = {1, 2, 3, 4, 5, 6, 7, 8};

/* The header and data sections 2 (4-byte items) and 3 (2-byte items). */
static void begin_interp(struct tf *t, unsigned bo)
{
        static uint8_t s2[16], s3[16];
        struct dsec ds[] = {{2, s2, items(s2, sec2, 4, 4, bo)}, {3, s3, items(s3, sec3, 8, 2, bo)}};
        begin(t, bo, "interp.dtd", ds, 2);
        put(t, 2, 1); /* section main */
        put(t, 1, 1);
}

static void test_interpretations(void **unused)
{
        (void)unused;
        write_file("interp.dtd", interp_dtd);
        for (unsigned bo = MTF_LE; bo <= MTF_BE; bo++) {
                struct tf t;
                begin_interp(&t, bo);
                /* a none, c baseOffset -5 / +5, d delta +10 / -3 / 0,
                 * f item 1 / 2 / 3; b, e and g store nothing */
                put(&t, 4, 1), put(&t, 0x1234, 2), put(&t, 0xfb, 1), put(&t, 10, 2), put(&t, 1, 4);
                put(&t, 4, 1), put(&t, 1, 2), put(&t, 5, 1), put(&t, 0xfffd, 2), put(&t, 2, 4);
                put(&t, 4, 1), put(&t, 0xffff, 2), put(&t, 0, 1), put(&t, 0, 2), put(&t, 3, 4);
                const struct want want[] = {
                    {"ev", 1, {0x1234, 77, 995, 510, 13, 0x11223344, 1}, {0}, {0}},
                    {"ev", 1, {1, 77, 1005, 507, 16, 7, 3}, {0}, {0}},
                    {"ev", 1, {0xffff, 77, 1000, 507, 19, 0x80000000, 5}, {0}, {0}},
                };
                struct tm_schema s;
                expect(&t, archive, want, 3, &s);
                assert_string_equal(s.name, "interp");
                assert_int_equal(s.nkinds, 2); /* comment, ev */
                assert_int_equal(s.nsections, 1);
                assert_string_equal(s.section[0].name, "main");
                assert_int_equal(field_pos(&s, "ev", "g"), 6);
                assert_int_equal(s.kind[tm_schema_kind(&s, "ev")].tag, 4);
        }
}

/* ---- metadata changing widths and interpretations mid-trace ---- */

static void test_metadata(void **unused)
{
        (void)unused;
        write_file("interp.dtd", interp_dtd);
        for (unsigned bo = MTF_LE; bo <= MTF_BE; bo++) {
                struct tf t;
                begin_interp(&t, bo);
                put(&t, 4, 1), put(&t, 7, 2), put(&t, 0, 1), put(&t, 0, 2), put(&t, 0, 4);
                put_meta(&t, 1, 4, 1, 0, 1, 4, 0);           /* a.width = 4 */
                put_meta(&t, 1, 4, 2, 1, 0, 0, 0);           /* b: none, its width 0 */
                put_meta(&t, 1, 4, 3, 3, 1, 100, 0);         /* c: delta 100 */
                put_meta(&t, 1, 4, 4, 2, 1, 0x10000, 0);     /* d: baseOffset 0x10000 */
                put_meta(&t, 1, 4, 5, 6, 2, 50, 0xfffffffe); /* e: stride 50 -2 */
                put_meta(&t, 1, 4, 6, 7, 2, 3, 1);           /* f: sectionStride 3 1 (4-byte) */
                put_meta(&t, 1, 4, 7, 5, 1, 2, 0);           /* g: sectionOffset 2 (2-byte) */
                put(&t, 4, 1), put(&t, 0xabcdef01, 4), put(&t, 0xff, 1), put(&t, 0x8000, 2),
                    put(&t, 3, 2);
                put_meta(&t, 1, 4, 2, 0, 1, 1, 0); /* b.width = 1: now stored */
                put_meta(&t, 1, 4, 3, 4, 1, 9, 0); /* c: default 9 */
                put_meta(&t, 1, 4, 1, 1, 0, 0, 0); /* a: none again, width kept */
                put(&t, 4, 1), put(&t, 5, 4), put(&t, 200, 1), put(&t, 1, 2), put(&t, 7, 2);
                /* f reads 4-byte items of section 3 (2-byte values, as bo
                 * lays them out), g 2-byte items of section 2 */
                uint8_t s2[16], s3[16];
                items(s2, sec2, 4, 4, bo);
                items(s3, sec3, 8, 2, bo);
                uint64_t f0 = 0, f1 = 0, g3 = 0, g7 = 0;
                for (unsigned i = 0; i < 4; i++) {
                        f0 = bo == MTF_LE ? f0 | (uint64_t)s3[i] << 8 * i : f0 << 8 | s3[i];
                        f1 = bo == MTF_LE ? f1 | (uint64_t)s3[4 + i] << 8 * i : f1 << 8 | s3[4 + i];
                }
                g3 = bo == MTF_LE ? (uint64_t)s2[6] | (uint64_t)s2[7] << 8
                                  : (uint64_t)s2[6] << 8 | s2[7];
                g7 = bo == MTF_LE ? (uint64_t)s2[14] | (uint64_t)s2[15] << 8
                                  : (uint64_t)s2[14] << 8 | s2[15];
                const struct want want[] = {
                    {"ev", 1, {7, 77, 1000, 500, 13, 0xdeadbeef, 1}, {0}, {0}},
                    {"ev", 1, {0xabcdef01, 0, 99, 0x10000 - 0x8000, 48, f0, g3}, {0}, {0}},
                    {"ev", 1, {5, 200, 9, 0x10001, 46, f1, g7}, {0}, {0}},
                };
                struct tm_schema s;
                expect(&t, archive, want, 3, &s);
        }
}

/* ---- vfield, comment, repeats, fixed bytes, no sections ---- */

static void test_vfield_comment_repeat(void **unused)
{
        (void)unused;
        write_file("rep.dtd", "tag.width = 2;\n"
                              "x : (tag, n*(p, q), vfield, blob) {\n"
                              "  tag.value = 9; n.width = 1; n.interpretation = none;\n"
                              "  p.width = 2; p.interpretation = none;\n"
                              "  q.width = 1; q.interpretation = delta 0;\n"
                              "  blob.width = 12; blob.interpretation = none;\n"
                              "}\n");
        for (unsigned bo = MTF_LE; bo <= MTF_BE; bo++) {
                struct tf t;
                begin(&t, bo, "dtds/rep.dtd", NULL, 0);
                put(&t, 1, 2), put(&t, 5, 1), put_bytes(&t, "hello", 5); /* comment */
                put(&t, 9, 2), put(&t, 3, 1);                            /* n = 3 */
                put(&t, 0x102, 2), put(&t, 5, 1), put(&t, 0x304, 2), put(&t, 0xff, 1),
                    put(&t, 0, 2), put(&t, 10, 1);
                put(&t, 2, 1), put_bytes(&t, "\x00\x01", 2);
                put_bytes(&t, "twelve bytes", 12);
                put(&t, 9, 2), put(&t, 0, 1), put(&t, 0, 1), put_bytes(&t, "abcdefghijkl", 12);
                put(&t, 1, 2), put(&t, 0, 1);
                static const uint64_t p[] = {0x102, 0x304, 0}, q[] = {5, 4, 14};
                const struct want want[] = {
                    {"comment", 0, {5}, {"hello"}, {0}},
                    {"x", 0, {3, 3, 2, 12}, {0, 0, "\x00\x01", "twelve bytes"}, {p, q}},
                    {"x", 0, {0, 0, 0, 12}, {0, 0, "", "abcdefghijkl"}, {p, q}},
                    {"comment", 0, {0}, {""}, {0}},
                };
                struct tm_schema s;
                expect(&t, archive, want, 4, &s);
                int k = tm_schema_kind(&s, "x");
                assert_int_equal(s.kind[k].nfields, 4);
                static const char *const names[] = {"p", "q", "attributes", "blob"};
                static const int types[] = {TM_FT_LIST, TM_FT_LIST, TM_FT_BYTES, TM_FT_BYTES};
                for (unsigned i = 0; i < 4; i++) {
                        assert_string_equal(s.field[s.kind[k].field[i]].name, names[i]);
                        assert_int_equal(s.field[s.kind[k].field[i]].type, types[i]);
                }
                k = tm_schema_kind(&s, "comment");
                assert_int_equal(s.field[s.kind[k].field[0]].type, TM_FT_TEXT);
                assert_string_equal(s.field[s.kind[k].field[0]].name, "text");
        }
}

/* ---- Appendix C's HATF DTD: every HATF record ---- */

static void test_hatf_dtd(void **unused)
{
        (void)unused;
        for (unsigned bo = MTF_LE; bo <= MTF_BE; bo++) {
                struct tf t;
                /* not beside the archive: the built-in copy, named as the
                 * paper spells it */
                begin(&t, bo, "http://example.org/dtd/HATF10.dtd", NULL, 0);
                put(&t, 1, 1), put(&t, 8, 1), put_bytes(&t, "HATF 1.0", 8);
                put(&t, 2, 1), put(&t, 1, 1);                                     /* section heap */
                put(&t, 4, 1), put(&t, 24, 4), put(&t, 0x1000, 4), put(&t, 0, 1); /* alloc */
                put(&t, 5, 1), put(&t, 0x1000, 4), put(&t, 0x2000, 4), put(&t, 2, 1),
                    put_bytes(&t, "ab", 2);                       /* realloc */
                put(&t, 6, 1), put(&t, 0x2000, 4), put(&t, 0, 1); /* free */
                /* time (field 3 of alloc), thread (4), heap (5) stored from now on */
                put_meta(&t, 1, 4, 3, 1, 0, 0, 0);
                put_meta(&t, 1, 4, 3, 0, 1, 4, 0);
                put_meta(&t, 1, 4, 4, 0, 1, 1, 0);
                put_meta(&t, 1, 4, 4, 1, 0, 0, 0);
                put_meta(&t, 1, 4, 5, 3, 1, 100, 0); /* heap: delta 100, needs a width */
                put_meta(&t, 1, 4, 5, 0, 1, 2, 0);
                put(&t, 4, 1), put(&t, 8, 4), put(&t, 0x3000, 4), put(&t, 777, 4), put(&t, 3, 1),
                    put(&t, 0xfffe, 2), put(&t, 0, 1);
                put(&t, 7, 1), put(&t, 0, 1); /* createHeap: thread, heap default 0 */
                put(&t, 8, 1), put(&t, 0, 1);
                put(&t, 9, 1), put(&t, 0, 1);
                put(&t, 10, 1), put(&t, 1, 1), put_bytes(&t, "!", 1);
                put(&t, 1, 1), put(&t, 3, 1), put_bytes(&t, "end", 3);
                const struct want want[] = {
                    {"comment", 0, {8}, {"HATF 1.0"}, {0}},
                    {"alloc", 1, {24, 0x1000, 0, 0, 0, 0}, {""}, {0}},
                    {"realloc", 1, {0x1000, 0x2000, 0, 0, 0, 2}, {"ab"}, {0}},
                    {"free", 1, {0x2000, 0, 0, 0, 0}, {""}, {0}},
                    {"alloc", 1, {8, 0x3000, 777, 3, 98, 0}, {""}, {0}},
                    {"createHeap", 1, {0, 0, 0}, {""}, {0}},
                    {"destroyHeap", 1, {0, 0, 0}, {""}, {0}},
                    {"createThread", 1, {0, 0}, {""}, {0}},
                    {"destroyThread", 1, {0, 1}, {"!"}, {0}},
                    {"comment", 1, {3}, {"end"}, {0}},
                };
                struct tm_schema s;
                expect(&t, NULL, want, 10, &s);
                assert_string_equal(s.name, "heap");
                int k = tm_schema_kind(&s, "realloc");
                static const char *const names[] = {"address", "new_address", "time",
                                                    "thread",  "heap",        "attributes"};
                assert_int_equal(s.kind[k].nfields, 6);
                for (unsigned i = 0; i < 6; i++)
                        assert_string_equal(s.field[s.kind[k].field[i]].name, names[i]);
                assert_int_equal(s.kind[k].tag, 5);
                assert_int_equal(s.field[tm_schema_field(&s, "address")].show, TM_SHOW_HEX);
                assert_int_equal(s.field[tm_schema_field(&s, "size")].show, TM_SHOW_DEC);
                assert_int_equal(s.field[tm_schema_field(&s, "attributes")].type, TM_FT_BYTES);
        }
}

/* ---- where the DTD is found ---- */

static void test_dtd_lookup(void **unused)
{
        (void)unused;
        struct tf t;
        struct tm_schema s;
        struct tm_err err = {0};
        begin(&t, MTF_LE, "hatf10.dtd", NULL, 0);
        put(&t, 2, 1), put(&t, 1, 1), put(&t, 6, 1), put(&t, 0x55, 4), put(&t, 0, 1);
        const struct want freed = {"free", 1, {0x55, 0, 0, 0, 0}, {""}, {0}};
        expect(&t, archive, &freed, 1, &s);
        /* beside the archive first: here free's address is one byte */
        write_file("hatf10.dtd", "tag.width = 1; section heap 1 { free : (tag, address) {\n"
                                 "tag.value = 6; address.width = 1; address.interpretation = "
                                 "none; } }\n");
        begin(&t, MTF_LE, "hatf10.dtd", NULL, 0);
        put(&t, 2, 1), put(&t, 1, 1), put(&t, 6, 1), put(&t, 0x55, 1), put(&t, 6, 1),
            put(&t, 0x66, 1);
        const struct want two[] = {{"free", 1, {0x55}, {0}, {0}}, {"free", 1, {0x66}, {0}, {0}}};
        expect(&t, archive, two, 2, &s);
        char gone[160];
        snprintf(gone, sizeof gone, "%s/hatf10.dtd", dir);
        unlink(gone);
        /* TM_DTD_PATH, after the archive's directory and the built-in set */
        begin(&t, MTF_BE, "elsewhere.dtd", NULL, 0);
        put(&t, 1, 1), put(&t, 0, 1);
        assert_int_equal(decode_all(t.b, t.n, archive, 0, 8, NULL, 0, &s, &err), -ENOENT);
        assert_non_null(strstr(err.msg, "raw offset 28: DTD 'elsewhere.dtd' not found"));
        char sub[128];
        snprintf(sub, sizeof sub, "%s/sub", dir);
        mkdir(sub, 0700);
        snprintf(gone, sizeof gone, "%s/elsewhere.dtd", sub);
        FILE *f = fopen(gone, "w");
        assert_non_null(f);
        fputs("c : (tag) { tag.value = 9; }", f);
        fclose(f);
        char env[300];
        snprintf(env, sizeof env, "/nonexistent::%s", sub);
        setenv("TM_DTD_PATH", env, 1);
        const struct want c = {"comment", 0, {0}, {""}, {0}};
        expect(&t, archive, &c, 1, &s);
        assert_true(tm_schema_kind(&s, "c") >= 0);
        unsetenv("TM_DTD_PATH");
        unlink(gone);
        rmdir(sub);
        /* a name that is no file name */
        begin(&t, MTF_LE, "http://x/", NULL, 0);
        assert_int_equal(decode_all(t.b, t.n, archive, 0, 8, NULL, 0, &s, &err), -EIO);
        assert_non_null(strstr(err.msg, "has no usable file name"));
        /* a DTD that does not parse: its own line and column */
        write_file("broken.dtd", "tag.width = 1;\nx.width = 1\n");
        begin(&t, MTF_LE, "broken.dtd", NULL, 0);
        assert_int_equal(decode_all(t.b, t.n, archive, 0, 8, NULL, 0, &s, &err), -EIO);
        assert_string_equal(err.msg, "broken.dtd:3:1: expected ';'");
}

/* ---- checkpoints: the state is a copy ---- */

static void test_checkpoint(void **unused)
{
        (void)unused;
        write_file("interp.dtd", interp_dtd);
        struct tf t;
        begin_interp(&t, MTF_BE);
        for (unsigned i = 0; i < 3; i++)
                put(&t, 4, 1), put(&t, i, 2), put(&t, 1, 1), put(&t, 1, 2), put(&t, i, 4);
        void *ctx;
        struct tm_rstate st, copy;
        struct tm_schema s;
        struct tm_err err = {0};
        struct tm_rec a[4], b[4];
        int start = C->open(t.b, t.n, archive, &ctx, &s, &st, &err);
        assert_true(start > 0);
        assert_true(C->state_size <= TM_RSTATE_MAX);
        size_t used, used2;
        /* the section record and the first ev */
        assert_int_equal(C->decode(ctx, &st, t.b + start, t.n - start, 1, start, &used, a, 1, &err),
                         1);
        memcpy(copy.b, st.b, C->state_size);
        size_t at = start + used;
        assert_int_equal(C->decode(ctx, &st, t.b + at, t.n - at, 1, at, &used, a, 4, &err), 2);
        memset(st.b, 0xa5, sizeof st.b);
        memcpy(st.b, copy.b, C->state_size);
        assert_int_equal(C->decode(ctx, &st, t.b + at, t.n - at, 1, at, &used2, b, 4, &err), 2);
        assert_int_equal(used, used2);
        assert_memory_equal(a, b, 2 * sizeof a[0]);
        assert_int_equal(b[1].v[3], 503); /* d: 500 + 1 + 1 + 1 */
        assert_int_equal(b[1].v[6], 5);   /* g: the third item read */
        /* what a checkpoint in an index file may hold (mtf_state_ok): the
         * copy, not a section past the DTD's, a cell over 8 bytes, an
         * unknown interpretation, other cells, a chunk where no section
         * is streamed */
        assert_true(C->state_ok(ctx, &copy));
        struct tm_rstate bad;
        struct mtf_state *ms = (struct mtf_state *)bad.b;
        for (int k = 0; k < 9; k++) {
                memcpy(&bad, &copy, sizeof bad);
                if (k == 0)
                        ms->section = 200;
                else if (k == 1)
                        ms->width[0] = 9;
                else if (k == 2)
                        ms->interp[1] = 8;
                else if (k == 3)
                        ms->ncells++;
                else if (k == 4)
                        ms->stream[MTF_STREAMS_MAX - 1].count = 1;
                else if (k == 5)
                        ms->nnames++; /* the field names the DTD has */
                else if (k == 6)
                        ms->prev[ms->nnames] = 1; /* a name past them */
                else if (k == 7)
                        ms->sec[0] = 2; /* a section for a cell that reads none */
                else
                        ms->sec[8] = 0; /* and none for one that does (cell 8: g) */
                assert_false(C->state_ok(ctx, &bad));
        }
        /* the fields' previous values are any numbers */
        memcpy(&bad, &copy, sizeof bad);
        ms->prev[0] = UINT64_MAX;
        assert_true(C->state_ok(ctx, &bad));
        C->close(ctx);
}

/* ---- the header ---- */

static void test_header(void **unused)
{
        (void)unused;
        struct tf t;
        static const uint8_t bytes[5] = {1, 2, 3, 4, 5};
        struct dsec ds = {7, bytes, 5};
        for (unsigned bo = MTF_LE; bo <= MTF_BE; bo++) {
                begin(&t, bo, "a/b/c.dtd", &ds, 1);
                t.h.nrecords = 1234;
                mtf_header_write(&t.h, t.b, sizeof t.b, NULL);
                assert_memory_equal(t.b, "\177MTF", 4);
                assert_int_equal(t.b[4], 2);
                assert_int_equal(t.b[5], bo);
                assert_int_equal(t.b[6], 9);
                /* nsections 2 at 16, in the header's byte order */
                assert_int_equal(t.b[bo == MTF_LE ? 16 : 19], 2);
                assert_memory_equal(t.b + 28, "a/b/c.dtd", 9);
                struct mtf_header h;
                struct tm_err err = {0};
                int start = mtf_header_read(t.b, t.n, &h, &err);
                assert_int_equal(start, 28 + 9 + 24 + 5);
                assert_int_equal(h.nrecords, 1234);
                assert_string_equal(h.dtd, "a/b/c.dtd");
                assert_int_equal(h.section[0].number, 7);
                assert_int_equal(h.section[0].start, 28 + 9 + 24);
                assert_int_equal(h.section[0].size, 5);
                assert_memory_equal(t.b + h.section[0].start, bytes, 5);
                assert_true(C->probe(t.b, 4));
                assert_false(C->probe(t.b, 3));
                assert_false(C->probe((const uint8_t *)"\177MTG", 4));
        }
        t.h.class = 3;
        assert_int_equal(mtf_header_write(&t.h, t.b, sizeof t.b, NULL), -EINVAL);
        t.h.class = 1;
        assert_int_equal(mtf_header_write(&t.h, t.b, 40, NULL), -EINVAL);
}

/* ---- corrupt and truncated traces ---- */

struct corrupt {
        size_t off; /* 0: append bytes; else overwrite the header byte */
        uint8_t byte;
        int code;
        const char *what;
};

static void test_bad_header(void **unused)
{
        (void)unused;
        write_file("interp.dtd", interp_dtd);
        static const struct corrupt cs[] = {
            {1, 'X', -EIO, "raw offset 0: not a Meta-TF file"},
            {4, 3, -EIO, "raw offset 4: class 3"},
            {5, 0, -EIO, "raw offset 5: byte order 0"},
            {6, 0, -EIO, "raw offset 6: no DTD name"},
            {6, 200, -EIO, "raw offset 108: truncated Meta-TF header"},
            {19, 17, -ENOTSUP, "raw offset 16: 17 sections"},
            {23, 5, -EIO, "raw offset 20: start 5"},
            {21, 0x20, -ENOTSUP, "raw offset 20: start"},
            /* section 2's number (first table entry, 28 + 10) made 0 */
            {41, 0, -EIO, "raw offset 38: section number 0"},
            {41, 3, -EIO, "raw offset 50: section 3 listed twice"},
            /* section 2's size (at 46) runs into start */
            {49, 200, -EIO, "raw offset 38: section 2 (bytes"},
        };
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
                struct tf t;
                begin_interp(&t, MTF_BE);
                t.b[cs[i].off] = cs[i].byte;
                expect_bad(&t, cs[i].code, cs[i].what);
        }
        struct tf t;
        begin_interp(&t, MTF_BE);
        struct tm_schema s;
        struct tm_err err = {0};
        for (size_t n = 0; n < t.h.start; n += 7) {
                ssize_t m = decode_all(t.b, n, archive, 0, 8, NULL, 0, &s, &err);
                assert_int_equal(m, -EIO);
                char want[64];
                snprintf(want, sizeof want, "raw offset %zu: truncated Meta-TF header", n);
                assert_non_null(strstr(err.msg, want));
        }
}

static void test_bad_records(void **unused)
{
        (void)unused;
        write_file("interp.dtd", interp_dtd);
        struct tf t;
        /* cut anywhere inside a record: truncated at the record's start */
        begin_interp(&t, MTF_LE);
        size_t rec = t.n;
        put(&t, 4, 1), put(&t, 0x1234, 2), put(&t, 0xfb, 1), put(&t, 10, 2), put(&t, 1, 4);
        size_t end = t.n;
        char want[64];
        for (t.n = rec + 1; t.n < end; t.n++) {
                snprintf(want, sizeof want, "raw offset %zu: truncated record", rec);
                expect_bad(&t, -EIO, want);
        }
        /* an unknown tag; a tag not in this section */
        begin_interp(&t, MTF_LE);
        put(&t, 99, 1);
        snprintf(want, sizeof want, "raw offset %zu: unknown tag 99 in section main", t.n - 1);
        expect_bad(&t, -EIO, want);
        begin_interp(&t, MTF_LE);
        t.n -= 2;
        put(&t, 4, 1);
        snprintf(want, sizeof want, "raw offset %zu: unknown tag 4 in the global section", t.n - 1);
        expect_bad(&t, -EIO, want);
        /* a section record for a section the DTD lacks */
        begin_interp(&t, MTF_LE);
        put(&t, 2, 1), put(&t, 9, 1);
        snprintf(want, sizeof want, "raw offset %zu: section 9 is not in the DTD", t.n - 2);
        expect_bad(&t, -EIO, want);
        /* sectionOffset past the section's end (4 items) */
        begin_interp(&t, MTF_LE);
        put(&t, 4, 1), put(&t, 0, 2), put(&t, 0, 1), put(&t, 0, 2), put(&t, 4, 4);
        snprintf(want, sizeof want, "raw offset %zu: field 'f' of 'ev': item 4 is past", t.n - 4);
        expect_bad(&t, -EIO, want);
        /* sectionStride past the end: stride 2 over 8 items, the fifth read */
        begin_interp(&t, MTF_LE);
        for (unsigned i = 0; i < 5; i++)
                put(&t, 4, 1), put(&t, 0, 2), put(&t, 0, 1), put(&t, 0, 2), put(&t, 0, 4);
        snprintf(want, sizeof want, "raw offset %zu: field 'g' of 'ev': item 8 is past", t.n);
        expect_bad(&t, -EIO, want);
        /* metadata: bad field, bad property, bytes field, width 9, a
         * section that is not a data section, an unknown record */
        static const struct {
                unsigned tag, field, prop, nv;
                uint64_t v0;
                const char *what;
        } ms[] = {
            {4, 0, 0, 1, 1, "metadata for field 0 of 'ev' (1..7)"},
            {4, 8, 0, 1, 1, "metadata for field 8 of 'ev' (1..7)"},
            {4, 1, 8, 0, 0, "metadata property 8 (0..7)"},
            {4, 1, 0, 1, 9, "width 9"},
            {4, 6, 0, 1, 0, "width 0"},
            {4, 1, 5, 1, 1, "reads section 1, not a data section"},
            {5, 1, 1, 0, 0, "metadata for tag 5, not a data record here"},
            {2, 1, 1, 0, 0, "metadata for tag 2, not a data record here"},
            {1, 2, 0, 1, 1, "which is bytes"},
        };
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
                begin_interp(&t, MTF_BE);
                size_t at = t.n;
                put_meta(&t, 1, ms[i].tag, ms[i].field, ms[i].prop, (int)ms[i].nv, ms[i].v0, 0);
                snprintf(want, sizeof want, "raw offset %zu: ", at);
                expect_bad(&t, -EIO, want);
                expect_bad(&t, -EIO, ms[i].what);
        }
        /* a constant field with another value */
        write_file("const.dtd", "k : (tag, magic, x) { tag.value = 7; magic.width = 2;\n"
                                "magic.interpretation = none; magic.value = 0x4d54;\n"
                                "x.width = 1; x.interpretation = none; }\n");
        begin(&t, MTF_BE, "const.dtd", NULL, 0);
        put(&t, 7, 1), put(&t, 0x4d54, 2), put(&t, 1, 1);
        const struct want k = {"k", 0, {0x4d54, 1}, {0}, {0}};
        struct tm_schema s;
        expect(&t, archive, &k, 1, &s);
        put(&t, 7, 1), put(&t, 0x4d55, 2), put(&t, 1, 1);
        snprintf(want, sizeof want,
                 "raw offset %zu: field 'magic' of 'k': 19797, the DTD says 19796", t.n - 3);
        expect_bad(&t, -EIO, want);
        /* a repeat over MTF_LIST_MAX */
        write_file("rep2.dtd",
                   "r : (tag, n*v) { tag.value = 7; n.width = 2;\n"
                   "n.interpretation = none; v.width = 1; v.interpretation = none; }\n");
        begin(&t, MTF_LE, "rep2.dtd", NULL, 0);
        put(&t, 7, 1), put(&t, MTF_LIST_MAX + 1, 2);
        snprintf(want, sizeof want, "raw offset %zu: field 'n' of 'r': repeats 1025 times", t.n);
        expect_bad(&t, -EIO, want);
        /* a DTD reading a section the file does not have */
        begin(&t, MTF_LE, "interp.dtd", NULL, 0);
        expect_bad(&t, -EIO, "raw offset 28: field 'f' of 'ev' reads section 2");
}

/* Many records with lists in one call: the list buffer fills, the call
 * stops early, and every record still comes out right. */
static void test_many_lists(void **unused)
{
        (void)unused;
        write_file("rep2.dtd",
                   "r : (tag, n*v) { tag.value = 7; n.width = 2;\n"
                   "n.interpretation = none; v.width = 1; v.interpretation = none; }\n");
        static struct tf t;
        begin(&t, MTF_LE, "rep2.dtd", NULL, 0);
        static uint64_t vals[MTF_LIST_MAX];
        for (unsigned i = 0; i < MTF_LIST_MAX; i++)
                vals[i] = i & 0xff;
        static struct want want[12];
        for (unsigned r = 0; r < 12; r++) {
                put(&t, 7, 1), put(&t, MTF_LIST_MAX, 2);
                for (unsigned i = 0; i < MTF_LIST_MAX; i++)
                        put(&t, vals[i], 1);
                want[r] = (struct want){"r", 0, {MTF_LIST_MAX}, {0}, {vals}};
        }
        struct tm_schema s;
        struct tm_err err = {0};
        assert_int_equal(decode_all(t.b, t.n, archive, 0, 64, want, 12, &s, &err), 12);
}

/* ---- the previous value of delta and stride is the field's ---- */

/* Two record kinds share delta field t (Appendix B: "the value of the same
 * field in the most recent previous record"); c has t twice, d stores it
 * whole. previous = record (what hatf10.dtd files were written with)
 * keeps it per record kind and position instead. */
static void shared_field_trace(struct tf *t, const char *dtd)
{
        begin(t, MTF_LE, dtd, NULL, 0);
        put(t, 2, 1), put(t, 1, 1);                    /* section s */
        put(t, 4, 1), put(t, 1000, 2);                 /* a */
        put(t, 5, 1), put(t, 577, 2), put(t, 9, 1);    /* b */
        put(t, 4, 1), put(t, 23, 2);                   /* a */
        put(t, 6, 1), put(t, 10, 2), put(t, 5, 2);     /* c */
        put(t, 7, 1), put(t, 2000, 2);                 /* d: none */
        put(t, 4, 1), put(t, 1, 2);                    /* a */
        put_meta(t, 1, 5, 1, 3, 1, 50, 0);             /* b's t: delta 50 */
        put(t, 4, 1), put(t, 0, 2);                    /* a */
        put(t, 5, 1), put(t, 1, 2), put(t, 0, 1);      /* b */
        put(t, 8, 1), put(t, 0, 1);                    /* e: t stride 5, from b's 51 */
}

static const char shared_dtd[] = "tag.width = 1; t.width = 2; t.interpretation = delta 0;\n"
                                 "section s 1 {\n"
                                 "  a : (tag, t) { tag.value = 4; }\n"
                                 "  b : (tag, t, u) { tag.value = 5; u.width = 1;\n"
                                 "    u.interpretation = none; }\n"
                                 "  c : (tag, t, t) { tag.value = 6; }\n"
                                 "  d : (tag, t) { tag.value = 7; t.interpretation = none; }\n"
                                 "  e : (tag, t, v) { tag.value = 8; t.interpretation = stride 0 5;\n"
                                 "    v.width = 1; v.interpretation = none; }\n"
                                 "}\n";

static void test_shared_delta(void **unused)
{
        (void)unused;
        write_file("shared.dtd", shared_dtd);
        struct tf t;
        shared_field_trace(&t, "shared.dtd");
        const struct want want[] = {
            {"a", 1, {1000}, {0}, {0}},     {"b", 1, {1577, 9}, {0}, {0}},
            {"a", 1, {1600}, {0}, {0}},     {"c", 1, {1610, 1615}, {0}, {0}},
            {"d", 1, {2000}, {0}, {0}},     {"a", 1, {2001}, {0}, {0}},
            {"a", 1, {50}, {0}, {0}},       {"b", 1, {51, 0}, {0}, {0}},
            {"e", 1, {56, 0}, {0}, {0}},
        };
        struct tm_schema s;
        expect(&t, archive, want, 9, &s);
        assert_int_equal(field_pos(&s, "c", "new_t"), 1);
        /* the same bytes, each record kind and position apart */
        char legacy[sizeof shared_dtd + 64];
        snprintf(legacy, sizeof legacy, "t.previous = record;\n%s", shared_dtd);
        write_file("shared.dtd", legacy);
        shared_field_trace(&t, "shared.dtd");
        const struct want apart[] = {
            {"a", 1, {1000}, {0}, {0}},     {"b", 1, {577, 9}, {0}, {0}},
            {"a", 1, {1023}, {0}, {0}},     {"c", 1, {10, 5}, {0}, {0}},
            {"d", 1, {2000}, {0}, {0}},     {"a", 1, {1024}, {0}, {0}},
            {"a", 1, {1024}, {0}, {0}},     {"b", 1, {51, 0}, {0}, {0}},
            {"e", 1, {5, 0}, {0}, {0}},
        };
        expect(&t, archive, apart, 9, &s);
}

/* hatf10.dtd's files were written with the previous value per record kind:
 * read so; the same records under hatf10v2.dtd share it. */
static void test_hatf10_previous(void **unused)
{
        (void)unused;
        for (int v2 = 0; v2 < 2; v2++) {
                struct tf t;
                begin(&t, MTF_LE, v2 ? "hatf10v2.dtd" : "hatf10.dtd", NULL, 0);
                put(&t, 2, 1), put(&t, 1, 1);
                unsigned afield = v2 ? 2 : 2, ffield = 1; /* alloc's and free's address */
                put_meta(&t, 1, 4, afield, 3, 1, 0x1000, 0);
                put_meta(&t, 1, 6, ffield, 3, 1, 0x1000, 0);
                put(&t, 4, 1), put(&t, 16, 4), put(&t, 0x10, 4), put(&t, 0, 1); /* alloc 0x1010 */
                put(&t, 6, 1), put(&t, 0x20, 4), put(&t, 0, 1); /* free */
                put(&t, 4, 1), put(&t, 16, 4), put(&t, 0x30, 4), put(&t, 0, 1); /* alloc */
                uint64_t f = v2 ? 0x1030 : 0x1020, a = v2 ? 0x1060 : 0x1040;
                const struct want want[] = {
                    {"alloc", 1, {16, 0x1010, 0, 0, 0, 0}, {""}, {0}},
                    {"free", 1, {f, 0, 0, 0, 0}, {""}, {0}},
                    {"alloc", 1, {16, a, 0, 0, 0, 0}, {""}, {0}},
                };
                struct tm_schema s;
                expect(&t, NULL, want, 3, &s);
                assert_string_equal(s.name, "heap");
        }
}

/* ---- one field name, one type; display by the DTD ---- */

static void test_field_conflicts(void **unused)
{
        (void)unused;
        static const struct {
                const char *dtd, *msg;
        } cases[] = {
            {"tag.width = 1; x.width = 1; x.interpretation = none;\n"
             "n.width = 1; n.interpretation = none;\n"
             "a : (tag, n*x) { tag.value = 4; }\n"
             "b : (tag, x) { tag.value = 5; }\n",
             "conflict.dtd:4:11: field 'x' of 'b' is a number, but repeated in 'a' (line 3)"},
            {"tag.width = 1; x.width = 1; x.interpretation = none;\n"
             "a : (tag, x) { tag.value = 4; x.display = hex; }\n"
             "b : (tag, y, x) { tag.value = 5; x.display = decimal;\n"
             "  y.width = 1; y.interpretation = none; }\n",
             "conflict.dtd:3:14: field 'x' of 'b' is shown in decimal, but in hex in 'a' (line 2)"},
            {"tag.width = 1; x.width = 1;\n"
             "a : (tag, x) { tag.value = 4; x.interpretation = delta 5; }\n"
             "b : (tag, x) { tag.value = 5; x.interpretation = delta 7; }\n",
             "conflict.dtd:3:11: field 'x' of 'b' starts from 7, but from 5 in 'a' (line 2)"},
        };
        for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                write_file("conflict.dtd", cases[i].dtd);
                struct tf t;
                begin(&t, MTF_LE, "conflict.dtd", NULL, 0);
                struct tm_schema s;
                struct tm_err err = {0};
                ssize_t m = decode_all(t.b, t.n, archive, 0, 8, NULL, 0, &s, &err);
                if (m != -EIO || !strstr(err.msg, cases[i].msg))
                        fail_msg("case %u: got %zd \"%s\", want \"%s\"", i, m, err.msg,
                                 cases[i].msg);
        }
}

static void test_display(void **unused)
{
        (void)unused;
        write_file("vm.dtd", "tag.width = 1;\n"
                             "virtual_address_space.width = 1;\n"
                             "virtual_address_space.interpretation = none;\n"
                             "pc.width = 8; pc.interpretation = none; pc.display = hex;\n"
                             "address.width = 4; address.interpretation = none;\n"
                             "ev : (tag, virtual_address_space, pc, address) { tag.value = 4; }\n");
        struct tf t;
        begin(&t, MTF_LE, "vm.dtd", NULL, 0);
        put(&t, 4, 1), put(&t, 3, 1), put(&t, 0x401000, 8), put(&t, 0x20, 4);
        const struct want want[] = {{"ev", 0, {3, 0x401000, 0x20}, {0}, {0}}};
        struct tm_schema s;
        expect(&t, archive, want, 1, &s);
        assert_string_equal(s.name, "vm");
        /* not by the name: "addr" in it says nothing; an address outside
         * the heap family has no role that makes it hex */
        assert_int_equal(s.field[tm_schema_field(&s, "virtual_address_space")].show, TM_SHOW_DEC);
        assert_int_equal(s.field[tm_schema_field(&s, "address")].show, TM_SHOW_DEC);
        assert_int_equal(s.field[tm_schema_field(&s, "pc")].show, TM_SHOW_HEX);
        /* the heap family's addresses are hex by their role, unless the
         * DTD says otherwise */
        write_file("hatf10.dtd", "tag.width = 1; address.display = decimal;\n"
                                 "section heap 1 { alloc : (tag, size, address) {\n"
                                 "tag.value = 4; size.width = 1; size.interpretation = none;\n"
                                 "address.width = 1; address.interpretation = none; } }\n");
        begin(&t, MTF_LE, "hatf10.dtd", NULL, 0);
        put(&t, 2, 1), put(&t, 1, 1), put(&t, 4, 1), put(&t, 8, 1), put(&t, 0x40, 1);
        const struct want alloc = {"alloc", 1, {8, 0x40}, {0}, {0}};
        expect(&t, archive, &alloc, 1, &s);
        assert_string_equal(s.name, "heap");
        assert_int_equal(s.field[tm_schema_field(&s, "address")].show, TM_SHOW_DEC);
        char path[160];
        snprintf(path, sizeof path, "%s/hatf10.dtd", dir);
        unlink(path);
}

static int setup(void **unused)
{
        (void)unused;
        snprintf(dir, sizeof dir, "/tmp/unit_metatf.XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        snprintf(archive, sizeof archive, "%s/trace.mtf", dir);
        unsetenv("TM_DTD_PATH");
        return 0;
}

static int teardown(void **unused)
{
        (void)unused;
        static const char *const files[] = {"interp.dtd", "rep.dtd",      "rep2.dtd",
                                            "const.dtd",  "broken.dtd",   "hatf10.dtd",
                                            "shared.dtd", "conflict.dtd", "vm.dtd"};
        char path[160];
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
                snprintf(path, sizeof path, "%s/%s", dir, files[i]);
                unlink(path);
        }
        return rmdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_header),      cmocka_unit_test(test_interpretations),
            cmocka_unit_test(test_metadata),    cmocka_unit_test(test_vfield_comment_repeat),
            cmocka_unit_test(test_hatf_dtd),    cmocka_unit_test(test_dtd_lookup),
            cmocka_unit_test(test_checkpoint),  cmocka_unit_test(test_bad_header),
            cmocka_unit_test(test_bad_records), cmocka_unit_test(test_many_lists),
            cmocka_unit_test(test_shared_delta), cmocka_unit_test(test_hatf10_previous),
            cmocka_unit_test(test_field_conflicts), cmocka_unit_test(test_display),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
