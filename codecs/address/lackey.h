/* lackey: the memory trace printed by valgrind --tool=lackey --trace-mem=yes.
 *
 * Records: "I  04011ab0,3" (instruction fetch), " L 1fff000628,8" (load),
 * " S addr,size" (store), " M addr,size" (modify: a load then a store of the
 * same address, yielded as two references). The size is checked for digits
 * and dropped. Valgrind's own lines ("==pid== ...", "--pid-- ...") are
 * skipped; any other line is corrupt (-EIO). Decode only: no encoder. See
 * docs/formats/lackey.md. */
#ifndef TM_LACKEY_H
#define TM_LACKEY_H

#include "trace.h"

/* Longest record line the decoder waits for; a longer unfinished one is
 * corrupt (-EIO). Valgrind lines are skipped whatever their length. */
#define LACKEY_MAX_LINE 128

extern const struct tm_codec tm_codec_lackey;

#endif
