/* rofs: the write-type requests of tracemount, every one refused with EROFS.
 *
 * main.c mounts read-only whatever mount(8) passes, so the kernel answers
 * EROFS itself; these answer the same when root has remounted the mount
 * rw (mount -o remount,rw), where libfuse's default would be ENOSYS
 * ("Function not implemented"), or EPERM for link. */
#ifndef TMFS_ROFS_H
#define TMFS_ROFS_H

#include "ops.h"

/* Set the write-type operations of ops (setattr, mknod, mkdir, unlink,
 * rmdir, symlink, rename, link, create, setxattr, removexattr) to the
 * EROFS answers; the others are left as they are. */
void rofs_fill(struct fuse_lowlevel_ops *ops);

#endif
