/* The index file (docs/index-format.md, "Byte layout, version 6"): the
 * checkpoints, view sizes and statistics of index.h, plus the container's
 * seek index, keyed by the archive's size, mtime and inode, the codec and
 * container names and a CRC of the schema (a Meta-TF trace's schema comes
 * from a DTD that can change beside it). Nothing in it is trusted: any
 * mismatch or inconsistency makes the load fail, and callers rebuild. */
#include "index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../codecs/common/tm_io.h"
#include "ixfile.h"

static const char rix_magic[8] = {'T', 'M', 'R', 'I', 'N', 'D', 'E', 'X'};
#define RIX_VERSION 6
#define HEAD_BYTES (TM_IX_KEY_END + 4 * 4 + 8 * 6)

/* ---- the statistics: the generic words, then the family's block ---- */

/* Bytes of the statistics of a trace whose family is fam (or NULL). */
static size_t stats_bytes(const struct tm_family *fam)
{
        return 8 * TM_STATS_WORDS + (fam ? fam->stats_size : 0);
}

/* Both parts are 64-bit words (stats.h, family.h): little-endian. */
static void stats_put(const struct tm_stats *st, size_t bytes, uint8_t *p)
{
        for (size_t i = 0; i < bytes / 8; i++) {
                uint64_t w;
                memcpy(&w, (const uint8_t *)st + 8 * i, 8);
                tm_ix_put64(&p, w);
        }
}

static void stats_get(struct tm_stats *st, size_t bytes, const uint8_t *p)
{
        for (size_t i = 0; i < bytes / 8; i++) {
                uint64_t w = tm_ix_get64(&p);
                memcpy((uint8_t *)st + 8 * i, &w, 8);
        }
}

/* ---- the schema's fingerprint ---- */

uint32_t tm_index_schema_crc(const struct tm_schema *s)
{
        uLong c = crc32(0, NULL, 0);
        c = crc32(c, (const Bytef *)s->name, TM_NAME_MAX);
        for (unsigned i = 0; i < s->nfields && i < TM_SCHEMA_FIELDS_MAX; i++) {
                const struct tm_field *f = &s->field[i];
                uint8_t ts[2] = {f->type, f->show};
                c = crc32(c, (const Bytef *)f->name, (uInt)strnlen(f->name, TM_NAME_MAX));
                c = crc32(c, ts, 2);
        }
        for (unsigned i = 0; i < s->nkinds && i < TM_SCHEMA_KINDS_MAX; i++) {
                const struct tm_kind *k = &s->kind[i];
                uint8_t t[5] = {(uint8_t)k->tag, (uint8_t)(k->tag >> 8), (uint8_t)(k->tag >> 16),
                                (uint8_t)(k->tag >> 24), k->nfields};
                c = crc32(c, (const Bytef *)k->name, (uInt)strnlen(k->name, TM_NAME_MAX));
                c = crc32(c, t, 5);
                c = crc32(c, k->field,
                          k->nfields < TM_KIND_FIELDS_MAX ? k->nfields : TM_KIND_FIELDS_MAX);
                c = crc32(c, (const Bytef *)k->label, (uInt)strnlen(k->label, TM_LABEL_MAX));
        }
        for (unsigned i = 0; i < s->nforms && i < TM_SCHEMA_FORMS_MAX; i++) {
                const struct tm_form *fm = &s->form[i];
                c = crc32(c, (const Bytef *)fm->name, (uInt)strnlen(fm->name, TM_NAME_MAX));
                for (unsigned k = 0; k < s->nkinds && k < TM_SCHEMA_KINDS_MAX; k++)
                        c = crc32(c, (const Bytef *)fm->label[k],
                                  (uInt)strnlen(fm->label[k], TM_LABEL_MAX));
                c = crc32(c, fm->show, TM_SCHEMA_FIELDS_MAX);
                c = crc32(c, fm->digits, TM_SCHEMA_FIELDS_MAX);
        }
        for (unsigned i = 0; i < s->nsections && i < TM_SCHEMA_SECTIONS_MAX; i++)
                c = crc32(c, (const Bytef *)s->section[i].name,
                          (uInt)strnlen(s->section[i].name, TM_NAME_MAX));
        return (uint32_t)c;
}

/* ---- the head ---- */

struct rhead {
        uint32_t schema_crc, stsize, ncol, n;
        uint64_t k, raw_size, body_off, stats_off, cont_off, file_size;
};

/* The fields after the key (bytes 0-71: tm_ix_head_put). */
static void head_encode(const struct rhead *h, uint8_t *b)
{
        uint8_t *p = b + TM_IX_KEY_END;
        uint64_t w2 = (uint64_t)h->schema_crc | (uint64_t)h->stsize << 32;
        uint64_t w3 = (uint64_t)h->ncol | (uint64_t)h->n << 32;
        tm_ix_put64(&p, w2);
        tm_ix_put64(&p, w3);
        tm_ix_put64(&p, h->k);
        tm_ix_put64(&p, h->raw_size);
        tm_ix_put64(&p, h->body_off);
        tm_ix_put64(&p, h->stats_off);
        tm_ix_put64(&p, h->cont_off);
        tm_ix_put64(&p, h->file_size);
}

static void head_decode(struct rhead *h, const uint8_t *b)
{
        const uint8_t *p = b + TM_IX_KEY_END;
        uint64_t w2 = tm_ix_get64(&p), w3 = tm_ix_get64(&p);
        h->schema_crc = (uint32_t)w2;
        h->stsize = (uint32_t)(w2 >> 32);
        h->ncol = (uint32_t)w3;
        h->n = (uint32_t)(w3 >> 32);
        h->k = tm_ix_get64(&p);
        h->raw_size = tm_ix_get64(&p);
        h->body_off = tm_ix_get64(&p);
        h->stats_off = tm_ix_get64(&p);
        h->cont_off = tm_ix_get64(&p);
        h->file_size = tm_ix_get64(&p);
}

/* Bytes of the body: totals, raw offsets, columns, states. */
static uint64_t body_bytes(uint64_t ncol, uint64_t n, uint64_t stsize)
{
        return 8 * ncol + 8 * n + 8 * n * ncol + n * stsize;
}

/* ---- save ---- */

static int write_u64s(FILE *f, const uint64_t *v, size_t n)
{
        uint8_t b[8 * 64];
        while (n) {
                size_t m = n < 64 ? n : 64;
                uint8_t *p = b;
                for (size_t i = 0; i < m; i++)
                        tm_ix_put64(&p, v[i]);
                if (fwrite(b, 1, 8 * m, f) != 8 * m)
                        return -EIO;
                v += m;
                n -= m;
        }
        return 0;
}

static int save_body(const struct tm_index *ix, const struct tm_cont *c, FILE *f, struct rhead *h,
                     struct tm_err *err)
{
        uint8_t zero[HEAD_BYTES] = {0};
        uint8_t st[sizeof(struct tm_stats)];
        size_t stn = stats_bytes(ix->fam);
        if (fwrite(zero, 1, sizeof zero, f) != sizeof zero ||
            write_u64s(f, ix->tot, ix->ncol) < 0 || write_u64s(f, ix->raw, ix->n) < 0 ||
            write_u64s(f, ix->col, (size_t)ix->n * ix->ncol) < 0 ||
            fwrite(ix->st, 1, (size_t)ix->n * ix->stsize, f) != (size_t)ix->n * ix->stsize)
                return -EIO;
        h->body_off = HEAD_BYTES;
        h->stats_off = h->body_off + body_bytes(ix->ncol, ix->n, ix->stsize);
        stats_put(&ix->stats, stn, st);
        if (fwrite(st, 1, stn, f) != stn)
                return -EIO;
        h->cont_off = h->stats_off + stn;
        int64_t cl = tm_cont_index_save(c, f, err);
        if (cl < 0)
                return (int)cl;
        h->file_size = h->cont_off + (uint64_t)cl;
        return 0;
}

int tm_index_save(const struct tm_index *ix, const struct tm_cont *c,
                   const struct tm_index_key *key, uint32_t schema_crc, const char *path,
                   struct tm_err *err)
{
        struct tm_ixfile x;
        int rc = tm_ixfile_create(&x, path, err);
        if (rc < 0)
                return rc;
        struct rhead h;
        memset(&h, 0, sizeof h);
        h.schema_crc = schema_crc;
        h.stsize = (uint32_t)ix->stsize;
        h.ncol = ix->ncol;
        h.n = ix->n;
        h.k = ix->k;
        h.raw_size = ix->raw_size;
        uint8_t hb[HEAD_BYTES];
        rc = save_body(ix, c, x.f, &h, err);
        tm_ix_head_put(hb, rix_magic, RIX_VERSION, key);
        head_encode(&h, hb);
        return tm_ixfile_commit(&x, rc, hb, sizeof hb, h.file_size, err);
}

/* ---- load ---- */

/* Every checkpoint in order and within the totals, the first at the
 * start, at least one and at most k records between two and after the
 * last, an ascii line of at least a byte a record; statistics that add
 * up. Of decoder states, only those the decoder cannot reach can be told
 * without decoding (the key's state_ok, in tm_index_load; docs/index-
 * format.md, "What the index trusts"). */
static int consistent(const struct tm_index *ix, uint64_t hdr_len)
{
        const struct tm_stats *s = &ix->stats;
        uint64_t kinds = 0;
        for (unsigned k = 0; k < TM_SCHEMA_KINDS_MAX; k++)
                kinds += s->kind_n[k];
        /* the family's figures (heap: parts within their wholes, an errno
         * as the reason, id lists within their arrays) */
        if (ix->fam && ix->fam->stats_ok && !ix->fam->stats_ok(s->fam))
                return 0;
        if (kinds != s->records || s->records != ix->tot[TM_COL_REC] || ix->raw[0] != hdr_len ||
            hdr_len > ix->raw_size)
                return 0;
        for (unsigned c = 0; c < ix->ncol; c++)
                if (ix->col[c] != 0)
                        return 0;
        if (ix->tot[TM_COL_ASCII] < ix->tot[TM_COL_REC])
                return 0;
        for (uint32_t i = 1; i < ix->n; i++) {
                const uint64_t *row = ix->col + (size_t)i * ix->ncol, *prev = row - ix->ncol;
                for (unsigned c = 0; c < ix->ncol; c++)
                        if (row[c] < prev[c] || row[c] > ix->tot[c])
                                return 0;
                /* 1 to k records apart; every record is an ascii line of
                 * at least one byte */
                uint64_t recs = row[TM_COL_REC] - prev[TM_COL_REC];
                if (ix->raw[i] < ix->raw[i - 1] || ix->raw[i] > ix->raw_size || recs == 0 ||
                    recs > ix->k || row[TM_COL_ASCII] - prev[TM_COL_ASCII] < recs)
                        return 0;
        }
        const uint64_t *last = ix->col + (size_t)(ix->n - 1) * ix->ncol;
        return ix->tot[TM_COL_REC] - last[TM_COL_REC] <= ix->k &&
               ix->tot[TM_COL_ASCII] - last[TM_COL_ASCII] >=
                   ix->tot[TM_COL_REC] - last[TM_COL_REC];
}

static int read_u64s(int fd, uint64_t off, uint64_t *v, size_t n)
{
        uint8_t b[8 * 64];
        while (n) {
                size_t m = n < 64 ? n : 64;
                if (tm_pread_full(fd, b, 8 * m, off) != (ssize_t)(8 * m))
                        return -EIO;
                const uint8_t *p = b;
                for (size_t i = 0; i < m; i++)
                        v[i] = tm_ix_get64(&p);
                v += m;
                n -= m;
                off += 8 * m;
        }
        return 0;
}

static struct tm_index *load_body(int fd, const struct rhead *h, const struct tm_family *fam)
{
        struct tm_index *ix = calloc(1, sizeof *ix);
        if (!ix)
                return NULL;
        ix->k = h->k;
        ix->n = ix->cap = h->n;
        ix->ncol = h->ncol;
        ix->stsize = h->stsize;
        ix->raw_size = h->raw_size;
        ix->fam = fam;
        ix->tot = malloc(8 * (size_t)h->ncol);
        ix->raw = malloc(8 * (size_t)h->n);
        ix->col = malloc(8 * (size_t)h->n * h->ncol);
        ix->st = malloc((size_t)h->n * h->stsize + 1);
        uint64_t off = h->body_off;
        uint8_t st[sizeof(struct tm_stats)];
        size_t stn = stats_bytes(fam);
        if (!ix->tot || !ix->raw || !ix->col || !ix->st ||
            read_u64s(fd, off, ix->tot, h->ncol) < 0 ||
            read_u64s(fd, off += 8 * (uint64_t)h->ncol, ix->raw, h->n) < 0 ||
            read_u64s(fd, off += 8 * (uint64_t)h->n, ix->col, (size_t)h->n * h->ncol) < 0 ||
            tm_pread_full(fd, ix->st, (size_t)h->n * h->stsize,
                          off += 8 * (uint64_t)h->n * h->ncol) != (ssize_t)h->n * h->stsize ||
            tm_pread_full(fd, st, stn, h->stats_off) != (ssize_t)stn) {
                tm_index_free(ix);
                return NULL;
        }
        stats_get(&ix->stats, stn, st);
        return ix;
}

int tm_index_load(const char *path, const struct tm_index_key *key, const struct tm_schema *s,
                   size_t stsize, uint64_t hdr_len, struct tm_cont *c, struct tm_index **out,
                   int *fd_out, struct tm_err *err)
{
        const struct tm_family *fam = tm_family_of(s);
        if (fam && !fam->stats_size)
                fam = NULL;
        int fd;
        struct stat sb;
        int rc = tm_ixfile_open(path, key->trust, &fd, &sb, err);
        if (rc < 0)
                return rc;
        uint8_t hb[HEAD_BYTES];
        struct rhead h;
        struct tm_index *ix = NULL;
        rc = -EIO;
        const char *why = "too short";
        if (sb.st_size < HEAD_BYTES ||
            tm_pread_full(fd, hb, sizeof hb, 0) != (ssize_t)sizeof hb)
                goto bad;
        rc = tm_ix_head_check(hb, rix_magic, RIX_VERSION, key);
        why = rc == -ESTALE ? "made for another version of the archive"
                            : "not a record index file of this version";
        if (rc < 0)
                goto bad;
        head_decode(&h, hb);
        rc = -ESTALE;
        why = "made for another schema";
        if (h.schema_crc != tm_index_schema_crc(s) || h.ncol != tm_col_count(s) ||
            h.stsize != stsize)
                goto bad;
        rc = -EIO;
        why = "bad layout";
        if (h.file_size != (uint64_t)sb.st_size || h.n < 1 || h.n > TM_CKPT_CAP || h.k < 1 ||
            h.body_off != HEAD_BYTES ||
            h.stats_off != h.body_off + body_bytes(h.ncol, h.n, h.stsize) ||
            h.cont_off != h.stats_off + stats_bytes(fam) || h.cont_off > h.file_size)
                goto bad;
        uint32_t crc;
        why = "CRC mismatch";
        if (tm_ixfile_crc(fd, TM_IXFILE_CRC_FROM, h.file_size, &crc) < 0 ||
            crc != tm_ixfile_head_crc(hb))
                goto bad;
        why = "out of memory or a short read";
        ix = load_body(fd, &h, fam);
        if (!ix)
                goto bad;
        why = "inconsistent checkpoints";
        if (!consistent(ix, hdr_len))
                goto bad;
        why = "a checkpoint's decoder state the decoder cannot reach";
        for (uint32_t i = 0; key->state_ok && i < ix->n; i++) {
                struct tm_rstate st = {0};
                memcpy(st.b, ix->st + (size_t)i * ix->stsize, ix->stsize);
                if (!key->state_ok(key->state_ctx, &st))
                        goto bad;
        }
        rc = tm_ixfile_finish_load(fd, path, c, h.cont_off, h.file_size - h.cont_off,
                                   ix->raw_size, fd_out, err);
        if (rc < 0)
                goto fail;
        *out = ix;
        return 0;
bad:
        tm_err_set(err, rc, "%s: %s", path, why);
fail:
        tm_index_free(ix);
        close(fd);
        return rc < 0 ? rc : -EIO;
}

int tm_index_compare(const struct tm_index *a, const struct tm_index *b, struct tm_err *err)
{
        if (a->raw_size != b->raw_size)
                return tm_index_differ(err, "raw size", b->raw_size);
        if (a->ncol != b->ncol || a->stsize != b->stsize)
                return tm_index_differ(err, "columns", b->ncol);
        if (a->k != b->k || a->n != b->n)
                return tm_index_differ(err, "checkpoint count", b->n);
        for (unsigned j = 0; j < a->ncol; j++)
                if (a->tot[j] != b->tot[j])
                        return tm_index_differ(err, "view size of column", j);
        for (uint32_t i = 0; i < a->n; i++)
                if (a->raw[i] != b->raw[i] ||
                    memcmp(a->col + (size_t)i * a->ncol, b->col + (size_t)i * b->ncol,
                           a->ncol * sizeof *a->col) != 0 ||
                    memcmp(a->st + i * a->stsize, b->st + i * b->stsize, a->stsize) != 0)
                        return tm_index_differ(err, "checkpoint", i);
        /* the statistics as stored (their padding aside) */
        uint8_t sa[sizeof(struct tm_stats)], sb[sizeof(struct tm_stats)];
        size_t n = stats_bytes(a->fam);
        if (a->fam != b->fam)
                return tm_index_differ(err, "family", 0);
        stats_put(&a->stats, n, sa);
        stats_put(&b->stats, n, sb);
        if (memcmp(sa, sb, n) != 0)
                return tm_index_differ(err, "stats", 0);
        return 0;
}
