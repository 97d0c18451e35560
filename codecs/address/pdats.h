/* PDATS (Johnson and Ha, 1994), the NMSU TraceBase format, as described in
 * section 2 and Table 1 of the PDATS II paper.
 *
 * File: an 8-byte header ("PDTS", version 1, address width 32 or 64,
 * default offset, flags 0) then records of a header byte, a repeat-count
 * byte when the repeat bit is set and 0, 1, 2 or 4 offset bytes (8 for
 * code 3 in 64-bit files), big-endian two's complement. Each record stands
 * for 1 + repeat references of its type, each at the previous address of
 * that type plus the offset. Layout reasons: docs/formats/pdats.md.
 *
 * Encoder options: addr_bits 32 or 64 (0 means 32), unit = the default
 * offset 1-255 (0 means 4). encode() returns -ERANGE for an address that
 * needs 64 bits in a 32-bit file, -EINVAL for a type above 7. */
#ifndef TM_PDATS_H
#define TM_PDATS_H

#include "trace.h"

#define PDATS_MAGIC "PDTS"

/* Header byte: r c c t t y y y
 *   r: a repeat-count byte follows: the number of ADDITIONAL references;
 *   c: address code: 0 = the default offset (the file header's unit),
 *      1/2/3 = 1, 2, 4 offset bytes (8 for code 3 in 64-bit files);
 *   t: time code, must be 0 (timestamps are not supported: -ENOTSUP);
 *   y: reference type 0-7. */
#define PDATS_REPEAT 0x80
#define PDATS_CODE_SHIFT 5
#define PDATS_TIME_MASK 0x18
#define PDATS_TYPE_MASK 0x07
#define PDATS_MAX_RUN 256 /* references per record: repeat byte 255 */

/* Types 6 and 7 share one previous address (slot 6): seven 64-bit previous
 * addresses and the run position just fit the TM_STATE_MAX-byte state. */
#define PDATS_SLOTS 7


#endif
