/* PDATS II (Johnson, "PDATS II: Improved Compression of Address Traces").
 *
 * File: an 8-byte header ("PDT2", version 1, address width 32 or 64,
 * instruction unit 1, 2 or 4, flags 0) then records of 1 to 5 bytes
 * (1 to 9 in 64-bit files). Only reads, writes and instruction fetches
 * (types 0-2) can be stored; the encoder refuses the others with -EINVAL.
 * The bit layouts, missing from the paper's text (Figures 7 and 8), are
 * defined here and explained in docs/formats/pdats2.md. Offsets are
 * big-endian two's complement.
 *
 * Encoder options: addr_bits 32 or 64 (0 means 32), unit 1, 2 or 4 (0 means
 * 4); others are -EINVAL from enc_init. encode() returns -ERANGE for an
 * address that needs 64 bits in a 32-bit file, -EDOM for an instruction
 * offset that is not a multiple of the unit, -EINVAL for types 3-7. */
#ifndef TM_PDATS2_H
#define TM_PDATS2_H

#include "trace.h"

#define PDATS2_MAGIC "PDT2"

/* Instruction record header: 1 c c n n n n n
 *   c: offset code: 0 = exactly +1 unit, 1/2/3 = 1, 2, 4 offset bytes
 *      (8 bytes for code 3 in 64-bit files); the offset counts units
 *      from the previous instruction fetch (0 at the start);
 *   n: sequential instructions following the first (each previous + unit). */
#define PDATS2_INSN 0x80
#define PDATS2_INSN_CODE_SHIFT 5
#define PDATS2_INSN_MAX_RUN 31

/* Data record header: 0 w c c c z n n
 *   w: 0 read, 1 write;
 *   c: offset code: 0: 0, 1: +4, 2: -4, 3: +8, 4: -8, 5/6/7: 1, 2, 4 offset
 *      bytes (8 bytes for code 7 in 64-bit files); the offset is in bytes
 *      from the base of zone z, which becomes the address;
 *   z: data zone 0 or 1 (both bases 0 at the start);
 *   n: sequential instructions following the data reference. */
#define PDATS2_DATA_WRITE 0x40
#define PDATS2_DATA_CODE_SHIFT 3
#define PDATS2_DATA_ZONE 0x04
#define PDATS2_DATA_MAX_RUN 3


#endif
