/* cachepath: where a trace's index file lives.
 *
 * Beside the archive: "<dir>/.<name>.tmidx". In the cache directory:
 * "<cache>/<16 hex digits of FNV-1a 64 of the absolute path>-<name>.tmidx",
 * where <cache> is the caller's choice or $XDG_CACHE_HOME/tracemount or
 * $HOME/.cache/tracemount. The hash keeps archives of the same name in
 * different directories apart; the name keeps the cache readable. */
#ifndef TM_CACHEPATH_H
#define TM_CACHEPATH_H

/* Path of the index beside the archive at abs_path. malloc'd; NULL on
 * ENOMEM. */
char *tm_cachepath_beside(const char *abs_path);

/* The cache directory: cache_dir when given (not NULL nor empty), else
 * the default, $XDG_CACHE_HOME/tracemount (when that is absolute) or
 * $HOME/.cache/tracemount. malloc'd; NULL when none can be named (no
 * $XDG_CACHE_HOME nor $HOME) or on ENOMEM. */
char *tm_cachepath_dir(const char *cache_dir);

/* Path of the index in the cache directory (cache_dir may be NULL for the
 * default, tm_cachepath_dir); *dir_out (may be NULL) gets the directory,
 * malloc'd. NULL when no cache directory can be named or on ENOMEM. */
char *tm_cachepath_cache(const char *cache_dir, const char *abs_path, char **dir_out);

/* The cache directory dir opened for index files to be named in
 * (O_PATH | O_DIRECTORY, following symlinks: the one look-up of its path;
 * a daemon does it once, at mount), made first with tm_cachepath_mkdirs
 * when missing and make is set. Returns the descriptor or a negative
 * errno (-ENOTDIR: something else is at dir). */
int tm_cachepath_open(const char *dir, int make);

/* The caller's own index path beside the shared one cache_path
 * ("<...>.tmidx" -> "<...>.u<euid>.tmidx"): used when the shared file is
 * another user's who is not trusted (views/ixfile.h), so that two such
 * users do not replace each other's file in turn. malloc'd; NULL on
 * ENOMEM. */
char *tm_cachepath_own(const char *cache_path);

/* mkdir -p dir: mode 0755, or 03775 below a setgid, group-writable
 * directory (a lab's shared cache). Returns 0 or a negative errno
 * (-ENOTDIR when dir exists but is not a directory). */
int tm_cachepath_mkdirs(const char *dir);

#endif
