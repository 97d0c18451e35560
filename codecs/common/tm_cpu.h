/* tm_cpu: the CPU features the vector code uses, resolved once, and the
 * one switch that turns all vector code off.
 *
 * Vector code lives in one folder per architecture (arch/x86/: AVX-512),
 * one <module>_impl.h each, included by the module's portable .c, as in
 * libdeflate's lib/x86/. Each module chooses its implementation at its
 * first call, by asking tm_cpu_features() whether the CPU has what its
 * vector path needs, and keeps the choice; its test hook (e.g.
 * tm_render_force_scalar(0)) makes the choice again.
 *
 * The switch: TM_NO_SIMD=1 in the environment when a module chooses makes
 * tm_cpu_features() return 0, so every module takes its portable path.
 * TM_RENDER_SCALAR=1, the din renderer's own switch before there was one,
 * means the same (tests/unit_render.c sets it). */
#ifndef TM_CPU_H
#define TM_CPU_H

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

#endif
