/* A schema written as a Meta-TF 1.0 DTD (the `schema` view). */
#include "record.h"

#include <stdio.h>
#include <string.h>

#define OUT(...)                                                                                   \
        do {                                                                                       \
                int k_ = snprintf(dst + n, n < cap ? cap - n : 0, __VA_ARGS__);                    \
                if (k_ > 0)                                                                        \
                        n += (size_t)k_;                                                           \
        } while (0)

static int is_reserved(const char *name)
{
        static const char *const r[] = {"comment", "section", "metadata", "vfield", "tag"};
        for (unsigned i = 0; i < sizeof r / sizeof r[0]; i++)
                if (strcmp(name, r[i]) == 0)
                        return 1;
        return 0;
}

size_t tm_schema_dtd(const struct tm_schema *s, const char *codec, char *dst, size_t cap)
{
        size_t n = 0;
        OUT("// The records of this %s trace (%s family), as a Meta-TF 1.0 DTD.\n", codec, s->name);
        OUT("// Field widths: 8 bytes, little-endian, every field; the native encoding sets\n");
        OUT("// its own (see docs/formats/), the binary view's record is described below.\n\n");
        OUT("tag.width = 1;\n");
        for (unsigned i = 0; i < s->nfields; i++) {
                const struct tm_field *f = &s->field[i];
                if (tm_field_is_var(f))
                        OUT("// %s: variable length (%s), a vfield\n", f->name,
                            f->type == TM_FT_TEXT    ? "text"
                            : f->type == TM_FT_BYTES ? "bytes"
                                                     : "list of numbers");
                else
                        OUT("%s.width = 8; %s.interpretation = none;%s\n", f->name, f->name,
                            f->type == TM_FT_INT ? " // signed" : "");
        }
        OUT("\n");
        /* Meta-TF reserves the names of its predefined records and tags
         * 1-3 (comment, section, metadata): a kind with a reserved name is
         * the predefined record, the others are numbered from 4 on. */
        unsigned tag = 4;
        for (unsigned k = 0; k < s->nkinds; k++) {
                const struct tm_kind *kd = &s->kind[k];
                if (is_reserved(kd->name)) {
                        OUT("// %s: the predefined %s record\n", kd->name, kd->name);
                        continue;
                }
                OUT("%s : (tag", kd->name);
                for (unsigned i = 0; i < kd->nfields; i++) {
                        const struct tm_field *f = &s->field[kd->field[i]];
                        OUT(", %s", tm_field_is_var(f) ? "vfield" : f->name);
                }
                OUT(") {\n    tag.value = %u; // %s tag %u\n}\n", tag++, codec, (unsigned)kd->tag);
        }
        return n;
}
