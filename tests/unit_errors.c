/* Damaged archives through views/view.h (docs/damage.md): archives of an
 * address trace (PDATS II, din text) and a heap trace (HATF) in every
 * container, cut short at several points. The index keeps the intact
 * prefix: each view's size is that prefix plus one byte, its bytes equal
 * the intact trace's first bytes, the read that reaches the damage fails
 * with -EIO naming the archive and the offset, and the errors view holds
 * that message. An archive repaired in place is indexed again. */
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

#define NREFS 30000

static void write_archive(const char *path, enum tm_cont_kind kind, const struct vt_buf *raw)
{
        struct tm_err err = {0};
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        struct tm_cwriter_opts wo = {.level = 3, .frame_size = 512};
        struct tm_cwriter *w;
        assert_int_equal(tm_cwriter_open(fd, path, kind, &wo, &w, &err), 0);
        for (size_t off = 0; off < raw->len; off += 97) {
                size_t n = raw->len - off < 97 ? raw->len - off : 97;
                assert_int_equal(tm_cwriter_write(w, raw->p + off, n, &err), 0);
                assert_int_equal(tm_cwriter_boundary(w, &err), 0);
        }
        assert_int_equal(tm_cwriter_close(w, &err), 0);
        close(fd);
}

static struct tm_trace *open_trace(const char *path)
{
        struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = 1000};
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tm_trace_open(path, &o, &t, &err) != 0)
                fail_msg("open %s: %s", path, err.msg);
        return t;
}

/* Read a view from 0 in chunks of odd sizes until a read returns 0 or an
 * error; returns that last result, the bytes in out, the error in err. */
static ssize_t read_view(struct tm_trace *t, const char *view, struct vt_buf *out,
                         struct tm_err *err)
{
        struct tm_vfile *f;
        if (tm_vfile_open(t, view, &f, err) != 0)
                fail_msg("open %s: %s", view, err->msg);
        uint8_t buf[7001];
        ssize_t r;
        out->len = 0;
        size_t chunk = 4096;
        while ((r = tm_vfile_pread(f, buf, chunk, out->len, err)) > 0) {
                vt_put(out, buf, (size_t)r);
                chunk = chunk == 4096 ? 7001 : 4096;
        }
        tm_vfile_close(f);
        return r;
}

static uint64_t view_size(struct tm_trace *t, const char *view)
{
        uint64_t size;
        struct tm_err err = {0};
        if (tm_trace_view_size(t, view, &size, &err) != 0)
                fail_msg("size of %s: %s", view, err.msg);
        return size;
}

/* The intact trace: the ascii and raw views read from its plain archive. */
struct intact {
        struct vt_buf ascii, raw;
        const char *name;
};

/* One damaged archive: see the file's comment. Returns the prefix's
 * length in the ascii view. */
static uint64_t check_damaged(const char *path, const struct intact *in)
{
        struct tm_trace *t = open_trace(path);
        struct tm_err ierr = {0}, err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &ierr), -EIO);
        if (!strstr(ierr.msg, path) || !strstr(ierr.msg, "offset "))
                fail_msg("%s: the index error does not name the archive and an offset: %s", path,
                         ierr.msg);

        /* ascii and raw: the prefix, then -EIO with the same message */
        static const char *const views[] = {"ascii", "raw"};
        uint64_t prefix[2];
        for (int v = 0; v < 2; v++) {
                const struct vt_buf *want = v ? &in->raw : &in->ascii;
                struct vt_buf got = {0};
                uint64_t size = view_size(t, views[v]);
                memset(&err, 0, sizeof err);
                ssize_t r = read_view(t, views[v], &got, &err);
                if (r != -EIO || strcmp(err.msg, ierr.msg) != 0)
                        fail_msg("%s %s: last read %zd (%s), want -EIO (%s)", path, views[v], r,
                                 err.msg, ierr.msg);
                if (got.len + 1 != size || got.len > want->len ||
                    (got.len && memcmp(got.p, want->p, got.len) != 0))
                        fail_msg("%s %s: %zu bytes before the damage (size %llu) are not the "
                                 "intact trace's first bytes (%zu)",
                                 path, views[v], got.len, (unsigned long long)size, want->len);
                prefix[v] = got.len;
                free(got.p);
        }
        /* a read that crosses the damage stops before it; one at it fails */
        struct tm_vfile *f;
        uint8_t buf[64];
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        if (prefix[0] >= 10) {
                assert_int_equal(tm_vfile_pread(f, buf, sizeof buf, prefix[0] - 10, &err), 10);
                assert_memory_equal(buf, in->ascii.p + prefix[0] - 10, 10);
        }
        assert_int_equal(tm_vfile_pread(f, buf, sizeof buf, prefix[0], &err), -EIO);
        assert_int_equal(tm_vfile_pread(f, buf, 1, 0, &err), prefix[0] ? 1 : -EIO);
        tm_vfile_close(f);

        /* binary: one record per ascii line of the prefix */
        uint64_t lines = 0;
        for (uint64_t i = 0; i < prefix[0]; i++)
                lines += in->ascii.p[i] == '\n';
        uint64_t bsize = view_size(t, "binary");
        assert_true(bsize >= 1 && (bsize - 1) % (lines ? lines : 1) == 0);
        if (lines)
                assert_true((bsize - 1) / lines >= 16);

        /* errors: the message and a newline */
        struct vt_buf e = {0};
        assert_int_equal(read_view(t, "errors", &e, &err), 0);
        assert_int_equal(view_size(t, "errors"), e.len);
        vt_put(&e, "", 1);
        char want[sizeof ierr.msg + 2];
        snprintf(want, sizeof want, "%s\n", ierr.msg);
        assert_string_equal((char *)e.p, want);
        free(e.p);

        /* stats.json says it covers a prefix */
        struct vt_buf js = {0};
        assert_int_equal(read_view(t, "stats.json", &js, &err), 0);
        vt_put(&js, "", 1);
        assert_non_null(strstr((char *)js.p, "\"complete\":false"));
        free(js.p);
        /* and so does stats, with the message, on a line of its own */
        struct vt_buf st = {0};
        assert_int_equal(read_view(t, "stats", &st, &err), 0);
        vt_put(&st, "", 1);
        const char *d = strstr((char *)st.p, "\ndamaged ");
        if (!d || !strstr(d, ierr.msg) || strchr(d + 1, '\n') < strstr(d, ierr.msg))
                fail_msg("%s: stats has no 'damaged' line naming the damage:\n%s", path,
                         (char *)st.p);
        free(st.p);
        tm_trace_close(t);
        return prefix[0];
}

/* The intact archive: index, every view whole, errors empty. */
static void check_intact(const char *path, const struct intact *in)
{
        struct tm_trace *t = open_trace(path);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        struct vt_buf got = {0};
        assert_int_equal(read_view(t, "ascii", &got, &err), 0);
        assert_int_equal(got.len, in->ascii.len);
        assert_memory_equal(got.p, in->ascii.p, got.len);
        assert_int_equal(view_size(t, "errors"), 0);
        assert_int_equal(read_view(t, "stats.json", &got, &err), 0);
        vt_put(&got, "", 1);
        assert_non_null(strstr((char *)got.p, "\"complete\":true,\"damage\":null"));
        free(got.p);
        got = (struct vt_buf){0};
        assert_int_equal(read_view(t, "stats", &got, &err), 0);
        vt_put(&got, "", 1);
        assert_null(strstr((char *)got.p, "damaged"));
        free(got.p);
        tm_trace_close(t);
}

/* Every container of in's raw bytes, whole and cut at 2/3, 1/2 and 3
 * bytes before the end. */
static void check_all_cuts(const struct intact *in)
{
        static const enum tm_cont_kind kinds[] = {TM_CONT_PLAIN, TM_CONT_GZIP, TM_CONT_ZSTD};
        static const char *const ext[] = {"", ".gz", ".zst"};
        for (int k = 0; k < 3; k++) {
                char path[400], cut[400];
                snprintf(path, sizeof path, "%s/%s%s", tmpdir, in->name, ext[k]);
                write_archive(path, kinds[k], &in->raw);
                check_intact(path, in);
                struct vt_buf arc = {0};
                vt_slurp(path, &arc);
                size_t at[3] = {arc.len * 2 / 3, arc.len / 2, arc.len - 3};
                for (int c = 0; c < 3; c++) {
                        snprintf(cut, sizeof cut, "%s/cut%d-%s%s", tmpdir, c, in->name, ext[k]);
                        vt_spit(cut, arc.p, at[c]);
                        uint64_t p = check_damaged(cut, in);
                        /* a gzip member cut short cannot be verified, so
                         * none of the one member is shown; zstd's frames
                         * before the cut and plain bytes are */
                        if (kinds[k] == TM_CONT_GZIP && p != 0)
                                fail_msg("%s: %llu unverified bytes of a cut member shown", cut,
                                         (unsigned long long)p);
                        if (kinds[k] != TM_CONT_GZIP && c == 0 && p < in->ascii.len / 4)
                                fail_msg("%s: only %llu of %zu bytes before a cut at 2/3", cut,
                                         (unsigned long long)p, in->ascii.len);
                }
                free(arc.p);
        }
}

/* The intact views of a plain archive holding raw. */
static void intact_views(struct intact *in, const char *name)
{
        char path[400];
        snprintf(path, sizeof path, "%s/%s", tmpdir, name);
        write_archive(path, TM_CONT_PLAIN, &in->raw);
        struct tm_trace *t = open_trace(path);
        struct tm_err err = {0};
        struct vt_buf raw = {0};
        assert_int_equal(read_view(t, "ascii", &in->ascii, &err), 0);
        assert_int_equal(read_view(t, "raw", &raw, &err), 0);
        assert_int_equal(raw.len, in->raw.len);
        assert_memory_equal(raw.p, in->raw.p, raw.len);
        free(raw.p);
        tm_trace_close(t);
        in->name = name;
}

static void test_address(void **state)
{
        (void)state;
        static const char *const codecs[] = {"pdats2", "din"};
        for (int c = 0; c < 2; c++) {
                const struct tm_codec *codec = tm_codec_by_name(codecs[c]);
                assert_non_null(codec);
                struct tm_ref *refs = calloc(NREFS, sizeof *refs);
                vt_gen(77 + (uint64_t)c, refs, NREFS, codec->ntypes, 0);
                struct intact in = {0};
                char path[400];
                snprintf(path, sizeof path, "%s/gen.%s", tmpdir, codecs[c]);
                vt_make(path, codec, TM_CONT_PLAIN, 0, refs, NREFS, &in.raw);
                intact_views(&in, codecs[c]);
                /* the ascii view is the din text of the references */
                struct vt_buf want = {0};
                vt_expect("ascii", refs, NREFS, &in.raw, &want);
                assert_int_equal(want.len, in.ascii.len);
                assert_memory_equal(want.p, in.ascii.p, want.len);
                free(want.p);
                if (c == 0) {
                        check_all_cuts(&in);
                } else {
                        /* din text in a plain file has nothing to tell a
                         * cut at a line's end from the end (docs/damage.md):
                         * only its compressed forms are checked */
                        char p2[400], cut[400];
                        static const enum tm_cont_kind kinds[] = {TM_CONT_GZIP, TM_CONT_ZSTD};
                        for (int k = 0; k < 2; k++) {
                                snprintf(p2, sizeof p2, "%s/din.%d", tmpdir, k);
                                write_archive(p2, kinds[k], &in.raw);
                                check_intact(p2, &in);
                                struct vt_buf arc = {0};
                                vt_slurp(p2, &arc);
                                snprintf(cut, sizeof cut, "%s/cut-din.%d", tmpdir, k);
                                vt_spit(cut, arc.p, arc.len / 2);
                                check_damaged(cut, &in);
                                free(arc.p);
                        }
                }
                free(in.ascii.p);
                free(in.raw.p);
                free(refs);
        }
}

static void test_heap(void **state)
{
        (void)state;
        static const char *const names[] = {"sort.hatf", "heapwork.mtf"};
        for (int n = 0; n < 2; n++) {
                char src[400];
                snprintf(src, sizeof src, "%s/examples/%s.zst", TM_SOURCE_DIR, names[n]);
                struct tm_trace *t = open_trace(src);
                struct tm_err err = {0};
                struct intact in = {0};
                assert_int_equal(read_view(t, "raw", &in.raw, &err), 0);
                tm_trace_close(t);
                assert_true(in.raw.len > 1000);
                intact_views(&in, names[n]);
                check_all_cuts(&in);
                free(in.ascii.p);
                free(in.raw.p);
        }
}

/* A damaged archive repaired in place (new mtime) is indexed again by the
 * same trace object once no cursor is open. */
static void test_repaired(void **state)
{
        (void)state;
        const struct tm_codec *codec = tm_codec_by_name("pdats2");
        struct tm_ref *refs = calloc(NREFS, sizeof *refs);
        vt_gen(5, refs, NREFS, codec->ntypes, 0);
        char path[400];
        snprintf(path, sizeof path, "%s/fix.pdt2", tmpdir);
        struct vt_buf raw = {0}, want = {0}, got = {0};
        vt_make(path, codec, TM_CONT_PLAIN, 0, refs, NREFS, &raw);
        vt_expect("ascii", refs, NREFS, &raw, &want);
        assert_int_equal(truncate(path, (off_t)(raw.len / 2)), 0);
        struct tm_trace *t = open_trace(path);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        uint64_t cut = view_size(t, "ascii");
        assert_true(cut > 1 && cut < want.len);
        struct tm_vfile *f;
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        /* the archive is whole again, but a cursor is open: it stays cut */
        vt_spit(path, raw.p, raw.len);
        struct timespec ts[2] = {{0, UTIME_OMIT}, {2000000000, 0}};
        assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        assert_int_equal(view_size(t, "ascii"), cut);
        tm_vfile_close(f);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        assert_int_equal(read_view(t, "ascii", &got, &err), 0);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.p, want.p, want.len);
        tm_trace_close(t);
        free(got.p);
        free(want.p);
        free(raw.p);
        free(refs);
}

int main(void)
{
        setenv("TM_READ_THREADS", "2", 1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_address),
            cmocka_unit_test(test_heap),
            cmocka_unit_test(test_repaired),
        };
        return cmocka_run_group_tests(tests, tmp_setup, tmp_teardown);
}
