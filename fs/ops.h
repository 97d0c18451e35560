/* ops: the FUSE (high-level, path based) operations of tracemount.
 *
 * Read-only. Paths are resolved by node.c; a view file open holds a
 * struct tm_vfile behind a mutex (FUSE may call read concurrently on one
 * handle), a pass-through file open holds the source file's fd. Errors
 * reading a trace are returned as -EIO and their message is logged once. */
#ifndef TMFS_OPS_H
#define TMFS_OPS_H

#define FUSE_USE_VERSION 35
#include <fuse.h>

/* The operations; node_init must have run before fuse_main. */
extern const struct fuse_operations tmfs_ops;

#endif
