/* cont_zip_dir: a ZIP archive's directory (PKWARE's APPNOTE.TXT): the end
 * records, the ZIP64 ones through their locator, and a walk over the
 * central directory entry by entry (cont_zip_dir.h). */
#include "cont_zip_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tm_zip_show_name(const uint8_t *name, size_t n, char *out)
{
        size_t k = n < ZIP_SHOW_NAME ? n : ZIP_SHOW_NAME;
        for (size_t i = 0; i < k; i++)
                out[i] = name[i] >= 0x20 && name[i] < 0x7f ? (char)name[i] : '?';
        out[k] = 0;
}

/* ---- the end records ---- */

/* The end record: the last 22 bytes when the archive has no comment, else
 * found searching back through at most 64 KiB for a signature whose
 * comment length reaches exactly the archive's end. Returns its offset in
 * *at and its bytes in rec. */
static int find_end(const struct tm_cont *c, uint64_t *at, uint8_t rec[ZIP_END_LEN],
                    struct tm_err *err)
{
        if (c->asize < ZIP_END_LEN)
                return tm_cont_eio(c, c->asize, err, "zip: archive too short for an end record");
        uint64_t span =
            c->asize < ZIP_END_LEN + ZIP_COMMENT_MAX ? c->asize : ZIP_END_LEN + ZIP_COMMENT_MAX;
        uint8_t *tail = malloc((size_t)span);
        if (!tail)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        uint64_t base = c->asize - span;
        int ret = tm_cont_pread(c, tail, (size_t)span, base, err);
        for (size_t i = (size_t)(span - ZIP_END_LEN) + 1; ret == 0 && i-- > 0;) {
                if (tm_le32(tail + i) == ZIP_END_SIG &&
                    i + ZIP_END_LEN + tm_zip_le16(tail + i + 20) == span) {
                        memcpy(rec, tail + i, ZIP_END_LEN);
                        *at = base + i;
                        free(tail);
                        return 0;
                }
        }
        free(tail);
        return ret < 0 ? ret
                       : tm_cont_eio(c, c->asize, err,
                                     "zip: no end of central directory record (archive cut "
                                     "short?)");
}

/* The ZIP64 end record through its locator, just before the end record at
 * at. Returns 1 and fills d, 0 when there is no locator. */
static int read_zip64_end(const struct tm_cont *c, uint64_t at, struct zip_dir *d,
                          struct tm_err *err)
{
        uint8_t loc[ZIP64_LOC_LEN], rec[ZIP64_END_LEN];
        if (at < ZIP64_LOC_LEN)
                return 0;
        uint64_t lat = at - ZIP64_LOC_LEN;
        int ret = tm_cont_pread(c, loc, sizeof loc, lat, err);
        if (ret < 0)
                return ret;
        if (tm_le32(loc) != ZIP64_LOC_SIG)
                return 0;
        uint64_t z = tm_le64(loc + 8);
        if (tm_le32(loc + 4) != 0 || tm_le32(loc + 16) > 1)
                return tm_err_set(err, -ENOTSUP,
                                  "%s: archive offset %llu: zip: split or spanned archives are "
                                  "not read",
                                  c->path, (unsigned long long)lat);
        if (z > lat || lat - z < ZIP64_END_LEN)
                return tm_cont_eio(c, lat, err,
                                   "zip: the ZIP64 locator points at %llu, outside the archive "
                                   "before it",
                                   (unsigned long long)z);
        if ((ret = tm_cont_pread(c, rec, sizeof rec, z, err)) < 0)
                return ret;
        if (tm_le32(rec) != ZIP64_END_SIG || tm_le64(rec + 4) < ZIP64_END_LEN - 12 ||
            tm_le64(rec + 4) > lat - z - 12)
                return tm_cont_eio(c, z, err,
                                   "zip: no valid ZIP64 end record where the locator "
                                   "points");
        if (tm_le32(rec + 16) != 0 || tm_le32(rec + 20) != 0 ||
            tm_le64(rec + 24) != tm_le64(rec + 32))
                return tm_err_set(err, -ENOTSUP,
                                  "%s: archive offset %llu: zip: split or spanned archives are "
                                  "not read",
                                  c->path, (unsigned long long)z);
        d->count = tm_le64(rec + 32);
        d->size = tm_le64(rec + 40);
        d->off = tm_le64(rec + 48);
        d->end = z;
        d->rec = z + 32;
        return 1;
}

int tm_zip_read_dir(const struct tm_cont *c, struct zip_dir *d, struct tm_err *err)
{
        uint8_t rec[ZIP_END_LEN] = {0};
        uint64_t at = 0;
        int ret = find_end(c, &at, rec, err);
        if (ret < 0)
                return ret;
        uint64_t disk = tm_zip_le16(rec + 4), cdisk = tm_zip_le16(rec + 6),
                 here = tm_zip_le16(rec + 8);
        struct zip_dir z = {.count = tm_zip_le16(rec + 10),
                            .size = tm_le32(rec + 12),
                            .off = tm_le32(rec + 16),
                            .end = at,
                            .rec = at + 10};
        int sat = z.count == ZIP_SAT16 || z.size == ZIP_SAT32 || z.off == ZIP_SAT32;
        struct zip_dir z64 = {0};
        if ((ret = read_zip64_end(c, at, &z64, err)) < 0)
                return ret;
        if (ret == 1) {
                /* APPNOTE 4.4.1.4: the ZIP64 value stands for a saturated one */
                z.count = z.count == ZIP_SAT16 ? z64.count : z.count;
                z.size = z.size == ZIP_SAT32 ? z64.size : z.size;
                z.off = z.off == ZIP_SAT32 ? z64.off : z.off;
                z.end = z64.end;
                z.rec = sat ? z64.rec : z.rec;
                disk = cdisk = 0;
                here = z.count;
        } else if (sat) {
                return tm_cont_eio(c, at, err,
                                   "zip: the end record's fields are saturated (ZIP64) but there "
                                   "is no ZIP64 end record");
        }
        if (disk != 0 || cdisk != 0 || here != z.count)
                return tm_err_set(err, -ENOTSUP,
                                  "%s: archive offset %llu: zip: split or spanned archives are "
                                  "not read",
                                  c->path, (unsigned long long)at);
        if (z.off > z.end || z.size > z.end - z.off)
                return tm_cont_eio(c, z.rec, err,
                                   "zip: the central directory (%llu bytes at %llu) lies outside "
                                   "the archive before its end record at %llu",
                                   (unsigned long long)z.size, (unsigned long long)z.off,
                                   (unsigned long long)z.end);
        if (z.count > z.size / ZIP_CENTRAL_LEN)
                return tm_cont_eio(c, z.rec, err,
                                   "zip: %llu entries cannot fit in a central directory of %llu "
                                   "bytes",
                                   (unsigned long long)z.count, (unsigned long long)z.size);
        if (z.count == 0)
                return tm_cont_eio(c, z.rec, err,
                                   "zip: the archive starts with a member but its directory "
                                   "lists none");
        *d = z;
        return 0;
}

/* ---- the central directory ---- */

int tm_zip_extra64(const uint8_t *x, size_t n, uint64_t *const vals[], unsigned nvals)
{
        int need = 0;
        for (unsigned i = 0; i < nvals; i++)
                need |= *vals[i] == ZIP_SAT32;
        while (n >= 4) {
                size_t id = (size_t)tm_zip_le16(x), sz = (size_t)tm_zip_le16(x + 2);
                if (sz > n - 4)
                        break;
                if (id == ZIP64_EXTRA_ID) {
                        const uint8_t *p = x + 4;
                        for (unsigned i = 0; i < nvals; i++) {
                                if (*vals[i] != ZIP_SAT32)
                                        continue;
                                if (p + 8 > x + 4 + sz)
                                        return -1;
                                *vals[i] = tm_le64(p);
                                p += 8;
                        }
                        return 0;
                }
                x += 4 + sz;
                n -= 4 + sz;
        }
        return need ? -1 : 0;
}

/* A window on the directory that holds any one entry. */
struct cd_buf {
        uint8_t *b;
        size_t cap, len;
        uint64_t off; /* archive offset of b[0] */
};

/* The bytes [at, at+n) of the directory, which ends at end. */
static const uint8_t *cd_get(const struct tm_cont *c, struct cd_buf *cb, uint64_t at, size_t n,
                             uint64_t end, struct tm_err *err, int *ret)
{
        if (at >= cb->off && at + n <= cb->off + cb->len)
                return cb->b + (at - cb->off);
        size_t want = end - at < cb->cap ? (size_t)(end - at) : cb->cap;
        cb->len = 0;
        if ((*ret = tm_cont_pread(c, cb->b, want, at, err)) < 0)
                return NULL;
        cb->off = at;
        cb->len = want;
        return cb->b;
}

/* Parse the entry of len bytes at p (archive offset at) into e. */
static int parse_entry(const struct tm_cont *c, const uint8_t *p, uint64_t at, struct zip_entry *e,
                       struct tm_err *err)
{
        size_t nlen = (size_t)tm_zip_le16(p + 28), xlen = (size_t)tm_zip_le16(p + 30);
        e->at = at;
        e->name = p + ZIP_CENTRAL_LEN;
        e->nlen = nlen;
        e->flags = (unsigned)tm_zip_le16(p + 8);
        e->method = (unsigned)tm_zip_le16(p + 10);
        e->crc = tm_le32(p + 16);
        e->csize = tm_le32(p + 20);
        e->usize = tm_le32(p + 24);
        e->lho = tm_le32(p + 42);
        uint64_t *const vals[] = {&e->usize, &e->csize, &e->lho};
        if (tm_zip_extra64(p + ZIP_CENTRAL_LEN + nlen, xlen, vals, 3) < 0)
                return tm_cont_eio(c, at, err,
                                   "zip: central directory entry %llu: a saturated size or offset "
                                   "without its ZIP64 extra field",
                                   (unsigned long long)e->index);
        return 0;
}

int tm_zip_cd_walk(const struct tm_cont *c, const struct zip_dir *d, zip_entry_fn fn, void *arg,
                   struct tm_err *err)
{
        struct cd_buf cb = {.cap = d->size < ZIP_CD_BUF ? (size_t)d->size : ZIP_CD_BUF};
        if (!(cb.b = malloc(cb.cap ? cb.cap : 1)))
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        uint64_t at = d->off, end = d->off + d->size;
        int ret = 0;
        for (uint64_t i = 0; i < d->count && ret == 0; i++) {
                const uint8_t *p;
                if (end - at < ZIP_CENTRAL_LEN) {
                        ret = tm_cont_eio(c, at, err,
                                          "zip: central directory entry %llu of %llu runs past "
                                          "the directory's end at %llu",
                                          (unsigned long long)i, (unsigned long long)d->count,
                                          (unsigned long long)end);
                        break;
                }
                if (!(p = cd_get(c, &cb, at, ZIP_CENTRAL_LEN, end, err, &ret)))
                        break;
                if (tm_le32(p) != ZIP_CENTRAL_SIG) {
                        ret = tm_cont_eio(c, at, err, "zip: no central directory entry here");
                        break;
                }
                uint64_t len = ZIP_CENTRAL_LEN + tm_zip_le16(p + 28) + tm_zip_le16(p + 30) +
                               tm_zip_le16(p + 32);
                if (len > end - at) {
                        ret = tm_cont_eio(c, at, err,
                                          "zip: central directory entry %llu runs past the "
                                          "directory's end at %llu",
                                          (unsigned long long)i, (unsigned long long)end);
                        break;
                }
                if (!(p = cd_get(c, &cb, at, (size_t)len, end, err, &ret)))
                        break;
                struct zip_entry e = {.index = i};
                if ((ret = parse_entry(c, p, at, &e, err)) == 0)
                        ret = fn(arg, &e, err);
                at += len;
        }
        free(cb.b);
        return ret;
}

/* ---- member ranges ---- */

/* The least extent of an entry's member in the archive: its local header
 * (with the central entry's name), its data and, with bit 3, the shortest
 * data descriptor. */
struct zip_range {
        uint64_t lho, end, index;
};

struct ranges {
        struct zip_range *r;
        size_t n, cap;
};

static int range_add(void *arg, const struct zip_entry *e, struct tm_err *err)
{
        (void)err;
        struct ranges *rs = arg;
        if (rs->n == rs->cap)
                return -ENOMEM; /* sized by the directory's count: cannot happen */
        uint64_t least = ZIP_LOCAL_LEN + e->nlen + (e->flags & ZIP_FLAG_DESCRIPTOR ? 12 : 0);
        uint64_t end =
            e->csize > UINT64_MAX - e->lho - least ? UINT64_MAX : e->lho + least + e->csize;
        rs->r[rs->n++] = (struct zip_range){e->lho, end, e->index};
        return 0;
}

static int range_cmp(const void *a, const void *b)
{
        const struct zip_range *x = a, *y = b;
        if (x->lho != y->lho)
                return x->lho < y->lho ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

struct name_of {
        uint64_t want;
        char shown[ZIP_SHOW_NAME + 1];
};

static int name_of_entry(void *arg, const struct zip_entry *e, struct tm_err *err)
{
        (void)err;
        struct name_of *k = arg;
        if (e->index != k->want)
                return 0;
        tm_zip_show_name(e->name, e->nlen, k->shown);
        return 1;
}

/* The shown name of entry index into out (ZIP_SHOW_NAME + 1 bytes). */
static void entry_name(const struct tm_cont *c, const struct zip_dir *d, uint64_t index, char *out)
{
        struct name_of k = {.want = index, .shown = "?"};
        struct tm_err e = {0};
        tm_zip_cd_walk(c, d, name_of_entry, &k, &e);
        memcpy(out, k.shown, sizeof k.shown);
}

/* Entries a and b (a's local header first) share archive bytes. */
static int overlap_err(const struct tm_cont *c, const struct zip_dir *d, const struct zip_range *a,
                       const struct zip_range *b, struct tm_err *err)
{
        char na[ZIP_SHOW_NAME + 1], nb[ZIP_SHOW_NAME + 1];
        entry_name(c, d, a->index, na);
        entry_name(c, d, b->index, nb);
        return tm_cont_eio(c, b->lho, err,
                           "zip: members overlap: %s (entry %llu, local header at %llu, data to "
                           "%llu) and %s (entry %llu, local header at %llu); an archive whose "
                           "members share bytes is refused",
                           na, (unsigned long long)a->index, (unsigned long long)a->lho,
                           (unsigned long long)a->end, nb, (unsigned long long)b->index,
                           (unsigned long long)b->lho);
}

int tm_zip_check_ranges(const struct tm_cont *c, const struct zip_dir *d, struct tm_err *err)
{
        struct ranges rs = {.cap = (size_t)d->count};
        if (!(rs.r = malloc((rs.cap ? rs.cap : 1) * sizeof *rs.r)))
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        int ret = tm_zip_cd_walk(c, d, range_add, &rs, err);
        if (ret == -ENOMEM)
                ret = tm_err_set(err, ret, "%s: out of memory", c->path);
        if (ret == 0)
                qsort(rs.r, rs.n, sizeof *rs.r, range_cmp);
        for (size_t i = 0; ret == 0 && i < rs.n; i++) {
                const struct zip_range *a = &rs.r[i];
                if (a->end > d->off) {
                        char na[ZIP_SHOW_NAME + 1];
                        entry_name(c, d, a->index, na);
                        ret = tm_cont_eio(c, a->lho, err,
                                          "zip: member %s (entry %llu): its local header offset "
                                          "%llu and its data run into the central directory at "
                                          "%llu",
                                          na, (unsigned long long)a->index,
                                          (unsigned long long)a->lho, (unsigned long long)d->off);
                } else if (i + 1 < rs.n && a->end > rs.r[i + 1].lho) {
                        ret = overlap_err(c, d, a, &rs.r[i + 1], err);
                }
        }
        free(rs.r);
        return ret;
}
