/* Laplace raw reference records: what the bound row needs beyond its DTD
 * (laplace.h). */
#include "laplace.h"

static int is_letter(uint8_t c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int tm_laplace_raw_check(const uint8_t *head, size_t n)
{
        if (n < TM_LAPLACE_REC)
                return 0;
        for (size_t at = 0; at + TM_LAPLACE_REC <= n; at += TM_LAPLACE_REC) {
                uint8_t size = head[at + TM_LAPLACE_OFF_SIZE];
                if (!is_letter(head[at + TM_LAPLACE_OFF_TYPE]) || size == 0 ||
                    size > TM_LAPLACE_SIZE_MAX)
                        return 0;
        }
        return 1;
}
