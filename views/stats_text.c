/* The stats view: the statistics rows' text templates filled in, by one
 * rule for every family (stats.h, tm_stats_report; the templates:
 * codecs/record/statrow.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "stats_rows.h"

/* A sink that writes each row's template into dst (cap bytes), counting
 * past cap (snprintf-style). */
struct text_rows {
        struct tm_rows k;
        char *dst;
        size_t cap, n;
};

static void emit(struct text_rows *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(struct text_rows *t, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->dst + (t->n < t->cap ? t->n : t->cap), t->n < t->cap ? t->cap - t->n : 0,
                          fmt, ap);
        va_end(ap);
        if (k > 0)
                t->n += (size_t)k;
}

/* One {spec} of a template: what to write and how. */
struct spec {
        char what; /* 0: the value; 'n', 'N': a name of the key */
        int left, width, prec;
        char conv; /* 0, 'x' or 'c' */
};

/* Parse the spec between p and e (the braces excluded). */
static struct spec spec_of(const char *p, const char *e)
{
        struct spec s = {0, 0, 0, -1, 0};
        if (p < e && (*p == 'n' || *p == 'N'))
                s.what = *p++;
        if (p < e && *p == '-') {
                s.left = 1;
                p++;
        }
        for (; p < e && *p >= '0' && *p <= '9'; p++)
                s.width = s.width * 10 + (*p - '0');
        if (p < e && *p == '.')
                for (s.prec = 0, p++; p < e && *p >= '0' && *p <= '9'; p++)
                        s.prec = s.prec * 10 + (*p - '0');
        if (p < e && (*p == 'x' || *p == 'c'))
                s.conv = *p;
        return s;
}

/* The key's last name (back 0) or the one before it (back 1), or "". */
static const char *key_name(const struct tm_row *r, int back)
{
        unsigned n = 0;
        while (r->key && n < TM_ROW_DEPTH && r->key[n])
                n++;
        return n > (unsigned)back ? r->key[n - 1 - back] : "";
}

static void put_str(struct text_rows *t, const struct spec *s, const char *v)
{
        emit(t, s->left ? "%-*s" : "%*s", s->width, v);
}

static void put_u64(struct text_rows *t, const struct spec *s, uint64_t v, int hex)
{
        if (s->conv == 'c')
                emit(t, s->left ? "%-*c" : "%*c", s->width, (char)v);
        else if (hex || s->conv == 'x')
                emit(t, s->left ? "%-*" PRIx64 : "%*" PRIx64, s->width, v);
        else
                emit(t, s->left ? "%-*" PRIu64 : "%*" PRIu64, s->width, v);
}

static void put_value(struct text_rows *t, const struct spec *s, const struct tm_row *r)
{
        switch (r->type) {
        case TM_ROW_U64:
                put_u64(t, s, r->v.u, 0);
                break;
        case TM_ROW_I64:
                if (s->conv)
                        put_u64(t, s, (uint64_t)r->v.i, 0);
                else
                        emit(t, s->left ? "%-*" PRId64 : "%*" PRId64, s->width, r->v.i);
                break;
        case TM_ROW_REAL:
                emit(t, s->left ? "%-*.*f" : "%*.*f", s->width, s->prec < 0 ? 6 : s->prec, r->v.r);
                break;
        case TM_ROW_ADDR:
                if (s->conv == 'x')
                        put_u64(t, s, r->v.u, 1);
                else
                        emit(t, s->left ? "0x%-*" PRIx64 : "0x%*" PRIx64, s->width, r->v.u);
                break;
        case TM_ROW_STR:
                put_str(t, s, r->v.s);
                break;
        case TM_ROW_BOOL:
                put_str(t, s, r->v.b ? "true" : "false");
                break;
        default:
                put_str(t, s, "not known");
        }
}

static void text_put(struct tm_rows *k, const struct tm_row *r)
{
        struct text_rows *t = (struct text_rows *)k;
        for (const char *p = r->text; p && *p;) {
                const char *b = strchr(p, '{'), *e = b ? strchr(b, '}') : NULL;
                if (!e) {
                        emit(t, "%s", p);
                        return;
                }
                emit(t, "%.*s", (int)(b - p), p);
                struct spec s = spec_of(b + 1, e);
                if (s.what)
                        put_str(t, &s, key_name(r, s.what == 'N'));
                else
                        put_value(t, &s, r);
                p = e + 1;
        }
}

size_t tm_stats_family_text(const struct tm_family *f, const void *block,
                             const struct tm_schema *s, const struct tm_family_info *in, char *dst,
                             size_t cap)
{
        struct text_rows t = {{text_put}, dst, cap, 0};
        if (cap)
                dst[0] = 0;
        f->rows(block, s, in, &t.k);
        return t.n;
}

size_t tm_stats_report(const struct tm_stats *st, const struct tm_schema *s,
                       const struct tm_family_info *in, char *dst, size_t cap)
{
        const struct tm_family *fam = tm_stats_family(s);
        struct text_rows t = {{text_put}, dst, cap, 0};
        if (cap)
                dst[0] = 0;
        tm_stats_generic_rows(st, s, in, !(fam && tm_family_more(fam)->text_whole), &t.k);
        if (fam)
                fam->rows(st->fam, s, in, &t.k);
        if (in->storage)
                in->storage(in->storage_arg, &t.k);
        return t.n;
}
