/* unit_render: the table-driven din formatter against snprintf, and the
 * stats accumulator on hand-worked sequences. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "views/render.h"
#include "views/stats.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

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
        for (unsigned i = 0; i < sizeof edge / sizeof edge[0]; i++)
                for (unsigned t = 0; t < TM_NTYPES; t++)
                        check_line(t, edge[i]);
        /* every digit count, at both ends of its range */
        for (unsigned d = 1; d <= 16; d++) {
                uint64_t lo = d == 1 ? 0 : 1ull << (4 * (d - 1));
                uint64_t hi = d == 16 ? UINT64_MAX : (1ull << (4 * d)) - 1;
                check_line(d % 8, lo);
                check_line(d % 8, hi);
                assert_int_equal(tm_render_hex_digits(lo), d);
                assert_int_equal(tm_render_hex_digits(hi), d);
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

static void add(struct tm_stats_acc *a, unsigned type, uint64_t addr)
{
        struct tm_ref r = {.addr = addr, .type = type};
        tm_stats_add(a, &r, 1);
}

/* A worked sequence: jump runs, clusters and data offsets by hand. */
static void test_stats(void **state)
{
        (void)state;
        struct tm_stats_acc a;
        tm_stats_init(&a);
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
        tm_stats_finish(&a);
        const struct tm_stats *s = &a.s;
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
        assert_int_equal(s->data_off[TM_STATS_OFF_MAX + 8], 1);
        assert_int_equal(s->data_off[TM_STATS_OFF_MAX - 4], 1);
        assert_int_equal(s->data_off_range[TM_OFF_16BIT], 1);
        uint64_t runs = 0;
        for (unsigned i = 0; i <= TM_STATS_RUN_MAX; i++)
                runs += s->jump_runs[i] + s->clus_runs[i];
        assert_int_equal(runs, 6);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_edges),
            cmocka_unit_test(test_random),
            cmocka_unit_test(test_bounds),
            cmocka_unit_test(test_stats),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
