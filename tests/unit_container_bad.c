/* Containers on damaged and hostile input: truncated and bit-flipped
 * archives, lying or absurd zstd seek tables, gzip trailing garbage, huge
 * zstd windows, garbage seek indexes. Every case must end in a negative
 * errno whose message names an offset, never a crash or a wrong byte. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "codecs/containers/container.h"
#include "unit_container_util.h"

static int setup_data(void **state)
{
        (void)state;
        tu_data_init(3u << 20, 1u << 20, 5);
        return 0;
}

static int teardown_data(void **state)
{
        (void)state;
        tu_data_free();
        return 0;
}

static void assert_offset_msg(int ret, const struct tm_err *err)
{
        if (ret >= 0)
                fail_msg("expected an error, got %d", ret);
        if (!strstr(err->msg, "offset"))
                fail_msg("message without an offset: %s", err->msg);
}

/* Open + scan must fail with an offset; so must reading it all. Returns the
 * error of the scan (or of open). */
static int expect_broken(const char *path, struct tm_err *err)
{
        struct tm_cont *c;
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        memset(err, 0, sizeof *err);
        int ret = tm_cont_open(fd, path, &c, err);
        if (ret < 0) {
                assert_int_equal(ret, -EIO);
                assert_offset_msg(ret, err);
                close(fd);
                return ret;
        }
        /* A reader from the start, without an index. */
        struct tm_creader *r;
        assert_int_equal(tm_creader_open(c, &r, err), 0);
        uint8_t *buf = malloc(1 << 16);
        ssize_t k;
        while ((k = tm_creader_read(r, buf, 1 << 16, err)) > 0)
                ;
        assert_offset_msg((int)k, err);
        assert_int_equal(k, -EIO);
        tm_creader_close(r);
        free(buf);
        memset(err, 0, sizeof *err);
        ret = tm_cont_scan(c, NULL, NULL, err);
        assert_offset_msg(ret, err);
        assert_int_equal(ret, -EIO);
        tm_cont_close(c);
        close(fd);
        return ret;
}

static void make_archives(char paths[4][512])
{
        tu_path(paths[0], 512, "bad.gz");
        tu_write_records(paths[0], TM_CONT_GZIP, din_data, din_n, 0, 1, NULL);
        tu_path(paths[1], 512, "bad-multi.gz");
        size_t cuts[] = {0, din_n / 2, din_n};
        tu_write_gzip_members(paths[1], din_data, cuts, 3);
        tu_path(paths[2], 512, "bad.zst");
        tu_write_records(paths[2], TM_CONT_ZSTD, din_data, din_n, 256u << 10, 2, NULL);
        tu_path(paths[3], 512, "bad-rnd.zst");
        tu_write_records(paths[3], TM_CONT_ZSTD, rnd_data, rnd_n, 100000, 3, NULL);
}

static void test_truncated(void **state)
{
        (void)state;
        char paths[4][512], cut[2100];
        make_archives(paths);
        for (int a = 0; a < 4; a++) {
                size_t n;
                uint8_t *p = tu_slurp(paths[a], &n);
                size_t at[] = {4, 10, 100, n / 3, n / 2, n - 17, n - 9, n - 5, n - 1};
                for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
                        snprintf(cut, sizeof cut, "%s.cut", paths[a]);
                        tu_spit(cut, p, at[i]);
                        struct tm_err err;
                        expect_broken(cut, &err);
                }
                free(p);
        }
}

static void test_flipped(void **state)
{
        (void)state;
        char paths[4][512], bad[2100];
        make_archives(paths);
        uint64_t rng = 77;
        for (int a = 0; a < 4; a++) {
                size_t n;
                uint8_t *p = tu_slurp(paths[a], &n);
                for (int i = 0; i < 12; i++) {
                        /* Inside the compressed data: away from gzip
                         * header fields the CRC does not cover. */
                        size_t at = 64 + (size_t)(tu_rand(&rng) % (n - 128));
                        p[at] ^= 0xa5;
                        snprintf(bad, sizeof bad, "%s.flip", paths[a]);
                        tu_spit(bad, p, n);
                        p[at] ^= 0xa5;
                        struct tm_err err;
                        expect_broken(bad, &err);
                }
                free(p);
        }
}

static void test_gzip_trailing_garbage(void **state)
{
        (void)state;
        char path[512], bad[600];
        tu_path(path, sizeof path, "garbage.gz");
        tu_write_records(path, TM_CONT_GZIP, din_data, 100000, 0, 4, NULL);
        size_t n;
        uint8_t *p = tu_slurp(path, &n);
        static const char *tails[] = {"garbage\n", "\0\0\0\0", "\x1f"};
        static const size_t tlen[] = {8, 4, 1};
        for (int t = 0; t < 3; t++) {
                uint8_t *q = malloc(n + tlen[t]);
                memcpy(q, p, n);
                memcpy(q + n, tails[t], tlen[t]);
                snprintf(bad, sizeof bad, "%s.%d", path, t);
                tu_spit(bad, q, n + tlen[t]);
                free(q);
                struct tm_err err;
                expect_broken(bad, &err);
                if (t < 2) {
                        char where[64];
                        snprintf(where, sizeof where, "archive offset %zu:", n);
                        if (!strstr(err.msg, where) || !strstr(err.msg, "garbage"))
                                fail_msg("%s", err.msg);
                }
        }
        free(p);
}

/* A seekable archive with its table patched by fn. */
static void patch_table(const char *src, const char *dst, void (*fn)(uint8_t *p, size_t n))
{
        size_t n;
        uint8_t *p = tu_slurp(src, &n);
        fn(p, n);
        tu_spit(dst, p, n);
        free(p);
}

static void put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* Bytes a seek-table entry: 12 with checksums (what pack writes). */
static size_t entry_size(const uint8_t *p, size_t n)
{
        return p[n - 5] & 0x80 ? 12 : 8;
}

static size_t table_start(const uint8_t *p, size_t n)
{
        return n - 9 - (size_t)tu_le32(p + n - 9) * entry_size(p, n);
}

static void huge_count(uint8_t *p, size_t n)
{
        put32(p + n - 9, 0x7ffffff);
}
static void all_ones_count(uint8_t *p, size_t n)
{
        put32(p + n - 9, 0xffffffff);
}
static void reserved_bits(uint8_t *p, size_t n)
{
        p[n - 5] = 0x04;
}
static void checksum_flag(uint8_t *p, size_t n)
{
        p[n - 5] ^= 0x80; /* entries would be 8 or 12 bytes: the sizes disagree */
}
static void frame_size_field(uint8_t *p, size_t n)
{
        size_t t = table_start(p, n);
        put32(p + t - 4, tu_le32(p + t - 4) + 8);
}
static void comp_too_big(uint8_t *p, size_t n)
{
        put32(p + table_start(p, n) + entry_size(p, n), 0xffffffff);
}
static void comp_shifted(uint8_t *p, size_t n)
{
        size_t t = table_start(p, n);
        /* Frame 4 (raw 1 MiB) starts a kept point, so move it. */
        put32(p + t, tu_le32(p + t) + 1);
        size_t e4 = t + 4 * entry_size(p, n);
        put32(p + e4, tu_le32(p + e4) - 1);
}
static void empty_frame_with_data(uint8_t *p, size_t n)
{
        size_t t = table_start(p, n);
        size_t e1 = t + entry_size(p, n);
        put32(p + e1, tu_le32(p + e1) + tu_le32(p + t));
        put32(p + t, 0);
}
static void raw_lies(uint8_t *p, size_t n)
{
        size_t t = table_start(p, n);
        put32(p + t + 4, tu_le32(p + t + 4) + 1000);
}

static void test_hostile_seek_table(void **state)
{
        (void)state;
        char path[512], bad[600];
        tu_path(path, sizeof path, "hostile.zst");
        tu_write_records(path, TM_CONT_ZSTD, din_data, din_n, 256u << 10, 8, NULL);
        snprintf(bad, sizeof bad, "%s.bad", path);
        struct tm_err err;
        struct tm_cont *c;
        void (*at_open[])(uint8_t *, size_t) = {
            huge_count,       all_ones_count, reserved_bits,        checksum_flag,
            frame_size_field, comp_too_big,   empty_frame_with_data};
        for (size_t i = 0; i < sizeof at_open / sizeof at_open[0]; i++) {
                patch_table(path, bad, at_open[i]);
                int fd = open(bad, O_RDONLY);
                memset(&err, 0, sizeof err);
                int ret = tm_cont_open(fd, bad, &c, &err);
                assert_int_equal(ret, -EIO);
                assert_offset_msg(ret, &err);
                close(fd);
        }

        /* Sizes that add up but put frame 1 one byte late: opening works,
         * reading there fails, and so does a scan: a table that disagrees
         * with the frames is damage (it may stand for frames moved). */
        patch_table(path, bad, comp_shifted);
        int fd = open(bad, O_RDONLY);
        assert_int_equal(tm_cont_open(fd, bad, &c, &err), 0);
        struct tm_creader *r;
        assert_int_equal(tm_creader_open(c, &r, &err), 0);
        uint8_t buf[4096];
        int ret = tm_creader_seek(r, 3u << 19, &err);
        ssize_t k = ret < 0 ? ret : tm_creader_read(r, buf, sizeof buf, &err);
        assert_int_equal(k, -EIO);
        assert_offset_msg((int)k, &err);
        /* Sequentially, the frame end disagrees with the table. */
        assert_int_equal(tm_creader_seek(r, 0, &err), 0);
        while ((k = tm_creader_read(r, buf, sizeof buf, &err)) > 0)
                ;
        assert_int_equal(k, -EIO);
        tm_creader_close(r);
        memset(&err, 0, sizeof err);
        assert_int_equal(tm_cont_scan(c, NULL, NULL, &err), -EIO);
        assert_offset_msg(-EIO, &err);
        assert_non_null(strstr(err.msg, "seek table: frame 0 is"));
        tm_cont_close(c);
        close(fd);

        /* A raw size that lies: scan and a full read fail. */
        patch_table(path, bad, raw_lies);
        expect_broken(bad, &err);
}

/* A seek table of 100000 tiny frames claiming 4 GiB each: consistent, so
 * open may accept it, but memory stays bounded (points are thinned by
 * archive distance) and reading fails cleanly. */
static void test_absurd_frame_table(void **state)
{
        (void)state;
        size_t nf = 100000, fsz = 10;
        size_t n = nf * fsz + 8 + nf * 8 + 9;
        uint8_t *p = calloc(1, n);
        uint8_t *t = p + nf * fsz;
        put32(t, 0x184D2A5E);
        put32(t + 4, (uint32_t)(nf * 8 + 9));
        for (size_t i = 0; i < nf; i++) {
                put32(t + 8 + i * 8, (uint32_t)fsz);
                put32(t + 12 + i * 8, 0xffffffff);
        }
        put32(t + 8 + nf * 8, (uint32_t)nf);
        put32(t + 8 + nf * 8 + 5, 0x8F92EAB1);
        put32(p, 0xFD2FB528); /* so it is detected as zstd */
        char path[512];
        tu_path(path, sizeof path, "absurd.zst");
        tu_spit(path, p, n);
        free(p);
        struct tm_err err;
        expect_broken(path, &err);
}

static void test_zstd_window_too_large(void **state)
{
        (void)state;
        char path[512];
        tu_path(path, sizeof path, "bigwindow.zst");
        FILE *f = fopen(path, "wb");
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 29);
        size_t cap = ZSTD_compressBound(din_n);
        uint8_t *out = malloc(cap);
        ZSTD_inBuffer in = {din_data, din_n, 0};
        ZSTD_outBuffer ob = {out, cap, 0};
        /* e_continue first: no content size, so the 512 MiB window stays. */
        ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_continue);
        size_t left = ZSTD_compressStream2(cc, &ob, &in, ZSTD_e_end);
        assert_int_equal(left, 0);
        fwrite(out, 1, ob.pos, f);
        fclose(f);
        free(out);
        ZSTD_freeCCtx(cc);
        struct tm_err err;
        expect_broken(path, &err);
        assert_non_null(strstr(err.msg, "zstd"));
}

/* A saved index, then garbage variants of it. */
static void test_bad_index(void **state)
{
        (void)state;
        char path[512], ipath[512];
        tu_path(path, sizeof path, "idx.gz");
        size_t big;
        uint8_t *data = tu_gen_din(12u << 20, 9, &big);
        tu_write_records(path, TM_CONT_GZIP, data, big, 0, 9, NULL);
        free(data);
        int fd = open(path, O_RDONLY);
        struct tm_err err = {0};
        struct tm_cont *c;
        assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
        assert_int_equal(tm_cont_scan(c, NULL, NULL, &err), 0);
        tu_path(ipath, sizeof ipath, "idx.tmidx");
        FILE *f = fopen(ipath, "wb");
        int64_t len = tm_cont_index_save(c, f, &err);
        assert_true(len > 32);
        fclose(f);
        tm_cont_close(c);
        size_t n;
        uint8_t *good = tu_slurp(ipath, &n);
        assert_int_equal(n, (size_t)len);
        uint32_t np = tu_le32(good + 24);
        assert_true(np >= 1);

        uint8_t *b = malloc(n);
        uint64_t rng = 5;
        for (int v = 0; v < 40; v++) {
                memcpy(b, good, n);
                size_t ln = n;
                if (v == 0) {
                        for (size_t i = 0; i < n; i++)
                                b[i] = (uint8_t)tu_rand(&rng);
                } else if (v == 1) {
                        ln = 31;
                } else if (v == 2) {
                        ln = n - 1;
                } else if (v == 3) {
                        b[8] ^= 1; /* archive size */
                } else if (v == 4) {
                        b[6] = TM_CONT_ZSTD;
                } else {
                        /* a byte of the header or the point records */
                        size_t at = (size_t)(tu_rand(&rng) % (32 + 32 * np));
                        b[at] ^= (uint8_t)(1 + tu_rand(&rng) % 255);
                }
                tu_spit(ipath, b, n);
                int ifd = open(ipath, O_RDONLY);
                assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
                memset(&err, 0, sizeof err);
                int ret = tm_cont_index_load(c, ifd, 0, ln, &err);
                if (ret != -EIO)
                        fail_msg("variant %d: load gave %d", v, ret);
                assert_non_null(strstr(err.msg, "index"));
                uint64_t rs;
                assert_int_equal(tm_cont_raw_size(c, &rs), 0);
                tm_cont_close(c);
                close(ifd);
        }
        /* An index longer than its file. */
        tu_spit(ipath, good, n);
        int ifd = open(ipath, O_RDONLY);
        assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
        assert_int_equal(tm_cont_index_load(c, ifd, 1, n, &err), -EIO);
        tm_cont_close(c);
        close(ifd);

        /* Damaged windows load (they are read on demand) but a reader
         * restarting at the point fails instead of returning wrong bytes. */
        memcpy(b, good, n);
        size_t wstart = 32 + 32 * (size_t)np;
        int damaged = 0;
        assert_true(n > wstart);
        for (size_t w = wstart; w < n; w += 97) {
                b[w] ^= 0x5a;
                damaged = 1;
        }
        tu_spit(ipath, b, n);
        ifd = open(ipath, O_RDONLY);
        assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
        assert_int_equal(tm_cont_index_load(c, ifd, 0, n, &err), 0);
        for (uint32_t i = 0; i < np && damaged; i++) {
                const uint8_t *rec = good + 32 + 32 * i;
                if (tu_le32(rec + 16) == 0)
                        continue;
                uint64_t roff = tu_le32(rec + 8) | (uint64_t)tu_le32(rec + 12) << 32;
                struct tm_creader *r;
                assert_int_equal(tm_creader_open(c, &r, &err), 0);
                memset(&err, 0, sizeof err);
                int ret = tm_creader_seek(r, roff, &err);
                assert_int_equal(ret, -EIO);
                assert_non_null(strstr(err.msg, "window"));
                tm_creader_close(r);
        }
        tm_cont_close(c);
        close(ifd);
        free(b);
        free(good);
        close(fd);
}

static void test_bad_writer_args(void **state)
{
        (void)state;
        char path[512];
        tu_path(path, sizeof path, "args.gz");
        int fd = tu_open_out(path);
        struct tm_err err = {0};
        struct tm_cwriter *w;
        struct tm_cwriter_opts o = {.level = 12};
        assert_int_equal(tm_cwriter_open(fd, path, TM_CONT_GZIP, &o, &w, &err), -EINVAL);
        o.level = 1000;
        assert_int_equal(tm_cwriter_open(fd, path, TM_CONT_ZSTD, &o, &w, &err), -EINVAL);
        assert_int_equal(tm_cwriter_open(fd, path, (enum tm_cont_kind)9, NULL, &w, &err), -EINVAL);
        close(fd);
        /* Writing to a read-only fd reports the write error. */
        fd = open(path, O_RDONLY);
        assert_int_equal(tm_cwriter_open(fd, path, TM_CONT_PLAIN, NULL, &w, &err), 0);
        tm_cwriter_write(w, din_data, 1000, &err);
        assert_true(tm_cwriter_close(w, &err) < 0);
        close(fd);
}

/* Small archives with random damage anywhere (headers included): any
 * outcome but a crash, a hang or an -EIO without an offset. */
static void poke(const char *path)
{
        struct tm_err err = {0};
        struct tm_cont *c;
        int fd = open(path, O_RDONLY);
        int ret = tm_cont_open(fd, path, &c, &err);
        if (ret < 0) {
                assert_offset_msg(ret, &err);
                close(fd);
                return;
        }
        struct tm_creader *r;
        assert_int_equal(tm_creader_open(c, &r, &err), 0);
        uint8_t buf[8192];
        ssize_t k;
        while ((k = tm_creader_read(r, buf, sizeof buf, &err)) > 0)
                ;
        if (k < 0)
                assert_offset_msg((int)k, &err);
        ret = tm_cont_scan(c, NULL, NULL, &err);
        if (ret < 0) {
                assert_offset_msg(ret, &err);
        } else {
                uint64_t rs;
                assert_int_equal(tm_cont_raw_size(c, &rs), 1);
                for (uint64_t off = 0; off <= rs; off += rs / 7 + 1) {
                        ret = tm_creader_seek(r, off, &err);
                        k = ret < 0 ? ret : tm_creader_read(r, buf, sizeof buf, &err);
                        if (k == -EIO)
                                assert_offset_msg((int)k, &err);
                }
        }
        tm_creader_close(r);
        tm_cont_close(c);
        close(fd);
}

static void test_random_damage(void **state)
{
        (void)state;
        char paths[4][512], bad[600];
        tu_path(paths[0], 512, "small.gz");
        tu_write_records(paths[0], TM_CONT_GZIP, din_data, 30000, 0, 1, NULL);
        tu_path(paths[1], 512, "small.zst");
        tu_write_records(paths[1], TM_CONT_ZSTD, din_data, 30000, 4000, 2, NULL);
        tu_path(paths[2], 512, "small-rnd.zst");
        tu_write_records(paths[2], TM_CONT_ZSTD, rnd_data, 30000, 4000, 3, NULL);
        tu_path(paths[3], 512, "small-multi.zst");
        size_t cuts[] = {0, 100, 10000, 30000};
        tu_write_zstd_frames(paths[3], din_data, cuts, 4, 1);
        uint64_t rng = 99;
        for (int i = 0; i < 400; i++) {
                int a = i % 4;
                size_t n;
                uint8_t *p = tu_slurp(paths[a], &n);
                int flips = 1 + (int)(tu_rand(&rng) % 4);
                for (int f = 0; f < flips; f++)
                        p[tu_rand(&rng) % n] ^= (uint8_t)(1 + tu_rand(&rng) % 255);
                if (tu_rand(&rng) % 4 == 0)
                        n -= (size_t)(tu_rand(&rng) % n);
                snprintf(bad, sizeof bad, "%s.dmg", paths[a]);
                tu_spit(bad, p, n);
                free(p);
                poke(bad);
        }
}

/* Read the archive at path from the start, before any scan, to its
 * error: it must be -EIO, and *err gets it. */
static void reader_error(const char *path, struct tm_err *err)
{
        struct tm_cont *c;
        struct tm_creader *r;
        int fd = open(path, O_RDONLY);
        assert_int_equal(tm_cont_open(fd, path, &c, err), 0);
        assert_int_equal(tm_creader_open(c, &r, err), 0);
        static uint8_t buf[1 << 16];
        ssize_t got;
        while ((got = tm_creader_read(r, buf, sizeof buf, err)) > 0)
                ;
        assert_int_equal(got, -EIO);
        tm_creader_close(r);
        tm_cont_close(c);
        close(fd);
}

/* A zstd frame's damage is found at the frame's end (its content
 * checksum) or wherever its blocks stop decoding; the message names the
 * frame it is in, by a reader and by the scan. */
static void test_zstd_frame_named(void **state)
{
        (void)state;
        char path[512], bad[600], want[96];
        tu_path(path, sizeof path, "frames.zst");
        tu_write_records(path, TM_CONT_ZSTD, din_data, din_n, 64u << 10, 9, NULL);
        size_t n;
        uint8_t *p = tu_slurp(path, &n);
        size_t start[64], nf = 0;
        for (size_t off = 0; off < n && nf < 64;) {
                size_t sz = ZSTD_findFrameCompressedSize(p + off, n - off);
                assert_false(ZSTD_isError(sz));
                start[nf++] = off;
                off += sz;
        }
        assert_true(nf >= 5); /* data frames, the order record, the seek table */
        for (size_t k = 1; k + 2 < nf; k++) {
                size_t at = start[k] + (start[k + 1] - start[k]) / 2;
                p[at] ^= 0x10;
                snprintf(bad, sizeof bad, "%s.%zu", path, k);
                tu_spit(bad, p, n);
                p[at] ^= 0x10;
                struct tm_err err;
                expect_broken(bad, &err); /* leaves the scan's error */
                snprintf(want, sizeof want, "(in the frame at archive offset %zu)", start[k]);
                if (!strstr(err.msg, want))
                        fail_msg("scan, flip at %zu in frame %zu: %s", at, k, err.msg);
                /* a reader from the start, before any scan */
                reader_error(bad, &err);
                if (!strstr(err.msg, want))
                        fail_msg("reader, flip at %zu in frame %zu: %s", at, k, err.msg);
        }
        free(p);
}

/* A damaged gzip member is named by where it starts, by the scan and by a
 * reader from the start: two members, a flip in the deflate data of each,
 * and each cut short. */
static void test_gzip_member_named(void **state)
{
        (void)state;
        char path[512], bad[600], want[96];
        size_t half = din_n / 2, n1, n2;
        tu_path(path, sizeof path, "m1.gz");
        tu_write_records(path, TM_CONT_GZIP, din_data, half, 0, 3, NULL);
        uint8_t *m1 = tu_slurp(path, &n1);
        tu_write_records(path, TM_CONT_GZIP, din_data + half, din_n - half, 0, 4, NULL);
        uint8_t *m2 = tu_slurp(path, &n2);
        uint8_t *p = malloc(n1 + n2);
        assert_non_null(p);
        memcpy(p, m1, n1);
        memcpy(p + n1, m2, n2);
        const size_t start[2] = {0, n1}, len[2] = {n1, n2};
        for (int k = 0; k < 4; k++) {
                int m = k & 1, cut = k >> 1;
                size_t at = start[m] + len[m] / 2, size = cut ? at : n1 + n2;
                if (!cut)
                        p[at] ^= 0x10;
                snprintf(bad, sizeof bad, "%s.%d", path, k);
                tu_spit(bad, p, size);
                if (!cut)
                        p[at] ^= 0x10;
                struct tm_err err;
                expect_broken(bad, &err); /* leaves the scan's error */
                snprintf(want, sizeof want, "(in the member at archive offset %zu)", start[m]);
                if (!strstr(err.msg, want))
                        fail_msg("scan, %s at %zu in member %d: %s", cut ? "cut" : "flip", at, m,
                                 err.msg);
                reader_error(bad, &err);
                if (!strstr(err.msg, want))
                        fail_msg("reader, %s at %zu in member %d: %s", cut ? "cut" : "flip", at, m,
                                 err.msg);
        }
        free(p);
        free(m1);
        free(m2);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_truncated),
            cmocka_unit_test(test_flipped),
            cmocka_unit_test(test_gzip_trailing_garbage),
            cmocka_unit_test(test_hostile_seek_table),
            cmocka_unit_test(test_absurd_frame_table),
            cmocka_unit_test(test_zstd_window_too_large),
            cmocka_unit_test(test_bad_index),
            cmocka_unit_test(test_bad_writer_args),
            cmocka_unit_test(test_random_damage),
            cmocka_unit_test(test_zstd_frame_named),
            cmocka_unit_test(test_gzip_member_named),
        };
        return cmocka_run_group_tests(tests, setup_data, teardown_data);
}
