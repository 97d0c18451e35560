/* Meta-TF 1.0 DTDs (Chilimbi, Jones & Zorn, ISMM 2000, section 4 and
 * Appendix B): the parser (text -> struct mtf_dtd, a bounded syntax tree)
 * and the compiler (tree -> struct mtf_layout, the flat list of record
 * kinds and their leaf fields with initial widths and interpretations that
 * the universal decoder in metatf.c runs on).
 *
 * The grammar is Appendix B's, all of it:
 *
 *   dtd      ::= defs { section | comment }*
 *   defs     ::= { record | property | comment }*
 *   section  ::= "section" NAME NUMBER "{" defs "}"
 *   record   ::= NAME ":" field [ "{" property* "}" ]
 *   field    ::= simple | record | NAME "*" simple
 *   simple   ::= NAME | "(" field { "," field }* ")"
 *   property ::= NAME "." ("width" | "interpretation" | "value") "=" value ";"
 *              | NAME "." "display" "=" ("hex" | "decimal") ";"
 *              | NAME "." "previous" "=" ("field" | "record") ";"
 *   value    ::= NUMBER | NAME "." PROP | none | default N | baseOffset N
 *              | delta N | stride N N | sectionOffset N | sectionStride N N
 *
 * with // and / * * / comments, decimal or 0x numbers (a leading '-' in
 * interpretation arguments: strides may be negative). display and
 * previous are tracemount's (Appendix B allows properties beyond the three
 * it reserves; docs/formats/metatf.md): how text views show the number,
 * and where delta and stride find the previous value ("field", the
 * paper's rule and the default, or "record", what hatf10.dtd files were
 * written with). Global definitions
 * come before the first section, as the grammar says. The predefined
 * records vfield, comment, section and metadata are parsed first from
 * Appendix B's own text (mtf_dtd_prelude), completed where Appendix B
 * leaves a field without width or interpretation (docs/formats/metatf.md).
 *
 * Errors: a negative errno and "FILE:LINE:COL: what" in err (line and
 * column 1-based, columns in bytes): -EIO for a malformed or inconsistent
 * DTD, -ENOTSUP for what is valid but over a cap below or not supported
 * (a repeat inside a repeat). Nothing allocates; input never aborts. */
#ifndef TM_MTF_DTD_H
#define TM_MTF_DTD_H

#include <stddef.h>
#include <stdint.h>

#include "../common/tm_err.h"
#include "../record/record.h"

#define MTF_NAME_MAX TM_NAME_MAX /* names, including the NUL */
#define MTF_FILE_MAX 64          /* the DTD's name in messages */
#define MTF_DTD_TEXT_MAX 65536   /* bytes of DTD text */
#define MTF_DTD_RECORDS_MAX 96   /* record definitions, nested and predefined included */
#define MTF_DTD_NODES_MAX 512    /* field nodes of all records */
#define MTF_DTD_PROPS_MAX 512    /* property statements */
#define MTF_DTD_SECTIONS_MAX TM_SCHEMA_SECTIONS_MAX
#define MTF_DTD_DEPTH_MAX 8 /* nesting of groups and records in one record */

/* Interpretations. The numbers are the metadata record's property codes
 * (Appendix B's table); property 0 there is the width. */
enum mtf_interp {
        MTF_I_NONE = 1,
        MTF_I_BASEOFFSET = 2,
        MTF_I_DELTA = 3,
        MTF_I_DEFAULT = 4,
        MTF_I_SECTIONOFFSET = 5,
        MTF_I_STRIDE = 6,
        MTF_I_SECTIONSTRIDE = 7,
};
#define MTF_PROP_WIDTH_CODE 0 /* the metadata record's property code for width */

/* Does interpretation i store nothing in the record? (Appendix B: the
 * widths of default, stride and sectionStride fields are zero.) */
static inline int mtf_interp_stores_nothing(unsigned i)
{
        return i == MTF_I_DEFAULT || i == MTF_I_STRIDE || i == MTF_I_SECTIONSTRIDE;
}

/* Name of interpretation i as the DTD spells it, "?" if none. */
const char *mtf_interp_name(unsigned i);

/* ---- the syntax tree ---- */

enum mtf_node_type {
        MTF_N_NAME,   /* a field, or a record used by name (vfield) */
        MTF_N_GROUP,  /* ( field, field, ... ) */
        MTF_N_RECORD, /* a record defined inline: name : field { ... } */
        MTF_N_REPEAT, /* count * simple */
};

struct mtf_node {
        uint8_t type;            /* enum mtf_node_type */
        char name[MTF_NAME_MAX]; /* NAME: the name; REPEAT: the count field */
        int16_t child;           /* GROUP: first child; REPEAT: the repeated node */
        int16_t next;            /* next sibling in the group, -1 */
        int16_t record;          /* RECORD: index into mtf_dtd.record */
        uint32_t line, col;
};

/* A record definition: top-level (global or in a section) or inline. */
struct mtf_rdef {
        char name[MTF_NAME_MAX];
        int16_t section;    /* index into mtf_dtd.section, -1 global */
        int16_t parent;     /* enclosing record of an inline one, -1 top level */
        int16_t field;      /* root node */
        uint8_t predefined; /* from mtf_dtd_prelude */
        uint32_t line, col;
};

enum mtf_prop_name { MTF_P_WIDTH, MTF_P_INTERP, MTF_P_VALUE, MTF_P_DISPLAY, MTF_P_PREVIOUS };
enum mtf_value_kind {
        MTF_V_NUM,    /* num */
        MTF_V_REF,    /* ref.ref_prop: another field's property */
        MTF_V_INTERP, /* interp with arg[0], arg[1] */
        MTF_V_WORD,   /* display, previous: num is enum mtf_display or mtf_previous */
};

/* leaf.display: the display property, or what the field's role gives. */
enum mtf_display { MTF_D_UNSET, MTF_D_DECIMAL, MTF_D_HEX };

/* leaf.previous: where delta and stride find the previous value. FIELD
 * (Appendix B, from HATF): "the value of the same field in the most recent
 * previous record", whatever record kind and interpretation gave it;
 * RECORD: the value this field position of this record kind last decoded
 * under delta or stride (tracemount's writer before hatf10v2.dtd). */
enum mtf_previous { MTF_PV_FIELD, MTF_PV_RECORD };

struct mtf_prop {
        char field[MTF_NAME_MAX];
        uint8_t prop;  /* enum mtf_prop_name */
        uint8_t vkind; /* enum mtf_value_kind */
        uint8_t interp;
        uint8_t ref_prop;
        char ref[MTF_NAME_MAX];
        uint64_t num;
        uint64_t arg[2]; /* two's complement when written negative */
        int16_t record;  /* the record it belongs to, -1 if at section or global level */
        int16_t section; /* -1 global */
        uint32_t line, col;
};

struct mtf_sdef {
        char name[MTF_NAME_MAX];
        uint32_t number; /* 1..255 */
        uint32_t line, col;
};

struct mtf_dtd {
        char file[MTF_FILE_MAX]; /* for messages: "hatf10.dtd" */
        unsigned nrecords, nnodes, nprops, nsections;
        struct mtf_rdef record[MTF_DTD_RECORDS_MAX];
        struct mtf_node node[MTF_DTD_NODES_MAX];
        struct mtf_prop prop[MTF_DTD_PROPS_MAX];
        struct mtf_sdef section[MTF_DTD_SECTIONS_MAX];
};

/* The predefined records, Appendix B's text completed (NUL-terminated). */
extern const char mtf_dtd_prelude[];

/* Parse text[0..len) (need not be NUL-terminated) after the prelude into
 * *d, naming the DTD file in messages (its basename is enough). Returns 0
 * or a negative errno with "file:line:col: what" in err. */
int mtf_dtd_parse(struct mtf_dtd *d, const char *file, const char *text, size_t len,
                  struct tm_err *err);

/* ---- the compiled form ---- */

#define MTF_LEAVES_MAX 24 /* leaf fields of one record kind */
#define MTF_KINDS_MAX TM_SCHEMA_KINDS_MAX
#define MTF_FIXED_MAX 4096 /* bytes of a fixed-width field wider than 8 */
#define MTF_TAG_WIDTH_DEFAULT 1

enum mtf_role {
        MTF_R_DATA,     /* a record the decoder returns (comment included) */
        MTF_R_SECTION,  /* the predefined section record */
        MTF_R_METADATA, /* the predefined metadata record */
};

/* A leaf field of a record kind, in record order, with its initial
 * settings. Numbers have width 0..8; a wider fixed width is bytes; a
 * width that is another field's value (data.width = length.value) is
 * variable bytes. */
struct mtf_leaf {
        char name[MTF_NAME_MAX]; /* as the DTD writes it */
        uint32_t width;          /* the width property (0 if the interpretation needs none) */
        uint8_t interp;          /* enum mtf_interp */
        uint8_t rep;             /* a repeat count: the next rep leaves are repeated */
        uint8_t in_rep;          /* inside a repeated group */
        uint8_t is_len;          /* another leaf's width is this leaf's value */
        uint8_t has_value;       /* a value property: the tag, or a constant */
        uint8_t vfield;          /* came from the predefined vfield record */
        int8_t width_of;         /* variable bytes: the leaf whose value is the width, -1 */
        uint8_t display;         /* enum mtf_display */
        uint8_t previous;        /* enum mtf_previous */
        uint64_t arg[2];         /* the interpretation's arguments */
        uint64_t value;
        uint32_t line, col; /* where the DTD names it, for messages */
};

struct mtf_kind {
        char name[MTF_NAME_MAX];
        int16_t section; /* index into mtf_layout.section, -1 global */
        uint8_t role;    /* enum mtf_role */
        uint8_t nleaves; /* leaf[0] is the tag */
        uint32_t tag;
        uint32_t line, col;
        struct mtf_leaf leaf[MTF_LEAVES_MAX];
};

struct mtf_layout {
        char file[MTF_FILE_MAX];
        unsigned tag_width; /* bytes, 0..4; 0: one kind, untagged (mtf_dtd_compile) */
        unsigned nkinds, nsections;
        struct mtf_kind kind[MTF_KINDS_MAX];
        struct mtf_sdef section[MTF_DTD_SECTIONS_MAX];
};

/* Is leaf l bytes rather than a number? */
static inline int mtf_leaf_is_bytes(const struct mtf_leaf *l)
{
        return l->width_of >= 0 || l->width > 8;
}

/* Compile d into *l: every top-level record with a tag value is a kind
 * (its tag first, implied when its fields do not name it); records used
 * by name are expanded in place; each leaf takes its properties from the
 * innermost scope that sets them, searching the kind's own properties,
 * then those of the records it nests (outer first), then its section's,
 * then the global ones. Checks what the paper obliges (a width and an
 * interpretation for every field, a value for every tag, tags unique
 * within a section, the tag width set once, globally).
 *
 * tag.width = 0 (tracemount's: a format whose records are all of one
 * kind, docs/formats/bound.md): records carry no tag, so the DTD has
 * exactly one record with a tag value, 0, no sections, and the predefined
 * comment, section and metadata records are left out (nothing could name
 * them); that record must store at least one byte. The decoder reads
 * every record as that kind; the encoder writes tagged DTDs only.
 *
 * Returns 0 or a negative errno with "file:line:col: what" in err. */
int mtf_dtd_compile(const struct mtf_dtd *d, struct mtf_layout *l, struct tm_err *err);

#endif
