/* tracetool internals shared by its modules.
 *
 * Commands return the process exit status: 0 ok, 1 failure (a message has
 * been printed on stderr), 2 usage error. */
#ifndef TOOLS_H
#define TOOLS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define TOOL_OK 0
#define TOOL_FAIL 1
#define TOOL_USAGE 2

/* tracetool pack [options] IN OUT (pack.c; the packer: pack.h). */
int pack_main(int argc, char **argv);

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
