/* Laplace raw references in their text form (laplace.h): a record codec
 * whose schema is the raw form's, read from its DTD, so the two forms of
 * one trace give the same views byte for byte.
 *
 * A line: TYPE TIME SIZE SPACE ADDRESS, TYPE one graphic ASCII char, the
 * others hex (no 0x) of at most the raw field's digits (16, 2, 8, 8),
 * separated by spaces or tabs. Decode-only. */
#include <errno.h>
#include <string.h>

#include "../common/tm_hex.h"
#include "../metatf/metatf.h"
#include "../metatf/metatf_impl.h"
#include "laplace.h"

#define LT_LINE_MAX 128 /* far longer than any line of five fields */

enum { LT_TYPE, LT_TIME, LT_SIZE, LT_SPACE, LT_ADDRESS, LT_N };

struct lt_state {
        uint64_t line; /* lines consumed */
};

static const char *const lt_field[LT_N] = {"type", "time", "size", "space", "address"};
static const unsigned lt_digits[LT_N] = {0, 16, 2, 8, 8};

static int lt_blank(char c)
{
        return c == ' ' || c == '\t';
}

/* Parse line[0..len) into v[LT_N]; NULL, or what is wrong. */
static const char *lt_parse(const char *line, size_t len, uint64_t *v)
{
        size_t at = 0;
        for (unsigned f = 0; f < LT_N; f++) {
                while (at < len && lt_blank(line[at]))
                        at++;
                size_t start = at;
                while (at < len && !lt_blank(line[at]))
                        at++;
                if (at == start)
                        return "fewer than five fields (type time size space address)";
                if (f == LT_TYPE) {
                        if (at - start != 1 || line[start] < 0x21 || line[start] > 0x7e)
                                return "the type is not one printable character";
                        v[f] = (unsigned char)line[start];
                } else if (tm_hex_parse(line + start, at - start, lt_digits[f], &v[f]) < 0) {
                        static const char *const bad[LT_N] = {
                            NULL, "time: not 1..16 hex digits", "size: not 1..2 hex digits",
                            "space: not 1..8 hex digits", "address: not 1..8 hex digits"};
                        return bad[f];
                }
        }
        while (at < len && lt_blank(line[at]))
                at++;
        return at == len ? NULL : "text after the address";
}

/* Every whole line of head parses, and there is one (a head cut inside
 * its first line is judged on what it has, when it is all there is). */
static int lt_probe(const uint8_t *head, size_t n)
{
        const char *s = (const char *)head, *end = s + n;
        uint64_t v[LT_N];
        int lines = 0;
        while (s < end) {
                const char *nl = memchr(s, '\n', (size_t)(end - s));
                if (!nl)
                        return lines > 0 || lt_parse(s, (size_t)(end - s), v) == NULL;
                if (lt_parse(s, (size_t)(nl - s), v) != NULL)
                        return 0;
                lines++;
                s = nl + 1;
        }
        return lines > 0;
}

/* The raw form's schema, from its DTD (one layout, one place), and the
 * check that it is the five fields this parser fills, in order. */
static int lt_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                   struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)path;
        void *mctx = NULL;
        *ctx = NULL;
        int ret = mtf_open_bound(TM_LAPLACE_DTD, MTF_LE, &mctx, schema, st, err);
        if (ret < 0)
                return tm_err_prefix(err, "raw offset 0: laplace_text");
        tm_rcodec_metatf.close(mctx);
        const struct tm_kind *k = &schema->kind[0];
        int ok = schema->nkinds == 1 && k->nfields == LT_N;
        for (unsigned f = 0; ok && f < LT_N; f++)
                ok = strcmp(schema->field[k->field[f]].name, lt_field[f]) == 0;
        if (!ok)
                return tm_err_set(err, -EINVAL, "raw offset 0: laplace_text: %s is not the five "
                                  "fields type time size space address", TM_LAPLACE_DTD);
        memset(st->b, 0, sizeof(struct lt_state));
        return 0;
}

static void lt_close(void *ctx)
{
        (void)ctx;
}

static int lt_fail(struct tm_err *err, uint64_t off, uint64_t line, const char *what)
{
        return tm_err_set(err, -EIO, "raw offset %llu: laplace line %llu: %s",
                          (unsigned long long)off, (unsigned long long)line, what);
}

static ssize_t lt_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                         struct tm_err *err)
{
        (void)ctx;
        struct lt_state *s = (struct lt_state *)st->b;
        size_t pos = 0, n = 0;
        while (n < cap && pos < len) {
                size_t avail = len - pos, look = avail < LT_LINE_MAX + 1 ? avail : LT_LINE_MAX + 1;
                const uint8_t *nl = memchr(in + pos, '\n', look);
                if (!nl && look > LT_LINE_MAX)
                        return lt_fail(err, raw_off + pos, s->line + 1, "line longer than 128 bytes");
                if (!nl && eof)
                        return lt_fail(err, raw_off + pos, s->line + 1,
                                       "truncated: the last line has no newline");
                if (!nl)
                        break;
                size_t ll = (size_t)(nl - (in + pos));
                struct tm_rec *r = &out[n];
                memset(r, 0, sizeof *r);
                const char *bad = lt_parse((const char *)in + pos, ll, r->v);
                if (bad)
                        return lt_fail(err, raw_off + pos, s->line + 1, bad);
                n++;
                s->line++;
                pos += ll + 1;
        }
        *used = pos;
        return (ssize_t)n;
}

const struct tm_rcodec tm_rcodec_laplace_text = {
    .name = "laplace_text",
    .suffix = NULL, /* read only (docs/formats/laplace.md: what writing needs) */
    .family = "dtd", /* as the raw row's: the schema is named after the DTD */
    .probe = lt_probe,
    .open = lt_open,
    .close = lt_close,
    .state_size = sizeof(struct lt_state),
    .decode = lt_decode,
};
