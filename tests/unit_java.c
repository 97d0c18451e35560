/* Java execution traces (codecs/java/jtrace.c) and the java family's
 * statistics (codecs/java/jstats.c). A synthetic trace holding every event
 * of Appendix B is written here as text from a table of events, then
 * decoded: each record equals its event, field for field; the family's
 * figures equal a model's count over the table; the same text as the
 * member `trace` of a ZIP archive (deflate, written by hand as
 * tests/unit_zip.c does, beside another member) mounts as a trace whose
 * ascii is the plain file's and whose stats report the model's figures.
 * Bad lines are -EIO naming the raw offset and the line; the probe takes
 * the trace and leaves other text. */
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
#include <zlib.h>

#include <cmocka.h>

#include "codecs/java/jstats.h"
#include "codecs/java/jtrace.h"
#include "support/tmtest.h"
#include "views/stats.h"
#include "views/view.h"

/* ---- the synthetic trace ---- */

struct jev {
        unsigned k; /* enum tm_java_kind */
        uint64_t time, thread;
        const char *cls, *method;
        uint64_t object;
        const char *text; /* a comment's */
};

#define NEV_MAX 4096
static struct jev ev[NEV_MAX];
static size_t nev;
static struct tmt_buf text;      /* the trace's lines */
static size_t line_off[NEV_MAX]; /* raw offset of each line */

/* The last is a JVM hidden class's name: a '.' in a class name. */
static const char *const classes[] = {
    "java/lang/Object", "java/lang/String",    "Hello",
    "Hello$Worker",     "java/util/ArrayList", "java/lang/invoke/LambdaForm$MH.0x00007f12"};
#define NCLASSES (sizeof classes / sizeof classes[0])
/* The notes the trace begins with (comment lines). */
static const char *const trace_notes[] = {"recorded by unit_java", "classes before VMStart: 0"};
static const char *const methods[] = {"<init>", "main", "run", "work", "add", "toString"};

static void add(unsigned k, uint64_t thread, const char *cls, const char *method, uint64_t obj)
{
        assert_true(nev < NEV_MAX);
        ev[nev] = (struct jev){k, 1000 + 7 * nev, thread, cls, method, obj, NULL};
        nev++;
}

static void add_comment(const char *text)
{
        assert_true(nev < NEV_MAX);
        ev[nev++] = (struct jev){.k = TM_JK_COMMENT, .text = text};
}

/* Lines in the paper's syntax (jtrace.h): the two letters of the tag. */
static void render(void)
{
        text.len = 0;
        for (size_t i = 0; i < nev; i++) {
                const struct jev *e = &ev[i];
                uint32_t tag = tm_schema_java.kind[e->k].tag;
                char line[512];
                /* one comment with the space after '#', one without */
                int n = e->k == TM_JK_COMMENT
                            ? snprintf(line, sizeof line, "#%s%s", i ? "" : " ", e->text)
                            : snprintf(line, sizeof line, "%c%c:%" PRIu64, (char)(tag >> 8),
                                       (char)tag, e->time);
                switch (e->k) {
                case TM_JK_CLASS_LOAD:
                        n += snprintf(line + n, sizeof line - (size_t)n, ":%s", e->cls);
                        break;
                case TM_JK_OBJECT_ALLOC:
                case TM_JK_OBJECT_FREE:
                        n += snprintf(line + n, sizeof line - (size_t)n, ":%s:%" PRIu64, e->cls,
                                      e->object);
                        break;
                case TM_JK_THREAD_START:
                case TM_JK_THREAD_END:
                        n += snprintf(line + n, sizeof line - (size_t)n, ":%" PRIu64, e->thread);
                        break;
                case TM_JK_METHOD_ENTRY:
                        n += snprintf(line + n, sizeof line - (size_t)n,
                                      ":%" PRIu64 ":%s:%s:%" PRIu64, e->thread, e->cls, e->method,
                                      e->object);
                        break;
                case TM_JK_METHOD_EXIT:
                case TM_JK_FRAME_POP:
                        n += snprintf(line + n, sizeof line - (size_t)n, ":%" PRIu64 ":%s:%s",
                                      e->thread, e->cls, e->method);
                        break;
                default:
                        break;
                }
                line[n++] = '\n';
                line_off[i] = text.len;
                assert_int_equal(tmt_put(&text, line, (size_t)n), 0);
        }
}

/* A JVM's life: start, classes, three threads calling methods (one frame
 * popped by an exception), objects allocated and freed, death. */
static void make_trace(void)
{
        uint64_t s = 28;
        nev = 0;
        for (size_t i = 0; i < sizeof trace_notes / sizeof trace_notes[0]; i++)
                add_comment(trace_notes[i]);
        add(TM_JK_VM_START, 0, NULL, NULL, 0);
        add(TM_JK_CLASS_LOAD, 0, classes[0], NULL, 0);
        add(TM_JK_VM_INIT, 0, NULL, NULL, 0);
        for (unsigned c = 1; c < NCLASSES; c++)
                add(TM_JK_CLASS_LOAD, 0, classes[c], NULL, 0);
        uint64_t depth[3] = {0}, next_obj = 100, live[64], nlive = 0;
        for (uint64_t t = 1; t <= 3; t++)
                add(TM_JK_THREAD_START, t, NULL, NULL, 0);
        for (unsigned i = 0; i < 600; i++) {
                uint64_t t = 1 + tmt_below(&s, 3);
                const char *cl = classes[tmt_below(&s, NCLASSES)], *m = methods[tmt_below(&s, 6)];
                unsigned r = (unsigned)tmt_below(&s, 10);
                if (r < 3 || depth[t - 1] == 0) {
                        add(TM_JK_METHOD_ENTRY, t, cl, m, r == 0 ? 0 : next_obj - 1);
                        depth[t - 1]++;
                } else if (r < 5) {
                        add(r == 3 ? TM_JK_METHOD_EXIT : TM_JK_FRAME_POP, t, cl, m, 0);
                        depth[t - 1]--;
                } else if (r < 8 && nlive < 64) {
                        add(TM_JK_OBJECT_ALLOC, 0, cl, NULL, next_obj);
                        live[nlive++] = next_obj++;
                } else if (nlive) {
                        size_t j = (size_t)tmt_below(&s, nlive);
                        add(TM_JK_OBJECT_FREE, 0, cl, NULL, live[j]);
                        live[j] = live[--nlive];
                }
        }
        for (uint64_t t = 1; t <= 3; t++) {
                for (; depth[t - 1]; depth[t - 1]--)
                        add(TM_JK_METHOD_EXIT, t, "Hello", "main", 0);
                add(TM_JK_THREAD_END, t, NULL, NULL, 0);
        }
        add(TM_JK_VM_DEATH, 0, NULL, NULL, 0);
        render();
}

/* ---- decoding ---- */

struct dec {
        struct tm_rec *r;
        size_t n;
        struct tm_err err;
        int rc;
};

/* Decode raw[0..len) whole through the codec, in windows of win bytes. */
static void decode(const uint8_t *raw, size_t len, size_t win, struct dec *d)
{
        const struct tm_rcodec *c = &tm_rcodec_java;
        struct tm_schema s;
        struct tm_rstate st;
        void *ctx = NULL;
        memset(d, 0, sizeof *d);
        d->r = calloc(NEV_MAX + 16, sizeof *d->r);
        assert_non_null(d->r);
        assert_int_equal(c->open(raw, len, "/nonexistent/x.trace", &ctx, &s, &st, &d->err), 0);
        size_t pos = 0, end = 0;
        for (;;) {
                end = end + win < len ? end + win : len;
                size_t used = 0;
                ssize_t k = c->decode(ctx, &st, raw + pos, end - pos, end == len, pos, &used,
                                      d->r + d->n, 7, &d->err);
                if (k < 0) {
                        d->rc = (int)k;
                        break;
                }
                assert_true(c->state_ok(ctx, &st));
                d->n += (size_t)k;
                pos += used;
                assert_true(d->n <= NEV_MAX + 16);
                if (pos == len)
                        break;
                if (k == 0 && used == 0 && end == len)
                        fail_msg("no progress at raw offset %zu", pos);
        }
        c->close(ctx);
}

static void expect_event(const struct tm_rec *r, const struct jev *e, size_t i)
{
        const struct tm_kind *k = &tm_schema_java.kind[e->k];
        if (r->kind != e->k)
                fail_msg("record %zu: kind %u, written %u", i, r->kind, e->k);
        unsigned var = 0;
        for (unsigned f = 0; f < k->nfields; f++) {
                const char *name = NULL;
                uint64_t want = 0;
                switch (k->field[f]) {
                case TM_JF_TIME:
                        want = e->time;
                        break;
                case TM_JF_THREAD:
                        want = e->thread;
                        break;
                case TM_JF_OBJECT:
                        want = e->object;
                        break;
                case TM_JF_CLASS:
                        name = e->cls;
                        break;
                case TM_JF_METHOD:
                        name = e->method;
                        break;
                case TM_JF_TEXT:
                        name = e->text;
                        break;
                }
                if (name) {
                        assert_int_equal(r->v[f], strlen(name));
                        assert_memory_equal(r->var[var], name, strlen(name));
                        var++;
                } else if (r->v[f] != want) {
                        fail_msg("record %zu field %u: %" PRIu64 ", written %" PRIu64, i, f,
                                 r->v[f], want);
                }
        }
}

static void test_every_event(void **state)
{
        (void)state;
        make_trace();
        unsigned seen[TM_JK_N] = {0};
        for (size_t i = 0; i < nev; i++)
                seen[ev[i].k]++;
        for (unsigned k = 0; k < TM_JK_N; k++)
                if (!seen[k])
                        fail_msg("the synthetic trace has no %s", tm_schema_java.kind[k].name);
        assert_int_equal(tm_rcodec_probe(text.p, text.len < 4096 ? text.len : 4096),
                         &tm_rcodec_java);
        static const size_t wins[] = {1, 13, 4096, 1 << 20};
        for (size_t w = 0; w < sizeof wins / sizeof wins[0]; w++) {
                struct dec d;
                decode(text.p, text.len, wins[w], &d);
                if (d.rc)
                        fail_msg("window %zu: %s", wins[w], d.err.msg);
                assert_int_equal(d.n, nev);
                for (size_t i = 0; i < nev; i++)
                        expect_event(&d.r[i], &ev[i], i);
                free(d.r);
        }
}

/* ---- the family's statistics against a model ---- */

struct model {
        struct tm_java_stats st;
};

static unsigned distinct(const char *const *names, size_t n)
{
        unsigned d = 0;
        for (size_t i = 0; i < n; i++) {
                size_t j = 0;
                while (j < i && strcmp(names[j], names[i]) != 0)
                        j++;
                d += j == i;
        }
        return d;
}

static void model_count(struct tm_java_stats *m)
{
        memset(m, 0, sizeof *m);
        const char **cn = calloc(nev, sizeof *cn), **mn = calloc(nev, sizeof *mn);
        char(*pair)[64] = calloc(nev, sizeof *pair);
        size_t ncn = 0, nmn = 0;
        uint64_t depth[4] = {0};
        for (size_t i = 0; i < nev; i++) {
                const struct jev *e = &ev[i];
                m->events[e->k]++;
                if (e->cls)
                        cn[ncn++] = e->cls;
                if (e->method) {
                        snprintf(pair[nmn], sizeof pair[nmn], "%s.%s", e->cls, e->method);
                        mn[nmn] = pair[nmn];
                        nmn++;
                }
                if (e->k == TM_JK_OBJECT_ALLOC && ++m->live > m->max_live)
                        m->max_live = m->live;
                if (e->k == TM_JK_OBJECT_FREE)
                        m->live--;
                if (e->thread) {
                        unsigned t = (unsigned)e->thread - 1;
                        m->thread_n[t]++;
                        if (e->k == TM_JK_METHOD_ENTRY) {
                                m->thread_entries[t]++;
                                if (++depth[t] > m->thread_max_depth[t])
                                        m->thread_max_depth[t] = depth[t];
                        }
                        if (e->k == TM_JK_METHOD_EXIT || e->k == TM_JK_FRAME_POP)
                                depth[t]--;
                }
        }
        m->classes = distinct(cn, ncn);
        m->methods = distinct(mn, nmn);
        m->allocs = m->events[TM_JK_OBJECT_ALLOC];
        m->frees = m->events[TM_JK_OBJECT_FREE];
        for (unsigned t = 0; t < 3; t++)
                if (m->thread_max_depth[t] > m->max_depth)
                        m->max_depth = m->thread_max_depth[t];
        free(cn);
        free(mn);
        free(pair);
}

static void test_stats(void **state)
{
        (void)state;
        make_trace();
        struct dec d;
        decode(text.p, text.len, 1 << 20, &d);
        assert_int_equal(d.rc, 0);
        const struct tm_family *f = tm_family_of(&tm_schema_java);
        assert_ptr_equal(f, &tm_family_java);
        struct tm_family_acc *a = f->acc_start(&tm_schema_java);
        for (size_t i = 0; i < d.n; i += 5)
                f->acc_add(a, d.r + i, d.n - i < 5 ? d.n - i : 5);
        struct tm_java_stats got, want;
        f->acc_finish(a, &got);
        f->acc_free(a);
        model_count(&want);
        assert_true(f->stats_ok(&got));
        assert_memory_equal(got.events, want.events, sizeof want.events);
        assert_int_equal(got.classes, want.classes);
        assert_int_equal(got.methods, want.methods);
        assert_int_equal(got.names_inexact, 0);
        assert_int_equal(got.allocs, want.allocs);
        assert_int_equal(got.frees, want.frees);
        assert_int_equal(got.max_live, want.max_live);
        assert_int_equal(got.live, want.live);
        assert_int_equal(got.frees_not_live, 0);
        assert_int_equal(got.max_depth, want.max_depth);
        assert_int_equal(got.depth_inexact, 0);
        assert_int_equal(got.exits_not_entered, 0);
        assert_int_equal(got.nthreads, 3);
        for (unsigned t = 0; t < 3; t++) {
                assert_int_equal(got.thread_id[t], t + 1);
                assert_int_equal(got.thread_n[t], want.thread_n[t]);
                assert_int_equal(got.thread_entries[t], want.thread_entries[t]);
                assert_int_equal(got.thread_max_depth[t], want.thread_max_depth[t]);
                assert_int_equal(got.thread_depth[t], 0);
        }
        /* a figure that cannot be is refused when read back */
        got.max_live = got.allocs + 1;
        assert_false(f->stats_ok(&got));
        free(d.r);
}

/* Past the name table's bound (TM_JAVA_NAMES_MAX names) the counts stop
 * and say so; past TM_JAVA_STATS_IDS threads the maximum stack depth is
 * not known. Records are made here, not decoded. */
static void test_bounds(void **state)
{
        (void)state;
        const struct tm_family *f = &tm_family_java;
        struct tm_family_acc *a = f->acc_start(&tm_schema_java);
        char name[32];
        struct tm_rec r = {.kind = TM_JK_CLASS_LOAD};
        for (uint64_t i = 0; i < TM_JAVA_NAMES_MAX + 10; i++) {
                r.v[0] = i;
                r.v[1] = (uint64_t)snprintf(name, sizeof name, "C%" PRIu64, i);
                r.var[0] = (const uint8_t *)name;
                f->acc_add(a, &r, 1);
        }
        r = (struct tm_rec){.kind = TM_JK_METHOD_ENTRY};
        for (uint64_t t = 1; t <= TM_JAVA_STATS_IDS + 1; t++) {
                r.v[1] = t;
                r.v[2] = 2;
                r.var[0] = (const uint8_t *)"C1";
                r.v[3] = 4;
                r.var[1] = (const uint8_t *)"main";
                f->acc_add(a, &r, 1);
        }
        static struct tm_java_stats st;
        f->acc_finish(a, &st);
        assert_true(f->acc_peak_mem(a) > 0);
        /* the tables: the first TM_JAVA_NAMES_MAX classes numbered, then a
         * line saying the table is full; no method made it */
        char *tab;
        size_t len;
        assert_int_equal(f->more->table(a, 0, &tab, &len), 0);
        assert_true(len > 0 && tab[len - 1] == '\n');
        assert_memory_equal(tab, "0 C0\n1 C1\n", 10);
        size_t lines = 0;
        for (size_t i = 0; i < len; i++)
                lines += tab[i] == '\n';
        assert_int_equal(lines, TM_JAVA_NAMES_MAX + 1);
        tab[len - 1] = '\0';
        const char *last = strrchr(tab, '\n') + 1;
        assert_true(strncmp(last, "# more names not numbered", 25) == 0);
        assert_true(last >= tab + 17 && memcmp(last - 17, "1048575 C1048575\n", 17) == 0);
        free(tab);
        assert_int_equal(f->more->table(a, 1, &tab, &len), 0);
        assert_true(strncmp(tab, "# more names not numbered", 25) == 0);
        free(tab);
        f->acc_free(a);
        assert_true(f->stats_ok(&st));
        assert_int_equal(st.names_inexact, 1);
        assert_int_equal(st.classes, TM_JAVA_NAMES_MAX);
        assert_int_equal(st.methods, 0); /* the table was full before any method */
        assert_int_equal(st.events[TM_JK_CLASS_LOAD], TM_JAVA_NAMES_MAX + 10);
        assert_int_equal(st.nthreads, TM_JAVA_STATS_IDS);
        assert_int_equal(st.thread_other, 1);
        assert_int_equal(st.depth_inexact, 1);
        static char text[1 << 16];
        struct tm_family_info in = {.name = "t", .codec = "t", .container = "plain"};
        tm_stats_family_text(f, &st, &tm_schema_java, &in, text, sizeof text);
        assert_non_null(strstr(text, "classes named      at least 1048576"));
        assert_non_null(strstr(text, "max stack depth    not known"));
}

/* ---- the trace inside a ZIP archive ---- */

static void put16(struct tmt_buf *b, unsigned v)
{
        uint8_t p[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
        assert_int_equal(tmt_put(b, p, 2), 0);
}

static void put32(struct tmt_buf *b, uint32_t v)
{
        put16(b, v & 0xffff);
        put16(b, v >> 16);
}

struct zmember {
        const char *name;
        const uint8_t *data;
        size_t n;
};

/* A ZIP archive of deflated members (no data descriptors, no ZIP64: the
 * container's own tests, tests/unit_zip.c, cover those). */
static void zip_deflated(struct tmt_buf *a, const struct zmember *m, size_t k)
{
        uint32_t off[4], crc[4], csz[4];
        assert_true(k <= 4);
        a->len = 0;
        for (size_t i = 0; i < k; i++) {
                z_stream zs = {0};
                assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY),
                                 Z_OK);
                size_t cap = deflateBound(&zs, m[i].n);
                uint8_t *c = malloc(cap);
                zs.next_in = (uint8_t *)m[i].data;
                zs.avail_in = (uInt)m[i].n;
                zs.next_out = c;
                zs.avail_out = (uInt)cap;
                assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
                csz[i] = (uint32_t)(cap - zs.avail_out);
                deflateEnd(&zs);
                crc[i] = (uint32_t)crc32(0, m[i].data, (uInt)m[i].n);
                off[i] = (uint32_t)a->len;
                put32(a, 0x04034b50);
                put16(a, 20);
                put16(a, 0);
                put16(a, 8);
                put32(a, 0);
                put32(a, crc[i]);
                put32(a, csz[i]);
                put32(a, (uint32_t)m[i].n);
                put16(a, (unsigned)strlen(m[i].name));
                put16(a, 0);
                assert_int_equal(tmt_put(a, m[i].name, strlen(m[i].name)), 0);
                assert_int_equal(tmt_put(a, c, csz[i]), 0);
                free(c);
        }
        uint32_t cd = (uint32_t)a->len;
        for (size_t i = 0; i < k; i++) {
                put32(a, 0x02014b50);
                put16(a, 0x031e);
                put16(a, 20);
                put16(a, 0);
                put16(a, 8);
                put32(a, 0);
                put32(a, crc[i]);
                put32(a, csz[i]);
                put32(a, (uint32_t)m[i].n);
                put16(a, (unsigned)strlen(m[i].name));
                put32(a, 0); /* extra, comment lengths */
                put32(a, 0); /* disk, internal attributes */
                put32(a, 0); /* external attributes */
                put32(a, off[i]);
                assert_int_equal(tmt_put(a, m[i].name, strlen(m[i].name)), 0);
        }
        uint32_t cds = (uint32_t)a->len - cd;
        put32(a, 0x06054b50);
        put32(a, 0);
        put16(a, (unsigned)k);
        put16(a, (unsigned)k);
        put32(a, cds);
        put32(a, cd);
        put16(a, 0);
}

static struct tm_trace *open_trace(const char *path)
{
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t = NULL;
        struct tm_err err = {0};
        if (tm_trace_open(path, &o, &t, &err) != 0)
                fail_msg("%s: %s", path, err.msg);
        return t;
}

/* A view of the open trace t read whole; its error code (0 at its end). */
static int read_open(struct tm_trace *t, const char *view, struct tmt_buf *out)
{
        struct tm_err err = {0};
        struct tm_vfile *f;
        out->len = 0;
        if (tm_vfile_open(t, view, &f, &err) != 0)
                fail_msg("%s: %s", view, err.msg);
        uint8_t buf[65536];
        ssize_t r;
        while ((r = tm_vfile_pread(f, buf, sizeof buf, out->len, &err)) > 0)
                assert_int_equal(tmt_put(out, buf, (size_t)r), 0);
        tm_vfile_close(f);
        return (int)r;
}

/* A view read whole from a fresh open of path; its error code. */
static int read_view(const char *path, const char *view, struct tmt_buf *out)
{
        struct tm_trace *t = open_trace(path);
        int rc = read_open(t, view, out);
        tm_trace_close(t);
        return rc;
}

static void expect_line(const char *stats, const char *fmt, ...)
{
        char line[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        if (!strstr(stats, line))
                fail_msg("stats lack \"%s\":\n%s", line, stats);
}

static void test_zip(void **state)
{
        (void)state;
        make_trace();
        static const char notes[] = "recorded by hand for unit_java\n";
        struct zmember m[] = {
            {"README", (const uint8_t *)notes, sizeof notes - 1},
            {"trace", text.p, text.len},
        };
        struct tmt_buf z = {0}, plain = {0}, zipped = {0}, stats = {0};
        zip_deflated(&z, m, 2);
        assert_int_equal(tmt_spit(tmt_path("x.zip"), z.p, z.len), 0);
        assert_int_equal(tmt_spit(tmt_path("x.trace"), text.p, text.len), 0);
        assert_int_equal(read_view(tmt_path("x.trace"), "ascii", &plain), 0);
        assert_int_equal(read_view(tmt_path("x.zip"), "ascii", &zipped), 0);
        assert_int_equal(zipped.len, plain.len);
        assert_memory_equal(zipped.p, plain.p, plain.len);
        assert_int_equal(read_view(tmt_path("x.zip"), "stats", &stats), 0);
        assert_int_equal(tmt_put(&stats, "", 1), 0);
        struct tm_java_stats w;
        model_count(&w);
        const char *s = (const char *)stats.p;
        expect_line(s, "format     java (java family) in zip");
        for (unsigned k = 0; k < TM_JK_EVENTS; k++)
                expect_line(s, " %-14s %" PRIu64 "\n", tm_schema_java.kind[k].name, w.events[k]);
        /* the leading comments are the trace's notes, in stats and stats.json */
        for (size_t i = 0; i < sizeof trace_notes / sizeof trace_notes[0]; i++)
                expect_line(s, "\nnote       %s\n", trace_notes[i]);
        struct tmt_buf js = {0};
        assert_int_equal(read_view(tmt_path("x.zip"), "stats.json", &js), 0);
        assert_int_equal(tmt_put(&js, "", 1), 0);
        expect_line((const char *)js.p, "\"notes\":[\"%s\",\"%s\"]", trace_notes[0],
                    trace_notes[1]);
        free(js.p);
        /* a trace with notes: these figures are as recorded */
        expect_line(s, "classes loaded     %" PRIu64 " (as recorded: see the notes)\n",
                    w.events[TM_JK_CLASS_LOAD]);
        expect_line(s, "objects allocated  %" PRIu64 " (as recorded: see the notes)\n", w.allocs);
        expect_line(s, "objects freed      %" PRIu64 "\n", w.frees);
        expect_line(s, "max live objects   %" PRIu64 "\n", w.max_live);
        expect_line(s, "max stack depth    %" PRIu64 "\n", w.max_depth);
        for (unsigned t = 0; t < 3; t++)
                expect_line(s, "  %-18u %7" PRIu64 " %15" PRIu64 " %13u %10" PRIu64 "\n", t + 1,
                            w.thread_n[t], w.thread_entries[t], 0u, w.thread_max_depth[t]);
        /* streams/thread/2: the records of thread 2, as ascii shows them */
        struct tmt_buf t2 = {0};
        assert_int_equal(read_view(tmt_path("x.zip"), "streams/thread/2", &t2), 0);
        size_t lines = 0;
        for (size_t i = 0; i < t2.len; i++)
                lines += t2.p[i] == '\n';
        assert_int_equal(lines, w.thread_n[1]);
        free(z.p);
        free(plain.p);
        free(zipped.p);
        free(stats.p);
        free(t2.p);
}

/* ---- the tables: sections/classes, sections/methods ---- */

/* The model of a table over ev[0..n): each distinct name (a class, or a
 * class.method pair) numbered from 0 in the order first met. */
static void model_table(size_t n, int methods_of, struct tmt_buf *out)
{
        static char seen[NEV_MAX][128];
        size_t ns = 0;
        out->len = 0;
        for (size_t i = 0; i < n; i++) {
                char key[128];
                if (!ev[i].cls || (methods_of && !ev[i].method))
                        continue;
                snprintf(key, sizeof key, "%s%s%s", ev[i].cls, methods_of ? "." : "",
                         methods_of ? ev[i].method : "");
                size_t j = 0;
                while (j < ns && strcmp(seen[j], key) != 0)
                        j++;
                if (j < ns)
                        continue;
                snprintf(seen[ns], sizeof seen[ns], "%s", key);
                char line[160];
                int k = snprintf(line, sizeof line, "%zu %s\n", ns++, key);
                assert_int_equal(tmt_put(out, line, (size_t)k), 0);
        }
}

/* The tables of the first nev_covered events; a damaged trace's (fewer
 * than all) end with -EIO after them, as its other views do. */
static void expect_tables(const char *path, size_t nev_covered)
{
        static const char *const view[] = {"sections/classes", "sections/methods"};
        for (int m = 0; m < 2; m++) {
                struct tmt_buf got = {0}, want = {0};
                assert_int_equal(read_view(path, view[m], &got), nev_covered < nev ? -EIO : 0);
                model_table(nev_covered, m, &want);
                assert_true(want.len > 0);
                if (got.len != want.len || memcmp(got.p, want.p, want.len) != 0)
                        fail_msg("%s %s:\n%.*s\nwant:\n%.*s", path, view[m], (int)got.len,
                                 (const char *)got.p, (int)want.len, (const char *)want.p);
                free(got.p);
                free(want.p);
        }
}

/* A method's key splits at its last '.' (tm_java_method_split): the
 * class of a hidden class's method keeps its '.'; every line of
 * sections/methods of the synthetic trace (which calls methods of one)
 * splits into a class and a method that an event of the trace pairs. */
static void test_method_split(void **state)
{
        (void)state;
        static const struct {
                const char *key, *cls;
        } k[] = {
            {"java/lang/invoke/LambdaForm$MH.0x00007f12.invoke",
             "java/lang/invoke/LambdaForm$MH.0x00007f12"},
            {"Hello$$Lambda$14.0x0000000800c02a00.run", "Hello$$Lambda$14.0x0000000800c02a00"},
            {"Hello.<init>", "Hello"},
            {"Hello", "Hello"}, /* no '.': not a key, the whole */
        };
        for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
                assert_int_equal(tm_java_method_split((const uint8_t *)k[i].key, strlen(k[i].key)),
                                 strlen(k[i].cls));
        make_trace();
        assert_int_equal(tmt_spit(tmt_path("m.trace"), text.p, text.len), 0);
        struct tmt_buf mth = {0};
        assert_int_equal(read_view(tmt_path("m.trace"), "sections/methods", &mth), 0);
        assert_int_equal(tmt_put(&mth, "", 1), 0);
        size_t hidden = 0;
        for (char *l = (char *)mth.p, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
                char *key = strchr(l, ' ') + 1;
                size_t n = (size_t)(nl - key), c = tm_java_method_split((uint8_t *)key, n);
                assert_true(c < n);
                size_t j = 0;
                while (j < nev &&
                       !(ev[j].method && strlen(ev[j].cls) == c && memcmp(ev[j].cls, key, c) == 0 &&
                         strlen(ev[j].method) == n - c - 1 &&
                         memcmp(ev[j].method, key + c + 1, n - c - 1) == 0))
                        j++;
                if (j == nev)
                        fail_msg("sections/methods: %.*s splits into no event's class and method",
                                 (int)n, key);
                hidden += memchr(key, '.', c) != NULL;
        }
        assert_true(hidden > 0);
        free(mth.p);
}

static void test_tables(void **state)
{
        (void)state;
        make_trace();
        assert_int_equal(tmt_spit(tmt_path("t.trace"), text.p, text.len), 0);
        expect_tables(tmt_path("t.trace"), nev);
        /* damaged at line 301: the tables of the 300 lines before it */
        struct tmt_buf bad = {0};
        assert_int_equal(tmt_put(&bad, text.p, line_off[300]), 0);
        assert_int_equal(tmt_put(&bad, "MN:1:x\n", 7), 0);
        assert_int_equal(tmt_put(&bad, text.p + line_off[300], text.len - line_off[300]), 0);
        assert_int_equal(tmt_spit(tmt_path("bad.trace"), bad.p, bad.len), 0);
        expect_tables(tmt_path("bad.trace"), 300);
        free(bad.p);
}

/* ---- binary: names by number ---- */

static uint64_t le(const uint8_t *p, unsigned n)
{
        uint64_t v = 0;
        for (unsigned i = n; i--;)
                v = v << 8 | p[i];
        return v;
}

/* The number of name[0..n) in a sections/ table's text (`number name`
 * lines), or UINT32_MAX when it lists no such name. */
static uint64_t table_number(const struct tmt_buf *tab, const char *name, size_t n)
{
        const char *p = (const char *)tab->p, *end = p + tab->len;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                assert_non_null(nl);
                char *sp;
                uint64_t num = strtoull(p, &sp, 10);
                if (*sp == ' ' && (size_t)(nl - sp - 1) == n && memcmp(sp + 1, name, n) == 0)
                        return num;
                p = nl + 1;
        }
        return UINT32_MAX;
}

/* The binary view of path, record by record, against its ascii lines
 * (their fields by tm_schema_java's kinds) and its tables: the 40-byte
 * record jstats.h lays out, a name's number its line in sections/.
 * Returns the records; rc is what reading binary and ascii ends in (a
 * damaged trace's views end in -EIO after the records before the damage). */
static size_t expect_binary(const char *path, int rc)
{
        struct tmt_buf bin = {0}, asc = {0}, cls = {0}, mth = {0};
        assert_int_equal(read_view(path, "binary", &bin), rc);
        assert_int_equal(read_view(path, "ascii", &asc), rc);
        assert_int_equal(read_view(path, "sections/classes", &cls), rc);
        assert_int_equal(read_view(path, "sections/methods", &mth), rc);
        const char *line = (const char *)asc.p, *end = line + asc.len;
        size_t i = 0;
        for (; line < end; i++, line = memchr(line, '\n', (size_t)(end - line)) + 1) {
                const char *tok[8];
                size_t tlen[8], nt = 0;
                for (const char *p = line; nt < 8; p++) {
                        const char *q = p;
                        while (*q != ' ' && *q != '\n')
                                q++;
                        tok[nt] = p;
                        tlen[nt++] = (size_t)(q - p);
                        p = q;
                        if (*q == '\n')
                                break;
                }
                char kname[32];
                snprintf(kname, sizeof kname, "%.*s", (int)tlen[0], tok[0]);
                int k = tm_schema_kind(&tm_schema_java, kname);
                assert_true(k >= 0);
                const struct tm_kind *kd = &tm_schema_java.kind[k];
                assert_int_equal(nt, 1 + kd->nfields);
                uint64_t want[TM_JF_EVENTS] = {0}, present = 0;
                char pair[256] = "";
                for (unsigned f = 0; f < kd->nfields; f++) {
                        unsigned fi = kd->field[f];
                        if (fi == TM_JF_TEXT) /* a comment's: not in binary */
                                continue;
                        present |= 1u << fi;
                        if (fi == TM_JF_CLASS)
                                want[fi] = table_number(&cls, tok[1 + f], tlen[1 + f]);
                        else if (fi != TM_JF_METHOD)
                                want[fi] = strtoull(tok[1 + f], NULL, 10);
                        if (fi == TM_JF_METHOD) {
                                int pn = snprintf(pair, sizeof pair, "%.*s.%.*s", (int)tlen[f],
                                                  tok[f], (int)tlen[1 + f], tok[1 + f]);
                                want[fi] = table_number(&mth, pair, (size_t)pn);
                        }
                        if ((fi == TM_JF_CLASS || fi == TM_JF_METHOD) && want[fi] >= UINT32_MAX)
                                fail_msg("%s line %zu: a name no table lists", path, i + 1);
                }
                if ((i + 1) * 40 > bin.len)
                        fail_msg("%s: binary ends at record %zu of ascii's", path, i);
                const uint8_t *b = bin.p + i * 40;
                static const unsigned at[TM_JF_EVENTS] = {8, 16, 32, 36, 24},
                                      w[TM_JF_EVENTS] = {8, 8, 4, 4, 8};
                if (le(b, 4) != (uint64_t)k || le(b + 4, 4) != present)
                        fail_msg("%s record %zu: kind %" PRIu64 " present %" PRIx64
                                 ", ascii %d %" PRIx64,
                                 path, i, le(b, 4), le(b + 4, 4), k, present);
                for (unsigned fi = 0; fi < TM_JF_EVENTS; fi++)
                        if (le(b + at[fi], w[fi]) != want[fi])
                                fail_msg("%s record %zu field %s: %" PRIu64 ", want %" PRIu64, path,
                                         i, tm_schema_java.field[fi].name, le(b + at[fi], w[fi]),
                                         want[fi]);
        }
        assert_int_equal(i * 40, bin.len);
        free(bin.p);
        free(asc.p);
        free(cls.p);
        free(mth.p);
        return i;
}

static void test_binary(void **state)
{
        (void)state;
        make_trace();
        assert_int_equal(tmt_spit(tmt_path("b.trace"), text.p, text.len), 0);
        assert_int_equal(expect_binary(tmt_path("b.trace"), 0), nev);
        /* damaged at line 301: the 300 records before it, numbered by the
         * tables of those lines */
        struct tmt_buf bad = {0};
        assert_int_equal(tmt_put(&bad, text.p, line_off[300]), 0);
        assert_int_equal(tmt_put(&bad, "MN:1:x\n", 7), 0);
        assert_int_equal(tmt_put(&bad, text.p + line_off[300], text.len - line_off[300]), 0);
        assert_int_equal(tmt_spit(tmt_path("bbad.trace"), bad.p, bad.len), 0);
        assert_int_equal(expect_binary(tmt_path("bbad.trace"), -EIO), 300);
        free(bad.p);
}

/* path rewritten in place with p[0..n), modified at sec. */
static void rewrite(const char *path, const void *p, size_t n, time_t sec)
{
        assert_int_equal(tmt_spit(path, p, n), 0);
        struct timespec ts[2] = {{0, UTIME_OMIT}, {sec, 0}};
        assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* A damaged trace whose binary was read (its tables made of the intact
 * prefix), rewritten in place with a trace that names things in another
 * order, is indexed again (views/records.c's retry): its binary and tables
 * are then the new trace's, as a fresh open's, and the old tables' memory
 * is freed (an ASan build's leak check). */
static void test_binary_rewritten(void **state)
{
        (void)state;
        make_trace();
        const char *path = tmt_path("rw.trace");
        struct tmt_buf bad = {0}, other = {0}, got = {0}, want = {0};
        assert_int_equal(tmt_put(&bad, text.p, line_off[300]), 0);
        assert_int_equal(tmt_put(&bad, "MN:1:x\n", 7), 0);
        rewrite(path, bad.p, bad.len, 1000000000);
        struct tm_trace *t = open_trace(path);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        assert_int_equal(read_open(t, "binary", &got), -EIO);
        assert_int_equal(got.len, 300 * 40);
        /* the notes and VS, then the events from line 201 on: names first
         * met in another order */
        assert_int_equal(tmt_put(&other, text.p, line_off[3]), 0);
        assert_int_equal(tmt_put(&other, text.p + line_off[200], text.len - line_off[200]), 0);
        rewrite(path, other.p, other.len, 1100000000);
        if (tm_trace_index(t, NULL, NULL, &err) != 0)
                fail_msg("%s rewritten: %s", path, err.msg);
        static const char *const views[] = {"binary", "sections/classes", "sections/methods"};
        for (size_t i = 0; i < 3; i++) {
                assert_int_equal(read_open(t, views[i], &got), 0);
                assert_int_equal(read_view(path, views[i], &want), 0);
                if (got.len != want.len || memcmp(got.p, want.p, want.len) != 0)
                        fail_msg("%s rewritten: %s differs from a fresh open's", path, views[i]);
        }
        tm_trace_close(t);
        assert_int_equal(expect_binary(path, 0), nev - 200 + 3);
        free(bad.p);
        free(other.p);
        free(got.p);
        free(want.p);
}

/* A trace naming more classes than the tables hold (TM_JAVA_NAMES_MAX, a
 * constant: the bound is the format's documented one, so the trace is as
 * large as it takes, 2^20 + 4 classes in 18 MB): binary numbers each class
 * by its place, the ones past the bound and every method (the table was
 * full before the first) TM_JAVA_UNNUMBERED, as sections/ says. */
static void test_binary_bound(void **state)
{
        (void)state;
        const uint64_t nc = TM_JAVA_NAMES_MAX + 4;
        struct tmt_buf t = {0};
        char line[64];
        assert_int_equal(tmt_put(&t, "VS:1\n", 5), 0);
        for (uint64_t i = 0; i < nc; i++) {
                int k = snprintf(line, sizeof line, "CL:%" PRIu64 ":C%" PRIu64 "\n", i + 2, i);
                assert_int_equal(tmt_put(&t, line, (size_t)k), 0);
        }
        static const char tail[] = "MN:9:1:C3:main:0\nMX:9:1:C1048577:main\nVD:10\n";
        assert_int_equal(tmt_put(&t, tail, sizeof tail - 1), 0);
        const char *path = tmt_path("big.trace");
        assert_int_equal(tmt_spit(path, t.p, t.len), 0);
        free(t.p);
        struct tmt_buf bin = {0}, cls = {0};
        assert_int_equal(read_view(path, "binary", &bin), 0);
        assert_int_equal(read_view(path, "sections/classes", &cls), 0);
        assert_int_equal(bin.len, (nc + 4) * 40);
        for (uint64_t i = 0; i < nc; i++) {
                uint64_t want = i < TM_JAVA_NAMES_MAX ? i : UINT32_MAX;
                const uint8_t *b = bin.p + (1 + i) * 40;
                if (le(b, 4) != TM_JK_CLASS_LOAD || le(b + 32, 4) != want)
                        fail_msg("record %" PRIu64 ": kind %" PRIu64 " class %" PRIu64
                                 ", want %" PRIu64,
                                 1 + i, le(b, 4), le(b + 32, 4), want);
        }
        const uint8_t *mn = bin.p + (1 + nc) * 40, *mx = mn + 40;
        assert_int_equal(le(mn + 32, 4), 3);
        assert_int_equal(le(mn + 36, 4), UINT32_MAX);
        assert_int_equal(le(mx + 32, 4), UINT32_MAX);
        assert_int_equal(le(mx + 36, 4), UINT32_MAX);
        /* the table lists the numbered ones and says it is full */
        char last[64];
        int k = snprintf(last, sizeof last, "\n%u C%u\n# more names not numbered",
                         TM_JAVA_NAMES_MAX - 1, TM_JAVA_NAMES_MAX - 1);
        assert_int_equal(tmt_put(&cls, "", 1), 0);
        const char *hit = strstr((const char *)cls.p, last);
        assert_non_null(hit);
        assert_ptr_equal(strchr(hit + k, '\n'),
                         (const char *)cls.p + cls.len - 2); /* the last line */
        free(bin.p);
        free(cls.p);
}

/* ---- bad lines ---- */

static void expect_bad(const char *line, const char *why)
{
        make_trace();
        /* the bad line replaces the line of event 10 */
        size_t at = line_off[10], end = line_off[11];
        struct tmt_buf b = {0};
        assert_int_equal(tmt_put(&b, text.p, at), 0);
        assert_int_equal(tmt_put(&b, line, strlen(line)), 0);
        assert_int_equal(tmt_put(&b, text.p + end, text.len - end), 0);
        struct dec d;
        decode(b.p, b.len, 64, &d);
        if (d.rc != -EIO)
                fail_msg("\"%s\": %d, expected -EIO", line, d.rc);
        char want[128];
        snprintf(want, sizeof want, "raw offset %zu: java line 11: %s", at, why);
        if (!strstr(d.err.msg, want))
                fail_msg("\"%s\": \"%s\", expected \"%s\"", line, d.err.msg, want);
        assert_int_equal(d.n, 10); /* the records before it */
        free(d.r);
        free(b.p);
}

static void test_bad_lines(void **state)
{
        (void)state;
        expect_bad("XX:1\n", "unknown event type");
        expect_bad("OA:1:java/lang/Object\n", "fewer parameters");
        expect_bad("TB:1:2:3\n", "more parameters");
        expect_bad("CL:12a:Foo\n", "bad time stamp");
        expect_bad("TB:1:18446744073709551616\n", "bad thread id");
        expect_bad("OF:1:Foo:-3\n", "bad object id");
        expect_bad("MN:1:1::main:0\n", "empty class name");
        expect_bad("MX:1:1:Foo:\n", "empty method name");
        expect_bad("MX:1:1:Foo:a.b\n", "a '.' in a method name");
        expect_bad("# a note\n", "a comment (#) after the first event");
        expect_bad("VS:1\n", "a second VM start");
        expect_bad("VI:1\n", "a second VM start");
        expect_bad("\n", "not an event line");
        expect_bad("hello world\n", "not an event line");

        /* the first line is VS; nothing after VD; a last line with no
         * newline is truncated */
        static const char *const bad[][2] = {
            {"VI:1\n", "raw offset 0: java line 1: the first event is not the VM start"},
            {"VS:1\nVD:2\nCL:3:Foo\n", "raw offset 10: java line 3: an event after the VM death"},
            {"VS:1\nCL:3:Foo", "raw offset 5: java line 2: truncated"},
            {"# a\n#b\nVI:1\n", "raw offset 7: java line 3: the first event is not the VM start"},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                struct dec d;
                decode((const uint8_t *)bad[i][0], strlen(bad[i][0]), 3, &d);
                assert_int_equal(d.rc, -EIO);
                if (!strstr(d.err.msg, bad[i][1]))
                        fail_msg("\"%s\": \"%s\", expected \"%s\"", bad[i][0], d.err.msg,
                                 bad[i][1]);
                free(d.r);
        }
        /* a CR before the newline is taken, as a Windows tracer writes */
        struct dec d;
        static const char crlf[] = "VS:1\r\nMX:2:1:Foo:bar\r\nVD:3\r\n";
        decode((const uint8_t *)crlf, sizeof crlf - 1, 5, &d);
        assert_int_equal(d.rc, 0);
        assert_int_equal(d.n, 3);
        assert_int_equal(d.r[1].v[3], 3);
        assert_memory_equal(d.r[1].var[1], "bar", 3);
        free(d.r);
}

static void test_probe(void **state)
{
        (void)state;
        static const char *const no[] = {
            "VI:1\n",                /* not VS first */
            "VS:1\nXX:2\n",          /* a line that is no event */
            "VS\n",                  /* too short */
            "= Start\n+ 0x1 0x10\n", /* mtrace */
            "0 1000\n1 2000\n",      /* din */
            "# only notes\n#\n",     /* no VS in the head */
            "# a\nVI:1\n",           /* not VS first after the notes */
            "# a\nVS:1\n# b\n",      /* a comment after the first event */
            "#!/bin/sh\necho hi\n",  /* a script */
        };
        for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
                assert_int_equal(tm_rcodec_java.probe((const uint8_t *)no[i], strlen(no[i])), 0);
        static const char *const yes[] = {"VS:1\n", "VS:1\nCL:2:Foo\n", "VS:1\nCL:2:Fo",
                                          "# a note\n#\nVS:1\n", "#x\nVS:1\nCL:2:Fo"};
        for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
                assert_int_equal(tm_rcodec_java.probe((const uint8_t *)yes[i], strlen(yes[i])),
                                 TM_BID_JAVA);
}

static int teardown(void **state)
{
        free(text.p);
        text = (struct tmt_buf){0};
        return tmt_group_teardown(state);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_event),  cmocka_unit_test(test_stats),
            cmocka_unit_test(test_bounds),       cmocka_unit_test(test_zip),
            cmocka_unit_test(test_bad_lines),    cmocka_unit_test(test_probe),
            cmocka_unit_test(test_tables),       cmocka_unit_test(test_binary),
            cmocka_unit_test(test_binary_bound), cmocka_unit_test(test_binary_rewritten),
            cmocka_unit_test(test_method_split),
        };
        return cmocka_run_group_tests(tests, tmt_group_setup, teardown);
}
