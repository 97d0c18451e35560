/* The families this build has and which one a schema is of (declared in
 * codecs/record/family.h): a module of its own beside the registry, so
 * that a codec that names its schema by the family that claims it
 * (Meta-TF) reaches the families and never the registry, which reaches
 * that codec's row. */
#include <stddef.h>

#include "address/addr_stats.h"
#include "heap/heap_stats.h"
#include "java/jstats.h"
#include "laplace/lapfamily.h"
#include "object/ptf_stats.h"
#include "record/family.h"
#include "record/family_row.h"

const struct tm_family *const tm_families[] = {
    &tm_family_address, &tm_family_heap,    &tm_family_object,
    &tm_family_java,    &tm_family_laplace, NULL,
};

const struct tm_family *tm_family_of(const struct tm_schema *s)
{
        for (unsigned i = 0; tm_families[i]; i++)
                if (tm_families[i]->claims(s))
                        return tm_families[i];
        const struct tm_family *const *end, *const *f = tm_family_rows(&end);
        for (; f < end; f++) /* the modules' own (record/family_row.h) */
                if ((*f)->claims(s))
                        return *f;
        return NULL;
}

int tm_family_stream_field(const struct tm_schema *s)
{
        const struct tm_family *f = tm_family_of(s);
        return f && f->stream_field ? tm_schema_field(s, f->stream_field) : -1;
}
