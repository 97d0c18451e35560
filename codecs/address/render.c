/* render: the din line renderers. tm_render_din is inline in render.h;
 * here are its digit table, tm_render_din_batch's portable implementation
 * and the run-time choice between it and the vector ones of arch/
 * (arch/x86/render_impl.h: AVX-512). */
#include "render.h"

#include <stddef.h>
#include <string.h>

#include "../common/tm_cpu.h"

/* clang-format off */
#define TM_HEX_ROW(h) \
        h "0" h "1" h "2" h "3" h "4" h "5" h "6" h "7" \
        h "8" h "9" h "a" h "b" h "c" h "d" h "e" h "f"

const char tm_render_hex_pairs[513] =
        TM_HEX_ROW("0") TM_HEX_ROW("1") TM_HEX_ROW("2") TM_HEX_ROW("3")
        TM_HEX_ROW("4") TM_HEX_ROW("5") TM_HEX_ROW("6") TM_HEX_ROW("7")
        TM_HEX_ROW("8") TM_HEX_ROW("9") TM_HEX_ROW("a") TM_HEX_ROW("b")
        TM_HEX_ROW("c") TM_HEX_ROW("d") TM_HEX_ROW("e") TM_HEX_ROW("f");
/* clang-format on */

/* ---- portable path ---- */

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The 8 hex digits of x as ASCII, most significant first in memory order
 * (so a little-endian store writes them in reading order). SWAR: spread
 * the nibbles to bytes, then '0' + n, plus 39 more where n >= 10 (so it
 * lands on 'a'); no table, no per-digit loop. */
static inline uint64_t render_hex8(uint32_t x)
{
        uint64_t v = x;
        v = (v | v << 16) & 0x0000ffff0000ffffull;
        v = (v | v << 8) & 0x00ff00ff00ff00ffull;
        v = (v | v << 4) & 0x0f0f0f0f0f0f0f0full;
        v = __builtin_bswap64(v);
        uint64_t ge10 = ((v + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
        return v + 0x3030303030303030ull + ge10 * 39;
}

/* One line with 8-byte stores: the digits are shifted down past the
 * leading zeros, so that a line costs the same few operations whatever
 * its length, without branches for addresses < 2^32. Writes only within
 * dst[0..TM_DIN_LINE_MAX). */
static inline size_t render_line(char *dst, unsigned type, uint64_t addr)
{
        uint16_t head = (uint16_t)(('0' + type) | ' ' << 8);
        memcpy(dst, &head, 2);
        uint32_t hi = (uint32_t)(addr >> 32);
        if (hi == 0) {
                unsigned z = (unsigned)__builtin_clz((uint32_t)addr | 1u) >> 2; /* 0..7 */
                uint64_t d = render_hex8((uint32_t)addr) >> (8 * z);
                memcpy(dst + 2, &d, 8);
                dst[10 - z] = '\n';
                return 11 - z;
        }
        unsigned z = (unsigned)__builtin_clz(hi) >> 2;
        uint64_t d = render_hex8(hi) >> (8 * z);
        memcpy(dst + 2, &d, 8);
        d = render_hex8((uint32_t)addr);
        memcpy(dst + 10 - z, &d, 8);
        dst[18 - z] = '\n';
        return 19 - z;
}

#else
/* Elsewhere the table-driven renderer of render.h. */
#define render_line tm_render_din
#endif

static size_t render_batch_scalar(char *dst, const struct tm_ref *refs, size_t n)
{
        char *p = dst;
        for (size_t i = 0; i < n; i++)
                p += render_line(p, refs[i].type, refs[i].addr);
        return (size_t)(p - dst);
}

typedef size_t render_batch_fn(char *dst, const struct tm_ref *refs, size_t n);

/* tm_render_din_batch's implementations: render_batch_scalar, or a vector
 * path of arch/ (tm_cpu.h). */
struct render_impl {
        render_batch_fn *batch;
};

#ifdef TM_CPU_X86
#include "../../arch/x86/render_impl.h"
#endif

static const struct render_impl render_portable = {render_batch_scalar};
static struct tm_cpu_slot render_slot = {.arch = TM_CPU_ARCH(render_arch_choose),
                                         .portable = &render_portable};

static const struct render_impl *render_impl(void)
{
        return tm_cpu_pick(&render_slot);
}

size_t tm_render_din_batch(char *dst, const struct tm_ref *refs, size_t n)
{
        return render_impl()->batch(dst, refs, n);
}

const char *tm_render_din_batch_impl(void)
{
        return render_impl() == &render_portable ? "scalar" : "avx512";
}

void tm_render_force_scalar(int on)
{
        tm_cpu_choose(&render_slot, on);
}
