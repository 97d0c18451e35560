/* unit_drop: the daemon's drop-behind rule (fs/drop.c, drop_advance)
 * against what it promises: a sequential reader's past beyond keep is
 * dropped in order, in pieces, never before where its run began and never
 * within keep of the furthest read; reads out of order by less than
 * DROP_JUMP continue a run, jumps start a new one; keep 0 drops nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fs/drop.h"

#define MiB (1ull << 20)

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* What one run dropped so far: the ranges must follow one another from
 * start. */
struct seen {
        uint64_t start, end; /* [start, end) dropped */
        uint64_t furthest;   /* end of the furthest read */
        unsigned ranges;
};

/* One read through drop_advance, checked against s. */
static void read_one(struct drop_run *r, struct seen *s, uint64_t keep, uint64_t off, uint64_t len)
{
        uint64_t from = 0, n = 0;
        const int hit = drop_advance(r, keep, off, len, &from, &n);
        if (off + len > s->furthest)
                s->furthest = off + len;
        if (hit) {
                assert_true(keep > 0);
                assert_true(n > 0);
                assert_int_equal(from, s->end); /* in order, no gap, no overlap */
                assert_true(from + n <= s->furthest - keep);
                assert_true(n >= keep / 8); /* in pieces, not page by page */
                s->end = from + n;
                s->ranges++;
        }
        /* what is kept behind the reader stays bounded */
        if (keep)
                assert_true(s->furthest - s->end <= keep + keep / 8);
}

/* A reader of 1 MiB requests, some pairs swapped (as the kernel's
 * readahead sends them), over 40 MiB with keep 4 MiB. */
static void test_sequential(void **state)
{
        (void)state;
        const uint64_t keep = 4 * MiB, start = 3 * MiB + 4096;
        struct drop_run r = {0};
        struct seen s = {start, start, 0, 0};
        uint64_t seed = 7;
        for (uint64_t i = 0; i < 40; i += 2) {
                const uint64_t a = start + i * MiB, b = a + MiB;
                if (rnd(&seed) & 1) {
                        read_one(&r, &s, keep, b, MiB);
                        read_one(&r, &s, keep, a, MiB);
                } else {
                        read_one(&r, &s, keep, a, MiB);
                        read_one(&r, &s, keep, b, MiB);
                }
        }
        assert_true(s.ranges >= 8);
        assert_true(s.furthest - s.end >= keep); /* the last keep stays */
        /* the end of file: a read of 0 bytes changes nothing */
        const uint64_t end = s.end;
        read_one(&r, &s, keep, s.furthest, 0);
        assert_int_equal(s.end, end);
}

/* Requests of random sizes and small random reorderings: the checks of
 * read_one hold throughout, for several keeps. */
static void test_random_sizes(void **state)
{
        (void)state;
        const uint64_t keeps[] = {1 * MiB, 3 * MiB + 12345, 64 * MiB};
        for (unsigned k = 0; k < 3; k++) {
                struct drop_run r = {0};
                struct seen s = {0, 0, 0, 0};
                uint64_t seed = 99 + k, pos = 0;
                while (pos < 20 * keeps[k]) {
                        const uint64_t len = 1 + rnd(&seed) % (2 * MiB);
                        const uint64_t back = rnd(&seed) % 4 == 0 ? rnd(&seed) % MiB : 0;
                        read_one(&r, &s, keeps[k], pos > back ? pos - back : 0, len);
                        pos += len;
                }
                assert_true(s.ranges > 0);
        }
}

/* A jump forward or back by more than DROP_JUMP starts a new run: what
 * lies before it is never dropped. */
static void test_jumps(void **state)
{
        (void)state;
        const uint64_t keep = 2 * MiB;
        struct drop_run r = {0};
        uint64_t from, n;
        for (uint64_t o = 0; o < 10 * MiB; o += MiB)
                (void)drop_advance(&r, keep, o, MiB, &from, &n);
        const uint64_t far = 10 * MiB + DROP_JUMP + 1;
        assert_int_equal(drop_advance(&r, keep, far, MiB, &from, &n), 0);
        int hits = 0;
        for (uint64_t o = far + MiB; o < far + 10 * MiB; o += MiB)
                if (drop_advance(&r, keep, o, MiB, &from, &n)) {
                        assert_true(from >= far);
                        hits++;
                }
        assert_true(hits > 0);
        /* back to the start: a new run from 0 again */
        assert_int_equal(drop_advance(&r, keep, 0, MiB, &from, &n), 0);
        assert_int_equal(r.done, 0);
        /* a step back within DROP_JUMP continues the run */
        for (uint64_t o = MiB; o < 8 * MiB; o += MiB)
                (void)drop_advance(&r, keep, o, MiB, &from, &n);
        const uint64_t done = r.done;
        (void)drop_advance(&r, keep, 2 * MiB, MiB, &from, &n);
        assert_int_equal(r.done, done);
        assert_int_equal(r.next, 8 * MiB);
}

static void test_keep_zero(void **state)
{
        (void)state;
        struct drop_run r = {0};
        uint64_t from, n;
        for (uint64_t o = 0; o < 4096 * MiB; o += MiB)
                assert_int_equal(drop_advance(&r, 0, o, MiB, &from, &n), 0);
}

/* The keep used: at least DROP_KEEP_MIN and four readaheads; 0 stays 0. */
static void test_keep(void **state)
{
        (void)state;
        assert_int_equal(drop_keep(0, 512 << 10), 0);
        assert_int_equal(drop_keep(1 * MiB, 512 << 10), DROP_KEEP_MIN);
        assert_int_equal(drop_keep(1024 * MiB, 512 << 10), 1024 * MiB);
        assert_int_equal(drop_keep(DROP_KEEP_MIN, 8 * MiB), 32 * MiB);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sequential), cmocka_unit_test(test_random_sizes),
            cmocka_unit_test(test_jumps),      cmocka_unit_test(test_keep_zero),
            cmocka_unit_test(test_keep),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
