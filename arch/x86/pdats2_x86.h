/* pdats2_x86: PDATS II's block decoder for x86-64 with AVX-512 VBMI.
 *
 * The scalar decoder in pdats2.c follows the records one after the other:
 * where the next record starts depends on the length of this one, and the
 * CPU can only run ahead by predicting it. This decoder takes the input 64
 * bytes at a time and finds every record that starts in them at once
 * (each byte's "next record" position, composed with itself by byte
 * permutes: pointer doubling), then decodes those records in vector
 * lanes, the address chains (the instruction address, the two data zones,
 * the output position) as prefix sums, and writes each record's reference
 * and the first three fetches of its run with one 64-byte store (longer
 * runs go on one reference at a time). 32-bit files use dword lanes (16
 * records a vector), 64-bit files qword lanes (8) for the addresses and up
 * to 8 offset bytes.
 *
 * The output is the scalar decoder's, reference for reference; the tests
 * decode with both (TM_NO_SIMD=1 or p2x_force_scalar) and compare.
 *
 * This header is the decoder's interface, which codecs/address/pdats2.c
 * includes on every build and implements (p2x_blocks() answers NULL where
 * there is no vector path); the decoder is arch/x86/pdats2_impl.h. */
#ifndef TM_PDATS2_X86_H
#define TM_PDATS2_X86_H

#include <stddef.h>
#include <stdint.h>

#include "../../codecs/address/trace.h"

/* The decoding state that crosses records. */
struct p2x_chain {
        uint64_t a;       /* the last instruction fetch */
        uint64_t zone[2]; /* the data zone bases */
};

/* Decode whole 64-byte blocks of records from in[*p..len) while at least
 * 128 bytes remain from *p and a block's references (plus 4: the run
 * stores write past a record) fit in cap. Advances *p to the first record
 * not decoded and c past the last one decoded; returns the references
 * written to out. shift is log2 of the instruction unit. Never fails:
 * every byte sequence is a valid stream, and no record here is cut. */
typedef size_t p2x_blocks_fn(const uint8_t *in, size_t len, size_t *p, struct tm_ref *out,
                             size_t cap, unsigned shift, struct p2x_chain *c);

/* The block decoder for 32-bit (wide 0) or 64-bit (wide 1) files, or
 * NULL when this CPU (or build) has no AVX-512 VBMI or the environment
 * says TM_NO_SIMD=1 (codecs/common/tm_cpu.h). Chosen at the first call. */
p2x_blocks_fn *p2x_blocks(int wide);

/* Tests: 1 makes p2x_blocks() return NULL, 0 chooses again. */
void p2x_force_scalar(int on);

#endif
