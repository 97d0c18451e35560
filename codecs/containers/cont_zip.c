/* zip: one member of a ZIP archive (PKWARE's APPNOTE.TXT) is the raw
 * stream: the member named "trace" (the Java tracing tool's layout), else
 * the only member that is not a directory. It is found through the
 * central directory (the end record, and the ZIP64 end record through its
 * locator when a field is saturated), and its local header must agree with
 * its central entry. Stored members are slices of the archive, read as
 * plain; deflate members are inflated raw and get zran-style access points
 * (cont_zran.h) from the scan, as gzip does. The scan checks the member's
 * CRC-32 and both sizes; nothing of it is vouched for before its end. The
 * other members are listed by tm_cont_members; tm_cont_open_member opens
 * one of them in the chosen member's place (the same checks and readers).
 * docs/formats/containers.md ("zip") gives the choices and the limits. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cont_zran.h"

#define ZIP_LOCAL_SIG 0x04034b50u
#define ZIP_CENTRAL_SIG 0x02014b50u
#define ZIP_END_SIG 0x06054b50u
#define ZIP64_END_SIG 0x06064b50u
#define ZIP64_LOC_SIG 0x07064b50u
#define ZIP_DESC_SIG 0x08074b50u
#define ZIP_LOCAL_LEN 30u
#define ZIP_CENTRAL_LEN 46u
#define ZIP_END_LEN 22u
#define ZIP64_END_LEN 56u
#define ZIP64_LOC_LEN 20u
#define ZIP_COMMENT_MAX 65535u
#define ZIP64_EXTRA_ID 0x0001u
#define ZIP_SAT16 0xFFFFu     /* a 16-bit field whose value is in the ZIP64 records */
#define ZIP_SAT32 0xFFFFFFFFu /* likewise, 32-bit */
#define ZIP_FLAG_ENCRYPTED 0x0001u
#define ZIP_FLAG_DESCRIPTOR 0x0008u
#define ZIP_FLAG_STRONG 0x0040u
#define ZIP_STORED 0u
#define ZIP_DEFLATE 8u
#define ZIP_TRACE_NAME "trace"
/* Central directory reads: a buffer that holds any one entry (46 bytes
 * and three fields of at most 65535). */
#define ZIP_CD_BUF (256u << 10)
#define ZIP_LIST_NAMES 4  /* members named when none can be chosen */
#define ZIP_SHOW_NAME 64u /* bytes of a name shown in a message */

/* Where the central directory is, from the end records. */
struct zip_dir {
        uint64_t off, size, count;
        uint64_t end; /* the first end record: data and directory lie before it */
        uint64_t rec; /* the record that gave the count (messages) */
};

/* One central directory entry; name points into the walk's buffer. */
struct zip_entry {
        uint64_t index, at; /* its place in the directory, its archive offset */
        const uint8_t *name;
        size_t nlen;
        unsigned flags, method;
        uint32_t crc;
        uint64_t csize, usize, lho;
};

struct zip_cont {
        struct zip_dir dir;
        struct zip_entry m; /* the member; m.name is name below */
        uint8_t *name;
        char shown[ZIP_SHOW_NAME + 1]; /* its name for messages */
        uint64_t data, data_end;       /* its data in the archive */
};

static const struct tm_cont_ops zip_stored_ops;

static int zip_probe(const uint8_t *head, size_t n)
{
        return n >= 4 && tm_le32(head) == ZIP_LOCAL_SIG;
}

/* name as text for a message: at most ZIP_SHOW_NAME bytes, anything but
 * printable ASCII as '?'. */
static void show_name(const uint8_t *name, size_t n, char *out)
{
        size_t k = n < ZIP_SHOW_NAME ? n : ZIP_SHOW_NAME;
        for (size_t i = 0; i < k; i++)
                out[i] = name[i] >= 0x20 && name[i] < 0x7f ? (char)name[i] : '?';
        out[k] = 0;
}

static uint64_t le16(const uint8_t *p)
{
        return (uint64_t)p[0] | (uint64_t)p[1] << 8;
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
                    i + ZIP_END_LEN + le16(tail + i + 20) == span) {
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

/* The central directory's place, checked against the archive. */
static int read_dir(const struct tm_cont *c, struct zip_dir *d, struct tm_err *err)
{
        uint8_t rec[ZIP_END_LEN] = {0};
        uint64_t at = 0;
        int ret = find_end(c, &at, rec, err);
        if (ret < 0)
                return ret;
        uint64_t disk = le16(rec + 4), cdisk = le16(rec + 6), here = le16(rec + 8);
        struct zip_dir z = {.count = le16(rec + 10),
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

/* The ZIP64 extended information of an entry or local header (extra
 * bytes x of n): replace each saturated value among vals (in the field
 * order of APPNOTE 4.5.3) by the next 8 bytes of the block. Returns 0 or
 * -1 when the block is missing or short. */
static int zip64_extra(const uint8_t *x, size_t n, uint64_t *const vals[], unsigned nvals)
{
        int need = 0;
        for (unsigned i = 0; i < nvals; i++)
                need |= *vals[i] == ZIP_SAT32;
        while (n >= 4) {
                size_t id = (size_t)le16(x), sz = (size_t)le16(x + 2);
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

typedef int (*zip_entry_fn)(void *arg, const struct zip_entry *e, struct tm_err *err);

/* Parse the entry of len bytes at p (archive offset at) into e. */
static int parse_entry(const struct tm_cont *c, const uint8_t *p, uint64_t at, struct zip_entry *e,
                       struct tm_err *err)
{
        size_t nlen = (size_t)le16(p + 28), xlen = (size_t)le16(p + 30);
        e->at = at;
        e->name = p + ZIP_CENTRAL_LEN;
        e->nlen = nlen;
        e->flags = (unsigned)le16(p + 8);
        e->method = (unsigned)le16(p + 10);
        e->crc = tm_le32(p + 16);
        e->csize = tm_le32(p + 20);
        e->usize = tm_le32(p + 24);
        e->lho = tm_le32(p + 42);
        uint64_t *const vals[] = {&e->usize, &e->csize, &e->lho};
        if (zip64_extra(p + ZIP_CENTRAL_LEN + nlen, xlen, vals, 3) < 0)
                return tm_cont_eio(c, at, err,
                                   "zip: central directory entry %llu: a saturated size or offset "
                                   "without its ZIP64 extra field",
                                   (unsigned long long)e->index);
        return 0;
}

/* Call fn on every entry of the directory d, in order. */
static int cd_walk(const struct tm_cont *c, const struct zip_dir *d, zip_entry_fn fn, void *arg,
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
                uint64_t len = ZIP_CENTRAL_LEN + le16(p + 28) + le16(p + 30) + le16(p + 32);
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

static int is_dir(const struct zip_entry *e)
{
        return e->nlen > 0 && e->name[e->nlen - 1] == '/';
}

/* ---- choosing the member ---- */

struct pick {
        uint64_t files, traces;
        struct zip_entry trace, first;
        uint8_t *first_name; /* a copy: entries' names live in the walk's buffer */
        char list[ZIP_LIST_NAMES * (ZIP_SHOW_NAME + 2) + 1];
};

static int pick_entry(void *arg, const struct zip_entry *e, struct tm_err *err)
{
        (void)err;
        struct pick *k = arg;
        if (is_dir(e))
                return 0;
        if (e->nlen == strlen(ZIP_TRACE_NAME) && memcmp(e->name, ZIP_TRACE_NAME, e->nlen) == 0) {
                k->trace = *e;
                k->trace.name = (const uint8_t *)ZIP_TRACE_NAME;
                k->traces++;
        }
        if (k->files < ZIP_LIST_NAMES) {
                char s[ZIP_SHOW_NAME + 1];
                show_name(e->name, e->nlen, s);
                size_t at = strlen(k->list);
                snprintf(k->list + at, sizeof k->list - at, "%s%s", at ? ", " : "", s);
        }
        if (k->files++ == 0) {
                if (!(k->first_name = malloc(e->nlen ? e->nlen : 1)))
                        return -ENOMEM;
                memcpy(k->first_name, e->name, e->nlen);
                k->first = *e;
                k->first.name = k->first_name;
        }
        return 0;
}

/* "trace", else the only member that is not a directory. */
static int pick_member(const struct tm_cont *c, struct zip_cont *z, struct tm_err *err)
{
        struct pick k = {0};
        int ret = cd_walk(c, &z->dir, pick_entry, &k, err);
        if (ret == -ENOMEM)
                tm_err_set(err, ret, "%s: out of memory", c->path);
        else if (ret == 0 && k.traces > 1)
                ret = tm_err_set(err, -ENOTSUP, "%s: zip: %llu members are named %s", c->path,
                                 (unsigned long long)k.traces, ZIP_TRACE_NAME);
        else if (ret == 0 && k.files == 0)
                ret = tm_err_set(err, -ENOTSUP, "%s: zip: no member but directories", c->path);
        else if (ret == 0 && k.traces == 0 && k.files > 1)
                ret = tm_err_set(err, -ENOTSUP,
                                 "%s: zip: no member named %s and %llu members to choose from "
                                 "(%s%s)",
                                 c->path, ZIP_TRACE_NAME, (unsigned long long)k.files, k.list,
                                 k.files > ZIP_LIST_NAMES ? ", ..." : "");
        if (ret == 0) {
                z->m = k.traces ? k.trace : k.first;
                z->name = malloc(z->m.nlen ? z->m.nlen : 1);
                if (!z->name)
                        ret = tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
                else
                        memcpy(z->name, z->m.name, z->m.nlen);
                z->m.name = z->name;
                show_name(z->m.name, z->m.nlen, z->shown);
        }
        free(k.first_name);
        return ret;
}

/* The member at directory index want (tm_cont_open_member). */
struct pick_at {
        uint64_t want;
        int found;
        struct zip_entry e;
        uint8_t *name;
};

static int pick_at_entry(void *arg, const struct zip_entry *e, struct tm_err *err)
{
        (void)err;
        struct pick_at *k = arg;
        if (e->index != k->want)
                return 0;
        if (!(k->name = malloc(e->nlen ? e->nlen : 1)))
                return -ENOMEM;
        memcpy(k->name, e->name, e->nlen);
        k->e = *e;
        k->e.name = k->name;
        k->found = 1;
        return 1; /* stop the walk */
}

static int pick_index(const struct tm_cont *c, struct zip_cont *z, struct tm_err *err)
{
        struct pick_at k = {.want = c->member};
        int ret = cd_walk(c, &z->dir, pick_at_entry, &k, err);
        if (ret == -ENOMEM)
                return tm_err_set(err, ret, "%s: out of memory", c->path);
        if (ret < 0)
                return ret;
        if (!k.found)
                return tm_err_set(err, -ENOENT, "%s: zip: no member %llu in the directory",
                                  c->path, (unsigned long long)c->member);
        z->m = k.e;
        z->name = k.name;
        show_name(z->m.name, z->m.nlen, z->shown);
        if (is_dir(&z->m))
                return tm_err_set(err, -ENOTSUP, "%s: zip: member %s is a directory", c->path,
                                  z->shown);
        return 0;
}

/* ---- the member's local header and data descriptor ---- */

static int check_supported(const struct tm_cont *c, const struct zip_cont *z, struct tm_err *err)
{
        const struct zip_entry *m = &z->m;
        if (m->flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG))
                return tm_err_set(err, -ENOTSUP, "%s: zip: member %s is encrypted", c->path,
                                  z->shown);
        if (m->method != ZIP_STORED && m->method != ZIP_DEFLATE)
                return tm_err_set(err, -ENOTSUP,
                                  "%s: zip: member %s: compression method %u (read: 0 stored, "
                                  "8 deflate)",
                                  c->path, z->shown, m->method);
        if (m->method == ZIP_STORED && m->csize != m->usize)
                return tm_cont_eio(c, m->at, err,
                                   "zip: stored member %s: %llu compressed bytes but %llu "
                                   "uncompressed",
                                   z->shown, (unsigned long long)m->csize,
                                   (unsigned long long)m->usize);
        return 0;
}

/* Without a data descriptor the local header repeats the CRC and the
 * sizes (in its ZIP64 extra field when saturated). */
static int check_local_sums(const struct tm_cont *c, const struct zip_cont *z, const uint8_t *h,
                            const uint8_t *extra, size_t xlen, struct tm_err *err)
{
        const struct zip_entry *m = &z->m;
        uint64_t usize = tm_le32(h + 22), csize = tm_le32(h + 18);
        uint64_t *const vals[] = {&usize, &csize};
        if (m->flags & ZIP_FLAG_DESCRIPTOR)
                return 0;
        if (zip64_extra(extra, xlen, vals, 2) < 0 || tm_le32(h + 14) != m->crc ||
            usize != m->usize || csize != m->csize)
                return tm_cont_eio(c, m->lho, err,
                                   "zip: member %s: the local header's CRC-32 and sizes are not "
                                   "the central directory's",
                                   z->shown);
        return 0;
}

static int check_local(const struct tm_cont *c, struct zip_cont *z, struct tm_err *err)
{
        const struct zip_entry *m = &z->m;
        uint8_t h[ZIP_LOCAL_LEN];
        if (m->lho > z->dir.off || z->dir.off - m->lho < ZIP_LOCAL_LEN)
                return tm_cont_eio(c, m->at, err,
                                   "zip: member %s: its local header offset %llu is not before "
                                   "the central directory at %llu",
                                   z->shown, (unsigned long long)m->lho,
                                   (unsigned long long)z->dir.off);
        int ret = tm_cont_pread(c, h, sizeof h, m->lho, err);
        if (ret < 0)
                return ret;
        size_t nlen = (size_t)le16(h + 26), xlen = (size_t)le16(h + 28);
        uint64_t data = m->lho + ZIP_LOCAL_LEN + nlen + xlen;
        if (tm_le32(h) != ZIP_LOCAL_SIG || le16(h + 8) != m->method || nlen != m->nlen ||
            ((unsigned)le16(h + 6) & ZIP_FLAG_ENCRYPTED) != (m->flags & ZIP_FLAG_ENCRYPTED))
                return tm_cont_eio(c, m->lho, err,
                                   "zip: member %s: no local header that matches its central "
                                   "directory entry here",
                                   z->shown);
        if (data > z->dir.off || m->csize > z->dir.off - data)
                return tm_cont_eio(c, m->lho, err,
                                   "zip: member %s: its %llu bytes of data run into the central "
                                   "directory at %llu",
                                   z->shown, (unsigned long long)m->csize,
                                   (unsigned long long)z->dir.off);
        uint8_t *nx = malloc(nlen + xlen + 1);
        if (!nx)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        ret = tm_cont_pread(c, nx, nlen + xlen, m->lho + ZIP_LOCAL_LEN, err);
        if (ret == 0 && memcmp(nx, m->name, nlen) != 0)
                ret =
                    tm_cont_eio(c, m->lho + ZIP_LOCAL_LEN, err,
                                "zip: member %s: the local header names another member", z->shown);
        if (ret == 0)
                ret = check_local_sums(c, z, h, nx + nlen, xlen, err);
        free(nx);
        z->data = data;
        z->data_end = data + m->csize;
        return ret;
}

/* A data descriptor follows the data: [signature] CRC-32, sizes. Its
 * CRC-32 must be the directory's (the sizes' width depends on ZIP64, and
 * the directory's sizes are the ones used). */
static int check_descriptor(const struct tm_cont *c, const struct zip_cont *z, struct tm_err *err)
{
        uint8_t d[8];
        if (!(z->m.flags & ZIP_FLAG_DESCRIPTOR))
                return 0;
        if (z->dir.off - z->data_end < 12)
                return tm_cont_eio(c, z->data_end, err,
                                   "zip: member %s: no room for its data descriptor", z->shown);
        int ret = tm_cont_pread(c, d, sizeof d, z->data_end, err);
        if (ret < 0)
                return ret;
        uint32_t crc = tm_le32(d) == ZIP_DESC_SIG ? tm_le32(d + 4) : tm_le32(d);
        if (crc != z->m.crc && tm_le32(d) != z->m.crc)
                return tm_cont_eio(c, z->data_end, err,
                                   "zip: member %s: the data descriptor's CRC-32 %08x is not the "
                                   "central directory's %08x",
                                   z->shown, crc, z->m.crc);
        return 0;
}

static int zip_open(struct tm_cont *c, struct tm_err *err)
{
        struct zip_cont *z = calloc(1, sizeof *z);
        if (!z)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        c->impl = z;
        int ret = read_dir(c, &z->dir, err);
        if (ret == 0)
                ret = c->member == TM_CONT_MEMBER_PICK ? pick_member(c, z, err)
                                                       : pick_index(c, z, err);
        if (ret == 0)
                ret = check_supported(c, z, err);
        if (ret == 0)
                ret = check_local(c, z, err);
        if (ret == 0)
                ret = check_descriptor(c, z, err);
        if (ret < 0)
                return ret;
        c->raw_known = 1; /* the directory's word, checked by the scan */
        c->raw_size = z->m.usize;
        if (z->m.method == ZIP_STORED)
                c->ops = &zip_stored_ops;
        return 0;
}

static void zip_close(struct tm_cont *c)
{
        struct zip_cont *z = c->impl;
        if (z)
                free(z->name);
        free(z);
}

/* ---- what the scan and the readers check ---- */

/* The member's data ended at archive offset coff after raw bytes; crc is
 * the CRC-32 of all of them, or NULL when they were not all seen (a
 * reader that started at a window point). */
static int member_end(const struct tm_cont *c, uint64_t coff, uint64_t raw, const uint32_t *crc,
                      struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        if (coff != z->data_end)
                return tm_cont_eio(c, coff, err,
                                   "zip: member %s: its deflate data ends %llu bytes before its "
                                   "compressed size says",
                                   z->shown, (unsigned long long)(z->data_end - coff));
        if (raw != z->m.usize)
                return tm_cont_eio(
                    c, coff, err, "zip: member %s: %llu bytes, the central directory says %llu",
                    z->shown, (unsigned long long)raw, (unsigned long long)z->m.usize);
        if (crc && *crc != z->m.crc)
                return tm_cont_eio(c, z->data, err,
                                   "zip: member %s (data at archive offset %llu): CRC-32 %08x, "
                                   "the central directory says %08x",
                                   z->shown, (unsigned long long)z->data, *crc, z->m.crc);
        return 0;
}

/* More raw bytes than the member's size: bad data (or a bomb), stop. */
static int too_long(const struct tm_cont *c, uint64_t coff, struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        return tm_cont_eio(c, coff, err,
                           "zip: member %s inflates to more than the %llu bytes the central "
                           "directory says",
                           z->shown, (unsigned long long)z->m.usize);
}

/* Input left before the member's data ends, at most k. */
static size_t data_left(const struct zip_cont *z, uint64_t coff, ssize_t k)
{
        uint64_t left = coff < z->data_end ? z->data_end - coff : 0;
        return left < (uint64_t)k ? (size_t)left : (size_t)k;
}

static int runs_past(const struct tm_cont *c, uint64_t coff, struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        return tm_cont_eio(c, coff, err,
                           "zip: member %s: its deflate data does not end within its %llu "
                           "compressed bytes",
                           z->shown, (unsigned long long)z->m.csize);
}

static int zip_zfail(const struct tm_cont *c, uint64_t coff, int zret, const z_stream *zs,
                     struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        if (zret == Z_MEM_ERROR)
                return tm_err_set(err, -ENOMEM, "%s: zlib: out of memory", c->path);
        return tm_cont_eio(c, coff, err, "zip: member %s (data at archive offset %llu): %s",
                           z->shown, (unsigned long long)z->data,
                           zs->msg ? zs->msg : "corrupt deflate data");
}

/* ---- scan ---- */

/* The scan's sink: the CRC-32 of every raw byte, then the caller's. */
struct crc_sink {
        uint32_t crc;
        tm_cont_sink sink;
        void *arg;
};

static int crc_sink(void *arg, const uint8_t *buf, size_t n)
{
        struct crc_sink *k = arg;
        k->crc = (uint32_t)crc32_z(k->crc, buf, n);
        return k->sink ? k->sink(k->arg, buf, n) : 0;
}

static int scan_stored(struct tm_cont *c, struct crc_sink *cs, struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        struct tm_cin in;
        if (tm_cin_init(&in, c) < 0)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        tm_cin_seek(&in, z->data);
        int ret = 0;
        uint64_t raw = 0;
        while (ret == 0 && raw < z->m.usize) {
                ssize_t k = tm_cin_fill(c, &in, err);
                if (k <= 0) {
                        ret = k < 0
                                  ? (int)k
                                  : tm_cont_eio(c, tm_cin_tell(&in), err,
                                                "zip: the archive ends inside member %s", z->shown);
                        break;
                }
                size_t take = data_left(z, tm_cin_tell(&in), k);
                ret = crc_sink(cs, in.buf + in.pos, take);
                in.pos += take;
                raw += take;
        }
        tm_cin_free(&in);
        return ret != 0 ? ret : member_end(c, z->data_end, raw, &cs->crc, err);
}

static int scan_deflate(struct tm_cont *c, struct tm_cpoints *pts, struct crc_sink *cs,
                        struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        struct tm_zran_scan s;
        int ret = tm_zran_scan_init(&s, c, TM_ZRAN_WBITS_RAW, err);
        struct tm_cpoint start = {.coff = z->data};
        if (ret == 0 && tm_cpoints_add(pts, &start) < 0)
                ret = tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        tm_cin_seek(&s.in, z->data);
        int zret = Z_OK;
        while (ret == 0 && zret != Z_STREAM_END) {
                ssize_t k = tm_cin_fill(c, &s.in, err);
                if (k < 0) {
                        ret = (int)k;
                        break;
                }
                /* at the data's end, inflate may still have output to give */
                size_t avail = data_left(z, tm_cin_tell(&s.in), k);
                ret = tm_zran_scan_step(c, &s, avail, pts, crc_sink, cs, &zret, err);
                if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
                        ret = zip_zfail(c, tm_cin_tell(&s.in), zret, &s.zs, err);
                else if (ret == 0 && zret == Z_BUF_ERROR && avail == 0)
                        ret = runs_past(c, tm_cin_tell(&s.in), err);
                else if (ret == 0 && s.raw > z->m.usize)
                        ret = too_long(c, tm_cin_tell(&s.in), err);
        }
        if (ret == 0)
                ret = member_end(c, tm_cin_tell(&s.in), s.raw, &cs->crc, err);
        if (ret == 0)
                tm_zran_scan_keep(c, &s);
        tm_zran_scan_free(&s);
        return ret;
}

static int zip_scan(struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
                    tm_cont_sink sink, void *arg, struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        struct crc_sink cs = {.sink = sink, .arg = arg};
        int ret =
            z->m.method == ZIP_STORED ? scan_stored(c, &cs, err) : scan_deflate(c, pts, &cs, err);
        if (ret != 0)
                return ret;
        /* one member, one check: all or nothing is vouched for */
        c->scan_good = z->m.usize;
        *raw_size = z->m.usize;
        return 0;
}

/* A loaded index must fit this member: its raw size, no points for a
 * stored member, for a deflate member the data start (no window) and
 * window points inside the data. */
static int zip_check_index(struct tm_cont *c, const struct tm_cpoints *pts, uint64_t raw_size,
                           struct tm_err *err)
{
        const struct zip_cont *z = c->impl;
        if (raw_size != z->m.usize)
                return tm_err_set(err, -EIO,
                                  "%s: seek index byte 16: %llu raw bytes, the zip central "
                                  "directory says %llu",
                                  c->path, (unsigned long long)raw_size,
                                  (unsigned long long)z->m.usize);
        for (size_t i = 0; i < pts->n; i++) {
                const struct tm_cpoint *p = &pts->p[i];
                int ok = z->m.method == ZIP_DEFLATE &&
                         (p->wlen ? p->coff > z->data && p->coff < z->data_end
                                  : p->coff == z->data && p->roff == 0);
                if (!ok)
                        return tm_err_set(err, -EIO,
                                          "%s: seek index point %zu (archive offset %llu) is not "
                                          "a restart point of the zip member",
                                          c->path, i, (unsigned long long)p->coff);
        }
        return 0;
}

/* ---- readers ---- */

struct zreader {
        z_stream zs; /* deflate members */
        int zs_ok;
        struct tm_cin in;
        struct tm_zran_win w;
        int eof;
        int verify;    /* started at the member's start: the CRC is checked */
        uint32_t crc;  /* of the raw bytes from the start, while verify */
        uint64_t vpos; /* stored: raw bytes in crc (read in order from 0) */
};

static int zip_r_restart(struct tm_creader *r, const struct tm_cpoint *p, struct tm_err *err)
{
        struct zreader *g = r->impl;
        const struct zip_cont *z = r->c->impl;
        g->eof = 0;
        g->crc = 0;
        g->verify = !p || p->wlen == 0;
        tm_cin_seek(&g->in, g->verify ? z->data : p->coff);
        if (g->verify) {
                inflateReset2(&g->zs, TM_ZRAN_WBITS_RAW);
                return 0;
        }
        return tm_zran_restart(r->c, &g->zs, &g->w, p, err);
}

static void zip_r_close(struct tm_creader *r)
{
        struct zreader *g = r->impl;
        if (g->zs_ok)
                inflateEnd(&g->zs);
        tm_cin_free(&g->in);
        tm_zran_win_free(&g->w);
        free(g);
}

static int zip_r_open(struct tm_creader *r, struct tm_err *err)
{
        const struct zip_cont *z = r->c->impl;
        struct zreader *g = calloc(1, sizeof *g);
        if (!g)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", r->c->path);
        r->impl = g;
        if (z->m.method == ZIP_STORED)
                return 0; /* preads: nothing to set up */
        if (tm_cin_init(&g->in, r->c) < 0 || inflateInit2(&g->zs, TM_ZRAN_WBITS_RAW) != Z_OK) {
                zip_r_close(r);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", r->c->path);
        }
        g->zs_ok = 1;
        return zip_r_restart(r, NULL, err);
}

static ssize_t zip_r_read(struct tm_creader *r, void *buf, size_t n, struct tm_err *err)
{
        struct zreader *g = r->impl;
        const struct tm_cont *c = r->c;
        const struct zip_cont *z = c->impl;
        if (n > UINT32_MAX)
                n = UINT32_MAX;
        while (!g->eof) {
                ssize_t k = tm_cin_fill(c, &g->in, err);
                if (k < 0)
                        return k;
                /* at the data's end, inflate may still have output to give */
                size_t avail = data_left(z, tm_cin_tell(&g->in), k);
                size_t got;
                int zret = tm_zran_inflate(&g->zs, &g->in, avail, buf, n, Z_NO_FLUSH, &got);
                if (zret != Z_OK && zret != Z_STREAM_END && zret != Z_BUF_ERROR)
                        return zip_zfail(c, tm_cin_tell(&g->in), zret, &g->zs, err);
                if (zret == Z_BUF_ERROR && avail == 0)
                        return runs_past(c, tm_cin_tell(&g->in), err);
                if (r->pos + got > z->m.usize)
                        return too_long(c, tm_cin_tell(&g->in), err);
                if (g->verify)
                        g->crc = (uint32_t)crc32_z(g->crc, buf, got);
                if (zret == Z_STREAM_END) {
                        int ret = member_end(c, tm_cin_tell(&g->in), r->pos + got,
                                             g->verify ? &g->crc : NULL, err);
                        if (ret < 0)
                                return ret;
                        g->eof = 1;
                }
                if (got)
                        return (ssize_t)got;
        }
        return 0;
}

/* ---- a stored member: a slice of the archive ---- */

static int stored_r_seek(struct tm_creader *r, uint64_t raw_off, struct tm_err *err)
{
        (void)r;
        (void)raw_off;
        (void)err;
        return 0;
}

static ssize_t stored_r_read(struct tm_creader *r, void *buf, size_t n, struct tm_err *err)
{
        struct zreader *g = r->impl;
        const struct tm_cont *c = r->c;
        const struct zip_cont *z = c->impl;
        if (r->pos >= z->m.usize)
                return 0;
        if (n > z->m.usize - r->pos)
                n = (size_t)(z->m.usize - r->pos);
        int ret = tm_cont_pread(c, buf, n, z->data + r->pos, err);
        if (ret < 0)
                return ret;
        if (r->pos == g->vpos) { /* in order from the start: the CRC can be checked */
                g->crc = (uint32_t)crc32_z(g->crc, buf, n);
                g->vpos += n;
                if (g->vpos == z->m.usize &&
                    (ret = member_end(c, z->data_end, g->vpos, &g->crc, err)) < 0)
                        return ret;
        }
        return (ssize_t)n;
}

/* ---- the members ---- */

struct list {
        const struct zip_cont *z;
        tm_cont_member_fn fn;
        void *arg;
        char *name; /* 65536 bytes: a name and its NUL */
};

static int list_entry(void *arg, const struct zip_entry *e, struct tm_err *err)
{
        (void)err;
        struct list *l = arg;
        memcpy(l->name, e->name, e->nlen);
        l->name[e->nlen] = 0;
        struct tm_cont_member m = {
            .index = e->index,
            .name = l->name,
            .name_len = e->nlen,
            .size = e->usize,
            .csize = e->csize,
            .method = e->method,
            .is_dir = is_dir(e) != 0,
            .is_encrypted = (e->flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG)) != 0,
            .is_raw = e->index == l->z->m.index,
        };
        return l->fn(l->arg, &m);
}

static int zip_members(const struct tm_cont *c, tm_cont_member_fn fn, void *arg, struct tm_err *err)
{
        struct list l = {.z = c->impl, .fn = fn, .arg = arg, .name = malloc(ZIP_SAT16 + 1)};
        if (!l.name)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", c->path);
        int ret = cd_walk(c, &l.z->dir, list_entry, &l, err);
        free(l.name);
        return ret;
}

#define ZIP_COMMON_OPS                                                                             \
        .name = "zip", .kind = TM_CONT_ZIP, .probe = zip_probe, .open = zip_open,                  \
        .close = zip_close, .scan = zip_scan, .check_index = zip_check_index,                      \
        .r_open = zip_r_open, .r_close = zip_r_close, .members = zip_members

/* The table's row: a deflate member (open switches a stored one to the
 * variant below). */
const struct tm_cont_ops tm_cont_zip_ops = {
    ZIP_COMMON_OPS,
    .r_restart = zip_r_restart,
    .r_read = zip_r_read,
};

static const struct tm_cont_ops zip_stored_ops = {
    ZIP_COMMON_OPS,
    .r_seek = stored_r_seek,
    .r_read = stored_r_read,
};
