/* Laplace raw references in their text form (laplace.h): a record codec
 * whose schema is the raw form's (tm_laplace_ref_open), so the two forms
 * of one trace give the same views byte for byte.
 *
 * A line: TYPE TIME SIZE SPACE ADDRESS, TYPE one graphic ASCII char, the
 * others hex (no 0x) of at most the raw field's digits (16, 2, 8, 8),
 * separated by spaces or tabs (laplace_line.h). */
#include <string.h>

#include "../common/tm_hex.h"
#include "laplace.h"
#include "laplace_line.h"
#include "lapfamily.h"

struct lt_state {
        uint64_t line; /* lines consumed */
};

/* Parse one line into r's five values. */
static const char *lt_parse(const char *line, size_t len, struct tm_rec *r)
{
        static const unsigned digits[TM_LPF_N] = {0, 16, 2, 8, 8};
        static const char *const bad[TM_LPF_N] = {
            NULL, "time: not 1..16 hex digits", "size: not 1..2 hex digits",
            "space: not 1..8 hex digits", "address: not 1..8 hex digits"};
        size_t at = 0, start;
        for (unsigned f = 0; f < TM_LPF_N; f++) {
                size_t n = lp_field(line, len, &at, &start);
                if (n == 0)
                        return "fewer than five fields (type time size space address)";
                if (f == TM_LPF_TYPE) {
                        if (n != 1 || line[start] < 0x21 || line[start] > 0x7e)
                                return "the type is not one printable character";
                        r->v[f] = (unsigned char)line[start];
                } else if (tm_hex_parse(line + start, n, digits[f], &r->v[f]) < 0) {
                        return bad[f];
                }
        }
        return lp_rest_blank(line, len, at) ? NULL : "text after the address";
}

static int lt_probe(const uint8_t *head, size_t n)
{
        return lp_probe_lines(lt_parse, head, n) ? TM_BID_LAPLACE_TEXT : 0;
}

static int lt_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                   struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)path;
        *ctx = NULL;
        if (tm_laplace_ref_open(NULL, schema, st, err) < 0)
                return tm_err_prefix(err, "raw offset 0: laplace_text");
        memset(st->b, 0, sizeof(struct lt_state));
        return 0;
}

static void lt_close(void *ctx)
{
        (void)ctx;
}

static ssize_t lt_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                         struct tm_err *err)
{
        (void)ctx;
        struct lt_state *s = (struct lt_state *)st->b;
        return lp_decode_lines(lt_parse, "laplace", &s->line, in, len, eof, raw_off, used, out,
                               cap, err);
}

const struct tm_rcodec tm_rcodec_laplace_text = {
    .name = "laplace_text",
    .suffix = ".lpt",
    .family = &tm_family_laplace,
    .probe = lt_probe,
    .open = lt_open,
    .close = lt_close,
    .state_size = sizeof(struct lt_state),
    .decode = lt_decode,
    .enc_open = tm_laplace_enc_open_text,
    .enc_put = tm_laplace_enc_put,
    .enc_finish = tm_laplace_enc_finish,
    .enc_free = tm_laplace_enc_free,
    .enc_schema = tm_laplace_enc_schema,
    .enc_fit = tm_laplace_enc_fit,
};
