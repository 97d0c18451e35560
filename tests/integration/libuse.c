/* libuse: a C program built against the installed libtracemount through
 * pkg-config, as a user outside this tree would build one:
 *     cc libuse.c $(pkg-config --cflags --libs tracemount)
 * libuse ARCHIVE VIEW writes the view to stdout, read with tm_vfile_pread
 * in 64 KiB pieces; fuse_xdin.sh compares it with `tracetool cat`. Only
 * the installed API (include/tracemount.h) is used. */
#include <stdio.h>
#include <stdlib.h>

#include <tracemount.h>

int main(int argc, char **argv)
{
        if (argc != 3) {
                fprintf(stderr, "usage: libuse ARCHIVE VIEW\n");
                return 2;
        }
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t;
        struct tm_vfile *f;
        struct tm_err err = {0};
        if (tm_trace_open(argv[1], &o, &t, &err) < 0 || tm_vfile_open(t, argv[2], &f, &err) < 0) {
                fprintf(stderr, "libuse: %s\n", err.msg);
                return 1;
        }
        static char buf[1 << 16];
        uint64_t off = 0;
        ssize_t n;
        while ((n = tm_vfile_pread(f, buf, sizeof buf, off, &err)) > 0) {
                fwrite(buf, 1, (size_t)n, stdout);
                off += (uint64_t)n;
        }
        if (n < 0)
                fprintf(stderr, "libuse: %s\n", err.msg);
        tm_vfile_close(f);
        tm_trace_close(t);
        return n < 0 || fflush(stdout) != 0;
}
