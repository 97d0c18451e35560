/* tracetool internals shared by its modules.
 *
 * Commands return the process exit status: 0 ok, 1 failure (a message has
 * been printed on stderr), 2 usage error. */
#ifndef TOOLS_H
#define TOOLS_H

#include <stdint.h>
#include <time.h>

#include "codecs/containers/container.h"
#include "codecs/address/trace.h"

#define TOOL_OK 0
#define TOOL_FAIL 1
#define TOOL_USAGE 2

/* tracetool pack [options] IN OUT (pack.c). */
int pack_main(int argc, char **argv);

/* Format and container from an output name NAME<codec suffix>[.gz|.zst]:
 * *codec is the encoder whose suffix (".din", ".pdt", ".pdt2"; the longest
 * that matches) ends the name once ".gz" / ".zst" is taken off, or NULL;
 * *kind is gzip, zstd or plain. */
void pack_guess(const char *out, const struct tm_codec **codec, enum tm_cont_kind *kind);

/* A progress bar on stderr, drawn only when stderr is a terminal. */
struct progress {
        int enabled;
        const char *label;
        struct timespec last; /* last redraw */
        int drawn;
};

/* Set p up; the bar is enabled when stderr is a terminal. */
void progress_init(struct progress *p, const char *label);

/* A tm_progress_fn: arg is a struct progress. Redraws at most ten times a
 * second. total 0 means unknown (shows bytes only). */
void progress_update(void *arg, uint64_t done, uint64_t total);

/* Erase the bar (if drawn) so that the next message starts a clean line. */
void progress_end(struct progress *p);

/* Write all of buf to fd, retrying short writes. Returns 0 or -errno. */
int tool_write_all(int fd, const void *buf, size_t n);

#endif
