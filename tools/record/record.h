/* tracetool record: run a program and record its heap operations.
 *
 *   tracetool record [-o OUT] [-e ENCODING] [--] PROGRAM [ARGS...]
 *
 * The program runs with libtmrecord.so (preload.c) in LD_PRELOAD, which
 * writes a HATF stream into a pipe; tracetool reads the pipe and packs it
 * into OUT (pack_fd, handed in as struct record_packer), by default
 * PROGRAM.PID.tmn in the current directory (the native format), else in
 * the format and container OUT's name asks for. docs/record.md tells how
 * and why.
 *
 *   tracetool record --java[=nothis] [-o OUT] [--] java [ARGS...]
 *
 * runs java with the JVMTI agent libtmjava.so instead, which writes a ZIP:
 * OUT itself when OUT is not native, else a temporary one packed into OUT
 * (record_java.c; docs/record.md "Java"). */
#ifndef TM_RECORD_TOOL_H
#define TM_RECORD_TOOL_H

#include <stddef.h>
#include <stdio.h>

#include "proc.h"
#include "tools/lib_int.h"

/* What the recorder packs its stream with: tracetool's packer (pack.h),
 * handed in by tracetool.c, so that the recorder, a part of the CLI,
 * calls none of its commands. */
struct record_packer {
        int (*parse_level)(const char *s, int *level); /* as pack_parse_level */
        int (*pack_fd)(int fd, const char *in_name, const char *out_path, const char *enc,
                       int level, FILE *msg, struct tm_err *err); /* as pack_fd */
        int level;      /* the default level of a .zst OUT (PACK_RECORD_LEVEL) */
        int pack_level; /* tracetool pack's (PACK_LEVEL), which --help names */
};

/* The command: argv[0] is "record"; pk packs the stream. Returns the exit
 * status: 0 when the program exited 0 and OUT was written; 1 when the
 * program failed (its exit status or signal is printed; OUT is still
 * written from what it recorded) or packing failed; 2 for a usage error
 * (the message names the option). */
int record_main(int argc, char **argv, const struct record_packer *pk);

/* The path of libtmrecord.so into buf (size n): $TM_RECORD_LIB if set
 * (taken as it is); else the first that exists of, beside the running
 * tracetool (exe_dir, NULL: /proc/self/exe's directory): record/ (the build
 * tree), ../RELLIBDIR/, ../lib/; else the install libdir. Returns 0, or -1
 * if none exists (buf then holds the install path, for the message). */
int record_find_lib(const char *exe_dir, char *buf, size_t n);

/* The recorders' libraries (struct record_lib: proc.h): libtmrecord.so
 * (record.c), libtmjava.so (record_java.c). */
extern const struct record_lib record_lib_heap, record_lib_java;

/* tracetool record --java[=nothis] [-o OUT] -- java ARGS... (record_java.c,
 * docs/record.md "Java"): runs the java command with the JVMTI agent
 * (libtmjava.so, found as record_lib_java) loaded by an -agentpath option
 * inserted after its first word, then opens what it wrote, builds its
 * index and prints a one-line summary. The agent writes a ZIP: OUT itself
 * when OUT is given and not in the native format; else (OUT native, or
 * none: java.PID.tmn) a temporary ZIP beside OUT, which pk packs into OUT;
 * OUT's statistics must then be the ZIP's (every record decoded in both)
 * for the ZIP to be removed, else it is kept and named. nothis: the
 * agent's nothis option. Returns the exit status as record_main's. */
enum { RECORD_JAVA = 1, RECORD_JAVA_NOTHIS = 2 };
int record_java(const struct record_packer *pk, const char *out, int nothis, char **prog);

#endif
