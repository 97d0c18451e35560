/* The registry: every container and every trace codec this build reads,
 * in the order they are tried. Adding a format is its module, its row
 * here, its docs page (docs/formats/) and its tests; the views, the
 * daemon and tracetool find it through these tables alone.
 *
 * Detection: the container first (by its magic bytes; plain accepts
 * anything and comes last), then, on the first raw bytes, the codec rows:
 * the address codecs (codecs/address/arec.h; binary magics first; lackey
 * before din, as a lackey file never parses as din but the reverse is not
 * guaranteed), the other record codecs (binary signatures first, text
 * formats after), then the bound
 * formats (codecs/metatf/bound.h: a row of data and a DTD, no C): those
 * with a magic, then those recognised by the size rule alone, the
 * weakest probe, last. Never by name.
 *
 * Families (codecs/record/family.h): what a kind of record trace adds to
 * the generic views, its statistics and per-id streams; a schema is of
 * the first family that claims it, of none when no row does. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address/addr_stats.h"
#include "address/arec.h"
#include "containers/cont_impl.h"
#include "heap/hatf.h"
#include "heap/heap_stats.h"
#include "heap/mtrace.h"
#include "laplace/laplace.h"
#include "laplace/laplace_stats.h"
#include "java/jstats.h"
#include "java/jtrace.h"
#include "metatf/bound.h"
#include "metatf/metatf.h"
#include "native/native.h"
#include "object/ptf.h"
#include "object/ptf_stats.h"

const struct tm_cont_ops *const tm_cont_table[] = {
    &tm_cont_gzip_ops,
    &tm_cont_zstd_ops,
    &tm_cont_zip_ops,
    &tm_cont_plain_ops,
    NULL,
};


#define RCODECS                                                                                    \
        &tm_rcodec_pdats2, &tm_rcodec_pdats, &tm_rcodec_lackey, &tm_rcodec_din, &tm_rcodec_hatf,  \
            &tm_rcodec_native, &tm_rcodec_metatf, &tm_rcodec_mtrace, &tm_rcodec_java,             \
            &tm_rcodec_ptf_bin, &tm_rcodec_ptf, &tm_rcodec_laplace_text, &tm_rcodec_laplace_kev
/* only counted: the table below is the one used */
static const struct tm_rcodec *const rcodecs_own[] __attribute__((unused)) = {RCODECS};
/* with room for the bound rows added at start-up (tm_rcodec_add) */
#define RCODECS_OWN (sizeof rcodecs_own / sizeof rcodecs_own[0])
const struct tm_rcodec *tm_rcodecs[RCODECS_OWN + TM_RCODECS_ADDED_MAX + 1] = {RCODECS};

const struct tm_family *const tm_families[] = {
    &tm_family_address,
    &tm_family_heap,
    &tm_family_object,
    &tm_family_java,
    &tm_family_laplace,
    NULL,
};

/* Bound formats shipped with tracemount: a row each, the DTD in
 * codecs/metatf/dtd/ (docs/formats/bound.md). The rows
 * described at run time (TM_BOUND_FORMATS) are of the same struct. */
const struct tm_bound tm_bound_rows[] = {
    {.name = ""},
};

static unsigned n_by_size; /* added rows probed by size alone: the table's last */

int tm_rcodec_add(const struct tm_rcodec *c, int by_size, struct tm_err *err)
{
        size_t n = 0;
        while (tm_rcodecs[n])
                n++;
        if (tm_rcodec_by_name(c->name) || tm_codec_by_name(c->name))
                return tm_err_set(err, -EEXIST, "format %s: a codec of that name exists", c->name);
        if (n + 2 > sizeof tm_rcodecs / sizeof tm_rcodecs[0])
                return tm_err_set(err, -ENOSPC, "format %s: the record codec table is full",
                                  c->name);
        size_t at = by_size ? n : n - n_by_size;
        memmove(&tm_rcodecs[at + 1], &tm_rcodecs[at], (n - at + 1) * sizeof tm_rcodecs[0]);
        tm_rcodecs[at] = c;
        n_by_size += by_size != 0;
        return 0;
}

static void report(void *arg, const struct tm_err *e)
{
        (void)arg;
        fprintf(stderr, "tracemount: TM_BOUND_FORMATS: %s (format not added)\n", e->msg);
}

/* Once, before main: the shipped bound rows, then those TM_BOUND_FORMATS
 * describes. A row that cannot be added is reported on stderr and left
 * out; nothing else changes. */
__attribute__((constructor)) static void registry_start(void)
{
        /* Laplace raw references: a layout of a shipped DTD as a bound
         * row's, with an encoder, so a row of C (laplace.h); no magic, so
         * where a bound row by the size rule goes: after every row with
         * one (docs/formats/laplace.md, "Detection") */
        struct tm_err le = {0};
        if (tm_rcodec_add(&tm_rcodec_laplace_raw, 1, &le) < 0)
                fprintf(stderr, "tracemount: laplace_raw: %s\n", le.msg);
        for (const struct tm_bound *b = tm_bound_rows; b->name[0]; b++) {
                struct tm_err e = {0};
                if (tm_bound_add(b, &e) < 0)
                        fprintf(stderr, "tracemount: shipped format %s: %s\n", b->name, e.msg);
        }
        tm_bound_load_list(getenv("TM_BOUND_FORMATS"), report, NULL);
}
