/* Verify: the archive decoded again, the index file compared (records_int.h). */
#include "records_int.h"

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
