/* Which family a schema is of (family.h); the table is the registry's
 * (codecs/registry.c). */
#include "family.h"

#include <stdio.h>
#include <string.h>

#include "../common/tm_err.h"
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

void tm_json_stats_head(struct tm_json *o, const struct tm_json_head *h)
{
        if (o->cap)
                o->buf[0] = 0;
        tm_json_open(o, NULL, '{');
        tm_json_str(o, "format", "tracemount-stats");
        tm_json_u64(o, "version", 1);
        tm_json_str(o, "family", h->family);
        tm_json_str(o, "archive", h->name);
        tm_json_str(o, "codec", h->codec);
        tm_json_str(o, "container", h->container);
        tm_json_bool(o, "complete", !h->damage);
        tm_json_str(o, "damage", h->damage);
        tm_json_u64(o, "archive_bytes", h->archive_size);
        tm_json_u64(o, "raw_bytes", h->raw_size);
        tm_json_u64(o, "ascii_bytes", h->ascii_size);
        tm_json_open(o, "side_files", '[');
        for (const char *l = h->side; l && *l;) {
                const char *e = strchr(l, '\n');
                size_t n = e ? (size_t)(e - l) : strlen(l);
                char line[TM_ERR_MSG];
                snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1),
                         l);
                tm_json_str(o, NULL, line);
                l += n + (e != NULL);
        }
        tm_json_close(o, ']');
}

size_t tm_json_stats_end(struct tm_json *o)
{
        tm_json_close(o, '}');
        tm_json_put(o, "\n");
        return o->len;
}

