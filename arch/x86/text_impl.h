/* text_impl.h: the record renderers' AVX-512 path (put_line_v: a line
 * of up to 8 number fields made in two registers) and, for CPUs without
 * AVX-512, the AVX2 path (text_avx2_impl.h: a line's numbers converted
 * together, placed field by field), included by
 * codecs/record/text.c on x86-64, whose static helpers (put_line, line_bound,
 * num_line, the plan) it uses for what it leaves to the portable path.
 * Compiled with target attributes, so the rest of the build stays
 * baseline x86-64; text_arch_choose() says at run time whether this
 * CPU runs it. */
#ifndef TM_X86_RRENDER_IMPL_H
#define TM_X86_RRENDER_IMPL_H

#include <immintrin.h>

/* What the functions below are compiled for, and the same as TM_CPU_* bits
 * for the run-time check: keep the two lists equal. */
#define RR_AVX512 "avx512f,avx512bw,avx512vl,avx512dq,avx512ifma,avx512vbmi,avx512vbmi2,popcnt"
#define RR_AVX512_NEEDS                                                                            \
        (TM_CPU_AVX512_BYTES | TM_CPU_AVX512DQ | TM_CPU_AVX512IFMA | TM_CPU_AVX512VBMI2)

/* Room the vector path wants for a line: its name (31), 8 chunks of 16,
 * '\n', and the 64-byte stores of the compressed registers. */
#define VEC_ROOM 256

/* The constants of the vector path, made once per batch (in registers:
 * the compiler would otherwise make them again for every line). */
struct vconst {
        __m512i m10k, c10k, c10486, c100, c103, c10, zeros, recip, c1e8, hexdig, nib, shh, shl,
            idx0, idx1;
};

__attribute__((target(RR_AVX512))) static inline struct vconst vconst_make(void)
{
        struct vconst c;
        c.m10k = _mm512_set1_epi64(0xd1b71759); /* 2^45 / 10^4, rounded up */
        c.c10k = _mm512_set1_epi64(10000);
        c.c10486 = _mm512_set1_epi32(10486); /* 2^20 / 100, rounded up */
        c.c100 = _mm512_set1_epi32(100);
        c.c103 = _mm512_set1_epi16(103); /* 2^10 / 10, rounded up */
        c.c10 = _mm512_set1_epi16(10);
        c.zeros = _mm512_set1_epi8('0');
        c.recip = _mm512_set1_epi64(3022314549036573); /* 2^78 / 10^8, rounded up */
        c.c1e8 = _mm512_set1_epi64(100000000);
        c.hexdig = _mm512_broadcast_i32x4(_mm_setr_epi8('0', '1', '2', '3', '4', '5', '6', '7', '8',
                                                        '9', 'a', 'b', 'c', 'd', 'e', 'f'));
        c.nib = _mm512_set1_epi8(0x0f);
        /* vpmultishiftqb bit offsets: the nibbles of bits 60..32, 28..0 */
        c.shh = _mm512_set1_epi64(0x2024282c3034383cll);
        c.shl = _mm512_set1_epi64(0x0004080c1014181cll);
        c.idx0 = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
        c.idx1 = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
        /* Opaque from here on, so the compiler keeps them in registers
         * instead of making them again inside the loop. */
        __asm__(""
                : "+v"(c.m10k), "+v"(c.c10k), "+v"(c.c10486), "+v"(c.c100), "+v"(c.c103),
                  "+v"(c.c10), "+v"(c.zeros), "+v"(c.recip));
        __asm__(""
                : "+v"(c.c1e8), "+v"(c.hexdig), "+v"(c.nib), "+v"(c.shh), "+v"(c.shl), "+v"(c.idx0),
                  "+v"(c.idx1));
        return c;
}

/* The 8 decimal digits of each 64-bit lane (< 10^8) as byte values, most
 * significant in the lowest byte: dec8 of the scalar path, lane-wise (the
 * division by 10^4 by a 32x32-bit multiply, then 32- and 16-bit lanes). */
__attribute__((target(RR_AVX512))) static inline __m512i dec8_v(const struct vconst *c, __m512i v)
{
        __m512i q = _mm512_srli_epi64(_mm512_mul_epu32(v, c->m10k), 45);
        __m512i x = _mm512_sub_epi64(v, _mm512_mul_epu32(q, c->c10k));
        x = _mm512_or_si512(q, _mm512_slli_epi64(x, 32));
        q = _mm512_srli_epi32(_mm512_mullo_epi32(x, c->c10486), 20);
        x = _mm512_sub_epi32(x, _mm512_mullo_epi32(q, c->c100));
        x = _mm512_or_si512(q, _mm512_slli_epi32(x, 16));
        q = _mm512_srli_epi16(_mm512_mullo_epi16(x, c->c103), 10);
        x = _mm512_sub_epi16(x, _mm512_mullo_epi16(q, c->c10));
        return _mm512_or_si512(q, _mm512_slli_epi16(x, 8));
}

/* Keep, in each 16-bit group of m (a chunk's bytes), every bit from the
 * lowest set one up. Every group has its top bit set, so subtracting 1
 * from each never borrows from the next: (m - 1) & ~m is the bits below
 * the lowest set one, group by group. */
static inline uint64_t from_lowest(uint64_t m)
{
        m |= 0x8000800080008000ull;
        return ~((m - 0x0001000100010001ull) & ~m);
}

/* The line of r (kind k) at o, or NULL when a value is out of the
 * vector path's range (nothing useful written then). Writes up to
 * VEC_ROOM bytes from o. */
__attribute__((target(RR_AVX512))) static inline char *put_line_v(char *o, const struct vconst *c,
                                                                  const struct tm_text_kind *k,
                                                                  const struct tm_text_vkind *vk,
                                                                  const uint64_t *rv)
{
        __mmask8 lanes = (__mmask8)((1u << vk->nlanes) - 1);
        __m512i v = _mm512_maskz_loadu_epi64(lanes, rv);
        if (_mm512_mask_cmpge_epu64_mask(lanes, v, _mm512_loadu_si512(vk->lim)))
                return NULL;
        /* Hex: the nibbles of bits 60..32 and 28..0 to bytes, then digits. */
        __m512i xh = _mm512_shuffle_epi8(
            c->hexdig, _mm512_and_si512(_mm512_multishift_epi64_epi8(c->shh, v), c->nib));
        __m512i xl = _mm512_shuffle_epi8(
            c->hexdig, _mm512_and_si512(_mm512_multishift_epi64_epi8(c->shl, v), c->nib));
        /* Decimal: v = hi * 10^8 + lo, hi = floor(v * ceil(2^78 / 10^8) /
         * 2^78), exact below 10^15 (the error stays under 10^-8). When
         * every decimal field is below 10^8 (sizes, ids, times of short
         * runs: most lines), hi is 0 and its digits are all '0': half the
         * arithmetic. (Hex lanes' dl is then garbage, and not used.) */
        int big = _mm512_mask_cmpge_epu64_mask(vk->kdec, v, c->c1e8) != 0;
        if (!big && vk->sok) {
                /* and the line fits the short layout: one register, one
                 * byte permute, one compress */
                __m512i lo =
                    _mm512_mask_blend_epi64(vk->khexl, _mm512_add_epi8(dec8_v(c, v), c->zeros), xl);
                __m512i w = _mm512_permutex2var_epi8(lo, _mm512_loadu_si512(vk->sidx), xh);
                w = _mm512_mask_blend_epi8(vk->sconst, w, _mm512_loadu_si512(vk->simg));
                uint64_t m = _mm512_mask_cmpneq_epi8_mask(vk->sdig, w, c->zeros) | vk->slast;
                uint64_t keep = (~((m - vk->sstart) & ~m) & vk->svalid) | vk->sprefix;
                _mm512_storeu_si512(o, _mm512_maskz_compress_epi8(keep, w));
                return o + __builtin_popcountll(keep);
        }
        __m512i dh = c->zeros, dl;
        if (big) {
                __m512i hi = _mm512_srli_epi64(
                    _mm512_madd52hi_epu64(_mm512_setzero_si512(), v, c->recip), 26);
                __m512i lo = _mm512_sub_epi64(v, _mm512_mul_epu32(hi, c->c1e8));
                dh = _mm512_add_epi8(dec8_v(c, hi), c->zeros);
                dl = _mm512_add_epi8(dec8_v(c, lo), c->zeros);
        } else {
                dl = _mm512_add_epi8(dec8_v(c, v), c->zeros);
        }
        /* Chunks: field i's 16 characters, high half then low half. */
        __m512i w0 = _mm512_mask_blend_epi8(vk->khex[0], _mm512_permutex2var_epi64(dh, c->idx0, dl),
                                            _mm512_permutex2var_epi64(xh, c->idx0, xl));
        __m512i w1 = _mm512_mask_blend_epi8(vk->khex[1], _mm512_permutex2var_epi64(dh, c->idx1, dl),
                                            _mm512_permutex2var_epi64(xh, c->idx1, xl));
        w0 = _mm512_mask_blend_epi8(vk->kconst[0], w0, _mm512_loadu_si512(vk->img));
        w1 = _mm512_mask_blend_epi8(vk->kconst[1], w1, _mm512_loadu_si512(vk->img + 64));
        uint64_t keep0 =
            (from_lowest(_mm512_mask_cmpneq_epi8_mask(vk->kdig[0], w0, c->zeros)) & vk->kvalid[0]) |
            vk->kprefix[0];
        uint64_t keep1 =
            (from_lowest(_mm512_mask_cmpneq_epi8_mask(vk->kdig[1], w1, c->zeros)) & vk->kvalid[1]) |
            vk->kprefix[1];
        memcpy(o, k->head, TM_NAME_MAX);
        o += k->head_len - 1; /* each chunk brings its blank */
        _mm512_storeu_si512(o, _mm512_maskz_compress_epi8(keep0, w0));
        o += __builtin_popcountll(keep0);
        _mm512_storeu_si512(o, _mm512_maskz_compress_epi8(keep1, w1));
        o += __builtin_popcountll(keep1);
        *o++ = '\n';
        return o;
}

__attribute__((target(RR_AVX512))) static size_t lines_avx512(char *dst, size_t cap,
                                                              const struct tm_text_plan *p,
                                                              const struct tm_rec *r, size_t n,
                                                              long kind, size_t *nrec)
{
        const struct vconst c = vconst_make();
        char *o = dst, *end = dst + cap;
        size_t i = 0;
        for (; i < n; i++) {
                if (r[i].kind >= p->nkinds)
                        break;
                if (kind >= 0 && r[i].kind != (unsigned long)kind)
                        continue;
                const struct tm_text_kind *k = &p->kind[r[i].kind];
                const struct tm_text_vkind *vk = &p->vkind[r[i].kind];
                if (vk->ok && (size_t)(end - o) >= VEC_ROOM) {
                        char *e = put_line_v(o, &c, k, vk, r[i].v);
                        if (e) {
                                o = e;
                                continue;
                        }
                }
                if (line_bound(k, &r[i]) + TM_TEXT_SLACK > (size_t)(end - o))
                        break;
                o = put_line(o, k, &r[i]);
        }
        *nrec = i;
        return (size_t)(o - dst);
}

/* tm_text_nums, as lines_avx512. The vector path renders any kind it is
 * given, so it takes only plans whose kinds it all takes
 * (tm_text_plan.vall; a check per line would cost HATF's text ~10%). */
__attribute__((target(RR_AVX512))) static size_t
nums_avx512(char *dst, size_t cap, const struct tm_text_plan *p, const uint32_t *kind,
            const struct tm_text_num *v, size_t n, size_t *nrec)
{
        if (!p->vall)
                return nums_scalar(dst, cap, p, kind, v, n, nrec);
        const struct vconst c = vconst_make();
        char *o = dst, *end = dst + cap;
        size_t i = 0;
        for (; i < n; i++) {
                const struct tm_text_kind *k = &p->kind[kind[i]];
                const struct tm_text_vkind *vk = &p->vkind[kind[i]];
                if ((size_t)(end - o) >= VEC_ROOM) {
                        char *e = put_line_v(o, &c, k, vk, v[i].v);
                        if (e) {
                                o = e;
                                continue;
                        }
                }
                char *e = num_line(o, end, k, kind[i], &v[i]);
                if (!e)
                        break;
                o = e;
        }
        *nrec = i;
        return (size_t)(o - dst);
}

/* hex_lens_scalar eight values a step: vplzcntq gives the leading zero
 * bits, from which the digits follow as in the scalar loop. */
__attribute__((target("avx512f,avx512cd"))) static uint64_t
hex_lens_avx512(const uint64_t *c, size_t n, uint32_t *out, unsigned add)
{
        const __m512i one = _mm512_set1_epi64(1);
        const __m512i k67 = _mm512_set1_epi64(67 + 4 * (long long)add);
        __m512i acc = _mm512_setzero_si512();
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
                __m512i v = _mm512_or_si512(_mm512_loadu_si512((const void *)(c + i)), one);
                __m512i len = _mm512_srli_epi64(_mm512_sub_epi64(k67, _mm512_lzcnt_epi64(v)), 2);
                acc = _mm512_add_epi64(acc, len);
                if (out)
                        _mm256_storeu_si256((__m256i *)(void *)(out + i),
                                            _mm512_cvtepi64_epi32(len));
        }
        return (uint64_t)_mm512_reduce_add_epi64(acc) +
               hex_lens_scalar(c + i, n - i, out ? out + i : NULL, add);
}

#define TEXT_AVX512_NEEDS (RR_AVX512_NEEDS | TM_CPU_AVX512CD)

static const struct text_impl text_avx512 = {lines_avx512, nums_avx512, hex_lens_avx512, "avx512"};

#include "text_avx2_impl.h"

/* The tm_cpu_slot arch of text.c: the AVX-512 paths if this CPU runs
 * them, else the AVX2 ones, else NULL. */
static const void *text_arch_choose(unsigned features)
{
        if ((features & TEXT_AVX512_NEEDS) == TEXT_AVX512_NEEDS)
                return &text_avx512;
        return (features & TM_CPU_AVX2_SET) == TM_CPU_AVX2_SET ? &text_avx2 : NULL;
}

#endif
