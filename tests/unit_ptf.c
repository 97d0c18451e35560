/* PTF (codecs/object/ptf.h; docs/formats/ptf.md): the report's Figure 3,
 * repaired (tests/data/ptf/figure3.ptf), decodes to exactly its events and
 * parameters, and its ascii view is the figure byte for byte; every event
 * type of Table 1, the optional event id, fo's lists and names; bad input
 * rejected with the raw offset and the line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../codecs/object/ptf.h"
#include "../codecs/object/ptf_stats.h"
#include "../codecs/record/record.h"
#include "../include/tracemount.h"
#include "../views/stats.h"
#include "support/tmtest.h"

#define FIGURE3 TM_SOURCE_DIR "/tests/data/ptf/figure3.ptf"
#define NREC 64

/* Decode text (all of it offered, eof) into out, call after call as a
 * view does; the count, or the negative error. Lists point into the
 * decoder's per-thread buffer, which the next call reuses: the calls here
 * each return every record up to the end or the first bad line, so a
 * record kept is never of an earlier call except before an error. */
static ssize_t decode_all(const char *text, struct tm_rec *out, struct tm_err *err)
{
        struct tm_schema s;
        struct tm_rstate st;
        void *ctx;
        size_t len = strlen(text), pos = 0;
        assert_true(tm_rcodec_ptf.probe((const uint8_t *)text, len));
        assert_int_equal(
            tm_rcodec_ptf.open((const uint8_t *)text, len, "x.ptf", &ctx, &s, &st, err), 0);
        size_t n = 0;
        for (;;) {
                size_t used = 0;
                ssize_t m = tm_rcodec_ptf.decode(ctx, &st, (const uint8_t *)text + pos, len - pos,
                                                 1, pos, &used, out + n, NREC - n, err);
                if (m < 0)
                        return m;
                if (m == 0 && used == 0)
                        break;
                n += (size_t)m;
                pos += used;
        }
        assert_int_equal(pos, len);
        return (ssize_t)n;
}

/* "kind v v v" of r, the test's own way (lists joined by ',', text as is). */
static void show(const struct tm_rec *r, char *dst, size_t cap)
{
        const struct tm_kind *k = &tm_schema_ptf.kind[r->kind];
        size_t l = (size_t)snprintf(dst, cap, "%s", k->name);
        unsigned slot = 0;
        for (unsigned p = 0; p < k->nfields; p++) {
                const struct tm_field *f = &tm_schema_ptf.field[k->field[p]];
                if (f->type == TM_FT_TEXT) {
                        l += (size_t)snprintf(dst + l, cap - l, " %.*s", (int)r->v[p],
                                              (const char *)r->var[slot++]);
                } else if (f->type == TM_FT_LIST) {
                        const uint8_t *b = r->var[slot++];
                        l += (size_t)snprintf(dst + l, cap - l, " [");
                        for (uint64_t i = 0; i < r->v[p]; i++) {
                                uint64_t v = 0;
                                for (unsigned j = 0; j < 8; j++)
                                        v |= (uint64_t)b[8 * i + j] << (8 * j);
                                l += (size_t)snprintf(dst + l, cap - l, i ? ",%llu" : "%llu",
                                                      (unsigned long long)v);
                        }
                        l += (size_t)snprintf(dst + l, cap - l, "]");
                } else if (f->type == TM_FT_INT) {
                        l += (size_t)snprintf(dst + l, cap - l, " %lld", (long long)r->v[p]);
                } else {
                        l += (size_t)snprintf(dst + l, cap - l, " %llu",
                                              (unsigned long long)r->v[p]);
                }
        }
}

/* The value of the field named name in r (which must have it). */
static uint64_t val(const struct tm_rec *r, const char *name)
{
        int f = tm_schema_field(&tm_schema_ptf, name);
        assert_true(f >= 0);
        int p = tm_kind_pos(&tm_schema_ptf.kind[r->kind], (unsigned)f);
        if (p < 0)
                fail_msg("kind %s has no %s", tm_schema_ptf.kind[r->kind].name, name);
        return r->v[p];
}

/* Figure 3 as the report prints it, the annotations left out: kind and
 * parameters of every event, in order. */
static const char *const figure3[] = {
    "Trace begin",
    "fo 41 0 2 1 0 11 [11] BinTreeNode",
    "ts",
    "co 41 42",
    "dw 41 42 1",
    "sr 41 42",
    "co 41 43",
    "dw 41 43 1",
    "ew 41 42 0 43",
    "co 41 44",
    "dw 41 44 1",
    "ew 41 42 1 44",
    "co 41 45",
    "dw 41 45 1",
    "ew 41 43 0 45",
    "co 41 46",
    "dw 41 46 1",
    "ew 41 43 1 46",
    "co 41 47",
    "dw 41 47 1",
    "ew 41 44 0 47",
    "co 41 48",
    "dw 41 48 1",
    "ew 41 44 1 48",
    "te",
    "dr 41 42 1",
    "er 41 42 0",
    "er 41 42 1",
    "dr 41 43 1",
    "er 41 43 0",
    "er 41 43 1",
    "dr 41 44 1",
    "er 41 44 0",
    "er 41 44 1",
    "dr 41 45 1",
    "dr 41 46 1",
    "dr 41 47 1",
    "dr 41 48 1",
    "Trace end",
};
#define NFIG (sizeof figure3 / sizeof figure3[0])

static void test_figure3_records(void **state)
{
        (void)state;
        size_t len;
        char *text = (char *)tmt_slurp(FIGURE3, &len);
        assert_non_null(text);
        text = realloc(text, len + 1);
        text[len] = 0;
        struct tm_rec r[NREC];
        struct tm_err err = {0};
        ssize_t n = decode_all(text, r, &err);
        if (n < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(n, NFIG);
        for (size_t i = 0; i < NFIG; i++) {
                char got[256];
                show(&r[i], got, sizeof got);
                assert_string_equal(got, figure3[i]);
        }
        /* the parameters mean what the annotations say: "Write edge 0 from
         * object 42 of format 41 to object 43", "Create object with OId 42
         * whose format OId is 41", the format object of BinTreeNode */
        assert_int_equal(val(&r[8], "FormatId"), 41);
        assert_int_equal(val(&r[8], "FromOId"), 42);
        assert_int_equal(val(&r[8], "Edge"), 0);
        assert_int_equal(val(&r[8], "ToOId"), 43);
        assert_int_equal(val(&r[3], "FormatId"), 41);
        assert_int_equal(val(&r[3], "OId"), 42);
        assert_int_equal(val(&r[4], "Offset"), 1);
        assert_int_equal(val(&r[27], "FromOId"), 42);
        assert_int_equal(val(&r[27], "Edge"), 1);
        assert_int_equal(val(&r[1], "FormatId"), 41);
        assert_int_equal(val(&r[1], "SuperFormatId"), 0);
        assert_int_equal(val(&r[1], "NumberOfPointers"), 2);
        assert_int_equal(val(&r[1], "NumberOfDataMembers"), 1);
        assert_int_equal(val(&r[1], "NumberOfArrayMembers"), 0);
        assert_int_equal(val(&r[1], "LengthOfClassName"), 11);
        free(text);
}

/* tracetool's ascii (the view) is the figure, byte for byte. */
static void test_figure3_ascii(void **state)
{
        (void)state;
        size_t len;
        char *want = (char *)tmt_slurp(FIGURE3, &len);
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t;
        struct tm_vfile *f;
        struct tm_err err = {0};
        if (tm_trace_open(FIGURE3, &o, &t, &err) < 0)
                fail_msg("%s", err.msg);
        assert_string_equal(tm_trace_codec(t), "ptf");
        if (tm_vfile_open(t, "ascii", &f, &err) < 0)
                fail_msg("%s", err.msg);
        char *got = malloc(len + 4096);
        ssize_t n = tm_vfile_pread(f, got, len + 4096, 0, &err);
        if (n < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(n, len);
        assert_memory_equal(got, want, len);
        tm_vfile_close(f);
        tm_trace_close(t);
        free(got);
        free(want);
}

/* Every event type, event ids, fo with arrays, a name with a blank,
 * negative Offset, CRLF line ends, runs of blanks. */
static void test_every_event(void **state)
{
        (void)state;
        const char *text = "Trace begin\r\n"
                           "1 fo 50 0 0 2 1 12 11 11 30 10 DesignObject\n"
                           "fo 51 50 5 0 0 13 CompositePart\n"
                           "fo 52 0 0 0 0 6 a  b c\n"
                           "co 51 60\n"
                           "cao 30 61 60 100\n"
                           "adw 30\t61  -1 0 100\n"
                           "adr 30 61 -1 5 2\n"
                           "dw 50 60 0\n"
                           "dr 50 60 1\n"
                           "ew 51 60 0 0\n"
                           "er 51 60 0\n"
                           "sr 51 60\n"
                           "gr\n"
                           "ts\n"
                           "te\n"
                           "99 do 51 60\n"
                           "Trace end\n";
        static const char *const want[] = {
            "Trace begin",
            "fo 50 0 0 2 1 12 [11,11,30,10] DesignObject",
            "fo 51 50 5 0 0 13 [] CompositePart",
            "fo 52 0 0 0 0 6 [] a  b c",
            "co 51 60",
            "cao 30 61 60 100",
            "adw 30 61 -1 0 100",
            "adr 30 61 -1 5 2",
            "dw 50 60 0",
            "dr 50 60 1",
            "ew 51 60 0 0",
            "er 51 60 0",
            "sr 51 60",
            "gr",
            "ts",
            "te",
            "do 51 60",
            "Trace end",
        };
        struct tm_rec r[NREC];
        struct tm_err err = {0};
        ssize_t n = decode_all(text, r, &err);
        if (n < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(n, sizeof want / sizeof want[0]);
        for (size_t i = 0; i < (size_t)n; i++) {
                char got[256];
                show(&r[i], got, sizeof got);
                assert_string_equal(got, want[i]);
        }
        /* adw 30 61 -1 0 100: a dynamic array (Offset -1), from index 0,
         * 100 elements (section 3.2.9's order) */
        assert_int_equal((int64_t)val(&r[6], "Offset"), -1);
        assert_int_equal(val(&r[6], "Index"), 0);
        assert_int_equal(val(&r[6], "Length"), 100);
        assert_int_equal(val(&r[5], "ContainerOId"), 60);
        assert_int_equal(val(&r[5], "NoOfElements"), 100);
        assert_int_equal(val(&r[1], "NumberOfArrayMembers"), 1);
}

/* Bad input: the error names the raw offset of the line and its number. */
static void test_errors(void **state)
{
        (void)state;
        static const struct {
                const char *text, *msg;
        } bad[] = {
            {"Trace begin\nco 41\nTrace end\n", "raw offset 12: ptf line 2: too few parameters"},
            {"Trace begin\nco 41 42 43\nTrace end\n", "raw offset 12: ptf line 2: too many"},
            {"Trace begin\nxx 1\nTrace end\n", "raw offset 12: ptf line 2: unknown event type"},
            {"Trace begin\nco 41 -2\nTrace end\n", "raw offset 12: ptf line 2: a parameter is not"},
            {"Trace begin\ndr 41 42 x\nTrace end\n", "raw offset 12: ptf line 2: a parameter"},
            {"Trace begin\n\nTrace end\n", "raw offset 12: ptf line 2: an empty line"},
            {"Trace begin\nco 41 42\n", "raw offset 21: ptf line 3: truncated: no 'Trace end'"},
            {"Trace begin\nco 41 42", "raw offset 12: ptf line 2: truncated: the last line"},
            {"Trace begin\nTrace end\nts\n", "raw offset 22: ptf line 3: a line after"},
            {"Trace begin\nfo 41 0 0 1 0 3 abc\nTrace end\n", "raw offset 12: ptf line 2: fo: "},
            {"Trace begin\nfo 41 0 0 0 0 4 abc\nTrace end\n", "raw offset 12: ptf line 2: fo: "},
            {"Trace begin\nco 99999999999999999999 1\nTrace end\n",
             "raw offset 12: ptf line 2: a parameter is out of range"},
            {"Trace begin\n7\nTrace end\n", "raw offset 12: ptf line 2: an event id without"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                struct tm_rec r[NREC];
                struct tm_err err = {0};
                ssize_t n = decode_all(bad[i].text, r, &err);
                if (n >= 0)
                        fail_msg("case %zu decoded", i);
                if (strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) != 0)
                        fail_msg("case %zu: %s", i, err.msg);
        }
        /* the records before a bad line come first, the error in the next
         * call (so windows and a whole pass stop at the same record) */
        const char *t = "Trace begin\nco 41 42\nxx\n";
        struct tm_schema sc;
        struct tm_rstate st;
        struct tm_err err = {0};
        struct tm_rec r[4];
        void *ctx;
        size_t used = 0;
        assert_int_equal(
            tm_rcodec_ptf.open((const uint8_t *)t, strlen(t), "x", &ctx, &sc, &st, &err), 0);
        assert_int_equal(
            tm_rcodec_ptf.decode(ctx, &st, (const uint8_t *)t, strlen(t), 1, 0, &used, r, 4, &err),
            2);
        assert_int_equal(used, 21);
        assert_int_equal(tm_rcodec_ptf.decode(ctx, &st, (const uint8_t *)t + 21, strlen(t) - 21, 1,
                                              21, &used, r, 4, &err),
                         -EIO);
        assert_non_null(strstr(err.msg, "raw offset 21: ptf line 3: unknown event type"));
        /* not PTF: no probe */
        assert_false(tm_rcodec_ptf.probe((const uint8_t *)"Trace beginning\n", 16));
        assert_false(tm_rcodec_ptf.probe((const uint8_t *)"co 41 42\n", 9));
}

/* The whole text of view of the trace at path. */
static char *view_text(const char *path, const char *view)
{
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t;
        struct tm_vfile *f;
        struct tm_err err = {0};
        if (tm_trace_open(path, &o, &t, &err) < 0 || tm_vfile_open(t, view, &f, &err) < 0)
                fail_msg("%s %s: %s", path, view, err.msg);
        size_t cap = 1 << 16, len = 0;
        char *b = malloc(cap + 1);
        for (;;) {
                ssize_t n = tm_vfile_pread(f, b + len, cap - len, (off_t)len, &err);
                if (n < 0)
                        fail_msg("%s", err.msg);
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len == cap)
                        b = realloc(b, (cap *= 2) + 1);
        }
        b[len] = 0;
        tm_vfile_close(f);
        tm_trace_close(t);
        return b;
}

/* The object family on Figure 3: 8 objects (the format and 7 nodes), 6
 * edges each way, one bracket; no rule broken, verify passes. */
static void test_family_figure3(void **state)
{
        (void)state;
        char *st = view_text(FIGURE3, "stats");
        static const char *const want[] = {
            "  created              8\n",   "  deleted              0\n",
            "  live at most         8\n",   "  edges read           6\n",
            "  edges written        6\n",   "  bracket depth        1 at most, 0 at the end\n",
            "  null                 0 -\n", "  brackets             0 -\n",
        };
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
                if (!strstr(st, want[i]))
                        fail_msg("stats lacks '%s':\n%s", want[i], st);
        free(st);
        char *js = view_text(FIGURE3, "stats.json");
        assert_non_null(strstr(js, "\"family\":\"object\""));
        assert_non_null(strstr(js, "\"object\":{"));
        assert_non_null(strstr(js, "\"max_live\":{\"value\":8,\"unit\":\"objects\",\"exact\":true}"));
        free(js);
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t;
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open(FIGURE3, &o, &t, &err), 0);
        if (tm_trace_verify(t, NULL, NULL, &err) < 0)
                fail_msg("%s", err.msg);
        tm_trace_close(t);
}

/* One trace per rule that breaks it (tests/data/ptf/rule_*.ptf): verify
 * fails naming the rule and the first record, and stats counts it. */
static void test_family_rules(void **state)
{
        (void)state;
        static const struct {
                const char *file, *msg, *line;
        } rule[] = {
            {"rule_null.ptf", "record 2: object rule null broken", "  null                 1 2\n"},
            {"rule_reused.ptf", "record 4: object rule reused broken",
             "  reused               1 4\n"},
            {"rule_before_create.ptf", "record 3: object rule before_create broken",
             "  before_create        1 3\n"},
            {"rule_after_delete.ptf", "record 4: object rule after_delete broken",
             "  after_delete         1 4\n"},
            {"rule_delete_missing.ptf", "record 4: object rule delete_missing broken",
             "  delete_missing       1 4\n"},
            {"rule_brackets.ptf", "record 5: object rule brackets broken",
             "  brackets             1 5\n"},
            {"rule_brackets_open.ptf", "record 1: object rule brackets broken",
             "  brackets             1 1\n"},
        };
        for (size_t i = 0; i < sizeof rule / sizeof rule[0]; i++) {
                char path[512];
                snprintf(path, sizeof path, "%s/tests/data/ptf/%s", TM_SOURCE_DIR, rule[i].file);
                struct tm_trace_opts o = {.no_save = 1};
                struct tm_trace *t;
                struct tm_err err = {0};
                assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
                int rc = tm_trace_verify(t, NULL, NULL, &err);
                tm_trace_close(t);
                if (rc != -EIO || !strstr(err.msg, rule[i].msg))
                        fail_msg("%s: verify %d '%s'", rule[i].file, rc, err.msg);
                char *st = view_text(path, "stats");
                if (!strstr(st, rule[i].line))
                        fail_msg("%s: stats lacks '%s':\n%s", rule[i].file, rule[i].line, st);
                free(st);
        }
}

static int sink_buf(void *arg, const void *p, size_t n)
{
        return tmt_put(arg, p, n);
}

/* The binary form: the layout pinned by hand-made bytes; Figure 3 through
 * the encoder decodes to the same records, and its ascii view is the
 * figure; a cut record is -EIO with its offset. */
static void test_binary(void **state)
{
        (void)state;
        /* co 41 42; adw 30 61 -1 0 100 (Offset zigzag: -1 is 1); fo with a
         * list of one 8-byte value and a name of 2 bytes; Trace end */
        static const uint8_t hand[] = {
            'P', 'T', 'F', ' ', '1', '.', '0', '\n', 'n', 'o', 't', 'e', '\n', '$', '\n', 2,
            41,  42,  10,  30,  61,  1,   0,   100,  1,   41,  0,   2,   1,    0,   2,    1,
            11,  0,   0,   0,   0,   0,   0,   0,    2,   'a', 'b', 0,   3,    'e', 'n',  'd'};
        static const char *const want[] = {"co 41 42", "adw 30 61 -1 0 100",
                                           "fo 41 0 2 1 0 2 [11] ab", "Trace end"};
        const struct tm_rcodec *c = &tm_rcodec_ptf_bin;
        assert_ptr_equal(tm_rcodec_probe(hand, sizeof hand), c);
        struct tm_schema s;
        struct tm_rstate st;
        struct tm_err err = {0};
        void *ctx;
        int hl = c->open(hand, sizeof hand, "x.ptfb", &ctx, &s, &st, &err);
        assert_int_equal(hl, 15);
        struct tm_blob blob;
        assert_int_equal(c->blobs(ctx, &blob, 1), 1);
        assert_string_equal(blob.name, "notes");
        assert_int_equal(blob.n, 5);
        struct tm_rec r[NREC];
        size_t used;
        ssize_t n = c->decode(ctx, &st, hand + hl, sizeof hand - (size_t)hl, 1, (uint64_t)hl, &used,
                              r, NREC, &err);
        if (n < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(n, 4);
        for (size_t i = 0; i < 4; i++) {
                char got[256];
                show(&r[i], got, sizeof got);
                assert_string_equal(got, want[i]);
        }
        /* cut inside the fo: -EIO naming its offset (24) */
        struct tm_rstate st2;
        c->close(ctx);
        hl = c->open(hand, sizeof hand, "x.ptfb", &ctx, &s, &st2, &err);
        n = c->decode(ctx, &st2, hand + hl, 30 - (size_t)hl, 0, (uint64_t)hl, &used, r, NREC, &err);
        assert_int_equal(n, 2);
        assert_int_equal(used, 24 - 15);
        n = c->decode(ctx, &st2, hand + 24, 30 - 24, 1, 24, &used, r, NREC, &err);
        assert_int_equal(n, -EIO);
        assert_non_null(strstr(err.msg, "raw offset 24: ptf binary record 2: truncated"));
        c->close(ctx);

        /* Figure 3: ascii -> records -> binary -> records, and the view */
        size_t len;
        char *text = (char *)tmt_slurp(FIGURE3, &len);
        text = realloc(text, len + 1);
        text[len] = 0;
        ssize_t nf = decode_all(text, r, &err);
        assert_int_equal(nf, NFIG);
        struct tmt_buf b = {0};
        struct tm_renc *e;
        assert_int_equal(c->enc_open(NULL, sink_buf, &b, &e, &err), 0);
        for (size_t i = 0; i < NFIG; i++)
                assert_int_equal(c->enc_put(e, &r[i], 1, i, &err), 0);
        assert_int_equal(c->enc_finish(e, &err), 0);
        assert_true(b.len < len); /* smaller than the text */
        hl = c->open(b.p, b.len, "f.ptfb", &ctx, &s, &st, &err);
        assert_int_equal(hl, 10);
        struct tm_rec r2[NREC];
        n = c->decode(ctx, &st, b.p + hl, b.len - (size_t)hl, 1, (uint64_t)hl, &used, r2, NREC,
                      &err);
        assert_int_equal(n, NFIG);
        for (size_t i = 0; i < NFIG; i++) {
                char got[256];
                show(&r2[i], got, sizeof got);
                assert_string_equal(got, figure3[i]);
        }
        c->close(ctx);
        const char *path = tmt_path("figure3.ptfb");
        assert_int_equal(tmt_spit(path, b.p, b.len), 0);
        char *ascii = view_text(path, "ascii");
        assert_string_equal(ascii, text);
        free(ascii);
        free(b.p);
        free(text);
}

/* ---- conversion: both forms' writers ---- */

/* The trace in in[0..len) (of row from) written by row to into out: each
 * decode call's records put before the next call (fo lists live until
 * then). 0, or the writer's or decoder's error. */
static int convert(const struct tm_rcodec *from, const uint8_t *in, size_t len,
                   const struct tm_rcodec *to, struct tmt_buf *out, struct tm_err *err)
{
        struct tm_schema s;
        struct tm_rstate st;
        void *ctx;
        int hl = from->open(in, len, "x", &ctx, &s, &st, err);
        assert_true(hl >= 0);
        struct tm_renc *e;
        out->len = 0;
        assert_int_equal(to->enc_open(NULL, sink_buf, out, &e, err), 0);
        static struct tm_rec r[300];
        size_t pos = (size_t)hl;
        uint64_t idx = 0;
        for (;;) {
                size_t used = 0;
                ssize_t n = from->decode(ctx, &st, in + pos, len - pos, 1, pos, &used, r, 300, err);
                int rc = n < 0 ? (int)n : to->enc_put(e, r, (size_t)n, idx, err);
                if (rc < 0) {
                        to->enc_free(e);
                        from->close(ctx);
                        return rc;
                }
                if (n == 0 && used == 0)
                        break;
                idx += (uint64_t)n;
                pos += used;
        }
        from->close(ctx);
        return to->enc_finish(e, err);
}

/* ASCII -> binary -> ASCII: the same bytes; and the ascii view of both
 * files is the text. */
static void assert_both_ways(const char *text, const char *name)
{
        size_t len = strlen(text);
        struct tmt_buf bin = {0}, back = {0};
        struct tm_err err = {0};
        if (convert(&tm_rcodec_ptf, (const uint8_t *)text, len, &tm_rcodec_ptf_bin, &bin, &err) <
                0 ||
            convert(&tm_rcodec_ptf_bin, bin.p, bin.len, &tm_rcodec_ptf, &back, &err) < 0)
                fail_msg("%s: %s", name, err.msg);
        if (back.len != len || memcmp(back.p, text, len) != 0)
                fail_msg("%s: ascii -> binary -> ascii: %zu bytes, not the same %zu", name,
                         back.len, len);
        char file[64];
        snprintf(file, sizeof file, "%s.ptf", name);
        assert_int_equal(tmt_spit(tmt_path(file), text, len), 0);
        snprintf(file, sizeof file, "%s.ptfb", name);
        assert_int_equal(tmt_spit(tmt_path(file), bin.p, bin.len), 0);
        for (int b = 0; b < 2; b++) {
                snprintf(file, sizeof file, "%s.%s", name, b ? "ptfb" : "ptf");
                char *ascii = view_text(tmt_path(file), "ascii");
                if (strcmp(ascii, text) != 0)
                        fail_msg("%s: the ascii view is not the text", file);
                free(ascii);
        }
        free(bin.p);
        free(back.p);
}

/* A trace of n events of every type of Table 1, parameters made up here
 * with printf (not the renderer): fo with 0, 1 and several data members
 * and 0, 1 and 2 arrays, class names with blanks, '%' and none at all,
 * negative Offsets, 64-bit OIds. */
static char *gen_trace(size_t n, uint64_t seed)
{
        size_t cap = 64 + n * 200, len = 0;
        char *t = malloc(cap);
        assert_non_null(t);
#define OUT(...) (len += (size_t)snprintf(t + len, cap - len, __VA_ARGS__))
        OUT("Trace begin\n");
        static const char *const names[] = {"", "X", "BinTreeNode", "a b", " lead%20 ", "x%"};
        for (size_t i = 0; i < n; i++) {
                unsigned k = (unsigned)(TM_PK_FO + i % (TM_PK_N - 1));
                uint64_t a = tmt_below(&seed, 100), b = tmt_rand(&seed) >> tmt_below(&seed, 64);
                int64_t off = (int64_t)tmt_below(&seed, 7) - 2;
                OUT("%s", tm_schema_ptf.kind[k].name);
                switch (k) {
                case TM_PK_FO: {
                        unsigned nd = (unsigned)(i / 14 % 4 == 3 ? 7 : i / 14 % 4);
                        unsigned na = (unsigned)(i / 56 % 3);
                        const char *nm = names[i / 14 % 6];
                        OUT(" %llu %llu 2 %u %u %zu", (unsigned long long)b, (unsigned long long)a,
                            nd, na, strlen(nm));
                        for (unsigned j = 0; j < nd + 2 * na; j++)
                                OUT(" %llu", (unsigned long long)tmt_below(&seed, 1000));
                        if (*nm)
                                OUT(" %s", nm);
                        break;
                }
                case TM_PK_CAO:
                        OUT(" %llu %llu %llu 100", (unsigned long long)a, (unsigned long long)b,
                            (unsigned long long)a);
                        break;
                case TM_PK_DR:
                case TM_PK_DW:
                        OUT(" %llu %llu %lld", (unsigned long long)a, (unsigned long long)b,
                            (long long)off);
                        break;
                case TM_PK_ADR:
                case TM_PK_ADW:
                        OUT(" %llu %llu %lld 3 %llu", (unsigned long long)a, (unsigned long long)b,
                            (long long)off, (unsigned long long)a);
                        break;
                case TM_PK_ER:
                        OUT(" %llu %llu 1", (unsigned long long)a, (unsigned long long)b);
                        break;
                case TM_PK_EW:
                        OUT(" %llu %llu 0 %llu", (unsigned long long)a, (unsigned long long)b,
                            (unsigned long long)a);
                        break;
                case TM_PK_GR:
                case TM_PK_TS:
                case TM_PK_TE:
                        break;
                default:
                        OUT(" %llu %llu", (unsigned long long)a, (unsigned long long)b);
                }
                OUT("\n");
        }
        OUT("Trace end\n");
#undef OUT
        assert_true(len < cap);
        return t;
}

/* The ASCII writer: Figure 3 and a generated trace with every event and
 * fo lists of 0, 1 and several ids go to the binary form and back to the
 * same bytes, and the ascii view of each form is the text; an fo line
 * with several member formats (or none) is PTF text in the view. */
static void test_text_writer(void **state)
{
        (void)state;
        size_t len;
        char *fig = (char *)tmt_slurp(FIGURE3, &len);
        fig = realloc(fig, len + 1);
        fig[len] = 0;
        assert_both_ways(fig, "fig3");
        free(fig);
        const char *fo = "Trace begin\n"
                         "fo 50 0 0 2 1 12 11 11 30 10 DesignObject\n"
                         "fo 51 50 5 0 0 13 CompositePart\n"
                         "fo 52 0 0 0 0 0\n"
                         "fo 53 0 0 3 0 7 11 12 13 a b%c d\n"
                         "Trace end\n";
        assert_both_ways(fo, "fo");
        char *gen = gen_trace(3000, 7);
        assert_both_ways(gen, "gen");
        free(gen);
}

/* What the ASCII form cannot hold is refused naming the record; the
 * markers a record stream lacks are added. */
static void test_text_writer_refusals(void **state)
{
        (void)state;
        static const uint8_t list[16] = {11}, nl_name[] = "a\nb", cr_name[] = "ab\r",
                             begin[] = "begin", end[] = "end", other[] = "start";
        const struct tm_rec co = {.kind = TM_PK_CO, .v = {41, 42}};
        const struct tm_rec fo = {
            .kind = TM_PK_FO, .v = {41, 0, 0, 1, 0, 3, 1, 3}, .var = {list, nl_name}};
        const struct tm_rec mark = {.kind = TM_PK_TRACE, .v = {5}, .var = {begin}};
        struct {
                const char *what;
                struct tm_rec r[2];
                size_t n; /* the second record is the bad one when 2 */
        } bad[7] = {
            {"a class name with a line end", {fo}, 1},
            {"a class name with a line end", {fo}, 1},
            {"LengthOfClassName", {fo}, 1},
            {"NumberOfDataMembers", {fo}, 1},
            {"a second 'Trace begin'", {co, mark}, 2},
            {"other than 'begin' and 'end'", {mark}, 1},
            {"a record after 'Trace end'", {mark, co}, 2},
        };
        bad[1].r[0].var[1] = cr_name; /* a name ending in '\r' */
        bad[2].r[0].v[5] = 2;         /* LengthOfClassName 2, the name 3 bytes */
        bad[3].r[0].v[6] = 2;         /* 1 data member, a list of 2 */
        bad[5].r[0].var[0] = other;   /* "Trace start" */
        bad[6].r[0].v[0] = 3;         /* Trace end, then co */
        bad[6].r[0].var[0] = end;
        for (size_t i = 0; i < 7; i++) {
                struct tmt_buf b = {0};
                struct tm_renc *e;
                struct tm_err err = {0};
                assert_int_equal(tm_rcodec_ptf.enc_open(NULL, sink_buf, &b, &e, &err), 0);
                int rc = tm_rcodec_ptf.enc_put(e, bad[i].r, bad[i].n, 7, &err);
                if (rc != -EINVAL || !strstr(err.msg, bad[i].what) ||
                    !strstr(err.msg, bad[i].n == 2 ? "record 8:" : "record 7:"))
                        fail_msg("case %zu: %d %s", i, rc, err.msg);
                tm_rcodec_ptf.enc_free(e);
                free(b.p);
        }
        /* records without markers (a binary trace need not have them) get
         * both; no records at all are the empty trace */
        struct tmt_buf b = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        assert_int_equal(tm_rcodec_ptf.enc_open(NULL, sink_buf, &b, &e, &err), 0);
        assert_int_equal(tm_rcodec_ptf.enc_put(e, &co, 1, 0, &err), 0);
        assert_int_equal(tm_rcodec_ptf.enc_finish(e, &err), 0);
        assert_int_equal(b.len, strlen("Trace begin\nco 41 42\nTrace end\n"));
        assert_memory_equal(b.p, "Trace begin\nco 41 42\nTrace end\n", b.len);
        b.len = 0;
        assert_int_equal(tm_rcodec_ptf.enc_open(NULL, sink_buf, &b, &e, &err), 0);
        assert_int_equal(tm_rcodec_ptf.enc_finish(e, &err), 0);
        assert_memory_equal(b.p, "Trace begin\nTrace end\n", b.len);
        free(b.p);
}

/* A row sink counting the violation rows and those of them exact. */
struct rows_seen {
        struct tm_rows k;
        unsigned violations, violations_exact;
};

static void rows_see(struct tm_rows *k, const struct tm_row *r)
{
        struct rows_seen *rs = (struct rows_seen *)k;
        if (r->key && strcmp(r->key[0], "violations") == 0) {
                rs->violations++;
                rs->violations_exact += r->exact != 0;
        }
}

/* Past the verifier's table (TM_PTF_OIDS_MAX slots, filled to half) the
 * family's memory stays bounded: uses of new OIds are counted as not
 * checked, and stats, stats.json and verify say so rather than vouching. */
static void test_family_bounded(void **state)
{
        (void)state;
        static const char head[] = "Trace begin\n";
        struct tm_schema s;
        struct tm_rstate st;
        void *ctx;
        struct tm_err err = {0};
        assert_int_equal(tm_rcodec_ptf.open((const uint8_t *)head, sizeof head - 1, "x.ptf", &ctx,
                                            &s, &st, &err),
                         0);
        assert_ptr_equal(tm_family_of(&s), &tm_family_object);
        int co = tm_schema_kind(&s, "co");
        int fid = tm_kind_pos(&s.kind[co], (unsigned)tm_schema_field(&s, "FormatId"));
        int oid = tm_kind_pos(&s.kind[co], (unsigned)tm_schema_field(&s, "OId"));
        assert_true(co >= 0 && fid >= 0 && oid >= 0);
        const struct tm_family *f = &tm_family_object;
        struct tm_family_acc *a = f->acc_start(&s);
        assert_non_null(a);
        uint64_t n = TM_PTF_OIDS_MAX / 2 + 5000;
        struct tm_rec r[256];
        memset(r, 0, sizeof r);
        for (uint64_t i = 0; i < n;) {
                size_t k = 0;
                for (; k < 256 && i < n; k++, i++) {
                        r[k].kind = (uint32_t)co;
                        r[k].v[fid] = 11; /* a primitive format */
                        r[k].v[oid] = 1000 + i;
                }
                f->acc_add(a, r, k);
        }
        assert_true(f->acc_peak_mem(a) <= (size_t)TM_PTF_OIDS_MAX * 9 * 3 / 2);
        struct tm_ptf_stats b;
        f->acc_finish(a, &b);
        f->acc_free(a);
        assert_int_equal(b.created, n);
        assert_true(b.unchecked > 0 && b.unchecked <= 5000 + 31);
        assert_true(f->stats_ok(&b));
        char txt[4096];
        struct tm_family_info in = {.name = "t.ptf", .codec = "ptf", .container = "plain"};
        tm_stats_family_text(f, &b, &s, &in, txt, sizeof txt);
        assert_non_null(strstr(txt, "not exact"));
        struct rows_seen rs = {{rows_see}, 0, 0};
        f->rows(&b, &s, &in, &rs.k);
        assert_int_equal(rs.violations, 2 * TM_PR_N); /* count and first_record, per rule */
        assert_int_equal(rs.violations_exact, 0);     /* lower bounds: uses went unchecked */
        assert_int_equal(f->more->verify(&b, &s, &err), -ENOSPC);
        assert_non_null(strstr(err.msg, "not checked"));
        tm_rcodec_ptf.close(ctx);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_figure3_records), cmocka_unit_test(test_figure3_ascii),
            cmocka_unit_test(test_every_event),     cmocka_unit_test(test_errors),
            cmocka_unit_test(test_family_figure3),  cmocka_unit_test(test_family_rules),
            cmocka_unit_test(test_binary),          cmocka_unit_test(test_family_bounded),
            cmocka_unit_test(test_text_writer),     cmocka_unit_test(test_text_writer_refusals),
        };
        return cmocka_run_group_tests(tests, tmt_group_setup, tmt_group_teardown);
}
