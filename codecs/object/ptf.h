/* PTF: POSSE Trace Format 1.0 object-store traces as a record codec.
 *
 * Humphries, Klauser, Wolf & Zorn, "POSSE Trace Format Version 1.0",
 * CU-CS-897-00 (2000). docs/formats/ptf.md gives the grammar as
 * implemented and every decision the report leaves open. The ASCII form:
 *
 *   Trace begin
 *   [ID ]TYPE PARAMETERS...        one event a line
 *   Trace end
 *
 * decodes to records of tm_schema_ptf: one kind per event type of the
 * report's Table 1, named by its abbreviation (fo co cao do sr gr dr dw
 * adr adw er ew ts te), and a kind Trace whose one field Marker is
 * "begin" or "end", so that the generic ascii view of a trace is the
 * trace's own text (the report's Figure 3 byte for byte; single blanks,
 * no event ids). Fields are named as section 3.2 names the parameters;
 * fo's variable lists are one TM_FT_LIST field, MemberFormatIds, in the
 * order of the line, shown as words (TM_PTF_SHOW_WORDS) with NameOfClass,
 * so an fo line of any number of member formats is PTF text too.
 *
 *   tag  kind   fields
 *   0    Trace  Marker
 *   1    fo     FormatId SuperFormatId NumberOfPointers NumberOfDataMembers
 *               NumberOfArrayMembers LengthOfClassName MemberFormatIds NameOfClass
 *   2    co     FormatId OId
 *   3    cao    FormatId OId ContainerOId NoOfElements
 *   4    do     FormatId OId
 *   5    sr     FormatId OId
 *   6    gr     -
 *   7    dr     FormatId OId Offset
 *   8    dw     FormatId OId Offset
 *   9    adr    FormatId OId Offset Index Length
 *   10   adw    FormatId OId Offset Index Length
 *   11   er     FormatId FromOId Edge
 *   12   ew     FormatId FromOId Edge ToOId
 *   13   ts     -
 *   14   te     -
 *
 * The optional leading event id is accepted and not kept (ptf.md says
 * why). Decoder state: the line count and where the trace is (before
 * Trace begin, in the events, after Trace end), 16 bytes. List values
 * are written to a per-thread buffer that lives until the next decode
 * call on the same thread (as Meta-TF's, codecs/metatf/metatf.h). */
#ifndef TM_PTF_H
#define TM_PTF_H

#include <stddef.h>
#include <stdint.h>

#include "../record/record.h"

/* Longest line accepted, without its line end. */
#define TM_PTF_LINE_MAX 65535
/* Most values in one fo's MemberFormatIds (NumberOfDataMembers + 2 x
 * NumberOfArrayMembers). */
#define TM_PTF_LIST_MAX 4096

/* The show of fo's MemberFormatIds and NameOfClass, the row
 * tm_show_ptf_words (ptf.c; codecs/record/text.h): in the lines as PTF's
 * own text has them, a list's numbers separated by blanks, a text's
 * bytes as they are ('\n' as %0A), an empty one not at all (nor the blank
 * before it); fields/ shows them as one token all the same. A code kept
 * in schemas (the native encoding): fixed. */
#define TM_PTF_SHOW_WORDS 4

enum tm_ptf_kind {
        TM_PK_TRACE,
        TM_PK_FO,
        TM_PK_CO,
        TM_PK_CAO,
        TM_PK_DO,
        TM_PK_SR,
        TM_PK_GR,
        TM_PK_DR,
        TM_PK_DW,
        TM_PK_ADR,
        TM_PK_ADW,
        TM_PK_ER,
        TM_PK_EW,
        TM_PK_TS,
        TM_PK_TE,
        TM_PK_N,
};

/* Field indexes in tm_schema_ptf. */
enum tm_ptf_field {
        TM_PF_MARKER,
        TM_PF_FORMAT_ID,
        TM_PF_OID,
        TM_PF_SUPER_FORMAT_ID,
        TM_PF_NUM_POINTERS,
        TM_PF_NUM_DATA,
        TM_PF_NUM_ARRAYS,
        TM_PF_NAME_LEN,
        TM_PF_MEMBER_FORMATS,
        TM_PF_NAME,
        TM_PF_CONTAINER_OID,
        TM_PF_NUM_ELEMENTS,
        TM_PF_FROM_OID,
        TM_PF_TO_OID,
        TM_PF_EDGE,
        TM_PF_OFFSET,
        TM_PF_INDEX,
        TM_PF_LENGTH,
        TM_PF_N,
};

/* The object family's schema; its name is "object". */
extern const struct tm_schema tm_schema_ptf;

/* The ASCII form: probe by the first line, "Trace begin". Decoder (ptf.c)
 * and writer (ptf_write.c); pack suffix .ptf. */
extern const struct tm_rcodec tm_rcodec_ptf;

/* The writer's hooks (tm_rcodec's enc_*; one unnamed encoding): records
 * of tm_schema_ptf as the ASCII form, each line the record's ascii line;
 * the Trace markers the records lack are added, what the grammar cannot
 * hold is -EINVAL naming the record (ptf_write.c says what). */
int tm_ptf_enc_open(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                    struct tm_err *err);
int tm_ptf_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                   struct tm_err *err);
int tm_ptf_enc_finish(struct tm_renc *e, struct tm_err *err);
void tm_ptf_enc_free(struct tm_renc *e);

/* *s = tm_schema_ptf: the schema both forms' encoders take. */
void tm_ptf_enc_schema(struct tm_schema *s);

/* Both forms' enc_fit (record.h): records of tm_schema_ptf made a trace
 * the ASCII form holds, which the binary form holds as well: Trace begin
 * first, Trace end last and no marker between, an fo's counts those of
 * its list (NumberOfDataMembers + 2 x NumberOfArrayMembers) and its name
 * (LengthOfClassName). */
void tm_ptf_enc_fit(struct tm_rec *r, size_t n);

/* The binary form (report section 4.1, layout ours: docs/formats/ptf.md):
 * probe by the version line "PTF 1.0"; the header's note lines are the
 * blob "notes" (sections/notes). Decoder and encoder; pack suffix .ptfb. */
extern const struct tm_rcodec tm_rcodec_ptf_bin;

#endif
