#include "records_int.h"

/* The first want raw bytes of cont, t's container (fewer if the stream is
 * shorter), for a codec whose open() needs more than the probe's head. */
static uint8_t *read_head(struct tm_trace *t, struct tm_cont *cont, size_t want, size_t *got,
                          struct tm_err *err)
{
        struct tm_creader *r;
        uint8_t *b = malloc(want);
        if (!b) {
                tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
                return NULL;
        }
        if (tm_creader_open_head(cont, &r, err) < 0) {
                free(b);
                return NULL;
        }
        size_t n = 0;
        ssize_t k = 1;
        while (n < want && (k = tm_creader_read(r, b + n, want - n, err)) > 0)
                n += (size_t)k;
        tm_creader_close(r);
        if (k < 0 && n == 0) { /* damage after a head: the index pass's to report */
                free(b);
                return NULL;
        }
        *got = n;
        return b;
}

/* The schema view: the DTD, then the binary layout as // comments (the
 * layout's C struct holds comments of its own). Returns the length. */
static size_t schema_text(const struct tm_schema *s, const struct tm_family *fam, const char *codec,
                          char *dst)
{
        size_t n = tm_schema_dtd(s, codec, dst, RV_TEXT_CAP);
        char layout[8192];
        size_t ln = fam && fam->bin_layout ? fam->bin_layout(layout, sizeof layout)
                                           : tm_text_binary_layout(layout, sizeof layout, s);
        if (ln >= sizeof layout)
                ln = sizeof layout - 1;
        layout[ln] = 0;
        n = n < RV_TEXT_CAP ? n : RV_TEXT_CAP - 1;
        n += (size_t)snprintf(dst + n, RV_TEXT_CAP - n, "\n");
        for (char *line = layout, *nl; n < RV_TEXT_CAP && *line; line = nl + 1) {
                nl = strchr(line, '\n');
                if (!nl)
                        break;
                n +=
                    (size_t)snprintf(dst + n, RV_TEXT_CAP - n, "// %.*s\n", (int)(nl - line), line);
        }
        return n < RV_TEXT_CAP ? n : RV_TEXT_CAP - 1;
}

/* The trace's notes: the text of the records of kind "comment" before its
 * first other record, within the head (what tracetool pack and record
 * write there: tools/pack_job.c), one a line; NULL if none. */
static char *leading_notes(const struct tm_records *rt, const uint8_t *head, size_t n)
{
        const struct tm_schema *s = &rt->schema;
        int ck = tm_schema_kind(s, "comment");
        if (ck < 0 || rt->hdr_len >= n)
                return NULL;
        struct tm_rstate st = rt->st0;
        struct tm_rec r[16];
        size_t used = 0;
        struct tm_err e = {0};
        ssize_t k = rt->codec->decode(rt->ctx, &st, head + rt->hdr_len, n - rt->hdr_len, 0,
                                      rt->hdr_len, &used, r, 16, &e);
        char *notes = NULL;
        size_t len = 0;
        for (ssize_t i = 0; i < k && r[i].kind == (uint32_t)ck; i++) {
                const struct tm_kind *kd = &s->kind[ck];
                if (kd->nfields < 1 || !tm_field_is_var(&s->field[kd->field[0]]))
                        break;
                size_t tl = (size_t)r[i].v[0];
                char *m = realloc(notes, len + tl + 2);
                if (!m)
                        break;
                notes = m;
                for (size_t j = 0; j < tl; j++) /* one line a note */
                        notes[len + j] = r[i].var[0][j] == '\n' ? ' ' : (char)r[i].var[0][j];
                len += tl;
                notes[len++] = '\n';
                notes[len] = '\0';
        }
        return notes;
}

/* The notes, decoded when first asked for (the stats): a block-coded
 * trace (the native encoding) decodes a whole block to give its first
 * records, which a lookup or `ls -l` of a directory of traces must not
 * pay. Read from the head of the archive as rt_setup saw it; NULL if
 * none or the head cannot be read (the notes are then left out). */
const char *rt_notes(struct tm_trace *t, struct tm_records *rt)
{
        pthread_mutex_lock(&rt->tables_mu);
        if (!rt->notes_done && !rt->failed && tm_schema_kind(&rt->schema, "comment") >= 0) {
                size_t want =
                           rt->codec->head_max > TM_RHEAD_MIN ? rt->codec->head_max : TM_RHEAD_MIN,
                       n = 0;
                struct tm_err e = {0};
                uint8_t *head = read_head(t, t->cont, want, &n, &e);
                if (head)
                        rt->notes = leading_notes(rt, head, n);
                free(head);
        }
        rt->notes_done = 1;
        const char *notes = rt->notes;
        pthread_mutex_unlock(&rt->tables_mu);
        return notes;
}

/* The stats view of a trace whose codec's open failed with e. */
static char *failed_stats(const struct tm_trace *t, const struct tm_records *rt,
                          const struct tm_err *e, size_t *len)
{
        const char *base = strrchr(t->path, '/');
        char *s = NULL;
        int n = asprintf(&s,
                         "trace      %s\n"
                         "format     %s in %s, not opened: every view but stats and errors "
                         "fails with EIO\n"
                         "error      %s\n",
                         base ? base + 1 : t->path, rt->codec->name, t->cont_name, e->msg);
        if (n < 0)
                return NULL;
        *len = (size_t)n;
        return s;
}

/* Make rt, whose codec's open failed with rc (err), a trace that says so
 * (tm_records.failed): its views are the fixed ones. Returns 0 or -ENOMEM. */
static int open_failed(struct tm_trace *t, struct tm_records *rt, int rc, struct tm_err *err)
{
        static const char *const fixed[] = {"ascii", "binary", "raw", "stats", "schema"};
        struct tm_err e = {0};
        if (err)
                e = *err;
        if (!e.msg[0])
                tm_err_set(&e, rc, "raw offset 0: %s: %s", rt->codec->name, strerror(-rc));
        tm_trace_err_path(t, rc, &e);
        if (!strstr(e.msg, t->path))
                tm_err_prefix(&e, "%s", t->path);
        e.code = -EIO;
        memset(&rt->schema, 0, sizeof rt->schema);
        rt->views = calloc(6, sizeof *rt->views);
        rt->stats = failed_stats(t, rt, &e, &rt->stats_len);
        if (!rt->views || !rt->stats)
                return -ENOMEM;
        for (unsigned i = 0; i < 5; i++)
                rt->views[i] = fixed[i];
        rt->nfixed = 5;
        rt->failed = 1;
        rt->open_err = e;
        tm_trace_note_err(t, &e);
        return 0;
}

/* The row of a broken trace: a name, nothing to decode with. */
static const struct tm_rcodec rt_broken_codec = {.name = "unknown"};

int tm_records_open_broken(struct tm_trace *t, const struct tm_err *why, struct tm_records **out)
{
        struct tm_records *rt = calloc(1, sizeof *rt);
        if (!rt)
                return -ENOMEM;
        rt->codec = &rt_broken_codec;
        pthread_mutex_init(&rt->tables_mu, NULL);
        struct tm_err e = *why;
        if (open_failed(t, rt, why->code < 0 ? why->code : -EIO, &e) < 0) {
                tm_records_close(rt);
                return -ENOMEM;
        }
        *out = rt;
        return 0;
}

const struct tm_err *tm_records_open_error(const struct tm_records *rt)
{
        return rt && rt->failed ? &rt->open_err : NULL;
}

/* buf (RV_TEXT_CAP bytes, len of them a text) cut to the text and its
 * NUL: a trace keeps its stats and schema texts while it is open, and a
 * daemon keeps many traces open. buf itself when realloc fails. */
char *text_fit(char *buf, size_t len)
{
        buf[len] = '\0';
        char *p = realloc(buf, len + 1);
        return p ? p : buf;
}

/* rt's view names (rt->schema's and the byte sections') and its schema
 * view. Returns 0 or -ENOMEM. */
static int rt_name_views(struct tm_trace *t, struct tm_records *rt, struct tm_err *err)
{
        const struct tm_schema *s = &rt->schema;
        unsigned nnames = s->nkinds + s->nforms + s->nfields + s->nsections + rt->nblobs;
        unsigned nids = tm_family_stream_field(s) >= 0 ? TM_FAMILY_STREAMS_MAX : 0;
        rt->names = calloc(nnames + 1, sizeof *rt->names);
        rt->views = calloc(5 + nnames + nids + 1, sizeof *rt->views);
        rt->ids = nids ? calloc(1, sizeof *rt->ids) : NULL;
        rt->schema_text = malloc(RV_TEXT_CAP);
        if (!rt->names || !rt->views || (nids && !rt->ids) || !rt->schema_text)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        unsigned v = 0;
        static const char *const fixed[] = {"ascii", "binary", "raw", "stats", "schema"};
        for (unsigned i = 0; i < 5; i++)
                rt->views[v++] = fixed[i];
        for (unsigned k = 0; k < s->nkinds; k++) {
                snprintf(rt->names[k], sizeof rt->names[k], "streams/%s", s->kind[k].name);
                rt->views[v++] = rt->names[k];
        }
        for (unsigned i = 0; i < s->nforms; i++) {
                snprintf(rt->names[s->nkinds + i], sizeof rt->names[0], "%s", s->form[i].name);
                rt->views[v++] = rt->names[s->nkinds + i];
        }
        unsigned nf = s->nkinds + s->nforms; /* names before fields/ */
        for (unsigned f = 0; f < s->nfields; f++) {
                snprintf(rt->names[nf + f], sizeof rt->names[0], "fields/%s", s->field[f].name);
                rt->views[v++] = rt->names[nf + f];
        }
        for (unsigned i = 0; i < s->nsections + rt->nblobs; i++) {
                char(*nm)[2 * TM_NAME_MAX] = &rt->names[nf + s->nfields + i];
                snprintf(*nm, sizeof *nm, "sections/%s",
                         i < s->nsections ? s->section[i].name : rt->blob[i - s->nsections].name);
                rt->views[v++] = *nm;
        }
        rt->nfixed = v;
        rt->schema_len = schema_text(s, rt->fam, rt->codec->name, rt->schema_text);
        rt->schema_text = text_fit(rt->schema_text, rt->schema_len);
        return 0;
}

/* Open rt->codec on head, the first headn raw bytes of cont (more of it
 * when the codec needs more): rt's ctx, schema, initial state, header
 * length, notes, plans, byte sections and view names. Returns 0 or a
 * negative errno; *by_codec says whether that came from the codec's open
 * (rt->ctx is NULL then). What else it made, tm_records_close frees. */
static int rt_setup(struct tm_trace *t, struct tm_cont *cont, struct tm_records *rt,
                    const uint8_t *head, size_t headn, int *by_codec, struct tm_err *err)
{
        const struct tm_rcodec *c = rt->codec;
        uint8_t *big = NULL;
        *by_codec = 0;
        size_t want = tm_rcodec_head_want(c, head, headn);
        if (want > headn && headn == TM_RHEAD_MIN) {
                big = read_head(t, cont, want, &headn, err);
                if (!big)
                        return err && err->code ? err->code : -ENOMEM;
                head = big;
        }
        /* what the codec looks up beside the archive (a DTD), it opens in
         * the directory the trace was opened in, never by path */
        const struct tm_rarchive a = {
            .path = t->path, .dir_fd = t->dirfd, .sb = &t->sb, .trust_group = t->trust_group_dtd};
        int hl = c->open_at ? c->open_at(head, headn, &a, &rt->ctx, &rt->schema, &rt->st0, err)
                            : c->open(head, headn, t->path, &rt->ctx, &rt->schema, &rt->st0, err);
        if (hl < 0) {
                free(big);
                rt->ctx = NULL;
                *by_codec = 1;
                return hl;
        }
        const struct tm_err *note = c->note ? c->note(rt->ctx) : NULL;
        if (note) {
                struct tm_err e = *note;
                if (!strstr(e.msg, t->path))
                        tm_err_prefix(&e, "%s", t->path);
                tm_trace_note_side(t, &e);
        }
        rt->hdr_len = (uint64_t)hl;
        free(big);
        rt->fam = tm_family_of(&rt->schema);
        rt->plan = tm_index_plans(&rt->schema);
        if (!rt->plan)
                return tm_err_set(err, -EINVAL, "%s: a schema this build cannot render", t->path);
        if (c->blobs)
                rt->nblobs = c->blobs(rt->ctx, rt->blob, TM_SCHEMA_SECTIONS_MAX);
        const char *const *tables = tm_family_more(rt->fam)->tables;
        for (unsigned i = 0;
             tables && tables[i] && i < TM_FAMILY_TABLES_MAX && rt->nblobs < TM_SCHEMA_SECTIONS_MAX;
             i++, rt->ntables++)
                snprintf(rt->blob[rt->nblobs++].name, TM_NAME_MAX, "%s", tables[i]);
        return rt_name_views(t, rt, err);
}

int tm_records_open(struct tm_trace *t, const uint8_t *head, size_t headn, struct tm_records **out,
                    struct tm_err *err)
{
        const struct tm_rcodec *c = tm_rcodec_probe(head, headn);
        if (!c)
                return 0;
        struct tm_records *rt = calloc(1, sizeof *rt);
        if (!rt)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        rt->codec = c;
        pthread_mutex_init(&rt->tables_mu, NULL);
        int by_codec;
        int rc = rt_setup(t, t->cont, rt, head, headn, &by_codec, err);
        if (rc < 0 && by_codec && rc != -ENOMEM && open_failed(t, rt, rc, err) == 0) {
                *out = rt;
                return 1;
        }
        if (rc < 0) {
                tm_records_close(rt);
                return by_codec ? tm_trace_err_path(t, rc, err) : rc;
        }
        *out = rt;
        return 1;
}

/* Are n's views (rt_setup's) rt's, name for name and of the same kinds?
 * rv_parse tells a view's kind by its place and the schema's counts. */
static int rt_same_views(const struct tm_records *rt, const struct tm_records *n)
{
        const struct tm_schema *a = &rt->schema, *b = &n->schema;
        if (rt->nfixed != n->nfixed || a->nkinds != b->nkinds || a->nforms != b->nforms ||
            a->nfields != b->nfields || a->nsections != b->nsections || rt->nblobs != n->nblobs ||
            tm_family_stream_field(a) != tm_family_stream_field(b))
                return 0;
        for (unsigned i = 0; i < rt->nfixed; i++)
                if (strcmp(rt->views[i], n->views[i]) != 0)
                        return 0;
        return 1;
}

/* Take back the per-id streams the old version's index listed: the next
 * index lists the new version's (add_id_views). The old names stay, in
 * the block n->ids replaces, for a reader still walking the old list. */
static void rt_forget_ids(struct tm_records *rt, struct tm_records *n)
{
        if (!rt->ids || !rt->views[rt->nfixed])
                return; /* none listed */
        n->ids->older = rt->ids;
        rt->ids = n->ids;
        n->ids = NULL;
        __atomic_store_n(&rt->views[rt->nfixed], NULL, __ATOMIC_RELEASE);
        for (unsigned i = rt->nfixed + 1; rt->views[i]; i++)
                __atomic_store_n(&rt->views[i], NULL, __ATOMIC_RELAXED);
}

int tm_records_reopen(struct tm_trace *t, struct tm_cont *cont, const uint8_t *head, size_t headn,
                      struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        /* a trace whose codec's open failed has the five fixed views, one
         * that opens has more: the list would change */
        if (rt->failed)
                return tm_err_set(err, -EBUSY, "%s: rewritten, but its views could change",
                                  t->path);
        if (tm_rcodec_probe(head, headn) != rt->codec)
                return tm_err_set(err, -EMEDIUMTYPE, "%s: no longer a %s trace", t->path,
                                  rt->codec->name);
        struct tm_records *n = calloc(1, sizeof *n);
        if (!n)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        n->codec = rt->codec;
        pthread_mutex_init(&n->tables_mu, NULL);
        int by_codec;
        int rc = rt_setup(t, cont, n, head, headn, &by_codec, err);
        /* Readers walk the views list and look names up in it without a
         * lock, and a view's kind is its place in it: a version with other
         * views (a Meta-TF DTD that changed the kinds or fields) is refused,
         * and the trace stays failed. */
        if (rc == 0 && !rt_same_views(rt, n))
                rc = tm_err_set(err, -EBUSY, "%s: rewritten with other views; open it again",
                                t->path);
        if (rc < 0) {
                tm_records_close(n);
                return rc;
        }
        /* Swap the new version's state in and let n take the old one to
         * tm_records_close. No cursor exists (the caller's); the bytes of
         * the schema that readers of the views read unlocked (the counts,
         * the names) are equal in both. */
        void *ctx = rt->ctx;
        rt->ctx = n->ctx;
        n->ctx = ctx;
        rt->schema = n->schema;
        rt->st0 = n->st0;
        rt->hdr_len = n->hdr_len;
        if (rt->tacc) /* the old version's tables' (no cursor reads it: none is open) */
                rt->fam->acc_free(rt->tacc);
        rt->tacc = NULL;
        rt->fam = n->fam;
        struct tm_blob old[TM_SCHEMA_SECTIONS_MAX]; /* n takes the old tables to free */
        memcpy(old, rt->blob, sizeof old);
        memcpy(rt->blob, n->blob, sizeof rt->blob);
        memcpy(n->blob, old, sizeof old);
        struct tm_text_plan *plan = rt->plan;
        rt->plan = n->plan;
        n->plan = plan;
        pthread_mutex_lock(&rt->tables_mu); /* rt_notes: the new version's, when asked */
        char *notes = rt->notes;
        rt->notes = n->notes;
        n->notes = notes;
        rt->notes_done = 0;
        pthread_mutex_unlock(&rt->tables_mu);
        char *text = rt->schema_text;
        rt->schema_text = n->schema_text;
        n->schema_text = text;
        rt->schema_len = n->schema_len;
        n->stats = rt->stats;
        rt->stats = NULL;
        n->ix = rt->ix;
        rt->ix = NULL;
        rt_forget_ids(rt, n);
        tm_records_close(n);
        return 0;
}

/* Once the index says which ids there are: a streams/<field>/<id> for
 * each of the first TM_FAMILY_STREAMS_MAX, appended so that a reader walking the
 * list meanwhile sees the old list or the new one (the terminator moves
 * last, with a release store). One that walks it across a retry
 * (tm_records_reopen) may see some of each version's ids, every name valid. */
static void add_id_views(struct tm_records *rt)
{
        const struct tm_schema *s = &rt->schema;
        int f = tm_family_stream_field(s);
        if (f < 0 || rt->views[rt->nfixed])
                return;
        const uint64_t *ids;
        unsigned n = tm_stats_stream_ids(&rt->ix->stats, s, &ids);
        if (n == 0)
                return;
        char(*name)[2 * TM_NAME_MAX] = rt->ids->name;
        for (unsigned j = 0; j < n; j++) {
                snprintf(name[j], sizeof name[j], "streams/%s/%llu", s->field[f].name,
                         (unsigned long long)ids[j]);
                if (j) /* atomic: a reader of the list before a retry may be here */
                        __atomic_store_n(&rt->views[rt->nfixed + j], name[j], __ATOMIC_RELAXED);
        }
        __atomic_store_n(&rt->views[rt->nfixed], name[0], __ATOMIC_RELEASE);
}

void tm_records_close(struct tm_records *rt)
{
        if (!rt)
                return;
        if (rt->codec->close && !rt->failed)
                rt->codec->close(rt->ctx);
        for (unsigned i = rt->nblobs - rt->ntables; i < rt->nblobs; i++)
                free((void *)rt->blob[i].p);
        if (rt->tacc)
                rt->fam->acc_free(rt->tacc);
        pthread_mutex_destroy(&rt->tables_mu);
        tm_index_free(rt->ix);
        free(rt->names);
        for (struct rt_ids *ids = rt->ids, *older; ids; ids = older) {
                older = ids->older;
                free(ids);
        }
        free(rt->notes);
        free(rt->views);
        free(rt->stats);
        free(rt->schema_text);
        free(rt->plan);
        free(rt);
}

/* The bytes of ix's arrays. */
static uint64_t ix_mem(const struct tm_index *ix)
{
        if (!ix)
                return 0;
        return sizeof *ix +
               (uint64_t)ix->cap * (sizeof *ix->raw + ix->ncol * sizeof *ix->col + ix->stsize) +
               ix->ncol * sizeof *ix->tot;
}

uint64_t tm_records_mem(const struct tm_records *rt)
{
        if (!rt)
                return 0;
        const struct tm_schema *s = &rt->schema;
        unsigned nnames = s->nkinds + s->nforms + s->nfields + s->nsections + rt->nblobs;
        uint64_t n = sizeof *rt + (1 + s->nforms) * sizeof *rt->plan +
                     (nnames + 1) * (sizeof *rt->names + sizeof *rt->views) + rt->stats_len +
                     rt->schema_len + ix_mem(rt->ix);
        for (const struct rt_ids *i = rt->ids; i; i = i->older)
                n += sizeof *i;
        for (unsigned i = 0; i < rt->ntables; i++)
                n += rt->blob[rt->nblobs - rt->ntables + i].n;
        if (rt->ctx && rt->codec->ctx_mem)
                n += rt->codec->ctx_mem(rt->ctx);
        return n;
}

const char *tm_records_codec(const struct tm_records *rt)
{
        return rt->codec->name;
}

const char *const *tm_records_views(const struct tm_records *rt)
{
        return rt->views;
}

int tm_records_build(struct tm_trace *t, tm_progress_fn progress, void *arg, struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        if (rt->failed) {
                if (err)
                        *err = rt->open_err;
                return rt->open_err.code;
        }
        int rc = tm_index_build(t->cont, rt->codec, rt->ctx, &rt->schema, rt->hdr_len, &rt->st0,
                                t->ckpt_refs, progress, arg, &rt->ix, err);
        if (rc < 0)
                return tm_trace_err_path(t, rc, err);
        add_id_views(rt);
        return rc; /* TM_INDEX_PREFIX: the records before damage (index.h) */
}

/* The key's state_ok (views/index.h) for the codec of rt (ctx). */
static int rt_state_ok(const void *ctx, const void *st)
{
        const struct tm_records *rt = ctx;
        return rt->codec->state_ok(rt->ctx, st);
}

/* tm_index_load for t's schema and decoder; c and fd_out as there. */
int rt_load(struct tm_trace *t, const char *path, const struct tm_index_key *key, struct tm_cont *c,
            struct tm_index **out, int *fd_out, struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        struct tm_index_key k = *key;
        if (rt->codec->state_ok) {
                k.state_ok = rt_state_ok;
                k.state_ctx = rt;
        }
        return tm_index_load(path, &k, &rt->schema, rt->codec->state_size, rt->hdr_len, c, out,
                             fd_out, err);
}

int tm_records_load(struct tm_trace *t, const char *path, const struct tm_index_key *key,
                    struct tm_err *err)
{
        int rc = rt_load(t, path, key, t->cont, &t->rt->ix, &t->ix_fd, err);
        if (rc == 0)
                add_id_views(t->rt);
        return rc;
}

int tm_records_save(struct tm_trace *t, const struct tm_index_key *key, const char *path,
                    struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        return tm_index_save(rt->ix, t->cont, key, tm_index_schema_crc(&rt->schema), path, err);
}
