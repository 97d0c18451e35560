/* unit_inode: the daemon's node id table (fs/inode.c) against a plain
 * array model: ids per path, lookup counts, forgetting, ids never reused,
 * the tables growing past their first size, and threads at once. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "fs/inode.h"

static void path_of(unsigned i, char *p, size_t n)
{
        snprintf(p, n, "/dir%u/trace%u.pdt2.zst/streams/read", i % 7, i);
}

static void test_root(void **state)
{
        (void)state;
        char p[PATH_MAX];
        assert_int_equal(ino_init(), 0);
        assert_int_equal(ino_path(INO_ROOT, p, sizeof p), 0);
        assert_string_equal(p, "/");
        assert_int_equal(ino_ref("/"), INO_ROOT);
        ino_forget(INO_ROOT, 100); /* ignored */
        assert_int_equal(ino_path(INO_ROOT, p, sizeof p), 0);
        assert_int_equal(ino_path(INO_ROOT, p, 1), -ENAMETOOLONG);
        assert_int_equal(ino_path(12345, p, sizeof p), -ENOENT);
        assert_int_equal(ino_count(), 0);
        ino_fini();
}

/* Many paths, each looked up 1-3 times, forgotten in pieces. */
static void test_model(void **state)
{
        (void)state;
        enum { N = 5000 }; /* more than the tables' first 1024 buckets */
        static uint64_t id[N], refs[N];
        char p[PATH_MAX], q[PATH_MAX];
        assert_int_equal(ino_init(), 0);
        for (unsigned i = 0; i < N; i++) {
                path_of(i, p, sizeof p);
                refs[i] = 1 + i % 3;
                for (uint64_t k = 0; k < refs[i]; k++) {
                        uint64_t x = ino_ref(p);
                        assert_true(x > INO_ROOT);
                        if (k == 0)
                                id[i] = x;
                        assert_int_equal(x, id[i]); /* same path, same id */
                }
                for (unsigned j = 0; j < i; j += 997)
                        assert_int_not_equal(id[j], id[i]);
        }
        assert_int_equal(ino_count(), N);
        for (unsigned i = 0; i < N; i++) {
                path_of(i, p, sizeof p);
                assert_int_equal(ino_path(id[i], q, sizeof q), 0);
                assert_string_equal(q, p);
        }
        /* forget all but one reference of every other path, then the rest */
        for (unsigned i = 0; i < N; i += 2) {
                ino_forget(id[i], refs[i] - 1);
                assert_int_equal(ino_path(id[i], q, sizeof q), 0);
                ino_forget(id[i], 1);
                assert_int_equal(ino_path(id[i], q, sizeof q), -ENOENT);
        }
        assert_int_equal(ino_count(), N / 2);
        /* a forgotten path looked up again gets a new id */
        path_of(0, p, sizeof p);
        uint64_t again = ino_ref(p);
        assert_true(again > id[N - 1]);
        assert_int_equal(ino_path(id[0], q, sizeof q), -ENOENT);
        /* forgetting more than was counted drops it; unknown ids: nothing */
        ino_forget(again, 99);
        ino_forget(again, 1);
        ino_forget(999999999, 1);
        for (unsigned i = 1; i < N; i += 2) {
                path_of(i, p, sizeof p);
                assert_int_equal(ino_path(id[i], q, sizeof q), 0);
                assert_string_equal(q, p);
        }
        assert_int_equal(ino_count(), N / 2);
        ino_fini();
}

static void *refs_thread(void *arg)
{
        unsigned base = (unsigned)(uintptr_t)arg;
        char p[PATH_MAX];
        for (int round = 0; round < 20; round++)
                for (unsigned i = 0; i < 300; i++) {
                        path_of(base + i % 150, p, sizeof p); /* each path twice a round */
                        uint64_t x = ino_ref(p);
                        assert_true(x > INO_ROOT);
                        ino_forget(x, 1);
                }
        return NULL;
}

/* Threads looking up and forgetting overlapping paths end with none left. */
static void test_threads(void **state)
{
        (void)state;
        assert_int_equal(ino_init(), 0);
        pthread_t th[4];
        for (unsigned k = 0; k < 4; k++)
                assert_int_equal(
                    pthread_create(&th[k], NULL, refs_thread, (void *)(uintptr_t)(k * 100)), 0);
        for (unsigned k = 0; k < 4; k++)
                pthread_join(th[k], NULL);
        assert_int_equal(ino_count(), 0);
        ino_fini();
}

/* Versions: another version of a path gets a new id, the old one keeps
 * its path and attributes until forgotten, survives the tables growing,
 * and ino_under lists both. */
static void test_versions(void **state)
{
        (void)state;
        char p[PATH_MAX];
        assert_int_equal(ino_init(), 0);
        uint64_t a = ino_ref_ver("/t.zst/ascii", 7);
        assert_int_equal(ino_ref_ver("/t.zst/ascii", 7), a); /* same version: same id */
        struct stat st = {.st_size = 1234, .st_dev = 3, .st_ino = 9};
        ino_set_object(a, &st);
        uint64_t b = ino_ref_ver("/t.zst/ascii", 8);
        assert_true(b != a && b != 0);
        assert_int_equal(ino_same_version(a, 7), 1);
        assert_int_equal(ino_same_version(a, 8), 0);
        assert_int_equal(ino_same_version(b, 8), 1);
        assert_int_equal(ino_path(a, p, sizeof p), 0); /* retired, still named */
        assert_string_equal(p, "/t.zst/ascii");
        uint64_t told = 0;
        assert_int_equal(ino_told_size(a, &told), 1);
        assert_int_equal(told, 1234);
        assert_int_equal(ino_told_size(b, &told), 0);
        uint64_t c = ino_ref_ver("/t.zst", 8), other = ino_ref("/t.zstd");
        uint64_t ids[8];
        assert_int_equal(ino_under("/t.zst", ids, 8), 3); /* a, b, c; not /t.zstd */
        for (size_t i = 0; i < 3; i++)
                assert_true(ids[i] == a || ids[i] == b || ids[i] == c);
        assert_int_equal(ino_under("/", ids, 1), 5); /* the root too; one copied */
        /* the tables grow past their first size: the retired id stays */
        for (unsigned i = 0; i < 5000; i++) {
                snprintf(p, sizeof p, "/g%u", i);
                assert_true(ino_ref(p) != 0);
        }
        assert_int_equal(ino_path(a, p, sizeof p), 0);
        assert_int_equal(ino_same_version(a, 7), 1);
        ino_forget(a, 2); /* its two lookups: gone */
        assert_int_equal(ino_path(a, p, sizeof p), -ENOENT);
        assert_int_equal(ino_ref_ver("/t.zst/ascii", 8), b); /* the path's id untouched */
        assert_int_equal(ino_path(b, p, sizeof p), 0);
        (void)other;
        ino_fini();
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_root),
            cmocka_unit_test(test_model),
            cmocka_unit_test(test_threads),
            cmocka_unit_test(test_versions),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
