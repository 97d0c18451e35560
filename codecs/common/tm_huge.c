#include "tm_huge.h"

#include <stdlib.h>
#include <sys/mman.h>

size_t tm_huge_round(size_t n)
{
        if (n < TM_HUGE_PAGE / 2)
                return n;
        return (n + TM_HUGE_PAGE - 1) / TM_HUGE_PAGE * TM_HUGE_PAGE;
}

void *tm_huge_alloc(size_t n)
{
        if (n < TM_HUGE_PAGE / 2)
                return malloc(n ? n : 1);
        void *p = NULL;
        if (posix_memalign(&p, TM_HUGE_PAGE, n) != 0)
                return NULL;
#ifdef MADV_HUGEPAGE
        (void)madvise(p, n, MADV_HUGEPAGE);
#endif
        return p;
}
