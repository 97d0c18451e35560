/* text_bench: CPU cost of the record renderers (views/rrender.h), in ns
 * per record and MB/s of output.
 *
 *   text_bench [N]       N synthetic heap records (default 4 * 10^6)
 *   text_bench FILE [N]  the records of FILE (any trace a record codec
 *                           decodes, raw, gzip or zstd), the first N if given;
 *                           first the decoder alone, then decode + render
 *                           of the whole stream against the codec's text
 *                           decoder (codecs/heap/hatf_text.h), if it has one
 *
 * The synthetic records imitate a recorded allocator trace (the 7 M record
 * trace behind the `ascii is slow` report): alloc, free and realloc in the
 * proportions of that trace, sizes mostly small with a tail of big ones,
 * 48-bit addresses in clusters, a few 5-digit thread ids, 11-digit times
 * that only increase, attributes mostly empty and otherwise a short
 * string, now and then with a byte that must be escaped.
 *
 * Each renderer runs over all records 4096 at a time, as a view renders
 * one decoded batch: the batch is first copied to a small buffer and every
 * batch is rendered into the same output buffer, so both stay in cache as
 * in the daemon and only rendering is timed, in CPU time of the thread.
 * Each batch counts with its best time of 5 passes (on a busy machine a
 * whole pass is rarely undisturbed, a batch often is). Every case
 * prints a checksum of its output (FNV-1a of all bytes), so none can be
 * optimized away and two builds can be compared; the cases that produce
 * the ascii text must agree with each other, and the program exits 1 if
 * they do not. RRENDER_BENCH_CASE=text runs only the cases whose name
 * holds text, and not the passes over a whole FILE (for perf and
 * callgrind). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codecs/containers/container.h"
#include "codecs/heap/hatf_text.h"
#include "codecs/heap/heap.h"
#include "codecs/record/record.h"
#include "codecs/record/text.h"

#define BATCH 4096
#define PASSES 5

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 2685821657736338717ull;
}

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *xrealloc(void *p, size_t n)
{
        p = realloc(p, n);
        if (!p) {
                fprintf(stderr, "out of memory\n");
                exit(2);
        }
        return p;
}

/* Records in memory, their variable fields' bytes in one pool (a record's
 * var[] holds offsets into the pool until the end of loading, as the pool
 * moves while it grows). */
struct recs {
        struct tm_schema s;
        struct tm_rec *r;
        size_t n, cap;
        uint8_t *pool;
        size_t pool_len, pool_cap;
};

/* Append r, copying its variable fields' bytes to the pool. */
static void recs_add(struct recs *t, const struct tm_rec *r)
{
        if (t->n == t->cap) {
                t->cap = t->cap ? 2 * t->cap : 1 << 16;
                t->r = xrealloc(t->r, t->cap * sizeof *t->r);
        }
        struct tm_rec *d = &t->r[t->n++];
        *d = *r;
        const struct tm_kind *k = &t->s.kind[r->kind];
        unsigned slot = 0;
        for (unsigned i = 0; i < k->nfields && slot < TM_REC_VAR_MAX; i++) {
                const struct tm_field *f = &t->s.field[k->field[i]];
                if (!tm_field_is_var(f))
                        continue;
                size_t len = f->type == TM_FT_LIST ? 8 * (size_t)r->v[i] : (size_t)r->v[i];
                if (t->pool_len + len > t->pool_cap) {
                        t->pool_cap = 2 * (t->pool_len + len) + (1 << 16);
                        t->pool = xrealloc(t->pool, t->pool_cap);
                }
                if (len)
                        memcpy(t->pool + t->pool_len, r->var[slot], len);
                d->var[slot++] = (const uint8_t *)(uintptr_t)t->pool_len;
                t->pool_len += len;
        }
}

/* Turn the pool offsets of recs_add into pointers. */
static void recs_fix(struct recs *t)
{
        for (size_t i = 0; i < t->n; i++)
                for (unsigned j = 0; j < TM_REC_VAR_MAX; j++)
                        t->r[i].var[j] = t->pool + (uintptr_t)t->r[i].var[j];
}

/* ---- synthetic heap records ---- */

static const char *const attrs[] = {
    "main+0x1f", "xmalloc", "std::vector<int>::reserve", "g_slice_alloc", "a%b", "tab\there",
    "-",         "py",      "libc.so.6+0x9a3b1",
};

static uint64_t synth_size(void)
{
        uint64_t x = rng() % 1000;
        if (x < 800)
                return 1 + rng() % 128; /* most requests are small */
        if (x < 980)
                return 129 + rng() % 4000;
        return 4096 + rng() % (1u << 22); /* a tail of big buffers */
}

static void synth(struct recs *t, size_t n)
{
        t->s = tm_schema_heap;
        uint64_t base[4] = {0x56148a3f52a0ull, 0x561490000000ull, 0x7f3a5c000010ull,
                            0x7f3a64a00010ull};
        uint64_t live[1024] = {0}; /* addresses handed out and not freed yet */
        uint64_t time = 11000000000ull;
        uint64_t threads[3] = {21953, 21954, 22017};
        struct tm_heap_ev ev = {.kind = TM_HK_COMMENT,
                                .attr = (const uint8_t *)"tracetool record heapwork",
                                .attr_len = 25};
        struct tm_rec r;
        tm_heap_ev_to_rec(&ev, &r);
        recs_add(t, &r);
        for (size_t i = 1; i < n; i++) {
                uint64_t x = rng() % 1000;
                unsigned slot = (unsigned)(rng() % 1024);
                memset(&ev, 0, sizeof ev);
                ev.kind = x < 500   ? TM_HK_ALLOC
                          : x < 860 ? TM_HK_FREE
                          : x < 998 ? TM_HK_REALLOC_ALLOC_FREE
                                    : TM_HK_REALLOC;
                if (x == 999)
                        ev.kind = TM_HK_CREATE_THREAD;
                uint64_t cl = rng() % 100;
                uint64_t *b = &base[cl < 90 ? 0 : cl < 95 ? 1 : cl < 98 ? 2 : 3];
                uint64_t fresh = *b;
                *b += (synth_size() + 15) & ~15ull;
                ev.size = synth_size();
                ev.addr = ev.kind == TM_HK_ALLOC ? fresh : live[slot] ? live[slot] : fresh;
                ev.new_addr = fresh;
                live[slot] = ev.kind == TM_HK_FREE    ? 0
                             : ev.kind == TM_HK_ALLOC ? fresh
                                                      : ev.new_addr;
                ev.thread = threads[rng() % 100 < 97 ? 0 : 1 + rng() % 2];
                ev.heap = 0;
                time += 40 + rng() % (rng() % 16 ? 400 : 200000);
                ev.time = time;
                if (rng() % 100 < 4) {
                        const char *a = attrs[rng() % (sizeof attrs / sizeof *attrs)];
                        ev.attr = (const uint8_t *)a;
                        ev.attr_len = strlen(a);
                }
                tm_heap_ev_to_rec(&ev, &r);
                recs_add(t, &r);
        }
        recs_fix(t);
}

/* ---- records of a file ---- */

struct grow {
        uint8_t *b;
        size_t n, cap;
};

static int grow_sink(void *arg, const uint8_t *buf, size_t n)
{
        struct grow *g = arg;
        if (g->n + n > g->cap) {
                g->cap = 2 * (g->n + n);
                g->b = xrealloc(g->b, g->cap);
        }
        memcpy(g->b + g->n, buf, n);
        g->n += n;
        return 0;
}

static void pipe_bench(const struct recs *t, const struct tm_rcodec *codec, void *ctx,
                       const struct tm_rstate *st0, const uint8_t *raw, size_t len, size_t head);

static void load(struct recs *t, const char *path, size_t max)
{
        struct tm_err err = {0};
        struct tm_cont *c;
        struct grow g = {0};
        int fd = open(path, O_RDONLY);
        if (fd < 0 || tm_cont_open(fd, path, &c, &err) < 0 ||
            tm_cont_scan(c, grow_sink, &g, &err) < 0) {
                fprintf(stderr, "%s: %s\n", path, fd < 0 ? strerror(errno) : err.msg);
                exit(2);
        }
        tm_cont_close(c);
        close(fd);
        size_t head = g.n < 4096 ? g.n : 4096;
        const struct tm_rcodec *codec = tm_rcodec_probe(g.b, head);
        void *ctx = NULL;
        struct tm_rstate st;
        int h = codec ? codec->open(g.b, head, path, &ctx, &t->s, &st, &err) : -1;
        if (h < 0) {
                fprintf(stderr, "%s: %s\n", path, codec ? err.msg : "not a record trace");
                exit(2);
        }
        static struct tm_rec out[256];
        int passes = !getenv("RRENDER_BENCH_CASE"); /* the whole file twice: not for perf */
        /* The decoder alone first, for scale: a view pays it too. */
        struct tm_rstate st0 = st;
        size_t pos = (size_t)h, nrec = 0;
        double t0 = now();
        while (passes && pos < g.n) {
                size_t used = 0;
                ssize_t r =
                    codec->decode(ctx, &st0, g.b + pos, g.n - pos, 1, pos, &used, out, 256, &err);
                if (r < 0 || (r == 0 && used == 0))
                        break;
                nrec += (size_t)r;
                pos += used;
        }
        double dt = now() - t0;
        if (passes) {
                printf("%s: decoding (%s): %.2f ns/rec over %zu records\n", path, codec->name,
                       1e9 * dt / (double)(nrec ? nrec : 1), nrec);
                pipe_bench(t, codec, ctx, &st, g.b, g.n, (size_t)h);
        }
        pos = (size_t)h;
        while (pos < g.n && t->n < max) {
                size_t used = 0;
                ssize_t r =
                    codec->decode(ctx, &st, g.b + pos, g.n - pos, 1, pos, &used, out, 256, &err);
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", path, err.msg);
                        exit(2);
                }
                for (ssize_t i = 0; i < r && t->n < max; i++)
                        if (out[i].kind < t->s.nkinds)
                                recs_add(t, &out[i]);
                pos += used;
                if (r == 0 && used == 0)
                        break;
        }
        if (codec->close)
                codec->close(ctx);
        free(g.b);
        recs_fix(t);
}

/* ---- decoding and rendering together, as the ascii view does ----
 *
 * From the raw stream to ascii lines in a 32 KiB buffer (a readahead
 * worker's stage), emptied whenever the next line might not fit: the
 * generic path (decode 256 records into tm_rec, as views/records.c does,
 * then tm_text_lines) against the codec's text decoder
 * (codecs/heap/hatf_text.h). First one untimed pass of each into memory,
 * compared byte for byte; then PIPE_PASSES timed passes of each, taking
 * turns, in CPU time of the thread: the minimum and the median. */

#define PIPE_STAGE (32u << 10)
#define PIPE_PASSES 15

struct pipe {
        const struct tm_rcodec *codec;
        void *ctx;
        struct tm_rstate st0;
        const uint8_t *raw;
        size_t len, head;
        struct tm_text_plan plan;
        tm_rtext_fn *text;
        char stage[PIPE_STAGE];
        struct grow *keep; /* the output, when not NULL */
        size_t nrec;
};

static void pipe_flush(struct pipe *q, size_t *o)
{
        if (q->keep)
                grow_sink(q->keep, (const uint8_t *)q->stage, *o);
        *o = 0;
}

static void pipe_stuck(void)
{
        fprintf(stderr, "text_bench: a line longer than the stage\n");
        exit(2);
}

static void pipe_generic(struct pipe *q)
{
        static struct tm_rec recs[256];
        struct tm_rstate st = q->st0;
        struct tm_err err;
        size_t pos = q->head, o = 0;
        q->nrec = 0;
        for (;;) {
                size_t used = 0;
                ssize_t n = q->codec->decode(q->ctx, &st, q->raw + pos, q->len - pos, 1, pos, &used,
                                             recs, 256, &err);
                pos += used;
                if (n < 0 || (n == 0 && used == 0))
                        break;
                q->nrec += (size_t)n;
                for (size_t i = 0, k; i < (size_t)n; i += k) {
                        o += tm_text_lines(q->stage + o, PIPE_STAGE - o, &q->plan, recs + i,
                                           (size_t)n - i, &k);
                        if (k == 0 && o == 0)
                                pipe_stuck();
                        if (i + k < (size_t)n)
                                pipe_flush(q, &o);
                }
        }
        pipe_flush(q, &o);
}

static void pipe_text(struct pipe *q)
{
        struct tm_rstate st = q->st0;
        size_t pos = q->head, o = 0;
        q->nrec = 0;
        while (pos < q->len) {
                size_t used, k;
                size_t w = q->text(&st, q->raw + pos, q->len - pos, pos, &used, &q->plan,
                                   q->stage + o, PIPE_STAGE - o, SIZE_MAX, -1, &k);
                pos += used;
                o += w;
                q->nrec += k;
                if (used == 0) {
                        if (o == 0)
                                break; /* an error or a record cut short: not this bench's */
                        pipe_flush(q, &o);
                }
        }
        pipe_flush(q, &o);
}

static int dcmp(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static void pipe_bench(const struct recs *t, const struct tm_rcodec *codec, void *ctx,
                       const struct tm_rstate *st0, const uint8_t *raw, size_t len, size_t head)
{
        static struct pipe q;
        q.codec = codec;
        q.ctx = ctx;
        q.st0 = *st0;
        q.raw = raw;
        q.len = len;
        q.head = head;
        q.text = codec->text_of ? codec->text_of() : NULL;
        if (!q.text || tm_text_plan_init(&q.plan, &t->s) < 0) {
                printf("decode + render: %s has no text decoder\n", codec->name);
                return;
        }
        struct grow a = {0}, b = {0};
        q.keep = &a;
        pipe_generic(&q);
        size_t ng = q.nrec;
        q.keep = &b;
        pipe_text(&q);
        q.keep = NULL;
        if (b.n == 0 && q.nrec == 0 && a.n > 0) { /* native's schema 2: the generic path's */
                printf("decode + render: %s leaves this trace to the generic path\n", codec->name);
                free(a.b);
                return;
        }
        int same = a.n == b.n && ng == q.nrec && memcmp(a.b, b.b, a.n) == 0;
        printf("decode + render (%s renderer), %zu records, %zu bytes of text: the text "
               "decoder's bytes %s the generic path's\n",
               tm_text_lines_impl(), ng, a.n, same ? "are" : "DIFFER FROM");
        free(a.b);
        free(b.b);
        if (!same)
                exit(1);
        double tg[PIPE_PASSES], tt[PIPE_PASSES];
        for (int i = 0; i < PIPE_PASSES; i++) {
                double t0 = now();
                pipe_generic(&q);
                double t1 = now();
                pipe_text(&q);
                tg[i] = t1 - t0;
                tt[i] = now() - t1;
        }
        qsort(tg, PIPE_PASSES, sizeof *tg, dcmp);
        qsort(tt, PIPE_PASSES, sizeof *tt, dcmp);
        double r = 1e9 / (double)ng;
        printf("  generic (decode 256, render): %6.2f ns/rec min, %6.2f median\n", r * tg[0],
               r * tg[PIPE_PASSES / 2]);
        printf("  text decoder (fused):         %6.2f ns/rec min, %6.2f median\n", r * tt[0],
               r * tt[PIPE_PASSES / 2]);
}

/* ---- the cases ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
        const uint8_t *b = p;
        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * 0x100000001b3ull;
        return h;
}

struct ctx {
        const struct recs *t;
        struct tm_text_plan plan;
        char *out;
        size_t out_cap;
};

/* Render the batch r[0..n) into c->out; returns the bytes written. */
typedef size_t (*case_fn)(struct ctx *c, const struct tm_rec *r, size_t n);

static size_t case_line(struct ctx *c, const struct tm_rec *r, size_t n)
{
        char *p = c->out;
        for (size_t i = 0; i < n; i++)
                p += tm_text_line(p, &c->t->s, &r[i]);
        return (size_t)(p - c->out);
}

/* Every field of every record, as the index build measures columns. */
static size_t case_field(struct ctx *c, const struct tm_rec *r, size_t n)
{
        char *p = c->out;
        for (size_t i = 0; i < n; i++) {
                unsigned nf = c->t->s.kind[r[i].kind].nfields;
                for (unsigned j = 0; j < nf; j++)
                        p += tm_text_field(p, &c->t->s, &r[i], j);
        }
        return (size_t)(p - c->out);
}

static size_t case_binary(struct ctx *c, const struct tm_rec *r, size_t n)
{
        size_t sz = tm_text_binary_size(&c->t->s);
        for (size_t i = 0; i < n; i++)
                tm_text_binary((uint8_t *)c->out + i * sz, &c->t->s, &r[i]);
        return n * sz;
}

static size_t case_lines(struct ctx *c, const struct tm_rec *r, size_t n)
{
        size_t done = 0, k, w = 0;
        while (done < n) { /* the whole batch fits: one call, unless a line is huge */
                w += tm_text_lines(c->out + w, c->out_cap - w, &c->plan, r + done, n - done, &k);
                done += k;
                if (done < n)
                        w += tm_text_line(c->out + w, &c->t->s, &r[done++]);
        }
        return w;
}

static size_t case_lines_scalar(struct ctx *c, const struct tm_rec *r, size_t n)
{
        tm_text_force_scalar(1);
        size_t w = case_lines(c, r, n);
        tm_text_force_scalar(0);
        return w;
}

static size_t case_binaries(struct ctx *c, const struct tm_rec *r, size_t n)
{
        tm_text_binaries((uint8_t *)c->out, &c->plan, r, n);
        return n * tm_text_binary_size(&c->t->s);
}

/* Lengths only: the line lengths are written out as 4 bytes each so that
 * the checksum covers them. */
static size_t case_line_len(struct ctx *c, const struct tm_rec *r, size_t n)
{
        uint32_t *o = (uint32_t *)(void *)c->out;
        for (size_t i = 0; i < n; i++)
                o[i] = (uint32_t)tm_text_line_len(&c->plan, &r[i]);
        return 4 * n;
}

/* Every token's length and the line's, as the index build needs them. */
static size_t case_lens(struct ctx *c, const struct tm_rec *r, size_t n)
{
        uint32_t *o = (uint32_t *)(void *)c->out;
        uint64_t tok[TM_KIND_FIELDS_MAX];
        for (size_t i = 0; i < n; i++) {
                o[i] = (uint32_t)tm_text_lens(&c->plan, &r[i], tok);
                o[i] += (uint32_t)tok[0] << 16;
        }
        return 4 * n;
}

struct bcase {
        const char *name;
        case_fn fn;
        int ascii; /* writes the ascii view's bytes */
};

static const struct bcase cases[] = {
    {"tm_text_line", case_line, 1},
    {"tm_text_field (every field)", case_field, 0},
    {"tm_text_binary", case_binary, 0},
    {"tm_text_lines (batch, scalar)", case_lines_scalar, 1},
    {"tm_text_lines (batch)", case_lines, 1},
    {"tm_text_binaries (batch)", case_binaries, 0},
    {"tm_text_line_len", case_line_len, 0},
    {"tm_text_lens (tokens + line)", case_lens, 0},
};

static struct tm_rec stage[BATCH];

/* One pass: each batch's time goes into best[] where it beats what is
 * there; the bytes and their checksum are returned. */
static void pass(const struct bcase *bc, struct ctx *c, double *best, uint64_t *bytes,
                 uint64_t *sum)
{
        const struct recs *t = c->t;
        uint64_t total = 0, h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < t->n; i += BATCH) {
                size_t m = t->n - i < BATCH ? t->n - i : BATCH;
                memcpy(stage, t->r + i, m * sizeof *stage);
                double t0 = now();
                size_t k = bc->fn(c, stage, m);
                double dt = now() - t0;
                if (dt < best[i / BATCH])
                        best[i / BATCH] = dt;
                h = fnv(h, c->out, k);
                total += k;
        }
        *bytes = total;
        *sum = h;
}

int main(int argc, char **argv)
{
        static struct recs t;
        size_t n = 4000000;
        char *end;
        if (argc > 1 && (strtoull(argv[1], &end, 10), *end == '\0')) {
                n = strtoull(argv[1], NULL, 10);
                synth(&t, n ? n : 1);
                printf("%zu synthetic heap records\n", t.n);
        } else if (argc > 1) {
                load(&t, argv[1], argc > 2 ? strtoull(argv[2], NULL, 10) : SIZE_MAX);
                printf("%s: %zu records of schema %s\n", argv[1], t.n, t.s.name);
        } else {
                synth(&t, n);
                printf("%zu synthetic heap records\n", t.n);
        }
        if (t.n == 0)
                return 0;
        size_t var_max = 0;
        for (size_t i = 0; i < t.n; i++)
                for (unsigned j = 0; j < t.s.kind[t.r[i].kind].nfields; j++)
                        if (tm_field_is_var(&t.s.field[t.s.kind[t.r[i].kind].field[j]]) &&
                            8 * t.r[i].v[j] > var_max)
                                var_max = 8 * t.r[i].v[j];
        static struct ctx c;
        c.t = &t;
        if (tm_text_plan_init(&c.plan, &t.s) < 0) {
                fprintf(stderr, "tm_text_plan_init: the schema is not renderable\n");
                return 2;
        }
        c.out_cap = BATCH * (tm_text_line_max(&t.s, var_max) + tm_text_binary_size(&t.s));
        c.out_cap += TM_TEXT_SLACK;
        c.out = xrealloc(NULL, c.out_cap);
        double *batch_best = xrealloc(NULL, ((t.n + BATCH - 1) / BATCH) * sizeof *batch_best);
        uint64_t ascii_sum = 0;
        int bad = 0;
        printf("batch renderer: %s\n", tm_text_lines_impl());
        printf("%-34s %9s %9s %12s  %s\n", "case", "ns/rec", "MB/s", "bytes", "checksum");
        const char *only = getenv("RRENDER_BENCH_CASE");
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                if (only && !strstr(cases[i].name, only))
                        continue;
                size_t nb = (t.n + BATCH - 1) / BATCH;
                uint64_t bytes = 0, sum = 0;
                for (size_t b = 0; b < nb; b++)
                        batch_best[b] = 1e30;
                for (int p = 0; p < PASSES; p++)
                        pass(&cases[i], &c, batch_best, &bytes, &sum);
                double best = 0;
                for (size_t b = 0; b < nb; b++)
                        best += batch_best[b];
                printf("%-34s %9.2f %9.0f %12" PRIu64 "  %016" PRIx64 "\n", cases[i].name,
                       1e9 * best / (double)t.n, (double)bytes / best / 1e6, bytes, sum);
                if (cases[i].ascii) {
                        if (ascii_sum && sum != ascii_sum) {
                                fprintf(stderr, "%s: output differs from the first case\n",
                                        cases[i].name);
                                bad = 1;
                        }
                        ascii_sum = sum;
                }
        }
        free(batch_best);
        free(c.out);
        free(t.r);
        free(t.pool);
        return bad;
}
