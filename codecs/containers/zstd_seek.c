/* zstd seekable format: reading and writing the seek table. */
#include "zstd_seek.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CHUNK_ENTRIES 4096

int zseek_read(const struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
               struct zseek_loc *loc, struct tm_err *err)
{
        if (c->asize < 8 + ZSEEK_FOOTER)
                return 0;
        uint8_t foot[ZSEEK_FOOTER];
        uint64_t foot_at = c->asize - ZSEEK_FOOTER;
        int ret = tm_cont_pread(c, foot, sizeof foot, foot_at, err);
        if (ret < 0)
                return ret;
        if (tm_le32(foot + 5) != ZSEEK_MAGIC)
                return 0;
        uint32_t n = tm_le32(foot);
        uint8_t desc = foot[4];
        if (desc & 0x7c)
                return tm_cont_eio(c, foot_at + 4, err,
                                   "zstd seek table descriptor 0x%02x has reserved bits set", desc);
        unsigned esz = desc & 0x80 ? 12 : 8;
        uint64_t tsize = (uint64_t)n * esz + ZSEEK_FOOTER;
        if (n > ZSEEK_MAX_FRAMES || tsize + 8 > c->asize)
                return tm_cont_eio(c, foot_at, err,
                                   "zstd seek table of %u frames does not fit in the archive", n);
        uint64_t data_end = c->asize - tsize - 8;
        uint8_t head[8];
        if ((ret = tm_cont_pread(c, head, sizeof head, data_end, err)) < 0)
                return ret;
        if (tm_le32(head) != ZSEEK_SKIPPABLE_MAGIC || tm_le32(head + 4) != tsize)
                return tm_cont_eio(c, data_end, err,
                                   "zstd seek table frame header does not match its footer");

        uint8_t *buf = malloc((size_t)CHUNK_ENTRIES * esz);
        if (!buf)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        uint64_t coff = 0, roff = 0;
        for (uint32_t i = 0; i < n && ret == 0;) {
                uint32_t k = n - i < CHUNK_ENTRIES ? n - i : CHUNK_ENTRIES;
                uint64_t at = data_end + 8 + (uint64_t)i * esz;
                if ((ret = tm_cont_pread(c, buf, (size_t)k * esz, at, err)) < 0)
                        break;
                for (uint32_t j = 0; j < k; j++, i++) {
                        uint32_t cs = tm_le32(buf + (size_t)j * esz);
                        uint32_t rs = tm_le32(buf + (size_t)j * esz + 4);
                        if (cs == 0 && rs != 0) {
                                ret = tm_cont_eio(c, at + (uint64_t)j * esz, err,
                                                  "zstd seek table: frame %u has %u raw bytes "
                                                  "in 0 bytes",
                                                  i, rs);
                                break;
                        }
                        if (cs > data_end - coff) {
                                ret = tm_cont_eio(c, at + (uint64_t)j * esz, err,
                                                  "zstd seek table: frame %u runs past the "
                                                  "data (%llu bytes)",
                                                  i, (unsigned long long)data_end);
                                break;
                        }
                        struct tm_cpoint p = {.coff = coff, .roff = roff};
                        if (rs && tm_cpoints_want(pts, coff, roff) && tm_cpoints_add(pts, &p) < 0) {
                                ret = tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
                                break;
                        }
                        coff += cs;
                        roff += rs;
                }
        }
        free(buf);
        if (ret == 0 && coff != data_end)
                ret = tm_cont_eio(c, data_end, err,
                                  "zstd seek table: frames add up to %llu bytes, data is %llu",
                                  (unsigned long long)coff, (unsigned long long)data_end);
        if (ret < 0) {
                tm_cpoints_free(pts);
                return ret;
        }
        *raw_size = roff;
        *loc = (struct zseek_loc){.entries = data_end + 8, .data_end = data_end, .n = n, .esz = esz};
        return 1;
}

void zseek_iter_init(struct zseek_iter *it, const struct zseek_loc *loc)
{
        *it = (struct zseek_iter){.loc = *loc};
}

int zseek_iter_next(const struct tm_cont *c, struct zseek_iter *it, struct zseek_entry *e,
                    struct tm_err *err)
{
        const struct zseek_loc *l = &it->loc;
        if (it->next >= l->n)
                return 0;
        if (it->next >= it->first + it->len) {
                if (!it->buf && !(it->buf = malloc((size_t)CHUNK_ENTRIES * l->esz)))
                        return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
                uint32_t k = l->n - it->next < CHUNK_ENTRIES ? l->n - it->next : CHUNK_ENTRIES;
                int ret = tm_cont_pread(c, it->buf, (size_t)k * l->esz,
                                        l->entries + (uint64_t)it->next * l->esz, err);
                if (ret < 0)
                        return ret;
                it->first = it->next;
                it->len = k;
        }
        const uint8_t *p = it->buf + (size_t)(it->next - it->first) * l->esz;
        e->csize = tm_le32(p);
        e->rsize = tm_le32(p + 4);
        e->has_sum = l->esz == 12;
        e->sum = e->has_sum ? tm_le32(p + 8) : 0;
        it->next++;
        return 1;
}

void zseek_iter_free(struct zseek_iter *it)
{
        free(it->buf);
        it->buf = NULL;
}

int zseek_add(struct zseek_table *t, uint32_t csize, uint32_t rsize, uint32_t sum)
{
        if (t->n >= ZSEEK_MAX_FRAMES)
                return -EFBIG;
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 256;
                uint32_t *e = realloc(t->e, cap * 3 * sizeof *e);
                if (!e)
                        return -ENOMEM;
                t->e = e;
                t->cap = cap;
        }
        t->e[3 * t->n] = csize;
        t->e[3 * t->n + 1] = rsize;
        t->e[3 * t->n + 2] = sum;
        t->n++;
        return 0;
}

uint8_t *zseek_serialize(const struct zseek_table *t, size_t *len)
{
        size_t body = t->n * 12 + ZSEEK_FOOTER;
        uint8_t *b = malloc(8 + body);
        if (!b)
                return NULL;
        tm_put32(b, ZSEEK_SKIPPABLE_MAGIC);
        tm_put32(b + 4, (uint32_t)body);
        uint8_t *p = b + 8;
        for (size_t i = 0; i < t->n; i++, p += 12) {
                tm_put32(p, t->e[3 * i]);
                tm_put32(p + 4, t->e[3 * i + 1]);
                tm_put32(p + 8, t->e[3 * i + 2]);
        }
        tm_put32(p, (uint32_t)t->n);
        p[4] = 0x80; /* checksums: each is its frame's own, in frame order */
        tm_put32(p + 5, ZSEEK_MAGIC);
        *len = 8 + body;
        return b;
}

uint32_t zseek_order_crc(uint32_t crc, const struct zseek_entry *e)
{
        uint8_t b[12];
        tm_put32(b, e->csize);
        tm_put32(b + 4, e->rsize);
        tm_put32(b + 8, e->sum);
        return (uint32_t)crc32(crc, b, sizeof b);
}

static const char order_tag[8] = {'T', 'M', 'O', 'R', 'D', 'E', 'R', '1'};

void zseek_order_put(uint8_t *out, uint32_t n, uint64_t raw, uint32_t crc)
{
        tm_put32(out, ZSEEK_ORDER_MAGIC);
        tm_put32(out + 4, ZSEEK_ORDER_PAYLOAD);
        memcpy(out + 8, order_tag, sizeof order_tag);
        tm_put32(out + 16, n);
        tm_put64(out + 20, raw);
        tm_put32(out + 28, crc);
}

int zseek_order_get(const uint8_t *payload, uint32_t *n, uint64_t *raw, uint32_t *crc)
{
        if (memcmp(payload, order_tag, sizeof order_tag) != 0)
                return 0;
        *n = tm_le32(payload + 8);
        *raw = tm_le64(payload + 12);
        *crc = tm_le32(payload + 20);
        return 1;
}

void zseek_free(struct zseek_table *t)
{
        free(t->e);
        memset(t, 0, sizeof *t);
}
