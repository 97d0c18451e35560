/* inode: the FUSE node ids the kernel holds, each standing for a mount path.
 *
 * The low-level FUSE API names files by node id, the kernel's handle for an
 * inode it looked up; node.c works on paths. This table maps one to the
 * other. A lookup (ino_ref) gives a path an id, new or the one it has, and
 * counts one kernel reference; FORGET (ino_forget) gives them back, and at
 * zero the id is dropped for good (ids are never reused, so a stale id
 * cannot name another file). Id 1 (FUSE_ROOT_ID) is the mount's root, "/",
 * and is never forgotten.
 *
 * An id names a path and a version of what is there (ino_ref_ver): the
 * source's own entries have version 0 and keep their id when the file
 * behind them changes (node.c sees the new file at the next resolve); a
 * trace's nodes have the archive's identity as version, and a lookup that
 * finds another version retires the old id (it keeps its path until the
 * kernel forgets it) and makes a new one, so the kernel holds another
 * inode, with its own size and pages, for each version of an archive.
 * What the kernel was last told the id stands for (a lookup's or
 * getattr's reply: its attributes, with the source object's device and
 * inode, the archive's for a trace's nodes) is kept with it
 * (ino_set_object), so that an open can refuse another object found at
 * the path since (ino_same_object, ino_same_version): the kernel checked
 * the caller's permissions against the attributes it was told, and
 * another file's bytes must not pass that check. The attributes told
 * answer a getattr of a retired id (ino_told_attr), and the size told is
 * the file's size for the kernel until it asks again: a read inside it
 * that finds the view ended is an error, not the end of the file (ops.c).
 * ino_under lists the ids below a trace's directory, whose cached
 * attributes and pages the kernel drops when the archive behind them
 * changes (inval.h).
 *
 * Threads: every function may be called from any FUSE worker thread. */
#ifndef TMFS_INODE_H
#define TMFS_INODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define INO_ROOT 1

/* Set up an empty table (root only). 0 or -ENOMEM. */
int ino_init(void);

/* Free the table. No other call may be running. */
void ino_fini(void);

/* Copy the path of ino (absolute, "/" for the root) into buf of n bytes.
 * 0, -ENOENT for an id not in the table, -ENAMETOOLONG. */
int ino_path(uint64_t ino, char *buf, size_t n);

/* The id of path (absolute, as ino_path gives) for version ver of what
 * it stands for, made if new, with one more kernel reference. 0 when out
 * of memory. When the path's id is of another version (a trace's node
 * whose archive changed: ops.c gives each archive identity its own
 * version), that id is retired: it keeps its path for ino_path, and stays
 * until the kernel forgets it, but a lookup of the path gets a new id.
 * So the kernel keeps another inode, with its own size and pages, for
 * each version of an archive: pages of two versions never meet in one
 * file, and the old version's open files keep their size. The root is
 * never retired. */
uint64_t ino_ref_ver(const char *path, uint64_t ver);

/* ino_ref_ver(path, 0). */
uint64_t ino_ref(const char *path);

/* Is ver the version ino was made for? 1 (always for the root), 0 if
 * not, -ENOENT for an id not in the table. */
int ino_same_version(uint64_t ino, uint64_t ver);

/* Drop n kernel references to ino; the id goes at zero. Unknown ids and
 * the root are ignored. */
void ino_forget(uint64_t ino, uint64_t n);

/* The kernel was told that ino has the attributes st (a lookup's or
 * getattr's reply), its st_dev and st_ino the source object's (the
 * archive's for a trace's nodes), st_size the view's. Unknown ids are
 * ignored. */
void ino_set_object(uint64_t ino, const struct stat *st);

/* The attributes last told for ino into *st: 1, 0 when nothing was told
 * yet, -ENOENT for an id not in the table. */
int ino_told_attr(uint64_t ino, struct stat *st);

/* The size the kernel was last told ino has into *size: 1, 0 when nothing
 * was told yet, -ENOENT for an id not in the table. */
int ino_told_size(uint64_t ino, uint64_t *size);

/* The ids of path (absolute, as ino_path gives) and of every path below
 * it ("/": every id), root included when it is one: the first max of them
 * into ids. Returns how many there are (more than max: call again with a
 * larger array). One pass over the table. */
size_t ino_under(const char *path, uint64_t *ids, size_t max);

/* Is (dev, obj) the object the kernel was last told ino stands for? 1
 * (also when nothing was told yet), 0 if another, -ENOENT for an id not
 * in the table. */
int ino_same_object(uint64_t ino, uint64_t dev, uint64_t obj);

/* Ids in the table besides the root (tests). */
size_t ino_count(void);

#endif
