/* Meta-TF 1.0 trace files (Chilimbi, Jones & Zorn, ISMM 2000, section 4
 * and Appendix B): the header, its writer, and the universal decoder that
 * a DTD drives (tm_rcodec_metatf). docs/formats/metatf.md gives the byte
 * layout and why each choice the paper leaves open was made.
 *
 * A file is, in the header's byte order (byteorder 1 little-, 2 big-endian):
 *
 *   0   magic "\177MTF"
 *   4   class (1 = 32-bit, 2 = 64-bit addresses; informational)
 *   5   byteorder
 *   6   dtdlength (1..255)
 *   7   pad[9], zero
 *   16  nsections, start, nrecords: 4 bytes each
 *   28  dtd: dtdlength bytes, no NUL (a URL or a file name)
 *   ..  nsections section headers: number, start, size, 4 bytes each
 *   ..  data sections (the values sectionOffset / sectionStride read)
 *   start  records, to the end of the stream
 *
 * A section that starts before start is a data section, and must end by
 * start: an array of items that fields with sectionOffset / sectionStride
 * read (item k of width w at bytes k*w .. k*w+w-1). A section starting at
 * or after start is a record section: its records follow a section record
 * in the stream, and its entry is for readers that seek. The
 * decoder reads the header and the data sections (at most MTF_HEADER_MAX
 * bytes in all) at open() and needs head[0..start).
 *
 * Records: a tag of the DTD's tag.width bytes, then the fields of the
 * record the tag names in the current section (its own records, then the
 * global ones), each as wide as its current width and interpretation say.
 * Section records (tag 2, number) change the current section; metadata
 * records (tag 3, record tag, field position, property, values) change one
 * field of one record kind for the records that follow; both are consumed
 * and not returned. Comments (tag 1) are returned, as kind "comment" with
 * one text field.
 *
 * The DTD the header names is found by its basename: beside the archive
 * (the directory of open()'s path), then among the DTDs built into the
 * library (mtf_dtd_shipped: hatf10.dtd; matched ignoring case, since the
 * paper calls it HATF10.dtd), then in each directory of TM_DTD_PATH
 * (colon-separated). */
#ifndef TM_METATF_H
#define TM_METATF_H

#include <stddef.h>
#include <stdint.h>

#include "../common/tm_err.h"
#include "../record/record.h"
#include "dtd.h"

#define MTF_MAGIC "\177MTF"
#define MTF_FIXED_HEADER 28       /* bytes before the DTD name */
#define MTF_SHDR_SIZE 12          /* one section header */
#define MTF_SECTIONS_MAX 16       /* section headers in a file */
#define MTF_HEADER_MAX (1u << 20) /* start: header and data sections */
#define MTF_CELLS_MAX 72          /* changeable fields of all record kinds */
#define MTF_VAR_MAX 65536         /* bytes of one variable-width field */
#define MTF_LIST_MAX 1024         /* occurrences of one repeated group */
#define MTF_LE 1
#define MTF_BE 2

struct mtf_shdr {
        uint32_t number; /* 1..255 */
        uint32_t start;  /* byte offset in the file */
        uint32_t size;   /* bytes */
};

struct mtf_header {
        uint8_t class;     /* 1 or 2 */
        uint8_t byteorder; /* MTF_LE or MTF_BE */
        uint8_t dtdlength;
        uint32_t nsections, start, nrecords;
        char dtd[256]; /* dtdlength bytes; NUL-terminated by mtf_header_read */
        struct mtf_shdr section[MTF_SECTIONS_MAX];
};

/* Bytes of h up to the end of its section table: where data sections
 * may start. */
size_t mtf_header_size(const struct mtf_header *h);

/* Write h (the fixed part, the DTD name, the section table) to out[0..cap).
 * The caller fills every field, start and the sections' starts included,
 * and writes the data sections and records after it. Returns the bytes
 * written (mtf_header_size(h)) or -EINVAL (a field out of range, cap too
 * small) with a message. */
int mtf_header_write(const struct mtf_header *h, uint8_t *out, size_t cap, struct tm_err *err);

/* Parse the header from b[0..n) into *h and check it: magic, class, byte
 * order, section numbers unique, data sections inside [table end, start),
 * start <= MTF_HEADER_MAX and n >= start. Returns start or a negative
 * errno (-EIO, "raw offset N: ..."; -ENOTSUP over a cap). */
int mtf_header_read(const uint8_t *b, size_t n, struct mtf_header *h, struct tm_err *err);

/* Store v in width bytes (0..8) at out in byte order bo (MTF_LE, MTF_BE). */
void mtf_put(uint8_t *out, uint64_t v, unsigned width, unsigned bo);

/* A DTD built into the library. */
struct mtf_shipped {
        const char *name; /* "hatf10.dtd" */
        const char *text;
};

/* The built-in DTDs (generated into dtd_shipped.c from dtd/ by
 * gen_shipped.sh), ending with {NULL, NULL}. */
extern const struct mtf_shipped mtf_dtd_shipped[];

/* The universal decoder (record.h). Its schema comes from the DTD: kinds
 * are the records with a tag value (section and metadata excepted), in DTD
 * order, named as the DTD names them (a name defined in two sections
 * becomes "<section>_<name>" the second time); fields are the leaf fields
 * by name, except the tag, a repeat's count and a field that is another's
 * length (they are the list's or the bytes' length in v[]). The second
 * field of one name in a record is new_<name>, later ones <name>_<k>
 * (realloc's two addresses: address, new_address, as in heap.h); the
 * predefined vfield is "attributes" in a data record and "text" in a
 * comment (HATF's names); a repeated group's fields are lists. The schema
 * is named "heap" when every field name is one of tm_schema_heap's and
 * the DTD has an alloc record, else after the DTD file (its name up to
 * the first '.').
 *
 * List values (TM_FT_LIST) are written to a per-thread buffer that lives
 * until the next decode call on the same thread. */
extern const struct tm_rcodec tm_rcodec_metatf;

#endif
