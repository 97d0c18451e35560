/* pack: re-encode a trace as any row of the registry that writes
 * (tracetool pack; tracetool record packs its program's stream through it).
 *
 * One path for every row: the input is decoded to records through its own
 * row (tools/pack_src.h: a file through its container, a pipe as it is;
 * any trace the library reads, and heaptrack files), made records of the
 * schema the output row's encoder takes by the names of their kinds and
 * fields (codecs/record/rmap.h: a record the output cannot hold is an
 * error naming it), and encoded by the output row (enc_open / enc_put /
 * enc_finish) into the container the output's name asks for. The output
 * row is the one whose suffix (tm_rcodec.suffix) ends the name once .gz
 * or .zst is taken off, the longest that matches; never a list of names
 * here.
 *
 * Which of the row's encodings (tm_rcodec.encodings) is written:
 *  - one asked for (-e), or the row's only one;
 *  - for the rows whose encodings are address widths (BITS[/UNIT],
 *    codecs/address/arec.h), the one --addr-bits and --unit name, by
 *    default 32/4, or 64/1 for an input with access sizes (lackey: valgrind
 *    on 64-bit machines, byte-granular instructions); when the encoder
 *    refuses a record for want of 64 bits (-ERANGE) or of unit 1 (-EDOM)
 *    and that option was not given, pack starts again with it (a pipe is
 *    spooled for that: pack_src.h);
 *  - for a row with typed parameters (tm_rcodec.enc_params: the native
 *    encoding), its encoder for the input's schema (enc_schema_for), with
 *    the parameters given (--param; --level sets "level") or the row's
 *    defaults, encoding on PACK_THREADS threads;
 *  - else every encoding at once, keeping the smallest (tools/pack_out.h).
 *    In a compressed container they are compared on the input's first
 *    PACK_PICK_RECORDS records in zstd at PACK_PICK_LEVEL (for gzip
 *    output too: the sample's files are not kept), and the one
 *    kept packs the whole input (read again from its start; a pipe is
 *    spooled for that) at the final level.
 *
 * A recorder's stream (tools/record/rec_wire.h) is put in the order of
 * the calls and its notices become notes (tools/pack_wire.h): comments at
 * the start of the trace when the output holds heap comments (the trace
 * is packed once more when a note comes after the first records), and
 * lines on msg. */
#ifndef TM_PACK_H
#define TM_PACK_H

#include <stdio.h>

#include "lib_int.h"

/* The zstd level pack writes by default for every row but the address
 * rows' (whose archives get the library's default), the gzip level, and
 * the level of tracetool record, where the program waits on the packer:
 * docs/performance.md "Packing" and docs/record.md have the measurements;
 * --level 19 writes the smallest archives. */
#define PACK_LEVEL 6
#define PACK_GZIP_LEVEL 4
#define PACK_RECORD_LEVEL 12
/* Candidate encodings, when there are several, are compared at this zstd
 * level on the first PACK_PICK_RECORDS records (a recorder's stream: on
 * all of them, in OUT's container); only the one kept is packed at the
 * final level. */
#define PACK_PICK_LEVEL 1
#define PACK_PICK_RECORDS (1u << 16)
/* Threads an encoder with typed parameters encodes on (both cores of a
 * small machine while the caller decodes the input; docs/performance.md
 * "The native encoding" has the figures). */
#ifndef PACK_THREADS
#define PACK_THREADS 2
#endif
/* The name pack gives OUT when only IN is given: IN's with this suffix
 * (the native encoding's). */
#define PACK_NATIVE_SUFFIX ".tmn"

struct pack_opts {
        const struct tm_rcodec *row; /* the output's (with an encoder) */
        enum tm_cont_kind kind;      /* its container */
        const char *enc;             /* one of the row's encodings; NULL: pack's choice */
        unsigned addr_bits, unit;    /* an address encoding's parts; 0: not given */
        int level;                   /* the container's level; 0: the default (above) */
        /* values of the row's typed parameters (tm_rcodec.enc_params),
         * those whose bit is in param_set given; the others the row's
         * defaults ("level": level when given) */
        int param[TM_RENC_PARAMS_MAX];
        unsigned param_set;
        size_t frame_size;           /* zstd: raw bytes a frame; 0: 1 MiB */
        FILE *msg;                   /* the line saying what was written, the notes; NULL: none */
};

/* Pack the trace in (a path, "-" for stdin), or the one read from fd when
 * fd >= 0 (not owned; a pipe works: it is read once), named in_name in
 * messages, into out (a path, written as out.tmp and renamed; "-" for
 * stdout). Returns 0 or a negative errno with err set (naming the input
 * and the record or offset); err.msg is empty when pack has printed on
 * stderr what to do instead (which option to give). */
int pack_trace(const char *in, int fd, const char *in_name, const char *out,
               const struct pack_opts *o, struct tm_err *err);

/* pack_trace of fd into out_path, the row and container from its name
 * (pack_guess), enc and level as in struct pack_opts (tracetool record's
 * entry). -EINVAL when the name says no row. */
int pack_fd(int fd, const char *in_name, const char *out_path, const char *enc, int level,
            FILE *msg, struct tm_err *err);

/* Format and container from an output name NAME<suffix>[.gz|.zst]: *row
 * is the row with an encoder whose suffix (".din", ".pdt2", ".hatf", ...;
 * the longest that matches) ends the name once ".gz" / ".zst" is taken
 * off, or NULL; *kind is gzip, zstd or plain. */
void pack_guess(const char *out, const struct tm_rcodec **row, enum tm_cont_kind *kind);

/* Can pack write row: has it an encoder (and the schema it takes)? */
int pack_writes(const struct tm_rcodec *row);

/* Is name one of row's encodings? */
int pack_enc_listed(const struct tm_rcodec *row, const char *name);

/* Are row's encodings address widths, BITS[/UNIT] (codecs/address/arec.h),
 * which --addr-bits and --unit name? */
int pack_widths(const struct tm_rcodec *row);

/* "NAME=N", one of row's typed parameters (tm_rcodec.enc_params), into
 * o's param and param_set; -1 with a message on stderr when it is not
 * one or N is out of its range. */
int pack_set_param(struct pack_opts *o, const char *s);

/* --level's value: 1 to 22 into *level; -1 if s is not one. */
int pack_parse_level(const char *s, int *level);

#endif
