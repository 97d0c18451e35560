/* The registry: the record codec rows this build reads, as libarchive's
 * read-format registry has them (archive_read_support_format_*): a list
 * of rows, each a module's const struct tm_rcodec (record.h), and
 * detection by bids, never by name or by a hand-tuned order.
 *
 * Detection: the container first (containers/container.h), then, on the
 * first raw bytes (at most TM_RHEAD_MIN), every row's probe; the highest
 * bid wins, and of equal bids the row registered first. The scale of
 * bids is enum tm_bid in record.h, next to the probe it rates: a magic
 * of C (100) over text whose lines parse (40..75) over a bound row's
 * magic (30) over the size rule with a check of C (20) over the size
 * rule alone (10). Ties: rows of one bid either never take the same head
 * (distinct magics) or are the bound rows, tried in the order they are
 * registered: the shipped rows (tm_bound_rows, codecs/metatf/bound.h),
 * then the files of TM_BOUND_FORMATS from left to right.
 *
 * Rows of C come from the list in registry.c and from the modules that
 * add their own with TM_RCODEC_ROW (codecs/record/family_row.h: a linker
 * section, for a module only some programs link, as the tests' fixture
 * family); these are added after the shipped bound rows, in link order.
 *
 * A registry is a value: tm_registry_init fills one with the rows of C
 * and the shipped bound rows; rows can be added to it until it is used.
 * The process's registry (tm_registry()) is built once, on first use
 * under pthread_once, from those rows and the description files that the
 * environment variable TM_BOUND_FORMATS names (colon-separated); a file
 * that cannot be read or made a row is reported on stderr
 * ("tracemount: TM_BOUND_FORMATS: <file>: ...") and left out. Nothing
 * changes it afterwards, so any thread may read it. A program that
 * leaves its start directory or closes stderr (the daemon: fs/main.c)
 * calls tm_registry() before, for relative names and the reports.
 *
 * Families (codecs/record/family.h): a row points at the family of the
 * schemas it yields (tm_rcodec.family); the rows whose schema comes from a
 * DTD (Meta-TF, the bound rows) have none, and the families' claims()
 * decide (tm_family_of). */
#ifndef TM_REGISTRY_H
#define TM_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "common/tm_err.h"
#include "metatf/bound.h"
#include "record/record.h"

/* Rows of one registry: the rows of C, the shipped bound rows and those
 * described (at most TM_BOUND_MAX bound rows in a process). */
#define TM_REGISTRY_MAX 48

struct tm_registry {
        unsigned n;
        const struct tm_rcodec *row[TM_REGISTRY_MAX + 1]; /* in registration order, NULL after */
};

/* r: the rows of C (the list and the modules' own) and the shipped bound
 * rows (a row that cannot be added is reported on stderr and left out). Each call makes the
 * shipped bound rows' codecs again, a slot each of TM_BOUND_MAX. */
void tm_registry_init(struct tm_registry *r);

/* Add row c to r, after its rows. 0, or -EEXIST (a row of that name is
 * in r) or -ENOSPC, with err naming the row. */
int tm_registry_add(struct tm_registry *r, const struct tm_rcodec *c, struct tm_err *err);

/* Make bound row b a codec (tm_bound_codec) and add it to r; its errors,
 * or -EEXIST before any slot is taken. */
int tm_registry_add_bound(struct tm_registry *r, const struct tm_bound *b, struct tm_err *err);

/* The row that the description file at path describes, added to r; err
 * names the file. */
int tm_registry_add_file(struct tm_registry *r, const char *path, struct tm_err *err);

/* Each file of list (colon-separated; empty names skipped), as
 * tm_registry_add_file; every error is passed to report(arg, err) (when
 * report is not NULL) and adding goes on. Returns the number of files
 * that failed. */
unsigned tm_registry_add_list(struct tm_registry *r, const char *list,
                              void (*report)(void *arg, const struct tm_err *e), void *arg);

/* The row of r that bids highest for head (the first n raw bytes, n <=
 * TM_RHEAD_MIN, fewer only when the stream is that short), the first
 * registered of equal bids; NULL when no row takes it. *bid (when not
 * NULL) receives the winning bid, 0 for none. */
const struct tm_rcodec *tm_registry_probe(const struct tm_registry *r, const uint8_t *head,
                                          size_t n, int *bid);

/* The row of r named name, or NULL. */
const struct tm_rcodec *tm_registry_by_name(const struct tm_registry *r, const char *name);

/* The process's registry, built on first use (thread-safe): its rows are
 * r->row[0..r->n), NULL-terminated. tm_rcodec_probe and
 * tm_rcodec_by_name (record.h) look in it. */
const struct tm_registry *tm_registry(void);

#endif
