/* walk: open an entry of the source tree below its root directory
 * descriptor, with no symlink followed in any component.
 *
 * The daemon runs as root for every user (allow_other): a path string
 * opened by name would follow a symlink that a user planted in any
 * directory component of it, and name a file the user may not read (or
 * a directory where an index file must not be written). Every daemon-side
 * open of a source entry goes through walk_open instead: openat2(2) with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS where the
 * kernel has it (Linux 5.6+), else one openat(2) per component with
 * O_NOFOLLOW, each below the last. Either way a symlink in any component
 * fails the walk (ELOOP), "..", an absolute path or a magic link never
 * leaves the root, and the object reached is what was at the path at that
 * moment: the caller compares its identity (fstat) with the one it knows.
 *
 * Threads: every function may be called from any thread. */
#ifndef TMFS_WALK_H
#define TMFS_WALK_H

/* Open rel (a path relative to rootfd with no ".." component; "" or "."
 * is rootfd's directory itself) with open flags (O_RDONLY, O_PATH,
 * O_DIRECTORY, O_NONBLOCK; O_CLOEXEC and O_NOFOLLOW are added). The last
 * component is not followed either: a symlink there gives, with O_PATH,
 * a descriptor of the symlink itself, else -ELOOP (-ENOTDIR with
 * O_DIRECTORY). Returns a descriptor or a negative errno: -ELOOP (a
 * symlink in some component), -EXDEV (the path would leave rootfd),
 * -ENOTDIR (a component before the last is not a directory), or what
 * openat gives (-ENOENT, -EACCES, -EIO, ...). */
int walk_open(int rootfd, const char *rel, int flags);

/* Open the directory holding rel's last component (O_PATH | O_DIRECTORY,
 * as walk_open) and set *base to that component (a pointer into rel;
 * "." for rel ""). Returns a descriptor or a negative errno as walk_open;
 * -ENAMETOOLONG when the directory part does not fit PATH_MAX. */
int walk_open_parent(int rootfd, const char *rel, const char **base);

/* Which walker walk_open uses: WALK_AUTO (openat2 while the kernel has
 * it, the default), WALK_COMPONENTS (the per-component walk always: tests,
 * and the environment variable TM_WALK=components at the first call). */
enum walk_mode { WALK_AUTO, WALK_COMPONENTS };
void walk_set_mode(enum walk_mode m);

#endif
