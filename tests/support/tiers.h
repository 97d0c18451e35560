/* tiers.h: the one check of a module's vector tiers (codecs/common/tm_cpu.h)
 * for the cmocka tests of modules with a vector path: include after
 * cmocka.h. */
#ifndef TM_TEST_TIERS_H
#define TM_TEST_TIERS_H

#include <stdlib.h>
#include <string.h>

#include "codecs/common/tm_cpu.h"

/* With force(1) impl() says "scalar"; with force(0) one of "scalar",
 * "avx512", "avx2"; with TM_NO_AVX512=1 (the AVX-512 bits hidden) "avx2"
 * on a CPU with the AVX2 set, else "scalar". Leaves the module choosing
 * afresh without TM_NO_AVX512, and returns that choice's name. */
static inline const char *tm_test_tiers(void (*force)(int), const char *(*impl)(void),
                                        const char *what)
{
        force(1);
        assert_string_equal(impl(), "scalar");
        force(0);
        const char *best = impl();
        assert_true(strcmp(best, "scalar") == 0 || strcmp(best, "avx512") == 0 ||
                    strcmp(best, "avx2") == 0);
        setenv("TM_NO_AVX512", "1", 1);
        force(0);
        const char *v2 = impl();
        assert_string_equal(v2, tm_cpu_has(TM_CPU_AVX2_SET) ? "avx2" : "scalar");
        unsetenv("TM_NO_AVX512");
        force(0);
        assert_string_equal(impl(), best);
        print_message("%s: %s; with TM_NO_AVX512=1: %s\n", what, best, v2);
        return best;
}

#endif
