/* The `binary` view: one fixed-width little-endian record per reference.
 *
 * This header is public and self-contained so that C programs can mmap or
 * pread the view directly; numpy users can read it with
 *     np.dtype([("addr", "<u8"), ("type", "u1"), ("pad", "V7")])
 * Record i of the trace is at byte offset i * sizeof(struct tm_binary_ref).
 * pad is always zero. */
#ifndef TM_BINARY_H
#define TM_BINARY_H

#include <stdint.h>

struct tm_binary_ref {
        uint64_t addr; /* little-endian */
        /* Dinero label: 0 read, 1 write, 2 ifetch, 3 misc, 4 copy-back,
         * 5 invalidate; PDATS traces may also hold 6 and 7 (supervisory or
         * system references). */
        uint8_t type;
        uint8_t pad[7]; /* zero */
};

_Static_assert(sizeof(struct tm_binary_ref) == 16, "binary record is 16 bytes");

#endif
