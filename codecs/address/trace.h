/* Trace codecs: the raw stream <-> references.
 *
 * A reference is a type and an address. Types are Dinero IV's labels:
 * 0 read, 1 write, 2 instruction fetch, 3 misc, 4 copy-back, 5 invalidate;
 * PDATS can also carry 6 and 7 ("supervisory or system" references).
 *
 * Every codec is one module (din.c, pdats.c, pdats2.c, lackey.c) defining
 * its record codec row (arec.h: the registry's row, codecs/registry.h),
 * which is how everything finds it: the views see records of the address
 * schema through that row. Inside, a format gives its row a decoder and
 * an encoder of references (arec_impl.h), which the row's hooks share.
 *
 * Decoder state is a plain struct with no pointers, at most TM_STATE_MAX
 * bytes, so a checkpoint in the trace index is a memcpy of it. The state
 * between two calls to decode() sits exactly between two references: a
 * decoder that consumed a record standing for several references (a PDATS
 * repeat, a PDATS II run, a lackey M line) keeps the rest in its state and
 * yields them on the next call, so decoding can stop after any reference.
 * (PDATS, whose state has no room for a run's offset, instead leaves such a
 * record unconsumed, *used stopping before it, and notes in its state how
 * many of its references were yielded; the next call reads it again.)
 *
 * Errors name the raw offset: "raw offset N: <what>" (-EIO for corrupt or
 * truncated input, -ENOTSUP for valid but unsupported features). The layer
 * that knows the file name prefixes it. */
#ifndef TM_TRACE_H
#define TM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/tm_err.h"

#define TM_NTYPES 8      /* reference types 0..7 */
#define TM_STATE_MAX 64  /* bytes of decoder state, the checkpoint payload */
#define TM_ENC_STATE_MAX 256
#define TM_PROBE_BYTES 4096 /* a row's probe is given at most this many raw bytes */
#define TM_ENC_MAX_OUT 64   /* encode() writes at most this many bytes per call */

enum tm_type {
        TM_READ = 0,
        TM_WRITE = 1,
        TM_IFETCH = 2,
        TM_MISC = 3,
        TM_COPYBACK = 4,
        TM_INVALIDATE = 5,
};

struct tm_ref {
        uint64_t addr;
        uint32_t type; /* 0..TM_NTYPES-1 */
};

/* Storage for codec state: aligned, copyable, no pointers. */
struct tm_dec_state {
        _Alignas(8) uint8_t b[TM_STATE_MAX];
};
struct tm_enc_state {
        _Alignas(8) uint8_t b[TM_ENC_STATE_MAX];
};

/* Options for encoders (ignored by codecs they do not apply to). */
struct tm_enc_opts {
        unsigned addr_bits; /* 32 or 64 */
        unsigned unit;      /* PDATS II instruction unit (1, 2 or 4); PDATS default offset */
};

/* Name of reference type t as used for streams/ files: "read", "write",
 * "ifetch", "misc", "copyback", "invalidate", "type6", "type7". */
const char *tm_type_name(unsigned t);

#endif
