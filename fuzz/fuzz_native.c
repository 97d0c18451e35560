/* fuzz_native: libFuzzer harness for the native encoding (codecs/native,
 * docs/formats/native.md).
 *
 * Byte 0, bit 0 picks what the rest is:
 *  0  a .tmn file (after fz_rec.h's two bytes of cap and window) whose
 *     checksums the harness makes right (the file header's, then every
 *     block's it can walk to), so that the fuzzer gets past them to the
 *     block decoder: decoded whole and in windows with the state copied at
 *     every call, which must agree (as fzr_run), then the address family's
 *     pass over the records (its block must pass stats_ok); each block it
 *     can walk to decoded by the fast and the reference block decoder
 *     (tmn_ws_reference), which must give the same records or the same
 *     error;
 *  1  records, 10 bytes each (type, size, a signed address step of 8
 *     bytes), written through the row in blocks of 2^4 at zstd level 1
 *     and decoded back whole and in windows: the same records, or abort. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "codecs/address/addr_stats.h"
#include "codecs/native/native.h"
#include "fz_rec.h"
#include "fz_tmn.h"

/* The checksums of the file f[0..n) made right where it can be walked. */
static void fix_crcs(uint8_t *f, size_t n)
{
        size_t pos = fz_tmn_fix_head(f, n);
        if (pos)
                fz_tmn_fix_blocks(f, n, pos);
}

static void round_trip(const uint8_t *d, size_t n)
{
        static struct tm_rec r[FZR_MAX];
        size_t k = 0;
        uint64_t a = 0;
        for (; n >= 10 && k < FZR_MAX; d += 10, n -= 10, k++) {
                uint64_t step = 0;
                for (int i = 0; i < 8; i++)
                        step |= (uint64_t)d[2 + i] << 8 * i;
                a += (uint64_t)((int64_t)step >> (d[1] & 63));
                r[k] = (struct tm_rec){.kind = d[0] & 7u, .v = {d[0] & 7u, a, d[1] >> 3}};
        }
        static struct fz_tmn_out out;
        out.len = 0;
        struct tm_renc *e;
        struct tm_err err = {0};
        if (tm_rcodec_native.enc_open("b4/z1", fz_tmn_sink, &out, &e, &err) < 0 ||
            tm_rcodec_native.enc_put(e, r, k, 0, &err) < 0 ||
            tm_rcodec_native.enc_finish(e, &err) < 0)
                abort();
        static struct fzr_recs whole, windows;
        const uint8_t *raw = out.p;
        if (fzr_decode(&tm_rcodec_native, raw, out.len, 0, FZR_MAX, &whole) < 0 ||
            fzr_decode(&tm_rcodec_native, raw, out.len, 1 + k % 97, 1 + k % 13, &windows) < 0)
                abort();
        if (whole.rc || whole.n != k || !fzr_same(&whole, &windows))
                abort();
        for (size_t i = 0; i < k; i++)
                if (whole.r[i].kind != r[i].kind || whole.r[i].v[1] != r[i].v[1] ||
                    whole.r[i].v[2] != r[i].v[2])
                        abort();
}

/* The address family's pass over k's records: its block must pass
 * stats_ok, and its rows and their text be made (fzr_run's pass does not
 * know the family: its schema is the native codec's). */
static void family_pass(const struct fzr_recs *k)
{
        const struct tm_family *f = &tm_family_address;
        struct tm_family_acc *a = f->acc_start(&k->s);
        if (!a)
                abort();
        f->acc_add(a, k->r, k->n);
        static uint64_t block[TM_FAMILY_STATS_MAX / 8];
        if (f->stats_size > sizeof block)
                abort();
        f->acc_finish(a, block);
        f->acc_free(a);
        if (!f->stats_ok(block))
                abort();
        static char text[1 << 16];
        struct tm_family_info in = {.name = "fuzz", .codec = "native", .container = "plain"};
        tm_stats_family_text(f, block, &k->s, &in, text, sizeof text);
        struct tm_rows rows = {fzr_row_check};
        f->rows(block, &k->s, &in, &rows);
}

/* Each block of the file f[0..n) it can walk to, by the fast and the
 * reference decoder: the same outcome, records or message, or abort. */
static void blocks_both(const uint8_t *f, size_t n)
{
        unsigned ntypes, log2;
        int sized;
        struct tm_err err[2];
        if (tmn_file_head_get(f, n, &ntypes, &sized, &log2, &err[0]) < 0)
                return;
        static struct tmn_ws *w[2];
        static uint8_t *ty[2];
        static uint64_t *ad[2];
        static uint32_t *sz[2];
        for (int x = 0; x < 2; x++) {
                if (!w[x] &&
                    (!(w[x] = tmn_ws_new()) || !(ty[x] = malloc(1u << TMN_LOG_MAX)) ||
                     !(ad[x] = malloc(8u << TMN_LOG_MAX)) || !(sz[x] = malloc(4u << TMN_LOG_MAX))))
                        abort();
                tmn_ws_reference(w[x], x);
        }
        for (size_t pos = TMN_FILE_HDR; n - pos >= TMN_BLK_HDR;) {
                uint32_t k, body;
                if (tmn_block_head(f + pos, 1u << log2, pos, &k, &body, &err[0]) < 0 || k == 0 ||
                    body > n - pos - TMN_BLK_HDR)
                        return;
                int rc[2];
                for (int x = 0; x < 2; x++) {
                        err[x].msg[0] = 0;
                        rc[x] = tmn_block_decode(w[x], f + pos, TMN_BLK_HDR + body, ntypes, sized,
                                                 pos, ty[x], ad[x], sz[x], &err[x]);
                }
                if (rc[0] != rc[1] || strcmp(err[0].msg, err[1].msg) != 0 ||
                    (rc[0] == 0 &&
                     (memcmp(ty[0], ty[1], k) != 0 || memcmp(ad[0], ad[1], 8 * (size_t)k) != 0 ||
                      memcmp(sz[0], sz[1], 4 * (size_t)k) != 0))) {
                        fprintf(stderr,
                                "fuzz_native: block at %zu: fast %d \"%s\", reference %d \"%s\"\n",
                                pos, rc[0], err[0].msg, rc[1], err[1].msg);
                        abort();
                }
                pos += TMN_BLK_HDR + body;
        }
}

/* A file: whole against windows (as fzr_run), then the family's pass. */
static void file_run(const uint8_t *data, size_t size)
{
        if (size < 2)
                return;
        const size_t cap = 1 + (data[0] & 63), piece = (size_t)data[1] * 3;
        size_t len = size - 2;
        static struct fz_buf rawb;
        uint8_t *raw = fz_buf_get(&rawb, len);
        memcpy(raw, data + 2, len);
        fix_crcs(raw, len);
        blocks_both(raw, len);
        tm_rcodec_native.probe(raw, len < TM_RHEAD_MIN ? len : TM_RHEAD_MIN);
        static struct fzr_recs whole, windows;
        if (fzr_decode(&tm_rcodec_native, raw, len, 0, FZR_MAX, &whole) < 0)
                return;
        fzr_decode(&tm_rcodec_native, raw, len, piece, cap, &windows);
        if (whole.n < FZR_MAX && !fzr_same(&whole, &windows)) {
                fprintf(stderr,
                        "fuzz_native: windows of %zu, cap %zu differ (%d \"%s\", %d \"%s\")\n",
                        piece, cap, whole.rc, whole.msg, windows.rc, windows.msg);
                abort();
        }
        family_pass(&whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        if (data[0] & 1)
                round_trip(data + 1, size - 1);
        else
                file_run(data + 1, size - 1);
        return 0;
}
