/* tmn_block.h: what the native format's unit tests build blocks and read
 * files with: a schema-1 block of raw streams assembled by hand, a reader
 * of a buffer for tmn_storage_scan (codecs/native/native_stats.h), and a
 * whole file decoded through the row (tmn_test_rows), and records
 * written through the row into a buffer (tmn_test_encode).
 * Header only (static inline): include after codecs/native/native.h and
 * cmocka.h. */
#ifndef TM_TEST_TMN_BLOCK_H
#define TM_TEST_TMN_BLOCK_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>

#include "codecs/common/tm_err.h"
#include "codecs/native/native.h"
#include "codecs/record/record.h"
#include "support/tmtest.h"

/* A block of raw streams: the body of coding mode with ns streams
 * st[0..ns) stored as they are, its header and checksum, into out; its
 * length. */
static inline size_t tmn_test_assemble(uint8_t *out, uint32_t nrec, int mode, int ns,
                                       uint8_t *const *st, const size_t *len)
{
        uint8_t *b = out + TMN_BLK_HDR;
        size_t at = 1 + (size_t)ns * TMN_STREAM_ENTRY;
        b[0] = (uint8_t)mode;
        for (int s = 0; s < ns; s++) {
                uint8_t *e = b + 1 + s * TMN_STREAM_ENTRY;
                e[0] = 0;
                tmn_put32(e + 1, (uint32_t)len[s]);
                tmn_put32(e + 5, (uint32_t)len[s]);
                memcpy(b + at, st[s], len[s]);
                at += len[s];
        }
        tmn_put32(out, TMN_BLK_MAGIC);
        tmn_put32(out + 4, nrec);
        tmn_put32(out + 8, (uint32_t)at);
        tmn_put32(out + 12, (uint32_t)crc32_z(crc32(0, out, 12), b, at));
        return TMN_BLK_HDR + at;
}

/* A buffer read as a file (tm_rread_fn). */
struct tmn_test_mem {
        const uint8_t *p;
        size_t len;
};

static inline ssize_t tmn_test_mem_read(void *arg, uint64_t off, void *buf, size_t n,
                                        struct tm_err *err)
{
        (void)err;
        const struct tmn_test_mem *m = arg;
        if (off >= m->len)
                return 0;
        size_t k = m->len - off < n ? m->len - off : n;
        memcpy(buf, m->p + off, k);
        return (ssize_t)k;
}

/* What tmn_test_rows hands each call's records to: at is the number of
 * the first of the k records r[0..k) in the file (valid until it returns). */
typedef void tmn_test_put_fn(void *arg, size_t at, const struct tm_rec *r, size_t k);

#define TMN_TEST_CHUNK_MAX 512

/* The .tmn file p[0..len) decoded through the native row (open, decode
 * with eof set, close) to its end or its first error, at most chunk
 * (1..TMN_TEST_CHUNK_MAX) records a call, each call's records to put;
 * *n: the records decoded. 0, or the error (err has the message). */
static inline int tmn_test_rows(const uint8_t *p, size_t len, size_t chunk, tmn_test_put_fn *put,
                                void *arg, size_t *n, struct tm_err *err)
{
        void *ctx = NULL;
        struct tm_schema s;
        struct tm_rstate st;
        struct tm_rec got[TMN_TEST_CHUNK_MAX];
        *n = 0;
        int hl = tm_rcodec_native.open(p, len, "t.tmn", &ctx, &s, &st, err);
        if (hl < 0)
                return hl;
        size_t pos = (size_t)hl;
        int rc = 0;
        for (;;) {
                size_t used = 0;
                ssize_t k = tm_rcodec_native.decode(
                    ctx, &st, p + pos, len - pos, 1, pos, &used, got,
                    chunk < TMN_TEST_CHUNK_MAX ? chunk : TMN_TEST_CHUNK_MAX, err);
                if (k < 0) {
                        rc = (int)k;
                        break;
                }
                put(arg, *n, got, (size_t)k);
                *n += (size_t)k;
                pos += used;
                if (k == 0 && used == 0)
                        break;
        }
        tm_rcodec_native.close(ctx);
        return rc;
}

struct tmn_test_into {
        struct tm_rec *r;
        size_t max;
};

static inline void tmn_test_into_put(void *arg, size_t at, const struct tm_rec *r, size_t k)
{
        struct tmn_test_into *g = arg;
        if (at + k > g->max)
                fail_msg("%zu records decoded, more than %zu", at + k, g->max);
        memcpy(g->r + at, r, k * sizeof *r);
}

/* tmn_test_rows with the records copied to got (a test fails past max):
 * a file of records without variable fields (the address schema). */
static inline int tmn_test_rows_into(size_t chunk, const uint8_t *p, size_t len, struct tm_rec *got,
                                     size_t max, size_t *n, struct tm_err *err)
{
        struct tmn_test_into g = {got, max};
        return tmn_test_rows(p, len, chunk, tmn_test_into_put, &g, n, err);
}

static inline int tmn_test_sink(void *arg, const void *p, size_t n)
{
        return tmt_put(arg, p, n);
}

/* r[0..n) written through the native row's encoder enc (a name as
 * tm_rcodec_native's, e.g. "b10") for src's schema and blobs. */
static inline struct tmt_buf tmn_test_encode(const struct tm_renc_src *src, const char *enc,
                                             const struct tm_rec *r, size_t n)
{
        struct tmt_buf o = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        assert_int_equal(tmn_enc_open_src(src, enc, tmn_test_sink, &o, &e, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_put(e, r, n, 0, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_finish(e, &err), 0);
        return o;
}

#endif
