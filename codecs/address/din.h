/* din: the Dinero IV text trace format ("din" input of dineroIV -informat d).
 *
 * One reference a line: optional blanks, the label (one hex digit 0-5:
 * 0 read, 1 write, 2 ifetch, 3 misc, 4 copy-back, 5 invalidate), blanks,
 * the address in hex (1-16 digits, optional 0x/0X), then the end of the line
 * or a blank and anything up to the newline, which is ignored. Blank lines
 * are skipped, \r before \n is accepted, the final line may lack its
 * newline. The encoder writes "%x %x\n" in lowercase. See
 * docs/formats/din.md. */
#ifndef TM_DIN_H
#define TM_DIN_H

#include "trace.h"

/* Longest line start (label, blanks, address) the decoder waits for; a
 * longer one is corrupt (-EIO), finished or not, so that where the input
 * windows end never decides whether a line is read. */
#define DIN_MAX_PREFIX 128


#endif
