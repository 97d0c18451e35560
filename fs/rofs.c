#include "rofs.h"

#include <errno.h>

static void rofs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                         struct fuse_file_info *fi)
{
        (void)ino, (void)attr, (void)to_set, (void)fi;
        fuse_reply_err(req, EROFS);
}

static void rofs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
        (void)parent, (void)name, (void)mode, (void)rdev;
        fuse_reply_err(req, EROFS);
}

static void rofs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
        (void)parent, (void)name, (void)mode;
        fuse_reply_err(req, EROFS);
}

/* unlink and rmdir */
static void rofs_remove(fuse_req_t req, fuse_ino_t parent, const char *name)
{
        (void)parent, (void)name;
        fuse_reply_err(req, EROFS);
}

static void rofs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
        (void)link, (void)parent, (void)name;
        fuse_reply_err(req, EROFS);
}

static void rofs_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
                        const char *newname, unsigned flags)
{
        (void)parent, (void)name, (void)newparent, (void)newname, (void)flags;
        fuse_reply_err(req, EROFS);
}

static void rofs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
        (void)ino, (void)newparent, (void)newname;
        fuse_reply_err(req, EROFS);
}

static void rofs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                        struct fuse_file_info *fi)
{
        (void)parent, (void)name, (void)mode, (void)fi;
        fuse_reply_err(req, EROFS);
}

static void rofs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
                          size_t size, int flags)
{
        (void)ino, (void)name, (void)value, (void)size, (void)flags;
        fuse_reply_err(req, EROFS);
}

static void rofs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
        (void)ino, (void)name;
        fuse_reply_err(req, EROFS);
}

void rofs_fill(struct fuse_lowlevel_ops *ops)
{
        ops->setattr = rofs_setattr;
        ops->mknod = rofs_mknod;
        ops->mkdir = rofs_mkdir;
        ops->unlink = rofs_remove;
        ops->rmdir = rofs_remove;
        ops->symlink = rofs_symlink;
        ops->rename = rofs_rename;
        ops->link = rofs_link;
        ops->create = rofs_create;
        ops->setxattr = rofs_setxattr;
        ops->removexattr = rofs_removexattr;
}
