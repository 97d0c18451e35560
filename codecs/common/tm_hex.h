/* Hex numbers in text traces (glibc mtrace, Laplace's text form,
 * heaptrack): one parser for the formats that read a field of hex digits
 * without a prefix. The address codecs' din parser keeps its own fast
 * path. */
#ifndef TM_HEX_H
#define TM_HEX_H

#include <stddef.h>
#include <stdint.h>

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
