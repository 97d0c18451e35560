/* pack_wire: tracetool record's stream (tools/record/rec_wire.h) made a
 * heap trace.
 *
 * The recorder writes HATF with its mark after the signature and a
 * sequence number in the heap field. Its records go through a reorder
 * window (record/reorder.h) that puts them back in the order of the
 * calls, with heap 0; its notices ("tmrecord VERB SEQ ARG": exec, fork,
 * spawn, pymalloc) and what the window could not restore become notes:
 * lines the packer puts at the start of the trace as comments and prints
 * (tools/pack_job.c; docs/record.md). */
#ifndef TM_PACK_WIRE_H
#define TM_PACK_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "lib_int.h"
#include "record/reorder.h"

struct pack_wire {
        const char *name; /* the input, for notes and messages */
        /* a record of tm_schema_heap, in the order of the calls */
        int (*emit)(void *arg, const struct tm_rec *r);
        int (*note)(void *arg, const char *text); /* a note (at most 400 bytes) */
        void *arg;
        struct reorder ord;
        int exec_pending;
        uint64_t exec_seq, forks, fork_seq, spawns;
        char exec_what[256], spawn_what[256];
};

/* Is an input of row whose first n raw bytes are head a recorder's
 * stream: HATF, with the mark after the signature? */
int pack_wire_probe(const struct tm_rcodec *row, const uint8_t *head, size_t n);

/* Start w. Returns 0 or -ENOMEM with err. */
int pack_wire_init(struct pack_wire *w, const char *name,
                   int (*emit)(void *, const struct tm_rec *), int (*note)(void *, const char *),
                   void *arg, struct tm_err *err);

/* One record of the stream (tm_schema_heap's), in arrival order. Returns
 * 0, what emit or note returned, or a negative errno with err. */
int pack_wire_put(struct pack_wire *w, const struct tm_rec *r, struct tm_err *err);

/* The stream ended: the rest of the window, then the notes of what it
 * could not show. */
int pack_wire_end(struct pack_wire *w);

void pack_wire_free(struct pack_wire *w);

#endif
