/* render: din text lines ("<type> <hex addr>\n") without printf.
 *
 * The ascii and streams/ views are din text, and `cat ascii` must run at
 * memory speed, so a line is written with tm_hex_put (codecs/common/tm_hex.h:
 * 8 hex digits a word, the leading zeros shifted out by a count from
 * count-leading-zeros; a few ns a line where snprintf costs ~80).
 * Skipping to an offset only needs line lengths, which tm_render_din_len
 * gives without writing anything. Runs of lines go through
 * tm_render_din_batch instead: on x86-64 with AVX-512 it renders three to
 * five lines with a handful of vector instructions, several times faster
 * than its portable path, tm_render_din line after line
 * (bench/render_bench; the figures: docs/performance.md).
 *
 * Format: the type as one decimal digit, one space, the address in
 * lowercase hex with no leading zeros ("0" for zero) and no "0x", '\n'.
 * That is exactly snprintf("%u %" PRIx64 "\n"). Traces hold types 0..7
 * (codecs/address/trace.h); the renderers accept any digit, 0..9. */
#ifndef TM_RENDER_H
#define TM_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "../common/tm_hex.h"
#include "trace.h"

/* The longest din line: digit, space, 16 hex digits, newline. */
#define TM_DIN_LINE_MAX 19

/* Length in bytes of the din line of any type and addr. */
static inline unsigned tm_render_din_len(uint64_t addr)
{
        return 3u + tm_hex_digits(addr);
}

/* Write the din line of (type, addr) to dst, which must have room for
 * TM_DIN_LINE_MAX bytes (some bytes past the line may be scribbled on).
 * type must be 0..9. Returns the line length. */
static inline unsigned tm_render_din(char *dst, unsigned type, uint64_t addr)
{
        /* the digit and the space in one 2-byte store */
        uint16_t head = (uint16_t)(('0' + type) | ' ' << 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        head = __builtin_bswap16(head);
#endif
        memcpy(dst, &head, 2);
        unsigned nd = tm_hex_put(dst + 2, addr);
        dst[2 + nd] = '\n';
        return 3 + nd;
}

/* xdin, Dinero IV's extended din (`dineroIV -informat D`), for traces with
 * access sizes, is a text form of the address schema (arec.c): the type
 * as a letter, the address as in din, the size in exactly
 * TM_XDIN_SIZE_DIGITS lowercase hex digits (Dinero reads it as hex; the
 * fixed width keeps offsets computable from the ascii view's). */
#define TM_XDIN_SIZE_DIGITS 3

/* Room tm_render_din_batch wants past n * TM_DIN_LINE_MAX: a vector path
 * stores whole 64-byte registers, whatever is left of the last lines. */
#define TM_RENDER_SLACK 64

/* Render the din lines of refs[0..n) to dst, one after another, and return
 * the bytes written (the sum of tm_render_din_len over the addresses; the
 * bytes are those of n calls of tm_render_din). dst must have room for
 * n * TM_DIN_LINE_MAX + TM_RENDER_SLACK bytes: bytes past the returned
 * length, within that room, may be scribbled on. refs is read only in
 * [0, n). Types must be 0..9. Thread-safe.
 *
 * The implementation is chosen at the first call: AVX-512 when the CPU has
 * AVX-512 F/BW/VL/CD/VBMI/VBMI2 (arch/x86/render_impl.h), unless
 * TM_NO_SIMD=1 (codecs/common/tm_cpu.h) then; otherwise portable C. */
size_t tm_render_din_batch(char *dst, const struct tm_ref *refs, size_t n);

/* The same for references held as two columns: reference i is (type[i],
 * addr[i]). Same bytes, room, slack and choice of implementation as
 * tm_render_din_batch; type and addr are read only in [0, n). For a
 * decoder that keeps its records as columns, so that they are not copied
 * into struct tm_ref first. */
size_t tm_render_din_cols(char *dst, const uint8_t *type, const uint64_t *addr, size_t n);

/* The implementation tm_render_din_batch uses, choosing it if that is not
 * done yet: "avx512" or "scalar". For benchmarks and logs. */
const char *tm_render_din_batch_impl(void);

/* For tests and benchmarks: on != 0 makes tm_render_din_batch use the
 * portable path until the next call; 0 makes the choice again, as at the
 * first call (reading TM_NO_SIMD again). */
void tm_render_force_scalar(int on);

#endif
