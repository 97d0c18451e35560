/* Unit tests of tracetool record's pure parts: the interposer's HATF
 * encoding (tools/record/rec_wire.h) byte for byte and through the
 * library's HATF decoder, the realloc outcome rule, TM_RECORD_FD parsing,
 * and record.c's LD_PRELOAD value and library search. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "codecs/heap/hatf.h"
#include "codecs/heap/heap.h"
#include "tools/record/rec_wire.h"
#include "tools/record/record.h"
#include "tools/record/reorder.h"

static void test_record_bytes(void **state)
{
        (void)state;
        uint8_t r[RECW_MAX_LEN];
        static const uint8_t alloc[] = {0,    0, 0,    0,    0,    0,    0,    0,    17, /* size */
                                        0,    0, 0x55, 0xd0, 0xc2, 0xa4, 0xb2, 0xa0, /* address */
                                        0,    0, 0x12, 0x34,                         /* thread */
                                        0,    0, 0,    0,    0,    0,    0,    42,   /* seq */
                                        0x01, 2, 3,    4,    5,    6,    7,    8};   /* time */
        assert_int_equal(recw_alloc(r, 17, 0x55d0c2a4b2a0, 0x1234, 42, 0x0102030405060708), 37);
        assert_memory_equal(r, alloc, sizeof alloc);

        static const uint8_t fr[] = {1, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 7, 0, 0,
                                     0, 0, 0, 0, 0, 8, 0, 0,    0, 0, 0, 0, 0, 9};
        assert_int_equal(recw_free(r, 0x1000, 7, 8, 9), RECW_FREE_LEN);
        assert_memory_equal(r, fr, sizeof fr);

        assert_int_equal(recw_realloc(r, RECW_REALLOC_MOVED, 40, 0x10, 0x20, 3, 4, 5), 45);
        assert_int_equal(r[0], 3);
        assert_int_equal(r[8], 40);
        assert_int_equal(r[16], 0x10);
        assert_int_equal(r[24], 0x20);
        assert_int_equal(r[28], 3);
        assert_int_equal(r[36], 4);
        assert_int_equal(r[44], 5);
}

/* Header plus one record of each kind, through tm_rcodec_hatf. */
static void test_decoded_by_hatf(void **state)
{
        (void)state;
        uint8_t buf[512];
        size_t n = 0;
        memcpy(buf, recw_header, sizeof recw_header);
        n += sizeof recw_header;
        n += recw_alloc(buf + n, 17, 0x7f0000001000, 4242, 1, 100);
        n += recw_realloc(buf + n, RECW_REALLOC_INPLACE, 8, 0x7f0000001000, 0x7f0000001000, 4242, 2,
                          200);
        n += recw_realloc(buf + n, RECW_REALLOC_MOVED, 4096, 0x7f0000001000, 0x7f0000002000, 4243,
                          3, 300);
        n += recw_realloc(buf + n, RECW_REALLOC_ALLOC, 40, 0, 0x30, 4243, 4, 400);
        n += recw_note(buf + n, 64, "fork", 4, NULL);
        n += recw_realloc(buf + n, RECW_REALLOC_FREE, 0, 0x30, 0, 4243, 5, 500);
        n += recw_free(buf + n, 0x7f0000002000, 4242, 6, 600);

        assert_int_equal(tm_rcodec_hatf.probe(buf, n), TM_BID_MAGIC);
        struct tm_schema schema;
        struct tm_rstate st;
        struct tm_err err = {0};
        void *ctx;
        int h = tm_rcodec_hatf.open(buf, n, "t.hatf", &ctx, &schema, &st, &err);
        assert_true(h >= 0);
        struct tm_rec rec[16];
        size_t used = 0, got = 0, at = (size_t)h;
        while (at < n) {
                ssize_t k = tm_rcodec_hatf.decode(ctx, &st, buf + at, n - at, 1, at, &used,
                                                  rec + got, 16 - got, &err);
                assert_true(k >= 0);
                if (used == 0)
                        break;
                got += (size_t)k;
                at += used;
        }
        tm_rcodec_hatf.close(ctx);
        assert_int_equal(at, n);
        /* The signature may or may not be a record: skip comments (the
         * mark, the notice; the notice's text checked). */
        struct tm_heap_ev ev[16];
        size_t m = 0, notes = 0;
        for (size_t i = 0; i < got; i++) {
                if (rec[i].kind != TM_HK_COMMENT) {
                        tm_heap_rec_to_ev(&rec[i], &ev[m++]);
                        continue;
                }
                struct tm_heap_ev c;
                tm_heap_rec_to_ev(&rec[i], &c);
                if (c.attr_len == 17 && memcmp(c.attr, "tmrecord fork 4 -", 17) == 0)
                        notes++;
        }
        assert_int_equal(notes, 1);
        assert_int_equal(m, 6);
        for (size_t i = 0; i < m; i++)
                assert_int_equal(ev[i].heap, i + 1); /* the sequence rides in heap */
        assert_int_equal(ev[0].kind, TM_HK_ALLOC);
        assert_int_equal(ev[0].size, 17);
        assert_int_equal(ev[0].addr, 0x7f0000001000);
        assert_int_equal(ev[0].thread, 4242);
        assert_int_equal(ev[0].time, 100);
        assert_int_equal(ev[0].attr_len, 0);
        assert_int_equal(ev[1].kind, TM_HK_REALLOC);
        assert_int_equal(ev[2].kind, TM_HK_REALLOC_ALLOC_FREE);
        assert_int_equal(ev[2].size, 4096);
        assert_int_equal(ev[2].addr, 0x7f0000001000);
        assert_int_equal(ev[2].new_addr, 0x7f0000002000);
        assert_int_equal(ev[2].thread, 4243);
        assert_int_equal(ev[2].time, 300);
        assert_int_equal(ev[3].kind, TM_HK_REALLOC_ALLOC);
        assert_int_equal(ev[4].kind, TM_HK_REALLOC_FREE);
        assert_int_equal(ev[4].new_addr, 0);
        assert_int_equal(ev[5].kind, TM_HK_FREE);
        assert_int_equal(ev[5].addr, 0x7f0000002000);
        assert_int_equal(ev[5].time, 600);
}

/* recw_note: "tmrecord VERB SEQ ARG" as a comment record, ARG cut to fit. */
static void test_note(void **state)
{
        (void)state;
        uint8_t r[64];
        size_t n = recw_note(r, sizeof r, "exec", 263, "/usr/bin/python3.11");
        static const char want[] = "tmrecord exec 263 /usr/bin/python3.11";
        assert_int_equal(n, 3 + sizeof want - 1);
        assert_int_equal(r[0], TM_HK_COMMENT);
        assert_int_equal((r[1] << 8) | r[2], sizeof want - 1);
        assert_memory_equal(r + 3, want, sizeof want - 1);
        n = recw_note(r, sizeof r, "fork", 0, NULL);
        assert_memory_equal(r + 3, "tmrecord fork 0 -", n - 3);
        char big[200];
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        assert_int_equal(recw_note(r, sizeof r, "spawn", 7, big), sizeof r);
        assert_int_equal((r[1] << 8) | r[2], sizeof r - 3);
}

/* reorder: what emit received. */
struct got {
        uint64_t seq[64];
        unsigned n;
};

static int got_emit(void *arg, const struct reorder_rec *r)
{
        struct got *g = arg;
        if (g->n < 64)
                g->seq[g->n] = r->seq;
        g->n++;
        return 0;
}

static void put_seqs(struct reorder *o, const uint64_t *s, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                struct reorder_rec r = {.seq = s[i], .addr = s[i] * 16};
                assert_int_equal(reorder_put(o, &r), 0);
        }
}

/* Two threads' chunks in flush order come out in sequence order, each as
 * soon as every number before it has come. */
static void test_reorder_merge(void **state)
{
        (void)state;
        struct got g = {0};
        struct reorder o;
        assert_int_equal(reorder_init(&o, 0, got_emit, &g), 0);
        static const uint64_t a[] = {2, 3, 6, 7}, b[] = {1, 4, 5, 8};
        put_seqs(&o, a, 4);
        assert_int_equal(g.n, 0); /* 1 not yet there */
        put_seqs(&o, b, 2);
        assert_int_equal(g.n, 4); /* 1 2 3 4 */
        put_seqs(&o, b + 2, 2);
        assert_int_equal(reorder_finish(&o), 0);
        assert_int_equal(g.n, 8);
        for (unsigned i = 0; i < 8; i++)
                assert_int_equal(g.seq[i], i + 1);
        assert_int_equal(o.late + o.passed + reorder_missing(&o), 0);
        assert_int_equal(o.max_held, 5); /* 1 is stored, then 1-4 go */
        reorder_free(&o);
}

/* A number that never comes: the window (REORDER_MIN here) moves past it
 * instead of growing, the record that then arrives is emitted in arrival
 * order, and both are counted. */
static void test_reorder_window(void **state)
{
        (void)state;
        struct got g = {0};
        struct reorder o;
        assert_int_equal(reorder_init(&o, REORDER_MIN, got_emit, &g), 0);
        for (uint64_t s = 2; s <= REORDER_MIN; s++) /* the window: 1 .. REORDER_MIN */
                put_seqs(&o, &s, 1);
        assert_int_equal(g.n, 0);
        assert_int_equal(o.held, REORDER_MIN - 1);
        uint64_t s = REORDER_MIN + 1; /* past the window */
        put_seqs(&o, &s, 1);
        assert_int_equal(o.passed, 1); /* 1 was given up */
        assert_int_equal(g.n, REORDER_MIN);
        assert_true(o.held == 0 && o.cap == REORDER_MIN);
        s = 1; /* late */
        put_seqs(&o, &s, 1);
        assert_int_equal(o.late, 1);
        assert_int_equal(g.n, REORDER_MIN + 1);
        assert_int_equal(reorder_finish(&o), 0);
        assert_int_equal(reorder_missing(&o), 0);
        reorder_free(&o);
}

/* The ring grows to the window asked for; numbers never seen at the end
 * are skipped and counted missing. */
static void test_reorder_grow(void **state)
{
        (void)state;
        struct got g = {0};
        struct reorder o;
        assert_int_equal(reorder_init(&o, 4 * REORDER_MIN, got_emit, &g), 0);
        for (uint64_t s = 3 * REORDER_MIN; s >= 2; s--)
                put_seqs(&o, &s, 1);
        assert_int_equal(o.cap, 4 * REORDER_MIN);
        assert_int_equal(g.n, 0);
        assert_int_equal(reorder_finish(&o), 0); /* 1 never came */
        assert_int_equal(g.n, 3 * REORDER_MIN - 1);
        assert_int_equal(g.seq[0], 2);
        assert_int_equal(g.seq[63], 65);
        assert_int_equal(reorder_missing(&o), 1);
        assert_int_equal(o.late + o.passed, 0);
        reorder_free(&o);
}

static void test_realloc_outcome(void **state)
{
        (void)state;
        char a[2], b[2];
        assert_int_equal(recw_realloc_outcome(a, 10, a), RECW_REALLOC_INPLACE);
        assert_int_equal(recw_realloc_outcome(a, 10, b), RECW_REALLOC_MOVED);
        assert_int_equal(recw_realloc_outcome(NULL, 10, b), RECW_REALLOC_ALLOC);
        assert_int_equal(recw_realloc_outcome(NULL, 0, b), RECW_REALLOC_ALLOC);
        assert_int_equal(recw_realloc_outcome(a, 0, NULL), RECW_REALLOC_FREE);
        assert_int_equal(recw_realloc_outcome(a, 0, b), RECW_REALLOC_MOVED);
        assert_int_equal(recw_realloc_outcome(a, 10, NULL), -1); /* failed: a stays */
        assert_int_equal(recw_realloc_outcome(NULL, 10, NULL), -1);
}

static void test_parse_target(void **state)
{
        (void)state;
        int fd;
        uint64_t dev, ino;
        assert_int_equal(recw_parse_target("5:14:123456", &fd, &dev, &ino), 0);
        assert_int_equal(fd, 5);
        assert_int_equal(dev, 14);
        assert_int_equal(ino, 123456);
        static const char *const bad[] = {"",
                                          "5",
                                          "5:14",
                                          "5:14:",
                                          ":1:2",
                                          "5:x:1",
                                          "5:14:12 ",
                                          "-1:2:3",
                                          "5:1:2:3",
                                          "99999999999:1:2",
                                          "5:1:99999999999999999999"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                assert_int_equal(recw_parse_target(bad[i], &fd, &dev, &ino), -1);
}

static void test_preload_value(void **state)
{
        (void)state;
        char buf[64];
        assert_int_equal(record_preload_value("/l/libtmrecord.so", NULL, buf, sizeof buf), 0);
        assert_string_equal(buf, "/l/libtmrecord.so");
        assert_int_equal(record_preload_value("/l/libtmrecord.so", "", buf, sizeof buf), 0);
        assert_string_equal(buf, "/l/libtmrecord.so");
        assert_int_equal(record_preload_value("/l/libtmrecord.so", "a.so:b.so", buf, sizeof buf),
                         0);
        assert_string_equal(buf, "/l/libtmrecord.so a.so:b.so");
        assert_int_equal(record_preload_value("/my dir/lib.so", NULL, buf, sizeof buf), -1);
        assert_int_equal(record_preload_value("/a:b/lib.so", NULL, buf, sizeof buf), -1);
        assert_int_equal(record_preload_value("", NULL, buf, sizeof buf), -1);
        assert_int_equal(record_preload_value("/l/x.so",
                                              "0123456789012345678901234567890123456789"
                                              "0123456789012345678901234567890123456789",
                                              buf, sizeof buf),
                         -1);
}

static void touch(const char *p)
{
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fclose(f);
}

static void test_find_lib(void **state)
{
        (void)state;
        char dir[] = "/tmp/unit_record.XXXXXX", p[512], buf[512];
        assert_non_null(mkdtemp(dir));
        unsetenv("TM_RECORD_LIB");

        /* Beside an installed tracetool: PREFIX/bin and PREFIX/lib. */
        snprintf(p, sizeof p, "%s/bin", dir);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/lib", dir);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/lib/libtmrecord.so", dir);
        touch(p);
        char bin[512];
        snprintf(bin, sizeof bin, "%s/bin", dir);
        assert_int_equal(record_find_lib(bin, buf, sizeof buf), 0);
        assert_non_null(strstr(buf, "/bin/../lib"));
        assert_non_null(strstr(buf, "libtmrecord.so"));

        /* The build tree (tools/record/ beside tools/tracetool) comes first. */
        snprintf(p, sizeof p, "%s/bin/record", dir);
        assert_int_equal(mkdir(p, 0755), 0);
        snprintf(p, sizeof p, "%s/bin/record/libtmrecord.so", dir);
        touch(p);
        assert_int_equal(record_find_lib(bin, buf, sizeof buf), 0);
        assert_string_equal(buf, p);

        /* The environment wins, taken as it is. */
        setenv("TM_RECORD_LIB", "/elsewhere/libx.so", 1);
        assert_int_equal(record_find_lib(bin, buf, sizeof buf), 0);
        assert_string_equal(buf, "/elsewhere/libx.so");
        unsetenv("TM_RECORD_LIB");

        unlink(p);
        snprintf(p, sizeof p, "%s/bin/record", dir);
        rmdir(p);
        snprintf(p, sizeof p, "%s/lib/libtmrecord.so", dir);
        unlink(p);
        snprintf(p, sizeof p, "%s/lib", dir);
        rmdir(p);
        rmdir(bin);
        rmdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_record_bytes),
            cmocka_unit_test(test_decoded_by_hatf),
            cmocka_unit_test(test_realloc_outcome),
            cmocka_unit_test(test_parse_target),
            cmocka_unit_test(test_preload_value),
            cmocka_unit_test(test_find_lib),
            cmocka_unit_test(test_note),
            cmocka_unit_test(test_reorder_merge),
            cmocka_unit_test(test_reorder_window),
            cmocka_unit_test(test_reorder_grow),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
