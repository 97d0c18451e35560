/* codec_util: small helpers shared by the trace codecs (internal).
 *
 * Big-endian two's complement offsets for the PDATS family, the 8-byte
 * file header they share, and hex digit tables for the text formats.
 * Everything here is static inline so the decoders' hot loops keep no
 * function calls. */
#ifndef TM_CODEC_UTIL_H
#define TM_CODEC_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace.h"

/* The 8-byte file header of PDATS and PDATS II (docs/formats/pdats.md):
 * magic[4], version, address width in bits (32 or 64), unit, flags. */
#define CU_HDR_LEN 8
#define CU_HDR_VERSION 1

struct cu_hdr {
        unsigned addr_bits; /* 32 or 64 */
        unsigned unit;      /* format-specific meaning */
};

/* Parse the file header with magic magic (4 bytes) from head[0..n).
 * Returns CU_HDR_LEN, -EIO (truncated, bad magic) or -ENOTSUP (version,
 * width or flags this build does not know); the unit is checked by the
 * caller. */
int cu_hdr_parse(const char *fmt, const char *magic, const uint8_t *head, size_t n,
                 struct cu_hdr *h, struct tm_err *err);

/* Write the header to out (CU_HDR_LEN bytes); returns CU_HDR_LEN. */
int cu_hdr_write(const char *magic, unsigned addr_bits, unsigned unit, uint8_t *out);

struct arec_fmt;

/* Probe for line-based text formats: decode the complete lines of head (the
 * lines up to its last newline; all of head when it has none) with format
 * f (arec_impl.h). 1 when they all parse and hold at least one reference,
 * else 0. */
int cu_probe_lines(const struct arec_fmt *f, const uint8_t *head, size_t n);

/* Value of hex digit c, or -1. */
extern const int8_t cu_hexval[256];

/* Lowercase hex digits. */
extern const char cu_hexdig[16];

/* Blanks of the text formats: space, tab, and \r (so CRLF lines work). */
static inline int cu_is_blank(uint8_t c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Read n (1, 2, 4 or 8) big-endian bytes at p as a sign-extended value. */
static inline uint64_t cu_get_be_signed(const uint8_t *p, unsigned n)
{
        switch (n) {
        case 1:
                return (uint64_t)(int64_t)(int8_t)p[0];
        case 2:
                return (uint64_t)(int64_t)(int16_t)(uint16_t)((unsigned)p[0] << 8 | p[1]);
        case 4:
                return (uint64_t)(int64_t)(int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                                                    (uint32_t)p[2] << 8 | p[3]);
        default: {
                uint64_t v = 0;
                for (unsigned i = 0; i < 8; i++)
                        v = v << 8 | p[i];
                return v;
        }
        }
}

/* The n (1..8) big-endian bytes at p as a sign-extended value, reading all
 * 8 bytes at p: only when 8 bytes are there. */
static inline uint64_t cu_get_be_signed8(const uint8_t *p, unsigned n)
{
        uint64_t v;
        memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        v = __builtin_bswap64(v);
#endif
        return (uint64_t)((int64_t)v >> (64 - 8 * n));
}

/* Write the low n bytes of v big-endian to p. */
static inline void cu_put_be(uint8_t *p, uint64_t v, unsigned n)
{
        for (unsigned i = 0; i < n; i++)
                p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* Bytes (1, 2, 4 or 8) needed for the signed value v in two's complement;
 * returns 8 when v needs more than 4 bytes. */
static inline unsigned cu_signed_len(int64_t v)
{
        if (v >= -128 && v <= 127)
                return 1;
        if (v >= -32768 && v <= 32767)
                return 2;
        if (v >= INT32_MIN && v <= INT32_MAX)
                return 4;
        return 8;
}

/* v (an address difference modulo 2^bits) as a signed bits-wide value. */
static inline int64_t cu_sext(uint64_t v, unsigned bits)
{
        if (bits == 32)
                return (int64_t)(int32_t)(uint32_t)v;
        return (int64_t)v;
}

/* Write v as lowercase hex without leading zeros to p; returns the length
 * (1..16). */
static inline unsigned cu_put_hex(char *p, uint64_t v)
{
        unsigned nd = v ? (unsigned)(64 - __builtin_clzll(v) + 3) / 4 : 1;
        for (unsigned i = nd; i-- > 0;) {
                p[i] = cu_hexdig[v & 15];
                v >>= 4;
        }
        return nd;
}

#endif
