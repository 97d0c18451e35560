/* stats_bench: the statistics pass (views/stats.h: the generic part and
 * the heap family's, codecs/heap/heap_stats.h) on a record
 * trace, alone: its time and its memory.
 *
 *   stats_bench FILE             decode FILE streaming (any container, any
 *                                 record codec) and count its statistics
 *   stats_bench --decode FILE    decode only (the baseline of both figures)
 *
 * Prints the records, the CPU time of the statistics calls (tm_stats_add
 * and the end of the count in tm_stats_get, the external sorts when the
 * addresses overflowed the table) apart from decoding, the accumulator's
 * own peak of memory (tm_stats_peak_mem), the events it sorted through
 * temporary files, and the process's peak RSS (getrusage; decoding's own
 * share is what --decode prints). The raw stream is decoded as it comes
 * from the container, so memory does not grow with the trace. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "codecs/containers/container.h"
#include "codecs/record/record.h"
#include "views/feed.h"
#include "codecs/heap/heap_stats.h"
#include "views/stats.h"

#define BATCH 256

struct job {
        const char *path;
        int stats;
        uint8_t *head; /* the first bytes, until the codec is open */
        size_t hn, hcap;
        const struct tm_rcodec *codec;
        void *ctx;
        struct tm_schema s;
        struct tm_feed feed;
        struct tm_stats_acc *acc;
        struct tm_rec recs[BATCH];
        uint64_t records;
        double t_stats;
        struct tm_err err;
};

static double cpu_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const struct job *j, const char *what)
{
        fprintf(stderr, "stats_bench: %s: %s\n", j->path, what);
        exit(2);
}

static void drain(struct job *j)
{
        for (;;) {
                ssize_t n = tm_feed_decode(&j->feed, j->recs, BATCH, &j->err);
                if (n < 0)
                        die(j, j->err.msg);
                if (n == 0)
                        return;
                j->records += (uint64_t)n;
                if (j->stats) {
                        double t = cpu_now();
                        tm_stats_add(j->acc, j->recs, (size_t)n);
                        j->t_stats += cpu_now() - t;
                }
        }
}

static void feed(struct job *j, const uint8_t *buf, size_t n)
{
        while (n) {
                size_t room;
                uint8_t *dst = tm_feed_space(&j->feed, &room);
                size_t c = n < room ? n : room;
                memcpy(dst, buf, c);
                tm_feed_commit(&j->feed, c);
                buf += c;
                n -= c;
                drain(j);
        }
}

/* Probe and open the codec on the head gathered, then decode it. */
static void open_codec(struct job *j)
{
        struct tm_rstate st;
        size_t probe = j->hn < TM_RHEAD_MIN ? j->hn : TM_RHEAD_MIN;
        if (!(j->codec = tm_rcodec_probe(j->head, probe)))
                die(j, "not a record trace");
        int h = j->codec->open(j->head, j->hn, j->path, &j->ctx, &j->s, &st, &j->err);
        if (h < 0)
                die(j, j->err.msg);
        if (j->stats && !(j->acc = tm_stats_start(&j->s)))
                die(j, "out of memory");
        if (tm_feed_init(&j->feed, j->codec, j->ctx) < 0)
                die(j, "out of memory");
        tm_feed_reset(&j->feed, (uint64_t)h, st.b);
        feed(j, j->head + h, j->hn - (size_t)h);
        free(j->head);
        j->head = NULL;
}

static int sink(void *arg, const uint8_t *buf, size_t n)
{
        struct job *j = arg;
        if (j->codec) {
                feed(j, buf, n);
                return 0;
        }
        if (j->hn + n > j->hcap) {
                j->hcap = 2 * (j->hn + n);
                if (!(j->head = realloc(j->head, j->hcap)))
                        die(j, "out of memory");
        }
        memcpy(j->head + j->hn, buf, n);
        j->hn += n;
        /* open() may need more than probe() sees (a Meta-TF DTD) */
        if (j->hn >= TM_RHEAD_MIN) {
                const struct tm_rcodec *c = tm_rcodec_probe(j->head, TM_RHEAD_MIN);
                size_t want = c && c->head_max > TM_RHEAD_MIN ? c->head_max : TM_RHEAD_MIN;
                if (j->hn >= want)
                        open_codec(j);
        }
        return 0;
}

int main(int argc, char **argv)
{
        struct job j = {.stats = 1};
        if (argc == 3 && strcmp(argv[1], "--decode") == 0) {
                j.stats = 0;
                j.path = argv[2];
        } else if (argc == 2) {
                j.path = argv[1];
        } else {
                fprintf(stderr, "usage: stats_bench [--decode] FILE\n");
                return 2;
        }
        struct tm_cont *c;
        int fd = open(j.path, O_RDONLY);
        if (fd < 0)
                die(&j, strerror(errno));
        if (tm_cont_open(fd, j.path, &c, &j.err) < 0 || tm_cont_scan(c, sink, &j, &j.err) < 0)
                die(&j, j.err.msg);
        if (!j.codec)
                open_codec(&j);
        j.feed.eof = 1;
        drain(&j);
        struct rusage ru;
        printf("%s: %" PRIu64 " records", j.path, j.records);
        if (j.stats) {
                double t = cpu_now();
                const struct tm_stats *rs = tm_stats_get(j.acc);
                double t_end = cpu_now() - t;
                static const struct tm_heap_stats none;
                const struct tm_heap_stats *st =
                    tm_family_of(&j.s) == &tm_family_heap ? (const void *)rs->fam : &none;
                j.t_stats += t_end;
                printf(", stats %.3f s CPU (%.1f ns a record; the end of the count %.3f s), "
                       "accumulator peak %.1f MiB, events sorted externally %" PRIu64
                       "%s, max objects %" PRIu64,
                       j.t_stats, j.records ? j.t_stats * 1e9 / (double)j.records : 0.0, t_end,
                       (double)tm_stats_peak_mem(j.acc) / (1 << 20), st->spilled,
                       st->inexact ? " (not exact)" : "", st->max_live_n);
        }
        getrusage(RUSAGE_SELF, &ru);
        printf(", total %.3f s CPU, peak RSS %.1f MiB\n", cpu_now(), (double)ru.ru_maxrss / 1024);
        tm_stats_free(j.acc);
        tm_feed_free(&j.feed);
        if (j.codec && j.codec->close)
                j.codec->close(j.ctx);
        tm_cont_close(c);
        close(fd);
        return 0;
}
