/* lackey: the memory trace printed by valgrind --tool=lackey --trace-mem=yes.
 *
 * Records: "I  04011ab0,3" (instruction fetch), " L 1fff000628,8" (load),
 * " S addr,size" (store), " M addr,size" (modify: a load then a store of the
 * same address, yielded as two references). The size (decimal, at most
 * LACKEY_MAX_SIZE) goes to tm_ref.size. Valgrind's own lines ("==pid== ...",
 * "--pid-- ...") are skipped; any other line is corrupt (-EIO). The encoder
 * writes valgrind's line forms back (a read followed by a write of the same
 * address and size becomes one M line), so `pack` keeps the sizes. See
 * docs/formats/lackey.md. */
#ifndef TM_LACKEY_H
#define TM_LACKEY_H

#include "trace.h"

/* Longest record line the decoder waits for; a longer unfinished one is
 * corrupt (-EIO). Valgrind lines are skipped whatever their length. */
#define LACKEY_MAX_LINE 128

/* Largest access size accepted (valgrind's lackey asserts sizes <= 512,
 * its MAX_DSIZE): three hex digits, the fixed width of the xdin view. */
#define LACKEY_MAX_SIZE 4095


#endif
