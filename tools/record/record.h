/* tracetool record: run a program and record its heap operations.
 *
 *   tracetool record -o OUT [-e ENCODING] [--] PROGRAM [ARGS...]
 *
 * The program runs with libtmrecord.so (preload.c) in LD_PRELOAD, which
 * writes a HATF stream into a pipe; tracetool reads the pipe and packs it
 * into OUT (pack_fd: compact HATF, in the container OUT's name asks
 * for). docs/record.md tells how and why. */
#ifndef TM_RECORD_TOOL_H
#define TM_RECORD_TOOL_H

#include <stddef.h>

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

/* LD_PRELOAD for the program: lib in front of old (which may be NULL or
 * empty), separated by a space, into buf (size n). Returns 0, or -1 if it
 * does not fit or lib holds a character LD_PRELOAD splits on (space,
 * colon) and so cannot be preloaded by its path. */
int record_preload_value(const char *lib, const char *old, char *buf, size_t n);

#endif
