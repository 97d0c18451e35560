/* native_bench: the native encoding (codecs/native) at other block sizes
 * and zstd levels, in process.
 *
 *   native_bench FILE.tmn [LOG2/LEVEL ...]   (default: 16/19 18/19 20/19 16/3 18/3 20/3)
 *   native_bench -d FILE.tmn [ROUNDS [fast]]  (default 5)
 *
 * FILE may have a dictionary chunk (version 2): its blocks are decoded
 * with it.
 *
 * With -d: decodes FILE's blocks as they are, in memory, in ROUNDS
 * alternating rounds of the fast block decoder and the reference one
 * (tmn_ws_reference), and prints the median of each in references a CPU
 * second and their ratio (with fast: the fast one's rounds only, for a
 * profiler); exits 1 when the two differ in a record.
 *
 * Decodes FILE (any .tmn) into columns in memory, then for each
 * configuration encodes every record in blocks of 2^LOG2 at zstd LEVEL
 * (halving a block whose body would pass the limit, as the row does) and
 * decodes every block again (one thread, best of 3): prints references,
 * bytes, references a byte, the bytes per stream (predicted blocks) and
 * the block decoder's speed in references a second. Times are the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not the wall clock's. Exits 1 when a
 * decoded block differs from its records. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codecs/native/native.h"

/* CPU time of this thread: the machine is shared, and what another
 * process takes of the cores is not this code's cost. */
static double now(void)
{
        struct timespec t;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
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
        if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) {
                perror(path);
                exit(1);
        }
        fclose(f);
        *n = (size_t)len;
        return b;
}

struct trace {
        size_t n, cap;
        uint8_t *type;
        uint64_t *addr;
        uint32_t *size;
};

static void grow(struct trace *t, size_t more)
{
        if (t->n + more <= t->cap)
                return;
        t->cap = (t->n + more) * 2;
        t->type = realloc(t->type, t->cap);
        t->addr = realloc(t->addr, t->cap * 8);
        t->size = realloc(t->size, t->cap * 4);
        if (!t->type || !t->addr || !t->size) {
                fprintf(stderr, "native_bench: out of memory\n");
                exit(1);
        }
}

/* The file's dictionary (a version-2 file's chunk after its header), into
 * d and given to w: the raw offset of its first block. */
static size_t first_block(const uint8_t *f, size_t len, struct tmn_dict *d, struct tmn_ws *w)
{
        if (len <= TMN_FILE_HDR || f[8] != TMN_VERSION_DICT)
                return TMN_FILE_HDR;
        size_t chunk;
        struct tm_err err = {0};
        if (tmn_dict_get(f + TMN_FILE_HDR, len - TMN_FILE_HDR, d, &chunk, &err) < 0) {
                fprintf(stderr, "native_bench: %s\n", err.msg);
                exit(1);
        }
        tmn_ws_dict(w, d);
        return TMN_FILE_HDR + chunk;
}

static void read_trace(const uint8_t *f, size_t len, struct trace *t, struct tmn_ws *w)
{
        unsigned ntypes, log2;
        int sized;
        struct tm_err err = {0};
        if (tmn_file_head_get(f, len, &ntypes, &sized, &log2, &err) < 0) {
                fprintf(stderr, "native_bench: %s\n", err.msg);
                exit(1);
        }
        struct tmn_dict d = {0};
        size_t pos = first_block(f, len, &d, w);
        while (pos + TMN_BLK_HDR <= len) {
                uint32_t n, body;
                if (tmn_block_head(f + pos, 1u << log2, pos, &n, &body, &err) < 0 ||
                    pos + TMN_BLK_HDR + body > len) {
                        fprintf(stderr, "native_bench: %s\n", err.msg);
                        exit(1);
                }
                if (n == 0)
                        break;
                grow(t, n);
                if (tmn_block_decode(w, f + pos, TMN_BLK_HDR + body, ntypes, sized, pos,
                                     t->type + t->n, t->addr + t->n, t->size + t->n, &err) < 0) {
                        fprintf(stderr, "native_bench: %s\n", err.msg);
                        exit(1);
                }
                t->n += n;
                pos += TMN_BLK_HDR + body;
        }
        tmn_ws_dict(w, NULL); /* the configurations below have none */
        tmn_dict_release(&d);
}

struct enc {
        uint8_t *p;
        size_t len, cap;
        size_t streams[TMN_NSTREAMS], plain_blocks, blocks;
};

static void put(struct enc *e, const uint8_t *p, size_t n)
{
        if (e->len + n > e->cap) {
                e->cap = (e->len + n) * 2;
                e->p = realloc(e->p, e->cap);
                if (!e->p)
                        exit(1);
        }
        memcpy(e->p + e->len, p, n);
        e->len += n;
}

static void enc_range(struct tmn_ws *w, const struct trace *t, size_t lo, size_t n, int level,
                      struct enc *e)
{
        struct tmn_cols c = {t->type + lo, t->addr + lo, t->size + lo};
        const uint8_t *p;
        size_t len;
        struct tmn_bstats st;
        int rc = tmn_block_encode(w, &c, n, 1, level, &p, &len, &st);
        if (rc == -EFBIG && n > 1) {
                enc_range(w, t, lo, n / 2, level, e);
                enc_range(w, t, lo + n / 2, n - n / 2, level, e);
                return;
        }
        if (rc < 0) {
                fprintf(stderr, "native_bench: encode failed (%d)\n", rc);
                exit(1);
        }
        put(e, p, len);
        e->blocks++;
        if (st.mode == TMN_PLAIN)
                e->plain_blocks++;
        for (int s = 0; st.mode != TMN_PLAIN && s < TMN_NSTREAMS; s++)
                e->streams[s] += st.stored[s];
}

/* Decode every block of e (best of 3); 0 when each is its slice of t. */
static double dec_all(struct tmn_ws *w, const struct enc *e, const struct trace *t, uint8_t *ty,
                      uint64_t *ad, uint32_t *sz, int *bad)
{
        double best = 1e30;
        for (int pass = 0; pass < 3; pass++) {
                double t0 = now();
                size_t pos = 0, at = 0;
                while (pos < e->len) {
                        uint32_t n, body;
                        struct tm_err err = {0};
                        tmn_block_head(e->p + pos, 1u << 20, pos, &n, &body, &err);
                        if (tmn_block_decode(w, e->p + pos, TMN_BLK_HDR + body, 8, 1, pos, ty, ad,
                                             sz, &err) < 0) {
                                fprintf(stderr, "native_bench: %s\n", err.msg);
                                exit(1);
                        }
                        if (pass == 0)
                                *bad |= memcmp(ad, t->addr + at, 8 * (size_t)n) != 0 ||
                                        memcmp(ty, t->type + at, n) != 0 ||
                                        memcmp(sz, t->size + at, 4 * (size_t)n) != 0;
                        at += n;
                        pos += TMN_BLK_HDR + body;
                }
                double d = now() - t0;
                if (d < best)
                        best = d;
        }
        return best;
}

/* The blocks of the file f (len bytes): their offsets, *nb of them. */
static size_t *blocks_of(const uint8_t *f, size_t len, size_t start, size_t *nb, unsigned *ntypes,
                         int *sized, size_t *refs)
{
        unsigned log2;
        struct tm_err err = {0};
        if (tmn_file_head_get(f, len, ntypes, sized, &log2, &err) < 0) {
                fprintf(stderr, "native_bench: %s\n", err.msg);
                exit(1);
        }
        size_t *at = NULL, n = 0, pos = start;
        *refs = 0;
        while (pos + TMN_BLK_HDR <= len) {
                uint32_t k, body;
                if (tmn_block_head(f + pos, 1u << log2, pos, &k, &body, &err) < 0 ||
                    pos + TMN_BLK_HDR + body > len) {
                        fprintf(stderr, "native_bench: %s\n", err.msg);
                        exit(1);
                }
                if (k == 0)
                        break;
                if (!(at = realloc(at, (n + 1) * sizeof *at)))
                        exit(1);
                at[n++] = pos;
                *refs += k;
                pos += TMN_BLK_HDR + body;
        }
        *nb = n;
        return at;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* native_bench -d: the fast decoder against the reference. */
static int decode_only(const char *path, int rounds, int fast_only)
{
        size_t len, nb, refs;
        unsigned ntypes;
        int sized, bad = 0;
        uint8_t *f = load(path, &len);
        struct tmn_ws *w = tmn_ws_new();
        struct tmn_dict d = {0};
        size_t *at = blocks_of(f, len, first_block(f, len, &d, w), &nb, &ntypes, &sized, &refs);
        uint8_t *ty[2] = {malloc(1u << 20), malloc(1u << 20)};
        uint64_t *ad[2] = {malloc(8u << 20), malloc(8u << 20)};
        uint32_t *sz[2] = {malloc(4u << 20), malloc(4u << 20)};
        double t[2][64];
        if (rounds < 1 || rounds > 64)
                rounds = 5;
        for (int r = -1; r < rounds; r++) { /* -1: each block both ways, compared */
                for (int ref = 0; ref < 2 - (r >= 0 && fast_only); ref++) {
                        double t0 = now();
                        for (size_t b = 0; b < nb; b++) {
                                const uint8_t *p = f + at[b];
                                size_t l = TMN_BLK_HDR + tmn_get32(p + 8);
                                uint32_t k = tmn_get32(p + 4);
                                for (int x = r < 0 ? 0 : ref; x <= (r < 0 ? 1 : ref); x++) {
                                        struct tm_err err = {0};
                                        tmn_ws_reference(w, x);
                                        if (tmn_block_decode(w, p, l, ntypes, sized, at[b], ty[x],
                                                             ad[x], sz[x], &err) < 0) {
                                                fprintf(stderr, "native_bench: %s\n", err.msg);
                                                exit(1);
                                        }
                                }
                                if (r < 0)
                                        bad |= memcmp(ty[0], ty[1], k) != 0 ||
                                               memcmp(ad[0], ad[1], 8 * (size_t)k) != 0 ||
                                               memcmp(sz[0], sz[1], 4 * (size_t)k) != 0;
                        }
                        if (r >= 0)
                                t[ref][r] = now() - t0;
                }
        }
        if (fast_only)
                memcpy(t[1], t[0], sizeof t[0]);
        qsort(t[0], (size_t)rounds, sizeof t[0][0], cmp_double);
        qsort(t[1], (size_t)rounds, sizeof t[1][0], cmp_double);
        double f0 = (double)refs / t[0][rounds / 2], f1 = (double)refs / t[1][rounds / 2];
        printf("%zu references in %zu blocks, medians of %d alternating rounds (CPU time):\n"
               "  fast decoder       %8.1f M references a second\n"
               "  reference decoder  %8.1f M references a second\n"
               "  fast / reference   %8.2fx\n",
               refs, nb, rounds, f0 / 1e6, f1 / 1e6, f0 / f1);
        if (bad)
                fprintf(stderr, "native_bench: the decoders differ\n");
        tmn_ws_free(w);
        tmn_dict_release(&d);
        for (int i = 0; i < 2; i++) {
                free(ty[i]);
                free(ad[i]);
                free(sz[i]);
        }
        free(at);
        free(f);
        return bad;
}

int main(int argc, char **argv)
{
        if (argc >= 3 && strcmp(argv[1], "-d") == 0)
                return decode_only(argv[2], argc > 3 ? atoi(argv[3]) : 5,
                                   argc > 4 && strcmp(argv[4], "fast") == 0);
        static const char *const def[] = {"16/19", "18/19", "20/19", "16/3", "18/3", "20/3"};
        if (argc < 2) {
                fprintf(stderr, "usage: native_bench FILE.tmn [LOG2/LEVEL ...]\n");
                return 2;
        }
        size_t len;
        uint8_t *f = load(argv[1], &len);
        struct tmn_ws *w = tmn_ws_new();
        struct trace t = {0};
        read_trace(f, len, &t, w);
        free(f);
        uint8_t *ty = malloc(1u << 20);
        uint64_t *ad = malloc(8u << 20);
        uint32_t *sz = malloc(4u << 20);
        int nconf = argc > 2 ? argc - 2 : 6, bad = 0;
        printf("%-8s %12s %12s %10s %10s %12s  %s\n", "blocks", "references", "bytes", "refs/byte",
               "enc cpu s", "dec refs/cpu s",
               "bytes: type ihit imiss dhit dmiss size (plain blocks)");
        for (int i = 0; i < nconf; i++) {
                const char *c = argc > 2 ? argv[i + 2] : def[i];
                unsigned lg;
                int level;
                if (sscanf(c, "%u/%d", &lg, &level) != 2 || lg < TMN_LOG_MIN || lg > TMN_LOG_MAX) {
                        fprintf(stderr, "native_bench: bad configuration %s\n", c);
                        return 2;
                }
                struct enc e = {0};
                double t0 = now();
                for (size_t lo = 0; lo < t.n; lo += (size_t)1 << lg) {
                        size_t n = t.n - lo < ((size_t)1 << lg) ? t.n - lo : (size_t)1 << lg;
                        enc_range(w, &t, lo, n, level, &e);
                }
                double te = now() - t0;
                double td = dec_all(w, &e, &t, ty, ad, sz, &bad);
                size_t total = e.len + TMN_FILE_HDR + TMN_END_LEN;
                printf(
                    "2^%-2u/z%-2d %12zu %12zu %10.2f %10.1f %12.3g  %zu %zu %zu %zu %zu %zu (%zu "
                    "of %zu)\n",
                    lg, level, t.n, total, (double)t.n / (double)total, te, (double)t.n / td,
                    e.streams[0], e.streams[1], e.streams[2], e.streams[3], e.streams[4],
                    e.streams[5], e.plain_blocks, e.blocks);
                fflush(stdout);
                free(e.p);
        }
        tmn_ws_free(w);
        if (bad)
                fprintf(stderr, "native_bench: a block decoded differently\n");
        return bad;
}
