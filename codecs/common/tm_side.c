#include "tm_side.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tm_io.h"

/* The directory part of path ("." when none), malloc'd, and its last
 * component in *base. */
static char *split_dir(const char *path, const char **base)
{
        const char *s = strrchr(path, '/');
        *base = s ? s + 1 : path;
        if (!s)
                return strdup(".");
        if (s == path)
                return strdup("/");
        return strndup(path, (size_t)(s - path));
}

int tm_side_open_dir(const char *path, const char **base, struct stat *dsb)
{
        char *dir = split_dir(path, base);
        if (!dir)
                return -ENOMEM;
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int e = fd < 0 ? -errno : 0;
        free(dir);
        if (fd >= 0 && fstat(fd, dsb) < 0) {
                e = -errno;
                close(fd);
        }
        return e < 0 ? e : fd;
}

void tm_side_trust_of(const char *path, const struct stat *asb, int group_cache,
                      struct tm_side_trust *out)
{
        struct stat a = {0}, d = {0};
        if (asb)
                a = *asb;
        else if (stat(path, &a) != 0)
                memset(&a, 0, sizeof a);
        const char *base;
        int dfd = tm_side_open_dir(path, &base, &d);
        if (dfd >= 0)
                close(dfd);
        else
                memset(&d, 0, sizeof d);
        *out = (struct tm_side_trust){
            .a_uid = a.st_uid,
            .a_gid = a.st_gid,
            .a_mode = a.st_mode,
            .d_uid = d.st_uid,
            .d_gid = d.st_gid,
            .d_mode = d.st_mode,
            .group_cache = group_cache,
        };
}

static int in_group(gid_t g)
{
        if (getegid() == g)
                return 1;
        gid_t list[256];
        int n = getgroups(256, list);
        for (int i = 0; i < n; i++)
                if (list[i] == g)
                        return 1;
        return 0;
}

/* Is user u a member of group g (primary or supplementary, as the system's
 * user database says)? 0 when u has no entry. */
static int user_in_group(uid_t u, gid_t g)
{
        struct passwd pw, *res = NULL;
        char buf[4096];
        if (getpwuid_r(u, &pw, buf, sizeof buf, &res) != 0 || !res)
                return 0;
        if (pw.pw_gid == g)
                return 1;
        int n = 1024;
        gid_t *list = malloc((size_t)n * sizeof *list);
        if (list && getgrouplist(pw.pw_name, pw.pw_gid, list, &n) < 0 && n > 1024 && n <= 65536) {
                gid_t *more = realloc(list, (size_t)n * sizeof *list);
                list = more;
                if (!more || getgrouplist(pw.pw_name, pw.pw_gid, list, &n) < 0)
                        n = 0;
        }
        int found = 0;
        for (int i = 0; list && i < n && !found; i++)
                found = list[i] == g;
        free(list);
        return found;
}

/* Could user w change what a reader sees in the archive trust describes
 * (tm_side.h)? */
static int could_change(const struct tm_side_trust *t, uid_t w)
{
        const unsigned dir_open = !(t->d_mode & S_ISVTX);
        if (w == t->a_uid || w == t->d_uid || (t->a_mode & S_IWOTH) ||
            (dir_open && (t->d_mode & S_IWOTH)))
                return 1;
        return ((t->a_mode & S_IWGRP) && user_in_group(w, t->a_gid)) ||
               (dir_open && (t->d_mode & S_IWGRP) && user_in_group(w, t->d_gid));
}

/* NULL if a file with stat f in the directory with stat d may be believed
 * (tm_side.h), else why not. */
static const char *distrust(const struct stat *f, const struct stat *d,
                            const struct tm_side_trust *t)
{
        if (f->st_uid == geteuid() || f->st_uid == 0 || (t && could_change(t, f->st_uid)))
                return NULL;
        if (!t || !t->group_cache)
                return "written by another user, who cannot change the archive";
        if (!(d->st_mode & S_IWGRP) || (d->st_mode & S_IWOTH))
                return "written by another user, in a directory not shared by a group";
        if (f->st_gid != d->st_gid || !in_group(d->st_gid))
                return "written by another user, not of this directory's group";
        return NULL;
}

/* What a file of mode m is, for "not a regular file (...)". */
static const char *type_name(mode_t m)
{
        if (S_ISFIFO(m))
                return "a FIFO";
        if (S_ISCHR(m))
                return "a character device";
        if (S_ISBLK(m))
                return "a block device";
        if (S_ISSOCK(m))
                return "a socket";
        if (S_ISDIR(m))
                return "a directory";
        return "of another type";
}

int tm_side_open(const char *path, const struct tm_side_trust *trust, unsigned flags, int *fd_out,
                 struct stat *sb, struct tm_err *err)
{
        const char *base;
        struct stat dsb;
        int dfd = tm_side_open_dir(path, &base, &dsb);
        if (dfd < 0)
                return tm_err_set(err, dfd, "%s: %s", path, strerror(-dfd));
        int rc = tm_side_openat(dfd, base, path, trust, flags, fd_out, sb, err);
        close(dfd);
        return rc;
}

int tm_side_openat(int dfd, const char *base, const char *path, const struct tm_side_trust *trust,
                   unsigned flags, int *fd_out, struct stat *sb, struct tm_err *err)
{
        struct stat dsb;
        if (fstat(dfd, &dsb) < 0)
                return tm_err_set(err, -errno, "%s: %s", path, strerror(errno));
        int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        int e = fd < 0 ? -errno : 0;
        if (e == -ELOOP)
                return tm_err_set(err, -EIO, "%s: a symlink, not followed", path);
        if (e < 0)
                return tm_err_set(err, e, "%s: %s", path, strerror(-e));
        const char *why = NULL;
        if (fstat(fd, sb) < 0) {
                e = -errno;
                why = strerror(errno);
        } else if (!S_ISREG(sb->st_mode)) {
                e = -EIO;
        } else if (!(flags & TM_SIDE_ANY_OWNER) && (why = distrust(sb, &dsb, trust)) != NULL) {
                e = -EPERM;
        }
        if (e == 0) {
                *fd_out = fd;
                return 0;
        }
        close(fd);
        if (e == -EPERM)
                return tm_err_set(err, e, "%s: not trusted: %s (uid %u)", path, why,
                                  (unsigned)sb->st_uid);
        if (!why)
                return tm_err_set(err, e, "%s: not a regular file (%s)", path,
                                  type_name(sb->st_mode));
        return tm_err_set(err, e, "%s: %s", path, why);
}

ssize_t tm_side_read(int fd, const struct stat *sb, const char *path, void *buf, size_t max,
                     struct tm_err *err)
{
        if ((uint64_t)sb->st_size > max)
                return tm_err_set(err, -EFBIG, "%s: over %zu bytes", path, max);
        ssize_t n = tm_pread_full(fd, buf, max, 0);
        if (n < 0)
                return tm_err_set(err, (int)n, "%s: %s", path, strerror((int)-n));
        uint8_t more;
        if ((size_t)n == max && tm_pread_full(fd, &more, 1, (uint64_t)n) > 0) /* grew */
                return tm_err_set(err, -EFBIG, "%s: over %zu bytes", path, max);
        return n;
}
