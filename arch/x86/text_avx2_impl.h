/* text_avx2_impl.h: the record renderers' AVX2 path (x86-64-v3, for CPUs
 * without AVX-512), included by arch/x86/text_impl.h, whose
 * text_arch_choose() takes it when the AVX-512 path does not run.
 *
 * Without byte compress nor 64-bit multiplies, a line is not made in
 * registers as put_line_v does: the numbers of a line (its first 8
 * fields, two registers of 4) are converted together, each to a 16-byte
 * chunk of digits with its leading zeros (decimal below 2^52: 16 digits;
 * hex: any value), and then placed field by field, each with one byte
 * shuffle that drops its leading zeros and one 16-byte store. What the
 * chunks do not cover (text, lists, own shows, negative or huge
 * decimals, fields past the 8th) goes through put_tok as in put_line,
 * within the same line, so every kind takes this path. Bytes as
 * put_line's: tests/unit_text.c compares the two. */
#ifndef TM_X86_TEXT_AVX2_IMPL_H
#define TM_X86_TEXT_AVX2_IMPL_H

#include <immintrin.h>

#define RR_AVX2 TM_AVX2_TARGET

/* The 8 decimal digits of each 64-bit lane (< 10^8) as ASCII, the most
 * significant in the lowest byte: dec8_v in 256 bits. */
__attribute__((target(RR_AVX2))) static inline __m256i dec8_x(__m256i v)
{
        __m256i q = _mm256_srli_epi64(_mm256_mul_epu32(v, _mm256_set1_epi64x(0xd1b71759)), 45);
        __m256i x = _mm256_sub_epi64(v, _mm256_mul_epu32(q, _mm256_set1_epi64x(10000)));
        x = _mm256_or_si256(q, _mm256_slli_epi64(x, 32));
        q = _mm256_srli_epi32(_mm256_mullo_epi32(x, _mm256_set1_epi32(10486)), 20);
        x = _mm256_sub_epi32(x, _mm256_mullo_epi32(q, _mm256_set1_epi32(100)));
        x = _mm256_or_si256(q, _mm256_slli_epi32(x, 16));
        q = _mm256_srli_epi16(_mm256_mullo_epi16(x, _mm256_set1_epi16(103)), 10);
        x = _mm256_sub_epi16(x, _mm256_mullo_epi16(q, _mm256_set1_epi16(10)));
        return _mm256_add_epi8(_mm256_or_si256(q, _mm256_slli_epi16(x, 8)), _mm256_set1_epi8('0'));
}

/* v = *hi * 10^8 + *lo for lanes below 2^52 (others: garbage). v is
 * exact as a double there (its bits under the exponent of 2^52), and
 * hi = floor(v * 10^-8) is exact too: the rounded 10^-8 is above the true
 * one by 2e-26, and the product's rounding moves it by at most half its
 * ulp, 2^-28 (hi < 2^26), while a v that is not a multiple of 10^8 is 10^-8
 * or more below the next integer. (tests/unit_text.c tries k * 10^8 - 1.) */
__attribute__((target(RR_AVX2))) static inline void split8_x(__m256i v, __m256i *hi, __m256i *lo)
{
        const __m256i magic = _mm256_set1_epi64x(0x4330000000000000ll); /* 2^52 */
        __m256d d = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(v, magic)),
                                  _mm256_castsi256_pd(magic));
        __m256i q =
            _mm256_cvtepu32_epi64(_mm256_cvttpd_epi32(_mm256_mul_pd(d, _mm256_set1_pd(1e-8))));
        *lo = _mm256_sub_epi64(v, _mm256_mul_epu32(q, _mm256_set1_epi64x(100000000)));
        *hi = q;
}

/* The chunks of lanes a (values 0 and 2) and b (1 and 3) in value order:
 * c[0] values 0 and 1, c[1] values 2 and 3. */
__attribute__((target(RR_AVX2))) static inline void order_x(__m256i *c, __m256i a, __m256i b)
{
        c[0] = _mm256_permute2x128_si256(a, b, 0x20);
        c[1] = _mm256_permute2x128_si256(a, b, 0x31);
}

/* The decimal chunks of the 4 lanes of v into c[0..1]: 16 digits with
 * leading zeros (lanes below 2^52; only the low 8 when big is 0). */
__attribute__((target(RR_AVX2))) static inline void dec_chunks_x(__m256i *c, __m256i v, int big)
{
        __m256i dh, dl;
        if (big) {
                __m256i hi, lo;
                split8_x(v, &hi, &lo);
                dh = dec8_x(hi);
                dl = dec8_x(lo);
        } else {
                dh = _mm256_set1_epi8('0');
                dl = dec8_x(v);
        }
        order_x(c, _mm256_unpacklo_epi64(dh, dl), _mm256_unpackhi_epi64(dh, dl));
}

/* The hex chunks of the 4 lanes of v into c[0..1]: 16 lowercase digits
 * each. */
__attribute__((target(RR_AVX2))) static inline void hex_chunks_x(__m256i *c, __m256i v)
{
        const __m256i bswap =
            _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,
                             1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
        const __m256i dig = _mm256_setr_epi8('0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a',
                                             'b', 'c', 'd', 'e', 'f', '0', '1', '2', '3', '4', '5',
                                             '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f');
        const __m256i nib = _mm256_set1_epi8(0x0f);
        __m256i x = _mm256_shuffle_epi8(v, bswap); /* each lane's bytes, high first */
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nib), lo = _mm256_and_si256(x, nib);
        order_x(c, _mm256_shuffle_epi8(dig, _mm256_unpacklo_epi8(hi, lo)),
                _mm256_shuffle_epi8(dig, _mm256_unpackhi_epi8(hi, lo)));
}

/* blend_x[b]: the 128-bit halves whose bit in b (2 bits) is set. */
static const int64_t blend_x[4][4] = {
    {0, 0, 0, 0}, {-1, -1, 0, 0}, {0, 0, -1, -1}, {-1, -1, -1, -1}};

/* Lanes of v (bit i: lane i) below 2^52, and above 10^8 - 1. */
__attribute__((target(RR_AVX2))) static inline unsigned below52_x(__m256i v)
{
        __m256i z = _mm256_cmpeq_epi64(_mm256_srli_epi64(v, 52), _mm256_setzero_si256());
        return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(z));
}

__attribute__((target(RR_AVX2))) static inline unsigned over8_x(__m256i v)
{
        __m256i g = _mm256_cmpgt_epi64(v, _mm256_set1_epi64x(99999999));
        return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(g));
}

/* shift_x + z as a byte shuffle moves a chunk's bytes z.. to its start. */
static const uint8_t shift_x[32] = {
    0,    1,    2,    3,    4,    5,    6,    7,    8,    9,    10,   11,   12,   13,   14,   15,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

/* Field i (0..7; half h of chunk register c, its '0' bytes z) at o: a
 * chunk when in vec, 0x first when in hex, else put_field. */
#define FIELD_X(i, c, h, z)                                                                        \
        do {                                                                                       \
                if ((i) >= nf)                                                                     \
                        goto done;                                                                 \
                if (vec >> (i)&1) {                                                                \
                        __m128i x_ =                                                               \
                            (h) ? _mm256_extracti128_si256(c, 1) : _mm256_castsi256_si128(c);      \
                        unsigned n_ = (unsigned)__builtin_ctz(~(unsigned)((z) >> 16 * ((i)&3)) |   \
                                                              0x8000u); /* keep one digit */       \
                        memcpy(o, "0x", 2);                                                        \
                        o += 2 * (hl >> (i)&1);                                                    \
                        _mm_storeu_si128(                                                          \
                            (__m128i *)(void *)o,                                                  \
                            _mm_shuffle_epi8(                                                      \
                                x_,                                                                \
                                _mm_loadu_si128((const __m128i *)(const void *)(shift_x + n_))));  \
                        o += 16 - n_;                                                              \
                        *o++ = ' ';                                                                \
                } else {                                                                           \
                        o = put_field(o, k, r, i);                                                 \
                }                                                                                  \
        } while (0)

/* The '0' bytes of chunk registers c[0..1], 16 bits a chunk. */
__attribute__((target(RR_AVX2))) static inline uint64_t zeros_x(const __m256i *c)
{
        const __m256i zeros = _mm256_set1_epi8('0');
        uint32_t a = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(c[0], zeros));
        uint32_t b = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(c[1], zeros));
        return a | (uint64_t)b << 32;
}

/* The line of r (kind k) at o, as put_line; writes up to TM_TEXT_SLACK
 * bytes past its end (a chunk is stored whole). The chunks stay in
 * registers: stored and read back they cost a failed store forwarding
 * a field. */
__attribute__((target(RR_AVX2), always_inline)) static inline char *
put_line_x(char *o, const struct tm_text_kind *k, const struct tm_text_vkind *vk,
           const struct tm_rec *r)
{
        unsigned nf = k->nfields;
        unsigned lanes = nf < 8 ? (1u << nf) - 1 : 0xffu;
        unsigned dl = vk->kdec & lanes, hl = vk->xhex & lanes;
        /* r->v has TM_KIND_FIELDS_MAX (16) values: both loads are in it */
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)r->v);
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(r->v + 4));
        __m256i c[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                        _mm256_setzero_si256()};
        if (dl) {
                dl &= below52_x(v0) | below52_x(v1) << 4;
                unsigned big = (over8_x(v0) | over8_x(v1) << 4) & dl;
                dec_chunks_x(c, v0, big & 15);
                if (dl >> 4)
                        dec_chunks_x(c + 2, v1, big >> 4);
        }
        if (hl) { /* hex chunks over the decimal ones where the kind has hex */
                __m256i h[4];
                hex_chunks_x(h, v0);
                for (unsigned j = 0; j < 2; j++)
                        c[j] = _mm256_blendv_epi8(
                            c[j], h[j],
                            _mm256_loadu_si256(
                                (const __m256i *)(const void *)blend_x[hl >> 2 * j & 3]));
                if (hl >> 4) {
                        hex_chunks_x(h + 2, v1);
                        for (unsigned j = 2; j < 4; j++)
                                c[j] = _mm256_blendv_epi8(
                                    c[j], h[j],
                                    _mm256_loadu_si256(
                                        (const __m256i *)(const void *)blend_x[hl >> 2 * j & 3]));
                }
        }
        unsigned vec = dl | hl;
        uint64_t z0 = zeros_x(c), z1 = nf > 4 ? zeros_x(c + 2) : 0;
        memcpy(o, k->head, TM_NAME_MAX);
        o += k->head_len;
        FIELD_X(0, c[0], 0, z0);
        FIELD_X(1, c[0], 1, z0);
        FIELD_X(2, c[1], 0, z0);
        FIELD_X(3, c[1], 1, z0);
        FIELD_X(4, c[2], 0, z1);
        FIELD_X(5, c[2], 1, z1);
        FIELD_X(6, c[3], 0, z1);
        FIELD_X(7, c[3], 1, z1);
        for (unsigned i = 8; i < nf; i++)
                o = put_field(o, k, r, i);
done:
        o[-1] = '\n'; /* over the last blank: the name's when there is no field */
        return o;
}

#undef FIELD_X

__attribute__((target(RR_AVX2))) static size_t lines_avx2(char *dst, size_t cap,
                                                          const struct tm_text_plan *p,
                                                          const struct tm_rec *r, size_t n,
                                                          long kind, size_t *nrec)
{
#define PUT_LINE_X(o, k, ki, rec) put_line_x(o, k, &p->vkind[ki], rec)
        TEXT_LINES_BODY(dst, cap, p, r, n, kind, nrec, PUT_LINE_X);
#undef PUT_LINE_X
}

/* tm_text_nums, as lines_avx2 (num_rec's record, put_line_x's line). */
__attribute__((target(RR_AVX2))) static size_t
nums_avx2(char *dst, size_t cap, const struct tm_text_plan *p, const uint32_t *kind,
          const struct tm_text_num *v, size_t n, size_t *nrec)
{
        char *o = dst, *end = dst + cap;
        size_t i = 0;
        for (; i < n; i++) {
                struct tm_rec r;
                const struct tm_text_kind *k = &p->kind[kind[i]];
                if (!num_rec(&r, o, end, k, kind[i], &v[i]))
                        break;
                o = put_line_x(o, k, &p->vkind[kind[i]], &r);
        }
        *nrec = i;
        return (size_t)(o - dst);
}

static const struct text_impl text_avx2 = {lines_avx2, nums_avx2, hex_lens_scalar, "avx2"};

#endif
