/* stats.json: the statistics rows of a trace rendered by one rule
 * (stats.h, tm_stats_json; docs/stats-json.md). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../codecs/common/tm_json.h"
#include "../codecs/record/statrow.h"
#include "stats_rows.h"

#define SEG_MAX 256 /* bytes of a key's name the renderer compares */

/* A sink that writes rows as nested JSON objects: the names before a
 * key's last are groups, opened when they change; the last names the
 * row's object {value, unit, exact}. */
struct json_rows {
        struct tm_rows k;
        struct tm_json *o;
        const char *top; /* the first name of every key (the family), or NULL */
        int exact;       /* 0: no figure is exact (a damaged trace's prefix) */
        unsigned depth;  /* groups open */
        char open[TM_ROW_DEPTH][SEG_MAX];
};

static void row_value(struct tm_json *o, const struct tm_row *r)
{
        switch (r->type) {
        case TM_ROW_U64:
                tm_json_u64(o, "value", r->v.u);
                break;
        case TM_ROW_I64:
                tm_json_i64(o, "value", r->v.i);
                break;
        case TM_ROW_REAL:
                tm_json_real(o, "value", r->v.r);
                break;
        case TM_ROW_ADDR: { /* past 2^53 a double loses it: a string */
                char hex[24];
                snprintf(hex, sizeof hex, "0x%" PRIx64, r->v.u);
                tm_json_str(o, "value", hex);
                break;
        }
        case TM_ROW_STR:
                tm_json_str(o, "value", r->v.s);
                break;
        case TM_ROW_BOOL:
                tm_json_bool(o, "value", r->v.b);
                break;
        default:
                tm_json_str(o, "value", NULL);
        }
}

static void rows_close_to(struct json_rows *j, unsigned depth)
{
        for (; j->depth > depth; j->depth--)
                tm_json_close(j->o, '}');
}

static void rows_put(struct tm_rows *k, const struct tm_row *r)
{
        struct json_rows *j = (struct json_rows *)k;
        const char *path[TM_ROW_DEPTH + 1];
        unsigned n = 0;
        if (!r->key) /* a line of the text only */
                return;
        if (j->top)
                path[n++] = j->top;
        for (unsigned i = 0; i < TM_ROW_DEPTH && r->key[i] && n < TM_ROW_DEPTH; i++)
                path[n++] = r->key[i];
        if (!n)
                return;
        unsigned same = 0;
        while (same < j->depth && same + 1 < n && strncmp(j->open[same], path[same], SEG_MAX) == 0)
                same++;
        rows_close_to(j, same);
        for (; j->depth + 1 < n; j->depth++) {
                snprintf(j->open[j->depth], SEG_MAX, "%s", path[j->depth]);
                tm_json_open(j->o, path[j->depth], '{');
        }
        tm_json_open(j->o, path[n - 1], '{');
        row_value(j->o, r);
        tm_json_str(j->o, "unit", r->unit);
        tm_json_bool(j->o, "exact", r->exact && j->exact && r->type != TM_ROW_UNKNOWN);
        tm_json_close(j->o, '}');
}

static void json_lines(struct tm_json *o, const char *key, const char *text)
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

size_t tm_stats_json(const struct tm_stats *st, const struct tm_schema *s,
                     const struct tm_family_info *in, const char *damage, char *dst, size_t cap)
{
        const struct tm_family *fam = tm_stats_family(s);
        struct tm_json o = {dst, cap, 0, 0};
        if (cap)
                dst[0] = 0;
        tm_json_open(&o, NULL, '{');
        tm_json_str(&o, "format", "tracemount-stats");
        tm_json_u64(&o, "version", TM_STATS_JSON_VERSION);
        const struct tm_family *claims = tm_family_of(s);
        tm_json_str(&o, "family", claims ? claims->name : NULL);
        tm_json_str(&o, "schema", s->name);
        tm_json_str(&o, "archive", in->name);
        tm_json_str(&o, "codec", in->codec);
        tm_json_str(&o, "container", in->container);
        tm_json_bool(&o, "complete", !damage);
        tm_json_str(&o, "damage", damage);
        tm_json_u64(&o, "archive_bytes", in->archive_size);
        tm_json_u64(&o, "raw_bytes", in->raw_size);
        tm_json_u64(&o, "ascii_bytes", in->ascii_size);
        json_lines(&o, "side_files", in->side);
        json_lines(&o, "notes", in->notes);
        struct json_rows j = {{rows_put}, &o, NULL, !damage, 0, {{0}}};
        tm_stats_generic_rows(st, s, in, !(fam && tm_family_more(fam)->text_whole), &j.k);
        rows_close_to(&j, 0);
        if (fam) {
                j.top = fam->name;
                fam->rows(st->fam, s, in, &j.k);
                rows_close_to(&j, 0);
        }
        if (in->storage) { /* the codec's: where the archive's bytes go */
                j.top = "storage";
                in->storage(in->storage_arg, &j.k);
                rows_close_to(&j, 0);
        }
        tm_json_close(&o, '}');
        tm_json_put(&o, "\n");
        return o.len;
}
