/* Only verified bytes are served (docs/damage.md, docs/reliability.md):
 * a bit flipped inside a zstd frame of pack's default size (1 MiB, eight
 * 128 KiB blocks, so blocks decode before the frame's checksum is met) or
 * inside a gzip member gives the intact trace's bytes up to the start of
 * that frame or member, then EIO, at every offset; frames moved, dropped
 * or repeated in a packed archive, with or without their seek-table
 * entries, fail the index pass naming the frame. Each view is compared
 * byte for byte with the same view of the intact archive. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tmpdir_test.h"
#include "view_test.h"
#include "views/view.h"

#define NREFS 250000 /* about 4.5 MB of din text: five 1 MiB frames */
#define FLIPS 40

static struct tm_ref *refs;
static struct vt_buf raw, ascii; /* the intact trace */

static struct tm_trace *open_trace(const char *path)
{
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t = NULL;
        struct tm_err err = {0};
        if (tm_trace_open(path, &o, &t, &err) != 0)
                return NULL; /* a flip can make the file unrecognisable */
        return t;
}

/* Read view whole from 0: the bytes before the first error, and that
 * error (0 at a clean end). */
static ssize_t read_all(struct tm_trace *t, const char *view, struct vt_buf *out)
{
        struct tm_err err = {0};
        struct tm_vfile *f;
        out->len = 0;
        if (tm_vfile_open(t, view, &f, &err) != 0)
                return -EIO;
        uint8_t buf[65536];
        ssize_t r;
        while ((r = tm_vfile_pread(f, buf, sizeof buf, out->len, &err)) > 0)
                vt_put(out, buf, (size_t)r);
        tm_vfile_close(f);
        return r;
}

/* Damage was seen where it could be: count it. Wrong bytes fail. */
struct tally {
        unsigned variants, detected;
};

/* One damaged archive: ascii read whole and at offsets every 61 KiB,
 * every byte returned equal to the intact trace's, and a whole read that
 * ends cleanly equal to all of it. */
static void check_variant(const char *path, struct tally *ty)
{
        ty->variants++;
        struct tm_trace *t = open_trace(path);
        if (!t) {
                ty->detected++;
                return;
        }
        struct tm_err err = {0};
        int ix = tm_trace_index(t, NULL, NULL, &err);
        struct vt_buf got = {0};
        ssize_t r = read_all(t, "ascii", &got);
        if (got.len > ascii.len || (got.len && memcmp(got.p, ascii.p, got.len) != 0))
                fail_msg("%s: the %zu bytes served before the end are not the intact trace's",
                         path, got.len);
        if (r == 0 && got.len != ascii.len)
                fail_msg("%s: ascii ends cleanly after %zu of %zu bytes", path, got.len,
                         ascii.len);
        if (r == 0 && ix != 0)
                fail_msg("%s: the index pass failed (%s) but ascii read whole", path, err.msg);
        ty->detected += r != 0;
        struct tm_vfile *f;
        if (tm_vfile_open(t, "ascii", &f, &err) == 0) {
                uint8_t buf[4096];
                for (uint64_t off = 0; off < ascii.len; off += 61 << 10) {
                        ssize_t k = tm_vfile_pread(f, buf, sizeof buf, off, &err);
                        if (k > 0 && memcmp(buf, ascii.p + off, (size_t)k) != 0)
                                fail_msg("%s: wrong bytes at ascii offset %llu", path,
                                         (unsigned long long)off);
                        if (k <= 0 && off < got.len)
                                fail_msg("%s: ascii offset %llu failed inside the prefix", path,
                                         (unsigned long long)off);
                }
                tm_vfile_close(f);
        }
        free(got.p);
        tm_trace_close(t);
}

/* FLIPS single-bit flips spread over [0, end) of the archive at path. */
static void flip_all(const char *path, size_t end, struct tally *ty)
{
        struct vt_buf arc = {0};
        vt_slurp(path, &arc);
        char bad[600];
        snprintf(bad, sizeof bad, "%s.bad", path);
        for (unsigned i = 0; i < FLIPS; i++) {
                size_t at = 16 + (end - 32) * i / (FLIPS - 1);
                uint8_t bit = (uint8_t)(1u << (i * 3 % 8));
                arc.p[at] ^= bit;
                vt_spit(bad, arc.p, arc.len);
                arc.p[at] ^= bit;
                check_variant(bad, ty);
        }
        free(arc.p);
}

static int setup(void **state)
{
        if (tmp_setup(state) != 0)
                return -1;
        const struct tm_rcodec *din = tm_rcodec_by_name("din");
        refs = calloc(NREFS, sizeof *refs);
        vt_gen(2511, refs, NREFS, aref_types(din), 0);
        char path[400];
        snprintf(path, sizeof path, "%s/intact.din", tmpdir);
        vt_make(path, din, TM_CONT_PLAIN, 0, refs, NREFS, &raw);
        struct tm_trace *t = open_trace(path);
        if (!t || read_all(t, "ascii", &ascii) != 0)
                return -1;
        tm_trace_close(t);
        return 0;
}

static int teardown(void **state)
{
        free(refs);
        free(raw.p);
        free(ascii.p);
        return tmp_teardown(state);
}

/* The archive offset where a seekable archive's seek table starts. */
static size_t table_at(const struct vt_buf *a)
{
        uint32_t n = (uint32_t)a->p[a->len - 9] | (uint32_t)a->p[a->len - 8] << 8 |
                     (uint32_t)a->p[a->len - 7] << 16 | (uint32_t)a->p[a->len - 6] << 24;
        unsigned esz = a->p[a->len - 5] & 0x80 ? 12 : 8;
        return a->len - 9 - (size_t)n * esz - 8;
}

static void test_zstd_flips(void **state)
{
        (void)state;
        char path[400];
        snprintf(path, sizeof path, "%s/t.din.zst", tmpdir);
        struct vt_buf r2 = {0}, arc = {0};
        vt_make(path, tm_rcodec_by_name("din"), TM_CONT_ZSTD, 0, refs, NREFS, &r2);
        free(r2.p);
        vt_slurp(path, &arc);
        struct tally ty = {0};
        flip_all(path, arc.len, &ty); /* the seek table's bytes too */
        print_message("zstd, 1 MiB frames: %u of %u flips detected, no wrong byte\n", ty.detected,
                      ty.variants);
        /* zstd's checksums catch a flip anywhere in a frame's data */
        assert_true(ty.detected * 10 >= ty.variants * 9);
        (void)table_at;
        free(arc.p);
}

/* Two gzip members, cut at a line's end near the middle. */
static void test_gzip_flips(void **state)
{
        (void)state;
        size_t half = raw.len / 2;
        while (raw.p[half - 1] != '\n')
                half++;
        struct vt_buf two = {0}, m = {0};
        char path[400];
        for (int k = 0; k < 2; k++) {
                snprintf(path, sizeof path, "%s/m%d.gz", tmpdir, k);
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                struct tm_cwriter *w;
                struct tm_err err = {0};
                struct tm_cwriter_opts wo = {.level = 6};
                assert_int_equal(tm_cwriter_open(fd, path, TM_CONT_GZIP, &wo, &w, &err), 0);
                const uint8_t *p = raw.p + (k ? half : 0);
                size_t n = k ? raw.len - half : half;
                assert_int_equal(tm_cwriter_write(w, p, n, &err), 0);
                assert_int_equal(tm_cwriter_close(w, &err), 0);
                close(fd);
                vt_slurp(path, &m);
                vt_put(&two, m.p, m.len);
        }
        snprintf(path, sizeof path, "%s/t.din.gz", tmpdir);
        vt_spit(path, two.p, two.len);
        struct tally ty = {0};
        flip_all(path, two.len, &ty);
        print_message("gzip, 2 members: %u of %u flips detected, no wrong byte\n", ty.detected,
                      ty.variants);
        assert_true(ty.detected * 10 >= ty.variants * 9);
        free(two.p);
        free(m.p);
}

/* ---- frames moved, dropped, repeated ---- */

static uint32_t le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* A packed archive taken apart: its frames (data frames and the order
 * record) and their seek-table entries (12 bytes each). */
struct parts {
        struct vt_buf arc;
        size_t nf, off[64], len[64];
        uint8_t ent[64][12];
};

static void take_apart(const char *path, struct parts *p)
{
        vt_slurp(path, &p->arc);
        size_t t = table_at(&p->arc);
        p->nf = le32(p->arc.p + p->arc.len - 9);
        assert_true(p->nf >= 4 && p->nf <= 64 && (p->arc.p[p->arc.len - 5] & 0x80));
        size_t off = 0;
        for (size_t i = 0; i < p->nf; i++) {
                memcpy(p->ent[i], p->arc.p + t + 8 + 12 * i, 12);
                p->off[i] = off;
                p->len[i] = le32(p->ent[i]);
                off += p->len[i];
        }
        assert_int_equal(off, t);
}

/* Write frames order[0..n) with their entries (or, with keep_table, the
 * original table whatever the frames) as path. */
static void put_together(const struct parts *p, const size_t *order, size_t n, int keep_table,
                         const char *path)
{
        struct vt_buf out = {0};
        for (size_t i = 0; i < n; i++)
                vt_put(&out, p->arc.p + p->off[order[i]], p->len[order[i]]);
        if (keep_table) {
                size_t t = table_at(&p->arc);
                vt_put(&out, p->arc.p + t, p->arc.len - t);
        } else {
                uint8_t h[8];
                put32(h, 0x184D2A5E);
                put32(h + 4, (uint32_t)(12 * n + 9));
                vt_put(&out, h, 8);
                for (size_t i = 0; i < n; i++)
                        vt_put(&out, p->ent[order[i]], 12);
                uint8_t foot[9];
                put32(foot, (uint32_t)n);
                foot[4] = 0x80;
                put32(foot + 5, 0x8F92EAB1);
                vt_put(&out, foot, 9);
        }
        vt_spit(path, out.p, out.len);
        free(out.p);
}

/* path's index pass fails naming the seek table or the order record, and
 * no wrong byte is served. */
static void expect_order_damage(const char *path, const char *what)
{
        struct tm_trace *t = open_trace(path);
        assert_non_null(t);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        if (!strstr(err.msg, "seek table") && !strstr(err.msg, "order record"))
                fail_msg("%s (%s): %s", path, what, err.msg);
        if (!strstr(err.msg, "archive offset "))
                fail_msg("%s (%s): no offset in %s", path, what, err.msg);
        tm_trace_close(t);
        struct tally ty = {0};
        check_variant(path, &ty);
        assert_int_equal(ty.detected, 1);
}

static void test_order(void **state)
{
        (void)state;
        char path[400], bad[450];
        snprintf(path, sizeof path, "%s/o.din.zst", tmpdir);
        struct vt_buf r2 = {0};
        vt_make(path, tm_rcodec_by_name("din"), TM_CONT_ZSTD, 0, refs, NREFS, &r2);
        free(r2.p);
        struct parts p = {0};
        take_apart(path, &p);
        size_t n = p.nf, ord[65];
        for (size_t i = 0; i < n; i++)
                ord[i] = i;
        /* the archive put back together as it was reads whole */
        snprintf(bad, sizeof bad, "%s.same", path);
        put_together(&p, ord, n, 0, bad);
        struct tally ty = {0};
        check_variant(bad, &ty);
        assert_int_equal(ty.detected, 0);

        /* frames 1 and 2 swapped: the table as it was, then the table's
         * entries swapped with them (a table rebuilt from the frames) */
        ord[1] = 2;
        ord[2] = 1;
        for (int keep = 1; keep >= 0; keep--) {
                snprintf(bad, sizeof bad, "%s.swap%d", path, keep);
                put_together(&p, ord, n, keep, bad);
                expect_order_damage(bad, keep ? "swapped, table kept" : "swapped with entries");
        }
        ord[1] = 1;
        ord[2] = 2;
        /* frame 1 dropped with its entry */
        size_t drop[64];
        for (size_t i = 0, j = 0; i < n; i++)
                if (i != 1)
                        drop[j++] = i;
        snprintf(bad, sizeof bad, "%s.drop", path);
        put_together(&p, drop, n - 1, 0, bad);
        expect_order_damage(bad, "dropped with its entry");
        /* frame 1 repeated with its entry */
        size_t rep[65] = {0, 1, 1};
        for (size_t i = 2; i < n; i++)
                rep[i + 1] = i;
        snprintf(bad, sizeof bad, "%s.rep", path);
        put_together(&p, rep, n + 1, 0, bad);
        expect_order_damage(bad, "repeated with its entry");
        free(p.arc.p);
}

/* Bytes that rot after the index pass (a disk or a server going bad: the
 * archive's size and time stay as they were, so the index stands): a
 * reader decodes a frame whole and serves none of it before its checksum
 * passed. Flips in each data frame, read through the trace indexed while
 * intact: the intact bytes, then EIO. */
static void test_rot_after_index(void **state)
{
        (void)state;
        char path[400];
        snprintf(path, sizeof path, "%s/rot.din.zst", tmpdir);
        struct vt_buf r2 = {0}, arc = {0};
        vt_make(path, tm_rcodec_by_name("din"), TM_CONT_ZSTD, 0, refs, NREFS, &r2);
        free(r2.p);
        vt_slurp(path, &arc);
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        size_t end = table_at(&arc) - 40; /* the data frames, not the order record */
        for (unsigned i = 1; i < 8; i++) {
                vt_spit(path, arc.p, arc.len);
                struct timespec ts[2] = {sb.st_atim, sb.st_mtim};
                assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
                struct tm_trace *t = open_trace(path);
                assert_non_null(t);
                struct tm_err err = {0};
                assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
                /* the rot: one byte, in place, the time put back */
                size_t at = end * i / 8;
                uint8_t b = arc.p[at] ^ 0x08;
                int fd = open(path, O_WRONLY);
                assert_int_equal(pwrite(fd, &b, 1, (off_t)at), 1);
                close(fd);
                assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
                struct vt_buf got = {0};
                ssize_t r = read_all(t, "ascii", &got);
                if (got.len > ascii.len || (got.len && memcmp(got.p, ascii.p, got.len) != 0))
                        fail_msg("rot at %zu: %zu bytes served, not the intact trace's", at,
                                 got.len);
                if (r != -EIO)
                        fail_msg("rot at %zu: read ended with %zd after %zu bytes", at, r,
                                 got.len);
                free(got.p);
                tm_trace_close(t);
        }
        free(arc.p);
}

int main(void)
{
        setenv("TM_READ_THREADS", "2", 1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_zstd_flips),
            cmocka_unit_test(test_gzip_flips),
            cmocka_unit_test(test_order),
            cmocka_unit_test(test_rot_after_index),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
