/* Archives that cannot fool the reader (issue 33 item 8, issue 34 item
 * 3; docs/damage.md):
 * - damaged archives of every container (plain, gzip, zstd of one frame
 *   and seekable, zip), cut or empty, are traces: tm_probe_path says so,
 *   tm_trace_open opens them, the errors view and tm_trace_open_error
 *   name the archive, the offset and the reason, and the other views
 *   fail with -EIO;
 * - an archive rewritten in place while four threads read it: every read
 *   returns the old version's bytes, the new version's (after a reopen),
 *   or an error; never bytes of neither, never 0 bytes inside the size
 *   (a plain rewrite stops inside its writes, where the file ends inside
 *   a line: test_cut_line is that state alone);
 * - the unverified prefix of a cut gzip member, on request only. */
#include <ctype.h>
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
#define NREFS_BIG 800000 /* din text of more than TM_ZSTD_VERIFY_MAX: a frame streamed */

static struct tm_ref *refs;
static struct vt_buf p2_raw; /* a PDATS II stream */

static int setup(void **state)
{
        if (tmp_setup(state) != 0)
                return -1;
        const struct tm_rcodec *p2 = tm_rcodec_by_name("pdats2");
        refs = calloc(NREFS_BIG, sizeof *refs);
        vt_gen(3303, refs, NREFS_BIG, aref_types(p2), 0);
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
        assert_int_equal(vt_read_view(t, "errors", &b, &err), 0);
        char want[sizeof oe->msg + 2];
        snprintf(want, sizeof want, "%s\n", oe->msg);
        assert_int_equal(b.len, strlen(want));
        assert_memory_equal(b.p, want, b.len);
        assert_int_equal(vt_read_view(t, "ascii", &b, &err), -EIO);
        assert_int_equal(vt_read_view(t, "raw", &b, &err), -EIO);
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

/* ---- an archive rewritten in place under readers ---- */

#define RW_READERS 4 /* TM_SEAL_READERS (at most RW_READERS_MAX) for a stress run */
#define RW_READERS_MAX 16
#define RW_ROUNDS 6 /* TM_SEAL_ROUNDS for a stress run */
#define RW_PAGE 4096
#define RW_TORN_US 1000 /* a plain rewrite's pause inside a write (TM_SEAL_TORN_US) */
#define RW_STABLE_US                                                                               \
        150000 /* each version stays this long between rewrites; 3 times as                        \
                * long for the streamed frame, whose reads take longer */
#define RW_VERSIONS 4

struct rw_shared {
        const char *path;
        struct vt_buf want[RW_VERSIONS]; /* each version's ascii */
        int done;                        /* the writer has finished (atomic) */
        useconds_t torn_us;              /* rw_rewrite's pause inside a write */
        struct vt_buf arch[RW_VERSIONS]; /* each version's archive bytes */
};

struct rw_reader {
        struct rw_shared *sh;
        uint64_t seed;
        unsigned long reads, good, errors, neither, zeros, reopens;
};

/* A handle on the archive as it is now: the trace and its ascii view,
 * and the view's size; 0 or the error (the archive may be half written:
 * the caller tries again). */
static int rw_open(const char *path, struct tm_trace **t, struct tm_vfile **f, uint64_t *size)
{
        struct tm_err err = {0};
        struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = 512};
        int rc = tm_trace_open(path, &o, t, &err);
        if (rc < 0)
                return rc;
        rc = tm_vfile_open(*t, "ascii", f, &err);
        if (rc == 0)
                rc = tm_trace_view_size(*t, "ascii", size, &err);
        if (rc < 0) {
                if (*f)
                        tm_vfile_close(*f);
                tm_trace_close(*t);
                *f = NULL;
                *t = NULL;
        }
        return rc;
}

/* Bytes p[0..n) at off: those of some version's ascii? */
static int rw_some_version(const struct rw_shared *sh, const uint8_t *p, size_t n, uint64_t off)
{
        for (int v = 0; v < RW_VERSIONS; v++)
                if (off + n <= sh->want[v].len && memcmp(sh->want[v].p + off, p, n) == 0)
                        return 1;
        return 0;
}

/* Random reads until the writer is done; a failed read (or open) is
 * followed by a reopen, as docs/damage.md says. */
static void *rw_read(void *arg)
{
        struct rw_reader *r = arg;
        struct rw_shared *sh = r->sh;
        uint8_t *buf = malloc(65536);
        struct tm_trace *t = NULL;
        struct tm_vfile *f = NULL;
        uint64_t size = 0;
        while (!__atomic_load_n(&sh->done, __ATOMIC_ACQUIRE)) {
                if (!f && rw_open(sh->path, &t, &f, &size) < 0) {
                        r->errors++;
                        continue;
                }
                if (size == 0) {
                        r->reopens++;
                        tm_vfile_close(f);
                        tm_trace_close(t);
                        f = NULL;
                        continue;
                }
                uint64_t off = tmt_below(&r->seed, size);
                size_t n = 1 + (size_t)tmt_below(&r->seed, 8192);
                struct tm_err err = {0};
                ssize_t k = tm_vfile_pread(f, buf, n, off, &err);
                r->reads++;
                if (k > 0 && rw_some_version(sh, buf, (size_t)k, off)) {
                        r->good++;
                        continue;
                }
                if (k > 0) {
                        if (r->neither++ == 0)
                                fprintf(stderr, "%zd bytes at %llu of neither version\n", k,
                                        (unsigned long long)off);
                } else if (k == 0) {
                        r->zeros++; /* inside the size, with no error */
                } else {
                        r->errors++;
                }
                tm_vfile_close(f); /* reopen: the archive changed */
                tm_trace_close(t);
                f = NULL;
                r->reopens++;
        }
        if (f) {
                tm_vfile_close(f);
                tm_trace_close(t);
        }
        free(buf);
        return NULL;
}

/* write(2) of p[0..n) at the end of fd, stopping for pause_us at the
 * last page boundary inside it. The kernel shows a write's bytes, and the
 * file's size, a page (or folio) at a time: a reader's fstat sees the
 * file end at any page boundary inside a write, not only where writes
 * end, and for as long as the writer is preempted there (under load,
 * milliseconds). The pause makes that state as frequent without load. */
static void rw_write_torn(int fd, uint64_t at, const uint8_t *p, size_t n, useconds_t pause_us)
{
        size_t cut = (size_t)((at + n) / RW_PAGE * RW_PAGE - at);
        if (!pause_us || cut == 0 || cut >= n)
                cut = n;
        assert_int_equal(write(fd, p, cut), (ssize_t)cut);
        if (cut == n)
                return;
        usleep(pause_us);
        assert_int_equal(write(fd, p + cut, n - cut), (ssize_t)(n - cut));
}

/* Rewrite the archive in place (as cp does: truncate, then write) with
 * version v, in writes of about 16 KiB; plain: each write ends at a line's
 * end (din text), and stops for RW_TORN_US inside (rw_write_torn): a
 * reader then sees the file end inside a line, as cp's writers show it. */
static void rw_rewrite(const struct rw_shared *sh, int v, int plain)
{
        int fd = open(sh->path, O_WRONLY | O_TRUNC);
        assert_true(fd >= 0);
        const struct vt_buf *a = &sh->arch[v];
        for (size_t at = 0; at < a->len;) {
                size_t n = a->len - at < 16384 ? a->len - at : 16384;
                while (plain && at + n < a->len && a->p[at + n - 1] != '\n')
                        n++;
                rw_write_torn(fd, at, a->p + at, n, plain ? sh->torn_us : 0);
                at += n;
                usleep(200);
        }
        close(fd);
}

/* A stress run's setting name from the environment (at most max), else
 * dflt. */
static unsigned rw_env(const char *name, unsigned dflt, unsigned max)
{
        const char *s = getenv(name);
        unsigned long v = s && *s ? strtoul(s, NULL, 10) : dflt;
        return v > max ? max : (unsigned)v;
}

/* The ascii of the archive at path, whole. */
static void ascii_of(const char *path, struct vt_buf *out)
{
        struct tm_trace *t;
        struct tm_err err = {0};
        struct tm_trace_opts o = {.no_save = 1};
        if (tm_trace_open(path, &o, &t, &err) != 0)
                fail_msg("%s: %s", path, err.msg);
        if (vt_read_view(t, "ascii", out, &err) != 0)
                fail_msg("%s: ascii: %s", path, err.msg);
        tm_trace_close(t);
}

/* One container: versions 0 (din text), 1 (another trace of the same
 * size: the same lines with other addresses), 2 (another trace, shorter,
 * in PDATS II, which decodes whatever bytes it is given), 3 (another din
 * trace, of another size), each written over version 0 in turn. */
static unsigned long rewrite_under_readers(enum tm_cont_kind kind, size_t frame, size_t nrefs,
                                           const char *name)
{
        const struct tm_rcodec *din = tm_rcodec_by_name("din"),
                              *p2 = tm_rcodec_by_name("pdats2");
        struct vt_buf raw[RW_VERSIONS] = {{0}};
        struct tm_ref *r2 = calloc(nrefs, sizeof *r2);
        vt_make(tmt_path("rw0.din"), din, TM_CONT_PLAIN, 0, refs, nrefs, &raw[0]);
        vt_put(&raw[1], raw[0].p, raw[0].len);
        for (size_t i = 1; i < raw[1].len; i++) /* the address digits, not the type */
                if (raw[1].p[i - 1] != '\n' && raw[1].p[i] >= '0' && raw[1].p[i] <= '8' &&
                    raw[1].p[i - 1] != ' ')
                        raw[1].p[i]++;
        vt_gen(3304, r2, nrefs * 2 / 3, aref_types(p2), 0);
        vt_make(tmt_path("rw2.pdt2"), p2, TM_CONT_PLAIN, 0, r2, nrefs * 2 / 3, &raw[2]);
        vt_gen(3305, r2, nrefs * 3 / 4, aref_types(din), 0);
        vt_make(tmt_path("rw3.din"), din, TM_CONT_PLAIN, 0, r2, nrefs * 3 / 4, &raw[3]);
        struct rw_shared sh = {.path = tmt_path(name),
                               .torn_us = rw_env("TM_SEAL_TORN_US", RW_TORN_US, 1000000)};
        for (int v = 0; v < RW_VERSIONS; v++) {
                char vn[64];
                snprintf(vn, sizeof vn, "v%d.%s", v, name);
                put_archive(tmt_path(vn), kind, frame, raw[v].p, raw[v].len);
                vt_slurp(tmt_path(vn), &sh.arch[v]);
                ascii_of(tmt_path(vn), &sh.want[v]);
        }
        assert_int_equal(sh.want[0].len, sh.want[1].len);
        assert_memory_not_equal(sh.want[0].p, sh.want[1].p, sh.want[0].len);
        vt_spit(sh.path, sh.arch[0].p, sh.arch[0].len);
        usleep(20000); /* the rewrites' times differ from the first write's */

        const unsigned readers = rw_env("TM_SEAL_READERS", RW_READERS, RW_READERS_MAX);
        assert_true(readers > 0);
        const unsigned rounds = rw_env("TM_SEAL_ROUNDS", RW_ROUNDS, 100000);
        pthread_t th[RW_READERS_MAX];
        struct rw_reader rd[RW_READERS_MAX];
        for (unsigned i = 0; i < readers; i++) {
                rd[i] = (struct rw_reader){.sh = &sh, .seed = 77 + (uint64_t)i};
                assert_int_equal(pthread_create(&th[i], NULL, rw_read, &rd[i]), 0);
        }
        usleep(50000);
        useconds_t stable = nrefs > NREFS ? 3 * RW_STABLE_US : RW_STABLE_US;
        for (unsigned round = 0; round < rounds; round++) {
                rw_rewrite(&sh, 1 + round % 3, kind == TM_CONT_PLAIN);
                usleep(stable);
                rw_rewrite(&sh, 0, kind == TM_CONT_PLAIN);
                usleep(stable);
        }
        __atomic_store_n(&sh.done, 1, __ATOMIC_RELEASE);
        struct rw_reader sum = {0};
        for (unsigned i = 0; i < readers; i++) {
                pthread_join(th[i], NULL);
                sum.reads += rd[i].reads;
                sum.good += rd[i].good;
                sum.errors += rd[i].errors;
                sum.neither += rd[i].neither;
                sum.zeros += rd[i].zeros;
                sum.reopens += rd[i].reopens;
        }
        printf("%s: %lu reads: %lu of a version, %lu errors, %lu of neither version, %lu of 0 "
               "bytes inside the size; %lu reopens\n",
               name, sum.reads, sum.good, sum.errors, sum.neither, sum.zeros, sum.reopens);
        for (int v = 0; v < RW_VERSIONS; v++) {
                free(raw[v].p);
                free(sh.want[v].p);
                free(sh.arch[v].p);
        }
        free(r2);
        return sum.good == 0 ? 1 : sum.neither + sum.zeros; /* failures */
}

/* Issue 33 item 8: cp over an archive while four threads read it. */
static void test_rewrite_under_readers(void **state)
{
        (void)state;
        unsigned long bad = rewrite_under_readers(TM_CONT_PLAIN, 0, NREFS / 2, "rw.din");
        if (getenv("TM_SEAL_PLAIN_ONLY")) { /* a stress run of the plain case */
                assert_int_equal(bad, 0);
                return;
        }
        bad += rewrite_under_readers(TM_CONT_GZIP, 0, NREFS / 2, "rw.din.gz");
        bad += rewrite_under_readers(TM_CONT_ZSTD, 64 << 10, NREFS / 2, "rw.din.zst");
        bad += rewrite_under_readers(TM_CONT_ZSTD, SIZE_MAX, NREFS_BIG, "rw1.din.zst");
        assert_int_equal(bad, 0);
}

/* What a reader opening a plain din file in the middle of a write sees
 * (rw_write_torn): the file ending at a page boundary inside a line's
 * address. Its ascii is the whole lines before it, then -EIO naming the
 * cut line, never the cut address as a shorter one; the same line with
 * its address whole (a blank after it) and no newline is served. */
static void test_cut_line(void **state)
{
        (void)state;
        const struct tm_rcodec *din = tm_rcodec_by_name("din");
        struct vt_buf raw = {0}, whole = {0}, got = {0};
        vt_make(tmt_path("c.din"), din, TM_CONT_PLAIN, 0, refs, 20000, &raw);
        ascii_of(tmt_path("c.din"), &whole);
        size_t cut = 4 * RW_PAGE; /* a page boundary with address digits on both sides */
        while (cut < raw.len && !(isxdigit(raw.p[cut - 1]) && isxdigit(raw.p[cut])))
                cut += RW_PAGE;
        assert_true(cut < raw.len);
        const char *path = tmt_path("cut.din");
        vt_spit(path, raw.p, cut);
        struct tm_trace *t;
        struct tm_err err = {0};
        struct tm_trace_opts o = {.no_save = 1};
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        assert_int_equal(vt_read_view(t, "ascii", &got, &err), -EIO);
        if (!strstr(err.msg, path) || !strstr(err.msg, "the last line has no newline"))
                fail_msg("the cut line: %s", err.msg);
        size_t lines = cut; /* the whole lines' ascii: din's own, as the generator writes it */
        while (raw.p[lines - 1] != '\n')
                lines--;
        assert_int_equal(got.len, lines);
        assert_memory_equal(got.p, whole.p, lines);
        tm_trace_close(t);
        printf("cut.din: %zu bytes cut at %zu inside an address: %zu ascii bytes, then %s\n",
               raw.len, cut, got.len, err.msg);

        size_t end = cut; /* that line's end: its address whole, a blank for its newline */
        while (raw.p[end] != '\n')
                end++;
        raw.p[end] = ' ';
        vt_spit(path, raw.p, end + 1);
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        assert_int_equal(vt_read_view(t, "ascii", &got, &err), 0);
        assert_int_equal(got.len, end + 1);
        assert_memory_equal(got.p, whole.p, end + 1);
        tm_trace_close(t);
        free(raw.p);
        free(whole.p);
        free(got.p);
}

/* ---- the unverified prefix, on request ---- */

/* What zlib recovers of the gzip file at path (cut inside its member),
 * up to the last whole line: zcat's output, decoded by nobody else. */
static void zcat_lines(const char *path, struct vt_buf *out)
{
        struct vt_buf a = {0};
        vt_slurp(path, &a);
        z_stream zs = {0};
        assert_int_equal(inflateInit2(&zs, 31), Z_OK);
        uint8_t buf[65536];
        zs.next_in = a.p;
        zs.avail_in = (uInt)a.len;
        out->len = 0;
        int zret;
        do {
                zs.next_out = buf;
                zs.avail_out = sizeof buf;
                zret = inflate(&zs, Z_NO_FLUSH);
                vt_put(out, buf, sizeof buf - zs.avail_out);
        } while (zret == Z_OK && zs.avail_out == 0);
        inflateEnd(&zs);
        while (out->len && out->p[out->len - 1] != '\n')
                out->len--;
        free(a.p);
}

/* The ascii of path with opts o: its bytes up to the first error, the
 * error (or 0), and the errors view. */
static ssize_t ascii_with(const char *path, int unverified, struct vt_buf *out,
                          struct vt_buf *errors)
{
        struct tm_trace *t;
        struct tm_err err = {0};
        struct tm_trace_opts o = {.no_save = 1, .unverified_prefix = unverified};
        if (tm_trace_open(path, &o, &t, &err) != 0)
                fail_msg("%s: %s", path, err.msg);
        ssize_t k = vt_read_view(t, "ascii", out, &err);
        assert_int_equal(vt_read_view(t, "errors", errors, &err), 0);
        tm_trace_close(t);
        return k;
}

/* A din text trace in one gzip member cut in half: nothing by default;
 * with unverified_prefix, the lines zcat recovers (decoded as a plain
 * file of them), then EIO, and errors says the prefix is unverified. A
 * zip member whose CRC-32 is wrong: all of it on request, nothing else. */
static void test_unverified_prefix(void **state)
{
        (void)state;
        const struct tm_rcodec *din = tm_rcodec_by_name("din");
        struct vt_buf raw = {0}, got = {0}, errs = {0}, zl = {0}, want = {0};
        vt_make(tmt_path("u.din"), din, TM_CONT_PLAIN, 0, refs, NREFS, &raw);
        put_archive(tmt_path("u.din.gz"), TM_CONT_GZIP, 0, raw.p, raw.len);
        const char *half =
            cut_copy(tmt_path("u.din.gz"), "half.din.gz", file_size(tmt_path("u.din.gz")) / 2);

        assert_int_equal(ascii_with(half, 0, &got, &errs), -EIO);
        assert_int_equal(got.len, 0);
        vt_put(&errs, "", 1);
        assert_null(strstr((char *)errs.p, "unverified"));

        zcat_lines(half, &zl);
        assert_true(zl.len > raw.len / 4);
        vt_spit(tmt_path("zcat.din"), zl.p, zl.len);
        ascii_of(tmt_path("zcat.din"), &want);
        assert_int_equal(ascii_with(half, 1, &got, &errs), -EIO);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.p, want.p, want.len);
        vt_put(&errs, "", 1);
        if (!strstr((char *)errs.p, "archive ends inside a member") ||
            !strstr((char *)errs.p, "unverified prefix served"))
                fail_msg("errors: %s", (char *)errs.p);
        printf("half.din.gz: %zu ascii bytes unverified, as zcat's %zu raw bytes decode\n", got.len,
               zl.len);

        /* zip: the member whole, its CRC-32 wrong in both headers */
        struct vt_buf z = {0};
        zip_stored(raw.p, raw.len, &z);
        size_t cd = z.len - 22 - 51;
        z.p[14] ^= 1;
        z.p[cd + 16] ^= 1;
        vt_spit(tmt_path("crc.zip"), z.p, z.len);
        ascii_of(tmt_path("u.din"), &want);
        assert_int_equal(ascii_with(tmt_path("crc.zip"), 0, &got, &errs), -EIO);
        assert_int_equal(got.len, 0);
        assert_int_equal(ascii_with(tmt_path("crc.zip"), 1, &got, &errs), -EIO);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.p, want.p, want.len);
        vt_put(&errs, "", 1);
        if (!strstr((char *)errs.p, "CRC-32") || !strstr((char *)errs.p, "unverified prefix"))
                fail_msg("errors: %s", (char *)errs.p);
        free(z.p);
        free(raw.p);
        free(got.p);
        free(errs.p);
        free(zl.p);
        free(want.p);
}

/* A read at the end of a view (what a reader whose idea of the size is
 * the new version's asks of a handle on the old one) after the archive
 * was rewritten: EIO naming the change, not 0 bytes; 0 while it was not. */
static void test_end_after_rewrite(void **state)
{
        (void)state;
        const struct tm_rcodec *din = tm_rcodec_by_name("din");
        struct vt_buf raw = {0}, big = {0};
        vt_make(tmt_path("e.din"), din, TM_CONT_PLAIN, 0, refs, 1000, &raw);
        vt_make(tmt_path("e2.din"), din, TM_CONT_PLAIN, 0, refs, 3000, &big);
        const char *path = tmt_path("end.din");
        vt_spit(path, raw.p, raw.len);
        struct tm_trace *t;
        struct tm_vfile *f;
        struct tm_err err = {0};
        struct tm_trace_opts o = {.no_save = 1};
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        assert_int_equal(tm_vfile_open(t, "raw", &f, &err), 0);
        uint8_t buf[4096];
        assert_int_equal(tm_vfile_pread(f, buf, sizeof buf, raw.len, &err), 0);
        usleep(20000);
        int fd = open(path, O_WRONLY | O_TRUNC);
        assert_int_equal(write(fd, big.p, big.len), (ssize_t)big.len);
        close(fd);
        assert_int_equal(tm_vfile_pread(f, buf, sizeof buf, raw.len, &err), -EIO);
        if (!strstr(err.msg, "the archive changed") || !strstr(err.msg, path))
                fail_msg("read at the end after a rewrite: %s", err.msg);
        assert_int_equal(tm_vfile_pread(f, buf, sizeof buf, 0, &err), -EIO);
        tm_vfile_close(f);
        tm_trace_close(t);
        free(raw.p);
        free(big.p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_broken_are_traces),
            cmocka_unit_test(test_rewrite_under_readers),
            cmocka_unit_test(test_cut_line),
            cmocka_unit_test(test_unverified_prefix),
            cmocka_unit_test(test_end_after_rewrite),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
