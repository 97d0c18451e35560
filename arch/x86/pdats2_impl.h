/* pdats2_impl.h: PDATS II's block decoder for x86-64 with AVX-512 VBMI
 * (the interface and how it works: pdats2_x86.h; the record layout:
 * codecs/address/pdats2.h), included by codecs/address/pdats2.c, whose
 * p2x_blocks() takes it when pdats2_arch_choose() offers it. */
#ifndef TM_X86_PDATS2_IMPL_H
#define TM_X86_PDATS2_IMPL_H

#include <immintrin.h>

/* What the functions below are compiled for, and the same as TM_CPU_* bits
 * for the run-time check: keep the two lists equal. */
#define P2X_TARGET "avx512f,avx512bw,avx512vl,avx512vbmi,popcnt"
#define P2X_NEEDS TM_CPU_AVX512_BYTES

/* Byte tables indexed by bits 7..1 of a header byte (h >> 1), so that
 * one vpermi2b looks one up for 64 bytes: the offset bytes that follow the
 * header, in a 32-bit and in a 64-bit file. Index bit 6 is the kind; data
 * codes are bits 4..2, instruction codes bits 5..4. */
#define R4(x) x, x, x, x
#define R16(x) R4(x), R4(x), R4(x), R4(x)
#define P2X_DATA_OL(big) R4(0), R4(0), R4(0), R4(0), R4(0), R4(1), R4(2), R4(big)
#define P2X_OL(big) P2X_DATA_OL(big), P2X_DATA_OL(big), R16(0), R16(1), R16(2), R16(big)
static const _Alignas(64) int8_t p2x_ol32[128] = {P2X_OL(4)};
static const _Alignas(64) int8_t p2x_ol64[128] = {P2X_OL(8)};
#undef R4
#undef R16
#undef P2X_DATA_OL
#undef P2X_OL

_Alignas(64) static const uint8_t p2x_iota[64] = {
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
    44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};

/* Inclusive prefix sum of 16 dwords. */
__attribute__((target(P2X_TARGET))) static inline __m512i p2x_scan(__m512i x)
{
        const __m512i z = _mm512_setzero_si512();
        x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 15));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 14));
        x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 12));
        return _mm512_add_epi32(x, _mm512_alignr_epi32(x, z, 8));
}

/* Every lane set to lane 15 of x. */
__attribute__((target(P2X_TARGET))) static inline __m512i p2x_last(__m512i x)
{
        return _mm512_permutexvar_epi32(_mm512_set1_epi32(15), x);
}

/* Inclusive prefix sum of 8 qwords. */
__attribute__((target(P2X_TARGET))) static inline __m512i p2x_scan64(__m512i x)
{
        const __m512i z = _mm512_setzero_si512();
        x = _mm512_add_epi64(x, _mm512_alignr_epi64(x, z, 7));
        x = _mm512_add_epi64(x, _mm512_alignr_epi64(x, z, 6));
        return _mm512_add_epi64(x, _mm512_alignr_epi64(x, z, 4));
}

/* Every lane set to lane 7 of x. */
__attribute__((target(P2X_TARGET))) static inline __m512i p2x_last64(__m512i x)
{
        return _mm512_permutexvar_epi64(_mm512_set1_epi64(7), x);
}

/* Blocks whose record starts are found in one pass before any is decoded:
 * only the entry into the next block is serial there (one table lookup a
 * block), so the doubling of many blocks overlaps. */
#define P2X_BATCH 8
/* One entry a record of a batch, plus room for the 16 lanes a group
 * stores. */
#define P2X_RECS (P2X_BATCH * 64 + 64)

/* Record starts of one 64-byte block: next[j] = j + the length of a record
 * starting at byte j (at most 72); e has the entry (0..8, the first
 * record's position) in every lane. *exit gets, in every lane, the first
 * position past the block that the records reach from e (64..72); the
 * return value has the starts from e in order in its lanes, then that exit
 * position in the lanes after the last record. Pointer doubling: next is
 * composed with itself (positions >= 64 index `past`, which maps them to
 * themselves), and at each level lanes [L, 2L) are found from lanes
 * [0, L) through next composed L times. The exit is next composed 64
 * times at e: all that one block waits for from the one before. */
__attribute__((target(P2X_TARGET))) static inline __m512i p2x_starts(__m512i next, __m512i iota,
                                                                     __m512i e, __m512i *exit)
{
        const __m512i past = _mm512_add_epi8(iota, _mm512_set1_epi8(64));
        __m512i t[6];
        t[0] = next;
        for (unsigned l = 1; l < 6; l++)
                t[l] = _mm512_permutex2var_epi8(t[l - 1], t[l - 1], past);
        *exit = _mm512_permutexvar_epi8(e, _mm512_permutex2var_epi8(t[5], t[5], past));
        __m512i pos = e;
        for (unsigned l = 0; l < 6; l++) {
                const __m512i back = _mm512_sub_epi8(iota, _mm512_set1_epi8((char)(1 << l)));
                const __m512i to =
                    _mm512_permutex2var_epi8(t[l], _mm512_permutexvar_epi8(back, pos), past);
                pos = _mm512_mask_mov_epi8(pos, ~0ull << (1 << l), to);
        }
        return pos;
}

/* A batch being decoded: pass 1 fills starts and entry; pass 2 each
 * record's header byte, its run length and the W bytes after its header
 * (W = 4 or 8, the largest offset: a big-endian dword or qword in rw);
 * passes 3 and 4, which differ with the width, the rest. */
struct p2x_batch {
        _Alignas(64) uint8_t starts[P2X_BATCH][64];
        unsigned entry[P2X_BATCH + 1];
        _Alignas(64) uint8_t nb[P2X_RECS], hb[P2X_RECS];
        _Alignas(64) uint64_t rw[P2X_RECS]; /* W = 4: read as uint32_t[] */
        _Alignas(64) uint32_t kx[P2X_RECS]; /* each record's first reference in out */
        size_t nrec;
};

/* Pass 1: where the records of nblk blocks from q start. ol is the table
 * of offset lengths (p2x_ol32 or p2x_ol64). */
__attribute__((target(P2X_TARGET))) static inline void
p2x_pass1(struct p2x_batch *bt, const uint8_t *q, size_t nblk, const int8_t *ol_tab)
{
        const __m512i iota = _mm512_load_si512(p2x_iota);
        const __m512i ol_lo = _mm512_load_si512(ol_tab), ol_hi = _mm512_load_si512(ol_tab + 64);
        __m512i e = _mm512_setzero_si512();
        bt->entry[0] = 0;
        for (size_t j = 0; j < nblk; j++) {
                const __m512i b0 = _mm512_loadu_si512(q + 64 * j);
                const __m512i ol = _mm512_permutex2var_epi8(ol_lo, _mm512_srli_epi16(b0, 1), ol_hi);
                const __m512i next =
                    _mm512_add_epi8(_mm512_add_epi8(iota, ol), _mm512_set1_epi8(1));
                __m512i x;
                const __m512i pos = p2x_starts(next, iota, e, &x);
                _mm512_store_si512(bt->starts[j], pos);
                e = _mm512_sub_epi8(x, _mm512_set1_epi8(64));
                bt->entry[j + 1] = (unsigned)_mm_cvtsi128_si32(_mm512_castsi512_si128(e)) & 0xff;
        }
}

/* Pass 2: gather each record's header and the w (4 or 8) bytes after it,
 * packed from block to block, until a block's references would not fit in
 * cap - *k (plus 4: the run stores write past a record). Returns the
 * blocks taken; bt->nrec and *k count their records and references. */
__attribute__((target(P2X_TARGET))) static inline size_t
p2x_pass2(struct p2x_batch *bt, const uint8_t *q, size_t nblk, size_t cap, size_t *k, unsigned w)
{
        const __m512i iota = _mm512_load_si512(p2x_iota);
        /* Byte w*r+b of lane r takes the byte at the record's position +
         * w - b: the w bytes after the header, read big-endian. */
        const __m512i rep = _mm512_srli_epi16(
            _mm512_and_si512(iota, _mm512_set1_epi8((char)~(w - 1))), w == 8 ? 3 : 2);
        const __m512i cw = _mm512_sub_epi8(_mm512_set1_epi8((char)w),
                                           _mm512_and_si512(iota, _mm512_set1_epi8((char)(w - 1))));
        const unsigned per = 64 / w; /* records a gather vector holds */
        uint8_t *rw = (uint8_t *)bt->rw;
        size_t j = 0, nrec = 0;
        for (; j < nblk; j++) {
                const uint8_t *b = q + 64 * j;
                const __m512i b0 = _mm512_loadu_si512(b);
                const __m512i b1 = _mm512_loadu_si512(b + 64);
                const __m512i pos = _mm512_load_si512(bt->starts[j]);
                const __mmask64 valid = _mm512_cmplt_epu8_mask(pos, _mm512_set1_epi8(64));
                const unsigned cnt = (unsigned)__builtin_popcountll(valid);
                const __m512i h = _mm512_permutexvar_epi8(pos, b0);
                const __m512i n = _mm512_and_si512(h, _mm512_mask_blend_epi8(_mm512_movepi8_mask(h),
                                                                             _mm512_set1_epi8(3),
                                                                             _mm512_set1_epi8(31)));
                const __m512i nv = _mm512_maskz_mov_epi8(valid, n);
                const size_t refs = cnt + (size_t)_mm512_reduce_add_epi64(
                                              _mm512_sad_epu8(nv, _mm512_setzero_si512()));
                if (cap - *k < refs + 4)
                        break;
                _mm512_storeu_si512(bt->hb + nrec, h);
                _mm512_storeu_si512(bt->nb + nrec, nv);
                for (unsigned g = 0; g * per < cnt; g++) {
                        const __m512i sel = _mm512_add_epi8(rep, _mm512_set1_epi8((char)(per * g)));
                        const __m512i at = _mm512_add_epi8(_mm512_permutexvar_epi8(sel, pos), cw);
                        _mm512_storeu_si512(rw + (nrec + per * g) * w,
                                            _mm512_permutex2var_epi8(b0, at, b1));
                }
                nrec += cnt;
                *k += refs;
        }
        bt->nrec = nrec;
        return j;
}

/* Passes 1 and 2 on the batch at q, left (>= 128) bytes before the end
 * of the input, with w-byte offset fields: returns the blocks taken, and
 * *nblk the blocks there were (fewer taken: the rest did not fit in cap). */
__attribute__((target(P2X_TARGET))) static inline size_t p2x_prepare(struct p2x_batch *bt,
                                                                     const uint8_t *q, size_t left,
                                                                     size_t cap, size_t *k,
                                                                     unsigned w, size_t *nblk)
{
        const size_t n = (left - 64) / 64;
        *nblk = n < P2X_BATCH ? n : P2X_BATCH;
        p2x_pass1(bt, q, *nblk, w == 8 ? p2x_ol64 : p2x_ol32);
        return p2x_pass2(bt, q, *nblk, cap, k, w);
}

/* What pass 3 reads of 16 records' header bytes, in dword lanes. */
struct p2x_hdr {
        __mmask16 v, i, z0, z1; /* a record; instruction; data in zone 0, 1 */
        __m512i n32;            /* run length (0 past the last record) */
        __m512i hi5;            /* header bits 7..3 */
        __m512i t32;            /* reference type */
};

/* Records r0..r0+16 of the batch; also stores each one's first reference
 * in out, counted from *kbase on, in kx, and moves *kbase past them. */
__attribute__((target(P2X_TARGET))) static inline struct p2x_hdr p2x_hdr(struct p2x_batch *bt,
                                                                         size_t r0, __m512i *kbase)
{
        struct p2x_hdr x;
        const size_t left = bt->nrec - r0;
        x.v = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
        const __m512i h32 = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(bt->hb + r0)));
        /* lanes past the last record: bytes of no record */
        x.n32 = _mm512_maskz_cvtepu8_epi32(x.v, _mm_loadu_si128((const __m128i *)(bt->nb + r0)));
        x.i = _mm512_mask_test_epi32_mask(x.v, h32, _mm512_set1_epi32(0x80));
        x.z1 = _mm512_mask_test_epi32_mask(x.v, h32, _mm512_set1_epi32(4)) & (__mmask16)~x.i;
        x.z0 = x.v & (__mmask16)~x.i & (__mmask16)~x.z1;
        x.hi5 = _mm512_srli_epi32(h32, 3);
        x.t32 =
            _mm512_mask_mov_epi32(_mm512_and_si512(_mm512_srli_epi32(h32, 6), _mm512_set1_epi32(1)),
                                  x.i, _mm512_set1_epi32(2));
        const __m512i one = _mm512_maskz_add_epi32(x.v, x.n32, _mm512_set1_epi32(1));
        const __m512i kin = _mm512_add_epi32(p2x_scan(one), *kbase);
        _mm512_storeu_si512(bt->kx + r0, _mm512_sub_epi32(kin, one));
        *kbase = p2x_last(kin);
        return x;
}

/* The small offsets, dword tables indexed by header bits 7..3: data codes
 * 0-4 (0, +4, -4, +8, -8); an instruction record without offset bytes is
 * +1 unit. */
#define P2X_SMALL_LO _mm512_set_epi32(0, 0, 0, -8, 8, -4, 4, 0, 0, 0, 0, -8, 8, -4, 4, 0)
#define P2X_SMALL_HI _mm512_set1_epi32(1)

/* The chain state in vector lanes, each lane the same value: dwords in
 * 32-bit files, qwords in 64-bit ones. */
struct p2x_lanes {
        __m512i a, z0, z1;
};

/* Passes 3 and 4 for 32-bit files: bt's records decoded into out, their
 * references from k0 on, the chains carried in v. */
__attribute__((target(P2X_TARGET))) static inline void p2x_decode32(struct p2x_batch *bt,
                                                                    struct tm_ref *out, size_t k0,
                                                                    unsigned shift,
                                                                    struct p2x_lanes *v)
{
        /* Dword tables indexed by bits 7..3 of a header byte: the right
         * shift that sign-extends its offset from the 4 bytes read after it
         * (32: no offset bytes). */
        const __m512i sh_lo =
            _mm512_set_epi32(0, 16, 24, 32, 32, 32, 32, 32, 0, 16, 24, 32, 32, 32, 32, 32);
        const __m512i sh_hi =
            _mm512_set_epi32(0, 0, 0, 0, 16, 16, 16, 16, 24, 24, 24, 24, 32, 32, 32, 32);
        /* A reference as dwords: address, 0, type, 0. own[q] interleaves
         * four records' addresses and types that way. */
        const __m512i refi = _mm512_set_epi32(0, 19, 0, 3, 0, 18, 0, 2, 0, 17, 0, 1, 0, 16, 0, 0);
        const uint32_t u = 1u << shift;
        /* References 1..3 of a run in lanes 1..3: address base + i*u,
         * type 2. */
        const __m512i runc =
            _mm512_set_epi32(0, 2, 0, 3 * u, 0, 2, 0, 2 * u, 0, 2, 0, u, 0, 0, 0, 0);
        const __m128i shc = _mm_cvtsi32_si128((int)shift);
        /* pass 3 writes each record's reference and the base of its run
         * (the address before the run's first fetch) */
        _Alignas(64) uint32_t own[P2X_RECS][4];
        _Alignas(64) uint32_t rb[P2X_RECS];
        const uint32_t *rw = (const uint32_t *)bt->rw;
        const size_t nrec = bt->nrec;
        __m512i kbase = _mm512_set1_epi32((int)k0);
        /* Pass 3: decode the records, 16 at a time. */
        for (size_t r0 = 0; r0 < nrec; r0 += 16) {
                const struct p2x_hdr x = p2x_hdr(bt, r0, &kbase);
                const __m512i raw = _mm512_loadu_si512(rw + r0);
                const __m512i sh = _mm512_permutex2var_epi32(sh_lo, x.hi5, sh_hi);
                const __m512i sm = _mm512_permutex2var_epi32(P2X_SMALL_LO, x.hi5, P2X_SMALL_HI);
                const __m512i off =
                    _mm512_mask_mov_epi32(_mm512_srav_epi32(raw, sh),
                                          _mm512_cmpeq_epi32_mask(sh, _mm512_set1_epi32(32)), sm);
                const __m512i ownd = _mm512_maskz_sll_epi32(x.i, off, shc);
                const __m512i nsh = _mm512_sll_epi32(x.n32, shc);
                const __m512i ain = _mm512_add_epi32(p2x_scan(_mm512_add_epi32(ownd, nsh)), v->a);
                const __m512i runbase = _mm512_sub_epi32(ain, nsh);
                v->a = p2x_last(ain);
                const __m512i d0 =
                    _mm512_add_epi32(p2x_scan(_mm512_maskz_mov_epi32(x.z0, off)), v->z0);
                const __m512i d1 =
                    _mm512_add_epi32(p2x_scan(_mm512_maskz_mov_epi32(x.z1, off)), v->z1);
                v->z0 = p2x_last(d0);
                v->z1 = p2x_last(d1);
                const __m512i addr =
                    _mm512_mask_blend_epi32(x.i, _mm512_mask_blend_epi32(x.z1, d0, d1), runbase);
                _mm512_storeu_si512(rb + r0, runbase);
                for (unsigned w = 0; w < 4; w++)
                        _mm512_storeu_si512(
                            own[r0 + 4 * w],
                            _mm512_maskz_permutex2var_epi32(
                                0x5555, addr,
                                _mm512_add_epi32(refi, _mm512_set1_epi32((int)(4 * w))), x.t32));
        }
        /* Pass 4: write the references. One 64-byte store a record: its
         * own reference and three of its run (the next record's overwrite
         * what is past its run); longer runs go on. */
        for (size_t r = 0; r < nrec; r++) {
                struct tm_ref *o = out + bt->kx[r];
                const __m512i run =
                    _mm512_add_epi32(_mm512_maskz_set1_epi32(0x1110, (int)rb[r]), runc);
                _mm512_storeu_si512(
                    o, _mm512_inserti32x4(run, _mm_load_si128((const __m128i *)own[r]), 0));
                for (unsigned n = 4; n <= bt->nb[r]; n++) {
                        o[n].addr = (uint32_t)(rb[r] + n * u);
                        o[n].type = TM_IFETCH;
                }
        }
}

/* Lanes 8*half .. 8*half+7 of x's dwords, as qwords. */
__attribute__((target(P2X_TARGET))) static inline __m256i p2x_half(__m512i x, unsigned half)
{
        return half ? _mm512_extracti64x4_epi64(x, 1) : _mm512_castsi512_si256(x);
}

/* The same for 64-bit files: offsets of up to 8 bytes, addresses in qword
 * lanes, 8 records a vector in the chains. */
__attribute__((target(P2X_TARGET))) static inline void p2x_decode64(struct p2x_batch *bt,
                                                                    struct tm_ref *out, size_t k0,
                                                                    unsigned shift,
                                                                    struct p2x_lanes *v)
{
        /* The right shift that sign-extends an offset from the 8 bytes
         * read after the header (64: no offset bytes). */
        const __m512i sh_lo =
            _mm512_set_epi32(0, 48, 56, 64, 64, 64, 64, 64, 0, 48, 56, 64, 64, 64, 64, 64);
        const __m512i sh_hi =
            _mm512_set_epi32(0, 0, 0, 0, 48, 48, 48, 48, 56, 56, 56, 56, 64, 64, 64, 64);
        /* Four records' references, (address, type) qword pairs, from
         * addresses in lanes 0..7 and types in lanes 8..15. */
        const __m512i pair_lo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
        const __m512i pair_hi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
        const uint64_t u = (uint64_t)1 << shift;
        const __m512i runc =
            _mm512_set_epi64(2, (long long)(3 * u), 2, (long long)(2 * u), 2, (long long)u, 0, 0);
        const __m128i shc = _mm_cvtsi32_si128((int)shift);
        _Alignas(64) uint64_t own[P2X_RECS][2];
        _Alignas(64) uint64_t rb[P2X_RECS];
        const size_t nrec = bt->nrec;
        __m512i kbase = _mm512_set1_epi32((int)k0);
        /* Pass 3: header lookups 16 records at a time, the chains in two
         * halves of 8. */
        for (size_t r0 = 0; r0 < nrec; r0 += 16) {
                const struct p2x_hdr x = p2x_hdr(bt, r0, &kbase);
                const __m512i sh = _mm512_permutex2var_epi32(sh_lo, x.hi5, sh_hi);
                const __m512i sm = _mm512_permutex2var_epi32(P2X_SMALL_LO, x.hi5, P2X_SMALL_HI);
                for (unsigned hf = 0; hf < 2 && r0 + 8 * hf < nrec; hf++) {
                        const size_t r = r0 + 8 * hf;
                        const __mmask8 i = (__mmask8)(x.i >> (8 * hf));
                        const __mmask8 z0 = (__mmask8)(x.z0 >> (8 * hf));
                        const __mmask8 z1 = (__mmask8)(x.z1 >> (8 * hf));
                        const __m512i sh64 = _mm512_cvtepu32_epi64(p2x_half(sh, hf));
                        const __m512i sm64 = _mm512_cvtepi32_epi64(p2x_half(sm, hf));
                        const __m512i n64 = _mm512_cvtepu32_epi64(p2x_half(x.n32, hf));
                        const __m512i t64 = _mm512_cvtepu32_epi64(p2x_half(x.t32, hf));
                        const __m512i raw = _mm512_load_si512(bt->rw + r);
                        const __m512i off = _mm512_mask_mov_epi64(
                            _mm512_srav_epi64(raw, sh64),
                            _mm512_cmpeq_epi64_mask(sh64, _mm512_set1_epi64(64)), sm64);
                        const __m512i ownd = _mm512_maskz_sll_epi64(i, off, shc);
                        const __m512i nsh = _mm512_sll_epi64(n64, shc);
                        const __m512i ain =
                            _mm512_add_epi64(p2x_scan64(_mm512_add_epi64(ownd, nsh)), v->a);
                        const __m512i runbase = _mm512_sub_epi64(ain, nsh);
                        v->a = p2x_last64(ain);
                        const __m512i d0 =
                            _mm512_add_epi64(p2x_scan64(_mm512_maskz_mov_epi64(z0, off)), v->z0);
                        const __m512i d1 =
                            _mm512_add_epi64(p2x_scan64(_mm512_maskz_mov_epi64(z1, off)), v->z1);
                        v->z0 = p2x_last64(d0);
                        v->z1 = p2x_last64(d1);
                        const __m512i addr = _mm512_mask_blend_epi64(
                            i, _mm512_mask_blend_epi64(z1, d0, d1), runbase);
                        _mm512_store_si512(rb + r, runbase);
                        _mm512_store_si512(own[r], _mm512_permutex2var_epi64(addr, pair_lo, t64));
                        _mm512_store_si512(own[r + 4],
                                           _mm512_permutex2var_epi64(addr, pair_hi, t64));
                }
        }
        /* Pass 4 as in 32-bit files, with qword addresses. */
        for (size_t r = 0; r < nrec; r++) {
                struct tm_ref *o = out + bt->kx[r];
                const __m512i run =
                    _mm512_add_epi64(_mm512_maskz_set1_epi64(0x54, (long long)rb[r]), runc);
                _mm512_storeu_si512(
                    o, _mm512_inserti32x4(run, _mm_load_si128((const __m128i *)own[r]), 0));
                for (unsigned n = 4; n <= bt->nb[r]; n++) {
                        o[n].addr = rb[r] + n * u;
                        o[n].type = TM_IFETCH;
                }
        }
}

/* x in every lane of width w (4: dwords, 8: qwords). */
__attribute__((target(P2X_TARGET))) static inline __m512i p2x_splat(uint64_t x, unsigned w)
{
        return w == 8 ? _mm512_set1_epi64((long long)x) : _mm512_set1_epi32((int)(uint32_t)x);
}

/* Lane 0 of x, a lane of width w. */
__attribute__((target(P2X_TARGET))) static inline uint64_t p2x_lane0(__m512i x, unsigned w)
{
        const uint64_t q = (uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(x));
        return w == 8 ? q : (uint32_t)q;
}

/* The block decoder for offset fields of w bytes (4: 32-bit files, 8:
 * 64-bit ones): batches of up to P2X_BATCH blocks, passes 1 and 2 shared,
 * 3 and 4 by width. See p2x_blocks_fn. */
__attribute__((target(P2X_TARGET))) static inline size_t p2x_run(const uint8_t *in, size_t len,
                                                                 size_t *pp, struct tm_ref *out,
                                                                 size_t cap, unsigned shift,
                                                                 struct p2x_chain *c, unsigned w)
{
        struct p2x_batch bt;
        struct p2x_lanes v = {p2x_splat(c->a, w), p2x_splat(c->zone[0], w),
                              p2x_splat(c->zone[1], w)};
        size_t p = *pp, k = 0;
        while (len - p >= 128) {
                size_t nblk;
                const size_t k0 = k;
                const size_t j = p2x_prepare(&bt, in + p, len - p, cap, &k, w, &nblk);
                if (w == 8)
                        p2x_decode64(&bt, out, k0, shift, &v);
                else
                        p2x_decode32(&bt, out, k0, shift, &v);
                p += 64 * j + bt.entry[j];
                if (j < nblk)
                        break;
        }
        c->a = p2x_lane0(v.a, w);
        c->zone[0] = p2x_lane0(v.z0, w);
        c->zone[1] = p2x_lane0(v.z1, w);
        *pp = p;
        return k;
}

__attribute__((target(P2X_TARGET))) static size_t p2x_blocks_avx512(const uint8_t *in, size_t len,
                                                                    size_t *pp, struct tm_ref *out,
                                                                    size_t cap, unsigned shift,
                                                                    struct p2x_chain *c)
{
        return p2x_run(in, len, pp, out, cap, shift, c, 4);
}

__attribute__((target(P2X_TARGET))) static size_t
p2x_blocks64_avx512(const uint8_t *in, size_t len, size_t *pp, struct tm_ref *out, size_t cap,
                    unsigned shift, struct p2x_chain *c)
{
        return p2x_run(in, len, pp, out, cap, shift, c, 8);
}

static const struct pdats2_impl pdats2_avx512 = {{p2x_blocks_avx512, p2x_blocks64_avx512}};

/* The tm_cpu_slot arch of pdats2.c: the block decoders if this CPU runs
 * them, else NULL. */
static const void *pdats2_arch_choose(unsigned features)
{
        return (features & P2X_NEEDS) == P2X_NEEDS ? &pdats2_avx512 : NULL;
}

#endif
