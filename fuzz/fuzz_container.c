/* fuzz_container: libFuzzer harness for the containers alone (plain, gzip
 * single and multi-member, zstd single- and multi-frame and in the seekable
 * format with its seek table, zip: stored and deflate members, data
 * descriptors, ZIP64 records; seeds made by zip(1)).
 *
 * Input: an archive. Four paths must agree byte for byte, whatever the
 * input: the scan (tm_cont_scan, which checks every checksum the container
 * carries and builds the seek index), a cursor reading from the start
 * before any scan, a cursor seeking to offsets picked from the input after
 * the scan, and the same on a second container restored from the seek
 * index the first one saved (tm_cont_index_save / tm_cont_index_load).
 * When the scan fails, a cursor may return only a prefix of what the scan
 * handed out before its error, then an error. Every error has a message.
 * The raw stream is capped at FZC_RAW_MAX: the point is the container.
 * 256 KiB, not 1 MiB: frames of many small blocks and RLE blocks still
 * cross every boundary, and a run is 2.2-2.6x faster (decompressing a
 * megabyte into fresh zstd windows, four times a run, was most of it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codecs/containers/container.h"

#define FZC_RAW_MAX (1u << 18)
/* A cursor reading in pieces of under FZC_SMALL bytes stops after
 * FZC_SMALL_MAX: a megabyte a byte at a time took 0.3 s a run under ASan
 * (and 14 s, a false timeout, on a core that other work starved). */
#define FZC_SMALL 64
#define FZC_SMALL_MAX (64u << 10)

/* How far a cursor reading in pieces of piece bytes reads. */
static size_t fzc_read_max(size_t piece)
{
        return piece < FZC_SMALL ? FZC_SMALL_MAX : FZC_RAW_MAX;
}

struct fzc_buf {
        uint8_t *b;
        size_t n;
};

static int fzc_sink(void *arg, const uint8_t *buf, size_t n)
{
        struct fzc_buf *k = arg;
        if (k->n + n > FZC_RAW_MAX)
                return 1; /* too big: stop, compare nothing */
        memcpy(k->b + k->n, buf, n);
        k->n += n;
        return 0;
}

static void fzc_need_msg(const struct tm_err *err)
{
        if (!err->msg[0]) {
                fprintf(stderr, "fuzz_container: error without a message\n");
                abort();
        }
}

/* Read r to its end (at most max bytes) in pieces of piece bytes; every
 * byte must equal want[...]. Returns the bytes read; *failed is set when it
 * stopped on an error. */
static size_t fzc_read_all(struct tm_creader *r, const struct fzc_buf *want, size_t max,
                           size_t piece, int *failed)
{
        static uint8_t buf[65536];
        size_t got = 0;
        *failed = 0;
        while (got < max) {
                struct tm_err err = {0};
                size_t ask = piece < sizeof buf ? piece : sizeof buf;
                if (ask > max - got)
                        ask = max - got;
                ssize_t n = tm_creader_read(r, buf, ask, &err);
                if (n < 0) {
                        fzc_need_msg(&err);
                        *failed = 1;
                        break;
                }
                if (n == 0)
                        break;
                if ((size_t)n > ask)
                        abort();
                if (want && (got + (size_t)n > want->n || memcmp(buf, want->b + got, (size_t)n))) {
                        fprintf(stderr, "fuzz_container: cursor differs from the scan at raw %zu\n",
                                got);
                        abort();
                }
                got += (size_t)n;
        }
        return got;
}

/* Seek to a few offsets taken from the input and check what is read there. */
static void fzc_seeks(struct tm_cont *c, const struct fzc_buf *want, const uint8_t *data,
                      size_t size)
{
        struct tm_creader *r;
        struct tm_err err = {0};
        if (tm_creader_open(c, &r, &err) != 0) {
                fzc_need_msg(&err);
                return;
        }
        for (unsigned i = 0; i < 6; i++) {
                uint32_t v = 0;
                for (unsigned j = 0; j < 4; j++)
                        v = v << 8 | data[(i * 7 + j * 13) % size];
                uint64_t off = want->n ? v % (want->n + 1) : 0;
                if (tm_creader_seek(r, off, &err) != 0) {
                        fzc_need_msg(&err);
                        continue;
                }
                if (tm_creader_tell(r) != off)
                        abort();
                uint8_t buf[300];
                ssize_t n = tm_creader_read_full(r, buf, 1 + v % sizeof buf, &err);
                if (n < 0) {
                        fzc_need_msg(&err);
                        continue;
                }
                size_t expect =
                    want->n - off < 1 + v % sizeof buf ? want->n - off : 1 + v % sizeof buf;
                if ((size_t)n != expect || memcmp(buf, want->b + off, (size_t)n)) {
                        fprintf(stderr, "fuzz_container: seek to %llu reads wrong bytes\n",
                                (unsigned long long)off);
                        abort();
                }
        }
        tm_creader_close(r);
}

/* Save c's seek index, restore it into a fresh container on the same
 * archive and read through it. */
static void fzc_reload(int fd, struct tm_cont *c, const struct fzc_buf *want, const uint8_t *data,
                       size_t size)
{
        struct tm_err err = {0};
        int ixfd = memfd_create("seekindex", 0);
        if (ixfd < 0)
                return;
        FILE *f = fdopen(dup(ixfd), "w");
        if (!f)
                abort();
        int64_t len = tm_cont_index_save(c, f, &err);
        if (fclose(f) != 0 || len < 0) {
                fprintf(stderr, "fuzz_container: saving the seek index failed: %s\n", err.msg);
                abort();
        }
        struct tm_cont *c2;
        if (tm_cont_open(fd, "archive", &c2, &err) != 0)
                abort(); /* it opened a moment ago */
        if (tm_cont_index_load(c2, ixfd, 0, (uint64_t)len, &err) != 0) {
                fprintf(stderr, "fuzz_container: its own seek index is refused: %s\n", err.msg);
                abort();
        }
        uint64_t rs;
        if (!tm_cont_raw_size(c2, &rs) || rs != want->n)
                abort();
        fzc_seeks(c2, want, data, size);
        tm_cont_close(c2);
        close(ixfd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        int fd = memfd_create("archive", 0);
        if (fd < 0)
                return 0;
        if (write(fd, data, size) != (ssize_t)size) {
                close(fd);
                return 0;
        }
        struct tm_cont *c;
        struct tm_err err = {0};
        if (tm_cont_open(fd, "archive", &c, &err) != 0) {
                fzc_need_msg(&err);
                close(fd);
                return 0;
        }
        if (tm_cont_archive_size(c) != size)
                abort();
        static uint8_t wantb[FZC_RAW_MAX], beforeb[FZC_RAW_MAX];
        struct fzc_buf want = {wantb, 0};
        /* a cursor before any scan: only the container's own structure */
        struct tm_creader *r;
        struct fzc_buf before = {beforeb, 0};
        int before_failed = 1;
        size_t before_max = FZC_RAW_MAX;
        if (tm_creader_open(c, &r, &err) == 0) {
                size_t piece = 1 + data[size / 2] * 97u;
                before_max = fzc_read_max(piece);
                before_failed = 0;
                while (before.n < before_max) {
                        ssize_t n = tm_creader_read(
                            r, before.b + before.n,
                            before_max - before.n < piece ? before_max - before.n : piece, &err);
                        if (n < 0) {
                                fzc_need_msg(&err);
                                before_failed = 1;
                                break;
                        }
                        if (n == 0)
                                break;
                        before.n += (size_t)n;
                }
                tm_creader_close(r);
        } else {
                fzc_need_msg(&err);
        }
        int rc = tm_cont_scan(c, fzc_sink, &want, &err);
        if (rc < 0)
                fzc_need_msg(&err);
        size_t common = before.n < want.n ? before.n : want.n;
        if (rc <= 0 && memcmp(before.b, want.b, common)) {
                fprintf(stderr, "fuzz_container: unscanned cursor and scan differ\n");
                abort();
        }
        if (rc == 0) {
                uint64_t rs;
                if (!tm_cont_raw_size(c, &rs) || rs != want.n) {
                        fprintf(stderr, "fuzz_container: raw size %llu, scan gave %zu\n",
                                (unsigned long long)rs, want.n);
                        abort();
                }
                /* the scan checked the checksums: a cursor that read the
                 * whole stream without them must have read the same */
                if (!before_failed && before.n < before_max && before.n != want.n) {
                        fprintf(stderr, "fuzz_container: cursor read %zu bytes, scan %zu\n",
                                before.n, want.n);
                        abort();
                }
                if (tm_creader_open(c, &r, &err) != 0)
                        abort();
                int failed;
                size_t piece = 1 + data[0] * 61u;
                size_t max = fzc_read_max(piece);
                size_t got = fzc_read_all(r, &want, max, piece, &failed);
                if (failed || got != (want.n < max ? want.n : max)) {
                        fprintf(stderr, "fuzz_container: cursor after the scan: %zu of %zu (%s)\n",
                                got, want.n, err.msg);
                        abort();
                }
                tm_creader_close(r);
                fzc_seeks(c, &want, data, size);
                fzc_reload(fd, c, &want, data, size);
        }
        tm_cont_close(c);
        close(fd);
        return 0;
}
