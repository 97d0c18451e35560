/* Helpers shared by unit_container.c and unit_container_bad.c: test data,
 * archives made with zlib and libzstd directly (independently of the
 * container writers), and an independent reading of the zstd seek table. */
#ifndef UNIT_CONTAINER_UTIL_H
#define UNIT_CONTAINER_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "codecs/containers/container.h"
#include "support/tmtest.h"

#define TU_FN static __attribute__((unused))

TU_FN uint64_t tu_rand(uint64_t *s)
{
        return tmt_rand(s);
}

#define tu_dir tmt_dir

TU_FN void tu_tmpdir_init(void)
{
        if (tmt_tmpdir_make("tmcont", tmt_dir, sizeof tmt_dir) != 0)
                abort();
}

TU_FN void tu_tmpdir_cleanup(void)
{
        if (tmt_tmpdir_remove(tmt_dir) != 0)
                fprintf(stderr, "cannot remove %s\n", tmt_dir);
}

TU_FN void tu_path(char *out, size_t n, const char *name)
{
        snprintf(out, n, "%s/%s", tu_dir, name);
}

TU_FN int tu_stop_sink(void *arg, const uint8_t *buf, size_t n)
{
        (void)arg;
        (void)buf;
        (void)n;
        return 42;
}

TU_FN uint8_t *tu_gen_random(size_t n, uint64_t seed)
{
        uint8_t *p = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t)(tu_rand(&seed) >> 56);
        return p;
}

/* About target bytes of dinero text ("<type> <hex address>\n") shaped like
 * a program: sequential instruction fetches with jumps, data references in
 * a stack and a few arrays with strides. */
TU_FN uint8_t *tu_gen_din(size_t target, uint64_t seed, size_t *n)
{
        uint8_t *p = malloc(target + 64);
        size_t len = 0;
        uint64_t pc = 0x400000, sp = 0x7ffde000,
                 arr[4] = {0x601000, 0x7f3a00000, 0x1c00000, 0x2000000};
        while (len < target) {
                uint64_t r = tu_rand(&seed);
                unsigned type;
                uint64_t addr;
                if (r % 3 != 0) {
                        type = 2;
                        pc += 4;
                        if (r % 97 == 0)
                                pc = 0x400000 + (r >> 20) % 0x40000 * 4;
                        addr = pc;
                } else {
                        type = (r >> 8) % 4 == 0;
                        unsigned a = (unsigned)(r >> 16) % 5;
                        if (a == 4) {
                                addr = sp - (r >> 24) % 64 * 8;
                        } else {
                                arr[a] += 8 * (1 + a);
                                addr = arr[a];
                        }
                }
                char line[40];
                int k = snprintf(line, sizeof line, "%u %llx\n", type, (unsigned long long)addr);
                if (len + (size_t)k > target)
                        break;
                memcpy(p + len, line, (size_t)k);
                len += (size_t)k;
        }
        *n = len;
        return p;
}

/* The test data: din_n bytes of din text, rnd_n random bytes. */
static uint8_t *din_data, *rnd_data;
static size_t din_n, rnd_n;

TU_FN void tu_data_init(size_t din_target, size_t rnd_size, uint64_t seed)
{
        tu_tmpdir_init();
        din_data = tu_gen_din(din_target, seed, &din_n);
        rnd_n = rnd_size;
        rnd_data = tu_gen_random(rnd_n, seed + 1);
}

TU_FN void tu_data_free(void)
{
        free(din_data);
        free(rnd_data);
        tu_tmpdir_cleanup();
}

/* Frame raw/compressed sizes of a zstd seekable archive. */
struct tu_frames {
        uint64_t *raw, *comp;
        size_t n;
        int order; /* tu_read_seek_table: the table ends with an order record */
};

TU_FN void tu_frames_push(struct tu_frames *f, uint64_t raw, uint64_t comp)
{
        f->raw = realloc(f->raw, (f->n + 1) * sizeof *f->raw);
        f->comp = realloc(f->comp, (f->n + 1) * sizeof *f->comp);
        f->raw[f->n] = raw;
        f->comp[f->n] = comp;
        f->n++;
}

TU_FN void tu_frames_free(struct tu_frames *f)
{
        free(f->raw);
        free(f->comp);
        memset(f, 0, sizeof *f);
}

static int tu_open_out(const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
                abort();
        return fd;
}

static void tu_check(int ret, const struct tm_err *err)
{
        if (ret < 0) {
                fprintf(stderr, "writer: %s\n", err->msg);
                abort();
        }
}

/* Write data with a tm_cwriter as records of 1..400 bytes (seeded), a
 * boundary after each. Sets *out (if not NULL) to the zstd frame raw sizes
 * to expect. */
TU_FN void tu_write_records(const char *path, enum tm_cont_kind kind, const uint8_t *data, size_t n,
                            size_t frame_size, uint64_t seed, struct tu_frames *out)
{
        struct tm_err err = {0};
        struct tm_cwriter *w;
        struct tm_cwriter_opts o = {.level = 0, .frame_size = frame_size};
        int fd = tu_open_out(path);
        tu_check(tm_cwriter_open(fd, path, kind, &o, &w, &err), &err);
        struct tu_frames fr = {0};
        size_t fs = frame_size ? frame_size : (4u << 20), acc = 0;
        for (size_t pos = 0; pos < n;) {
                size_t rec = 1 + (size_t)(tu_rand(&seed) % 400);
                if (rec > n - pos)
                        rec = n - pos;
                tu_check(tm_cwriter_write(w, data + pos, rec, &err), &err);
                tu_check(tm_cwriter_boundary(w, &err), &err);
                pos += rec;
                acc += rec;
                if (acc >= fs) {
                        tu_frames_push(&fr, acc, 0);
                        acc = 0;
                }
        }
        if (acc)
                tu_frames_push(&fr, acc, 0);
        tu_check(tm_cwriter_close(w, &err), &err);
        close(fd);
        if (out)
                *out = fr;
        else
                tu_frames_free(&fr);
}

TU_FN void tu_write_no_boundary(const char *path, enum tm_cont_kind kind, const uint8_t *data,
                                size_t n, size_t frame_size)
{
        struct tm_err err = {0};
        struct tm_cwriter *w;
        struct tm_cwriter_opts o = {.level = 1, .frame_size = frame_size};
        int fd = tu_open_out(path);
        tu_check(tm_cwriter_open(fd, path, kind, &o, &w, &err), &err);
        for (size_t pos = 0; pos < n; pos += 65536)
                tu_check(tm_cwriter_write(w, data + pos, n - pos < 65536 ? n - pos : 65536, &err),
                         &err);
        tu_check(tm_cwriter_close(w, &err), &err);
        close(fd);
}

TU_FN uint8_t *tu_slurp(const char *path, size_t *n)
{
        FILE *f = fopen(path, "rb");
        if (!f)
                abort();
        fseek(f, 0, SEEK_END);
        long len = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *p = malloc((size_t)len + 1);
        if (fread(p, 1, (size_t)len, f) != (size_t)len)
                abort();
        fclose(f);
        *n = (size_t)len;
        return p;
}

TU_FN void tu_spit(const char *path, const uint8_t *p, size_t n)
{
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(p, 1, n, f) != n)
                abort();
        fclose(f);
}

/* Run a command-line decompressor, if installed, and compare with want. */
static void tu_cli_check(const char *tool, const char *path, const uint8_t *want, size_t n)
{
        char cmd[1200], out[600];
        snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
        if (system(cmd) != 0)
                return;
        snprintf(out, sizeof out, "%s.cli-out", path);
        snprintf(cmd, sizeof cmd, "%s -dc '%s' > '%s'", tool, path, out);
        if (system(cmd) != 0) {
                fprintf(stderr, "%s -dc %s failed\n", tool, path);
                abort();
        }
        size_t m;
        uint8_t *p = tu_slurp(out, &m);
        if (m != n || memcmp(p, want, n) != 0) {
                fprintf(stderr, "%s -dc %s differs\n", tool, path);
                abort();
        }
        free(p);
        unlink(out);
}

/* Decode a whole archive without the container readers: zlib inflate over
 * all members, ZSTD_decompress over all frames (which requires content
 * sizes in every frame). Also checks the gzip/zstd command-line tools. */
TU_FN uint8_t *tu_decode_independent(const char *path, enum tm_cont_kind kind, size_t *m)
{
        size_t n;
        uint8_t *src = tu_slurp(path, &n);
        uint8_t *out = NULL;
        if (kind == TM_CONT_PLAIN) {
                *m = n;
                return src;
        }
        if (kind == TM_CONT_ZSTD) {
                unsigned long long size = ZSTD_findDecompressedSize(src, n);
                if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
                        abort();
                out = malloc(size + 1);
                size_t r = ZSTD_decompress(out, size + 1, src, n);
                if (ZSTD_isError(r) || r != size)
                        abort();
                *m = r;
                tu_cli_check("zstd", path, out, r);
        } else {
                size_t cap = 1 << 20, len = 0;
                out = malloc(cap);
                z_stream zs = {0};
                inflateInit2(&zs, 31);
                zs.next_in = src;
                zs.avail_in = (uInt)n;
                for (;;) {
                        if (cap - len < (1 << 16))
                                out = realloc(out, cap *= 2);
                        zs.next_out = out + len;
                        zs.avail_out = (uInt)(cap - len);
                        int ret = inflate(&zs, Z_NO_FLUSH);
                        len = cap - zs.avail_out;
                        if (ret == Z_STREAM_END) {
                                if (zs.avail_in == 0)
                                        break;
                                inflateReset(&zs);
                        } else if (ret != Z_OK) {
                                abort();
                        }
                }
                inflateEnd(&zs);
                *m = len;
                tu_cli_check("gzip", path, out, len);
        }
        free(src);
        return out;
}

/* gzip members for data[cuts[i], cuts[i+1]), levels varying, member 1 with
 * a file name and comment in its header. */
TU_FN void tu_write_gzip_members(const char *path, const uint8_t *data, const size_t *cuts,
                                 int ncuts)
{
        FILE *f = fopen(path, "wb");
        size_t cap = 1 << 20;
        uint8_t *out = malloc(cap);
        for (int i = 0; i + 1 < ncuts; i++) {
                z_stream zs = {0};
                static const int levels[] = {1, 6, 9, 3};
                deflateInit2(&zs, levels[i % 4], Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
                gz_header h = {0};
                if (i == 1) {
                        h.name = (Bytef *)"member-one.din";
                        h.comment = (Bytef *)"a comment";
                        h.hcrc = 1;
                        deflateSetHeader(&zs, &h);
                }
                zs.next_in = (Bytef *)(data + cuts[i]);
                zs.avail_in = (uInt)(cuts[i + 1] - cuts[i]);
                int ret;
                do {
                        zs.next_out = out;
                        zs.avail_out = (uInt)cap;
                        ret = deflate(&zs, Z_FINISH);
                        fwrite(out, 1, cap - zs.avail_out, f);
                } while (ret != Z_STREAM_END);
                deflateEnd(&zs);
        }
        free(out);
        fclose(f);
}

static void tu_write_skippable(FILE *f, uint32_t magic_low, size_t len)
{
        uint8_t h[8] = {(uint8_t)(0x50 | magic_low), 0x2a, 0x4d, 0x18, (uint8_t)len,
                        (uint8_t)(len >> 8),         0,    0};
        fwrite(h, 1, 8, f);
        for (size_t i = 0; i < len; i++)
                fputc((int)i, f);
}

/* zstd frames for data[cuts[i], cuts[i+1]) made with ZSTD_compress2 (odd
 * frames with checksums); skippable: also a skippable frame at the start
 * and one between frames 1 and 2. */
TU_FN void tu_write_zstd_frames(const char *path, const uint8_t *data, const size_t *cuts,
                                int ncuts, int skippable)
{
        FILE *f = fopen(path, "wb");
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        if (skippable)
                tu_write_skippable(f, 0, 20);
        for (int i = 0; i + 1 < ncuts; i++) {
                size_t n = cuts[i + 1] - cuts[i];
                size_t cap = ZSTD_compressBound(n);
                uint8_t *out = malloc(cap);
                ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);
                ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1 + i % 5);
                ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, i & 1);
                size_t r = ZSTD_compress2(cc, out, cap, data + cuts[i], n);
                if (ZSTD_isError(r))
                        abort();
                fwrite(out, 1, r, f);
                free(out);
                if (skippable && i == 1)
                        tu_write_skippable(f, 7, 300);
        }
        ZSTD_freeCCtx(cc);
        fclose(f);
}

/* One frame streamed in pieces: no content size in its header. */
TU_FN void tu_write_zstd_stream(const char *path, const uint8_t *data, size_t n)
{
        FILE *f = fopen(path, "wb");
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
        size_t cap = ZSTD_CStreamOutSize();
        uint8_t *out = malloc(cap);
        for (size_t pos = 0;;) {
                size_t take = n - pos < 100000 ? n - pos : 100000;
                ZSTD_EndDirective e = pos + take == n ? ZSTD_e_end : ZSTD_e_continue;
                ZSTD_inBuffer in = {data + pos, take, 0};
                size_t left;
                do {
                        ZSTD_outBuffer ob = {out, cap, 0};
                        left = ZSTD_compressStream2(cc, &ob, &in, e);
                        if (ZSTD_isError(left))
                                abort();
                        fwrite(out, 1, ob.pos, f);
                } while (e == ZSTD_e_end ? left != 0 : in.pos < in.size);
                pos += take;
                if (e == ZSTD_e_end)
                        break;
        }
        free(out);
        ZSTD_freeCCtx(cc);
        fclose(f);
}

static uint32_t tu_le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read the seek table of a seekable archive, written from the format
 * document, independently of codecs/zstd_seek.c. */
TU_FN struct tu_frames tu_read_seek_table(const char *path)
{
        size_t n;
        uint8_t *p = tu_slurp(path, &n);
        struct tu_frames f = {0};
        if (n < 17 || tu_le32(p + n - 4) != 0x8F92EAB1u)
                abort();
        uint32_t nf = tu_le32(p + n - 9);
        unsigned esz = p[n - 5] & 0x80 ? 12 : 8;
        size_t start = n - 9 - (size_t)nf * esz - 8;
        if (tu_le32(p + start) != 0x184D2A5Eu || tu_le32(p + start + 4) != nf * esz + 9)
                abort();
        size_t off = 0;
        for (uint32_t i = 0; i < nf; i++) {
                uint32_t comp = tu_le32(p + start + 8 + i * esz);
                uint32_t raw = tu_le32(p + start + 8 + i * esz + 4);
                /* the order record (zstd_seek.h): a skippable frame, last */
                if (i == nf - 1 && raw == 0 && comp == 32 && tu_le32(p + off) == 0x184D2A5Du)
                        f.order = 1;
                else
                        tu_frames_push(&f, raw, comp);
                off += comp;
        }
        free(p);
        return f;
}

/* Each frame: content size in the header equal to the table's raw size, a
 * checksum, and a compressed size equal to the table's. */
TU_FN void tu_check_frame_headers(const char *path, const struct tu_frames *f)
{
        size_t n;
        uint8_t *p = tu_slurp(path, &n);
        size_t off = 0;
        for (size_t i = 0; i < f->n; i++) {
                ZSTD_frameHeader fh;
                if (ZSTD_getFrameHeader(&fh, p + off, n - off) != 0)
                        abort();
                if (fh.frameContentSize != f->raw[i] || !fh.checksumFlag)
                        abort();
                if (ZSTD_findFrameCompressedSize(p + off, n - off) != f->comp[i])
                        abort();
                off += f->comp[i];
        }
        free(p);
}

#endif
