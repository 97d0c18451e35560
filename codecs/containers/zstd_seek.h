/* The seek table of zstd's seekable format (facebook/zstd
 * contrib/seekable_format/zstd_seekable_compression_format.md): a
 * skippable frame at the end of the archive,
 *   magic 0x184D2A5E, u32 frame size, entries, footer,
 * where each entry is u32 compressed size, u32 decompressed size and, when
 * bit 7 of the descriptor is set, a u32 checksum, and the 9-byte footer is
 * u32 number of frames, u8 descriptor, u32 magic 0x8F92EAB1. */
#ifndef TM_ZSTD_SEEK_H
#define TM_ZSTD_SEEK_H

#include <stddef.h>
#include <stdint.h>

#include "cont_impl.h"

#define ZSEEK_SKIPPABLE_MAGIC 0x184D2A5Eu
#define ZSEEK_MAGIC 0x8F92EAB1u
#define ZSEEK_FOOTER 9
#define ZSEEK_MAX_FRAMES 0x8000000u     /* the reference implementation's limit */

/* tracemount's order record (docs/formats/containers.md): a skippable
 * frame written last before the seek table, listed in it as a frame of 0
 * raw bytes, whose 24-byte payload is "TMORDER1", u32 the number of frames
 * before it, u64 their raw bytes, u32 the CRC32 of their seek-table
 * entries (12 bytes each, in order). It binds the frames' order and
 * number: a table rebuilt after frames were moved, dropped or repeated no
 * longer matches it. */
#define ZSEEK_ORDER_MAGIC 0x184D2A5Du
#define ZSEEK_ORDER_PAYLOAD 24
#define ZSEEK_ORDER_FRAME (8 + ZSEEK_ORDER_PAYLOAD)
#define ZSEEK_EMPTY_SUM 0x51D8E999u /* low 32 bits of XXH64 of no bytes */
#define ZSEEK_MAX_FRAME_RAW 0x40000000u /* 1 GiB, likewise */

/* Where a seek table's entries are in the archive. */
struct zseek_loc {
        uint64_t entries; /* archive offset of entry 0 */
        uint64_t data_end; /* archive offset where the frames end */
        uint32_t n;       /* number of entries (frames) */
        unsigned esz;     /* bytes an entry: 8, or 12 with checksums */
};

/* Read c's seek table if the archive ends with one. Returns 1 and fills
 * *pts (thinned with tm_cpoints_want; points only at frames that hold
 * data), *raw_size and *loc; 0 if there is no seek table; -EIO if there
 * is one but it does not describe this archive (frame sizes not summing
 * to the data before it, counts that do not fit, reserved bits set).
 * Reads the table in bounded chunks; memory is the thinned points only. */
int zseek_read(const struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
               struct zseek_loc *loc, struct tm_err *err);

/* One entry of a seek table. has_sum: the table carries checksums. */
struct zseek_entry {
        uint32_t csize, rsize, sum;
        int has_sum;
};

/* The order record's running CRC: crc after one more entry. */
uint32_t zseek_order_crc(uint32_t crc, const struct zseek_entry *e);

/* The order record (ZSEEK_ORDER_FRAME bytes) for n frames of raw bytes
 * whose entries' CRC is crc, into out. */
void zseek_order_put(uint8_t *out, uint32_t n, uint64_t raw, uint32_t crc);

/* Parse an order record's payload: 1 and the fields, or 0 if it is not
 * one. */
int zseek_order_get(const uint8_t *payload, uint32_t *n, uint64_t *raw, uint32_t *crc);

/* Reads a seek table's entries in order, a bounded chunk at a time. */
struct zseek_iter {
        struct zseek_loc loc;
        uint32_t next;       /* index of the next entry */
        uint32_t first, len; /* entries [first, first + len) are in buf */
        uint8_t *buf;
};

/* Start at entry 0 (buf allocated on first use). */
void zseek_iter_init(struct zseek_iter *it, const struct zseek_loc *loc);

/* The next entry: 1 and *e, 0 after the last, or a negative errno (a
 * failed read, -ENOMEM). */
int zseek_iter_next(const struct tm_cont *c, struct zseek_iter *it, struct zseek_entry *e,
                    struct tm_err *err);

void zseek_iter_free(struct zseek_iter *it);

/* A seek table being built by a writer: one (compressed size, raw size,
 * checksum) triple per frame. */
struct zseek_table {
        uint32_t *e; /* 3 per frame */
        size_t n, cap;
};

/* Append a frame; sum is the frame's own content checksum (the low 32
 * bits of XXH64 of its raw bytes, the last 4 bytes of a frame written
 * with zstd's checksum flag), which is what the seekable format puts in
 * an entry. -ENOMEM, or -EFBIG beyond ZSEEK_MAX_FRAMES. */
int zseek_add(struct zseek_table *t, uint32_t csize, uint32_t rsize, uint32_t sum);

/* Serialize t, with checksums (descriptor bit 7), into a new buffer of
 * *len bytes; NULL when out of memory. The checksums in frame order are
 * what lets a reader see frames reordered, dropped, duplicated or
 * replaced (docs/formats/containers.md). */
uint8_t *zseek_serialize(const struct zseek_table *t, size_t *len);

void zseek_free(struct zseek_table *t);

#endif
