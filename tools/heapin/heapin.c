/* heapin: format detection (the line reader: heapin_lines.c). */
#include "heapin_int.h"

#include <string.h>

const char *heapin_detect(const uint8_t *head, size_t n)
{
        const char *s = (const char *)head;
        const char *nl = memchr(s, '\n', n);
        /* a head cut inside its first line is judged on what it has */
        size_t len = nl ? (size_t)(nl - s) : n;
        if (heapin_heaptrack_version(s, len, NULL, NULL) == 0)
                return "heaptrack";
        return NULL;
}
