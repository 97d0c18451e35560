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
#define ZSEEK_MAX_FRAME_RAW 0x40000000u /* 1 GiB, likewise */

/* Read c's seek table if the archive ends with one. Returns 1 and fills
 * *pts (thinned with tm_cpoints_want; points only at frames that hold
 * data) and *raw_size; 0 if there is no seek table; -EIO if there is one
 * but it does not describe this archive (frame sizes not summing to the
 * data before it, counts that do not fit, reserved bits set). Reads the
 * table in bounded chunks; memory is the thinned points only. */
int zseek_read(const struct tm_cont *c, struct tm_cpoints *pts, uint64_t *raw_size,
               struct tm_err *err);

/* A seek table being built by a writer: one (compressed, raw) size pair
 * per frame. */
struct zseek_table {
        uint32_t *e; /* 2 per frame */
        size_t n, cap;
};

/* Append a frame; -ENOMEM, or -EFBIG beyond ZSEEK_MAX_FRAMES. */
int zseek_add(struct zseek_table *t, uint32_t csize, uint32_t rsize);

/* Serialize t (without checksums) into a new buffer of *len bytes; NULL
 * when out of memory. */
uint8_t *zseek_serialize(const struct zseek_table *t, size_t *len);

void zseek_free(struct zseek_table *t);

#endif
