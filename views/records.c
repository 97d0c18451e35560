#include "records.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codecs/record/text.h"
#include "feed.h"
#include "hmem.h"
#include "index.h"
#include "tables.h"
#include "trace_obj.h"

#define RV_BATCH 256
#define RV_TEXT_CAP (64u << 10)
/* A readahead worker fills buffers that the FUSE threads read next on the
 * other core; vector stores straight into them are slow (as for address
 * views, views/vfile.c), so a worker renders RV_STAGE bytes at a time into
 * a buffer that stays in its cache and copies them out. */
#define RV_STAGE (32u << 10)

enum rv_kind {
        RV_ASCII,
        RV_BINARY,
        RV_RAW,
        RV_STATS,
        RV_SCHEMA,
        RV_STREAM,  /* streams/<kind> */
        RV_FORM,    /* a text form besides ascii (tm_schema.form: xdin) */
        RV_FIELD,   /* fields/<field> */
        RV_SECTION, /* sections/<name>: the records read in that section */
        RV_BLOB,    /* sections/<name>: a section of bytes (tm_rcodec.blobs) */
        RV_ID,      /* streams/<field>/<id>: the records of one id of the family's
                     * stream field (heap: streams/thread/<id>, one thread's) */
};

/* The names of a trace's per-id streams (streams/<field>/<id>), in a block
 * of their own: a retry (tm_records_reopen) starts a new block for the new
 * version's ids and keeps the old one, which a reader of the old list may
 * still be comparing names with, until the trace closes. */
struct rt_ids {
        struct rt_ids *older;
        char name[TM_FAMILY_STREAMS_MAX][2 * TM_NAME_MAX];
};

struct tm_records {
        const struct tm_rcodec *codec;
        void *ctx;
        struct tm_schema schema;
        struct tm_rstate st0;
        uint64_t hdr_len;
        char (*names)[2 * TM_NAME_MAX]; /* of the views known at open */
        struct rt_ids *ids;             /* of the per-id streams, or NULL (no such family) */
        const char **views;
        struct tm_index *ix;
        char *stats, *schema_text;
        size_t stats_len, schema_len;
        unsigned nblobs; /* the codec's byte sections, then the family's tables */
        struct tm_blob blob[TM_SCHEMA_SECTIONS_MAX];
        unsigned ntables;            /* the last ntables blobs: their p NULL until made */
        pthread_mutex_t tables_mu;   /* one pass makes them (rt_tables) */
        struct tm_family_acc *tacc;  /* that pass's accumulator (fam->binary's), or NULL */
        struct tm_text_plan *plan;   /* how the schema renders, shared read-only: ascii's
                                      * plan, then one per form (tm_index_plans) */
        const struct tm_family *fam; /* the schema's family, or NULL */
        unsigned nfixed;             /* views known at open; per-id streams follow */
        char *notes; /* the trace's leading comments, a line each (the stats print them) */
        /* The codec's open failed on an archive its probe took (a Meta-TF
         * DTD missing or bad): the trace is a directory whose views fail
         * with this (code -EIO), but stats, which says so, and errors. */
        int failed;
        struct tm_err open_err;
};

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
static char *text_fit(char *buf, size_t len)
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
        if (c->head_max > headn && headn == TM_RHEAD_MIN) {
                big = read_head(t, cont, c->head_max, &headn, err);
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
        rt->notes = leading_notes(rt, head, headn);
        free(big);
        rt->fam = tm_family_of(&rt->schema);
        rt->plan = tm_index_plans(&rt->schema);
        if (!rt->plan)
                return tm_err_set(err, -EINVAL, "%s: a schema this build cannot render", t->path);
        if (c->blobs)
                rt->nblobs = c->blobs(rt->ctx, rt->blob, TM_SCHEMA_SECTIONS_MAX);
        const char *const *tables = tm_family_more(rt->fam)->tables;
        for (unsigned i = 0; tables && tables[i] && i < TM_FAMILY_TABLES_MAX &&
                             rt->nblobs < TM_SCHEMA_SECTIONS_MAX;
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
        char *notes = rt->notes;
        rt->notes = n->notes;
        n->notes = notes;
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
static int rt_load(struct tm_trace *t, const char *path, const struct tm_index_key *key,
                   struct tm_cont *c, struct tm_index **out, int *fd_out, struct tm_err *err)
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

/* ---- views ---- */

/* Bytes of one record of the binary view: the family's, or generic. */
static size_t rt_bin_size(const struct tm_records *rt)
{
        return rt->fam && rt->fam->bin_size ? rt->fam->bin_size : tm_text_binary_size(&rt->schema);
}

static int rv_parse(const struct tm_records *rt, const char *view, enum rv_kind *kind,
                    unsigned *sel)
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

/* rv_parse through the one name resolver (tm_trace_view_lookup), which
 * builds the index when view is one that the index adds. */
static int rv_resolve(struct tm_trace *t, const char *view, enum rv_kind *kind, unsigned *sel)
{
        if (rv_parse(t->rt, view, kind, sel) == 0)
                return 0;
        tm_trace_view_lookup(t, view);
        return rv_parse(t->rt, view, kind, sel);
}

/* What the stats reports name the trace by (the index must be ready). */
static void rv_info(const struct tm_trace *t, struct tm_family_info *in)
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
            .notes = t->rt->notes,
        };
}

static int rv_stats(struct tm_trace *t, const char **text, size_t *len, struct tm_err *err)
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
static void rv_text_of(struct tm_trace *t, enum rv_kind kind, unsigned sel, const char **text,
                       uint64_t *len)
{
        const struct tm_records *rt = t->rt;
        pthread_mutex_lock(&t->mu);
        *text = kind == RV_BLOB ? (const char *)rt->blob[sel].p : rt->schema_text;
        *len = kind == RV_BLOB ? rt->blob[sel].n : rt->schema_len;
        pthread_mutex_unlock(&t->mu);
}

static unsigned rv_col(const struct tm_schema *s, enum rv_kind kind, unsigned sel)
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
static int rt_tables(struct tm_trace *t, unsigned sel, struct tm_err *err)
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

/* Ready to serve the schema or byte section sel (kind): only what the
 * index pass verified is served, so this waits for that pass; a damaged
 * archive whose verified bytes end inside its header fails with the
 * damage (the header's views would be made of unverified bytes), and
 * the family's tables are made. 0 or a negative errno (err filled). */
static int rv_text_ready(struct tm_trace *t, enum rv_kind kind, unsigned sel, struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        int rc = tm_trace_index_ready(t, err);
        if (rc < 0)
                return rc;
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
        if (rv_resolve(t, view, &kind, &sel) < 0)
                return tm_err_set(err, -ENOENT, "%s: no view %s", t->path, view);
        if (rt->failed && kind == RV_STATS) {
                *size = rt->stats_len;
                return 0;
        }
        if (rt->failed) { /* the index pass fails with it: ls -l shows a size (trace.c) */
                tm_trace_index_ready(t, NULL);
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
        int rc = tm_trace_index_ready(t, err);
        if (rc < 0)
                return rc;
        const struct tm_index *ix = rt->ix;
        const char *text;
        size_t len;
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

/* ---- cursors ---- */

struct tm_cursor {
        struct tm_trace *t;
        struct tm_records *rt;
        enum rv_kind kind;
        unsigned sel, col;
        uint64_t size;
        size_t recsize;                  /* binary */
        const struct tm_text_plan *plan; /* the view's text form's */
        const char *text;                /* schema and byte sections: their bytes */
        struct tm_creader *r;
        struct tm_feed feed;
        struct tm_rstate mark; /* the decoder's state before the batch (rv_salvage) */
        struct tm_rec *recs;   /* [RV_BATCH] */
        size_t rpos, rcount;
        uint64_t pos; /* view offset of the next byte returned */
        int valid;
        char *line; /* the current record's bytes in this view */
        size_t line_len, line_pos;
        char *stage; /* a readahead worker's render buffer (RV_STAGE), or NULL */
        /* skipping by the column path (rv_skip_cols), when the codec has
         * one and the view is ascii, a form, a stream or binary; else
         * cols.cap is 0 */
        struct tm_rbatch cols;
        uint32_t *lens;                     /* [cols.cap] */
        const struct tm_family_acc *tables; /* binary: the family's tables (rt->tacc) */
        int worker;                         /* a readahead worker's: it has a stage */
        /* The budget (hmem.h): r, the feed's buffer, recs, line, stage,
         * cols and lens are what the cursor holds while it reads; parked
         * (r NULL), it holds none of them and the next read makes them
         * anew and starts from a checkpoint. */
        struct tm_hmem_user hm;
};

/* Whether f reads through a container reader (the views not served from
 * a text): the cursors the budget counts. */
static int rv_reads(const struct tm_cursor *f)
{
        return f->kind != RV_STATS && f->kind != RV_SCHEMA && f->kind != RV_BLOB;
}

/* Free what f holds to read (its state invalid then). */
static void rv_state_free(struct tm_cursor *f)
{
        tm_creader_close(f->r);
        f->r = NULL;
        tm_rbatch_free(&f->cols);
        free(f->lens);
        f->lens = NULL;
        tm_feed_free(&f->feed);
        free(f->line);
        f->line = NULL;
        free(f->stage);
        f->stage = NULL;
        free(f->recs);
        f->recs = NULL;
        f->valid = 0;
        f->rpos = f->rcount = 0;
        f->line_len = f->line_pos = 0;
}

static void rv_park(struct tm_hmem_user *u)
{
        struct tm_cursor *f = (struct tm_cursor *)((char *)u - offsetof(struct tm_cursor, hm));
        rv_state_free(f);
}

/* The bytes f holds to read, for the budget. */
static uint64_t rv_state_bytes(const struct tm_cursor *f)
{
        if (!f->r)
                return 0;
        uint64_t n = tm_creader_mem(f->r) + f->feed.cap;
        if (f->recs)
                n += RV_BATCH * sizeof *f->recs;
        if (f->line)
                n += tm_text_line_max(&f->rt->schema, TM_FEED_CAP);
        if (f->stage)
                n += RV_STAGE;
        if (f->lens)
                n += f->cols.cap * (sizeof *f->lens + sizeof *f->cols.kind +
                                    f->rt->schema.nfields * sizeof **f->cols.col);
        n += f->cols.arena_cap;
        for (unsigned j = 0; j < TM_REC_VAR_MAX; j++)
                n += f->cols.var[j] ? f->cols.cap * sizeof *f->cols.var[j] : 0;
        return n;
}

void tm_records_vfile_close(struct tm_cursor *f)
{
        if (!f)
                return;
        if (rv_reads(f))
                tm_hmem_leave(&f->hm); /* first: then no other thread parks f */
        rv_state_free(f);
        free(f);
        tm_hmem_trim();
}

int tm_records_vfile_worker(struct tm_cursor *f)
{
        if (f->worker || !rv_reads(f) || f->kind == RV_RAW) /* text views only */
                return 0;
        tm_hmem_begin(&f->hm);
        f->worker = 1;
        if (f->r && !f->stage)
                f->stage = malloc(RV_STAGE);
        int rc = f->r && !f->stage ? -ENOMEM : 0;
        tm_hmem_end(&f->hm, rv_state_bytes(f));
        return rc;
}

/* Set up the column path for f when its codec has one and the view is
 * one whose lengths it gives (sections do not change them), with an
 * arena when the schema has variable fields. 0 or -ENOMEM. */
static int rv_cols_init(struct tm_cursor *f)
{
        const struct tm_schema *s = &f->rt->schema;
        if (!f->rt->codec->decode_batch || !(f->kind == RV_ASCII || f->kind == RV_FORM ||
                                             f->kind == RV_STREAM || f->kind == RV_BINARY))
                return 0;
        f->lens = malloc(RV_BATCH * sizeof *f->lens);
        if (!f->lens || tm_rbatch_init(&f->cols, s->nfields, RV_BATCH) < 0 ||
            (tm_schema_has_var(s) && tm_rbatch_arena(&f->cols, TM_RBATCH_ARENA) < 0))
                return -ENOMEM;
        return 0;
}

/* Make what f needs to read (f->r NULL: new or parked): a container
 * reader, and for the decoded views the feed, records, line and column
 * batch. 0, or a negative errno (what was made is freed). */
static int rv_state_open(struct tm_cursor *f, struct tm_err *err)
{
        struct tm_records *rt = f->rt;
        int rc = tm_creader_open(f->t->cont, &f->r, err);
        if (rc < 0 || f->kind == RV_RAW)
                return rc;
        f->line = malloc(tm_text_line_max(&rt->schema, TM_FEED_CAP));
        f->recs = malloc(RV_BATCH * sizeof *f->recs);
        if (!f->line || !f->recs || tm_feed_init(&f->feed, rt->codec, rt->ctx) < 0 ||
            rv_cols_init(f) < 0 || (f->worker && !(f->stage = malloc(RV_STAGE)))) {
                rv_state_free(f);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", f->t->path);
        }
        return 0;
}

int tm_records_vfile_open(struct tm_trace *t, const char *view, struct tm_cursor **out,
                          struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        uint64_t size;
        int rc = tm_records_view_size(t, view, &size, err);
        if (rc < 0)
                return rc;
        struct tm_cursor *f = calloc(1, sizeof *f);
        if (!f)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", t->path);
        f->t = t;
        f->rt = rt;
        rv_parse(rt, view, &f->kind, &f->sel);
        f->col = rv_col(&rt->schema, f->kind, f->sel);
        f->size = size;
        f->recsize = rt_bin_size(rt);
        f->plan = f->kind == RV_FORM ? &rt->plan[1 + f->sel] : rt->plan;
        int text = f->kind == RV_STATS || f->kind == RV_SCHEMA || f->kind == RV_BLOB;
        if (f->kind == RV_SCHEMA || f->kind == RV_BLOB)
                rv_text_of(t, f->kind, f->sel, &f->text, &f->size);
        if (f->kind == RV_BINARY && (rc = rt_tables(t, ~0u, err)) == 0) {
                pthread_mutex_lock(&t->mu);
                f->tables = rt->tacc;
                pthread_mutex_unlock(&t->mu);
                if (!f->tables && rt->fam && rt->fam->binary && tm_family_more(rt->fam)->tables)
                        rc = tm_err_set(err, -EIO, "%s: no room for the tables binary needs",
                                        t->path);
        }
        if (!text) {
                tm_hmem_join(&f->hm, rv_park);
                if (rc == 0) {
                        tm_hmem_begin(&f->hm);
                        rc = rv_state_open(f, err);
                        tm_hmem_end(&f->hm, rv_state_bytes(f));
                }
        }
        if (rc < 0) {
                tm_records_vfile_close(f);
                return rc;
        }
        *out = f;
        return 0;
}

/* Where the feed was before a decode call (its state in f->mark). */
struct rv_mark {
        size_t pos;
        uint64_t raw_off;
};

static void rv_mark(struct tm_cursor *f, struct rv_mark *m)
{
        memcpy(f->mark.b, f->feed.st.b, f->rt->codec->state_size);
        m->pos = f->feed.pos;
        m->raw_off = f->feed.raw_off;
}

static void rv_back(struct tm_cursor *f, const struct rv_mark *m)
{
        memcpy(f->feed.st.b, f->mark.b, f->rt->codec->state_size);
        f->feed.pos = m->pos;
        f->feed.raw_off = m->raw_off;
}

/* A batch decoded from m failed, but the records before the bad one are
 * good (a decoder may fail a whole batch; the index pass counts them, in
 * index.c's build_drain): count them a record at a time, then decode
 * that many again in one call (a record may point into what its call
 * decoded). That leaves the feed just before the bad record, so that the
 * next batch meets the error again. Returns the records in f->recs, 0
 * when the bad one is the first. */
static size_t rv_salvage(struct tm_cursor *f, const struct rv_mark *m)
{
        struct tm_err e = {0};
        size_t k = 0;
        rv_back(f, m);
        while (k < RV_BATCH && tm_feed_decode(&f->feed, f->recs, 1, &e) == 1)
                k++;
        rv_back(f, m);
        ssize_t n = k ? tm_feed_decode(&f->feed, f->recs, k, &e) : 0;
        if (n > 0)
                return (size_t)n;
        rv_back(f, m);
        return 0;
}

/* More raw bytes into the feed (the end of the stream sets its eof): 0
 * or a read error. */
static int rv_read(struct tm_cursor *f, struct tm_err *err)
{
        size_t room;
        uint8_t *dst = tm_feed_space(&f->feed, &room);
        ssize_t k = tm_creader_read(f->r, dst, room, err);
        if (k < 0)
                return (int)k;
        if (k == 0)
                f->feed.eof = 1;
        tm_feed_commit(&f->feed, (size_t)k);
        return 0;
}

/* Decode the next batch. 1: records ready, 0: the end, < 0: error. */
static int rv_more(struct tm_cursor *f, struct tm_err *err)
{
        for (;;) {
                struct rv_mark m;
                rv_mark(f, &m);
                ssize_t n = tm_feed_decode(&f->feed, f->recs, RV_BATCH, err);
                if (n < 0) {
                        size_t k = rv_salvage(f, &m);
                        if (k == 0)
                                return (int)n;
                        n = (ssize_t)k; /* the next call fails again */
                }
                if (n > 0) {
                        f->rpos = 0;
                        f->rcount = (size_t)n;
                        return 1;
                }
                if (f->feed.eof)
                        return 0;
                int rc = rv_read(f, err);
                if (rc < 0)
                        return rc;
        }
}

/* The next record (decoding more when needed): 1 and *out, 0 at the end,
 * or an error. */
static int rv_take(struct tm_cursor *f, const struct tm_rec **out, struct tm_err *err)
{
        if (f->rpos == f->rcount) {
                int rc = rv_more(f, err);
                if (rc <= 0)
                        return rc;
        }
        const struct tm_rec *r = &f->recs[f->rpos];
        if (r->kind >= f->rt->schema.nkinds)
                return tm_err_set(err, -EIO, "raw offset %llu: record kind %u",
                                  (unsigned long long)f->feed.raw_off, r->kind);
        f->rpos++;
        *out = r;
        return 1;
}

/* The binary records of r[0..n) into dst: the family's, or generic. */
static void rv_binaries(const struct tm_cursor *f, uint8_t *dst, const struct tm_rec *r, size_t n)
{
        const struct tm_records *rt = f->rt;
        if (rt->fam && rt->fam->binary)
                rt->fam->binary(f->tables, dst, &rt->schema, r, n);
        else
                tm_text_binaries(dst, rt->plan, r, n);
}

/* r's bytes in this view into f->line, whole (0 bytes when the view
 * skips r). */
static void rv_render(struct tm_cursor *f, const struct tm_rec *r)
{
        const struct tm_records *rt = f->rt;
        const struct tm_schema *s = &rt->schema;
        f->line_pos = 0;
        switch (f->kind) {
        case RV_BINARY:
                rv_binaries(f, (uint8_t *)f->line, r, 1);
                f->line_len = f->recsize;
                return;
        case RV_FIELD: {
                int pos = rt->plan->kind[r->kind].pos[f->sel];
                f->line_len = pos < 0 ? 0 : tm_text_field(f->line, s, r, (unsigned)pos);
                return;
        }
        default:
                f->line_len = tm_index_len(s, rt->plan, rt->ix, f->col, r)
                                  ? tm_text_pline(f->line, f->plan, r)
                                  : 0;
                return;
        }
}

/* The next record's bytes in this view into f->line. 1, 0 at the end, or
 * an error. */
static int rv_next(struct tm_cursor *f, struct tm_err *err)
{
        const struct tm_rec *r;
        int rc = rv_take(f, &r, err);
        if (rc > 0)
                rv_render(f, r);
        return rc;
}

/* Move the cursor, whose next byte is at view offset pos with nothing of
 * a line pending, forward to off by decoding records and adding up their
 * lengths in this view, without rendering them (the record at off is). */
/* The lengths in this view of the records of the column batch f->cols
 * into f->lens (views rv_cols_init takes). */
static void rv_cols_lens(struct tm_cursor *f)
{
        const struct tm_rbatch *b = &f->cols;
        uint32_t *len = f->lens;
        if (f->kind == RV_BINARY) {
                for (size_t i = 0; i < b->n; i++)
                        len[i] = (uint32_t)f->recsize;
                return;
        }
        const struct tm_text_plan *p = f->plan;
        tm_text_batch_lens(p, b, len, NULL);
        for (size_t i = 0; i < b->n; i++)
                len[i] += p->kind[b->kind[i]].head_len;
        if (f->kind == RV_STREAM)
                for (size_t i = 0; i < b->n; i++)
                        len[i] = b->kind[i] == f->sel ? len[i] : 0;
}

/* Skip, by the column path, the whole records that end at or before view
 * offset off, *pos moving past them: records are decoded a batch at a
 * time and only their lengths computed; the batch that holds off's
 * record is decoded again up to it. Anything the column path does not
 * take (no batch pending, a decode error, a bad kind) is left to the
 * record path, which reports it. 0 or a read error. */
static int rv_skip_cols(struct tm_cursor *f, uint64_t *pos, uint64_t off, struct tm_err *err)
{
        if (!f->cols.cap || f->rpos != f->rcount)
                return 0;
        const unsigned nk = f->rt->schema.nkinds;
        while (*pos < off) {
                struct rv_mark m;
                rv_mark(f, &m);
                struct tm_err e = {0};
                ssize_t n = tm_feed_decode_batch(&f->feed, &f->cols, f->cols.cap, &e);
                int bad = n < 0;
                for (ssize_t i = 0; i < n && !bad; i++)
                        bad = f->cols.kind[i] >= nk;
                if (bad) {
                        rv_back(f, &m);
                        return 0;
                }
                if (n == 0) {
                        if (f->feed.eof)
                                return 0;
                        int rc = rv_read(f, err);
                        if (rc < 0)
                                return rc;
                        continue;
                }
                rv_cols_lens(f);
                size_t j = 0;
                uint64_t p = *pos;
                while (j < (size_t)n && p + f->lens[j] <= off)
                        p += f->lens[j++];
                if (j < (size_t)n) { /* off's record is in this batch: up to it */
                        rv_back(f, &m);
                        if (j && tm_feed_decode_batch(&f->feed, &f->cols, j, &e) != (ssize_t)j)
                                return tm_err_set(err, -EIO, "raw offset %llu: decoded differently",
                                                  (unsigned long long)m.raw_off);
                        *pos = p;
                        return 0;
                }
                *pos = p;
        }
        return 0;
}

static int rv_skip(struct tm_cursor *f, uint64_t pos, uint64_t off, struct tm_err *err)
{
        int rc = rv_skip_cols(f, &pos, off, err);
        if (rc < 0)
                return rc;
        while (pos < off) {
                const struct tm_rec *r;
                int rc = rv_take(f, &r, err);
                if (rc <= 0)
                        return rc ? rc : tm_err_set(err, -EIO, "view ends early");
                uint64_t len = f->kind == RV_BINARY ? f->recsize
                                                    : tm_index_len(&f->rt->schema, f->rt->plan,
                                                                   f->rt->ix, f->col, r);
                if (pos + len > off) {
                        rv_render(f, r);
                        f->line_pos = (size_t)(off - pos);
                        break;
                }
                pos += len;
        }
        return 0;
}

/* View offset of checkpoint i in this view. */
static uint64_t rv_ckpt_pos(const struct tm_cursor *f, uint32_t i)
{
        const struct tm_index *ix = f->rt->ix;
        uint64_t pos = ix->col[(size_t)i * ix->ncol + f->col];
        return f->kind == RV_BINARY ? pos * f->recsize : pos;
}

/* Position the cursor at view offset off. When the cursor is valid and
 * behind off with no checkpoint between (a readahead worker taking the
 * piece after next, a reader skipping forward), it goes on from where it
 * is: decoding only, without seeking the container back to the
 * checkpoint, which would decompress that stretch of the archive again.
 * Else from the last checkpoint at or before off. */
static int rv_seek(struct tm_cursor *f, uint64_t off, struct tm_err *err)
{
        const struct tm_index *ix = f->rt->ix;
        uint64_t key = f->kind == RV_BINARY ? off / f->recsize : off;
        uint32_t i = tm_index_find(ix, f->col, key);
        uint64_t ck = rv_ckpt_pos(f, i);
        if (f->valid && f->pos < off && ck <= f->pos) {
                size_t left = f->line_len - f->line_pos;
                if (off - f->pos < left) {
                        f->line_pos += (size_t)(off - f->pos);
                        return 0;
                }
                f->line_pos = f->line_len = 0;
                return rv_skip(f, f->pos + left, off, err);
        }
        int rc = tm_creader_seek(f->r, ix->raw[i], err);
        if (rc < 0)
                return rc;
        tm_feed_reset(&f->feed, ix->raw[i], ix->st + (size_t)i * ix->stsize);
        f->rpos = f->rcount = 0;
        f->line_len = f->line_pos = 0;
        return rv_skip(f, ck, off, err);
}

/* As many whole records as fit into dst[0..cap) straight from the decoded
 * batch (the fast renderers); returns the bytes written and moves rpos
 * past the records done. Stops before a record it leaves to rv_next. */
static size_t rv_batch(struct tm_cursor *f, char *dst, size_t cap)
{
        const struct tm_text_plan *p = f->rt->plan;
        const struct tm_rec *r = f->recs + f->rpos;
        size_t n = f->rcount - f->rpos, k = 0, w = 0;
        switch (f->kind) {
        case RV_ASCII:
        case RV_FORM:
                w = tm_text_lines(dst, cap, f->plan, r, n, &k);
                break;
        case RV_STREAM:
                w = tm_text_kind_lines(dst, cap, p, r, n, f->sel, &k);
                break;
        case RV_FIELD:
                w = tm_text_fields(dst, cap, p, r, n, f->sel, &k);
                break;
        case RV_BINARY:
                for (size_t m = cap / f->recsize; k < n && k < m && r[k].kind < p->nkinds;)
                        k++;
                rv_binaries(f, (uint8_t *)dst, r, k);
                w = k * f->recsize;
                break;
        default: /* sections: record by record */
                break;
        }
        f->rpos += k;
        return w;
}

/* Does f's view come from the codec's text decoder (tm_feed_text)?
 * ascii, and streams/<kind> when the row's decoder takes kinds. */
static int rv_texted(const struct tm_cursor *f)
{
        return f->feed.text &&
               (f->kind == RV_ASCII || (f->kind == RV_STREAM && f->rt->codec->text_kinds));
}

/* ascii or a stream through the codec's text decoder (tm_feed_text):
 * whole lines into dst (through the stage for a worker), then the next
 * line, whole, into f->line. Returns the bytes written to dst; nothing
 * anywhere leaves the next record to rv_next (more input, the end, an
 * error, records of other kinds only). */
static size_t rv_text(struct tm_cursor *f, char *dst, size_t n)
{
        const struct tm_text_plan *p = f->rt->plan;
        long kind = f->kind == RV_STREAM ? (long)f->sel : -1;
        char *o = f->stage ? f->stage : dst;
        size_t w =
            tm_feed_text(&f->feed, p, o, f->stage && n > RV_STAGE ? RV_STAGE : n, SIZE_MAX, kind);
        if (f->stage)
                memcpy(dst, f->stage, w);
        f->line_pos = 0;
        f->line_len = w < n ? tm_feed_text(&f->feed, p, f->line,
                                           tm_text_line_max(&f->rt->schema, TM_FEED_CAP), 1, kind)
                            : 0;
        return w;
}

/* binary through the codec's binary decoder (tm_feed_binary): whole
 * records into dst, and when less than one is left, the next into
 * f->line. Returns the bytes written to dst, as rv_text. */
static size_t rv_bin(struct tm_cursor *f, char *dst, size_t n)
{
        size_t w = tm_feed_binary(&f->feed, (uint8_t *)dst, n, SIZE_MAX);
        f->line_pos = 0;
        f->line_len = w < n && n - w < f->recsize
                          ? tm_feed_binary(&f->feed, (uint8_t *)f->line, f->recsize, 1)
                          : 0;
        return w;
}

static ssize_t rv_fill(struct tm_cursor *f, char *dst, size_t n, struct tm_err *err)
{
        size_t done = 0;
        while (done < n) {
                if (f->line_pos < f->line_len) {
                        size_t c = f->line_len - f->line_pos;
                        if (c > n - done)
                                c = n - done;
                        memcpy(dst + done, f->line + f->line_pos, c);
                        f->line_pos += c;
                        done += c;
                        continue;
                }
                if (f->rpos < f->rcount && f->stage) {
                        size_t room = n - done < RV_STAGE ? n - done : RV_STAGE;
                        size_t w = rv_batch(f, f->stage, room);
                        memcpy(dst + done, f->stage, w);
                        done += w;
                        if (done == n)
                                break;
                        if (w && f->rpos < f->rcount)
                                continue; /* the stage was full: more of the batch */
                } else if (f->rpos < f->rcount) {
                        done += rv_batch(f, dst + done, n - done);
                        if (done == n)
                                break;
                }
                if (f->rpos == f->rcount &&
                    (rv_texted(f) || (f->kind == RV_BINARY && f->feed.bin))) {
                        size_t w = f->kind == RV_BINARY ? rv_bin(f, dst + done, n - done)
                                                        : rv_text(f, dst + done, n - done);
                        done += w;
                        if (w || f->line_len)
                                continue;
                }
                int rc = rv_next(f, err);
                if (rc < 0)
                        return done ? (ssize_t)done : rc;
                if (rc == 0)
                        break;
        }
        return (ssize_t)done;
}

ssize_t tm_records_pread(struct tm_cursor *f, void *buf, size_t n, uint64_t off, struct tm_err *err)
{
        if (off >= f->size || n == 0)
                return 0;
        if (n > f->size - off)
                n = (size_t)(f->size - off);
        if (f->kind == RV_STATS || f->kind == RV_SCHEMA || f->kind == RV_BLOB) {
                const char *text = f->text;
                size_t len;
                int rc = f->kind == RV_STATS ? rv_stats(f->t, &text, &len, err) : 0;
                if (rc < 0)
                        return rc;
                memcpy(buf, text + off, n);
                return (ssize_t)n;
        }
        tm_hmem_begin(&f->hm);
        int rc = f->r ? 0 : rv_state_open(f, err); /* parked */
        if (rc == 0 && (!f->valid || f->pos != off)) {
                rc = f->kind == RV_RAW ? tm_creader_seek(f->r, off, err) : rv_seek(f, off, err);
                f->valid = rc == 0;
                f->pos = off;
        }
        ssize_t got = rc;
        if (rc == 0)
                got = f->kind == RV_RAW ? tm_creader_read_full(f->r, buf, n, err)
                                        : rv_fill(f, buf, n, err);
        got = tm_trace_read_done(f->t, got, n, off, &f->valid, &f->pos, err);
        tm_hmem_end(&f->hm, rv_state_bytes(f));
        return got;
}

int tm_records_load_file(struct tm_trace *t, const char *path, const struct tm_index_key *key,
                         struct tm_index **out, struct tm_err *err)
{
        return rt_load(t, path, key, NULL, out, NULL, err);
}

int tm_records_verify(struct tm_trace *t, const struct tm_index *file, const char *path,
                      tm_progress_fn progress, void *arg, struct tm_err *err)
{
        struct tm_records *rt = t->rt;
        struct tm_cont *c = NULL;
        struct tm_index *ix = NULL;
        int rc = tm_cont_open(t->fd, t->path, &c, err);
        if (rc == 0 && file)
                rc = tm_index_build_like(c, rt->codec, rt->ctx, &rt->schema, rt->hdr_len, &rt->st0,
                                         file, progress, arg, &ix, err);
        else if (rc == 0)
                rc = tm_index_build(c, rt->codec, rt->ctx, &rt->schema, rt->hdr_len, &rt->st0,
                                    t->ckpt_refs, progress, arg, &ix, err);
        if (rc == TM_INDEX_PREFIX)
                rc = -EIO;
        if (rc < 0)
                tm_trace_err_path(t, rc, err);
        else if (file && (rc = tm_index_compare(file, ix, err)) < 0)
                tm_err_prefix(err, "%s", path);
        else if (tm_family_more(ix->fam)->verify &&
                 (rc = tm_family_more(ix->fam)->verify(ix->stats.fam, &rt->schema, err)) < 0)
                tm_err_prefix(err, "%s", t->path); /* the family's rules */
        tm_index_free(ix);
        tm_cont_close(c);
        return rc;
}
