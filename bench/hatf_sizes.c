/* hatf_sizes FILE: bytes per data record of every HATF encoding, as the
 * HATF paper's Table 4 measures them, beside the paper's averages.
 *
 * FILE is any heap trace a record codec decodes (tm_rcodec_probe: a HATF
 * file today), raw or gzip- or zstd-compressed. Its records are decoded
 * once into memory, then encoded in every encoding of the hatf row; each
 * encoding's bytes go straight into zstd -19 and gzip -9 streams (the
 * libraries, not the programs), so only the counts are kept. A data record
 * is any record but a comment (the paper counts alloc, free and realloc
 * records; a trace of those only gives the same denominator). The last
 * column is the encoder's speed alone (CPU time, into a counting sink).
 *
 * Output: one row per HATF encoding, then Meta-TF's two (the paper's HATF
 * DTD, "hatf", and SplitAddr, "splitaddr": codecs/metatf/mtf_enc.c), then
 * the paper's rows. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>
#include <zstd.h>

#include "codecs/heap/hatf.h"
#include "codecs/heap/heap.h"
#include "codecs/heap/heap_stats.h"
#include "codecs/metatf/metatf.h"
#include "codecs/record/record.h"

/* The whole file, decompressed when it is gzip or zstd. */
/* The codec whose encoder the row being measured uses. */
static const struct tm_rcodec *cur_codec = &tm_rcodec_hatf;

static int read_all(const char *path, uint8_t **out, size_t *len)
{
        FILE *f = fopen(path, "rb");
        if (!f)
                return -errno;
        size_t cap = 1 << 20, n = 0;
        uint8_t *b = malloc(cap);
        for (;;) {
                if (n == cap)
                        b = realloc(b, cap *= 2);
                size_t r = fread(b + n, 1, cap - n, f);
                if (r == 0)
                        break;
                n += r;
        }
        fclose(f);
        if (n >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd) {
                ZSTD_DStream *z = ZSTD_createDStream();
                size_t ocap = n * 4 + (1 << 20), on = 0;
                uint8_t *o = malloc(ocap);
                ZSTD_inBuffer in = {b, n, 0};
                while (in.pos < in.size) {
                        if (on == ocap)
                                o = realloc(o, ocap *= 2);
                        ZSTD_outBuffer ob = {o + on, ocap - on, 0};
                        size_t r = ZSTD_decompressStream(z, &ob, &in);
                        on += ob.pos;
                        if (ZSTD_isError(r)) {
                                ZSTD_freeDStream(z);
                                free(o);
                                free(b);
                                return -EIO;
                        }
                        if (r == 0 && ob.pos == 0 && in.pos == in.size)
                                break;
                }
                ZSTD_freeDStream(z);
                free(b);
                b = o;
                n = on;
        } else if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
                z_stream z = {0};
                size_t ocap = n * 4 + (1 << 20);
                uint8_t *o = malloc(ocap);
                if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
                        return -ENOMEM;
                z.next_in = b;
                z.avail_in = (uInt)n;
                int r;
                do {
                        if (z.total_out == ocap)
                                o = realloc(o, ocap *= 2);
                        z.next_out = o + z.total_out;
                        z.avail_out = (uInt)(ocap - z.total_out);
                        r = inflate(&z, Z_NO_FLUSH);
                        if (r == Z_STREAM_END && z.avail_in) /* concatenated members */
                                r = inflateReset(&z) == Z_OK ? Z_OK : Z_DATA_ERROR;
                } while (r == Z_OK || (r == Z_BUF_ERROR && z.avail_out == 0));
                size_t on = z.total_out;
                inflateEnd(&z);
                free(b);
                if (r != Z_STREAM_END) {
                        free(o);
                        return -EIO;
                }
                b = o;
                n = on;
        }
        *out = b;
        *len = n;
        return 0;
}

/* The trace in memory: events with their attribute bytes in one pool. */
struct trace {
        struct tm_heap_ev *ev;
        size_t n, cap, data;
        uint8_t *pool;
        size_t pool_len, pool_cap;
};

static int load(const uint8_t *raw, size_t len, struct trace *t, struct tm_err *err)
{
        const struct tm_rcodec *c = tm_rcodec_probe(raw, len < 4096 ? len : 4096);
        if (!c)
                return tm_err_set(err, -ENOTSUP, "not a trace a record codec knows");
        if (c->family != &tm_family_heap)
                return tm_err_set(err, -ENOTSUP, "a %s trace, not a heap trace", c->name);
        struct tm_schema sc;
        struct tm_rstate st;
        void *ctx;
        int h = c->open(raw, len < 4096 ? len : 4096, "input", &ctx, &sc, &st, err);
        if (h < 0)
                return h;
        struct tm_rec out[256];
        size_t pos = (size_t)h;
        memset(t, 0, sizeof *t);
        while (pos < len) {
                size_t used = 0;
                ssize_t r = c->decode(ctx, &st, raw + pos, len - pos, 1, pos, &used, out, 256, err);
                if (r < 0) {
                        c->close(ctx);
                        return (int)r;
                }
                for (ssize_t i = 0; i < r; i++) {
                        struct tm_heap_ev ev;
                        tm_heap_rec_to_ev(&out[i], &ev);
                        if (t->n == t->cap) {
                                t->cap = t->cap ? 2 * t->cap : 1 << 16;
                                t->ev = realloc(t->ev, t->cap * sizeof *t->ev);
                        }
                        if (t->pool_len + ev.attr_len > t->pool_cap) {
                                t->pool_cap = 2 * (t->pool_len + ev.attr_len) + (1 << 16);
                                t->pool = realloc(t->pool, t->pool_cap);
                        }
                        memcpy(t->pool + t->pool_len, ev.attr, ev.attr_len);
                        ev.attr = (const uint8_t *)(uintptr_t)t->pool_len; /* fixed below */
                        t->pool_len += ev.attr_len;
                        t->ev[t->n++] = ev;
                        t->data += ev.kind != TM_HK_COMMENT;
                }
                pos += used;
                if (r == 0 && used == 0)
                        break;
        }
        c->close(ctx);
        for (size_t i = 0; i < t->n; i++)
                t->ev[i].attr = t->pool + (uintptr_t)t->ev[i].attr;
        return 0;
}

/* Encode the whole trace in enc through sink. */
static int encode_all(const char *enc, const struct trace *t, tm_rsink sink, void *arg,
                      struct tm_err *err)
{
        struct tm_renc *e;
        int r = cur_codec->enc_open(enc, sink, arg, &e, err);
        for (size_t i = 0; r == 0 && i < t->n; i++) {
                struct tm_rec rec;
                tm_heap_ev_to_rec(&t->ev[i], &rec);
                r = cur_codec->enc_put(e, &rec, 1, i, err);
                if (r < 0)
                        cur_codec->enc_free(e);
        }
        return r == 0 ? cur_codec->enc_finish(e, err) : r;
}

/* A sink that only counts: the encoder's own speed. */
static int sink_null(void *arg, const void *p, size_t n)
{
        (void)p;
        *(uint64_t *)arg += n;
        return 0;
}

/* CPU seconds encoding the trace in enc into a counting sink. */
static int time_encoder(const char *enc, const struct trace *t, double *secs, struct tm_err *err)
{
        uint64_t bytes = 0;
        struct timespec a, b;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        int r = encode_all(enc, t, sink_null, &bytes, err);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        *secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
        return r;
}

/* The encoder's sink: count the bytes and feed both compressors. */
struct counts {
        uint64_t raw, zstd, gzip;
        ZSTD_CStream *zs;
        z_stream gz;
        uint8_t buf[1 << 16];
};

static int sink_count(void *arg, const void *p, size_t n)
{
        struct counts *c = arg;
        c->raw += n;
        ZSTD_inBuffer in = {p, n, 0};
        while (in.pos < in.size) {
                ZSTD_outBuffer o = {c->buf, sizeof c->buf, 0};
                if (ZSTD_isError(ZSTD_compressStream2(c->zs, &o, &in, ZSTD_e_continue)))
                        return -EIO;
                c->zstd += o.pos;
        }
        c->gz.next_in = (Bytef *)p;
        c->gz.avail_in = (uInt)n;
        while (c->gz.avail_in) {
                c->gz.next_out = c->buf;
                c->gz.avail_out = sizeof c->buf;
                if (deflate(&c->gz, Z_NO_FLUSH) != Z_OK)
                        return -EIO;
                c->gzip += sizeof c->buf - c->gz.avail_out;
        }
        return 0;
}

static void finish_counts(struct counts *c)
{
        size_t left;
        do {
                ZSTD_inBuffer in = {NULL, 0, 0};
                ZSTD_outBuffer o = {c->buf, sizeof c->buf, 0};
                left = ZSTD_compressStream2(c->zs, &o, &in, ZSTD_e_end);
                c->zstd += o.pos;
        } while (left && !ZSTD_isError(left));
        int r;
        do {
                c->gz.next_out = c->buf;
                c->gz.avail_out = sizeof c->buf;
                r = deflate(&c->gz, Z_FINISH);
                c->gzip += sizeof c->buf - c->gz.avail_out;
        } while (r == Z_OK);
}

static int measure(const char *enc, const struct trace *t, struct counts *c, struct tm_err *err)
{
        memset(c, 0, offsetof(struct counts, buf));
        c->zs = ZSTD_createCStream();
        ZSTD_CCtx_setParameter(c->zs, ZSTD_c_compressionLevel, 19);
        if (deflateInit2(&c->gz, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) != Z_OK)
                return tm_err_set(err, -ENOMEM, "deflateInit2 failed");
        int r = encode_all(enc, t, sink_count, c, err);
        if (r == 0)
                finish_counts(c);
        ZSTD_freeCStream(c->zs);
        deflateEnd(&c->gz);
        return r;
}

int main(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "usage: hatf_sizes FILE  (a heap trace: HATF or Meta-TF, raw/gz/zst)\n");
                return 2;
        }
        uint8_t *raw = NULL;
        size_t len = 0;
        int r = read_all(argv[1], &raw, &len);
        if (r < 0) {
                fprintf(stderr, "hatf_sizes: %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        struct trace t;
        struct tm_err err = {0};
        if (load(raw, len, &t, &err) < 0) {
                fprintf(stderr, "hatf_sizes: %s: %s\n", argv[1], err.msg);
                return 1;
        }
        free(raw);
        if (t.data == 0) {
                fprintf(stderr, "hatf_sizes: %s: no data records\n", argv[1]);
                return 1;
        }
        printf("%s: %zu records, %zu data records (the denominator)\n", argv[1], t.n, t.data);
        printf("%-18s %10s %10s %10s %12s\n", "encoding", "bytes/rec", "zstd -19", "gzip -9",
               "encode Mrec/s");
        struct row {
                const char *label, *enc;
                const struct tm_rcodec *codec;
        } rows[16];
        size_t nrows = 0;
        for (const char *const *enc = tm_rcodec_hatf.encodings; *enc && nrows < 14; enc++)
                rows[nrows++] = (struct row){*enc, *enc, &tm_rcodec_hatf};
        rows[nrows++] = (struct row){"Meta-TF hatf", "hatf", &tm_rcodec_metatf};
        rows[nrows++] = (struct row){"Meta-TF splitaddr", "splitaddr", &tm_rcodec_metatf};
        static struct counts c;
        for (size_t i = 0; i < nrows; i++) {
                double secs = 0;
                cur_codec = rows[i].codec;
                if (time_encoder(rows[i].enc, &t, &secs, &err) < 0 ||
                    measure(rows[i].enc, &t, &c, &err) < 0) {
                        fprintf(stderr, "hatf_sizes: %s: %s\n", rows[i].label, err.msg);
                        return 1;
                }
                double d = (double)t.data;
                printf("%-18s %10.3f %10.3f %10.3f %12.2f\n", rows[i].label, (double)c.raw / d,
                       (double)c.zstd / d, (double)c.gzip / d,
                       secs > 0 ? (double)t.n / secs / 1e6 : 0.0);
        }
        /* Table 4 of Chilimbi, Jones & Zorn (ISMM 2000): averages over
         * four programs, uncompressed / gzip. */
        printf("paper, Table 4 averages (uncompressed / gzip):\n");
        static const struct {
                const char *name;
                double raw, gz;
        } paper[] = {
            {"naive", 7.06, 2.05},       {"best", 5.65, 1.92},   {"SplitAddr", 5.65, 1.54},
            {"Simple Binary", 16, 2.62}, {"ASCII", 12.33, 2.21},
        };
        for (size_t i = 0; i < sizeof paper / sizeof paper[0]; i++)
                printf("%-18s %10.2f %10s %10.2f\n", paper[i].name, paper[i].raw, "-", paper[i].gz);
        free(t.ev);
        free(t.pool);
        return 0;
}
