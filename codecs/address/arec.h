/* arec: the address codecs as record codecs.
 *
 * din, PDATS, PDATS II and lackey keep their decoders (trace.h: struct
 * tm_codec, references of a type and an address, a 64-byte state); each
 * is also a row of the record codec table through this adapter, which
 * yields records of the address schema (tm_addr_schema) and carries the
 * codec's fast paths as hooks of the row (record.h: text, batch).
 *
 * The address schema: one kind per reference type the codec can hold
 * (read, write, ifetch, misc, copyback, invalidate, type6, type7; tag =
 * the type), each with the fields
 *   type     the type again (decimal), hidden in lines: fields/type;
 *   address  lowercase hex without 0x;
 *   size     the access size in bytes (lackey only), hidden in lines;
 * and the labels "0".."7", so that an ascii line is the din line
 * ("<type> <hex address>\n", codecs/address/din.h) and every record of
 * kind t has v[0] = t, v[1] = the address, v[2] = the size. A codec with
 * sizes and at most six types also has the form xdin (Dinero IV's
 * extended din: "r 7ff0 008", the size in exactly three hex digits, its
 * low ones).
 *
 * Decoder state: the codec's struct tm_dec_state in the first
 * TM_STATE_MAX bytes of struct tm_rstate. Writer encodings (the rows'
 * list, tm_rcodec.encodings): "32", "64", each with "/2" or "/4" for
 * PDATS II's instruction unit ("64": 64-bit addresses, unit 1, what every
 * trace fits; the rows' default); an encoder refuses a reference needing
 * 64-bit addresses with -ERANGE, an instruction offset not a multiple of
 * the unit with -EDOM (trace.h). enc_put takes records of the address
 * schema of every type (tm_rcodec.enc_schema), with sizes for lackey,
 * whose text holds them. */
#ifndef TM_AREC_H
#define TM_AREC_H

#include "../record/record.h"
#include "trace.h"

/* The address schema of a codec with ntypes types (1..8), with the size
 * field and the xdin form when sized. */
void tm_addr_schema(struct tm_schema *s, unsigned ntypes, int sized);

/* decode_batch splits references into columns with AVX-512 where the CPU
 * has it (arch/x86/arec_impl.h); on = 1 makes it take the portable loop,
 * 0 choose again (a test hook, as tm_render_force_scalar). */
void tm_arec_force_scalar(int on);

/* The rows (codecs/registry.c). */
extern const struct tm_rcodec tm_rcodec_din, tm_rcodec_pdats, tm_rcodec_pdats2,
    tm_rcodec_lackey;

/* The address codec behind row c, or NULL when c is not one of them. */
const struct tm_codec *tm_arec_codec(const struct tm_rcodec *c);

#endif
