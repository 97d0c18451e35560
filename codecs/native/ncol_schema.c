/* ncol_schema: the schema chunk of a schema-2 .tmn file (ncol.h;
 * docs/formats/native.md, "The schema chunk"): the trace's struct
 * tm_schema and byte sections, written and parsed field by field. */
#include "ncol.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct wbuf {
        uint8_t *p;
        size_t len, cap;
        int bad;
};

static void w_bytes(struct wbuf *b, const void *p, size_t n)
{
        if (b->bad)
                return;
        if (b->len + n > b->cap) {
                size_t c = (b->len + n) * 2;
                uint8_t *q = realloc(b->p, c);
                if (!q) {
                        b->bad = 1;
                        return;
                }
                b->p = q;
                b->cap = c;
        }
        memcpy(b->p + b->len, p, n);
        b->len += n;
}

static void w_u8(struct wbuf *b, unsigned v)
{
        uint8_t c = (uint8_t)v;
        w_bytes(b, &c, 1);
}

static void w_u32(struct wbuf *b, uint32_t v)
{
        uint8_t c[4];
        tmn_put32(c, v);
        w_bytes(b, c, 4);
}

/* A name: its length (a byte) and its bytes, without the NUL. */
static void w_str(struct wbuf *b, const char *s, size_t max)
{
        size_t n = strnlen(s, max - 1);
        w_u8(b, (unsigned)n);
        w_bytes(b, s, n);
}

int ncol_schema_put(const struct tm_schema *s, const struct tm_blob *bl, unsigned nb,
                    uint8_t **out, size_t *len)
{
        if (nb > NCOL_BLOBS_MAX)
                return -EFBIG;
        struct wbuf b = {0};
        w_bytes(&b, "TMNS\0\0\0\0\0\0\0\0", NCOL_SCH_HDR);
        w_str(&b, s->name, TM_NAME_MAX);
        w_u8(&b, s->nfields);
        for (unsigned i = 0; i < s->nfields; i++) {
                w_str(&b, s->field[i].name, TM_NAME_MAX);
                w_u8(&b, s->field[i].type);
                w_u8(&b, s->field[i].show);
        }
        w_u8(&b, s->nkinds);
        for (unsigned i = 0; i < s->nkinds; i++) {
                const struct tm_kind *k = &s->kind[i];
                w_str(&b, k->name, TM_NAME_MAX);
                w_str(&b, k->label, TM_LABEL_MAX);
                w_u32(&b, k->tag);
                w_u8(&b, k->nfields);
                w_bytes(&b, k->field, k->nfields);
        }
        w_u8(&b, s->nsections);
        for (unsigned i = 0; i < s->nsections; i++) {
                w_str(&b, s->section[i].name, TM_NAME_MAX);
                w_u32(&b, s->section[i].number);
        }
        w_u8(&b, s->nforms);
        for (unsigned i = 0; i < s->nforms; i++) {
                const struct tm_form *f = &s->form[i];
                w_str(&b, f->name, TM_NAME_MAX);
                for (unsigned k = 0; k < s->nkinds; k++)
                        w_str(&b, f->label[k], TM_LABEL_MAX);
                w_bytes(&b, f->show, s->nfields);
                w_bytes(&b, f->digits, s->nfields);
        }
        w_u8(&b, nb);
        for (unsigned i = 0; i < nb; i++) {
                w_str(&b, bl[i].name, TM_NAME_MAX);
                if (bl[i].n > NCOL_SCH_MAX) {
                        free(b.p);
                        return -EFBIG;
                }
                w_u32(&b, (uint32_t)bl[i].n);
                w_bytes(&b, bl[i].p, bl[i].n);
        }
        if (b.bad) {
                free(b.p);
                return -ENOMEM;
        }
        size_t body = b.len - NCOL_SCH_HDR;
        if (body > NCOL_SCH_MAX) {
                free(b.p);
                return -EFBIG;
        }
        tmn_put32(b.p + 4, (uint32_t)body);
        tmn_put32(b.p + 8, (uint32_t)crc32_z(0, b.p + NCOL_SCH_HDR, body));
        *out = b.p;
        *len = b.len;
        return 0;
}

/* ---- parsing ---- */

struct rbuf {
        const uint8_t *p;
        size_t len, pos;
        int bad;
};

static const uint8_t *r_bytes(struct rbuf *b, size_t n)
{
        if (b->bad || b->len - b->pos < n) {
                b->bad = 1;
                return NULL;
        }
        const uint8_t *p = b->p + b->pos;
        b->pos += n;
        return p;
}

static unsigned r_u8(struct rbuf *b)
{
        const uint8_t *p = r_bytes(b, 1);
        return p ? *p : 0;
}

static uint32_t r_u32(struct rbuf *b)
{
        const uint8_t *p = r_bytes(b, 4);
        return p ? tmn_get32(p) : 0;
}

/* A name into dst (max bytes with the NUL): no NUL inside, shorter than max. */
static void r_str(struct rbuf *b, char *dst, size_t max)
{
        unsigned n = r_u8(b);
        const uint8_t *p = n < max ? r_bytes(b, n) : NULL;
        if (!p || memchr(p, 0, n)) {
                b->bad = 1;
                dst[0] = '\0';
                return;
        }
        memcpy(dst, p, n);
        dst[n] = '\0';
}

static int kinds_ok(const struct tm_schema *s)
{
        for (unsigned i = 0; i < s->nkinds; i++) {
                const struct tm_kind *k = &s->kind[i];
                unsigned nvar = 0;
                if (k->nfields > TM_KIND_FIELDS_MAX)
                        return 0;
                for (unsigned j = 0; j < k->nfields; j++) {
                        if (k->field[j] >= s->nfields)
                                return 0;
                        nvar += s->field[k->field[j]].type >= TM_FT_TEXT;
                        for (unsigned q = 0; q < j; q++)
                                if (k->field[q] == k->field[j])
                                        return 0;
                }
                if (nvar > TM_REC_VAR_MAX)
                        return 0;
        }
        return 1;
}

static void parse(struct rbuf *b, struct ncol_file *f)
{
        struct tm_schema *s = &f->schema;
        r_str(b, s->name, TM_NAME_MAX);
        s->nfields = r_u8(b);
        if (s->nfields > TM_SCHEMA_FIELDS_MAX)
                b->bad = 1;
        for (unsigned i = 0; i < s->nfields && !b->bad; i++) {
                r_str(b, s->field[i].name, TM_NAME_MAX);
                s->field[i].type = (uint8_t)r_u8(b);
                s->field[i].show = (uint8_t)r_u8(b);
                if (s->field[i].type > TM_FT_LIST)
                        b->bad = 1;
        }
        s->nkinds = r_u8(b);
        if (s->nkinds == 0 || s->nkinds > TM_SCHEMA_KINDS_MAX)
                b->bad = 1;
        for (unsigned i = 0; i < s->nkinds && !b->bad; i++) {
                struct tm_kind *k = &s->kind[i];
                r_str(b, k->name, TM_NAME_MAX);
                r_str(b, k->label, TM_LABEL_MAX);
                k->tag = r_u32(b);
                k->nfields = (uint8_t)r_u8(b);
                const uint8_t *p = k->nfields <= TM_KIND_FIELDS_MAX ? r_bytes(b, k->nfields) : NULL;
                if (!p)
                        b->bad = 1;
                else
                        memcpy(k->field, p, k->nfields);
        }
        s->nsections = r_u8(b);
        if (s->nsections > TM_SCHEMA_SECTIONS_MAX)
                b->bad = 1;
        for (unsigned i = 0; i < s->nsections && !b->bad; i++) {
                r_str(b, s->section[i].name, TM_NAME_MAX);
                s->section[i].number = r_u32(b);
        }
        s->nforms = r_u8(b);
        if (s->nforms > TM_SCHEMA_FORMS_MAX)
                b->bad = 1;
        for (unsigned i = 0; i < s->nforms && !b->bad; i++) {
                struct tm_form *fm = &s->form[i];
                r_str(b, fm->name, TM_NAME_MAX);
                for (unsigned k = 0; k < s->nkinds; k++)
                        r_str(b, fm->label[k], TM_LABEL_MAX);
                const uint8_t *sh = r_bytes(b, s->nfields), *dg = r_bytes(b, s->nfields);
                if (sh && dg) {
                        memcpy(fm->show, sh, s->nfields);
                        memcpy(fm->digits, dg, s->nfields);
                }
        }
        f->nblobs = r_u8(b);
        if (f->nblobs > NCOL_BLOBS_MAX)
                b->bad = 1;
        for (unsigned i = 0; i < f->nblobs && !b->bad; i++) {
                r_str(b, f->blob[i].name, TM_NAME_MAX);
                f->blob[i].n = r_u32(b);
                f->blob[i].p = r_bytes(b, f->blob[i].n);
        }
        if (!b->bad && (b->pos != b->len || !kinds_ok(s)))
                b->bad = 1;
}

int ncol_schema_get(const uint8_t *p, size_t n, uint64_t off, struct ncol_file *f,
                    struct tm_err *err)
{
        unsigned long long o = (unsigned long long)off;
        memset(f, 0, sizeof *f);
        if (n < NCOL_SCH_HDR)
                return tm_err_set(err, -EIO, "raw offset %llu: truncated schema chunk", o);
        uint32_t body = tmn_get32(p + 4);
        if (tmn_get32(p) != NCOL_SCH_MAGIC || body > NCOL_SCH_MAX)
                return tm_err_set(err, -EIO, "raw offset %llu: no schema chunk", o);
        if (n - NCOL_SCH_HDR < body)
                return tm_err_set(err, -EIO, "raw offset %llu: truncated schema chunk", o);
        if ((uint32_t)crc32_z(0, p + NCOL_SCH_HDR, body) != tmn_get32(p + 8))
                return tm_err_set(err, -EIO, "raw offset %llu: schema chunk checksum mismatch", o);
        if (!(f->bytes = malloc(body ? body : 1)))
                return tm_err_set(err, -ENOMEM, "out of memory");
        memcpy(f->bytes, p + NCOL_SCH_HDR, body);
        struct rbuf b = {f->bytes, body, 0, 0};
        parse(&b, f);
        if (b.bad) {
                ncol_file_free(f);
                return tm_err_set(err, -EIO, "raw offset %llu: schema chunk byte %zu is wrong", o,
                                  NCOL_SCH_HDR + b.pos);
        }
        return (int)(NCOL_SCH_HDR + body);
}

void ncol_file_free(struct ncol_file *f)
{
        free(f->bytes);
        f->bytes = NULL;
        f->nblobs = 0;
}
