#include "tm_io.h"

#include <errno.h>
#include <unistd.h>

ssize_t tm_pread_full(int fd, void *buf, size_t n, uint64_t off)
{
        size_t got = 0;
        while (got < n) {
                ssize_t k = pread(fd, (uint8_t *)buf + got, n - got, (off_t)(off + got));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        return (ssize_t)got;
}
