/* arec_impl.h: the address rows' column split on AVX-512, included by
 * codecs/address/arec.c (which has arec_cols_scalar, arec_cols_fn and
 * struct arec_impl) on x86-64. Compiled with target attributes, so the rest of the
 * build stays baseline x86-64; arec_arch_choose() says at run time whether
 * this CPU runs it. */
#ifndef TM_X86_AREC_IMPL_H
#define TM_X86_AREC_IMPL_H

#include <immintrin.h>
#include <stddef.h>

#define AREC_AVX512_NEEDS (TM_CPU_AVX512F)

_Static_assert(sizeof(struct tm_ref) == 16 && offsetof(struct tm_ref, type) == 8,
               "the vector path reads four refs per 64 bytes");

/* arec_cols_scalar, eight references a step: two 64-byte loads hold four
 * tm_refs each (addr in the even qwords, type in the low half of the odd
 * ones, the upper half padding that no decoder writes, so masked off);
 * two two-source permutes gather the addresses and the types, vpmovqd
 * narrows the types to kinds. */
__attribute__((target("avx512f"))) static uint32_t arec_cols_avx512(const struct tm_ref *r,
                                                                    size_t n, uint32_t nt,
                                                                    uint32_t *kind, uint64_t *type,
                                                                    uint64_t *addr)
{
        const __m512i ia = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
        const __m512i it = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
        const __m512i lo = _mm512_set1_epi64(0xffffffff);
        const __m512i lim = _mm512_set1_epi64(nt);
        __mmask8 bad = 0;
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
                __m512i v0 = _mm512_loadu_si512((const void *)(r + i));
                __m512i v1 = _mm512_loadu_si512((const void *)(r + i + 4));
                __m512i a = _mm512_permutex2var_epi64(v0, ia, v1);
                __m512i t = _mm512_and_si512(_mm512_permutex2var_epi64(v0, it, v1), lo);
                bad |= _mm512_cmpge_epu64_mask(t, lim);
                _mm512_storeu_si512((void *)(addr + i), a);
                _mm512_storeu_si512((void *)(type + i), t);
                _mm256_storeu_si256((__m256i *)(void *)(kind + i), _mm512_cvtepi64_epi32(t));
        }
        return (bad != 0) | arec_cols_scalar(r + i, n - i, nt, kind + i, type + i, addr + i);
}

static const struct arec_impl arec_avx512 = {arec_cols_avx512};

/* The tm_cpu_slot arch of arec.c: &arec_avx512 if this CPU runs it. */
static const void *arec_arch_choose(unsigned features)
{
        return (features & AREC_AVX512_NEEDS) == AREC_AVX512_NEEDS ? &arec_avx512 : NULL;
}

#endif
