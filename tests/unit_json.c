/* The stats.json view (docs/stats-json.md): valid JSON whatever the names
 * hold (a strict parser here checks every byte), the same numbers as the
 * text stats view, and numbers counted here from the references and from
 * the ascii view. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "codecs/address/addr_stats.h"
#include "codecs/address/arec.h"
#include "tmpdir_test.h"
#include "view_test.h"
#include "views/stats.h"
#include "views/view.h"

#define NREFS 20000

/* ---- a strict JSON parser (RFC 8259) keeping every scalar by path ---- */

#define JV_MAX 4096

struct jv {
        char path[128]; /* "types.2.references" */
        char val[256];  /* the scalar: a number's text, a string decoded */
        int is_str;
};

struct jp {
        const char *s;
        size_t pos, len;
        struct jv *v;
        size_t n;
        const char *why; /* the first error */
};

static int jp_fail(struct jp *p, const char *why)
{
        if (!p->why)
                p->why = why;
        return -1;
}

static void jp_ws(struct jp *p)
{
        while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]))
                p->pos++;
}

static void jp_put(struct jp *p, const char *path, const char *val, size_t n, int is_str)
{
        if (p->n == JV_MAX)
                return;
        struct jv *v = &p->v[p->n++];
        snprintf(v->path, sizeof v->path, "%s", path);
        snprintf(v->val, sizeof v->val, "%.*s", (int)n, val);
        v->is_str = is_str;
}

/* A string at pos into out (UTF-8; \u escapes of the BMP). */
static int jp_string(struct jp *p, char *out, size_t cap)
{
        size_t o = 0;
        if (p->pos >= p->len || p->s[p->pos] != '"')
                return jp_fail(p, "string expected");
        p->pos++;
        while (p->pos < p->len && p->s[p->pos] != '"') {
                unsigned char c = (unsigned char)p->s[p->pos++];
                unsigned cp = c;
                if (c < 0x20)
                        return jp_fail(p, "control byte in a string");
                if (c == '\\') {
                        if (p->pos >= p->len)
                                return jp_fail(p, "escape at the end");
                        char e = p->s[p->pos++];
                        const char *simple = strchr("\"\\/bfnrt", e);
                        if (e == 'u') {
                                if (p->pos + 4 > p->len)
                                        return jp_fail(p, "short \\u");
                                char hex[5] = {0};
                                memcpy(hex, p->s + p->pos, 4);
                                char *end;
                                cp = (unsigned)strtoul(hex, &end, 16);
                                if (*end)
                                        return jp_fail(p, "bad \\u");
                                p->pos += 4;
                        } else if (simple) {
                                cp = (unsigned char)"\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
                        } else {
                                return jp_fail(p, "bad escape");
                        }
                } else if (c >= 0x80) {
                        /* raw UTF-8: check the sequence */
                        unsigned n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : 9;
                        if (n == 9 || c > 0xf4 || p->pos + n > p->len)
                                return jp_fail(p, "not UTF-8");
                        for (unsigned i = 0; i < n; i++)
                                if (((unsigned char)p->s[p->pos + i] & 0xc0) != 0x80)
                                        return jp_fail(p, "not UTF-8");
                        if (o + n + 1 < cap) {
                                out[o++] = (char)c;
                                memcpy(out + o, p->s + p->pos, n);
                                o += n;
                        }
                        p->pos += n;
                        continue;
                }
                /* code point cp (< 0x10000) as UTF-8 */
                char u[3];
                size_t k = cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
                if (k == 1)
                        u[0] = (char)cp;
                else if (k == 2) {
                        u[0] = (char)(0xc0 | cp >> 6);
                        u[1] = (char)(0x80 | (cp & 0x3f));
                } else {
                        u[0] = (char)(0xe0 | cp >> 12);
                        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                        u[2] = (char)(0x80 | (cp & 0x3f));
                }
                if (o + k + 1 < cap) {
                        memcpy(out + o, u, k);
                        o += k;
                }
        }
        if (p->pos >= p->len)
                return jp_fail(p, "unterminated string");
        p->pos++;
        out[o < cap ? o : cap - 1] = 0;
        return 0;
}

static int jp_value(struct jp *p, const char *path, int depth);

static int jp_number(struct jp *p, const char *path)
{
        size_t a = p->pos;
        if (p->pos < p->len && p->s[p->pos] == '-')
                p->pos++;
        if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
                return jp_fail(p, "value expected");
        if (p->s[p->pos] == '0' && p->pos + 1 < p->len && p->s[p->pos + 1] >= '0' &&
            p->s[p->pos + 1] <= '9')
                return jp_fail(p, "leading zero");
        while (p->pos < p->len && strchr("0123456789.eE+-", p->s[p->pos]))
                p->pos++;
        jp_put(p, path, p->s + a, p->pos - a, 0);
        return 0;
}

static int jp_container(struct jp *p, const char *path, int depth)
{
        char open = p->s[p->pos++], close = open == '{' ? '}' : ']';
        jp_ws(p);
        if (p->pos < p->len && p->s[p->pos] == close) {
                p->pos++;
                return 0;
        }
        for (unsigned i = 0;; i++) {
                char sub[128], key[96];
                jp_ws(p);
                if (open == '{') {
                        if (jp_string(p, key, sizeof key) < 0)
                                return -1;
                        jp_ws(p);
                        if (p->pos >= p->len || p->s[p->pos++] != ':')
                                return jp_fail(p, "':' expected");
                        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", key);
                } else {
                        snprintf(sub, sizeof sub, "%s%s%u", path, *path ? "." : "", i);
                }
                if (jp_value(p, sub, depth + 1) < 0)
                        return -1;
                jp_ws(p);
                if (p->pos < p->len && p->s[p->pos] == ',') {
                        p->pos++;
                        continue;
                }
                if (p->pos < p->len && p->s[p->pos] == close) {
                        p->pos++;
                        return 0;
                }
                return jp_fail(p, "',' or a closing bracket expected");
        }
}

static int jp_value(struct jp *p, const char *path, int depth)
{
        jp_ws(p);
        if (depth > 20 || p->pos >= p->len)
                return jp_fail(p, "value expected");
        char c = p->s[p->pos];
        if (c == '{' || c == '[')
                return jp_container(p, path, depth);
        if (c == '"') {
                char buf[256];
                if (jp_string(p, buf, sizeof buf) < 0)
                        return -1;
                jp_put(p, path, buf, strlen(buf), 1);
                return 0;
        }
        static const char *const words[] = {"true", "false", "null"};
        for (int i = 0; i < 3; i++)
                if (strncmp(p->s + p->pos, words[i], strlen(words[i])) == 0) {
                        jp_put(p, path, words[i], strlen(words[i]), 0);
                        p->pos += strlen(words[i]);
                        return 0;
                }
        return jp_number(p, path);
}

/* Parse s as one JSON value (fails the test if it is not). */
static struct jp *jp_parse(const char *s, size_t len)
{
        struct jp *p = calloc(1, sizeof *p);
        p->v = calloc(JV_MAX, sizeof *p->v);
        p->s = s;
        p->len = len;
        if (jp_value(p, "", 0) == 0) {
                jp_ws(p);
                if (p->pos != len)
                        jp_fail(p, "bytes after the value");
        }
        if (p->why)
                fail_msg("not JSON at byte %zu: %s\n%.*s", p->pos, p->why, (int)len, s);
        return p;
}

static void jp_free(struct jp *p)
{
        free(p->v);
        free(p);
}

static const char *jp_get(const struct jp *p, const char *path)
{
        for (size_t i = 0; i < p->n; i++)
                if (strcmp(p->v[i].path, path) == 0)
                        return p->v[i].val;
        fail_msg("no %s in the JSON", path);
        return NULL;
}

static uint64_t jp_u64(const struct jp *p, const char *path)
{
        return strtoull(jp_get(p, path), NULL, 10);
}

/* The value of the row at path (its object's "value"). */
static const char *jp_row(const struct jp *p, const char *path)
{
        char k[128];
        snprintf(k, sizeof k, "%s.value", path);
        return jp_get(p, k);
}

static uint64_t jp_row_u64(const struct jp *p, const char *path)
{
        return strtoull(jp_row(p, path), NULL, 10);
}

/* The sum of the rows whose paths start with pre and end with suf. */
static uint64_t jp_row_sum(const struct jp *p, const char *pre, const char *suf)
{
        uint64_t sum = 0;
        size_t a = strlen(pre), b = strlen(suf);
        for (size_t i = 0; i < p->n; i++) {
                size_t n = strlen(p->v[i].path);
                if (n >= a + b && strncmp(p->v[i].path, pre, a) == 0 &&
                    strcmp(p->v[i].path + n - b, suf) == 0)
                        sum += strtoull(p->v[i].val, NULL, 10);
        }
        return sum;
}

/* One layout (docs/stats-json.md): the trace's members, then rows only,
 * each an object of value, unit and exact, in that order; exact false
 * wherever damage is set, and wherever a value is null. */
static void jp_one_layout(const struct jp *p)
{
        static const char *const head[] = {"format", "version", "family", "schema", "archive",
                                           "codec", "container", "complete", "damage",
                                           "archive_bytes", "raw_bytes", "ascii_bytes"};
        int damaged = strcmp(jp_get(p, "damage"), "null") != 0;
        for (size_t i = 0; i < p->n; i++) {
                const char *path = p->v[i].path, *dot = strrchr(path, '.');
                int is_head = 0;
                for (size_t h = 0; h < sizeof head / sizeof *head; h++)
                        is_head |= i == h && strcmp(path, head[h]) == 0;
                if (is_head || strncmp(path, "side_files.", 11) == 0 ||
                    strncmp(path, "notes.", 6) == 0)
                        continue;
                if (!dot || strcmp(dot, ".value") != 0 || i + 2 >= p->n)
                        fail_msg("%s: not a row's value", path);
                size_t n = (size_t)(dot - path);
                if (strncmp(p->v[i + 1].path, path, n) != 0 ||
                    strcmp(p->v[i + 1].path + n, ".unit") != 0 ||
                    strncmp(p->v[i + 2].path, path, n) != 0 ||
                    strcmp(p->v[i + 2].path + n, ".exact") != 0)
                        fail_msg("%s: not value, unit, exact", path);
                if (damaged || (strcmp(p->v[i].val, "null") == 0 && !p->v[i].is_str))
                        assert_string_equal(p->v[i + 2].val, "false");
                i += 2;
        }
}

/* ---- helpers ---- */

static struct vt_buf read_view(struct tm_trace *t, const char *view)
{
        struct tm_err err = {0};
        struct tm_vfile *f;
        struct vt_buf b = {0};
        uint64_t size;
        if (tm_trace_view_size(t, view, &size, &err) != 0 || tm_vfile_open(t, view, &f, &err) != 0)
                fail_msg("%s: %s", view, err.msg);
        uint8_t buf[8192];
        ssize_t r;
        while ((r = tm_vfile_pread(f, buf, sizeof buf, b.len, &err)) > 0)
                vt_put(&b, buf, (size_t)r);
        if (r < 0)
                fail_msg("%s: %s", view, err.msg);
        tm_vfile_close(f);
        assert_int_equal(b.len, size);
        vt_put(&b, "", 1); /* a NUL after the text */
        b.len--;
        return b;
}

/* The number after "label" at a line's start in the text stats view. */
static uint64_t text_u64(const char *text, const char *label)
{
        char pat[80];
        snprintf(pat, sizeof pat, "\n%s", label);
        const char *at = strncmp(text, label, strlen(label)) == 0 ? text - 1 : strstr(text, pat);
        if (!at)
                fail_msg("stats text lacks %s", label);
        return strtoull(at + 1 + strlen(label), NULL, 10);
}

/* ---- tests ---- */

static void test_address(void **state)
{
        (void)state;
        static const char *const codecs[] = {"pdats2", "din", "pdats"};
        static const enum tm_cont_kind kinds[] = {TM_CONT_ZSTD, TM_CONT_PLAIN, TM_CONT_GZIP};
        for (int c = 0; c < 3; c++) {
                const struct tm_rcodec *codec = tm_rcodec_by_name(codecs[c]);
                struct tm_ref *refs = calloc(NREFS, sizeof *refs);
                vt_gen(11 + (uint64_t)c, refs, NREFS, aref_types(codec), c == 1);
                char path[400];
                snprintf(path, sizeof path, "%s/a%d", tmpdir, c);
                struct vt_buf raw = {0}, ascii = {0};
                vt_make(path, codec, kinds[c], 4096, refs, NREFS, &raw);
                vt_expect("ascii", refs, NREFS, &raw, &ascii);
                struct tm_trace_opts o = {.no_save = 1};
                struct tm_trace *t;
                struct tm_err err = {0};
                assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
                struct vt_buf js = read_view(t, "stats.json"), text = read_view(t, "stats");
                struct jp *p = jp_parse((char *)js.p, js.len);
                assert_string_equal(jp_get(p, "format"), "tracemount-stats");
                assert_string_equal(jp_get(p, "version"), "2");
                assert_string_equal(jp_get(p, "family"), "address");
                assert_string_equal(jp_get(p, "codec"), codecs[c]);
                assert_string_equal(jp_get(p, "complete"), "true");
                assert_string_equal(jp_get(p, "damage"), "null");
                jp_one_layout(p);
                assert_string_equal(jp_get(p, "address.references.exact"), "true");
                /* counted here */
                assert_int_equal(jp_row_u64(p, "address.references"), NREFS);
                assert_int_equal(jp_row_u64(p, "records"), NREFS);
                assert_int_equal(jp_u64(p, "raw_bytes"), raw.len);
                assert_int_equal(jp_u64(p, "ascii_bytes"), ascii.len);
                uint64_t data = 0;
                for (unsigned ty = 0; ty < aref_types(codec); ty++) {
                        uint64_t n = 0, lo = UINT64_MAX, hi = 0;
                        for (size_t i = 0; i < NREFS; i++)
                                if (refs[i].type == ty) {
                                        n++;
                                        lo = refs[i].addr < lo ? refs[i].addr : lo;
                                        hi = refs[i].addr > hi ? refs[i].addr : hi;
                                }
                        char k[64], want[32];
                        const char *name = tm_type_name(ty);
                        snprintf(k, sizeof k, "address.types.%s.references", name);
                        assert_int_equal(jp_row_u64(p, k), n);
                        snprintf(k, sizeof k, "kinds.%s", name);
                        assert_int_equal(jp_row_u64(p, k), n);
                        snprintf(k, sizeof k, "address.types.%s.type", name);
                        assert_int_equal(jp_row_u64(p, k), ty);
                        snprintf(k, sizeof k, "address.types.%s.lowest", name);
                        snprintf(want, sizeof want, "0x%" PRIx64, lo);
                        assert_string_equal(jp_row(p, k), n ? want : "null");
                        snprintf(k, sizeof k, "address.types.%s.highest", name);
                        snprintf(want, sizeof want, "0x%" PRIx64, hi);
                        assert_string_equal(jp_row(p, k), n ? want : "null");
                        if (ty == TM_READ || ty == TM_WRITE)
                                data += n;
                }
                /* every instruction fetch is in one run of either kind;
                 * every data reference but the first has an offset */
                uint64_t ifetch = jp_row_u64(p, "address.types.ifetch.references");
                assert_int_equal(jp_row_u64(p, "address.jump_runs.fetches") +
                                     jp_row_u64(p, "address.clusters.fetches"),
                                 ifetch);
                assert_int_equal(jp_row_sum(p, "address.jump_runs.histogram.", ".fetches.value") +
                                     jp_row_sum(p, "address.clusters.histogram.", ".fetches.value"),
                                 ifetch);
                assert_int_equal(jp_row_u64(p, "address.data_offsets.total"), data ? data - 1 : 0);
                /* the text view's numbers */
                const char *tx = (const char *)text.p;
                assert_int_equal(jp_row_u64(p, "address.references"),
                                 text_u64(tx, "references     "));
                assert_int_equal(jp_u64(p, "archive_bytes"), text_u64(tx, "archive bytes  "));
                assert_int_equal(jp_u64(p, "raw_bytes"), text_u64(tx, "raw bytes      "));
                assert_int_equal(jp_u64(p, "ascii_bytes"), text_u64(tx, "din bytes      "));
                char label[80];
                snprintf(label, sizeof label, "jump-initiated instruction runs: %" PRIu64 " runs",
                         jp_row_u64(p, "address.jump_runs.runs"));
                assert_non_null(strstr(tx, label));
                jp_free(p);
                free(js.p);
                free(text.p);
                free(ascii.p);
                free(raw.p);
                free(refs);
                tm_trace_close(t);
        }
}

static void test_heap(void **state)
{
        (void)state;
        char path[400];
        snprintf(path, sizeof path, "%s/examples/sort.hatf.zst", TM_SOURCE_DIR);
        struct tm_trace_opts o = {.no_save = 1};
        struct tm_trace *t;
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open(path, &o, &t, &err), 0);
        struct vt_buf js = read_view(t, "stats.json"), text = read_view(t, "stats"),
                      ascii = read_view(t, "ascii");
        struct jp *p = jp_parse((char *)js.p, js.len);
        assert_string_equal(jp_get(p, "family"), "heap");
        assert_string_equal(jp_get(p, "schema"), "heap");
        jp_one_layout(p);
        /* records per kind, counted here from the first word of each line */
        uint64_t lines = 0, allocs = 0, frees = 0, reallocs = 0;
        for (const char *l = (const char *)ascii.p; *l; l = strchr(l, '\n') + 1) {
                lines++;
                allocs += strncmp(l, "alloc ", 6) == 0;
                frees += strncmp(l, "free ", 5) == 0;
                reallocs += strncmp(l, "realloc", 7) == 0;
        }
        assert_int_equal(jp_row_u64(p, "records"), lines);
        assert_int_equal(jp_u64(p, "ascii_bytes"), ascii.len);
        assert_int_equal(jp_row_u64(p, "kinds.alloc"), allocs);
        assert_int_equal(jp_row_u64(p, "heap.allocs"), allocs);
        assert_int_equal(jp_row_u64(p, "heap.frees"), frees);
        assert_int_equal(jp_row_u64(p, "heap.reallocs"), reallocs);
        assert_string_equal(jp_get(p, "heap.max_objects.unit"), "objects");
        assert_string_equal(jp_get(p, "heap.max_objects.exact"), "true");
        /* Table 3 as the text view gives it */
        const char *tx = (const char *)text.p;
        assert_int_equal(jp_row_u64(p, "records"), text_u64(tx, "records    "));
        assert_int_equal(jp_row_u64(p, "heap.total_bytes"), text_u64(tx, "  total bytes        "));
        assert_int_equal(jp_row_u64(p, "heap.max_objects"), text_u64(tx, "  max objects        "));
        assert_int_equal(jp_row_u64(p, "heap.max_bytes"), text_u64(tx, "  max bytes          "));
        assert_int_equal(jp_row_sum(p, "heap.threads.", ".records.value"), lines);
        uint64_t hist = jp_row_sum(p, "heap.size_histogram.", ".count.value");
        /* the histogram holds the allocations averaged in avg_size */
        double avg = strtod(jp_row(p, "heap.avg_size"), NULL);
        double total = (double)jp_row_u64(p, "heap.total_bytes");
        assert_true(hist > 0 && hist <= allocs + reallocs);
        assert_true(avg * (double)hist > total - (double)hist &&
                    avg * (double)hist < total + (double)hist);
        jp_free(p);
        free(js.p);
        free(text.p);
        free(ascii.p);
        tm_trace_close(t);
}

/* Names with quotes, backslashes, control bytes and bytes that are not
 * UTF-8 still make valid JSON; the length is snprintf's at any cap. */
static void test_escapes(void **state)
{
        (void)state;
        static struct tm_stats st; /* no references */
        struct tm_addr_stats *s = (struct tm_addr_stats *)st.fam;
        for (unsigned t = 0; t < TM_NTYPES; t++)
                s->addr_min[t] = UINT64_MAX;
        struct tm_schema schema;
        tm_addr_schema(&schema, 3, 0);
        static const char name[] = "a\"b\\c\n\x01\x7f\xff\xc3\xa9\xe2\x82";
        struct tm_family_info in = {.name = name, .codec = "din", .container = "plain"};
        char buf[16384];
        size_t n = tm_stats_json(&st, &schema, &in, "x: \"bad\"\tline", buf, sizeof buf);
        assert_true(n < sizeof buf);
        assert_int_equal(strlen(buf), n);
        struct jp *p = jp_parse(buf, n);
        assert_string_equal(jp_get(p, "archive"),
                            "a\"b\\c\n\x01\x7f\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd");
        assert_string_equal(jp_get(p, "damage"), "x: \"bad\"\tline");
        assert_string_equal(jp_get(p, "complete"), "false");
        assert_string_equal(jp_row(p, "address.refs_per_byte.raw"), "0.000000"); /* 0/0: no NaN */
        assert_string_equal(jp_row(p, "address.types.read.lowest"), "null");
        jp_one_layout(p); /* damaged: no row exact */
        jp_free(p);
        char whole[16384];
        size_t m = tm_stats_json(&st, &schema, &in, NULL, whole, sizeof whole);
        for (size_t cap = 0; cap < m + 2; cap += 7) {
                char small[16384];
                memset(small, 'x', sizeof small);
                assert_int_equal(tm_stats_json(&st, &schema, &in, NULL, small, cap), m);
                if (cap) /* a prefix, NUL-terminated */
                        assert_int_equal(small[cap <= m ? cap - 1 : m], 0);
                if (cap > 1 && cap <= m)
                        assert_memory_equal(small, whole, cap - 1);
        }
}

int main(void)
{
        setenv("TM_READ_THREADS", "0", 1);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_address),
            cmocka_unit_test(test_heap),
            cmocka_unit_test(test_escapes),
        };
        return cmocka_run_group_tests(tests, tmp_setup, tmp_teardown);
}
