/* PDATS II codec: see pdats2.h for the record layout and
 * docs/formats/pdats2.md for the reasons. */
#include "pdats2.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "../../arch/x86/pdats2_x86.h"
#include "../common/tm_cpu.h"
#include "arec_impl.h"
#include "codec_util.h"

/* ---- the block decoder (pdats2_x86.h): vector code of arch/ ---- */

/* The block decoders for 32-bit and 64-bit files (p2x_blocks(wide));
 * the portable table has none. */
struct pdats2_impl {
        p2x_blocks_fn *blocks[2];
};

#ifdef TM_CPU_X86
#include "../../arch/x86/pdats2_impl.h"
#endif

static const struct pdats2_impl pdats2_portable = {{NULL, NULL}};
static struct tm_cpu_slot pdats2_slot = {.arch = TM_CPU_ARCH(pdats2_arch_choose),
                                         .portable = &pdats2_portable};

p2x_blocks_fn *p2x_blocks(int wide)
{
        const struct pdats2_impl *f = tm_cpu_pick(&pdats2_slot);
        return f->blocks[wide != 0];
}

void p2x_force_scalar(int on)
{
        tm_cpu_choose(&pdats2_slot, on);
}

/* ---- the codec ---- */

/* Data offsets held in the header byte, by data offset code. */
static const uint64_t p2_small_off[8] = {0, 4, (uint64_t)-4, 8, (uint64_t)-8, 0, 0, 0};

struct p2_dec {
        uint64_t prev_i;  /* last instruction fetch yielded, 0 at the start */
        uint64_t zone[2]; /* data zone bases */
        uint64_t mask;    /* 2^addr_bits - 1 */
        uint32_t pending; /* sequential instruction fetches still to yield */
        uint8_t shift;    /* log2 of the instruction unit */
        uint8_t wide;     /* 64-bit file: the largest offset code means 8 bytes */
};
_Static_assert(sizeof(struct p2_dec) <= TM_STATE_MAX, "PDATS II state too big");

struct p2_enc {
        uint64_t prev_i;
        uint64_t zone[2];
        uint64_t mask;
        unsigned bits;
        unsigned unit;
        uint8_t lru;      /* the zone taken on a tie: the least recently used */
        uint8_t has;      /* a record is held back until its run is known */
        uint8_t hdr;      /* its header byte without the run count */
        uint8_t count;    /* sequential instructions in its run so far */
        uint8_t maxcount; /* 31 for instruction records, 3 for data records */
        uint8_t olen;     /* offset bytes */
        uint8_t off[8];   /* the offset, big-endian */
};
_Static_assert(sizeof(struct p2_enc) <= TM_ENC_STATE_MAX, "PDATS II encoder state too big");

static int p2_probe(const uint8_t *head, size_t n)
{
        return n >= 4 && memcmp(head, PDATS2_MAGIC, 4) == 0;
}

static int p2_dec_init(struct tm_dec_state *st, const uint8_t *head, size_t n, struct tm_err *err)
{
        struct cu_hdr h;
        int r = cu_hdr_parse("pdats2", PDATS2_MAGIC, head, n, &h, err);
        if (r < 0)
                return r;
        if (h.unit != 1 && h.unit != 2 && h.unit != 4)
                return tm_err_set(err, -ENOTSUP,
                                  "raw offset 6: pdats2: instruction unit %u not supported",
                                  h.unit);
        struct p2_dec s = {0};
        s.mask = h.addr_bits == 64 ? UINT64_MAX : UINT32_MAX;
        s.wide = h.addr_bits == 64;
        s.shift = (uint8_t)(h.unit == 1 ? 0 : h.unit == 2 ? 1 : 2);
        memset(st, 0, sizeof *st);
        memcpy(st->b, &s, sizeof s);
        return r;
}

static int p2_state_ok(const struct tm_dec_state *st)
{
        struct p2_dec s;
        memcpy(&s, st->b, sizeof s);
        return s.shift <= 2 && s.wide <= 1 && s.mask == (s.wide ? UINT64_MAX : UINT32_MAX) &&
               s.pending <= PDATS2_INSN_MAX_RUN && (s.prev_i & ~s.mask) == 0 &&
               (s.zone[0] & ~s.mask) == 0 && (s.zone[1] & ~s.mask) == 0;
}

static ssize_t p2_decode(struct tm_dec_state *st, const uint8_t *in, size_t len, int eof,
                         uint64_t raw_off, size_t *used, struct tm_ref *out, size_t cap,
                         struct tm_err *err)
{
        struct p2_dec s;
        memcpy(&s, st->b, sizeof s);
        const uint64_t mask = s.mask;
        const unsigned shift = s.shift;
        const uint64_t unit = (uint64_t)1 << shift;
        const uint8_t big = s.wide ? 8 : 4;
        const uint8_t ilen[4] = {0, 1, 2, big};
        const uint8_t dlen[8] = {0, 0, 0, 0, 0, 1, 2, big};
        /* ilen then dlen as nibbles: a table in a register */
        const uint64_t olen_nib =
            0x210ull << 0 | (uint64_t)big << 12 | 0x21ull << 36 | (uint64_t)big << 44;
        uint64_t a = s.prev_i;
        size_t k = 0, p = 0;

        for (; s.pending && k < cap; s.pending--) {
                a = (a + unit) & mask;
                out[k].addr = a;
                out[k++].type = TM_IFETCH;
        }
        /* Whole 64-byte blocks at once where the CPU can (see
         * pdats2_x86.h); it stops short of the last 128 bytes of input and
         * of a block's references past cap, which the loops below finish. */
        p2x_blocks_fn *blocks = s.pending ? NULL : p2x_blocks(s.wide);
        if (blocks && len - p >= 128) {
                struct p2x_chain c = {a, {s.zone[0], s.zone[1]}};
                k += blocks(in, len, &p, out + k, cap - k, shift, &c);
                a = c.a;
                s.zone[0] = c.zone[0];
                s.zone[1] = c.zone[1];
        }
        /* The hot loop: records with 8 bytes after the header byte and room
         * for a whole run, so no bounds checks and no run state. No branch on
         * the record kind: selects instead. */
        while (cap - k > PDATS2_INSN_MAX_RUN && len - p > 8) {
                unsigned h = in[p];
                unsigned insn = h >> 7, z = (h >> 2) & 1;
                unsigned idx = insn ? (h >> PDATS2_INSN_CODE_SHIFT) & 3
                                    : 4 + ((h >> PDATS2_DATA_CODE_SHIFT) & 7);
                unsigned ol = (unsigned)(olen_nib >> (4 * idx)) & 15;
                uint64_t small = insn ? 1 : p2_small_off[(h >> PDATS2_DATA_CODE_SHIFT) & 7];
                uint64_t off = ol ? cu_get_be_signed8(in + p + 1, ol) : small;
                uint64_t base = insn ? a : s.zone[z];
                uint64_t addr = (base + (off << (insn ? shift : 0))) & mask;
                s.zone[z] = insn ? s.zone[z] : addr;
                a = insn ? addr : a;
                out[k].addr = addr;
                out[k++].type = insn ? TM_IFETCH : (h >> 6) & 1;
                unsigned n = h & (insn ? PDATS2_INSN_MAX_RUN : PDATS2_DATA_MAX_RUN);
                p += 1 + ol;
                for (unsigned i = 0; i < n; i++) {
                        a = (a + unit) & mask;
                        out[k].addr = a;
                        out[k++].type = TM_IFETCH;
                }
        }
        while (k < cap && p < len) {
                unsigned h = in[p], n, ol;
                if (h & PDATS2_INSN) {
                        unsigned c = (h >> PDATS2_INSN_CODE_SHIFT) & 3;
                        ol = ilen[c];
                        uint64_t off = 1;
                        if (len - p > 8)
                                off = c ? cu_get_be_signed8(in + p + 1, ol) : 1;
                        else if (len - p <= ol)
                                goto cut;
                        else if (c)
                                off = cu_get_be_signed(in + p + 1, ol);
                        a = (a + (off << shift)) & mask;
                        out[k].addr = a;
                        out[k++].type = TM_IFETCH;
                        n = h & PDATS2_INSN_MAX_RUN;
                } else {
                        unsigned c = (h >> PDATS2_DATA_CODE_SHIFT) & 7;
                        unsigned z = (h >> 2) & 1;
                        ol = dlen[c];
                        uint64_t off = p2_small_off[c];
                        if (len - p > 8)
                                off = ol ? cu_get_be_signed8(in + p + 1, ol) : off;
                        else if (len - p <= ol)
                                goto cut;
                        else if (ol)
                                off = cu_get_be_signed(in + p + 1, ol);
                        uint64_t d = (s.zone[z] + off) & mask;
                        s.zone[z] = d;
                        out[k].addr = d;
                        out[k++].type = (h >> 6) & 1;
                        n = h & PDATS2_DATA_MAX_RUN;
                }
                p += 1 + ol;
                size_t m = cap - k < n ? cap - k : n;
                for (size_t i = 0; i < m; i++) {
                        a = (a + unit) & mask;
                        out[k].addr = a;
                        out[k++].type = TM_IFETCH;
                }
                if (m < n) {
                        s.pending = (uint32_t)(n - m);
                        break;
                }
        }
        goto done;
cut:
        if (eof)
                return tm_err_set(
                    err, -EIO, "raw offset %" PRIu64 ": pdats2: truncated record (header 0x%02x)",
                    raw_off + p, in[p]);
done:
        s.prev_i = a;
        memcpy(st->b, &s, sizeof s);
        *used = p;
        return (ssize_t)k;
}

static int p2_enc_init(struct tm_enc_state *st, const struct tm_enc_opts *o, uint8_t *out,
                       struct tm_err *err)
{
        unsigned bits = o->addr_bits ? o->addr_bits : 32;
        unsigned unit = o->unit ? o->unit : 4;
        if (bits != 32 && bits != 64)
                return tm_err_set(err, -EINVAL, "pdats2: address width %u (want 32 or 64)", bits);
        if (unit != 1 && unit != 2 && unit != 4)
                return tm_err_set(err, -EINVAL, "pdats2: instruction unit %u (want 1, 2 or 4)",
                                  unit);
        struct p2_enc s = {0};
        s.bits = bits;
        s.unit = unit;
        s.mask = bits == 64 ? UINT64_MAX : UINT32_MAX;
        memset(st, 0, sizeof *st);
        memcpy(st->b, &s, sizeof s);
        return cu_hdr_write(PDATS2_MAGIC, bits, unit, out);
}

/* Write the held-back record, if any, to out; returns its length. */
static int p2_flush(struct p2_enc *s, uint8_t *out)
{
        if (!s->has)
                return 0;
        out[0] = (uint8_t)(s->hdr | s->count);
        memcpy(out + 1, s->off, s->olen);
        s->has = 0;
        return 1 + s->olen;
}

/* Offset bytes for a signed offset: 1, 2, 4 or, in 64-bit files where the
 * largest code means 8 bytes, 8 for anything past 2 bytes. */
static unsigned p2_off_len(const struct p2_enc *s, int64_t v)
{
        unsigned l = cu_signed_len(v);
        return l > 2 && s->bits == 64 ? 8 : l;
}

/* The data offset code for v and its byte count in *olen. */
static unsigned p2_data_code(const struct p2_enc *s, int64_t v, unsigned *olen)
{
        *olen = 0;
        switch (v) {
        case 0:
                return 0;
        case 4:
                return 1;
        case -4:
                return 2;
        case 8:
                return 3;
        case -8:
                return 4;
        }
        *olen = p2_off_len(s, v);
        return *olen == 1 ? 5 : *olen == 2 ? 6 : 7;
}

static void p2_hold(struct p2_enc *s, unsigned hdr, unsigned maxcount, int64_t off, unsigned olen)
{
        s->has = 1;
        s->hdr = (uint8_t)hdr;
        s->count = 0;
        s->maxcount = (uint8_t)maxcount;
        s->olen = (uint8_t)olen;
        cu_put_be(s->off, (uint64_t)off, olen);
}

static int p2_encode_ref(struct p2_enc *s, const struct tm_ref *ref, uint64_t idx, uint8_t *out,
                         struct tm_err *err)
{
        uint64_t addr = ref->addr;
        if (ref->type > TM_IFETCH)
                return tm_err_set(err, -EINVAL,
                                  "reference %" PRIu64 ": type %u (%s) cannot be stored in "
                                  "PDATS II (only read, write and ifetch)",
                                  idx, ref->type, tm_type_name(ref->type));
        if (addr & ~s->mask)
                return tm_err_set(err, -ERANGE,
                                  "reference %" PRIu64 ": address 0x%" PRIx64
                                  " needs 64-bit addresses",
                                  idx, addr);
        if (ref->type == TM_IFETCH) {
                if (s->has && s->count < s->maxcount && addr == ((s->prev_i + s->unit) & s->mask)) {
                        s->count++;
                        s->prev_i = addr;
                        return 0;
                }
                int64_t diff = cu_sext((addr - s->prev_i) & s->mask, s->bits);
                if (diff % (int64_t)s->unit)
                        return tm_err_set(err, -EDOM,
                                          "reference %" PRIu64 ": instruction offset %" PRId64
                                          " is not a multiple of the unit %u",
                                          idx, diff, s->unit);
                int n = p2_flush(s, out);
                int64_t off = diff / (int64_t)s->unit;
                unsigned olen = off == 1 ? 0 : p2_off_len(s, off);
                unsigned code = olen == 0 ? 0 : olen == 1 ? 1 : olen == 2 ? 2 : 3;
                p2_hold(s, PDATS2_INSN | code << PDATS2_INSN_CODE_SHIFT, PDATS2_INSN_MAX_RUN, off,
                        olen);
                s->prev_i = addr;
                return n;
        }
        int64_t d[2];
        unsigned code[2], olen[2];
        for (unsigned z = 0; z < 2; z++) {
                d[z] = cu_sext((addr - s->zone[z]) & s->mask, s->bits);
                code[z] = p2_data_code(s, d[z], &olen[z]);
        }
        unsigned z = olen[0] < olen[1] ? 0 : olen[1] < olen[0] ? 1 : s->lru;
        int n = p2_flush(s, out);
        unsigned hdr = (ref->type == TM_WRITE ? PDATS2_DATA_WRITE : 0) |
                       code[z] << PDATS2_DATA_CODE_SHIFT | (z ? PDATS2_DATA_ZONE : 0);
        p2_hold(s, hdr, PDATS2_DATA_MAX_RUN, d[z], olen[z]);
        s->zone[z] = addr;
        s->lru = (uint8_t)(1 - z);
        return n;
}

static int p2_encode(struct tm_enc_state *st, const struct tm_ref *ref, uint64_t idx, uint8_t *out,
                     struct tm_err *err)
{
        struct p2_enc s;
        memcpy(&s, st->b, sizeof s);
        int n = p2_encode_ref(&s, ref, idx, out, err);
        if (n >= 0)
                memcpy(st->b, &s, sizeof s);
        return n;
}

static int p2_finish(struct tm_enc_state *st, uint8_t *out, struct tm_err *err)
{
        (void)err;
        struct p2_enc s;
        memcpy(&s, st->b, sizeof s);
        int n = p2_flush(&s, out);
        memcpy(st->b, &s, sizeof s);
        return n;
}

static const struct arec_fmt p2_fmt = {
    .ntypes = 3,
    .dec_init = p2_dec_init,
    .state_ok = p2_state_ok,
    .decode = p2_decode,
    .enc_init = p2_enc_init,
    .encode = p2_encode,
    .finish = p2_finish,
};

AREC_ROW(pdats2, p2_fmt, ".pdt2", p2_probe, TM_BID_MAGIC);
