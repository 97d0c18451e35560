/* unit_view: every view of din, pdats, pdats2 and lackey traces in plain,
 * gzip and zstd archives against bytes produced independently (codec
 * decode + snprintf), at random offsets and sequentially; the index file's
 * life (saved, reloaded without decoding, invalidated, kept in the cache
 * when the archive's directory is read-only, thinned to its size budget
 * and verified); corrupt archives. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "codecs/address/arec.h"
#include "codecs/metatf/dtd.h"
#include "tests/view_test.h"
#include "views/readahead.h"
#include "views/index.h" /* TM_CKPT_REFS_DEFAULT */
#include "views/ixfile.h"
#include "views/view.h"

#define NREFS 20000
#define CKPT 97

static char tmpdir[256];

static int setup(void **state)
{
        (void)state;
        snprintf(tmpdir, sizeof tmpdir, "/tmp/unit_view.XXXXXX");
        if (!mkdtemp(tmpdir))
                return -1;
        chmod(tmpdir, 0755);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

static const char *kind_name(enum tm_cont_kind k)
{
        return k == TM_CONT_PLAIN ? "plain" : k == TM_CONT_GZIP ? "gzip" : "zstd";
}

/* A trace made for a test: its archive, raw bytes and references. */
struct fixture {
        char path[512];
        char cache[512];
        const struct tm_rcodec *codec;
        struct vt_buf raw;
        struct tm_ref *refs;
        uint32_t *sizes; /* the access sizes (lackey), else NULL */
        size_t n;
};

static void fixture_make(struct fixture *fx, const char *dir, const char *codec,
                         enum tm_cont_kind kind, uint64_t seed, size_t n)
{
        memset(fx, 0, sizeof *fx);
        fx->codec = tm_rcodec_by_name(codec);
        assert_non_null(fx->codec);
        snprintf(fx->path, sizeof fx->path, "%s/t-%s-%s", dir, codec, kind_name(kind));
        snprintf(fx->cache, sizeof fx->cache, "%s/cache", tmpdir);
        struct tm_ref *gen = malloc(n * sizeof *gen);
        vt_gen(seed, gen, n, aref_types(fx->codec), strcmp(codec, "din") == 0);
        vt_make(fx->path, fx->codec, kind, 4096, gen, n, &fx->raw);
        fx->refs = vt_decode_all(fx->codec, fx->raw.p, fx->raw.len, &fx->n);
        assert_int_equal(fx->n, n);
        for (size_t i = 0; i < n; i++)
                if (gen[i].addr != fx->refs[i].addr || gen[i].type != fx->refs[i].type)
                        fail_msg("codec %s lost reference %zu", codec, i);
        free(gen);
}

static void fixture_free(struct fixture *fx)
{
        free(fx->raw.p);
        free(fx->refs);
        free(fx->sizes);
}

static struct tm_trace *fixture_open(const struct fixture *fx, int no_beside)
{
        struct tm_trace_opts o = {
            .cache_dir = fx->cache, .no_index_beside = no_beside, .ckpt_refs = CKPT};
        struct tm_trace *t;
        struct tm_err err = {0};
        if (tm_trace_open(fx->path, &o, &t, &err) != 0)
                fail_msg("open %s: %s", fx->path, err.msg);
        return t;
}

/* A PDATS II trace in zstd of NREFS references and its expected ascii. */
static void ascii_fixture(struct fixture *fx, uint64_t seed, struct vt_buf *want)
{
        fixture_make(fx, tmpdir, "pdats2", TM_CONT_ZSTD, seed, NREFS);
        *want = (struct vt_buf){0};
        vt_expect("ascii", fx->refs, fx->n, &fx->raw, want);
}

static void read_expect(struct tm_vfile *f, const struct vt_buf *want, uint64_t off, size_t len,
                        uint8_t *buf)
{
        struct tm_err err = {0};
        ssize_t got = tm_vfile_pread(f, buf, len, off, &err);
        size_t exp = off >= want->len ? 0 : want->len - off < len ? want->len - off : len;
        if (got < 0)
                fail_msg("pread(%zu @ %llu): %s", len, (unsigned long long)off, err.msg);
        assert_int_equal(got, exp);
        if (exp && memcmp(buf, want->p + off, exp) != 0)
                fail_msg("pread(%zu @ %llu): bytes differ", len, (unsigned long long)off);
}

/* Size, hundreds of random reads, and whole sequential reads in odd chunk
 * sizes, for one view. */
static void check_view(struct tm_trace *t, const char *view, const struct vt_buf *want, int many)
{
        struct tm_err err = {0};
        uint64_t size;
        if (tm_trace_view_size(t, view, &size, &err) != 0)
                fail_msg("%s: size: %s", view, err.msg);
        if (size != want->len)
                fail_msg("%s: size %llu, want %zu", view, (unsigned long long)size, want->len);
        struct tm_vfile *f;
        assert_int_equal(tm_vfile_open(t, view, &f, &err), 0);
        size_t bufcap = 70000;
        uint8_t *buf = malloc(bufcap);
        int nrand = many ? 300 : 40;
        for (int i = 0; i < nrand; i++) {
                uint64_t off = vt_rand() % (want->len + 40);
                size_t len = vt_rand() % 4 == 0 ? vt_rand() % 40 : vt_rand() % 9000;
                read_expect(f, want, off, len, buf);
                if (vt_rand() % 2) /* and continue from there */
                        read_expect(f, want, off + len, vt_rand() % 3000, buf);
        }
        /* Runs of sequential reads (long enough to start reading ahead),
         * then a jump elsewhere, forwards or backwards. */
        for (int run = 0; run < (many ? 12 : 3); run++) {
                uint64_t off = vt_rand() % (want->len + 1);
                size_t len = 1 + vt_rand() % 3000;
                for (int i = 0; i < 12; i++, off += len)
                        read_expect(f, want, off, len, buf);
        }
        static const size_t chunks[] = {1, 7, 19, 4093, 65537};
        for (unsigned c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
                if (!many && c < 3)
                        continue;
                if (chunks[c] < 20 && want->len > 300000)
                        continue;
                uint64_t off = 0;
                for (;;) {
                        ssize_t got = tm_vfile_pread(f, buf, chunks[c], off, &err);
                        assert_true(got >= 0);
                        if (got == 0)
                                break;
                        if (memcmp(buf, want->p + off, (size_t)got) != 0)
                                fail_msg("%s: chunk %zu at %llu differs", view, chunks[c],
                                         (unsigned long long)off);
                        off += (uint64_t)got;
                }
                assert_int_equal(off, want->len);
        }
        free(buf);
        tm_vfile_close(f);
}

static void check_stats(struct tm_trace *t, const struct fixture *fx)
{
        struct tm_err err = {0};
        uint64_t size;
        assert_int_equal(tm_trace_view_size(t, "stats", &size, &err), 0);
        struct tm_vfile *f;
        assert_int_equal(tm_vfile_open(t, "stats", &f, &err), 0);
        char *text = calloc(1, size + 1);
        assert_int_equal(tm_vfile_pread(f, text, size + 100, 0, &err), size);
        char want[128];
        snprintf(want, sizeof want, "references     %zu\n", fx->n);
        assert_non_null(strstr(text, want));
        /* the count of every type, counted here from the references */
        for (unsigned ty = 0; ty < aref_types(fx->codec); ty++) {
                uint64_t c = 0;
                for (size_t i = 0; i < fx->n; i++)
                        c += fx->refs[i].type == ty;
                snprintf(want, sizeof want, "  %u %-8s %14llu ", ty, tm_type_name(ty),
                         (unsigned long long)c);
                if (!strstr(text, want))
                        fail_msg("stats lack \"%s\":\n%s", want, text);
        }
        free(text);
        tm_vfile_close(f);
}

/* The schema view: a Meta-TF DTD (the parser and compiler accept it) of the
 * address schema, one kind per reference type, named as its stream, each
 * a tag and the fields type and address (and size where the codec has
 * sizes); then the 16-byte binary record's layout. */
static void check_schema(struct tm_trace *t, const struct fixture *fx)
{
        struct tm_err err = {0};
        uint64_t size;
        assert_int_equal(tm_trace_view_size(t, "schema", &size, &err), 0);
        struct tm_vfile *f;
        assert_int_equal(tm_vfile_open(t, "schema", &f, &err), 0);
        char *text = calloc(1, size + 1);
        assert_int_equal(tm_vfile_pread(f, text, size + 10, 0, &err), (ssize_t)size);
        tm_vfile_close(f);
        static struct mtf_dtd dtd;
        static struct mtf_layout lay;
        if (mtf_dtd_parse(&dtd, "schema", text, size, &err) < 0 ||
            mtf_dtd_compile(&dtd, &lay, &err) < 0)
                fail_msg("schema: %s\n%s", err.msg, text);
        int sized = aref_sized(fx->codec);
        static const char *const leaves[] = {"tag", "type", "address", "size"};
        unsigned nleaves = 3 + (unsigned)sized;
        assert_non_null(strstr(text, sized ? "ifetch : (tag, type, address, size) {"
                                           : "ifetch : (tag, type, address) {"));
        unsigned found = 0; /* the kinds named after a type: the codec's types */
        for (unsigned i = 0; i < lay.nkinds; i++) {
                const struct mtf_kind *k = &lay.kind[i];
                unsigned ty = 0;
                while (ty < TM_NTYPES && strcmp(k->name, tm_type_name(ty)) != 0)
                        ty++;
                if (ty == TM_NTYPES)
                        continue; /* predefined (comment, section, metadata) */
                if (ty >= aref_types(fx->codec) || ty != found || k->nleaves != nleaves)
                        fail_msg("schema kind %u: %s with %u leaves\n%s", i, k->name, k->nleaves,
                                 text);
                for (unsigned l = 0; l < nleaves; l++)
                        assert_string_equal(k->leaf[l].name, leaves[l]);
                found++;
        }
        assert_int_equal(found, aref_types(fx->codec));
        assert_non_null(strstr(text, "// binary: 16-byte little-endian records"));
        assert_non_null(strstr(text, "struct tm_binary_ref {"));
        assert_int_equal(sizeof(struct tm_binary_ref), 16);
        free(text);
}

static void check_all_views(struct tm_trace *t, const struct fixture *fx, int many)
{
        struct vt_buf want = {0};
        const char *const *views = tm_trace_views(t);
        unsigned nviews = 0;
        for (; views[nviews]; nviews++) {
                if (strcmp(views[nviews], "stats") == 0) {
                        check_stats(t, fx);
                        continue;
                }
                if (strcmp(views[nviews], "schema") == 0) {
                        check_schema(t, fx);
                        continue;
                }
                if (strcmp(views[nviews], "xdin") == 0)
                        continue; /* unit_xdin.c */
                if (strcmp(views[nviews], "stats.json") == 0 ||
                    strcmp(views[nviews], "errors") == 0)
                        continue; /* unit_json.c, unit_errors.c */
                if (strcmp(views[nviews], "fields/size") == 0)
                        vt_expect_sizes(fx->sizes, fx->n, &want);
                else
                        vt_expect(views[nviews], fx->refs, fx->n, &fx->raw, &want);
                check_view(t, views[nviews], &want, many);
        }
        /* the fixed five, a stream a type, xdin and fields/size where the
         * codec has sizes, fields/type, fields/address, stats.json, errors */
        int sized = aref_sized(fx->codec);
        assert_int_equal(nviews, 5 + aref_types(fx->codec) + 2 * sized + 2 + 2);
        free(want.p);
}

static void test_views(void **state)
{
        (void)state;
        static const char *const codecs[] = {"din", "pdats", "pdats2"};
        static const enum tm_cont_kind kinds[] = {TM_CONT_PLAIN, TM_CONT_GZIP, TM_CONT_ZSTD};
        for (unsigned c = 0; c < 3; c++)
                for (unsigned k = 0; k < 3; k++) {
                        struct fixture fx;
                        fixture_make(&fx, tmpdir, codecs[c], kinds[k], c * 3 + k, NREFS);
                        /* one readahead worker or two, alternately */
                        setenv("TM_READ_THREADS", (c + k) % 2 ? "1" : "2", 1);
                        struct tm_trace *t = fixture_open(&fx, 0);
                        assert_string_equal(tm_trace_codec(t), codecs[c]);
                        assert_string_equal(tm_trace_container(t), kind_name(kinds[k]));
                        assert_int_equal(tm_trace_index_source(t), TM_INDEX_NONE);
                        check_all_views(t, &fx, 1);
                        assert_int_equal(tm_trace_index_source(t), TM_INDEX_BUILT);
                        assert_non_null(tm_trace_index_path(t));
                        char beside[600];
                        snprintf(beside, sizeof beside, "%s/.t-%s-%s.tmidx", tmpdir, codecs[c],
                                 kind_name(kinds[k]));
                        assert_string_equal(tm_trace_index_path(t), beside);
                        tm_trace_close(t);

                        /* The second open loads the index: nothing decoded.
                         * This time every read goes through the vfile's own
                         * cursor (no readahead threads). */
                        setenv("TM_READ_THREADS", "0", 1);
                        t = fixture_open(&fx, 0);
                        struct tm_err err = {0};
                        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
                        assert_int_equal(tm_trace_index_source(t), TM_INDEX_LOADED);
                        check_all_views(t, &fx, 0);
                        assert_int_equal(tm_trace_verify(t, NULL, NULL, &err), 0);
                        tm_trace_close(t);
                        setenv("TM_READ_THREADS", "2", 1);
                        fixture_free(&fx);
                }
}

/* Readaheads share one memory budget: with many sequential readers open at
 * once their segment buffers stay within it, readers that find it spent
 * read through their own cursor, every byte is still right, and closing
 * the files gives the memory back. Budget 1 byte: nobody reads ahead. */
static void test_readahead_budget(void **state)
{
        (void)state;
        enum { NF = 12, CHUNK = 3000 };
        struct fixture fx;
        struct vt_buf want;
        ascii_fixture(&fx, 91, &want);
        static const char *const budgets[] = {"20000", "1"};
        uint8_t buf[CHUNK];
        for (unsigned b = 0; b < 2; b++) {
                setenv("TM_READ_AHEAD_MEM", budgets[b], 1);
                uint64_t budget = strtoull(budgets[b], NULL, 10);
                struct tm_trace *t = fixture_open(&fx, 0);
                struct tm_vfile *f[NF];
                struct tm_err err = {0};
                for (int i = 0; i < NF; i++)
                        assert_int_equal(tm_vfile_open(t, "ascii", &f[i], &err), 0);
                uint64_t pos[NF] = {0}, peak = 0;
                for (int more = 1; more;) {
                        more = 0;
                        for (int i = 0; i < NF; i++) {
                                if (pos[i] >= want.len)
                                        continue;
                                read_expect(f[i], &want, pos[i], CHUNK, buf);
                                pos[i] += CHUNK;
                                more = 1;
                                uint64_t m = tm_ra_mem_in_use();
                                assert_true(m <= budget);
                                peak = m > peak ? m : peak;
                        }
                }
                if (b == 0)
                        assert_true(peak > 0); /* some did read ahead */
                for (int i = 0; i < NF; i++)
                        tm_vfile_close(f[i]);
                assert_int_equal(tm_ra_mem_in_use(), 0);
                tm_trace_close(t);
        }
        unsetenv("TM_READ_AHEAD_MEM");
        free(want.p);
        fixture_free(&fx);
}

/* The kernel's readahead sends a sequential reader's requests at once, and
 * they can arrive out of order across a segment boundary: such a late
 * request is served right and the readahead goes on; a real jump back
 * ends it. (Segments here are CKPT references, ~900 bytes of ascii.) */
static void test_readahead_late(void **state)
{
        (void)state;
        enum { CHUNK = 700 };
        struct fixture fx;
        struct vt_buf want;
        ascii_fixture(&fx, 93, &want);
        struct tm_trace *t = fixture_open(&fx, 0);
        struct tm_vfile *f;
        struct tm_err err = {0};
        uint8_t buf[CHUNK];
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        uint64_t pos = 0;
        for (int i = 0; i < 8; i++, pos += CHUNK)
                read_expect(f, &want, pos, CHUNK, buf);
        assert_true(tm_ra_mem_in_use() > 0);
        /* pairs of requests swapped, through the rest of the first half */
        for (; pos + 2 * CHUNK < want.len / 2; pos += 2 * CHUNK) {
                read_expect(f, &want, pos + CHUNK, CHUNK, buf);
                read_expect(f, &want, pos, CHUNK, buf);
                assert_true(tm_ra_mem_in_use() > 0);
        }
        /* two requests late by several segments (3 and 4 chunks) */
        read_expect(f, &want, pos - 3 * CHUNK, CHUNK, buf);
        read_expect(f, &want, pos - 4 * CHUNK, CHUNK, buf);
        read_expect(f, &want, pos, CHUNK, buf);
        assert_true(tm_ra_mem_in_use() > 0);
        /* back to the start: a jump, the readahead is dropped */
        read_expect(f, &want, 0, CHUNK, buf);
        assert_int_equal(tm_ra_mem_in_use(), 0);
        tm_vfile_close(f);
        tm_trace_close(t);
        free(want.p);
        fixture_free(&fx);
}

/* Workers: $TM_READ_THREADS when set; else CPUs - 1, and for a record
 * trace's text at least two where there are two CPUs. */
static void test_ra_threads(void **state)
{
        (void)state;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        unsetenv("TM_READ_THREADS");
        unsigned n = tm_ra_threads(), heavy = tm_ra_threads_heavy();
        assert_int_equal(n, cpus - 1 > TM_RA_THREADS_MAX ? TM_RA_THREADS_MAX : cpus - 1);
        assert_int_equal(heavy, cpus == 2 ? 2 : n);
        setenv("TM_READ_THREADS", "1", 1);
        assert_int_equal(tm_ra_threads_heavy(), 1);
        setenv("TM_READ_THREADS", "0", 1);
        assert_int_equal(tm_ra_threads_heavy(), 0);
        unsetenv("TM_READ_THREADS");
}

/* A first read at 0 of 128 KiB or more (cat, the kernel's readahead
 * window) reads ahead at once; a smaller one (a peek at the head) does
 * not, nor does a later read at 0; the run of sequential reads still
 * starts it. */
static void test_readahead_first(void **state)
{
        (void)state;
        enum { BIG = 128 << 10, SMALL = 4096 };
        struct fixture fx;
        struct vt_buf want;
        ascii_fixture(&fx, 94, &want);
        assert_true(want.len > BIG + 8 * SMALL);
        struct tm_trace *t = fixture_open(&fx, 0);
        struct tm_vfile *f;
        struct tm_err err = {0};
        uint8_t *buf = malloc(BIG);
        assert_non_null(buf);
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        read_expect(f, &want, 0, BIG, buf);
        assert_true(tm_ra_mem_in_use() > 0);
        read_expect(f, &want, BIG, SMALL, buf); /* and serves the next */
        tm_vfile_close(f);
        assert_int_equal(tm_ra_mem_in_use(), 0);
        /* a peek at the head, then a big read at 0: neither is a first
         * big read at 0 */
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        read_expect(f, &want, 0, SMALL, buf);
        assert_int_equal(tm_ra_mem_in_use(), 0);
        read_expect(f, &want, 0, BIG, buf);
        assert_int_equal(tm_ra_mem_in_use(), 0);
        /* the sequential run from there does */
        uint64_t pos = BIG;
        for (int i = 0; i < 5; i++, pos += SMALL)
                read_expect(f, &want, pos, SMALL, buf);
        assert_true(tm_ra_mem_in_use() > 0);
        tm_vfile_close(f);
        /* a first big read elsewhere is not one at 0 */
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        read_expect(f, &want, SMALL, BIG, buf);
        assert_int_equal(tm_ra_mem_in_use(), 0);
        tm_vfile_close(f);
        free(buf);
        tm_trace_close(t);
        free(want.p);
        fixture_free(&fx);
}

/* K = 1: the index fills its 8192 checkpoints twice and thins itself
 * (K becomes 4); every view still reads right, saved and reloaded. */
static void test_thinned(void **state)
{
        (void)state;
        struct fixture fx;
        fixture_make(&fx, tmpdir, "pdats2", TM_CONT_GZIP, 77, NREFS);
        struct tm_trace_opts o = {.cache_dir = fx.cache, .ckpt_refs = 1};
        for (int round = 0; round < 2; round++) {
                struct tm_trace *t;
                struct tm_err err = {0};
                assert_int_equal(tm_trace_open(fx.path, &o, &t, &err), 0);
                check_all_views(t, &fx, 0);
                assert_int_equal(tm_trace_index_source(t),
                                 round ? TM_INDEX_LOADED : TM_INDEX_BUILT);
                tm_trace_close(t);
        }
        fixture_free(&fx);
}

/* The size of the file at path. */
static uint64_t file_size(const char *path)
{
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        return (uint64_t)sb.st_size;
}

/* With the default spacing the checkpoints are thinned to the index's
 * size budget (0.5% of the archive): in seekable zstd (1 MiB frames, its
 * restart points) to those at frame starts, or by halving to one when not
 * two fit; in gzip by halving. The file is smaller than one of the same
 * spacing unthinned, the views still read right, and verify (which
 * decodes the archive again, taking the file's checkpoints) agrees with
 * it, built and loaded. (A din loop, ~9 MiB of text that packs 40 to 400
 * times as a random address comes every 40 references or never: the
 * budget is small, and zstd's frames are far enough apart, 512 archive
 * bytes at least, to be restart points.) */
static void test_budget(void **state)
{
        (void)state;
        enum { N = 1000000 };
        static const struct {
                enum tm_cont_kind kind;
                unsigned noise;  /* a random address every noise references, or none */
                unsigned period; /* references of the loop (gzip's window is 32 KiB) */
        } cases[] = {{TM_CONT_ZSTD, 40, 2000}, {TM_CONT_ZSTD, 0, 2000}, {TM_CONT_GZIP, 0, 400}};
        struct tm_ref *refs = malloc(N * sizeof *refs);
        struct vt_buf want = {0};
        for (unsigned c = 0; c < 3; c++) {
                vt_rng = 7;
                for (size_t i = 0; i < N; i++)
                        refs[i] = cases[c].noise && i % cases[c].noise == 0
                                      ? (struct tm_ref){vt_rand() & 0xffffffff, TM_WRITE}
                                      : (struct tm_ref){0x400000 + 4 * (i % cases[c].period),
                                                        i % 5 ? TM_IFETCH : TM_READ};
                struct fixture fx;
                memset(&fx, 0, sizeof fx);
                fx.codec = tm_rcodec_by_name("din");
                snprintf(fx.path, sizeof fx.path, "%s/budget-%u", tmpdir, c);
                snprintf(fx.cache, sizeof fx.cache, "%s/cache-budget", tmpdir);
                vt_make(fx.path, fx.codec, cases[c].kind, 0, refs, N, &fx.raw);
                fx.refs = vt_decode_all(fx.codec, fx.raw.p, fx.raw.len, &fx.n);
                assert_int_equal(fx.n, N);
                /* the same spacing, asked for: not thinned (in a cache of
                 * its own: an index of any spacing serves) */
                char cache_k[600];
                snprintf(cache_k, sizeof cache_k, "%s-k", fx.cache);
                struct tm_trace_opts o = {
                    .cache_dir = cache_k, .no_index_beside = 1, .ckpt_refs = TM_CKPT_REFS_DEFAULT};
                struct tm_trace *t;
                struct tm_err err = {0};
                assert_int_equal(tm_trace_open(fx.path, &o, &t, &err), 0);
                assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
                assert_non_null(tm_trace_index_path(t));
                uint64_t unthinned = file_size(tm_trace_index_path(t));
                assert_int_equal(tm_trace_verify(t, NULL, NULL, &err), 0);
                tm_trace_close(t);
                o = (struct tm_trace_opts){.cache_dir = fx.cache};
                for (int round = 0; round < 2; round++) {
                        assert_int_equal(tm_trace_open(fx.path, &o, &t, &err), 0);
                        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
                        assert_int_equal(tm_trace_index_source(t),
                                         round ? TM_INDEX_LOADED : TM_INDEX_BUILT);
                        if (file_size(tm_trace_index_path(t)) >= unthinned)
                                fail_msg("case %u: not thinned", c);
                        if (tm_trace_verify(t, NULL, NULL, &err) != 0)
                                fail_msg("case %u: verify: %s", c, err.msg);
                        static const char *const views[] = {"ascii", "binary", "streams/read",
                                                            "fields/address"};
                        for (unsigned v = 0; round == 0 && v < 4; v++) {
                                vt_expect(views[v], fx.refs, fx.n, &fx.raw, &want);
                                check_view(t, views[v], &want, 0);
                        }
                        tm_trace_close(t);
                }
                fixture_free(&fx);
        }
        free(want.p);
        free(refs);
}

/* Traces with no references, or one: empty views, exact sizes. */
static void test_tiny(void **state)
{
        (void)state;
        static const char *const codecs[] = {"pdats", "pdats2"};
        for (unsigned c = 0; c < 2; c++)
                for (size_t n = 0; n < 2; n++) {
                        struct fixture fx;
                        fixture_make(&fx, tmpdir, codecs[c], TM_CONT_ZSTD, 1, n);
                        struct tm_trace *t = fixture_open(&fx, 0);
                        check_all_views(t, &fx, 0);
                        uint64_t size;
                        struct tm_err err = {0};
                        assert_int_equal(tm_trace_view_size(t, "binary", &size, &err), 0);
                        assert_int_equal(size, 16 * n);
                        tm_trace_close(t);
                        fixture_free(&fx);
                }
}

static enum tm_index_source open_index(const struct fixture *fx, int no_beside)
{
        struct tm_trace *t = fixture_open(fx, no_beside);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        enum tm_index_source s = tm_trace_index_source(t);
        tm_trace_close(t);
        return s;
}

/* A new mtime or a replaced file (new inode) makes the index stale. */
static void test_invalidate(void **state)
{
        (void)state;
        struct fixture fx;
        fixture_make(&fx, tmpdir, "pdats2", TM_CONT_ZSTD, 42, 5000);
        assert_int_equal(open_index(&fx, 0), TM_INDEX_BUILT);
        assert_int_equal(open_index(&fx, 0), TM_INDEX_LOADED);

        struct timespec ts[2] = {{0, UTIME_OMIT}, {1234567890, 5}};
        assert_int_equal(utimensat(AT_FDCWD, fx.path, ts, 0), 0);
        assert_int_equal(open_index(&fx, 0), TM_INDEX_BUILT);
        assert_int_equal(open_index(&fx, 0), TM_INDEX_LOADED);

        /* Replace by another trace of the same name. */
        struct fixture fy;
        char sub[300];
        snprintf(sub, sizeof sub, "%s/other", tmpdir);
        mkdir(sub, 0755);
        fixture_make(&fy, sub, "pdats2", TM_CONT_ZSTD, 43, 6000);
        assert_int_equal(rename(fy.path, fx.path), 0);
        memcpy(fy.path, fx.path, sizeof fy.path);
        struct tm_trace *t = fixture_open(&fy, 0);
        check_all_views(t, &fy, 0);
        assert_int_equal(tm_trace_index_source(t), TM_INDEX_BUILT);
        tm_trace_close(t);

        /* A damaged index file is ignored and rebuilt. */
        char ipath[600];
        snprintf(ipath, sizeof ipath, "%s/.t-pdats2-zstd.tmidx", tmpdir);
        int fd = open(ipath, O_RDWR);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, "\xff", 1, 300), 1);
        close(fd);
        assert_int_equal(open_index(&fy, 0), TM_INDEX_BUILT);
        assert_int_equal(open_index(&fy, 0), TM_INDEX_LOADED);
        fixture_free(&fx);
        fixture_free(&fy);
}

/* The archive's directory is not writable: the index goes to the cache
 * directory. As root, the check runs in a child that becomes nobody. */
static int readonly_child(const char *dir, const char *cache)
{
        struct fixture fx;
        fixture_make(&fx, dir, "pdats", TM_CONT_ZSTD, 7, 3000);
        if (chmod(dir, 0555) != 0 || chmod(fx.path, 0444) != 0)
                return 2;
        if (geteuid() == 0) {
                if (chown(cache, 65534, 65534) != 0)
                        return 3;
                if (setgid(65534) != 0 || setuid(65534) != 0)
                        return 4;
        }
        for (int round = 0; round < 2; round++) {
                struct tm_trace *t = fixture_open(&fx, 0);
                check_all_views(t, &fx, 0);
                const char *ip = tm_trace_index_path(t);
                if (!ip || strncmp(ip, cache, strlen(cache)) != 0)
                        return 5;
                if (tm_trace_index_source(t) != (round ? TM_INDEX_LOADED : TM_INDEX_BUILT))
                        return 6;
                tm_trace_close(t);
        }
        fixture_free(&fx);
        return 0;
}

static void test_readonly_dir(void **state)
{
        (void)state;
        char dir[300], cache[300];
        snprintf(dir, sizeof dir, "%s/ro", tmpdir);
        snprintf(cache, sizeof cache, "%s/cache", tmpdir);
        assert_int_equal(mkdir(dir, 0755), 0);
        mkdir(cache, 0755);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                _exit(readonly_child(dir, cache));
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        chmod(dir, 0755);
}

/* Key the index file beside fx's archive to the archive as it is now: its
 * fingerprint (views/ixfile.h) written in, the CRC made right, as an index
 * made before a change that the fingerprint does not see (between its
 * samples of a large archive). */
static void rekey_index(const struct fixture *fx)
{
        char ix[600];
        const char *slash = strrchr(fx->path, '/');
        snprintf(ix, sizeof ix, "%.*s/.%s.tmidx", (int)(slash - fx->path), fx->path, slash + 1);
        int afd = open(fx->path, O_RDONLY), fd = open(ix, O_RDWR);
        struct stat sb, ib;
        assert_true(afd >= 0 && fd >= 0 && fstat(afd, &sb) == 0 && fstat(fd, &ib) == 0);
        uint64_t fp;
        uint64_t size = (uint64_t)sb.st_size;
        assert_int_equal(tm_ix_fingerprint(afd, size, size, &fp), 0);
        uint8_t *b = malloc((size_t)ib.st_size);
        assert_int_equal(pread(fd, b, (size_t)ib.st_size, 0), ib.st_size);
        for (int i = 0; i < 8; i++)
                b[TM_IX_FP_AT + i] = (uint8_t)(fp >> (8 * i));
        uint32_t crc;
        assert_int_equal(pwrite(fd, b, (size_t)ib.st_size, 0), ib.st_size);
        assert_int_equal(tm_ixfile_crc(fd, TM_IXFILE_CRC_FROM, (uint64_t)ib.st_size, &crc), 0);
        uint8_t cb[4] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16),
                         (uint8_t)(crc >> 24)};
        assert_int_equal(pwrite(fd, cb, 4, 12), 4);
        free(b);
        close(fd);
        close(afd);
}

/* A damaged record: reads that need it fail with -EIO naming the archive;
 * every other offset still reads right, before and after the failure. */
static void test_corrupt(void **state)
{
        (void)state;
        struct fixture fx;
        fixture_make(&fx, tmpdir, "din", TM_CONT_PLAIN, 99, 5000);
        assert_int_equal(open_index(&fx, 0), TM_INDEX_BUILT);

        /* Damage line 2500's type digit, keeping size, mtime and inode. */
        size_t line = 2500, off = 0;
        for (size_t i = 0; i < line; i++)
                off =
                    (size_t)((uint8_t *)memchr(fx.raw.p + off, '\n', fx.raw.len - off) - fx.raw.p) +
                    1;
        struct stat sb;
        assert_int_equal(stat(fx.path, &sb), 0);
        int fd = open(fx.path, O_WRONLY);
        assert_int_equal(pwrite(fd, "q", 1, (off_t)off), 1);
        struct timespec ts[2] = {sb.st_atim, sb.st_mtim};
        assert_int_equal(futimens(fd, ts), 0);
        close(fd);
        rekey_index(&fx); /* an index that still matches: read across the damage */

        struct tm_trace *t = fixture_open(&fx, 0);
        struct tm_err err = {0};
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        assert_int_equal(tm_trace_index_source(t), TM_INDEX_LOADED);
        struct vt_buf want = {0};
        vt_expect("ascii", fx.refs, fx.n, &fx.raw, &want);
        struct tm_vfile *f;
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        uint8_t buf[4096];
        read_expect(f, &want, 0, 100, buf);
        /* The din view of a din trace is the raw text: same offsets. */
        memset(&err, 0, sizeof err);
        ssize_t r = tm_vfile_pread(f, buf, 10, off, &err);
        assert_int_equal(r, -EIO);
        assert_non_null(strstr(err.msg, fx.path));
        assert_non_null(strstr(err.msg, "raw offset"));
        read_expect(f, &want, 0, 100, buf);
        read_expect(f, &want, want.len - 50, 100, buf);
        read_expect(f, &want, off - 500, 100, buf);
        /* A sequential read up to the damage returns what precedes it. */
        r = tm_vfile_pread(f, buf, sizeof buf, off - 200, &err);
        assert_true(r >= 0 && r <= 200);
        read_expect(f, &want, off + 2000, 300, buf);
        tm_vfile_close(f);
        /* Sequential reading (with readahead: two workers, then one)
         * delivers every byte before the damaged line, then the error; then
         * other offsets still work. */
        static const char *const nthreads[] = {"2", "1"};
        for (int th = 0; th < 2; th++) {
                setenv("TM_READ_THREADS", nthreads[th], 1);
                assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
                uint64_t pos = 0;
                for (;;) {
                        r = tm_vfile_pread(f, buf, sizeof buf, pos, &err);
                        if (r <= 0)
                                break;
                        if (memcmp(buf, want.p + pos, (size_t)r))
                                fail_msg("%s threads: sequential read of %zd at %llu (damage "
                                         "at %zu) differs",
                                         nthreads[th], r, (unsigned long long)pos, off);
                        pos += (uint64_t)r;
                }
                assert_int_equal(r, -EIO);
                assert_int_equal(pos, off);
                read_expect(f, &want, 10, 100, buf);
                read_expect(f, &want, off + 5000, 3000, buf);
                tm_vfile_close(f);
        }
        setenv("TM_READ_THREADS", "2", 1);
        memset(&err, 0, sizeof err);
        assert_int_equal(tm_trace_verify(t, NULL, NULL, &err), -EIO);
        assert_non_null(strstr(err.msg, fx.path));
        tm_trace_close(t);

        /* Building over the damage keeps the intact prefix (its views end
         * with a byte whose read fails: docs/damage.md) and the failure is
         * remembered. */
        struct tm_trace_opts o = {.no_save = 1, .cache_dir = fx.cache};
        assert_int_equal(tm_trace_open(fx.path, &o, &t, &err), 0);
        char beside[600];
        snprintf(beside, sizeof beside, "%s/.t-din-plain.tmidx", tmpdir);
        assert_int_equal(unlink(beside), 0);
        uint64_t size;
        memset(&err, 0, sizeof err);
        assert_int_equal(tm_trace_view_size(t, "ascii", &size, &err), 0);
        assert_int_equal(size, off + 1);
        memset(&err, 0, sizeof err);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), -EIO);
        assert_non_null(strstr(err.msg, fx.path));
        /* Repaired in place (new mtime): the same trace object retries. */
        fd = open(fx.path, O_WRONLY);
        assert_int_equal(pwrite(fd, fx.raw.p + off, 1, (off_t)off), 1);
        ts[1].tv_sec += 10;
        assert_int_equal(futimens(fd, ts), 0);
        close(fd);
        assert_int_equal(tm_trace_index(t, NULL, NULL, &err), 0);
        check_all_views(t, &fx, 0);
        tm_trace_close(t);
        free(want.p);
        fixture_free(&fx);
}

static void *index_thread(void *arg)
{
        struct tm_err err = {0};
        return (void *)(intptr_t)tm_trace_index(arg, NULL, NULL, &err);
}

static void progress(void *arg, uint64_t done, uint64_t total)
{
        uint64_t *last = arg;
        assert_true(done >= last[0]);
        last[0] = done;
        last[1] = total;
}

static void test_threads(void **state)
{
        (void)state;
        struct fixture fx;
        fixture_make(&fx, tmpdir, "pdats", TM_CONT_GZIP, 5, 20000);
        struct tm_trace *t = fixture_open(&fx, 1);
        uint64_t last[2] = {0, 0};
        struct tm_trace *t2;
        struct tm_trace_opts o = {.no_save = 1, .cache_dir = fx.cache};
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open(fx.path, &o, &t2, &err), 0);
        assert_int_equal(tm_trace_index(t2, progress, last, &err), 0);
        assert_int_equal(last[0], fx.raw.len); /* the last call says all done */
        assert_int_equal(last[1], fx.raw.len);
        assert_null(tm_trace_index_path(t2)); /* no_save: memory only */
        tm_trace_close(t2);
        pthread_t th[6];
        for (int i = 0; i < 6; i++)
                assert_int_equal(pthread_create(&th[i], NULL, index_thread, t), 0);
        for (int i = 0; i < 6; i++) {
                void *rc;
                pthread_join(th[i], &rc);
                assert_int_equal((intptr_t)rc, 0);
        }
        assert_int_equal(tm_trace_index_source(t), TM_INDEX_BUILT);
        /* no_index_beside: the index is in the cache directory */
        assert_non_null(tm_trace_index_path(t));
        assert_non_null(strstr(tm_trace_index_path(t), "/cache/"));
        check_all_views(t, &fx, 0);
        tm_trace_close(t);
        fixture_free(&fx);
}

/* lackey (decode-only): an M line is two references, so checkpoints fall
 * between the halves of a record; valgrind's own lines are skipped. */
static void test_lackey(void **state)
{
        (void)state;
        static const enum tm_cont_kind kinds[] = {TM_CONT_PLAIN, TM_CONT_GZIP, TM_CONT_ZSTD};
        struct vt_buf text = {0};
        const char *hdr = "==123== Lackey, an example Valgrind tool\n";
        vt_put(&text, hdr, strlen(hdr));
        for (int i = 0; i < 6000; i++) {
                static const char *const fmt[] = {"I  %08llx,%u\n", " L %08llx,%u\n",
                                                  " S %08llx,%u\n", " M %08llx,%u\n"};
                char line[64];
                unsigned k = (unsigned)(vt_rand() % 4);
                int len = snprintf(line, sizeof line, fmt[k],
                                   (unsigned long long)(vt_rand() & 0x7fffffffff),
                                   1 + (unsigned)(vt_rand() % 8));
                vt_put(&text, line, (size_t)len);
                if (i % 1000 == 999)
                        vt_put(&text, "==123== \n", 9);
        }
        for (unsigned k = 0; k < 3; k++) {
                struct fixture fx;
                memset(&fx, 0, sizeof fx);
                fx.codec = tm_rcodec_by_name("lackey");
                assert_non_null(fx.codec);
                snprintf(fx.path, sizeof fx.path, "%s/lackey-%s", tmpdir, kind_name(kinds[k]));
                snprintf(fx.cache, sizeof fx.cache, "%s/cache", tmpdir);
                int fd = open(fx.path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                struct tm_cwriter_opts wo = {.frame_size = 4096};
                struct tm_cwriter *w;
                struct tm_err err = {0};
                assert_int_equal(tm_cwriter_open(fd, fx.path, kinds[k], &wo, &w, &err), 0);
                assert_int_equal(tm_cwriter_write(w, text.p, text.len, &err), 0);
                assert_int_equal(tm_cwriter_close(w, &err), 0);
                close(fd);
                vt_put(&fx.raw, text.p, text.len);
                fx.refs = vt_decode_sized(fx.codec, fx.raw.p, fx.raw.len, &fx.n, &fx.sizes);
                assert_true(fx.n > 6000);
                struct tm_trace_opts o = {.cache_dir = fx.cache, .ckpt_refs = 3};
                struct tm_trace *t;
                assert_int_equal(tm_trace_open(fx.path, &o, &t, &err), 0);
                assert_string_equal(tm_trace_codec(t), "lackey");
                check_all_views(t, &fx, 0);
                tm_trace_close(t);
                fixture_free(&fx);
        }
        free(text.p);
}

static void test_not_trace(void **state)
{
        (void)state;
        char path[300];
        snprintf(path, sizeof path, "%s/junk", tmpdir);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        uint8_t junk[3000];
        for (size_t i = 0; i < sizeof junk; i++)
                junk[i] = (uint8_t)(vt_rand() | 0x80);
        assert_int_equal(write(fd, junk, sizeof junk), sizeof junk);
        close(fd);
        struct tm_trace *t;
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open(path, NULL, &t, &err), -EMEDIUMTYPE);
        assert_int_equal(tm_probe_path(path, NULL, NULL), 0);
        fd = open(path, O_WRONLY | O_TRUNC);
        close(fd);
        assert_int_equal(tm_probe_path(path, NULL, NULL), 0);
        snprintf(path, sizeof path, "%s/nonexistent", tmpdir);
        assert_int_equal(tm_trace_open(path, NULL, &t, &err), -ENOENT);

        struct fixture fx;
        fixture_make(&fx, tmpdir, "pdats2", TM_CONT_GZIP, 11, 100);
        const char *codec, *cont;
        assert_int_equal(tm_probe_path(fx.path, &codec, &cont), 1);
        assert_string_equal(codec, "pdats2");
        assert_string_equal(cont, "gzip");
        fixture_free(&fx);
}

/* The bytes a span points at equal want's at off. */
static void span_expect(const struct tm_vspan *sp, const struct vt_buf *want, uint64_t off,
                        size_t len)
{
        size_t at = 0;
        assert_true(sp->n >= 1 && sp->n <= TM_VSPAN_MAX);
        for (unsigned i = 0; i < sp->n; i++) {
                if (memcmp(sp->iov[i].iov_base, want->p + off + at, sp->iov[i].iov_len) != 0)
                        fail_msg("span piece %u @ %llu: bytes differ", i,
                                 (unsigned long long)(off + at));
                at += sp->iov[i].iov_len;
        }
        assert_int_equal(at, len);
}

struct peek_holder {
        struct tm_vspan sp;
        const struct vt_buf *want;
        uint64_t off;
        size_t len;
        atomic_int given_back;
};

/* Check the held bytes a while after tm_vfile_close started, then give
 * them back. */
static void *peek_hold_thread(void *arg)
{
        struct peek_holder *h = arg;
        struct timespec d = {0, 100 * 1000 * 1000};
        nanosleep(&d, NULL);
        span_expect(&h->sp, h->want, h->off, h->len);
        atomic_store(&h->given_back, 1);
        tm_vfile_unpeek(&h->sp);
        return NULL;
}

/* tm_vfile_peek: bytes served in place from the readahead's segments equal
 * the copying path's; a held span stays unchanged while the workers go on;
 * a request too wide for a span, a jump, or no readahead yet say -1 (and
 * tm_vfile_pread then serves them); reading on, and close, wait for a span
 * still held in another thread. (Segments: CKPT refs, ~900 bytes.) */
static void test_peek(void **state)
{
        (void)state;
        enum { CHUNK = 700, WIDE = 3000 };
        struct fixture fx;
        struct vt_buf want;
        ascii_fixture(&fx, 97, &want);
        struct tm_trace *t = fixture_open(&fx, 0);
        struct tm_vfile *f;
        struct tm_err err = {0};
        uint8_t buf[WIDE];
        struct tm_vspan a, b;
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        assert_int_equal(tm_vfile_peek(f, CHUNK, 0, &a), -1); /* no readahead yet */
        uint64_t pos = 0;
        for (int i = 0; i < 8; i++, pos += CHUNK)
                read_expect(f, &want, pos, CHUNK, buf);
        int two = 0;
        struct timespec pause = {0, 2 * 1000 * 1000};
        while (pos + 3 * CHUNK < want.len) {
                assert_int_equal(tm_vfile_peek(f, CHUNK, pos, &a), CHUNK);
                span_expect(&a, &want, pos, CHUNK);
                two += a.n == 2;
                /* the same bytes held twice; the workers fill the rest of
                 * the window meanwhile (a request further on would wait
                 * for a to be given back: it is a later segment's turn
                 * to reuse a's buffer) */
                nanosleep(&pause, NULL);
                assert_int_equal(tm_vfile_peek(f, CHUNK, pos, &b), CHUNK);
                span_expect(&b, &want, pos, CHUNK);
                span_expect(&a, &want, pos, CHUNK);
                tm_vfile_unpeek(&a);
                tm_vfile_unpeek(&b);
                pos += CHUNK;
        }
        assert_true(two > 0); /* spans across a segment boundary were met */
        assert_int_equal(tm_vfile_peek(f, WIDE, pos - WIDE, &a), -1); /* > 2 segments */
        read_expect(f, &want, pos - WIDE, WIDE, buf);
        assert_int_equal(tm_vfile_peek(f, CHUNK, 0, &a), -1); /* a jump */
        read_expect(f, &want, 0, CHUNK, buf);
        tm_vfile_close(f);

        /* Another thread holds a span: reading on past the window must
         * wait for it to be given back (its buffer is needed again), and
         * so must close. */
        assert_int_equal(tm_vfile_open(t, "ascii", &f, &err), 0);
        for (pos = 0; pos < 8 * CHUNK; pos += CHUNK)
                read_expect(f, &want, pos, CHUNK, buf);
        struct peek_holder h[2] = {{.want = &want, .len = CHUNK}, {.want = &want, .len = CHUNK}};
        pthread_t th[2];
        for (int k = 0; k < 2; k++) {
                h[k].off = pos;
                assert_int_equal(tm_vfile_peek(f, CHUNK, pos, &h[k].sp), CHUNK);
                assert_int_equal(pthread_create(&th[k], NULL, peek_hold_thread, &h[k]), 0);
                if (k == 0) {
                        for (int i = 0; i < 12; i++, pos += CHUNK)
                                read_expect(f, &want, pos + CHUNK, CHUNK, buf);
                        assert_int_equal(atomic_load(&h[0].given_back), 1);
                } else {
                        tm_vfile_close(f);
                        assert_int_equal(atomic_load(&h[1].given_back), 1);
                }
                pthread_join(th[k], NULL);
        }
        assert_int_equal(tm_ra_mem_in_use(), 0);
        tm_trace_close(t);
        free(want.p);
        fixture_free(&fx);
}

int main(void)
{
        setenv("TM_READ_THREADS", "2", 0); /* readahead on, whatever the machine */
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_views),
            cmocka_unit_test(test_invalidate),
            cmocka_unit_test(test_readonly_dir),
            cmocka_unit_test(test_corrupt),
            cmocka_unit_test(test_threads),
            cmocka_unit_test(test_not_trace),
            cmocka_unit_test(test_lackey),
            cmocka_unit_test(test_thinned),
            cmocka_unit_test(test_budget),
            cmocka_unit_test(test_tiny),
            cmocka_unit_test(test_readahead_budget),
            cmocka_unit_test(test_readahead_late),
            cmocka_unit_test(test_peek),
            cmocka_unit_test(test_readahead_first),
            cmocka_unit_test(test_ra_threads),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
