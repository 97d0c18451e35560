/* Helpers shared by the view and index tests: make trace archives in a
 * temporary directory and the expected bytes of every view, produced
 * independently of views/ (codec decode + snprintf). Header-only. */
#ifndef TM_VIEW_TEST_H
#define TM_VIEW_TEST_H

#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../fuzz/fz_side.h"
#include "codecs/address/arec.h"
#include "codecs/containers/container.h"
#include "support/aref.h"
#include "support/tmtest.h"
#include "views/tm_binary.h"
#include "views/view.h"

struct vt_buf {
        uint8_t *p;
        size_t len, cap;
};

static inline void vt_put(struct vt_buf *b, const void *src, size_t n)
{
        if (b->len + n > b->cap) {
                b->cap = (b->len + n) * 2 + 4096;
                b->p = realloc(b->p, b->cap);
                assert_non_null(b->p);
        }
        if (n)
                memcpy(b->p + b->len, src, n);
        b->len += n;
}

/* Write n bytes of p as the file path (made or emptied). */
/* The whole of view of t into out, read from its start in 64 KiB
 * preads; returns the last read's result (0 at the end, or a negative
 * errno, err filled), or tm_vfile_open's error. */
static inline ssize_t vt_read_view(struct tm_trace *t, const char *view, struct vt_buf *out,
                                   struct tm_err *err)
{
        struct tm_vfile *f;
        out->len = 0;
        int rc = tm_vfile_open(t, view, &f, err);
        if (rc < 0)
                return rc;
        uint8_t buf[65536];
        ssize_t r;
        while ((r = tm_vfile_pread(f, buf, sizeof buf, out->len, err)) > 0)
                vt_put(out, buf, (size_t)r);
        tm_vfile_close(f);
        return r;
}

static inline void vt_spit(const char *path, const void *p, size_t n)
{
        assert_int_equal(tmt_spit(path, p, n), 0);
}

/* The whole file path into b (emptied first). */
static inline void vt_slurp(const char *path, struct vt_buf *b)
{
        size_t n = 0;
        uint8_t *p = tmt_slurp(path, &n);
        assert_non_null(p);
        b->len = 0;
        vt_put(b, p, n);
        free(p);
}

/* A stats or stats.json text without the side files it names
 * (fuzz/fz_side.h), so that it compares with a trace's that met none. */
static inline void vt_drop_side_files(uint8_t *p, size_t *len)
{
        fz_drop_side_lines(p, len);
}

static inline void vt_drop_side_files_json(uint8_t *p, size_t *len)
{
        fz_drop_side_json(p, len);
}

static uint64_t vt_rng = 1;

static inline uint64_t vt_rand(void)
{
        vt_rng ^= vt_rng << 13;
        vt_rng ^= vt_rng >> 7;
        vt_rng ^= vt_rng << 17;
        return vt_rng;
}

/* A program-like trace: sequential fetches, jumps, reads and writes near
 * two zones, and (when the codec has them) other types. wide adds 64-bit
 * addresses. */
static inline void vt_gen(uint64_t seed, struct tm_ref *refs, size_t n, unsigned ntypes, int wide)
{
        vt_rng = seed * 0x9e3779b97f4a7c15ull + 1;
        uint64_t pc = 0x400000, zone[2] = {0x10000000, 0x7fff0000};
        for (size_t i = 0; i < n; i++) {
                unsigned r = (unsigned)(vt_rand() % 100);
                if (r < 60) {
                        pc += 4;
                        refs[i] = (struct tm_ref){pc, TM_IFETCH};
                } else if (r < 68) {
                        pc = 0x400000 + (vt_rand() % 65536) * 4;
                        refs[i] = (struct tm_ref){pc, TM_IFETCH};
                } else if (r < 96) {
                        unsigned z = (unsigned)(vt_rand() & 1);
                        zone[z] += (vt_rand() % 33) * 4 - 64;
                        refs[i] = (struct tm_ref){zone[z] & 0xffffffff, (unsigned)(vt_rand() & 1)};
                } else if (r < 98 && ntypes > 3) {
                        refs[i] = (struct tm_ref){vt_rand() & 0xffffff,
                                                  3 + (unsigned)(vt_rand() % (ntypes - 3))};
                } else if (wide) {
                        refs[i] = (struct tm_ref){vt_rand() >> (vt_rand() % 64), TM_READ};
                } else {
                        refs[i] = (struct tm_ref){(r & 1) ? 0 : 0xffffffff, TM_WRITE};
                }
        }
}

/* Encode refs with address row c into raw (header included) and write
 * them as an archive of kind at path, a container boundary after each
 * reference's bytes; zstd frames of about frame bytes. sizes: NULL, or
 * the access size of each reference, for a row that writes them
 * (lackey). */
static inline void vt_make_sized(const char *path, const struct tm_rcodec *c,
                                 enum tm_cont_kind kind, size_t frame, const struct tm_ref *refs,
                                 const uint32_t *sizes, size_t n, struct vt_buf *raw)
{
        struct tm_err err = {0};
        struct aref_enc e;
        struct tm_enc_opts o = {.addr_bits = 64, .unit = 4};
        if (strcmp(c->name, "din") != 0)
                o.addr_bits = 32;
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        struct tm_cwriter_opts wo = {.level = 3, .frame_size = frame};
        struct tm_cwriter *w;
        assert_int_equal(tm_cwriter_open(fd, path, kind, &wo, &w, &err), 0);
        raw->len = 0;
        assert_int_equal(aref_enc_open(&e, c, &o, &err), 0);
        vt_put(raw, e.buf, e.len);
        assert_int_equal(tm_cwriter_write(w, e.buf, e.len, &err), 0);
        for (size_t i = 0; i <= n; i++) {
                int k = i == n ? aref_finish(&e, &err)
                               : aref_put(&e, &refs[i], sizes ? sizes[i] : 0, i, &err);
                if (k < 0)
                        fail_msg("encode %zu: %s", i, err.msg);
                const uint8_t *out = e.buf + e.len - (size_t)k;
                vt_put(raw, out, (size_t)k);
                assert_int_equal(tm_cwriter_write(w, out, (size_t)k, &err), 0);
                assert_int_equal(tm_cwriter_boundary(w, &err), 0);
        }
        aref_enc_free(&e);
        assert_int_equal(tm_cwriter_close(w, &err), 0);
        close(fd);
}

static inline void vt_make(const char *path, const struct tm_rcodec *c, enum tm_cont_kind kind,
                           size_t frame, const struct tm_ref *refs, size_t n, struct vt_buf *raw)
{
        vt_make_sized(path, c, kind, frame, refs, NULL, n, raw);
}

/* Decode raw[0..len) with address row c: all references, malloc'd.
 * sizes_out: NULL, or where the access sizes go (malloc'd; 0 for a row
 * without sizes). */
static inline struct tm_ref *vt_decode_all_sized(const struct tm_rcodec *c, const uint8_t *raw,
                                                 size_t len, size_t *n_out, uint32_t **sizes_out)
{
        struct tm_err err = {0};
        struct aref_dec d;
        int h = aref_open(&d, c, raw, len, &err);
        assert_true(h >= 0);
        size_t pos = (size_t)h, n = 0, cap = 1024;
        struct tm_ref *refs = malloc(cap * sizeof *refs);
        uint32_t *sizes = sizes_out ? malloc(cap * sizeof *sizes) : NULL;
        for (;;) {
                if (n + 512 > cap) {
                        cap *= 2;
                        refs = realloc(refs, cap * sizeof *refs);
                        if (sizes_out)
                                sizes = realloc(sizes, cap * sizeof *sizes);
                }
                assert_true(refs && (sizes || !sizes_out));
                size_t used = 0;
                ssize_t r = aref_decode_sized(&d, raw + pos, len - pos, 1, pos, &used, refs + n,
                                              sizes_out ? sizes + n : NULL, 512, &err);
                if (r < 0)
                        fail_msg("decode: %s", err.msg);
                n += (size_t)r;
                pos += used;
                if (r == 0 && used == 0)
                        break;
        }
        assert_int_equal(pos, len);
        aref_close(&d);
        *n_out = n;
        if (sizes_out)
                *sizes_out = sizes;
        return refs;
}

static inline struct tm_ref *vt_decode_all(const struct tm_rcodec *c, const uint8_t *raw,
                                           size_t len, size_t *n_out)
{
        return vt_decode_all_sized(c, raw, len, n_out, NULL);
}

/* vt_decode_all_sized by its other name. */
static inline struct tm_ref *vt_decode_sized(const struct tm_rcodec *c, const uint8_t *raw,
                                             size_t len, size_t *n_out, uint32_t **sizes)
{
        return vt_decode_all_sized(c, raw, len, n_out, sizes);
}

/* The expected bytes of a view (not stats, nor fields/size: vt_expect_sizes)
 * from the references. fields/type and fields/address: the field, one a
 * line (the type in decimal, the address in hex without 0x). */
static inline void vt_expect(const char *view, const struct tm_ref *refs, size_t n,
                             const struct vt_buf *raw, struct vt_buf *out)
{
        out->len = 0;
        if (strcmp(view, "raw") == 0) {
                vt_put(out, raw->p, raw->len);
                return;
        }
        int field = 0; /* 1: fields/type, 2: fields/address */
        if (strcmp(view, "fields/type") == 0)
                field = 1;
        else if (strcmp(view, "fields/address") == 0)
                field = 2;
        for (size_t i = 0; field && i < n; i++) {
                char line[32];
                int k = field == 1 ? snprintf(line, sizeof line, "%u\n", refs[i].type)
                                   : snprintf(line, sizeof line, "%" PRIx64 "\n", refs[i].addr);
                vt_put(out, line, (size_t)k);
        }
        if (field)
                return;
        int binary = strcmp(view, "binary") == 0;
        int stream = -1;
        if (strncmp(view, "streams/", 8) == 0)
                for (unsigned t = 0; t < TM_NTYPES; t++)
                        if (strcmp(view + 8, tm_type_name(t)) == 0)
                                stream = (int)t;
        for (size_t i = 0; i < n; i++) {
                if (binary) {
                        struct tm_binary_ref b = {.addr = refs[i].addr,
                                                  .type = (uint8_t)refs[i].type};
                        vt_put(out, &b, sizeof b);
                        continue;
                }
                if (stream >= 0 && refs[i].type != (unsigned)stream)
                        continue;
                char line[64];
                int k = snprintf(line, sizeof line, "%u %" PRIx64 "\n", refs[i].type, refs[i].addr);
                vt_put(out, line, (size_t)k);
        }
}

/* The expected fields/size view: the access sizes in decimal, one a line. */
static inline void vt_expect_sizes(const uint32_t *sizes, size_t n, struct vt_buf *out)
{
        out->len = 0;
        for (size_t i = 0; i < n; i++) {
                char line[16];
                int k = snprintf(line, sizeof line, "%u\n", sizes[i]);
                vt_put(out, line, (size_t)k);
        }
}

#endif
