/* Progress on stderr for long passes (pack, index, verify): tools.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "tools.h"

#define PROGRESS_WIDTH 30

static int64_t ms_between(const struct timespec *a, const struct timespec *b)
{
        return (int64_t)(b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

void progress_init(struct progress *p, const char *label)
{
        static struct timespec job_start; /* the process's first pass */
        if (!job_start.tv_sec && !job_start.tv_nsec)
                clock_gettime(CLOCK_MONOTONIC, &job_start);
        p->enabled = 1;
        p->tty = isatty(STDERR_FILENO);
        p->out = stderr;
        p->label = label;
        p->start = job_start;
        p->last = job_start;
        p->drawn = 0;
}

/* The bar, redrawn in place. */
static void draw_bar(struct progress *p, uint64_t done, uint64_t total)
{
        double mib = (double)done / (1 << 20);
        if (!total) {
                fprintf(p->out, "\r%s: %.1f MiB", p->label, mib);
                return;
        }
        unsigned fill = (unsigned)(done * PROGRESS_WIDTH / total);
        char bar[PROGRESS_WIDTH + 1];
        for (unsigned i = 0; i < PROGRESS_WIDTH; i++)
                bar[i] = i < fill ? '#' : ' ';
        bar[PROGRESS_WIDTH] = '\0';
        fprintf(p->out, "\r%s: [%s] %3u%% %.1f/%.1f MiB", p->label, bar,
                (unsigned)(done * 100 / total), mib, (double)total / (1 << 20));
}

/* One line for a log: what is done and the seconds since the job began. */
static void put_line(struct progress *p, uint64_t done, uint64_t total, int64_t ms)
{
        double mib = (double)done / (1 << 20);
        if (total)
                fprintf(p->out, "%s: %u%%, %.1f of %.1f MiB, %" PRId64 " s\n", p->label,
                        (unsigned)(done * 100 / total), mib, (double)total / (1 << 20), ms / 1000);
        else
                fprintf(p->out, "%s: %.1f MiB, %" PRId64 " s\n", p->label, mib, ms / 1000);
        fflush(p->out);
}

void progress_update(void *arg, uint64_t done, uint64_t total)
{
        struct progress *p = arg;
        if (!p || !p->enabled)
                return;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (total && done > total)
                done = total;
        if (!p->tty) {
                if (ms_between(&p->last, &now) < PROGRESS_LINE_S * 1000)
                        return;
                p->last = now;
                put_line(p, done, total, ms_between(&p->start, &now));
                return;
        }
        if (p->drawn && ms_between(&p->last, &now) < 100 && done != total)
                return;
        p->last = now;
        p->drawn = 1;
        draw_bar(p, done, total);
}

void progress_end(struct progress *p)
{
        if (p->enabled && p->tty && p->drawn)
                fprintf(p->out, "\r\033[K");
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
