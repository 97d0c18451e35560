/* render: the din line renderers. tm_render_din is inline in render.h;
 * here are the portable implementations of tm_render_din_batch and
 * tm_render_din_cols (tm_render_din line after line) and the run-time
 * choice between them and the vector ones of arch/
 * (arch/x86/render_impl.h: AVX-512, AVX2). */
#include "render.h"

#include <stddef.h>
#include <string.h>

#include "../common/tm_cpu.h"

/* ---- portable path ---- */

static size_t render_batch_scalar(char *dst, const struct tm_ref *refs, size_t n)
{
        char *p = dst;
        for (size_t i = 0; i < n; i++)
                p += tm_render_din(p, refs[i].type, refs[i].addr);
        return (size_t)(p - dst);
}

static size_t render_cols_scalar(char *dst, const uint8_t *type, const uint64_t *addr, size_t n)
{
        char *p = dst;
        for (size_t i = 0; i < n; i++)
                p += tm_render_din(p, type[i], addr[i]);
        return (size_t)(p - dst);
}

typedef size_t render_batch_fn(char *dst, const struct tm_ref *refs, size_t n);
typedef size_t render_cols_fn(char *dst, const uint8_t *type, const uint64_t *addr, size_t n);

/* tm_render_din_batch's and tm_render_din_cols's implementations: the
 * scalar ones, or a vector path of arch/ (tm_cpu.h). */
struct render_impl {
        render_batch_fn *batch;
        render_cols_fn *cols;
        const char *name; /* tm_render_din_batch_impl's */
};

#ifdef TM_CPU_X86
#include "../../arch/x86/render_impl.h"
#endif

static const struct render_impl render_portable = {render_batch_scalar, render_cols_scalar,
                                                   "scalar"};
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

size_t tm_render_din_cols(char *dst, const uint8_t *type, const uint64_t *addr, size_t n)
{
        return render_impl()->cols(dst, type, addr, n);
}

const char *tm_render_din_batch_impl(void)
{
        return render_impl()->name;
}

void tm_render_force_scalar(int on)
{
        tm_cpu_choose(&render_slot, on);
}
