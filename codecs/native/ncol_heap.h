/* ncol_heap: schema 2's allocator model (docs/formats/native.md, "Heap
 * addresses (methods 5, 6)"), the state behind method 5, which codes a
 * schema's "address" and "new_address" fields together as one sequence
 * of address events in record order.
 *
 * A kind with fields size, address and new_address is a realloc (it
 * frees address, then allocates size bytes at new_address); one with
 * size and address an allocation; one with address alone a free. The
 * model predicts an allocation as glibc's malloc places it: the most
 * recently freed chunk of the same size class (tcache and fastbins are
 * LIFO per class), the end of the last allocation (the top chunk or a
 * split remainder, carved in address order), in place (realloc), else a
 * rank among the addresses freed in the block; and a free as a rank among
 * the live allocations, the most recent first.
 * Thread ids are not a key: the thread field follows the address in the
 * heap schema, and a block's fields decode in schema order.
 *
 * State is reset at each block. Memory: the free stacks, 2^10 classes of
 * 8 addresses and the end of its last allocation (72 KiB); for a block
 * of n records with e allocation and free events (e <= 2n), a hash of
 * the block's addresses of at most c = 2^ceil(log2 (1.5e + 1)) slots of
 * 16 bytes and c / 4 + 1 more to move them as it grows (a block after
 * the first starts it at 3 times the addresses the block before had,
 * from 2^10, and doubles it when it is half full), and the two orders
 * (live by allocation, freed by free; ncol_marks.h), 17 bytes a record:
 * 3.7 MiB at n = 2^16 and e < 87382, 6.2 MiB at most. */
#ifndef TM_NCOL_HEAP_H
#define TM_NCOL_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "../record/record.h"

#define NCOL_HEAP_CLASSES 1024 /* size classes: 16-byte chunk steps, the last holds the rest */
#define NCOL_HEAP_DEPTH 8      /* freed addresses a class remembers */
#define NCOL_HEAP_MISSES 4     /* misses of a sort a miss is coded against */

/* Hit codes of method 5 (a byte an address event). */
enum ncol_heap_code {
        NCOL_H_ZERO = 0,  /* 0 */
        NCOL_H_INPLACE,   /* a realloc's new address: its old one */
        NCOL_H_BUMP,      /* the end of the last allocation */
        NCOL_H_CARVE,     /* the end of the last allocation not taken from a free stack */
        NCOL_H_CLASS,     /* the end of the last allocation of the size class */
        NCOL_H_STACK0,    /* .. + 7: the class's free stack, depth 0..7 */
        NCOL_H_MISS = NCOL_H_STACK0 + NCOL_HEAP_DEPTH, /* B: zigzag(v - the last of the sort) */
        NCOL_H_MISS2,     /* .. + 3: B: v - the last miss of the sort, .. the fourth last */
        NCOL_H_RANK = NCOL_H_MISS2 + NCOL_HEAP_MISSES, /* C: varint rank - NCOL_H_RANKS */
        NCOL_H_RANK0      /* .. 255: rank code - NCOL_H_RANK0 */
};
#define NCOL_H_RANKS (256 - NCOL_H_RANK0)

/* An address event's role. */
enum ncol_heap_ev { NCOL_HE_ALLOC, NCOL_HE_FREE, NCOL_HE_OTHER };

/* Where a schema keeps what the model reads: field indexes and each
 * kind's role (enum below); ok when the schema has fields size <
 * address (< new_address, when there is one) in schema order, all
 * numbers, and a kind with an address. */
enum ncol_heap_role { NCOL_HR_NONE, NCOL_HR_ALLOC, NCOL_HR_FREE, NCOL_HR_REALLOC, NCOL_HR_OTHER };
struct ncol_heap_map {
        int ok;
        unsigned size, addr, naddr; /* naddr: TM_SCHEMA_FIELDS_MAX when absent */
        uint8_t role[TM_SCHEMA_KINDS_MAX];
};
void ncol_heap_map_of(const struct tm_schema *s, struct ncol_heap_map *m);

/* The model's state; new and free; reset before each block with the
 * number of records n (up to 2^16) and of allocation and free events
 * (at most n of each sort). 0 or -ENOMEM. */
struct ncol_heap;
struct ncol_heap *ncol_heap_new(void);
void ncol_heap_free(struct ncol_heap *h);
int ncol_heap_reset(struct ncol_heap *h, size_t n, size_t events);

/* The value code c (below NCOL_H_MISS) predicts for an event ev of size
 * bytes (an allocation's), with old the record's old address (a realloc's
 * new address; else ~0). -1 when c predicts nothing (a stack entry not
 * there, in place outside a realloc). */
int ncol_heap_guess(const struct ncol_heap *h, int ev, uint64_t size, uint64_t old, unsigned c,
                    uint64_t *v);
/* The first code below NCOL_H_MISS that predicts v, else -1. */
int ncol_heap_code(const struct ncol_heap *h, int ev, uint64_t size, uint64_t old, uint64_t v);
/* A miss's reference for an event ev (v is coded as v - ref): code
 * NCOL_H_MISS's the last address of an event of its sort (allocations,
 * frees), NCOL_H_MISS2 + j's the j-th last miss of its sort (0 the last). */
uint64_t ncol_heap_ref(const struct ncol_heap *h, int ev, unsigned code);
/* v's rank for an event ev, the most recent 0: an allocation's among the
 * freed addresses (of frees in the block, not allocated since), a free's
 * among the live allocations; -1 if v is not there. */
int64_t ncol_heap_rank(const struct ncol_heap *h, int ev, uint64_t v);
/* The address of rank r for an event ev into *v; -1 when there are not r + 1. */
int ncol_heap_at(const struct ncol_heap *h, int ev, uint64_t r, uint64_t *v);
/* The event ev (an allocation of size bytes, a free, other) at v seen,
 * coded by code. */
void ncol_heap_see(struct ncol_heap *h, int ev, uint64_t size, uint64_t v, unsigned code);

#endif
