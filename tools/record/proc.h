/* The recorder's process helpers, which both launchers use (record.c:
 * the heap recorder; record_java.c: the Java agent): finding the library
 * to load, LD_PRELOAD's value, the child's fork and exec, its exit status,
 * the name of the archive written when no -o is given.
 * Code: proc.c. */
#ifndef TM_RECORD_PROC_H
#define TM_RECORD_PROC_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* A library tracetool record loads into the program: its file name, the
 * environment variable that overrides where it is, and its directory in
 * the build tree (beside tracetool). record_find finds l as
 * record_find_lib finds libtmrecord.so (record_lib_heap). */
struct record_lib {
        const char *name, *env, *subdir;
};
int record_find(const struct record_lib *l, const char *exe_dir, char *buf, size_t n);

/* LD_PRELOAD for the program: lib in front of old (which may be NULL or
 * empty), separated by a space, into buf (size n). Returns 0, or -1 if it
 * does not fit or lib holds a character LD_PRELOAD splits on (space,
 * colon) and so cannot be preloaded by its path. */
int record_preload_value(const char *lib, const char *old, char *buf, size_t n);

/* Did the exec of a child started with an error pipe (close-on-exec; the
 * child writes exec's errno into it) work? Reads err_fd to its end.
 * Returns 0, or the exec's errno. */
int record_exec_result(int err_fd);

/* fork() as system() does: SIGINT and SIGQUIT ignored in the parent (a ^C
 * is for the program; tracetool stays to finish), their dispositions kept
 * in *s and restored in the child; the parent restores them with
 * record_sigs_restore once the child has ended. Returns fork's value. */
struct record_sigs {
        struct sigaction old_int, old_quit;
};
pid_t record_fork(struct record_sigs *s);
void record_sigs_restore(const struct record_sigs *s);

/* 0 when status (waitpid's) is an exit with 0; else prints how prog ended
 * and returns -1. */
int record_report_status(const char *prog, int status);

/* The archive a recording writes when no -o is given, in the current
 * directory: PROGRAM's file name, the recorded process's pid and suffix
 * (the native format's: "ls.4242.tmn", as heaptrack names its files
 * heaptrack.PROGRAM.PID), into buf (size n). Returns 0, or -1 when it does
 * not fit. */
int record_default_name(const char *prog, pid_t pid, const char *suffix, char *buf, size_t n);

/* The native format's suffix (the registry's row "native": ".tmn"), the
 * default OUT's; is out named so? */
const char *record_native_suffix(void);
int record_is_native(const char *out);

#endif
