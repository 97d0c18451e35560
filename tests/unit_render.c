/* unit_render: the din formatter and the batch renderer (each
 * of its implementations) against snprintf, and the stats accumulator on
 * hand-worked sequences. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/synth_refs.h"
#include "codecs/address/addr_stats.h"
#include "codecs/address/render.h"
#include "tests/support/tiers.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static const uint64_t edge[] = {0,
                                1,
                                0xf,
                                0x10,
                                0xff,
                                0x100,
                                0xfff,
                                0x1000,
                                0x430c38,
                                0x7fff0098,
                                0xffffffffull,
                                0x100000000ull,
                                0x8000000000000000ull,
                                UINT64_MAX};
#define NEDGE (sizeof edge / sizeof edge[0])

static void check_line(unsigned type, uint64_t addr)
{
        char want[64], got[TM_DIN_LINE_MAX + 8];
        int n = snprintf(want, sizeof want, "%u %" PRIx64 "\n", type, addr);
        memset(got, 'X', sizeof got);
        unsigned len = tm_render_din(got, type, addr);
        assert_int_equal(len, n);
        assert_int_equal(tm_render_din_len(addr), n);
        assert_memory_equal(got, want, (size_t)n);
}

static void test_edges(void **state)
{
        (void)state;
        for (unsigned i = 0; i < NEDGE; i++)
                for (unsigned t = 0; t < TM_NTYPES; t++)
                        check_line(t, edge[i]);
        /* every digit count, at both ends of its range */
        for (unsigned d = 1; d <= 16; d++) {
                uint64_t lo = d == 1 ? 0 : 1ull << (4 * (d - 1));
                uint64_t hi = d == 16 ? UINT64_MAX : (1ull << (4 * d)) - 1;
                check_line(d % 8, lo);
                check_line(d % 8, hi);
                assert_int_equal(tm_hex_digits(lo), d);
                assert_int_equal(tm_hex_digits(hi), d);
        }
}

static void test_random(void **state)
{
        (void)state;
        for (int i = 0; i < 200000; i++) {
                uint64_t a = next_rand();
                a >>= next_rand() % 64; /* all magnitudes */
                check_line((unsigned)(next_rand() % TM_NTYPES), a);
        }
}

/* The line written in a buffer of exactly TM_DIN_LINE_MAX bytes stays in. */
static void test_bounds(void **state)
{
        (void)state;
        char buf[TM_DIN_LINE_MAX + 1];
        buf[TM_DIN_LINE_MAX] = 'Z';
        assert_int_equal(tm_render_din(buf, 7, UINT64_MAX), TM_DIN_LINE_MAX);
        assert_int_equal(buf[TM_DIN_LINE_MAX], 'Z');
        assert_memory_equal(buf, "7 ffffffffffffffff\n", TM_DIN_LINE_MAX);
}

/* ---- tm_render_din_batch ---- */

#define GUARD 64 /* bytes after the documented room that must stay as they were */

/* An address with exactly d hex digits (1..16). */
static uint64_t rand_digits(unsigned d)
{
        uint64_t a = next_rand() >> (64 - 4 * d);
        return d == 1 ? a : a | 1ull << (4 * d - 1);
}

/* Render refs[0..n) with the implementation in force into a buffer of
 * exactly the documented room plus a guard, at offset off (dst need not be
 * aligned), and compare with snprintf; the same for tm_render_din_cols. The refs are copied to an
 * array of exactly n, so reading past them is an ASan error. */
static void check_batch_now(const struct tm_ref *refs, size_t n, size_t off)
{
        size_t room = n * TM_DIN_LINE_MAX + TM_RENDER_SLACK;
        char *want = malloc(n * TM_DIN_LINE_MAX + 1);
        char *buf = malloc(off + room + GUARD);
        struct tm_ref *r = malloc(n ? n * sizeof *r : 1);
        assert_non_null(want);
        assert_non_null(buf);
        assert_non_null(r);
        memcpy(r, refs, n * sizeof *r);
        size_t wlen = 0;
        for (size_t i = 0; i < n; i++)
                wlen += (size_t)snprintf(want + wlen, TM_DIN_LINE_MAX + 1, "%u %" PRIx64 "\n",
                                         refs[i].type, refs[i].addr);
        memset(buf, 'G', off + room + GUARD);
        size_t len = tm_render_din_batch(buf + off, r, n);
        assert_int_equal(len, wlen);
        assert_memory_equal(buf + off, want, wlen);
        for (size_t i = 0; i < off; i++)
                assert_int_equal(buf[i], 'G');
        for (size_t i = off + room; i < off + room + GUARD; i++)
                assert_int_equal(buf[i], 'G');
        /* tm_render_din_cols of the same refs as two columns of exactly n */
        uint8_t *ty = malloc(n ? n : 1);
        uint64_t *ad = malloc(n ? n * sizeof *ad : 1);
        assert_non_null(ty);
        assert_non_null(ad);
        for (size_t i = 0; i < n; i++) {
                ty[i] = (uint8_t)refs[i].type;
                ad[i] = refs[i].addr;
        }
        memset(buf, 'G', off + room + GUARD);
        assert_int_equal(tm_render_din_cols(buf + off, ty, ad, n), wlen);
        assert_memory_equal(buf + off, want, wlen);
        for (size_t i = 0; i < off; i++)
                assert_int_equal(buf[i], 'G');
        for (size_t i = off + room; i < off + room + GUARD; i++)
                assert_int_equal(buf[i], 'G');
        free(ad);
        free(ty);
        free(r);
        free(buf);
        free(want);
}

/* The same with the dispatched implementation, the AVX2 tier (where the
 * CPU has AVX-512 too: TM_NO_AVX512) and the portable one. */
static void check_batch(const struct tm_ref *refs, size_t n)
{
        size_t off = (size_t)(next_rand() % 64);
        check_batch_now(refs, n, off);
        setenv("TM_NO_AVX512", "1", 1);
        tm_render_force_scalar(0);
        check_batch_now(refs, n, off);
        unsetenv("TM_NO_AVX512");
        tm_render_force_scalar(1);
        check_batch_now(refs, n, off);
        tm_render_force_scalar(0);
}

/* Which implementation runs, and that the test hook switches it. */
static void test_batch_impl(void **state)
{
        (void)state;
        const char *impl =
            tm_test_tiers(tm_render_force_scalar, tm_render_din_batch_impl, "tm_render_din_batch");
        /* TM_RENDER_SCALAR=1 is honoured when the choice is made */
        const char *old = getenv("TM_RENDER_SCALAR");
        char *saved = old ? strdup(old) : NULL;
        setenv("TM_RENDER_SCALAR", "1", 1);
        tm_render_force_scalar(0);
        assert_string_equal(tm_render_din_batch_impl(), "scalar");
        if (saved)
                setenv("TM_RENDER_SCALAR", saved, 1);
        else
                unsetenv("TM_RENDER_SCALAR");
        free(saved);
        tm_render_force_scalar(0);
        assert_string_equal(tm_render_din_batch_impl(), impl);
}

/* Every digit count and type, each batch all of one digit count (so a
 * vector path sees whole groups of it) or all counts mixed. */
static void test_batch_digits(void **state)
{
        (void)state;
        struct tm_ref r[300];
        for (unsigned d = 0; d <= 16; d++) {
                for (int rep = 0; rep < 20; rep++) {
                        for (size_t i = 0; i < 300; i++) {
                                unsigned dd = d ? d : 1 + (unsigned)(next_rand() % 16);
                                r[i] = (struct tm_ref){.addr = rand_digits(dd),
                                                       .type = (uint32_t)(next_rand() % 10)};
                        }
                        check_batch(r, 300);
                }
        }
        for (uint32_t t = 0; t < 10; t++) { /* each type through every line slot */
                for (size_t i = 0; i < 64; i++)
                        r[i] = (struct tm_ref){.addr = rand_digits(1 + i % 16), .type = t};
                check_batch(r, 64);
        }
}

/* Addresses below and above 2^32 in every arrangement within groups of
 * eight, and at random densities. */
static void test_batch_mixed(void **state)
{
        (void)state;
        struct tm_ref r[256];
        for (unsigned pat = 0; pat < 256; pat++) {
                for (size_t i = 0; i < 36; i++) {
                        int wide = (pat >> (i % 8)) & 1;
                        r[i] = (struct tm_ref){.addr = rand_digits(wide ? 9 + i % 8 : 1 + i % 8),
                                               .type = (uint32_t)(next_rand() % TM_NTYPES)};
                }
                check_batch(r, 32 + pat % 5);
        }
        static const unsigned per_mille[] = {0, 1, 10, 100, 500, 900, 1000};
        for (unsigned k = 0; k < sizeof per_mille / sizeof per_mille[0]; k++) {
                for (int rep = 0; rep < 20; rep++) {
                        for (size_t i = 0; i < 256; i++) {
                                int wide = next_rand() % 1000 < per_mille[k];
                                unsigned d = 1 + (unsigned)(next_rand() % 8) + (wide ? 8 : 0);
                                r[i] = (struct tm_ref){.addr = rand_digits(d),
                                                       .type = (uint32_t)(next_rand() % 3)};
                        }
                        check_batch(r, 256);
                }
        }
}

/* Every n from 0 to 300, so every remainder after whole vector groups. */
static void test_batch_lengths(void **state)
{
        (void)state;
        struct tm_ref r[300];
        for (size_t i = 0; i < 300; i++) {
                uint64_t a = next_rand() >> (next_rand() % 64);
                r[i] = (struct tm_ref){.addr = a, .type = (uint32_t)(next_rand() % TM_NTYPES)};
        }
        for (size_t n = 0; n <= 300; n++)
                check_batch(r, n);
        /* the longest lines only: the room must hold them with the slack */
        for (size_t i = 0; i < 300; i++)
                r[i] = (struct tm_ref){.addr = UINT64_MAX - i, .type = 9};
        for (size_t n = 0; n <= 40; n++)
                check_batch(r, n);
        check_batch(r, 300);
}

/* The edge addresses in every type, at every position of a group. */
static void test_batch_edges(void **state)
{
        (void)state;
        struct tm_ref r[NEDGE * 10 + 8];
        for (size_t shift = 0; shift < 8; shift++) {
                size_t n = 0;
                for (size_t i = 0; i < shift; i++)
                        r[n++] = (struct tm_ref){.addr = 0x1000 + i, .type = 2};
                for (uint32_t t = 0; t < 10; t++)
                        for (size_t i = 0; i < NEDGE; i++)
                                r[n++] = (struct tm_ref){.addr = edge[(i + t) % NEDGE], .type = t};
                check_batch(r, n);
        }
        /* each edge address alone and in a group of its own */
        for (size_t i = 0; i < NEDGE; i++) {
                for (size_t k = 0; k < 8; k++)
                        r[k] = (struct tm_ref){.addr = edge[i], .type = (uint32_t)k};
                check_batch(r, 1);
                check_batch(r, 8);
        }
}

/* A program-shaped sequence: runs of fetches broken by jumps, with stack
 * and heap accesses between, once with 32-bit and once with 64-bit
 * (x86-64 Linux) addresses. */
static void test_batch_program(void **state)
{
        (void)state;
        enum { N = 20000 };
        struct tm_ref *r = malloc(N * sizeof *r);
        assert_non_null(r);
        for (int x86 = 0; x86 <= 1; x86++) {
                tm_synth_refs(r, N, x86, next_rand);
                check_batch(r, N);
        }
        free(r);
}

static void add(struct tm_addr_acc *a, unsigned type, uint64_t addr)
{
        struct tm_ref r = {.addr = addr, .type = type};
        tm_addr_stats_add(a, &r, 1);
}

/* A worked sequence: jump runs, clusters and data offsets by hand. */
static void test_stats(void **state)
{
        (void)state;
        struct tm_addr_acc a;
        tm_addr_stats_init(&a);
        add(&a, 2, 0x1000); /* jump run A starts */
        add(&a, 2, 0x1004);
        add(&a, 2, 0x1008);  /* A: 3 fetches */
        add(&a, 0, 0x8000);  /* data; cluster starts */
        add(&a, 2, 0x100c);  /* sequential: cluster 1 */
        add(&a, 2, 0x1010);  /* cluster 2 */
        add(&a, 1, 0x8008);  /* data, offset +8; cluster of 2 closed */
        add(&a, 2, 0x2000);  /* jump: cluster of 0 closed, run B starts */
        add(&a, 1, 0x8004);  /* data, offset -4; B of 1 closed */
        add(&a, 0, 0x10000); /* offset 0x7ffc: 16-bit range; cluster of 0 */
        add(&a, 3, 0x0);     /* misc closes cluster of 0 */
        tm_addr_stats_finish(&a);
        const struct tm_addr_stats *s = &a.s;
        assert_int_equal(s->refs, 11);
        assert_int_equal(s->count[2], 6);
        assert_int_equal(s->count[0], 2);
        assert_int_equal(s->count[1], 2);
        assert_int_equal(s->count[3], 1);
        assert_int_equal(s->addr_min[2], 0x1000);
        assert_int_equal(s->addr_max[2], 0x2000);
        assert_int_equal(s->addr_min[4], UINT64_MAX);
        assert_int_equal(s->jump_runs[3], 1);
        assert_int_equal(s->jump_fetches[3], 3);
        assert_int_equal(s->jump_runs[1], 1);
        assert_int_equal(s->clus_runs[2], 1);
        assert_int_equal(s->clus_fetches[2], 2);
        assert_int_equal(s->clus_runs[0], 3);
        assert_int_equal(s->data_off[TM_ADDR_OFF_MAX + 8], 1);
        assert_int_equal(s->data_off[TM_ADDR_OFF_MAX - 4], 1);
        assert_int_equal(s->data_off_range[TM_ADDR_OFF_16BIT], 1);
        uint64_t runs = 0;
        for (unsigned i = 0; i <= TM_ADDR_RUN_MAX; i++)
                runs += s->jump_runs[i] + s->clus_runs[i];
        assert_int_equal(runs, 6);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_edges),         cmocka_unit_test(test_random),
            cmocka_unit_test(test_bounds),        cmocka_unit_test(test_batch_impl),
            cmocka_unit_test(test_batch_digits),  cmocka_unit_test(test_batch_mixed),
            cmocka_unit_test(test_batch_lengths), cmocka_unit_test(test_batch_edges),
            cmocka_unit_test(test_batch_program), cmocka_unit_test(test_stats),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
