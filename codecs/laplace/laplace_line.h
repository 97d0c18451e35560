/* The line framing the two Laplace text forms share (laplace_text.c, the
 * references; laplace_kev.c, the kernel events): a record a line ending
 * with '\n', at most TM_LAPLACE_LINE_MAX bytes, fields separated by
 * spaces or tabs. A form gives the parser of one line; the framing finds
 * the lines, counts them for messages and reports what is wrong as
 * "raw offset N: <what> line L: <why>". */
#ifndef TM_LAPLACE_LINE_H
#define TM_LAPLACE_LINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../record/record.h"

/* Parse line[0..len) (no '\n') into *r (zeroed by the caller): NULL, or
 * what is wrong. */
typedef const char *(*lp_parse_fn)(const char *line, size_t len, struct tm_rec *r);

/* The next field of line[0..len) from *at: its start in *start, its
 * length returned (0: none left); *at moves past it. */
size_t lp_field(const char *line, size_t len, size_t *at, size_t *start);

/* Is there nothing but blanks from at on? */
int lp_rest_blank(const char *line, size_t len, size_t at);

/* Every whole line of head[0..n) parses and there is one (a head cut
 * inside its first line is judged on what it has, when it is all). */
int lp_probe_lines(lp_parse_fn parse, const uint8_t *head, size_t n);

/* decode() of a text form (record.h): the lines of in[0..len) into out,
 * *nline the lines consumed so far (the decoder state), what names the
 * form in messages ("laplace", "laplace kernel"). */
ssize_t lp_decode_lines(lp_parse_fn parse, const char *what, uint64_t *nline, const uint8_t *in,
                        size_t len, int eof, uint64_t raw_off, size_t *used, struct tm_rec *out,
                        size_t cap, struct tm_err *err);

#endif
