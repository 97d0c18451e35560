/* Laplace traces (Kaplan, "Laplace: Raw Trace Formats", 2002;
 * docs/formats/laplace.md).
 *
 * The raw reference trace is the record codec tm_rcodec_laplace_raw, whose
 * layout is the DTD laplace_raw.dtd (codecs/metatf/dtd/) decoded by the
 * Meta-TF engine (as a bound format's: codecs/metatf/bound.h), with an
 * encoder of its own. A record is 18 bytes, packed, no tag and no header:
 *
 *   offset 0  type     1 byte   the reference's type (a char: 'r', ...)
 *          1  time     8 bytes  cycle counter
 *          9  size     1 byte   bytes referenced
 *         10  space    4 bytes  virtual address space
 *         14  address  4 bytes  virtual address
 *
 * little-endian (the x86 host Laplace wrote them on). The layout lives in
 * the DTD; the constants here are what the probe and the encoders need.
 *
 * The text form, one record a line ("r 123456789abcdef0 4 9f8e7
 * 9a8b7c6d": the five fields, numbers in hex), is the record codec
 * tm_rcodec_laplace_text with the raw form's schema, so that the views of
 * the two forms of one trace are the same bytes. Both write (.lpr, .lpt),
 * from records of tm_laplace_enc_schema.
 *
 * The kernel event trace, text lines "TAG TIME FIELDS..." of the catalog
 * below, is tm_rcodec_laplace_kev (decode only). All three are of the
 * laplace family (tm_family_laplace, lapfamily.c: a module of its own,
 * which the rows point at and which calls none of them). */
#ifndef TM_LAPLACE_H
#define TM_LAPLACE_H

#include <stddef.h>
#include <stdint.h>

#include "../record/family.h"
#include "../record/record.h"
#include "lapfamily.h"

#define TM_LAPLACE_REC 18 /* bytes of a raw record */
#define TM_LAPLACE_OFF_TYPE 0
#define TM_LAPLACE_OFF_TIME 1
#define TM_LAPLACE_OFF_SIZE 9
#define TM_LAPLACE_OFF_SPACE 10
#define TM_LAPLACE_OFF_ADDRESS 14
#define TM_LAPLACE_SIZE_MAX 64 /* the probe's bound on size: a cache line */
#define TM_LAPLACE_DTD "laplace_raw.dtd"
#define TM_LAPLACE_LINE_MAX 128 /* bytes of a text line, both text forms */

/* The fields of a reference, in the DTD's order (the schema's, the raw
 * record's, the text line's). */
enum { TM_LPF_TYPE, TM_LPF_TIME, TM_LPF_SIZE, TM_LPF_SPACE, TM_LPF_ADDRESS, TM_LPF_N };

/* The raw form's probe beyond the size rule: every whole record in
 * head[0..n) has an ASCII letter for its type and a size of
 * 1..TM_LAPLACE_SIZE_MAX, and there is at least one. A stream of random
 * bytes passes one record's test with odds of 1 in 20, a text file's
 * letters and digits rarely line up every 18 bytes: in 4096 bytes (227
 * records) neither takes the row (docs/formats/laplace.md, "Detection"). */
int tm_laplace_raw_check(const uint8_t *head, size_t n);

/* The show of a reference's type, the row tm_show_laplace_type
 * (laplace_raw.c; codecs/record/text.h): one character, the byte itself
 * when it is graphic ASCII and not '%' or '-', else %XX (as a one-byte
 * text token); the stats' range of the field in characters when every
 * value between is graphic. A code kept in schemas (the native
 * encoding): fixed. */
#define TM_LAPLACE_SHOW_TYPE 3

/* The schema of a reference trace, both forms: laplace_raw.dtd's, with the
 * type shown as its character (TM_LAPLACE_SHOW_TYPE). 0 or a negative errno (the
 * DTD's, err set). *mctx receives the Meta-TF context that decodes it
 * (tm_rcodec_metatf's close frees it); mctx NULL: closed here. */
int tm_laplace_ref_open(void **mctx, struct tm_schema *schema, struct tm_rstate *st,
                        struct tm_err *err);

/* ---- the encoders (laplace_enc.c) ----
 *
 * Both forms take records of the schema tm_laplace_enc_schema fills: kind
 * "ref", the five fields (a Laplace trace's own records, by names); and
 * kinds "read", "write" and "ifetch" with fields size and address (an
 * address trace with sizes: lackey's). Those become references of type
 * 'L', 'S', 'I' (valgrind's letters), time the record's number in the
 * trace written (from 0), space the address's high 32 bits and address
 * its low 32 (docs/formats/laplace.md, "From lackey"). A value the form
 * cannot hold (a size over 255, a space or an address over 32 bits; in
 * text a type that is not graphic ASCII) is -EINVAL naming the record. */
void tm_laplace_enc_schema(struct tm_schema *s);
/* Both rows' enc_fit (record.h): a "ref" record's values within what
 * both forms hold: a letter for the type (what the raw form's probe
 * asks), a size of 1..64, a 32-bit space and address; the time as it is. */
void tm_laplace_enc_fit(struct tm_rec *r, size_t n);
int tm_laplace_enc_open_raw(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                            struct tm_err *err);
int tm_laplace_enc_open_text(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                             struct tm_err *err);
int tm_laplace_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                       struct tm_err *err);
int tm_laplace_enc_finish(struct tm_renc *e, struct tm_err *err);
void tm_laplace_enc_free(struct tm_renc *e);

/* ---- kernel events (laplace_kev.c): the catalog and its schema are
 * the family's, lapfamily.h ---- */

/* ---- the rows ---- */
extern const struct tm_rcodec tm_rcodec_laplace_raw;  /* .lpr */
extern const struct tm_rcodec tm_rcodec_laplace_text; /* .lpt */
extern const struct tm_rcodec tm_rcodec_laplace_kev;  /* decode only */

#endif
