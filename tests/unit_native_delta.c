/* codecs/native's codings 3 and 4 (docs/formats/native.md, "Predicted
 * blocks"): a predicted block whose data addresses are deltas from the
 * previous data address instead of hit codes and misses.
 *   chase     a pointer-chasing walk of a random list (the tables rarely
 *             hit) is written in coding 3 (or 4 when the block starts with
 *             a data access), a loop over an array in coding 1: each block
 *             decodes to its records, by the row's decoder and the
 *             reference alike;
 *   damage    every byte of a coding-3 block changed: -EIO, never other
 *             records; its streams changed and stored again with a good
 *             checksum (a hit code in the empty DHIT, DMISS cut or
 *             lengthened, coding 5): refused with -EIO by both decoders;
 *             codings 4 and 1 over the same streams: both decoders alike
 *             (the same records, or -EIO);
 *   storage   the stats' walk of a file of a coding-3 block counts it
 *             predicted, its streams' bytes where the table says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "codecs/native/native.h"
#include "codecs/native/native_stats.h"
#include "support/tmn_block.h"

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

struct cols {
        size_t n;
        uint8_t type[1 << 14];
        uint64_t addr[1 << 14];
        uint32_t size[1 << 14];
};

static void put(struct cols *c, uint8_t type, uint64_t addr, uint32_t size)
{
        if (c->n < sizeof c->type) {
                c->type[c->n] = type;
                c->addr[c->n] = addr;
                c->size[c->n++] = size;
        }
}

/* n records of a walk: a list of 4096 nodes of 64 bytes in random order
 * (chase), or a loop over an array in order with a global and a local
 * (!chase); lead: a data access first. */
static void walk(struct cols *c, size_t n, int chase, int lead)
{
        static uint32_t next[4096];
        uint64_t s = 0x9E3779B97F4A7C15u;
        for (uint32_t i = 0; i < 4096; i++)
                next[i] = i;
        for (uint32_t i = 4095; i > 0; i--) { /* one random cycle (Sattolo) */
                uint32_t j = (uint32_t)(rnd(&s) % i), t = next[i];
                next[i] = next[j];
                next[j] = t;
        }
        c->n = 0;
        if (lead)
                put(c, 0, 0x7ffd0000, 8);
        for (uint32_t node = 0, i = 0; c->n < n; i++) {
                uint64_t a = 0x10000000 + 64 * (uint64_t)node;
                if (chase) {
                        put(c, 2, 0x401000, 4); /* load the node's value */
                        put(c, 0, a + 8, 8);
                        put(c, 2, 0x401004, 3); /* its next */
                        put(c, 0, a, 8);
                        put(c, 2, 0x401007, 2); /* the loop's branch back */
                } else { /* a global, an array in order, a local: hits */
                        put(c, 2, 0x402000, 4);
                        put(c, 0, 0x601000, 8);
                        put(c, 2, 0x402004, 4);
                        put(c, 0, 0x20000000 + 8 * (uint64_t)i, 8);
                        put(c, 2, 0x402008, 4);
                        put(c, 1, 0x7ffd0010, 8);
                }
                node = next[node];
        }
        c->n = n;
}

/* The block's records by the row's decoder and by the reference: both
 * those of c; the block's coding. */
static int round_trip(const struct cols *c, int sized, int level)
{
        struct tmn_ws *w = tmn_ws_new(), *r = tmn_ws_new();
        assert_true(w && r);
        tmn_ws_reference(r, 1);
        struct tmn_cols in = {c->type, c->addr, sized ? c->size : NULL};
        const uint8_t *out;
        size_t len;
        struct tmn_bstats st;
        assert_int_equal(tmn_block_encode(w, &in, c->n, sized, level, &out, &len, &st), 0);
        uint8_t *copy = malloc(len), *type = malloc(c->n);
        uint64_t *addr = malloc(8 * c->n);
        uint32_t *size = malloc(4 * c->n);
        assert_true(copy && type && addr && size);
        memcpy(copy, out, len);
        for (int ref = 0; ref < 2; ref++) {
                struct tm_err err = {0};
                memset(addr, 0xAA, 8 * c->n);
                assert_int_equal(tmn_block_decode(ref ? r : w, copy, len, 8, sized, 0, type, addr,
                                                  size, &err),
                                 0);
                assert_memory_equal(type, c->type, c->n);
                assert_memory_equal(addr, c->addr, 8 * c->n);
                if (sized)
                        assert_memory_equal(size, c->size, 4 * c->n);
        }
        int mode = copy[TMN_BLK_HDR];
        assert_int_equal(mode, st.mode);
        if (mode >= TMN_PREDICT_DELTA)
                assert_int_equal(st.stored[TMN_S_DHIT], 0);
        free(copy);
        free(type);
        free(addr);
        free(size);
        tmn_ws_free(w);
        tmn_ws_free(r);
        return mode;
}

static struct cols C;

static void test_chase(void **unused)
{
        (void)unused;
        for (int sized = 0; sized < 2; sized++) {
                walk(&C, 12000, 1, 0);
                assert_int_equal(round_trip(&C, sized, 3), TMN_PREDICT_DELTA);
                walk(&C, 12000, 1, 1);
                assert_int_equal(round_trip(&C, sized, 1), TMN_PREDICT_DELTA + 1);
                walk(&C, 12000, 0, 0); /* the tables hit: hit codes */
                assert_int_equal(round_trip(&C, sized, 3), TMN_PREDICT);
                walk(&C, 7, 1, 1);
                round_trip(&C, sized, 3);
        }
}

/* The block p (len bytes) decoded by both decoders: the same outcome, and
 * records only when the outcome is 0. Returns it. */
static int both(const uint8_t *p, size_t len, uint32_t n)
{
        static uint8_t t[2][1 << 14];
        static uint64_t a[2][1 << 14];
        static uint32_t z[2][1 << 14];
        int rc[2];
        for (int ref = 0; ref < 2; ref++) {
                struct tmn_ws *w = tmn_ws_new();
                assert_non_null(w);
                tmn_ws_reference(w, ref);
                struct tm_err err = {0};
                rc[ref] = tmn_block_decode(w, p, len, 8, 1, 0, t[ref], a[ref], z[ref], &err);
                assert_true(rc[ref] == 0 || (rc[ref] == -EIO && err.msg[0]));
                tmn_ws_free(w);
        }
        assert_int_equal(rc[0], rc[1]);
        if (rc[0] == 0) {
                assert_memory_equal(t[0], t[1], n);
                assert_memory_equal(a[0], a[1], 8 * (size_t)n);
                assert_memory_equal(z[0], z[1], 4 * (size_t)n);
        }
        return rc[0];
}

static void test_damage(void **unused)
{
        (void)unused;
        walk(&C, 3000, 1, 0);
        struct tmn_ws *w = tmn_ws_new();
        assert_non_null(w);
        struct tmn_cols in = {C.type, C.addr, C.size};
        const uint8_t *out;
        size_t len;
        assert_int_equal(tmn_block_encode(w, &in, C.n, 1, 3, &out, &len, NULL), 0);
        assert_int_equal(out[TMN_BLK_HDR], TMN_PREDICT_DELTA);
        uint8_t *p = malloc(len);
        assert_non_null(p);
        memcpy(p, out, len);
        for (size_t i = 0; i < len; i++) { /* any byte: the checksum or more */
                p[i] ^= 0x20;
                assert_int_equal(both(p, len, (uint32_t)C.n), -EIO);
                p[i] ^= 0x20;
        }
        assert_int_equal(both(p, len, (uint32_t)C.n), 0);

        /* the raw streams, changed and stored again with a good checksum */
        uint8_t *st[TMN_NSTREAMS];
        size_t sl[TMN_NSTREAMS], at = TMN_BLK_HDR + 1 + TMN_NSTREAMS * TMN_STREAM_ENTRY;
        for (int s = 0; s < TMN_NSTREAMS; s++) {
                const uint8_t *e = p + TMN_BLK_HDR + 1 + s * TMN_STREAM_ENTRY;
                uint32_t k = tmn_get32(e + 1);
                sl[s] = tmn_get32(e + 5);
                st[s] = malloc(sl[s] + 16);
                assert_non_null(st[s]);
                if (e[0] == 0)
                        memcpy(st[s], p + at, k);
                else
                        assert_int_equal(ZSTD_decompress(st[s], sl[s], p + at, k), sl[s]);
                at += k;
        }
        assert_int_equal(sl[TMN_S_DHIT], 0);
        size_t cap = TMN_BLK_HDR + 1 + TMN_NSTREAMS * TMN_STREAM_ENTRY + 16;
        for (int s = 0; s < TMN_NSTREAMS; s++)
                cap += sl[s];
        uint8_t *q = malloc(cap);
        assert_non_null(q);
        uint32_t n = (uint32_t)C.n;
        assert_int_equal(
            both(q, tmn_test_assemble(q, n, TMN_PREDICT_DELTA, TMN_NSTREAMS, st, sl), n), 0);
        assert_int_equal(
            both(q, tmn_test_assemble(q, n, TMN_PREDICT_DELTA + 2, TMN_NSTREAMS, st, sl), n), -EIO);
        /* no fetch first, or deltas read as misses: either way, both alike */
        both(q, tmn_test_assemble(q, n, TMN_PREDICT_DELTA + 1, TMN_NSTREAMS, st, sl), n);
        both(q, tmn_test_assemble(q, n, TMN_PREDICT, TMN_NSTREAMS, st, sl), n);
        sl[TMN_S_DHIT] = 1; /* a hit code where there are none */
        st[TMN_S_DHIT][0] = 0;
        assert_int_equal(
            both(q, tmn_test_assemble(q, n, TMN_PREDICT_DELTA, TMN_NSTREAMS, st, sl), n), -EIO);
        sl[TMN_S_DHIT] = 0;
        sl[TMN_S_DMISS]--; /* a delta cut */
        assert_int_equal(
            both(q, tmn_test_assemble(q, n, TMN_PREDICT_DELTA, TMN_NSTREAMS, st, sl), n), -EIO);
        sl[TMN_S_DMISS] += 2; /* a byte left after the last */
        st[TMN_S_DMISS][sl[TMN_S_DMISS] - 1] = 0;
        assert_int_equal(
            both(q, tmn_test_assemble(q, n, TMN_PREDICT_DELTA, TMN_NSTREAMS, st, sl), n), -EIO);
        sl[TMN_S_DMISS]--;
        assert_int_equal(
            both(q, tmn_test_assemble(q, n, TMN_PREDICT_DELTA, TMN_NSTREAMS, st, sl), n), 0);
        for (int s = 0; s < TMN_NSTREAMS; s++)
                free(st[s]);
        free(q);
        free(p);
        tmn_ws_free(w);
}

static void test_storage(void **unused)
{
        (void)unused;
        walk(&C, 5000, 1, 0);
        struct tmn_ws *w = tmn_ws_new();
        assert_non_null(w);
        struct tmn_cols in = {C.type, C.addr, C.size};
        const uint8_t *out;
        size_t len;
        struct tmn_bstats st;
        assert_int_equal(tmn_block_encode(w, &in, C.n, 1, 3, &out, &len, &st), 0);
        assert_int_equal(out[TMN_BLK_HDR], TMN_PREDICT_DELTA);
        size_t flen = TMN_FILE_HDR + len + TMN_END_LEN;
        uint8_t *f = malloc(flen);
        assert_non_null(f);
        tmn_file_head_put(f, 8, 1, 13);
        memcpy(f + TMN_FILE_HDR, out, len);
        tmn_end_put(f + TMN_FILE_HDR + len, C.n);
        struct tmn_storage *s = calloc(1, sizeof *s);
        assert_non_null(s);
        struct tmn_test_mem m = {f, flen};
        struct tm_err err = {0};
        assert_int_equal(tmn_storage_scan(tmn_test_mem_read, &m, flen, s, &err), 0);
        assert_int_equal(s->blocks, 1);
        assert_int_equal(s->coded[TMN_PREDICT], 1);
        assert_int_equal(s->stored[TMN_S_DHIT], 0);
        assert_int_equal(s->stored[TMN_S_DMISS], st.stored[TMN_S_DMISS]);
        assert_int_equal(s->raw[TMN_S_DHIT], 0);
        free(s);
        free(f);
        tmn_ws_free(w);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_chase),
            cmocka_unit_test(test_damage),
            cmocka_unit_test(test_storage),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
