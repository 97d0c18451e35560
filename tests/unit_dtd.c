/* Meta-TF DTDs: Appendix C's HATF DTD parsed and compiled field by field,
 * the shipped copies against the files, hatf10v2.dtd, handwritten DTDs with
 * sections, composite, repeated, nested and inline records, scopes and
 * property references, the display and previous properties, and malformed
 * DTDs each rejected at the right line:column. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codecs/metatf/dtd.h"
#include "codecs/metatf/metatf.h"

#define HATF_DTD TM_SOURCE_DIR "/codecs/metatf/dtd/hatf10.dtd"
#define HATF2_DTD TM_SOURCE_DIR "/codecs/metatf/dtd/hatf10v2.dtd"

static struct mtf_dtd dtd;
static struct mtf_layout lay;

static char *slurp(const char *path, size_t *len)
{
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        char *buf = malloc(MTF_DTD_TEXT_MAX + 1);
        *len = fread(buf, 1, MTF_DTD_TEXT_MAX + 1, f);
        fclose(f);
        buf[*len] = '\0';
        return buf;
}

/* Parse and compile text; returns the first error. */
static int build(const char *text, struct tm_err *err)
{
        int ret = mtf_dtd_parse(&dtd, "t.dtd", text, strlen(text), err);
        return ret < 0 ? ret : mtf_dtd_compile(&dtd, &lay, err);
}

static void build_ok(const char *text)
{
        struct tm_err err = {0};
        if (build(text, &err) < 0)
                fail_msg("%s", err.msg);
}

static const struct mtf_kind *kind(const char *name)
{
        for (unsigned i = 0; i < lay.nkinds; i++)
                if (strcmp(lay.kind[i].name, name) == 0)
                        return &lay.kind[i];
        fail_msg("no kind %s", name);
        return NULL;
}

/* Check leaf i of k: name, width, interpretation and first argument. */
static void leaf_is(const struct mtf_kind *k, unsigned i, const char *name, unsigned width,
                    unsigned interp, uint64_t arg0)
{
        assert_true(i < k->nleaves);
        const struct mtf_leaf *l = &k->leaf[i];
        assert_string_equal(l->name, name);
        assert_int_equal(l->width, width);
        assert_int_equal(l->interp, interp);
        assert_int_equal(l->arg[0], arg0);
}

static void test_appendix_c(void **unused)
{
        (void)unused;
        size_t len;
        char *text = slurp(HATF_DTD, &len);
        struct tm_err err = {0};
        int ret = mtf_dtd_parse(&dtd, "hatf10.dtd", text, len, &err);
        if (ret < 0)
                fail_msg("%s", err.msg);
        /* the tree: 4 predefined records, 7 of HATF; one section */
        assert_int_equal(dtd.nrecords, 11);
        assert_int_equal(dtd.nsections, 1);
        assert_string_equal(dtd.section[0].name, "heap");
        assert_int_equal(dtd.section[0].number, 1);
        assert_int_equal(dtd.section[0].line, 12);
        const struct mtf_rdef *alloc = &dtd.record[4];
        assert_string_equal(alloc->name, "alloc");
        assert_int_equal(alloc->section, 0);
        assert_int_equal(alloc->line, 13);
        assert_int_equal(alloc->col, 5);
        assert_int_equal(dtd.node[alloc->field].type, MTF_N_GROUP);
        unsigned nchild = 0;
        for (int c = dtd.node[alloc->field].child; c >= 0; c = dtd.node[c].next)
                nchild++;
        assert_int_equal(nchild, 7);
        /* time.interpretation = default 0; // hence, width=0 */
        const struct mtf_prop *tp = NULL;
        for (unsigned i = 0; i < dtd.nprops; i++)
                if (strcmp(dtd.prop[i].field, "time") == 0 && dtd.prop[i].record < 0 &&
                    dtd.prop[i].prop == MTF_P_INTERP)
                        tp = &dtd.prop[i];
        assert_non_null(tp);
        assert_int_equal(tp->line, 8);
        assert_int_equal(tp->col, 1);
        assert_int_equal(tp->vkind, MTF_V_INTERP);
        assert_int_equal(tp->interp, MTF_I_DEFAULT);

        if (mtf_dtd_compile(&dtd, &lay, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(lay.tag_width, 1);
        static const char *const names[] = {
            "comment", "section",    "metadata",    "alloc",        "realloc",
            "free",    "createHeap", "destroyHeap", "createThread", "destroyThread"};
        assert_int_equal(lay.nkinds, 10);
        for (unsigned i = 0; i < 10; i++) {
                assert_string_equal(lay.kind[i].name, names[i]);
                assert_int_equal(lay.kind[i].tag, i + 1);
                assert_int_equal(lay.kind[i].section, i < 3 ? -1 : 0);
        }
        assert_int_equal(lay.kind[1].role, MTF_R_SECTION);
        assert_int_equal(lay.kind[2].role, MTF_R_METADATA);
        const struct mtf_kind *k = kind("alloc");
        assert_int_equal(k->nleaves, 8);
        leaf_is(k, 0, "tag", 1, MTF_I_NONE, 0);
        assert_int_equal(k->leaf[0].value, 4);
        leaf_is(k, 1, "size", 4, MTF_I_NONE, 0);
        leaf_is(k, 2, "address", 4, MTF_I_NONE, 0);
        leaf_is(k, 3, "time", 0, MTF_I_DEFAULT, 0);
        leaf_is(k, 4, "thread", 0, MTF_I_DEFAULT, 0);
        leaf_is(k, 5, "heap", 0, MTF_I_DEFAULT, 0);
        leaf_is(k, 6, "length", 1, MTF_I_NONE, 0);
        assert_true(k->leaf[6].is_len && k->leaf[6].vfield);
        leaf_is(k, 7, "data", 0, MTF_I_NONE, 0);
        assert_int_equal(k->leaf[7].width_of, 6);
        assert_true(mtf_leaf_is_bytes(&k->leaf[7]));
        k = kind("realloc");
        assert_int_equal(k->nleaves, 8);
        leaf_is(k, 1, "address", 4, MTF_I_NONE, 0);
        leaf_is(k, 2, "address", 4, MTF_I_NONE, 0);
        k = kind("destroyThread");
        assert_int_equal(k->nleaves, 4);
        assert_int_equal(k->leaf[0].value, 10);
        /* the predefined ones: comment is an implied tag and a vfield */
        k = kind("comment");
        assert_int_equal(k->nleaves, 3);
        leaf_is(k, 0, "tag", 1, MTF_I_NONE, 0);
        assert_int_equal(k->leaf[2].width_of, 1);
        k = kind("metadata");
        leaf_is(k, 1, "record", 1, MTF_I_NONE, 0); /* record.width = tag.width */
        leaf_is(k, 4, "value", 4, MTF_I_NONE, 0);
        free(text);
}

static void test_shipped_is_the_file(void **unused)
{
        (void)unused;
        size_t len;
        char *text = slurp(HATF_DTD, &len);
        assert_string_equal(mtf_dtd_shipped[0].name, "hatf10.dtd");
        /* run codecs/metatf/gen_shipped.sh when this fails */
        assert_string_equal(mtf_dtd_shipped[0].text, text);
        free(text);
        text = slurp(HATF2_DTD, &len);
        assert_string_equal(mtf_dtd_shipped[1].name, "hatf10v2.dtd");
        assert_string_equal(mtf_dtd_shipped[1].text, text);
        free(text);
        /* the others (bound formats' DTDs): each is its file in dtd/ */
        for (unsigned i = 2; mtf_dtd_shipped[i].name; i++) {
                char path[512];
                snprintf(path, sizeof path, "%s/codecs/metatf/dtd/%s", TM_SOURCE_DIR,
                         mtf_dtd_shipped[i].name);
                text = slurp(path, &len);
                assert_string_equal(mtf_dtd_shipped[i].text, text);
                free(text);
        }
}

/* The DTD tracemount writes: Appendix C's with HATF 1.0's four realloc
 * records, each with a size, fields in Appendix A's order; previous values
 * per field; addresses in hex. hatf10.dtd keeps them per record (the files
 * written with it). */
static void test_hatf10v2(void **unused)
{
        (void)unused;
        struct tm_err err = {0};
        const char *t = mtf_dtd_shipped[1].text;
        if (mtf_dtd_parse(&dtd, "hatf10v2.dtd", t, strlen(t), &err) < 0 ||
            mtf_dtd_compile(&dtd, &lay, &err) < 0)
                fail_msg("%s", err.msg);
        static const char *const names[] = {"alloc",        "realloc",       "free",
                                            "createHeap",   "destroyHeap",   "createThread",
                                            "destroyThread", "realloc_alloc_free",
                                            "realloc_alloc", "realloc_free"};
        assert_int_equal(lay.nkinds, 13);
        for (unsigned i = 0; i < 10; i++) {
                assert_string_equal(lay.kind[3 + i].name, names[i]);
                assert_int_equal(lay.kind[3 + i].tag, 4 + i);
        }
        const struct mtf_kind *k = kind("realloc_free");
        assert_int_equal(k->nleaves, 9);
        leaf_is(k, 1, "size", 4, MTF_I_NONE, 0);
        leaf_is(k, 2, "address", 4, MTF_I_NONE, 0);
        leaf_is(k, 3, "address", 4, MTF_I_NONE, 0);
        leaf_is(k, 4, "thread", 0, MTF_I_DEFAULT, 0);
        leaf_is(k, 6, "time", 0, MTF_I_DEFAULT, 0);
        for (unsigned i = 1; i < 8; i++)
                assert_int_equal(k->leaf[i].previous, MTF_PV_FIELD);
        assert_int_equal(k->leaf[2].display, MTF_D_HEX);
        assert_int_equal(k->leaf[1].display, MTF_D_UNSET);
        leaf_is(kind("createHeap"), 1, "heap", 0, MTF_I_DEFAULT, 0);
        t = mtf_dtd_shipped[0].text;
        if (mtf_dtd_parse(&dtd, "hatf10.dtd", t, strlen(t), &err) < 0 ||
            mtf_dtd_compile(&dtd, &lay, &err) < 0)
                fail_msg("%s", err.msg);
        k = kind("realloc");
        for (unsigned i = 1; i < 7; i++)
                assert_int_equal(k->leaf[i].previous, MTF_PV_RECORD);
        assert_int_equal(kind("comment")->leaf[1].previous, MTF_PV_FIELD); /* global */
}

/* display and previous, scoped like the other properties; field and
 * property names are still free to be "display" and "previous". */
static void test_display_previous(void **unused)
{
        (void)unused;
        build_ok("x.width = 2; x.interpretation = delta 0; x.display = hex;\n"
                 "display.width = 1; display.interpretation = none;\n"
                 "section s 1 {\n"
                 "  x.previous = record;\n"
                 "  r : (tag, x, display) { tag.value = 4; x.display = decimal; }\n"
                 "  q : (tag, x, display) { tag.value = 5; x.previous = field;\n"
                 "    display.display = hex; }\n"
                 "}\n"
                 "section t 2 { p : (tag, x) { tag.value = 4; } }\n");
        const struct mtf_kind *r = kind("r"), *q = kind("q"), *p = kind("p");
        assert_int_equal(r->leaf[1].display, MTF_D_DECIMAL);
        assert_int_equal(r->leaf[1].previous, MTF_PV_RECORD);
        assert_int_equal(r->leaf[2].display, MTF_D_UNSET);
        assert_int_equal(q->leaf[1].display, MTF_D_HEX);
        assert_int_equal(q->leaf[1].previous, MTF_PV_FIELD);
        assert_int_equal(q->leaf[2].display, MTF_D_HEX);
        assert_int_equal(p->leaf[1].previous, MTF_PV_FIELD);
        assert_int_equal(r->leaf[1].line, 5);
        assert_int_equal(r->leaf[1].col, 13);
}

/* Sections, composite and repeated fields, inline records, section-level
 * properties, negative and hex arguments, constant values. */
static void test_handwritten(void **unused)
{
        (void)unused;
        build_ok("tag.width = 2;\n"
                 "/* a block\n   comment */ x.width = 2; x.interpretation = delta 100;\n"
                 "section strings 1 {\n"
                 "  name : (tag, n*(a, b), pt : (x, y) { y.width = 8;\n"
                 "         y.interpretation = baseOffset 0x1000; }, vfield) {\n"
                 "    tag.value = 300; n.width = 1; n.interpretation = none;\n"
                 "    a.width = 1; a.interpretation = none;\n"
                 "    b.width = 2; b.interpretation = stride 5 -2;\n"
                 "  }\n"
                 "}\n"
                 "section addrs 2 {\n"
                 "  x.interpretation = sectionStride 2 1; // for this section's records\n"
                 "  ev : (tag, x, (k, (m, x))) { tag.value = 4; k.width = 3;\n"
                 "    k.interpretation = sectionOffset 2; m.value = 7; m.width = 1;\n"
                 "    m.interpretation = none; }\n"
                 "}\n");
        assert_int_equal(lay.tag_width, 2);
        assert_int_equal(lay.nsections, 2);
        assert_string_equal(lay.section[1].name, "addrs");
        assert_int_equal(lay.section[1].number, 2);
        const struct mtf_kind *k = kind("name");
        assert_int_equal(k->tag, 300);
        assert_int_equal(k->section, 0);
        assert_int_equal(k->nleaves, 8); /* tag n a b x y length data */
        leaf_is(k, 1, "n", 1, MTF_I_NONE, 0);
        assert_int_equal(k->leaf[1].rep, 2);
        leaf_is(k, 2, "a", 1, MTF_I_NONE, 0);
        leaf_is(k, 3, "b", 2, MTF_I_STRIDE, 5);
        assert_int_equal(k->leaf[3].arg[1], (uint64_t)-2);
        assert_true(k->leaf[2].in_rep && k->leaf[3].in_rep && !k->leaf[4].in_rep);
        leaf_is(k, 4, "x", 2, MTF_I_DELTA, 100); /* the global x */
        leaf_is(k, 5, "y", 8, MTF_I_BASEOFFSET, 0x1000);
        leaf_is(k, 6, "length", 1, MTF_I_NONE, 0);
        assert_int_equal(k->leaf[7].width_of, 6);
        k = kind("ev");
        assert_int_equal(k->nleaves, 5);
        leaf_is(k, 1, "x", 2, MTF_I_SECTIONSTRIDE, 2); /* section 2's x, global width */
        assert_int_equal(k->leaf[1].arg[1], 1);
        leaf_is(k, 2, "k", 3, MTF_I_SECTIONOFFSET, 2);
        leaf_is(k, 3, "m", 1, MTF_I_NONE, 0);
        assert_true(k->leaf[3].has_value);
        assert_int_equal(k->leaf[3].value, 7);
        leaf_is(k, 4, "x", 2, MTF_I_SECTIONSTRIDE, 2);
}

/* A kind's own properties win over those of the records it nests, which
 * win over the section's and the global ones; width = other.width. */
static void test_scopes_and_refs(void **unused)
{
        (void)unused;
        build_ok("tag.width = 3; length.width = 4; q.width = 1; q.interpretation = none;\n"
                 "outside : (q) { tag.value = 6; }\n"
                 "section s 9 {\n"
                 "  q.width = 2;\n"
                 "  r : (vfield, q, z) { tag.value = 70000; length.width = 2;\n"
                 "    z.width = tag.width; z.interpretation = none; }\n"
                 "  plain : (q) { tag.value = 5; }\n"
                 "}\n");
        const struct mtf_kind *k = kind("r");
        leaf_is(k, 0, "tag", 3, MTF_I_NONE, 0);
        leaf_is(k, 1, "length", 2, MTF_I_NONE, 0); /* r's, not vfield's 1 or the global 4 */
        leaf_is(k, 3, "q", 2, MTF_I_NONE, 0);      /* the section's width */
        leaf_is(k, 4, "z", 3, MTF_I_NONE, 0);
        leaf_is(kind("plain"), 1, "q", 2, MTF_I_NONE, 0);
        leaf_is(kind("outside"), 1, "q", 1, MTF_I_NONE, 0);
        assert_int_equal(kind("outside")->section, -1);
}

/* The same tag may be used in two sections; a section's record shadows a
 * global type of the same name. */
static void test_section_scoping(void **unused)
{
        (void)unused;
        build_ok("pair : (u, v) { u.width = 1; u.interpretation = none;\n"
                 "                v.width = 1; v.interpretation = none; }\n"
                 "section one 1 { e : (tag, pair) { tag.value = 4; } }\n"
                 "section two 2 {\n"
                 "  pair : (w) { w.width = 2; w.interpretation = none; }\n"
                 "  e : (tag, pair) { tag.value = 4; }\n"
                 "}\n");
        assert_int_equal(lay.nkinds, 5);
        assert_int_equal(lay.kind[3].nleaves, 3);
        assert_int_equal(lay.kind[4].nleaves, 2);
        leaf_is(&lay.kind[4], 1, "w", 2, MTF_I_NONE, 0);
}

struct bad {
        const char *text;
        int code;
        const char *where; /* "t.dtd:L:C: " */
        const char *what;
};

static const struct bad bads[] = {
    {"tag.width=1\nsize.width = 4;", -EIO, "t.dtd:2:1: ", "expected ';'"},
    {"x : (a, b", -EIO, "t.dtd:1:10: ", "expected ',' or ')'"},
    {"x : (a,, b) { }", -EIO, "t.dtd:1:8: ", "expected a field name or '('"},
    {"x.colour = 4;", -EIO, "t.dtd:1:3: ",
     "expected width, interpretation, value, display or previous"},
    {"x.display = octal;", -EIO, "t.dtd:1:13: ", "expected hex or decimal"},
    {"x.display = 16;", -EIO, "t.dtd:1:13: ", "expected hex or decimal"},
    {"x.previous = kind;", -EIO, "t.dtd:1:14: ", "expected field or record"},
    {"x.width = y.display;", -EIO, "t.dtd:1:13: ", "expected width, interpretation or value"},
    {"x.display = hex; x.display = decimal;", -EIO, "t.dtd:1:18: ", "already set"},
    {"r : (tag) { tag.value = 4; tag.display = hex; }", -EIO, "t.dtd:1:28: ", "the tag"},
    {"x.interpretation = sometimes;", -EIO, "t.dtd:1:20: ", "expected an interpretation"},
    {"x.interpretation = stride 1;", -EIO, "t.dtd:1:28: ", "expected a number"},
    {"\n  /* open comment\n x.width=1;", -EIO, "t.dtd:2:3: ", "unterminated comment"},
    {"section s 0 { }", -EIO, "t.dtd:1:11: ", "section numbers are 1..255"},
    {"section s 1 { }\nsection t 1 { }", -EIO, "t.dtd:2:1: ", "repeats the name or number"},
    {"section s 1 { }\nx.width = 1;", -EIO, "t.dtd:2:1: ", "expected 'section'"},
    {"vfield : (a) { }", -EIO, "t.dtd:1:1: ", "'vfield' is a reserved name"},
    {"x.width = 1; x.width = 2;", -EIO, "t.dtd:1:14: ", "x.width is already set"},
    {"section s 1 { tag.width = 2; }", -EIO, "t.dtd:1:15: ", "only be set globally"},
    {"x : a { a.width = 1; }\nx : b { }", -EIO, "t.dtd:2:1: ", "already defined"},
    {"x $ y", -EIO, "t.dtd:1:3: ", "unexpected character '$'"},
    {"x.width = 99999999999999999999;", -EIO, "t.dtd:1:11: ", "number too large"},
    {"section s 1 { section t 2 { } }", -EIO, "t.dtd:1:15: ", "sections do not nest"},
    {"x : (a, b) { a.width = 1 }", -EIO, "t.dtd:1:26: ", "expected ';'"},
    {"x.width = 0x;", -EIO, "t.dtd:1:11: ", "expected hex digits after 0x"},
    {"section s 1 { x.width = 1;", -EIO, "t.dtd:1:27: ", "expected a record, a property"},
    {"x y", -EIO, "t.dtd:1:3: ", "expected ':' or '.'"},
    {"x.width = 1; }", -EIO, "t.dtd:1:14: ", "expected a record, a property or a section"},
    {"tag.interpretation = delta 0;", -EIO, "t.dtd:1:1: ", "the tag's interpretation"},
    {"aaaaaaaaaabbbbbbbbbbccccccccccdd.width = 1;", -ENOTSUP, "t.dtd:1:1: ", "name too long"},
    {"x.interpretation = sectionStride 256 1;", -EIO, "t.dtd:1:1: ", "1..255"},
    {"x : ((((((((((a)))))))))) { }", -ENOTSUP, "t.dtd:1:", "nested too deep"},
    {"x.width = 1;\x01", -EIO, "t.dtd:1:13: ", "unexpected byte 0x01"},
    /* the compiler's */
    {"r : (tag, a) { tag.value = 4; }", -EIO,
     "t.dtd:1:11: ", "field 'a' of record 'r' has no interpretation"},
    {"r : (tag, a) { tag.value = 4; a.interpretation = none; }", -EIO,
     "t.dtd:1:11: ", "field 'a' of record 'r' has no width"},
    {"r : (a, tag) { tag.value = 4; a.width=1; a.interpretation=none; }", -EIO,
     "t.dtd:1:9: ", "tag must be the first field"},
    {"tag.width = 1;\nr : (tag, a) { tag.value = 300; a.width=1; a.interpretation=none; }", -EIO,
     "t.dtd:2:1: ", "does not fit tag.width"},
    {"r : a { tag.value = 1; a.width=1; a.interpretation=none; }", -EIO,
     "t.dtd:1:1: ", "record 'r' has the tag of 'comment'"},
    {"r : (tag, n*(a, m*b)) { tag.value = 9; }", -ENOTSUP,
     "t.dtd:1:17: ", "a repeat inside a repeat"},
    {"r : (tag, d) { tag.value=9; d.width = len.value; d.interpretation = none; }", -EIO,
     "t.dtd:1:29: ", "refers to len.value, which does not come before it"},
    {"a : b { tag.value = 9; }\nb : a", -EIO, "t.dtd:2:5: ", "record 'a' contains itself"},
    {"r : (tag, a) { a.width = 1; a.interpretation = none; }", -EIO,
     "t.dtd:1:1: ", "has a tag but no tag.value"},
    {"r : (tag, a) { tag.value = 9; a.width = 16; a.interpretation = delta 0; }", -ENOTSUP,
     "t.dtd:1:11: ", "is bytes"},
    {"r : (tag, a) { tag.value = 9; a.width = 9999; a.interpretation = none; }", -ENOTSUP,
     "t.dtd:1:31: ", "over the cap"},
    {"r : (tag, a) { tag.value = 9; a.interpretation = sectionStride 3 1; }", -EIO,
     "t.dtd:1:11: ", "has no width"},
    {"r : (tag, a) { tag.value = 9; a.width = b.width; a.interpretation = none; }", -EIO,
     "t.dtd:1:31: ", "refers to b.width, which is not set"},
    {"r : (tag, a) { tag.value = 9; a.width = 1; a.value = b.value; a.interpretation = none; }",
     -ENOTSUP, "t.dtd:1:44: ", "a.value can only be a number"},
    {"r : (tag, vfield) { tag.value = 9; data.display = hex; }", -EIO,
     "t.dtd:1:36: ", "field 'data' of record 'r' is bytes: display is for numbers"},
};

static void test_malformed(void **unused)
{
        (void)unused;
        assert_true(sizeof bads / sizeof bads[0] >= 15);
        for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
                struct tm_err err = {0};
                int ret = build(bads[i].text, &err);
                if (ret != bads[i].code || strncmp(err.msg, bads[i].where, strlen(bads[i].where)) ||
                    !strstr(err.msg, bads[i].what))
                        fail_msg("case %zu (%s): got %d \"%s\", want %d \"%s...%s\"", i,
                                 bads[i].text, ret, err.msg, bads[i].code, bads[i].where,
                                 bads[i].what);
        }
}

/* Appendix C with one ';' removed: the message the brief's example shows. */
static void test_hatf_missing_semicolon(void **unused)
{
        (void)unused;
        size_t len;
        char *text = slurp(HATF_DTD, &len);
        char *semi = strstr(text, "tag.value = 4;") + strlen("tag.value = 4");
        memmove(semi, semi + 1, len - (size_t)(semi - text));
        struct tm_err err = {0};
        assert_int_equal(mtf_dtd_parse(&dtd, "hatf10.dtd", text, len - 1, &err), -EIO);
        assert_string_equal(err.msg, "hatf10.dtd:15:5: expected ';'");
        free(text);
}

/* Over the caps: errors, not more memory. */
static void test_caps(void **unused)
{
        (void)unused;
        size_t cap = 40 * (MTF_DTD_PROPS_MAX + 2);
        char *text = malloc(cap), *p = text;
        for (unsigned i = 0; i <= MTF_DTD_PROPS_MAX; i++)
                p += sprintf(p, "f%u.width = 1;\n", i);
        struct tm_err err = {0};
        assert_int_equal(mtf_dtd_parse(&dtd, "t.dtd", text, strlen(text), &err), -ENOTSUP);
        assert_non_null(strstr(err.msg, "too many properties"));
        p = text;
        for (unsigned i = 0; i <= MTF_DTD_SECTIONS_MAX; i++)
                p += sprintf(p, "section s%u %u { }\n", i, i + 1);
        assert_int_equal(mtf_dtd_parse(&dtd, "t.dtd", text, strlen(text), &err), -ENOTSUP);
        assert_non_null(strstr(err.msg, "too many sections"));
        p = text + sprintf(text, "r : (tag");
        for (unsigned i = 0; i < MTF_LEAVES_MAX; i++)
                p += sprintf(p, ", f%u", i);
        sprintf(p, ") { tag.value = 9; }");
        assert_int_equal(build(text, &err), -ENOTSUP);
        assert_non_null(strstr(err.msg, "too many fields"));
        assert_int_equal(mtf_dtd_parse(&dtd, "t.dtd", text, MTF_DTD_TEXT_MAX + 1, &err), -ENOTSUP);
        free(text);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_appendix_c),
            cmocka_unit_test(test_shipped_is_the_file),
            cmocka_unit_test(test_hatf10v2),
            cmocka_unit_test(test_display_previous),
            cmocka_unit_test(test_handwritten),
            cmocka_unit_test(test_scopes_and_refs),
            cmocka_unit_test(test_section_scoping),
            cmocka_unit_test(test_malformed),
            cmocka_unit_test(test_hatf_missing_semicolon),
            cmocka_unit_test(test_caps),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
