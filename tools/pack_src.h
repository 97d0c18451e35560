/* pack_src: tracetool pack's input, decoded to records in one pass.
 *
 * The input is a file read through its container (any container the
 * library reads), or a pipe (stdin, tracetool record's), read as it is:
 * uncompressed. Its first bytes say what it is: the first row of the
 * record codec table whose probe accepts them (codecs/registry.c), opened
 * and decoded through the row (views/feed.h); else a heaptrack data file
 * (tools/heapin/heapin.h: an import, not a row), whose events are records
 * of tm_schema_heap.
 *
 * A pass can be made again from the first record (pack_src_rewind): a
 * file is read again; a pipe only when it was opened with spool, which
 * copies it as it is read to an unnamed temporary file (in $TMPDIR) read
 * back before the rest of the pipe. Memory stays bounded; the spool takes
 * as much disk as the input, and only while pack runs. */
#ifndef TM_PACK_SRC_H
#define TM_PACK_SRC_H

#include <stdint.h>
#include <sys/types.h>

#include "lib_int.h"
#include "tools.h"

#define PACK_SRC_BATCH 256 /* records handed on at once */

/* Receives n records of the input's schema, in trace order; a nonzero
 * return stops the pass, which returns it. */
typedef int (*pack_src_fn)(void *arg, const struct tm_rec *r, size_t n);

struct pack_src {
        const char *name; /* for messages */
        int fd, own_fd;
        struct tm_cont *cont;
        struct tm_creader *r; /* NULL: a pipe, read as it is */
        int spool;            /* the pipe's copy, or -1 */
        uint64_t spool_len;   /* bytes in the spool */
        uint64_t replay;      /* next spool byte to read again; spool_len: none */
        uint8_t *head;        /* the first raw bytes, which the pass reads again */
        size_t headn, headpos;
        uint64_t raw;   /* raw bytes read in this pass */
        uint64_t total; /* raw bytes, 0: unknown */
        struct progress prog;
        /* what it is */
        const struct tm_rcodec *row; /* NULL: a heaptrack file */
        const char *format;          /* the row's name, or "heaptrack" */
        void *ctx;
        int opened;              /* row->open succeeded: ctx is to close */
        struct tm_schema schema; /* of its records */
        struct tm_rstate st0;
        uint64_t hdr_len;
        struct tm_feed feed;
        struct tm_rec rec[PACK_SRC_BATCH];
        /* during a pass */
        pack_src_fn fn;
        void *arg;
        struct tm_err *err;
};

/* Open the input: path, or "-" for stdin, or (fd >= 0) that descriptor,
 * not owned; name names it in messages. A regular file goes through its
 * container, anything else is read as it is; spool: keep a copy of such
 * a pipe so that it can be rewound. Then probe and open it. Returns 0 or
 * a negative errno with err (-EMEDIUMTYPE: not a trace this build reads).
 * pack_src_close frees s either way. */
int pack_src_open(struct pack_src *s, const char *path, int fd, const char *name, int spool,
                  struct tm_err *err);

/* Stop copying the pipe (it cannot be rewound after this). */
void pack_src_spool_end(struct pack_src *s);

/* One pass from the current position (after open or rewind) to the end,
 * calling fn(arg, ...). Returns 0, fn's nonzero return, or a negative
 * errno with err naming the input. */
int pack_src_run(struct pack_src *s, pack_src_fn fn, void *arg, struct tm_err *err);

/* Back to the first record; -ESPIPE when the input cannot be read again. */
int pack_src_rewind(struct pack_src *s);

/* After a record was refused: damage the container has not reported yet
 * may be the cause, so read the rest of a file's raw stream (checksums
 * included) and, if it is damaged, put that in err instead. */
void pack_src_blame_damage(struct pack_src *s, struct tm_err *err);

void pack_src_close(struct pack_src *s);

#endif
