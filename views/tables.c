/* A family's tables by a pass of their own (tables.h). */
#include "tables.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"

#define TB_BATCH 256

/* Feed every record of src to the accumulator a, to the end or to the
 * first bad record (the intact prefix). 0, or the container's error at
 * the start, or -ENOMEM. */
static int tables_pass(const struct tm_tables_src *src, const struct tm_family *fam,
                       struct tm_family_acc *a, struct tm_err *err)
{
        struct tm_creader *r = NULL;
        struct tm_feed feed;
        struct tm_rec *recs = malloc(TB_BATCH * sizeof *recs);
        if (!recs || tm_feed_init(&feed, src->codec, src->ctx) < 0) {
                free(recs);
                return tm_err_set(err, -ENOMEM, "%s: out of memory", src->path);
        }
        int rc = tm_creader_open(src->cont, &r, err);
        if (rc == 0)
                rc = tm_creader_seek(r, src->hdr_len, err);
        tm_feed_reset(&feed, src->hdr_len, src->st0->b);
        struct tm_err e = {0}; /* damage past the start: the prefix's end */
        size_t cap = TB_BATCH;
        while (rc == 0) {
                struct tm_feed at = feed; /* the state and place before the call */
                ssize_t n = tm_feed_decode(&feed, recs, cap, &e);
                if (n > 0) {
                        fam->acc_add(a, recs, (size_t)n);
                        continue;
                }
                if (n < 0 && cap > 1) { /* the good records before the bad one, one at a time */
                        feed = at;
                        cap = 1;
                        continue;
                }
                if (n < 0 || feed.eof)
                        break;
                size_t room;
                uint8_t *dst = tm_feed_space(&feed, &room);
                ssize_t k = tm_creader_read(r, dst, room, &e);
                if (k < 0)
                        break;
                feed.eof = k == 0;
                tm_feed_commit(&feed, (size_t)k);
        }
        tm_creader_close(r);
        tm_feed_free(&feed);
        free(recs);
        return rc;
}

int tm_tables_build(const struct tm_tables_src *src, const struct tm_family *fam, char **text,
                    size_t *len, struct tm_err *err)
{
        struct tm_family_acc *a = fam->acc_start(src->s);
        if (!a)
                return tm_err_set(err, -ENOMEM, "%s: out of memory", src->path);
        int rc = tables_pass(src, fam, a, err);
        if (rc == 0) {
                uint64_t block[TM_FAMILY_STATS_MAX / 8];
                fam->acc_finish(a, block);
        }
        unsigned n = 0;
        while (rc == 0 && fam->tables[n]) {
                if (fam->table(a, n, &text[n], &len[n]) < 0)
                        rc = tm_err_set(err, -ENOMEM, "%s: out of memory", src->path);
                else
                        n++;
        }
        fam->acc_free(a);
        if (rc < 0)
                while (n)
                        free(text[--n]);
        return rc;
}
