#include "codec_util.h"

#include <errno.h>
#include <string.h>

#include "arec_impl.h"

/* hex digit values, -1 for every other byte */
/* clang-format off */
const int8_t cu_hexval[256] = {
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
         0,  1,  2,  3,  4,  5,  6,  7,  8,  9, -1, -1, -1, -1, -1, -1,
        -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, 10, 11, 12, 13, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};
/* clang-format on */

const char cu_hexdig[16] = "0123456789abcdef";

int cu_hdr_parse(const char *fmt, const char *magic, const uint8_t *head, size_t n,
                 struct cu_hdr *h, struct tm_err *err)
{
        if (n < CU_HDR_LEN)
                return tm_err_set(err, -EIO, "raw offset %zu: %s: truncated file header", n, fmt);
        if (memcmp(head, magic, 4) != 0)
                return tm_err_set(err, -EIO, "raw offset 0: %s: bad magic (want \"%s\")", fmt,
                                  magic);
        if (head[4] != CU_HDR_VERSION)
                return tm_err_set(err, -ENOTSUP, "raw offset 4: %s: version %u not supported", fmt,
                                  head[4]);
        if (head[5] != 32 && head[5] != 64)
                return tm_err_set(err, -ENOTSUP, "raw offset 5: %s: address width %u not supported",
                                  fmt, head[5]);
        if (head[7] != 0)
                return tm_err_set(err, -ENOTSUP, "raw offset 7: %s: flags 0x%02x not supported",
                                  fmt, head[7]);
        h->addr_bits = head[5];
        h->unit = head[6];
        return CU_HDR_LEN;
}

int cu_hdr_write(const char *magic, unsigned addr_bits, unsigned unit, uint8_t *out)
{
        memcpy(out, magic, 4);
        out[4] = CU_HDR_VERSION;
        out[5] = (uint8_t)addr_bits;
        out[6] = (uint8_t)unit;
        out[7] = 0;
        return CU_HDR_LEN;
}

int cu_probe_lines(const struct arec_fmt *c, const uint8_t *head, size_t n)
{
        /* a cut last line (a full probe buffer's, or a short file's still
         * being written) is left out, unless it is the only line */
        size_t end = n;
        while (end > 0 && head[end - 1] != '\n')
                end--;
        if (end == 0)
                end = n;
        struct tm_dec_state st;
        struct tm_ref out[64];
        size_t p = 0, total = 0;
        if (c->dec_init(&st, head, end, NULL) < 0)
                return 0;
        while (p < end) {
                size_t used = 0;
                ssize_t r = c->decode(&st, head + p, end - p, 1, p, &used, out, 64, NULL);
                if (r < 0)
                        return 0;
                total += (size_t)r;
                if (used == 0 && r == 0)
                        break;
                p += used;
        }
        return total > 0;
}
