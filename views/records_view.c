/* The records' views: names, kinds and sizes (records_int.h). */
#include "records_int.h"

/* Bytes of one record of the binary view: the family's, or generic. */
size_t rt_bin_size(const struct tm_records *rt)
{
        return rt->fam && rt->fam->bin_size ? rt->fam->bin_size : tm_text_binary_size(&rt->schema);
}

int rv_parse(const struct tm_records *rt, const char *view, enum rv_kind *kind, unsigned *sel)
{
        const struct tm_schema *s = &rt->schema;
        for (unsigned i = 0; rt->views[i]; i++) {
                if (strcmp(rt->views[i], view) != 0)
                        continue;
                if (i < 5) {
                        *kind = (enum rv_kind)i;
                        *sel = 0;
                } else if (i < 5 + s->nkinds) {
                        *kind = RV_STREAM;
                        *sel = i - 5;
                } else if (i < 5 + s->nkinds + s->nforms) {
                        *kind = RV_FORM;
                        *sel = i - 5 - s->nkinds;
                } else if (i < 5 + s->nkinds + s->nforms + s->nfields) {
                        *kind = RV_FIELD;
                        *sel = i - 5 - s->nkinds - s->nforms;
                } else if (i < 5 + s->nkinds + s->nforms + s->nfields + s->nsections) {
                        *kind = RV_SECTION;
                        *sel = i - 5 - s->nkinds - s->nforms - s->nfields;
                } else if (i < rt->nfixed) {
                        *kind = RV_BLOB;
                        *sel = i - 5 - s->nkinds - s->nforms - s->nfields - s->nsections;
                } else {
                        *kind = RV_ID;
                        *sel = i - rt->nfixed;
                }
                return 0;
        }
        return -ENOENT;
}

int tm_records_view_pending(const struct tm_records *rt, const char *view)
{
        int f = rt->failed ? -1 : tm_family_stream_field(&rt->schema);
        if (f < 0)
                return 0;
        const char *name = rt->schema.field[f].name;
        size_t n = strlen(name);
        if (strcmp(view, "streams") == 0)
                return 1; /* its listing holds the per-id directory */
        return strncmp(view, "streams/", 8) == 0 && strncmp(view + 8, name, n) == 0 &&
               (view[8 + n] == '\0' || view[8 + n] == '/');
}

int tm_records_view_indexed(const struct tm_records *rt, const char *view)
{
        enum rv_kind kind;
        unsigned sel;
        if (rv_parse(rt, view, &kind, &sel) < 0)
                return -1;
        return !(rt->failed && kind == RV_STATS);
}

/* A reader of a trace's raw stream for its codec's storage hook. */
struct rv_raw {
        struct tm_creader *r;
};

static ssize_t rv_raw_read(void *arg, uint64_t off, void *buf, size_t n, struct tm_err *err)
{
        struct rv_raw *w = arg;
        int rc = tm_creader_seek(w->r, off, err);
        return rc < 0 ? rc : tm_creader_read_full(w->r, buf, n, err);
}

/* The codec's rows of where the trace's bytes go (tm_family_info.storage),
 * computed each time a stats text is made (once a view); the error that
 * stopped them, naming the archive and the offset, as a row instead. */
static void rv_storage(const void *arg, struct tm_rows *out)
{
        const struct tm_trace *t = arg;
        const struct tm_records *rt = t->rt;
        struct tm_err err = {0};
        struct rv_raw w = {NULL};
        uint64_t size = rt->ix->raw_size;
        tm_cont_raw_size(t->cont, &size);
        int rc = tm_creader_open(t->cont, &w.r, &err);
        if (rc == 0)
                rc = rt->codec->storage(rt->ctx, &rt->schema, rv_raw_read, &w, size, out, &err);
        tm_creader_close(w.r);
        if (rc < 0) {
                tm_trace_err_path(t, rc, &err);
                tm_row_str(out, TM_KEY("error"), err.msg[0] ? err.msg : strerror(-rc),
                           "\nstorage    not known: {}\n");
        }
}

/* What the stats reports name the trace by (the index must be ready). */
static void rv_info(struct tm_trace *t, struct tm_family_info *in)
{
        const char *base = strrchr(t->path, '/');
        *in = (struct tm_family_info){
            .name = base ? base + 1 : t->path,
            .codec = t->rt->codec->name,
            .container = t->cont_name,
            .archive_size = (uint64_t)t->sb.st_size,
            .raw_size = t->rt->ix->raw_size,
            .ascii_size = t->rt->ix->tot[TM_COL_ASCII],
            .damage = t->damaged ? t->damage.msg : NULL,
            .notes = rt_notes(t, t->rt),
            .storage = t->rt->codec->storage && !t->rt->failed ? rv_storage : NULL,
            .storage_arg = t,
        };
}

int rv_stats(struct tm_trace *t, const char **text, size_t *len, struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        pthread_mutex_lock(&t->mu);
        if (!rt->stats) {
                struct tm_family_info in;
                rv_info(t, &in);
                char *buf = malloc(RV_TEXT_CAP);
                if (buf) {
                        size_t n =
                            tm_stats_report(&rt->ix->stats, &rt->schema, &in, buf, RV_TEXT_CAP);
                        rt->stats_len = n < RV_TEXT_CAP ? n : RV_TEXT_CAP - 1;
                        rt->stats_len = tm_trace_stats_side(t, buf, rt->stats_len, RV_TEXT_CAP);
                        rt->stats_len =
                            rt->stats_len < RV_TEXT_CAP ? rt->stats_len : RV_TEXT_CAP - 1;
                        rt->stats = text_fit(buf, rt->stats_len);
                }
        }
        pthread_mutex_unlock(&t->mu);
        if (!rt->stats)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        *text = rt->stats;
        *len = rt->stats_len;
        return 0;
}

/* The text of a schema or byte-section view and its length. Under mu:
 * these need no index, so a retry (tm_records_reopen) may be replacing
 * them; a cursor takes them once, and no retry runs while it is open. */
void rv_text_of(struct tm_trace *t, enum rv_kind kind, unsigned sel, const char **text,
                uint64_t *len)
{
        const struct tm_records *rt = t->rt;
        pthread_mutex_lock(&t->mu);
        *text = kind == RV_BLOB ? (const char *)rt->blob[sel].p : rt->schema_text;
        *len = kind == RV_BLOB ? rt->blob[sel].n : rt->schema_len;
        pthread_mutex_unlock(&t->mu);
}

unsigned rv_col(const struct tm_schema *s, enum rv_kind kind, unsigned sel)
{
        switch (kind) {
        case RV_ASCII:
                return TM_COL_ASCII;
        case RV_STREAM:
                return tm_col_kind(sel);
        case RV_FORM:
                return tm_col_form(s, sel);
        case RV_FIELD:
                return tm_col_field(s, sel);
        case RV_SECTION:
                return tm_col_section(s, sel);
        case RV_ID:
                return tm_col_stream(s, sel);
        default:
                return TM_COL_REC;
        }
}

/* Is byte section sel one of the family's tables (the last ntables)? */
static int rt_is_table(const struct tm_records *rt, unsigned sel)
{
        return rt->ntables && sel >= rt->nblobs - rt->ntables;
}

/* The family's tables, made once by their pass (tables.h) over the
 * records the index pass counted, when sel (a byte section) is one of
 * them, or for binary (sel ~0u) when the family's record numbers their
 * entries. The index must be ready. 0 or the pass's error. */
int rt_tables(struct tm_trace *t, unsigned sel, struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        unsigned first = rt->nblobs - rt->ntables;
        if (!rt->ntables || (sel != ~0u && !rt_is_table(rt, sel)) ||
            (sel == ~0u && !rt->fam->binary))
                return 0;
        /* counted as a cursor: no retry (tm_records_reopen) replaces the
         * container and the codec's ctx under the pass */
        __atomic_fetch_add(&t->nvfiles, 1, __ATOMIC_ACQ_REL);
        pthread_mutex_lock(&rt->tables_mu);
        int rc = 0;
        if (!rt->blob[first].p) {
                char *text[TM_FAMILY_TABLES_MAX];
                size_t len[TM_FAMILY_TABLES_MAX];
                pthread_mutex_lock(&t->mu); /* after a retry that was under way */
                struct tm_tables_src src = {.cont = t->cont,
                                            .codec = rt->codec,
                                            .ctx = rt->ctx,
                                            .s = &rt->schema,
                                            .hdr_len = rt->hdr_len,
                                            .st0 = &rt->st0,
                                            .nrec = rt->ix->tot[TM_COL_REC],
                                            .path = t->path};
                pthread_mutex_unlock(&t->mu);
                struct tm_family_acc *acc = NULL;
                rc = tm_tables_build(&src, rt->fam, text, len, &acc, err);
                pthread_mutex_lock(&t->mu); /* rv_text_of reads them under it */
                rt->tacc = acc;
                for (unsigned i = 0; rc == 0 && i < rt->ntables; i++) {
                        rt->blob[first + i].p = (const uint8_t *)text[i];
                        rt->blob[first + i].n = len[i];
                }
                pthread_mutex_unlock(&t->mu);
        }
        pthread_mutex_unlock(&rt->tables_mu);
        __atomic_fetch_sub(&t->nvfiles, 1, __ATOMIC_RELEASE);
        if (rc < 0 && err)
                tm_trace_note_err(t, err);
        return rc;
}

/* Ready to serve the schema or byte section sel (kind), the index pass
 * done: only what it verified is served, so a damaged archive whose
 * verified bytes end inside its header fails with the damage (the
 * header's views would be made of unverified bytes), and the family's
 * tables are made. 0 or a negative errno (err filled). */
static int rv_text_ready(struct tm_trace *t, enum rv_kind kind, unsigned sel, struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        if (kind == RV_BLOB && rt_is_table(rt, sel))
                return rt_tables(t, sel, err);
        if (t->damaged && rt->ix->head_unverified) {
                if (err)
                        *err = t->damage;
                tm_trace_note_err(t, &t->damage);
                return t->damage.code;
        }
        return 0;
}

int tm_records_view_size(struct tm_trace *t, const char *view, uint64_t *size, struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        enum rv_kind kind;
        unsigned sel;
        if (rv_parse(rt, view, &kind, &sel) < 0)
                return tm_err_set(err, -ENOENT, "%s: no view %s", t->path, view);
        if (rt->failed && kind == RV_STATS) {
                *size = rt->stats_len;
                return 0;
        }
        if (rt->failed) { /* the index pass failed with it: ls -l shows a size (trace.c) */
                if (err)
                        *err = rt->open_err;
                return rt->open_err.code;
        }
        if (kind == RV_SCHEMA || kind == RV_BLOB) {
                int trc = rv_text_ready(t, kind, sel, err);
                const char *text;
                if (trc == 0)
                        rv_text_of(t, kind, sel, &text, size);
                return trc;
        }
        const struct tm_index *ix = rt->ix;
        const char *text;
        size_t len;
        int rc;
        switch (kind) {
        case RV_BINARY:
                *size = ix->tot[TM_COL_REC] * rt_bin_size(rt);
                return 0;
        case RV_RAW:
                *size = ix->raw_size;
                return 0;
        case RV_STATS:
                rc = rv_stats(t, &text, &len, err);
                if (rc == 0)
                        *size = len;
                return rc;
        default:
                *size = ix->tot[rv_col(&rt->schema, kind, sel)];
                return 0;
        }
}

size_t tm_records_stats_json(struct tm_trace *t, const char *damage, char *dst, size_t cap)
{
        struct tm_family_info in;
        char side[TM_SIDE_NOTES_MAX * (TM_ERR_MSG + 1)];
        rv_info(t, &in);
        if (tm_trace_side_lines(t, side, sizeof side))
                in.side = side;
        return tm_stats_json(&t->rt->ix->stats, &t->rt->schema, &in, damage, dst, cap);
}

uint64_t *tm_records_segments(struct tm_trace *t, const char *view, uint32_t *n)
{
        struct tm_records *rt = t->rt;
        const struct tm_index *ix = rt->ix;
        enum rv_kind kind;
        unsigned sel;
        if (!ix || rv_parse(rt, view, &kind, &sel) < 0)
                return NULL;
        unsigned col = rv_col(&rt->schema, kind, sel);
        uint64_t mul = kind == RV_BINARY ? rt_bin_size(rt) : 1;
        uint64_t *s = malloc(ix->n * sizeof *s);
        if (!s)
                return NULL;
        uint32_t a = 0, m = 0;
        for (uint32_t i = 0; i < ix->n; i++)
                a += (uint32_t)tm_index_at_point(ix, t->cont, i);
        for (uint32_t i = 0; i < ix->n; i++)
                if (a < 2 || tm_index_at_point(ix, t->cont, i))
                        s[m++] = ix->col[(size_t)i * ix->ncol + col] * mul;
        *n = m;
        return s;
}

int tm_records_view_kind(struct tm_trace *t, const char *view)
{
        enum rv_kind kind;
        unsigned sel;
        if (rv_parse(t->rt, view, &kind, &sel) < 0)
                return -1;
        switch (kind) {
        case RV_BINARY:
                return TM_VIEW_BINARY;
        case RV_RAW:
                return TM_VIEW_RAW;
        case RV_BLOB:
                return rt_is_table(t->rt, sel) ? TM_VIEW_TABLE : TM_VIEW_STATS;
        case RV_STATS:
        case RV_SCHEMA:
                return TM_VIEW_STATS;
        default:
                return TM_VIEW_ASCII;
        }
}
