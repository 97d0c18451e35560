/* tables: a family's tables of a record trace (codecs/record/family.h,
 * tables: java's classes and methods), made by a pass of their own.
 *
 * The statistics block and the index have a fixed size, and a table grows
 * with the trace, so a table is kept in neither: the first time one of a
 * trace's tables is asked for, this pass decodes the trace from its first
 * record, feeds a fresh accumulator of the family, and renders every
 * table; the views keep the text, and the accumulator for the family's
 * binary record, until the trace closes or is rewritten
 * (views/records.c); opening binary makes them too. Memory is what the
 * family's accumulator bounds plus the text, and a fixed input buffer
 * (feed.h). The pass reads through a verifying reader (container.h) and
 * decodes as many records as the index pass counted, no more: the index
 * pass has verified them, so a trace damaged part way gets the tables of
 * its intact prefix (a prefix of the intact tables: names are listed as
 * first met), which the views end with the damage as they end the views
 * of records; a read or decode error before that count (bytes that
 * changed since) is the pass's error, never a shorter table. */
#ifndef TM_TABLES_H
#define TM_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/containers/container.h"
#include "../codecs/record/family.h"

/* The trace to decode: its container, codec (with its per-trace ctx),
 * schema, header length and initial state, the records to decode (the
 * index's count); path for messages. */
struct tm_tables_src {
        struct tm_cont *cont;
        const struct tm_rcodec *codec;
        void *ctx;
        const struct tm_schema *s;
        uint64_t hdr_len;
        const struct tm_rstate *st0;
        uint64_t nrec;
        const char *path;
};

/* Every table of fam (which has tables) for the first src->nrec records
 * of src: text[i] (allocated, the caller frees it) of len[i] bytes, and
 * *acc, the finished accumulator they were made from, which the family's
 * binary hook reads to number what the tables list (the caller frees it
 * with fam->acc_free; it holds what the family bounds). Returns 0, or a
 * negative errno with err naming the file and offset: -ENOMEM, or the
 * container's or the decoder's error (-EIO) when fewer than src->nrec
 * records could be read; nothing is allocated then. */
int tm_tables_build(const struct tm_tables_src *src, const struct tm_family *fam, char **text,
                    size_t *len, struct tm_family_acc **acc, struct tm_err *err);

#endif
