/* rawahead: the raw stream decompressed by a thread of its own must be the
 * container cursor's stream, byte for byte, through sequential reads of
 * odd sizes and through seeks of every kind (a hop inside the chunks
 * already decompressed, backwards, far ahead, to the end, past it); damage
 * must come back as the cursor reports it, after the same bytes, and
 * again until a seek; closing in the middle of a stream must not hang or
 * leak (ASan run). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "codecs/container.h"
#include "unit_container_util.h"
#include "views/rawahead.h"

#define DATA (3u << 20) /* several rings' worth */

static const enum tm_cont_kind kinds[] = {TM_CONT_PLAIN, TM_CONT_GZIP, TM_CONT_ZSTD};
static const char *const names[] = {"r.plain", "r.gz", "r.zst"};

static int setup(void **state)
{
        (void)state;
        tu_data_init(DATA, 0, 7);
        for (int k = 0; k < 3; k++) {
                char path[512];
                tu_path(path, sizeof path, names[k]);
                /* small zstd frames: seeks land mid-frame and between */
                tu_write_records(path, kinds[k], din_data, din_n, 100000, 5, NULL);
        }
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        tu_data_free();
        return 0;
}

/* Open path's container with its seek index built. */
static struct tm_cont *open_scanned(const char *path, int *fd)
{
        struct tm_err err = {0};
        struct tm_cont *c;
        *fd = open(path, O_RDONLY);
        assert_true(*fd >= 0);
        tu_check(tm_cont_open(*fd, path, &c, &err), &err);
        tu_check(tm_cont_scan(c, NULL, NULL, &err), &err);
        return c;
}

/* Read n bytes at the position into buf (several reads), or fail. */
static void read_exact(struct tm_rawahead *a, uint8_t *buf, size_t n)
{
        struct tm_err err = {0};
        size_t got = 0;
        while (got < n) {
                ssize_t k = tm_rawahead_read(a, buf + got, n - got, &err);
                if (k <= 0)
                        fail_msg("read %zu of %zu: %zd %s", got, n, k, err.msg);
                got += (size_t)k;
        }
}

static void test_sequential(void **state)
{
        (void)state;
        static const size_t sizes[] = {1, 7, 4099, 200000, 65536, 3};
        uint8_t *buf = malloc(200000);
        assert_non_null(buf);
        for (int k = 0; k < 3; k++) {
                char path[512];
                int fd;
                tu_path(path, sizeof path, names[k]);
                struct tm_cont *c = open_scanned(path, &fd);
                struct tm_rawahead *a;
                struct tm_err err = {0};
                tu_check(tm_rawahead_open(c, &a, &err), &err);
                size_t pos = 0;
                for (unsigned i = 0; pos < din_n; i++) {
                        size_t n = sizes[i % 6];
                        n = n < din_n - pos ? n : din_n - pos;
                        read_exact(a, buf, n);
                        if (memcmp(buf, din_data + pos, n) != 0)
                                fail_msg("%s: bytes at %zu differ", names[k], pos);
                        pos += n;
                        assert_int_equal(tm_rawahead_tell(a), pos);
                }
                assert_int_equal(tm_rawahead_read(a, buf, 10, &err), 0);
                assert_int_equal(tm_rawahead_read(a, buf, 10, &err), 0);
                tm_rawahead_close(a);
                tm_cont_close(c);
                close(fd);
        }
        free(buf);
}

static void check_at(struct tm_rawahead *a, uint64_t off, size_t n, const char *what)
{
        uint8_t buf[5000];
        struct tm_err err = {0};
        assert_int_equal(tm_rawahead_seek(a, off, &err), 0);
        assert_int_equal(tm_rawahead_tell(a), off);
        n = n < din_n - off ? n : din_n - off;
        read_exact(a, buf, n);
        if (memcmp(buf, din_data + off, n) != 0)
                fail_msg("%s: %zu bytes at %llu differ", what, n, (unsigned long long)off);
}

static void test_seeks(void **state)
{
        (void)state;
        uint64_t rng = 11;
        for (int k = 0; k < 3; k++) {
                char path[512];
                int fd;
                tu_path(path, sizeof path, names[k]);
                struct tm_cont *c = open_scanned(path, &fd);
                struct tm_rawahead *a;
                struct tm_err err = {0};
                tu_check(tm_rawahead_open(c, &a, &err), &err);
                check_at(a, 1000, 100, "start");
                check_at(a, 1100, 4000, "right where the last read stopped");
                check_at(a, 9000, 4000, "a hop inside the ready chunks");
                check_at(a, 500, 4000, "backwards");
                check_at(a, din_n / 2, 4000, "far ahead");
                check_at(a, din_n - 10, 4000, "the last bytes");
                for (int i = 0; i < 60; i++)
                        check_at(a, tu_rand(&rng) % din_n, 1 + tu_rand(&rng) % 4000, "random");
                /* the end, then past it: what the cursor says, at the read */
                assert_int_equal(tm_rawahead_seek(a, din_n, &err), 0);
                uint8_t b[8];
                assert_int_equal(tm_rawahead_read(a, b, sizeof b, &err), 0);
                assert_int_equal(tm_rawahead_seek(a, din_n + 5, &err), 0);
                struct tm_creader *r;
                struct tm_err want = {0};
                tu_check(tm_creader_open(c, &r, &want), &want);
                int rc = tm_creader_seek(r, din_n + 5, &want);
                assert_true(rc < 0);
                assert_int_equal(tm_rawahead_read(a, b, sizeof b, &err), rc);
                assert_string_equal(err.msg, want.msg);
                tm_creader_close(r);
                check_at(a, 3, 100, "after an error");
                tm_rawahead_close(a);
                tm_cont_close(c);
                close(fd);
        }
}

/* A byte flipped in the middle of the zstd archive: the same bytes, then
 * the same error as the cursor's, again on the next read; a seek back
 * still reads. */
static void test_damage(void **state)
{
        (void)state;
        char path[512], bad[600];
        tu_path(path, sizeof path, names[2]);
        snprintf(bad, sizeof bad, "%s.bad", path);
        int in = open(path, O_RDONLY);
        off_t size = lseek(in, 0, SEEK_END);
        uint8_t *z = malloc((size_t)size);
        assert_non_null(z);
        assert_int_equal(pread(in, z, (size_t)size, 0), size);
        close(in);
        z[size / 2] ^= 0x5a;
        int out = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_int_equal(write(out, z, (size_t)size), size);
        close(out);
        free(z);

        int fd = open(bad, O_RDONLY);
        struct tm_err err = {0};
        struct tm_cont *c;
        tu_check(tm_cont_open(fd, bad, &c, &err), &err); /* seek table intact */
        /* the cursor's account */
        struct tm_creader *r;
        tu_check(tm_creader_open(c, &r, &err), &err);
        uint8_t *buf = malloc(65536);
        assert_non_null(buf);
        uint64_t good = 0;
        ssize_t k;
        struct tm_err want = {0};
        while ((k = tm_creader_read(r, buf, 65536, &want)) > 0)
                good += (uint64_t)k;
        assert_true(k < 0);
        ssize_t want_rc = k;
        tm_creader_close(r);
        /* the rawahead's */
        struct tm_rawahead *a;
        tu_check(tm_rawahead_open(c, &a, &err), &err);
        uint64_t got = 0;
        while ((k = tm_rawahead_read(a, buf, 65536, &err)) > 0) {
                if (memcmp(buf, din_data + got, (size_t)k) != 0)
                        fail_msg("bytes at %llu differ", (unsigned long long)got);
                got += (uint64_t)k;
        }
        assert_int_equal(got, good);
        assert_int_equal(k, want_rc);
        assert_string_equal(err.msg, want.msg);
        memset(&err, 0, sizeof err);
        assert_int_equal(tm_rawahead_read(a, buf, 10, &err), want_rc);
        assert_string_equal(err.msg, want.msg);
        check_at(a, 0, 4000, "after the damage");
        tm_rawahead_close(a);
        free(buf);
        tm_cont_close(c);
        close(fd);
}

/* Closing while the thread decompresses, right after open, after a seek. */
static void test_close_midway(void **state)
{
        (void)state;
        for (int k = 0; k < 3; k++) {
                char path[512];
                int fd;
                tu_path(path, sizeof path, names[k]);
                struct tm_cont *c = open_scanned(path, &fd);
                struct tm_err err = {0};
                for (int i = 0; i < 20; i++) {
                        struct tm_rawahead *a;
                        tu_check(tm_rawahead_open(c, &a, &err), &err);
                        if (i % 3 == 1) {
                                uint8_t b[100];
                                read_exact(a, b, sizeof b);
                        } else if (i % 3 == 2) {
                                tm_rawahead_seek(a, din_n / 3, &err);
                        }
                        tm_rawahead_close(a);
                }
                tm_cont_close(c);
                close(fd);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sequential),
            cmocka_unit_test(test_seeks),
            cmocka_unit_test(test_damage),
            cmocka_unit_test(test_close_midway),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
