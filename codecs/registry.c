/* The registry (registry.h): the record codec rows and the families this
 * build has (the containers': containers/cont_table.c). Adding a format
 * is its module, its row below (its bid: record.h), its docs page
 * (docs/formats/) and its tests;
 * the views, the daemon and tracetool find it through these tables
 * alone. */
#include "registry.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address/arec.h"
#include "heap/hatf.h"
#include "heap/mtrace.h"
#include "java/jtrace.h"
#include "laplace/laplace.h"
#include "metatf/metatf.h"
#include "native/native.h"
#include "object/ptf.h"
#include "record/family_row.h"

/* The rows of C. Their order decides nothing but ties, and rows of C
 * never tie (record.h, enum tm_bid). */
static const struct tm_rcodec *const rows_c[] = {
    &tm_rcodec_pdats2,      &tm_rcodec_pdats,       &tm_rcodec_lackey, &tm_rcodec_din,
    &tm_rcodec_hatf,        &tm_rcodec_native,      &tm_rcodec_metatf, &tm_rcodec_mtrace,
    &tm_rcodec_java,        &tm_rcodec_ptf_bin,     &tm_rcodec_ptf,    &tm_rcodec_laplace_text,
    &tm_rcodec_laplace_kev, &tm_rcodec_laplace_raw,
};

/* Bound formats shipped with tracemount: a row each, the DTD in
 * codecs/metatf/dtd/ (docs/formats/bound.md). The rows
 * described at run time (TM_BOUND_FORMATS) are of the same struct. */
const struct tm_bound tm_bound_rows[] = {
    {.name = ""},
};

int tm_registry_add(struct tm_registry *r, const struct tm_rcodec *c, struct tm_err *err)
{
        if (tm_registry_by_name(r, c->name))
                return tm_err_set(err, -EEXIST, "format %s: a codec of that name exists", c->name);
        if (r->n >= TM_REGISTRY_MAX)
                return tm_err_set(err, -ENOSPC, "format %s: the registry is full", c->name);
        r->row[r->n++] = c;
        r->row[r->n] = NULL;
        return 0;
}

int tm_registry_add_bound(struct tm_registry *r, const struct tm_bound *b, struct tm_err *err)
{
        if (tm_registry_by_name(r, b->name))
                return tm_err_set(err, -EEXIST, "format %.*s: a codec of that name exists",
                                  TM_NAME_MAX - 1, b->name);
        if (r->n >= TM_REGISTRY_MAX) /* before a slot is taken */
                return tm_err_set(err, -ENOSPC, "format %.*s: the registry is full",
                                  TM_NAME_MAX - 1, b->name);
        const struct tm_rcodec *c;
        int ret = tm_bound_codec(b, &c, err);
        return ret < 0 ? ret : tm_registry_add(r, c, err);
}

int tm_registry_add_file(struct tm_registry *r, const char *path, struct tm_err *err)
{
        struct tm_bound b;
        int ret = tm_bound_read_file(path, &b, err);
        if (ret < 0)
                return ret;
        if ((ret = tm_registry_add_bound(r, &b, err)) < 0)
                return tm_err_prefix(err, "%s", path);
        return 0;
}

unsigned tm_registry_add_list(struct tm_registry *r, const char *list,
                              void (*report)(void *arg, const struct tm_err *e), void *arg)
{
        unsigned failed = 0;
        char path[4096];
        for (const char *p = list; p && *p;) {
                const char *end = strchr(p, ':');
                size_t n = end ? (size_t)(end - p) : strlen(p);
                struct tm_err e = {0};
                int ret = 0;
                if (n >= sizeof path)
                        ret = tm_err_set(&e, -ENAMETOOLONG, "%.64s...: name too long", p);
                else if (n) {
                        memcpy(path, p, n);
                        path[n] = 0;
                        ret = tm_registry_add_file(r, path, &e);
                }
                if (ret < 0) {
                        failed++;
                        if (report)
                                report(arg, &e);
                }
                p = end ? end + 1 : NULL;
        }
        return failed;
}

void tm_registry_init(struct tm_registry *r)
{
        r->n = 0;
        r->row[0] = NULL;
        for (size_t i = 0; i < sizeof rows_c / sizeof rows_c[0]; i++) {
                struct tm_err e = {0};
                if (tm_registry_add(r, rows_c[i], &e) < 0)
                        fprintf(stderr, "tracemount: %s\n", e.msg);
        }
        for (const struct tm_bound *b = tm_bound_rows; b->name[0]; b++) {
                struct tm_err e = {0};
                if (tm_registry_add_bound(r, b, &e) < 0)
                        fprintf(stderr, "tracemount: shipped format %s: %s\n", b->name, e.msg);
        }
        const struct tm_rcodec *const *end, *const *c = tm_rcodec_rows(&end);
        for (; c < end; c++) { /* the modules' own rows (record/family_row.h) */
                struct tm_err e = {0};
                if (tm_registry_add(r, *c, &e) < 0)
                        fprintf(stderr, "tracemount: %s\n", e.msg);
        }
}

const struct tm_rcodec *tm_registry_probe(const struct tm_registry *r, const uint8_t *head,
                                          size_t n, int *bid)
{
        const struct tm_rcodec *best = NULL;
        int top = 0;
        for (unsigned i = 0; i < r->n; i++) {
                int b = r->row[i]->probe(head, n);
                if (b > top) { /* strictly: of equal bids the first stays */
                        top = b;
                        best = r->row[i];
                }
        }
        if (bid)
                *bid = top;
        return best;
}

const struct tm_rcodec *tm_registry_by_name(const struct tm_registry *r, const char *name)
{
        for (unsigned i = 0; i < r->n; i++)
                if (strcmp(r->row[i]->name, name) == 0)
                        return r->row[i];
        return NULL;
}

static struct tm_registry process;
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

static void report(void *arg, const struct tm_err *e)
{
        (void)arg;
        fprintf(stderr, "tracemount: TM_BOUND_FORMATS: %s (format not added)\n", e->msg);
}

static void process_build(void)
{
        tm_registry_init(&process);
        tm_registry_add_list(&process, getenv("TM_BOUND_FORMATS"), report, NULL);
}

const struct tm_registry *tm_registry(void)
{
        pthread_once(&process_once, process_build);
        return &process;
}

const struct tm_rcodec *tm_rcodec_probe(const uint8_t *head, size_t n)
{
        return tm_registry_probe(tm_registry(), head, n, NULL);
}

const struct tm_rcodec *tm_rcodec_by_name(const char *name)
{
        return tm_registry_by_name(tm_registry(), name);
}

size_t tm_rcodec_head_want(const struct tm_rcodec *c, const uint8_t *head, size_t n)
{
        size_t max = c->head_max > TM_RHEAD_MIN ? c->head_max : TM_RHEAD_MIN;
        size_t need = c->head_need ? c->head_need(head, n) : 0;
        if (!need || need > max)
                return max;
        return need > TM_RHEAD_MIN ? need : TM_RHEAD_MIN;
}
