/* Java execution traces (the `trace` member of the Java tracing tool's ZIP
 * files, Appendix B of its report) as a record codec of the java family.
 *
 * The text is one event a line, `XX:<time stamp>` and the event's
 * parameters, ':'-separated (docs/formats/java.md). Each event type is a
 * kind whose native tag is its two letters ('V' << 8 | 'S'); the fields
 * are the paper's parameters, in its order:
 *
 *   tag  kind          fields
 *   VS   vm_start      time
 *   VI   vm_init       time
 *   VD   vm_death      time
 *   CL   class_load    time class
 *   OA   object_alloc  time class object
 *   OF   object_free   time class object
 *   TB   thread_start  time thread
 *   TE   thread_end    time thread
 *   MN   method_entry  time thread class method object
 *   MX   method_exit   time thread class method
 *   FP   frame_pop     time thread class method
 *   #    comment       text
 *
 * Numbers are unsigned decimal (at most 2^64 - 1); class and method
 * names are text fields holding the bytes written (non-empty, no ':'; a
 * method name has no '.', a class name can: a JVM hidden class's does).
 * Names are not interned by the decoder: its state is the line count and
 * which of VS, VI, VD were seen (16 bytes), so a checkpoint is a copy;
 * the java family's statistics pass interns them (jstats.h, and
 * docs/formats/java.md "Names" for why). A comment line is `#` and its
 * text (one space after the `#` is not part of it), only before the first
 * event: the trace's notes, what its recorder could not see (the views
 * show leading comments as notes). Order rules the decoder checks: the
 * first event is VS, with only comments before it; VS, VI and VD come
 * once each at most; nothing follows VD. Decode-only. */
#ifndef TM_JTRACE_H
#define TM_JTRACE_H

#include <stddef.h>

#include "../record/record.h"

/* Longest line accepted, without its newline. */
#define TM_JAVA_LINE_MAX 65535

enum tm_java_kind {
        TM_JK_VM_START,
        TM_JK_VM_INIT,
        TM_JK_VM_DEATH,
        TM_JK_CLASS_LOAD,
        TM_JK_OBJECT_ALLOC,
        TM_JK_OBJECT_FREE,
        TM_JK_THREAD_START,
        TM_JK_THREAD_END,
        TM_JK_METHOD_ENTRY,
        TM_JK_METHOD_EXIT,
        TM_JK_FRAME_POP,
        TM_JK_COMMENT, /* a note line, `#` and its text: not an event */
        TM_JK_N,
};

#define TM_JK_EVENTS TM_JK_COMMENT /* kinds below it are the paper's events */

/* Field indexes in tm_schema_java. */
enum tm_java_field {
        TM_JF_TIME,
        TM_JF_THREAD,
        TM_JF_CLASS,
        TM_JF_METHOD,
        TM_JF_OBJECT,
        TM_JF_TEXT, /* a comment's */
        TM_JF_N,
};

#define TM_JF_EVENTS TM_JF_TEXT /* fields below it are the events' (binary's) */

extern const struct tm_schema tm_schema_java;
extern const struct tm_rcodec tm_rcodec_java;

/* The java family's row of tm_families (jstats.c: its statistics and
 * streams), the family of tm_rcodec_java. */
extern const struct tm_family tm_family_java;

/* Is line (len bytes, no newline) a well-formed event or comment line? */
int tm_java_line_ok(const char *line, size_t len);

#endif
