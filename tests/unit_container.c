/* Containers: round trips through the writers and through zlib/libzstd
 * directly, scan against the original bytes, random seeks, seek index save
 * and load, and the zstd seekable writer's frame layout. Damaged and
 * hostile archives are in unit_container_bad.c. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "codecs/containers/container.h"
#include "unit_container_util.h"

/* ---- checking one archive ---- */

struct cmp_sink {
        const uint8_t *want;
        size_t n, pos;
        int bad;
};

static int cmp_sink(void *arg, const uint8_t *buf, size_t n)
{
        struct cmp_sink *s = arg;
        if (s->pos + n > s->n || memcmp(s->want + s->pos, buf, n) != 0)
                s->bad = 1;
        s->pos += n;
        return 0;
}

/* count random seeks+reads on two interleaved readers, compared byte for byte. */
static void random_reads(struct tm_cont *c, const uint8_t *want, size_t n, int count, uint64_t seed)
{
        struct tm_err err = {0};
        struct tm_creader *r[2];
        assert_int_equal(tm_creader_open(c, &r[0], &err), 0);
        assert_int_equal(tm_creader_open(c, &r[1], &err), 0);
        uint64_t rng = seed;
        uint8_t *buf = malloc(70000);
        for (int i = 0; i < count; i++) {
                struct tm_creader *rd = r[i & 1];
                uint64_t off;
                uint64_t k = tu_rand(&rng) % 10;
                if (k < 3) /* a short hop forward */
                        off = tm_creader_tell(rd) + tu_rand(&rng) % 100000;
                else if (k == 3) /* the very end */
                        off = n - (n ? tu_rand(&rng) % (n < 100 ? n : 100) : 0);
                else
                        off = tu_rand(&rng) % (n + 1);
                if (off > n)
                        off = n;
                size_t len = (size_t)(tu_rand(&rng) % (k & 1 ? 70000 : 300));
                int ret = tm_creader_seek(rd, off, &err);
                if (ret != 0)
                        fail_msg("seek to %llu of %zu: %d %s", (unsigned long long)off, n, ret,
                                 err.msg);
                assert_int_equal(tm_creader_tell(rd), off);
                size_t got = 0;
                while (got < len) {
                        ssize_t m = tm_creader_read(rd, buf + got, len - got, &err);
                        if (m < 0)
                                fail_msg("read at %llu: %s", (unsigned long long)(off + got),
                                         err.msg);
                        if (m == 0)
                                break;
                        got += (size_t)m;
                }
                size_t expect = off + len <= n ? len : n - off;
                assert_int_equal(got, expect);
                if (memcmp(buf, want + off, got) != 0)
                        fail_msg("data differs at raw %llu+%zu", (unsigned long long)off, got);
                assert_int_equal(tm_creader_tell(rd), off + got);
        }
        free(buf);
        tm_creader_close(r[0]);
        tm_creader_close(r[1]);
}

static void sequential_read(struct tm_cont *c, const uint8_t *want, size_t n)
{
        struct tm_err err = {0};
        struct tm_creader *r;
        assert_int_equal(tm_creader_open(c, &r, &err), 0);
        size_t cap = 100003, pos = 0;
        uint8_t *buf = malloc(cap);
        for (;;) {
                ssize_t m = tm_creader_read(r, buf, cap, &err);
                if (m < 0)
                        fail_msg("sequential read at %zu: %s", pos, err.msg);
                if (m == 0)
                        break;
                assert_true(pos + (size_t)m <= n);
                assert_memory_equal(buf, want + pos, (size_t)m);
                pos += (size_t)m;
        }
        assert_int_equal(pos, n);
        assert_int_equal(tm_creader_read(r, buf, cap, &err), 0);
        if (n)
                assert_int_equal(tm_creader_seek(r, n + 1, &err), -EINVAL);
        free(buf);
        tm_creader_close(r);
}

static uint8_t *slurp_fd(int fd, uint64_t off, size_t n)
{
        uint8_t *b = malloc(n ? n : 1);
        assert_int_equal(pread(fd, b, n, (off_t)off), (ssize_t)n);
        return b;
}

/* Scan, check, random reads; save the index, load it into a fresh
 * container, check again. seekable_at_open: the raw size and random
 * access must work before any scan (zstd seekable, plain). */
static void check_archive(const char *path, const char *kind, const uint8_t *want, size_t n,
                          int seekable_at_open, int reads)
{
        struct tm_err err = {0};
        struct tm_cont *c;
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        if (tm_cont_open(fd, path, &c, &err) != 0)
                fail_msg("open %s: %s", path, err.msg);
        assert_string_equal(tm_cont_name(c), kind);
        uint64_t rs = 0;
        if (seekable_at_open) {
                assert_int_equal(tm_cont_raw_size(c, &rs), 1);
                assert_int_equal(rs, n);
                random_reads(c, want, n, reads / 2, 7);
        }
        struct cmp_sink s = {want, n, 0, 0};
        int ret = tm_cont_scan(c, cmp_sink, &s, &err);
        if (ret != 0)
                fail_msg("scan %s: %d %s", path, ret, err.msg);
        assert_int_equal(s.pos, n);
        assert_false(s.bad);
        assert_int_equal(tm_cont_raw_size(c, &rs), 1);
        assert_int_equal(rs, n);
        sequential_read(c, want, n);
        random_reads(c, want, n, reads, 11);

        /* Save after 5 junk bytes, to use a non-zero offset. */
        FILE *f = tmpfile();
        assert_non_null(f);
        fwrite("junk!", 1, 5, f);
        int64_t len = tm_cont_index_save(c, f, &err);
        if (len < 0)
                fail_msg("index save: %s", err.msg);
        fflush(f);
        assert_int_equal(ftell(f), 5 + len);
        int seekable = tm_cont_seekable(c);
        tm_cont_close(c);

        struct tm_cont *c2;
        assert_int_equal(tm_cont_open(fd, path, &c2, &err), 0);
        ret = tm_cont_index_load(c2, fileno(f), 5, (uint64_t)len, &err);
        if (ret != 0)
                fail_msg("index load: %s", err.msg);
        assert_int_equal(tm_cont_raw_size(c2, &rs), 1);
        assert_int_equal(rs, n);
        assert_int_equal(tm_cont_seekable(c2), seekable);
        random_reads(c2, want, n, reads, 13);
        sequential_read(c2, want, n);
        /* Saving the loaded index gives the same bytes. */
        FILE *g = tmpfile();
        assert_int_equal(tm_cont_index_save(c2, g, &err), len);
        fflush(g);
        uint8_t *a = slurp_fd(fileno(f), 5, (size_t)len);
        uint8_t *b = slurp_fd(fileno(g), 0, (size_t)len);
        assert_memory_equal(a, b, (size_t)len);
        free(a);
        free(b);
        fclose(g);
        /* The saved index is small: well under 1% for large archives. */
        struct stat st;
        fstat(fd, &st);
        if (st.st_size > (8 << 20))
                assert_true((uint64_t)len * 100 < (uint64_t)st.st_size);
        tm_cont_close(c2);
        fclose(f);
        close(fd);
}

/* ---- data ---- */

#define BIG (12u << 20)

static int setup_data(void **state)
{
        (void)state;
        tu_data_init(BIG, BIG, 1);
        return 0;
}

static int teardown_data(void **state)
{
        (void)state;
        tu_data_free();
        return 0;
}

/* ---- writer round trips ---- */

static void writer_round_trip(enum tm_cont_kind kind, const char *kname, const uint8_t *data,
                              size_t n, const char *name)
{
        char path[512];
        tu_path(path, sizeof path, name);
        tu_write_records(path, kind, data, n, 0, 99, NULL);
        /* The independent path first. */
        size_t m;
        uint8_t *back = tu_decode_independent(path, kind, &m);
        assert_int_equal(m, n);
        assert_memory_equal(back, data, n);
        free(back);
        check_archive(path, kname, data, n, kind != TM_CONT_GZIP, 200);
}

static void test_plain_writer(void **state)
{
        (void)state;
        writer_round_trip(TM_CONT_PLAIN, "plain", din_data, din_n, "w.din");
}

/* Scan path and count its seek points: all, with a window, with a window
 * starting mid-byte. */
static void count_points(const char *path, unsigned *all, unsigned *win, unsigned *midbyte)
{
        struct tm_err err = {0};
        struct tm_cont *c;
        int fd = open(path, O_RDONLY);
        assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
        assert_int_equal(tm_cont_scan(c, NULL, NULL, &err), 0);
        FILE *f = tmpfile();
        int64_t len = tm_cont_index_save(c, f, &err);
        assert_true(len >= 32);
        fflush(f);
        uint8_t *b = slurp_fd(fileno(f), 0, (size_t)len);
        *all = tu_le32(b + 24);
        *win = *midbyte = 0;
        for (unsigned i = 0; i < *all; i++) {
                const uint8_t *rec = b + 32 + 32 * i;
                *win += tu_le32(rec + 16) != 0;
                *midbyte += rec[24] != 0;
        }
        free(b);
        fclose(f);
        tm_cont_close(c);
        close(fd);
}

static void test_gzip_writer_din(void **state)
{
        (void)state;
        /* 40 MiB, so that the random reads go through several window
         * points, some restarting in the middle of a byte (inflatePrime). */
        size_t n;
        uint8_t *data = tu_gen_din(40u << 20, 3, &n);
        writer_round_trip(TM_CONT_GZIP, "gzip", data, n, "w.din.gz");
        char path[512];
        unsigned all, win, midbyte;
        tu_path(path, sizeof path, "w.din.gz");
        count_points(path, &all, &win, &midbyte);
        printf("gzip din points: %u, windows %u, mid-byte %u\n", all, win, midbyte);
        assert_true(win >= 3);
        assert_true(midbyte >= 2);
        assert_int_equal(all, win + 1);
        free(data);
}

static void test_gzip_writer_random(void **state)
{
        (void)state;
        writer_round_trip(TM_CONT_GZIP, "gzip", rnd_data, rnd_n, "w.rnd.gz");
}

static void test_zstd_writer_din(void **state)
{
        (void)state;
        writer_round_trip(TM_CONT_ZSTD, "zstd", din_data, din_n, "w.din.zst");
}

static void test_zstd_writer_random(void **state)
{
        (void)state;
        writer_round_trip(TM_CONT_ZSTD, "zstd", rnd_data, rnd_n, "w.rnd.zst");
}

/* ---- archives the writer did not make ---- */

static void test_gzip_multi_member(void **state)
{
        (void)state;
        char path[512];
        tu_path(path, sizeof path, "multi.gz");
        /* Four members, one empty, one with a file name in its header. */
        size_t cuts[] = {0, din_n / 3, din_n / 3, din_n / 3 + 777777, din_n};
        tu_write_gzip_members(path, din_data, cuts, 5);
        check_archive(path, "gzip", din_data, din_n, 0, 200);

        tu_path(path, sizeof path, "multi-rnd.gz");
        size_t rcuts[] = {0, 5000, rnd_n / 2, rnd_n};
        tu_write_gzip_members(path, rnd_data, rcuts, 4);
        check_archive(path, "gzip", rnd_data, rnd_n, 0, 120);
}

static void test_gzip_many_small_members(void **state)
{
        (void)state;
        char path[512];
        tu_path(path, sizeof path, "small.gz");
        size_t cuts[65];
        for (int i = 0; i <= 64; i++)
                cuts[i] = (size_t)i * (3u << 20) / 64;
        tu_write_gzip_members(path, din_data, cuts, 65);
        check_archive(path, "gzip", din_data, 3u << 20, 0, 150);
}

static void test_zstd_multi_frame(void **state)
{
        (void)state;
        char path[512];
        tu_path(path, sizeof path, "multi.zst");
        size_t cuts[] = {0, 1000, din_n / 4, din_n / 2, din_n / 2 + 3, din_n};
        tu_write_zstd_frames(path, din_data, cuts, 6, 1);
        check_archive(path, "zstd", din_data, din_n, 0, 200);
}

static void test_zstd_single_frame(void **state)
{
        (void)state;
        char path[512];
        size_t n = 3u << 20;
        size_t cuts[] = {0, n};
        tu_path(path, sizeof path, "single.zst");
        tu_write_zstd_frames(path, rnd_data, cuts, 2, 0);
        check_archive(path, "zstd", rnd_data, n, 0, 60);

        /* Streamed without a content size. */
        tu_path(path, sizeof path, "stream.zst");
        tu_write_zstd_stream(path, din_data, n);
        check_archive(path, "zstd", din_data, n, 0, 60);
}

static void test_zstd_single_frame_not_seekable(void **state)
{
        (void)state;
        /* One 12 MiB frame: the raw gap is over the limit, so not seekable. */
        char path[512];
        size_t cuts[] = {0, din_n};
        tu_path(path, sizeof path, "single-big.zst");
        tu_write_zstd_frames(path, din_data, cuts, 2, 0);
        struct tm_err err = {0};
        struct tm_cont *c;
        int fd = open(path, O_RDONLY);
        assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
        assert_int_equal(tm_cont_seekable(c), 0);
        uint64_t rs;
        assert_int_equal(tm_cont_raw_size(c, &rs), 0);
        assert_int_equal(tm_cont_scan(c, NULL, NULL, &err), 0);
        assert_int_equal(tm_cont_raw_size(c, &rs), 1);
        assert_int_equal(rs, din_n);
        if (din_n > (16u << 20))
                assert_int_equal(tm_cont_seekable(c), 0);
        tm_cont_close(c);
        close(fd);
}

static void test_seekable_flags(void **state)
{
        (void)state;
        char path[512];
        struct tm_err err = {0};
        struct tm_cont *c;
        tu_path(path, sizeof path, "flags.zst");
        tu_write_records(path, TM_CONT_ZSTD, din_data, din_n, 0, 5, NULL);
        int fd = open(path, O_RDONLY);
        assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
        assert_int_equal(tm_cont_seekable(c), 1); /* from the seek table alone */
        tm_cont_close(c);
        close(fd);

        tu_path(path, sizeof path, "flags.gz");
        tu_write_records(path, TM_CONT_GZIP, din_data, din_n, 0, 5, NULL);
        fd = open(path, O_RDONLY);
        assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
        uint64_t rs;
        assert_int_equal(tm_cont_seekable(c), 0);
        assert_int_equal(tm_cont_raw_size(c, &rs), 0);
        assert_int_equal(tm_cont_scan(c, NULL, NULL, &err), 0);
        assert_int_equal(tm_cont_seekable(c), 1);
        /* A sink's non-zero value stops the scan and is returned. */
        tm_cont_close(c);
        assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
        assert_int_equal(tm_cont_scan(c, tu_stop_sink, NULL, &err), 42);
        tm_cont_close(c);
        close(fd);
}

/* ---- the zstd writer's frames follow the boundaries ---- */

static void test_zstd_frames_at_boundaries(void **state)
{
        (void)state;
        char path[512];
        tu_path(path, sizeof path, "frames.zst");
        size_t frame = 1000, n = 300000;
        struct tu_frames want;
        tu_write_records(path, TM_CONT_ZSTD, din_data, n, frame, 300, &want);
        struct tu_frames got = tu_read_seek_table(path);
        assert_int_equal(got.n, want.n);
        assert_true(got.order);
        for (size_t i = 0; i < want.n; i++) {
                assert_int_equal(got.raw[i], want.raw[i]);
                assert_true(got.raw[i] >= frame || i == want.n - 1);
        }
        tu_check_frame_headers(path, &got);
        tu_frames_free(&want);
        tu_frames_free(&got);

        /* No boundaries at all: frames end at frame_size + 1 MiB. */
        tu_path(path, sizeof path, "noboundary.zst");
        tu_write_no_boundary(path, TM_CONT_ZSTD, rnd_data, 3u << 20, frame);
        got = tu_read_seek_table(path);
        assert_int_equal(got.n, 3);
        assert_int_equal(got.raw[0], frame + (1u << 20));
        assert_int_equal(got.raw[1], frame + (1u << 20));
        tu_check_frame_headers(path, &got);
        tu_frames_free(&got);
        size_t m;
        uint8_t *back = tu_decode_independent(path, TM_CONT_ZSTD, &m);
        assert_int_equal(m, 3u << 20);
        assert_memory_equal(back, rnd_data, m);
        free(back);
}

static void test_empty_streams(void **state)
{
        (void)state;
        static const struct {
                enum tm_cont_kind kind;
                const char *name, *file;
        } k[] = {
            {TM_CONT_PLAIN, "plain", "e.bin"},
            {TM_CONT_GZIP, "gzip", "e.gz"},
            {TM_CONT_ZSTD, "zstd", "e.zst"},
        };
        for (size_t i = 0; i < 3; i++) {
                char path[512];
                tu_path(path, sizeof path, k[i].file);
                tu_write_records(path, k[i].kind, din_data, 0, 0, 10, NULL);
                size_t m = 1;
                uint8_t *back = tu_decode_independent(path, k[i].kind, &m);
                assert_int_equal(m, 0);
                free(back);
                check_archive(path, k[i].name, din_data, 0, k[i].kind != TM_CONT_GZIP, 20);
        }
}

/* ---- several threads, one reader each, on one shared container ---- */

struct thread_job {
        struct tm_cont *c;
        const uint8_t *want;
        size_t n;
        uint64_t seed;
        int bad;
};

static void *thread_reads(void *arg)
{
        struct thread_job *j = arg;
        struct tm_err err = {0};
        struct tm_creader *r;
        if (tm_creader_open(j->c, &r, &err) != 0) {
                j->bad = 1;
                return NULL;
        }
        uint8_t *buf = malloc(20000);
        for (int i = 0; i < 60 && !j->bad; i++) {
                uint64_t off = tu_rand(&j->seed) % j->n;
                size_t len = (size_t)(tu_rand(&j->seed) % 20000);
                if (len > j->n - off)
                        len = j->n - off;
                if (tm_creader_seek(r, off, &err) != 0) {
                        j->bad = 1;
                        break;
                }
                size_t got = 0;
                while (got < len) {
                        ssize_t m = tm_creader_read(r, buf + got, len - got, &err);
                        if (m <= 0)
                                break;
                        got += (size_t)m;
                }
                if (got != len || memcmp(buf, j->want + off, len) != 0)
                        j->bad = 1;
        }
        free(buf);
        tm_creader_close(r);
        return NULL;
}

static void test_threads(void **state)
{
        (void)state;
        static const struct {
                enum tm_cont_kind kind;
                const char *file;
        } k[] = {{TM_CONT_GZIP, "t.gz"}, {TM_CONT_ZSTD, "t.zst"}, {TM_CONT_PLAIN, "t.bin"}};
        for (size_t a = 0; a < 3; a++) {
                char path[512];
                tu_path(path, sizeof path, k[a].file);
                tu_write_records(path, k[a].kind, din_data, din_n, 1u << 20, 3, NULL);
                struct tm_err err = {0};
                struct tm_cont *c;
                int fd = open(path, O_RDONLY);
                assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
                assert_int_equal(tm_cont_scan(c, NULL, NULL, &err), 0);
                pthread_t th[4];
                struct thread_job jobs[4];
                for (int i = 0; i < 4; i++) {
                        jobs[i] = (struct thread_job){c, din_data, din_n, 100 + (uint64_t)i, 0};
                        assert_int_equal(pthread_create(&th[i], NULL, thread_reads, &jobs[i]), 0);
                }
                for (int i = 0; i < 4; i++) {
                        pthread_join(th[i], NULL);
                        assert_false(jobs[i].bad);
                }
                tm_cont_close(c);
                close(fd);
        }
}

/* No usable temporary directory: the gzip index keeps member starts only,
 * and reading still works. */
static void test_gzip_without_tmpdir(void **state)
{
        (void)state;
        char path[512];
        tu_path(path, sizeof path, "notmp.gz");
        tu_write_records(path, TM_CONT_GZIP, rnd_data, rnd_n, 0, 4, NULL);
        const char *old = getenv("TMPDIR");
        char *saved = old ? strdup(old) : NULL;
        setenv("TMPDIR", "/nonexistent/tracemount-test", 1);
        unsigned all, win, midbyte;
        count_points(path, &all, &win, &midbyte);
        assert_int_equal(win, 0);
        assert_int_equal(all, 1);
        check_archive(path, "gzip", rnd_data, rnd_n, 0, 20);
        if (saved)
                setenv("TMPDIR", saved, 1);
        else
                unsetenv("TMPDIR");
        free(saved);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_plain_writer),
            cmocka_unit_test(test_gzip_writer_din),
            cmocka_unit_test(test_gzip_writer_random),
            cmocka_unit_test(test_zstd_writer_din),
            cmocka_unit_test(test_zstd_writer_random),
            cmocka_unit_test(test_gzip_multi_member),
            cmocka_unit_test(test_gzip_many_small_members),
            cmocka_unit_test(test_zstd_multi_frame),
            cmocka_unit_test(test_zstd_single_frame),
            cmocka_unit_test(test_zstd_single_frame_not_seekable),
            cmocka_unit_test(test_seekable_flags),
            cmocka_unit_test(test_zstd_frames_at_boundaries),
            cmocka_unit_test(test_empty_streams),
            cmocka_unit_test(test_threads),
            cmocka_unit_test(test_gzip_without_tmpdir),
        };
        return cmocka_run_group_tests(tests, setup_data, teardown_data);
}
