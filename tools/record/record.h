/* tracetool record: run a program and record its heap operations.
 *
 *   tracetool record -o OUT [-e ENCODING] [--] PROGRAM [ARGS...]
 *
 * The program runs with libtmrecord.so (preload.c) in LD_PRELOAD, which
 * writes a HATF stream into a pipe; tracetool reads the pipe and packs it
 * into OUT (pack_fd: compact HATF, in the container OUT's name asks
 * for). docs/record.md tells how and why.
 *
 *   tracetool record --java[=nothis] -o OUT.zip [--] java [ARGS...]
 *
 * runs java with the JVMTI agent libtmjava.so instead, which writes OUT
 * (record_java.c; docs/record.md "Java"). */
#ifndef TM_RECORD_TOOL_H
#define TM_RECORD_TOOL_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* The command: argv[0] is "record". Returns the exit status: 0 when the
 * program exited 0 and OUT was written; 1 when the program failed (its exit
 * status or signal is printed; OUT is still written from what it recorded)
 * or packing failed; 2 for a usage error (the message names the option). */
int record_main(int argc, char **argv);

/* The path of libtmrecord.so into buf (size n): $TM_RECORD_LIB if set
 * (taken as it is); else the first that exists of, beside the running
 * tracetool (exe_dir, NULL: /proc/self/exe's directory): record/ (the build
 * tree), ../RELLIBDIR/, ../lib/; else the install libdir. Returns 0, or -1
 * if none exists (buf then holds the install path, for the message). */
int record_find_lib(const char *exe_dir, char *buf, size_t n);

/* A library tracetool record loads into the program: its file name, the
 * environment variable that overrides where it is, and its directory in
 * the build tree (beside tracetool). record_find finds l as
 * record_find_lib finds libtmrecord.so (record_lib_heap). */
struct record_lib {
        const char *name, *env, *subdir;
};
extern const struct record_lib record_lib_heap, record_lib_java;
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

/* tracetool record --java[=nothis] -o OUT -- java ARGS... (record_java.c,
 * docs/record.md "Java"): runs the java command with the JVMTI agent
 * (libtmjava.so, found as record_lib_java) loaded by an -agentpath option
 * inserted after its first word, then opens OUT, builds its index and
 * prints a one-line summary. nothis: the agent's nothis option. Returns the
 * exit status as record_main's. */
enum { RECORD_JAVA = 1, RECORD_JAVA_NOTHIS = 2 };
int record_java(const char *out, int nothis, char **prog);

#endif
