/* Archives that cannot fool the reader (issue 33 item 8, issue 34 item
 * 3; docs/damage.md):
 * - damaged archives of every container (plain, gzip, zstd of one frame
 *   and seekable, zip), cut or empty, are traces: tm_probe_path says so,
 *   tm_trace_open opens them, the errors view and tm_trace_open_error
 *   name the archive, the offset and the reason, and the other views
 *   fail with -EIO;
 * - an archive rewritten in place while four threads read it: every read
 *   returns the old version's bytes, the new version's (after a reopen),
 *   or an error; never bytes of neither, never 0 bytes inside the size;
 * - the unverified prefix of a cut gzip member, on request only. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "tmpdir_test.h"
#include "view_test.h"
#include "views/view.h"

#define NREFS 200000

static struct tm_ref *refs;
static struct vt_buf p2_raw; /* a PDATS II stream */

static int setup(void **state)
{
        if (tmp_setup(state) != 0)
                return -1;
        const struct tm_codec *p2 = tm_codec_by_name("pdats2");
        refs = calloc(NREFS, sizeof *refs);
        vt_gen(3303, refs, NREFS, p2->ntypes, 0);
        vt_make(tmt_path("plain.pdt2"), p2, TM_CONT_PLAIN, 0, refs, NREFS, &p2_raw);
        return 0;
}

static int teardown(void **state)
{
        free(refs);
        free(p2_raw.p);
        return tmp_teardown(state);
}

/* ---- archives ---- */

static void put_le(struct vt_buf *b, uint64_t v, unsigned w)
{
        for (unsigned i = 0; i < w; i++) {
                uint8_t c = (uint8_t)(v >> (8 * i));
                vt_put(b, &c, 1);
        }
}

/* A ZIP archive of one stored member "trace" holding p[0..n). */
static void zip_stored(const uint8_t *p, size_t n, struct vt_buf *a)
{
        uint32_t crc = (uint32_t)crc32(0, p, (uInt)n);
        a->len = 0;
        put_le(a, 0x04034b50, 4);
        put_le(a, 20, 2);
        put_le(a, 0, 2);
        put_le(a, 0, 2);
        put_le(a, 0, 4);
        put_le(a, crc, 4);
        put_le(a, n, 4);
        put_le(a, n, 4);
        put_le(a, 5, 2);
        put_le(a, 0, 2);
        vt_put(a, "trace", 5);
        vt_put(a, p, n);
        size_t cd = a->len;
        put_le(a, 0x02014b50, 4);
        put_le(a, 0x031e, 2);
        put_le(a, 20, 2);
        put_le(a, 0, 2);
        put_le(a, 0, 2);
        put_le(a, 0, 4);
        put_le(a, crc, 4);
        put_le(a, n, 4);
        put_le(a, n, 4);
        put_le(a, 5, 2);
        put_le(a, 0, 8); /* extra, comment, disk, internal attributes */
        put_le(a, 0, 4); /* external attributes */
        put_le(a, 0, 4); /* local header at 0 */
        vt_put(a, "trace", 5);
        size_t cdsize = a->len - cd;
        put_le(a, 0x06054b50, 4);
        put_le(a, 0, 4);
        put_le(a, 1, 2);
        put_le(a, 1, 2);
        put_le(a, cdsize, 4);
        put_le(a, cd, 4);
        put_le(a, 0, 2);
}

/* raw in a container of kind at path (frame: zstd raw bytes a frame;
 * SIZE_MAX for one frame of the whole stream, written by libzstd). */
static void put_archive(const char *path, enum tm_cont_kind kind, size_t frame, const uint8_t *raw,
                        size_t n)
{
        struct vt_buf a = {0};
        if (kind == TM_CONT_ZIP) {
                zip_stored(raw, n, &a);
        } else if (kind == TM_CONT_ZSTD && frame == SIZE_MAX) {
                size_t cap = ZSTD_compressBound(n);
                a.p = malloc(cap);
                a.len = ZSTD_compress(a.p, cap, raw, n, 3);
                assert_false(ZSTD_isError(a.len));
        } else {
                struct tm_err err = {0};
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                struct tm_cwriter_opts wo = {.level = 3, .frame_size = frame};
                struct tm_cwriter *w;
                assert_int_equal(tm_cwriter_open(fd, path, kind, &wo, &w, &err), 0);
                assert_int_equal(tm_cwriter_write(w, raw, n, &err), 0);
                assert_int_equal(tm_cwriter_close(w, &err), 0);
                close(fd);
                return;
        }
        vt_spit(path, a.p, a.len);
        free(a.p);
}

/* The first n bytes of the file at from, written to to. */
static const char *cut_copy(const char *from, const char *to, size_t n)
{
        struct vt_buf b = {0};
        vt_slurp(from, &b);
        assert_true(n <= b.len);
        const char *p = tmt_path(to);
        vt_spit(p, b.p, n);
        free(b.p);
        return p;
}

static size_t file_size(const char *path)
{
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        return (size_t)st.st_size;
}

/* ---- damaged archives are traces ---- */

/* The whole of view of t: its bytes into out; the read's last result
 * (0 at the end, or a negative errno). */
static ssize_t read_all(struct tm_trace *t, const char *view, struct vt_buf *out,
                        struct tm_err *err)
{
        struct tm_vfile *f;
        out->len = 0;
        int rc = tm_vfile_open(t, view, &f, err);
        if (rc < 0)
                return rc;
        uint8_t buf[65536];
        ssize_t k;
        while ((k = tm_vfile_pread(f, buf, sizeof buf, out->len, err)) > 0)
                vt_put(out, buf, (size_t)k);
        tm_vfile_close(f);
        return k;
}

/* path is a trace of container cont that opens with an error naming it,
 * an archive offset and words; its errors view is that line; ascii and
 * raw fail with -EIO. */
static void expect_broken(const char *path, const char *cont, const char *words)
{
        const char *codec = NULL, *cn = NULL;
        if (tm_probe_path(path, &codec, &cn) != 1)
                fail_msg("%s: tm_probe_path does not take it", path);
        assert_string_equal(cn, cont);
        struct tm_trace *t;
        struct tm_err err = {0};
        struct tm_trace_opts o = {.no_save = 1};
        if (tm_trace_open(path, &o, &t, &err) != 0)
                fail_msg("%s: tm_trace_open: %s", path, err.msg);
        const struct tm_err *oe = tm_trace_open_error(t);
        if (!oe)
                fail_msg("%s: opened with no error", path);
        if (!strstr(oe->msg, path) || !strstr(oe->msg, "offset") || !strstr(oe->msg, words))
                fail_msg("%s: \"%s\" does not name the archive, an offset and \"%s\"", path,
                         oe->msg, words);
        assert_int_equal(oe->code, -EIO);
        struct vt_buf b = {0};
        assert_int_equal(read_all(t, "errors", &b, &err), 0);
        char want[sizeof oe->msg + 2];
        snprintf(want, sizeof want, "%s\n", oe->msg);
        assert_int_equal(b.len, strlen(want));
        assert_memory_equal(b.p, want, b.len);
        assert_int_equal(read_all(t, "ascii", &b, &err), -EIO);
        assert_int_equal(read_all(t, "raw", &b, &err), -EIO);
        assert_int_equal(b.len, 0);
        const char *const *v = tm_trace_views(t);
        int has_errors = 0;
        for (unsigned i = 0; v && v[i]; i++)
                has_errors |= strcmp(v[i], "errors") == 0;
        assert_true(has_errors);
        printf("%s: %s\n", strrchr(path, '/') + 1, oe->msg);
        tm_trace_close(t);
        free(b.p);
}

/* A damaged archive with its codec's header readable is a trace with its
 * prefix (unit_errors.c); here the cuts that leave nothing to tell the
 * codec by, and the archives that hold nothing. */
static void test_broken_are_traces(void **state)
{
        (void)state;
        const uint8_t *raw = p2_raw.p;
        size_t n = p2_raw.len;
        /* plain: cut inside the codec's header */
        const char *p = cut_copy(tmt_path("plain.pdt2"), "hdr.pdt2", 6);
        expect_broken(p, "plain", "truncated file header");

        const struct {
                const char *name;
                enum tm_cont_kind kind;
                size_t frame;
                const char *cont, *cut_words;
        } c[] = {
            {"a.pdt2.gz", TM_CONT_GZIP, 0, "gzip", "ends inside a member"},
            {"a.pdt2.zst", TM_CONT_ZSTD, SIZE_MAX, "zstd", "ends inside a frame"},
            {"s.pdt2.zst", TM_CONT_ZSTD, 256 << 10, "zstd", "ends inside a frame"},
            {"a.zip", TM_CONT_ZIP, 0, "zip", "no end of central directory"},
        };
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
                char name[64];
                const char *whole = tmt_path(c[i].name);
                put_archive(whole, c[i].kind, c[i].frame, raw, n);
                size_t size = file_size(whole);
                /* cut a few bytes after the magic, and inside the first
                 * frame or member (the zip: anywhere before its end) */
                size_t cuts[2] = {6, c[i].kind == TM_CONT_ZIP ? size / 2 : 100};
                for (int k = 0; k < 2; k++) {
                        snprintf(name, sizeof name, "cut%zu.%s", cuts[k], c[i].name);
                        expect_broken(cut_copy(whole, name, cuts[k]), c[i].cont,
                                      c[i].kind == TM_CONT_ZIP && cuts[k] == 6 ? "end record"
                                                                               : c[i].cut_words);
                }
                /* empty: a container holding no raw bytes */
                snprintf(name, sizeof name, "empty.%s", c[i].name);
                put_archive(tmt_path(name), c[i].kind, c[i].frame, raw, 0);
                expect_broken(tmt_path(name), c[i].cont, "no raw bytes (empty)");
        }
        /* an intact archive that holds no trace is not one */
        put_archive(tmt_path("readme.gz"), TM_CONT_GZIP, 0, (const uint8_t *)"hello\n", 6);
        assert_int_equal(tm_probe_path(tmt_path("readme.gz"), NULL, NULL), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_broken_are_traces),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
