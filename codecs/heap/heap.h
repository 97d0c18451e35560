/* The heap family's schema and a plain event struct for its producers.
 *
 * Heap traces (HATF, HATF as Meta-TF, glibc mtrace logs, heaptrack files,
 * tracetool record) all decode to one schema, tm_schema_heap, so that the
 * views, the statistics of the HATF paper's Table 3 and the encoders serve
 * every one of them. Kinds and their tags are HATF 1.0's (Appendix A of
 * Chilimbi, Jones & Zorn, ISMM 2000); the fields of each kind are in the
 * order of HATF's binary records:
 *
 *   tag  kind                 fields
 *   0    alloc                size address thread heap time attributes
 *   1    free                 address thread heap time attributes
 *   2    realloc              size address new_address thread heap time attributes
 *   3    realloc_alloc_free   (same as realloc)
 *   4    realloc_alloc        (same)
 *   5    realloc_free         (same)
 *   6    createHeap           heap thread time attributes
 *   7    destroyHeap          heap thread time attributes
 *   8    createThread         thread time attributes
 *   9    destroyThread        thread time attributes
 *   10   comment              text
 *
 * The four realloc kinds are the paper's four outcomes: 2 neither malloc
 * nor free was called (resized in place), 3 free then malloc, 4 malloc with
 * no free, 5 free with no malloc. address is the old address, new_address
 * the new one. attributes are bytes (e.g. the caller); text is a comment. */
#ifndef TM_HEAP_H
#define TM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "../record/record.h"

enum tm_heap_kind {
        TM_HK_ALLOC = 0,
        TM_HK_FREE = 1,
        TM_HK_REALLOC = 2,
        TM_HK_REALLOC_ALLOC_FREE = 3,
        TM_HK_REALLOC_ALLOC = 4,
        TM_HK_REALLOC_FREE = 5,
        TM_HK_CREATE_HEAP = 6,
        TM_HK_DESTROY_HEAP = 7,
        TM_HK_CREATE_THREAD = 8,
        TM_HK_DESTROY_THREAD = 9,
        TM_HK_COMMENT = 10,
        TM_HK_N = 11,
};

/* Field indexes in tm_schema_heap. */
enum tm_heap_field {
        TM_HF_SIZE,
        TM_HF_ADDRESS,
        TM_HF_NEW_ADDRESS,
        TM_HF_THREAD,
        TM_HF_HEAP,
        TM_HF_TIME,
        TM_HF_ATTRIBUTES,
        TM_HF_TEXT,
        TM_HF_N,
};

extern const struct tm_schema tm_schema_heap;

static inline int tm_heap_is_realloc(unsigned kind)
{
        return kind >= TM_HK_REALLOC && kind <= TM_HK_REALLOC_FREE;
}

/* A heap event as its producers see it: every field, whichever the kind
 * carries. attr (attr_len bytes) is the attributes field, or for a comment
 * its text. */
struct tm_heap_ev {
        unsigned kind; /* enum tm_heap_kind */
        uint64_t size, addr, new_addr, thread, heap, time;
        const uint8_t *attr;
        size_t attr_len;
};

/* The record of ev (var points at ev->attr). */
void tm_heap_ev_to_rec(const struct tm_heap_ev *ev, struct tm_rec *r);

/* The event of a record of tm_schema_heap (fields the kind lacks are 0). */
void tm_heap_rec_to_ev(const struct tm_rec *r, struct tm_heap_ev *ev);

/* The heap family's tm_family.rec_refine: a realloc record of a schema
 * with one realloc kind (Appendix C's, which has no outcomes) made a
 * record of to (of the four realloc kinds) gets the outcome its addresses
 * say: no old address, realloc_alloc (malloc only); no new one,
 * realloc_free (free only); the same, realloc (in place); else
 * realloc_alloc_free (moved). */
void tm_heap_refine(const struct tm_schema *from, const struct tm_schema *to, struct tm_rec *o);

#endif
