/* The record renderers (views/rrender.c) against a reference written here
 * with snprintf, byte for byte: every entry point (one record at a time,
 * the batches through a plan, the lengths) over random records of
 * tm_schema_heap and of a handmade schema with every field type and show
 * (signed and unsigned decimal, hex of both, text, bytes, lists; a kind
 * with no field, one with a 31-byte name, one with 16 fields, one with 4
 * variable fields), numbers drawn from the edges (0, 9, 10, 99, 100, ...,
 * 10^19, UINT64_MAX, INT64_MIN, ...) and at random, bytes of all 256
 * values, empty and "-". The variable bytes live in allocations of their
 * exact size and output buffers end in a guard zone, so that under ASan an
 * overread shows, and a write past what a function may touch fails the
 * test. The batch renderers are also driven the way a view drives them,
 * filling buffers of random sizes with the one-record fallback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codecs/common/tm_cpu.h"
#include "codecs/heap/heap.h"
#include "codecs/java/jtrace.h"
#include "codecs/object/ptf.h"
#include "codecs/record/text.h"
#include "tests/support/tiers.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* ---- the reference ---- */

struct sbuf {
        char *p;
        size_t len, cap;
};

static void sput(struct sbuf *b, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        char tmp[64];
        int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
        va_end(ap);
        assert_true(n >= 0 && (size_t)n < sizeof tmp);
        if (b->len + (size_t)n + 1 > b->cap) {
                b->cap = 2 * (b->len + (size_t)n + 1) + 256;
                b->p = realloc(b->p, b->cap);
                assert_non_null(b->p);
        }
        memcpy(b->p + b->len, tmp, (size_t)n + 1);
        b->len += (size_t)n;
}

static uint64_t ref_le64(const uint8_t *b)
{
        uint64_t v = 0;
        for (unsigned j = 0; j < 8; j++)
                v |= (uint64_t)b[j] << (8 * j);
        return v;
}

/* The token of the field at position pos, as rrender.h describes it: in a
 * line when line (TM_PTF_SHOW_WORDS applies), else in fields/. */
static void ref_token(struct sbuf *b, const struct tm_schema *s, const struct tm_rec *r,
                      unsigned pos, int line)
{
        const struct tm_kind *k = &s->kind[r->kind];
        const struct tm_field *f = &s->field[k->field[pos]];
        uint64_t v = r->v[pos];
        if (!tm_field_is_var(f)) {
                if ((f->show & ~TM_SHOW_HIDDEN) == TM_SHOW_HEX)
                        sput(b, "0x%" PRIx64, v);
                else if ((f->show & ~TM_SHOW_HIDDEN) == TM_SHOW_HEXN)
                        sput(b, "%" PRIx64, v);
                else if (f->type == TM_FT_INT)
                        sput(b, "%" PRId64, (int64_t)v);
                else
                        sput(b, "%" PRIu64, v);
                return;
        }
        unsigned slot = 0;
        for (unsigned i = 0; i < pos; i++)
                slot += tm_field_is_var(&s->field[k->field[i]]);
        const uint8_t *d = r->var[slot];
        int words = line && f->show == TM_PTF_SHOW_WORDS;
        if (words && f->type == TM_FT_LIST) { /* ' ', nothing when empty */
                for (uint64_t i = 0; i < v; i++)
                        sput(b, i ? " %" PRIu64 : "%" PRIu64, ref_le64(d + 8 * i));
        } else if (words && f->type == TM_FT_TEXT) { /* as is, '\n' %0A */
                for (uint64_t i = 0; i < v; i++)
                        sput(b, d[i] == '\n' ? "%%0A" : "%c", d[i]);
        } else if (v == 0) {
                sput(b, "-");
        } else if (f->type == TM_FT_LIST) {
                for (uint64_t i = 0; i < v; i++)
                        sput(b, i ? ",%" PRIu64 : "%" PRIu64, ref_le64(d + 8 * i));
        } else if (v == 1 && d[0] == '-') {
                sput(b, "%%2D");
        } else {
                for (uint64_t i = 0; i < v; i++) {
                        if (d[i] > ' ' && d[i] < 0x7f && d[i] != '%')
                                sput(b, "%c", d[i]);
                        else
                                sput(b, "%%%02X", d[i]);
                }
        }
}

static void ref_line(struct sbuf *b, const struct tm_schema *s, const struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[r->kind];
        sput(b, "%s", k->name);
        for (unsigned i = 0; i < k->nfields; i++) {
                if (s->field[k->field[i]].show & TM_SHOW_HIDDEN)
                        continue;
                if (s->field[k->field[i]].show == TM_PTF_SHOW_WORDS && r->v[i] == 0)
                        continue; /* an empty TM_PTF_SHOW_WORDS field: not even the blank */
                sput(b, " ");
                ref_token(b, s, r, i, 1);
        }
        sput(b, "\n");
}

static void ref_binary(uint8_t *d, const struct tm_schema *s, const struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[r->kind];
        memset(d, 0, 8 + 8 * (size_t)s->nfields);
        uint32_t present = 0;
        for (unsigned i = 0; i < k->nfields; i++) {
                present |= 1u << k->field[i];
                for (unsigned j = 0; j < 8; j++)
                        d[8 + 8 * k->field[i] + j] = (uint8_t)(r->v[i] >> (8 * j));
        }
        for (unsigned j = 0; j < 4; j++) {
                d[j] = (uint8_t)(r->kind >> (8 * j));
                d[4 + j] = (uint8_t)(present >> (8 * j));
        }
}

/* ---- a handmade schema ---- */

enum { F_U, F_I, F_UH, F_IH, F_T, F_B, F_L, F_HN, F_HID, F_TW, F_LW, F_N };

static struct tm_schema mixed;

static void mixed_kind(const char *name, const uint8_t *fields, unsigned n)
{
        struct tm_kind *k = &mixed.kind[mixed.nkinds];
        snprintf(k->name, sizeof k->name, "%s", name);
        k->tag = mixed.nkinds++;
        k->nfields = (uint8_t)n;
        if (n)
                memcpy(k->field, fields, n);
}

static void mixed_init(void)
{
        static const struct {
                const char *name;
                uint8_t type, show;
        } f[F_N] = {
            {"u", TM_FT_UINT, TM_SHOW_DEC},
            {"i", TM_FT_INT, TM_SHOW_DEC},
            {"uh", TM_FT_UINT, TM_SHOW_HEX},
            {"ih", TM_FT_INT, TM_SHOW_HEX},
            {"t", TM_FT_TEXT, TM_SHOW_DEC},
            {"b", TM_FT_BYTES, TM_SHOW_DEC},
            {"l", TM_FT_LIST, TM_SHOW_DEC},
            {"hn", TM_FT_UINT, TM_SHOW_HEXN},
            {"hid", TM_FT_UINT, TM_SHOW_DEC | TM_SHOW_HIDDEN},
            {"tw", TM_FT_TEXT, TM_PTF_SHOW_WORDS},
            {"lw", TM_FT_LIST, TM_PTF_SHOW_WORDS},
        };
        /* the words show is the PTF module's row: the object that defines
         * PTF's schema brings it into the program */
        const struct tm_schema *volatile ptf = &tm_schema_ptf;
        assert_ptr_equal(tm_show_row(ptf->field[TM_PF_NAME].show)->put_var,
                         tm_show_row(TM_PTF_SHOW_WORDS)->put_var);
        memset(&mixed, 0, sizeof mixed);
        snprintf(mixed.name, sizeof mixed.name, "mixed");
        mixed.nfields = F_N;
        for (unsigned i = 0; i < F_N; i++) {
                snprintf(mixed.field[i].name, sizeof mixed.field[i].name, "%s", f[i].name);
                mixed.field[i].type = f[i].type;
                mixed.field[i].show = f[i].show;
        }
        mixed_kind("all", (const uint8_t[]){F_U, F_I, F_UH, F_IH, F_T, F_B, F_L}, 7);
        mixed_kind("none", NULL, 0);
        mixed_kind("a_kind_name_of_31_bytes_exactly", (const uint8_t[]){F_I}, 1);
        mixed_kind("var4", (const uint8_t[]){F_T, F_U, F_L, F_B, F_IH, F_T}, 6);
        mixed_kind("sixteen",
                   (const uint8_t[]){F_U, F_I, F_UH, F_IH, F_U, F_I, F_UH, F_IH, F_U, F_I, F_UH,
                                     F_IH, F_U, F_I, F_UH, F_L},
                   16);
        mixed_kind("b", (const uint8_t[]){F_B}, 1);
        mixed_kind("reversed", (const uint8_t[]){F_L, F_B, F_T, F_IH, F_UH, F_I, F_U}, 7);
        mixed_kind("addr", (const uint8_t[]){F_HID, F_HN}, 2);
        mixed_kind("hexn", (const uint8_t[]){F_HN, F_HID, F_U, F_HN, F_IH}, 5);
        mixed_kind("hidden", (const uint8_t[]){F_HID}, 1);
        mixed_kind("words", (const uint8_t[]){F_U, F_LW, F_I, F_TW, F_L}, 5);
        assert_int_equal(strlen(mixed.kind[2].name), 31);
}

/* ---- random records ---- */

/* A number from the edges or at random. */
static uint64_t edge_value(void)
{
        static const uint64_t special[] = {
            0,
            1,
            9,
            UINT64_MAX,
            UINT64_MAX - 1,
            (uint64_t)INT64_MIN,
            (uint64_t)INT64_MAX,
            (uint64_t)INT64_MIN + 1,
            0xffffffffull,
            0x100000000ull,
            0xfffffffffull,
            15,
            16,
            255,
            256,
            4095,
            4096,
            99999999,
            100000000,
            9999999999999999ull,
            10000000000000000ull,
        };
        uint64_t x = rnd() % 8;
        if (x == 0)
                return special[rnd() % (sizeof special / sizeof *special)];
        if (x <= 2) { /* 10^k + {-1, 0, 1}, and negated */
                uint64_t p = 1;
                for (uint64_t k = rnd() % 20; k; k--)
                        p *= 10;
                p += rnd() % 3 - 1;
                return rnd() % 4 ? p : 0 - p;
        }
        if (x == 3)
                return rnd() % 16;
        return rnd() >> (rnd() % 64); /* any digit count */
}

/* A number the vector line renderer takes, or one just past its range
 * (decimals below 10^15, hex below 2^52). */
static uint64_t vector_value(void)
{
        static const uint64_t border[] = {
            999999999999999ull,
            1000000000000000ull,
            (1ull << 52) - 1,
            1ull << 52,
            (1ull << 52) + 1,
            1ull << 63,
            UINT64_MAX,
            0,
            9,
            10,
            99999999,
            100000000,
            0xfffffffffffull,
            0x1000000000000ull,
        };
        if (rnd() % 16 == 0)
                return border[rnd() % (sizeof border / sizeof *border)];
        if (rnd() % 16 == 0) /* the AVX2 path's 10^8 split (a double's rounding), to 2^52 + 1 */
                return (rnd() % 45035997) * 100000000 + rnd() % 3 - 1;
        uint64_t p = 10;
        for (uint64_t k = rnd() % 15; k; k--)
                p *= 10;
        return rnd() % p;
}

/* Bytes for a variable field, in their own allocation of exactly len
 * bytes (NULL when empty, now and then). */
static uint8_t *var_bytes(size_t len)
{
        uint8_t *b = malloc(len ? len : 1);
        assert_non_null(b);
        unsigned style = (unsigned)(rnd() % 4);
        for (size_t i = 0; i < len; i++)
                b[i] = style == 0   ? (uint8_t)rnd()                 /* any byte */
                       : style == 1 ? (uint8_t)(0x20 + rnd() % 0x60) /* around the printable */
                       : style == 2 ? (uint8_t) "-%% \x7f\x21\x7e"[rnd() % 7] /* the borders */
                                    : (uint8_t)('a' + rnd() % 26);
        return b;
}

struct recset {
        const struct tm_schema *s;
        struct tm_rec *r;
        size_t n;
        uint8_t **owned;
        size_t nowned;
};

static void recset_add_var(struct recset *t, uint8_t *b)
{
        t->owned = realloc(t->owned, (t->nowned + 1) * sizeof *t->owned);
        assert_non_null(t->owned);
        t->owned[t->nowned++] = b;
}

/* A random record of kind kind; near: numbers and empty variable fields
 * as real traces mostly have them (vector_value). */
static void random_rec(struct recset *t, struct tm_rec *r, unsigned kind, int near)
{
        const struct tm_kind *k = &t->s->kind[kind];
        memset(r, 0, sizeof *r);
        r->kind = kind;
        unsigned slot = 0;
        for (unsigned i = 0; i < k->nfields; i++) {
                const struct tm_field *f = &t->s->field[k->field[i]];
                if (!tm_field_is_var(f)) {
                        r->v[i] = near ? vector_value() : edge_value();
                        continue;
                }
                uint64_t x = near && rnd() % 8 ? 0 : rnd() % 10;
                size_t len = x < 3 ? 0 : x < 5 ? 1 : x < 9 ? rnd() % 12 : rnd() % 300;
                uint8_t *b;
                if (f->type == TM_FT_LIST) {
                        len = len % 6;
                        b = malloc(len ? 8 * len : 1);
                        assert_non_null(b);
                        for (size_t j = 0; j < len; j++) {
                                uint64_t e = edge_value();
                                for (unsigned z = 0; z < 8; z++)
                                        b[8 * j + z] = (uint8_t)(e >> (8 * z));
                        }
                } else {
                        b = var_bytes(len);
                        if (len == 1 && rnd() % 2)
                                b[0] = '-';
                }
                recset_add_var(t, b);
                r->v[i] = len;
                r->var[slot++] = len == 0 && rnd() % 2 ? NULL : b;
        }
}

static void recset_make(struct recset *t, const struct tm_schema *s, size_t n)
{
        memset(t, 0, sizeof *t);
        t->s = s;
        t->n = n;
        t->r = calloc(n, sizeof *t->r);
        assert_non_null(t->r);
        for (size_t i = 0; i < n; i++)
                random_rec(t, &t->r[i], (unsigned)(rnd() % s->nkinds), (i / 1000) % 2);
}

static void recset_free(struct recset *t)
{
        for (size_t i = 0; i < t->nowned; i++)
                free(t->owned[i]);
        free(t->owned);
        free(t->r);
}

/* ---- output buffers with a guard zone ---- */

#define GUARD 64

/* A buffer of room bytes (then GUARD bytes of 0xa5 behind it). */
static char *guarded(size_t room)
{
        char *b = malloc(room + GUARD);
        assert_non_null(b);
        memset(b, 0xa5, room + GUARD);
        return b;
}

static void guard_intact(const char *b, size_t room)
{
        for (size_t i = 0; i < GUARD; i++)
                if ((unsigned char)b[room + i] != 0xa5)
                        fail_msg("byte %zu past the room was written", i);
}

/* ---- the checks ---- */

static void check_one_record_fns(const struct recset *t, const struct tm_text_plan *p)
{
        const struct tm_schema *s = t->s;
        size_t room = tm_text_line_max(s, 300 * 8);
        size_t bsize = tm_text_binary_size(s);
        char *line = guarded(room);
        uint8_t *bin = (uint8_t *)guarded(bsize);
        uint8_t *want_bin = malloc(bsize);
        struct sbuf want = {0};
        uint64_t tok[TM_KIND_FIELDS_MAX];
        for (size_t i = 0; i < t->n; i++) {
                const struct tm_rec *r = &t->r[i];
                const struct tm_kind *k = &s->kind[r->kind];
                want.len = 0;
                ref_line(&want, s, r);
                size_t n = tm_text_line(line, s, r);
                if (n != want.len || memcmp(line, want.p, n) != 0)
                        fail_msg("record %zu: tm_text_line gave\n%.*s  want\n%s", i, (int)n, line,
                                 want.p);
                guard_intact(line, room);
                if (tm_text_line_len(p, r) != want.len)
                        fail_msg("record %zu: tm_text_line_len %zu for\n%s", i,
                                 tm_text_line_len(p, r), want.p);
                size_t total = tm_text_lens(p, r, tok);
                assert_int_equal(total, want.len);
                size_t sum = p->kind[r->kind].head_len;
                for (unsigned j = 0; j < k->nfields; j++) {
                        want.len = 0;
                        ref_token(&want, s, r, j, 0);
                        sput(&want, "\n");
                        n = tm_text_field(line, s, r, j);
                        if (n != want.len || memcmp(line, want.p, n) != 0)
                                fail_msg("record %zu field %u: tm_text_field gave %.*s want %s", i,
                                         j, (int)n, line, want.p);
                        guard_intact(line, room);
                        assert_int_equal(tm_text_field_len(p, r, j), want.len);
                        assert_int_equal(tok[j], want.len);
                        assert_int_equal(p->kind[r->kind].pos[k->field[j]],
                                         tm_kind_pos(k, k->field[j]));
                        unsigned show = s->field[k->field[j]].show;
                        if (show & TM_SHOW_HIDDEN) /* fields/ only */
                                continue;
                        if (show != TM_PTF_SHOW_WORDS) {
                                sum += tok[j];
                                continue;
                        }
                        want.len = 0; /* its line token differs: with the blank, if any */
                        ref_token(&want, s, r, j, 1);
                        sum += want.len + (r->v[j] != 0);
                }
                assert_int_equal(sum, total);
                ref_binary(want_bin, s, r);
                tm_text_binary(bin, s, r);
                assert_memory_equal(bin, want_bin, bsize);
                guard_intact((char *)bin, bsize);
        }
        free(want.p);
        free(line);
        free(bin);
        free(want_bin);
}

/* Which batch renderer, and the reference of one record for it (what
 * tm_text_line or tm_text_field would write; nothing for a record
 * the view skips). */
enum which { W_LINES, W_KIND, W_FIELD };

static size_t one_record(char *dst, const struct recset *t, const struct tm_text_plan *p,
                         const struct tm_rec *r, enum which w, unsigned sel)
{
        if (w == W_LINES || (w == W_KIND && r->kind == sel))
                return tm_text_line(dst, t->s, r);
        if (w == W_FIELD && p->kind[r->kind].pos[sel] >= 0)
                return tm_text_field(dst, t->s, r, (unsigned)p->kind[r->kind].pos[sel]);
        return 0;
}

static void ref_view(struct sbuf *b, const struct recset *t, enum which w, unsigned sel)
{
        for (size_t i = 0; i < t->n; i++) {
                const struct tm_rec *r = &t->r[i];
                const struct tm_kind *k = &t->s->kind[r->kind];
                if (w == W_LINES || (w == W_KIND && r->kind == sel)) {
                        ref_line(b, t->s, r);
                } else if (w == W_FIELD) {
                        int pos = tm_kind_pos(k, sel);
                        if (pos >= 0) {
                                ref_token(b, t->s, r, (unsigned)pos, 0);
                                sput(b, "\n");
                        }
                }
        }
}

static size_t batch(char *dst, size_t cap, const struct tm_text_plan *p, const struct tm_rec *r,
                    size_t n, enum which w, unsigned sel, size_t *k)
{
        if (w == W_LINES)
                return tm_text_lines(dst, cap, p, r, n, k);
        if (w == W_KIND)
                return tm_text_kind_lines(dst, cap, p, r, n, sel, k);
        return tm_text_fields(dst, cap, p, r, n, sel, k);
}

/* Read a view whole in reads of random sizes, as rtrace's pread does with
 * a batch renderer: batches straight into the reader's buffer, the record
 * that might not fit into a line buffer, and its rest on the next read. */
static void check_batches(const struct recset *t, const struct tm_text_plan *p, enum which w,
                          unsigned sel)
{
        struct sbuf want = {0};
        sput(&want, "");
        ref_view(&want, t, w, sel);
        size_t room = tm_text_line_max(t->s, 300 * 8);
        char *line = guarded(room);
        char *got = malloc(want.len + 1);
        size_t got_len = 0, line_len = 0, line_pos = 0, next = 0;
        int max_read = (int)(rnd() % 3 == 0 ? 64 : rnd() % 2 ? 4096 : 65536);
        for (;;) {
                size_t cap = 1 + (size_t)(rnd() % (unsigned)max_read);
                char *dst = guarded(cap);
                size_t done = 0;
                while (done < cap) {
                        if (line_pos < line_len) {
                                size_t c = line_len - line_pos;
                                c = c < cap - done ? c : cap - done;
                                memcpy(dst + done, line + line_pos, c);
                                line_pos += c;
                                done += c;
                                continue;
                        }
                        if (next == t->n)
                                break;
                        size_t n = 1 + (size_t)(rnd() % 600), k;
                        if (n > t->n - next)
                                n = t->n - next;
                        done += batch(dst + done, cap - done, p, &t->r[next], n, w, sel, &k);
                        assert_true(k <= n);
                        next += k;
                        if (k < n && done < cap) { /* the record that might not fit */
                                line_len = one_record(line, t, p, &t->r[next++], w, sel);
                                line_pos = 0;
                                guard_intact(line, room);
                        }
                }
                guard_intact(dst, cap);
                assert_true(got_len + done <= want.len);
                memcpy(got + got_len, dst, done);
                got_len += done;
                free(dst);
                if (done == 0 && next == t->n && line_pos == line_len)
                        break;
        }
        assert_int_equal(got_len, want.len);
        for (size_t i = 0; i < got_len; i++)
                if (got[i] != want.p[i])
                        fail_msg("view %d/%u differs at byte %zu: got\n%.80s\nwant\n%.80s", w, sel,
                                 i, got + (i > 20 ? i - 20 : 0), want.p + (i > 20 ? i - 20 : 0));
        free(got);
        free(want.p);
        free(line);
}

/* With room to spare, a batch renders every record in one call. */
static void check_batch_whole(const struct recset *t, const struct tm_text_plan *p)
{
        struct sbuf want = {0};
        sput(&want, "");
        ref_view(&want, t, W_LINES, 0);
        size_t cap = TM_TEXT_SLACK; /* every line at its longest */
        for (size_t i = 0; i < t->n; i++) {
                const struct tm_kind *k = &t->s->kind[t->r[i].kind];
                size_t var = 0;
                for (unsigned j = 0; j < k->nfields; j++)
                        if (tm_field_is_var(&t->s->field[k->field[j]]))
                                var += 8 * t->r[i].v[j];
                cap += tm_text_line_max(t->s, var);
        }
        char *dst = guarded(cap);
        size_t k;
        size_t n = tm_text_lines(dst, cap, p, t->r, t->n, &k);
        assert_int_equal(k, t->n);
        assert_int_equal(n, want.len);
        assert_memory_equal(dst, want.p, n);
        guard_intact(dst, cap);
        free(dst);
        free(want.p);

        size_t bsize = tm_text_binary_size(t->s);
        uint8_t *bin = (uint8_t *)guarded(bsize * t->n);
        uint8_t *one = malloc(bsize);
        tm_text_binaries(bin, p, t->r, t->n);
        for (size_t i = 0; i < t->n; i++) {
                ref_binary(one, t->s, &t->r[i]);
                assert_memory_equal(bin + i * bsize, one, bsize);
        }
        guard_intact((char *)bin, bsize * t->n);
        free(bin);
        free(one);
}

static void check_all_impl(const struct tm_schema *s, size_t n)
{
        struct tm_text_plan p;
        assert_int_equal(tm_text_plan_init(&p, s), 0);
        assert_int_equal(p.nkinds, s->nkinds);
        assert_int_equal(p.nfields, s->nfields);
        struct recset t;
        recset_make(&t, s, n);
        check_one_record_fns(&t, &p);
        check_batch_whole(&t, &p);
        check_batches(&t, &p, W_LINES, 0);
        for (unsigned k = 0; k < s->nkinds; k++)
                check_batches(&t, &p, W_KIND, k);
        for (unsigned f = 0; f < s->nfields; f++)
                check_batches(&t, &p, W_FIELD, f);
        recset_free(&t);
}

/* Every batch implementation: the portable one, the one chosen for this
 * CPU, and the AVX2 tier where the CPU has AVX-512 too (TM_NO_AVX512). */
static void check_all(const struct tm_schema *s, size_t n)
{
        tm_text_force_scalar(1);
        check_all_impl(s, n);
        tm_text_force_scalar(0);
        check_all_impl(s, n);
        setenv("TM_NO_AVX512", "1", 1);
        tm_text_force_scalar(0);
        check_all_impl(s, n);
        unsetenv("TM_NO_AVX512");
        tm_text_force_scalar(0);
}

static void test_heap_random(void **state)
{
        (void)state;
        check_all(&tm_schema_heap, 5000);
}

static void test_mixed_random(void **state)
{
        (void)state;
        mixed_init();
        check_all(&mixed, 5000);
}

/* The AVX2 tier (arch/x86/text_avx2_impl.h) is the one chosen on a CPU
 * with AVX2 when the AVX-512 bits are hidden (or absent), and renders
 * Java's schema (text fields beside 12-digit times) as the scalar path
 * does; check_all compares it on the others. */
static void test_avx2_tier(void **state)
{
        (void)state;
        tm_test_tiers(tm_text_force_scalar, tm_text_lines_impl, "tm_text_lines");
        check_all(&tm_schema_java, 5000);
}

/* Every 10^k - 1, 10^k, 10^k + 1 and the extremes, in every number show,
 * and one bytes value holding all 256 byte values. */
static void test_edges(void **state)
{
        (void)state;
        mixed_init();
        struct tm_text_plan p;
        assert_int_equal(tm_text_plan_init(&p, &mixed), 0);
        uint64_t vals[80];
        unsigned nv = 0;
        uint64_t pw = 1;
        for (unsigned k = 0; k < 20; k++, pw *= 10) {
                vals[nv++] = pw - 1;
                vals[nv++] = pw;
                vals[nv++] = pw + 1;
        }
        vals[nv++] = UINT64_MAX;
        vals[nv++] = (uint64_t)INT64_MIN;
        vals[nv++] = (uint64_t)INT64_MAX;
        vals[nv++] = (uint64_t)-1 - 9;
        uint8_t all[256], dash = '-', pct = '%';
        for (unsigned i = 0; i < 256; i++)
                all[i] = (uint8_t)i;
        uint8_t list[8 * 80];
        for (unsigned i = 0; i < nv; i++)
                for (unsigned j = 0; j < 8; j++)
                        list[8 * i + j] = (uint8_t)(vals[i] >> (8 * j));
        struct tm_rec r[3 * 80];
        size_t n = 0;
        const uint8_t *bytes[] = {all, &dash, &pct, NULL};
        const uint64_t blen[] = {256, 1, 1, 0};
        for (unsigned i = 0; i < nv; i++) {
                memset(&r[n], 0, sizeof r[n]);
                r[n].kind = 0; /* all: u i uh ih t b l */
                for (unsigned j = 0; j < 4; j++)
                        r[n].v[j] = vals[(i + j) % nv];
                r[n].v[4] = blen[i % 4];
                r[n].var[0] = bytes[i % 4];
                r[n].v[5] = blen[(i + 1) % 4];
                r[n].var[1] = bytes[(i + 1) % 4];
                r[n].v[6] = nv - i;
                r[n].var[2] = list + 8 * i;
                n++;
        }
        struct recset t = {.s = &mixed, .r = r, .n = n};
        check_one_record_fns(&t, &p);
        check_batch_whole(&t, &p);
        check_batches(&t, &p, W_LINES, 0);
        for (unsigned f = 0; f < mixed.nfields; f++)
                check_batches(&t, &p, W_FIELD, f);

        /* A few by name. */
        char line[4096];
        memset(&r[0], 0, sizeof r[0]);
        r[0].v[0] = UINT64_MAX;
        r[0].v[1] = (uint64_t)INT64_MIN;
        r[0].v[2] = 0;
        r[0].v[3] = (uint64_t)-1;
        r[0].v[4] = 1;
        r[0].var[0] = &dash;
        r[0].v[5] = 0;
        r[0].v[6] = 2;
        r[0].var[2] = list + 8 * 0; /* 0, 1 */
        size_t len = tm_text_line(line, &mixed, &r[0]);
        const char *want =
            "all 18446744073709551615 -9223372036854775808 0x0 0xffffffffffffffff %2D - 0,1\n";
        assert_int_equal(len, strlen(want));
        assert_memory_equal(line, want, len);
}

/* Records of a kind the plan does not have stop a batch before them. */
static void test_bad_kind(void **state)
{
        (void)state;
        struct tm_text_plan p;
        assert_int_equal(tm_text_plan_init(&p, &tm_schema_heap), 0);
        struct tm_rec r[3];
        memset(r, 0, sizeof r);
        r[0].kind = TM_HK_CREATE_THREAD;
        r[0].v[0] = 7;
        r[0].v[1] = 8;
        r[1].kind = TM_HK_N;
        r[2].kind = TM_HK_CREATE_THREAD;
        char out[256];
        size_t k;
        size_t n = tm_text_lines(out, sizeof out, &p, r, 3, &k);
        assert_int_equal(k, 1);
        assert_int_equal(n, strlen("createThread 7 8 -\n"));
        assert_memory_equal(out, "createThread 7 8 -\n", n);
        assert_int_equal(tm_text_kind_lines(out, sizeof out, &p, r + 1, 2, 8, &k), 0);
        assert_int_equal(k, 0);
        assert_int_equal(tm_text_fields(out, sizeof out, &p, r + 1, 2, TM_HF_THREAD, &k), 0);
        assert_int_equal(k, 0);
        /* No room at all: nothing written, nothing taken. */
        assert_int_equal(tm_text_lines(out, 0, &p, r, 3, &k), 0);
        assert_int_equal(k, 0);
}

/* Schemas a plan refuses. */
static void test_plan_errors(void **state)
{
        (void)state;
        mixed_init();
        struct tm_schema s = mixed;
        struct tm_text_plan p;
        /* a fifth variable field */
        struct tm_kind *k = &s.kind[s.nkinds++];
        memset(k, 0, sizeof *k);
        snprintf(k->name, sizeof k->name, "var5");
        k->nfields = 5;
        memcpy(k->field, (const uint8_t[]){F_T, F_B, F_L, F_T, F_B}, 5);
        assert_int_equal(tm_text_plan_init(&p, &s), -EINVAL);
        k->nfields = 4;
        assert_int_equal(tm_text_plan_init(&p, &s), 0);
        /* a name without its NUL */
        memset(k->name, 'x', sizeof k->name);
        assert_int_equal(tm_text_plan_init(&p, &s), -EINVAL);
        snprintf(k->name, sizeof k->name, "ok");
        /* a field index out of range */
        k->field[0] = F_N;
        assert_int_equal(tm_text_plan_init(&p, &s), -EINVAL);
}

/* tm_text_nums against tm_text_line, record by record: records of
 * every kind of at most 8 fields, numbers at the edges and at the borders
 * of the vector path's range, variable fields empty; into buffers of
 * random room (a guard zone behind), both implementations. */
static void check_nums(const struct tm_schema *s)
{
        struct tm_text_plan p;
        assert_int_equal(tm_text_plan_init(&p, s), 0);
        enum { N = 3000 };
        static struct tm_text_num v[N];
        static uint32_t kind[N];
        struct sbuf ref = {.p = malloc(N * 256)}; /* a line is at most 32 + 8 * 21 */
        assert_non_null(ref.p);
        size_t n = 0;
        while (n < N) {
                unsigned k = (unsigned)(rnd() % s->nkinds);
                if (s->kind[k].nfields > 8)
                        continue;
                struct tm_rec r = {.kind = k};
                for (unsigned i = 0; i < s->kind[k].nfields; i++) {
                        const struct tm_field *f = &s->field[s->kind[k].field[i]];
                        r.v[i] = tm_field_is_var(f) ? 0 : rnd() % 2 ? edge_value() : vector_value();
                }
                memcpy(v[n].v, r.v, sizeof v[n].v);
                kind[n++] = k;
                ref.len += tm_text_line(ref.p + ref.len, s, &r);
        }
        size_t i = 0, at = 0;
        while (i < N) {
                size_t room = rnd() % 3 ? 1 + rnd() % 4000 : rnd() % 300, k;
                char *b = guarded(room);
                size_t w = tm_text_nums(b, room, &p, kind + i, v + i, N - i, &k);
                guard_intact(b, room);
                assert_true(w <= room && at + w <= ref.len);
                assert_memory_equal(b, ref.p + at, w);
                size_t lines = 0;
                for (size_t j = 0; j < w; j++)
                        lines += b[j] == '\n';
                assert_int_equal(lines, k);
                if (room >= 1024) /* a whole line always fits in that */
                        assert_true(k > 0);
                free(b);
                i += k;
                at += w;
        }
        assert_int_equal(at, ref.len);
        free(ref.p);
}

static void test_nums(void **state)
{
        (void)state;
        mixed_init();
        for (int scalar = 1; scalar >= 0; scalar--) {
                tm_text_force_scalar(scalar);
                check_nums(&tm_schema_heap);
                check_nums(&mixed);
        }
}

/* tm_text_batch_lens of b (schema s, plan p; its records are r) against
 * tm_text_lens record by record: the lines' lengths and the fields'
 * sums. line has room for b->n. */
static void check_lens_of(const struct tm_schema *s, const struct tm_text_plan *p,
                          const struct tm_rbatch *b, const struct tm_rec *r, uint32_t *line)
{
        uint64_t fsum[TM_SCHEMA_FIELDS_MAX] = {0}, want[TM_SCHEMA_FIELDS_MAX] = {0};
        tm_text_batch_lens(p, b, line, fsum);
        for (size_t i = 0; i < b->n; i++) {
                uint64_t tok[TM_SCHEMA_FIELDS_MAX];
                const struct tm_kind *k = &s->kind[r[i].kind];
                size_t len = tm_text_lens(p, &r[i], tok);
                assert_int_equal(line[i] + p->kind[r[i].kind].head_len, len);
                for (unsigned j = 0; j < k->nfields; j++)
                        want[k->field[j]] += tok[j];
        }
        assert_memory_equal(fsum, want, sizeof want);
}

/* tm_text_batch_lens (the index pass's line lengths, hex lengths with
 * AVX-512 where the CPU has it) against tm_text_lens record by record,
 * both ways: schemas of numbers in every show, kinds with the same fields
 * (the column path) and with others (the record path). */
static void check_batch_lens(const struct tm_schema *s)
{
        struct tm_text_plan p;
        assert_int_equal(tm_text_plan_init(&p, s), 0);
        enum { N = 1000 };
        struct tm_rbatch b;
        assert_int_equal(tm_rbatch_init(&b, s->nfields, N), 0);
        static struct tm_rec r[N];
        static uint32_t line[N];
        b.n = N;
        for (size_t i = 0; i < N; i++) {
                unsigned k = (unsigned)(edge_value() % s->nkinds);
                r[i].kind = b.kind[i] = k;
                for (unsigned f = 0; f < s->nfields; f++)
                        b.col[f][i] = 0;
                for (unsigned j = 0; j < s->kind[k].nfields; j++)
                        r[i].v[j] = b.col[s->kind[k].field[j]][i] = edge_value();
        }
        for (int scalar = 1; scalar >= 0; scalar--) {
                tm_text_force_scalar(scalar);
                check_lens_of(s, &p, &b, r, line);
        }
        tm_text_force_scalar(0);
        tm_rbatch_free(&b);
}

static void test_batch_lens(void **state)
{
        (void)state;
        static const uint8_t show[] = {TM_SHOW_DEC, TM_SHOW_HEX, TM_SHOW_HEXN,
                                       TM_SHOW_HEXN | TM_SHOW_HIDDEN};
        struct tm_schema s;
        for (int same = 1; same >= 0; same--) {
                memset(&s, 0, sizeof s);
                snprintf(s.name, sizeof s.name, "nums");
                s.nfields = 4;
                for (unsigned f = 0; f < 4; f++) {
                        snprintf(s.field[f].name, sizeof s.field[f].name, "f%u", f);
                        s.field[f].type = TM_FT_UINT;
                        s.field[f].show = show[f];
                }
                s.nkinds = 3;
                for (unsigned k = 0; k < 3; k++) {
                        snprintf(s.kind[k].name, sizeof s.kind[k].name, "k%u", k);
                        s.kind[k].tag = k;
                        s.kind[k].nfields = same ? 4 : (uint8_t)(k + 2);
                        for (unsigned j = 0; j < s.kind[k].nfields; j++)
                                s.kind[k].field[j] = (uint8_t)(same ? j : (j + k) % 4);
                }
                check_batch_lens(&s);
        }
}

/* tm_text_batch_lens of a batch with variable values (record.h's arena:
 * the heap schema's attributes and comments, bytes that need escapes and
 * empty ones) against tm_text_lens of the same records, whose var[]
 * point at the test's own copies of the bytes. */
static void test_batch_lens_var(void **state)
{
        (void)state;
        const struct tm_schema *s = &tm_schema_heap;
        struct tm_text_plan p;
        assert_int_equal(tm_text_plan_init(&p, s), 0);
        enum { N = 600, VMAX = 24 };
        struct tm_rbatch b;
        assert_int_equal(tm_rbatch_init(&b, s->nfields, N), 0);
        assert_int_equal(tm_rbatch_arena(&b, N * VMAX), 0);
        static struct tm_rec r[N];
        static uint8_t bytes[N][VMAX];
        static uint32_t line[N];
        for (size_t i = 0; i < N; i++) {
                unsigned k = (unsigned)(rnd() % s->nkinds);
                const struct tm_kind *kd = &s->kind[k];
                r[i].kind = b.kind[i] = k;
                for (unsigned f = 0; f < s->nfields; f++)
                        b.col[f][i] = 0;
                for (unsigned j = 0; j < kd->nfields; j++) {
                        if (!tm_field_is_var(&s->field[kd->field[j]])) {
                                r[i].v[j] = b.col[kd->field[j]][i] = edge_value();
                                continue;
                        }
                        size_t n = rnd() % 4 == 0 ? 0 : rnd() % VMAX;
                        for (size_t q = 0; q < n; q++)
                                bytes[i][q] = (uint8_t)(rnd() % 3 ? 'a' + rnd() % 26 : rnd());
                        r[i].v[j] = b.col[kd->field[j]][i] = n;
                        r[i].var[0] = bytes[i];
                        tm_rbatch_put_var(&b, i, 0, bytes[i], n);
                }
        }
        b.n = N;
        check_lens_of(s, &p, &b, r, line);
        for (size_t i = 0; i < N; i++) {
                const struct tm_kind *k = &s->kind[r[i].kind];
                struct tm_rec x; /* the batch's record as a tm_rec: the same bytes */
                tm_rbatch_rec(&b, s, i, &x);
                assert_int_equal(x.kind, r[i].kind);
                assert_memory_equal(x.v, r[i].v, k->nfields * sizeof x.v[0]);
                size_t vn = r[i].kind == TM_HK_COMMENT ? r[i].v[0] : r[i].v[k->nfields - 1];
                if (vn)
                        assert_memory_equal(x.var[0], r[i].var[0], vn);
        }
        tm_rbatch_free(&b);
        assert_int_equal(tm_rbatch_init(&b, 1, 4), 0);
        assert_int_equal(tm_rbatch_arena(&b, (size_t)UINT32_MAX + 1), -EINVAL);
        tm_rbatch_free(&b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_heap_random), cmocka_unit_test(test_mixed_random),
            cmocka_unit_test(test_edges),       cmocka_unit_test(test_bad_kind),
            cmocka_unit_test(test_plan_errors), cmocka_unit_test(test_nums),
            cmocka_unit_test(test_batch_lens),  cmocka_unit_test(test_batch_lens_var),
            cmocka_unit_test(test_avx2_tier),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
