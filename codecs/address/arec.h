/* arec: the address codecs as record codecs.
 *
 * din, PDATS, PDATS II and lackey are rows of the registry. Each format
 * decodes references (trace.h: a type and an address, a 64-byte state)
 * and gives its row that decoder and its encoder (arec_impl.h); the hooks
 * the rows share (arec.c) yield records of the address schema
 * (tm_addr_schema) and carry the fast paths (record.h: text, batch).
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
 * Decoder state: the format's struct tm_dec_state in the first
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

/* The rows, each defined by its format's file (din.c, pdats.c, pdats2.c,
 * lackey.c); the registry lists them (codecs/registry.c). */
extern const struct tm_rcodec tm_rcodec_din, tm_rcodec_pdats, tm_rcodec_pdats2,
    tm_rcodec_lackey;

#endif
