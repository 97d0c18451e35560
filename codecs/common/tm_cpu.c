#include "tm_cpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef TM_CPU_X86
#include <cpuid.h>
#endif

/* Set in the cached value once the CPU has been asked. */
#define TM_CPU_KNOWN (1u << 31)

static _Atomic unsigned tm_cpu_cached;

static int env_on(const char *name)
{
        const char *e = getenv(name);
        return e && strcmp(e, "1") == 0;
}

static unsigned detect(void)
{
        unsigned f = 0;
#ifdef TM_CPU_X86
        /* __builtin_cpu_supports also checks that the OS saves the vector
         * registers (XCR0). */
        __builtin_cpu_init();
        /* __builtin_cpu_supports takes a string literal, hence a macro */
#define TM_CPU_ASK(lit, bit)                                                                       \
        if (__builtin_cpu_supports(lit))                                                           \
                f |= bit;
        TM_CPU_ASK("popcnt", TM_CPU_POPCNT)
        TM_CPU_ASK("bmi2", TM_CPU_BMI2)
        TM_CPU_ASK("avx512f", TM_CPU_AVX512F)
        TM_CPU_ASK("avx512bw", TM_CPU_AVX512BW)
        TM_CPU_ASK("avx512vl", TM_CPU_AVX512VL)
        TM_CPU_ASK("avx512dq", TM_CPU_AVX512DQ)
        TM_CPU_ASK("avx512cd", TM_CPU_AVX512CD)
        TM_CPU_ASK("avx512ifma", TM_CPU_AVX512IFMA)
        TM_CPU_ASK("avx512vbmi", TM_CPU_AVX512VBMI)
        TM_CPU_ASK("avx512vbmi2", TM_CPU_AVX512VBMI2)
        TM_CPU_ASK("avx2", TM_CPU_AVX2)
        TM_CPU_ASK("bmi", TM_CPU_BMI1)
        /* clang's __builtin_cpu_supports knows no "lzcnt": CPUID
         * 0x80000001, ECX bit 5 (LZCNT, AMD's ABM) */
        unsigned ea, eb, ec, ed;
        if (__get_cpuid(0x80000001u, &ea, &eb, &ec, &ed) && (ec & 1u << 5))
                f |= TM_CPU_LZCNT;
#undef TM_CPU_ASK
#endif
        return f;
}

unsigned tm_cpu_features(void)
{
        if (env_on("TM_NO_SIMD") || env_on("TM_RENDER_SCALAR"))
                return 0;
        unsigned f = atomic_load_explicit(&tm_cpu_cached, memory_order_relaxed);
        if (!(f & TM_CPU_KNOWN)) {
                f = detect() | TM_CPU_KNOWN;
                atomic_store_explicit(&tm_cpu_cached, f, memory_order_relaxed);
        }
        f &= ~TM_CPU_KNOWN;
        if (env_on("TM_NO_AVX512")) /* the AVX2 tier on any CPU that has it */
                f &= ~(TM_CPU_AVX512F | TM_CPU_AVX512BW | TM_CPU_AVX512VL | TM_CPU_AVX512DQ |
                       TM_CPU_AVX512CD | TM_CPU_AVX512IFMA | TM_CPU_AVX512VBMI |
                       TM_CPU_AVX512VBMI2);
        return f;
}

const void *tm_cpu_choose(struct tm_cpu_slot *s, int portable_only)
{
        const void *p = !portable_only && s->arch ? s->arch(tm_cpu_features()) : NULL;
        if (!p)
                p = s->portable;
        atomic_store_explicit(&s->impl, p, memory_order_release);
        return p;
}
