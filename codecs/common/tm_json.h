/* tm_json: a small JSON writer into a caller's buffer, shared by the
 * stats.json views (views/stats.c) and the families' statistics
 * (codecs/record/family.h). Members are written in order; commas and
 * escapes are its business. Strings are escaped (", \, control bytes)
 * and bytes that are not UTF-8 become U+FFFD, so the output is valid
 * JSON whatever the names hold; numbers are finite.
 *
 * The buffer is never overrun: past cap, len keeps counting what would
 * have been written (snprintf-style), so a caller learns the size it
 * needs. */
#ifndef TM_JSON_H
#define TM_JSON_H

#include <stddef.h>
#include <stdint.h>

struct tm_json {
        char *buf;
        size_t cap, len;
        int comma; /* a member precedes: the next one needs a comma */
};

/* key: the member's name inside an object, NULL inside an array. */
void tm_json_open(struct tm_json *o, const char *key, char bracket);
void tm_json_close(struct tm_json *o, char bracket);
void tm_json_u64(struct tm_json *o, const char *key, uint64_t v);
void tm_json_i64(struct tm_json *o, const char *key, int64_t v);
void tm_json_real(struct tm_json *o, const char *key, double v);
void tm_json_str(struct tm_json *o, const char *key, const char *s); /* NULL: null */
void tm_json_bool(struct tm_json *o, const char *key, int v);

/* Append text as it is (printf-style), no escaping: for a text report
 * written through the same buffer, and a JSON document's last newline. */
void tm_json_put(struct tm_json *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
