/* ops: the FUSE operations of tracemount (libfuse's low-level API).
 *
 * Read-only. Node ids map to mount paths through inode.c, and paths are
 * resolved by node.c; a view file open holds a struct tm_vfile behind a
 * mutex (FUSE may call read concurrently on one handle), a pass-through
 * file open holds the source file's fd. Errors reading a trace are
 * returned as EIO and their message is logged once.
 *
 * The low-level API is used for one thing the path-based one cannot do:
 * a read reply is written to the kernel straight from the read-ahead's
 * segment buffers (tm_vfile_peek), held until it has gone, where the
 * path-based API has the bytes copied into its own buffer first. */
#ifndef TMFS_OPS_H
#define TMFS_OPS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

/* Daemon-wide settings, the FUSE session's user data. */
struct tmfs_conf {
        /* 1: open view files with direct_io: reads bypass the kernel page
         * cache, so a one-pass cold read costs one copy instead of two. On
         * the 2-vCPU project VM a cold cat of 953 MB of ascii takes 0.37 s
         * (0.41-0.44 s through the page cache), but grep is slower (1.8 s
         * vs 1.3 s: no kernel readahead, each read waits for the daemon),
         * nothing stays cached for the next reader and mmap(2) of a view
         * fails. Pass-through files are unaffected. See docs/performance.md. */
        int direct_io;
        /* KiB of kernel readahead to set for the mount once it is up (see
         * bdi.h); 0: leave the kernel's */
        unsigned read_ahead_kb;
        /* MiB of a sequential reader's past that stays in the page cache
         * (drop.h); 0: all of it */
        unsigned drop_behind_mb;
        const char *mnt; /* the mount point, a real path */
};

/* The operations; node_init and ino_init must have run before the session
 * starts, and its userdata must be a struct tmfs_conf that outlives it. */
extern const struct fuse_lowlevel_ops tmfs_ops;

#endif
