/* arec_impl: what an address format (din.c, pdats.c, pdats2.c, lackey.c)
 * gives its record codec row, and the hooks the four rows share (arec.c).
 * Internal to codecs/address: everything else sees the rows (arec.h).
 *
 * A format decodes and encodes references (trace.h: a type and an
 * address, a state of at most TM_STATE_MAX bytes) through a const struct
 * arec_fmt; its row is AREC_ROW(name, fmt, suffix, probe, bid), written in
 * the format's own file, whose hooks hand the format to arec.c: records of
 * the address schema (tm_addr_schema), the fast text and binary decoders,
 * the column batch, the encoder and its encodings (arec.h). */
#ifndef TM_AREC_IMPL_H
#define TM_AREC_IMPL_H

#include "addr_stats.h"
#include "arec.h"
#include "trace.h"

struct arec_fmt {
        unsigned ntypes; /* types 0..ntypes-1 can occur */

        /* Parse the file header from head (n bytes, n >= the whole header
         * unless the stream is shorter) and set the initial state. Returns
         * the header length in bytes (>= 0; raw offset of the first record)
         * or a negative errno (-EIO: bad or truncated header; -ENOTSUP:
         * version or width this build does not know). */
        int (*dec_init)(struct tm_dec_state *st, const uint8_t *head, size_t n, struct tm_err *err);

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
        int (*encode)(struct tm_enc_state *st, const struct tm_ref *ref, uint64_t idx, uint8_t *out,
                      struct tm_err *err);
        int (*finish)(struct tm_enc_state *st, uint8_t *out, struct tm_err *err);

        /* Access sizes, for the formats that have them (lackey), NULL
         * elsewhere. They travel beside the references, never in them, so
         * the (type, address) arrays of every other format stay as they
         * are. decode_sized is decode() that also writes the size in bytes
         * of out[i] to sizes[i]. A codec whose encoder needs sizes has
         * encode NULL and encode_sized instead: encode() with the size of
         * ref. */
        ssize_t (*decode_sized)(struct tm_dec_state *st, const uint8_t *in, size_t len, int eof,
                                uint64_t raw_off, size_t *used, struct tm_ref *out, uint32_t *sizes,
                                size_t cap, struct tm_err *err);
        int (*encode_sized)(struct tm_enc_state *st, const struct tm_ref *ref, uint32_t size,
                            uint64_t idx, uint8_t *out, struct tm_err *err);
};

/* The shared hooks of an address row (arec.c); f is the row's format.
 * The ones without f find it in the trace's ctx or the encoder. */
int arec_open(const struct arec_fmt *f, const uint8_t *head, size_t n, void **ctx,
              struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err);
void arec_close(void *ctx);
int arec_state_ok(const void *ctx, const struct tm_rstate *st);
ssize_t arec_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                    uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                    struct tm_err *err);
ssize_t arec_decode_batch(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_rbatch *b, size_t cap,
                          struct tm_err *err);
size_t arec_text(const struct arec_fmt *f, struct tm_rstate *st, const uint8_t *in, size_t len,
                 uint64_t raw_off, size_t *used, char *dst, size_t cap, size_t maxrec, long kind,
                 size_t *nrec);
size_t arec_bin(const struct arec_fmt *f, struct tm_rstate *st, const uint8_t *in, size_t len,
                uint64_t raw_off, size_t *used, uint8_t *dst, size_t cap, size_t maxrec,
                size_t *nrec);
int arec_enc_open(const struct arec_fmt *f, const char *name, const char *enc, tm_rsink sink,
                  void *arg, struct tm_renc **out, struct tm_err *err);
int arec_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                 struct tm_err *err);
int arec_enc_finish(struct tm_renc *e, struct tm_err *err);
void arec_enc_free(struct tm_renc *e);
void arec_enc_schema(const struct arec_fmt *f, struct tm_schema *s);

/* The encodings of every address row (arec.h), NULL-terminated. */
extern const char *const arec_encodings[];

/* Row tm_rcodec_<nm> of format fmt (a const struct arec_fmt), file
 * suffix suf, probing with probe_fn (1 or 0 for a head) at bid bid. */
#define AREC_ROW(nm, fmt, suf, probe_fn, bid)                                                      \
        static int nm##_row_probe(const uint8_t *head, size_t n)                                   \
        {                                                                                          \
                return probe_fn(head, n) ? (bid) : 0;                                              \
        }                                                                                          \
        static int nm##_open(const uint8_t *head, size_t n, const char *path, void **ctx,          \
                             struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)   \
        {                                                                                          \
                (void)path;                                                                        \
                return arec_open(&fmt, head, n, ctx, schema, st, err);                             \
        }                                                                                          \
        static size_t nm##_text(struct tm_rstate *st, const uint8_t *in, size_t len,               \
                                uint64_t raw_off, size_t *used, const struct tm_text_plan *p,      \
                                char *dst, size_t cap, size_t maxrec, long kind, size_t *nrec)     \
        {                                                                                          \
                (void)p;                                                                           \
                return arec_text(&fmt, st, in, len, raw_off, used, dst, cap, maxrec, kind, nrec);  \
        }                                                                                          \
        static tm_rtext_fn *nm##_text_of(void)                                                     \
        {                                                                                          \
                return nm##_text;                                                                  \
        }                                                                                          \
        static size_t nm##_bin(struct tm_rstate *st, const uint8_t *in, size_t len,                \
                               uint64_t raw_off, size_t *used, uint8_t *dst, size_t cap,           \
                               size_t maxrec, size_t *nrec)                                        \
        {                                                                                          \
                return arec_bin(&fmt, st, in, len, raw_off, used, dst, cap, maxrec, nrec);         \
        }                                                                                          \
        static tm_rbin_fn *nm##_binary_of(void)                                                    \
        {                                                                                          \
                return nm##_bin;                                                                   \
        }                                                                                          \
        static int nm##_enc_open(const char *e, tm_rsink sink, void *arg, struct tm_renc **out,    \
                                 struct tm_err *err)                                               \
        {                                                                                          \
                return arec_enc_open(&fmt, #nm, e, sink, arg, out, err);                           \
        }                                                                                          \
        static void nm##_enc_schema(struct tm_schema *s)                                           \
        {                                                                                          \
                arec_enc_schema(&fmt, s);                                                          \
        }                                                                                          \
        const struct tm_rcodec tm_rcodec_##nm = {                                                  \
            .name = #nm,                                                                           \
            .suffix = suf,                                                                         \
            .family = &tm_family_address,                                                          \
            .probe = nm##_row_probe,                                                               \
            .open = nm##_open,                                                                     \
            .close = arec_close,                                                                   \
            .state_size = TM_STATE_MAX,                                                            \
            .state_ok = arec_state_ok,                                                             \
            .decode = arec_decode,                                                                 \
            .enc_open = nm##_enc_open,                                                             \
            .enc_put = arec_enc_put,                                                               \
            .enc_finish = arec_enc_finish,                                                         \
            .enc_free = arec_enc_free,                                                             \
            .encodings = arec_encodings,                                                           \
            .enc_schema = nm##_enc_schema,                                                         \
            .text_of = nm##_text_of,                                                               \
            .text_kinds = 1,                                                                       \
            .binary_of = nm##_binary_of,                                                           \
            .decode_batch = arec_decode_batch,                                                     \
        }

#endif
