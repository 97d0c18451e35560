/* Statistics rows: what a family's statistics say, as data.
 *
 * A row is one figure: a key (a path of names, as "threads" "1919"
 * "records"), a value (a number, a real, an address, a string, a truth,
 * or not known), a unit ("records", "bytes"; NULL for a name or a ratio),
 * whether the figure is exact (0: a bound, an estimate, or not known), and
 * its place in the stats text: a template of its line, or of its part of
 * a line. A family hands its rows, in order, to a sink (family.h, rows);
 * views/ renders them by one rule for every family as the stats text
 * (views/stats_text.c) and as stats.json (views/stats_json.c,
 * docs/stats-json.md), so a family never prints.
 *
 * The text template: bytes as they are, and in braces where a value goes:
 * {[what][-][width][.precision][x|c]}. what: nothing for the row's value,
 * n for the key's last name, N for the name before it; - aligns left in
 * width; x writes a number or address in hex without 0x, c a number as
 * its character; a real is written %.6f unless a precision is given. A
 * value not known is written "not known". A row with no text is only in
 * stats.json; a row with no key (NULL) only in the text.
 *
 * Rows that share the leading names of their keys (a group) come one
 * after another: the JSON renderer opens a group once. A key's names and
 * a string value are copied by the sink, so they may live in the caller's
 * buffers (an id formatted on the stack). */
#ifndef TM_STATROW_H
#define TM_STATROW_H

#include <stdint.h>

#define TM_ROW_DEPTH 5 /* names in a key, at most */

enum tm_row_type {
        TM_ROW_U64,
        TM_ROW_I64,
        TM_ROW_REAL,
        TM_ROW_ADDR, /* an address (v.u): stats.json writes it as a string "0x..." */
        TM_ROW_STR,
        TM_ROW_BOOL,
        TM_ROW_UNKNOWN
};

struct tm_row {
        const char *const *key; /* TM_ROW_DEPTH names at most, NULL after the last;
                                 * NULL: a line of the text only */
        enum tm_row_type type;
        union {
                uint64_t u;
                int64_t i;
                double r; /* finite */
                const char *s;
                int b;
        } v;
        const char *unit; /* NULL: none */
        int exact;        /* 1: the figure is exact */
        const char *text; /* the template in the stats text; NULL: none */
};

/* Where rows go: put() is called once a row, in order. */
struct tm_rows {
        void (*put)(struct tm_rows *k, const struct tm_row *r);
};

/* A key from its names: TM_KEY("threads", id, "records"). */
#define TM_KEY(...) ((const char *const[TM_ROW_DEPTH + 1]){__VA_ARGS__, NULL})

static inline void tm_row_u64(struct tm_rows *k, const char *const *key, uint64_t v,
                              const char *unit, int exact, const char *text)
{
        struct tm_row r = {key, TM_ROW_U64, {.u = v}, unit, exact, text};
        k->put(k, &r);
}

static inline void tm_row_i64(struct tm_rows *k, const char *const *key, int64_t v,
                              const char *unit, int exact, const char *text)
{
        struct tm_row r = {key, TM_ROW_I64, {.i = v}, unit, exact, text};
        k->put(k, &r);
}

static inline void tm_row_real(struct tm_rows *k, const char *const *key, double v,
                               const char *unit, int exact, const char *text)
{
        struct tm_row r = {key, TM_ROW_REAL, {.r = v}, unit, exact, text};
        k->put(k, &r);
}

/* An address; known 0: not known. */
static inline void tm_row_addr(struct tm_rows *k, const char *const *key, uint64_t v, int known,
                               const char *text)
{
        struct tm_row r = {key, known ? TM_ROW_ADDR : TM_ROW_UNKNOWN, {.u = v}, NULL, known, text};
        k->put(k, &r);
}

/* s NULL: a string that is not known. */
static inline void tm_row_str(struct tm_rows *k, const char *const *key, const char *s,
                              const char *text)
{
        struct tm_row r = {key, s ? TM_ROW_STR : TM_ROW_UNKNOWN, {.s = s}, NULL, s != NULL, text};
        k->put(k, &r);
}

static inline void tm_row_bool(struct tm_rows *k, const char *const *key, int v, const char *text)
{
        struct tm_row r = {key, TM_ROW_BOOL, {.b = v != 0}, NULL, 1, text};
        k->put(k, &r);
}

/* A figure that is not known (its value null, not exact). */
static inline void tm_row_unknown(struct tm_rows *k, const char *const *key, const char *unit,
                                  const char *text)
{
        struct tm_row r = {key, TM_ROW_UNKNOWN, {.u = 0}, unit, 0, text};
        k->put(k, &r);
}

/* A number when known is set, else unknown. */
static inline void tm_row_u64_known(struct tm_rows *k, const char *const *key, uint64_t v,
                                    const char *unit, int known, const char *text)
{
        if (known)
                tm_row_u64(k, key, v, unit, 1, text);
        else
                tm_row_unknown(k, key, unit, text);
}

/* A line of the text only, with no value (a heading, a remark). */
static inline void tm_row_text(struct tm_rows *k, const char *text)
{
        struct tm_row r = {NULL, TM_ROW_UNKNOWN, {.u = 0}, NULL, 0, text};
        k->put(k, &r);
}

#endif
