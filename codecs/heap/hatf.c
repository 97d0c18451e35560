/* HATF 1.0 decoder: the field state machine and tm_rcodec_hatf. The
 * layout and its decisions are in hatf.h and docs/formats/hatf.md. */
#include "hatf.h"

#include <errno.h>
#include <string.h>

#include "hatf_impl.h"
#include "heap_stats.h"

/* The writer encodings (hatf_enc.c), "best" (the default) first. */
static const char *const hatf_encodings[] = {
    "best",        "naive",      "smallsize", "samesize", "baseoffset1",
    "baseoffset2", "baseoffset", "stride",    NULL,
};

static const char *const interp_names[HATF_NI] = {"none", "default", "baseOffset", "delta",
                                                  "stride"};

void hatf_state_init(struct hatf_state *s)
{
        memset(s, 0, sizeof *s);
        for (unsigned f = 0; f < HATF_NF; f++) {
                struct hatf_fstate *fs = &s->f[f];
                fs->lastnz = f == HATF_F_ATTR ? HATF_W_V1 : 4;
                if (f == HATF_F_SIZE || f == HATF_F_ADDRESS) {
                        fs->width = 4;
                        fs->interp = HATF_I_NONE;
                } else {
                        fs->width = 0;
                        fs->interp = HATF_I_DEFAULT;
                }
        }
}

int hatf_meta_len(const uint8_t *p)
{
        if (p[1] == HATF_OP_SIZE)
                return 4;
        if (p[1] != HATF_OP_INTERP)
                return -1;
        switch (p[3]) {
        case HATF_I_NONE:
                return 4;
        case HATF_I_DEFAULT:
        case HATF_I_BASEOFFSET:
        case HATF_I_DELTA:
                return 12;
        case HATF_I_STRIDE:
                return 20;
        default:
                return -1;
        }
}

static int width_ok(unsigned field, unsigned w)
{
        if (w == 0 || w == 1 || w == 2 || w == 4 || w == 8)
                return 1;
        return field == HATF_F_ATTR && (w == HATF_W_V1 || w == HATF_W_V2);
}

int hatf_meta_apply(struct hatf_state *s, const uint8_t *p, const char **why)
{
        unsigned field = p[2];
        if (field >= HATF_NF) {
                *why = "metadata names an unknown field";
                return -1;
        }
        struct hatf_fstate *fs = &s->f[field];
        if (p[1] == HATF_OP_SIZE) {
                if (!width_ok(field, p[3])) {
                        *why = field == HATF_F_ATTR ? "bad attributes width"
                                                    : "bad field width (v1/v2 are for attributes)";
                        return -1;
                }
                fs->width = p[3];
                if (p[3])
                        fs->lastnz = p[3];
                return 0;
        }
        unsigned in = p[3];
        if (field == HATF_F_ATTR && in != HATF_I_NONE && in != HATF_I_DEFAULT) {
                *why = "attributes take only the none and default interpretations";
                return -1;
        }
        fs->interp = (uint8_t)in;
        switch (in) {
        case HATF_I_NONE:
                fs->width = fs->lastnz;
                break;
        case HATF_I_DEFAULT:
                fs->width = 0;
                fs->arg = hatf_get_be(p + 4, 8);
                break;
        case HATF_I_BASEOFFSET:
                fs->width = fs->lastnz;
                fs->arg = hatf_get_be(p + 4, 8);
                break;
        case HATF_I_DELTA:
                fs->width = fs->lastnz;
                fs->prev = hatf_get_be(p + 4, 8);
                break;
        default: /* stride */
                fs->width = 0;
                fs->prev = hatf_get_be(p + 4, 8);
                fs->arg = hatf_get_be(p + 12, 8);
                break;
        }
        return 0;
}

/* ---- the per-kind plan (hatf_impl.h) ---- */

void hatf_plan_kinds(const struct hatf_state *s, struct hatf_kplan *kp)
{
        for (unsigned kind = 0; kind < TM_HK_COMMENT; kind++) {
                const struct tm_kind *k = &tm_schema_heap.kind[kind];
                struct hatf_kplan *p = &kp[kind];
                unsigned at = 1;
                p->nf = k->nfields;
                p->varpos = HATF_KP_NONE;
                for (unsigned i = 0; i < k->nfields; i++) {
                        unsigned hf = hatf_field_of(k->field[i]);
                        const struct hatf_fstate *fs = &s->f[hf];
                        unsigned w = hatf_stored_width(fs);
                        p->hf[i] = (uint8_t)hf;
                        p->w[i] = (uint8_t)w;
                        if (hf == HATF_F_ATTR && fs->interp == HATF_I_NONE &&
                            (fs->width == HATF_W_V1 || fs->width == HATF_W_V2)) {
                                p->varpos = (uint8_t)i;
                                p->varoff = (uint8_t)at;
                        }
                        at += w;
                }
                p->fixed = (uint8_t)at;
        }
}

struct plan_cache {
        uint64_t gen;                    /* 0: empty */
        struct hatf_fstate key[HATF_NF]; /* prev zeroed */
        struct hatf_kplan plan[TM_HK_COMMENT];
};

static _Thread_local struct plan_cache plan_cache;

/* Out of line: called once per decode call, and inlined into hatf_decode
 * (which hidden visibility allows) it costs the record loop registers:
 * 3% more instructions a record, 10-20% more time (bench/text_bench). */
__attribute__((noinline)) const struct hatf_kplan *hatf_plans(const struct hatf_state *s,
                                                              uint64_t *gen)
{
        struct hatf_fstate key[HATF_NF];
        memcpy(key, s->f, sizeof key);
        for (unsigned f = 0; f < HATF_NF; f++)
                key[f].prev = 0;
        struct plan_cache *c = &plan_cache;
        if (!c->gen || memcmp(c->key, key, sizeof key) != 0) {
                hatf_plan_kinds(s, c->plan);
                memcpy(c->key, key, sizeof key);
                c->gen++;
        }
        if (gen)
                *gen = c->gen;
        return c->plan;
}

static int hatf_probe(const uint8_t *head, size_t n)
{
        static const uint8_t sig[HATF_SIGNATURE_LEN] = {TM_HK_COMMENT, 0,   8,   'H', 'A', 'T',
                                                        'F',           ' ', '1', '.', '0'};
        return n >= sizeof sig && memcmp(head, sig, sizeof sig) == 0 ? TM_BID_MAGIC : 0;
}

/* The signature at offset 0 marks the file; it is not one of the trace's
 * records (a re-pack would double it). */
int hatf_is_signature(const uint8_t *p, size_t n)
{
        return n == HATF_SIGNATURE_LEN && hatf_probe(p, n) != 0;
}

static ssize_t hatf_decode(void *ctx, struct tm_rstate *rs, const uint8_t *in, size_t len, int eof,
                           uint64_t raw_off, size_t *used, struct tm_rec *out, size_t cap,
                           struct tm_err *err)
{
        (void)ctx;
        struct hatf_state *s = (struct hatf_state *)rs->b;
        size_t pos = 0, n = 0, rl = 0;
        const struct hatf_kplan *plan = hatf_plans(s, NULL);
        while (n < cap && pos < len) {
                const uint8_t *p = in + pos;
                int step = hatf_peek(plan, p, len - pos, raw_off + pos, &rl, err);
                if (step < 0)
                        return step;
                if (step == HATF_STEP_MORE)
                        break;
                if (step == HATF_STEP_META) {
                        const char *why;
                        if (hatf_meta_apply(s, p, &why) < 0)
                                return tm_err_set(err, -EIO, "raw offset %llu: %s",
                                                  (unsigned long long)(raw_off + pos), why);
                        plan = hatf_plans(s, NULL);
                } else if (step == HATF_STEP_REC) {
                        hatf_rec_decode(s, plan, p, &out[n++]);
                }
                pos += rl;
        }
        *used = pos;
        if (eof && pos < len && n < cap)
                return tm_err_set(err, -EIO, "raw offset %llu: truncated %s record",
                                  (unsigned long long)(raw_off + pos),
                                  in[pos] == HATF_TAG_METADATA ? "metadata"
                                  : in[pos] < TM_HK_N          ? tm_schema_heap.kind[in[pos]].name
                                                               : "unknown");
        return (ssize_t)n;
}

static int hatf_open(const uint8_t *head, size_t n, const char *path, void **ctx,
                     struct tm_schema *schema, struct tm_rstate *st, struct tm_err *err)
{
        (void)head;
        (void)n;
        (void)path;
        (void)err;
        *ctx = NULL;
        *schema = tm_schema_heap;
        hatf_state_init((struct hatf_state *)st->b);
        return 0; /* no header: the signature is a comment record */
}

static void hatf_close(void *ctx)
{
        (void)ctx;
}

/* Every field as hatf_state_init and hatf_meta_apply can leave it. */
static int hatf_state_ok(const void *ctx, const struct tm_rstate *st)
{
        (void)ctx;
        const struct hatf_state *s = (const struct hatf_state *)st->b;
        for (unsigned f = 0; f < HATF_NF; f++) {
                const struct hatf_fstate *fs = &s->f[f];
                if (!width_ok(f, fs->width) || !fs->lastnz || !width_ok(f, fs->lastnz) ||
                    fs->interp >= HATF_NI ||
                    (f == HATF_F_ATTR && fs->interp != HATF_I_NONE && fs->interp != HATF_I_DEFAULT))
                        return 0;
        }
        return 1;
}

static void hatf_enc_schema(struct tm_schema *s)
{
        *s = tm_schema_heap;
}

/* Used by tests and tools to name an interpretation. */
const char *hatf_interp_name(unsigned in)
{
        return in < HATF_NI ? interp_names[in] : "unknown";
}

const struct tm_rcodec tm_rcodec_hatf = {
    .name = "hatf",
    .suffix = ".hatf",
    .family = &tm_family_heap,
    .probe = hatf_probe,
    .open = hatf_open,
    .close = hatf_close,
    .state_size = sizeof(struct hatf_state),
    .state_ok = hatf_state_ok,
    .decode = hatf_decode,
    .enc_open = hatf_enc_open,
    .enc_put = hatf_enc_put,
    .enc_finish = hatf_enc_finish,
    .enc_free = hatf_enc_free,
    .encodings = hatf_encodings,
    .enc_schema = hatf_enc_schema,
    .text_of = hatf_text_of,
};
