/* rmap: records of one schema as records of another, by names.
 *
 * tracetool pack re-encodes a trace through a row whose encoder takes
 * records of its own schema (tm_rcodec.enc_schema): a din trace packed as
 * lackey text, a Meta-TF heap trace as HATF, an mtrace log as Meta-TF.
 * The map says, once per pair of schemas, what each record becomes:
 *
 *   kind    the target's kind of the same name;
 *   fields  each field of that kind takes the value of the record's field
 *           of the same name; 0 (an empty variable field) when the
 *           record's kind has none but its schema has that field (an
 *           Appendix C realloc has no size); the record's other fields
 *           are dropped (a lackey trace's sizes, packed as PDATS II);
 *   family  the target's family may then correct what names cannot say
 *           (tm_family.rec_refine: the heap family gives Appendix C's one
 *           realloc kind the outcome its addresses say).
 *
 * What cannot be mapped is an error for the records of that kind, and
 * only for them, naming the record: a kind the target has not (a heap
 * record packed as PDATS II), a field the target's kind needs that the
 * record's schema has nowhere (lackey's access sizes from din text), a
 * number where the target has a variable field or the reverse.
 *
 * Plain data, no allocation; schemas must outlive the map. */
#ifndef TM_RMAP_H
#define TM_RMAP_H

#include <stdint.h>

#include "family.h"
#include "record.h"

struct tm_rmap {
        const struct tm_schema *from, *to;
        const char *from_name, *to_name; /* for messages: "din", "lackey" */
        const struct tm_family *fam;     /* the target's, for rec_refine; NULL: none */
        /* records pass as they are: the same schema, or each kind of from
         * is the kind of the same index in to with its fields in the same
         * places (din's address schema in PDATS II's) and to's family
         * corrects nothing */
        int same;
        /* per kind of from: the target kind, or -1 (why[] says why) */
        int16_t kind[TM_SCHEMA_KINDS_MAX];
        /* per kind of from, per position of its target kind: the position
         * in the record that gives the value, or -1 for 0 */
        int8_t src[TM_SCHEMA_KINDS_MAX][TM_KIND_FIELDS_MAX];
        /* the same for the variable fields: var[] slot of the target's
         * record -> the record's slot, or -1 for an empty field */
        int8_t var[TM_SCHEMA_KINDS_MAX][TM_REC_VAR_MAX];
        uint8_t why[TM_SCHEMA_KINDS_MAX];   /* enum in rmap.c; 0 when the kind maps */
        uint8_t field[TM_SCHEMA_KINDS_MAX]; /* the target field why names */
};

/* Prepare m for records of from (named from_name in messages) becoming
 * records of to (to_name's), whose family is to_fam (tm_family_of(to),
 * family.h; NULL for none). */
void tm_rmap_init(struct tm_rmap *m, const struct tm_schema *from, const char *from_name,
                  const struct tm_schema *to, const char *to_name, const struct tm_family *to_fam);

/* Do records of from's kind k map? 1 or 0. */
int tm_rmap_kind_ok(const struct tm_rmap *m, unsigned k);

/* Record r of from, record number idx (for messages), as a record of to:
 * *out is r itself when records pass as they are (m->same), else o,
 * filled (its var pointers are r's). Returns 0, or -EINVAL with err
 * naming the record and why ("record 12 (read): lackey output needs its
 * field size, which din has not"). */
int tm_rmap_rec(const struct tm_rmap *m, const struct tm_rec *r, uint64_t idx, struct tm_rec *o,
                const struct tm_rec **out, struct tm_err *err);

#endif
