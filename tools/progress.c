/* A one-line progress bar on stderr for long passes (index, verify). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "tools.h"

#define PROGRESS_WIDTH 30

void progress_init(struct progress *p, const char *label)
{
        p->enabled = isatty(STDERR_FILENO);
        p->label = label;
        p->last.tv_sec = 0;
        p->last.tv_nsec = 0;
        p->drawn = 0;
}

void progress_update(void *arg, uint64_t done, uint64_t total)
{
        struct progress *p = arg;
        if (!p || !p->enabled)
                return;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t ms = (int64_t)(now.tv_sec - p->last.tv_sec) * 1000 +
                     (now.tv_nsec - p->last.tv_nsec) / 1000000;
        if (p->drawn && ms < 100 && done != total)
                return;
        p->last = now;
        p->drawn = 1;
        double mib = (double)done / (1 << 20);
        if (!total) {
                fprintf(stderr, "\r%s: %.1f MiB", p->label, mib);
                return;
        }
        if (done > total)
                done = total;
        unsigned fill = (unsigned)(done * PROGRESS_WIDTH / total);
        char bar[PROGRESS_WIDTH + 1];
        for (unsigned i = 0; i < PROGRESS_WIDTH; i++)
                bar[i] = i < fill ? '#' : ' ';
        bar[PROGRESS_WIDTH] = '\0';
        fprintf(stderr, "\r%s: [%s] %3u%% %.1f/%.1f MiB", p->label, bar,
                (unsigned)(done * 100 / total), mib, (double)total / (1 << 20));
}

void progress_end(struct progress *p)
{
        if (p->enabled && p->drawn)
                fprintf(stderr, "\r\033[K");
        p->drawn = 0;
}

int tool_write_all(int fd, const void *buf, size_t n)
{
        const char *b = buf;
        while (n) {
                ssize_t k = write(fd, b, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                b += k;
                n -= (size_t)k;
        }
        return 0;
}
