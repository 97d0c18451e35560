/* tm_io: whole reads from files at an offset.
 *
 * pread(2) may return fewer bytes than asked (a signal, some network file
 * systems) without being at the end of the file; callers that need all n
 * bytes use this instead of pread. */
#ifndef TM_IO_H
#define TM_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read n bytes of fd at off, retrying short reads and EINTR. Returns the
 * bytes read (fewer than n only at the end of the file) or a negative
 * errno. */
ssize_t tm_pread_full(int fd, void *buf, size_t n, uint64_t off);

#endif
