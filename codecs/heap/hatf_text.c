/* hatf_text: HATF decoded straight into ascii lines (hatf_text.h). The
 * decoder is vector code, arch/x86/hatf_text_impl.h, which says how it
 * works; without AVX-512 there is no text decoder (hatf_text_of returns
 * NULL): decoding into a small batch alone gained nothing
 * (bench/text_bench, docs/performance.md). */
#include "hatf_text.h"

#include <string.h>

#include "../common/tm_cpu.h"
#include "hatf_impl.h"

#ifdef TM_CPU_X86
#include "../../arch/x86/hatf_text_impl.h"
#endif

tm_rtext_fn *hatf_text_of(void)
{
#ifdef TM_CPU_X86
        /* its lines are made by the vector renderer's nums path */
        if (hatf_text_arch_ok(tm_cpu_features()) && strcmp(tm_text_lines_impl(), "avx512") == 0)
                return hatf_text;
#endif
        return NULL;
}
