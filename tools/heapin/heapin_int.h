/* heapin internals: the line reader (heapin_lines.c), the error message with the line's
 * place, and the heaptrack version line's test for heapin_detect. Not for
 * use outside tools/heapin/. */
#ifndef TM_HEAPIN_INT_H
#define TM_HEAPIN_INT_H

#include "heapin.h"

/* Lines of a stream, one at a time, from a buffer of fixed size. */
struct heapin_lines {
        heapin_read_fn rd;
        void *rarg;
        const char *name;
        /* Lines longer than HEAPIN_LINE_MAX whose first byte skip() accepts
         * are passed over instead of being an error; NULL: none is. The
         * reader may set it between lines. */
        int (*skip)(char first);
        char *text;        /* HEAPIN_LINE_MAX + 1 bytes of scratch for the
                            * reader: a caller kept across lines, a comment */
        char *buf;         /* HEAPIN_LINE_MAX + 1 + a read's worth */
        size_t cap;        /* bytes in buf */
        size_t start, end; /* unread bytes are buf[start..end) */
        size_t scan;       /* buf[start..scan) holds no newline */
        int eof;           /* rd returned 0 */
        uint64_t line;     /* number of the line last returned, 1-based */
        uint64_t off;      /* byte offset of that line's first byte */
        uint64_t next_off; /* byte offset of the next line */
};

/* Set l up to read from rd; 0 or -ENOMEM (err set). */
int heapin_lines_open(struct heapin_lines *l, heapin_read_fn rd, void *rarg, const char *name,
                      struct tm_err *err);

void heapin_lines_close(struct heapin_lines *l);

/* Call fn(st, line, len, err) for each line to the end of the input: the
 * line without its newline, NUL-terminated in l's buffer (it may hold NULs
 * of its own: use len) and valid until fn returns. Returns 0 at the end,
 * fn's return value if nonzero, or a negative errno with err set: a last
 * line without a newline is -EIO "truncated", a line longer than
 * HEAPIN_LINE_MAX is -EIO unless l->skip accepts it. */
int heapin_lines_each(struct heapin_lines *l,
                      int (*fn)(void *st, const char *line, size_t len, struct tm_err *err),
                      void *st, struct tm_err *err);

/* err = code and "<name>: line N (byte offset B): <fmt...>" for the line
 * last returned; returns code. */
int heapin_lines_err(const struct heapin_lines *l, struct tm_err *err, int code, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));

/* Hex digits s[0..n) (no prefix, at most 16) to *v: 0, or -1 if empty,
 * too long or not hex. */
int heapin_hex(const char *s, size_t n, uint64_t *v);


/* Is line heaptrack's version line, "v <heaptrack version> <file format
 * version>" in hex (or "v <version>" alone, as heaptrack 1.0 wrote)? 0 with
 * *hv and *fv set (each may be NULL; *fv 1 when absent), or -1. */
int heapin_heaptrack_version(const char *line, size_t len, uint64_t *hv, uint64_t *fv);

#endif
