/* glibc mtrace logs (the record codec codecs/heap/mtrace.c, driven here
 * through a reader of the heapin shape below) and heaptrack files
 * (tools/heapin) -> heap events.
 *
 * Real recordings of tests/data/heap/heapprog.c (record.sh makes them),
 * checked event by event against what the program does; hand-made lines
 * for the forms a recording of this machine does not show (no caller, a
 * caller with "] + " in its file name, pre-2.34 '>' lines without a
 * caller, heaptrack file format 2); detection; and bad input, whose
 * messages must name the line. Every input is also read 1 and 7 bytes at a
 * time, to cross the line reader's buffer edges. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codecs/heap/mtrace.h"
#include "tools/heapin/heapin.h"

#define DATA TM_SOURCE_DIR "/tests/data/heap/"
#define EV_MAX 256
#define ATTR_MAX 256

/* ---- harness: read from memory, collect events ---- */

struct src {
        const char *p;
        size_t n, at, piece; /* piece 0: all that is asked */
        size_t fail_at;      /* return -EIO once at reaches it (0: never) */
};

static ssize_t src_read(void *arg, void *buf, size_t n)
{
        struct src *s = arg;
        if (s->fail_at && s->at >= s->fail_at)
                return -EIO;
        size_t k = s->n - s->at;
        if (k > n)
                k = n;
        if (s->piece && k > s->piece)
                k = s->piece;
        memcpy(buf, s->p + s->at, k);
        s->at += k;
        return (ssize_t)k;
}

struct evs {
        size_t n;
        int stop_at; /* return 7 from the callback at this event (-1: never) */
        struct tm_heap_ev ev[EV_MAX];
        char attr[EV_MAX][ATTR_MAX + 1]; /* NUL-terminated copies */
};

static int collect(void *arg, const struct tm_heap_ev *ev)
{
        struct evs *e = arg;
        if ((int)e->n == e->stop_at)
                return 7;
        assert_true(e->n < EV_MAX);
        assert_true(ev->kind < TM_HK_N);
        assert_true(ev->attr_len <= HEAPIN_LINE_MAX);
        if (ev->attr_len)
                assert_non_null(ev->attr);
        e->ev[e->n] = *ev;
        size_t k = ev->attr_len < ATTR_MAX ? ev->attr_len : ATTR_MAX;
        if (k)
                memcpy(e->attr[e->n], ev->attr, k);
        e->attr[e->n][k] = '\0';
        e->ev[e->n].attr = NULL; /* the reader's bytes are gone after the call */
        e->n++;
        return 0;
}

typedef int (*reader_fn)(heapin_read_fn, void *, const char *, heapin_event_fn, void *,
                         struct tm_err *);

static int run(reader_fn rd, const char *text, size_t len, size_t piece, struct evs *e,
               struct tm_err *err)
{
        struct src s = {.p = text, .n = len, .piece = piece};
        memset(err, 0, sizeof *err);
        int stop = e->stop_at;
        memset(e, 0, sizeof *e);
        e->stop_at = stop;
        return rd(src_read, &s, "in.log", collect, e, err);
}

/* Read text whole, then 1 and 7 bytes at a time: the same result each
 * time, left in *e (and *err); returns the reader's result. */
static int run_all(reader_fn rd, const char *text, size_t len, struct evs *e, struct tm_err *err)
{
        static struct evs other;
        struct tm_err err2;
        other.stop_at = e->stop_at;
        int rc = run(rd, text, len, 0, e, err);
        static const size_t pieces[] = {1, 7};
        for (size_t i = 0; i < 2; i++) {
                int rc2 = run(rd, text, len, pieces[i], &other, &err2);
                assert_int_equal(rc2, rc);
                assert_int_equal(other.n, e->n);
                assert_string_equal(err2.msg, err->msg);
                for (size_t k = 0; k < e->n; k++) {
                        assert_int_equal(other.ev[k].kind, e->ev[k].kind);
                        assert_int_equal(other.ev[k].addr, e->ev[k].addr);
                        assert_int_equal(other.ev[k].time, e->ev[k].time);
                        assert_string_equal(other.attr[k], e->attr[k]);
                }
        }
        return rc;
}

static int run_str(reader_fn rd, const char *text, struct evs *e, struct tm_err *err)
{
        e->stop_at = -1;
        return run_all(rd, text, strlen(text), e, err);
}

/* The reader must fail with code and a message holding each of the
 * NULL-terminated strings that follow. */
static void expect_error(reader_fn rd, const char *text, int code, ...)
{
        static struct evs e;
        struct tm_err err;
        int rc = run_str(rd, text, &e, &err);
        if (rc != code)
                fail_msg("got %d (%s), want %d, for: %.60s", rc, err.msg, code, text);
        assert_int_equal(err.code, code);
        va_list ap;
        va_start(ap, code);
        for (const char *want; (want = va_arg(ap, const char *));)
                if (!strstr(err.msg, want))
                        fail_msg("message '%s' lacks '%s'", err.msg, want);
        va_end(ap);
}

static char *load(const char *path, size_t *len)
{
        FILE *f = fopen(path, "rb");
        if (!f)
                fail_msg("cannot open %s", path);
        static char buf[1 << 16];
        *len = fread(buf, 1, sizeof buf, f);
        assert_true(*len < sizeof buf);
        fclose(f);
        buf[*len] = '\0';
        return buf;
}

static void expect_ev(const struct evs *e, size_t i, unsigned kind, uint64_t size)
{
        if (i >= e->n)
                fail_msg("event %zu missing (%zu events)", i, e->n);
        if (e->ev[i].kind != kind)
                fail_msg("event %zu: kind %u, want %u", i, e->ev[i].kind, kind);
        if (kind != TM_HK_FREE && kind != TM_HK_COMMENT && e->ev[i].size != size)
                fail_msg("event %zu: size %llu, want %llu", i, (unsigned long long)e->ev[i].size,
                         (unsigned long long)size);
        assert_int_equal(e->ev[i].thread, 0);
        assert_int_equal(e->ev[i].heap, 0);
}

/* ---- mtrace ---- */

/* The mtrace record codec behind heapin's reader interface: input taken
 * as rd gives it (1 or 7 bytes at a time in run_all), decoded as a view's
 * feed does, at most 3 records a call, the unconsumed tail kept. */
static int codec_mtrace(heapin_read_fn rd, void *rarg, const char *name, heapin_event_fn fn,
                        void *arg, struct tm_err *err)
{
        (void)name;
        const struct tm_rcodec *c = &tm_rcodec_mtrace;
        static uint8_t buf[2 * (TM_MTRACE_LINE_MAX + 1) + 64];
        size_t have = 0;
        uint64_t raw = 0;
        int eof = 0;
        struct tm_rstate st;
        struct tm_schema sch;
        void *ctx;
        int rc = c->open(buf, 0, NULL, &ctx, &sch, &st, err);
        if (rc < 0)
                return rc;
        while (!eof) {
                ssize_t k = rd(rarg, buf + have, sizeof buf - have);
                if (k < 0)
                        return (int)k;
                eof = k == 0;
                have += (size_t)k;
                for (size_t cap = 3;;) {
                        struct tm_rec recs[3];
                        size_t used = 0;
                        struct tm_rstate st0 = st;
                        ssize_t n = c->decode(ctx, &st, buf, have, eof, raw, &used, recs, cap, err);
                        if (n < 0 && cap > 1) {
                                /* as the index pass does: the batch again,
                                 * a record at a time, up to the bad one */
                                st = st0;
                                cap = 1;
                                continue;
                        }
                        if (n < 0)
                                return (int)n;
                        for (ssize_t i = 0; i < n; i++) {
                                struct tm_heap_ev ev;
                                tm_heap_rec_to_ev(&recs[i], &ev);
                                if ((rc = fn(arg, &ev)) != 0)
                                        return rc;
                        }
                        memmove(buf, buf + used, have - used);
                        have -= used;
                        raw += used;
                        if (n == 0 && used == 0)
                                break;
                }
                assert_true(have < sizeof buf); /* a line pair always fits */
        }
        if (have)
                fail_msg("the codec left %zu bytes at the end: %.40s", have, (char *)buf);
        return 0;
}

static void test_mtrace_recording(void **unused)
{
        (void)unused;
        size_t len;
        const char *text = load(DATA "heapprog.mtrace", &len);
        static struct evs e;
        struct tm_err err;
        e.stop_at = -1;
        assert_int_equal(run_all(codec_mtrace, text, len, &e, &err), 0);
        assert_int_equal(e.n, 19);
        const struct tm_heap_ev *v = e.ev;

        expect_ev(&e, 0, TM_HK_ALLOC, 17);
        uint64_t a = v[0].addr;
        assert_int_not_equal(a, 0);
        assert_int_equal(v[0].time, 2); /* line 2: line 1 is '= Start' */
        assert_true(strncmp(e.attr[0], "./heapprog:[0x", 14) == 0);
        assert_int_equal(e.attr[0][strlen(e.attr[0]) - 1], ']');

        /* realloc(a, 4000) moved it: one event, at the '<' line's number */
        expect_ev(&e, 1, TM_HK_REALLOC_ALLOC_FREE, 4000);
        assert_int_equal(v[1].addr, a);
        uint64_t a2 = v[1].new_addr;
        assert_int_not_equal(a2, a);
        assert_int_not_equal(a2, 0);
        assert_int_equal(v[1].time, 3);
        assert_true(strncmp(e.attr[1], "./heapprog:[0x", 14) == 0);

        expect_ev(&e, 2, TM_HK_ALLOC, 24); /* calloc(3, 8) */
        uint64_t b = v[2].addr;
        assert_int_equal(v[2].time, 5);
        expect_ev(&e, 3, TM_HK_ALLOC, 100); /* realloc(NULL, 100): glibc logs '+' */
        uint64_t c = v[3].addr;
        expect_ev(&e, 4, TM_HK_REALLOC, 50); /* shrunk in place */
        assert_int_equal(v[4].addr, c);
        assert_int_equal(v[4].new_addr, c);
        expect_ev(&e, 5, TM_HK_FREE, 0);
        assert_int_equal(v[5].addr, a2);
        expect_ev(&e, 6, TM_HK_ALLOC, 0); /* malloc(0) */
        expect_ev(&e, 7, TM_HK_FREE, 0);
        assert_int_equal(v[7].addr, v[6].addr);
        expect_ev(&e, 8, TM_HK_FREE, 0); /* realloc(b, 0): glibc logs '-' */
        assert_int_equal(v[8].addr, b);
        expect_ev(&e, 9, TM_HK_COMMENT, 0); /* malloc(1 << 62) failed */
        /* a comment holds the line as glibc wrote it */
        static const char failed[] = "@ ./heapprog:[0x";
        assert_true(strncmp(e.attr[9], failed, sizeof failed - 1) == 0);
        static const char tail[] = "] + (nil) 0x4000000000000000";
        assert_string_equal(e.attr[9] + strlen(e.attr[9]) - (sizeof tail - 1), tail);
        expect_ev(&e, 10, TM_HK_ALLOC, 128); /* aligned_alloc(64, 128) */
        assert_int_equal(v[10].addr % 64, 0);
        expect_ev(&e, 11, TM_HK_FREE, 0);
        assert_int_equal(v[11].addr, v[10].addr);
        expect_ev(&e, 12, TM_HK_ALLOC, 48); /* posix_memalign(32, 48) */
        assert_int_equal(v[12].addr % 32, 0);
        expect_ev(&e, 13, TM_HK_FREE, 0);
        assert_int_equal(v[13].addr, v[12].addr);
        expect_ev(&e, 14, TM_HK_COMMENT, 0); /* realloc(c, 1 << 62) failed */
        char want[96];
        snprintf(want, sizeof want, "] ! %#llx 0x4000000000000000", (unsigned long long)c);
        assert_non_null(strstr(e.attr[14], want));
        expect_ev(&e, 15, TM_HK_FREE, 0);
        assert_int_equal(v[15].addr, c);
        expect_ev(&e, 16, TM_HK_ALLOC, 6); /* strdup("hello"), called from libc */
        assert_non_null(strstr(e.attr[16], "libc.so.6:(__strdup+"));
        expect_ev(&e, 17, TM_HK_FREE, 0);
        assert_int_equal(v[17].addr, v[16].addr);
        expect_ev(&e, 18, TM_HK_ALLOC, 33);

        /* time is the line number: increasing, and the last alloc is on the
         * line before '= End' */
        for (size_t i = 1; i < e.n; i++)
                if (v[i].kind != TM_HK_COMMENT)
                        assert_true(v[i].time > v[i - 1].time || v[i - 1].kind == TM_HK_COMMENT);
        assert_int_equal(v[18].time, 22);
}

static void test_mtrace_forms(void **unused)
{
        (void)unused;
        static struct evs e;
        struct tm_err err;
        /* no caller (glibc had none), a caller not in any object, a size of 0 */
        assert_int_equal(
            run_str(codec_mtrace, "+ 0x10 0x5\n@ [0x7f0012] - 0x10\n+ 0x20 0\n", &e, &err), 0);
        assert_int_equal(e.n, 3);
        expect_ev(&e, 0, TM_HK_ALLOC, 5);
        assert_int_equal(e.ev[0].addr, 0x10);
        assert_int_equal(e.ev[0].attr_len, 0);
        assert_int_equal(e.ev[0].time, 1);
        expect_ev(&e, 1, TM_HK_FREE, 0);
        assert_string_equal(e.attr[1], "[0x7f0012]");
        expect_ev(&e, 2, TM_HK_ALLOC, 0);

        /* a file name holding "] + " and spaces: the last "] op " ends it */
        assert_int_equal(
            run_str(codec_mtrace, "@ /a dir/x] + y:(f+1a)[0x10] - 0xffffffffffffffff\n", &e, &err),
            0);
        assert_int_equal(e.n, 1);
        expect_ev(&e, 0, TM_HK_FREE, 0);
        assert_string_equal(e.attr[0], "/a dir/x] + y:(f+1a)[0x10]");
        assert_true(e.ev[0].addr == UINT64_MAX);

        /* glibc before 2.34 wrote '>' without the caller; the pair takes
         * the caller of '<' */
        assert_int_equal(
            run_str(codec_mtrace, "= Start\n@ ./p:[0x1] < 0x10\n> 0x30 0x40\n= End\n", &e, &err),
            0);
        assert_int_equal(e.n, 1);
        expect_ev(&e, 0, TM_HK_REALLOC_ALLOC_FREE, 0x40);
        assert_int_equal(e.ev[0].addr, 0x10);
        assert_int_equal(e.ev[0].new_addr, 0x30);
        assert_int_equal(e.ev[0].time, 2);
        assert_string_equal(e.attr[0], "./p:[0x1]");

        /* the outcomes glibc never writes as a pair, by hand */
        assert_int_equal(
            run_str(codec_mtrace, "< (nil)\n> 0x30 0x40\n< 0x30\n> (nil) 0\n", &e, &err), 0);
        assert_int_equal(e.n, 2);
        expect_ev(&e, 0, TM_HK_REALLOC_ALLOC, 0x40);
        assert_int_equal(e.ev[0].addr, 0);
        assert_int_equal(e.ev[0].new_addr, 0x30);
        expect_ev(&e, 1, TM_HK_REALLOC_FREE, 0);
        assert_int_equal(e.ev[1].addr, 0x30);
        assert_int_equal(e.ev[1].new_addr, 0);
        assert_int_equal(e.ev[1].time, 3);

        /* failed calls without a caller */
        assert_int_equal(run_str(codec_mtrace, "+ (nil) 0x40\n! 0x10 0x50\n", &e, &err), 0);
        assert_int_equal(e.n, 2);
        expect_ev(&e, 0, TM_HK_COMMENT, 0);
        assert_string_equal(e.attr[0], "+ (nil) 0x40");
        expect_ev(&e, 1, TM_HK_COMMENT, 0);
        assert_string_equal(e.attr[1], "! 0x10 0x50");

        /* an empty log, and one that only starts */
        assert_int_equal(run_str(codec_mtrace, "", &e, &err), 0);
        assert_int_equal(e.n, 0);
        assert_int_equal(run_str(codec_mtrace, "= Start\n", &e, &err), 0);
        assert_int_equal(e.n, 0);
}

static void test_mtrace_errors(void **unused)
{
        (void)unused;
        expect_error(codec_mtrace, "= Start\n@ ./p:[0x1] < 0x10\n@ ./p:[0x1] + 0x20 0x5\n", -EIO,
                     "raw offset 27: mtrace line 3:", "not followed by its '>'", NULL);
        expect_error(codec_mtrace, "= Start\n< 0x10\n", -EIO, "line 2:", "ends after", NULL);
        expect_error(codec_mtrace, "> 0x10 0x5\n", -EIO, "line 1:", "without", NULL);
        expect_error(codec_mtrace, "= Start\nhello\n", -EIO, "line 2:", "raw offset 8",
                     "not an mtrace line", NULL);
        expect_error(codec_mtrace, "+ 0x10\n", -EIO, "line 1:", "missing size", NULL);
        expect_error(codec_mtrace, "- 0x10 0x5\n", -EIO, "line 1:", "text after", NULL);
        expect_error(codec_mtrace, "+ 0x10 0x5 0x6\n", -EIO, "line 1:", "text after", NULL);
        expect_error(codec_mtrace, "+ 0xzz 0x5\n", -EIO, "bad address", NULL);
        expect_error(codec_mtrace, "+ 0x10 5\n", -EIO, "bad size", NULL);
        expect_error(codec_mtrace, "- 0x10000000000000000\n", -EIO, "bad address", NULL);
        expect_error(codec_mtrace, "@ ./p:[0x1]\n", -EIO, "line 1:", "no operation", NULL);
        expect_error(codec_mtrace, "= Begin\n", -EIO, "unknown '=' line", NULL);
        expect_error(codec_mtrace, "= Start\n+ 0x10 0x5", -EIO, "line 2:", "truncated", NULL);
        expect_error(codec_mtrace, "= Start\n+ 0x10 0x5\r\n", -EIO, "line 2:", NULL);

        /* a line over TM_MTRACE_LINE_MAX, after a good one */
        size_t n = TM_MTRACE_LINE_MAX + 100;
        static char big[TM_MTRACE_LINE_MAX + 200];
        strcpy(big, "+ 0x10 0x5\n@ ");
        memset(big + 13, 'x', n);
        strcpy(big + 13 + n, "] - 0x10\n");
        expect_error(codec_mtrace, big, -EIO, "line 2:", "longer than 65535", NULL);
        /* and one exactly at the limit is fine */
        strcpy(big, "@ ");
        memset(big + 2, 'x', TM_MTRACE_LINE_MAX - 2 - 8);
        strcpy(big + TM_MTRACE_LINE_MAX - 8, "] - 0x10\n");
        assert_int_equal(strlen(big), TM_MTRACE_LINE_MAX + 1);
        static struct evs e;
        struct tm_err err;
        assert_int_equal(run_str(codec_mtrace, big, &e, &err), 0);
        assert_int_equal(e.n, 1);
        assert_int_equal(e.ev[0].attr_len, TM_MTRACE_LINE_MAX - 9);

        memset(&e, 0, sizeof e);
        /* the callback stops the reader with its own value */
        e.stop_at = 1;
        assert_int_equal(
            run_all(codec_mtrace, "+ 0x10 0x5\n+ 0x20 0x5\n+ 0x30 0x5\n", 33, &e, &err), 7);
        assert_int_equal(e.n, 1);
}

/* ---- heaptrack ---- */

/* What heapprog does as heaptrack records it, from malloc(17) on: a
 * realloc is '-' then '+'; realloc(b, 0), failed calls and free(NULL)
 * leave nothing. idx: which earlier event's address a free frees. */
static const struct {
        unsigned kind;
        uint64_t size;
        int frees; /* index in this table of the alloc freed, or -1 */
} ht_want[] = {
    {TM_HK_ALLOC, 17, -1},   /* 0  a = malloc(17) */
    {TM_HK_FREE, 0, 0},      /* 1  realloc(a, 4000): free a, */
    {TM_HK_ALLOC, 4000, -1}, /* 2    then alloc */
    {TM_HK_ALLOC, 24, -1},   /* 3  calloc(3, 8) */
    {TM_HK_ALLOC, 100, -1},  /* 4  realloc(NULL, 100) */
    {TM_HK_FREE, 0, 4},      /* 5  realloc(c, 50) */
    {TM_HK_ALLOC, 50, -1},   /* 6 */
    {TM_HK_FREE, 0, 2},      /* 7  free(a) */
    {TM_HK_ALLOC, 0, -1},    /* 8  malloc(0) */
    {TM_HK_FREE, 0, 8},      /* 9 */
    {TM_HK_ALLOC, 128, -1},  /* 10 aligned_alloc(64, 128) */
    {TM_HK_FREE, 0, 10},     /* 11 */
    {TM_HK_ALLOC, 48, -1},   /* 12 posix_memalign(32, 48) */
    {TM_HK_FREE, 0, 12},     /* 13 */
    {TM_HK_FREE, 0, 6},      /* 14 free(c), after the pause */
    {TM_HK_ALLOC, 6, -1},    /* 15 strdup */
    {TM_HK_FREE, 0, 15},     /* 16 */
    {TM_HK_ALLOC, 33, -1},   /* 17 the leak */
};
#define HT_WANT (sizeof ht_want / sizeof ht_want[0])

static void check_heaptrack_recording(const char *path, int synthetic)
{
        size_t len;
        const char *text = load(path, &len);
        static struct evs e;
        struct tm_err err;
        e.stop_at = -1;
        int rc = run_all(heapin_heaptrack, text, len, &e, &err);
        if (rc != 0)
                fail_msg("%s: %s", path, err.msg);
        const struct tm_heap_ev *v = e.ev;

        /* the command line comes first, as a comment */
        expect_ev(&e, 0, TM_HK_COMMENT, 0);
        assert_string_equal(e.attr[0], "heaptrack command line: ./heapprog");

        /* before main: what the loaded libraries allocate */
        size_t m = 1;
        while (m < e.n && !(v[m].kind == TM_HK_ALLOC && v[m].size == 17))
                m++;
        assert_true(m + HT_WANT <= e.n);
        for (size_t i = 0; i < HT_WANT; i++) {
                expect_ev(&e, m + i, ht_want[i].kind, ht_want[i].size);
                if (ht_want[i].frees >= 0)
                        assert_int_equal(v[m + i].addr, v[m + ht_want[i].frees].addr);
                if (ht_want[i].kind == TM_HK_ALLOC) {
                        assert_int_not_equal(v[m + i].addr, 0);
                        assert_true(strncmp(e.attr[m + i], "trace=0x", 8) == 0);
                } else {
                        assert_int_equal(e.ev[m + i].attr_len, 0);
                }
        }
        if (synthetic) {
                /* the n-th allocation of the file is at 16 n */
                uint64_t k = 0;
                for (size_t i = 0; i < e.n; i++)
                        if (v[i].kind == TM_HK_ALLOC)
                                assert_int_equal(v[i].addr, ++k * 16);
        } else {
                assert_int_equal(v[m + 10].addr % 64, 0);
                assert_int_equal(v[m + 12].addr % 32, 0);
        }
        /* realloc(c, 50) shrank in place: heaptrack's raw file shows the
         * same address again, the synthetic one a new one */
        if (synthetic)
                assert_int_not_equal(v[m + 6].addr, v[m + 4].addr);
        else
                assert_int_equal(v[m + 6].addr, v[m + 4].addr);

        /* time: heaptrack's milliseconds, never going back, and the 60 ms
         * pause between events 13 and 14 shows */
        for (size_t i = 1; i < e.n; i++)
                if (v[i].kind != TM_HK_COMMENT)
                        assert_true(v[i].time >= v[i - 1].time);
        assert_true(v[m + 14].time >= v[m + 13].time + 40);
        assert_true(v[m + 14].time >= 50);
}

static void test_heaptrack_interpreted(void **unused)
{
        (void)unused;
        check_heaptrack_recording(DATA "heapprog.heaptrack", 1);
}

static void test_heaptrack_raw(void **unused)
{
        (void)unused;
        check_heaptrack_recording(DATA "heapprog.heaptrack.raw", 0);
}

static void test_heaptrack_forms(void **unused)
{
        (void)unused;
        static struct evs e;
        struct tm_err err;
        /* file format 2 (heaptrack 1.1/1.2: strings without their length);
         * two live objects of one info: a free takes the latest */
        static const char v2[] = "v 10200 2\nX ./t a\nI 1000 10\ns ./t\ni 1 1 1\nt 1 0\n"
                                 "a 10 1\n+ 0\n+ 0\na 20 1\n+ 1\nc 5\n- 0\n- 1\nc a\n- 0\n"
                                 "\n# strings: 1\n";
        assert_int_equal(run_str(heapin_heaptrack, v2, &e, &err), 0);
        assert_int_equal(e.n, 7);
        expect_ev(&e, 0, TM_HK_COMMENT, 0);
        assert_string_equal(e.attr[0], "heaptrack command line: ./t a");
        expect_ev(&e, 1, TM_HK_ALLOC, 16);
        assert_int_equal(e.ev[1].addr, 0x10);
        assert_string_equal(e.attr[1], "trace=0x1");
        assert_int_equal(e.ev[1].time, 0);
        expect_ev(&e, 2, TM_HK_ALLOC, 16);
        assert_int_equal(e.ev[2].addr, 0x20);
        expect_ev(&e, 3, TM_HK_ALLOC, 32);
        assert_int_equal(e.ev[3].addr, 0x30);
        expect_ev(&e, 4, TM_HK_FREE, 0);
        assert_int_equal(e.ev[4].addr, 0x20);
        assert_int_equal(e.ev[4].time, 5);
        expect_ev(&e, 5, TM_HK_FREE, 0);
        assert_int_equal(e.ev[5].addr, 0x30);
        expect_ev(&e, 6, TM_HK_FREE, 0);
        assert_int_equal(e.ev[6].addr, 0x10);
        assert_int_equal(e.ev[6].time, 10);

        /* raw, attached: frees of what was allocated before are kept */
        assert_int_equal(run_str(heapin_heaptrack,
                                 "v 10400 3\nx 3 ./t\nX ./t\nA\nm 1 -\n- 55aa00\nt 400 0\n"
                                 "+ 28 1 55bb00\n",
                                 &e, &err),
                         0);
        assert_int_equal(e.n, 4);
        expect_ev(&e, 1, TM_HK_COMMENT, 0);
        assert_non_null(strstr(e.attr[1], "attached"));
        expect_ev(&e, 2, TM_HK_FREE, 0);
        assert_int_equal(e.ev[2].addr, 0x55aa00);
        expect_ev(&e, 3, TM_HK_ALLOC, 40);
        assert_int_equal(e.ev[3].addr, 0x55bb00);

        /* lines the reader passes over may be longer than HEAPIN_LINE_MAX */
        size_t n = HEAPIN_LINE_MAX * 2 + 10;
        static char big[HEAPIN_LINE_MAX * 3 + 100];
        strcpy(big, "v 10400 3\ns ");
        memset(big + 12, 'f', n);
        strcpy(big + 12 + n, "\na 8 1\n+ 0\n");
        assert_int_equal(run_str(heapin_heaptrack, big, &e, &err), 0);
        assert_int_equal(e.n, 1);
        expect_ev(&e, 0, TM_HK_ALLOC, 8);
        /* but not one that carries events; its number counts the long one */
        strcpy(big + 12 + n, "\n+ ");
        memset(big + 15 + n, '1', HEAPIN_LINE_MAX);
        strcpy(big + 15 + n + HEAPIN_LINE_MAX, "\n");
        expect_error(heapin_heaptrack, big, -EIO, "line 3 ", "longer than", NULL);
        /* nor the first line, which must be the version */
        memset(big, 's', HEAPIN_LINE_MAX + 1);
        strcpy(big + HEAPIN_LINE_MAX + 1, "\nv 10400 3\n");
        expect_error(heapin_heaptrack, big, -EIO, "line 1 ", "longer than", NULL);
}

static void test_heaptrack_errors(void **unused)
{
        (void)unused;
        expect_error(heapin_heaptrack, "v 10600 4\nX ./t\n", -ENOTSUP, "in.log: line 1 ",
                     "version 4", "heaptrack 1.6.0", NULL);
        expect_error(heapin_heaptrack, "v 10200\n", -ENOTSUP, "line 1 ", "version 1", NULL);
        expect_error(heapin_heaptrack, "X ./t\n", -EIO, "line 1 ", "not a heaptrack file", NULL);
        expect_error(heapin_heaptrack, "", -EIO, "empty", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\na 10 1\n+ 5\n", -EIO, "line 3 ",
                     "allocation info 5", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\na 10 1\n+ 0\n- 0\n- 0\n", -EIO, "line 5 ",
                     "no live allocation", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\nx 3 abc\na 10 1\n", -EIO, "line 3 ",
                     "'a' line in a raw file", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\ns 1 a\n+ 10 1 5\n", -EIO, "line 3 ",
                     "interpreted", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\n- 10\n", -EIO, "line 2 ", "'-' before", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\nx 3 abc\n+ 10 1 5", -EIO, "line 3 ",
                     "byte offset 18", "truncated", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\nQ what\n", -EIO, "line 2 ",
                     "unknown line type 'Q'", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\nx 3 abc\n+ 1g 1 2\n", -EIO, "line 3 ",
                     "bad '+' line", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\nx 3 abc\n+ 1 2\n", -EIO, "bad '+' line", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\nc\n", -EIO, "line 2 ", "bad 'c' line", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\nc  5\n", -EIO, "bad 'c' line", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\nv 10400 3\n", -EIO, "line 2 ", "second", NULL);
        expect_error(heapin_heaptrack, "v 10400 3\n\x01\n", -EIO, "unknown line type '?'", NULL);
}

/* ---- detection ---- */

static void test_detect(void **unused)
{
        (void)unused;
        static const char *const files[][2] = {
            {"heapprog.mtrace", "mtrace"},
            {"heapprog.heaptrack", "heaptrack"},
            {"heapprog.heaptrack.raw", "heaptrack"},
        };
        /* mtrace is a record codec, found by the registry's probe */
        for (size_t i = 0; i < 3; i++) {
                char path[512];
                size_t len;
                snprintf(path, sizeof path, DATA "%s", files[i][0]);
                const char *text = load(path, &len);
                const uint8_t *h = (const uint8_t *)text;
                size_t n = len < 4096 ? len : 4096;
                const struct tm_rcodec *rc = tm_rcodec_probe(h, n);
                const char *got = rc ? rc->name : heapin_detect(h, n);
                assert_non_null(got);
                assert_string_equal(got, files[i][1]);
        }
#define P(s) (tm_rcodec_probe((const uint8_t *)(s), sizeof(s) - 1) == &tm_rcodec_mtrace)
        assert_true(P("= Start\n@ ./p:[0x1] + 0x10 0x5\n"));
        assert_true(P("@ ./p:[0x1] + 0x10 0x5\n")); /* a log's tail */
        assert_true(P("- 0x10\n"));
        assert_false(P("= Sta")); /* a head cut inside its first line */
        assert_false(P("= Start\nhello\n")); /* every whole line must parse */
        assert_false(P("= Started\n"));
        assert_false(P("0 1000\n2 430d70\n")); /* din */
#undef P
#define D(s) heapin_detect((const uint8_t *)(s), sizeof(s) - 1)
        assert_string_equal(D("v 10400 3\nX ./t\n"), "heaptrack");
        assert_string_equal(D("v 10600 4\n"), "heaptrack"); /* rejected by the reader */
        assert_null(D(""));
        assert_null(D("hello\n"));
        assert_null(D("+ 11 8 55aa\n")); /* a heaptrack line, no version line */
        assert_null(D("v 1040g 3\n"));
        assert_null(D("= Started\n"));
        assert_null(D("\x00\x01HATF\n"));
        assert_null(D("0 1000\n2 430d70\n")); /* din */
#undef D
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_mtrace_recording), cmocka_unit_test(test_mtrace_forms),
            cmocka_unit_test(test_mtrace_errors),    cmocka_unit_test(test_heaptrack_interpreted),
            cmocka_unit_test(test_heaptrack_raw),    cmocka_unit_test(test_heaptrack_forms),
            cmocka_unit_test(test_heaptrack_errors), cmocka_unit_test(test_detect),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
