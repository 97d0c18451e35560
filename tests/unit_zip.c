/* The zip container (codecs/containers/cont_zip.c, docs/formats/
 * containers.md "zip"). ZIP archives are written by hand here (local
 * headers, data descriptors, central directory, end records, ZIP64
 * records and extra fields; zlib's raw deflate for method 8) and, when the
 * zip program is installed, by it too. Checked: the raw bytes read in
 * order and at random offsets after the scan, through a restored seek
 * index, equal the member's; the member chosen ("trace", else the only
 * one) and the list of the others; a din and a PDATS II trace in "trace"
 * open as traces whose ascii is the plain file's; damage (a flipped byte,
 * a cut archive, a directory outside the file, a huge entry count, sizes
 * that lie) is -EIO naming an archive offset, and no byte of a member
 * that failed its CRC is served. The other members as files: their safe
 * paths (hostile names: "..", absolute, duplicates, too long, not UTF-8),
 * their bytes in order and at random offsets, a damaged one -EIO at open
 * naming the member and an archive offset while the rest still serve. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tmpdir_test.h"
#include "view_test.h"
#include "views/hmem.h"
#include "views/view.h"

#define NREFS 300000 /* about 3.6 MB of din text: several deflate points */
#define NSEEKS 40    /* each restarts at worst from the member's start */

static struct tm_ref *refs;
static struct vt_buf din_raw, p2_raw; /* din text, a PDATS II stream */

/* ---- writing ZIP archives by hand ---- */

struct zm {
        const char *name;
        const uint8_t *data;
        size_t n;
        unsigned method; /* 0 or 8 (anything else: stored bytes, that method) */
        int descriptor;  /* bit 3: sums after the data, zero in the local header */
        int zip64;       /* sizes and offset in a ZIP64 extra field */
        unsigned flags;  /* more general purpose bits (1: encrypted) */
};

static void put16(struct vt_buf *b, unsigned v)
{
        uint8_t p[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
        vt_put(b, p, 2);
}

static void put32(struct vt_buf *b, uint64_t v)
{
        put16(b, (unsigned)(v & 0xffff));
        put16(b, (unsigned)(v >> 16 & 0xffff));
}

static void put64(struct vt_buf *b, uint64_t v)
{
        put32(b, v & 0xffffffffu);
        put32(b, v >> 32);
}

static void deflate_raw(const uint8_t *p, size_t n, struct vt_buf *out)
{
        z_stream zs = {0};
        assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
        out->len = 0;
        size_t cap = deflateBound(&zs, n);
        vt_put(out, NULL, 0);
        out->p = realloc(out->p, cap);
        out->cap = cap;
        zs.next_in = (uint8_t *)p;
        zs.avail_in = (uInt)n;
        zs.next_out = out->p;
        zs.avail_out = (uInt)cap;
        assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
        out->len = cap - zs.avail_out;
        deflateEnd(&zs);
}

/* The archive of the members m[0..k); zip64_end: the ZIP64 end record and
 * locator, the end record's fields saturated. */
static void zip_build(struct vt_buf *a, const struct zm *m, size_t k, int zip64_end)
{
        uint64_t *lho = calloc(k, sizeof *lho), *csz = calloc(k, sizeof *csz);
        uint32_t *crc = calloc(k, sizeof *crc);
        struct vt_buf comp = {0};
        a->len = 0;
        for (size_t i = 0; i < k; i++) {
                crc[i] = (uint32_t)crc32(0, m[i].data, (uInt)m[i].n);
                const uint8_t *d = m[i].data;
                size_t dn = m[i].n;
                if (m[i].method == 8) {
                        deflate_raw(m[i].data, m[i].n, &comp);
                        d = comp.p;
                        dn = comp.len;
                }
                csz[i] = dn;
                lho[i] = a->len;
                unsigned nl = (unsigned)strlen(m[i].name);
                put32(a, 0x04034b50);
                put16(a, m[i].zip64 ? 45 : 20);
                put16(a, m[i].flags | (m[i].descriptor ? 8u : 0u));
                put16(a, m[i].method);
                put32(a, 0); /* time, date */
                int z = m[i].zip64;
                put32(a, m[i].descriptor ? 0 : crc[i]);
                put32(a, m[i].descriptor ? 0 : z ? 0xffffffffu : dn);
                put32(a, m[i].descriptor ? 0 : z ? 0xffffffffu : m[i].n);
                put16(a, nl);
                put16(a, z ? 20 : 0);
                vt_put(a, m[i].name, nl);
                if (z) {
                        put16(a, 1);
                        put16(a, 16);
                        put64(a, m[i].descriptor ? 0 : m[i].n);
                        put64(a, m[i].descriptor ? 0 : dn);
                }
                vt_put(a, d, dn);
                if (m[i].descriptor) {
                        put32(a, 0x08074b50);
                        put32(a, crc[i]);
                        if (z) {
                                put64(a, dn);
                                put64(a, m[i].n);
                        } else {
                                put32(a, dn);
                                put32(a, m[i].n);
                        }
                }
        }
        uint64_t cd = a->len;
        for (size_t i = 0; i < k; i++) {
                int z = m[i].zip64;
                unsigned nl = (unsigned)strlen(m[i].name);
                put32(a, 0x02014b50);
                put16(a, 0x031e); /* made by: Unix, 3.0 */
                put16(a, z ? 45 : 20);
                put16(a, m[i].flags | (m[i].descriptor ? 8u : 0u));
                put16(a, m[i].method);
                put32(a, 0);
                put32(a, crc[i]);
                put32(a, z ? 0xffffffffu : csz[i]);
                put32(a, z ? 0xffffffffu : m[i].n);
                put16(a, nl);
                put16(a, z ? 28 : 0);
                put16(a, 0); /* comment */
                put16(a, 0); /* disk */
                put16(a, 0); /* internal attributes */
                put32(a, 0); /* external attributes */
                put32(a, z ? 0xffffffffu : lho[i]);
                vt_put(a, m[i].name, nl);
                if (z) {
                        put16(a, 1);
                        put16(a, 24);
                        put64(a, m[i].n);
                        put64(a, csz[i]);
                        put64(a, lho[i]);
                }
        }
        uint64_t cdsize = a->len - cd;
        if (zip64_end) {
                uint64_t z64 = a->len;
                put32(a, 0x06064b50);
                put64(a, 44);
                put16(a, 45);
                put16(a, 45);
                put32(a, 0);
                put32(a, 0);
                put64(a, k);
                put64(a, k);
                put64(a, cdsize);
                put64(a, cd);
                put32(a, 0x07064b50);
                put32(a, 0);
                put64(a, z64);
                put32(a, 1);
        }
        put32(a, 0x06054b50);
        put16(a, 0);
        put16(a, 0);
        put16(a, zip64_end ? 0xffff : (unsigned)k);
        put16(a, zip64_end ? 0xffff : (unsigned)k);
        put32(a, zip64_end ? 0xffffffffu : cdsize);
        put32(a, zip64_end ? 0xffffffffu : cd);
        put16(a, 0);
        free(lho);
        free(csz);
        free(crc);
        free(comp.p);
}

/* ---- reading through the container API ---- */

static int sink(void *arg, const uint8_t *buf, size_t n)
{
        vt_put(arg, buf, n);
        return 0;
}

static struct tm_cont *open_cont(const char *path, int *fd, int want, struct tm_err *err)
{
        *fd = open(path, O_RDONLY);
        assert_true(*fd >= 0);
        struct tm_cont *c = NULL;
        memset(err, 0, sizeof *err);
        int rc = tm_cont_open(*fd, path, &c, err);
        if (rc != want)
                fail_msg("%s: tm_cont_open %d (%s), expected %d", path, rc, err->msg, want);
        return c;
}

/* Read everything from a fresh cursor in pieces of piece bytes. */
static int read_whole(struct tm_cont *c, size_t piece, struct vt_buf *out, struct tm_err *err)
{
        struct tm_creader *r;
        assert_int_equal(tm_creader_open(c, &r, err), 0);
        uint8_t *buf = malloc(piece);
        ssize_t k;
        out->len = 0;
        while ((k = tm_creader_read(r, buf, piece, err)) > 0)
                vt_put(out, buf, (size_t)k);
        free(buf);
        tm_creader_close(r);
        return (int)k;
}

static void check_seeks(struct tm_cont *c, const uint8_t *want, size_t n, uint64_t seed)
{
        struct tm_creader *r;
        struct tm_err err = {0};
        assert_int_equal(tm_creader_open(c, &r, &err), 0);
        uint8_t buf[3000];
        for (unsigned i = 0; i < NSEEKS; i++) {
                uint64_t off = tmt_below(&seed, n + 1);
                size_t len = 1 + (size_t)tmt_below(&seed, sizeof buf);
                if (tm_creader_seek(r, off, &err) != 0)
                        fail_msg("seek to %llu: %s", (unsigned long long)off, err.msg);
                ssize_t k = tm_creader_read_full(r, buf, len, &err);
                size_t expect = n - off < len ? n - off : len;
                if (k < 0 || (size_t)k != expect || memcmp(buf, want + off, expect) != 0)
                        fail_msg("at raw offset %llu: %zd bytes (%s), expected %zu",
                                 (unsigned long long)off, k, k < 0 ? err.msg : "", expect);
        }
        tm_creader_close(r);
}

/* The archive at path holds want as its raw stream: before the scan
 * (read in order), by the scan, after it (in order and at random), and
 * through the seek index saved and loaded into a second container. */
static void check_member(const char *path, const uint8_t *want, size_t n)
{
        int fd;
        struct tm_err err;
        struct tm_cont *c = open_cont(path, &fd, 0, &err);
        assert_string_equal(tm_cont_name(c), "zip");
        uint64_t rs = 0;
        assert_int_equal(tm_cont_raw_size(c, &rs), 1);
        assert_int_equal(rs, n);
        struct vt_buf got = {0};
        assert_int_equal(read_whole(c, 7777, &got, &err), 0);
        assert_int_equal(got.len, n);
        assert_memory_equal(got.p, want, n);
        got.len = 0;
        if (tm_cont_scan(c, sink, &got, &err) != 0)
                fail_msg("%s: scan: %s", path, err.msg);
        assert_int_equal(got.len, n);
        assert_memory_equal(got.p, want, n);
        assert_int_equal(tm_cont_scan_good(c), n);
        assert_int_equal(read_whole(c, 65536, &got, &err), 0);
        assert_int_equal(got.len, n);
        assert_memory_equal(got.p, want, n);
        check_seeks(c, want, n, 42 + n);
        uint64_t next;
        if (n > (10u << 20)) /* a deflate member this big has window points */
                assert_int_equal(tm_cont_next_point(c, 0, &next), 1);

        char ix[600];
        snprintf(ix, sizeof ix, "%s.ix", path);
        FILE *f = fopen(ix, "w+");
        assert_non_null(f);
        int64_t len = tm_cont_index_save(c, f, &err);
        assert_true(len > 0);
        fflush(f);
        struct tm_cont *c2 = open_cont(path, &fd, 0, &err);
        if (tm_cont_index_load(c2, fileno(f), 0, (uint64_t)len, &err) != 0)
                fail_msg("%s: its own seek index: %s", path, err.msg);
        check_seeks(c2, want, n, 7 + n);
        tm_cont_close(c2);
        fclose(f);
        tm_cont_close(c);
        free(got.p);
}

static const char *put_zip(const char *name, const struct zm *m, size_t k, int zip64_end)
{
        struct vt_buf a = {0};
        zip_build(&a, m, k, zip64_end);
        const char *path = tmt_path(name);
        vt_spit(path, a.p, a.len);
        free(a.p);
        return path;
}

/* ---- set-up ---- */

static int setup(void **state)
{
        if (tmp_setup(state) != 0)
                return -1;
        const struct tm_rcodec *din = tm_rcodec_by_name("din"),
                              *p2 = tm_rcodec_by_name("pdats2");
        refs = calloc(NREFS, sizeof *refs);
        vt_gen(2804, refs, NREFS, aref_types(p2), 0); /* types both codecs store */
        vt_make(tmt_path("plain.din"), din, TM_CONT_PLAIN, 0, refs, NREFS, &din_raw);
        vt_make(tmt_path("plain.pdt2"), p2, TM_CONT_PLAIN, 0, refs, NREFS, &p2_raw);
        return 0;
}

static int teardown(void **state)
{
        free(refs);
        free(din_raw.p);
        free(p2_raw.p);
        return tmp_teardown(state);
}

/* ---- tests ---- */

static void test_stored_and_deflate(void **state)
{
        (void)state;
        struct zm m = {"trace", din_raw.p, din_raw.len, 0, 0, 0, 0};
        check_member(put_zip("stored.zip", &m, 1, 0), din_raw.p, din_raw.len);
        m.method = 8;
        check_member(put_zip("deflate.zip", &m, 1, 0), din_raw.p, din_raw.len);
        /* empty members and a short one */
        m.n = 0;
        check_member(put_zip("empty8.zip", &m, 1, 0), din_raw.p, 0);
        m.method = 0;
        check_member(put_zip("empty0.zip", &m, 1, 0), din_raw.p, 0);
        m.n = 100;
        check_member(put_zip("short0.zip", &m, 1, 0), din_raw.p, 100);
}

/* 17 MB of din text: the 8 MiB rule puts window points inside the
 * member; seeks restart there (their windows read back from the store,
 * then from the index file). */
static void test_deflate_points(void **state)
{
        (void)state;
        struct vt_buf big = {0};
        for (int i = 0; i < 6; i++)
                vt_put(&big, din_raw.p, din_raw.len);
        struct zm m = {"trace", big.p, big.len, 8, 1, 0, 0};
        check_member(put_zip("big.zip", &m, 1, 0), big.p, big.len);
        free(big.p);
}

static void test_descriptor(void **state)
{
        (void)state;
        struct zm m = {"trace", p2_raw.p, p2_raw.len, 8, 1, 0, 0};
        check_member(put_zip("desc8.zip", &m, 1, 0), p2_raw.p, p2_raw.len);
        m.method = 0;
        check_member(put_zip("desc0.zip", &m, 1, 0), p2_raw.p, p2_raw.len);
}

static void test_zip64(void **state)
{
        (void)state;
        static const uint8_t hello[] = "hello\n";
        struct zm m[3] = {
            {"README", hello, sizeof hello - 1, 0, 0, 1, 0},
            {"trace", din_raw.p, din_raw.len, 8, 0, 1, 0},
            {"meta/", hello, 0, 0, 0, 0, 0},
        };
        check_member(put_zip("z64.zip", m, 3, 1), din_raw.p, din_raw.len);
        m[1].descriptor = 1;
        check_member(put_zip("z64d.zip", m, 3, 1), din_raw.p, din_raw.len);
        m[1].method = 0;
        check_member(put_zip("z64s.zip", m, 3, 0), din_raw.p, din_raw.len);
}

struct seen {
        unsigned n, raw_at;
        char names[8][32];
        uint64_t size[8];
        unsigned method[8], is_dir[8], is_raw;
};

static int seen_member(void *arg, const struct tm_cont_member *m)
{
        struct seen *s = arg;
        assert_true(s->n < 8);
        assert_int_equal(m->index, s->n);
        assert_int_equal(strlen(m->name), m->name_len);
        snprintf(s->names[s->n], sizeof s->names[0], "%s", m->name);
        s->size[s->n] = m->size;
        s->method[s->n] = m->method;
        s->is_dir[s->n] = m->is_dir;
        if (m->is_raw) {
                s->is_raw++;
                s->raw_at = s->n;
        }
        s->n++;
        return 0;
}

static int stop_at_second(void *arg, const struct tm_cont_member *m)
{
        (void)arg;
        return m->index == 1 ? 77 : 0;
}

static void expect_refused(const char *path, int code, const char *words)
{
        int fd;
        struct tm_err err;
        struct tm_cont *c = open_cont(path, &fd, code, &err);
        assert_null(c);
        if (!strstr(err.msg, words))
                fail_msg("%s: \"%s\" does not say \"%s\"", path, err.msg, words);
        if (code == -EIO && !strstr(err.msg, "archive offset"))
                fail_msg("%s: \"%s\" names no archive offset", path, err.msg);
        close(fd);
}

static void test_members(void **state)
{
        (void)state;
        static const uint8_t hello[] = "hello\n";
        struct zm m[4] = {
            {"README", hello, sizeof hello - 1, 8, 0, 0, 0},
            {"classes/", hello, 0, 0, 0, 0, 0},
            {"trace", p2_raw.p, p2_raw.len, 8, 0, 0, 0},
            {"notes.txt", hello, sizeof hello - 1, 0, 1, 0, 0},
        };
        const char *path = put_zip("four.zip", m, 4, 0);
        check_member(path, p2_raw.p, p2_raw.len);
        int fd;
        struct tm_err err;
        struct tm_cont *c = open_cont(path, &fd, 0, &err);
        struct seen s = {0};
        assert_int_equal(tm_cont_members(c, seen_member, &s, &err), 0);
        assert_int_equal(s.n, 4);
        assert_int_equal(s.is_raw, 1);
        assert_int_equal(s.raw_at, 2);
        for (unsigned i = 0; i < 4; i++) {
                assert_string_equal(s.names[i], m[i].name);
                assert_int_equal(s.size[i], m[i].n);
                assert_int_equal(s.method[i], m[i].method);
                assert_int_equal(s.is_dir[i], i == 1);
        }
        assert_int_equal(tm_cont_members(c, stop_at_second, NULL, &err), 77);
        tm_cont_close(c);
        close(fd);

        /* no "trace": the only member that is not a directory */
        struct zm one[2] = {{"classes/", hello, 0, 0, 0, 0, 0},
                            {"run.din", din_raw.p, din_raw.len, 8, 0, 0, 0}};
        check_member(put_zip("one.zip", one, 2, 0), din_raw.p, din_raw.len);
        /* two candidates and no "trace": refused, naming them */
        struct zm two[2] = {{"a.din", din_raw.p, 100, 8, 0, 0, 0},
                            {"b.din", din_raw.p, 200, 0, 0, 0, 0}};
        expect_refused(put_zip("two.zip", two, 2, 0), -ENOTSUP, "a.din, b.din");
        struct zm dirs[1] = {{"only/", hello, 0, 0, 0, 0, 0}};
        expect_refused(put_zip("dirs.zip", dirs, 1, 0), -ENOTSUP, "directories");
        struct zm dup[2] = {{"trace", hello, 6, 0, 0, 0, 0}, {"trace", hello, 5, 0, 0, 0, 0}};
        expect_refused(put_zip("dup.zip", dup, 2, 0), -ENOTSUP, "named trace");
        /* encrypted, another method */
        struct zm enc[1] = {{"trace", hello, 6, 0, 0, 0, 1}};
        expect_refused(put_zip("enc.zip", enc, 1, 0), -ENOTSUP, "encrypted");
        struct zm bz[1] = {{"trace", hello, 6, 12, 0, 0, 0}};
        expect_refused(put_zip("bzip2.zip", bz, 1, 0), -ENOTSUP, "method 12");

        /* other containers have no members */
        c = open_cont(tmt_path("plain.din"), &fd, 0, &err);
        assert_int_equal(tm_cont_members(c, seen_member, &s, &err), 0);
        tm_cont_close(c);
        close(fd);
        /* and zip is not written */
        struct tm_cwriter *w;
        assert_int_equal(tm_cwriter_open(1, "x.zip", TM_CONT_ZIP, NULL, &w, &err), -ENOTSUP);
}

/* A view read whole: the bytes before the first error, and that error. */
static ssize_t read_view(const char *path, const char *view, struct vt_buf *out, int *opened)
{
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t = NULL;
        struct tm_err err = {0};
        out->len = 0;
        *opened = tm_trace_open(path, &o, &t, &err) == 0;
        if (!*opened)
                return -EIO;
        struct tm_vfile *f;
        if (tm_vfile_open(t, view, &f, &err) != 0) {
                tm_trace_close(t);
                return -EIO;
        }
        uint8_t buf[65536];
        ssize_t r;
        while ((r = tm_vfile_pread(f, buf, sizeof buf, out->len, &err)) > 0)
                vt_put(out, buf, (size_t)r);
        tm_vfile_close(f);
        tm_trace_close(t);
        return r;
}

static void test_traces(void **state)
{
        (void)state;
        static const struct {
                const char *plain, *zip;
                struct vt_buf *raw;
                unsigned method;
        } t[] = {
            {"plain.din", "din8.zip", &din_raw, 8},
            {"plain.pdt2", "p2s.zip", &p2_raw, 0},
            {"plain.pdt2", "p2d.zip", &p2_raw, 8},
        };
        static const uint8_t hello[] = "hello\n";
        for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
                struct zm m[2] = {{"META-INF/MANIFEST.MF", hello, 6, 8, 0, 0, 0},
                                  {"trace", t[i].raw->p, t[i].raw->len, t[i].method, 0, 0, 0}};
                const char *path = put_zip(t[i].zip, m, 2, 0);
                struct vt_buf want = {0}, got = {0};
                int opened;
                assert_int_equal(read_view(tmt_path(t[i].plain), "ascii", &want, &opened), 0);
                assert_true(want.len > 1000);
                if (read_view(path, "ascii", &got, &opened) != 0)
                        fail_msg("%s: ascii failed", path);
                assert_int_equal(got.len, want.len);
                assert_memory_equal(got.p, want.p, want.len);
                struct tm_trace *tr;
                struct tm_err err = {0};
                assert_int_equal(tm_trace_open(path, NULL, &tr, &err), 0);
                assert_string_equal(tm_trace_container(tr), "zip");
                tm_trace_close(tr);
                free(want.p);
                free(got.p);
        }
}

/* ---- damage ---- */

/* A byte of the member's data flipped at 2/3: the scan fails with nothing
 * vouched for, a reader from the start fails at the end, and the trace's
 * ascii serves no byte (one member: the intact prefix is empty). */
static void flip_member(unsigned method)
{
        struct zm m = {"trace", din_raw.p, din_raw.len, method, 0, 0, 0};
        struct vt_buf a = {0};
        zip_build(&a, &m, 1, 0);
        size_t data = 30 + 5, at = data + (a.len - data) * 2 / 3;
        a.p[at] ^= 0x10;
        char name[32];
        snprintf(name, sizeof name, "flip%u.zip", method);
        const char *path = tmt_path(name);
        vt_spit(path, a.p, a.len);
        int fd;
        struct tm_err err;
        struct tm_cont *c = open_cont(path, &fd, 0, &err);
        struct vt_buf got = {0};
        assert_int_equal(tm_cont_scan(c, sink, &got, &err), -EIO);
        assert_non_null(strstr(err.msg, "archive offset"));
        assert_int_equal(tm_cont_scan_good(c), 0);
        assert_int_equal(read_whole(c, 65536, &got, &err), -EIO);
        tm_cont_close(c);
        close(fd);
        int opened;
        ssize_t r = read_view(path, "ascii", &got, &opened);
        print_message("method %u, flip at archive offset %zu: %s, %zu ascii bytes, then %zd\n",
                      method, at, opened ? "opened" : "not a trace", got.len, r);
        assert_int_equal(got.len, 0);
        assert_int_equal(r, -EIO);
        free(got.p);
        free(a.p);
}

static void test_flip(void **state)
{
        (void)state;
        flip_member(0);
        flip_member(8);
}

/* Patch the little-endian field of w bytes at off of a copy of a. */
static const char *patched(const char *name, const struct vt_buf *a, size_t off, unsigned w,
                           uint64_t v)
{
        struct vt_buf b = {0};
        vt_put(&b, a->p, a->len);
        for (unsigned i = 0; i < w; i++)
                b.p[off + i] = (uint8_t)(v >> (8 * i));
        const char *path = tmt_path(name);
        vt_spit(path, b.p, b.len);
        free(b.p);
        return path;
}

static uint64_t le(const uint8_t *p, unsigned w)
{
        uint64_t v = 0;
        for (unsigned i = w; i-- > 0;)
                v = v << 8 | p[i];
        return v;
}

/* The archive at path opens, and its scan and a reader fail with -EIO
 * saying words. */
static void expect_scan_fails(const char *path, const char *words)
{
        int fd;
        struct tm_err err;
        struct tm_cont *c = open_cont(path, &fd, 0, &err);
        struct vt_buf got = {0};
        assert_int_equal(tm_cont_scan(c, NULL, NULL, &err), -EIO);
        if (!strstr(err.msg, words) || !strstr(err.msg, "archive offset"))
                fail_msg("%s: scan: \"%s\" does not say \"%s\"", path, err.msg, words);
        assert_int_equal(tm_cont_scan_good(c), 0);
        assert_int_equal(read_whole(c, 65536, &got, &err), -EIO);
        if (!strstr(err.msg, words))
                fail_msg("%s: reader: \"%s\" does not say \"%s\"", path, err.msg, words);
        free(got.p);
        tm_cont_close(c);
        close(fd);
}

static void test_hostile(void **state)
{
        (void)state;
        static const uint8_t hello[] = "hello\n";
        struct zm m[2] = {{"README", hello, 6, 0, 0, 0, 0},
                          {"trace", din_raw.p, din_raw.len, 8, 0, 0, 0}};
        struct vt_buf a = {0};
        zip_build(&a, m, 2, 0);
        size_t end = a.len - 22;
        size_t cd = (size_t)le(a.p + end + 16, 4);
        size_t e1 = cd + 46 + 6; /* the central entry of "trace" */
        size_t l1 = (size_t)le(a.p + e1 + 42, 4);

        /* cut: no end record */
        struct vt_buf cut = {0};
        vt_put(&cut, a.p, a.len * 2 / 3);
        vt_spit(tmt_path("cut.zip"), cut.p, cut.len);
        expect_refused(tmt_path("cut.zip"), -EIO, "no end of central directory");
        cut.len = a.len - 1;
        memcpy(cut.p, a.p, cut.len);
        vt_spit(tmt_path("cut1.zip"), cut.p, cut.len);
        expect_refused(tmt_path("cut1.zip"), -EIO, "no end of central directory");
        free(cut.p);

        /* the directory outside the file, or too small for its entries */
        expect_refused(patched("cdoff.zip", &a, end + 16, 4, a.len + 1000), -EIO, "outside");
        expect_refused(patched("cdsize.zip", &a, end + 12, 4, 0xfffffff0u), -EIO, "outside");
        struct vt_buf h = {0};
        vt_put(&h, a.p, a.len);
        memcpy(h.p + end + 8, "\xfe\xff\xfe\xff", 4); /* 65534 entries */
        vt_spit(tmt_path("count.zip"), h.p, h.len);
        expect_refused(tmt_path("count.zip"), -EIO, "cannot fit");
        free(h.p);
        expect_refused(patched("satur.zip", &a, end + 16, 4, 0xffffffffu), -EIO, "ZIP64");

        /* entries that lie */
        expect_refused(patched("lho.zip", &a, e1 + 42, 4, cd - 10), -EIO, "local header offset");
        expect_refused(patched("lsig.zip", &a, l1, 1, 'Q'), -EIO, "no local header");
        expect_refused(patched("lname.zip", &a, l1 + 30, 1, 'T'), -EIO, "names another");
        expect_refused(patched("csize.zip", &a, e1 + 20, 4, 0x7fffffffu), -EIO,
                       "run into the central directory");
        expect_refused(patched("nlen.zip", &a, e1 + 28, 2, 0xffff), -EIO, "runs past");
        expect_refused(patched("cdsig.zip", &a, e1, 1, 'Q'), -EIO, "no central directory entry");
        /* the local header's sums are checked against the directory's */
        expect_refused(patched("crc.zip", &a, e1 + 16, 4, 12345), -EIO, "local header's CRC");
        /* sizes that lie in both headers: found by the scan and by readers */
        struct vt_buf b = {0};
        vt_put(&b, a.p, a.len);
        for (int k = 0; k < 2; k++) {
                uint64_t n = din_raw.len + (k ? 1 : -1);
                for (unsigned i = 0; i < 4; i++) {
                        b.p[e1 + 24 + i] = (uint8_t)(n >> (8 * i));
                        b.p[l1 + 22 + i] = (uint8_t)(n >> (8 * i));
                }
                const char *path = tmt_path(k ? "long.zip" : "short.zip");
                vt_spit(path, b.p, b.len);
                expect_scan_fails(path, k ? "the central directory says" : "more than");
        }
        free(b.p);

        /* ZIP64: a count of 2^60 in a directory of a few hundred bytes */
        zip_build(&a, m, 2, 1);
        size_t z64 = a.len - 22 - 20 - 56;
        assert_int_equal(le(a.p + z64, 4), 0x06064b50);
        h = (struct vt_buf){0};
        vt_put(&h, a.p, a.len);
        for (unsigned i = 0; i < 8; i++)
                h.p[z64 + 24 + i] = h.p[z64 + 32 + i] = (uint8_t)((1ull << 60) >> (8 * i));
        vt_spit(tmt_path("count64.zip"), h.p, h.len);
        expect_refused(tmt_path("count64.zip"), -EIO, "cannot fit");
        free(h.p);
        expect_refused(patched("loc64.zip", &a, a.len - 22 - 20 + 8, 8, a.len), -EIO, "locator");
        expect_refused(patched("off64.zip", &a, z64 + 48, 8, 1ull << 62), -EIO, "outside");
        free(a.p);
}

/* ---- archives made by the zip program ---- */

static int zip_run(const char *cmd)
{
        char line[1200];
        snprintf(line, sizeof line, "cd '%s' && %s", tmt_path("zp"), cmd);
        return system(line);
}

static void test_zip_program(void **state)
{
        (void)state;
        if (system("command -v zip >/dev/null 2>&1") != 0) {
                print_message("SKIP: the zip program is not installed: archives written by "
                              "hand only\n");
                skip();
        }
        assert_int_equal(mkdir(tmt_path("zp"), 0755), 0);
        vt_spit(tmt_path("zp/trace"), din_raw.p, din_raw.len);
        vt_spit(tmt_path("zp/README"), "made by zip\n", 12);
        static const char *const cmds[][2] = {
            {"zip -q d.zip trace", "d.zip"},
            {"zip -q -0 s.zip trace", "s.zip"},
            {"zip -q -9 m.zip README trace", "m.zip"},
            {"zip -q -fz z.zip README trace", "z.zip"},
            {"cat trace | zip -q - - | cat > p.zip", "p.zip"}, /* streamed: descriptor */
        };
        for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
                assert_int_equal(zip_run(cmds[i][0]), 0);
                char name[64];
                snprintf(name, sizeof name, "zp/%s", cmds[i][1]);
                struct vt_buf a = {0};
                vt_slurp(tmt_path(name), &a);
                print_message("%s: %zu bytes, first member's flags %04llx\n", cmds[i][0], a.len,
                              (unsigned long long)le(a.p + 6, 2));
                if (strstr(cmds[i][0], "cat"))
                        assert_true(le(a.p + 6, 2) & 8);
                free(a.p);
                check_member(tmt_path(name), din_raw.p, din_raw.len);
        }
}

/* ---- the other members as files (tm_members_*, tm_member_*) ---- */

/* The member at path of the trace at archive, read whole through a cursor
 * in pieces, then at NSEEKS random offsets: equal to want. */
static void check_member_file(struct tm_trace *t, struct tm_members *ms, const char *path,
                              const uint8_t *want, size_t n)
{
        struct tm_member *f;
        struct tm_err err = {0};
        uint64_t size = 0;
        if (tm_members_find(ms, path, &size) != 1 || size != n)
                fail_msg("members/%s: not a member of %zu bytes", path, n);
        if (tm_member_open(t, ms, path, &f, &err) != 0)
                fail_msg("members/%s: %s", path, err.msg);
        assert_int_equal(tm_member_size(f), n);
        uint8_t *got = malloc(n + 1);
        size_t k = 0;
        ssize_t r;
        while ((r = tm_member_pread(f, got + k, 65536, k, &err)) > 0)
                k += (size_t)r;
        assert_int_equal(r, 0);
        assert_int_equal(k, n);
        assert_memory_equal(got, want, n);
        uint64_t seed = 28;
        for (unsigned i = 0; n > 0 && i < NSEEKS; i++) {
                size_t off = (size_t)tmt_below(&seed, n), len = 1 + (size_t)tmt_below(&seed, 9000);
                len = len < n - off ? len : n - off;
                assert_int_equal(tm_member_pread(f, got, len, off, &err), (ssize_t)len);
                assert_memory_equal(got, want + off, len);
        }
        free(got);
        tm_member_close(f);
}

/* The trace at path (no index saved) and its members' table. */
static struct tm_members *open_members(const char *path, struct tm_trace **t)
{
        struct tm_members *ms;
        struct tm_err err = {0};
        struct tm_trace_opts o = {.no_save = 1};
        if (tm_trace_open(path, &o, t, &err) != 0 || tm_members_open(*t, &ms, &err) != 0)
                fail_msg("%s: %s", path, err.msg);
        return ms;
}

static void close_members(struct tm_members *ms, struct tm_trace *t)
{
        tm_members_close(ms);
        tm_trace_close(t);
}

/* The names directly under a directory of the members, "|"-joined, "/"
 * after a directory's. */
static int join_name(void *arg, const char *name, int is_dir)
{
        struct vt_buf *b = arg;
        if (b->len)
                vt_put(b, "|", 1);
        vt_put(b, name, strlen(name));
        if (is_dir)
                vt_put(b, "/", 1);
        return 0;
}

static void expect_listing(const struct tm_members *ms, const char *dir, const char *want)
{
        struct vt_buf b = {0};
        assert_int_equal(tm_members_list(ms, dir, join_name, &b), 0);
        vt_put(&b, "", 1);
        if (strcmp((char *)b.p, want) != 0)
                fail_msg("members/%s lists \"%s\", not \"%s\"", dir, (char *)b.p, want);
        free(b.p);
}

/* The trace's errors view, as text. */
static void errors_text(struct tm_trace *t, struct vt_buf *out)
{
        struct tm_vfile *f;
        struct tm_err err = {0};
        uint8_t buf[4096];
        ssize_t r;
        out->len = 0;
        assert_int_equal(tm_vfile_open(t, "errors", &f, &err), 0);
        while ((r = tm_vfile_pread(f, buf, sizeof buf, out->len, &err)) > 0)
                vt_put(out, buf, (size_t)r);
        vt_put(out, "", 1);
        tm_vfile_close(f);
}

/* Member index of the archive at path, scanned, has a window point
 * inside its size bytes. */
static void expect_window_point(const char *path, uint64_t index, uint64_t size)
{
        struct tm_cont *c;
        struct tm_err err = {0};
        int fd = open(path, O_RDONLY);
        assert_int_equal(tm_cont_open_member(fd, path, index, &c, &err), 0);
        assert_int_equal(tm_cont_scan(c, NULL, NULL, &err), 0);
        uint64_t next = 0;
        assert_int_equal(tm_cont_next_point(c, 0, &next), 1);
        assert_true(next > 0 && next < size);
        tm_cont_close(c);
        close(fd);
}

static void test_member_files(void **state);

/* The same with a budget of open files too small for one reader
 * (tm_handle_memory_set): every read opens its reader again and seeks,
 * and gives it back after; the bytes are the same and nothing stays. */
static void test_member_files_parked(void **state)
{
        uint64_t parks = tm_hmem_parks();
        tm_handle_memory_set(1);
        test_member_files(state);
        assert_true(tm_hmem_parks() > parks);
        assert_int_equal(tm_handle_memory_in_use(), 0);
        tm_handle_memory_set(0);
}

static void test_member_files(void **state)
{
        (void)state;
        static const uint8_t hello[] = "hello\n", second[] = "second\n", x[] = "x";
        char longname[301];
        memset(longname, 'a', 300);
        longname[300] = 0;
        size_t dn = 200000; /* a deflate member damaged past its first bytes */
        struct zm m[] = {
            {"trace", din_raw.p, din_raw.len, 8, 0, 0, 0},
            {"README", hello, 6, 0, 0, 0, 0},
            {"doc/big.bin", din_raw.p, din_raw.len, 8, 0, 0, 0},
            {"doc/sub/", NULL, 0, 0, 0, 0, 0},
            {"../../etc/passwd", x, 1, 0, 0, 0, 0},
            {"/abs//x", hello, 6, 8, 0, 0, 0},
            {"bad\xff\x01name", x, 1, 0, 0, 0, 0},
            {"README", second, 7, 0, 0, 0, 0},
            {"doc", x, 1, 0, 0, 0, 0},
            {longname, x, 1, 0, 0, 0, 0},
            {"~tilde", x, 1, 0, 0, 0, 0},
            {"damaged.bin", din_raw.p, dn, 8, 0, 0, 0},
            {"\xc3\xa9t\xc3\xa9.txt", hello, 6, 0, 1, 0, 0},
        };
        size_t k = sizeof m / sizeof m[0];
        struct vt_buf a = {0};
        zip_build(&a, m, k, 0);
        /* flip a byte in the middle of damaged.bin's deflate data (the first
         * time its name is in the archive is its local header) */
        size_t nl = strlen("damaged.bin");
        uint8_t *h = memmem(a.p, a.len, "damaged.bin", nl);
        assert_non_null(h);
        size_t at = (size_t)(h - a.p) + nl + 5000;
        a.p[at] ^= 0x10;
        const char *path = tmt_path("members.zip");
        vt_spit(path, a.p, a.len);

        struct tm_trace *t;
        struct tm_members *ms = open_members(path, &t);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_has_members(t), 1);
        expect_listing(ms, "",
                       "%2E%2E/|%7Etilde|README|abs/|bad%FF%01name|damaged.bin|doc/|~7|~8|~9|"
                       "\xc3\xa9t\xc3\xa9.txt");
        expect_listing(ms, "doc", "big.bin");
        expect_listing(ms, "%2E%2E", "%2E%2E/");
        expect_listing(ms, "%2E%2E/%2E%2E/etc", "passwd");
        assert_int_equal(tm_members_list(ms, "README", join_name, NULL), -ENOENT);
        assert_int_equal(tm_members_find(ms, "doc/sub", NULL), 0); /* directory entries: none */
        assert_int_equal(tm_members_find(ms, "trace", NULL), 0);   /* the raw view is it */
        assert_int_equal(tm_members_find(ms, "..", NULL), 0);
        check_member_file(t, ms, "README", hello, 6);
        check_member_file(t, ms, "~7", second, 7);
        check_member_file(t, ms, "~8", x, 1);
        check_member_file(t, ms, "~9", x, 1);
        check_member_file(t, ms, "%2E%2E/%2E%2E/etc/passwd", x, 1);
        check_member_file(t, ms, "abs/x", hello, 6);
        check_member_file(t, ms, "bad%FF%01name", x, 1);
        check_member_file(t, ms, "%7Etilde", x, 1);
        check_member_file(t, ms, "\xc3\xa9t\xc3\xa9.txt", hello, 6);
        check_member_file(t, ms, "doc/big.bin", din_raw.p, din_raw.len);
        struct vt_buf e = {0};
        errors_text(t, &e);
        if (!strstr((char *)e.p, "3 shown as ~<index> (member 9 \"aaaa"))
                fail_msg("errors view: %s", (char *)e.p);

        /* the damaged member: no cursor, no byte, the error in the errors
         * view naming the archive, the member and an archive offset */
        struct tm_member *f = NULL;
        assert_int_equal(tm_member_open(t, ms, "damaged.bin", &f, &err), -EIO);
        assert_null(f);
        print_message("damaged.bin, byte %zu flipped: %s\n", at, err.msg);
        assert_non_null(strstr(err.msg, path));
        assert_non_null(strstr(err.msg, "member damaged.bin"));
        assert_non_null(strstr(err.msg, "archive offset"));
        errors_text(t, &e);
        assert_non_null(strstr((char *)e.p, "member damaged.bin"));
        assert_int_equal(tm_member_open(t, ms, "nothing", &f, &err), -ENOENT);
        /* the failure is remembered by the table: the member mended in
         * place still fails through it, not through a new table */
        int wfd = open(path, O_WRONLY);
        uint8_t fixed = a.p[at] ^ 0x10;
        assert_int_equal(pwrite(wfd, &fixed, 1, (off_t)at), 1);
        close(wfd);
        assert_int_equal(tm_member_open(t, ms, "damaged.bin", &f, &err), -EIO);
        assert_non_null(strstr(err.msg, "member damaged.bin"));
        struct tm_members *ms2;
        assert_int_equal(tm_members_open(t, &ms2, &err), 0);
        check_member_file(t, ms2, "damaged.bin", din_raw.p, dn);
        /* a container the old table kept was made for the archive before
         * the mend: a read through it fails naming the change (one made
         * afresh, from the saved seek index, reads the new archive) */
        struct tm_member *g;
        assert_int_equal(tm_member_open(t, ms, "doc/big.bin", &g, &err), 0);
        uint8_t b16[16];
        ssize_t k16 = tm_member_pread(g, b16, sizeof b16, 0, &err);
        if (k16 < 0 && !strstr(err.msg, "the archive changed while it was read"))
                fail_msg("doc/big.bin after the mend: %s", err.msg);
        if (k16 >= 0)
                assert_memory_equal(b16, din_raw.p, sizeof b16);
        tm_member_close(g);
        /* the others and the trace still serve, through a new table */
        check_member_file(t, ms2, "doc/big.bin", din_raw.p, din_raw.len);
        check_member_file(t, ms2, "README", hello, 6);
        tm_members_close(ms2);
        close_members(ms, t);
        struct vt_buf want = {0}, got = {0};
        int opened;
        assert_int_equal(read_view(tmt_path("plain.din"), "ascii", &want, &opened), 0);
        assert_int_equal(read_view(path, "ascii", &got, &opened), 0);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.p, want.p, want.len);

        /* a member whose CRC-32 the directory gives wrong, stored: EIO at
         * open, nothing served */
        struct zm one[] = {{"trace", din_raw.p, 1000, 0, 0, 0, 0},
                           {"s.bin", p2_raw.p, 70000, 0, 0, 0, 0}};
        zip_build(&a, one, 2, 0);
        h = memmem(a.p + 1000, a.len - 1000, "s.bin", 5); /* after the trace's data */
        a.p[(size_t)(h - a.p) + 5 + 30000] ^= 1;
        vt_spit(tmt_path("crc.zip"), a.p, a.len);
        ms = open_members(tmt_path("crc.zip"), &t);
        assert_int_equal(tm_member_open(t, ms, "s.bin", &f, &err), -EIO);
        assert_non_null(strstr(err.msg, "CRC-32"));
        assert_non_null(strstr(err.msg, "member s.bin"));
        close_members(ms, t);

        /* other containers: no members */
        ms = open_members(tmt_path("plain.din"), &t);
        assert_int_equal(tm_trace_has_members(t), 0);
        assert_int_equal(tm_members_find(ms, "x", NULL), 0);
        expect_listing(ms, "", "");
        close_members(ms, t);
        free(e.p);
        free(want.p);
        free(got.p);
        free(a.p);
}

/* A deflate member big enough for window points: random reads restart
 * at them, and give its bytes. */
static void test_member_points(void **state)
{
        (void)state;
        struct vt_buf big = {0};
        for (int i = 0; i < 4; i++)
                vt_put(&big, din_raw.p, din_raw.len);
        struct zm m[] = {{"trace", din_raw.p, 1000, 0, 0, 0, 0},
                         {"big.din", big.p, big.len, 8, 0, 0, 0}};
        const char *path = put_zip("points.zip", m, 2, 0);
        expect_window_point(path, 1, big.len);
        struct tm_trace *t;
        struct tm_members *ms = open_members(path, &t);
        check_member_file(t, ms, "big.din", big.p, big.len);
        close_members(ms, t);
        free(big.p);
}

/* More members than are listed: the first 65536 in directory order are,
 * the others are counted in the errors view. */
static void test_member_cap(void **state)
{
        (void)state;
        enum { N = 65536 + 5 };
        struct zm *m = calloc(N + 1, sizeof *m);
        char(*names)[16] = calloc(N, sizeof *names);
        static const uint8_t x[] = "x";
        m[0] = (struct zm){"trace", din_raw.p, 1000, 0, 0, 0, 0};
        for (size_t i = 0; i < N; i++) {
                snprintf(names[i], sizeof names[i], "d%zu/%zu", i % 7, i);
                m[i + 1] = (struct zm){names[i], x, 1, 0, 0, 0, 0};
        }
        struct vt_buf a = {0};
        zip_build(&a, m, N + 1, 1);
        vt_spit(tmt_path("many.zip"), a.p, a.len);
        struct tm_trace *t;
        struct tm_members *ms = open_members(tmt_path("many.zip"), &t);
        assert_int_equal(tm_members_find(ms, "d0/0", NULL), 1);
        assert_int_equal(tm_members_find(ms, "d1/65535", NULL), 1); /* the 65536th */
        assert_int_equal(tm_members_find(ms, "d2/65536", NULL), 0); /* the 65537th */
        check_member_file(t, ms, "d6/1000", x, 1);
        struct vt_buf e = {0};
        errors_text(t, &e);
        if (!strstr((char *)e.p, "5 not listed (at most 65536 members"))
                fail_msg("errors view: %s", (char *)e.p);
        close_members(ms, t);
        free(e.p);
        free(a.p);
        free(names);
        free(m);
}

/* Threads opening and reading members at once through one table: more
 * members than the table keeps, so slots are shared, reused and all in
 * use (cursors with a container of their own). */
struct mt_arg {
        struct tm_trace *t;
        struct tm_members *ms;
        const struct vt_buf *data;
        uint64_t seed;
        int bad; /* reads that were not the member's bytes */
};

#define MT_MEMBERS 12

static void *mt_reader(void *p)
{
        struct mt_arg *a = p;
        uint8_t buf[4096];
        for (int it = 0; it < 40; it++) {
                unsigned k = (unsigned)tmt_below(&a->seed, MT_MEMBERS);
                char name[16];
                snprintf(name, sizeof name, "m%u", k);
                struct tm_member *f;
                struct tm_err err = {0};
                if (tm_member_open(a->t, a->ms, name, &f, &err) != 0) {
                        a->bad++;
                        continue;
                }
                size_t len = a->data->len - k * 1000; /* member k: the bytes from k * 1000 */
                size_t off = (size_t)tmt_below(&a->seed, len);
                ssize_t r = tm_member_pread(f, buf, sizeof buf, off, &err);
                size_t want = len - off < sizeof buf ? len - off : sizeof buf;
                if (r != (ssize_t)want || memcmp(buf, a->data->p + k * 1000 + off, want) != 0)
                        a->bad++;
                tm_member_close(f);
        }
        return NULL;
}

static void test_member_threads(void **state)
{
        (void)state;
        struct zm m[MT_MEMBERS + 1] = {{"trace", din_raw.p, 1000, 0, 0, 0, 0}};
        char names[MT_MEMBERS][16];
        for (unsigned k = 0; k < MT_MEMBERS; k++) {
                snprintf(names[k], sizeof names[k], "m%u", k);
                m[k + 1] = (struct zm){
                    names[k], p2_raw.p + k * 1000, p2_raw.len - k * 1000, k % 2 ? 0 : 8, 0, 0, 0};
        }
        const char *path = put_zip("threads.zip", m, MT_MEMBERS + 1, 0);
        struct tm_trace *t;
        struct tm_members *ms = open_members(path, &t);
        pthread_t th[4];
        struct mt_arg a[4];
        for (unsigned i = 0; i < 4; i++) {
                a[i] = (struct mt_arg){t, ms, &p2_raw, 1000 + i, 0};
                assert_int_equal(pthread_create(&th[i], NULL, mt_reader, &a[i]), 0);
        }
        for (unsigned i = 0; i < 4; i++) {
                pthread_join(th[i], NULL);
                assert_int_equal(a[i].bad, 0);
        }
        close_members(ms, t);
}

/* zip -r: a subdirectory, stored and deflate members beside the trace. */
static void test_zip_program_members(void **state)
{
        (void)state;
        if (system("command -v zip >/dev/null 2>&1") != 0) {
                print_message("SKIP: the zip program is not installed\n");
                skip();
        }
        assert_int_equal(mkdir(tmt_path("zm"), 0755), 0);
        assert_int_equal(mkdir(tmt_path("zm/sub"), 0755), 0);
        vt_spit(tmt_path("zm/trace"), din_raw.p, din_raw.len);
        vt_spit(tmt_path("zm/notes.txt"), "made by zip\n", 12);
        vt_spit(tmt_path("zm/sub/p2.bin"), p2_raw.p, p2_raw.len);
        char line[1200];
        snprintf(line, sizeof line,
                 "cd '%s' && zip -q -r m.zip trace sub && zip -q -0 m.zip notes.txt",
                 tmt_path("zm"));
        assert_int_equal(system(line), 0);
        struct tm_trace *t;
        struct tm_members *ms = open_members(tmt_path("zm/m.zip"), &t);
        expect_listing(ms, "", "notes.txt|sub/");
        check_member_file(t, ms, "notes.txt", (const uint8_t *)"made by zip\n", 12);
        check_member_file(t, ms, "sub/p2.bin", p2_raw.p, p2_raw.len);
        close_members(ms, t);
}

/* ---- members that share bytes; members inflated once ---- */

/* a's central directory with its entry dup (from 0) listed extra more
 * times after the others: the same name, sizes and local header offset. */
static void zip_repeat_entry(const struct vt_buf *a, unsigned dup, unsigned extra,
                             struct vt_buf *out)
{
        size_t end = a->len - 22;
        size_t cd = (size_t)le(a->p + end + 16, 4), count = (size_t)le(a->p + end + 10, 2);
        size_t at = cd, dat = 0, dlen = 0;
        for (size_t i = 0; i < count; i++) {
                size_t len = 46 + (size_t)le(a->p + at + 28, 2) + (size_t)le(a->p + at + 30, 2) +
                             (size_t)le(a->p + at + 32, 2);
                if (i == dup) {
                        dat = at;
                        dlen = len;
                }
                at += len;
        }
        out->len = 0;
        vt_put(out, a->p, end); /* the data and the directory */
        for (unsigned k = 0; k < extra; k++)
                vt_put(out, a->p + dat, dlen);
        size_t cdsize = out->len - cd;
        put32(out, 0x06054b50);
        put16(out, 0);
        put16(out, 0);
        put16(out, (unsigned)(count + extra));
        put16(out, (unsigned)(count + extra));
        put32(out, cdsize);
        put32(out, cd);
        put16(out, 0);
}

/* 21 central entries over one deflate member (issue 33 item 7) and a
 * member whose data holds the next one's local header: refused at open
 * with both entries named, before a byte is inflated; the trace shows
 * the reason in its errors view. */
static void test_overlap(void **state)
{
        (void)state;
        static const uint8_t hello[] = "hello\n";
        struct zm m[2] = {{"trace", din_raw.p, 1000, 0, 0, 0, 0},
                          {"big.din", din_raw.p, din_raw.len, 8, 0, 0, 0}};
        struct vt_buf a = {0}, r = {0};
        zip_build(&a, m, 2, 0);
        size_t cd = (size_t)le(a.p + a.len - 22 + 16, 4);
        size_t lho1 = (size_t)le(a.p + cd + 46 + 5 + 42, 4); /* big.din's local header */
        zip_repeat_entry(&a, 1, 20, &r);
        const char *path = tmt_path("repeat.zip");
        vt_spit(path, r.p, r.len);
        uint64_t scanned = tm_cont_scanned();
        int fd;
        struct tm_err err = {0};
        assert_null(open_cont(path, &fd, -EIO, &err));
        close(fd);
        char want[160];
        snprintf(want, sizeof want,
                 "members overlap: big.din (entry 1, local header at %zu, data to %zu) and "
                 "big.din (entry 2, local header at %zu)",
                 lho1, lho1 + 30 + 7 + (size_t)le(a.p + cd + 46 + 5 + 20, 4), lho1);
        if (!strstr(err.msg, want) || !strstr(err.msg, "archive offset"))
                fail_msg("%s: \"%s\" does not say \"%s\"", path, err.msg, want);
        assert_int_equal(tm_cont_scanned(), scanned); /* nothing inflated */

        /* README's compressed size reaching into trace's local header */
        struct zm m2[2] = {{"README", hello, 6, 0, 0, 0, 0},
                           {"trace", din_raw.p, 1000, 0, 0, 0, 0}};
        zip_build(&a, m2, 2, 0);
        cd = (size_t)le(a.p + a.len - 22 + 16, 4);
        const char *p2 = patched("bomb.zip", &a, cd + 20, 4, 40);
        assert_null(open_cont(p2, &fd, -EIO, &err));
        close(fd);
        if (!strstr(err.msg, "members overlap: README (entry 0, local header at 0") ||
            !strstr(err.msg, "trace (entry 1, local header at 42)"))
                fail_msg("%s: \"%s\" names not both members", p2, err.msg);

        /* a member that inflates to far more than it declares: the scan
         * stops one byte past the declared size */
        struct zm m3[1] = {{"trace", din_raw.p, din_raw.len, 8, 0, 0, 0}};
        zip_build(&a, m3, 1, 0);
        cd = (size_t)le(a.p + a.len - 22 + 16, 4);
        struct vt_buf b = {0};
        vt_put(&b, a.p, a.len);
        for (unsigned i = 0; i < 4; i++)
                b.p[cd + 24 + i] = b.p[22 + i] = (uint8_t)(1000u >> (8 * i));
        vt_spit(tmt_path("small.zip"), b.p, b.len);
        scanned = tm_cont_scanned();
        expect_scan_fails(tmt_path("small.zip"), "more than the 1000 bytes");
        assert_true(tm_cont_scanned() - scanned <= 1001);
        free(b.p);
        free(a.p);
        free(r.p);
}

/* Ten deflate members, more than the table keeps scanned: each is
 * inflated whole once, by its first open; opening them all again loads
 * what that scan learnt and inflates nothing more than the reads ask. */
static void test_member_once(void **state)
{
        (void)state;
        enum { NBIG = 10 };
        struct zm m[NBIG + 1];
        char names[NBIG][16];
        m[0] = (struct zm){"trace", din_raw.p, 1000, 0, 0, 0, 0};
        size_t part = din_raw.len / 2;
        for (int i = 0; i < NBIG; i++) {
                snprintf(names[i], sizeof names[i], "m%d.din", i);
                m[i + 1] = (struct zm){names[i], din_raw.p + i * 1000, part, 8, 0, 0, 0};
        }
        const char *path = put_zip("many.zip", m, NBIG + 1, 0);
        struct tm_trace *t;
        struct tm_members *ms = open_members(path, &t);
        uint64_t before = tm_cont_scanned();
        for (int i = 0; i < NBIG; i++)
                check_member_file(t, ms, names[i], m[i + 1].data, part);
        uint64_t first = tm_cont_scanned() - before;
        assert_int_equal(first, (uint64_t)NBIG * part); /* each scanned once */
        for (int round = 0; round < 2; round++)
                for (int i = 0; i < NBIG; i++)
                        check_member_file(t, ms, names[i], m[i + 1].data, part);
        assert_int_equal(tm_cont_scanned() - before, first);
        close_members(ms, t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_stored_and_deflate),
            cmocka_unit_test(test_deflate_points),
            cmocka_unit_test(test_descriptor),
            cmocka_unit_test(test_zip64),
            cmocka_unit_test(test_members),
            cmocka_unit_test(test_traces),
            cmocka_unit_test(test_flip),
            cmocka_unit_test(test_hostile),
            cmocka_unit_test(test_zip_program),
            cmocka_unit_test(test_member_files),
            cmocka_unit_test(test_member_files_parked),
            cmocka_unit_test(test_member_points),
            cmocka_unit_test(test_member_cap),
            cmocka_unit_test(test_member_threads),
            cmocka_unit_test(test_zip_program_members),
            cmocka_unit_test(test_overlap),
            cmocka_unit_test(test_member_once),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
