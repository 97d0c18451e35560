/* The budget of open view files (views/hmem.h, tm_handle_memory_set):
 * however many files are open and read, the bytes they hold between reads
 * never exceed the budget, the files parked to keep it read on with the
 * same bytes, readahead segments come out of it, and closing every file
 * gives all of it back. Deterministic: one thread reads, the accounting
 * is checked after every read. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "views/hmem.h"
#include "views/readahead.h"
#include "views/view.h"

#define NFILES 24
#define CHUNK (64u << 10)

/* An example archive of the source tree, its index in memory only. */
static struct tm_trace *open_example(const char *name)
{
        char path[4096];
        snprintf(path, sizeof path, "%s/examples/%s", TM_SOURCE_DIR, name);
        struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = 8192};
        struct tm_trace *t = NULL;
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        return t;
}

/* The whole of view, read through one file with the budget out of the way. */
static uint8_t *read_all(struct tm_trace *t, const char *view, uint64_t *size)
{
        struct tm_err err = {0};
        assert_int_equal(tm_trace_view_size(t, view, size, &err), 0);
        uint8_t *b = malloc(*size + 1);
        assert_non_null(b);
        struct tm_vfile *f;
        assert_int_equal(tm_vfile_open(t, view, &f, &err), 0);
        for (uint64_t off = 0; off < *size;) {
                ssize_t k = tm_vfile_pread(f, b + off, CHUNK, off, &err);
                assert_true(k > 0);
                off += (uint64_t)k;
        }
        tm_vfile_close(f);
        return b;
}

/* NFILES files of view read round-robin, each from its own place, CHUNK
 * bytes a read, compared with ref; after every read the files hold no
 * more than budget bytes. Returns the files parked meanwhile. */
static uint64_t read_round_robin(struct tm_trace *t, const char *view, const uint8_t *ref,
                                 uint64_t size, uint64_t budget)
{
        struct tm_vfile *f[NFILES];
        uint64_t pos[NFILES];
        struct tm_err err = {0};
        uint8_t *buf = malloc(CHUNK);
        assert_non_null(buf);
        uint64_t parks = tm_hmem_parks();
        tm_handle_memory_set(budget);
        for (unsigned i = 0; i < NFILES; i++) {
                assert_int_equal(tm_vfile_open(t, view, &f[i], &err), 0);
                assert_true(tm_handle_memory_in_use() <= budget);
                pos[i] = size / NFILES * i;
        }
        for (unsigned round = 0; round < 6; round++)
                for (unsigned i = 0; i < NFILES; i++) {
                        ssize_t k = tm_vfile_pread(f[i], buf, CHUNK, pos[i], &err);
                        assert_true(k > 0);
                        assert_memory_equal(buf, ref + pos[i], (size_t)k);
                        pos[i] = pos[i] + (uint64_t)k < size ? pos[i] + (uint64_t)k : 0;
                        assert_true(tm_handle_memory_in_use() <= budget);
                }
        for (unsigned i = 0; i < NFILES; i++)
                tm_vfile_close(f[i]);
        assert_int_equal(tm_handle_memory_in_use(), 0);
        free(buf);
        return tm_hmem_parks() - parks;
}

/* What one file holds after a read: the unit of the budgets below. */
static uint64_t one_file(struct tm_trace *t, const char *view)
{
        struct tm_err err = {0};
        struct tm_vfile *f;
        uint8_t *buf = malloc(CHUNK);
        assert_non_null(buf);
        tm_handle_memory_set(1ull << 40);
        assert_int_equal(tm_vfile_open(t, view, &f, &err), 0);
        assert_true(tm_vfile_pread(f, buf, CHUNK, 0, &err) > 0);
        uint64_t n = tm_handle_memory_in_use();
        tm_vfile_close(f);
        assert_int_equal(tm_handle_memory_in_use(), 0);
        free(buf);
        return n;
}

static void budget_case(const char *archive, const char *view)
{
        struct tm_trace *t = open_example(archive);
        uint64_t size;
        tm_handle_memory_set(1ull << 40);
        uint8_t *ref = read_all(t, view, &size);
        uint64_t one = one_file(t, view);
        assert_true(one > 0);
        /* room for three files of NFILES: the others are parked */
        assert_true(read_round_robin(t, view, ref, size, one * 3 + one / 2) > 0);
        /* no room for one: each read gives back all it held */
        assert_true(read_round_robin(t, view, ref, size, 1) > 0);
        /* room for all (twice what the first file held each): none parked */
        assert_int_equal(read_round_robin(t, view, ref, size, one * 2 * NFILES), 0);
        free(ref);
        tm_trace_close(t);
        tm_handle_memory_set(0);
}

/* zstd: a frame decoded whole (some MiB) per file */
static void test_budget_zstd(void **state)
{
        (void)state;
        budget_case("gzip.din.zst", "ascii");
        budget_case("gzip.din.zst", "binary");
}

/* gzip: an inflate window per file; a record trace (lackey) */
static void test_budget_gzip(void **state)
{
        (void)state;
        budget_case("true.lackey.gz", "ascii");
        budget_case("true.lackey.gz", "raw");
}

/* Readahead segments are counted in the budget, and a file that finds no
 * room for them reads through its own cursor, with the same bytes. */
static void test_readahead_in_budget(void **state)
{
        (void)state;
        setenv("TM_READ_THREADS", "1", 1);
        struct tm_trace *t = open_example("gzip.din.zst");
        uint64_t size;
        tm_handle_memory_set(1ull << 40);
        uint8_t *ref = read_all(t, "ascii", &size);
        uint8_t *buf = malloc(1u << 20);
        assert_non_null(buf);
        struct tm_err err = {0};
        struct tm_vfile *f;

        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        ssize_t k = tm_vfile_pread(f, buf, 1u << 20, 0, &err); /* a first read at 0 reads ahead */
        assert_int_equal(k, 1u << 20);
        assert_memory_equal(buf, ref, (size_t)k);
        assert_true(tm_ra_mem_in_use() > 0);
        assert_true(tm_handle_memory_in_use() >= tm_ra_mem_in_use());
        tm_vfile_close(f);
        assert_int_equal(tm_ra_mem_in_use(), 0);
        assert_int_equal(tm_handle_memory_in_use(), 0);

        tm_handle_memory_set(1); /* no room for a segment */
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        for (uint64_t off = 0; off < size; off += (uint64_t)k) {
                k = tm_vfile_pread(f, buf, 1u << 20, off, &err);
                assert_true(k > 0);
                assert_memory_equal(buf, ref + off, (size_t)k);
                assert_int_equal(tm_ra_mem_in_use(), 0);
                assert_true(tm_handle_memory_in_use() <= 1);
        }
        tm_vfile_close(f);
        free(buf);
        free(ref);
        tm_trace_close(t);
        tm_handle_memory_set(0);
        setenv("TM_READ_THREADS", "0", 1);
}

/* Threads reading files of one trace at once, each its own, with room
 * for two files: they park one another's files (only those not in a
 * read), every read gives the reference bytes, and the count never
 * passes the budget (it is checked under the pool's lock at every
 * change, so it holds at any moment, not only between reads). */
struct reader {
        struct tm_trace *t;
        const char *view;
        const uint8_t *ref;
        uint64_t size, budget, seed;
        int bad;
};

static void *reader_main(void *arg)
{
        struct reader *a = arg;
        struct tm_err err = {0};
        struct tm_vfile *f[4];
        uint8_t *buf = malloc(CHUNK);
        for (unsigned i = 0; i < 4; i++)
                if (tm_vfile_open(a->t, a->view, &f[i], &err) != 0)
                        a->bad++;
        for (unsigned i = 0; i < 200 && !a->bad; i++) {
                a->seed = a->seed * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t off = (a->seed >> 20) % a->size;
                ssize_t k = tm_vfile_pread(f[i % 4], buf, CHUNK, off, &err);
                if (k <= 0 || memcmp(buf, a->ref + off, (size_t)k) != 0 ||
                    tm_handle_memory_in_use() > a->budget)
                        a->bad++;
        }
        for (unsigned i = 0; i < 4; i++)
                tm_vfile_close(f[i]);
        free(buf);
        return NULL;
}

static void test_budget_threads(void **state)
{
        (void)state;
        struct tm_trace *t = open_example("gzip.din.zst");
        uint64_t size;
        tm_handle_memory_set(1ull << 40);
        uint8_t *ref = read_all(t, "ascii", &size);
        uint64_t one = one_file(t, "ascii");
        uint64_t parks = tm_hmem_parks();
        tm_handle_memory_set(one * 2);
        struct reader r[4];
        pthread_t th[4];
        for (unsigned i = 0; i < 4; i++) {
                r[i] = (struct reader){t, "ascii", ref, size, one * 2, i + 1, 0};
                assert_int_equal(pthread_create(&th[i], NULL, reader_main, &r[i]), 0);
        }
        for (unsigned i = 0; i < 4; i++) {
                pthread_join(th[i], NULL);
                assert_int_equal(r[i].bad, 0);
        }
        assert_true(tm_hmem_parks() > parks);
        assert_int_equal(tm_handle_memory_in_use(), 0);
        free(ref);
        tm_trace_close(t);
        tm_handle_memory_set(0);
}

/* A trace closed and opened again gives the same bytes in every view
 * (what a daemon's bound on open traces does to it), and says what it
 * holds. */
static void test_reopen_same(void **state)
{
        (void)state;
        static const char *const archives[] = {"sort.hatf.zst", "true.lackey.gz",
                                               "heapwork.mtf.zst"};
        for (unsigned a = 0; a < sizeof archives / sizeof *archives; a++) {
                struct tm_trace *t = open_example(archives[a]);
                assert_true(tm_trace_memory(t) > 0);
                const char *const *v = tm_trace_views(t);
                unsigned n = 0;
                while (v[n])
                        n++;
                uint8_t **first = calloc(n, sizeof *first);
                uint64_t *len = calloc(n, sizeof *len);
                assert_non_null(first);
                assert_non_null(len);
                for (unsigned i = 0; i < n; i++)
                        first[i] = read_all(t, v[i], &len[i]);
                tm_trace_close(t);
                t = open_example(archives[a]);
                v = tm_trace_views(t);
                for (unsigned i = 0; i < n; i++) {
                        assert_non_null(v[i]);
                        uint64_t l;
                        uint8_t *again = read_all(t, v[i], &l);
                        assert_int_equal(l, len[i]);
                        assert_memory_equal(again, first[i], (size_t)l);
                        free(again);
                        free(first[i]);
                }
                tm_trace_close(t);
                free(first);
                free(len);
        }
}

int main(void)
{
        /* no readahead but where a test asks for it: its workers read
         * when they will */
        setenv("TM_READ_THREADS", "0", 1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_budget_zstd),         cmocka_unit_test(test_budget_gzip),
            cmocka_unit_test(test_readahead_in_budget), cmocka_unit_test(test_budget_threads),
            cmocka_unit_test(test_reopen_same),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
