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
 *   the comment RECW_MARK (this is a recorder's stream: heap is the sequence)
 *   size        8 bytes, none         (fieldSize 8)
 *   address     8 bytes, none         (fieldSize 8)
 *   thread      4 bytes, none         (interpretation none, fieldSize 4)
 *   time        8 bytes, none         (interpretation none, fieldSize 8)
 *   heap        8 bytes, none: the call's SEQUENCE number, not a heap
 *   attributes  default 0: not stored (HATF's default, left alone)
 *
 * The sequence: one counter shared by the process's threads (an atomic
 * fetch-add: 1, 2, ...), taken when the call takes effect (a free before
 * the real free, an allocation after the real call returns), once for every
 * record and only for a record. Records are appended in per-thread
 * buffers that reach the pipe in flush order; the packer puts them back in
 * sequence order (tools/pack_wire.c, a bounded reorder window) and stores heap 0.
 * Why so wide and plain: delta or stride codings (which depend on the
 * previous record in the stream) cannot be computed in the hook, and
 * fixed widths keep the hook to a few stores. tracetool record re-encodes
 * the stream compactly (pack_fd, tools/pack.h).
 *
 * Records (bytes): alloc 37 = tag, size, address, thread, sequence, time;
 * free 29 = tag, address, thread, sequence, time; realloc (tags 2-5) 45 =
 * tag, size, old address, new address, thread, sequence, time.
 *
 * Notices: comment records (tag 10) whose text starts "tmrecord " tell the
 * packer what the stream cannot show (recw_note): "exec SEQ PATH" (written
 * before the real exec, with every buffer flushed), "exec-failed SEQ" (the
 * exec returned), "fork SEQ PID", "spawn SEQ PATH" (posix_spawn),
 * "pymalloc 0 -" (the program is a Python using its own allocator). SEQ is
 * the counter when the notice was written: the records taken before it. */
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

#define RECW_COMMENT 10

#define RECW_ALLOC_LEN 37
#define RECW_FREE_LEN 29
#define RECW_REALLOC_LEN 45
#define RECW_MAX_LEN RECW_REALLOC_LEN

/* The comment after the signature that marks a recorder's stream. */
#define RECW_MARK "tmrecord stream 2: heap is the sequence"
#define RECW_MARK_LEN 39
/* A notice's text starts so. */
#define RECW_NOTE_PREFIX "tmrecord "

/* The stream's first bytes: the signature comment, the mark, then the
 * metadata. */
/* clang-format off */
static const uint8_t recw_header[] = {
    10, 0, 8, 'H', 'A', 'T', 'F', ' ', '1', '.', '0', /* comment "HATF 1.0" */
    10, 0, RECW_MARK_LEN,                             /* comment RECW_MARK */
    't', 'm', 'r', 'e', 'c', 'o', 'r', 'd', ' ', 's', 't', 'r', 'e', 'a', 'm', ' ', '2', ':',
    ' ', 'h', 'e', 'a', 'p', ' ', 'i', 's', ' ', 't', 'h', 'e', ' ',
    's', 'e', 'q', 'u', 'e', 'n', 'c', 'e',
    11, 1, 0, 8,                                      /* size: 8 bytes */
    11, 1, 1, 8,                                      /* address: 8 bytes */
    11, 2, 3, 0,                                      /* thread: none */
    11, 1, 3, 4,                                      /* thread: 4 bytes */
    11, 2, 2, 0,                                      /* time: none */
    11, 1, 2, 8,                                      /* time: 8 bytes */
    11, 2, 4, 0,                                      /* heap: none (the sequence) */
    11, 1, 4, 8,                                      /* heap: 8 bytes */
};
/* clang-format on */

static inline uint8_t *recw_be(uint8_t *p, uint64_t v, unsigned n)
{
        for (unsigned i = 0; i < n; i++)
                p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
        return p + n;
}

/* Each encoder writes one record at p (room for RECW_MAX_LEN bytes) and
 * returns its length. */
static inline size_t recw_alloc(uint8_t *p, uint64_t size, uint64_t addr, uint32_t thread,
                                uint64_t seq, uint64_t time)
{
        uint8_t *q = p;
        *q++ = RECW_ALLOC;
        q = recw_be(q, size, 8);
        q = recw_be(q, addr, 8);
        q = recw_be(q, thread, 4);
        q = recw_be(q, seq, 8);
        q = recw_be(q, time, 8);
        return (size_t)(q - p);
}

static inline size_t recw_free(uint8_t *p, uint64_t addr, uint32_t thread, uint64_t seq,
                               uint64_t time)
{
        uint8_t *q = p;
        *q++ = RECW_FREE;
        q = recw_be(q, addr, 8);
        q = recw_be(q, thread, 4);
        q = recw_be(q, seq, 8);
        q = recw_be(q, time, 8);
        return (size_t)(q - p);
}

static inline size_t recw_realloc(uint8_t *p, unsigned tag, uint64_t size, uint64_t old_addr,
                                  uint64_t new_addr, uint32_t thread, uint64_t seq, uint64_t time)
{
        uint8_t *q = p;
        *q++ = (uint8_t)tag;
        q = recw_be(q, size, 8);
        q = recw_be(q, old_addr, 8);
        q = recw_be(q, new_addr, 8);
        q = recw_be(q, thread, 4);
        q = recw_be(q, seq, 8);
        q = recw_be(q, time, 8);
        return (size_t)(q - p);
}

/* A notice: the comment record "tmrecord VERB SEQ ARG" into p (cap bytes,
 * at least 64); ARG is cut to fit (NULL: "-"). Returns its length. No
 * allocation, no stdio: the hooks call it. */
static inline size_t recw_note(uint8_t *p, size_t cap, const char *verb, uint64_t seq,
                               const char *arg)
{
        char num[24];
        size_t k = sizeof num;
        do
                num[--k] = (char)('0' + seq % 10);
        while ((seq /= 10) && k);
        size_t n = 3;
        const char *parts[] = {RECW_NOTE_PREFIX, verb, " ", NULL, " ", arg ? arg : "-"};
        for (unsigned i = 0; i < 6; i++) {
                const char *s = i == 3 ? num + k : parts[i];
                size_t len = i == 3 ? sizeof num - k : strlen(s);
                if (len > cap - n)
                        len = cap - n;
                if (n - 3 + len > 0xffff)
                        len = 0xffff - (n - 3);
                memcpy(p + n, s, len);
                n += len;
        }
        p[0] = RECW_COMMENT;
        p[1] = (uint8_t)((n - 3) >> 8);
        p[2] = (uint8_t)(n - 3);
        return n;
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
