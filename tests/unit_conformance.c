/* The conformance suite: the same checks for every row of the registry
 * (codecs/registry.h) and, for a row of references (an address row whose
 * encodings are the address widths and units, codecs/address/arec.h),
 * the same row again at the level of references (tests/support/aref.h),
 * so that a new row is tested with no change here.
 *
 * Inputs of a codec: streams its own encoder wrote (address codecs: every
 * address width and instruction unit, program-shaped and random traces;
 * record codecs: every writer encoding, records generated over the
 * schema the row's encoder takes and made ones it holds by the row's
 * enc_fit, for an address row program-shaped and random references of
 * 32 and of 64 bits), and every file in examples/ and tests/data/ (not
 * the fuzz findings) whose raw bytes the registry's probe gives to this
 * codec, decompressed through the container API; of a long
 * one, the records in its first SAMPLE_MAX bytes. A decode-only codec has
 * only the latter; a codec with neither fails here.
 *
 * Every decode call is also made through the row's decode_batch, when it
 * has one (a fast path): the same records (variable bytes too), bytes
 * used, state and error; and again in half the arena its values took.
 *
 * Checks, each a test per codec:
 *   round trip   decoded = what was encoded, record for record, byte for
 *                byte; encoding the decoded records again gives the same
 *                stream; a sample re-encoded decodes to itself; an
 *                address row refuses a record whose type is not its kind
 *   windows      decoding in small input windows with small caps, as a
 *                view's feed offers input, gives the whole-stream records
 *   checkpoints  at every record boundary a copy of the state resumes to
 *                the same next records (to the end at a few of them); every
 *                state reached passes state_ok
 *   hostile state  random states and checkpoints with a byte changed:
 *                state_ok refuses them or decode copes (no overrun, errors
 *                with a message)
 *   corrupt      the stream cut at many points and with bytes changed:
 *                decoding ends or fails with "raw offset N" (N within the
 *                input), the same all at once and in windows, the records
 *                before the damage intact; in a binary format a record cut
 *                at the end is -EIO
 *
 * Records are compared in a canonical form (kind name, field names and
 * values, variable bytes), so that a Meta-TF trace whose schema comes from
 * its DTD compares with the family schema it was written from. */
#include "codec_test.h"

#include <dirent.h>
#include <sys/stat.h>

#include "codecs/address/addr_stats.h"
#include "codecs/address/arec.h"
#include "codecs/record/record.h"
#include "codecs/registry.h"
#include "support/tmtest.h"

#define SAMPLE_MAX (48u << 10) /* raw bytes of a sample the checks decode */
/* Under ASan and UBSan (./build.sh test's second build) the damage checks
 * try a quarter as many cuts and changed bytes: the same code paths, in a
 * time CI can afford (the release build runs them all). */
#if defined(__SANITIZE_ADDRESS__)
#define DAMAGE_DIV 4
#else
#define DAMAGE_DIV 1
#endif
#define CK_AHEAD 24            /* records compared after a resumed checkpoint */
#define REC_MAX (1u << 20)     /* records one pass keeps; more is a runaway */

/* ---- the codec under test: one row of either table ---- */

struct codec {
        const struct tm_rcodec *ac; /* a row of references, or */
        const struct tm_rcodec *rc; /* a record codec */
        const char *name;
};

/* What a stream opened with a codec keeps: the header's state and length,
 * and for a record codec its ctx and schema. */
struct dec {
        const struct codec *c;
        void *ctx;
        struct tm_schema schema;
        union {
                struct tm_rstate r;
        } st0;
        size_t ssize; /* bytes of state that are a checkpoint */
        size_t hdr;
};

/* Records as canonical bytes, one after the other; off[i] is where record
 * i starts, off[n] the end. */
struct recs {
        struct tmt_buf b;
        size_t *off;
        size_t n, cap;
};

static void recs_clear(struct recs *r)
{
        r->b.len = 0;
        r->n = 0;
}

static void recs_free(struct recs *r)
{
        free(r->b.p);
        free(r->off);
        memset(r, 0, sizeof *r);
}

static void recs_end_one(struct recs *r)
{
        if (r->n + 2 > r->cap) {
                r->cap = r->cap ? r->cap * 2 : 1024;
                r->off = realloc(r->off, r->cap * sizeof *r->off);
                assert_non_null(r->off);
        }
        if (r->n == 0)
                r->off[0] = 0;
        r->off[++r->n] = r->b.len;
}

static void put(struct recs *r, const void *p, size_t n)
{
        assert_int_equal(tmt_put(&r->b, p, n), 0);
}

/* Record i of a equals record j of b, byte for byte. */
static int rec_eq(const struct recs *a, size_t i, const struct recs *b, size_t j)
{
        size_t la = a->off[i + 1] - a->off[i], lb = b->off[j + 1] - b->off[j];
        return la == lb && memcmp(a->b.p + a->off[i], b->b.p + b->off[j], la) == 0;
}

/* a[ai..ai+n) equals b[bi..bi+n); fail naming the first difference. */
static void assert_recs(const char *what, const struct recs *a, size_t ai, const struct recs *b,
                        size_t bi, size_t n)
{
        for (size_t k = 0; k < n; k++)
                if (!rec_eq(a, ai + k, b, bi + k))
                        fail_msg("%s: record %zu differs", what, ai + k);
}

static void assert_same(const char *what, const struct recs *got, const struct recs *want)
{
        if (got->n != want->n)
                fail_msg("%s: %zu records, want %zu", what, got->n, want->n);
        assert_recs(what, got, 0, want, 0, want->n);
}

/* The canonical bytes of an address reference: type, address, size. */
static void canon_ref(struct recs *r, const struct tm_ref *ref, uint32_t size)
{
        uint8_t b[13];
        b[0] = (uint8_t)ref->type;
        memcpy(b + 1, &ref->addr, 8);
        memcpy(b + 9, &size, 4);
        put(r, b, sizeof b);
        recs_end_one(r);
}

/* The canonical bytes of record x of schema s: its kind's name, then each
 * field's name and value (a variable field: its length and bytes), and
 * the section when with_section (a schema from a DTD has sections the
 * family schema records are written from do not). */
static void canon_rec(struct recs *r, const struct tm_schema *s, const struct tm_rec *x,
                      int with_section)
{
        assert_true(x->kind < s->nkinds);
        const struct tm_kind *k = &s->kind[x->kind];
        put(r, k->name, strlen(k->name) + 1);
        if (with_section)
                put(r, &x->section, sizeof x->section);
        unsigned slot = 0;
        for (unsigned i = 0; i < k->nfields; i++) {
                const struct tm_field *f = &s->field[k->field[i]];
                put(r, f->name, strlen(f->name) + 1);
                put(r, &x->v[i], sizeof x->v[i]);
                if (tm_field_is_var(f)) {
                        size_t n = f->type == TM_FT_LIST ? x->v[i] * 8 : x->v[i];
                        assert_true(slot < TM_REC_VAR_MAX);
                        if (n)
                                put(r, x->var[slot], n);
                        slot++;
                }
        }
        recs_end_one(r);
}

/* ---- decoding ---- */

static size_t head_len(const struct codec *c, size_t len)
{
        size_t h = c->ac ? TM_RHEAD_MIN : c->rc->head_max ? c->rc->head_max : TM_RHEAD_MIN;
        return len < h ? len : h;
}

/* Open raw[0..len) with c (path: where a record codec may look beside
 * the archive). Returns the header length or a negative errno. */
static int dec_open(struct dec *d, const struct codec *c, const uint8_t *raw, size_t len,
                    const char *path, struct tm_err *err)
{
        memset(d, 0, sizeof *d);
        d->c = c;
        int h;
        if (c->ac) {
                h = c->ac->open(raw, len, path, &d->ctx, &d->schema, &d->st0.r, err);
                d->ssize = c->ac->state_size;
        } else {
                h = c->rc->open(raw, head_len(c, len), path, &d->ctx, &d->schema, &d->st0.r, err);
                d->ssize = c->rc->state_size;
                assert_true(d->ssize <= sizeof d->st0.r);
        }
        if (h >= 0) {
                assert_true((size_t)h <= len);
                d->hdr = (size_t)h;
        }
        return h;
}

static void dec_close(struct dec *d)
{
        const struct tm_rcodec *row = d->c ? d->c->ac ? d->c->ac : d->c->rc : NULL;
        if (row && row->close && d->ctx)
                row->close(d->ctx);
        d->ctx = NULL;
}

static int state_ok(const struct dec *d, const void *st)
{
        if (d->c->ac)
                return !d->c->ac->state_ok || d->c->ac->state_ok(d->ctx, st);
        return !d->c->rc->state_ok || d->c->rc->state_ok(d->ctx, st);
}

/* Is record i of batch b (schema s) record x: kind, values and the bytes
 * of its variable fields? */
static int batch_rec_is(const struct tm_rbatch *b, const struct tm_schema *s, size_t i,
                        const struct tm_rec *x)
{
        struct tm_rec r;
        if (b->kind[i] != x->kind)
                return 0;
        tm_rbatch_rec(b, s, i, &r);
        const struct tm_kind *k = &s->kind[x->kind];
        unsigned slot = 0;
        for (unsigned p = 0; p < k->nfields; p++) {
                const struct tm_field *f = &s->field[k->field[p]];
                if (r.v[p] != x->v[p])
                        return 0;
                if (!tm_field_is_var(f))
                        continue;
                size_t n = f->type == TM_FT_LIST ? x->v[p] * 8 : x->v[p];
                if (r.var[slot] + n > b->arena + b->arena_len ||
                    (n && memcmp(r.var[slot], x->var[slot], n) != 0))
                        return 0;
                slot++;
        }
        return 1;
}

/* decode_batch with the arena cut to half of what the call's values took
 * (b as the full call left it): it stops before the first record that no
 * longer fits, with the records decode gave before it, and decode from
 * where it stopped gives the rest, the same bytes used and state; or, when
 * the first record alone does not fit, -ENOSPC naming the raw offset. */
static void check_batch_arena(const struct dec *d, struct tm_rbatch *b, const void *st0,
                              const uint8_t *w, size_t len, int eof, uint64_t raw_off, size_t cap,
                              ssize_t n, size_t used, const void *st, const struct tm_rec *recs)
{
        static struct tm_rstate s2;
        static struct tm_rec rest[512];
        size_t full = b->arena_cap;
        b->arena_cap = b->arena_len / 2;
        memcpy(&s2, st0, d->ssize);
        size_t u = 0;
        struct tm_err e = {0};
        ssize_t k = d->c->rc->decode_batch(d->ctx, &s2, w, len, eof, raw_off, &u, b, cap, &e);
        int ok = k == -ENOSPC ? strstr(e.msg, "raw offset") != NULL
                              : k >= 0 && k < n && b->arena_len <= b->arena_cap;
        for (ssize_t i = 0; ok && k > 0 && i < k; i++)
                ok = batch_rec_is(b, &d->schema, (size_t)i, &recs[i]);
        b->arena_cap = full;
        if (ok && k > 0) {
                size_t u2 = 0;
                ssize_t m = d->c->rc->decode(d->ctx, &s2, w + u, len - u, eof, raw_off + u, &u2,
                                             rest, cap - (size_t)k, &e);
                ok = m == n - k && u + u2 == used && memcmp(&s2, st, d->ssize) == 0;
                for (ssize_t i = 0; ok && i < m; i++)
                        ok =
                            rest[i].kind == recs[k + i].kind &&
                            memcmp(rest[i].v, recs[k + i].v,
                                   d->schema.kind[rest[i].kind].nfields * sizeof rest[i].v[0]) == 0;
        }
        if (!ok)
                fail_msg("%s: raw offset %llu: decode_batch in half the arena gives %zd records "
                         "(%s), decode %zd, or they differ",
                         d->c->name, (unsigned long long)raw_off, k, e.msg, n);
}

/* The row's decode_batch on the call decode just made (from state st0,
 * in[0..len) and the rest as given to it), against what decode gave: n
 * records recs, *used, state st, error err. A fast path: the same records
 * (values and variable bytes), bytes used, state and error (record.h),
 * given an arena that holds the values; in half of it, see
 * check_batch_arena. */
static void check_batch(const struct dec *d, const void *st0, const uint8_t *in, size_t len,
                        int eof, uint64_t raw_off, size_t cap, ssize_t n, size_t used,
                        const void *st, const struct tm_rec *recs, const struct tm_err *err)
{
        static struct tm_rbatch b;
        static struct tm_rstate s2;
        size_t arena = 8 * len + 16 * cap + 64; /* more than any codec's values take */
        if (b.arena_cap < arena) {
                tm_rbatch_free(&b);
                assert_int_equal(tm_rbatch_init(&b, TM_SCHEMA_FIELDS_MAX, 512), 0);
                assert_int_equal(tm_rbatch_arena(&b, arena), 0);
        }
        uint8_t *w = malloc(len ? len : 1);
        assert_non_null(w);
        memcpy(w, in, len);
        memcpy(&s2, st0, d->ssize);
        size_t u = 0;
        struct tm_err e = {0};
        ssize_t k = d->c->rc->decode_batch(d->ctx, &s2, w, len, eof, raw_off, &u, &b, cap, &e);
        if (k != n || (n < 0 && strcmp(e.msg, err->msg) != 0) ||
            (n >= 0 && (u != used || b.n != (size_t)n || memcmp(&s2, st, d->ssize) != 0)))
                fail_msg("%s: raw offset %llu: decode_batch gives %zd records, %zu bytes (%s), "
                         "decode %zd, %zu (%s), or another state",
                         d->c->name, (unsigned long long)raw_off, k, u, e.msg, n, used, err->msg);
        for (ssize_t i = 0; i < n; i++)
                if (!batch_rec_is(&b, &d->schema, (size_t)i, &recs[i]))
                        fail_msg("%s: raw offset %llu: decode_batch's record %zd differs",
                                 d->c->name, (unsigned long long)raw_off, i);
        if (n > 0 && b.arena_len > 0)
                check_batch_arena(d, &b, st0, w, len, eof, raw_off, cap, n, used, st, recs);
        free(w);
}

/* One decode call on a private copy of in[0..len) (so that ASan sees a
 * read past it), appending at most cap records to out; the same call
 * through the row's decode_batch, when it has one, must agree. */
static ssize_t dec_step(const struct dec *d, void *st, const uint8_t *in, size_t len, int eof,
                        uint64_t raw_off, size_t *used, size_t cap, struct recs *out,
                        struct tm_err *err)
{
        static struct tm_ref refs[512];
        static uint32_t sizes[512];
        static struct tm_rec recs[512];
        if (cap > 512)
                cap = 512;
        uint8_t *w = malloc(len ? len : 1);
        assert_non_null(w);
        memcpy(w, in, len);
        ssize_t n;
        *used = 0;
        const struct tm_rcodec *ac = d->c->ac;
        int batch = !ac && d->c->rc->decode_batch;
        struct tm_rstate st0;
        if (batch)
                memcpy(&st0, st, d->ssize);
        if (ac) { /* the row's records as references (tests/support/aref.h) */
                struct aref_dec ad = {.c = ac, .ctx = d->ctx, .schema = d->schema};
                memcpy(&ad.st, st, d->ssize);
                n = aref_decode_sized(&ad, w, len, eof, raw_off, used, refs, sizes, cap, err);
                memcpy(st, &ad.st, d->ssize);
        } else {
                n = d->c->rc->decode(d->ctx, st, w, len, eof, raw_off, used, recs, cap, err);
        }
        if (n >= 0) {
                if ((size_t)n > cap || *used > len)
                        fail_msg("%s: decode overran: %zd records of %zu, %zu bytes of %zu",
                                 d->c->name, n, cap, *used, len);
                for (ssize_t i = 0; i < n; i++) {
                        if (ac) {
                                if (refs[i].type >= d->schema.nkinds)
                                        fail_msg("%s: type %u", ac->name, refs[i].type);
                                canon_ref(out, &refs[i], sizes[i]);
                        } else {
                                canon_rec(out, &d->schema, &recs[i], 1);
                        }
                }
        } else if (!err->msg[0]) {
                fail_msg("%s: error %zd without a message", d->c->name, n);
        }
        if (batch)
                check_batch(d, &st0, in, len, eof, raw_off, cap, n, *used, st, recs, err);
        free(w); /* after the records: their bytes point into it */
        return n;
}

/* How a pass offers input: piece bytes at a time beyond what is left over
 * (0: everything), cap records a call. */
struct pass {
        size_t piece, cap;
        size_t max; /* stop after this many records (0: REC_MAX) */
        int more;   /* more input follows: stop where it is needed (no eof) */
        /* out */
        int rc; /* 0 the end, 1 max reached, < 0 the error */
        size_t stop;
        struct tm_err err;
};

/* Decode raw[pos..len) from state st (ssize bytes, changed), appending to
 * out. As a view's feed offers input: the window ends at end, which never
 * moves back; it grows by piece when the decoder needs more, and is kept at
 * least piece bytes ahead of what was consumed. */
static void dec_run(const struct dec *d, void *st, const uint8_t *raw, size_t len, size_t pos,
                    struct pass *p, struct recs *out)
{
        size_t max = p->max ? p->max : REC_MAX, first = out->n;
        size_t end = p->piece && len - pos > p->piece ? pos + p->piece : len;
        unsigned long long calls = 0, limit = 4ull * (len - pos) + 4ull * max + 100;
        p->rc = 0;
        memset(&p->err, 0, sizeof p->err);
        for (;;) {
                if (++calls > limit)
                        fail_msg("%s: decoding makes no progress at raw offset %zu", d->c->name,
                                 pos);
                if (out->n - first >= max) {
                        p->rc = 1;
                        break;
                }
                size_t avail = end - pos;
                int eof = !p->more && end == len;
                size_t used = 0, left = max - (out->n - first);
                size_t cap = p->cap < left ? p->cap : left;
                ssize_t n = dec_step(d, st, raw + pos, avail, eof, pos, &used, cap, out, &p->err);
                if (n < 0) {
                        p->rc = (int)n;
                        break;
                }
                if (!state_ok(d, st))
                        fail_msg("%s: decoding reached a state its state_ok refuses (raw %zu)",
                                 d->c->name, pos + used);
                pos += used;
                if (n == 0 && used == 0) {
                        if (end == len)
                                break; /* the end, or (more) where a record is cut */
                        end = len - end > p->piece ? end + p->piece : len;
                } else if (p->piece && end - pos < p->piece) {
                        end = len - pos < p->piece ? len : pos + p->piece;
                }
        }
        p->stop = pos;
}

/* Decode the whole of raw from its header: records into out, the outcome
 * in p. Returns the header length or dec_open's error. */
static int dec_all(const struct codec *c, const uint8_t *raw, size_t len, const char *path,
                   struct pass *p, struct recs *out)
{
        struct dec d;
        recs_clear(out);
        memset(&p->err, 0, sizeof p->err);
        int h = dec_open(&d, c, raw, len, path, &p->err);
        if (h < 0) {
                if (!p->err.msg[0])
                        fail_msg("%s: open failed (%d) without a message", c->name, h);
                p->rc = h;
                dec_close(&d);
                return h;
        }
        dec_run(&d, &d.st0, raw, len, d.hdr, p, out);
        dec_close(&d);
        return h;
}

/* ---- the streams of a codec ---- */

struct stream {
        char label[560];
        char path[512]; /* the archive (a record codec may look beside it) */
        uint8_t *raw;
        size_t len;
        struct recs want;    /* what it decodes to, all at once */
        struct recs written; /* ours: the records encoded, in the encoder's schema */
        int ours;            /* written by the codec's encoder here */
        /* how it was written, to write it again */
        struct tm_enc_opts opts;
        const char *enc;
};

struct suite {
        struct codec c;
        struct stream *s;
        size_t n;
        int begun, ready; /* suite_setup was entered, finished */
};

static struct stream *new_stream(struct suite *su)
{
        su->s = realloc(su->s, (su->n + 1) * sizeof *su->s);
        assert_non_null(su->s);
        struct stream *s = &su->s[su->n++];
        memset(s, 0, sizeof *s);
        return s;
}

/* -- rows of references: encode references (with sizes where the row takes them) -- */

static int enc_refs(const struct tm_rcodec *c, const struct tm_enc_opts *o,
                    const struct tm_ref *refs, const uint32_t *sizes, size_t n, struct tmt_buf *out,
                    struct tm_err *err)
{
        struct aref_enc w;
        int sized = aref_sized(c);
        out->len = 0;
        int r = aref_enc_open(&w, c, o, err);
        if (r < 0)
                return r;
        assert_true(w.len <= TM_ENC_MAX_OUT);
        for (size_t i = 0; i <= n && r >= 0; i++) {
                if (i == n)
                        r = aref_finish(&w, err);
                else
                        r = aref_put(&w, &refs[i], sized ? sizes ? sizes[i] : 1 : 0, i, err);
                if (r >= 0) /* a reference's bytes, or the encoder's last */
                        assert_true(r <= TM_ENC_MAX_OUT);
        }
        if (r >= 0)
                assert_int_equal(tmt_put(out, w.buf, w.len), 0);
        aref_enc_free(&w);
        return r < 0 ? r : 0;
}

static int has_encoder(const struct codec *c)
{
        return c->ac ? c->ac->enc_open != NULL : c->rc->enc_open != NULL;
}

/* The references of canonical records (type, address, size). */
static void refs_of(const struct recs *r, struct tm_ref *refs, uint32_t *sizes)
{
        for (size_t i = 0; i < r->n; i++) {
                const uint8_t *p = r->b.p + r->off[i];
                refs[i].type = p[0];
                memcpy(&refs[i].addr, p + 1, 8);
                memcpy(&sizes[i], p + 9, 4);
        }
}

static void add_address_ours(struct suite *su)
{
        const struct tm_rcodec *c = su->c.ac;
        const unsigned ntypes = aref_types(c);
        const int sized = aref_sized(c);
        static const unsigned units[] = {1, 2, 4};
        size_t n = 2500;
        struct tm_ref *refs = malloc(n * sizeof *refs);
        uint32_t *sizes = malloc(n * sizeof *sizes);
        uint64_t seed = 27;
        for (unsigned bits = 32; bits <= 64; bits += 32) {
                for (unsigned u = 0; u < 3; u++) {
                        for (unsigned gen = 0; gen < 2; gen++) {
                                if (gen == 0)
                                        ct_gen_program(refs, n, seed++, bits, units[u], ntypes);
                                else
                                        ct_gen_random(refs, n, seed++, bits, ntypes);
                                for (size_t i = 0; i < n; i++)
                                        sizes[i] = sized ? 1u << (refs[i].addr % 4) : 0;
                                struct tm_enc_opts o = {.addr_bits = bits, .unit = units[u]};
                                struct tmt_buf b = {0};
                                struct tm_err err = {0};
                                int r = enc_refs(c, &o, refs, sizes, n, &b, &err);
                                if (r == -EDOM || r == -ERANGE) { /* options that do not apply */
                                        free(b.p);
                                        continue;
                                }
                                if (r < 0)
                                        fail_msg("%s encode: %s", c->name, err.msg);
                                struct stream *s = new_stream(su);
                                snprintf(s->label, sizeof s->label, "%s bits %u unit %u %s",
                                         c->name, bits, units[u], gen ? "random" : "program");
                                s->raw = b.p;
                                s->len = b.len;
                                s->ours = 1;
                                s->opts = o;
                                for (size_t i = 0; i < n; i++)
                                        canon_ref(&s->written, &refs[i], sizes[i]);
                        }
                }
        }
        free(refs);
        free(sizes);
}

/* -- record codecs: records generated over the family's schema -- */

static int sink_buf(void *arg, const void *p, size_t n)
{
        return tmt_put(arg, p, n);
}

/* Is c a row of the address family (codecs/address/arec.c)? */
static int is_address(const struct tm_rcodec *c)
{
        return c->family == &tm_family_address;
}

/* Is c a row of references: an address row whose encodings are the
 * address widths and instruction units (codecs/address/arec.h)? */
static int is_ref_row(const struct tm_rcodec *c)
{
        for (const char *const *e = c->encodings; is_address(c) && e && *e; e++)
                if (strcmp(*e, "32/4") == 0)
                        return 1;
        return 0;
}

/* Are records of s records of e, kind for kind (s's kinds the first of
 * e's, of the same names, with the same fields in the same order)? */
static int schema_within(const struct tm_schema *s, const struct tm_schema *e)
{
        if (s->nkinds > e->nkinds)
                return 0;
        for (unsigned k = 0; k < s->nkinds; k++) {
                const struct tm_kind *a = &s->kind[k], *b = &e->kind[k];
                if (strcmp(a->name, b->name) != 0 || a->nfields != b->nfields)
                        return 0;
                for (unsigned f = 0; f < a->nfields; f++) {
                        const struct tm_field *x = &s->field[a->field[f]],
                                              *y = &e->field[b->field[f]];
                        if (strcmp(x->name, y->name) != 0 || x->type != y->type)
                                return 0;
                }
        }
        return 1;
}

/* The schema the records written through c are generated over, into
 * *out: that of a trace of no records it writes, when its records are
 * those the encoder takes (an address row's: the codec's types, the size
 * field where it has sizes; Laplace's "ref"), else the encoder's own
 * (enc_schema: a Meta-TF trace's schema is its DTD's). */
static void enc_schema(const struct tm_rcodec *c, struct tm_schema *out)
{
        struct tmt_buf b = {0};
        struct tm_renc *e = NULL;
        struct tm_err err = {0};
        struct tm_schema s;
        struct tm_rstate st;
        void *ctx = NULL;
        if (c->enc_open(NULL, sink_buf, &b, &e, &err) < 0 || c->enc_finish(e, &err) < 0)
                fail_msg("%s: an empty trace: %s", c->name, err.msg);
        if (c->open(b.p, b.len, "/nonexistent/conformance", &ctx, &s, &st, &err) < 0)
                fail_msg("%s: an empty trace it wrote does not open: %s", c->name, err.msg);
        if (c->close)
                c->close(ctx);
        free(b.p);
        c->enc_schema(out);
        if (schema_within(&s, out))
                *out = s;
}

/* The writer encodings of a record codec, NULL-terminated: the row's
 * (tm_rcodec.encodings); a row without names has its default encoding
 * (NULL) only, which is always tested too. */
static const char *const *rcodec_encodings(const struct tm_rcodec *c)
{
        static const char *const none[] = {NULL};
        return c->encodings ? c->encodings : none;
}

/* n records over schema s, shaped so that every encoding has work: each
 * number field walks (repeats, small steps, strides, jumps, 64-bit
 * values), variable fields of 0 to a few hundred bytes. Variable bytes
 * live in *arena (which must not move while the records are used). */
static struct tm_rec *gen_records(const struct tm_schema *s, size_t n, uint64_t seed,
                                  uint8_t **arena)
{
        struct tm_rec *r = calloc(n ? n : 1, sizeof *r);
        size_t acap = n * 64 + 4096, alen = 0;
        uint8_t *a = malloc(acap);
        assert_non_null(r);
        assert_non_null(a);
        uint64_t walk[TM_SCHEMA_FIELDS_MAX], step[TM_SCHEMA_FIELDS_MAX];
        for (unsigned f = 0; f < s->nfields; f++) {
                walk[f] = tmt_rand(&seed) >> (tmt_rand(&seed) % 64);
                step[f] = 16 * tmt_below(&seed, 5);
        }
        for (size_t i = 0; i < n; i++) {
                r[i].kind = (uint32_t)tmt_below(&seed, s->nkinds);
                const struct tm_kind *k = &s->kind[r[i].kind];
                unsigned slot = 0;
                for (unsigned p = 0; p < k->nfields; p++) {
                        unsigned f = k->field[p];
                        const struct tm_field *fd = &s->field[f];
                        if (!tm_field_is_var(fd)) {
                                unsigned how = (unsigned)tmt_below(&seed, 10);
                                if (how < 3)
                                        walk[f] += step[f];
                                else if (how < 6)
                                        walk[f] += tmt_below(&seed, 256) - 128;
                                else if (how < 7)
                                        walk[f] = tmt_rand(&seed) >> tmt_below(&seed, 64);
                                r[i].v[p] = walk[f];
                                continue;
                        }
                        size_t len =
                            tmt_below(&seed, 8) ? tmt_below(&seed, 16) : tmt_below(&seed, 300);
                        size_t bytes = fd->type == TM_FT_LIST ? len * 8 : len;
                        if (alen + bytes > acap)
                                bytes = len = 0;
                        for (size_t j = 0; j < bytes; j++)
                                a[alen + j] = fd->type == TM_FT_TEXT
                                                  ? (uint8_t)(' ' + tmt_below(&seed, 95))
                                                  : (uint8_t)tmt_rand(&seed);
                        r[i].v[p] = len;
                        r[i].var[slot++] = (const uint8_t *)(uintptr_t)alen;
                        alen += bytes;
                }
        }
        for (size_t i = 0; i < n; i++) /* offsets become pointers */
                for (unsigned j = 0; j < TM_REC_VAR_MAX; j++)
                        r[i].var[j] = a + (uintptr_t)r[i].var[j];
        *arena = a;
        return r;
}

/* Encode r[0..n) with c's encoding enc into out, in blocks of block
 * records (0: of 1, 2, 3, ... 64 records in turn, so that an encoder
 * that looks at a block meets every size). */
static int enc_blocks(const struct tm_rcodec *c, const char *enc, const struct tm_rec *r, size_t n,
                      size_t block, struct tmt_buf *out, struct tm_err *err)
{
        struct tm_renc *e = NULL;
        out->len = 0;
        int rc = c->enc_open(enc, sink_buf, out, &e, err);
        if (rc < 0)
                return rc;
        for (size_t i = 0, k = 1; i < n; i += k, k = k % 64 + 1) {
                if (block)
                        k = block;
                if (k > n - i)
                        k = n - i;
                rc = c->enc_put(e, &r[i], k, i, err);
                if (rc < 0) {
                        c->enc_free(e);
                        return rc;
                }
        }
        return c->enc_finish(e, err);
}

static int enc_records(const struct tm_rcodec *c, const char *enc, const struct tm_rec *r, size_t n,
                       struct tmt_buf *out, struct tm_err *err)
{
        return enc_blocks(c, enc, r, n, 0, out, err);
}

/* n records of the address schema s (v[0] the type, which is the kind;
 * v[1] the address; v[2] a size, where s has the field): a program-shaped
 * half, then a random half (codec_test.h), types below s's, addresses
 * below 2^bits. Instruction fetches are at multiples of 4, so that every
 * PDATS II unit (/1 /2 /4) can hold them. */
static struct tm_rec *gen_address_records(const struct tm_schema *s, size_t n, uint64_t seed,
                                          unsigned bits)
{
        struct tm_ref *refs = malloc((n ? n : 1) * sizeof *refs);
        struct tm_rec *r = calloc(n ? n : 1, sizeof *r);
        assert_non_null(refs);
        assert_non_null(r);
        size_t half = n / 2;
        ct_gen_program(refs, half, seed, bits, 4, s->nkinds);
        ct_gen_random(refs + half, n - half, seed, bits, s->nkinds);
        for (size_t i = 0; i < n; i++) {
                if (refs[i].type == TM_IFETCH)
                        refs[i].addr &= ~(uint64_t)3;
                r[i].kind = refs[i].type;
                r[i].v[0] = refs[i].type;
                r[i].v[1] = refs[i].addr;
                r[i].v[2] = s->nfields > 2 ? 1u << (refs[i].addr % 4) : 0;
        }
        free(refs);
        return r;
}

/* The records of workload w (0, 1, ...) of c, over schema fs, or NULL
 * past the last; *name says which. Variable bytes live in *arena. */
static struct tm_rec *workload(const struct tm_rcodec *c, const struct tm_schema *fs, unsigned w,
                               size_t n, uint8_t **arena, const char **name)
{
        *arena = NULL;
        if (!is_address(c)) {
                *name = "seed 1";
                struct tm_rec *r = w == 0 ? gen_records(fs, n, 1, arena) : NULL;
                if (r && c->enc_fit)
                        c->enc_fit(r, n);
                return r;
        }
        /* an address row: addresses of 32 bits, which every encoding holds,
         * then of 64 */
        *name = w == 0 ? "32-bit addresses" : "64-bit addresses";
        return w < 2 ? gen_address_records(fs, n, 27 + w, w == 0 ? 32 : 64) : NULL;
}

/* Is one of su's streams from first on b, byte for byte? */
static int have_stream(const struct suite *su, size_t first, const struct tmt_buf *b)
{
        for (size_t i = first; i < su->n; i++)
                if (su->s[i].len == b->len && memcmp(su->s[i].raw, b->p, b->len) == 0)
                        return 1;
        return 0;
}

static void add_record_ours(struct suite *su)
{
        const struct tm_rcodec *c = su->c.rc;
        struct tm_schema fs;
        enc_schema(c, &fs);
        const char *const *encs = rcodec_encodings(c);
        size_t n = 1000;
        const char *wname;
        uint8_t *arena;
        struct tm_rec *r;
        for (unsigned w = 0; (r = workload(c, &fs, w, n, &arena, &wname)); w++) {
                size_t first = su->n;
                for (size_t e = 0;; e++) {
                        const char *enc = e == 0 ? NULL : encs[e - 1];
                        if (e > 0 && !enc)
                                break;
                        /* 32-bit addresses cannot hold the 64-bit workload (the
                         * encoder says -ERANGE); the 32-bit one tests them */
                        if (is_address(c) && w == 1 && enc && strncmp(enc, "32", 2) == 0)
                                continue;
                        struct tm_err err = {0};
                        struct tmt_buf b = {0};
                        int rc = enc_records(c, enc, r, n, &b, &err);
                        if (e > 0 && (rc == -ERANGE || rc == -EDOM)) {
                                /* record.h: a wider encoding of the row holds them */
                                su->n--;
                                free(b.p);
                                continue;
                        }
                        if (rc < 0)
                                fail_msg("%s encoding %s: %s", c->name, enc ? enc : "(default)",
                                         err.msg);
                        /* a block at a time or a record at a time: the same bytes */
                        struct tmt_buf one = {0};
                        if (enc_blocks(c, enc, r, n, 1, &one, &err) < 0 || one.len != b.len ||
                            memcmp(one.p, b.p, b.len) != 0)
                                fail_msg("%s encoding %s: blocks and single records differ",
                                         c->name, enc ? enc : "(default)");
                        free(one.p);
                        /* an address encoding that writes these records as
                         * another did (din's and lackey's widths and units,
                         * "64" as the default) adds nothing to check */
                        if (is_address(c) && have_stream(su, first, &b)) {
                                free(b.p);
                                continue;
                        }
                        struct stream *s = new_stream(su);
                        snprintf(s->label, sizeof s->label, "%s %s %s", c->name,
                                 enc ? enc : "(default)", wname);
                        snprintf(s->path, sizeof s->path, "/nonexistent/conformance%s",
                                 c->suffix ? c->suffix : "");
                        s->raw = b.p;
                        s->len = b.len;
                        s->ours = 1;
                        s->enc = enc;
                        for (size_t i = 0; i < n; i++)
                                canon_rec(&s->written, &fs, &r[i], 0);
                }
                free(r);
                free(arena);
        }
}

/* -- streams an encoder with typed parameters wrote for the schema of its
 * input (tm_rcodec.enc_open_for): an address row's for the address schema
 * without sizes (din's 8 types, PDATS II's 3) and with lackey's 3 types
 * and sizes, in blocks of the smallest size its block parameter allows
 * (many blocks), on 2 threads. Each decodes to the records written, in
 * that schema; then every check takes it as it takes a sample. -- */

static void add_typed_ours(struct suite *su)
{
        const struct tm_rcodec *c = su->c.rc;
        static const struct {
                unsigned ntypes;
                int sized;
        } in[] = {{TM_NTYPES, 0}, {3, 0}, {3, 1}};
        if (!c || !c->enc_open_for || !is_address(c))
                return;
        for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
                struct tm_schema is, takes;
                tm_addr_schema(&is, in[i].ntypes, in[i].sized);
                c->enc_schema_for(&is, &takes);
                assert_int_equal(takes.nkinds, is.nkinds);
                assert_int_equal(takes.nfields, is.nfields);
                struct tm_renc_args a = {.in = &is, .threads = 2};
                for (unsigned p = 0; c->enc_params[p].name; p++) {
                        const struct tm_renc_param *q = &c->enc_params[p];
                        a.v[p] = strstr(q->name, "block") ? q->min : q->def;
                }
                size_t n = 1000;
                struct tm_rec *r = gen_address_records(&is, n, 41 + i, 64);
                struct tmt_buf b = {0};
                struct tm_renc *e = NULL;
                struct tm_err err = {0};
                if (c->enc_open_for(&a, sink_buf, &b, &e, &err) < 0 ||
                    c->enc_put(e, r, n, 0, &err) < 0 || c->enc_finish(e, &err) < 0)
                        fail_msg("%s for %u types%s: %s", c->name, in[i].ntypes,
                                 in[i].sized ? " with sizes" : "", err.msg);
                struct stream *s = new_stream(su);
                snprintf(s->label, sizeof s->label, "%s typed, %u types%s", c->name, in[i].ntypes,
                         in[i].sized ? " with sizes" : "");
                snprintf(s->path, sizeof s->path, "/nonexistent/conformance%s",
                         c->suffix ? c->suffix : "");
                s->raw = b.p;
                s->len = b.len;
                struct recs written = {0}, got = {0};
                for (size_t k = 0; k < n; k++)
                        canon_rec(&written, &is, &r[k], 1);
                struct pass pa = {.cap = 512};
                dec_all(&su->c, s->raw, s->len, s->path, &pa, &got);
                if (pa.rc != 0)
                        fail_msg("%s: %s", s->label, pa.err.msg);
                assert_same(s->label, &got, &written);
                recs_free(&written);
                recs_free(&got);
                free(r);
        }
}

/* -- samples: files in examples/ and tests/data/ that probe as the codec -- */

static int probes_as(const struct codec *c, const uint8_t *raw, size_t len)
{
        if (c->ac)
                return tm_rcodec_probe(raw, head_len(c, len)) == c->ac;
        /* as a trace is opened: the row that bids highest for the first
         * TM_RHEAD_MIN bytes */
        return tm_rcodec_probe(raw, len < TM_RHEAD_MIN ? len : TM_RHEAD_MIN) == c->rc;
}

/* The length of raw's first records within max bytes: a prefix ending on
 * a record boundary (where decoding without eof stops for more input). */
static size_t record_prefix(const struct codec *c, const uint8_t *raw, size_t len, size_t max,
                            const char *path)
{
        if (len <= max)
                return len;
        struct dec d;
        struct tm_err err = {0};
        struct recs tmp = {0};
        if (dec_open(&d, c, raw, len, path, &err) < 0)
                fail_msg("%s: %s", path, err.msg);
        size_t cut = max > d.hdr ? max : d.hdr;
        struct pass p = {.cap = 512, .more = 1};
        dec_run(&d, &d.st0, raw, cut, d.hdr, &p, &tmp);
        dec_close(&d);
        recs_free(&tmp);
        if (p.rc != 0)
                fail_msg("%s: %s", path, p.err.msg);
        return p.stop; /* without eof the pass stops where a record is cut */
}

static void add_samples_in(struct suite *su, const char *dir)
{
        DIR *dp = opendir(dir);
        if (!dp)
                return;
        struct dirent *de;
        while ((de = readdir(dp))) {
                if (de->d_name[0] == '.' || strcmp(de->d_name, "fuzz") == 0)
                        continue;
                char path[512];
                snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
                struct stat sb;
                if (stat(path, &sb) != 0)
                        continue;
                if (S_ISDIR(sb.st_mode)) {
                        add_samples_in(su, path);
                        continue;
                }
                if (!S_ISREG(sb.st_mode))
                        continue;
                struct tm_err err = {0};
                size_t len = 0;
                uint8_t *raw = tmt_raw_of(path, 0, &len, &err);
                if (!raw || !probes_as(&su->c, raw, len)) {
                        free(raw);
                        continue;
                }
                struct stream *s = new_stream(su);
                snprintf(s->label, sizeof s->label, "%s", path);
                snprintf(s->path, sizeof s->path, "%s", path);
                s->len = record_prefix(&su->c, raw, len, SAMPLE_MAX, path);
                s->raw = raw;
        }
        closedir(dp);
}

/* ---- set-up: a suite per codec ---- */

static void want_of_sample(struct suite *su, struct stream *s)
{
        struct pass p = {.cap = 512};
        if (dec_all(&su->c, s->raw, s->len, s->path, &p, &s->want) < 0 || p.rc != 0)
                fail_msg("%s: %s", s->label, p.err.msg);
}

static int suite_setup(void **state)
{
        struct suite *su = *state;
        if (su->ready)
                return 0; /* made by an earlier test of this codec */
        /* not the checks on what a failed set-up left */
        if (su->begun)
                fail_msg("%s: set-up failed (the codec's first test says why)", su->c.name);
        su->begun = 1;
        if (has_encoder(&su->c)) {
                if (su->c.ac)
                        add_address_ours(su);
                else
                        add_record_ours(su);
                add_typed_ours(su);
        }
        add_samples_in(su, TM_SOURCE_DIR "/examples");
        add_samples_in(su, TM_SOURCE_DIR "/tests/data");
        for (size_t i = 0; i < su->n; i++)
                want_of_sample(su, &su->s[i]);
        if (su->n == 0)
                fail_msg("%s: no input: no encoder and no sample in examples/ or tests/data/",
                         su->c.name);
        su->ready = 1;
        return 0;
}

/* ---- the checks ---- */

/* An address row's encoder refuses a record whose type field is not its
 * kind (tm_addr_schema's rule), also when the two agree in their low 32
 * bits (a tm_ref's type), rather than write another reference. */
static void address_refusals(const struct tm_rcodec *c)
{
        struct tm_rec r = {.kind = TM_WRITE, .v = {TM_WRITE + (1ull << 32), 0x1000, 4}};
        struct tmt_buf b = {0};
        struct tm_err err = {0};
        if (enc_records(c, NULL, &r, 1, &b, &err) != -EINVAL)
                fail_msg("%s: a write whose type field is 2^32 + 1: not refused", c->name);
        r.v[0] = TM_READ;
        if (enc_records(c, NULL, &r, 1, &b, &err) != -EINVAL)
                fail_msg("%s: a write whose type field says read: not refused", c->name);
        free(b.p);
}

/* r's variable bytes (r of schema s) copied into one block, r->var[]
 * pointed at it; the block (NULL when r has none), for the caller to free. */
static uint8_t *own_vars(const struct tm_schema *s, struct tm_rec *r)
{
        const struct tm_kind *k = &s->kind[r->kind];
        size_t total = 0, at = 0;
        for (unsigned p = 0; p < k->nfields; p++) {
                const struct tm_field *f = &s->field[k->field[p]];
                if (tm_field_is_var(f))
                        total += (size_t)(f->type == TM_FT_LIST ? 8 * r->v[p] : r->v[p]);
        }
        uint8_t *b = total ? malloc(total) : NULL;
        for (unsigned p = 0, slot = 0; p < k->nfields && total; p++) {
                const struct tm_field *f = &s->field[k->field[p]];
                if (!tm_field_is_var(f))
                        continue;
                size_t n = (size_t)(f->type == TM_FT_LIST ? 8 * r->v[p] : r->v[p]);
                if (n)
                        memcpy(b + at, r->var[slot], n);
                r->var[slot++] = b + at;
                at += n;
        }
        return b;
}

static void check_roundtrip(void **state)
{
        struct suite *su = *state;
        const struct codec *c = &su->c;
        if (!has_encoder(c))
                skip(); /* decode-only: its samples are checked by the other tests */
        struct recs got = {0};
        struct tmt_buf again = {0};
        for (size_t i = 0; i < su->n; i++) {
                struct stream *s = &su->s[i];
                struct pass p = {.cap = 512};
                struct tm_err err = {0};
                if (!s->ours)
                        continue;
                dec_all(c, s->raw, s->len, s->path, &p, &got);
                if (p.rc != 0)
                        fail_msg("%s: %s", s->label, p.err.msg);
                if (c->ac) {
                        assert_same(s->label, &got, &s->written);
                        /* the decoded references, written again: the same bytes */
                        struct tm_ref *refs = malloc((got.n + 1) * sizeof *refs);
                        uint32_t *sizes = malloc((got.n + 1) * sizeof *sizes);
                        refs_of(&got, refs, sizes);
                        assert_int_equal(
                            enc_refs(c->ac, &s->opts, refs, sizes, got.n, &again, &err), 0);
                        free(refs);
                        free(sizes);
                } else {
                        /* the decoded records in the family schema compare with the written */
                        struct recs fam = {0};
                        struct dec d;
                        assert_true(dec_open(&d, c, s->raw, s->len, s->path, &err) >= 0);
                        struct tm_schema fs_buf;
                        enc_schema(c->rc, &fs_buf);
                        const struct tm_schema *fs = &fs_buf;
                        struct tm_rec *r = calloc(got.n + 1, sizeof *r);
                        uint8_t **owned = calloc(got.n + 1, sizeof *owned);
                        size_t m = 0;
                        /* decoded again into tm_recs; their variable bytes copied
                         * (a decoder's per-thread buffer lives until its next call) */
                        struct tm_rstate st;
                        memcpy(&st, &d.st0.r, sizeof st);
                        size_t pos = d.hdr;
                        for (;;) {
                                size_t used = 0;
                                static struct tm_rec tmp[256];
                                ssize_t n = c->rc->decode(d.ctx, &st, s->raw + pos, s->len - pos, 1,
                                                          pos, &used, tmp, 256, &err);
                                assert_true(n >= 0);
                                for (ssize_t k = 0; k < n; k++) {
                                        assert_true(m < got.n);
                                        r[m] = tmp[k];
                                        owned[m] = own_vars(&d.schema, &r[m]);
                                        /* into the family schema, by names */
                                        const struct tm_kind *dk = &d.schema.kind[tmp[k].kind];
                                        int fk = tm_schema_kind(fs, dk->name);
                                        if (fk < 0)
                                                fail_msg("%s: kind %s is not in %s", s->label,
                                                         dk->name, fs->name);
                                        r[m].kind = (uint32_t)fk;
                                        r[m].section = 0;
                                        canon_rec(&fam, fs, &r[m], 0);
                                        m++;
                                }
                                pos += used;
                                if (n == 0 && used == 0)
                                        break;
                        }
                        assert_same(s->label, &fam, &s->written);
                        assert_int_equal(enc_records(c->rc, s->enc, r, m, &again, &err), 0);
                        dec_close(&d);
                        for (size_t k = 0; k < m; k++)
                                free(owned[k]);
                        free(owned);
                        free(r);
                        recs_free(&fam);
                }
                if (again.len != s->len || memcmp(again.p, s->raw, s->len) != 0)
                        fail_msg("%s: written again from its records: %zu bytes, not the same %zu",
                                 s->label, again.len, s->len);
        }
        /* a sample's records through the codec's default encoding decode to themselves */
        for (size_t i = 0; i < su->n; i++) {
                struct stream *s = &su->s[i];
                if (s->ours || !c->ac)
                        continue;
                struct tm_ref *refs = malloc((s->want.n + 1) * sizeof *refs);
                uint32_t *sizes = malloc((s->want.n + 1) * sizeof *sizes);
                refs_of(&s->want, refs, sizes);
                struct tm_enc_opts o = {.addr_bits = 64, .unit = 1};
                struct tm_err err = {0};
                if (enc_refs(c->ac, &o, refs, sizes, s->want.n, &again, &err) < 0)
                        fail_msg("%s written as %s: %s", s->label, c->name, err.msg);
                struct pass p = {.cap = 512};
                dec_all(c, again.p, again.len, s->path, &p, &got);
                assert_int_equal(p.rc, 0);
                /* a row's encoder takes the sizes its decoder gives: they travel */
                assert_same(s->label, &got, &s->want);
                free(refs);
                free(sizes);
        }
        if (c->rc && is_address(c->rc))
                address_refusals(c->rc);
        free(again.p);
        recs_free(&got);
}

static void check_windows(void **state)
{
        struct suite *su = *state;
        static const size_t pieces[] = {1, 2, 3, 5, 8, 13, 64, 1000, 4096};
        static const size_t caps[] = {1, 2, 7, 300};
        struct recs got = {0};
        for (size_t i = 0; i < su->n; i++) {
                struct stream *s = &su->s[i];
                for (size_t pi = 0; pi < sizeof pieces / sizeof *pieces; pi++) {
                        for (size_t ci = 0; ci < sizeof caps / sizeof *caps; ci++) {
                                if (pieces[pi] < 8 && caps[ci] > 7 && s->len > 20000)
                                        continue; /* the slow pairs on the small streams */
                                struct pass p = {.piece = pieces[pi], .cap = caps[ci]};
                                dec_all(&su->c, s->raw, s->len, s->path, &p, &got);
                                if (p.rc != 0)
                                        fail_msg("%s piece %zu cap %zu: %s", s->label, pieces[pi],
                                                 caps[ci], p.err.msg);
                                char what[700];
                                snprintf(what, sizeof what, "%s piece %zu cap %zu", s->label,
                                         pieces[pi], caps[ci]);
                                assert_same(what, &got, &s->want);
                        }
                }
        }
        recs_free(&got);
}

/* Decode record by record (cap 1); after each, resume from a copy of the
 * state in other windows: the next records must be the same. */
static void check_checkpoints(void **state)
{
        struct suite *su = *state;
        struct recs got = {0}, rest = {0};
        for (size_t i = 0; i < su->n; i++) {
                struct stream *s = &su->s[i];
                struct dec d;
                struct tm_err err = {0};
                assert_true(dec_open(&d, &su->c, s->raw, s->len, s->path, &err) >= 0);
                struct tm_rstate st, ck;
                memcpy(&st, &d.st0, sizeof st);
                size_t pos = d.hdr, every = s->want.n / 6 + 1;
                recs_clear(&got);
                (void)err;
                for (;;) {
                        /* the checkpoint: a copy of the state's bytes, the original scribbled on */
                        memset(&ck, 0xa5, sizeof ck);
                        memcpy(&ck, &st, d.ssize);
                        size_t k = got.n;
                        struct pass p = {
                            .piece = k % 3 ? 4096 : 1 + k % 11, .cap = 1 + k % 5, .max = CK_AHEAD};
                        if (k % every == 0)
                                p.max = 0; /* to the end */
                        recs_clear(&rest);
                        dec_run(&d, &ck, s->raw, s->len, pos, &p, &rest);
                        if (p.rc < 0)
                                fail_msg("%s: resumed after record %zu: %s", s->label, k,
                                         p.err.msg);
                        size_t left = s->want.n - k;
                        size_t want = p.max && left > CK_AHEAD ? CK_AHEAD : left;
                        if (rest.n != want)
                                fail_msg("%s: resumed after record %zu: %zu records, want %zu",
                                         s->label, k, rest.n, want);
                        for (size_t j = 0; j < rest.n; j++)
                                if (!rec_eq(&rest, j, &s->want, k + j))
                                        fail_msg("%s: resumed after record %zu: record %zu differs",
                                                 s->label, k, k + j);
                        /* on to the next record boundary */
                        struct pass one = {.piece = 8192, .cap = 1, .max = 1};
                        size_t had = got.n;
                        dec_run(&d, &st, s->raw, s->len, pos, &one, &got);
                        if (one.rc < 0)
                                fail_msg("%s: %s", s->label, one.err.msg);
                        pos = one.stop;
                        if (got.n == had)
                                break;
                }
                assert_int_equal(got.n, s->want.n);
                dec_close(&d);
        }
        recs_free(&got);
        recs_free(&rest);
}

/* Decode from pos with a state nobody checked but state_ok: whatever it
 * yields, no overrun and errors with a message (dec_run asserts both). */
static void decode_from(struct dec *d, void *st, const struct stream *s, size_t pos)
{
        struct recs out = {0};
        struct pass p = {.piece = 4096, .cap = 64, .max = 4096};
        dec_run(d, st, s->raw, s->len, pos, &p, &out);
        recs_free(&out);
}

static void check_hostile_state(void **state)
{
        struct suite *su = *state;
        uint64_t seed = 0x5eed;
        unsigned refused = 0, tried = 0;
        for (size_t i = 0; i < su->n; i++) {
                struct stream *s = &su->s[i];
                struct dec d;
                struct tm_err err = {0};
                assert_true(dec_open(&d, &su->c, s->raw, s->len, s->path, &err) >= 0);
                struct tm_rstate st, bad;
                memcpy(&st, &d.st0, sizeof st);
                size_t pos = d.hdr;
                struct recs sink = {0};
                for (;;) {
                        {
                                /* random bytes, and the true state with one or two bytes changed */
                                for (unsigned t = 0; t < 3; t++) {
                                        memcpy(&bad, &st, sizeof bad);
                                        if (t == 0)
                                                for (size_t b = 0; b < d.ssize; b++)
                                                        ((uint8_t *)&bad)[b] =
                                                            (uint8_t)tmt_rand(&seed);
                                        for (unsigned m = 0; t > 0 && m < t; m++)
                                                ((uint8_t *)&bad)[tmt_below(&seed, d.ssize)] ^=
                                                    (uint8_t)(1 + tmt_below(&seed, 255));
                                        tried++;
                                        if (!state_ok(&d, &bad)) {
                                                refused++;
                                                continue;
                                        }
                                        decode_from(&d, &bad, s, pos);
                                }
                        }
                        /* on, 64 records */
                        struct pass on = {.piece = 8192, .cap = 64, .max = 64};
                        dec_run(&d, &st, s->raw, s->len, pos, &on, &sink);
                        assert_true(on.rc >= 0);
                        pos = on.stop;
                        if (sink.n == 0)
                                break;
                        recs_clear(&sink);
                }
                recs_free(&sink);
                dec_close(&d);
        }
        int has_check = (su->c.ac ? su->c.ac : su->c.rc)->state_ok != NULL;
        if (has_check && refused == 0)
                fail_msg("%s: state_ok refused none of %u random and changed states", su->c.name,
                         tried);
        printf("%s: %u hostile states, %u refused by state_ok, the rest decoded\n", su->c.name,
               tried, refused);
}

/* Is p text (printable, tab, newline)? A cut record of a text format can
 * be a shorter valid line; of a binary one never. */
static int is_text(const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((p[i] < 0x20 || p[i] > 0x7e) && p[i] != '\n' && p[i] != '\t' && p[i] != '\r')
                        return 0;
        return 1;
}

/* An error names "raw offset N" with N at most len. */
static void assert_offset_named(const char *what, const struct tm_err *err, size_t len)
{
        const char *at = strstr(err->msg, "raw offset ");
        if (!at)
                fail_msg("%s: error without \"raw offset\": %s", what, err->msg);
        unsigned long long off = strtoull(at + 11, NULL, 10);
        if (off > len)
                fail_msg("%s: raw offset %llu past the input's %zu bytes: %s", what, off, len,
                         err->msg);
}

/* Decode raw (damaged) all at once and in windows: the same outcome, and
 * the first `intact` records those of want. Returns the outcome. */
static int damaged(const struct suite *su, const struct stream *s, const uint8_t *raw, size_t len,
                   size_t intact, uint64_t *seed, const char *what)
{
        struct recs a = {0}, b = {0};
        struct pass pa = {.cap = 512, .max = s->want.n + 64};
        struct pass pb = {
            .piece = 1 + tmt_below(seed, 40), .cap = 1 + tmt_below(seed, 9), .max = s->want.n + 64};
        int ha = dec_all(&su->c, raw, len, s->path, &pa, &a);
        int hb = dec_all(&su->c, raw, len, s->path, &pb, &b);
        assert_int_equal(ha < 0, hb < 0);
        if (ha < 0) { /* the header: refused with a message (dec_all checks) */
                assert_true(ha == -EIO || ha == -ENOTSUP || ha == -EINVAL);
                recs_free(&a);
                recs_free(&b);
                return ha;
        }
        /* a failing call returns none of what it made: compare the common part */
        size_t common = a.n < b.n ? a.n : b.n;
        assert_recs(what, &a, 0, &b, 0, common);
        if ((pa.rc < 0 || pb.rc < 0) && pa.rc != 1 && pb.rc != 1) {
                if (pa.rc >= 0 || pb.rc >= 0)
                        fail_msg("%s: fails in one pass only (%d, %d): %s%s", what, pa.rc, pb.rc,
                                 pa.err.msg, pb.err.msg);
                assert_true(pa.rc == -EIO || pa.rc == -ENOTSUP);
                assert_true(pb.rc == -EIO || pb.rc == -ENOTSUP);
                assert_offset_named(what, &pa.err, len);
                assert_offset_named(what, &pb.err, len);
        } else if (pa.rc == 1 || pb.rc == 1) {
                /* a cap: the common part is all there is to compare */
        } else {
                assert_int_equal(a.n, b.n);
        }
        size_t k = intact < a.n ? intact : a.n;
        if (pa.rc == 0 && a.n < intact)
                fail_msg("%s: %zu records, %zu before the damage", what, a.n, intact);
        assert_recs(what, &a, 0, &s->want, 0, k);
        recs_free(&a);
        recs_free(&b);
        return pa.rc;
}

/* The records decoding finds in raw[0..at) when more input may follow
 * (no eof): those of the whole records there, which nothing after at can
 * change. They must be the first records of the stream. Returns their
 * number; *stop receives where that decoding stopped (at, unless a record
 * is cut there), or 0 when the header is cut. */
static size_t prefix_records(const struct suite *su, const struct stream *s, const uint8_t *raw,
                             size_t at, size_t *stop)
{
        struct dec d;
        struct tm_err err = {0};
        struct recs got = {0};
        *stop = 0;
        if (dec_open(&d, &su->c, raw, at, s->path, &err) < 0) {
                dec_close(&d);
                return 0;
        }
        struct pass p = {.piece = 4096, .cap = 512, .more = 1, .max = s->want.n + 1};
        dec_run(&d, &d.st0, raw, at, d.hdr, &p, &got);
        dec_close(&d);
        if (p.rc != 0)
                fail_msg("%s: its first %zu bytes without eof: %s", s->label, at, p.err.msg);
        if (got.n > s->want.n)
                fail_msg("%s: its first %zu bytes give %zu records, more than all of it", s->label,
                         at, got.n);
        assert_recs(s->label, &got, 0, &s->want, 0, got.n);
        size_t n = got.n;
        recs_free(&got);
        *stop = p.stop;
        return n;
}

/* How many records raw[0..len) decodes to with eof (-1 on an error). */
static long decoded_at_eof(const struct suite *su, const struct stream *s, const uint8_t *raw,
                           size_t len)
{
        struct recs g = {0};
        struct pass q = {.cap = 512, .max = s->want.n + 1};
        dec_all(&su->c, raw, len, s->path, &q, &g);
        long n = q.rc == 0 ? (long)g.n : -1;
        recs_free(&g);
        return n;
}

static void check_corrupt(void **state)
{
        struct suite *su = *state;
        uint64_t seed = 0xc0de;
        char what[700];
        for (size_t i = 0; i < su->n; i++) {
                struct stream *s = &su->s[i];
                int text = is_text(s->raw, s->len);
                uint8_t *buf = malloc(s->len + 1);
                /* cut: at every byte of a small stream, else at 600 places */
                size_t small = 3000 / DAMAGE_DIV;
                size_t cuts = s->len < small ? s->len : 250 / DAMAGE_DIV, stop;
                for (size_t j = 0; j < cuts; j++) {
                        size_t cut = s->len < small ? j : tmt_below(&seed, s->len);
                        memcpy(buf, s->raw, cut);
                        size_t whole = prefix_records(su, s, buf, cut, &stop);
                        snprintf(what, sizeof what, "%s cut at %zu", s->label, cut);
                        int rc = damaged(su, s, buf, cut, whole, &seed, what);
                        /* a binary record cut by the end: -EIO. A record codec may hold
                         * input back that is not a cut record (Meta-TF keeps a streamed
                         * chunk unconsumed): there it may also end with no record more
                         * than the whole ones */
                        if (!text && stop && stop < cut && rc != -EIO &&
                            (su->c.ac || rc != 0 || decoded_at_eof(su, s, buf, cut) != (long)whole))
                                fail_msg("%s: a record cut at the end: %d, not -EIO", what, rc);
                }
                /* bytes changed (what follows may change too: a record's value
                 * can depend on those before it) */
                for (size_t j = 0; j < 200 / DAMAGE_DIV && s->len; j++) {
                        size_t at = tmt_below(&seed, s->len);
                        size_t whole = prefix_records(su, s, s->raw, at, &stop);
                        memcpy(buf, s->raw, s->len);
                        buf[at] ^= (uint8_t)(1 + tmt_below(&seed, 255));
                        snprintf(what, sizeof what, "%s byte %zu changed", s->label, at);
                        damaged(su, s, buf, s->len, whole, &seed, what);
                }
                free(buf);
        }
}

/* ---- one test of each check for every row of both tables ---- */

int main(void)
{
        const struct tm_registry *reg = tm_registry();
        size_t nc = reg->n;
        for (size_t i = 0; i < reg->n; i++)
                nc += is_ref_row(reg->row[i]);
        struct suite *su = calloc(nc, sizeof *su);
        size_t k = 0;
        for (size_t i = 0; i < reg->n; i++) {
                const struct tm_rcodec *ac = reg->row[i];
                if (is_ref_row(ac))
                        su[k++].c = (struct codec){.ac = ac, .name = ac->name};
        }
        for (size_t i = 0; i < reg->n; i++, k++)
                su[k].c = (struct codec){.rc = reg->row[i], .name = reg->row[i]->name};
        static const struct {
                const char *name;
                CMUnitTestFunction f;
        } checks[] = {
            {"round trip", check_roundtrip},    {"windows", check_windows},
            {"checkpoints", check_checkpoints}, {"hostile state", check_hostile_state},
            {"corrupt", check_corrupt},
        };
        size_t nchecks = sizeof checks / sizeof *checks, nt = nc * nchecks;
        struct CMUnitTest *t = calloc(nt, sizeof *t);
        char(*names)[64] = calloc(nt, sizeof *names);
        for (size_t i = 0; i < nc; i++) {
                for (size_t j = 0; j < nchecks; j++) {
                        size_t x = i * nchecks + j;
                        snprintf(names[x], sizeof names[x], "%s: %s", su[i].c.name, checks[j].name);
                        t[x] = (struct CMUnitTest){.name = names[x],
                                                   .test_func = checks[j].f,
                                                   .setup_func = suite_setup,
                                                   .initial_state = &su[i]};
                }
        }
        int fails = _cmocka_run_group_tests("conformance", t, nt, NULL, NULL);
        for (size_t i = 0; i < nc; i++) {
                for (size_t j = 0; j < su[i].n; j++) {
                        free(su[i].s[j].raw);
                        recs_free(&su[i].s[j].want);
                        recs_free(&su[i].s[j].written);
                }
                free(su[i].s);
        }
        free(su);
        free(t);
        free(names);
        return fails;
}
