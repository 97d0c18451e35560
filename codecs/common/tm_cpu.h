/* tm_cpu: the CPU features the vector code uses, resolved once, the one
 * switch that turns all vector code off, and the one dispatch that every
 * module with a vector path goes through.
 *
 * Vector code lives in one folder per architecture (arch/x86/: AVX-512, and AVX2 where a CPU lacks
 * it), one <module>_impl.h each, included by the module's portable .c, as in libdeflate's lib/x86/.
 * A module gathers its functions in a const table (struct <module>_impl), one for the portable code
 * and one for each vector path, and keeps a struct tm_cpu_slot; tm_cpu_pick() hands out the table
 * chosen for this CPU at the first call (libdeflate's arch_select) and the same table from then on.
 * tm_cpu_choose() makes the choice again: the module's test hook (e.g. tm_render_force_scalar).
 *
 * The switch: TM_NO_SIMD=1 in the environment when a module chooses makes
 * tm_cpu_features() return 0, so every module takes its portable path.
 * TM_RENDER_SCALAR=1 means the same (tests/unit_render.c sets it).
 * TM_NO_AVX512=1 hides the AVX-512 bits only, so that a test on a CPU
 * with AVX-512 runs the AVX2 tier too. */
#ifndef TM_CPU_H
#define TM_CPU_H

#include <stdatomic.h>
#include <stddef.h>

/* The builds that compile arch/x86/ (GCC or clang on x86-64: the vector
 * functions use target attributes, the rest stays baseline x86-64). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TM_CPU_X86 1
#endif

/* Feature bits. */
#define TM_CPU_POPCNT (1u << 0)
#define TM_CPU_BMI2 (1u << 1)
#define TM_CPU_AVX512F (1u << 2)
#define TM_CPU_AVX512BW (1u << 3)
#define TM_CPU_AVX512VL (1u << 4)
#define TM_CPU_AVX512DQ (1u << 5)
#define TM_CPU_AVX512CD (1u << 6)
#define TM_CPU_AVX512IFMA (1u << 7)
#define TM_CPU_AVX512VBMI (1u << 8)
#define TM_CPU_AVX512VBMI2 (1u << 9)
#define TM_CPU_AVX2 (1u << 10)
#define TM_CPU_BMI1 (1u << 11) /* tzcnt, andn */
#define TM_CPU_LZCNT (1u << 12)

/* What every AVX2 path here may use: AVX2 with BMI1/2, lzcnt and popcnt,
 * as every x86-64 CPU with AVX2 since 2013 has (x86-64-v3). The second
 * tier of arch/x86/, for CPUs without AVX-512 (AMD before Zen 4, Intel's
 * client cores). */
#define TM_CPU_AVX2_SET (TM_CPU_AVX2 | TM_CPU_BMI1 | TM_CPU_BMI2 | TM_CPU_LZCNT | TM_CPU_POPCNT)
/* The same as a target attribute: keep the two lists equal. */
#define TM_AVX2_TARGET "avx2,bmi,bmi2,lzcnt,popcnt"

/* What every AVX-512 path here needs at least: byte-granular masks and
 * byte permutes. */
#define TM_CPU_AVX512_BYTES                                                                        \
        (TM_CPU_AVX512F | TM_CPU_AVX512BW | TM_CPU_AVX512VL | TM_CPU_AVX512VBMI | TM_CPU_POPCNT)

/* The TM_CPU_* bits of this CPU (0 on other architectures), detected at
 * the first call, or 0 when the switch above is on. Thread-safe. */
unsigned tm_cpu_features(void);

/* 1 when the CPU has every feature of want and the switch is off. */
static inline int tm_cpu_has(unsigned want)
{
        return (tm_cpu_features() & want) == want;
}

/* arch_choose in a build that compiles arch/x86/, else NULL (arch_choose
 * is then never named, so it need not exist). */
#ifdef TM_CPU_X86
#define TM_CPU_ARCH(arch_choose) (arch_choose)
#else
#define TM_CPU_ARCH(arch_choose) NULL
#endif

/* A module's choice of implementation. Set arch and portable in a static
 * initializer; impl starts NULL. arch (or NULL: no vector path in this
 * build) returns the module's table for a vector path that a CPU with the
 * TM_CPU_* bits features runs, having made any tables that path reads,
 * else NULL; portable is the module's portable table. */
struct tm_cpu_slot {
        _Atomic(const void *) impl;
        const void *(*arch)(unsigned features);
        const void *portable;
};

/* Choose s's table and keep it: portable when portable_only is
 * nonzero, else arch's for this CPU (reading TM_NO_SIMD again), falling
 * back to portable. Returns the table. Thread-safe: threads racing on the
 * first choice all store the same table. */
const void *tm_cpu_choose(struct tm_cpu_slot *s, int portable_only);

/* s's table, chosen at the first call. Release/acquire: a thread that
 * sees the choice sees the tables arch made for it. */
static inline const void *tm_cpu_pick(struct tm_cpu_slot *s)
{
        const void *p = atomic_load_explicit(&s->impl, memory_order_acquire);
        return p ? p : tm_cpu_choose(s, 0);
}

#endif
