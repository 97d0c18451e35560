/* fuzz_archive: libFuzzer harness for the whole read path.
 *
 * Input: byte 0 chooses what to read, the rest is an archive file.
 * Container detection, decompression (plain, gzip, zstd with or without a
 * seek table), codec probing, the index pass and the read of the chosen
 * view must never crash, hang or leak, whatever the bytes. Any error must
 * come back as a negative errno with a message.
 *
 * Byte 0 modulo the number of views picks the one view read (the first
 * 256 KiB, then 100 bytes at an odd offset, through a checkpoint); its top
 * two bits are the read-ahead workers of that read (TM_READ_THREADS 0-3,
 * which matter only to the ascii and binary views). In a trace of at most
 * 64 views each view comes with each worker count, so over many runs every
 * view is read every way. A zip archive's other members (members/) are
 * listed, all of their tree, and one of them, chosen by byte 0 too, is
 * opened and read as the view is. One view a run, not all 10 to 26: each open
 * costs buffers (a record view's line buffer is ~787 KiB, and a 256 KiB
 * feed), maybe worker threads, and decoding, and reading every view made
 * the harness some four times slower. The seeds in fuzz/corpus/fuzz_archive/
 * are small archives of every codec, each once for each of its views. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "views/view.h"

/* Read at most this much of the view: a tiny archive can decompress to a
 * lot, and the point is the decoding, not copying. */
#define FUZZ_VIEW_BYTES (256u << 10)

static void read_view(struct tm_trace *t, const char *view)
{
        struct tm_vfile *f;
        struct tm_err err = {0};
        if (tm_vfile_open(t, view, &f, &err) != 0) {
                if (!err.msg[0])
                        abort(); /* an error must say why */
                return;
        }
        static char buf[8192];
        uint64_t off = 0;
        for (;;) {
                ssize_t n = tm_vfile_pread(f, buf, sizeof buf, off, &err);
                if (n < 0 && !err.msg[0])
                        abort();
                if (n <= 0 || (off += (uint64_t)n) >= FUZZ_VIEW_BYTES)
                        break;
        }
        /* and a read at an odd offset, through a checkpoint */
        tm_vfile_pread(f, buf, 100, off / 3, &err);
        tm_vfile_close(f);
}

/* The walk of a members tree: every path, the pick-th file's kept. */
struct walk {
        const struct tm_members *m;
        char dir[1100];
        unsigned seen, pick;
        char file[1100];
};

static int walk_fn(void *arg, const char *name, int is_dir)
{
        struct walk *w = arg;
        if (++w->seen > 512)
                return 1;
        char path[1100];
        int n = snprintf(path, sizeof path, "%s%s%s", w->dir, w->dir[0] ? "/" : "", name);
        if (n < 0 || (size_t)n >= sizeof path)
                abort(); /* a path is at most 1024 bytes */
        int found = tm_members_find(w->m, path, NULL);
        if (found != (is_dir ? 2 : 1))
                abort(); /* listed, so found, as what the listing says */
        if (!is_dir) {
                if (w->seen >= w->pick && !w->file[0])
                        memcpy(w->file, path, (size_t)n + 1);
                return 0;
        }
        char keep[1100];
        memcpy(keep, w->dir, sizeof keep);
        memcpy(w->dir, path, (size_t)n + 1);
        int rc = tm_members_list(w->m, path, walk_fn, w);
        memcpy(w->dir, keep, sizeof keep);
        return rc < 0 ? 0 : rc;
}

static void read_members(struct tm_trace *t, unsigned pick)
{
        struct tm_members *m;
        struct tm_err err = {0};
        if (tm_members_open(t, &m, &err) != 0) {
                if (!err.msg[0])
                        abort();
                return;
        }
        struct walk w = {.m = m, .pick = pick};
        tm_members_list(m, "", walk_fn, &w);
        struct tm_member *f;
        if (w.file[0] && tm_member_open(t, m, w.file, &f, &err) == 0) {
                static char buf[8192];
                uint64_t size = tm_member_size(f), off = 0;
                for (;;) {
                        ssize_t n = tm_member_pread(f, buf, sizeof buf, off, &err);
                        if ((n < 0 && !err.msg[0]) || (n == 0 && off < size))
                                abort(); /* an error says why; none short of its size */
                        if (n <= 0 || (off += (uint64_t)n) >= FUZZ_VIEW_BYTES)
                                break;
                }
                tm_member_pread(f, buf, 100, size / 3, &err);
                tm_member_close(f);
        } else if (w.file[0] && !err.msg[0]) {
                abort();
        }
        tm_members_close(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        int fd = memfd_create("archive", 0);
        if (fd < 0)
                return 0;
        if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
                close(fd);
                return 0;
        }
        /* read when the view is opened (views/readahead.c tm_ra_threads) */
        static const char *const workers[4] = {"0", "1", "2", "3"};
        setenv("TM_READ_THREADS", workers[data[0] >> 6], 1);
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = 64};
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tm_trace_open(path, &o, &t, &err) == 0) {
                if (tm_trace_index(t, NULL, NULL, &err) == 0) {
                        const char *const *v = tm_trace_views(t);
                        size_t nv = 0;
                        while (v[nv])
                                nv++;
                        if (nv)
                                read_view(t, v[data[0] % nv]);
                        if (tm_trace_has_members(t))
                                read_members(t, data[0] & 63);
                } else if (!err.msg[0]) {
                        abort();
                }
                tm_trace_close(t);
        }
        close(fd);
        return 0;
}
