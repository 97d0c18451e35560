/* lapfamily: the laplace family's statistics (codecs/record/family.h),
 * for the schemas the family claims: a reference trace's (a kind "ref"
 * with fields type, time, size, space and address: both forms, and the
 * encoders' schema) and the kernel events' (tm_schema_laplace_kev).
 * Gathered in the index pass:
 *
 *   references per type   the type byte's 256 values, reported as letters
 *   records per space     per address space (the field space, of
 *                         references and kernel events), for the first
 *                         TM_LAPLACE_SPACES spaces to appear, in that
 *                         order; records in the others are counted
 *                         together and the number of spaces is then a
 *                         lower bound ("at least"); these spaces are the
 *                         family's per-id streams (streams/space/<id>)
 *   events per tag        the kernel events of each tag of the catalog
 *
 * The block is a fixed 3 KiB: memory does not grow with the trace. */
#ifndef TM_LAPFAMILY_H
#define TM_LAPFAMILY_H

#include <stdint.h>

#include "../record/family.h"
#include "../record/record.h"

/* The kernel events' catalog (laplace_kev.c reads them; the paper's copy
 * names none: docs/formats/laplace.md), kind index = tag index, every
 * number hex on the line:
 *
 *   fork   TIME SPACE CHILD          a process (SPACE) made another (CHILD)
 *   exec   TIME SPACE                SPACE runs a new program
 *   exit   TIME SPACE                SPACE ended
 *   switch TIME SPACE                SPACE runs from now on (a context switch)
 *   mmap   TIME SPACE ADDRESS SIZE   a region mapped into SPACE
 *   munmap TIME SPACE ADDRESS SIZE   a region unmapped */
enum { TM_LPK_FORK, TM_LPK_EXEC, TM_LPK_EXIT, TM_LPK_SWITCH, TM_LPK_MMAP, TM_LPK_MUNMAP, TM_LPK_N };

/* The fields of the kernel event schema, in its order. */
enum { TM_LPKF_TIME, TM_LPKF_SPACE, TM_LPKF_CHILD, TM_LPKF_ADDRESS, TM_LPKF_SIZE, TM_LPKF_N };

/* The kernel event schema (the kinds above). */
extern const struct tm_schema tm_schema_laplace_kev;


#define TM_LAPLACE_SPACES TM_FAMILY_STREAMS_MAX

/* The statistics block: 64-bit words only (family.h). */
struct tm_laplace_stats {
        uint64_t refs;           /* records of the kind ref */
        uint64_t type_n[256];    /* of them, per type byte */
        uint64_t nspaces;        /* spaces in the table, at most TM_LAPLACE_SPACES */
        uint64_t spaces_inexact; /* 1: a space past the table was met */
        uint64_t other_n;        /* records in the spaces past the table */
        uint64_t space_id[TM_LAPLACE_SPACES], space_n[TM_LAPLACE_SPACES];
        uint64_t events;            /* kernel events */
        uint64_t tag_n[TM_LPK_N];   /* of them, per tag */
};

/* The laplace family's row of tm_families. */
extern const struct tm_family tm_family_laplace;

#endif
