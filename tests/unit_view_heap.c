/* unit_view_heap: the views (views/records.c) of HATF archives: every view read
 * whole and at random offsets equals what this test renders itself with
 * snprintf from the events it wrote; the stats' Table 3 figures equal an
 * independent count; corrupt archives give -EIO naming the offset. The
 * HATF bytes are written here by hand (fixed widths set by metadata), not
 * by the library's encoder, so the decoder is checked against a second
 * writer. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "codecs/containers/container.h"
#include "codecs/heap/hatf.h"
#include "views/ixfile.h"
#include "views/readahead.h"
#include "views/records.h"
#include "codecs/metatf/dtd.h"
#include "views/view.h"
#include "view_test.h"

struct buf {
        uint8_t *p;
        size_t len, cap;
};

static void put(struct buf *b, const void *src, size_t n)
{
        if (b->len + n > b->cap) {
                b->cap = (b->len + n) * 2 + 4096;
                b->p = realloc(b->p, b->cap);
                assert_non_null(b->p);
        }
        memcpy(b->p + b->len, src, n);
        b->len += n;
}

static void put_be(struct buf *b, uint64_t v, unsigned n)
{
        uint8_t t[8];
        for (unsigned i = 0; i < n; i++)
                t[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
        put(b, t, n);
}

static uint64_t rng = 1;
static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

struct ev {
        unsigned kind;
        uint64_t size, addr, new_addr, thread, time;
        char attr[24];
};

/* Events of a small allocator-like program: allocs, frees of live
 * objects, the four realloc outcomes, threads, a comment. */
static size_t gen(struct ev *ev, size_t n)
{
        uint64_t live[256];
        size_t nlive = 0, k = 0;
        uint64_t next = 0x5555aaaa0000ull, t = 1000;
        ev[k++] = (struct ev){.kind = TM_HK_CREATE_THREAD, .thread = 7, .time = t};
        while (k < n - 1) {
                struct ev e = {.thread = 7 + rnd() % 3, .time = t += rnd() % 50};
                unsigned r = (unsigned)(rnd() % 100);
                if (r < 45 || nlive == 0) {
                        e.kind = TM_HK_ALLOC;
                        e.size = r < 30 ? 16 + rnd() % 64 : rnd() % 100000;
                        e.addr = next;
                        next += (e.size + 15) & ~15ull;
                        if (nlive < 256)
                                live[nlive++] = e.addr;
                } else if (r < 85) {
                        size_t i = rnd() % nlive;
                        e.kind = TM_HK_FREE;
                        e.addr = live[i];
                        live[i] = live[--nlive];
                } else {
                        size_t i = rnd() % nlive;
                        e.kind = TM_HK_REALLOC + (unsigned)(rnd() % 4);
                        e.size = 1 + rnd() % 5000;
                        e.addr = e.kind == TM_HK_REALLOC_ALLOC ? 0 : live[i];
                        e.new_addr = e.kind == TM_HK_REALLOC        ? e.addr
                                     : e.kind == TM_HK_REALLOC_FREE ? 0
                                                                    : (next += 8192);
                        if (e.kind == TM_HK_REALLOC_FREE) {
                                e.size = 0;
                                live[i] = live[--nlive];
                        } else if (e.kind == TM_HK_REALLOC_ALLOC) {
                                if (nlive < 256)
                                        live[nlive++] = e.new_addr;
                        } else {
                                live[i] = e.new_addr;
                        }
                }
                if (rnd() % 4 == 0)
                        snprintf(e.attr, sizeof e.attr, "caller:%u%s", (unsigned)(rnd() % 9),
                                 rnd() % 2 ? " x%" : "");
                ev[k++] = e;
        }
        ev[k++] = (struct ev){.kind = TM_HK_COMMENT};
        snprintf(ev[k - 1].attr, sizeof ev[k - 1].attr, "end of run");
        return k;
}

/* HATF with fixed widths: size 4, address 8, thread 2, time 8 (delta,
 * to check signed offsets on the way), attributes v1. */
/* The HATF encoding of ev; when starts is not NULL, starts[i] gets the
 * raw offset of record i. */
static void hatf_write_at(struct buf *b, const struct ev *ev, size_t n, uint64_t *starts)
{
        static const uint8_t sig[] = {10, 0, 8, 'H', 'A', 'T', 'F', ' ', '1', '.', '0'};
        put(b, sig, sizeof sig);
        const uint8_t meta[][4] = {{11, 1, HATF_F_ADDRESS, 8}, {11, 1, HATF_F_THREAD, 2},
                                   {11, 2, HATF_F_THREAD, 0},  {11, 1, HATF_F_TIME, 8},
                                   {11, 1, HATF_F_ATTR, 9},    {11, 2, HATF_F_ATTR, 0}};
        for (unsigned i = 0; i < 6; i++)
                put(b, meta[i], 4);
        const uint8_t delta[4] = {11, 2, HATF_F_TIME, HATF_I_DELTA};
        put(b, delta, 4);
        put_be(b, 900, 8); /* initial value */
        uint64_t prev_t = 900;
        for (size_t i = 0; i < n; i++) {
                const struct ev *e = &ev[i];
                if (starts)
                        starts[i] = b->len;
                uint8_t tag = (uint8_t)e->kind;
                put(b, &tag, 1);
                size_t al = strlen(e->attr);
                if (e->kind == TM_HK_COMMENT) {
                        put_be(b, al, 2);
                        put(b, e->attr, al);
                        continue;
                }
                if (e->kind == TM_HK_ALLOC || tm_heap_is_realloc(e->kind))
                        put_be(b, e->size, 4);
                if (e->kind <= TM_HK_REALLOC_FREE)
                        put_be(b, e->addr, 8);
                if (tm_heap_is_realloc(e->kind))
                        put_be(b, e->new_addr, 8);
                put_be(b, e->thread, 2);
                if (e->kind != TM_HK_CREATE_THREAD)
                        put_be(b, 0 /* heap: default 0, width 0 */, 0);
                put_be(b, e->time - prev_t, 8);
                prev_t = e->time;
                put_be(b, al, 1);
                put(b, e->attr, al);
        }
}

static void hatf_write(struct buf *b, const struct ev *ev, size_t n)
{
        hatf_write_at(b, ev, n, NULL);
}

static void token(struct buf *b, const char *s)
{
        if (!*s) {
                put(b, "-", 1);
                return;
        }
        for (; *s; s++) {
                char t[4];
                if (*s > 0x20 && *s < 0x7f && *s != '%') {
                        put(b, s, 1);
                } else {
                        snprintf(t, sizeof t, "%%%02X", (unsigned char)*s);
                        put(b, t, 3);
                }
        }
}

/* The ascii line of e, the test's own way. */
static void line(struct buf *b, const struct ev *e)
{
        char t[256];
        int n;
        const char *name = tm_schema_heap.kind[e->kind].name;
        if (e->kind == TM_HK_COMMENT) {
                put(b, "comment ", 8);
                token(b, e->attr);
                put(b, "\n", 1);
                return;
        }
        if (e->kind == TM_HK_ALLOC)
                n = snprintf(t, sizeof t, "%s %" PRIu64 " 0x%" PRIx64 " %" PRIu64 " 0 %" PRIu64 " ",
                             name, e->size, e->addr, e->thread, e->time);
        else if (e->kind == TM_HK_FREE)
                n = snprintf(t, sizeof t, "%s 0x%" PRIx64 " %" PRIu64 " 0 %" PRIu64 " ", name,
                             e->addr, e->thread, e->time);
        else if (tm_heap_is_realloc(e->kind))
                n = snprintf(t, sizeof t,
                             "%s %" PRIu64 " 0x%" PRIx64 " 0x%" PRIx64 " %" PRIu64 " 0 %" PRIu64
                             " ",
                             name, e->size, e->addr, e->new_addr, e->thread, e->time);
        else
                n = snprintf(t, sizeof t, "%s %" PRIu64 " %" PRIu64 " ", name, e->thread, e->time);
        put(b, t, (size_t)n);
        token(b, e->attr);
        put(b, "\n", 1);
}

static const char *tmpdir;

static int setup(void **state)
{
        (void)state;
        static char dir[] = "/tmp/tm_rview_XXXXXX";
        tmpdir = mkdtemp(dir);
        return tmpdir ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
        return system(cmd);
}

static void write_archive(const char *path, enum tm_cont_kind kind, const struct buf *raw)
{
        struct tm_err err = {0};
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        struct tm_cwriter_opts wo = {.level = 3, .frame_size = 4096};
        struct tm_cwriter *w;
        assert_int_equal(tm_cwriter_open(fd, path, kind, &wo, &w, &err), 0);
        assert_int_equal(tm_cwriter_write(w, raw->p, raw->len, &err), 0);
        assert_int_equal(tm_cwriter_close(w, &err), 0);
        close(fd);
}

/* A zstd archive of raw in frames of frame_size raw bytes that end
 * between records (n of them, starting at starts[]). */
static void write_framed(const char *path, const struct buf *raw, const uint64_t *starts, size_t n,
                         size_t frame_size)
{
        struct tm_err err = {0};
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        struct tm_cwriter_opts wo = {.level = 1, .frame_size = frame_size};
        struct tm_cwriter *w;
        assert_int_equal(tm_cwriter_open(fd, path, TM_CONT_ZSTD, &wo, &w, &err), 0);
        for (size_t i = 0; i <= n; i++) {
                uint64_t a = i ? starts[i - 1] : 0, e = i < n ? starts[i] : raw->len;
                assert_int_equal(tm_cwriter_write(w, raw->p + a, (size_t)(e - a), &err), 0);
                assert_int_equal(tm_cwriter_boundary(w, &err), 0);
        }
        assert_int_equal(tm_cwriter_close(w, &err), 0);
        close(fd);
}

/* The whole view through tm_vfile_pread in chunks of chunk bytes: 0 and
 * *out, or the first error (the bytes before it in *out). */
static int try_read_view(struct tm_trace *t, const char *view, size_t chunk, struct buf *out,
                         struct tm_err *err)
{
        struct tm_vfile *f;
        int rc = tm_vfile_open(t, view, &f, err);
        if (rc < 0)
                return rc;
        uint64_t size;
        const size_t start = out->len; /* appended to what out holds */
        char *tmp = malloc(chunk);
        rc = tm_trace_view_size(t, view, &size, err);
        while (rc == 0) {
                ssize_t k = tm_vfile_pread(f, tmp, chunk, out->len - start, err);
                if (k <= 0) {
                        rc = (int)k;
                        break;
                }
                put(out, tmp, (size_t)k);
        }
        free(tmp);
        if (rc == 0 && out->len - start != size)
                rc = tm_err_set(err, -EIO, "%s: %zu bytes, size %llu", view, out->len - start,
                                (unsigned long long)size);
        tm_vfile_close(f);
        return rc;
}

static struct buf read_view(struct tm_trace *t, const char *view, size_t chunk)
{
        struct tm_err err = {0};
        struct buf b = {0};
        if (try_read_view(t, view, chunk, &b, &err) < 0)
                fail_msg("read %s at %zu: %s", view, b.len, err.msg);
        return b;
}

/* Random reads of a view, and reads forward with gaps, equal the same
 * bytes of expect. */
static void random_reads(struct tm_trace *t, const char *view, const struct buf *expect)
{
        struct tm_err err = {0};
        struct tm_vfile *f;
        assert_int_equal(tm_vfile_open(t, view, &f, &err), 0);
        char tmp[700];
        for (int i = 0; i < 300; i++) {
                uint64_t off = expect->len ? rnd() % expect->len : 0;
                size_t n = 1 + rnd() % sizeof tmp;
                ssize_t k = tm_vfile_pread(f, tmp, n, off, &err);
                if (k < 0)
                        fail_msg("%s at %" PRIu64 ": %s", view, off, err.msg);
                size_t want = expect->len - off < n ? (size_t)(expect->len - off) : n;
                assert_int_equal((size_t)k, want);
                assert_memory_equal(tmp, expect->p + off, want);
        }
        /* forward with gaps, within a line and across records: the
         * cursor skips on from where it is (rv_seek) */
        for (uint64_t off = 0; off < expect->len;) {
                size_t n = 1 + rnd() % 64;
                ssize_t k = tm_vfile_pread(f, tmp, n, off, &err);
                if (k <= 0)
                        fail_msg("%s at %" PRIu64 ": %s", view, off, k ? err.msg : "end");
                size_t want = expect->len - off < n ? (size_t)(expect->len - off) : n;
                assert_int_equal((size_t)k, want);
                assert_memory_equal(tmp, expect->p + off, want);
                off += (uint64_t)k + rnd() % 300;
        }
        tm_vfile_close(f);
}

static void check_trace(const char *path, const struct ev *ev, size_t n)
{
        struct tm_err err = {0};
        struct tm_trace *t;
        struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = 7};
        if (tm_trace_open(path, &o, &t, &err) < 0)
                fail_msg("%s", err.msg);
        assert_string_equal(tm_trace_codec(t), "hatf");

        struct buf ascii = {0}, alloc = {0}, sizes = {0}, attrs = {0};
        for (size_t i = 0; i < n; i++) {
                line(&ascii, &ev[i]);
                if (ev[i].kind == TM_HK_ALLOC)
                        line(&alloc, &ev[i]);
                if (ev[i].kind == TM_HK_ALLOC || tm_heap_is_realloc(ev[i].kind)) {
                        char s[32];
                        put(&sizes, s, (size_t)snprintf(s, sizeof s, "%" PRIu64 "\n", ev[i].size));
                }
                if (ev[i].kind != TM_HK_COMMENT) {
                        token(&attrs, ev[i].attr);
                        put(&attrs, "\n", 1);
                }
        }
        struct buf got = read_view(t, "ascii", 4096);
        assert_int_equal(got.len, ascii.len);
        assert_memory_equal(got.p, ascii.p, ascii.len);
        free(got.p);
        got = read_view(t, "ascii", 13); /* small reads continue mid-line */
        assert_memory_equal(got.p, ascii.p, ascii.len);
        free(got.p);
        got = read_view(t, "streams/alloc", 1000);
        assert_int_equal(got.len, alloc.len);
        assert_memory_equal(got.p, alloc.p, alloc.len);
        free(got.p);
        got = read_view(t, "fields/size", 1000);
        assert_int_equal(got.len, sizes.len);
        assert_memory_equal(got.p, sizes.p, sizes.len);
        free(got.p);
        got = read_view(t, "fields/attributes", 1000);
        assert_int_equal(got.len, attrs.len);
        assert_memory_equal(got.p, attrs.p, attrs.len);
        free(got.p);
        struct buf t8 = {0};
        for (size_t i = 0; i < n; i++)
                if (ev[i].kind != TM_HK_COMMENT && ev[i].thread == 8)
                        line(&t8, &ev[i]);
        got = read_view(t, "streams/thread/8", 333);
        assert_int_equal(got.len, t8.len);
        assert_memory_equal(got.p, t8.p, t8.len);
        free(got.p);
        random_reads(t, "streams/thread/8", &t8);
        free(t8.p);
        unsigned nthr = 0;
        for (const char *const *v = tm_trace_views(t); *v; v++)
                nthr += strncmp(*v, "streams/thread/", 15) == 0;
        assert_int_equal(nthr, 3); /* threads 7, 8, 9 */
        random_reads(t, "ascii", &ascii);
        random_reads(t, "streams/alloc", &alloc);
        random_reads(t, "fields/size", &sizes);

        /* binary: record i's slots hold its fields, little-endian */
        got = read_view(t, "binary", 999);
        size_t w = 8 + 8 * TM_HF_N;
        assert_int_equal(got.len, n * w);
        for (size_t i = 0; i < n; i++) {
                const uint8_t *r = got.p + i * w;
                uint64_t slot[TM_HF_N];
                for (unsigned f = 0; f < TM_HF_N; f++) {
                        slot[f] = 0;
                        for (unsigned j = 0; j < 8; j++)
                                slot[f] |= (uint64_t)r[8 + 8 * f + j] << (8 * j);
                }
                assert_int_equal(r[0], ev[i].kind);
                if (ev[i].kind != TM_HK_COMMENT) {
                        assert_int_equal(slot[TM_HF_THREAD], ev[i].thread);
                        assert_int_equal(slot[TM_HF_TIME], ev[i].time);
                        assert_int_equal(slot[TM_HF_ATTRIBUTES], strlen(ev[i].attr));
                }
                if (ev[i].kind <= TM_HK_REALLOC_FREE)
                        assert_int_equal(slot[TM_HF_ADDRESS], ev[i].addr);
                if (tm_heap_is_realloc(ev[i].kind))
                        assert_int_equal(slot[TM_HF_NEW_ADDRESS], ev[i].new_addr);
        }
        struct buf bin = got;
        random_reads(t, "binary", &bin);
        free(bin.p);

        /* stats: Table 3's counts, counted here */
        uint64_t allocs = 0, frees = 0, reallocs = 0, bytes = 0;
        for (size_t i = 0; i < n; i++) {
                allocs += ev[i].kind == TM_HK_ALLOC;
                frees += ev[i].kind == TM_HK_FREE;
                reallocs += tm_heap_is_realloc(ev[i].kind);
                if (ev[i].kind == TM_HK_ALLOC ||
                    (tm_heap_is_realloc(ev[i].kind) && ev[i].kind != TM_HK_REALLOC_FREE))
                        bytes += ev[i].size;
        }
        got = read_view(t, "stats", 100);
        put(&got, "", 1);
        char want[128];
        snprintf(want, sizeof want, "total allocs       %" PRIu64 "\n", allocs);
        assert_non_null(strstr((char *)got.p, want));
        snprintf(want, sizeof want, "total frees        %" PRIu64 "\n", frees);
        assert_non_null(strstr((char *)got.p, want));
        snprintf(want, sizeof want, "total reallocs     %" PRIu64 "\n", reallocs);
        assert_non_null(strstr((char *)got.p, want));
        snprintf(want, sizeof want, "total bytes        %" PRIu64 "\n", bytes);
        assert_non_null(strstr((char *)got.p, want));
        free(got.p);

        got = read_view(t, "schema", 64);
        put(&got, "", 1);
        assert_non_null(strstr((char *)got.p, "alloc : (tag, size, address, thread, heap, time, "
                                              "vfield) {\n    tag.value = 4; // hatf tag 0"));
        /* it is a DTD the Meta-TF parser and compiler accept */
        static struct mtf_dtd dtd;
        static struct mtf_layout lay;
        if (mtf_dtd_parse(&dtd, "schema", (char *)got.p, got.len - 1, &err) < 0 ||
            mtf_dtd_compile(&dtd, &lay, &err) < 0)
                fail_msg("schema view: %s", err.msg);
        int kalloc = -1;
        for (unsigned k = 0; k < lay.nkinds; k++)
                if (strcmp(lay.kind[k].name, "alloc") == 0)
                        kalloc = (int)k;
        assert_true(kalloc >= 0);
        assert_int_equal(lay.kind[kalloc].tag, 4);
        assert_int_equal(lay.kind[kalloc].nleaves, 8); /* tag, 5 numbers, vfield = length + data */
        free(got.p);
        free(ascii.p);
        free(alloc.p);
        free(sizes.p);
        free(attrs.p);
        tm_trace_close(t);
}

static void test_views(void **state)
{
        (void)state;
        static struct ev ev[3000];
        rng = 42;
        size_t n = gen(ev, sizeof ev / sizeof ev[0]);
        struct buf raw = {0};
        hatf_write(&raw, ev, n);
        char path[256];
        snprintf(path, sizeof path, "%s/a.hatf", tmpdir);
        write_archive(path, TM_CONT_PLAIN, &raw);
        check_trace(path, ev, n);
        snprintf(path, sizeof path, "%s/a.hatf.zst", tmpdir);
        write_archive(path, TM_CONT_ZSTD, &raw);
        check_trace(path, ev, n);
        free(raw.p);
}

/* A trace whose checkpoint interval is longer than TM_RA_SEG_MAX (one
 * interval here: ~7 MB of ascii) is still read ahead, in pieces: a
 * sequential reader's bytes equal the test's own rendering, with one
 * worker (each piece goes on from the last) and with three, and the
 * segment buffers stay within their bound. Workers beyond the first take
 * no piece inside an interval, which they would reach only by decoding
 * from its checkpoint what the first worker decodes anyway (counted by
 * tm_ra_far_starts), except the piece a reader waits for when no cursor
 * is heading there: a read that starts mid-interval. With two intervals
 * and two workers, each takes one, from its checkpoint. */
static void test_readahead_pieces(void **state)
{
        (void)state;
        enum { N = 250000, CHUNK = 128 << 10 };
        struct ev *ev = malloc(N * sizeof *ev);
        assert_non_null(ev);
        rng = 77;
        size_t n = gen(ev, N);
        struct buf raw = {0}, ascii = {0};
        hatf_write(&raw, ev, n);
        for (size_t i = 0; i < n; i++)
                line(&ascii, &ev[i]);
        assert_true(ascii.len > TM_RA_SEG_MAX + TM_RA_PIECE);
        char path[256];
        /* plain: no restart points, whose checkpoints would cut the interval */
        snprintf(path, sizeof path, "%s/long.hatf", tmpdir);
        write_archive(path, TM_CONT_PLAIN, &raw);
        static const struct {
                const char *threads;
                uint64_t ckpt;  /* records between checkpoints */
                int mid;        /* start reading mid-interval */
                unsigned slots; /* the bound on segment buffers */
                int far;        /* far starts: 0 none, 1 some */
        } cf[] = {
            {"1", 1u << 30, 0, 1 + 3, 0},
            {"3", 1u << 30, 0, 3 + 3, 0},
            {"3", 1u << 30, 1, 3 + 3, 1},
            /* intervals of 0.6 N and 0.4 N records: 3 and 2 pieces */
            {"2", N * 3 / 5, 0, 2 + 3 + 3, 0},
        };
        char *tmp = malloc(CHUNK);
        assert_non_null(tmp);
        for (unsigned k = 0; k < sizeof cf / sizeof cf[0]; k++) {
                setenv("TM_READ_THREADS", cf[k].threads, 1);
                struct tm_err err = {0};
                struct tm_trace *t;
                struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = cf[k].ckpt};
                if (tm_trace_open(path, &o, &t, &err) < 0)
                        fail_msg("%s", err.msg);
                struct tm_vfile *f;
                assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
                uint64_t off = cf[k].mid ? ascii.len / 3 : 0, peak = 0;
                unsigned far0 = tm_ra_far_starts();
                for (;;) {
                        ssize_t got = tm_vfile_pread(f, tmp, CHUNK, off, &err);
                        if (got < 0)
                                fail_msg("ascii at %" PRIu64 ": %s", off, err.msg);
                        if (got == 0)
                                break;
                        assert_true(off + (uint64_t)got <= ascii.len);
                        assert_memory_equal(tmp, ascii.p + off, (size_t)got);
                        off += (uint64_t)got;
                        uint64_t m = tm_ra_mem_in_use();
                        peak = m > peak ? m : peak;
                }
                assert_int_equal(off, ascii.len);
                assert_true(peak > 0); /* it did read ahead */
                assert_true(peak <= (uint64_t)cf[k].slots * (TM_RA_PIECE + 4096));
                tm_vfile_close(f);
                assert_int_equal(tm_ra_mem_in_use(), 0);
                unsigned far = tm_ra_far_starts() - far0;
                if (cf[k].far)
                        assert_true(far > 0);
                else
                        assert_int_equal(far, 0);
                tm_trace_close(t);
        }
        unsetenv("TM_READ_THREADS");
        free(tmp);
        free(ascii.p);
        free(raw.p);
        free(ev);
}

/* The ascii offsets (aoff[]) of the records (n, starting at starts[])
 * at or after each restart point of the archive at path, after want[0] =
 * 0 (the first record): returns how many, at most 64; *exact gets how
 * many points are exactly a record's start. */
static size_t point_offsets(const char *path, const uint64_t *starts, size_t n,
                            const uint64_t *aoff, uint64_t want[64], size_t *exact)
{
        struct tm_err err = {0};
        struct tm_cont *c;
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(tm_cont_open(fd, path, &c, &err), 0);
        size_t nw = 1, j = 0;
        want[0] = 0;
        *exact = 0;
        for (uint64_t p = 0; tm_cont_next_point(c, p, &p);) {
                while (j < n && starts[j] < p)
                        j++;
                assert_true(j < n && nw < 64);
                *exact += starts[j] == p;
                want[nw++] = aoff[j];
        }
        tm_cont_close(c);
        close(fd);
        return nw;
}

/* Checkpoints at the container's restart points (views/index.h): in a
 * zstd archive in the seekable format, the first record at or after each
 * point starts a checkpoint, also once the spacing has doubled
 * (TM_CKPT_CAP reached), and the readahead's intervals are exactly those
 * (tm_records_segments): with frames that end between records (pack's) and
 * with frames cut inside records. Read ahead by two workers, the ascii
 * equals the test's own rendering, and no worker starts away from its
 * cursor and from a checkpoint. */
static void test_aligned_checkpoints(void **state)
{
        (void)state;
        enum { N = 200000, CHUNK = 128 << 10 };
        struct ev *ev = malloc(N * sizeof *ev);
        uint64_t *starts = malloc(N * sizeof *starts), *aoff = malloc((N + 1) * sizeof *aoff);
        uint64_t want[64];
        char *tmp = malloc(CHUNK);
        assert_true(ev && starts && aoff && tmp);
        rng = 31;
        size_t n = gen(ev, N);
        struct buf raw = {0}, ascii = {0};
        hatf_write_at(&raw, ev, n, starts);
        for (size_t i = 0; i < n; i++) {
                aoff[i] = ascii.len;
                line(&ascii, &ev[i]);
        }
        aoff[n] = ascii.len;
        setenv("TM_READ_THREADS", "2", 1);
        for (unsigned v = 0; v < 2; v++) {
                char path[256];
                snprintf(path, sizeof path, "%s/al%u.hatf.zst", tmpdir, v);
                if (v == 0)
                        write_framed(path, &raw, starts, n, 1u << 20);
                else /* frames of 1 MiB + 4 KiB, cut wherever that falls */
                        write_archive(path, TM_CONT_ZSTD, &raw);
                struct tm_err err = {0};
                size_t exact, nw = point_offsets(path, starts, n, aoff, want, &exact);
                assert_true(nw >= 4);
                assert_int_equal(exact, v == 0 ? nw - 1 : 0);
                /* 16: 12,500 checkpoints, more than TM_CKPT_CAP */
                static const uint64_t spacing[] = {4096, 16};
                for (unsigned k = 0; k < 2; k++) {
                        struct tm_trace *t;
                        struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = spacing[k]};
                        if (tm_trace_open(path, &o, &t, &err) < 0 ||
                            tm_trace_index(t, NULL, NULL, &err) < 0)
                                fail_msg("%s", err.msg);
                        uint32_t ns;
                        uint64_t *seg = tm_records_segments(t, "ascii", &ns);
                        assert_non_null(seg);
                        assert_int_equal(ns, nw);
                        assert_memory_equal(seg, want, nw * sizeof *want);
                        free(seg);
                        struct tm_vfile *f;
                        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
                        uint64_t off = 0, peak = 0;
                        unsigned far0 = tm_ra_far_starts();
                        ssize_t got;
                        while ((got = tm_vfile_pread(f, tmp, CHUNK, off, &err)) > 0) {
                                assert_true(off + (uint64_t)got <= ascii.len);
                                assert_memory_equal(tmp, ascii.p + off, (size_t)got);
                                off += (uint64_t)got;
                                uint64_t m = tm_ra_mem_in_use();
                                peak = m > peak ? m : peak;
                        }
                        if (got < 0)
                                fail_msg("ascii at %" PRIu64 ": %s", off, err.msg);
                        assert_int_equal(off, ascii.len);
                        assert_true(peak > 0);
                        assert_int_equal(tm_ra_far_starts() - far0, 0);
                        tm_vfile_close(f);
                        tm_trace_close(t);
                }
        }
        unsetenv("TM_READ_THREADS");
        free(tmp);
        free(ascii.p);
        free(raw.p);
        free(aoff);
        free(starts);
        free(ev);
}

/* Over the index's size budget (the default spacing), the checkpoints at
 * restart points alone, as many as fit: every one, or every second, third
 * and so on; the read-ahead's intervals are then those, and the views
 * read the same. A trace of small, regular records compresses well, so
 * its budget holds fewer checkpoints than it has frames. */
static void test_points_budget(void **state)
{
        (void)state;
        enum { N = 400000, CHUNK = 128 << 10 };
        struct ev *ev = malloc(N * sizeof *ev);
        uint64_t *starts = malloc(N * sizeof *starts), *aoff = malloc((N + 1) * sizeof *aoff);
        uint64_t want[64];
        assert_true(ev && starts && aoff);
        rng = 5;
        uint64_t addr = 0x10000, t = 1000;
        for (size_t i = 0; i < N; i++) {
                ev[i] = (struct ev){.kind = TM_HK_ALLOC, .size = 16 + rnd() % 8,
                                    .thread = 7, .time = t += 1 + rnd() % 4};
                ev[i].addr = addr += 32;
        }
        struct buf raw = {0}, ascii = {0};
        hatf_write_at(&raw, ev, N, starts);
        for (size_t i = 0; i < N; i++) {
                aoff[i] = ascii.len;
                line(&ascii, &ev[i]);
        }
        char path[256];
        snprintf(path, sizeof path, "%s/budget.hatf.zst", tmpdir);
        write_framed(path, &raw, starts, N, 1u << 20);
        struct tm_err err = {0};
        size_t exact, nw = point_offsets(path, starts, N, aoff, want, &exact);
        assert_int_equal(exact, nw - 1); /* frames end between records */
        struct tm_trace *tr;
        struct tm_trace_opts o = {.no_save = 1};
        if (tm_trace_open(path, &o, &tr, &err) < 0 || tm_trace_index(tr, NULL, NULL, &err) < 0)
                fail_msg("%s", err.msg);
        uint32_t ns;
        uint64_t *seg = tm_records_segments(tr, "ascii", &ns);
        assert_non_null(seg);
        printf("[ budget ] %zu restart points, %u kept\n", nw - 1, ns - 1);
        assert_true(ns >= 2 && ns < nw);
        size_t step = 1; /* every step-th of them, from the first */
        while (step < nw && want[step] != seg[1])
                step++;
        assert_true(step > 1 && (ns - 1) * step < nw && ns * step >= nw);
        for (uint32_t i = 0; i < ns; i++)
                assert_int_equal(seg[i], want[i * step]);
        free(seg);
        struct buf got = read_view(tr, "ascii", CHUNK);
        assert_int_equal(got.len, ascii.len);
        assert_memory_equal(got.p, ascii.p, ascii.len);
        free(got.p);
        tm_trace_close(tr);
        free(ascii.p);
        free(raw.p);
        free(aoff);
        free(starts);
        free(ev);
}

/* A cut or corrupted archive: the intact records read fine, the read at
 * the damage is -EIO naming the raw offset. */
static void test_corrupt(void **state)
{
        (void)state;
        static struct ev ev[200];
        rng = 7;
        size_t n = gen(ev, sizeof ev / sizeof ev[0]);
        struct buf raw = {0};
        hatf_write(&raw, ev, n);
        char path[256];
        snprintf(path, sizeof path, "%s/cut.hatf", tmpdir);
        struct buf cut = raw;
        cut.len = raw.len - 3;
        write_archive(path, TM_CONT_PLAIN, &cut);
        struct tm_err err = {0};
        struct tm_trace *t;
        struct tm_trace_opts o = {.no_save = 1, .ckpt_refs = 7};
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        uint64_t size;
        assert_int_equal(tm_trace_view_size(t, "ascii", &size, &err), 0); /* the prefix */
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        assert_non_null(strstr(err.msg, "raw offset"));
        assert_non_null(strstr(err.msg, "cut.hatf"));
        tm_trace_close(t);

        /* A bad tag where record n/2 starts: the message names that offset
         * (HATF has no checksum: a bad byte inside a record can decode as
         * other values; docs/formats/hatf.md). */
        struct buf half = {0};
        hatf_write(&half, ev, n / 2);
        raw.p[half.len] = 0xee;
        snprintf(path, sizeof path, "%s/bad.hatf", tmpdir);
        write_archive(path, TM_CONT_PLAIN, &raw);
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        char want[64];
        snprintf(want, sizeof want, "raw offset %zu: unknown record tag 238", half.len);
        if (!strstr(err.msg, want))
                fail_msg("%s: want %s", err.msg, want);
        free(half.p);
        assert_non_null(strstr(err.msg, "raw offset"));
        tm_trace_close(t);
        free(raw.p);
}

/* ascii of the trace at path, read whole through a fresh tm_trace that
 * keeps its index in dir; *src says whether the index was loaded. */
static char ix_path[512]; /* the index file the last call used */

static struct buf ascii_with_index(const char *path, const char *dir, enum tm_index_source *src)
{
        struct tm_err err = {0};
        struct tm_trace *t;
        struct tm_trace_opts o = {.cache_dir = dir, .no_index_beside = 1, .ckpt_refs = 5};
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        if (tm_trace_index(t, NULL, NULL, &err) < 0)
                fail_msg("%s", err.msg);
        *src = tm_trace_index_source(t);
        assert_non_null(tm_trace_index_path(t));
        snprintf(ix_path, sizeof ix_path, "%s", tm_trace_index_path(t));
        struct buf b = read_view(t, "ascii", 777);
        struct buf st = read_view(t, "stats", 777);
        vt_drop_side_files(st.p, &st.len); /* the forged files refused */
        put(&b, st.p, st.len);
        free(st.p);
        tm_trace_close(t);
        return b;
}

/* Verify the trace at path with its index file in dir: 0 or the error,
 * whose message is in *err. */
static int verify_with(const char *path, const char *dir, struct tm_err *err)
{
        struct tm_trace *t;
        struct tm_trace_opts o = {.cache_dir = dir, .no_index_beside = 1, .ckpt_refs = 5};
        assert_int_equal(tm_trace_open(path, &o, &t, err), 0);
        int rc = tm_trace_verify(t, NULL, NULL, err);
        tm_trace_close(t);
        return rc;
}

/* Bytes of the index file at ix_path flipped one at a time, with the CRC
 * written in again as a forger would: whenever the loader takes such a
 * file (structure cannot prove decoder states or statistics), `verify`
 * must say that it differs from the archive, naming it, unless the flip
 * changed nothing (a byte after a name's NUL): then the views read with
 * it must be want's. */
static void forged_index_verify(const char *path, const char *dir, const struct buf *want)
{
        struct tm_err err = {0};
        assert_int_equal(verify_with(path, dir, &err), 0);
        int fd = open(ix_path, O_RDWR);
        assert_true(fd >= 0);
        struct stat sb;
        assert_int_equal(fstat(fd, &sb), 0);
        unsigned loaded = 0;
        const off_t step = sb.st_size / 400 | 1; /* ~400 places over every part */
        for (off_t off = 64; off < sb.st_size; off += step) {
                uint8_t b, crc[4], old[4];
                uint32_t c;
                assert_int_equal(pread(fd, &b, 1, off), 1);
                assert_int_equal(pread(fd, old, 4, 12), 4);
                b ^= 0x01;
                assert_int_equal(pwrite(fd, &b, 1, off), 1);
                assert_int_equal(tm_ixfile_crc(fd, TM_IXFILE_CRC_FROM, (uint64_t)sb.st_size, &c), 0);
                for (int i = 0; i < 4; i++)
                        crc[i] = (uint8_t)(c >> (8 * i));
                assert_int_equal(pwrite(fd, crc, 4, 12), 4);
                struct tm_trace *t;
                struct tm_trace_opts o = {
                    .cache_dir = dir, .no_index_beside = 1, .no_save = 1, .ckpt_refs = 5};
                assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
                assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
                int took = tm_trace_index_source(t) == TM_INDEX_LOADED;
                struct buf got = {0};
                int bad = 0; /* the views failed to read: not silently wrong */
                if (took)
                        bad = try_read_view(t, "ascii", 777, &got, &err) < 0 ||
                              try_read_view(t, "stats", 777, &got, &err) < 0;
                tm_trace_close(t);
                memset(&err, 0, sizeof err);
                int v = took ? verify_with(path, dir, &err) : 0;
                if (took && v == 0 &&
                    (bad || got.len != want->len || memcmp(got.p, want->p, want->len) != 0))
                        fail_msg("byte %lld flipped, CRC fixed: other views (%d, %zu of %zu "
                                 "bytes: %s), and verify passes",
                                 (long long)off, bad, got.len, want->len, err.msg);
                if (took && v != 0 &&
                    (v != -EIO || !strstr(err.msg, "index differs") || !strstr(err.msg, ix_path)))
                        fail_msg("byte %lld flipped, CRC fixed: verify said: %s", (long long)off,
                                 err.msg);
                loaded += took && v != 0;
                free(got.p);
                b ^= 0x01;
                assert_int_equal(pwrite(fd, &b, 1, off), 1);
                assert_int_equal(pwrite(fd, old, 4, 12), 4);
        }
        close(fd);
        printf("[ verify ] %u forged index files loaded and found by verify\n", loaded);
        assert_true(loaded > 0);
        assert_int_equal(verify_with(path, dir, &err), 0);
}

/* The index is saved, loaded the next time (nothing decoded), and a
 * damaged or foreign index file is detected and rebuilt. */
static void test_index_file(void **state)
{
        (void)state;
        static struct ev ev[2000];
        rng = 99;
        size_t n = gen(ev, sizeof ev / sizeof ev[0]);
        struct buf raw = {0};
        hatf_write(&raw, ev, n);
        char path[256], dir[256];
        snprintf(path, sizeof path, "%s/ix.hatf.zst", tmpdir);
        snprintf(dir, sizeof dir, "%s/ixcache", tmpdir);
        write_archive(path, TM_CONT_ZSTD, &raw);
        enum tm_index_source src;
        struct buf first = ascii_with_index(path, dir, &src);
        assert_int_equal(src, TM_INDEX_BUILT);
        struct buf again = ascii_with_index(path, dir, &src);
        assert_int_equal(src, TM_INDEX_LOADED);
        assert_int_equal(again.len, first.len);
        assert_memory_equal(again.p, first.p, first.len);
        free(again.p);
        forged_index_verify(path, dir, &first);
        /* flip one byte in the middle of the index file: rebuilt, same bytes */
        int fd = open(ix_path, O_RDWR);
        assert_true(fd >= 0);
        uint8_t b;
        assert_int_equal(pread(fd, &b, 1, 300), 1);
        b ^= 0x40;
        assert_int_equal(pwrite(fd, &b, 1, 300), 1);
        close(fd);
        again = ascii_with_index(path, dir, &src);
        assert_int_equal(src, TM_INDEX_BUILT);
        assert_memory_equal(again.p, first.p, first.len);
        free(again.p);
        again = ascii_with_index(path, dir, &src);
        assert_int_equal(src, TM_INDEX_LOADED);
        free(again.p);
        /* another archive of the same size and kind put in its place: its
         * own index, never the old one's (mtime / inode differ) */
        rng = 100;
        n = gen(ev, sizeof ev / sizeof ev[0]);
        raw.len = 0;
        hatf_write(&raw, ev, n);
        char tmp[300];
        snprintf(tmp, sizeof tmp, "%s.new", path);
        write_archive(tmp, TM_CONT_ZSTD, &raw);
        assert_int_equal(rename(tmp, path), 0);
        again = ascii_with_index(path, dir, &src);
        assert_int_equal(src, TM_INDEX_BUILT);
        struct buf want = {0};
        for (size_t i = 0; i < n; i++)
                line(&want, &ev[i]);
        assert_memory_equal(again.p, want.p, want.len);
        free(want.p);
        free(again.p);
        free(first.p);
        free(raw.p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_views),
            cmocka_unit_test(test_index_file),
            cmocka_unit_test(test_corrupt),
            cmocka_unit_test(test_readahead_pieces),
            cmocka_unit_test(test_aligned_checkpoints),
            cmocka_unit_test(test_points_budget),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
