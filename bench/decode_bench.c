/* decode_bench: CPU cost of a trace codec's decoder, in ns per record.
 *
 *   decode_bench RAW      RAW: a decompressed trace, as `tracetool cat
 *                         ARCHIVE raw` writes it (any codec with a decoder)
 *
 * Reads RAW into memory, finds its codec's row by a probe, and decodes it
 * from start to end 4096 records a call with the row's decode_batch (the
 * column batch the index pass and the statistics take), into one batch
 * that stays in cache: only decoding is measured, not zstd nor
 * rendering. A row without decode_batch is measured with its decode().
 * Best of 5 passes. Prints the codec, records decoded, the best time and
 * ns/record, and a checksum of the last column's values so that two
 * builds can be checked to decode the same. Exits 1 on a decode error or
 * when passes disagree. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codecs/record/record.h"

#define BATCH 4096
#define PASSES 5

static double now(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t *load(const char *path, size_t *n)
{
        FILE *f = fopen(path, "rb");
        if (!f || fseek(f, 0, SEEK_END) != 0) {
                perror(path);
                exit(1);
        }
        long len = ftell(f);
        rewind(f);
        uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
        if (!b || len <= 0 || fread(b, 1, (size_t)len, f) != (size_t)len) {
                fprintf(stderr, "decode_bench: %s: cannot read\n", path);
                exit(1);
        }
        fclose(f);
        *n = (size_t)len;
        return b;
}

/* One call of c's decoder: records into b (decode_batch) or out. */
static ssize_t decode_some(const struct tm_rcodec *c, void *ctx, struct tm_rstate *st,
                           const uint8_t *in, size_t len, uint64_t off, size_t *used,
                           struct tm_rbatch *b, struct tm_rec *out, unsigned last, uint64_t *s,
                           struct tm_err *err)
{
        ssize_t k = c->decode_batch ? c->decode_batch(ctx, st, in, len, 1, off, used, b, BATCH, err)
                                    : c->decode(ctx, st, in, len, 1, off, used, out, BATCH, err);
        if (k > 0) /* keeps the stores live; a cheap check */
                *s += c->decode_batch ? b->col[last][k - 1] : out[k - 1].v[0];
        return k;
}

/* One pass over in[0..n): records decoded, or -1 on an error. */
static int64_t pass(const struct tm_rcodec *c, const uint8_t *in, size_t n, struct tm_rbatch *b,
                    struct tm_rec *out, uint64_t *sum)
{
        struct tm_rstate st;
        struct tm_schema schema;
        struct tm_err err = {0};
        void *ctx = NULL;
        int hl = c->open(in, n, "decode_bench", &ctx, &schema, &st, &err);
        if (hl < 0) {
                fprintf(stderr, "decode_bench: %s\n", err.msg);
                return -1;
        }
        size_t p = (size_t)hl;
        int64_t total = 0;
        uint64_t s = 0;
        while (p < n) {
                size_t used = 0;
                ssize_t k = decode_some(c, ctx, &st, in + p, n - p, p, &used, b, out,
                                        schema.nfields ? schema.nfields - 1 : 0, &s, &err);
                if (k < 0) {
                        fprintf(stderr, "decode_bench: %s\n", err.msg);
                        total = -1;
                        break;
                }
                if (k == 0 && used == 0)
                        break;
                p += used;
                total += k;
        }
        if (c->close)
                c->close(ctx);
        *sum = s;
        return total;
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: decode_bench RAW\n");
                return 2;
        }
        size_t n;
        uint8_t *in = load(argv[1], &n);
        const struct tm_rcodec *c = tm_rcodec_probe(in, n < TM_RHEAD_MIN ? n : TM_RHEAD_MIN);
        if (!c || !c->decode) {
                fprintf(stderr, "decode_bench: %s: no codec recognises it\n", argv[1]);
                return 1;
        }
        static struct tm_rec out[BATCH];
        struct tm_rbatch b;
        if (tm_rbatch_init(&b, TM_SCHEMA_FIELDS_MAX, BATCH) < 0) {
                fprintf(stderr, "decode_bench: out of memory\n");
                return 1;
        }
        double best = 1e30;
        int64_t refs = -1;
        uint64_t sum0 = 0;
        for (int i = 0; i < PASSES; i++) {
                uint64_t sum;
                double t0 = now();
                int64_t k = pass(c, in, n, &b, out, &sum);
                double t = now() - t0;
                if (k < 0 || (i > 0 && (k != refs || sum != sum0))) {
                        fprintf(stderr, "decode_bench: pass %d failed or disagreed\n", i);
                        return 1;
                }
                refs = k;
                sum0 = sum;
                best = t < best ? t : best;
        }
        printf("%s: %" PRId64 " records from %zu bytes, best of %d %.3f s = %.3f ns/record "
               "(checksum %016" PRIx64 ")\n",
               c->name, refs, n, PASSES, best, refs ? best / (double)refs * 1e9 : 0.0, sum0);
        tm_rbatch_free(&b);
        free(in);
        return 0;
}
