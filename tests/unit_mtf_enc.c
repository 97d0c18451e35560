/* The Meta-TF encoder (codecs/metatf/mtf_enc.c) and the decoder's streamed
 * data sections: random heap traces (seeded; every kind, 32- and 64-bit
 * addresses, attributes, comments) through "hatf" and "splitaddr", decoded
 * by tm_rcodec_metatf.decode in random pieces and record caps as the
 * record feed gives them (at most 256 KiB held), with checkpoints taken
 * after random records (a copy of the state and the raw offset) and
 * decoding restarted from them; every record compared with what was
 * written. A trace of over a million records so that many address chunks
 * occur; corrupt and truncated chunks rejected at their raw offset; the
 * sections API. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codecs/heap/heap.h"
#include "codecs/metatf/metatf.h"

static const struct tm_rcodec *const C = &tm_rcodec_metatf;
#define ARCHIVE "/nonexistent/trace.mtf" /* the DTD is the built-in one */
#define FEED_CAP (256u << 10)            /* views/feed.h's buffer */

/* ---- random traces ---- */

static uint64_t rng;

static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static uint64_t below(uint64_t n)
{
        return n ? rnd() % n : 0;
}

struct trace {
        size_t n;
        struct tm_heap_ev *ev;
        uint8_t *bytes; /* attributes and comments */
        size_t nbytes, cap;
};

/* An allocator-like trace: live blocks freed and reallocated, sizes
 * mostly small, a few threads and heaps, times rising, attributes on some
 * records, comments of up to long lengths. */
static void make_trace(struct trace *t, size_t n, int wide, unsigned flavour)
{
        memset(t, 0, sizeof *t);
        t->n = n;
        t->ev = calloc(n ? n : 1, sizeof *t->ev);
        t->cap = n * 8 + (1u << 20);
        t->bytes = malloc(t->cap);
        assert_non_null(t->ev);
        assert_non_null(t->bytes);
        uint64_t live[256] = {0}, bump = wide ? 0x55d4a0000000ull : 0x08050000ull;
        uint64_t time = wide ? 1700000000000000000ull : 0;
        size_t nlive = 0;
        for (size_t i = 0; i < n; i++) {
                struct tm_heap_ev *e = &t->ev[i];
                unsigned r = (unsigned)below(100);
                e->thread = flavour & 1 ? 1 + below(3) : 4242;
                e->heap = flavour & 2 ? below(2) : 0;
                time += flavour & 4 ? below(5000) : 0;
                e->time = time;
                if (r < 40 || nlive == 0) {
                        e->kind = TM_HK_ALLOC;
                        e->size = below(10) ? 8 + below(120) : below(1u << 20);
                        e->addr = bump += 16 + (e->size & ~15ull);
                        if (nlive < 256)
                                live[nlive++] = e->addr;
                        else
                                live[below(256)] = e->addr;
                } else if (r < 75) {
                        e->kind = TM_HK_FREE;
                        size_t k = below(nlive);
                        e->addr = live[k];
                        live[k] = live[--nlive];
                } else if (r < 90) {
                        e->kind = TM_HK_REALLOC + (unsigned)below(4);
                        size_t k = below(nlive);
                        e->size = below(4096);
                        e->addr = e->kind == TM_HK_REALLOC_ALLOC ? 0 : live[k];
                        e->new_addr = e->kind == TM_HK_REALLOC_FREE ? 0
                                      : e->kind == TM_HK_REALLOC    ? e->addr
                                                                    : (bump += 4096);
                        if (e->new_addr)
                                live[k] = e->new_addr;
                } else if (r < 94) {
                        e->kind = TM_HK_CREATE_HEAP + (unsigned)below(4);
                } else {
                        e->kind = TM_HK_COMMENT;
                }
                size_t len = 0;
                if (e->kind == TM_HK_COMMENT)
                        len = below(8) ? below(80) : below(8) ? below(2000) : below(65536);
                else if (flavour & 8 && below(3) == 0)
                        len = below(8) ? 8 : below(600);
                if (t->nbytes + len > t->cap)
                        len = 0;
                for (size_t j = 0; j < len; j++)
                        t->bytes[t->nbytes + j] =
                            (uint8_t)(e->kind == TM_HK_COMMENT ? 'a' + below(26) : rnd());
                e->attr = (const uint8_t *)(uintptr_t)t->nbytes; /* an offset until fixed */
                e->attr_len = len;
                t->nbytes += len;
        }
        for (size_t i = 0; i < n; i++)
                t->ev[i].attr = t->bytes + (uintptr_t)t->ev[i].attr;
}

static void free_trace(struct trace *t)
{
        free(t->ev);
        free(t->bytes);
}

/* ---- encoding into memory ---- */

struct mem {
        uint8_t *b;
        size_t n, cap;
};

static int mem_sink(void *arg, const void *p, size_t n)
{
        struct mem *m = arg;
        if (m->n + n > m->cap) {
                m->cap = (m->n + n) * 2;
                m->b = realloc(m->b, m->cap);
                if (!m->b)
                        return -ENOMEM;
        }
        memcpy(m->b + m->n, p, n);
        m->n += n;
        return 0;
}

static void encode(const struct trace *t, const char *enc, struct mem *m)
{
        memset(m, 0, sizeof *m);
        struct tm_renc *e;
        struct tm_err err = {0};
        assert_int_equal(C->enc_open(enc, mem_sink, m, &e, &err), 0);
        for (size_t i = 0; i < t->n; i++) {
                struct tm_rec r;
                tm_heap_ev_to_rec(&t->ev[i], &r);
                int rc = C->enc_put(e, &r, 1, i, &err);
                if (rc < 0)
                        fail_msg("enc_put %zu: %s", i, err.msg);
        }
        if (C->enc_finish(e, &err) < 0)
                fail_msg("enc_finish: %s", err.msg);
}

/* ---- comparing ---- */

static const char *kind_name(unsigned k)
{
        return tm_schema_heap.kind[k].name;
}

/* Is decoded record r (schema s) the written event e? hatf10v2.dtd holds
 * every heap record whole: the four realloc kinds, with their size. */
static void check_rec(const struct tm_schema *s, const struct tm_rec *r, const struct tm_heap_ev *e,
                      size_t idx)
{
        const struct tm_kind *k = &s->kind[r->kind];
        if (strcmp(k->name, kind_name(e->kind)) != 0)
                fail_msg("record %zu: %s, wrote %s", idx, k->name, kind_name(e->kind));
        assert_int_equal(r->section, 1); /* the DTD's section heap, record.h: index + 1 */
        unsigned slot = 0;
        for (unsigned i = 0; i < k->nfields; i++) {
                const char *f = s->field[k->field[i]].name;
                uint64_t want = 0;
                if (strcmp(f, "attributes") == 0 || strcmp(f, "text") == 0) {
                        if (r->v[i] != e->attr_len ||
                            (e->attr_len && memcmp(r->var[slot], e->attr, e->attr_len) != 0))
                                fail_msg("record %zu (%s): %s differ (%llu bytes, wrote %zu)", idx,
                                         k->name, f, (unsigned long long)r->v[i], e->attr_len);
                        slot++;
                        continue;
                }
                if (strcmp(f, "size") == 0)
                        want = e->size;
                else if (strcmp(f, "address") == 0)
                        want = e->addr;
                else if (strcmp(f, "new_address") == 0)
                        want = e->new_addr;
                else if (strcmp(f, "time") == 0)
                        want = e->time;
                else if (strcmp(f, "thread") == 0)
                        want = e->thread;
                else if (strcmp(f, "heap") == 0)
                        want = e->heap;
                else
                        fail_msg("record %zu: unexpected field %s", idx, f);
                if (r->v[i] != want)
                        fail_msg("record %zu (%s): %s = %#llx, wrote %#llx", idx, k->name, f,
                                 (unsigned long long)r->v[i], (unsigned long long)want);
        }
}

/* ---- decoding as the feed does, with checkpoints ---- */

struct ckpt {
        struct tm_rstate st;
        uint64_t raw;
        size_t idx;
};

struct chunks {
        unsigned n;
        uint64_t items, first_raw;
};

static int count_chunk(void *arg, const struct mtf_chunk *c)
{
        struct chunks *k = arg;
        if (k->n++ == 0) { /* the first since the start or a restart */
                k->first_raw = c->raw;
                k->items = c->first;
        }
        assert_int_equal(c->number, MTF_ADDR_SECTION);
        assert_int_equal(c->first, k->items);
        k->items += c->count;
        return 0;
}

/* Decode m (written from t) in random pieces (max_piece) and caps, taking
 * checkpoints after random calls and going back to them up to `backs`
 * times. Returns the chunks met (counted once: a restart forgets). */
static struct chunks decode_check(const struct trace *t, const struct mem *m, size_t max_piece,
                                  unsigned backs)
{
        void *ctx;
        struct tm_schema s;
        struct tm_rstate st;
        struct tm_err err = {0};
        /* what a caller reads for open: the row's head_need from the
         * probe's head (the header's start, when over that head) */
        size_t want = tm_rcodec_head_want(C, m->b, m->n < TM_RHEAD_MIN ? m->n : TM_RHEAD_MIN);
        int start = C->open(m->b, m->n < want ? m->n : want, ARCHIVE, &ctx, &s, &st, &err);
        if (start < 0)
                fail_msg("open: %s", err.msg);
        assert_int_equal(want, (size_t)start > TM_RHEAD_MIN ? (size_t)start : TM_RHEAD_MIN);
        assert_string_equal(s.name, "heap");
        static struct tm_rec out[300];
        struct ckpt ck = {.st = st, .raw = (uint64_t)start, .idx = 0};
        struct chunks ch = {0};
        uint64_t pos = (uint64_t)start;
        size_t have = 0, idx = 0;
        while (1) {
                size_t piece = 1 + below(below(4) ? max_piece : 64);
                have = have + piece < m->n - pos ? have + piece : m->n - pos;
                have = have < FEED_CAP ? have : FEED_CAP;
                int eof = pos + have == m->n;
                uint8_t *in = malloc(have ? have : 1); /* ASan sees reads past it */
                memcpy(in, m->b + pos, have);
                size_t used = 0, cap = 1 + below(below(2) ? 3 : 300);
                ssize_t n = mtf_decode_chunks(ctx, &st, in, have, eof, pos, &used, out, cap,
                                              count_chunk, &ch, &err);
                if (n < 0)
                        fail_msg("decode at %llu: %s", (unsigned long long)pos, err.msg);
                assert_true(used <= have);
                for (ssize_t i = 0; i < n; i++, idx++) {
                        assert_true(idx < t->n);
                        check_rec(&s, &out[i], &t->ev[idx], idx);
                }
                free(in); /* after the records: their bytes point into it */
                pos += used;
                have -= used;
                if (n == 0 && used == 0) {
                        if (eof)
                                break;
                        if (have == FEED_CAP)
                                fail_msg("stuck at %llu with %u bytes", (unsigned long long)pos,
                                         FEED_CAP);
                }
                if (below(16) == 0) /* a checkpoint: the state and where to resume */
                        ck = (struct ckpt){.st = st, .raw = pos, .idx = idx};
                if (backs && below(64) == 0) {
                        backs--;
                        memcpy(st.b, ck.st.b, C->state_size);
                        pos = ck.raw;
                        idx = ck.idx;
                        have = 0;
                        ch.n = 0; /* chunks are met again */
                        ch.items = 0;
                }
        }
        assert_int_equal(idx, t->n);
        C->close(ctx);
        return ch;
}

/* ---- tests ---- */

static void test_round_trips(void **unused)
{
        (void)unused;
        static const char *const encs[] = {"hatf", "splitaddr"};
        for (unsigned seed = 1; seed <= 24; seed++) {
                rng = 0x9e3779b97f4a7c15ull * seed;
                struct trace t;
                size_t n = seed % 4 == 0 ? 0 : seed % 3 == 0 ? 1 + below(20) : 2000 + below(40000);
                make_trace(&t, n, seed & 1, seed / 2);
                for (unsigned e = 0; e < 2; e++) {
                        struct mem m;
                        encode(&t, encs[e], &m);
                        decode_check(&t, &m, seed % 2 ? 100000 : 3000, 3);
                        free(m.b);
                }
                free_trace(&t);
        }
}

/* Over a million records: many chunks, each read whole before the next. */
static void test_large(void **unused)
{
        (void)unused;
        rng = 77;
        struct trace t;
        make_trace(&t, 1200000, 1, 5);
        struct mem m;
        encode(&t, "splitaddr", &m);
        struct chunks ch = decode_check(&t, &m, 200000, 2);
        assert_true(ch.n >= 4);
        printf("# %zu records: %zu bytes, %.2f a record, %u chunks\n", t.n, m.n,
               (double)m.n / (double)t.n, ch.n);
        free(m.b);
        encode(&t, "hatf", &m);
        decode_check(&t, &m, 200000, 0);
        free(m.b);
        free_trace(&t);
}

/* Decode all of b[0..n) at once; the error's message. */
static int decode_all(const uint8_t *b, size_t n, struct tm_err *err)
{
        void *ctx;
        struct tm_schema s;
        struct tm_rstate st;
        int start = C->open(b, n, ARCHIVE, &ctx, &s, &st, err);
        if (start < 0)
                return start;
        static struct tm_rec out[4096];
        size_t pos = (size_t)start;
        ssize_t r;
        for (;;) {
                size_t used;
                r = C->decode(ctx, &st, b + pos, n - pos, 1, pos, &used, out, 4096, err);
                if (r < 0 || (r == 0 && used == 0))
                        break;
                pos += used;
        }
        C->close(ctx);
        return r < 0 ? (int)r : 0;
}

static void expect_err(const uint8_t *b, size_t n, const char *want)
{
        struct tm_err err = {0};
        int r = decode_all(b, n, &err);
        if (r != -EIO || !strstr(err.msg, want))
                fail_msg("got %d '%s', want '%s'", r, err.msg, want);
}

static void test_bad_chunks(void **unused)
{
        (void)unused;
        rng = 5;
        struct trace t;
        make_trace(&t, 3000, 0, 0);
        struct mem m;
        encode(&t, "splitaddr", &m);
        struct chunks ch = decode_check(&t, &m, 5000, 0);
        assert_int_equal(ch.n, 1);
        size_t at = (size_t)ch.first_raw, wpos = at + 2, cpos = at + 3; /* tag, number */
        uint8_t *b = malloc(m.n);
        char want[160];
        /* item widths 0 and 9 */
        for (unsigned w = 0; w <= 9; w += 9) {
                memcpy(b, m.b, m.n);
                b[wpos] = (uint8_t)w;
                snprintf(want, sizeof want, "raw offset %zu: chunk of section 2: item width %u",
                         wpos, w);
                expect_err(b, m.n, want);
        }
        /* a count over MTF_CHUNK_MAX */
        memcpy(b, m.b, m.n);
        mtf_put(b + cpos, 0x7fffffff, 4, MTF_LE);
        snprintf(want, sizeof want, "raw offset %zu: chunk of section 2: 2147483647 items", cpos);
        expect_err(b, m.n, want);
        /* a count over what the file holds: truncated */
        memcpy(b, m.b, m.n);
        mtf_put(b + cpos, (uint32_t)m.n, 4, MTF_LE);
        snprintf(want, sizeof want, "raw offset %zu: truncated record", at);
        expect_err(b, m.n, want);
        /* the file cut inside the chunk */
        snprintf(want, sizeof want, "raw offset %zu: truncated record", at);
        expect_err(m.b, at + 20, want);
        /* the last item left out: the last record with an address reads
         * past the chunk */
        uint32_t count = (uint32_t)mtf_get(m.b + cpos, 4, MTF_LE);
        size_t w = m.b[wpos], items_end = cpos + 4 + count * w;
        memcpy(b, m.b, items_end - w);
        memcpy(b + items_end - w, m.b + items_end, m.n - items_end);
        mtf_put(b + cpos, count - 1, 4, MTF_LE);
        snprintf(want, sizeof want, "item %u of section 2 is in no chunk at hand", count - 1);
        expect_err(b, m.n - w, want);
        free(b);
        /* resuming past a chunk still read: the caller's error */
        void *ctx;
        struct tm_schema s;
        struct tm_rstate st;
        struct tm_err err = {0};
        int start = C->open(m.b, m.n, ARCHIVE, &ctx, &s, &st, &err);
        assert_true(start > 0);
        struct tm_rec out[4];
        size_t used, pos = (size_t)start;
        ssize_t r = 0;
        while (r == 0) {
                r = C->decode(ctx, &st, m.b + pos, m.n - pos, 0, pos, &used, out, 4, &err);
                pos += used;
        }
        assert_true(r > 0 && pos == at); /* records read, *used held at the chunk */
        r = C->decode(ctx, &st, m.b + pos + 1, m.n - pos - 1, 0, pos + 1, &used, out, 4, &err);
        assert_int_equal(r, -EIO);
        snprintf(want, sizeof want,
                 "raw offset %zu: decoding resumed past the chunk at raw offset %zu", pos + 1, at);
        assert_non_null(strstr(err.msg, want));
        C->close(ctx);
        free(m.b);
        free_trace(&t);
}

static void test_sections(void **unused)
{
        (void)unused;
        rng = 9;
        struct trace t;
        make_trace(&t, 100, 1, 0);
        static const char *const encs[] = {"hatf", "splitaddr"};
        for (unsigned e = 0; e < 2; e++) {
                struct mem m;
                encode(&t, encs[e], &m);
                void *ctx;
                struct tm_schema s;
                struct tm_rstate st;
                struct tm_err err = {0};
                assert_true(C->open(m.b, m.n, ARCHIVE, &ctx, &s, &st, &err) > 0);
                assert_int_equal(s.nsections, 1);
                assert_string_equal(s.section[0].name, "heap");
                struct mtf_secinfo si[4];
                unsigned n = mtf_sections(ctx, si, 4);
                assert_int_equal(n, 1 + e);
                assert_string_equal(si[0].name, "heap");
                assert_int_equal(si[0].kind, MTF_SEC_RECORDS);
                assert_int_equal(si[0].number, 1);
                if (e) {
                        assert_string_equal(si[1].name, "2");
                        assert_int_equal(si[1].kind, MTF_SEC_STREAM);
                        assert_int_equal(si[1].number, 2);
                }
                const uint8_t *p;
                size_t len;
                assert_int_equal(mtf_section_bytes(ctx, 2, &p, &len), -ENOENT);
                C->close(ctx);
                free(m.b);
        }
        free_trace(&t);
}

/* Records the encoder refuses. */
static void test_enc_errors(void **unused)
{
        (void)unused;
        struct mem m = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        assert_int_equal(C->enc_open("nope", mem_sink, &m, &e, &err), -EINVAL);
        assert_int_equal(C->enc_open(NULL, mem_sink, &m, &e, &err), 0);
        struct tm_rec r = {.kind = TM_HK_N};
        assert_int_equal(C->enc_put(e, &r, 1, 7, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "record 7"));
        static uint8_t big[70000];
        struct tm_heap_ev ev = {.kind = TM_HK_COMMENT, .attr = big, .attr_len = sizeof big};
        tm_heap_ev_to_rec(&ev, &r);
        assert_int_equal(C->enc_put(e, &r, 1, 8, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "record 8: 70000 bytes of comment"));
        C->enc_free(e);
        free(m.b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_trips), cmocka_unit_test(test_large),
            cmocka_unit_test(test_bad_chunks),  cmocka_unit_test(test_sections),
            cmocka_unit_test(test_enc_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
