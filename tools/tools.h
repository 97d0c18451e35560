/* tracetool internals shared by its modules.
 *
 * Commands return the process exit status: 0 ok, 1 failure (a message has
 * been printed on stderr), 2 usage error. */
#ifndef TOOLS_H
#define TOOLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define TOOL_OK 0
#define TOOL_FAIL 1
#define TOOL_USAGE 2

/* tracetool pack [options] IN OUT (pack.c; the packer: pack.h). */
int pack_main(int argc, char **argv);

/* Progress of a long pass on stderr. On a terminal, a bar redrawn in place
 * at most ten times a second; otherwise (a log, a pipe) one line every
 * PROGRESS_LINE_S seconds once the job has run that long, so a short job
 * prints nothing. The job's clock starts at the process's first
 * progress_init: a tracetool process runs one command, whose passes (pack's
 * second pass, a retry) are one job. */
#define PROGRESS_LINE_S 5

struct progress {
        int enabled; /* 0: nothing is ever printed */
        int tty;     /* out is a terminal: the bar; else lines */
        FILE *out;   /* stderr */
        const char *label;
        struct timespec start; /* the job's start */
        struct timespec last;  /* last redraw or line */
        int drawn;             /* the bar is on the screen */
};

/* Set p up for out = stderr: the bar when it is a terminal, else lines. */
void progress_init(struct progress *p, const char *label);

/* A tm_progress_fn: arg is a struct progress. total 0 means unknown
 * (shows bytes only). */
void progress_update(void *arg, uint64_t done, uint64_t total);

/* Erase the bar (if drawn) so that the next message starts a clean line. */
void progress_end(struct progress *p);

/* Write all of buf to fd, retrying short writes. Returns 0 or -errno. */
int tool_write_all(int fd, const void *buf, size_t n);

#endif
