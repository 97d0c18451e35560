/* lackey codec: see lackey.h. */
#include "lackey.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "arec_impl.h"
#include "codec_util.h"

struct lk_dec {
        uint64_t store;  /* address of the store half of an M line not yet yielded */
        uint32_t size;   /* its size */
        uint8_t pending; /* store is valid */
        uint8_t tail;    /* inside a valgrind line: skip to the newline */
};
_Static_assert(sizeof(struct lk_dec) <= TM_STATE_MAX, "lackey state too big");

static int lk_dec_init(struct tm_dec_state *st, const uint8_t *head, size_t n, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)err;
        memset(st, 0, sizeof *st);
        return 0;
}

static int lk_state_ok(const struct tm_dec_state *st)
{
        struct lk_dec s;
        memcpy(&s, st->b, sizeof s);
        return s.pending <= 1 && s.tail <= 1 && s.size <= LACKEY_MAX_SIZE;
}

/* Most digits of a valgrind line's pid (a 64-bit number has 20). */
#define LK_PID_DIGITS 20

/* Is the line at in[0..len) (len >= 2) a valgrind line "==N==" or "--N--"?
 * 1 yes, 0 no, -1 cannot tell yet (cut). A longer N is no pid, whether or
 * not the window cuts it, so the answer never waits for more than
 * LK_PID_DIGITS + 4 bytes and never depends on where the window ends. */
static int lk_is_valgrind(const uint8_t *in, size_t len)
{
        uint8_t m = in[0];
        if ((m != '=' && m != '-') || in[1] != m)
                return 0;
        size_t q = 2;
        while (q < len && q <= 2 + LK_PID_DIGITS && in[q] >= '0' && in[q] <= '9')
                q++;
        if (q > 2 + LK_PID_DIGITS)
                return 0;
        if (q + 2 > len)
                return -1;
        return q > 2 && in[q] == m && in[q + 1] == m;
}

/* Parse a record line starting at in[0]. Returns the line length including
 * its newline (or up to len at eof), 0 if cut, or -(1 + offset of the bad
 * byte) if it is not a record (a size above LACKEY_MAX_SIZE included). */
static ssize_t lk_parse(const uint8_t *in, size_t len, int eof, uint32_t *kind, uint64_t *addr,
                        uint32_t *size)
{
        size_t q = 0;
        while (q < len && (in[q] == ' ' || in[q] == '\t'))
                q++;
        if (q == len)
                return 0;
        uint8_t c = in[q];
        if (c != 'I' && c != 'L' && c != 'S' && c != 'M')
                return -(ssize_t)(q + 1);
        *kind = c;
        size_t b = ++q;
        while (q < len && cu_is_blank(in[q]))
                q++;
        if (q == len)
                return 0;
        if (q == b)
                return -(ssize_t)(q + 1);
        uint64_t v = 0;
        unsigned nd = 0;
        for (; q < len && cu_hexval[in[q]] >= 0; q++) {
                if (++nd > 16)
                        return -(ssize_t)(q + 1);
                v = v << 4 | (unsigned)cu_hexval[in[q]];
        }
        if (q == len)
                return 0;
        if (nd == 0 || in[q] != ',')
                return -(ssize_t)(q + 1);
        *addr = v;
        b = ++q;
        uint32_t sz = 0;
        for (; q < len && in[q] >= '0' && in[q] <= '9'; q++)
                if ((sz = sz * 10 + (uint32_t)(in[q] - '0')) > LACKEY_MAX_SIZE)
                        return -(ssize_t)(q + 1);
        *size = sz;
        size_t d = q; /* the size's end */
        while (q < len && cu_is_blank(in[q]))
                q++;
        /* a size that the input's end ends may be cut (a file being written
         * shows its end at any page of a write): whole only with a blank
         * or the newline after it */
        if (q == len)
                return eof && d > b && q > d ? (ssize_t)q : 0;
        if (q == b || in[q] != '\n')
                return -(ssize_t)(q + 1);
        return (ssize_t)q + 1;
}

/* Bytes a line must have left for lk_fast_line. */
#define LK_FAST_SPAN 48

/* The common record lines "I  HHHH,N\n" and " X HHHH,N\n" (X = L, S, M)
 * parsed without bounds checks from l, which has LK_FAST_SPAN bytes, into
 * out (and sizes, if not NULL), which have room for 2. Returns the line length and sets *nref, or 0
 * for anything else, which the general parser handles (and reports). */
static inline size_t lk_fast_line(const uint8_t *l, struct tm_ref *out, uint32_t *sizes,
                                  size_t *nref)
{
        uint32_t type;
        if (l[0] == 'I' && l[1] == ' ')
                type = TM_IFETCH;
        else if (l[0] == ' ' && (l[1] == 'L' || l[1] == 'M'))
                type = TM_READ;
        else if (l[0] == ' ' && l[1] == 'S')
                type = TM_WRITE;
        else
                return 0;
        if (l[2] != ' ')
                return 0;
        size_t q = 3;
        uint64_t v = 0;
        int d;
        while ((d = cu_hexval[l[q]]) >= 0 && q < 3 + 16) {
                v = v << 4 | (unsigned)d;
                q++;
        }
        if (q == 3 || l[q] != ',')
                return 0;
        size_t b = ++q;
        while (l[q] >= '0' && l[q] <= '9' && q < b + 20)
                q++;
        /* up to 3 digits (<= 999, never above LACKEY_MAX_SIZE); longer
         * sizes are the general parser's */
        if (q == b || q - b > 3 || l[q] != '\n')
                return 0;
        if (sizes) {
                uint32_t sz = 0;
                for (size_t d = b; d < q; d++)
                        sz = sz * 10 + (uint32_t)(l[d] - '0');
                sizes[0] = sizes[1] = sz;
        }
        out[0].addr = v;
        out[0].type = type;
        out[1].addr = v;
        out[1].type = TM_WRITE;
        *nref = l[1] == 'M' ? 2 : 1;
        return q + 1;
}

/* decode and decode_sized: sizes NULL or not (inlined twice, so that the
 * test is made at compile time). */
static inline __attribute__((always_inline)) ssize_t
lk_decode_any(struct tm_dec_state *st, const uint8_t *in, size_t len, int eof, uint64_t raw_off,
              size_t *used, struct tm_ref *out, uint32_t *sizes, size_t cap, struct tm_err *err)
{
        struct lk_dec s;
        memcpy(&s, st->b, sizeof s);
        size_t k = 0, p = 0;

        if (s.pending && cap) {
                out[k].addr = s.store;
                if (sizes)
                        sizes[k] = s.size;
                out[k++].type = TM_WRITE;
                s.pending = 0;
        }
        if (s.tail) {
                const uint8_t *nl = memchr(in, '\n', len);
                p = nl ? (size_t)(nl - in) + 1 : len;
                s.tail = !nl;
        }
        while (k < cap && p < len) {
                const uint8_t *l = in + p;
                size_t rest = len - p, nref;
                if (rest >= LK_FAST_SPAN && cap - k >= 2) {
                        size_t n = lk_fast_line(l, &out[k], sizes ? sizes + k : NULL, &nref);
                        if (n) {
                                k += nref;
                                p += n;
                                continue;
                        }
                }
                if (l[0] == '\n' || (l[0] == '\r' && rest > 1 && l[1] == '\n')) {
                        p += l[0] == '\n' ? 1 : 2;
                        continue;
                }
                int vg = rest < 2 ? -1 : lk_is_valgrind(l, rest);
                if (vg > 0) {
                        const uint8_t *nl = memchr(l, '\n', rest);
                        p = nl ? (size_t)(nl - in) + 1 : len;
                        s.tail = !nl;
                        continue;
                }
                uint32_t kind = 0, size = 0;
                uint64_t addr = 0;
                ssize_t r = vg < 0 ? 0 : lk_parse(l, rest, eof, &kind, &addr, &size);
                if (r < 0)
                        return tm_err_set(err, -EIO,
                                          "raw offset %" PRIu64
                                          ": lackey: not a lackey record or valgrind line"
                                          " (or a size above %d)",
                                          raw_off + p + (uint64_t)(-r - 1), LACKEY_MAX_SIZE);
                if (r == 0) {
                        if (eof)
                                return tm_err_set(err, -EIO,
                                                  "raw offset %" PRIu64
                                                  ": lackey: truncated: the last line has no "
                                                  "newline",
                                                  raw_off + p);
                        if (rest >= LACKEY_MAX_LINE)
                                return tm_err_set(err, -EIO,
                                                  "raw offset %" PRIu64
                                                  ": lackey: line longer than %d bytes",
                                                  raw_off + p, LACKEY_MAX_LINE);
                        break;
                }
                if (r > LACKEY_MAX_LINE) /* as when a window cuts it: the same either way */
                        return tm_err_set(
                            err, -EIO, "raw offset %" PRIu64 ": lackey: line longer than %d bytes",
                            raw_off + p, LACKEY_MAX_LINE);
                p += (size_t)r;
                out[k].addr = addr;
                if (sizes)
                        sizes[k] = size;
                out[k++].type = kind == 'I' ? TM_IFETCH : kind == 'S' ? TM_WRITE : TM_READ;
                if (kind != 'M')
                        continue;
                if (k == cap) {
                        s.store = addr;
                        s.size = size;
                        s.pending = 1;
                        break;
                }
                out[k].addr = addr;
                if (sizes)
                        sizes[k] = size;
                out[k++].type = TM_WRITE;
        }
        memcpy(st->b, &s, sizeof s);
        *used = p;
        return (ssize_t)k;
}

static ssize_t lk_decode(struct tm_dec_state *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_ref *out, size_t cap,
                         struct tm_err *err)
{
        return lk_decode_any(st, in, len, eof, raw_off, used, out, NULL, cap, err);
}

static ssize_t lk_decode_sized(struct tm_dec_state *st, const uint8_t *in, size_t len, int eof,
                               uint64_t raw_off, size_t *used, struct tm_ref *out, uint32_t *sizes,
                               size_t cap, struct tm_err *err)
{
        return lk_decode_any(st, in, len, eof, raw_off, used, out, sizes, cap, err);
}

static const struct arec_fmt lk_fmt;

static int lk_probe(const uint8_t *head, size_t n)
{
        return cu_probe_lines(&lk_fmt, head, n);
}

/* ---- encoder: valgrind's own line forms, "I  %08lx,%lu" etc. ---- */

struct lk_enc {
        uint64_t addr; /* a read held back: an M line if the write of it follows */
        uint32_t size;
        uint8_t pending; /* addr and size are valid */
};
_Static_assert(sizeof(struct lk_enc) <= TM_ENC_STATE_MAX, "lackey encoder state too big");

static int lk_enc_init(struct tm_enc_state *st, const struct tm_enc_opts *o, uint8_t *out,
                       struct tm_err *err)
{
        (void)o;
        (void)out;
        (void)err;
        memset(st, 0, sizeof *st);
        return 0; /* no header */
}

/* One line: the two-character kind, the address with at least 8 hex
 * digits, ',', the decimal size, '\n'. At most 2 + 16 + 1 + 4 + 1 bytes. */
static int lk_put_line(uint8_t *out, const char *kind, uint64_t addr, uint32_t size)
{
        char hex[16];
        unsigned nd = cu_put_hex(hex, addr), pad = nd < 8 ? 8 - nd : 0;
        out[0] = (uint8_t)kind[0];
        out[1] = (uint8_t)kind[1];
        out[2] = ' ';
        memset(out + 3, '0', pad);
        memcpy(out + 3 + pad, hex, nd);
        size_t q = 3 + pad + nd;
        out[q++] = ',';
        char dec[4];
        unsigned k = 0;
        do
                dec[k++] = (char)('0' + size % 10);
        while ((size /= 10) != 0);
        while (k)
                out[q++] = (uint8_t)dec[--k];
        out[q++] = '\n';
        return (int)q;
}

static int lk_encode(struct tm_enc_state *st, const struct tm_ref *ref, uint32_t size, uint64_t idx,
                     uint8_t *out, struct tm_err *err)
{
        struct lk_enc s;
        memcpy(&s, st->b, sizeof s);
        if (ref->type > TM_IFETCH)
                return tm_err_set(err, -EINVAL,
                                  "reference %" PRIu64 ": type %u has no lackey line (lackey "
                                  "holds reads, writes and instruction fetches)",
                                  idx, ref->type);
        if (size > LACKEY_MAX_SIZE)
                return tm_err_set(err, -EINVAL, "reference %" PRIu64 ": size %u above %d", idx,
                                  size, LACKEY_MAX_SIZE);
        int n = 0;
        if (s.pending) {
                s.pending = 0;
                if (ref->type == TM_WRITE && ref->addr == s.addr && size == s.size) {
                        memcpy(st->b, &s, sizeof s);
                        return lk_put_line(out, " M", s.addr, s.size);
                }
                n = lk_put_line(out, " L", s.addr, s.size);
        }
        if (ref->type == TM_READ) {
                s.addr = ref->addr;
                s.size = size;
                s.pending = 1;
        } else {
                n += lk_put_line(out + n, ref->type == TM_WRITE ? " S" : "I ", ref->addr, size);
        }
        memcpy(st->b, &s, sizeof s);
        return n;
}

static int lk_finish(struct tm_enc_state *st, uint8_t *out, struct tm_err *err)
{
        (void)err;
        struct lk_enc s;
        memcpy(&s, st->b, sizeof s);
        return s.pending ? lk_put_line(out, " L", s.addr, s.size) : 0;
}

static const struct arec_fmt lk_fmt = {
    .ntypes = 3,
    .dec_init = lk_dec_init,
    .state_ok = lk_state_ok,
    .decode = lk_decode,
    .enc_init = lk_enc_init,
    .encode = NULL, /* sizes needed: encode_sized */
    .finish = lk_finish,
    .decode_sized = lk_decode_sized,
    .encode_sized = lk_encode,
};

AREC_ROW(lackey, lk_fmt, ".lackey", lk_probe, TM_BID_LACKEY);
