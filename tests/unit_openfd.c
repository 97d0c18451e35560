/* tm_trace_open_fd and tm_probe_fd (include/tracemount.h): a trace opened
 * from descriptors reads what tm_trace_open reads, and its index files go
 * through the descriptors it was given, never through the path it was
 * named by: the archive's path names directory A, the directory
 * descriptor is B, and the index lands in B; without a directory, only
 * in the cache, which cache_dir_fd names while cache_dir names a
 * directory that does not exist. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tmpdir_test.h"
#include "view_test.h"

#define NREFS 20000

static char a_dir[300], b_dir[300], c_dir[300], archive[400], text[400];
static struct vt_buf raw, ascii;

static int group_setup(void **state)
{
        if (tmp_setup(state) != 0)
                return -1;
        snprintf(a_dir, sizeof a_dir, "%s/A", tmpdir);
        snprintf(b_dir, sizeof b_dir, "%s/B", tmpdir);
        snprintf(c_dir, sizeof c_dir, "%s/C", tmpdir);
        if (mkdir(a_dir, 0755) || mkdir(b_dir, 0755) || mkdir(c_dir, 0755))
                return -1;
        snprintf(archive, sizeof archive, "%s/a.pdt2.zst", a_dir);
        snprintf(text, sizeof text, "%s/notes.txt", a_dir);
        vt_spit(text, "not a trace\n", 12);
        const struct tm_codec *codec = tm_codec_by_name("pdats2");
        struct tm_ref *refs = calloc(NREFS, sizeof *refs);
        if (!refs)
                return -1;
        vt_gen(5, refs, NREFS, codec->ntypes, 0);
        vt_make(archive, codec, TM_CONT_ZSTD, 4096, refs, NREFS, &raw);
        vt_expect("ascii", refs, NREFS, &raw, &ascii);
        free(refs);
        return 0;
}

static int group_teardown(void **state)
{
        free(raw.p);
        free(ascii.p);
        return tmp_teardown(state);
}

static int exists_in(const char *dir, const char *name)
{
        char p[800];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        return access(p, F_OK) == 0;
}

/* Files of dir whose names end with suffix. */
static int count_suffix(const char *dir, const char *suffix)
{
        DIR *d = opendir(dir);
        assert_non_null(d);
        int n = 0;
        size_t k = strlen(suffix);
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
                size_t m = strlen(e->d_name);
                n += m >= k && strcmp(e->d_name + m - k, suffix) == 0;
        }
        closedir(d);
        return n;
}

static void check_ascii(struct tm_trace *t)
{
        struct tm_vfile *f;
        struct tm_err err = {0};
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        uint8_t *buf = malloc(ascii.len + 1);
        assert_non_null(buf);
        size_t got = 0;
        for (ssize_t n; (n = tm_vfile_pread(f, buf + got, ascii.len + 1 - got, got, &err)) > 0;)
                got += (size_t)n;
        assert_int_equal(got, ascii.len);
        assert_memory_equal(buf, ascii.p, ascii.len);
        free(buf);
        tm_vfile_close(f);
}

/* Open the archive by descriptor with directory descriptor dirfd (-1:
 * none), index it, check ascii; the index's source. */
static enum tm_index_source open_index(int dirfd, const struct tm_trace_opts *o)
{
        int fd = open(archive, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        struct tm_trace *t;
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open_fd(fd, dirfd, archive, o, &t, &err), 0);
        close(fd); /* the library keeps its own copy */
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        enum tm_index_source src = tm_trace_index_source(t);
        check_ascii(t);
        tm_trace_close(t);
        return src;
}

static void test_probe_fd(void **state)
{
        (void)state;
        const char *codec = NULL, *cont = NULL;
        int fd = open(archive, O_RDONLY | O_CLOEXEC);
        assert_int_equal(tm_probe_fd(fd, "named/elsewhere", &codec, &cont), 1);
        assert_string_equal(codec, "pdats2");
        assert_string_equal(cont, "zstd");
        close(fd);
        fd = open(text, O_RDONLY | O_CLOEXEC);
        assert_int_equal(tm_probe_fd(fd, text, NULL, NULL), 0);
        close(fd);
        assert_int_equal(tm_probe_fd(-1, text, NULL, NULL), 0);
        struct tm_trace *t;
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open_fd(-1, -1, archive, NULL, &t, &err), -EBADF);
}

static void test_index_in_dirfd(void **state)
{
        (void)state;
        char cache[400];
        snprintf(cache, sizeof cache, "%s/no/such/cache", tmpdir);
        struct tm_trace_opts o = {.cache_dir = cache};
        int b = open(b_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(b >= 0);
        assert_int_equal(open_index(b, &o), TM_INDEX_BUILT);
        assert_true(exists_in(b_dir, ".a.pdt2.zst.tmidx"));
        assert_false(exists_in(a_dir, ".a.pdt2.zst.tmidx"));
        assert_false(exists_in(tmpdir, "no"));
        /* and read back from there */
        assert_int_equal(open_index(b, &o), TM_INDEX_LOADED);
        close(b);
}

static void test_cache_dir_fd(void **state)
{
        (void)state;
        char cache[400];
        snprintf(cache, sizeof cache, "%s/no/such/cache", tmpdir);
        int c = open(c_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(c > 0);
        struct tm_trace_opts o = {.cache_dir = cache, .cache_dir_fd = c};
        assert_int_equal(count_suffix(c_dir, "-a.pdt2.zst.tmidx"), 0);
        assert_int_equal(open_index(-1, &o), TM_INDEX_BUILT);
        assert_int_equal(count_suffix(c_dir, "-a.pdt2.zst.tmidx"), 1);
        assert_false(exists_in(a_dir, ".a.pdt2.zst.tmidx"));
        assert_false(exists_in(tmpdir, "no"));
        assert_int_equal(open_index(-1, &o), TM_INDEX_LOADED);
        close(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_probe_fd),
            cmocka_unit_test(test_index_in_dirfd),
            cmocka_unit_test(test_cache_dir_fd),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
