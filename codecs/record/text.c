/* text: the text and binary forms of records (the format: text.h).
 *
 * `cat ascii` of a heap trace must keep up with zstdcat of the same text,
 * 40 to 100 ns a record (by machine) for decoding, rendering and copying, so
 * rendering cannot afford a division per digit or a look at the schema per
 * field. Numbers are made a word at a time: a decimal number of up to 8
 * digits is 8 bytes of digits made with a few multiplications (SWAR), its
 * leading zeros dropped by a shift found with ctz; hex the same way with 8
 * nibbles a word. Each is stored as a whole word, whence the slack that
 * text.h documents. The batch renderers use a plan (per kind: the name
 * with its separator as one block, per position an opcode and a var slot),
 * so a record costs one pass over its kind's positions. Lengths have their
 * own functions (digit counts from clz and a table), so that skipping
 * writes nothing. On x86-64 with AVX-512 (IFMA, VBMI2) the batch line
 * renderers make a whole line of up to 8 fields in two registers instead
 * (put_line_v, arch/x86/text_impl.h), about twice as fast again; with AVX2
 * alone (x86-64-v3) they convert a line's numbers in two registers and
 * place them field by field (put_line_x, arch/x86/text_avx2_impl.h), the
 * rest of the line as here. bench/text_bench measures all of it. */
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../common/tm_cpu.h"
#include "../common/tm_hex.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#define RR_BIG_ENDIAN 1
#endif

/* Widest number token: 20 decimal digits (UINT64_MAX), or '-' and 19
 * (INT64_MIN), or "0x" and 16 hex digits. */
#define NUM_MAX 20

/* ---- words ---- */

/* Store the 8 bytes of w, its low byte first (the digit words below hold
 * their first character in the low byte). */
static inline void put8(char *p, uint64_t w)
{
#ifdef RR_BIG_ENDIAN
        w = __builtin_bswap64(w);
#endif
        memcpy(p, &w, 8);
}

static inline uint64_t le64(const uint8_t *b)
{
        uint64_t v;
        memcpy(&v, b, 8);
#ifdef RR_BIG_ENDIAN
        v = __builtin_bswap64(v);
#endif
        return v;
}

/* ---- decimal ---- */

/* The 8 decimal digits of v < 10^8, leading zeros included, as byte
 * values 0..9, the most significant in the low byte. Splits v into two
 * 4-digit halves (32-bit lanes), each into two 2-digit quarters (16-bit
 * lanes), each into two digits (bytes); the divisions by 100 and 10 are
 * multiplications by 10486 / 2^20 and 103 / 2^10, exact for these
 * ranges, and no lane overflows into the next. */
static inline uint64_t dec8(uint32_t v)
{
        uint64_t x = v / 10000 | (uint64_t)(v % 10000) << 32;
        uint64_t q = ((x * 10486) >> 20) & 0x0000007f0000007full;
        x = q | (x - 100 * q) << 16;
        q = ((x * 103) >> 10) & 0x000f000f000f000full;
        return q | (x - 10 * q) << 8;
}

#define ASCII_ZEROS 0x3030303030303030ull

/* v < 10^8 without leading zeros ("0" for 0); 8 bytes are stored. */
static inline char *put_dec8(char *p, uint32_t v)
{
        uint64_t d = dec8(v);
        /* Leading zero digits are the zero low bytes; 7 when v is 0, so
         * that its last digit stays. */
        unsigned z = (unsigned)__builtin_ctzll(d | 1ull << 56) >> 3;
        put8(p, (d + ASCII_ZEROS) >> (8 * z));
        return p + 8 - z;
}

static inline char *put_udec(char *p, uint64_t v)
{
        if (v < 100000000)
                return put_dec8(p, (uint32_t)v);
        if (v < 10000000000000000ull) {
                p = put_dec8(p, (uint32_t)(v / 100000000));
                put8(p, dec8((uint32_t)(v % 100000000)) + ASCII_ZEROS);
                return p + 8;
        }
        uint64_t low = v % 10000000000000000ull;
        p = put_dec8(p, (uint32_t)(v / 10000000000000000ull));
        put8(p, dec8((uint32_t)(low / 100000000)) + ASCII_ZEROS);
        put8(p + 8, dec8((uint32_t)(low % 100000000)) + ASCII_ZEROS);
        return p + 16;
}

static const uint64_t pow10_u64[20] = {
    1ull,
    10ull,
    100ull,
    1000ull,
    10000ull,
    100000ull,
    1000000ull,
    10000000ull,
    100000000ull,
    1000000000ull,
    10000000000ull,
    100000000000ull,
    1000000000000ull,
    10000000000000ull,
    100000000000000ull,
    1000000000000000ull,
    10000000000000000ull,
    100000000000000000ull,
    1000000000000000000ull,
    10000000000000000000ull,
};

/* Decimal digits of v: with t = floor(bits * log10(2)) (1233 / 4096 is
 * close enough for 64 bits), v has t digits, or t + 1 from 10^t on (0 is
 * counted as 1, which has one digit too). */
static inline size_t udec_len(uint64_t v)
{
        unsigned t = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;
        return t + ((v | 1) >= pow10_u64[t]);
}

/* ---- hex ---- */

static inline char *put_hex(char *p, uint64_t v)
{
        p[0] = '0';
        p[1] = 'x';
        return p + 2 + tm_hex_put(p + 2, v);
}

static inline size_t hex_len(uint64_t v)
{
        return 2 + tm_hex_digits(v);
}

/* ---- text, bytes, lists ---- */

static const char HEXUP[] = "0123456789ABCDEF";

/* Does byte c stand for itself in a token? */
static inline int plain(uint8_t c)
{
        return (uint8_t)(c - 0x21) < 0x5e && c != '%';
}

/* Are all 8 bytes of x plain? None below 0x21, none above 0x7e, no '%'
 * (the "has a byte less than / more than / equal to" tests of bit
 * twiddling: each exact as a whole-word answer). Attributes are mostly
 * plain (mtrace's callers, ~45 bytes a line): a word at a time, their
 * tokens took a third less time (bench/text_bench). */
static inline uint64_t unplain_any(uint64_t x)
{
        const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
        uint64_t less = (x - ones * 0x21) & ~x & highs;
        uint64_t more = ((x + ones * (127 - 0x7e)) | x) & highs;
        uint64_t y = x ^ (ones * '%');
        uint64_t pct = (y - ones) & ~y & highs;
        return less | more | pct;
}

static inline int plain8(uint64_t x)
{
        return !unplain_any(x);
}

/* Are all n bytes at b plain? Four words a step, one test a step. */
static int all_plain(const uint8_t *b, size_t n)
{
        uint64_t bad = 0;
        size_t i = 0;
        for (; i + 32 <= n && !bad; i += 32)
                bad = unplain_any(le64(b + i)) | unplain_any(le64(b + i + 8)) |
                      unplain_any(le64(b + i + 16)) | unplain_any(le64(b + i + 24));
        for (; i + 8 <= n && !bad; i += 8)
                bad = unplain_any(le64(b + i));
        for (; i < n && !bad; i++)
                bad = !plain(b[i]);
        return !bad;
}

/* How many of b's n bytes, from the start, are in whole plain words. */
static inline uint64_t plain_words(const uint8_t *b, uint64_t n)
{
        uint64_t i = 0, x;
        for (; i + 8 <= n; i += 8) {
                memcpy(&x, b + i, 8);
                if (!plain8(x))
                        break;
        }
        return i;
}

/* b's n (4 or more) bytes copied to p whole words at a time, the last
 * word the one that ends at b + n (4 bytes twice below 8), when all are
 * plain: 1. Else 0, p's n bytes undefined. Names of 10-40 bytes (Java's)
 * took a word test, a call to memcpy and a byte loop for their tail. */
static inline int put_plain(char *p, const uint8_t *b, uint64_t n)
{
        uint64_t bad = 0, x;
        if (n < 8) {
                uint32_t lo, hi;
                memcpy(&lo, b, 4);
                memcpy(&hi, b + n - 4, 4);
                memcpy(p, &lo, 4);
                memcpy(p + n - 4, &hi, 4);
                return !unplain_any(lo | (uint64_t)hi << 32);
        }
        for (uint64_t i = 0; i + 8 <= n; i += 8) {
                memcpy(&x, b + i, 8);
                bad |= unplain_any(x);
                memcpy(p + i, &x, 8);
        }
        memcpy(&x, b + n - 8, 8);
        bad |= unplain_any(x);
        memcpy(p + n - 8, &x, 8);
        return !bad;
}

static char *put_bytes(char *p, const uint8_t *b, uint64_t n)
{
        if (n == 0) {
                *p = '-';
                return p + 1;
        }
        if (n == 1 && b[0] == '-') { /* a lone "-" would read as empty */
                memcpy(p, "%2D", 3);
                return p + 3;
        }
        if (n >= 4 && put_plain(p, b, n))
                return p + n;
        uint64_t i = plain_words(b, n);
        memcpy(p, b, i);
        p += i;
        for (; i < n; i++) {
                uint8_t c = b[i];
                if (plain(c)) {
                        *p++ = (char)c;
                } else {
                        p[0] = '%';
                        p[1] = HEXUP[c >> 4];
                        p[2] = HEXUP[c & 15];
                        p += 3;
                }
        }
        return p;
}

/* Bit 7 of each byte of x that is not plain, exactly per byte (plain8's
 * tests may mark a byte beside a hit; these add to bytes of 7 bits,
 * which never carry into the next). */
static inline uint64_t unplain8(uint64_t x)
{
        const uint64_t ones = 0x0101010101010101ull, highs = ones * 0x80, lows = ones * 0x7f;
        uint64_t y = x & lows;
        uint64_t less = ~(y + ones * (0x80 - 0x21)) & highs; /* below 0x21 */
        uint64_t del = ~((y ^ lows) + lows) & highs;         /* 0x7f */
        uint64_t pct = ~((y ^ ones * '%') + lows) & highs;   /* '%' */
        return (x & highs) | less | del | pct;
}

/* How many bytes unplain8's answer m marks. */
static inline unsigned unplain_count(uint64_t m)
{
        return (unsigned)(((m >> 7) * 0x0101010101010101ull) >> 56);
}

static inline uint32_t le32(const uint8_t *b)
{
        uint32_t v;
        memcpy(&v, b, 4);
#ifdef RR_BIG_ENDIAN
        v = __builtin_bswap32(v);
#endif
        return v;
}

/* The token's length: n bytes, 2 more for each one shown as %XX; a word
 * at a time, the last word the one that ends at b + n (its bytes already
 * counted shifted out), so that no byte past the value is read. */
static size_t bytes_len(const uint8_t *b, uint64_t n)
{
        if (n == 0)
                return 1;
        if (n == 1 && b[0] == '-')
                return 3;
        uint64_t bad = 0;
        if (n >= 8) {
                uint64_t i = 0;
                for (; i + 8 <= n; i += 8)
                        bad += unplain_count(unplain8(le64(b + i)));
                if (i < n)
                        bad += unplain_count(unplain8(le64(b + n - 8)) >> 8 * (8 - (n - i)));
        } else if (n >= 4) { /* bytes 0..3, and the last 4 shifted past those */
                uint64_t m = unplain8(le32(b) | (uint64_t)le32(b + n - 4) << 32);
                bad = unplain_count((uint32_t)m) + unplain_count(m >> 32 >> 8 * (8 - n));
        } else {
                for (uint64_t i = 0; i < n; i++)
                        bad += !plain(b[i]);
        }
        return (size_t)(n + 2 * bad);
}

/* bytes_len of n bytes at b known to be plain. */
static inline uint32_t plain_bytes_len(const uint8_t *b, uint64_t n)
{
        return n > 1 ? (uint32_t)n : n ? 1 + 2 * (b[0] == '-') : 1;
}

static char *put_list(char *p, const uint8_t *b, uint64_t n)
{
        if (n == 0) {
                *p = '-';
                return p + 1;
        }
        p = put_udec(p, le64(b));
        for (uint64_t i = 1; i < n; i++) {
                *p++ = ',';
                p = put_udec(p, le64(b + 8 * i));
        }
        return p;
}

static size_t list_len(const uint8_t *b, uint64_t n)
{
        if (n == 0)
                return 1;
        size_t len = (size_t)n - 1;
        for (uint64_t i = 0; i < n; i++)
                len += udec_len(le64(b + 8 * i));
        return len;
}

/* ---- shows of a family's own (text.h, TM_SHOW_ROW) ---- */

/* The section's bounds, from the linker; weak: a program without a show
 * row has no section and both are NULL. A plan names a row by its place
 * in the section, fixed for the program's life. */
extern const struct tm_show_row *const __start_tm_show_rows[] __attribute__((weak));
extern const struct tm_show_row *const __stop_tm_show_rows[] __attribute__((weak));

/* The place of the row of code, or -1. */
static int show_place(unsigned code)
{
        if (code < TM_SHOW_OWN_MIN || code >= TM_SHOW_HIDDEN)
                return -1;
        for (const struct tm_show_row *const *r = __start_tm_show_rows; r < __stop_tm_show_rows;
             r++)
                if ((*r)->code == code)
                        return (int)(r - __start_tm_show_rows);
        return -1;
}

const struct tm_show_row *tm_show_row(unsigned code)
{
        int at = show_place(code);
        return at < 0 ? NULL : __start_tm_show_rows[at];
}

int tm_show_rows_check(const char **bad)
{
        for (const struct tm_show_row *const *r = __start_tm_show_rows; r < __stop_tm_show_rows;
             r++) {
                if ((*r)->code < TM_SHOW_OWN_MIN || (*r)->code >= TM_SHOW_HIDDEN ||
                    (!(*r)->put && !(*r)->put_var) || tm_show_row((*r)->code) != *r) {
                        *bad = (*r)->name;
                        return -EINVAL;
                }
        }
        return 0;
}

/* The row at place at (an op TM_TOP_OWN* of a plan names one that exists). */
static inline const struct tm_show_row *show_at(unsigned at)
{
        return __start_tm_show_rows[at];
}

/* ---- tokens ---- */

/* The op of field f shown as show (tm_field.show, or a form's), in
 * lines (fields/ when field_view: a hidden field shows there). */
static inline enum tm_text_op op_show(const struct tm_field *f, unsigned show, unsigned digits,
                                      int field_view)
{
        const struct tm_show_row *row = tm_show_row(show & ~TM_SHOW_HIDDEN);
        int own_var = !field_view && row && row->put_var && (row->var_types >> f->type & 1);
        if (f->type == TM_FT_TEXT || f->type == TM_FT_BYTES)
                return own_var ? TM_TOP_OWNT : TM_TOP_BYTES;
        if (f->type == TM_FT_LIST)
                return own_var ? TM_TOP_OWNL : TM_TOP_LIST;
        if ((show & TM_SHOW_HIDDEN) && !field_view)
                return TM_TOP_SKIP;
        show &= ~TM_SHOW_HIDDEN;
        if (show == TM_SHOW_HEX)
                return TM_TOP_HEX;
        if (show == TM_SHOW_HEXN)
                return digits ? TM_TOP_HEXW : TM_TOP_HEXN;
        if (row && row->put)
                return TM_TOP_OWN;
        return f->type == TM_FT_INT ? TM_TOP_SDEC : TM_TOP_UDEC;
}

static inline enum tm_text_op op_of(const struct tm_field *f)
{
        return op_show(f, f->show, 0, 1);
}

/* What put_tok and tok_len take as width for op of a field shown show
 * without a form's digits: the show row's place for a row's op. */
static inline unsigned own_width(enum tm_text_op op, unsigned show)
{
        return op >= TM_TOP_OWN ? (unsigned)show_place(show & ~TM_SHOW_HIDDEN) : 0;
}

/* Exactly w (1..16) lowercase hex digits: the low ones of v. */
static inline char *put_hexw(char *p, uint64_t v, unsigned w)
{
        for (unsigned i = w; i-- > 0; v >>= 4)
                p[i] = "0123456789abcdef"[v & 15];
        return p + w;
}

/* The token of value v (var: the variable field's bytes) shown as op. */
static inline char *put_tok(char *p, unsigned op, uint64_t v, const uint8_t *const *var,
                            unsigned width)
{
        switch (op) {
        case TM_TOP_HEXN:
                return p + tm_hex_put(p, v);
        case TM_TOP_HEXW:
                return put_hexw(p, v, width);
        case TM_TOP_SKIP:
                return p;
        case TM_TOP_UDEC:
                return put_udec(p, v);
        case TM_TOP_SDEC:
                if ((int64_t)v < 0) {
                        *p++ = '-';
                        v = 0 - v;
                }
                return put_udec(p, v);
        case TM_TOP_HEX:
                return put_hex(p, v);
        case TM_TOP_BYTES:
                return put_bytes(p, *var, v);
        case TM_TOP_OWN:
                return p + show_at(width)->put(p, v);
        case TM_TOP_OWNT:
        case TM_TOP_OWNL:
                return v ? p + show_at(width)->put_var(p, op == TM_TOP_OWNL, *var, v) : p;
        default:
                return put_list(p, *var, v);
        }
}

static inline size_t tok_len(unsigned op, uint64_t v, const uint8_t *const *var, unsigned width)
{
        switch (op) {
        case TM_TOP_HEXN:
                return hex_len(v) - 2;
        case TM_TOP_HEXW:
                return width;
        case TM_TOP_SKIP:
                return 0;
        case TM_TOP_UDEC:
                return udec_len(v);
        case TM_TOP_SDEC:
                return (int64_t)v < 0 ? 1 + udec_len(0 - v) : udec_len(v);
        case TM_TOP_HEX:
                return hex_len(v);
        case TM_TOP_BYTES:
                return bytes_len(*var, v);
        case TM_TOP_OWN:
                return show_at(width)->put(NULL, v);
        case TM_TOP_OWNT:
        case TM_TOP_OWNL:
                return v ? show_at(width)->put_var(NULL, op == TM_TOP_OWNL, *var, v) : 0;
        default:
                return list_len(*var, v);
        }
}

/* ---- one record, from the schema ---- */

size_t tm_text_line_max(const struct tm_schema *s, size_t var_max)
{
        /* name, then per field a blank and at most 3 bytes per input byte
         * (%XX; a list's 8-byte numbers take at most 21) or "0x" + 16
         * digits or 20 digits + sign; what is left is more than the 7
         * bytes a number's last word may reach past the line. */
        (void)s;
        return TM_NAME_MAX + TM_KIND_FIELDS_MAX * 24 + 3 * var_max + 2;
}

size_t tm_text_line(char *dst, const struct tm_schema *s, const struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[r->kind];
        const char *head = k->label[0] ? k->label : k->name;
        size_t n = strnlen(head, k->label[0] ? TM_LABEL_MAX : TM_NAME_MAX);
        char *p = dst + n;
        memcpy(dst, head, n);
        unsigned slot = 0; /* var[] slot of the next variable field */
        for (unsigned i = 0; i < k->nfields; i++) {
                const struct tm_field *f = &s->field[k->field[i]];
                enum tm_text_op op = op_show(f, f->show, 0, 0);
                if (tm_text_shown(op, r->v[i])) {
                        *p++ = ' ';
                        p = put_tok(p, op, r->v[i], &r->var[slot], own_width(op, f->show));
                }
                slot += tm_text_op_var(op);
        }
        *p++ = '\n';
        return (size_t)(p - dst);
}

size_t tm_text_field(char *dst, const struct tm_schema *s, const struct tm_rec *r, unsigned pos)
{
        const struct tm_kind *k = &s->kind[r->kind];
        const struct tm_field *f = &s->field[k->field[pos]];
        const uint8_t *const *var =
            tm_field_is_var(f) ? &r->var[tm_kind_var_slot(s, k, pos)] : NULL;
        enum tm_text_op op = op_of(f);
        char *p = put_tok(dst, op, r->v[pos], var, own_width(op, f->show));
        *p++ = '\n';
        return (size_t)(p - dst);
}

/* kind (little-endian u32), then present (u32), in one word. */
static inline uint64_t binary_head(uint32_t kind, uint32_t present)
{
        return kind | (uint64_t)present << 32;
}

void tm_text_binary(uint8_t *dst, const struct tm_schema *s, const struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[r->kind];
        uint32_t present = 0;
        memset(dst + 8, 0, 8 * (size_t)s->nfields);
        for (unsigned i = 0; i < k->nfields; i++) {
                unsigned f = k->field[i];
                present |= 1u << f;
                put8((char *)dst + 8 + 8 * f, r->v[i]);
        }
        put8((char *)dst, binary_head(r->kind, present));
}

/* ---- the plan ---- */

/* The AVX-512 path's tables for kind pk (struct tm_text_vkind). Chunk
 * i (bytes 16i..16i+15 of the two registers) holds field i: byte 0 the
 * blank before it, bytes 1..15 a decimal of up to 15 digits, or bytes 1-2
 * "0x" and 3..15 up to 13 hex digits, or for an empty variable field '-'
 * in byte 15. */
static void vplan_kind(struct tm_text_vkind *vk, const struct tm_text_kind *pk)
{
        memset(vk, 0, sizeof *vk);
        vk->ok = pk->nfields <= 8;
        vk->nlanes = pk->nfields;
        for (unsigned i = 0; i < pk->nfields && i < 8; i++) {
                unsigned reg = i / 4, at = 16 * (i % 4);
                uint64_t chunk = 0xffffull << at;
                vk->img[16 * i] = ' ';
                vk->kconst[reg] |= 1ull << at;
                vk->kprefix[reg] |= 1ull << at;
                vk->kvalid[reg] |= chunk;
                switch (pk->op[i]) {
                case TM_TOP_UDEC:
                case TM_TOP_SDEC: /* negative ones are too big: scalar */
                        vk->lim[i] = 1000000000000000ull;
                        vk->kdig[reg] |= chunk & ~(1ull << at);
                        vk->kdec |= (uint8_t)(1u << i);
                        break;
                case TM_TOP_HEX:
                        vk->lim[i] = 1ull << 52;
                        vk->xhex |= (uint8_t)(1u << i);
                        vk->img[16 * i + 1] = '0';
                        vk->img[16 * i + 2] = 'x';
                        vk->kconst[reg] |= 6ull << at;
                        vk->kprefix[reg] |= 6ull << at;
                        vk->khex[reg] |= chunk;
                        vk->kdig[reg] |= chunk & ~(7ull << at);
                        break;
                default: /* a variable field: only when empty, "-" */
                        vk->lim[i] = 1;
                        vk->img[16 * i + 15] = '-';
                        vk->kconst[reg] |= 1ull << (at + 15);
                        break;
                }
        }
}

/* The short layout of kind pk (see struct tm_text_vkind), after
 * vplan_kind. */
static void vplan_short(struct tm_text_vkind *vk, const struct tm_text_kind *pk)
{
        unsigned a = pk->head_len - 1u; /* the name, without its blank */
        for (unsigned i = 0; i < a; i++)
                vk->simg[i] = (uint8_t)pk->head[i];
        vk->sconst = vk->sprefix = vk->svalid = a ? ~0ull >> (64 - a) : 0;
        for (unsigned i = 0; i < pk->nfields && vk->ok; i++) {
                unsigned op = pk->op[i];
                unsigned w = op == TM_TOP_UDEC || op == TM_TOP_SDEC ? 9 : op == TM_TOP_HEX ? 16 : 2;
                if (a + w >= 64) /* and the '\n' */
                        return;
                vk->simg[a] = ' ';
                vk->sconst |= 1ull << a;
                vk->sprefix |= 1ull << a;
                vk->sstart |= 1ull << a;
                vk->svalid |= ((1ull << w) - 1) << a;
                vk->slast |= 1ull << (a + w - 1);
                if (w == 9) { /* ' ', the 8 digits of lane i */
                        for (unsigned j = 0; j < 8; j++)
                                vk->sidx[a + 1 + j] = (uint8_t)(8 * i + j);
                        vk->sdig |= 0xffull << (a + 1);
                } else if (w == 16) { /* ' ' "0x", 5 digits of the high half, 8 */
                        vk->khexl |= (uint8_t)(1u << i);
                        vk->simg[a + 1] = '0';
                        vk->simg[a + 2] = 'x';
                        vk->sconst |= 6ull << a;
                        vk->sprefix |= 6ull << a;
                        for (unsigned j = 0; j < 5; j++)
                                vk->sidx[a + 3 + j] = (uint8_t)(64 + 8 * i + 3 + j);
                        for (unsigned j = 0; j < 8; j++)
                                vk->sidx[a + 8 + j] = (uint8_t)(8 * i + j);
                        vk->sdig |= 0x1fffull << (a + 3);
                } else { /* an empty variable field */
                        vk->simg[a + 1] = '-';
                        vk->sconst |= 2ull << a;
                        vk->sprefix |= 2ull << a;
                }
                a += w;
        }
        vk->simg[a] = '\n';
        vk->sconst |= 1ull << a;
        vk->sprefix |= 1ull << a;
        vk->svalid |= 1ull << a;
        vk->sok = vk->ok;
}

static inline char *put_line(char *p, const struct tm_text_kind *k, const struct tm_rec *r);

int tm_text_plan_form(struct tm_text_plan *p, const struct tm_schema *s, const struct tm_form *form)
{
        memset(p, 0, sizeof *p);
        if (s->nkinds > TM_SCHEMA_KINDS_MAX || s->nfields > TM_SCHEMA_FIELDS_MAX)
                return -EINVAL;
        p->nkinds = s->nkinds;
        p->nfields = s->nfields;
        for (unsigned k = 0; k < s->nkinds; k++) {
                const struct tm_kind *sk = &s->kind[k];
                struct tm_text_kind *pk = &p->kind[k];
                const char *label = form && form->label[k][0] ? form->label[k] : sk->label;
                const char *head = label[0] ? label : sk->name;
                size_t len = strnlen(head, label[0] ? TM_LABEL_MAX : TM_NAME_MAX);
                if (len == (label[0] ? TM_LABEL_MAX : TM_NAME_MAX) ||
                    sk->nfields > TM_KIND_FIELDS_MAX)
                        return -EINVAL;
                memcpy(pk->head, head, len);
                pk->head[len] = ' '; /* becomes '\n' when no field follows */
                pk->head_len = (uint8_t)(len + 1);
                pk->nfields = sk->nfields;
                memset(pk->pos, -1, sizeof pk->pos);
                uint32_t max = pk->head_len;
                unsigned slot = 0;
                int plain = 1; /* only the ops the vector path knows */
                for (unsigned i = 0; i < sk->nfields; i++) {
                        unsigned f = sk->field[i];
                        if (f >= s->nfields)
                                return -EINVAL;
                        const struct tm_field *sf = &s->field[f];
                        unsigned show = form ? form->show[f] : sf->show;
                        unsigned digits = form ? form->digits[f] : 0;
                        if (digits > 16)
                                return -EINVAL;
                        enum tm_text_op op = op_show(sf, show, digits, 0);
                        pk->op[i] = (uint8_t)op;
                        pk->fop[i] = (uint8_t)op_show(sf, show, digits, 1);
                        /* HEXW's digits, or the place of a show row (op and
                         * fop are of one row when either is) */
                        pk->width[i] = (uint8_t)(op >= TM_TOP_OWN || pk->fop[i] >= TM_TOP_OWN
                                                     ? own_width(TM_TOP_OWN, show)
                                                     : digits);
                        pk->field[i] = (uint8_t)f;
                        if (pk->pos[f] < 0) /* the first, as tm_kind_pos */
                                pk->pos[f] = (int8_t)i;
                        pk->present |= 1u << f;
                        plain &= op <= TM_TOP_LIST;
                        if (op == TM_TOP_BYTES || op == TM_TOP_OWNT)
                                pk->var3 |= (uint16_t)(1u << i);
                        else if (op == TM_TOP_LIST || op == TM_TOP_OWNL)
                                pk->var21 |= (uint16_t)(1u << i);
                        if (tm_text_op_var(op)) {
                                if (slot == TM_REC_VAR_MAX)
                                        return -EINVAL;
                                pk->slot[i] = (uint8_t)slot++;
                                max += 2; /* the blank and "-" */
                        } else {
                                max += 1 + NUM_MAX;
                        }
                }
                pk->fixed_max = max;
                vplan_kind(&p->vkind[k], pk);
                vplan_short(&p->vkind[k], pk);
                if (!plain) /* hex without 0x, fixed widths, hidden fields: scalar */
                        p->vkind[k].ok = p->vkind[k].sok = 0;
        }
        p->vall = 1;
        for (unsigned k = 0; k < s->nkinds; k++)
                p->vall &= p->vkind[k].ok;
        p->same = s->nkinds > 0;
        for (unsigned k = 1; k < s->nkinds && p->same; k++) {
                const struct tm_text_kind *a = &p->kind[0], *b = &p->kind[k];
                p->same = a->nfields == b->nfields && memcmp(a->op, b->op, a->nfields) == 0 &&
                          memcmp(a->fop, b->fop, a->nfields) == 0 &&
                          memcmp(a->width, b->width, a->nfields) == 0 &&
                          memcmp(a->field, b->field, a->nfields) == 0;
        }
        return 0;
}

int tm_text_plan_init(struct tm_text_plan *p, const struct tm_schema *s)
{
        return tm_text_plan_form(p, s, NULL);
}

size_t tm_text_pline(char *dst, const struct tm_text_plan *p, const struct tm_rec *r)
{
        return (size_t)(put_line(dst, &p->kind[r->kind], r) - dst);
}

/* ---- batches ---- */

/* Field i of r (kind k) and its blank at o, unless the field is not
 * shown; returns the end. */
static inline char *put_field(char *o, const struct tm_text_kind *k, const struct tm_rec *r,
                              unsigned i)
{
        if (!tm_text_shown(k->op[i], r->v[i]))
                return o;
        o = put_tok(o, k->op[i], r->v[i], &r->var[k->slot[i]], k->width[i]);
        *o++ = ' ';
        return o;
}

/* The line of r (kind k) at p; returns its end. Writes up to
 * TM_TEXT_SLACK bytes past the start or 7 past the end. */
static inline char *put_line(char *p, const struct tm_text_kind *k, const struct tm_rec *r)
{
        memcpy(p, k->head, TM_NAME_MAX);
        p += k->head_len;
        for (unsigned i = 0; i < k->nfields; i++)
                p = put_field(p, k, r, i);
        p[-1] = '\n'; /* over the last blank: the name's when there is no field */
        return p;
}

/* The longest the line of r (kind k) can be: each variable byte at most 3
 * characters, each list number at most 21 with its comma. */
static inline size_t line_bound(const struct tm_text_kind *k, const struct tm_rec *r)
{
        size_t max = k->fixed_max;
        for (unsigned m = k->var3; m; m &= m - 1) /* only the variable fields */
                max += 3 * r->v[__builtin_ctz(m)];
        for (unsigned m = k->var21; m; m &= m - 1)
                max += (NUM_MAX + 1) * r->v[__builtin_ctz(m)];
        return max;
}

/* The numbers v (kind k, number kind) as a record into *r: 1 when its
 * line's worst case fits between o and end, else 0. */
static inline int num_rec(struct tm_rec *r, const char *o, const char *end,
                          const struct tm_text_kind *k, uint32_t kind, const struct tm_text_num *v)
{
        *r = (struct tm_rec){.kind = kind};
        memcpy(r->v, v->v, sizeof v->v);
        return line_bound(k, r) + TM_TEXT_SLACK <= (size_t)(end - o);
}

/* The line of the numbers v (kind k, number kind) at o when its worst
 * case fits before end; its end, or NULL. */
static inline char *num_line(char *o, const char *end, const struct tm_text_kind *k, uint32_t kind,
                             const struct tm_text_num *v)
{
        struct tm_rec r;
        return num_rec(&r, o, end, k, kind, v) ? put_line(o, k, &r) : NULL;
}

typedef size_t nums_fn(char *dst, size_t cap, const struct tm_text_plan *p, const uint32_t *kind,
                       const struct tm_text_num *v, size_t n, size_t *nrec);

/* tm_text_nums without the vector path. */
static size_t nums_scalar(char *dst, size_t cap, const struct tm_text_plan *p, const uint32_t *kind,
                          const struct tm_text_num *v, size_t n, size_t *nrec)
{
        char *o = dst, *end = dst + cap;
        size_t i = 0;
        for (; i < n; i++) {
                char *e = num_line(o, end, &p->kind[kind[i]], kind[i], &v[i]);
                if (!e)
                        break;
                o = e;
        }
        *nrec = i;
        return (size_t)(o - dst);
}

/* The body of tm_text_lines' implementations over r[0..n) (only of kind
 * kind when kind >= 0) into dst (cap bytes): PUT(o, k, ki, rec) writes
 * the line of record rec, of kind index ki whose plan is k, at o and
 * gives the end. A macro, not a function taking PUT, so that each vector
 * tier's copy is compiled for its target. */
#define TEXT_LINES_BODY(dst, cap, p, r, n, kind, nrec, PUT)                                        \
        do {                                                                                       \
                char *o_ = (dst), *end_ = (dst) + (cap);                                           \
                size_t i_ = 0;                                                                     \
                for (; i_ < (n); i_++) {                                                           \
                        unsigned ki_ = (r)[i_].kind;                                               \
                        if (ki_ >= (p)->nkinds)                                                    \
                                break;                                                             \
                        if ((kind) >= 0 && ki_ != (unsigned long)(kind))                           \
                                continue;                                                          \
                        const struct tm_text_kind *k_ = &(p)->kind[ki_];                           \
                        if (line_bound(k_, &(r)[i_]) + TM_TEXT_SLACK > (size_t)(end_ - o_))        \
                                break;                                                             \
                        o_ = PUT(o_, k_, ki_, &(r)[i_]);                                           \
                }                                                                                  \
                *(nrec) = i_;                                                                      \
                return (size_t)(o_ - (dst));                                                       \
        } while (0)

#define PUT_LINE_SCALAR(o, k, ki, rec) put_line(o, k, rec)

/* The lines of r[0..n) (only of kind kind when kind >= 0), as
 * tm_text_lines describes. */
static size_t lines_scalar(char *dst, size_t cap, const struct tm_text_plan *p,
                           const struct tm_rec *r, size_t n, long kind, size_t *nrec)
{
        TEXT_LINES_BODY(dst, cap, p, r, n, kind, nrec, PUT_LINE_SCALAR);
}

typedef size_t lines_fn(char *dst, size_t cap, const struct tm_text_plan *p, const struct tm_rec *r,
                        size_t n, long kind, size_t *nrec);

/* out[i] = the hex digits of c[i] (at least one) + add, for i < n, when
 * out is not NULL; returns their sum. */
typedef uint64_t hex_lens_fn(const uint64_t *c, size_t n, uint32_t *out, unsigned add);

static uint64_t hex_lens_scalar(const uint64_t *c, size_t n, uint32_t *out, unsigned add)
{
        uint64_t sum = 0;
        if (!out) {
                for (size_t i = 0; i < n; i++)
                        sum += tm_hex_digits(c[i]) + add;
                return sum;
        }
        for (size_t i = 0; i < n; i++)
                sum += out[i] = tm_hex_digits(c[i]) + add;
        return sum;
}

/* What runs here: the line renderers and the hex lengths of the index
 * pass, each portable or vector. */
struct text_impl {
        lines_fn *lines;
        nums_fn *nums;
        hex_lens_fn *hex_lens;
        const char *name; /* tm_text_lines_impl's */
};

/* ---- vector paths: text_arch_choose ---- */

#ifdef TM_CPU_X86
#include "../../arch/x86/text_impl.h"
#endif

/* ---- dispatch ---- */

static const struct text_impl text_scalar = {lines_scalar, nums_scalar, hex_lens_scalar, "scalar"};
static struct tm_cpu_slot text_slot = {.arch = TM_CPU_ARCH(text_arch_choose),
                                       .portable = &text_scalar};

static const struct text_impl *text_get(void)
{
        return tm_cpu_pick(&text_slot);
}

const char *tm_text_lines_impl(void)
{
        return text_get()->name;
}

void tm_text_force_scalar(int on)
{
        tm_cpu_choose(&text_slot, on);
}

size_t tm_text_lines(char *dst, size_t cap, const struct tm_text_plan *p, const struct tm_rec *r,
                     size_t n, size_t *nrec)
{
        return text_get()->lines(dst, cap, p, r, n, -1, nrec);
}

size_t tm_text_kind_lines(char *dst, size_t cap, const struct tm_text_plan *p,
                          const struct tm_rec *r, size_t n, unsigned kind, size_t *nrec)
{
        return text_get()->lines(dst, cap, p, r, n, (long)kind, nrec);
}

size_t tm_text_nums(char *dst, size_t cap, const struct tm_text_plan *p, const uint32_t *kind,
                    const struct tm_text_num *v, size_t n, size_t *nrec)
{
        return text_get()->nums(dst, cap, p, kind, v, n, nrec);
}

size_t tm_text_fields(char *dst, size_t cap, const struct tm_text_plan *p, const struct tm_rec *r,
                      size_t n, unsigned field, size_t *nrec)
{
        char *o = dst, *end = dst + cap;
        size_t i = 0;
        for (; i < n; i++) {
                if (r[i].kind >= p->nkinds)
                        break;
                const struct tm_text_kind *k = &p->kind[r[i].kind];
                int pos = field < TM_SCHEMA_FIELDS_MAX ? k->pos[field] : -1;
                if (pos < 0)
                        continue;
                unsigned op = k->fop[pos];
                uint64_t v = r[i].v[pos];
                size_t max = op == TM_TOP_BYTES  ? 3 * v + 1
                             : op == TM_TOP_LIST ? (NUM_MAX + 1) * v + 1
                                                 : NUM_MAX;
                if (max + 1 + TM_TEXT_SLACK > (size_t)(end - o))
                        break;
                o = put_tok(o, op, v, &r[i].var[k->slot[pos]], k->width[pos]);
                *o++ = '\n';
        }
        *nrec = i;
        return (size_t)(o - dst);
}

void tm_text_binaries(uint8_t *dst, const struct tm_text_plan *p, const struct tm_rec *r, size_t n)
{
        size_t size = 8 + 8 * (size_t)p->nfields;
        for (size_t i = 0; i < n; i++, dst += size) {
                const struct tm_text_kind *k = &p->kind[r[i].kind];
                put8((char *)dst, binary_head(r[i].kind, k->present));
                memset(dst + 8, 0, size - 8);
                for (unsigned j = 0; j < k->nfields; j++)
                        put8((char *)dst + 8 + 8 * k->field[j], r[i].v[j]);
        }
}

/* ---- lengths ---- */

size_t tm_text_line_len(const struct tm_text_plan *p, const struct tm_rec *r)
{
        const struct tm_text_kind *k = &p->kind[r->kind];
        size_t len = k->head_len;
        for (unsigned i = 0; i < k->nfields; i++)
                if (tm_text_shown(k->op[i], r->v[i]))
                        len += tok_len(k->op[i], r->v[i], &r->var[k->slot[i]], k->width[i]) + 1;
        return len;
}

size_t tm_text_field_len(const struct tm_text_plan *p, const struct tm_rec *r, unsigned pos)
{
        const struct tm_text_kind *k = &p->kind[r->kind];
        return tok_len(k->fop[pos], r->v[pos], &r->var[k->slot[pos]], k->width[pos]) + 1;
}

size_t tm_text_lens(const struct tm_text_plan *p, const struct tm_rec *r, uint64_t *tok)
{
        const struct tm_text_kind *k = &p->kind[r->kind];
        size_t len = k->head_len;
        for (unsigned i = 0; i < k->nfields; i++) {
                const uint8_t *const *var = &r->var[k->slot[i]];
                size_t t = tok_len(k->fop[i], r->v[i], var, k->width[i]) + 1;
                tok[i] = t;
                if (k->op[i] == k->fop[i])
                        len += t;
                else if (tm_text_shown(k->op[i], r->v[i]))
                        len += tok_len(k->op[i], r->v[i], var, k->width[i]) + 1;
        }
        return len;
}

/* out[i] = tok_len(op, c[i]) + 1 for n values of one number op;
 * returns their sum. out NULL: the sum alone. */
static uint64_t col_lens(unsigned op, unsigned width, const uint64_t *c, size_t n, uint32_t *out)
{
        uint64_t sum = 0;
        if (op == TM_TOP_HEXN || op == TM_TOP_HEX)
                return text_get()->hex_lens(c, n, out, op == TM_TOP_HEX ? 3 : 1);
        if (!out && op == TM_TOP_UDEC) {
                uint64_t max = 0;
                for (size_t i = 0; i < n; i++)
                        max |= c[i];
                if (max < 8)
                        return 2 * (uint64_t)n;
                for (size_t i = 0; i < n; i++)
                        sum += (uint32_t)udec_len(c[i]) + 1;
                return sum;
        }
        uint32_t tmp[256];
        if (!out) { /* the rest, through a buffer */
                for (size_t at = 0; at < n; at += 256)
                        sum += col_lens(op, width, c + at, n - at < 256 ? n - at : 256, tmp);
                return sum;
        }
        switch (op) {
        case TM_TOP_HEXW:
                for (size_t i = 0; i < n; i++)
                        out[i] = width + 1;
                return (uint64_t)(width + 1) * n;
        case TM_TOP_UDEC: {
                uint64_t max = 0; /* all one digit (types, small sizes): no lookups */
                for (size_t i = 0; i < n; i++)
                        max |= c[i];
                if (max < 8) {
                        for (size_t i = 0; i < n; i++)
                                out[i] = 2;
                        return 2 * (uint64_t)n;
                }
                for (size_t i = 0; i < n; i++)
                        sum += out[i] = (uint32_t)udec_len(c[i]) + 1;
                return sum;
        }
        default:
                for (size_t i = 0; i < n; i++)
                        sum += out[i] = (uint32_t)tok_len(op, c[i], NULL, width) + 1;
                return sum;
        }
}

/* tm_text_batch_lens for a plan whose kinds share their positions:
 * field by field, the first shown field's lengths written straight into
 * line. */
static void batch_lens_same(const struct tm_text_plan *p, const struct tm_rbatch *b, uint32_t *line,
                            uint64_t *fsum)
{
        const struct tm_text_kind *k0 = &p->kind[0];
        uint32_t t[256];
        for (size_t at = 0; at < b->n; at += 256) {
                size_t m = b->n - at < 256 ? b->n - at : 256;
                uint32_t *ln = line + at;
                int first = 1;
                for (unsigned j = 0; j < k0->nfields; j++) {
                        unsigned f = k0->field[j];
                        const uint64_t *c = b->col[f] + at;
                        unsigned op = k0->op[j], fop = k0->fop[j], w = k0->width[j];
                        if (op == TM_TOP_SKIP) { /* in fields/ only */
                                if (fsum)
                                        fsum[f] += col_lens(fop, w, c, m, NULL);
                                continue;
                        }
                        uint32_t *o = first ? ln : t;
                        uint64_t sum = col_lens(fop, w, c, m, o);
                        if (fsum)
                                fsum[f] += sum;
                        if (op != fop)
                                col_lens(op, w, c, m, o);
                        if (!first)
                                for (size_t i = 0; i < m; i++)
                                        ln[i] += t[i];
                        first = 0;
                }
                if (first) /* no field shown: the lines are their labels */
                        memset(ln, 0, m * sizeof *ln);
        }
}

/* How every kind of p that has schema field f shows it (the heap
 * schema: a field's show is the field's, whatever the kind), for
 * batch_lens_kinds. */
struct field_show {
        uint32_t has; /* bit f: some kind has field f */
        uint8_t op[TM_SCHEMA_FIELDS_MAX], fop[TM_SCHEMA_FIELDS_MAX];
        uint8_t width[TM_SCHEMA_FIELDS_MAX], slot[TM_SCHEMA_FIELDS_MAX];
};

/* Fill *fs from p; 0 when a kind has a field twice or two kinds show one
 * differently. */
static int field_show_of(const struct tm_text_plan *p, struct field_show *fs)
{
        fs->has = 0;
        for (unsigned k = 0; k < p->nkinds; k++) {
                const struct tm_text_kind *tk = &p->kind[k];
                for (unsigned j = 0; j < tk->nfields; j++) {
                        unsigned f = tk->field[j];
                        if (tk->pos[f] != (int)j)
                                return 0;
                        if (!(fs->has >> f & 1)) {
                                fs->has |= 1u << f;
                                fs->op[f] = tk->op[j];
                                fs->fop[f] = tk->fop[j];
                                fs->width[f] = tk->width[j];
                                fs->slot[f] = tk->slot[j];
                        } else if (fs->op[f] != tk->op[j] || fs->fop[f] != tk->fop[j] ||
                                   fs->width[f] != tk->width[j] || fs->slot[f] != tk->slot[j]) {
                                return 0;
                        }
                }
        }
        return 1;
}

/* tm_text_batch_lens for a plan whose kinds differ in their fields but
 * show each field alike (field_show_of): field by field over the records,
 * a record's token counted where its kind has the field. */
static void batch_lens_kinds(const struct tm_text_plan *p, const struct field_show *fs,
                             const struct tm_rbatch *b, uint32_t *line, uint64_t *fsum)
{
        uint32_t pm[256], t[256];
        /* text without a byte to escape (Java's names): its tokens' lengths
         * are its lengths, known without reading it */
        int plain = 0;
        for (unsigned f = 0; f < p->nfields && !plain; f++)
                plain = (fs->has >> f & 1) && fs->op[f] == TM_TOP_BYTES;
        plain = plain && b->arena && all_plain(b->arena, b->arena_len);
        for (size_t at = 0; at < b->n; at += 256) {
                size_t m = b->n - at < 256 ? b->n - at : 256;
                uint32_t *ln = line + at;
                for (size_t i = 0; i < m; i++)
                        pm[i] = p->kind[b->kind[at + i]].present;
                memset(ln, 0, m * sizeof *ln);
                for (unsigned f = 0; f < p->nfields; f++) {
                        if (!(fs->has >> f & 1))
                                continue;
                        const uint64_t *c = b->col[f] + at;
                        unsigned op = fs->op[f], fop = fs->fop[f], w = fs->width[f];
                        uint64_t sum = 0;
                        if (plain && op == TM_TOP_BYTES && fop == TM_TOP_BYTES) {
                                const uint32_t *vo = b->var[fs->slot[f]] + at;
                                for (size_t i = 0; i < m; i++) {
                                        uint32_t tl = plain_bytes_len(b->arena + vo[i], c[i]) + 1;
                                        tl = pm[i] >> f & 1 ? tl : 0;
                                        sum += tl;
                                        ln[i] += tl;
                                }
                        } else if (tm_text_op_var(op) || tm_text_op_var(fop)) {
                                for (size_t i = 0; i < m; i++) {
                                        if (!(pm[i] >> f & 1))
                                                continue;
                                        const uint8_t *var = b->arena + b->var[fs->slot[f]][at + i];
                                        uint32_t tl = (uint32_t)tok_len(fop, c[i], &var, w) + 1;
                                        sum += tl;
                                        if (!tm_text_shown(op, c[i])) /* an empty word list */
                                                continue;
                                        ln[i] += op == fop
                                                     ? tl
                                                     : (uint32_t)tok_len(op, c[i], &var, w) + 1;
                                }
                        } else {
                                col_lens(fop, w, c, m, t);
                                for (size_t i = 0; i < m; i++) {
                                        t[i] = pm[i] >> f & 1 ? t[i] : 0;
                                        sum += t[i];
                                }
                                if (op != fop && op != TM_TOP_SKIP) {
                                        col_lens(op, w, c, m, t);
                                        for (size_t i = 0; i < m; i++)
                                                t[i] = pm[i] >> f & 1 ? t[i] : 0;
                                }
                                if (op != TM_TOP_SKIP)
                                        for (size_t i = 0; i < m; i++)
                                                ln[i] += t[i];
                        }
                        if (fsum)
                                fsum[f] += sum;
                }
        }
}

void tm_text_batch_lens(const struct tm_text_plan *p, const struct tm_rbatch *b, uint32_t *line,
                        uint64_t *fsum)
{
        if (p->same && p->kind[0].nfields == p->nfields && !b->arena) {
                batch_lens_same(p, b, line, fsum);
                return;
        }
        struct field_show fs;
        if (field_show_of(p, &fs)) {
                batch_lens_kinds(p, &fs, b, line, fsum);
                return;
        }
        for (size_t i = 0; i < b->n; i++) {
                const struct tm_text_kind *k = &p->kind[b->kind[i]];
                uint32_t len = 0;
                for (unsigned j = 0; j < k->nfields; j++) {
                        unsigned f = k->field[j];
                        uint64_t v = b->col[f][i];
                        const uint8_t *var = NULL; /* as tm_text_lens's var[slot[j]] */
                        if (b->arena)
                                var = b->arena + b->var[k->slot[j]][i];
                        uint32_t t = (uint32_t)tok_len(k->fop[j], v, &var, k->width[j]) + 1;
                        if (fsum)
                                fsum[f] += t;
                        if (!tm_text_shown(k->op[j], v)) /* hidden, an empty word list */
                                continue;
                        if (k->op[j] == k->fop[j])
                                len += t;
                        else
                                len += (uint32_t)tok_len(k->op[j], v, &var, k->width[j]) + 1;
                }
                line[i] = len;
        }
}

/* ---- the binary layout, as text ---- */

size_t tm_text_binary_layout(char *dst, size_t cap, const struct tm_schema *s)
{
        size_t n = 0;
#define OUT(...)                                                                                   \
        do {                                                                                       \
                int k_ = snprintf(dst + n, n < cap ? cap - n : 0, __VA_ARGS__);                    \
                if (k_ > 0)                                                                        \
                        n += (size_t)k_;                                                           \
        } while (0)
        OUT("binary: %zu-byte little-endian records, one a record of any kind\n",
            tm_text_binary_size(s));
        OUT("C:\n    struct tm_%s_rec {\n        uint32_t kind;     /* see kinds below */\n"
            "        uint32_t present;  /* bit i: the kind has field i */\n",
            s->name);
        for (unsigned i = 0; i < s->nfields; i++) {
                const struct tm_field *f = &s->field[i];
                OUT("        %s %s;%s\n", f->type == TM_FT_INT ? "int64_t" : "uint64_t", f->name,
                    tm_field_is_var(f) ? " /* length; bytes in fields/ */" : "");
        }
        OUT("    };\nnumpy:\n    np.dtype([(\"kind\", \"<u4\"), (\"present\", \"<u4\")");
        for (unsigned i = 0; i < s->nfields; i++)
                OUT(", (\"%s\", \"%s\")", s->field[i].name,
                    s->field[i].type == TM_FT_INT ? "<i8" : "<u8");
        OUT("])\nkinds:");
        for (unsigned i = 0; i < s->nkinds; i++)
                OUT(" %u=%s", i, s->kind[i].name);
        OUT("\n");
#undef OUT
        return n;
}
