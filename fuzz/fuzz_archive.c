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
 * view is read every way. One view a run, not all 10 to 26: each open
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
                } else if (!err.msg[0]) {
                        abort();
                }
                tm_trace_close(t);
        }
        close(fd);
        return 0;
}
