/* Laplace kernel event traces (laplace.h): "TAG TIME FIELDS..." a line,
 * the tags and fields of the catalog there, every number hex (no 0x) of
 * at most 16 digits for the time and 8 for the rest, as the reference
 * text form's. Decode only. */
#include <errno.h>
#include <string.h>

#include "../common/tm_hex.h"
#include "laplace.h"
#include "laplace_line.h"

struct lk_state {
        uint64_t line; /* lines consumed */
};

/* Parse one line: the tag, then the kind's fields. */
static const char *lk_parse(const char *line, size_t len, struct tm_rec *r)
{
        const struct tm_schema *s = &tm_schema_laplace_kev;
        size_t at = 0, start;
        size_t n = lp_field(line, len, &at, &start);
        if (n == 0)
                return "an empty line (a tag and a time expected)";
        int k = -1;
        for (unsigned i = 0; i < s->nkinds && k < 0; i++)
                if (strlen(s->kind[i].name) == n && memcmp(s->kind[i].name, line + start, n) == 0)
                        k = (int)i;
        if (k < 0)
                return "not a tag of the catalog (fork exec exit switch mmap munmap)";
        const struct tm_kind *kd = &s->kind[k];
        r->kind = (uint32_t)k;
        for (unsigned p = 0; p < kd->nfields; p++) {
                unsigned f = kd->field[p];
                n = lp_field(line, len, &at, &start);
                if (n == 0)
                        return "fewer fields than its tag has";
                if (tm_hex_parse(line + start, n, f == TM_LPKF_TIME ? 16 : 8, &r->v[p]) < 0)
                        return f == TM_LPKF_TIME ? "time: not 1..16 hex digits"
                                            : "a field that is not 1..8 hex digits";
        }
        return lp_rest_blank(line, len, at) ? NULL : "more fields than its tag has";
}

static int lk_probe(const uint8_t *head, size_t n)
{
        return lp_probe_lines(lk_parse, head, n) ? TM_BID_LAPLACE_KEV : 0;
}

static int lk_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                   struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)path;
        (void)err;
        *ctx = NULL;
        *schema = tm_schema_laplace_kev;
        memset(st->b, 0, sizeof(struct lk_state));
        return 0;
}

static void lk_close(void *ctx)
{
        (void)ctx;
}

static ssize_t lk_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                         struct tm_err *err)
{
        (void)ctx;
        struct lk_state *s = (struct lk_state *)st->b;
        return lp_decode_lines(lk_parse, "laplace kernel", &s->line, in, len, eof, raw_off, used,
                               out, cap, err);
}

const struct tm_rcodec tm_rcodec_laplace_kev = {
    .name = "laplace_kev",
    .suffix = NULL, /* read only */
    .family = &tm_family_laplace,
    .probe = lk_probe,
    .open = lk_open,
    .close = lk_close,
    .state_size = sizeof(struct lk_state),
    .decode = lk_decode,
};
