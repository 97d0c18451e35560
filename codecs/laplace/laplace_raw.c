/* Laplace raw reference records (laplace.h): the row laplace_raw, its
 * layout the DTD laplace_raw.dtd run by the Meta-TF engine, as a bound
 * format's (codecs/metatf/bound.c), with the type shown as a character
 * (the show row here, beside the schema it is of) and an encoder
 * (laplace_enc.c). */
#include <errno.h>
#include <string.h>

#include "../metatf/metatf.h"
#include "../metatf/metatf_impl.h"
#include "../record/text.h"
#include "laplace.h"
#include "lapfamily.h"

/* The type's character, or %XX (laplace.h, TM_LAPLACE_SHOW_TYPE). */
static size_t type_put(char *dst, uint64_t v)
{
        uint8_t c = (uint8_t)v;
        if (c > 0x20 && c < 0x7f && c != '%' && c != '-') {
                if (dst)
                        dst[0] = (char)c;
                return 1;
        }
        if (dst) {
                dst[0] = '%';
                dst[1] = "0123456789ABCDEF"[c >> 4];
                dst[2] = "0123456789ABCDEF"[c & 15];
        }
        return 3;
}

static int type_range_chars(uint64_t min, uint64_t max)
{
        return min > 0x20 && max < 0x7f;
}

static const struct tm_show_row tm_show_laplace_type = {
    .code = TM_LAPLACE_SHOW_TYPE,
    .name = "laplace type",
    .put = type_put,
    .range_chars = type_range_chars,
};
TM_SHOW_ROW(tm_show_laplace_type);

static int is_letter(uint8_t c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int tm_laplace_raw_check(const uint8_t *head, size_t n)
{
        if (n < TM_LAPLACE_REC)
                return 0;
        for (size_t at = 0; at + TM_LAPLACE_REC <= n; at += TM_LAPLACE_REC) {
                uint8_t size = head[at + TM_LAPLACE_OFF_SIZE];
                if (!is_letter(head[at + TM_LAPLACE_OFF_TYPE]) || size == 0 ||
                    size > TM_LAPLACE_SIZE_MAX)
                        return 0;
        }
        return 1;
}

int tm_laplace_ref_open(void **mctx, struct tm_schema *schema, struct tm_rstate *st,
                        struct tm_err *err)
{
        static const char *const names[TM_LPF_N] = {"type", "time", "size", "space", "address"};
        void *ctx = NULL;
        int ret = mtf_open_bound(TM_LAPLACE_DTD, MTF_LE, &ctx, schema, st, err);
        if (ret < 0)
                return ret;
        const struct tm_kind *k = &schema->kind[0];
        int ok = schema->nkinds == 1 && k->nfields == TM_LPF_N;
        for (unsigned f = 0; ok && f < TM_LPF_N; f++)
                ok = k->field[f] == f && strcmp(schema->field[f].name, names[f]) == 0;
        if (!ok) {
                tm_rcodec_metatf.close(ctx);
                return tm_err_set(err, -EINVAL, "%s is not the five fields type time size "
                                  "space address", TM_LAPLACE_DTD);
        }
        schema->field[TM_LPF_TYPE].show = TM_LAPLACE_SHOW_TYPE;
        if (mctx)
                *mctx = ctx;
        else
                tm_rcodec_metatf.close(ctx);
        return 0;
}

/* The size rule where the probe knows the size (a stream shorter than its
 * head: whole records, at least one), then the check. */
static int lr_probe(const uint8_t *head, size_t n)
{
        if (n < TM_RHEAD_MIN && (n == 0 || n % TM_LAPLACE_REC != 0))
                return 0;
        return tm_laplace_raw_check(head, n) ? TM_BID_SIZE_CHECKED : 0;
}

static int lr_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                   struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)path; /* the DTD is the row's, never one beside the archive */
        *ctx = NULL;
        int ret = tm_laplace_ref_open(ctx, schema, st, err);
        return ret < 0 ? tm_err_prefix(err, "raw offset 0: laplace_raw") : 0;
}

/* After open, everything is the Meta-TF context's. */
static void lr_close(void *ctx)
{
        tm_rcodec_metatf.close(ctx);
}

static int lr_state_ok(const void *ctx, const struct tm_rstate *st)
{
        return tm_rcodec_metatf.state_ok(ctx, st);
}

/* Meta-TF's decode, with the whole records before a cut last one returned
 * first (its error comes with the next call), so that a decoder given the
 * whole stream stops at the same record as one given it in windows. */
static ssize_t lr_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                         struct tm_err *err)
{
        size_t cut = len % TM_LAPLACE_REC;
        if (eof && cut && len > cut) {
                len -= cut;
                eof = 0;
        }
        return mtf_decode(ctx, st, in, len, eof, raw_off, used, out, cap, err);
}

const struct tm_rcodec tm_rcodec_laplace_raw = {
    .name = "laplace_raw",
    .suffix = ".lpr",
    .family = &tm_family_laplace,
    .probe = lr_probe,
    .open = lr_open,
    .close = lr_close,
    .state_size = sizeof(struct mtf_state),
    .state_ok = lr_state_ok,
    .decode = lr_decode,
    .enc_open = tm_laplace_enc_open_raw,
    .enc_put = tm_laplace_enc_put,
    .enc_finish = tm_laplace_enc_finish,
    .enc_free = tm_laplace_enc_free,
    .enc_schema = tm_laplace_enc_schema,
    .enc_fit = tm_laplace_enc_fit,
};
