/* Line framing of the Laplace text forms (laplace_line.h). */
#include "laplace_line.h"

#include <errno.h>
#include <string.h>

#include "laplace.h"

static int lp_blank(char c)
{
        return c == ' ' || c == '\t';
}

size_t lp_field(const char *line, size_t len, size_t *at, size_t *start)
{
        size_t i = *at;
        while (i < len && lp_blank(line[i]))
                i++;
        *start = i;
        while (i < len && !lp_blank(line[i]))
                i++;
        *at = i;
        return i - *start;
}

int lp_rest_blank(const char *line, size_t len, size_t at)
{
        while (at < len && lp_blank(line[at]))
                at++;
        return at == len;
}

int lp_probe_lines(lp_parse_fn parse, const uint8_t *head, size_t n)
{
        const char *s = (const char *)head, *end = s + n;
        struct tm_rec r;
        int lines = 0;
        while (s < end) {
                const char *nl = memchr(s, '\n', (size_t)(end - s));
                memset(&r, 0, sizeof r);
                if (!nl)
                        return lines > 0 || parse(s, (size_t)(end - s), &r) == NULL;
                if (parse(s, (size_t)(nl - s), &r) != NULL)
                        return 0;
                lines++;
                s = nl + 1;
        }
        return lines > 0;
}

static int lp_fail(struct tm_err *err, const char *what, uint64_t off, uint64_t line,
                   const char *why)
{
        return tm_err_set(err, -EIO, "raw offset %llu: %s line %llu: %s", (unsigned long long)off,
                          what, (unsigned long long)line, why);
}

ssize_t lp_decode_lines(lp_parse_fn parse, const char *what, uint64_t *nline, const uint8_t *in,
                        size_t len, int eof, uint64_t raw_off, size_t *used, struct tm_rec *out,
                        size_t cap, struct tm_err *err)
{
        size_t pos = 0, n = 0;
        while (n < cap && pos < len) {
                size_t avail = len - pos;
                size_t look = avail < TM_LAPLACE_LINE_MAX + 1 ? avail : TM_LAPLACE_LINE_MAX + 1;
                const uint8_t *nl = memchr(in + pos, '\n', look);
                const char *bad = NULL;
                if (nl) {
                        memset(&out[n], 0, sizeof out[n]);
                        bad = parse((const char *)in + pos, (size_t)(nl - (in + pos)), &out[n]);
                }
                if (n > 0 && (bad || (!nl && (eof || look > TM_LAPLACE_LINE_MAX))))
                        break; /* the records before a bad line first, so that every window
                                * stops at the same record */
                if (!nl && look > TM_LAPLACE_LINE_MAX)
                        return lp_fail(err, what, raw_off + pos, *nline + 1,
                                       "line longer than 128 bytes");
                if (!nl && eof)
                        return lp_fail(err, what, raw_off + pos, *nline + 1,
                                       "truncated: the last line has no newline");
                if (!nl)
                        break;
                size_t ll = (size_t)(nl - (in + pos));
                if (bad)
                        return lp_fail(err, what, raw_off + pos, *nline + 1, bad);
                n++;
                (*nline)++;
                pos += ll + 1;
        }
        *used = pos;
        return (ssize_t)n;
}
