/* pack_heap: heap traces in any input form -> a HATF or Meta-TF archive.
 *
 * Inputs, told apart by content: a HATF stream (what tracetool record's
 * interposer writes, or a HATF archive to re-encode), a glibc mtrace log,
 * a heaptrack data file, HATF as Meta-TF; plain, gzip or zstd. Output: HATF,
 * or Meta-TF when OUT ends .mtf (before .gz / .zst), in the encoding asked
 * for (NULL: the smallest after compression, which pack reports), in the
 * container OUT's name asks for (.zst seekable zstd, .gz, plain). */
#ifndef TM_PACK_HEAP_H
#define TM_PACK_HEAP_H

#include <stdio.h>

#include "../codecs/common/tm_err.h"

/* The zstd level heap archives get by default from tracetool pack, and
 * from tracetool record, where the program waits on the packer (gzip keeps
 * its own): docs/record.md has the measurements. */
#define PACK_HEAP_LEVEL 19
#define PACK_HEAP_RECORD_LEVEL 12
/* The level candidate encodings are compared at, when there are several. */
#define PACK_HEAP_PICK_LEVEL 3

/* Read the heap trace from fd (not owned; a pipe works: it is read once)
 * named in_name for messages, and write out_path. enc: a name from
 * hatf_encodings (codecs/heap/hatf.h), or for .mtf from mtf_encodings
 * (codecs/metatf/metatf.h), or NULL. level: the container's compression
 * level, 0 for its default (zstd: PACK_HEAP_LEVEL). msg, if not NULL, receives one line saying
 * what was chosen, and the notes (a line each). A recorder's stream
 * (tools/record/rec_wire.h) is put in the order of the calls and its
 * notices become notes at the start of the trace. Returns 0 or a negative
 * errno with err set (naming the input and offset). */
int pack_heap_fd(int fd, const char *in_name, const char *out_path, const char *enc, int level,
                 FILE *msg, struct tm_err *err);

/* --level's value: 1 to 22 into *level; -1 if s is not one. */
int pack_heap_parse_level(const char *s, int *level);

/* Does the command line of tracetool pack (argv[0] = "pack") ask for a
 * heap archive (OUT ends .hatf, .mtf, either with .gz or .zst)? */
int pack_heap_wanted(int argc, char **argv);

/* Is out a Meta-TF name (.mtf, .mtf.gz, .mtf.zst)? */
int pack_heap_mtf(const char *out);

/* The usage of heap packing, as its --help prints it (tracetool pack
 * --help prints it after the address formats' usage). */
void pack_heap_usage(FILE *f);

/* tracetool pack [-e ENCODING] [--level N] IN OUT.{hatf,mtf}[.gz|.zst]; returns the exit
 * status (tools.h). */
int pack_heap_main(int argc, char **argv);

#endif
