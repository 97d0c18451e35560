/* records internals: struct tm_records and what the files of the records'
 * views share. records.c opens a trace's records (the codec, the schema,
 * the view names, the index file); records_view.c resolves view names
 * and gives sizes; records_cursor.c reads them through cursors;
 * records_verify.c decodes the archive again to check the index file.
 * Not for use outside them. */
#ifndef TM_RECORDS_INT_H
#define TM_RECORDS_INT_H

#include "records.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codecs/record/text.h"
#include "feed.h"
#include "hmem.h"
#include "index.h"
#include "tables.h"
#include "trace_obj.h"

#define RV_BATCH 256
#define RV_TEXT_CAP (64u << 10)
/* A readahead worker fills buffers that the FUSE threads read next on the
 * other core; vector stores straight into them are slow (as for address
 * views, views/vfile.c), so a worker renders RV_STAGE bytes at a time into
 * a buffer that stays in its cache and copies them out. */
#define RV_STAGE (32u << 10)

enum rv_kind {
        RV_ASCII,
        RV_BINARY,
        RV_RAW,
        RV_STATS,
        RV_SCHEMA,
        RV_STREAM,  /* streams/<kind> */
        RV_FORM,    /* a text form besides ascii (tm_schema.form: xdin) */
        RV_FIELD,   /* fields/<field> */
        RV_SECTION, /* sections/<name>: the records read in that section */
        RV_BLOB,    /* sections/<name>: a section of bytes (tm_rcodec.blobs) */
        RV_ID,      /* streams/<field>/<id>: the records of one id of the family's
                     * stream field (heap: streams/thread/<id>, one thread's) */
};

/* The names of a trace's per-id streams (streams/<field>/<id>), in a block
 * of their own: a retry (tm_records_reopen) starts a new block for the new
 * version's ids and keeps the old one, which a reader of the old list may
 * still be comparing names with, until the trace closes. */
struct rt_ids {
        struct rt_ids *older;
        char name[TM_FAMILY_STREAMS_MAX][2 * TM_NAME_MAX];
};

struct tm_records {
        const struct tm_rcodec *codec;
        void *ctx;
        struct tm_schema schema;
        struct tm_rstate st0;
        uint64_t hdr_len;
        char (*names)[2 * TM_NAME_MAX]; /* of the views known at open */
        struct rt_ids *ids;             /* of the per-id streams, or NULL (no such family) */
        const char **views;
        struct tm_index *ix;
        char *stats, *schema_text;
        size_t stats_len, schema_len;
        unsigned nblobs; /* the codec's byte sections, then the family's tables */
        struct tm_blob blob[TM_SCHEMA_SECTIONS_MAX];
        unsigned ntables;            /* the last ntables blobs: their p NULL until made */
        pthread_mutex_t tables_mu;   /* one pass makes them (rt_tables) */
        struct tm_family_acc *tacc;  /* that pass's accumulator (fam->binary's), or NULL */
        struct tm_text_plan *plan;   /* how the schema renders, shared read-only: ascii's
                                      * plan, then one per form (tm_index_plans) */
        const struct tm_family *fam; /* the schema's family, or NULL */
        unsigned nfixed;             /* views known at open; per-id streams follow */
        char *notes;    /* the trace's leading comments, a line each (the stats print them) */
        int notes_done; /* notes made (rt_notes, under tables_mu) */
        /* The codec's open failed on an archive its probe took (a Meta-TF
         * DTD missing or bad): the trace is a directory whose views fail
         * with this (code -EIO), but stats, which says so, and errors. */
        int failed;
        struct tm_err open_err;
};

/* records.c (the comments above each say what it does) */

char *text_fit(char *buf, size_t len);
const char *rt_notes(struct tm_trace *t, struct tm_records *rt);
int rt_load(struct tm_trace *t, const char *path, const struct tm_index_key *key, struct tm_cont *c,
            struct tm_index **out, int *fd_out, struct tm_err *err);

/* records_view.c: the name, kind and column of a view, its text */
size_t rt_bin_size(const struct tm_records *rt);
int rv_parse(const struct tm_records *rt, const char *view, enum rv_kind *kind, unsigned *sel);
unsigned rv_col(const struct tm_schema *s, enum rv_kind kind, unsigned sel);
int rv_stats(struct tm_trace *t, const char **text, size_t *len, struct tm_err *err);
void rv_text_of(struct tm_trace *t, enum rv_kind kind, unsigned sel, const char **text,
                uint64_t *len);
int rt_tables(struct tm_trace *t, unsigned sel, struct tm_err *err);

#endif
