/* fz_buf: a harness's buffer kept from run to run that ASan still sees as
 * exactly the size asked. fz_buf_get(b, n) returns n bytes (growing the
 * buffer when n is more than it has) and poisons the bytes past n, so a
 * read or write past the end is caught as in a block malloc'd for n bytes
 * (and one before the start as in any malloc'd block), without a malloc
 * and free every run: under ASan a block over 128 KiB is an mmap and a
 * munmap, and smaller ones touch fresh memory from its quarantine, which
 * cost the slow harnesses most of their time. The bytes are not cleared:
 * a harness that needs them cleared does so itself. */
#ifndef TM_FZ_BUF_H
#define TM_FZ_BUF_H

#include <stdlib.h>

#include <sanitizer/asan_interface.h>

struct fz_buf {
        void *p;
        size_t cap;
};

static inline void *fz_buf_get(struct fz_buf *b, size_t n)
{
        if (n > b->cap || !b->p) {
                free(b->p);
                b->cap = n;
                b->p = malloc(n ? n : 1);
                if (!b->p)
                        abort();
        }
        ASAN_UNPOISON_MEMORY_REGION(b->p, n);
        ASAN_POISON_MEMORY_REGION((char *)b->p + n, b->cap - n);
        return b->p;
}

#endif
