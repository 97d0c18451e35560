#include "ixfile.h"

#include "../codecs/common/tm_io.h"
#include "../codecs/containers/container.h"
#include "index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int tm_ixfile_crc(int fd, uint64_t from, uint64_t to, uint32_t *out)
{
        uint8_t buf[64 << 10];
        uLong crc = crc32(0, NULL, 0);
        while (from < to) {
                size_t want = to - from < sizeof buf ? (size_t)(to - from) : sizeof buf;
                ssize_t r = pread(fd, buf, want, (off_t)from);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        return r < 0 ? -errno : -EIO;
                crc = crc32(crc, buf, (uInt)r);
                from += (uint64_t)r;
        }
        *out = (uint32_t)crc;
        return 0;
}

static int pwrite_all(int fd, const void *p, size_t n, off_t off)
{
        const uint8_t *b = p;
        while (n) {
                ssize_t w = pwrite(fd, b, n, off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                b += w;
                n -= (size_t)w;
                off += w;
        }
        return 0;
}

/* Six characters for a temporary name. */
static void tmp_suffix(char *out)
{
        static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        uint8_t r[6];
        if (getentropy(r, sizeof r) != 0) {
                uint64_t v = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)out;
                memcpy(r, &v, sizeof r);
        }
        for (int i = 0; i < 6; i++)
                out[i] = abc[r[i] % (sizeof abc - 1)];
        out[6] = 0;
}

/* A descriptor of the directory to create in, as tm_ixfile_create says;
 * *base gets the name, *dsb the directory's stat. */
static int ixfile_dir(const int *dir, const char *path, const char **base, struct stat *dsb)
{
        if (!dir)
                return tm_side_open_dir(path, base, dsb);
        const char *s = strrchr(path, '/');
        *base = s ? s + 1 : path;
        int fd = fcntl(*dir, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (fstat(fd, dsb) < 0) {
                int e = -errno;
                close(fd);
                return e;
        }
        return fd;
}

int tm_ixfile_create(struct tm_ixfile *x, const int *dir, const char *path, struct tm_err *err)
{
        memset(x, 0, sizeof *x);
        x->fd = -1;
        x->path = path;
        struct stat dsb;
        x->dirfd = ixfile_dir(dir, path, &x->base, &dsb);
        if (x->dirfd < 0)
                return tm_err_set(err, x->dirfd, "%s: cannot create: %s", path,
                                  strerror(-x->dirfd));
        x->mode = 0644; /* writable by its writer alone: tm_side_open refuses more */
        size_t blen = strlen(x->base);
        x->tmp = malloc(blen + 8);
        int e = x->tmp ? -EEXIST : -ENOMEM;
        for (int tries = 0; e == -EEXIST && tries < 100; tries++) {
                memcpy(x->tmp, x->base, blen);
                x->tmp[blen] = '.';
                tmp_suffix(x->tmp + blen + 1);
                x->fd = openat(x->dirfd, x->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               0600);
                e = x->fd < 0 ? -errno : 0;
        }
        if (e == 0) {
                x->f = fdopen(x->fd, "wb");
                if (!x->f) {
                        e = -errno;
                        close(x->fd);
                        unlinkat(x->dirfd, x->tmp, 0);
                }
        }
        if (e < 0) {
                free(x->tmp);
                x->tmp = NULL;
                close(x->dirfd);
                return tm_err_set(err, e, "%s: cannot create: %s", path, strerror(-e));
        }
        return 0;
}

int tm_ixfile_commit(struct tm_ixfile *x, int rc, uint8_t *head, size_t head_len,
                     uint64_t file_size, struct tm_err *err)
{
        uint32_t crc = 0;
        if (rc == 0)
                rc = fflush(x->f) == 0 ? 0 : -errno;
        if (rc == 0)
                rc = pwrite_all(x->fd, head, head_len, 0);
        if (rc == 0)
                rc = tm_ixfile_crc(x->fd, TM_IXFILE_CRC_FROM, file_size, &crc);
        if (rc == 0) {
                uint8_t cb[4] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16),
                                 (uint8_t)(crc >> 24)};
                memcpy(head + 12, cb, 4);
                rc = pwrite_all(x->fd, cb, sizeof cb, 12);
        }
        if (rc == 0)
                rc = fchmod(x->fd, (mode_t)x->mode) == 0 && fsync(x->fd) == 0 ? 0 : -errno;
        if (fclose(x->f) != 0 && rc == 0)
                rc = -errno;
        /* rename(2) replaces whatever is at the name, a symlink included,
         * without following it */
        if (rc == 0 && renameat(x->dirfd, x->tmp, x->dirfd, x->base) != 0)
                rc = -errno;
        if (rc < 0) {
                unlinkat(x->dirfd, x->tmp, 0);
                if (err && err->code != rc)
                        tm_err_set(err, rc, "%s: cannot write: %s", x->path, strerror(-rc));
        }
        close(x->dirfd);
        free(x->tmp);
        x->tmp = NULL;
        return rc;
}

int tm_ixfile_open(const char *path, const int *dir, const struct tm_side_trust *trust, int *fd_out,
                   struct stat *sb, struct tm_err *err)
{
        if (!dir)
                return tm_side_open(path, trust, 0, fd_out, sb, err);
        const char *s = strrchr(path, '/');
        return tm_side_openat(*dir, s ? s + 1 : path, path, trust, 0, fd_out, sb, err);
}

/* ---- the archive's fingerprint ---- */

#define FP_K1 0x9e3779b97f4a7c15ull
#define FP_K2 0xff51afd7ed558ccdull

/* h after the bytes p[0..n), read as little-endian words (the same value
 * on every host: an index file may be shared over NFS). */
static uint64_t fp_mix(uint64_t h, const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i += 8) {
                uint64_t w = 0;
                for (size_t j = 0; j < 8 && i + j < n; j++)
                        w |= (uint64_t)p[i + j] << (8 * j);
                h ^= w * FP_K1;
                h = (h << 27 | h >> 37) * FP_K2 + n;
        }
        return h;
}

/* h after the bytes [from, to) of fd. */
static int fp_range(int fd, uint64_t from, uint64_t to, uint64_t *h)
{
        uint8_t buf[64 << 10];
        while (from < to) {
                size_t want = to - from < sizeof buf ? (size_t)(to - from) : sizeof buf;
                ssize_t r = tm_pread_full(fd, buf, want, from);
                if (r != (ssize_t)want)
                        return r < 0 ? (int)r : -EIO;
                *h = fp_mix(*h, buf, want);
                from += want;
        }
        return 0;
}

int tm_ix_fingerprint(int fd, uint64_t size, uint64_t dir_off, uint64_t *out)
{
        uint64_t head_end = size < TM_IX_FP_BLOCK ? size : TM_IX_FP_BLOCK;
        uint64_t tail = size - (dir_off < size ? dir_off : size);
        if (tail > TM_IX_FP_DIR_MAX)
                tail = TM_IX_FP_DIR_MAX;
        if (tail < TM_IX_FP_BLOCK)
                tail = TM_IX_FP_BLOCK;
        uint64_t tail_start = size > tail && size - tail > head_end ? size - tail : head_end;
        uint8_t sz[8];
        for (int i = 0; i < 8; i++)
                sz[i] = (uint8_t)(size >> (8 * i));
        uint64_t h = fp_mix(FP_K2, sz, sizeof sz);
        int rc = fp_range(fd, 0, head_end, &h);
        /* the middle: whole when short, else evenly spaced samples */
        uint64_t mid = tail_start - head_end;
        if (rc == 0 && mid <= (uint64_t)TM_IX_FP_SAMPLES * TM_IX_FP_SAMPLE)
                rc = fp_range(fd, head_end, tail_start, &h);
        for (unsigned i = 0;
             rc == 0 && mid > (uint64_t)TM_IX_FP_SAMPLES * TM_IX_FP_SAMPLE && i < TM_IX_FP_SAMPLES;
             i++) {
                uint64_t at = head_end + (mid - TM_IX_FP_SAMPLE) / (TM_IX_FP_SAMPLES - 1) * i;
                rc = fp_range(fd, at, at + TM_IX_FP_SAMPLE, &h);
        }
        if (rc == 0)
                rc = fp_range(fd, tail_start, size, &h);
        /* a final avalanche (MurmurHash3's) */
        h ^= h >> 33;
        h *= FP_K2;
        h ^= h >> 33;
        *out = h;
        return rc;
}

#define NAME_LEN 16

void tm_ix_head_put(uint8_t *b, const char magic[8], uint8_t version,
                    const struct tm_index_key *key)
{
        char codec[NAME_LEN] = {0}, container[NAME_LEN] = {0};
        strncpy(codec, key->codec, NAME_LEN - 1);
        strncpy(container, key->container, NAME_LEN - 1);
        memcpy(b, magic, 8);
        memset(b + 8, 0, 8);
        b[8] = version;
        uint8_t *p = b + 16;
        tm_ix_put64(&p, key->archive_size);
        tm_ix_put64(&p, (uint64_t)key->mtime_ns);
        tm_ix_put64(&p, key->ino);
        tm_ix_put64(&p, key->fingerprint);
        tm_ix_put_bytes(&p, codec, NAME_LEN);
        tm_ix_put_bytes(&p, container, NAME_LEN);
}

int tm_ix_head_check(const uint8_t *b, const char magic[8], uint8_t version,
                     const struct tm_index_key *key)
{
        /* an older version of this format, or the address index the one
         * engine replaced: not this archive's index any more, rebuilt
         * without a word, as a stale one is */
        if ((memcmp(b, magic, 8) == 0 && b[8] < version && !b[9] && !b[10] && !b[11]) ||
            memcmp(b, "TMINDEX\n", 8) == 0)
                return -ESTALE;
        if (memcmp(b, magic, 8) || b[8] != version || b[9] || b[10] || b[11])
                return -EIO;
        const uint8_t *p = b + 16;
        char codec[NAME_LEN], container[NAME_LEN];
        uint64_t size = tm_ix_get64(&p), mtime = tm_ix_get64(&p), ino = tm_ix_get64(&p);
        uint64_t fp = tm_ix_get64(&p);
        tm_ix_get_bytes(&p, codec, NAME_LEN);
        tm_ix_get_bytes(&p, container, NAME_LEN);
        codec[NAME_LEN - 1] = container[NAME_LEN - 1] = 0;
        if (size != key->archive_size || (int64_t)mtime != key->mtime_ns || ino != key->ino ||
            fp != key->fingerprint || key->fp_failed || strcmp(codec, key->codec) ||
            strcmp(container, key->container))
                return -ESTALE;
        return 0;
}

int tm_ixfile_finish_load(int fd, const char *path, struct tm_cont *c, uint64_t off, uint64_t len,
                          uint64_t raw_size, int *fd_out, struct tm_err *err)
{
        if (!c) {
                close(fd);
                return 0;
        }
        int rc = tm_cont_index_load(c, fd, off, len, err);
        if (rc < 0) {
                tm_err_prefix(err, "%s", path);
                return rc;
        }
        uint64_t size;
        if (tm_cont_raw_size(c, &size) < 0 || size != raw_size)
                return tm_err_set(err, -EIO, "%s: raw size differs from the container's", path);
        *fd_out = fd;
        return 0;
}
