/* tm_trace_open_fd and tm_probe_fd (include/tracemount.h): a trace opened
 * from descriptors reads what tm_trace_open reads, and its index files go
 * through the descriptors it was given, never through the path it was
 * named by: the archive's path names directory A, the directory
 * descriptor is B, and the index lands in B; without a directory, only
 * in the cache, which cache_dir_fd names while cache_dir names a
 * directory that does not exist; a cache_dir_fd that is an errno (the
 * daemon could not open the cache) writes nowhere and says why.
 *
 * A Meta-TF DTD beside the archive likewise (docs/side-files.md): the
 * archive's directory D, with a DTD of its own, is taken as a descriptor;
 * then D is renamed and a symlink to directory E, holding another DTD of
 * that name, put at its name (a user's swap between the daemon's walk and
 * the codec's open): the views are those of D's DTD, never E's; with no
 * directory descriptor no DTD beside the archive is read at all. */
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
        const struct tm_rcodec *codec = tm_rcodec_by_name("pdats2");
        struct tm_ref *refs = calloc(NREFS, sizeof *refs);
        if (!refs)
                return -1;
        vt_gen(5, refs, NREFS, aref_types(codec), 0);
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

static void test_cache_dir_err(void **state)
{
        (void)state;
        char f_dir[300];
        snprintf(f_dir, sizeof f_dir, "%s/F", tmpdir);
        assert_int_equal(mkdir(f_dir, 0755), 0);
        struct tm_trace_opts o = {.cache_dir = f_dir, .cache_dir_fd = -ENOTDIR};
        int fd = open(archive, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        struct tm_trace *t;
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open_fd(fd, -1, archive, &o, &t, &err), 0);
        close(fd);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        assert_int_equal(count_suffix(f_dir, ".tmidx"), 0); /* not by path either */
        const char *note = tm_trace_index_note(t);
        assert_non_null(note);
        if (!strstr(note, f_dir) || !strstr(note, strerror(ENOTDIR)))
                fail_msg("the note does not name the cache and why: %s", note);
        check_ascii(t);
        tm_trace_close(t);
}

/* ---- a DTD beside a Meta-TF archive ---- */

/* The ascii view of the Meta-TF archive open on fd (a copy is kept),
 * named path, its directory dirfd (-1: none), into out. */
static void mtf_ascii(int fd, int dirfd, const char *path, struct vt_buf *out)
{
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tm_trace_open_fd(fd, dirfd, path, &o, &t, &err) < 0)
                fail_msg("open %s: %s", path, err.msg);
        struct tm_vfile *f;
        if (tm_vfile_open(t, "ascii", &f, &err) < 0)
                fail_msg("%s ascii: %s", path, err.msg);
        out->len = 0;
        uint8_t buf[8192];
        ssize_t r;
        while ((r = tm_vfile_pread(f, buf, sizeof buf, out->len, &err)) > 0)
                vt_put(out, buf, (size_t)r);
        if (r < 0)
                fail_msg("%s ascii: %s", path, err.msg);
        tm_vfile_close(f);
        tm_trace_close(t);
}

static int same(const struct vt_buf *a, const struct vt_buf *b)
{
        return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

/* The built-in hatf10.dtd with the names alloc and free swapped, at
 * path. */
static void spit_swapped_dtd(const char *path)
{
        struct vt_buf b = {0};
        vt_slurp(TM_SOURCE_DIR "/codecs/metatf/dtd/hatf10.dtd", &b);
        vt_put(&b, "", 1);
        char *a = strstr((char *)b.p, "    alloc : ("), *f = strstr((char *)b.p, "    free : (");
        assert_non_null(a);
        assert_non_null(f);
        memcpy(a + 4, "free ", 5); /* five characters each */
        memcpy(f + 4, "alloc", 5);
        vt_spit(path, b.p, b.len - 1);
        free(b.p);
}

static void test_dtd_in_dirfd(void **state)
{
        (void)state;
        char d[300], d_old[300], e[300], mtf[400], dtd_d[400], dtd_e[400];
        snprintf(d, sizeof d, "%s/D", tmpdir);
        snprintf(d_old, sizeof d_old, "%s/D.old", tmpdir);
        snprintf(e, sizeof e, "%s/E", tmpdir);
        snprintf(mtf, sizeof mtf, "%s/heapwork.mtf.zst", d);
        snprintf(dtd_d, sizeof dtd_d, "%s/hatf10.dtd", d);
        snprintf(dtd_e, sizeof dtd_e, "%s/hatf10.dtd", e);
        assert_int_equal(mkdir(d, 0755), 0);
        assert_int_equal(mkdir(e, 0755), 0);
        struct vt_buf b = {0}, builtin = {0}, swapped = {0}, got = {0};
        vt_slurp(TM_SOURCE_DIR "/examples/heapwork.mtf.zst", &b);
        vt_spit(mtf, b.p, b.len);
        free(b.p);
        b = (struct vt_buf){0};
        vt_slurp(TM_SOURCE_DIR "/codecs/metatf/dtd/hatf10.dtd", &b);
        vt_spit(dtd_e, b.p, b.len); /* E's: the built-in text */
        free(b.p);
        int fd = open(mtf, O_RDONLY | O_CLOEXEC);
        int dfd = open(d, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0 && dfd >= 0);
        mtf_ascii(fd, dfd, mtf, &builtin); /* nothing beside it yet */
        spit_swapped_dtd(dtd_d);           /* D's: alloc and free swapped */
        mtf_ascii(fd, dfd, mtf, &swapped);
        assert_false(same(&builtin, &swapped)); /* the DTD beside it is read */

        /* D swapped for a symlink to E after its descriptor was taken */
        assert_int_equal(rename(d, d_old), 0);
        assert_int_equal(symlink(e, d), 0);
        mtf_ascii(fd, dfd, mtf, &got);
        if (!same(&got, &swapped))
                fail_msg("the DTD of %s (through the symlink at %s) was read, not the one of "
                         "the directory opened",
                         e, d);
        assert_int_equal(unlink(d), 0);
        assert_int_equal(rename(d_old, d), 0);

        /* no directory descriptor: nothing beside the archive, not by path */
        mtf_ascii(fd, -1, mtf, &got);
        assert_true(same(&got, &builtin));
        close(fd);
        close(dfd);
        free(builtin.p);
        free(swapped.p);
        free(got.p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_probe_fd),     cmocka_unit_test(test_index_in_dirfd),
            cmocka_unit_test(test_cache_dir_fd), cmocka_unit_test(test_cache_dir_err),
            cmocka_unit_test(test_dtd_in_dirfd),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
