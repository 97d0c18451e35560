/* fz_side: a view's text without the side files it names (side files
 * passed over, e.g. an index file refused: docs/side-files.md), so that a
 * trace that met one compares with one that met none. Used by fuzz_index
 * and, through tests/view_test.h, by the unit tests. Header-only, plain C. */
#ifndef TM_FZ_SIDE_H
#define TM_FZ_SIDE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Drop the stats view's "side file" lines from the text p of *len bytes. */
static inline void fz_drop_side_lines(uint8_t *p, size_t *len)
{
        size_t out = 0;
        for (size_t at = 0; at < *len;) {
                const uint8_t *nl = memchr(p + at, '\n', *len - at);
                size_t ll = nl ? (size_t)(nl - (p + at)) + 1 : *len - at;
                if (ll < 11 || memcmp(p + at, "side file  ", 11) != 0) {
                        memmove(p + out, p + at, ll);
                        out += ll;
                }
                at += ll;
        }
        *len = out;
}

/* The same for stats.json: the strings of its side_files array dropped
 * ("side_files":[] left), the array found by its key and its end by
 * JSON's rules (strings, escapes). */
static inline void fz_drop_side_json(uint8_t *p, size_t *len)
{
        static const char key[] = "\"side_files\":[";
        uint8_t *k = memmem(p, *len, key, sizeof key - 1);
        if (!k)
                return;
        size_t from = (size_t)(k - p) + sizeof key - 1, at = from;
        for (int in = 0; at < *len && (in || p[at] != ']'); at++) {
                if (in && p[at] == '\\')
                        at++;
                else if (p[at] == '"')
                        in = !in;
        }
        at = at < *len ? at : *len;
        memmove(p + from, p + at, *len - at);
        *len -= at - from;
}

#endif
