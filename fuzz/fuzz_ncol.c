/* fuzz_ncol: libFuzzer harness for the native encoding's schema 2
 * (codecs/native/ncol.h, docs/formats/native.md "Schema 2").
 *
 * Byte 0, bit 0 picks what the rest is:
 *  0  a schema-2 .tmn file (after fz_rec.h's two bytes of cap and window)
 *     whose checksums the harness makes right (the file header's, the
 *     schema chunk's, then every block's it can walk to), so that the
 *     fuzzer reaches the schema parser and the block decoder: decoded
 *     whole and in windows with the state copied at every call, which must
 *     agree (as fzr_run), then the pass of the family that claims the
 *     schema, if one does;
 *  1  records of a schema with numbers, text and a list (4 bytes each:
 *     kind, a value step, a length, a byte), written through the row in
 *     blocks of 2^4 at zstd level 1 and decoded back whole and in windows:
 *     the same records, or abort; with bit 1 also set, heap records
 *     instead (4 bytes each: kind, an address from a pool of 16 or the end
 *     of the last allocation, a size, a step) through one block of
 *     tm_schema_heap at zstd level 1 and back, so that the allocator model
 *     (ncol_heap.h, method 5) codes and decodes what the fuzzer makes:
 *     the same columns, or abort. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codecs/heap/heap.h"
#include "codecs/native/ncol.h"
#include "fz_rec.h"
#include "fz_tmn.h"

/* The checksums of the file f[0..n) made right where it can be walked. */
static void ncf_fix_crcs(uint8_t *f, size_t n)
{
        size_t pos = fz_tmn_fix_head(f, n);
        if (!pos || n - pos < NCOL_SCH_HDR)
                return;
        uint32_t sb = tmn_get32(f + pos + 4);
        if (sb > n - pos - NCOL_SCH_HDR)
                return;
        tmn_put32(f + pos + 8, (uint32_t)crc32_z(0, f + pos + NCOL_SCH_HDR, sb));
        fz_tmn_fix_blocks(f, n, pos + NCOL_SCH_HDR + sb);
}

/* Kinds: 0 (a, b), 1 (a, name), 2 (ids, b). */
static void ncf_schema(struct tm_schema *s)
{
        memset(s, 0, sizeof *s);
        strcpy(s->name, "fz");
        const char *fn[] = {"a", "b", "name", "ids"};
        const uint8_t ft[] = {TM_FT_UINT, TM_FT_INT, TM_FT_TEXT, TM_FT_LIST};
        s->nfields = 4;
        for (unsigned i = 0; i < 4; i++) {
                strcpy(s->field[i].name, fn[i]);
                s->field[i].type = ft[i];
        }
        s->nkinds = 3;
        const uint8_t kf[3][2] = {{0, 1}, {0, 2}, {3, 1}};
        for (unsigned k = 0; k < 3; k++) {
                snprintf(s->kind[k].name, TM_NAME_MAX, "k%u", k);
                s->kind[k].nfields = 2;
                memcpy(s->kind[k].field, kf[k], 2);
        }
}

static void ncf_round_trip(const uint8_t *d, size_t n)
{
        static struct tm_rec r[FZR_MAX];
        static uint8_t bytes[FZR_MAX * 8 * 4];
        struct tm_schema s;
        ncf_schema(&s);
        size_t k = 0, bl = 0;
        uint64_t a = 0;
        for (; n >= 4 && k < FZR_MAX; d += 4, n -= 4, k++) {
                unsigned kind = d[0] % 3, len = d[2] & 3;
                a += (uint64_t)(int64_t)(int8_t)d[1] << (d[0] >> 2);
                r[k] = (struct tm_rec){.kind = kind};
                r[k].v[0] = kind == 2 ? len : a;
                r[k].v[1] = kind == 1 ? len : (uint64_t)(int64_t)(int8_t)d[3];
                size_t nb = kind == 2 ? 8 * len : kind == 1 ? len : 0;
                for (size_t i = 0; i < nb; i++)
                        bytes[bl + i] = (uint8_t)(d[3] + i);
                if (kind)
                        r[k].var[0] = bytes + bl;
                bl += nb;
        }
        static struct fz_tmn_out out;
        out.len = 0;
        struct tm_renc *e;
        struct tm_err err = {0};
        const struct tm_renc_src src = {&s, NULL, 0};
        if (tmn_enc_open_src(&src, "b4/z1", fz_tmn_sink, &out, &e, &err) < 0 ||
            tm_rcodec_native.enc_put(e, r, k, 0, &err) < 0 ||
            tm_rcodec_native.enc_finish(e, &err) < 0)
                abort();
        static struct fzr_recs whole, windows;
        if (fzr_decode(&tm_rcodec_native, out.p, out.len, 0, FZR_MAX, &whole) < 0 ||
            fzr_decode(&tm_rcodec_native, out.p, out.len, 1 + k % 97, 1 + k % 13, &windows) < 0)
                abort();
        if (whole.rc || whole.n != k || !fzr_same(&whole, &windows))
                abort();
        for (size_t i = 0; i < k; i++) {
                struct tm_rec g = fzr_rec(&whole, i);
                if (g.kind != r[i].kind || g.v[0] != r[i].v[0] || g.v[1] != r[i].v[1])
                        abort();
                size_t nb = g.kind == 2 ? 8 * g.v[0] : g.kind == 1 ? g.v[1] : 0;
                if (nb && memcmp(g.var[0], r[i].var[0], nb) != 0)
                        abort();
        }
}

static void ncf_heap_round_trip(const uint8_t *d, size_t n)
{
        static struct tm_rec r[FZR_MAX];
        static struct ncol_ws *w, *dw;
        uint64_t pool[16], end = 0x1000;
        for (unsigned i = 0; i < 16; i++)
                pool[i] = 0x1000 + 48 * i;
        size_t k = 0;
        for (; n >= 4 && k < FZR_MAX; d += 4, n -= 4, k++) {
                static const uint8_t kinds[] = {TM_HK_ALLOC,          TM_HK_FREE,
                                                TM_HK_REALLOC,        TM_HK_REALLOC_ALLOC,
                                                TM_HK_REALLOC_FREE,   TM_HK_REALLOC_ALLOC_FREE,
                                                TM_HK_CREATE_THREAD,  TM_HK_ALLOC};
                unsigned kind = kinds[d[0] & 7];
                uint64_t a = d[1] & 16 ? end : d[1] == 0xff ? 0 : pool[d[1] & 15];
                uint64_t size = d[0] & 8 ? (uint64_t)d[2] << (d[3] & 63) : d[2];
                r[k] = (struct tm_rec){.kind = kind, .var = {(const uint8_t *)""}};
                uint64_t v[7] = {size, a, pool[d[3] & 15], d[3] >> 6, 0, k, 0};
                if (kind == TM_HK_FREE)
                        v[0] = a, v[1] = d[3] >> 6, v[2] = 0, v[3] = k, v[4] = 0;
                if (kind == TM_HK_CREATE_THREAD)
                        v[0] = d[3], v[1] = k, v[2] = 0;
                memcpy(r[k].v, v, sizeof v);
                if (kind == TM_HK_ALLOC)
                        r[k].v[2] = d[3] >> 6, r[k].v[3] = 0, r[k].v[4] = k, r[k].v[5] = 0;
                end = a + 16 * (((size & 0xffff) + 23) / 16);
        }
        if (!k)
                return;
        if (!w && (!(w = ncol_ws_new(&tm_schema_heap)) || !(dw = ncol_ws_new(&tm_schema_heap))))
                abort();
        const uint8_t *p;
        size_t len;
        const struct ncol_cols *c;
        struct tm_err err = {0};
        if (ncol_block_encode(w, r, k, 1, &p, &len, NULL) < 0 ||
            ncol_block_decode(dw, p, len, 0, &c, &err) < 0 || c->nrec != k)
                abort();
        for (size_t i = 0; i < k; i++) {
                struct tm_rec g;
                ncol_rec(&tm_schema_heap, c, (uint32_t)i, &g);
                const struct tm_kind *kd = &tm_schema_heap.kind[r[i].kind];
                if (g.kind != r[i].kind || memcmp(g.v, r[i].v, (kd->nfields - 1) * 8) != 0)
                        abort();
        }
}

static void ncf_file(const uint8_t *data, size_t size)
{
        if (size < 2)
                return;
        const size_t cap = 1 + (data[0] & 63), piece = (size_t)data[1] * 3;
        size_t len = size - 2;
        static struct fz_buf rawb;
        uint8_t *raw = fz_buf_get(&rawb, len);
        memcpy(raw, data + 2, len);
        ncf_fix_crcs(raw, len);
        static struct fzr_recs whole, windows;
        if (fzr_decode(&tm_rcodec_native, raw, len, 0, FZR_MAX, &whole) < 0)
                return;
        fzr_decode(&tm_rcodec_native, raw, len, piece, cap, &windows);
        if (whole.n < FZR_MAX && !fzr_same(&whole, &windows)) {
                fprintf(stderr,
                        "fuzz_ncol: windows of %zu, cap %zu differ (%d \"%s\", %d \"%s\")\n", piece,
                        cap, whole.rc, whole.msg, windows.rc, windows.msg);
                abort();
        }
        const struct tm_family *f = tm_family_of(&whole.s);
        if (f && f->stats_size && !tm_family_more(f)->text_whole)
                fzr_family(f, &whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        if ((data[0] & 3) == 3)
                ncf_heap_round_trip(data + 1, size - 1);
        else if (data[0] & 1)
                ncf_round_trip(data + 1, size - 1);
        else
                ncf_file(data + 1, size - 1);
        return 0;
}
