/* HATF 1.0, the Heap Allocation Trace Format (Chilimbi, Jones & Zorn,
 * ISMM 2000, Appendix A): decoder and encoder, on tm_schema_heap.
 *
 * Byte layout (docs/formats/hatf.md says why where the paper is damaged):
 * - A trace is records, each starting with a 1-byte tag: 0-10 the data
 *   records of codecs/heap/heap.h, 11 metadata. There is no file header;
 *   tracemount's writer starts every trace with the comment record
 *   "HATF 1.0" (HATF_SIGNATURE, a legal HATF record), which the probe
 *   looks for. At raw offset 0 that comment is the file's signature, not
 *   one of its records: the decoder does not return it.
 * - Multi-byte numbers are big-endian (the paper's "2-byte data" figure:
 *   byte 0 holds bits 8-15).
 * - Data records: the tag, then the kind's fields in order, each with its
 *   current width (0, 1, 2, 4 or 8 bytes; attributes also v1 / v2: a 1- or
 *   2-byte length then that many bytes). A comment is tag 10, a 2-byte
 *   length, the text.
 * - Metadata: 11, op, field, a2 [, a3 (8 bytes) [, a4 (8 bytes)]].
 *   op 1 (fieldSize): a2 = width code 0, 1, 2, 4, 8, 9 (v1), 10 (v2).
 *   op 2 (fieldInterpretation): a2 = 0 none, 1 default a3, 2 baseOffset a3,
 *   3 delta a3, 4 stride a3 a4. So 4, 12 or 20 bytes.
 *   Fields: 0 size, 1 address, 2 time, 3 thread, 4 heap, 5 attributes.
 * - Interpretations: none = the stored value (unsigned); default = a3,
 *   nothing stored; baseOffset = a3 + stored value (signed); delta = the
 *   previous value + stored value (signed), the first previous value is
 *   a3; stride = previous value + a4, nothing stored, the first previous
 *   value a3. default and stride make the width 0; none, baseOffset and
 *   delta restore the last non-zero width (initially 4 for numbers, v1
 *   for attributes). A fieldSize always records the width; it takes
 *   effect while the interpretation stores a value.
 * - Defaults: size and address 4 bytes none; time, thread, heap and
 *   attributes default 0 (width 0).
 * - A realloc's two addresses both use the address field's settings, old
 *   address first (so with delta the new address is relative to the old).
 *
 * Encodings the writer offers (the paper's section 3.3 and Table 4), by
 * name: "naive", "smallsize", "samesize", "baseoffset1", "baseoffset2",
 * "baseoffset", "stride", "best" (smallsize + the better address coding
 * per run, the paper's "HATF (best)"). */
#ifndef TM_HATF_H
#define TM_HATF_H

#include <stddef.h>
#include <stdint.h>

#include "../record/record.h"
#include "heap.h"

#define HATF_TAG_METADATA 11
#define HATF_OP_SIZE 1
#define HATF_OP_INTERP 2

enum hatf_field {
        HATF_F_SIZE,
        HATF_F_ADDRESS,
        HATF_F_TIME,
        HATF_F_THREAD,
        HATF_F_HEAP,
        HATF_F_ATTR,
        HATF_NF
};
enum hatf_interp {
        HATF_I_NONE,
        HATF_I_DEFAULT,
        HATF_I_BASEOFFSET,
        HATF_I_DELTA,
        HATF_I_STRIDE,
        HATF_NI
};
#define HATF_W_V1 9  /* width code: 1-byte length, then bytes */
#define HATF_W_V2 10 /* width code: 2-byte length, then bytes */

/* The comment record every trace tracemount writes starts with. */
#define HATF_SIGNATURE "HATF 1.0"
#define HATF_SIGNATURE_LEN 11 /* tag, 2-byte length, 8 bytes of text */

extern const struct tm_rcodec tm_rcodec_hatf;

/* "none", "default", "baseOffset", "delta", "stride" (enum hatf_interp). */
const char *hatf_interp_name(unsigned in);

#endif
