/* The generic statistics rows (stats_rows.h). */
#include "stats_rows.h"

#include <stdlib.h>
#include <string.h>

#include "../codecs/record/text.h"

const struct tm_family *tm_stats_family(const struct tm_schema *s)
{
        const struct tm_family *fam = tm_family_of(s);
        return fam && fam->stats_size && fam->rows ? fam : NULL;
}

static double per(uint64_t a, uint64_t b)
{
        return b ? (double)a / (double)b : 0.0;
}

/* A line of notes as a string row of the text (the lines are not cut). */
static void note_row(struct tm_rows *k, const char *ln, size_t n)
{
        char small[512], *s = n < sizeof small ? small : malloc(n + 1);
        if (!s)
                return;
        memcpy(s, ln, n);
        s[n] = 0;
        tm_row_str(k, NULL, s, "note       {}\n");
        if (s != small)
                free(s);
}

static void head_rows(const struct tm_stats *st, const struct tm_schema *s,
                      const struct tm_family_info *in, struct tm_rows *k)
{
        tm_row_str(k, NULL, in->name, "trace      {}\n");
        tm_row_str(k, NULL, in->codec, "format     {}");
        tm_row_str(k, NULL, s->name, " ({} family)");
        tm_row_str(k, NULL, in->container, " in {}\n");
        if (in->damage)
                tm_row_str(k, NULL, in->damage,
                           "damaged    {} (the numbers are of the records before it)\n");
        tm_row_u64(k, TM_KEY("records"), st->records, "records", 1, "records    {}\n");
        tm_row_u64(k, NULL, in->archive_size, "bytes", 1, "archive    {} bytes, ");
        tm_row_real(k, NULL, per(in->archive_size, st->records), NULL, 1, "{.3} bytes a record\n");
        tm_row_u64(k, NULL, in->raw_size, "bytes", 1, "raw        {} bytes, ");
        tm_row_real(k, NULL, per(in->raw_size, st->records), NULL, 1, "{.3} bytes a record\n");
        tm_row_u64(k, NULL, in->ascii_size, "bytes", 1, "ascii      {} bytes\n");
        size_t nl;
        for (const char *l = in->notes, *ln; (ln = tm_family_line(&l, &nl));)
                note_row(k, ln, nl);
}

/* A field's least or greatest value v: signed when the field is, in the
 * text as its show says (a character when every value is a printable
 * one); end: the line's end, or "". */
static void range_row(struct tm_rows *k, const struct tm_field *f, const char *which, uint64_t v,
                      int as_char, const char *end)
{
        static const char *const tpl[2][3] = {{" {c}", " 0x{x}", " {}"},
                                              {" {c}\n", " 0x{x}\n", " {}\n"}};
        const char *text = tpl[*end != 0][as_char ? 0 : f->show == TM_SHOW_HEX ? 1 : 2];
        if (f->type == TM_FT_INT)
                tm_row_i64(k, TM_KEY("fields", f->name, which), (int64_t)v, NULL, 1, text);
        else
                tm_row_u64(k, TM_KEY("fields", f->name, which), v, NULL, 1, text);
}

void tm_stats_generic_rows(const struct tm_stats *st, const struct tm_schema *s,
                           const struct tm_family_info *in, int text, struct tm_rows *k)
{
        if (!text) {
                tm_row_u64(k, TM_KEY("records"), st->records, "records", 1, NULL);
                for (unsigned i = 0; i < s->nkinds; i++)
                        tm_row_u64(k, TM_KEY("kinds", s->kind[i].name), st->kind_n[i], "records",
                                   1, NULL);
                return; /* such a family counts no field ranges (stats.c) */
        }
        head_rows(st, s, in, k);
        tm_row_text(k, "\nrecords per kind\n");
        for (unsigned i = 0; i < s->nkinds; i++)
                tm_row_u64(k, TM_KEY("kinds", s->kind[i].name), st->kind_n[i], "records", 1,
                           "  {n-20} {}\n");
        tm_row_text(k, "\nfields (numbers): records with it, min, max\n");
        for (unsigned f = 0; f < s->nfields; f++) {
                const struct tm_field *fd = &s->field[f];
                if (!st->fseen[f])
                        continue;
                const struct tm_show_row *row = tm_show_row(fd->show); /* not when hidden */
                int as_char = row && row->range_chars && row->range_chars(st->fmin[f], st->fmax[f]);
                tm_row_u64(k, TM_KEY("fields", fd->name, "records"), st->fseen[f], "records", 1,
                           "  {N-20} {}");
                range_row(k, fd, "min", st->fmin[f], as_char, "");
                range_row(k, fd, "max", st->fmax[f], as_char, "\n");
        }
}
