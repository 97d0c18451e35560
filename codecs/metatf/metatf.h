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
 * Streamed data sections (docs/formats/metatf.md, "Writing, and
 * SplitAddr"): a section of the table that starts at or after start and
 * is not a section of the DTD holds items that arrive in the record
 * stream in chunks, each a section record naming it, a 1-byte item width
 * (1..8), a 4-byte item count and the items. A chunk does not change the
 * current section. Its items are the section's next ones (the section is
 * its chunks end to end); sectionStride on a streamed section reads one
 * cursor per section, which every field reading it advances. A chunk stays
 * readable until its last item has been read or the next chunk of its
 * section arrives, and decode() keeps it unconsumed until then (*used
 * stops at its section record; the state says where the records resume),
 * so a caller must hold MTF_SPAN_MAX bytes of input.
 *
 * The DTD the header names is found by its basename: beside the archive
 * (by name in open_at()'s directory descriptor, struct tm_rarchive, the
 * directory the caller reached and holds; open() opens the directory of
 * its path by name for callers that hold none), then among the DTDs built into the
 * library (mtf_dtd_shipped: hatf10.dtd, hatf10v2.dtd; matched ignoring case, since the
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
#define MTF_NAMES_MAX 64          /* names of number fields of all record kinds */
#define MTF_VAR_MAX 65536         /* bytes of one variable-width field */
#define MTF_LIST_MAX 1024         /* occurrences of one repeated group */
#define MTF_LE 1
#define MTF_BE 2
#define MTF_STREAMS_MAX 4        /* streamed data sections of one file */
#define MTF_CHUNK_MAX (1u << 20) /* item bytes of one chunk */
/* What a writer lets a chunk and the records that read it span (the
 * chunk's section record to the end of the record that reads its last
 * item): a reader holds that much input at once, so it must fit the
 * record feed's buffer (views/feed.h, 256 KiB) with room to spare. */
#define MTF_SPAN_MAX (192u << 10)

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
/* The raw bytes before the first record as the fixed header at b (n
 * bytes) says ("start": the header and the data sections), or 0 when b
 * is too short or not a header start (the row's head_need). */
size_t mtf_head_need(const uint8_t *b, size_t n);

/* Store v in width bytes (0..8) at out in byte order bo (MTF_LE, MTF_BE). */
void mtf_put(uint8_t *out, uint64_t v, unsigned width, unsigned bo);

/* The width-byte (0..8) number at p in byte order bo. */
uint64_t mtf_get(const uint8_t *p, unsigned width, unsigned bo);

/* Bytes of a chunk's header: the section record (tag of tag_width bytes,
 * 1-byte number), the item width, the item count. */
#define MTF_CHUNK_HEADER(tag_width) ((tag_width) + 1u + 1u + 4u)

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
 * the first '.'). A field shows in hex or decimal as the DTD's display
 * property says, else as its role in the heap family (addresses hex),
 * else decimal. One field name used with two types (or two displays) is
 * refused at the DTD's line and column. Delta and stride add to the
 * field's previous value, whichever record kind set it (Appendix B), or
 * the record kind's own with previous = record (dtd.h).
 *
 * List values (TM_FT_LIST) are written to a per-thread buffer that lives
 * until the next decode call on the same thread. */
extern const struct tm_rcodec tm_rcodec_metatf;

/* ---- sections (for the sections/ views) ----
 *
 * mtf_sections lists every section of a trace opened by tm_rcodec_metatf:
 * first the DTD's sections in DTD order (index i is tm_schema.section[i];
 * a record read in that section has tm_rec.section i + 1), then the file's
 * data sections the DTD does not name, named by their number in decimal
 * ("2": a DTD name never starts with a digit). open() fills
 * tm_schema.section[] and nsections with the first part, the sections
 * records live in (a schema describes records; data sections hold none). */
enum mtf_sec_kind {
        MTF_SEC_RECORDS = 1, /* records follow a section record naming it */
        MTF_SEC_DATA = 2,    /* items before start: mtf_section_bytes */
        MTF_SEC_STREAM = 3,  /* items in chunks in the record stream: mtf_decode_chunks */
};

struct mtf_secinfo {
        char name[TM_NAME_MAX];
        uint32_t number; /* 1..255 */
        uint8_t kind;    /* enum mtf_sec_kind */
};

/* Copy up to cap entries of the list into out; returns how many sections
 * there are (which may be more than cap). ctx is open()'s. */
unsigned mtf_sections(const void *ctx, struct mtf_secinfo *out, unsigned cap);

/* The bytes of data section number (MTF_SEC_DATA): *p (owned by ctx, valid
 * until close) and *n. Its items are as wide as the field reading them
 * (docs/formats/metatf.md), so the bytes are the section's whole content.
 * Returns 0, or -ENOENT if number is not such a section. */
int mtf_section_bytes(const void *ctx, uint32_t number, const uint8_t **p, size_t *n);

/* One chunk of a streamed data section, as decoding meets it. items points
 * into decode's input (valid until the callback returns). */
struct mtf_chunk {
        uint32_t number;   /* the section */
        uint8_t width;     /* bytes an item, 1..8 */
        uint8_t byteorder; /* MTF_LE or MTF_BE: mtf_get(items + k * width, width, bo) */
        uint32_t count;    /* items */
        uint64_t first;    /* section item number of items[0] */
        uint64_t raw;      /* raw offset of the chunk's section record */
        const uint8_t *items;
};

/* Returns 0 or a negative errno, which decoding returns. */
typedef int (*mtf_chunk_cb)(void *arg, const struct mtf_chunk *c);

/* tm_rcodec_metatf.decode, calling cb(arg, chunk) for every chunk of every
 * streamed section when decoding passes it (once per chunk as long as the
 * caller resumes from the state and offset each call leaves: a chunk is in
 * the state once read, whether or not *used has passed it). The records
 * are returned as decode() returns them; a sections/ view over a streamed
 * section decodes with this and keeps the chunks of its section. */
ssize_t mtf_decode_chunks(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                          mtf_chunk_cb cb, void *arg, struct tm_err *err);

/* ---- the encoder ----
 *
 * tm_rcodec_metatf.enc_open/enc_put/enc_finish/enc_free (mtf_enc.c) write
 * heap traces (records of tm_schema_heap, codecs/heap/heap.h) as Meta-TF
 * files naming hatf10v2.dtd (Appendix C's HATF DTD with HATF 1.0's four
 * realloc records, sizes and field order: every heap record whole), in
 * one of the row's encodings: "splitaddr" (the default: every address in
 * streamed data section 2, the paper's HATF SplitAddr, the rest as "hatf"
 * writes it) or "hatf" (every field in the records, widths and
 * interpretations changed by metadata where that pays). Comments and
 * attributes are at most 65535 bytes. */

/* The section number splitaddr's addresses use. */
#define MTF_ADDR_SECTION 2

#endif
