/* tm_side: files looked up by name beside an archive (an index file, a
 * Meta-TF DTD), which other users may have put there
 * (docs/side-files.md).
 *
 * Such a file is opened so that nothing at its name can block or redirect
 * the open: its directory first, then the name relative to it with
 * O_NOFOLLOW (a symlink is refused, not followed) and O_NONBLOCK (a FIFO
 * or a device answers at once instead of waiting for a writer). It is
 * then judged on the descriptor: a regular file, written by a user
 * trusted with the archive, of a bounded size, read with bounded reads.
 * One rule for every side file: the index loader (views/ixfile.c) and the
 * Meta-TF DTD lookup (codecs/metatf/metatf.c) both use this. A caller
 * that holds the archive's directory (the views, below a daemon's source
 * root) opens its side files in that descriptor (tm_side_openat,
 * tm_side_trust_at), so no name of a directory is looked up again. */
#ifndef TM_SIDE_H
#define TM_SIDE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "tm_err.h"

/* Who could change the bytes a reader sees in the archive without the
 * side file: its owner, group and mode, and those of the directory
 * holding its name (whoever may replace that entry). A side file is
 * believed only when everyone who can write it, or replace it in its
 * directory, is such a writer (or root, or the caller), so believing it
 * gives nobody power over the views that they did not have already
 * (docs/side-files.md, "Whom a side file is believed from"). */
struct tm_side_trust {
        unsigned a_uid, a_gid, a_mode; /* the archive */
        unsigned d_uid, d_gid, d_mode; /* its directory */
        /* Opt-in (--trust-group-index for index files, --trust-group-dtd
         * for DTDs): in a side file's directory that its group may write
         * and others may not, also believe that group and its members
         * when the caller is in it (a lab that trusts its members with
         * the archives they cannot change). */
        int trust_group;
};

/* The trust of the archive at path: asb is its stat (NULL: stat path
 * now, following symlinks), its directory (that of path as given) is
 * stat'ed now. What cannot be stat'ed counts as root's with mode 0, which
 * trusts nobody more than the caller and root. */
void tm_side_trust_of(const char *path, const struct stat *asb, int trust_group,
                      struct tm_side_trust *out);

/* The trust of the archive with stat asb in the directory dfd (any
 * descriptor of it, O_PATH is enough; fstat'ed now, its name never
 * looked at): for a caller that reached that directory itself. A
 * directory that cannot be stat'ed counts as root's with mode 0, as
 * above. */
void tm_side_trust_at(int dfd, const struct stat *asb, int trust_group, struct tm_side_trust *out);

/* Open the directory holding path for lookups below it (O_PATH: search
 * permission is enough), following symlinks (a directory is judged by
 * what it is); *base gets path's last component, *dsb the directory's
 * stat. Returns a descriptor or a negative errno. */
int tm_side_open_dir(const char *path, const char **base, struct stat *dsb);

/* Flags of tm_side_open. TM_SIDE_ANY_OWNER: no writer rule, for a
 * directory the caller named (TM_DTD_PATH), not one beside an archive. */
#define TM_SIDE_ANY_OWNER 1u

/* Open the side file at path for reading, as above. Unless flags has
 * TM_SIDE_ANY_OWNER, everyone who may change it must be trusted:
 *
 * - who may change it: its owner; its group when it is group-writable;
 *   anyone when it is writable by all; its directory's owner; the
 *   directory's group when that is group-writable and not sticky; anyone
 *   when the directory is writable by all and not sticky (in a sticky
 *   directory others may add names but replace only their own entries,
 *   and the file's owner is counted already);
 * - who is trusted: root and the caller (euid); with trust (may be NULL)
 *   whoever could change the archive: its owner, the directory's owner, a
 *   member of the archive's group when it is group-writable, of the
 *   directory's group when that is group-writable and not sticky, anyone
 *   when either is writable by all (the directory not sticky); a group is
 *   trusted as a whole when it is one of these groups; with
 *   trust->trust_group also the opt-in above.
 *
 * A file with an access ACL that lets more than its mode says write it
 * (group bits with write, an ACL) counts as writable by all.
 *
 * Returns 0 with *fd_out and *sb; -ENOENT (nothing at the name); -EIO (a
 * symlink, or not a regular file); -EPERM (its owner is not trusted);
 * -EACCES (its owner is trusted, but others may write it or replace it);
 * another negative errno (EACCES from open, ...). err names path and the
 * reason, e.g. "/d/x.dtd: not a regular file (a FIFO)", "/d/x.dtd: not
 * trusted: writable by all (mode 0666)". */
int tm_side_open(const char *path, const struct tm_side_trust *trust, unsigned flags, int *fd_out,
                 struct stat *sb, struct tm_err *err);

/* tm_side_open of the name base in the directory dfd (any descriptor of
 * it, O_PATH is enough), which is not reopened by name: for a caller that
 * reached that directory itself (the daemon, below its source root).
 * path names the file in messages only. Returns as tm_side_open. */
int tm_side_openat(int dfd, const char *base, const char *path, const struct tm_side_trust *trust,
                   unsigned flags, int *fd_out, struct stat *sb, struct tm_err *err);

/* Read the whole side file fd (opened by tm_side_open, sb its stat) into
 * buf when it holds at most max bytes (buf has room for max). Returns its
 * length, or -EFBIG (over max, also when it grew since the stat) or
 * another negative errno, err naming path. */
ssize_t tm_side_read(int fd, const struct stat *sb, const char *path, void *buf, size_t max,
                     struct tm_err *err);

#endif
