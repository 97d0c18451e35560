/* Which family a schema is of (family.h); the table is the registry's
 * (codecs/registry.c). */
#include "family.h"

#include <stdio.h>
#include <string.h>

#include "../common/tm_json.h"

const struct tm_family *tm_family_of(const struct tm_schema *s)
{
        for (unsigned i = 0; tm_families[i]; i++)
                if (tm_families[i]->claims(s))
                        return tm_families[i];
        return NULL;
}

int tm_family_stream_field(const struct tm_schema *s)
{
        const struct tm_family *f = tm_family_of(s);
        return f && f->stream_field ? tm_schema_field(s, f->stream_field) : -1;
}

/* ---- stats.json ---- */

const char *tm_family_line(const char **l, size_t *len)
{
        const char *s = *l;
        if (!s || !*s)
                return NULL;
        const char *e = strchr(s, '\n');
        *len = e ? (size_t)(e - s) : strlen(s);
        *l = s + *len + (e != NULL);
        return s;
}

void tm_json_lines(struct tm_json *o, const char *key, const char *text)
{
        tm_json_open(o, key, '[');
        size_t n;
        for (const char *l = text, *ln; (ln = tm_family_line(&l, &n));) {
                char line[512];
                snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1),
                         ln);
                tm_json_str(o, NULL, line);
        }
        tm_json_close(o, ']');
}

void tm_json_stats_head(struct tm_json *o, const char *family, const struct tm_family_info *in,
                        const char *damage)
{
        if (o->cap)
                o->buf[0] = 0;
        tm_json_open(o, NULL, '{');
        tm_json_str(o, "format", "tracemount-stats");
        tm_json_u64(o, "version", 1);
        tm_json_str(o, "family", family);
        tm_json_str(o, "archive", in->name);
        tm_json_str(o, "codec", in->codec);
        tm_json_str(o, "container", in->container);
        tm_json_bool(o, "complete", !damage);
        tm_json_str(o, "damage", damage);
        tm_json_u64(o, "archive_bytes", in->archive_size);
        tm_json_u64(o, "raw_bytes", in->raw_size);
        tm_json_u64(o, "ascii_bytes", in->ascii_size);
        tm_json_lines(o, "side_files", in->side);
}

size_t tm_json_stats_end(struct tm_json *o)
{
        tm_json_close(o, '}');
        tm_json_put(o, "\n");
        return o->len;
}
