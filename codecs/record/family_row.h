/* family_row: how a format module adds its family and its record codec
 * row to a program without a central list naming them.
 *
 * The families of tm_families and the rows of the registry's own list
 * (codecs/registry.c) are the ones every program has. A module that only
 * some programs link (the fixture family of the tests: tests/fixture/,
 * docs/adding-a-format.md) adds its rows with the macros below instead:
 * each puts a pointer to the row in a linker section (tm_family_rows,
 * tm_rcodec_rows), which the linker keeps with the module's object and
 * gathers, over all the objects of the program, between the symbols
 * __start_<section> and __stop_<section>. So a program that links the
 * module has its rows, and one that does not has none; no constructor
 * runs and no table changes at load time.
 *
 *   tm_family_of (family.h) asks tm_families first, then the section's
 *   families, in link order.
 *   The registry (codecs/registry.h) adds the section's rows once, when
 *   it is built, after its own list and the shipped bound rows and
 *   before the rows of TM_BOUND_FORMATS, in link order; their bids are
 *   those of enum tm_bid (record.h), so such a row wins a head only with
 *   a bid above every other row's, as any row does.
 *
 * A module linked from a static library keeps its rows only when the
 * program pulls its object in for some other symbol; the fixture family
 * is linked as an object (tests/meson.build). Show rows of a family's own
 * are added the same way (TM_SHOW_ROW, text.h). */
#ifndef TM_FAMILY_ROW_H
#define TM_FAMILY_ROW_H

struct tm_family; /* family.h */
struct tm_rcodec; /* record.h */

/* Add family f (a const struct tm_family at file scope) to the program. */
#define TM_FAMILY_ROW(f)                                                                           \
        static const struct tm_family *const f##_family_row                                        \
            __attribute__((section("tm_family_rows"), used)) = &(f)

/* Add record codec row c (a const struct tm_rcodec at file scope) to the
 * process's registry. */
#define TM_RCODEC_ROW(c)                                                                           \
        static const struct tm_rcodec *const c##_rcodec_row                                        \
            __attribute__((section("tm_rcodec_rows"), used)) = &(c)

/* The section's families / rows: *end receives the end (none: both NULL). */
const struct tm_family *const *tm_family_rows(const struct tm_family *const **end);
const struct tm_rcodec *const *tm_rcodec_rows(const struct tm_rcodec *const **end);

#endif
