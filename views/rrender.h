/* rrender: the text and binary forms of records of any schema.
 *
 * ascii   one record a line: the kind's name, then each of the kind's
 *         fields in schema order, separated by one space, '\n'. Numbers
 *         shown TM_SHOW_DEC are decimal (signed ones with '-'), TM_SHOW_HEX
 *         are "0x" and lowercase hex. Text and bytes are one token: bytes
 *         0x21-0x7e except '%' stand for themselves, every other byte is
 *         "%XX" (uppercase hex), so a token never holds a blank; the empty
 *         value is "-" and a value that is just "-" is "%2D". A list is its
 *         numbers joined by ',' ("-" when empty). So `awk '{print $3}'`
 *         splits every line the same way.
 * field   the token of one field and '\n' (the fields/<name> views).
 * binary  one fixed-width little-endian record for every kind:
 *         uint32 kind (index in the schema), uint32 present (bit i set when
 *         the kind has schema field i), then one 8-byte slot per schema
 *         field in schema order: the number (signed ones two's complement),
 *         the length of a variable field (its bytes are in fields/<name>),
 *         0 when the kind lacks the field. tm_rrender_binary_layout prints
 *         the C struct and numpy dtype. */
#ifndef TM_RRENDER_H
#define TM_RRENDER_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/record/record.h"

/* Bytes of one binary record of schema s. */
static inline size_t tm_rrender_binary_size(const struct tm_schema *s)
{
        return 8 + 8 * (size_t)s->nfields;
}

/* The longest ascii line a record can render to: bounded by the longest
 * variable field a decoder can return (its input buffer). */
size_t tm_rrender_line_max(const struct tm_schema *s, size_t var_max);

/* Render r's ascii line into dst (room: tm_rrender_line_max). Returns the
 * length. */
size_t tm_rrender_line(char *dst, const struct tm_schema *s, const struct tm_rec *r);

/* Render the token of the field at position pos of r's kind, and '\n'. */
size_t tm_rrender_field(char *dst, const struct tm_schema *s, const struct tm_rec *r,
                        unsigned pos);

/* Write r's binary record to dst (tm_rrender_binary_size bytes). */
void tm_rrender_binary(uint8_t *dst, const struct tm_schema *s, const struct tm_rec *r);

/* Describe the binary layout of s as a C struct and a numpy dtype, into
 * dst (cap bytes). Returns the length (snprintf-style). */
size_t tm_rrender_binary_layout(char *dst, size_t cap, const struct tm_schema *s);

#endif
