/* decode_bench: CPU cost of a trace codec's decoder, in ns per reference.
 *
 *   decode_bench RAW      RAW: a decompressed trace, as `tracetool cat
 *                         ARCHIVE raw` writes it (any codec with a decoder)
 *
 * Reads RAW into memory, finds its codec by its magic, and decodes it from
 * start to end 4096 references a call, as a view's cursor does, into one
 * small buffer that stays in cache: only decoding is measured, not zstd
 * nor rendering. Best of 5 passes. Prints the codec, records decoded, the
 * best time and ns/reference, and a checksum of the addresses so that
 * two builds can be checked to decode the same. Exits 1 on a decode error
 * or when passes disagree. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codecs/address/arec.h"
#include "codecs/address/trace.h"

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

/* One pass over in[0..n): references decoded, or -1 on an error. */
static int64_t pass(const struct tm_codec *c, const uint8_t *in, size_t n, struct tm_ref *out,
                    uint64_t *sum)
{
        struct tm_dec_state st;
        struct tm_err err = {0};
        int hl = c->dec_init(&st, in, n, &err);
        if (hl < 0) {
                fprintf(stderr, "decode_bench: %s\n", err.msg);
                return -1;
        }
        size_t p = (size_t)hl;
        int64_t total = 0;
        uint64_t s = 0;
        while (p < n) {
                size_t used = 0;
                ssize_t k = c->decode(&st, in + p, n - p, 1, p, &used, out, BATCH, &err);
                if (k < 0) {
                        fprintf(stderr, "decode_bench: %s\n", err.msg);
                        return -1;
                }
                if (k == 0)
                        break;
                p += used;
                total += k;
                s += out[k - 1].addr; /* keeps the stores live; a cheap check */
        }
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
        const struct tm_codec *c =
            tm_arec_codec(tm_rcodec_probe(in, n < TM_PROBE_BYTES ? n : TM_PROBE_BYTES));
        if (!c || !c->decode) {
                fprintf(stderr, "decode_bench: %s: no codec recognises it\n", argv[1]);
                return 1;
        }
        static struct tm_ref out[BATCH];
        double best = 1e30;
        int64_t refs = -1;
        uint64_t sum0 = 0;
        for (int i = 0; i < PASSES; i++) {
                uint64_t sum;
                double t0 = now();
                int64_t k = pass(c, in, n, out, &sum);
                double t = now() - t0;
                if (k < 0 || (i > 0 && (k != refs || sum != sum0))) {
                        fprintf(stderr, "decode_bench: pass %d failed or disagreed\n", i);
                        return 1;
                }
                refs = k;
                sum0 = sum;
                best = t < best ? t : best;
        }
        printf("%s: %" PRId64 " refs from %zu bytes, best of %d %.3f s = %.3f ns/ref "
               "(checksum %016" PRIx64 ")\n",
               c->name, refs, n, PASSES, best, refs ? best / (double)refs * 1e9 : 0.0, sum0);
        free(in);
        return 0;
}
