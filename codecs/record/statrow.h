/* Statistics rows: what a family's statistics say, as data.
 *
 * A row is one figure: a key (a path of names, as "threads" "1919"
 * "records"), a value (a number, a real, a string, a truth, or not
 * known), a unit ("records", "bytes"; NULL for a name or a ratio) and
 * whether the figure is exact (0: a bound, an estimate, or not known).
 * A family hands its rows, in order, to a sink (family.h, rows); views/
 * renders them (views/stats_json.h: stats.json, docs/stats-json.md) by
 * one rule for every family, so a family never writes JSON.
 *
 * Rows that share the leading names of their keys (a group) come one
 * after another: the renderer opens a group once. A key's names are
 * copied by the sink, so they may live in the caller's buffers (an id
 * formatted on the stack). */
#ifndef TM_STATROW_H
#define TM_STATROW_H

#include <stdint.h>

#define TM_ROW_DEPTH 5 /* names in a key, at most */

enum tm_row_type { TM_ROW_U64, TM_ROW_I64, TM_ROW_REAL, TM_ROW_STR, TM_ROW_BOOL, TM_ROW_UNKNOWN };

struct tm_row {
        const char *const *key; /* TM_ROW_DEPTH names at most, NULL after the last */
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
};

/* Where rows go: put() is called once a row, in order. */
struct tm_rows {
        void (*put)(struct tm_rows *k, const struct tm_row *r);
};

/* A key from its names: TM_KEY("threads", id, "records"). */
#define TM_KEY(...) ((const char *const[TM_ROW_DEPTH + 1]){__VA_ARGS__, NULL})

static inline void tm_row_u64(struct tm_rows *k, const char *const *key, uint64_t v,
                              const char *unit, int exact)
{
        struct tm_row r = {key, TM_ROW_U64, {.u = v}, unit, exact};
        k->put(k, &r);
}

static inline void tm_row_i64(struct tm_rows *k, const char *const *key, int64_t v,
                              const char *unit, int exact)
{
        struct tm_row r = {key, TM_ROW_I64, {.i = v}, unit, exact};
        k->put(k, &r);
}

static inline void tm_row_real(struct tm_rows *k, const char *const *key, double v,
                               const char *unit, int exact)
{
        struct tm_row r = {key, TM_ROW_REAL, {.r = v}, unit, exact};
        k->put(k, &r);
}

/* s NULL: a string that is not known (written as null, not exact). */
static inline void tm_row_str(struct tm_rows *k, const char *const *key, const char *s)
{
        struct tm_row r = {key, s ? TM_ROW_STR : TM_ROW_UNKNOWN, {.s = s}, NULL, s != NULL};
        k->put(k, &r);
}

static inline void tm_row_bool(struct tm_rows *k, const char *const *key, int v)
{
        struct tm_row r = {key, TM_ROW_BOOL, {.b = v != 0}, NULL, 1};
        k->put(k, &r);
}

/* A figure that is not known (its value null, not exact). */
static inline void tm_row_unknown(struct tm_rows *k, const char *const *key, const char *unit)
{
        struct tm_row r = {key, TM_ROW_UNKNOWN, {.u = 0}, unit, 0};
        k->put(k, &r);
}

/* A number when known is set, else unknown. */
static inline void tm_row_u64_known(struct tm_rows *k, const char *const *key, uint64_t v,
                                    const char *unit, int known)
{
        if (known)
                tm_row_u64(k, key, v, unit, 1);
        else
                tm_row_unknown(k, key, unit);
}

#endif
