/* Schema 2's field order and keys (codecs/native/ncol.h, blocks of
 * coding 4; docs/formats/native.md "Field order and keys"):
 *   chosen     an object-store history whose format is a function of the
 *              object (named in one of two fields): the encoder decodes
 *              both object fields before the format and keys it by them,
 *              the block is smaller than with the schema's order and no
 *              keys (which is coding 3), and decodes to the records;
 *   forced     random orders and key sets (ncol_ws_plan, keys used
 *              whatever their size) of that schema and of the heap schema
 *              (whose allocator model needs the size before the address):
 *              every block decodes to its records, byte for byte;
 *   file       through the row: version 2, the records back; a version-1
 *              header still reads, version 3 is -ENOTSUP;
 *   hostile    a coding-4 block with its order or keys made wrong (out of
 *              range, repeated, a key decoded after, a text key, keys on
 *              a field not predicted), its CRC made right: -EIO naming the
 *              block's raw offset; every byte flipped: 0 or -EIO. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codecs/heap/heap.h"
#include "codecs/native/ncol.h"
#include "support/tmn_block.h"
#include "support/tmtest.h"

enum { F_FMT, F_OBJ, F_FROM, F_IDX, F_NAME, F_T, NF };
enum { K_CREATE, K_READ, K_EDGE, K_TICK };

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* fmt obj name (create), fmt obj idx (read), fmt from idx (edge), t (tick). */
static void schema_of(struct tm_schema *s)
{
        memset(s, 0, sizeof *s);
        strcpy(s->name, "objs");
        const char *fn[NF] = {"fmt", "obj", "from", "idx", "name", "t"};
        const uint8_t ft[NF] = {TM_FT_UINT, TM_FT_UINT, TM_FT_UINT,
                                TM_FT_UINT, TM_FT_TEXT, TM_FT_INT};
        s->nfields = NF;
        for (unsigned i = 0; i < NF; i++) {
                strcpy(s->field[i].name, fn[i]);
                s->field[i].type = ft[i];
        }
        static const uint8_t kf[4][3] = {
            {F_FMT, F_OBJ, F_NAME}, {F_FMT, F_OBJ, F_IDX}, {F_FMT, F_FROM, F_IDX}, {F_T}};
        const char *kn[4] = {"create", "read", "edge", "tick"};
        s->nkinds = 4;
        for (unsigned k = 0; k < 4; k++) {
                strcpy(s->kind[k].name, kn[k]);
                s->kind[k].nfields = k == K_TICK ? 1 : 3;
                memcpy(s->kind[k].field, kf[k], 3);
        }
}

/* n records: objects created with a random format of 12, then read and
 * linked at random among the live ones; names in *arena. */
static struct tm_rec *records(size_t n, uint64_t seed, uint8_t **arena)
{
        struct tm_rec *r = calloc(n, sizeof *r);
        uint8_t *a = malloc(n * 8 + 1);
        uint64_t obj[4096], fmt[4096], live = 0, next = 1000, t = 0;
        size_t al = 0;
        for (size_t i = 0; i < n; i++) {
                uint64_t x = rnd(&seed), p = live ? x % live : 0;
                if (live < 8 || (x >> 20) % 10 == 0) {
                        uint64_t f = 100 + (x >> 30) % 12, o = next++;
                        if (live < 4096) {
                                obj[live] = o;
                                fmt[live++] = f;
                        }
                        size_t len = (x >> 40) % 6;
                        memset(a + al, 'a' + (int)(f % 26), len);
                        r[i] = (struct tm_rec){.kind = K_CREATE, .v = {f, o, len}, .var = {a + al}};
                        al += len;
                } else if ((x >> 20) % 10 < 6) {
                        r[i] =
                            (struct tm_rec){.kind = K_READ, .v = {fmt[p], obj[p], (x >> 40) % 4}};
                } else if ((x >> 20) % 10 < 9) {
                        r[i] =
                            (struct tm_rec){.kind = K_EDGE, .v = {fmt[p], obj[p], (x >> 40) % 4}};
                } else {
                        t += (x >> 44) % 7;
                        r[i] = (struct tm_rec){.kind = K_TICK, .v = {t}};
                }
        }
        *arena = a;
        return r;
}

/* Heap records (tm_schema_heap) as a glibc-like allocator makes them:
 * a freed chunk handed out again to its size class (last in, first
 * out), else the top carved; frees mostly of the latest allocations. */
static struct tm_rec *heap_records(size_t n, uint64_t seed)
{
        struct tm_rec *r = calloc(n, sizeof *r);
        uint64_t live[512], lsize[512], stack[8][64], top = 0x10000;
        unsigned nlive = 0, nst[8] = {0};
        for (size_t i = 0; i < n; i++) {
                uint64_t x = rnd(&seed), thread = (x >> 50) % 3;
                r[i].var[0] = (const uint8_t *)"";
                int free_one = nlive && (nlive == 512 || (x >> 8) % 2 == 0);
                if (free_one) {
                        unsigned j = (x >> 16) % 4 ? nlive - 1 : (unsigned)((x >> 20) % nlive);
                        uint64_t a = live[j], c = (lsize[j] / 16) % 8;
                        live[j] = live[--nlive];
                        lsize[j] = lsize[nlive];
                        if (nst[c] < 64)
                                stack[c][nst[c]++] = a;
                        r[i].kind = TM_HK_FREE;
                        uint64_t v[5] = {a, thread, 0, i, 0};
                        memcpy(r[i].v, v, sizeof v);
                        continue;
                }
                uint64_t size = 16 * ((x >> 24) % 8) + (x >> 32) % 16, c = (size / 16) % 8, a;
                if (nst[c])
                        a = stack[c][--nst[c]];
                else {
                        uint64_t step = (size + 23) & ~15ull;
                        a = top;
                        top += step < 32 ? 32 : step;
                }
                live[nlive] = a;
                lsize[nlive++] = size;
                r[i].kind = TM_HK_ALLOC;
                uint64_t v[6] = {size, a, thread, 0, i, 0};
                memcpy(r[i].v, v, sizeof v);
        }
        return r;
}

/* Block p decoded by a new workspace of s (raw offset off): every
 * record as r[0..n), or the decoder's outcome. */
static int check_block(const struct tm_schema *s, const uint8_t *p, size_t len, uint64_t off,
                       const struct tm_rec *r, size_t n, struct tm_err *err)
{
        struct ncol_ws *w = ncol_ws_new(s);
        assert_non_null(w);
        const struct ncol_cols *c;
        int rc = ncol_block_decode(w, p, len, off, &c, err);
        if (rc == 0) {
                assert_int_equal(c->nrec, n);
                for (size_t i = 0; i < n; i++) {
                        struct tm_rec g;
                        ncol_rec(s, c, (uint32_t)i, &g);
                        const struct tm_kind *k = &s->kind[r[i].kind];
                        assert_int_equal(g.kind, r[i].kind);
                        unsigned vs = 0;
                        for (unsigned j = 0; j < k->nfields; j++) {
                                if (g.v[j] != r[i].v[j])
                                        fail_msg("record %zu field %u: %llu, not %llu", i,
                                                 k->field[j], (unsigned long long)g.v[j],
                                                 (unsigned long long)r[i].v[j]);
                                if (s->field[k->field[j]].type >= TM_FT_TEXT) {
                                        if (g.v[j])
                                                assert_memory_equal(g.var[vs], r[i].var[vs],
                                                                    g.v[j]);
                                        vs++;
                                }
                        }
                }
        }
        ncol_ws_free(w);
        return rc;
}

/* A copy of the block w just encoded (*len bytes). */
static uint8_t *encode(struct ncol_ws *w, const struct tm_rec *r, size_t n, size_t *len)
{
        const uint8_t *p;
        assert_int_equal(ncol_block_encode(w, r, n, 3, &p, len, NULL), 0);
        uint8_t *q = malloc(*len);
        memcpy(q, p, *len);
        return q;
}

static void fix_crc(uint8_t *p, size_t len)
{
        tmn_put32(p + 12, (uint32_t)crc32_z(crc32(0, p, 12), p + TMN_BLK_HDR, len - TMN_BLK_HDR));
}

static void test_chosen(void **unused)
{
        (void)unused;
        struct tm_schema s;
        schema_of(&s);
        uint8_t *arena;
        size_t n = 1u << 14, len, len0;
        struct tm_rec *r = records(n, 11, &arena);
        struct ncol_ws *w = ncol_ws_new(&s);
        assert_non_null(w);
        uint8_t *p = encode(w, r, n, &len);
        const uint8_t *b = p + TMN_BLK_HDR;
        assert_int_equal(b[0], NCOL_CODING_ORD);
        const uint8_t *order = b + 1 + NF;
        uint32_t keys = tmn_get32(b + 1 + 2 * NF + 4 * F_FMT);
        assert_int_equal(keys, 1u << F_OBJ | 1u << F_FROM);
        assert_int_equal(b[1 + F_FMT], NCOL_M_PRED);
        unsigned rank[NF];
        for (unsigned j = 0; j < NF; j++)
                rank[order[j]] = j;
        assert_true(rank[F_OBJ] < rank[F_FMT] && rank[F_FROM] < rank[F_FMT]);
        struct tm_err err = {0};
        assert_int_equal(check_block(&s, p, len, 0, r, n, &err), 0);

        /* the schema's order, no keys: coding 3, and larger */
        uint8_t ident[NF];
        uint32_t none[NF] = {0};
        for (unsigned f = 0; f < NF; f++)
                ident[f] = (uint8_t)f;
        assert_int_equal(ncol_ws_plan(w, ident, none, 0), 0);
        uint8_t *p0 = encode(w, r, n, &len0);
        assert_int_equal(p0[TMN_BLK_HDR], NCOL_CODING);
        assert_int_equal(check_block(&s, p0, len0, 0, r, n, &err), 0);
        print_message("%zu records: %zu bytes keyed, %zu in schema order\n", n, len, len0);
        assert_true(len + len / 10 < len0);
        free(p0);
        free(p);
        ncol_ws_free(w);
        free(r);
        free(arena);
}

/* A random order of nf fields and keys allowed by it (number fields
 * before, on number fields), into order and keys. */
static void random_plan(const struct tm_schema *s, uint64_t *seed, uint8_t *order, uint32_t *keys)
{
        unsigned nf = s->nfields, rank[TM_SCHEMA_FIELDS_MAX];
        for (unsigned f = 0; f < nf; f++)
                order[f] = (uint8_t)f;
        for (unsigned f = nf; f > 1; f--) {
                unsigned j = (unsigned)(rnd(seed) % f);
                uint8_t t = order[f - 1];
                order[f - 1] = order[j];
                order[j] = t;
        }
        for (unsigned j = 0; j < nf; j++)
                rank[order[j]] = j;
        for (unsigned f = 0; f < nf; f++) {
                keys[f] = 0;
                for (unsigned g = 0; g < nf && s->field[f].type < TM_FT_TEXT; g++)
                        if (s->field[g].type < TM_FT_TEXT && rank[g] < rank[f] &&
                            rnd(seed) % 3 == 0)
                                keys[f] |= 1u << g;
        }
}

/* Rounds of random plans over r[0..n) (a random count each round):
 * the blocks whose field 1 took method 5 (the heap schema's address). */
static unsigned forced(const struct tm_schema *s, const struct tm_rec *r, size_t n, uint64_t seed)
{
        unsigned heaped = 0;
        struct ncol_ws *w = ncol_ws_new(s);
        assert_non_null(w);
        for (int round = 0; round < 12; round++) {
                uint8_t order[TM_SCHEMA_FIELDS_MAX];
                uint32_t keys[TM_SCHEMA_FIELDS_MAX];
                random_plan(s, &seed, order, keys);
                assert_int_equal(ncol_ws_plan(w, order, keys, 1), 0);
                size_t len, m = 1 + (size_t)(rnd(&seed) % n);
                uint8_t *p = encode(w, r, m, &len);
                const uint8_t *b = p + TMN_BLK_HDR;
                unsigned nf = s->nfields, keyed = 0;
                if (b[0] == NCOL_CODING_ORD) {
                        assert_memory_equal(b + 1 + nf, order, nf);
                        for (unsigned f = 0; f < nf; f++)
                                keyed += tmn_get32(b + 1 + 2 * nf + 4 * f) != 0;
                }
                struct tm_err err = {0};
                if (check_block(s, p, len, 0, r, m, &err) != 0)
                        fail_msg("round %d: %s", round, err.msg);
                heaped += b[1 + 1] == NCOL_M_HEAP;
                print_message(
                    "round %d: %zu records, coding %u, %u keyed fields, field 1 method %u\n", round,
                    m, b[0], keyed, b[1 + 1]);
                free(p);
        }
        /* not a permutation, a key after its field, a text key */
        uint8_t bad[TM_SCHEMA_FIELDS_MAX] = {0};
        uint32_t none[TM_SCHEMA_FIELDS_MAX] = {0};
        assert_int_equal(ncol_ws_plan(w, bad, none, 0), -EINVAL);
        ncol_ws_free(w);
        return heaped;
}

static void test_forced(void **unused)
{
        (void)unused;
        struct tm_schema s;
        schema_of(&s);
        uint8_t *arena;
        size_t n = 3000;
        struct tm_rec *r = records(n, 5, &arena);
        assert_int_equal(forced(&s, r, n, 99), 0);
        free(r);
        free(arena);
        struct tm_rec *h = heap_records(n, 3);
        /* the allocator model where the order allows it (size, address,
         * new address), and not elsewhere (the decoder checks) */
        struct ncol_ws *w = ncol_ws_new(&tm_schema_heap);
        size_t len;
        uint8_t *p = encode(w, h, n, &len);
        assert_int_equal(p[TMN_BLK_HDR + 1 + TM_HF_ADDRESS], NCOL_M_HEAP); /* the encoder's plan */
        struct tm_err err = {0};
        assert_int_equal(check_block(&tm_schema_heap, p, len, 0, h, n, &err), 0);
        free(p);
        ncol_ws_free(w);
        assert_true(forced(&tm_schema_heap, h, n, 17) > 0);
        free(h);
}

static int sink(void *arg, const void *p, size_t n)
{
        return tmt_put(arg, p, n);
}

/* The records of a file, checked against want's. */
struct want_recs {
        const struct tm_schema *s;
        const struct tm_rec *r;
};

static void want_put(void *arg, size_t at, const struct tm_rec *got, size_t k)
{
        const struct want_recs *w = arg;
        for (size_t i = 0; i < k; i++) {
                const struct tm_rec *a = &w->r[at + i], *b = &got[i];
                assert_int_equal(a->kind, b->kind);
                for (unsigned j = 0; j < w->s->kind[a->kind].nfields; j++)
                        assert_int_equal(a->v[j], b->v[j]);
        }
}

/* The records of file p through the row: *n of them as r's, the outcome. */
static int row_read(const uint8_t *p, size_t len, const struct tm_schema *s, const struct tm_rec *r,
                    size_t *n, struct tm_err *err)
{
        struct want_recs w = {s, r};
        return tmn_test_rows(p, len, 64, want_put, &w, n, err);
}

static void test_file(void **unused)
{
        (void)unused;
        struct tm_schema s;
        schema_of(&s);
        uint8_t *arena;
        size_t n = 5000, got;
        struct tm_rec *r = records(n, 23, &arena);
        struct tmt_buf o = {0};
        struct tm_renc *e;
        struct tm_err err = {0};
        const struct tm_renc_src src = {&s, NULL, 0};
        assert_int_equal(tmn_enc_open_src(&src, "b12/z3", sink, &o, &e, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_put(e, r, n, 0, &err), 0);
        assert_int_equal(tm_rcodec_native.enc_finish(e, &err), 0);
        assert_int_equal(o.p[8], NCOL_VERSION);
        assert_int_equal(row_read(o.p, o.len, &s, r, &got, &err), 0);
        assert_int_equal(got, n);
        for (unsigned v = 1; v <= 3; v++) {
                o.p[8] = (uint8_t)v;
                tmn_put32(o.p + 16, (uint32_t)crc32(0, o.p, 16));
                int rc = row_read(o.p, o.len, &s, r, &got, &err);
                if (v < 3) {
                        assert_int_equal(rc, 0);
                        assert_int_equal(got, n);
                } else {
                        assert_int_equal(rc, -ENOTSUP);
                        assert_non_null(strstr(err.msg, "version 3"));
                }
        }
        free(o.p);
        free(r);
        free(arena);
}

/* Block p (a copy) with byte at made v, the CRC made right: decoding at
 * raw offset 4096 is -EIO naming it, with what in the message. */
static void refused(const struct tm_schema *s, const uint8_t *p, size_t len, size_t at, uint8_t v,
                    const char *what)
{
        uint8_t *q = malloc(len);
        memcpy(q, p, len);
        q[at] = v;
        fix_crc(q, len);
        struct tm_err err = {0};
        struct ncol_ws *w = ncol_ws_new(s);
        const struct ncol_cols *c;
        assert_int_equal(ncol_block_decode(w, q, len, 4096, &c, &err), -EIO);
        if (!strstr(err.msg, "raw offset 4096:") || !strstr(err.msg, what))
                fail_msg("byte %zu = %u: \"%s\"", at, v, err.msg);
        ncol_ws_free(w);
        free(q);
}

static void test_hostile(void **unused)
{
        (void)unused;
        struct tm_schema s;
        schema_of(&s);
        uint8_t *arena;
        size_t n = 2000, len;
        struct tm_rec *r = records(n, 31, &arena);
        struct ncol_ws *w = ncol_ws_new(&s);
        uint8_t *p = encode(w, r, n, &len);
        size_t b = TMN_BLK_HDR, ord = b + 1 + NF, keys = b + 1 + 2 * NF;
        assert_int_equal(p[b], NCOL_CODING_ORD);
        unsigned rank[NF];
        for (unsigned j = 0; j < NF; j++)
                rank[p[ord + j]] = j;
        refused(&s, p, len, ord + 2, NF, "order byte 2");
        refused(&s, p, len, ord + 2, 200, "order byte 2");
        refused(&s, p, len, ord + 1, p[ord], "order byte 1");
        /* fmt keyed by a field decoded after it, by the text field, by no field */
        unsigned after = p[ord + NF - 1] == F_FMT ? p[ord + NF - 2] : p[ord + NF - 1];
        size_t kf = keys + 4 * F_FMT;
        if (rank[after] > rank[F_FMT] && s.field[after].type < TM_FT_TEXT)
                refused(&s, p, len, kf, p[kf] | 1u << after, "field 0's keys");
        refused(&s, p, len, kf, 1u << F_NAME, "field 0's keys");
        refused(&s, p, len, kf + 3, 0x80, "field 0's keys");
        /* keys on the text field, on a field not predicted */
        refused(&s, p, len, keys + 4 * F_NAME, 1u << F_OBJ, "field 4's keys");
        uint8_t *q = malloc(len);
        memcpy(q, p, len);
        q[b + 1 + F_FMT] = NCOL_M_VARINT;
        refused(&s, q, len, kf, q[kf], "method 1");
        /* every byte of the header, order, keys and the first streams
         * flipped, the CRC right: decoded, or -EIO */
        for (size_t i = TMN_BLK_HDR; i < len && i < 400; i++)
                for (int way = 0; way < 2; way++) {
                        memcpy(q, p, len);
                        q[i] = way ? (uint8_t)~q[i] : (uint8_t)(q[i] ^ 1);
                        fix_crc(q, len);
                        struct ncol_ws *d = ncol_ws_new(&s);
                        const struct ncol_cols *c;
                        struct tm_err err = {0};
                        int rc = ncol_block_decode(d, q, len, 0, &c, &err);
                        if (rc != 0 && rc != -EIO)
                                fail_msg("byte %zu: %d", i, rc);
                        ncol_ws_free(d);
                }
        free(q);
        free(p);
        ncol_ws_free(w);
        free(r);
        free(arena);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_chosen),
            cmocka_unit_test(test_forced),
            cmocka_unit_test(test_file),
            cmocka_unit_test(test_hostile),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
