#include "tm_cpu.h"

#include <stdlib.h>
#include <string.h>

int tm_cpu_env_off(const char *name)
{
        const char *e = getenv(name);
        return e && strcmp(e, "1") == 0;
}

int tm_cpu_avx512_vbmi(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi") &&
               __builtin_cpu_supports("popcnt");
#else
        return 0;
#endif
}
