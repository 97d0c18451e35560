/* render_impl.h: the din renderer's AVX-512 and AVX2 paths, included by
 * codecs/address/render.c (which has the scalar paths, render_batch_fn,
 * render_cols_fn and struct render_impl) on x86-64. Compiled with target
 * attributes, so the rest of the build stays baseline x86-64;
 * render_arch_choose() says at run time whether this CPU runs it. */
#ifndef TM_X86_RENDER_IMPL_H
#define TM_X86_RENDER_IMPL_H

#include <immintrin.h>
#include <pthread.h>

/* What the functions below are compiled for, and the same as TM_CPU_* bits
 * for the run-time check: keep the two lists equal. */
#define TM_AVX512 "avx512f,avx512bw,avx512vl,avx512cd,avx512vbmi,avx512vbmi2,popcnt"
#define RENDER_AVX512_NEEDS (TM_CPU_AVX512_BYTES | TM_CPU_AVX512CD | TM_CPU_AVX512VBMI2)

_Static_assert(sizeof(struct tm_ref) == 16 && offsetof(struct tm_ref, type) == 8,
               "the vector path reads four refs per 64 bytes");

/* A 64-byte load holds four tm_refs: ref r's addr in bytes 16r..16r+7, its
 * type in byte 16r+8 (the rest is the type's upper bytes and padding,
 * never used). A fifth ref comes from a 16-byte load, as bytes 64..79 of
 * the pair of vectors that the two-source byte permute (vpermt2b) reads.
 *
 * One vector of output holds `lines` din lines of `digits` hex digits each
 * (leading zeros included), back to back: [type][' '][digits]['\n'], so
 * digits + 3 bytes a line. It is made in four steps, each one instruction
 * driven by a table of struct render_layout:
 *   1. vpermt2b gathers, for each output qword, the ref bytes its nibbles
 *      come from (vpmultishiftqb can only take a byte's bits from the same
 *      qword; no 8 output bytes of these layouts need more than 8 ref
 *      bytes);
 *   2. vpmultishiftqb moves each nibble to the bottom of its output byte;
 *   3. vpermb with the hex digits, repeated 4 times so that the stray upper
 *      bits of each byte do not matter, makes characters, merged over a
 *      template holding ' ' and '\n' (a type 0..9 is its own hex digit);
 *   4. the leading zero digits are dropped: vplzcntq of each address,
 *      spread over its line's bytes by vpermt2b, is compared with the
 *      largest lzcnt at which each byte is still kept, giving the mask
 *      for vpcompressb.
 * The compressed vector is stored whole (64 bytes, hence TM_RENDER_SLACK)
 * and the output pointer moves on by the mask's popcount. vpcompressb to
 * a register and a plain store, not to memory: the memory form is many
 * times slower on AMD Zen 4.
 *
 * Three layouts: 5 lines of 8 digits (addresses < 2^32, the usual case),
 * 4 of 12 (< 2^48, 64-bit user space) and 3 of 16 (anything). */
struct render_layout {
        _Alignas(64) uint8_t src[64]; /* step 1: ref byte (0..79) of each byte */
        uint8_t shift[64];            /* step 2: bit offset of each byte's nibble */
        char tmpl[64];                /* step 3: ' ' and '\n' */
        uint8_t lz[64];               /* step 4: byte 0 of the line's address's lzcnt */
        uint8_t need[64];             /* step 4: kept iff need >= lzcnt */
        uint64_t hex;                 /* step 3: bytes looked up (type and digits) */
        uint64_t keep;                /* bytes that belong to a line */
};

static struct render_layout render_l8, render_l12, render_l16;
static pthread_once_t render_layout_once = PTHREAD_ONCE_INIT;

/* Byte b (0..digits+2) of a line: the ref byte and bit its nibble comes
 * from, or -1 for ' ' and '\n'. Digit j (0 = most significant) is bits
 * 4(digits-1-j).. of addr. */
static int render_line_src(unsigned digits, unsigned ref, unsigned b, unsigned *bit)
{
        if (b == 0) {
                *bit = 0;
                return (int)(16 * ref + 8);
        }
        if (b == 1 || b == digits + 2)
                return -1;
        unsigned at = 4 * (digits - 1 - (b - 2));
        *bit = at % 8;
        return (int)(16 * ref + at / 8);
}

static void render_layout_init(struct render_layout *l, unsigned lines, unsigned digits)
{
        unsigned width = digits + 3;
        memset(l, 0, sizeof *l);
        for (unsigned q = 0; q < 8; q++) {
                int have[8]; /* the ref bytes qword q takes, in order */
                unsigned nhave = 0;
                for (unsigned o = 8 * q; o < 8 * q + 8; o++) {
                        unsigned line = o / width, b = o % width, bit = 0, k = 0;
                        if (line >= lines)
                                continue;
                        l->keep |= 1ull << o;
                        l->lz[o] = (uint8_t)(16 * line);
                        int s = render_line_src(digits, line, b, &bit);
                        l->tmpl[o] = b == 1 ? ' ' : b == width - 1 ? '\n' : 0;
                        /* Digit j = b - 2 is a leading zero iff the address
                         * has fewer than digits - j digits, that is lzcnt >
                         * 64 - 4 * (digits - j) + 3. The last digit stays
                         * even for address 0. */
                        l->need[o] = 255;
                        if (b >= 2 && b < width - 2)
                                l->need[o] = (uint8_t)(64 - 4 * digits + 3 + 4 * (b - 2));
                        if (s < 0)
                                continue;
                        while (k < nhave && have[k] != s)
                                k++;
                        if (k == nhave)
                                have[nhave++] = s;
                        l->src[8 * q + k] = (uint8_t)s;
                        l->shift[o] = (uint8_t)(8 * k + bit);
                        l->hex |= 1ull << o;
                }
        }
}

static void render_layouts_init(void)
{
        render_layout_init(&render_l8, 5, 8);
        render_layout_init(&render_l12, 4, 12);
        render_layout_init(&render_l16, 3, 16);
}

/* A layout's tables in registers. */
struct render_vlayout {
        __m512i src, shift, tmpl, lz, need;
        __mmask64 hex, keep;
};

__attribute__((target(TM_AVX512))) static inline struct render_vlayout
render_vlayout(const struct render_layout *l)
{
        return (struct render_vlayout){
            .src = _mm512_load_si512(l->src),
            .shift = _mm512_load_si512(l->shift),
            .tmpl = _mm512_load_si512(l->tmpl),
            .lz = _mm512_load_si512(l->lz),
            .need = _mm512_load_si512(l->need),
            .hex = _cvtu64_mask64(l->hex),
            .keep = _cvtu64_mask64(l->keep),
        };
}

/* Steps 1-4 for the refs in v0 and v1 (bytes 0..79), lzb being their
 * lzcnts spread as layout l wants; stores the lines at p (64 bytes) and
 * returns their length. */
__attribute__((target(TM_AVX512))) static inline unsigned
render_vector(char *p, const struct render_vlayout *l, __m512i hex, __m512i v0, __m512i v1,
              __m512i lzb)
{
        __m512i src = _mm512_permutex2var_epi8(v0, l->src, v1);
        __m512i nib = _mm512_multishift_epi64_epi8(l->shift, src);
        __m512i txt = _mm512_mask_permutexvar_epi8(l->tmpl, l->hex, nib, hex);
        __mmask64 keep = _mm512_mask_cmpge_epu8_mask(l->keep, l->need, lzb);
        _mm512_storeu_si512(p, _mm512_maskz_compress_epi8(keep, txt));
        return (unsigned)_mm_popcnt_u64(_cvtmask64_u64(keep));
}

static const char render_hex64[64] = "0123456789abcdef0123456789abcdef"
                                     "0123456789abcdef0123456789abcdef";

/* The tables render_lines uses, in registers. */
struct render_regs {
        struct render_vlayout l8, l12, l16;
        __m512i hex, b32, q16;
};

__attribute__((target(TM_AVX512))) static inline void render_regs_load(struct render_regs *r)
{
        r->l8 = render_vlayout(&render_l8);
        r->l12 = render_vlayout(&render_l12);
        r->l16 = render_vlayout(&render_l16);
        r->hex = _mm512_loadu_si512(render_hex64);
        r->b32 = _mm512_set1_epi8(32);
        r->q16 = _mm512_set1_epi64(16);
}

/* The lines of the first three to five of the refs in v0 and v1 (bytes
 * 0..79 as in memory: four tm_refs, then a fifth) stored at *p, which
 * moves on; returns how many refs they are. */
__attribute__((target(TM_AVX512))) static inline unsigned
render_lines(char **p, const struct render_regs *r, __m512i v0, __m512i v1)
{
        __m512i lz0 = _mm512_lzcnt_epi64(v0), lz1 = _mm512_lzcnt_epi64(v1);
        /* Spread for 5 lines of 8 digits, the lzcnts also tell whether all
         * five addresses fit in 8 digits. */
        __m512i lzb = _mm512_permutex2var_epi8(lz0, r->l8.lz, lz1);
        if (!_mm512_mask_cmplt_epu8_mask(r->l8.keep, lzb, r->b32)) {
                *p += render_vector(*p, &r->l8, r->hex, v0, v1, lzb);
                return 5;
        }
        if (!_mm512_mask_cmplt_epu64_mask(0x55, lz0, r->q16)) {
                lzb = _mm512_permutex2var_epi8(lz0, r->l12.lz, lz1);
                *p += render_vector(*p, &r->l12, r->hex, v0, v1, lzb);
                return 4;
        }
        lzb = _mm512_permutex2var_epi8(lz0, r->l16.lz, lz1);
        *p += render_vector(*p, &r->l16, r->hex, v0, v1, lzb);
        return 3;
}

__attribute__((target(TM_AVX512))) static size_t
render_batch_avx512(char *dst, const struct tm_ref *refs, size_t n)
{
        struct render_regs r;
        render_regs_load(&r);
        char *p = dst;
        size_t i = 0;
        /* Five refs are read whatever the layout; the last few go scalar. */
        while (i + 5 <= n) {
                __m512i v0 = _mm512_loadu_si512(refs + i);
                __m512i v1 = _mm512_zextsi128_si512(_mm_loadu_si128((const void *)(refs + i + 4)));
                i += render_lines(&p, &r, v0, v1);
        }
        return (size_t)(p - dst) + render_batch_scalar(p, refs + i, n - i);
}

/* tm_render_din_cols: eight refs of the columns at a time put in
 * registers as render_lines reads them, qwords addr, type, addr, type, ...
 * (a type's upper bytes zero), by two two-source qword permutes. */
__attribute__((target(TM_AVX512))) static size_t render_cols_avx512(char *dst, const uint8_t *type,
                                                                    const uint64_t *addr, size_t n)
{
        struct render_regs r;
        render_regs_load(&r);
        const __m512i lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
        const __m512i hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
        char *p = dst;
        size_t i = 0;
        /* Eight of each are read; the last few go scalar (masked loads
         * measured slower). */
        while (i + 8 <= n) {
                __m512i a = _mm512_loadu_si512(addr + i);
                __m512i t = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const void *)(type + i)));
                __m512i v0 = _mm512_permutex2var_epi64(a, lo, t);
                __m512i v1 = _mm512_permutex2var_epi64(a, hi, t);
                i += render_lines(&p, &r, v0, v1);
        }
        return (size_t)(p - dst) + render_cols_scalar(p, type + i, addr + i, n - i);
}

static const struct render_impl render_avx512 = {render_batch_avx512, render_cols_avx512, "avx512"};

/* ---- the AVX2 tier (x86-64-v3: CPUs without AVX-512) ----
 *
 * Without byte permutes across a register or compress, a line at a time
 * in a 16-byte register: the address's 16 nibbles spread to bytes, least
 * significant first (and, shift, unpack), made digits by one byte shuffle
 * (pshufb) with the hex table, then one more shuffle puts them most
 * significant first and drops the leading zeros: output byte j takes
 * nibble nd - 1 - j, and a negative index (j >= nd) gives 0. The digit and
 * the space are one 2-byte store before it, the '\n' one byte after; the
 * 16-byte store may scribble up to 15 bytes past the line (TM_RENDER_SLACK
 * covers the last). Two addresses share the spreading. */

/* render_sel[nd][j]: nd - 1 - j, or -1 (0x80 would do) for j >= nd. */
static _Alignas(16) int8_t render_sel[17][16];

static void render_sel_init(void)
{
        for (int nd = 0; nd <= 16; nd++)
                for (int j = 0; j < 16; j++)
                        render_sel[nd][j] = (int8_t)(j < nd ? nd - 1 - j : -1);
}
static pthread_once_t render_sel_once = PTHREAD_ONCE_INIT;

struct render_v2 {
        __m128i m0f, hex;
};

__attribute__((target(TM_AVX2_TARGET))) static inline struct render_v2 render_v2_load(void)
{
        return (struct render_v2){
            .m0f = _mm_set1_epi8(0x0f),
            .hex = _mm_loadu_si128((const void *)render_hex64),
        };
}

/* The line of (type, a) at p, nib holding a's nibbles as bytes, least
 * significant first; returns its length. */
__attribute__((target(TM_AVX2_TARGET))) static inline unsigned
render_line_v2(char *p, const struct render_v2 *r, unsigned type, uint64_t a, __m128i nib)
{
        unsigned nd = (67u - (unsigned)_lzcnt_u64(a | 1)) >> 2;
        __m128i dig = _mm_shuffle_epi8(r->hex, nib);
        __m128i sel = _mm_load_si128((const void *)render_sel[nd]);
        uint16_t head = (uint16_t)(('0' + type) | ' ' << 8);
        memcpy(p, &head, 2);
        _mm_storeu_si128((void *)(p + 2), _mm_shuffle_epi8(dig, sel));
        p[2 + nd] = '\n';
        return 3 + nd;
}

/* The lines of (t0, a0) and (t1, a1) at p, x holding a0 and a1 (the
 * scalars come from memory: cheaper than out of x); returns their length. */
__attribute__((target(TM_AVX2_TARGET))) static inline size_t
render_pair_v2(char *p, const struct render_v2 *r, __m128i x, uint64_t a0, uint64_t a1, unsigned t0,
               unsigned t1)
{
        __m128i lo = _mm_and_si128(x, r->m0f);
        __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), r->m0f);
        unsigned n0 = render_line_v2(p, r, t0, a0, _mm_unpacklo_epi8(lo, hi));
        return n0 + render_line_v2(p + n0, r, t1, a1, _mm_unpackhi_epi8(lo, hi));
}

__attribute__((target(TM_AVX2_TARGET))) static size_t
render_cols_avx2(char *dst, const uint8_t *type, const uint64_t *addr, size_t n)
{
        const struct render_v2 r = render_v2_load();
        char *p = dst;
        size_t i = 0;
        for (; i + 2 <= n; i += 2)
                p += render_pair_v2(p, &r, _mm_loadu_si128((const void *)(addr + i)), addr[i],
                                    addr[i + 1], type[i], type[i + 1]);
        return (size_t)(p - dst) + render_cols_scalar(p, type + i, addr + i, n - i);
}

__attribute__((target(TM_AVX2_TARGET))) static size_t
render_batch_avx2(char *dst, const struct tm_ref *refs, size_t n)
{
        const struct render_v2 r = render_v2_load();
        char *p = dst;
        size_t i = 0;
        for (; i + 2 <= n; i += 2) {
                uint64_t a0 = refs[i].addr, a1 = refs[i + 1].addr;
                __m128i x = _mm_unpacklo_epi64(_mm_loadl_epi64((const void *)&refs[i].addr),
                                               _mm_loadl_epi64((const void *)&refs[i + 1].addr));
                p += render_pair_v2(p, &r, x, a0, a1, refs[i].type, refs[i + 1].type);
        }
        return (size_t)(p - dst) + render_batch_scalar(p, refs + i, n - i);
}

static const struct render_impl render_avx2 = {render_batch_avx2, render_cols_avx2, "avx2"};

/* The tm_cpu_slot arch of render.c: &render_avx512 if this CPU runs it,
 * its tables made; else &render_avx2 if it runs that; else NULL. */
static const void *render_arch_choose(unsigned features)
{
        if ((features & RENDER_AVX512_NEEDS) == RENDER_AVX512_NEEDS) {
                pthread_once(&render_layout_once, render_layouts_init);
                return &render_avx512;
        }
        if ((features & TM_CPU_AVX2_SET) != TM_CPU_AVX2_SET)
                return NULL;
        pthread_once(&render_sel_once, render_sel_init);
        return &render_avx2;
}

#endif
