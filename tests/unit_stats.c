/* The heap statistics (codecs/heap/heap_stats.h) against an independent count: a
 * plain model here, one state per address in an array, no hash table and
 * no sort. Random traces full of what does not add up (frees of addresses
 * never seen or freed twice, reallocs of dead addresses, allocations at
 * live ones) give the same figures in memory and through the external
 * sort (a table of a few addresses, buffers of a few records: many runs,
 * merges of merges); with no temporary directory the live figures are
 * reported not known, never wrong. Then a trace of 3 million live objects
 * written with the HATF encoder and opened as any archive: stats.json and
 * the text equal the model's count. Also codecs/common/xsort.h on its own. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "codecs/common/xsort.h"
#include "codecs/heap/hatf.h"
#include "codecs/heap/heap.h"
#include "codecs/heap/heap_stats.h"
#include "tmpdir_test.h"
#include "views/stats.h"
#include "views/view.h"

static uint64_t rng_s = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
        rng_s ^= rng_s << 13;
        rng_s ^= rng_s >> 7;
        rng_s ^= rng_s << 17;
        return rng_s;
}

/* ---- the model: addresses are base + 16 id, id < cap ---- */

struct model {
        uint64_t base, cap;
        uint64_t *size;
        uint8_t *state; /* 0 never allocated, 1 live, 2 freed */
        uint64_t allocs, reallocs, frees, total, live_n, live_b, max_n, max_b;
        uint64_t free_unknown, double_frees, realloc_unknown, alloc_live;
};

static void model_init(struct model *m, uint64_t base, uint64_t cap)
{
        memset(m, 0, sizeof *m);
        m->base = base;
        m->cap = cap;
        m->size = calloc(cap, sizeof *m->size);
        m->state = calloc(cap, 1);
        assert_non_null(m->size);
        assert_non_null(m->state);
}

static void model_free(struct model *m)
{
        free(m->size);
        free(m->state);
}

/* The id of addr, or -1 for an address outside (never allocated). */
static int64_t model_id(const struct model *m, uint64_t addr)
{
        if (addr < m->base || (addr - m->base) % 16 || (addr - m->base) / 16 >= m->cap)
                return -1;
        return (int64_t)((addr - m->base) / 16);
}

/* Releases addr; 1 if it was live. *twice: it was freed before. */
static int model_release(struct model *m, uint64_t addr, int *twice)
{
        int64_t id = model_id(m, addr);
        *twice = id >= 0 && m->state[id] == 2;
        if (id < 0 || m->state[id] != 1)
                return 0;
        m->state[id] = 2;
        m->live_n--;
        m->live_b -= m->size[id];
        return 1;
}

static void model_alloc(struct model *m, uint64_t addr, uint64_t size)
{
        int64_t id = model_id(m, addr);
        assert_true(id >= 0); /* the generators allocate only inside */
        if (m->state[id] == 1) {
                m->alloc_live++;
                m->live_n--;
                m->live_b -= m->size[id];
        }
        m->state[id] = 1;
        m->size[id] = size;
        m->live_n++;
        m->live_b += size;
        m->total += size;
        if (m->live_n > m->max_n)
                m->max_n = m->live_n;
        if (m->live_b > m->max_b)
                m->max_b = m->live_b;
}

static void model_event(struct model *m, const struct tm_heap_ev *e)
{
        int twice;
        if (e->kind == TM_HK_ALLOC) {
                m->allocs++;
                if (e->addr)
                        model_alloc(m, e->addr, e->size);
        } else if (e->kind == TM_HK_FREE) {
                m->frees++;
                if (e->addr && !model_release(m, e->addr, &twice)) {
                        m->free_unknown++;
                        m->double_frees += twice;
                }
        } else if (tm_heap_is_realloc(e->kind)) {
                m->reallocs++;
                if (e->addr && !model_release(m, e->addr, &twice))
                        m->realloc_unknown++;
                if (e->kind != TM_HK_REALLOC_FREE && e->new_addr)
                        model_alloc(m, e->new_addr, e->size);
        }
}

static void expect_model(const struct tm_heap_stats *st, const struct model *m)
{
        assert_int_equal(st->inexact, 0);
        assert_int_equal(st->allocs, m->allocs);
        assert_int_equal(st->reallocs, m->reallocs);
        assert_int_equal(st->frees, m->frees);
        assert_int_equal(st->total_bytes, m->total);
        assert_int_equal(st->max_live_n, m->max_n);
        assert_int_equal(st->max_live_bytes, m->max_b);
        assert_int_equal(st->live_n, m->live_n);
        assert_int_equal(st->live_bytes, m->live_b);
        assert_int_equal(st->free_unknown, m->free_unknown);
        assert_int_equal(st->double_frees, m->double_frees);
        assert_int_equal(st->realloc_unknown, m->realloc_unknown);
        assert_int_equal(st->alloc_live, m->alloc_live);
}

/* ---- random traces, everything that does not add up ---- */

#define POOL 97
#define BASE 0x7f0000001000ull

static void random_event(struct tm_heap_ev *e)
{
        static const unsigned kinds[] = {
            TM_HK_ALLOC,         TM_HK_ALLOC,        TM_HK_ALLOC,        TM_HK_FREE,
            TM_HK_FREE,          TM_HK_FREE,         TM_HK_REALLOC,      TM_HK_REALLOC_ALLOC_FREE,
            TM_HK_REALLOC_ALLOC, TM_HK_REALLOC_FREE, TM_HK_CREATE_THREAD};
        memset(e, 0, sizeof *e);
        e->kind = kinds[rng() % (sizeof kinds / sizeof *kinds)];
        uint64_t r = rng();
        e->size = r % 8 == 0 ? rng() >> 24 : r % 5000; /* now and then one near 2^40 */
        e->addr = r % 41 == 0 ? 0 : BASE + 16 * (rng() % POOL);
        e->new_addr = r % 37 == 0 ? 0 : BASE + 16 * (rng() % POOL);
        if (e->kind == TM_HK_REALLOC && r % 3)
                e->new_addr = e->addr ? e->addr : e->new_addr; /* in place */
        if (r % 53 == 1 && e->kind != TM_HK_ALLOC)
                e->addr = 0x4000 + 16 * (rng() % 8); /* never allocated */
        e->thread = r % 3;
}

static struct tm_heap_stats_acc *run(const struct tm_heap_ev *ev, size_t n, size_t addr_max,
                                 size_t sort_mem)
{
        struct tm_heap_stats_acc *a = tm_heap_stats_start_limits(&tm_schema_heap, addr_max, sort_mem);
        assert_non_null(a);
        for (size_t i = 0; i < n;) { /* batches of 1 to 300 records */
                struct tm_rec r[300];
                size_t k = 1 + rng() % 300;
                if (k > n - i)
                        k = n - i;
                for (size_t j = 0; j < k; j++)
                        tm_heap_ev_to_rec(&ev[i + j], &r[j]);
                tm_heap_stats_add(a, r, k);
                i += k;
        }
        return a;
}

static void test_random(void **state)
{
        (void)state;
        for (unsigned round = 0; round < 40; round++) {
                size_t n = 1 + rng() % 6000;
                struct tm_heap_ev *ev = calloc(n, sizeof *ev);
                assert_non_null(ev);
                struct model m;
                model_init(&m, BASE, POOL);
                for (size_t i = 0; i < n; i++) {
                        random_event(&ev[i]);
                        model_event(&m, &ev[i]);
                }
                /* in memory; a table of 1 to 64 addresses and buffers of a
                 * few records (runs of 2 to 20, merged 128 at a time) */
                struct tm_heap_stats_acc *mem = run(ev, n, TM_HEAP_STATS_ADDR_MAX, TM_HEAP_STATS_SORT_MEM);
                struct tm_heap_stats_acc *ext = run(ev, n, 1 + rng() % 64, 48 + rng() % 480);
                const struct tm_heap_stats *a = tm_heap_stats_get(mem), *b = tm_heap_stats_get(ext);
                expect_model(a, &m);
                expect_model(b, &m);
                assert_int_equal(a->spilled, 0);
                assert_memory_equal(a->size_hist, b->size_hist, sizeof a->size_hist);
                assert_memory_equal(a->thread_n, b->thread_n, sizeof a->thread_n);
                tm_heap_stats_free(mem);
                tm_heap_stats_free(ext);
                model_free(&m);
                free(ev);
        }
}

/* ---- reports of what does not add up, and of figures not known ---- */

/* stats.json of a trace whose heap family block is a's (no records of
 * the generic part), and the family's part of the stats view. */
static size_t json(struct tm_heap_stats_acc *a, char *buf, size_t cap)
{
        static struct tm_stats st;
        memset(&st, 0, sizeof st);
        memcpy(st.fam, tm_heap_stats_get(a), sizeof(struct tm_heap_stats));
        struct tm_family_info in = {.name = "t.hatf", .codec = "hatf", .container = "plain"};
        return tm_stats_json(&st, &tm_schema_heap, &in, NULL, buf, cap);
}

/* The row name of stats.json js (the first of that name): its object's
 * text after {"value": (docs/stats-json.md). */
static const char *row(const char *js, const char *name)
{
        char k[80];
        snprintf(k, sizeof k, "\"%s\":{\"value\":", name);
        const char *p = strstr(js, k);
        if (!p)
                fail_msg("row %s not in stats.json", name);
        return p + strlen(k);
}

#define ROW_IS(js, name, text) assert_int_equal(strncmp(row(js, name), text, strlen(text)), 0)

static size_t text(struct tm_heap_stats_acc *a, char *buf, size_t cap)
{
        struct tm_family_info in = {.name = "t.hatf", .codec = "hatf", .container = "plain"};
        return tm_stats_family_text(&tm_family_heap, tm_heap_stats_get(a), &tm_schema_heap, &in,
                                    buf, cap);
}

static struct tm_heap_stats_acc *unreconciled(size_t addr_max)
{
        /* a threaded log out of order: frees before their allocs */
        static const struct tm_heap_ev ev[] = {
            {.kind = TM_HK_ALLOC, .size = 10, .addr = 0x1000},
            {.kind = TM_HK_FREE, .addr = 0x2000}, /* not live */
            {.kind = TM_HK_ALLOC, .size = 20, .addr = 0x2000},
            {.kind = TM_HK_FREE, .addr = 0x1000},
            {.kind = TM_HK_FREE, .addr = 0x1000}, /* twice */
            {.kind = TM_HK_FREE, .addr = 0},      /* free(NULL): fine */
            {.kind = TM_HK_REALLOC_ALLOC_FREE, .size = 5, .addr = 0x3000, .new_addr = 0x4000},
            {.kind = TM_HK_ALLOC, .size = 7, .addr = 0x2000}, /* live: 20 counted freed */
        };
        struct tm_heap_stats_acc *a = tm_heap_stats_start_limits(&tm_schema_heap, addr_max, 64);
        for (size_t i = 0; i < sizeof ev / sizeof *ev; i++) {
                struct tm_rec r;
                tm_heap_ev_to_rec(&ev[i], &r);
                tm_heap_stats_add(a, &r, 1);
        }
        return a;
}

static void test_unreconciled(void **state)
{
        (void)state;
        for (size_t addr_max = 1; addr_max <= TM_HEAP_STATS_ADDR_MAX; addr_max *= 1024) {
                struct tm_heap_stats_acc *a = unreconciled(addr_max);
                const struct tm_heap_stats *st = tm_heap_stats_get(a);
                assert_int_equal(st->free_unknown, 2);
                assert_int_equal(st->double_frees, 1);
                assert_int_equal(st->realloc_unknown, 1);
                assert_int_equal(st->alloc_live, 1);
                assert_int_equal(st->live_n, 2);
                assert_int_equal(st->live_bytes, 12);
                assert_int_equal(st->max_live_n, 2);
                assert_int_equal(st->max_live_bytes, 30);
                char b[8192];
                json(a, b, sizeof b);
                assert_null(strstr(b, "\"inexact\":"));
                assert_null(strstr(b, "\"exact\":false"));
                ROW_IS(b, "max_objects", "2,\"unit\":\"objects\",\"exact\":true}");
                ROW_IS(b, "frees_not_live", "2,\"unit\":\"records\",\"exact\":true}");
                ROW_IS(b, "double_frees", "1,");
                ROW_IS(b, "reallocs_not_live", "1,");
                ROW_IS(b, "allocs_at_live", "1,");
                text(a, b, sizeof b);
                assert_non_null(strstr(b, "  frees of addresses not live: 2\n"
                                          "  of them double frees: 1"));
                assert_non_null(strstr(b, "  reallocs of addresses not live: 1\n"));
                assert_non_null(strstr(b, "  allocations at live addresses: 1"));
                assert_non_null(strstr(b, "order written"));
                tm_heap_stats_free(a);
        }
}

static void test_not_known(void **state)
{
        (void)state;
        char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
        setenv("TMPDIR", "/nonexistent/tracemount-test", 1);
        struct tm_heap_stats_acc *a = unreconciled(1);
        if (old)
                setenv("TMPDIR", old, 1);
        else
                unsetenv("TMPDIR");
        free(old);
        const struct tm_heap_stats *st = tm_heap_stats_get(a);
        assert_int_equal(st->inexact, ENOENT);
        assert_int_equal(st->allocs, 3); /* counted as the records pass: known */
        char b[8192];
        json(a, b, sizeof b);
        ROW_IS(b, "inexact", "\"past ");
        ROW_IS(b, "max_objects", "null,\"unit\":\"objects\",\"exact\":false}");
        ROW_IS(b, "max_bytes", "null,\"unit\":\"bytes\",\"exact\":false}");
        ROW_IS(b, "live_objects", "null,");
        ROW_IS(b, "live_bytes", "null,");
        ROW_IS(b, "allocs", "3,\"unit\":\"records\",\"exact\":true}");
        text(a, b, sizeof b);
        assert_non_null(strstr(b, "  max bytes          not known\n"));
        assert_non_null(strstr(b, "  live at end        not known\n"));
        assert_non_null(strstr(b, "  not exact: past "));
        assert_non_null(strstr(b, "No such file or directory"));
        tm_heap_stats_free(a);
}

static void test_overflow(void **state)
{
        (void)state;
        struct tm_heap_stats_acc *a = tm_heap_stats_start_limits(
            &tm_schema_heap, TM_HEAP_STATS_ADDR_MAX, TM_HEAP_STATS_SORT_MEM);
        for (unsigned i = 0; i < 3; i++) {
                struct tm_heap_ev e = {.kind = TM_HK_ALLOC, .size = 1ull << 63, .addr = 16 + i};
                struct tm_rec r;
                tm_heap_ev_to_rec(&e, &r);
                tm_heap_stats_add(a, &r, 1);
        }
        assert_int_equal(tm_heap_stats_get(a)->inexact, EOVERFLOW);
        char b[8192];
        json(a, b, sizeof b);
        ROW_IS(b, "total_bytes", "null,\"unit\":\"bytes\",\"exact\":false}");
        ROW_IS(b, "inexact", "\"the sizes requested add up past 2^64\"");
        ROW_IS(b, "max_objects", "null,");
        ROW_IS(b, "avg_size", "null,\"unit\":\"bytes\",\"exact\":false}");
        text(a, b, sizeof b);
        assert_non_null(strstr(b, "  total bytes        not known\n"));
        assert_non_null(strstr(b, "  not exact: the sizes requested add up past 2^64;"));
        tm_heap_stats_free(a);
}

/* ---- 3 million live objects, through the HATF encoder and a trace ---- */

#define BIG_N 3000000u
#define BIG_BASE 0x10000000ull

/* Event i of the big trace (i < big_count()), the same every call. */
static int big_event(uint64_t i, struct tm_heap_ev *e)
{
        memset(e, 0, sizeof *e);
        e->thread = 1;
        if (i < BIG_N + BIG_N / 64) { /* allocations, every 65th a free of one 50 back */
                uint64_t blk = i / 65, k = i % 65;
                if (k == 64) {
                        e->kind = TM_HK_FREE;
                        e->addr = BIG_BASE + 16 * (blk * 64 + 13);
                        if (blk % 5000 == 7)
                                e->addr = 0x900 + blk; /* never allocated */
                        if (blk % 7000 == 9)
                                e->addr = BIG_BASE + 16 * (blk * 64 - 51); /* freed already */
                        return 1;
                }
                uint64_t id = blk * 64 + k;
                e->kind = TM_HK_ALLOC;
                e->addr = BIG_BASE + 16 * id;
                e->size = 1 + (id * 7919) % 1000;
                if (id % 100000 == 3) { /* moves an early object (before the switch) */
                        e->kind = TM_HK_REALLOC_ALLOC_FREE;
                        e->new_addr = e->addr;
                        e->addr = BIG_BASE + 16 * (id / 100);
                }
                return 1;
        }
        i -= BIG_N + BIG_N / 64;
        if (i < 200000) { /* frees of early objects and of recent ones */
                e->kind = TM_HK_FREE;
                e->addr = BIG_BASE + 16 * (i % 2 ? i : BIG_N - 1 - i);
                return 1;
        }
        return 0;
}

struct filesink {
        FILE *f;
};

static int sink_file(void *arg, const void *p, size_t n)
{
        struct filesink *s = arg;
        return fwrite(p, 1, n, s->f) == n ? 0 : -EIO;
}

struct vt_buf {
        char *p;
        size_t len;
};

static struct vt_buf read_view(struct tm_trace *t, const char *view)
{
        struct tm_err err = {0};
        struct tm_vfile *f;
        struct vt_buf b = {0};
        uint64_t size;
        if (tm_trace_view_size(t, view, &size, &err) != 0 || tm_vfile_open(t, view, &f, &err) != 0)
                fail_msg("%s: %s", view, err.msg);
        b.p = malloc(size + 1);
        assert_non_null(b.p);
        ssize_t r;
        while (b.len < size && (r = tm_vfile_pread(f, b.p + b.len, size - b.len, b.len, &err)) > 0)
                b.len += (size_t)r;
        tm_vfile_close(f);
        assert_int_equal(b.len, size);
        b.p[b.len] = 0;
        return b;
}

/* The value of row key in js (the first of that name). */
static uint64_t js_u64(const char *js, const char *key)
{
        return strtoull(row(js, key), NULL, 10);
}

static void test_three_million(void **state)
{
        (void)state;
        char path[400];
        snprintf(path, sizeof path, "%s/big.hatf", tmpdir);
        struct model m;
        model_init(&m, BIG_BASE, BIG_N);
        struct filesink s = {fopen(path, "wb")};
        assert_non_null(s.f);
        const struct tm_rcodec *C = &tm_rcodec_hatf;
        struct tm_renc *e;
        struct tm_err err = {0};
        assert_int_equal(C->enc_open("naive", sink_file, &s, &e, &err), 0);
        struct tm_heap_ev ev;
        uint64_t n = 0;
        for (; big_event(n, &ev); n++) {
                struct tm_rec r;
                tm_heap_ev_to_rec(&ev, &r);
                model_event(&m, &ev);
                assert_int_equal(C->enc_put(e, &r, 1, n, &err), 0);
        }
        assert_int_equal(C->enc_finish(e, &err), 0);
        assert_int_equal(fclose(s.f), 0);
        assert_true(m.max_n >= BIG_N - 50000); /* what the test is about */

        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t;
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        struct vt_buf js = read_view(t, "stats.json"), tx = read_view(t, "stats");
        assert_null(strstr(js.p, "\"exact\":false"));
        assert_int_equal(js_u64(js.p, "records"), n);
        assert_int_equal(js_u64(js.p, "allocs"), m.allocs);
        assert_int_equal(js_u64(js.p, "reallocs"), m.reallocs);
        assert_int_equal(js_u64(js.p, "frees"), m.frees);
        assert_int_equal(js_u64(js.p, "total_bytes"), m.total);
        assert_int_equal(js_u64(js.p, "max_objects"), m.max_n);
        assert_int_equal(js_u64(js.p, "max_bytes"), m.max_b);
        assert_int_equal(js_u64(js.p, "live_objects"), m.live_n);
        assert_int_equal(js_u64(js.p, "live_bytes"), m.live_b);
        assert_int_equal(js_u64(js.p, "frees_not_live"), m.free_unknown);
        assert_int_equal(js_u64(js.p, "double_frees"), m.double_frees);
        assert_true(m.free_unknown > m.double_frees && m.double_frees > 0);
        char line[160];
        snprintf(line, sizeof line, "  max bytes          %" PRIu64 "\n", m.max_b);
        assert_non_null(strstr(tx.p, line));
        snprintf(line, sizeof line, "  live at end        %" PRIu64 " objects, %" PRIu64 " bytes\n",
                 m.live_n, m.live_b);
        assert_non_null(strstr(tx.p, line));
        free(js.p);
        free(tx.p);
        tm_trace_close(t);
        model_free(&m);
        remove(path);
}

/* ---- the external sort alone ---- */

static int cmp3(const void *a, const void *b)
{
        const uint64_t *x = a, *y = b;
        for (int i = 0; i < 2; i++)
                if (x[i] != y[i])
                        return x[i] < y[i] ? -1 : 1;
        return 0;
}

static void test_xsort(void **state)
{
        (void)state;
        static const size_t ns[] = {0, 1, 17, 1000, 50000};
        for (size_t c = 0; c < sizeof ns / sizeof *ns; c++)
                for (unsigned fanin = 2; fanin <= 128; fanin *= 8) {
                        size_t n = ns[c];
                        uint64_t *v = malloc((n + 1) * 24), *got = malloc((n + 1) * 24);
                        struct tm_xsort *x;
                        /* few distinct first words: the second decides */
                        assert_int_equal(tm_xsort_new(3, 2, 24 * 100, fanin, &x), 0);
                        for (size_t i = 0; i < n; i++) {
                                v[3 * i] = rng() % 50;
                                v[3 * i + 1] = c == 4 ? i % 3 : rng(); /* sorted runs too */
                                v[3 * i + 2] = i;
                                assert_int_equal(tm_xsort_put(x, v + 3 * i), 0);
                        }
                        assert_int_equal(tm_xsort_count(x), n);
                        assert_int_equal(tm_xsort_finish(x), 0);
                        size_t k = 0;
                        int rc;
                        while ((rc = tm_xsort_next(x, got + 3 * k)) == 1)
                                k++;
                        assert_int_equal(rc, 0);
                        assert_int_equal(k, n);
                        assert_true(tm_xsort_peak(x) <= 24 * 100 + 128 * TM_XSORT_READ_BUF);
                        qsort(v, n, 24, cmp3);
                        for (size_t i = 0; i < n; i++) /* keys in order, every record once */
                                assert_int_equal(cmp3(v + 3 * i, got + 3 * i), 0);
                        uint64_t sum = 0, want = n ? n * (n - 1) / 2 : 0;
                        for (size_t i = 0; i < n; i++)
                                sum += got[3 * i + 2];
                        assert_int_equal(sum, want);
                        tm_xsort_free(x);
                        free(v);
                        free(got);
                }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_xsort),        cmocka_unit_test(test_random),
            cmocka_unit_test(test_unreconciled), cmocka_unit_test(test_not_known),
            cmocka_unit_test(test_overflow),     cmocka_unit_test(test_three_million),
        };
        return cmocka_run_group_tests(tests, tmp_setup, tmp_teardown);
}
