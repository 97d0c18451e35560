/* Schema 2's allocator model (codecs/native/ncol_heap.h, methods 5 and 6
 * of docs/formats/native.md) on the heap schema, block by block:
 *   model      a heap history made by a small model of glibc (per-class
 *              LIFO free lists, a top chunk carved in address order,
 *              reallocs in place or moved): the addresses take method 5,
 *              the new addresses method 6, the block is smaller than the
 *              same records with the model off (a schema whose fields are
 *              named otherwise), and decodes to the same columns;
 *   hostile    frees of addresses never allocated, double frees, an
 *              allocation at a live address, address 0, sizes 0 and
 *              2^64 - 1, 1000 threads, random addresses, reallocs all
 *              misses: whatever method the writer picks, the columns
 *              come back the same;
 *   streams    method 5's codes walked by hand: a stack hit, the end of
 *              the last allocation, in place, a rank among the freed and
 *              among the live addresses, each where the model says;
 *   blocks     one encoder and one decoder through blocks of few, then
 *              many new addresses (the model's table starts at what the
 *              block before had and grows within the block), and back:
 *              the bytes are a fresh encoder's and the columns the
 *              records';
 *   damage     every byte of a method-5 block's body changed with its CRC
 *              made right: -EIO or some columns, never a crash (the
 *              sanitizers' build checks the reads); with the CRC left,
 *              -EIO. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codecs/heap/heap.h"
#include "codecs/native/ncol.h"
#include "codecs/native/ncol_heap.h"

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* r a record of kind with the values v (all but the last field, the
 * attributes: none). */
static void set(struct tm_rec *r, unsigned kind, const uint64_t *v)
{
        memset(r, 0, sizeof *r);
        r->kind = kind;
        for (unsigned j = 0; j + 1 < tm_schema_heap.kind[kind].nfields; j++)
                r->v[j] = v[j];
        r->var[0] = (const uint8_t *)"";
}

/* A heap history of n records by a small glibc: free lists per 16-byte
 * class, LIFO; a top chunk; a tenth of the frees of objects that are
 * older than the block (addresses it never saw allocated). */
static struct tm_rec *history(size_t n, uint64_t seed)
{
        struct tm_rec *r = calloc(n, sizeof *r);
        enum { LIVE = 4096, CLS = 64, DEEP = 64 };
        uint64_t live[LIVE], lsize[LIVE], freel[CLS][DEEP], top = 0x55550000, t = 100;
        unsigned nlive = 0, nfree[CLS] = {0};
        assert_non_null(r);
        for (size_t i = 0; i < n; i++) {
                uint64_t x = rnd(&seed), sz = 8 + x % 200, c = (sz + 23) / 16;
                t += x >> 60;
                if (nlive > 0 && (nlive == LIVE || x % 7 < 3)) { /* free a recent one */
                        unsigned j = nlive - 1 - (unsigned)(x >> 20) % (nlive < 4 ? nlive : 4);
                        uint64_t a = live[j], ac = (lsize[j] + 23) / 16;
                        live[j] = live[--nlive];
                        lsize[j] = lsize[nlive];
                        if (nfree[ac] < DEEP)
                                freel[ac][nfree[ac]++] = a;
                        set(&r[i], TM_HK_FREE, (uint64_t[]){a, 7, 0, t});
                        continue;
                }
                if (x % 10 == 3) { /* an object from before the block */
                        set(&r[i], TM_HK_FREE, (uint64_t[]){0x10000000 + 16 * (x >> 40), 7, 0, t});
                        continue;
                }
                uint64_t a = nfree[c] ? freel[c][--nfree[c]] : top;
                if (a == top)
                        top += 16 * c;
                if (nlive > 0 && x % 10 == 4) { /* realloc of the last one, in place */
                        set(&r[i], TM_HK_REALLOC,
                            (uint64_t[]){lsize[nlive - 1], live[nlive - 1], live[nlive - 1], 7, 0,
                                         t});
                        continue;
                }
                live[nlive] = a;
                lsize[nlive++] = sz;
                set(&r[i], TM_HK_ALLOC, (uint64_t[]){sz, a, 7, 0, t});
        }
        return r;
}

/* r[0..n) through one block of schema s and back: the columns equal the
 * records' values; *len the block's bytes, meth the methods. */
/* The block p (len bytes) decoded with d holds r[0..n): kinds and every
 * number field. */
static void decoded_same(struct ncol_ws *d, const struct tm_schema *s, const uint8_t *p, size_t len,
                         const struct tm_rec *r, size_t n)
{
        const struct ncol_cols *c;
        struct tm_err err = {0};
        assert_int_equal(ncol_block_decode(d, p, len, 0, &c, &err), 0);
        assert_int_equal(c->nrec, n);
        for (size_t i = 0; i < n; i++) {
                struct tm_rec got;
                ncol_rec(s, c, (uint32_t)i, &got);
                assert_int_equal(got.kind, r[i].kind);
                for (unsigned j = 0; j < s->kind[r[i].kind].nfields; j++)
                        if (s->field[s->kind[r[i].kind].field[j]].type < TM_FT_TEXT &&
                            got.v[j] != r[i].v[j])
                                fail_msg("record %zu, value %u: %llx, not %llx", i, j,
                                         (unsigned long long)got.v[j],
                                         (unsigned long long)r[i].v[j]);
        }
}

static void round_trip(const struct tm_schema *s, const struct tm_rec *r, size_t n, size_t *len,
                       uint8_t *meth)
{
        struct ncol_ws *w = ncol_ws_new(s), *d = ncol_ws_new(s);
        assert_non_null(w);
        assert_non_null(d);
        const uint8_t *p;
        assert_int_equal(ncol_block_encode(w, r, n, 19, &p, len, meth), 0);
        decoded_same(d, s, p, *len, r, n);
        ncol_ws_free(w);
        ncol_ws_free(d);
}

static void test_model(void **unused)
{
        (void)unused;
        size_t n = 1u << 16, with, without;
        struct tm_rec *r = history(n, 5);
        uint8_t meth[TM_SCHEMA_FIELDS_MAX];
        round_trip(&tm_schema_heap, r, n, &with, meth);
        assert_int_equal(meth[TM_HF_ADDRESS], NCOL_M_HEAP);
        assert_int_equal(meth[TM_HF_NEW_ADDRESS], NCOL_M_HEAPED);
        struct tm_schema off = tm_schema_heap;
        strcpy(off.field[TM_HF_SIZE].name, "bytes"); /* no model for this one */
        round_trip(&off, r, n, &without, meth);
        assert_int_not_equal(meth[TM_HF_ADDRESS], NCOL_M_HEAP);
        assert_true(with < without);
        /* blocks short and long */
        for (size_t m = 1; m < 300; m += 37)
                round_trip(&tm_schema_heap, r, m, &with, meth);
        free(r);
}

static void test_hostile(void **unused)
{
        (void)unused;
        size_t n = 20000;
        struct tm_rec *r = calloc(n, sizeof *r);
        uint64_t seed = 9, pool[32];
        for (unsigned i = 0; i < 32; i++)
                pool[i] = rnd(&seed) & ~(uint64_t)15;
        for (unsigned round = 0; round < 3; round++) {
                for (size_t i = 0; i < n; i++) {
                        uint64_t x = rnd(&seed), a = round == 2 ? rnd(&seed) : pool[x % 32];
                        uint64_t sz = x % 5 == 0 ? UINT64_MAX : x % 5 == 1 ? 0 : x >> 50;
                        uint64_t th = round == 1 ? x % 1000 : 1;
                        if (x % 13 == 0)
                                a = 0;
                        switch ((x >> 8) % 5) {
                        case 0:
                        case 1:
                                set(&r[i], TM_HK_ALLOC, (uint64_t[]){sz, a, th, 0, i});
                                break;
                        case 2:
                                set(&r[i], TM_HK_FREE, (uint64_t[]){a, th, 0, i});
                                break;
                        case 3:
                                set(&r[i], TM_HK_REALLOC_ALLOC_FREE + (unsigned)(x >> 20) % 3,
                                    (uint64_t[]){sz, a, pool[(x >> 30) % 32], th, 0, i});
                                break;
                        default:
                                set(&r[i], TM_HK_CREATE_THREAD, (uint64_t[]){th, i});
                                break;
                        }
                }
                size_t len;
                uint8_t meth[TM_SCHEMA_FIELDS_MAX];
                round_trip(&tm_schema_heap, r, n, &len, meth);
        }
        /* every record a realloc of two new addresses: misses past the
         * streams' limit if method 5 took them (16 bytes a record) */
        size_t m = 4000, len;
        for (size_t i = 0; i < m; i++)
                set(&r[i], TM_HK_REALLOC_ALLOC_FREE,
                    (uint64_t[]){i, rnd(&seed), rnd(&seed), 1, 0, i});
        uint8_t meth[TM_SCHEMA_FIELDS_MAX];
        round_trip(&tm_schema_heap, r, m, &len, meth);
        free(r);
}

/* Record i of blocks that need the model's table to grow: an
 * allocation at a new random address, or a free of one allocated 1-8
 * records before (a rank among the live ones). */
static void spread(struct tm_rec *r, size_t n, uint64_t seed)
{
        for (size_t i = 0; i < n; i++) {
                uint64_t x = rnd(&seed);
                if (i >= 8 && x % 3 == 0 && r[i - 1 - x % 8].kind == TM_HK_ALLOC)
                        set(&r[i], TM_HK_FREE, (uint64_t[]){r[i - 1 - x % 8].v[1], 1, 0, i});
                else
                        set(&r[i], TM_HK_ALLOC,
                            (uint64_t[]){x >> 54, 0x7f0000000000 + (x & 0xffffff0), 1, 0, i});
        }
}

static void test_blocks(void **unused)
{
        (void)unused;
        struct ncol_ws *w = ncol_ws_new(&tm_schema_heap), *d = ncol_ws_new(&tm_schema_heap);
        assert_non_null(w);
        assert_non_null(d);
        size_t big = 1u << 16;
        struct tm_rec *many = calloc(big, sizeof *many);
        assert_non_null(many);
        spread(many, big, 3);
        struct tm_rec *few = history(big, 11);
        struct {
                const struct tm_rec *r;
                size_t n;
        } seq[] = {{few, 3000}, {many, 30000},     {few, big},
                   {few, 100},  {many + 5, 40000}, {many, 1}};
        for (size_t b = 0; b < sizeof seq / sizeof *seq; b++) {
                const uint8_t *p, *q;
                size_t len, flen;
                assert_int_equal(ncol_block_encode(w, seq[b].r, seq[b].n, 3, &p, &len, NULL), 0);
                struct ncol_ws *f = ncol_ws_new(&tm_schema_heap);
                assert_non_null(f);
                assert_int_equal(ncol_block_encode(f, seq[b].r, seq[b].n, 3, &q, &flen, NULL), 0);
                assert_int_equal(len, flen);
                assert_memory_equal(p, q, len);
                ncol_ws_free(f);
                decoded_same(d, &tm_schema_heap, p, len, seq[b].r, seq[b].n);
        }
        ncol_ws_free(w);
        ncol_ws_free(d);
        free(many);
        free(few);
}

static void test_streams(void **unused)
{
        (void)unused;
        struct ncol_heap_map m;
        ncol_heap_map_of(&tm_schema_heap, &m);
        assert_true(m.ok);
        assert_int_equal(m.role[TM_HK_ALLOC], NCOL_HR_ALLOC);
        assert_int_equal(m.role[TM_HK_FREE], NCOL_HR_FREE);
        assert_int_equal(m.role[TM_HK_REALLOC], NCOL_HR_REALLOC);
        assert_int_equal(m.role[TM_HK_COMMENT], NCOL_HR_NONE);
        struct ncol_heap *h = ncol_heap_new();
        assert_non_null(h);
        assert_int_equal(ncol_heap_reset(h, 64, 128), 0);
        const uint64_t none = ~(uint64_t)0;
        uint64_t v;
        /* 40 bytes at 0x1000: a miss; the next 40 at the chunk's end (48 bytes on) */
        assert_int_equal(ncol_heap_code(h, NCOL_HE_ALLOC, 40, none, 0x1000), -1);
        ncol_heap_see(h, NCOL_HE_ALLOC, 40, 0x1000, NCOL_H_MISS);
        assert_int_equal(ncol_heap_code(h, NCOL_HE_ALLOC, 40, none, 0x1030), NCOL_H_BUMP);
        ncol_heap_see(h, NCOL_HE_ALLOC, 40, 0x1030, NCOL_H_BUMP);
        ncol_heap_see(h, NCOL_HE_ALLOC, 100, 0x1060, NCOL_H_BUMP);
        /* frees: live ranks, the most recent 0; then the class's stack, LIFO */
        assert_int_equal(ncol_heap_rank(h, NCOL_HE_FREE, 0x1060), 0);
        assert_int_equal(ncol_heap_rank(h, NCOL_HE_FREE, 0x1000), 2);
        assert_int_equal(ncol_heap_rank(h, NCOL_HE_FREE, 0x5000), -1);
        ncol_heap_see(h, NCOL_HE_FREE, 0, 0x1000, NCOL_H_RANK0 + 2);
        ncol_heap_see(h, NCOL_HE_FREE, 0, 0x1030, NCOL_H_RANK0 + 1);
        assert_int_equal(ncol_heap_code(h, NCOL_HE_ALLOC, 36, none, 0x1030), NCOL_H_STACK0);
        assert_int_equal(ncol_heap_code(h, NCOL_HE_ALLOC, 36, none, 0x1000), NCOL_H_STACK0 + 1);
        assert_int_equal(ncol_heap_guess(h, NCOL_HE_ALLOC, 200, none, NCOL_H_STACK0, &v), -1);
        assert_int_equal(ncol_heap_guess(h, NCOL_HE_FREE, 36, none, NCOL_H_STACK0, &v), -1);
        /* an allocation ranks among the freed, a free among the live */
        assert_int_equal(ncol_heap_rank(h, NCOL_HE_ALLOC, 0x1000), 1);
        assert_int_equal(ncol_heap_at(h, NCOL_HE_ALLOC, 0, &v), 0);
        assert_int_equal(v, 0x1030);
        assert_int_equal(ncol_heap_at(h, NCOL_HE_ALLOC, 2, &v), -1);
        assert_int_equal(ncol_heap_at(h, NCOL_HE_FREE, 0, &v), 0);
        assert_int_equal(v, 0x1060);
        /* in place: only a realloc's new address */
        assert_int_equal(ncol_heap_code(h, NCOL_HE_ALLOC, 8, 0x1060, 0x1060), NCOL_H_INPLACE);
        assert_int_equal(ncol_heap_guess(h, NCOL_HE_ALLOC, 8, none, NCOL_H_INPLACE, &v), -1);
        /* a huge size: the last class, a chunk size that wraps (to the least, 32) */
        ncol_heap_see(h, NCOL_HE_ALLOC, UINT64_MAX, 0x9000, NCOL_H_MISS);
        assert_int_equal(ncol_heap_guess(h, NCOL_HE_ALLOC, UINT64_MAX, none, NCOL_H_BUMP, &v), 0);
        assert_int_equal(v, 0x9020);
        assert_int_equal(ncol_heap_guess(h, NCOL_HE_ALLOC, 1u << 20, none, NCOL_H_CLASS, &v), 0);
        assert_int_equal(v, 0x9020);
        ncol_heap_free(h);
}

static void test_damage(void **unused)
{
        (void)unused;
        size_t n = 600, len;
        struct tm_rec *r = history(n, 77);
        struct ncol_ws *w = ncol_ws_new(&tm_schema_heap), *d = ncol_ws_new(&tm_schema_heap);
        const uint8_t *p;
        uint8_t meth[TM_SCHEMA_FIELDS_MAX];
        assert_int_equal(ncol_block_encode(w, r, n, 3, &p, &len, meth), 0);
        assert_int_equal(meth[TM_HF_ADDRESS], NCOL_M_HEAP);
        uint8_t *b = malloc(len);
        const struct ncol_cols *c;
        struct tm_err err = {0};
        size_t fine = 0;
        for (size_t i = TMN_BLK_HDR; i < len; i++)
                for (unsigned flip = 1; flip < 256; flip += 254) {
                        memcpy(b, p, len);
                        b[i] ^= (uint8_t)flip;
                        assert_int_equal(ncol_block_decode(d, b, len, 0, &c, &err), -EIO);
                        uint32_t crc =
                            (uint32_t)crc32_z(crc32(0, b, 12), b + TMN_BLK_HDR, len - TMN_BLK_HDR);
                        tmn_put32(b + 12, crc);
                        int rc = ncol_block_decode(d, b, len, 0, &c, &err);
                        assert_true(rc == 0 || rc == -EIO);
                        fine += rc == 0;
                }
        assert_true(fine < 2 * (len - TMN_BLK_HDR)); /* most changes are caught */
        free(b);
        ncol_ws_free(w);
        ncol_ws_free(d);
        free(r);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_model),   cmocka_unit_test(test_hostile),
            cmocka_unit_test(test_streams), cmocka_unit_test(test_blocks),
            cmocka_unit_test(test_damage),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
