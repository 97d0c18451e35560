#include "rrender.h"

#include <stdio.h>
#include <string.h>

static const char hexdig[] = "0123456789abcdef";

size_t tm_rrender_line_max(const struct tm_schema *s, size_t var_max)
{
        /* name, then per field a blank and at most 3 bytes per input byte
         * (%XX) or "0x" + 16 digits or 20 digits + sign. */
        (void)s;
        return TM_NAME_MAX + TM_KIND_FIELDS_MAX * 24 + 3 * var_max + 2;
}

static size_t put_udec(char *p, uint64_t v)
{
        char tmp[20];
        size_t n = 0;
        do {
                tmp[n++] = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        for (size_t i = 0; i < n; i++)
                p[i] = tmp[n - 1 - i];
        return n;
}

static size_t put_num(char *p, const struct tm_field *f, uint64_t v)
{
        if (f->show == TM_SHOW_HEX) {
                unsigned nd = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;
                p[0] = '0';
                p[1] = 'x';
                for (unsigned i = nd; i-- > 0; v >>= 4)
                        p[2 + i] = hexdig[v & 15];
                return 2 + nd;
        }
        if (f->type == TM_FT_INT && (int64_t)v < 0) {
                p[0] = '-';
                return 1 + put_udec(p + 1, 0 - v);
        }
        return put_udec(p, v);
}

static size_t put_bytes(char *p, const uint8_t *b, uint64_t n)
{
        if (n == 0) {
                p[0] = '-';
                return 1;
        }
        size_t o = 0;
        for (uint64_t i = 0; i < n; i++) {
                uint8_t c = b[i];
                if (c > 0x20 && c < 0x7f && c != '%' && !(n == 1 && c == '-')) {
                        p[o++] = (char)c;
                } else {
                        p[o++] = '%';
                        p[o++] = "0123456789ABCDEF"[c >> 4];
                        p[o++] = "0123456789ABCDEF"[c & 15];
                }
        }
        return o;
}

static size_t put_list(char *p, const uint8_t *b, uint64_t n)
{
        if (n == 0) {
                p[0] = '-';
                return 1;
        }
        size_t o = 0;
        for (uint64_t i = 0; i < n; i++) {
                uint64_t v = 0;
                for (unsigned j = 0; j < 8; j++)
                        v |= (uint64_t)b[8 * i + j] << (8 * j);
                if (i)
                        p[o++] = ',';
                o += put_udec(p + o, v);
        }
        return o;
}

/* The token of the field at position pos of r's kind. */
static size_t put_token(char *p, const struct tm_schema *s, const struct tm_rec *r,
                        unsigned pos)
{
        const struct tm_kind *k = &s->kind[r->kind];
        const struct tm_field *f = &s->field[k->field[pos]];
        if (!tm_field_is_var(f))
                return put_num(p, f, r->v[pos]);
        const uint8_t *b = r->var[tm_kind_var_slot(s, k, pos)];
        return f->type == TM_FT_LIST ? put_list(p, b, r->v[pos]) : put_bytes(p, b, r->v[pos]);
}

size_t tm_rrender_line(char *dst, const struct tm_schema *s, const struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[r->kind];
        size_t n = strlen(k->name);
        memcpy(dst, k->name, n);
        for (unsigned i = 0; i < k->nfields; i++) {
                dst[n++] = ' ';
                n += put_token(dst + n, s, r, i);
        }
        dst[n++] = '\n';
        return n;
}

size_t tm_rrender_field(char *dst, const struct tm_schema *s, const struct tm_rec *r,
                        unsigned pos)
{
        size_t n = put_token(dst, s, r, pos);
        dst[n++] = '\n';
        return n;
}

static void put_le(uint8_t *p, uint64_t v, unsigned n)
{
        for (unsigned i = 0; i < n; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

void tm_rrender_binary(uint8_t *dst, const struct tm_schema *s, const struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[r->kind];
        uint32_t present = 0;
        memset(dst, 0, tm_rrender_binary_size(s));
        for (unsigned i = 0; i < k->nfields; i++) {
                unsigned f = k->field[i];
                present |= 1u << f;
                put_le(dst + 8 + 8 * f, r->v[i], 8);
        }
        put_le(dst, r->kind, 4);
        put_le(dst + 4, present, 4);
}

size_t tm_rrender_binary_layout(char *dst, size_t cap, const struct tm_schema *s)
{
        size_t n = 0;
#define OUT(...)                                                                                \
        do {                                                                                    \
                int k_ = snprintf(dst + n, n < cap ? cap - n : 0, __VA_ARGS__);                  \
                if (k_ > 0)                                                                     \
                        n += (size_t)k_;                                                        \
        } while (0)
        OUT("binary: %zu-byte little-endian records, one a record of any kind\n",
            tm_rrender_binary_size(s));
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
