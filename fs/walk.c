#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Tries of openat2 that the kernel asks to repeat (EAGAIN: a rename or
 * mount somewhere raced the RESOLVE_BENEATH check) before the
 * per-component walk, which has no such check to fail. */
#define WALK_AGAIN_TRIES 8

/* 1: the per-component walk (WALK_COMPONENTS, or no openat2), -1: not yet
 * decided (the environment is read at the first call). */
static atomic_int walk_components = -1;

void walk_set_mode(enum walk_mode m)
{
        atomic_store(&walk_components, m == WALK_COMPONENTS);
}

static int walk_use_components(void)
{
        int c = atomic_load(&walk_components);
        if (c < 0) {
                const char *e = getenv("TM_WALK");
                c = e && strcmp(e, "components") == 0;
                atomic_store(&walk_components, c);
        }
        return c;
}

/* openat2 below rootfd; -ENOSYS when the kernel lacks it. */
static int walk_openat2(int rootfd, const char *rel, int flags)
{
        struct open_how how = {
            .flags = (unsigned)(flags | O_NOFOLLOW | O_CLOEXEC),
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        for (int i = 0; i < WALK_AGAIN_TRIES; i++) {
                long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
                if (fd >= 0)
                        return (int)fd;
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
        }
        return -EAGAIN;
}

/* One intermediate component name below dirfd: a directory, else
 * -ELOOP for a symlink (as openat2 says) or -ENOTDIR. */
static int walk_dir_step(int dirfd, const char *name)
{
        int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
                return fd;
        int e = -errno;
        struct stat st;
        if (e == -ENOTDIR && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode))
                return -ELOOP;
        return e;
}

/* The walk one component at a time: each an openat below the last one's
 * descriptor with O_NOFOLLOW, ".." and absolute paths refused. */
static int walk_by_component(int rootfd, const char *rel, int flags)
{
        char buf[PATH_MAX];
        size_t n = strlen(rel);
        if (n >= sizeof buf)
                return -ENAMETOOLONG;
        if (rel[0] == '/')
                return -EXDEV;
        memcpy(buf, rel, n + 1);
        int cur = rootfd;
        char *s = buf;
        for (;;) {
                while (*s == '/')
                        s++;
                char *end = s + strcspn(s, "/");
                char *next = end;
                while (*next == '/')
                        next++;
                int last = *next == '\0';
                *end = '\0';
                const char *name = *s ? s : ".";
                if (strcmp(name, "..") == 0) {
                        if (cur != rootfd)
                                close(cur);
                        return -EXDEV;
                }
                int fd = last ? openat(cur, name, flags | O_NOFOLLOW | O_CLOEXEC)
                              : walk_dir_step(cur, name);
                if (last && fd < 0)
                        fd = -errno;
                if (cur != rootfd)
                        close(cur);
                if (fd < 0 || last)
                        return fd;
                cur = fd;
                s = next;
        }
}

int walk_open(int rootfd, const char *rel, int flags)
{
        if (!*rel)
                rel = ".";
        if (!walk_use_components()) {
                int fd = walk_openat2(rootfd, rel, flags);
                if (fd != -ENOSYS && fd != -EAGAIN)
                        return fd;
                if (fd == -ENOSYS)
                        atomic_store(&walk_components, 1);
        }
        return walk_by_component(rootfd, rel, flags);
}

int walk_open_parent(int rootfd, const char *rel, const char **base)
{
        const char *s = strrchr(rel, '/');
        if (!s) {
                *base = *rel ? rel : ".";
                return walk_open(rootfd, ".", O_PATH | O_DIRECTORY);
        }
        char dir[PATH_MAX];
        size_t n = (size_t)(s - rel);
        if (n >= sizeof dir)
                return -ENAMETOOLONG;
        memcpy(dir, rel, n);
        dir[n] = '\0';
        *base = s + 1;
        return walk_open(rootfd, dir, O_PATH | O_DIRECTORY);
}
