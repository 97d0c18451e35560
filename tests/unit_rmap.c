/* codecs/record/rmap.c, the records of one schema as another's by names
 * (what tracetool pack does between an input's row and the output row's
 * encoder): the same schema passes records as they are; an address trace
 * without sizes is refused by lackey's encoder schema and one with sizes
 * maps to PDATS II's; an Appendix C heap schema maps to tm_schema_heap with
 * its realloc outcomes from the addresses (the heap family's rec_refine),
 * missing fields 0 and variable fields carried; a kind the target has not,
 * a field of the wrong type, a kind out of the schema are errors naming the
 * record, for the records of that kind only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "codecs/address/arec.h"
#include "codecs/heap/heap.h"
#include "codecs/record/family.h"
#include "codecs/record/rmap.h"

static void test_same_passes(void **unused)
{
        (void)unused;
        struct tm_rmap m;
        tm_rmap_init(&m, &tm_schema_heap, "hatf", &tm_schema_heap, "metatf",
                     tm_family_of(&tm_schema_heap));
        assert_true(m.same);
        struct tm_rec r = {.kind = TM_HK_FREE, .v = {0x1000, 1, 2, 3}}, o;
        const struct tm_rec *p = NULL;
        struct tm_err err = {0};
        assert_int_equal(tm_rmap_rec(&m, &r, 0, &o, &p, &err), 0);
        assert_ptr_equal(p, &r);
        r.kind = TM_HK_N;
        assert_int_equal(tm_rmap_rec(&m, &r, 7, &o, &p, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "record 7: kind 11 is not in hatf's schema"));
}

static void test_address(void **unused)
{
        (void)unused;
        struct tm_schema din, lackey, enc_lk, enc_p2;
        tm_addr_schema(&din, 8, 0);
        tm_addr_schema(&lackey, 3, 1);
        tm_rcodec_lackey.enc_schema(&enc_lk);
        tm_rcodec_pdats2.enc_schema(&enc_p2);
        struct tm_err err = {0};
        struct tm_rec o;
        const struct tm_rec *p;

        /* din -> lackey: no sizes */
        struct tm_rmap m;
        tm_rmap_init(&m, &din, "din", &enc_lk, "lackey", tm_family_of(&enc_lk));
        assert_false(m.same);
        assert_false(tm_rmap_kind_ok(&m, 0));
        struct tm_rec r = {.kind = 1, .v = {1, 0x7ff0}};
        assert_int_equal(tm_rmap_rec(&m, &r, 3, &o, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "record 3 (write): lackey output needs its field size, "
                                     "which din has not");

        /* lackey -> pdats2: sizes dropped, every kind by name */
        tm_rmap_init(&m, &lackey, "lackey", &enc_p2, "pdats2", tm_family_of(&enc_p2));
        for (unsigned k = 0; k < 3; k++)
                assert_true(tm_rmap_kind_ok(&m, k));
        struct tm_rec l = {.kind = 2, .v = {2, 0x401000, 4}};
        assert_int_equal(tm_rmap_rec(&m, &l, 0, &o, &p, &err), 0);
        assert_ptr_equal(p, &o);
        assert_int_equal(o.kind, 2);
        assert_int_equal(o.v[0], 2);
        assert_int_equal(o.v[1], 0x401000);
        assert_int_equal(o.v[2], 0);

        /* din -> pdats2: the same schema, records pass; and with fewer
         * types, each in the same place */
        tm_rmap_init(&m, &din, "din", &enc_p2, "pdats2", tm_family_of(&enc_p2));
        assert_true(m.same);
        struct tm_schema din6;
        tm_addr_schema(&din6, 6, 0);
        tm_rmap_init(&m, &din6, "din", &enc_p2, "pdats2", tm_family_of(&enc_p2));
        assert_true(m.same);
        assert_int_equal(tm_rmap_rec(&m, &r, 0, &o, &p, &err), 0);
        assert_ptr_equal(p, &r);

        /* heap -> pdats2: no such kinds, named */
        tm_rmap_init(&m, &tm_schema_heap, "hatf", &enc_p2, "pdats2", tm_family_of(&enc_p2));
        struct tm_rec h = {.kind = TM_HK_ALLOC};
        assert_int_equal(tm_rmap_rec(&m, &h, 0, &o, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "record 0 (alloc): pdats2 output has no alloc records (it "
                                     "takes address records)");
}

/* Appendix C's HATF DTD as the DTD compiler names it: one realloc kind
 * with no size, fields in another order, the variable field last. */
static void appendix_c(struct tm_schema *s)
{
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "heap");
        static const char *const fields[] = {"text",   "size", "address",    "time",
                                             "thread", "heap", "attributes", "new_address"};
        s->nfields = 8;
        for (unsigned f = 0; f < 8; f++) {
                snprintf(s->field[f].name, sizeof s->field[f].name, "%s", fields[f]);
                s->field[f].type = f == 0 ? TM_FT_TEXT : f == 6 ? TM_FT_BYTES : TM_FT_UINT;
        }
        s->nkinds = 3;
        s->kind[0] = (struct tm_kind){.name = "comment", .nfields = 1, .field = {0}};
        s->kind[1] = (struct tm_kind){.name = "alloc", .nfields = 6, .field = {1, 2, 3, 4, 5, 6}};
        s->kind[2] = (struct tm_kind){.name = "realloc", .nfields = 6, .field = {2, 7, 3, 4, 5, 6}};
}

static unsigned realloc_kind(const struct tm_rmap *m, uint64_t old, uint64_t new_addr)
{
        static const uint8_t attr[] = "caller=main";
        struct tm_rec r = {.kind = 2, .v = {old, new_addr, 9, 1, 0, 11}, .var = {attr}}, o;
        const struct tm_rec *p;
        struct tm_err err = {0};
        assert_int_equal(tm_rmap_rec(m, &r, 0, &o, &p, &err), 0);
        /* size, address, new_address, thread, heap, time, attributes */
        assert_int_equal(o.v[0], 0);
        assert_int_equal(o.v[1], old);
        assert_int_equal(o.v[2], new_addr);
        assert_int_equal(o.v[3], 1);
        assert_int_equal(o.v[5], 9);
        assert_int_equal(o.v[6], 11);
        assert_ptr_equal(o.var[0], attr);
        return o.kind;
}

static void test_heap_appendix_c(void **unused)
{
        (void)unused;
        struct tm_schema c;
        appendix_c(&c);
        struct tm_rmap m;
        tm_rmap_init(&m, &c, "metatf", &tm_schema_heap, "hatf", tm_family_of(&tm_schema_heap));
        assert_false(m.same);
        assert_int_equal(realloc_kind(&m, 0, 0x2000), TM_HK_REALLOC_ALLOC);
        assert_int_equal(realloc_kind(&m, 0x1000, 0), TM_HK_REALLOC_FREE);
        assert_int_equal(realloc_kind(&m, 0x1000, 0x1000), TM_HK_REALLOC);
        assert_int_equal(realloc_kind(&m, 0x1000, 0x2000), TM_HK_REALLOC_ALLOC_FREE);

        static const uint8_t text[] = "a comment";
        struct tm_rec r = {.kind = 0, .v = {9}, .var = {text}}, o;
        const struct tm_rec *p;
        struct tm_err err = {0};
        assert_int_equal(tm_rmap_rec(&m, &r, 0, &o, &p, &err), 0);
        assert_int_equal(o.kind, TM_HK_COMMENT);
        assert_int_equal(o.v[0], 9);
        assert_ptr_equal(o.var[0], text);

        /* a schema where the address is text: that kind is refused, others map */
        c.field[2].type = TM_FT_TEXT;
        tm_rmap_init(&m, &c, "odd", &tm_schema_heap, "hatf", tm_family_of(&tm_schema_heap));
        assert_true(tm_rmap_kind_ok(&m, 0));
        assert_false(tm_rmap_kind_ok(&m, 1));
        struct tm_rec a = {.kind = 1};
        assert_int_equal(tm_rmap_rec(&m, &a, 5, &o, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "record 5 (alloc): its field address is not of the type hatf "
                                     "output's is");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_same_passes),
            cmocka_unit_test(test_address),
            cmocka_unit_test(test_heap_appendix_c),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
