/* unit_index: the checkpoint index on its own. Thinning keeps it under
 * TM_CKPT_CAP; every checkpoint restarts the decoder exactly at its
 * reference with the right view offsets (checked against snprintf); the
 * file round-trips and is refused when stale, damaged or truncated;
 * lookups agree with a linear search. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/view_test.h"
#include "views/index.h"

#define NREFS 20000

static char tmpdir[256];

struct fix {
        char path[300];
        const struct tm_codec *codec;
        struct vt_buf raw;
        struct tm_ref *refs;
        size_t n;
        int fd;
        struct tm_cont *cont;
};

static void fix_make(struct fix *fx, const char *codec, enum tm_cont_kind kind)
{
        memset(fx, 0, sizeof *fx);
        fx->codec = tm_codec_by_name(codec);
        snprintf(fx->path, sizeof fx->path, "%s/%s-%d", tmpdir, codec, (int)kind);
        struct tm_ref *gen = malloc(NREFS * sizeof *gen);
        vt_gen(3, gen, NREFS, fx->codec->ntypes, 0);
        vt_make(fx->path, fx->codec, kind, 2048, gen, NREFS, &fx->raw);
        free(gen);
        fx->refs = vt_decode_all(fx->codec, fx->raw.p, fx->raw.len, &fx->n);
        fx->fd = open(fx->path, O_RDONLY);
        assert_true(fx->fd >= 0);
        struct tm_err err = {0};
        assert_int_equal(tm_cont_open(fx->fd, fx->path, &fx->cont, &err), 0);
}

static void fix_free(struct fix *fx)
{
        tm_cont_close(fx->cont);
        close(fx->fd);
        free(fx->raw.p);
        free(fx->refs);
}

static struct tm_index *build(struct fix *fx, uint64_t k)
{
        struct tm_index *ix;
        struct tm_err err = {0};
        if (tm_index_build(fx->cont, fx->codec, fx->raw.p,
                           fx->raw.len < TM_PROBE_BYTES ? fx->raw.len : TM_PROBE_BYTES, k, NULL,
                           NULL, &ix, &err) != 0)
                fail_msg("build: %s", err.msg);
        return ix;
}

/* Restart the decoder at every checkpoint and compare with the refs; the
 * view offsets must be the snprintf lengths of everything before. */
static void check_checkpoints(const struct fix *fx, const struct tm_index *ix)
{
        uint64_t ascii = 0, trec[TM_NTYPES] = {0}, toff[TM_NTYPES] = {0};
        uint32_t c = 0;
        for (size_t i = 0; i <= fx->n; i++) {
                const struct tm_ckpt *ck = &ix->ck[c < ix->n ? c : 0];
                if (c < ix->n && ck->rec == i) {
                        assert_int_equal(ck->ascii_off, ascii);
                        assert_memory_equal(ck->type_rec, trec, sizeof trec);
                        assert_memory_equal(ck->type_off, toff, sizeof toff);
                        struct tm_dec_state st = ck->st;
                        struct tm_ref out[8];
                        size_t used;
                        size_t left = fx->raw.len - ck->raw_off;
                        ssize_t r = fx->codec->decode(&st, fx->raw.p + ck->raw_off, left, 1,
                                                      ck->raw_off, &used, out, 8, NULL);
                        size_t want = fx->n - i < 8 ? fx->n - i : 8;
                        assert_int_equal(r, want);
                        for (ssize_t j = 0; j < r; j++) {
                                assert_int_equal(out[j].addr, fx->refs[i + j].addr);
                                assert_int_equal(out[j].type, fx->refs[i + j].type);
                        }
                        c++;
                }
                if (i == fx->n)
                        break;
                char line[64];
                int len = snprintf(line, sizeof line, "%u %" PRIx64 "\n", fx->refs[i].type,
                                   fx->refs[i].addr);
                ascii += (uint64_t)len;
                trec[fx->refs[i].type]++;
                toff[fx->refs[i].type] += (uint64_t)len;
        }
        assert_int_equal(c, ix->n);
        assert_int_equal(ix->ascii_size, ascii);
        assert_memory_equal(ix->type_refs, trec, sizeof trec);
        assert_memory_equal(ix->type_size, toff, sizeof toff);
        assert_int_equal(ix->nrefs, fx->n);
        assert_int_equal(ix->raw_size, fx->raw.len);
        assert_int_equal(ix->stats.refs, fx->n);
        for (unsigned t = 0; t < TM_NTYPES; t++)
                assert_int_equal(ix->stats.count[t], trec[t]);
}

/* With the default spacing the saved checkpoints stay within the size
 * budget: a highly compressed archive is thinned (spacing doubled), plain
 * din text of the same references is not, and both still restart right. */
static void budget_case(const char *codec, enum tm_cont_kind kind, int thinned)
{
        enum { N = 600000 };
        struct fix fx;
        memset(&fx, 0, sizeof fx);
        fx.codec = tm_codec_by_name(codec);
        snprintf(fx.path, sizeof fx.path, "%s/budget-%s-%d", tmpdir, codec, (int)kind);
        struct tm_ref *gen = malloc(N * sizeof *gen);
        assert_non_null(gen);
        for (size_t i = 0; i < N; i++) { /* a loop: compresses to almost nothing */
                gen[i].type = i % 8 == 7 ? TM_READ : TM_IFETCH;
                gen[i].addr = i % 8 == 7 ? 0x10000000 + 4 * (i % 4096) : 0x400000 + 4 * (i % 64);
        }
        vt_make(fx.path, fx.codec, kind, 1 << 20, gen, N, &fx.raw);
        free(gen);
        fx.refs = vt_decode_all(fx.codec, fx.raw.p, fx.raw.len, &fx.n);
        fx.fd = open(fx.path, O_RDONLY);
        assert_true(fx.fd >= 0);
        struct tm_err err = {0};
        assert_int_equal(tm_cont_open(fx.fd, fx.path, &fx.cont, &err), 0);
        struct tm_index *ix = build(&fx, 0);
        uint64_t budget = tm_cont_archive_size(fx.cont) / TM_INDEX_BUDGET_DIV;
        assert_true(ix->n == 1 || (uint64_t)ix->n * TM_CKPT_BYTES <= budget);
        if (thinned)
                assert_true(ix->k > TM_CKPT_REFS_DEFAULT);
        else
                assert_int_equal(ix->k, TM_CKPT_REFS_DEFAULT);
        assert_true(ix->n >= 1 + (thinned ? 0 : N / TM_CKPT_REFS_DEFAULT));
        check_checkpoints(&fx, ix);
        tm_index_free(ix);
        fix_free(&fx);
}

static void test_budget(void **state)
{
        (void)state;
        budget_case("pdats2", TM_CONT_ZSTD, 1);
        budget_case("din", TM_CONT_PLAIN, 0);
}

static void test_thinning(void **state)
{
        (void)state;
        struct fix fx;
        fix_make(&fx, "pdats2", TM_CONT_PLAIN);
        struct tm_index *ix = build(&fx, 1);
        /* k = 1 fills 8192 at ref 8191, then 2, then 4 at ref 16382. */
        assert_true(ix->n <= TM_CKPT_CAP);
        assert_int_equal(ix->k, 4);
        assert_int_equal(ix->n, NREFS / 4 + 1);
        for (uint32_t i = 0; i < ix->n; i++)
                assert_int_equal(ix->ck[i].rec, (uint64_t)i * ix->k);
        check_checkpoints(&fx, ix);
        tm_index_free(ix);

        ix = build(&fx, 0); /* default spacing: one checkpoint */
        assert_int_equal(ix->k, TM_CKPT_REFS_DEFAULT);
        assert_int_equal(ix->n, 1);
        check_checkpoints(&fx, ix);
        tm_index_free(ix);
        fix_free(&fx);
}

static void test_checkpoints_all(void **state)
{
        (void)state;
        static const char *const codecs[] = {"din", "pdats", "pdats2"};
        static const enum tm_cont_kind kinds[] = {TM_CONT_PLAIN, TM_CONT_GZIP, TM_CONT_ZSTD};
        for (unsigned c = 0; c < 3; c++)
                for (unsigned k = 0; k < 3; k++) {
                        struct fix fx;
                        fix_make(&fx, codecs[c], kinds[k]);
                        struct tm_index *ix = build(&fx, 37);
                        assert_int_equal(ix->n, (NREFS + 36) / 37);
                        check_checkpoints(&fx, ix);
                        tm_index_free(ix);
                        fix_free(&fx);
                }
}

static void test_file(void **state)
{
        (void)state;
        struct fix fx;
        fix_make(&fx, "pdats", TM_CONT_GZIP);
        struct tm_index *ix = build(&fx, 100), *back;
        struct tm_index_key key = {.archive_size = 1234,
                                   .mtime_ns = 5678,
                                   .ino = 9,
                                   .codec = "pdats",
                                   .container = "gzip"};
        char path[400];
        snprintf(path, sizeof path, "%s/idx.tmidx", tmpdir);
        struct tm_err err = {0};
        assert_int_equal(tm_index_save(ix, fx.cont, &key, path, &err), 0);

        /* a fresh container gets its seek index from the file */
        struct tm_cont *c2;
        int ifd = -1;
        assert_int_equal(tm_cont_open(fx.fd, fx.path, &c2, &err), 0);
        assert_int_equal(tm_index_load(path, &key, c2, &back, &ifd, &err), 0);
        assert_true(ifd >= 0);
        assert_int_equal(tm_index_compare(ix, back, &err), 0);
        uint64_t rs;
        assert_int_equal(tm_cont_raw_size(c2, &rs), 1);
        assert_int_equal(rs, fx.raw.len);
        tm_index_free(back);
        tm_cont_close(c2);
        close(ifd);

        /* stale keys */
        struct tm_index_key k2 = key;
        k2.mtime_ns++;
        assert_int_equal(tm_index_load(path, &k2, NULL, &back, NULL, &err), -ESTALE);
        k2 = key;
        k2.ino++;
        assert_int_equal(tm_index_load(path, &k2, NULL, &back, NULL, &err), -ESTALE);
        k2 = key;
        k2.codec = "pdats2";
        assert_int_equal(tm_index_load(path, &k2, NULL, &back, NULL, &err), -ESTALE);

        /* every single damaged byte after the magic is caught */
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        int fd = open(path, O_RDWR);
        for (off_t off = 8; off < sb.st_size; off += 1 + off / 3) {
                uint8_t b, x;
                assert_int_equal(pread(fd, &b, 1, off), 1);
                x = b ^ 0x10;
                assert_int_equal(pwrite(fd, &x, 1, off), 1);
                int rc = tm_index_load(path, &key, NULL, &back, NULL, &err);
                if (rc == 0)
                        fail_msg("damage at %lld not caught", (long long)off);
                assert_int_equal(pwrite(fd, &b, 1, off), 1);
        }
        assert_int_equal(ftruncate(fd, sb.st_size - 1), 0);
        assert_int_equal(tm_index_load(path, &key, NULL, &back, NULL, &err), -EIO);
        close(fd);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(tm_index_load(path, &key, NULL, &back, NULL, &err), -ENOENT);

        /* a directory that cannot hold the file: an error, nothing left */
        snprintf(path, sizeof path, "%s/no/such/dir/idx.tmidx", tmpdir);
        assert_true(tm_index_save(ix, fx.cont, &key, path, &err) < 0);
        tm_index_free(ix);
        fix_free(&fx);
}

/* tm_index_compare (tracetool verify) names the first difference. */
static void test_compare(void **state)
{
        (void)state;
        struct fix fx;
        fix_make(&fx, "pdats", TM_CONT_ZSTD);
        struct tm_index *a = build(&fx, 50);
        tm_cont_close(fx.cont);
        struct tm_err err = {0};
        assert_int_equal(tm_cont_open(fx.fd, fx.path, &fx.cont, &err), 0);
        struct tm_index *b = build(&fx, 50);
        assert_int_equal(tm_index_compare(a, b, &err), 0);
        b->ck[17].st.b[3] ^= 1;
        assert_int_equal(tm_index_compare(a, b, &err), -EIO);
        assert_non_null(strstr(err.msg, "checkpoint (17)"));
        b->ck[17].st.b[3] ^= 1;
        b->stats.data_off[0]++;
        assert_int_equal(tm_index_compare(a, b, &err), -EIO);
        assert_non_null(strstr(err.msg, "stats"));
        b->stats.data_off[0]--;
        b->type_size[2]++;
        assert_int_equal(tm_index_compare(a, b, &err), -EIO);
        tm_index_free(a);
        tm_index_free(b);
        fix_free(&fx);
}

static uint64_t pos_of(const struct tm_ckpt *c, enum tm_ix_by by, unsigned t)
{
        return by == TM_BY_REC ? c->rec : by == TM_BY_ASCII ? c->ascii_off : c->type_off[t];
}

static void test_find(void **state)
{
        (void)state;
        struct fix fx;
        fix_make(&fx, "din", TM_CONT_PLAIN);
        struct tm_index *ix = build(&fx, 13);
        for (int i = 0; i < 20000; i++) {
                enum tm_ix_by by = (enum tm_ix_by)(vt_rand() % 3);
                unsigned t = (unsigned)(vt_rand() % fx.codec->ntypes);
                uint64_t max = by == TM_BY_REC     ? ix->nrefs
                               : by == TM_BY_ASCII ? ix->ascii_size
                                                   : ix->type_size[t];
                uint64_t v = vt_rand() % (max + 10);
                uint32_t want = 0;
                for (uint32_t j = 0; j < ix->n; j++)
                        if (pos_of(&ix->ck[j], by, t) <= v)
                                want = j;
                assert_ptr_equal(tm_index_find(ix, by, t, v), &ix->ck[want]);
        }
        tm_index_free(ix);
        fix_free(&fx);
}

static int setup(void **state)
{
        (void)state;
        snprintf(tmpdir, sizeof tmpdir, "/tmp/unit_index.XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_thinning),
            cmocka_unit_test(test_budget),
            cmocka_unit_test(test_checkpoints_all),
            cmocka_unit_test(test_file),
            cmocka_unit_test(test_find),
            cmocka_unit_test(test_compare),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
