/* render_bench: CPU cost of the din text renderer, in ns per line.
 *
 *   render_bench [FILE]        FILE: a binary view (16-byte little-endian
 *                              records: u64 addr, u64 type)
 *   render_bench --x86 [N]     N synthetic refs with 64-bit addresses
 *   render_bench [N]           N synthetic refs with 32-bit addresses
 *                              (default 10^7)
 *
 * Times three renderers over the same refs, 4096 at a time, as the ascii
 * view renders one decoded batch: tm_render_din line by line (the loop the
 * views used), tm_render_din_batch forced to its portable path, and
 * tm_render_din_batch as dispatched (AVX-512 where the CPU has it). Each
 * batch of refs is first copied to a small buffer, and every batch is
 * rendered into the same output buffer, so both stay in cache as they do
 * in the daemon (the decoder has just written the refs) and only rendering
 * is measured. Best of 5 passes. Checks that all three write the same
 * bytes; exits 1 if not. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/synth_refs.h"
#include "codecs/address/render.h"

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

static struct tm_ref *load(const char *path, size_t *n)
{
        FILE *f = fopen(path, "rb");
        if (!f) {
                perror(path);
                exit(2);
        }
        size_t cap = 1 << 20, len = 0;
        struct tm_ref *r = malloc(cap * sizeof *r);
        unsigned char rec[16];
        while (r && fread(rec, 1, sizeof rec, f) == sizeof rec) {
                if (len == cap)
                        r = realloc(r, (cap *= 2) * sizeof *r);
                if (!r)
                        break;
                uint64_t a = 0, t = 0;
                for (int i = 7; i >= 0; i--) {
                        a = a << 8 | rec[i];
                        t = t << 8 | rec[8 + i];
                }
                if (t > 9) {
                        fprintf(stderr, "%s: record %zu: type %" PRIu64 " > 9\n", path, len, t);
                        exit(2);
                }
                r[len++] = (struct tm_ref){.addr = a, .type = (uint32_t)t};
        }
        fclose(f);
        if (!r) {
                fprintf(stderr, "out of memory\n");
                exit(2);
        }
        *n = len;
        return r;
}

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum variant { PER_LINE, BATCH_SCALAR, BATCH_DISPATCHED, NVARIANTS };
static const char *const vname[NVARIANTS] = {"tm_render_din per line", "batch, scalar",
                                             "batch, dispatched"};

static size_t render(enum variant v, char *dst, const struct tm_ref *r, size_t n)
{
        if (v == PER_LINE) {
                char *p = dst;
                for (size_t i = 0; i < n; i++)
                        p += tm_render_din(p, r[i].type, r[i].addr);
                return (size_t)(p - dst);
        }
        return tm_render_din_batch(dst, r, n);
}

static void select_variant(enum variant v)
{
        tm_render_force_scalar(v == BATCH_SCALAR);
}

static char out[BATCH * TM_DIN_LINE_MAX + TM_RENDER_SLACK];
static char ref_out[BATCH * TM_DIN_LINE_MAX + TM_RENDER_SLACK];
static struct tm_ref stage[BATCH];

/* Seconds to render all refs, batch by batch; *bytes gets the text size. */
static double pass(enum variant v, const struct tm_ref *refs, size_t n, uint64_t *bytes)
{
        double t = 0;
        uint64_t total = 0;
        select_variant(v);
        for (size_t i = 0; i < n; i += BATCH) {
                size_t m = n - i < BATCH ? n - i : BATCH;
                memcpy(stage, refs + i, m * sizeof *stage);
                double t0 = now();
                total += render(v, out, stage, m);
                t += now() - t0;
        }
        *bytes = total;
        return t;
}

/* All variants write the same bytes as the per-line renderer. */
static int check(const struct tm_ref *refs, size_t n)
{
        for (size_t i = 0; i < n; i += BATCH) {
                size_t m = n - i < BATCH ? n - i : BATCH;
                size_t want = render(PER_LINE, ref_out, refs + i, m);
                for (int v = BATCH_SCALAR; v < NVARIANTS; v++) {
                        select_variant((enum variant)v);
                        size_t got = render((enum variant)v, out, refs + i, m);
                        if (got != want || memcmp(out, ref_out, want) != 0) {
                                fprintf(stderr, "%s: output differs in refs %zu..%zu\n", vname[v],
                                        i, i + m);
                                return 0;
                        }
                }
        }
        return 1;
}

static int is_count(const char *s)
{
        return *s && strspn(s, "0123456789") == strlen(s);
}

int main(int argc, char **argv)
{
        int x86 = argc > 1 && strcmp(argv[1], "--x86") == 0;
        const char *arg = argc > 1 + x86 ? argv[1 + x86] : NULL;
        const char *from = x86 ? "synthetic (x86)" : "synthetic";
        size_t n = 10000000;
        struct tm_ref *refs;
        if (argc > 2 + x86 || (arg && x86 && !is_count(arg))) {
                fprintf(stderr, "usage: render_bench [FILE | N | --x86 [N]]\n");
                return 2;
        }
        if (arg && !is_count(arg)) {
                refs = load(arg, &n);
                from = arg;
        } else {
                if (arg)
                        n = strtoull(arg, NULL, 10);
                refs = malloc((n ? n : 1) * sizeof *refs);
                if (!refs) {
                        fprintf(stderr, "out of memory\n");
                        return 2;
                }
                tm_synth_refs(refs, n, x86, rng);
        }
        if (!check(refs, n))
                return 1;
        uint64_t bytes;
        pass(PER_LINE, refs, n, &bytes);
        tm_render_force_scalar(0);
        printf("%zu refs from %s, %.2f bytes/line; dispatched: %s\n", n, from,
               n ? (double)bytes / (double)n : 0.0, tm_render_din_batch_impl());
        for (int v = 0; v < NVARIANTS; v++) {
                double best = 1e30;
                for (int k = 0; k < PASSES; k++) {
                        double t = pass((enum variant)v, refs, n, &bytes);
                        best = t < best ? t : best;
                }
                printf("  %-24s %6.3f ns/line  %7.0f MB/s\n", vname[v],
                       n ? 1e9 * best / (double)n : 0.0, best > 0 ? (double)bytes / best / 1e6 : 0);
        }
        tm_render_force_scalar(0);
        free(refs);
        return 0;
}
