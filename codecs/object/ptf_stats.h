/* ptf_stats: the object family's statistics and its verifier
 * (codecs/record/family.h), gathered in the index pass for a schema the
 * family claims: kinds "co" and "ew" and a field "OId" (PTF, and Meta-TF
 * traces whose DTD uses those names).
 *
 *   created        objects created: co, cao and fo (a format object has
 *                  an OId like any other, section 3.2.1)
 *   deleted        do of a live object
 *   live_max       the most objects live at once; live_end at the end
 *   edges_read     er records; edges_written: ew records
 *   depth_max      the deepest nesting of ts ... te; depth_end at the end
 *
 * (Events per type are the generic statistics' records per kind.)
 *
 * The verifier's rules, each counted, with the record number (from 0) of
 * the first record that breaks it:
 *
 *   null           OId 0 created, or used where an object must be (every
 *                  OId parameter but ToOId and SuperFormatId, where 0 is
 *                  the NULL object)
 *   reused         an OId created that was created before (also when it
 *                  was deleted since), or a primitive format (10..40)
 *   before_create  an OId used that was never created
 *   after_delete   an OId used after its delete
 *   delete_missing do of an OId not live (never created, deleted, or a
 *                  primitive format)
 *   brackets       te with no ts open, or a ts left open at the end (the
 *                  record is that outermost ts)
 *
 * Primitive formats (OIds 10 to 40, Table 2) exist from the start: they
 * may be used as formats and as objects, never created or deleted.
 * The accumulator holds every OId seen in a hash table (16 bytes a slot,
 * at most half full): memory grows with the objects of the trace. */
#ifndef TM_PTF_STATS_H
#define TM_PTF_STATS_H

#include <stdint.h>

#include "../record/family.h"

enum tm_ptf_rule {
        TM_PR_NULL,
        TM_PR_REUSED,
        TM_PR_BEFORE_CREATE,
        TM_PR_AFTER_DELETE,
        TM_PR_DELETE_MISSING,
        TM_PR_BRACKETS,
        TM_PR_N,
};

struct tm_ptf_stats {
        uint64_t records;
        uint64_t created, deleted, live_max, live_end;
        uint64_t edges_read, edges_written;
        uint64_t depth_max, depth_end;
        uint64_t violations[TM_PR_N];
        uint64_t first[TM_PR_N]; /* record number + 1 of the first; 0: none */
        uint64_t unchecked;      /* uses of OIds the table had no room for
                                  * (TM_PTF_OIDS_MAX): their rules not checked */
};

/* The verifier's table of OIds: at most this many slots (a key and a
 * state byte each, filled to half), about 19 MiB, and 28 MiB while it
 * grows; past it the rules of new OIds are not checked, and stats, stats.json
 * and verify say how many uses went unchecked. */
#define TM_PTF_OIDS_MAX (1u << 21)

/* The rules' names, as stats and verify print them. */
extern const char *const tm_ptf_rule_name[TM_PR_N];

extern const struct tm_family tm_family_object;

#endif
