/* unit_walk: the daemon's walk below the source root (fs/walk.c), with
 * openat2 and with the per-component walk, on one tree: every answer the
 * same in both modes. A symlink in any component (to a directory inside
 * or outside the root) fails with ELOOP, never reaching its target; a
 * symlink as the last component is the symlink itself with O_PATH, ELOOP
 * otherwise; "..", absolute paths and /proc links never leave the
 * root; a file as a directory is ENOTDIR; what is reached is the object
 * at the path (its inode). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs/walk.h"
#include "support/tmtest.h"

static int rootfd = -1;
static char root[PATH_MAX], outside[PATH_MAX];

static void put(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

/* root/{a/b/f, a/file, ln_in -> a, a/ln_out -> outside, a/ln_f -> file,
 * a/abs -> root/a/b}, outside/secret */
static int walk_setup(void **state)
{
        if (tmt_group_setup(state) != 0)
                return -1;
        snprintf(root, sizeof root, "%s/root", tmt_dir);
        snprintf(outside, sizeof outside, "%s/outside", tmt_dir);
        char p[PATH_MAX + 32], q[PATH_MAX + 32];
        if (mkdir(root, 0755) || mkdir(outside, 0755))
                return -1;
        snprintf(p, sizeof p, "%s/a", root);
        if (mkdir(p, 0755))
                return -1;
        snprintf(p, sizeof p, "%s/a/b", root);
        if (mkdir(p, 0755))
                return -1;
        snprintf(p, sizeof p, "%s/a/b/f", root);
        put(p, "inside\n");
        snprintf(p, sizeof p, "%s/a/file", root);
        put(p, "file\n");
        snprintf(p, sizeof p, "%s/secret", outside);
        put(p, "secret\n");
        snprintf(p, sizeof p, "%s/ln_in", root);
        if (symlink("a", p))
                return -1;
        snprintf(p, sizeof p, "%s/a/ln_out", root);
        if (symlink(outside, p))
                return -1;
        snprintf(p, sizeof p, "%s/a/ln_f", root);
        if (symlink("file", p))
                return -1;
        snprintf(p, sizeof p, "%s/a/abs", root);
        snprintf(q, sizeof q, "%s/a/b", root);
        if (symlink(q, p))
                return -1;
        rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return rootfd < 0 ? -1 : 0;
}

static int walk_teardown(void **state)
{
        close(rootfd);
        return tmt_group_teardown(state);
}

/* walk_open's result for rel: the errno, or 0 with the type and inode of
 * what was opened in *st (closed again). */
static int walk_try(const char *rel, int flags, struct stat *st)
{
        int fd = walk_open(rootfd, rel, flags);
        if (fd < 0)
                return fd;
        assert_int_equal(fstat(fd, st), 0);
        close(fd);
        return 0;
}

static void expect_inode(const char *rel, int flags, const char *real)
{
        struct stat got, want;
        assert_int_equal(walk_try(rel, flags, &got), 0);
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/%s", root, real);
        assert_int_equal(lstat(p, &want), 0);
        assert_true(got.st_dev == want.st_dev && got.st_ino == want.st_ino);
}

static void check_tree(void)
{
        struct stat st;
        expect_inode("a/b/f", O_RDONLY, "a/b/f");
        expect_inode("a//b/./f", O_RDONLY, "a/b/f");
        expect_inode("a/b", O_RDONLY | O_DIRECTORY, "a/b");
        expect_inode("", O_PATH, ".");
        expect_inode(".", O_RDONLY | O_DIRECTORY, ".");
        /* a symlink in a directory component, inside or out: refused */
        assert_int_equal(walk_try("ln_in/b/f", O_RDONLY, &st), -ELOOP);
        assert_int_equal(walk_try("ln_in/b/f", O_PATH, &st), -ELOOP);
        assert_int_equal(walk_try("a/ln_out/secret", O_RDONLY, &st), -ELOOP);
        assert_int_equal(walk_try("a/abs/f", O_RDONLY, &st), -ELOOP);
        /* as the last component: the symlink itself, or refused */
        expect_inode("a/ln_f", O_PATH, "a/ln_f");
        assert_int_equal(walk_try("a/ln_f", O_PATH, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        assert_int_equal(walk_try("a/ln_f", O_RDONLY, &st), -ELOOP);
        assert_int_equal(walk_try("a/ln_out", O_RDONLY | O_DIRECTORY, &st), -ENOTDIR);
        /* never out of the root */
        assert_int_equal(walk_try("../outside/secret", O_RDONLY, &st), -EXDEV);
        assert_int_equal(walk_try("a/../../outside/secret", O_RDONLY, &st), -EXDEV);
        char abs[PATH_MAX + 32];
        snprintf(abs, sizeof abs, "%s/secret", outside);
        assert_int_equal(walk_try(abs, O_RDONLY, &st), -EXDEV);
        /* a file where a directory is needed, a missing name */
        assert_int_equal(walk_try("a/file/x", O_RDONLY, &st), -ENOTDIR);
        assert_int_equal(walk_try("a/none", O_RDONLY, &st), -ENOENT);
        /* the parent and the last name */
        const char *base;
        int fd = walk_open_parent(rootfd, "a/b/f", &base);
        assert_true(fd >= 0);
        assert_string_equal(base, "f");
        assert_int_equal(fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(S_ISREG(st.st_mode));
        close(fd);
        fd = walk_open_parent(rootfd, "top", &base);
        assert_true(fd >= 0);
        assert_string_equal(base, "top");
        close(fd);
        assert_int_equal(walk_open_parent(rootfd, "ln_in/b/f", &base), -ELOOP);
}

static void test_openat2(void **state)
{
        (void)state;
        walk_set_mode(WALK_AUTO);
        check_tree();
}

static void test_components(void **state)
{
        (void)state;
        walk_set_mode(WALK_COMPONENTS);
        check_tree();
        walk_set_mode(WALK_AUTO);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_openat2),
            cmocka_unit_test(test_components),
        };
        return cmocka_run_group_tests(tests, walk_setup, walk_teardown);
}
