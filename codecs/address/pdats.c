/* PDATS codec: see pdats.h for the record layout and docs/formats/pdats.md
 * for the reasons. */
#include "pdats.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "arec_impl.h"
#include "codec_util.h"

struct p1_dec {
        uint64_t prev[PDATS_SLOTS]; /* previous address by type slot, 0 at the start */
        uint8_t skip; /* references of the record at the current offset already yielded */
        uint8_t wide; /* 64-bit file: code 3 means 8 bytes */
        uint8_t unit; /* the default offset */
};
_Static_assert(sizeof(struct p1_dec) <= TM_STATE_MAX, "PDATS state too big");

struct p1_enc {
        uint64_t prev[PDATS_SLOTS];
        uint64_t mask;
        uint64_t run_off; /* the held-back run: offset, count (0: none), type */
        uint32_t run_n;
        uint32_t run_type;
        unsigned bits;
        unsigned unit;
};
_Static_assert(sizeof(struct p1_enc) <= TM_ENC_STATE_MAX, "PDATS encoder state too big");

static inline unsigned p1_slot(unsigned type)
{
        return type < PDATS_SLOTS ? type : PDATS_SLOTS - 1;
}

static int p1_probe(const uint8_t *head, size_t n)
{
        return n >= 4 && memcmp(head, PDATS_MAGIC, 4) == 0;
}

static int p1_dec_init(struct tm_dec_state *st, const uint8_t *head, size_t n, struct tm_err *err)
{
        struct cu_hdr h;
        int r = cu_hdr_parse("pdats", PDATS_MAGIC, head, n, &h, err);
        if (r < 0)
                return r;
        if (h.unit == 0)
                return tm_err_set(err, -EIO, "raw offset 6: pdats: default offset 0");
        struct p1_dec s = {0};
        s.wide = h.addr_bits == 64;
        s.unit = (uint8_t)h.unit;
        memset(st, 0, sizeof *st);
        memcpy(st->b, &s, sizeof s);
        return r;
}

static int p1_state_ok(const struct tm_dec_state *st)
{
        struct p1_dec s;
        memcpy(&s, st->b, sizeof s);
        const uint64_t mask = s.wide ? UINT64_MAX : UINT32_MAX;
        for (unsigned i = 0; i < PDATS_SLOTS; i++)
                if (s.prev[i] & ~mask)
                        return 0;
        return s.wide <= 1 && s.unit >= 1;
}

static ssize_t p1_decode(struct tm_dec_state *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_ref *out, size_t cap,
                         struct tm_err *err)
{
        struct p1_dec s;
        memcpy(&s, st->b, sizeof s);
        const uint64_t mask = s.wide ? UINT64_MAX : UINT32_MAX;
        const uint8_t olen[4] = {0, 1, 2, (uint8_t)(s.wide ? 8 : 4)};
        const unsigned olen_nib = 0x210u | (s.wide ? 8u : 4u) << 12; /* olen in a register */
        size_t k = 0, p = 0;

        while (k < cap && p < len) {
                unsigned h = in[p];
                if (!s.skip && !(h & PDATS_TIME_MASK) && len - p >= 2 + 8 &&
                    cap - k >= PDATS_MAX_RUN) {
                        /* the hot path: offset and repeat bytes read without
                         * bounds checks, no run state to keep */
                        unsigned rep = h >> 7, c = (h >> PDATS_CODE_SHIFT) & 3;
                        unsigned ol = (unsigned)(olen_nib >> (4 * c)) & 15;
                        uint64_t off = c ? cu_get_be_signed8(in + p + 1 + rep, ol) : s.unit;
                        unsigned n = 1 + (in[p + 1] & (0u - rep));
                        unsigned t = h & PDATS_TYPE_MASK, slot = p1_slot(t);
                        uint64_t a = s.prev[slot];
                        for (unsigned i = 0; i < n; i++) {
                                a = (a + off) & mask;
                                out[k].addr = a;
                                out[k++].type = t;
                        }
                        s.prev[slot] = a;
                        p += 1 + rep + ol;
                        continue;
                }
                if (h & PDATS_TIME_MASK)
                        return tm_err_set(err, -ENOTSUP,
                                          "raw offset %" PRIu64
                                          ": pdats: timestamps not supported (time code %u)",
                                          raw_off + p, (h & PDATS_TIME_MASK) >> 3);
                unsigned rep = h >> 7;
                unsigned c = (h >> PDATS_CODE_SHIFT) & 3;
                size_t rl = 1 + rep + olen[c];
                if (len - p < rl) {
                        if (eof)
                                return tm_err_set(err, -EIO,
                                                  "raw offset %" PRIu64
                                                  ": pdats: truncated record (header 0x%02x)",
                                                  raw_off + p, h);
                        break;
                }
                unsigned n = rep ? in[p + 1] + 1u : 1u;
                uint64_t off = c ? cu_get_be_signed(in + p + 1 + rep, olen[c]) : s.unit;
                unsigned t = h & PDATS_TYPE_MASK, slot = p1_slot(t);
                uint64_t a = s.prev[slot];
                if (s.skip >= n) /* only a checkpoint can say so (p1_state_ok) */
                        return tm_err_set(err, -EIO,
                                          "raw offset %" PRIu64
                                          ": pdats: the index resumes %u references into a "
                                          "record of %u",
                                          raw_off + p, s.skip, n);
                unsigned todo = n - s.skip;
                size_t m = cap - k < todo ? cap - k : todo;
                for (size_t i = 0; i < m; i++) {
                        a = (a + off) & mask;
                        out[k].addr = a;
                        out[k++].type = t;
                }
                s.prev[slot] = a;
                if (m < todo) {
                        /* stop inside the run: the record stays unconsumed */
                        s.skip = (uint8_t)(n - todo + m);
                        break;
                }
                s.skip = 0;
                p += rl;
        }
        memcpy(st->b, &s, sizeof s);
        *used = p;
        return (ssize_t)k;
}

static int p1_enc_init(struct tm_enc_state *st, const struct tm_enc_opts *o, uint8_t *out,
                       struct tm_err *err)
{
        unsigned bits = o->addr_bits ? o->addr_bits : 32;
        unsigned unit = o->unit ? o->unit : 4;
        if (bits != 32 && bits != 64)
                return tm_err_set(err, -EINVAL, "pdats: address width %u (want 32 or 64)", bits);
        if (unit > 255)
                return tm_err_set(err, -EINVAL, "pdats: default offset %u (want 1..255)", unit);
        struct p1_enc s = {0};
        s.bits = bits;
        s.unit = unit;
        s.mask = bits == 64 ? UINT64_MAX : UINT32_MAX;
        memset(st, 0, sizeof *st);
        memcpy(st->b, &s, sizeof s);
        return cu_hdr_write(PDATS_MAGIC, bits, unit, out);
}

/* Write the held-back run, if any, as one record; returns its length. The
 * default-offset code is used for instruction fetches only, as the paper's
 * encoder did (Table 3 row 19: a write at +4 costs 2 bytes). */
static int p1_flush(struct p1_enc *s, uint8_t *out)
{
        if (!s->run_n)
                return 0;
        unsigned olen, code;
        if (s->run_type == TM_IFETCH && s->run_off == s->unit) {
                olen = 0;
                code = 0;
        } else {
                olen = cu_signed_len(cu_sext(s->run_off, s->bits));
                if (olen > 2 && s->bits == 64)
                        olen = 8;
                code = olen == 1 ? 1 : olen == 2 ? 2 : 3;
        }
        int n = 0;
        out[n++] =
            (uint8_t)((s->run_n > 1 ? PDATS_REPEAT : 0) | code << PDATS_CODE_SHIFT | s->run_type);
        if (s->run_n > 1)
                out[n++] = (uint8_t)(s->run_n - 1);
        cu_put_be(out + n, s->run_off, olen);
        s->run_n = 0;
        return n + (int)olen;
}

static int p1_encode(struct tm_enc_state *st, const struct tm_ref *ref, uint64_t idx, uint8_t *out,
                     struct tm_err *err)
{
        struct p1_enc s;
        memcpy(&s, st->b, sizeof s);
        if (ref->type >= TM_NTYPES)
                return tm_err_set(err, -EINVAL, "reference %" PRIu64 ": type %u out of range 0-7",
                                  idx, ref->type);
        if (ref->addr & ~s.mask)
                return tm_err_set(err, -ERANGE,
                                  "reference %" PRIu64 ": address 0x%" PRIx64
                                  " needs 64-bit addresses",
                                  idx, ref->addr);
        unsigned slot = p1_slot(ref->type);
        uint64_t off = (ref->addr - s.prev[slot]) & s.mask;
        s.prev[slot] = ref->addr;
        int n = 0;
        if (s.run_n && s.run_type == ref->type && s.run_off == off && s.run_n < PDATS_MAX_RUN) {
                s.run_n++;
        } else {
                n = p1_flush(&s, out);
                s.run_n = 1;
                s.run_type = ref->type;
                s.run_off = off;
        }
        memcpy(st->b, &s, sizeof s);
        return n;
}

static int p1_finish(struct tm_enc_state *st, uint8_t *out, struct tm_err *err)
{
        (void)err;
        struct p1_enc s;
        memcpy(&s, st->b, sizeof s);
        int n = p1_flush(&s, out);
        memcpy(st->b, &s, sizeof s);
        return n;
}

static const struct arec_fmt p1_fmt = {
    .ntypes = TM_NTYPES,
    .dec_init = p1_dec_init,
    .state_ok = p1_state_ok,
    .decode = p1_decode,
    .enc_init = p1_enc_init,
    .encode = p1_encode,
    .finish = p1_finish,
};

AREC_ROW(pdats, p1_fmt, ".pdt", p1_probe, TM_BID_MAGIC);
