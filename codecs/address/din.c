/* din codec: see din.h. */
#include "din.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "arec_impl.h"
#include "codec_util.h"

struct din_dec {
        uint8_t tail; /* inside the ignored rest of a line: skip to the newline */
};
_Static_assert(sizeof(struct din_dec) <= TM_STATE_MAX, "din state too big");

static int din_dec_init(struct tm_dec_state *st, const uint8_t *head, size_t n, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)err;
        memset(st, 0, sizeof *st);
        return 0;
}

static int din_long_start(struct tm_err *err, uint64_t off)
{
        return tm_err_set(err, -EIO, "raw offset %" PRIu64 ": din: line start longer than %d bytes",
                          off, DIN_MAX_PREFIX);
}

/* Bytes a line must have left for din_fast_line. */
#define DIN_FAST_SPAN 48

/* The common line "L HHHHHHHH\n" (one blank, optional 0x, at most 16
 * digits, newline right after) parsed without bounds checks from l, which
 * has DIN_FAST_SPAN bytes. Returns the line length, or 0 for anything else,
 * which the general parser handles (and reports). */
static size_t din_fast_line(const uint8_t *l, struct tm_ref *out)
{
        if (l[1] != ' ')
                return 0;
        size_t q = 2;
        if (l[2] == '0' && (l[3] | 0x20) == 'x')
                q = 4;
        size_t start = q;
        uint64_t v = 0;
        int d;
        while ((d = cu_hexval[l[q]]) >= 0 && q - start < 16) {
                v = v << 4 | (unsigned)d;
                q++;
        }
        if (l[q] != '\n' || q == start)
                return 0;
        out->addr = v;
        out->type = (uint32_t)(l[0] - '0');
        return q + 1;
}

static int din_state_ok(const struct tm_dec_state *st)
{
        return st->b[offsetof(struct din_dec, tail)] <= 1;
}

static ssize_t din_decode(struct tm_dec_state *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_ref *out, size_t cap,
                          struct tm_err *err)
{
        struct din_dec s;
        memcpy(&s, st->b, sizeof s);
        size_t k = 0, p = 0, q = 0;

        if (s.tail) {
                const uint8_t *nl = memchr(in, '\n', len);
                p = nl ? (size_t)(nl - in) + 1 : len;
                s.tail = !nl;
        }
        while (k < cap && p < len) {
                uint8_t c = in[p];
                if (len - p >= DIN_FAST_SPAN && c >= '0' && c <= '5') {
                        size_t n = din_fast_line(in + p, &out[k]);
                        if (n) {
                                k++;
                                p += n;
                                continue;
                        }
                }
                if (c == '\n' || cu_is_blank(c)) {
                        p++; /* blank lines and leading blanks carry nothing */
                        continue;
                }
                if (c < '0' || c > '5')
                        return tm_err_set(err, -EIO,
                                          "raw offset %" PRIu64 ": din: bad label 0x%02x "
                                          "(want a hex digit 0-5)",
                                          raw_off + p, c);
                q = p + 1;
                if (q == len)
                        goto cut;
                if (!cu_is_blank(in[q]))
                        return tm_err_set(
                            err, -EIO, "raw offset %" PRIu64 ": din: want a blank after the label",
                            raw_off + q);
                while (q < len && cu_is_blank(in[q]))
                        q++;
                uint64_t v = 0;
                unsigned nd = 0, x = 0;
                for (; q < len; q++) {
                        int d = cu_hexval[in[q]];
                        if (d < 0) {
                                if (nd != 1 || v != 0 || x || (in[q] | 0x20) != 'x')
                                        break;
                                x = 1; /* the 0x prefix */
                                nd = 0;
                                continue;
                        }
                        if (++nd > 16)
                                return tm_err_set(err, -EIO,
                                                  "raw offset %" PRIu64
                                                  ": din: address longer than 16 hex digits",
                                                  raw_off + q);
                        v = v << 4 | (unsigned)d;
                }
                /* an address the input's end ends may be cut (a file being
                 * written shows its end at any page of a write): whole only
                 * with the newline or a blank after it */
                if (q == len)
                        goto cut;
                if (nd == 0)
                        return tm_err_set(err, -EIO, "raw offset %" PRIu64 ": din: missing address",
                                          raw_off + q);
                if (q - p >= DIN_MAX_PREFIX) /* as when it is cut: whatever the window */
                        return din_long_start(err, raw_off + p);
                if (q < len && in[q] != '\n' && !cu_is_blank(in[q]))
                        return tm_err_set(err, -EIO,
                                          "raw offset %" PRIu64
                                          ": din: bad character 0x%02x after the address",
                                          raw_off + q, in[q]);
                out[k].addr = v;
                out[k++].type = (uint32_t)(c - '0');
                if (q == len || in[q] == '\n') {
                        p = q + (q < len);
                        continue;
                }
                const uint8_t *nl = memchr(in + q, '\n', len - q);
                p = nl ? (size_t)(nl - in) + 1 : len;
                s.tail = !nl;
        }
        goto done;
cut:
        if (eof)
                return tm_err_set(err, -EIO,
                                  "raw offset %" PRIu64 ": din: truncated: the last line has no "
                                  "newline",
                                  raw_off + q);
        if (q - p >= DIN_MAX_PREFIX)
                return din_long_start(err, raw_off + p);
done:
        memcpy(st->b, &s, sizeof s);
        *used = p;
        return (ssize_t)k;
}

static int din_enc_init(struct tm_enc_state *st, const struct tm_enc_opts *o, uint8_t *out,
                        struct tm_err *err)
{
        (void)o;
        (void)out;
        (void)err;
        memset(st, 0, sizeof *st);
        return 0;
}

static int din_encode(struct tm_enc_state *st, const struct tm_ref *ref, uint64_t idx, uint8_t *out,
                      struct tm_err *err)
{
        (void)st;
        if (ref->type > TM_INVALIDATE)
                return tm_err_set(err, -EINVAL,
                                  "reference %" PRIu64 ": type %u cannot be stored in din "
                                  "(labels 0-5 only)",
                                  idx, ref->type);
        char *p = (char *)out;
        p[0] = (char)('0' + ref->type);
        p[1] = ' ';
        unsigned n = cu_put_hex(p + 2, ref->addr);
        p[2 + n] = '\n';
        return (int)n + 3;
}

static int din_finish(struct tm_enc_state *st, uint8_t *out, struct tm_err *err)
{
        (void)st;
        (void)out;
        (void)err;
        return 0;
}

static const struct arec_fmt din_fmt;

static int din_probe(const uint8_t *head, size_t n)
{
        return cu_probe_lines(&din_fmt, head, n);
}

static const struct arec_fmt din_fmt = {
    .ntypes = 6,
    .dec_init = din_dec_init,
    .state_ok = din_state_ok,
    .decode = din_decode,
    .enc_init = din_enc_init,
    .encode = din_encode,
    .finish = din_finish,
};

AREC_ROW(din, din_fmt, ".din", din_probe, TM_BID_DIN);
