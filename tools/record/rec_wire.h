/* The HATF stream libtmrecord.so writes: its fixed encoding, its records,
 * and the rules that turn an allocator call into a record.
 *
 * Everything here is static inline and touches no allocator, no libc state
 * and no globals, so the interposer (preload.c) can call it inside its
 * hooks and the unit test (tests/unit_record.c) can check it byte for byte.
 * The layout is HATF 1.0 as codecs/heap/hatf.h decides it (big-endian
 * numbers, tag first); this file only picks the field settings:
 *
 *   the comment "HATF 1.0" (the signature every tracemount trace starts with)
 *   size        8 bytes, none         (fieldSize 8)
 *   address     8 bytes, none         (fieldSize 8)
 *   thread      4 bytes, none         (interpretation none, fieldSize 4)
 *   time        8 bytes, none         (interpretation none, fieldSize 8)
 *   heap        default 0: not stored (HATF's default, left alone)
 *   attributes  default 0: not stored (HATF's default, left alone)
 *
 * Why so wide and plain: records are appended in per-thread buffers that
 * reach the pipe in flush order, not in time order, so delta or stride
 * codings (which depend on the previous record in the stream) cannot be
 * computed in the hook; and fixed widths keep the hook to a few stores.
 * tracetool record re-encodes the stream compactly (pack_heap_fd).
 *
 * Records (bytes): alloc 29 = tag, size, address, thread, time;
 * free 21 = tag, address, thread, time; realloc (tags 2-5) 37 = tag, size,
 * old address, new address, thread, time. */
#ifndef TM_REC_WIRE_H
#define TM_REC_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Tags (codecs/heap/heap.h's kinds; repeated here so that the interposer
 * builds without the library's headers). */
#define RECW_ALLOC 0
#define RECW_FREE 1
#define RECW_REALLOC_INPLACE 2 /* neither malloc nor free: resized in place */
#define RECW_REALLOC_MOVED 3   /* free then malloc: a new address */
#define RECW_REALLOC_ALLOC 4   /* realloc(NULL, n): malloc, no free */
#define RECW_REALLOC_FREE 5    /* realloc(p, 0) that freed p: free, no malloc */

#define RECW_ALLOC_LEN 29
#define RECW_FREE_LEN 21
#define RECW_REALLOC_LEN 37
#define RECW_MAX_LEN RECW_REALLOC_LEN

/* The stream's first bytes: the signature comment, then the metadata. */
static const uint8_t recw_header[] = {
    10, 0, 8, 'H', 'A', 'T', 'F', ' ', '1', '.', '0', /* comment "HATF 1.0" */
    11, 1, 0, 8,                                      /* size: 8 bytes */
    11, 1, 1, 8,                                      /* address: 8 bytes */
    11, 2, 3, 0,                                      /* thread: none */
    11, 1, 3, 4,                                      /* thread: 4 bytes */
    11, 2, 2, 0,                                      /* time: none */
    11, 1, 2, 8,                                      /* time: 8 bytes */
};

static inline uint8_t *recw_be(uint8_t *p, uint64_t v, unsigned n)
{
        for (unsigned i = 0; i < n; i++)
                p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
        return p + n;
}

/* Each encoder writes one record at p (room for RECW_MAX_LEN bytes) and
 * returns its length. */
static inline size_t recw_alloc(uint8_t *p, uint64_t size, uint64_t addr, uint32_t thread,
                                uint64_t time)
{
        uint8_t *q = p;
        *q++ = RECW_ALLOC;
        q = recw_be(q, size, 8);
        q = recw_be(q, addr, 8);
        q = recw_be(q, thread, 4);
        q = recw_be(q, time, 8);
        return (size_t)(q - p);
}

static inline size_t recw_free(uint8_t *p, uint64_t addr, uint32_t thread, uint64_t time)
{
        uint8_t *q = p;
        *q++ = RECW_FREE;
        q = recw_be(q, addr, 8);
        q = recw_be(q, thread, 4);
        q = recw_be(q, time, 8);
        return (size_t)(q - p);
}

static inline size_t recw_realloc(uint8_t *p, unsigned tag, uint64_t size, uint64_t old_addr,
                                  uint64_t new_addr, uint32_t thread, uint64_t time)
{
        uint8_t *q = p;
        *q++ = (uint8_t)tag;
        q = recw_be(q, size, 8);
        q = recw_be(q, old_addr, 8);
        q = recw_be(q, new_addr, 8);
        q = recw_be(q, thread, 4);
        q = recw_be(q, time, 8);
        return (size_t)(q - p);
}

/* The outcome of realloc(old, size) that returned ret: a realloc tag, or
 * -1 when nothing happened to the heap and nothing is recorded (the call
 * failed: NULL for a non-zero size leaves old allocated; or realloc(NULL,
 * 0) failed). realloc(p, 0) returning NULL freed p (glibc); an allocator
 * that returns a block for size 0 is classified like any other size. */
static inline int recw_realloc_outcome(const void *old, size_t size, const void *ret)
{
        if (!old)
                return ret ? RECW_REALLOC_ALLOC : -1;
        if (!ret)
                return size == 0 ? RECW_REALLOC_FREE : -1;
        return ret == old ? RECW_REALLOC_INPLACE : RECW_REALLOC_MOVED;
}

/* The value of TM_RECORD_FD, "FD:DEV:INO" (decimal): the fd to write to
 * and the identity (st_dev, st_ino) of the pipe tracetool created. The
 * identity is how the interposer tells its own pipe from whatever else a
 * program (or a program it execs, which inherits the variable) has under
 * that number. Returns 0 with the three values, or -1 if s is malformed. */
static inline int recw_parse_target(const char *s, int *fd, uint64_t *dev, uint64_t *ino)
{
        uint64_t v[3] = {0, 0, 0};
        for (int i = 0; i < 3; i++) {
                if (*s < '0' || *s > '9')
                        return -1;
                while (*s >= '0' && *s <= '9') {
                        if (v[i] > (UINT64_MAX - 9) / 10)
                                return -1;
                        v[i] = v[i] * 10 + (uint64_t)(*s++ - '0');
                }
                if (*s != (i < 2 ? ':' : '\0'))
                        return -1;
                s++;
        }
        if (v[0] > 0x7fffffff)
                return -1;
        *fd = (int)v[0];
        *dev = v[1];
        *ino = v[2];
        return 0;
}

#endif
