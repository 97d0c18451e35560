/* pdats2_x86: see pdats2_x86.h; the record layout is in pdats2.h. */
#include "pdats2_x86.h"

#include <stdatomic.h>

#include "tm_cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define P2X_X86 1
#endif

#ifdef P2X_X86
#define P2X_TARGET "avx512f,avx512bw,avx512vl,avx512vbmi,popcnt"

/* A byte table indexed by bits 7..1 of a header byte (h >> 1), so that
 * one vpermi2b looks it up for 64 bytes: the offset bytes that follow the
 * header in a 32-bit file. Index bit 6 is the kind; data codes are bits
 * 4..2, instruction codes bits 5..4. */
#define R4(x) x, x, x, x
#define R16(x) R4(x), R4(x), R4(x), R4(x)
#define P2X_DATA_OL R4(0), R4(0), R4(0), R4(0), R4(0), R4(1), R4(2), R4(4)
static const _Alignas(64) int8_t p2x_ol[128] = {P2X_DATA_OL, P2X_DATA_OL, R16(0),
                                                R16(1),      R16(2),      R16(4)};
#undef R4
#undef R16
#undef P2X_DATA_OL

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

/* Blocks whose record starts are found in one pass before any is decoded:
 * only the entry into the next block is serial there (one table lookup a
 * block), so the doubling of many blocks overlaps. */
#define P2X_BATCH 8

/* Record starts of one 64-byte block: next[j] = j + the length of a record
 * starting at byte j (at most 68); e has the entry (0..4, the first
 * record's position) in every lane. *exit gets, in every lane, the first
 * position past the block that the records reach from e (64..68); the
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

__attribute__((target(P2X_TARGET))) static size_t p2x_blocks_avx512(const uint8_t *in, size_t len,
                                                                    size_t *pp, struct tm_ref *out,
                                                                    size_t cap, unsigned shift,
                                                                    struct p2x_chain *c)
{
        _Alignas(64) static const uint8_t iota_b[64] = {
            0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
            22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
            44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63};
        const __m512i iota = _mm512_load_si512(iota_b);
        const __m512i ol_lo = _mm512_load_si512(p2x_ol), ol_hi = _mm512_load_si512(p2x_ol + 64);
        /* Dword tables indexed by bits 7..3 of a header byte: the right
         * shift that sign-extends its offset from the 4 bytes read after it
         * (32: no offset bytes), and the offset when there are none. */
        const __m512i sh_lo =
            _mm512_set_epi32(0, 16, 24, 32, 32, 32, 32, 32, 0, 16, 24, 32, 32, 32, 32, 32);
        const __m512i sh_hi =
            _mm512_set_epi32(0, 0, 0, 0, 16, 16, 16, 16, 24, 24, 24, 24, 32, 32, 32, 32);
        const __m512i sm32_lo =
            _mm512_set_epi32(0, 0, 0, -8, 8, -4, 4, 0, 0, 0, 0, -8, 8, -4, 4, 0);
        const __m512i sm32_hi = _mm512_set1_epi32(1);
        /* Byte 4r+b of a dword lane r takes the offset byte at the record's
         * position + 4 - b: the dword is the 4 bytes after the header read
         * big-endian. */
        const __m512i rep = _mm512_srli_epi16(_mm512_and_si512(iota, _mm512_set1_epi8(~3)), 2);
        const __m512i c4 =
            _mm512_sub_epi8(_mm512_set1_epi8(4), _mm512_and_si512(iota, _mm512_set1_epi8(3)));
        /* A reference as dwords: address, 0, type, 0. own[q] interleaves
         * four records' addresses and types that way. */
        const __m512i refi = _mm512_set_epi32(0, 19, 0, 3, 0, 18, 0, 2, 0, 17, 0, 1, 0, 16, 0, 0);
        const uint32_t u = 1u << shift;
        /* References 1..3 of a run in lanes 1..3: address base + i*u,
         * type 2. */
        const __m512i runc =
            _mm512_set_epi32(0, 2, 0, 3 * u, 0, 2, 0, 2 * u, 0, 2, 0, u, 0, 0, 0, 0);
        const __m128i shc = _mm_cvtsi32_si128((int)shift);
        _Alignas(64) uint8_t starts[P2X_BATCH][64];
        unsigned entry[P2X_BATCH + 1];
        /* One entry a record of the batch (plus room for the 16 lanes a
         * group stores). Pass 2 writes its header byte, its run length and
         * the 4 bytes after its header; pass 3 its reference, the base of
         * its run (the address before the run's first fetch) and its first
         * reference's index in out. */
        enum { P2X_RECS = P2X_BATCH * 64 + 64 };
        _Alignas(64) uint32_t own[P2X_RECS][4];
        _Alignas(64) uint32_t kx[P2X_RECS], rb[P2X_RECS];
        _Alignas(64) uint32_t rw[P2X_RECS];
        _Alignas(64) uint8_t nb[P2X_RECS], hb[P2X_RECS];
        __m512i va = _mm512_set1_epi32((int)c->a);
        __m512i vz0 = _mm512_set1_epi32((int)c->zone[0]);
        __m512i vz1 = _mm512_set1_epi32((int)c->zone[1]);
        size_t p = *pp, k = 0;

        while (len - p >= 128) {
                /* Pass 1: where the records of the next blocks start. */
                size_t nblk = (len - p - 64) / 64;
                nblk = nblk < P2X_BATCH ? nblk : P2X_BATCH;
                __m512i e = _mm512_setzero_si512();
                entry[0] = 0;
                for (size_t j = 0; j < nblk; j++) {
                        const __m512i b0 = _mm512_loadu_si512(in + p + 64 * j);
                        const __m512i ol =
                            _mm512_permutex2var_epi8(ol_lo, _mm512_srli_epi16(b0, 1), ol_hi);
                        const __m512i next =
                            _mm512_add_epi8(_mm512_add_epi8(iota, ol), _mm512_set1_epi8(1));
                        __m512i x;
                        const __m512i pos = p2x_starts(next, iota, e, &x);
                        _mm512_store_si512(starts[j], pos);
                        e = _mm512_sub_epi8(x, _mm512_set1_epi8(64));
                        entry[j + 1] =
                            (unsigned)_mm_cvtsi128_si32(_mm512_castsi512_si128(e)) & 0xff;
                }
                /* Pass 2: gather each record's header and the 4 bytes after
                 * it, packed from block to block, until a block's
                 * references would not fit. */
                size_t j = 0, nrec = 0;
                const size_t k0 = k;
                for (; j < nblk; j++) {
                        const uint8_t *q = in + p + 64 * j;
                        const __m512i b0 = _mm512_loadu_si512(q);
                        const __m512i b1 = _mm512_loadu_si512(q + 64);
                        const __m512i pos = _mm512_load_si512(starts[j]);
                        const __mmask64 valid = _mm512_cmplt_epu8_mask(pos, _mm512_set1_epi8(64));
                        const unsigned cnt = (unsigned)__builtin_popcountll(valid);
                        const __m512i h = _mm512_permutexvar_epi8(pos, b0);
                        const __m512i n = _mm512_and_si512(
                            h, _mm512_mask_blend_epi8(_mm512_movepi8_mask(h), _mm512_set1_epi8(3),
                                                      _mm512_set1_epi8(31)));
                        const __m512i nv = _mm512_maskz_mov_epi8(valid, n);
                        const size_t refs = cnt + (size_t)_mm512_reduce_add_epi64(
                                                      _mm512_sad_epu8(nv, _mm512_setzero_si512()));
                        if (cap - k < refs + 4)
                                break;
                        _mm512_storeu_si512(hb + nrec, h);
                        _mm512_storeu_si512(nb + nrec, nv);
                        for (unsigned g = 0; g * 16 < cnt; g++) {
                                const __m512i sel =
                                    _mm512_add_epi8(rep, _mm512_set1_epi8((char)(16 * g)));
                                const __m512i at =
                                    _mm512_add_epi8(_mm512_permutexvar_epi8(sel, pos), c4);
                                _mm512_storeu_si512(rw + nrec + 16 * g,
                                                    _mm512_permutex2var_epi8(b0, at, b1));
                        }
                        nrec += cnt;
                        k += refs;
                }
                /* Pass 3: decode the records, 16 at a time. */
                __m512i kbase = _mm512_set1_epi32((int)k0);
                for (size_t r0 = 0; r0 < nrec; r0 += 16) {
                        const __mmask16 v =
                            nrec - r0 >= 16 ? 0xffff : (__mmask16)((1u << (nrec - r0)) - 1);
                        const __m512i h32 =
                            _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(hb + r0)));
                        /* lanes past the last record: bytes of no record */
                        const __m512i n32 = _mm512_maskz_cvtepu8_epi32(
                            v, _mm_loadu_si128((const __m128i *)(nb + r0)));
                        const __m512i raw = _mm512_loadu_si512(rw + r0);
                        const __mmask16 i =
                            _mm512_mask_test_epi32_mask(v, h32, _mm512_set1_epi32(0x80));
                        const __mmask16 z1 =
                            _mm512_mask_test_epi32_mask(v, h32, _mm512_set1_epi32(4)) &
                            (__mmask16)~i;
                        const __mmask16 z0 = v & (__mmask16)~i & (__mmask16)~z1;
                        const __m512i hi5 = _mm512_srli_epi32(h32, 3);
                        const __m512i sh = _mm512_permutex2var_epi32(sh_lo, hi5, sh_hi);
                        const __m512i sm = _mm512_permutex2var_epi32(sm32_lo, hi5, sm32_hi);
                        const __m512i off = _mm512_mask_mov_epi32(
                            _mm512_srav_epi32(raw, sh),
                            _mm512_cmpeq_epi32_mask(sh, _mm512_set1_epi32(32)), sm);
                        const __m512i t32 = _mm512_mask_mov_epi32(
                            _mm512_and_si512(_mm512_srli_epi32(h32, 6), _mm512_set1_epi32(1)), i,
                            _mm512_set1_epi32(2));
                        const __m512i ownd = _mm512_maskz_sll_epi32(i, off, shc);
                        const __m512i nsh = _mm512_sll_epi32(n32, shc);
                        const __m512i ain =
                            _mm512_add_epi32(p2x_scan(_mm512_add_epi32(ownd, nsh)), va);
                        const __m512i runbase = _mm512_sub_epi32(ain, nsh);
                        va = p2x_last(ain);
                        const __m512i d0 =
                            _mm512_add_epi32(p2x_scan(_mm512_maskz_mov_epi32(z0, off)), vz0);
                        const __m512i d1 =
                            _mm512_add_epi32(p2x_scan(_mm512_maskz_mov_epi32(z1, off)), vz1);
                        vz0 = p2x_last(d0);
                        vz1 = p2x_last(d1);
                        const __m512i addr = _mm512_mask_blend_epi32(
                            i, _mm512_mask_blend_epi32(z1, d0, d1), runbase);
                        const __m512i one = _mm512_maskz_add_epi32(v, n32, _mm512_set1_epi32(1));
                        const __m512i kin = _mm512_add_epi32(p2x_scan(one), kbase);
                        kbase = p2x_last(kin);
                        _mm512_storeu_si512(kx + r0, _mm512_sub_epi32(kin, one));
                        _mm512_storeu_si512(rb + r0, runbase);
                        for (unsigned w = 0; w < 4; w++)
                                _mm512_storeu_si512(
                                    own[r0 + 4 * w],
                                    _mm512_maskz_permutex2var_epi32(
                                        0x5555, addr,
                                        _mm512_add_epi32(refi, _mm512_set1_epi32((int)(4 * w))),
                                        t32));
                }
                /* Pass 4: write the references. One 64-byte store a record:
                 * its own reference and three of its run (the next record's
                 * overwrite what is past its run); longer runs go on. */
                for (size_t r = 0; r < nrec; r++) {
                        struct tm_ref *o = out + kx[r];
                        const __m512i run =
                            _mm512_add_epi32(_mm512_maskz_set1_epi32(0x1110, (int)rb[r]), runc);
                        _mm512_storeu_si512(
                            o, _mm512_inserti32x4(run, _mm_load_si128((const __m128i *)own[r]), 0));
                        for (unsigned x = 4; x <= nb[r]; x++) {
                                o[x].addr = (uint32_t)(rb[r] + x * u);
                                o[x].type = TM_IFETCH;
                        }
                }
                p += 64 * j + entry[j];
                if (j < nblk)
                        break;
        }
        c->a = (uint32_t)_mm512_cvtsi512_si32(va);
        c->zone[0] = (uint32_t)_mm512_cvtsi512_si32(vz0);
        c->zone[1] = (uint32_t)_mm512_cvtsi512_si32(vz1);
        *pp = p;
        return k;
}

#endif

/* 2 when this CPU runs the block decoder, else 1. */
static int p2x_choose(void)
{
        return !tm_cpu_env_off("TM_DECODE_SCALAR") && tm_cpu_avx512_vbmi() ? 2 : 1;
}

/* 0 until chosen; then 1: the scalar decoder, 2: the block decoder. */
static atomic_int p2x_choice;

p2x_blocks_fn *p2x_blocks(void)
{
        int s = atomic_load_explicit(&p2x_choice, memory_order_relaxed);
        if (s == 0) {
                s = p2x_choose();
                atomic_store_explicit(&p2x_choice, s, memory_order_relaxed);
        }
#ifdef P2X_X86
        if (s == 2)
                return p2x_blocks_avx512;
#endif
        return NULL;
}

void p2x_force_scalar(int on)
{
        atomic_store_explicit(&p2x_choice, on ? 1 : p2x_choose(), memory_order_relaxed);
}
