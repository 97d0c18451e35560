/* ixfile: the index file's common parts (index_file.c writes the one
 * layout; docs/index-format.md): little-endian fields, the
 * CRC32 at bytes 12-15 over everything from byte 16, the atomic write (a
 * temporary file in the same directory, fsync, rename), so a reader never
 * sees a half-written index, and the open for reading, which decides
 * whether a file may be believed at all (docs/index-format.md, "What the
 * index trusts"): a regular file, reached without following a symlink at
 * its name, written by a trusted user. */
#ifndef TM_IXFILE_H
#define TM_IXFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../codecs/common/tm_err.h"
#include "../codecs/common/tm_side.h"

#define TM_IXFILE_CRC_FROM 16

static inline void tm_ix_put64(uint8_t **p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                (*p)[i] = (uint8_t)(v >> (8 * i));
        *p += 8;
}

static inline uint64_t tm_ix_get64(const uint8_t **p)
{
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
                v |= (uint64_t)(*p)[i] << (8 * i);
        *p += 8;
        return v;
}

static inline void tm_ix_put_bytes(uint8_t **p, const void *src, size_t n)
{
        memcpy(*p, src, n);
        *p += n;
}

static inline void tm_ix_get_bytes(const uint8_t **p, void *dst, size_t n)
{
        memcpy(dst, *p, n);
        *p += n;
}

/* Bytes 0-79 of the file: an 8-byte magic, the version byte, three zero
 * bytes, the CRC (filled in by tm_ixfile_commit), then the key of the
 * archive the index belongs to: its size, mtime (ns) and inode, the
 * fingerprint of its content (tm_ix_fingerprint), and the codec and
 * container names, 16 bytes each, NUL-padded. */
#define TM_IX_KEY_END 80
#define TM_IX_FP_AT 40 /* where the fingerprint is in the key */
struct tm_index_key;

/* The fingerprint's parts (docs/index-format.md, "Whose archive it
 * describes"): the first and the last TM_IX_FP_BLOCK bytes, the
 * container's directory at the end (tm_cont_dir_offset) up to
 * TM_IX_FP_DIR_MAX bytes, and the bytes between: all of them when they
 * are at most TM_IX_FP_SAMPLES x TM_IX_FP_SAMPLE, else TM_IX_FP_SAMPLES
 * blocks of TM_IX_FP_SAMPLE bytes evenly spaced. */
#define TM_IX_FP_BLOCK (64u << 10)
#define TM_IX_FP_DIR_MAX (16u << 20)
#define TM_IX_FP_SAMPLES 16u
#define TM_IX_FP_SAMPLE 4096u

/* The fingerprint of the archive open on fd, size bytes, whose container
 * keeps a directory at [dir_off, size) (size: none): a 64-bit hash of
 * the size and of the parts above, read with pread. Tells apart two
 * archives (or two versions of one) of equal size and mtime where the
 * inode does not (sshfs; a file rewritten in place with its mtime kept),
 * unless they differ only outside the parts hashed. Returns 0 and *out, or
 * a negative errno (a failed read). */
int tm_ix_fingerprint(int fd, uint64_t size, uint64_t dir_off, uint64_t *out);

/* Write bytes 0-79 of a head (the CRC as zeros). */
void tm_ix_head_put(uint8_t *b, const char magic[8], uint8_t version,
                    const struct tm_index_key *key);

/* Check bytes 0-79 of a head: -ESTALE if it belongs to another archive
 * (or version of it; any key whose fingerprint could not be read), or is
 * an older version of this format or the address index it replaced (both
 * rebuilt); -EIO if magic or version differ otherwise; else 0. */
int tm_ix_head_check(const uint8_t *b, const char magic[8], uint8_t version,
                     const struct tm_index_key *key);

/* A file being written: f for its body, fd under it, tmp its name in the
 * directory dirfd, which the final name (base) is renamed to. */
struct tm_ixfile {
        FILE *f;
        int fd, dirfd;
        char *tmp;
        const char *path, *base;
        unsigned mode; /* the final file's mode: 0644 (a file others may
                          write is not believed: tm_side_open) */
};

/* Create a temporary file "<name>.XXXXXX" beside path (O_EXCL, never
 * through a symlink), in the directory *dir (a descriptor, never reopened
 * by name; path's last component is the name there) or, dir NULL, in
 * path's directory opened by name. Returns 0 or a negative errno. */
int tm_ixfile_create(struct tm_ixfile *x, const int *dir, const char *path, struct tm_err *err);

/* Write head (head_len bytes, the file's first bytes, whose bytes 12-15
 * are filled with the CRC here) over the placeholder the body began with,
 * CRC bytes 16..file_size, fsync and rename to the final path. rc is the
 * body's result: when negative the file is removed and rc returned. Frees
 * x's resources in every case. */
int tm_ixfile_commit(struct tm_ixfile *x, int rc, uint8_t *head, size_t head_len,
                     uint64_t file_size, struct tm_err *err);

/* Open the index file at path (in the directory *dir as for
 * tm_ixfile_create, tm_side_openat; dir NULL: by path) for reading: tm_side_open (codecs/common/
 * tm_side.h) with trust (may be NULL), which says whom the file is
 * believed from (docs/index-format.md, "What the index trusts"): a
 * symlink, FIFO or device planted at the name is refused, never followed
 * or waited on. Returns 0 with *fd_out and *sb, -ENOENT, -EPERM (not
 * trusted) or -EIO (not a regular file), with err naming the file and the
 * reason. */
int tm_ixfile_open(const char *path, const int *dir, const struct tm_side_trust *trust, int *fd_out,
                   struct stat *sb, struct tm_err *err);

/* The end of both index loads (index.c, index_file.c), fd's checks
 * passed: with a container c, load its seek index from fd's bytes [off,
 * off + len), check that the container's raw size is raw_size and hand fd
 * to *fd_out; without one, close fd. Returns 0, or a negative errno with
 * err naming path (fd then still open: the caller closes it). */
struct tm_cont;
int tm_ixfile_finish_load(int fd, const char *path, struct tm_cont *c, uint64_t off, uint64_t len,
                          uint64_t raw_size, int *fd_out, struct tm_err *err);

/* CRC32 of fd's bytes [from, to). Returns 0 or a negative errno. */
int tm_ixfile_crc(int fd, uint64_t from, uint64_t to, uint32_t *out);

/* The CRC stored in a file head. */
static inline uint32_t tm_ixfile_head_crc(const uint8_t *head)
{
        return (uint32_t)(head[12] | head[13] << 8 | head[14] << 16 | (uint32_t)head[15] << 24);
}

#endif
