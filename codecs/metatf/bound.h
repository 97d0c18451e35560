/* Bound formats: a trace format whose record layout is fixed, given as a
 * DTD and a row of data, decoded by the Meta-TF engine (metatf.h) with no
 * C of its own. docs/formats/bound.md gives the rules and why.
 *
 * A row names the format, its DTD (found by name as a Meta-TF header's
 * is, but never beside the archive: built in, then TM_DTD_PATH), how to
 * recognise it (magic bytes at an offset, and/or the size rule: the raw
 * size less the header is a whole number of records), the byte order of
 * its numbers and the length of a header skipped before the first record.
 * Its records are exactly what a Meta-TF file naming that DTD would hold
 * after its header: the engine runs as if such a header, with that byte
 * order and no sections, had been read. A DTD with tag.width = 0 (dtd.h)
 * describes a format of one record kind with no tag.
 *
 * Rows come from two places, both added by the registry when it is
 * built (codecs/registry.h): the shipped rows (tm_bound_rows), and
 * description files named by the environment variable TM_BOUND_FORMATS
 * (colon-separated), so that a daemon or tracetool started with it knows
 * the format. This module parses a description and makes a row a codec;
 * it never adds one to the registry. A description file is lines of
 * `key = value;`:
 *
 *   name = tf3;           the codec's name (letters, digits, '_', '-')
 *   dtd = tf3.dtd;        the DTD's file name
 *   magic = "TF3\x00";    bytes at offset (a quoted string with \\, \",
 *                         \xHH escapes, or 0x and hex digits)
 *   offset = 0;           the magic's raw offset (default 0)
 *   size = records;       the size rule
 *   byteorder = little;   or big
 *   header = 8;           bytes before the first record (default 0)
 *
 * with # comments and blank lines; name, dtd, byteorder and a magic or
 * the size rule are required. A row's probe bids TM_BID_BOUND_MAGIC with
 * a magic, below every row of C; by the size rule alone TM_BID_SIZE, or
 * TM_BID_SIZE_CHECKED for a shipped row with a check (record.h; a size
 * says little: docs/formats/bound.md, "Detection").
 *
 * Errors: a negative errno and a message naming the file and line
 * ("f.fmt:3: ...") or the row; nothing aborts. */
#ifndef TM_MTF_BOUND_H
#define TM_MTF_BOUND_H

#include <stddef.h>
#include <stdint.h>

#include "../common/tm_err.h"
#include "../record/record.h"

#define TM_BOUND_MAX 16        /* bound rows in one process, shipped and described */
#define TM_BOUND_MAGIC_MAX 16  /* bytes of a magic */
#define TM_BOUND_DTD_MAX 128   /* the DTD's name, including the NUL */
#define TM_BOUND_FILE_MAX 4096 /* bytes of a description file */
#define TM_BOUND_HEADER_MAX (1u << 20)

struct tm_bound {
        char name[TM_NAME_MAX];     /* the codec's name, as stats and the index show it */
        char dtd[TM_BOUND_DTD_MAX]; /* "tf3.dtd" */
        uint8_t magic[TM_BOUND_MAGIC_MAX];
        uint8_t magic_len;  /* 0: no magic */
        uint32_t magic_off; /* raw offset of the magic; magic_off + magic_len <= TM_RHEAD_MIN */
        uint8_t size_rule;  /* 1: the raw size less header is a whole number of records */
        uint8_t byteorder;  /* MTF_LE or MTF_BE (metatf.h) */
        uint32_t header;    /* bytes before the first record, at most TM_BOUND_HEADER_MAX */
        /* Shipped rows only (a description file cannot name C): a further
         * test of the head (the first n raw bytes, as a probe sees them)
         * after the magic and the size rule, 1 or 0; NULL: none. What a
         * row by the size rule alone needs so as not to take every stream
         * of over 4 KiB nothing else took (docs/formats/bound.md). */
        int (*check)(const uint8_t *head, size_t n);
};

/* Check row b, compile its DTD and make a record codec of it (decode
 * only, named b->name, family NULL: the DTD's schema decides) in one of
 * TM_BOUND_MAX slots, into *out; the codec lives as long as the process.
 * The size rule needs a DTD whose records all have one fixed size. The
 * DTD is read now (for the size rule's record size and to report a bad
 * one when the registry is built) and again by every open(). Returns 0,
 * or a negative errno with err naming the row and what is wrong (-EINVAL
 * a field, -ENOSPC no slot left, the DTD's own errors); a row that is not
 * made takes no slot. Thread-safe. Whether the name is taken is the
 * registry's to say, not this. */
int tm_bound_codec(const struct tm_bound *b, const struct tm_rcodec **out, struct tm_err *err);

/* Parse the description text[0..len) (file names it in messages) into
 * *b. Returns 0 or -EINVAL with "file:line: what" in err. */
int tm_bound_parse(const char *file, const char *text, size_t len, struct tm_bound *b,
                   struct tm_err *err);

/* Read the description file at path (a regular file of at most
 * TM_BOUND_FILE_MAX bytes, opened as a side file in a directory the
 * caller named: codecs/common/tm_side.h) and parse it into *b. Returns 0
 * or a negative errno, err naming the file (and line). */
int tm_bound_read_file(const char *path, struct tm_bound *b, struct tm_err *err);

/* The shipped rows (codecs/registry.c), ending with a row whose name is
 * empty. */
extern const struct tm_bound tm_bound_rows[];

#endif
