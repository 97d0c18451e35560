/* cont_zip_dir: what cont_zip.c reads of a ZIP archive before a member's
 * data: where the central directory is (the end record, or the ZIP64 end
 * record through its locator when a field is saturated), and its entries,
 * walked one at a time through a buffer that holds any one entry, so that
 * memory does not grow with their count. Every offset and size is checked
 * against the archive before use: -EIO naming the archive offset of the
 * record that holds a bad value. Not for use above codecs/containers/. */
#ifndef TM_CONT_ZIP_DIR_H
#define TM_CONT_ZIP_DIR_H

#include <stddef.h>
#include <stdint.h>

#include "cont_impl.h"

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
/* Central directory reads: a buffer that holds any one entry (46 bytes
 * and three fields of at most 65535). */
#define ZIP_CD_BUF (256u << 10)
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

/* Called by tm_zip_cd_walk once per entry, in order; e and its name are
 * valid during the call. A non-zero return stops the walk. */
typedef int (*zip_entry_fn)(void *arg, const struct zip_entry *e, struct tm_err *err);

static inline uint64_t tm_zip_le16(const uint8_t *p)
{
        return (uint64_t)p[0] | (uint64_t)p[1] << 8;
}

/* An entry whose name ends in '/' is a directory. */
static inline int tm_zip_is_dir(const struct zip_entry *e)
{
        return e->nlen > 0 && e->name[e->nlen - 1] == '/';
}

/* name (n bytes) as text for a message into out (ZIP_SHOW_NAME + 1
 * bytes): at most ZIP_SHOW_NAME bytes, anything but printable ASCII as
 * '?'. */
void tm_zip_show_name(const uint8_t *name, size_t n, char *out);

/* Where c's central directory is, checked against the archive: 0, -EIO,
 * or -ENOTSUP for split and spanned archives. */
int tm_zip_read_dir(const struct tm_cont *c, struct zip_dir *d, struct tm_err *err);

/* The ZIP64 extended information of an entry or local header (extra
 * bytes x of n): replace each saturated value among vals (in the field
 * order of APPNOTE 4.5.3) by the next 8 bytes of the block. Returns 0 or
 * -1 when the block is missing or short. */
int tm_zip_extra64(const uint8_t *x, size_t n, uint64_t *const vals[], unsigned nvals);

/* Call fn on every entry of the directory d, in order. Returns 0, fn's
 * non-zero value, or a negative errno (-EIO naming the entry's archive
 * offset). */
int tm_zip_cd_walk(const struct tm_cont *c, const struct zip_dir *d, zip_entry_fn fn, void *arg,
                   struct tm_err *err);

/* Every member of the directory d in a range of the archive of its own:
 * its local header (at least 30 bytes and the entry's name), its
 * compressed data and, with bit 3, a data descriptor (at least 12 bytes),
 * before the central directory and apart from every other member's.
 * Entries that share bytes (a member listed twice, members whose data
 * holds another's header: what an overlapping zip bomb is made of) are
 * -EIO naming both entries (names, indices, offsets). Memory: 24 bytes an
 * entry (the count is bounded by the directory's size). Returns 0 or a
 * negative errno. */
int tm_zip_check_ranges(const struct tm_cont *c, const struct zip_dir *d, struct tm_err *err);

#endif
