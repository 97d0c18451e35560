/* glibc mtrace logs as a record codec of the heap family.
 *
 * A log that glibc's malloc/mtrace-impl.c wrote (MALLOC_TRACE=file and
 * mtrace(), with libc_malloc_debug.so.0 preloaded since glibc 2.34)
 * decodes to tm_schema_heap records, so `x.mtrace` or `x.mtrace.gz`
 * mounts as it is and `tracetool pack` converts it. docs/formats/mtrace.md
 * gives the lines and the mapping:
 *
 *   = Start | = End                    consumed, no record
 *   [@ CALLER ]+ PTR SIZE              alloc (PTR (nil): a comment)
 *   [@ CALLER ]- PTR                   free
 *   [@ CALLER ]< OLD  [@ CALLER ]> NEW SIZE   one realloc record
 *   [@ CALLER ]! OLD SIZE              failed realloc: a comment
 *
 * time is the line number (1-based), thread and heap 0, attributes the
 * caller; a comment's text is its line as glibc wrote it. A '<' and its
 * '>' are decoded together: the decoder leaves a '<' unconsumed until its
 * '>' is in the input, so its state is the line count alone (8 bytes).
 * Decode-only: nothing is written in this format. */
#ifndef TM_MTRACE_H
#define TM_MTRACE_H

#include <stddef.h>

#include "../record/record.h"

/* Longest line accepted, without its newline (as HATF's 2-byte attribute
 * length allows). */
#define TM_MTRACE_LINE_MAX 65535

extern const struct tm_rcodec tm_rcodec_mtrace;

/* Is line (len bytes, no newline) one that glibc's mtrace writes? */
int tm_mtrace_line_ok(const char *line, size_t len);

#endif
