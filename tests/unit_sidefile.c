/* Files beside an archive are input from other users (issue 25, items 1
 * and 4; docs/side-files.md). With the Meta-TF example
 * (examples/heapwork.mtf.zst, whose header names hatf10.dtd) in a
 * directory of its own:
 * - a FIFO, a symlink (to a DTD that would break the trace) and another
 *   user's file as hatf10.dtd beside it: opening the trace returns at once
 *   (an alarm fails the test if it blocks), the built-in DTD is used (every
 *   view equals the reference's bytes), errors and stats name the file and
 *   why; a root-owned (trusted) bad DTD beside it is used, and the trace
 *   stays a directory whose errors gives the DTD's parse error;
 * - tm_side_open itself on each kind of file;
 * - an .mtf whose DTD exists nowhere is a trace (tm_probe_path) whose views
 *   fail with EIO but stats and errors, which say where the DTD was looked
 *   for;
 * - streams/thread/<id>, which the index adds, is served by tm_vfile_open
 *   on a trace just opened (tracetool cat), with the bytes it has later.
 * Another user's file needs root (chown): that test SKIPs loudly without. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "codecs/common/tm_side.h"
#include "tmpdir_test.h"
#include "view_test.h"
#include "views/view.h"

#define OTHER_UID 65534 /* nobody */

static char dir[300], archive[400], dtd[400], missing[400];

/* The whole view into out; returns the last read's result (0 or an
 * error), the error in err. */
static ssize_t read_view(struct tm_trace *t, const char *view, struct vt_buf *out,
                         struct tm_err *err)
{
        struct tm_vfile *f;
        out->len = 0;
        int rc = tm_vfile_open(t, view, &f, err);
        if (rc < 0)
                return rc;
        uint8_t buf[8192];
        ssize_t r;
        while ((r = tm_vfile_pread(f, buf, sizeof buf, out->len, err)) > 0)
                vt_put(out, buf, (size_t)r);
        tm_vfile_close(f);
        return r;
}

static struct tm_trace *open_trace(const char *path)
{
        struct tm_trace *t;
        struct tm_err err = {0};
        struct tm_trace_opts o = {.no_save = 1};
        alarm(20); /* a blocking open fails the test instead of hanging it */
        if (tm_trace_open(path, &o, &t, &err) < 0)
                fail_msg("open %s: %s", path, err.msg);
        alarm(0);
        return t;
}

/* The text of view, NUL-terminated (the caller frees it). */
static char *view_text(struct tm_trace *t, const char *view)
{
        struct vt_buf b = {0};
        struct tm_err err = {0};
        if (read_view(t, view, &b, &err) < 0)
                fail_msg("%s: %s", view, err.msg);
        vt_put(&b, "", 1);
        return (char *)b.p;
}

/* The reference: the views of the archive with nothing beside it. */
static const char *const ref_views[] = {"ascii", "binary", "raw", "schema", "streams/free"};
static struct vt_buf ref[5];

static int group_setup(void **state)
{
        if (tmp_setup(state) < 0)
                return -1;
        snprintf(dir, sizeof dir, "%s/d", tmpdir);
        snprintf(archive, sizeof archive, "%s/heapwork.mtf.zst", dir);
        snprintf(dtd, sizeof dtd, "%s/hatf10.dtd", dir);
        snprintf(missing, sizeof missing, "%s/missing.mtf", dir);
        mkdir(dir, 0755);
        struct vt_buf b = {0};
        vt_slurp(TM_SOURCE_DIR "/examples/heapwork.mtf.zst", &b);
        vt_spit(archive, b.p, b.len);
        free(b.p);
        struct tm_trace *t = open_trace(archive);
        for (unsigned i = 0; i < 5; i++) {
                struct tm_err err = {0};
                if (read_view(t, ref_views[i], &ref[i], &err) < 0)
                        fail_msg("reference %s: %s", ref_views[i], err.msg);
        }
        tm_trace_close(t);
        return 0;
}

static int group_teardown(void **state)
{
        for (unsigned i = 0; i < 5; i++)
                free(ref[i].p);
        return tmp_teardown(state);
}

/* Each test starts with nothing beside the archive, whatever the one
 * before left when it failed. */
static int clean(void **state)
{
        (void)state;
        char p[420];
        unlink(dtd);
        unlink(missing);
        snprintf(p, sizeof p, "%s/elsewhere.dtd", tmpdir);
        unlink(p);
        snprintf(p, sizeof p, "%s/side", tmpdir);
        unlink(p);
        return 0;
}

/* With whatever is at dtd now: the trace opens at once, its views are the
 * reference's, errors and stats name dtd and contain why. */
static void check_passed_over(const char *why)
{
        struct tm_trace *t = open_trace(archive);
        for (unsigned i = 0; i < 5; i++) {
                struct vt_buf b = {0};
                struct tm_err err = {0};
                alarm(20);
                if (read_view(t, ref_views[i], &b, &err) < 0)
                        fail_msg("%s: %s", ref_views[i], err.msg);
                alarm(0);
                if (b.len != ref[i].len || memcmp(b.p, ref[i].p, b.len) != 0)
                        fail_msg("%s: %s differs from the reference", why, ref_views[i]);
                free(b.p);
        }
        char *e = view_text(t, "errors"), *s = view_text(t, "stats");
        if (!strstr(e, dtd) || !strstr(e, why))
                fail_msg("errors does not say '%s' of %s: '%s'", why, dtd, e);
        if (!strstr(s, "side file") || !strstr(s, dtd) || !strstr(s, why))
                fail_msg("stats does not say '%s' of %s:\n%s", why, dtd, s);
        char *j = view_text(t, "stats.json"), *sf = strstr(j, "\"side_files\":[\"");
        if (!sf || !strstr(sf, why) || strstr(sf, "]") < strstr(sf, why))
                fail_msg("stats.json's side_files do not say '%s':\n%s", why, j);
        free(j);
        free(e);
        free(s);
        tm_trace_close(t);
}

/* A DTD that would break the trace if it were used. */
static const char bad_dtd[] = "<!ELEMENT trace (nosuch)>\n<!ATTLIST broken\n";

static void test_fifo_beside(void **state)
{
        (void)state;
        assert_int_equal(mkfifo(dtd, 0644), 0);
        check_passed_over("FIFO");
        unlink(dtd);
}

static void test_symlink_beside(void **state)
{
        (void)state;
        char target[420];
        snprintf(target, sizeof target, "%s/elsewhere.dtd", tmpdir);
        vt_spit(target, bad_dtd, sizeof bad_dtd - 1);
        assert_int_equal(symlink(target, dtd), 0);
        check_passed_over("symlink");
        unlink(dtd);
        /* and to a FIFO: not followed, not waited on */
        unlink(target);
        assert_int_equal(mkfifo(target, 0644), 0);
        assert_int_equal(symlink(target, dtd), 0);
        check_passed_over("symlink");
        unlink(dtd);
        unlink(target);
}

static void test_other_users_dtd(void **state)
{
        (void)state;
        if (geteuid() != 0) {
                printf("[ SKIP ] another user's DTD beside the archive: needs root for chown\n");
                fprintf(stderr, "SKIP: another user's DTD beside the archive: needs root\n");
                return;
        }
        vt_spit(dtd, bad_dtd, sizeof bad_dtd - 1);
        assert_int_equal(chown(dtd, OTHER_UID, OTHER_UID), 0);
        check_passed_over("not trusted");
        /* the same file from a trusted writer (root) is used: the trace
         * stays a directory, its errors give the parse error's place */
        assert_int_equal(chown(dtd, 0, 0), 0);
        struct tm_trace *t = open_trace(archive);
        struct vt_buf b = {0};
        struct tm_err err = {0};
        assert_int_equal(read_view(t, "ascii", &b, &err), -EIO);
        char *e = view_text(t, "errors"), *s = view_text(t, "stats");
        if (!strstr(e, "hatf10.dtd:1:")) /* file:line:column */
                fail_msg("errors does not give the DTD's error: '%s'", e);
        if (!strstr(s, "not opened") || !strstr(s, "hatf10.dtd"))
                fail_msg("stats does not say what failed:\n%s", s);
        free(e);
        free(s);
        free(b.p);
        tm_trace_close(t);
        unlink(dtd);
}

/* tm_side_open on each kind of file at a name, and its owner rule. */
static void test_side_open(void **state)
{
        (void)state;
        char p[420];
        int fd;
        struct stat sb;
        struct tm_err err = {0};
        snprintf(p, sizeof p, "%s/side", tmpdir);
        assert_int_equal(tm_side_open(p, NULL, 0, &fd, &sb, &err), -ENOENT);
        assert_int_equal(mkfifo(p, 0644), 0);
        alarm(20);
        assert_int_equal(tm_side_open(p, NULL, TM_SIDE_ANY_OWNER, &fd, &sb, &err), -EIO);
        alarm(0);
        assert_non_null(strstr(err.msg, "not a regular file (a FIFO)"));
        unlink(p);
        assert_int_equal(symlink("/etc/passwd", p), 0);
        assert_int_equal(tm_side_open(p, NULL, TM_SIDE_ANY_OWNER, &fd, &sb, &err), -EIO);
        assert_non_null(strstr(err.msg, "a symlink, not followed"));
        unlink(p);
        vt_spit(p, "12345", 5);
        assert_int_equal(tm_side_open(p, NULL, 0, &fd, &sb, &err), 0);
        char buf[8];
        assert_int_equal(tm_side_read(fd, &sb, p, buf, 4, &err), -EFBIG);
        assert_int_equal(tm_side_read(fd, &sb, p, buf, 5, &err), 5);
        close(fd);
        if (geteuid() != 0) {
                printf("[ SKIP ] tm_side_open of another user's file: needs root for chown\n");
                fprintf(stderr, "SKIP: tm_side_open of another user's file: needs root\n");
                unlink(p);
                return;
        }
        assert_int_equal(chown(p, OTHER_UID, OTHER_UID), 0);
        struct tm_side_trust tr;
        tm_side_trust_of(archive, NULL, 0, &tr); /* root's archive, root's 0755 directory */
        assert_int_equal(tm_side_open(p, &tr, 0, &fd, &sb, &err), -EPERM);
        assert_non_null(strstr(err.msg, "not trusted"));
        assert_int_equal(tm_side_open(p, &tr, TM_SIDE_ANY_OWNER, &fd, &sb, &err), 0);
        close(fd);
        tr.a_uid = OTHER_UID; /* the archive's owner may choose its side files */
        assert_int_equal(tm_side_open(p, &tr, 0, &fd, &sb, &err), 0);
        close(fd);
        unlink(p);
}

/* The example's raw bytes with its DTD's name changed to one that exists
 * nowhere, as a plain .mtf. */
static void make_missing(void)
{
        struct tm_trace *t = open_trace(archive);
        struct vt_buf raw = {0};
        struct tm_err err = {0};
        assert_int_equal(read_view(t, "raw", &raw, &err), 0);
        tm_trace_close(t);
        uint8_t *at = memmem(raw.p, raw.len < 256 ? raw.len : 256, "hatf10.dtd", 10);
        assert_non_null(at);
        memcpy(at, "nosuch.dtd", 10);
        vt_spit(missing, raw.p, raw.len);
        free(raw.p);
}

static void test_missing_dtd(void **state)
{
        (void)state;
        make_missing();
        const char *codec = NULL;
        assert_int_equal(tm_probe_path(missing, &codec, NULL), 1); /* a directory */
        assert_string_equal(codec, "metatf");
        struct tm_trace *t = open_trace(missing);
        int has_errors = 0;
        for (const char *const *v = tm_trace_views(t); *v; v++)
                has_errors |= strcmp(*v, "errors") == 0;
        assert_true(has_errors);
        struct vt_buf b = {0};
        struct tm_err err = {0};
        assert_int_equal(read_view(t, "ascii", &b, &err), -EIO);
        assert_int_equal(read_view(t, "schema", &b, &err), -EIO);
        uint64_t size = 0;
        assert_int_equal(tm_trace_view_size(t, "ascii", &size, &err), 0); /* ls -l works */
        char beside[420];
        snprintf(beside, sizeof beside, "%s/nosuch.dtd", dir);
        char *e = view_text(t, "errors"), *s = view_text(t, "stats");
        if (!strstr(e, missing) || !strstr(e, beside) || !strstr(e, "not built in") ||
            !strstr(e, "TM_DTD_PATH"))
                fail_msg("errors does not say where the DTD was looked for: '%s'", e);
        if (!strstr(s, "not opened") || !strstr(s, beside))
                fail_msg("stats does not say what failed:\n%s", s);
        free(e);
        free(s);
        assert_true(tm_trace_verify(t, NULL, NULL, &err) < 0);
        free(b.p);
        tm_trace_close(t);
        unlink(missing);
}

/* streams/thread/<id> read on a trace just opened (as tracetool cat does)
 * equals the same view read once the index has listed it. */
static void test_thread_view(void **state)
{
        (void)state;
        struct tm_trace *t = open_trace(archive);
        struct vt_buf first = {0}, again = {0};
        struct tm_err err = {0};
        if (read_view(t, "streams/thread/0", &first, &err) < 0)
                fail_msg("streams/thread/0 before the index: %s", err.msg);
        assert_true(first.len > 0);
        int listed = 0;
        for (const char *const *v = tm_trace_views(t); *v; v++)
                listed |= strcmp(*v, "streams/thread/0") == 0;
        assert_true(listed);
        tm_trace_close(t);
        t = open_trace(archive);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        assert_int_equal(read_view(t, "streams/thread/0", &again, &err), 0);
        assert_int_equal(again.len, first.len);
        assert_memory_equal(again.p, first.p, first.len);
        /* a thread the trace does not have stays missing */
        assert_int_equal(read_view(t, "streams/thread/12345", &again, &err), -ENOENT);
        tm_trace_close(t);
        free(first.p);
        free(again.p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(test_side_open, clean),
            cmocka_unit_test_setup(test_fifo_beside, clean),
            cmocka_unit_test_setup(test_symlink_beside, clean),
            cmocka_unit_test_setup(test_other_users_dtd, clean),
            cmocka_unit_test_setup(test_missing_dtd, clean),
            cmocka_unit_test_setup(test_thread_view, clean),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
