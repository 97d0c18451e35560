/* codecs/native's dictionary chunk (docs/formats/native.md, "The
 * dictionary chunk"):
 *   period     a pointer chase over a random cycle that repeats every 20
 *              blocks: the encoder writes a dictionary (version 2, a
 *              chunk after the header), the file is at most half the one
 *              without, and every record comes back through the row, the
 *              text decoder (which leaves dictionary blocks to decode())
 *              and the storage walk (its parts add up to the file);
 *   random     random records (plain blocks) and random addresses in a
 *              loop (predicted blocks that never repeat): no dictionary,
 *              the bytes of the encoder without one (version 1);
 *   threads    the same bytes with 0, 1, 2 and 3 encoder threads;
 *   damage     every byte of the chunk flipped (two ways): the trace does
 *              not open, -EIO naming a raw offset inside the chunk; every
 *              7th byte of the blocks: the records before the damaged
 *              block exactly, then -EIO naming its offset;
 *   lazy       a chunk that passes open's checks but does not decompress:
 *              the trace opens, its first block fails naming the frame;
 *              what a lookup reads to open one (tm_rcodec_head_want). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codecs/address/arec.h"
#include "codecs/native/native.h"
#include "codecs/native/native_stats.h"
#include "support/tmn_block.h"
#include "support/tmtest.h"

#define LOG2 10
#define NODES 4096

static int sink(void *arg, const void *p, size_t n)
{
        return tmt_put(arg, p, n);
}

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* n records of a walk over NODES nodes of 64 bytes linked in a random
 * cycle (a period of 5 records a node); kind 1: random addresses in the
 * same loop; kind 2: random records. */
static struct tm_rec *trace(size_t n, int kind, uint64_t seed)
{
        struct tm_rec *r = calloc(n, sizeof *r);
        uint32_t *next = malloc(NODES * sizeof *next), *order = malloc(NODES * sizeof *order);
        assert_true(r && next && order);
        uint64_t s = seed | 1;
        for (uint32_t i = 0; i < NODES; i++)
                order[i] = i;
        for (uint32_t i = NODES - 1; i > 0; i--) {
                uint32_t j = (uint32_t)(rnd(&s) % (i + 1)), t = order[i];
                order[i] = order[j];
                order[j] = t;
        }
        for (uint32_t i = 0; i < NODES; i++)
                next[order[i]] = order[(i + 1) % NODES];
        uint32_t p = order[0];
        for (size_t i = 0; i < n;) {
                uint64_t node = kind ? rnd(&s) & ~(uint64_t)63 : 0x5000000 + 64 * (uint64_t)p;
                static const struct {
                        uint32_t kind;
                        uint64_t pc, size;
                } step[5] = {
                    {2, 0x401000, 4}, {0, 8, 8}, {2, 0x401004, 3}, {0, 0, 8}, {2, 0x401007, 2}};
                for (int k = 0; k < 5 && i < n; k++, i++) {
                        r[i].kind = step[k].kind;
                        r[i].v[1] = step[k].kind == 2 ? step[k].pc : node + step[k].pc;
                        r[i].v[2] = step[k].size;
                }
                p = next[p];
        }
        for (size_t i = 0; i < n; i++) {
                if (kind == 2) {
                        r[i].kind = (uint32_t)(rnd(&s) % 3);
                        r[i].v[1] = rnd(&s);
                        r[i].v[2] = rnd(&s) % 17;
                }
                r[i].v[0] = r[i].kind;
        }
        free(next);
        free(order);
        return r;
}

/* r[0..n) written with the dictionary (dict) or without, on threads. */
static struct tmt_buf encode(const struct tm_rec *r, size_t n, int dict, unsigned threads)
{
        struct tm_schema in;
        tm_addr_schema(&in, TM_NTYPES, 1);
        struct tm_renc_args a = {.in = &in, .threads = threads};
        a.v[TMN_P_LEVEL] = 3;
        a.v[TMN_P_LOG2] = LOG2;
        a.v[TMN_P_DICT] = dict;
        struct tmt_buf o = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        assert_int_equal(tm_rcodec_native.enc_open_for(&a, sink, &o, &e, &err), 0);
        for (size_t i = 0; i < n; i += 1000)
                assert_int_equal(
                    tm_rcodec_native.enc_put(e, r + i, n - i < 1000 ? n - i : 1000, i, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_finish(e, &err), 0);
        return o;
}

static void same_records(const struct tm_rec *got, const struct tm_rec *r, size_t n)
{
        for (size_t j = 0; j < n; j++) {
                assert_int_equal(got[j].kind, r[j].kind);
                assert_int_equal(got[j].v[1], r[j].v[1]);
                assert_int_equal(got[j].v[2], r[j].v[2]);
        }
}

static void round_trip(const struct tmt_buf *f, const struct tm_rec *r, size_t n)
{
        struct tm_rec *got = calloc(n + 1, sizeof *got);
        size_t m;
        struct tm_err err = {0};
        assert_int_equal(tmn_test_rows_into(301, f->p, f->len, got, n + 1, &m, &err), 0);
        assert_int_equal(m, n);
        same_records(got, r, n);
        free(got);
}

/* The din lines of f through the row's text decoder, decode() taking
 * over where it stops (as unit_native's test_text). */
static size_t text_all(const struct tmt_buf *f, char *dst, size_t cap)
{
        tm_rtext_fn *text = tm_rcodec_native.text_of();
        void *ctx = NULL;
        struct tm_schema s;
        struct tm_rstate st;
        struct tm_err err = {0};
        int hl = tm_rcodec_native.open(f->p, f->len, "t.tmn", &ctx, &s, &st, &err);
        assert_true(hl > 0);
        size_t pos = (size_t)hl, w = 0;
        for (int idle = 0; idle < 2;) {
                size_t used = 0, nrec = 0;
                w += text(&st, f->p + pos, f->len - pos, pos, &used, NULL, dst + w, cap - w,
                          SIZE_MAX, -1, &nrec);
                pos += used;
                if (nrec)
                        continue;
                struct tm_rec r;
                ssize_t n = tm_rcodec_native.decode(ctx, &st, f->p + pos, f->len - pos, 1, pos,
                                                    &used, &r, 1, &err);
                assert_true(n >= 0);
                pos += used;
                if (n == 1)
                        w += (size_t)snprintf(dst + w, cap - w, "%u %llx\n", r.kind,
                                              (unsigned long long)r.v[1]);
                idle += n == 0 && used == 0;
        }
        assert_int_equal(pos, f->len);
        tm_rcodec_native.close(ctx);
        return w;
}

static ssize_t buf_read(void *arg, uint64_t off, void *buf, size_t n, struct tm_err *err)
{
        (void)err;
        const struct tmt_buf *f = arg;
        size_t k = off < f->len ? f->len - off : 0;
        k = k < n ? k : n;
        memcpy(buf, f->p + off, k);
        return (ssize_t)k;
}

static size_t chunk_len(const struct tmt_buf *f)
{
        return TMN_DICT_HDR + tmn_get32(f->p + TMN_FILE_HDR + 8);
}

static void test_period(void **unused)
{
        (void)unused;
        size_t n = 1u << 17;
        struct tm_rec *r = trace(n, 0, 7);
        struct tmt_buf d = encode(r, n, 1, 0), p = encode(r, n, 0, 0);
        assert_int_equal(d.p[8], TMN_VERSION_DICT);
        assert_int_equal(p.p[8], TMN_VERSION);
        assert_int_equal(tmn_get32(d.p + TMN_FILE_HDR), TMN_DICT_MAGIC);
        print_message("period: %zu bytes with the dictionary, %zu without\n", d.len, p.len);
        if (2 * d.len > p.len)
                fail_msg("with the dictionary %zu bytes, without %zu", d.len, p.len);
        round_trip(&d, r, n);
        round_trip(&p, r, n);
        /* the text decoder hands the dictionary's blocks to decode() */
        size_t cap = 24 * n;
        char *want = malloc(cap), *got = malloc(cap);
        size_t wl = 0;
        for (size_t i = 0; i < n; i++)
                wl += (size_t)snprintf(want + wl, cap - wl, "%u %llx\n", r[i].kind,
                                       (unsigned long long)r[i].v[1]);
        size_t gl = text_all(&d, got, cap);
        assert_int_equal(gl, wl);
        assert_memory_equal(got, want, wl);
        /* the storage walk counts the chunk: the parts add up to the file */
        struct tmn_storage *s = malloc(sizeof *s);
        struct tm_err err = {0};
        assert_int_equal(tmn_storage_scan(buf_read, &d, d.len, s, &err), 0);
        assert_int_equal(s->dict_chunk, chunk_len(&d));
        uint64_t sum = s->file_hdr + s->dict_chunk + s->blk_hdr + s->tables + s->end;
        for (unsigned i = 0; i < TMN_ST_S1; i++)
                sum += s->stored[i];
        assert_int_equal(sum, d.len);
        assert_int_equal(s->records, n);
        free(s);
        free(want);
        free(got);
        free(d.p);
        free(p.p);
        free(r);
}

static void test_random(void **unused)
{
        (void)unused;
        size_t n = 1u << 17;
        for (int kind = 1; kind <= 2; kind++) {
                struct tm_rec *r = trace(n, kind, 11);
                struct tmt_buf d = encode(r, n, 1, 2), p = encode(r, n, 0, 0);
                assert_int_equal(d.p[8], TMN_VERSION);
                assert_int_equal(d.len, p.len);
                assert_memory_equal(d.p, p.p, p.len);
                round_trip(&d, r, n);
                free(d.p);
                free(p.p);
                free(r);
        }
}

static void test_threads(void **unused)
{
        (void)unused;
        for (int big = 0; big < 2; big++) {
                /* the window decided at the finish (40 blocks), before it (128) */
                size_t m = big ? 1u << 17 : 40u << LOG2;
                struct tm_rec *r = trace(m, 0, 3);
                struct tmt_buf base = encode(r, m, 1, 0);
                assert_int_equal(base.p[8], TMN_VERSION_DICT);
                for (unsigned t = 1; t <= 3; t++) {
                        struct tmt_buf o = encode(r, m, 1, t);
                        assert_int_equal(o.len, base.len);
                        assert_memory_equal(o.p, base.p, base.len);
                        free(o.p);
                }
                free(base.p);
                free(r);
        }
}

/* The blocks of f after its header and chunk: offsets, lengths, counts. */
static size_t blocks_of(const struct tmt_buf *f, size_t from, size_t *at, size_t *len,
                        uint32_t *nrec, size_t max)
{
        size_t k = 0;
        for (size_t pos = from; pos + TMN_BLK_HDR <= f->len && k < max;) {
                uint32_t nr = tmn_get32(f->p + pos + 4), body = tmn_get32(f->p + pos + 8);
                if (!nr)
                        break;
                at[k] = pos;
                len[k] = TMN_BLK_HDR + body;
                nrec[k++] = nr;
                pos += TMN_BLK_HDR + body;
        }
        return k;
}

static void test_damage(void **unused)
{
        (void)unused;
        size_t n = 40u << LOG2;
        struct tm_rec *r = trace(n, 0, 5);
        struct tmt_buf f = encode(r, n, 1, 0);
        assert_int_equal(f.p[8], TMN_VERSION_DICT);
        size_t cl = chunk_len(&f), from = TMN_FILE_HDR + cl;
        struct tm_rec *got = calloc(n + 1, sizeof *got);
        uint8_t *d = malloc(f.len);
        size_t m;
        struct tm_err err = {0};
        static const uint8_t flips[] = {0x01, 0xff};
        for (size_t x = 0; x < sizeof flips; x++)
                for (size_t i = TMN_FILE_HDR; i < from; i++) {
                        memcpy(d, f.p, f.len);
                        d[i] ^= flips[x];
                        int rc = tmn_test_rows_into(301, d, f.len, got, n + 1, &m, &err);
                        if (rc != -EIO || m)
                                fail_msg("chunk byte %zu ^ %02x: %d, %zu records", i, flips[x], rc,
                                         m);
                        const char *o = strstr(err.msg, "raw offset ");
                        unsigned long long off = o ? strtoull(o + 11, NULL, 10) : 0;
                        if (!o || off < TMN_FILE_HDR || off >= from)
                                fail_msg("chunk byte %zu: '%s' names no offset in the chunk", i,
                                         err.msg);
                }
        size_t at[64], len[64];
        uint32_t nrec[64];
        size_t k = blocks_of(&f, from, at, len, nrec, 64);
        assert_true(k > 20);
        for (size_t i = from; i < f.len - TMN_END_LEN; i += 7) {
                memcpy(d, f.p, f.len);
                d[i] ^= 0x5a;
                size_t b = 0, before = 0;
                while (b < k && i >= at[b] + len[b])
                        before += nrec[b++];
                int rc = tmn_test_rows_into(301, d, f.len, got, n + 1, &m, &err);
                if (rc != -EIO || m != before)
                        fail_msg("byte %zu: %d, %zu records, %zu before the damage", i, rc, m,
                                 before);
                same_records(got, r, m);
                char want[64];
                snprintf(want, sizeof want, "raw offset %zu", at[b]);
                if (!strstr(err.msg, want))
                        fail_msg("byte %zu: '%s' does not name %s", i, err.msg, want);
        }
        free(d);
        free(got);
        free(f.p);
        free(r);
}

/* A chunk that passes the open's checks (its CRC made right) but whose
 * frame does not decompress to the length it says: the trace opens (the
 * dictionary is loaded by the first block, not at open), and its first
 * block fails, no record served, naming the frame's raw offset. The
 * bytes a lookup reads to open a trace: the file header and the chunk,
 * not the row's head_max. */
static void test_lazy(void **unused)
{
        (void)unused;
        size_t n = 40u << LOG2;
        struct tm_rec *r = trace(n, 0, 5);
        struct tmt_buf f = encode(r, n, 1, 0);
        size_t cl = chunk_len(&f);
        assert_int_equal(tm_rcodec_head_want(&tm_rcodec_native, f.p, TM_RHEAD_MIN),
                         TMN_FILE_HDR + cl > TM_RHEAD_MIN ? TMN_FILE_HDR + cl : TM_RHEAD_MIN);
        assert_true(TMN_FILE_HDR + cl > TM_RHEAD_MIN); /* else the line above tests nothing */
        uint8_t *c = f.p + TMN_FILE_HDR;
        tmn_put32(c + 4, tmn_get32(c + 4) + 1);
        tmn_put32(c + 12, (uint32_t)crc32_z(crc32(0, c, 12), c + TMN_DICT_HDR, cl - TMN_DICT_HDR));
        void *ctx = NULL;
        struct tm_schema s;
        struct tm_rstate st;
        struct tm_err err = {0};
        int hl = tm_rcodec_native.open(f.p, f.len, "t.tmn", &ctx, &s, &st, &err);
        assert_int_equal(hl, (int)(TMN_FILE_HDR + cl));
        tm_rcodec_native.close(ctx);
        struct tm_rec *got = calloc(n + 1, sizeof *got);
        size_t m;
        assert_int_equal(tmn_test_rows_into(301, f.p, f.len, got, n + 1, &m, &err), -EIO);
        assert_int_equal(m, 0);
        char want[64];
        snprintf(want, sizeof want, "raw offset %d: the dictionary", TMN_FILE_HDR + TMN_DICT_HDR);
        if (!strstr(err.msg, want))
                fail_msg("'%s' does not say '%s'", err.msg, want);
        /* a file without a dictionary: the probe's head is all open needs */
        struct tmt_buf g = encode(r, n, 0, 0);
        assert_int_equal(g.p[8], TMN_VERSION);
        assert_int_equal(tm_rcodec_head_want(&tm_rcodec_native, g.p, TM_RHEAD_MIN),
                         TM_RHEAD_MIN);
        free(got);
        free(g.p);
        free(f.p);
        free(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_period),
            cmocka_unit_test(test_random),
            cmocka_unit_test(test_threads),
            cmocka_unit_test(test_damage),
            cmocka_unit_test(test_lazy),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
