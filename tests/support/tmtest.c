/* tmtest: the unit tests' shared helpers (tmtest.h says what each does). */
#include "tmtest.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codecs/containers/container.h"

char tmt_dir[256];

int tmt_tmpdir_make(const char *tag, char *dir, size_t cap)
{
        const char *t = getenv("TMPDIR");
        int k = snprintf(dir, cap, "%s/%s.XXXXXX", t && *t ? t : "/tmp", tag);
        if (k < 0 || (size_t)k >= cap)
                return -ENAMETOOLONG;
        return mkdtemp(dir) ? 0 : -errno;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
        (void)sb;
        (void)ftw;
        int r = flag == FTW_DP ? rmdir(path) : unlink(path);
        return r == 0 ? 0 : errno;
}

int tmt_tmpdir_remove(const char *dir)
{
        if (!dir || !dir[0])
                return 0;
        int r = nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        return r > 0 ? -r : r < 0 ? -errno : 0;
}

int tmt_group_setup(void **state)
{
        (void)state;
        return tmt_tmpdir_make("tm-unit", tmt_dir, sizeof tmt_dir) == 0 ? 0 : -1;
}

int tmt_group_teardown(void **state)
{
        (void)state;
        int r = tmt_tmpdir_remove(tmt_dir);
        tmt_dir[0] = 0;
        return r == 0 ? 0 : -1;
}

const char *tmt_path(const char *name)
{
        static char slot[4][512];
        static unsigned next;
        char *p = slot[next++ % 4];
        snprintf(p, sizeof slot[0], "%s/%s", tmt_dir, name);
        return p;
}

uint64_t tmt_rand(uint64_t *s)
{
        uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *s = x;
        return x * 0x2545f4914f6cdd1dull;
}

uint64_t tmt_below(uint64_t *s, uint64_t n)
{
        return n ? tmt_rand(s) % n : 0;
}

int tmt_put(struct tmt_buf *b, const void *src, size_t n)
{
        if (b->len + n + 1 > b->cap) {
                size_t cap = (b->len + n + 1) * 2 + 4096;
                uint8_t *p = realloc(b->p, cap);
                if (!p)
                        return -ENOMEM;
                b->p = p;
                b->cap = cap;
        }
        if (n)
                memcpy(b->p + b->len, src, n);
        b->len += n;
        b->p[b->len] = 0;
        return 0;
}

uint8_t *tmt_slurp(const char *path, size_t *len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        struct tmt_buf b = {0};
        uint8_t chunk[65536];
        ssize_t k;
        while ((k = read(fd, chunk, sizeof chunk)) > 0)
                if (tmt_put(&b, chunk, (size_t)k) < 0)
                        break;
        int e = k < 0 ? errno : k > 0 ? ENOMEM : 0;
        close(fd);
        if (!e && !b.p && tmt_put(&b, "", 0) < 0)
                e = ENOMEM;
        if (e) {
                free(b.p);
                errno = e;
                return NULL;
        }
        *len = b.len;
        return b.p;
}

int tmt_spit(const char *path, const void *p, size_t n)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        const uint8_t *q = p;
        while (n) {
                ssize_t k = write(fd, q, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        int e = k < 0 ? errno : EIO;
                        close(fd);
                        return -e;
                }
                q += k;
                n -= (size_t)k;
        }
        return close(fd) == 0 ? 0 : -errno;
}

struct raw_sink {
        struct tmt_buf b;
        size_t max;
};

static int raw_put(void *arg, const uint8_t *buf, size_t n)
{
        struct raw_sink *s = arg;
        if (s->max && s->b.len + n > s->max)
                n = s->max - s->b.len;
        if (tmt_put(&s->b, buf, n) < 0)
                return -ENOMEM;
        return s->max && s->b.len == s->max ? 1 : 0; /* 1: enough, stop */
}

uint8_t *tmt_raw_of(const char *path, size_t max, size_t *len, struct tm_err *err)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                tm_err_set(err, -errno, "%s: %s", path, strerror(errno));
                return NULL;
        }
        struct tm_cont *c = NULL;
        struct raw_sink s = {.max = max};
        int r = tm_cont_open(fd, path, &c, err);
        if (r == 0) {
                r = tm_cont_scan(c, raw_put, &s, err);
                tm_cont_close(c);
        }
        close(fd);
        if (r >= 0 && !s.b.p && tmt_put(&s.b, "", 0) < 0)
                r = -ENOMEM;
        if (r < 0) {
                free(s.b.p);
                return NULL;
        }
        *len = s.b.len;
        return s.b.p;
}
