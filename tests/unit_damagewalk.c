/* unit_damagewalk: every view of every registry row, read over damaged
 * copies of its archives, serves the intact decode's bytes or an error
 * (docs/damage.md, docs/reliability.md).
 *
 * Each row of the registry (codecs/registry.h) has a fixture: a shipped example, a file of
 * tests/data, or a trace made here (PDATS and PDATS II through their
 * encoders, a Java trace with many names). Its raw stream goes into every
 * container that checks its data: gzip (one member), zstd in one frame
 * (with its checksum), seekable zstd in 4 KiB frames, ZIP with the trace
 * stored and with it deflated, each beside a second member. Each archive,
 * intact, gives the reference: every view read whole, and the zip's other
 * member. Then damaged copies, under the same name in another directory:
 * one bit flipped at offsets spread over the archive (its first bytes,
 * the middle of the trace's member, its last bytes: checksums, seek table,
 * central directory) and cuts. On each, every view the damaged trace
 * lists but errors is read whole from 0, and at offsets inside the
 * reference: each read returns the reference's bytes at that offset or
 * fails with a message; bytes that differ, a clean end before the
 * reference's size, or bytes of a view the reference lacks fail the test.
 * stats and stats.json describe a damaged trace's prefix (docs/damage.md):
 * each is the reference's, or says so (a "damaged" line, or the "error"
 * line of a trace its codec could not open; "complete": false) while the
 * trace's index call fails (tracetool cat then exits 1).
 * A zip's other member is its bytes or an error. A row of the registry
 * without a fixture fails the test, so a new row must bring one. */
#include <errno.h>
#include <fcntl.h>
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

#include "codecs/address/arec.h"
#include "codecs/record/record.h"
#include "codecs/registry.h"
#include "view_test.h"
#include "views/view.h"

#define VIEWS_MAX 160
#define NOTES "the second member of the archive: what members/ lists\n"

/* ---- the fixtures ---- */

/* A row's fixture: a file under the source tree (max: keep the first max
 * raw bytes, cut back to a line's end: a text trace made shorter), or
 * NULL: made here by make_raw. */
struct fixture {
        const char *row;
        const char *file;
        size_t max;
};

static const struct fixture fixtures[] = {
    {"pdats2", NULL, 0},
    {"pdats", NULL, 0},
    {"din", "examples/tex-table3.din", 0},
    {"lackey", "examples/true.lackey.gz", 48000},
    {"hatf", "examples/sort.hatf.zst", 0},
    {"metatf", "examples/heapwork.mtf.zst", 0},
    {"mtrace", "tests/data/heap/heapprog.mtrace", 0},
    {"java", NULL, 0},
    {"ptf_bin", "tests/data/ptf/figure3.ptfb", 0},
    {"ptf", "tests/data/ptf/every_event.ptf", 0},
    {"laplace_raw", "tests/data/laplace/loop.lpr", 0},
    {"laplace_text", "tests/data/laplace/loop.lpt", 0},
    {"laplace_kev", "tests/data/laplace/loop.lpk", 0},
    {"native", "tests/data/native/true.tmn", 0},
};
#define NFIX (sizeof fixtures / sizeof fixtures[0])

/* A Java trace of 8000 events over 240 classes and 30 method names: some
 * 190 KB, so that a zstd frame of it has blocks that decode before its
 * checksum is met (the trace is recognised when the frame is damaged),
 * and a damaged prefix has tables of its own. */
static void make_java(struct vt_buf *raw)
{
        uint64_t s = 77;
        char line[160];
        raw->len = 0;
        vt_put(raw, "VS:1000\nVI:1010\n", 16);
        for (unsigned i = 0; i < 8000; i++) {
                unsigned c = (unsigned)tmt_below(&s, 240), m = (unsigned)tmt_below(&s, 30);
                int n = i % 40 == 0 ? snprintf(line, sizeof line, "CL:%u:pkg/C%u\n", 1020 + i, c)
                                    : snprintf(line, sizeof line, "MN:%u:1:pkg/C%u:m%u:0\n",
                                               1020 + i, c, m);
                vt_put(raw, line, (size_t)n);
        }
        vt_put(raw, "VD:9000\n", 8);
}

/* The raw stream of fixture x. */
static void make_raw(const struct fixture *x, struct vt_buf *raw)
{
        raw->len = 0;
        if (x->file) {
                char path[1024];
                struct tm_err err = {0};
                size_t n = 0;
                snprintf(path, sizeof path, "%s/%s", TM_SOURCE_DIR, x->file);
                uint8_t *p = tmt_raw_of(path, x->max, &n, &err);
                if (!p)
                        fail_msg("%s: %s", path, err.msg);
                while (x->max && n && p[n - 1] != '\n')
                        n--;
                vt_put(raw, p, n);
                free(p);
        } else if (strcmp(x->row, "java") == 0) {
                make_java(raw);
        } else {
                const struct tm_rcodec *c = tm_rcodec_by_name(x->row);
                struct tm_ref *refs = calloc(3000, sizeof *refs);
                assert_non_null(c);
                vt_gen(97, refs, 3000, aref_types(c), 0);
                vt_make(tmt_path("made"), c, TM_CONT_PLAIN, 0, refs, 3000, raw);
                free(refs);
        }
}

/* ---- the containers ---- */

enum wrap { W_GZIP, W_ZSTD1, W_ZSTDSEEK, W_ZIPSTORED, W_ZIPDEFLATE, W_N };
static const char *const wrap_name[W_N] = {"gz", "zst1", "zst", "zip0", "zip8"};

static void put16(struct vt_buf *b, unsigned v)
{
        uint8_t p[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
        vt_put(b, p, 2);
}

static void put32(struct vt_buf *b, uint32_t v)
{
        put16(b, v & 0xffff);
        put16(b, v >> 16);
}

/* raw deflated (raw deflate, as ZIP stores it) into out. */
static void deflate_raw(const uint8_t *p, size_t n, struct vt_buf *out)
{
        z_stream zs = {0};
        assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
        size_t cap = deflateBound(&zs, (uLong)n);
        out->len = 0;
        uint8_t *c = malloc(cap);
        zs.next_in = (uint8_t *)p;
        zs.avail_in = (uInt)n;
        zs.next_out = c;
        zs.avail_out = (uInt)cap;
        assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
        vt_put(out, c, cap - zs.avail_out);
        deflateEnd(&zs);
        free(c);
}

/* A ZIP archive: member "trace" (raw, stored or deflated), then
 * "notes.txt" (stored). *data_at: where the trace's data starts. */
static void make_zip(const struct vt_buf *raw, unsigned method, struct vt_buf *a, size_t *data_at)
{
        const char *name[2] = {"trace", "notes.txt"};
        const uint8_t *data[2] = {raw->p, (const uint8_t *)NOTES};
        size_t n[2] = {raw->len, sizeof NOTES - 1};
        uint32_t off[2], crc[2], csz[2];
        unsigned meth[2] = {method, 0};
        struct vt_buf z = {0};
        a->len = 0;
        for (int i = 0; i < 2; i++) {
                const uint8_t *body = data[i];
                size_t bn = n[i];
                if (meth[i] == 8) {
                        deflate_raw(data[i], n[i], &z);
                        body = z.p;
                        bn = z.len;
                }
                crc[i] = (uint32_t)crc32(0, data[i], (uInt)n[i]);
                csz[i] = (uint32_t)bn;
                off[i] = (uint32_t)a->len;
                put32(a, 0x04034b50);
                put16(a, 20);
                put16(a, 0);
                put16(a, meth[i]);
                put32(a, 0);
                put32(a, crc[i]);
                put32(a, csz[i]);
                put32(a, (uint32_t)n[i]);
                put16(a, (unsigned)strlen(name[i]));
                put16(a, 0);
                vt_put(a, name[i], strlen(name[i]));
                if (i == 0)
                        *data_at = a->len;
                vt_put(a, body, bn);
        }
        uint32_t cd = (uint32_t)a->len;
        for (int i = 0; i < 2; i++) {
                put32(a, 0x02014b50);
                put16(a, 0x031e);
                put16(a, 20);
                put16(a, 0);
                put16(a, meth[i]);
                put32(a, 0);
                put32(a, crc[i]);
                put32(a, csz[i]);
                put32(a, (uint32_t)n[i]);
                put16(a, (unsigned)strlen(name[i]));
                put32(a, 0); /* extra, comment lengths */
                put32(a, 0); /* disk, internal attributes */
                put32(a, 0); /* external attributes */
                put32(a, off[i]);
                vt_put(a, name[i], strlen(name[i]));
        }
        uint32_t cds = (uint32_t)a->len - cd;
        put32(a, 0x06054b50);
        put32(a, 0);
        put16(a, 2);
        put16(a, 2);
        put32(a, cds);
        put32(a, cd);
        put16(a, 0);
        free(z.p);
}

/* raw through the library's writer of kind (seekable zstd: 4 KiB frames,
 * a frame ending every 4 KiB) into a. */
static void make_cwriter(const struct vt_buf *raw, enum tm_cont_kind kind, struct vt_buf *a)
{
        const char *path = tmt_path("wrap.tmp");
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        struct tm_err err = {0};
        struct tm_cwriter_opts wo = {.level = 3, .frame_size = 4096};
        struct tm_cwriter *w;
        assert_int_equal(tm_cwriter_open(fd, path, kind, &wo, &w, &err), 0);
        for (size_t at = 0; at < raw->len; at += 4096) {
                size_t k = raw->len - at < 4096 ? raw->len - at : 4096;
                assert_int_equal(tm_cwriter_write(w, raw->p + at, k, &err), 0);
                assert_int_equal(tm_cwriter_boundary(w, &err), 0);
        }
        assert_int_equal(tm_cwriter_close(w, &err), 0);
        close(fd);
        vt_slurp(path, a);
}

/* raw as one zstd frame with its content size and checksum. */
static void make_zstd1(const struct vt_buf *raw, struct vt_buf *a)
{
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        size_t cap = ZSTD_compressBound(raw->len);
        uint8_t *c = malloc(cap);
        ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
        ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
        size_t k = ZSTD_compress2(cc, c, cap, raw->p, raw->len);
        assert_false(ZSTD_isError(k));
        a->len = 0;
        vt_put(a, c, k);
        free(c);
        ZSTD_freeCCtx(cc);
}

/* raw in container w, into a; *member: where the trace's bytes start in
 * a zip (else 0). */
static void wrap(const struct vt_buf *raw, enum wrap w, struct vt_buf *a, size_t *member)
{
        *member = 0;
        switch (w) {
        case W_GZIP:
                make_cwriter(raw, TM_CONT_GZIP, a);
                break;
        case W_ZSTD1:
                make_zstd1(raw, a);
                break;
        case W_ZSTDSEEK:
                make_cwriter(raw, TM_CONT_ZSTD, a);
                break;
        default:
                make_zip(raw, w == W_ZIPSTORED ? 0 : 8, a, member);
                break;
        }
}

/* ---- reading ---- */

/* A view (or member) and its bytes read whole from the intact archive. */
struct rview {
        char *name;
        struct vt_buf b;
};

struct reference {
        struct rview v[VIEWS_MAX];
        size_t nv;
        struct vt_buf notes; /* members/notes.txt */
        int has_notes;
};

struct tally {
        unsigned copies, unopened, failed_index, reads, errors, wrong;
};

static struct tm_trace *open_trace(const char *path, struct tm_err *err)
{
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t = NULL;
        return tm_trace_open(path, &o, &t, err) == 0 ? t : NULL;
}

/* The zip's notes member of t into out: 0, or the error. */
static int read_notes(struct tm_trace *t, struct vt_buf *out, struct tm_err *err)
{
        struct tm_members *m;
        struct tm_member *f;
        out->len = 0;
        int rc = tm_members_open(t, &m, err);
        if (rc != 0)
                return rc;
        rc = tm_member_open(t, m, "notes.txt", &f, err);
        if (rc == 0) {
                uint8_t buf[4096];
                ssize_t r;
                while ((r = tm_member_pread(f, buf, sizeof buf, out->len, err)) > 0)
                        vt_put(out, buf, (size_t)r);
                rc = (int)r;
                tm_member_close(f);
        }
        tm_members_close(m);
        return rc;
}

static void reference_make(const char *path, struct reference *ref)
{
        struct tm_err err = {0};
        struct tm_trace *t = open_trace(path, &err);
        if (!t)
                fail_msg("%s (intact): %s", path, err.msg);
        if (tm_trace_index(t, NULL, NULL, &err) != 0)
                fail_msg("%s (intact): %s", path, err.msg);
        const char *const *vs = tm_trace_views(t);
        for (size_t i = 0; vs[i]; i++) {
                assert_true(ref->nv < VIEWS_MAX);
                struct rview *v = &ref->v[ref->nv++];
                v->name = strdup(vs[i]);
                if (vt_read_view(t, vs[i], &v->b, &err) != 0)
                        fail_msg("%s (intact) %s: %s", path, vs[i], err.msg);
        }
        ref->has_notes = tm_trace_has_members(t);
        if (ref->has_notes && read_notes(t, &ref->notes, &err) != 0)
                fail_msg("%s (intact) members/notes.txt: %s", path, err.msg);
        tm_trace_close(t);
}

static void reference_free(struct reference *ref)
{
        for (size_t i = 0; i < ref->nv; i++) {
                free(ref->v[i].name);
                free(ref->v[i].b.p);
        }
        free(ref->notes.p);
        memset(ref, 0, sizeof *ref);
}

static const struct rview *reference_find(const struct reference *ref, const char *name)
{
        for (size_t i = 0; i < ref->nv; i++)
                if (strcmp(ref->v[i].name, name) == 0)
                        return &ref->v[i];
        return NULL;
}

/* Every read of got (r: how the whole read ended, err its error) against
 * want: the same bytes, ending in an error with a message or at want's
 * size. what names the copy and view in a failure. */
static void expect_prefix(const struct vt_buf *got, ssize_t r, const struct tm_err *err,
                          const struct vt_buf *want, const char *what)
{
        if (r < 0 && !err->msg[0])
                fail_msg("%s: error %zd without a message", what, r);
        size_t n = got->len < want->len ? got->len : want->len, i = 0;
        while (i < n && got->p[i] == want->p[i])
                i++;
        if (i < got->len)
                fail_msg("%s: byte %zu differs from the intact archive's (%zu read, %zu intact)",
                         what, i, got->len, want->len);
        if (r == 0 && got->len != want->len)
                fail_msg("%s: a clean end after %zu of the intact %zu bytes", what, got->len,
                         want->len);
}

/* Reads of 4 KiB at offsets inside the reference: its bytes, an error
 * with a message, or nothing past the view's (shorter) size. */
static void expect_reads_at(struct tm_trace *t, const char *view, const struct vt_buf *want,
                            const char *what)
{
        struct tm_err err = {0};
        struct tm_vfile *f;
        uint64_t size = 0;
        if (tm_vfile_open(t, view, &f, &err) != 0)
                return; /* read_all met the same */
        tm_trace_view_size(t, view, &size, &err);
        for (unsigned k = 1; k < 4; k++) {
                uint64_t off = want->len * k / 4;
                uint8_t buf[4096];
                memset(&err, 0, sizeof err);
                ssize_t n = tm_vfile_pread(f, buf, sizeof buf, off, &err);
                if (n < 0 && !err.msg[0])
                        fail_msg("%s at %llu: error without a message", what,
                                 (unsigned long long)off);
                if (n == 0 && off < size)
                        fail_msg("%s at %llu: nothing read inside its size %llu", what,
                                 (unsigned long long)off, (unsigned long long)size);
                if (n > 0 &&
                    (off + (uint64_t)n > want->len || memcmp(buf, want->p + off, (size_t)n) != 0))
                        fail_msg("%s at %llu: %zd bytes that are not the intact archive's", what,
                                 (unsigned long long)off, n);
        }
        tm_vfile_close(f);
}

/* stats or stats.json of a damaged copy: the reference's, an error, or a
 * text that says it is of a damaged trace while the index call fails. */
static void expect_stats(const char *view, struct vt_buf *got, ssize_t r, const struct tm_err *err,
                         const struct vt_buf *want, int ix, const char *what)
{
        if (r < 0) {
                if (!err->msg[0])
                        fail_msg("%s: error %zd without a message", what, r);
                return;
        }
        if (got->len == want->len && memcmp(got->p, want->p, want->len) == 0)
                return;
        vt_put(got, "", 1); /* a NUL: strstr */
        const char *text = (const char *)got->p;
        int says = strcmp(view, "stats") == 0
                       ? strstr(text, "\ndamaged  ") || strstr(text, "\nerror      ")
                       : strstr(text, "\"complete\":false") != NULL;
        if (!says)
                fail_msg("%s: differs from the intact archive's and does not say it is damaged:\n"
                         "%s",
                         what, (const char *)got->p);
        if (ix == 0)
                fail_msg("%s: says damaged, but the index call succeeds", what);
}

/* One damaged copy at path: every view, and the notes member. */
static void walk_copy(const char *path, const struct reference *ref, const char *label,
                      struct tally *ty)
{
        ty->copies++;
        struct tm_err err = {0};
        struct tm_trace *t = open_trace(path, &err);
        if (!t) {
                if (!err.msg[0])
                        fail_msg("%s: open failed without a message", label);
                ty->unopened++;
                return;
        }
        struct tm_err ixe = {0};
        int ix = tm_trace_index(t, NULL, NULL, &ixe);
        if (ix < 0 && !ixe.msg[0])
                fail_msg("%s: the index call failed without a message", label);
        ty->failed_index += ix < 0;
        const char *const *vs = tm_trace_views(t);
        struct vt_buf got = {0};
        char what[600];
        for (size_t i = 0; vs[i]; i++) {
                if (strcmp(vs[i], "errors") == 0)
                        continue;
                snprintf(what, sizeof what, "%s %s", label, vs[i]);
                memset(&err, 0, sizeof err);
                ssize_t r = vt_read_view(t, vs[i], &got, &err);
                ty->reads++;
                ty->errors += r < 0;
                const struct rview *rv = reference_find(ref, vs[i]);
                if (!rv) {
                        if (got.len || r == 0)
                                fail_msg("%s: a view the intact archive lacks serves %zu bytes "
                                         "and %s",
                                         what, got.len, r == 0 ? "ends cleanly" : "then fails");
                        continue;
                }
                if (strcmp(vs[i], "stats") == 0 || strcmp(vs[i], "stats.json") == 0) {
                        expect_stats(vs[i], &got, r, &err, &rv->b, ix, what);
                        continue;
                }
                expect_prefix(&got, r, &err, &rv->b, what);
                expect_reads_at(t, vs[i], &rv->b, what);
        }
        if (ref->has_notes) {
                snprintf(what, sizeof what, "%s members/notes.txt", label);
                memset(&err, 0, sizeof err);
                int r = read_notes(t, &got, &err);
                expect_prefix(&got, r == -ENOENT ? -EIO : r, &err, &ref->notes, what);
        }
        free(got.p);
        tm_trace_close(t);
}

/* The damaged copies of archive a (the trace's member from byte member
 * of a zip, else 0): bits flipped at 9 offsets from the first bytes to
 * the last (and one in the middle of a zip's trace member), cuts at a
 * half and one byte short; each written as path and walked. */
static void damage_all(const struct vt_buf *a, size_t member, const char *path,
                       const struct reference *ref, const char *label, struct tally *ty)
{
        size_t at[12], nat = 0;
        for (unsigned k = 0; k < 9; k++)
                at[nat++] = 1 + (a->len - 3) * k / 8;
        if (member)
                at[nat++] = member + (a->len - member) / 3;
        struct vt_buf c = {0};
        char what[400];
        for (size_t i = 0; i < nat; i++) {
                c.len = 0;
                vt_put(&c, a->p, a->len);
                c.p[at[i]] ^= (uint8_t)(1u << (i * 3 % 8));
                vt_spit(path, c.p, c.len);
                snprintf(what, sizeof what, "%s, bit %zu of byte %zu flipped", label, i * 3 % 8,
                         at[i]);
                walk_copy(path, ref, what, ty);
        }
        size_t cut[2] = {a->len / 2, a->len - 1};
        for (size_t i = 0; i < 2; i++) {
                vt_spit(path, a->p, cut[i]);
                snprintf(what, sizeof what, "%s, cut to %zu bytes", label, cut[i]);
                walk_copy(path, ref, what, ty);
        }
        free(c.p);
}

/* ---- the test ---- */

static void test_every_row(void **state)
{
        (void)state;
        char ok[64] = {0}, dir[2][300];
        snprintf(dir[0], sizeof dir[0], "%s/intact", tmt_dir);
        snprintf(dir[1], sizeof dir[1], "%s/damaged", tmt_dir);
        assert_int_equal(mkdir(dir[0], 0755), 0);
        assert_int_equal(mkdir(dir[1], 0755), 0);
        struct tally ty = {0};
        struct vt_buf raw = {0}, arc = {0};
        static struct reference ref;
        for (size_t x = 0; x < NFIX; x++) {
                make_raw(&fixtures[x], &raw);
                for (enum wrap w = 0; w < W_N; w++) {
                        char name[64], good[400], bad[400], label[200];
                        size_t member;
                        snprintf(name, sizeof name, "%s.%s", fixtures[x].row, wrap_name[w]);
                        snprintf(good, sizeof good, "%s/%s", dir[0], name);
                        snprintf(bad, sizeof bad, "%s/%s", dir[1], name);
                        wrap(&raw, w, &arc, &member);
                        vt_spit(good, arc.p, arc.len);
                        reference_make(good, &ref);
                        struct tm_err err = {0};
                        struct tm_trace *t = open_trace(good, &err);
                        const char *codec = tm_trace_codec(t);
                        for (size_t r = 0; tm_registry()->row[r] && r < sizeof ok; r++)
                                if (strcmp(tm_registry()->row[r]->name, codec) == 0 &&
                                    strcmp(codec, fixtures[x].row) == 0)
                                        ok[r] = 1;
                        tm_trace_close(t);
                        if (strcmp(codec, fixtures[x].row) != 0)
                                fail_msg("%s: read as %s", good, codec);
                        snprintf(label, sizeof label, "%s (%zu raw bytes, %zu archived)", name,
                                 raw.len, arc.len);
                        damage_all(&arc, member, bad, &ref, label, &ty);
                        reference_free(&ref);
                }
        }
        for (size_t r = 0; tm_registry()->row[r]; r++)
                if (r >= sizeof ok || !ok[r])
                        fail_msg("row %s has no fixture here", tm_registry()->row[r]->name);
        print_message("%u damaged copies: %u not opened, %u whose index pass failed; %u views "
                      "read, %u ended in an error; no wrong byte, no clean short end\n",
                      ty.copies, ty.unopened, ty.failed_index, ty.reads, ty.errors);
        assert_true(ty.failed_index + ty.unopened > ty.copies / 2);
        free(raw.p);
        free(arc.p);
}

/* Bytes that rot after the index pass (a disk going bad: the archive's
 * size and time stay, so the index stands): Java's tables, made by a pass
 * of their own after the index pass, meet the rotten frame's checksum and
 * fail with EIO; never tables of fewer records than the index counted,
 * read to a clean end. A byte in each quarter of a seekable zstd archive's
 * frames. */
static void test_rot_tables(void **state)
{
        (void)state;
        static const char *const tables[] = {"sections/classes", "sections/methods"};
        struct vt_buf raw = {0}, arc = {0}, got = {0};
        make_java(&raw);
        make_cwriter(&raw, TM_CONT_ZSTD, &arc);
        char path[300];
        snprintf(path, sizeof path, "%s/rot.zst", tmt_dir);
        vt_spit(path, arc.p, arc.len);
        static struct reference ref;
        reference_make(path, &ref);
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        struct timespec ts[2] = {sb.st_atim, sb.st_mtim};
        for (unsigned k = 1; k < 4; k++) {
                vt_spit(path, arc.p, arc.len);
                assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
                struct tm_err err = {0};
                struct tm_trace *t = open_trace(path, &err);
                assert_non_null(t);
                assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
                size_t at = arc.len * k / 5; /* inside a data frame: the table is at the end */
                uint8_t b = arc.p[at] ^ 0x10;
                int fd = open(path, O_WRONLY);
                assert_int_equal(pwrite(fd, &b, 1, (off_t)at), 1);
                close(fd);
                assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
                for (int i = 0; i < 2; i++) {
                        char what[200];
                        snprintf(what, sizeof what, "rot at byte %zu, %s", at, tables[i]);
                        memset(&err, 0, sizeof err);
                        ssize_t r = vt_read_view(t, tables[i], &got, &err);
                        expect_prefix(&got, r, &err, &reference_find(&ref, tables[i])->b, what);
                        if (r != -EIO)
                                fail_msg("%s: ended with %zd, not EIO", what, r);
                }
                tm_trace_close(t);
        }
        reference_free(&ref);
        free(raw.p);
        free(arc.p);
        free(got.p);
}

int main(void)
{
        setenv("TM_READ_THREADS", "0", 1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_row),
            cmocka_unit_test(test_rot_tables),
        };
        return cmocka_run_group_tests(tests, tmt_group_setup, tmt_group_teardown);
}
