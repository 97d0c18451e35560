/* Hex numbers in text: one printer for every view that writes hex (the
 * din renderer, the record text forms), and one parser for the text
 * traces that read a field of hex digits without a prefix (glibc mtrace,
 * Laplace's text form, heaptrack). The address codecs' din parser keeps
 * its own fast path; the vector renderers of arch/ make digits in their
 * own registers. */
#ifndef TM_HEX_H
#define TM_HEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The hex digits of v without leading zeros: 1..16 (1 for 0). */
static inline unsigned tm_hex_digits(uint64_t v)
{
        return (67u - (unsigned)__builtin_clzll(v | 1)) >> 2;
}

/* The 8 hex digits of x, lowercase, leading zeros included, as a word
 * whose low byte is the most significant digit (so stored low byte first
 * they read in order). SWAR: the nibbles spread to bytes, then '0' + n,
 * plus 39 more where n >= 10 (to land on 'a'); no table, no loop. */
static inline uint64_t tm_hex8(uint32_t x)
{
        uint64_t v = x;
        v = (v | v << 16) & 0x0000ffff0000ffffull;
        v = (v | v << 8) & 0x00ff00ff00ff00ffull;
        v = (v | v << 4) & 0x0f0f0f0f0f0f0f0full;
        v = __builtin_bswap64(v);
        uint64_t ge10 = ((v + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
        return v + 0x3030303030303030ull + ge10 * 39;
}

/* Store the 8 bytes of w at p, its low byte first, on any byte order. */
static inline void tm_hex_store8(char *p, uint64_t w)
{
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        memcpy(p, &w, 8);
}

/* Write v in lowercase hex, without leading zeros ("0" for 0) or prefix,
 * at p and return the digits written, tm_hex_digits(v). Whole 8-byte
 * stores, the digits shifted down past the leading zeros: the same few
 * operations whatever the length, and p[0..16) may be written whatever
 * the length. */
static inline unsigned tm_hex_put(char *p, uint64_t v)
{
        uint32_t hi = (uint32_t)(v >> 32);
        if (hi == 0) {
                unsigned z = (unsigned)__builtin_clz((uint32_t)v | 1u) >> 2; /* 0..7 */
                tm_hex_store8(p, tm_hex8((uint32_t)v) >> (8 * z));
                return 8 - z;
        }
        unsigned z = (unsigned)__builtin_clz(hi) >> 2;
        tm_hex_store8(p, tm_hex8(hi) >> (8 * z));
        tm_hex_store8(p + 8 - z, tm_hex8((uint32_t)v));
        return 16 - z;
}

/* The hex digits s[0..n) (either case, no prefix) into *v: 0, or -1 when
 * n is 0, over max (at most 16) or a byte is not a hex digit. */
static inline int tm_hex_parse(const char *s, size_t n, unsigned max, uint64_t *v)
{
        if (n == 0 || n > max || max > 16)
                return -1;
        uint64_t x = 0;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                             : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                             : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                                    : 16u;
                if (d > 15)
                        return -1;
                x = x << 4 | d;
        }
        *v = x;
        return 0;
}

#endif
