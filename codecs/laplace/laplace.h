/* Laplace traces (Kaplan, "Laplace: Raw Trace Formats", 2002;
 * docs/formats/laplace.md).
 *
 * The raw reference trace is a bound format (codecs/metatf/bound.h): the
 * row laplace_raw in codecs/registry.c and the DTD laplace_raw.dtd
 * (codecs/metatf/dtd/), decoded by the Meta-TF engine. A record is 18
 * bytes, packed, no tag and no header:
 *
 *   offset 0  type     1 byte   the reference's type (a char: 'r', ...)
 *          1  time     8 bytes  cycle counter
 *          9  size     1 byte   bytes referenced
 *         10  space    4 bytes  virtual address space
 *         14  address  4 bytes  virtual address
 *
 * little-endian (the x86 host Laplace wrote them on). The layout lives in
 * the DTD; the constants here are what the probe and the text form need.
 *
 * The text form, one record a line ("r 123456789abcdef0 4 9f8e7
 * 9a8b7c6d": the five fields, numbers in hex), is the record codec
 * tm_rcodec_laplace_text with the raw form's schema (the DTD's), so that
 * the views of the two forms of one trace are the same bytes. */
#ifndef TM_LAPLACE_H
#define TM_LAPLACE_H

#include <stddef.h>
#include <stdint.h>

#include "../record/record.h"

#define TM_LAPLACE_REC 18 /* bytes of a raw record */
#define TM_LAPLACE_OFF_TYPE 0
#define TM_LAPLACE_OFF_SIZE 9
#define TM_LAPLACE_SIZE_MAX 64 /* the probe's bound on size: a cache line */
#define TM_LAPLACE_DTD "laplace_raw.dtd"

/* The raw form's probe beyond the size rule (tm_bound.check): every whole
 * record in head[0..n) has an ASCII letter for its type and a size of
 * 1..TM_LAPLACE_SIZE_MAX, and there is at least one. A stream of random
 * bytes passes one record's test with odds of 1 in 20, a text file's
 * letters and digits rarely line up every 18 bytes: in 4096 bytes (227
 * records) neither takes the row (docs/formats/laplace.md, "Detection"). */
int tm_laplace_raw_check(const uint8_t *head, size_t n);

/* The text form (laplace_text.c): decode-only, the raw form's schema. */
extern const struct tm_rcodec tm_rcodec_laplace_text;

#endif
