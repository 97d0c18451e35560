/* codecs/native's fast block decoder against its reference decoder
 * (tmn_ws_reference): the same outcome, the same records, the same error
 * message, block by block:
 *   real     tests/data/native/true.tmn (lackey of true) as packed, and its
 *            records again in blocks of 2^4 .. 2^12 at zstd 3 and 19;
 *   random   programs of random control flow and data (strides, repeats,
 *            random addresses; sizes of one and of several varint bytes;
 *            sized and not; blocks that start with a data access, blocks
 *            of data accesses only), in blocks of 1 record to 2^13, and
 *            pointer-chasing walks, whose blocks take codings 3 and 4;
 *   damaged  predicted blocks whose streams are changed (a byte set, cut,
 *            added, removed) and stored again as they are with a good
 *            checksum, so that the predictors meet them: either both
 *            decode the same records or both refuse the block with one
 *            message; through the row, such a block after a good one
 *            gives the good one's records and then EIO, also on the
 *            calls after the error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "codecs/native/native.h"
#include "support/tmn_block.h"

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

struct cols {
        size_t n, cap;
        uint8_t *type;
        uint64_t *addr;
        uint32_t *size;
};

static void cols_put(struct cols *c, uint8_t type, uint64_t addr, uint32_t size)
{
        if (c->n == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 1024;
                c->type = realloc(c->type, c->cap);
                c->addr = realloc(c->addr, 8 * c->cap);
                c->size = realloc(c->size, 4 * c->cap);
                assert_true(c->type && c->addr && c->size);
        }
        c->type[c->n] = type;
        c->addr[c->n] = addr;
        c->size[c->n++] = size;
}

static void cols_free(struct cols *c)
{
        free(c->type);
        free(c->addr);
        free(c->size);
        memset(c, 0, sizeof *c);
}

/* Outcomes that both decoders gave: decoded, refused; blocks decoded by
 * coding (the body's first byte). */
static size_t n_same, n_refused, n_coding[5];

/* The block p (len bytes, nrec records) decoded by both decoders: the
 * same outcome, records or message. */
static void both(const uint8_t *p, size_t len, uint32_t nrec, unsigned ntypes, int sized)
{
        static struct tmn_ws *w[2];
        for (int x = 0; x < 2; x++) {
                if (!w[x])
                        assert_non_null(w[x] = tmn_ws_new());
                tmn_ws_reference(w[x], x);
        }
        uint8_t *ty[2] = {malloc(nrec), malloc(nrec)};
        uint64_t *ad[2] = {malloc(8 * (size_t)nrec), malloc(8 * (size_t)nrec)};
        uint32_t *sz[2] = {malloc(4 * (size_t)nrec), malloc(4 * (size_t)nrec)};
        struct tm_err err[2] = {{0}, {0}};
        int rc[2];
        for (int x = 0; x < 2; x++)
                rc[x] =
                    tmn_block_decode(w[x], p, len, ntypes, sized, 77, ty[x], ad[x], sz[x], &err[x]);
        assert_int_equal(rc[0], rc[1]);
        if (rc[0] == 0) {
                assert_memory_equal(ty[0], ty[1], nrec);
                assert_memory_equal(ad[0], ad[1], 8 * (size_t)nrec);
                assert_memory_equal(sz[0], sz[1], 4 * (size_t)nrec);
                n_same++;
                n_coding[p[TMN_BLK_HDR] < 5 ? p[TMN_BLK_HDR] : 0]++;
        } else {
                assert_int_equal(rc[0], -EIO);
                assert_string_equal(err[0].msg, err[1].msg);
                assert_non_null(strstr(err[0].msg, "raw offset 77"));
                n_refused++;
        }
        for (int x = 0; x < 2; x++) {
                free(ty[x]);
                free(ad[x]);
                free(sz[x]);
        }
}

/* Encode c[lo, lo + n) as blocks (halves when one is too big); each
 * block goes to fn. */
static void blocks(struct tmn_ws *w, const struct cols *c, size_t lo, size_t n, int sized,
                   int level, void (*fn)(const uint8_t *, size_t, uint32_t, int, void *), void *arg)
{
        struct tmn_cols k = {c->type + lo, c->addr + lo, c->size + lo};
        const uint8_t *p;
        size_t len;
        int rc = tmn_block_encode(w, &k, n, sized, level, &p, &len, NULL);
        if (rc == -EFBIG && n > 1) {
                blocks(w, c, lo, n / 2, sized, level, fn, arg);
                blocks(w, c, lo + n / 2, n - n / 2, sized, level, fn, arg);
                return;
        }
        assert_int_equal(rc, 0);
        fn(p, len, (uint32_t)n, sized, arg);
}

static void check_block(const uint8_t *p, size_t len, uint32_t n, int sized, void *arg)
{
        (void)arg;
        both(p, len, n, 8, sized);
        both(p, len, n, 3, sized); /* fetches allowed, no type above 2 */
}

/* c in blocks of 2^lg records at level. */
static void check_all(const struct cols *c, unsigned lg, int sized, int level)
{
        struct tmn_ws *w = tmn_ws_new();
        assert_non_null(w);
        for (size_t lo = 0; lo < c->n; lo += (size_t)1 << lg) {
                size_t n = c->n - lo < ((size_t)1 << lg) ? c->n - lo : (size_t)1 << lg;
                blocks(w, c, lo, n, sized, level, check_block, NULL);
        }
        tmn_ws_free(w);
}

static uint8_t *load(const char *path, size_t *n)
{
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static uint8_t buf[1 << 16];
        *n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        return buf;
}

static void test_real(void **unused)
{
        (void)unused;
        size_t len;
        const uint8_t *f = load(TM_SOURCE_DIR "/tests/data/native/true.tmn", &len);
        unsigned ntypes, log2;
        int sized;
        struct tm_err err = {0};
        assert_int_equal(tmn_file_head_get(f, len, &ntypes, &sized, &log2, &err), 0);
        struct cols c = {0};
        struct tmn_ws *w = tmn_ws_new();
        for (size_t pos = TMN_FILE_HDR; pos + TMN_BLK_HDR <= len;) {
                uint32_t n, body;
                assert_int_equal(tmn_block_head(f + pos, 1u << log2, pos, &n, &body, &err), 0);
                if (n == 0)
                        break;
                both(f + pos, TMN_BLK_HDR + body, n, ntypes, sized);
                size_t at = c.n;
                for (uint32_t i = 0; i < n; i++)
                        cols_put(&c, 0, 0, 0);
                assert_int_equal(tmn_block_decode(w, f + pos, TMN_BLK_HDR + body, ntypes, sized,
                                                  pos, c.type + at, c.addr + at, c.size + at, &err),
                                 0);
                pos += TMN_BLK_HDR + body;
        }
        tmn_ws_free(w);
        assert_true(c.n > 3000);
        for (unsigned lg = 4; lg <= 12; lg += 2) {
                check_all(&c, lg, sized, 3);
                check_all(&c, lg, sized, 19);
        }
        cols_free(&c);
}

/* n records of a random program: pcs instructions (a third of them jump
 * somewhere at random, the others fall through), each with up to 3 data
 * accesses that stride, repeat, follow the previous one or are random;
 * sizes up to big - 1; fetches only when fetches. */
static void program(struct cols *c, size_t n, unsigned pcs, uint32_t big, int fetches,
                    uint64_t seed)
{
        uint64_t s = seed | 1, prev = 0x7000;
        unsigned at = 0;
        uint64_t *stride = calloc(pcs, sizeof *stride);
        for (unsigned k = 0; k < pcs; k++)
                stride[k] = rnd(&s) % 5 == 0 ? rnd(&s) : 8 * (rnd(&s) % 4);
        while (c->n < n) {
                uint64_t pc = 0x400000 + 4 * (uint64_t)at;
                if (fetches)
                        cols_put(c, 2, pc, (uint32_t)(rnd(&s) % 8 == 0 ? rnd(&s) % big : 4));
                unsigned k = (unsigned)(rnd(&s) % 4);
                for (unsigned d = 0; d < k && c->n < n; d++) {
                        uint64_t r = rnd(&s) % 8;
                        uint64_t a = r < 4   ? 0x10000 + stride[at] * (c->n / 7) + 64 * d
                                     : r < 6 ? prev + rnd(&s) % 64
                                     : r < 7 ? prev
                                             : rnd(&s);
                        cols_put(c,
                                 (uint8_t)(rnd(&s) % 2 == 0   ? 0
                                           : rnd(&s) % 8 == 2 ? 3
                                                              : 1),
                                 a, (uint32_t)(rnd(&s) % big));
                        prev = a;
                }
                at = rnd(&s) % 3 == 0 ? (unsigned)(rnd(&s) % pcs) : (at + 1) % pcs;
        }
        c->n = n;
        free(stride);
}

/* n records of a pointer-chasing walk (as bench/chase_cycle.c): a cycle
 * of nodes of 64 bytes in a random order, each step a load of the node's
 * next pointer and its value (8 bytes on), every eighth a store of the
 * value, the loop's other instructions without data; sizes 8 and the
 * fetches' 3..6 (big: some of several varint bytes). The tables rarely
 * hit, so the writer takes codings 3 and 4. */
static void chase(struct cols *c, size_t n, unsigned nodes, uint32_t big, uint64_t seed)
{
        uint64_t s = seed | 1;
        uint32_t *next = malloc(sizeof *next * nodes), *order = malloc(sizeof *order * nodes);
        assert_true(next && order);
        for (unsigned k = 0; k < nodes; k++)
                order[k] = k;
        for (unsigned k = nodes - 1; k > 0; k--) {
                unsigned r = (unsigned)(rnd(&s) % (k + 1)), t = order[k];
                order[k] = order[r];
                order[r] = t;
        }
        for (unsigned k = 0; k < nodes; k++)
                next[order[k]] = order[(k + 1) % nodes];
        uint64_t base = 0x5555a0000040ull;
        for (uint32_t at = order[0], step = 0; c->n < n; at = next[at], step++) {
                uint64_t node = base + 64 * (uint64_t)at;
                uint32_t fsz = big > 9 && rnd(&s) % 16 == 0 ? (uint32_t)(rnd(&s) % big) : 3;
                cols_put(c, 2, 0x401000, fsz);
                cols_put(c, 1, node + 8, 8);
                cols_put(c, 2, 0x401004, 4);
                cols_put(c, 1, node, 8);
                if (step % 8 == 0) {
                        cols_put(c, 2, 0x401008, 6);
                        cols_put(c, 0, node + 8, 8);
                }
                cols_put(c, 2, 0x40100e, 3);
                cols_put(c, 2, 0x401011, 2);
        }
        c->n = n;
        free(next);
        free(order);
}

static void test_random(void **unused)
{
        (void)unused;
        static const size_t ns[] = {1, 2, 17, 300, 5000, 9000};
        static const uint32_t bigs[] = {9, 100000};
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
                for (size_t b = 0; b < 2; b++)
                        for (int fetches = 0; fetches < 2; fetches++)
                                for (int sized = 0; sized < 2; sized++) {
                                        struct cols c = {0};
                                        program(&c, ns[a], a % 2 ? 50 : 3000, bigs[b], fetches,
                                                a * 8 + b * 4 + (size_t)fetches * 2 + 1);
                                        if (!sized)
                                                memset(c.size, 0, 4 * c.n);
                                        if (c.n > 2 && a % 2)
                                                c.type[0] = 1; /* starts with a data access */
                                        check_all(&c, 13, sized, 3);
                                        cols_free(&c);
                                }
        /* pointer chasing: blocks of codings 3 and 4 */
        size_t delta0 = n_coding[3] + n_coding[4];
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
                for (size_t b = 0; b < 2; b++)
                        for (int sized = 0; sized < 2; sized++) {
                                struct cols c = {0};
                                chase(&c, ns[a] * 4, 4096, bigs[b], a * 4 + b * 2 + 1);
                                if (!sized)
                                        memset(c.size, 0, 4 * c.n);
                                for (size_t lo = 0; a % 2 && lo + 2 < c.n; lo += 4096)
                                        c.type[lo] = 1; /* a block starts with data */
                                check_all(&c, 12, sized, 3);
                                cols_free(&c);
                        }
        printf("decoded by coding: %zu %zu %zu %zu %zu\n", n_coding[0], n_coding[1], n_coding[2],
               n_coding[3], n_coding[4]);
        assert_true(n_coding[3] >= 10 && n_coding[4] >= 10 && n_coding[3] + n_coding[4] > delta0);
}

/* The raw streams of the predicted block p into st (room for cap bytes
 * each): 0, or -1 when p is plain. */
static int streams_of(const uint8_t *p, uint8_t **st, size_t *len, size_t cap)
{
        const uint8_t *b = p + TMN_BLK_HDR;
        if (b[0] == TMN_PLAIN)
                return -1;
        size_t at = 1 + TMN_NSTREAMS * TMN_STREAM_ENTRY;
        for (int s = 0; s < TMN_NSTREAMS; s++) {
                const uint8_t *e = b + 1 + s * TMN_STREAM_ENTRY;
                uint32_t k = tmn_get32(e + 1), raw = tmn_get32(e + 5);
                assert_true(raw + 2 <= cap);
                if (e[0] == 0)
                        memcpy(st[s], b + at, k);
                else
                        assert_int_equal(ZSTD_decompress(st[s], cap, b + at, k), raw);
                len[s] = raw;
                at += k;
        }
        return 0;
}

struct damage {
        uint64_t seed;
        uint8_t *st[TMN_NSTREAMS];
        uint8_t *out;
        size_t cap, blocks, delta;
};

/* Changes of the predicted block p's streams, each decoded both ways. */
static void damage_block(const uint8_t *p, size_t plen, uint32_t n, int sized, void *arg)
{
        (void)plen;
        struct damage *d = arg;
        size_t len[TMN_NSTREAMS];
        if (streams_of(p, d->st, len, d->cap) < 0)
                return;
        d->blocks++;
        d->delta += p[TMN_BLK_HDR] >= TMN_PREDICT_DELTA;
        static const uint8_t vals[] = {0, 1, 2, 3, 4, 5, 0x7f, 0x80, 0xff};
        for (int round = 0; round < 40; round++) {
                assert_int_equal(streams_of(p, d->st, len, d->cap), 0);
                int s = (int)(rnd(&d->seed) % TMN_NSTREAMS), how = (int)(rnd(&d->seed) % 4);
                size_t i = len[s] ? rnd(&d->seed) % len[s] : 0;
                uint8_t v = vals[rnd(&d->seed) % sizeof vals];
                if (how == 0 && len[s]) { /* a byte set */
                        d->st[s][i] = v;
                } else if (how == 1 && len[s]) { /* cut */
                        len[s] = i;
                } else if (how == 2 || !len[s]) { /* a byte added */
                        memmove(d->st[s] + i + 1, d->st[s] + i, len[s] - i);
                        d->st[s][i] = v;
                        len[s]++;
                } else { /* a byte removed */
                        memmove(d->st[s] + i, d->st[s] + i + 1, len[s] - i - 1);
                        len[s]--;
                }
                size_t blen =
                    tmn_test_assemble(d->out, n, p[TMN_BLK_HDR], TMN_NSTREAMS, d->st, len);
                if (blen - TMN_BLK_HDR <= TMN_BODY_MAX)
                        both(d->out, blen, n, 8, sized);
        }
}

static void test_damaged(void **unused)
{
        (void)unused;
        struct damage d = {.seed = 99, .cap = 11 * 4096 + 64};
        for (int s = 0; s < TMN_NSTREAMS; s++)
                assert_non_null(d.st[s] = malloc(d.cap));
        assert_non_null(d.out = malloc(TMN_BLK_HDR + 7 * d.cap));
        struct tmn_ws *w = tmn_ws_new();
        size_t same0 = n_same, refused0 = n_refused;
        for (int sized = 0; sized < 2; sized++)
                for (uint64_t seed = 1; seed < 4; seed++) {
                        struct cols c = {0};
                        program(&c, 4000, 40, seed == 2 ? 300 : 9, 1, seed);
                        if (!sized)
                                memset(c.size, 0, 4 * c.n);
                        for (size_t lo = 0; lo < c.n; lo += 500)
                                blocks(w, &c, lo, 500, sized, 3, damage_block, &d);
                        cols_free(&c);
                        chase(&c, 4000, 1024, seed == 2 ? 300 : 9, seed);
                        if (!sized)
                                memset(c.size, 0, 4 * c.n);
                        for (size_t lo = 0; lo < c.n; lo += 500)
                                blocks(w, &c, lo, 500, sized, 3, damage_block, &d);
                        cols_free(&c);
                }
        printf("damaged: %zu predicted blocks (%zu of codings 3, 4), %zu decoded, %zu refused\n",
               d.blocks, d.delta, n_same - same0, n_refused - refused0);
        /* the changes reach both outcomes, over predicted blocks */
        assert_true(d.blocks >= 40 && d.delta >= 20);
        assert_true(n_refused - refused0 > 1000);
        assert_true(n_same - same0 > 10);
        tmn_ws_free(w);
        for (int s = 0; s < TMN_NSTREAMS; s++)
                free(d.st[s]);
        free(d.out);
}

/* Through the row: a good block, a damaged one, the end mark: the good
 * block's records, then EIO naming the damaged block, and EIO again. */
static void test_row(void **unused)
{
        (void)unused;
        struct cols c = {0};
        program(&c, 1000, 40, 9, 1, 7);
        struct tmn_ws *w = tmn_ws_new();
        struct tmn_cols k = {c.type, c.addr, c.size};
        const uint8_t *p;
        size_t len;
        static uint8_t file[1 << 18];
        tmn_file_head_put(file, 8, 1, 10);
        size_t at = TMN_FILE_HDR;
        assert_int_equal(tmn_block_encode(w, &k, 500, 1, 3, &p, &len, NULL), 0);
        memcpy(file + at, p, len);
        at += len;
        size_t bad_at = at;
        k = (struct tmn_cols){c.type + 500, c.addr + 500, c.size + 500};
        assert_int_equal(tmn_block_encode(w, &k, 500, 1, 3, &p, &len, NULL), 0);
        uint8_t *st[TMN_NSTREAMS];
        size_t sl[TMN_NSTREAMS];
        for (int s = 0; s < TMN_NSTREAMS; s++)
                assert_non_null(st[s] = malloc(11 * 500 + 64));
        assert_int_equal(streams_of(p, st, sl, 11 * 500 + 64), 0);
        assert_true(sl[TMN_S_DHIT] > 10);
        st[TMN_S_DHIT][sl[TMN_S_DHIT] / 2] = 9; /* no such hit code */
        at += tmn_test_assemble(file + at, 500, p[TMN_BLK_HDR], TMN_NSTREAMS, st, sl);
        tmn_end_put(file + at, 1000);
        at += TMN_END_LEN;

        void *ctx = NULL;
        struct tm_schema sch;
        struct tm_rstate rs;
        struct tm_err err = {0};
        int hl = tm_rcodec_native.open(file, at, "t.tmn", &ctx, &sch, &rs, &err);
        assert_int_equal(hl, TMN_FILE_HDR);
        static struct tm_rec got[1000];
        size_t pos = (size_t)hl, m = 0;
        ssize_t r;
        for (;;) {
                size_t used = 0;
                r = tm_rcodec_native.decode(ctx, &rs, file + pos, at - pos, 1, pos, &used, got + m,
                                            64, &err);
                if (r < 0)
                        break;
                assert_true(r > 0 || used > 0);
                m += (size_t)r;
                pos += used;
        }
        assert_int_equal(r, -EIO);
        assert_int_equal(m, 500);
        char want[48];
        snprintf(want, sizeof want, "raw offset %zu", bad_at);
        assert_non_null(strstr(err.msg, want));
        for (size_t i = 0; i < m; i++) {
                assert_int_equal(got[i].kind, c.type[i]);
                assert_int_equal(got[i].v[1], c.addr[i]);
                assert_int_equal(got[i].v[2], c.size[i]);
        }
        size_t used = 0;
        assert_int_equal(
            tm_rcodec_native.decode(ctx, &rs, file + pos, at - pos, 1, pos, &used, got, 64, &err),
            -EIO);
        tm_rcodec_native.close(ctx);
        for (int s = 0; s < TMN_NSTREAMS; s++)
                free(st[s]);
        tmn_ws_free(w);
        cols_free(&c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_real),
            cmocka_unit_test(test_random),
            cmocka_unit_test(test_damaged),
            cmocka_unit_test(test_row),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
