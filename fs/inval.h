/* inval: the kernel's cached attributes and pages of a trace whose archive
 * changed are dropped.
 *
 * The kernel keeps a file's attributes (its size) for the attribute
 * timeout and its pages until memory runs short or the daemon says
 * otherwise. When the archive behind a trace's directory is replaced or
 * rewritten in place, what it holds of the trace's views is the old
 * version's: the old size (a reader's fstat) and old pages, which a read
 * of the new version would mix with new ones. So when node.c sees a new
 * identity for an archive (inval_note, its change hook), every node id
 * the kernel holds below that trace's directory (inode.h ino_under), the
 * directory included, gets FUSE_NOTIFY_INVAL_INODE for its attributes
 * and all its pages. The next stat asks again and gets the new size.
 *
 * A thread of this module sends the notifications, never a FUSE request
 * handler: the kernel may need a page lock held by a read that another
 * FUSE thread is answering, or that waits for this very request (libfuse:
 * fuse_lowlevel_notify_inval_inode). Requests not yet sent when the queue
 * is full are merged into one of the whole mount ("/"), never lost. */
#ifndef TMFS_INVAL_H
#define TMFS_INVAL_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

/* Start the thread for session se (mounted). 0 or -errno (the daemon then
 * serves without these invalidations: the timeouts still apply). */
int inval_start(struct fuse_session *se);

/* Stop the thread (pending requests are dropped). Call before the
 * session is unmounted. */
void inval_stop(void);

/* The archive shown at mount path mpath (absolute: "/dir/x.pdt2.zst")
 * changed: queue the invalidation of everything below it. Never blocks on
 * the kernel; nothing when the thread is not running. Any thread. */
void inval_note(const char *mpath);

#endif
