/* The Meta-TF file header (metatf.h): reader, writer, byte-order helpers. */
#include "metatf.h"

#include <errno.h>
#include <string.h>

void mtf_put(uint8_t *out, uint64_t v, unsigned width, unsigned bo)
{
        for (unsigned i = 0; i < width; i++) {
                unsigned shift = 8 * i;
                uint8_t byte = shift < 64 ? (uint8_t)(v >> shift) : 0;
                out[bo == MTF_LE ? i : width - 1 - i] = byte;
        }
}

uint64_t mtf_get(const uint8_t *p, unsigned width, unsigned bo)
{
        uint64_t v = 0;
        for (unsigned i = 0; i < width; i++)
                v = v << 8 | p[bo == MTF_LE ? width - 1 - i : i];
        return v;
}

static uint32_t get32(const uint8_t *p, unsigned bo)
{
        if (bo == MTF_LE)
                return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                       (uint32_t)p[3] << 24;
        return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

size_t mtf_header_size(const struct mtf_header *h)
{
        return MTF_FIXED_HEADER + (size_t)h->dtdlength + (size_t)h->nsections * MTF_SHDR_SIZE;
}

int mtf_header_write(const struct mtf_header *h, uint8_t *out, size_t cap, struct tm_err *err)
{
        if ((h->class != 1 && h->class != 2) || (h->byteorder != MTF_LE && h->byteorder != MTF_BE))
                return tm_err_set(err, -EINVAL, "Meta-TF header: class %u or byte order %u",
                                  h->class, h->byteorder);
        if (h->dtdlength == 0 || memchr(h->dtd, '\0', h->dtdlength))
                return tm_err_set(err, -EINVAL, "Meta-TF header: empty DTD name or a NUL in it");
        if (h->nsections > MTF_SECTIONS_MAX)
                return tm_err_set(err, -EINVAL, "Meta-TF header: %u sections, at most %u",
                                  h->nsections, MTF_SECTIONS_MAX);
        size_t n = mtf_header_size(h);
        if (cap < n)
                return tm_err_set(err, -EINVAL, "Meta-TF header: %zu bytes, room for %zu", n, cap);
        memset(out, 0, MTF_FIXED_HEADER);
        memcpy(out, MTF_MAGIC, 4);
        out[4] = h->class;
        out[5] = h->byteorder;
        out[6] = h->dtdlength;
        mtf_put(out + 16, h->nsections, 4, h->byteorder);
        mtf_put(out + 20, h->start, 4, h->byteorder);
        mtf_put(out + 24, h->nrecords, 4, h->byteorder);
        memcpy(out + MTF_FIXED_HEADER, h->dtd, h->dtdlength);
        uint8_t *s = out + MTF_FIXED_HEADER + h->dtdlength;
        for (unsigned i = 0; i < h->nsections; i++, s += MTF_SHDR_SIZE) {
                mtf_put(s, h->section[i].number, 4, h->byteorder);
                mtf_put(s + 4, h->section[i].start, 4, h->byteorder);
                mtf_put(s + 8, h->section[i].size, 4, h->byteorder);
        }
        return (int)n;
}

/* Check the section table: numbers 1..255 and unique; a section lies
 * wholly before start (data) or wholly at or after it (records). */
static int check_sections(const struct mtf_header *h, size_t table_end, struct tm_err *err)
{
        for (unsigned i = 0; i < h->nsections; i++) {
                const struct mtf_shdr *s = &h->section[i];
                size_t at = MTF_FIXED_HEADER + h->dtdlength + (size_t)i * MTF_SHDR_SIZE;
                uint64_t end = (uint64_t)s->start + s->size;
                if (s->number < 1 || s->number > 255)
                        return tm_err_set(err, -EIO, "raw offset %zu: section number %u (1..255)",
                                          at, s->number);
                for (unsigned j = 0; j < i; j++)
                        if (h->section[j].number == s->number)
                                return tm_err_set(err, -EIO,
                                                  "raw offset %zu: section %u listed twice", at,
                                                  s->number);
                if (s->start < h->start && (end > h->start || s->start < table_end))
                        return tm_err_set(err, -EIO,
                                          "raw offset %zu: section %u (bytes %u..%llu) straddles "
                                          "the section table (ends %zu) or start (%u)",
                                          at, s->number, s->start, (unsigned long long)end,
                                          table_end, h->start);
        }
        return 0;
}

size_t mtf_head_need(const uint8_t *b, size_t n)
{
        if (n < MTF_FIXED_HEADER || memcmp(b, MTF_MAGIC, 4) != 0 ||
            (b[5] != MTF_LE && b[5] != MTF_BE))
                return 0;
        return get32(b + 20, b[5]);
}

int mtf_header_read(const uint8_t *b, size_t n, struct mtf_header *h, struct tm_err *err)
{
        memset(h, 0, sizeof *h);
        if (n < MTF_FIXED_HEADER)
                return tm_err_set(err, -EIO, "raw offset %zu: truncated Meta-TF header", n);
        if (memcmp(b, MTF_MAGIC, 4) != 0)
                return tm_err_set(err, -EIO, "raw offset 0: not a Meta-TF file (magic)");
        h->class = b[4];
        h->byteorder = b[5];
        h->dtdlength = b[6];
        if (h->class != 1 && h->class != 2)
                return tm_err_set(err, -EIO, "raw offset 4: class %u (1 or 2)", h->class);
        if (h->byteorder != MTF_LE && h->byteorder != MTF_BE)
                return tm_err_set(err, -EIO, "raw offset 5: byte order %u (1 or 2)", h->byteorder);
        if (h->dtdlength == 0)
                return tm_err_set(err, -EIO, "raw offset 6: no DTD name");
        h->nsections = get32(b + 16, h->byteorder);
        h->start = get32(b + 20, h->byteorder);
        h->nrecords = get32(b + 24, h->byteorder);
        if (h->nsections > MTF_SECTIONS_MAX)
                return tm_err_set(err, -ENOTSUP, "raw offset 16: %u sections, at most %u",
                                  h->nsections, MTF_SECTIONS_MAX);
        size_t table_end = mtf_header_size(h);
        if (n < table_end)
                return tm_err_set(err, -EIO, "raw offset %zu: truncated Meta-TF header", n);
        memcpy(h->dtd, b + MTF_FIXED_HEADER, h->dtdlength);
        h->dtd[h->dtdlength] = '\0';
        const uint8_t *s = b + MTF_FIXED_HEADER + h->dtdlength;
        for (unsigned i = 0; i < h->nsections; i++, s += MTF_SHDR_SIZE) {
                h->section[i].number = get32(s, h->byteorder);
                h->section[i].start = get32(s + 4, h->byteorder);
                h->section[i].size = get32(s + 8, h->byteorder);
        }
        if (h->start < table_end || h->start > MTF_HEADER_MAX)
                return tm_err_set(err, h->start < table_end ? -EIO : -ENOTSUP,
                                  "raw offset 20: start %u is before the section table's end "
                                  "(%zu) or after %u",
                                  h->start, table_end, MTF_HEADER_MAX);
        int ret = check_sections(h, table_end, err);
        if (ret < 0)
                return ret;
        if (n < h->start)
                return tm_err_set(err, -EIO,
                                  "raw offset %zu: truncated Meta-TF header (data sections run to "
                                  "%u)",
                                  n, h->start);
        return (int)h->start;
}
