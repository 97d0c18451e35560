/* Trace codecs: the raw stream <-> references.
 *
 * A reference is a type and an address. Types are Dinero IV's labels:
 * 0 read, 1 write, 2 instruction fetch, 3 misc, 4 copy-back, 5 invalidate;
 * PDATS can also carry 6 and 7 ("supervisory or system" references).
 *
 * Every codec is one module (din.c, pdats.c, pdats2.c, lackey.c) exporting
 * one const struct tm_codec, the decoder and encoder behind its record
 * codec row (arec.h: the registry's row, codecs/registry.h), which is
 * how everything finds it (tm_arec_codec of tm_rcodec_by_name): the
 * views see records of the address schema through that row.
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
#define TM_PROBE_BYTES 4096 /* probe() is given at most this many raw bytes */
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

struct tm_codec {
        const char *name;       /* "din", "pdats", "pdats2", "lackey" */
        const char *suffix;     /* file suffix for pack: ".din", ".pdt", ".pdt2"; NULL if none */
        unsigned ntypes;        /* types 0..ntypes-1 can occur */

        /* Does head (the first n raw bytes, n <= TM_PROBE_BYTES, fewer only
         * when the stream is that short) look like this format? 1 or 0.
         * Binary formats check their magic; text formats check that every
         * complete line in head parses. */
        int (*probe)(const uint8_t *head, size_t n);

        /* Parse the file header from head (n bytes, n >= the whole header
         * unless the stream is shorter) and set the initial state. Returns
         * the header length in bytes (>= 0; raw offset of the first record)
         * or a negative errno (-EIO: bad or truncated header; -ENOTSUP:
         * version or width this build does not know). */
        int (*dec_init)(struct tm_dec_state *st, const uint8_t *head, size_t n,
                        struct tm_err *err);

        /* Could the decoder have reached state st (from dec_init and
         * decode)? 1 or 0: every field within what decoding can set. A
         * checkpoint's state comes from an index file, which may be
         * hostile or damaged although its CRC is right; the index loader
         * refuses a file with a state this rejects, so decode() only ever
         * sees states it can handle (a shift count past the word, a run
         * longer than a record's). Cheap: called once per checkpoint at
         * load. NULL: every byte string is a state decode() handles. */
        int (*state_ok)(const struct tm_dec_state *st);

        /* Decode references from in[0..len), where in[0] is at raw offset
         * raw_off. Writes at most cap references to out, sets *used to the
         * bytes consumed (whole records only; a record cut by the end of in
         * is left for the next call with more input) and returns the number
         * of references written. eof says no input follows in[len]: then a
         * cut record is -EIO "truncated". Returns 0 with *used == 0 when it
         * needs more input (never when eof, unless the stream is finished).
         * Returns a negative errno on corrupt input; the state is then
         * undefined. */
        ssize_t (*decode)(struct tm_dec_state *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_ref *out, size_t cap,
                          struct tm_err *err);

        /* Encoder, NULL for a decode-only codec. enc_init writes the
         * file header (at most TM_ENC_MAX_OUT bytes) to out and returns its
         * length. encode() takes one reference, appends 0..TM_ENC_MAX_OUT
         * bytes of whole records to out and returns the count; references
         * the format cannot hold are -EINVAL with a message naming the
         * reference number idx (0-based) and why; two cases are told apart
         * so that a caller can start again with other options: -ERANGE, an
         * address needs addr_bits 64; -EDOM, an instruction offset is not a
         * multiple of unit (unit 1 always works). finish() flushes what the
         * encoder holds back (runs, look-ahead). After encode() returns,
         * the bytes written so far end on a record boundary. */
        int (*enc_init)(struct tm_enc_state *st, const struct tm_enc_opts *o, uint8_t *out,
                        struct tm_err *err);
        int (*encode)(struct tm_enc_state *st, const struct tm_ref *ref, uint64_t idx,
                      uint8_t *out, struct tm_err *err);
        int (*finish)(struct tm_enc_state *st, uint8_t *out, struct tm_err *err);

        /* Access sizes, for the formats that have them (lackey), NULL
         * elsewhere. They travel beside the references, never in them, so
         * the (type, address) arrays of every other format stay as they
         * are. decode_sized is decode() that also writes the size in bytes
         * of out[i] to sizes[i]. A codec whose encoder needs sizes has
         * encode NULL and encode_sized instead: encode() with the size of
         * ref. */
        ssize_t (*decode_sized)(struct tm_dec_state *st, const uint8_t *in, size_t len, int eof,
                                uint64_t raw_off, size_t *used, struct tm_ref *out,
                                uint32_t *sizes, size_t cap, struct tm_err *err);
        int (*encode_sized)(struct tm_enc_state *st, const struct tm_ref *ref, uint32_t size,
                            uint64_t idx, uint8_t *out, struct tm_err *err);
};

/* Name of reference type t as used for streams/ files: "read", "write",
 * "ifetch", "misc", "copyback", "invalidate", "type6", "type7". */
const char *tm_type_name(unsigned t);

#endif
