/* fuzz_archive: libFuzzer harness for the whole read path.
 *
 * The input is an archive file: container detection, decompression (plain,
 * gzip, zstd with or without a seek table), codec probing, the index pass
 * and reads of every view must never crash, hang or leak, whatever the
 * bytes. Any error must come back as a negative errno with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "views/view.h"

/* Read at most this much of each view: a tiny archive can decompress to a
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
        int fd = memfd_create("archive", 0);
        if (fd < 0)
                return 0;
        if (write(fd, data, size) != (ssize_t)size) {
                close(fd);
                return 0;
        }
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = 64};
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tm_trace_open(path, &o, &t, &err) == 0) {
                if (tm_trace_index(t, NULL, NULL, &err) == 0) {
                        for (const char *const *v = tm_trace_views(t); *v; v++)
                                read_view(t, *v);
                } else if (!err.msg[0]) {
                        abort();
                }
                tm_trace_close(t);
        }
        close(fd);
        return 0;
}
