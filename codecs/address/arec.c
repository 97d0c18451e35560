/* arec: what the address rows share (arec.h, arec_impl.h). */
#include "arec_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tm_cpu.h"
#include "../common/tm_tls.h"
#include "addr_stats.h"
#include "render.h"

void tm_addr_schema(struct tm_schema *s, unsigned ntypes, int sized)
{
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "address");
        if (ntypes < 1 || ntypes > TM_NTYPES)
                ntypes = TM_NTYPES;
        s->nfields = sized ? 3 : 2;
        s->field[0] = (struct tm_field){.name = "type", .show = TM_SHOW_DEC | TM_SHOW_HIDDEN};
        s->field[1] = (struct tm_field){.name = "address", .show = TM_SHOW_HEXN};
        s->field[2] = (struct tm_field){.name = "size", .show = TM_SHOW_DEC | TM_SHOW_HIDDEN};
        s->nkinds = ntypes;
        for (unsigned t = 0; t < ntypes; t++) {
                struct tm_kind *k = &s->kind[t];
                snprintf(k->name, sizeof k->name, "%s", tm_type_name(t));
                k->label[0] = (char)('0' + t);
                k->tag = t;
                k->nfields = (uint8_t)s->nfields;
                for (unsigned f = 0; f < s->nfields; f++)
                        k->field[f] = (uint8_t)f;
        }
        if (!sized || ntypes > 6)
                return;
        struct tm_form *x = &s->form[s->nforms++];
        snprintf(x->name, sizeof x->name, "xdin");
        for (unsigned t = 0; t < ntypes; t++)
                x->label[t][0] = "rwimcv"[t];
        x->show[0] = TM_SHOW_DEC | TM_SHOW_HIDDEN;
        x->show[1] = TM_SHOW_HEXN;
        x->show[2] = TM_SHOW_HEXN;
        x->digits[2] = TM_XDIN_SIZE_DIGITS;
}

/* ---- decoding ---- */

struct arec_ctx {
        const struct arec_fmt *c;
        unsigned ntypes;
};

int arec_open(const struct arec_fmt *c, const uint8_t *head, size_t n, void **ctx,
              struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        struct arec_ctx *x = malloc(sizeof *x);
        if (!x)
                return tm_err_set(err, -ENOMEM, "out of memory");
        x->c = c;
        x->ntypes = c->ntypes < TM_NTYPES ? c->ntypes : TM_NTYPES;
        struct tm_dec_state ds;
        memset(&ds, 0, sizeof ds);
        int hl = c->dec_init(&ds, head, n, err);
        if (hl < 0) {
                free(x);
                return hl;
        }
        memset(st->b, 0, TM_STATE_MAX);
        memcpy(st->b, ds.b, TM_STATE_MAX);
        tm_addr_schema(schema, x->ntypes, c->decode_sized != NULL);
        *ctx = x;
        return hl;
}

void arec_close(void *ctx)
{
        free(ctx);
}

int arec_state_ok(const void *ctx, const struct tm_rstate *st)
{
        const struct arec_ctx *x = ctx;
        struct tm_dec_state ds;
        memcpy(ds.b, st->b, TM_STATE_MAX);
        return !x->c->state_ok || x->c->state_ok(&ds);
}

/* References decode() and decode_batch() take at once (a decode call has a set-up of
 * its own), per thread. */
#define AREC_COLS 4096
struct arec_tls {
        struct tm_ref refs[AREC_COLS];
        uint32_t sizes[AREC_COLS];
};
static struct tm_tls arec_bufs = TM_TLS_INIT(sizeof(struct arec_tls));

/* The references of in[0..len) (at most cap, and AREC_COLS) into
 * t->refs, their sizes into t->sizes for a codec that has them,
 * decoded from the codec's state ds (moved on). Their count, or a
 * negative errno. Types are not checked: arec_done does. */
static ssize_t arec_refs_of(const struct arec_ctx *x, struct arec_tls *t, struct tm_dec_state *ds,
                            const uint8_t *in, size_t len, int eof, uint64_t raw_off, size_t *used,
                            size_t cap, struct tm_err *err)
{
        if (!t)
                return tm_err_set(err, -ENOMEM, "out of memory for a decode buffer");
        if (cap > AREC_COLS)
                cap = AREC_COLS;
        return x->c->decode_sized
                   ? x->c->decode_sized(ds, in, len, eof, raw_off, used, t->refs, t->sizes, cap,
                                        err)
                   : x->c->decode(ds, in, len, eof, raw_off, used, t->refs, cap, err);
}

/* The end of a decode call that gave n references of refs, bad
 * nonzero when one has a type the codec does not have: that error, else
 * n with the state ds kept in st (as the codec's decode: the state moves
 * on only when every reference is good). */
static ssize_t arec_done(const struct arec_ctx *x, const struct tm_ref *refs, struct tm_rstate *st,
                         const struct tm_dec_state *ds, ssize_t n, uint32_t bad, uint64_t raw_off,
                         struct tm_err *err)
{
        for (ssize_t i = 0; bad && i < n; i++)
                if (refs[i].type >= x->ntypes)
                        return tm_err_set(err, -EIO, "raw offset %llu: reference type %u",
                                          (unsigned long long)raw_off, refs[i].type);
        if (n >= 0)
                memcpy(st->b, ds->b, TM_STATE_MAX);
        return n;
}

ssize_t arec_decode(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                    uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                    struct tm_err *err)
{
        const struct arec_ctx *x = ctx;
        struct arec_tls *b = tm_tls_get(&arec_bufs);
        struct tm_dec_state ds;
        memcpy(ds.b, st->b, TM_STATE_MAX);
        ssize_t n = arec_refs_of(x, b, &ds, in, len, eof, raw_off, used, cap, err);
        uint32_t bad = 0;
        for (ssize_t i = 0; i < n; i++) {
                uint32_t t = b->refs[i].type;
                bad |= t >= x->ntypes;
                out[i].kind = t;
                out[i].section = 0;
                out[i].v[0] = t;
                out[i].v[1] = b->refs[i].addr;
                out[i].v[2] = x->c->decode_sized ? b->sizes[i] : 0;
        }
        return n < 0 ? n : arec_done(x, b->refs, st, &ds, n, bad, raw_off, err);
}

/* The batch's kind, type and address columns of refs r[0..n): nonzero
 * when one has a type of nt or above. */
typedef uint32_t arec_cols_fn(const struct tm_ref *r, size_t n, uint32_t nt, uint32_t *kind,
                              uint64_t *type, uint64_t *addr);

static uint32_t arec_cols_scalar(const struct tm_ref *r, size_t n, uint32_t nt, uint32_t *kind,
                                 uint64_t *type, uint64_t *addr)
{
        uint32_t bad = 0;
        for (size_t i = 0; i < n; i++) {
                uint32_t t = r[i].type;
                bad |= t >= nt;
                kind[i] = t;
                type[i] = t;
                addr[i] = r[i].addr;
        }
        return bad;
}

/* The column split's implementations: arec_cols_scalar, or a vector
 * path of arch/ (tm_cpu.h). */
struct arec_impl {
        arec_cols_fn *cols;
};

#ifdef TM_CPU_X86
#include "../../arch/x86/arec_impl.h"
#endif

static const struct arec_impl arec_portable = {arec_cols_scalar};
static struct tm_cpu_slot arec_slot = {.arch = TM_CPU_ARCH(arec_arch_choose),
                                       .portable = &arec_portable};

static arec_cols_fn *arec_cols(void)
{
        const struct arec_impl *f = tm_cpu_pick(&arec_slot);
        return f->cols;
}

void tm_arec_force_scalar(int on)
{
        tm_cpu_choose(&arec_slot, on);
}

ssize_t arec_decode_batch(void *ctx, struct tm_rstate *st, const uint8_t *in, size_t len, int eof,
                          uint64_t raw_off, size_t *used, struct tm_rbatch *b, size_t cap,
                          struct tm_err *err)
{
        const struct arec_ctx *x = ctx;
        struct arec_tls *t = tm_tls_get(&arec_bufs);
        struct tm_dec_state ds;
        memcpy(ds.b, st->b, TM_STATE_MAX);
        b->n = 0;
        ssize_t n =
            arec_refs_of(x, t, &ds, in, len, eof, raw_off, used, cap < b->cap ? cap : b->cap, err);
        if (n < 0)
                return n;
        uint32_t bad =
            n ? arec_cols()(t->refs, (size_t)n, x->ntypes, b->kind, b->col[0], b->col[1]) : 0;
        for (ssize_t i = 0; x->c->decode_sized && i < n; i++)
                b->col[2][i] = t->sizes[i];
        n = arec_done(x, t->refs, st, &ds, n, bad, raw_off, err);
        b->n = n > 0 ? (size_t)n : 0;
        return n;
}

/* The text decoder takes as many references a call as the caller's room
 * allows, up to AREC_COLS, into the thread's buffer (a decode call has a cost of
 * its own: PDATS II's vector decoder sets up per call); fewer than this,
 * after some, it leaves to the next call. */
#define AREC_TEXT_MIN 256

/* One decode call of the fast paths: at most n references of in[0..len)
 * into refs, state ds moved on, *used the bytes. 0 (ds as it was)
 * where the generic path must go on: more input, an error, a type the
 * codec does not have; those are reported by that one path. */
static ssize_t arec_chunk(const struct arec_fmt *c, struct tm_ref *refs, struct tm_dec_state *ds,
                          const uint8_t *in, size_t len, uint64_t raw_off, size_t *used, size_t n)
{
        const uint32_t nt = c->ntypes < TM_NTYPES ? c->ntypes : TM_NTYPES;
        struct tm_dec_state keep = *ds;
        struct tm_err e;
        ssize_t k = c->decode(ds, in, len, 0, raw_off, used, refs, n, &e);
        uint32_t bad = 0;
        for (ssize_t i = 0; i < k; i++)
                bad |= refs[i].type >= nt;
        if (k <= 0 || bad) {
                *ds = keep;
                return 0;
        }
        return k;
}

/* The text decoder: references decoded into a batch, rendered by the din
 * renderer (render.h, AVX-512 where the CPU has it); kind >= 0: only the
 * references of that type (streams/<type>), moved together first. */
size_t arec_text(const struct arec_fmt *c, struct tm_rstate *st, const uint8_t *in, size_t len,
                 uint64_t raw_off, size_t *used, char *dst, size_t cap, size_t maxrec, long kind,
                 size_t *nrec)
{
        struct arec_tls *t = tm_tls_get(&arec_bufs);
        struct tm_ref *refs = t ? t->refs : NULL;
        struct tm_dec_state ds;
        size_t w = 0, done = 0, lines = 0, off = 0;
        *nrec = 0;
        *used = 0;
        if (!refs) /* the generic path reports it */
                return 0;
        memcpy(ds.b, st->b, TM_STATE_MAX);
        while (lines < maxrec) {
                size_t room = cap - w;
                if (room < TM_RENDER_SLACK + TM_DIN_LINE_MAX)
                        break;
                size_t n = (room - TM_RENDER_SLACK) / TM_DIN_LINE_MAX;
                /* lines are half their worst case on average, so the room
                 * for them halves call by call: stop before the calls get
                 * small (each has its set-up); the caller comes back */
                if (done && n < AREC_TEXT_MIN)
                        break;
                if (n > AREC_COLS)
                        n = AREC_COLS;
                if (n > maxrec - lines) /* each reference may be a line */
                        n = maxrec - lines;
                size_t u = 0;
                ssize_t k = arec_chunk(c, refs, &ds, in + off, len - off, raw_off + off, &u, n);
                if (k <= 0)
                        break;
                size_t m = (size_t)k;
                if (kind >= 0) {
                        m = 0;
                        for (ssize_t i = 0; i < k; i++) {
                                refs[m] = refs[i];
                                m += refs[i].type == (uint32_t)kind;
                        }
                }
                w += tm_render_din_batch(dst + w, refs, m);
                off += u;
                done += (size_t)k;
                lines += m;
        }
        memcpy(st->b, ds.b, TM_STATE_MAX);
        *used = off;
        *nrec = done;
        return w;
}

/* The binary decoder: references decoded into a batch, written as the
 * address family's 16-byte records. */
size_t arec_bin(const struct arec_fmt *c, struct tm_rstate *st, const uint8_t *in, size_t len,
                uint64_t raw_off, size_t *used, uint8_t *dst, size_t cap, size_t maxrec,
                size_t *nrec)
{
        struct arec_tls *t = tm_tls_get(&arec_bufs);
        struct tm_ref *refs = t ? t->refs : NULL;
        struct tm_dec_state ds;
        size_t done = 0, off = 0;
        *used = 0;
        *nrec = 0;
        if (!refs) /* the generic path reports it */
                return 0;
        memcpy(ds.b, st->b, TM_STATE_MAX);
        for (;;) {
                size_t n = (cap - done * TM_ADDR_BIN_SIZE) / TM_ADDR_BIN_SIZE;
                if (n > AREC_COLS)
                        n = AREC_COLS;
                if (n > maxrec - done)
                        n = maxrec - done;
                size_t u = 0;
                ssize_t k =
                    n ? arec_chunk(c, refs, &ds, in + off, len - off, raw_off + off, &u, n) : 0;
                if (k <= 0)
                        break;
                uint8_t *o = dst + done * TM_ADDR_BIN_SIZE;
                for (ssize_t i = 0; i < k; i++, o += TM_ADDR_BIN_SIZE)
                        tm_addr_bin_put(o, refs[i].addr, refs[i].type);
                off += u;
                done += (size_t)k;
        }
        memcpy(st->b, ds.b, TM_STATE_MAX);
        *used = off;
        *nrec = done;
        return done * TM_ADDR_BIN_SIZE;
}

/* ---- encoding ---- */

struct tm_renc {
        const struct arec_fmt *c;
        struct tm_enc_state st;
        tm_rsink sink;
        void *arg;
        uint8_t buf[TM_ENC_MAX_OUT];
};

static int enc_opts(const char *enc, struct tm_enc_opts *o)
{
        o->addr_bits = 64;
        o->unit = 1;
        if (!enc)
                return 0;
        if (strncmp(enc, "32", 2) == 0)
                o->addr_bits = 32;
        else if (strncmp(enc, "64", 2) != 0)
                return -1;
        if (enc[2] == 0)
                return 0;
        if (enc[2] == '/' && (enc[3] == '1' || enc[3] == '2' || enc[3] == '4') && enc[4] == 0) {
                o->unit = (unsigned)(enc[3] - '0');
                return 0;
        }
        return -1;
}

int arec_enc_open(const struct arec_fmt *c, const char *name, const char *enc, tm_rsink sink,
                  void *arg, struct tm_renc **out, struct tm_err *err)
{
        struct tm_enc_opts o;
        if (enc_opts(enc, &o) < 0)
                return tm_err_set(err, -EINVAL, "%s: no encoding %s (32 or 64, /1 /2 /4)", name,
                                  enc);
        struct tm_renc *e = calloc(1, sizeof *e);
        if (!e)
                return tm_err_set(err, -ENOMEM, "out of memory");
        e->c = c;
        e->sink = sink;
        e->arg = arg;
        int k = c->enc_init(&e->st, &o, e->buf, err);
        if (k > 0)
                k = sink(arg, e->buf, (size_t)k);
        if (k < 0) {
                free(e);
                return k;
        }
        *out = e;
        return 0;
}

static int arec_put_one(struct tm_renc *e, const struct tm_rec *r, uint64_t idx, struct tm_err *err)
{
        /* the type field is the kind again (tm_addr_schema); checked before
         * it is narrowed to a tm_ref's 32 bits, as is a size */
        if (r->v[0] != r->kind)
                return tm_err_set(err, -EINVAL, "record %llu: type %llu, not its kind's (%u)",
                                  (unsigned long long)idx, (unsigned long long)r->v[0], r->kind);
        if (e->c->encode_sized && r->v[2] > UINT32_MAX)
                return tm_err_set(err, -EINVAL, "record %llu: size %llu", (unsigned long long)idx,
                                  (unsigned long long)r->v[2]);
        struct tm_ref ref = {.addr = r->v[1], .type = r->kind};
        int k = e->c->encode_sized
                    ? e->c->encode_sized(&e->st, &ref, (uint32_t)r->v[2], idx, e->buf, err)
                    : e->c->encode(&e->st, &ref, idx, e->buf, err);
        return k > 0 ? e->sink(e->arg, e->buf, (size_t)k) : k;
}

int arec_enc_put(struct tm_renc *e, const struct tm_rec *r, size_t n, uint64_t idx,
                 struct tm_err *err)
{
        return tm_renc_each(arec_put_one, e, r, n, idx, err);
}

int arec_enc_finish(struct tm_renc *e, struct tm_err *err)
{
        int k = e->c->finish ? e->c->finish(&e->st, e->buf, err) : 0;
        if (k > 0)
                k = e->sink(e->arg, e->buf, (size_t)k);
        free(e);
        return k < 0 ? k : 0;
}

void arec_enc_free(struct tm_renc *e)
{
        free(e);
}

/* The encodings of every address row: address width and PDATS II's
 * instruction unit ("64" = 64/1, what every trace fits, first: the
 * default). Formats without either (din, lackey text) take them all and
 * write the same bytes. */
const char *const arec_encodings[] = {"64", "64/2", "64/4", "32", "32/2", "32/4", NULL};

/* What enc_put takes: every type (the encoder refuses those its format
 * has not, naming the reference), with the size field for a codec that
 * writes sizes. */
void arec_enc_schema(const struct arec_fmt *c, struct tm_schema *s)
{
        tm_addr_schema(s, TM_NTYPES, c->encode_sized != NULL);
}
