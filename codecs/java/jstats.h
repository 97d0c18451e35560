/* jstats: the java family's statistics (codecs/record/family.h), for a
 * schema the family claims (kinds method_entry and object_alloc, fields
 * thread, class, method and object: tm_schema_java, or a Meta-TF DTD
 * using those names). Gathered in the index pass:
 *
 *   events per type   records of each kind of tm_schema_java
 *   classes loaded    class_load records
 *   classes, methods  distinct class names and distinct class.method
 *                     pairs named by any record: the interning table
 *   notes             comment records (their text: the trace's notes,
 *                     which the views show) are counted, not events
 *   objects           allocated (object_alloc), freed (object_free), live
 *                     at the end and at most: the paper makes an object id
 *                     unique, so live = allocated - freed so far; a free
 *                     when none is live (an object allocated before the
 *                     trace began) is counted apart and changes nothing
 *   per thread        records, method entries, stack depth at the end and
 *                     at most (method_entry +1, method_exit and frame_pop
 *                     -1; an exit at depth 0, of a frame entered before
 *                     the trace began, is counted apart), for the first
 *                     TM_JAVA_STATS_IDS threads seen; the rest are counted
 *                     together, and the maximum stack depth of the whole
 *                     trace is then not known (inexact)
 *
 * Interning is bounded: the names are kept in the accumulator (never in
 * the decoder state, which stays a 16-byte copy), at most
 * TM_JAVA_NAMES_MAX names and TM_JAVA_NAME_BYTES bytes of them; a name
 * met past that is not added and sets names_inexact, and the counts of
 * classes and methods are then lower bounds ("at least"). The thread ids
 * are the family's per-id streams (streams/thread/<id>).
 *
 * The tables (the family's tables hook: sections/classes, sections/
 * methods) list the interned names, a line `number name` each, numbered
 * from 0 per set in the order first met. The binary view's record is the
 * family's (its binary hook, given the accumulator that made the tables):
 * TM_JAVA_BIN_SIZE bytes, little-endian, no padding:
 *
 *   offset  bytes  field
 *    0      4      kind       enum tm_java_kind; 2^32 - 1 for a kind of a
 *                             claimed schema that tm_schema_java lacks
 *    4      4      present    bit f (enum tm_java_field): the kind has f
 *    8      8      time
 *   16      8      thread
 *   24      8      object
 *   32      4      class_no   the class's number in sections/classes
 *   36      4      method_no  class.method's number in sections/methods
 *
 * A field the kind lacks is 0; a name that is not in its table (met past
 * the bound) is TM_JAVA_UNNUMBERED, which no name can be given (numbers
 * stay below TM_JAVA_NAMES_MAX). */
#ifndef TM_JSTATS_H
#define TM_JSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "../record/family.h"
#include "jtrace.h"

#define TM_JAVA_STATS_IDS TM_FAMILY_STREAMS_MAX
#define TM_JAVA_NAMES_MAX (1u << 20)
#define TM_JAVA_NAME_BYTES (64u << 20)
#define TM_JAVA_BIN_SIZE 40
#define TM_JAVA_UNNUMBERED UINT32_MAX

/* The statistics block: 64-bit words only (family.h). */
struct tm_java_stats {
        uint64_t events[TM_JK_N];
        uint64_t classes, methods; /* distinct names interned */
        uint64_t names_inexact;    /* 1: the table was full, classes and methods are lower bounds */
        uint64_t allocs, frees, live, max_live;
        uint64_t frees_not_live; /* object_free records when none was live */
        uint64_t max_depth;      /* over the threads counted one by one */
        uint64_t depth_inexact;  /* 1: threads past TM_JAVA_STATS_IDS, max_depth not known */
        uint64_t exits_not_entered;
        uint64_t nthreads;
        uint64_t thread_id[TM_JAVA_STATS_IDS], thread_n[TM_JAVA_STATS_IDS];
        uint64_t thread_entries[TM_JAVA_STATS_IDS], thread_depth[TM_JAVA_STATS_IDS];
        uint64_t thread_max_depth[TM_JAVA_STATS_IDS];
        uint64_t thread_other, thread_other_entries;
};

/* A method's key in sections/methods (key[0..n)): its class, a '.', its
 * method. A class name can hold '.' (a JVM hidden class:
 * java/lang/invoke/LambdaForm$MH.0x00007f12) and a method name cannot (the
 * JVM's rule for method names), so the class is key[0..i) with i the last
 * '.': returns i, or n when key holds no '.'. */
size_t tm_java_method_split(const uint8_t *key, size_t n);

#endif
