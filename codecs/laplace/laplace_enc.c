/* The Laplace encoders (laplace.h): raw records (.lpr) and text lines
 * (.lpt) from references of the schema tm_laplace_enc_schema gives. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "laplace.h"

/* The kinds beside "ref" an address trace's references come in as
 * (codecs/address/arec.c's names), and the type each becomes: valgrind's
 * letter for it. */
static const char *const lx_kind[] = {"read", "write", "ifetch"};
static const char lx_type[] = {'L', 'S', 'I'};
#define LX_ADDR_KINDS (sizeof lx_kind / sizeof lx_kind[0])

void tm_laplace_enc_schema(struct tm_schema *s)
{
        struct tm_rstate st;
        struct tm_err err = {0};
        if (tm_laplace_ref_open(NULL, s, &st, &err) < 0) { /* a broken TM_DTD_PATH copy */
                memset(s, 0, sizeof *s);
                return;
        }
        for (unsigned k = 0; k < LX_ADDR_KINDS; k++) {
                struct tm_kind *x = &s->kind[s->nkinds];
                memset(x, 0, sizeof *x);
                snprintf(x->name, sizeof x->name, "%s", lx_kind[k]);
                x->tag = s->nkinds++;
                x->nfields = 2;
                x->field[0] = TM_LPF_SIZE;
                x->field[1] = TM_LPF_ADDRESS;
        }
}

struct tm_renc {
        tm_rsink sink;
        void *arg;
        int text;
        uint64_t n; /* references written: the time of an address trace's */
        size_t len;
        uint8_t buf[8192];
};

static int lx_open(int text, tm_rsink sink, void *arg, struct tm_renc **out, struct tm_err *err)
{
        struct tm_renc *e = calloc(1, sizeof *e);
        if (!e)
                return tm_err_set(err, -ENOMEM, "laplace encoder: out of memory");
        e->sink = sink;
        e->arg = arg;
        e->text = text;
        *out = e;
        return 0;
}

void tm_laplace_enc_fit(struct tm_rec *r, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                r[i].v[0] = (r[i].v[0] % 2 ? 'a' : 'A') + r[i].v[0] % 26;
                r[i].v[2] = 1 + r[i].v[2] % 64;
                r[i].v[3] &= 0xffffffffu;
                r[i].v[4] &= 0xffffffffu;
        }
}

int tm_laplace_enc_open_raw(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                            struct tm_err *err)
{
        if (enc)
                return tm_err_set(err, -EINVAL, "laplace_raw has no encoding '%s'", enc);
        return lx_open(0, sink, arg, out, err);
}

int tm_laplace_enc_open_text(const char *enc, tm_rsink sink, void *arg, struct tm_renc **out,
                             struct tm_err *err)
{
        if (enc)
                return tm_err_set(err, -EINVAL, "laplace_text has no encoding '%s'", enc);
        return lx_open(1, sink, arg, out, err);
}

static int lx_flush(struct tm_renc *e)
{
        int rc = e->len ? e->sink(e->arg, e->buf, e->len) : 0;
        e->len = 0;
        return rc;
}

static int lx_bad(struct tm_err *err, uint64_t idx, const char *what, uint64_t v)
{
        return tm_err_set(err, -EINVAL, "record %llu: laplace cannot hold %s 0x%llx",
                          (unsigned long long)idx, what, (unsigned long long)v);
}

/* r as the five values of a reference into v. */
static int lx_values(const struct tm_renc *e, const struct tm_rec *r, uint64_t idx, uint64_t *v,
                     struct tm_err *err)
{
        if (r->kind == 0) {
                memcpy(v, r->v, TM_LPF_N * sizeof *v);
        } else if (r->kind <= LX_ADDR_KINDS) {
                v[TM_LPF_TYPE] = (uint8_t)lx_type[r->kind - 1];
                v[TM_LPF_TIME] = e->n;
                v[TM_LPF_SIZE] = r->v[0];
                v[TM_LPF_SPACE] = r->v[1] >> 32;
                v[TM_LPF_ADDRESS] = r->v[1] & 0xffffffffu;
        } else {
                return tm_err_set(err, -EINVAL, "record %llu: kind %u is not a laplace reference",
                                  (unsigned long long)idx, (unsigned)r->kind);
        }
        if (v[TM_LPF_TYPE] > 0xff || (e->text && (v[TM_LPF_TYPE] < 0x21 || v[TM_LPF_TYPE] > 0x7e)))
                return lx_bad(err, idx, e->text ? "the type (a graphic character in text)"
                                                 : "the type (8 bits)",
                              v[TM_LPF_TYPE]);
        if (v[TM_LPF_SIZE] > 0xff)
                return lx_bad(err, idx, "the size (8 bits)", v[TM_LPF_SIZE]);
        if (v[TM_LPF_SPACE] > 0xffffffffu)
                return lx_bad(err, idx, "the space (32 bits)", v[TM_LPF_SPACE]);
        if (v[TM_LPF_ADDRESS] > 0xffffffffu)
                return lx_bad(err, idx, "the address (32 bits)", v[TM_LPF_ADDRESS]);
        return 0;
}

static void put_le(uint8_t *p, uint64_t v, unsigned w)
{
        for (unsigned i = 0; i < w; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static size_t lx_write(const struct tm_renc *e, const uint64_t *v, uint8_t *p)
{
        if (e->text)
                return (size_t)sprintf((char *)p, "%c %llx %llx %llx %llx\n", (char)v[TM_LPF_TYPE],
                                       (unsigned long long)v[TM_LPF_TIME],
                                       (unsigned long long)v[TM_LPF_SIZE],
                                       (unsigned long long)v[TM_LPF_SPACE],
                                       (unsigned long long)v[TM_LPF_ADDRESS]);
        p[TM_LAPLACE_OFF_TYPE] = (uint8_t)v[TM_LPF_TYPE];
        put_le(p + TM_LAPLACE_OFF_TIME, v[TM_LPF_TIME], 8);
        p[TM_LAPLACE_OFF_SIZE] = (uint8_t)v[TM_LPF_SIZE];
        put_le(p + TM_LAPLACE_OFF_SPACE, v[TM_LPF_SPACE], 4);
        put_le(p + TM_LAPLACE_OFF_ADDRESS, v[TM_LPF_ADDRESS], 4);
        return TM_LAPLACE_REC;
}

int tm_laplace_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                       struct tm_err *err)
{
        for (size_t i = 0; i < n; i++) {
                uint64_t v[TM_LPF_N];
                int rc = lx_values(e, &r[i], idx + i, v, err);
                if (rc < 0)
                        return rc;
                if (e->len + TM_LAPLACE_LINE_MAX > sizeof e->buf && (rc = lx_flush(e)) < 0)
                        return tm_err_set(err, rc, "laplace encoder: writing failed");
                e->len += lx_write(e, v, e->buf + e->len);
                e->n++;
        }
        int rc = lx_flush(e);
        return rc < 0 ? tm_err_set(err, rc, "laplace encoder: writing failed") : 0;
}

int tm_laplace_enc_finish(struct tm_renc *e, struct tm_err *err)
{
        int rc = lx_flush(e);
        free(e);
        return rc < 0 ? tm_err_set(err, rc, "laplace encoder: writing failed") : 0;
}

void tm_laplace_enc_free(struct tm_renc *e)
{
        free(e);
}
