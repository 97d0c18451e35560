/* HATF 1.0: the decoder on hand-built bytes (every record tag, every
 * metadata op and interpretation, the width rules, signed offsets, the
 * defaults, attributes v1 / v2 / fixed / default, truncation at every byte,
 * bad tags and metadata with their raw offsets), the encoder's round trips
 * in every encoding (random heap traces decoded in random pieces and caps),
 * its errors and sink boundaries, and the sizes the encodings reach on an
 * allocator-like trace. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "codecs/heap/hatf.h"
#include "codecs/heap/hatf_impl.h"
#include "codecs/heap/hatf_text.h"
#include "codecs/record/text.h"

static const struct tm_rcodec *const C = &tm_rcodec_hatf;

/* ---- a seeded generator (xorshift64) ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

static uint64_t rnd_below(uint64_t n)
{
        return n ? rnd() % n : 0;
}

/* ---- hand-built streams ---- */

struct bytes {
        uint8_t b[4096];
        size_t n;
        size_t start[256]; /* offsets where records start */
        size_t nstart;
};

static void b_rec(struct bytes *b)
{
        b->start[b->nstart++] = b->n;
}

static void b_u8(struct bytes *b, unsigned x)
{
        b->b[b->n++] = (uint8_t)x;
}

static void b_be(struct bytes *b, uint64_t v, unsigned n)
{
        hatf_put_be(b->b + b->n, v, n);
        b->n += n;
}

static void b_raw(struct bytes *b, const void *p, size_t n)
{
        memcpy(b->b + b->n, p, n);
        b->n += n;
}

static void m_size(struct bytes *b, unsigned field, unsigned w)
{
        b_rec(b);
        b_u8(b, HATF_TAG_METADATA);
        b_u8(b, HATF_OP_SIZE);
        b_u8(b, field);
        b_u8(b, w);
}

static void m_interp(struct bytes *b, unsigned field, unsigned in, uint64_t a3, uint64_t a4)
{
        b_rec(b);
        b_u8(b, HATF_TAG_METADATA);
        b_u8(b, HATF_OP_INTERP);
        b_u8(b, field);
        b_u8(b, in);
        if (in == HATF_I_DEFAULT || in == HATF_I_BASEOFFSET || in == HATF_I_DELTA ||
            in == HATF_I_STRIDE)
                b_be(b, a3, 8);
        if (in == HATF_I_STRIDE)
                b_be(b, a4, 8);
}

/* ---- decoding the way a streaming caller does ---- */

/* Decoded records, with their variable bytes copied out (var pointers live
 * only until the next decode call). */
struct got {
        struct tm_heap_ev *ev;
        size_t n, max;
        uint8_t *pool;
        size_t pool_len, pool_cap;
};

static void got_init(struct got *g, size_t max, size_t pool)
{
        g->ev = calloc(max ? max : 1, sizeof *g->ev);
        g->max = max;
        g->n = 0;
        g->pool = malloc(pool ? pool : 1);
        g->pool_len = 0;
        g->pool_cap = pool;
}

static void got_free(struct got *g)
{
        free(g->ev);
        free(g->pool);
}

/* Decode raw[0..len) in pieces: piece bytes offered beyond what is left
 * over (0: all at once; SIZE_MAX: random 1..4096), cap records a call (0:
 * random 1..100). eof is set only when the whole stream is offered.
 * Returns the number of records or a negative errno. */
static ssize_t dec(const uint8_t *raw, size_t len, size_t piece, size_t cap, struct got *g,
                   struct tm_err *err)
{
        struct tm_rstate st;
        struct tm_schema sc;
        void *ctx;
        int h = C->open(raw, len < 4096 ? len : 4096, "test.hatf", &ctx, &sc, &st, err);
        if (h < 0)
                return h;
        struct tm_rec out[100];
        size_t pos = (size_t)h, grow = 0;
        g->n = 0;
        g->pool_len = 0;
        for (;;) {
                size_t p = piece == SIZE_MAX ? 1 + rnd_below(4096) : piece ? piece : len;
                size_t want = p + grow, avail = len - pos < want ? len - pos : want;
                size_t c = cap ? cap : 1 + rnd_below(100);
                int eof = pos + avail == len;
                size_t used = 0;
                ssize_t r = C->decode(ctx, &st, raw + pos, avail, eof, pos, &used, out, c, err);
                if (r < 0) {
                        C->close(ctx);
                        return r;
                }
                assert_true(C->state_ok(ctx, &st)); /* a state a checkpoint may hold */
                for (ssize_t i = 0; i < r; i++) {
                        struct tm_heap_ev ev;
                        tm_heap_rec_to_ev(&out[i], &ev);
                        if (g->n == g->max || g->pool_len + ev.attr_len > g->pool_cap) {
                                C->close(ctx);
                                return -ENOSPC;
                        }
                        if (ev.attr_len)
                                memcpy(g->pool + g->pool_len, ev.attr, ev.attr_len);
                        ev.attr = (const uint8_t *)(uintptr_t)g->pool_len; /* fixed below */
                        g->pool_len += ev.attr_len;
                        g->ev[g->n++] = ev;
                }
                pos += used;
                if (r == 0 && used == 0) {
                        if (eof)
                                break;
                        grow += p; /* needs more input */
                } else {
                        grow = 0;
                }
        }
        C->close(ctx);
        for (size_t i = 0; i < g->n; i++)
                g->ev[i].attr = g->pool + (uintptr_t)g->ev[i].attr;
        return (ssize_t)g->n;
}

static int ev_equal(const struct tm_heap_ev *a, const struct tm_heap_ev *b, char *why, size_t cap)
{
#define CMP(fld)                                                                                   \
        if (a->fld != b->fld) {                                                                    \
                snprintf(why, cap, #fld " %llx, want %llx", (unsigned long long)a->fld,            \
                         (unsigned long long)b->fld);                                              \
                return 0;                                                                          \
        }
        CMP(kind);
        CMP(size);
        CMP(addr);
        CMP(new_addr);
        CMP(thread);
        CMP(heap);
        CMP(time);
        CMP(attr_len);
#undef CMP
        if (a->attr_len && memcmp(a->attr, b->attr, a->attr_len)) {
                snprintf(why, cap, "attribute bytes differ");
                return 0;
        }
        return 1;
}

/* The event as the record model carries it: fields its kind lacks are 0. */
static struct tm_heap_ev ev_norm(const struct tm_heap_ev *ev)
{
        struct tm_rec r;
        struct tm_heap_ev out;
        tm_heap_ev_to_rec(ev, &r);
        tm_heap_rec_to_ev(&r, &out);
        if (!out.attr_len)
                out.attr = NULL;
        return out;
}

static void assert_evs(const struct got *g, const struct tm_heap_ev *want, size_t n,
                       const char *what)
{
        if (g->n != n)
                fail_msg("%s: %zu records, want %zu", what, g->n, n);
        for (size_t i = 0; i < n; i++) {
                char why[160];
                struct tm_heap_ev w = ev_norm(&want[i]);
                if (!ev_equal(&g->ev[i], &w, why, sizeof why))
                        fail_msg("%s: record %zu (%s): %s", what, i,
                                 tm_schema_heap.kind[want[i].kind % TM_HK_N].name, why);
        }
}

/* Decode b in every piece size 1..24 and all at once, caps 1, 3 and 100:
 * all must give want. */
static void expect(const struct bytes *b, const struct tm_heap_ev *want, size_t n)
{
        static const size_t caps[] = {1, 3, 100};
        for (size_t piece = 0; piece <= 24; piece++)
                for (size_t c = 0; c < 3; c++) {
                        struct got g;
                        struct tm_err err = {0};
                        char what[64];
                        got_init(&g, 256, 1 << 16);
                        ssize_t r = dec(b->b, b->n, piece, caps[c], &g, &err);
                        if (r < 0)
                                fail_msg("piece %zu cap %zu: %s", piece, caps[c], err.msg);
                        snprintf(what, sizeof what, "piece %zu cap %zu", piece, caps[c]);
                        assert_evs(&g, want, n, what);
                        got_free(&g);
                }
}

/* Decoding b must fail with -EIO, a message naming "raw offset off" and
 * containing what, whether fed at once or a byte at a time. */
static void expect_bad(const struct bytes *b, size_t off, const char *what)
{
        for (size_t piece = 0; piece <= 1; piece++) {
                struct got g;
                struct tm_err err = {0};
                char where[48];
                got_init(&g, 256, 1 << 16);
                snprintf(where, sizeof where, "raw offset %zu:", off);
                ssize_t r = dec(b->b, b->n, piece, 100, &g, &err);
                if (r != -EIO || !strstr(err.msg, where) || !strstr(err.msg, what))
                        fail_msg("piece %zu: %zd \"%s\", want -EIO \"%s ... %s\"", piece, r,
                                 err.msg, where, what);
                got_free(&g);
        }
}

#define EV(...) ((struct tm_heap_ev){__VA_ARGS__})
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- (a) the decoder ---- */

/* Every tag in the standard default configuration: size and address 4
 * bytes, everything else default 0 (so createHeap..destroyThread are the
 * tag alone), big-endian (the paper's "2-byte data": byte 0 = bits 8-15). */
static void test_tags_default(void **unused)
{
        (void)unused;
        struct bytes b = {0};
        b_rec(&b);
        b_u8(&b, 0), b_be(&b, 0x10, 4), b_be(&b, 0x8050000, 4);
        b_rec(&b);
        b_u8(&b, 1), b_be(&b, 0x8050000, 4);
        for (unsigned t = 2; t <= 5; t++) {
                b_rec(&b);
                b_u8(&b, t), b_be(&b, 100 + t, 4), b_be(&b, 0x1000 * t, 4),
                    b_be(&b, 0x1000 * t + 8, 4);
        }
        for (unsigned t = 6; t <= 9; t++) {
                b_rec(&b);
                b_u8(&b, t);
        }
        b_rec(&b);
        b_u8(&b, 10), b_be(&b, 5, 2), b_raw(&b, "hello", 5);
        b_rec(&b);
        b_u8(&b, 10), b_be(&b, 0, 2); /* empty comment */
        b_rec(&b);
        b_u8(&b, 0), b_raw(&b, "\x01\x02\x03\x04\xfe\xdc\xba\x98", 8);
        const struct tm_heap_ev want[] = {
            EV(.kind = 0, .size = 0x10, .addr = 0x8050000),
            EV(.kind = 1, .addr = 0x8050000),
            EV(.kind = 2, .size = 102, .addr = 0x2000, .new_addr = 0x2008),
            EV(.kind = 3, .size = 103, .addr = 0x3000, .new_addr = 0x3008),
            EV(.kind = 4, .size = 104, .addr = 0x4000, .new_addr = 0x4008),
            EV(.kind = 5, .size = 105, .addr = 0x5000, .new_addr = 0x5008),
            EV(.kind = 6),
            EV(.kind = 7),
            EV(.kind = 8),
            EV(.kind = 9),
            EV(.kind = 10, .attr = (const uint8_t *)"hello", .attr_len = 5),
            EV(.kind = 10),
            EV(.kind = 0, .size = 0x01020304, .addr = 0xfedcba98),
        };
        expect(&b, want, N_OF(want));
}

/* fieldSize on every numeric field at every width (time, thread and heap
 * first set to "none"), on alloc records, which carry all of them. */
static void test_field_sizes(void **unused)
{
        (void)unused;
        static const unsigned ws[] = {1, 2, 4, 8, 0};
        for (unsigned f = HATF_F_SIZE; f <= HATF_F_HEAP; f++) {
                struct bytes b = {0};
                struct tm_heap_ev want[5];
                if (f >= HATF_F_TIME)
                        m_interp(&b, f, HATF_I_NONE, 0, 0);
                for (unsigned i = 0; i < 5; i++) {
                        unsigned w = ws[i];
                        uint64_t v = w == 8 ? 0x8123456789abcdefull : w ? (1ull << (8 * w)) - 2 : 0;
                        m_size(&b, f, w);
                        b_rec(&b);
                        b_u8(&b, 0);
                        /* alloc: size address thread heap time attributes */
                        static const unsigned order[] = {HATF_F_SIZE, HATF_F_ADDRESS, HATF_F_THREAD,
                                                         HATF_F_HEAP, HATF_F_TIME};
                        for (unsigned k = 0; k < 5; k++) {
                                unsigned g = order[k];
                                if (g == f)
                                        b_be(&b, v, w);
                                else if (g == HATF_F_SIZE || g == HATF_F_ADDRESS)
                                        b_be(&b, 0x77, 4);
                        }
                        want[i] = EV(.kind = 0, .size = 0x77, .addr = 0x77);
                        uint64_t *slot = f == HATF_F_SIZE      ? &want[i].size
                                         : f == HATF_F_ADDRESS ? &want[i].addr
                                         : f == HATF_F_TIME    ? &want[i].time
                                         : f == HATF_F_THREAD  ? &want[i].thread
                                                               : &want[i].heap;
                        *slot = v;
                }
                expect(&b, want, 5);
        }
}

/* Every interpretation on every numeric field, through records that carry
 * it: default (nothing stored), baseOffset, delta, stride (nothing stored),
 * none again. Fields other than the one under test keep the defaults. */
static void test_interpretations(void **unused)
{
        (void)unused;
        for (unsigned f = HATF_F_SIZE; f <= HATF_F_HEAP; f++) {
                struct bytes b = {0};
                struct tm_heap_ev want[8];
                size_t n = 0;
                /* createThread carries thread and time, createHeap heap,
                 * realloc size and both addresses: use alloc throughout and
                 * the others where they apply */
                unsigned other = f == HATF_F_SIZE ? 0 : 4; /* width of size/address */
                (void)other;
#define REC(val, bytesfn)                                                                          \
        do {                                                                                       \
                b_rec(&b);                                                                         \
                b_u8(&b, 0);                                                                       \
                if (f == HATF_F_SIZE)                                                              \
                        bytesfn;                                                                   \
                else                                                                               \
                        b_be(&b, 9, 4);                                                            \
                if (f == HATF_F_ADDRESS)                                                           \
                        bytesfn;                                                                   \
                else                                                                               \
                        b_be(&b, 9, 4);                                                            \
                if (f == HATF_F_THREAD)                                                            \
                        bytesfn;                                                                   \
                if (f == HATF_F_HEAP)                                                              \
                        bytesfn;                                                                   \
                if (f == HATF_F_TIME)                                                              \
                        bytesfn;                                                                   \
                struct tm_heap_ev w = EV(.kind = 0, .size = 9, .addr = 9);                         \
                uint64_t *slot = f == HATF_F_SIZE      ? &w.size                                   \
                                 : f == HATF_F_ADDRESS ? &w.addr                                   \
                                 : f == HATF_F_TIME    ? &w.time                                   \
                                 : f == HATF_F_THREAD  ? &w.thread                                 \
                                                       : &w.heap;                                   \
                *slot = (val);                                                                     \
                want[n++] = w;                                                                     \
        } while (0)
                m_interp(&b, f, HATF_I_DEFAULT, 0x1234, 0);
                REC(0x1234, (void)0);
                m_interp(&b, f, HATF_I_BASEOFFSET, 0x10000, 0); /* width 4 restored */
                REC(0x10005, b_be(&b, 5, 4));
                m_size(&b, f, 2);
                REC(0x10000 - 3, b_be(&b, 0xfffd, 2));
                m_interp(&b, f, HATF_I_DELTA, 500, 0); /* width 2 kept */
                REC(510, b_be(&b, 10, 2));
                REC(508, b_be(&b, 0xfffe, 2));
                m_interp(&b, f, HATF_I_STRIDE, 1000, 16);
                REC(1016, (void)0);
                REC(1032, (void)0);
                m_interp(&b, f, HATF_I_NONE, 0, 0); /* width 2 again */
                REC(0xabcd, b_be(&b, 0xabcd, 2));
#undef REC
                expect(&b, want, n);
        }
}

/* The width rules: default and stride make the width 0; none, baseOffset
 * and delta restore the last non-zero width, initially 4 for numbers and
 * v1 for attributes; a fieldSize 0 does not change the last non-zero
 * width; a fieldSize given under default is recorded for later. */
static void test_width_rules(void **unused)
{
        (void)unused;
        struct bytes b = {0};
        m_interp(&b, HATF_F_TIME, HATF_I_NONE, 0, 0); /* initial last non-zero: 4 */
        b_rec(&b);
        b_u8(&b, 8), b_be(&b, 0x01020304, 4); /* createThread: thread(0) time attrs */
        m_size(&b, HATF_F_TIME, 1);
        m_size(&b, HATF_F_TIME, 0); /* none at width 0: time is 0, stored nothing */
        b_rec(&b);
        b_u8(&b, 8);
        m_interp(&b, HATF_F_TIME, HATF_I_DELTA, 100, 0); /* restores 1, not 0 */
        b_rec(&b);
        b_u8(&b, 8), b_u8(&b, 0xff);
        m_interp(&b, HATF_F_TIME, HATF_I_DEFAULT, 7, 0);
        m_size(&b, HATF_F_TIME, 8); /* under default: recorded, not used */
        b_rec(&b);
        b_u8(&b, 8);
        m_interp(&b, HATF_F_TIME, HATF_I_BASEOFFSET, 1000, 0); /* width 8 now */
        b_rec(&b);
        b_u8(&b, 8), b_be(&b, 5, 8);
        m_interp(&b, HATF_F_TIME, HATF_I_STRIDE, 0, 3); /* width 0 */
        b_rec(&b);
        b_u8(&b, 8);
        m_interp(&b, HATF_F_ATTR, HATF_I_NONE, 0, 0); /* attributes: v1 */
        b_rec(&b);
        b_u8(&b, 8), b_u8(&b, 2), b_raw(&b, "hi", 2);
        const struct tm_heap_ev want[] = {
            EV(.kind = 8, .time = 0x01020304),
            EV(.kind = 8, .time = 0),
            EV(.kind = 8, .time = 99),
            EV(.kind = 8, .time = 7),
            EV(.kind = 8, .time = 1005),
            EV(.kind = 8, .time = 3),
            EV(.kind = 8, .time = 6, .attr = (const uint8_t *)"hi", .attr_len = 2),
        };
        expect(&b, want, N_OF(want));
}

/* Signed offsets: baseOffset and delta at 1, 2, 4 and 8 bytes, negative
 * and positive, and wrapping below 0. */
static void test_signed_offsets(void **unused)
{
        (void)unused;
        static const unsigned ws[] = {1, 2, 4, 8};
        for (unsigned i = 0; i < 4; i++) {
                unsigned w = ws[i];
                uint64_t minus1 = w == 8 ? UINT64_MAX : (1ull << (8 * w)) - 1;
                uint64_t most_neg = 1ull << (8 * w - 1), most_pos = most_neg - 1;
                struct bytes b = {0};
                m_interp(&b, HATF_F_ADDRESS, HATF_I_BASEOFFSET, 1000000, 0);
                m_size(&b, HATF_F_ADDRESS, w);
                b_rec(&b), b_u8(&b, 1), b_be(&b, minus1, w);
                b_rec(&b), b_u8(&b, 1), b_be(&b, most_neg, w);
                b_rec(&b), b_u8(&b, 1), b_be(&b, most_pos, w);
                m_interp(&b, HATF_F_ADDRESS, HATF_I_BASEOFFSET, 0, 0);
                b_rec(&b), b_u8(&b, 1), b_be(&b, minus1, w); /* wraps to 2^64 - 1 */
                m_interp(&b, HATF_F_ADDRESS, HATF_I_DELTA, 5000, 0);
                b_rec(&b), b_u8(&b, 1), b_be(&b, minus1, w);
                b_rec(&b), b_u8(&b, 1), b_be(&b, 3, w);
                /* a realloc's two addresses: the new one relative to the old */
                b_rec(&b), b_u8(&b, 2), b_be(&b, 1, 4), b_be(&b, minus1, w), b_be(&b, minus1, w);
                uint64_t neg = w == 8 ? most_neg : (uint64_t) - (int64_t)most_neg;
                const struct tm_heap_ev want[] = {
                    EV(.kind = 1, .addr = 999999),
                    EV(.kind = 1, .addr = 1000000 + neg),
                    EV(.kind = 1, .addr = 1000000 + most_pos),
                    EV(.kind = 1, .addr = UINT64_MAX),
                    EV(.kind = 1, .addr = 4999),
                    EV(.kind = 1, .addr = 5002),
                    EV(.kind = 2, .size = 1, .addr = 5001, .new_addr = 5000),
                };
                expect(&b, want, N_OF(want));
        }
}

/* The defaults, and every field's default at a non-zero value. */
static void test_defaults(void **unused)
{
        (void)unused;
        struct hatf_state s;
        hatf_state_init(&s);
        for (unsigned f = 0; f < HATF_NF; f++) {
                int stored = f == HATF_F_SIZE || f == HATF_F_ADDRESS;
                assert_int_equal(s.f[f].interp, stored ? HATF_I_NONE : HATF_I_DEFAULT);
                assert_int_equal(s.f[f].width, stored ? 4 : 0);
                assert_int_equal(s.f[f].lastnz, f == HATF_F_ATTR ? HATF_W_V1 : 4);
                assert_true(s.f[f].arg == 0);
        }
        struct bytes b = {0};
        m_interp(&b, HATF_F_SIZE, HATF_I_DEFAULT, 24, 0);
        m_interp(&b, HATF_F_ADDRESS, HATF_I_DEFAULT, 0x7fff0000, 0);
        m_interp(&b, HATF_F_THREAD, HATF_I_DEFAULT, 3, 0);
        m_interp(&b, HATF_F_HEAP, HATF_I_DEFAULT, 2, 0);
        m_interp(&b, HATF_F_TIME, HATF_I_DEFAULT, 1ull << 40, 0);
        for (unsigned t = 0; t <= 9; t++)
                b_rec(&b), b_u8(&b, t); /* every field default: tags alone */
        struct tm_heap_ev want[10];
        for (unsigned t = 0; t <= 9; t++)
                want[t] = EV(.kind = t, .size = 24, .addr = 0x7fff0000, .new_addr = 0x7fff0000,
                             .thread = 3, .heap = 2, .time = 1ull << 40);
        expect(&b, want, 10);
}

/* Attributes: v1, v2, fixed widths, width 0, default 0 (empty) and default
 * V (V's 8 bytes, big-endian). */
static void test_attributes(void **unused)
{
        (void)unused;
        static uint8_t big[300];
        for (size_t i = 0; i < sizeof big; i++)
                big[i] = (uint8_t)(i * 7);
        struct bytes b = {0};
        m_interp(&b, HATF_F_ATTR, HATF_I_NONE, 0, 0);
        b_rec(&b), b_u8(&b, 9), b_u8(&b, 3), b_raw(&b, "abc", 3);
        b_rec(&b), b_u8(&b, 9), b_u8(&b, 0);
        m_size(&b, HATF_F_ATTR, HATF_W_V2);
        b_rec(&b), b_u8(&b, 9), b_be(&b, 300, 2), b_raw(&b, big, 300);
        m_size(&b, HATF_F_ATTR, 4);
        b_rec(&b), b_u8(&b, 9), b_raw(&b, "wxyz", 4);
        m_size(&b, HATF_F_ATTR, 0);
        b_rec(&b), b_u8(&b, 9);
        m_interp(&b, HATF_F_ATTR, HATF_I_NONE, 0, 0); /* restores 4 */
        b_rec(&b), b_u8(&b, 9), b_raw(&b, "1234", 4);
        m_interp(&b, HATF_F_ATTR, HATF_I_DEFAULT, 0x4142434445464748ull, 0);
        b_rec(&b), b_u8(&b, 9);
        m_interp(&b, HATF_F_ATTR, HATF_I_DEFAULT, 0, 0);
        b_rec(&b), b_u8(&b, 9);
        /* attributes are the last field of every kind */
        m_interp(&b, HATF_F_ATTR, HATF_I_NONE, 0, 0);
        m_size(&b, HATF_F_ATTR, HATF_W_V1);
        b_rec(&b), b_u8(&b, 0), b_be(&b, 8, 4), b_be(&b, 16, 4), b_u8(&b, 1), b_u8(&b, 'A');
        b_rec(&b), b_u8(&b, 5), b_be(&b, 8, 4), b_be(&b, 16, 4), b_be(&b, 32, 4), b_u8(&b, 1),
            b_u8(&b, 'B');
        b_rec(&b), b_u8(&b, 6), b_u8(&b, 1), b_u8(&b, 'C');
        const struct tm_heap_ev want[] = {
            EV(.kind = 9, .attr = (const uint8_t *)"abc", .attr_len = 3),
            EV(.kind = 9),
            EV(.kind = 9, .attr = big, .attr_len = 300),
            EV(.kind = 9, .attr = (const uint8_t *)"wxyz", .attr_len = 4),
            EV(.kind = 9),
            EV(.kind = 9, .attr = (const uint8_t *)"1234", .attr_len = 4),
            EV(.kind = 9, .attr = (const uint8_t *)"ABCDEFGH", .attr_len = 8),
            EV(.kind = 9),
            EV(.kind = 0, .size = 8, .addr = 16, .attr = (const uint8_t *)"A", .attr_len = 1),
            EV(.kind = 5, .size = 8, .addr = 16, .new_addr = 32, .attr = (const uint8_t *)"B",
               .attr_len = 1),
            EV(.kind = 6, .attr = (const uint8_t *)"C", .attr_len = 1),
        };
        expect(&b, want, N_OF(want));
}

/* The signature comment at raw offset 0 marks the file and is not a
 * record; the same comment later is one. */
static void test_signature(void **unused)
{
        (void)unused;
        struct bytes b = {0};
        b_rec(&b), b_u8(&b, 10), b_be(&b, 8, 2), b_raw(&b, HATF_SIGNATURE, 8);
        assert_int_equal(b.n, HATF_SIGNATURE_LEN);
        assert_true(C->probe(b.b, b.n));
        b_rec(&b), b_u8(&b, 1), b_be(&b, 0x1234, 4);
        b_rec(&b), b_u8(&b, 10), b_be(&b, 8, 2), b_raw(&b, HATF_SIGNATURE, 8);
        const struct tm_heap_ev want[] = {
            EV(.kind = 1, .addr = 0x1234),
            EV(.kind = 10, .attr = (const uint8_t *)HATF_SIGNATURE, .attr_len = 8),
        };
        expect(&b, want, 2);
        assert_false(C->probe(b.b, HATF_SIGNATURE_LEN - 1));
        assert_false(C->probe((const uint8_t *)"\x0a\x00\x08HATF 1.1", HATF_SIGNATURE_LEN));
        assert_false(C->probe(b.b + HATF_SIGNATURE_LEN, 5));
        assert_true(tm_rcodec_probe(b.b, b.n) == C);
        assert_true(tm_rcodec_by_name("hatf") == C);
}

/* A stream with every kind of record; cut after every byte and decoded
 * with eof, it must give the whole records and fail "truncated" naming
 * the cut record's offset, unless the cut falls on a record boundary. */
static void test_truncated(void **unused)
{
        (void)unused;
        struct bytes b = {0};
        b_rec(&b), b_u8(&b, 0), b_be(&b, 1, 4), b_be(&b, 2, 4);
        m_interp(&b, HATF_F_ATTR, HATF_I_NONE, 0, 0);      /* 4 bytes */
        m_interp(&b, HATF_F_TIME, HATF_I_DELTA, 10, 0);    /* 12 */
        m_interp(&b, HATF_F_THREAD, HATF_I_STRIDE, 10, 1); /* 20 */
        m_size(&b, HATF_F_SIZE, 2);                        /* 4 */
        b_rec(&b), b_u8(&b, 0), b_be(&b, 3, 2), b_be(&b, 4, 4), b_be(&b, 5, 4), b_u8(&b, 2),
            b_raw(&b, "xy", 2);
        b_rec(&b), b_u8(&b, 1), b_be(&b, 4, 4), b_be(&b, 1, 4), b_u8(&b, 0);
        m_size(&b, HATF_F_ATTR, HATF_W_V2);
        b_rec(&b), b_u8(&b, 3), b_be(&b, 3, 2), b_be(&b, 4, 4), b_be(&b, 5, 4), b_be(&b, 1, 4),
            b_be(&b, 3, 2), b_raw(&b, "abc", 3);
        b_rec(&b), b_u8(&b, 7), b_be(&b, 1, 4), b_be(&b, 0, 2);
        b_rec(&b), b_u8(&b, 10), b_be(&b, 4, 2), b_raw(&b, "note", 4);
        b_rec(&b), b_u8(&b, 9), b_be(&b, 2, 4), b_be(&b, 0, 2);
        size_t nrec_at[4096];
        size_t data = 0, si = 0;
        for (size_t k = 0; k <= b.n; k++) {
                while (si < b.nstart && b.start[si] < k) {
                        if (b.b[b.start[si]] != HATF_TAG_METADATA)
                                data++;
                        si++;
                }
                nrec_at[k] = data; /* data records starting before k */
        }
        for (size_t k = 1; k < b.n; k++) {
                size_t s = 0;
                int boundary = 0;
                for (size_t i = 0; i < b.nstart; i++) {
                        if (b.start[i] == k)
                                boundary = 1;
                        if (b.start[i] < k)
                                s = b.start[i];
                }
                for (size_t piece = 0; piece <= 1; piece++) {
                        struct got g;
                        struct tm_err err = {0};
                        got_init(&g, 64, 4096);
                        ssize_t r = dec(b.b, k, piece, 100, &g, &err);
                        if (boundary) {
                                if (r < 0)
                                        fail_msg("cut at %zu (boundary): %s", k, err.msg);
                                assert_int_equal(r, nrec_at[k]);
                        } else {
                                char where[48];
                                snprintf(where, sizeof where, "raw offset %zu:", s);
                                if (r != -EIO || !strstr(err.msg, where) ||
                                    !strstr(err.msg, "truncated"))
                                        fail_msg("cut at %zu: %zd \"%s\", want \"%s ... "
                                                 "truncated\"",
                                                 k, r, err.msg, where);
                        }
                        got_free(&g);
                }
        }
}

/* Unknown tags and bad metadata, each after a good record, named by the
 * offset of the bad record. */
static void test_bad_records(void **unused)
{
        (void)unused;
        static const struct {
                uint8_t rec[4];
                const char *what;
        } bad[] = {
            {{12, 0, 0, 0}, "unknown record tag 12"},
            {{255, 0, 0, 0}, "unknown record tag 255"},
            {{11, 0, 0, 0}, "unknown metadata op"},
            {{11, 3, 0, 0}, "unknown metadata op"},
            {{11, 2, 0, 5}, "interpretation 5"},
            {{11, 2, 1, 200}, "interpretation 200"},
            {{11, 1, 6, 4}, "unknown field"},
            {{11, 2, 9, 0}, "unknown field"},
            {{11, 1, 0, 3}, "bad field width"},
            {{11, 1, 1, HATF_W_V1}, "bad field width"},
            {{11, 1, 2, HATF_W_V2}, "bad field width"},
            {{11, 1, 5, 16}, "bad attributes width"},
            {{11, 1, 5, 3}, "bad attributes width"},
            {{11, 2, 5, HATF_I_BASEOFFSET}, "attributes take only"},
            {{11, 2, 5, HATF_I_DELTA}, "attributes take only"},
            {{11, 2, 5, HATF_I_STRIDE}, "attributes take only"},
        };
        for (size_t i = 0; i < N_OF(bad); i++) {
                struct bytes b = {0};
                b_rec(&b), b_u8(&b, 1), b_be(&b, 0x40, 4);
                m_size(&b, HATF_F_SIZE, 1);
                size_t off = b.n;
                b_raw(&b, bad[i].rec, 4);
                memset(b.b + b.n, 0, 20); /* room for a3 / a4 */
                b.n += 20;
                expect_bad(&b, off, bad[i].what);
        }
}

/* The checkpoint is a copy of the state: decoding on from a copy taken
 * mid-stream gives the same records. */
static void test_state_copy(void **unused)
{
        (void)unused;
        struct bytes b = {0};
        m_interp(&b, HATF_F_ADDRESS, HATF_I_DELTA, 1000, 0);
        m_size(&b, HATF_F_ADDRESS, 1);
        for (unsigned i = 0; i < 10; i++)
                b_rec(&b), b_u8(&b, 1), b_u8(&b, i);
        struct tm_rstate st, copy;
        struct tm_schema sc;
        void *ctx;
        struct tm_rec out[16];
        size_t used;
        assert_int_equal(C->open(b.b, b.n, "x", &ctx, &sc, &st, NULL), 0);
        assert_true(C->state_size <= TM_RSTATE_MAX);
        ssize_t r = C->decode(ctx, &st, b.b, 16 + 2 * 4, 0, 0, &used, out, 16, NULL);
        assert_int_equal(r, 4);
        memcpy(&copy, &st, C->state_size);
        size_t at = used;
        for (int pass = 0; pass < 2; pass++) {
                struct tm_rstate s2;
                memcpy(&s2, &copy, C->state_size);
                r = C->decode(ctx, &s2, b.b + at, b.n - at, 1, at, &used, out, 16, NULL);
                assert_int_equal(r, 6);
                assert_true(out[5].v[0] == 1000 + 45);
        }
        C->close(ctx);
}

/* ---- (b) round trips ---- */

struct sinkbuf {
        uint8_t *b;
        size_t n, cap;
        size_t calls;
        size_t *ends; /* offset after each sink call */
        size_t nends, ends_cap;
        int fail_after; /* sink fails on this call (1-based); 0: never */
};

static int sink_mem(void *arg, const void *p, size_t n)
{
        struct sinkbuf *s = arg;
        s->calls++;
        if (s->fail_after && (int)s->calls >= s->fail_after)
                return -ENOSPC;
        if (s->n + n > s->cap) {
                s->cap = (s->n + n) * 2;
                s->b = realloc(s->b, s->cap);
        }
        memcpy(s->b + s->n, p, n);
        s->n += n;
        if (s->nends == s->ends_cap) {
                s->ends_cap = s->ends_cap ? 2 * s->ends_cap : 64;
                s->ends = realloc(s->ends, s->ends_cap * sizeof *s->ends);
        }
        s->ends[s->nends++] = s->n;
        return 0;
}

static int encode(const char *enc, const struct tm_heap_ev *ev, size_t n, struct sinkbuf *s,
                  struct tm_err *err)
{
        struct tm_renc *e;
        memset(s, 0, sizeof *s);
        int r = C->enc_open(enc, sink_mem, s, &e, err);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                struct tm_rec rec;
                tm_heap_ev_to_rec(&ev[i], &rec);
                r = C->enc_put(e, &rec, 1, i, err);
                if (r < 0) {
                        C->enc_free(e);
                        return r;
                }
        }
        return C->enc_finish(e, err);
}

static void sink_free(struct sinkbuf *s)
{
        free(s->b);
        free(s->ends);
}

/* Trace flavours for the round trips. */
enum flavour { FL_MIX, FL_ALLOC32, FL_ALLOC64, FL_WILD, FL_RUNS, FL_N };

static uint8_t attr_src[70000];

/* An allocator: size classes bumping through their own regions and LIFO
 * free lists, so addresses come in strides and clusters; sizes skewed
 * small with runs of one size. */
struct alloc_sim {
        uint64_t bump[8], live[512], lsz[512], t;
        unsigned nl;
        uint64_t last;
};

static void sim_init(struct alloc_sim *a, uint64_t base)
{
        memset(a, 0, sizeof *a);
        for (unsigned c = 0; c < 8; c++)
                a->bump[c] = base + (uint64_t)c * 0x100000;
        a->last = 24;
}

static void sim_next(struct alloc_sim *a, struct tm_heap_ev *ev, unsigned same_pct)
{
        a->t += 1 + rnd_below(40);
        if (a->nl == 0 || (a->nl < 512 && rnd_below(100) < 55)) {
                uint64_t sz = a->last;
                if (rnd_below(100) >= same_pct) {
                        unsigned r = (unsigned)rnd_below(100);
                        sz = r < 70   ? 8 + rnd_below(56)
                             : r < 95 ? 64 + rnd_below(400)
                                      : 1000 + rnd_below(200000);
                }
                a->last = sz;
                unsigned c = sz <= 16    ? 0
                             : sz <= 32  ? 1
                             : sz <= 64  ? 2
                             : sz <= 512 ? 3
                                         : 4 + (unsigned)rnd_below(4);
                uint64_t addr = a->bump[c];
                a->bump[c] += c < 3 ? 16u << c : (sz + 15) & ~15ull;
                a->live[a->nl] = addr;
                a->lsz[a->nl++] = sz;
                *ev = EV(.kind = TM_HK_ALLOC, .size = sz, .addr = addr);
        } else {
                unsigned k = rnd_below(4) ? a->nl - 1 : (unsigned)rnd_below(a->nl);
                *ev = EV(.kind = TM_HK_FREE, .addr = a->live[k]);
                a->live[k] = a->live[--a->nl];
                a->lsz[k] = a->lsz[a->nl];
        }
}

/* A random heap trace of n events in flavour fl into ev. */
static void gen_trace(struct tm_heap_ev *ev, size_t n, enum flavour fl)
{
        struct alloc_sim a;
        sim_init(&a, fl == FL_ALLOC64 ? 0x55d4a0000000ull : 0x08050000ull);
        uint64_t thread = 1, heap = 0, t = 0;
        for (size_t i = 0; i < n; i++) {
                struct tm_heap_ev *e = &ev[i];
                if (fl == FL_ALLOC32 || fl == FL_ALLOC64) {
                        sim_next(&a, e, 60);
                        if (fl == FL_ALLOC64)
                                e->time = a.t;
                        continue;
                }
                if (fl == FL_RUNS) {
                        /* long runs of one size, strided addresses, one thread
                         * then another, 8-byte attributes repeated */
                        static uint64_t sz, addr, stride;
                        if (i % 97 == 0) {
                                sz = 16 << rnd_below(6);
                                addr = 0x10000000 + rnd_below(1 << 20) * 16;
                                stride = sz + 16 * rnd_below(2);
                        }
                        if (i % 300 == 0)
                                thread = rnd_below(3);
                        addr += stride;
                        *e = EV(.kind = rnd_below(10) ? TM_HK_ALLOC : TM_HK_FREE, .size = sz,
                                .addr = addr, .thread = thread, .time = (t += 10));
                        if (i % 50 < 20) {
                                e->attr = attr_src + (i / 50) % 7;
                                e->attr_len = 8;
                        }
                        continue;
                }
                unsigned kind = (unsigned)rnd_below(TM_HK_N);
                if (fl == FL_MIX && rnd_below(3))
                        kind = (unsigned)rnd_below(2); /* mostly alloc / free */
                *e = EV(.kind = kind);
                int wild = fl == FL_WILD;
                /* sizes: small, big, huge; runs of equal sizes */
                unsigned r = (unsigned)rnd_below(100);
                e->size = r < 30 && i ? ev[i - 1].size
                          : r < 80    ? rnd_below(256)
                          : r < 95    ? rnd_below(1 << 20)
                                      : rnd() >> rnd_below(64);
                /* addresses: clustered, strided, 64-bit, small */
                r = (unsigned)rnd_below(100);
                uint64_t prev = i ? ev[i - 1].addr : 0x7f0000001000ull;
                e->addr = r < 30   ? prev + 32
                          : r < 60 ? prev + rnd_below(512) - 256
                          : r < 75 ? 0x8000000 + rnd_below(1 << 16)
                          : r < 90 ? rnd()
                                   : rnd_below(100);
                e->new_addr = rnd_below(2) ? e->addr + 64 : rnd() >> rnd_below(64);
                if (rnd_below(100) < 5)
                        thread = rnd_below(wild ? 1000000 : 4);
                if (rnd_below(100) < 3)
                        heap = wild ? rnd() : rnd_below(3);
                e->thread = thread;
                e->heap = heap;
                t += rnd_below(100) < 95 ? rnd_below(1000) : rnd() >> 20;
                e->time = wild && rnd_below(10) == 0 ? rnd() : t;
                r = (unsigned)rnd_below(100);
                if (kind == TM_HK_COMMENT || r < 40) {
                        size_t len = r < 10   ? 0
                                     : r < 20 ? 8
                                     : r < 30 ? rnd_below(300)
                                     : r < 38 ? rnd_below(5)
                                              : rnd_below(wild ? 65536 : 3000);
                        e->attr = attr_src + rnd_below(sizeof attr_src - len);
                        e->attr_len = len;
                        if (r >= 10 && r < 14)
                                e->attr = (const uint8_t *)"\0\0\0\0\0\0\0\0"; /* 8 zero bytes */
                }
        }
}

static void roundtrip(const char *enc, const struct tm_heap_ev *ev, size_t n, const char *what)
{
        struct sinkbuf s;
        struct tm_err err = {0};
        if (encode(enc, ev, n, &s, &err) < 0)
                fail_msg("%s %s: encode: %s", enc, what, err.msg);
        assert_true(C->probe(s.b, s.n));
        size_t pool = 0;
        for (size_t i = 0; i < n; i++)
                pool += ev[i].attr_len;
        struct got g;
        got_init(&g, n, pool);
        char w[96];
        snprintf(w, sizeof w, "%s %s", enc, what);
        if (dec(s.b, s.n, SIZE_MAX, 0, &g, &err) < 0)
                fail_msg("%s: decode: %s", w, err.msg);
        assert_evs(&g, ev, n, w);
        /* every sink call ended on a record boundary: decode each chunk
         * with eof at its end, the state carried over */
        struct tm_rstate st;
        struct tm_schema sc;
        void *ctx;
        struct tm_rec out[256];
        size_t from = 0, total = 0;
        assert_int_equal(C->open(s.b, s.n, "x", &ctx, &sc, &st, &err), 0);
        for (size_t c = 0; c < s.nends; c++) {
                size_t pos = from, end = s.ends[c];
                while (pos < end) {
                        size_t used = 0;
                        ssize_t r = C->decode(ctx, &st, s.b + pos, end - pos, 1, pos, &used, out,
                                              256, &err);
                        if (r < 0)
                                fail_msg("%s: sink call %zu (bytes %zu..%zu): %s", w, c, from, end,
                                         err.msg);
                        total += (size_t)r;
                        pos += used;
                }
                from = end;
        }
        assert_int_equal(total, n);
        C->close(ctx);
        got_free(&g);
        sink_free(&s);
}

static void test_roundtrip_all(void **unused)
{
        (void)unused;
        static const char *const fl_names[FL_N] = {"mix", "alloc32", "alloc64", "wild", "runs"};
        for (size_t i = 0; i < sizeof attr_src; i++)
                attr_src[i] = (uint8_t)(i * 131 + (i >> 8));
        size_t n = 6000;
        struct tm_heap_ev *ev = calloc(n, sizeof *ev);
        for (const char *const *enc = tm_rcodec_hatf.encodings; *enc; enc++)
                for (unsigned fl = 0; fl < FL_N; fl++)
                        for (unsigned seed = 1; seed <= 3; seed++) {
                                char what[64];
                                rng_state = 0x9e3779b97f4a7c15ull * (seed + 17 * fl);
                                gen_trace(ev, n, (enum flavour)fl);
                                snprintf(what, sizeof what, "%s seed %u", fl_names[fl], seed);
                                roundtrip(*enc, ev, n, what);
                        }
        /* NULL is the default encoding, best */
        rng_state = 42;
        gen_trace(ev, n, FL_MIX);
        roundtrip(NULL, ev, n, "default");
        /* short traces: empty, one record of each kind */
        roundtrip("best", ev, 0, "empty");
        for (unsigned k = 0; k < TM_HK_N; k++) {
                struct tm_heap_ev one = EV(.kind = k, .size = 1ull << 40, .addr = UINT64_MAX,
                                           .new_addr = 1, .thread = 7, .heap = 9, .time = 11,
                                           .attr = (const uint8_t *)"x", .attr_len = 1);
                for (const char *const *enc = tm_rcodec_hatf.encodings; *enc; enc++)
                        roundtrip(*enc, &one, 1, tm_schema_heap.kind[k].name);
        }
        free(ev);
}

/* Many records with big attributes and comments: the look-ahead window's
 * byte cap, its arena sliding, output past the flush size; the longest
 * comment and attributes HATF holds. */
static void test_roundtrip_big(void **unused)
{
        (void)unused;
        size_t n = 60000;
        struct tm_heap_ev *ev = calloc(n, sizeof *ev);
        rng_state = 7;
        gen_trace(ev, n, FL_WILD);
        for (size_t i = 0; i < n; i += 997) {
                ev[i].attr = attr_src;
                ev[i].attr_len = 65535;
        }
        roundtrip("best", ev, n, "big");
        roundtrip("naive", ev, n, "big");
        free(ev);
}

/* ---- encoder errors ---- */

static void test_encoder_errors(void **unused)
{
        (void)unused;
        struct sinkbuf s;
        struct tm_err err = {0};
        struct tm_renc *e;
        static uint8_t big[65536];
        assert_int_equal(C->enc_open("fastest", sink_mem, &s, &e, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "fastest"));
        static const struct {
                struct tm_heap_ev ev;
                const char *what;
        } bad[] = {
            {EV(.kind = 11), "kind 11"},
            {EV(.kind = 200), "kind 200"},
            {EV(.kind = TM_HK_COMMENT, .attr = big, .attr_len = 65536), "comment of 65536"},
            {EV(.kind = TM_HK_ALLOC, .attr = big, .attr_len = 65536), "attributes of 65536"},
            {EV(.kind = TM_HK_FREE, .attr = NULL, .attr_len = 3), "no data"},
        };
        for (size_t i = 0; i < N_OF(bad); i++) {
                memset(&s, 0, sizeof s);
                assert_int_equal(C->enc_open("best", sink_mem, &s, &e, &err), 0);
                struct tm_rec r;
                struct tm_heap_ev ok = EV(.kind = 0, .size = 1, .addr = 2);
                tm_heap_ev_to_rec(&ok, &r);
                for (uint64_t k = 0; k < 5; k++)
                        assert_int_equal(C->enc_put(e, &r, 1, k, &err), 0);
                tm_heap_ev_to_rec(&bad[i].ev, &r);
                r.kind = bad[i].ev.kind; /* tm_heap_ev_to_rec maps unknown kinds to 0 */
                assert_int_equal(C->enc_put(e, &r, 1, 5, &err), -EINVAL);
                if (!strstr(err.msg, "record 5") || !strstr(err.msg, bad[i].what))
                        fail_msg("\"%s\", want \"record 5\" and \"%s\"", err.msg, bad[i].what);
                C->enc_free(e);
                sink_free(&s);
        }
        /* a sink error comes back from put or finish */
        memset(&s, 0, sizeof s);
        s.fail_after = 1;
        assert_int_equal(C->enc_open("naive", sink_mem, &s, &e, &err), 0);
        int r = 0;
        for (uint64_t k = 0; k < 100000 && r == 0; k++) {
                struct tm_rec rec;
                struct tm_heap_ev ev = EV(.kind = 0, .size = k, .addr = k * 16);
                tm_heap_ev_to_rec(&ev, &rec);
                r = C->enc_put(e, &rec, 1, k, &err);
        }
        if (r == 0)
                r = C->enc_finish(e, &err);
        else
                C->enc_free(e);
        assert_int_equal(r, -ENOSPC);
        sink_free(&s);
}

/* ---- (c) sizes ---- */

static size_t enc_size(const char *enc, const struct tm_heap_ev *ev, size_t n)
{
        struct sinkbuf s;
        struct tm_err err = {0};
        if (encode(enc, ev, n, &s, &err) < 0)
                fail_msg("%s: %s", enc, err.msg);
        size_t len = s.n;
        sink_free(&s);
        return len;
}

static void test_sizes(void **unused)
{
        (void)unused;
        size_t n = 40000;
        struct tm_heap_ev *ev = calloc(n, sizeof *ev);
        struct alloc_sim a;
        /* an allocator-like trace, the paper's kind: no threads, heaps,
         * time or attributes */
        rng_state = 99;
        sim_init(&a, 0x08050000);
        for (size_t i = 0; i < n; i++)
                sim_next(&a, &ev[i], 30);
        size_t sz[16];
        unsigned ne = 0;
        for (const char *const *enc = tm_rcodec_hatf.encodings; *enc; enc++, ne++) {
                sz[ne] = enc_size(*enc, ev, n);
                print_message("allocator-like: %-12s %.3f bytes/record\n", *enc,
                              (double)sz[ne] / (double)n);
        }
        /* the row's encodings: best naive smallsize samesize baseoffset1
         * baseoffset2 baseoffset stride */
        assert_true(sz[2] < sz[1]);  /* smallsize < naive */
        assert_true(sz[3] <= sz[1]); /* samesize <= naive */
        for (unsigned k = 4; k < 8; k++)
                assert_true(sz[k] <= sz[1]);           /* address codings never lose */
        assert_true(sz[6] <= sz[4] && sz[6] <= sz[5]); /* baseoffset: the better per run */
        for (unsigned k = 1; k < 8; k++)
                assert_true(sz[0] <= sz[k]); /* best <= each */
        /* runs of one size: samesize helps */
        for (size_t i = 0; i < n; i++)
                sim_next(&a, &ev[i], 90);
        size_t naive = enc_size("naive", ev, n), same = enc_size("samesize", ev, n);
        print_message("same-size runs: naive %.3f samesize %.3f\n", (double)naive / (double)n,
                      (double)same / (double)n);
        assert_true(same * 10 < naive * 9);
        /* strided addresses: stride wins */
        uint64_t addr = 0x40000000;
        for (size_t i = 0; i < n; i++) {
                if (i % 200 == 0)
                        addr = 0x40000000 + rnd_below(1 << 24) * 64;
                ev[i] = EV(.kind = i % 5 == 4 ? TM_HK_FREE : TM_HK_ALLOC, .size = 48,
                           .addr = (addr += 64));
        }
        size_t sn = enc_size("naive", ev, n), ss = enc_size("stride", ev, n),
               sb = enc_size("baseoffset", ev, n), sbest = enc_size("best", ev, n);
        print_message("strided: naive %.3f stride %.3f baseoffset %.3f best %.3f\n",
                      (double)sn / (double)n, (double)ss / (double)n, (double)sb / (double)n,
                      (double)sbest / (double)n);
        assert_true(ss * 10 < sn * 6);
        assert_true(ss < sb);
        assert_true(sbest <= ss);
        free(ev);
}

/* ---- the text decoder (hatf_text.c) against decode + tm_text_line ---- */

struct text {
        char *b;
        size_t n, cap;
};

static void text_put(struct text *t, const char *p, size_t n)
{
        if (n == 0)
                return; /* p may be NULL, and t->b too */
        if (t->n + n > t->cap) {
                t->cap = 2 * (t->n + n) + 4096;
                t->b = realloc(t->b, t->cap);
        }
        memcpy(t->b + t->n, p, n);
        t->n += n;
}

/* The one record a generic decode call gives at raw[*pos] (eof set), its
 * line by the one-record renderer: 1, 0 at the end, or the error. */
static int text_one(void *ctx, struct tm_rstate *st, const uint8_t *raw, size_t len, size_t *pos,
                    struct text *t, struct tm_err *err)
{
        static char line[TM_NAME_MAX + TM_KIND_FIELDS_MAX * 24 + 3 * 70000 + 2];
        struct tm_rec out[1];
        size_t used = 0;
        ssize_t r = C->decode(ctx, st, raw + *pos, len - *pos, 1, *pos, &used, out, 1, err);
        if (r < 0)
                return (int)r;
        *pos += used;
        if (r == 1)
                text_put(t, line, tm_text_line(line, &tm_schema_heap, &out[0]));
        return r > 0 || used > 0;
}

/* The reference: the generic decoder, record by record, and
 * tm_text_line. 0 or the error. */
static int text_ref(const uint8_t *raw, size_t len, struct text *t, struct tm_err *err)
{
        struct tm_rstate st;
        struct tm_schema sc;
        void *ctx;
        int h = C->open(raw, len < 4096 ? len : 4096, "t.hatf", &ctx, &sc, &st, err);
        size_t pos = (size_t)h;
        while (h >= 0 && (h = text_one(ctx, &st, raw, len, &pos, t, err)) > 0)
                ;
        C->close(ctx);
        return h < 0 ? h : 0;
}

/* The text decoder as the ascii view drives it, on random input pieces,
 * into buffers of random room (allocated to the byte, so that ASan sees
 * a write past them), with random record limits; where it does nothing,
 * one record the generic way. 0 or the error. */
static int text_fused(tm_rtext_fn *fn, const struct tm_text_plan *p, const uint8_t *raw,
                      size_t len, struct text *t, struct tm_err *err)
{
        struct tm_rstate st;
        struct tm_schema sc;
        void *ctx;
        int h = C->open(raw, len < 4096 ? len : 4096, "t.hatf", &ctx, &sc, &st, err);
        size_t pos = (size_t)h;
        while (h >= 0) {
                size_t r = rnd_below(10);
                size_t avail = r < 3 ? len - pos : 1 + rnd_below(r < 7 ? 200 : 5000);
                size_t cap = r < 2 ? rnd_below(80) : 1 + rnd_below(r < 6 ? 2000 : 40000);
                size_t maxrec = rnd_below(4) ? SIZE_MAX : rnd_below(5);
                if (avail > len - pos)
                        avail = len - pos;
                char *dst = malloc(cap ? cap : 1);
                size_t used = 0, nrec = 0;
                size_t w = fn(&st, raw + pos, avail, pos, &used, p, dst, cap, maxrec, -1, &nrec);
                assert_true(w <= cap && used <= avail && nrec <= maxrec);
                size_t lines = 0;
                for (size_t i = 0; i < w; i++)
                        lines += dst[i] == '\n';
                assert_int_equal(lines, nrec);
                text_put(t, dst, w);
                free(dst);
                pos += used;
                if (used == 0 && w == 0 && (h = text_one(ctx, &st, raw, len, &pos, t, err)) == 0)
                        break;
        }
        C->close(ctx);
        return h < 0 ? h : 0;
}

/* raw[0..len): the same bytes and the same end (or error) both ways. */
static void text_check(tm_rtext_fn *fn, const struct tm_text_plan *p, const uint8_t *raw,
                       size_t len, const char *what)
{
        struct text a = {0}, b = {0};
        struct tm_err ea = {0}, eb = {0};
        int ra = text_ref(raw, len, &a, &ea);
        int rb = text_fused(fn, p, raw, len, &b, &eb);
        if (ra != rb || strcmp(ea.msg, eb.msg) != 0)
                fail_msg("%s: generic %d (%s), text decoder %d (%s)", what, ra, ea.msg, rb, eb.msg);
        if (a.n != b.n || memcmp(a.b, b.b, a.n) != 0) {
                size_t i = 0;
                while (i < a.n && i < b.n && a.b[i] == b.b[i])
                        i++;
                fail_msg("%s: text differs at byte %zu of %zu / %zu", what, i, a.n, b.n);
        }
        free(a.b);
        free(b.b);
}

static tm_rtext_fn *text_fn(struct tm_text_plan *p)
{
        tm_rtext_fn *fn = C->text_of ? C->text_of() : NULL;
        if (!fn) {
                printf("SKIP: no HATF text decoder on this machine (it needs AVX-512 VBMI)\n");
                return NULL;
        }
        assert_int_equal(tm_text_plan_init(p, &tm_schema_heap), 0);
        return fn;
}

/* Every writer encoding, every trace flavour (all kinds, attributes,
 * comments). */
static void test_text_encodings(void **unused)
{
        (void)unused;
        static struct tm_text_plan p;
        tm_rtext_fn *fn = text_fn(&p);
        if (!fn)
                skip();
        for (size_t i = 0; i < sizeof attr_src; i++)
                attr_src[i] = (uint8_t)(i * 131 + (i >> 8));
        size_t n = 3000;
        struct tm_heap_ev *ev = calloc(n, sizeof *ev);
        for (const char *const *enc = tm_rcodec_hatf.encodings; *enc; enc++)
                for (unsigned fl = 0; fl < FL_N; fl++)
                        for (unsigned seed = 1; seed <= 2; seed++) {
                                struct sinkbuf s;
                                struct tm_err err = {0};
                                char what[96];
                                rng_state = 0x9e3779b97f4a7c15ull * (seed + 17 * fl);
                                gen_trace(ev, n, (enum flavour)fl);
                                assert_int_equal(encode(*enc, ev, n, &s, &err), 0);
                                snprintf(what, sizeof what, "%s flavour %u seed %u", *enc, fl,
                                         seed);
                                text_check(fn, &p, s.b, s.n, what);
                                sink_free(&s);
                        }
        free(ev);
}

/* Random HATF written byte by byte: metadata of every op, field, width
 * and interpretation with random arguments, between records of every
 * kind with random field bytes and attributes, and comments. */
static size_t gen_raw(uint8_t *b, size_t cap, size_t nrec)
{
        static const uint8_t sig[HATF_SIGNATURE_LEN] = {TM_HK_COMMENT, 0,   8,   'H', 'A', 'T',
                                                        'F',           ' ', '1', '.', '0'};
        static const uint8_t widths[] = {0, 1, 2, 4, 8, HATF_W_V1, HATF_W_V2};
        struct hatf_state s;
        struct hatf_kplan kp[TM_HK_COMMENT];
        const char *why;
        size_t n = sizeof sig;
        memcpy(b, sig, n);
        hatf_state_init(&s);
        for (size_t k = 0; k < nrec && n + 400 < cap; k++) {
                unsigned r = (unsigned)rnd_below(100);
                uint8_t *m = b + n;
                if (r < 12) {
                        unsigned f = (unsigned)rnd_below(HATF_NF);
                        m[0] = HATF_TAG_METADATA;
                        m[2] = (uint8_t)f;
                        if (rnd_below(2)) {
                                m[1] = HATF_OP_SIZE;
                                m[3] = widths[rnd_below(f == HATF_F_ATTR ? 7 : 5)];
                        } else {
                                m[1] = HATF_OP_INTERP;
                                m[3] =
                                    (uint8_t)(f == HATF_F_ATTR ? rnd_below(2) : rnd_below(HATF_NI));
                                for (unsigned i = 4; i < 20; i++)
                                        m[i] = (uint8_t)(rnd_below(3) ? 0 : rnd());
                                if (f == HATF_F_ATTR && rnd_below(4))
                                        memset(m + 4, 0, 8); /* mostly the empty default */
                        }
                        assert_int_equal(hatf_meta_apply(&s, m, &why), 0);
                        n += (size_t)hatf_meta_len(m);
                        continue;
                }
                if (r < 15) {
                        size_t len = rnd_below(40);
                        m[0] = TM_HK_COMMENT;
                        hatf_put_be(m + 1, len, 2);
                        for (size_t i = 0; i < len; i++)
                                m[3 + i] = (uint8_t)rnd();
                        n += 3 + len;
                        continue;
                }
                unsigned kind = (unsigned)rnd_below(TM_HK_COMMENT);
                hatf_plan_kinds(&s, kp);
                const struct hatf_kplan *p = &kp[kind];
                m[0] = (uint8_t)kind;
                for (unsigned i = 1; i < p->fixed; i++) {
                        unsigned x = (unsigned)rnd_below(8);
                        m[i] = x < 3 ? 0 : x < 4 ? 0xff : x < 5 ? 0x80 : (uint8_t)rnd();
                }
                size_t extra = 0;
                if (p->varpos != HATF_KP_NONE) {
                        extra = rnd_below(30);
                        hatf_put_be(m + p->varoff, extra, p->w[p->varpos]);
                        for (size_t i = 0; i < extra; i++)
                                m[p->fixed + i] = (uint8_t)rnd();
                }
                n += p->fixed + extra;
        }
        return n;
}

static void test_text_random(void **unused)
{
        (void)unused;
        static struct tm_text_plan p;
        static uint8_t raw[1 << 18], bad[1 << 18];
        tm_rtext_fn *fn = text_fn(&p);
        if (!fn)
                skip();
        for (unsigned seed = 1; seed <= 60; seed++) {
                char what[64];
                rng_state = 0x2545f4914f6cdd1dull * seed;
                size_t n = gen_raw(raw, sizeof raw, seed < 50 ? 2000 : 20000);
                snprintf(what, sizeof what, "random stream %u", seed);
                text_check(fn, &p, raw, n, what);
                /* damaged: a few bytes changed, or cut short; both paths
                 * give the same lines up to the same error */
                for (unsigned d = 0; d < 4; d++) {
                        memcpy(bad, raw, n);
                        size_t m = n;
                        if (d == 3)
                                m = HATF_SIGNATURE_LEN + rnd_below(n - HATF_SIGNATURE_LEN);
                        else
                                for (unsigned k = 0; k <= d; k++)
                                        bad[HATF_SIGNATURE_LEN +
                                            rnd_below(n - HATF_SIGNATURE_LEN)] = (uint8_t)rnd();
                        snprintf(what, sizeof what, "random stream %u, damage %u", seed, d);
                        text_check(fn, &p, bad, m, what);
                }
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_tags_default),    cmocka_unit_test(test_field_sizes),
            cmocka_unit_test(test_interpretations), cmocka_unit_test(test_width_rules),
            cmocka_unit_test(test_signed_offsets),  cmocka_unit_test(test_defaults),
            cmocka_unit_test(test_attributes),      cmocka_unit_test(test_signature),
            cmocka_unit_test(test_truncated),       cmocka_unit_test(test_bad_records),
            cmocka_unit_test(test_state_copy),      cmocka_unit_test(test_roundtrip_all),
            cmocka_unit_test(test_roundtrip_big),   cmocka_unit_test(test_encoder_errors),
            cmocka_unit_test(test_sizes),           cmocka_unit_test(test_text_encodings),
            cmocka_unit_test(test_text_random),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
