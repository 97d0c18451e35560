/* tm_cpu: whether this CPU runs the AVX-512 code paths, and the
 * environment switches that turn them off (TM_DECODE_SCALAR,
 * TM_RENDER_SCALAR). Shared by the PDATS II block decoder and the din
 * renderer, each of which chooses once, at its first call. */
#ifndef TM_CPU_H
#define TM_CPU_H

/* 1 when the environment variable name is set to "1". */
int tm_cpu_env_off(const char *name);

/* 1 when this is an x86-64 build (GCC or clang) on a CPU with AVX-512 F,
 * BW, VL and VBMI and POPCNT, else 0. Callers that need more check it
 * after this (which has run __builtin_cpu_init). */
int tm_cpu_avx512_vbmi(void);

#endif
