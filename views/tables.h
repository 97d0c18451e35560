/* tables: a family's tables of a record trace (codecs/record/family.h,
 * tables: java's classes and methods), made by a pass of their own.
 *
 * The statistics block and the index have a fixed size, and a table grows
 * with the trace, so a table is kept in neither: the first time one of a
 * trace's tables is asked for, this pass decodes the trace from its first
 * record, feeds a fresh accumulator of the family, and renders every
 * table; the views keep the text until the trace closes or is rewritten
 * (views/records.c). Memory is what the family's accumulator bounds plus
 * the text, and a fixed input buffer (feed.h). A trace damaged part way
 * gets the tables of its intact prefix, as its statistics are of that
 * prefix (the damage is reported by the index pass and the views of
 * records). */
#ifndef TM_TABLES_H
#define TM_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "../codecs/containers/container.h"
#include "../codecs/record/family.h"

/* The trace to decode: its container, codec (with its per-trace ctx),
 * schema, header length and initial state; path for messages. */
struct tm_tables_src {
        struct tm_cont *cont;
        const struct tm_rcodec *codec;
        void *ctx;
        const struct tm_schema *s;
        uint64_t hdr_len;
        const struct tm_rstate *st0;
        const char *path;
};

/* Every table of fam (which has tables) for src: text[i] (allocated, the
 * caller frees it) of len[i] bytes. Returns 0, or a negative errno with
 * err naming the file (-ENOMEM; the container's error when its first
 * bytes cannot be read); nothing is allocated then. */
int tm_tables_build(const struct tm_tables_src *src, const struct tm_family *fam, char **text,
                    size_t *len, struct tm_err *err);

#endif
