/* The JSON writer (tm_json.h). */
#include "tm_json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

void tm_json_put(struct tm_json *o, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        size_t room = o->len < o->cap ? o->cap - o->len : 0;
        int k = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
        va_end(ap);
        if (k > 0)
                o->len += (size_t)k;
}

#define put tm_json_put

/* Length of the UTF-8 sequence at s (1-4), or 0 if it is not one. */
static unsigned utf8_len(const unsigned char *s)
{
        unsigned n = s[0] < 0xc2 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : s[0] < 0xf5 ? 4 : 0;
        for (unsigned i = 1; i < n; i++)
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
        if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
            (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
                return 0; /* overlong, surrogate, or past U+10FFFF */
        return n;
}

static void jstring(struct tm_json *o, const char *str)
{
        const unsigned char *s = (const unsigned char *)str;
        put(o, "\"");
        while (*s) {
                unsigned n;
                if (*s == '"' || *s == '\\')
                        put(o, "\\%c", *s);
                else if (*s < 0x20 || *s == 0x7f)
                        put(o, "\\u%04x", *s);
                else if (*s < 0x80)
                        put(o, "%c", *s);
                else if ((n = utf8_len(s)) != 0) {
                        put(o, "%.*s", (int)n, (const char *)s);
                        s += n;
                        continue;
                } else
                        put(o, "\\ufffd");
                s++;
        }
        put(o, "\"");
}

static void jkey(struct tm_json *o, const char *key)
{
        if (o->comma)
                put(o, ",");
        o->comma = 1;
        if (key) {
                jstring(o, key);
                put(o, ":");
        }
}

void tm_json_open(struct tm_json *o, const char *key, char bracket)
{
        jkey(o, key);
        put(o, "%c", bracket);
        o->comma = 0;
}

void tm_json_close(struct tm_json *o, char bracket)
{
        put(o, "%c", bracket);
        o->comma = 1;
}

void tm_json_u64(struct tm_json *o, const char *key, uint64_t v)
{
        jkey(o, key);
        put(o, "%" PRIu64, v);
}

void tm_json_i64(struct tm_json *o, const char *key, int64_t v)
{
        jkey(o, key);
        put(o, "%" PRId64, v);
}

void tm_json_real(struct tm_json *o, const char *key, double v)
{
        jkey(o, key);
        put(o, "%.6f", v == v && v < 1e300 && v > -1e300 ? v : 0.0);
}

void tm_json_str(struct tm_json *o, const char *key, const char *s)
{
        jkey(o, key);
        if (s)
                jstring(o, s);
        else
                put(o, "null");
}

void tm_json_bool(struct tm_json *o, const char *key, int v)
{
        jkey(o, key);
        put(o, v ? "true" : "false");
}

