/* Damaged archives through views/view.h (docs/damage.md): archives of an
 * address trace (PDATS II, din text) and a heap trace (HATF) in every
 * container, cut short at several points. The index keeps the intact
 * prefix: each view's size is that prefix plus one byte, its bytes equal
 * the intact trace's first bytes, the read that reaches the damage fails
 * with -EIO naming the archive and the offset, and the errors view holds
 * that message. An archive repaired in place is indexed again; one
 * rewritten in place with another trace of the same codec and the same
 * views (HATF, Meta-TF) shows the new trace, one of another codec or with
 * other views stays failed. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "codecs/address/arec.h"
#include "codecs/heap/heap.h"
#include "codecs/record/record.h"
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
                const struct tm_rcodec *codec = tm_rcodec_by_name(codecs[c]);
                assert_non_null(codec);
                struct tm_ref *refs = calloc(NREFS, sizeof *refs);
                vt_gen(77 + (uint64_t)c, refs, NREFS, aref_types(codec), 0);
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
        const struct tm_rcodec *codec = tm_rcodec_by_name("pdats2");
        struct tm_ref *refs = calloc(NREFS, sizeof *refs);
        vt_gen(5, refs, NREFS, aref_types(codec), 0);
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

/* ---- a heap trace rewritten in place ---- */

static int sink_buf(void *arg, const void *buf, size_t n)
{
        vt_put(arg, buf, n);
        return 0;
}

/* The raw bytes of a HATF trace of n events from threads tid0 ..
 * tid0 + nthreads - 1: 64 blocks allocated, then freed, round after round,
 * of sizes drawn from seed. */
static void make_hatf(struct vt_buf *raw, uint64_t seed, size_t n, uint64_t tid0, unsigned nthreads)
{
        const struct tm_rcodec *c = tm_rcodec_by_name("hatf");
        assert_non_null(c);
        struct tm_err err = {0};
        struct tm_renc *e;
        assert_int_equal(c->enc_open(NULL, sink_buf, raw, &e, &err), 0);
        vt_rng = seed;
        for (size_t i = 0; i < n; i++) {
                int alloc = (i / 64) % 2 == 0;
                struct tm_heap_ev ev = {
                    .kind = alloc ? TM_HK_ALLOC : TM_HK_FREE,
                    .size = alloc ? 16 + vt_rand() % 4000 : 0,
                    .addr = 0x10000000 + (i % 64) * 0x10000,
                    .thread = tid0 + (i / 5) % nthreads,
                    .time = i * 10,
                };
                struct tm_rec rec;
                tm_heap_ev_to_rec(&ev, &rec);
                if (c->enc_put(e, &rec, 1, i, &err) < 0)
                        fail_msg("enc_put %zu: %s", i, err.msg);
        }
        assert_int_equal(c->enc_finish(e, &err), 0);
}

/* Rewrite path in place (same inode) as a zstd archive of raw, or of its
 * first half when cut, with mtime sec. */
static void rewrite(const char *path, const struct vt_buf *raw, int cut, time_t sec)
{
        write_archive(path, TM_CONT_ZSTD, raw);
        if (cut) {
                struct vt_buf arc = {0};
                vt_slurp(path, &arc);
                vt_spit(path, arc.p, arc.len / 2);
                free(arc.p);
        }
        struct timespec ts[2] = {{0, UTIME_OMIT}, {sec, 0}};
        assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static int listed(struct tm_trace *t, const char *view)
{
        for (const char *const *v = tm_trace_views(t); *v; v++)
                if (strcmp(*v, view) == 0)
                        return 1;
        return 0;
}

/* The views list of t and every view's bytes equal those of a trace
 * opened afresh on path; errors aside, which keeps the last error t met. */
static void check_as_fresh(struct tm_trace *t, const char *path)
{
        struct tm_trace *n = open_trace(path);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(n, NULL, NULL, &err), 0);
        const char *const *a = tm_trace_views(t), *const *b = tm_trace_views(n);
        size_t i = 0;
        for (; a[i] && b[i]; i++) {
                if (strcmp(a[i], b[i]) != 0)
                        fail_msg("%s: view %zu is %s, a fresh open's %s", path, i, a[i], b[i]);
                if (strcmp(a[i], "errors") == 0)
                        continue;
                struct vt_buf x = {0}, y = {0};
                if (read_view(t, a[i], &x, &err) != 0)
                        fail_msg("%s %s: %s", path, a[i], err.msg);
                if (read_view(n, b[i], &y, &err) != 0)
                        fail_msg("%s %s, fresh: %s", path, b[i], err.msg);
                if (x.len != y.len || (x.len && memcmp(x.p, y.p, x.len) != 0))
                        fail_msg("%s %s: %zu bytes, not the fresh open's %zu", path, a[i], x.len,
                                 y.len);
                free(x.p);
                free(y.p);
        }
        if (a[i] || b[i])
                fail_msg("%s: views list ends at %zu, at %s", path, i, a[i] ? a[i] : b[i]);
        tm_trace_close(n);
}

/* The raw bytes of an example archive. */
static void example_raw(const char *name, struct vt_buf *raw)
{
        char src[400];
        snprintf(src, sizeof src, "%s/examples/%s", TM_SOURCE_DIR, name);
        struct tm_trace *t = open_trace(src);
        struct tm_err err = {0};
        assert_int_equal(read_view(t, "raw", raw, &err), 0);
        tm_trace_close(t);
}

/* A damaged HATF trace rewritten in place: with a Meta-TF trace it stays
 * failed; with another HATF trace from other threads it shows that one,
 * once no cursor is open, per-id streams included. */
static void test_replaced_hatf(void **state)
{
        (void)state;
        struct vt_buf a = {0}, b = {0}, mtf = {0};
        make_hatf(&a, 11, 20000, 1, 3);
        make_hatf(&b, 12, 15000, 7, 2);
        example_raw("heapwork.mtf.zst", &mtf);
        char path[400];
        snprintf(path, sizeof path, "%s/replaced.hatf.zst", tmpdir);
        rewrite(path, &a, 1, 1000000000);
        struct tm_trace *t = open_trace(path);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        uint64_t cut = view_size(t, "ascii");
        assert_true(cut > 1);
        assert_true(listed(t, "streams/thread/1"));

        rewrite(path, &mtf, 0, 1100000000); /* another codec */
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        assert_int_equal(view_size(t, "ascii"), cut);
        assert_string_equal(tm_trace_codec(t), "hatf");

        rewrite(path, &b, 0, 1200000000);
        struct tm_vfile *f;
        assert_int_equal(tm_vfile_open(t, "schema", &f, &err), 0);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO); /* a cursor is open */
        assert_int_equal(view_size(t, "ascii"), cut);
        tm_vfile_close(f);
        memset(&err, 0, sizeof err);
        if (tm_trace_index(t, NULL, NULL, &err) != 0)
                fail_msg("%s rewritten with another HATF trace: %s", path, err.msg);
        assert_false(listed(t, "streams/thread/1"));
        assert_true(listed(t, "streams/thread/7") && listed(t, "streams/thread/8"));
        check_as_fresh(t, path);
        tm_trace_close(t);
        free(a.p);
        free(b.p);
        free(mtf.p);
}

/* Sizes asked while a damaged trace is rewritten and indexed again, over
 * and over: the size of a view reads the index's totals, and the index is
 * replaced only while no cursor is open and no size is being computed, so
 * every size is the damaged prefix's (and ASan sees no read of a freed
 * index). */
struct sizer {
        struct tm_trace *t;
        uint64_t want;
        int stop;
        unsigned asked, wrong;
};

static void *sizer_run(void *arg)
{
        struct sizer *z = arg;
        while (!__atomic_load_n(&z->stop, __ATOMIC_ACQUIRE)) {
                uint64_t size = 0;
                struct tm_err err = {0};
                if (tm_trace_view_size(z->t, "binary", &size, &err) != 0 || size != z->want)
                        z->wrong++;
                z->asked++;
        }
        return NULL;
}

static void test_replaced_while_sized(void **state)
{
        (void)state;
        struct vt_buf a = {0};
        make_hatf(&a, 13, 6000, 1, 2);
        char path[400];
        snprintf(path, sizeof path, "%s/resized.hatf.zst", tmpdir);
        rewrite(path, &a, 1, 1000000000);
        struct tm_trace *t = open_trace(path);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        struct sizer z = {.t = t, .want = view_size(t, "binary")};
        assert_true(z.want > 1);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, sizer_run, &z), 0);
        for (int i = 1; i <= 60; i++) {
                rewrite(path, &a, 1, 1000000000 + i); /* the same damage, a new mtime */
                tm_trace_index(t, NULL, NULL, &err);
        }
        __atomic_store_n(&z.stop, 1, __ATOMIC_RELEASE);
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_true(z.asked > 0);
        assert_int_equal(z.wrong, 0);
        tm_trace_close(t);
        free(a.p);
}

/* A damaged Meta-TF trace (its header names hatf10.dtd) made whole again:
 * while a DTD beside it renames a record kind, the views would change and
 * it stays failed; with the DTD gone, it shows the whole trace. */
static void test_replaced_metatf(void **state)
{
        (void)state;
        char dir[400], path[420], dtd[420];
        snprintf(dir, sizeof dir, "%s/mtf", tmpdir);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(path, sizeof path, "%s/heapwork.mtf.zst", dir);
        snprintf(dtd, sizeof dtd, "%s/hatf10.dtd", dir);
        struct vt_buf raw = {0}, text = {0};
        example_raw("heapwork.mtf.zst", &raw);
        rewrite(path, &raw, 1, 1000000000);
        struct tm_trace *t = open_trace(path);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        uint64_t cut = view_size(t, "ascii");
        assert_true(cut > 1 && listed(t, "streams/destroyThread"));

        vt_slurp(TM_SOURCE_DIR "/codecs/metatf/dtd/hatf10.dtd", &text);
        uint8_t *k = memmem(text.p, text.len, "destroyThread :", 15);
        assert_non_null(k);
        memcpy(k, "endOfThread   :", 15);
        vt_spit(dtd, text.p, text.len);
        rewrite(path, &raw, 0, 1100000000);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        assert_int_equal(view_size(t, "ascii"), cut);
        assert_true(listed(t, "streams/destroyThread") && !listed(t, "streams/endOfThread"));

        assert_int_equal(unlink(dtd), 0);
        rewrite(path, &raw, 0, 1200000000);
        memset(&err, 0, sizeof err);
        if (tm_trace_index(t, NULL, NULL, &err) != 0)
                fail_msg("%s made whole: %s", path, err.msg);
        check_as_fresh(t, path);
        tm_trace_close(t);
        free(raw.p);
        free(text.p);
}

int main(void)
{
        setenv("TM_READ_THREADS", "2", 1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_address),         cmocka_unit_test(test_heap),
            cmocka_unit_test(test_repaired),        cmocka_unit_test(test_replaced_hatf),
            cmocka_unit_test(test_replaced_metatf), cmocka_unit_test(test_replaced_while_sized),
        };
        return cmocka_run_group_tests(tests, tmp_setup, tmp_teardown);
}
