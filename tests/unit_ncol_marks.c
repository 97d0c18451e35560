/* The marks behind schema 2's move-to-front ranks and the allocator
 * model's orders (codecs/native/ncol_marks.h), against a plain array of
 * marks, as the encoder and decoder use them (each use of a value clears
 * its old time's mark and sets one at a new time):
 *   walks      values drawn from a few or from many (ranks small and
 *              large), at n of 64, 4160 (groups and a partial one) and
 *              2^16: after (a time's rank), nth (a rank's time) and
 *              older (the mark before a time) at every step's time and
 *              at random ranks; a reset after it leaves no mark behind;
 *   sparse     marks far apart, so that nth and older cross empty words
 *              and empty groups; all marks cleared, then new ones;
 *   heap       the allocator model's ranks (ncol_heap.h, on these marks)
 *              against two plain lists, the live addresses by allocation
 *              and the freed by free, over random histories of a few and
 *              of many addresses: every rank and every rank's address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "codecs/native/ncol_heap.h"
#include "codecs/native/ncol_marks.h"

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* The reference: mark[t] for t in 1..now. */
struct ref {
        uint8_t *mark;
        uint32_t now, marks;
};

static uint32_t ref_after(const struct ref *r, uint32_t t)
{
        uint32_t n = 0;
        for (uint32_t u = t + 1; u <= r->now; u++)
                n += r->mark[u];
        return n;
}

static uint32_t ref_nth(const struct ref *r, uint32_t x)
{
        for (uint32_t u = r->now; u; u--)
                if (r->mark[u] && x-- == 0)
                        return u;
        return 0;
}

static uint32_t ref_older(const struct ref *r, uint32_t t)
{
        while (--t)
                if (r->mark[t])
                        return t;
        return 0;
}

/* k against r: the counts, the rank of t, and checks at up to 8 ranks. */
static void check(const struct ncol_marks *k, const struct ref *r, uint32_t t, uint64_t *seed)
{
        assert_int_equal(k->marks, r->marks);
        assert_int_equal(k->now, r->now);
        if (t && r->mark[t]) {
                assert_int_equal(ncol_marks_after(k, t), ref_after(r, t));
        }
        if (t) {
                assert_int_equal(ncol_marks_older(k, t), ref_older(r, t));
        }
        for (int q = 0; q < 8 && r->marks; q++) {
                uint32_t x =
                    q < 2 ? (uint32_t)q * (r->marks - 1) : (uint32_t)(rnd(seed) % r->marks);
                if (x < 64 || q < 4 || rnd(seed) % 4 == 0) {
                        assert_int_equal(ncol_marks_nth(k, x), ref_nth(r, x));
                }
        }
}

/* n uses of values drawn from vals distinct ones, checked every step
 * (every 61st at large n: the reference is quadratic). */
static void walk(uint32_t n, uint32_t vals, uint64_t seed)
{
        struct ncol_marks k = {0};
        assert_int_equal(ncol_marks_alloc(&k, n), 0);
        ncol_marks_reset(&k, n);
        struct ref r = {calloc(n + 1, 1), 0, 0};
        uint32_t *last = calloc(vals, sizeof *last); /* each value's time; 0: unused */
        assert_non_null(r.mark);
        assert_non_null(last);
        for (uint32_t i = 0; i < n; i++) {
                uint32_t v = (uint32_t)(rnd(&seed) % vals);
                if (rnd(&seed) % 2)
                        v %= 1 + vals / 16; /* recent ones more often */
                uint32_t t = ++k.now;
                r.now = t;
                if (last[v]) {
                        assert_int_equal(ncol_marks_after(&k, last[v]), ref_after(&r, last[v]));
                        ncol_marks_flip(&k, last[v], -1);
                        r.mark[last[v]] = 0;
                        r.marks--;
                }
                ncol_marks_flip(&k, t, 1);
                r.mark[t] = 1;
                r.marks++;
                last[v] = t;
                if (n <= 4160 || i % 61 == 0)
                        check(&k, &r, (uint32_t)(rnd(&seed) % t) + 1, &seed);
        }
        check(&k, &r, n, &seed);
        ncol_marks_reset(&k, n);
        assert_int_equal(k.marks, 0);
        assert_int_equal(k.now, 0);
        for (uint32_t w = 0; w <= n / 64; w++)
                assert_int_equal(k.bits[w] | k.wcnt[w], 0);
        free(last);
        free(r.mark);
        ncol_marks_free(&k);
}

static void test_walks(void **state)
{
        (void)state;
        static const uint32_t n[] = {64, 4160, 65536};
        static const uint32_t vals[] = {1, 3, 40, 700, 20000, 1u << 20};
        for (size_t i = 0; i < sizeof n / sizeof *n; i++)
                for (size_t j = 0; j < sizeof vals / sizeof *vals; j++)
                        walk(n[i], vals[j], 0x9E3779B97F4A7C15ull + i * 7 + j);
}

static void test_sparse(void **state)
{
        (void)state;
        const uint32_t n = 65536;
        struct ncol_marks k = {0};
        assert_int_equal(ncol_marks_alloc(&k, n), 0);
        ncol_marks_reset(&k, n);
        struct ref r = {calloc(n + 1, 1), 0, 0};
        assert_non_null(r.mark);
        uint64_t seed = 12345;
        for (int round = 0; round < 3; round++) {
                /* marks at a few times far apart: 1, around 5000, 40000, the end */
                static const uint32_t at[] = {1, 63, 64, 4095, 4096, 5000, 40000, 65535, 65536};
                k.now = r.now = n;
                for (size_t i = 0; i < sizeof at / sizeof *at; i++)
                        if (!r.mark[at[i]] && (round == 0 || rnd(&seed) % 2)) {
                                ncol_marks_flip(&k, at[i], 1);
                                r.mark[at[i]] = 1;
                                r.marks++;
                        }
                for (uint32_t t = 1; t <= n; t += 1 + (uint32_t)(rnd(&seed) % 997))
                        check(&k, &r, t, &seed);
                for (size_t i = 0; i < sizeof at / sizeof *at; i++)
                        check(&k, &r, at[i], &seed);
                for (size_t i = 0; i < sizeof at / sizeof *at; i++) /* all cleared */
                        if (r.mark[at[i]]) {
                                ncol_marks_flip(&k, at[i], -1);
                                r.mark[at[i]] = 0;
                                r.marks--;
                        }
                check(&k, &r, n, &seed);
                assert_int_equal(ncol_marks_older(&k, n), 0);
        }
        free(r.mark);
        ncol_marks_free(&k);
}

/* v off the list l[0..*n) (the newest last), if there. */
static void list_drop(uint64_t *l, size_t *n, uint64_t v)
{
        for (size_t i = 0; i < *n; i++)
                if (l[i] == v) {
                        memmove(l + i, l + i + 1, (*n - i - 1) * sizeof *l);
                        --*n;
                        return;
                }
}

static void heap_history(size_t n, uint64_t addrs, uint64_t seed)
{
        struct ncol_heap *h = ncol_heap_new();
        assert_non_null(h);
        assert_int_equal(ncol_heap_reset(h, n, n), 0);
        uint64_t *live = calloc(n, 8), *gone = calloc(n, 8);
        size_t nl = 0, ng = 0;
        assert_non_null(live);
        assert_non_null(gone);
        for (size_t i = 0; i < n; i++) {
                uint64_t v = 16 + 32 * (rnd(&seed) % addrs);
                int ev = rnd(&seed) % 2 ? NCOL_HE_ALLOC : NCOL_HE_FREE;
                if (ev == NCOL_HE_FREE && nl && rnd(&seed) % 4) /* mostly a live one */
                        v = live[nl - 1 - rnd(&seed) % (nl < 8 ? nl : 8)];
                const uint64_t *l = ev == NCOL_HE_ALLOC ? gone : live;
                size_t ln = ev == NCOL_HE_ALLOC ? ng : nl;
                int64_t want = -1;
                for (size_t j = 0; j < ln; j++)
                        if (l[ln - 1 - j] == v)
                                want = (int64_t)j;
                assert_int_equal(ncol_heap_rank(h, ev, v), want);
                for (size_t r = 0; r <= ln; r += 1 + (ln > 64 ? rnd(&seed) % 16 : 0)) {
                        uint64_t got = 0;
                        if (r == ln) {
                                assert_int_equal(ncol_heap_at(h, ev, r, &got), -1);
                        } else {
                                assert_int_equal(ncol_heap_at(h, ev, r, &got), 0);
                                assert_int_equal(got, l[ln - 1 - r]);
                        }
                }
                ncol_heap_see(h, ev, 24, v, NCOL_H_BUMP);
                list_drop(live, &nl, v);
                list_drop(gone, &ng, v);
                if (ev == NCOL_HE_ALLOC)
                        live[nl++] = v;
                else
                        gone[ng++] = v;
        }
        free(live);
        free(gone);
        ncol_heap_free(h);
}

static void test_heap(void **state)
{
        (void)state;
        heap_history(300, 5, 7);
        heap_history(5000, 300, 8);
        heap_history(20000, 100000, 9);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_walks),
            cmocka_unit_test(test_sparse),
            cmocka_unit_test(test_heap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
