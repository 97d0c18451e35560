#include "ixfile.h"

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

int tm_ixfile_create(struct tm_ixfile *x, const char *path, struct tm_err *err)
{
        size_t plen = strlen(path);
        memset(x, 0, sizeof *x);
        x->fd = -1;
        x->path = path;
        x->tmp = malloc(plen + 8);
        if (!x->tmp)
                return tm_err_set(err, -ENOMEM, "out of memory");
        memcpy(x->tmp, path, plen);
        memcpy(x->tmp + plen, ".XXXXXX", 8);
        x->fd = mkostemp(x->tmp, O_CLOEXEC);
        if (x->fd < 0) {
                int e = -errno;
                free(x->tmp);
                x->tmp = NULL;
                return tm_err_set(err, e, "%s: cannot create: %s", path, strerror(-e));
        }
        x->f = fdopen(x->fd, "wb");
        if (!x->f) {
                int e = -errno;
                close(x->fd);
                unlink(x->tmp);
                free(x->tmp);
                x->tmp = NULL;
                return tm_err_set(err, e, "%s: %s", path, strerror(-e));
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
                rc = fchmod(x->fd, 0644) == 0 && fsync(x->fd) == 0 ? 0 : -errno;
        if (fclose(x->f) != 0 && rc == 0)
                rc = -errno;
        if (rc == 0 && rename(x->tmp, x->path) != 0)
                rc = -errno;
        if (rc < 0) {
                unlink(x->tmp);
                if (err && err->code != rc)
                        tm_err_set(err, rc, "%s: cannot write: %s", x->path, strerror(-rc));
        }
        free(x->tmp);
        x->tmp = NULL;
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
        tm_ix_put_bytes(&p, codec, NAME_LEN);
        tm_ix_put_bytes(&p, container, NAME_LEN);
}

int tm_ix_head_check(const uint8_t *b, const char magic[8], uint8_t version,
                     const struct tm_index_key *key)
{
        if (memcmp(b, magic, 8) || b[8] != version || b[9] || b[10] || b[11])
                return -EIO;
        const uint8_t *p = b + 16;
        char codec[NAME_LEN], container[NAME_LEN];
        uint64_t size = tm_ix_get64(&p), mtime = tm_ix_get64(&p), ino = tm_ix_get64(&p);
        tm_ix_get_bytes(&p, codec, NAME_LEN);
        tm_ix_get_bytes(&p, container, NAME_LEN);
        codec[NAME_LEN - 1] = container[NAME_LEN - 1] = 0;
        if (size != key->archive_size || (int64_t)mtime != key->mtime_ns || ino != key->ino ||
            strcmp(codec, key->codec) || strcmp(container, key->container))
                return -ESTALE;
        return 0;
}
