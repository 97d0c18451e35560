/* hatf_text_impl.h: HATF's text decoder (codecs/heap/hatf_text.h) for
 * x86-64 with AVX-512, included by codecs/heap/hatf_text.c, which chooses
 * it at run time (hatf_text_arch_ok()).
 *
 * The common records (a data kind whose attributes are the default empty
 * value, so every field is a number) are decoded in one AVX-512 register
 * each: the record's bytes are loaded whole, one byte permutation (from
 * a per-kind table remade at metadata records, like the decoder's plan)
 * puts each field's big-endian bytes into its 64-bit lane, variable
 * shifts sign-extend the signed ones (baseOffset, delta), and the base of
 * each lane (the default or base value, the previous value, or both for
 * stride) comes from two registers holding every field's argument and
 * previous value; a realloc's new address adds what the old one moved
 * (delta and stride chain them). The values go to a batch of MINI
 * 64-byte records (struct tm_text_num, in L1) that tm_text_nums
 * renders with the view's own line renderer. Anything else (comments,
 * attributes with bytes, metadata) takes hatf.c's decoder into a small
 * batch of struct tm_rec, and tm_text_lines (slow_run).
 *
 * Before decoding a record its line's worst case is known without
 * decoding it: the kind's fixed_max (every number at its longest,
 * variable fields empty) plus 3 characters for each byte the record
 * occupies (a variable field's bytes are among them; a default attribute
 * is 8 bytes), so the renderer never stops short of a record the decoder
 * has consumed. */
#ifndef TM_X86_HATF_TEXT_IMPL_H
#define TM_X86_HATF_TEXT_IMPL_H

#include <immintrin.h>

/* What the functions below are compiled for, and the same as TM_CPU_* bits
 * for the run-time check: keep the two lists equal. */
#define HT_AVX512 "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,bmi2"
#define HT_AVX512_NEEDS (TM_CPU_AVX512_BYTES | TM_CPU_AVX512DQ | TM_CPU_BMI2)
#define MINI 16
#define SLOW_MAX 32

/* One data kind's register plan. */
struct vplan {
        uint8_t idx[64]; /* byte j of lane i: the record's byte idx[8i + j] */
        uint64_t sh[8];  /* signed lanes: 64 - 8 * width (shift up, then down) */
        uint64_t hf[8];  /* the HATF field of each lane */
        uint64_t upd[8]; /* per HATF field: the lane of its last value */
        uint64_t bytes;  /* the bytes idx[] fills (the others are 0) */
        uint8_t marg;    /* lanes adding their field's argument */
        uint8_t mprev;   /* lanes adding their field's previous value */
        uint8_t chain;   /* lanes after a lane of the same delta / stride field */
        uint8_t mupd;    /* fields whose previous value the record sets */
        uint8_t fast;    /* 1: every field a number, the record at most 64 bytes */
        uint8_t rl;      /* its length */
};

static void vplan_kinds(const struct hatf_state *s, const struct hatf_kplan *kp, struct vplan *vp)
{
        for (unsigned kind = 0; kind < TM_HK_COMMENT; kind++) {
                const struct hatf_kplan *k = &kp[kind];
                struct vplan *v = &vp[kind];
                memset(v, 0, sizeof *v);
                const struct hatf_fstate *attr = &s->f[HATF_F_ATTR];
                v->fast = k->nf <= 8 && k->fixed <= 64 && k->varpos == HATF_KP_NONE &&
                          attr->interp == HATF_I_DEFAULT && attr->arg == 0;
                v->rl = k->fixed;
                unsigned at = 1;
                for (unsigned i = 0; i < k->nf && i < 8; i++) {
                        unsigned hf = k->hf[i], w = k->w[i], in = s->f[hf].interp;
                        v->hf[i] = hf;
                        for (unsigned j = 0; j < w; j++) {
                                v->idx[8 * i + j] = (uint8_t)(at + w - 1 - j);
                                v->bytes |= 1ull << (8 * i + j);
                        }
                        at += w;
                        if (hf == HATF_F_ATTR)
                                continue; /* the default 0: a 0 lane */
                        if (in == HATF_I_BASEOFFSET || in == HATF_I_DELTA)
                                v->sh[i] = 64 - 8 * w;
                        if (in == HATF_I_DEFAULT || in == HATF_I_BASEOFFSET || in == HATF_I_STRIDE)
                                v->marg |= (uint8_t)(1u << i);
                        if (in == HATF_I_DELTA || in == HATF_I_STRIDE) {
                                v->mprev |= (uint8_t)(1u << i);
                                if (i && k->hf[i - 1] == hf)
                                        v->chain |= (uint8_t)(1u << i);
                        }
                        v->upd[hf] = i;
                        v->mupd |= (uint8_t)(1u << hf);
                }
        }
}

/* The register plans of the kinds' plans a thread's hatf_text used last
 * (hatf_plans' generation gen). A read-ahead worker calls hatf_text once
 * per 32 KiB of text, and making the plans at every call shows in a cold
 * cat's profile. */
struct plan_cache {
        uint64_t gen; /* 0: none */
        struct vplan vp[TM_HK_COMMENT];
};

static _Thread_local struct plan_cache plan_cache;

/* The thread's plans for s: the kinds' (*plan) and their register plans
 * (returned), made again when s's widths, interpretations or arguments
 * changed. Valid until the thread's next call. */
static const struct vplan *plans_of(const struct hatf_state *s, const struct hatf_kplan **plan)
{
        uint64_t gen;
        *plan = hatf_plans(s, &gen);
        struct plan_cache *c = &plan_cache;
        if (c->gen != gen) {
                vplan_kinds(s, *plan, c->vp);
                c->gen = gen;
        }
        return c->vp;
}

/* The fields' previous values / arguments in a register (lane = field). */
__attribute__((target(HT_AVX512))) static __m512i state_vec(const struct hatf_state *s, int prev)
{
        uint64_t a[8] = {0};
        for (unsigned f = 0; f < HATF_NF; f++)
                a[f] = prev ? s->f[f].prev : s->f[f].arg;
        return _mm512_loadu_si512(a);
}

__attribute__((target(HT_AVX512))) static void state_put_prev(struct hatf_state *s, __m512i pv)
{
        uint64_t a[8];
        _mm512_storeu_si512(a, pv);
        for (unsigned f = 0; f < HATF_NF; f++)
                s->f[f].prev = a[f];
}

/* The worst case of the line of the record of rl bytes at p. */
static inline size_t line_worst(const struct tm_text_plan *p, const uint8_t *rec, size_t rl)
{
        return p->kind[rec[0]].fixed_max + 3 * (rl > 8 ? rl : 8);
}

/* Records the fast path does not take, the slow way from in + *pos:
 * hatf.c's decoder into a batch of up to SLOW_MAX struct tm_rec, then one
 * tm_text_lines call for the batch (metadata records are applied on
 * the way): record by record, with a renderer call each, a trace whose
 * every record has an attribute (heaptrack's, through `pack`) is much
 * slower than the generic path (bench/text_bench). The state
 * in s; vp are the thread's register plans (those of plan), remade in
 * place at a metadata record. Returns 1 when it went on, 0 when it must
 * stop (an error or a record cut by the end, both for the generic decoder;
 * no room; maxrec). */
static int slow_run(struct hatf_state *s, const struct hatf_kplan *plan, const struct vplan *vp,
                    const uint8_t *in, size_t len, uint64_t raw_off, size_t *pos,
                    const struct tm_text_plan *p, char *dst, size_t cap, size_t *w, size_t *done,
                    size_t maxrec)
{
        struct tm_rec recs[SLOW_MAX];
        size_t n = 0, worst = TM_TEXT_SLACK, at = *pos, k;
        while (n < SLOW_MAX && *done + n < maxrec && at < len) {
                const uint8_t *r = in + at;
                if (n && r[0] < TM_HK_COMMENT && vp[r[0]].fast)
                        break;     /* the fast path's again */
                struct tm_err err; /* errors are left for the generic decoder */
                size_t rl = 0;
                int step = hatf_peek(plan, r, len - at, raw_off + at, &rl, &err);
                if (step <= HATF_STEP_MORE) /* an error, or more input */
                        break;
                if (step == HATF_STEP_META) {
                        const char *why;
                        if (hatf_meta_apply(s, r, &why) < 0)
                                break;
                        const struct hatf_kplan *kp;
                        plans_of(s, &kp); /* the same arrays as plan and vp */
                } else if (step == HATF_STEP_REC) {
                        size_t lw = line_worst(p, r, rl);
                        if (worst + lw > cap - *w)
                                break;
                        hatf_rec_decode(s, plan, r, &recs[n++]);
                        worst += lw;
                }
                at += rl;
        }
        if (n) {
                *w += tm_text_lines(dst + *w, cap - *w, p, recs, n, &k);
                *done += n;
        }
        int went = at > *pos;
        *pos = at;
        return went;
}

__attribute__((target(HT_AVX512))) size_t hatf_text(struct tm_rstate *st, const uint8_t *in,
                                                    size_t len, uint64_t raw_off, size_t *used,
                                                    const struct tm_text_plan *p, char *dst,
                                                    size_t cap, size_t maxrec, long kind,
                                                    size_t *nrec)
{
        (void)kind; /* -1: the row does not set text_kinds */
        struct hatf_state *s = (struct hatf_state *)st->b;
        struct tm_text_num mini[MINI];
        uint32_t kinds[MINI];
        size_t pos = 0, w = 0, done = 0, m = 0, worst = TM_TEXT_SLACK, k;
        if (p->nkinds < TM_HK_N) {
                *used = *nrec = 0;
                return 0;
        }
        const struct hatf_kplan *plan;
        const struct vplan *vp = plans_of(s, &plan);
        const __m512i down = _mm512_setr_epi64(0, 0, 1, 2, 3, 4, 5, 6);
        __m512i pv = state_vec(s, 1), av = state_vec(s, 0);
        for (;;) {
                unsigned tag = pos < len ? in[pos] : TM_HK_N;
                const struct vplan *v = &vp[tag < TM_HK_COMMENT ? tag : 0];
                int room = tag >= TM_HK_COMMENT || worst + p->kind[tag].fixed_max <= cap - w;
                int fast = tag < TM_HK_COMMENT && v->fast && len - pos >= v->rl &&
                           done + m < maxrec && room;
                if (fast) {
                        __m512i x = _mm512_maskz_loadu_epi8(_bzhi_u64(~0ull, v->rl), in + pos);
                        __m512i raw =
                            _mm512_maskz_permutexvar_epi8(v->bytes, _mm512_loadu_si512(v->idx), x);
                        __m512i sh = _mm512_loadu_si512(v->sh);
                        raw = _mm512_srav_epi64(_mm512_sllv_epi64(raw, sh), sh);
                        __m512i hf = _mm512_loadu_si512(v->hf);
                        __m512i prev = _mm512_permutexvar_epi64(hf, pv);
                        __m512i val = _mm512_mask_add_epi64(raw, v->marg, raw,
                                                            _mm512_permutexvar_epi64(hf, av));
                        val = _mm512_mask_add_epi64(val, v->mprev, val, prev);
                        /* a realloc's new address: plus what the old one moved */
                        val = _mm512_mask_add_epi64(
                            val, v->chain, val,
                            _mm512_permutexvar_epi64(down, _mm512_sub_epi64(val, prev)));
                        pv = _mm512_mask_permutexvar_epi64(pv, v->mupd, _mm512_loadu_si512(v->upd),
                                                           val);
                        _mm512_store_si512(mini[m].v, val);
                        kinds[m++] = tag;
                        worst += p->kind[tag].fixed_max;
                        pos += v->rl;
                        if (m < MINI)
                                continue;
                }
                if (m) { /* render the batch: its worst cases fit */
                        w += tm_text_nums(dst + w, cap - w, p, kinds, mini, m, &k);
                        done += m;
                        m = 0;
                        worst = TM_TEXT_SLACK;
                        if (fast || !room)
                                continue;
                }
                if (done >= maxrec || pos >= len)
                        break;
                state_put_prev(s, pv);
                int more =
                    slow_run(s, plan, vp, in, len, raw_off, &pos, p, dst, cap, &w, &done, maxrec);
                pv = state_vec(s, 1);
                av = state_vec(s, 0);
                if (!more)
                        break;
        }
        state_put_prev(s, pv);
        *used = pos;
        *nrec = done;
        return w;
}

/* 1 when this CPU (features: tm_cpu_features()) runs hatf_text. */
static int hatf_text_arch_ok(unsigned features)
{
        return (features & HT_AVX512_NEEDS) == HT_AVX512_NEEDS;
}

#endif
