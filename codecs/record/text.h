/* text: the text and binary forms of records of any schema.
 *
 * ascii   one record a line: the kind's name, then each of the kind's
 *         fields in schema order, separated by one space, '\n'. Numbers
 *         shown TM_SHOW_DEC are decimal (signed ones with '-'), TM_SHOW_HEX
 *         are "0x" and lowercase hex. Text and bytes are one token: bytes
 *         0x21-0x7e except '%' stand for themselves, every other byte is
 *         "%XX" (uppercase hex), so a token never holds a blank; the empty
 *         value is "-" and a value that is just "-" is "%2D". A list is its
 *         numbers joined by ',' ("-" when empty). So `awk '{print $3}'`
 *         splits every line the same way, unless the schema shows a
 *         list or text by a show row of its family (below: PTF's fo
 *         lines), and fields/ still one token.
 * field   the token of one field and '\n' (the fields/<name> views).
 * binary  one fixed-width little-endian record for every kind:
 *         uint32 kind (index in the schema), uint32 present (bit i set when
 *         the kind has schema field i), then one 8-byte slot per schema
 *         field in schema order: the number (signed ones two's complement),
 *         the length of a variable field (its bytes are in fields/<name>),
 *         0 when the kind lacks the field. tm_text_binary_layout prints
 *         the C struct and numpy dtype. */
#ifndef TM_TEXT_H
#define TM_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* ---- shows of a family's own ----
 *
 * record.h's shows (decimal, hex, hex without 0x) are the text forms'
 * own. A field whose show (tm_field.show, or a form's) is a code from
 * TM_SHOW_OWN_MIN to 0x7f shows as the show row of that code says: a
 * family defines the row in its own module and adds it to the program
 * with TM_SHOW_ROW (a linker section, so no central list names it; a
 * module in a static library keeps it in every program that has the
 * module's schema, which the same object defines). A code without a row
 * in the program shows as record.h's shows would (decimal; a variable
 * field as one token). Codes are kept in schemas (the native encoding
 * stores them), so a row's code never changes; two rows of one code in a
 * program are an error that tm_show_rows_check reports.
 *
 * A number field's row writes its token (put). A variable field's row
 * (put_var: text and lists) writes the field in the lines as the
 * format's own text has it, so the token may hold blanks (`awk` then
 * splits a line by the format's rule); an empty value is no token and no
 * blank; fields/<name> shows the field as one token all the same, the
 * generic way. Such fields are rendered on the scalar path (the vector
 * path knows record.h's shows only). */
#define TM_SHOW_OWN_MIN 3

/* The longest token a number's show row writes. */
#define TM_SHOW_TOKEN_MAX 20

struct tm_show_row {
        uint8_t code;     /* TM_SHOW_OWN_MIN..0x7f: tm_field.show's value */
        const char *name; /* names the show in messages and docs */
        /* A number's token: the token of v (any value of the field) into
         * dst, at most TM_SHOW_TOKEN_MAX bytes, at least one, none of
         * them ' ', '\n' or NUL; its length. dst NULL: the length only.
         * NULL: the row shows no numbers (they show decimal). */
        size_t (*put)(char *dst, uint64_t v);
        /* A variable field in the lines: its value at b (as tm_rec.var
         * has it: n bytes of text or bytes, list 0; n numbers of a list,
         * list 1) into dst, at most 3 bytes a byte and TM_SHOW_TOKEN_MAX
         * + 1 a number, no '\n'; its length. dst NULL: the length only.
         * Called for n > 0 and the types in var_types only. NULL: the row
         * shows no variable fields. */
        size_t (*put_var)(char *dst, int list, const uint8_t *b, uint64_t n);
        unsigned var_types; /* bit t: put_var takes a field of enum tm_ftype t */
        /* The statistics' range of a number field (views/stats_rows.c):
         * 1 when min and max show as characters ({c}, statrow.h), 0 as
         * numbers. NULL: as numbers. */
        int (*range_chars)(uint64_t min, uint64_t max);
};

/* Add show row r (a const struct tm_show_row at file scope) to the
 * program's show table: a pointer to it in the linker section
 * tm_show_rows, which the linker keeps with the module's object. */
#define TM_SHOW_ROW(r)                                                                             \
        static const struct tm_show_row *const r##_show_row                                        \
            __attribute__((section("tm_show_rows"), used)) = &(r)

/* The show row of code in this program, or NULL. */
const struct tm_show_row *tm_show_row(unsigned code);

/* 0 when every show row of the program has a code of its own in
 * TM_SHOW_OWN_MIN..0x7f and a put or a put_var; else -EINVAL, with the
 * first bad row's name in *bad. */
int tm_show_rows_check(const char **bad);

/* Bytes of one binary record of schema s. */
static inline size_t tm_text_binary_size(const struct tm_schema *s)
{
        return 8 + 8 * (size_t)s->nfields;
}

/* The longest ascii line a record can render to: bounded by the longest
 * variable field a decoder can return (its input buffer). */
size_t tm_text_line_max(const struct tm_schema *s, size_t var_max);

/* ---- one record at a time, straight from the schema ----
 *
 * The renderers below write whole 8-byte words (and the kind's name as one
 * TM_NAME_MAX-byte copy), so bytes past the returned length may be
 * scribbled on: dst must have room for tm_text_line_max bytes, whatever
 * the record. */

/* Render r's ascii line into dst (room: tm_text_line_max). Returns the
 * length. */
size_t tm_text_line(char *dst, const struct tm_schema *s, const struct tm_rec *r);

/* Render the token of the field at position pos of r's kind, and '\n'
 * (room: tm_text_line_max). Returns the length. */
size_t tm_text_field(char *dst, const struct tm_schema *s, const struct tm_rec *r, unsigned pos);

/* Write r's binary record to dst (tm_text_binary_size bytes; nothing
 * past them is written). */
void tm_text_binary(uint8_t *dst, const struct tm_schema *s, const struct tm_rec *r);

/* Describe the binary layout of s as a C struct and a numpy dtype, into
 * dst (cap bytes). Returns the length (snprintf-style). */
size_t tm_text_binary_layout(char *dst, size_t cap, const struct tm_schema *s);

/* ---- batches, through a plan ----
 *
 * A plan is what the renderers need of a schema, worked out once: per
 * kind its name with the separator after it, and per position how the
 * field is shown and where its bytes are. It holds no pointers, so it may
 * be copied, and it is read-only after tm_text_plan_init: any number of
 * threads may render with one plan. Build it once per trace, beside the
 * schema (it is about 23 KiB).
 *
 * The batch renderers are the fast path of the views (ascii, streams/,
 * fields/, binary, and the index's column lengths); each writes exactly
 * the bytes of the one-record functions above, called record by record. */

/* How the text form shows the field at one position. */
enum tm_text_op {
        TM_TOP_UDEC,  /* unsigned decimal */
        TM_TOP_SDEC,  /* signed decimal */
        TM_TOP_HEX,   /* 0x and lowercase hex (any number type) */
        TM_TOP_BYTES, /* text or bytes: %XX escapes, "-" when empty */
        TM_TOP_LIST,  /* numbers joined by ',', "-" when empty */
        TM_TOP_HEXN,  /* lowercase hex without 0x */
        TM_TOP_HEXW,  /* lowercase hex, exactly width[] digits (the low ones) */
        TM_TOP_SKIP,  /* not in the line (TM_SHOW_HIDDEN) */
        TM_TOP_OWN,   /* a number by a show row (put); width[]: the row's place */
        TM_TOP_OWNT,  /* text or bytes by a show row (put_var); empty: no token,
                       * no blank; width[]: the row's place */
        TM_TOP_OWNL,  /* a list by a show row (put_var), as TM_TOP_OWNT */
};

/* Is op one of a variable field (its bytes in a var[] slot)? */
static inline int tm_text_op_var(unsigned op)
{
        return op == TM_TOP_BYTES || op == TM_TOP_LIST || op == TM_TOP_OWNT || op == TM_TOP_OWNL;
}

/* Is the field at a position of op with value v in the line (with the
 * blank before it)? Not when hidden, nor a variable field a show row
 * shows when empty. */
static inline int tm_text_shown(unsigned op, uint64_t v)
{
        return op != TM_TOP_SKIP && (v != 0 || (op != TM_TOP_OWNT && op != TM_TOP_OWNL));
}

/* One kind of the plan. */
struct tm_text_kind {
        char head[TM_NAME_MAX];            /* the kind's name and ' ', zero-padded */
        uint8_t head_len;                  /* strlen(name) + 1 */
        uint8_t nfields;                   /* as tm_kind.nfields */
        uint8_t op[TM_KIND_FIELDS_MAX];    /* per position: enum tm_text_op in lines */
        uint8_t fop[TM_KIND_FIELDS_MAX];   /* per position: the op of fields/<name> */
        uint8_t width[TM_KIND_FIELDS_MAX]; /* per position: TM_TOP_HEXW's digits, or
                                            * the show row's place (TM_TOP_OWN*) */
        uint8_t slot[TM_KIND_FIELDS_MAX];  /* per position: its tm_rec.var slot
                                            * (variable fields; 0 for numbers) */
        uint8_t field[TM_KIND_FIELDS_MAX]; /* per position: schema field index */
        int8_t pos[TM_SCHEMA_FIELDS_MAX];  /* per schema field: its (first)
                                            * position in this kind, as
                                            * tm_kind_pos, or -1 */
        uint32_t present;                  /* bit f: the kind has schema field f */
        uint32_t fixed_max;                /* longest line with every variable field empty,
                                            * without the slack */
        uint16_t var3, var21;              /* positions whose value (a length) adds 3 or
                                            * 21 bytes a unit to that: text, lists */
};

/* One kind as the vector line renderers see it (codecs/record/text.c; callers
 * need not look; the AVX2 one reads kdec and xhex only). In the AVX-512 one a line is made in two
 * 64-byte registers of four 16-byte chunks, one per field: ' ' and the field's characters
 * right-aligned, then the leading zeros are squeezed out; or, when its numbers are small and it
 * fits, in one register (the short layout, s* below). */
struct tm_text_vkind {
        uint8_t img[128];    /* the constant bytes: ' ', "0x", the '-' of an
                              * empty variable field */
        uint64_t kconst[2];  /* bytes taken from img */
        uint64_t khex[2];    /* bytes taken from the hex digits */
        uint64_t kdig[2];    /* digit bytes of the fields (leading zeros go) */
        uint64_t kvalid[2];  /* bytes of the kind's fields' chunks */
        uint64_t kprefix[2]; /* always kept: ' ', and "0x" of hex fields */
        uint64_t lim[8];     /* the vector path takes a value below lim: 10^15
                              * decimal, 2^52 hex, 1 (empty) variable */
        uint8_t ok;          /* 1: at most 8 fields, the path can render it */
        uint8_t nlanes;      /* nfields */
        uint8_t kdec;        /* lanes of decimal fields */
        uint8_t xhex;        /* lanes of hex fields (TM_TOP_HEX; the AVX2 path) */
        /* The short layout: when every decimal field is below 10^8, the
         * whole line in one register, where it fits: the name, the fields
         * (' ' and 8 digits, ' ' "0x" and 13 hex digits, or " -") and the
         * '\n'. */
        uint8_t sok;      /* 1: they fit in 64 bytes */
        uint8_t khexl;    /* lanes of hex fields */
        uint8_t sidx[64]; /* each byte's source: 0-63 the digits of the
                           * lanes' low halves, 64-127 the hex high half */
        uint8_t simg[64]; /* the constant bytes */
        uint64_t sconst;  /* bytes taken from simg */
        uint64_t sdig;    /* digit bytes (leading zeros go) */
        uint64_t slast;   /* the last byte of each field (always kept) */
        uint64_t sstart;  /* the first byte of each field */
        uint64_t svalid;  /* bytes of the line */
        uint64_t sprefix; /* always kept: the name, ' ', "0x", "-", '\n' */
};

struct tm_text_plan {
        unsigned nkinds, nfields; /* as the schema's */
        int same;                 /* every kind has the same positions (fields, ops,
                                   * widths): the column path works field by field */
        int vall;                 /* every kind's vkind is ok: tm_text_nums may take
                                   * the vector path for any record */
        struct tm_text_kind kind[TM_SCHEMA_KINDS_MAX];
        struct tm_text_vkind vkind[TM_SCHEMA_KINDS_MAX];
};

/* Bytes past a line's end (and past the first TM_TEXT_SLACK bytes of a
 * short line) that the renderers may scribble on: the name is copied as
 * one TM_NAME_MAX-byte block, numbers are written as whole 8-byte words.
 * The batch renderers keep that slack inside cap themselves. */
#define TM_TEXT_SLACK 32

/* Work out the plan of s. Returns 0, or -EINVAL when a kind of s has more
 * variable fields than a record has var[] slots (TM_REC_VAR_MAX), a kind
 * name is not NUL-terminated, or a field index is out of range: the
 * one-record functions would read past the record then. */
int tm_text_plan_init(struct tm_text_plan *p, const struct tm_schema *s);

/* The plan of s's text form form (NULL: ascii, as tm_text_plan_init):
 * its labels and shows in place of the schema's. Same errors. */
int tm_text_plan_form(struct tm_text_plan *p, const struct tm_schema *s,
                      const struct tm_form *form);

/* r's line in the plan's form into dst (room: tm_text_line_max);
 * r->kind must be below p->nkinds. Returns the length. */
size_t tm_text_pline(char *dst, const struct tm_text_plan *p, const struct tm_rec *r);

/* Render the ascii lines of r[0..n) into dst, one after another, while
 * they fit: nothing is written at or past dst[cap]. Returns the bytes
 * written; *nrec receives how many records were rendered (all whole
 * lines). It stops early, before r[*nrec], when that line might not fit
 * in what is left (its worst case plus TM_TEXT_SLACK is checked, not
 * its length: it may fit after all), or when r[*nrec].kind is not a kind
 * of the plan. The caller then renders that one record itself into its
 * own line buffer (room: tm_text_line_max), after checking its kind
 * (tm_text_line does not), copies what fits and keeps the rest for the
 * next read:
 *
 *      w = tm_text_lines(dst, cap, p, r, n, &k);
 *      if (k < n && w < cap) {
 *              len = tm_text_line(line, s, &r[k]);   (r[k].kind checked)
 *              copy min(len, cap - w) bytes of line to dst + w, k++
 *      }
 *
 * Thread-safe. */
size_t tm_text_lines(char *dst, size_t cap, const struct tm_text_plan *p, const struct tm_rec *r,
                     size_t n, size_t *nrec);

/* As tm_text_lines for the streams/<kind> view: only the lines of
 * records of kind kind are written; the others are skipped (and counted
 * in *nrec, since they are done with). */
size_t tm_text_kind_lines(char *dst, size_t cap, const struct tm_text_plan *p,
                          const struct tm_rec *r, size_t n, unsigned kind, size_t *nrec);

/* As tm_text_lines for the fields/<name> view: the token of schema
 * field field and '\n' (tm_text_field) for each record whose kind has
 * that field; the others are skipped (and counted in *nrec). */
size_t tm_text_fields(char *dst, size_t cap, const struct tm_text_plan *p, const struct tm_rec *r,
                      size_t n, unsigned field, size_t *nrec);

/* A record reduced to its numbers, for decoders that render as they go
 * (codecs/heap/hatf_text.c): the values of the kind's first 8 positions,
 * as tm_rec.v. 64 bytes, so a batch of them stays in L1 and a vector
 * register takes one whole. */
struct tm_text_num {
        _Alignas(64) uint64_t v[8];
};

/* As tm_text_lines for records given as numbers: record i is of kind
 * kind[i] (below p->nkinds, at most 8 fields) with values v[i]; a
 * variable field's value must be 0 (empty: "-"). Same bytes, same stops
 * (a line that might not fit). */
size_t tm_text_nums(char *dst, size_t cap, const struct tm_text_plan *p, const uint32_t *kind,
                    const struct tm_text_num *v, size_t n, size_t *nrec);

/* Which implementation tm_text_lines and tm_text_kind_lines use,
 * choosing it if that is not done yet: "avx512" (x86-64 with AVX-512 F,
 * BW, VL, DQ, VBMI, VBMI2 and IFMA), else "avx2" (x86-64-v3:
 * TM_CPU_AVX2_SET), unless TM_NO_SIMD=1 (codecs/common/tm_cpu.h), else
 * "scalar". Records the AVX-512 path cannot take (a variable field that
 * is not empty, a negative decimal or one of 10^15 or more, a hex number
 * of 2^52 or more, more than 8 fields) go the scalar way within the same
 * call; the AVX2 path takes every record, its fields past those it
 * converts (negative decimals, decimals of 2^52 or more, text, lists,
 * own shows, fields past the 8th) rendered as the scalar path does. The
 * bytes are the same either way. */
const char *tm_text_lines_impl(void);

/* For tests and benchmarks: on != 0 makes the batch renderers use the
 * scalar path from now on; 0 makes the choice again, as at the first
 * call. */
void tm_text_force_scalar(int on);

/* Write the binary records of r[0..n) to dst, n * (8 + 8 * p->nfields)
 * bytes, nothing past them. Every r[i].kind must be below p->nkinds. */
void tm_text_binaries(uint8_t *dst, const struct tm_text_plan *p, const struct tm_rec *r, size_t n);

/* ---- lengths only (skipping to an offset, the index's columns) ----
 * r->kind must be below p->nkinds. Nothing is written but *tok. */

/* Length of r's ascii line (what tm_text_line returns). */
size_t tm_text_line_len(const struct tm_text_plan *p, const struct tm_rec *r);

/* Length of the token at position pos and its '\n' (what
 * tm_text_field returns). For a schema field f that is position
 * p->kind[r->kind].pos[f], when that is not -1. */
size_t tm_text_field_len(const struct tm_text_plan *p, const struct tm_rec *r, unsigned pos);

/* Both at once: tok[i] = tm_text_field_len(p, r, i) for each position
 * i of r's kind, and the line length as the result (the index build's
 * accounting of every column of a record). tok has room for
 * TM_KIND_FIELDS_MAX. */
size_t tm_text_lens(const struct tm_text_plan *p, const struct tm_rec *r, uint64_t *tok);

/* Lengths of the records of column batch b (record.h): line[i] = the
 * length of record i's line in p's form without its label, that is
 * tm_text_line_len - p->kind[b->kind[i]].head_len (callers add the
 * labels per kind: count x head_len), and, when fsum is not NULL,
 * fsum[f] += the bytes the records add to fields/<f> for each schema
 * field f. Every b->kind[i] must be below p->nkinds; variable fields
 * need b's arena. */
void tm_text_batch_lens(const struct tm_text_plan *p, const struct tm_rbatch *b, uint32_t *line,
                        uint64_t *fsum);

#endif
