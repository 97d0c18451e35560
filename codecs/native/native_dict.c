/* native_dict: the native encoding's dictionary chunk, both directions
 * (native.h; docs/formats/native.md, "The dictionary chunk").
 *
 * The chunk holds, per predicted stream kind, raw content that zstd takes
 * as a raw-content dictionary: a frame of storage TMN_STORE_DICT may copy
 * from it as if it preceded the stream. zstd takes a dictionary that
 * starts with its dictionary magic for a structured one, so the writer
 * never makes such a part and the reader refuses one; it ignores one
 * under 8 bytes, so the writer drops those and the reader refuses them. */
#include "native.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "../common/tm_huge.h"

#define PARTS_HDR (4 * TMN_NSTREAMS) /* the raw dictionary's part lengths */

static int zstd_dict_magic(const uint8_t *p, size_t n)
{
        return n >= 4 && tmn_get32(p) == ZSTD_MAGIC_DICTIONARY;
}

/* ---- reading ---- */

void tmn_dict_release(struct tmn_dict *d)
{
        free(d->raw);
        memset(d, 0, sizeof *d);
}

/* The parts of d->raw (d->raw_len bytes) into d; 0 or -EIO. */
static int dict_parts(struct tmn_dict *d, struct tm_err *err)
{
        const unsigned long long o = TMN_FILE_HDR + TMN_DICT_HDR;
        size_t at = PARTS_HDR;
        for (int k = 0; k < TMN_NSTREAMS; k++) {
                uint32_t n = tmn_get32(d->raw + 4 * k);
                if (n > d->raw_len - at || (n && n < TMN_DICT_PART_MIN) ||
                    zstd_dict_magic(d->raw + at, n))
                        return tm_err_set(err, -EIO,
                                          "raw offset %llu: dictionary part %d of %u bytes is bad",
                                          o, k, n);
                d->part[k] = d->raw + at;
                d->len[k] = n;
                at += n;
        }
        if (at != d->raw_len)
                return tm_err_set(err, -EIO, "raw offset %llu: dictionary parts of %zu bytes, %zu",
                                  o, at, d->raw_len);
        return 0;
}

int tmn_dict_check(const uint8_t *p, size_t n, size_t *chunk, size_t *raw_len, struct tm_err *err)
{
        const unsigned long long o = TMN_FILE_HDR;
        if (n < TMN_DICT_HDR)
                return tm_err_set(err, -EIO, "raw offset %llu: truncated dictionary chunk", o);
        if (tmn_get32(p) != TMN_DICT_MAGIC)
                return tm_err_set(err, -EIO, "raw offset %llu: no dictionary chunk (bad magic)", o);
        uint32_t raw = tmn_get32(p + 4), body = tmn_get32(p + 8);
        if (raw < PARTS_HDR || raw - PARTS_HDR > TMN_DICT_MAX)
                return tm_err_set(err, -EIO, "raw offset %llu: a dictionary of %u bytes", o + 4,
                                  raw);
        if (body < 1 || body > TMN_DICT_ZMAX)
                return tm_err_set(err, -EIO, "raw offset %llu: a dictionary chunk of %u bytes",
                                  o + 8, body);
        if (n - TMN_DICT_HDR < body)
                return tm_err_set(err, -EIO, "raw offset %llu: truncated dictionary chunk", o);
        uLong crc = crc32_z(crc32(0, p, 12), p + TMN_DICT_HDR, body);
        if ((uint32_t)crc != tmn_get32(p + 12))
                return tm_err_set(err, -EIO, "raw offset %llu: dictionary chunk checksum mismatch",
                                  o);
        *chunk = TMN_DICT_HDR + (size_t)body;
        *raw_len = raw;
        return 0;
}

int tmn_dict_load(const uint8_t *p, struct tmn_dict *d, struct tm_err *err)
{
        const unsigned long long o = TMN_FILE_HDR;
        memset(d, 0, sizeof *d);
        uint32_t raw = tmn_get32(p + 4), body = tmn_get32(p + 8);
        d->raw = tm_huge_alloc(tm_huge_round(raw));
        if (!d->raw)
                return tm_err_set(err, -ENOMEM, "out of memory");
        d->raw_len = raw;
        size_t z = ZSTD_decompress(d->raw, raw, p + TMN_DICT_HDR, body);
        int rc = ZSTD_isError(z) || z != raw
                     ? tm_err_set(err, -EIO, "raw offset %llu: the dictionary's zstd frame is bad",
                                  o + TMN_DICT_HDR)
                     : dict_parts(d, err);
        if (rc < 0)
                tmn_dict_release(d);
        return rc;
}

int tmn_dict_get(const uint8_t *p, size_t n, struct tmn_dict *d, size_t *chunk, struct tm_err *err)
{
        size_t raw;
        memset(d, 0, sizeof *d);
        int rc = tmn_dict_check(p, n, chunk, &raw, err);
        return rc < 0 ? rc : tmn_dict_load(p, d, err);
}

/* ---- writing ---- */

int tmn_dict_make(const struct tmn_raw *r, int level, struct tmn_dict *d, uint8_t **chunk,
                  size_t *clen)
{
        const uint8_t *p[TMN_NSTREAMS];
        size_t len[TMN_NSTREAMS], total = 0;
        for (int k = 0; k < TMN_NSTREAMS; k++) {
                p[k] = r->p[k];
                len[k] = r->len[k];
                while (zstd_dict_magic(p[k], len[k])) { /* else zstd parses it */
                        p[k]++;
                        len[k]--;
                }
                if (len[k] < TMN_DICT_PART_MIN)
                        len[k] = 0;
                total += len[k];
        }
        if (total > TMN_DICT_MAX)
                return -EFBIG;
        memset(d, 0, sizeof *d);
        d->raw_len = PARTS_HDR + total;
        d->raw = malloc(d->raw_len);
        size_t bound = ZSTD_compressBound(d->raw_len);
        uint8_t *c = malloc(TMN_DICT_HDR + bound);
        if (!d->raw || !c) {
                free(c);
                tmn_dict_release(d);
                return -ENOMEM;
        }
        size_t at = PARTS_HDR;
        for (int k = 0; k < TMN_NSTREAMS; k++) {
                tmn_put32(d->raw + 4 * k, (uint32_t)len[k]);
                if (len[k])
                        memcpy(d->raw + at, p[k], len[k]);
                d->part[k] = d->raw + at;
                d->len[k] = (uint32_t)len[k];
                at += len[k];
        }
        size_t z = ZSTD_compress(c + TMN_DICT_HDR, bound, d->raw, d->raw_len, level);
        if (ZSTD_isError(z) || z > TMN_DICT_ZMAX) {
                free(c);
                tmn_dict_release(d);
                return ZSTD_isError(z) ? -ENOMEM : -EFBIG;
        }
        tmn_put32(c, TMN_DICT_MAGIC);
        tmn_put32(c + 4, (uint32_t)d->raw_len);
        tmn_put32(c + 8, (uint32_t)z);
        tmn_put32(c + 12, (uint32_t)crc32_z(crc32(0, c, 12), c + TMN_DICT_HDR, z));
        *chunk = c;
        *clen = TMN_DICT_HDR + z;
        return 0;
}

struct tmn_cdict {
        ZSTD_CDict *c[TMN_NSTREAMS];
};

void tmn_cdict_free(struct tmn_cdict *c)
{
        if (!c)
                return;
        for (int k = 0; k < TMN_NSTREAMS; k++)
                ZSTD_freeCDict(c->c[k]);
        free(c);
}

struct tmn_cdict *tmn_cdict_new(const struct tmn_dict *d, int level)
{
        struct tmn_cdict *c = calloc(1, sizeof *c);
        for (int k = 0; c && k < TMN_NSTREAMS; k++)
                if (d->len[k] && !(c->c[k] = ZSTD_createCDict(d->part[k], d->len[k], level))) {
                        tmn_cdict_free(c);
                        return NULL;
                }
        return c;
}

struct tmn_dpass {
        ZSTD_CCtx *cc;
        uint8_t *out, *z; /* the block made, a frame's scratch */
        size_t ocap, zcap;
};

/* A context that uses a CDict where it is (zstd's "attach"), never
 * copying its tables in: a copy per stream of 2^20-entry tables costs
 * more than the search it saves. ZSTD_c_forceAttachDict is zstd's
 * experimental parameter 4 (ZSTD_c_experimentalParam4, 1001); a libzstd
 * that does not know it refuses it and copies, the same bytes either way
 * are not promised by zstd, so the encoder's bytes depend on its libzstd
 * as they do for every level. */
static ZSTD_CCtx *cctx_new(void)
{
        ZSTD_CCtx *c = ZSTD_createCCtx();
        if (c)
                (void)ZSTD_CCtx_setParameter(c, (ZSTD_cParameter)1001, 1);
        return c;
}

struct tmn_dpass *tmn_dpass_new(void)
{
        return calloc(1, sizeof(struct tmn_dpass));
}

void tmn_dpass_free(struct tmn_dpass *p)
{
        if (!p)
                return;
        ZSTD_freeCCtx(p->cc);
        free(p->out);
        free(p->z);
        free(p);
}

static int room(uint8_t **b, size_t *cap, size_t n)
{
        if (*cap >= n)
                return 0;
        uint8_t *q = realloc(*b, n);
        if (!q)
                return -ENOMEM;
        *b = q;
        *cap = n;
        return 0;
}

int tmn_dict_pass(struct tmn_dpass *p, const struct tmn_cdict *c, const uint8_t *blk, size_t len,
                  const struct tmn_raw *raw, const uint8_t **out, size_t *olen)
{
        *out = blk;
        *olen = len;
        const size_t tab = TMN_BLK_HDR + 1, first = tab + TMN_NSTREAMS * TMN_STREAM_ENTRY;
        if (!c || blk[TMN_BLK_HDR] == TMN_PLAIN)
                return 0;
        if (room(&p->out, &p->ocap, len) < 0 || (!p->cc && !(p->cc = cctx_new())))
                return -ENOMEM;
        memcpy(p->out, blk, first);
        size_t from = first, at = first;
        for (int s = 0; s < TMN_NSTREAMS; s++) {
                uint8_t *e = p->out + tab + s * TMN_STREAM_ENTRY;
                size_t k = tmn_get32(e + 1), rl = tmn_get32(e + 5);
                const uint8_t *src = blk + from;
                from += k;
                if (rl != raw->len[s])
                        return -EINVAL; /* not this block's streams */
                if (c->c[s] && rl && k >= TMN_DICT_TRY_MIN) {
                        size_t bound = ZSTD_compressBound(rl);
                        if (room(&p->z, &p->zcap, bound) < 0)
                                return -ENOMEM;
                        size_t z = ZSTD_CCtx_refCDict(p->cc, c->c[s]);
                        if (!ZSTD_isError(z))
                                z = ZSTD_compress2(p->cc, p->z, bound, raw->p[s], rl);
                        if (ZSTD_isError(z))
                                return -ENOMEM;
                        if (z < k) {
                                e[0] = TMN_STORE_DICT;
                                tmn_put32(e + 1, (uint32_t)z);
                                src = p->z;
                                k = z;
                        }
                }
                memmove(p->out + at, src, k);
                at += k;
        }
        size_t body = at - TMN_BLK_HDR;
        tmn_put32(p->out + 8, (uint32_t)body);
        tmn_put32(p->out + 12, (uint32_t)crc32_z(crc32(0, p->out, 12), p->out + TMN_BLK_HDR, body));
        *out = p->out;
        *olen = at;
        return 0;
}
