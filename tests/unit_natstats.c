/* Where a .tmn file's bytes go (codecs/native/native_stats.h), against
 * figures that do not come from the walk:
 *   schema 1   a file assembled from tmn_block_encode's blocks (a loop
 *              that predicts, random addresses stored plainly): every
 *              stream's stored and raw bytes are the sums of the
 *              encoder's own per-block statistics (tmn_bstats), blocks
 *              by coding its modes, and the parts add up to the file's
 *              size;
 *   schema 2   a file assembled from ncol_block_encode's blocks, the
 *              same bytes as the row's encoder writes: the blocks per
 *              method of every field are the encoder's methods, the
 *              kind stream's raw bytes one a record, the parts add up to
 *              the file's size;
 *   views      the stats text and stats.json of both files have the rows
 *              (the total is the file's size);
 *   damage     a stream table whose lengths no longer fill the body (its
 *              CRC made right), a flipped body byte (CRC wrong), a cut
 *              file, bytes after the end mark: -EIO naming the raw
 *              offset, no figures; through the views the stats text
 *              names the archive and the offset; every byte of a small
 *              file flipped: whole figures or an error, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codecs/native/native_stats.h"
#include "codecs/native/ncol.h"
#include "include/tracemount.h"
#include "support/tmn_block.h"
#include "support/tmtest.h"

#define BLOCK_LOG 8 /* blocks of 256 records */

static uint64_t rnd(uint64_t *s)
{
        return tmt_rand(s);
}

static int scan(const struct tmt_buf *b, struct tmn_storage *s, struct tm_err *err)
{
        struct tmn_test_mem m = {b->p, b->len};
        return tmn_storage_scan(tmn_test_mem_read, &m, b->len, s, err);
}

/* The parts of s added up: the framing and every stream slot. */
static uint64_t parts_sum(const struct tmn_storage *s)
{
        uint64_t sum = s->file_hdr + s->schema_chunk + s->blk_hdr + s->tables + s->end;
        for (unsigned i = 0; i < TMN_ST_S2; i++)
                sum += s->stored[i];
        return sum;
}

/* ---- schema 1 ---- */

struct s1_file {
        struct tmt_buf b;
        uint64_t stored[TMN_ST_S1], raw[TMN_ST_S1]; /* the encoder's, summed */
        uint64_t pred, plain, records, tables;
};

/* n records of a loop (fetch, load, fetch, store) of 4-byte instructions;
 * random addresses and types in blocks bi with bi % 3 == 2. */
static void s1_make(struct s1_file *f, size_t nblocks)
{
        memset(f, 0, sizeof *f);
        uint8_t h[TMN_FILE_HDR];
        tmn_file_head_put(h, 3, 1, BLOCK_LOG);
        assert_int_equal(tmt_put(&f->b, h, sizeof h), 0);
        struct tmn_ws *w = tmn_ws_new();
        assert_non_null(w);
        size_t n = 1u << BLOCK_LOG;
        uint8_t type[1u << BLOCK_LOG];
        uint64_t addr[1u << BLOCK_LOG];
        uint32_t size[1u << BLOCK_LOG];
        uint64_t seed = 7;
        for (size_t bi = 0; bi < nblocks; bi++) {
                size_t m = bi + 1 == nblocks ? n / 2 + 3 : n; /* a short last block */
                for (size_t i = 0; i < m; i++) {
                        uint64_t it = (bi * n + i) / 4;
                        unsigned k = (unsigned)((bi * n + i) % 4);
                        type[i] = k % 2 == 0 ? 2 : k == 1 ? 0 : 1;
                        addr[i] = type[i] == 2 ? 0x400000 + 4 * k
                                  : k == 1     ? 0x10000 + 8 * (it % 64)
                                               : 0x20000;
                        size[i] = type[i] == 2 ? 4 : 8;
                        if (bi % 3 == 2) {
                                type[i] = (uint8_t)(rnd(&seed) % 3);
                                addr[i] = rnd(&seed);
                                size[i] = (uint32_t)(rnd(&seed) % 64);
                        }
                }
                struct tmn_cols c = {type, addr, size};
                const uint8_t *out;
                size_t len;
                struct tmn_bstats st;
                assert_int_equal(tmn_block_encode(w, &c, m, 1, 3, &out, &len, &st), 0);
                assert_int_equal(tmt_put(&f->b, out, len), 0);
                int plain = st.mode == TMN_PLAIN;
                for (unsigned s = 0; s < (plain ? TMN_PLAIN_STREAMS : TMN_NSTREAMS); s++) {
                        f->stored[(plain ? TMN_ST_PLAIN : 0) + s] += st.stored[s];
                        f->raw[(plain ? TMN_ST_PLAIN : 0) + s] += st.raw[s];
                }
                f->plain += plain;
                f->pred += !plain;
                f->records += m;
                f->tables += 1 + TMN_STREAM_ENTRY * (plain ? TMN_PLAIN_STREAMS : TMN_NSTREAMS);
        }
        tmn_ws_free(w);
        uint8_t e[TMN_END_LEN];
        tmn_end_put(e, f->records);
        assert_int_equal(tmt_put(&f->b, e, sizeof e), 0);
}

static void test_schema1(void **state)
{
        (void)state;
        struct s1_file f;
        s1_make(&f, 7);
        assert_true(f.pred >= 3 && f.plain >= 2); /* both codings occur */
        struct tmn_storage *s = malloc(sizeof *s);
        struct tm_err err = {0};
        assert_int_equal(scan(&f.b, s, &err), 0);
        assert_int_equal(s->schema, 1);
        assert_int_equal(s->size, f.b.len);
        assert_int_equal(parts_sum(s), f.b.len);
        assert_int_equal(s->records, f.records);
        assert_int_equal(s->blocks, f.pred + f.plain);
        assert_int_equal(s->coded[0], f.plain);
        assert_int_equal(s->coded[1] + s->coded[2], f.pred);
        assert_int_equal(s->tables, f.tables);
        assert_int_equal(s->blk_hdr, TMN_BLK_HDR * s->blocks);
        for (unsigned i = 0; i < TMN_ST_S1; i++) {
                assert_int_equal(s->stored[i], f.stored[i]);
                assert_int_equal(s->raw[i], f.raw[i]);
        }
        /* a plain block's columns: a byte and 8 bytes a record raw */
        assert_true(s->raw[TMN_ST_PLAIN] > 0);
        assert_int_equal(s->raw[TMN_ST_PLAIN + 1], 8 * s->raw[TMN_ST_PLAIN]);
        free(s);
        free(f.b.p);
}

/* ---- schema 2 ---- */

static void s2_schema(struct tm_schema *s)
{
        memset(s, 0, sizeof *s);
        strcpy(s->name, "testfam");
        const char *fn[] = {"addr", "size", "tick", "name"};
        const uint8_t ft[] = {TM_FT_UINT, TM_FT_UINT, TM_FT_UINT, TM_FT_TEXT};
        s->nfields = 4;
        for (unsigned i = 0; i < 4; i++) {
                strcpy(s->field[i].name, fn[i]);
                s->field[i].type = ft[i];
                s->field[i].show = i == 0 ? TM_SHOW_HEX : TM_SHOW_DEC;
        }
        s->nkinds = 2;
        strcpy(s->kind[0].name, "get");
        s->kind[0].nfields = 3;
        memcpy(s->kind[0].field, (uint8_t[]){0, 1, 2}, 3);
        strcpy(s->kind[1].name, "put");
        s->kind[1].nfields = 3;
        memcpy(s->kind[1].field, (uint8_t[]){0, 2, 3}, 3);
}

/* Records whose fields change character from block to block (a counter,
 * then random values), so that their methods differ. */
static struct tm_rec *s2_records(size_t n, uint8_t *arena)
{
        struct tm_rec *r = calloc(n, sizeof *r);
        assert_non_null(r);
        uint64_t seed = 11, live[8] = {0};
        for (size_t i = 0; i < n; i++) {
                int noisy = (i >> BLOCK_LOG) % 2;
                r[i].kind = (uint32_t)(rnd(&seed) % 2);
                uint64_t a = noisy ? rnd(&seed) : 0x7f0000001000ull + 32 * (i % 97);
                if (r[i].kind == 0) {
                        live[i % 8] = a;
                        r[i].v[0] = a;
                        r[i].v[1] = noisy ? rnd(&seed) : 16 + (i % 3) * 8;
                        r[i].v[2] = noisy ? rnd(&seed) >> 20 : 1000 * i;
                } else {
                        r[i].v[0] = live[rnd(&seed) % 8];
                        r[i].v[1] = 1000 * i + (noisy ? rnd(&seed) % 999 : 0);
                        size_t len = rnd(&seed) % 6;
                        memset(arena + 8 * i, 'a' + (int)(i % 26), len);
                        r[i].v[2] = len;
                        r[i].var[0] = arena + 8 * i;
                }
        }
        return r;
}

struct s2_file {
        struct tmt_buf b;
        uint64_t method[TM_SCHEMA_FIELDS_MAX][NCOL_M_N]; /* the encoder's, counted */
        uint64_t records, blocks;
};

static int buf_sink(void *arg, const void *p, size_t n)
{
        return tmt_put(arg, p, n);
}

static void s2_make(struct s2_file *f, size_t n)
{
        memset(f, 0, sizeof *f);
        struct tm_schema sc;
        s2_schema(&sc);
        uint8_t *arena = malloc(8 * n);
        struct tm_rec *r = s2_records(n, arena);
        uint8_t h[TMN_FILE_HDR];
        tmn_file_head_put(h, 8, 1, BLOCK_LOG);
        h[8] = NCOL_VERSION;
        h[9] = NCOL_SCHEMA;
        h[10] = h[11] = 0;
        uint32_t crc = (uint32_t)crc32(0, h, 16);
        tmn_put32(h + 16, crc);
        assert_int_equal(tmt_put(&f->b, h, sizeof h), 0);
        uint8_t *chunk;
        size_t clen;
        assert_int_equal(ncol_schema_put(&sc, NULL, 0, &chunk, &clen), 0);
        assert_int_equal(tmt_put(&f->b, chunk, clen), 0);
        free(chunk);
        struct ncol_ws *w = ncol_ws_new(&sc);
        assert_non_null(w);
        for (size_t at = 0; at < n; at += 1u << BLOCK_LOG) {
                size_t m = n - at < (1u << BLOCK_LOG) ? n - at : 1u << BLOCK_LOG;
                const uint8_t *out;
                size_t len;
                uint8_t methods[TM_SCHEMA_FIELDS_MAX];
                assert_int_equal(ncol_block_encode(w, r + at, m, 3, &out, &len, methods), 0);
                assert_int_equal(tmt_put(&f->b, out, len), 0);
                for (unsigned k = 0; k < sc.nfields; k++)
                        f->method[k][methods[k]]++;
                f->blocks++;
                f->records += m;
        }
        ncol_ws_free(w);
        uint8_t e[TMN_END_LEN];
        tmn_end_put(e, f->records);
        assert_int_equal(tmt_put(&f->b, e, sizeof e), 0);
        /* the row's encoder writes these bytes too: a real encoding */
        struct tmt_buf o = {0};
        struct tm_renc *enc;
        struct tm_err err = {0};
        const struct tm_renc_src src = {&sc, NULL, 0};
        char name[16];
        snprintf(name, sizeof name, "b%u/z3", BLOCK_LOG);
        assert_int_equal(tmn_enc_open_src(&src, name, buf_sink, &o, &enc, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_put(enc, r, n, 0, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_finish(enc, &err), 0);
        assert_int_equal(o.len, f->b.len);
        assert_memory_equal(o.p, f->b.p, o.len);
        free(o.p);
        free(r);
        free(arena);
}

static void test_schema2(void **state)
{
        (void)state;
        struct s2_file f;
        s2_make(&f, 6 * (1u << BLOCK_LOG) + 40);
        struct tmn_storage *s = malloc(sizeof *s);
        struct tm_err err = {0};
        assert_int_equal(scan(&f.b, s, &err), 0);
        assert_int_equal(s->schema, 2);
        assert_int_equal(s->size, f.b.len);
        assert_int_equal(parts_sum(s), f.b.len);
        assert_int_equal(s->records, f.records);
        assert_int_equal(s->blocks, f.blocks);
        assert_int_equal(s->coded[3], f.blocks);
        assert_int_equal(s->fields.nfields, 4);
        assert_string_equal(s->fields.field[3].name, "name");
        unsigned kinds_of_method = 0;
        for (unsigned k = 0; k < 4; k++)
                for (unsigned m = 0; m < NCOL_M_N; m++) {
                        assert_int_equal(s->method[k][m], f.method[k][m]);
                        kinds_of_method += f.method[k][m] > 0;
                }
        assert_true(kinds_of_method > 4);       /* some field took two methods */
        assert_int_equal(s->raw[0], f.records); /* the kinds: a byte a record */
        /* the text field's bytes: its own slot, nothing in a number field's */
        assert_true(s->stored[2 + 3 * TMN_R_N + TMN_R_BYTES] > 0);
        assert_int_equal(s->raw[2 + 0 * TMN_R_N + TMN_R_BYTES], 0);
        free(s);
        free(f.b.p);
}

/* ---- through the views ---- */

/* The whole view of the archive at path, NUL-terminated (malloc'd). */
static char *view_text(const char *path, const char *view)
{
        struct tm_trace *t;
        struct tm_err err = {0};
        assert_int_equal(tm_trace_open(path, NULL, &t, &err), 0);
        struct tm_vfile *v;
        int rc = tm_vfile_open(t, view, &v, &err);
        if (rc < 0) /* a damaged trace: its index of the intact prefix */
                fail_msg("%s %s: %s", path, view, err.msg);
        size_t cap = 1 << 20, len = 0;
        char *p = malloc(cap);
        ssize_t k;
        while ((k = tm_vfile_pread(v, p + len, cap - 1 - len, len, &err)) > 0)
                len += (size_t)k;
        p[len] = 0;
        tm_vfile_close(v);
        tm_trace_close(t);
        return p;
}

static void test_views(void **state)
{
        (void)state;
        struct s1_file f1;
        struct s2_file f2;
        s1_make(&f1, 4);
        s2_make(&f2, 3 * (1u << BLOCK_LOG));
        const struct tmt_buf *b[2] = {&f1.b, &f2.b};
        for (int i = 0; i < 2; i++) {
                char name[16], want[96];
                snprintf(name, sizeof name, "v%d.tmn", i);
                assert_int_equal(tmt_spit(tmt_path(name), b[i]->p, b[i]->len), 0);
                char *t = view_text(tmt_path(name), "stats");
                snprintf(want, sizeof want, "\n  %-28s%12zu ", "total", b[i]->len);
                if (!strstr(t, "\nstorage: where the file's bytes go") || !strstr(t, want)) {
                        fputs(t, stderr);
                        fail_msg("%s: no storage rows or no total of %zu", name, b[i]->len);
                }
                free(t);
                t = view_text(tmt_path(name), "stats.json");
                snprintf(want, sizeof want, "\"total\":{\"bytes\":{\"value\":%zu,", b[i]->len);
                if (!strstr(t, "\"storage\":{\"blocks\":{\"total\":") || !strstr(t, want))
                        fail_msg("%s: no storage member or no total in %s", name, t);
                free(t);
        }
        free(f1.b.p);
        free(f2.b.p);
}

/* ---- damage ---- */

/* The raw offset of block bi of b (after hdr bytes of header). */
static size_t block_at(const struct tmt_buf *b, size_t hdr, unsigned bi)
{
        size_t off = hdr;
        for (unsigned i = 0; i < bi; i++)
                off += TMN_BLK_HDR + tmn_get32(b->p + off + 8);
        return off;
}

static void fix_crc(uint8_t *blk)
{
        uint32_t body = tmn_get32(blk + 8);
        tmn_put32(blk + 12, (uint32_t)crc32_z(crc32(0, blk, 12), blk + TMN_BLK_HDR, body));
}

/* The walk of b fails with -EIO naming raw offset at. */
static void expect_eio(const struct tmt_buf *b, size_t at, const char *what)
{
        struct tmn_storage *s = malloc(sizeof *s);
        struct tm_err err = {0};
        char want[64];
        snprintf(want, sizeof want, "raw offset %zu:", at);
        int rc = scan(b, s, &err);
        if (rc != -EIO || !strstr(err.msg, want) || !strstr(err.msg, what))
                fail_msg("rc %d, '%s'; wanted -EIO '%s ... %s'", rc, err.msg, want, what);
        free(s);
}

static void test_damage(void **state)
{
        (void)state;
        struct s1_file f;
        s1_make(&f, 5);
        size_t at = block_at(&f.b, TMN_FILE_HDR, 2);
        uint8_t *blk = f.b.p + at, keep[64];
        memcpy(keep, blk, sizeof keep);
        /* a stored length one larger, its CRC made right: the table no
         * longer fills the body */
        tmn_put32(blk + TMN_BLK_HDR + 2, tmn_get32(blk + TMN_BLK_HDR + 2) + 1);
        fix_crc(blk);
        expect_eio(&f.b, at, "the stream table and its streams take");
        /* through the views: the stats text names the archive and the offset */
        assert_int_equal(tmt_spit(tmt_path("bad.tmn"), f.b.p, f.b.len), 0);
        char *t = view_text(tmt_path("bad.tmn"), "stats");
        char want[512];
        snprintf(want, sizeof want, "storage    not known: %s: raw offset %zu: the stream table",
                 tmt_path("bad.tmn"), at);
        if (!strstr(t, want) || strstr(t, "\n  total "))
                fail_msg("wanted '%s' and no total in\n%s", want, t);
        free(t);
        memcpy(blk, keep, sizeof keep);
        /* the CRC left wrong */
        blk[TMN_BLK_HDR + 40] ^= 0x10;
        expect_eio(&f.b, at, "checksum");
        memcpy(blk, keep, sizeof keep);
        /* a cut file, bytes after the end mark, a count the end mark does not hold */
        f.b.len -= 1;
        expect_eio(&f.b, f.b.len + 1 - TMN_END_LEN, "");
        f.b.len += 1;
        uint8_t z = 0;
        assert_int_equal(tmt_put(&f.b, &z, 1), 0);
        expect_eio(&f.b, f.b.len - 1, "bytes after the end mark");
        f.b.len -= 1;
        uint8_t *e = f.b.p + f.b.len - TMN_END_LEN;
        tmn_end_put(e, f.records + 1);
        expect_eio(&f.b, f.b.len - TMN_END_LEN, "end mark says");
        tmn_end_put(e, f.records);
        struct tmn_storage *s = malloc(sizeof *s);
        struct tm_err err = {0};
        assert_int_equal(scan(&f.b, s, &err), 0); /* restored: whole again */
        assert_int_equal(parts_sum(s), f.b.len);
        free(s);
        free(f.b.p);
}

/* Every byte of a small schema-2 file flipped (two ways): the walk gives
 * the figures of a whole file (parts adding up to its size) or an error,
 * never a crash nor a sum that is not the size. */
static void test_flips(void **state)
{
        (void)state;
        struct s2_file f;
        s2_make(&f, 2 * (1u << BLOCK_LOG) + 7);
        struct tmn_storage *s = malloc(sizeof *s);
        unsigned errors = 0;
        for (size_t i = 0; i < f.b.len; i++)
                for (unsigned x = 0; x < 2; x++) {
                        uint8_t keep = f.b.p[i];
                        f.b.p[i] ^= x ? 0xff : 0x01;
                        struct tm_err err = {0};
                        int rc = scan(&f.b, s, &err);
                        if (rc == 0)
                                assert_int_equal(parts_sum(s), f.b.len);
                        else if ((rc != -EIO && rc != -ENOTSUP) || !strstr(err.msg, "raw offset"))
                                fail_msg("byte %zu: rc %d '%s'", i, rc, err.msg);
                        errors += rc != 0;
                        f.b.p[i] = keep;
                }
        assert_true(errors > f.b.len); /* nearly every flip is caught (the CRCs) */
        free(s);
        free(f.b.p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_schema1), cmocka_unit_test(test_schema2),
            cmocka_unit_test(test_views),   cmocka_unit_test(test_damage),
            cmocka_unit_test(test_flips),
        };
        return cmocka_run_group_tests(tests, tmt_group_setup, tmt_group_teardown);
}
