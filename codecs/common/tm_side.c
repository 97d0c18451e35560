#include "tm_side.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
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

/* The trust of the archive with stat a in the directory with stat d. */
static void trust_make(const struct stat *a, const struct stat *d, int trust_group,
                       struct tm_side_trust *out)
{
        *out = (struct tm_side_trust){
            .a_uid = a->st_uid,
            .a_gid = a->st_gid,
            .a_mode = a->st_mode,
            .d_uid = d->st_uid,
            .d_gid = d->st_gid,
            .d_mode = d->st_mode,
            .trust_group = trust_group,
        };
}

void tm_side_trust_of(const char *path, const struct stat *asb, int trust_group,
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
        trust_make(&a, &d, trust_group, out);
}

void tm_side_trust_at(int dfd, const struct stat *asb, int trust_group, struct tm_side_trust *out)
{
        struct stat d = {0};
        if (fstat(dfd, &d) != 0)
                memset(&d, 0, sizeof d);
        trust_make(asb, &d, trust_group, out);
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

/* Is the directory mode m one whose entries anyone with write permission
 * may replace (not sticky)? */
static int replaceable(unsigned m)
{
        return !(m & S_ISVTX);
}

/* Could everyone change what a reader sees in the archive trust
 * describes (tm_side.h)? */
static int all_could_change(const struct tm_side_trust *t)
{
        return (t->a_mode & S_IWOTH) || (replaceable(t->d_mode) && (t->d_mode & S_IWOTH));
}

/* Could every member of group g? */
static int group_could_change(const struct tm_side_trust *t, gid_t g)
{
        return all_could_change(t) || ((t->a_mode & S_IWGRP) && g == t->a_gid) ||
               (replaceable(t->d_mode) && (t->d_mode & S_IWGRP) && g == t->d_gid);
}

/* Could user w? */
static int could_change(const struct tm_side_trust *t, uid_t w)
{
        if (w == t->a_uid || w == t->d_uid || all_could_change(t))
                return 1;
        return ((t->a_mode & S_IWGRP) && user_in_group(w, t->a_gid)) ||
               (replaceable(t->d_mode) && (t->d_mode & S_IWGRP) && user_in_group(w, t->d_gid));
}

/* The group the opt-in (trust->trust_group) believes for a side file in
 * the directory with stat d: 1 and *g when d is group-writable, not by
 * others, and the caller is in its group; else 0. */
static int opt_group(const struct tm_side_trust *t, const struct stat *d, gid_t *g)
{
        if (!t || !t->trust_group || !(d->st_mode & S_IWGRP) || (d->st_mode & S_IWOTH) ||
            !in_group(d->st_gid))
                return 0;
        *g = d->st_gid;
        return 1;
}

static int user_ok(const struct tm_side_trust *t, uid_t u)
{
        return u == 0 || u == geteuid() || (t && could_change(t, u));
}

/* The owner of the file with stat f in the directory with stat d: a user
 * as above, or with the opt-in whoever wrote a file of the directory's
 * group (a member, or one who was: only members create files of that
 * group there) or is a member. */
static int owner_ok(const struct tm_side_trust *t, const struct stat *f, const struct stat *d)
{
        gid_t g;
        return user_ok(t, f->st_uid) ||
               (opt_group(t, d, &g) && (f->st_gid == g || user_in_group(f->st_uid, g)));
}

static int group_ok(const struct tm_side_trust *t, const struct stat *d, gid_t g)
{
        gid_t og;
        return t && (group_could_change(t, g) || (opt_group(t, d, &og) && og == g));
}

/* Group g's name, or its number when it has none, in buf (cap bytes). */
static const char *group_name(gid_t g, char *buf, size_t cap)
{
        struct group gr, *res = NULL;
        char tmp[4096];
        if (getgrgid_r(g, &gr, tmp, sizeof tmp, &res) == 0 && res)
                snprintf(buf, cap, "%s", gr.gr_name);
        else
                snprintf(buf, cap, "%u", (unsigned)g);
        return buf;
}

/* Does the file open on fd have an access ACL (which may grant write to
 * users and groups its mode does not name)? */
static int has_acl(int fd)
{
        return fgetxattr(fd, "system.posix_acl_access", NULL, 0) > 0;
}

/* 0 if the file open on fd, with stat f, in the directory with stat d may
 * be believed (tm_side.h); else -EPERM (its owner is not trusted) or
 * -EACCES (others may write or replace it), and why[cap] says why. */
static int distrust(int fd, const struct stat *f, const struct stat *d,
                    const struct tm_side_trust *t, char *why, size_t cap)
{
        const unsigned fm = f->st_mode, dm = d->st_mode;
        const int all_ok = t && all_could_change(t);
        char gn[64];
        if (!owner_ok(t, f, d)) {
                snprintf(why, cap,
                         "written by another user, who cannot change the archive (uid %u)",
                         (unsigned)f->st_uid);
                return -EPERM;
        }
        if (!all_ok && ((fm & S_IWOTH) || ((fm & S_IWGRP) && has_acl(fd))))
                snprintf(why, cap, "writable by all (mode %04o%s)", fm & 07777,
                         fm & S_IWOTH ? "" : " and an ACL");
        else if ((fm & S_IWGRP) && !group_ok(t, d, f->st_gid))
                snprintf(why, cap,
                         "writable by group %s (mode %04o), who cannot change the archive",
                         group_name(f->st_gid, gn, sizeof gn), fm & 07777);
        else if (!user_ok(t, d->st_uid))
                snprintf(why, cap,
                         "its directory belongs to another user, who cannot change the archive "
                         "(uid %u)",
                         (unsigned)d->st_uid);
        else if (!all_ok && replaceable(dm) && (dm & S_IWOTH))
                snprintf(why, cap, "its directory is writable by all and not sticky (mode %04o)",
                         dm & 07777);
        else if (replaceable(dm) && (dm & S_IWGRP) && !group_ok(t, d, d->st_gid))
                snprintf(why, cap,
                         "its directory is writable by group %s and not sticky (mode %04o), who "
                         "cannot change the archive",
                         group_name(d->st_gid, gn, sizeof gn), dm & 07777);
        else
                return 0;
        return -EACCES;
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
        char why[160] = "";
        if (fstat(fd, sb) < 0) {
                e = -errno;
                snprintf(why, sizeof why, "%s", strerror(errno));
        } else if (!S_ISREG(sb->st_mode)) {
                e = -EIO;
                snprintf(why, sizeof why, "not a regular file (%s)", type_name(sb->st_mode));
        } else if (!(flags & TM_SIDE_ANY_OWNER)) {
                e = distrust(fd, sb, &dsb, trust, why, sizeof why);
        }
        if (e == 0) {
                *fd_out = fd;
                return 0;
        }
        close(fd);
        return tm_err_set(err, e, "%s: %s%s", path,
                          e == -EPERM || e == -EACCES ? "not trusted: " : "", why);
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
